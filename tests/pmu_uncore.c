/* Client uncore check, once per package from the BSP: LLC lookups counted
 * by all C-boxes over a chase that misses L2 and hits the LLC, against the
 * core's architectural LLC-references count over the same window. */
#include "arch/x86/cpu.h"
#include "modes/workloads.h"
#include "pmu/intel_uncore.h"
#include "pmu/pmu.h"
#include "tests/ktest.h"
#include "tests/pmu_cache.h"
#include "tests/pmu_common.h"

/* Lookups the window may see besides the chase: the counter-control code,
 * the idle APs' timer and halt traffic, snoops. */
#define UNCORE_SLACK 4096
#define UNCORE_PASSES 2

static struct pmu_uncore uncore;

static const char *uncore_needs(void)
{
	const char *why;

	if (!pmu_cpu_ensure())
		return "CPU index beyond PMU_MAX_CPUS";
	/* The uncore's own reason first: it names the model (server parts,
	 * other vendors, MSRs a hypervisor does not expose). */
	if (pmu_uncore_detect(&uncore, pmu_caps()) != PMU_OK)
		return ktest_reason("%s", uncore.why);
	if ((why = pmu_needs_counting()) != NULL)
		return why;
	if (!((pmu_caps()->events_avail >> PMU_ARCH_LLC_REFERENCES) & 1))
		return ktest_reason(
			"LLC references (0x2E/0x4F) not available on GP counters (CPUID.0AH:EBX %#x)",
			pmu_caps()->events_unavail);
	if ((why = pmu_uncore_probe(&uncore)) != NULL)
		return ktest_reason("%s", why);
	return NULL;
}

/*
 * The workload: a random cyclic chase over a buffer of 8 x L2 (at most half
 * the LLC), warmed by one pass, then UNCORE_PASSES passes in the window.
 * Every hop is a dependent load of a line that is not in L2 with
 * probability >= 7/8 and is in the LLC, so it becomes one LLC request: the
 * core counts it as an LLC reference (SDM vol. 3B, "Pre-defined
 * Architectural Performance Events": requests from the core that reference
 * the LLC) and exactly one C-box (the slice its address hashes to) counts
 * it as a lookup (UNC_CBO_CACHE_LOOKUP, any request, any state).
 *
 * Bounds: lookups >= references / 2, because the C-boxes see every core
 * request; the factor leaves room for references the core counts that a
 * slice merges (two requests to one line in flight) and for the window
 * edges. lookups <= 3 x references + UNCORE_SLACK, because besides each
 * reference a slice may look up the line's adjacent-line prefetch (1 per
 * hop at most) and the write-back of a dirty L2 victim the buffer build
 * left (1 per line at most), plus traffic from outside the chase.
 * Each box must see at least 1/(4n) of the total: the slice hash spreads
 * consecutive lines over all n slices (a box counting nothing would mean
 * a wrong address or a dead slice).
 */
KTEST("pmu.uncore", cbox_lookups_vs_llc_references, uncore_needs, 0,
      "C-box lookups agree with LLC references; every box counts")
{
	struct pmu_cache_geom g;
	struct pmu_event ref;
	uint64_t bytes, hops, refs, sum = 0, box[PMU_UNCORE_MAX_BOXES] = { 0 };
	const void *buf;
	char why[PMU_REASON_LEN] = "";
	bool irq;
	int err;

	if (!pmu_cache_geom(&g) || !g.l2)
		ktest_skip("CPUID.04H lists no L2: cannot size a buffer that misses it");
	bytes = 8 * g.l2;
	if (bytes > g.llc / 2)
		bytes = g.llc / 2;
	bytes &= ~(uint64_t)(PMU_CHASE_NODE - 1);
	if (bytes <= g.l2)
		ktest_skip(
			"LLC %lu KiB is not larger than 2 x L2 %lu KiB: no buffer misses L2 and fits the LLC",
			g.llc >> 10, g.l2 >> 10);
	hops = UNCORE_PASSES * (bytes / PMU_CHASE_NODE);
	diag("%s, MSR_UNC_CBO_CONFIG %#llx: %u C-boxes reported, %u cores, %u driven; buffer %lu KiB (L2 %lu, L%u %lu KiB), %lu hops",
	     uncore.model->name, (unsigned long long)uncore.cbo_config, uncore.boxes_reported, uncore.cores,
	     uncore.nboxes, bytes >> 10, g.l2 >> 10, g.llc_level, g.llc >> 10, hops);

	buf = pmu_cache_chase_buffer(2, bytes, 0x756e636f7265ull);
	pmu_cache_chase(buf, bytes / PMU_CHASE_NODE); /* warm: into the LLC */

	pmu_test_event(&ref, PMU_ARCH_LLC_REFERENCES);
	err = pmu_event_add(&ref);
	if (!check(err == PMU_OK, "LLC references (%d): %s", err, ref.reason))
		return;
	for (unsigned b = 0; b < uncore.nboxes; b++)
		if (!check(pmu_uncore_program(&uncore, b, 0, UNC_CBO_LOOKUP_EVENT, UNC_CBO_LOOKUP_ANY_UMASK,
					      why, sizeof(why)) == PMU_OK,
			   "%s", why))
			goto out;
	irq = irq_save();
	err = pmu_uncore_enable(&uncore);
	if (err == PMU_OK && (err = pmu_event_enable(&ref)) == PMU_OK) {
		pmu_cache_chase(buf, hops);
		err = pmu_event_disable(&ref);
	}
	pmu_uncore_disable(&uncore);
	irq_restore(irq);
	if (!check(err == PMU_OK, "starting/stopping the counters failed (%d): %s", err, ref.reason))
		goto out;
	refs = pmu_event_count(&ref);
	for (unsigned b = 0; b < uncore.nboxes; b++) {
		check(pmu_uncore_read(&uncore, b, 0, &box[b]) == PMU_OK, "reading C-box %u failed", b);
		sum += box[b];
		diag("C-box %u: %lu lookups", b, box[b]);
	}
	diag("LLC references (core) %lu, C-box lookups (sum) %lu", refs, sum);
	check(refs >= hops / 2,
	      "LLC references: expected >= %lu (half of %lu hops miss L2 at least), saw %lu", hops / 2, hops,
	      refs);
	check(sum >= refs / 2, "C-box lookups: expected >= %lu (references / 2), saw %lu", refs / 2, sum);
	check(sum <= 3 * refs + UNCORE_SLACK, "C-box lookups: expected <= %lu (3 x references + %u), saw %lu",
	      3 * refs + UNCORE_SLACK, UNCORE_SLACK, sum);
	for (unsigned b = 0; b < uncore.nboxes; b++)
		check(box[b] >= sum / (4 * uncore.nboxes),
		      "C-box %u: expected >= %lu (1/%u of the sum), saw %lu", b, sum / (4 * uncore.nboxes),
		      4 * uncore.nboxes, box[b]);
out:
	for (unsigned b = 0; b < uncore.nboxes; b++)
		pmu_uncore_clear(&uncore, b, 0);
	pmu_event_del(&ref);
}
