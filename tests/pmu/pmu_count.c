/* Counting checks on each CPU: every architectural event on every GP
 * counter, every fixed counter, fixed against GP, all counters at once,
 * CMASK/INV/EDGE and overflow status. Expected values come from the known
 * workloads of pmu/loops.h: exact where the architecture makes them
 * exact (instructions, branches: the difference between two loop
 * lengths), bounds derived from the loop elsewhere. */
#include "arch/x86/bootmem.h"
#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/bracket.h"
#include "pmu/intel/models.h"
#include "pmu/loops.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/deviations.h"
#include "tests/ktest.h"
#include "tests/pmu/pmu_common.h"

static bool is_mem_event(enum pmu_arch_event e)
{
	return e == PMU_ARCH_LLC_REFERENCES || e == PMU_ARCH_LLC_MISSES;
}

KTEST("pmu.count", gp_arch_events, pmu_needs_counting, KTEST_PER_CPU,
      "each architectural event on each GP counter, exact or bounded")
{
	const struct pmu_caps *c = pmu_caps();
	uint32_t gp = pmu_test_free_gp();

	for (unsigned x = 0; x < PMU_MAX_GP; x++) {
		if (!((gp >> x) & 1))
			continue;
		for (int e = 0; e < PMU_ARCH_NR; e++) {
			struct pmu_event ev;
			struct pmu_event *g[] = { &ev };
			struct pmu_test_window w = { .mem = is_mem_event((enum pmu_arch_event)e) };
			struct pmu_test_counts *m = pmu_test_counts_here();

			if (!((c->events_avail >> e) & 1)) {
				if (x == 0)
					diag("%s", pmu_test_gp_event_missing((enum pmu_arch_event)e));
				continue;
			}
			pmu_test_event(&ev, (enum pmu_arch_event)e);
			if (!check(pmu_event_add_idx(&ev, (int)x) == PMU_OK, "%s on IA32_PMC%u: %s",
				   pmu_arch_events[e].name, x, ev.reason))
				continue;
			const char *why = pmu_test_measure_exact(g, 1, &w, m)
						  ? pmu_test_check_count(&ev, 0, m)
						  : NULL;
			if (!why && e == PMU_ARCH_REF_CYCLES)
				pmu_test_check_ref_ratio(&ev);
			pmu_event_del(&ev);
			if (why)
				ktest_skip("%s", why);
		}
	}
}

KTEST("pmu.count", fixed_counters, pmu_needs_fixed, KTEST_PER_CPU, "each fixed counter, with the same bounds")
{
	uint32_t fx = pmu_test_free_fixed();

	for (unsigned i = 0; i < PMU_MAX_FIXED; i++) {
		struct pmu_event ev;
		struct pmu_event *g[] = { &ev };
		enum pmu_arch_event e = pmu_arch_event_of_fixed(i);
		struct pmu_test_counts *m = pmu_test_counts_here();

		if (!((fx >> i) & 1))
			continue;
		if (e == PMU_ARCH_NONE) {
			diag("IA32_FIXED_CTR%u: its event is not architectural; not checked", i);
			continue;
		}
		pmu_test_event(&ev, e);
		if (!check(pmu_event_add_idx(&ev, PMU_IDX_FIXED(i)) == PMU_OK, "%s on IA32_FIXED_CTR%u: %s",
			   ev.name, i, ev.reason))
			continue;
		const char *why = pmu_test_measure_exact(g, 1, NULL, m) ? pmu_test_check_count(&ev, 0, m)
									: NULL;
		pmu_event_del(&ev);
		if (why)
			ktest_skip("%s", why);
	}
}

/* The source's core idea: two independent counters of the same event over
 * the same window. Instructions must agree exactly in every window, and be
 * exact (pmu_test_check_exact); cycles within PMU_CYCLES_TOLERANCE (same
 * WRMSR starts and stops both, but the counters may latch it a few cycles
 * apart). */
KTEST("pmu.count", fixed_vs_gp, pmu_needs_fixed, KTEST_PER_CPU,
      "GP and fixed instructions equal and exact; cycles within 1% + 64")
{
	struct pmu_event gi, fi, gc, fc;
	uint32_t gp = pmu_test_free_gp(), fx = pmu_test_free_fixed();
	unsigned x0 = pmu_test_first_absent(~gp, PMU_MAX_GP);
	unsigned x1 = pmu_test_first_absent(~(gp & ~(1u << x0)), PMU_MAX_GP);

	if (!((fx >> 0) & 1) || !((fx >> 1) & 1) || x1 >= PMU_MAX_GP)
		ktest_skip("needs FIXED_CTR0, FIXED_CTR1 and two GP counters free (fixed %#x, GP %#x)", fx,
			   gp);
	pmu_test_need_gp_event(PMU_ARCH_INSTRUCTIONS);
	pmu_test_need_gp_event(PMU_ARCH_CYCLES);
	pmu_test_event(&gi, PMU_ARCH_INSTRUCTIONS);
	pmu_test_event(&fi, PMU_ARCH_INSTRUCTIONS);
	pmu_test_event(&gc, PMU_ARCH_CYCLES);
	pmu_test_event(&fc, PMU_ARCH_CYCLES);
	struct pmu_event *g[] = { &gi, &fi, &gc, &fc };
	if (!check(pmu_event_add_idx(&gi, (int)x0) == PMU_OK, "GP instructions: %s", gi.reason) ||
	    !check(pmu_event_add_idx(&fi, PMU_IDX_FIXED(0)) == PMU_OK, "fixed instructions: %s", fi.reason) ||
	    !check(pmu_event_add_idx(&gc, (int)x1) == PMU_OK, "GP cycles: %s", gc.reason) ||
	    !check(pmu_event_add_idx(&fc, PMU_IDX_FIXED(1)) == PMU_OK, "fixed cycles: %s", fc.reason)) {
		for (int i = 0; i < 4; i++)
			if (g[i]->hw.idx >= 0)
				pmu_event_del(g[i]);
		return;
	}
	struct pmu_test_counts *m = pmu_test_counts_here();
	if (pmu_test_measure(g, 4, NULL, m)) {
		for (unsigned k = 0; k < 2; k++)
			check(m->last[0][k] == m->last[1][k],
			      "instructions in one window of %lu iterations: IA32_PMC%u counted %lu, IA32_FIXED_CTR0 %lu; expected equal",
			      m->len[k], x0, m->last[0][k], m->last[1][k]);
		char what[48];
		ksnprintf(what, sizeof(what), "instructions on IA32_PMC%u and IA32_FIXED_CTR0", x0);
		pmu_test_check_exact(pmu_this_cpu(), what, PMU_ARCH_INSTRUCTIONS, false, m->min[0]);
		uint64_t p = m->last[2][1], q = m->last[3][1], d = p > q ? p - q : q - p;
		check(d <= PMU_CYCLES_TOLERANCE(q),
		      "cycles: IA32_PMC%u counted %lu, IA32_FIXED_CTR1 %lu; expected within %lu of each other, differ by %lu",
		      x1, p, q, PMU_CYCLES_TOLERANCE(q), d);
		diag("instructions %lu/%lu, cycles %lu/%lu (GP/fixed, %lu iterations)", m->last[0][1],
		     m->last[1][1], p, q, m->len[1]);
	}
	pmu_events_del(g, 4);
}

/* Every free counter in one window: GP counters alternate instructions and
 * branches, each fixed counter counts its own event. */
