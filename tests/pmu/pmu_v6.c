/* Architectural performance monitoring version 6 and CPUID leaf 23H on
 * each CPU: every sub-leaf decoded and its counters answering, the
 * 0x1900 + 4n MSRs against the legacy ones, the event-select extensions
 * (UMASK2, EQ, RDPMC user disable), auto counter reload, architectural
 * events 8-12 with fixed counters 4-6, and PERF_METRICS. The bit
 * positions come from Linux and x86-cpuid-db (pmu/intel/v6.c names the
 * commits); each check asserts only what those sources pin down. */
#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "arch/x86/regs.h"
#include "arch/x86/usermode.h"
#include "arch/x86/vectors.h"
#include "pmu/bracket.h"
#include "pmu/intel/caps.h"
#include "pmu/intel/topdown.h"
#include "pmu/intel/v6.h"
#include "pmu/loops.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/ktest.h"
#include "tests/pmu/pmu_common.h"

/* A counter preset this far below 0 overflows early in a bracket loop. */
#define V6_OVF_N ((uint64_t)1000)
/* Reload values with bit 31 clear: whether CFG_C[31:0] is sign-extended
 * is not documented publicly, and these read the same either way. */
#define V6_RELOAD_B ((uint64_t)0x1000)
#define V6_RELOAD_S ((uint64_t)0x2000)
/* How far a reloaded counter may be off the cause's count after the
 * overflow: the events retired in the cycle of the overflow (a few per
 * cycle on the widest cores), whose order against the reload the
 * sources do not give. */
#define V6_ACR_SLACK 8

static void diag_line(void *ctx, const char *line)
{
	(void)ctx;
	diag("%s", line);
}

static const char *needs_leaf23(void)
{
	const char *why = pmu_needs_counting();
	const struct pmu_caps *c;

	if (why)
		return why;
	c = pmu_caps();
	if (c->vendor != PMU_VENDOR_INTEL)
		return ktest_reason("CPUID.23H is Intel's (vendor %s)", c->vendor_id);
	if (!intel_caps(c)->arch_perfmon_ext)
		return ktest_reason(
			"no CPUID.23H: CPUID.(07H,1):EAX[8]=0 (architectural PMU v%u, maximum leaf %#x)",
			c->version, c->max_leaf);
	if (c->max_leaf < CPUID_23_LEAF)
		return ktest_reason("CPUID.(07H,1):EAX[8] says leaf 23H exists, the maximum leaf is %#x",
				    c->max_leaf);
	return NULL;
}

static const char *needs_v6(void)
{
	const char *why = pmu_needs_counting();

	if (why)
		return why;
	if (pmu_caps()->vendor != PMU_VENDOR_INTEL)
		return ktest_reason("the version 6 MSRs are Intel's (vendor %s)", pmu_caps()->vendor_id);
	if (pmu_caps()->version < 6)
		return ktest_reason("architectural PMU v%u: the 0x1900 + 4n MSRs come with version 6",
				    pmu_caps()->version);
	return NULL;
}

static const char *needs_user_disable(void)
{
	const char *why = needs_leaf23();

	if (why)
		return why;
	if (!((intel_caps(pmu_caps())->v6_features >> CPUID_23_EBX_RDPMC_USER_DISABLE_BIT) & 1))
		return ktest_reason("no RDPMC user disable: CPUID.23H.0:EBX[2]=0 (EBX=%#x)",
				    intel_caps(pmu_caps())->leaf23_regs[0].ebx);
	return NULL;
}

static const char *needs_acr(void)
{
	const char *why = needs_leaf23();

	if (why)
		return why;
	if (!((intel_caps(pmu_caps())->leaf23_valid >> CPUID_23_ACR_SUBLEAF) & 1))
		return ktest_reason("no auto counter reload: CPUID.23H.0:EAX[2]=0 (EAX=%#x)",
				    intel_caps(pmu_caps())->leaf23_valid);
	if (pmu_caps()->version < 6)
		return ktest_reason("auto counter reload on a v%u PMU: its CFG_B/CFG_C MSRs are version 6's",
				    pmu_caps()->version);
	if (!pmu_caps()->global_ctrl)
		return "no IA32_PERF_GLOBAL_CTRL";
	return NULL;
}

#define TOPDOWN_EVENTS_MASK 0x1f00u /* architectural events 8-12 */
#define TOPDOWN_FIXED_MASK 0x70u    /* fixed counters 4-6 */

static const char *needs_events_8_12(void)
{
	const char *why = pmu_needs_counting();
	const struct pmu_caps *c;

	if (why)
		return why;
	c = pmu_caps();
	if (!(c->events_avail & TOPDOWN_EVENTS_MASK) && !(c->fixed_mask & TOPDOWN_FIXED_MASK))
		return ktest_reason(
			"no architectural event 8-12 (events available %#x, %s) and no fixed counter 4-6 (mask %#x)",
			c->events_avail, intel_caps(c)->events_from_leaf23 ? "CPUID.23H.3" : "CPUID.0AH:EBX",
			c->fixed_mask);
	return NULL;
}

static const char *needs_perf_metrics(void)
{
	const char *why = pmu_needs_fixed();
	const struct pmu_caps *c;

	if (why)
		return why;
	c = pmu_caps();
	if (!intel_caps(c)->perf_caps_valid)
		return ktest_reason("no IA32_PERF_CAPABILITIES (CPUID.01H:ECX.PDCM[15]=%u)",
				    intel_caps(c)->pdcm);
	if (!intel_caps(c)->perf_metrics)
		return ktest_reason("no PERF_METRICS: IA32_PERF_CAPABILITIES[15]=0 (%#lx)",
				    intel_caps(c)->perf_caps);
	if (!pmu_has_fixed(c, 3))
		return ktest_reason("PERF_CAPABILITIES[15] set but no fixed counter 3 (mask %#x)",
				    c->fixed_mask);
	return NULL;
}

/* --- CPUID.23H --- */

/* The counters leaf 0AH enumerates, in GLOBAL_CTRL's layout. */
static uint64_t leaf0a_counters(const struct pmu_caps *c)
{
	uint64_t gp = pmu_width_mask(BITS(c->leaf_0a.eax, 15, 8));
	uint64_t fx = c->version >= 2 ? pmu_width_mask(BITS(c->leaf_0a.edx, 4, 0)) : 0;

	if (c->version >= 5)
		fx |= c->leaf_0a.ecx;
	return gp | (fx & 0xffff) << PERF_GLOBAL_FIXED_SHIFT;
}

/* Every sub-leaf is printed. Sub-leaf 0 marks itself valid (bit 0), and
 * the sub-leaves it does not mark read 0; the
 * counters leaf 0AH lists exist in 23.1 too (on hybrid parts 0AH is the
 * core types' common subset: InstLatx64 dumps of Lunar, Arrow and
 * Panther Lake), and so do the events 0AH leaves available in 23.3; the
 * reload bitmaps of 23.2 name existing counters. Each
 * counter of 23.1 answers RDMSR and RDPMC, and one that is absent (a hole
 * or the first past the last) raises #GP (SDM vol. 2B, RDPMC). */
