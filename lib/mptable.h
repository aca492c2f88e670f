/* The Intel MultiProcessor Specification 1.4 tables: the floating pointer
 * and the configuration table it points to. The CPU list of a machine
 * without ACPI (Firecracker writes these and no MADT; SeaBIOS under QEMU
 * -no-acpi too). */
#ifndef LIB_MPTABLE_H
#define LIB_MPTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MPTABLE_ENOTFOUND (-1) /* no floating pointer with a good checksum */
#define MPTABLE_EINVAL (-2)    /* a floating pointer, but its table is bad */

/* Reads physical memory: a pointer valid for len bytes, or NULL. */
typedef const void *(*mptable_phys_fn)(uint64_t phys, size_t len);

struct mp_cpu {
	uint32_t apic_id;
	bool enabled; /* CPU flags bit 0 EN: usable (MP spec 4.3.1) */
	bool bsp;     /* CPU flags bit 1 BP */
};

struct mp_info {
	uint64_t fps_phys;      /* where the floating pointer was found */
	uint8_t spec_rev;       /* 1 (spec 1.1) or 4 (spec 1.4) */
	uint8_t default_config; /* feature byte 1: 0 = a configuration table */
	uint32_t lapic_phys;
	unsigned ncpus; /* processor entries, which may exceed max */
	uint32_t ioapic_phys[8];
	unsigned nioapic; /* enabled I/O APIC entries filled (at most 8) */
	bool malformed;   /* an unknown entry type ended the walk early */
};

/* Finds the floating pointer where MP spec 4.1 says it may be (the first
 * KiB of the EBDA, the last KiB of base memory, 0xF0000-0xFFFFF; Linux also
 * looks at 0-1 KiB) and reads the processor and I/O APIC entries. Fills
 * cpus[0..max) in table order and *info; returns min(info->ncpus, max) or
 * MPTABLE_E*. A default configuration (no table) is its two CPUs, APIC
 * IDs 0 and 1 (MP spec 5). */
int mptable_cpus(mptable_phys_fn phys, struct mp_cpu *cpus, unsigned max, struct mp_info *info);

#endif
