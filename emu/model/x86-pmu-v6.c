/* SPDX-License-Identifier: MIT */
/*
 * Architectural performance monitoring version 6 and CPUID leaf 23H: the
 * per-counter MSR layout (GP n at 0x1900 + 4n, fixed m at 0x1980 + 4m),
 * the event-select extensions (UMASK2, EQ, RDPMC user disable), auto
 * counter reload, the top-down events and PERF_METRICS.
 *
 * The SDM's own text for these is not quoted here: the layout and the
 * bits come from Linux (arch/x86/include/asm/perf_event.h, msr-index.h,
 * the commits named at each rule), x86-cpuid-db and CPUID dumps of real
 * parts.  Where those sources leave a behaviour open, the model picks one
 * and says so with "model's choice"; pmutest's checks assert only what
 * the sources pin down.
 *
 * Copyright (c) 2025 The pmutest authors
 */

#include <string.h>

#include "x86-pmu-int.h"
#include "x86-pmu-arch-pebs.h"

/* --- Shapes no QEMU CPU model has --- */

/*
 * Lunar Lake's two core types as their CPUID reads (InstLatx64 AIDA64 dump
 * of a Core Ultra 7 288V, CPUID B06D1): leaf 0AH is the same on both, the
 * common subset (version 6, 8 GP x 48 bits, fixed 0-2 x 48, events 7 and 9
 * marked absent); CPUID.23H tells each core type's own counters.  Lion
 * Cove (P-core): 23.0 EAX 0xB, EBX 3 (UMASK2, EQ), GP 0-9, fixed 0-3,
 * events 0x1DFF, perf metrics.  Skymont (E-core): 23.0 EAX 0xF, EBX 3, GP
 * 0-7, fixed 0-2 and 4-6, auto counter reload on GP 2-7 and fixed 0-1,
 * events 0x1F7F, no fixed counter 3 and so no perf metrics.  Native model
 * IDs (CPUID.1AH:EAX[23:0]) are not in the dump: 0.
 */
typedef struct V6Shape {
    const char *name, *what;
    uint8_t core_type;
    uint32_t gp, fixed, v6_features, events23;
    uint64_t acr, perf_caps;
} V6Shape;

static const V6Shape v6_shapes[] = {
    { "lunarlake-p",
      "Lunar Lake P-core (Lion Cove): version 6, CPUID.23H GP 0-9, fixed "
      "0-3, UMASK2 and EQ, events 0x1DFF, perf metrics with level 2 "
      "(InstLatx64 CPUID dump B06D1; Linux intel_pmu_init_glc)",
      0x40, 0x3ff, 0xf, X86PMU_V6_UMASK2 | X86PMU_V6_EQ, 0x1dff, 0,
      X86PMU_CAP_FREEZE_WHILE_SMM | X86PMU_CAP_FW_WRITE |
      X86PMU_CAP_PERF_METRICS },
    { "lunarlake-e",
      "Lunar Lake E-core (Skymont): version 6, CPUID.23H GP 0-7, fixed "
      "0-2 and 4-6, UMASK2 and EQ, auto counter reload on GP 2-7 and "
      "fixed 0-1, events 0x1F7F (InstLatx64 CPUID dump B06D1)",
      0x20, 0xff, 0x77, X86PMU_V6_UMASK2 | X86PMU_V6_EQ, 0x1f7f,
      0x3000000fcull,
      X86PMU_CAP_FREEZE_WHILE_SMM | X86PMU_CAP_FW_WRITE },
};

/*
 * The named shapes: the version 6 core types, Diamond Rapids, then the
 * architectural-PEBS shapes (x86-pmu-arch-pebs.c).
 */
#define DMR_SHAPE "diamondrapids"

const char *x86pmu_shape_name(unsigned i)
{
    unsigned n = sizeof(v6_shapes) / sizeof(v6_shapes[0]);

    /* Then Diamond Rapids, then the architectural-PEBS shapes. */
    if (i < n) {
        return v6_shapes[i].name;
    }
    return i == n ? DMR_SHAPE : x86pmu_arch_pebs_shape_name(i - n - 1);
}

