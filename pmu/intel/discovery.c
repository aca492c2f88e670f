/* Intel's uncore discovery tables: finding the DVSEC on every function of
 * every bus, reading the table its BAR points at, and keeping the units
 * (the layouts are Linux uncore_discovery.h's struct
 * uncore_global_discovery and struct uncore_unit_discovery). */
#include "pmu/intel/discovery.h"

#include "lib/bits.h"
#include "lib/printf.h"
#include "pmu/pmu_hw.h"

#define PCI_VENDOR_INTEL 0x8086
#define PCI_COMMAND 0x04 /* [1]: memory space decoding */
#define PCI_COMMAND_MEMORY BIT(1)
#define PCI_HEADER_DWORD 0x0c /* header type at [23:16], [23] multi-function */
#define PCI_BAR0 0x10
#define PCI_EXT_CAP_START 0x100
#define PCI_EXT_CAP_MAX 512 /* extended capabilities a list may have: 4 KiB / 8 */

/* The DVSEC's dwords (Linux UNCORE_DISCOVERY_DVSEC_OFFSET 8,
 * UNCORE_DISCOVERY_DVSEC2_OFFSET 0CH, BIR_MASK 7). */
#define DVSEC_HDR2 0x08
#define DVSEC_BIR 0x0c
#define DVSEC_BIR_MASK 7u

static struct pmu_discovery disc;
static bool scanned;

const char *pmu_disc_access_name(unsigned access)
{
	switch (access) {
	case PMU_DISC_MSR: return "MSR";
	case PMU_DISC_MMIO: return "MMIO";
	case PMU_DISC_PCI: return "PCI";
	}
	return "reserved";
}

static uint32_t cfg(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off)
{
	uint32_t v;

	return pmu_hw_pcie_read32(bus, dev, fn, off, &v) ? ~0u : v;
}

/* The memory BAR the DVSEC names: its address, or 0 with why. A BAR is
 * a memory BAR of 32 or 64 bits (PCI Local Bus Specification 3.0,
 * 6.2.5.1: [0] 0 memory, [2:1] 0 32-bit or 2 64-bit), not prefetchable, as
 * Linux's parse_discovery_table accepts. */
static uint64_t table_bar(struct pmu_disc_table *t)
{
	uint16_t off = (uint16_t)(PCI_BAR0 + 4 * t->bir);
	uint32_t lo = cfg(t->bus, t->dev, t->fn, off);
	uint64_t a = lo & ~0xfull;

	if (t->bir > 5 || (t->bir == 5 && (lo & 6) == 4) || (lo & 0xb)) {
		ksnprintf(t->why, sizeof(t->why),
			  "%02x:%02x.%x DVSEC at %#x names BAR%u (config %#x) = %#x: no 32/64-bit memory BAR",
			  t->bus, t->dev, t->fn, t->dvsec, t->bir, off, lo);
		return 0;
	}
	if ((lo & 6) == 4)
		a |= (uint64_t)cfg(t->bus, t->dev, t->fn, (uint16_t)(off + 4)) << 32;
	if (!a)
		ksnprintf(t->why, sizeof(t->why),
			  "%02x:%02x.%x BAR%u (config %#x) is 0: not assigned by the firmware", t->bus,
			  t->dev, t->fn, t->bir, off);
	return a;
}

static int rd64(uint64_t a, uint64_t *v)
{
	return pmu_hw_mmio_read64(a, v);
}

/* Linux uncore_discovery_invalid_unit(): an entry with a zero or all-ones
 * first word or control address, or an all-ones third word, is no unit. */
static bool empty_entry(const uint64_t w[3])
{
	return !w[0] || !w[1] || w[0] == ~0ull || w[1] == ~0ull || w[2] == ~0ull;
}

static void malformed(struct pmu_disc_table *t, unsigned i, const uint64_t w[3], const char *what)
{
	if (!t->malformed++)
		ksnprintf(t->first_malformed, sizeof(t->first_malformed),
			  "entry %u (%#llx %#llx %#llx, at %#llx): %s", i, (unsigned long long)w[0],
			  (unsigned long long)w[1], (unsigned long long)w[2],
			  (unsigned long long)(t->base + (uint64_t)(i + 1) * t->stride * 8), what);
}

