/* Workloads whose instruction and branch counts are known exactly, for the
 * boot probe and the hardware checks. The bodies are shared with the
 * measurement bracket (pmu/bracket.h), which runs them between its WRMSRs. */
#ifndef PMU_LOOPS_H
#define PMU_LOOPS_H

#include <stdint.h>

/* The counted loop: ADD, DEC, JNZ per iteration. Every JNZ retires as a
 * branch (taken n-1 times, not taken once), so for n iterations:
 * instructions = 3n, branches = n. DEC+JNZ may macro-fuse into one uop,
 * but instructions-retired counts x86 instructions, not uops. */
#define PMU_LOOP_INSNS_PER_ITER 3
#define PMU_LOOP_BRANCHES_PER_ITER 1
#define PMU_LOOP_BODY           \
	"1: add $1, %[acc]\n\t" \
	"dec %[n]\n\t"          \
	"jnz 1b\n"

/* The memory walk: one load per 64-byte line, then ADD, DEC, JNZ:
 * instructions = 4n, branches = n, and at most n LLC references. */
#define PMU_MEMLOOP_INSNS_PER_ITER 4
#define PMU_MEMLOOP_BRANCHES_PER_ITER 1
#define PMU_MEMLOOP_STRIDE 64
#define PMU_MEMLOOP_BODY            \
	"1: mov (%[p]), %[acc]\n\t" \
	"add $64, %[p]\n\t"         \
	"dec %[n]\n\t"              \
	"jnz 1b\n"

/* n must be at least 1: DEC of 0 would run 2^64 iterations. */
static inline void pmu_workload_loop(uint64_t n)
{
	uint64_t acc = 0;

	if (!n)
		return;
	__asm__ volatile(PMU_LOOP_BODY : [n] "+&r"(n), [acc] "+&r"(acc) : : "cc");
}

/* Loads from buf[0], buf[64], ... buf[64(n-1)]: the buffer must hold n
 * 64-byte lines. */
static inline void pmu_workload_memloop(const void *buf, uint64_t n)
{
	uint64_t acc = 0;
	const void *p = buf;

	if (!n)
		return;
	__asm__ volatile(PMU_MEMLOOP_BODY : [n] "+&r"(n), [acc] "+&r"(acc), [p] "+&r"(p) : : "cc", "memory");
}

#endif
