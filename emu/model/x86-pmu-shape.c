/* SPDX-License-Identifier: MIT */
/*
 * The x86 PMU model's shape predicates: which counters a configuration
 * has and how wide they are, the event-select bits its version 6
 * features open, the offcore-response MSR an event select names, and
 * whether the counters are frozen.  Every other part of the model asks
 * these and they ask nothing of the other parts: they are the bottom of
 * the model's layers (docs/HACKING.md).
 *
 * Copyright (c) 2025 The pmutest authors
 */

#include "x86-pmu-int.h"

/* --- Counters --- */

unsigned x86pmu_amd_counters(const X86PMUConfig *cfg)
{
    /*
     * Four legacy counters on every AMD64 part; six with PerfCtrExtCore;
     * with PerfMonV2, CPUID Fn8000_0022_EBX[3:0] says (APM vol. 2, 13.2).
     */
    if (cfg->perfmon_v2) {
        return cfg->num_gp;
    }
    return cfg->perfctr_core ? 6 : 4;
}

bool x86pmu_gp_exists(const X86PMUState *s, unsigned x)
{
    if (x86pmu_is_amd(s)) {
        return x < x86pmu_amd_counters(&s->cfg);
    }
    if (s->cfg.version == 0 || x >= X86PMU_MAX_GP) {
        return false;
    }
    if (s->cfg.leaf23) {
        return (s->cfg.leaf23_gp >> x) & 1;
    }
    return x < s->cfg.num_gp;
}

bool x86pmu_fixed_exists(const X86PMUState *s, unsigned i)
{
    const X86PMUConfig *c = &s->cfg;

    /*
     * Fixed counters come with version 2; from version 5 CPUID.0AH:ECX adds
     * counters past EDX[4:0]: "fixed counter i is supported if ECX[i] ||
     * (EDX[4:0] > i)" (SDM vol. 2A, CPUID leaf 0AH).
     */
    if (x86pmu_is_amd(s) || c->version < 2 || i >= X86PMU_MAX_FIXED) {
        return false;
    }
    if (c->leaf23) {
        return (c->leaf23_fixed >> i) & 1;
    }
    return i < c->num_fixed ||
           (c->version >= 5 && ((c->fixed_bitmap >> i) & 1));
}

uint64_t x86pmu_counter_bits(const X86PMUState *s)
{
    uint64_t b = 0;
    unsigned i;

    for (i = 0; i < X86PMU_MAX_GP; i++) {
        if (x86pmu_gp_exists(s, i)) {
            b |= BIT64(i);
        }
    }
    for (i = 0; i < X86PMU_MAX_FIXED; i++) {
        if (x86pmu_fixed_exists(s, i)) {
            b |= BIT64(X86PMU_FIXED_IDX(i));
        }
    }
    return b;
}

unsigned x86pmu_gp_width(const X86PMUState *s)
{
    unsigned w = x86pmu_is_amd(s) ? X86PMU_AMD_WIDTH : s->cfg.gp_width;

    return x86pmu_defect(s, X86PMU_DEFECT_WIDTH_OFF_BY_ONE) ? w - 1 : w;
}

unsigned x86pmu_fixed_width(const X86PMUState *s)
{
    unsigned w = s->cfg.fixed_width;

    return x86pmu_defect(s, X86PMU_DEFECT_WIDTH_OFF_BY_ONE) ? w - 1 : w;
}

/* --- Version 6 event-select extensions --- */

uint64_t x86pmu_v6_evtsel_bits(const X86PMUState *s)
{
    uint32_t f = s->cfg.v6_features;
    uint64_t b = 0;

    if (x86pmu_defect(s, X86PMU_DEFECT_EVTSEL_EXTENSIONS_REFUSED)) {
        return 0;
    }
    /* Linux commit dce0c74d2d18 (UMASK2, EQ), 59af95e028d4 (bit 37). */
    if (f & X86PMU_V6_UMASK2) {
        b |= SEL_UMASK2_MASK;
    }
    if (f & X86PMU_V6_EQ) {
        b |= SEL_EQ;
    }
    if (f & X86PMU_V6_RDPMC_USER_DISABLE) {
        b |= SEL_RDPMC_UD;
    }
    return b;
}

uint64_t x86pmu_v6_fixed_ctrl_bits(const X86PMUState *s)
{
    uint64_t b = 0;
    unsigned i;

    if (!(s->cfg.v6_features & X86PMU_V6_RDPMC_USER_DISABLE) ||
        x86pmu_defect(s, X86PMU_DEFECT_EVTSEL_EXTENSIONS_REFUSED)) {
        return 0;
    }
    for (i = 0; i < X86PMU_MAX_FIXED; i++) {
        if (x86pmu_fixed_exists(s, i)) {
            b |= FIXED_UD_BIT(i);
        }
    }
    return b;
}

/* --- Offcore response --- */

int x86pmu_offcore_slot(const X86PMUState *s, uint64_t sel)
{
    const X86PMUOffcoreConfig *oc = &s->cfg.offcore;
    unsigned i;

    for (i = 0; i < oc->nmsrs; i++) {
        if (SEL_EVENT(sel) == oc->event[i] && SEL_UMASK(sel) == oc->umask[i]) {
            return i;
        }
    }
    return -1;
}

/* --- State --- */

bool x86pmu_frozen(const X86PMUState *s)
{
    /*
     * Version 4: CTR_Frz stops every counter until software clears it.
     * AMD LbrAndPmcFreeze: LbrFreeze does (x86-pmu-amd.c).
     */
    if (x86pmu_is_amd(s)) {
        return s->cfg.lbr_pmc_freeze &&
               (s->global_status & X86PMU_STATUS_LBR_FRZ);
    }
    return s->cfg.version >= 4 && (s->global_status & X86PMU_STATUS_CTR_FRZ);
}
