/* The AMD backend's own caps: which core-counter extensions CPUID
 * enumerates (APM vol. 3, CPUID Fn8000_0001_ECX and Fn8000_0022_EAX),
 * kept in pmu_caps.vendor_caps, which the core only zeroes, copies and
 * compares; pmu/amd/caps.c prints them. Tests read them through
 * amd_caps(). */
#ifndef PMU_AMD_CAPS_H
#define PMU_AMD_CAPS_H

#include "pmu/pmu.h"

/* may_alias: it lives in the uint64_t words of pmu_caps.vendor_caps. */
struct __attribute__((may_alias)) amd_caps {
	bool ext_core;       /* Fn8000_0001_ECX[23] PerfCtrExtCore */
	bool perfmon_v2;     /* Fn8000_0022_EAX[0] PerfMonV2 */
	bool lbr_pmc_freeze; /* Fn8000_0022_EAX[2] LbrAndPmcFreeze */
};
_Static_assert(sizeof(struct amd_caps) <= sizeof(((struct pmu_caps *)0)->vendor_caps),
	       "struct amd_caps fits in pmu_caps.vendor_caps");

static inline const struct amd_caps *amd_caps(const struct pmu_caps *c)
{
	return (const struct amd_caps *)(const void *)c->vendor_caps;
}
/* For the decode (pmu/amd/core.c) and the tests that build caps. */
static inline struct amd_caps *amd_caps_rw(struct pmu_caps *c)
{
	return (struct amd_caps *)(void *)c->vendor_caps;
}

#endif
