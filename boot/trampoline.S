/* Real-mode start-up code for application processors. The BSP copies it to
 * a free page below 1 MiB and sends SIPI with that page number; the AP
 * starts at CS = page << 8, IP = 0 (SDM vol. 3A, 9.4.4.1 "Typical BSP
 * Initialization Sequence"). It is position-independent: every reference
 * is either CS-relative or an absolute kernel address, so it needs no
 * patching wherever it lands. */
#include "arch/x86/gdt.h"

	.section .trampoline, "a"
	.code16
	.globl trampoline_entry
trampoline_entry:
	cli
	cld
	movw %cs, %ax
	movw %ax, %ds
	/* 32-bit operand size: load the full 32-bit base of the kernel's boot
	 * GDT, which lies in the identity-loaded image below 16 MiB. */
	lgdtl tramp_gdt_desc - trampoline_entry
	movl %cr0, %eax
	orl $1, %eax
	movl %eax, %cr0
	/* Far jump with a 32-bit offset straight into the kernel image. */
	ljmpl $GDT_CODE32, $ap_entry32

	.balign 8
tramp_gdt_desc:
	.short 4 * 8 - 1
	.long boot_gdt
