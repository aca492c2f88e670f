/* The two loader headers, first in the image: multiboot1 with the a.out
 * kludge (QEMU -kernel refuses ELF64 otherwise) and multiboot2 (GRUB).
 * The third way in, PVH, is an ELF note (boot/pvh_entry.S). QEMU -kernel takes
 * multiboot1 over PVH when it finds both (hw/i386/x86.c, x86_load_linux),
 * so build/pmutest-pvh.elf, the PVH image QEMU can test, is assembled
 * with PMUTEST_PVH_IMAGE and leaves multiboot1 out. */
#include "boot/multiboot.h"

	.section .multiboot, "a"
#ifndef PMUTEST_PVH_IMAGE
	.balign 4
mb1_header:
	.long MB1_HEADER_MAGIC
	.long MB1_FLAG_PAGE_ALIGN | MB1_FLAG_MEMORY_INFO | MB1_FLAG_AOUT_KLUDGE
	.long -(MB1_HEADER_MAGIC + (MB1_FLAG_PAGE_ALIGN | MB1_FLAG_MEMORY_INFO | MB1_FLAG_AOUT_KLUDGE))
	/* a.out kludge (spec 3.1.3): where the file bytes from mb1_header on go. */
	.long mb1_header	/* header_addr */
	.long _kernel_start	/* load_addr */
	.long _load_end		/* load_end_addr */
	.long _bss_end		/* bss_end_addr: the loader zeroes up to here */
	.long _start		/* entry_addr */
#endif

	.balign 8
mb2_header:
	.long MB2_HEADER_MAGIC
	.long MB2_ARCH_I386
	.long mb2_header_end - mb2_header
	.long -(MB2_HEADER_MAGIC + MB2_ARCH_I386 + (mb2_header_end - mb2_header))
	/* GRUB loads the ELF program headers and exits UEFI boot services,
	 * which is the state we want. One request: a linear framebuffer
	 * (spec 3.1.10), optional, any size, 32 bpp preferred, so a machine
	 * without a serial port shows the report on screen. */
	.balign 8
	.short MB2_TAG_FRAMEBUFFER
	.short MB2_TAG_OPTIONAL
	.long 20
	.long 0		/* width: no preference */
	.long 0		/* height: no preference */
	.long 32	/* depth */
	/* Tags start on 8-byte boundaries (spec 3.1.3). */
	.balign 8
	.short MB2_TAG_END
	.short 0
	.long 8
mb2_header_end:
