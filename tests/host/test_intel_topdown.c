/* Host test of the top-down relations (pmu/intel/topdown.c): which parts
 * fill PERF_METRICS' level-2 bytes, and the level-2 check on values that
 * keep and that break "each part within its whole". */
#include <string.h>

#include "pmu/intel/caps.h"
#include "pmu/intel/topdown.h"
#include "tests/host/hosttest.h"

/* PERF_METRICS from its eight bytes, retiring first. */
static uint64_t pm(unsigned r, unsigned b, unsigned f, unsigned be, unsigned h, unsigned bm, unsigned fl,
		   unsigned mb)
{
	return (uint64_t)r | (uint64_t)b << 8 | (uint64_t)f << 16 | (uint64_t)be << 24 | (uint64_t)h << 32 |
	       (uint64_t)bm << 40 | (uint64_t)fl << 48 | (uint64_t)mb << 56;
}

HT_TEST(byte_layout)
{
	uint64_t m = pm(1, 2, 3, 4, 5, 6, 7, 8);

	for (unsigned i = 0; i < INTEL_TD_NR; i++)
		HT_CHECK_EQ(intel_td_byte(m, (enum intel_td)i), i + 1);
	HT_CHECK_STR(intel_td_name(INTEL_TD_HEAVY_OPS), "heavy operations");
	HT_CHECK_STR(intel_td_name(INTEL_TD_MEM_BOUND), "memory bound");
}

HT_TEST(level2_relations)
{
	char why[200];
	unsigned n;
	const struct intel_td_rel *r = intel_td_level2_rels(&n);

	HT_CHECK_EQ(n, 4);
	HT_CHECK(r[0].part == INTEL_TD_HEAVY_OPS && r[0].whole == INTEL_TD_RETIRING, "heavy ops in retiring");
	HT_CHECK(r[3].part == INTEL_TD_MEM_BOUND && r[3].whole == INTEL_TD_BE_BOUND, "memory in backend");
	/* Parts within their wholes, and equal to them. */
	HT_CHECK_EQ(intel_td_check_level2(pm(100, 20, 35, 100, 10, 20, 30, 99), why, sizeof(why)), 0);
	HT_CHECK_STR(why, "");
	HT_CHECK_EQ(intel_td_check_level2(pm(0xff, 0, 0, 0, 0xff, 0, 0, 0), why, sizeof(why)), 0);
	/* Over by the rounding of two bytes: still within. */
	HT_CHECK_EQ(intel_td_check_level2(pm(100, 20, 35, 100, 102, 20, 30, 99), why, sizeof(why)), 0);
	/* One step more: caught, and the message says which. */
	HT_CHECK_EQ(intel_td_check_level2(pm(100, 20, 35, 100, 103, 20, 30, 99), why, sizeof(why)), 1);
	HT_CHECK(strstr(why, "heavy operations 103/255 exceeds retiring 100/255") != NULL, "%s", why);
	/* Every part full while the level-1 bytes say otherwise: all four. */
	HT_CHECK_EQ(
		intel_td_check_level2(pm(0x40, 0x40, 0x40, 0x3f, 0xff, 0xff, 0xff, 0xff), why, sizeof(why)),
		4);
}

/* A caps of family/model with PERF_METRICS, as the driver decodes it. */
static struct pmu_caps caps(unsigned family, unsigned model, bool metrics)
{
	struct pmu_caps c;

	memset(&c, 0, sizeof(c));
	c.vendor = PMU_VENDOR_INTEL;
	c.family = family, c.model = model, intel_caps_rw(&c)->perf_metrics = metrics;
	return c;
}

HT_TEST(level2_parts)
{
	static const struct {
		unsigned family, model;
		bool level2;
	} parts[] = {
		{ 6, 0x6a, false }, /* Ice Lake-SP: level 1 only */
		{ 6, 0x8c, false }, /* Tiger Lake */
		{ 6, 0x8f, true },  /* Sapphire Rapids */
		{ 6, 0x97, true },  /* Alder Lake (P-core) */
		{ 6, 0xad, true },  /* Granite Rapids */
		{ 6, 0xbd, true },  /* Lunar Lake (P-core) */
		{ 6, 0xcc, true },  /* Panther Lake (P-core) */
		{ 19, 0x01, true }, /* Diamond Rapids */
		{ 18, 0x01, true }, /* Nova Lake (P-core) */
		{ 6, 0x01, false }, /* not in the table */
	};

	for (unsigned i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		struct pmu_caps c = caps(parts[i].family, parts[i].model, true);
		HT_CHECK((intel_td_level2_missing(&c) == NULL) == parts[i].level2, "family %u model %#x: %s",
			 parts[i].family, parts[i].model,
			 intel_td_level2_missing(&c) ? intel_td_level2_missing(&c) : "level 2");
	}
	struct pmu_caps c = caps(19, 0x01, false);
	HT_CHECK(intel_td_level2_missing(&c) != NULL, "no PERF_METRICS: no level 2");
}

HT_MAIN("intel_topdown")
