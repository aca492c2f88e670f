/* PCI configuration mechanism #1: CONFIG_ADDRESS (CF8H) selects bus,
 * device, function and dword, CONFIG_DATA (CFCH) moves it (PCI Local Bus
 * Specification 3.0, 3.2.2.3.2). */
#include "arch/x86/pc/pci.h"

#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "lib/spinlock.h"

static struct spinlock pci_lock = SPINLOCK_INIT;

static uint32_t address(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off)
{
	return PCI_CONFIG_ENABLE | (uint32_t)bus << 16 | (uint32_t)(dev & 0x1f) << 11 |
	       (uint32_t)(fn & 7) << 8 | (off & 0xfc);
}

uint32_t pci_conf_read32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off)
{
	uint32_t v;
	bool irq = irq_save();

	spin_lock(&pci_lock, this_cpu()->cpu);
	outl(PCI_CONFIG_ADDRESS, address(bus, dev, fn, off));
	v = inl(PCI_CONFIG_DATA);
	spin_unlock(&pci_lock);
	irq_restore(irq);
	return v;
}

void pci_conf_write32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off, uint32_t val)
{
	bool irq = irq_save();

	spin_lock(&pci_lock, this_cpu()->cpu);
	outl(PCI_CONFIG_ADDRESS, address(bus, dev, fn, off));
	outl(PCI_CONFIG_DATA, val);
	spin_unlock(&pci_lock);
	irq_restore(irq);
}
