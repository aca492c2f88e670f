/* SPDX-License-Identifier: MIT */
/*
 * The x86 PMU model's architectural PEBS, below the counting core: the
 * shape that has it, CPUID.23H sub-leaves 4 and 5, IA32_PEBS_BASE and
 * IA32_PEBS_INDEX, the PEBS half of each counter's IA32_PMC_GPn/FXm_CFG_C,
 * and which overflows PEBS takes.  The record those owe is written over
 * the counting core (x86-pmu-arch-pebs-record.c), as DS-area PEBS splits.  It replaces DS-area PEBS: a shape with it has PEBS
 * record format 0xF in IA32_PERF_CAPABILITIES[11:8], and so no
 * IA32_PEBS_ENABLE and no MSR_PEBS_DATA_CFG (x86-pmu-pebs.c).
 *
 * Sources: the Intel ISE's chapter "Architectural PEBS" (the SDM's text
 * since 2024) is not quoted in this repository; the registers, bits and
 * record layout are Linux's reading of it in the arch-PEBS series merged
 * for 6.19: tip cc5755ee9b8b (CPUID.23H.4/5, "IA32_PEBS_ENABLE and
 * MSR_PEBS_DATA_CFG ... no longer exist"), d21954c8a0ff (the record
 * header, the groups and their order, IA32_PEBS_INDEX's fields, the
 * threshold's GLOBAL_STATUS bit 54), 2721e8da2de7 (IA32_PEBS_BASE: a
 * physical address, SIZE in [3:0], 4 KiB << SIZE), and "Setup PEBS data
 * configuration and enable legacy groups" (the CFG_C bits, the 32-bit
 * reload value, the threshold in 16-byte units).  Where those leave a
 * behaviour open the model picks one and says "model's choice";
 * pmutest's checks assert only what the sources pin down.
 *
 * Copyright (c) 2026 The pmutest authors
 */

#include <string.h>

#include "x86-pmu-int.h"
#include "x86-pmu-arch-pebs.h"

/* --- Shapes --- */

/*
 * Clearwater Forest (Darkmont-X E-cores, family 6 model 0xDD), as far as
 * public sources give its CPUID: no dump of it is reachable, so leaf 0AH
 * and CPUID.23H sub-leaves 0-3 are those of its nearest dumped relative,
 * Lunar Lake's Skymont E-core (InstLatx64 CPUID B06D1, as the
 * lunarlake-e shape in x86-pmu-v6.c), whose 23.1 bitmaps GP 0xFF and
 * fixed 0x77 Intel's LKVS (BM/pmu/pmu_tests.sh, bitmap_6_test, listed in
 * BM/pmu/tests-cwf) expects of Clearwater Forest, as it expects UMASK2
 * and EQ (umask2_cpuid_test, zbit_cpuid_test), CPUID.23H.0:EAX[5]
 * (arch_pebs_cpuid_test) and CPUID.23H.4:EBX[29], GPRs
 * (arch_pebs_gp_reg_group_test).  Not a hybrid part.  CPUID.23H.4/5
 * otherwise are the model's choice: EBX offers the groups Linux drives
 * (memory info 30, GPRs 29, XMM 17, LBR [9:8]) but not the counters
 * group (which real Clearwater Forest has: LKVS
 * arch_pebs_counter_group_test); every counter can use PEBS, PDIST on
 * GP 0 and fixed 0.  Architectural LBRs, 32 deep (CPUID.1CH).
 */
typedef struct ArchPebsShape {
    const char *name, *what;
    uint32_t model, caps;
    uint64_t counters, pdist;
} ArchPebsShape;

