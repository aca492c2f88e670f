/* Host test of the Intel model table (pmu/intel/models.c), keyed by
 * DisplayFamily and DisplayModel: every family-6 row keeps the generation
 * and server flag it had when the table was keyed by model alone (the
 * list below is that table's, transcribed), the rows of families 18 and
 * 19 are found only under their own family (Linux intel-family.h:
 * INTEL_NOVALAKE IFM(18, 0x01), INTEL_NOVALAKE_L IFM(18, 0x03),
 * INTEL_DIAMONDRAPIDS_X IFM(19, 0x01)), and a caps of another vendor
 * finds nothing. */
#include <string.h>

#include "pmu/intel/caps.h"
#include "pmu/intel/models.h"
#include "tests/host/hosttest.h"

static const struct {
	uint8_t model;
	enum intel_uarch uarch;
	bool server;
} family6[] = {
	{ 0x1a, INTEL_NEHALEM, false },       { 0x1e, INTEL_NEHALEM, false },
	{ 0x1f, INTEL_NEHALEM, false },       { 0x2e, INTEL_NEHALEM, true },
	{ 0x25, INTEL_WESTMERE, false },      { 0x2c, INTEL_WESTMERE, false },
	{ 0x2f, INTEL_WESTMERE, true },       { 0x2a, INTEL_SANDYBRIDGE, false },
	{ 0x2d, INTEL_SANDYBRIDGE, true },    { 0x3a, INTEL_IVYBRIDGE, false },
	{ 0x3e, INTEL_IVYBRIDGE, true },      { 0x3c, INTEL_HASWELL, false },
	{ 0x45, INTEL_HASWELL, false },       { 0x46, INTEL_HASWELL, false },
	{ 0x3f, INTEL_HASWELL, true },        { 0x3d, INTEL_BROADWELL, false },
	{ 0x47, INTEL_BROADWELL, false },     { 0x4f, INTEL_BROADWELL, true },
	{ 0x56, INTEL_BROADWELL, true },      { 0x4e, INTEL_SKYLAKE, false },
	{ 0x5e, INTEL_SKYLAKE, false },       { 0x55, INTEL_SKYLAKE, true },
	{ 0x8e, INTEL_SKYLAKE, false },       { 0x9e, INTEL_SKYLAKE, false },
	{ 0xa5, INTEL_SKYLAKE, false },       { 0xa6, INTEL_SKYLAKE, false },
	{ 0x7d, INTEL_ICELAKE, false },       { 0x7e, INTEL_ICELAKE, false },
	{ 0x6a, INTEL_ICELAKE, true },        { 0x6c, INTEL_ICELAKE, true },
	{ 0x8c, INTEL_TIGERLAKE_L, false },   { 0x8d, INTEL_TIGERLAKE, false },
	{ 0xa7, INTEL_ROCKETLAKE, false },    { 0x97, INTEL_ALDERLAKE, false },
	{ 0x9a, INTEL_ALDERLAKE, false },     { 0xbe, INTEL_ALDERLAKE, false },
	{ 0xb7, INTEL_ALDERLAKE, false },     { 0xba, INTEL_ALDERLAKE, false },
	{ 0xbf, INTEL_ALDERLAKE, false },     { 0x8f, INTEL_SAPPHIRERAPIDS, true },
	{ 0xcf, INTEL_SAPPHIRERAPIDS, true }, { 0xaa, INTEL_METEORLAKE, false },
	{ 0xac, INTEL_METEORLAKE, false },    { 0xb5, INTEL_METEORLAKE, false },
	{ 0xc5, INTEL_ARROWLAKE, false },     { 0xc6, INTEL_ARROWLAKE, false },
	{ 0xbd, INTEL_LUNARLAKE, false },     { 0xcc, INTEL_PANTHERLAKE, false },
	{ 0xd5, INTEL_PANTHERLAKE, false },   { 0xad, INTEL_GRANITERAPIDS, true },
	{ 0xae, INTEL_GRANITERAPIDS, true },  { 0x4d, INTEL_SILVERMONT, true },
	{ 0x5f, INTEL_GOLDMONT, true },       { 0x96, INTEL_TREMONT, false },
	{ 0x9c, INTEL_TREMONT, false },       { 0x86, INTEL_TREMONT, true },
	{ 0xaf, INTEL_CRESTMONT, true },      { 0xb6, INTEL_CRESTMONT, true },
	{ 0xdd, INTEL_DARKMONT, true },
};

