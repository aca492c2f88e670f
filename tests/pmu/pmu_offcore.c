/* Offcore response checks on each CPU (Intel models with a table row in
 * pmu/intel/offcore.c, the row of the CPU's own core on hybrid parts):
 * demand-data-read L3 misses of a pointer chase over a buffer four times
 * the LLC, few over one the LLC holds, and near zero over one inside L1. */
#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "modes/workloads.h"
#include "pmu/intel/offcore.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/ktest.h"
#include "tests/pmu/pmu_cache.h"
#include "tests/pmu/pmu_common.h"

/* The big buffer is LLC x OFFCORE_BIG_FACTOR, at most OFFCORE_BIG_MAX (boot
 * memory is never freed; one buffer serves every CPU, the tests run one CPU
 * at a time). */
#define OFFCORE_BIG_FACTOR 4
#define OFFCORE_BIG_MAX (256ull << 20)
/* Near zero over L1: the counter-control code around the window touches a
 * few lines of its own (event structures, stack) that may miss everything. */
#define OFFCORE_L1_SLACK 64
/* Passes over the L1 buffer inside the window. */
#define OFFCORE_L1_PASSES 100
/* Misses the enable/disable code itself may add to the big window. */
#define OFFCORE_BIG_SLACK 1024

static const char *offcore_needs(void)
{
	const char *why = pmu_needs_counting();
	const struct pmu_offcore_model *m;
	const struct pmu_caps *c;
	uint64_t v;
	int vec;

	if (why)
		return why;
	c = pmu_caps();
	if (c->vendor != PMU_VENDOR_INTEL)
		return ktest_reason("offcore response is an Intel facility (vendor %s)", c->vendor_id);
	if (!(m = pmu_offcore_model(c)))
		return ktest_reason("no offcore response table for family %u model %#x", c->family, c->model);
	/* The table knows the MSRs but no published value counts what the
	 * checks need: say which event file lacks it rather than guess. */
	if (!m->dmnd_rd_l3_miss)
		return ktest_reason("no DMND_DATA_RD L3-miss value for %s (family %u model %#x): %s", m->name,
				    c->family, c->model, m->no_l3_miss_why);
	/* A hypervisor may run the core PMU but not expose the RSP (or OMR)
	 * MSRs; one that ignores MSRs it does not implement (KVM's
	 * ignore_msrs=Y) reads them as 0 and drops writes: a valid value must
	 * read back. */
	uint32_t msr = pmu_offcore_msr(m, 0);
	char name[40];
	pmu_offcore_msr_name(msr, name, sizeof(name));
	if ((vec = pmu_hw_rdmsr(msr, &v)) != 0)
		return ktest_reason("%s raised vector %d on family %u model %#x%s", name, vec, c->family,
				    c->model, c->hypervisor ? " (hypervisor does not expose it)" : "");
	uint64_t want = m->dmnd_rd_l3_miss, back = 0;
	if (pmu_offcore_users(pmu_cpu_ensure(), 0) == 0) {
		vec = pmu_hw_wrmsr(msr, want);
		if (vec == 0)
			pmu_hw_rdmsr(msr, &back);
		pmu_hw_wrmsr(msr, v);
		if (vec != 0 || back != want)
			return ktest_reason("%s <- %#lx: vector %d, read back %#lx on family %u model %#x%s",
					    name, want, vec, back, c->family, c->model,
					    c->hypervisor ? " (the hypervisor does not implement it)" : "");
	}
	return NULL;
}

/* The values a window counts: the row's L3-miss value on RSP_0 and, where
 * it is a superset of Intel's own event (Skylake), Intel's on RSP_1. */
struct offcore_counts {
	unsigned n;
	uint64_t rsp[2], count[2];
	const char *name[2];
};

/* Count the values of `o` over hops of the chase from p, together (one
 * GLOBAL_CTRL write starts and stops both), after `warm` hops that run
 * with the counters enabled but are not counted (their counts are read
 * and taken off). Interrupts are off inside. */
