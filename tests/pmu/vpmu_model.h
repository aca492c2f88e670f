/* Which vPMU model a guest has, read from the cost map (pmu.cost.table):
 * README.md "Reading the cost map" as a rule. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

enum vpmu_model {
	VPMU_UNKNOWN,     /* no CPUID exit to compare with, or a mixed map */
	VPMU_NONE,        /* no hypervisor says it is there: the PMU is the CPU's */
	VPMU_EMULATED,    /* every access exits: a trapping, perf-backed vPMU */
	VPMU_MEDIATED,    /* counters and RDPMC pass through, event selects exit */
	VPMU_PASSTHROUGH, /* nothing exits: the event selects pass through too */
};

/* Median TSC ticks of each access, the empty RDTSC pair already taken off. */
struct vpmu_costs {
	uint64_t rdtsc, cpuid, rdpmc, rdmsr_counter, rdmsr_evtsel;
	bool hypervisor; /* CPUID.01H:ECX[31] */
};

enum vpmu_model vpmu_model_of(const struct vpmu_costs *c);
const char *vpmu_model_name(enum vpmu_model m);
