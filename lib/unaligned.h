/* Little-endian loads at any alignment, byte by byte: firmware and loader
 * structures (ACPI tables, multiboot info) are packed. */
#ifndef LIB_UNALIGNED_H
#define LIB_UNALIGNED_H

#include <stdint.h>

static inline uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

#endif