KTEST("pmu.v6", leaf23_decoded, needs_leaf23, KTEST_PER_CPU,
      "every CPUID.23H sub-leaf decoded; its counters answer, absent ones #GP")
{
	const struct pmu_caps *c = pmu_caps();
	uint64_t ctrs = (uint64_t)c->gp_mask | (uint64_t)c->fixed_mask << PERF_GLOBAL_FIXED_SHIFT, v;
	int vec;

	intel_v6_print(c, "", diag_line, NULL);
	check(intel_caps(c)->leaf23_valid & 1, "CPUID.23H.0:EAX bit 0 (sub-leaf 0 valid) clear: EAX=%#x",
	      intel_caps(c)->leaf23_valid);
	/* A sub-leaf that sub-leaf 0 does not mark valid is an invalid
	 * sub-leaf index and returns 0 in EAX-EDX (SDM vol. 2A, CPUID: "If
	 * ECX contains an invalid sub-leaf index, EAX/EBX/ECX/EDX return 0",
	 * said of the leaves whose sub-leaf 0 enumerates the others, 0DH
	 * among them). Data a valid bit does not announce is lost to
	 * software that follows the bits, as Linux and pmutest do. */
	for (unsigned n = 1; n < CPUID_23_SUBLEAVES; n++) {
		struct cpuid_regs r;

		if ((intel_caps(c)->leaf23_valid >> n) & 1)
			continue;
		pmu_hw_cpuid(CPUID_23_LEAF, n, &r);
		check(!r.eax && !r.ebx && !r.ecx && !r.edx,
		      "CPUID.23H.%u: not valid (CPUID.23H.0:EAX %#x) but reads %#x %#x %#x %#x; expected 0",
		      n, intel_caps(c)->leaf23_valid, r.eax, r.ebx, r.ecx, r.edx);
	}
	if (intel_caps(c)->leaf23) {
		uint64_t l0a = leaf0a_counters(c);
		check(!(l0a & ~ctrs),
		      "counters of CPUID.0AH (%#lx) missing from CPUID.23H.1 (%#lx): %#lx; expected 0AH to be a subset",
		      l0a, ctrs, l0a & ~ctrs);
	}
	/* Likewise the architectural events: one that CPUID.0AH:EBX leaves
	 * available (bit clear, below EAX[31:24]) is one 23.3 EAX says this
	 * logical processor supports (SDM vol. 2A, CPUID leaves 0AH and 23H:
	 * both describe the processor that executes CPUID). */
	if ((intel_caps(c)->leaf23_valid >> CPUID_23_EVENTS_SUBLEAF) & 1) {
		uint32_t ev23 = intel_caps(c)->leaf23_regs[CPUID_23_EVENTS_SUBLEAF].eax;
		unsigned len = BITS(c->leaf_0a.eax, 31, 24);
		uint32_t ev0a = ~c->leaf_0a.ebx & (len >= 32 ? ~0u : (1u << len) - 1);

		check(!(ev0a & ~ev23),
		      "events CPUID.0AH leaves available (EBX %#x, length %u: %#x) missing from CPUID.23H.3:EAX (%#x): %#x; expected 0AH's to be a subset",
		      c->leaf_0a.ebx, len, ev0a, ev23, ev0a & ~ev23);
	}
	check(!(intel_caps(c)->acr_reload & ~ctrs) && !(intel_caps(c)->acr_cause & ~ctrs),
	      "CPUID.23H.2 names counters CPUID.23H.1 does not have: reload %#lx, cause %#lx, counters %#lx",
	      intel_caps(c)->acr_reload, intel_caps(c)->acr_cause, ctrs);
	if (intel_caps(c)->leaf23_regs[0].ebx >> 3)
		diag("CPUID.23H.0:EBX bits past 2 set (%#x): unknown to pmutest",
		     intel_caps(c)->leaf23_regs[0].ebx);
	for (unsigned x = 0; x < PMU_MAX_GP; x++) {
		if (pmu_has_gp(c, x)) {
			vec = pmu_hw_rdmsr(pmu_ctr_msr(c, x), &v);
			check(vec == 0, "GP %u (CPUID.23H.1:EAX %#x): rdmsr %#x raised vector %d", x,
			      c->gp_mask, pmu_ctr_msr(c, x), vec);
			vec = pmu_hw_rdpmc(x, &v);
			check(vec == 0, "GP %u: RDPMC(%u) raised vector %d", x, x, vec);
		} else if (x <= (unsigned)fls32(c->gp_mask) && !((c->rdpmc_extra_mask >> x) & 1)) {
			vec = pmu_hw_rdpmc(x, &v);
			check(vec == X86_VEC_GP,
			      "GP %u (absent, CPUID.23H.1:EAX %#x): RDPMC expected #GP, saw vector %d", x,
			      c->gp_mask, vec);
		}
	}
	for (unsigned i = 0; i < 8; i++) {
		if (pmu_has_fixed(c, i)) {
			vec = pmu_hw_rdmsr(pmu_fixed_msr(c, i), &v);
			check(vec == 0, "fixed %u (CPUID.23H.1:EBX %#x): rdmsr %#x raised vector %d", i,
			      c->fixed_mask, pmu_fixed_msr(c, i), vec);
			vec = pmu_hw_rdpmc(PMU_RDPMC_FIXED | i, &v);
			check(vec == 0, "fixed %u: RDPMC(%#x) raised vector %d", i, PMU_RDPMC_FIXED | i, vec);
		} else if (i <= (unsigned)fls32(c->fixed_mask)) {
			vec = pmu_hw_rdpmc(PMU_RDPMC_FIXED | i, &v);
			check(vec == X86_VEC_GP,
			      "fixed %u (absent, CPUID.23H.1:EBX %#x): RDPMC expected #GP, saw vector %d", i,
			      c->fixed_mask, vec);
			vec = pmu_hw_rdmsr(MSR_IA32_FIXED_CTR0 + i, &v);
			check(vec == X86_VEC_GP,
			      "fixed %u (absent): rdmsr IA32_FIXED_CTR%u expected #GP, saw vector %d", i, i,
			      vec);
		}
	}
}

/* --- The version 6 MSR map --- */

/* IA32_PMC_GPn_CTR (0x1900 + 4n) is IA32_PMCn and IA32_A_PMCn, CFG_A
 * (0x1901 + 4n) is IA32_PERFEVTSELn, IA32_PMC_FXm_CTR (0x1980 + 4m) is
 * IA32_FIXED_CTRm (Linux commit 149fd4712bcd, "Perfmon MSRs aliasing"):
 * a value written through either reads back through the other and RDPMC.
 * GP counters past 7 have no legacy address (IA32_PMC0-7 are the
 * architectural ones): only RDPMC is compared there. */
