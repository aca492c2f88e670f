/* Cache geometry from CPUID.04H and pointer-chase buffers sized from it,
 * for the offcore and uncore checks (tests/pmu/pmu_offcore.c, pmu_uncore.c). */
#ifndef TESTS_PMU_CACHE_H
#define TESTS_PMU_CACHE_H

#include <stdbool.h>
#include <stdint.h>

struct pmu_cache_geom {
	uint64_t l1d, l2, llc; /* bytes; 0 when CPUID.04H does not list it */
	unsigned llc_level;
	unsigned line; /* line size of the LLC (bytes) */
};

/* The calling CPU's data/unified caches (SDM vol. 2A, CPUID leaf 04H:
 * size = ways x partitions x line size x sets). False when the leaf is
 * absent or lists no cache. */
bool pmu_cache_geom(struct pmu_cache_geom *g);

/* A buffer of `bytes` (a multiple of 64) linked into one random cycle of
 * 64-byte nodes (modes/workloads.h, Sattolo), allocated once per slot from
 * bootmem and kept: later calls with the same slot and a size not above
 * the first get the same buffer rebuilt. */
const void *pmu_cache_chase_buffer(unsigned slot, uint64_t bytes, uint64_t seed);

/* Follow the chain hops times from p: one dependent load per hop, so the
 * prefetchers cannot run ahead of it. Returns where it stopped. */
const void *pmu_cache_chase(const void *p, uint64_t hops);

#endif