KTEST("pmu.count", all_counters, pmu_needs_counting, KTEST_PER_CPU,
      "every free counter in one window, each exact or bounded")
{
	/* ~15 KiB of events: not on the 64 KiB test stack, and from boot
	 * memory on first use, as the image's .bss must stay below OVMF's
	 * ACPI NVS at 8 MiB (arch/x86/bootmem.h). */
	static struct pmu_event *all_evs[MAX_CPUS];
	unsigned cpu = this_cpu()->cpu;
	if (!all_evs[cpu])
		all_evs[cpu] = bootmem_alloc(PMU_IDX_NR * sizeof(*all_evs[cpu]));
	struct pmu_event *evs = all_evs[cpu];
	struct pmu_event *g[PMU_IDX_NR];
	uint32_t gp = pmu_test_free_gp(), fx = pmu_test_free_fixed();
	struct pmu_test_counts *m = pmu_test_counts_here();
	unsigned n = 0, k = 0, np = 0;
	/* The exact events CPUID offers on GP counters, in turn; cycles
	 * where it offers neither; no GP counter where it offers none. */
	enum pmu_arch_event pick[2];
	const char *why_not = pmu_test_gp_event_missing(PMU_ARCH_INSTRUCTIONS);

	if (!why_not)
		pick[np++] = PMU_ARCH_INSTRUCTIONS;
	else
		diag("%s", why_not);
	if (!(why_not = pmu_test_gp_event_missing(PMU_ARCH_BRANCHES)))
		pick[np++] = PMU_ARCH_BRANCHES;
	else
		diag("%s", why_not);
	if (!np && !(why_not = pmu_test_gp_event_missing(PMU_ARCH_CYCLES)))
		pick[np++] = PMU_ARCH_CYCLES;
	if (!np && gp) {
		diag("%s: the GP counters %#x are left out", why_not, gp);
		gp = 0;
	}
	for (unsigned x = 0; x < PMU_MAX_GP; x++) {
		if (!((gp >> x) & 1))
			continue;
		pmu_test_event(&evs[n], pick[k++ % np]);
		if (check(pmu_event_add_idx(&evs[n], (int)x) == PMU_OK, "IA32_PMC%u: %s", x, evs[n].reason))
			g[n] = &evs[n], n++;
	}
	for (unsigned i = 0; i < PMU_MAX_FIXED && pmu_caps()->global_ctrl; i++) {
		enum pmu_arch_event e = pmu_arch_event_of_fixed(i);
		if (!((fx >> i) & 1) || e == PMU_ARCH_NONE)
			continue;
		pmu_test_event(&evs[n], e);
		if (check(pmu_event_add_idx(&evs[n], PMU_IDX_FIXED(i)) == PMU_OK, "IA32_FIXED_CTR%u: %s", i,
			  evs[n].reason))
			g[n] = &evs[n], n++;
	}
	if (n == 0)
		return;
	if (n > 1 && !pmu_caps()->global_ctrl) {
		/* Version 1 cannot start several counters with one write. */
		pmu_events_del(g, n);
		if (pmu_caps()->no_global_why)
			ktest_skip("%s: %u counters cannot start in one write", pmu_caps()->no_global_why, n);
		ktest_skip("architectural PMU v1: no GLOBAL_CTRL to start %u counters in one write", n);
	}
	diag("%u counters in one window", n);
	const char *why = NULL;
	if (pmu_test_measure_exact(g, n, NULL, m))
		for (unsigned i = 0; i < n && !why; i++)
			why = pmu_test_check_count(g[i], i, m);
	pmu_events_del(g, n);
	if (why)
		ktest_skip("%s", why);
}

/* Under a VMM a host interrupt exits the guest in proportion to the
 * window's time, each exit adding to the exact counts (the VMRUN back
 * into the guest: AMD-SVM-VMRUN-COUNTED-IN-GUEST) and possibly to EDGE's,
 * and a counter with CMASK may make the host slow, far beyond silicon's
 * microseconds (the emulated PMU folds each instruction on its own while
 * one counts, about 80 times slower: emu/qemu/README.md; real KVM 7.3
 * nested on it saw 9 to 13 exits in every one of 15 windows of 50000
 * iterations). Under a VMM the windows with a CMASK counter are short
 * enough that the least of them holds no exit; bare metal and TCG keep
 * the standard lengths. */
#define CMASK_VMM_LOOPS_SHORT ((uint64_t)1000)
#define CMASK_VMM_LOOPS ((uint64_t)2000)

/* EDGE counts the cycles where the condition turns true: each such cycle
 * after the first follows a cycle where it was false, which CMASK=1,INV
 * counts, so in one window the edges are at most those cycles + 1 (+ 1
 * for a counter that latches the start a cycle apart): g[0] the edges, g[1]
 * the cycles retiring nothing, PMU_TEST_TRIALS windows at each length.
 * On bare metal and under TCG every window holds. Under a VMM the
 * windows are CMASK_VMM_LOOPS_SHORT and CMASK_VMM_LOOPS long, and an
 * asynchronous VM exit only adds edges, never a cycle retiring nothing
 * (the host's time is not the guest's; the condition may be seen to turn
 * true again when the guest resumes: the emulated PMU starts the detector
 * false whenever the host writes the event select; real KVM 7.3 nested on
 * it once showed 7 edges over 1 such cycle): the window with the fewest
 * edges over its idle cycles is judged, and while even that one holds
 * more, PMU_TEST_TRIALS more windows, at most PMU_TEST_EXIT_RERUNS
 * rounds, each reported (pmu_test_measure_exact's rule). */
static void edges_within_idle(struct pmu_event *const *g)
{
	const struct pmu_caps *c = pmu_caps();
	bool vmm = c->hypervisor && c->hv != PMU_HV_TCG;
	const uint64_t len[2] = { vmm ? CMASK_VMM_LOOPS_SHORT : PMU_TEST_LOOPS_SHORT,
				  vmm ? CMASK_VMM_LOOPS : PMU_TEST_LOOPS };

	for (unsigned l = 0; l < 2; l++) {
		uint64_t e = 0, i = 0;
		bool any = false;

		for (unsigned round = 0; round <= (vmm ? PMU_TEST_EXIT_RERUNS : 0); round++) {
			if (round)
				diag("edge: %lu rising edges over %lu cycles retiring nothing in the window with the fewest over them of %u windows of %lu iterations, more than those cycles + 2: every window held more (a VM exit inside it, under a hypervisor): %u more (round %u of at most %u)",
				     e, i, round * PMU_TEST_TRIALS, len[l], PMU_TEST_TRIALS, round,
				     PMU_TEST_EXIT_RERUNS);
			for (unsigned t = 0; t < PMU_TEST_TRIALS; t++) {
				if (!pmu_test_window(g, 2, NULL, len[l], NULL))
					return;
				uint64_t we = pmu_event_count(g[0]), wi = pmu_event_count(g[1]);
				if (!vmm)
					check(we <= wi + 2,
					      "edge: %lu rising edges in a window of %lu iterations with %lu cycles retiring nothing; expected at most %lu",
					      we, len[l], wi, wi + 2);
				if (!any || (int64_t)(we - wi) < (int64_t)(e - i))
					e = we, i = wi, any = true;
			}
			if (e <= i + 2)
				break;
		}
		if (vmm)
			check(e <= i + 2,
			      "edge: %lu rising edges over %lu cycles retiring nothing in the window with the fewest over them, of %lu iterations; expected at most %lu",
			      e, i, len[l], i + 2);
	}
}

/* CMASK / INV / EDGE on instructions retired (SDM vol. 3B, "Architectural
 * Performance Monitoring Version 1 Facilities"): in each cycle, CMASK=1
 * counts it if at least one instruction retired, CMASK=1 INV if none did,
 * so the two add up to the core cycles of the window; EDGE counts the
 * cycles where retiring starts again, at least once and at most as often
 * as CMASK=1 counts; CMASK=255 never triggers (no core retires 255
 * instructions in a cycle). */
