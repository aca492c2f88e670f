/* ctx_save / ctx_restore: setjmp/longjmp for the kernel, keeping RFLAGS so
 * a restore from an interrupt handler gives back the interrupt flag. */
	.text
	.code64
	.globl ctx_save
ctx_save:
	movq %rbx, 0(%rdi)
	movq %rbp, 8(%rdi)
	movq %r12, 16(%rdi)
	movq %r13, 24(%rdi)
	movq %r14, 32(%rdi)
	movq %r15, 40(%rdi)
	leaq 8(%rsp), %rax		/* caller's RSP after our return */
	movq %rax, 48(%rdi)
	movq (%rsp), %rax		/* return address */
	movq %rax, 56(%rdi)
	pushfq
	popq %rax
	movq %rax, 64(%rdi)
	xorl %eax, %eax
	ret

	.globl ctx_restore
ctx_restore:
	movl %esi, %eax
	testl %eax, %eax
	jnz 1f
	movl $1, %eax			/* like longjmp: never return 0 */
1:	movq 0(%rdi), %rbx
	movq 8(%rdi), %rbp
	movq 16(%rdi), %r12
	movq 24(%rdi), %r13
	movq 32(%rdi), %r14
	movq 40(%rdi), %r15
	movq 48(%rdi), %rsp
	pushq 64(%rdi)
	popfq
	jmpq *56(%rdi)
