/* CPUID result registers, shared by the kernel and the host PMU model. */
#ifndef ARCH_X86_CPUID_H
#define ARCH_X86_CPUID_H

#include <stdint.h>

#include "lib/bits.h"

struct cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};

/* CPUID.01H:ECX/EDX and friends (SDM vol. 2A, CPUID, tables 3-10/3-11). */
#define CPUID_1_ECX_CX16_BIT 13 /* CMPXCHG16B */
#define CPUID_1_ECX_PDCM_BIT 15 /* IA32_PERF_CAPABILITIES exists */
#define CPUID_1_ECX_X2APIC_BIT 21
#define CPUID_1_ECX_TSC_DEADLINE_BIT 24
#define CPUID_1_ECX_HYPERVISOR_BIT 31
#define CPUID_1_EDX_APIC_BIT 9
#define CPUID_1_EDX_PAT_BIT 16
#define CPUID_7_EDX_HYBRID_BIT 15 /* CPUID.07H.0:EDX[15] hybrid part */
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
 * Documentation/virt/kvm/x86/cpuid.rst; Xen's and Hyper-V's equivalents). */
#define CPUID_HV_LEAF_FIRST 0x40000000u
#define CPUID_HV_LEAF_LAST 0x4000ff00u
#define CPUID_HV_LEAF_STEP 0x100u

#endif
