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
 * MOVs. tools/pmutest/check_bracket.py disassembles the kernel and checks every
 * bracket against this picture and these numbers.
 *
 * How many of the two WRMSRs the counters count no manual says: the SDM
 * (vol. 3B, "Architectural Performance Monitoring Version 2") has the
 * counters count while the enables are set, and says nothing of where
 * inside a WRMSR the change takes effect. KVM counts the enabling one in
 * software and not the disabling one (Linux arch/x86/kvm/pmu.c,
 * kvm_pmu_instruction_retired(), since 9cd803d496e7); Xen counts neither.
 * So exact checks measure two loop lengths in brackets of this one shape
 * and assert the difference (tests/pmu/pmu_common.c); what the bracket adds,
 * PMU_BRACKET_EXTRA_INSNS and 0..PMU_BRACKET_WRMSRS, is reported. No
 * branch lies outside the workload.
 *
 * Run it with interrupts disabled: an interrupt inside the window would be
 * counted (an NMI or an SMI still can be: the checks take the least of
 * several windows, and re-run one an SMI fell into).
 * The labels are local symbols made unique per asm instance by %=.
 */
#define PMU_BRACKET_EXTRA_INSNS 2
#define PMU_BRACKET_WRMSRS 2
#define PMU_BRACKET_OVERHEAD_BRANCHES 0

#define PMU_BRACKET_ASM(k, body)                                             \
	"wrmsr\n"                                                            \
	"pmu_bracket_on_k" #k "_%=:\n\t" body "pmu_bracket_work_end_%=:\n\t" \
	"mov %k[off_lo], %%eax\n\t"                                          \
	"mov %k[off_hi], %%edx\n\t"                                          \
	"wrmsr\n"                                                            \
	"pmu_bracket_off_%=:\n\t"

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
