/* Intel architectural performance monitoring version 6 and CPUID leaf 23H:
 * every sub-leaf decoded into struct pmu_caps, the version 6 register map
 * and the bits its extensions open (pmu/intel/v6.c). */
#ifndef PMU_INTEL_V6_H
#define PMU_INTEL_V6_H

#include "pmu/pmu.h"

/* After CPUID.0AH is decoded: read CPUID.(07H,1) and 23H; the counter
 * bitmaps, auto-counter-reload bitmaps and event bitmap of 23H replace
 * what leaf 0AH said, where 23H has them. */
void intel_v6_decode_leaf23(struct pmu_caps *c);
/* After the classic register map is set: switch to the 0x1900 + 4n map
 * from version 6 on, and open the reserved bits the extensions define. */
void intel_v6_registers(struct pmu_caps *c);
/* "CPUID.23H: ..." report lines (nothing when there is no leaf 23H). */
void intel_v6_print(const struct pmu_caps *c, const char *prefix, pmu_line_fn out, void *ctx);

#endif
