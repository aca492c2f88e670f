/* SPDX-License-Identifier: MIT */
/*
 * The performance-monitoring unit of one x86 logical processor, as the
 * Intel SDM vol. 3B chapter "Performance Monitoring" and the AMD APM
 * vol. 2 section 13.2 "Performance Monitoring Counters" describe it:
 * CPUID, every PMU MSR's read/write/#GP rule, RDPMC, and what counting
 * a given number of events does (overflow, status, freeze, PMI).
 *
 * It counts nothing by itself.  Its user (QEMU's TCG, or pmutest's host
 * tests) tells it which events happened, at which privilege level, and
 * delivers the PMI it asks for.  Plain C: <stdint.h>, <stdbool.h> and
 * <string.h> only, so that both can compile it unchanged.
 *
 * Copyright (c) 2025 The pmutest authors
 */

#ifndef X86_PMU_MODEL_H
#define X86_PMU_MODEL_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Counter indices follow IA32_PERF_GLOBAL_CTRL's bit positions (SDM vol.
 * 3B, "Architectural Performance Monitoring Version 2"): GP counter x is
 * index x, fixed counter i is index 32 + i.  AMD's core counters use the
 * GP indices.
 */
#define X86PMU_MAX_GP           10  /* GP 0-9: CPUID.23H.1 P-cores have 10 */
#define X86PMU_LEGACY_GP        8   /* IA32_PMC0-7 / PERFEVTSEL0-7 / A_PMC0-7 */
#define X86PMU_MAX_FIXED        7   /* IA32_FIXED_CTR0-6 */
#define X86PMU_AMD_MAX_CTRS     6   /* PerfEvtSel/PerfCtr 0-5 */
#define X86PMU_FIXED_IDX(i)     (32 + (i))
#define X86PMU_AMD_WIDTH        48  /* APM vol. 2, 13.2: 48-bit counters */

/* Intel MSRs (SDM vol. 4, "Architectural MSRs"). */
#define X86PMU_MSR_PMC0             0x0c1
#define X86PMU_MSR_PLATFORM_INFO    0x0ce   /* model-specific, Nehalem on */
#define X86PMU_MSR_PERFEVTSEL0      0x186
#define X86PMU_MSR_DEBUGCTL         0x1d9
#define X86PMU_MSR_OFFCORE_RSP_0    0x1a6
#define X86PMU_MSR_OFFCORE_RSP_1    0x1a7
#define X86PMU_MSR_OMR_0            0x3e0   /* OMR_0-3 (x86-pmu-omr.c) */
#define X86PMU_MSR_FIXED_CTR0       0x309
#define X86PMU_MSR_PERF_CAPABILITIES 0x345
#define X86PMU_MSR_FIXED_CTR_CTRL   0x38d
#define X86PMU_MSR_GLOBAL_STATUS    0x38e
#define X86PMU_MSR_GLOBAL_CTRL      0x38f
#define X86PMU_MSR_GLOBAL_OVF_CTRL  0x390   /* v4: GLOBAL_STATUS_RESET */
#define X86PMU_MSR_GLOBAL_STATUS_SET 0x391  /* v4 */
#define X86PMU_MSR_GLOBAL_INUSE     0x392   /* v4 */
#define X86PMU_MSR_A_PMC0           0x4c1
#define X86PMU_MSR_PERF_METRICS     0x329   /* PERF_CAPABILITIES[15] */
/*
 * Version 6's per-counter MSRs (SDM vol. 3B, "Architectural Performance
 * Monitoring Version 6"; Linux msr-index.h MSR_IA32_PMC_V6_*): GP counter
 * n at 0x1900 + 4n (CTR, CFG_A = its event select, CFG_B, CFG_C), fixed
 * counter m at 0x1980 + 4m (CTR, -, CFG_B, CFG_C).
 */
#define X86PMU_MSR_V6_GP0_CTR       0x1900
#define X86PMU_MSR_V6_FX0_CTR       0x1980
#define X86PMU_MSR_V6_STEP          4
#define X86PMU_MSR_V6_END           0x19c0  /* 32 GP and 16 fixed slots */

/* AMD MSRs (APM vol. 2, 13.2). */
#define X86PMU_MSR_K7_EVNTSEL0      0xc0010000
#define X86PMU_MSR_K7_PERFCTR0      0xc0010004
#define X86PMU_MSR_F15H_PERF_CTL0   0xc0010200  /* + 2n; PerfCtr n at + 1 */
#define X86PMU_MSR_AMD_GLOBAL_STATUS 0xc0000300
#define X86PMU_MSR_AMD_GLOBAL_CTL   0xc0000301
#define X86PMU_MSR_AMD_GLOBAL_STATUS_CLR 0xc0000302
#define X86PMU_MSR_AMD_GLOBAL_STATUS_SET 0xc0000303

/* IA32_PERF_CAPABILITIES bits the model implements (SDM vol. 4). */
#define X86PMU_CAP_FREEZE_WHILE_SMM (1ull << 12)
#define X86PMU_CAP_FW_WRITE         (1ull << 13)
#define X86PMU_CAP_PERF_METRICS     (1ull << 15)

/*
 * CPUID.23H.0:EBX, the event-select extensions (Linux perf_event.h
 * cpuid35_ebx, commits dce0c74d2d18 and 59af95e028d4): UMASK2 in
 * PERFEVTSEL[47:40], EQ in bit 36, RDPMC user disable in bit 37 and
 * IA32_FIXED_CTR_CTRL bit 33 + 4i.
 */
