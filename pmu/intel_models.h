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
	INTEL_SKYLAKE,   /* and its client refreshes: Kaby, Coffee, Whiskey, Amber, Comet Lake */
	INTEL_ALDERLAKE, /* hybrid Golden/Raptor Cove + Gracemont: Alder Lake and Raptor Lake */
	/* Atom-derived server cores, for the errata they carry. */
	INTEL_SILVERMONT,
	INTEL_GOLDMONT,
	INTEL_TREMONT,
	INTEL_CRESTMONT,
	INTEL_DARKMONT,
	INTEL_UARCH_NR
};

struct intel_model {
	uint8_t model; /* CPUID.01H DisplayModel of family 6 */
	enum intel_uarch uarch;
	/* A server uncore (the EX parts of Nehalem and Westmere, the EP/EX/DE/SP
	 * parts from Sandy Bridge on): other registers than the client C-boxes. */
	bool server;
	const char *name; /* as Linux's intel-family.h, spelled out */
	/* A hybrid part whose CPUID.0AH enumerates only the counters both core
	 * types have: its P-cores have two GP counters and one fixed counter
	 * more (Linux arch/x86/events/intel/core.c, intel_pmu_init() for Alder
	 * Lake; "perf/x86/intel: Add a quirk for the calculation of the number
	 * of counters on Alder Lake"). */
	bool hybrid_0a_common;
	uint32_t errata; /* INTEL_ERRATUM_* */
};

/* Intel erratum SRF7 (Xeon 6700 E-core specification update; the errata
 * table of kvm-unit-tests lib/x86/pmu.c): instructions retired, and on
 * all but Clearwater Forest branches retired, overcount on far transfers,
 * IRET and VM entries/exits. */
#define INTEL_ERRATUM_SRF7_INSTRUCTIONS (1u << 0)
#define INTEL_ERRATUM_SRF7_BRANCHES (1u << 1)

/* Every row, in table order; *n gets how many. */
const struct intel_model *intel_models(unsigned *n);
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
