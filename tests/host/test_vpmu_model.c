/* Host tests of tests/pmu/vpmu_model.c: each model's cost map as README.md
 * "Reading the cost map" describes it, and the maps the rule refuses to
 * read (no CPUID exit, accesses between the two bounds). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/host/hosttest.h"

#include "tests/pmu/vpmu_model.h"

static const char *model(uint64_t rdtsc, uint64_t cpuid, uint64_t rdpmc, uint64_t ctr, uint64_t evtsel,
			 bool hv)
{
	struct vpmu_costs c = { rdtsc, cpuid, rdpmc, ctr, evtsel, hv };

	return vpmu_model_name(vpmu_model_of(&c));
}

HT_TEST(models)
{
	/* KVM's perf-backed vPMU: every access near CPUID (about 1000 ticks). */
	HT_CHECK_STR(model(30, 1200, 1300, 1400, 1350, true), "emulated");
	/* Mediated: RDPMC and the counter near RDTSC, the event select exits. */
	HT_CHECK_STR(model(30, 1200, 40, 60, 1500, true), "mediated");
	/* Nothing exits. */
	HT_CHECK_STR(model(30, 1200, 40, 60, 70, true), "passthrough");
	/* No hypervisor: the CPU's own PMU. */
	HT_CHECK_STR(model(30, 100, 40, 60, 70, false), "none");
}

HT_TEST(unreadable_maps)
{
	/* TCG: CPUID does not stand out from RDTSC, so it is no yardstick. */
	HT_CHECK_STR(model(1500, 1560, 1586, 1612, 1612, true), "unknown");
	/* The counter between a quarter and half a CPUID: neither. */
	HT_CHECK_STR(model(30, 1200, 400, 400, 1500, true), "unknown");
	/* RDPMC passes through but the counter MSR exits: no model has that. */
	HT_CHECK_STR(model(30, 1200, 40, 1300, 1500, true), "unknown");
	/* Bounds: half a CPUID exits, a quarter does not stay. */
	HT_CHECK_STR(model(30, 1200, 600, 600, 600, true), "emulated");
	HT_CHECK_STR(model(30, 1200, 299, 299, 600, true), "mediated");
	HT_CHECK_STR(model(30, 1200, 300, 299, 600, true), "unknown");
}

HT_MAIN("vpmu_model")
