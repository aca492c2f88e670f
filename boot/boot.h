/* What the boot assembly and kmain share: the boot page tables and stacks,
 * the CR0 value long mode starts with, and the facts kmain keeps for the
 * boot tests. CPU facts (selectors, PTE and control-register bits) come
 * from arch/x86. */
#ifndef BOOT_BOOT_H
#define BOOT_BOOT_H

#include "arch/x86/regs.h"

#define BOOT_PT_PAGES 6 /* PML4 + PDPT + 4 page directories */
/* Tests run on this stack (and on the APs', arch/x86/smp.h): 64 KiB leaves
 * room for the deepest test paths (the compiler refuses frames over 4 KiB:
 * -Wframe-larger-than). */
#define BOOT_STACK_SIZE 65536
/* Paging, write protection at CPL 0, native x87 errors, protected mode;
 * caches on (CD = NW = 0). */
#define BOOT_CR0                                                                                             \
	((1 << CR0_PG_BIT) | (1 << CR0_WP_BIT) | (1 << CR0_NE_BIT) | (1 << CR0_ET_BIT) | (1 << CR0_MP_BIT) | \
	 (1 << CR0_PE_BIT))

#ifndef __ASSEMBLY__
#include <stdint.h>

struct boot_info;

/* Built and filled by boot/entry.S. */
extern uint64_t boot_pml4[512], boot_pdpt[512], boot_pd[4 * 512];
extern uint8_t boot_stack_top[];
extern uint32_t boot_magic, boot_info_phys;
void kmain(uint32_t magic, uint32_t info_phys);

/* What kmain found, for the boot tests (tests/boot.c). */
extern struct boot_info boot_info;
extern int boot_info_status; /* bootinfo_parse()'s result */
extern int boot_acpi_status; /* acpi_init()'s result */
#endif

#endif
