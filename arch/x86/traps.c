/* Exception and interrupt dispatch. An exception is, in order: recovered
 * through the fixup table (rdmsr_safe & co.), returned to an
 * expect_exception() or usermode_call() context, handed to the catcher the
 * running code installed (the test framework charges it to the test, which
 * fails, and the suite goes on), or a panic. */
#include "arch/x86/traps.h"

#include <stdarg.h>
#include <stddef.h>

#include "arch/x86/context.h"
#include "arch/x86/cpu.h"
#include "arch/x86/lapic.h"
#include "arch/x86/msr.h"
#include "arch/x86/pc/console.h"
#include "arch/x86/pc/platform_exit.h"
#include "lib/printf.h"

struct ex_entry {
	uint64_t from, to;
};
extern const struct ex_entry __start_ex_table[], __stop_ex_table[];

static irq_handler_fn irq_handlers[256];
#define MAX_NMI_HANDLERS 4
static nmi_handler_fn nmi_handlers[MAX_NMI_HANDLERS];

void irq_set_handler(unsigned vector, irq_handler_fn fn)
{
	irq_handlers[vector & 0xff] = fn;
}

void nmi_register(nmi_handler_fn fn)
{
	for (int i = 0; i < MAX_NMI_HANDLERS; i++) {
		if (!nmi_handlers[i]) {
			nmi_handlers[i] = fn;
			return;
		}
	}
	panic("too many NMI handlers");
}

void trap_dump(const struct trap_frame *f, void (*line)(void *ctx, const char *s), void *ctx)
{
	char buf[128];
	const char *whose = this_cpu()->catch_whose ? this_cpu()->catch_whose() : NULL;

	ksnprintf(buf, sizeof(buf), "%s (vector %lu) error code %#lx on cpu %u (apic %u)%s%s",
		  x86_vector_name((unsigned)f->vector), f->vector, f->error_code, this_cpu()->cpu,
		  this_cpu()->apic_id, whose ? " in " : "", whose ? whose : "");
	line(ctx, buf);
	ksnprintf(buf, sizeof(buf), "RIP %04lx:%016lx RSP %04lx:%016lx RFLAGS %08lx CR2 %016lx", f->cs,
		  f->rip, f->ss, f->rsp, f->rflags, read_cr2());
	line(ctx, buf);
	ksnprintf(buf, sizeof(buf), "RAX %016lx RBX %016lx RCX %016lx RDX %016lx", f->rax, f->rbx, f->rcx,
		  f->rdx);
	line(ctx, buf);
	ksnprintf(buf, sizeof(buf), "RSI %016lx RDI %016lx RBP %016lx R8  %016lx", f->rsi, f->rdi, f->rbp,
		  f->r8);
	line(ctx, buf);
	ksnprintf(buf, sizeof(buf), "R9  %016lx R10 %016lx R11 %016lx R12 %016lx", f->r9, f->r10, f->r11,
		  f->r12);
	line(ctx, buf);
	ksnprintf(buf, sizeof(buf), "R13 %016lx R14 %016lx R15 %016lx CR0 %08lx CR4 %08lx", f->r13, f->r14,
		  f->r15, read_cr0(), read_cr4());
	line(ctx, buf);
}

static void console_dump_line(void *ctx, const char *s)
{
	console_printf("# %s\n", s);
}

_Noreturn static void panic_frame(const struct trap_frame *f, const char *why)
{
	console_force_unlock();
	console_printf("# PANIC: %s\n", why);
	if (f)
		trap_dump(f, console_dump_line, NULL);
	console_printf("# pmutest: panic\n");
	platform_exit(EXIT_PANIC);
}

_Noreturn void panic(const char *fmt, ...)
{
	char buf[160];
	va_list ap;
	va_start(ap, fmt);
	kvsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	panic_frame(NULL, buf);
}

static bool fixup(struct trap_frame *f)
{
	for (const struct ex_entry *e = __start_ex_table; e < __stop_ex_table; e++) {
		if (e->from == f->rip) {
			this_cpu()->fault_vector = (int)f->vector;
			this_cpu()->fault_error_code = f->error_code;
			f->rip = e->to;
			return true;
		}
	}
	return false;
}

