/* Every x86 instruction wrapper the kernel uses, in one place. The _safe
 * variants return 0, or the vector of the exception the instruction raised
 * (X86_VEC_GP, X86_VEC_UD: arch/x86/vectors.h), recovered through the
 * exception-fixup table. */
#ifndef ARCH_X86_CPU_H
#define ARCH_X86_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/percpu.h"
#include "arch/x86/regs.h"
#include "arch/x86/vectors.h"

/* Exception-fixup table entry: a fault at `from` resumes at `to`, with the
 * vector recorded in this CPU's percpu.fault_vector (arch/x86/traps.c). */
#define _ASM_EXTABLE(from, to) \
	".pushsection __ex_table, \"a\"\n\t.balign 8\n\t.quad " #from ", " #to "\n\t.popsection\n\t"

static inline void cpuid_count(uint32_t leaf, uint32_t sub, struct cpuid_regs *r)
{
	__asm__ volatile("cpuid"
			 : "=a"(r->eax), "=b"(r->ebx), "=c"(r->ecx), "=d"(r->edx)
			 : "a"(leaf), "c"(sub));
}

static inline struct cpuid_regs cpuid(uint32_t leaf)
{
	struct cpuid_regs r;
	cpuid_count(leaf, 0, &r);
	return r;
}

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;
	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr) : "memory");
	return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t val)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)val), "d"((uint32_t)(val >> 32)) : "memory");
}

static inline uint64_t rdpmc(uint32_t idx)
{
	uint32_t lo, hi;
	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(idx) : "memory");
	return ((uint64_t)hi << 32) | lo;
}

/* The asm leaves `failed` at 1 when the fixup path ran. */
static inline int rdmsr_safe(uint32_t msr, uint64_t *val)
{
	uint32_t lo = 0, hi = 0, failed;
	__asm__ volatile("movl $1, %[f]\n\t"
			 "1: rdmsr\n\t"
			 "xorl %[f], %[f]\n"
			 "2:\n\t" _ASM_EXTABLE(1b, 2b)
			 : [f] "=&r"(failed), "+a"(lo), "+d"(hi)
			 : "c"(msr)
			 : "memory");
	*val = failed ? 0 : ((uint64_t)hi << 32) | lo;
	return failed ? this_cpu()->fault_vector : 0;
}

static inline int wrmsr_safe(uint32_t msr, uint64_t val)
{
	uint32_t failed;
	__asm__ volatile("movl $1, %[f]\n\t"
			 "1: wrmsr\n\t"
			 "xorl %[f], %[f]\n"
			 "2:\n\t" _ASM_EXTABLE(1b, 2b)
			 : [f] "=&r"(failed)
			 : "c"(msr), "a"((uint32_t)val), "d"((uint32_t)(val >> 32))
			 : "memory");
	return failed ? this_cpu()->fault_vector : 0;
}

static inline int rdpmc_safe(uint32_t idx, uint64_t *val)
{
	uint32_t lo = 0, hi = 0, failed;
	__asm__ volatile("movl $1, %[f]\n\t"
			 "1: rdpmc\n\t"
			 "xorl %[f], %[f]\n"
			 "2:\n\t" _ASM_EXTABLE(1b, 2b)
			 : [f] "=&r"(failed), "+a"(lo), "+d"(hi)
			 : "c"(idx)
			 : "memory");
	*val = failed ? 0 : ((uint64_t)hi << 32) | lo;
	return failed ? this_cpu()->fault_vector : 0;
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi)::"memory");
	return ((uint64_t)hi << 32) | lo;
}

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" ::"a"(v), "Nd"(port));
}
static inline void outw(uint16_t port, uint16_t v)
{
	__asm__ volatile("outw %0, %1" ::"a"(v), "Nd"(port));
}
static inline void outl(uint16_t port, uint32_t v)
{
	__asm__ volatile("outl %0, %1" ::"a"(v), "Nd"(port));
}
static inline uint8_t inb(uint16_t port)
{
	uint8_t v;
	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}
static inline uint16_t inw(uint16_t port)
{
	uint16_t v;
	__asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}
static inline uint32_t inl(uint16_t port)
{
	uint32_t v;
	__asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline void cpu_relax(void)
{
	__asm__ volatile("pause" ::: "memory");
}
static inline void irq_enable(void)
{
	__asm__ volatile("sti" ::: "memory");
}
static inline void irq_disable(void)
{
	__asm__ volatile("cli" ::: "memory");
}
static inline void hlt(void)
{
	__asm__ volatile("hlt" ::: "memory");
}

static inline uint64_t read_rflags(void)
{
	uint64_t f;
	__asm__ volatile("pushfq; popq %0" : "=r"(f)::"memory");
	return f;
}

/* Disable interrupts and return whether they were on, for irq_restore. */
static inline bool irq_save(void)
{
	bool was = read_rflags() & BIT(RFLAGS_IF_BIT);
	irq_disable();
	return was;
}

static inline void irq_restore(bool was_enabled)
{
	if (was_enabled)
		irq_enable();
}

#define DEFINE_CR(n)                                                        \
	static inline uint64_t read_cr##n(void)                             \
	{                                                                   \
		uint64_t v;                                                 \
		__asm__ volatile("mov %%cr" #n ", %0" : "=r"(v)::"memory"); \
		return v;                                                   \
	}                                                                   \
	static inline void write_cr##n(uint64_t v)                          \
	{                                                                   \
		__asm__ volatile("mov %0, %%cr" #n ::"r"(v) : "memory");    \
	}
DEFINE_CR(0)
DEFINE_CR(2)
DEFINE_CR(3)
DEFINE_CR(4)
#undef DEFINE_CR

static inline void barrier(void)
{
	__asm__ volatile("" ::: "memory");
}
static inline void mb(void)
{
	__asm__ volatile("mfence" ::: "memory");
}
static inline void rmb(void)
{
	__asm__ volatile("lfence" ::: "memory");
}
static inline void wmb(void)
{
	__asm__ volatile("sfence" ::: "memory");
}

#endif