static const ArchPebsShape arch_pebs_shapes[] = {
    { "clearwater-forest",
      "Clearwater Forest-like (Darkmont E-core, 06_DDH): version 6, "
      "CPUID.23H GP 0-7, fixed 0-2 and 4-6 (Skymont's, InstLatx64 B06D1; "
      "LKVS bitmap_6), architectural PEBS on every counter with memory "
      "info, GPR, XMM and LBR groups (CPUID.23H.4/5: model's choice)",
      0xdd, 0x60020300, 0x77000000ffull, 0x100000001ull },
};

const char *x86pmu_arch_pebs_shape_name(unsigned i)
{
    return i < sizeof(arch_pebs_shapes) / sizeof(arch_pebs_shapes[0]) ?
           arch_pebs_shapes[i].name : NULL;
}

const char *x86pmu_arch_pebs_shape(const char *name, X86PMUConfig *c)
{
    unsigned i;

    for (i = 0; name && x86pmu_arch_pebs_shape_name(i); i++) {
        const ArchPebsShape *a = &arch_pebs_shapes[i];

        if (strcmp(a->name, name) != 0) {
            continue;
        }
        x86pmu_config_defaults(c, X86PMU_VENDOR_INTEL);
        c->family = 6;
        /* The reference clock as the other version 6 shapes (a choice). */
        c->ref_ratio = 80;
        c->ref_report = X86PMU_REF_REPORT_CPUID15;
        /* 3CH/01H at the TSC's rate: CPU_CLK_UNHALTED.REF_TSC_P (Intel
         * perfmon CWF/events/clearwaterforest_core.json). */
        c->ref_at_tsc = true;
        x86pmu_config_lunarlake_0a(c); /* leaf 0AH as Skymont's */
        /* PEBS format 0xF: architectural PEBS. */
        c->perf_caps = X86PMU_CAP_FREEZE_WHILE_SMM | X86PMU_CAP_FW_WRITE |
                       0xf00ull | 0x3f;
        c->leaf23 = true;
        c->leaf23_gp = (uint32_t)a->counters;
        c->leaf23_fixed = (uint32_t)(a->counters >> 32);
        c->v6_features = X86PMU_V6_UMASK2 | X86PMU_V6_EQ;
        c->leaf23_events = true;
        c->events_avail23 = 0x1f7f;
        c->arch_pebs = true;
        c->arch_pebs_caps = a->caps;
        c->arch_pebs_counters = a->counters;
        c->arch_pebs_pdist = a->pdist;
        c->ds = true;
        c->lbr = X86PMU_LBR_ARCH;
        c->lbr_depth = 32;
        c->arch_lbr_ebx = 0x7;
        return a->what;
    }
    return NULL;
}

/* --- Presence --- */

bool x86pmu_arch_pebs_present(const X86PMUState *s)
{
    return s->cfg.arch_pebs && !x86pmu_is_amd(s);
}

/* --- CPUID --- */

void x86pmu_arch_pebs_cpuid(const X86PMUState *s, uint32_t leaf,
                            uint32_t subleaf, uint32_t *eax, uint32_t *ebx,
                            uint32_t *ecx, uint32_t *edx)
{
    const X86PMUConfig *c = &s->cfg;

    if (leaf != 0x23 || !c->leaf23 || !x86pmu_arch_pebs_present(s)) {
        return;
    }
    switch (subleaf) {
    case 0:
        /* EAX[4] and [5]: sub-leaves 4 and 5 valid (Linux cpuid35_eax). */
        *eax |= 1u << 4 | 1u << 5;
        break;
    case 4:
        /* EBX bit k: CFG_C bit 32 + k may be set (Linux: caps = EBX << 32). */
        *eax = *ecx = *edx = 0;
        *ebx = c->arch_pebs_caps;
        break;
    case 5:
        /* EAX/ECX: GP/fixed counters with PEBS; EBX/EDX: with PDIST. */
        *eax = (uint32_t)c->arch_pebs_counters;
        *ebx = (uint32_t)c->arch_pebs_pdist;
        *ecx = (uint32_t)(c->arch_pebs_counters >> 32);
        *edx = (uint32_t)(c->arch_pebs_pdist >> 32);
        break;
    default:
        break;
    }
}

