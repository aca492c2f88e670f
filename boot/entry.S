/* 32-bit entry from either loader, and the 32-bit leg of AP start-up:
 * identity-map the first 4 GiB, enter long mode, call into C.
 * Both loaders enter in 32-bit protected mode with paging off, EAX = boot
 * magic, EBX = info pointer (Multiboot spec 0.6.96 §3.2, Multiboot2 §3.3).
 * Nothing else about the state is assumed: UEFI GRUB leaves CR0.WP, CR4
 * bits, EFER.NXE and its own GDT behind, so every control register is
 * written with a full value here (SDM vol. 3A, 10.8.5 "Initializing IA-32e
 * Mode"). */
#include "arch/x86/cpuid.h"
#include "arch/x86/gdt.h"
#include "arch/x86/hypervisor.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/pc/platform_exit.h"
#include "arch/x86/smp.h"
#include "boot/boot.h"

	.section .text.boot, "ax"
	.code32
	.globl _start
_start:
	cli
	cld
	/* Keep the loader's magic and info pointer before touching anything. */
	movl %eax, boot_magic
	movl %ebx, boot_info_phys
	movl $boot_stack_top, %esp

	/* Long mode present? CPUID.80000001H:EDX[29] (SDM vol. 2A, CPUID). */
	movl $0x80000000, %eax
	cpuid
	cmpl $0x80000001, %eax
	jb no_long_mode
	movl $0x80000001, %eax
	cpuid
	btl $29, %edx
	jnc no_long_mode

	/* Zero the boot page tables: they are in .bss, which the loaders
	 * zero, but clearing our own memory costs nothing and never touches
	 * the loader's info (that lies outside the image). */
	movl $boot_page_tables, %edi
	movl $(BOOT_PT_PAGES * 4096 / 4), %ecx
	xorl %eax, %eax
	rep stosl

	/* PML4[0] -> PDPT; PDPT[0..3] -> four page directories of 2 MiB
	 * pages covering 0-4 GiB. U/S is set everywhere so ring-3 test
	 * payloads can run kernel-linked code (SMEP/SMAP stay off). */
	movl $boot_pdpt, %eax
	orl $(PTE_P | PTE_W | PTE_U), %eax
	movl %eax, boot_pml4
	/* PML4[1] -> the same PDPT: a second view of the identity map at
	 * PAGING_ALIAS_BASE (arch/x86/paging.h), through which C reads
	 * physical page 0, whose identity address is the null pointer. */
	movl %eax, boot_pml4 + 8
	movl $boot_pd, %ebx
	xorl %ecx, %ecx
1:	movl %ebx, %eax
	orl $(PTE_P | PTE_W | PTE_U), %eax
	movl %eax, boot_pdpt(, %ecx, 8)
	addl $4096, %ebx
	incl %ecx
	cmpl $4, %ecx
	jne 1b

	/* 2048 PDEs: entry i maps i * 2 MiB. The 32 MiB below 4 GiB hold the
	 * local and I/O APICs and firmware: map them uncached (PCD|PWT,
	 * SDM vol. 3A, 13.12.3 PAT index 3 = UC with the reset PAT). */
	xorl %ecx, %ecx
2:	movl %ecx, %eax
	shll $21, %eax
	orl $(PTE_P | PTE_W | PTE_U | PTE_PS), %eax
	cmpl $(2048 - 16), %ecx
	jb 3f
	orl $(PTE_PWT | PTE_PCD), %eax
3:	movl %eax, boot_pd(, %ecx, 8)
	incl %ecx
	cmpl $2048, %ecx
	jne 2b

	movl $1, %ebp			/* EBP = 1: bootstrap processor */
	jmp enter_long_mode

/* AP path: the real-mode trampoline loads boot_gdt and far-jumps here with
 * flat 32-bit segments. The page tables are already built. */
	.globl ap_entry32
ap_entry32:
	movl $GDT_KDATA, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %ss
	xorl %ebp, %ebp			/* EBP = 0: application processor */

enter_long_mode:
	/* CR4 = PAE only: drop whatever the firmware left (PGE, OSFXSR, ...);
	 * the C side turns on what it needs. */
	movl $(1 << CR4_PAE_BIT), %eax
	movl %eax, %cr4
	movl $boot_pml4, %eax
	movl %eax, %cr3
	/* EFER.LME; NXE as found is harmless since no PTE sets XD. */
	movl $MSR_EFER, %ecx
	rdmsr
	orl $(1 << EFER_LME_BIT), %eax
	wrmsr
	movl $BOOT_CR0, %eax
	movl %eax, %cr0
	lgdt boot_gdt_desc
	testl %ebp, %ebp		/* (RDMSR clobbered EDX) */
	jz 4f
	ljmp $GDT_KCODE, $bsp_entry64
