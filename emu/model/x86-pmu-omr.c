/* SPDX-License-Identifier: MIT */
/*
 * Off-module response (OMR) and the Diamond Rapids shape that has it.
 *
 * Diamond Rapids and Nova Lake replace MSR_OFFCORE_RSP_0/1 with four
 * off-module response MSRs, OFFMODULE_RSP_0-3 at 0x3E0-0x3E3 (Linux
 * commit 4e955c08d6dc, msr-index.h MSR_OMR_0-3, citing Intel's ISE
 * section "Off-Module Response (OMR) Facility"): one event code selects
 * all four, umask bit n naming OMR n.  Panther Cove, Diamond Rapids'
 * core, selects them with event 2AH and takes bits 15:0, 55:32 and 62
 * (Linux d345b6bb8860, intel_pnc_extra_regs: valid mask
 * 0x40ffffff0000ffff).  The SDM has no OMR section yet; Intel publishes no
 * Diamond Rapids event file.
 *
 * The model's answer to a request, written from the values Intel and
 * Linux publish for the layout: request bit 0 is a demand data read and
 * bit 1 an RFO (Linux pnc_hw_cache_extra_regs: LLC-loads 0x...0001,
 * LLC-stores 0x...0002); bit 62 matches every response (LLC-loads is
 * 0x4000000000000001, "any response" as OCR's bit 16 was); an L3 miss is
 * answered with bit 41 and bit 48 (both in Linux's LLC-load-misses
 * 0xfffff000000001, bits 55:36, and in Nova Lake's
 * MEM_LOAD_L2_MISS_RETIRED.L3_MISS 0xFF03F000000001 and .MEM_REGION_1
 * 0xF5020000000001, perfmon novalake_coyotecove_core.json V1.00); an L3
 * hit with bit 34 and bit 48 (MEM_LOAD_L2_MISS_RETIRED.L3_HIT_SAME_CBB
 * 0xED000400000001, which has no bit of 55:36 but 48-55).  Which bit is a
 * supplier and which a snoop result is the model's reading: only whether
 * a published value counts a hit or a miss is fixed by the sources.
 *
 * Copyright (c) 2026 The pmutest authors
 */

#include <string.h>

#include "x86-pmu-int.h"

void x86pmu_omr_layout(X86PMUOffcoreConfig *oc)
{
    unsigned i;

    memset(oc, 0, sizeof(*oc));
    oc->omr = true;
    oc->nmsrs = X86PMU_OFFCORE_MAX;
    for (i = 0; i < X86PMU_OFFCORE_MAX; i++) {
        oc->event[i] = 0x2a;
        oc->umask[i] = 1u << i;
        oc->valid[i] = 0x40ffffff0000ffffull;
    }
    oc->any_response = BIT64(62);
    oc->hit_supplier = BIT64(34);
    oc->hit_snoop = BIT64(48);
    oc->miss_supplier = BIT64(41);
    oc->miss_snoop = BIT64(48);
}

/*
 * Diamond Rapids (family 19, model 01H: Linux intel-family.h
 * INTEL_DIAMONDRAPIDS_X IFM(19, 0x01)), a server part, not hybrid.  No
 * CPUID dump of it is public: the counters are the Lion Cove P-core
 * shape's (lunarlake-p: version 6, CPUID.23H, UMASK2 and EQ, PERF_METRICS;
 * Linux intel_pmu_init_pnc() starts from intel_pmu_init_glc() as Lion
 * Cove's does) with 8 GP counters, the most Linux's Panther Cove counter
 * constraints name (intel_pnc_event_constraints: masks up to 0xfc), fixed
 * counters 0-3 (SLOTS on 3) and architectural events 0-7, enumerated alike
 * in leaf 0AH and 23H as on a part with one core type; PERF_METRICS with
 * its level-2 bytes as Lion Cove's (Linux: 8 top-down metric events on
 * Panther Cove); off-module response instead of offcore response.
 */
const char *x86pmu_dmr_shape(X86PMUConfig *c)
{
    c->family = 19;
    c->hybrid = false;
    c->core_type = 0;
    c->num_gp = 8;
    c->leaf23_gp = 0xff;
    c->num_fixed = 4;
    c->fixed_bitmap = 0xf;
    c->leaf23_fixed = 0xf;
    c->events_len = 8;
    c->events_unavail = 0;
    c->events_avail23 = 0xff;
    x86pmu_omr_layout(&c->offcore);
    return "Diamond Rapids (Panther Cove, family 19 model 01H): version 6, "
           "CPUID.23H GP 0-7, fixed 0-3, UMASK2 and EQ, events 0-7, "
           "PERF_METRICS with level 2, off-module response OMR_0-3 (Linux "
           "4e955c08d6dc, d345b6bb8860; counters as the Lion Cove shape)";
}
