/* Ring-3 payloads: IRET to a user code segment on a user stack; the
 * payload comes back through int $0x80 (a DPL 3 gate), an exception at
 * CPL 3 comes back through traps.c. Both resume usermode_call's context. */
#include "arch/x86/usermode.h"

#include <stddef.h>
#include <stdint.h>

#include "arch/x86/context.h"
#include "arch/x86/cpu.h"
#include "arch/x86/gdt.h"
#include "arch/x86/traps.h"

#define USER_STACK_SIZE 8192

static uint8_t user_stacks[MAX_CPUS][USER_STACK_SIZE] __attribute__((aligned(16)));

void usermode_enter(void (*fn)(void *), void *arg, uint64_t stack_top);

/* In ring 3: call fn(arg), then trap back. */
__asm__(".text\n"
    "usermode_trampoline:\n\t"
    "movq %rdi, %rax\n\t"
    "movq %rsi, %rdi\n\t"
    "callq *%rax\n\t"
    "int $0x80\n\t"
    "ud2\n"
    ".globl usermode_enter\n"
    "usermode_enter:\n\t"
    "pushq $0x23\n\t"      /* SS = USER_DS */
    "pushq %rdx\n\t"       /* RSP */
    "pushq $0x202\n\t"     /* RFLAGS: IF on */
    "pushq $0x2b\n\t"      /* CS = USER_CS */
    "leaq usermode_trampoline(%rip), %rax\n\t"
    "pushq %rax\n\t"
    "iretq\n");
_Static_assert(USER_DS == 0x23 && USER_CS == 0x2b, "selectors hard-coded in usermode_enter");

static void user_return_handler(struct trap_frame *f)
{
	struct percpu *pc = this_cpu();
	if ((f->cs & 3) != 3 || !pc->user_return)
		return; /* int $0x80 from ring 0: ignore */
	pc->user_result = -1;
	ctx_restore(pc->user_return, 1);
}

int usermode_call(void (*fn)(void *), void *arg)
{
	static bool handler_set;
	struct percpu *pc = this_cpu();
	struct ctx c;

	if (!handler_set) {
		irq_set_handler(VEC_USER_RETURN, user_return_handler);
		handler_set = true;
	}
	if (ctx_save(&c)) {
		pc->user_return = NULL;
		return pc->user_result;
	}
	pc->user_return = &c;
	pc->user_result = -1;
	usermode_enter(fn, arg, (uint64_t)(user_stacks[pc->cpu] + USER_STACK_SIZE));
	__builtin_unreachable();
}
