/* SPDX-License-Identifier: MIT */
/*
 * The x86 PMU model's last branch records: Intel's legacy LBR stack,
 * architectural LBRs and AMD's LbrExtV2, their MSRs and CPUID, and what a
 * taken branch writes into them.
 *
 * Sources: Intel SDM vol. 3B, chapter "Debug, Branch Profile, TSC, and
 * Intel Resource Director Technology Features" ("Last Branch, Interrupt,
 * and Exception Recording", "LBR Stack" of each microarchitecture,
 * "Filtering of Last Branch Records", "Call Stack Profiling",
 * "Architectural Last Branch Records"), vol. 4 (the LBR MSR tables); AMD
 * APM vol. 2, "Last Branch Stack", and Linux arch/x86/events/amd/lbr.c for
 * the LbrExtV2 register layout.  Where the manuals leave a behaviour open
 * the model makes a choice and says so (pmutest's emu/qemu/README.md).
 *
 * Copyright (c) 2025 The pmutest authors
 */

#include <string.h>

#include "x86-pmu-int.h"

/* Intel legacy (SDM vol. 4, LBR MSR tables; Linux msr-index.h names). */
#define MSR_LBR_SELECT          0x1c8
#define MSR_LBR_TOS             0x1c9
#define MSR_LBR_FROM_CORE       0x040   /* 4 or 8 entries */
#define MSR_LBR_TO_CORE         0x060
#define MSR_LBR_FROM            0x680   /* 16 or 32 entries */
#define MSR_LBR_TO              0x6c0
#define MSR_LBR_INFO            0xdc0
/* Architectural LBRs. */
#define MSR_ARCH_LBR_CTL        0x14ce
#define MSR_ARCH_LBR_DEPTH      0x14cf
#define MSR_ARCH_LBR_FROM       0x1500
#define MSR_ARCH_LBR_TO         0x1600
#define MSR_ARCH_LBR_INFO       0x1200
/* AMD LbrExtV2. */
#define MSR_AMD_LBR_SELECT      0xc000010e
#define MSR_AMD_DBG_EXTN_CFG    0xc000010f
#define MSR_AMD_LBR_FROM        0xc0010300  /* + 2n; TO at + 2n + 1 */
#define AMD_LBRV2EN             BIT64(6)
#define AMD_TO_VALID            BIT64(63)

/* LBR_SELECT (legacy and AMD): bits 0-8 suppress, 9 call-stack mode. */
#define SEL_CPL_EQ_0            BIT64(0)
#define SEL_CPL_NEQ_0           BIT64(1)
#define SEL_CALL_STACK          BIT64(9)
/* IA32_LBR_CTL: enable polarity. */
#define CTL_LBREN               BIT64(0)
#define CTL_OS                  BIT64(1)
#define CTL_USR                 BIT64(2)
#define CTL_CALL_STACK          BIT64(3)
#define CTL_TYPES_SHIFT         16

/* The suppress bit of each branch kind in LBR_SELECT (legacy and AMD). */
static const uint8_t select_bit[] = {
    [X86PMU_BR_JCC] = 2,
    [X86PMU_BR_NEAR_REL_CALL] = 3,
    [X86PMU_BR_NEAR_IND_CALL] = 4,
    [X86PMU_BR_NEAR_RET] = 5,
    [X86PMU_BR_NEAR_IND_JMP] = 6,
    [X86PMU_BR_NEAR_REL_JMP] = 7,
    [X86PMU_BR_FAR] = 8,
};

/* The enable bit of each kind in IA32_LBR_CTL, from bit 16. */
static const uint8_t ctl_bit[] = {
    [X86PMU_BR_JCC] = 0,
    [X86PMU_BR_NEAR_REL_JMP] = 1,
    [X86PMU_BR_NEAR_IND_JMP] = 2,
    [X86PMU_BR_NEAR_REL_CALL] = 3,
    [X86PMU_BR_NEAR_IND_CALL] = 4,
    [X86PMU_BR_NEAR_RET] = 5,
    [X86PMU_BR_FAR] = 6,
};

static unsigned lbr_format(const X86PMUState *s)
{
    return s->cfg.perf_caps & 0x3f;
}

/* Legacy formats 4 (Haswell) and later offer the call-stack mode. */
static bool legacy_call_stack(const X86PMUState *s)
{
    return lbr_format(s) >= 4;
}

