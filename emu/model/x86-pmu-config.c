/* SPDX-License-Identifier: MIT */
/*
 * The x86 PMU model's configurations: the PMU shapes of real processors,
 * the rules a configuration must follow, and the names of the quirks and
 * defects.
 *
 * Copyright (c) 2025 The pmutest authors
 */

#include <string.h>

#include "x86-pmu-int.h"

/* --- Shapes --- */

/*
 * Intel shapes by QEMU CPU model: its family-6 model number alone would
 * not do (QEMU 7.2 gives Icelake-Server the model number of Snowridge).
 * Only IA32_PERF_CAPABILITIES bits the model implements are set: 12
 * FREEZE_WHILE_SMM and 13 FW_WRITE here, the LBR and PEBS bits from
 * lbr_pebs_shapes below, 15 PERF_METRICS by family and model
 * (perf_metrics_shape).
 */
typedef struct IntelShape {
    const char *qemu_models;    /* "A|B|C" */
    const char *what;           /* the part and the sources */
    uint8_t version, num_gp, gp_width, num_fixed, fixed_width, events_len;
    bool pdcm, anythread_deprecated;
    uint64_t perf_caps;
    /* 3CH/01H on a GP counter: TSC ticks per tick, and where it is said. */
    uint8_t ref_ratio;
    X86PMURefReport ref_report;
    X86PMUUarch uarch;          /* its model-specific events */
} IntelShape;

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define CAPS_SMM   X86PMU_CAP_FREEZE_WHILE_SMM
#define CAPS_FW    X86PMU_CAP_FW_WRITE
#define REF_NONE   X86PMU_REF_REPORT_NONE
#define REF_PLAT   X86PMU_REF_REPORT_PLATFORM_INFO
#define REF_CPUID  X86PMU_REF_REPORT_CPUID15
#define U_NONE     X86PMU_UARCH_NONE
#define U_NHM      X86PMU_UARCH_NEHALEM
#define U_SNB      X86PMU_UARCH_SANDYBRIDGE
#define U_SKL      X86PMU_UARCH_SKYLAKE
#define U_ICL      X86PMU_UARCH_ICELAKE

/*
 * The clock 3CH/01H counts on a GP counter (SDM vol. 3B, architectural
 * events table: "measures bus cycles" on Core Solo/Duo and Core 2; Linux,
 * Kan Liang, "perf/x86/intel: enable CPU ref_cycles for GP counter", LKML
 * 2017-05-19: a constant ratio to the TSC, in MSR_PLATFORM_INFO from
 * Nehalem to Broadwell, in CPUID.15H from Skylake, 1 on Goldmont and
 * later Atoms).  Each row takes a ratio a part of that family has: bus
 * clock 166 MHz (Core Duo T2500, 2.0 GHz), 266 MHz (Core 2 Duo E6600,
 * 2.4 GHz), 133 MHz (Atom N270, 1.6 GHz; Core i7-920, 2.66 GHz), 100 MHz
 * (Core i7-4770, 3.4 GHz); crystal 24 MHz (Skylake client, 3.0 GHz), 25
 * MHz (Ice Lake server, 2.0 GHz).  Before Nehalem the CPU does not report
 * it in a register the model emulates.
 */
static const IntelShape intel_shapes[] = {
    { "coreduo",
      "Core Duo (Yonah, 06_0EH): version 1, 2 GP x 40 bits (SDM vol. 3B, "
      "\"Architectural Performance Monitoring Version 1\": Core Solo and "
      "Core Duo support version 1)",
      1, 2, 40, 0, 0, 7, false, false, 0, 12, REF_NONE, U_NONE },
    { "core2duo|Conroe|Penryn",
      "Core 2 (Merom/Penryn, 06_0FH/06_17H): version 2, 2 GP x 40, 3 fixed "
      "x 40 (SDM vol. 3B, \"Architectural Performance Monitoring Version 2\": "
      "first in Core 2 Duo T7700; Linux intel_pmu_init assumes the 3 fixed "
      "counters)",
      2, 2, 40, 3, 40, 7, true, false, 0, 9, REF_NONE, U_NONE },
    { "n270",
      "Atom N270 (Bonnell, 06_1CH): version 3, 2 GP x 40, 3 fixed x 40 "
      "(SDM vol. 3B, \"Performance Monitoring for Processors Based on Intel "
      "Atom Microarchitecture\")",
      3, 2, 40, 3, 40, 7, true, false, 0, 12, REF_NONE, U_NONE },
    { "Nehalem|Westmere",
      "Nehalem/Westmere (06_1AH/06_2CH): version 3, 4 GP x 48, 3 fixed x 48 "
      "(SDM vol. 3B, \"Performance Monitoring for Processors Based on Intel "
      "Microarchitecture Code Name Nehalem\")",
      3, 4, 48, 3, 48, 7, true, false, 0, 20, REF_PLAT, U_NHM },
    { "SandyBridge",
      "Sandy Bridge (06_2AH): version 3, 4 GP x 48 (per thread with HT), 3 "
      "fixed x 48, FREEZE_WHILE_SMM (SDM vol. 3B, \"Performance Monitoring "
      "for 2nd Generation Intel Core Processors\"); full-width writes came "
      "with Ivy Bridge (Linux 069e0c3c4058)",
      3, 4, 48, 3, 48, 7, true, false, CAPS_SMM, 34, REF_PLAT, U_SNB },
    { "IvyBridge|Haswell|Broadwell",
      "Ivy Bridge/Haswell/Broadwell (06_3AH/06_3CH/06_3DH): version 3, 4 GP "
      "x 48, 3 fixed x 48, full-width writes (Linux 069e0c3c4058 \"perf/x86/"
      "intel: Support full width counting\"), FREEZE_WHILE_SMM",
      3, 4, 48, 3, 48, 7, true, false, CAPS_SMM | CAPS_FW, 34, REF_PLAT,
      U_SNB },
    { "Denverton",
      "Atom C3000 (Goldmont, 06_5FH): version 4, 4 GP x 48, 3 fixed x 48 "
      "(SDM vol. 3B, \"Performance Monitoring for Goldmont "
      "Microarchitecture\")",
      4, 4, 48, 3, 48, 7, true, false, CAPS_SMM | CAPS_FW, 1, REF_NONE,
      U_NONE },
    { "Skylake-Client|Skylake-Server|Cascadelake-Server|Cooperlake",
      "Skylake and its successors (06_5EH/06_55H): version 4, 4 GP x 48 (per "
      "thread with HT), 3 fixed x 48, full-width writes, FREEZE_WHILE_SMM "
      "(SDM vol. 3B, \"Architectural Performance Monitoring Version 4\": "
      "first in Skylake)",
      4, 4, 48, 3, 48, 7, true, false, CAPS_SMM | CAPS_FW, 125, REF_CPUID,
      U_SKL },
    { "Icelake-Server|SapphireRapids",
      "Ice Lake/Sapphire Rapids (06_6AH/06_8FH): version 5, 8 GP x 48, 4 "
      "fixed x 48 (the fourth counts top-down slots), 8 events, AnyThread "
      "deprecated, PERF_METRICS (level 2 on 06_8FH) (SDM vol. 3B, "
      "\"Performance Monitoring for Processors Based on Ice Lake "
      "Microarchitecture\" and \"Architectural Performance Monitoring "
      "Version 5\")",
      5, 8, 48, 4, 48, 8, true, true, CAPS_SMM | CAPS_FW, 80, REF_CPUID,
      U_ICL },
};

