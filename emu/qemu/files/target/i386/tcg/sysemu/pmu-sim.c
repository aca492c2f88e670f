/*
 * The emulated PMU's cache and branch-predictor models, so that the
 * architectural LLC and branch-mispredict events count something
 * deterministic and documented (pmutest's emu/qemu/README.md):
 *
 * - Caches: two direct-mapped levels of 64-byte lines, indexed by linear
 *   address: a 1 MiB "L2" and an 8 MiB last-level cache.  A load or store
 *   that misses the L2 is an LLC reference, an offcore request (a demand
 *   data read, or an RFO for a store) and a request to the package's
 *   uncore; one that also misses the LLC is an LLC miss and a line read
 *   from DRAM.  A store leaves its line dirty in the LLC: evicting it, or
 *   CLFLUSH, writes it to DRAM.  CLFLUSH evicts the line from both.  Only
 *   accesses made while an LLC, offcore or uncore event counts are seen
 *   (HF_PMU_SIM); CLFLUSH always.
 * - Branches: a conditional branch is predicted statically, backward
 *   taken and forward not taken (translate.c counts that one inline); an
 *   indirect JMP/CALL by the target it went to last time from the same
 *   address (512 entries); RET by a 16-entry return stack fed by CALL.
 *   IBPB empties both.
 *
 * Each vCPU has its own models: one vCPU's accesses never count on
 * another.
 *
 * Copyright (c) 2025 The pmutest authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "cpu.h"
#include "exec/helper-proto.h"
#include "pmu-sim.h"

#define LINE_SHIFT  6
#define LLC_DIRTY   (1ull << 63)    /* in llc[]: the line was stored to */
#define L2_LINES    (1u << 14)
#define LLC_LINES   (1u << 17)
#define BTB_SIZE    512
#define RSB_SIZE    16

struct X86PMUSim {
    uint64_t l2[L2_LINES];      /* line number + 1; 0: empty */
    uint64_t llc[LLC_LINES];
    uint64_t btb_site[BTB_SIZE], btb_target[BTB_SIZE];
    uint64_t rsb[RSB_SIZE];
    unsigned rsb_top, rsb_depth;
};

void pmu_sim_ensure(X86CPU *cpu)
{
    if (!cpu->pmu_sim) {
        cpu->pmu_sim = g_new0(struct X86PMUSim, 1);
    }
}

void pmu_sim_ibpb(X86CPU *cpu)
{
    struct X86PMUSim *m = cpu->pmu_sim;

    if (m) {
        memset(m->btb_site, 0, sizeof(m->btb_site));
        memset(m->btb_target, 0, sizeof(m->btb_target));
        m->rsb_depth = 0;
    }
}

static X86PMUAccount *acc(CPUX86State *env)
{
    return &env->pmu_acc[(env->hflags & HF_CPL_MASK) ? 1 : 0];
}

static void access_line(CPUX86State *env, struct X86PMUSim *m, uint64_t line,
                        bool store)
{
    uint64_t tag = line + 1, *llc = &m->llc[line % LLC_LINES];
    /* Core events only while a counter counts (their fold is then due). */
    X86PMUAccount *a = (env->hflags & HF_PMU_MASK) ? acc(env) : NULL;
    bool hit = (*llc & ~LLC_DIRTY) == tag;

    if (m->l2[line % L2_LINES] == tag) {
        *llc |= store && hit ? LLC_DIRTY : 0;
        return;
    }
    if (a) {
        a->llc_refs++;
        a->llc_misses += !hit;
        a->offcore[store ? X86PMU_REQ_RFO : X86PMU_REQ_DATA_RD][hit]++;
    }
    if (env_archcpu(env)->pmu_pkg) {
        /* The lookup's state: I for a miss, M for a line stored to. */
        x86_pmu_uncore_event(env, !hit ? X86PMU_UNC_LLC_MISS :
                             (*llc & LLC_DIRTY) ? X86PMU_UNC_LLC_HIT_M :
                             X86PMU_UNC_LLC_HIT, line);
        if (!hit) {
            x86_pmu_uncore_event(env, X86PMU_UNC_CAS_READ, line);
            if (*llc & LLC_DIRTY) {
                x86_pmu_uncore_event(env, X86PMU_UNC_CAS_WRITE,
                                     (*llc & ~LLC_DIRTY) - 1);
            }
        }
    }
    if (!hit) {
        *llc = tag;
    }
    *llc |= store ? LLC_DIRTY : 0;
    m->l2[line % L2_LINES] = tag;
}

/* A load or store of `size` bytes at linear address `addr`. */
void helper_pmu_mem(CPUX86State *env, target_ulong addr, uint32_t size)
{
    struct X86PMUSim *m = env_archcpu(env)->pmu_sim;
    bool store = size & X86_PMU_MEM_STORE;
    uint64_t first = (uint64_t)addr >> LINE_SHIFT;
    uint64_t last;

    size &= ~X86_PMU_MEM_STORE;
    last = ((uint64_t)addr + MAX(size, 1) - 1) >> LINE_SHIFT;
    if (!m) {
        return;
    }
    access_line(env, m, first, store);
    if (last != first) {
        access_line(env, m, last, store);
    }
}

void helper_pmu_clflush(CPUX86State *env, target_ulong addr)
{
    struct X86PMUSim *m = env_archcpu(env)->pmu_sim;
    uint64_t line = (uint64_t)addr >> LINE_SHIFT;

    if (!m) {
        return;
    }
    if (m->l2[line % L2_LINES] == line + 1) {
        m->l2[line % L2_LINES] = 0;
    }
    if ((m->llc[line % LLC_LINES] & ~LLC_DIRTY) == line + 1) {
        /* A modified line is written back (SDM vol. 2A, CLFLUSH). */
        if ((m->llc[line % LLC_LINES] & LLC_DIRTY) &&
            env_archcpu(env)->pmu_pkg) {
            x86_pmu_uncore_event(env, X86PMU_UNC_CAS_WRITE, line);
        }
        m->llc[line % LLC_LINES] = 0;
    }
}

/* A near CALL: its return address goes on the return stack. */
void helper_pmu_call(CPUX86State *env, target_ulong ret)
{
    struct X86PMUSim *m = env_archcpu(env)->pmu_sim;

    if (!m) {
        return;
    }
    m->rsb[m->rsb_top] = ret;
    m->rsb_top = (m->rsb_top + 1) % RSB_SIZE;
    m->rsb_depth = MIN(m->rsb_depth + 1, RSB_SIZE);
}

/* A near RET to `target`: mispredicted unless the return stack says so. */
void helper_pmu_ret(CPUX86State *env, target_ulong target)
{
    struct X86PMUSim *m = env_archcpu(env)->pmu_sim;

    if (!m) {
        return;
    }
    if (!m->rsb_depth) {
        acc(env)->branch_misses++;
        return;
    }
    m->rsb_top = (m->rsb_top + RSB_SIZE - 1) % RSB_SIZE;
    m->rsb_depth--;
    if (m->rsb[m->rsb_top] != target) {
        acc(env)->branch_misses++;
    }
}

/* An indirect JMP or CALL at `site` to `target`. */
void helper_pmu_indirect(CPUX86State *env, target_ulong site,
                         target_ulong target)
{
    struct X86PMUSim *m = env_archcpu(env)->pmu_sim;
    unsigned i = (site ^ (site >> 9)) % BTB_SIZE;

    if (!m) {
        return;
    }
    if (m->btb_site[i] != site + 1 || m->btb_target[i] != target) {
        acc(env)->branch_misses++;
    }
    m->btb_site[i] = site + 1;
    m->btb_target[i] = target;
}
