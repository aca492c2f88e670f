/* The architectural PMU's definitions (the backend's arch): the
 * architectural performance events, one table keyed by enum
 * pmu_arch_event, whose values are the CPUID.0AH:EBX availability bits,
 * and the architectural registers' names, which the core's messages use
 * where a backend's caps name none. */
#include "pmu/intel/intel.h"

#include "pmu/pmu_internal.h"

/* Encodings from SDM vol. 3B, "Pre-defined Architectural Performance
 * Events" (table "UMask and Event Select Encodings for Pre-Defined
 * Architectural Performance Events"); fixed-counter pairing from "Fixed-
 * Function Performance Counters" (FIXED_CTR0 instructions, 1 core cycles,
 * 2 reference cycles at TSC rate, 3 top-down slots). Note: on a GP counter
 * 0x3C/0x01 counts reference cycles at the bus/crystal clock, while
 * FIXED_CTR2 counts at the TSC rate: the two differ by a fixed ratio. */
static const struct pmu_arch_event_desc intel_arch_events[PMU_ARCH_NR] = {
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

/* Register names from SDM vol. 4, "Architectural MSRs"; a legacy write
 * to IA32_PMCx sign-extends bit 31 unless IA32_PERF_CAPABILITIES[13]
 * offers full-width writes (SDM vol. 3B, "Full-Width Writes to
 * Performance Counter Registers"). */
const struct pmu_arch_defs intel_arch_defs = {
	.events = intel_arch_events,
	.evtsel_name = "IA32_PERFEVTSEL",
	.ctr_name = "IA32_PMC",
	.fixed_name = "IA32_FIXED_CTR",
	.fixed_ctrl_name = "IA32_FIXED_CTR_CTRL",
	.global_ctrl_name = "IA32_PERF_GLOBAL_CTRL",
	.global_inuse_name = "IA32_PERF_GLOBAL_INUSE",
	.narrow_write_why = "IA32_PERF_CAPABILITIES[13]=0",
};
