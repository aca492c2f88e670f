/* Intel family 6 processors by DisplayModel: the microarchitecture of
 * each and whether it is a server part. The one model table: the
 * backend's counter constraints (pmu/intel.c), the offcore-response MSRs
 * (pmu/intel_offcore.c) and the client uncore (pmu/intel_uncore.c) key
 * their rows by its microarchitecture, never by model numbers of their own. */
#ifndef PMU_INTEL_MODELS_H
#define PMU_INTEL_MODELS_H

#include <stdbool.h>
#include <stdint.h>

#include "pmu/pmu.h"

enum intel_uarch {
	INTEL_UARCH_UNKNOWN,
	INTEL_NEHALEM,
	INTEL_WESTMERE,
	INTEL_SANDYBRIDGE,
	INTEL_IVYBRIDGE,
	INTEL_HASWELL,
	INTEL_BROADWELL,
	INTEL_SKYLAKE, /* and its client refreshes: Kaby, Coffee, Whiskey, Amber, Comet Lake */
	INTEL_UARCH_NR
};

struct intel_model {
	uint8_t model; /* CPUID.01H DisplayModel of family 6 */
	enum intel_uarch uarch;
	/* A server uncore (the EX parts of Nehalem and Westmere, the EP/EX/DE/SP
	 * parts from Sandy Bridge on): other registers than the client C-boxes. */
	bool server;
	const char *name; /* as Linux's intel-family.h, spelled out */
};

/* caps' row, or NULL: another vendor or family, or a model not listed. */
const struct intel_model *intel_model_of(const struct pmu_caps *c);
/* INTEL_UARCH_UNKNOWN for a model not listed. */
enum intel_uarch intel_uarch_of(const struct pmu_caps *c);
/* "Skylake"; NULL for INTEL_UARCH_UNKNOWN. */
const char *intel_uarch_name(enum intel_uarch u);

/* A set of microarchitectures, for the tables keyed by them. */
#define INTEL_UARCHS(u) (1u << (u))
static inline bool intel_uarch_in(enum intel_uarch u, uint32_t set)
{
	return u != INTEL_UARCH_UNKNOWN && ((set >> u) & 1);
}

#endif
