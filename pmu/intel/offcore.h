/* Offcore response (Intel): the per-model valid bits of MSR_OFFCORE_RSP_0/1,
 * or of the four off-module response MSRs (OMR) that replace them on
 * Diamond Rapids and Nova Lake, and the allocation of those MSRs among the
 * events that select them. */
#ifndef PMU_INTEL_OFFCORE_H
#define PMU_INTEL_OFFCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/msr.h"
#include "pmu/intel/models.h"
#include "pmu/pmu.h"

/* The classic selects: OFFCORE_RESPONSE_0 is event 0xB7 umask 0x01 with
 * MSR_OFFCORE_RSP_0, OFFCORE_RESPONSE_1 event 0xBB umask 0x01 with
 * MSR_OFFCORE_RSP_1 (SDM vol. 3B, "Off-core Response Performance
 * Monitoring" of each microarchitecture from Nehalem to Ice Lake). Golden
 * Cove and later P-cores select them with 0x2A/0x2B umask 0x01, the Atom
 * cores with 0xB7 umask 0x01/0x02: the rows say which (pmu/intel/offcore.c). */
#define PMU_OFFCORE_EVENT_0 0xb7
#define PMU_OFFCORE_EVENT_1 0xbb
#define PMU_OFFCORE_UMASK 0x01

/* At most four MSRs: OMR_0-3. */
#define PMU_OFFCORE_MAX 4

/* One row: the cores (pmu/intel/models.h, intel_core_uarch_of) it holds
 * for and what the MSRs accept; where that comes from is said beside each
 * row in pmu/intel/offcore.c. */
struct pmu_offcore_model {
	const char *name;        /* "Sandy/Ivy Bridge client" */
	uint32_t client, server; /* INTEL_UARCHS() of the cores on client / server parts */
	/* 0, or the generations (intel_uarch_of) the row is limited to: the
	 * L3-miss suppliers are the platform's, so one core may need two rows. */
	uint32_t parts;
	/* 1: RSP_0 only (Nehalem), 2: RSP_0 and RSP_1, 4: OMR_0-3 (omr). */
	unsigned nmsrs;
	bool omr; /* the MSRs are OMR_0-3 at 0x3E0, not RSP_0/1 at 0x1A6 */
	/* The select of each MSR (RSP_0/1: two; OMR: four, one umask bit each). */
	uint8_t event[PMU_OFFCORE_MAX], umask[PMU_OFFCORE_MAX];
	uint64_t valid[PMU_OFFCORE_MAX]; /* bits each MSR accepts; others #GP */
	/* Select n counts on GP counter n only (Arctic Wolf): an event keeps
	 * the MSR its umask names, as moving it would move its counter. */
	bool slot_counter;
	uint64_t request; /* the request-type bits (the rest of valid is response) */
	uint32_t gp_mask; /* the GP counters the selects may use (0: any) */
	/* Demand data reads that missed the L3, the value the hardware check
	 * counts with, and what it is; 0 where no value is published, and
	 * no_l3_miss_why says so. */
	uint64_t dmnd_rd_l3_miss;
	const char *l3_miss_name;
	/* Intel's own L3-miss event, where the checked value is a superset of
	 * it (the Skylake parts: the check compares the two); else 0. */
	uint64_t intel_l3_miss;
	const char *intel_l3_miss_name;
	const char *no_l3_miss_why;
	/* OMR rows: demand data reads with any response (every request that
	 * leaves the module), the value the check of the four MSRs sets
	 * beside the L3-miss one; 0 elsewhere. */
	uint64_t dmnd_rd_any;
	bool smt_shared; /* one MSR pair per core, shared by its hyperthreads */
	/* Demand data reads from local DRAM whose snoop found the line
	 * modified in another core (HITM): a response the supplier field
	 * selects and the snoop field must filter out of a single-threaded
	 * chase; 0 where the row has no published encoding. */
	uint64_t dram_hitm;
	const char *dram_hitm_name;
};

/* The table row for this CPU, or NULL (then events 0xB7/0xBB are refused).
 * Per CPU: a hybrid part's P- and E-cores have different rows. */
