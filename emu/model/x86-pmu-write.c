/* SPDX-License-Identifier: MIT */
/*
 * The x86 PMU model's writes to a GP counter, an event select and a fixed
 * counter: the checks the legacy MSRs (x86-pmu-regs.c) and version 6's
 * aliases of them (x86-pmu-v6.c) share.
 *
 * Copyright (c) 2025 The pmutest authors
 */

#include "x86-pmu-int.h"

/*
 * PERFEVTSEL bits that raise #GP: 63:32 (the model has no TSX, whose
 * IN_TX/IN_TXCP are 32/33) but those CPUID.23H opens, and AnyThread (21)
 * before version 3.  Xen refuses AnyThread and pin control (19) at every
 * version (Xen xen/arch/x86/cpu/vpmu_intel.c, ARCH_CTRL_MASK).
 */
static uint64_t evtsel_reserved(const X86PMUState *s)
{
    uint64_t r = ~0xffffffffull & ~x86pmu_v6_evtsel_bits(s);

    if (s->cfg.version < 3) {
        r |= SEL_ANY;
    }
    if (x86pmu_quirk(s, X86PMU_QUIRK_XEN_ANYTHREAD_PC_REJECTED)) {
        r |= SEL_ANY | SEL_PC;
    }
    /* Adaptive PEBS's opt-in (x86-pmu-pebs.c). */
    return r & ~x86pmu_pebs_ctrl_bits(s, false);
}

/*
 * The full width, through IA32_A_PMCx or version 6's IA32_PMC_GPn_CTR;
 * bits past it #GP, as KVM and kvm-unit-tests'
 * check_gp_counters_write_width expect of hardware.
 */
X86PMUAccess x86pmu_write_gp_full(X86PMUState *s, unsigned x, uint64_t val)
{
    if (val & ~x86pmu_mask(s->cfg.gp_width)) {
        return X86PMU_GP;
    }
    s->gp_ctr[x] = val & x86pmu_mask(x86pmu_gp_width(s));
    return X86PMU_OK;
}

/* IA32_PERFEVTSELx, or version 6's IA32_PMC_GPn_CFG_A. */
X86PMUAccess x86pmu_write_evtsel(X86PMUState *s, unsigned x, uint64_t val)
{
    if ((val & evtsel_reserved(s)) &&
        !x86pmu_defect(s, X86PMU_DEFECT_RESERVED_BITS_ACCEPTED)) {
        return X86PMU_GP;
    }
    s->gp_sel[x] = val;
    s->edge_prev &= ~BIT64(x);
    return X86PMU_OK;
}

/*
 * IA32_FIXED_CTRi, or version 6's IA32_PMC_FXm_CTR: "Bits beyond the
 * width of the fixed-function counter are reserved and must be written
 * as zeros" (SDM vol. 3B, "Architectural Performance Monitoring Version
 * 2"): #GP.  KVM truncates instead.
 */
X86PMUAccess x86pmu_write_fixed(X86PMUState *s, unsigned i, uint64_t val)
{
    if (val & ~x86pmu_mask(s->cfg.fixed_width)) {
        if (!x86pmu_quirk(s, X86PMU_QUIRK_KVM_FIXED_CTR_WRITE_TRUNCATED)) {
            return X86PMU_GP;
        }
    }
    s->fixed_ctr[i] = val & x86pmu_mask(x86pmu_fixed_width(s));
    return X86PMU_OK;
}
