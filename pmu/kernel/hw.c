/* The kernel side of the PMU register seam: the real RDMSR/WRMSR/RDPMC/
 * CPUID on the calling CPU, with faults recovered by the fixup table. */
#include "arch/x86/cpu.h"
#include "arch/x86/paging.h"
#include "arch/x86/pc/ecam.h"
#include "arch/x86/pc/pci.h"
#include "arch/x86/percpu.h"
#include "arch/x86/smp.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"

/* pmu_hw_cpu() is the kernel's CPU index, which the driver's per-CPU
 * table (pmu/cpu.c) is indexed by. */
_Static_assert(PMU_MAX_CPUS == MAX_CPUS, "the PMU driver has a slot for every CPU the kernel brings up");

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

int pmu_hw_pci_read32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off, uint32_t *val)
{
	*val = pci_conf_read32(bus, dev, fn, off);
	return 0;
}

int pmu_hw_pci_write32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off, uint32_t val)
{
	pci_conf_write32(bus, dev, fn, off, val);
	return 0;
}

/* Physical memory is identity-mapped up to paging_mapped_end(); the MMIO
 * hole below 4 GiB is inside that map, uncached by the firmware's MTRRs
 * (SDM vol. 3A, "Memory Type Range Registers"), which decide over the map's
 * write-back page attributes for it. */
int pmu_hw_mmio_read32(uint64_t phys, uint32_t *val)
{
	if ((phys & 3) || phys + 4 > paging_mapped_end()) {
		*val = ~0u;
		return -1;
	}
	*val = *(volatile uint32_t *)(uintptr_t)phys;
	return 0;
}

int pmu_hw_mmio_read64(uint64_t phys, uint64_t *val)
{
	if ((phys & 7) || phys + 8 > paging_mapped_end()) {
		*val = ~0ull;
		return -1;
	}
	*val = *(volatile uint64_t *)(uintptr_t)phys;
	return 0;
}

int pmu_hw_mmio_write32(uint64_t phys, uint32_t val)
{
	if ((phys & 3) || phys + 4 > paging_mapped_end())
		return -1;
	*(volatile uint32_t *)(uintptr_t)phys = val;
	return 0;
}

int pmu_hw_pcie_read32(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off, uint32_t *val)
{
	return pci_ecam_read32(bus, dev, fn, off, val);
}

int pmu_hw_pcie_write32(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off, uint32_t val)
{
	return pci_ecam_write32(bus, dev, fn, off, val);
}
