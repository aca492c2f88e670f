/* Interrupt and exception entry: the frame every vector builds, the
 * vectors pmutest uses, and handler registration. */
#ifndef ARCH_X86_TRAPS_H
#define ARCH_X86_TRAPS_H

#include <stdbool.h>
#include <stdint.h>

/* Pushed by arch/x86/isr.S (general registers) over the CPU's frame. */
struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error_code;
	uint64_t rip, cs, rflags, rsp, ss; /* pushed by the CPU */
};

enum {
	VEC_TIMER = 0x20,       /* LAPIC timer: the per-test watchdog */
	VEC_CALL = 0xf0,        /* on_cpu() cross-CPU call */
	VEC_PMI = 0xf1,         /* LVT performance-counter entry, fixed delivery */
	VEC_SPURIOUS = 0xff,    /* LAPIC spurious-interrupt vector (low nibble 0xf) */
};

typedef void (*irq_handler_fn)(struct trap_frame *f);
/* NMI handlers return true when the NMI was theirs (e.g. a PMI). */
typedef bool (*nmi_handler_fn)(struct trap_frame *f);

void idt_init(void);      /* once, on the BSP */
void idt_load(void);      /* on every CPU */
void irq_set_handler(unsigned vector, irq_handler_fn fn);
void nmi_register(nmi_handler_fn fn);

const char *exception_name(unsigned vector);

/* Print a register dump through the given line printer. */
void trap_dump(const struct trap_frame *f, void (*line)(void *ctx, const char *s), void *ctx);

_Noreturn void panic(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void trap_dispatch(struct trap_frame *f);

#endif
