/* Model-specific register numbers and bits, named as in the SDM vol. 4 and
 * Linux's msr-index.h. One definition each; tests/host/test_msr_defs.c
 * checks the PMU ones against a table transcribed from the SDM. */
#ifndef ARCH_X86_MSR_H
#define ARCH_X86_MSR_H

/* --- Core architecture (SDM vol. 4, table 2-2) --- */
#define MSR_IA32_APIC_BASE 0x0000001b
#define APIC_BASE_BSP_BIT 8
#define APIC_BASE_X2APIC_ENABLE_BIT 10
#define APIC_BASE_XAPIC_ENABLE_BIT 11
#define APIC_BASE_ADDR_MASK 0x000ffffffffff000ull
#define MSR_IA32_TSC_DEADLINE 0x000006e0
#define MSR_IA32_PAT 0x00000277
/* The power-up PAT: entries WB, WT, UC-, UC, WB, WT, UC-, UC (SDM vol. 3A,
 * 13.12.4 "Programming the PAT", table "Memory Type Setting of PAT Entries
 * Following a Power-up or Reset"). The page tables rely on entry 3 = UC. */
#define IA32_PAT_RESET_VALUE 0x0007040600070406ull
#define MSR_IA32_MISC_ENABLE 0x000001a0
#define MSR_PLATFORM_INFO 0x000000ce /* Intel, model-specific: [15:8] max non-turbo ratio */
#define MSR_EFER 0xc0000080
#define EFER_SCE_BIT 0
#define EFER_LME_BIT 8
#define EFER_LMA_BIT 10
#define EFER_NXE_BIT 11
#define EFER_SVME_BIT 12 /* AMD: SVM enable (APM vol. 2, "Extended Feature Enable Register") */
#define MSR_FS_BASE 0xc0000100
#define MSR_GS_BASE 0xc0000101
#define MSR_KERNEL_GS_BASE 0xc0000102

/* x2APIC register space: MSR 0x800 + (xAPIC MMIO offset >> 4)
 * (SDM vol. 3A, 11.12.1.2 "x2APIC Register Address Space"). */
#define MSR_X2APIC_BASE 0x00000800

/* --- Intel architectural performance monitoring (SDM vol. 3B chapter
 * "Performance Monitoring"; vol. 4 table 2-2 "IA-32 Architectural MSRs").
 * Sections are cited by title: their numbers move between SDM editions.
 * Linux's names (msr-index.h) are given where ours differ. --- */
#define MSR_IA32_PMC0 0x000000c1        /* + x; 32-bit write, sign-extended (Linux MSR_IA32_PERFCTR0) */
#define MSR_IA32_PERFEVTSEL0 0x00000186 /* + x (Linux MSR_ARCH_PERFMON_EVENTSEL0) */
#define MSR_IA32_A_PMC0 0x000004c1      /* + x; full-width alias (PERF_CAPABILITIES[13]) */
#define MSR_IA32_FIXED_CTR0 0x00000309  /* + i (Linux MSR_CORE_PERF_FIXED_CTR0) */
#define MSR_IA32_PERF_CAPABILITIES 0x00000345
#define MSR_IA32_FIXED_CTR_CTRL 0x0000038d /* Linux MSR_CORE_PERF_FIXED_CTR_CTRL */
#define MSR_IA32_PERF_GLOBAL_STATUS 0x0000038e
#define MSR_IA32_PERF_GLOBAL_CTRL 0x0000038f
#define MSR_IA32_PERF_GLOBAL_OVF_CTRL 0x00000390 /* v4: PERF_GLOBAL_STATUS_RESET */
#define MSR_IA32_PERF_GLOBAL_STATUS_RESET MSR_IA32_PERF_GLOBAL_OVF_CTRL
#define MSR_IA32_PERF_GLOBAL_STATUS_SET 0x00000391 /* v4 */
#define MSR_IA32_PERF_GLOBAL_INUSE 0x00000392      /* v4 */
#define MSR_IA32_DEBUGCTL 0x000001d9
/* SMIs since RESET, bits 31:0, read-only; model-specific (SDM vol. 4, the
 * MSR tables of Nehalem and later; Linux MSR_SMI_COUNT, probed with a
 * fault-safe read as Linux's arch/x86/events/msr.c does). No AMD part has
 * it. */
