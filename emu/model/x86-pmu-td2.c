/* SPDX-License-Identifier: MIT */
/*
 * PERF_METRICS' level-2 bytes (4-7: heavy operations, branch mispredicts,
 * fetch latency, memory bound; Linux arch/x86/include/asm/perf_event.h
 * INTEL_TD_METRIC_*, SDM vol. 3B "Performance Metrics") on the shapes
 * whose cores fill them (cfg.td_level2: Golden Cove and later P-cores,
 * Linux intel_pmu_init_glc's 8 top-down events).
 *
 * Each is a part of a level-1 class (Intel's TMA_Metrics-full.csv:
 * Heavy_Operations under Retiring, Branch_Mispredicts under
 * Bad_Speculation, Fetch_Latency under Frontend_Bound, Memory_Bound under
 * Backend_Bound).  The model's split (x86pmu_td_split) makes each part
 * all or none of its class: no instruction it retires is heavy (one slot
 * each), all bad speculation is mispredicted branches (it has no machine
 * clears), all of the frontend's slot a cycle is latency, and no backend
 * slot waits on memory (its slots ignore the cache model).  So the parts'
 * bytes are the level-1 bytes they are all of, or 0.
 *
 * Copyright (c) 2026 The pmutest authors
 */

#include "x86-pmu-int.h"

uint64_t x86pmu_td_level2(const X86PMUState *s, uint64_t level1)
{
    uint64_t bad_spec = (level1 >> 8) & 0xff, frontend = (level1 >> 16) & 0xff;
    uint64_t heavy = 0;

    if (!s->cfg.td_level2) {
        return 0;
    }
    if (x86pmu_defect(s, X86PMU_DEFECT_TD_LEVEL2_OVER_PARENT)) {
        heavy = 0xff;
    }
    return heavy << 32 | bad_spec << 40 | frontend << 48;
}
