/* The PVH entry: the ELF note that names it, and the few instructions
 * that make it look like a multiboot entry to _start. A PVH loader (QEMU
 * -kernel on an ELF without a multiboot header, Firecracker, Cloud
 * Hypervisor, Xen) enters in 32-bit protected mode, paging off, flat CS/DS/
 * ES/SS, interrupts off, EBX = &hvm_start_info, every other register
 * undefined (Xen docs/misc/pvh.pandoc, "x86/HVM direct boot ABI"). */
#include "boot/pvh.h"

	/* Name "Xen" (4 bytes with its NUL), an 8-byte descriptor as Linux
	 * writes it (arch/x86/platform/pvh/head.S): QEMU 7.2 reads a size_t
	 * from a 64-bit ELF's note (hw/i386/x86.c, read_pvh_start_addr),
	 * Firecracker and Cloud Hypervisor the low 4 bytes. 4-byte aligned:
	 * the alignment a note segment has (ELF gABI, "Note Section"). */
	.section .note.Xen, "a", @note
	.balign 4
	.long 4
	.long 8
	.long XEN_ELFNOTE_PHYS32_ENTRY
	.asciz "Xen"
	.balign 4
	.quad pvh_entry
	.balign 4

	.section .text.boot, "ax"
	.code32
	.globl pvh_entry
pvh_entry:
	/* EAX is undefined here: give _start the PVH magic to tell this
	 * entry from the multiboot ones, with EBX as the loader left it. */
	movl $PVH_START_MAGIC, %eax
	jmp _start
