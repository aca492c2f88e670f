/* PCI Express enhanced configuration access (ECAM): the 4 KiB
 * configuration space of every function, its extended capabilities
 * included, memory-mapped where the ACPI MCFG table says (PCI Express Base
 * Specification, "Enhanced Configuration Access Mechanism": bus << 20 |
 * device << 15 | function << 12 | offset from the segment's base). */
#ifndef ARCH_X86_PC_ECAM_H
#define ARCH_X86_PC_ECAM_H

#include <stdint.h>

#define PCI_ECAM_FN_SIZE 4096

/* A dword at off (dword-aligned, below 4096) of segment 0's bus:dev.fn.
 * 0, or -1 when no MCFG entry covers the bus or its window is not mapped
 * (then *val is all-ones). A function that is not there reads all-ones. */
int pci_ecam_read32(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off, uint32_t *val);
int pci_ecam_write32(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off, uint32_t val);

#endif
