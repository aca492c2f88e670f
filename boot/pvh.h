/* The PVH boot ABI (Xen's docs/misc/pvh.pandoc and public/arch-x86/hvm/
 * start_info.h, which QEMU, Firecracker and Cloud Hypervisor follow): an
 * ELF note names a 32-bit entry point, entered in protected mode with
 * paging off and EBX = the physical address of struct hvm_start_info.
 * Asm-safe: boot/pvh_entry.S uses the note and magic numbers. */
#ifndef BOOT_PVH_H
#define BOOT_PVH_H

/* public/elfnote.h: the note (name "Xen") whose descriptor is the entry. */
#define XEN_ELFNOTE_PHYS32_ENTRY 18
/* start_info.h: hvm_start_info.magic, "xEn3" with bit 7 of the "E" set. */
#define PVH_START_MAGIC 0x336ec578

/* hvm_start_info, little-endian: magic, version, flags, nr_modules (u32
 * each), modlist_paddr, cmdline_paddr, rsdp_paddr (u64 each), then from
 * version 1 on memmap_paddr (u64), memmap_entries, reserved (u32). */
#define PVH_OFF_MAGIC 0
#define PVH_OFF_VERSION 4
#define PVH_OFF_CMDLINE 24
#define PVH_OFF_RSDP 32
#define PVH_OFF_MEMMAP 40
#define PVH_OFF_MEMMAP_ENTRIES 48
#define PVH_SIZE_V0 40
#define PVH_SIZE_V1 56
/* hvm_memmap_table_entry: addr, size (u64), type (E820 numbers), reserved. */
#define PVH_MEMMAP_ENTRY_SIZE 24

#endif
