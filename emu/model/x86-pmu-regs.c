/* SPDX-License-Identifier: MIT */
/*
 * The x86 PMU model's registers: RESET, CPUID, and for every PMU MSR and
 * RDPMC what it reads, what a write does and when it raises #GP.
 *
 * Copyright (c) 2025 The pmutest authors
 */

#include <string.h>

#include "x86-pmu-int.h"
#include "x86-pmu-arch-pebs.h"

static bool fw_write(const X86PMUState *s)
{
    return s->cfg.pdcm && (s->cfg.perf_caps & X86PMU_CAP_FW_WRITE);
}

void x86pmu_reset(X86PMUState *s, const X86PMUConfig *cfg)
{
    memset(s, 0, sizeof(*s));
    s->cfg = *cfg;
    s->unsched_idx = 0xff;
    x86pmu_lbr_reset(s);
    if (x86pmu_quirk(s, X86PMU_QUIRK_GLOBAL_CTRL_RESET_ZERO)) {
        return;
    }
    /*
     * IA32_PERF_GLOBAL_CTRL comes out of RESET with the GP counters'
     * enables set and the fixed ones clear, so that version-1 software
     * counts (SDM vol. 3A, "Processor State After Reset", table of MSR
     * values; quoted in Linux commit de120e1d692d).  AMD's
     * PerfCntrGlobalCtl does the same for the same reason (AMD family PPRs,
     * cited by that commit).
     */
    if (x86pmu_is_amd(s) ? cfg->perfmon_v2 : cfg->version >= 2) {
        s->global_ctrl = x86pmu_counter_bits(s) & 0xffffffffull;
    }
}

/* --- CPUID --- */

static void cpuid_intel(const X86PMUState *s, uint32_t leaf, uint32_t subleaf,
                        uint32_t *eax, uint32_t *ebx, uint32_t *ecx,
                        uint32_t *edx)
{
    const X86PMUConfig *c = &s->cfg;

    switch (leaf) {
    case 0x01:
        /* ECX[15] PDCM: IA32_PERF_CAPABILITIES exists. */
        *ecx = (*ecx & ~(1u << 15)) | (c->pdcm ? 1u << 15 : 0);
        break;
    case 0x07:
        if (subleaf == 0) {
            /* EDX[15] hybrid; EDX[19] architectural LBRs: lbr.c's. */
            *edx &= ~((1u << 15) | (1u << 19));
            *edx |= c->hybrid ? 1u << 15 : 0;
            *edx |= c->ibpb ? 1u << 26 : 0;     /* IBRS and IBPB */
        }
        x86pmu_v6_cpuid(s, leaf, subleaf, eax, ebx, ecx, edx);
        break;
    case 0x0a:
        /* SDM vol. 2A, CPUID, "Architectural Performance Monitoring Leaf". */
        *eax = *ebx = *ecx = *edx = 0;
        if (c->version == 0) {
            break;
        }
        *eax = c->version | (uint32_t)c->num_gp << 8 |
               (uint32_t)c->gp_width << 16 | (uint32_t)c->events_len << 24;
        *ebx = c->events_unavail;
        if (c->version >= 5) {
            *ecx = c->fixed_bitmap;
        }
        if (c->version >= 2) {
            *edx = c->num_fixed | (uint32_t)c->fixed_width << 5 |
                   (c->anythread_deprecated ? 1u << 15 : 0);
        }
        break;
    case 0x15:
        /*
         * Time Stamp Counter and Nominal Core Crystal Clock Information
         * Leaf: TSC ticks per crystal tick = EBX / EAX, ECX the crystal's
         * Hz or 0 "not enumerated" (SDM vol. 2A, CPUID).  The emulated TSC
         * is the host's, of no fixed rate: ECX stays 0.  The crystal is
         * what 3CH/01H counts on a GP counter before Golden Cove
         * (x86-pmu-count.c, gp_ref_ratio).
         */
        if (c->ref_report == X86PMU_REF_REPORT_CPUID15) {
            *eax = 1;
            *ebx = c->ref_ratio;
            *ecx = *edx = 0;
        }
        break;
    case 0x1a:
        /* Hybrid Information Enumeration Leaf. */
        if (c->hybrid) {
            *eax = (uint32_t)c->core_type << 24 | (c->native_model & 0xffffff);
            *ebx = *ecx = *edx = 0;
        }
        break;
    case 0x23:
        x86pmu_v6_cpuid(s, leaf, subleaf, eax, ebx, ecx, edx);
        break;
    default:
        break;
    }
}