static bool measure_values(const void *p, uint64_t warm, uint64_t hops, struct offcore_counts *o)
{
	uint64_t before[2] = { 0, 0 };
	const struct pmu_offcore_model *m = pmu_offcore_model(pmu_caps());
	struct pmu_event_attr a;
	struct pmu_event ev[2];
	struct pmu_event *g[2] = { &ev[0], &ev[1] };
	bool irq;
	int err;

	for (unsigned i = 0; i < o->n; i++) {
		pmu_offcore_attr(&a, m, (int)i, o->rsp[i]);
		pmu_event_init(&ev[i], &a,
			       m->omr ? (i ? "OMR_1" : "OMR_0")
				      : (i ? "OFFCORE_RESPONSE_1" : "OFFCORE_RESPONSE_0"));
	}
	err = pmu_events_add(g, o->n);
	if (!check(err == PMU_OK, "adding the offcore events failed (%d): %s", err, ev[0].reason))
		return false;
	irq = irq_save();
	err = pmu_events_enable(g, o->n);
	if (err == PMU_OK) {
		p = pmu_cache_chase(p, warm);
		for (unsigned i = 0; warm && i < o->n; i++)
			before[i] = pmu_event_update(&ev[i]);
		pmu_cache_chase(p, hops);
		err = pmu_events_disable(g, o->n);
	}
	irq_restore(irq);
	check(err == PMU_OK, "enable/disable failed (%d): %s", err, ev[0].reason);
	for (unsigned i = 0; i < o->n; i++) {
		o->count[i] = pmu_event_count(&ev[i]) - before[i];
		char via[40];
		diag("%s: offcore_rsp=%#llx (%s) on %s via %s, event %#llx, over %lu hops: %lu", ev[i].name,
		     (unsigned long long)o->rsp[i], o->name[i], m->name,
		     pmu_offcore_msr_name(ev[i].hw.extra_msr, via, sizeof(via)),
		     (unsigned long long)(ev[i].hw.config & 0xffff), hops, o->count[i]);
	}
	pmu_events_del(g, o->n);
	return err == PMU_OK;
}

/* The row's L3-miss value on RSP_0 and, where it has one, Intel's own on RSP_1. */
static bool measure(const void *p, uint64_t warm, uint64_t hops, struct offcore_counts *o)
{
	const struct pmu_offcore_model *m = pmu_offcore_model(pmu_caps());

	o->n = m->intel_l3_miss ? 2 : 1;
	o->rsp[0] = m->dmnd_rd_l3_miss, o->name[0] = m->l3_miss_name;
	o->rsp[1] = m->intel_l3_miss, o->name[1] = m->intel_l3_miss_name;
	return measure_values(p, warm, hops, o);
}

/*
 * The chase visits every node of a buffer four times the LLC once, in a
 * random cyclic order (Sattolo), one dependent load per node: the stride
 * and stream prefetchers see no pattern to run ahead of. A node's line is
 * still in the LLC when visited with probability at most LLC/buffer = 1/4,
 * so at least 3/4 of the hops miss the L3 by capacity alone; the
 * adjacent-line (spatial) prefetcher can turn at most one demand miss of
 * each 128-byte pair into a hit, which leaves >= 3/8. The check asks for
 * >= 1/4 of the hops (margin for non-LRU replacement and for lines the
 * build left dirty in the LLC), and at most one miss per hop plus the
 * control code's own.
 */
