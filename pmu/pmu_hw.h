/* The seam between the PMU core and the hardware: the only functions pmu/
 * uses to touch registers. In the kernel they are the real instructions
 * (pmu/kernel/hw.c, with exception fixup); on the host they are the
 * software PMU model (tests/host/pmu_model.c). Every call acts on the
 * calling CPU, like the instructions themselves. */
#ifndef PMU_PMU_HW_H
#define PMU_PMU_HW_H

#include <stdint.h>

#include "arch/x86/cpuid.h"

/* Each returns 0, or the exception vector the access raised (13 = #GP,
 * 6 = #UD); on a fault *val is 0. */
int pmu_hw_rdmsr(uint32_t msr, uint64_t *val);
int pmu_hw_wrmsr(uint32_t msr, uint64_t val);
int pmu_hw_rdpmc(uint32_t ecx, uint64_t *val);
void pmu_hw_cpuid(uint32_t leaf, uint32_t subleaf, struct cpuid_regs *r);

/* Dense index of the calling CPU (BSP = 0) and how many CPUs are online. */
unsigned pmu_hw_cpu(void);
unsigned pmu_hw_ncpus(void);

/* The calling CPU's time-stamp counter (RDTSC), for sample timestamps. */
uint64_t pmu_hw_tsc(void);

#endif
