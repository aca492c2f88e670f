/* Page-table entry bits (asm-safe: the boot code builds the first tables
 * with them) and the identity map beyond the 4 GiB the boot code maps. */
#ifndef ARCH_X86_PAGING_H
#define ARCH_X86_PAGING_H

/* Page-table entry bits (SDM vol. 3A, 4.5 "4-Level Paging", tables 4-15..4-20). */
#define PTE_P 0x001
#define PTE_W 0x002
#define PTE_U 0x004
#define PTE_PWT 0x008
#define PTE_PCD 0x010
#define PTE_PS 0x080

#ifndef __ASSEMBLY__
#include <stdint.h>

/* Extend the identity map to cover RAM up to `ram_end` through pdpt, the
 * page-directory-pointer table the boot code built (its first four entries
 * map 0-4 GiB); returns the end of what is now mapped (may be less than
 * asked, when page-table memory runs out without 1 GiB pages). */
uint64_t paging_extend(uint64_t *pdpt, uint64_t ram_end);
uint64_t paging_mapped_end(void);

/* boot/entry.S points PML4[1] at the identity map's PDPT too, so physical
 * address p also reads at PAGING_ALIAS_BASE + p. A loader may put data in
 * physical page 0 (kexec-tools' multiboot loader puts the memory map at
 * address 0), where the identity address is the null pointer. */
#define PAGING_ALIAS_BASE (1ull << 39)
#define PAGING_NULL_PAGE 0x1000ull
#endif

#endif
