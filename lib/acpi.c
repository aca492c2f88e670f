/* ACPI table discovery (RSDP, RSDT/XSDT) and the MADT and FADT facts the
 * kernel needs. Pure parsing: every read is bounded by a table's Length. */
#include "lib/acpi.h"

#include "lib/unaligned.h"

/* RSDP (ACPI 6.5 §5.2.5.3): "RSD PTR ", checksum over the first 20 bytes,
 * Revision at 15, RsdtAddress at 16; from revision 2 on, Length at 20,
 * XsdtAddress at 24 and an extended checksum over Length bytes. */
#define RSDP_V1_LEN 20
#define RSDP_V2_LEN 36
#define RSDP_OFF_REVISION 15
#define RSDP_OFF_RSDT 16
#define RSDP_OFF_LENGTH 20
#define RSDP_OFF_XSDT 24
/* An RSDP claiming more than this is not one (today's is 36 bytes). */
#define RSDP_MAX_LEN 1024

/* System description table header (ACPI 6.5 §5.2.6): Signature 0, Length 4,
 * Revision 8, Checksum 9 (whole table sums to 0), 36 bytes in all. The RSDT
 * (§5.2.7) and XSDT (§5.2.8) follow it with 4- and 8-byte table addresses. */
#define SDT_HDR_LEN 36
#define SDT_OFF_LENGTH 4
#define SDT_OFF_REVISION 8

/* FADT (ACPI 6.5 §5.2.9, "FADT Format"): byte offsets of the fields used. */
#define FADT_OFF_DSDT 40
#define FADT_OFF_PM1A_CNT 64
#define FADT_OFF_PM1B_CNT 68
#define FADT_OFF_PM_TMR 76
#define FADT_OFF_PM_TMR_LEN 91
#define FADT_OFF_CENTURY 108
#define FADT_OFF_BOOT_ARCH 109
#define FADT_OFF_FLAGS 112
#define FADT_V1_LEN 116        /* ACPI 1.0 ends after Flags */
#define FADT_OFF_RESET_REG 116 /* Generic Address Structure */
#define FADT_OFF_RESET_VALUE 128
#define FADT_OFF_MINOR 131 /* [3:0] minor version, [7:4] errata */
#define FADT_V2_LEN 132    /* ends after the minor version */
#define FADT_OFF_X_DSDT 140
#define FADT_OFF_X_PM1A_CNT 172
#define FADT_OFF_X_PM1B_CNT 184
#define FADT_OFF_X_PM_TMR 208
/* FADT Flags (ACPI 6.5 §5.2.9, "Fixed Feature Flags"). */
#define FADT_FLAG_TMR_VAL_EXT (1u << 8)
#define FADT_FLAG_RESET_REG_SUP (1u << 10)
#define FADT_FLAG_HW_REDUCED (1u << 20)

/* Generic Address Structure (ACPI 6.5 §5.2.3.2): space id 0, bit width 1,
 * bit offset 2, access size 3, 64-bit address 4; 12 bytes. */
#define GAS_LEN 12
#define GAS_SPACE_MEMORY 0
#define GAS_SPACE_IO 1
#define IO_PORT_MAX 0xFFFFu

/* MADT (ACPI 6.5 §5.2.12): Local Interrupt Controller Address at 36, Flags
 * at 40 (bit 0 PCAT_COMPAT), then {type, length} structures from 44. */
#define MADT_OFF_LAPIC 36
#define MADT_OFF_FLAGS 40
#define MADT_ENTRIES 44
#define MADT_FLAG_PCAT_COMPAT 1u
enum {
	MADT_LAPIC = 0,          /* §5.2.12.2: uid 2, apic id 3, flags 4; 8 bytes */
	MADT_IOAPIC = 1,         /* §5.2.12.3: id 2, address 4, GSI base 8; 12 */
	MADT_LAPIC_NMI = 4,      /* §5.2.12.7: uid 2 (0xFF all), flags 3, LINT 5; 6 */
	MADT_LAPIC_OVERRIDE = 5, /* §5.2.12.8: 64-bit address 4; 12 */
	MADT_X2APIC = 9,         /* §5.2.12.12: x2apic id 4, flags 8, uid 12; 16 */
	MADT_X2APIC_NMI = 0xA,   /* §5.2.12.13: flags 2, uid 4 (~0 all), LINT 8; 12 */
};
#define MADT_LAPIC_LEN 8
#define MADT_IOAPIC_LEN 12
#define MADT_LAPIC_NMI_LEN 6
#define MADT_OVERRIDE_LEN 12
#define MADT_X2APIC_LEN 16
#define MADT_X2APIC_NMI_LEN 12
/* Local APIC Flags (§5.2.12.2, "Local APIC Flags"): Online Capable is new in
 * ACPI 6.3 and reserved (zero) before, and only meaningful while Enabled
 * is clear. */