KTEST("pmu.count", cmask_inv_edge, pmu_needs_global_ctrl, KTEST_PER_CPU,
      "cmask=1 + cmask=1,inv = cycles; edge and cmask=255 bounded")
{
	struct pmu_event ge1, inv, cyc, edge, big;
	uint32_t gp = pmu_test_free_gp();
	unsigned ngp = 0;

	for (uint32_t m = gp; m; m &= m - 1)
		ngp++;
	if (ngp < 3)
		ktest_skip("needs 3 free GP counters, has %u (mask %#x)", ngp, gp);
	pmu_test_need_gp_event(PMU_ARCH_INSTRUCTIONS);
	pmu_test_need_gp_event(PMU_ARCH_CYCLES);

	pmu_test_event(&ge1, PMU_ARCH_INSTRUCTIONS);
	ge1.attr.cmask = 1;
	ge1.name = "instructions cmask=1";
	pmu_test_event(&inv, PMU_ARCH_INSTRUCTIONS);
	inv.attr.cmask = 1;
	inv.attr.inv = true;
	inv.name = "instructions cmask=1,inv";
	pmu_test_event(&cyc, PMU_ARCH_CYCLES);
	struct pmu_event *g1[] = { &ge1, &inv, &cyc };
	struct pmu_test_counts *m = pmu_test_counts_here();
	if (check(pmu_events_add(g1, 3) == PMU_OK, "cmask/inv/cycles group: %s", ge1.reason)) {
		if (pmu_test_measure(g1, 3, NULL, m)) {
			/* One window's counts: the long one's last. */
			uint64_t a = m->last[0][1], b = m->last[1][1], c = m->last[2][1];
			uint64_t s = a + b, d = s > c ? s - c : c - s;
			uint64_t insns = pmu_test_workload(PMU_ARCH_INSTRUCTIONS, false, m->len[1]);
			struct dev_obs o = { .kind = DEV_OBS_CYCLE_SPLIT, .pc = pmu_this_cpu() };
			o.cycle_split.busy = a, o.cycle_split.idle = b, o.cycle_split.cycles = c;
			o.cycle_split.tolerance = PMU_CYCLES_TOLERANCE(c);
			check_or_deviation(
				d <= PMU_CYCLES_TOLERANCE(c), &o,
				"cycles retiring >= 1 (%lu) + cycles retiring 0 (%lu) = %lu; expected the core cycles %lu within %lu",
				a, b, s, c, PMU_CYCLES_TOLERANCE(c));
			check(a <= c + PMU_CYCLES_TOLERANCE(c),
			      "cycles retiring >= 1: %lu, more than the %lu cycles", a, c);
			/* No core retires more than 16 instructions a cycle. */
			check(a >= insns / 16,
			      "cycles retiring >= 1: expected at least %lu (%lu instructions / 16), saw %lu",
			      insns / 16, insns, a);
			diag("cmask=1 %lu, cmask=1,inv %lu, cycles %lu", a, b, c);
		}
		pmu_events_del(g1, 3);
	}

	pmu_test_event(&edge, PMU_ARCH_INSTRUCTIONS);
	edge.attr.cmask = 1;
	edge.attr.edge = true;
	edge.name = "instructions cmask=1,edge";
	pmu_test_event(&big, PMU_ARCH_INSTRUCTIONS);
	big.attr.cmask = 255;
	big.name = "instructions cmask=255";
	pmu_test_event(&ge1, PMU_ARCH_INSTRUCTIONS);
	ge1.attr.cmask = 1;
	ge1.name = "instructions cmask=1";
	struct pmu_event *g2[] = { &edge, &big, &ge1 };
	if (check(pmu_events_add(g2, 3) == PMU_OK, "edge/cmask group: %s", edge.reason)) {
		if (pmu_test_measure(g2, 3, NULL, m)) {
			uint64_t e = m->last[0][1], a = m->last[2][1];
			struct dev_obs o = { .kind = DEV_OBS_CMASK255, .pc = pmu_this_cpu() };
			o.cmask255.count[0] = m->min[1][0];
			o.cmask255.count[1] = m->min[1][1];
			check(e >= 1 && e <= a, "edge: expected 1..%lu (the cycles retiring >= 1), saw %lu",
			      a, e);
			check_or_deviation(
				m->min[1][0] == 0 && m->min[1][1] == 0, &o,
				"cmask=255: expected 0 cycles retiring 255 instructions, saw %lu and %lu at %lu and %lu iterations",
				m->min[1][0], m->min[1][1], m->len[0], m->len[1]);
			diag("edge %lu, cmask=255 %lu, cmask=1 %lu", e, m->min[1][1], a);
		}
		pmu_events_del(g2, 3);
	}

	pmu_test_event(&edge, PMU_ARCH_INSTRUCTIONS);
	edge.attr.cmask = 1;
	edge.attr.edge = true;
	edge.name = "instructions cmask=1,edge";
	pmu_test_event(&inv, PMU_ARCH_INSTRUCTIONS);
	inv.attr.cmask = 1;
	inv.attr.inv = true;
	inv.name = "instructions cmask=1,inv";
	struct pmu_event *g3[] = { &edge, &inv };
	if (check(pmu_events_add(g3, 2) == PMU_OK, "edge/inv group: %s", edge.reason)) {
		edges_within_idle(g3);
		pmu_events_del(g3, 2);
	}
}

/* Counters count independently (SDM vol. 3B, "Architectural Performance
 * Monitoring Version 1 Facilities"; APM vol. 2, 13.2): one counter's
 * CMASK changes no other counter's count, and each counter's USR/OS
 * flags alone decide the rings it counts at (USR: CPL > 0, OS: CPL 0).
 * In one window, beside an instructions counter with CMASK=1: a USR-only
 * instructions counter counts nothing (the window runs at CPL 0), an
 * OS-only one exactly the window's instructions, every other free
 * counter its event exactly or within its bounds. Then an OS-only
 * counter alone, exact. */