#define MSR_SMI_COUNT 0x00000034
/* No MSR: an index between Intel's architectural and model-specific
 * ranges (SDM vol. 4, every table ends below 0x2000 or lies at 0x4000_0000
 * and up) and AMD's (0xC000_0000 on, APM vol. 2, appendix A). A read that
 * does not #GP shows an environment that reads unknown MSRs as 0. */
#define MSR_UNIMPLEMENTED 0x00010000
#define MSR_OFFCORE_RSP_0 0x000001a6 /* model-specific, pairs with event 0xB7 umask 0x01 */
#define MSR_OFFCORE_RSP_1 0x000001a7 /* model-specific, pairs with event 0xBB umask 0x01 */
/* Off-module response (OFFMODULE_RSP_0-3), the four MSRs that take the
 * place of the two above on Diamond Rapids and Nova Lake (Linux commit
 * 4e955c08d6dc, msr-index.h MSR_OMR_0-3): OMR MSR n pairs with its
 * part's OMR event and umask bit n (pmu/intel/offcore.c). */
#define MSR_OMR_0 0x000003e0
#define MSR_OMR_NR 4
/* Version 6 alternative layout (SDM vol. 3B, "Architectural Performance
 * Monitoring Version 6"; Linux msr-index.h, commit 149fd4712bcd): GP
 * counter x at 0x1900 + 4x, its event select (CFG_A) at 0x1901 + 4x, the
 * auto-counter-reload cause mask (CFG_B) at 0x1902 + 4x and reload value
 * (CFG_C) at 0x1903 + 4x; fixed counter i at 0x1980 + 4i with CFG_B/CFG_C
 * at 0x1982/0x1983 + 4i (commit ec980e4facef). Linux drives every counter
 * through them from version 6 on, and so does pmu/intel/v6.c. */
#define MSR_IA32_PMC_V6_GP0_CTR 0x00001900
#define MSR_IA32_PMC_V6_GP0_CFG_A 0x00001901
#define MSR_IA32_PMC_V6_GP0_CFG_B 0x00001902
#define MSR_IA32_PMC_V6_GP0_CFG_C 0x00001903
#define MSR_IA32_PMC_V6_FX0_CTR 0x00001980
#define MSR_IA32_PMC_V6_FX0_CFG_B 0x00001982
#define MSR_IA32_PMC_V6_FX0_CFG_C 0x00001983
#define MSR_IA32_PMC_V6_STEP 4
/* Top-down level-1/2 fractions of FIXED_CTR3's slots, one byte each
 * (IA32_PERF_CAPABILITIES[15]; Linux commit 59a854e2f3b9): byte 0
 * retiring, 1 bad speculation, 2 frontend bound, 3 backend bound. RDPMC
 * reads it with ECX bit 29; IA32_PERF_GLOBAL_CTRL bit 48 lets it count. */
#define MSR_PERF_METRICS 0x00000329
#define PERF_METRICS_RDPMC_INDEX (1u << 29)
#define PERF_GLOBAL_CTRL_PERF_METRICS_BIT 48
/* IA32_PREDICTION_COMMAND (SDM vol. 4, table 2-2 at 49H): bit 0 IBPB. */
#define MSR_IA32_PRED_CMD 0x00000049
#define PRED_CMD_IBPB_BIT 0

/* IA32_PERFEVTSELx (SDM vol. 3B, "Architectural Performance Monitoring
 * Version 1 Facilities", figure "Layout of IA32_PERFEVTSELx MSRs"). */
#define PERFEVTSEL_EVENT_SHIFT 0
#define PERFEVTSEL_EVENT_MASK 0x00000000000000ffull
#define PERFEVTSEL_UMASK_SHIFT 8
#define PERFEVTSEL_UMASK_MASK 0x000000000000ff00ull
#define PERFEVTSEL_USR_BIT 16  /* count at CPL > 0 */
#define PERFEVTSEL_OS_BIT 17   /* count at CPL 0 */
#define PERFEVTSEL_EDGE_BIT 18 /* count deasserted-to-asserted transitions */
#define PERFEVTSEL_PC_BIT 19   /* pin control */
#define PERFEVTSEL_INT_BIT 20  /* APIC interrupt (PMI) on overflow */
#define PERFEVTSEL_ANY_BIT 21  /* AnyThread, version 3+ only; reserved before */
#define PERFEVTSEL_EN_BIT 22
#define PERFEVTSEL_INV_BIT 23 /* invert the CMASK comparison */
#define PERFEVTSEL_CMASK_SHIFT 24
#define PERFEVTSEL_CMASK_MASK 0x00000000ff000000ull
/* Bits 63:32 are reserved unless a model defines them: TSX parts count
 * in-transaction cycles with IN_TX (32) and IN_TXCP (33) (SDM vol. 3B,
 * "Performance Monitoring and Intel TSX"). */
