/* Boot information normalised from Multiboot1 or Multiboot2 into one struct,
 * copied out of the loader's memory so the kernel may reuse that memory. */
#ifndef BOOT_BOOTINFO_H
#define BOOT_BOOTINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The memory map comes out as bootmem takes it (enum mem_type, struct
 * mem_region). */
#include "arch/x86/bootmem.h"

/* Values the loader leaves in EAX (Multiboot 0.6.96 §3.2, Multiboot2 1.0 §3.3);
 * a PVH loader leaves none, boot/pvh_entry.S puts the start_info magic there. */
#define BOOTINFO_MB1_MAGIC 0x2BADB002u
#define BOOTINFO_MB2_MAGIC 0x36d76289u
#define BOOTINFO_PVH_MAGIC 0x336ec578u

/* struct boot_info.protocol */
#define BOOT_PROTO_NONE 0 /* unknown magic */
#define BOOT_PROTO_MB1 1
#define BOOT_PROTO_MB2 2
#define BOOT_PROTO_PVH 3 /* hvm_start_info (boot/pvh.h) */

/* bootinfo_parse() results. On BOOTINFO_EGARBLED the struct still holds
 * everything read before (or around) the damage; the caller decides. */
#define BOOTINFO_EMAGIC (-1)   /* magic is neither Multiboot1 nor 2 */
#define BOOTINFO_EGARBLED (-2) /* the structure contradicts itself somewhere */

/* A Multiboot2 info structure larger than this is taken as garbage rather
 * than walked: GRUB's (with an EFI memory map of a few hundred descriptors)
 * stays well under 64 KiB. */
#define BOOTINFO_MB2_MAX_SIZE (1u << 20)

#define BOOTINFO_CMDLINE_MAX 4096
#define BOOTINFO_MMAP_MAX 256

/* Framebuffer types (Multiboot2 1.0 §3.6.12): 0 indexed, 1 direct RGB,
 * 2 EGA text. The colour fields are only filled for type 1. */
#define BOOT_FB_INDEXED 0
#define BOOT_FB_RGB 1
#define BOOT_FB_EGA_TEXT 2

struct boot_fb {
	uint64_t addr;
	uint32_t pitch, width, height;
	uint8_t bpp, type;
	uint8_t red_pos, red_size, green_pos, green_size, blue_pos, blue_size;
};

struct boot_info {
	int protocol;         /* BOOT_PROTO_* */
	uint32_t pvh_version; /* hvm_start_info.version, under PVH */

	/* As given: under QEMU -kernel the image path comes first. */
	char cmdline[BOOTINFO_CMDLINE_MAX + 1];
	size_t cmdline_len;
	bool cmdline_truncated;

	char loader[64]; /* boot loader name, if given; NUL-terminated */

	/* Sorted by base; overlaps are kept as the firmware gave them. */
	struct mem_region mmap[BOOTINFO_MMAP_MAX];
	size_t mmap_count;
	bool mmap_truncated;

	/* Informational only: wrong under OVMF. */
	uint64_t mem_lower_kib, mem_upper_kib;
	bool has_basic_meminfo;

	/* Copy of the RSDP from mb2 tag 14 (old, v1) or 15 (new, v2+), or from
	 * hvm_start_info.rsdp_paddr; rsdp_len 0 = none. Tag 15 wins when both
	 * tags are present. */
	uint8_t rsdp[36];
	size_t rsdp_len;
	int rsdp_tag;
	bool rsdp_from_start_info;

	bool has_fb;
	struct boot_fb fb;

	bool efi_boot_services_not_exited; /* mb2 tag 18 present */
	uint64_t efi_systab;               /* mb2 tags 11/12, informational */
	int efi_systab_bits;               /* 32, 64, or 0 = none */

	/* Where the loader put the info structure (for the caller to reserve):
	 * the address passed in, which is physical under the identity map. */
	uint64_t info_phys, info_size;
};

/* Reads loader memory that the info structure points at (Multiboot1 keeps
 * the command line, loader name and memory map behind 32-bit physical
 * pointers). Returns a pointer valid for len bytes, or NULL. */
typedef const void *(*bootinfo_phys_fn)(uint64_t phys, size_t len);

/* Must be set before bootinfo_parse() for Multiboot1 (the kernel installs
 * its identity map in boot/main.c); NULL makes every pointer unreadable. */
void bootinfo_set_phys_accessor(bootinfo_phys_fn fn);

/* "multiboot1", "multiboot2", "pvh" or "unknown". */
const char *bootinfo_protocol_name(int protocol);

/* magic and info as the loader left them in EAX and EBX. Fills *out
 * (always zeroed first) and returns 0, BOOTINFO_EMAGIC or BOOTINFO_EGARBLED. */
int bootinfo_parse(uint32_t magic, const void *info, struct boot_info *out);

/* Highest end address (base + len) of AVAILABLE memory; 0 if none is known.
 * Falls back to 1 MiB + mem_upper when the loader gave no memory map. */
void bootinfo_usable_max(const struct boot_info *bi, uint64_t *max_ram_end);

/* Lowest 4 KiB-aligned page >= 0x1000 that lies wholly inside one AVAILABLE
 * region, ends at or below `below`, overlaps no non-AVAILABLE region and no
 * part of [avoid_lo, avoid_hi). The AP start-up trampoline needs one below
 * 1 MiB. Returns false if there is none. */
bool bootinfo_find_low_page(const struct boot_info *bi, uint64_t below, uint64_t avoid_lo, uint64_t avoid_hi,
			    uint64_t *page);

#endif
