/* The Intel model table (pmu/intel_models.h). DisplayModels from the SDM
 * vol. 4, "Processor Families and Models" (the table of CPUID signatures
 * per MSR chapter), names and grouping as Linux
 * arch/x86/include/asm/intel-family.h; the server flag follows which
 * uncore Linux drives for the model (arch/x86/events/intel/uncore.c:
 * nhm/snb/skl client uncores against nhmex/snbep/ivbep/hswep/bdx/skx). */
#include "pmu/intel_models.h"

#include "lib/bits.h"

static const char *const uarch_names[INTEL_UARCH_NR] = {
	[INTEL_NEHALEM] = "Nehalem",          [INTEL_WESTMERE] = "Westmere",
	[INTEL_SANDYBRIDGE] = "Sandy Bridge", [INTEL_IVYBRIDGE] = "Ivy Bridge",
	[INTEL_HASWELL] = "Haswell",          [INTEL_BROADWELL] = "Broadwell",
	[INTEL_SKYLAKE] = "Skylake",          [INTEL_ALDERLAKE] = "Alder Lake",
	[INTEL_SILVERMONT] = "Silvermont",    [INTEL_GOLDMONT] = "Goldmont",
	[INTEL_TREMONT] = "Tremont",          [INTEL_CRESTMONT] = "Crestmont",
	[INTEL_DARKMONT] = "Darkmont",
};

#define SRF7_BOTH (INTEL_ERRATUM_SRF7_INSTRUCTIONS | INTEL_ERRATUM_SRF7_BRANCHES)

/* Designated, so that a row names only the facts it has. */
#define MODEL(model_, uarch_, server_, name_, ...)                                                      \
	{                                                                                               \
		.model = (model_), .uarch = (uarch_), .server = (server_), .name = (name_), __VA_ARGS__ \
	}

static const struct intel_model models[] = {
	MODEL(0x1a, INTEL_NEHALEM, false, "Nehalem"),
	MODEL(0x1e, INTEL_NEHALEM, false, "Lynnfield"),
	MODEL(0x1f, INTEL_NEHALEM, false, "Nehalem-G"),
	MODEL(0x2e, INTEL_NEHALEM, true, "Nehalem-EX"),
	MODEL(0x25, INTEL_WESTMERE, false, "Westmere"),
	MODEL(0x2c, INTEL_WESTMERE, false, "Westmere-EP"),
	MODEL(0x2f, INTEL_WESTMERE, true, "Westmere-EX"),
	MODEL(0x2a, INTEL_SANDYBRIDGE, false, "Sandy Bridge"),
	MODEL(0x2d, INTEL_SANDYBRIDGE, true, "Sandy Bridge-EP"),
	MODEL(0x3a, INTEL_IVYBRIDGE, false, "Ivy Bridge"),
	MODEL(0x3e, INTEL_IVYBRIDGE, true, "Ivy Bridge-EP"),
	MODEL(0x3c, INTEL_HASWELL, false, "Haswell"),
	MODEL(0x45, INTEL_HASWELL, false, "Haswell-ULT"),
	MODEL(0x46, INTEL_HASWELL, false, "Haswell-GT3e"),
	MODEL(0x3f, INTEL_HASWELL, true, "Haswell-EP"),
	MODEL(0x3d, INTEL_BROADWELL, false, "Broadwell"),
	MODEL(0x47, INTEL_BROADWELL, false, "Broadwell-GT3e"),
	MODEL(0x4f, INTEL_BROADWELL, true, "Broadwell-EP"),
	MODEL(0x56, INTEL_BROADWELL, true, "Broadwell-DE"),
	MODEL(0x4e, INTEL_SKYLAKE, false, "Skylake-U/Y"),
	MODEL(0x5e, INTEL_SKYLAKE, false, "Skylake-S/H"),
	MODEL(0x55, INTEL_SKYLAKE, true, "Skylake-SP/Cascade Lake"),
	MODEL(0x8e, INTEL_SKYLAKE, false, "Kaby/Coffee/Whiskey/Amber Lake mobile"),
	MODEL(0x9e, INTEL_SKYLAKE, false, "Kaby/Coffee Lake desktop"),
	MODEL(0xa5, INTEL_SKYLAKE, false, "Comet Lake"),
	MODEL(0xa6, INTEL_SKYLAKE, false, "Comet Lake-U"),
	MODEL(0x97, INTEL_ALDERLAKE, false, "Alder Lake", .hybrid_0a_common = true),
	MODEL(0x9a, INTEL_ALDERLAKE, false, "Alder Lake-L", .hybrid_0a_common = true),
	MODEL(0xb7, INTEL_ALDERLAKE, false, "Raptor Lake", .hybrid_0a_common = true),
	MODEL(0xba, INTEL_ALDERLAKE, false, "Raptor Lake-P", .hybrid_0a_common = true),
	MODEL(0xbf, INTEL_ALDERLAKE, false, "Raptor Lake-S", .hybrid_0a_common = true),
	MODEL(0x4d, INTEL_SILVERMONT, true, "Avoton/Rangeley (Atom Silvermont-D)", .errata = SRF7_BOTH),
	MODEL(0x5f, INTEL_GOLDMONT, true, "Denverton (Atom Goldmont-D)", .errata = SRF7_BOTH),
	MODEL(0x86, INTEL_TREMONT, true, "Snow Ridge/Jacobsville (Atom Tremont-D)", .errata = SRF7_BOTH),
	MODEL(0xaf, INTEL_CRESTMONT, true, "Sierra Forest (Atom Crestmont-X)", .errata = SRF7_BOTH),
	MODEL(0xdd, INTEL_DARKMONT, true, "Clearwater Forest (Atom Darkmont-X)",
	      .errata = INTEL_ERRATUM_SRF7_INSTRUCTIONS),
};

const struct intel_model *intel_models(unsigned *n)
{
	*n = ARRAY_LEN(models);
	return models;
}

const struct intel_model *intel_model_of(const struct pmu_caps *c)
{
	if (c->vendor != PMU_VENDOR_INTEL || c->family != 6)
		return NULL;
	for (unsigned i = 0; i < ARRAY_LEN(models); i++)
		if (models[i].model == c->model)
			return &models[i];
	return NULL;
}

enum intel_uarch intel_uarch_of(const struct pmu_caps *c)
{
	const struct intel_model *m = intel_model_of(c);
	return m ? m->uarch : INTEL_UARCH_UNKNOWN;
}

const char *intel_uarch_name(enum intel_uarch u)
{
	return (unsigned)u < INTEL_UARCH_NR ? uarch_names[u] : NULL;
}