#define PERFEVTSEL_IN_TX_BIT 32
#define PERFEVTSEL_IN_TXCP_BIT 33
/* Version 6 extensions, each enumerated by CPUID.23H.0:EBX (Linux commits
 * dce0c74d2d18 and 59af95e028d4): EQ compares CMASK for equality, RDPMC
 * user disable makes RDPMC at CPL > 0 read 0, UMASK2 is a second unit
 * mask. IA32_FIXED_CTR_CTRL holds fixed counter i's user-disable bit at
 * 33 + 4i. */
#define PERFEVTSEL_EQ_BIT 36
#define PERFEVTSEL_RDPMC_USER_DISABLE_BIT 37
#define PERFEVTSEL_UMASK2_SHIFT 40
#define PERFEVTSEL_UMASK2_MASK 0x0000ff0000000000ull
#define FIXED_CTR_CTRL_RDPMC_USER_DISABLE_BIT(i) (33 + 4 * (i))
/* AMD PerfEvtSel GuestOnly/HostOnly (APM vol. 2, 13.2). */
#define AMD_PERFEVTSEL_GUEST_ONLY_BIT 40
#define AMD_PERFEVTSEL_HOST_ONLY_BIT 41

/* IA32_FIXED_CTR_CTRL: one 4-bit field per fixed counter (SDM vol. 3B,
 * "Architectural Performance Monitoring Version 2"; AnyThread from
 * "... Version 3"). */
#define FIXED_CTR_CTRL_FIELD_WIDTH 4
#define FIXED_CTR_CTRL_SHIFT(i) (FIXED_CTR_CTRL_FIELD_WIDTH * (i))
#define FIXED_CTR_CTRL_OS_BIT 0  /* within a field: count at CPL 0 */
#define FIXED_CTR_CTRL_USR_BIT 1 /* count at CPL > 0 */
#define FIXED_CTR_CTRL_ANY_BIT 2 /* AnyThread, version 3+ */
#define FIXED_CTR_CTRL_PMI_BIT 3 /* PMI on overflow */
#define FIXED_CTR_CTRL_FIELD_MASK 0xfull
#define FIXED_CTR_CTRL_EN_MASK 0x3ull /* OS | USR: the field's enable */

/* IA32_PERF_GLOBAL_CTRL / STATUS / OVF_CTRL / STATUS_SET / INUSE share a
 * layout: bit x for PMCx, bit 32 + i for FIXED_CTRi (SDM vol. 3B,
 * "Architectural Performance Monitoring Version 2" and "... Version 4";
 * vol. 4 table 2-2 at 38EH-392H). */
#define PERF_GLOBAL_FIXED_SHIFT 32
#define PERF_GLOBAL_STATUS_ARCH_PEBS_THRESH_BIT 54 /* architectural PEBS buffer threshold */
#define PERF_GLOBAL_STATUS_TRACE_TOPA_PMI_BIT 55
#define PERF_GLOBAL_STATUS_LBR_FRZ_BIT 58 /* v4 */
#define PERF_GLOBAL_STATUS_CTR_FRZ_BIT 59 /* v4: counters frozen on PMI */
#define PERF_GLOBAL_STATUS_ASCI_BIT 60
#define PERF_GLOBAL_STATUS_OVF_UNCORE_BIT 61 /* v3+ */
#define PERF_GLOBAL_STATUS_OVF_BUF_BIT 62    /* DS save area buffer overflow */
#define PERF_GLOBAL_STATUS_COND_CHGD_BIT 63
#define PERF_GLOBAL_INUSE_PMI_BIT 63 /* some INT/PMI bit is set */

/* IA32_DEBUGCTL (SDM vol. 3B, "IA32_DEBUGCTL MSR"; "Architectural
 * Performance Monitoring Version 4" for the streamlined freeze). */
#define DEBUGCTL_LBR_BIT 0
#define DEBUGCTL_BTF_BIT 1
#define DEBUGCTL_TR_BIT 6
#define DEBUGCTL_BTS_BIT 7
#define DEBUGCTL_FREEZE_LBRS_ON_PMI_BIT 11
#define DEBUGCTL_FREEZE_PERFMON_ON_PMI_BIT 12
#define DEBUGCTL_FREEZE_WHILE_SMM_BIT 14

