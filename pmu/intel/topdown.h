/* Top-down metrics in PERF_METRICS (Intel): the eight byte fractions of
 * the slots FIXED_CTR3 counted, which parts fill the level-2 bytes, and
 * the relations between the levels that hold by definition. */
#ifndef PMU_INTEL_TOPDOWN_H
#define PMU_INTEL_TOPDOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/pmu.h"

/* The bytes of MSR_PERF_METRICS, low to high (SDM vol. 3B, "Performance
 * Metrics"; Linux arch/x86/include/asm/perf_event.h INTEL_TD_METRIC_*:
 * level 1 in bytes 0-3, level 2 in bytes 4-7). */
enum intel_td {
	INTEL_TD_RETIRING,
	INTEL_TD_BAD_SPEC,
	INTEL_TD_FE_BOUND,
	INTEL_TD_BE_BOUND,
	INTEL_TD_HEAVY_OPS,
	INTEL_TD_BR_MISPREDICT,
	INTEL_TD_FETCH_LAT,
	INTEL_TD_MEM_BOUND,
	INTEL_TD_NR
};

/* "retiring", "heavy operations", ... */
const char *intel_td_name(enum intel_td m);
/* Byte m of a PERF_METRICS value: its share of the slots, in 1/255. */
static inline unsigned intel_td_byte(uint64_t metrics, enum intel_td m)
{
	return (unsigned)(metrics >> (8 * (unsigned)m)) & 0xff;
}

/* A level-2 metric and the level-1 metric it is a part of; `rest` names
 * the other part (parent minus child), which no byte holds. */
struct intel_td_rel {
	enum intel_td part, whole;
	const char *rest;
};
/* The four level-2 relations; *n gets how many. */
const struct intel_td_rel *intel_td_level2_rels(unsigned *n);

/* Each byte is its own rounding of a fraction to 1/255: a part may read
 * above its whole by one step of each. */
#define INTEL_TD_ROUNDING 2

/* Whether the calling CPU fills the level-2 bytes: PERF_METRICS with a
 * Golden Cove or later P-core. NULL if so, else why not. */
const char *intel_td_level2_missing(const struct pmu_caps *c);

/* Check the level-2 relations of a PERF_METRICS value: how many parts
 * exceed their whole beyond INTEL_TD_ROUNDING, the first described in
 * why (expected against seen). */
unsigned intel_td_check_level2(uint64_t metrics, char *why, size_t whylen);

#endif