KTEST("pmu.v6", msr_aliases, needs_v6, KTEST_PER_CPU,
      "version 6 MSRs (0x1900 + 4n) are the legacy counters and event selects")
{
	const struct pmu_caps *c = pmu_caps();
	uint32_t gp = pmu_test_free_gp(), fx = c->global_ctrl ? pmu_test_free_fixed() : 0;
	uint64_t v, r;

	for (unsigned x = 0; x < PMU_MAX_GP; x++) {
		uint32_t ctr = MSR_IA32_PMC_V6_GP0_CTR + x * MSR_IA32_PMC_V6_STEP;
		uint32_t cfg = MSR_IA32_PMC_V6_GP0_CFG_A + x * MSR_IA32_PMC_V6_STEP;
		uint64_t pat = (0x5a5a5a5a5aull + x) & pmu_width_mask(c->gp_width);

		if (!((gp >> x) & 1))
			continue;
		check(pmu_hw_wrmsr(ctr, pat) == 0, "GP %u: wrmsr %#x <- %#lx faulted", x, ctr, pat);
		check(pmu_hw_rdpmc(x, &r) == 0 && r == pat, "GP %u: wrote %#lx to %#x, RDPMC(%u) read %#lx",
		      x, pat, ctr, x, r);
		if (x < 8) {
			check(pmu_hw_rdmsr(MSR_IA32_PMC0 + x, &v) == 0 && v == pat,
			      "GP %u: wrote %#lx to IA32_PMC_GP%u_CTR %#x, IA32_PMC%u reads %#lx", x, pat, x,
			      ctr, x, v);
			if (intel_caps(c)->full_width_write)
				check(pmu_hw_rdmsr(MSR_IA32_A_PMC0 + x, &v) == 0 && v == pat,
				      "GP %u: wrote %#lx to %#x, IA32_A_PMC%u reads %#lx", x, pat, ctr, x, v);
			pmu_hw_wrmsr(MSR_IA32_PMC0 + x, 0x80000005ull);
			check(pmu_hw_rdmsr(ctr, &v) == 0 && v == pmu_sext32(0x80000005ull, c->gp_width),
			      "GP %u: IA32_PMC%u <- 0x80000005 (sign-extended %#lx), IA32_PMC_GP%u_CTR reads %#lx",
			      x, x, pmu_sext32(0x80000005ull, c->gp_width), x, v);
			pmu_hw_wrmsr(MSR_IA32_PERFEVTSEL0 + x, 0x300c0);
			check(pmu_hw_rdmsr(cfg, &v) == 0 && v == 0x300c0,
			      "GP %u: IA32_PERFEVTSEL%u <- 0x300c0, IA32_PMC_GP%u_CFG_A %#x reads %#lx", x, x,
			      x, cfg, v);
			pmu_hw_wrmsr(cfg, 0x1003c);
			check(pmu_hw_rdmsr(MSR_IA32_PERFEVTSEL0 + x, &v) == 0 && v == 0x1003c,
			      "GP %u: IA32_PMC_GP%u_CFG_A <- 0x1003c, IA32_PERFEVTSEL%u reads %#lx", x, x, x,
			      v);
		} else {
			diag("GP %u: no legacy address (IA32_PMC0-7 only); CTR compared through RDPMC", x);
		}
		pmu_hw_wrmsr(cfg, 0);
		pmu_hw_wrmsr(ctr, 0);
	}
	for (unsigned i = 0; i < PMU_MAX_FIXED; i++) {
		uint32_t ctr = MSR_IA32_PMC_V6_FX0_CTR + i * MSR_IA32_PMC_V6_STEP;
		uint64_t pat = (0x3c3c3c3c3cull + i) & pmu_width_mask(c->fixed_width);

		if (!((fx >> i) & 1))
			continue;
		pmu_hw_wrmsr(ctr, pat);
		check(pmu_hw_rdmsr(MSR_IA32_FIXED_CTR0 + i, &v) == 0 && v == pat,
		      "fixed %u: wrote %#lx to IA32_PMC_FX%u_CTR %#x, IA32_FIXED_CTR%u reads %#lx", i, pat, i,
		      ctr, i, v);
		check(pmu_hw_rdpmc(PMU_RDPMC_FIXED | i, &r) == 0 && r == pat,
		      "fixed %u: RDPMC read %#lx, expected %#lx", i, r, pat);
		pmu_hw_wrmsr(MSR_IA32_FIXED_CTR0 + i, pat ^ 0xff);
		check(pmu_hw_rdmsr(ctr, &v) == 0 && v == (pat ^ 0xff),
		      "fixed %u: IA32_FIXED_CTR%u <- %#lx, IA32_PMC_FX%u_CTR reads %#lx", i, i, pat ^ 0xff, i,
		      v);
		pmu_hw_wrmsr(ctr, 0);
	}
}

/* --- Event-select extensions --- */

struct evtsel_ext {
	unsigned ebx_bit;
	const char *name;
	uint64_t bits, base;
};

/* UMASK2 (47:40), EQ (36) and RDPMC user disable (37) are writable
 * exactly when CPUID.23H.0:EBX bits 0, 1, 2 say so (Linux commits
 * dce0c74d2d18 and 59af95e028d4); otherwise they are reserved and the
 * write raises #GP (SDM vol. 3B: reserved PERFEVTSEL bits). Only the
 * register rule is checked: what EQ and UMASK2 count is not public. */
KTEST("pmu.v6", evtsel_extensions, needs_leaf23, KTEST_PER_CPU,
      "UMASK2, EQ and RDPMC user disable take writes iff CPUID.23H.0:EBX says")
{
	static const struct evtsel_ext ext[] = {
		/* MEM_LOAD_RETIRED.L1_L2_HIT: event 0xD1, umask 0x01, umask2 0x02 (Intel LKVS umask2_test).
		 */
		{ CPUID_23_EBX_UMASK2_BIT, "UMASK2 (47:40)", 0x02ull << PERFEVTSEL_UMASK2_SHIFT, 0x301d1 },
		/* Instructions with CMASK 1 and EQ: cycles retiring exactly one. */
		{ CPUID_23_EBX_EQ_BIT, "EQ (36)", BIT(PERFEVTSEL_EQ_BIT), 0x10300c0 },
		{ CPUID_23_EBX_RDPMC_USER_DISABLE_BIT, "RDPMC user disable (37)",
		  BIT(PERFEVTSEL_RDPMC_USER_DISABLE_BIT), 0x300c0 },
	};
	struct pmu_cpu *pc = pmu_cpu_ensure();
	const struct pmu_caps *c = pmu_cpu_caps(pc);
	unsigned x = pmu_test_first_absent(~pmu_test_free_gp(), PMU_MAX_GP);
	uint32_t fx = c->global_ctrl ? pmu_test_free_fixed() : 0;
	uint64_t v;

	if (x >= PMU_MAX_GP)
		ktest_skip("no free GP counter (mask %#x)", pmu_test_free_gp());
	for (unsigned k = 0; k < ARRAY_LEN(ext); k++) {
		bool has = (intel_caps(c)->leaf23_regs[0].ebx >> ext[k].ebx_bit) & 1;
		uint64_t want = ext[k].base | ext[k].bits;
		int vec = pmu_hw_wrmsr(pmu_evtsel_msr(c, x), want);

		if (has) {
			check(vec == 0, "%s enumerated (CPUID.23H.0:EBX=%#x): %s%u <- %#lx raised vector %d",
			      ext[k].name, intel_caps(c)->leaf23_regs[0].ebx, pmu_evtsel_name(c), x, want,
			      vec);
			check(vec || (pmu_hw_rdmsr(pmu_evtsel_msr(c, x), &v) == 0 && v == want),
			      "%s: %s%u <- %#lx reads back %#lx", ext[k].name, pmu_evtsel_name(c), x, want,
			      v);
		} else {
			check(vec == X86_VEC_GP,
			      "%s not enumerated (CPUID.23H.0:EBX=%#x): %s%u <- %#lx expected #GP, saw %d",
			      ext[k].name, intel_caps(c)->leaf23_regs[0].ebx, pmu_evtsel_name(c), x, want,
			      vec);
		}
		pmu_hw_wrmsr(pmu_evtsel_msr(c, x), 0);
	}
	/* IA32_FIXED_CTR_CTRL's user-disable bit of fixed counter i: 33 + 4i. */
	unsigned i = pmu_test_first_absent(~fx, 8);
	if (i < 8 && c->fixed_ctrl) {
		bool has = (intel_caps(c)->leaf23_regs[0].ebx >> CPUID_23_EBX_RDPMC_USER_DISABLE_BIT) & 1;
		uint64_t want = pmu_cpu_fixed_ctrl(pc) | BIT(FIXED_CTR_CTRL_RDPMC_USER_DISABLE_BIT(i));
		int vec = pmu_hw_wrmsr(c->fixed_ctrl, want);

		if (has)
			check(vec == 0 && pmu_hw_rdmsr(c->fixed_ctrl, &v) == 0 && v == want,
			      "IA32_FIXED_CTR_CTRL <- %#lx (fixed %u user disable): vector %d, reads %#lx",
			      want, i, vec, v);
		else
			check(vec == X86_VEC_GP,
			      "IA32_FIXED_CTR_CTRL bit %u without RDPMC user disable: expected #GP, saw %d",
			      FIXED_CTR_CTRL_RDPMC_USER_DISABLE_BIT(i), vec);
		pmu_hw_wrmsr(c->fixed_ctrl, pmu_cpu_fixed_ctrl(pc));
	}
}

