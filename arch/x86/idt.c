/* The IDT: 256 interrupt gates onto isr_stubs, with IST stacks for NMI,
 * #DF and #MC. No gate is callable from ring 3. */
#include <stddef.h>

#include "arch/x86/gdt.h"
#include "arch/x86/traps.h"

struct idt_gate {
	uint16_t offset_lo;
	uint16_t selector;
	uint8_t ist;
	uint8_t type_attr;
	uint16_t offset_mid;
	uint32_t offset_hi;
	uint32_t reserved;
} __attribute__((packed));
_Static_assert(sizeof(struct idt_gate) == 16, "64-bit IDT gate is 16 bytes (SDM vol. 3A, 7.14.1)");

extern uint8_t isr_stubs[];
#define ISR_STUB_SIZE 16

static struct idt_gate idt[256] __attribute__((aligned(16)));

static void set_gate(unsigned vec, unsigned ist, unsigned dpl)
{
	uint64_t addr = (uint64_t)(isr_stubs + vec * ISR_STUB_SIZE);
	idt[vec] = (struct idt_gate){
		.offset_lo = addr & 0xffff,
		.selector = GDT_KCODE,
		.ist = ist,
		/* P=1, type 0xE = 64-bit interrupt gate: IF is cleared on entry. */
		.type_attr = 0x8e | (dpl << 5),
		.offset_mid = (addr >> 16) & 0xffff,
		.offset_hi = addr >> 32,
	};
}

void idt_init(void)
{
	for (unsigned v = 0; v < 256; v++)
		set_gate(v, 0, 0);
	set_gate(2, IST_NMI, 0);
	set_gate(8, IST_DF, 0);
	set_gate(18, IST_MC, 0);
}

void idt_load(void)
{
	struct {
		uint16_t limit;
		uint64_t base;
	} __attribute__((packed)) desc = { sizeof(idt) - 1, (uint64_t)idt };
	__asm__ volatile("lidt %0" ::"m"(desc) : "memory");
}
