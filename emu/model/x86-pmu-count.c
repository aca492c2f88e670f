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

/* Every counter index the model has: GP 0-7, fixed 0-3 (32-35). */
static const uint8_t all_idx[] = {
    0, 1, 2, 3, 4, 5, 6, 7, 32, 33, 34, 35,
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
} Ctr;

/*
 * The SDM's architectural events (vol. 3B, "Pre-defined Architectural
 * Performance Events"), event select and unit mask, in CPUID.0AH:EBX bit
 * order; an event CPUID marks unavailable counts nothing here.
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
};

static X86PMUEvent intel_gp_event(const X86PMUState *s, uint64_t sel)
{
    unsigned e;

    for (e = 0; e < X86PMU_EV_NUM; e++) {
        if (intel_arch_events[e].event != SEL_EVENT(sel) ||
            intel_arch_events[e].umask != SEL_UMASK(sel)) {
            continue;
        }
        if (e >= s->cfg.events_len || ((s->cfg.events_unavail >> e) & 1)) {
            return X86PMU_EV_NONE;
        }
        if (e == X86PMU_EV_BRANCHES &&
            x86pmu_defect(s, X86PMU_DEFECT_BRANCHES_COUNT_INSTRUCTIONS)) {
            return X86PMU_EV_INSTRUCTIONS;
        }
        return (X86PMUEvent)e;
    }
    return X86PMU_EV_NONE;
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
    case 0x0c2:
        return x86pmu_defect(s, X86PMU_DEFECT_BRANCHES_COUNT_INSTRUCTIONS) ?
               X86PMU_EV_INSTRUCTIONS : X86PMU_EV_BRANCHES;
    case 0x0c3:
        return X86PMU_EV_BRANCH_MISSES;
    default:
        return X86PMU_EV_NONE;
    }
}

/* IA32_FIXED_CTR0-3: instructions, core cycles, reference cycles, slots. */
static X86PMUEvent fixed_event(const X86PMUState *s, unsigned i)
{
    static const X86PMUEvent ev[X86PMU_MAX_FIXED] = {
        X86PMU_EV_INSTRUCTIONS, X86PMU_EV_CYCLES, X86PMU_EV_REF_CYCLES,
        X86PMU_EV_SLOTS,
    };

    if (i == 0 && x86pmu_defect(s, X86PMU_DEFECT_FIXED_CTR0_COUNTS_CYCLES)) {
        return X86PMU_EV_CYCLES;
    }
    return ev[i];
}