#define MADT_CPU_ENABLED 1u
#define MADT_CPU_ONLINE_CAPABLE 2u
/* APIC ID 0xFF in a type-0 entry and 0xFFFFFFFF in a type-9 entry are the
 * broadcast IDs, never a processor's (Linux skips both too). */
#define MADT_LAPIC_ID_INVALID 0xFFu
#define MADT_X2APIC_ID_INVALID 0xFFFFFFFFu

/* AML encodings used by the \_S5 shortcut (ACPI 6.5 §20.2, AML grammar:
 * data objects, name objects, namespace modifiers, DefPackage). */
#define AML_ZERO_OP 0x00
#define AML_ONE_OP 0x01
#define AML_NAME_OP 0x08 /* DefName := NameOp NameString DataRefObject */
#define AML_BYTE_PREFIX 0x0A
#define AML_WORD_PREFIX 0x0B
#define AML_DWORD_PREFIX 0x0C
#define AML_PACKAGE_OP 0x12 /* DefPackage := PackageOp PkgLength NumElements List */
#define AML_ROOT_CHAR 0x5C  /* '\' */
#define SLP_TYP_MAX 7       /* SLP_TYPx is 3 bits (§4.8.3.2.1) */

static struct {
	bool ready;
	bool xsdt;          /* root entries are 8 bytes wide */
	uint64_t root_phys; /* verified RSDT or XSDT */
	unsigned rsdp_seen; /* signed, checksummed RSDPs the last scan met */
} acpi_state;

/* How physical memory is read: the kernel installs its identity map
 * (boot/main.c), the host tests their synthetic memory. */
static acpi_phys_fn acpi_phys;

void acpi_set_phys_accessor(acpi_phys_fn fn)
{
	acpi_phys = fn;
	acpi_state.ready = false;
}

static const uint8_t *acpi_map(uint64_t phys, size_t len)
{
	if (!acpi_phys || phys == 0)
		return NULL;
	return acpi_phys(phys, len);
}

/* Every ACPI checksum is "all bytes sum to zero modulo 256". */
static uint8_t acpi_sum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s = (uint8_t)(s + *p++);
	return s;
}

static bool acpi_sig_is(const uint8_t *p, const char *sig, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (uint8_t)sig[i])
			return false;
	return true;
}

/* The table at phys, mapped for its whole Length and checksum-verified;
 * sig (4 chars) is checked first when given. NULL if anything is off. */
static const uint8_t *acpi_table_at(uint64_t phys, const char *sig)
{
	const uint8_t *h = acpi_map(phys, SDT_HDR_LEN);
	const uint8_t *t;
	uint32_t len;

	if (!h || (sig && !acpi_sig_is(h, sig, 4)))
		return NULL;
	len = get_le32(h + SDT_OFF_LENGTH);
	if (len < SDT_HDR_LEN || len > ACPI_TABLE_MAX_LEN)
		return NULL;
	t = acpi_map(phys, len);
	if (!t || acpi_sum(t, len) != 0)
		return NULL;
	return t;
}

static uint32_t acpi_table_len(const uint8_t *t)
{
	return get_le32(t + SDT_OFF_LENGTH);
}

/* Picks the root table: an OS that understands the XSDT uses it when
 * present (ACPI 6.5 §5.2.5.3, §5.2.8); the RSDT serves ACPI 1.0 and broken XSDTs. */
