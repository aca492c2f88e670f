/* The AMD part of the host PMU model: legacy, PerfCtrExtCore and PerfMonV2
 * counters written from the APM (vol. 2, 13.2 "Performance Monitoring
 * Counters"; vol. 3, RDPMC and CPUID), and the write-ignoring MSRs of a KVM
 * guest without a virtual PMU. Approximations are named where made. */
#include "tests/host/pmu_model_amd.h"

#include <string.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/msr.h"

/* PerfEvtSel bits that raise #GP: 19, 21, 39:36, 63:42, and GuestOnly/
 * HostOnly (40/41), which the model treats as reserved like KVM does for
 * its guests (arch/x86/kvm/svm/pmu.c, reserved mask 0xfffffff000280000);
 * EventSelect[11:8] (35:32) only from family 10h. */
#define AMD_EVTSEL_RESERVED 0xfffffff000280000ull
#define AMD_EVTSEL_EVENT_HI 0x0000000f00000000ull

struct amd_cpu {
	struct model_amd_config cfg;
	unsigned family, nctr;
	uint64_t ctl[MODEL_AMD_MAX_CTRS], ctr[MODEL_AMD_MAX_CTRS];
	uint64_t global_ctl, global_status;
};

static struct amd_cpu amd[MODEL_MAX_CPUS];

static const struct model_vendor_ops amd_ops;

/* --- Profiles --- */

/* Signatures: 0x00000f51 K8 (family 0Fh model 5), 0x00100f22 Barcelona
 * (10h), 0x00600f12 Bulldozer (15h), 0x00800f12 EPYC 7001 (17h model 1,
 * what QEMU's -cpu EPYC reports), 0x00a10f11 Genoa (19h model 11h). */
struct model_amd_config model_amd_profile_config(enum model_amd_profile p)
{
	struct model_amd_config c = { .vendor = "AuthenticAMD" };

	switch (p) {
	case MODEL_AMD_K8: c.signature = 0x00000f51; break;
	case MODEL_AMD_LEGACY: c.signature = 0x00100f22; break;
	case MODEL_AMD_EXTCORE: c.signature = 0x00600f12, c.ext_core = true; break;
	case MODEL_AMD_PERFMON_V2:
		c.signature = 0x00a10f11, c.ext_core = true, c.perfmon_v2 = true, c.v2_counters = 6;
		break;
	case MODEL_AMD_KVM_HERE:
		c.signature = 0x00800f12, c.hypervisor = true, c.ignores_writes = true;
		break;
	case MODEL_AMD_PROFILE_NR: break;
	}
	return c;
}

const char *model_amd_profile_name(enum model_amd_profile p)
{
	static const char *const names[MODEL_AMD_PROFILE_NR] = {
		[MODEL_AMD_K8] = "amd-k8",
		[MODEL_AMD_LEGACY] = "amd-legacy",
		[MODEL_AMD_EXTCORE] = "amd-extcore",
		[MODEL_AMD_PERFMON_V2] = "amd-perfmon-v2",
		[MODEL_AMD_KVM_HERE] = "amd-kvm-here",
	};
	return p < MODEL_AMD_PROFILE_NR ? names[p] : "?";
}

void model_amd_init_custom(const struct model_amd_config *cfgs, unsigned n)
{
	struct model_cpu_config mc[MODEL_MAX_CPUS];

	if (n > MODEL_MAX_CPUS)
		n = MODEL_MAX_CPUS;
	if (n == 0)
		n = 1;
	memset(mc, 0, sizeof(mc));
	for (unsigned c = 0; c < n; c++) {
		amd[c].cfg = cfgs[c];
		mc[c].vendor = cfgs[c].vendor;
		mc[c].signature = cfgs[c].signature;
		mc[c].hypervisor = cfgs[c].hypervisor;
		mc[c].vendor_ops = &amd_ops;
	}
	model_init_custom(mc, n); /* calls amd_reset for each CPU */
}

void model_amd_init(enum model_amd_profile p, unsigned n)
{
	struct model_amd_config cfgs[MODEL_MAX_CPUS];

	for (unsigned c = 0; c < MODEL_MAX_CPUS; c++)
		cfgs[c] = model_amd_profile_config(p);
	model_amd_init_custom(cfgs, n);
}

/* DisplayFamily (APM vol. 3, CPUID Fn0000_0001_EAX): base + extended when
 * the base family is 0Fh. */
static unsigned family_of(uint32_t sig)
{
	unsigned f = BITS(sig, 11, 8);
	return f == 0xf ? f + (unsigned)BITS(sig, 27, 20) : f;
}

static void amd_reset(unsigned cpu)
{
	struct amd_cpu *a = &amd[cpu];
	struct model_amd_config cfg = a->cfg;

	memset(a, 0, sizeof(*a));
	a->cfg = cfg;
	a->family = family_of(cfg.signature);
	a->nctr = cfg.perfmon_v2 ? cfg.v2_counters : cfg.ext_core ? 6 : 4;
	if (a->nctr > MODEL_AMD_MAX_CTRS)
		a->nctr = MODEL_AMD_MAX_CTRS;
	/* PerfCntrGlobalCtl after RESET: every counter enabled, so PerfMonV1
	 * software counts (AMD family PPRs, as cited by KVM's commit "Set
	 * enable bits for GP counters in PERF_GLOBAL_CTRL at RESET"). */
	if (cfg.perfmon_v2)
		a->global_ctl = (1ull << a->nctr) - 1;
}

