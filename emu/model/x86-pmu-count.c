/* SPDX-License-Identifier: MIT */
/*
 * The x86 PMU model's counting: which counters count an event at a given
 * privilege level, CMASK/INV/EDGE cycle by cycle, overflow into
 * GLOBAL_STATUS, the PMI and freeze-on-PMI.
 *
 * Copyright (c) 2025 The pmutest authors
 */

#include <string.h>

#include "x86-pmu-int.h"

/*
 * Cycles a hypervisor spends on one VM exit that a "hybrid" freeze still
 * counts as guest cycles (VMware KB 344161, vpmc.freezeMode=hybrid): a
 * round trip of about 2 us at 4 GHz, the order of magnitude KVM and
 * VMware exits are measured at.
 */
#define HYBRID_FREEZE_EXIT_CYCLES 8000

/* Every counter index the model has: GP 0-9, fixed 0-6 (32-38). */
static const uint8_t all_idx[] = {
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 32, 33, 34, 35, 36, 37, 38,
};
#define FOR_EACH_IDX(pos, idx) \
    for (pos = 0; pos < sizeof(all_idx) && (idx = all_idx[pos], true); pos++)

/* A counter as the counting code sees it. */
typedef struct Ctr {
    uint64_t *value;
    unsigned width;
    X86PMUEvent ev;
    bool os, usr;           /* counts at CPL 0 / at CPL > 0 */
    bool intr;              /* PMI on overflow */
    unsigned cmask;
    bool inv, edge;
    bool eq;                /* version 6 EQ: CMASK compares for equality */
} Ctr;

/*
 * The SDM's architectural events (vol. 3B, "Pre-defined Architectural
 * Performance Events"), event select and unit mask, in CPUID.0AH:EBX bit
 * order; an event CPUID marks unavailable counts nothing here.  Events
 * 8-12 (top-down backend bound, bad speculation, frontend bound,
 * retiring; LBR inserts) as the KVM selftests' pmu_counters_test and
 * Linux's Skymont constraints encode them.
 */
static const struct {
    uint8_t event, umask;
} intel_arch_events[X86PMU_EV_NUM] = {
    [X86PMU_EV_CYCLES] = { 0x3c, 0x00 },
    [X86PMU_EV_INSTRUCTIONS] = { 0xc0, 0x00 },
    [X86PMU_EV_REF_CYCLES] = { 0x3c, 0x01 },
    [X86PMU_EV_LLC_REFS] = { 0x2e, 0x4f },
    [X86PMU_EV_LLC_MISSES] = { 0x2e, 0x41 },
    [X86PMU_EV_BRANCHES] = { 0xc4, 0x00 },
    [X86PMU_EV_BRANCH_MISSES] = { 0xc5, 0x00 },
    [X86PMU_EV_SLOTS] = { 0xa4, 0x01 },
    [X86PMU_EV_TD_BACKEND] = { 0xa4, 0x02 },
    [X86PMU_EV_TD_BAD_SPEC] = { 0x73, 0x00 },
    [X86PMU_EV_TD_FRONTEND] = { 0x9c, 0x01 },
    [X86PMU_EV_TD_RETIRING] = { 0xc2, 0x02 },
    [X86PMU_EV_LBR_INSERTS] = { 0xe4, 0x01 },
};

/*
 * An architectural event exists when CPUID.23H.3:EAX says so, where that
 * sub-leaf is valid (Linux and KVM prefer it: leaf 0AH is the hybrid
 * parts' common subset), else when CPUID.0AH:EBX does not rule it out.
 */
static bool arch_event_exists(const X86PMUState *s, unsigned e)
{
    if (s->cfg.leaf23 && s->cfg.leaf23_events) {
        return (s->cfg.events_avail23 >> e) & 1;
    }
    return e < s->cfg.events_len && !((s->cfg.events_unavail >> e) & 1);
}

/*
 * Model-specific events that count what the model counts exactly: retired
 * instructions under other names, and retired uops, which the model takes
 * as one per instruction (emu/qemu/README.md, "Cycle model").  Event and
 * unit mask per microarchitecture from the SDM vol. 3B event tables and
 * Intel's perfmon event files (NHM-EP, SNB, HSW, SKL, ICL):
 *   C0H/01H  Nehalem INST_RETIRED.ANY_P; Sandy Bridge to Skylake
 *            INST_RETIRED.PREC_DIST (retired instructions, the PEBS
 *            event Linux's precise cycles use with INV and CMASK=16,
 *            arch/x86/events/intel/core.c intel_pebs_aliases_precdist);
 *   C2H/01H  Nehalem UOPS_RETIRED.ANY; Sandy Bridge to Skylake
 *            UOPS_RETIRED.ALL (Linux intel_pebs_aliases_snb);
 *   C2H/02H  Nehalem UOPS_RETIRED.RETIRE_SLOTS; Sandy Bridge to Skylake
 *            UOPS_RETIRED.RETIRE_SLOTS; Ice Lake UOPS_RETIRED.SLOTS.
 * Ice Lake's INST_RETIRED.PREC_DIST is fixed counter 0 (event 00H/01H),
 * not a GP event.  Every other model-specific event counts nothing (not
 * emulated).
 */
static const struct {
    uint8_t event, umask;
    uint8_t uarchs;             /* bit X86PMU_UARCH_* */
} intel_uarch_events[] = {
    { 0xc0, 0x01, 1u << X86PMU_UARCH_NEHALEM | 1u << X86PMU_UARCH_SANDYBRIDGE |
                  1u << X86PMU_UARCH_SKYLAKE },
    { 0xc2, 0x01, 1u << X86PMU_UARCH_NEHALEM | 1u << X86PMU_UARCH_SANDYBRIDGE |
                  1u << X86PMU_UARCH_SKYLAKE },
    { 0xc2, 0x02, 1u << X86PMU_UARCH_NEHALEM | 1u << X86PMU_UARCH_SANDYBRIDGE |
                  1u << X86PMU_UARCH_SKYLAKE | 1u << X86PMU_UARCH_ICELAKE },
};

