/* The Intel model table (pmu/intel/models.h). Family 6 DisplayModels from
 * the SDM vol. 4, "Processor Families and Models" (the table of CPUID
 * signatures per MSR chapter), names and grouping as Linux
 * arch/x86/include/asm/intel-family.h, which also gives the parts past
 * family 6: Nova Lake is IFM(18, 0x01) and Nova Lake-L IFM(18, 0x03)
 * (Coyote Cove P-cores, Arctic Wolf E-cores), Diamond Rapids IFM(19, 0x01)
 * (Panther Cove); Intel's perfmon mapfile.csv keys its Nova Lake files
 * "GenuineIntel-18-1" and "-18-3" alike. The server flag follows which
 * uncore Linux drives for the model (arch/x86/events/intel/uncore.c:
 * nhm/snb/skl/icl/tgl/adl/mtl/lnl/ptl client uncores against
 * nhmex/snbep/ivbep/hswep/bdx/skx/icx/snr/spr/gnr); the E-cores of hybrid
 * parts as Linux's intel_pmu_init() and Intel's perfmon mapfile.csv pair a
 * core type with an event file. */
#include "pmu/intel/models.h"

#include "arch/x86/cpuid.h"
#include "lib/bits.h"
#include "pmu/intel/caps.h"

static const char *const uarch_names[INTEL_UARCH_NR] = {
	[INTEL_NEHALEM] = "Nehalem",
	[INTEL_WESTMERE] = "Westmere",
	[INTEL_SANDYBRIDGE] = "Sandy Bridge",
	[INTEL_IVYBRIDGE] = "Ivy Bridge",
	[INTEL_HASWELL] = "Haswell",
	[INTEL_BROADWELL] = "Broadwell",
	[INTEL_SKYLAKE] = "Skylake",
	[INTEL_ICELAKE] = "Ice Lake",
	[INTEL_TIGERLAKE_L] = "Tiger Lake-L",
	[INTEL_TIGERLAKE] = "Tiger Lake",
	[INTEL_ROCKETLAKE] = "Rocket Lake",
	[INTEL_ALDERLAKE] = "Alder Lake",
	[INTEL_SAPPHIRERAPIDS] = "Sapphire Rapids",
	[INTEL_METEORLAKE] = "Meteor Lake",
	[INTEL_ARROWLAKE] = "Arrow Lake",
	[INTEL_LUNARLAKE] = "Lunar Lake",
	[INTEL_PANTHERLAKE] = "Panther Lake",
	[INTEL_GRANITERAPIDS] = "Granite Rapids",
	[INTEL_DIAMONDRAPIDS] = "Diamond Rapids",
	[INTEL_NOVALAKE] = "Nova Lake",
	[INTEL_SILVERMONT] = "Silvermont",
	[INTEL_GOLDMONT] = "Goldmont",
	[INTEL_TREMONT] = "Tremont",
	[INTEL_GRACEMONT] = "Gracemont",
	[INTEL_CRESTMONT] = "Crestmont",
	[INTEL_SKYMONT] = "Skymont",
	[INTEL_DARKMONT] = "Darkmont",
	[INTEL_ARCTICWOLF] = "Arctic Wolf",
};

#define SRF7_BOTH (INTEL_ERRATUM_SRF7_INSTRUCTIONS | INTEL_ERRATUM_SRF7_BRANCHES)

/* Designated, so that a row names only the facts it has. MODEL is a
 * family-6 row, MODEL_F one of another family. */
#define MODEL_F(family_, model_, uarch_, server_, name_, ...)                                   \
	{                                                                                       \
		.family = (family_), .model = (model_), .uarch = (uarch_), .server = (server_), \
		.name = (name_), __VA_ARGS__                                                    \
	}