/* --- RDPMC user disable --- */

/* RDPMC at CPL 3 of a counter with its RDPMC_USER_DISABLE bit (PERFEVTSEL
 * bit 37, IA32_FIXED_CTR_CTRL bit 33 + 4i) returns 0, without a fault;
 * at CPL 0 it returns the count (Linux commit 59af95e028d4, quoting the
 * ISE's RDPMC pseudo-code). CR4.PCE is set around the ring-3 reads. */
static void user_disable_one(uint32_t ecx, uint64_t val, uint32_t msr, uint64_t on, uint64_t off)
{
	struct user_rdpmc u = { .ecx = ecx, .val = 0xdead };
	uint64_t k = 0, cr4 = read_cr4();
	int vec;

	pmu_hw_wrmsr(msr, on);
	write_cr4(cr4 | BIT(CR4_PCE_BIT));
	vec = usermode_call(user_rdpmc, &u);
	write_cr4(cr4);
	check(vec == -1 && u.val == 0,
	      "RDPMC(%#x) at CPL 3 with user disable (%#x <- %#lx): expected 0, saw %#lx (vector %d)", ecx,
	      msr, on, u.val, vec);
	check(pmu_hw_rdpmc(ecx, &k) == 0 && k == val,
	      "RDPMC(%#x) at CPL 0 with user disable: expected %#lx, read %#lx", ecx, val, k);
	pmu_hw_wrmsr(msr, off);
	u.val = 0xdead;
	write_cr4(cr4 | BIT(CR4_PCE_BIT));
	vec = usermode_call(user_rdpmc, &u);
	write_cr4(cr4);
	check(vec == -1 && u.val == val,
	      "RDPMC(%#x) at CPL 3 without user disable: expected %#lx, saw %#lx (vector %d)", ecx, val,
	      u.val, vec);
}

KTEST("pmu.v6", rdpmc_user_disable, needs_user_disable, KTEST_PER_CPU,
      "RDPMC user disable: ring-3 RDPMC reads 0, ring 0 the count")
{
	struct pmu_cpu *pc = pmu_cpu_ensure();
	const struct pmu_caps *c = pmu_cpu_caps(pc);
	unsigned x = pmu_test_first_absent(~pmu_test_free_gp(), PMU_MAX_GP);
	unsigned i = pmu_test_first_absent(~(c->global_ctrl ? pmu_test_free_fixed() : 0), 8);

	if (x >= PMU_MAX_GP)
		ktest_skip("no free GP counter (mask %#x)", pmu_test_free_gp());
	/* The counters hold a value and do not count (EN and the field's
	 * enables clear). */
	pmu_hw_wrmsr(pmu_ctr_write_msr(c, x), 0x1234);
	user_disable_one(x, 0x1234, pmu_evtsel_msr(c, x), 0x300c0 | BIT(PERFEVTSEL_RDPMC_USER_DISABLE_BIT),
			 0x300c0);
	pmu_hw_wrmsr(pmu_evtsel_msr(c, x), 0);
	pmu_hw_wrmsr(pmu_ctr_write_msr(c, x), 0);
	if (i < 8 && c->fixed_ctrl) {
		pmu_hw_wrmsr(pmu_fixed_msr(c, i), 0x5678);
		user_disable_one(PMU_RDPMC_FIXED | i, 0x5678, c->fixed_ctrl,
				 pmu_cpu_fixed_ctrl(pc) | BIT(FIXED_CTR_CTRL_RDPMC_USER_DISABLE_BIT(i)),
				 pmu_cpu_fixed_ctrl(pc));
		pmu_hw_wrmsr(pmu_fixed_msr(c, i), 0);
	}
}

/* --- Auto counter reload --- */

static uint32_t acr_cfg_b(unsigned idx)
{
	return idx < PMU_IDX_FIXED_BASE
		       ? MSR_IA32_PMC_V6_GP0_CFG_B + idx * MSR_IA32_PMC_V6_STEP
		       : MSR_IA32_PMC_V6_FX0_CFG_B + (idx - PMU_IDX_FIXED_BASE) * MSR_IA32_PMC_V6_STEP;
}

static uint32_t acr_cfg_c(unsigned idx)
{
	return acr_cfg_b(idx) + 1;
}

/* A free GP counter in `mask` other than those in `not`; -1 if none. */
static int pick_gp(uint64_t mask, uint64_t not )
{
	uint32_t free = pmu_test_free_gp();

	for (unsigned x = 0; x < PMU_MAX_GP; x++)
		if (((free & mask) >> x) & 1 && !((not >> x) & 1))
			return (int)x;
	return -1;
}

/* IA32_PMC_x_CFG_B of counter j holds the counters whose overflow reloads
 * j with CFG_C[31:0] (Linux commit ec980e4facef, citing SDM vol. 3 "Auto
 * Counter Reload"; CPUID.23H.2 says which counters can be reloaded and
 * which can cause it). A cause bit of a counter that cannot cause a
 * reload raises #GP (Panther Lake's GP 0-1: Linux commit 43796f305078).
 * In one window: cause A preset to -1000 overflows and sets its status
 * bit, B (CFG_B = A) restarts at its reload value there, so B - reload
 * equals what A counted since (within the events of that cycle); S
 * (CFG_B = S) reloads itself and sets no status bit (Linux commit
 * 1271aeccc307, "according to the Intel SDM"). */
