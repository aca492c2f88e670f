/* Intel processors by DisplayFamily and DisplayModel (family 6, and the
 * families 18 and 19 that follow it): the generation of each (its core
 * microarchitecture and the platform around it), the microarchitecture
 * of a hybrid part's E-cores, and whether it is a server part. The one model
 * table: the backend's counter constraints (pmu/intel/core.c), the offcore-response
 * MSRs (pmu/intel/offcore.c) and the uncore (pmu/intel_uncore*.c, pmu/intel/imc.c)
 * key their rows by these values, never by model numbers of their own. */
#ifndef PMU_INTEL_MODELS_H
#define PMU_INTEL_MODELS_H

#include <stdbool.h>
#include <stdint.h>

#include "pmu/pmu.h"

/* A generation: the parts that share a core microarchitecture and, for the
 * uncore, a platform. The Atom names are microarchitectures: of Atom-only
 * parts, and of the E-cores of hybrid ones. */
enum intel_uarch {
	INTEL_UARCH_UNKNOWN,
	INTEL_NEHALEM,
	INTEL_WESTMERE,
	INTEL_SANDYBRIDGE,
	INTEL_IVYBRIDGE,
	INTEL_HASWELL,
	INTEL_BROADWELL,
	INTEL_SKYLAKE,        /* and its client refreshes: Kaby, Coffee, Whiskey, Amber, Comet Lake */
	INTEL_ICELAKE,        /* Sunny Cove: Ice Lake client and Ice Lake-SP/-D */
	INTEL_TIGERLAKE_L,    /* Willow Cove, the UP3/UP4 parts (their own memory controller) */
	INTEL_TIGERLAKE,      /* Willow Cove, the H parts */
	INTEL_ROCKETLAKE,     /* Cypress Cove */
	INTEL_ALDERLAKE,      /* Golden/Raptor Cove P-cores: Alder Lake and Raptor Lake */
	INTEL_SAPPHIRERAPIDS, /* Golden/Raptor Cove servers: Sapphire and Emerald Rapids */
	INTEL_METEORLAKE,     /* Redwood Cove P-cores: Meteor Lake, Arrow Lake-U */
	INTEL_ARROWLAKE,      /* Lion Cove P-cores: Arrow Lake-S/H */
	INTEL_LUNARLAKE,      /* Lion Cove P-cores: Lunar Lake */
	INTEL_PANTHERLAKE,    /* Cougar Cove P-cores: Panther Lake, Wildcat Lake */
	INTEL_GRANITERAPIDS,  /* Redwood Cove servers */
	INTEL_DIAMONDRAPIDS,  /* Panther Cove servers (family 19) */
	INTEL_NOVALAKE,       /* Coyote Cove P-cores (family 18) */
	/* Atom-derived cores: the E-cores of hybrid parts and the Atom servers
	 * (the latter also for the errata they carry). */
	INTEL_SILVERMONT,
	INTEL_GOLDMONT,
	INTEL_TREMONT,
	INTEL_GRACEMONT,
	INTEL_CRESTMONT,
	INTEL_SKYMONT,
	INTEL_DARKMONT,
	INTEL_ARCTICWOLF, /* the E-cores of Nova Lake */
	INTEL_UARCH_NR
};

struct intel_model {
	/* CPUID.01H DisplayFamily and DisplayModel (SDM vol. 2A, CPUID,
	 * "Version Information"): family 6 up to Panther Lake and Clearwater
	 * Forest, then 18 (12H, Nova Lake) and 19 (13H, Diamond Rapids). */
	uint16_t family;
	uint8_t model;
	enum intel_uarch uarch;
	/* A server uncore (the EX parts of Nehalem and Westmere, the EP/EX/DE/SP
	 * parts from Sandy Bridge on): other registers than the client C-boxes. */
	bool server;
	const char *name; /* as Linux's intel-family.h, spelled out */
	/* The cores when they are not the generation's own (Alder Lake-N: the
	 * platform of Alder Lake, Gracemont cores only); 0: the generation's. */
	enum intel_uarch core;
	/* Hybrid parts: the E-cores' microarchitecture, and the low-power
	 * E-cores' where they differ (Arrow Lake-H), told apart by CPUID.1AH. */
	enum intel_uarch atom, lp_atom;
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
/* caps' row, or NULL: another vendor, or a family and model not listed. */
const struct intel_model *intel_model_of(const struct pmu_caps *c);
/* The row of DisplayFamily `family`, DisplayModel `model`, or NULL. */
const struct intel_model *intel_model_find(unsigned family, unsigned model);
/* The generation of the part: INTEL_UARCH_UNKNOWN for a model not listed. */
enum intel_uarch intel_uarch_of(const struct pmu_caps *c);
/* The microarchitecture of the calling CPU's core (caps are per CPU): on a
 * hybrid part the row's E-core one when CPUID.1AH says Atom, else the
 * part's. INTEL_UARCH_UNKNOWN for a model not listed. */
enum intel_uarch intel_core_uarch_of(const struct pmu_caps *c);
/* "Skylake"; NULL for INTEL_UARCH_UNKNOWN. */
const char *intel_uarch_name(enum intel_uarch u);

/* CPUID.1AH:EAX[23:0] of Crestmont E-cores: tells Arrow Lake-H's low-power
 * E-cores from its Skymont ones, both core type Atom (Linux
 * arch/x86/include/asm/intel-family.h, INTEL_ATOM_CMT_NATIVE_ID). */
#define INTEL_CRESTMONT_NATIVE_ID 0x2

/* A set of microarchitectures, for the tables keyed by them. */
#define INTEL_UARCHS(u) (1u << (u))
static inline bool intel_uarch_in(enum intel_uarch u, uint32_t set)
{
	return u != INTEL_UARCH_UNKNOWN && ((set >> u) & 1);
}
_Static_assert(INTEL_UARCH_NR <= 32, "INTEL_UARCHS() sets are 32 bits");

#endif