/* IA32_PERF_CAPABILITIES, read-only (SDM vol. 3B, "IA32_PERF_CAPABILITIES
 * MSR Enumeration"; vol. 4 table 2-2 at 345H). */
#define PERF_CAP_LBR_FMT_MASK 0x3full
#define PERF_CAP_PEBS_TRAP_BIT 6
#define PERF_CAP_PEBS_ARCH_REG_BIT 7
#define PERF_CAP_PEBS_FMT_SHIFT 8
#define PERF_CAP_PEBS_FMT_MASK 0xf00ull
#define PERF_CAP_FREEZE_SMM_BIT 12
#define PERF_CAP_FW_WRITE_BIT 13 /* IA32_A_PMCx full-width writes */
#define PERF_CAP_PEBS_BASELINE_BIT 14
#define PERF_CAP_PERF_METRICS_BIT 15

/* --- Last branch records and PEBS. Intel: SDM vol. 3B, chapter
 * "Debug, Branch Profile, TSC, and Intel Resource Director Technology
 * Features" (sections "Last Branch, Interrupt, and Exception Recording",
 * "Architectural Last Branch Records", "Filtering of Last Branch Records",
 * "LBR Stack" per microarchitecture) and chapter "Performance Monitoring"
 * ("Debug Store (DS) Mechanism", "Processor Event Based Sampling",
 * "Adaptive PEBS"); vol. 4 table 2-2. Linux names from msr-index.h. --- */
#define MSR_LBR_SELECT 0x000001c8                /* legacy LBR filter, suppress bits */
#define MSR_LASTBRANCH_TOS 0x000001c9            /* legacy: index of the most recent entry */
#define MSR_LASTBRANCH_0_FROM_IP_CORE 0x00000040 /* + i: Core 2, Atom, Silvermont (4 or 8 deep) */
#define MSR_LASTBRANCH_0_TO_IP_CORE 0x00000060
#define MSR_LASTBRANCH_0_FROM_IP 0x00000680 /* + i: Nehalem and later (16 or 32 deep) */
#define MSR_LASTBRANCH_0_TO_IP 0x000006c0
#define MSR_LBR_INFO_0 0x00000dc0 /* + i: LBR formats 5 and 7 */
#define MSR_ARCH_LBR_CTL 0x000014ce
#define MSR_ARCH_LBR_DEPTH 0x000014cf
#define MSR_ARCH_LBR_FROM_0 0x00001500
#define MSR_ARCH_LBR_TO_0 0x00001600
#define MSR_ARCH_LBR_INFO_0 0x00001200
#define MSR_IA32_DS_AREA 0x00000600
#define MSR_IA32_PEBS_ENABLE 0x000003f1
#define MSR_PEBS_DATA_CFG 0x000003f2   /* adaptive PEBS */
#define MSR_IA32_PEBS_BASE 0x000003f4  /* architectural PEBS */
#define MSR_IA32_PEBS_INDEX 0x000003f5 /* architectural PEBS */

/* IA32_MISC_ENABLE: 1 = the feature is NOT available (read-only; SDM
 * vol. 4 table 2-2, "BTS_UNAVAILABLE", "PEBS_UNAVAILABLE"). */
#define MISC_ENABLE_PERF_MON_BIT 7
#define MISC_ENABLE_BTS_UNAVAIL_BIT 11
#define MISC_ENABLE_PEBS_UNAVAIL_BIT 12

/* MSR_LBR_SELECT: bits 0-8 suppress ("do not capture"), bit 9 enables
 * the call-stack mode (Haswell on). */
#define LBR_SELECT_CPL_EQ_0_BIT 0
#define LBR_SELECT_CPL_NEQ_0_BIT 1
#define LBR_SELECT_JCC_BIT 2
#define LBR_SELECT_NEAR_REL_CALL_BIT 3
#define LBR_SELECT_NEAR_IND_CALL_BIT 4
#define LBR_SELECT_NEAR_RET_BIT 5
#define LBR_SELECT_NEAR_IND_JMP_BIT 6
#define LBR_SELECT_NEAR_REL_JMP_BIT 7
#define LBR_SELECT_FAR_BRANCH_BIT 8
#define LBR_SELECT_EN_CALLSTACK_BIT 9

