/* PCI configuration space through configuration mechanism #1 (ports CF8H
 * and CFCH): the 256 bytes of every function on buses 0-255, which is what
 * the uncore's PCI registers need (PCI Local Bus Specification 3.0,
 * 3.2.2.3.2 "Software Generation of Configuration Transactions"). */
#ifndef ARCH_X86_PC_PCI_H
#define ARCH_X86_PC_PCI_H

#include <stdint.h>

#define PCI_CONFIG_ADDRESS 0xcf8
#define PCI_CONFIG_DATA 0xcfc
#define PCI_CONFIG_ENABLE (1u << 31)

/* A dword at offset off (dword-aligned, below 256) of bus:dev.fn; a
 * function that is not there reads all-ones. From any CPU: one lock keeps
 * the address and data cycles of two CPUs apart. */
uint32_t pci_conf_read32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off);
void pci_conf_write32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off, uint32_t val);

#endif
