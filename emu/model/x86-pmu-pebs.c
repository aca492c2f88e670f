/* SPDX-License-Identifier: MIT */
/*
 * The x86 PMU model's processor event based sampling (PEBS): the DS save
 * area, IA32_PEBS_ENABLE and MSR_PEBS_DATA_CFG, and which counter's
 * overflow PEBS takes.  The record that overflow owes, in the fixed
 * formats 0-3 and the adaptive formats 4 and 5, is x86-pmu-pebs-record.c's.
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

#include "x86-pmu-pebs.h"

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