const char *x86pmu_shape_named(const char *name, X86PMUConfig *c)
{
    unsigned i;

    if (name && strcmp(name, DMR_SHAPE) == 0) {
        /* Lion Cove's counters, changed to Diamond Rapids' (x86-pmu-omr.c). */
        return x86pmu_shape_named("lunarlake-p", c) ? x86pmu_dmr_shape(c) :
               NULL;
    }
    for (i = 0; name && i < sizeof(v6_shapes) / sizeof(v6_shapes[0]); i++) {
        const V6Shape *v = &v6_shapes[i];

        if (strcmp(v->name, name) != 0) {
            continue;
        }
        x86pmu_config_defaults(c, X86PMU_VENDOR_INTEL);
        c->family = 6;
        /*
         * The reference clock: CPUID.15H as from Skylake on.  The dump's
         * leaf 15H is not in this repository, so the ratio is Ice Lake's
         * and Sapphire Rapids' (emu/qemu/README.md, "Shapes"), a choice.
         */
        c->ref_ratio = 80;
        c->ref_report = X86PMU_REF_REPORT_CPUID15;
        /*
         * ... but 3CH/01H counts at the TSC's rate on Lion Cove and
         * Skymont (CPU_CLK_UNHALTED.REF_TSC_P, Intel perfmon
         * LNL/events/lunarlake_lioncove_core.json, _skymont_core.json).
         */
        c->ref_at_tsc = true;
        x86pmu_config_lunarlake_0a(c);
        c->perf_caps = v->perf_caps;
        c->hybrid = true;
        c->core_type = v->core_type;
        c->leaf23 = true;
        c->leaf23_gp = v->gp;
        c->leaf23_fixed = v->fixed;
        c->v6_features = v->v6_features;
        c->acr = v->acr != 0;
        c->acr_reload = c->acr_cause = v->acr;
        c->leaf23_events = true;
        c->events_avail23 = v->events23;
        /*
         * The core with PERF_METRICS, Lion Cove, fills its level-2 bytes
         * too: Linux intel_pmu_init_lnc() starts from intel_pmu_init_glc(),
         * which sets num_topdown_events = 8, and Intel's
         * TMA_Metrics-full.csv reads PERF_METRICS.HEAVY_OPERATIONS and the
         * other three in its LNL/ARL column.  Skymont has no PERF_METRICS.
         */
        c->td_level2 = (v->perf_caps & X86PMU_CAP_PERF_METRICS) != 0;
        /*
         * Architectural LBRs (CPUID.07H:EDX[19] set in the dump; leaf 1CH
         * on both core types 4000000B-00000007-000F0007, the E-core's EAX
         * with bit 31 too): depths 8, 16 and 32 (EAX[7:0] 0BH), LBRs
         * that deep C-states may clear (EAX[30]), CPL and branch-type
         * filters and call-stack mode (EBX 7); PERF_CAPABILITIES[5:0] is
         * 3FH with architectural LBRs (SDM vol. 3B, "Architectural Last
         * Branch Records").  Not emulated, so not enumerated: ECX (the
         * mispredict bit, timed LBRs, branch types and event logging of GP
         * 0-3 in LBR_INFO, which reads 0 here) and the E-core's EAX[31]
         * (records of linear addresses; the model records EIPs).
         */
        c->lbr = X86PMU_LBR_ARCH;
        c->lbr_depth = 32;
        c->arch_lbr_eax = 0x4000000b;
        c->arch_lbr_ebx = 0x7;
        c->arch_lbr_ecx = 0;
        c->perf_caps |= 0x3f;
        return v->what;
    }
    return x86pmu_arch_pebs_shape(name, c);
}

/* --- CPUID --- */

