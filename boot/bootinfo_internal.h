/* What the boot-information parsers share: boot/multiboot.c keeps the
 * helpers, boot/pvh.c reads hvm_start_info with them, boot/handover.c
 * picks the parser. */
#ifndef BOOT_BOOTINFO_INTERNAL_H
#define BOOT_BOOTINFO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "boot/bootinfo.h"

/* Loader memory through the accessor: a pointer valid for len bytes, or NULL. */
const uint8_t *mb_phys(uint64_t phys, size_t len);
void mb_zero(void *dst, size_t n);
/* A NUL-terminated string behind a physical pointer into dst[cap]. */
size_t mb_copy_phys_str(char *dst, size_t cap, uint64_t phys, bool *truncated);
/* One memory-map entry, E820 type numbers (anything unknown is reserved). */
void mb_add_region(struct boot_info *bi, uint64_t base, uint64_t len, uint32_t raw_type);

/* The protocols' parsers, for bootinfo_parse(): the Multiboot2 and
 * Multiboot1 information structures, then the map sorted by base. */
int mb2_parse(const uint8_t *p, struct boot_info *bi);
int mb1_parse(const uint8_t *p, struct boot_info *bi);
void mb_sort_mmap(struct boot_info *bi);

/* hvm_start_info at p (already known readable for its version 0 size). */
int pvh_parse(const uint8_t *p, struct boot_info *bi);

#endif
