/* SPDX-License-Identifier: MIT */
/*
 * Architectural PEBS in the x86 PMU model: the registers' layout both
 * halves share, what the register, CPUID and counting parts ask of the
 * half below the counting core (x86-pmu-arch-pebs.c), and the assist
 * over it (x86-pmu-arch-pebs-record.c).
 *
 * Sources: Linux's reading of the ISE chapter "Architectural PEBS" in
 * the arch-PEBS series merged for 6.19 (msr-index.h, perf_event.h; tip
 * cc5755ee9b8b, d21954c8a0ff, 2721e8da2de7).
 *
 * Copyright (c) 2026 The pmutest authors
 */

#ifndef X86_PMU_ARCH_PEBS_H
#define X86_PMU_ARCH_PEBS_H

#include "x86-pmu.h"

#define ARCH_PEBS_MSR_BASE          0x3f4
#define ARCH_PEBS_MSR_INDEX         0x3f5

/* IA32_PEBS_BASE: physical address [63:12], SIZE [3:0] (4 KiB << SIZE). */
#define ARCH_PEBS_BASE_SIZE(v)      ((unsigned)((v) & 0xf))
#define ARCH_PEBS_BASE_ADDR(v)      ((v) & ~0xfffull)
#define ARCH_PEBS_BASE_VALID        (~0xff0ull)
/* IA32_PEBS_INDEX: WR [26:4], FULL 31, EN 32, THRESH [58:36]; offsets in
 * bytes, multiples of 16. */
#define ARCH_PEBS_INDEX_WR          0x7fffff0ull
#define ARCH_PEBS_INDEX_FULL        (1ull << 31)
#define ARCH_PEBS_INDEX_EN          (1ull << 32)
#define ARCH_PEBS_INDEX_THRESH_SHIFT 36
#define ARCH_PEBS_INDEX_THRESH      (0x7fffffull << ARCH_PEBS_INDEX_THRESH_SHIFT)
#define ARCH_PEBS_INDEX_VALID       (ARCH_PEBS_INDEX_WR | ARCH_PEBS_INDEX_FULL | \
                                     ARCH_PEBS_INDEX_EN | ARCH_PEBS_INDEX_THRESH)
/*
 * IA32_PMC_GPn/FXm_CFG_C: the reload value [31:0]; the groups: counters
 * [38:35], LBR [41:40], XMM 49, GPR 61, AUX (memory info) 62; PEBS on 63.
 * A record's header has the same group bits, and in 63 the basic group.
 */
#define ARCH_PEBS_CFG_RELOAD        0xffffffffull
#define ARCH_PEBS_CFG_CNTR          (0xfull << 35)
#define ARCH_PEBS_CFG_LBR_SHIFT     40
#define ARCH_PEBS_CFG_LBR           (3ull << ARCH_PEBS_CFG_LBR_SHIFT)
#define ARCH_PEBS_CFG_XMM           (1ull << 49)
#define ARCH_PEBS_CFG_GPR           (1ull << 61)
#define ARCH_PEBS_CFG_AUX           (1ull << 62)
#define ARCH_PEBS_CFG_EN            (1ull << 63)
#define ARCH_PEBS_CFG_GROUPS        (ARCH_PEBS_CFG_CNTR | ARCH_PEBS_CFG_LBR | \
                                     ARCH_PEBS_CFG_XMM | ARCH_PEBS_CFG_GPR | \
                                     ARCH_PEBS_CFG_AUX)
/* IA32_PERF_GLOBAL_STATUS bit 54: the threshold was reached. */
#define ARCH_PEBS_STATUS_THRESH     (1ull << 54)

/* Counter idx's CFG_C (GLOBAL_CTRL's bit numbering). */
static inline uint64_t x86pmu_arch_pebs_cfg_c(const X86PMUState *s,
                                              unsigned idx)
{
    return idx < 32 ? s->gp_cfg_c[idx] : s->fixed_cfg_c[idx - 32];
}

/* --- Below the counting core (x86-pmu-arch-pebs.c) --- */

/* The named shapes with architectural PEBS (as x86pmu_shape_named). */
const char *x86pmu_arch_pebs_shape(const char *name, X86PMUConfig *cfg);
const char *x86pmu_arch_pebs_shape_name(unsigned i);
bool x86pmu_arch_pebs_present(const X86PMUState *s);
/* CPUID.23H sub-leaf 0 EAX[5:4], sub-leaves 4 and 5 (after x86-pmu-v6.c). */
void x86pmu_arch_pebs_cpuid(const X86PMUState *s, uint32_t leaf,
                            uint32_t subleaf, uint32_t *eax, uint32_t *ebx,
                            uint32_t *ecx, uint32_t *edx);
/* IA32_PEBS_BASE and IA32_PEBS_INDEX (X86PMU_NOT_MINE for others). */
X86PMUAccess x86pmu_arch_pebs_rdmsr(X86PMUState *s, uint32_t msr,
                                    uint64_t *val);
X86PMUAccess x86pmu_arch_pebs_wrmsr(X86PMUState *s, uint32_t msr,
                                    uint64_t val);
/* GLOBAL_STATUS bits it adds (the threshold's, 54), for the status MSRs. */
uint64_t x86pmu_arch_pebs_status_bits(const X86PMUState *s);
/* Counter idx (GLOBAL_CTRL's bit) has a CFG_C for PEBS, and its bits. */
bool x86pmu_arch_pebs_cfg_c_exists(const X86PMUState *s, unsigned idx);
uint64_t x86pmu_arch_pebs_cfg_c_valid(const X86PMUState *s, unsigned idx);
/* A counter overflowed; true when PEBS takes the overflow. */
bool x86pmu_arch_pebs_overflow(X86PMUState *s, unsigned idx);

/* --- Over the counting core (x86-pmu-arch-pebs-record.c) --- */

/* Write the owed records, reload their counters, raise the threshold PMI. */
unsigned x86pmu_arch_pebs_assist(X86PMUState *s, const X86PMUMachine *m);

#endif
