/* ECAM through the ACPI MCFG table: segment 0's windows, read once (the
 * table does not change after boot), each address checked against the
 * identity map before it is touched. */
#include "arch/x86/pc/ecam.h"

#include "arch/x86/cpu.h"
#include "arch/x86/paging.h"
#include "lib/acpi.h"
#include "lib/acpi_mcfg.h"

#define ECAM_MAX_WINDOWS 8

static struct acpi_mcfg_entry windows[ECAM_MAX_WINDOWS];
static unsigned nwindows;
static volatile int state; /* 0 unread, 1 reading, 2 read */

static void read_mcfg(void)
{
	int n;

	/* Whoever comes first reads; the table is the same for everyone, so
	 * a CPU that finds the read under way waits for it. */
	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == 2)
		return;
	if (__atomic_exchange_n(&state, 1, __ATOMIC_ACQ_REL) == 0) {
		n = acpi_mcfg(windows, ECAM_MAX_WINDOWS);
		nwindows = n < 0 ? 0 : n > ECAM_MAX_WINDOWS ? ECAM_MAX_WINDOWS : (unsigned)n;
		__atomic_store_n(&state, 2, __ATOMIC_RELEASE);
	}
	while (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 2)
		cpu_relax();
}

/* The function's address, or 0 if no window has it. */
static uint64_t address(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off)
{
	read_mcfg();
	if ((off & 3) || off >= PCI_ECAM_FN_SIZE || dev > 31 || fn > 7)
		return 0;
	for (unsigned i = 0; i < nwindows; i++) {
		const struct acpi_mcfg_entry *w = &windows[i];
		uint64_t a;

		if (w->segment != 0 || bus < w->start_bus || bus > w->end_bus)
			continue;
		a = w->base +
		    ((uint64_t)(bus - w->start_bus) << 20 | (uint64_t)dev << 15 | (uint64_t)fn << 12 | off);
		return a + 4 <= paging_mapped_end() ? a : 0;
	}
	return 0;
}

int pci_ecam_read32(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off, uint32_t *val)
{
	uint64_t a = address(bus, dev, fn, off);

	if (!a) {
		*val = ~0u;
		return -1;
	}
	*val = *(volatile uint32_t *)(uintptr_t)a;
	return 0;
}

int pci_ecam_write32(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off, uint32_t val)
{
	uint64_t a = address(bus, dev, fn, off);

	if (!a)
		return -1;
	*(volatile uint32_t *)(uintptr_t)a = val;
	return 0;
}