KTEST("pmu.count", beside_cmask, pmu_needs_global_ctrl, KTEST_PER_CPU,
      "beside a CMASK counter every counter exact; USR-only at CPL 0 counts 0")
{
	static struct pmu_event *all_evs[MAX_CPUS];
	unsigned cpu = this_cpu()->cpu;
	if (!all_evs[cpu])
		all_evs[cpu] = bootmem_alloc(PMU_IDX_NR * sizeof(*all_evs[cpu]));
	struct pmu_event *evs = all_evs[cpu];
	struct pmu_event *g[PMU_IDX_NR];
	uint32_t gp = pmu_test_free_gp(), fx = pmu_test_free_fixed();
	struct pmu_test_counts *m = pmu_test_counts_here();
	unsigned n = 0, k = 0, ngp = 0, x_cm = PMU_MAX_GP, x_usr = PMU_MAX_GP;
	enum pmu_arch_event pick[2] = { PMU_ARCH_INSTRUCTIONS, PMU_ARCH_BRANCHES };
	unsigned np = pmu_test_gp_event_missing(PMU_ARCH_BRANCHES) ? 1 : 2;

	for (uint32_t v = gp; v; v &= v - 1)
		ngp++;
	if (ngp < 2)
		ktest_skip("needs 2 free GP counters, has %u (mask %#x)", ngp, gp);
	pmu_test_need_gp_event(PMU_ARCH_INSTRUCTIONS);
	for (unsigned x = 0; x < PMU_MAX_GP; x++) {
		if (!((gp >> x) & 1))
			continue;
		if (x_cm == PMU_MAX_GP) {
			x_cm = x;
			pmu_test_event(&evs[n], PMU_ARCH_INSTRUCTIONS);
			evs[n].attr.cmask = 1;
			evs[n].name = "instructions cmask=1";
		} else if (x_usr == PMU_MAX_GP) {
			x_usr = x;
			pmu_test_event(&evs[n], PMU_ARCH_INSTRUCTIONS);
			evs[n].attr.os = false;
			evs[n].name = "instructions USR only";
		} else if (k == 0) {
			pmu_test_event(&evs[n], PMU_ARCH_INSTRUCTIONS);
			evs[n].attr.usr = false;
			evs[n].name = "instructions OS only";
			k++;
		} else {
			pmu_test_event(&evs[n], pick[k++ % np]);
		}
		if (!check(pmu_event_add_idx(&evs[n], (int)x) == PMU_OK, "IA32_PMC%u: %s", x,
			   evs[n].reason)) {
			pmu_events_del(g, n);
			return;
		}
		g[n] = &evs[n], n++;
	}
	for (unsigned i = 0; i < PMU_MAX_FIXED; i++) {
		enum pmu_arch_event e = pmu_arch_event_of_fixed(i);
		if (!((fx >> i) & 1) || e == PMU_ARCH_NONE)
			continue;
		pmu_test_event(&evs[n], e);
		if (check(pmu_event_add_idx(&evs[n], PMU_IDX_FIXED(i)) == PMU_OK, "IA32_FIXED_CTR%u: %s", i,
			  evs[n].reason))
			g[n] = &evs[n], n++;
	}
	/* Under a VMM, windows short enough for the least to hold no exit
	 * (CMASK_VMM_LOOPS, above). */
	bool vmm = pmu_caps()->hypervisor && pmu_caps()->hv != PMU_HV_TCG;
	const struct pmu_test_window w = { .len = { vmm ? CMASK_VMM_LOOPS_SHORT : 0,
						    vmm ? CMASK_VMM_LOOPS : 0 } };
	diag("%u counters in one window, CMASK=1 on IA32_PMC%u, USR only on IA32_PMC%u", n, x_cm, x_usr);
	const char *why = NULL;
	if (pmu_test_measure_exact(g, n, &w, m)) {
		uint64_t insns = pmu_test_workload(PMU_ARCH_INSTRUCTIONS, false, m->len[1]);
		/* No core retires more than 16 instructions a cycle. */
		check(m->last[0][1] >= insns / 16,
		      "instructions cmask=1 on IA32_PMC%u: expected at least %lu cycles retiring (%lu instructions / 16), saw %lu",
		      x_cm, insns / 16, insns, m->last[0][1]);
		for (unsigned l = 0; l < 2; l++)
			check(m->last[1][l] == 0,
			      "instructions USR only on IA32_PMC%u over a window at CPL 0 of %lu iterations: expected 0, saw %lu",
			      x_usr, m->len[l], m->last[1][l]);
		for (unsigned i = 2; i < n && !why; i++)
			why = pmu_test_check_count(g[i], i, m);
	}
	pmu_events_del(g, n);
	if (why)
		ktest_skip("%s", why);

	/* An OS-only counter, the only one counting. */
	pmu_test_event(&evs[0], PMU_ARCH_INSTRUCTIONS);
	evs[0].attr.usr = false;
	evs[0].name = "instructions OS only, alone";
	g[0] = &evs[0];
	if (!check(pmu_event_add_idx(&evs[0], (int)x_usr) == PMU_OK, "IA32_PMC%u: %s", x_usr, evs[0].reason))
		return;
	why = pmu_test_measure_exact(g, 1, NULL, m) ? pmu_test_check_count(g[0], 0, m) : NULL;
	pmu_event_del(&evs[0]);
	if (why)
		ktest_skip("%s", why);
}

/* A counter preloaded with -P overflows after P events: its GLOBAL_STATUS
 * bit sets, the count across the wrap is exact, OVF_CTRL clears the bit
 * (SDM vol. 3B, "Architectural Performance Monitoring Version 2"). */
KTEST("pmu.count", overflow_status, pmu_needs_global_ctrl, KTEST_PER_CPU,
      "preset -1000: status bit set, exact count, OVF_CTRL clears it")
{
	const struct pmu_caps *c = pmu_caps();
	struct pmu_event ev;
	struct pmu_event *g[] = { &ev };
	struct pmu_test_counts *m = pmu_test_counts_here();
	uint64_t st = 0;

	pmu_test_need_gp_event(PMU_ARCH_INSTRUCTIONS);
	pmu_test_event(&ev, PMU_ARCH_INSTRUCTIONS);
	ev.attr.period = 1000; /* INT stays clear: no PMI, only the status bit */
	uint32_t gp = pmu_test_free_gp();
	unsigned x = pmu_test_first_absent(~gp, PMU_MAX_GP);
	if (x >= PMU_MAX_GP)
		ktest_skip("no free GP counter");
	if (!check(pmu_event_add_idx(&ev, (int)x) == PMU_OK, "%s", ev.reason))
		return;
	struct pmu_test_quiet q = { .bits = pmu_idx_bit(ev.hw.idx) };
	struct pmu_test_window w = pmu_test_quiet_window(&q);
	if (pmu_test_measure(g, 1, &w, m)) {
		struct dev_obs o = { .kind = DEV_OBS_QUIET_OVERFLOW, .pc = pmu_this_cpu() };
		o.quiet_overflow.count_exact = pmu_test_check_exact(o.pc, "count across the wrap",
								    PMU_ARCH_INSTRUCTIONS, false, m->min[0]);
		o.quiet_overflow.status_bit = (q.status >> x) & 1;
		check_or_deviation(
			o.quiet_overflow.status_bit, &o,
			"IA32_PERF_GLOBAL_STATUS: expected bit %u set after the counter wrapped, read %#lx",
			x, q.status);
		pmu_hw_wrmsr(c->global_ovf, pmu_idx_bit(ev.hw.idx));
		pmu_hw_rdmsr(c->global_status, &st);
		check(!((st >> x) & 1),
		      "IA32_PERF_GLOBAL_STATUS: expected bit %u clear after OVF_CTRL, read %#lx", x, st);
	}
	pmu_event_del(&ev);
}

/* Tries a window gets to repeat itself before the check gives up: a
 * hypervisor may add an event to one window now and then (an
 * asynchronous VM exit counted in the guest, kvm-unit-tests x86/pmu.c). */
#define OVF_EXACT_TRIES 5
/* An excess up to this many is judged against the deviation rows (each
 * row has its own, smaller, bound); a try past it, or short of the end,
 * leaves the window to the SKIP. */
#define OVF_EXCESS_JUDGED 16

/* One bracketed window on counter idx counting instructions from
 * -period (0: from 0; INT clear): the raw counter afterwards and whether
 * its GLOBAL_STATUS bit was set. The bit is cleared before and after. */
static bool exact_window(int idx, uint64_t period, uint64_t *raw, bool *status)
{
	const struct pmu_caps *c = pmu_caps();
	struct pmu_event ev;
	struct pmu_event *g[] = { &ev };
	uint64_t st = 0;
	bool ok;

	pmu_test_event(&ev, PMU_ARCH_INSTRUCTIONS);
	ev.attr.period = period; /* a preset of -period only: INT stays clear */
	if (!check(pmu_event_add_idx(&ev, idx) == PMU_OK, "counter %d: %s", idx, ev.reason))
		return false;
	pmu_hw_wrmsr(c->global_ovf, pmu_idx_bit(idx));
	ok = pmu_test_window(g, 1, NULL, PMU_TEST_LOOPS, NULL);
	pmu_hw_rdmsr(ev.hw.event_base, raw);
	pmu_hw_rdmsr(c->global_status, &st);
	*status = st & pmu_idx_bit(idx);
	pmu_hw_wrmsr(c->global_ovf, pmu_idx_bit(idx));
	pmu_event_del(&ev);
	return ok;
}

/* The window's own count P: two runs from 0 in a row that agree. */
static bool window_count(int idx, const char *name, uint64_t *p)
{
	uint64_t prev = 0, v = 0;
	bool st;

	for (unsigned t = 0; t < OVF_EXACT_TRIES; t++) {
		if (t)
			prev = v;
		if (!exact_window(idx, 0, &v, &st))
			return false;
		if (t && v == prev) {
			*p = v;
			return true;
		}
	}
	ktest_skip(
		"%s: the window counted %lu then %lu instructions (the last two of %u tries, no two in a row alike): it does not repeat itself here",
		name, prev, v, OVF_EXACT_TRIES);
}