void x86pmu_v6_cpuid(const X86PMUState *s, uint32_t leaf, uint32_t subleaf,
                     uint32_t *eax, uint32_t *ebx, uint32_t *ecx,
                     uint32_t *edx)
{
    const X86PMUConfig *c = &s->cfg;

    /* CPUID.(07H,1):EAX[8] ArchPerfmonExt: leaf 23H exists. */
    if (leaf == 0x07 && subleaf == 1) {
        *eax = (*eax & ~(1u << 8)) | (c->leaf23 ? 1u << 8 : 0);
        return;
    }
    if (leaf != 0x23 || !c->leaf23) {
        return;
    }
    /*
     * Architectural Performance Monitoring Extended Leaf (Linux
     * perf_event.h cpuid35_eax/ebx; x86-cpuid-db leaf_0x23): sub-leaf 0
     * EAX bit n says sub-leaf n is valid (0 itself, 1 counters, 2 auto
     * counter reload, 3 events; 4 and 5 arch-PEBS, not emulated), EBX the
     * event-select extensions.
     */
    *eax = *ebx = *ecx = *edx = 0;
    switch (subleaf) {
    case 0:
        *eax = 1u << 0 | 1u << 1 | (c->acr ? 1u << 2 : 0) |
               (c->leaf23_events ? 1u << 3 : 0);
        *ebx = c->v6_features;
        break;
    case 1:
        *eax = c->leaf23_gp;
        *ebx = c->leaf23_fixed;
        break;
    case 2:
        /*
         * EAX/EBX: GP/fixed counters that can be reloaded; ECX/EDX: that
         * can cause a reload (Linux commit 1856c6c2f841).
         */
        if (c->acr) {
            *eax = (uint32_t)c->acr_reload;
            *ebx = (uint32_t)(c->acr_reload >> 32);
            *ecx = (uint32_t)c->acr_cause;
            *edx = (uint32_t)(c->acr_cause >> 32);
        }
        break;
    case 3:
        /*
         * Bit e: architectural event e is supported (the opposite sense
         * of CPUID.0AH:EBX).
         */
        if (c->leaf23_events) {
            *eax = c->events_avail23;
        }
        break;
    default:
        break;
    }
    /* Sub-leaves 4 and 5: architectural PEBS (x86-pmu-arch-pebs.c). */
    x86pmu_arch_pebs_cpuid(s, leaf, subleaf, eax, ebx, ecx, edx);
}

/* --- Event-select extensions (the bits they open: x86-pmu-shape.c) --- */

/*
 * "If the counter's RDPMC_USER_DISABLE bit is set and CPL > 0, RDPMC
 * returns 0" (Linux commit 59af95e028d4, quoting the ISE's pseudo-code);
 * at CPL 0 the value is unaffected.
 */
bool x86pmu_v6_user_disabled(const X86PMUState *s, bool fixed, unsigned i)
{
    if (x86pmu_defect(s, X86PMU_DEFECT_RDPMC_USER_DISABLE_IGNORED)) {
        return false;
    }
    if (fixed) {
        return (s->fixed_ctrl & FIXED_UD_BIT(i)) != 0;
    }
    return (s->gp_sel[i] & SEL_RDPMC_UD) != 0;
}

/* --- PERF_METRICS --- */

/*
 * IA32_PERF_CAPABILITIES[15] (Linux commit 59a854e2f3b9): MSR 0x329 holds
 * eight byte fractions of the slots FIXED_CTR3 counted; RDPMC with ECX
 * bit 29 reads it; IA32_PERF_GLOBAL_CTRL bit 48 lets it count.  The
 * model fills the four level-1 bytes (retiring, bad speculation,
 * frontend bound, backend bound) and, on a shape with them, the level-2
 * bytes (x86-pmu-td2.c); elsewhere those stay 0.
 */
bool x86pmu_perf_metrics_exist(const X86PMUState *s)
{
    return !x86pmu_is_amd(s) && s->cfg.pdcm &&
           (s->cfg.perf_caps & X86PMU_CAP_PERF_METRICS) &&
           x86pmu_fixed_exists(s, 3);
}

bool x86pmu_metrics_counting(const X86PMUState *s, X86PMURing ring)
{
    unsigned f = FIXED_FIELD(s->fixed_ctrl, 3);

    return x86pmu_perf_metrics_exist(s) && !x86pmu_frozen(s) &&
           (s->global_ctrl & X86PMU_GLOBAL_PERF_METRICS) &&
           (s->global_ctrl & BIT64(X86PMU_FIXED_IDX(3))) &&
           (ring == X86PMU_RING_OS ? f & FIXED_OS : f & FIXED_USR);
}

/*
 * Each level-1 byte is its share of the slots scaled to 0xFF; the four
 * add up to 0xFF (the model rounds the first three and gives the last
 * the rest: model's choice).
 */