/* Legacy LBR records by format (PERF_CAPABILITIES[5:0]): formats 3 and 4
 * keep flags in the top bits of FROM (63 MISPRED; format 4 also 62 IN_TSX,
 * 61 TSX_ABORT) and sign-extend the address below them; format 5 moves
 * them to MSR_LBR_INFO_x, which also holds the cycle count. */
#define LBR_FROM_MISPRED_BIT 63
#define LBR_FROM_IN_TSX_BIT 62
#define LBR_FROM_TSX_ABORT_BIT 61
#define LBR_INFO_MISPRED_BIT 63
#define LBR_INFO_IN_TSX_BIT 62
#define LBR_INFO_TSX_ABORT_BIT 61
#define LBR_INFO_CYCLES_MASK 0xffffull
#define LBR_FORMAT_32 0x00
#define LBR_FORMAT_EIP_FLAGS 0x03
#define LBR_FORMAT_EIP_FLAGS2 0x04
#define LBR_FORMAT_INFO 0x05
#define LBR_FORMAT_TIME 0x06 /* Goldmont: cycles in TO[63:48] (Linux LBR_FORMAT_TIME) */
#define LBR_FORMAT_INFO2 0x07
#define LBR_FORMAT_ARCH 0x3f /* no legacy LBR: architectural LBRs instead */

/* IA32_LBR_CTL (architectural LBRs): enable polarity, unlike LBR_SELECT. */
#define ARCH_LBR_CTL_LBREN_BIT 0
#define ARCH_LBR_CTL_OS_BIT 1
#define ARCH_LBR_CTL_USR_BIT 2
#define ARCH_LBR_CTL_CALL_STACK_BIT 3
#define ARCH_LBR_CTL_COND_BIT 16
#define ARCH_LBR_CTL_NEAR_REL_JMP_BIT 17
#define ARCH_LBR_CTL_NEAR_IND_JMP_BIT 18
#define ARCH_LBR_CTL_NEAR_REL_CALL_BIT 19
#define ARCH_LBR_CTL_NEAR_IND_CALL_BIT 20
#define ARCH_LBR_CTL_NEAR_RET_BIT 21
#define ARCH_LBR_CTL_OTHER_BRANCH_BIT 22
#define ARCH_LBR_CTL_VALID_MASK 0x7f000full
#define ARCH_LBR_INFO_MISPRED_BIT 63
#define ARCH_LBR_INFO_CYC_CNT_VALID_BIT 60

/* The 64-bit DS save area that IA32_DS_AREA points to (SDM vol. 3B, "DS
 * Save Area", figure "IA-32e Mode DS Save Area"): BTS, then PEBS buffer
 * base, index, absolute maximum, interrupt threshold, then the counter
 * reset values: GP counter n at 0x40 + 8n; fixed counter i at 0x80 + 8i
 * up to PEBS format 4, at 0x140 + 8i from format 5 (Linux "perf/x86/intel:
 * Enable PEBS format 5", 2145e77fecfb). */
#define DS_PEBS_BASE 0x20
#define DS_PEBS_INDEX 0x28
#define DS_PEBS_MAX 0x30
#define DS_PEBS_THRESHOLD 0x38
#define DS_PEBS_RESET_GP0 0x40
#define DS_PEBS_RESET_FIXED0 0x80
#define DS_PEBS_RESET_FIXED0_FMT5 0x140

/* IA32_PEBS_ENABLE: bit n PEBS on IA32_PMCn; with adaptive PEBS bit 32 + i
 * is fixed counter i (before it, bits 32-35 were the load-latency enables). */
#define PEBS_ENABLE_FIXED_SHIFT 32
/* Adaptive PEBS (SDM vol. 3B, "Adaptive PEBS"): MSR_PEBS_DATA_CFG groups,
 * and the per-counter opt-in bits in the event selects. */
#define PEBS_DATA_CFG_MEMINFO_BIT 0
#define PEBS_DATA_CFG_GPRS_BIT 1
#define PEBS_DATA_CFG_XMMS_BIT 2
#define PEBS_DATA_CFG_LBRS_BIT 3
#define PEBS_DATA_CFG_LBR_SHIFT 24 /* [31:24]: LBR entries minus 1 */
#define PEBS_DATA_CFG_LBR_MASK 0xff000000ull
#define PERFEVTSEL_ADAPTIVE_BIT 34
#define FIXED_CTR_CTRL_ADAPTIVE_BIT(i) (32 + 4 * (i))

