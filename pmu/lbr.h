/* Last branch records: which LBR facility a CPU has (Intel's legacy stack,
 * architectural LBRs, AMD's LbrExtV2), decoded from CPUID and
 * IA32_PERF_CAPABILITIES into registers as data; a filter in each one's
 * encoding; the stack read most recent first. Hardware is reached through
 * pmu/pmu_hw.h only, so the host tests run this against emu/model. */
#ifndef PMU_LBR_H
#define PMU_LBR_H

#include <stdbool.h>
#include <stdint.h>

#include "pmu/pmu.h"

enum pmu_lbr_kind {
	PMU_LBR_NONE,
	PMU_LBR_LEGACY, /* IA32_DEBUGCTL.LBR, MSR_LASTBRANCH_TOS, MSR_LBR_SELECT */
	PMU_LBR_ARCH,   /* CPUID.1CH, IA32_LBR_CTL, IA32_LBR_DEPTH */
	PMU_LBR_EXTV2,  /* AMD's LbrExtV2: DBG_EXTN_CFG.LBRV2EN, LBR_SELECT */
};

#define PMU_LBR_MAX_DEPTH 64

/* The branch kinds every LBR filter tells apart (SDM vol. 3B, "Filtering
 * of Last Branch Records"; IA32_LBR_CTL bits 16-22; AMD LBR_SELECT). */
enum pmu_lbr_branch {
	PMU_LBR_BR_JCC,
	PMU_LBR_BR_NEAR_REL_JMP,
	PMU_LBR_BR_NEAR_IND_JMP,
	PMU_LBR_BR_NEAR_REL_CALL,
	PMU_LBR_BR_NEAR_IND_CALL,
	PMU_LBR_BR_NEAR_RET,
	PMU_LBR_BR_FAR, /* far transfers, interrupts, exceptions, SYSCALL ... */
	PMU_LBR_BR_NR
};
#define PMU_LBR_BR_ALL ((1u << PMU_LBR_BR_NR) - 1)

struct pmu_lbr_caps {
	enum pmu_lbr_kind kind;
	char why[PMU_REASON_LEN]; /* PMU_LBR_NONE: the SKIP reason */
	unsigned format;          /* legacy: PERF_CAPABILITIES[5:0]; 0x3f with arch LBRs */
	unsigned depth;           /* entries in use */
	uint32_t from_msr;        /* entry 0's FROM; entry i at from_msr + i * stride */
	uint32_t to_msr;
	uint32_t info_msr; /* 0: no LBR_INFO */
	uint32_t stride;   /* 1, or 2 for AMD's FROM/TO pairs */
	uint32_t tos_msr;  /* legacy only: the most recent entry's index */
	uint32_t select_msr;
	/* The enable: ctl_msr's ctl_enable bits (DEBUGCTL.LBR, LBR_CTL.LBREn,
	 * DBG_EXTN_CFG.LBRV2EN); with arch LBRs the filter shares the MSR. */
	uint32_t ctl_msr;
	uint64_t ctl_enable;
	/* The filter is in ctl_msr too, not in a select register (the
	 * backend's encode_ctl writes it; its off value is 0). */
	bool ctl_filter;
	/* Not 0: a write of depth to it empties the stack; else every entry
	 * is written 0. */
	uint32_t reset_msr;
	bool cpl_filter, type_filter, call_stack;
	/* The stack freezes on a PMI once freeze_msr's freeze_enable bits are
	 * set, and how it shows: a freeze bit in GLOBAL_STATUS
	 * (freeze_status) or ctl_enable cleared in ctl_msr. */
	bool freeze, freeze_status;
	uint32_t freeze_msr;
	uint64_t freeze_enable;
	uint32_t arch_depths; /* CPUID.1CH:EAX[7:0] */
	struct cpuid_regs leaf_1c;
};

/* Decode on the calling CPU (CPUID and, for the legacy stack,
 * PERF_CAPABILITIES from caps). Always fills l; kind NONE with why. */
void pmu_lbr_decode(const struct pmu_caps *caps, struct pmu_lbr_caps *l);

/* What to record: the rings, the branch kinds (bit per pmu_lbr_branch),
 * and the call-stack mode. */
struct pmu_lbr_filter {
	bool os, usr;
	uint32_t kinds;
	bool call_stack;
};

/* Register values for a filter: write select (to select_msr, when it is
 * not 0) first, then ctl_on to ctl_msr to start, ctl_off to stop. */
struct pmu_lbr_regs {
	uint32_t select_msr;
	uint64_t select;
	uint32_t ctl_msr;
	uint64_t ctl_on, ctl_off;
};

/* Encode f for this LBR facility; ctl_now is ctl_msr's current value (its
 * other bits are kept). PMU_E_UNSUPPORTED, with why, when the facility
 * cannot filter that way. */
int pmu_lbr_encode(const struct pmu_lbr_caps *l, const struct pmu_lbr_filter *f, uint64_t ctl_now,
		   struct pmu_lbr_regs *r, char *why, size_t whylen);

/* One record, decoded: plain sign-extended addresses. */
struct pmu_lbr_entry {
	uint64_t from, to, info;
	bool mispred;
	bool valid; /* AMD: TO.VALID; elsewhere true */
};

/* Decode one entry's raw MSR values as the facility lays them out. */
struct pmu_lbr_entry pmu_lbr_decode_entry(const struct pmu_lbr_caps *l, uint64_t from, uint64_t to,
					  uint64_t info);

/* The stack as raw registers, and the most recent first. */
struct pmu_lbr_snapshot {
	unsigned n;
	uint64_t tos;
	uint64_t from[PMU_LBR_MAX_DEPTH], to[PMU_LBR_MAX_DEPTH], info[PMU_LBR_MAX_DEPTH];
};

/* Read every entry (and TOS) as raw values; 0 or the fault vector. */
int pmu_lbr_snapshot(const struct pmu_lbr_caps *l, struct pmu_lbr_snapshot *s);
/* The k-th most recent entry of a snapshot (k < depth). */
struct pmu_lbr_entry pmu_lbr_recent(const struct pmu_lbr_caps *l, const struct pmu_lbr_snapshot *s,
				    unsigned k);
/* Write zeros into every entry (and TOS); 0 or the fault vector. */
int pmu_lbr_clear(const struct pmu_lbr_caps *l);

const char *pmu_lbr_kind_name(enum pmu_lbr_kind k);
const char *pmu_lbr_branch_name(enum pmu_lbr_branch b);

#endif