/* Formats 5 and 7 keep the flags and cycle count in MSR_LBR_INFO_x. */
static bool legacy_has_info(const X86PMUState *s)
{
    return lbr_format(s) == 5 || lbr_format(s) == 7;
}

/* Entries the stack uses; one fewer with the "depth short" defect. */
static unsigned ring_depth(const X86PMUState *s)
{
    unsigned d = s->cfg.lbr == X86PMU_LBR_ARCH ? (unsigned)s->lbr_depth :
                 s->cfg.lbr_depth;

    if (x86pmu_defect(s, X86PMU_DEFECT_LBR_DEPTH_SHORT) && d > 1) {
        d--;
    }
    return d > X86PMU_LBR_MAX ? X86PMU_LBR_MAX : d;
}

static uint64_t sext(uint64_t v, unsigned bits)
{
    unsigned shift = 64 - bits;

    return (uint64_t)((int64_t)(v << shift) >> shift);
}

/*
 * CPUID.1CH:EAX[7:0]: bit n allows a depth of 8 * (n + 1).  A shape from
 * a part's dump gives them (Lunar Lake: 8, 16 and 32 only); otherwise
 * every multiple of 8 up to the depth.
 */
static uint32_t arch_depths(const X86PMUState *s)
{
    unsigned n = s->cfg.lbr_depth / 8;

    if (s->cfg.arch_lbr_eax & 0xff) {
        return s->cfg.arch_lbr_eax & 0xff;
    }

    return n >= 8 ? 0xff : (1u << n) - 1;
}

static uint64_t arch_ctl_valid(const X86PMUState *s)
{
    uint64_t v = CTL_LBREN;

    /*
     * Bits CPUID.1CH:EBX does not announce are taken as reserved (#GP):
     * the SDM text on what such a write does was not available.
     */
    if (s->cfg.arch_lbr_ebx & 1) {
        v |= CTL_OS | CTL_USR;
    }
    if (s->cfg.arch_lbr_ebx & 2) {
        v |= 0x7full << CTL_TYPES_SHIFT;
    }
    if (s->cfg.arch_lbr_ebx & 4) {
        v |= CTL_CALL_STACK;
    }
    return v;
}

void x86pmu_lbr_reset(X86PMUState *s)
{
    if (s->cfg.lbr == X86PMU_LBR_ARCH) {
        s->lbr_depth = s->cfg.lbr_depth;
    }
}

/* --- CPUID --- */

void x86pmu_lbr_cpuid(const X86PMUState *s, uint32_t leaf, uint32_t subleaf,
                      uint32_t *eax, uint32_t *ebx, uint32_t *ecx,
                      uint32_t *edx)
{
    const X86PMUConfig *c = &s->cfg;

    switch (leaf) {
    case 0x07:
        /* EDX[19]: architectural LBRs. */
        if (subleaf == 0 && c->lbr == X86PMU_LBR_ARCH) {
            *edx |= 1u << 19;
        }
        break;
    case 0x1c:
        *eax = *ebx = *ecx = *edx = 0;
        if (c->lbr == X86PMU_LBR_ARCH) {
            *eax = (c->arch_lbr_eax & ~0xffu) | arch_depths(s);
            *ebx = c->arch_lbr_ebx;
            *ecx = c->arch_lbr_ecx;
        }
        break;
    case 0x80000022:
        /* EAX[1] LbrExtV2, EBX[9:4] the number of LBR stack entries. */
        if (c->lbr == X86PMU_LBR_AMD_V2) {
            *eax |= 1u << 1;
            *ebx |= (uint32_t)(c->lbr_depth & 0x3f) << 4;
        }
        break;
    default:
        break;
    }
}

/* --- MSRs --- */

typedef enum LbrReg {
    L_FROM,
    L_TO,
    L_INFO,
    L_TOS,
    L_SELECT,
    L_CTL,
    L_DEPTH,
    L_EXTN_CFG,
} LbrReg;

/* An address in the [base, base + n) range: its index. */
static bool in_range(uint32_t msr, uint32_t base, unsigned n, unsigned *i)
{
    if (msr < base || msr >= base + n) {
        return false;
    }
    *i = msr - base;
    return true;
}