static void cpuid_amd(const X86PMUState *s, uint32_t leaf,
                      uint32_t *eax, uint32_t *ebx, uint32_t *ecx,
                      uint32_t *edx)
{
    const X86PMUConfig *c = &s->cfg;

    switch (leaf) {
    case 0x80000001:
        /* Fn8000_0001_ECX[23] PerfCtrExtCore (APM vol. 3, appendix E). */
        *ecx = (*ecx & ~(1u << 23)) | (c->perfctr_core ? 1u << 23 : 0);
        break;
    case 0x80000008:
        /* Fn8000_0008_EBX[12] IBPB (APM vol. 3, appendix E). */
        *ebx |= c->ibpb ? 1u << 12 : 0;
        break;
    case 0x80000022:
        /*
         * Fn8000_0022: EAX[0] PerfMonV2, EAX[2] LbrAndPmcFreeze, EBX[3:0]
         * NumPerfCtrCore.
         */
        *eax = *ebx = *ecx = *edx = 0;
        if (c->perfmon_v2) {
            *eax = 1 | (c->lbr_pmc_freeze ? 1u << 2 : 0);
            *ebx = c->num_gp & 0xf;
        }
        break;
    default:
        break;
    }
}

void x86pmu_cpuid(const X86PMUState *s, uint32_t leaf, uint32_t subleaf,
                  uint32_t *eax, uint32_t *ebx, uint32_t *ecx, uint32_t *edx)
{
    if (x86pmu_is_amd(s)) {
        cpuid_amd(s, leaf, eax, ebx, ecx, edx);
    } else {
        cpuid_intel(s, leaf, subleaf, eax, ebx, ecx, edx);
    }
    x86pmu_lbr_cpuid(s, leaf, subleaf, eax, ebx, ecx, edx);
    x86pmu_pebs_cpuid(s, leaf, ecx, edx);
}

/* --- Intel MSRs --- */

typedef enum IntelReg {
    R_ABSENT,       /* a PMU address with nothing behind it: #GP */
    R_PMC,
    R_APMC,
    R_EVTSEL,
    R_FIXED,
    R_FIXED_CTRL,
    R_STATUS,
    R_CTRL,
    R_OVF_CTRL,
    R_STATUS_SET,
    R_INUSE,
    R_PERF_CAPS,
    R_DEBUGCTL,
    R_PLATFORM_INFO,
    R_OFFCORE,      /* MSR_OFFCORE_RSP_0/1 (x86-pmu-offcore.c) */
} IntelReg;

/*
 * Which register `msr` is; X86PMU_NOT_MINE leaves it to the caller.  The
 * model owns the whole address ranges the architecture gives the PMU, so
 * that a counter the CPUID view does not have raises #GP (SDM vol. 4:
 * IA32_PMC0-7 0xC1-0xC8, IA32_PERFEVTSEL0-7 0x186-0x18D, IA32_A_PMC0-7
 * 0x4C1-0x4C8, IA32_FIXED_CTR0-15 0x309-0x318 for FIXED_CTR_CTRL's 16
 * fields, 0x38D-0x392).  The offcore-response MSRs are owned too: the
 * layout's (x86-pmu-offcore.c), #GP where it has none.
 */
static X86PMUAccess intel_decode(const X86PMUState *s, uint32_t msr,
                                 IntelReg *reg, unsigned *idx)
{
    const X86PMUConfig *c = &s->cfg;

    *idx = 0;
    *reg = R_ABSENT;
    if (msr == X86PMU_MSR_DEBUGCTL) {
        *reg = R_DEBUGCTL;
    } else if (msr == X86PMU_MSR_PLATFORM_INFO) {
        if (c->ref_report != X86PMU_REF_REPORT_PLATFORM_INFO) {
            return X86PMU_NOT_MINE;
        }
        *reg = R_PLATFORM_INFO;
    } else if (msr == X86PMU_MSR_PERF_CAPABILITIES) {
        *reg = c->pdcm ? R_PERF_CAPS : R_ABSENT;
    } else if (msr == X86PMU_MSR_OFFCORE_RSP_0 ||
               msr == X86PMU_MSR_OFFCORE_RSP_1) {
        /* Absent where OMR replaces them (Linux drives none there). */
        *idx = msr - X86PMU_MSR_OFFCORE_RSP_0;
        *reg = *idx < c->offcore.nmsrs && !c->offcore.omr ? R_OFFCORE :
               R_ABSENT;
    } else if (msr >= X86PMU_MSR_OMR_0 &&
               msr < X86PMU_MSR_OMR_0 + X86PMU_OFFCORE_MAX) {
        *idx = msr - X86PMU_MSR_OMR_0;
        if (x86pmu_defect(s, X86PMU_DEFECT_OMR_MSRS_ALIAS)) {
            *idx &= 1;
        }
        *reg = c->offcore.omr ? R_OFFCORE : R_ABSENT;
    } else if (msr >= X86PMU_MSR_PMC0 &&
               msr < X86PMU_MSR_PMC0 + X86PMU_LEGACY_GP) {
        *idx = msr - X86PMU_MSR_PMC0;
        *reg = x86pmu_gp_exists(s, *idx) ? R_PMC : R_ABSENT;
    } else if (msr >= X86PMU_MSR_PERFEVTSEL0 &&
               msr < X86PMU_MSR_PERFEVTSEL0 + X86PMU_LEGACY_GP) {
        *idx = msr - X86PMU_MSR_PERFEVTSEL0;
        *reg = x86pmu_gp_exists(s, *idx) ? R_EVTSEL : R_ABSENT;
    } else if (msr >= X86PMU_MSR_A_PMC0 &&
               msr < X86PMU_MSR_A_PMC0 + X86PMU_LEGACY_GP) {
        /* Only with IA32_PERF_CAPABILITIES[13] ("Full-Width Writes"). */
        *idx = msr - X86PMU_MSR_A_PMC0;
        *reg = x86pmu_gp_exists(s, *idx) && fw_write(s) ? R_APMC : R_ABSENT;
    } else if (msr >= X86PMU_MSR_FIXED_CTR0 &&
               msr < X86PMU_MSR_FIXED_CTR0 + 16) {
        *idx = msr - X86PMU_MSR_FIXED_CTR0;
        *reg = x86pmu_fixed_exists(s, *idx) ? R_FIXED : R_ABSENT;
    } else if (msr >= X86PMU_MSR_FIXED_CTR_CTRL &&
               msr <= X86PMU_MSR_GLOBAL_OVF_CTRL) {
        /* Version 2 ("Architectural Performance Monitoring Version 2"). */
        if (c->version >= 2) {
            static const IntelReg v2[] = {
                R_FIXED_CTRL, R_STATUS, R_CTRL, R_OVF_CTRL,
            };
            *reg = v2[msr - X86PMU_MSR_FIXED_CTR_CTRL];
        }
    } else if (msr == X86PMU_MSR_GLOBAL_STATUS_SET) {
        /* Version 4 ("Architectural Performance Monitoring Version 4"). */
        *reg = c->version >= 4 ? R_STATUS_SET : R_ABSENT;
    } else if (msr == X86PMU_MSR_GLOBAL_INUSE) {
        *reg = c->version >= 4 && !x86pmu_quirk(s, X86PMU_QUIRK_NO_INUSE_MSR) ?
               R_INUSE : R_ABSENT;
    } else {
        return X86PMU_NOT_MINE;
    }
    return X86PMU_OK;
}

