/* Host tests for lib/smbios.c: SMBIOS entry points and tables built byte
 * by byte, as SeaBIOS leaves them under QEMU (a "_SM_" entry point in the
 * BIOS segment, the table below 4 GiB, its own type 0 "SeaBIOS"). */
#include "lib/smbios.h"
#include "tests/host/fakemem.h"
#include "tests/host/hosttest.h"

#include <stdint.h>

static struct smbios_bios info;

static uint8_t sum8(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s = (uint8_t)(s + *p++);
	return s;
}

/* A 2.1 entry point (DSP0134 5.2.1) at phys for the table at table. */
static void place_ep21(uint64_t phys, uint32_t table, uint16_t len)
{
	uint8_t f[0x1f] = "_SM_";

	f[5] = 0x1f;
	f[6] = 2;
	f[7] = 8;
	memcpy(f + 0x10, "_DMI_", 5);
	f[0x16] = (uint8_t)len;
	f[0x17] = (uint8_t)(len >> 8);
	for (int i = 0; i < 4; i++)
		f[0x18 + i] = (uint8_t)(table >> (8 * i));
	f[0x15] = (uint8_t)(0 - sum8(f + 0x10, 0x0f));
	f[4] = (uint8_t)(0 - sum8(f, 0x1f));
	fake_add(phys, f, sizeof(f));
}

/* A 3.0 entry point (5.2.2). */
static void place_ep30(uint64_t phys, uint64_t table, uint32_t max)
{
	uint8_t f[0x18] = "_SM3_";

	f[6] = 0x18;
	f[7] = 3;
	f[8] = 2;
	f[0x0a] = 1;
	for (int i = 0; i < 4; i++)
		f[0x0c + i] = (uint8_t)(max >> (8 * i));
	for (int i = 0; i < 8; i++)
		f[0x10 + i] = (uint8_t)(table >> (8 * i));
	f[5] = (uint8_t)(0 - sum8(f, 0x18));
	fake_add(phys, f, sizeof(f));
}

/* A table: a type 1 structure with strings, a type 0 with vendor and
 * version (indexes 1 and 2) unless vendor is NULL, a type 127. */
static size_t place_table(uint64_t phys, const char *vendor)
{
	struct buf w = { 0 };

	put8(&w, 1), put8(&w, 8), put16(&w, 0x100), put32(&w, 0x00000201);
	put(&w, "QEMU\0Standard PC\0\0", 18);
	if (vendor) {
		put8(&w, 0), put8(&w, 0x18), put16(&w, 0);
		put8(&w, 1), put8(&w, 2);
		for (int i = 6; i < 0x18; i++)
			put8(&w, 0);
		put(&w, vendor, strlen(vendor) + 1);
		put(&w, "1.16.2-debian-1.16.2-1\0\0", 24);
	}
	put8(&w, 127), put8(&w, 4), put16(&w, 0x7f00), put16(&w, 0);
	fake_add(phys, w.b, w.len);
	free(w.b);
	return w.len;
}

HT_TEST(seabios_21_entry_point)
{
	fake_free_all();
	fake_add(0xf0000, NULL, 0xf5a0);
	size_t len = place_table(0x7fffe000, "SeaBIOS");
	place_ep21(0xff5a0, 0x7fffe000, (uint16_t)len);
	fake_add(0xff5bf, NULL, 0x100000 - 0xff5bf);
	HT_CHECK_EQ(smbios_bios_info(fake_phys, &info), 0);
	HT_CHECK_EQ(info.entry_phys, 0xff5a0);
	HT_CHECK(!info.v3, "a 2.1 entry point");
	HT_CHECK_EQ(info.major, 2);
	HT_CHECK_STR(info.vendor, "SeaBIOS");
	HT_CHECK_STR(info.version, "1.16.2-debian-1.16.2-1");
	fake_free_all();
}

HT_TEST(v3_taken_before_21)
{
	fake_free_all();
	size_t len = place_table(0x7fffe000, "SeaBIOS");
	place_table(0x7fff0000, "Other");
	place_ep21(0xf0000, 0x7fff0000, (uint16_t)len);
	place_ep30(0xf0020, 0x7fffe000, (uint32_t)len);
	HT_CHECK_EQ(smbios_bios_info(fake_phys, &info), 0);
	HT_CHECK(info.v3, "the 3.0 entry point");
	HT_CHECK_EQ(info.entry_phys, 0xf0020);
	HT_CHECK_STR(info.vendor, "SeaBIOS");
	fake_free_all();
}

HT_TEST(long_vendor_is_cut)
{
	char v[100];

	memset(v, 'x', sizeof(v) - 1);
	v[sizeof(v) - 1] = 0;
	fake_free_all();
	size_t len = place_table(0x100000, v);
	place_ep30(0xf0000, 0x100000, (uint32_t)len);
	HT_CHECK_EQ(smbios_bios_info(fake_phys, &info), 0);
	HT_CHECK_EQ(strlen(info.vendor), SMBIOS_STR_MAX - 1);
	fake_free_all();
}

HT_TEST(absent_bad_checksum_no_type0_truncated)
{
	fake_free_all();
	fake_add(0xf0000, NULL, 0x10000);
	HT_CHECK_EQ(smbios_bios_info(fake_phys, &info), SMBIOS_ENOTFOUND);
	fake_free_all();
	size_t len = place_table(0x100000, "SeaBIOS");
	place_ep21(0xf0000, 0x100000, (uint16_t)len);
	fake[nfake - 1].buf[0x18] ^= 1; /* the table address, checksum now wrong */
	HT_CHECK_EQ(smbios_bios_info(fake_phys, &info), SMBIOS_ENOTFOUND);
	fake_free_all();
	len = place_table(0x100000, NULL);
	place_ep21(0xf0000, 0x100000, (uint16_t)len);
	HT_CHECK_EQ(smbios_bios_info(fake_phys, &info), SMBIOS_EINVAL);
	fake_free_all();
	len = place_table(0x100000, "SeaBIOS");
	place_ep21(0xf0000, 0x100000, 30); /* inside type 0's strings */
	HT_CHECK_EQ(smbios_bios_info(fake_phys, &info), SMBIOS_EINVAL);
	fake_free_all();
	place_ep21(0xf0000, 0x200000, 64); /* the table unreadable */
	HT_CHECK_EQ(smbios_bios_info(fake_phys, &info), SMBIOS_EINVAL);
	fake_free_all();
}

HT_MAIN("smbios")