static int acpi_init_root(uint64_t rsdt, uint64_t xsdt)
{
	if (xsdt && acpi_table_at(xsdt, "XSDT")) {
		acpi_state.root_phys = xsdt;
		acpi_state.xsdt = true;
	} else if (rsdt && acpi_table_at(rsdt, "RSDT")) {
		acpi_state.root_phys = rsdt;
		acpi_state.xsdt = false;
	} else {
		return ACPI_EINVAL;
	}
	acpi_state.ready = true;
	return 0;
}

/* The XSDT address of a revision >= 2 RSDP of which `avail` bytes are
 * readable at p, or 0 when the extended checksum does not cover it: a copy
 * shorter than the RSDP's own Length cannot be verified. */
static uint64_t acpi_rsdp_xsdt(const uint8_t *p, size_t avail)
{
	uint32_t xlen;

	if (p[RSDP_OFF_REVISION] < 2 || avail < RSDP_V2_LEN)
		return 0;
	xlen = get_le32(p + RSDP_OFF_LENGTH);
	if (xlen < RSDP_V2_LEN || xlen > avail || acpi_sum(p, xlen) != 0)
		return 0;
	return get_le64(p + RSDP_OFF_XSDT);
}

static bool acpi_rsdp_v1_ok(const uint8_t *p)
{
	return acpi_sig_is(p, "RSD PTR ", 8) && acpi_sum(p, RSDP_V1_LEN) == 0;
}

int acpi_init(const uint8_t *rsdp, size_t rsdp_len)
{
	acpi_state.ready = false;
	if (!rsdp || rsdp_len < RSDP_V1_LEN)
		return ACPI_ENOTFOUND;
	if (!acpi_rsdp_v1_ok(rsdp))
		return ACPI_EINVAL;
	return acpi_init_root(get_le32(rsdp + RSDP_OFF_RSDT), acpi_rsdp_xsdt(rsdp, rsdp_len));
}

/* Tries an RSDP candidate in place. A revision >= 2 RSDP whose extended
 * checksum fails is rejected outright (ACPI 6.5 §5.2.5.1 asks for both). */
static bool acpi_try_rsdp_at(uint64_t phys)
{
	const uint8_t *p = acpi_map(phys, RSDP_V1_LEN);
	uint64_t xsdt = 0;

	if (!p || !acpi_rsdp_v1_ok(p))
		return false;
	if (p[RSDP_OFF_REVISION] >= 2) {
		const uint8_t *q = acpi_map(phys, RSDP_V2_LEN);
		uint32_t xlen;

		if (!q)
			return false;
		xlen = get_le32(q + RSDP_OFF_LENGTH);
		if (xlen < RSDP_V2_LEN || xlen > RSDP_MAX_LEN)
			return false;
		q = acpi_map(phys, xlen);
		if (!q || acpi_sum(q, xlen) != 0)
			return false;
		xsdt = acpi_rsdp_xsdt(q, xlen);
	}
	return acpi_init_root(get_le32(p + RSDP_OFF_RSDT), xsdt) == 0;
}

static int acpi_scan_range(uint64_t lo, uint64_t hi)
{
	/* A stale or half-written RSDP may precede the real one, so a
	 * candidate whose tables do not check out is passed over. */
	for (uint64_t a = lo; a + RSDP_V1_LEN <= hi; a += 16) {
		const uint8_t *p = acpi_map(a, RSDP_V1_LEN);

		if (p && acpi_rsdp_v1_ok(p))
			acpi_state.rsdp_seen++;
		if (acpi_try_rsdp_at(a))
			return 0;
	}
	return ACPI_ENOTFOUND;
}

int acpi_init_scan_bios(void)
{
	/* ACPI 6.5 §5.2.5.1: the BIOS data area word at 0x40E holds the EBDA
	 * segment; search its first KiB, then the BIOS ROM 0xE0000-0xFFFFF. */
	const uint8_t *bda = acpi_map(0x40E, 2);

	acpi_state.ready = false;
	acpi_state.rsdp_seen = 0;
	if (bda) {
		uint64_t ebda = (uint64_t)get_le16(bda) << 4;

		/* The EBDA lives in conventional memory below 640 KiB; a value
		 * outside that is not an EBDA pointer. */
		if (ebda >= 0x500 && ebda < 0xA0000 && acpi_scan_range(ebda, ebda + 1024) == 0)
			return 0;
	}
	return acpi_scan_range(0xE0000, 0x100000);
}

