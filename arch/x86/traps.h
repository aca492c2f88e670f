/* Interrupt and exception entry: the frame every vector builds, handler
 * registration, the ways an exception is recovered, and panic. */
#ifndef ARCH_X86_TRAPS_H
#define ARCH_X86_TRAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/vectors.h"

/* Pushed by arch/x86/isr.S (general registers) over the CPU's frame. */
struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error_code;
	uint64_t rip, cs, rflags, rsp, ss; /* pushed by the CPU */
};

typedef void (*irq_handler_fn)(struct trap_frame *f);
/* NMI handlers return true when the NMI was theirs (e.g. a PMI). */
typedef bool (*nmi_handler_fn)(struct trap_frame *f);

void idt_init(void); /* once, on the BSP */
void idt_load(void); /* on every CPU */
void irq_set_handler(unsigned vector, irq_handler_fn fn);
void nmi_register(nmi_handler_fn fn);

/* Run fn(arg); if it raises an exception, recover and return the vector,
 * else return -1. Works on any CPU, nested too. */
int expect_exception(void (*fn)(void *), void *arg);

/* What an exception that nothing else recovers does on the calling CPU:
 * with a catcher installed, catch(frame) takes it instead of a panic and
 * never returns (it leaves through ctx_restore), and whose() says whose
 * code faulted ("test foo") in register dumps. Installed around the code
 * that may fault (the test framework around each test body); NULL catch
 * removes it. */
typedef void (*trap_catch_fn)(struct trap_frame *f);
void trap_set_catcher(trap_catch_fn catch, const char *(*whose)(void));
/* After a ctx_restore out of a handler or a recovery context (a watchdog
 * or an exception that ended the caught code): this CPU runs no handler
 * and no expect_exception() or ring-3 call any more. */
void trap_forget_contexts(void);

/* Print a register dump through the given line printer. */
void trap_dump(const struct trap_frame *f, void (*line)(void *ctx, const char *s), void *ctx);

_Noreturn void panic(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void trap_dispatch(struct trap_frame *f);

#endif
