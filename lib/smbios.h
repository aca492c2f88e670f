/* SMBIOS (DMTF DSP0134): the entry point a BIOS boot leaves in the
 * 0xF0000-0xFFFFF segment and the BIOS Information structure (type 0) its
 * table holds: who the firmware is, for the checks that may only act on
 * firmware they know. */
#ifndef LIB_SMBIOS_H
#define LIB_SMBIOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SMBIOS_ENOTFOUND (-1) /* no entry point with a good checksum */
#define SMBIOS_EINVAL (-2)    /* an entry point, but its table is unreadable or has no type 0 */

/* Reads physical memory: a pointer valid for len bytes, or NULL. */
typedef const void *(*smbios_phys_fn)(uint64_t phys, size_t len);

#define SMBIOS_STR_MAX 64

struct smbios_bios {
	uint64_t entry_phys; /* where the entry point was found */
	bool v3;             /* the 64-bit "_SM3_" entry point (else "_SM_") */
	uint8_t major, minor;
	/* Type 0's Vendor and BIOS Version strings, cut to SMBIOS_STR_MAX - 1
	 * characters; "" when the structure names none. */
	char vendor[SMBIOS_STR_MAX];
	char version[SMBIOS_STR_MAX];
};

/* Finds the entry point on 16-byte boundaries of 0xF0000-0xFFFFF
 * (DSP0134 5.2.1 and 5.2.2: "_SM3_" is taken before "_SM_" when both are
 * there) and reads the first type 0 structure of its table. 0 on
 * success, else SMBIOS_E*. A UEFI boot publishes the entry point in the
 * EFI configuration table instead: there this finds none. */
int smbios_bios_info(smbios_phys_fn phys, struct smbios_bios *out);

#endif
