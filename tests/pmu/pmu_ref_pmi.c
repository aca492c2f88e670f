/* A reference-cycles overflow raises its PMI while the CPU runs code that
 * touches no PMU register. The processor signals the PMI when a counter
 * with its INT (GP) or PMI (fixed) bit set overflows (SDM vol. 3B,
 * "Performance Monitoring Interrupt"/"Generating an Interrupt on
 * Overflow"; vol. 3A, the LVT performance monitoring counters register),
 * not when software next reads or writes the PMU. Reference cycles tick
 * with time rather than with instructions: a VMM or an emulator that
 * counts them by time has to raise the PMI by time too. */
#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "arch/x86/timer.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/ktest.h"
#include "tests/pmu/pmu_common.h"

/* Ticks before the overflow: TSC ticks on FIXED_CTR2 (about 30 us at 3
 * GHz), bus or crystal clock ticks on a GP counter (at most a few hundred
 * TSC ticks each on the parts known). */
#define REF_PMI_TICKS_FIXED ((uint64_t)100000)
#define REF_PMI_TICKS_GP ((uint64_t)1000)
/* How long to wait: far beyond either, so that only a PMI that never
 * comes while the code runs (or a host that did not run this vCPU for
 * that long) fails. */
#define REF_PMI_WAIT_US ((uint64_t)10 * 1000 * 1000)

/* FIXED_CTR2 when it is free, else a free GP counter for 3CH/01H; -1. */
static int ref_counter(void)
{
	uint32_t fx = pmu_test_free_fixed(), gp = pmu_test_free_gp();

	for (unsigned i = 0; i < PMU_MAX_FIXED; i++)
		if (((fx >> i) & 1) && pmu_arch_event_of_fixed(i) == PMU_ARCH_REF_CYCLES)
			return PMU_IDX_FIXED(i);
	if (pmu_test_gp_event_missing(PMU_ARCH_REF_CYCLES))
		return -1;
	for (unsigned x = 0; x < PMU_MAX_GP; x++)
		if ((gp >> x) & 1)
			return (int)x;
	return -1;
}

static uint32_t ovf_of(unsigned cpu, int idx)
{
	struct pmu_pmi_stats s;

	pmu_pmi_get_stats(cpu, &s);
	return s.ovf[idx];
}

KTEST("pmu.overflow", ref_cycles_pmi_while_running, pmu_needs_pmi, KTEST_PER_CPU,
      "a reference-cycles overflow raises its PMI while no PMU register is touched")
{
	unsigned cpu = this_cpu()->cpu;
	int idx = ref_counter();
	struct pmu_event a;
	struct pmu_event *g[] = { &a };
	struct pmu_bracket_regs br;
	char name[24];

	if (idx < 0)
		ktest_skip(
			"no free counter of reference cycles (FIXED_CTR2, or 3CH/01H on a free GP counter: %s)",
			pmu_test_gp_event_missing(PMU_ARCH_REF_CYCLES) ?: "none free");
	uint64_t n = PMU_IDX_IS_FIXED(idx) ? REF_PMI_TICKS_FIXED : REF_PMI_TICKS_GP;
	pmu_idx_name(pmu_caps(), idx, name, sizeof(name));
	pmu_test_event(&a, PMU_ARCH_REF_CYCLES);
	a.attr.intr = true;
	if (!check(pmu_event_add_idx(&a, idx) == PMU_OK, "%s on %s: %s", a.name, name, a.reason))
		return;
	if (!check(pmu_events_arm(g, 1, &br) == PMU_OK, "arming %s: %s", name, a.reason)) {
		pmu_event_del(&a);
		return;
	}
	if (!check(pmu_event_write_counter(&a, (0 - n) & pmu_width_mask(a.hw.width)) == PMU_OK,
		   "presetting %s to -%lu: %s", name, n, a.reason)) {
		pmu_events_disarm(g, 1);
		pmu_event_del(&a);
		return;
	}
	uint32_t ovf0 = ovf_of(cpu, idx);
	bool was_on = irq_save();
	irq_enable();
	uint64_t t0 = rdtsc(), end = t0 + us_to_tsc(REF_PMI_WAIT_US), t;
	wrmsr(br.msr, br.on);
	/* Memory and the TSC only until the handler counts it (no PAUSE:
	 * QEMU's TCG leaves its execution loop at each one, and the
	 * emulated reference clock stops outside it). */
	do {
		__asm__ volatile("" ::: "memory");
		t = rdtsc();
	} while (ovf_of(cpu, idx) == ovf0 && t < end);
	uint32_t running = ovf_of(cpu, idx) - ovf0;
	wrmsr(br.msr, br.off);
	/* A PMI the switch-off let through: taken at once, interrupts on. */
	for (unsigned i = 0; i < 1000; i++)
		cpu_relax();
	uint32_t after = ovf_of(cpu, idx) - ovf0 - running;
	irq_restore(was_on);
	pmu_events_disarm(g, 1);
	pmu_event_del(&a);

	if (running)
		diag("%s: its PMI came %lu TSC ticks after it started %lu ticks short of the overflow", name,
		     t - t0, n);
	check(running >= 1,
	      "%s: started %lu ticks short of its overflow, no PMI in %lu TSC ticks (%lu us) of code that touches no PMU register; %s",
	      name, n, t - t0, REF_PMI_WAIT_US,
	      after ? "it came when the counter was switched off: the overflow was noticed only at the next PMU access"
		    : "none at the switch-off either (or the host did not run this CPU for that long)");
}
