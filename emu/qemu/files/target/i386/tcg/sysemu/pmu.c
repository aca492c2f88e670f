/*
 * The emulated performance-monitoring unit under TCG (-cpu MODEL,pmu=on).
 *
 * The PMU's registers and rules live in the register model x86-pmu*.c
 * (from pmutest's emu/model, MIT).  This file is QEMU's side of it: the
 * shape from the CPU model and the pmu-* properties, the events that
 * translated code accounts (translate.c), when they are folded into the
 * model, the reference-cycles clock, and the PMI through the local APIC.
 * pmutest's emu/qemu/README.md states the counting conventions.
 *
 * Copyright (c) 2025 The pmutest authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "qapi/error.h"
#include "cpu.h"
#include "exec/exec-all.h"
#include "exec/helper-proto.h"
#include "hw/i386/apic.h"
#include "tcg/helper-tcg.h"
#include "pmu-sim.h"

/*
 * Step mode (one instruction per TB, each folded on its own) ends when
 * every counter is this many cycles from overflowing: long TBs then do
 * not bounce straight back into it.
 */
#define PMU_STEP_LEAVE      4096
/* Fast mode folds at least this often, so accounting never wraps. */
#define PMU_COUNTDOWN_MAX   (1ll << 40)
/* Step mode: every TB start calls the helper. */
#define PMU_COUNTDOWN_STEP  (INT64_MIN / 2)

/* --- Realize and reset --- */

static bool prop_set(int32_t v)
{
    return v >= 0;
}

/* The model's shape for this CPU, the properties applied on top. */
static bool pmu_config(X86CPU *cpu, const char *model, X86PMUConfig *c,
                       Error **errp)
{
    CPUX86State *env = &cpu->env;
    /* AMD and Hygon ("Hygo...") count the AMD way. */
    bool amd = IS_AMD_CPU(env) || env->cpuid_vendor1 == 0x6f677948;
    X86PMUVendor vendor = amd ? X86PMU_VENDOR_AMD : X86PMU_VENDOR_INTEL;
    uint32_t v = env->cpuid_version;
    /* DisplayFamily and DisplayModel (SDM vol. 2A, CPUID leaf 01H). */
    uint32_t family = ((v >> 8) & 0xf) == 0xf ? 0xf + ((v >> 20) & 0xff) :
                      (v >> 8) & 0xf;
    uint32_t fmodel = ((v >> 4) & 0xf) |
                      (family == 6 || family >= 0xf ? (v >> 12) & 0xf0 : 0);
    struct X86PMUProps *p = &cpu->pmu_prop;
    const char *why;

    if (!x86pmu_shape(model, vendor, family, fmodel, c) &&
        (vendor == X86PMU_VENDOR_AMD || !prop_set(p->version))) {
        error_setg(errp, "pmu=on: no PMU shape for CPU model '%s' (family "
                   "0x%x model 0x%x); pick one from pmutest's emu/qemu/"
                   "README.md or set pmu-version and the other pmu-* "
                   "properties", model ? model : "?", family, fmodel);
        return false;
    }
    if (vendor == X86PMU_VENDOR_AMD &&
        (prop_set(p->version) || prop_set(p->num_fixed) ||
         prop_set(p->fixed_width) || p->fixed_bitmap != UINT64_MAX ||
         prop_set(p->events_len) || p->events_unavail != UINT64_MAX ||
         p->perf_caps != UINT64_MAX || p->fw_writes != ON_OFF_AUTO_AUTO ||
         p->pdcm != ON_OFF_AUTO_AUTO)) {
        error_setg(errp, "pmu-version/pmu-fixed*/pmu-events-*/pmu-perf-caps/"
                   "pmu-fw-writes/pmu-pdcm: Intel properties on an AMD CPU");
        return false;
    }
    if (vendor == X86PMU_VENDOR_INTEL &&
        (p->perfctr_core != ON_OFF_AUTO_AUTO ||
         p->perfmon_v2 != ON_OFF_AUTO_AUTO)) {
        error_setg(errp, "pmu-perfctr-core/pmu-perfmon-v2: AMD properties "
                   "on an Intel CPU");
        return false;
    }
    if (prop_set(p->version)) {
        c->version = p->version;
    }
    if (prop_set(p->num_gp)) {
        c->num_gp = p->num_gp;
    }
    if (prop_set(p->gp_width)) {
        c->gp_width = p->gp_width;
    }
    if (prop_set(p->num_fixed)) {
        c->num_fixed = p->num_fixed;
    }
    if (prop_set(p->fixed_width)) {
        c->fixed_width = p->fixed_width;
    }
    if (p->fixed_bitmap != UINT64_MAX) {
        c->fixed_bitmap = p->fixed_bitmap;
    }
    if (prop_set(p->events_len)) {
        c->events_len = p->events_len;
    }
    if (p->events_unavail != UINT64_MAX) {
        c->events_unavail = p->events_unavail;
    }
    if (p->pdcm != ON_OFF_AUTO_AUTO) {
        c->pdcm = p->pdcm == ON_OFF_AUTO_ON;
    }
    if (p->perf_caps != UINT64_MAX) {
        /* The LBR and PEBS bits stay the shape's: pmu-lbr* and pmu-pebs*. */
        c->perf_caps = (c->perf_caps & X86PMU_CAP_LBR_PEBS_MASK) | p->perf_caps;
    }
    if (p->fw_writes != ON_OFF_AUTO_AUTO) {
        c->perf_caps &= ~X86PMU_CAP_FW_WRITE;
        c->perf_caps |= p->fw_writes == ON_OFF_AUTO_ON ?
                        X86PMU_CAP_FW_WRITE : 0;
    }
    if (p->perfctr_core != ON_OFF_AUTO_AUTO) {
        c->perfctr_core = p->perfctr_core == ON_OFF_AUTO_ON;
    }
    if (p->perfmon_v2 != ON_OFF_AUTO_AUTO) {
        c->perfmon_v2 = p->perfmon_v2 == ON_OFF_AUTO_ON;
    }
    if (prop_set(p->slots_per_cycle)) {
        c->slots_per_cycle = p->slots_per_cycle;
    }
    if (!x86_pmu_lbr_pebs_config(c, p, errp)) {
        return false;
    }
    if (p->quirks && *p->quirks) {
        const char *bad;
        unsigned len;

        if (!x86pmu_parse_quirks(p->quirks, &c->quirks, &bad, &len)) {
            g_autoptr(GString) known = g_string_new("");
            unsigned q;

            for (q = 0; x86pmu_quirk_name(q); q++) {
                g_string_append_printf(known, " %s", x86pmu_quirk_name(q));
            }
            error_setg(errp, "pmu-quirks: unknown quirk '%.*s'; known:%s",
                       (int)len, bad, known->str);
            return false;
        }
    }
    if (p->defect && *p->defect &&
        !x86pmu_parse_defect(p->defect, &c->defect)) {
        g_autoptr(GString) known = g_string_new("");
        unsigned d;

        for (d = 1; x86pmu_defect_name(d); d++) {
            g_string_append_printf(known, " %s", x86pmu_defect_name(d));
        }
        error_setg(errp, "pmu-defect: unknown defect '%s'; known:%s",
                   p->defect, known->str);
        return false;
    }
    why = x86pmu_config_check(c);
    if (why) {
        error_setg(errp, "%s", why);
        return false;
    }
    return true;
}