/* Architectural PEBS (Intel ISE, chapter "Architectural PEBS"; Linux
 * msr-index.h and perf_event.h of the arch-PEBS series, tip d21954c8a0ff,
 * 2721e8da2de7). IA32_PEBS_BASE: the buffer's physical address (4 KiB
 * aligned) and in [3:0] its size, 4 KiB << SIZE. IA32_PEBS_INDEX: the
 * write offset WR in [26:4] (bytes, 16-byte units), FULL 31, EN 32, the
 * threshold offset in [58:36] (same units). IA32_PMC_GPn/FXm_CFG_C: the
 * reload value in [31:0], then the groups a record of the counter holds
 * (bit k of CPUID.23H.4:EBX enumerates bit 32 + k), and PEBS on in 63;
 * a record header has the same group bits and its size in [15:0]. */
#define ARCH_PEBS_BASE_SIZE_MASK 0xfull
#define ARCH_PEBS_INDEX_OFFSET_SHIFT 4
#define ARCH_PEBS_INDEX_WR_MASK 0x7fffff0ull
#define ARCH_PEBS_INDEX_FULL_BIT 31
#define ARCH_PEBS_INDEX_EN_BIT 32
#define ARCH_PEBS_INDEX_THRESH_SHIFT 36
#define ARCH_PEBS_INDEX_THRESH_MASK (0x7fffffull << 36)
#define ARCH_PEBS_RELOAD_MASK 0xffffffffull
#define ARCH_PEBS_CNTR_SHIFT 35 /* [38:35]: the counters group */
#define ARCH_PEBS_CNTR_MASK (0xfull << 35)
#define ARCH_PEBS_LBR_SHIFT 40 /* [41:40]: 1 eight entries, 2 sixteen, 3 the LBR depth */
#define ARCH_PEBS_LBR_MASK (0x3ull << 40)
#define ARCH_PEBS_XMM_BIT 49
#define ARCH_PEBS_GPR_BIT 61
#define ARCH_PEBS_AUX_BIT 62
#define ARCH_PEBS_EN_BIT 63 /* CFG_C: PEBS on; header: the basic group */
#define ARCH_PEBS_HDR_SIZE_MASK 0xffffull
#define ARCH_PEBS_HDR_CONT_BIT 31 /* another fragment of the record follows */

/* AMD Last Branch Record Extension Version 2 (Zen 4; APM vol. 2, "Last
 * Branch Stack"; Linux arch/x86/events/amd/lbr.c). */
#define MSR_AMD_LBR_SELECT 0xc000010e   /* suppress bits as Intel's 0-8 */
#define MSR_AMD_DBG_EXTN_CFG 0xc000010f /* bit 6 LBRV2EN */
#define AMD_DBG_EXTN_CFG_LBRV2EN_BIT 6
#define MSR_AMD_LBR_FROM_0 0xc0010300 /* + 2n */
#define MSR_AMD_LBR_TO_0 0xc0010301   /* + 2n */
#define AMD_LBR_FROM_MISPRED_BIT 63
#define AMD_LBR_TO_VALID_BIT 63
#define AMD_LBR_TO_SPEC_BIT 62

/* Client uncore, package scope (SDM vol. 4, the MSR tables of the 2nd to
 * 10th generation Core processors; Linux uncore_snb.c names). The global
 * control moved to 0xE01 on Skylake, when 0x391 became
 * IA32_PERF_GLOBAL_STATUS_SET of the version-4 core PMU. */
#define MSR_UNC_PERF_GLOBAL_CTRL 0x00000391    /* Sandy Bridge .. Broadwell */
#define MSR_SKL_UNC_PERF_GLOBAL_CTL 0x00000e01 /* Skylake .. Comet Lake */
#define MSR_UNC_CBO_CONFIG 0x00000396          /* [3:0] number of C-boxes */
#define MSR_UNC_CBO_0_PERFEVTSEL0 0x00000700   /* + 0x10 * box + counter */
#define MSR_UNC_CBO_0_PERFCTR0 0x00000706      /* + 0x10 * box + counter */
#define MSR_UNC_CBO_STRIDE 0x10
#define MSR_UNC_ARB_PERFCTR0 0x000003b0    /* + counter (Sandy Bridge .. Tiger Lake) */
#define MSR_UNC_ARB_PERFEVTSEL0 0x000003b2 /* + counter */

