/* SPDX-License-Identifier: MIT */
/*
 * Offcore response: MSR_OFFCORE_RSP_0/1 and the OFFCORE_RESPONSE events
 * that count through them (SDM vol. 3B, "Off-core Response Performance
 * Monitoring" of the Skylake microarchitecture; vol. 4 table 2-2 at
 * 1A6H/1A7H).
 *
 * The model's answer to a request: an L3 hit comes from the L3 (supplier
 * bit L3_HIT, snoop result SNOOP_NOT_NEEDED), an L3 miss from local DRAM
 * (supplier L3_MISS_LOCAL_DRAM, snoop result SNOOP_MISS).  A value counts
 * a request when it selects the request's type and either ANY_RESPONSE or
 * both the supplier and the snoop result of that answer, which is how
 * Intel's event values combine the fields (perfmon skylake_core.json:
 * L3_MISS.ANY_SNOOP selects every snoop bit, L3_MISS_LOCAL_DRAM.SNOOP_MISS
 * one).  Only demand data reads and RFOs are requested (bits 0 and 1):
 * the model has no prefetchers and no code fetches.
 *
 * Copyright (c) 2025 The pmutest authors
 */

#include "x86-pmu-int.h"

/* A reserved bit raises #GP (Linux fixed its masks against that #GP). */
X86PMUAccess x86pmu_offcore_write(X86PMUState *s, unsigned i, uint64_t val)
{
    if (i >= s->cfg.offcore.nmsrs) {
        return X86PMU_GP;
    }
    if ((val & ~s->cfg.offcore.valid[i]) &&
        !x86pmu_defect(s, X86PMU_DEFECT_RESERVED_BITS_ACCEPTED)) {
        return X86PMU_GP;
    }
    s->offcore_rsp[i] = val;
    return X86PMU_OK;
}

static bool matches(const X86PMUState *s, uint64_t rsp, X86PMURequest req,
                    bool l3_hit)
{
    const X86PMUOffcoreConfig *oc = &s->cfg.offcore;
    uint64_t supplier = l3_hit ? oc->hit_supplier : oc->miss_supplier;
    uint64_t snoop = l3_hit ? oc->hit_snoop : oc->miss_snoop;

    if (!(rsp & BIT64(req))) {
        return false;
    }
    if (x86pmu_defect(s, X86PMU_DEFECT_OFFCORE_IGNORES_RESPONSE) ||
        (rsp & oc->any_response)) {
        return true;
    }
    return (rsp & supplier) && (!snoop || (rsp & snoop));
}

unsigned x86pmu_count_offcore(X86PMUState *s, X86PMURing ring,
                              const uint64_t rsp[2], X86PMURequest req,
                              bool l3_hit, uint64_t n)
{
    const X86PMUOffcoreConfig *oc = &s->cfg.offcore;
    unsigned i, pmis = 0, p;

    for (i = 0; n && i < oc->nmsrs; i++) {
        if (matches(s, rsp[i], req, l3_hit)) {
            p = x86pmu_count_raw(s, ring, oc->event[i], oc->umask[i], n);
            pmis = p ? p : pmis;
        }
    }
    return pmis;
}