static void pmu_ref_timer_cb(void *opaque);

/*
 * The host TSC rate, for arming the reference-cycles timer: ticks per
 * nanosecond, measured since the first vCPU with a PMU was realized.
 */
static uint64_t tsc_origin, ns_origin;

static double tsc_per_ns(void)
{
    uint64_t dt = cpu_get_host_ticks() - tsc_origin;
    int64_t dn = qemu_clock_get_ns(QEMU_CLOCK_REALTIME) - ns_origin;

    return dn > 1000000 ? (double)dt / dn : 1.0;
}

bool x86_pmu_realize(X86CPU *cpu, const char *model, Error **errp)
{
    X86PMUConfig c;

    if (!pmu_config(cpu, model, &c, errp)) {
        return false;
    }
    cpu->pmu_cfg = c;
    cpu->pmu_tcg = true;
    /* CPUID Fn8000_0022 (PerfMonV2) must be reachable. */
    if (c.vendor == X86PMU_VENDOR_AMD && c.perfmon_v2) {
        cpu->env.cpuid_min_xlevel = MAX(cpu->env.cpuid_min_xlevel,
                                        0x80000022);
    }
    /* CPUID.0AH must be reachable, and 1CH for architectural LBRs. */
    if (c.vendor == X86PMU_VENDOR_INTEL && c.version) {
        cpu->env.cpuid_min_level = MAX(cpu->env.cpuid_min_level, 0xa);
    }
    if (c.lbr == X86PMU_LBR_ARCH) {
        cpu->env.cpuid_min_level = MAX(cpu->env.cpuid_min_level, 0x1c);
    }
    cpu->pmu_ref_timer = timer_new_ns(QEMU_CLOCK_REALTIME, pmu_ref_timer_cb,
                                      cpu);
    if (!tsc_origin) {
        tsc_origin = cpu_get_host_ticks();
        ns_origin = qemu_clock_get_ns(QEMU_CLOCK_REALTIME);
    }
    return true;
}

