/* The measurement bracket: start the counters, run a known workload, stop
 * them, all inside one asm statement, so that nothing the compiler emits
 * can land inside the counted window. Kernel only (WRMSR). */
#ifndef PMU_BRACKET_H
#define PMU_BRACKET_H

#include <stdint.h>

#include "pmu/loops.h"
#include "pmu/pmu.h"

/*
 * What lies between the enabling WRMSR and the disabling WRMSR:
 *
 *     wrmsr                       ; ECX = br->msr, EDX:EAX = br->on
 *   pmu_bracket_on_k<K>_<N>:
 *     <workload body, K instructions per iteration>
 *   pmu_bracket_work_end_<N>:
 *     mov <off_lo>, %eax          ; PMU_BRACKET_EXTRA_INSNS = 2
 *     mov <off_hi>, %edx
 *     wrmsr                       ; EDX:EAX = br->off
 *   pmu_bracket_off_<N>:
 *
 * The loop counter and the off value sit in registers loaded before the
 * first WRMSR, so the only non-workload instructions inside are the two
 * MOVs. tools/check-bracket.py disassembles the kernel and checks every
 * bracket against this picture and these numbers.
 *
 * Of the two WRMSRs, one retires inside the counting window: kvm-unit-tests
 * (x86/pmu.c, "precise" loop, EXTRA_INSNS = 3 + 3 for its 5 non-workload
 * instructions) counts exactly one extra instruction for the pair on Intel
 * parts. So instructions counted = workload + PMU_BRACKET_EXTRA_INSNS +
 * PMU_BRACKET_COUNTED_WRMSRS; no branch outside the workload.
 *
 * Run it with interrupts disabled: an interrupt inside the window would be
 * counted (an NMI still can be; the checks report the excess).
 * The labels are local symbols made unique per asm instance by %=.
 */
#define PMU_BRACKET_EXTRA_INSNS 2
#define PMU_BRACKET_COUNTED_WRMSRS 1
#define PMU_BRACKET_OVERHEAD_INSNS (PMU_BRACKET_EXTRA_INSNS + PMU_BRACKET_COUNTED_WRMSRS)
#define PMU_BRACKET_OVERHEAD_BRANCHES 0

#define PMU_BRACKET_ASM(k, body)                                             \
	"wrmsr\n"                                                            \
	"pmu_bracket_on_k" #k "_%=:\n\t" body "pmu_bracket_work_end_%=:\n\t" \
	"mov %k[off_lo], %%eax\n\t"                                          \
	"mov %k[off_hi], %%edx\n\t"                                          \
	"wrmsr\n"                                                            \
	"pmu_bracket_off_%=:\n\t"

/* Expected counts for n iterations of the counted loop inside a bracket. */
#define PMU_BRACKET_LOOP_INSNS(n) (PMU_LOOP_INSNS_PER_ITER * (uint64_t)(n) + PMU_BRACKET_OVERHEAD_INSNS)
#define PMU_BRACKET_LOOP_BRANCHES(n) \
	(PMU_LOOP_BRANCHES_PER_ITER * (uint64_t)(n) + PMU_BRACKET_OVERHEAD_BRANCHES)
#define PMU_BRACKET_MEMLOOP_INSNS(n) (PMU_MEMLOOP_INSNS_PER_ITER * (uint64_t)(n) + PMU_BRACKET_OVERHEAD_INSNS)

/* n >= 1 iterations of PMU_LOOP_BODY between br->on and br->off. */
static inline void pmu_bracket_loop(const struct pmu_bracket_regs *br, uint64_t n)
{
	uint64_t acc = 0;
	uint32_t lo = (uint32_t)br->on, hi = (uint32_t)(br->on >> 32);

	if (!n)
		n = 1;
	/* Early-clobber outputs keep every input out of their registers. */
	__asm__ volatile(
		PMU_BRACKET_ASM(3, PMU_LOOP_BODY)
		: [n] "+&r"(n), [acc] "+&r"(acc), "+&a"(lo), "+&d"(hi)
		: "c"(br->msr), [off_lo] "r"((uint32_t)br->off), [off_hi] "r"((uint32_t)(br->off >> 32))
		: "cc", "memory");
}

/* n >= 1 iterations of PMU_MEMLOOP_BODY over buf (n lines of 64 bytes). */
static inline void pmu_bracket_memloop(const struct pmu_bracket_regs *br, const void *buf, uint64_t n)
{
	uint64_t acc = 0;
	const void *p = buf;
	uint32_t lo = (uint32_t)br->on, hi = (uint32_t)(br->on >> 32);

	if (!n)
		n = 1;
	__asm__ volatile(
		PMU_BRACKET_ASM(4, PMU_MEMLOOP_BODY)
		: [n] "+&r"(n), [acc] "+&r"(acc), [p] "+&r"(p), "+&a"(lo), "+&d"(hi)
		: "c"(br->msr), [off_lo] "r"((uint32_t)br->off), [off_hi] "r"((uint32_t)(br->off >> 32))
		: "cc", "memory");
}

#endif
