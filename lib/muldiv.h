/* a * b / c with a 128-bit intermediate, without libgcc's __udivti3 (the
 * kernel links no libgcc). The quotient must fit in 64 bits (else #DE). */
#ifndef LIB_MULDIV_H
#define LIB_MULDIV_H

#include <stdint.h>

static inline uint64_t mul_div_u64(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t q, r;
	__asm__("mulq %[b]\n\tdivq %[c]" : "=a"(q), "=&d"(r) : "a"(a), [b] "rm"(b), [c] "rm"(c) : "cc");
	(void)r;
	return q;
}

#endif
