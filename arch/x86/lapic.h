/* Local APIC in xAPIC (MMIO) or x2APIC (MSR) mode (SDM vol. 3A, ch. 11). */
#ifndef ARCH_X86_LAPIC_H
#define ARCH_X86_LAPIC_H

#include <stdbool.h>
#include <stdint.h>

/* Register offsets in the xAPIC page; x2APIC MSR = 0x800 + (offset >> 4)
 * (SDM vol. 3A, table 11-1 and table 11-6). */
enum {
	LAPIC_ID = 0x020,
	LAPIC_VERSION = 0x030,
	LAPIC_TPR = 0x080,
	LAPIC_EOI = 0x0b0,
	LAPIC_SVR = 0x0f0,
	LAPIC_ESR = 0x280,
	LAPIC_ICR_LO = 0x300,
	LAPIC_ICR_HI = 0x310,
	LAPIC_LVT_TIMER = 0x320,
	LAPIC_LVT_THERMAL = 0x330,
	LAPIC_LVT_PERF = 0x340,
	LAPIC_LVT_LINT0 = 0x350,
	LAPIC_LVT_LINT1 = 0x360,
	LAPIC_LVT_ERROR = 0x370,
	LAPIC_TIMER_INIT = 0x380,
	LAPIC_TIMER_CURRENT = 0x390,
	LAPIC_TIMER_DIVIDE = 0x3e0,
};
/* LVT fields (SDM vol. 3A, "Local Vector Table"): vector [7:0], delivery
 * mode [10:8], delivery status 12 (read-only), mask 16; the bits software
 * writes are LAPIC_LVT_WRITABLE. */
#define LAPIC_LVT_MASKED (1u << 16)
#define LAPIC_LVT_WRITABLE 0x107ffu
#define LAPIC_SVR_ENABLE (1u << 8)

/* Delivery mode [10:8], the same field in LVT entries and the ICR (SDM
 * vol. 3A, 11.5.1 and 11.6.1). */
#define APIC_DM_FIXED 0x000
#define APIC_DM_NMI 0x400
#define APIC_DM_INIT 0x500
#define APIC_DM_STARTUP 0x600

/* ICR bits (SDM vol. 3A, 11.6.1). */
#define ICR_ASSERT 0x4000
#define ICR_BUSY 0x1000

/* Once on the BSP: choose the mode (x2APIC when CPUID.01H:ECX[21]). */
void lapic_global_init(void);
/* On every CPU: enable in the chosen mode, mask every LVT entry (firmware
 * leaves LINT0 = ExtINT and an armed timer under OVMF), clear ESR. */
void lapic_init_cpu(void);
bool lapic_x2apic_mode(void);
uint32_t lapic_id(void);
uint32_t lapic_read(uint32_t reg);
void lapic_write(uint32_t reg, uint32_t val);
void lapic_eoi(void);
void lapic_send_ipi(uint32_t apic_id, uint32_t icr_low);
unsigned lapic_max_lvt(void);

/* One-shot timer on VEC_TIMER; count in LAPIC ticks at divide-by-16. */
void lapic_timer_oneshot(uint32_t count);
void lapic_timer_stop(void);
uint32_t lapic_timer_current(void);

#endif
