/* The architectural performance events: one table keyed by enum
 * pmu_arch_event, whose values are the CPUID.0AH:EBX availability bits. */
#include "pmu/pmu.h"

#include "lib/string.h"

/* Encodings from SDM vol. 3B, "Pre-defined Architectural Performance
 * Events" (table "UMask and Event Select Encodings for Pre-Defined
 * Architectural Performance Events"); fixed-counter pairing from "Fixed-
 * Function Performance Counters" (FIXED_CTR0 instructions, 1 core cycles,
 * 2 reference cycles at TSC rate, 3 top-down slots). Note: on a GP counter
 * 0x3C/0x01 counts reference cycles at the bus/crystal clock, while
 * FIXED_CTR2 counts at the TSC rate: the two differ by a fixed ratio. */
const struct pmu_arch_event_desc pmu_arch_events[PMU_ARCH_NR] = {
	[PMU_ARCH_CYCLES] = { "cycles", 0x3c, 0x00, 1 },                  /* UnHalted Core Cycles */
	[PMU_ARCH_INSTRUCTIONS] = { "instructions", 0xc0, 0x00, 0 },      /* Instructions Retired */
	[PMU_ARCH_REF_CYCLES] = { "ref-cycles", 0x3c, 0x01, 2 },          /* UnHalted Reference Cycles */
	[PMU_ARCH_LLC_REFERENCES] = { "llc-references", 0x2e, 0x4f, -1 }, /* LLC Reference */
	[PMU_ARCH_LLC_MISSES] = { "llc-misses", 0x2e, 0x41, -1 },         /* LLC Misses */
	[PMU_ARCH_BRANCHES] = { "branches", 0xc4, 0x00, -1 },             /* Branch Instructions Retired */
	[PMU_ARCH_BRANCH_MISSES] = { "branch-misses", 0xc5, 0x00, -1 },   /* Branch Misses Retired */
	[PMU_ARCH_TOPDOWN_SLOTS] = { "topdown-slots", 0xa4, 0x01, 3 },    /* Topdown Slots */
	/* Bits 8-12, first on Clearwater Forest (SDM vol. 3B, "Pre-defined
	 * Architectural Performance Events", as the KVM selftests'
	 * pmu_counters_test encodes them, Linux commit "KVM: selftests:
	 * Validate more arch-events"); fixed counters 4-6 of the Atom-derived
	 * cores count three of them (Linux intel_skt_event_constraints:
	 * 0x0073, 0x019c and 0x02c2 on fixed 4, 5, 6). */
	[PMU_ARCH_TOPDOWN_BE_BOUND] = { "topdown-be-bound", 0xa4, 0x02, -1 }, /* Topdown Backend Bound */
	[PMU_ARCH_TOPDOWN_BAD_SPEC] = { "topdown-bad-spec", 0x73, 0x00, 4 },  /* Topdown Bad Speculation */
	[PMU_ARCH_TOPDOWN_FE_BOUND] = { "topdown-fe-bound", 0x9c, 0x01, 5 },  /* Topdown Frontend Bound */
	[PMU_ARCH_TOPDOWN_RETIRING] = { "topdown-retiring", 0xc2, 0x02, 6 },  /* Topdown Retiring */
	[PMU_ARCH_LBR_INSERTS] = { "lbr-inserts", 0xe4, 0x01, -1 },           /* LBR Inserts */
};

const struct pmu_arch_event_desc *pmu_arch_event(enum pmu_arch_event e)
{
	if ((int)e < 0 || e >= PMU_ARCH_NR)
		return NULL;
	return &pmu_arch_events[e];
}

enum pmu_arch_event pmu_arch_event_by_name(const char *name)
{
	for (int e = 0; e < PMU_ARCH_NR; e++)
		if (strcmp(pmu_arch_events[e].name, name) == 0)
			return (enum pmu_arch_event)e;
	return PMU_ARCH_NONE;
}

enum pmu_arch_event pmu_arch_event_by_code(uint8_t event, uint8_t umask)
{
	for (int e = 0; e < PMU_ARCH_NR; e++)
		if (pmu_arch_events[e].event == event && pmu_arch_events[e].umask == umask)
			return (enum pmu_arch_event)e;
	return PMU_ARCH_NONE;
}

enum pmu_arch_event pmu_arch_event_of_fixed(unsigned i)
{
	for (int e = 0; e < PMU_ARCH_NR; e++)
		if (pmu_arch_events[e].fixed >= 0 && (unsigned)pmu_arch_events[e].fixed == i)
			return (enum pmu_arch_event)e;
	return PMU_ARCH_NONE;
}
