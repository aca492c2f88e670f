/* SMBIOS entry point and BIOS Information (DMTF DSP0134 3.x, 5.2 and 7.1). */
#include "lib/smbios.h"

#define SEG_START 0xf0000u
#define SEG_END 0x100000u

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) | (uint32_t)get16(p + 2) << 16;
}

static bool sum_zero(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s = (uint8_t)(s + *p++);
	return s == 0;
}

struct entry {
	uint64_t phys, table;
	uint32_t table_len; /* 2.1: the exact length; 3.0: the maximum */
	bool v3;
	uint8_t major, minor;
};

/* The entry point at phys, if it is one (DSP0134 5.2.1: "_SM_", length at
 * 05h, version at 06h/07h, table length at 16h, address at 18h; 5.2.2:
 * "_SM3_", length at 06h, version at 07h/08h, maximum size at 0Ch,
 * address at 10h). */
static bool entry_at(smbios_phys_fn phys, uint64_t at, struct entry *e)
{
	const uint8_t *p = phys(at, 0x18);

	if (!p)
		return false;
	if (p[0] == '_' && p[1] == 'S' && p[2] == 'M' && p[3] == '3' && p[4] == '_') {
		uint8_t len = p[6];
		if (len < 0x18 || !(p = phys(at, len)) || !sum_zero(p, len))
			return false;
		*e = (struct entry){ .phys = at,
				     .table = get32(p + 0x10) | (uint64_t)get32(p + 0x14) << 32,
				     .table_len = get32(p + 0x0c),
				     .v3 = true,
				     .major = p[7],
				     .minor = p[8] };
		return true;
	}
	if (p[0] == '_' && p[1] == 'S' && p[2] == 'M' && p[3] == '_') {
		/* 2.1 says 1Fh; some 2.1 BIOSes wrote 1Eh (Linux dmi_scan.c). */
		uint8_t len = p[5];
		if (len < 0x1e || !(p = phys(at, len)) || !sum_zero(p, len))
			return false;
		*e = (struct entry){ .phys = at,
				     .table = get32(p + 0x18),
				     .table_len = get16(p + 0x16),
				     .major = p[6],
				     .minor = p[7] };
		return true;
	}
	return false;
}

/* String n (1-based) of the structure whose strings start at s, within
 * [s, end): copied into out, "" for 0 or a string past the set's end. */
static void string_n(const uint8_t *s, const uint8_t *end, unsigned n, char out[SMBIOS_STR_MAX])
{
	out[0] = 0;
	for (unsigned i = 1; n && s < end && *s; i++) {
		const uint8_t *z = s;
		while (z < end && *z)
			z++;
		if (z == end)
			return;
		if (i == n) {
			size_t k = 0;
			for (; s < z && k < SMBIOS_STR_MAX - 1; s++)
				out[k++] = (char)*s;
			out[k] = 0;
			return;
		}
		s = z + 1;
	}
}

int smbios_bios_info(smbios_phys_fn phys, struct smbios_bios *out)
{
	struct entry e = { 0 }, e2;
	bool found = false;

	for (uint64_t at = SEG_START; at < SEG_END; at += 16) {
		if (!entry_at(phys, at, &e2))
			continue;
		if (!found || (e2.v3 && !e.v3))
			e = e2;
		found = true;
		if (e.v3)
			break;
	}
	if (!found)
		return SMBIOS_ENOTFOUND;
	*out = (struct smbios_bios){ .entry_phys = e.phys, .v3 = e.v3, .major = e.major, .minor = e.minor };
	if (e.table_len < 4)
		return SMBIOS_EINVAL;
	const uint8_t *t = phys(e.table, e.table_len), *end = t + e.table_len;
	if (!t)
		return SMBIOS_EINVAL;
	/* Structures (DSP0134 6.1.2): type, length of the formatted area
	 * (at least 4), handle; then strings, each NUL-terminated, the set
	 * ended by one more NUL (two NULs when there are none). */
	for (const uint8_t *p = t; end - p >= 4;) {
		uint8_t type = p[0], len = p[1];
		if (len < 4 || len > end - p)
			return SMBIOS_EINVAL;
		const uint8_t *s = p + len, *z = s;
		while (end - z >= 2 && (z[0] || z[1]))
			z++;
		if (end - z < 2)
			return SMBIOS_EINVAL;
		if (type == 0) {
			/* BIOS Information (7.1): Vendor at 04h, BIOS Version at 05h. */
			string_n(s, z + 1, len > 4 ? p[4] : 0, out->vendor);
			string_n(s, z + 1, len > 5 ? p[5] : 0, out->version);
			return 0;
		}
		if (type == 127)
			break;
		p = z + 2;
	}
	return SMBIOS_EINVAL;
}