KTEST("pmu.offcore", dmnd_rd_l3_miss_over_big_buffer, offcore_needs, KTEST_PER_CPU,
      "L3-miss demand reads over a chase of 4 x LLC, bounded by the hops")
{
	const struct pmu_offcore_model *m = pmu_offcore_model(pmu_caps());
	struct pmu_cache_geom g;
	struct offcore_counts o;
	uint64_t bytes, hops, lo;
	const void *buf;

	if (!pmu_cache_geom(&g))
		ktest_skip("CPUID.04H lists no data cache: no LLC size to size the buffer from");
	bytes = g.llc * OFFCORE_BIG_FACTOR;
	if (bytes > OFFCORE_BIG_MAX)
		bytes = OFFCORE_BIG_MAX;
	bytes &= ~(uint64_t)(PMU_CHASE_NODE - 1);
	buf = pmu_cache_chase_buffer(0, bytes, 0x6f6666636f7265ull + pmu_hw_cpu());
	hops = bytes / PMU_CHASE_NODE;
	lo = hops / 4;
	diag("L%u %lu KiB, line %u, buffer %lu KiB (%lu hops); RSP MSRs %s", g.llc_level, g.llc >> 10, g.line,
	     bytes >> 10, hops,
	     m->smt_shared ? "shared with the SMT sibling (idle during the test)" : "per thread");
	if (bytes < g.llc * OFFCORE_BIG_FACTOR)
		diag("buffer capped at %llu MiB: below %u x LLC, the 1/4 bound is not guaranteed",
		     OFFCORE_BIG_MAX >> 20, OFFCORE_BIG_FACTOR);
	if (!measure(buf, 0, hops, &o))
		return;
	check(o.count[0] >= lo,
	      "demand-data-read L3 misses: expected >= %lu (1/4 of %lu hops over %lu KiB, 4 x LLC), saw %lu",
	      lo, hops, bytes >> 10, o.count[0]);
	check(o.count[0] <= hops + OFFCORE_BIG_SLACK,
	      "demand-data-read L3 misses: expected <= %lu (one per hop + %u), saw %lu",
	      hops + OFFCORE_BIG_SLACK, OFFCORE_BIG_SLACK, o.count[0]);
	/* Every response Intel's event selects the checked value selects
	 * too, field by field, and both count in the same window: never more. */
	if (o.n > 1) {
		check(o.count[1] >= lo, "%s: expected >= %lu (1/4 of %lu hops), saw %lu", o.name[1], lo, hops,
		      o.count[1]);
		check(o.count[1] <= o.count[0],
		      "%s (%#llx): expected <= the superset %#llx's %lu in the same window, saw %lu",
		      o.name[1], (unsigned long long)o.rsp[1], (unsigned long long)o.rsp[0], o.count[0],
		      o.count[1]);
	}
	/* RSP_0 on its own (the window above armed RSP_1 beside it): the
	 * same value counts the same misses with no other select armed. */
	if (o.n > 1) {
		struct offcore_counts a = { .n = 1, .rsp = { o.rsp[0] }, .name = { o.name[0] } };

		if (measure_values(buf, 0, hops, &a)) {
			check(a.count[0] >= lo,
			      "%s alone on RSP_0: expected >= %lu (1/4 of %lu hops), saw %lu", a.name[0], lo,
			      hops, a.count[0]);
			check(a.count[0] <= hops + OFFCORE_BIG_SLACK,
			      "%s alone on RSP_0: expected <= %lu (one per hop + %u), saw %lu", a.name[0],
			      hops + OFFCORE_BIG_SLACK, OFFCORE_BIG_SLACK, a.count[0]);
		}
	}
	/* The snoop field filters too: the same misses from local DRAM, but
	 * only those whose snoop found the line modified in another core,
	 * which a chase no other core touches never has (at most the control
	 * code's own). */
	if (m->dram_hitm) {
		struct offcore_counts h = { .n = 1, .rsp = { m->dram_hitm }, .name = { m->dram_hitm_name } };

		if (measure_values(buf, 0, hops, &h))
			check(h.count[0] <= OFFCORE_BIG_SLACK,
			      "%s (%#llx) over the same chase: expected <= %u, saw %lu (the snoop field not applied?)",
			      h.name[0], (unsigned long long)h.rsp[0], OFFCORE_BIG_SLACK, h.count[0]);
	}
}

/*
 * Half the LLC (at most 8 x L2), walked once with the counters enabled and
 * not counted, then twice counted: after the first walk every line is in
 * the LLC, so the hops that miss L2 (most of them) are L3 hits and the
 * L3-miss value must count few. The bound, a quarter of the hops, leaves
 * room for non-LRU replacement and the lines other cores' traffic evicts;
 * a value that counted L3 hits too would see nearly every hop.
 */
KTEST("pmu.offcore", dmnd_rd_l3_miss_over_llc_resident, offcore_needs, KTEST_PER_CPU,
      "DMND_DATA_RD.L3_MISS over a warm chase that fits the LLC: < hops / 4")
{
	struct pmu_cache_geom g;
	struct offcore_counts o;
	uint64_t bytes, nodes;
	const void *buf;

	if (!pmu_cache_geom(&g) || !g.l2 || g.llc <= 2 * g.l2)
		ktest_skip(
			"CPUID.04H lists no L2 below an LLC twice its size: no buffer misses L2 and fits the LLC");
	bytes = 8 * g.l2;
	if (bytes > g.llc / 2)
		bytes = g.llc / 2;
	bytes &= ~(uint64_t)(PMU_CHASE_NODE - 1);
	nodes = bytes / PMU_CHASE_NODE;
	buf = pmu_cache_chase_buffer(3, bytes, 0x4c4c43ull + pmu_hw_cpu());
	if (!measure(buf, nodes, 2 * nodes, &o))
		return;
	diag("buffer %lu KiB (L2 %lu KiB, L%u %lu KiB), %lu hops counted", bytes >> 10, g.l2 >> 10,
	     g.llc_level, g.llc >> 10, 2 * nodes);
	for (unsigned i = 0; i < o.n; i++)
		check(o.count[i] < 2 * nodes / 4,
		      "%s over a warm %lu KiB buffer (LLC %lu KiB): expected < %lu (a quarter of %lu hops), saw %lu",
		      o.name[i], bytes >> 10, g.llc >> 10, 2 * nodes / 4, 2 * nodes, o.count[i]);
}

