/* The vendor backends, found in the pmu_backends section that
 * PMU_BACKEND fills (pmu/pmu_internal.h): the core names no vendor. */
#include "pmu/pmu_internal.h"

extern const struct pmu_ops *const __start_pmu_backends[], *const __stop_pmu_backends[];

const struct pmu_ops *pmu_backend_for(const char *vendor_id)
{
	for (const struct pmu_ops *const *b = __start_pmu_backends; b < __stop_pmu_backends; b++)
		if ((*b)->match(vendor_id))
			return *b;
	return NULL;
}

const struct pmu_ops *pmu_backend_of(enum pmu_vendor vendor)
{
	for (const struct pmu_ops *const *b = __start_pmu_backends; b < __stop_pmu_backends; b++)
		if ((*b)->vendor == vendor)
			return *b;
	return NULL;
}