#define X86PMU_V6_UMASK2            (1u << 0)
#define X86PMU_V6_EQ                (1u << 1)
#define X86PMU_V6_RDPMC_USER_DISABLE (1u << 2)
/* LBR format [5:0], PEBS trap 6, arch regs 7, format [11:8], baseline 14. */
#define X86PMU_CAP_PEBS_TRAP        (1ull << 6)
#define X86PMU_CAP_PEBS_ARCH_REG    (1ull << 7)
#define X86PMU_CAP_PEBS_BASELINE    (1ull << 14)
#define X86PMU_CAP_LBR_PEBS_MASK    0x4fffull

/* IA32_DEBUGCTL (SDM vol. 3B, "IA32_DEBUGCTL MSR"). */
#define X86PMU_DEBUGCTL_LBR                 (1ull << 0)
#define X86PMU_DEBUGCTL_FREEZE_LBRS_ON_PMI  (1ull << 11)
#define X86PMU_DEBUGCTL_FREEZE_PERFMON_ON_PMI (1ull << 12)
#define X86PMU_DEBUGCTL_FREEZE_WHILE_SMM    (1ull << 14)

/* IA32_PERF_GLOBAL_STATUS bits beyond the counters (SDM vol. 3B). */
#define X86PMU_STATUS_LBR_FRZ       (1ull << 58)    /* v4; AMD: LbrFreeze */
#define X86PMU_STATUS_CTR_FRZ       (1ull << 59)    /* v4 */
#define X86PMU_STATUS_OVF_UNCORE    (1ull << 61)    /* v3 */
#define X86PMU_STATUS_OVF_BUF       (1ull << 62)
#define X86PMU_STATUS_COND_CHGD     (1ull << 63)
/* IA32_PERF_GLOBAL_CTRL bit 48: PERF_METRICS counts (Linux perf_event.h). */
#define X86PMU_GLOBAL_PERF_METRICS  (1ull << 48)

/*
 * The events the model can count.  The order is CPUID.0AH:EBX's bit order
 * (SDM vol. 3B, "Pre-defined Architectural Performance Events").
 */
typedef enum X86PMUEvent {
    X86PMU_EV_CYCLES,           /* unhalted core cycles */
    X86PMU_EV_INSTRUCTIONS,     /* instructions retired */
    X86PMU_EV_REF_CYCLES,       /* unhalted reference cycles */
    X86PMU_EV_LLC_REFS,         /* last-level cache references */
    X86PMU_EV_LLC_MISSES,       /* last-level cache misses */
    X86PMU_EV_BRANCHES,         /* branch instructions retired */
    X86PMU_EV_BRANCH_MISSES,    /* branch mispredicts retired */
    X86PMU_EV_SLOTS,            /* top-down slots */
    X86PMU_EV_TD_BACKEND,       /* top-down backend bound (slots) */
    X86PMU_EV_TD_BAD_SPEC,      /* top-down bad speculation (slots) */
    X86PMU_EV_TD_FRONTEND,      /* top-down frontend bound (slots) */
    X86PMU_EV_TD_RETIRING,      /* top-down retiring (slots) */
    X86PMU_EV_LBR_INSERTS,      /* LBR inserts */
    X86PMU_EV_NUM,
    X86PMU_EV_NONE = X86PMU_EV_NUM, /* an event the model does not count */
} X86PMUEvent;

/* Privilege classes: PERFEVTSEL.OS counts at CPL 0, USR at CPL 1-3. */
typedef enum X86PMURing {
    X86PMU_RING_OS,
    X86PMU_RING_USR,
} X86PMURing;

typedef enum X86PMUVendor {
    X86PMU_VENDOR_INTEL,
    X86PMU_VENDOR_AMD,
} X86PMUVendor;

/*
 * Behaviours of real virtual PMUs that differ from the manuals, each
 * named after the deviation it makes pmutest report (the name, upper-case,
 * is the deviation ID).  Sources: emu/qemu/README.md.
 */
enum {
    X86PMU_QUIRK_KVM_EMULATED_WRMSR_IGNORES_CMASK = 1u << 0,   /* F1 */
    X86PMU_QUIRK_KVM_FIXED_CTR_WRITE_TRUNCATED    = 1u << 1,   /* F2 */
    X86PMU_QUIRK_GLOBAL_CTRL_RESET_ZERO           = 1u << 2,   /* F3 */
    X86PMU_QUIRK_KVM_AMD_RESERVED_BITS_DROPPED    = 1u << 3,   /* F4 */
    X86PMU_QUIRK_KVM_FAST_RDPMC_ALLOWED           = 1u << 4,   /* F5 */
    X86PMU_QUIRK_AMD_VMRUN_COUNTED                = 1u << 5,   /* F7 */
    X86PMU_QUIRK_HOST_COUNTER_UNSCHEDULABLE       = 1u << 6,   /* F8 */
    X86PMU_QUIRK_XEN_EMULATED_WRMSR_NOT_COUNTED   = 1u << 7,   /* F13 */
    X86PMU_QUIRK_XEN_STATUS_ONLY_AT_PMI           = 1u << 8,   /* F13 */
    X86PMU_QUIRK_VMWARE_HYBRID_FREEZE             = 1u << 9,   /* F14 */
    X86PMU_QUIRK_NO_INUSE_MSR                     = 1u << 10,  /* F20 */
    X86PMU_QUIRK_SRF7_VM_EXIT_OVERCOUNT           = 1u << 11,  /* F11 */
    X86PMU_QUIRK_KVM_SPURIOUS_PMI                 = 1u << 12,  /* F18 */
    X86PMU_QUIRK_XEN_PMC_ZERO_BECOMES_ONE         = 1u << 13,  /* F13 */
    X86PMU_QUIRK_XEN_ANYTHREAD_PC_REJECTED        = 1u << 14,  /* F13 */
    X86PMU_QUIRK_KVM_DEBUGCTL_FREEZE_REFUSED      = 1u << 15,
    X86PMU_QUIRK_NUM                              = 16,
};

