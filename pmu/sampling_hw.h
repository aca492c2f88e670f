/* What a sampling session (pmu/pmu.h) takes from the hardware beyond the
 * interrupted RIP: precise RIPs from PEBS records, and branch stacks read
 * from the LBRs in the PMI (the last branches, or the call stack of code
 * running at CPL > 0). Set up on the session's CPU around
 * pmu_sampling_start/stop; the PMI handler (pmu/pmi.c) turns PEBS records
 * into samples and appends the stacks. */
#ifndef PMU_SAMPLING_HW_H
#define PMU_SAMPLING_HW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/lbr.h"
#include "pmu/pmu.h"
#include "pmu/sample_record.h"

/* Memory pmu_sampling_hw_start needs for PEBS: the DS area and a buffer
 * of a few records (one per PMI: the threshold is one record). */
#define PMU_SAMPLING_HW_MEM 8192u

/* Which branch stack the samples carry. */
enum pmu_sampling_branches {
	PMU_SAMPLING_BRANCHES_NONE,
	/* The last branches of every kind before the overflow, the LBRs
	 * frozen on the PMI (FREEZE_LBRS_ON_PMI where there is one). */
	PMU_SAMPLING_BRANCHES_ANY,
	/* The call stack of code at CPL > 0: LBR call-stack mode, user
	 * branches only. Linux offers LBR call stacks for user space only for
	 * the same reason: the PMI's own calls and returns at CPL 0 would
	 * push and pop the stack. */
	PMU_SAMPLING_BRANCHES_USER_CALLSTACK,
};

struct pmu_sampling_hw {
	/* Branch stacks: the LBRs and their filter. */
	bool branches;
	enum pmu_sampling_branches mode;
	struct pmu_lbr_caps lbr;
	struct pmu_lbr_regs lbr_regs;
	uint64_t debugctl; /* lbr.freeze_msr before start (Intel's IA32_DEBUGCTL) */
	/* Precise samples: the event on a PEBS counter, and the backend's
	 * state for its records (pmu/intel/precise.c). */
	struct pmu_event *precise;
	struct pmu_precise_state *precise_state;
	char reason[PMU_REASON_LEN];
};

/* On the session's CPU, with the events placed and before
 * pmu_sampling_start: give `precise` (NULL: none) PEBS, which it must be
 * placed for (a counter that can use PEBS; its INT bit is dropped: the
 * buffer PMI takes its place, as in Linux ds.c), and turn the LBRs on for
 * branch stacks (USER_CALLSTACK needs the call-stack mode and a CPL
 * filter: PMU_E_UNSUPPORTED with the reason elsewhere). mem: PMU_SAMPLING_HW_MEM bytes, 64-byte aligned (NULL
 * without `precise`). PMU_OK, or an error with h->reason. Then route the
 * handler to it with pmu_pmi_set_hw(h). */
int pmu_sampling_hw_start(struct pmu_sampling_hw *h, struct pmu_event *precise,
			  enum pmu_sampling_branches branches, void *mem, size_t mem_size);
/* After pmu_sampling_stop: PEBS and the LBRs off, DEBUGCTL as it was. */
void pmu_sampling_hw_stop(struct pmu_sampling_hw *h);

/* Route the calling CPU's PMI handler (pmu/pmi.c) to h (NULL: stop). */
void pmu_pmi_set_hw(struct pmu_sampling_hw *h);

/* For a placement that samples precisely: the free GP counters that can
 * (the backend's precise ops: PEBS on Intel) on the calling CPU (0 with
 * why when there are none). */
uint32_t pmu_sampling_hw_precise_counters(char *why, size_t whylen);

/* In the PMI (pmu/pmi.c): the newest branches, at most max. */
unsigned pmu_sampling_hw_branches(const struct pmu_sampling_hw *h, struct pmu_sample_branch *out,
				  unsigned max);
/* In the PMI: each precise record as emit(ctx, rip), the buffer emptied.
 * Returns the records. */
unsigned pmu_sampling_hw_precise(struct pmu_sampling_hw *h, void (*emit)(void *ctx, uint64_t rip), void *ctx);
/* At the end of the PMI: LBRs a version 2-3 freeze stopped run again. */
void pmu_sampling_hw_pmi_done(const struct pmu_sampling_hw *h);

#endif
