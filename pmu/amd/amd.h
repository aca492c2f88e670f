/* What the AMD backend's files share (pmu/amd/). */
#ifndef PMU_AMD_AMD_H
#define PMU_AMD_AMD_H

#include "pmu/pmu.h"

/* AMD has no CPUID.0AH and no IA32_PERF_CAPABILITIES: the caps lines say
 * what the backend found instead (pmu/amd/caps.c); its print_caps. */
void amd_caps_print(const struct pmu_caps *c, const char *prefix, pmu_line_fn out, void *ctx);
/* LbrExtV2 (pmu/amd/lbr.c): the backend's lbr. */
struct pmu_lbr_ops;
extern const struct pmu_lbr_ops amd_lbr_ops;

#endif
