/* Intel's last branch records: which facility a CPU has, the legacy
 * stack (depth probed, LBR_INFO, LBR_SELECT and its call-stack bit) or
 * the architectural LBRs (CPUID.1CH), decoded into struct pmu_lbr_caps
 * for pmu/lbr.c; the arch-LBR filter in IA32_LBR_CTL; each record format
 * (the backend's pmu_lbr_ops).
 *
 * Sources: Intel SDM vol. 3B, chapter "Debug, Branch Profile, TSC, and
 * Intel Resource Director Technology Features" ("Last Branch, Interrupt,
 * and Exception Recording" and the "LBR Stack" section of each
 * microarchitecture, "Architectural Last Branch Records"); vol. 4 for the
 * MSRs; Linux arch/x86/events/intel/lbr.c; kvm-unit-tests x86/pmu_lbr.c
 * (depth probing). */
#include "pmu/intel/intel.h"

#include "arch/x86/cpuid.h"
#include "arch/x86/msr.h"
#include "lib/bits.h"
#include "lib/printf.h"
#include "pmu/intel/caps.h"
#include "pmu/lbr.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"

static bool msr_writable(uint32_t msr, uint64_t v)
{
	return pmu_hw_wrmsr(msr, v) == 0;
}

/* Legacy FROM/TO pairs that take a write of 0, from index 0 up (the way
 * kvm-unit-tests x86/pmu_lbr.c finds the depth; Linux trusts its model
 * table instead). The 40H range stops at 8: 48H is IA32_SPEC_CTRL. */
static unsigned probe_depth(uint32_t from, uint32_t to, unsigned max)
{
	unsigned n = 0;

	while (n < max && msr_writable(from + n, 0) && msr_writable(to + n, 0))
		n++;
	return n;
}

static void decode_legacy(const struct pmu_caps *c, struct pmu_lbr_caps *l)
{
	const struct intel_caps *ic = intel_caps(c);

	if (!intel_caps(c)->pdcm) {
		ksnprintf(
			l->why, sizeof(l->why),
			"CPUID.01H:ECX.PDCM[15]=0: no IA32_PERF_CAPABILITIES to give the LBR record format");
		return;
	}
	if (!ic->perf_caps_valid) {
		ksnprintf(l->why, sizeof(l->why), "IA32_PERF_CAPABILITIES unreadable: no LBR record format");
		return;
	}
	l->format = ic->lbr_format;
	if (l->format == LBR_FORMAT_ARCH) {
		ksnprintf(l->why, sizeof(l->why),
			  "IA32_PERF_CAPABILITIES[5:0]=0x3f (architectural LBRs) but CPUID.07H:EDX[19]=0");
		return;
	}
	if (l->format == 0) {
		/* kvm-unit-tests x86/pmu_lbr.c reads 0 as "no LBR" too. */
		ksnprintf(l->why, sizeof(l->why),
			  "IA32_PERF_CAPABILITIES[5:0]=0: no LBR record format reported");
		return;
	}
	l->from_msr = MSR_LASTBRANCH_0_FROM_IP;
	l->to_msr = MSR_LASTBRANCH_0_TO_IP;
	l->depth = probe_depth(l->from_msr, l->to_msr, 32);
	if (!l->depth) {
		l->from_msr = MSR_LASTBRANCH_0_FROM_IP_CORE;
		l->to_msr = MSR_LASTBRANCH_0_TO_IP_CORE;
		l->depth = probe_depth(l->from_msr, l->to_msr, 8);
	}
	if (!l->depth) {
		ksnprintf(
			l->why, sizeof(l->why),
			"LBR format %u, but writing 0 to MSR %#x and MSR %#x (the first FROM_IP) raised #GP",
			l->format, MSR_LASTBRANCH_0_FROM_IP, MSR_LASTBRANCH_0_FROM_IP_CORE);
		return;
	}
	if ((l->format == LBR_FORMAT_INFO || l->format == LBR_FORMAT_INFO2) &&
	    msr_writable(MSR_LBR_INFO_0, 0))
		l->info_msr = MSR_LBR_INFO_0;
	l->stride = 1;
	l->tos_msr = MSR_LASTBRANCH_TOS;
	l->ctl_msr = MSR_IA32_DEBUGCTL;
	l->ctl_enable = BIT(DEBUGCTL_LBR_BIT);
	/* Core 2 and Bonnell have no MSR_LBR_SELECT (Linux lbr.c); the
	 * call-stack bit exists from Haswell: probe both. */
	if (msr_writable(MSR_LBR_SELECT, 0)) {
		l->select_msr = MSR_LBR_SELECT;
		l->cpl_filter = l->type_filter = true;
		l->call_stack = msr_writable(MSR_LBR_SELECT, BIT(LBR_SELECT_EN_CALLSTACK_BIT));
		pmu_hw_wrmsr(MSR_LBR_SELECT, 0);
	}
	l->kind = PMU_LBR_LEGACY;
}