/* Entry i's fields, or why it is no unit pmutest can drive. */
static void parse_unit(struct pmu_disc_table *t, unsigned i, const uint64_t w[3])
{
	struct pmu_disc_unit u = {
		.nctrs = (uint8_t)BITS(w[0], 7, 0),
		.ctl_off = (uint8_t)BITS(w[0], 15, 8),
		.width = (uint8_t)BITS(w[0], 23, 16),
		.ctr_off = (uint8_t)BITS(w[0], 31, 24),
		.access = (uint8_t)BITS(w[0], 63, 62),
		.ctl = w[1],
		.type = (uint16_t)BITS(w[2], 15, 0),
		.id = (uint16_t)BITS(w[2], 31, 16),
	};
	const char *bad = NULL;

	if (empty_entry(w)) {
		t->empty++;
		return;
	}
	/* Linux uncore_insert_box_info disables a unit with a zero offset
	 * ("Invalid address"); a counter needs a width and a count to be read. */
	if (u.access > PMU_DISC_PCI)
		bad = "access type 3 (reserved)";
	else if (!u.ctl_off || !u.ctr_off)
		bad = "control or counter offset 0";
	else if (!u.nctrs || !u.width || u.width > 64)
		bad = "no counters, or a width of 0 or above 64 bits";
	for (unsigned k = 0; !bad && k < t->nunits; k++)
		if (t->unit[k].type == u.type && t->unit[k].id == u.id)
			bad = "a second unit of the same type and box ID";
	if (bad) {
		malformed(t, i, w, bad);
		return;
	}
	if (t->nunits == PMU_DISC_MAX_UNITS) {
		t->dropped++;
		return;
	}
	t->unit[t->nunits++] = u;
}

int pmu_discovery_parse(struct pmu_disc_table *t, uint8_t bus, uint8_t dev, uint8_t fn, uint16_t dvsec)
{
	uint32_t bir, id = cfg(bus, dev, fn, 0);
	uint64_t w[3];

	*t = (struct pmu_disc_table){
		.bus = bus, .dev = dev, .fn = fn, .dvsec = dvsec, .device = (uint16_t)(id >> 16)
	};
	bir = cfg(bus, dev, fn, (uint16_t)(dvsec + DVSEC_BIR));
	if (bir & ~DVSEC_BIR_MASK)
		return kerrf(t->why, sizeof(t->why), PMU_E_UNSUPPORTED,
			     "%02x:%02x.%x DVSEC at %#x: BIR dword %#x has bits beyond [2:0]", bus, dev, fn,
			     dvsec, bir);
	t->bir = (uint8_t)bir;
	if (!(t->base = table_bar(t)))
		return PMU_E_UNSUPPORTED;
	for (unsigned k = 0; k < 3; k++)
		if (rd64(t->base + 8 * k, &t->global[k]))
			return kerrf(t->why, sizeof(t->why), PMU_E_UNSUPPORTED,
				     "%02x:%02x.%x table at %#llx (BAR%u): not mapped", bus, dev, fn,
				     (unsigned long long)t->base, t->bir);
	t->stride = (uint8_t)BITS(t->global[0], 15, 8);
	t->max_units = (uint16_t)BITS(t->global[0], 25, 16);
	t->global_access = (uint8_t)BITS(t->global[0], 63, 62);
	t->global_ctl = t->global[1];
	if (empty_entry(t->global) || !t->stride)
		return kerrf(t->why, sizeof(t->why), PMU_E_UNSUPPORTED,
			     "%02x:%02x.%x global discovery state at %#llx invalid: %#llx %#llx %#llx%s", bus,
			     dev, fn, (unsigned long long)t->base, (unsigned long long)t->global[0],
			     (unsigned long long)t->global[1], (unsigned long long)t->global[2],
			     cfg(bus, dev, fn, PCI_COMMAND) & PCI_COMMAND_MEMORY ? ""
										 : " (memory decoding off)");
	for (unsigned i = 0; i < t->max_units; i++) {
		uint64_t a = t->base + (uint64_t)(i + 1) * t->stride * 8;

		if (rd64(a, &w[0]) || rd64(a + 8, &w[1]) || rd64(a + 16, &w[2]))
			return kerrf(t->why, sizeof(t->why), PMU_E_UNSUPPORTED,
				     "%02x:%02x.%x entry %u of %u at %#llx: not mapped", bus, dev, fn, i,
				     t->max_units, (unsigned long long)a);
		parse_unit(t, i, w);
	}
	return PMU_OK;
}

/* The first PMON DVSEC of the function at or after extended offset
 * `from`, or 0. The list is walked at most PCI_EXT_CAP_MAX steps and
 * only forward, so a looping list ends. */
static uint16_t find_dvsec(uint8_t bus, uint8_t dev, uint8_t fn)
{
	uint16_t off = PCI_EXT_CAP_START;

	for (unsigned n = 0; n < PCI_EXT_CAP_MAX && off >= PCI_EXT_CAP_START; n++) {
		uint32_t h = cfg(bus, dev, fn, off);
		uint16_t next = (uint16_t)(BITS(h, 31, 20) & ~3u);

		if (h == 0 || h == ~0u)
			return 0;
		if (BITS(h, 15, 0) == PCI_EXT_CAP_ID_DVSEC) {
			if (BITS(cfg(bus, dev, fn, (uint16_t)(off + DVSEC_HDR2)), 15, 0) ==
			    PMU_DISC_DVSEC_ID_PMON)
				return off;
			disc.dvsecs++;
		}
		if (next <= off)
			return 0;
		off = next;
	}
	return 0;
}