/*
 * Which counters count an instruction that changes what they count (a
 * WRMSR to IA32_PERF_GLOBAL_CTRL, an event select, FIXED_CTR_CTRL): the
 * SDM only says a counter counts while its enables are set ("Architectural
 * Performance Monitoring Version 2"), not on which side of that switch the
 * WRMSR itself retires.  Named by which of an enabling and a disabling
 * WRMSR around a window are counted.
 */
typedef enum X86PMUWrmsrCounted {
    X86PMU_WRMSR_ENABLING,      /* by the counters enabled after it */
    X86PMU_WRMSR_DISABLING,     /* by the counters enabled before it */
    X86PMU_WRMSR_BOTH,          /* enabled before or after it */
    X86PMU_WRMSR_NEITHER,       /* enabled before and after it */
    X86PMU_WRMSR_NUM,
} X86PMUWrmsrCounted;

/* Where the CPU reports X86PMUConfig.ref_ratio. */
typedef enum X86PMURefReport {
    X86PMU_REF_REPORT_NONE,
    X86PMU_REF_REPORT_CPUID15,      /* CPUID.15H: EBX/EAX, ECX = 0 */
    X86PMU_REF_REPORT_PLATFORM_INFO, /* MSR_PLATFORM_INFO[15:8] */
} X86PMURefReport;

/*
 * Deliberately broken PMUs, one at a time: each is a bug a virtual PMU or
 * firmware could plausibly have, for proving that pmutest catches it.
 */
typedef enum X86PMUDefect {
    X86PMU_DEFECT_NONE,
    X86PMU_DEFECT_PMI_NEVER_DELIVERED,
    X86PMU_DEFECT_PMI_DELIVERED_TWICE,
    X86PMU_DEFECT_LVTPC_MASK_NOT_SET,
    X86PMU_DEFECT_STATUS_BIT_NOT_SET,
    X86PMU_DEFECT_OVF_CTRL_NOT_CLEARING,
    X86PMU_DEFECT_LEGACY_WRITE_NOT_SIGN_EXTENDED,
    X86PMU_DEFECT_USR_OS_SWAPPED,
    X86PMU_DEFECT_GLOBAL_CTRL_IGNORED,
    X86PMU_DEFECT_FIXED_CTR0_COUNTS_CYCLES,
    X86PMU_DEFECT_WIDTH_OFF_BY_ONE,
    X86PMU_DEFECT_FREEZE_NOT_FREEZING,
    X86PMU_DEFECT_COUNTS_LEAK_BETWEEN_CPUS,
    X86PMU_DEFECT_RDPMC_FIXED_READS_GP,
    X86PMU_DEFECT_OVERFLOW_ONE_EVENT_LATE,
    X86PMU_DEFECT_INUSE_WRONG,
    X86PMU_DEFECT_STATUS_SET_IGNORED,
    X86PMU_DEFECT_RDPMC_IGNORES_CR4_PCE,
    X86PMU_DEFECT_RESERVED_BITS_ACCEPTED,
    X86PMU_DEFECT_FIXED_PMI_BIT_IGNORED,
    X86PMU_DEFECT_NMI_DELIVERED_AS_FIXED,
    X86PMU_DEFECT_BRANCHES_COUNT_INSTRUCTIONS,
    /* Version 6 and CPUID.23H (x86-pmu-v6.c). */
    X86PMU_DEFECT_V6_ALIAS_WRAPS_PAST_7,
    X86PMU_DEFECT_EVTSEL_EXTENSIONS_REFUSED,
    X86PMU_DEFECT_RDPMC_USER_DISABLE_IGNORED,
    X86PMU_DEFECT_ACR_CAUSE_UNCHECKED,
    X86PMU_DEFECT_ACR_RELOAD_IGNORED,
    X86PMU_DEFECT_TOPDOWN_FIXED_STUCK,
    X86PMU_DEFECT_PERF_METRICS_RDPMC_READS_SLOTS,
    /* AMD (x86-pmu-amd.c). */
    X86PMU_DEFECT_AMD_STATUS_SET_ABSENT,
    X86PMU_DEFECT_AMD_FREEZE_STATUS_NOT_SET,
    X86PMU_DEFECT_HOST_ONLY_COUNTS_WITHOUT_SVM,
    /* Peer checks. */
    X86PMU_DEFECT_RUNNING_COUNTER_WRITE_DROPPED,
    X86PMU_DEFECT_IBPB_KEEPS_PREDICTIONS,
    /* Offcore response and the uncore (x86-pmu-offcore.c, x86-pmu-uncore.c) */
    X86PMU_DEFECT_OFFCORE_IGNORES_RESPONSE,
    X86PMU_DEFECT_OMR_UMASK_IGNORED,
    X86PMU_DEFECT_OMR_MSRS_ALIAS,
    X86PMU_DEFECT_TD_LEVEL2_OVER_PARENT,
    X86PMU_DEFECT_UNCORE_IGNORES_ENABLE,
    X86PMU_DEFECT_UNCORE_LEAKS_ACROSS_PACKAGES,
    X86PMU_DEFECT_DISCOVERY_COUNTER_OFFSET_WRONG,
    X86PMU_DEFECT_DISCOVERY_UNIT_ON_WRONG_PACKAGE,
    /* LBRs and PEBS (x86-pmu-lbr.c, x86-pmu-pebs*.c) */
    X86PMU_DEFECT_LBR_FROM_TO_SWAPPED,
    X86PMU_DEFECT_LBR_RECORDS_WHILE_DISABLED,
    X86PMU_DEFECT_LBR_FILTER_IGNORED,
    X86PMU_DEFECT_LBR_NOT_FROZEN,
    X86PMU_DEFECT_LBR_DEPTH_SHORT,
    X86PMU_DEFECT_PEBS_NO_RELOAD,
    X86PMU_DEFECT_PEBS_GPRS_LEGACY_ORDER,
    X86PMU_DEFECT_PEBS_THRESHOLD_EARLY,
    X86PMU_DEFECT_PEBS_FOREIGN_LBR,
    /* Architectural PEBS (x86-pmu-arch-pebs.c) */
    X86PMU_DEFECT_ARCH_PEBS_INDEX_STUCK,
    X86PMU_DEFECT_ARCH_PEBS_GROUPS_IGNORED,
    X86PMU_DEFECT_ARCH_PEBS_NO_RELOAD,
    X86PMU_DEFECT_ARCH_PEBS_NO_THRESHOLD_PMI,
    X86PMU_DEFECT_ARCH_PEBS_UNCONFIGURED_RECORD,
    X86PMU_DEFECT_NUM,
} X86PMUDefect;