static uint64_t metrics_value(const X86PMUState *s)
{
    uint64_t sum = s->metrics[0] + s->metrics[1] + s->metrics[2] +
                   s->metrics[3], v = 0, used = 0;
    unsigned i;

    if (s->metrics_written && sum == s->metrics_held) {
        return s->metrics_written;      /* nothing counted since the write */
    }
    if (!sum) {
        return 0;
    }
    for (i = 0; i < 3; i++) {
        uint64_t b = (s->metrics[i] * 0xff + sum / 2) / sum;

        b = b > 0xff - used ? 0xff - used : b;
        used += b;
        v |= b << (8 * i);
    }
    v |= (0xff - used) << 24;
    return v | x86pmu_td_level2(s, v);  /* bytes 4-7: x86-pmu-td2.c */
}

/*
 * A write sets what the register reads.  Linux clears it with
 * IA32_FIXED_CTR3 before a measurement (59a854e2f3b9) and, when a task
 * with top-down events is switched back in, writes back the slots and the
 * metrics it read at the switch-out, fixed counter 3 first (2cb5383b30d4
 * "perf/x86/intel: Support per-thread RDPMC TopDown metrics",
 * icl_set_topdown_event_period: "The fixed counter 3 has to be written
 * before the PERF_METRICS"; Intel's mediated-vPMU patches restore the
 * guest's value the same way, after fixed counter 3).  The written value
 * reads back as written until the metrics count again; from then on each
 * level-1 byte weighs as its fraction (SDM vol. 3B, "Performance
 * Metrics": byte / 0xFF of the slots) of the slots IA32_FIXED_CTR3 held
 * at the write, and what counts after adds to it (model's choice: how
 * silicon folds a written value into its counting is not documented;
 * this continues a restored measurement where it was saved).  Bits 63:32
 * are reserved on a shape that fills level 1 only (#GP, model's choice,
 * as for reserved bits elsewhere).
 */
static X86PMUAccess metrics_write(X86PMUState *s, uint64_t val)
{
    uint64_t slots = s->fixed_ctr[3];
    unsigned i;

    if (!s->cfg.td_level2 && (val >> 32)) {
        return X86PMU_GP;
    }
    for (i = 0; i < 4; i++) {
        uint64_t b = (val >> (8 * i)) & 0xff;

        /* slots * b / 0xFF, rounded, without overflowing 64 bits */
        s->metrics[i] = slots / 0xff * b + (slots % 0xff * b + 0x7f) / 0xff;
    }
    s->metrics_written = val;
    s->metrics_held = s->metrics[0] + s->metrics[1] + s->metrics[2] +
                      s->metrics[3];
    return X86PMU_OK;
}

bool x86pmu_v6_rdpmc_metrics(X86PMUState *s, uint32_t ecx, uint64_t *val,
                             X86PMUAccess *r)
{
    /* INTEL_PMC_FIXED_RDPMC_METRICS (Linux perf_event.h): ECX = 1 << 29. */
    if (ecx != 1u << 29) {
        return false;
    }
    if (!x86pmu_perf_metrics_exist(s)) {
        *r = X86PMU_GP;
        return true;
    }
    *val = x86pmu_defect(s, X86PMU_DEFECT_PERF_METRICS_RDPMC_READS_SLOTS) ?
           s->fixed_ctr[3] : metrics_value(s);
    *r = X86PMU_OK;
    return true;
}

/*
 * The model's top-down split of a cycle of slots_per_cycle slots (its
 * choice; no TCG instruction has a wrong path or a real pipeline): one
 * slot per retired instruction, one per mispredicted branch, one
 * frontend-bound slot, the rest backend bound.  So retiring = the
 * instructions and the four add up to the slots, as in the top-down
 * method; x86pmu_config_check wants at least 3 slots a cycle.
 */
void x86pmu_td_split(const X86PMUState *s, uint64_t cycles, uint64_t insns,
                     uint64_t bmiss, uint64_t td[4])
{
    uint64_t slots = (uint64_t)s->cfg.slots_per_cycle * cycles;
    uint64_t used = insns + bmiss + cycles;

    td[0] = insns;
    td[1] = bmiss;
    td[2] = cycles;
    td[3] = slots > used ? slots - used : 0;
}

/* --- Auto counter reload --- */

static uint64_t *cfg_b(X86PMUState *s, unsigned idx)
{
    return idx < 32 ? &s->gp_cfg_b[idx] : &s->fixed_cfg_b[idx - 32];
}

static uint64_t *cfg_c(X86PMUState *s, unsigned idx)
{
    return idx < 32 ? &s->gp_cfg_c[idx] : &s->fixed_cfg_c[idx - 32];
}

