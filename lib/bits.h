/* Bit and array helpers shared by every layer (GENMASK-style fields in
 * the SDM's [hi:lo] notation). Freestanding: the kernel links no libgcc,
 * so nothing here may turn into a call to it. */
#ifndef LIB_BITS_H
#define LIB_BITS_H

#include <stdint.h>

#define BIT(n) (1ull << (n))
/* Bits [hi:lo] of v. */
#define BITS(v, hi, lo) (((v) >> (lo)) & ((1ull << ((hi) - (lo) + 1)) - 1))
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Set bits; a loop, not __builtin_popcount, which becomes a libgcc call
 * without -mpopcnt. */
static inline unsigned popcount32(uint32_t v)
{
	unsigned n = 0;

	for (; v; v &= v - 1)
		n++;
	return n;
}

/* The number of the highest set bit plus one (0 for 0): "find last set". */
static inline unsigned fls32(uint32_t v)
{
	unsigned n = 0;

	while (v) {
		n++;
		v >>= 1;
	}
	return n;
}

/* v's low bits bits (1 to 64), sign-extended to 64 (Linux sign_extend64). */
static inline uint64_t sign_extend64(uint64_t v, unsigned bits)
{
	unsigned shift = 64 - bits;

	return (uint64_t)((int64_t)(v << shift) >> shift);
}

#endif