/*
 * MSR_OFFCORE_RSP_0/1 (SDM vol. 3B, "Off-core Response Performance
 * Monitoring"), or the four off-module response MSRs OMR_0-3 that replace
 * them (x86-pmu-omr.c): which events select them, which bits they take,
 * and the response the model gives a request (x86-pmu-offcore.c).
 */
#define X86PMU_OFFCORE_MAX 4

typedef struct X86PMUOffcoreConfig {
    uint8_t nmsrs;              /* 0: not emulated, the MSRs raise #GP */
    bool omr;                   /* OMR_0-3 at 0x3E0, not RSP_0/1 at 0x1A6 */
    /* The select of each MSR. */
    uint8_t event[X86PMU_OFFCORE_MAX], umask[X86PMU_OFFCORE_MAX];
    uint64_t valid[X86PMU_OFFCORE_MAX]; /* bits each MSR takes; others #GP */
    uint64_t any_response;      /* the bit matching every response (0: none) */
    /*
     * The supplier and snoop-result bits of the model's response to a
     * request that hit / missed the L3 (snoop 0: the layout has none).
     */
    uint64_t hit_supplier, hit_snoop, miss_supplier, miss_snoop;
} X86PMUOffcoreConfig;

/* Request types of the offcore-response MSRs' bits 0 and 1 (every layout). */
typedef enum X86PMURequest {
    X86PMU_REQ_DATA_RD,         /* demand data read */
    X86PMU_REQ_RFO,             /* demand read for ownership (a store) */
    X86PMU_REQ_NUM,
} X86PMURequest;

/*
 * Last branch records (x86-pmu-lbr.c): Intel's legacy LBR stack (SDM vol.
 * 3B, "Last Branch, Interrupt, and Exception Recording" and the per-model
 * "LBR Stack" sections), architectural LBRs ("Architectural Last Branch
 * Records", CPUID leaf 1CH) and AMD's LbrExtV2 (APM vol. 2, "Last Branch
 * Stack"; Linux arch/x86/events/amd/lbr.c).
 */
typedef enum X86PMULbrKind {
    X86PMU_LBR_NONE,
    X86PMU_LBR_LEGACY,
    X86PMU_LBR_ARCH,
    X86PMU_LBR_AMD_V2,
} X86PMULbrKind;

#define X86PMU_LBR_MAX      64      /* the deepest architectural LBR stack */

/* A taken branch, by the kinds the LBR filters tell apart. */
typedef enum X86PMUBranch {
    X86PMU_BR_JCC,
    X86PMU_BR_NEAR_REL_JMP,
    X86PMU_BR_NEAR_IND_JMP,
    X86PMU_BR_NEAR_REL_CALL,
    X86PMU_BR_NEAR_IND_CALL,
    X86PMU_BR_NEAR_RET,
    X86PMU_BR_FAR,      /* far JMP/CALL/RET, IRET, SYSCALL..., interrupts */
} X86PMUBranch;

/*
 * What a PEBS record saves (x86-pmu-pebs-record.c): the state at the
 * instruction boundary after the event, and the guest's memory by linear
 * address (the DS save area and the PEBS buffer).  read/write return
 * false when the address does not translate; nothing is written then.
 */
typedef struct X86PMUMachine {
    uint64_t rip;           /* the next instruction (trap-like PEBS) */
    uint64_t eventing_ip;   /* the instruction that caused the event */
    uint64_t rflags;
    uint64_t gpr[16];       /* RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8-15 */
    uint64_t xmm[16][2];    /* XMM0-15, low quadword first */
    uint64_t tsc;
    void *opaque;
    bool (*read)(void *opaque, uint64_t la, void *buf, unsigned len);
    bool (*write)(void *opaque, uint64_t la, const void *buf, unsigned len);
    /* By physical address (architectural PEBS's buffer); may be NULL. */
    bool (*write_phys)(void *opaque, uint64_t pa, const void *buf,
                       unsigned len);
} X86PMUMachine;

/*
 * The Intel microarchitectures whose model-specific events the model
 * counts (x86-pmu-count.c): retired-instruction aliases that one
 * instruction per uop makes exact.
 */
typedef enum X86PMUUarch {
    X86PMU_UARCH_NONE,
    X86PMU_UARCH_NEHALEM,       /* Nehalem, Westmere */
    X86PMU_UARCH_SANDYBRIDGE,   /* Sandy Bridge to Broadwell */
    X86PMU_UARCH_SKYLAKE,       /* Skylake and its server relatives */
    X86PMU_UARCH_ICELAKE,       /* Ice Lake, Sapphire Rapids */
} X86PMUUarch;

