/* The kernel side of the PMU register seam: the real RDMSR/WRMSR/RDPMC/
 * CPUID on the calling CPU, with faults recovered by the fixup table. */
#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "arch/x86/smp.h"
#include "pmu/pmu_hw.h"

int pmu_hw_rdmsr(uint32_t msr, uint64_t *val)
{
	return rdmsr_safe(msr, val);
}

int pmu_hw_wrmsr(uint32_t msr, uint64_t val)
{
	return wrmsr_safe(msr, val);
}

int pmu_hw_rdpmc(uint32_t ecx, uint64_t *val)
{
	return rdpmc_safe(ecx, val);
}

void pmu_hw_cpuid(uint32_t leaf, uint32_t subleaf, struct cpuid_regs *r)
{
	cpuid_count(leaf, subleaf, r);
}

unsigned pmu_hw_cpu(void)
{
	return this_cpu()->cpu;
}

unsigned pmu_hw_ncpus(void)
{
	return smp_num_cpus();
}

uint64_t pmu_hw_tsc(void)
{
	return rdtsc();
}