unsigned acpi_scan_rsdp_seen(void)
{
	return acpi_state.rsdp_seen;
}

bool acpi_uses_xsdt(void)
{
	return acpi_state.ready && acpi_state.xsdt;
}

/* Physical address of the DSDT named by a FADT of length len: X_DSDT when
 * the table is long enough and it is non-zero (ACPI 6.5 §5.2.9). */
static uint64_t acpi_fadt_dsdt(const uint8_t *f, uint32_t len)
{
	uint64_t x = len >= FADT_OFF_X_DSDT + 8 ? get_le64(f + FADT_OFF_X_DSDT) : 0;

	if (x)
		return x;
	return len >= FADT_OFF_DSDT + 4 ? get_le32(f + FADT_OFF_DSDT) : 0;
}

const void *acpi_find_table(const char sig[4], unsigned instance)
{
	const uint8_t *root;
	uint32_t n, width;
	unsigned seen = 0;

	if (!acpi_state.ready)
		return NULL;
	/* The DSDT is not listed in the root table; the FADT points at it. */
	if (acpi_sig_is((const uint8_t *)"DSDT", sig, 4)) {
		const uint8_t *f = instance == 0 ? acpi_find_table("FACP", 0) : NULL;

		return f ? acpi_table_at(acpi_fadt_dsdt(f, acpi_table_len(f)), "DSDT") : NULL;
	}
	root = acpi_table_at(acpi_state.root_phys, NULL);
	if (!root)
		return NULL;
	width = acpi_state.xsdt ? 8 : 4;
	n = (acpi_table_len(root) - SDT_HDR_LEN) / width;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = root + SDT_HDR_LEN + (size_t)i * width;
		uint64_t phys = width == 8 ? get_le64(e) : get_le32(e);
		const uint8_t *h = acpi_map(phys, SDT_HDR_LEN);

		/* Tables with a bad checksum still count as an instance, so
		 * instance numbers do not shift when one is corrupt. */
		if (!h || !acpi_sig_is(h, sig, 4))
			continue;
		if (seen++ == instance)
			return acpi_table_at(phys, sig);
	}
	return NULL;
}

/* Whether Online Capable means anything. It appeared in ACPI 6.3; the MADT
 * revision cannot tell (6.2 errata B firmware ships MADT revision 45), so
 * go by the FADT's major.minor, as Linux does since v6.3-rc5. */
static bool acpi_online_capable_defined(void)
{
	const uint8_t *f = acpi_find_table("FACP", 0);
	uint8_t major, minor;

	if (!f)
		return false;
	major = f[SDT_OFF_REVISION];
	minor = acpi_table_len(f) >= FADT_V2_LEN ? (f[FADT_OFF_MINOR] & 0xF) : 0;
	return major > 6 || (major == 6 && minor >= 3);
}

/* Decodes a Local APIC (type 0) or Local x2APIC (type 9) entry of length
 * elen. Returns 1 for a processor to report (*c filled), 0 for one to skip
 * (disabled and not online capable, or an invalid ID), -1 for anything
 * else, *short_entry telling a too-short CPU entry apart. */
static int acpi_madt_cpu(const uint8_t *e, uint8_t elen, bool honor_oc, struct acpi_cpu *c, bool *short_entry)
{
	uint32_t flags;
	bool invalid;

	*short_entry = false;
	if (e[0] == MADT_LAPIC) {
		if (elen < MADT_LAPIC_LEN)
			goto too_short;
		c->uid = e[2];
		c->apic_id = e[3];
		flags = get_le32(e + 4);
		c->from_x2apic_entry = false;
		invalid = c->apic_id == MADT_LAPIC_ID_INVALID;
	} else if (e[0] == MADT_X2APIC) {
		if (elen < MADT_X2APIC_LEN)
			goto too_short;
		c->apic_id = get_le32(e + 4);
		flags = get_le32(e + 8);
		c->uid = get_le32(e + 12);
		c->from_x2apic_entry = true;
		invalid = c->apic_id == MADT_X2APIC_ID_INVALID;
	} else {
		return -1;
	}
	c->enabled = flags & MADT_CPU_ENABLED;
	c->online_capable = !c->enabled && honor_oc && (flags & MADT_CPU_ONLINE_CAPABLE);
	return !invalid && (c->enabled || c->online_capable);
too_short:
	*short_entry = true;
	return -1;
}

