/* What the Intel backend's files share (pmu/intel/). */
#ifndef PMU_INTEL_INTEL_H
#define PMU_INTEL_INTEL_H

#include "pmu/pmu.h"

/* The Intel caps lines (pmu/intel/caps.c): the backend's print_caps. */
void intel_caps_print(const struct pmu_caps *c, const char *prefix, pmu_line_fn out, void *ctx);
/* The LBRs (pmu/intel/lbr.c): the backend's lbr_decode. */
struct pmu_lbr_caps;
void intel_lbr_decode(const struct pmu_caps *c, struct pmu_lbr_caps *l);
/* Precise sampling with PEBS (pmu/intel/precise.c): the backend's precise. */
extern const struct pmu_precise_ops pmu_intel_precise_ops;

#endif
