/* The Intel model table (pmu/intel_models.h). DisplayModels from the SDM
 * vol. 4, "Processor Families and Models" (the table of CPUID signatures
 * per MSR chapter), names and grouping as Linux
 * arch/x86/include/asm/intel-family.h; the server flag follows which
 * uncore Linux drives for the model (arch/x86/events/intel/uncore.c:
 * nhm/snb/skl client uncores against nhmex/snbep/ivbep/hswep/bdx/skx). */
#include "pmu/intel_models.h"

#include "lib/bits.h"

static const char *const uarch_names[INTEL_UARCH_NR] = {
	[INTEL_NEHALEM] = "Nehalem",      [INTEL_WESTMERE] = "Westmere", [INTEL_SANDYBRIDGE] = "Sandy Bridge",
	[INTEL_IVYBRIDGE] = "Ivy Bridge", [INTEL_HASWELL] = "Haswell",   [INTEL_BROADWELL] = "Broadwell",
	[INTEL_SKYLAKE] = "Skylake",
};

static const struct intel_model models[] = {
	{ 0x1a, INTEL_NEHALEM, false, "Nehalem" },
	{ 0x1e, INTEL_NEHALEM, false, "Lynnfield" },
	{ 0x1f, INTEL_NEHALEM, false, "Nehalem-G" },
	{ 0x2e, INTEL_NEHALEM, true, "Nehalem-EX" },
	{ 0x25, INTEL_WESTMERE, false, "Westmere" },
	{ 0x2c, INTEL_WESTMERE, false, "Westmere-EP" },
	{ 0x2f, INTEL_WESTMERE, true, "Westmere-EX" },
	{ 0x2a, INTEL_SANDYBRIDGE, false, "Sandy Bridge" },
	{ 0x2d, INTEL_SANDYBRIDGE, true, "Sandy Bridge-EP" },
	{ 0x3a, INTEL_IVYBRIDGE, false, "Ivy Bridge" },
	{ 0x3e, INTEL_IVYBRIDGE, true, "Ivy Bridge-EP" },
	{ 0x3c, INTEL_HASWELL, false, "Haswell" },
	{ 0x45, INTEL_HASWELL, false, "Haswell-ULT" },
	{ 0x46, INTEL_HASWELL, false, "Haswell-GT3e" },
	{ 0x3f, INTEL_HASWELL, true, "Haswell-EP" },
	{ 0x3d, INTEL_BROADWELL, false, "Broadwell" },
	{ 0x47, INTEL_BROADWELL, false, "Broadwell-GT3e" },
	{ 0x4f, INTEL_BROADWELL, true, "Broadwell-EP" },
	{ 0x56, INTEL_BROADWELL, true, "Broadwell-DE" },
	{ 0x4e, INTEL_SKYLAKE, false, "Skylake-U/Y" },
	{ 0x5e, INTEL_SKYLAKE, false, "Skylake-S/H" },
	{ 0x55, INTEL_SKYLAKE, true, "Skylake-SP/Cascade Lake" },
	{ 0x8e, INTEL_SKYLAKE, false, "Kaby/Coffee/Whiskey/Amber Lake mobile" },
	{ 0x9e, INTEL_SKYLAKE, false, "Kaby/Coffee Lake desktop" },
	{ 0xa5, INTEL_SKYLAKE, false, "Comet Lake" },
	{ 0xa6, INTEL_SKYLAKE, false, "Comet Lake-U" },
};

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