HT_TEST(family6_rows_keep_their_generation)
{
	unsigned n, f6 = 0;
	const struct intel_model *all = intel_models(&n);

	for (unsigned i = 0; i < sizeof(family6) / sizeof(family6[0]); i++) {
		const struct intel_model *m = intel_model_find(6, family6[i].model);
		HT_CHECK(m != NULL, "family 6 model %#x: no row", family6[i].model);
		if (!m)
			continue;
		HT_CHECK(m->uarch == family6[i].uarch && m->server == family6[i].server,
			 "family 6 model %#x (%s): uarch %d server %d, expected %d %d", family6[i].model,
			 m->name, m->uarch, m->server, family6[i].uarch, family6[i].server);
	}
	/* The only family-6 row added since: Panther Lake-R (IFM(6, 0xE5),
	 * perfmon mapfile.csv GenuineIntel-6-E5 with Panther Lake's files). */
	for (unsigned i = 0; i < n; i++)
		f6 += all[i].family == 6;
	HT_CHECK_EQ(f6, sizeof(family6) / sizeof(family6[0]) + 1);
	HT_CHECK(intel_model_find(6, 0xe5) && intel_model_find(6, 0xe5)->uarch == INTEL_PANTHERLAKE,
		 "Panther Lake-R is a Panther Lake");
}

HT_TEST(families_18_and_19)
{
	const struct intel_model *dmr = intel_model_find(19, 0x01);
	const struct intel_model *nvl = intel_model_find(18, 0x01);
	const struct intel_model *nvl_l = intel_model_find(18, 0x03);

	HT_CHECK(dmr && dmr->uarch == INTEL_DIAMONDRAPIDS && dmr->server && !dmr->atom,
		 "family 19 model 1: Diamond Rapids, a server, no E-cores");
	HT_CHECK(nvl && nvl->uarch == INTEL_NOVALAKE && !nvl->server && nvl->atom == INTEL_ARCTICWOLF,
		 "family 18 model 1: Nova Lake, Arctic Wolf E-cores");
	HT_CHECK(nvl_l && nvl_l->uarch == INTEL_NOVALAKE && nvl_l->atom == INTEL_ARCTICWOLF,
		 "family 18 model 3: Nova Lake-L");
	/* The same DisplayModel in another family is another part. */
	HT_CHECK(intel_model_find(6, 0x01) == NULL, "family 6 model 1 is no row");
	HT_CHECK(intel_model_find(18, 0x03) != intel_model_find(19, 0x03) &&
			 intel_model_find(19, 0x03) == NULL,
		 "family 19 model 3 is no row");
	HT_CHECK(intel_model_find(19, 0x8f) == NULL, "Sapphire Rapids' model under family 19 is no row");
	HT_CHECK(intel_model_find(0x0f, 0x01) == NULL, "NetBurst family 15 is no row");
	HT_CHECK_STR(intel_uarch_name(INTEL_DIAMONDRAPIDS), "Diamond Rapids");
	HT_CHECK_STR(intel_uarch_name(INTEL_NOVALAKE), "Nova Lake");
	HT_CHECK_STR(intel_uarch_name(INTEL_ARCTICWOLF), "Arctic Wolf");
}

HT_TEST(caps_lookup_by_family)
{
	struct pmu_caps c;

	memset(&c, 0, sizeof(c));
	c.vendor = PMU_VENDOR_INTEL;
	c.family = 19, c.model = 0x01;
	HT_CHECK(intel_uarch_of(&c) == INTEL_DIAMONDRAPIDS, "caps family 19 model 1");
	c.family = 6;
	HT_CHECK(intel_uarch_of(&c) == INTEL_UARCH_UNKNOWN, "caps family 6 model 1");
	c.family = 6, c.model = 0x55;
	HT_CHECK(intel_uarch_of(&c) == INTEL_SKYLAKE, "caps family 6 model 0x55");
	c.family = 18, c.model = 0x03, intel_caps_rw(&c)->hybrid = true,
	intel_caps_rw(&c)->core_type = CPUID_1A_CORE_TYPE_ATOM;
	HT_CHECK(intel_core_uarch_of(&c) == INTEL_ARCTICWOLF, "a Nova Lake-L E-core");
	intel_caps_rw(&c)->core_type = CPUID_1A_CORE_TYPE_CORE;
	HT_CHECK(intel_core_uarch_of(&c) == INTEL_NOVALAKE, "a Nova Lake-L P-core");
	c.vendor = PMU_VENDOR_AMD, c.family = 19, c.model = 0x01;
	HT_CHECK(intel_model_of(&c) == NULL, "AMD family 19h model 1 is no Intel row");
}

HT_MAIN("intel_models")
