/* Time: the TSC as the clock, calibrated once; the LAPIC timer rate. */
#ifndef ARCH_X86_TIMER_H
#define ARCH_X86_TIMER_H

#include <stdint.h>

struct timer_info {
	uint64_t tsc_hz;
	const char *tsc_source; /* "CPUID.15H", "CPUID.16H", "PIT", "ACPI PM timer" */
	uint64_t lapic_hz;      /* LAPIC timer ticks per second at divide-by-16 */
};

void timer_calibrate(void);
const struct timer_info *timer_info(void);
uint64_t tsc_to_us(uint64_t ticks);
uint64_t us_to_tsc(uint64_t us);
void udelay(uint64_t us);
/* Microseconds since timer_calibrate(). */
uint64_t uptime_us(void);
/* How many times slower than native the guest runs now (1..64): TSC ticks
 * of a fixed loop against silicon's. Under TCG or on a busy host budgets
 * of guest time are stretched by it (docs/verdicts.md). */
unsigned timer_slowdown(void);

#endif