/*
 * Which LBR register `msr` is: X86PMU_NOT_MINE outside every LBR range of
 * the vendor; X86PMU_GP for an address of a kind or an entry this PMU
 * does not have (the whole ranges are the model's, as for the counters).
 */
static X86PMUAccess lbr_decode(const X86PMUState *s, uint32_t msr,
                               LbrReg *reg, unsigned *i)
{
    X86PMULbrKind k = s->cfg.lbr;
    unsigned legacy_depth = k == X86PMU_LBR_LEGACY ? s->cfg.lbr_depth : 0;
    bool core = legacy_depth && legacy_depth <= 8;

    *i = 0;
    /*
     * AMD: these MSRs are LbrExtV2's (and Zen 3's BRS, not emulated); a
     * part without it leaves them to the caller, as before.
     */
    if (x86pmu_is_amd(s)) {
        if (k != X86PMU_LBR_AMD_V2) {
            return X86PMU_NOT_MINE;
        }
        if (msr == MSR_AMD_LBR_SELECT || msr == MSR_AMD_DBG_EXTN_CFG) {
            *reg = msr == MSR_AMD_LBR_SELECT ? L_SELECT : L_EXTN_CFG;
            return X86PMU_OK;
        }
        if (in_range(msr, MSR_AMD_LBR_FROM, 2 * 32, i)) {
            *reg = *i % 2 ? L_TO : L_FROM;
            *i /= 2;
            return *i < s->cfg.lbr_depth ? X86PMU_OK : X86PMU_GP;
        }
        return X86PMU_NOT_MINE;
    }
    if (msr == MSR_LBR_SELECT || msr == MSR_LBR_TOS) {
        *reg = msr == MSR_LBR_SELECT ? L_SELECT : L_TOS;
        return legacy_depth ? X86PMU_OK : X86PMU_GP;
    }
    if (in_range(msr, MSR_LBR_FROM_CORE, 8, i) ||
        in_range(msr, MSR_LBR_TO_CORE, 8, i)) {
        *reg = msr < MSR_LBR_TO_CORE ? L_FROM : L_TO;
        return core && *i < legacy_depth ? X86PMU_OK : X86PMU_GP;
    }
    if (in_range(msr, MSR_LBR_FROM, 32, i) ||
        in_range(msr, MSR_LBR_TO, 32, i)) {
        *reg = msr < MSR_LBR_TO ? L_FROM : L_TO;
        return !core && *i < legacy_depth ? X86PMU_OK : X86PMU_GP;
    }
    if (in_range(msr, MSR_LBR_INFO, 32, i)) {
        *reg = L_INFO;
        return legacy_has_info(s) && *i < legacy_depth ? X86PMU_OK :
                                                           X86PMU_GP;
    }
    if (msr == MSR_ARCH_LBR_CTL || msr == MSR_ARCH_LBR_DEPTH) {
        *reg = msr == MSR_ARCH_LBR_CTL ? L_CTL : L_DEPTH;
        return k == X86PMU_LBR_ARCH ? X86PMU_OK : X86PMU_GP;
    }
    if (in_range(msr, MSR_ARCH_LBR_FROM, X86PMU_LBR_MAX, i) ||
        in_range(msr, MSR_ARCH_LBR_TO, X86PMU_LBR_MAX, i) ||
        in_range(msr, MSR_ARCH_LBR_INFO, X86PMU_LBR_MAX, i)) {
        *reg = msr >= MSR_ARCH_LBR_TO ? L_TO :
               msr >= MSR_ARCH_LBR_FROM ? L_FROM : L_INFO;
        /* Entries past the depth in use are not there. */
        return k == X86PMU_LBR_ARCH && *i < s->lbr_depth ? X86PMU_OK :
                                                             X86PMU_GP;
    }
    return X86PMU_NOT_MINE;
}

