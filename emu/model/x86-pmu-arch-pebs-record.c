/* SPDX-License-Identifier: MIT */
/*
 * The x86 PMU model's architectural PEBS over the counting core: the
 * records the overflows x86-pmu-arch-pebs.c took owe, written into the
 * buffer at IA32_PEBS_BASE, the counters reloaded from CFG_C, and the
 * threshold's PMI (which is why this half sits over the counting core,
 * as x86-pmu-pebs-record.c does for DS-area PEBS).
 *
 * Sources: Linux's reading of the ISE chapter "Architectural PEBS" in the
 * arch-PEBS series merged for 6.19: tip d21954c8a0ff (the header, the
 * groups and their order: perf_event.h struct arch_pebs_header,
 * arch_pebs_basic, arch_pebs_aux, arch_pebs_gprs, arch_pebs_xer_header
 * then pebs_xmm, arch_pebs_lbr_header, lbr_entry; the index; GLOBAL_STATUS
 * bit 54), 2721e8da2de7 (the buffer's physical address and size).  Where
 * those leave a behaviour open the model picks one ("model's choice").
 *
 * Copyright (c) 2026 The pmutest authors
 */

#include <string.h>

#include "x86-pmu-int.h"
#include "x86-pmu-arch-pebs.h"

#define HEADER_SIZE             16
#define BASIC_SIZE              48
#define AUX_SIZE                64
#define GPRS_SIZE               160
#define XER_SIZE                (16 + 256)
#define LBR_HEADER_SIZE         48
#define LBR_ENTRY_SIZE          24
#define RECORD_MAX              (HEADER_SIZE + BASIC_SIZE + AUX_SIZE + \
                                 GPRS_SIZE + XER_SIZE + LBR_HEADER_SIZE + \
                                 X86PMU_LBR_MAX * LBR_ENTRY_SIZE)

