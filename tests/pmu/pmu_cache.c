/* Cache geometry (CPUID.04H) and pointer-chase buffers for the offcore and
 * uncore checks. */
#include "tests/pmu/pmu_cache.h"

#include "arch/x86/bootmem.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "modes/workloads.h"

#define CHASE_SLOTS 4

bool pmu_cache_geom(struct pmu_cache_geom *g)
{
	struct cpuid_regs r = cpuid(0);
	unsigned max_leaf = r.eax;

	*g = (struct pmu_cache_geom){ 0 };
	if (max_leaf < 4)
		return false;
	for (uint32_t sub = 0; sub < 16; sub++) {
		cpuid_count(4, sub, &r);
		unsigned type = (unsigned)BITS(r.eax, 4, 0), level = (unsigned)BITS(r.eax, 7, 5);
		uint64_t line = BITS(r.ebx, 11, 0) + 1;
		uint64_t size = (BITS(r.ebx, 31, 22) + 1) * (BITS(r.ebx, 21, 12) + 1) * line *
				((uint64_t)r.ecx + 1);

		if (type == 0) /* no more caches */
			break;
		if (type != 1 && type != 3) /* data or unified only */
			continue;
		if (level == 1)
			g->l1d = size;
		else if (level == 2)
			g->l2 = size;
		if (level >= g->llc_level) {
			g->llc_level = level;
			g->llc = size;
			g->line = (unsigned)line;
		}
	}
	return g->llc != 0;
}

static struct {
	void *p;
	uint64_t size;
} chase_mem[CHASE_SLOTS];

const void *pmu_cache_chase_buffer(unsigned slot, uint64_t bytes, uint64_t seed)
{
	if (slot >= CHASE_SLOTS || bytes < 2 * PMU_CHASE_NODE)
		return 0;
	if (chase_mem[slot].size < bytes) {
		chase_mem[slot].p = bootmem_alloc(bytes);
		chase_mem[slot].size = bytes;
	}
	pmu_wl_chase_build(chase_mem[slot].p, bytes / PMU_CHASE_NODE, seed);
	return chase_mem[slot].p;
}

const void *pmu_cache_chase(const void *p, uint64_t hops)
{
	while (hops--)
		p = *(const void *const *)p;
	/* The compiler must not drop the loads: the result is used. */
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}