KTEST("pmu.v6", auto_counter_reload, needs_acr, KTEST_PER_CPU,
      "auto counter reload: #GP on a non-cause bit; a cause overflow reloads")
{
	const struct pmu_caps *c = pmu_caps();
	uint64_t ctrs = (uint64_t)c->gp_mask | (uint64_t)c->fixed_mask << PERF_GLOBAL_FIXED_SHIFT;
	uint64_t cause = intel_caps(c)->acr_cause, reload = intel_caps(c)->acr_reload;
	int r = pick_gp(reload, 0), bad = -1;
	int vec;

	if (r < 0)
		ktest_skip("no free GP counter can be reloaded (CPUID.23H.2:EAX %#x, free %#x)",
			   (uint32_t)reload, pmu_test_free_gp());
	for (unsigned n = 0; n < 64; n++)
		if (((ctrs & ~cause) >> n) & 1) {
			bad = (int)n;
			break;
		}
	if (bad >= 0) {
		vec = pmu_hw_wrmsr(acr_cfg_b((unsigned)r), BIT(bad));
		check(vec == X86_VEC_GP,
		      "IA32_PMC_GP%d_CFG_B <- bit %d (a counter CPUID.23H.2 says cannot cause a reload, cause mask %#lx): expected #GP, saw %d",
		      r, bad, cause, vec);
		pmu_hw_wrmsr(acr_cfg_b((unsigned)r), 0);
	} else {
		diag("every counter can cause a reload (cause mask %#lx): no #GP to check", cause);
	}

	int a = pick_gp(cause, 0);
	int b = pick_gp(reload, a >= 0 ? BIT(a) : 0);
	int s = pick_gp(reload & cause, (a >= 0 ? BIT(a) : 0) | (b >= 0 ? BIT(b) : 0));
	if (a < 0 || b < 0)
		ktest_skip(
			"needs a free cause and a free reloadable GP counter (cause %#lx, reload %#lx, free %#x)",
			cause, reload, pmu_test_free_gp());
	struct pmu_event ea, eb, es;
	struct pmu_event *g[3] = { &ea, &eb, &es };
	unsigned n = s >= 0 ? 3 : 2;
	struct pmu_bracket_regs br;
	uint64_t preset_b = 0x700000000000ull & pmu_width_mask(c->gp_width);

	pmu_test_event(&ea, PMU_ARCH_INSTRUCTIONS);
	pmu_test_event(&eb, PMU_ARCH_INSTRUCTIONS);
	pmu_test_event(&es, PMU_ARCH_INSTRUCTIONS);
	if (!check(pmu_event_add_idx(&ea, a) == PMU_OK && pmu_event_add_idx(&eb, b) == PMU_OK &&
			   (n < 3 || pmu_event_add_idx(&es, s) == PMU_OK),
		   "placing instructions on GP %d, %d, %d: %s %s %s", a, b, s, ea.reason, eb.reason,
		   es.reason))
		goto out;
	if (!check(pmu_events_arm(g, n, &br) == PMU_OK, "arming: %s", ea.reason))
		goto out;
	pmu_hw_wrmsr(c->global_ovf, pmu_events_global_mask(g, n));
	pmu_event_write_counter(&ea, (0 - V6_OVF_N) & pmu_width_mask(c->gp_width));
	pmu_event_write_counter(&eb, preset_b);
	check(pmu_hw_wrmsr(acr_cfg_c((unsigned)b), V6_RELOAD_B) == 0 &&
		      pmu_hw_wrmsr(acr_cfg_b((unsigned)b), BIT(a)) == 0,
	      "programming GP %d's CFG_B <- GP %d and CFG_C <- %#lx faulted", b, a, V6_RELOAD_B);
	if (n == 3) {
		pmu_event_write_counter(&es, (0 - V6_OVF_N) & pmu_width_mask(c->gp_width));
		check(pmu_hw_wrmsr(acr_cfg_c((unsigned)s), V6_RELOAD_S) == 0 &&
			      pmu_hw_wrmsr(acr_cfg_b((unsigned)s), BIT(s)) == 0,
		      "programming GP %d to reload itself faulted", s);
	}
	bool irq = irq_save();
	pmu_bracket_loop(&br, PMU_TEST_LOOPS);
	irq_restore(irq);
	uint64_t ra = 0, rb = 0, rs = 0, st = 0;
	pmu_hw_rdmsr(pmu_ctr_msr(c, (unsigned)a), &ra);
	pmu_hw_rdmsr(pmu_ctr_msr(c, (unsigned)b), &rb);
	if (n == 3)
		pmu_hw_rdmsr(pmu_ctr_msr(c, (unsigned)s), &rs);
	pmu_hw_rdmsr(c->global_status, &st);
	pmu_events_disarm(g, n);
	/* Linux commit 5ad732a56be4: a disable leaves CFG_B; clear it. */
	for (unsigned k = 0; k < n; k++) {
		pmu_hw_wrmsr(acr_cfg_b((unsigned)g[k]->hw.idx), 0);
		pmu_hw_wrmsr(acr_cfg_c((unsigned)g[k]->hw.idx), 0);
	}
	pmu_hw_wrmsr(c->global_ovf, pmu_events_global_mask(g, n));

	check((st >> a) & 1,
	      "cause GP %d preset to -%lu: expected its GLOBAL_STATUS bit after the window, read %#lx", a,
	      V6_OVF_N, st);
	check(rb < preset_b, "GP %d (CFG_B = GP %d, CFG_C %#lx): not reloaded, reads %#lx from %#lx", b, a,
	      V6_RELOAD_B, rb, preset_b);
	long d = (long)(rb - V6_RELOAD_B) - (long)ra;
	check(d >= -V6_ACR_SLACK && d <= V6_ACR_SLACK,
	      "GP %d reloaded to %#lx at GP %d's overflow: expected it to count what GP %d counted since (%lu), read %lu past the reload (off by %ld, at most %d)",
	      b, V6_RELOAD_B, a, a, ra, rb - V6_RELOAD_B, d, V6_ACR_SLACK);
	diag("cause GP %d after its overflow: %lu; GP %d past its reload: %lu (difference %ld)", a, ra, b,
	     rb - V6_RELOAD_B, d);
	if (n == 3) {
		check(!((st >> s) & 1), "GP %d reloads itself: expected no GLOBAL_STATUS bit, read %#lx", s,
		      st);
		long ds = (long)(rs - V6_RELOAD_S) - (long)ra;
		check(ds >= -V6_ACR_SLACK && ds <= V6_ACR_SLACK,
		      "GP %d (self-reload to %#lx from -%lu): expected %lu past the reload like GP %d, read %lu (off by %ld)",
		      s, V6_RELOAD_S, V6_OVF_N, ra, a, rs - V6_RELOAD_S, ds);
	} else {
		diag("no third free counter that can both cause and be reloaded: self-reload not checked");
	}
out:
	for (unsigned k = 0; k < n; k++)
		if (g[k]->hw.idx >= 0)
			pmu_event_del(g[k]);
}

/* --- Architectural events 8-12, fixed counters 4-6 --- */

/* The KVM selftests' pmu_counters_test bounds for the newer events (their
 * loop: instructions exactly known, CLFLUSH): top-down backend and
 * frontend bound non-zero, retiring at least one slot per uop retired;
 * bad speculation and LBR inserts unchecked. Here over the memory walk
 * of freshly flushed lines. Retiring counts slots of retired uops, and a
 * branch may macro-fuse with the instruction before it into one uop
 * (pmu/loops.h: DEC+JNZ): so the uops that surely retire are the
 * instructions less the branches. */
static uint64_t uops_at_least(bool mem, uint64_t len)
{
	return pmu_test_workload(PMU_ARCH_INSTRUCTIONS, mem, len) -
	       pmu_test_workload(PMU_ARCH_BRANCHES, mem, len) + PMU_BRACKET_EXTRA_INSNS;
}

static void check_topdown(const struct pmu_event *ev, enum pmu_arch_event e, uint64_t v)
{
	char where[24];
	/* Surely retired: the walk's uops and the bracket's MOVs (pmu/bracket.h). */
	uint64_t uops = uops_at_least(true, PMU_TEST_MEM_LINES);

	pmu_idx_name(pmu_caps(), ev->hw.idx, where, sizeof(where));
	switch (e) {
	case PMU_ARCH_TOPDOWN_BE_BOUND:
	case PMU_ARCH_TOPDOWN_FE_BOUND:
		check(v >= 1, "%s on %s: expected some slots over %lu flushed lines, saw %lu", ev->name,
		      where, PMU_TEST_MEM_LINES, v);
		break;
	case PMU_ARCH_TOPDOWN_RETIRING:
		check(v >= uops,
		      "%s on %s: expected a slot for each of at least %lu uops retired (instructions less fused branches), saw %lu slots",
		      ev->name, where, uops, v);
		break;
	default: break;
	}
	diag("%s on %s: %lu", ev->name, where, v);
}

KTEST("pmu.v6", arch_events_8_12, needs_events_8_12, KTEST_PER_CPU,
      "events 8-12 on each GP counter and fixed 4-6: the KVM selftests' bounds")
{
	const struct pmu_caps *c = pmu_caps();
	uint32_t gp = pmu_test_free_gp(), fx = c->global_ctrl ? pmu_test_free_fixed() : 0;
	/* The memory walk's long windows; each figure the least of them. */
	const struct pmu_test_window walk = { .mem = true };
	struct pmu_test_counts *m = pmu_test_counts_here();

	for (int e = PMU_ARCH_TOPDOWN_BE_BOUND; e < PMU_ARCH_NR; e++) {
		if (!((c->events_avail >> e) & 1)) {
			diag("%s: not available (events %#x)", pmu_arch_events[e].name, c->events_avail);
			continue;
		}
		for (unsigned x = 0; x < PMU_MAX_GP; x++) {
			struct pmu_event ev;
			struct pmu_event *g[] = { &ev };

			if (!((gp >> x) & 1))
				continue;
			pmu_test_event(&ev, (enum pmu_arch_event)e);
			if (!check(pmu_event_add_idx(&ev, (int)x) == PMU_OK, "%s on GP %u: %s", ev.name, x,
				   ev.reason))
				continue;
			if (pmu_test_measure(g, 1, &walk, m))
				check_topdown(&ev, (enum pmu_arch_event)e, m->min[0][1]);
			pmu_event_del(&ev);
		}
	}
	for (unsigned i = 4; i < 7; i++) {
		enum pmu_arch_event e = pmu_arch_event_of_fixed(i);
		struct pmu_event ev;
		struct pmu_event *g[] = { &ev };

		if (!((fx >> i) & 1))
			continue;
		pmu_test_event(&ev, e);
		if (!check(pmu_event_add_idx(&ev, PMU_IDX_FIXED(i)) == PMU_OK, "%s on fixed %u: %s", ev.name,
			   i, ev.reason))
			continue;
		if (pmu_test_measure(g, 1, &walk, m))
			check_topdown(&ev, e, m->min[0][1]);
		pmu_event_del(&ev);
	}
}

/* --- PERF_METRICS --- */

/* TOPDOWN.SLOTS on FIXED_CTR3, the counter PERF_METRICS divides (SKIP
 * when it is not free); false when it could not be placed. */
static bool slots_on_fixed3(struct pmu_event *slots)
{
	if (!(pmu_test_free_fixed() & BIT(3)))
		ktest_skip("IA32_FIXED_CTR3 is not free (mask %#x)", pmu_test_free_fixed());
	pmu_test_event(slots, PMU_ARCH_TOPDOWN_SLOTS);
	return check(pmu_event_add_idx(slots, PMU_IDX_FIXED(3)) == PMU_OK, "slots on fixed 3: %s",
		     slots->reason);
}

/* MSR 0x329 holds the level-1 (bytes 0-3) and level-2 (4-7) top-down
 * fractions of FIXED_CTR3's slots, each scaled to 0xFF; software clears
 * FIXED_CTR3, then PERF_METRICS, before it counts, and GLOBAL_CTRL bit 48
 * lets the metrics count; RDPMC with ECX = 1 << 29 reads them (Linux
 * commit 59a854e2f3b9). So: with bit 48 clear the slots count and the
 * metrics stay 0; RDMSR = RDPMC(1 << 29), the four level-1
 * bytes add up to 0xFF (each rounded: within 4), and retiring's share of
 * the slots is at least the uops surely retired (uops_at_least). */
KTEST("pmu.v6", perf_metrics, needs_perf_metrics, KTEST_PER_CPU,
      "PERF_METRICS: RDMSR = RDPMC(1<<29), level-1 bytes sum to 0xFF")
{
	const struct pmu_caps *c = pmu_caps();
	struct pmu_event slots;
	struct pmu_event *g[] = { &slots };
	struct pmu_bracket_regs br;
	uint64_t m = 0, mr = 0, sl = 0;
	int vec;

	if (!slots_on_fixed3(&slots))
		return;
	if (check(pmu_events_arm(g, 1, &br) == PMU_OK, "arming: %s", slots.reason)) {
		/* FIXED_CTR3 was zeroed by the arm; then PERF_METRICS. */
		vec = pmu_hw_wrmsr(MSR_PERF_METRICS, 0);
		check(vec == 0, "PERF_METRICS <- 0 raised vector %d", vec);
		/* First a window with bit 48 clear: the slots count, the
		 * metrics do not (bit 48 is their enable). */
		bool irq = irq_save();
		pmu_bracket_loop(&br, PMU_TEST_LOOPS);
		irq_restore(irq);
		pmu_hw_rdmsr(pmu_fixed_msr(c, 3), &sl);
		pmu_hw_rdmsr(MSR_PERF_METRICS, &m);
		check(sl > 0 && m == 0,
		      "GLOBAL_CTRL bit 48 clear: FIXED_CTR3 counted %lu slots, PERF_METRICS %#lx (expected slots, metrics 0)",
		      sl, m);
		pmu_hw_wrmsr(pmu_fixed_msr(c, 3), 0);
		pmu_hw_wrmsr(MSR_PERF_METRICS, 0);
		br.on |= BIT(PERF_GLOBAL_CTRL_PERF_METRICS_BIT);
		irq = irq_save();
		pmu_bracket_loop(&br, PMU_TEST_LOOPS);
		irq_restore(irq);
		pmu_hw_rdmsr(pmu_fixed_msr(c, 3), &sl);
		vec = pmu_hw_rdmsr(MSR_PERF_METRICS, &m);
		check(vec == 0, "rdmsr PERF_METRICS raised vector %d", vec);
		vec = pmu_hw_rdpmc(PERF_METRICS_RDPMC_INDEX, &mr);
		check(vec == 0 && mr == m,
		      "RDPMC(%#x) read %#lx (vector %d), RDMSR PERF_METRICS %#lx: expected equal",
		      PERF_METRICS_RDPMC_INDEX, mr, vec, m);
		pmu_events_disarm(g, 1);
		unsigned b[4], sum = 0;
		for (unsigned k = 0; k < 4; k++)
			sum += b[k] = (unsigned)(m >> (8 * k)) & 0xff;
		check(sum >= 0xff - 4 && sum <= 0xff + 4,
		      "PERF_METRICS %#lx: retiring %#x + bad speculation %#x + frontend %#x + backend %#x = %#x, expected 0xff (within 4)",
		      m, b[0], b[1], b[2], b[3], sum);
		uint64_t uops = uops_at_least(false, PMU_TEST_LOOPS);
		check(sl * (b[0] + 1) / 0xff >= uops,
		      "retiring %#x of %lu slots (at most %lu slots) is less than the %lu uops surely retired",
		      b[0], sl, sl * (b[0] + 1) / 0xff, uops);
		diag("slots %lu, PERF_METRICS %#lx: retiring %u, bad speculation %u, frontend %u, backend %u (/255)",
		     sl, m, b[0], b[1], b[2], b[3]);
		vec = pmu_hw_wrmsr(MSR_PERF_METRICS, 0);
		check(vec == 0 && pmu_hw_rdmsr(MSR_PERF_METRICS, &m) == 0 && m == 0,
		      "PERF_METRICS <- 0: vector %d, reads %#lx", vec, m);
	}
	pmu_event_del(&slots);
}

/* n returns that the return stack mispredicts, between br->on and
 * br->off: each iteration CALLs a stub that rewrites its return address
 * to the instruction after the UD2 that follows the CALL, so the RET goes
 * elsewhere than the return stack says (the return-stack refill trick of
 * retpolines, Linux arch/x86/include/asm/nospec-branch.h). The UD2 only
 * ever runs on the wrong path. */
static void mispredicted_returns(const struct pmu_bracket_regs *br, uint64_t n)
{
	register uint64_t off_hi __asm__("r8") = (uint32_t)(br->off >> 32);
	uint32_t lo = (uint32_t)br->on, hi = (uint32_t)(br->on >> 32), cx = br->msr;

	__asm__ volatile("wrmsr\n"
			 "1:\n\t"
			 "call 3f\n\t"
			 "ud2\n"
			 "2:\n\t"
			 "dec %[n]\n\t"
			 "jnz 1b\n\t"
			 "jmp 4f\n"
			 "3:\n\t"
			 "lea 2b(%%rip), %%rax\n\t"
			 "mov %%rax, (%%rsp)\n\t"
			 "ret\n"
			 "4:\n\t"
			 "mov %%esi, %%eax\n\t"
			 "mov %%r8d, %%edx\n\t"
			 "wrmsr\n\t"
			 : "+a"(lo), "+d"(hi), "+c"(cx), [n] "+r"(n)
			 : "S"((uint32_t)br->off), "r"(off_hi)
			 : "cc", "memory");
}