/* What the PMU looks like: the CPUID view and the model's switches. */
typedef struct X86PMUConfig {
    X86PMUVendor vendor;
    /* Intel: CPUID.0AH (SDM vol. 2A, CPUID, leaf 0AH). */
    uint8_t version;            /* EAX[7:0]; 0: no architectural PMU */
    uint8_t num_gp;             /* EAX[15:8]; AMD: core counters */
    uint8_t gp_width;           /* EAX[23:16]; AMD: 48 */
    uint8_t events_len;         /* EAX[31:24] */
    uint32_t events_unavail;    /* EBX: bit e set = event e absent */
    uint8_t num_fixed;          /* EDX[4:0] (v2+) */
    uint8_t fixed_width;        /* EDX[12:5] (v2+) */
    uint32_t fixed_bitmap;      /* ECX (v5+): more fixed counters */
    /*
     * Which model-specific event table (SDM vol. 3B, the event tables
     * of "Performance Monitoring Events"; Intel's perfmon event files)
     * the core's GP counters follow beside the architectural events.
     */
    X86PMUUarch uarch;
    bool anythread_deprecated;  /* EDX[15] */
    bool pdcm;                  /* CPUID.01H:ECX[15]: PERF_CAPABILITIES */
    uint64_t perf_caps;         /* IA32_PERF_CAPABILITIES */
    uint64_t debugctl_valid;    /* DEBUGCTL bits taking writes; 0: derive */
    /* Intel hybrid parts: CPUID.07H:EDX[15], 1AH, and 23H's bitmaps. */
    bool hybrid;
    uint8_t core_type;          /* CPUID.1AH:EAX[31:24] */
    uint32_t native_model;      /* CPUID.1AH:EAX[23:0] */
    bool leaf23;                /* CPUID.23H: counter bitmaps */
    uint32_t leaf23_gp;         /* CPUID.23H.1:EAX */
    uint32_t leaf23_fixed;      /* CPUID.23H.1:EBX */
    /*
     * The rest of CPUID.23H (x86-pmu-v6.c): sub-leaf 0 EBX, auto counter
     * reload (sub-leaf 2: bit x = GP x, bit 32 + i = fixed i, as in
     * IA32_PERF_GLOBAL_CTRL) and the supported-events bitmap (sub-leaf 3).
     */
    uint32_t v6_features;       /* CPUID.23H.0:EBX, X86PMU_V6_* */
    bool acr;                   /* CPUID.23H.0:EAX[2] */
    uint64_t acr_reload;        /* 23H.2: EAX | EBX << 32, can be reloaded */
    uint64_t acr_cause;         /* 23H.2: ECX | EDX << 32, can cause one */
    bool leaf23_events;         /* CPUID.23H.0:EAX[3] */
    uint32_t events_avail23;    /* CPUID.23H.3:EAX: bit e = event e exists */
    /* AMD (APM vol. 3, CPUID Fn8000_0001 and Fn8000_0022). */
    uint32_t family;            /* DisplayFamily: 12-bit events from 10h */
    bool perfctr_core;          /* Fn8000_0001_ECX[23] PerfCtrExtCore */
    bool perfmon_v2;            /* Fn8000_0022_EAX[0] PerfMonV2 */
    bool lbr_pmc_freeze;        /* Fn8000_0022_EAX[2] LbrAndPmcFreeze */
    /* The cycle model: top-down slots issued per core cycle. */
    uint8_t slots_per_cycle;
    /*
     * The most instructions (and so branches) one core cycle retires in
     * the caller's cycle model; 0: no bound known (x86-pmu-count.c).
     */
    uint8_t retire_width;
    /*
     * What the manuals leave open (emu/qemu/README.md, "Counting
     * conventions"): the WRMSR that switches counting, whether an
     * instruction that changes the privilege level counts at the level it
     * goes to, whether delivering an interrupt or exception retires as an
     * instruction and a branch, and the reference clock event 3CH/01H
     * counts on a GP counter: TSC ticks per tick of it (FIXED_CTR2 counts
     * TSC ticks).  amd_reserved_gp: AMD PMU MSR writes with reserved bits
     * raise #GP, as on Intel, instead of dropping them.
     */
    X86PMUWrmsrCounted wrmsr_counted;
    bool target_mode;
    bool delivery_retires;
    uint32_t ref_ratio;
    X86PMURefReport ref_report;
    /*
     * 3CH/01H on a GP counter counts at the TSC's rate, not ref_ratio's
     * clock (CPU_CLK_UNHALTED.REF_TSC_P from Golden Cove and Gracemont on:
     * ref_at_tsc in x86-pmu-config.c); CPUID.15H still reports the
     * crystal's ratio.
     */
    bool ref_at_tsc;
    bool amd_reserved_gp;
    /*
     * CPUID says IA32_PRED_CMD.IBPB exists (Intel CPUID.(07H,0):EDX[26],
     * AMD Fn8000_0008_EBX[12]): the emulator's branch predictor model
     * forgets its targets on it.
     */
    bool ibpb;
    /* Model-specific: offcore response (x86pmu_offcore_shape, x86-pmu-omr.c). */
    X86PMUOffcoreConfig offcore;
    /* PERF_METRICS fills its level-2 bytes (x86-pmu-td2.c). */
    bool td_level2;
    /* Deviations from the manuals. */
    uint32_t quirks;            /* X86PMU_QUIRK_* */
    X86PMUDefect defect;
    /*
     * LBRs and PEBS.  Legacy LBRs: perf_caps[5:0] gives the record format
     * and lbr_depth the stack (4 or 8 entries at 0x40/0x60, 16 or 32 at
     * 0x680/0x6C0).  Architectural LBRs: CPUID.1CH:EAX as arch_lbr_eax
     * gives it (a part's dump), or 0 there and every multiple of 8 up to
     * lbr_depth; EBX and ECX as given.  AMD: CPUID Fn8000_0022_EBX[9:4].
     * PEBS: ds sets CPUID.01H DS and DTES64; perf_caps[14:6] give the
     * record format, trap-like records and adaptive PEBS.
     */
    X86PMULbrKind lbr;
    uint8_t lbr_depth;
    uint32_t arch_lbr_eax, arch_lbr_ebx, arch_lbr_ecx;
    bool ds;
    /*
     * Architectural PEBS (x86-pmu-arch-pebs.c), with perf_caps[11:8] =
     * 0xF: CPUID.23H.4:EBX (bit k: CFG_C bit 32 + k may be set) and
     * 23H.5's PEBS and PDIST counters in IA32_PERF_GLOBAL_CTRL's layout.
     */
    bool arch_pebs;
    uint32_t arch_pebs_caps;
    uint64_t arch_pebs_counters, arch_pebs_pdist;
} X86PMUConfig;

