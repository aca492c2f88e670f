/* A counter reached through another vendor-defined address than the one
 * the driver uses: AMD's legacy PerfEvtSel0-3/PerfCtr0-3 (C001_0000-7) on
 * a part with PerfCtrExtCore, where the driver programs the extended
 * addresses (C001_0200-B). The APM (vol. 2, 13.2.1, "Performance Counter
 * MSRs") makes the legacy ones aliases of core counters 0-3, so a write
 * through one address reads back through the other, and a counter
 * programmed through the legacy select counts as through the extended. */
#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "pmu/amd/caps.h"
#include "pmu/bracket.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/ktest.h"
#include "tests/pmu/pmu_common.h"

#define LEGACY_COUNTERS 4
#define ALIAS_TRIALS 3
/* Retired instructions, unit mask 0 (APM vol. 2, 13.2; pmu/amd.c). */
#define AMD_EVENT_RETIRED_INSNS 0xc0

static const char *needs_ext_core(void)
{
	const char *why = pmu_needs_counting();

	if (why)
		return why;
	if (pmu_caps()->vendor != PMU_VENDOR_AMD)
		return ktest_reason("C001_0000-7 are AMD's legacy counter MSRs (vendor %s)",
				    pmu_caps()->vendor_id);
	if (!amd_caps(pmu_caps())->ext_core)
		return ktest_reason(
			"no PerfCtrExtCore (CPUID 0x80000001:ECX[23]=0): the legacy MSRs are the only ones");
	return NULL;
}

/* Instructions counted by GP x in the counted loop, programmed through
 * select `sel` and read through counter `ctr`; the least of ALIAS_TRIALS
 * windows (an asynchronous VM exit only adds). */
static uint64_t count_through(uint32_t sel, uint32_t ctr)
{
	uint64_t cfg = AMD_EVENT_RETIRED_INSNS | BIT(PERFEVTSEL_USR_BIT) | BIT(PERFEVTSEL_OS_BIT);
	struct pmu_bracket_regs br = { .msr = sel, .on = cfg | BIT(PERFEVTSEL_EN_BIT), .off = cfg };
	uint64_t least = ~0ull;

	for (unsigned t = 0; t < ALIAS_TRIALS; t++) {
		uint64_t v;

		pmu_hw_wrmsr(ctr, 0);
		pmu_hw_wrmsr(sel, cfg);
		bool irq = irq_save();
		pmu_bracket_loop(&br, PMU_TEST_LOOPS);
		irq_restore(irq);
		pmu_hw_rdmsr(ctr, &v);
		if (v < least)
			least = v;
	}
	pmu_hw_wrmsr(sel, 0);
	return least;
}

/* Every free counter of 0-3: a select written through C001_0000+x reads
 * back through C001_0200+2x, a count written through C001_0201+2x reads
 * back through C001_0004+x (all 48 bits), and the counted loop counts the
 * same through either pair, within the bracket's bounds on bare metal. */
KTEST("pmu.aliases", amd_legacy_msrs, needs_ext_core, KTEST_PER_CPU,
      "AMD C001_0000-7 alias counters 0-3 and count as the extended MSRs do")
{
	struct pmu_cpu *pc = pmu_cpu_ensure();
	const struct pmu_caps *c = pmu_cpu_caps(pc);
	uint32_t free = pmu_test_free_gp();
	uint64_t lo = pmu_test_workload(PMU_ARCH_INSTRUCTIONS, false, PMU_TEST_LOOPS) +
		      PMU_BRACKET_EXTRA_INSNS;
	uint64_t hi = lo + PMU_BRACKET_WRMSRS;
	uint64_t gctl = 0;
	unsigned tried = 0;

	if (c->global_ctrl)
		pmu_hw_rdmsr(c->global_ctrl, &gctl);
	for (unsigned x = 0; x < LEGACY_COUNTERS && x < c->num_gp; x++) {
		uint32_t lsel = MSR_K7_EVNTSEL0 + x, lctr = MSR_K7_PERFCTR0 + x;
		uint32_t esel = MSR_F15H_PERF_CTL0 + 2 * x, ectr = MSR_F15H_PERF_CTR0 + 2 * x;
		uint64_t sel = AMD_EVENT_RETIRED_INSNS | BIT(PERFEVTSEL_USR_BIT) | (0x5aull << 24);
		uint64_t pattern = 0x0000a5a5a5a5a5a5ull & ~(~0ull << c->gp_width), v = 0;

		if (!(free & BIT(x)))
			continue;
		tried++;
		pmu_hw_wrmsr(lsel, sel);
		pmu_hw_rdmsr(esel, &v);
		check(v == sel, "PerfEvtSel%u: wrote %#lx through %#x, read %#lx through %#x", x, sel, lsel,
		      v, esel);
		pmu_hw_wrmsr(esel, 0);
		pmu_hw_rdmsr(lsel, &v);
		check(v == 0, "PerfEvtSel%u: cleared through %#x, read %#lx through %#x", x, esel, v, lsel);
		pmu_hw_wrmsr(ectr, pattern);
		pmu_hw_rdmsr(lctr, &v);
		check(v == pattern, "PerfCtr%u: wrote %#lx through %#x, read %#lx through %#x", x, pattern,
		      ectr, v, lctr);
		pmu_hw_wrmsr(lctr, 0);

		/* PerfMonV2: the counter counts only with its global enable. */
		if (c->global_ctrl)
			pmu_hw_wrmsr(c->global_ctrl, gctl | BIT(x));
		uint64_t legacy = count_through(lsel, lctr);
		uint64_t ext = count_through(esel, ectr);
		/* Under a hypervisor every window of one path may have held an
		 * asynchronous VM exit (it only adds: AMD counts the VMRUN
		 * back): both paths again while they differ, at most
		 * PMU_TEST_EXIT_RERUNS rounds (pmu_test_measure_exact's rule). */
		for (unsigned round = 1; c->hypervisor && legacy != ext && round <= PMU_TEST_EXIT_RERUNS;
		     round++) {
			diag("GP %u: %lu and %lu: again (round %u of at most %u; a VM exit inside every window of one path, under a hypervisor)",
			     x, legacy, ext, round, PMU_TEST_EXIT_RERUNS);
			uint64_t l2 = count_through(lsel, lctr), e2 = count_through(esel, ectr);
			legacy = l2 < legacy ? l2 : legacy;
			ext = e2 < ext ? e2 : ext;
		}
		if (c->global_ctrl)
			pmu_hw_wrmsr(c->global_ctrl, gctl);
		diag("GP %u: %lu instructions through C001_00xx, %lu through C001_02xx (loop %lu..%lu)", x,
		     legacy, ext, lo, hi);
		check(legacy == ext,
		      "GP %u: the counted loop gave %lu instructions through %#x/%#x, %lu through %#x/%#x: expected equal",
		      x, legacy, lsel, lctr, ext, esel, ectr);
		if (!c->hypervisor)
			check(legacy >= lo && legacy <= hi,
			      "GP %u through %#x/%#x: expected %lu..%lu instructions, saw %lu", x, lsel, lctr,
			      lo, hi, legacy);
		else
			check(legacy >= lo,
			      "GP %u through %#x/%#x: expected at least %lu instructions, saw %lu", x, lsel,
			      lctr, lo, legacy);
	}
	if (!tried)
		ktest_skip("no free GP counter among 0-3 (free mask %#x)", free);
}
