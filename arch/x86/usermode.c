/* Ring-3 payloads: IRET to a user code segment on a user stack. Both ways
 * back go through traps.c: a payload that returns executes UD2 at the
 * known address usermode_exit (an exception from ring 3 is delivered the
 * same way everywhere, while a software-interrupt gate is not: the
 * paravirtual KVM here swallows int $0x80), any other exception at CPL 3
 * ends the payload with its vector. */
#include "arch/x86/usermode.h"

#include <stddef.h>
#include <stdint.h>

#include "arch/x86/bootmem.h"
#include "arch/x86/context.h"
#include "arch/x86/cpu.h"
#include "arch/x86/gdt.h"

#define USER_STACK_SIZE 8192

static uint8_t *user_stacks[MAX_CPUS];

void usermode_enter(void (*fn)(void *), void *arg, uint64_t stack_top);

/* In ring 3: call fn(arg), then trap back. */
__asm__(".text\n"
	"usermode_trampoline:\n\t"
	"movq %rdi, %rax\n\t"
	"movq %rsi, %rdi\n\t"
	"callq *%rax\n"
	".globl usermode_exit\n"
	"usermode_exit:\n\t"
	"ud2\n"
	".globl usermode_enter\n"
	"usermode_enter:\n\t"
	"pushq $0x23\n\t"  /* SS = USER_DS */
	"pushq %rdx\n\t"   /* RSP */
	"pushq $0x202\n\t" /* RFLAGS: IF on */
	"pushq $0x2b\n\t"  /* CS = USER_CS */
	"leaq usermode_trampoline(%rip), %rax\n\t"
	"pushq %rax\n\t"
	"iretq\n");
_Static_assert(USER_DS == 0x23 && USER_CS == 0x2b, "selectors hard-coded in usermode_enter");

int usermode_call(void (*fn)(void *), void *arg)
{
	struct percpu *pc = this_cpu();
	struct ctx c;

	if (ctx_save(&c)) {
		pc->user_return = NULL;
		/* The payload's return is the UD2 at usermode_exit. */
		if (pc->user_vector == X86_VEC_UD && pc->user_rip == (uint64_t)usermode_exit)
			return -1;
		return pc->user_vector;
	}
	pc->user_return = &c;
	if (!user_stacks[pc->cpu])
		user_stacks[pc->cpu] = bootmem_alloc(USER_STACK_SIZE);
	usermode_enter(fn, arg, (uint64_t)(user_stacks[pc->cpu] + USER_STACK_SIZE));
	__builtin_unreachable();
}
