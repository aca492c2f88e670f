/* Boot-time memory: a bump allocator over the loader's memory map, so the
 * kernel image itself stays small (under OVMF, ACPI NVS starts at 8 MiB:
 * a large .bss would overwrite firmware memory). Nothing is ever freed. */
#ifndef ARCH_X86_BOOTMEM_H
#define ARCH_X86_BOOTMEM_H

#include <stddef.h>
#include <stdint.h>

/* Memory-map types as the firmware reports them, the same numbers in both
 * Multiboot protocols (Multiboot 0.6.96 §3.3, Multiboot2 1.0 §3.6.8: the
 * BIOS E820 types); every other value is reported as MEM_RESERVED. */
enum mem_type {
	MEM_AVAILABLE = 1,
	MEM_RESERVED = 2,
	MEM_ACPI_RECLAIM = 3,
	MEM_ACPI_NVS = 4,
	MEM_BAD = 5,
};

struct mem_region {
	uint64_t base, len;
	uint32_t type; /* enum mem_type */
};

/* Usable: the AVAILABLE regions of map[0..n) above 1 MiB and the kernel
 * image, below `mapped_end` (the identity map). */
void bootmem_init(const struct mem_region *map, size_t n, uint64_t mapped_end);
/* Zeroed, 4 KiB-aligned memory; panics when none is left. Any CPU. */
void *bootmem_alloc(size_t size);
uint64_t bootmem_used(void);

#endif
