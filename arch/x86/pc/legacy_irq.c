/* 8259A: OCW1 masks (data ports 0x21/0xA1; Intel 8259A datasheet). I/O
 * APIC: IOREGSEL/IOWIN at +0x00/+0x10, version register 1 with the highest
 * redirection entry in [23:16], entry n at registers 0x10 + 2n with the
 * mask in bit 16 (Intel 82093AA datasheet, 3.2). */
#include "arch/x86/pc/legacy_irq.h"

#include "arch/x86/cpu.h"

#define PIC1_DATA 0x21
#define PIC2_DATA 0xa1
#define IOAPIC_REGSEL 0x00
#define IOAPIC_WIN 0x10
#define IOAPIC_VERSION 0x01
#define IOAPIC_REDIR_BASE 0x10
#define IOAPIC_REDIR_MASKED (1u << 16)

void pic_mask_all(void)
{
	outb(PIC1_DATA, 0xff);
	outb(PIC2_DATA, 0xff);
}

static uint32_t ioapic_read(volatile uint32_t *base, uint32_t reg)
{
	base[IOAPIC_REGSEL / 4] = reg;
	return base[IOAPIC_WIN / 4];
}

static void ioapic_write(volatile uint32_t *base, uint32_t reg, uint32_t val)
{
	base[IOAPIC_REGSEL / 4] = reg;
	base[IOAPIC_WIN / 4] = val;
}

unsigned ioapic_mask_all(uint64_t phys)
{
	volatile uint32_t *base = (volatile uint32_t *)phys;
	unsigned entries = ((ioapic_read(base, IOAPIC_VERSION) >> 16) & 0xff) + 1;
	for (unsigned n = 0; n < entries; n++) {
		uint32_t reg = IOAPIC_REDIR_BASE + 2 * n;
		ioapic_write(base, reg, ioapic_read(base, reg) | IOAPIC_REDIR_MASKED);
	}
	return entries;
}