const struct pmu_offcore_model *pmu_offcore_model(const struct pmu_caps *c);
/* How many RSP MSRs the model has (0 without a table row). */
unsigned pmu_offcore_msrs(const struct pmu_caps *c);

/* How many selects the row's layout has: 2 (RSP_0/1, even where only
 * RSP_0 exists) or 4 (OMR). */
static inline unsigned pmu_offcore_nsel(const struct pmu_offcore_model *m)
{
	return m && m->omr ? MSR_OMR_NR : 2;
}
/* The address of MSR `slot` of the row's layout. */
static inline uint32_t pmu_offcore_msr(const struct pmu_offcore_model *m, int slot)
{
	if (m && m->omr)
		return MSR_OMR_0 + (uint32_t)slot;
	return slot ? MSR_OFFCORE_RSP_1 : MSR_OFFCORE_RSP_0;
}
/* The index (RSP 0/1, OMR 0-3) of an extra-MSR address. */
static inline int pmu_offcore_slot(uint32_t msr)
{
	if (msr >= MSR_OMR_0 && msr < MSR_OMR_0 + MSR_OMR_NR)
		return (int)(msr - MSR_OMR_0);
	return msr == MSR_OFFCORE_RSP_1 ? 1 : 0;
}
/* "MSR_OFFCORE_RSP_1 (0x1a7)" or "MSR_OMR_2 (0x3e2)", for messages. */
const char *pmu_offcore_msr_name(uint32_t msr, char *buf, size_t n);
/* The MSR index that (event, umask) selects on model m, or -1 when it
 * is no offcore select there. */
int pmu_offcore_slot_of(const struct pmu_offcore_model *m, uint16_t event, uint8_t umask);
/* A counting attr for the select of RSP MSR `slot` with value rsp. */
void pmu_offcore_attr(struct pmu_event_attr *a, const struct pmu_offcore_model *m, int slot, uint64_t rsp);
/* "0xb7/0xbb umask 0x01", "0xb7 umask 0x01/0x02" or "0x2a umask
 * 0x01/0x02/0x04/0x08": the selects, for messages. */
const char *pmu_offcore_selects(const struct pmu_offcore_model *m, char *buf, size_t n);

/* Check attr's offcore_rsp against the model (the RSP MSR its select
 * names) before anything is written: 0 when fine, else PMU_E_INVAL /
 * PMU_E_UNSUPPORTED with why filled. */
int pmu_offcore_check(const struct pmu_caps *c, const struct pmu_event_attr *a, char *why, size_t whylen);

/* Place the offcore events of a group on the RSP or OMR MSRs of the
 * calling CPU (and, where the model shares them, of its SMT siblings):
 * msr[i] is the MSR event i asks for (0: none) and comes back as the MSR
 * it got. Equal values share an MSR; a value whose MSR holds another one
 * moves to the next MSR in turn (RSP_1 after RSP_0 and back; OMR n+1
 * after n, OMR_0 after OMR_3) that is free or holds the same value and
 * has its bits, and then counts with that MSR's select (0xB7 <-> 0xBB,
 * or the OMR umask bit), as Linux's intel_alt_er() does; a value that
 * finds no MSR is refused with the reason in that event (PMU_E_BUSY).
 * On success the MSRs are held until pmu_offcore_release. */
int pmu_offcore_reserve(struct pmu_cpu *pc, struct pmu_event *const *evs, unsigned n, uint32_t *msr);
void pmu_offcore_release(struct pmu_cpu *pc, uint32_t msr);

/* What the RSP/OMR MSRs hold as seen from pc: its own events plus, on a
 * model whose MSRs are shared per core, those of its SMT siblings. */
struct pmu_offcore_view {
	uint64_t val[PMU_OFFCORE_MAX];
	unsigned users[PMU_OFFCORE_MAX];
	int sibling[PMU_OFFCORE_MAX]; /* a sibling CPU holding it, or -1 */
};
void pmu_offcore_view(struct pmu_cpu *pc, struct pmu_offcore_view *v);
/* How many of pc's own events hold MSR slot (RSP 0/1, OMR 0-3). */
unsigned pmu_offcore_users(const struct pmu_cpu *pc, int slot);

#endif