static void handle_nmi(struct trap_frame *f)
{
	bool claimed = false;
	this_cpu()->irq_depth++;
	for (int i = 0; i < MAX_NMI_HANDLERS && nmi_handlers[i]; i++)
		claimed |= nmi_handlers[i](f);
	this_cpu()->irq_depth--;
	if (!claimed)
		this_cpu()->nmi_count++;
}

static void handle_exception(struct trap_frame *f)
{
	struct percpu *pc = this_cpu();
	bool from_user = (f->cs & 3) == 3;

	if (f->vector == X86_VEC_NMI) {
		handle_nmi(f);
		return;
	}
	/* #DF and #MC leave no state worth resuming (SDM vol. 3A, 7.15:
	 * #DF is an abort): report and stop. */
	if (f->vector == X86_VEC_DF || f->vector == X86_VEC_MC)
		panic_frame(f, x86_vector_name((unsigned)f->vector));
	if (!from_user && fixup(f))
		return;
	/* A fault inside an interrupt or NMI handler belongs to the handler,
	 * not to the code it interrupted: never hand it to that code's
	 * expect_exception() or catcher (it would take a vector its own code
	 * never raised, and leave an NMI without its IRET). */
	if (pc->irq_depth)
		panic_frame(f, "exception inside an interrupt handler");
	/* usermode_call() tells a payload's return (its final UD2) from a
	 * fault by the vector and the RIP. */
	if (from_user && pc->user_return) {
		pc->user_vector = (int)f->vector;
		pc->user_rip = f->rip;
		pc->fault_error_code = f->error_code;
		ctx_restore(pc->user_return, 1);
	}
	if (pc->recover) {
		struct ctx *c = pc->recover;
		pc->recover = NULL;
		pc->fault_vector = (int)f->vector;
		pc->fault_error_code = f->error_code;
		ctx_restore(c, 1);
	}
	if (pc->catch_fault)
		pc->catch_fault(f); /* does not return */
	panic_frame(f, "unexpected exception outside any test");
}

int expect_exception(void (*fn)(void *), void *arg)
{
	struct percpu *pc = this_cpu();
	struct ctx c;
	struct ctx *volatile outer = pc->recover;

	if (ctx_save(&c)) {
		pc->recover = outer;
		return pc->fault_vector;
	}
	pc->recover = &c;
	fn(arg);
	pc->recover = outer;
	return -1;
}

void trap_set_catcher(trap_catch_fn catch, const char *(*whose)(void))
{
	struct percpu *pc = this_cpu();

	pc->catch_fault = catch;
	pc->catch_whose = catch ? whose : NULL;
}

void trap_forget_contexts(void)
{
	struct percpu *pc = this_cpu();

	pc->irq_depth = 0;
	pc->recover = NULL;
	pc->user_return = NULL;
}

void trap_dispatch(struct trap_frame *f)
{
	/* From ring 3, GS base may be gone: every interrupt stack keeps the
	 * percpu pointer in its top slot (see gdt.c). */
	if ((f->cs & 3) == 3)
		wrmsr(MSR_GS_BASE, *(uint64_t *)((uint64_t)&f->ss + 8));

	if (f->vector < 32) {
		handle_exception(f);
		return;
	}
	struct percpu *pc = this_cpu();
	pc->irq_count++;
	if (f->vector == VEC_SPURIOUS)
		return; /* no EOI for the spurious vector (SDM vol. 3A, 11.9) */
	irq_handler_fn fn = irq_handlers[f->vector];
	if (fn) {
		/* Handlers may leave through ctx_restore (the watchdog): the
		 * test path resets the depth then (ktest.c). */
		pc->irq_depth++;
		fn(f);
		pc->irq_depth--;
		return;
	}
	lapic_eoi();
	console_printf("# unexpected interrupt vector %#lx on cpu %u\n", f->vector, pc->cpu);
}
