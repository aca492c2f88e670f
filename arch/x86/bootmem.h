/* Boot-time memory: a bump allocator over the loader's memory map, so the
 * kernel image itself stays small (under OVMF, ACPI NVS starts at 8 MiB:
 * a large .bss would overwrite firmware memory). Nothing is ever freed. */
#ifndef ARCH_X86_BOOTMEM_H
#define ARCH_X86_BOOTMEM_H

#include <stddef.h>
#include <stdint.h>

struct boot_info;

/* Usable: AVAILABLE regions above 1 MiB and the kernel image, below
 * `mapped_end` (the identity map). */
void bootmem_init(const struct boot_info *bi, uint64_t mapped_end);
/* Zeroed, 4 KiB-aligned memory; panics when none is left. Any CPU. */
void *bootmem_alloc(size_t size);
uint64_t bootmem_used(void);

#endif