static void scan_function(uint8_t bus, uint8_t dev, uint8_t fn)
{
	uint16_t at = find_dvsec(bus, dev, fn);
	struct pmu_disc_table *t;

	if (!at)
		return;
	if (disc.ntables++ >= PMU_DISC_MAX_TABLES)
		return;
	t = &disc.table[disc.ntables - 1];
	pmu_discovery_parse(t, bus, dev, fn, at);
}

static void scan(void)
{
	uint32_t v;

	disc = (struct pmu_discovery){ 0 };
	/* The DVSEC is an extended capability: without the enhanced
	 * configuration mechanism nothing can be found. */
	disc.ecam = pmu_hw_pcie_read32(0, 0, 0, 0, &v) == 0;
	if (!disc.ecam) {
		ksnprintf(disc.why, sizeof(disc.why),
			  "no PCI Express extended configuration space (no ACPI MCFG): the discovery DVSEC "
			  "sits there");
		return;
	}
	for (unsigned bus = 0; bus < 256; bus++) {
		for (unsigned dev = 0; dev < 32; dev++) {
			uint32_t id = cfg((uint8_t)bus, (uint8_t)dev, 0, 0);
			unsigned nfn;

			if ((id & 0xffff) == 0xffff || !id)
				continue;
			nfn = BITS(cfg((uint8_t)bus, (uint8_t)dev, 0, PCI_HEADER_DWORD), 23, 23) ? 8 : 1;
			for (unsigned fn = 0; fn < nfn; fn++) {
				id = fn ? cfg((uint8_t)bus, (uint8_t)dev, (uint8_t)fn, 0) : id;
				if ((id & 0xffff) == 0xffff || !id)
					continue;
				disc.functions++;
				if ((id & 0xffff) == PCI_VENDOR_INTEL)
					scan_function((uint8_t)bus, (uint8_t)dev, (uint8_t)fn);
			}
		}
	}
	if (!disc.ntables)
		ksnprintf(disc.why, sizeof(disc.why),
			  "no uncore discovery table: no Intel function of the %u on buses 0-255 has a DVSEC "
			  "(ID %#x) with DVSEC ID %u (%u other DVSECs)",
			  disc.functions, PCI_EXT_CAP_ID_DVSEC, PMU_DISC_DVSEC_ID_PMON, disc.dvsecs);
}

const struct pmu_discovery *pmu_discovery(void)
{
	if (!scanned) {
		scan();
		scanned = true;
	}
	return &disc;
}

void pmu_discovery_forget(void)
{
	scanned = false;
}

const struct pmu_disc_table *pmu_discovery_of_package(uint32_t package, char *why, size_t whylen)
{
	const struct pmu_discovery *d = pmu_discovery();
	struct pmu_package pk[PMU_MAX_PACKAGES];
	unsigned n = pmu_packages(pk, PMU_MAX_PACKAGES), k;
	const struct pmu_disc_table *t;

	if (!d->ntables) {
		ksnprintf(why, whylen, "%s", d->why);
		return NULL;
	}
	for (k = 0; k < n && pk[k].id != package; k++)
		;
	if (k == n) {
		ksnprintf(why, whylen, "package %u is not among the %u packages of the initialised CPUs",
			  package, n);
		return NULL;
	}
	if (d->ntables != n) {
		ksnprintf(
			why, whylen,
			"%u discovery tables for %u packages: cannot tell which is package %u's (one a package, "
			"in bus order)",
			d->ntables, n, package);
		return NULL;
	}
	if (k >= PMU_DISC_MAX_TABLES) {
		ksnprintf(why, whylen, "package %u is the %u-th: pmutest keeps %u tables", package, k + 1,
			  PMU_DISC_MAX_TABLES);
		return NULL;
	}
	t = &d->table[k];
	if (t->why[0]) {
		ksnprintf(why, whylen, "package %u's table: %s", package, t->why);
		return NULL;
	}
	return t;
}

unsigned pmu_discovery_units(const struct pmu_disc_table *t, uint16_t type, const struct pmu_disc_unit **out,
			     unsigned max)
{
	unsigned n = 0;

	for (unsigned k = 0; k < t->nunits; k++) {
		const struct pmu_disc_unit *u = &t->unit[k];
		unsigned j;

		if (u->type != type)
			continue;
		/* Insert in box ID order. */
		j = n < max ? n : max;
		while (j > 0 && out[j - 1]->id > u->id) {
			if (j < max)
				out[j] = out[j - 1];
			j--;
		}
		if (j < max)
			out[j] = u;
		n++;
	}
	return n;
}