static void pmu_update(CPUX86State *env);

void x86_pmu_reset(X86CPU *cpu)
{
    CPUX86State *env = &cpu->env;

    x86pmu_reset(&env->pmu, &cpu->pmu_cfg);
    memset(env->pmu_acc, 0, sizeof(env->pmu_acc));
    env->pmu_ref_mark = cpu_get_tsc(env);
    env->hflags &= ~HF_PMU_ALL_MASK;
    pmu_update(env);
}

void x86_pmu_cpuid(CPUX86State *env, uint32_t leaf, uint32_t subleaf,
                   uint32_t *eax, uint32_t *ebx, uint32_t *ecx,
                   uint32_t *edx)
{
    x86pmu_cpuid(&env->pmu, leaf, subleaf, eax, ebx, ecx, edx);
}

/* --- Folding the accounting into the model --- */

static X86PMURing ring_of(uint32_t hflags)
{
    return (hflags & HF_CPL_MASK) ? X86PMU_RING_USR : X86PMU_RING_OS;
}

/*
 * The defect "counts leak between CPUs": a vPMU that restores the wrong
 * vCPU's saved counters, so that what one vCPU counted shows up in the
 * next one's counter registers.
 */
typedef struct PMULeak {
    uint64_t gp[X86PMU_MAX_GP], fixed[X86PMU_MAX_FIXED];
    bool *pending;
} PMULeak;

static void pmu_leak_work(CPUState *cs, run_on_cpu_data data)
{
    CPUX86State *env = cs->env_ptr;
    PMULeak *l = data.host_ptr;

    memcpy(env->pmu.gp_ctr, l->gp, sizeof(l->gp));
    memcpy(env->pmu.fixed_ctr, l->fixed, sizeof(l->fixed));
    qatomic_set(l->pending, false);
    g_free(l);
    pmu_update(env);
}

static void pmu_leak(CPUX86State *env)
{
    static bool pending[1024];
    CPUState *next = CPU_NEXT(env_cpu(env)) ?: first_cpu;
    bool *p = &pending[env_cpu(env)->cpu_index % 1024];
    PMULeak *l;

    /* One copy in flight at a time: folds can come every instruction. */
    if (next == env_cpu(env) || qatomic_read(p)) {
        return;
    }
    qatomic_set(p, true);
    l = g_new(PMULeak, 1);
    l->pending = p;
    memcpy(l->gp, env->pmu.gp_ctr, sizeof(l->gp));
    memcpy(l->fixed, env->pmu.fixed_ctr, sizeof(l->fixed));
    async_run_on_cpu(next, pmu_leak_work, RUN_ON_CPU_HOST_PTR(l));
}

/*
 * The accounting since the last fold, into the model.  In step mode it
 * holds exactly one instruction, counted cycle by cycle; in fast mode
 * any number, counted in bulk (no counter uses CMASK/INV/EDGE then).
 */
static unsigned pmu_fold(CPUX86State *env, bool one_insn)
{
    unsigned pmis = 0, ring;

    for (ring = 0; ring < 2; ring++) {
        X86PMUAccount *a = &env->pmu_acc[ring];

        if (!a->cycles && !a->insns && !a->branch_misses && !a->llc_refs) {
            continue;
        }
        if (one_insn) {
            X86PMUInsn in = { .cycles = MAX(a->cycles, 1) };

            in.ev[X86PMU_EV_INSTRUCTIONS] = a->insns;
            in.ev[X86PMU_EV_BRANCHES] = a->branches;
            in.ev[X86PMU_EV_BRANCH_MISSES] = a->branch_misses;
            in.ev[X86PMU_EV_LLC_REFS] = a->llc_refs;
            in.ev[X86PMU_EV_LLC_MISSES] = a->llc_misses;
            pmis += x86pmu_count_insn(&env->pmu, ring, &in);
        } else {
            uint64_t t[X86PMU_EV_NUM] = { 0 };

            t[X86PMU_EV_CYCLES] = a->cycles;
            t[X86PMU_EV_INSTRUCTIONS] = a->insns;
            t[X86PMU_EV_BRANCHES] = a->branches;
            t[X86PMU_EV_BRANCH_MISSES] = a->branch_misses;
            t[X86PMU_EV_LLC_REFS] = a->llc_refs;
            t[X86PMU_EV_LLC_MISSES] = a->llc_misses;
            t[X86PMU_EV_SLOTS] = a->cycles * env->pmu.cfg.slots_per_cycle;
            pmis += x86pmu_count_bulk(&env->pmu, ring, t);
        }
        memset(a, 0, sizeof(*a));
        if (env->pmu.cfg.defect == X86PMU_DEFECT_COUNTS_LEAK_BETWEEN_CPUS) {
            pmu_leak(env);
        }
    }
    return pmis;
}

