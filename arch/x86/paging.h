/* Identity paging beyond the 4 GiB the boot code maps. */
#ifndef ARCH_X86_PAGING_H
#define ARCH_X86_PAGING_H

#include <stdint.h>

/* Extend the identity map to cover RAM up to `ram_end`; returns the end
 * of what is now mapped (may be less than asked, when page-table memory
 * runs out without 1 GiB pages). */
uint64_t paging_extend(uint64_t ram_end);
uint64_t paging_mapped_end(void);

#endif
