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
#include "pmu-ext.h"

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

/*
 * pmu-wrmsr-counted, pmu-target-mode, pmu-delivery-retires, pmu-ref-ratio,
 * pmu-amd-reserved-gp.
 */
static bool pmu_conventions(X86CPU *cpu, X86PMUConfig *c, Error **errp)
{
    struct X86PMUConventionProps *p = &cpu->pmu_conv;

    if (p->wrmsr_counted && *p->wrmsr_counted &&
        !x86pmu_parse_wrmsr_counted(p->wrmsr_counted, &c->wrmsr_counted)) {
        error_setg(errp, "pmu-wrmsr-counted=%s: one of enabling, disabling, "
                   "both, neither (which of a WRMSR pair that enables and "
                   "disables counting is counted)", p->wrmsr_counted);
        return false;
    }
    if (p->target_mode != ON_OFF_AUTO_AUTO) {
        c->target_mode = p->target_mode == ON_OFF_AUTO_ON;
    }
    if (p->delivery_retires != ON_OFF_AUTO_AUTO) {
        c->delivery_retires = p->delivery_retires == ON_OFF_AUTO_ON;
    }
    if (prop_set(p->ref_ratio)) {
        c->ref_ratio = p->ref_ratio;
    }
    if (p->amd_reserved_gp != ON_OFF_AUTO_AUTO) {
        if (c->vendor != X86PMU_VENDOR_AMD) {
            error_setg(errp, "pmu-amd-reserved-gp: an AMD property on an "
                       "Intel CPU");
            return false;
        }
        c->amd_reserved_gp = p->amd_reserved_gp == ON_OFF_AUTO_ON;
    }
    return true;
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

    if (p->shape && *p->shape) {
        if (!x86_pmu_named_shape(p->shape, vendor, c, errp)) {
            return false;
        }
    } else if (!x86pmu_shape(model, vendor, family, fmodel, c) &&
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
         p->pdcm != ON_OFF_AUTO_AUTO || p->v6_caps != UINT64_MAX)) {
        error_setg(errp, "pmu-version/pmu-fixed*/pmu-events-*/pmu-perf-caps/"
                   "pmu-fw-writes/pmu-pdcm/pmu-v6-caps: Intel properties on "
                   "an AMD CPU");
        return false;
    }
    if (vendor == X86PMU_VENDOR_INTEL &&
        (p->perfctr_core != ON_OFF_AUTO_AUTO ||
         p->perfmon_v2 != ON_OFF_AUTO_AUTO ||
         p->lbr_pmc_freeze != ON_OFF_AUTO_AUTO)) {
        error_setg(errp, "pmu-perfctr-core/pmu-perfmon-v2/pmu-lbr-pmc-freeze: "
                   "AMD properties on an Intel CPU");
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
    } else if ((prop_set(p->version) || prop_set(p->num_fixed)) &&
               !c->leaf23) {
        /* ECX as real parts fill it, for the counters EDX now has. */
        x86pmu_fixed_bitmap_default(c);
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
        /*
         * The whole register, as a VMM sets it for its guest (KVM: LBR
         * format 0 unless the VMM asks for LBRs, PEBS bits only with
         * adaptive PEBS, Linux arch/x86/kvm/vmx/vmx.c
         * vmx_get_perf_capabilities): LBR format 0 leaves the shape no
         * LBR stack, no PEBS bit leaves it no DS area (CPUID DS, DTES64).
         */
        c->perf_caps = p->perf_caps;
        if (c->vendor == X86PMU_VENDOR_INTEL && !(c->perf_caps & 0x3f)) {
            c->lbr = X86PMU_LBR_NONE;
            c->lbr_depth = 0;
            c->arch_lbr_ebx = 0;
        }
        if (!(c->perf_caps & X86PMU_CAP_LBR_PEBS_MASK & ~0x3full)) {
            c->ds = false;
        }
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
        /* LbrAndPmcFreeze's status bit is PerfMonV2's (Fn8000_0022). */
        c->lbr_pmc_freeze &= c->perfmon_v2;
    }
    x86_pmu_ext_props(p, c);
    x86pmu_perf_metrics_settle(c, p->perf_caps != UINT64_MAX);
    if (prop_set(p->slots_per_cycle)) {
        c->slots_per_cycle = p->slots_per_cycle;
    }
    /*
     * The cycle model retires at most one instruction a cycle: each takes
     * one cycle or more and retires in its last (pmutest's
     * emu/qemu/README.md, "Cycle model").
     */
    c->retire_width = 1;
    if (!pmu_conventions(cpu, c, errp) ||
        !x86_pmu_lbr_pebs_config(c, p, errp)) {
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
    if (p->offcore == ON_OFF_AUTO_OFF) {
        memset(&c->offcore, 0, sizeof(c->offcore));
    } else if (p->offcore == ON_OFF_AUTO_ON && !c->offcore.nmsrs) {
        error_setg(errp, "pmu-offcore=on: no offcore-response layout for "
                   "family 0x%x model 0x%x", family, fmodel);
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

static void pmu_leak_init(void);

bool x86_pmu_realize(X86CPU *cpu, const char *model, Error **errp)
{
    X86PMUConfig c;

    if (!pmu_config(cpu, model, &c, errp)) {
        return false;
    }
    cpu->pmu_cfg = c;
    cpu->pmu_tcg = true;
    if (c.defect == X86PMU_DEFECT_COUNTS_LEAK_BETWEEN_CPUS) {
        pmu_leak_init();
    }
    if (cpu->pmu_prop.uncore && !x86_pmu_uncore_realize(cpu, errp)) {
        return false;
    }
    /* CPUID Fn8000_0022 (PerfMonV2) must be reachable. */
    if (c.vendor == X86PMU_VENDOR_AMD && c.perfmon_v2) {
        cpu->env.cpuid_min_xlevel = MAX(cpu->env.cpuid_min_xlevel,
                                        0x80000022);
    }
    /*
     * CPUID.0AH must be reachable, 15H where it gives the reference
     * clock's ratio, 23H when the shape has one, and 1CH for
     * architectural LBRs.
     */
    if (c.vendor == X86PMU_VENDOR_INTEL && c.version) {
        bool leaf15 = c.ref_report == X86PMU_REF_REPORT_CPUID15;

        cpu->env.cpuid_min_level = MAX(cpu->env.cpuid_min_level,
                                       c.leaf23 ? 0x23 : leaf15 ? 0x15 : 0xa);
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

    /*
     * A vCPU's reset is also its INIT (do_cpu_init), which leaves the
     * package's uncore alone: only the machine's reset clears it
     * (pmu-uncore.c, package_reset).
     */
    x86pmu_reset(&env->pmu, &cpu->pmu_cfg);
    memset(env->pmu_acc, 0, sizeof(env->pmu_acc));
    env->pmu_mode_insn = 0;
    env->pmu_ref_mark = cpu_get_tsc(env);
    /* An application processor waits for its SIPI halted. */
    env->pmu_ref_halted = CPU(cpu)->halted;
    env->hflags &= ~HF_PMU_ALL_MASK;
    pmu_update(env);
}

/*
 * INIT leaves the MSRs unchanged (SDM vol. 3A, "Initialization Overview"),
 * and QEMU carries the PMU's state across it, but not hflags: what
 * translated code must account is decided again from the registers.
 */
void x86_pmu_init_done(X86CPU *cpu)
{
    CPUX86State *env = &cpu->env;

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
 * The defect "counts leak between CPUs": a vPMU whose saved counter
 * context is per host CPU instead of per vCPU, so that a vCPU restores
 * what another vCPU saved there.  Emulated as one host CPU: each fold
 * that counted something saves the vCPU's counters in the one save area;
 * a vCPU takes over a save it has not seen, made by another vCPU, when it
 * next executes RDMSR, WRMSR or RDPMC.  Taken at those instructions
 * rather than by asynchronous work on the other vCPU (which may not run
 * before the guest looks), and from whichever vCPU saved last rather than
 * from a neighbour (the guest numbers its CPUs in the order they come up),
 * the leak is deterministic: what one vCPU counted before the guest asks
 * another to look is what the other shows.
 */
#define PMU_LEAK_CPUS 1024

static QemuMutex pmu_leak_lock;
static struct {
    uint64_t gen;           /* saves made */
    int src;                /* the cpu_index that made the newest */
    uint64_t gp[X86PMU_MAX_GP], fixed[X86PMU_MAX_FIXED];
} pmu_leak_area;
static uint64_t pmu_leak_seen[PMU_LEAK_CPUS];

static void pmu_leak_init(void)
{
    static bool done;

    if (!qatomic_xchg(&done, true)) {
        qemu_mutex_init(&pmu_leak_lock);
    }
}

static void pmu_leak_save(CPUX86State *env)
{
    qemu_mutex_lock(&pmu_leak_lock);
    memcpy(pmu_leak_area.gp, env->pmu.gp_ctr, sizeof(pmu_leak_area.gp));
    memcpy(pmu_leak_area.fixed, env->pmu.fixed_ctr,
           sizeof(pmu_leak_area.fixed));
    pmu_leak_area.src = env_cpu(env)->cpu_index;
    pmu_leak_area.gen++;
    qemu_mutex_unlock(&pmu_leak_lock);
}

static void pmu_leak_take(CPUX86State *env)
{
    int me = env_cpu(env)->cpu_index;
    uint64_t *seen = &pmu_leak_seen[me % PMU_LEAK_CPUS];
    bool taken = false;

    qemu_mutex_lock(&pmu_leak_lock);
    if (pmu_leak_area.gen != *seen) {
        *seen = pmu_leak_area.gen;
        if (pmu_leak_area.src != me) {
            memcpy(env->pmu.gp_ctr, pmu_leak_area.gp,
                   sizeof(pmu_leak_area.gp));
            memcpy(env->pmu.fixed_ctr, pmu_leak_area.fixed,
                   sizeof(pmu_leak_area.fixed));
            taken = true;
        }
    }
    qemu_mutex_unlock(&pmu_leak_lock);
    if (taken) {
        pmu_update(env);
    }
}

static bool pmu_leaks(CPUX86State *env)
{
    return env->pmu.cfg.defect == X86PMU_DEFECT_COUNTS_LEAK_BETWEEN_CPUS;
}

/* Offcore requests the cache model saw, through the RSP MSRs. */
static unsigned pmu_fold_offcore(CPUX86State *env, X86PMURing ring,
                                 const X86PMUAccount *a)
{
    unsigned req, hit, pmis = 0;

    for (req = 0; req < X86PMU_REQ_NUM; req++) {
        for (hit = 0; hit < 2; hit++) {
            pmis += x86pmu_count_offcore(&env->pmu, ring, env->pmu.offcore_rsp,
                                         req, hit, a->offcore[req][hit]);
        }
    }
    return pmis;
}

/*
 * The accounting since the last fold, into the model.  In step mode it
 * holds exactly one instruction, counted cycle by cycle; in fast mode
 * any number, counted in bulk (no counter uses CMASK/INV/EDGE then).
 */
static unsigned pmu_fold(CPUX86State *env, bool one_insn)
{
    unsigned pmis = 0, ring;

    x86_pmu_sync_svm(env);
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
        pmis += pmu_fold_offcore(env, ring, a);
        memset(a, 0, sizeof(*a));
        if (pmu_leaks(env)) {
            pmu_leak_save(env);
        }
    }
    return pmis;
}

/*
 * Reference cycles: the TSC's ticks while the core is not halted (SDM
 * vol. 3B, "Pre-defined Architectural Performance Events", UnHalted
 * Reference Cycles; "Fixed-function Performance Counters",
 * CPU_CLK_UNHALTED.REF_TSC), attributed to the privilege level current
 * when they are folded; every privilege change folds them first
 * (x86_pmu_cpl_change).  Halted is cs->halted (HLT, waiting for SIPI,
 * and MWAIT on a one-CPU machine only: with more CPUs QEMU 7.2's
 * helper_mwait does not wait, do_pause, so a guest's MWAIT idle loop
 * counts): the vCPU leaves cpu_exec for other reasons too (PAUSE, I/O, a
 * kick), and the clock runs on through those.  Ticks since the last fold
 * count unless the vCPU was halted at it; a halt's own fold (at exit) and
 * the fold at the next entry bound the halted time.
 */
static unsigned pmu_fold_ref(CPUX86State *env)
{
    uint64_t now, t[X86PMU_EV_NUM] = { 0 };
    bool halted = env->pmu_ref_halted;

    now = cpu_get_tsc(env);
    t[X86PMU_EV_REF_CYCLES] = now - env->pmu_ref_mark;
    env->pmu_ref_mark = now;
    env->pmu_ref_halted = env_cpu(env)->halted;
    if (halted || !(env->pmu_active.events & (1u << X86PMU_EV_REF_CYCLES))) {
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
    X86PMUActivity a;
    uint32_t f = 0;
    uint64_t left;

    x86_pmu_sync_svm(env);
    a = env->pmu_active = x86pmu_activity(&env->pmu);
    left = x86pmu_headroom(&env->pmu);

    /* Reference cycles come from the TSC: they need no accounting. */
    if ((a.events & ~(1u << X86PMU_EV_REF_CYCLES)) || a.offcore) {
        f |= HF_PMU_MASK;
        if ((a.events & (1u << X86PMU_EV_LLC_REFS | 1u << X86PMU_EV_LLC_MISSES |
                         1u << X86PMU_EV_BRANCH_MISSES)) || a.offcore) {
            f |= HF_PMU_SIM_MASK;
        }
        /* CMASK/INV/EDGE see each cycle: one instruction at a time. */
        if (a.filters ||
            ((env->hflags & HF_PMU_STEP_MASK) && left < PMU_STEP_LEAVE)) {
            f |= HF_PMU_STEP_MASK;
        }
    }
    /* The package's uncore watches the caches on its own. */
    if (x86_pmu_uncore_watching(env)) {
        f |= HF_PMU_SIM_MASK;
    }
    /*
     * The LBRs record (in SMM with FREEZE_WHILE_SMM the model has cleared
     * DEBUGCTL.LBR), or a counter counts a branch event by kind
     * (x86pmu_count_branch): translated code reports taken branches.
     */
    if (x86pmu_lbr_recording(&env->pmu) || a.branch_kinds) {
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

static void pmu_deliver(CPUX86State *env, unsigned pmis);

/*
 * Between TBs, on a request from outside the TB chain (the uncore's kick,
 * the reference-cycles timer): what translated code accounted since the
 * last fold goes into the model first.  pmu_update takes the countdown
 * from the counters' headroom; without the fold that headroom leaves out
 * the events already accounted, the countdown runs past the overflow, and
 * its PMI comes late by up to what had been accounted (SDM vol. 3B,
 * "Generating an Interrupt on Overflow": the PMI is generated when the
 * counter overflows).  helper_pmu_tb_start folds the same way.
 */
static unsigned pmu_fold_between_tbs(CPUX86State *env)
{
    unsigned pmis = pmu_fold(env, env->hflags & HF_PMU_STEP_MASK);

    pmis += pmu_fold_ref(env);
    pmis += x86_pmu_pebs(env, env->eip, env->pmu_last_ip);
    env->pmu_last_ip = env->eip;
    return pmis;
}

void x86_pmu_rethink(CPUX86State *env)
{
    unsigned pmis = pmu_fold_between_tbs(env);

    pmu_update(env);
    pmu_deliver(env, pmis);
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
 * A taken branch of `kind` retired at `cpl` (the LBR hooks report it, in
 * pmu-lbr-pebs.c): the model-specific branch events count it there.  The
 * PMI an overflow raises is taken at the end of the TB.
 */
void x86_pmu_branch_retired(CPUX86State *env, X86PMUBranch kind,
                            unsigned cpl)
{
    unsigned pmis;

    if (!env->pmu_active.branch_kinds) {
        return;
    }
    pmis = x86pmu_count_branch(&env->pmu,
                               cpl ? X86PMU_RING_USR : X86PMU_RING_OS, kind);
    if (pmis) {
        pmu_update(env);
        pmu_deliver(env, pmis);
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

    env->pmu_mode_insn = 0;
    if (!(tb_flags & HF_PMU_MASK)) {
        return;
    }
    /* At most what is there: a privilege change may have moved it. */
    a->cycles -= MIN(a->cycles, X86_PMU_CYCLES(left));
    a->insns -= MIN(a->insns, X86_PMU_INSNS(left));
    a->branches -= MIN(a->branches, X86_PMU_BRANCHES(left));
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
    pmis += x86pmu_owed_pmis(&env->pmu);
    pmis += x86_pmu_pebs(env, env->eip, env->pmu_last_ip);
    if (counted) {
        a->insns += 1;
        a->cycles += cost;
    }
    /* Which counters count before it acts (pmu-wrmsr-counted). */
    x86pmu_insn_begin(&env->pmu);
    env->pmu.insn_rdpmc = false; /* x86_pmu_rdpmc() says otherwise */
    if (pmis) {
        /* An overflow before this instruction: its PMI comes first. */
        pmu_update(env);
        pmu_deliver(env, pmis);
        cpu_loop_exit_restore(env_cpu(env), ra);
    }
}

/*
 * After they acted: self retires now, counted by the counters enabled
 * before or after it as pmu-wrmsr-counted says (by default the enabled
 * ones: a WRMSR that enables counting is counted, one that disables it
 * is not), as an instruction a hypervisor intercepts.
 */
void x86_pmu_insn_end(CPUX86State *env, uint32_t self)
{
    X86PMURing ring = ring_of(env->hflags);
    X86PMUInsn in = { .cycles = MAX(self & 0xffff, 1),
                      .flags = X86PMU_INSN_INTERCEPTED |
                               X86PMU_INSN_PMU_ACCESS };
    unsigned pmis;

    if (self >> 31) {
        env->pmu_acc[ring].insns -= 1;
        env->pmu_acc[ring].cycles -= self & 0xffff;
    }
    x86_pmu_sync_svm(env);
    if (env->pmu.insn_rdpmc) {
        in.flags |= X86PMU_INSN_RDPMC;
        env->pmu.insn_rdpmc = false;
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
    int r;

    if (pmu_leaks(env)) {
        pmu_leak_take(env);
    }
    r = x86_pmu_uncore_rdmsr(env, msr, val);
    if (r) {
        return r;
    }
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
    int uncore;

    if (pmu_leaks(env)) {
        pmu_leak_take(env);
    }
    /* IA32_PRED_CMD.IBPB forgets the branch targets (SDM vol. 4). */
    if (msr == 0x49 && (val & 1) &&
        env->pmu.cfg.defect != X86PMU_DEFECT_IBPB_KEEPS_PREDICTIONS) {
        pmu_sim_ibpb(cpu);
    }
    uncore = x86_pmu_uncore_wrmsr(env, msr, val);
    if (uncore) {
        return uncore;
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
    env->pmu.insn_rdpmc = true;
    if (pmu_leaks(env)) {
        pmu_leak_take(env);
    }
    return x86pmu_rdpmc(&env->pmu, ecx, env->hflags & HF_CPL_MASK,
                        env->cr[4] & CR4_PCE_MASK, val) == X86PMU_OK;
}

/* --- Entering and leaving guest code, SMM --- */

/*
 * cpu_exec is entered after a halt ended (cs->halted is clear again) or
 * after any other exit: the fold drops the halted time, or counts the
 * ticks spent outside cpu_exec unhalted, at the level the vCPU left at.
 */
void x86_pmu_exec_enter(CPUX86State *env)
{
    unsigned pmis = pmu_fold_ref(env);

    env->pmu_ref_running = true;
    if (pmis) {
        pmu_update(env);
        pmu_deliver(env, pmis);
    }
}

/*
 * Leaving cpu_exec: fold at the level the vCPU leaves at.  The reference
 * clock stops only if it leaves halted (pmu_fold_ref).
 */
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
 * SMI delivery and RSM: fold before; after, FREEZE_WHILE_SMM clears the
 * counters' global enables on the way in and sets them on the way out
 * (x86pmu_smm_enter/leave), and translated code's accounting follows.
 */
void x86_pmu_mode_change_begin(CPUX86State *env)
{
    env->pmu_mode_insn = 0;
    x86_pmu_interrupt_begin(env);
}

/*
 * Before an interrupt, exception or SMI is delivered: fold what ran so
 * far (in step mode the instruction before it) and deliver its PMIs, so
 * that a PEBS record it owes shows the state it left, not the handler's.
 * The events of an instruction that changes the privilege level (INT n:
 * pmu_mode_insn) stay in the account, for x86_pmu_cpl_change to move.
 */
void x86_pmu_interrupt_begin(CPUX86State *env)
{
    uint64_t ins = env->pmu_mode_insn;
    X86PMUAccount *a = &env->pmu_acc[ring_of(env->hflags)];
    bool hold = ins && a->insns >= X86_PMU_INSNS(ins) &&
                a->cycles >= X86_PMU_CYCLES(ins) &&
                a->branches >= X86_PMU_BRANCHES(ins);
    unsigned pmis;

    if (hold) {
        a->insns -= X86_PMU_INSNS(ins);
        a->cycles -= X86_PMU_CYCLES(ins);
        a->branches -= X86_PMU_BRANCHES(ins);
    }
    pmis = pmu_fold(env, env->hflags & HF_PMU_STEP_MASK);
    pmis += pmu_fold_ref(env);
    if (hold) {
        a->insns += X86_PMU_INSNS(ins);
        a->cycles += X86_PMU_CYCLES(ins);
        a->branches += X86_PMU_BRANCHES(ins);
    }
    pmu_deliver(env, pmis + x86_pmu_pebs(env, env->eip, env->pmu_last_ip));
}

void x86_pmu_mode_change_end(CPUX86State *env)
{
    if (env->hflags & HF_SMM_MASK) {
        x86pmu_smm_enter(&env->pmu);
    } else {
        x86pmu_smm_leave(&env->pmu);
    }
    pmu_update(env);
}

/*
 * The privilege level changes to `cpl` (SS is loaded; hflags still holds
 * the old level).  Reference cycles so far belong to the old level.  An
 * instruction that changes it (IRET, SYSCALL, SYSRET, SYSENTER, SYSEXIT,
 * far CALL, JMP and RET, INT n) was accounted, with the rest of its TB,
 * at the old level; with pmu-target-mode it moves to the new one:
 * "instructions and events that change the mode are counted in the
 * target mode" (AMD, Sandipan Das on LKML, 2023-04-26).  The translator
 * leaves its events in pmu_mode_insn before it runs.
 */
void x86_pmu_cpl_change(CPUX86State *env, int cpl)
{
    uint64_t ins = env->pmu_mode_insn;
    unsigned pmis = pmu_fold_ref(env);

    env->pmu_mode_insn = 0;
    if (ins && env->pmu.cfg.target_mode) {
        X86PMUAccount *from = &env->pmu_acc[ring_of(env->hflags)];
        X86PMUAccount *to = &env->pmu_acc[cpl ? 1 : 0];

        if (from != to && from->insns >= X86_PMU_INSNS(ins) &&
            from->cycles >= X86_PMU_CYCLES(ins) &&
            from->branches >= X86_PMU_BRANCHES(ins)) {
            from->insns -= X86_PMU_INSNS(ins);
            from->cycles -= X86_PMU_CYCLES(ins);
            from->branches -= X86_PMU_BRANCHES(ins);
            to->insns += X86_PMU_INSNS(ins);
            to->cycles += X86_PMU_CYCLES(ins);
            to->branches += X86_PMU_BRANCHES(ins);
        }
    }
    if (pmis) {
        pmu_update(env);
        pmu_deliver(env, pmis);
    }
}

/*
 * Interrupt and exception delivery.  A software interrupt (INT n, INT3,
 * INTO) is its instruction, counted as one.  Anything else interrupted
 * the instruction stream: no instruction changes the level, and with
 * pmu-delivery-retires the delivery itself retires, in one cycle, as one
 * instruction and one branch at the handler's level.  AMD counts it so:
 * "The number of instructions retired (including exceptions, interrupts
 * and resyncs.)" and "The number of branch instructions retired
 * (conditional, unconditional, exceptions, and interrupts.)" (AMD's
 * Athlon event descriptions, events C0H and C2H); Linux's amdzen event
 * files for C2H: "including exceptions and interrupts".  The SDM says only
 * "Counters continue counting during hardware interrupts, traps, and
 * inside interrupt handlers".
 */
void x86_pmu_delivery_begin(CPUX86State *env, int is_int)
{
    if (!is_int) {
        env->pmu_mode_insn = 0;
    }
    x86_pmu_interrupt_begin(env);
}

void x86_pmu_delivery_end(CPUX86State *env, int is_int)
{
    X86PMUInsn in = { .cycles = 1 };
    unsigned pmis;

    env->pmu_mode_insn = 0;
    /*
     * A software interrupt is a taken branch; with pmu-delivery-retires
     * so is any other delivery (AMD's C4H counts "exceptions and
     * interrupts", family 17h/19h PPRs), at the handler's level.
     */
    if (env->pmu_ref_running && (is_int || env->pmu.cfg.delivery_retires)) {
        x86_pmu_branch_retired(env, X86PMU_BR_FAR,
                               env->hflags & HF_CPL_MASK);
    }
    if (is_int || !env->pmu.cfg.delivery_retires || !env->pmu_ref_running) {
        return;
    }
    in.ev[X86PMU_EV_INSTRUCTIONS] = 1;
    in.ev[X86PMU_EV_BRANCHES] = 1;
    pmis = pmu_fold(env, env->hflags & HF_PMU_STEP_MASK);
    pmis += x86pmu_count_insn(&env->pmu, ring_of(env->hflags), &in);
    pmu_update(env);
    pmu_deliver(env, pmis);
}

/* --- The reference-cycles timer --- */

static void pmu_ref_timer_work(CPUState *cs, run_on_cpu_data data)
{
    CPUX86State *env = cs->env_ptr;
    unsigned pmis = pmu_fold_between_tbs(env);

    pmu_update(env);
    pmu_deliver(env, pmis);
}

static void pmu_ref_timer_cb(void *opaque)
{
    X86CPU *cpu = opaque;

    /* The PMU is the vCPU thread's: fold there, between TBs. */
    async_run_on_cpu(CPU(cpu), pmu_ref_timer_work, RUN_ON_CPU_NULL);
}
