/* Where a CPU sits: its x2APIC ID split into package, core and SMT thread
 * (CPUID leaves 1FH, 0BH, or 01H/04H before them), for what is shared per
 * package (the uncore) or per core (offcore-response MSRs of SMT siblings
 * on Nehalem/Westmere). pmu_packages() (pmu/pmu.h) groups the CPUs. */
#ifndef PMU_TOPOLOGY_H
#define PMU_TOPOLOGY_H

#include <stdint.h>

struct pmu_topology {
	uint32_t apic_id;   /* x2APIC ID (leaf 1FH/0BH EDX) or initial APIC ID */
	unsigned smt_shift; /* APIC ID bits of the thread within its core */
	unsigned pkg_shift; /* APIC ID bits of everything within its package */
	uint32_t core;      /* apic_id >> smt_shift: unique over the machine */
	uint32_t package;   /* apic_id >> pkg_shift */
	const char *source; /* "CPUID.1FH", "CPUID.0BH", "CPUID.01H/04H" */
};

/* The calling CPU's topology, through the register seam. */
void pmu_topology_read(struct pmu_topology *t);

#endif
