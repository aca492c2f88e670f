/* The vendor backends, found in the pmu_backends section that
 * PMU_BACKEND fills (pmu/pmu_internal.h): the core names no vendor. */
#include "pmu/pmu_internal.h"

#include "lib/printf.h"

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

const struct pmu_arch_defs *pmu_backend_arch(void)
{
	for (const struct pmu_ops *const *b = __start_pmu_backends; b < __stop_pmu_backends; b++)
		if ((*b)->arch)
			return (*b)->arch;
	return NULL;
}

const struct pmu_lbr_ops *pmu_backend_lbr(unsigned k)
{
	for (const struct pmu_ops *const *b = __start_pmu_backends; b < __stop_pmu_backends; b++)
		if ((*b)->lbr && k < 32 && (((*b)->lbr->kinds >> k) & 1))
			return (*b)->lbr;
	return NULL;
}

const struct pmu_attr_term *pmu_backend_term(unsigned k)
{
	for (const struct pmu_ops *const *b = __start_pmu_backends; b < __stop_pmu_backends; b++)
		for (const struct pmu_attr_term *t = (*b)->terms; t && t->name; t++)
			if (k-- == 0)
				return t;
	return NULL;
}

void pmu_backend_foreign_why(const struct pmu_caps *caps, char *why, size_t whylen)
{
	for (const struct pmu_ops *const *b = __start_pmu_backends; b < __stop_pmu_backends; b++)
		if ((*b)->foreign_why && (*b)->foreign_why(caps, why, whylen))
			return;
	ksnprintf(why, whylen, "no pmutest backend for vendor \"%s\" yet", caps->vendor_id);
}