static const char *needs_metrics_misses(void)
{
	const char *why = needs_perf_metrics();

	if (why)
		return why;
	if ((why = pmu_test_gp_event_missing(PMU_ARCH_BRANCH_MISSES)))
		return why;
	if (!(pmu_test_free_fixed() & BIT(3)))
		return ktest_reason("IA32_FIXED_CTR3 is not free (mask %#x)", pmu_test_free_fixed());
	if (pmu_test_first_absent(~pmu_test_free_gp(), PMU_MAX_GP) >= PMU_MAX_GP)
		return ktest_reason("no free GP counter (mask %#x)", pmu_test_free_gp());
	return NULL;
}

#define MISPREDICT_LOOPS 20000u

/* A mispredicted branch wastes issue slots until the machine recovers
 * (the top-down method's Bad Speculation, SDM vol. 3B, "Performance
 * Metrics"; Yasin, "A Top-Down Method for Performance Analysis and
 * Counters Architecture", ISPASS 2014): at least one slot each, however
 * wide the core. So over a window of mispredicted returns, PERF_METRICS'
 * bad-speculation byte times the slots of FIXED_CTR3 covers at least the
 * mispredicted branches retired (architectural event 6), counted on a GP
 * counter over the same workload in a window of its own (a counter of
 * branch misses beside PERF_METRICS would count them whether or not the
 * metrics do); half of them, for the two windows' difference, and one
 * step of the byte's rounding. Where the core fills the level-2 bytes,
 * every part stays within its whole over this window too; branch
 * mispredicts (byte 5) is reported. */
KTEST("pmu.v6", perf_metrics_mispredicts, needs_metrics_misses, KTEST_PER_CPU,
      "PERF_METRICS over mispredicted returns: bad speculation a slot each")
{
	const struct pmu_caps *c = pmu_caps();
	unsigned x = pmu_test_first_absent(~pmu_test_free_gp(), PMU_MAX_GP);
	struct pmu_event slots, miss;
	struct pmu_event *gs[] = { &slots }, *gm[] = { &miss };
	struct pmu_bracket_regs br;
	uint64_t m = 0, sl = 0, mispredicts = 0;
	char why[200];
	bool irq, measured = false;

	pmu_test_event(&slots, PMU_ARCH_TOPDOWN_SLOTS);
	if (!check(pmu_event_add_idx(&slots, PMU_IDX_FIXED(3)) == PMU_OK, "slots on fixed 3: %s",
		   slots.reason))
		return;
	if (check(pmu_events_arm(gs, 1, &br) == PMU_OK, "arming: %s", slots.reason)) {
		int vec = pmu_hw_wrmsr(MSR_PERF_METRICS, 0);
		br.on |= BIT(PERF_GLOBAL_CTRL_PERF_METRICS_BIT);
		irq = irq_save();
		mispredicted_returns(&br, MISPREDICT_LOOPS);
		irq_restore(irq);
		pmu_hw_rdmsr(pmu_fixed_msr(c, 3), &sl);
		vec |= pmu_hw_rdmsr(MSR_PERF_METRICS, &m);
		pmu_events_disarm(gs, 1);
		pmu_hw_wrmsr(MSR_PERF_METRICS, 0);
		measured = check(vec == 0 && sl > 0,
				 "PERF_METRICS cleared, then read: fault %d; FIXED_CTR3 counted %lu slots",
				 vec, sl);
	}
	pmu_event_del(&slots);
	if (!measured)
		return;
	pmu_test_event(&miss, PMU_ARCH_BRANCH_MISSES);
	if (!check(pmu_event_add_idx(&miss, (int)x) == PMU_OK, "branch misses on GP %u: %s", x, miss.reason))
		return;
	if (check(pmu_events_arm(gm, 1, &br) == PMU_OK, "arming: %s", miss.reason)) {
		irq = irq_save();
		mispredicted_returns(&br, MISPREDICT_LOOPS);
		irq_restore(irq);
		pmu_events_disarm(gm, 1);
		mispredicts = pmu_event_count(&miss);
	}
	pmu_event_del(&miss);

	unsigned bad = intel_td_byte(m, INTEL_TD_BAD_SPEC);
	diag("%u mispredicted returns: %lu branch misses; %lu slots, PERF_METRICS %#lx (bad speculation %u/255, %lu slots)",
	     MISPREDICT_LOOPS, mispredicts, sl, m, bad, sl * bad / 0xff);
	check((bad + 1) * sl >= 0xff * mispredicts / 2,
	      "bad speculation %u/255 of %lu slots (at most %lu slots) for %lu mispredicted branches: expected at least half a slot each",
	      bad, sl, (bad + 1) * sl / 0xff, mispredicts);
	if (intel_td_level2_missing(c))
		return;
	check(intel_td_check_level2(m, why, sizeof(why)) == 0, "%s", why);
	diag("branch mispredicts (level 2) %u/255", intel_td_byte(m, INTEL_TD_BR_MISPREDICT));
}

/* A walk that misses the L1 instruction cache at every step: FE_WALK_STEPS
 * JMPs 4 KiB apart, so each sits at the same cache-set index (address
 * bits 11:6) and in a page of its own; 32 exceed the ways of every L1i
 * (8 to 16), so each fetch misses; a stride of a page defeats next-line
 * prefetch. Called n times; each call is FE_WALK_STEPS JMPs and a RET. */
#define FE_WALK_STEPS 32
void fe_walk(void);
__asm__(".pushsection .text.fe_walk, \"ax\"\n"
	".balign 4096\n"
	".globl fe_walk\n"
	"fe_walk:\n"
	".rept 32\n\t"
	"jmp 1f\n\t"
	".balign 4096\n"
	"1:\n"
	".endr\n\t"
	"ret\n"
	".popsection\n");

static void fe_walk_n(const struct pmu_bracket_regs *br, uint64_t n)
{
	uint32_t lo = (uint32_t)br->on, hi = (uint32_t)(br->on >> 32);

	__asm__ volatile(
		"wrmsr\n"
		"1:\n\t"
		"call fe_walk\n\t"
		"dec %[n]\n\t"
		"jnz 1b\n\t"
		"mov %k[off_lo], %%eax\n\t"
		"mov %k[off_hi], %%edx\n\t"
		"wrmsr\n\t"
		: [n] "+&r"(n), "+&a"(lo), "+&d"(hi)
		: "c"(br->msr), [off_lo] "r"((uint32_t)br->off), [off_hi] "r"((uint32_t)(br->off >> 32))
		: "cc", "memory");
}

#define FE_WALK_LOOPS 2000u

/* PERF_METRICS' frontend-bound byte (bits 23:16) is the share of
 * FIXED_CTR3's slots the frontend left empty (SDM vol. 3B, "Performance
 * Metrics"; the top-down method's Frontend Bound, Yasin, ISPASS 2014).
 * An instruction fetch that misses the L1i delivers nothing until the
 * line arrives (the method's Fetch Latency, under Frontend Bound): over
 * FE_WALK_LOOPS walks whose every JMP misses, the frontend-bound byte is
 * not 0. The four level-1 bytes still sum to 0xFF (within rounding). */
