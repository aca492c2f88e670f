/* SPDX-License-Identifier: MIT */
/*
 * What the register and counting halves of the x86 PMU model share:
 * which counters exist, how wide they are, and which fields of their
 * control registers mean what.
 *
 * Copyright (c) 2025 The pmutest authors
 */

#ifndef X86_PMU_INT_H
#define X86_PMU_INT_H

#include "x86-pmu.h"

#define BIT64(n)        (1ull << (n))

/*
 * IA32_PERFEVTSELx (SDM vol. 3B, "Architectural Performance Monitoring
 * Version 1 Facilities"); AMD's PerfEvtSel puts the same fields at the
 * same positions (APM vol. 2, 13.2, "Core Performance Event-Select
 * Registers") and adds EventSelect[11:8] at 35:32.
 */
#define SEL_EVENT(v)    ((unsigned)((v) & 0xff))
#define SEL_UMASK(v)    ((unsigned)(((v) >> 8) & 0xff))
#define SEL_USR         BIT64(16)
#define SEL_OS          BIT64(17)
#define SEL_EDGE        BIT64(18)
#define SEL_PC          BIT64(19)
#define SEL_INT         BIT64(20)
#define SEL_ANY         BIT64(21)
#define SEL_EN          BIT64(22)
#define SEL_INV         BIT64(23)
#define SEL_CMASK(v)    ((unsigned)(((v) >> 24) & 0xff))
#define SEL_AMD_EVENT_HI(v) ((unsigned)(((v) >> 32) & 0xf))

/* IA32_FIXED_CTR_CTRL: four bits per fixed counter. */
#define FIXED_FIELD(v, i)   (((v) >> (4 * (i))) & 0xf)
#define FIXED_OS            0x1u
#define FIXED_USR           0x2u
#define FIXED_ANY           0x4u
#define FIXED_PMI           0x8u

static inline uint64_t x86pmu_mask(unsigned width)
{
    return width >= 64 ? ~0ull : (1ull << width) - 1;
}

static inline bool x86pmu_is_amd(const X86PMUState *s)
{
    return s->cfg.vendor == X86PMU_VENDOR_AMD;
}

static inline bool x86pmu_defect(const X86PMUState *s, X86PMUDefect d)
{
    return s->cfg.defect == d;
}

static inline bool x86pmu_quirk(const X86PMUState *s, uint32_t q)
{
    return (s->cfg.quirks & q) != 0;
}

/* Core counters of an AMD CPU (APM vol. 2, 13.2). */
unsigned x86pmu_amd_counters(const X86PMUConfig *cfg);
bool x86pmu_gp_exists(const X86PMUState *s, unsigned x);
bool x86pmu_fixed_exists(const X86PMUState *s, unsigned i);
/* Bits of the existing counters, in GLOBAL_CTRL's layout. */
uint64_t x86pmu_counter_bits(const X86PMUState *s);
/* The width counters really have (a defect may make it differ). */
unsigned x86pmu_gp_width(const X86PMUState *s);
unsigned x86pmu_fixed_width(const X86PMUState *s);
/* A PMI was requested: freeze-on-PMI and the quirks' state (count.c). */
unsigned x86pmu_pmi_raised(X86PMUState *s);

/* Last branch records (x86-pmu-lbr.c). */
void x86pmu_lbr_reset(X86PMUState *s);
void x86pmu_lbr_cpuid(const X86PMUState *s, uint32_t leaf, uint32_t subleaf,
                      uint32_t *eax, uint32_t *ebx, uint32_t *ecx,
                      uint32_t *edx);
X86PMUAccess x86pmu_lbr_rdmsr(X86PMUState *s, uint32_t msr, uint64_t *val);
X86PMUAccess x86pmu_lbr_wrmsr(X86PMUState *s, uint32_t msr, uint64_t val);
/* The k-th most recent record, plain addresses (0 past the stack). */
void x86pmu_lbr_entry(const X86PMUState *s, unsigned k, uint64_t *from,
                      uint64_t *to, uint64_t *info);

/* PEBS (x86-pmu-pebs.c). */
bool x86pmu_pebs_present(const X86PMUState *s);
void x86pmu_pebs_cpuid(const X86PMUState *s, uint32_t leaf,
                       uint32_t *ecx, uint32_t *edx);
X86PMUAccess x86pmu_pebs_rdmsr(X86PMUState *s, uint32_t msr, uint64_t *val);
X86PMUAccess x86pmu_pebs_wrmsr(X86PMUState *s, uint32_t msr, uint64_t val);
/*
 * The adaptive opt-in bits that take writes: PERFEVTSELx[34], or
 * IA32_FIXED_CTR_CTRL[32 + 4i] of each fixed counter (fixed = true).
 */
uint64_t x86pmu_pebs_ctrl_bits(const X86PMUState *s, bool fixed);
/* A counter overflowed; true when PEBS takes the overflow. */
bool x86pmu_pebs_overflow(X86PMUState *s, unsigned idx);

#endif