static X86PMUEvent intel_uarch_event(const X86PMUState *s, uint64_t sel)
{
    unsigned i;

    for (i = 0; i < sizeof(intel_uarch_events) /
                    sizeof(intel_uarch_events[0]); i++) {
        if (intel_uarch_events[i].event == SEL_EVENT(sel) &&
            intel_uarch_events[i].umask == SEL_UMASK(sel) &&
            !SEL_UMASK2(sel) &&
            ((intel_uarch_events[i].uarchs >> s->cfg.uarch) & 1) &&
            s->cfg.uarch != X86PMU_UARCH_NONE) {
            return X86PMU_EV_INSTRUCTIONS;
        }
    }
    return X86PMU_EV_NONE;
}

/*
 * Model-specific branch events, counted as each taken branch retires
 * (x86pmu_count_branch: the translator reports taken branches by kind).
 * Intel, BR_INST_RETIRED (SDM vol. 3B event tables; Intel perfmon files
 * NHM-EP, SNB, HSW, SKL, ICL): umask 02H NEAR_CALL from Nehalem, 08H
 * NEAR_RETURN and 20H NEAR_TAKEN from Sandy Bridge, the same encodings
 * through Ice Lake.  AMD: C4H retired taken branch instructions, "all
 * types of architectural control flow changes, including exceptions and
 * interrupts" (family 17h/19h PPRs, PMCx0C4; K8 and family 10h BKDGs),
 * and C8H retired near returns.  A conditional branch not taken is not
 * reported, so the events that count them (BR_INST_RETIRED.CONDITIONAL)
 * are not emulated.
 */
#define BR_NEAR_CALLS   (1u << X86PMU_BR_NEAR_REL_CALL | \
                         1u << X86PMU_BR_NEAR_IND_CALL)
#define BR_NEAR_ALL     (1u << X86PMU_BR_JCC | 1u << X86PMU_BR_NEAR_REL_JMP | \
                         1u << X86PMU_BR_NEAR_IND_JMP | BR_NEAR_CALLS | \
                         1u << X86PMU_BR_NEAR_RET)
#define U_FROM_NHM      (1u << X86PMU_UARCH_NEHALEM | U_FROM_SNB)
#define U_FROM_SNB      (1u << X86PMU_UARCH_SANDYBRIDGE | \
                         1u << X86PMU_UARCH_SKYLAKE | 1u << X86PMU_UARCH_ICELAKE)
#define AMD_ROW         0x80    /* the row is AMD's (uarchs unused) */

static const struct {
    uint16_t event;
    uint8_t umask, uarchs, kinds;
} branch_events[] = {
    { 0x0c4, 0x02, U_FROM_NHM, BR_NEAR_CALLS },
    { 0x0c4, 0x08, U_FROM_SNB, 1u << X86PMU_BR_NEAR_RET },
    { 0x0c4, 0x20, U_FROM_SNB, BR_NEAR_ALL },
    { 0x0c4, 0x00, AMD_ROW, BR_NEAR_ALL | 1u << X86PMU_BR_FAR },
    { 0x0c8, 0x00, AMD_ROW, 1u << X86PMU_BR_NEAR_RET },
};

static bool branch_row_applies(const X86PMUState *s, unsigned i)
{
    if (x86pmu_is_amd(s)) {
        return branch_events[i].uarchs == AMD_ROW;
    }
    return branch_events[i].uarchs != AMD_ROW &&
           ((branch_events[i].uarchs >> s->cfg.uarch) & 1);
}

/*
 * Whether a GP counter's select names one of the branch events.  Bits
 * 47:40 are Intel's UMASK2 (SDM vol. 3B, version 6 event select), but
 * AMD's HostOnly (41) and GuestOnly (40) (APM vol. 2, 13.2.1): KVM's
 * GuestOnly select names the same event.
 */
static bool is_branch_event(const X86PMUState *s, uint64_t sel)
{
    unsigned ev = SEL_EVENT(sel), i;

    if (x86pmu_is_amd(s) && s->cfg.family >= 0x10) {
        ev |= SEL_AMD_EVENT_HI(sel) << 8;
    }
    for (i = 0; i < sizeof(branch_events) / sizeof(branch_events[0]); i++) {
        if (branch_row_applies(s, i) && branch_events[i].event == ev &&
            branch_events[i].umask == SEL_UMASK(sel) &&
            (x86pmu_is_amd(s) || !SEL_UMASK2(sel))) {
            return true;
        }
    }
    return false;
}

unsigned x86pmu_count_branch(X86PMUState *s, X86PMURing ring,
                             X86PMUBranch kind)
{
    unsigned i, pmis = 0;

    for (i = 0; i < sizeof(branch_events) / sizeof(branch_events[0]); i++) {
        if (branch_row_applies(s, i) &&
            ((branch_events[i].kinds >> kind) & 1)) {
            pmis |= x86pmu_count_raw(s, ring, branch_events[i].event,
                                     branch_events[i].umask, 1);
        }
    }
    return pmis;
}

static X86PMUEvent intel_gp_event(const X86PMUState *s, uint64_t sel)
{
    unsigned e;

    for (e = 0; e < X86PMU_EV_NUM; e++) {
        /* A second unit mask (UMASK2) names another event. */
        if (intel_arch_events[e].event != SEL_EVENT(sel) ||
            intel_arch_events[e].umask != SEL_UMASK(sel) || SEL_UMASK2(sel)) {
            continue;
        }
        if (!arch_event_exists(s, e)) {
            /* Past EBX's length the encoding may be model-specific. */
            return e < s->cfg.events_len || s->cfg.leaf23 ?
                   X86PMU_EV_NONE : intel_uarch_event(s, sel);
        }
        if (e == X86PMU_EV_BRANCHES &&
            x86pmu_defect(s, X86PMU_DEFECT_BRANCHES_COUNT_INSTRUCTIONS)) {
            return X86PMU_EV_INSTRUCTIONS;
        }
        return (X86PMUEvent)e;
    }
    return intel_uarch_event(s, sel);
}

