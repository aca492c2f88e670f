/* CPU topology from CPUID (SDM vol. 3A, "Identifying Topological
 * Relationships in a MP System"; vol. 2A, CPUID leaves 0BH and 1FH). */
#include "pmu/topology.h"

#include "lib/bits.h"
#include "pmu/pmu_hw.h"

/* CPUID.0BH/1FH ECX[15:8] level types (SDM vol. 2A, leaf 1FH). */
#define LEVEL_INVALID 0
#define LEVEL_SMT 1

static unsigned ceil_log2(uint32_t n)
{
	unsigned s = 0;
	while (s < 32 && (1u << s) < n)
		s++;
	return s;
}

/* Leaf 0BH or 1FH: sub-leaves until the level type is 0; EAX[4:0] of a
 * level is how far to shift the x2APIC ID for the next level's ID, so the
 * last valid one gives the package and the SMT level the core. Returns
 * false when the leaf is not implemented (sub-leaf 0 EBX[15:0] = 0). */
static bool from_leaf(uint32_t leaf, struct pmu_topology *t)
{
	struct cpuid_regs r;

	pmu_hw_cpuid(leaf, 0, &r);
	if (BITS(r.ebx, 15, 0) == 0)
		return false;
	t->apic_id = r.edx;
	for (uint32_t sub = 0; sub < 8; sub++) {
		pmu_hw_cpuid(leaf, sub, &r);
		unsigned type = (unsigned)BITS(r.ecx, 15, 8);
		if (type == LEVEL_INVALID)
			break;
		if (type == LEVEL_SMT)
			t->smt_shift = (unsigned)BITS(r.eax, 4, 0);
		t->pkg_shift = (unsigned)BITS(r.eax, 4, 0);
	}
	t->source = leaf == 0x1f ? "CPUID.1FH" : "CPUID.0BH";
	return true;
}

void pmu_topology_read(struct pmu_topology *t)
{
	struct cpuid_regs r;
	uint32_t max_leaf, logical, cores = 1;

	*t = (struct pmu_topology){ 0 };
	pmu_hw_cpuid(0, 0, &r);
	max_leaf = r.eax;
	if (!((max_leaf >= 0x1f && from_leaf(0x1f, t)) || (max_leaf >= 0x0b && from_leaf(0x0b, t)))) {
		/* Before leaf 0BH: the initial APIC ID, the logical processors
		 * per package (CPUID.01H:EBX[23:16], valid with EDX[28] HTT) and
		 * the cores per package (CPUID.04H:EAX[31:26] + 1). */
		pmu_hw_cpuid(1, 0, &r);
		t->apic_id = BITS(r.ebx, 31, 24);
		logical = ((r.edx >> 28) & 1) ? (uint32_t)BITS(r.ebx, 23, 16) : 1;
		if (max_leaf >= 4) {
			pmu_hw_cpuid(4, 0, &r);
			if (BITS(r.eax, 4, 0))
				cores = (uint32_t)BITS(r.eax, 31, 26) + 1;
		}
		t->smt_shift = ceil_log2(logical > cores ? logical / cores : 1);
		t->pkg_shift = ceil_log2(logical ? logical : 1);
		t->source = "CPUID.01H/04H";
	}
	t->core = t->smt_shift < 32 ? t->apic_id >> t->smt_shift : 0;
	t->package = t->pkg_shift < 32 ? t->apic_id >> t->pkg_shift : 0;
}