static void put64(uint8_t *p, uint64_t v)
{
    unsigned i;

    for (i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

/* Entries of an LBR group with LBR field f (Linux ARCH_PEBS_LBR_NUM_*). */
static unsigned lbr_entries(const X86PMUState *s, unsigned f)
{
    unsigned depth;

    switch (f) {
    case 1:
        return 8;
    case 2:
        return 16;
    case 3:
        depth = s->cfg.lbr == X86PMU_LBR_ARCH ? (unsigned)s->lbr_depth :
                s->cfg.lbr_depth;
        return depth > X86PMU_LBR_MAX ? X86PMU_LBR_MAX : depth;
    default:
        return 0;
    }
}

/*
 * Counter idx's record: the header (size, the groups present, the basic
 * group), the basic group (eventing IP, applicable counters, TSC, retire
 * latency not emulated), then memory info (not emulated: zeros), GPRs
 * (RFLAGS, RIP, RAX..R15 in encoding order, SSP 0), the XMM group after
 * its XSAVE-state header (model's choice: bit 1, SSE) and the LBR group
 * after its header (IA32_LBR_CTL, the entries' count), as CFG_C asks.
 * The counters group is never offered (x86pmu_arch_pebs_cfg_c_valid).
 */
static unsigned record(const X86PMUState *s, const X86PMUMachine *m,
                       unsigned idx, uint64_t groups, uint8_t *r)
{
    unsigned n = HEADER_SIZE + BASIC_SIZE, i;

    put64(r + HEADER_SIZE, m->eventing_ip);
    put64(r + HEADER_SIZE + 8, BIT64(idx));
    put64(r + HEADER_SIZE + 16, m->tsc);
    if (groups & ARCH_PEBS_CFG_AUX) {
        n += AUX_SIZE;
    }
    if (groups & ARCH_PEBS_CFG_GPR) {
        put64(r + n, m->rflags);
        put64(r + n + 8, m->rip);
        for (i = 0; i < 16; i++) {
            put64(r + n + 16 + 8 * i, m->gpr[i]);
        }
        n += GPRS_SIZE;
    }
    if (groups & ARCH_PEBS_CFG_XMM) {
        put64(r + n, BIT64(1));
        for (i = 0; i < 16; i++) {
            put64(r + n + 16 + 16 * i, m->xmm[i][0]);
            put64(r + n + 16 + 16 * i + 8, m->xmm[i][1]);
        }
        n += XER_SIZE;
    }
    if (groups & ARCH_PEBS_CFG_LBR) {
        unsigned k, entries = lbr_entries(s, (unsigned)(groups >> ARCH_PEBS_CFG_LBR_SHIFT) & 3);

        put64(r + n + 8, s->lbr_ctl);
        put64(r + n + 16, entries);
        n += LBR_HEADER_SIZE;
        for (k = 0; k < entries; k++) {
            uint64_t from, to, info;

            x86pmu_lbr_entry(s, k, &from, &to, &info);
            put64(r + n, from);
            put64(r + n + 8, to);
            put64(r + n + 16, info);
            n += LBR_ENTRY_SIZE;
        }
    }
    put64(r, (uint64_t)n | (groups & ARCH_PEBS_CFG_GROUPS) | ARCH_PEBS_CFG_EN);
    return n;
}

/*
 * One owed record into the buffer, or FULL when it does not fit (the
 * record is dropped, nothing is signalled: model's choice; the model
 * never splits a record into fragments).  True when the threshold was
 * reached: the write offset at or past it after the record.
 */
static bool write_record(X86PMUState *s, const X86PMUMachine *m,
                         unsigned idx)
{
    uint8_t rec[RECORD_MAX];   /* per call: vCPU threads run this at once */
    uint64_t groups = x86pmu_arch_pebs_cfg_c(s, idx) & ARCH_PEBS_CFG_GROUPS;
    uint64_t wr = s->pebs_index & ARCH_PEBS_INDEX_WR;
    uint64_t thresh = (s->pebs_index & ARCH_PEBS_INDEX_THRESH) >>
                      ARCH_PEBS_INDEX_THRESH_SHIFT << 4;
    uint64_t size = 4096ull << ARCH_PEBS_BASE_SIZE(s->pebs_base);
    unsigned n;

    if (x86pmu_defect(s, X86PMU_DEFECT_ARCH_PEBS_GROUPS_IGNORED)) {
        groups = (uint64_t)s->cfg.arch_pebs_caps << 32 & ARCH_PEBS_CFG_GROUPS;
    }
    memset(rec, 0, sizeof(rec));
    n = record(s, m, idx, groups, rec);
    if (wr + n > size || !m->write_phys ||
        !m->write_phys(m->opaque, ARCH_PEBS_BASE_ADDR(s->pebs_base) + wr, rec, n)) {
        s->pebs_index |= ARCH_PEBS_INDEX_FULL;
        return false;
    }
    if (!x86pmu_defect(s, X86PMU_DEFECT_ARCH_PEBS_INDEX_STUCK)) {
        wr += n;
        s->pebs_index = (s->pebs_index & ~ARCH_PEBS_INDEX_WR) | wr;
    }
    return wr >= thresh;
}

/*
 * The owed records, lowest counter first, one per counter with its own
 * groups (model's choice where two overflow on one instruction); each
 * counter then restarts from CFG_C[31:0] sign-extended to its width
 * (model's choice, as auto counter reload in x86-pmu-v6.c: Linux writes
 * the 32-bit -period there).  Nothing is written while IA32_PEBS_INDEX.EN
 * is clear or FULL is set.  The threshold: GLOBAL_STATUS bit 54 and a PMI.
 */
unsigned x86pmu_arch_pebs_assist(X86PMUState *s, const X86PMUMachine *m)
{
    uint64_t pend = s->pebs_pending;
    bool thresh = false;

    s->pebs_pending = 0;
    while (pend) {
        unsigned idx = __builtin_ctzll(pend);
        unsigned w = idx < 32 ? x86pmu_gp_width(s) : x86pmu_fixed_width(s);
        uint64_t v = (uint64_t)(int64_t)(int32_t)(uint32_t)x86pmu_arch_pebs_cfg_c(s, idx) &
                     x86pmu_mask(w);

        pend &= pend - 1;
        if ((s->pebs_index & ARCH_PEBS_INDEX_EN) && !(s->pebs_index & ARCH_PEBS_INDEX_FULL)) {
            thresh |= write_record(s, m, idx);
        }
        if (x86pmu_defect(s, X86PMU_DEFECT_ARCH_PEBS_NO_RELOAD)) {
            continue;
        }
        if (idx < 32) {
            s->gp_ctr[idx] = v;
        } else {
            s->fixed_ctr[idx - 32] = v;
        }
    }
    if (!thresh || x86pmu_defect(s, X86PMU_DEFECT_ARCH_PEBS_NO_THRESHOLD_PMI)) {
        return 0;
    }
    s->global_status |= ARCH_PEBS_STATUS_THRESH;
    return x86pmu_pmi_raised(s, 0);
}