/*
 * AMD's events for the same names (APM vol. 2, 13.2, and the family PPRs'
 * core event tables): 0x76 CPU clocks not halted, 0xC0 retired
 * instructions, 0xC2 retired branch instructions, 0xC3 retired mispredicted
 * branch instructions, unit mask 0.
 */
static X86PMUEvent amd_event(const X86PMUState *s, uint64_t sel)
{
    unsigned ev = SEL_EVENT(sel);

    if (s->cfg.family >= 0x10) {
        ev |= SEL_AMD_EVENT_HI(sel) << 8;
    }
    if (SEL_UMASK(sel)) {
        return X86PMU_EV_NONE;
    }
    switch (ev) {
    case 0x076:
        return X86PMU_EV_CYCLES;
    case 0x0c0:
        return X86PMU_EV_INSTRUCTIONS;
    case 0x0c1:
        /*
         * Retired uops (K8 and family 10h BKDGs, EventSelect 0C1h), retired
         * ops (family 17h/19h PPRs, PMCx0C1): one per instruction in the
         * model.
         */
        return X86PMU_EV_INSTRUCTIONS;
    case 0x0c2:
        return x86pmu_defect(s, X86PMU_DEFECT_BRANCHES_COUNT_INSTRUCTIONS) ?
               X86PMU_EV_INSTRUCTIONS : X86PMU_EV_BRANCHES;
    case 0x0c3:
        return X86PMU_EV_BRANCH_MISSES;
    default:
        return X86PMU_EV_NONE;
    }
}

/*
 * IA32_FIXED_CTR0-3: instructions, core cycles, reference cycles, slots;
 * 4-6 (Atom-derived cores): top-down bad speculation, frontend bound,
 * retiring (Linux intel_skt_event_constraints: 0x0073, 0x019c, 0x02c2).
 */
static X86PMUEvent fixed_event(const X86PMUState *s, unsigned i)
{
    static const X86PMUEvent ev[X86PMU_MAX_FIXED] = {
        X86PMU_EV_INSTRUCTIONS, X86PMU_EV_CYCLES, X86PMU_EV_REF_CYCLES,
        X86PMU_EV_SLOTS, X86PMU_EV_TD_BAD_SPEC, X86PMU_EV_TD_FRONTEND,
        X86PMU_EV_TD_RETIRING,
    };

    if (i == 0 && x86pmu_defect(s, X86PMU_DEFECT_FIXED_CTR0_COUNTS_CYCLES)) {
        return X86PMU_EV_CYCLES;
    }
    if (i >= 4 && x86pmu_defect(s, X86PMU_DEFECT_TOPDOWN_FIXED_STUCK)) {
        return X86PMU_EV_NONE;
    }
    return ev[i];
}

static bool global_enabled(const X86PMUState *s, unsigned idx)
{
    if (x86pmu_defect(s, X86PMU_DEFECT_GLOBAL_CTRL_IGNORED)) {
        return true;
    }
    if (x86pmu_is_amd(s) ? !s->cfg.perfmon_v2 : s->cfg.version < 2) {
        return true;    /* no global control: EN alone */
    }
    return (s->global_ctrl >> idx) & 1;
}

/*
 * The counter `idx`, if it exists and its enables are set, whatever a
 * host scheduler does with it (the quirk below); false otherwise.
 */
static bool ctr_read(X86PMUState *s, unsigned idx, Ctr *c)
{
    memset(c, 0, sizeof(*c));
    if (x86pmu_frozen(s) || !global_enabled(s, idx)) {
        return false;
    }
    if (idx < X86PMU_MAX_GP) {
        uint64_t sel = s->gp_sel[idx];

        if (!x86pmu_gp_exists(s, idx) || !(sel & SEL_EN)) {
            return false;
        }
        if (x86pmu_is_amd(s) && !x86pmu_amd_host_guest_counts(s, sel)) {
            return false;
        }
        c->value = &s->gp_ctr[idx];
        c->width = x86pmu_gp_width(s);
        c->ev = x86pmu_is_amd(s) ? amd_event(s, sel) : intel_gp_event(s, sel);
        c->usr = sel & SEL_USR;
        c->os = sel & SEL_OS;
        c->intr = sel & SEL_INT;
        c->cmask = SEL_CMASK(sel);
        c->inv = sel & SEL_INV;
        c->edge = sel & SEL_EDGE;
        c->eq = !x86pmu_is_amd(s) && (sel & SEL_EQ);
        /*
         * A CMASK above what one cycle can retire (cfg.retire_width)
         * decides every cycle alike: with INV each cycle counts, as core
         * cycles do, without INV none.  Linux's precise cycles
         * (INST_RETIRED.PREC_DIST or UOPS_RETIRED.ALL with INV and
         * CMASK=16) are such a counter: counted as cycles, it needs no
         * cycle-by-cycle mode.  KVM's quirk of counting an emulated
         * instruction whatever CMASK says keeps the event as it is.
         */
        if (s->cfg.retire_width && c->cmask > s->cfg.retire_width &&
            !c->edge && !c->eq &&
            !x86pmu_quirk(s, X86PMU_QUIRK_KVM_EMULATED_WRMSR_IGNORES_CMASK) &&
            (c->ev == X86PMU_EV_INSTRUCTIONS || c->ev == X86PMU_EV_BRANCHES ||
             c->ev == X86PMU_EV_BRANCH_MISSES)) {
            c->ev = c->inv ? X86PMU_EV_CYCLES : X86PMU_EV_NONE;
            c->cmask = 0;
            c->inv = false;
        }
    } else {
        unsigned i = idx - X86PMU_FIXED_IDX(0);
        unsigned f = FIXED_FIELD(s->fixed_ctrl, i);

        if (!x86pmu_fixed_exists(s, i) || !(f & (FIXED_OS | FIXED_USR))) {
            return false;
        }
        c->value = &s->fixed_ctr[i];
        c->width = x86pmu_fixed_width(s);
        c->ev = fixed_event(s, i);
        c->usr = f & FIXED_USR;
        c->os = f & FIXED_OS;
        c->intr = (f & FIXED_PMI) &&
                  !x86pmu_defect(s, X86PMU_DEFECT_FIXED_PMI_BIT_IGNORED);
    }
    if (x86pmu_defect(s, X86PMU_DEFECT_USR_OS_SWAPPED)) {
        bool t = c->usr;

        c->usr = c->os;
        c->os = t;
    }
    return true;
}