/* Counter idx has CFG_B/CFG_C: it can be reloaded (CPUID.23H.2 EAX/EBX). */
static bool acr_capable(const X86PMUState *s, unsigned idx)
{
    bool exists = idx < 32 ? x86pmu_gp_exists(s, idx) :
                  x86pmu_fixed_exists(s, idx - 32);

    return s->cfg.acr && s->cfg.version >= 6 && exists &&
           ((s->cfg.acr_reload >> idx) & 1);
}

/*
 * A counter that reloads on its own overflow sets no IA32_PERF_GLOBAL_STATUS
 * bit (Linux commit 1271aeccc307: "according to the Intel SDM"; its PMI,
 * if INT is set, arrives with no status bit).
 */
bool x86pmu_acr_self(const X86PMUState *s, unsigned idx)
{
    X86PMUState *w = (X86PMUState *)s;

    return acr_capable(s, idx) && ((*cfg_b(w, idx) >> idx) & 1);
}

/*
 * CFG_B of counter j is the set of counters whose overflow reloads j with
 * CFG_C[31:0] (Linux commit ec980e4facef, citing SDM vol. 3 "Auto Counter
 * Reload").  The reload takes the place of what j counted in the cycle of
 * the overflow (model's choice: silicon's timing is not documented).
 */
void x86pmu_acr_overflowed(X86PMUState *s, unsigned idx)
{
    unsigned j;

    if (!s->cfg.acr || x86pmu_defect(s, X86PMU_DEFECT_ACR_RELOAD_IGNORED)) {
        return;
    }
    for (j = 0; j < 64; j++) {
        if (acr_capable(s, j) && ((*cfg_b(s, j) >> idx) & 1)) {
            s->acr_pending |= BIT64(j);
        }
    }
}

void x86pmu_acr_apply(X86PMUState *s)
{
    uint64_t bits = s->acr_pending;

    s->acr_pending = 0;
    while (bits) {
        unsigned j = __builtin_ctzll(bits);
        unsigned w = j < 32 ? x86pmu_gp_width(s) : x86pmu_fixed_width(s);
        /*
         * CFG_C[31:0] sign-extended to the width (model's choice: Linux
         * writes the 32-bit -period there, which only counts down to an
         * overflow if extended so; the ISE text is not quoted anywhere
         * public).
         */
        uint64_t v = (uint64_t)(int64_t)(int32_t)(uint32_t)*cfg_c(s, j) &
                     x86pmu_mask(w);

        bits &= bits - 1;
        if (j < 32) {
            s->gp_ctr[j] = v;
        } else {
            s->fixed_ctr[j - 32] = v;
        }
    }
}

/* --- The version 6 MSRs --- */

bool x86pmu_v6_owns(uint32_t msr)
{
    return msr == X86PMU_MSR_PERF_METRICS ||
           (msr >= X86PMU_MSR_V6_GP0_CTR && msr < X86PMU_MSR_V6_END);
}

typedef enum V6Reg { V6_CTR, V6_CFG_A, V6_CFG_B, V6_CFG_C } V6Reg;

/*
 * The counter index (GLOBAL_CTRL's bit) and register of a 0x19xx MSR, or
 * false when it has none: Linux defines no IA32_PMC_FXm_CFG_A (fixed
 * counters keep IA32_FIXED_CTR_CTRL; commit 149fd4712bcd), so 0x1981 + 4m
 * raises #GP (model's choice, as for any address without a register).
 */
static bool v6_decode(const X86PMUState *s, uint32_t msr, unsigned *idx,
                      V6Reg *reg)
{
    unsigned off;

    if (s->cfg.version < 6 || x86pmu_is_amd(s)) {
        return false;
    }
    if (msr < X86PMU_MSR_V6_FX0_CTR) {
        off = msr - X86PMU_MSR_V6_GP0_CTR;
        *idx = off / X86PMU_MSR_V6_STEP;
        *reg = (V6Reg)(off % X86PMU_MSR_V6_STEP);
        return x86pmu_gp_exists(s, *idx);
    }
    off = msr - X86PMU_MSR_V6_FX0_CTR;
    *idx = X86PMU_FIXED_IDX(off / X86PMU_MSR_V6_STEP);
    *reg = (V6Reg)(off % X86PMU_MSR_V6_STEP);
    return *reg != V6_CFG_A && x86pmu_fixed_exists(s, *idx - 32);
}