static void decode_arch(const struct pmu_caps *c, struct pmu_lbr_caps *l)
{
	struct cpuid_regs *r = &l->leaf_1c;
	uint64_t depth = 0;
	int f;

	if (c->max_leaf < 0x1c) {
		ksnprintf(l->why, sizeof(l->why),
			  "CPUID.07H:EDX[19] (architectural LBRs) set but max leaf %#x < 1CH", c->max_leaf);
		return;
	}
	pmu_hw_cpuid(0x1c, 0, r);
	l->arch_depths = r->eax & 0xff;
	l->format = LBR_FORMAT_ARCH;
	f = pmu_hw_rdmsr(MSR_ARCH_LBR_DEPTH, &depth);
	if (f || !depth || depth > PMU_LBR_MAX_DEPTH || depth % 8) {
		ksnprintf(l->why, sizeof(l->why),
			  "architectural LBRs: IA32_LBR_DEPTH reads %#lx (fault %d), CPUID.1CH:EAX[7:0]=%#x",
			  (unsigned long)depth, f, l->arch_depths);
		return;
	}
	l->depth = (unsigned)depth;
	l->from_msr = MSR_ARCH_LBR_FROM_0;
	l->to_msr = MSR_ARCH_LBR_TO_0;
	l->info_msr = MSR_ARCH_LBR_INFO_0;
	l->stride = 1;
	l->ctl_msr = MSR_ARCH_LBR_CTL;
	l->ctl_enable = BIT(ARCH_LBR_CTL_LBREN_BIT);
	l->ctl_filter = true;
	/* Any write of IA32_LBR_DEPTH empties the stack (Linux
	 * intel_pmu_arch_lbr_reset). */
	l->reset_msr = MSR_ARCH_LBR_DEPTH;
	l->cpl_filter = (r->ebx >> CPUID_1C_EBX_CPL_FILTER_BIT) & 1;
	l->type_filter = (r->ebx >> CPUID_1C_EBX_BRANCH_FILTER_BIT) & 1;
	l->call_stack = (r->ebx >> CPUID_1C_EBX_CALL_STACK_BIT) & 1;
	l->kind = PMU_LBR_ARCH;
}

static void intel_lbr_decode(const struct pmu_caps *c, struct pmu_lbr_caps *l)
{
	struct cpuid_regs r = { 0 };

	if (c->max_leaf >= 7)
		pmu_hw_cpuid(7, 0, &r);
	if ((r.edx >> CPUID_7_EDX_ARCH_LBR_BIT) & 1)
		decode_arch(c, l);
	else
		decode_legacy(c, l);
	if (l->kind == PMU_LBR_NONE)
		return;
	/* FREEZE_LBRS_ON_PMI "if CPUID.01H:ECX[15] = 1 and CPUID.0AH:EAX[7:0]
	 * > 1" (SDM vol. 3B, "IA32_DEBUGCTL MSR"); from version 4 it sets
	 * LBR_FRZ instead of clearing DEBUGCTL.LBR ("Architectural
	 * Performance Monitoring Version 4"). */
	l->freeze = intel_caps(c)->pdcm && c->version >= 2;
	l->freeze_status = l->freeze && c->version >= 4;
	if (l->freeze) {
		l->freeze_msr = MSR_IA32_DEBUGCTL;
		l->freeze_enable = BIT(DEBUGCTL_FREEZE_LBRS_ON_PMI_BIT);
	}
}

