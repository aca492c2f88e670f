/* Layout of the sample record the PMI handler writes into a CPU's ring
 * (lib/ringbuf.h), and the serial line it is drained as. The layout is an
 * ABI shared with tools/pmutest-samples: change both together, and bump
 * PMU_SAMPLE_VERSION.
 *
 * Versions: 0 the fixed part and values[]; 1 the same,
 * then the sections misc announces: a branch stack (PMU_SAMPLE_MISC_
 * BRANCHES); PMU_SAMPLE_MISC_PRECISE says rip came from a PEBS record. */
#ifndef PMU_SAMPLE_RECORD_H
#define PMU_SAMPLE_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "lib/ringbuf.h"

/* Most other-counter values one sample carries: every counter of the PMUs
 * pmutest drives (Intel: 8 GP + 4 fixed per core type; AMD: 6) with room
 * to spare. */
#define PMU_SAMPLE_MAX_VALUES 16u
/* Branch-stack entries one sample carries: the LBR stack's newest. */
#define PMU_SAMPLE_MAX_BRANCHES 16u
#define PMU_SAMPLE_VERSION 1u

/* misc bits of an RB_RECORD_SAMPLE record. */
/* CPL is the saved CS selector's bits 1:0 (SDM vol. 3A, 5.5 "Privilege
 * Levels"); the saved CS and RIP are in the interrupt stack frame (SDM vol.
 * 3A, 6.14.2 "64-Bit Mode Stack Frame"). */
#define PMU_SAMPLE_MISC_USER (1u << 0) /* interrupted code ran at CPL 3 */
#define PMU_SAMPLE_MISC_NMI (1u << 1)  /* the PMI was delivered as an NMI */
/* rip is the eventing IP of a PEBS record (its RIP where the format has
 * no eventing IP), not the interrupted RIP: no skid. */
#define PMU_SAMPLE_MISC_PRECISE (1u << 2)
/* struct pmu_sample_branches follows values[]. */
#define PMU_SAMPLE_MISC_BRANCHES (1u << 3)

/* One other counter of the group, read in the same PMI. */
struct pmu_sample_value {
	uint32_t idx;      /* counter index: GP 0-31, fixed 32 + i */
	uint32_t reserved; /* zero */
	uint64_t value;    /* the counter's accumulated 64-bit count */
};

/* hdr.type = RB_RECORD_SAMPLE, hdr.size = pmu_sample_size(nr_values).
 * All fields little-endian (the CPU's own order), no implicit padding. */
struct pmu_sample {
	struct rb_header hdr;
	uint32_t cpu;       /* dense CPU number, BSP = 0 */
	uint32_t idx;       /* the counter that overflowed (same index space) */
	uint64_t tsc;       /* TSC read in the PMI handler */
	uint64_t rip;       /* RIP of the interrupted code, from the interrupt frame */
	uint64_t period;    /* events between two samples of this counter */
	uint32_t nr_values; /* entries in values[], <= PMU_SAMPLE_MAX_VALUES */
	uint32_t version;   /* PMU_SAMPLE_VERSION (0 before it) */
	struct pmu_sample_value values[];
};

/* A branch stack: the LBR entries read in the PMI, newest first, as
 * plain addresses (pmu/lbr.h); with call-stack LBRs, the live calls. */
struct pmu_sample_branch {
	uint64_t from, to;
};
struct pmu_sample_branches {
	uint32_t nr;       /* <= PMU_SAMPLE_MAX_BRANCHES */
	uint32_t reserved; /* zero */
	struct pmu_sample_branch entry[];
};

_Static_assert(offsetof(struct pmu_sample, cpu) == 8, "sample ABI");
_Static_assert(offsetof(struct pmu_sample, idx) == 12, "sample ABI");
_Static_assert(offsetof(struct pmu_sample, tsc) == 16, "sample ABI");
_Static_assert(offsetof(struct pmu_sample, rip) == 24, "sample ABI");
_Static_assert(offsetof(struct pmu_sample, period) == 32, "sample ABI");
_Static_assert(offsetof(struct pmu_sample, nr_values) == 40, "sample ABI");
_Static_assert(offsetof(struct pmu_sample, values) == 48, "sample ABI");
_Static_assert(sizeof(struct pmu_sample) == 48, "sample ABI");
_Static_assert(sizeof(struct pmu_sample_value) == 16, "sample ABI");
_Static_assert(offsetof(struct pmu_sample, version) == 44, "sample ABI");
_Static_assert(sizeof(struct pmu_sample_branches) == 8, "sample ABI");
_Static_assert(sizeof(struct pmu_sample_branch) == 16, "sample ABI");

static inline size_t pmu_sample_size(uint32_t nr_values)
{
	return sizeof(struct pmu_sample) + nr_values * sizeof(struct pmu_sample_value);
}

/* With a branch stack of nr_branches entries (its 8-byte header included). */
static inline size_t pmu_sample_size_branches(uint32_t nr_values, uint32_t nr_branches)
{
	return pmu_sample_size(nr_values) + sizeof(struct pmu_sample_branches) +
	       nr_branches * sizeof(struct pmu_sample_branch);
}

/* The largest record. */
#define PMU_SAMPLE_MAX_SIZE                                                                    \
	(sizeof(struct pmu_sample) + PMU_SAMPLE_MAX_VALUES * sizeof(struct pmu_sample_value) + \
	 sizeof(struct pmu_sample_branches) + PMU_SAMPLE_MAX_BRANCHES * sizeof(struct pmu_sample_branch))

/* Serial drain format: each record taken from a ring (RB_RECORD_SAMPLE, or
 * RB_RECORD_LOST whose id is the CPU number) is printed as one KTAP
 * diagnostic line
 *     # sample: <hex>
 * where <hex> is rb_record_to_hex() of the whole record: 2 * hdr.size
 * lowercase digits, bytes in memory order. Leading KTAP indentation is
 * allowed. tools/pmutest-samples decodes these lines. The largest sample
 * (PMU_SAMPLE_MAX_VALUES values and PMU_SAMPLE_MAX_BRANCHES branches, 568
 * bytes) makes a 1146-character line. */
#define PMU_SAMPLE_LINE_PREFIX "# sample: "
#define PMU_SAMPLE_HEX_MAX (2 * PMU_SAMPLE_MAX_SIZE + 1)

#endif
