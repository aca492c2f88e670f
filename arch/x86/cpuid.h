/* CPUID result registers, shared by the kernel and the host PMU model;
 * the bit numbers are asm-safe (boot/entry.S). */
#ifndef ARCH_X86_CPUID_H
#define ARCH_X86_CPUID_H

#ifndef __ASSEMBLY__
#include <stdint.h>

#include "lib/bits.h"

struct cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};
#endif

/* CPUID.01H:ECX/EDX and friends (SDM vol. 2A, CPUID, tables 3-10/3-11). */
#define CPUID_1_ECX_CX16_BIT 13 /* CMPXCHG16B */
#define CPUID_1_ECX_PDCM_BIT 15 /* IA32_PERF_CAPABILITIES exists */
#define CPUID_1_ECX_X2APIC_BIT 21
#define CPUID_1_ECX_TSC_DEADLINE_BIT 24
#define CPUID_1_ECX_HYPERVISOR_BIT 31
#define CPUID_1_EDX_APIC_BIT 9
#define CPUID_1_EDX_PAT_BIT 16
#define CPUID_7_EDX_HYBRID_BIT 15 /* CPUID.07H.0:EDX[15] hybrid part */
/* Debug store and LBRs (SDM vol. 2A, CPUID; vol. 3B, "Architectural Last
 * Branch Records"): DS save area, its 64-bit layout, architectural LBRs
 * described by leaf 1CH. */
#define CPUID_1_ECX_DTES64_BIT 2
#define CPUID_1_EDX_DS_BIT 21
#define CPUID_7_EDX_ARCH_LBR_BIT 19
/* CPUID.1CH: EAX[7:0] depths (bit n: 8 * (n + 1) entries); EBX[0] CPL
 * filtering, [1] branch-type filtering, [2] call-stack mode; ECX[0]
 * mispredict bit, [1] timed LBRs, [2] branch type in LBR_INFO. */
#define CPUID_1C_EBX_CPL_FILTER_BIT 0
#define CPUID_1C_EBX_BRANCH_FILTER_BIT 1
#define CPUID_1C_EBX_CALL_STACK_BIT 2
#define CPUID_1C_ECX_MISPRED_BIT 0
#define CPUID_1C_ECX_TIMED_BIT 1
#define CPUID_1C_ECX_BRANCH_TYPE_BIT 2
/* CPUID.23H (architectural PEBS; Intel ISE, "Architectural PEBS"): sub-leaf
 * 0 EAX[4] and [5] say sub-leaves 4 (capabilities: EBX bit k is CFG_C bit
 * 32 + k) and 5 (PEBS-capable counters: EAX GP, ECX fixed) exist. */
#define CPUID_23_EAX_PEBS_CAPS_BIT 4
#define CPUID_23_EAX_PEBS_COUNTERS_BIT 5
#define CPUID_80000001_EDX_PDPE1GB_BIT 26
#define CPUID_80000001_EDX_LM_BIT 29
/* CPUID.0AH:EDX (SDM vol. 2A, CPUID, "Architectural Performance
 * Monitoring Leaf"). */
#define CPUID_0A_EDX_ANYTHREAD_DEPRECATED_BIT 15
/* CPUID.1AH:EAX[31:24], the core type of the CPU that runs CPUID (SDM
 * vol. 2A, "Hybrid Information Enumeration Leaf"). */
#define CPUID_1A_CORE_TYPE_ATOM 0x20
#define CPUID_1A_CORE_TYPE_CORE 0x40
/* AMD (APM vol. 3, appendix E "CPUID Fn8000_0001_ECX", "Fn8000_0022_EAX"):
 * PerfCtrExtCore adds core counters; PerfCtrExtNB and PerfCtrExtLLC add
 * counters that RDPMC reads at indices 6-9 and 10-15; PerfMonV2 the global
 * control and status registers. */
