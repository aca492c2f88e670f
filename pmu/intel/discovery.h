/* Intel's uncore discovery tables (Sapphire Rapids and later servers): a
 * PCI Express function per package carries a designated vendor-specific
 * extended capability (DVSEC) whose BAR holds a table in memory: a global
 * discovery state, then one entry per uncore unit saying its type, box ID,
 * counters, and where its registers are (an MSR, a physical address, or a
 * PCI function's configuration space). Linux reads them in
 * arch/x86/events/intel/uncore_discovery.c (its field layout in
 * uncore_discovery.h); the checks place the CHAs and memory controllers
 * from them (pmu/intel/uncore.c, pmu/intel/imc.c). */
#ifndef PMU_INTEL_DISCOVERY_H
#define PMU_INTEL_DISCOVERY_H

#include <stdbool.h>
#include <stdint.h>

#include "pmu/pmu.h"

/* PCI Express Base Specification, "Designated Vendor-Specific Extended
 * Capability": extended capability ID 0023H; its DVSEC ID (header 2
 * [15:0]) 1 marks Intel's PMON discovery (Linux uncore_discovery.h
 * UNCORE_EXT_CAP_ID_DISCOVERY, UNCORE_DISCOVERY_DVSEC_ID_PMON); the dword
 * at DVSEC + 0CH holds the BAR indicator in [2:0] (BAR at 10H + 4 x BIR),
 * every other bit 0. The generic table device is 8086:09A7. */
#define PCI_EXT_CAP_ID_DVSEC 0x23
#define PMU_DISC_DVSEC_ID_PMON 1
#define PMU_DISC_DEVICE_ID 0x09a7

/* How a unit's registers are reached (the entries' access type, [63:62]). */
enum pmu_disc_access {
	PMU_DISC_MSR = 0,
	PMU_DISC_MMIO = 1,
	PMU_DISC_PCI = 2,
};

/* A unit as its entry says: counter control i of an MSR unit at ctl +
 * ctl_off + i and counter i at ctl + ctr_off + i; of an MMIO unit at the
 * physical addresses ctl + ctl_off + 4 i and ctl + ctr_off + 8 i; of a PCI
 * unit, ctl holds bus [27:20], device/function [19:12] and the box
 * control's offset [11:0] (Linux UNCORE_DISCOVERY_PCI_*), its counter
 * controls at that offset + ctl_off + 8 i. */
struct pmu_disc_unit {
	uint16_t type, id;
	uint8_t nctrs, ctl_off, width, ctr_off;
	uint8_t access; /* enum pmu_disc_access */
	uint64_t ctl;   /* the unit's box control */
};

#define PMU_DISC_MAX_UNITS 512
#define PMU_DISC_MAX_TABLES 8

/* One table as found and parsed. */
struct pmu_disc_table {
	uint8_t bus, dev, fn; /* the function with the DVSEC */
	uint16_t device;      /* its device ID */
	uint16_t dvsec;       /* the capability's offset */
	uint8_t bir;
	uint64_t base;       /* the table's physical address (the BAR) */
	uint64_t global[3];  /* the global discovery state as read */
	uint8_t stride;      /* entry stride in 8-byte units */
	uint16_t max_units;  /* entries after the global state */
	uint64_t global_ctl; /* the global control's address */
	uint8_t global_access;
	/* The units (in table order), and the entries left out: empty ones
	 * (no unit; Linux skips them too) and malformed ones, the first of
	 * which is described. */
	unsigned nunits, empty, malformed, dropped; /* dropped: past PMU_DISC_MAX_UNITS */
	struct pmu_disc_unit unit[PMU_DISC_MAX_UNITS];
	char first_malformed[PMU_REASON_LEN];
	char why[PMU_REASON_LEN]; /* non-empty: the table is unusable, why */
};

/* Every table the platform has, in bus order. */
struct pmu_discovery {
	bool ecam;          /* extended configuration space is reachable */
	unsigned functions; /* PCI functions seen */
	unsigned dvsecs;    /* DVSECs of other IDs passed over */
	unsigned ntables;   /* found (at most PMU_DISC_MAX_TABLES kept) */
	struct pmu_disc_table table[PMU_DISC_MAX_TABLES];
	char why[PMU_REASON_LEN]; /* ntables 0: why none */
};

/* Scan every bus once (through pmu_hw_pcie_read32 and pmu_hw_mmio_read64)
 * and keep the result; later calls return it. */
const struct pmu_discovery *pmu_discovery(void);
/* Scan again on the next call (host tests change the platform). */
void pmu_discovery_forget(void);

/* Parse the table whose DVSEC is at `dvsec` of bus:dev.fn into *t. PMU_OK,
 * or PMU_E_UNSUPPORTED with t->why. */
int pmu_discovery_parse(struct pmu_disc_table *t, uint8_t bus, uint8_t dev, uint8_t fn, uint16_t dvsec);

/* The table of package `package` (an ID pmu_packages() lists): tables are
 * matched to packages in order, the k-th table found in bus order to the
 * k-th package (Linux's order when the firmware gives no NUMA node for the
 * bus: uncore_discovery.c, get_device_die_id). NULL with why filled. */
const struct pmu_disc_table *pmu_discovery_of_package(uint32_t package, char *why, size_t whylen);

/* The units of `type` in table t, into out[] (at most max), in box ID
 * order; how many the table has. */
unsigned pmu_discovery_units(const struct pmu_disc_table *t, uint16_t type, const struct pmu_disc_unit **out,
			     unsigned max);

/* "MSR", "MMIO", "PCI", "reserved". */
const char *pmu_disc_access_name(unsigned access);

#endif