X86PMUAccess x86pmu_lbr_rdmsr(X86PMUState *s, uint32_t msr, uint64_t *val)
{
    X86PMUAccess r;
    LbrReg reg;
    unsigned i;

    r = lbr_decode(s, msr, &reg, &i);
    if (r != X86PMU_OK) {
        return r;
    }
    switch (reg) {
    case L_FROM:
        *val = s->lbr_from[i];
        break;
    case L_TO:
        *val = s->lbr_to[i];
        break;
    case L_INFO:
        *val = s->lbr_info[i];
        break;
    case L_TOS:
        *val = s->lbr_tos;
        break;
    case L_SELECT:
        *val = s->lbr_select;
        break;
    case L_CTL:
        *val = s->lbr_ctl;
        break;
    case L_DEPTH:
        *val = s->lbr_depth;
        break;
    case L_EXTN_CFG:
        *val = s->amd_dbg_extn_cfg;
        break;
    }
    return X86PMU_OK;
}

X86PMUAccess x86pmu_lbr_wrmsr(X86PMUState *s, uint32_t msr, uint64_t val)
{
    X86PMUAccess r;
    LbrReg reg;
    unsigned i;
    uint64_t valid;

    r = lbr_decode(s, msr, &reg, &i);
    if (r != X86PMU_OK) {
        return r;
    }
    switch (reg) {
    case L_FROM:
        /* The records are read/write (SDM vol. 4: "(R/W)"). */
        s->lbr_from[i] = val;
        break;
    case L_TO:
        s->lbr_to[i] = val;
        break;
    case L_INFO:
        s->lbr_info[i] = val;
        break;
    case L_TOS:
        /* Linux restores TOS on a context switch: it is writable. */
        if (val >= s->cfg.lbr_depth) {
            return X86PMU_GP;
        }
        s->lbr_tos = val;
        break;
    case L_SELECT:
        valid = 0x1ff;
        if (!x86pmu_is_amd(s) && legacy_call_stack(s)) {
            valid |= SEL_CALL_STACK;
        }
        if (val & ~valid) {
            return X86PMU_GP;
        }
        s->lbr_select = val;
        break;
    case L_CTL:
        if (val & ~arch_ctl_valid(s)) {
            return X86PMU_GP;
        }
        s->lbr_ctl = val;
        break;
    case L_DEPTH:
        /*
         * A depth CPUID.1CH:EAX allows; any write empties the stack
         * (Linux intel_pmu_arch_lbr_reset relies on it).
         */
        if (!val || val % 8 || val > 64 ||
            !((arch_depths(s) >> (val / 8 - 1)) & 1)) {
            return X86PMU_GP;
        }
        s->lbr_depth = val;
        memset(s->lbr_from, 0, sizeof(s->lbr_from));
        memset(s->lbr_to, 0, sizeof(s->lbr_to));
        memset(s->lbr_info, 0, sizeof(s->lbr_info));
        break;
    case L_EXTN_CFG:
        /* Only LBRV2EN: the model has no BRS (Zen 3's sampling). */
        if (val & ~AMD_LBRV2EN) {
            return X86PMU_GP;
        }
        s->amd_dbg_extn_cfg = val;
        break;
    }
    return X86PMU_OK;
}

/* --- Recording --- */

/*
 * Intel v4+: LBR_Frz stops the stack until software clears it (SDM vol.
 * 3B, "Freezing LBR and Performance Counters on PMI").  AMD
 * LbrAndPmcFreeze: LbrFreeze (PerfCntrGlobalStatus bit 58) stops it the
 * same way, the counters with it (APM vol. 2, "Last Branch Record Stack"
 * and "LBR and PMC Freeze"; Linux ca5b7c0d9621, which added LbrExtV2:
 * the freeze keeps the stack from any update once a counter overflows,
 * until the PMI handler clears the freeze bit).
 */
static bool frozen(const X86PMUState *s)
{
    bool frz = x86pmu_is_amd(s) ? s->cfg.lbr_pmc_freeze :
               s->cfg.version >= 4;

    return frz && (s->global_status & X86PMU_STATUS_LBR_FRZ) &&
           !x86pmu_defect(s, X86PMU_DEFECT_LBR_NOT_FROZEN);
}

static bool enabled(const X86PMUState *s)
{
    switch (s->cfg.lbr) {
    case X86PMU_LBR_LEGACY:
        return s->debugctl & X86PMU_DEBUGCTL_LBR;
    case X86PMU_LBR_ARCH:
        return (s->lbr_ctl & CTL_LBREN) && s->lbr_depth;
    case X86PMU_LBR_AMD_V2:
        return s->amd_dbg_extn_cfg & AMD_LBRV2EN;
    default:
        return false;
    }
}