/*
 * IA32_PERF_GLOBAL_INUSE (SDM vol. 3B, "Architectural Performance
 * Monitoring Version 4"): bit x when IA32_PERFEVTSELx[7:0] != 0, bit 32+i
 * when IA32_FIXED_CTR_CTRL's enable field i != 0, bit 63 when any INT or
 * PMI bit is set.
 */
static uint64_t inuse(const X86PMUState *s)
{
    uint64_t v = 0;
    unsigned i;

    if (x86pmu_defect(s, X86PMU_DEFECT_INUSE_WRONG)) {
        return 0;
    }
    for (i = 0; i < X86PMU_MAX_GP; i++) {
        if (!x86pmu_gp_exists(s, i)) {
            continue;
        }
        if (SEL_EVENT(s->gp_sel[i])) {
            v |= BIT64(i);
        }
        if (s->gp_sel[i] & SEL_INT) {
            v |= BIT64(63);
        }
    }
    for (i = 0; i < X86PMU_MAX_FIXED; i++) {
        unsigned f = FIXED_FIELD(s->fixed_ctrl, i);

        if (!x86pmu_fixed_exists(s, i)) {
            continue;
        }
        if (f & (FIXED_OS | FIXED_USR)) {
            v |= BIT64(X86PMU_FIXED_IDX(i));
        }
        if (f & FIXED_PMI) {
            v |= BIT64(63);
        }
    }
    return v;
}

/*
 * GLOBAL_STATUS bits OVF_CTRL may clear: the counters', OvfBuf (62) and
 * CondChgd (63) from version 2, OvfUncore (61) from 3, LBR_Frz (58) and
 * CTR_Frz (59) from 4.
 */
static uint64_t status_bits(const X86PMUState *s)
{
    uint64_t b = x86pmu_counter_bits(s) | X86PMU_STATUS_OVF_BUF |
                 X86PMU_STATUS_COND_CHGD;

    if (s->cfg.version >= 3) {
        b |= X86PMU_STATUS_OVF_UNCORE;
    }
    if (s->cfg.version >= 4) {
        b |= X86PMU_STATUS_LBR_FRZ | X86PMU_STATUS_CTR_FRZ;
    }
    /* The architectural PEBS threshold's (54; x86-pmu-arch-pebs.c). */
    return b | x86pmu_arch_pebs_status_bits(s);
}

/* Xen refuses FIXED_CTR_CTRL's AnyThread bits too (fixed_ctrl_mask). */
static uint64_t fixed_ctrl_valid(const X86PMUState *s)
{
    uint64_t field = FIXED_OS | FIXED_USR | FIXED_PMI, v = 0;
    unsigned i;

    if (s->cfg.version >= 3 &&
        !x86pmu_quirk(s, X86PMU_QUIRK_XEN_ANYTHREAD_PC_REJECTED)) {
        field |= FIXED_ANY;
    }
    for (i = 0; i < X86PMU_MAX_FIXED; i++) {
        if (x86pmu_fixed_exists(s, i)) {
            v |= field << (4 * i);
        }
    }
    return v | x86pmu_v6_fixed_ctrl_bits(s) | x86pmu_pebs_ctrl_bits(s, true);
}

