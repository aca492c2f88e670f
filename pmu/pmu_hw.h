/* The seam between the PMU core and the hardware: the only functions pmu/
 * uses to touch registers (MSRs, RDPMC, CPUID; for the uncore also PCI
 * configuration space and memory-mapped registers). In the kernel they are the real instructions
 * (pmu/kernel/hw.c, with exception fixup); on the host they are the
 * software PMU model (tests/host/pmu_model.c). Every call acts on the
 * calling CPU, like the instructions themselves. */
#ifndef PMU_PMU_HW_H
#define PMU_PMU_HW_H

#include <stdbool.h>
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

/* The uncore's registers outside the MSRs. A dword of PCI configuration
 * space of bus:dev.fn (offset below 256; a function that is not there
 * reads all-ones, as on hardware), and memory-mapped registers at a
 * physical address. Each returns 0, or -1 when the platform has no such
 * access or the address is not mapped (then *val is all-ones). */
int pmu_hw_pci_read32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off, uint32_t *val);
int pmu_hw_pci_write32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off, uint32_t val);
int pmu_hw_mmio_read32(uint64_t phys, uint32_t *val);
int pmu_hw_mmio_read64(uint64_t phys, uint64_t *val);
int pmu_hw_mmio_write32(uint64_t phys, uint32_t val);
/* The whole 4 KiB configuration space of a PCI Express function (offset
 * below 4096, the extended capabilities from 100H), through the platform's
 * enhanced configuration mechanism: -1 where the platform has none for
 * the bus (then *val is all-ones). */
int pmu_hw_pcie_read32(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off, uint32_t *val);
int pmu_hw_pcie_write32(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off, uint32_t val);

#endif
