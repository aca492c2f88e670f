/* What the Intel backend's files share (pmu/intel/). */
#ifndef PMU_INTEL_INTEL_H
#define PMU_INTEL_INTEL_H

#include "pmu/pmu.h"

/* The Intel caps lines (pmu/intel/caps.c): the backend's print_caps. */
void intel_caps_print(const struct pmu_caps *c, const char *prefix, pmu_line_fn out, void *ctx);
/* A hybrid part's core type by name (pmu/intel/caps.c): the backend's
 * core_type_name. */
const char *intel_core_type_name(unsigned core_type);
/* The LBRs (pmu/intel/lbr.c): the backend's lbr. */
struct pmu_lbr_ops;
extern const struct pmu_lbr_ops intel_lbr_ops;
/* The architectural events and register names (pmu/intel/arch_events.c):
 * the backend's arch. */
struct pmu_arch_defs;
extern const struct pmu_arch_defs intel_arch_defs;
/* Precise sampling with PEBS (pmu/intel/precise.c): the backend's precise. */
extern const struct pmu_precise_ops pmu_intel_precise_ops;

#endif
