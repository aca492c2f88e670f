/* Host tests for lib/mptable.c: MP spec 1.4 floating pointers and
 * configuration tables built byte by byte, as Firecracker (at 639 KiB, no
 * BIOS data area) and SeaBIOS (in the BIOS ROM area) place them. */
#include "lib/mptable.h"
#include "tests/host/fakemem.h"
#include "tests/host/hosttest.h"

#include <stdint.h>

static uint8_t sum8(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s = (uint8_t)(s + *p++);
	return s;
}

/* The floating pointer (MP spec 4.1) at phys, naming the table at table. */
static uint8_t *place_fps(uint64_t phys, uint32_t table, uint8_t feature1)
{
	uint8_t f[16] = "_MP_";

	set32(f + 4, table);
	f[8] = 1;
	f[9] = 4;
	f[11] = feature1;
	f[10] = (uint8_t)(0 - sum8(f, 16));
	return fake_add(phys, f, 16);
}

/* A table (MP spec 4.2, 4.3) with n processors (APIC IDs ids[], EN as
 * enabled[], the first the BP), a bus, an I/O APIC at 0xfec00000. SeaBIOS
 * fills in the entry count; Firecracker (src/vmm/src/arch/x86_64/mptable.rs)
 * and qboot leave it 0, with the length and checksum right. */
static bool entry_count_zero;
static uint8_t *place_table(uint64_t phys, const uint8_t *ids, const bool *enabled, unsigned n)
{
	struct buf w = { 0 };

	put(&w, "PCMP", 4);
	put16(&w, 0); /* length, patched */
	put8(&w, 4);
	put8(&w, 0); /* checksum, patched */
	put(&w, "FC      ", 8);
	put(&w, "000000000000", 12);
	put32(&w, 0);
	put16(&w, 0);
	put16(&w, entry_count_zero ? 0 : (uint16_t)(n + 2)); /* entries */
	put32(&w, 0xfee00000);
	put16(&w, 0);
	put8(&w, 0);
	put8(&w, 0);
	for (unsigned i = 0; i < n; i++) {
		put8(&w, 0);
		put8(&w, ids[i]);
		put8(&w, 0x14);
		put8(&w, (uint8_t)((enabled[i] ? 1 : 0) | (i == 0 ? 2 : 0)));
		put32(&w, 0x600);
		put32(&w, 0);
		put32(&w, 0);
		put32(&w, 0);
	}
	static const uint8_t bus[8] = { 1, 0, 'I', 'S', 'A', ' ', ' ', ' ' };
	put(&w, bus, 8);
	static const uint8_t ioapic[8] = { 2, 8, 0x11, 1, 0x00, 0x00, 0xc0, 0xfe };
	put(&w, ioapic, 8);
	set16(w.b + 4, (uint16_t)w.len);
	w.b[7] = (uint8_t)(0 - sum8(w.b, w.len));
	uint8_t *t = fake_add(phys, w.b, w.len);
	free(w.b);
	return t;
}

static struct mp_cpu cpus[16];
static struct mp_info info;

HT_TEST(firecracker_at_639k_without_bda)
{
	static const uint8_t ids[] = { 0, 1, 2, 3 };
	static const bool en[] = { true, true, true, true };

	fake_free_all();
	place_fps(0x9fc00, 0x9fc10, 0);
	entry_count_zero = true;
	place_table(0x9fc10, ids, en, 4);
	entry_count_zero = false;
	HT_CHECK_EQ(mptable_cpus(fake_phys, cpus, 16, &info), 4);
	HT_CHECK_EQ(info.fps_phys, 0x9fc00);
	HT_CHECK_EQ(info.spec_rev, 4);
	HT_CHECK_EQ(info.ncpus, 4);
	HT_CHECK_EQ(info.lapic_phys, 0xfee00000);
	HT_CHECK_EQ(info.nioapic, 1);
	HT_CHECK_EQ(info.ioapic_phys[0], 0xfec00000);
	HT_CHECK(!info.malformed, "a well-formed table");
	for (unsigned i = 0; i < 4; i++) {
		HT_CHECK_EQ(cpus[i].apic_id, i);
		HT_CHECK(cpus[i].enabled, "cpu %u enabled", i);
		HT_CHECK(cpus[i].bsp == (i == 0), "cpu %u BP flag", i);
	}
	fake_free_all();
}

HT_TEST(seabios_in_rom_area_disabled_cpu_and_max)
{
	static const uint8_t ids[] = { 0, 2, 4 };
	static const bool en[] = { true, false, true };
	uint8_t bda[0x20] = { 0 };

	fake_free_all();
	/* A BIOS data area whose EBDA (0x9fc0 << 4) holds nothing. */
	set16(bda + 0xe, 0x9fc0);
	set16(bda + 0x13, 639);
	fake_add(0x400, bda, sizeof(bda));
	fake_add(0x9fc00, NULL, 1024);
	place_fps(0xf5b20, 0xf5b40, 0);
	place_table(0xf5b40, ids, en, 3);
	HT_CHECK_EQ(mptable_cpus(fake_phys, cpus, 2, &info), 2);
	HT_CHECK_EQ(info.ncpus, 3);
	HT_CHECK_EQ(cpus[1].apic_id, 2);
	HT_CHECK(!cpus[1].enabled, "APIC ID 2 disabled");
	fake_free_all();
}

HT_TEST(bad_checksums_and_absence)
{
	static const uint8_t ids[] = { 0, 1 };
	static const bool en[] = { true, true };

	fake_free_all();
	fake_add(0xf0000, NULL, 0x10000);
	HT_CHECK_EQ(mptable_cpus(fake_phys, cpus, 16, &info), MPTABLE_ENOTFOUND);
	fake_free_all();
	uint8_t *f = place_fps(0x9fc00, 0x9fc10, 0);
	f[10]++;
	place_table(0x9fc10, ids, en, 2);
	HT_CHECK_EQ(mptable_cpus(fake_phys, cpus, 16, &info), MPTABLE_ENOTFOUND);
	fake_free_all();
	place_fps(0x9fc00, 0x9fc10, 0);
	uint8_t *t = place_table(0x9fc10, ids, en, 2);
	t[7]++;
	HT_CHECK_EQ(mptable_cpus(fake_phys, cpus, 16, &info), MPTABLE_EINVAL);
	HT_CHECK_EQ(mptable_cpus(NULL, cpus, 16, &info), MPTABLE_ENOTFOUND);
	fake_free_all();
}

HT_TEST(unknown_entry_type_stops_the_walk)
{
	static const uint8_t ids[] = { 0, 1 };
	static const bool en[] = { true, true };

	fake_free_all();
	place_fps(0x9fc00, 0x9fc10, 0);
	uint8_t *t = place_table(0x9fc10, ids, en, 2);
	/* The second processor entry becomes type 9; fix the checksum. */
	t[44 + 20] = 9;
	t[7] = 0;
	t[7] = (uint8_t)(0 - sum8(t, t[4] | t[5] << 8));
	HT_CHECK_EQ(mptable_cpus(fake_phys, cpus, 16, &info), 1);
	HT_CHECK(info.malformed, "an unknown entry is reported");
	fake_free_all();
}

HT_TEST(default_configuration)
{
	fake_free_all();
	place_fps(0xf0000, 0, 5);
	HT_CHECK_EQ(mptable_cpus(fake_phys, cpus, 16, &info), 2);
	HT_CHECK_EQ(info.default_config, 5);
	HT_CHECK_EQ(cpus[1].apic_id, 1);
	fake_free_all();
}

HT_MAIN("mptable")