/* Whether an entry before offset `end` already reported apic_id. Rescanning
 * costs O(n^2) over a table of a few thousand entries at most, and needs no
 * storage beyond what the caller gave us. */
static bool acpi_madt_reported_before(const uint8_t *m, uint32_t end, uint32_t apic_id, bool honor_oc)
{
	for (uint32_t off = MADT_ENTRIES; off < end; off += m[off + 1]) {
		struct acpi_cpu c;
		bool short_entry;

		if (acpi_madt_cpu(m + off, m[off + 1], honor_oc, &c, &short_entry) == 1 &&
		    c.apic_id == apic_id)
			return true;
	}
	return false;
}

/* NMI wiring: keep the entry that applies to all processors if there is
 * one (the usual firmware layout), else the first. LINT# is 0 or 1. */
static void acpi_madt_nmi(struct acpi_madt_info *info, uint8_t lint, bool all, bool *have_all)
{
	if (lint > 1) {
		info->malformed = true;
		return;
	}
	if (!info->has_nmi_lint || (all && !*have_all)) {
		info->nmi_lint = lint;
		info->has_nmi_lint = true;
		*have_all = all;
	}
}

static void acpi_zero(void *p, size_t n)
{
	uint8_t *b = p;

	while (n--)
		*b++ = 0;
}

int acpi_madt_cpus(struct acpi_cpu *cpus, unsigned max, struct acpi_madt_info *info)
{
	struct acpi_madt_info scratch;
	const uint8_t *m;
	uint32_t len, off;
	unsigned stored = 0;
	bool honor_oc, nmi_all = false;

	if (!info)
		info = &scratch;
	acpi_zero(info, sizeof(*info));
	if (!acpi_state.ready)
		return ACPI_ENOTFOUND;
	m = acpi_find_table("APIC", 0);
	if (!m)
		return ACPI_ENOTFOUND;
	len = acpi_table_len(m);
	if (len < MADT_ENTRIES)
		return ACPI_EINVAL;
	info->lapic_phys = get_le32(m + MADT_OFF_LAPIC);
	info->pcat_compat = get_le32(m + MADT_OFF_FLAGS) & MADT_FLAG_PCAT_COMPAT;
	honor_oc = acpi_online_capable_defined();

	for (off = MADT_ENTRIES; len - off >= 2; off += m[off + 1]) {
		const uint8_t *e = m + off;
		uint8_t elen = e[1];
		struct acpi_cpu c;
		bool short_entry;
		int r;

		/* A length below the 2-byte header would stall the walk, and one
		 * past the end would read beyond the table: stop at either. */
		if (elen < 2 || elen > len - off) {
			info->malformed = true;
			break;
		}
		r = acpi_madt_cpu(e, elen, honor_oc, &c, &short_entry);
		if (short_entry) {
			info->malformed = true;
			continue;
		}
		if (r == 0) {
			info->ncpus_skipped++;
			continue;
		}
		if (r == 1) {
			if (acpi_madt_reported_before(m, off, c.apic_id, honor_oc))
				continue;
			if (stored < max)
				cpus[stored++] = c;
			info->ncpus++;
			continue;
		}
		switch (e[0]) {
		case MADT_IOAPIC:
			if (elen < MADT_IOAPIC_LEN)
				info->malformed = true;
			else if (info->nioapic < sizeof(info->ioapic_phys) / sizeof(info->ioapic_phys[0]))
				info->ioapic_phys[info->nioapic++] = get_le32(e + 4);
			break;
		case MADT_LAPIC_NMI:
			if (elen < MADT_LAPIC_NMI_LEN)
				info->malformed = true;
			else
				acpi_madt_nmi(info, e[5], e[2] == 0xFF, &nmi_all);
			break;
		case MADT_X2APIC_NMI:
			if (elen < MADT_X2APIC_NMI_LEN)
				info->malformed = true;
			else
				acpi_madt_nmi(info, e[8], get_le32(e + 4) == 0xFFFFFFFFu, &nmi_all);
			break;
		case MADT_LAPIC_OVERRIDE:
			if (elen < MADT_OVERRIDE_LEN)
				info->malformed = true;
			else
				info->lapic_phys = get_le64(e + 4);
			break;
		default: break; /* interrupt source overrides, GIC, ...: not ours */
		}
	}
	return (int)stored;
}

