/* Architectural PEBS (Intel ISE, chapter "Architectural PEBS"; Linux
 * 6.19's arch-PEBS driver): what CPUID.23H sub-leaves 4 and 5 offer, the
 * IA32_PEBS_BASE/INDEX encodings, the per-counter CFG_C register and the
 * record a counter's overflow writes. It replaces DS-area PEBS (format
 * 0xF in IA32_PERF_CAPABILITIES[11:8]: no IA32_PEBS_ENABLE, no
 * MSR_PEBS_DATA_CFG). Pure where it can be, so the host tests parse
 * records without any hardware. */
#ifndef PMU_INTEL_ARCH_PEBS_H
#define PMU_INTEL_ARCH_PEBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/msr.h"
#include "lib/bits.h"
#include "pmu/pmu.h"

/* Record layout (Linux perf_event.h struct arch_pebs_header,
 * arch_pebs_basic, arch_pebs_aux, arch_pebs_gprs, arch_pebs_xer_header,
 * pebs_xmm, arch_pebs_lbr_header, lbr_entry): the groups follow the
 * header in this order. */
#define ARCH_PEBS_HEADER_SIZE 16u
#define ARCH_PEBS_BASIC_SIZE 48u
#define ARCH_PEBS_AUX_SIZE 64u
#define ARCH_PEBS_GPRS_SIZE 160u
#define ARCH_PEBS_XER_SIZE (16u + 256u)
#define ARCH_PEBS_LBR_HEADER_SIZE 48u
#define ARCH_PEBS_LBR_ENTRY_SIZE 24u
#define ARCH_PEBS_MAX_LBR 32
/* The CFG_C and header bits that say which groups a record holds. */
#define ARCH_PEBS_GROUPS                                                                              \
	(ARCH_PEBS_CNTR_MASK | ARCH_PEBS_LBR_MASK | BIT(ARCH_PEBS_XMM_BIT) | BIT(ARCH_PEBS_GPR_BIT) | \
	 BIT(ARCH_PEBS_AUX_BIT) | BIT(ARCH_PEBS_EN_BIT))

struct pmu_arch_pebs_caps {
	bool present;
	char why[PMU_REASON_LEN];
	/* CPUID.23H.4:EBX shifted to CFG_C's layout: the group bits a
	 * counter's CFG_C may set (bit k of EBX is CFG_C bit 32 + k). */
	uint64_t groups;
	/* CPUID.23H.5, in IA32_PERF_GLOBAL_CTRL's layout: counters that can
	 * use PEBS (EAX GP, ECX fixed) and PDIST (EBX, EDX). */
	uint64_t counters, pdist;
};

/* Decode on the calling CPU; always fills a (present false with why). */
void pmu_arch_pebs_decode(const struct pmu_caps *caps, struct pmu_arch_pebs_caps *a);

/* IA32_PMC_GPx_CFG_C (0x1903 + 4x) or IA32_PMC_FXi_CFG_C (0x1983 + 4i). */
uint32_t pmu_arch_pebs_cfg_c_msr(int idx);

/* IA32_PEBS_BASE for a buffer at physical address phys of 4 KiB << size_log. */
uint64_t pmu_arch_pebs_base(uint64_t phys, unsigned size_log);
/* IA32_PEBS_INDEX with write offset wr and threshold offset thresh (bytes,
 * multiples of 16), EN as given, FULL clear. */
uint64_t pmu_arch_pebs_index(uint64_t wr, uint64_t thresh, bool en);
/* Its fields back, in bytes. */
struct pmu_arch_pebs_index {
	uint64_t wr, thresh;
	bool full, en;
};
struct pmu_arch_pebs_index pmu_arch_pebs_index_decode(uint64_t v);

/* LBR entries a record holds for the 2-bit LBR field (0 none, 1 eight,
 * 2 sixteen, 3 the LBR depth: depth). */
unsigned pmu_arch_pebs_lbr_entries(unsigned field, unsigned depth);
/* Bytes of the record a counter with this CFG_C writes (lbr_depth for an
 * LBR field of 3); the counters group is not sized (0 when asked). */
unsigned pmu_arch_pebs_record_size(uint64_t cfg_c, unsigned lbr_depth);

/* One record, decoded. GPRs in the encoding order (as the DS-area
 * parser's PMU_GPR_*): RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8-R15. */
struct pmu_arch_pebs_record {
	unsigned size;     /* the header's size field */
	uint64_t groups;   /* the header's group bits (ARCH_PEBS_GROUPS) */
	bool cont;         /* a fragment: another follows */
	uint64_t hdr_rsvd; /* the header's second quadword (reserved) */
	uint64_t ip, applicable, tsc;
	bool has_gprs;
	uint64_t rflags, rip, gpr[16], ssp;
	bool has_xmm;
	uint64_t xer_state; /* the XER group header's state bitmap */
	uint64_t xmm0[2];
	unsigned lbr_total, lbr_n; /* entries in the record, kept */
	uint64_t lbr_depth;        /* the LBR header's depth field */
	uint64_t lbr_ctl;          /* the LBR header's IA32_LBR_CTL field */
	struct {
		uint64_t from, to, info;
	} lbr[ARCH_PEBS_MAX_LBR];
};

/* Parse the record at rec (avail bytes readable). PMU_OK, or PMU_E_INVAL
 * with why when it cannot be a whole record: no basic group, a size
 * field that disagrees with its groups, a counters group (not parsed), a
 * record past avail. */
int pmu_arch_pebs_parse(const void *rec, size_t avail, struct pmu_arch_pebs_record *r, char *why,
			size_t whylen);

#endif
