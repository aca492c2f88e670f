/* The loader's boot information into struct boot_info: which protocol
 * handed over (its magic), then that protocol's parser (boot/multiboot.c,
 * boot/pvh.c), then one sorted memory map. */
#include "boot/bootinfo.h"
#include "boot/bootinfo_internal.h"

int bootinfo_parse(uint32_t magic, const void *info, struct boot_info *out)
{
	int rc;

	mb_zero(out, sizeof(*out));
	if (magic == BOOTINFO_MB2_MAGIC)
		out->protocol = BOOT_PROTO_MB2;
	else if (magic == BOOTINFO_MB1_MAGIC)
		out->protocol = BOOT_PROTO_MB1;
	else if (magic == BOOTINFO_PVH_MAGIC)
		out->protocol = BOOT_PROTO_PVH;
	else
		return BOOTINFO_EMAGIC;
	if (!info)
		return BOOTINFO_EGARBLED;
	out->info_phys = (uint64_t)(uintptr_t)info;
	rc = out->protocol == BOOT_PROTO_MB2   ? mb2_parse(info, out)
	     : out->protocol == BOOT_PROTO_MB1 ? mb1_parse(info, out)
					       : pvh_parse(info, out);
	mb_sort_mmap(out);
	return rc;
}
