/* Intel architectural performance monitoring version 6 and CPUID leaf 23H
 * (SDM vol. 3B, "Architectural Performance Monitoring Version 6"; the bit
 * positions as Linux arch/x86/include/asm/perf_event.h and x86-cpuid-db
 * give them, which the SDM excerpts we could read agree with).
 *
 * Leaf 23H exists when CPUID.(07H,1):EAX[8] is set. Sub-leaf 0 says which
 * other sub-leaves are valid (EAX bit n) and which event-select
 * extensions exist (EBX); 1 has the GP and fixed counter bitmaps, 2 the
 * auto-counter-reload bitmaps (reloadable GP/fixed, cause GP/fixed), 3
 * the architectural events supported (bit set = supported, unlike
 * CPUID.0AH:EBX), 4 and 5 arch-PEBS (decoded for the report only). On
 * hybrid parts leaf 0AH is the same on every core type and 23H is the
 * per-core truth (InstLatx64 CPUID dumps of Lunar/Arrow/Panther Lake), so
 * 23H's bitmaps win. */
#include "pmu/intel/v6.h"

#include "arch/x86/cpuid.h"
#include "arch/x86/msr.h"
#include "lib/bits.h"
#include "lib/printf.h"
#include "pmu/intel/caps.h"
#include "pmu/pmu_hw.h"

void intel_v6_decode_leaf23(struct pmu_caps *c)
{
	struct intel_caps *ic = intel_caps_rw(c);
	struct cpuid_regs r;

	if (c->max_leaf < 7)
		return;
	pmu_hw_cpuid(7, 1, &r);
	ic->arch_perfmon_ext = (r.eax >> CPUID_7_1_EAX_ARCH_PERFMON_EXT_BIT) & 1;
	if (!ic->arch_perfmon_ext || c->max_leaf < CPUID_23_LEAF)
		return;
	pmu_hw_cpuid(CPUID_23_LEAF, 0, &ic->leaf23_regs[0]);
	ic->leaf23_valid = ic->leaf23_regs[0].eax;
	for (unsigned n = 1; n < CPUID_23_SUBLEAVES; n++)
		if ((ic->leaf23_valid >> n) & 1)
			pmu_hw_cpuid(CPUID_23_LEAF, n, &ic->leaf23_regs[n]);
	ic->v6_features = ic->leaf23_regs[0].ebx & (BIT(CPUID_23_EBX_UMASK2_BIT) | BIT(CPUID_23_EBX_EQ_BIT) |
						    BIT(CPUID_23_EBX_RDPMC_USER_DISABLE_BIT));

	if ((ic->leaf23_valid >> CPUID_23_COUNTERS_SUBLEAF) & 1) {
		r = ic->leaf23_regs[CPUID_23_COUNTERS_SUBLEAF];
		ic->leaf23 = true;
		c->gp_mask = r.eax & (uint32_t)pmu_width_mask(PMU_MAX_GP);
		c->fixed_mask = r.ebx & (uint32_t)pmu_width_mask(PMU_MAX_FIXED);
		c->num_gp = fls32(c->gp_mask);
	}
	if ((ic->leaf23_valid >> CPUID_23_ACR_SUBLEAF) & 1) {
		r = ic->leaf23_regs[CPUID_23_ACR_SUBLEAF];
		ic->acr_reload = r.eax | (uint64_t)r.ebx << PERF_GLOBAL_FIXED_SHIFT;
		ic->acr_cause = r.ecx | (uint64_t)r.edx << PERF_GLOBAL_FIXED_SHIFT;
	}
	if ((ic->leaf23_valid >> CPUID_23_EVENTS_SUBLEAF) & 1) {
		uint32_t ev = ic->leaf23_regs[CPUID_23_EVENTS_SUBLEAF].eax;

		ic->events_from_leaf23 = true;
		c->events_avail = ev & (uint32_t)pmu_width_mask(PMU_ARCH_NR);
		c->events_unknown = ev & ~(uint32_t)pmu_width_mask(PMU_ARCH_NR);
	}
}

