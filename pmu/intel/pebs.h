/* Processor event based sampling (PEBS): what a CPU offers, decoded from
 * CPUID, IA32_MISC_ENABLE and IA32_PERF_CAPABILITIES; the DS save area;
 * and the records, parsed from memory in the fixed formats 0-3 and the
 * adaptive formats 4-6. Architectural PEBS (format 0xF, CPUID.23H
 * sub-leaves 4 and 5) replaces all of it: pmu/intel/arch_pebs.c. Pure where it
 * can be, so the host tests parse records without any hardware. */
#ifndef PMU_INTEL_PEBS_H
#define PMU_INTEL_PEBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/msr.h"
#include "pmu/pmu.h"

#define PMU_PEBS_FORMAT_ARCH 0xf
/* Entries of an adaptive record's LBR group this parser keeps. */
#define PMU_PEBS_MAX_LBR 32

struct pmu_pebs_caps {
	bool present; /* DS-area PEBS, formats 0-6, that this driver drives */
	char why[PMU_REASON_LEN];
	unsigned format; /* IA32_PERF_CAPABILITIES[11:8] */
	bool trap;       /* [6]: the record's RIP is the next instruction's */
	bool arch_regs;  /* [7] */
	bool adaptive;   /* [14] with format >= 4: MSR_PEBS_DATA_CFG groups */
	/* Counters that may use PEBS, in GLOBAL_CTRL's layout. */
	uint64_t counters;
	/* Where fixed counter 0's reset value sits in the DS area. */
	unsigned fixed_reset_offset;
	/* Architectural PEBS: CPUID.23H.4 EBX (capabilities: bit k is CFG_C
	 * bit 32 + k) and sub-leaf 5 (PEBS and PDIST counters). */
	bool arch;
	uint32_t arch_caps, arch_gp, arch_pdist_gp, arch_fixed, arch_pdist_fixed;
};

/* Decode on the calling CPU; always fills p (present false with why). */
void pmu_pebs_decode(const struct pmu_caps *caps, struct pmu_pebs_caps *p);

/* The 64-bit DS save area (SDM vol. 3B, "DS Save Area", IA-32e layout),
 * with counter reset slots for 32 GP and 16 fixed counters (format 5's
 * layout; formats up to 4 keep fixed counters at 0x80). */
struct pmu_ds_area {
	uint64_t bts_base, bts_index, bts_max, bts_threshold;
	uint64_t pebs_base, pebs_index, pebs_max, pebs_threshold;
	uint64_t reset[32 + 16];
};
_Static_assert(offsetof(struct pmu_ds_area, pebs_base) == DS_PEBS_BASE, "DS layout");
_Static_assert(offsetof(struct pmu_ds_area, pebs_index) == DS_PEBS_INDEX, "DS layout");
_Static_assert(offsetof(struct pmu_ds_area, pebs_max) == DS_PEBS_MAX, "DS layout");
_Static_assert(offsetof(struct pmu_ds_area, pebs_threshold) == DS_PEBS_THRESHOLD, "DS layout");
_Static_assert(offsetof(struct pmu_ds_area, reset) == DS_PEBS_RESET_GP0, "DS layout");

/* The reset slot of counter idx (GP x or PMU_IDX_FIXED(i)); NULL if none. */
uint64_t *pmu_pebs_reset_slot(const struct pmu_pebs_caps *p, struct pmu_ds_area *ds, int idx);

/* Bytes of one record: the fixed format's, or for an adaptive counter the
 * basic group and the groups data_cfg (MSR_PEBS_DATA_CFG) asks for; a
 * counter without its adaptive bit writes the basic group alone. */
unsigned pmu_pebs_record_size(const struct pmu_pebs_caps *p, bool adaptive_counter, uint64_t data_cfg);

/* One record, decoded. GPRs in the encoding order: RAX, RCX, RDX, RBX,
 * RSP, RBP, RSI, RDI, R8-R15 (the fixed formats' RAX, RBX, RCX, RDX, RSI,
 * RDI, RBP, RSP order is converted). */
enum {
	PMU_GPR_RAX,
	PMU_GPR_RCX,
	PMU_GPR_RDX,
	PMU_GPR_RBX,
	PMU_GPR_RSP,
	PMU_GPR_RBP,
	PMU_GPR_RSI,
	PMU_GPR_RDI
};
struct pmu_pebs_record {
	unsigned size;
	uint64_t format_field; /* adaptive: the DATA_CFG bits it follows (47:0) */
	bool has_ip;           /* the record's IP: the eventing IP (format 2+ and adaptive) */
	uint64_t ip;
	bool has_gprs; /* RFLAGS, RIP (trap-like: the next instruction) and GPRs */
	uint64_t rflags, rip, gpr[16];
	bool has_applicable;
	uint64_t applicable; /* counters this record is for (format 1-2: all overflowed) */
	bool has_tsc;
	uint64_t tsc;
	unsigned lbr_n; /* LBR group entries (adaptive), at most PMU_PEBS_MAX_LBR kept */
	unsigned lbr_total;
	struct {
		uint64_t from, to, info;
	} lbr[PMU_PEBS_MAX_LBR];
};

/* Parse the record at rec (avail bytes readable). PMU_OK, or PMU_E_INVAL
 * with why when it cannot be a record of this format (a size field that
 * disagrees with its groups, a record past avail). */
int pmu_pebs_parse(const struct pmu_pebs_caps *p, const void *rec, size_t avail, struct pmu_pebs_record *r,
		   char *why, size_t whylen);

#endif