/* Run from -period until the counter ends at `want` (the window repeated
 * itself exactly); whether the status bit was set then.
 *
 * A counter that ends past `want` in every try is no noise: KVM emulates
 * a guest counter with a host perf event whose period is what the preset
 * leaves to the overflow (Linux arch/x86/kvm/pmu.c,
 * pmc_reprogram_counter()), so the guest's overflow is a host PMI and a
 * VM exit that the window from 0 does not have, and under AMD's SVM the
 * VMRUN resuming the guest counts as a guest instruction. The least
 * excess of the tries (a busy host's own exits add to some) is judged
 * against the deviation rows as the bracket's excess is; the run then
 * wrapped, so from -P the status bit is still in question (true), from
 * -(P+1) it is not (false). A try that ended short of `want` is no
 * excess: the window does not repeat itself, a SKIP. */
static bool run_to(int idx, const char *name, uint64_t period, uint64_t want, bool *status)
{
	uint64_t mask = pmu_width_mask(pmu_idx_width(pmu_caps(), idx));
	uint64_t v = 0, least = ~0ull;
	bool unjudged = false;

	for (unsigned t = 0; t < OVF_EXACT_TRIES; t++) {
		uint64_t excess;

		if (!exact_window(idx, period, &v, status))
			return false;
		if (v == want)
			return true;
		excess = (v - want) & mask;
		if (excess > OVF_EXCESS_JUDGED)
			unjudged = true;
		else if (excess < least)
			least = excess;
	}
	if (!unjudged) {
		struct dev_obs o = { .kind = DEV_OBS_RETIRED, .pc = pmu_this_cpu() };

		o.retired.intercept = (int64_t)least;
		check_or_deviation(
			false, &o,
			"%s from -%lu: expected to end at %#lx, ended past it by %lu at least in %u tries: more instructions than the same window counted from 0",
			name, period, want, least, OVF_EXACT_TRIES);
		return want == 0;
	}
	ktest_skip(
		"%s from -%lu: expected to end at %#lx, ended at %#lx in %u tries: the window does not repeat itself here",
		name, period, want, v, OVF_EXACT_TRIES);
}

/* The overflow is the P-th event after a preset of -P, not one later: the
 * window's own count P is measured first, from 0, so the exactness rests
 * on the window repeating itself and not on what the bracket's WRMSRs
 * count (pmu/bracket.h). From -P the counter wraps to 0 on the window's
 * last event: its GLOBAL_STATUS bit sets. From -(P+1) it stops at -1
 * without wrapping: the bit stays clear (SDM vol. 3B, "Architectural
 * Performance Monitoring Version 2", IA32_PERF_GLOBAL_STATUS). */
KTEST("pmu.count", overflow_at_exactly_p, pmu_needs_global_ctrl, KTEST_PER_CPU,
      "a window of P events: preset -P sets the status bit, -(P+1) does not")
{
	const struct pmu_caps *c = pmu_caps();
	uint32_t gp = pmu_test_free_gp(), fx = pmu_test_free_fixed();
	int idx[PMU_MAX_GP + 1];
	unsigned n = 0;
	const char *why_not = pmu_test_gp_event_missing(PMU_ARCH_INSTRUCTIONS);

	if (why_not) {
		diag("%s: the GP counters %#x are left out", why_not, gp);
		gp = 0;
	}
	for (unsigned x = 0; x < PMU_MAX_GP; x++)
		if ((gp >> x) & 1)
			idx[n++] = (int)x;
	if (pmu_arch_event_of_fixed(0) == PMU_ARCH_INSTRUCTIONS && (fx & 1))
		idx[n++] = PMU_IDX_FIXED(0);
	if (n == 0)
		ktest_skip("no free counter that counts instructions (GP %#x, fixed %#x)%s%s", gp, fx,
			   why_not ? "; " : "", why_not ? why_not : "");
	for (unsigned i = 0; i < n; i++) {
		char name[24];
		unsigned width = pmu_idx_width(c, idx[i]);
		uint64_t mask = pmu_width_mask(width), p = 0;
		bool st = false;

		pmu_idx_name(c, idx[i], name, sizeof(name));
		if (!window_count(idx[i], name, &p))
			continue;
		if (p == 0) {
			/* Nothing to place an overflow at; whether the counter
			 * should have counted is pmu.count.gp_arch_events' call
			 * (a host's perf user may hold it under a hypervisor). */
			diag("%s counted no instructions in the window: no overflow to place", name);
			continue;
		}
		if (run_to(idx[i], name, p, 0, &st)) {
			/* It ended at 0: it wrapped; only the status bit is in
			 * question (Xen shows it only through a PMI). */
			struct dev_obs o = { .kind = DEV_OBS_QUIET_OVERFLOW, .pc = pmu_this_cpu() };
			o.quiet_overflow.count_exact = true;
			o.quiet_overflow.status_bit = st;
			check_or_deviation(
				st, &o,
				"%s from -%lu over a window of exactly %lu instructions: expected it to wrap to 0 with its status bit %u set, the bit is clear",
				name, p, p, __builtin_ctzll(pmu_idx_bit(idx[i])));
		}
		if (run_to(idx[i], name, p + 1, mask, &st))
			check(!st,
			      "%s from -%lu over a window of %lu instructions: expected it to stop at %#lx without an overflow, the status bit %u is set",
			      name, p + 1, p, mask, __builtin_ctzll(pmu_idx_bit(idx[i])));
		diag("%s: a window of %lu instructions, preset -%lu and -%lu", name, p, p, p + 1);
	}
}

/* pmu.count.branch_kinds: model-specific branch events counted against a window whose branches
 * are known: near calls, near returns and taken branches, on every free
 * GP counter. The events are the part's own (not architectural): Intel's
 * BR_INST_RETIRED umasks 02H NEAR_CALL (from Nehalem), 08H NEAR_RETURN and
 * 20H NEAR_TAKEN (from Sandy Bridge; SDM vol. 3B, the event tables of
 * those microarchitectures, through Ice Lake), AMD's C4H retired taken
 * branch instructions and C8H retired near returns (K8 and family 10h
 * BKDGs, family 17h/19h PPRs). */
/*
 * The window, between the two WRMSRs of the bracket:
 *   1: call 2f        near relative call, taken
 *      dec n
 *      jnz 1b         taken n - 1 times
 *      jmp 3f         near relative jump, taken
 *   2: ret            near return, taken
 *   3:
 * n iterations: n calls, n returns, 3n taken branches, and nothing else
 * that branches (interrupts off).
 */
#define KINDS_ITERS 1000

static void kinds_window(const struct pmu_bracket_regs *br, uint64_t n)
{
	uint32_t lo = (uint32_t)br->on, hi = (uint32_t)(br->on >> 32);

	__asm__ volatile(
		"wrmsr\n"
		"1:\n\t"
		"call 2f\n\t"
		"dec %[n]\n\t"
		"jnz 1b\n\t"
		"jmp 3f\n"
		"2:\n\t"
		"ret\n"
		"3:\n\t"
		"mov %k[off_lo], %%eax\n\t"
		"mov %k[off_hi], %%edx\n\t"
		"wrmsr\n\t"
		: [n] "+&r"(n), "+&a"(lo), "+&d"(hi)
		: "c"(br->msr), [off_lo] "r"((uint32_t)br->off), [off_hi] "r"((uint32_t)(br->off >> 32))
		: "cc", "memory");
}

struct branch_kind {
	uint16_t event;
	uint8_t umask;
	unsigned per_iter; /* events per iteration of the window */
	const char *name;
};