/*
 * IA32_DEBUGCTL bits that take writes (SDM vol. 3B, "IA32_DEBUGCTL MSR"):
 * LBR, BTF, TR, BTS, BTINT, BTS_OFF_OS, BTS_OFF_USR are stored (LBR
 * drives the legacy stack, x86-pmu-lbr.c; QEMU has no BTS or BTF: they do
 * nothing); FREEZE_LBRS_ON_PMI and
 * FREEZE_PERFMON_ON_PMI "if CPUID.01H:ECX[15] = 1 and CPUID.0AH:EAX[7:0]
 * > 1"; FREEZE_WHILE_SMM if IA32_PERF_CAPABILITIES[12].
 */
#define DEBUGCTL_BTF    (1ull << 1)
#define DEBUGCTL_TR     (1ull << 6)
#define DEBUGCTL_BTS    (1ull << 7)
static uint64_t debugctl_valid(const X86PMUState *s)
{
    uint64_t v = 0x7c3;

    /*
     * KVM takes only what vmx_get_supported_debugctl() lists (bus-lock
     * detection, LBR and FREEZE_LBRS_ON_PMI with guest LBRs, RTM_DEBUG:
     * none of them here) and drops LBR and BTF without a fault (Linux
     * arch/x86/kvm/vmx/vmx.c, vmx_set_msr): the freeze bits raise #GP.
     */
    if (x86pmu_quirk(s, X86PMU_QUIRK_KVM_DEBUGCTL_FREEZE_REFUSED)) {
        return X86PMU_DEBUGCTL_LBR | DEBUGCTL_BTF;
    }
    if (s->cfg.debugctl_valid) {
        return s->cfg.debugctl_valid;
    }
    if (s->cfg.pdcm && s->cfg.version >= 2) {
        v |= X86PMU_DEBUGCTL_FREEZE_LBRS_ON_PMI |
             X86PMU_DEBUGCTL_FREEZE_PERFMON_ON_PMI;
    }
    if (s->cfg.pdcm && (s->cfg.perf_caps & X86PMU_CAP_FREEZE_WHILE_SMM)) {
        v |= X86PMU_DEBUGCTL_FREEZE_WHILE_SMM;
    }
    return v;
}

static X86PMUAccess intel_rdmsr(X86PMUState *s, uint32_t msr, uint64_t *val)
{
    IntelReg reg;
    unsigned i;

    *val = 0;
    if (x86pmu_v6_owns(msr)) {
        return x86pmu_v6_rdmsr(s, msr, val);
    }
    if (intel_decode(s, msr, &reg, &i) == X86PMU_NOT_MINE) {
        return X86PMU_NOT_MINE;
    }
    switch (reg) {
    case R_ABSENT:
        return X86PMU_GP;
    case R_PMC:
    case R_APMC:
        *val = s->gp_ctr[i];
        break;
    case R_EVTSEL:
        *val = s->gp_sel[i];
        break;
    case R_FIXED:
        *val = s->fixed_ctr[i];
        break;
    case R_FIXED_CTRL:
        *val = s->fixed_ctrl;
        break;
    case R_STATUS:
        *val = x86pmu_quirk(s, X86PMU_QUIRK_XEN_STATUS_ONLY_AT_PMI) ?
               s->status_at_pmi : s->global_status;
        break;
    case R_CTRL:
        *val = s->global_ctrl;
        break;
    case R_OVF_CTRL:
    case R_STATUS_SET:
        break;      /* write-1-to-clear / to-set: read as 0 */
    case R_INUSE:
        *val = inuse(s);
        break;
    case R_PERF_CAPS:
        *val = s->cfg.perf_caps;
        break;
    case R_DEBUGCTL:
        *val = s->debugctl;
        break;
    case R_PLATFORM_INFO:
        /* Maximum non-turbo ratio, [15:8]: TSC ticks per bus clock tick. */
        *val = (uint64_t)(s->cfg.ref_ratio & 0xff) << 8;
        break;
    case R_OFFCORE:
        *val = s->offcore_rsp[i];
        break;
    }
    return X86PMU_OK;
}

/* Clearing status bits through OVF_CTRL (or AMD's StatusClr). */
static void clear_status(X86PMUState *s, uint64_t bits, unsigned *pmis)
{
    if (x86pmu_defect(s, X86PMU_DEFECT_OVF_CTRL_NOT_CLEARING)) {
        return;
    }
    s->global_status &= ~bits;
    s->status_at_pmi &= ~bits;
    /* A defect: the PMU raises an acknowledged overflow once more. */
    if (s->pmi_owed_bits & bits) {
        s->global_status |= s->pmi_owed_bits & bits;
        s->pmi_owed_bits &= ~bits;
        (*pmis)++;
    }
}

/*
 * A defect: a write to a counter while it counts is dropped (a vPMU that
 * only loads counter values when it reprograms a stopped counter).
 */
