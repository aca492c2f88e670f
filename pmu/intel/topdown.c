/* Top-down metrics (pmu/intel/topdown.h): the names of PERF_METRICS'
 * bytes, the parts with the level-2 bytes, and the level-2 relations. */
#include "pmu/intel/topdown.h"

#include "lib/bits.h"
#include "lib/printf.h"
#include "pmu/intel/caps.h"
#include "pmu/intel/models.h"

static const char *const td_names[INTEL_TD_NR] = {
	[INTEL_TD_RETIRING] = "retiring",          [INTEL_TD_BAD_SPEC] = "bad speculation",
	[INTEL_TD_FE_BOUND] = "frontend bound",    [INTEL_TD_BE_BOUND] = "backend bound",
	[INTEL_TD_HEAVY_OPS] = "heavy operations", [INTEL_TD_BR_MISPREDICT] = "branch mispredicts",
	[INTEL_TD_FETCH_LAT] = "fetch latency",    [INTEL_TD_MEM_BOUND] = "memory bound",
};

const char *intel_td_name(enum intel_td m)
{
	return (unsigned)m < INTEL_TD_NR ? td_names[m] : "?";
}

/*
 * The top-down hierarchy splits each level-1 class in two at level 2 (SDM
 * vol. 3B, "Performance Metrics"; Intel's TMA_Metrics-full.csv, version
 * 5.2, in github.com/intel/perfmon): heavy operations under retiring,
 * branch mispredicts under bad speculation, fetch latency under frontend
 * bound, memory bound under backend bound, each read from its
 * PERF_METRICS byte; the other halves no byte holds, and the file defines
 * them as differences clamped at 0 (Light_Operations = max(0, Retiring -
 * Heavy_Operations), and so Machine_Clears, Fetch_Bandwidth, Core_Bound),
 * the clamp allowing for the rounding of the bytes.
 */
static const struct intel_td_rel level2_rels[] = {
	{ INTEL_TD_HEAVY_OPS, INTEL_TD_RETIRING, "light operations" },
	{ INTEL_TD_BR_MISPREDICT, INTEL_TD_BAD_SPEC, "machine clears" },
	{ INTEL_TD_FETCH_LAT, INTEL_TD_FE_BOUND, "fetch bandwidth" },
	{ INTEL_TD_MEM_BOUND, INTEL_TD_BE_BOUND, "core bound" },
};

const struct intel_td_rel *intel_td_level2_rels(unsigned *n)
{
	*n = ARRAY_LEN(level2_rels);
	return level2_rels;
}

/*
 * The parts whose level-2 bytes are filled: TMA_Metrics-full.csv reads
 * PERF_METRICS.HEAVY_OPERATIONS (and the other three) from its ADL/RPL
 * column on (SPR, EMR, MTL, GNR, LNL/ARL, PTL), level 1 only on ICL, TGL
 * and RKL; Linux fills eight metrics on the Golden Cove and later P-cores
 * (arch/x86/events/intel/core.c: intel_pmu_init_glc() sets
 * num_topdown_events = 8, and the Lion Cove and Panther Cove init, which
 * Coyote Cove shares, start from it). The E-cores have no fixed counter 3
 * and so no PERF_METRICS.
 */
#define LEVEL2_CORES                                                                                      \
	(INTEL_UARCHS(INTEL_ALDERLAKE) | INTEL_UARCHS(INTEL_SAPPHIRERAPIDS) |                             \
	 INTEL_UARCHS(INTEL_METEORLAKE) | INTEL_UARCHS(INTEL_ARROWLAKE) | INTEL_UARCHS(INTEL_LUNARLAKE) | \
	 INTEL_UARCHS(INTEL_PANTHERLAKE) | INTEL_UARCHS(INTEL_GRANITERAPIDS) |                            \
	 INTEL_UARCHS(INTEL_DIAMONDRAPIDS) | INTEL_UARCHS(INTEL_NOVALAKE))

const char *intel_td_level2_missing(const struct pmu_caps *c)
{
	enum intel_uarch u = intel_core_uarch_of(c);

	if (c->vendor != PMU_VENDOR_INTEL)
		return "PERF_METRICS is Intel's";
	if (!intel_caps(c)->perf_metrics)
		return "no PERF_METRICS (IA32_PERF_CAPABILITIES[15]=0)";
	if (u == INTEL_UARCH_UNKNOWN)
		return "a family and model the model table does not list: which PERF_METRICS bytes it fills is not known";
	if (!intel_uarch_in(u, LEVEL2_CORES))
		return "the level-2 bytes are Golden Cove's and later P-cores' (Linux intel_pmu_init_glc: 8 "
		       "top-down events); this core fills level 1 only";
	return NULL;
}

unsigned intel_td_check_level2(uint64_t metrics, char *why, size_t whylen)
{
	unsigned bad = 0;

	if (whylen)
		why[0] = '\0';
	for (unsigned i = 0; i < ARRAY_LEN(level2_rels); i++) {
		const struct intel_td_rel *r = &level2_rels[i];
		unsigned part = intel_td_byte(metrics, r->part), whole = intel_td_byte(metrics, r->whole);

		if (part <= whole + INTEL_TD_ROUNDING)
			continue;
		if (!bad++)
			ksnprintf(
				why, whylen,
				"PERF_METRICS %#llx: %s %u/255 exceeds %s %u/255, of which it is a part (expected "
				"<= %u within the rounding)",
				(unsigned long long)metrics, td_names[r->part], part, td_names[r->whole],
				whole, whole + INTEL_TD_ROUNDING);
	}
	return bad;
}
