/* The source's demo as a check: from the BSP, program instructions and
 * cycles on another CPU with two GP counters and the two matching fixed
 * counters at once, measure there, and require the pairs to agree. */
#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "arch/x86/smp.h"
#include "lib/printf.h"
#include "pmu/bracket.h"
#include "pmu/pmu.h"
#include "tests/ktest.h"
#include "tests/pmu_common.h"

/* CPU 3 as in the source, or the last CPU when there are fewer. */
static unsigned cross_target(void)
{
	unsigned n = smp_num_cpus();
	return n > 3 ? 3 : n - 1;
}

static const char *needs_cross(void)
{
	unsigned t = cross_target();
	struct pmu_cpu *pc = pmu_cpu_of(t);

	if (!pc)
		return "target CPU index beyond PMU_MAX_CPUS";
	pmu_test_init_cpu(t);
	if (!pc->counting)
		return ktest_reason("cpu %u: %s", t, pc->reason);
	if (!pc->caps.fixed_mask && pc->caps.no_fixed_why)
		return ktest_reason("cpu %u: %s", t, pc->caps.no_fixed_why);
	if (!pmu_has_fixed(&pc->caps, 0) || !pmu_has_fixed(&pc->caps, 1) || !pc->caps.global_ctrl)
		return ktest_reason("cpu %u has no FIXED_CTR0/FIXED_CTR1 to cross-check against", t);
	return NULL;
}

struct cross {
	unsigned cpu, apic_id;
	int err;
	char why[PMU_REASON_LEN];
	uint64_t gi, fi, gc, fc;
};

/* Runs on the target CPU: no check() here, the results travel back. */
static void cross_measure(void *arg)
{
	struct cross *r = arg;
	struct pmu_event gi, fi, gc, fc;
	struct pmu_bracket_regs br;

	r->cpu = this_cpu()->cpu;
	r->apic_id = this_cpu()->apic_id;
	pmu_test_event(&gi, PMU_ARCH_INSTRUCTIONS);
	pmu_test_event(&fi, PMU_ARCH_INSTRUCTIONS);
	pmu_test_event(&gc, PMU_ARCH_CYCLES);
	pmu_test_event(&fc, PMU_ARCH_CYCLES);
	struct pmu_event *g[] = { &fi, &fc, &gi, &gc }; /* the first two take the fixed counters */
	if ((r->err = pmu_events_add(g, 4)) != PMU_OK) {
		ksnprintf(r->why, sizeof(r->why), "%s", fi.reason);
		return;
	}
	if (!PMU_IDX_IS_FIXED(fi.hw.idx) || !PMU_IDX_IS_FIXED(fc.hw.idx) || PMU_IDX_IS_FIXED(gi.hw.idx) ||
	    PMU_IDX_IS_FIXED(gc.hw.idx)) {
		r->err = PMU_E_BUSY;
		ksnprintf(r->why, sizeof(r->why), "placement: instructions on %d/%d, cycles on %d/%d",
			  fi.hw.idx, gi.hw.idx, fc.hw.idx, gc.hw.idx);
	} else if ((r->err = pmu_events_arm(g, 4, &br)) != PMU_OK) {
		ksnprintf(r->why, sizeof(r->why), "%s", fi.reason);
	} else {
		bool irq = irq_save();
		pmu_bracket_loop(&br, PMU_TEST_LOOPS);
		irq_restore(irq);
		pmu_events_disarm(g, 4);
		r->gi = pmu_event_count(&gi);
		r->fi = pmu_event_count(&fi);
		r->gc = pmu_event_count(&gc);
		r->fc = pmu_event_count(&fc);
	}
	pmu_events_del(g, 4);
}

KTEST("pmu.cross", instructions_cycles_on_other_cpu, needs_cross, 0,
      "on another CPU, GP and fixed instructions equal and exact")
{
	struct cross r = { .cpu = ~0u };
	unsigned t = cross_target();

	on_cpu(t, cross_measure, &r);
	check(r.cpu == t, "expected the measurement on cpu %u, it ran on %u", t, r.cpu);
	if (!check(r.err == PMU_OK, "cpu %u (APIC ID %u): %s", t, r.apic_id, r.why))
		return;
	uint64_t want = pmu_test_expected_insns(false), d = r.gc > r.fc ? r.gc - r.fc : r.fc - r.gc;
	diag("cpu %u (APIC ID %u), from cpu %u: instructions GP %lu / fixed %lu, cycles GP %lu / fixed %lu",
	     t, r.apic_id, this_cpu()->cpu, r.gi, r.fi, r.gc, r.fc);
	check(r.gi == r.fi && r.gi == want,
	      "instructions on cpu %u: expected GP = fixed = %lu, saw %lu and %lu", t, want, r.gi, r.fi);
	check(d <= PMU_CYCLES_TOLERANCE(r.fc),
	      "cycles on cpu %u: GP %lu and fixed %lu differ by %lu, more than %lu", t, r.gc, r.fc, d,
	      PMU_CYCLES_TOLERANCE(r.fc));
}