#define CPUID_80000001_ECX_PERFCTR_CORE_BIT 23
#define CPUID_80000001_ECX_PERFCTR_NB_BIT 24
#define CPUID_80000001_ECX_PERFCTR_LLC_BIT 28
#define CPUID_80000022_EAX_PERFMON_V2_BIT 0
/* Hypervisor leaves: CPUID.40000000H + 0x100k, EAX the highest leaf of the
 * block, EBX:ECX:EDX a 12-byte signature (Linux
 * Documentation/virt/kvm/x86/cpuid.rst; Xen's and Hyper-V's equivalents).
 * The range 40000000H-4FFFFFFFH is software's: no processor returns
 * identification or features there (SDM vol. 2A, CPUID, the table of
 * leaves). */
#define CPUID_HV_LEAF_FIRST 0x40000000 /* asm-safe: boot/entry.S */
#define CPUID_HV_LEAF_LAST 0x4000ff00
#define CPUID_HV_LEAF_STEP 0x100
/* The timing leaf of the first block: EAX the TSC's rate in kHz, EBX the
 * local APIC timer's (VMware's interface, proposed to every hypervisor,
 * https://lwn.net/Articles/301888/; Linux arch/x86/kernel/cpu/vmware.c,
 * QEMU's vmware-cpuid-freq; EAX alone in Linux's
 * Documentation/virt/acrn/cpuid.rst). */
#define CPUID_HV_LEAF_TIMING 0x40000010

/* --- The newest PMUs and the peer checks --- */
/* CPUID.(07H,1):EAX[8] ArchPerfmonExt: leaf 23H exists (Linux
 * arch/x86/include/asm/cpuid/leaf_types.h, x86-cpuid-db). */
#define CPUID_7_1_EAX_ARCH_PERFMON_EXT_BIT 8
/* CPUID.23H.0:EAX bit n: sub-leaf n is valid (1 counter bitmaps, 2 auto
 * counter reload, 3 architectural events, 4-5 arch-PEBS); EBX: the
 * event-select extensions (Linux perf_event.h cpuid35_eax/cpuid35_ebx). */
#define CPUID_23_LEAF 0x23
#define CPUID_23_SUBLEAVES 6
#define CPUID_23_COUNTERS_SUBLEAF 1
#define CPUID_23_ACR_SUBLEAF 2
#define CPUID_23_EVENTS_SUBLEAF 3
#define CPUID_23_PEBS_CAPS_SUBLEAF 4
#define CPUID_23_PEBS_COUNTERS_SUBLEAF 5
#define CPUID_23_EBX_UMASK2_BIT 0
#define CPUID_23_EBX_EQ_BIT 1
#define CPUID_23_EBX_RDPMC_USER_DISABLE_BIT 2
/* Speculation control: IBPB through IA32_PRED_CMD (SDM vol. 2A, CPUID
 * leaf 07H EDX[26] "IBRS and IBPB"; APM vol. 3, CPUID Fn8000_0008_EBX[12]
 * "IBPB"). */
#define CPUID_7_EDX_SPEC_CTRL_BIT 26
#define CPUID_80000008_EBX_IBPB_BIT 12
/* Restricted transactional memory (SDM vol. 2A, CPUID leaf 07H EBX[11]). */
#define CPUID_7_EBX_RTM_BIT 11
/* AMD SVM (APM vol. 3, CPUID Fn8000_0001_ECX[2]): EFER.SVME may be set. */
#define CPUID_80000001_ECX_SVM_BIT 2
/* LbrAndPmcFreeze (APM vol. 3, CPUID Fn8000_0022_EAX[2]; Linux commit
 * 598c2fafc06f). */
#define CPUID_80000022_EAX_LBR_PMC_FREEZE_BIT 2
/* Fn8000_0022: EAX[1] LbrExtV2, EAX[2] LbrAndPmcFreeze; EBX[9:4] the
 * number of LBR stack entries (Linux arch/x86/include/asm/perf_event.h,
 * cpuid_0x80000022_ebx). */
#define CPUID_80000022_EAX_LBR_EXT_V2_BIT 1
#define CPUID_80000022_EAX_LBR_PMC_FREEZE_BIT 2
#define CPUID_80000022_EBX_LBR_DEPTH_SHIFT 4
#define CPUID_80000022_EBX_LBR_DEPTH_MASK 0x3f0u

#endif
