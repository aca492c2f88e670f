/* hvm_start_info into struct boot_info: the command line, the RSDP and
 * (version 1 on) the memory map, each behind a physical pointer (Xen
 * public/arch-x86/hvm/start_info.h; boot/pvh.h has the layout). Pure, like
 * the multiboot parsers: it reads only what the pointers and counts give. */
#include "boot/pvh.h"

#include "boot/bootinfo_internal.h"
#include "lib/unaligned.h"

/* An RSDP is 20 bytes up to revision 1 and 36 from revision 2 on, the
 * revision at offset 15 (ACPI 6.5 §5.2.5.3). */
#define RSDP_V1_LEN 20
#define RSDP_REVISION_OFF 15

static bool pvh_copy_rsdp(struct boot_info *bi, uint64_t phys)
{
	const uint8_t *r = mb_phys(phys, RSDP_V1_LEN);
	size_t n = RSDP_V1_LEN;

	if (!r)
		return false;
	if (r[RSDP_REVISION_OFF] >= 2 && mb_phys(phys, sizeof(bi->rsdp))) {
		n = sizeof(bi->rsdp);
		r = mb_phys(phys, n);
	}
	for (size_t i = 0; i < n; i++)
		bi->rsdp[i] = r[i];
	bi->rsdp_len = n;
	bi->rsdp_from_start_info = true;
	return true;
}

/* start_info.h: "nothing will be loaded at physical address 0, so a 0
 * value in any of the address fields should be treated as not present". */
int pvh_parse(const uint8_t *p, struct boot_info *bi)
{
	int rc = 0;

	bi->info_size = PVH_SIZE_V0;
	if (get_le32(p + PVH_OFF_MAGIC) != PVH_START_MAGIC)
		return BOOTINFO_EGARBLED;
	bi->pvh_version = get_le32(p + PVH_OFF_VERSION);
	if (bi->pvh_version >= 1)
		bi->info_size = PVH_SIZE_V1;

	uint64_t cmdline = get_le64(p + PVH_OFF_CMDLINE);
	if (cmdline)
		bi->cmdline_len = mb_copy_phys_str(bi->cmdline, sizeof(bi->cmdline), cmdline,
						   &bi->cmdline_truncated);
	/* 0 means none: the kernel then scans the BIOS area, where PC
	 * firmware and a microVM's tables put the RSDP. */
	uint64_t rsdp = get_le64(p + PVH_OFF_RSDP);
	if (rsdp && !pvh_copy_rsdp(bi, rsdp))
		rc = BOOTINFO_EGARBLED;

	/* Version 0 has no memory map here (Xen gives it by hypercall). */
	uint64_t map = bi->pvh_version >= 1 ? get_le64(p + PVH_OFF_MEMMAP) : 0;
	if (map) {
		uint32_t n = get_le32(p + PVH_OFF_MEMMAP_ENTRIES);

		/* The table full ends the walk: at most BOOTINFO_MMAP_MAX + 1 steps. */
		for (uint32_t i = 0; i < n && !bi->mmap_truncated; i++) {
			const uint8_t *e = mb_phys(map + (uint64_t)i * PVH_MEMMAP_ENTRY_SIZE,
						   PVH_MEMMAP_ENTRY_SIZE);

			if (!e) {
				rc = BOOTINFO_EGARBLED;
				break;
			}
			mb_add_region(bi, get_le64(e), get_le64(e + 8), get_le32(e + 16));
		}
	}
	return rc;
}
