/* Silencing the interrupt sources pmutest does not use: the 8259 PICs and
 * every I/O APIC input. Firmware may leave them live (OVMF does). */
#ifndef ARCH_X86_PC_LEGACY_IRQ_H
#define ARCH_X86_PC_LEGACY_IRQ_H

#include <stdint.h>

void pic_mask_all(void);
/* Mask every redirection entry of the I/O APIC at `phys`; returns how many. */
unsigned ioapic_mask_all(uint64_t phys);

#endif
