/*
 * The emulated PMU's models of things TCG does not have: a cache
 * hierarchy (last-level cache references and misses) and a branch
 * predictor (mispredicted branches).  See pmu-sim.c.
 *
 * Copyright (c) 2025 The pmutest authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef I386_TCG_PMU_SIM_H
#define I386_TCG_PMU_SIM_H

/* Allocate the vCPU's models the first time a counter needs them. */
void pmu_sim_ensure(X86CPU *cpu);
/* IA32_PRED_CMD.IBPB: forget every predicted target. */
void pmu_sim_ibpb(X86CPU *cpu);

#endif