/* The counter `idx`, if it exists and is enabled; false otherwise. */
static bool ctr_get(X86PMUState *s, unsigned idx, Ctr *c)
{
    if (!ctr_read(s, idx, c)) {
        return false;
    }
    /* The host's perf scheduler found no counter for this one. */
    if (idx == s->unsched_idx &&
        x86pmu_quirk(s, X86PMU_QUIRK_HOST_COUNTER_UNSCHEDULABLE)) {
        memset(c, 0, sizeof(*c));
        return false;
    }
    return true;
}

/*
 * The quirk "host counter unschedulable" (Linux arch/x86/kvm/pmu.c,
 * pmc_reprogram_counter: each guest counter is a pinned host perf event,
 * created when the guest enables it): the host's NMI watchdog holds a
 * cycles event, on FIXED_CTR1 where there is one (Intel) or on a GP
 * counter (AMD, or no fixed counters).  It can move to any GP counter,
 * so only a guest that enables every GP counter and FIXED_CTR1 (every GP
 * counter on AMD) asks for one counter more than the host has.  Linux
 * perf then refuses the event being added, not one already running: the
 * guest counter enabled last gets no host counter.  Several enabled by
 * one write are created in index order (KVM walks the changed enables
 * from bit 0), so the highest of them is the last.  Its count stays
 * frozen while the contention lasts.
 */
void x86pmu_sched_update(X86PMUState *s)
{
    uint64_t on = 0, want = 0;
    unsigned idx, pos, loser = 0xff;
    Ctr c;

    FOR_EACH_IDX(pos, idx) {
        if (ctr_read(s, idx, &c)) {
            on |= BIT64(idx);
        }
    }
    /* Enable order: newly enabled counters, in index order, come last. */
    FOR_EACH_IDX(pos, idx) {
        if (!(on & BIT64(idx))) {
            s->enable_seq[idx] = 0;
        } else if (!(s->enabled_bits & BIT64(idx))) {
            s->enable_seq[idx] = ++s->enable_next;
        }
    }
    s->enabled_bits = on;
    if (s->enable_next > 200) {     /* renumber, keeping the order */
        uint8_t n = 0;
        unsigned k;

        for (k = 1; k <= s->enable_next; k++) {
            FOR_EACH_IDX(pos, idx) {
                if (s->enable_seq[idx] == k) {
                    s->enable_seq[idx] = ++n;
                }
            }
        }
        s->enable_next = n;
    }
    want = x86pmu_counter_bits(s) & 0xffffffffull;
    if (!x86pmu_is_amd(s) && x86pmu_fixed_exists(s, 1)) {
        want |= BIT64(X86PMU_FIXED_IDX(1));
    }
    if (want && (on & want) == want) {
        uint8_t last = 0;

        FOR_EACH_IDX(pos, idx) {
            if ((want & BIT64(idx)) && s->enable_seq[idx] >= last) {
                last = s->enable_seq[idx];
                loser = idx;
            }
        }
    }
    s->unsched_idx = loser;
}

/*
 * The counter that counts an instruction which read or wrote the PMU, as
 * cfg.wrmsr_counted says, given `before`, the controls it started from
 * (NULL: counted by the counters enabled now).  A counter it disabled
 * counts it with the configuration it had.
 */
static bool ctr_pick(X86PMUState *s, X86PMUState *before, unsigned idx,
                     Ctr *c)
{
    bool now = ctr_get(s, idx, c), was;
    Ctr b;

    if (!before) {
        return now;
    }
    was = ctr_get(before, idx, &b);
    switch (s->cfg.wrmsr_counted) {
    case X86PMU_WRMSR_DISABLING:
        if (!was) {
            memset(c, 0, sizeof(*c));
            return false;
        }
        break;
    case X86PMU_WRMSR_BOTH:
        break;
    case X86PMU_WRMSR_NEITHER:
        return now && was;
    default:
        return now;
    }
    if (now) {
        return true;
    }
    if (!was) {
        return false;
    }
    *c = b;
    c->value = idx < X86PMU_MAX_GP ? &s->gp_ctr[idx] :
               &s->fixed_ctr[idx - X86PMU_FIXED_IDX(0)];
    return true;
}

/*
 * CMASK compares each cycle's event count with the mask, INV inverts the
 * comparison, EDGE counts the cycles where the result turns true (SDM
 * vol. 3B, "Architectural Performance Monitoring Version 1 Facilities";
 * APM vol. 2, 13.2, CntMask/Inv/Edge).  INV without CMASK has nothing to
 * invert; EDGE without CMASK watches "at least one event".
 */
static bool has_filters(const Ctr *c)
{
    return c->cmask || c->edge;
}

static bool ring_match(const Ctr *c, X86PMURing ring)
{
    return ring == X86PMU_RING_OS ? c->os : c->usr;
}

/*
 * A counter overflowed: status bit (none for a counter that reloads
 * itself), the counters it reloads, and whether it asks for a PMI.
 */
