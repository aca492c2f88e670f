/* Offcore response (Intel): the per-model valid bits of MSR_OFFCORE_RSP_0/1
 * and the allocation of those two MSRs among events 0xB7/0xBB. */
#ifndef PMU_INTEL_OFFCORE_H
#define PMU_INTEL_OFFCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/msr.h"
#include "pmu/intel_models.h"
#include "pmu/pmu.h"

/* OFFCORE_RESPONSE_0 is event 0xB7 umask 0x01 with MSR_OFFCORE_RSP_0,
 * OFFCORE_RESPONSE_1 event 0xBB umask 0x01 with MSR_OFFCORE_RSP_1 (SDM
 * vol. 3B, "Off-core Response Performance Monitoring" of each
 * microarchitecture from Nehalem on). */
#define PMU_OFFCORE_EVENT_0 0xb7
#define PMU_OFFCORE_EVENT_1 0xbb
#define PMU_OFFCORE_UMASK 0x01

/* One row: the microarchitectures (pmu/intel_models.h) it holds for and
 * what the MSRs accept; where that comes from is said beside each row in
 * pmu/intel_offcore.c. */
struct pmu_offcore_model {
	const char *name;        /* "Sandy/Ivy Bridge client" */
	uint32_t client, server; /* INTEL_UARCHS() of the client / server parts it holds for */
	unsigned nmsrs;          /* 1: RSP_0 only (Nehalem), 2: RSP_0 and RSP_1 */
	uint64_t valid;          /* bits either MSR accepts; others #GP */
	uint64_t request;        /* the request-type field (the rest of valid is response) */
	/* Demand data reads that missed the L3 (supplier = DRAM/remote/non-DRAM,
	 * any snoop result), the value the hardware check counts with. */
	uint64_t dmnd_rd_l3_miss;
	bool smt_shared; /* one MSR pair per core, shared by its hyperthreads */
};

/* The table row for this CPU, or NULL (then events 0xB7/0xBB are refused). */
const struct pmu_offcore_model *pmu_offcore_model(const struct pmu_caps *c);
/* How many RSP MSRs the model has (0 without a table row). */
unsigned pmu_offcore_msrs(const struct pmu_caps *c);

/* The RSP MSR index (0/1) of an extra-MSR address; the event code that
 * pairs with MSR index s. */
static inline int pmu_offcore_slot(uint32_t msr)
{
	return msr == MSR_OFFCORE_RSP_1 ? 1 : 0;
}
static inline uint8_t pmu_offcore_event_of(int slot)
{
	return slot ? PMU_OFFCORE_EVENT_1 : PMU_OFFCORE_EVENT_0;
}

/* Check attr's offcore_rsp against the model before anything is written:
 * 0 when fine, else PMU_E_INVAL / PMU_E_UNSUPPORTED with why filled. */
int pmu_offcore_check(const struct pmu_caps *c, const struct pmu_event_attr *a, char *why, size_t whylen);

/* Place the offcore events of a group on the RSP MSRs of the calling CPU
 * (and, where the model shares them, of its SMT siblings): msr[i] is the
 * MSR event i asks for (0: none) and comes back as the MSR it got. Equal
 * values share an MSR; a value whose MSR holds another one moves to the
 * other MSR when that is free or holds the same value (the event then
 * counts as the other event code, 0xB7 <-> 0xBB, as Linux does); a third
 * distinct value is refused with the reason in that event (PMU_E_BUSY).
 * On success the MSRs are held until pmu_offcore_release. */
int pmu_offcore_reserve(struct pmu_cpu *pc, struct pmu_event *const *evs, unsigned n, uint32_t *msr);
void pmu_offcore_release(struct pmu_cpu *pc, uint32_t msr);

/* What the RSP MSRs hold as seen from pc: its own events plus, on a model
 * whose MSRs are shared per core, those of its SMT siblings. */
struct pmu_offcore_view {
	uint64_t val[2];
	unsigned users[2];
	int sibling[2]; /* a sibling CPU holding it, or -1 */
};
void pmu_offcore_view(struct pmu_cpu *pc, struct pmu_offcore_view *v);

/* The core of the calling CPU: its x2APIC ID without the SMT bits
 * (CPUID.0BH sub-leaf 0: EAX[4:0] = SMT bits, EDX = x2APIC ID; SDM vol. 3A,
 * "Identifying Topological Relationships in a MP System"). Falls back to
 * CPUID.01H:EBX[31:24] and the thread count of leaves 01H/04H. */
uint32_t pmu_offcore_core_id(void);

#endif