/* An I/O port from a Generic Address Structure at f + off, if the table
 * reaches that far and the GAS names a non-zero port in I/O space. */
static uint16_t acpi_gas_io_port(const uint8_t *f, uint32_t len, uint32_t off)
{
	uint64_t addr;

	if (len < off + GAS_LEN || f[off] != GAS_SPACE_IO)
		return 0;
	addr = get_le64(f + off + 4);
	return addr <= IO_PORT_MAX ? (uint16_t)addr : 0;
}

/* A 32-bit legacy block address, which names an I/O port (ACPI 6.5 §5.2.9). */
static uint16_t acpi_legacy_port(const uint8_t *f, uint32_t off)
{
	uint32_t a = get_le32(f + off);

	return a <= IO_PORT_MAX ? (uint16_t)a : 0;
}

/* One AML integer for an \_S5 element at a[*i], below `end`. */
static bool acpi_aml_small_int(const uint8_t *a, uint32_t end, uint32_t *i, uint8_t *val)
{
	uint32_t size;

	switch (a[*i]) {
	case AML_ZERO_OP:
		*val = 0;
		size = 1;
		break;
	case AML_ONE_OP:
		*val = 1;
		size = 1;
		break;
	case AML_BYTE_PREFIX: size = 2; break;
	case AML_WORD_PREFIX: size = 3; break;
	case AML_DWORD_PREFIX: size = 5; break;
	default: return false;
	}
	if (size > end - *i)
		return false;
	if (size > 1) {
		/* Wider encodings are legal AML for a small value; only the low
		 * byte may be non-zero for a 3-bit SLP_TYP. */
		for (uint32_t k = 2; k < size; k++)
			if (a[*i + k])
				return false;
		*val = a[*i + 1];
	}
	*i += size;
	return *val <= SLP_TYP_MAX;
}

/* \_S5 without an AML interpreter: look for NameOp [RootChar] "_S5_"
 * PackageOp PkgLength NumElements and take the first two integers. This is
 * a shortcut with known limits: it only reads the DSDT (not SSDTs); it
 * misses an \_S5 that is a Method, or that is chosen by If/Else (it takes
 * the first one written); it accepts only Zero/One/Byte/Word/DWord
 * integers; and a byte pattern like that inside a Buffer would fool it.
 * Every byte read stays below the table's and the package's length. */
static bool acpi_dsdt_s5(const uint8_t *d, uint32_t len, uint8_t *typa, uint8_t *typb)
{
	for (uint32_t i = SDT_HDR_LEN + 1; i + 4 < len; i++) {
		uint32_t j = i + 4, pkg_start, pkg_len, pkg_end, nfollow;

		if (!acpi_sig_is(d + i, "_S5_", 4))
			continue;
		if (d[i - 1] != AML_NAME_OP &&
		    !(d[i - 1] == AML_ROOT_CHAR && i >= SDT_HDR_LEN + 2 && d[i - 2] == AML_NAME_OP))
			continue;
		if (d[j++] != AML_PACKAGE_OP || j >= len)
			continue;
		/* PkgLength (§20.2, "Package Length Encoding"): bits 7:6 of
		 * the lead byte count the bytes that follow; alone, bits 5:0
		 * are the length, else bits 3:0 are its low nibble and each
		 * further byte adds 8 bits. It counts itself, not PackageOp. */
		pkg_start = j;
		nfollow = d[j] >> 6;
		if (nfollow >= len - j)
			continue;
		pkg_len = nfollow ? (d[j] & 0x0Fu) : (d[j] & 0x3Fu);
		for (uint32_t k = 0; k < nfollow; k++)
			pkg_len |= (uint32_t)d[j + 1 + k] << (4 + 8 * k);
		j += 1 + nfollow;
		if (pkg_len > len - pkg_start || pkg_len < 1 + nfollow + 1)
			continue;
		pkg_end = pkg_start + pkg_len;
		/* NumElements, then SLP_TYPa and SLP_TYPb (§7.4, \_Sx packages). */
		if (d[j++] < 2)
			continue;
		if (j < pkg_end && acpi_aml_small_int(d, pkg_end, &j, typa) && j < pkg_end &&
		    acpi_aml_small_int(d, pkg_end, &j, typb))
			return true;
	}
	return false;
}

int acpi_fadt(struct acpi_fadt_info *out)
{
	const uint8_t *f, *dsdt;
	uint32_t len, flags;
	uint16_t port;

	acpi_zero(out, sizeof(*out));
	if (!acpi_state.ready)
		return ACPI_ENOTFOUND;
	f = acpi_find_table("FACP", 0);
	if (!f)
		return ACPI_ENOTFOUND;
	len = acpi_table_len(f);
	if (len < FADT_V1_LEN)
		return ACPI_EINVAL;
	flags = get_le32(f + FADT_OFF_FLAGS);
	out->hw_reduced = flags & FADT_FLAG_HW_REDUCED;
	out->pm_tmr_32bit = flags & FADT_FLAG_TMR_VAL_EXT;
	out->century = f[FADT_OFF_CENTURY];
	/* IAPC_BOOT_ARCH is reserved in ACPI 1.0 FADTs and some firmware left
	 * junk there; like ACPICA, trust the length, not the revision. */
	if (len > FADT_V2_LEN)
		out->boot_arch = get_le16(f + FADT_OFF_BOOT_ARCH);

	/* Hardware-reduced platforms have no fixed PM registers: the fields
	 * are to be ignored (ACPI 6.5 §4.1). */
	if (!out->hw_reduced) {
		port = acpi_gas_io_port(f, len, FADT_OFF_X_PM1A_CNT);
		out->pm1a_cnt = port ? port : acpi_legacy_port(f, FADT_OFF_PM1A_CNT);
		port = acpi_gas_io_port(f, len, FADT_OFF_X_PM1B_CNT);
		out->pm1b_cnt = port ? port : acpi_legacy_port(f, FADT_OFF_PM1B_CNT);
		port = acpi_gas_io_port(f, len, FADT_OFF_X_PM_TMR);
		/* PM_TMR_LEN is 4 when the timer exists and 0 when it does not. */
		if (!port && f[FADT_OFF_PM_TMR_LEN] == 4)
			port = acpi_legacy_port(f, FADT_OFF_PM_TMR);
		out->pm_tmr_port = port;
	}

	/* RESET_REG and RESET_VALUE arrived with ACPI 2.0; RESET_REG_SUP says
	 * they are valid. Only memory and I/O space are reported (a PCI
	 * configuration-space reset register needs a PCI access path). */
	if (len > FADT_OFF_RESET_VALUE && (flags & FADT_FLAG_RESET_REG_SUP)) {
		uint8_t space = f[FADT_OFF_RESET_REG];
		uint64_t addr = get_le64(f + FADT_OFF_RESET_REG + 4);

		if ((space == GAS_SPACE_MEMORY || space == GAS_SPACE_IO) && addr &&
		    (space == GAS_SPACE_MEMORY || addr <= IO_PORT_MAX)) {
			out->has_reset = true;
			out->reset_space = space;
			out->reset_addr = addr;
			out->reset_value = f[FADT_OFF_RESET_VALUE];
		}
	}

	dsdt = acpi_table_at(acpi_fadt_dsdt(f, len), "DSDT");
	if (dsdt)
		out->has_s5 = acpi_dsdt_s5(dsdt, acpi_table_len(dsdt), &out->slp_typa, &out->slp_typb);
	out->valid = true;
	return 0;
}
