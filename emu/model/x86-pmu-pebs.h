/* SPDX-License-Identifier: MIT */
/*
 * What the x86 PMU model's PEBS files share (x86-pmu-pebs.c: the DS area
 * and the PEBS MSRs; x86-pmu-pebs-record.c: the records): the MSR and DS
 * save area layout, the adaptive groups, and the format the configuration
 * gives.  Sources as x86-pmu-pebs.c.
 *
 * Copyright (c) 2025 The pmutest authors
 */

#ifndef X86_PMU_PEBS_H
#define X86_PMU_PEBS_H

#include "x86-pmu-int.h"

#define MSR_DS_AREA             0x600
#define MSR_PEBS_ENABLE         0x3f1
#define MSR_PEBS_DATA_CFG       0x3f2

/* The 64-bit DS save area ("DS Save Area", IA-32e layout). */
#define DS_PEBS_BASE            0x20
#define DS_PEBS_INDEX           0x28
#define DS_PEBS_MAX             0x30
#define DS_PEBS_THRESHOLD       0x38
#define DS_RESET_GP0            0x40
#define DS_RESET_FIXED0         0x80    /* formats up to 4: 8 GP slots */
#define DS_RESET_FIXED0_FMT5    0x140   /* format 5: 32 GP slots */

/* Adaptive PEBS: MSR_PEBS_DATA_CFG groups and the per-counter opt-in. */
#define CFG_MEMINFO             BIT64(0)
#define CFG_GPRS                BIT64(1)
#define CFG_XMMS                BIT64(2)
#define CFG_LBRS                BIT64(3)
#define CFG_LBR_ENTRIES(v)      ((unsigned)(((v) >> 24) & 0xff) + 1)
#define CFG_VALID               (0xfull | 0xff000000ull)
#define SEL_ADAPTIVE            BIT64(34)
#define FIXED_ADAPTIVE(i)       BIT64(32 + 4 * (i))

#define BASIC_SIZE      32
#define MEMINFO_SIZE    32
#define GPRS_SIZE       144
#define XMMS_SIZE       256
#define LBR_ENTRY_SIZE  24
/* The largest record: every group and 256 LBR entries. */
#define RECORD_MAX      (BASIC_SIZE + MEMINFO_SIZE + GPRS_SIZE + XMMS_SIZE + \
                         256 * LBR_ENTRY_SIZE)

static inline unsigned pebs_format(const X86PMUState *s)
{
    return (s->cfg.perf_caps >> 8) & 0xf;
}

static inline bool baseline(const X86PMUState *s)
{
    return (s->cfg.perf_caps & BIT64(14)) && pebs_format(s) >= 4;
}

#endif