/*
 * Reference cycles: the TSC's ticks while the vCPU executes guest code
 * (it is "unhalted" then; a halted vCPU leaves cpu_exec), attributed to
 * the privilege level current when they are folded.
 */
static unsigned pmu_fold_ref(CPUX86State *env)
{
    uint64_t now, t[X86PMU_EV_NUM] = { 0 };

    if (!env->pmu_ref_running) {
        return 0;
    }
    now = cpu_get_tsc(env);
    t[X86PMU_EV_REF_CYCLES] = now - env->pmu_ref_mark;
    env->pmu_ref_mark = now;
    if (!(env->pmu_active.events & (1u << X86PMU_EV_REF_CYCLES))) {
        return 0;
    }
    return x86pmu_count_bulk(&env->pmu, ring_of(env->hflags), t);
}

/* Arm the timer that catches a reference-cycles overflow. */
static void pmu_arm_ref_timer(CPUX86State *env)
{
    X86CPU *cpu = env_archcpu(env);
    uint64_t left = x86pmu_ref_headroom(&env->pmu);
    int64_t ns;

    if (!cpu->pmu_ref_timer) {
        return;
    }
    /* This runs at every fold: touch the timer only when it must move. */
    if (left == UINT64_MAX) {
        if (timer_pending(cpu->pmu_ref_timer)) {
            timer_del(cpu->pmu_ref_timer);
        }
        return;
    }
    ns = MIN((double)(left + 1) / tsc_per_ns(), (double)NANOSECONDS_PER_SECOND);
    ns = qemu_clock_get_ns(QEMU_CLOCK_REALTIME) + MAX(ns, 20000);
    if (!timer_pending(cpu->pmu_ref_timer) ||
        timer_expire_time_ns(cpu->pmu_ref_timer) > ns) {
        timer_mod(cpu->pmu_ref_timer, ns);
    }
}

/*
 * After the model changed: which accounting translated code must do
 * (the HF_PMU* bits, part of every TB's key) and how far fast mode may
 * run before it folds again.
 */
static void pmu_update(CPUX86State *env)
{
    X86PMUActivity a = env->pmu_active = x86pmu_activity(&env->pmu);
    bool smm_frozen = (env->hflags & HF_SMM_MASK) &&
                      (env->pmu.debugctl & X86PMU_DEBUGCTL_FREEZE_WHILE_SMM);
    uint32_t f = 0;
    uint64_t left = x86pmu_headroom(&env->pmu);

    /* Reference cycles come from the TSC: they need no accounting. */
    if ((a.events & ~(1u << X86PMU_EV_REF_CYCLES)) && !smm_frozen) {
        f |= HF_PMU_MASK;
        if (a.events & (1u << X86PMU_EV_LLC_REFS | 1u << X86PMU_EV_LLC_MISSES |
                        1u << X86PMU_EV_BRANCH_MISSES)) {
            f |= HF_PMU_SIM_MASK;
        }
        /* CMASK/INV/EDGE see each cycle: one instruction at a time. */
        if (a.filters ||
            ((env->hflags & HF_PMU_STEP_MASK) && left < PMU_STEP_LEAVE)) {
            f |= HF_PMU_STEP_MASK;
        }
    }
    /* The LBRs record: translated code reports taken branches. */
    if (x86pmu_lbr_recording(&env->pmu) && !smm_frozen) {
        f |= HF_PMU_LBR_MASK;
    }
    env->hflags = (env->hflags & ~HF_PMU_ALL_MASK) | f;
    if (f & HF_PMU_STEP_MASK) {
        env->pmu_countdown = PMU_COUNTDOWN_STEP;
    } else {
        env->pmu_countdown = MIN(left, PMU_COUNTDOWN_MAX);
    }
    if (f & HF_PMU_SIM_MASK) {
        pmu_sim_ensure(env_archcpu(env));
    }
    pmu_arm_ref_timer(env);
}

