/* ACPI table discovery and the few facts the kernel needs from them: CPUs
 * and interrupt controllers (MADT), power-off, reset and PM timer (FADT). */
#ifndef LIB_ACPI_H
#define LIB_ACPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Results: 0 or a count on success, one of these on failure. */
#define ACPI_ENOTFOUND (-1) /* no RSDP, no such table, or acpi_init() not done */
#define ACPI_EINVAL (-2)    /* found but malformed (signature, checksum, length) */

/* Tables longer than this are taken as garbage rather than checksummed;
 * the largest real DSDTs are around 1 MiB. */
#define ACPI_TABLE_MAX_LEN (16u << 20)

/* Reads physical memory: a pointer valid for len bytes, or NULL. */
typedef const void *(*acpi_phys_fn)(uint64_t phys, size_t len);

/* Must be set before acpi_init*() (the kernel installs its identity map in
 * boot/main.c); NULL makes every table unreadable. Call acpi_init*() again
 * after changing it. */
void acpi_set_phys_accessor(acpi_phys_fn fn);

/* From the RSDP copy in struct boot_info (rsdp, rsdp_len). Checks the RSDP
 * checksum (and the extended one for revision >= 2) and the root table. */
int acpi_init(const uint8_t *rsdp_copy, size_t rsdp_len);

/* Fallback for BIOS boots without an RSDP tag: the first KiB of the EBDA
 * (segment at phys 0x40E), then 0xE0000-0xFFFFF, on 16-byte boundaries
 * (ACPI 6.5 §5.2.5.1). */
int acpi_init_scan_bios(void);

/* How many RSDPs (signature and checksum good) the last
 * acpi_init_scan_bios() met, usable tables or not: 0 says the firmware
 * has no ACPI at all, rather than broken ACPI. */
unsigned acpi_scan_rsdp_seen(void);

/* True once acpi_init*() succeeded and the XSDT (not the RSDT) is in use. */
bool acpi_uses_xsdt(void);

/* The instance-th table (0 = first) with signature sig, checksum verified;
 * NULL if absent or bad. "DSDT" is found through the FADT. The pointer is
 * the accessor's: valid for the table's Length bytes. */
const void *acpi_find_table(const char sig[4], unsigned instance);

struct acpi_cpu {
	uint32_t apic_id;
	uint32_t uid;        /* ACPI processor UID */
	bool enabled;        /* usable now: the only ones to start */
	bool online_capable; /* disabled, but hardware could enable it later */
	bool from_x2apic_entry;
};

struct acpi_madt_info {
	uint64_t lapic_phys;    /* after any Local APIC Address Override */
	bool pcat_compat;       /* dual 8259s present: mask them */
	unsigned ncpus;         /* CPUs reported, which may exceed what fit in cpus[] */
	unsigned ncpus_skipped; /* entries not reported: disabled and not online
				 * capable, or an invalid APIC ID */
	uint32_t ioapic_phys[8];
	unsigned nioapic;  /* entries filled in ioapic_phys (at most 8) */
	bool has_nmi_lint; /* a Local (x2)APIC NMI entry names the LINT pin */
	uint8_t nmi_lint;  /* 0 or 1 */
	bool malformed;    /* an entry was short or ran past the table: parsing
			    * stopped there or skipped it */
};

/* Fills cpus[0..max) in table order and *info; returns how many were
 * written (min(info->ncpus, max)) or ACPI_E*. A processor listed by both a
 * Local APIC and a Local x2APIC entry is reported once (the first). */
int acpi_madt_cpus(struct acpi_cpu *cpus, unsigned max, struct acpi_madt_info *info);

struct acpi_fadt_info {
	bool valid;
	uint16_t pm1a_cnt, pm1b_cnt; /* I/O ports (0 = none) */
	bool has_s5;                 /* from the DSDT's \_S5 package */
	uint8_t slp_typa, slp_typb;
	bool has_reset;
	uint8_t reset_space; /* 0 memory, 1 I/O */
	uint64_t reset_addr;
	uint8_t reset_value;
	uint32_t pm_tmr_port; /* 0 = none */
	bool pm_tmr_32bit;    /* else 24-bit */
	bool hw_reduced;
	uint16_t century;   /* RTC CMOS index of the century, 0 = none */
	uint16_t boot_arch; /* IA-PC boot architecture flags */
};

/* IA-PC boot architecture flags (ACPI 6.5 §5.2.9.3). */
#define ACPI_BOOT_ARCH_LEGACY_DEVICES (1u << 0)
#define ACPI_BOOT_ARCH_8042 (1u << 1)
#define ACPI_BOOT_ARCH_VGA_NOT_PRESENT (1u << 2)
#define ACPI_BOOT_ARCH_MSI_NOT_SUPPORTED (1u << 3)
#define ACPI_BOOT_ARCH_CMOS_RTC_NOT_PRESENT (1u << 5)

/* Power-off is: write (SLP_TYPx << 10) | SLP_EN (bit 13) to PM1x_CNT
 * (ACPI 6.5 §4.8.3.2.1, PM1 Control Registers). */
#define ACPI_PM1_CNT_SLP_TYP_SHIFT 10
#define ACPI_PM1_CNT_SLP_EN (1u << 13)

/* Returns 0 with out->valid set, or ACPI_E* (out is then all zero). A
 * missing or unparsable \_S5 is not an error: has_s5 stays false. */
int acpi_fadt(struct acpi_fadt_info *out);

#endif
