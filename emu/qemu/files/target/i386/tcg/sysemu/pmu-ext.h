/*
 * The emulated PMU's newer parts on QEMU's side: the named shapes of the
 * version 6 core types, the properties of CPUID.23H and AMD's
 * LbrAndPmcFreeze, and the SVM state HostOnly/GuestOnly count by.  See
 * pmu-ext.c.
 *
 * Copyright (c) 2025 The pmutest authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef I386_TCG_PMU_EXT_H
#define I386_TCG_PMU_EXT_H

/* pmu-shape=NAME: the model's named shape, instead of the CPU model's. */
bool x86_pmu_named_shape(const char *name, X86PMUVendor vendor,
                         X86PMUConfig *c, Error **errp);
/* pmu-v6-caps, pmu-lbr-pmc-freeze and pmu-ibpb, on top of the shape. */
void x86_pmu_ext_props(const struct X86PMUProps *p, X86PMUConfig *c);
/* EFER.SVME and guest mode, for AMD's HostOnly/GuestOnly bits. */
void x86_pmu_sync_svm(CPUX86State *env);
/* A taken branch retired: the branch events by kind (pmu.c). */
void x86_pmu_branch_retired(CPUX86State *env, X86PMUBranch kind,
                            unsigned cpl);

#endif