static void overflow(X86PMUState *s, unsigned idx, const Ctr *c, bool *pmi)
{
    bool has_status = x86pmu_is_amd(s) ? s->cfg.perfmon_v2 :
                      s->cfg.version >= 2;

    /* A PEBS counter's overflow owes a record instead (x86-pmu-pebs.c). */
    if (x86pmu_pebs_overflow(s, idx)) {
        return;
    }
    if (has_status && !x86pmu_defect(s, X86PMU_DEFECT_STATUS_BIT_NOT_SET) &&
        !x86pmu_acr_self(s, idx)) {
        s->global_status |= BIT64(idx);
    }
    x86pmu_acr_overflowed(s, idx);
    if (!c->intr || x86pmu_defect(s, X86PMU_DEFECT_PMI_NEVER_DELIVERED)) {
        return;
    }
    *pmi = true;
    if (x86pmu_defect(s, X86PMU_DEFECT_PMI_DELIVERED_TWICE)) {
        s->pmi_owed_bits |= BIT64(idx);
    }
}

static void add(X86PMUState *s, unsigned idx, const Ctr *c, uint64_t delta,
                bool *pmi, uint64_t *ovf)
{
    uint64_t mask = x86pmu_mask(c->width), old = *c->value & mask;
    bool wrapped;

    if (!delta) {
        return;
    }
    wrapped = delta > mask - old;
    *c->value = (old + delta) & mask;
    if (wrapped) {
        *ovf |= BIT64(idx);
    }
    if (!x86pmu_defect(s, X86PMU_DEFECT_OVERFLOW_ONE_EVENT_LATE)) {
        if (wrapped) {
            overflow(s, idx, c, pmi);
        }
        return;
    }
    /* The defect: overflow noticed at the event after the wrap. */
    if (wrapped && *c->value == 0) {
        s->late_bits |= BIT64(idx);
    } else if (wrapped || (s->late_bits & BIT64(idx))) {
        s->late_bits &= ~BIT64(idx);
        overflow(s, idx, c, pmi);
    }
}

/*
 * After an overflow with a PMI (counters `ovf` wrapped; 0 for PEBS's
 * buffer PMI): freeze-on-PMI, and the quirks' state.
 */
unsigned x86pmu_pmi_raised(X86PMUState *s, uint64_t ovf)
{
    unsigned idx, pos;

    /*
     * IA32_DEBUGCTL FREEZE_PERFMON_ON_PMI: before version 4 the PMI request
     * clears IA32_PERF_GLOBAL_CTRL's enables; from version 4 it sets
     * CTR_Frz in GLOBAL_STATUS and leaves GLOBAL_CTRL (SDM vol. 3B,
     * "IA32_DEBUGCTL MSR" and "Architectural Performance Monitoring
     * Version 4").  FREEZE_LBRS_ON_PMI likewise clears DEBUGCTL.LBR or
     * sets LBR_Frz.
     */
    if (x86pmu_is_amd(s)) {
        x86pmu_amd_pmi_freeze(s);
    } else if (s->cfg.version >= 2) {
        if ((s->debugctl & X86PMU_DEBUGCTL_FREEZE_PERFMON_ON_PMI) &&
            !x86pmu_defect(s, X86PMU_DEFECT_FREEZE_NOT_FREEZING)) {
            if (s->cfg.version >= 4) {
                s->global_status |= X86PMU_STATUS_CTR_FRZ;
            } else {
                s->global_ctrl = 0;
            }
            x86pmu_sched_update(s);
        }
        if (s->debugctl & X86PMU_DEBUGCTL_FREEZE_LBRS_ON_PMI) {
            if (s->cfg.version >= 4) {
                s->global_status |= X86PMU_STATUS_LBR_FRZ;
            } else {
                s->debugctl &= ~X86PMU_DEBUGCTL_LBR;
            }
        }
    }
    /*
     * Xen's PMI handler writes 1 into every counter that overflowed and
     * reads 0, on every Intel family 6 part ("QUIRK to workaround an issue
     * on various family 6 cpus": Xen xen/arch/x86/cpu/vpmu_intel.c,
     * handle_pmc_quirk).
     */
    if (x86pmu_quirk(s, X86PMU_QUIRK_XEN_PMC_ZERO_BECOMES_ONE)) {
        FOR_EACH_IDX(pos, idx) {
            uint64_t *v = idx < X86PMU_MAX_GP ? &s->gp_ctr[idx] :
                          &s->fixed_ctr[idx - X86PMU_FIXED_IDX(0)];

            if ((ovf & BIT64(idx)) && *v == 0) {
                *v = 1;
            }
        }
    }
    s->status_at_pmi = s->global_status;
    return 1;
}

/*
 * Events of event `ev` in one cycle with per[] events.  The top-down
 * events follow x86pmu_td_split when the model has a cycle's slots
 * (slots_per_cycle); without it (the host tests' harness) they come in
 * per[] like the others.
 */
static uint64_t per_cycle(const X86PMUState *s, X86PMUEvent ev,
                          const uint32_t per[X86PMU_EV_NUM])
{
    unsigned spc = s->cfg.slots_per_cycle;
    uint64_t td[4];

    switch (ev) {
    case X86PMU_EV_CYCLES:
        return 1;
    case X86PMU_EV_SLOTS:
        return spc;
    case X86PMU_EV_REF_CYCLES:
        return 0;   /* counted from the TSC, through x86pmu_count_bulk */
    case X86PMU_EV_TD_RETIRING:
    case X86PMU_EV_TD_BAD_SPEC:
    case X86PMU_EV_TD_FRONTEND:
    case X86PMU_EV_TD_BACKEND:
        if (!spc) {
            return per[ev];
        }
        x86pmu_td_split(s, 1, per[X86PMU_EV_INSTRUCTIONS],
                        per[X86PMU_EV_BRANCH_MISSES], td);
        return ev == X86PMU_EV_TD_RETIRING ? td[0] :
               ev == X86PMU_EV_TD_BAD_SPEC ? td[1] :
               ev == X86PMU_EV_TD_FRONTEND ? td[2] : td[3];
    default:
        return per[ev];
    }
}