/*
 * LBRs and PEBS of the same parts (x86-pmu-lbr.c, x86-pmu-pebs.c): the
 * legacy LBR stack's depth and record format (IA32_PERF_CAPABILITIES[5:0])
 * or architectural LBRs (format 0x3F), and the PEBS record format with
 * trap-like records, saved architectural registers and, from Ice Lake,
 * adaptive PEBS (bits 6, 7, 11:8, 14).  Depths: SDM vol. 3B, the "LBR
 * Stack" section of each microarchitecture (16 entries at 680H from
 * Nehalem, 32 from Skylake) and Linux intel_pmu_lbr_init_*; formats: SDM
 * "IA32_PERF_CAPABILITIES", Linux arch/x86/events/intel/lbr.c and ds.c
 * (format 1 Nehalem-Ivy Bridge, 2 Haswell, 3 Skylake, 4 Ice Lake, 5
 * Sapphire Rapids: "perf/x86/intel: Enable PEBS format 5", 2145e77fecfb);
 * QEMU's arch-LBR work reports LBR format 0x3F.  Sapphire Rapids' CPUID.1CH
 * announces every filter and the call stack; the LBR_INFO fields (timed
 * LBRs, branch type, mispredicts) are not emulated, so ECX claims none.
 */
#define LBR_PEBS_CAPS(lbr_fmt, pebs_fmt, adaptive) \
    ((uint64_t)(lbr_fmt) | X86PMU_CAP_PEBS_TRAP | X86PMU_CAP_PEBS_ARCH_REG | \
     (uint64_t)(pebs_fmt) << 8 | ((adaptive) ? X86PMU_CAP_PEBS_BASELINE : 0))

typedef struct LbrPebsShape {
    const char *qemu_models;
    X86PMULbrKind lbr;
    uint8_t lbr_depth;
    uint64_t perf_caps;
} LbrPebsShape;

static const LbrPebsShape lbr_pebs_shapes[] = {
    { "Nehalem|Westmere|SandyBridge|IvyBridge", X86PMU_LBR_LEGACY, 16,
      LBR_PEBS_CAPS(3, 1, false) },
    { "Haswell|Broadwell", X86PMU_LBR_LEGACY, 16, LBR_PEBS_CAPS(4, 2, false) },
    { "Skylake-Client|Skylake-Server|Cascadelake-Server|Cooperlake",
      X86PMU_LBR_LEGACY, 32, LBR_PEBS_CAPS(5, 3, false) },
    { "Icelake-Server", X86PMU_LBR_LEGACY, 32, LBR_PEBS_CAPS(5, 4, true) },
    { "SapphireRapids", X86PMU_LBR_ARCH, 32, LBR_PEBS_CAPS(0x3f, 5, true) },
};

static bool name_in(const char *list, const char *name)
{
    size_t n = strlen(name);
    const char *p = list;

    while (p && *p) {
        const char *end = strchr(p, '|');
        size_t len = end ? (size_t)(end - p) : strlen(p);

        if (len == n && memcmp(p, name, n) == 0) {
            return true;
        }
        p = end ? end + 1 : NULL;
    }
    return false;
}

/*
 * AMD shapes by family and model (APM vol. 2, 13.2): four legacy counters
 * from K8 on; PerfCtrExtCore's six from family 15h (Linux
 * amd_core_pmu_init; family 15h BKDG); PerfMonV2 from Zen 4, family 19h
 * models 10h-1Fh, 60h-7Fh, A0h-AFh, and family 1Ah (Linux "perf/x86/amd/
 * core: Add PerfMonV2 counter control"; PPR for family 19h model 11h,
 * CPUID Fn8000_0022).
 */
static const char *amd_shape(uint32_t family, uint32_t model,
                             X86PMUConfig *c)
{
    c->family = family;
    c->gp_width = X86PMU_AMD_WIDTH;
    if (family < 0x0f) {
        return NULL;
    }
    if (family < 0x15) {
        c->num_gp = 4;
        return family == 0x0f ?
               "AMD K8 (family 0Fh): 4 legacy counters, 8-bit event selects" :
               "AMD family 10h-14h: 4 legacy counters (PerfEvtSel0-3 "
               "0xC0010000-3), 12-bit event selects";
    }
    c->perfctr_core = true;
    c->num_gp = 6;
    if (family == 0x19 && ((model >= 0x10 && model <= 0x1f) ||
                           (model >= 0x60 && model <= 0x7f) ||
                           (model >= 0xa0 && model <= 0xaf))) {
        c->perfmon_v2 = true;
        c->lbr = X86PMU_LBR_AMD_V2;     /* 16 entries (Linux amd/lbr.c) */
        c->lbr_depth = 16;
        /*
         * Fn8000_0022_EAX = 7 on Genoa (InstLatx64's CPUID dump of family
         * 19h model 11h, A10F11): PerfMonV2, LbrExtV2 and LbrAndPmcFreeze.
         */
        c->lbr_pmc_freeze = true;
        return "AMD Zen 4 (family 19h): PerfCtrExtCore, PerfMonV2 with 6 "
               "counters and PerfCntrGlobalCtl/Status, LbrExtV2, "
               "LbrAndPmcFreeze";
    }
    if (family >= 0x1a) {
        c->perfmon_v2 = true;
        c->lbr = X86PMU_LBR_AMD_V2;
        c->lbr_depth = 16;
        return "AMD Zen 5 (family 1Ah): PerfCtrExtCore, PerfMonV2 with 6 "
               "counters, LbrExtV2";
    }
    return "AMD family 15h-19h before Zen 4: PerfCtrExtCore, 6 counters at "
           "0xC0010200 + 2n";
}

