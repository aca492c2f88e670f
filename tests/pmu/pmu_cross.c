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
#include "tests/pmu/pmu_common.h"

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
	if (!pmu_cpu_counts(pc))
		return ktest_reason("cpu %u: %s", t, pmu_cpu_reason(pc));
	if (!pmu_cpu_caps(pc)->fixed_mask && pmu_cpu_caps(pc)->no_fixed_why)
		return ktest_reason("cpu %u: %s", t, pmu_cpu_caps(pc)->no_fixed_why);
	if (!pmu_has_fixed(pmu_cpu_caps(pc), 0) || !pmu_has_fixed(pmu_cpu_caps(pc), 1) ||
	    !pmu_cpu_caps(pc)->global_ctrl)
		return ktest_reason("cpu %u has no FIXED_CTR0/FIXED_CTR1 to cross-check against", t);
	if (pmu_cpu_caps(pc)->fixed_width < PMU_MIN_COUNTER_WIDTH)
		return ktest_reason(
			"cpu %u: the fixed counters are %u-bit (CPUID.0AH:EDX[12:5]): narrower than the %u bits the driver counts with",
			t, pmu_cpu_caps(pc)->fixed_width, PMU_MIN_COUNTER_WIDTH);
	const char *why = pmu_test_gp_event_missing(PMU_ARCH_INSTRUCTIONS);
	if (why || (why = pmu_test_gp_event_missing(PMU_ARCH_CYCLES)))
		return why;
	/* Counters an earlier owner (firmware) left running are not ours. */
	uint32_t gp = pmu_cpu_caps(pc)->gp_mask & ~pmu_cpu_gp_others(pc) & ~pmu_cpu_gp_ours(pc);
	if ((pmu_cpu_fixed_others(pc) & 0x3) || !gp || !(gp & (gp - 1)))
		return ktest_reason(
			"cpu %u: needs FIXED_CTR0, FIXED_CTR1 and two GP counters free; taken at boot: fixed %#x, GP %#x",
			t, pmu_cpu_fixed_others(pc), pmu_cpu_gp_others(pc));
	return NULL;
}

struct cross {
	unsigned cpu, apic_id;
	int err;
	char why[PMU_REASON_LEN];
	uint64_t gi[2], fi[2];                  /* the least of the windows at each length */
	uint64_t gc, fc;                        /* cycles in the last long window */
	uint64_t split_len, split_gi, split_fi; /* the first window whose instructions differed */
};

/* Two loop lengths, PMU_TEST_TRIALS windows each (pmu/pmu_common.h). No
 * check() or diag() can run on the target: a window an SMI fell into is
 * not run again, the least of the windows stands. */
static const uint64_t cross_len[2] = { PMU_TEST_LOOPS_SHORT, PMU_TEST_LOOPS };

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
	} else {
		for (unsigned k = 0; k < 2 && r->err == PMU_OK; k++)
			for (unsigned t = 0; t < PMU_TEST_TRIALS; t++) {
				if ((r->err = pmu_events_arm(g, 4, &br)) != PMU_OK) {
					ksnprintf(r->why, sizeof(r->why), "%s", fi.reason);
					break;
				}
				bool irq = irq_save();
				pmu_bracket_loop(&br, cross_len[k]);
				irq_restore(irq);
				pmu_events_disarm(g, 4);
				uint64_t a = pmu_event_count(&gi), b = pmu_event_count(&fi);
				if (a != b && !r->split_len)
					r->split_len = cross_len[k], r->split_gi = a, r->split_fi = b;
				if (t == 0 || a < r->gi[k])
					r->gi[k] = a;
				if (t == 0 || b < r->fi[k])
					r->fi[k] = b;
				r->gc = pmu_event_count(&gc);
				r->fc = pmu_event_count(&fc);
			}
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
	uint64_t d = r.gc > r.fc ? r.gc - r.fc : r.fc - r.gc;
	char what[48];
	diag("cpu %u (APIC ID %u), from cpu %u: instructions GP %lu / fixed %lu, cycles GP %lu / fixed %lu",
	     t, r.apic_id, this_cpu()->cpu, r.gi[1], r.fi[1], r.gc, r.fc);
	check(!r.split_len,
	      "instructions on cpu %u in one window of %lu iterations: GP %lu, fixed %lu; expected equal", t,
	      r.split_len, r.split_gi, r.split_fi);
	ksnprintf(what, sizeof(what), "instructions on cpu %u", t);
	pmu_test_check_exact(pmu_cpu_of(t), what, PMU_ARCH_INSTRUCTIONS, false, r.gi);
	check(d <= PMU_CYCLES_TOLERANCE(r.fc),
	      "cycles on cpu %u: GP %lu and fixed %lu differ by %lu, more than %lu", t, r.gc, r.fc, d,
	      PMU_CYCLES_TOLERANCE(r.fc));
}