bool x86pmu_lbr_recording(const X86PMUState *s)
{
    if (s->cfg.lbr == X86PMU_LBR_NONE || frozen(s)) {
        return false;
    }
    return enabled(s) ||
           x86pmu_defect(s, X86PMU_DEFECT_LBR_RECORDS_WHILE_DISABLED);
}

/*
 * The ring filters go by the privilege level a branch ends in.  Legacy
 * MSR_LBR_SELECT: CPL_EQ_0 suppresses branches ending in ring 0,
 * CPL_NEQ_0 those ending in ring > 0 (SDM vol. 3B, "Filtering of Last
 * Branch Records", the MSR_LBR_SELECT table, as Intel quotes it on LKML
 * in "perf/x86/intel: Fix kernel address leakages in LBR stack"; older
 * editions said "occurring in", open for a branch that changes the ring;
 * Linux's branch_type() takes a branch's ring from its target "as is done
 * by HW").  IA32_LBR_CTL.OS/USR: an operation that changes the CPL is
 * recorded only if the CPL at its end is enabled (SDM vol. 3B,
 * "Architectural Last Branch Records").  AMD: as legacy (Linux
 * amd/lbr.c).  So an interrupt out of ring 3 is no user-mode record, and
 * the IRET back to ring 3 is one.
 */
static bool ring_kept(const X86PMUState *s, unsigned cpl)
{
    if (s->cfg.lbr == X86PMU_LBR_ARCH) {
        return s->lbr_ctl & (cpl ? CTL_USR : CTL_OS);
    }
    return !(s->lbr_select & (cpl ? SEL_CPL_NEQ_0 : SEL_CPL_EQ_0));
}

/* Whether the filter keeps it: IA32_LBR_CTL enables, LBR_SELECT suppresses. */
static bool kept(const X86PMUState *s, X86PMUBranch kind, unsigned cpl_to)
{
    if (x86pmu_defect(s, X86PMU_DEFECT_LBR_FILTER_IGNORED)) {
        return true;
    }
    if (!ring_kept(s, cpl_to)) {
        return false;
    }
    if (s->cfg.lbr == X86PMU_LBR_ARCH) {
        return (s->lbr_ctl >> (CTL_TYPES_SHIFT + ctl_bit[kind])) & 1;
    }
    return !((s->lbr_select >> select_bit[kind]) & 1);
}

static bool call_stack_mode(const X86PMUState *s)
{
    if (s->cfg.lbr == X86PMU_LBR_ARCH) {
        return s->lbr_ctl & CTL_CALL_STACK;
    }
    return s->cfg.lbr == X86PMU_LBR_LEGACY && (s->lbr_select & SEL_CALL_STACK);
}

/* FROM as the legacy format lays it out: flags in the top bits. */
static uint64_t legacy_from(const X86PMUState *s, uint64_t from)
{
    switch (lbr_format(s)) {
    case 3:     /* 47:0 address, 62:48 sign extension, 63 MISPRED */
        return from & ~BIT64(63);
    case 4:     /* 60:0 address, 61 TSX_ABORT, 62 IN_TSX, 63 MISPRED */
        return from & (BIT64(61) - 1);
    default:
        return from;
    }
}

/* Newest entry at 0: the older ones move down one, the oldest drops. */
static void shift_in(X86PMUState *s, unsigned depth, uint64_t from,
                     uint64_t to, uint64_t info)
{
    if (!depth) {
        return;
    }
    memmove(&s->lbr_from[1], &s->lbr_from[0], (depth - 1) * sizeof(uint64_t));
    memmove(&s->lbr_to[1], &s->lbr_to[0], (depth - 1) * sizeof(uint64_t));
    memmove(&s->lbr_info[1], &s->lbr_info[0], (depth - 1) * sizeof(uint64_t));
    s->lbr_from[0] = from;
    s->lbr_to[0] = to;
    s->lbr_info[0] = info;
}

/* A return in call-stack mode: the newest entry leaves. */
static void shift_out(X86PMUState *s, unsigned depth)
{
    if (!depth) {
        return;
    }
    memmove(&s->lbr_from[0], &s->lbr_from[1], (depth - 1) * sizeof(uint64_t));
    memmove(&s->lbr_to[0], &s->lbr_to[1], (depth - 1) * sizeof(uint64_t));
    memmove(&s->lbr_info[0], &s->lbr_info[1], (depth - 1) * sizeof(uint64_t));
    s->lbr_from[depth - 1] = s->lbr_to[depth - 1] = s->lbr_info[depth - 1] = 0;
}

