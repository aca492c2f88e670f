/* Host tests for boot/pvh.c: hvm_start_info images as QEMU's pvh.bin and
 * Firecracker write them (Xen public/arch-x86/hvm/start_info.h), with the
 * command line, RSDP and memory map behind physical pointers. */
#include "boot/bootinfo.h"
#include "boot/pvh.h"
#include "tests/host/fakemem.h"
#include "tests/host/hosttest.h"

#include <stdint.h>

static struct boot_info bi;

/* start_info v1 at 0x6000 (where Firecracker puts it), its memory map at
 * 0x7000 and command line at 0x20000. Returns the exact-size copy. */
static uint8_t *start_info(uint32_t version, uint64_t cmdline, uint64_t rsdp, uint64_t memmap,
			   uint32_t entries)
{
	uint8_t si[PVH_SIZE_V1] = { 0 };

	set32(si + PVH_OFF_MAGIC, PVH_START_MAGIC);
	set32(si + PVH_OFF_VERSION, version);
	set64(si + PVH_OFF_CMDLINE, cmdline);
	set64(si + PVH_OFF_RSDP, rsdp);
	set64(si + PVH_OFF_MEMMAP, memmap);
	set32(si + PVH_OFF_MEMMAP_ENTRIES, entries);
	return fake_add(0x6000, si, version >= 1 ? PVH_SIZE_V1 : PVH_SIZE_V0);
}

static void add_memmap(uint64_t at, const uint64_t (*e)[3], size_t n)
{
	struct buf w = { 0 };

	for (size_t i = 0; i < n; i++) {
		put64(&w, e[i][0]);
		put64(&w, e[i][1]);
		put32(&w, (uint32_t)e[i][2]);
		put32(&w, 0);
	}
	fake_add(at, w.b, w.len);
	free(w.b);
}

static void reset(void)
{
	fake_free_all();
	bootinfo_set_phys_accessor(fake_phys);
}

HT_TEST(firecracker_shape)
{
	/* Firecracker's map: low RAM, the kernel's RAM; reserved for the
	 * rest; unknown types become reserved. */
	static const uint64_t map[][3] = {
		{ 0x100000, 0x7f00000, 1 },
		{ 0, 0x9fc00, 1 },
		{ 0xf0000, 0x10000, 2 },
		{ 0xfec00000, 0x1000, 7 },
	};
	static const char cmd[] = "console=ttyS0 exit=poweroff";
	uint8_t rsdp[36];

	reset();
	memcpy(rsdp, "RSD PTR ", 8);
	rsdp[15] = 2;
	fake_add(0xe0000, rsdp, sizeof(rsdp));
	add_memmap(0x7000, map, 4);
	fake_add(0x20000, cmd, sizeof(cmd));
	uint8_t *si = start_info(1, 0x20000, 0xe0000, 0x7000, 4);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_PVH_MAGIC, si, &bi), 0);
	HT_CHECK_EQ(bi.protocol, BOOT_PROTO_PVH);
	HT_CHECK_STR(bootinfo_protocol_name(bi.protocol), "pvh");
	HT_CHECK_EQ(bi.pvh_version, 1);
	HT_CHECK_EQ(bi.info_size, PVH_SIZE_V1);
	HT_CHECK_STR(bi.cmdline, cmd);
	HT_CHECK_EQ(bi.cmdline_len, strlen(cmd));
	HT_CHECK_EQ(bi.rsdp_len, 36);
	HT_CHECK(bi.rsdp_from_start_info && bi.rsdp_tag == 0, "RSDP from start_info, no multiboot2 tag");
	HT_CHECK(memcmp(bi.rsdp, rsdp, 36) == 0, "the RSDP copied whole");
	HT_CHECK_EQ(bi.mmap_count, 4);
	HT_CHECK_EQ(bi.mmap[0].base, 0);
	HT_CHECK_EQ(bi.mmap[2].base, 0x100000);
	HT_CHECK_EQ(bi.mmap[2].len, 0x7f00000);
	HT_CHECK_EQ(bi.mmap[2].type, MEM_AVAILABLE);
	HT_CHECK_EQ(bi.mmap[3].type, MEM_RESERVED);
	uint64_t end = 0;
	bootinfo_usable_max(&bi, &end);
	HT_CHECK_EQ(end, 0x8000000);
	reset();
}

HT_TEST(version0_no_map_rsdp_v1_no_cmdline)
{
	uint8_t rsdp[20] = "RSD PTR ";

	reset();
	fake_add(0xf5a10, rsdp, sizeof(rsdp)); /* revision 0: 20 bytes only */
	uint8_t *si = start_info(0, 0, 0xf5a10, 0x7000, 4);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_PVH_MAGIC, si, &bi), 0);
	HT_CHECK_EQ(bi.info_size, PVH_SIZE_V0);
	HT_CHECK_EQ(bi.mmap_count, 0); /* v0 fields past 40 bytes are not read */
	HT_CHECK_EQ(bi.rsdp_len, 20);
	HT_CHECK_EQ(bi.cmdline_len, 0);
	reset();
}

HT_TEST(bad_magic_and_pointers)
{
	static const uint64_t map[][3] = { { 0, 0x9fc00, 1 }, { 0x100000, 0x1000000, 1 } };

	reset();
	uint8_t *si = start_info(1, 0, 0, 0, 0);
	set32(si, 0x1badb002);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_PVH_MAGIC, si, &bi), BOOTINFO_EGARBLED);
	HT_CHECK_EQ(bi.protocol, BOOT_PROTO_PVH);
	reset();
	/* The map says 3 entries, memory holds 2: the two are kept. */
	add_memmap(0x7000, map, 2);
	si = start_info(1, 0, 0, 0x7000, 3);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_PVH_MAGIC, si, &bi), BOOTINFO_EGARBLED);
	HT_CHECK_EQ(bi.mmap_count, 2);
	reset();
	/* A map address of 0 is "not present", whatever the count says. */
	si = start_info(1, 0, 0, 0, 5);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_PVH_MAGIC, si, &bi), 0);
	HT_CHECK_EQ(bi.mmap_count, 0);
	reset();
	/* An RSDP pointer to nothing. */
	si = start_info(1, 0, 0xe0000, 0, 0);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_PVH_MAGIC, si, &bi), BOOTINFO_EGARBLED);
	HT_CHECK_EQ(bi.rsdp_len, 0);
	reset();
}

HT_TEST(huge_entry_count_is_bounded)
{
	uint8_t *table;

	reset();
	/* 300 entries, more than BOOTINFO_MMAP_MAX; claimed 4 billion. */
	table = fake_add(0x10000, NULL, 300 * PVH_MEMMAP_ENTRY_SIZE);
	for (int i = 0; i < 300; i++) {
		set64(table + i * PVH_MEMMAP_ENTRY_SIZE, (uint64_t)i << 20);
		set64(table + i * PVH_MEMMAP_ENTRY_SIZE + 8, 1 << 20);
		set32(table + i * PVH_MEMMAP_ENTRY_SIZE + 16, 1);
	}
	uint8_t *si = start_info(1, 0, 0, 0x10000, 0xffffffffu);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_PVH_MAGIC, si, &bi), 0);
	HT_CHECK_EQ(bi.mmap_count, BOOTINFO_MMAP_MAX);
	HT_CHECK(bi.mmap_truncated, "the map is said to be truncated");
	reset();
}

HT_MAIN("pvh")
