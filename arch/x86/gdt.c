/* Per-CPU GDT and TSS: kernel and user segments, and the stacks the CPU
 * switches to on entry from ring 3 (RSP0) and for NMI, #DF and #MC (IST),
 * so that a PMI in NMI mode or a double fault always has a good stack. */
#include "arch/x86/gdt.h"

#include "arch/x86/bootmem.h"
#include "arch/x86/percpu.h"
#include "lib/string.h"

#define TRAP_STACK_SIZE 8192
#define IST_STACK_SIZE 4096

struct cpu_tables {
	uint64_t gdt[GDT_ENTRIES];
	struct tss64 tss;
} __attribute__((aligned(64)));

static struct cpu_tables cpu_tables[MAX_CPUS];

/* Each interrupt stack keeps this CPU's percpu pointer in its top slot:
 * an entry from ring 3 finds GS base there (traps.c), because IRET to
 * ring 3 may have nulled GS and, on some CPUs, its base. The stack
 * pointer handed to the CPU stays 16-byte aligned below it. */
static uint64_t stack_top_with_percpu(uint8_t *stack, size_t size, struct percpu *pc)
{
	uint64_t top = (uint64_t)(stack + size) - 16;
	*(uint64_t *)top = (uint64_t)pc;
	return top;
}

static uint64_t code_segment(unsigned dpl)
{
	/* L=1, P=1, S=1, type = execute/read (SDM vol. 3A, 3.4.5, 5.2.1). */
	return 0x00209a0000000000ull | ((uint64_t)dpl << 45);
}

static uint64_t data_segment(unsigned dpl)
{
	return 0x00cf92000000ffffull | ((uint64_t)dpl << 45);
}

void gdt_init_cpu(struct percpu *pc)
{
	struct cpu_tables *t = &cpu_tables[pc->cpu];
	uint64_t tss_base = (uint64_t)&t->tss;
	uint64_t tss_limit = sizeof(t->tss) - 1;

	memset(t, 0, sizeof(*t));
	t->gdt[GDT_KCODE / 8] = code_segment(0);
	t->gdt[GDT_KDATA / 8] = data_segment(0);
	t->gdt[GDT_CODE32 / 8] = 0x00cf9a000000ffffull;
	t->gdt[GDT_UDATA / 8] = data_segment(3);
	t->gdt[GDT_UCODE / 8] = code_segment(3);
	/* 16-byte available 64-bit TSS descriptor, type 9 (SDM vol. 3A, 8.2.3). */
	t->gdt[GDT_TSS / 8] = (tss_limit & 0xffff) | ((tss_base & 0xffffff) << 16) | (0x89ull << 40) |
			      (((tss_base >> 24) & 0xff) << 56);
	t->gdt[GDT_TSS / 8 + 1] = tss_base >> 32;

	uint8_t *stacks = bootmem_alloc(TRAP_STACK_SIZE + 3 * IST_STACK_SIZE);
	t->tss.rsp[0] = stack_top_with_percpu(stacks, TRAP_STACK_SIZE, pc);
	for (int i = 0; i < 3; i++)
		t->tss.ist[i] = stack_top_with_percpu(stacks + TRAP_STACK_SIZE + i * IST_STACK_SIZE,
						      IST_STACK_SIZE, pc);
	t->tss.iomap_base = sizeof(t->tss); /* no I/O bitmap: ring 3 gets no ports */

	struct {
		uint16_t limit;
		uint64_t base;
	} __attribute__((packed)) desc = { sizeof(t->gdt) - 1, (uint64_t)t->gdt };

	__asm__ volatile("lgdt %0\n\t"
			 "pushq %[cs]\n\t"
			 "leaq 1f(%%rip), %%rax\n\t"
			 "pushq %%rax\n\t"
			 "lretq\n"
			 "1:\n\t"
			 "movl %[ds], %%eax\n\t"
			 "movl %%eax, %%ds\n\t"
			 "movl %%eax, %%es\n\t"
			 "movl %%eax, %%ss\n\t"
			 "ltr %w[tss]"
			 :
			 : "m"(desc), [cs] "i"(GDT_KCODE), [ds] "i"(GDT_KDATA), [tss] "r"(GDT_TSS)
			 : "rax", "memory");
}