void x86pmu_branch(X86PMUState *s, X86PMUBranch kind, uint64_t from,
                   uint64_t to, unsigned cpl_from, unsigned cpl_to)
{
    unsigned depth = ring_depth(s);

    if (!x86pmu_lbr_recording(s) || !kept(s, kind, cpl_to) || !depth) {
        return;
    }
    /*
     * Architectural LBRs: a transfer from a CPL the filter leaves out to
     * one it records has FROM_IP 0FFFFFFFFFFFFFFFFH (SDM vol. 3B,
     * "Architectural Last Branch Records"): the IRET from ring 0 into a
     * user-only stack does not show the kernel's address.
     */
    if (s->cfg.lbr == X86PMU_LBR_ARCH && cpl_from != cpl_to &&
        !x86pmu_defect(s, X86PMU_DEFECT_LBR_FILTER_IGNORED) &&
        !ring_kept(s, cpl_from)) {
        from = ~0ull;
    }
    if (x86pmu_defect(s, X86PMU_DEFECT_LBR_FROM_TO_SWAPPED)) {
        uint64_t t = from;

        from = to;
        to = t;
    }
    /*
     * Call-stack mode: a near call pushes its record, a near return pops
     * the newest one and records nothing (SDM "Call Stack Profiling";
     * Linux lbr.c).  The mispredict bits, TSX flags and cycle counts are
     * not emulated: they read 0.
     */
    if (kind == X86PMU_BR_NEAR_RET && call_stack_mode(s)) {
        if (s->cfg.lbr == X86PMU_LBR_LEGACY) {
            s->lbr_tos = (s->lbr_tos + depth - 1) % depth;
        } else {
            shift_out(s, depth);
        }
        return;
    }
    switch (s->cfg.lbr) {
    case X86PMU_LBR_LEGACY:
        /* TOS moves to the new record (SDM, "LBR Stack"). */
        s->lbr_tos = (s->lbr_tos + 1) % depth;
        s->lbr_from[s->lbr_tos] = legacy_from(s, from);
        s->lbr_to[s->lbr_tos] = to;
        s->lbr_info[s->lbr_tos] = 0;
        break;
    case X86PMU_LBR_ARCH:
        shift_in(s, depth, from, to, 0);
        break;
    case X86PMU_LBR_AMD_V2:
        /*
         * FROM: 57:0 address, 62:58 sign extension, 63 mispredicted; TO:
         * 57:0 address, 60:58 sign extension, 62 speculative, 63 valid
         * (Linux amd/lbr.c, struct branch_entry).
         */
        shift_in(s, depth, from & ~BIT64(63),
                 (to & (BIT64(61) - 1)) | AMD_TO_VALID, 0);
        break;
    default:
        break;
    }
}

/*
 * The k-th most recent record as plain addresses, for the LBR group of an
 * adaptive PEBS record (0 past the stack).
 */
void x86pmu_lbr_entry(const X86PMUState *s, unsigned k, uint64_t *from,
                      uint64_t *to, uint64_t *info)
{
    unsigned depth = ring_depth(s), i;

    *from = *to = *info = 0;
    if (k >= depth) {
        return;
    }
    switch (s->cfg.lbr) {
    case X86PMU_LBR_LEGACY:
        i = (unsigned)((s->lbr_tos + depth - k) % depth);
        *from = lbr_format(s) == 3 || lbr_format(s) == 4 ?
                sext(s->lbr_from[i], lbr_format(s) == 3 ? 48 : 61) :
                s->lbr_from[i];
        *to = s->lbr_to[i];
        *info = s->lbr_info[i];
        break;
    case X86PMU_LBR_ARCH:
        *from = s->lbr_from[k];
        *to = s->lbr_to[k];
        *info = s->lbr_info[k];
        break;
    case X86PMU_LBR_AMD_V2:
        if (s->lbr_to[k] & AMD_TO_VALID) {
            *from = sext(s->lbr_from[k], 58);
            *to = sext(s->lbr_to[k], 58);
        }
        break;
    default:
        break;
    }
}
