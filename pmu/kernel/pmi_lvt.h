/* The PMI's way in: the LAPIC LVT performance-counter entry on each CPU,
 * with fixed delivery on VEC_PMI or NMI delivery, and the interrupt
 * handlers that run pmu/pmi.c's logic and re-arm the entry. */
#ifndef PMU_KERNEL_PMI_LVT_H
#define PMU_KERNEL_PMI_LVT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Also the values of the pmu.pmi= boot option ("fixed", "nmi"). */
enum pmi_delivery {
	PMI_DELIVERY_FIXED = 0, /* vector VEC_PMI, needs EOI */
	PMI_DELIVERY_NMI = 1,   /* NMI: arrives with interrupts off, no EOI */
};

/* Once, on the BSP, before any pmi_init_cpu: the delivery every CPU's
 * entry starts with (boot passes the pmu.pmi= option). */
void pmi_configure(enum pmi_delivery d);
/* On every CPU, after lapic_init_cpu() and idt_load(): register the
 * handlers (once, on the first call) and program this CPU's LVT entry
 * with the configured delivery. */
void pmi_init_cpu(void);
/* Whether pmi_init_cpu ran on the calling CPU. */
bool pmi_ready(void);
/* For code that needs PMIs on the calling CPU: pmi_init_cpu if it has not
 * run here, then program the current delivery again. NULL when the LVT
 * entry holds it, else why not, in buf ("LVT performance-counter entry
 * reads ... after writing ...: no PMI delivery"). */
const char *pmi_check_delivery(char *buf, size_t len);

/* Reprogram the calling CPU's LVT entry; returns 0, or -1 when the entry
 * does not read back as written (pmi_lvt_read() shows what it holds). */
int pmi_set_delivery(enum pmi_delivery d);
enum pmi_delivery pmi_delivery(void);
const char *pmi_delivery_name(enum pmi_delivery d);

/* The LVT value a delivery mode programs (unmasked), and the calling
 * CPU's current LVT performance-counter entry, for diagnostics. */
uint32_t pmi_lvt_value(enum pmi_delivery d);
uint32_t pmi_lvt_read(void);

/* PMIs a CPU took through each path (handler entries, spurious ones
 * included). */
uint64_t pmi_count(unsigned cpu, enum pmi_delivery d);
/* Mean and worst handler cost on `cpu` in TSC ticks (0 before any PMI). */
void pmi_cost(unsigned cpu, uint64_t *mean, uint64_t *max);
/* The TSC when `cpu`'s handler was last entered (0 before any PMI). */
uint64_t pmi_last_entry_tsc(unsigned cpu);

#endif
