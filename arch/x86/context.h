/* Saved execution context for non-local returns out of exception and
 * interrupt handlers (test aborts, expect_exception, ring-3 returns). */
#ifndef ARCH_X86_CONTEXT_H
#define ARCH_X86_CONTEXT_H

#include <stdint.h>

struct ctx {
	uint64_t rbx, rbp, r12, r13, r14, r15, rsp, rip, rflags;
};

/* Returns 0 when saving, or the value given to ctx_restore. */
int ctx_save(struct ctx *c) __attribute__((returns_twice));
/* Resume at ctx_save's return with `val` (non-zero); restores RFLAGS, so
 * the interrupt flag is what it was at the save. */
_Noreturn void ctx_restore(const struct ctx *c, int val);

#endif