/* PERF_METRICS' share of a span (x86-pmu-v6.c). */
static void metrics_add(X86PMUState *s, X86PMURing ring, const uint64_t t[])
{
    if (!x86pmu_metrics_counting(s, ring)) {
        return;
    }
    s->metrics[0] += t[X86PMU_EV_TD_RETIRING];
    s->metrics[1] += t[X86PMU_EV_TD_BAD_SPEC];
    s->metrics[2] += t[X86PMU_EV_TD_FRONTEND];
    s->metrics[3] += t[X86PMU_EV_TD_BACKEND];
}

/*
 * `ncycles` alike cycles at `ring`.  `emulated_insn`: the retire cycle of
 * an instruction KVM emulated, which it counts on every instructions
 * counter whatever CMASK/INV/EDGE say (Linux arch/x86/kvm/pmu.c,
 * kvm_pmu_trigger_event: "Ignore checks for edge detect, pin control,
 * invert and CMASK bits").  `before`: see ctr_pick.
 */
static unsigned count_span(X86PMUState *s, X86PMURing ring, uint64_t ncycles,
                           const uint32_t per[X86PMU_EV_NUM],
                           bool emulated_insn, X86PMUState *before)
{
    uint64_t t[X86PMU_EV_NUM];
    bool pmi = false;
    uint64_t ovf = 0;
    unsigned idx, pos, e;

    if (!ncycles) {
        return 0;
    }
    for (e = 0; e < X86PMU_EV_NUM; e++) {
        t[e] = per_cycle(s, (X86PMUEvent)e, per) * ncycles;
    }
    metrics_add(s, ring, t);
    FOR_EACH_IDX(pos, idx) {
        uint64_t k, delta;
        Ctr c;

        /*
         * Reference cycles come from the TSC (x86pmu_count_bulk), not from
         * the cycle model: with CMASK/INV/EDGE they count nothing, as the
         * model has no reference ticks per core cycle to compare.
         */
        if (!ctr_pick(s, before, idx, &c) || !ring_match(&c, ring) ||
            c.ev == X86PMU_EV_NONE || c.ev == X86PMU_EV_REF_CYCLES) {
            continue;
        }
        k = per_cycle(s, c.ev, per);
        if (!has_filters(&c)) {
            delta = k * ncycles;
        } else if (emulated_insn && c.ev == X86PMU_EV_INSTRUCTIONS) {
            delta = 1;
        } else {
            unsigned cm = c.cmask ? c.cmask : 1;
            /*
             * EQ: the cycle's count equals CMASK (inferred from Intel LKVS
             * zbit_test's WALK_ACTIVE_1 = CMASK 1 + EQ against CMASK 1's
             * "at least one"; the ISE text is not public).
             */
            bool cond = c.eq && c.cmask ? (k == cm) != c.inv :
                        c.inv ? k < cm : k >= cm;

            if (c.edge) {
                bool prev = (s->edge_prev >> idx) & 1;

                delta = cond && !prev;
                s->edge_prev = cond ? s->edge_prev | BIT64(idx) :
                                      s->edge_prev & ~BIT64(idx);
            } else {
                delta = cond ? ncycles : 0;
            }
        }
        add(s, idx, &c, delta, &pmi, &ovf);
    }
    x86pmu_acr_apply(s);
    return pmi ? x86pmu_pmi_raised(s, ovf) : 0;
}

unsigned x86pmu_count_cycles(X86PMUState *s, X86PMURing ring,
                             uint64_t ncycles,
                             const uint32_t per_cycle[X86PMU_EV_NUM])
{
    return count_span(s, ring, ncycles, per_cycle, false, NULL);
}

/*
 * TSC ticks per tick of the clock 3CH/01H counts on a GP counter: the
 * TSC itself from Golden Cove on (cfg.ref_at_tsc), else cfg.ref_ratio.
 */
static uint64_t gp_ref_ratio(const X86PMUState *s)
{
    return s->cfg.ref_at_tsc || s->cfg.ref_ratio < 1 ? 1 : s->cfg.ref_ratio;
}

/*
 * Ticks of the clock event 3CH/01H counts on a GP counter in `tsc` more
 * TSC ticks: one every gp_ref_ratio(), the phase carried over.
 */
static uint64_t gp_ref_ticks(X86PMUState *s, uint64_t tsc)
{
    uint64_t r = gp_ref_ratio(s);
    uint64_t t = s->ref_phase + tsc;

    s->ref_phase = t % r;
    return t / r;
}

unsigned x86pmu_count_bulk(X86PMUState *s, X86PMURing ring,
                           const uint64_t total[X86PMU_EV_NUM])
{
    uint64_t gp_ref = gp_ref_ticks(s, total[X86PMU_EV_REF_CYCLES]), ovf = 0;
    uint64_t t[X86PMU_EV_NUM], td[4];
    bool pmi = false;
    unsigned idx, pos;

    memcpy(t, total, sizeof(t));
    if (s->cfg.slots_per_cycle) {
        x86pmu_td_split(s, t[X86PMU_EV_CYCLES], t[X86PMU_EV_INSTRUCTIONS],
                        t[X86PMU_EV_BRANCH_MISSES], td);
        t[X86PMU_EV_TD_RETIRING] = td[0];
        t[X86PMU_EV_TD_BAD_SPEC] = td[1];
        t[X86PMU_EV_TD_FRONTEND] = td[2];
        t[X86PMU_EV_TD_BACKEND] = td[3];
    }
    metrics_add(s, ring, t);
    FOR_EACH_IDX(pos, idx) {
        Ctr c;

        if (!ctr_get(s, idx, &c) || !ring_match(&c, ring) ||
            c.ev == X86PMU_EV_NONE || has_filters(&c)) {
            continue;
        }
        /*
         * IA32_FIXED_CTR2 counts at the TSC's rate (SDM vol. 3B, "Cycle
         * Counting and Opportunistic Processor Operation"); 3CH/01H on a
         * GP counter counts the bus or crystal clock, a fixed fraction of
         * it (SDM vol. 3B, the architectural events table: "measures bus
         * cycles" on Core 2; Linux, Kan Liang, "perf/x86/intel: enable CPU
         * ref_cycles for GP counter", 2017: the ratio is in
         * MSR_PLATFORM_INFO from Nehalem, in CPUID.15H from Skylake, and
         * 1 from Goldmont), and the TSC again from Golden Cove on
         * (gp_ref_ratio).
         */
        if (c.ev == X86PMU_EV_REF_CYCLES && idx < X86PMU_MAX_GP) {
            add(s, idx, &c, gp_ref, &pmi, &ovf);
        } else {
            add(s, idx, &c, t[c.ev], &pmi, &ovf);
        }
    }
    x86pmu_acr_apply(s);
    return pmi ? x86pmu_pmi_raised(s, ovf) : 0;
}