/* --- MSR decoding --- */

enum amd_reg { A_NONE, A_CTL, A_CTR, A_GSTATUS, A_GCTL, A_GCLR };

static enum amd_reg decode(const struct amd_cpu *a, uint32_t msr, unsigned *n)
{
	*n = 0;
	/* Legacy addresses: counters 0-3, aliased onto the extended ones
	 * when PerfCtrExtCore is there. */
	if (msr >= MSR_K7_EVNTSEL0 && msr < MSR_K7_EVNTSEL0 + 4)
		return *n = msr - MSR_K7_EVNTSEL0, A_CTL;
	if (msr >= MSR_K7_PERFCTR0 && msr < MSR_K7_PERFCTR0 + 4)
		return *n = msr - MSR_K7_PERFCTR0, A_CTR;
	if (a->cfg.ext_core && !a->cfg.ignores_writes && msr >= MSR_F15H_PERF_CTL0 &&
	    msr < MSR_F15H_PERF_CTL0 + 2 * a->nctr)
		return *n = (msr - MSR_F15H_PERF_CTL0) / 2, (msr - MSR_F15H_PERF_CTL0) % 2 ? A_CTR : A_CTL;
	if (a->cfg.perfmon_v2 && !a->cfg.ignores_writes) {
		switch (msr) {
		case MSR_AMD64_PERF_CNTR_GLOBAL_STATUS: return A_GSTATUS;
		case MSR_AMD64_PERF_CNTR_GLOBAL_CTL: return A_GCTL;
		case MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR: return A_GCLR;
		default: break;
		}
	}
	return A_NONE;
}

static uint64_t ctr_mask(void)
{
	return (1ull << MODEL_AMD_WIDTH) - 1;
}

static uint64_t counter_bits(const struct amd_cpu *a)
{
	return (1ull << a->nctr) - 1;
}

static uint64_t evtsel_reserved(const struct amd_cpu *a)
{
	return AMD_EVTSEL_RESERVED | (a->family < 0x10 ? AMD_EVTSEL_EVENT_HI : 0);
}

static uint64_t peek(struct amd_cpu *a, enum amd_reg k, unsigned n)
{
	switch (k) {
	case A_CTL: return a->ctl[n];
	case A_CTR: return a->ctr[n];
	case A_GSTATUS: return a->global_status;
	case A_GCTL: return a->global_ctl;
	case A_GCLR: return 0; /* write-1-to-clear: reads as 0 */
	case A_NONE: break;
	}
	return 0;
}

static int amd_rdmsr(unsigned cpu, uint32_t msr, uint64_t *val)
{
	struct amd_cpu *a = &amd[cpu];
	unsigned n;
	enum amd_reg k = decode(a, msr, &n);

	*val = 0;
	if (k == A_NONE)
		return MODEL_VEC_GP;
	if (a->cfg.ignores_writes)
		return 0; /* KVM: "unhandled" PMU MSRs of an AMD guest read 0 */
	*val = peek(a, k, n);
	return 0;
}

static int amd_wrmsr(unsigned cpu, uint32_t msr, uint64_t val)
{
	struct amd_cpu *a = &amd[cpu];
	unsigned n;
	enum amd_reg k = decode(a, msr, &n);

	if (k == A_NONE)
		return MODEL_VEC_GP;
	if (a->cfg.ignores_writes)
		return 0; /* accepted, dropped, no #GP even for reserved bits */
	switch (k) {
	case A_CTL:
		if (val & evtsel_reserved(a))
			return MODEL_VEC_GP;
		a->ctl[n] = val;
		return 0;
	case A_CTR:
		/* The counters have 48 bits; the model refuses bits 63:48 so
		 * that a driver writing a sign-extended -N shows (KVM drops
		 * them instead). */
		if (val & ~ctr_mask())
			return MODEL_VEC_GP;
		a->ctr[n] = val;
		return 0;
	case A_GCTL:
		if (val & ~counter_bits(a))
			return MODEL_VEC_GP;
		a->global_ctl = val;
		return 0;
	case A_GCLR:
		if (val & ~counter_bits(a))
			return MODEL_VEC_GP;
		a->global_status &= ~val;
		return 0;
	case A_GSTATUS: return MODEL_VEC_GP; /* read-only */
	case A_NONE: break;
	}
	return MODEL_VEC_GP;
}

/* RDPMC (APM vol. 3): ECX is the counter number, 0..3 legacy, 0..5 with
 * PerfCtrExtCore; the model has no northbridge/L3 counters, so anything
 * past the core counters raises #GP, as does CPL > 0 without CR4.PCE. A
 * KVM without vPMU raises #GP for every index. */
