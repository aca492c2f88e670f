/* Offcore response checks on each CPU (Intel models with a table row in
 * pmu/intel_offcore.c): demand-data-read L3 misses of a pointer chase over a
 * buffer four times the LLC, and near zero over a buffer inside L1. */
#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "modes/workloads.h"
#include "pmu/intel_offcore.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/ktest.h"
#include "tests/pmu_cache.h"
#include "tests/pmu_common.h"

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
	const struct pmu_caps *c;
	uint64_t v;
	int vec;

	if (why)
		return why;
	c = pmu_caps();
	if (c->vendor != PMU_VENDOR_INTEL)
		return ktest_reason("offcore response is an Intel facility (vendor %s)", c->vendor_id);
	if (!pmu_offcore_model(c))
		return ktest_reason("no offcore response table for family %u model %#x", c->family, c->model);
	/* A hypervisor may run the core PMU but not expose the RSP MSRs; one
	 * that ignores MSRs it does not implement (KVM's ignore_msrs=Y) reads
	 * them as 0 and drops writes: a valid value must read back. */
	if ((vec = pmu_hw_rdmsr(MSR_OFFCORE_RSP_0, &v)) != 0)
		return ktest_reason("MSR_OFFCORE_RSP_0 (0x1a6) raised vector %d on family %u model %#x%s",
				    vec, c->family, c->model,
				    c->hypervisor ? " (hypervisor does not expose it)" : "");
	uint64_t want = pmu_offcore_model(c)->dmnd_rd_l3_miss, back = 0;
	if (pmu_cpu_ensure()->extra_users[0] == 0) {
		vec = pmu_hw_wrmsr(MSR_OFFCORE_RSP_0, want);
		if (vec == 0)
			pmu_hw_rdmsr(MSR_OFFCORE_RSP_0, &back);
		pmu_hw_wrmsr(MSR_OFFCORE_RSP_0, v);
		if (vec != 0 || back != want)
			return ktest_reason(
				"MSR_OFFCORE_RSP_0 (0x1a6) <- %#lx: vector %d, read back %#lx on family %u model %#x%s",
				want, vec, back, c->family, c->model,
				c->hypervisor ? " (the hypervisor does not implement it)" : "");
	}
	return NULL;
}

/* Count OFFCORE_RESPONSE_0 with the model's DMND_DATA_RD + L3-miss value
 * over hops of the chase from p. Interrupts are off inside the window. */
static bool measure(const void *p, uint64_t hops, uint64_t *count)
{
	const struct pmu_offcore_model *m = pmu_offcore_model(pmu_caps());
	struct pmu_event_attr a;
	struct pmu_event ev;
	bool irq;
	int err;

	pmu_attr_raw(&a, PMU_OFFCORE_EVENT_0, PMU_OFFCORE_UMASK);
	a.offcore_rsp = m->dmnd_rd_l3_miss;
	pmu_event_init(&ev, &a, "OFFCORE_RESPONSE.DEMAND_DATA_RD.L3_MISS");
	err = pmu_event_add(&ev);
	if (!check(err == PMU_OK, "adding the offcore event failed (%d): %s", err, ev.reason))
		return false;
	irq = irq_save();
	err = pmu_event_enable(&ev);
	if (err == PMU_OK) {
		pmu_cache_chase(p, hops);
		err = pmu_event_disable(&ev);
	}
	irq_restore(irq);
	check(err == PMU_OK, "enable/disable failed (%d): %s", err, ev.reason);
	*count = pmu_event_count(&ev);
	diag("%s (offcore_rsp=%#llx on %s via %s) over %lu hops: %lu", ev.name,
	     (unsigned long long)a.offcore_rsp, m->name,
	     ev.hw.extra_msr == MSR_OFFCORE_RSP_1 ? "RSP_1" : "RSP_0", hops, *count);
	pmu_event_del(&ev);
	return err == PMU_OK;
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
	uint64_t bytes, hops, count, lo;
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
	if (!measure(buf, hops, &count))
		return;
	check(count >= lo,
	      "demand-data-read L3 misses: expected >= %lu (1/4 of %lu hops over %lu KiB, 4 x LLC), saw %lu",
	      lo, hops, bytes >> 10, count);
	check(count <= hops + OFFCORE_BIG_SLACK,
	      "demand-data-read L3 misses: expected <= %lu (one per hop + %u), saw %lu",
	      hops + OFFCORE_BIG_SLACK, OFFCORE_BIG_SLACK, count);
}

/* Half the L1D, walked twice before the window: every line is in L1 when
 * the window opens and stays there (the chase touches nothing else), so no
 * demand read goes off the core; the slack is the control code's. */
KTEST("pmu.offcore", dmnd_rd_l3_miss_inside_l1, offcore_needs, KTEST_PER_CPU,
      "DMND_DATA_RD.L3_MISS over a warm half of L1D: at most 64")
{
	struct pmu_cache_geom g;
	uint64_t bytes, nodes, count;
	const void *buf;

	if (!pmu_cache_geom(&g) || !g.l1d)
		ktest_skip("CPUID.04H lists no L1 data cache");
	bytes = (g.l1d / 2) & ~(uint64_t)(PMU_CHASE_NODE - 1);
	nodes = bytes / PMU_CHASE_NODE;
	buf = pmu_cache_chase_buffer(1, bytes, 0x4c31ull + pmu_hw_cpu());
	pmu_cache_chase(buf, 2 * nodes);
	if (!measure(buf, OFFCORE_L1_PASSES * nodes, &count))
		return;
	check(count <= OFFCORE_L1_SLACK,
	      "demand-data-read L3 misses over a %lu KiB buffer (L1D %lu KiB): expected <= %u, saw %lu",
	      bytes >> 10, g.l1d >> 10, OFFCORE_L1_SLACK, count);
}
