/* The Intel backend's own caps: what IA32_PERF_CAPABILITIES says of PEBS
 * (SDM vol. 3B, "IA32_PERF_CAPABILITIES" and "Processor Event Based
 * Sampling"), kept in pmu_caps.vendor_caps, which the core only zeroes,
 * copies and compares; pmu/intel/caps.c prints them. Tests that check
 * the decode read them through intel_caps(). */
#ifndef PMU_INTEL_CAPS_H
#define PMU_INTEL_CAPS_H

#include "pmu/pmu.h"

/* may_alias: it lives in the uint64_t words of pmu_caps.vendor_caps. */
struct __attribute__((may_alias)) intel_caps {
	unsigned pebs_format; /* PERF_CAPABILITIES[11:8] */
	bool pebs_trap;       /* [6] */
	bool pebs_arch_regs;  /* [7] */
	bool pebs_baseline;   /* [14] */
};
_Static_assert(sizeof(struct intel_caps) <= sizeof(((struct pmu_caps *)0)->vendor_caps),
	       "struct intel_caps fits in pmu_caps.vendor_caps");

static inline const struct intel_caps *intel_caps(const struct pmu_caps *c)
{
	return (const struct intel_caps *)(const void *)c->vendor_caps;
}
/* For the decode (pmu/intel/core.c) and the tests that build caps. */
static inline struct intel_caps *intel_caps_rw(struct pmu_caps *c)
{
	return (struct intel_caps *)(void *)c->vendor_caps;
}

#endif