static const struct branch_kind intel_nhm[] = {
	{ 0xc4, 0x02, 1, "BR_INST_RETIRED.NEAR_CALL" },
};
static const struct branch_kind intel_snb[] = {
	{ 0xc4, 0x02, 1, "BR_INST_RETIRED.NEAR_CALL" },
	{ 0xc4, 0x08, 1, "BR_INST_RETIRED.NEAR_RETURN" },
	{ 0xc4, 0x20, 3, "BR_INST_RETIRED.NEAR_TAKEN" },
};
static const struct branch_kind amd[] = {
	{ 0xc4, 0x00, 3, "retired taken branch instructions (C4H)" },
	{ 0xc8, 0x00, 1, "retired near returns (C8H)" },
};

static const struct branch_kind *kinds_of(const struct pmu_caps *c, unsigned *n)
{
	if (c->vendor == PMU_VENDOR_AMD) {
		*n = sizeof(amd) / sizeof(amd[0]);
		return amd;
	}
	if (c->vendor != PMU_VENDOR_INTEL)
		return NULL;
	switch (intel_core_uarch_of(c)) {
	case INTEL_NEHALEM:
	case INTEL_WESTMERE: *n = sizeof(intel_nhm) / sizeof(intel_nhm[0]); return intel_nhm;
	case INTEL_SANDYBRIDGE:
	case INTEL_IVYBRIDGE:
	case INTEL_HASWELL:
	case INTEL_BROADWELL:
	case INTEL_SKYLAKE:
	case INTEL_ICELAKE: *n = sizeof(intel_snb) / sizeof(intel_snb[0]); return intel_snb;
	default: return NULL;
	}
}

static const char *needs_kinds(void)
{
	const char *why = pmu_needs_counting();
	unsigned n;

	if (why)
		return why;
	if (!kinds_of(pmu_caps(), &n))
		return ktest_reason(
			"no branch-kind events listed for this part (%s %s): Intel Nehalem to Ice Lake, AMD",
			pmu_caps()->vendor_id, pmu_caps()->uarch ? pmu_caps()->uarch : "unknown");
	if (!pmu_test_free_gp())
		return "no free GP counter";
	return NULL;
}

/* Every kind at once, each on its own free counter (as many as there are
 * counters): one event's branches must not reach another's counter. */
static void all_at_once(const struct branch_kind *k, unsigned nk, uint32_t free)
{
	struct pmu_event ev[8], *evp[8];
	struct pmu_bracket_regs br;
	unsigned n = 0;
	bool was;

	for (unsigned x = 0; x < PMU_MAX_GP && n < nk && n < 8; x++) {
		struct pmu_event_attr a;
		if (!((free >> x) & 1))
			continue;
		pmu_attr_raw(&a, k[n].event, k[n].umask);
		pmu_event_init(&ev[n], &a, k[n].name);
		if (!check(pmu_event_add_idx(&ev[n], (int)x) == PMU_OK, "%s on counter %u: %s", k[n].name, x,
			   ev[n].reason))
			break;
		evp[n] = &ev[n];
		n++;
	}
	if (n < 2 ||
	    !check(pmu_events_arm(evp, n, &br) == PMU_OK, "arming %u branch events: %s", n, ev[0].reason)) {
		pmu_events_del(evp, n);
		return;
	}
	was = irq_save();
	kinds_window(&br, KINDS_ITERS);
	irq_restore(was);
	pmu_events_disarm(evp, n);
	for (unsigned i = 0; i < n; i++) {
		uint64_t want = (uint64_t)k[i].per_iter * KINDS_ITERS, got = pmu_event_count(&ev[i]);
		check(got == want, "%u kinds at once: %s on counter %d counted %lu, expected %lu", n,
		      k[i].name, ev[i].hw.idx, (unsigned long)got, (unsigned long)want);
	}
	pmu_events_del(evp, n);
}

/* AMD's EventSelect is 12 bits from family 10h: [7:0] in PerfEvtSel bits
 * 7:0 and [11:8] in bits 35:32 (APM vol. 2, 13.2.1, "PerfEvtSel"; K8's
 * is 8 bits). Event F_C0H is not C0H (retired instructions), nor F_C4H
 * C4H (retired taken branches): a PMU that drops bits 35:32 counts them
 * as those. Each pair runs over the branch-kind window, the high one
 * beside the plain one where GLOBAL_CTRL can start both (the taken
 * branches are then counted as they retire), else alone after it. */
static bool kinds_count(struct pmu_event *const *evp, unsigned n)
{
	struct pmu_bracket_regs br;
	bool was;

	if (!check(pmu_events_arm(evp, n, &br) == PMU_OK, "arming %s: %s", evp[0]->name, evp[0]->reason))
		return false;
	was = irq_save();
	kinds_window(&br, KINDS_ITERS);
	irq_restore(was);
	pmu_events_disarm(evp, n);
	return true;
}

static void amd_event_bits_11_8(uint32_t gp)
{
	static const struct {
		uint16_t event;
		const char *name;
	} plain[] = { { 0x0c0, "retired instructions (C0H)" }, { 0x0c4, "retired taken branches (C4H)" } };
	unsigned x0 = pmu_test_first_absent(~gp, PMU_MAX_GP);
	unsigned x1 = pmu_test_first_absent(~(gp & ~(1u << x0)), PMU_MAX_GP);
	bool together = pmu_caps()->global_ctrl;

	if (x1 >= PMU_MAX_GP) {
		diag("EventSelect[11:8] not checked: needs 2 free GP counters (mask %#x)", gp);
		return;
	}
	for (unsigned i = 0; i < 2; i++) {
		struct pmu_event_attr a;
		struct pmu_event lo, hi, *both[] = { &lo, &hi };
		uint64_t want = i ? 3 * KINDS_ITERS : 0;

		pmu_attr_raw(&a, plain[i].event, 0);
		pmu_event_init(&lo, &a, plain[i].name);
		pmu_attr_raw(&a, (uint16_t)(0xf00 | plain[i].event), 0);
		pmu_event_init(&hi, &a, "EventSelect F_xxH");
		if (!check(pmu_event_add_idx(&lo, (int)x0) == PMU_OK, "%s on counter %u: %s", lo.name, x0,
			   lo.reason))
			continue;
		if (!check(pmu_event_add_idx(&hi, (int)x1) == PMU_OK, "event %#x on counter %u: %s",
			   hi.attr.event, x1, hi.reason)) {
			pmu_event_del(&lo);
			continue;
		}
		bool ok = together ? kinds_count(both, 2)
				   : kinds_count(&both[0], 1) && kinds_count(&both[1], 1);
		if (ok) {
			uint64_t l = pmu_event_count(&lo), h = pmu_event_count(&hi);
			if (want)
				check(l == want, "%s on counter %u: %lu over %u taken branches", lo.name, x0,
				      (unsigned long)l, (unsigned)want);
			else
				check(l >= 4 * KINDS_ITERS,
				      "%s on counter %u: %lu over a window of at least %u instructions",
				      lo.name, x0, (unsigned long)l, 4 * KINDS_ITERS);
			check(h != l,
			      "event %#x on counter %u counted %lu, as %s did (%lu)%s: EventSelect[11:8] (PerfEvtSel bits 35:32) ignored",
			      hi.attr.event, x1, (unsigned long)h, lo.name, (unsigned long)l,
			      together ? " beside it" : " after it");
			diag("%s %lu, event %#x %lu", lo.name, (unsigned long)l, hi.attr.event,
			     (unsigned long)h);
		}
		pmu_event_del(&hi);
		pmu_event_del(&lo);
	}
}

/* C0H umask 01H: INST_RETIRED.ANY_P on Nehalem and Westmere (any GP
 * counter), INST_RETIRED.PREC_DIST from Sandy Bridge to Skylake (IA32_PMC1
 * only; SDM vol. 3B, the event tables of those microarchitectures):
 * instructions retired, over the branch-kind window 4n + 1 for the loop
 * and the JMP, 2 MOVs, and 0..2 for the bracket's WRMSRs. Ice Lake moved
 * PREC_DIST to fixed counter 0. */
static void inst_retired_umask1(const struct pmu_caps *c, uint32_t gp)
{
	unsigned x;
	struct pmu_event_attr a;
	struct pmu_event ev, *evp = &ev;

	switch (intel_core_uarch_of(c)) {
	case INTEL_NEHALEM:
	case INTEL_WESTMERE: x = pmu_test_first_absent(~gp, PMU_MAX_GP); break;
	case INTEL_SANDYBRIDGE:
	case INTEL_IVYBRIDGE:
	case INTEL_HASWELL:
	case INTEL_BROADWELL:
	case INTEL_SKYLAKE: x = (gp >> 1) & 1 ? 1 : PMU_MAX_GP; break;
	default: return;
	}
	if (x >= PMU_MAX_GP) {
		diag("C0H/01H not checked: its counter is not free (GP mask %#x)", gp);
		return;
	}
	pmu_attr_raw(&a, 0xc0, 0x01);
	pmu_event_init(&ev, &a, "INST_RETIRED (C0H umask 01H)");
	if (!check(pmu_event_add_idx(&ev, (int)x) == PMU_OK, "%s on counter %u: %s", ev.name, x, ev.reason))
		return;
	if (kinds_count(&evp, 1)) {
		uint64_t v = pmu_event_count(&ev), lo = 4 * KINDS_ITERS + 3;
		check(v >= lo && v <= lo + 2, "%s on IA32_PMC%u: %lu over a window of %lu..%lu instructions",
		      ev.name, x, (unsigned long)v, (unsigned long)lo, (unsigned long)(lo + 2));
		diag("%s on IA32_PMC%u: %lu", ev.name, x, (unsigned long)v);
	}
	pmu_event_del(&ev);
}

KTEST("pmu.count", branch_kinds, needs_kinds, KTEST_PER_CPU,
      "near calls, returns, taken branches: exact counts on every free GP counter")
{
	const struct pmu_caps *c = pmu_caps();
	uint32_t free = pmu_test_free_gp();
	unsigned nk = 0;
	const struct branch_kind *k = kinds_of(c, &nk);

	if (c->global_ctrl)
		all_at_once(k, nk, free);
	if (c->vendor == PMU_VENDOR_AMD && c->family >= 0x10)
		amd_event_bits_11_8(free);
	if (c->vendor == PMU_VENDOR_INTEL)
		inst_retired_umask1(c, free);

	for (unsigned x = 0; x < PMU_MAX_GP; x++) {
		if (!((free >> x) & 1))
			continue;
		for (unsigned i = 0; i < nk; i++) {
			struct pmu_event_attr a;
			struct pmu_event ev, *evp = &ev;
			struct pmu_bracket_regs br;
			uint64_t want = (uint64_t)k[i].per_iter * KINDS_ITERS, got;
			bool was;

			pmu_attr_raw(&a, k[i].event, k[i].umask);
			/* Once per kind, on the first free counter: USR only, and
			 * the window runs at CPL 0, so it counts nothing. */
			bool usr_only = x == (unsigned)__builtin_ctz(free);
			if (usr_only) {
				a.os = false;
				want = 0;
			}
			pmu_event_init(&ev, &a, k[i].name);
			if (!check(pmu_event_add_idx(&ev, (int)x) == PMU_OK, "%s on counter %u: %s",
				   k[i].name, x, ev.reason))
				continue;
			if (!check(pmu_events_arm(&evp, 1, &br) == PMU_OK, "arming %s on counter %u: %s",
				   k[i].name, x, ev.reason)) {
				pmu_event_del(&ev);
				continue;
			}
			was = irq_save();
			kinds_window(&br, KINDS_ITERS);
			irq_restore(was);
			pmu_events_disarm(&evp, 1);
			got = pmu_event_count(&ev);
			check(got == want,
			      "%s (event %#x umask %#x%s) on counter %u: %lu over %u calls, returns and "
			      "%u taken branches at CPL 0; expected %lu",
			      k[i].name, k[i].event, k[i].umask, usr_only ? ", USR only" : "", x,
			      (unsigned long)got, KINDS_ITERS, 3 * KINDS_ITERS, (unsigned long)want);
			pmu_event_del(&ev);
		}
	}
}

/* Reading a counter does not disturb it (SDM vol. 2B, RDPMC; vol. 3B,
 * "Architectural Performance Monitoring Version 2": a GLOBAL_STATUS bit
 * is set by that counter's overflow). Every free counter counts from 0
 * while the window reads one of them with RDPMC once per iteration:
 *   1: mov idx, %ecx ; rdpmc ; dec n ; jnz 1b
 * then three MOVs and the closing WRMSR. Instructions: 4n + 3, plus 0..2
 * for the WRMSRs as far as they count, measured as the exact checks do:
 * the least of PMU_TEST_TRIALS windows at n and 2n, their difference
 * exactly 4n, what is left at length 0 the 3 MOVs and 0..2 (a failure
 * goes to the known deviations as DEV_OBS_RETIRED, the n RDPMCs of the
 * difference named as instructions a VMM may intercept). Cycles at least
 * n (each DEC waits for the last). No counter comes near its wrap, so
 * none of their status bits may be set in any window.
 *
 * Silicon counts each RDPMC once. A VMM that intercepts RDPMC (KVM's
 * emulated vPMU: Linux arch/x86/kvm/svm/svm.c init_vmcb() sets
 * INTERCEPT_RDPMC) exits on each: on AMD the VMRUN back into the guest
 * counts as one more instruction (AMD-SVM-VMRUN-COUNTED-IN-GUEST, one per
 * RDPMC), and a KVM before v5.17 did not count the RDPMC it emulated
 * (KVM-PRE517-EMULATED-RDPMC-NOT-COUNTED). Those exits make the window
 * long, so under a VMM n is short enough (READ_VMM_ITERS) that the least
 * of the windows holds no asynchronous exit, and while the least counts
 * still differ by other than a whole number per RDPMC, or the part left
 * at length 0 is over the bracket's most by more than the one exit of its
 * enabling WRMSR, PMU_TEST_TRIALS more windows at each length, at most
 * PMU_TEST_EXIT_RERUNS rounds, each reported (pmu_test_measure_exact's
 * rule). */
#define READ_ITERS 1000
#define READ_VMM_ITERS 50
#define READ_MOVS 3

static void read_window(const struct pmu_bracket_regs *br, uint32_t idx, uint64_t n)
{
	uint32_t lo = (uint32_t)br->on, hi = (uint32_t)(br->on >> 32), cx = br->msr;

	__asm__ volatile("wrmsr\n"
			 "1:\n\t"
			 "mov %k[idx], %%ecx\n\t"
			 "rdpmc\n\t"
			 "dec %[n]\n\t"
			 "jnz 1b\n\t"
			 "mov %k[off_lo], %%eax\n\t"
			 "mov %k[off_hi], %%edx\n\t"
			 "mov %k[msr], %%ecx\n\t"
			 "wrmsr\n\t"
			 : [n] "+&r"(n), "+&a"(lo), "+&d"(hi), "+&c"(cx)
			 : [idx] "r"(idx), [msr] "r"(br->msr), [off_lo] "r"((uint32_t)br->off),
			   [off_hi] "r"((uint32_t)(br->off >> 32))
			 : "cc", "memory");
}

/* PMU_TEST_TRIALS read windows at each of m->len's lengths into m (least
 * and last counts); the GLOBAL_STATUS bits of each window into *status.
 * False after a failed check when arming failed. */