void intel_v6_registers(struct pmu_caps *c)
{
	struct intel_caps *ic = intel_caps_rw(c);
	uint64_t open = 0;

	/* Linux switches every counter access to these MSRs from version 6
	 * (commit 149fd4712bcd), and writes the full width through them. */
	if (c->version >= 6) {
		ic->v6_msrs = true;
		c->evtsel_base = MSR_IA32_PMC_V6_GP0_CFG_A;
		c->ctr_base = c->ctr_write_base = MSR_IA32_PMC_V6_GP0_CTR;
		c->ctr_stride = MSR_IA32_PMC_V6_STEP;
		c->ctr_write_full = true;
		if (c->fixed_mask) {
			c->fixed_base = MSR_IA32_PMC_V6_FX0_CTR;
			c->fixed_stride = MSR_IA32_PMC_V6_STEP;
		}
	}
	if ((ic->v6_features >> CPUID_23_EBX_UMASK2_BIT) & 1)
		open |= PERFEVTSEL_UMASK2_MASK;
	if ((ic->v6_features >> CPUID_23_EBX_EQ_BIT) & 1)
		open |= BIT(PERFEVTSEL_EQ_BIT);
	if ((ic->v6_features >> CPUID_23_EBX_RDPMC_USER_DISABLE_BIT) & 1) {
		open |= BIT(PERFEVTSEL_RDPMC_USER_DISABLE_BIT);
		for (unsigned i = 0; i < PMU_MAX_FIXED && i < 8; i++)
			if (pmu_has_fixed(c, i))
				c->fixed_ctrl_reserved &= ~BIT(FIXED_CTR_CTRL_RDPMC_USER_DISABLE_BIT(i));
	}
	c->evtsel_reserved &= ~open;
	/* GLOBAL_CTRL bit 48 lets PERF_METRICS count (Linux perf_event.h). */
	if (ic->perf_metrics && pmu_has_fixed(c, 3))
		c->global_ctrl_reserved &= ~BIT(PERF_GLOBAL_CTRL_PERF_METRICS_BIT);
}

void intel_v6_print(const struct pmu_caps *c, const char *prefix, pmu_line_fn out, void *ctx)
{
	const struct intel_caps *ic = intel_caps(c);
	char buf[224];
	const struct cpuid_regs *s = ic->leaf23_regs;

	if (!ic->arch_perfmon_ext) {
		if (c->version >= 6) {
			ksnprintf(
				buf, sizeof(buf),
				"%sversion %u without CPUID.23H (CPUID.(07H,1):EAX[8]=0): counters as CPUID.0AH says",
				prefix, c->version);
			out(ctx, buf);
		}
		return;
	}
	if (c->max_leaf < CPUID_23_LEAF) {
		ksnprintf(buf, sizeof(buf),
			  "%sCPUID.(07H,1):EAX[8] says leaf 23H exists but the maximum leaf is %#x: not read",
			  prefix, c->max_leaf);
		out(ctx, buf);
		return;
	}
	ksnprintf(
		buf, sizeof(buf),
		"%sCPUID.23H.0: EAX=%#x (sub-leaves valid), EBX=%#x (UMASK2 %s, EQ %s, RDPMC user disable %s), ECX=%#x, EDX=%#x",
		prefix, s[0].eax, s[0].ebx, (ic->v6_features >> CPUID_23_EBX_UMASK2_BIT) & 1 ? "yes" : "no",
		(ic->v6_features >> CPUID_23_EBX_EQ_BIT) & 1 ? "yes" : "no",
		(ic->v6_features >> CPUID_23_EBX_RDPMC_USER_DISABLE_BIT) & 1 ? "yes" : "no", s[0].ecx,
		s[0].edx);
	out(ctx, buf);
	if ((ic->leaf23_valid >> CPUID_23_COUNTERS_SUBLEAF) & 1) {
		ksnprintf(buf, sizeof(buf), "%sCPUID.23H.1: GP counters %#x, fixed counters %#x", prefix,
			  s[1].eax, s[1].ebx);
		out(ctx, buf);
	}
	if ((ic->leaf23_valid >> CPUID_23_ACR_SUBLEAF) & 1) {
		ksnprintf(
			buf, sizeof(buf),
			"%sCPUID.23H.2 auto counter reload: reloadable GP %#x fixed %#x, cause GP %#x fixed %#x",
			prefix, s[2].eax, s[2].ebx, s[2].ecx, s[2].edx);
		out(ctx, buf);
	}
	if ((ic->leaf23_valid >> CPUID_23_EVENTS_SUBLEAF) & 1) {
		ksnprintf(buf, sizeof(buf), "%sCPUID.23H.3: architectural events supported %#x%s", prefix,
			  s[3].eax, c->events_unknown ? " (bits past 12 unknown to pmutest)" : "");
		out(ctx, buf);
	}
	if ((ic->leaf23_valid >> CPUID_23_PEBS_CAPS_SUBLEAF) & 1) {
		ksnprintf(buf, sizeof(buf), "%sCPUID.23H.4 arch-PEBS capabilities: EBX=%#x (not driven)",
			  prefix, s[4].ebx);
		out(ctx, buf);
	}
	if ((ic->leaf23_valid >> CPUID_23_PEBS_COUNTERS_SUBLEAF) & 1) {
		ksnprintf(
			buf, sizeof(buf),
			"%sCPUID.23H.5 arch-PEBS counters: GP %#x (PDIST %#x), fixed %#x (PDIST %#x) (not driven)",
			prefix, s[5].eax, s[5].ebx, s[5].ecx, s[5].edx);
		out(ctx, buf);
	}
	if (ic->leaf23_valid >> CPUID_23_SUBLEAVES) {
		ksnprintf(buf, sizeof(buf),
			  "%sCPUID.23H.0:EAX sub-leaves past 5 valid (%#x): unknown to pmutest", prefix,
			  ic->leaf23_valid);
		out(ctx, buf);
	}
}