static bool write_dropped(const X86PMUState *s, unsigned idx)
{
    bool en = idx < 32 ? (s->gp_sel[idx] & SEL_EN) != 0 :
              (FIXED_FIELD(s->fixed_ctrl, idx - 32) &
               (FIXED_OS | FIXED_USR)) != 0;
    bool has_global = x86pmu_is_amd(s) ? s->cfg.perfmon_v2 :
                      s->cfg.version >= 2;
    bool global = !has_global || ((s->global_ctrl >> idx) & 1);

    return x86pmu_defect(s, X86PMU_DEFECT_RUNNING_COUNTER_WRITE_DROPPED) &&
           en && global;
}

static X86PMUAccess intel_wrmsr(X86PMUState *s, uint32_t msr, uint64_t val,
                                unsigned *pmis)
{
    unsigned gpw = x86pmu_gp_width(s);
    IntelReg reg;
    unsigned i;

    if (x86pmu_v6_owns(msr)) {
        return x86pmu_v6_wrmsr(s, msr, val);
    }
    if (intel_decode(s, msr, &reg, &i) == X86PMU_NOT_MINE) {
        return X86PMU_NOT_MINE;
    }
    if ((reg == R_PMC || reg == R_APMC) && write_dropped(s, i)) {
        return X86PMU_OK;
    }
    if (reg == R_FIXED && write_dropped(s, X86PMU_FIXED_IDX(i))) {
        return X86PMU_OK;
    }
    switch (reg) {
    case R_ABSENT:
        return X86PMU_GP;
    case R_PMC:
        /*
         * "Full-Width Writes to Performance Counter Registers": through
         * IA32_PMCx, bits 31:0 are written and sign-extended to the
         * counter's width; EDX is ignored.
         */
        if (x86pmu_defect(s, X86PMU_DEFECT_LEGACY_WRITE_NOT_SIGN_EXTENDED)) {
            s->gp_ctr[i] = (uint32_t)val & x86pmu_mask(gpw);
        } else {
            s->gp_ctr[i] = (uint64_t)(int64_t)(int32_t)(uint32_t)val &
                           x86pmu_mask(gpw);
        }
        break;
    case R_APMC:
        return x86pmu_write_gp_full(s, i, val);
    case R_EVTSEL:
        return x86pmu_write_evtsel(s, i, val);
    case R_FIXED:
        return x86pmu_write_fixed(s, i, val);
    case R_FIXED_CTRL:
        if (val & ~fixed_ctrl_valid(s)) {
            return X86PMU_GP;
        }
        s->fixed_ctrl = val;
        s->edge_prev &= 0xffffffffull;
        break;
    case R_CTRL:
        /* Bit 48 lets PERF_METRICS count (x86-pmu-v6.c). */
        if (val & ~(x86pmu_counter_bits(s) |
                    (x86pmu_perf_metrics_exist(s) ?
                     X86PMU_GLOBAL_PERF_METRICS : 0))) {
            return X86PMU_GP;
        }
        s->global_ctrl = val;
        break;
    case R_OVF_CTRL:
        if (val & ~status_bits(s)) {
            return X86PMU_GP;
        }
        clear_status(s, val, pmis);
        break;
    case R_STATUS_SET:
        if (val & ~(status_bits(s) & ~X86PMU_STATUS_COND_CHGD)) {
            return X86PMU_GP;
        }
        if (!x86pmu_defect(s, X86PMU_DEFECT_STATUS_SET_IGNORED)) {
            s->global_status |= val;
            s->status_at_pmi |= val;
        }
        break;
    case R_STATUS:
    case R_INUSE:
    case R_PERF_CAPS:
        return X86PMU_GP;   /* read-only */
    case R_DEBUGCTL:
        if (val & ~debugctl_valid(s)) {
            return X86PMU_GP;
        }
        if (x86pmu_quirk(s, X86PMU_QUIRK_KVM_DEBUGCTL_FREEZE_REFUSED)) {
            val = 0;    /* LBR and BTF dropped */
        }
        s->debugctl = val;
        break;
    case R_PLATFORM_INFO:
        return X86PMU_NOT_MINE;     /* QEMU's: writes are ignored */
    case R_OFFCORE:
        return x86pmu_offcore_write(s, i, val);
    }
    return X86PMU_OK;
}

/*
 * RDPMC (SDM vol. 2B, RDPMC, as quoted in Linux 5728a4a0ea79 and
 * 7a0fc734c20d): ECX[31:16] is the counter type, 0 for the GP counters,
 * 4000H for the fixed ones (2000H: PERF_METRICS where it exists,
 * x86-pmu-v6.c), ECX[15:0] the index; another type, or a counter that
 * does not exist, raises #GP.  So does ECX[31], older editions' "fast" read of the
 * low 32 bits, on an architectural PMU (5728a4a0ea79 records bare metal).
 */