KTEST("pmu.v6", perf_metrics_frontend, needs_perf_metrics, KTEST_PER_CPU,
      "PERF_METRICS over a walk that misses the L1i: frontend bound above 0")
{
	const struct pmu_caps *c = pmu_caps();
	struct pmu_event slots;
	struct pmu_event *g[] = { &slots };
	struct pmu_bracket_regs br;
	uint64_t m = 0, sl = 0;

	if (!slots_on_fixed3(&slots))
		return;
	if (check(pmu_events_arm(g, 1, &br) == PMU_OK, "arming: %s", slots.reason)) {
		int vec = pmu_hw_wrmsr(MSR_PERF_METRICS, 0);
		br.on |= BIT(PERF_GLOBAL_CTRL_PERF_METRICS_BIT);
		bool irq = irq_save();
		fe_walk_n(&br, FE_WALK_LOOPS);
		irq_restore(irq);
		pmu_hw_rdmsr(pmu_fixed_msr(c, 3), &sl);
		vec |= pmu_hw_rdmsr(MSR_PERF_METRICS, &m);
		pmu_events_disarm(g, 1);
		pmu_hw_wrmsr(MSR_PERF_METRICS, 0);
		if (check(vec == 0 && sl > 0,
			  "PERF_METRICS cleared, then read: fault %d; FIXED_CTR3 counted %lu slots", vec,
			  sl)) {
			unsigned b[4], sum = 0;
			for (unsigned k = 0; k < 4; k++)
				sum += b[k] = intel_td_byte(m, (enum intel_td)k);
			diag("%u walks of %u L1i-missing JMPs: %lu slots, PERF_METRICS %#lx: retiring %u, bad speculation %u, frontend %u, backend %u (/255)",
			     FE_WALK_LOOPS, FE_WALK_STEPS, sl, m, b[0], b[1], b[2], b[3]);
			check(b[INTEL_TD_FE_BOUND] > 0,
			      "frontend bound 0/255 of %lu slots over %u fetches that miss the L1i: expected above 0",
			      sl, FE_WALK_LOOPS * FE_WALK_STEPS);
			check(sum >= 0xff - 4 && sum <= 0xff + 4,
			      "level-1 bytes sum to %#x, expected 0xff (within 4)", sum);
		}
	}
	pmu_event_del(&slots);
}

/* The fixed counters CPUID.23H.2 lets a reload reach, free here. */
static uint32_t acr_fixed_free(void)
{
	const struct pmu_caps *c = pmu_caps();

	return (uint32_t)(intel_caps(c)->acr_reload >> PMU_IDX_FIXED_BASE) & c->fixed_mask &
	       pmu_test_free_fixed();
}

static const char *needs_acr_fixed(void)
{
	const char *why = needs_acr();
	const struct pmu_caps *c = pmu_caps();

	if (why)
		return why;
	if (!acr_fixed_free())
		return ktest_reason(
			"no free fixed counter can be reloaded (CPUID.23H.2 reload mask %#lx, fixed %#x, free %#x)",
			intel_caps(c)->acr_reload, c->fixed_mask, pmu_test_free_fixed());
	if (pick_gp(intel_caps(c)->acr_cause, 0) < 0)
		return ktest_reason("no free GP counter can cause a reload (cause mask %#lx, free %#x)",
				    intel_caps(c)->acr_cause, pmu_test_free_gp());
	return NULL;
}

/* As pmu.v6.auto_counter_reload for a GP counter, each fixed counter that
 * CPUID.23H.2's reload bitmap names (bits 32 + i; Skymont's fixed 0-1),
 * reloaded by a GP cause: IA32_PMC_FXi_CFG_B = the cause, CFG_C the
 * reload value; the cause, preset to -1000 instructions, overflows early
 * in the window. Then the fixed counter, preset far above, reads at least
 * its reload value and below its preset; fixed counter 0 (instructions,
 * as the cause) reads what the cause counted since (within the events of
 * that cycle). */
KTEST("pmu.v6", auto_counter_reload_fixed, needs_acr_fixed, KTEST_PER_CPU,
      "auto counter reload of a fixed counter: a GP cause's overflow reloads it")
{
	const struct pmu_caps *c = pmu_caps();
	uint32_t fixed = acr_fixed_free();
	int a = pick_gp(intel_caps(c)->acr_cause, 0);

	for (unsigned i = 0; i < PMU_MAX_FIXED; i++) {
		struct pmu_event ea, ef;
		struct pmu_event *g[2] = { &ea, &ef };
		struct pmu_bracket_regs br;
		int f = PMU_IDX_FIXED(i);
		uint64_t preset = 0x700000000000ull & pmu_width_mask(c->fixed_width), ra = 0, rf = 0, st = 0;

		if (!((fixed >> i) & 1))
			continue;
		pmu_test_event(&ea, PMU_ARCH_INSTRUCTIONS);
		pmu_test_event(&ef, pmu_arch_event_of_fixed(i));
		if (!check(pmu_event_add_idx(&ea, a) == PMU_OK && pmu_event_add_idx(&ef, f) == PMU_OK,
			   "instructions on GP %d, %s on fixed %u: %s %s", a, ef.name, i, ea.reason,
			   ef.reason)) {
			if (ea.hw.idx >= 0)
				pmu_event_del(&ea);
			if (ef.hw.idx >= 0)
				pmu_event_del(&ef);
			continue;
		}
		if (check(pmu_events_arm(g, 2, &br) == PMU_OK, "arming: %s", ea.reason)) {
			pmu_hw_wrmsr(c->global_ovf, pmu_events_global_mask(g, 2));
			pmu_event_write_counter(&ea, (0 - V6_OVF_N) & pmu_width_mask(c->gp_width));
			pmu_event_write_counter(&ef, preset);
			check(pmu_hw_wrmsr(acr_cfg_c((unsigned)f), V6_RELOAD_B) == 0 &&
				      pmu_hw_wrmsr(acr_cfg_b((unsigned)f), BIT(a)) == 0,
			      "programming fixed %u's CFG_B <- GP %d and CFG_C <- %#lx faulted", i, a,
			      V6_RELOAD_B);
			bool irq = irq_save();
			pmu_bracket_loop(&br, PMU_TEST_LOOPS);
			irq_restore(irq);
			pmu_hw_rdmsr(pmu_ctr_msr(c, (unsigned)a), &ra);
			pmu_hw_rdmsr(pmu_fixed_msr(c, i), &rf);
			pmu_hw_rdmsr(c->global_status, &st);
			pmu_events_disarm(g, 2);
			pmu_hw_wrmsr(acr_cfg_b((unsigned)f), 0);
			pmu_hw_wrmsr(acr_cfg_c((unsigned)f), 0);
			pmu_hw_wrmsr(c->global_ovf, pmu_events_global_mask(g, 2));
			check((st >> a) & 1,
			      "cause GP %d preset to -%lu: expected its GLOBAL_STATUS bit after the window, read %#lx",
			      a, V6_OVF_N, st);
			check(rf >= V6_RELOAD_B && rf < preset,
			      "fixed %u (CFG_B = GP %d, CFG_C %#lx): expected a reload at GP %d's overflow, reads %#lx from %#lx",
			      i, a, V6_RELOAD_B, a, rf, preset);
			if (ef.attr.arch == PMU_ARCH_INSTRUCTIONS && rf < preset) {
				long d = (long)(rf - V6_RELOAD_B) - (long)ra;
				check(d >= -V6_ACR_SLACK && d <= V6_ACR_SLACK,
				      "fixed %u reloaded to %#lx at GP %d's overflow: expected it to count what GP %d counted since (%lu), read %lu past the reload (off by %ld, at most %d)",
				      i, V6_RELOAD_B, a, a, ra, rf - V6_RELOAD_B, d, V6_ACR_SLACK);
			}
			diag("fixed %u (%s) past its reload: %lu; cause GP %d after its overflow: %lu", i,
			     ef.name, rf - V6_RELOAD_B, a, ra);
		}
		pmu_event_del(&ef);
		pmu_event_del(&ea);
	}
}