/* PMIs through the LVT performance-counter entry, under the BQL. */
static void pmu_deliver(CPUX86State *env, unsigned pmis)
{
    X86CPU *cpu = env_archcpu(env);
    X86PMUDelivery d;
    bool locked;

    if (!pmis || !cpu->apic_state) {
        return;
    }
    d = x86pmu_delivery(&env->pmu);
    locked = qemu_mutex_iothread_locked();
    if (!locked) {
        qemu_mutex_lock_iothread();
    }
    apic_deliver_pmi(cpu->apic_state, d.mask_lvt, d.force_fixed);
    if (!locked) {
        qemu_mutex_unlock_iothread();
    }
}

/*
 * At the start of a TB whose cost does not fit the countdown, and at every
 * TB start in step mode: fold, deliver a PMI before the TB's first
 * instruction (skid 0), and choose the mode the next instructions run in.
 */
void helper_pmu_tb_start(CPUX86State *env, uint64_t tb)
{
    uint32_t cost = X86_PMU_CYCLES(tb);
    uint32_t was = env->hflags & HF_PMU_ALL_MASK;
    unsigned pmis;

    env->pmu_countdown += cost;
    pmis = pmu_fold(env, was & HF_PMU_STEP_MASK);
    pmis += pmu_fold_ref(env);
    /*
     * A PEBS record the folded instruction owes (pmu-lbr-pebs.c): in step
     * mode it was the previous TB's only one, at pmu_last_ip.
     */
    pmis += x86_pmu_pebs(env, env->eip, env->pmu_last_ip);
    env->pmu_last_ip = env->eip;
    /*
     * Step mode for CMASK/INV/EDGE lasts while those counters count, and
     * only a PMI or an MSR write changes that: nothing to re-decide here.
     */
    if ((was & HF_PMU_STEP_MASK) && env->pmu_active.filters && !pmis) {
        env->pmu_countdown -= cost;
        return;
    }
    pmu_update(env);
    /* Too close to an overflow for this TB: instruction by instruction. */
    if ((env->hflags & HF_PMU_MASK) && env->pmu_countdown < cost) {
        env->hflags |= HF_PMU_STEP_MASK;
        env->pmu_countdown = PMU_COUNTDOWN_STEP;
    }
    pmu_deliver(env, pmis);
    if (pmis || (env->hflags & HF_PMU_ALL_MASK) != was) {
        /* The TB has not started: its state is the CPU's. */
        cpu_loop_exit_noexc(env_cpu(env));
    }
    env->pmu_countdown -= cost;
}

/*
 * A fault: the instructions from the faulting one to the TB's end did not
 * retire (a trap or a software interrupt raises no fault here).
 */
void x86_pmu_restore(CPUX86State *env, uint32_t tb_flags, uint64_t left)
{
    X86PMUAccount *a = &env->pmu_acc[ring_of(tb_flags)];

    if (!(tb_flags & HF_PMU_MASK)) {
        return;
    }
    a->cycles -= X86_PMU_CYCLES(left);
    a->insns -= X86_PMU_INSNS(left);
    a->branches -= X86_PMU_BRANCHES(left);
    if (!(tb_flags & HF_PMU_STEP_MASK)) {
        env->pmu_countdown += X86_PMU_CYCLES(left);
    }
}

/* --- Instructions that read or write the PMU --- */

/*
 * RDMSR, WRMSR, RDPMC and CPUID end their TB when a PMU is emulated, so
 * the accounting holds the instructions before them and, in an
 * instrumented TB, themselves ("self").  Before they act, everything
 * before them is folded; self stays accounted, so that a fault's restore
 * removes it.
 */
void x86_pmu_insn_begin(CPUX86State *env, uint32_t self, uintptr_t ra)
{
    X86PMUAccount *a = &env->pmu_acc[ring_of(env->hflags)];
    bool counted = self >> 31;
    uint32_t cost = self & 0xffff;
    unsigned pmis;

    if (counted) {
        a->insns -= 1;
        a->cycles -= cost;
    }
    pmis = pmu_fold(env, env->hflags & HF_PMU_STEP_MASK);
    pmis += pmu_fold_ref(env);
    pmis += x86_pmu_pebs(env, env->eip, env->pmu_last_ip);
    if (counted) {
        a->insns += 1;
        a->cycles += cost;
    }
    if (pmis) {
        /* An overflow before this instruction: its PMI comes first. */
        pmu_update(env);
        pmu_deliver(env, pmis);
        cpu_loop_exit_restore(env_cpu(env), ra);
    }
}