4:	ljmp $GDT_KCODE, $ap_entry64

no_long_mode:
	/* Say why on COM1 (already set up by any loader that prints). */
	movl $msg_no_long_mode, %esi
5:	lodsb
	testb %al, %al
	jz 6f
	movw $0x3f8, %dx
	outb %al, %dx
	jmp 5b
6:	/* Under QEMU (TCG or KVM, arch/x86/hypervisor.h) leave through
	 * isa-debug-exit with the panic status, so a run ends with a verdict
	 * instead of a timeout; platform_exit() asks the same question in C.
	 * On bare metal nothing may be written to an unknown port: halt. */
	movl $1, %eax
	cpuid
	btl $CPUID_1_ECX_HYPERVISOR_BIT, %ecx
	jnc 9f
	movl $CPUID_HV_LEAF_FIRST, %esi
7:	movl %esi, %eax
	cpuid
	cmpl $HV_SIG_TCG_EBX, %ebx
	jne 8f
	cmpl $HV_SIG_TCG_ECX, %ecx
	jne 8f
	cmpl $HV_SIG_TCG_EDX, %edx
	je qemu_exit_panic
8:	cmpl $HV_SIG_KVM_EBX, %ebx
	jne 10f
	cmpl $HV_SIG_KVM_ECX, %ecx
	jne 10f
	cmpl $HV_SIG_KVM_EDX, %edx
	je qemu_exit_panic
10:	cmpl $(CPUID_HV_LEAF_FIRST + CPUID_HV_LEAF_STEP), %esi
	je 9f
	movl $(CPUID_HV_LEAF_FIRST + CPUID_HV_LEAF_STEP), %esi
	jmp 7b
qemu_exit_panic:
	movl $EXIT_CODE_PANIC, %eax
	movw $QEMU_DEBUG_EXIT_PORT, %dx
	outl %eax, %dx
	/* No isa-debug-exit device: halt as on bare metal. */
9:	cli
	hlt
	jmp 9b

	.code64
bsp_entry64:
	movl $GDT_KDATA, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %ss
	xorl %eax, %eax
	movl %eax, %fs
	movl %eax, %gs
	movq $boot_stack_top, %rsp
	xorl %ebp, %ebp
	movl boot_magic(%rip), %edi
	movl boot_info_phys(%rip), %esi
	call kmain
7:	cli
	hlt
	jmp 7b

ap_entry64:
	movl $GDT_KDATA, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %ss
	xorl %eax, %eax
	movl %eax, %fs
	movl %eax, %gs
	/* APs start concurrently: each takes the next free stack slot of the
	 * ones the BSP allocated (arch/x86/smp.c). One past them (an AP
	 * nobody asked for) parks. */
	movl $1, %eax
	lock xaddl %eax, ap_next_stack_slot(%rip)
	cmpl ap_stack_slots(%rip), %eax
	jae 8f
	imulq $AP_BOOT_STACK_SIZE, %rax
	addq $AP_BOOT_STACK_SIZE, %rax
	addq ap_boot_stacks(%rip), %rax
	movq %rax, %rsp
	xorl %ebp, %ebp
	call ap_main
8:	cli
	hlt
	jmp 8b

	.section .rodata
msg_no_long_mode:
	.asciz "pmutest: this CPU has no long mode (CPUID.80000001H:EDX[29]=0)\r\n"

	.data
	.balign 16
	.globl boot_gdt
boot_gdt:
	.quad 0				/* null */
	.quad 0x00af9a000000ffff	/* 0x08: 64-bit code, DPL 0 */
	.quad 0x00cf92000000ffff	/* 0x10: flat data, DPL 0 */
	.quad 0x00cf9a000000ffff	/* 0x18: flat 32-bit code (AP trampoline) */
boot_gdt_end:
	.globl boot_gdt_desc
boot_gdt_desc:
	.short boot_gdt_end - boot_gdt - 1
	.quad boot_gdt
	.globl boot_magic, boot_info_phys
	.balign 8
boot_magic:	.long 0
boot_info_phys:	.long 0

	.bss
	.balign 4096
	.globl boot_page_tables, boot_pml4, boot_pdpt, boot_pd
boot_page_tables:
boot_pml4:	.skip 4096
boot_pdpt:	.skip 4096
boot_pd:	.skip 4 * 4096
	.balign 16
boot_stack:	.skip BOOT_STACK_SIZE
	.globl boot_stack_top
boot_stack_top:
