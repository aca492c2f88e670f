/* Host tests for lib/acpi.c: synthetic RSDP/RSDT/XSDT/MADT/FADT/DSDT
 * images built byte by byte from ACPI 6.5 §5.2, checksums included. */
#include "lib/acpi.h"
#include "lib/acpi_mcfg.h"
#include "tests/host/fakemem.h"
#include "tests/host/hosttest.h"

#include <stdint.h>

/* ---- fake physical memory ---------------------------------------------- */

static void fake_reset(void)
{
	fake_free_all();
	acpi_set_phys_accessor(fake_phys);
}

/* ---- byte builders ----------------------------------------------------- */

static uint8_t sum8(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s = (uint8_t)(s + *p++);
	return s;
}

/* Table = 36-byte header (ACPI 6.5 §5.2.6) + body, checksum fixed, placed
 * at phys. Returns the placed copy for later corruption. */
static uint8_t *place_table(uint64_t phys, const char sig[4], uint8_t rev, const void *body, size_t blen)
{
	size_t len = 36 + blen;
	uint8_t *t = calloc(1, len);

	memcpy(t, sig, 4);
	set32(t + 4, (uint32_t)len);
	t[8] = rev;
	memcpy(t + 10, "PMUTST", 6);
	memcpy(t + 16, "SYNTHTBL", 8);
	set32(t + 24, 1);
	memcpy(t + 28, "HOST", 4);
	set32(t + 32, 1);
	if (blen)
		memcpy(t + 36, body, blen);
	t[9] = (uint8_t)(0 - sum8(t, len));
	fake_add(phys, t, len);
	free(t);
	return fake[nfake - 1].buf;
}

static void fix_checksum(uint8_t *t)
{
	uint32_t len = (uint32_t)t[4] | (uint32_t)t[5] << 8 | (uint32_t)t[6] << 16 | (uint32_t)t[7] << 24;

	t[9] = 0;
	t[9] = (uint8_t)(0 - sum8(t, len));
}

/* RSDP (ACPI 6.5 §5.2.5.3), 20 bytes for revision 0, 36 for 2. */
static size_t make_rsdp(uint8_t out[36], uint8_t rev, uint32_t rsdt, uint64_t xsdt)
{
	memset(out, 0, 36);
	memcpy(out, "RSD PTR ", 8);
	memcpy(out + 9, "PMUTST", 6);
	out[15] = rev;
	set32(out + 16, rsdt);
	out[8] = (uint8_t)(0 - sum8(out, 20));
	if (rev < 2)
		return 20;
	set32(out + 20, 36);
	set64(out + 24, xsdt);
	out[32] = (uint8_t)(0 - sum8(out, 36));
	return 36;
}

static uint8_t *place_rsdt(uint64_t phys, const uint64_t *tables, size_t n)
{
	struct buf b = { 0 };
	uint8_t *t;

	for (size_t i = 0; i < n; i++)
		put32(&b, (uint32_t)tables[i]);
	t = place_table(phys, "RSDT", 1, b.b, b.len);
	free(b.b);
	return t;
}

static uint8_t *place_xsdt(uint64_t phys, const uint64_t *tables, size_t n)
{
	struct buf b = { 0 };
	uint8_t *t;

	for (size_t i = 0; i < n; i++)
		put64(&b, tables[i]);
	t = place_table(phys, "XSDT", 1, b.b, b.len);
	free(b.b);
	return t;
}

/* ---- MADT entries (ACPI 6.5 §5.2.12) ----------------------------------- */

static void madt_begin(struct buf *b, uint32_t lapic, uint32_t flags)
{
	b->len = 0;
	put32(b, lapic);
	put32(b, flags);
}

static void madt_lapic(struct buf *b, uint8_t uid, uint8_t id, uint32_t flags)
{
	put8(b, 0);
	put8(b, 8);
	put8(b, uid);
	put8(b, id);
	put32(b, flags);
}

static void madt_x2apic(struct buf *b, uint32_t id, uint32_t flags, uint32_t uid)
{
	put8(b, 9);
	put8(b, 16);
	put16(b, 0);
	put32(b, id);
	put32(b, flags);
	put32(b, uid);
}

static void madt_ioapic(struct buf *b, uint8_t id, uint32_t addr, uint32_t gsi)
{
	put8(b, 1);
	put8(b, 12);
	put8(b, id);
	put8(b, 0);
	put32(b, addr);
	put32(b, gsi);
}

static void madt_iso(struct buf *b, uint8_t irq, uint32_t gsi)
{
	put8(b, 2);
	put8(b, 10);
	put8(b, 0);
	put8(b, irq);
	put32(b, gsi);
	put16(b, 0);
}

static void madt_nmi(struct buf *b, uint8_t uid, uint8_t lint)
{
	put8(b, 4);
	put8(b, 6);
	put8(b, uid);
	put16(b, 0x0005);
	put8(b, lint);
}

static void madt_x2nmi(struct buf *b, uint32_t uid, uint8_t lint)
{
	put8(b, 0xA);
	put8(b, 12);
	put16(b, 0);
	put32(b, uid);
	put8(b, lint);
	put8(b, 0);
	put8(b, 0);
	put8(b, 0);
}

static void madt_override(struct buf *b, uint64_t addr)
{
	put8(b, 5);
	put8(b, 12);
	put16(b, 0);
	put64(b, addr);
}

/* ---- FADT (ACPI 6.5 §5.2.9) -------------------------------------------- */

#define FADT_FULL_LEN 276

struct fadt_spec {
	uint32_t len; /* 116 (ACPI 1.0), 244 (ACPI 2.0-5.x style), 276 */
	uint8_t rev, minor;
	uint32_t dsdt;
	uint64_t x_dsdt;
	uint32_t pm1a, pm1b, pm_tmr;
	uint8_t pm_tmr_len;
	uint8_t x_pm1a_space;
	uint64_t x_pm1a, x_pm1b, x_pm_tmr;
	uint32_t flags;
	uint8_t reset_space;
	uint64_t reset_addr;
	uint8_t reset_value;
	uint8_t century;
	uint16_t boot_arch;
};

static uint8_t *place_fadt(uint64_t phys, const struct fadt_spec *s)
{
	uint8_t b[FADT_FULL_LEN] = { 0 }; /* indexed by FADT offsets */

	set32(b + 40, s->dsdt);
	set32(b + 64, s->pm1a);
	set32(b + 68, s->pm1b);
	set32(b + 76, s->pm_tmr);
	b[89] = 2;
	b[91] = s->pm_tmr_len;
	b[108] = s->century;
	set16(b + 109, s->boot_arch);
	set32(b + 112, s->flags);
	if (s->len > 116) {
		b[116] = s->reset_space;
		b[117] = 8;
		set64(b + 120, s->reset_addr);
		b[128] = s->reset_value;
		b[131] = s->minor;
		set64(b + 140, s->x_dsdt);
		if (s->x_pm1a) {
			b[172] = s->x_pm1a_space;
			b[173] = 16;
			set64(b + 176, s->x_pm1a);
		}
		if (s->x_pm1b) {
			b[184] = 1;
			b[185] = 16;
			set64(b + 188, s->x_pm1b);
		}
		if (s->x_pm_tmr) {
			b[208] = 1;
			b[209] = 32;
			set64(b + 212, s->x_pm_tmr);
		}
	}
	return place_table(phys, "FACP", s->rev, b + 36, s->len - 36);
}

/* ---- a standard machine ------------------------------------------------ */

#define PHYS_RSDT 0x7FE1000u
#define PHYS_XSDT 0x7FE2000u
#define PHYS_MADT 0x7FE3000u
#define PHYS_FADT 0x7FE4000u
#define PHYS_DSDT 0x7FE5000u
#define PHYS_SSDT 0x7FE6000u
#define PHYS_HIGH 0x17FE0000ull /* above 4 GiB for X_ fields */

static uint8_t rsdp[36];
static size_t rsdp_len;

/* AML of QEMU's q35 \_S5: Name (_S5, Package (4) { Zero, Zero, Zero, Zero })
 * preceded by some unrelated AML. */
static const uint8_t aml_s5_zero[] = {
	0x10, 0x03, 0x5C, 0x00,                         /* Scope (\) {} */
	0x08, 0x5F, 0x53, 0x35, 0x5F, 0x12, 0x06, 0x04, /* Name (_S5_, Package 4 */
	0x00, 0x01, 0x00, 0x00,                         /* { Zero, One, Zero, Zero } */
};

/* Name (\_S5, Package (2) { 0x05, 0x07 }) with BytePrefix integers. */
static const uint8_t aml_s5_byte[] = {
	0x08, 0x5C, 0x5F, 0x53, 0x35, 0x5F, 0x12, 0x06, 0x02, 0x0A, 0x05, 0x0A, 0x07,
};

/* MADT of a 4-CPU q35 guest as QEMU builds it. */
static void build_qemu_madt(struct buf *b)
{
	madt_begin(b, 0xFEE00000u, 1);
	for (uint8_t i = 0; i < 4; i++)
		madt_lapic(b, i, i, 1);
	madt_ioapic(b, 0, 0xFEC00000u, 0);
	madt_iso(b, 0, 2);
	madt_nmi(b, 0xFF, 1);
}

/* RSDP v2 -> XSDT and RSDT -> {MADT, FADT}; FADT -> DSDT. */
static void build_machine(const struct buf *madt, const struct fadt_spec *fs, const uint8_t *aml,
			  size_t aml_len)
{
	uint64_t tables[] = { PHYS_FADT, PHYS_MADT };

	fake_reset();
	place_table(PHYS_MADT, "APIC", 5, madt->b, madt->len);
	place_fadt(PHYS_FADT, fs);
	place_table(PHYS_DSDT, "DSDT", 2, aml, aml_len);
	place_rsdt(PHYS_RSDT, tables, 2);
	place_xsdt(PHYS_XSDT, tables, 2);
	rsdp_len = make_rsdp(rsdp, 2, PHYS_RSDT, PHYS_XSDT);
}

static struct fadt_spec qemu_fadt(void)
{
	return (struct fadt_spec){
		.len = 244,
		.rev = 3,
		.dsdt = PHYS_DSDT,
		.x_dsdt = PHYS_DSDT,
		.pm1a = 0x604,
		.pm_tmr = 0x608,
		.pm_tmr_len = 4,
		.x_pm1a_space = 1,
		.x_pm1a = 0x604,
		.x_pm_tmr = 0x608,
		.flags = (1u << 10),
		.reset_space = 1,
		.reset_addr = 0xCF9,
		.reset_value = 0x0F,
		.century = 0x32,
		.boot_arch = 0x0002,
	};
}

/* ---- RSDP and root tables ---------------------------------------------- */

HT_TEST(init_requires_setup)
{
	struct acpi_cpu cpus[4];
	struct acpi_madt_info mi;
	struct acpi_fadt_info fi;

	fake_reset();
	HT_CHECK_EQ(acpi_init(NULL, 0), ACPI_ENOTFOUND);
	HT_CHECK(acpi_find_table("APIC", 0) == NULL, "table without init");
	HT_CHECK_EQ(acpi_madt_cpus(cpus, 4, &mi), ACPI_ENOTFOUND);
	HT_CHECK_EQ(mi.ncpus, 0);
	HT_CHECK_EQ(acpi_fadt(&fi), ACPI_ENOTFOUND);
	HT_CHECK(!fi.valid, "fadt valid without init");
	HT_CHECK(!acpi_uses_xsdt(), "xsdt without init");
}

HT_TEST(rsdp_v1_uses_rsdt)
{
	struct buf madt = { 0 };
	struct fadt_spec fs = qemu_fadt();
	const uint8_t *t;

	build_qemu_madt(&madt);
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	rsdp_len = make_rsdp(rsdp, 0, PHYS_RSDT, 0);
	HT_CHECK_EQ(rsdp_len, 20);
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK(!acpi_uses_xsdt(), "v1 RSDP used an XSDT");
	t = acpi_find_table("APIC", 0);
	HT_CHECK(t == fake_phys(PHYS_MADT, 36), "APIC at %p, placed at %p", (const void *)t,
		 fake_phys(PHYS_MADT, 36));
	HT_CHECK(acpi_find_table("FACP", 0) == fake_phys(PHYS_FADT, 36), "FACP not found");
	HT_CHECK(acpi_find_table("HPET", 0) == NULL, "HPET found though absent");
	HT_CHECK(acpi_find_table("APIC", 1) == NULL, "second APIC found");
	free(madt.b);
}

HT_TEST(rsdp_v2_prefers_xsdt)
{
	struct buf madt = { 0 };
	struct fadt_spec fs = qemu_fadt();
	uint64_t xtables[] = { PHYS_FADT, PHYS_HIGH };
	uint8_t *xsdt;

	build_qemu_madt(&madt);
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	/* The XSDT names a different MADT (above 4 GiB) than the RSDT does. */
	place_table(PHYS_HIGH, "APIC", 5, madt.b, madt.len);
	for (int i = 0; i < nfake; i++)
		if (fake[i].phys == PHYS_XSDT)
			fake[i].phys = 0x7FE7000u; /* retire the standard one */
	xsdt = place_xsdt(PHYS_XSDT, xtables, 2);
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK(acpi_uses_xsdt(), "XSDT not used");
	HT_CHECK(acpi_find_table("APIC", 0) == fake_phys(PHYS_HIGH, 36), "MADT not the XSDT's");

	/* A corrupt XSDT: back to the RSDT and its MADT. */
	xsdt[40] ^= 0x55;
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK(!acpi_uses_xsdt(), "corrupt XSDT used");
	HT_CHECK(acpi_find_table("APIC", 0) == fake_phys(PHYS_MADT, 36), "MADT not the RSDT's");
	xsdt[40] ^= 0x55;

	/* An RSDP copy cut to 20 bytes cannot vouch for the XSDT address. */
	HT_CHECK_EQ(acpi_init(rsdp, 20), 0);
	HT_CHECK(!acpi_uses_xsdt(), "unverified XSDT used");

	/* Bad extended checksum: RSDT. */
	rsdp[24] ^= 1;
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK(!acpi_uses_xsdt(), "XSDT used despite bad extended checksum");
	rsdp[24] ^= 1;
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK(acpi_uses_xsdt(), "XSDT not used after repair");
	free(madt.b);
}

HT_TEST(rsdp_rejections)
{
	struct buf madt = { 0 };
	struct fadt_spec fs = qemu_fadt();

	build_qemu_madt(&madt);
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	HT_CHECK_EQ(acpi_init(rsdp, 19), ACPI_ENOTFOUND);
	rsdp[8] ^= 0xFF; /* v1 checksum */
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), ACPI_EINVAL);
	HT_CHECK(acpi_find_table("APIC", 0) == NULL, "table after failed init");
	rsdp[8] ^= 0xFF;
	rsdp[3] = 'X'; /* signature */
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), ACPI_EINVAL);

	/* A good RSDP whose root tables are both unusable. */
	rsdp_len = make_rsdp(rsdp, 2, 0x12345000u, 0x67890000u);
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), ACPI_EINVAL);
	rsdp_len = make_rsdp(rsdp, 0, PHYS_XSDT, 0); /* RSDT address at an XSDT */
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), ACPI_EINVAL);
	free(madt.b);
}

HT_TEST(find_table_instances_and_checksums)
{
	uint64_t tables[] = { PHYS_SSDT, PHYS_SSDT + 0x100, PHYS_SSDT + 0x200,
			      0,         PHYS_SSDT + 0x300, 0x99990000u };
	static const uint8_t aml[] = { 0xA3 };
	uint8_t *bad, *huge, *cut;

	fake_reset();
	place_table(PHYS_SSDT, "SSDT", 2, aml, 1);
	bad = place_table(PHYS_SSDT + 0x100, "SSDT", 2, aml, 1);
	bad[36] ^= 1;
	place_table(PHYS_SSDT + 0x200, "SSDT", 2, aml, 1);
	/* A table claiming more bytes than exist behind it. */
	cut = place_table(PHYS_SSDT + 0x300, "TPM2", 2, aml, 1);
	set32(cut + 4, 0x200);
	place_xsdt(PHYS_XSDT, tables, 6);
	rsdp_len = make_rsdp(rsdp, 2, 0, PHYS_XSDT);
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);

	HT_CHECK(acpi_find_table("SSDT", 0) == fake_phys(PHYS_SSDT, 36), "SSDT 0");
	HT_CHECK(acpi_find_table("SSDT", 1) == NULL, "corrupt SSDT 1 returned");
	HT_CHECK(acpi_find_table("SSDT", 2) == fake_phys(PHYS_SSDT + 0x200, 36),
		 "SSDT 2 shifted by the corrupt one");
	HT_CHECK(acpi_find_table("SSDT", 3) == NULL, "SSDT 3");
	HT_CHECK(acpi_find_table("TPM2", 0) == NULL, "over-long table returned");
	/* No FADT, so no DSDT. */
	HT_CHECK(acpi_find_table("DSDT", 0) == NULL, "DSDT without FADT");

	/* Length below a header, and absurdly large. */
	huge = place_table(0x50000000u, "BGRT", 1, NULL, 0);
	set32(huge + 4, 20);
	fix_checksum(huge);
	tables[3] = 0x50000000u;
	place_xsdt(PHYS_XSDT + 0x800, tables, 6);
	rsdp_len = make_rsdp(rsdp, 2, 0, PHYS_XSDT + 0x800);
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK(acpi_find_table("BGRT", 0) == NULL, "20-byte table returned");
	set32(huge + 4, 0x40000000u);
	HT_CHECK(acpi_find_table("BGRT", 0) == NULL, "1 GiB table returned");
}

/* MCFG (PCI Firmware Specification 3.0, 4.1.2): 8 reserved bytes, then
 * 16-byte entries; q35's window first, one with its buses reversed
 * (left out), a second segment. */
HT_TEST(mcfg_windows)
{
	uint64_t tables[] = { PHYS_SSDT };
	struct acpi_mcfg_entry e[4];
	struct buf b = { 0 };
	uint8_t *t;

	fake_reset();
	put64(&b, 0);
	put64(&b, 0xb0000000ull), put32(&b, 0 | 0 << 16 | 0xffu << 24), put32(&b, 0);
	put64(&b, 0xc0000000ull), put32(&b, 0 | 9u << 16 | 3u << 24), put32(&b, 0);
	put64(&b, 0x4000000000ull), put32(&b, 1 | 0x80u << 16 | 0x8fu << 24), put32(&b, 0);
	t = place_table(PHYS_SSDT, "MCFG", 1, b.b, b.len);
	place_xsdt(PHYS_XSDT, tables, 1);
	rsdp_len = make_rsdp(rsdp, 2, 0, PHYS_XSDT);
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK_EQ(acpi_mcfg(e, 4), 2);
	HT_CHECK(e[0].base == 0xb0000000ull && e[0].segment == 0 && e[0].start_bus == 0 &&
			 e[0].end_bus == 0xff,
		 "q35's window: %#llx %u %u-%u", (unsigned long long)e[0].base, e[0].segment, e[0].start_bus,
		 e[0].end_bus);
	HT_CHECK(e[1].base == 0x4000000000ull && e[1].segment == 1 && e[1].start_bus == 0x80 &&
			 e[1].end_bus == 0x8f,
		 "segment 1's window");
	/* More entries than room: the count, the first ones kept. */
	HT_CHECK_EQ(acpi_mcfg(e, 1), 2);
	/* A length that is not the header plus whole entries. */
	set32(t + 4, 36 + (uint32_t)b.len - 4);
	fix_checksum(t);
	HT_CHECK_EQ(acpi_mcfg(e, 4), ACPI_EINVAL);
	free(b.b);
	/* No MCFG at all. */
	fake_reset();
	place_table(PHYS_SSDT, "SSDT", 2, NULL, 0);
	place_xsdt(PHYS_XSDT, tables, 1);
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK_EQ(acpi_mcfg(e, 4), ACPI_ENOTFOUND);
}

HT_TEST(dsdt_through_fadt)
{
	struct buf madt = { 0 };
	struct fadt_spec fs = qemu_fadt();

	build_qemu_madt(&madt);
	/* X_DSDT (above 4 GiB) wins over the 32-bit DSDT field. */
	fs.x_dsdt = PHYS_HIGH;
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	place_table(PHYS_HIGH, "DSDT", 2, aml_s5_byte, sizeof(aml_s5_byte));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK(acpi_find_table("DSDT", 0) == fake_phys(PHYS_HIGH, 36), "X_DSDT not preferred");
	HT_CHECK(acpi_find_table("DSDT", 1) == NULL, "a second DSDT");

	/* X_DSDT zero: the 32-bit field. */
	fs.x_dsdt = 0;
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK(acpi_find_table("DSDT", 0) == fake_phys(PHYS_DSDT, 36), "DSDT field unused");

	/* A revision-1 FADT has no X_DSDT at all. */
	fs = (struct fadt_spec){ .len = 116, .rev = 1, .dsdt = PHYS_DSDT };
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK(acpi_find_table("DSDT", 0) == fake_phys(PHYS_DSDT, 36), "v1 FADT's DSDT");
	free(madt.b);
}

/* ---- BIOS scan (ACPI 6.5 §5.2.5.1) ------------------------------------- */

HT_TEST(scan_bios)
{
	uint64_t tables[] = { PHYS_MADT };
	struct buf madt = { 0 };
	uint8_t *low, good[36], bad[36];

	build_qemu_madt(&madt);

	/* In the EBDA. */
	fake_reset();
	low = fake_add(0, NULL, 0x100000);
	set16(low + 0x40E, 0x9FC0);
	place_table(PHYS_MADT, "APIC", 5, madt.b, madt.len);
	place_rsdt(PHYS_RSDT, tables, 1);
	make_rsdp(good, 0, PHYS_RSDT, 0);
	memcpy(low + 0x9FC00 + 0x30, good, 20);
	HT_CHECK_EQ(acpi_init_scan_bios(), 0);
	HT_CHECK(acpi_find_table("APIC", 0) != NULL, "MADT not reachable from EBDA RSDP");

	/* Not 16-byte aligned: not found there; no other copy. */
	memset(low + 0x9FC00, 0, 0x400);
	memcpy(low + 0x9FC00 + 0x38, good, 20);
	HT_CHECK_EQ(acpi_init_scan_bios(), ACPI_ENOTFOUND);

	/* Past the EBDA's first KiB: not searched. */
	memset(low + 0x9FC00, 0, 0x400);
	set16(low + 0x40E, 0x9000);
	memcpy(low + 0x90000 + 0x400, good, 20);
	HT_CHECK_EQ(acpi_init_scan_bios(), ACPI_ENOTFOUND);

	/* In the BIOS area, after a bad-checksum and a bad-extended-checksum
	 * candidate; and a garbage EBDA pointer is ignored. */
	set16(low + 0x40E, 0x0000);
	memcpy(bad, good, 20);
	bad[8] ^= 1;
	memcpy(low + 0xE0000, bad, 20);
	make_rsdp(bad, 2, PHYS_RSDT, PHYS_XSDT);
	bad[32] ^= 1;
	memcpy(low + 0xE1000, bad, 36);
	make_rsdp(good, 2, PHYS_RSDT, 0);
	memcpy(low + 0xF5A40, good, 36);
	HT_CHECK_EQ(acpi_init_scan_bios(), 0);
	HT_CHECK(!acpi_uses_xsdt(), "XSDT from a zero address");
	HT_CHECK(acpi_find_table("APIC", 0) != NULL, "MADT not reachable from ROM RSDP");

	/* A checksum-valid RSDP whose RSDT is missing is passed over too. */
	make_rsdp(bad, 0, 0x3000000u, 0);
	memcpy(low + 0xE2000, bad, 20);
	HT_CHECK_EQ(acpi_init_scan_bios(), 0);

	/* Nothing at all. */
	memset(low + 0xE0000, 0, 0x20000);
	HT_CHECK_EQ(acpi_init_scan_bios(), ACPI_ENOTFOUND);
	free(madt.b);
}

/* ---- MADT -------------------------------------------------------------- */

HT_TEST(madt_qemu_four_cpus)
{
	struct buf madt = { 0 };
	struct fadt_spec fs = qemu_fadt();
	struct acpi_cpu cpus[8];
	struct acpi_madt_info mi;
	int n;

	build_qemu_madt(&madt);
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	n = acpi_madt_cpus(cpus, 8, &mi);
	HT_CHECK_EQ(n, 4);
	HT_CHECK_EQ(mi.ncpus, 4);
	HT_CHECK_EQ(mi.ncpus_skipped, 0);
	for (int i = 0; i < 4 && i < n; i++) {
		HT_CHECK_EQ(cpus[i].apic_id, i);
		HT_CHECK_EQ(cpus[i].uid, i);
		HT_CHECK(cpus[i].enabled && !cpus[i].online_capable && !cpus[i].from_x2apic_entry,
			 "cpu %d flags", i);
	}
	HT_CHECK_EQ(mi.lapic_phys, 0xFEE00000u);
	HT_CHECK(mi.pcat_compat, "PCAT_COMPAT lost");
	HT_CHECK_EQ(mi.nioapic, 1);
	HT_CHECK_EQ(mi.ioapic_phys[0], 0xFEC00000u);
	HT_CHECK(mi.has_nmi_lint, "NMI entry lost");
	HT_CHECK_EQ(mi.nmi_lint, 1);
	HT_CHECK(!mi.malformed, "clean MADT flagged malformed");

	/* Fewer slots than CPUs; and info may be NULL. */
	n = acpi_madt_cpus(cpus, 2, &mi);
	HT_CHECK_EQ(n, 2);
	HT_CHECK_EQ(mi.ncpus, 4);
	HT_CHECK_EQ(cpus[1].apic_id, 1);
	HT_CHECK_EQ(acpi_madt_cpus(NULL, 0, NULL), 0);
	free(madt.b);
}

HT_TEST(madt_mixture)
{
	struct buf madt = { 0 };
	struct fadt_spec fs = qemu_fadt();
	struct acpi_cpu cpus[16];
	struct acpi_madt_info mi;
	int n;

	fs.len = FADT_FULL_LEN;
	fs.rev = 6;
	fs.minor = 0x35; /* ACPI 6.5 (errata nibble 3): Online Capable defined */
	madt_begin(&madt, 0xFEE00000u, 0);
	madt_lapic(&madt, 0, 0, 1);            /* cpu 0 */
	madt_lapic(&madt, 1, 1, 0);            /* disabled: skipped */
	madt_lapic(&madt, 2, 0xFF, 1);         /* invalid id: skipped */
	madt_lapic(&madt, 3, 2, 2);            /* online capable */
	madt_lapic(&madt, 4, 3, 3);            /* enabled; bit 1 reserved then */
	madt_x2apic(&madt, 0, 1, 100);         /* duplicate of cpu 0 */
	madt_x2apic(&madt, 300, 1, 300);       /* x2APIC-only cpu */
	madt_x2apic(&madt, 0xFFFFFFFFu, 1, 5); /* invalid: skipped */
	madt_x2apic(&madt, 1, 1, 101);         /* id 1 was disabled as type 0: reported */
	madt_lapic(&madt, 6, 3, 1);            /* duplicate of id 3 */
	madt_ioapic(&madt, 0, 0xFEC00000u, 0);
	madt_ioapic(&madt, 1, 0xFEC01000u, 24);
	madt_nmi(&madt, 0, 0);             /* one CPU, LINT0 */
	madt_x2nmi(&madt, 0xFFFFFFFFu, 1); /* all CPUs, LINT1: preferred */
	madt_override(&madt, 0x1FEE00000ull);
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);

	n = acpi_madt_cpus(cpus, 16, &mi);
	HT_CHECK_EQ(n, 5);
	HT_CHECK_EQ(mi.ncpus, 5);
	HT_CHECK_EQ(mi.ncpus_skipped, 3);
	HT_CHECK_EQ(cpus[0].apic_id, 0);
	HT_CHECK(cpus[0].enabled && !cpus[0].from_x2apic_entry, "cpu0 should be the type-0 one");
	HT_CHECK_EQ(cpus[1].apic_id, 2);
	HT_CHECK(!cpus[1].enabled && cpus[1].online_capable, "id 2 should be online-capable only");
	HT_CHECK_EQ(cpus[1].uid, 3);
	HT_CHECK_EQ(cpus[2].apic_id, 3);
	HT_CHECK(cpus[2].enabled && !cpus[2].online_capable, "enabled wins over bit 1");
	HT_CHECK_EQ(cpus[3].apic_id, 300);
	HT_CHECK_EQ(cpus[3].uid, 300);
	HT_CHECK(cpus[3].from_x2apic_entry && cpus[3].enabled, "x2apic cpu flags");
	HT_CHECK_EQ(cpus[4].apic_id, 1);
	HT_CHECK_EQ(cpus[4].uid, 101);
	HT_CHECK(cpus[4].from_x2apic_entry, "id 1 should come from the x2apic entry");
	HT_CHECK_EQ(mi.lapic_phys, 0x1FEE00000ull);
	HT_CHECK(!mi.pcat_compat, "PCAT_COMPAT invented");
	HT_CHECK_EQ(mi.nioapic, 2);
	HT_CHECK_EQ(mi.ioapic_phys[1], 0xFEC01000u);
	HT_CHECK(mi.has_nmi_lint, "no NMI");
	HT_CHECK_EQ(mi.nmi_lint, 1);
	HT_CHECK(!mi.malformed, "clean MADT flagged malformed");

	/* Under ACPI 6.2 (FADT 6.2) bit 1 is reserved: id 2 is skipped. */
	fs.minor = 2;
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	n = acpi_madt_cpus(cpus, 16, &mi);
	HT_CHECK_EQ(n, 4);
	HT_CHECK_EQ(mi.ncpus_skipped, 4);
	HT_CHECK_EQ(cpus[1].apic_id, 3);
	free(madt.b);
}

HT_TEST(madt_malformed_entries)
{
	struct buf madt = { 0 };
	struct fadt_spec fs = qemu_fadt();
	struct acpi_cpu cpus[8];
	struct acpi_madt_info mi;
	int n;

	/* A type-0 entry of length 6 is skipped; parsing goes on. */
	madt_begin(&madt, 0xFEE00000u, 1);
	madt_lapic(&madt, 0, 0, 1);
	put8(&madt, 0);
	put8(&madt, 6);
	put32(&madt, 0x01000101u);
	madt_lapic(&madt, 2, 2, 1);
	put8(&madt, 9); /* x2apic of 12 bytes */
	put8(&madt, 12);
	put16(&madt, 0);
	put32(&madt, 7);
	put32(&madt, 1);
	madt_lapic(&madt, 3, 3, 1);
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	n = acpi_madt_cpus(cpus, 8, &mi);
	HT_CHECK_EQ(n, 3);
	HT_CHECK(mi.malformed, "short entries not flagged");
	HT_CHECK_EQ(cpus[1].apic_id, 2);
	HT_CHECK_EQ(cpus[2].apic_id, 3);

	/* A last entry running past the table: stop, keep what came before. */
	madt_begin(&madt, 0xFEE00000u, 1);
	madt_lapic(&madt, 0, 0, 1);
	madt_lapic(&madt, 1, 1, 1);
	put8(&madt, 0);
	put8(&madt, 8);
	put8(&madt, 2);
	put8(&madt, 2); /* 4 of its 8 bytes */
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	n = acpi_madt_cpus(cpus, 8, &mi);
	HT_CHECK_EQ(n, 2);
	HT_CHECK(mi.malformed, "truncated entry not flagged");

	/* Length 0 would never advance: stop. A lone trailing byte is no entry. */
	madt_begin(&madt, 0xFEE00000u, 1);
	madt_lapic(&madt, 0, 0, 1);
	put8(&madt, 0);
	put8(&madt, 0);
	madt_lapic(&madt, 1, 1, 1);
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK_EQ(acpi_madt_cpus(cpus, 8, &mi), 1);
	HT_CHECK(mi.malformed, "zero-length entry not flagged");

	madt_begin(&madt, 0xFEE00000u, 1);
	madt_lapic(&madt, 0, 0, 1);
	put8(&madt, 0);
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK_EQ(acpi_madt_cpus(cpus, 8, &mi), 1);
	HT_CHECK(!mi.malformed, "trailing byte flagged");

	/* More than 8 I/O APICs: 8 kept. Short NMI/override/IOAPIC entries
	 * and an NMI on LINT2 are malformed. */
	madt_begin(&madt, 0xFEE00000u, 1);
	for (uint32_t i = 0; i < 10; i++)
		madt_ioapic(&madt, (uint8_t)i, 0xFEC00000u + i * 0x1000, i * 24);
	put8(&madt, 4);
	put8(&madt, 5);
	put8(&madt, 0xFF);
	put16(&madt, 0);
	madt_nmi(&madt, 0xFF, 2);
	put8(&madt, 5);
	put8(&madt, 8);
	put32(&madt, 0);
	put16(&madt, 0);
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK_EQ(acpi_madt_cpus(cpus, 8, &mi), 0);
	HT_CHECK_EQ(mi.nioapic, 8);
	HT_CHECK_EQ(mi.ioapic_phys[7], 0xFEC07000u);
	HT_CHECK(!mi.has_nmi_lint, "bad NMI entries used");
	HT_CHECK_EQ(mi.lapic_phys, 0xFEE00000u);
	HT_CHECK(mi.malformed, "short entries not flagged");

	/* MADT shorter than its fixed part. */
	madt_begin(&madt, 0xFEE00000u, 1);
	madt.len = 6;
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK_EQ(acpi_madt_cpus(cpus, 8, &mi), ACPI_EINVAL);

	/* MADT with a bad checksum: as if absent. */
	build_qemu_madt(&madt);
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	((uint8_t *)fake_phys(PHYS_MADT, 36))[40] ^= 1;
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK_EQ(acpi_madt_cpus(cpus, 8, &mi), ACPI_ENOTFOUND);
	free(madt.b);
}

HT_TEST(madt_nmi_choice)
{
	struct buf madt = { 0 };
	struct fadt_spec fs = qemu_fadt();
	struct acpi_madt_info mi;

	/* Per-CPU entries only: the first is kept. */
	madt_begin(&madt, 0xFEE00000u, 1);
	madt_nmi(&madt, 1, 0);
	madt_nmi(&madt, 2, 1);
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK_EQ(acpi_madt_cpus(NULL, 0, &mi), 0);
	HT_CHECK(mi.has_nmi_lint, "NMI lost");
	HT_CHECK_EQ(mi.nmi_lint, 0);

	/* An all-CPUs entry after a per-CPU one wins; a later one does not. */
	madt_nmi(&madt, 0xFF, 1);
	madt_nmi(&madt, 0xFF, 0);
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK_EQ(acpi_madt_cpus(NULL, 0, &mi), 0);
	HT_CHECK_EQ(mi.nmi_lint, 1);
	free(madt.b);
}

/* ---- FADT and \_S5 ----------------------------------------------------- */

HT_TEST(fadt_qemu)
{
	struct buf madt = { 0 };
	struct fadt_spec fs = qemu_fadt();
	struct acpi_fadt_info fi;

	build_qemu_madt(&madt);
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK_EQ(acpi_fadt(&fi), 0);
	HT_CHECK(fi.valid, "not valid");
	HT_CHECK_EQ(fi.pm1a_cnt, 0x604);
	HT_CHECK_EQ(fi.pm1b_cnt, 0);
	HT_CHECK(fi.has_s5, "no \\_S5 in q35-style DSDT");
	HT_CHECK_EQ(fi.slp_typa, 0);
	HT_CHECK_EQ(fi.slp_typb, 1);
	HT_CHECK(fi.has_reset, "no reset register");
	HT_CHECK_EQ(fi.reset_space, 1);
	HT_CHECK_EQ(fi.reset_addr, 0xCF9);
	HT_CHECK_EQ(fi.reset_value, 0x0F);
	HT_CHECK_EQ(fi.pm_tmr_port, 0x608);
	HT_CHECK(!fi.pm_tmr_32bit, "24-bit timer reported 32-bit");
	HT_CHECK(!fi.hw_reduced, "hw_reduced invented");
	HT_CHECK_EQ(fi.century, 0x32);
	HT_CHECK_EQ(fi.boot_arch, ACPI_BOOT_ARCH_8042);
	free(madt.b);
}

HT_TEST(fadt_full_prefers_x_fields)
{
	struct buf madt = { 0 };
	struct fadt_spec fs = {
		.len = FADT_FULL_LEN,
		.rev = 6,
		.minor = 5,
		.dsdt = PHYS_DSDT,
		.pm1a = 0x1004,
		.pm1b = 0x2004,
		.pm_tmr = 0x1008,
		.pm_tmr_len = 4,
		.x_pm1a_space = 1,
		.x_pm1a = 0x404,
		.x_pm1b = 0x504,
		.x_pm_tmr = 0x408,
		.flags = (1u << 8) | (1u << 10),
		.reset_space = 0,
		.reset_addr = 0xFED80000ull,
		.reset_value = 0x06,
		.boot_arch = 0x0023,
	};
	struct acpi_fadt_info fi;

	build_qemu_madt(&madt);
	build_machine(&madt, &fs, aml_s5_byte, sizeof(aml_s5_byte));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK_EQ(acpi_fadt(&fi), 0);
	HT_CHECK_EQ(fi.pm1a_cnt, 0x404);
	HT_CHECK_EQ(fi.pm1b_cnt, 0x504);
	HT_CHECK_EQ(fi.pm_tmr_port, 0x408);
	HT_CHECK(fi.pm_tmr_32bit, "TMR_VAL_EXT ignored");
	HT_CHECK(fi.has_reset, "memory reset register dropped");
	HT_CHECK_EQ(fi.reset_space, 0);
	HT_CHECK_EQ(fi.reset_addr, 0xFED80000ull);
	HT_CHECK_EQ(fi.reset_value, 6);
	HT_CHECK_EQ(fi.boot_arch, 0x23);
	HT_CHECK(fi.has_s5, "BytePrefix \\_S5 not found");
	HT_CHECK_EQ(fi.slp_typa, 5);
	HT_CHECK_EQ(fi.slp_typb, 7);

	/* X_PM1a_CNT_BLK in memory space cannot be an I/O port: legacy one. */
	fs.x_pm1a_space = 0;
	build_machine(&madt, &fs, aml_s5_byte, sizeof(aml_s5_byte));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK_EQ(acpi_fadt(&fi), 0);
	HT_CHECK_EQ(fi.pm1a_cnt, 0x1004);

	/* Reset register in PCI configuration space (2): not reported; and
	 * RESET_REG_SUP clear: not reported either. */
	fs.reset_space = 2;
	build_machine(&madt, &fs, aml_s5_byte, sizeof(aml_s5_byte));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK_EQ(acpi_fadt(&fi), 0);
	HT_CHECK(!fi.has_reset, "PCI-space reset reported");
	fs.reset_space = 1;
	fs.reset_addr = 0xCF9;
	fs.flags = 0;
	build_machine(&madt, &fs, aml_s5_byte, sizeof(aml_s5_byte));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK_EQ(acpi_fadt(&fi), 0);
	HT_CHECK(!fi.has_reset, "reset without RESET_REG_SUP");

	/* Hardware-reduced: no fixed PM registers at all. */
	fs.flags = 1u << 20;
	build_machine(&madt, &fs, aml_s5_byte, sizeof(aml_s5_byte));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK_EQ(acpi_fadt(&fi), 0);
	HT_CHECK(fi.hw_reduced, "HW_REDUCED_ACPI ignored");
	HT_CHECK(fi.pm1a_cnt == 0 && fi.pm1b_cnt == 0 && fi.pm_tmr_port == 0,
		 "fixed registers on a hw-reduced platform: %#x %#x %#x", fi.pm1a_cnt, fi.pm1b_cnt,
		 fi.pm_tmr_port);
	free(madt.b);
}

HT_TEST(fadt_revision1)
{
	struct buf madt = { 0 };
	struct fadt_spec fs = {
		.len = 116,
		.rev = 1,
		.dsdt = PHYS_DSDT,
		.pm1a = 0xB004,
		.pm_tmr = 0xB008,
		.pm_tmr_len = 4,
		.flags = (1u << 10),
		.century = 0,
		.boot_arch = 0x0003,
	};
	struct acpi_fadt_info fi;

	build_qemu_madt(&madt);
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK_EQ(acpi_fadt(&fi), 0);
	HT_CHECK_EQ(fi.pm1a_cnt, 0xB004);
	HT_CHECK_EQ(fi.pm_tmr_port, 0xB008);
	/* No RESET_REG in 116 bytes, whatever the flag says; IAPC_BOOT_ARCH
	 * is reserved in ACPI 1.0 and ignored. */
	HT_CHECK(!fi.has_reset, "reset register read past a v1 FADT");
	HT_CHECK_EQ(fi.boot_arch, 0);
	HT_CHECK(fi.has_s5, "\\_S5 via a v1 FADT's DSDT");

	/* PM_TMR_LEN 0 means no timer; ports above 0xFFFF are not ports. */
	fs.pm_tmr_len = 0;
	fs.pm1a = 0x10004;
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK_EQ(acpi_fadt(&fi), 0);
	HT_CHECK_EQ(fi.pm_tmr_port, 0);
	HT_CHECK_EQ(fi.pm1a_cnt, 0);

	/* A FADT shorter than ACPI 1.0's is refused. */
	fs.len = 100;
	build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
	HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
	HT_CHECK_EQ(acpi_fadt(&fi), ACPI_EINVAL);
	HT_CHECK(!fi.valid, "short FADT valid");
	free(madt.b);
}

/* Runs acpi_fadt over a machine whose DSDT holds `aml`. */
static bool s5_of(const uint8_t *aml, size_t n, uint8_t *a, uint8_t *b)
{
	struct buf madt = { 0 };
	struct fadt_spec fs = qemu_fadt();
	struct acpi_fadt_info fi;

	build_qemu_madt(&madt);
	build_machine(&madt, &fs, aml, n);
	free(madt.b);
	if (acpi_init(rsdp, rsdp_len) != 0 || acpi_fadt(&fi) != 0 || !fi.valid)
		return false;
	*a = fi.slp_typa;
	*b = fi.slp_typb;
	return fi.has_s5;
}

HT_TEST(s5_encodings_and_decoys)
{
	uint8_t a = 0xEE, b = 0xEE;

	/* Two-byte PkgLength (lead 0x4n + one byte) and Word/DWord integers. */
	{
		static const uint8_t aml[] = {
			0x08, 0x5F, 0x53, 0x35, 0x5F, 0x12, 0x4B, 0x00, 0x02,
			0x0B, 0x03, 0x00, 0x0C, 0x04, 0x00, 0x00, 0x00,
		};
		HT_CHECK(s5_of(aml, sizeof(aml), &a, &b), "2-byte PkgLength not parsed");
		HT_CHECK_EQ(a, 3);
		HT_CHECK_EQ(b, 4);
	}
	/* Decoys first: "_S5_" not after NameOp (inside a string), a
	 * Name(_S5_, integer), and a one-element package; then the real one. */
	{
		static const uint8_t aml[] = {
			0x0D, 0x5F, 0x53, 0x35, 0x5F, 0x00,       /* String "_S5_" */
			0x08, 0x5F, 0x53, 0x35, 0x5F, 0x0A, 0x05, /* Name (_S5_, 5) */
			0x08, 0x5F, 0x53, 0x35, 0x5F, 0x12, 0x04, 0x01, 0x0A, 0x02, 0x08,
			0x5F, 0x53, 0x35, 0x5F, 0x12, 0x05, 0x02, 0x0A, 0x06, 0x01,
		};
		HT_CHECK(s5_of(aml, sizeof(aml), &a, &b), "real \\_S5 behind decoys missed");
		HT_CHECK_EQ(a, 6);
		HT_CHECK_EQ(b, 1);
	}
	/* Values that cannot be a 3-bit SLP_TYP, and unsupported opcodes. */
	{
		static const uint8_t big[] = {
			0x08, 0x5F, 0x53, 0x35, 0x5F, 0x12, 0x06, 0x02, 0x0A, 0x08, 0x0A, 0x00,
		};
		static const uint8_t word_hi[] = {
			0x08, 0x5F, 0x53, 0x35, 0x5F, 0x12, 0x06, 0x02, 0x0B, 0x01, 0x01, 0x00,
		};
		static const uint8_t ones[] = {
			0x08, 0x5F, 0x53, 0x35, 0x5F, 0x12, 0x04, 0x02, 0xFF, 0x00,
		};
		HT_CHECK(!s5_of(big, sizeof(big), &a, &b), "SLP_TYP 8 accepted");
		HT_CHECK(!s5_of(word_hi, sizeof(word_hi), &a, &b), "SLP_TYP 0x101 accepted");
		HT_CHECK(!s5_of(ones, sizeof(ones), &a, &b), "OnesOp accepted");
	}
	/* Truncation at every byte of a good \_S5: never found, never a read
	 * past the table (ASan), until the package is whole. */
	for (size_t cut = 0; cut <= sizeof(aml_s5_byte); cut++) {
		bool found = s5_of(aml_s5_byte, cut, &a, &b);

		HT_CHECK(found == (cut == sizeof(aml_s5_byte)), "cut at %zu: found=%d", cut, found);
	}
	/* PkgLength claiming more than the table holds. */
	{
		static const uint8_t aml[] = {
			0x08, 0x5F, 0x53, 0x35, 0x5F, 0x12, 0x3F, 0x02, 0x00, 0x00,
		};
		HT_CHECK(!s5_of(aml, sizeof(aml), &a, &b), "over-long package accepted");
	}
	/* Package whose elements run past its PkgLength. */
	{
		static const uint8_t aml[] = {
			0x08, 0x5F, 0x53, 0x35, 0x5F, 0x12, 0x03, 0x02, 0x0A, 0x05, 0x0A, 0x05,
		};
		HT_CHECK(!s5_of(aml, sizeof(aml), &a, &b), "elements past PkgLength accepted");
	}
	/* A DSDT with a bad checksum: FADT still valid, no \_S5. */
	{
		struct buf madt = { 0 };
		struct fadt_spec fs = qemu_fadt();
		struct acpi_fadt_info fi;

		build_qemu_madt(&madt);
		build_machine(&madt, &fs, aml_s5_zero, sizeof(aml_s5_zero));
		((uint8_t *)fake_phys(PHYS_DSDT, 36))[40] ^= 1;
		HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
		HT_CHECK_EQ(acpi_fadt(&fi), 0);
		HT_CHECK(fi.valid && !fi.has_s5, "corrupt DSDT used (valid=%d s5=%d)", fi.valid, fi.has_s5);
		HT_CHECK_EQ(fi.pm1a_cnt, 0x604);
		free(madt.b);
	}
}

/* ---- fuzz -------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

/* Spec lengths of the MADT entry types (ACPI 6.5 §5.2.12.x). */
static uint8_t madt_spec_len(uint8_t type)
{
	switch (type) {
	case 0: return 8;
	case 1: return 12;
	case 2: return 10;
	case 4: return 6;
	case 5: return 12;
	case 9: return 16;
	case 0xA: return 12;
	default: return 4;
	}
}

/* Random MADT bodies, checksummed so parsing really runs: half built from
 * plausible entries with random fields and lengths, half pure noise. */
HT_TEST(fuzz_madt)
{
	static const uint8_t types[] = { 0, 1, 2, 4, 5, 9, 0xA, 0x7F };
	struct fadt_spec fs = qemu_fadt();
	uint64_t tables[] = { PHYS_FADT, PHYS_MADT };
	unsigned total_cpus = 0, total_malformed = 0;

	fake_reset();
	fs.len = FADT_FULL_LEN;
	fs.rev = 6;
	fs.minor = 5;
	place_fadt(PHYS_FADT, &fs);
	place_table(PHYS_DSDT, "DSDT", 2, aml_s5_zero, sizeof(aml_s5_zero));
	place_xsdt(PHYS_XSDT, tables, 2);
	rsdp_len = make_rsdp(rsdp, 2, 0, PHYS_XSDT);
	rng_state = 0xD1B54A32D192ED03ull;

	for (int iter = 0; iter < 50000; iter++) {
		struct buf body = { 0 };
		unsigned max = (unsigned)(rng() % 9);
		struct acpi_cpu *cpus = max ? malloc(max * sizeof(*cpus)) : NULL;
		struct acpi_madt_info mi;
		int n;

		put32(&body, (uint32_t)rng());
		put32(&body, (uint32_t)rng());
		if (rng() % 2) {
			for (uint64_t k = rng() % 24; k; k--) {
				uint8_t t = types[rng() % sizeof(types)];
				/* Mostly the spec length, sometimes anything. */
				uint8_t len = (uint8_t)(rng() % 4 ? madt_spec_len(t) : rng() % 20);

				put8(&body, t);
				put8(&body, len);
				for (int i = 2; i < len; i++)
					put8(&body, (uint8_t)(rng() % 3 ? rng() % 4 : rng()));
			}
		} else {
			for (uint64_t k = rng() % 200; k; k--)
				put8(&body, (uint8_t)rng());
		}
		if (body.len > 8 && rng() % 4 == 0)
			body.len -= 1 + rng() % (body.len - 8); /* chop the tail */
		place_table(PHYS_MADT, "APIC", 5, body.b, body.len);
		HT_CHECK_EQ(acpi_init(rsdp, rsdp_len), 0);
		n = acpi_madt_cpus(cpus, max, &mi);

		HT_CHECK(n >= 0 && (unsigned)n == (mi.ncpus < max ? mi.ncpus : max),
			 "iter %d: n=%d ncpus=%u max=%u", iter, n, mi.ncpus, max);
		HT_CHECK(mi.nioapic <= 8 && (!mi.has_nmi_lint || mi.nmi_lint <= 1),
			 "iter %d: nioapic %u nmi %u", iter, mi.nioapic, mi.nmi_lint);
		for (int i = 0; i < n; i++) {
			HT_CHECK(cpus[i].enabled != cpus[i].online_capable,
				 "iter %d cpu %d: enabled %d online_capable %d", iter, i, cpus[i].enabled,
				 cpus[i].online_capable);
			HT_CHECK(cpus[i].from_x2apic_entry ? cpus[i].apic_id != 0xFFFFFFFFu
							   : cpus[i].apic_id < 0xFF,
				 "iter %d cpu %d: invalid id %#x reported", iter, i, cpus[i].apic_id);
			for (int j = 0; j < i; j++)
				HT_CHECK(cpus[i].apic_id != cpus[j].apic_id,
					 "iter %d: apic id %#x reported twice", iter, cpus[i].apic_id);
		}
		total_cpus += mi.ncpus;
		total_malformed += mi.malformed;
		/* Drop the MADT region for the next round. */
		free(fake[nfake - 1].buf);
		nfake--;
		free(cpus);
		free(body.b);
	}
	printf("    # fuzz_madt: %u CPUs reported, %u malformed tables\n", total_cpus, total_malformed);
	HT_CHECK(total_cpus > 0 && total_malformed > 0, "fuzz never reached both paths");
}

HT_MAIN("acpi")