/* The registers of one logical processor. */
typedef struct X86PMUState {
    X86PMUConfig cfg;
    uint64_t gp_ctr[X86PMU_MAX_GP];
    uint64_t gp_sel[X86PMU_MAX_GP];
    uint64_t fixed_ctr[X86PMU_MAX_FIXED];
    uint64_t fixed_ctrl;
    uint64_t global_ctrl;
    uint64_t global_status;
    uint64_t debugctl;
    /* CMASK/EDGE: bit idx = the last counted cycle's condition. */
    uint64_t edge_prev;
    /* The glue's: the instruction being emulated is an RDPMC. */
    bool insn_rdpmc;
    /* Quirk state: GLOBAL_STATUS as a guest last saw it at a PMI. */
    uint64_t status_at_pmi;
    /* Defect state: PMIs owed at the next status clear. */
    uint64_t pmi_owed_bits;
    /* Quirk state: a second PMI owed from one overflow. */
    bool spurious_owed;
    /* Defect state: counters that wrapped to 0, overflow not yet seen. */
    uint64_t late_bits;
    /* TSC ticks since the last tick of the GP reference clock. */
    uint64_t ref_phase;
    /* FREEZE_WHILE_SMM: in SMM with the counters frozen; DEBUGCTL saved. */
    bool smm_frozen;
    uint64_t smm_debugctl;
    /*
     * Quirk state: the counter a host perf scheduler could not place
     * (X86PMU_QUIRK_HOST_COUNTER_UNSCHEDULABLE; 0xff: none), and the order
     * the others were enabled in.
     */
    uint8_t unsched_idx;
    uint64_t enabled_bits;
    uint8_t enable_seq[X86PMU_FIXED_IDX(X86PMU_MAX_FIXED)];
    uint8_t enable_next;
    /*
     * The controls an instruction that reads or writes the PMU started
     * from (x86pmu_insn_begin), for X86PMUConfig.wrmsr_counted.
     */
    struct {
        bool valid;
        uint64_t gp_sel[X86PMU_MAX_GP], fixed_ctrl, global_ctrl;
        uint64_t global_status;
        uint8_t unsched_idx;
    } before;
    /* Version 6: IA32_PMC_GPn/FXm_CFG_B and CFG_C (auto counter reload). */
    uint64_t gp_cfg_b[X86PMU_MAX_GP], gp_cfg_c[X86PMU_MAX_GP];
    uint64_t fixed_cfg_b[X86PMU_MAX_FIXED], fixed_cfg_c[X86PMU_MAX_FIXED];
    /* Counters to reload once the current span is counted (GLOBAL bits). */
    uint64_t acr_pending;
    /*
     * PERF_METRICS: top-down slots since it was last cleared, in its byte
     * order: retiring, bad speculation, frontend bound, backend bound.
     */
    uint64_t metrics[4];
    /*
     * PERF_METRICS as last written when not 0, read back while the sum
     * of metrics[] is still metrics_held, its sum right after that write
     * (x86-pmu-v6.c metrics_write).
     */
    uint64_t metrics_written, metrics_held;
    /* AMD: EFER.SVME and guest mode, for HostOnly/GuestOnly. */
    bool svme, guest;
    uint64_t offcore_rsp[X86PMU_OFFCORE_MAX]; /* MSR_OFFCORE_RSP_0/1, OMR_0-3 */
    /*
     * LBRs: the stack as its kind lays it out (legacy: a ring indexed
     * by lbr_tos; architectural and AMD: entry 0 the most recent).
     */
    uint64_t lbr_from[X86PMU_LBR_MAX], lbr_to[X86PMU_LBR_MAX];
    uint64_t lbr_info[X86PMU_LBR_MAX];
    uint64_t lbr_tos, lbr_select, lbr_ctl, lbr_depth, amd_dbg_extn_cfg;
    /* PEBS: the registers, and the counters whose record is owed. */
    uint64_t ds_area, pebs_enable, pebs_data_cfg;
    uint64_t pebs_pending;
    /* Architectural PEBS: IA32_PEBS_BASE and IA32_PEBS_INDEX. */
    uint64_t pebs_base, pebs_index;
} X86PMUState;

/* The outcome of an MSR access or RDPMC. */
typedef enum X86PMUAccess {
    X86PMU_NOT_MINE,            /* not a PMU register: the caller decides */
    X86PMU_OK,
    X86PMU_GP,                  /* raise #GP(0) */
} X86PMUAccess;

/*
 * One instruction for x86pmu_count_insn(): it takes `cycles` core cycles
 * (at least 1) and retires in the last of them, where its other events
 * happen: `ev` counts them (ev[X86PMU_EV_CYCLES] is ignored).
 */