#define RDPMC_TYPE_GP       0x0000
#define RDPMC_TYPE_FIXED    0x4000
static X86PMUAccess intel_rdpmc(X86PMUState *s, uint32_t ecx, unsigned cpl,
                                uint64_t *val)
{
    unsigned type = ecx >> 16, idx = ecx & 0xffff;
    bool fast = ecx >> 31;
    X86PMUAccess r;
    uint64_t v;

    if (s->cfg.version == 0) {
        return X86PMU_GP;
    }
    if (fast && x86pmu_quirk(s, X86PMU_QUIRK_KVM_FAST_RDPMC_ALLOWED)) {
        /* Older KVM masked ECX[31:30] off and returned the low 32 bits. */
        bool fixed = (ecx >> 30) & 1;

        idx = ecx & 0x3fffffff;
        if (fixed ? !x86pmu_fixed_exists(s, idx) : !x86pmu_gp_exists(s, idx)) {
            return X86PMU_GP;
        }
        *val = (uint32_t)(fixed ? s->fixed_ctr[idx] : s->gp_ctr[idx]);
        return X86PMU_OK;
    }
    if (x86pmu_v6_rdpmc_metrics(s, ecx, val, &r)) {
        return r;
    }
    if (type == RDPMC_TYPE_FIXED &&
        x86pmu_defect(s, X86PMU_DEFECT_RDPMC_FIXED_READS_GP) &&
        x86pmu_gp_exists(s, idx)) {
        v = s->gp_ctr[idx];
    } else if (type == RDPMC_TYPE_FIXED && x86pmu_fixed_exists(s, idx)) {
        v = s->fixed_ctr[idx];
    } else if (type == RDPMC_TYPE_GP && x86pmu_gp_exists(s, idx)) {
        v = s->gp_ctr[idx];
    } else {
        return X86PMU_GP;
    }
    *val = v;
    if (cpl > 0 &&
        x86pmu_v6_user_disabled(s, type == RDPMC_TYPE_FIXED, idx)) {
        *val = 0;
    }
    return X86PMU_OK;
}

/* --- AMD MSRs --- */

typedef enum AmdReg {
    A_ABSENT,
    A_CTL,
    A_CTR,
    A_STATUS,
    A_CTL_GLOBAL,
    A_STATUS_CLR,
    A_STATUS_SET,
    A_DEBUGCTL,
} AmdReg;

/*
 * APM vol. 2, 13.2: legacy PerfEvtSel0-3 / PerfCtr0-3 at 0xC0010000-7,
 * aliasing counters 0-3; with PerfCtrExtCore, PerfEvtSel n at 0xC0010200 +
 * 2n and PerfCtr n at 0xC0010201 + 2n; with PerfMonV2 the global
 * registers at 0xC0000300-0xC0000303.
 */
static X86PMUAccess amd_decode(const X86PMUState *s, uint32_t msr,
                               AmdReg *reg, unsigned *n)
{
    const X86PMUConfig *c = &s->cfg;

    *n = 0;
    *reg = A_ABSENT;
    if (msr >= X86PMU_MSR_K7_EVNTSEL0 && msr < X86PMU_MSR_K7_EVNTSEL0 + 4) {
        *n = msr - X86PMU_MSR_K7_EVNTSEL0;
        *reg = x86pmu_gp_exists(s, *n) ? A_CTL : A_ABSENT;
    } else if (msr >= X86PMU_MSR_K7_PERFCTR0 &&
               msr < X86PMU_MSR_K7_PERFCTR0 + 4) {
        *n = msr - X86PMU_MSR_K7_PERFCTR0;
        *reg = x86pmu_gp_exists(s, *n) ? A_CTR : A_ABSENT;
    } else if (msr >= X86PMU_MSR_F15H_PERF_CTL0 &&
               msr < X86PMU_MSR_F15H_PERF_CTL0 + 2 * 16) {
        *n = (msr - X86PMU_MSR_F15H_PERF_CTL0) / 2;
        if (c->perfctr_core && x86pmu_gp_exists(s, *n)) {
            *reg = (msr - X86PMU_MSR_F15H_PERF_CTL0) % 2 ? A_CTR : A_CTL;
        }
    } else if (msr >= X86PMU_MSR_AMD_GLOBAL_STATUS &&
               msr <= X86PMU_MSR_AMD_GLOBAL_STATUS_SET) {
        if (c->perfmon_v2) {
            static const AmdReg v2[] = {
                A_STATUS, A_CTL_GLOBAL, A_STATUS_CLR, A_STATUS_SET,
            };
            *reg = v2[msr - X86PMU_MSR_AMD_GLOBAL_STATUS];
        }
        /* A defect: KVM before 68e61f6fd656 had no StatusSet (#GP). */
        if (*reg == A_STATUS_SET &&
            x86pmu_defect(s, X86PMU_DEFECT_AMD_STATUS_SET_ABSENT)) {
            *reg = A_ABSENT;
        }
    } else if (msr == X86PMU_MSR_DEBUGCTL && x86pmu_amd_debugctl_valid(s)) {
        *reg = A_DEBUGCTL;      /* LbrAndPmcFreeze's FLBRI (x86-pmu-amd.c) */
    } else {
        return X86PMU_NOT_MINE;
    }
    return X86PMU_OK;
}

