/* Per-CPU GDT and 64-bit TSS (SDM vol. 3A, 3.4.5 and 8.7). The selectors
 * are asm-safe: the boot GDT (boot/entry.S) has the same first four. */
#ifndef ARCH_X86_GDT_H
#define ARCH_X86_GDT_H

#define GDT_KCODE 0x08
#define GDT_KDATA 0x10
#define GDT_CODE32 0x18
#define GDT_UDATA 0x20
#define GDT_UCODE 0x28
#define GDT_TSS 0x30
#define GDT_ENTRIES 8
#define USER_CS (GDT_UCODE | 3)
#define USER_DS (GDT_UDATA | 3)

/* Interrupt-stack-table slots (1-based, as the IDT gate's IST field). */
#define IST_NMI 1
#define IST_DF 2
#define IST_MC 3

#ifndef __ASSEMBLY__
#include <stdint.h>

struct tss64 {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;
} __attribute__((packed));
_Static_assert(sizeof(struct tss64) == 104, "64-bit TSS is 104 bytes (SDM vol. 3A, figure 8-11)");

struct percpu;
/* Load this CPU's GDT, segment registers and TSS; the stacks come from pc. */
void gdt_init_cpu(struct percpu *pc);
#endif

#endif