unsigned x86pmu_count_raw(X86PMUState *s, X86PMURing ring, unsigned event,
                          unsigned umask, uint64_t n)
{
    uint64_t ovf = 0;
    bool pmi = false;
    unsigned x;

    for (x = 0; x < X86PMU_MAX_GP; x++) {
        uint64_t sel = s->gp_sel[x];
        unsigned ev = SEL_EVENT(sel);
        Ctr c;

        if (x86pmu_is_amd(s) && s->cfg.family >= 0x10) {
            ev |= SEL_AMD_EVENT_HI(sel) << 8;
        }
        if (ev != event || SEL_UMASK(sel) != umask || !ctr_get(s, x, &c) ||
            !ring_match(&c, ring) || has_filters(&c)) {
            continue;
        }
        add(s, x, &c, n, &pmi, &ovf);
    }
    x86pmu_acr_apply(s);
    return pmi ? x86pmu_pmi_raised(s, ovf) : 0;
}

void x86pmu_insn_begin(X86PMUState *s)
{
    memcpy(s->before.gp_sel, s->gp_sel, sizeof(s->gp_sel));
    s->before.fixed_ctrl = s->fixed_ctrl;
    s->before.global_ctrl = s->global_ctrl;
    s->before.global_status = s->global_status;
    s->before.unsched_idx = s->unsched_idx;
    s->before.valid = true;
}

unsigned x86pmu_count_insn(X86PMUState *s, X86PMURing ring,
                           const X86PMUInsn *insn)
{
    static const uint32_t quiet[X86PMU_EV_NUM];
    bool icpt = insn->flags & X86PMU_INSN_INTERCEPTED;
    X86PMUState b, *before = NULL;
    unsigned pmis = 0;

    if ((insn->flags & X86PMU_INSN_PMU_ACCESS) && s->before.valid) {
        b = *s;
        memcpy(b.gp_sel, s->before.gp_sel, sizeof(b.gp_sel));
        b.fixed_ctrl = s->before.fixed_ctrl;
        b.global_ctrl = s->before.global_ctrl;
        b.global_status = s->before.global_status;
        b.unsched_idx = s->before.unsched_idx;
        before = &b;
    }
    s->before.valid = false;
    /*
     * Xen emulates the intercepted instruction without counting it (its
     * vPMU loads GLOBAL_CTRL at VM entry: Xen xen/arch/x86/cpu/vpmu_intel.c).
     * RDPMC is not intercepted for an HVM guest (svm/vmcb.c construct_vmcb()
     * leaves GENERAL1_INTERCEPT_RDPMC clear; vmx/vmx.c handles no RDPMC
     * exit), so it runs and counts as on silicon.
     */
    if (icpt && !(insn->flags & X86PMU_INSN_RDPMC) &&
        x86pmu_quirk(s, X86PMU_QUIRK_XEN_EMULATED_WRMSR_NOT_COUNTED)) {
        return 0;
    }
    if (insn->cycles > 1) {
        pmis += count_span(s, ring, insn->cycles - 1, quiet, false, before);
    }
    pmis += count_span(s, ring, 1, insn->ev, icpt && x86pmu_quirk(s,
                       X86PMU_QUIRK_KVM_EMULATED_WRMSR_IGNORES_CMASK), before);
    /*
     * KVM between 9cd803d496e7 and 73554b29bd70 raised a PMI from its
     * emulation of the instruction and another from its perf overflow
     * path when both saw the overflow in one VM exit, with the LVT entry
     * left unmasked: the guest took the second after the first handler
     * returned ("KVM: x86: Synthesize at most one PMI per VM-exit", Jim
     * Mattson, 2023).  The model owes it for an overflow an intercepted
     * instruction causes, and raises it at the next PMU access, which the
     * first handler makes.
     */
    if (pmis && icpt && x86pmu_quirk(s, X86PMU_QUIRK_KVM_SPURIOUS_PMI)) {
        s->spurious_owed = true;
    }
    if (icpt && x86pmu_quirk(s, X86PMU_QUIRK_VMWARE_HYBRID_FREEZE)) {
        /*
         * Instructions and branches stop in the hypervisor; the rest
         * counts its work (VMware KB 344161).
         */
        uint64_t hv[X86PMU_EV_NUM] = { 0 };

        hv[X86PMU_EV_CYCLES] = HYBRID_FREEZE_EXIT_CYCLES;
        hv[X86PMU_EV_SLOTS] = (uint64_t)HYBRID_FREEZE_EXIT_CYCLES *
                              s->cfg.slots_per_cycle;
        pmis += x86pmu_count_bulk(s, ring, hv);
    }
    if (icpt && x86pmu_quirk(s, X86PMU_QUIRK_AMD_VMRUN_COUNTED |
                                X86PMU_QUIRK_SRF7_VM_EXIT_OVERCOUNT)) {
        /*
         * The VM entry after the exit retires in guest context as one more
         * instruction and branch.  AMD counts VMRUN as a branch in guest
         * context (kvm-unit-tests x86/pmu.c), and, as a far control
         * transfer counted in its target mode (AMD's Sandipan Das on LKML,
         * 2023-04-26), as an instruction too: an inference.  Atom cores
         * overcount both on VM entry/exit (erratum SRF7).  Asynchronous
         * exits (host interrupts) add more, at times no guest can see: not
         * modelled.
         */
        uint32_t one[X86PMU_EV_NUM] = { 0 };

        one[X86PMU_EV_INSTRUCTIONS] = 1;
        one[X86PMU_EV_BRANCHES] = 1;
        pmis += count_span(s, ring, 1, one, false, NULL);
    }
    return pmis ? 1 : 0;
}