/*
 * 0D300806-00000280-00000007-00008603 on both core types (InstLatx64
 * AIDA64 dump of a Core Ultra 7 288V, CPUID B06D1).
 */
void x86pmu_config_lunarlake_0a(X86PMUConfig *cfg)
{
    cfg->version = 6;
    cfg->num_gp = 8;
    cfg->gp_width = 48;
    cfg->events_len = 13;
    cfg->events_unavail = 0x280;
    cfg->fixed_bitmap = 0x7;
    cfg->num_fixed = 3;
    cfg->fixed_width = 48;
    cfg->anythread_deprecated = true;
    cfg->pdcm = true;
}

/*
 * Where 3CH/01H on a GP counter is CPU_CLK_UNHALTED.REF_TSC_P, "the same
 * incrementing frequency as the time stamp counter" (Intel's event lists,
 * github.com/intel/perfmon at 6dadedf: SPR, EMR, GNR, ADL, MTL, ARL, LNL,
 * PTL, SRF, GRR, CWF and NVL *_core.json, and mapfile.csv for their
 * family and model numbers): from Golden Cove and Gracemont on.  On the
 * big cores before them it is REF_XCLK, the crystal (SKL, SKX, ICL, ICX,
 * TGL) or the bus clock (Nehalem to Broadwell), ref_ratio's clock.
 * Tremont (06_86H, 06_96H, 06_9CH: SNR and EHL *_core.json) counts at
 * the TSC's rate as well; the model leaves it at ref_ratio's clock: no
 * silicon profile is a Tremont part (QEMU's Snowridge model runs only
 * hypervisor and defect rows).  Diamond Rapids has no event list: the
 * model's choice, as its predecessor Granite Rapids.
 */
static bool ref_at_tsc(uint32_t family, uint32_t model)
{
    static const uint8_t models[] = {
        0x8f, 0xcf, 0xad, 0xae,         /* Sapphire/Emerald/Granite Rapids */
        0x97, 0x9a, 0xbe, 0xb7, 0xba, 0xbf,     /* Alder/Raptor Lake */
        0xaa, 0xac, 0xc5, 0xc6, 0xb5,   /* Meteor Lake, Arrow Lake */
        0xbd, 0xcc, 0xd5, 0xe5,         /* Lunar Lake, Panther Lake */
        0xaf, 0xb6, 0xdd,               /* Sierra Forest, Grand Ridge, CWF */
    };
    unsigned i;

    /*
     * Nova Lake (18, NVL/events/novalake_*_core.json); Diamond Rapids
     * (19) has no event list yet: as Granite Rapids, its predecessor.
     */
    if (family >= 0x12) {
        return true;
    }
    for (i = 0; family == 6 && i < sizeof(models); i++) {
        if (model == models[i]) {
            return true;
        }
    }
    return false;
}

/*
 * IA32_PERF_CAPABILITIES[15] PERF_METRICS_AVAILABLE: MSR 329H divides the
 * slots IA32_FIXED_CTR3 (TOPDOWN.SLOTS) counts into the top-down classes
 * (SDM vol. 3B, "Performance Metrics"; RDPMC with ECX bit 29,
 * IA32_PERF_GLOBAL_CTRL/STATUS bit 48).  Level 1 (bytes 0-3) from Ice
 * Lake on: Linux 59a854e2f3b9 "perf/x86/intel: Support TopDown metrics on
 * Ice Lake" reads the bit from the MSR and sets num_topdown_events = 4 in
 * intel_pmu_init's Ice Lake case (ICELAKE_L/ICELAKE/ICELAKE_X/ICELAKE_D,
 * TIGERLAKE_L/TIGERLAKE, ROCKETLAKE), with no server exception.  Level 2
 * (bytes 4-7, x86-pmu-td2.c) from Golden Cove on: num_topdown_events = 8
 * in the Sapphire Rapids case (Linux 61b985e3e775 "perf/x86/intel: Add
 * perf core PMU support for Sapphire Rapids"; intel_pmu_init_glc, which
 * Emerald and Granite Rapids take).  By family and model, as QEMU's
 * Icelake-Server also stands for Snow Ridge (06_86H, a Tremont Atom:
 * Linux's Tremont case has no top-down metrics), which the rows without
 * model= keep.  The hybrid parts (Alder, Raptor and Meteor Lake) are left
 * out: their IA32_PERF_CAPABILITIES differs by core type (Linux 6.1
 * intel_pmu_cpu_starting: the bit "should always be 0 on a hybrid
 * platform"; erratum RPL018 clears it on Raptor and Meteor Lake P-cores,
 * Linux intel_pmu_broken_perf_cap), and a shape here has one core type.
 * A configuration whose properties take fixed counter 3 away loses the
 * bit (x86pmu_perf_metrics_settle).
 */
static void perf_metrics_shape(uint32_t family, uint32_t model,
                               X86PMUConfig *cfg)
{
    static const uint8_t level1[] = {
        0x6a, 0x6c, 0x7d, 0x7e,         /* Ice Lake SP/D, client */
        0x8c, 0x8d, 0xa7,               /* Tiger Lake, Rocket Lake */
    };
    static const uint8_t level2[] = {
        0x8f, 0xcf, 0xad, 0xae,         /* Sapphire/Emerald/Granite Rapids */
    };
    unsigned i;

    for (i = 0; family == 6 && i < sizeof(level1); i++) {
        if (model == level1[i]) {
            cfg->perf_caps |= X86PMU_CAP_PERF_METRICS;
        }
    }
    for (i = 0; family == 6 && i < sizeof(level2); i++) {
        if (model == level2[i]) {
            cfg->perf_caps |= X86PMU_CAP_PERF_METRICS;
            cfg->td_level2 = true;
        }
    }
}

/*
 * A shape's PERF_METRICS after the properties changed its counters: the
 * metrics divide fixed counter 3's slots, so a shape left without that
 * counter has none, unless pmu-perf-caps= set the register (keep_caps:
 * x86pmu_config_check then refuses the bit).  Level 2 goes with the bit.
 */