/*
 * PerfEvtSel bits the APM marks reserved: 19, 21, 39:36, 63:42, and
 * EventSelect[11:8] (35:32) before family 10h.  GuestOnly/HostOnly (40/41)
 * are stored and count as x86-pmu-amd.c says.
 */
static uint64_t amd_evtsel_reserved(const X86PMUState *s)
{
    uint64_t r = 0xfffffc0000000000ull | 0x000000f000000000ull |
                 SEL_PC | SEL_ANY;

    if (s->cfg.family < 0x10) {
        r |= 0x0000000f00000000ull;
    }
    return r;
}

/*
 * What a PerfEvtSel write keeps.  AMD EPYC parts "never raise a #GP" for
 * it; they clear some reserved bits and keep others, bits 19 and 42 on
 * Zen 3 (Linux 9b026073db2f, a hardware observation).  The APM's WRMSR
 * page promises #GP only for reserved MSR addresses.  The model keeps 19 (pin
 * control in older APMs) and, from family 19h, 42, and clears the rest;
 * KVM clears 19, 21 and 63:36, HostOnly/GuestOnly included (Linux
 * arch/x86/kvm/svm/pmu.c, reserved_bits 0xfffffff000280000).
 */
static uint64_t amd_evtsel_kept(const X86PMUState *s, uint64_t val)
{
    uint64_t clear = amd_evtsel_reserved(s) & ~SEL_PC;

    if (x86pmu_defect(s, X86PMU_DEFECT_RESERVED_BITS_ACCEPTED)) {
        return val;
    }
    if (x86pmu_quirk(s, X86PMU_QUIRK_KVM_AMD_RESERVED_BITS_DROPPED)) {
        return val & ~0xfffffff000280000ull;
    }
    if (s->cfg.family >= 0x19) {
        clear &= ~(1ull << 42);
    }
    return val & ~clear;
}

static X86PMUAccess amd_rdmsr(X86PMUState *s, uint32_t msr, uint64_t *val)
{
    AmdReg reg;
    unsigned n;

    *val = 0;
    if (amd_decode(s, msr, &reg, &n) == X86PMU_NOT_MINE) {
        return X86PMU_NOT_MINE;
    }
    switch (reg) {
    case A_ABSENT:
        return X86PMU_GP;
    case A_CTL:
        *val = s->gp_sel[n];
        break;
    case A_CTR:
        *val = s->gp_ctr[n];
        break;
    case A_STATUS:
        *val = s->global_status;
        break;
    case A_CTL_GLOBAL:
        *val = s->global_ctrl;
        break;
    case A_STATUS_CLR:
    case A_STATUS_SET:
        break;
    case A_DEBUGCTL:
        *val = s->debugctl;
        break;
    }
    return X86PMU_OK;
}

/*
 * AMD ignores writes to reserved bits and to read-only PMU MSRs: Linux
 * arch/x86/kvm/pmu.c, kvm_pmu_set_msr ("AMD ignores writes to reserved
 * bits and read-only PMU MSRs, whereas Intel generates #GP"; for
 * PerfCntrGlobalStatus "Per PPR, Read-only MSR. Writes are ignored."; the
 * GlobalCtl mask was "Based on the observed HW" in the patch that added
 * PerfMonV2, 4a2771895ca6).  So no write to an existing AMD PMU MSR
 * faults: reserved bits are dropped, counter bits 63:48 included.  With
 * cfg.amd_reserved_gp they raise #GP instead, as on Intel.
 */
static X86PMUAccess amd_wrmsr(X86PMUState *s, uint32_t msr, uint64_t val,
                              unsigned *pmis)
{
    uint64_t ctrs = x86pmu_counter_bits(s);
    bool gp = s->cfg.amd_reserved_gp &&
              !x86pmu_quirk(s, X86PMU_QUIRK_KVM_AMD_RESERVED_BITS_DROPPED) &&
              !x86pmu_defect(s, X86PMU_DEFECT_RESERVED_BITS_ACCEPTED);
    uint64_t status = x86pmu_amd_status_bits(s);
    AmdReg reg;
    unsigned n;

    if (amd_decode(s, msr, &reg, &n) == X86PMU_NOT_MINE) {
        return X86PMU_NOT_MINE;
    }
    if (gp && ((reg == A_CTL && (val & amd_evtsel_reserved(s))) ||
               (reg == A_CTR && (val & ~x86pmu_mask(X86PMU_AMD_WIDTH))) ||
               (reg == A_CTL_GLOBAL && (val & ~ctrs)) ||
               ((reg == A_STATUS_CLR || reg == A_STATUS_SET) &&
                (val & ~status)) ||
               reg == A_STATUS)) {
        return X86PMU_GP;
    }
    switch (reg) {
    case A_ABSENT:
        return X86PMU_GP;
    case A_CTL:
        s->gp_sel[n] = amd_evtsel_kept(s, val);
        s->edge_prev &= ~BIT64(n);
        break;
    case A_CTR:
        if (write_dropped(s, n)) {
            return X86PMU_OK;
        }
        s->gp_ctr[n] = val & x86pmu_mask(x86pmu_gp_width(s));
        break;
    case A_CTL_GLOBAL:
        s->global_ctrl = val & ctrs;
        break;
    case A_STATUS:
        break;
    case A_STATUS_CLR:
        clear_status(s, val & status, pmis);
        break;
    case A_STATUS_SET:
        if (!x86pmu_defect(s, X86PMU_DEFECT_STATUS_SET_IGNORED)) {
            s->global_status |= val & status;
        }
        break;
    case A_DEBUGCTL:
        if (val & ~x86pmu_amd_debugctl_valid(s)) {
            return X86PMU_GP;
        }
        s->debugctl = val;
        break;
    }
    return X86PMU_OK;
}