#define X86PMU_INSN_INTERCEPTED 1u  /* a hypervisor would exit on it */
/* It may have changed the counters: count it as cfg.wrmsr_counted says. */
#define X86PMU_INSN_PMU_ACCESS  2u
/* RDPMC: what a hypervisor intercepts differs from the MSR accesses. */
#define X86PMU_INSN_RDPMC       4u
typedef struct X86PMUInsn {
    uint32_t cycles;
    uint32_t ev[X86PMU_EV_NUM];
    uint32_t flags;
} X86PMUInsn;

/* Which events enabled counters are counting, at either privilege. */
typedef struct X86PMUActivity {
    bool any;                   /* some counter counts */
    uint32_t events;            /* bit e: some counter counts event e */
    bool filters;               /* some counter uses CMASK, INV or EDGE */
    bool offcore;               /* some counter counts an offcore select */
    bool branch_kinds;          /* some counter counts x86pmu_count_branch's */
} X86PMUActivity;

/* How a PMI is delivered through the LVT performance-counter entry. */
typedef struct X86PMUDelivery {
    bool mask_lvt;      /* set the entry's mask bit when delivering */
    bool force_fixed;   /* ignore the delivery mode, use the vector */
} X86PMUDelivery;

/* --- Configuration (x86-pmu-config.c) --- */

/*
 * NULL when the configuration is one the manuals allow and the model
 * implements; else one line naming the -cpu property at fault.
 */
const char *x86pmu_config_check(const X86PMUConfig *cfg);

/*
 * The PMU a CPU model has: `qemu_model` is QEMU's CPU model name (without
 * "-vN"), used for Intel; AMD shapes follow the family and model.  Fills
 * *cfg and returns the row's description, or NULL if there is no shape.
 */
const char *x86pmu_shape(const char *qemu_model, X86PMUVendor vendor,
                         uint32_t family, uint32_t model, X86PMUConfig *cfg);

/*
 * CPUID.0AH:ECX as real version-5 and later parts fill it: one bit for
 * each of the EDX[4:0] contiguous fixed counters (a Raptor Lake
 * i7-14700 reads ECX=7 with EDX[4:0]=3; InstLatx64's Lunar Lake dump
 * the same).  Linux reads the fixed counters from ECX alone from version
 * 5 on (arch/x86/events/intel/core.c, intel_pmu_init), so a part that
 * left it 0 would have none there.  Before version 5 ECX is reserved: 0.
 */
void x86pmu_fixed_bitmap_default(X86PMUConfig *cfg);

/*
 * After the pmu-* properties: a shape's PERF_METRICS (perf_caps[15]) and
 * its level 2 dropped where fixed counter 3 is gone, the bit kept when
 * keep_caps (pmu-perf-caps= gave the register; x86pmu_config_check
 * judges it).
 */
void x86pmu_perf_metrics_settle(X86PMUConfig *cfg, bool keep_caps);

/* "a+b+c" of quirk names into bits; false, with *bad set, if unknown. */
bool x86pmu_parse_quirks(const char *names, uint32_t *quirks,
                         const char **bad, unsigned *bad_len);
const char *x86pmu_quirk_name(unsigned bit);
/* A defect by name; false if unknown. */
bool x86pmu_parse_defect(const char *name, X86PMUDefect *defect);
const char *x86pmu_defect_name(X86PMUDefect defect);
/* pmu-wrmsr-counted's values: enabling, disabling, both, neither. */
bool x86pmu_parse_wrmsr_counted(const char *name, X86PMUWrmsrCounted *w);
const char *x86pmu_wrmsr_counted_name(X86PMUWrmsrCounted w);

/* --- Registers (x86-pmu-regs.c) --- */

/* RESET (SDM vol. 3A, "Processor State After Reset"). */
void x86pmu_reset(X86PMUState *s, const X86PMUConfig *cfg);

/* Adjust the PMU fields of CPUID leaf `leaf`.`subleaf`. */
void x86pmu_cpuid(const X86PMUState *s, uint32_t leaf, uint32_t subleaf,
                  uint32_t *eax, uint32_t *ebx, uint32_t *ecx,
                  uint32_t *edx);

X86PMUAccess x86pmu_rdmsr(X86PMUState *s, uint32_t msr, uint64_t *val);
/* *pmis: PMIs the write owes (quirks and defects only). */
X86PMUAccess x86pmu_wrmsr(X86PMUState *s, uint32_t msr, uint64_t val,
                          unsigned *pmis);
/* RDPMC at privilege `cpl` with CR4.PCE = `pce`. */
X86PMUAccess x86pmu_rdpmc(X86PMUState *s, uint32_t ecx, unsigned cpl,
                          bool pce, uint64_t *val);
/*
 * AMD's HostOnly/GuestOnly bits count by EFER.SVME and by whether a guest
 * runs (APM vol. 2, 13.2): the user says which, before it counts events.
 */
void x86pmu_set_svm(X86PMUState *s, bool svme, bool guest);

/*
 * A named shape that no QEMU CPU model has (x86-pmu-v6.c: the version 6
 * core types): fills *cfg and returns its description, or NULL.
 */
const char *x86pmu_shape_named(const char *name, X86PMUConfig *cfg);
/* The i-th named shape's name; NULL past the last. */
const char *x86pmu_shape_name(unsigned i);

/*
 * SMI delivery and RSM: IA32_DEBUGCTL.FREEZE_WHILE_SMM freezes the
 * counters in SMM (SDM vol. 3B, "IA32_DEBUGCTL MSR").
 */
void x86pmu_smm_enter(X86PMUState *s);
void x86pmu_smm_leave(X86PMUState *s);

