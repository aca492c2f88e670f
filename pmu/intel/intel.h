/* What the Intel backend's files share (pmu/intel/). */
#ifndef PMU_INTEL_INTEL_H
#define PMU_INTEL_INTEL_H

#include "pmu/pmu.h"

/* The Intel caps lines but version 6's (pmu/intel/caps.c). */
void intel_caps_print(const struct pmu_caps *c, const char *prefix, pmu_line_fn out, void *ctx);
/* The caps report's first line's hybrid core type, and whether two CPUs'
 * Intel caps make one CPU type (pmu/intel/caps.c): the backend's
 * print_caps_ident and caps_same. */
struct pmu_caps_line;
void intel_caps_print_ident(const struct pmu_caps *c, struct pmu_caps_line *l);
bool intel_caps_same(const struct pmu_caps *a, const struct pmu_caps *b);
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
