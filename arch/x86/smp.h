/* CPUs: per-CPU setup, AP start-up from the ACPI MADT, cross-CPU calls.
 * The stack size is asm-safe: boot/entry.S hands the stacks out. */
#ifndef ARCH_X86_SMP_H
#define ARCH_X86_SMP_H

/* Each AP's stack; tests run on it (64 KiB, like the BSP's: boot/boot.h). */
#define AP_BOOT_STACK_SIZE 65536
/* The SIPI vector names a page below 1 MiB (SDM vol. 3A, 9.4.4.1); stay
 * under the EBDA, which firmware may keep at 0x9F000 and up. */
#define SMP_TRAMPOLINE_BELOW 0xa0000

#ifndef __ASSEMBLY__
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/percpu.h"

/* The AP stacks the BSP allocated, how many, and the next free one: each
 * AP takes a slot with LOCK XADD in boot/entry.S, then calls ap_main. */
extern uint64_t ap_boot_stacks;
extern uint32_t ap_stack_slots, ap_next_stack_slot;
void ap_main(void);

/* What happened to each enabled CPU the MADT (or MP table) listed. */
enum ap_state { AP_NOT_TRIED, AP_ONLINE, AP_TIMED_OUT, AP_OVER_LIMIT, AP_NOT_FROM_AN_AP };
struct smp_cpu_report {
	uint32_t apic_id;
	enum ap_state state;
	uint64_t online_tsc; /* TSC when it checked in, 0 if never */
};

struct smp_summary {
	unsigned madt_enabled; /* enabled CPUs in the MADT or MP table (incl. the BSP) */
	unsigned madt_skipped; /* disabled / online-capable-only entries */
	unsigned online;       /* CPUs running pmutest, incl. the BSP */
	unsigned limit;        /* cpus= (or MAX_CPUS) */
	uint64_t bringup_tsc;  /* TSC ticks from the first INIT to the last check-in */
	uint64_t init_tsc;     /* TSC at the first INIT: a report's online_tsc less it is its start latency */
	uint64_t wait_us;      /* how long check-ins were waited for (AP_START_TIMEOUT_US) */
	bool from_madt;        /* the CPU list is the MADT's */
	bool from_mptable;     /* no usable MADT: the MP table's */
	const char *cpu_source;   /* "the ACPI MADT", "the MP table", "the BSP alone" */
	const char *why_bsp_only; /* reason when neither table gave CPUs, or
				   * when this CPU is not the boot processor */
	bool started_on_ap;       /* IA32_APIC_BASE.BSP was 0 here: no INIT sent */
	unsigned nreports;
	struct smp_cpu_report reports[MAX_CPUS];
};

/* Very early on the BSP: per-CPU block 0 and GS base, so this_cpu() and
 * the fixup table work before anything else. */
void smp_early_bsp(void);
/* GDT/TSS/IDT/LAPIC on the BSP (after lapic_global_init). */
void smp_init_bsp(void);
/* After ACPI and the timer: start every enabled AP in the MADT (or, with
 * no MADT, the MP table), up to
 * max_cpus CPUs in all (0 = no limit but MAX_CPUS). The start-up code is
 * copied to trampoline_page: a free page below SMP_TRAMPOLINE_BELOW, or 0
 * when the memory map has none (then only the BSP runs). */
void smp_start_aps(uint64_t trampoline_page, unsigned max_cpus);
const struct smp_summary *smp_summary(void);

unsigned smp_num_cpus(void);
unsigned smp_this_cpu(void);
struct percpu *smp_cpu(unsigned cpu);

/* Run fn(arg) on `cpu` in thread context (interrupts on) and wait. Safe
 * from any CPU: a CPU waiting for a call still serves calls made to it,
 * and a call to the calling CPU itself runs at once. */
void on_cpu(unsigned cpu, void (*fn)(void *), void *arg);
/* Queue without waiting; returns a ticket for on_cpu_wait(). */
uint64_t on_cpu_async(unsigned cpu, void (*fn)(void *), void *arg);
/* Like on_cpu_async, but give up (false) if the target's previous call
 * has not finished within timeout_us. */
bool on_cpu_try_async(unsigned cpu, void (*fn)(void *), void *arg, uint64_t timeout_us, uint64_t *ticket);
/* Wait for a ticket; false if timeout_us (0 = forever) passed first. */
bool on_cpu_wait(unsigned cpu, uint64_t ticket, uint64_t timeout_us);
/* Run on every online CPU (others first, then this one) and wait. */
void on_each_cpu(void (*fn)(void *), void *arg);
/* Run any call queued for this CPU (idle loops and waiters). */
void smp_serve_calls(void);
/* Whether this CPU is running a call it serves for another CPU. */
bool smp_serving(void);
/* After a test abort unwound a call this CPU was serving: mark it done. */
void smp_calls_abandon_current(void);
#endif

#endif
