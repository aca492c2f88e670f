/* SPDX-License-Identifier: MIT */
/*
 * The x86 PMU model's PEBS records: the assist that writes, at the next
 * instruction boundary after a PEBS counter's overflow, the record into
 * the guest's PEBS buffer (fixed formats 0-3, adaptive formats 4 and 5),
 * and the buffer's threshold PMI.  The DS area and the PEBS MSRs are in
 * x86-pmu-pebs.c.
 *
 * Sources: Intel SDM vol. 3B, chapter "Performance Monitoring" ("Processor
 * Event Based Sampling (PEBS)" of each microarchitecture, "Adaptive
 * PEBS"), chapter "Debug, Branch Profile, TSC, ..." ("DS Save Area");
 * Linux arch/x86/events/intel/ds.c and arch/x86/include/asm/perf_event.h
 * for the adaptive groups' layout and format 5's counter-reset area
 * (commit 2145e77fecfb); kvm-unit-tests x86/pmu_pebs.c for the record
 * size and format field it checks.
 *
 * Copyright (c) 2025 The pmutest authors
 */

#include <string.h>

#include "x86-pmu-pebs.h"


static void put64(uint8_t *p, uint64_t v)
{
    unsigned i;

    for (i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    unsigned i;

    for (i = 0; i < 8; i++) {
        v |= (uint64_t)p[i] << (8 * i);
    }
    return v;
}

/* The adaptive opt-in of the lowest pending counter. */
static bool adaptive(const X86PMUState *s, uint64_t pend)
{
    unsigned idx;

    if (!baseline(s)) {
        return false;
    }
    for (idx = 0; idx < 64; idx++) {
        if ((pend >> idx) & 1) {
            break;
        }
    }
    if (idx < X86PMU_MAX_GP) {
        return s->gp_sel[idx] & SEL_ADAPTIVE;
    }
    return idx >= 32 && (s->fixed_ctrl & FIXED_ADAPTIVE(idx - 32));
}

/*
 * Formats 0-3: RFLAGS, RIP, then RAX, RBX, RCX, RDX, RSI, RDI, RBP, RSP,
 * R8-R15 (SDM, "64-bit PEBS Record Format"); format 1 adds the global
 * status, data linear address, data source and latency at 0x90-0xA8,
 * format 2 the eventing IP and TSX tuning at 0xB0/0xB8, format 3 the TSC
 * at 0xC0.
 */
static unsigned fixed_record(const X86PMUState *s, const X86PMUMachine *m,
                             uint64_t pend, uint8_t *r)
{
    static const unsigned size[] = { 0x90, 0xb0, 0xc0, 0xc8 };
    static const uint8_t order[16] = {
        0, 3, 1, 2, 6, 7, 5, 4, 8, 9, 10, 11, 12, 13, 14, 15,
    };
    unsigned fmt = pebs_format(s), i;
    bool trap = s->cfg.perf_caps & BIT64(6);

    put64(r + 0x00, m->rflags);
    put64(r + 0x08, trap ? m->rip : m->eventing_ip);
    for (i = 0; i < 16; i++) {
        put64(r + 0x10 + 8 * i, m->gpr[order[i]]);
    }
    if (fmt >= 1) {
        /*
         * Formats 1-2: the overflow status before the assist, every
         * counter; format 3: exactly the counters of this record.
         */
        put64(r + 0x90, fmt >= 3 ? pend : s->global_status | pend);
    }
    if (fmt >= 2) {
        put64(r + 0xb0, m->eventing_ip);
    }
    if (fmt >= 3) {
        put64(r + 0xc0, m->tsc);
    }
    return size[fmt];
}

/*
 * Adaptive: the basic group (format and size, eventing IP, applicable
 * counters, TSC), then memory info, GPRs (RFLAGS, RIP, then RAX, RCX,
 * RDX, RBX, RSP, RBP, RSI, RDI, R8-R15: the encoding order), XMM0-15 and
 * the LBR entries, each as DATA_CFG asks (Linux perf_event.h struct
 * pebs_basic, pebs_meminfo, pebs_gprs, pebs_xmm, lbr_entry).  A counter
 * without its adaptive bit writes the basic group alone with a format
 * field of 0 (kvm-unit-tests x86/pmu_pebs.c, "Ignored Adaptive").
 */
static unsigned adaptive_record(const X86PMUState *s, const X86PMUMachine *m,
                                uint64_t pend, bool groups, uint8_t *r)
{
    static const uint8_t legacy_order[16] = {
        0, 3, 1, 2, 6, 7, 5, 4, 8, 9, 10, 11, 12, 13, 14, 15,
    };
    uint64_t cfg = groups ? s->pebs_data_cfg : 0;
    unsigned n = BASIC_SIZE, i;

    put64(r + 0x08, m->eventing_ip);
    put64(r + 0x10, pend);
    put64(r + 0x18, m->tsc);
    if (cfg & CFG_MEMINFO) {
        /* No memory latency or data source is emulated. */
        n += MEMINFO_SIZE;
    }
    if (cfg & CFG_GPRS) {
        bool wrong = x86pmu_defect(s, X86PMU_DEFECT_PEBS_GPRS_LEGACY_ORDER);

        put64(r + n, m->rflags);
        put64(r + n + 8, m->rip);
        for (i = 0; i < 16; i++) {
            put64(r + n + 16 + 8 * i, m->gpr[wrong ? legacy_order[i] : i]);
        }
        n += GPRS_SIZE;
    }
    if (cfg & CFG_XMMS) {
        for (i = 0; i < 16; i++) {
            put64(r + n + 16 * i, m->xmm[i][0]);
            put64(r + n + 16 * i + 8, m->xmm[i][1]);
        }
        n += XMMS_SIZE;
    }
    if (cfg & CFG_LBRS) {
        unsigned k, entries = CFG_LBR_ENTRIES(cfg);

        for (k = 0; k < entries; k++) {
            uint64_t from, to, info;

            x86pmu_lbr_entry(s, k, &from, &to, &info);
            /* The defect: a host's record leaks into the guest's. */
            if (k == 0 && x86pmu_defect(s, X86PMU_DEFECT_PEBS_FOREIGN_LBR)) {
                from = 0xffffffff81000000ull;
                to = 0xffffffff81000040ull;
            }
            put64(r + n, from);
            put64(r + n + 8, to);
            put64(r + n + 16, info);
            n += LBR_ENTRY_SIZE;
        }
    }
    /* Bits 47:0 the DATA_CFG the record follows, 63:48 its size. */
    put64(r, (cfg & 0xffffffffffffull) | (uint64_t)n << 48);
    return n;
}

unsigned x86pmu_pebs_assist(X86PMUState *s, const X86PMUMachine *m)
{
    uint8_t rec[RECORD_MAX];   /* per call: vCPU threads run this at once */
    uint64_t pend = s->pebs_pending & s->pebs_enable, index, thresh, max;
    uint8_t ds[DS_RESET_FIXED0_FMT5 + 8 * X86PMU_MAX_FIXED];
    unsigned size, idx;
    bool fmt5 = pebs_format(s) >= 5;

    s->pebs_pending = 0;
    if (!pend || !s->ds_area ||
        !m->read(m->opaque, s->ds_area, ds, fmt5 ? sizeof(ds) :
                 DS_RESET_FIXED0 + 8 * X86PMU_MAX_FIXED)) {
        return 0;
    }
    memset(rec, 0, sizeof(rec));
    if (baseline(s)) {
        size = adaptive_record(s, m, pend, adaptive(s, pend), rec);
    } else if (pebs_format(s) >= 4) {
        /*
         * Format 4 and up lay records out adaptively; without
         * PEBS_BASELINE (as KVM offers a guest) no group can be asked
         * for, so a record is the basic group alone.
         */
        size = adaptive_record(s, m, pend, false, rec);
    } else {
        size = fixed_record(s, m, pend, rec);
    }
    index = get64(ds + DS_PEBS_INDEX);
    max = get64(ds + DS_PEBS_MAX);
    thresh = get64(ds + DS_PEBS_THRESHOLD);
    /*
     * At the absolute maximum the record is dropped and nothing is
     * signalled ("DS Save Area": software resets the index).
     */
    if (index + size <= max && m->write(m->opaque, index, rec, size)) {
        index += size;
        put64(ds + DS_PEBS_INDEX, index);
        m->write(m->opaque, s->ds_area + DS_PEBS_INDEX, ds + DS_PEBS_INDEX, 8);
    } else {
        thresh = UINT64_MAX;
    }
    /* Each counter of the record restarts from its DS reset value. */
    for (idx = 0; idx < 64 && !x86pmu_defect(s, X86PMU_DEFECT_PEBS_NO_RELOAD);
         idx++) {
        if (!((pend >> idx) & 1)) {
            continue;
        }
        if (idx < X86PMU_MAX_GP) {
            s->gp_ctr[idx] = get64(ds + DS_RESET_GP0 + 8 * idx) &
                             x86pmu_mask(x86pmu_gp_width(s));
        } else if (idx >= 32 && idx - 32 < X86PMU_MAX_FIXED) {
            unsigned off = (fmt5 ? DS_RESET_FIXED0_FMT5 : DS_RESET_FIXED0) +
                           8 * (idx - 32);

            s->fixed_ctr[idx - 32] = get64(ds + off) &
                                     x86pmu_mask(x86pmu_fixed_width(s));
        }
    }
    /*
     * "Reached the interrupt threshold": the buffer PMI and OvfBuf (SDM
     * vol. 3B, "DS Save Area"; IA32_PERF_GLOBAL_STATUS bit 62).  Every
     * record at or past it raises one.
     */
    if (x86pmu_defect(s, X86PMU_DEFECT_PEBS_THRESHOLD_EARLY) &&
        thresh != UINT64_MAX) {
        thresh = thresh > size ? thresh - size : 0;
    }
    if (index >= thresh) {
        s->global_status |= X86PMU_STATUS_OVF_BUF;
        return x86pmu_pmi_raised(s, 0);
    }
    return 0;
}