/* IA32_LBR_CTL for filter f: enable polarity, the filter beside LBREn. */
static uint64_t intel_lbr_encode_ctl(const struct pmu_lbr_caps *l, const struct pmu_lbr_filter *f,
				     uint32_t kinds)
{
	/* The enable bit of each kind in IA32_LBR_CTL. */
	static const uint8_t ctl_bit[PMU_LBR_BR_NR] = {
		[PMU_LBR_BR_JCC] = ARCH_LBR_CTL_COND_BIT,
		[PMU_LBR_BR_NEAR_REL_JMP] = ARCH_LBR_CTL_NEAR_REL_JMP_BIT,
		[PMU_LBR_BR_NEAR_IND_JMP] = ARCH_LBR_CTL_NEAR_IND_JMP_BIT,
		[PMU_LBR_BR_NEAR_REL_CALL] = ARCH_LBR_CTL_NEAR_REL_CALL_BIT,
		[PMU_LBR_BR_NEAR_IND_CALL] = ARCH_LBR_CTL_NEAR_IND_CALL_BIT,
		[PMU_LBR_BR_NEAR_RET] = ARCH_LBR_CTL_NEAR_RET_BIT,
		[PMU_LBR_BR_FAR] = ARCH_LBR_CTL_OTHER_BRANCH_BIT,
	};
	uint64_t v = BIT(ARCH_LBR_CTL_LBREN_BIT);

	if (l->cpl_filter)
		v |= (f->os ? BIT(ARCH_LBR_CTL_OS_BIT) : 0) | (f->usr ? BIT(ARCH_LBR_CTL_USR_BIT) : 0);
	if (l->type_filter)
		for (unsigned k = 0; k < PMU_LBR_BR_NR; k++)
			if ((kinds >> k) & 1)
				v |= BIT(ctl_bit[k]);
	if (f->call_stack)
		v |= BIT(ARCH_LBR_CTL_CALL_STACK_BIT);
	return v;
}

/* One record in the architectural layout or the legacy format l->format
 * (IA32_PERF_CAPABILITIES[5:0]; Linux intel/lbr.c intel_pmu_lbr_read_64). */
static struct pmu_lbr_entry intel_lbr_entry(const struct pmu_lbr_caps *l, uint64_t from, uint64_t to,
					    uint64_t info)
{
	struct pmu_lbr_entry e = { .from = from, .to = to, .info = info, .valid = true };

	if (l->kind == PMU_LBR_ARCH) {
		e.mispred = (info >> ARCH_LBR_INFO_MISPRED_BIT) & 1;
		return e;
	}
	switch (l->format) {
	case LBR_FORMAT_32: /* one MSR: FROM in 31:0, TO in 63:32 */
		e.from = (uint32_t)from;
		e.to = from >> 32;
		break;
	case LBR_FORMAT_EIP_FLAGS: /* 47:0 address, 63 MISPRED */
		e.mispred = (from >> LBR_FROM_MISPRED_BIT) & 1;
		e.from = sign_extend64(from, 48);
		break;
	case LBR_FORMAT_EIP_FLAGS2: /* 60:0 address, 61-63 TSX_ABORT, IN_TSX, MISPRED */
		e.mispred = (from >> LBR_FROM_MISPRED_BIT) & 1;
		e.from = sign_extend64(from, 61);
		break;
	case LBR_FORMAT_INFO:
	case LBR_FORMAT_INFO2: e.mispred = (info >> LBR_INFO_MISPRED_BIT) & 1; break;
	case LBR_FORMAT_TIME: /* FROM 63 MISPRED; TO 63:48 cycles (Linux lbr_to_cycles) */
		e.mispred = (from >> LBR_FROM_MISPRED_BIT) & 1;
		e.from = sign_extend64(from, 48);
		e.to = sign_extend64(to, 48);
		break;
	default: break;
	}
	return e;
}

static const char *intel_lbr_kind_name(unsigned kind)
{
	return kind == PMU_LBR_ARCH ? "architectural" : "legacy";
}

const struct pmu_lbr_ops intel_lbr_ops = {
	.kinds = BIT(PMU_LBR_LEGACY) | BIT(PMU_LBR_ARCH),
	.kind_name = intel_lbr_kind_name,
	.decode = intel_lbr_decode,
	.encode_ctl = intel_lbr_encode_ctl,
	.entry = intel_lbr_entry,
};