#define MODEL(model_, uarch_, server_, name_, ...) MODEL_F(6, model_, uarch_, server_, name_, __VA_ARGS__)

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
	MODEL(0x7d, INTEL_ICELAKE, false, "Ice Lake"),
	MODEL(0x7e, INTEL_ICELAKE, false, "Ice Lake-L"),
	MODEL(0x6a, INTEL_ICELAKE, true, "Ice Lake-SP"),
	MODEL(0x6c, INTEL_ICELAKE, true, "Ice Lake-D"),
	MODEL(0x8c, INTEL_TIGERLAKE_L, false, "Tiger Lake-L"),
	MODEL(0x8d, INTEL_TIGERLAKE, false, "Tiger Lake"),
	MODEL(0xa7, INTEL_ROCKETLAKE, false, "Rocket Lake"),
	MODEL(0x97, INTEL_ALDERLAKE, false, "Alder Lake", .atom = INTEL_GRACEMONT, .hybrid_0a_common = true),
	MODEL(0x9a, INTEL_ALDERLAKE, false, "Alder Lake-L", .atom = INTEL_GRACEMONT,
	      .hybrid_0a_common = true),
	MODEL(0xbe, INTEL_ALDERLAKE, false, "Alder Lake-N (Atom Gracemont)", .core = INTEL_GRACEMONT),
	MODEL(0xb7, INTEL_ALDERLAKE, false, "Raptor Lake", .atom = INTEL_GRACEMONT, .hybrid_0a_common = true),
	MODEL(0xba, INTEL_ALDERLAKE, false, "Raptor Lake-P", .atom = INTEL_GRACEMONT,
	      .hybrid_0a_common = true),
	MODEL(0xbf, INTEL_ALDERLAKE, false, "Raptor Lake-S", .atom = INTEL_GRACEMONT,
	      .hybrid_0a_common = true),
	MODEL(0x8f, INTEL_SAPPHIRERAPIDS, true, "Sapphire Rapids"),
	MODEL(0xcf, INTEL_SAPPHIRERAPIDS, true, "Emerald Rapids"),
	MODEL(0xaa, INTEL_METEORLAKE, false, "Meteor Lake", .atom = INTEL_CRESTMONT),
	MODEL(0xac, INTEL_METEORLAKE, false, "Meteor Lake-L", .atom = INTEL_CRESTMONT),
	MODEL(0xb5, INTEL_METEORLAKE, false, "Arrow Lake-U", .atom = INTEL_CRESTMONT),
	MODEL(0xc5, INTEL_ARROWLAKE, false, "Arrow Lake-H", .atom = INTEL_SKYMONT,
	      .lp_atom = INTEL_CRESTMONT),
	MODEL(0xc6, INTEL_ARROWLAKE, false, "Arrow Lake", .atom = INTEL_SKYMONT),
	MODEL(0xbd, INTEL_LUNARLAKE, false, "Lunar Lake", .atom = INTEL_SKYMONT),
	MODEL(0xcc, INTEL_PANTHERLAKE, false, "Panther Lake", .atom = INTEL_DARKMONT),
	MODEL(0xd5, INTEL_PANTHERLAKE, false, "Wildcat Lake", .atom = INTEL_DARKMONT),
	MODEL(0xe5, INTEL_PANTHERLAKE, false, "Panther Lake-R", .atom = INTEL_DARKMONT),
	MODEL(0xad, INTEL_GRANITERAPIDS, true, "Granite Rapids-X"),
	MODEL(0xae, INTEL_GRANITERAPIDS, true, "Granite Rapids-D"),
	/* Families 18 (12H) and 19 (13H): no uncore or IMC table row names
	 * these generations yet, so they get no uncore (pmu/README.md). */
	MODEL_F(19, 0x01, INTEL_DIAMONDRAPIDS, true, "Diamond Rapids"),
	MODEL_F(18, 0x01, INTEL_NOVALAKE, false, "Nova Lake", .atom = INTEL_ARCTICWOLF),
	MODEL_F(18, 0x03, INTEL_NOVALAKE, false, "Nova Lake-L", .atom = INTEL_ARCTICWOLF),
	MODEL(0x4d, INTEL_SILVERMONT, true, "Avoton/Rangeley (Atom Silvermont-D)", .errata = SRF7_BOTH),
	MODEL(0x5f, INTEL_GOLDMONT, true, "Denverton (Atom Goldmont-D)", .errata = SRF7_BOTH),
	MODEL(0x96, INTEL_TREMONT, false, "Elkhart Lake (Atom Tremont)"),
	MODEL(0x9c, INTEL_TREMONT, false, "Jasper Lake (Atom Tremont-L)"),
	MODEL(0x86, INTEL_TREMONT, true, "Snow Ridge/Jacobsville (Atom Tremont-D)", .errata = SRF7_BOTH),
	MODEL(0xaf, INTEL_CRESTMONT, true, "Sierra Forest (Atom Crestmont-X)", .errata = SRF7_BOTH),
	MODEL(0xb6, INTEL_CRESTMONT, true, "Grand Ridge (Atom Crestmont)"),
	MODEL(0xdd, INTEL_DARKMONT, true, "Clearwater Forest (Atom Darkmont-X)",
	      .errata = INTEL_ERRATUM_SRF7_INSTRUCTIONS),
};

const struct intel_model *intel_models(unsigned *n)
{
	*n = ARRAY_LEN(models);
	return models;
}

const struct intel_model *intel_model_find(unsigned family, unsigned model)
{
	for (unsigned i = 0; i < ARRAY_LEN(models); i++)
		if (models[i].family == family && models[i].model == model)
			return &models[i];
	return NULL;
}

const struct intel_model *intel_model_of(const struct pmu_caps *c)
{
	if (c->vendor != PMU_VENDOR_INTEL)
		return NULL;
	return intel_model_find(c->family, c->model);
}

enum intel_uarch intel_uarch_of(const struct pmu_caps *c)
{
	const struct intel_model *m = intel_model_of(c);
	return m ? m->uarch : INTEL_UARCH_UNKNOWN;
}

enum intel_uarch intel_core_uarch_of(const struct pmu_caps *c)
{
	const struct intel_caps *ic = intel_caps(c);
	const struct intel_model *m = intel_model_of(c);

	if (!m)
		return INTEL_UARCH_UNKNOWN;
	if (m->atom && ic->hybrid && ic->core_type == CPUID_1A_CORE_TYPE_ATOM) {
		if (m->lp_atom && ic->native_model == INTEL_CRESTMONT_NATIVE_ID)
			return m->lp_atom;
		return m->atom;
	}
	return m->core ? m->core : m->uarch;
}

const char *intel_uarch_name(enum intel_uarch u)
{
	return (unsigned)u < INTEL_UARCH_NR ? uarch_names[u] : NULL;
}
