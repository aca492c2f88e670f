/* The ACPI MCFG table: where each PCI segment's enhanced configuration
 * space (ECAM, 4 KiB a function) is mapped in physical memory (PCI
 * Firmware Specification 3.0, 4.1.2 "MCFG Table Description"; PCI Express
 * Base Specification, "Enhanced Configuration Access Mechanism"). */
#ifndef LIB_ACPI_MCFG_H
#define LIB_ACPI_MCFG_H

#include <stdint.h>

/* One configuration space base address allocation structure. */
struct acpi_mcfg_entry {
	uint64_t base; /* the address of bus start_bus's function 0:0 */
	uint16_t segment;
	uint8_t start_bus, end_bus;
};

/* The entries of the first MCFG (acpi_init() done), at most max into
 * out[]; the count of usable entries, or ACPI_ENOTFOUND (no table),
 * ACPI_EINVAL (a length that is no header plus whole entries). Entries
 * whose end bus is below their start bus are left out. */
int acpi_mcfg(struct acpi_mcfg_entry *out, unsigned max);

#endif