static bool frozen(const X86PMUState *s)
{
    /* Version 4: CTR_Frz stops every counter until software clears it. */
    return !x86pmu_is_amd(s) && s->cfg.version >= 4 &&
           (s->global_status & X86PMU_STATUS_CTR_FRZ);
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

/* The counter `idx`, if it exists and is enabled; false otherwise. */
static bool ctr_get(X86PMUState *s, unsigned idx, Ctr *c)
{
    memset(c, 0, sizeof(*c));
    if (frozen(s) || !global_enabled(s, idx)) {
        return false;
    }
    if (idx < X86PMU_MAX_GP) {
        uint64_t sel = s->gp_sel[idx];
        unsigned last = 0, x;

        if (!x86pmu_gp_exists(s, idx) || !(sel & SEL_EN)) {
            return false;
        }
        /* A host perf user holds one counter: the guest's never runs. */
        for (x = 0; x < X86PMU_MAX_GP; x++) {
            if (x86pmu_gp_exists(s, x)) {
                last = x;
            }
        }
        if (idx == last &&
            x86pmu_quirk(s, X86PMU_QUIRK_HOST_COUNTER_UNSCHEDULABLE)) {
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

/* A counter overflowed: status bit, and whether it asks for a PMI. */
static void overflow(X86PMUState *s, unsigned idx, const Ctr *c, bool *pmi)
{
    bool has_status = x86pmu_is_amd(s) ? s->cfg.perfmon_v2 :
                      s->cfg.version >= 2;

    /* A PEBS counter's overflow owes a record instead (x86-pmu-pebs.c). */
    if (x86pmu_pebs_overflow(s, idx)) {
        return;
    }
    if (has_status && !x86pmu_defect(s, X86PMU_DEFECT_STATUS_BIT_NOT_SET)) {
        s->global_status |= BIT64(idx);
    }
    if (!c->intr || x86pmu_defect(s, X86PMU_DEFECT_PMI_NEVER_DELIVERED)) {
        return;
    }
    *pmi = true;
    if (x86pmu_defect(s, X86PMU_DEFECT_PMI_DELIVERED_TWICE)) {
        s->pmi_owed_bits |= BIT64(idx);
    }
}

static void add(X86PMUState *s, unsigned idx, const Ctr *c, uint64_t delta,
                bool *pmi)
{
    uint64_t mask = x86pmu_mask(c->width), old = *c->value & mask;
    bool wrapped;

    if (!delta) {
        return;
    }
    wrapped = delta > mask - old;
    *c->value = (old + delta) & mask;
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

/* After an overflow with a PMI: freeze-on-PMI, and the quirks' state. */
unsigned x86pmu_pmi_raised(X86PMUState *s)
{
    /*
     * IA32_DEBUGCTL FREEZE_PERFMON_ON_PMI: before version 4 the PMI request
     * clears IA32_PERF_GLOBAL_CTRL's enables; from version 4 it sets
     * CTR_Frz in GLOBAL_STATUS and leaves GLOBAL_CTRL (SDM vol. 3B,
     * "IA32_DEBUGCTL MSR" and "Architectural Performance Monitoring
     * Version 4").  FREEZE_LBRS_ON_PMI likewise clears DEBUGCTL.LBR or
     * sets LBR_Frz.
     */
    if (!x86pmu_is_amd(s) && s->cfg.version >= 2) {
        if ((s->debugctl & X86PMU_DEBUGCTL_FREEZE_PERFMON_ON_PMI) &&
            !x86pmu_defect(s, X86PMU_DEFECT_FREEZE_NOT_FREEZING)) {
            if (s->cfg.version >= 4) {
                s->global_status |= X86PMU_STATUS_CTR_FRZ;
            } else {
                s->global_ctrl = 0;
            }
        }
        if (s->debugctl & X86PMU_DEBUGCTL_FREEZE_LBRS_ON_PMI) {
            if (s->cfg.version >= 4) {
                s->global_status |= X86PMU_STATUS_LBR_FRZ;
            } else {
                s->debugctl &= ~X86PMU_DEBUGCTL_LBR;
            }
        }
    }
    s->status_at_pmi = s->global_status;
    if (x86pmu_quirk(s, X86PMU_QUIRK_KVM_SPURIOUS_PMI)) {
        s->spurious_owed = true;
    }
    return 1;
}

/*
 * `ncycles` alike cycles at `ring`.  `emulated_insn`: the retire cycle of
 * an instruction KVM emulated, which it counts on every instructions
 * counter whatever CMASK/INV/EDGE say (Linux arch/x86/kvm/pmu.c,
 * kvm_pmu_trigger_event: "Ignore checks for edge detect, pin control,
 * invert and CMASK bits").
 */
static unsigned count_span(X86PMUState *s, X86PMURing ring, uint64_t ncycles,
                           const uint32_t per[X86PMU_EV_NUM],
                           bool emulated_insn)
{
    bool pmi = false;
    unsigned idx, pos;

    if (!ncycles) {
        return 0;
    }
    FOR_EACH_IDX(pos, idx) {
        uint64_t k, delta;
        Ctr c;

        if (!ctr_get(s, idx, &c) || !ring_match(&c, ring) ||
            c.ev == X86PMU_EV_NONE) {
            continue;
        }
        /* Cycles and slots happen in every cycle; the rest as given. */
        if (c.ev == X86PMU_EV_CYCLES) {
            k = 1;
        } else if (c.ev == X86PMU_EV_SLOTS) {
            k = s->cfg.slots_per_cycle;
        } else if (c.ev == X86PMU_EV_REF_CYCLES) {
            k = 0;      /* counted from the TSC, through x86pmu_count_bulk */
        } else {
            k = per[c.ev];
        }
        if (!has_filters(&c)) {
            delta = k * ncycles;
        } else if (emulated_insn && c.ev == X86PMU_EV_INSTRUCTIONS) {
            delta = 1;
        } else {
            unsigned cm = c.cmask ? c.cmask : 1;
            bool cond = c.inv ? k < cm : k >= cm;

            if (c.edge) {
                bool prev = (s->edge_prev >> idx) & 1;

                delta = cond && !prev;
                s->edge_prev = cond ? s->edge_prev | BIT64(idx) :
                                      s->edge_prev & ~BIT64(idx);
            } else {
                delta = cond ? ncycles : 0;
            }
        }
        add(s, idx, &c, delta, &pmi);
    }
    return pmi ? x86pmu_pmi_raised(s) : 0;
}

unsigned x86pmu_count_cycles(X86PMUState *s, X86PMURing ring,
                             uint64_t ncycles,
                             const uint32_t per_cycle[X86PMU_EV_NUM])
{
    return count_span(s, ring, ncycles, per_cycle, false);
}

unsigned x86pmu_count_bulk(X86PMUState *s, X86PMURing ring,
                           const uint64_t total[X86PMU_EV_NUM])
{
    bool pmi = false;
    unsigned idx, pos;

    FOR_EACH_IDX(pos, idx) {
        Ctr c;

        if (!ctr_get(s, idx, &c) || !ring_match(&c, ring) ||
            c.ev == X86PMU_EV_NONE || has_filters(&c)) {
            continue;
        }
        add(s, idx, &c, total[c.ev], &pmi);
    }
    return pmi ? x86pmu_pmi_raised(s) : 0;
}

unsigned x86pmu_count_raw(X86PMUState *s, X86PMURing ring, unsigned event,
                          unsigned umask, uint64_t n)
{
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
        add(s, x, &c, n, &pmi);
    }
    return pmi ? x86pmu_pmi_raised(s) : 0;
}

unsigned x86pmu_count_insn(X86PMUState *s, X86PMURing ring,
                           const X86PMUInsn *insn)
{
    static const uint32_t quiet[X86PMU_EV_NUM];
    bool icpt = insn->flags & X86PMU_INSN_INTERCEPTED;
    unsigned pmis = 0;

    /*
     * Xen emulates the intercepted instruction without counting it (its
     * vPMU loads GLOBAL_CTRL at VM entry: Xen xen/arch/x86/cpu/vpmu_intel.c).
     */
    if (icpt && x86pmu_quirk(s, X86PMU_QUIRK_XEN_EMULATED_WRMSR_NOT_COUNTED)) {
        return 0;
    }
    if (insn->cycles > 1) {
        pmis += count_span(s, ring, insn->cycles - 1, quiet, false);
    }
    pmis += count_span(s, ring, 1, insn->ev, icpt && x86pmu_quirk(s,
                       X86PMU_QUIRK_KVM_EMULATED_WRMSR_IGNORES_CMASK));
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
         * instruction and branch: AMD counts VMRUN (kvm-unit-tests
         * x86/pmu.c), Atom cores overcount VM entry/exit (erratum SRF7).
         */
        uint32_t one[X86PMU_EV_NUM] = { 0 };

        one[X86PMU_EV_INSTRUCTIONS] = 1;
        one[X86PMU_EV_BRANCHES] = 1;
        pmis += count_span(s, ring, 1, one, false);
    }
    return pmis ? 1 : 0;
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
            a.filters |= has_filters(&c);
        }
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

        if (!ctr_get(w, idx, &c) || !(c.os || c.usr) ||
            c.ev == X86PMU_EV_NONE || (c.ev == X86PMU_EV_REF_CYCLES) != ref) {
            continue;
        }
        if (s->late_bits & BIT64(idx)) {
            return 0;
        }
        /* Events that can be added without wrapping. */
        mask = x86pmu_mask(c.width);
        left = mask - (*c.value & mask);
        left = ref ? left : left / max_per_cycle(s, &c);
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