static int amd_rdpmc(unsigned cpu, uint32_t ecx, uint64_t *val)
{
	struct amd_cpu *a = &amd[cpu];

	*val = 0;
	if (a->cfg.ignores_writes)
		return MODEL_VEC_GP;
	if (model_cpl() > 0 && !model_cr4_pce())
		return MODEL_VEC_GP;
	if (ecx >= a->nctr)
		return MODEL_VEC_GP;
	*val = a->ctr[ecx];
	return 0;
}

static void amd_cpuid(unsigned cpu, uint32_t leaf, uint32_t subleaf, struct cpuid_regs *r)
{
	const struct model_amd_config *c = &amd[cpu].cfg;
	uint32_t max_ext = c->perfmon_v2 ? 0x80000022u : 0x8000001eu;

	memset(r, 0, sizeof(*r));
	switch (leaf) {
	case 0:
		r->eax = 0x0d; /* AMD leaves 02h-0Dh: nothing PMU-related; 0Ah is reserved (zero) */
		memcpy(&r->ebx, c->vendor, 4);
		memcpy(&r->edx, c->vendor + 4, 4);
		memcpy(&r->ecx, c->vendor + 8, 4);
		break;
	case 1:
		r->eax = c->signature;
		r->ecx = BIT(CPUID_1_ECX_CX16_BIT) | (c->hypervisor ? BIT(CPUID_1_ECX_HYPERVISOR_BIT) : 0);
		break;
	case 0x80000000u: r->eax = max_ext; break;
	case 0x80000001u:
		r->ecx = c->ext_core ? BIT(CPUID_80000001_ECX_PERFCTR_CORE_BIT) : 0;
		r->edx = BIT(CPUID_80000001_EDX_LM_BIT);
		break;
	case 0x80000022u:
		if (c->perfmon_v2)
			r->eax = 1, r->ebx = c->v2_counters & 0xf;
		break;
	default: break;
	}
	(void)subleaf;
}

/* --- Counting --- */

/* Events per APM family event tables (the ones pmu/amd.c names), unit
 * mask 0. CMASK/INV/EDGE are not modelled: a counter using them counts
 * nothing (approximation). */
static uint64_t event_count(uint64_t sel, const struct model_work *w)
{
	unsigned ev = (unsigned)(sel & 0xff) | (unsigned)((sel >> 32) & 0xf) << 8;
	unsigned umask = (sel >> 8) & 0xff;

	if (umask || (sel >> PERFEVTSEL_CMASK_SHIFT) & 0xff || (sel >> PERFEVTSEL_INV_BIT) & 1 ||
	    (sel >> PERFEVTSEL_EDGE_BIT) & 1)
		return 0;
	switch (ev) {
	case 0x076: return w->cycles;
	case 0x0c0: return w->instructions;
	case 0x0c2: return w->branches;
	case 0x0c3: return w->branch_misses;
	default: return 0;
	}
}

/* Returns true when a counter with Int set wrapped (a PMI). */
static bool amd_tick(unsigned cpu, const struct model_work *w)
{
	struct amd_cpu *a = &amd[cpu];
	bool pmi = false;

	if (a->cfg.ignores_writes)
		return false;
	for (unsigned n = 0; n < a->nctr; n++) {
		uint64_t sel = a->ctl[n], old, delta;
		bool ring = model_cpl() == 0 ? (sel >> PERFEVTSEL_OS_BIT) & 1
					     : (sel >> PERFEVTSEL_USR_BIT) & 1;

		if (!((sel >> PERFEVTSEL_EN_BIT) & 1) || !ring)
			continue;
		/* PerfMonV2: PerfCntrGlobalCtl AND the counter's own En. */
		if (a->cfg.perfmon_v2 && !((a->global_ctl >> n) & 1))
			continue;
		delta = event_count(sel, w);
		old = a->ctr[n];
		a->ctr[n] = (old + delta) & ctr_mask();
		if (delta > ctr_mask() - old) {
			if (a->cfg.perfmon_v2)
				a->global_status |= 1ull << n;
			if ((sel >> PERFEVTSEL_INT_BIT) & 1)
				pmi = true;
		}
	}
	return pmi;
}

static uint64_t amd_peek(unsigned cpu, uint32_t msr)
{
	unsigned n;
	enum amd_reg k = decode(&amd[cpu], msr, &n);

	return peek(&amd[cpu], k, n);
}

static void amd_poke(unsigned cpu, uint32_t msr, uint64_t val)
{
	struct amd_cpu *a = &amd[cpu];
	unsigned n;

	switch (decode(a, msr, &n)) {
	case A_CTL: a->ctl[n] = val; break;
	case A_CTR: a->ctr[n] = val; break;
	case A_GSTATUS: a->global_status = val; break;
	case A_GCTL: a->global_ctl = val; break;
	default: break;
	}
}

static const struct model_vendor_ops amd_ops = {
	.reset = amd_reset,
	.cpuid = amd_cpuid,
	.rdmsr = amd_rdmsr,
	.wrmsr = amd_wrmsr,
	.rdpmc = amd_rdpmc,
	.tick = amd_tick,
	.peek = amd_peek,
	.poke = amd_poke,
};