/*
 * Before an instruction that reads or writes the PMU acts: remember which
 * counters count, for counting it afterwards with X86PMU_INSN_PMU_ACCESS.
 */
void x86pmu_insn_begin(X86PMUState *s);
/* PMIs owed from an earlier overflow (quirks), to raise now. */
unsigned x86pmu_owed_pmis(X86PMUState *s);

/* --- Counting (x86-pmu-count.c) --- */

/*
 * Each returns the number of PMIs to deliver now (0 or 1; 2 only for a
 * defect).  Overflows set GLOBAL_STATUS and apply freeze-on-PMI first.
 */

/* `ncycles` cycles with per_cycle[e] events of each kind in every one. */
unsigned x86pmu_count_cycles(X86PMUState *s, X86PMURing ring,
                             uint64_t ncycles,
                             const uint32_t per_cycle[X86PMU_EV_NUM]);
/* One instruction (exact CMASK/INV/EDGE). */
unsigned x86pmu_count_insn(X86PMUState *s, X86PMURing ring,
                           const X86PMUInsn *insn);
/*
 * Totals without a per-cycle profile.  Counters using CMASK, INV or EDGE
 * do not count them: while x86pmu_activity() reports filters, count
 * instruction by instruction instead.
 */
unsigned x86pmu_count_bulk(X86PMUState *s, X86PMURing ring,
                           const uint64_t total[X86PMU_EV_NUM]);

/*
 * `n` events of a model-specific event, by event select and unit mask,
 * on the GP counters programmed with it (no CMASK/INV/EDGE): for users
 * that model such events themselves (pmutest's host tests: offcore
 * response).
 */
unsigned x86pmu_count_raw(X86PMUState *s, X86PMURing ring, unsigned event,
                          unsigned umask, uint64_t n);

X86PMUActivity x86pmu_activity(const X86PMUState *s);

/* --- Offcore response (x86-pmu-offcore.c) --- */

/*
 * The offcore layout of Intel family 6 `model` (nmsrs 0 if not emulated;
 * x86-pmu-config.c, with the other shapes).
 */
void x86pmu_offcore_shape(uint32_t family, uint32_t model,
                          X86PMUOffcoreConfig *oc);
/*
 * `n` requests of type `req` that hit (l3_hit) or missed the L3, counted
 * by the counters whose select's RSP or OMR value (rsp[0..nmsrs-1]: the
 * CPU's own, or its core's where the MSRs are shared) matches the model's
 * response.
 */
unsigned x86pmu_count_offcore(X86PMUState *s, X86PMURing ring,
                              const uint64_t rsp[X86PMU_OFFCORE_MAX],
                              X86PMURequest req, bool l3_hit, uint64_t n);

/* --- Off-module response and Diamond Rapids (x86-pmu-omr.c) --- */

/* Panther Cove's OMR layout: OMR_0-3, event 2AH umask bit n. */
void x86pmu_omr_layout(X86PMUOffcoreConfig *oc);
/* The diamondrapids named shape from the lunarlake-p one in cfg (which
 * x86pmu_shape_named fills first); its description. */
const char *x86pmu_dmr_shape(X86PMUConfig *cfg);

/* --- PERF_METRICS level 2 (x86-pmu-td2.c) --- */

/* Bytes 4-7 of PERF_METRICS (in place) from its level-1 bytes; 0 on a
 * shape without level 2. */
uint64_t x86pmu_td_level2(const X86PMUState *s, uint64_t level1);

/*
 * Core cycles that can pass before any counter but a reference-cycles one
 * may overflow, assuming per cycle at most one instruction, one branch,
 * four LLC references and cfg.slots_per_cycle slots; UINT64_MAX when
 * nothing counts.
 */
uint64_t x86pmu_headroom(const X86PMUState *s);
/* Reference cycles before a reference-cycles counter overflows. */
uint64_t x86pmu_ref_headroom(const X86PMUState *s);

X86PMUDelivery x86pmu_delivery(const X86PMUState *s);

/* --- Last branch records (x86-pmu-lbr.c) --- */

/* Whether taken branches must be reported now (x86pmu_branch). */
bool x86pmu_lbr_recording(const X86PMUState *s);
/*
 * A taken branch retired: `from` is the branch instruction's address (for
 * an interrupt or exception the EIP it was taken at: the faulting
 * instruction, INT n itself, the interrupted instruction), `to` its
 * target, cpl_from/cpl_to the privilege before and after.
 */
void x86pmu_branch(X86PMUState *s, X86PMUBranch kind, uint64_t from,
                   uint64_t to, unsigned cpl_from, unsigned cpl_to);

/*
 * The model-specific events a taken branch of `kind` adds one to, at
 * `ring` (x86-pmu-count.c): near calls, near returns and near taken
 * branches on Intel, taken branches and near returns on AMD.  Returns the
 * PMIs to deliver (0 or 1).
 */
unsigned x86pmu_count_branch(X86PMUState *s, X86PMURing ring,
                             X86PMUBranch kind);

/* --- PEBS (x86-pmu-pebs.c, x86-pmu-pebs-record.c) --- */

/*
 * PEBS counters that overflowed since the last assist: their record is
 * owed at the next instruction boundary.
 */
uint64_t x86pmu_pebs_pending(const X86PMUState *s);
/*
 * Write the owed record into the PEBS buffer with the state in *m, reload
 * the counters from the DS area's reset values, and raise the buffer PMI
 * (GLOBAL_STATUS bit 62) when the index reached the threshold.  Returns
 * the PMIs to deliver (0 or 1).
 */
unsigned x86pmu_pebs_assist(X86PMUState *s, const X86PMUMachine *m);

#endif