/* Half the L1D, walked twice with the counters already enabled (so that
 * a cache model which only watches while something counts sees the walk
 * too, as the emulated PMU does), those counts read and taken off: every
 * line is in L1 when the counted passes start and stays there (the chase
 * touches nothing else), so no demand read goes off the core; the slack
 * is the control code's. */
KTEST("pmu.offcore", dmnd_rd_l3_miss_inside_l1, offcore_needs, KTEST_PER_CPU,
      "DMND_DATA_RD.L3_MISS over a warm half of L1D: at most 64")
{
	struct pmu_cache_geom g;
	struct offcore_counts o;
	uint64_t bytes, nodes;
	const void *buf;

	if (!pmu_cache_geom(&g) || !g.l1d)
		ktest_skip("CPUID.04H lists no L1 data cache");
	bytes = (g.l1d / 2) & ~(uint64_t)(PMU_CHASE_NODE - 1);
	nodes = bytes / PMU_CHASE_NODE;
	buf = pmu_cache_chase_buffer(1, bytes, 0x4c31ull + pmu_hw_cpu());
	if (!measure(buf, 2 * nodes, OFFCORE_L1_PASSES * nodes, &o))
		return;
	for (unsigned i = 0; i < o.n; i++)
		check(o.count[i] <= OFFCORE_L1_SLACK,
		      "%s over a %lu KiB buffer (L1D %lu KiB): expected <= %u, saw %lu", o.name[i],
		      bytes >> 10, g.l1d >> 10, OFFCORE_L1_SLACK, o.count[i]);
}

/* --- Off-module response: the four MSRs at once --- */

static const char *omr_needs(void)
{
	const char *why = offcore_needs();
	const struct pmu_offcore_model *m;

	if (why)
		return why;
	m = pmu_offcore_model(pmu_caps());
	if (!m->omr || !m->dmnd_rd_any)
		return ktest_reason(
			"no off-module response MSRs on %s: its offcore response is MSR_OFFCORE_RSP_0/1",
			m->name);
	return NULL;
}

/*
 * One event on each OMR MSR, in one window over the warm LLC-resident
 * chase of dmnd_rd_l3_miss_over_llc_resident: OMR_0 and OMR_2 hold the
 * L3-miss value (OMR_2 with the RFO request bit added, so that the values
 * differ and take an MSR each), OMR_1 and OMR_3 the any-response value
 * (likewise). Each MSR reads back its own value while they count; the
 * L3-miss events count fewer than a quarter of the hops, as there, and the
 * any-response events at least a quarter: the buffer is at least twice the
 * L2 (8 x L2, at most half the LLC; the check SKIPs where that is less),
 * so at least half the hops leave the module, and at most every other one
 * of those is made an L2 hit by the adjacent-line prefetcher. An MSR that took another's value, or a
 * select that counted through another MSR, shows as a miss count where an
 * any count belongs or the reverse.
 */
