/* SPDX-License-Identifier: MIT */
/*
 * AMD's PMU beyond the counters: HostOnly/GuestOnly, PerfMonV2's
 * PerfCntrGlobalStatusSet, and LbrAndPmcFreeze (CPUID Fn8000_0022_EAX[2]).
 *
 * Copyright (c) 2025 The pmutest authors
 */

#include "x86-pmu-int.h"

void x86pmu_set_svm(X86PMUState *s, bool svme, bool guest)
{
    s->svme = svme;
    s->guest = guest;
}

/*
 * PerfEvtSel HostOnly (41) and GuestOnly (40), APM vol. 2, 13.2: with
 * EFER.SVME clear a counter with either bit counts nothing (Linux
 * arch/x86/events/amd/core.c amd_pmu_disable_virt: "a guest-only counter
 * when SVM is disabled ... will not count anything"; the KVM selftest
 * svm_pmu_host_guest_test in Linux's tree at 7bb6284aa7b3 asserts that only
 * the counter with neither bit counts, while a version posted before it
 * asserted that all four count).  Both bits with SVME clear is open: Linux
 * amd_core_hw_config says the hardware counts HO == GO == 1 as neither.
 * With SVME set, HostOnly counts outside a guest, GuestOnly inside one,
 * both or neither everywhere.
 */
bool x86pmu_amd_host_guest_counts(const X86PMUState *s, uint64_t sel)
{
    bool ho = sel & SEL_AMD_HOST_ONLY, go = sel & SEL_AMD_GUEST_ONLY;

    if (!ho && !go) {
        return true;
    }
    if (!s->svme) {
        /* A defect: HostOnly counted as if SVM were on. */
        return x86pmu_defect(s, X86PMU_DEFECT_HOST_ONLY_COUNTS_WITHOUT_SVM) &&
               ho && !go && !s->guest;
    }
    if (ho && go) {
        return true;
    }
    return ho ? !s->guest : s->guest;
}

/*
 * LbrAndPmcFreeze: IA32_DEBUGCTL bit 11 (FLBRI, Intel's FREEZE_LBRS_ON_PMI
 * position) asks for the freeze, and PerfCntrGlobalStatus bit 58
 * (LbrFreeze) reports it until PerfCntrGlobalStatusClr clears it (Linux
 * commit 598c2fafc06f and arch/x86/events/amd/core.c amd_pmu_cpu_reset).
 * That the core counters stop too comes only from the feature's name
 * ("LBR and PMC freeze"); the model stops them (x86pmu_frozen).
 */
uint64_t x86pmu_amd_status_bits(const X86PMUState *s)
{
    return x86pmu_counter_bits(s) |
           (s->cfg.lbr_pmc_freeze ? X86PMU_STATUS_LBR_FRZ : 0);
}

/*
 * DebugCtl's LBR, BTF and PB0-3 (bits 5:0, stored without effect) and
 * FLBRI; without LbrAndPmcFreeze the register is left to the caller.
 */
uint64_t x86pmu_amd_debugctl_valid(const X86PMUState *s)
{
    return s->cfg.lbr_pmc_freeze ?
           0x3f | X86PMU_DEBUGCTL_FREEZE_LBRS_ON_PMI : 0;
}

void x86pmu_amd_pmi_freeze(X86PMUState *s)
{
    if (s->cfg.lbr_pmc_freeze &&
        (s->debugctl & X86PMU_DEBUGCTL_FREEZE_LBRS_ON_PMI) &&
        !x86pmu_defect(s, X86PMU_DEFECT_AMD_FREEZE_STATUS_NOT_SET)) {
        s->global_status |= X86PMU_STATUS_LBR_FRZ;
    }
}