/* Client uncore from Ice Lake (Linux arch/x86/events/intel/uncore_snb.c
 * names; its commits "Add Ice Lake", "Add Alder Lake", "Add Meteor Lake",
 * "Add Lunar Lake support"). C-boxes 8 apart from Ice Lake; Alder Lake
 * moved them, the ARB and the global control to 0x2000 and up; Meteor Lake
 * has no global control but box controls on its two NCUs, which Lunar
 * Lake's global control is the first of. */
#define MSR_ICL_UNC_CBO_0_PER_CTR0 0x00000702 /* event selects stay at 0x700 */
#define MSR_ICL_UNC_CBO_STRIDE 0x8
#define MSR_ADL_UNC_CBO_0_PERFEVTSEL0 0x00002000
#define MSR_ADL_UNC_CBO_0_PER_CTR0 0x00002002
#define MSR_ADL_UNC_CBO_STRIDE 0x8
#define MSR_ADL_UNC_ARB_PERFEVTSEL0 0x00002fd0
#define MSR_ADL_UNC_ARB_PER_CTR0 0x00002fd2
#define MSR_ADL_UNC_ARB_STRIDE 0x8
#define MSR_ADL_UNC_PERF_GLOBAL_CTL 0x00002ff0
#define MSR_MTL_UNC_SNCU_BOX_CTL 0x0000200e
#define MSR_MTL_UNC_ARB_CTRL 0x00002412     /* + 0x10 * box + counter; counters at + 6 */
#define MSR_MTL_UNC_CNCU_BOX_CTL 0x0000240e /* Lunar Lake's global control */
#define MSR_MTL_UNC_CBO_0_PERFEVTSEL0 0x00002442
#define MSR_MTL_UNC_CBO_0_PER_CTR0 0x00002448
#define MSR_MTL_UNC_STRIDE 0x10

/* Server CHAs (Linux uncore_snbep.c names; the box counts as Intel's PCM
 * src/cpucounters.cpp reads them). Skylake-SP: unit n at 0xE00 + 0x10n
 * (box control, event selects + 1, counters + 8); Ice Lake-SP: the same
 * offsets from irregular units (icx_cha_msr_offsets); Sapphire Rapids:
 * unit n at 0x2000 + 0x10n, event selects + 2, counters + 8. */
#define MSR_SKX_C0_PMON_BOX_CTL 0x00000e00
#define MSR_SKX_CHA_STRIDE 0x10
#define MSR_SKX_NCU_PMON_CONFIG 0x00000702 /* [5:0] number of CHAs (PCM) */
#define MSR_SPR_C0_PMON_BOX_CTL 0x00002000
#define MSR_SPR_CHA_STRIDE 0x10
#define MSR_SPR_UNC_PMON_GLOBAL_CTL 0x00002ff0 /* bit 0 freezes every box (PCM) */
#define MSR_SPR_UNC_CBO_CONFIG 0x00002ffe      /* number of CHAs (Linux) */
#define MSR_GNR_PMON_NUMBER_CBOS 0x00003fed    /* [8:0] number of CHAs (PCM) */

/* --- AMD (APM vol. 2, "Performance Monitoring Counters") --- */
#define MSR_K7_EVNTSEL0 0xc0010000    /* + n, n < 4 */
#define MSR_K7_PERFCTR0 0xc0010004    /* + n, n < 4 */
#define MSR_F15H_PERF_CTL0 0xc0010200 /* + 2n (PerfCtrExtCore) */
#define MSR_F15H_PERF_CTR0 0xc0010201 /* + 2n */
#define MSR_AMD64_PERF_CNTR_GLOBAL_STATUS 0xc0000300
#define MSR_AMD64_PERF_CNTR_GLOBAL_CTL 0xc0000301
#define MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR 0xc0000302
/* PerfMonV2's write-1-to-set twin of PerfCntrGlobalStatus (Linux
 * msr-index.h; KVM commit 68e61f6fd656). */
#define MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_SET 0xc0000303
/* PerfCntrGlobalStatus bit 58, LbrFreeze (Linux amd/core.c
 * amd_pmu_cpu_reset): set on a PMI with LbrAndPmcFreeze and
 * IA32_DEBUGCTL bit 11 (FLBRI, Intel's FREEZE_LBRS_ON_PMI position). */
#define AMD_PERF_GLOBAL_STATUS_LBR_FREEZE_BIT 58

#endif