/*
 * A defect: an emulation that keeps 8 counters' registers, so the aliases
 * of GP 8 and up lead to GP 0 and up.
 */
static unsigned alias_target(const X86PMUState *s, unsigned idx)
{
    if (idx >= 32 || !x86pmu_defect(s, X86PMU_DEFECT_V6_ALIAS_WRAPS_PAST_7)) {
        return idx;
    }
    return idx % X86PMU_LEGACY_GP;
}

X86PMUAccess x86pmu_v6_rdmsr(X86PMUState *s, uint32_t msr, uint64_t *val)
{
    unsigned idx, t;
    V6Reg reg;

    *val = 0;
    if (msr == X86PMU_MSR_PERF_METRICS) {
        if (!x86pmu_perf_metrics_exist(s)) {
            return X86PMU_GP;
        }
        *val = metrics_value(s);
        return X86PMU_OK;
    }
    if (!v6_decode(s, msr, &idx, &reg)) {
        return X86PMU_GP;
    }
    t = alias_target(s, idx);
    switch (reg) {
    case V6_CTR:
        *val = t < 32 ? s->gp_ctr[t] : s->fixed_ctr[t - 32];
        break;
    case V6_CFG_A:
        *val = s->gp_sel[t];
        break;
    case V6_CFG_B:
    case V6_CFG_C:
        /*
         * Only counters that can be reloaded have them (model's choice),
         * and CFG_C those that can use architectural PEBS.
         */
        if (!acr_capable(s, idx) &&
            !(reg == V6_CFG_C && x86pmu_arch_pebs_cfg_c_exists(s, idx))) {
            return X86PMU_GP;
        }
        *val = reg == V6_CFG_B ? *cfg_b(s, idx) : *cfg_c(s, idx);
        break;
    }
    return X86PMU_OK;
}

X86PMUAccess x86pmu_v6_wrmsr(X86PMUState *s, uint32_t msr, uint64_t val)
{
    unsigned idx, t;
    V6Reg reg;

    if (msr == X86PMU_MSR_PERF_METRICS) {
        if (!x86pmu_perf_metrics_exist(s)) {
            return X86PMU_GP;
        }
        return metrics_write(s, val);
    }
    if (!v6_decode(s, msr, &idx, &reg)) {
        return X86PMU_GP;
    }
    t = alias_target(s, idx);
    switch (reg) {
    case V6_CTR:
        /*
         * Linux writes the full width here (commit 149fd4712bcd switches
         * every counter access to these MSRs from version 6 on), as
         * through IA32_A_PMCx.
         */
        return t < 32 ? x86pmu_write_gp_full(s, t, val) :
                        x86pmu_write_fixed(s, t - 32, val);
    case V6_CFG_A:
        return x86pmu_write_evtsel(s, t, val);
    case V6_CFG_B:
        /*
         * A cause bit of a counter that cannot cause a reload raises #GP:
         * on Panther Lake, whose GP 0-1 have none, "WRMSR to 0x1986
         * (tried to write 0x0000000200000001)" faulted (Linux commit
         * 43796f305078).
         */
        if (!acr_capable(s, idx)) {
            return X86PMU_GP;
        }
        if ((val & ~s->cfg.acr_cause) &&
            !x86pmu_defect(s, X86PMU_DEFECT_ACR_CAUSE_UNCHECKED)) {
            return X86PMU_GP;
        }
        *cfg_b(s, idx) = val;
        return X86PMU_OK;
    case V6_CFG_C:
        /* With architectural PEBS: its bits (x86-pmu-arch-pebs.c). */
        if (x86pmu_arch_pebs_cfg_c_exists(s, idx)) {
            if (val & ~x86pmu_arch_pebs_cfg_c_valid(s, idx)) {
                return X86PMU_GP;
            }
            *cfg_c(s, idx) = val;
            return X86PMU_OK;
        }
        /*
         * [31:0] is the reload value; the bits above configure arch-PEBS,
         * which this shape lacks (model's choice: #GP).
         */
        if (!acr_capable(s, idx) || (val >> 32)) {
            return X86PMU_GP;
        }
        *cfg_c(s, idx) = val;
        return X86PMU_OK;
    }
    return X86PMU_GP;
}
