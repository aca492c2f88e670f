/*
 * The emulated PMU's last branch records and PEBS (-cpu MODEL,pmu=on under
 * TCG).  The register model (x86-pmu-lbr.c, x86-pmu-pebs.c, from
 * pmutest's emu/model) keeps the stacks and writes the records; this file
 * hands it what only QEMU knows: the branches as they retire, interrupts
 * and exceptions as they are delivered, and the CPU state and guest
 * memory a PEBS record is made of.
 *
 * While the LBRs record, every TB is translated with HF_PMU_LBR and each
 * taken branch calls helper_pmu_branch (near branches, from the
 * translator's knowledge of the target) or helper_pmu_branch_far (far
 * transfers, after the helper that moved CS:EIP).  A PEBS counter that
 * overflows owes a record at the next instruction boundary; pmu.c folds
 * at those boundaries and calls x86_pmu_pebs there.
 *
 * Copyright (c) 2025 The pmutest authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "cpu.h"
#include "exec/exec-all.h"
#include "exec/helper-proto.h"
#include "exec/memory.h"
#include "hw/core/cpu.h"
#include "pmu-ext.h"

/*
 * The LBR and PEBS properties over the shape's (emu/model's
 * x86-pmu-config.c): pmu-lbr=off drops the LBRs, pmu-lbr=arch gives
 * architectural LBRs (QEMU 7.2 has no CPU model that has them: Sapphire
 * Rapids came in 8.0); pmu-lbr-depth sets the depth; pmu-pebs-format the
 * PEBS record format, 4 and 5 with adaptive PEBS.
 */
bool x86_pmu_lbr_pebs_config(X86PMUConfig *c, const struct X86PMUProps *p,
                             Error **errp)
{
    if (p->lbr && *p->lbr) {
        if (!strcmp(p->lbr, "off")) {
            c->lbr = X86PMU_LBR_NONE;
            c->lbr_depth = 0;
            if (c->vendor == X86PMU_VENDOR_INTEL) {
                c->perf_caps &= ~0x3full;
            }
        } else if (!strcmp(p->lbr, "arch") &&
                   c->vendor == X86PMU_VENDOR_INTEL) {
            /* CPUID.1CH:EBX: CPL and branch filters, call stack. */
            c->lbr = X86PMU_LBR_ARCH;
            c->lbr_depth = 32;
            c->arch_lbr_ebx = 0x7;
            c->perf_caps |= 0x3f;
        } else {
            error_setg(errp, "pmu-lbr=%s: off, or arch (Intel only)", p->lbr);
            return false;
        }
    }
    if (p->lbr_depth >= 0) {
        c->lbr_depth = p->lbr_depth;
    }
    if (p->pebs_format >= 0) {
        if (!c->ds || p->pebs_format > 5) {
            error_setg(errp, "pmu-pebs-format=%d: needs a shape with PEBS "
                       "(a DS area) and a format of 0-5", p->pebs_format);
            return false;
        }
        c->perf_caps &= ~(0xf00ull | X86PMU_CAP_PEBS_BASELINE);
        c->perf_caps |= (uint64_t)p->pebs_format << 8 |
                        (p->pebs_format >= 4 ? X86PMU_CAP_PEBS_BASELINE : 0);
    }
    return true;
}

void helper_pmu_branch(CPUX86State *env, target_ulong from, target_ulong to,
                       uint32_t kind_cpl)
{
    unsigned cpl = kind_cpl >> 8;

    x86pmu_branch(&env->pmu, kind_cpl & 0xff, from, to, cpl, cpl);
    x86_pmu_branch_retired(env, kind_cpl & 0xff, cpl);
}

void helper_pmu_branch_far(CPUX86State *env, target_ulong from,
                           uint32_t kind_cpl)
{
    unsigned cpl_to = env->hflags & HF_CPL_MASK;

    x86pmu_branch(&env->pmu, kind_cpl & 0xff, from, env->eip, kind_cpl >> 8,
                  cpl_to);
    /* Counted at the level it goes to with pmu-target-mode. */
    x86_pmu_branch_retired(env, kind_cpl & 0xff,
                           env->pmu.cfg.target_mode ? cpl_to :
                           kind_cpl >> 8);
}

/*
 * Delivered: the LBRs record it as a far transfer from the EIP the event
 * was taken at (a fault's instruction, INT n itself, or the interrupted
 * instruction) to the handler.
 */
void x86_pmu_interrupt_end(CPUX86State *env, target_ulong from,
                           unsigned cpl_from)
{
    if (x86pmu_lbr_recording(&env->pmu)) {
        x86pmu_branch(&env->pmu, X86PMU_BR_FAR, from, env->eip, cpl_from,
                      env->hflags & HF_CPL_MASK);
    }
    x86_pmu_mode_change_end(env);
}

static bool pebs_read(void *opaque, uint64_t la, void *buf, unsigned len)
{
    return cpu_memory_rw_debug(opaque, la, buf, len, false) == 0;
}

static bool pebs_write(void *opaque, uint64_t la, const void *buf,
                       unsigned len)
{
    return cpu_memory_rw_debug(opaque, la, (void *)buf, len, true) == 0;
}

/*
 * Architectural PEBS writes its buffer by physical address
 * (IA32_PEBS_BASE; emu/model's x86-pmu-arch-pebs.c): the CPU's own
 * address space, as a DMA-like store that no page table translates.
 */
static bool pebs_write_phys(void *opaque, uint64_t pa, const void *buf,
                            unsigned len)
{
    CPUState *cs = opaque;

    return address_space_write(cs->as, pa, MEMTXATTRS_UNSPECIFIED, buf,
                               len) == MEMTX_OK;
}

/*
 * The owed PEBS record, with the state at this instruction boundary: RIP
 * is the next instruction, the eventing IP the one that overflowed the
 * counter (step mode folds it alone, so it is known exactly: skid 0).
 * Returns the PMIs to deliver (the buffer threshold's).
 */
unsigned x86_pmu_pebs(CPUX86State *env, uint64_t rip, uint64_t eventing_ip)
{
    X86PMUMachine m = {
        .rip = rip,
        .eventing_ip = eventing_ip,
        .rflags = cpu_compute_eflags(env),
        .tsc = cpu_get_tsc(env),
        .opaque = env_cpu(env),
        .read = pebs_read,
        .write = pebs_write,
        .write_phys = pebs_write_phys,
    };
    int i;

    if (!x86pmu_pebs_pending(&env->pmu)) {
        return 0;
    }
    for (i = 0; i < 16; i++) {
        m.gpr[i] = env->regs[i];
        m.xmm[i][0] = env->xmm_regs[i].ZMM_Q(0);
        m.xmm[i][1] = env->xmm_regs[i].ZMM_Q(1);
    }
    return x86pmu_pebs_assist(&env->pmu, &m);
}
