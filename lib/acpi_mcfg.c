/* The ACPI MCFG table (PCI Firmware Specification 3.0, 4.1.2): a standard
 * 36-byte header, 8 reserved bytes, then 16-byte allocation structures:
 * base address (8 bytes), segment group (2), start and end bus (1 each),
 * 4 reserved. */
#include "lib/acpi_mcfg.h"

#include "lib/acpi.h"

#define MCFG_HDR_LEN 44
#define MCFG_ENTRY_LEN 16

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

int acpi_mcfg(struct acpi_mcfg_entry *out, unsigned max)
{
	const uint8_t *t = acpi_find_table("MCFG", 0);
	uint32_t len;
	unsigned n = 0;

	if (!t)
		return ACPI_ENOTFOUND;
	len = (uint32_t)le(t + 4, 4);
	if (len < MCFG_HDR_LEN || (len - MCFG_HDR_LEN) % MCFG_ENTRY_LEN)
		return ACPI_EINVAL;
	for (uint32_t off = MCFG_HDR_LEN; off < len; off += MCFG_ENTRY_LEN) {
		const uint8_t *e = t + off;
		struct acpi_mcfg_entry m = {
			.base = le(e, 8),
			.segment = (uint16_t)le(e + 8, 2),
			.start_bus = e[10],
			.end_bus = e[11],
		};
		if (m.end_bus < m.start_bus || !m.base)
			continue;
		if (n < max)
			out[n] = m;
		n++;
	}
	return (int)n;
}