/* --- Registers --- */

uint64_t x86pmu_arch_pebs_status_bits(const X86PMUState *s)
{
    return x86pmu_arch_pebs_present(s) ? ARCH_PEBS_STATUS_THRESH : 0;
}

static bool pebs_counter(const X86PMUState *s, unsigned idx)
{
    bool exists = idx < 32 ? x86pmu_gp_exists(s, idx) :
                  x86pmu_fixed_exists(s, idx - 32);

    return x86pmu_arch_pebs_present(s) && exists && idx < 64 &&
           ((s->cfg.arch_pebs_counters >> idx) & 1);
}

bool x86pmu_arch_pebs_cfg_c_exists(const X86PMUState *s, unsigned idx)
{
    return pebs_counter(s, idx);
}

/*
 * The bits of counter idx's CFG_C that take writes: the reload value,
 * PEBS on, and the groups CPUID.23H.4:EBX offers (anything else #GP:
 * model's choice, as for the other reserved PMU bits).
 */
uint64_t x86pmu_arch_pebs_cfg_c_valid(const X86PMUState *s, unsigned idx)
{
    if (!pebs_counter(s, idx)) {
        return 0;
    }
    return ARCH_PEBS_CFG_RELOAD | ARCH_PEBS_CFG_EN |
           ((uint64_t)s->cfg.arch_pebs_caps << 32 & ARCH_PEBS_CFG_GROUPS);
}

X86PMUAccess x86pmu_arch_pebs_rdmsr(X86PMUState *s, uint32_t msr,
                                    uint64_t *val)
{
    if (msr != ARCH_PEBS_MSR_BASE && msr != ARCH_PEBS_MSR_INDEX) {
        return X86PMU_NOT_MINE;
    }
    if (!x86pmu_arch_pebs_present(s)) {
        return X86PMU_GP;
    }
    *val = msr == ARCH_PEBS_MSR_BASE ? s->pebs_base : s->pebs_index;
    return X86PMU_OK;
}

X86PMUAccess x86pmu_arch_pebs_wrmsr(X86PMUState *s, uint32_t msr,
                                    uint64_t val)
{
    if (msr != ARCH_PEBS_MSR_BASE && msr != ARCH_PEBS_MSR_INDEX) {
        return X86PMU_NOT_MINE;
    }
    if (!x86pmu_arch_pebs_present(s)) {
        return X86PMU_GP;
    }
    /* Reserved bits (IA32_PEBS_BASE [11:4], the index's gaps) #GP. */
    if (val & ~(msr == ARCH_PEBS_MSR_BASE ? ARCH_PEBS_BASE_VALID : ARCH_PEBS_INDEX_VALID)) {
        return X86PMU_GP;
    }
    if (msr == ARCH_PEBS_MSR_BASE) {
        s->pebs_base = val;
    } else {
        s->pebs_index = val;
    }
    return X86PMU_OK;
}

/* --- Overflow and record --- */

/*
 * A counter overflowed: with PEBS on in its CFG_C its record is owed at
 * the next instruction boundary and PEBS takes the overflow: no status
 * bit and no PMI of its own (as Linux, which clears INT for PEBS events
 * and handles them from the threshold PMI; model's choice, as for
 * DS-area PEBS in x86-pmu-pebs.c).
 */
bool x86pmu_arch_pebs_overflow(X86PMUState *s, unsigned idx)
{
    if (!pebs_counter(s, idx)) {
        return false;
    }
    if (!(x86pmu_arch_pebs_cfg_c(s, idx) & ARCH_PEBS_CFG_EN) &&
        !x86pmu_defect(s, X86PMU_DEFECT_ARCH_PEBS_UNCONFIGURED_RECORD)) {
        return false;
    }
    s->pebs_pending |= BIT64(idx);
    return true;
}