void x86pmu_perf_metrics_settle(X86PMUConfig *cfg, bool keep_caps)
{
    uint32_t fixed = cfg->leaf23 ? cfg->leaf23_fixed :
                     cfg->fixed_bitmap |
                     (cfg->num_fixed >= 32 ? ~0u : (1u << cfg->num_fixed) - 1);

    if (!keep_caps && !(fixed & (1u << 3))) {
        cfg->perf_caps &= ~X86PMU_CAP_PERF_METRICS;
    }
    if (!(cfg->perf_caps & X86PMU_CAP_PERF_METRICS)) {
        cfg->td_level2 = false;
    }
}

void x86pmu_config_defaults(X86PMUConfig *cfg, X86PMUVendor vendor)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->vendor = vendor;
    cfg->slots_per_cycle = 4;
    cfg->ref_ratio = 1;
    /*
     * The counting conventions the manuals leave open (emu/qemu/README.md
     * gives each one's source).  The enabling WRMSR is counted, the
     * disabling one not, as KVM counts (Linux 9cd803d496e7).  An
     * instruction that changes the privilege level counts at the level it
     * goes to: AMD documents it ("instructions and events that change the
     * mode are counted in the target mode", Sandipan Das on LKML,
     * 2023-04-26), and on Intel it explains what V. Weaver measured on P6,
     * Core 2, Atom and later: a USR-only counter gains one instruction and
     * one branch per hardware interrupt or page fault (the IRET back).
     * AMD counts an interrupt or exception as a retired instruction and a
     * branch (AMD's Athlon event descriptions for C0H and C2H; Linux
     * tools/perf/pmu-events/arch/x86/amdzen*: ex_ret_brn "including
     * exceptions and interrupts"); the SDM says nothing of it for Intel.
     */
    cfg->wrmsr_counted = X86PMU_WRMSR_ENABLING;
    cfg->target_mode = true;
    cfg->delivery_retires = vendor == X86PMU_VENDOR_AMD;
}

void x86pmu_fixed_bitmap_default(X86PMUConfig *cfg)
{
    cfg->fixed_bitmap = cfg->version < 5 ? 0 :
                        cfg->num_fixed >= 32 ? ~0u :
                        (1u << cfg->num_fixed) - 1;
}

/*
 * Offcore response (x86-pmu-offcore.c) of Skylake client and server (SDM
 * vol. 3B, Skylake off-core response; valid bits as Linux
 * arch/x86/events/intel/core.c intel_skl_extra_regs):
 * requests [15:0], ANY_RESPONSE 16, L3 hit 18-21, L3_MISS_LOCAL_DRAM 26,
 * snoop results 30-37 (SNOOP_NOT_NEEDED 32, SNOOP_MISS 33).
 */
static const X86PMUOffcoreConfig skl_offcore = {
    .nmsrs = 2,
    .event = { 0xb7, 0xbb },
    .umask = { 0x01, 0x01 },
    .valid = { 0x3fffff8fffull, 0x3fffff8fffull },
    .any_response = BIT64(16),
    .hit_supplier = BIT64(18),
    .hit_snoop = BIT64(32),
    .miss_supplier = BIT64(26),
    .miss_snoop = BIT64(33),
};

void x86pmu_offcore_shape(uint32_t family, uint32_t model,
                          X86PMUOffcoreConfig *oc)
{
    static const uint8_t skl_models[] = {
        0x4e, 0x5e, 0x55, 0x8e, 0x9e, 0xa5, 0xa6,
    };
    unsigned i;

    memset(oc, 0, sizeof(*oc));
    for (i = 0; family == 6 && i < sizeof(skl_models); i++) {
        if (model == skl_models[i]) {
            *oc = skl_offcore;
        }
    }
}

const char *x86pmu_shape(const char *qemu_model, X86PMUVendor vendor,
                         uint32_t family, uint32_t model, X86PMUConfig *cfg)
{
    unsigned i;

    x86pmu_config_defaults(cfg, vendor);
    if (vendor == X86PMU_VENDOR_AMD) {
        return amd_shape(family, model, cfg);
    }
    for (i = 0; qemu_model && i < ARRAY_LEN(intel_shapes); i++) {
        const IntelShape *s = &intel_shapes[i];

        if (!name_in(s->qemu_models, qemu_model)) {
            continue;
        }
        cfg->version = s->version;
        cfg->num_gp = s->num_gp;
        cfg->gp_width = s->gp_width;
        cfg->num_fixed = s->num_fixed;
        cfg->fixed_width = s->fixed_width;
        cfg->events_len = s->events_len;
        cfg->pdcm = s->pdcm;
        cfg->anythread_deprecated = s->anythread_deprecated;
        cfg->perf_caps = s->perf_caps;
        cfg->ref_ratio = s->ref_ratio;
        cfg->ref_report = s->ref_report;
        cfg->ref_at_tsc = ref_at_tsc(family, model);
        perf_metrics_shape(family, model, cfg);
        cfg->uarch = s->uarch;
        cfg->family = family;
        x86pmu_fixed_bitmap_default(cfg);
        x86pmu_offcore_shape(family, model, &cfg->offcore);
        for (i = 0; i < ARRAY_LEN(lbr_pebs_shapes); i++) {
            const LbrPebsShape *b = &lbr_pebs_shapes[i];

            if (name_in(b->qemu_models, qemu_model)) {
                cfg->lbr = b->lbr;
                cfg->lbr_depth = b->lbr_depth;
                cfg->perf_caps |= b->perf_caps;
                cfg->ds = true;
                cfg->arch_lbr_ebx = b->lbr == X86PMU_LBR_ARCH ? 0x7 : 0;
            }
        }
        return s->what;
    }
    return NULL;
}

/* --- Rules --- */

static char check_msg[256];

/* Append text, or a number in decimal or 0x-hex, to check_msg. */
static void put_str(const char *t)
{
    size_t n = strlen(check_msg), k = strlen(t);

    if (k > sizeof(check_msg) - 1 - n) {
        k = sizeof(check_msg) - 1 - n;
    }
    memcpy(check_msg + n, t, k);
    check_msg[n + k] = 0;
}