unsigned x86pmu_owed_pmis(X86PMUState *s)
{
    unsigned n = s->spurious_owed ? 1 : 0;

    s->spurious_owed = false;
    return n;
}

X86PMUActivity x86pmu_activity(const X86PMUState *s)
{
    X86PMUActivity a = { 0 };
    X86PMUState *w = (X86PMUState *)s;  /* ctr_get only reads here */
    unsigned idx, pos;

    FOR_EACH_IDX(pos, idx) {
        Ctr c;

        if (!ctr_get(w, idx, &c) || !(c.os || c.usr)) {
            continue;
        }
        a.any = true;
        if (c.ev != X86PMU_EV_NONE) {
            a.events |= 1u << c.ev;
            a.filters |= has_filters(&c) && c.ev != X86PMU_EV_REF_CYCLES;
        } else if (idx < X86PMU_MAX_GP &&
                   x86pmu_offcore_slot(s, s->gp_sel[idx]) >= 0) {
            a.offcore = true;
        } else if (idx < X86PMU_MAX_GP && is_branch_event(s, s->gp_sel[idx])) {
            a.branch_kinds = true;
        }
    }
    /* Bad speculation, and PERF_METRICS with it, needs the predictor. */
    if ((a.events & 1u << X86PMU_EV_TD_BAD_SPEC) ||
        x86pmu_metrics_counting(s, X86PMU_RING_OS) ||
        x86pmu_metrics_counting(s, X86PMU_RING_USR)) {
        a.events |= 1u << X86PMU_EV_BRANCH_MISSES;
    }
    return a;
}

/* Events one core cycle can add to a counter of event `ev`. */
static uint64_t max_per_cycle(const X86PMUState *s, const Ctr *c)
{
    if (has_filters(c)) {
        return 1;
    }
    switch (c->ev) {
    case X86PMU_EV_LLC_REFS:
    case X86PMU_EV_LLC_MISSES:
        return 4;   /* two accesses, each may split across two lines */
    case X86PMU_EV_SLOTS:
    case X86PMU_EV_TD_BACKEND:
        return s->cfg.slots_per_cycle ? s->cfg.slots_per_cycle : 1;
    default:
        return 1;
    }
}

static uint64_t headroom_of(const X86PMUState *s, bool ref)
{
    X86PMUState *w = (X86PMUState *)s;
    uint64_t best = UINT64_MAX;
    unsigned idx, pos;

    FOR_EACH_IDX(pos, idx) {
        uint64_t mask, left;
        Ctr c;

        if (!ctr_get(w, idx, &c) || !(c.os || c.usr)) {
            continue;
        }
        /* Offcore events come at most four a cycle, as LLC references. */
        if (c.ev == X86PMU_EV_NONE && !ref && idx < X86PMU_MAX_GP &&
            x86pmu_offcore_slot(s, s->gp_sel[idx]) >= 0) {
            c.ev = X86PMU_EV_LLC_REFS;
        }
        if (c.ev == X86PMU_EV_NONE || (c.ev == X86PMU_EV_REF_CYCLES) != ref) {
            continue;
        }
        if (s->late_bits & BIT64(idx)) {
            return 0;
        }
        /* Events that can be added without wrapping. */
        mask = x86pmu_mask(c.width);
        left = mask - (*c.value & mask);
        if (!ref) {
            left = left / max_per_cycle(s, &c);
        } else if (has_filters(&c)) {
            continue;   /* counts nothing */
        } else if (idx < X86PMU_MAX_GP && gp_ref_ratio(s) > 1) {
            /* TSC ticks before the (left + 1)th tick of the GP clock. */
            uint64_t r = gp_ref_ratio(s);

            left = left >= UINT64_MAX / r - 1 ? UINT64_MAX - 1 :
                   (left + 1) * r - s->ref_phase - 1;
        }
        if (left < best) {
            best = left;
        }
    }
    return best;
}

uint64_t x86pmu_headroom(const X86PMUState *s)
{
    return headroom_of(s, false);
}

uint64_t x86pmu_ref_headroom(const X86PMUState *s)
{
    return headroom_of(s, true);
}

X86PMUDelivery x86pmu_delivery(const X86PMUState *s)
{
    X86PMUDelivery d = { 0 };

    /*
     * Intel: "When a performance monitoring counters interrupt is
     * generated, the mask bit for its associated LVT entry is set" (SDM
     * vol. 3A, "Local Vector Table"; vol. 3B, "Generating an Interrupt on
     * Overflow").  AMD's APIC does not; KVM masks for Intel guests only
     * (Linux arch/x86/kvm/lapic.c, kvm_apic_local_deliver).  A KVM without
     * that fix delivered PMIs unmasked, and a second one.
     */
    d.mask_lvt = !x86pmu_is_amd(s) &&
                 !x86pmu_defect(s, X86PMU_DEFECT_LVTPC_MASK_NOT_SET) &&
                 !x86pmu_defect(s, X86PMU_DEFECT_PMI_DELIVERED_TWICE) &&
                 !x86pmu_quirk(s, X86PMU_QUIRK_KVM_SPURIOUS_PMI);
    d.force_fixed = x86pmu_defect(s, X86PMU_DEFECT_NMI_DELIVERED_AS_FIXED);
    return d;
}
