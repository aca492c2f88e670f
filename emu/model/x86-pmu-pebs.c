/* SPDX-License-Identifier: MIT */
/*
 * The x86 PMU model's processor event based sampling (PEBS): the DS save
 * area, IA32_PEBS_ENABLE and MSR_PEBS_DATA_CFG, and the record a PEBS
 * counter's overflow writes into the guest's PEBS buffer, in the fixed
 * formats 0-3 and the adaptive formats 4 and 5.
 *
 * Sources: Intel SDM vol. 3B, chapter "Performance Monitoring" ("Debug
 * Store (DS) Mechanism", "Processor Event Based Sampling (PEBS)" of each
 * microarchitecture, "Adaptive PEBS"), chapter "Debug, Branch Profile,
 * TSC, ..." ("DS Save Area"); Linux arch/x86/events/intel/ds.c and
 * arch/x86/include/asm/perf_event.h for the adaptive groups' layout and
 * format 5's counter-reset area (commit 2145e77fecfb); kvm-unit-tests
 * x86/pmu_pebs.c for the record size and format field it checks.
 *
 * Copyright (c) 2025 The pmutest authors
 */

#include <string.h>

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

static unsigned pebs_format(const X86PMUState *s)
{
    return (s->cfg.perf_caps >> 8) & 0xf;
}

static bool baseline(const X86PMUState *s)
{
    return (s->cfg.perf_caps & BIT64(14)) && pebs_format(s) >= 4;
}

bool x86pmu_pebs_present(const X86PMUState *s)
{
    return !x86pmu_is_amd(s) && s->cfg.ds && s->cfg.pdcm &&
           pebs_format(s) <= 5;
}

/*
 * IA32_PEBS_ENABLE bits that take writes: with adaptive PEBS every
 * counter, fixed ones at 32 + i (Linux ds.c; KVM allows GLOBAL_CTRL's
 * valid bits); before it PMC0-3 (format 0: PMC0 only, "PEBS ... only
 * supported by IA32_PMC0" on Core 2 and Atom) and Nehalem's load-latency
 * enables 32-35, stored without effect.
 */
static uint64_t enable_valid(const X86PMUState *s)
{
    uint64_t v = 0;
    unsigned x, n;

    if (baseline(s)) {
        return x86pmu_counter_bits(s);
    }
    n = pebs_format(s) == 0 ? 1 : 4;
    for (x = 0; x < n; x++) {
        if (x86pmu_gp_exists(s, x)) {
            v |= BIT64(x);
            if (pebs_format(s) >= 1 && s->cfg.version < 5) {
                v |= BIT64(32 + x);
            }
        }
    }
    return v;
}

/*
 * Adaptive PEBS's per-counter opt-in (Linux perf_event.h
 * ICL_EVENTSEL_ADAPTIVE, ICL_FIXED_0_ADAPTIVE): PERFEVTSELx bit 34,
 * IA32_FIXED_CTR_CTRL bit 32 + 4i.
 */
uint64_t x86pmu_pebs_ctrl_bits(const X86PMUState *s, bool fixed)
{
    uint64_t v = 0;
    unsigned i;

    if (!x86pmu_pebs_present(s) || !baseline(s)) {
        return 0;
    }
    if (!fixed) {
        return SEL_ADAPTIVE;
    }
    for (i = 0; i < X86PMU_MAX_FIXED; i++) {
        if (x86pmu_fixed_exists(s, i)) {
            v |= FIXED_ADAPTIVE(i);
        }
    }
    return v;
}

void x86pmu_pebs_cpuid(const X86PMUState *s, uint32_t leaf,
                       uint32_t *ecx, uint32_t *edx)
{
    /* CPUID.01H: EDX[21] DS, ECX[2] DTES64 (the 64-bit DS layout). */
    if (leaf == 0x01 && !x86pmu_is_amd(s)) {
        *edx = (*edx & ~(1u << 21)) | (s->cfg.ds ? 1u << 21 : 0);
        *ecx = (*ecx & ~(1u << 2)) | (s->cfg.ds ? 1u << 2 : 0);
    }
}

X86PMUAccess x86pmu_pebs_rdmsr(X86PMUState *s, uint32_t msr, uint64_t *val)
{
    if (x86pmu_is_amd(s)) {
        return X86PMU_NOT_MINE;
    }
    switch (msr) {
    case MSR_DS_AREA:
        if (!s->cfg.ds) {
            return X86PMU_GP;
        }
        *val = s->ds_area;
        return X86PMU_OK;
    case MSR_PEBS_ENABLE:
        if (!x86pmu_pebs_present(s)) {
            return X86PMU_GP;
        }
        *val = s->pebs_enable;
        return X86PMU_OK;
    case MSR_PEBS_DATA_CFG:
        if (!x86pmu_pebs_present(s) || !baseline(s)) {
            return X86PMU_GP;
        }
        *val = s->pebs_data_cfg;
        return X86PMU_OK;
    default:
        return X86PMU_NOT_MINE;
    }
}

X86PMUAccess x86pmu_pebs_wrmsr(X86PMUState *s, uint32_t msr, uint64_t val)
{
    if (x86pmu_is_amd(s)) {
        return X86PMU_NOT_MINE;
    }
    switch (msr) {
    case MSR_DS_AREA:
        if (!s->cfg.ds) {
            return X86PMU_GP;
        }
        s->ds_area = val;
        return X86PMU_OK;
    case MSR_PEBS_ENABLE:
        if (!x86pmu_pebs_present(s) || (val & ~enable_valid(s))) {
            return X86PMU_GP;
        }
        s->pebs_enable = val;
        s->pebs_pending &= val;
        return X86PMU_OK;
    case MSR_PEBS_DATA_CFG:
        /* Groups 0-3 and the LBR count (KVM's valid mask, pre-format 6). */
        if (!x86pmu_pebs_present(s) || !baseline(s) || (val & ~CFG_VALID)) {
            return X86PMU_GP;
        }
        s->pebs_data_cfg = val;
        return X86PMU_OK;
    default:
        return X86PMU_NOT_MINE;
    }
}

/*
 * A counter overflowed: if PEBS is on for it, its record is owed at the
 * next instruction boundary and PEBS takes the overflow.  The model sets
 * neither the counter's GLOBAL_STATUS bit nor a PMI for it (as KVM's
 * emulation, Linux arch/x86/kvm/pmu.c __kvm_perf_overflow; whether
 * silicon sets the bit is not documented): the buffer's threshold PMI is
 * PEBS's signal.
 */
bool x86pmu_pebs_overflow(X86PMUState *s, unsigned idx)
{
    if (!x86pmu_pebs_present(s) || !((s->pebs_enable >> idx) & 1)) {
        return false;
    }
    /* Bits 32 and up are fixed counters only with adaptive PEBS. */
    if (idx >= 32 && !baseline(s)) {
        return false;
    }
    s->pebs_pending |= BIT64(idx);
    return true;
}

uint64_t x86pmu_pebs_pending(const X86PMUState *s)
{
    return s->pebs_pending;
}

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
