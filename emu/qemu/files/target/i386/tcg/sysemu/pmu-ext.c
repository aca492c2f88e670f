/*
 * The emulated PMU's newer parts on QEMU's side (tcg/sysemu/pmu.c has the
 * rest): the version 6 core types, which no QEMU CPU model has, come as
 * named shapes of the register model (x86-pmu-v6.c); two properties set
 * CPUID.23H.0:EBX and AMD's LbrAndPmcFreeze; and the model learns the SVM
 * state that AMD's HostOnly/GuestOnly bits count by.
 *
 * Copyright (c) 2025 The pmutest authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "cpu.h"
#include "pmu-ext.h"

bool x86_pmu_named_shape(const char *name, X86PMUVendor vendor,
                         X86PMUConfig *c, Error **errp)
{
    g_autoptr(GString) known = g_string_new("");
    unsigned i;

    if (vendor == X86PMU_VENDOR_INTEL && x86pmu_shape_named(name, c)) {
        return true;
    }
    for (i = 0; x86pmu_shape_name(i); i++) {
        g_string_append_printf(known, " %s", x86pmu_shape_name(i));
    }
    error_setg(errp, "pmu-shape: %s '%s'; the named shapes are Intel "
               "core types:%s", vendor == X86PMU_VENDOR_INTEL ?
               "unknown shape" : "an Intel shape on an AMD CPU:", name,
               known->str);
    return false;
}

void x86_pmu_ext_props(const struct X86PMUProps *p, X86PMUConfig *c)
{
    if (p->v6_caps != UINT64_MAX) {
        c->v6_features = p->v6_caps;
    }
    if (p->lbr_pmc_freeze != ON_OFF_AUTO_AUTO) {
        c->lbr_pmc_freeze = p->lbr_pmc_freeze == ON_OFF_AUTO_ON;
    }
    /*
     * CPUID's IBPB bit (TCG filters it): the emulator implements what
     * IA32_PRED_CMD.IBPB does to its branch predictor model (pmu-sim.c).
     */
    if (p->ibpb != ON_OFF_AUTO_AUTO) {
        c->ibpb = p->ibpb == ON_OFF_AUTO_ON;
    }
}

/*
 * Before the model counts: HostOnly counts outside a guest and GuestOnly
 * inside one only while EFER.SVME is set (APM vol. 2, 13.2).  Events a TB
 * accounted before a VMRUN or #VMEXIT are counted in the state of the
 * next fold.
 */
void x86_pmu_sync_svm(CPUX86State *env)
{
    if (env->pmu.cfg.vendor == X86PMU_VENDOR_AMD) {
        x86pmu_set_svm(&env->pmu, env->efer & MSR_EFER_SVME,
                       env->hflags & HF_GUEST_MASK);
    }
}
