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

/*
 * Offcore response (x86-pmu-offcore.c): the RSP MSR an event select names
 * (-1: none), and the rules of a write to RSP MSR i.
 */
int x86pmu_offcore_slot(const X86PMUState *s, uint64_t sel);
X86PMUAccess x86pmu_offcore_write(X86PMUState *s, unsigned i, uint64_t val);

#endif