static void put_num(uint64_t v, bool hex)
{
    char buf[24], *p = buf + sizeof(buf) - 1;
    unsigned base = hex ? 16 : 10;

    *p = 0;
    do {
        *--p = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    if (hex) {
        *--p = 'x';
        *--p = '0';
    }
    put_str(p);
}

/* "a<n1>b<n2>c": the message naming the property at fault. */
static const char *msg(const char *a, uint64_t n1, bool hex1, const char *b,
                       uint64_t n2, bool hex2, const char *c)
{
    check_msg[0] = 0;
    put_str(a);
    if (b) {
        put_num(n1, hex1);
        put_str(b);
    }
    if (c) {
        put_num(n2, hex2);
        put_str(c);
    }
    return check_msg;
}

#define DEC false
#define HEX true

/*
 * CPUID.23H beyond the counter bitmaps (x86-pmu-v6.c), and the top-down
 * events' need for slots: the model's split gives each cycle one slot per
 * instruction, per mispredicted branch and to the frontend.
 */
static const char *check_leaf23(const X86PMUConfig *c, uint32_t fixed_all)
{
    uint64_t ctrs = (uint64_t)(c->leaf23 ? c->leaf23_gp :
                               (1u << c->num_gp) - 1) |
                    (uint64_t)(c->leaf23 ? c->leaf23_fixed : fixed_all) << 32;
    bool topdown = c->events_len > 8 || (c->leaf23_events &&
                                         (c->events_avail23 >> 8)) ||
                   (ctrs >> 36) || (c->perf_caps & X86PMU_CAP_PERF_METRICS);

    if (c->leaf23 && (c->leaf23_gp >> X86PMU_LEGACY_GP) && c->version < 6) {
        return msg("CPUID.23H GP bitmap ", c->leaf23_gp, HEX, ": counters "
                   "past IA32_PMC7 need the version 6 MSR layout "
                   "(pmu-version=6)", 0, DEC, NULL);
    }
    if (!c->leaf23 && (c->v6_features || c->acr || c->leaf23_events)) {
        return msg("pmu-v6-caps=", c->v6_features, HEX, ": the event-select "
                   "extensions, auto counter reload and the events bitmap "
                   "are CPUID.23H sub-leaves: they need its counter bitmaps",
                   0, DEC, NULL);
    }
    if (c->v6_features & ~(X86PMU_V6_UMASK2 | X86PMU_V6_EQ |
                           X86PMU_V6_RDPMC_USER_DISABLE)) {
        return msg("pmu-v6-caps=", c->v6_features, HEX, ": CPUID.23H.0:EBX "
                   "bits 0-2 (UMASK2, EQ, RDPMC user disable) are emulated",
                   0, DEC, NULL);
    }
    if (c->acr && (c->version < 6 || (c->acr_reload & ~ctrs) ||
                   (c->acr_cause & ~ctrs))) {
        return msg("CPUID.23H.2 reload/cause bitmaps ", c->acr_reload, HEX,
                   "/", c->acr_cause, HEX, ": auto counter reload needs "
                   "version 6 (its CFG_B/CFG_C MSRs) and existing counters");
    }
    if (topdown && c->slots_per_cycle < 3) {
        return msg("pmu-slots-per-cycle=", c->slots_per_cycle, DEC, ": the "
                   "top-down events need at least 3 slots per cycle", 0, DEC,
                   NULL);
    }
    return NULL;
}

/* LBR and PEBS bits of IA32_PERF_CAPABILITIES the model can back. */
static const char *check_lbr_pebs(const X86PMUConfig *c)
{
    unsigned lbr_fmt = c->perf_caps & 0x3f;
    unsigned pebs_fmt = (c->perf_caps >> 8) & 0xf;
    bool pebs_bits = c->perf_caps & (X86PMU_CAP_LBR_PEBS_MASK & ~0x3full);

    if (c->lbr == X86PMU_LBR_AMD_V2) {
        return msg("pmu-lbr: LbrExtV2 is AMD's (CPUID Fn8000_0022)", 0, DEC,
                   NULL, 0, DEC, NULL);
    }
    if ((c->lbr == X86PMU_LBR_LEGACY) != (lbr_fmt >= 1 && lbr_fmt <= 5) ||
        (c->lbr == X86PMU_LBR_ARCH) != (lbr_fmt == 0x3f)) {
        return msg("pmu-lbr: LBR format ", lbr_fmt, HEX, ": the model "
                   "emulates legacy formats 1-5 with a legacy LBR stack and "
                   "0x3F with architectural LBRs", 0, DEC, NULL);
    }
    if (c->lbr == X86PMU_LBR_LEGACY && c->lbr_depth != 4 &&
        c->lbr_depth != 8 && c->lbr_depth != 16 && c->lbr_depth != 32) {
        return msg("pmu-lbr-depth=", c->lbr_depth, DEC, ": legacy stacks "
                   "have 4, 8, 16 or 32 entries", 0, DEC, NULL);
    }
    if (c->lbr == X86PMU_LBR_ARCH &&
        (c->lbr_depth < 8 || c->lbr_depth > 64 || c->lbr_depth % 8)) {
        return msg("pmu-lbr-depth=", c->lbr_depth, DEC, ": architectural "
                   "LBRs have 8..64 in steps of 8 (CPUID.1CH:EAX[7:0])", 0,
                   DEC, NULL);
    }
    /*
     * Format 0xF is architectural PEBS (x86-pmu-arch-pebs.c): a version
     * 6 shape with CPUID.23H, whose 23.5 counters exist in 23.1.
     */
    if (c->arch_pebs || pebs_fmt == 0xf) {
        uint64_t exist = (uint64_t)c->leaf23_fixed << 32 | c->leaf23_gp;

        if (!c->arch_pebs || pebs_fmt != 0xf || c->version < 6 ||
            !c->leaf23) {
            return "pmu-pebs-format: architectural PEBS goes with PEBS "
                   "format 0xF, version 6 and CPUID.23H "
                   "(pmu-shape=clearwater-forest)";
        }
        if ((c->arch_pebs_counters | c->arch_pebs_pdist) & ~exist) {
            return "architectural PEBS: CPUID.23H.5 names counters "
                   "CPUID.23H.1 lacks";
        }
        return NULL;
    }
    if (pebs_bits && (!c->ds || pebs_fmt > 5 ||
                      ((c->perf_caps & X86PMU_CAP_PEBS_BASELINE) &&
                       pebs_fmt < 4))) {
        return msg("pmu-pebs-format=", pebs_fmt, DEC, ": the model emulates "
                   "formats 0-3, and 4-5 with adaptive PEBS, with a DS area",
                   0, DEC, NULL);
    }
    return NULL;
}

/*
 * A part's CPUID.1CH:EAX (arch_lbr_eax, a shape's dump): the LBRs start at
 * lbr_depth (x86pmu_lbr_reset), which must be its deepest depth, so that
 * the depth in use and the depths reported agree (the model's choice).
 */
static const char *check_arch_lbr_eax(const X86PMUConfig *c)
{
    unsigned depths = c->arch_lbr_eax & 0xff;

    if (c->lbr == X86PMU_LBR_ARCH && depths &&
        depths >> (c->lbr_depth / 8 - 1) != 1) {
        return msg("pmu-lbr-depth=", c->lbr_depth, DEC, ": the shape's "
                   "CPUID.1CH:EAX is ", c->arch_lbr_eax, HEX, ", whose "
                   "deepest depth the LBRs start with");
    }
    return NULL;
}

static const char *check_intel(const X86PMUConfig *c)
{
    const char *why;
    uint32_t fixed_all = c->fixed_bitmap |
                         (c->num_fixed >= 32 ? ~0u : (1u << c->num_fixed) - 1);

    if (c->version > 6) {
        return msg("pmu-version=", c->version, DEC, ": versions above 6 are "
                   "not emulated", 0, DEC, NULL);
    }
    if (c->version == 0) {
        return NULL;
    }
    if (c->num_gp > (c->version >= 6 ? X86PMU_MAX_GP : X86PMU_LEGACY_GP)) {
        return msg("pmu-gp=", c->num_gp, DEC, ": IA32_PMC0-7 and "
                   "IA32_PERFEVTSEL0-7 have room for 8 counters (SDM vol. 4); "
                   "more needs the version 6 layout (at most 10 emulated)",
                   0, DEC, NULL);
    }
    if (c->num_gp && (c->gp_width < 32 || c->gp_width > 64)) {
        return msg("pmu-gp-width=", c->gp_width, DEC, ": must be 32..64 (a "
                   "write to IA32_PMCx sign-extends bit 31; a counter is at "
                   "most 64 bits)", 0, DEC, NULL);
    }
    if (c->version < 2 && (c->num_fixed || c->fixed_bitmap)) {
        return msg("pmu-fixed=", c->num_fixed, DEC, ": fixed counters need "
                   "pmu-version >= 2 (CPUID.0AH:EDX is reserved in version 1)",
                   0, DEC, NULL);
    }
    if (c->fixed_bitmap && c->version < 5) {
        return msg("pmu-fixed-bitmap=", c->fixed_bitmap, HEX, ": needs "
                   "pmu-version >= 5 (CPUID.0AH:ECX is reserved before "
                   "version 5)", 0, DEC, NULL);
    }
    if (fixed_all >> X86PMU_MAX_FIXED) {
        return msg("pmu-fixed=", c->num_fixed, DEC, "/pmu-fixed-bitmap=",
                   c->fixed_bitmap, HEX, ": fixed counters past "
                   "IA32_FIXED_CTR6 are not emulated");
    }
    if (fixed_all && (c->fixed_width < 1 || c->fixed_width > 64)) {
        return msg("pmu-fixed-width=", c->fixed_width, DEC, ": must be 1..64",
                   0, DEC, NULL);
    }
    if (c->events_len > X86PMU_EV_NUM) {
        return msg("pmu-events-len=", c->events_len, DEC, ": the model knows "
                   "the 13 architectural events of CPUID.0AH:EBX[12:0]", 0,
                   DEC, NULL);
    }
    if (c->perf_caps & ~(X86PMU_CAP_FREEZE_WHILE_SMM | X86PMU_CAP_FW_WRITE |
                         X86PMU_CAP_PERF_METRICS |
                         X86PMU_CAP_LBR_PEBS_MASK)) {
        return msg("pmu-perf-caps=", c->perf_caps, HEX, ": only bits 12 "
                   "(FREEZE_WHILE_SMM), 13 (FW_WRITE) and 15 (PERF_METRICS) "
                   "are emulated, and the LBR and PEBS bits of the shape", 0,
                   DEC, NULL);
    }
    why = check_lbr_pebs(c);
    if (!why) {
        why = check_arch_lbr_eax(c);
    }
    if (why) {
        return why;
    }
    if ((c->perf_caps & X86PMU_CAP_PERF_METRICS) &&
        !((c->leaf23 ? c->leaf23_fixed : fixed_all) & (1u << 3))) {
        return msg("pmu-perf-caps=", c->perf_caps, HEX, ": PERF_METRICS "
                   "divides IA32_FIXED_CTR3's slots: it needs fixed counter 3",
                   0, DEC, NULL);
    }
    if (c->perf_caps && !c->pdcm) {
        return msg("pmu-perf-caps=", c->perf_caps, HEX, ": "
                   "IA32_PERF_CAPABILITIES needs pmu-pdcm=on "
                   "(CPUID.01H:ECX[15])", 0, DEC, NULL);
    }
    if (c->ref_ratio < 1 ||
        (c->ref_report == X86PMU_REF_REPORT_PLATFORM_INFO &&
         c->ref_ratio > 0xff)) {
        return msg("pmu-ref-ratio=", c->ref_ratio, DEC, ": must be 1 or more "
                   "(255 at most where MSR_PLATFORM_INFO[15:8] reports it)",
                   0, DEC, NULL);
    }
    if (c->leaf23 && ((c->leaf23_gp >> X86PMU_MAX_GP) ||
                      (c->leaf23_fixed >> X86PMU_MAX_FIXED))) {
        return msg("CPUID.23H bitmaps ", c->leaf23_gp, HEX, "/",
                   c->leaf23_fixed, HEX, ": counters past PMC9/FIXED_CTR6 "
                   "are not emulated");
    }
    return check_leaf23(c, fixed_all);
}

static const char *check_amd(const X86PMUConfig *c)
{
    if (c->lbr != X86PMU_LBR_NONE && c->lbr != X86PMU_LBR_AMD_V2) {
        return msg("Intel LBRs on an AMD CPU", 0, DEC, NULL, 0, DEC, NULL);
    }
    if (c->lbr == X86PMU_LBR_AMD_V2 &&
        (!c->perfmon_v2 || c->lbr_depth < 1 || c->lbr_depth > 32)) {
        return msg("pmu-lbr-depth=", c->lbr_depth, DEC, ": LbrExtV2 needs "
                   "PerfMonV2 and 1..32 entries (CPUID Fn8000_0022_EBX[9:4])",
                   0, DEC, NULL);
    }
    if (c->num_fixed || c->fixed_bitmap) {
        return msg("pmu-fixed: AMD has no fixed counters (APM vol. 2, 13.2)",
                   0, DEC, NULL, 0, DEC, NULL);
    }
    if (c->family < 0x0f) {
        return msg("AMD family ", c->family, HEX, ": the AMD64 performance "
                   "counters start with family 0Fh", 0, DEC, NULL);
    }
    if (c->gp_width != X86PMU_AMD_WIDTH) {
        return msg("pmu-gp-width=", c->gp_width, DEC, ": AMD's counters are "
                   "48 bits (APM vol. 2, 13.2)", 0, DEC, NULL);
    }
    if (c->lbr_pmc_freeze && !c->perfmon_v2) {
        return msg("pmu-lbr-pmc-freeze=on needs pmu-perfmon-v2=on (its "
                   "status bit is PerfCntrGlobalStatus[58])", 0, DEC, NULL, 0,
                   DEC, NULL);
    }
    if (c->perfmon_v2 && !c->perfctr_core) {
        return msg("pmu-perfmon-v2=on needs pmu-perfctr-core=on (PerfMonV2 "
                   "counters live at the PerfCtrExtCore addresses)", 0, DEC,
                   NULL, 0, DEC, NULL);
    }
    if (c->perfmon_v2 && (c->num_gp < 1 || c->num_gp > X86PMU_AMD_MAX_CTRS)) {
        return msg("pmu-gp=", c->num_gp, DEC, ": PerfEvtSel/PerfCtr 0-5 "
                   "(0xC0010200-0xC001020B) are the counters the APM defines",
                   0, DEC, NULL);
    }
    return NULL;
}

const char *x86pmu_config_check(const X86PMUConfig *c)
{
    const char *why;

    why = c->vendor == X86PMU_VENDOR_AMD ? check_amd(c) : check_intel(c);
    if (why) {
        return why;
    }
    if (c->slots_per_cycle < 1 || c->slots_per_cycle > 16) {
        return msg("top-down slots per cycle ", c->slots_per_cycle, DEC,
                   ": must be 1..16", 0, DEC, NULL);
    }
    if (c->wrmsr_counted >= X86PMU_WRMSR_NUM) {
        return msg("pmu-wrmsr-counted: unknown value ", c->wrmsr_counted,
                   DEC, "", 0, DEC, NULL);
    }
    if (c->defect >= X86PMU_DEFECT_NUM) {
        return msg("pmu-defect: unknown defect ", c->defect, DEC, "", 0, DEC,
                   NULL);
    }
    return NULL;
}

/* --- Names --- */

static const char *const quirk_names[X86PMU_QUIRK_NUM] = {
    "kvm-emulated-wrmsr-ignores-cmask",
    "kvm-fixed-ctr-write-truncated",
    "global-ctrl-reset-zero",
    "kvm-amd-reserved-bits-dropped",
    "kvm-fast-rdpmc-allowed",
    "amd-vmrun-counted",
    "host-counter-unschedulable",
    "xen-emulated-wrmsr-not-counted",
    "xen-status-only-at-pmi",
    "vmware-hybrid-freeze",
    "no-inuse-msr",
    "srf7",
    "kvm-spurious-pmi",
    "xen-pmc-quirk-zero-becomes-one",
    "xen-anythread-pc-rejected",
    "kvm-debugctl-freeze-refused",
};

static const char *const wrmsr_counted_names[X86PMU_WRMSR_NUM] = {
    [X86PMU_WRMSR_ENABLING] = "enabling",
    [X86PMU_WRMSR_DISABLING] = "disabling",
    [X86PMU_WRMSR_BOTH] = "both",
    [X86PMU_WRMSR_NEITHER] = "neither",
};

static const char *const defect_names[X86PMU_DEFECT_NUM] = {
    [X86PMU_DEFECT_NONE] = "none",
    [X86PMU_DEFECT_PMI_NEVER_DELIVERED] = "pmi-never-delivered",
    [X86PMU_DEFECT_PMI_DELIVERED_TWICE] = "pmi-delivered-twice",
    [X86PMU_DEFECT_LVTPC_MASK_NOT_SET] = "lvtpc-mask-not-set",
    [X86PMU_DEFECT_STATUS_BIT_NOT_SET] = "status-bit-not-set",
    [X86PMU_DEFECT_OVF_CTRL_NOT_CLEARING] = "ovf-ctrl-not-clearing",
    [X86PMU_DEFECT_LEGACY_WRITE_NOT_SIGN_EXTENDED] =
        "legacy-write-not-sign-extended",
    [X86PMU_DEFECT_USR_OS_SWAPPED] = "usr-os-swapped",
    [X86PMU_DEFECT_GLOBAL_CTRL_IGNORED] = "global-ctrl-ignored",
    [X86PMU_DEFECT_FIXED_CTR0_COUNTS_CYCLES] = "fixed-ctr0-counts-cycles",
    [X86PMU_DEFECT_WIDTH_OFF_BY_ONE] = "width-off-by-one",
    [X86PMU_DEFECT_FREEZE_NOT_FREEZING] = "freeze-not-freezing",
    [X86PMU_DEFECT_COUNTS_LEAK_BETWEEN_CPUS] = "counts-leak-between-cpus",
    [X86PMU_DEFECT_RDPMC_FIXED_READS_GP] = "rdpmc-fixed-reads-gp",
    [X86PMU_DEFECT_OVERFLOW_ONE_EVENT_LATE] = "overflow-one-event-late",
    [X86PMU_DEFECT_INUSE_WRONG] = "inuse-wrong",
    [X86PMU_DEFECT_STATUS_SET_IGNORED] = "status-set-ignored",
    [X86PMU_DEFECT_RDPMC_IGNORES_CR4_PCE] = "rdpmc-ignores-cr4-pce",
    [X86PMU_DEFECT_RESERVED_BITS_ACCEPTED] = "reserved-bits-accepted",
    [X86PMU_DEFECT_FIXED_PMI_BIT_IGNORED] = "fixed-pmi-bit-ignored",
    [X86PMU_DEFECT_NMI_DELIVERED_AS_FIXED] = "nmi-delivered-as-fixed",
    [X86PMU_DEFECT_BRANCHES_COUNT_INSTRUCTIONS] =
        "branches-count-instructions",
    [X86PMU_DEFECT_V6_ALIAS_WRAPS_PAST_7] = "v6-alias-wraps-past-7",
    [X86PMU_DEFECT_EVTSEL_EXTENSIONS_REFUSED] = "evtsel-extensions-refused",
    [X86PMU_DEFECT_RDPMC_USER_DISABLE_IGNORED] = "rdpmc-user-disable-ignored",
    [X86PMU_DEFECT_ACR_CAUSE_UNCHECKED] = "acr-cause-unchecked",
    [X86PMU_DEFECT_ACR_RELOAD_IGNORED] = "acr-reload-ignored",
    [X86PMU_DEFECT_TOPDOWN_FIXED_STUCK] = "topdown-fixed-stuck",
    [X86PMU_DEFECT_PERF_METRICS_RDPMC_READS_SLOTS] =
        "perf-metrics-rdpmc-reads-slots",
    [X86PMU_DEFECT_AMD_STATUS_SET_ABSENT] = "amd-status-set-absent",
    [X86PMU_DEFECT_AMD_FREEZE_STATUS_NOT_SET] = "amd-freeze-status-not-set",
    [X86PMU_DEFECT_HOST_ONLY_COUNTS_WITHOUT_SVM] =
        "host-only-counts-without-svm",
    [X86PMU_DEFECT_RUNNING_COUNTER_WRITE_DROPPED] =
        "running-counter-write-dropped",
    [X86PMU_DEFECT_IBPB_KEEPS_PREDICTIONS] = "ibpb-keeps-predictions",
    [X86PMU_DEFECT_OFFCORE_IGNORES_RESPONSE] = "offcore-ignores-response",
    [X86PMU_DEFECT_OMR_UMASK_IGNORED] = "omr-umask-ignored",
    [X86PMU_DEFECT_OMR_MSRS_ALIAS] = "omr-msrs-alias",
    [X86PMU_DEFECT_TD_LEVEL2_OVER_PARENT] = "td-level2-over-parent",
    [X86PMU_DEFECT_UNCORE_IGNORES_ENABLE] = "uncore-ignores-enable",
    [X86PMU_DEFECT_UNCORE_LEAKS_ACROSS_PACKAGES] =
        "uncore-leaks-across-packages",
    [X86PMU_DEFECT_DISCOVERY_COUNTER_OFFSET_WRONG] =
        "discovery-counter-offset-wrong",
    [X86PMU_DEFECT_DISCOVERY_UNIT_ON_WRONG_PACKAGE] =
        "discovery-unit-on-wrong-package",
    [X86PMU_DEFECT_LBR_FROM_TO_SWAPPED] = "lbr-from-to-swapped",
    [X86PMU_DEFECT_LBR_RECORDS_WHILE_DISABLED] = "lbr-records-while-disabled",
    [X86PMU_DEFECT_LBR_FILTER_IGNORED] = "lbr-filter-ignored",
    [X86PMU_DEFECT_LBR_NOT_FROZEN] = "lbr-not-frozen",
    [X86PMU_DEFECT_LBR_DEPTH_SHORT] = "lbr-depth-short",
    [X86PMU_DEFECT_PEBS_NO_RELOAD] = "pebs-no-reload",
    [X86PMU_DEFECT_PEBS_GPRS_LEGACY_ORDER] = "pebs-gprs-legacy-order",
    [X86PMU_DEFECT_PEBS_THRESHOLD_EARLY] = "pebs-threshold-early",
    [X86PMU_DEFECT_PEBS_FOREIGN_LBR] = "pebs-foreign-lbr",
    [X86PMU_DEFECT_ARCH_PEBS_INDEX_STUCK] = "arch-pebs-index-stuck",
    [X86PMU_DEFECT_ARCH_PEBS_GROUPS_IGNORED] = "arch-pebs-groups-ignored",
    [X86PMU_DEFECT_ARCH_PEBS_NO_RELOAD] = "arch-pebs-no-reload",
    [X86PMU_DEFECT_ARCH_PEBS_NO_THRESHOLD_PMI] = "arch-pebs-no-threshold-pmi",
    [X86PMU_DEFECT_ARCH_PEBS_UNCONFIGURED_RECORD] =
        "arch-pebs-unconfigured-record",
};

const char *x86pmu_quirk_name(unsigned bit)
{
    return bit < X86PMU_QUIRK_NUM ? quirk_names[bit] : NULL;
}

const char *x86pmu_defect_name(X86PMUDefect defect)
{
    return defect < X86PMU_DEFECT_NUM ? defect_names[defect] : NULL;
}

bool x86pmu_parse_quirks(const char *names, uint32_t *quirks,
                         const char **bad, unsigned *bad_len)
{
    const char *p = names;

    *quirks = 0;
    while (p && *p) {
        const char *end = strchr(p, '+');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        unsigned q;

        for (q = 0; q < X86PMU_QUIRK_NUM; q++) {
            if (strlen(quirk_names[q]) == len &&
                memcmp(quirk_names[q], p, len) == 0) {
                break;
            }
        }
        if (q == X86PMU_QUIRK_NUM) {
            *bad = p;
            *bad_len = (unsigned)len;
            return false;
        }
        *quirks |= 1u << q;
        p = end ? end + 1 : NULL;
    }
    return true;
}

bool x86pmu_parse_defect(const char *name, X86PMUDefect *defect)
{
    unsigned d;

    for (d = 0; d < X86PMU_DEFECT_NUM; d++) {
        if (strcmp(defect_names[d], name) == 0) {
            *defect = (X86PMUDefect)d;
            return true;
        }
    }
    return false;
}

bool x86pmu_parse_wrmsr_counted(const char *name, X86PMUWrmsrCounted *w)
{
    unsigned i;

    for (i = 0; i < X86PMU_WRMSR_NUM; i++) {
        if (strcmp(wrmsr_counted_names[i], name) == 0) {
            *w = (X86PMUWrmsrCounted)i;
            return true;
        }
    }
    return false;
}

const char *x86pmu_wrmsr_counted_name(X86PMUWrmsrCounted w)
{
    return w < X86PMU_WRMSR_NUM ? wrmsr_counted_names[w] : NULL;
}
