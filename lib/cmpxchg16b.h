/* 16-byte compare-and-exchange (CMPXCHG16B) without libatomic, which the
 * kernel does not link: a value and its generation change together. */
#ifndef LIB_CMPXCHG16B_H
#define LIB_CMPXCHG16B_H

#include <stdbool.h>
#include <stdint.h>

/* The operand must be 16-byte aligned or CMPXCHG16B raises #GP (SDM
 * vol. 2A, CMPXCHG8B/CMPXCHG16B); CPUID.01H:ECX.CX16[bit 13] says the
 * instruction exists. */
struct u64_pair {
	uint64_t lo, hi;
} __attribute__((aligned(16)));

/* If *p equals *old, store new and return true; else load *p into *old
 * and return false. LOCK makes it atomic against other CPUs; against an
 * interrupt on this CPU one instruction is atomic anyway. */
static inline bool cmpxchg16b(struct u64_pair *p, struct u64_pair *old, struct u64_pair new)
{
	bool ok;
	__asm__ __volatile__("lock cmpxchg16b %[m]"
			     : [m] "+m"(*p), "=@ccz"(ok), "+a"(old->lo), "+d"(old->hi)
			     : "b"(new.lo), "c"(new.hi)
			     : "memory");
	return ok;
}

#endif