static bool read_trials(struct pmu_event *const *g, unsigned n, uint64_t bits, struct pmu_test_counts *m,
			bool first, uint64_t *status)
{
	const struct pmu_caps *c = pmu_caps();

	for (unsigned l = 0; l < 2; l++)
		for (unsigned t = 0; t < PMU_TEST_TRIALS; t++) {
			struct pmu_bracket_regs br;
			uint64_t st = 0;
			bool was;

			if (c->global_ovf)
				pmu_hw_wrmsr(c->global_ovf, bits);
			if (!check(pmu_events_arm(g, n, &br) == PMU_OK, "arming %u counters: %s", n,
				   g[0]->reason))
				return false;
			was = irq_save();
			read_window(&br, g[0]->hw.rdpmc_idx, m->len[l]);
			if (c->global_status)
				pmu_hw_rdmsr(c->global_status, &st);
			irq_restore(was);
			pmu_events_disarm(g, n);
			*status |= st;
			for (unsigned i = 0; i < n; i++) {
				uint64_t v = pmu_event_count(g[i]);
				m->last[i][l] = v;
				if ((first && t == 0) || v < m->min[i][l])
					m->min[i][l] = v;
			}
		}
	return true;
}

/* The instructions counter i's least counts as DEV_OBS_RETIRED: the
 * slope against 4 per iteration, what is left at length 0 (len[1] is
 * 2 len[0]: 2 v0 - v1) less the MOVs. */
static struct dev_obs read_obs(const struct pmu_test_counts *m, unsigned i)
{
	struct dev_obs o = { .kind = DEV_OBS_RETIRED, .pc = pmu_this_cpu() };
	int64_t v0 = (int64_t)m->min[i][0], v1 = (int64_t)m->min[i][1];

	o.retired.slope_error = v1 - v0 - 4 * (int64_t)(m->len[1] - m->len[0]);
	o.retired.intercept = 2 * v0 - v1 - READ_MOVS;
	o.retired.intercept_max = PMU_BRACKET_WRMSRS;
	o.retired.intercepted = (int64_t)(m->len[1] - m->len[0]);
	return o;
}

/* Under a VMM: the first instructions counter whose least counts are
 * not yet settled (see above), or n. */
static unsigned read_unsettled(const struct pmu_test_counts *m, struct pmu_event *const *g, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (g[i]->attr.arch != PMU_ARCH_INSTRUCTIONS || m->min[i][0] == 0)
			continue;
		struct dev_obs o = read_obs(m, i);
		if (o.retired.slope_error % o.retired.intercepted != 0 ||
		    o.retired.intercept > o.retired.intercept_max + 1)
			return i;
	}
	return n;
}

KTEST("pmu.count", read_while_counting, pmu_needs_global_ctrl, KTEST_PER_CPU,
      "RDPMC of running counters: counts in bounds, no status bit set")
{
	const struct pmu_caps *c = pmu_caps();
	static struct pmu_event *all_evs[MAX_CPUS];
	unsigned cpu = this_cpu()->cpu;
	if (!all_evs[cpu])
		all_evs[cpu] = bootmem_alloc(PMU_IDX_NR * sizeof(*all_evs[cpu]));
	struct pmu_event *evs = all_evs[cpu], *g[PMU_IDX_NR];
	uint32_t gp = pmu_test_free_gp(), fx = pmu_test_free_fixed();
	unsigned n = 0, k = 0;
	uint64_t status = 0, bits = 0;
	struct pmu_test_counts *m = pmu_test_counts_here();
	bool vmm = c->hypervisor && c->hv != PMU_HV_TCG;

	pmu_test_need_gp_event(PMU_ARCH_INSTRUCTIONS);
	pmu_test_need_gp_event(PMU_ARCH_CYCLES);
	for (unsigned x = 0; x < PMU_MAX_GP; x++) {
		if (!((gp >> x) & 1))
			continue;
		pmu_test_event(&evs[n], k++ % 2 ? PMU_ARCH_CYCLES : PMU_ARCH_INSTRUCTIONS);
		if (check(pmu_event_add_idx(&evs[n], (int)x) == PMU_OK, "IA32_PMC%u: %s", x, evs[n].reason))
			g[n] = &evs[n], n++;
	}
	for (unsigned i = 0; i < 2; i++) {
		if (!((fx >> i) & 1) || pmu_arch_event_of_fixed(i) == PMU_ARCH_NONE)
			continue;
		pmu_test_event(&evs[n], pmu_arch_event_of_fixed(i));
		if (check(pmu_event_add_idx(&evs[n], PMU_IDX_FIXED(i)) == PMU_OK, "IA32_FIXED_CTR%u: %s", i,
			  evs[n].reason))
			g[n] = &evs[n], n++;
	}
	if (n == 0)
		ktest_skip("no free counter (GP %#x, fixed %#x)", gp, fx);
	for (unsigned i = 0; i < n; i++)
		bits |= pmu_idx_bit(g[i]->hw.idx);
	memset(m, 0, sizeof(*m));
	m->n = n;
	m->evs = g;
	m->len[0] = vmm ? READ_VMM_ITERS : READ_ITERS;
	m->len[1] = 2 * m->len[0];
	if (!read_trials(g, n, bits, m, true, &status)) {
		pmu_events_del(g, n);
		return;
	}
	for (unsigned round = 1; c->hypervisor && round <= PMU_TEST_EXIT_RERUNS; round++) {
		unsigned i = read_unsettled(m, g, n);
		if (i == n)
			break;
		char where[24];
		struct dev_obs o = read_obs(m, i);
		pmu_idx_name(c, g[i]->hw.idx, where, sizeof(where));
		diag("instructions on %s: least %lu and %lu at %lu and %lu iterations, %+ld against the loop's difference, %ld at length 0: a window of every trial of one length held more (a VM exit inside it, under a hypervisor): %u more at each length (round %u of at most %u)",
		     where, m->min[i][0], m->min[i][1], m->len[0], m->len[1], o.retired.slope_error,
		     o.retired.intercept, PMU_TEST_TRIALS, round, PMU_TEST_EXIT_RERUNS);
		if (!read_trials(g, n, bits, m, false, &status)) {
			pmu_events_del(g, n);
			return;
		}
	}
	check(!(status & bits),
	      "GLOBAL_STATUS %#lx after windows of RDPMCs of running counters (%#lx), none near its wrap: expected none of their bits",
	      status, bits);
	for (unsigned i = 0; i < n; i++) {
		char where[24];

		pmu_idx_name(c, g[i]->hw.idx, where, sizeof(where));
		if (g[i]->attr.arch == PMU_ARCH_INSTRUCTIONS) {
			struct dev_obs o = read_obs(m, i);
			check_or_deviation(
				o.retired.slope_error == 0 && o.retired.intercept >= 0 &&
					o.retired.intercept <= o.retired.intercept_max,
				&o,
				"instructions on %s: least %lu and %lu over %lu and %lu iterations of MOV, RDPMC, DEC, JNZ: expected them to differ by exactly %lu (4 per iteration) and length 0 to hold the %u MOVs and 0..%u; %+ld against the loop, length 0 %ld more than the MOVs",
				where, m->min[i][0], m->min[i][1], m->len[0], m->len[1],
				4 * (m->len[1] - m->len[0]), READ_MOVS, PMU_BRACKET_WRMSRS,
				o.retired.slope_error, o.retired.intercept);
		} else if (!vmm) {
			for (unsigned l = 0; l < 2; l++)
				check(m->last[i][l] >= m->len[l] && m->last[i][l] <= 400 * m->len[l] + 100000,
				      "cycles on %s: %lu over %lu dependent iterations; expected %lu..%lu",
				      where, m->last[i][l], m->len[l], m->len[l], 400 * m->len[l] + 100000);
		}
		/* Under a VMM a guest's cycles may hold the VMM's own time, or
		 * the host may hold the counter: the counting checks judge
		 * cycles there with their deviation rows and the unscheduled-
		 * counter rule; here they are reported. */
		diag("%s on %s: least %lu and %lu at %lu and %lu iterations", g[i]->name, where, m->min[i][0],
		     m->min[i][1], m->len[0], m->len[1]);
	}
	pmu_events_del(g, n);
}