/*
 * RDPMC (APM vol. 3): ECX is the counter number; past the core counters
 * (the model has no northbridge or L3 counters) #GP, ECX[31:30] included
 * (KVM commit ecb490770ad4).
 */
static X86PMUAccess amd_rdpmc(X86PMUState *s, uint32_t ecx, uint64_t *val)
{
    if (!x86pmu_gp_exists(s, ecx)) {
        return X86PMU_GP;
    }
    *val = s->gp_ctr[ecx];
    return X86PMU_OK;
}

/* --- Entry points --- */

X86PMUAccess x86pmu_rdmsr(X86PMUState *s, uint32_t msr, uint64_t *val)
{
    /* LBRs and PEBS first: their files know their ranges. */
    X86PMUAccess r = x86pmu_lbr_rdmsr(s, msr, val);

    if (r == X86PMU_NOT_MINE) {
        r = x86pmu_pebs_rdmsr(s, msr, val);
    }
    if (r != X86PMU_NOT_MINE) {
        return r;
    }
    return x86pmu_is_amd(s) ? amd_rdmsr(s, msr, val) :
                              intel_rdmsr(s, msr, val);
}

X86PMUAccess x86pmu_wrmsr(X86PMUState *s, uint32_t msr, uint64_t val,
                          unsigned *pmis)
{
    X86PMUAccess a = x86pmu_lbr_wrmsr(s, msr, val);

    *pmis = 0;
    if (a == X86PMU_NOT_MINE) {
        a = x86pmu_pebs_wrmsr(s, msr, val);
    }
    if (a != X86PMU_NOT_MINE) {
        return a;
    }
    a = x86pmu_is_amd(s) ? amd_wrmsr(s, msr, val, pmis) :
                           intel_wrmsr(s, msr, val, pmis);
    if (a == X86PMU_OK) {
        x86pmu_sched_update(s);
    }
    return a;
}

X86PMUAccess x86pmu_rdpmc(X86PMUState *s, uint32_t ecx, unsigned cpl,
                          bool pce, uint64_t *val)
{
    *val = 0;
    /* At CPL > 0 RDPMC needs CR4.PCE (SDM vol. 2B and APM vol. 3, RDPMC). */
    if (cpl > 0 && !pce &&
        !x86pmu_defect(s, X86PMU_DEFECT_RDPMC_IGNORES_CR4_PCE)) {
        return X86PMU_GP;
    }
    return x86pmu_is_amd(s) ? amd_rdpmc(s, ecx, val) :
                              intel_rdpmc(s, ecx, cpl, val);
}

/*
 * IA32_DEBUGCTL.FREEZE_WHILE_SMM (SDM vol. 3B, "IA32_DEBUGCTL MSR" and
 * "Filtering of SMM Handler Overhead"): SMI delivery clears every enable
 * bit of IA32_PERF_GLOBAL_CTRL, saves IA32_DEBUGCTL and clears its LBR,
 * BTF, TR and BTS; after RSM DEBUGCTL is restored and "the enable bits of
 * IA32_PERF_GLOBAL_CTRL will be set to 1".  Taken as written: every
 * existing counter's enable bit, whatever it was before the SMI.
 */
void x86pmu_smm_enter(X86PMUState *s)
{
    if (x86pmu_is_amd(s) ||
        !(s->debugctl & X86PMU_DEBUGCTL_FREEZE_WHILE_SMM)) {
        return;
    }
    s->smm_frozen = true;
    s->smm_debugctl = s->debugctl;
    s->debugctl &= ~(X86PMU_DEBUGCTL_LBR | DEBUGCTL_BTF | DEBUGCTL_TR |
                     DEBUGCTL_BTS);
    s->global_ctrl = 0;
    x86pmu_sched_update(s);
}

void x86pmu_smm_leave(X86PMUState *s)
{
    if (!s->smm_frozen) {
        return;
    }
    s->smm_frozen = false;
    s->debugctl = s->smm_debugctl;
    if (s->cfg.version >= 2) {
        s->global_ctrl = x86pmu_counter_bits(s);
    }
    x86pmu_sched_update(s);
}