KTEST("pmu.offcore", omr_each_msr, omr_needs, KTEST_PER_CPU,
      "OMR_0-3 at once: each holds its value, L3-miss and any counts apart")
{
	const struct pmu_offcore_model *m = pmu_offcore_model(pmu_caps());
	const uint64_t rfo = 0x2; /* request bit 1, demand RFO: the chase only loads */
	uint64_t val[4] = { m->dmnd_rd_l3_miss, m->dmnd_rd_any, m->dmnd_rd_l3_miss | rfo,
			    m->dmnd_rd_any | rfo };
	static const char *const names[4] = { "OMR_0 L3 miss", "OMR_1 any response", "OMR_2 L3 miss (+RFO)",
					      "OMR_3 any response (+RFO)" };
	struct pmu_event ev[4];
	struct pmu_event *g[4] = { &ev[0], &ev[1], &ev[2], &ev[3] };
	struct pmu_cache_geom geo;
	struct pmu_event_attr a;
	uint64_t bytes, nodes, before[4], back[4], count[4];
	const void *buf, *p;
	char name[40];
	bool irq;
	int err;

	if (!pmu_cache_geom(&geo) || !geo.l2 || geo.llc <= 2 * geo.l2)
		ktest_skip(
			"CPUID.04H lists no L2 below an LLC twice its size: no buffer misses L2 and fits the LLC");
	if (pmu_test_free_gp() != pmu_caps()->gp_mask)
		ktest_skip("a GP counter is held elsewhere (free %#x): the four OMR selects need four",
			   pmu_test_free_gp());
	bytes = 8 * geo.l2;
	if (bytes > geo.llc / 2)
		bytes = geo.llc / 2;
	bytes &= ~(uint64_t)(PMU_CHASE_NODE - 1);
	if (bytes < 2 * geo.l2)
		ktest_skip(
			"half the LLC (%lu KiB) is less than twice the L2 (%lu KiB): no buffer surely leaves the "
			"module on half its hops and fits the LLC",
			geo.llc >> 11, geo.l2 >> 10);
	nodes = bytes / PMU_CHASE_NODE;
	buf = pmu_cache_chase_buffer(3, bytes, 0x4c4c43ull + pmu_hw_cpu());
	for (unsigned i = 0; i < 4; i++) {
		pmu_offcore_attr(&a, m, (int)i, val[i]);
		pmu_event_init(&ev[i], &a, names[i]);
	}
	err = pmu_events_add(g, 4);
	if (!check(err == PMU_OK, "adding the four OMR events failed (%d): %s", err, ev[0].reason))
		return;
	for (unsigned i = 0; i < 4; i++)
		check(ev[i].hw.extra_msr == MSR_OMR_0 + i, "%s: placed on %s, expected MSR_OMR_%u (%#x)",
		      names[i], pmu_offcore_msr_name(ev[i].hw.extra_msr, name, sizeof(name)), i,
		      MSR_OMR_0 + i);
	irq = irq_save();
	err = pmu_events_enable(g, 4);
	if (err == PMU_OK) {
		p = pmu_cache_chase(buf, nodes);
		for (unsigned i = 0; i < 4; i++)
			before[i] = pmu_event_update(&ev[i]);
		pmu_cache_chase(p, 2 * nodes);
		err = pmu_events_disable(g, 4);
	}
	irq_restore(irq);
	for (unsigned i = 0; i < 4; i++)
		if (pmu_hw_rdmsr(MSR_OMR_0 + i, &back[i]) != 0)
			back[i] = ~0ull;
	check(err == PMU_OK, "enable/disable failed (%d): %s", err, ev[0].reason);
	for (unsigned i = 0; i < 4; i++) {
		count[i] = pmu_event_count(&ev[i]) - before[i];
		check(back[i] == val[i],
		      "MSR_OMR_%u reads %#lx after the window, expected the %#lx it was given", i, back[i],
		      val[i]);
		diag("%s: %#lx via %s, event %#llx, over %lu hops of a warm %lu KiB chase: %lu", names[i],
		     val[i], pmu_offcore_msr_name(ev[i].hw.extra_msr, name, sizeof(name)),
		     (unsigned long long)(ev[i].hw.config & 0xffff), 2 * nodes, bytes >> 10, count[i]);
	}
	pmu_events_del(g, 4);
	if (err != PMU_OK)
		return;
	for (unsigned i = 0; i < 4; i += 2)
		check(count[i] < 2 * nodes / 4,
		      "%s over a warm %lu KiB buffer (LLC %lu KiB): expected < %lu, saw %lu", names[i],
		      bytes >> 10, geo.llc >> 10, 2 * nodes / 4, count[i]);
	for (unsigned i = 1; i < 4; i += 2)
		check(count[i] >= 2 * nodes / 4 && count[i] <= 2 * nodes + OFFCORE_BIG_SLACK,
		      "%s over a warm %lu KiB buffer (L2 %lu KiB): expected %lu..%lu (a quarter of the hops to one "
		      "per hop), saw %lu",
		      names[i], bytes >> 10, geo.l2 >> 10, 2 * nodes / 4, 2 * nodes + OFFCORE_BIG_SLACK,
		      count[i]);
}