/*
 * After they acted: self retires now, counted by the counters enabled
 * from now on (a WRMSR that enables counting is counted, one that
 * disables it is not), as an instruction a hypervisor intercepts.
 */
void x86_pmu_insn_end(CPUX86State *env, uint32_t self)
{
    X86PMURing ring = ring_of(env->hflags);
    X86PMUInsn in = { .cycles = MAX(self & 0xffff, 1),
                      .flags = X86PMU_INSN_INTERCEPTED };
    unsigned pmis;

    if (self >> 31) {
        env->pmu_acc[ring].insns -= 1;
        env->pmu_acc[ring].cycles -= self & 0xffff;
    }
    in.ev[X86PMU_EV_INSTRUCTIONS] = 1;
    pmis = x86pmu_count_insn(&env->pmu, ring, &in);
    /* RDMSR, WRMSR, RDPMC and CPUID are two bytes long. */
    pmis += x86_pmu_pebs(env, env->eip + 2, env->eip);
    pmu_update(env);
    pmu_deliver(env, pmis);
}

int x86_pmu_rdmsr(CPUX86State *env, uint32_t msr, uint64_t *val)
{
    switch (x86pmu_rdmsr(&env->pmu, msr, val)) {
    case X86PMU_OK:
        return 1;
    case X86PMU_GP:
        return -1;
    default:
        return 0;
    }
}

int x86_pmu_wrmsr(CPUX86State *env, uint32_t msr, uint64_t val)
{
    X86CPU *cpu = env_archcpu(env);
    unsigned pmis = 0;
    X86PMUAccess r;

    /* IA32_PRED_CMD.IBPB forgets the branch targets (SDM vol. 4). */
    if (msr == 0x49 && (val & 1)) {
        pmu_sim_ibpb(cpu);
    }
    r = x86pmu_wrmsr(&env->pmu, msr, val, &pmis);
    if (r == X86PMU_NOT_MINE) {
        return 0;
    }
    if (r == X86PMU_GP) {
        return -1;
    }
    pmu_deliver(env, pmis);
    return 1;
}

bool x86_pmu_rdpmc(CPUX86State *env, uint32_t ecx, uint64_t *val)
{
    return x86pmu_rdpmc(&env->pmu, ecx, env->hflags & HF_CPL_MASK,
                        env->cr[4] & CR4_PCE_MASK, val) == X86PMU_OK;
}

/* --- Entering and leaving guest code, SMM --- */

void x86_pmu_exec_enter(CPUX86State *env)
{
    env->pmu_ref_mark = cpu_get_tsc(env);
    env->pmu_ref_running = true;
}

void x86_pmu_exec_exit(CPUX86State *env)
{
    unsigned pmis = pmu_fold_ref(env) +
                    x86_pmu_pebs(env, env->eip, env->pmu_last_ip);

    env->pmu_ref_running = false;
    if (pmis) {
        pmu_update(env);
        pmu_deliver(env, pmis);
    }
}

/*
 * SMI delivery and RSM (and interrupt delivery, pmu-lbr-pebs.c): fold
 * before, and re-decide (freeze while SMM).
 */
void x86_pmu_mode_change_begin(CPUX86State *env)
{
    unsigned pmis = pmu_fold(env, env->hflags & HF_PMU_STEP_MASK);

    pmis += pmu_fold_ref(env);
    pmu_deliver(env, pmis + x86_pmu_pebs(env, env->eip, env->pmu_last_ip));
}

void x86_pmu_mode_change_end(CPUX86State *env)
{
    pmu_update(env);
}

/* --- The reference-cycles timer --- */

static void pmu_ref_timer_work(CPUState *cs, run_on_cpu_data data)
{
    CPUX86State *env = cs->env_ptr;
    unsigned pmis = pmu_fold_ref(env);

    pmis += x86_pmu_pebs(env, env->eip, env->pmu_last_ip);
    pmu_update(env);
    pmu_deliver(env, pmis);
}

static void pmu_ref_timer_cb(void *opaque)
{
    X86CPU *cpu = opaque;

    /* The PMU is the vCPU thread's: fold there, between TBs. */
    async_run_on_cpu(CPU(cpu), pmu_ref_timer_work, RUN_ON_CPU_NULL);
}
