/* Per-CPU data, reached through GS base: %gs:0 holds the block's own address. */
#ifndef ARCH_X86_PERCPU_H
#define ARCH_X86_PERCPU_H

#include <stdbool.h>
#include <stdint.h>

struct ctx;
struct trap_frame;

/* Most CPUs pmutest starts; more enabled CPUs in the MADT are reported and
 * left parked. Per-CPU storage is static (.bss), sized by this. */
#define MAX_CPUS 256

struct percpu {
	struct percpu *self; /* must stay first: this_cpu() reads %gs:0 */
	uint32_t cpu;        /* dense index, BSP = 0 */
	uint32_t apic_id;
	int fault_vector; /* last vector recovered through the fixup table */
	uint64_t fault_error_code;
	uint64_t stack_top;
	bool online;
	uint32_t nmi_count; /* NMIs that no handler claimed */
	uint64_t irq_count;
	unsigned irq_depth;      /* interrupt/NMI handlers running on this CPU */
	struct ctx *recover;     /* expect_exception(): where an exception returns to */
	struct ctx *user_return; /* usermode_call(): where ring 3 comes back to */
	int user_vector;         /* the exception that ended the ring-3 call */
	uint64_t user_rip;       /* and where it was raised */
	/* trap_set_catcher(): who takes an otherwise fatal exception. */
	void (*catch_fault)(struct trap_frame *f); /* never returns */
	const char *(*catch_whose)(void);
	uint64_t lapic_ticks_left; /* watchdog one-shot re-arms still to go */
};

static inline struct percpu *this_cpu(void)
{
	struct percpu *p;
	__asm__ volatile("movq %%gs:0, %0" : "=r"(p));
	return p;
}

#endif
