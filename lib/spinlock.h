/* Test-and-test-and-set spinlock that records which CPU holds it, so that a
 * test aborted on a CPU can give back the locks that CPU still holds. */
#ifndef LIB_SPINLOCK_H
#define LIB_SPINLOCK_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Why not a ticket lock: a waiter that is aborted (its test body unwound
 * from an exception) keeps its ticket and would block every later waiter
 * forever. Here a waiter leaves no trace, and the holder's identity is
 * part of the same word that is swapped on acquisition, so there is no
 * moment where the lock is held but the owner unknown.
 */
struct spinlock {
	uint32_t owner; /* holder's cpu + 1; 0 = free, so zeroed memory is unlocked */
};

#define SPINLOCK_INIT      \
	{                  \
		.owner = 0 \
	}
#define SPINLOCK_NO_OWNER UINT32_MAX

/* Tell the CPU this is a spin-wait loop: saves power and avoids the
 * memory-order pipeline flush on exit (SDM vol. 2B, PAUSE). */
static inline void spin_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("pause" ::: "memory");
#else
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}

static inline void spin_init(struct spinlock *l)
{
	__atomic_store_n(&l->owner, 0, __ATOMIC_RELAXED);
}

/* cpu is the caller's CPU number (< UINT32_MAX). */
static inline bool spin_trylock(struct spinlock *l, unsigned cpu)
{
	uint32_t expected = 0;

	return __atomic_compare_exchange_n(&l->owner, &expected, (uint32_t)cpu + 1, false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

static inline void spin_lock(struct spinlock *l, unsigned cpu)
{
	/* Spin on plain loads so that waiters share the cache line and only
	 * go for the (line-owning) compare-exchange when it looks free. */
	while (!spin_trylock(l, cpu))
		while (__atomic_load_n(&l->owner, __ATOMIC_RELAXED) != 0)
			spin_relax();
}

static inline void spin_unlock(struct spinlock *l)
{
	__atomic_store_n(&l->owner, 0, __ATOMIC_RELEASE);
}

static inline bool spin_is_locked(const struct spinlock *l)
{
	return __atomic_load_n(&l->owner, __ATOMIC_RELAXED) != 0;
}

/* The holder's CPU number, or SPINLOCK_NO_OWNER when free. A snapshot:
 * only meaningful to the holder itself or for diagnostics. */
static inline uint32_t spin_owner(const struct spinlock *l)
{
	return __atomic_load_n(&l->owner, __ATOMIC_RELAXED) - 1;
}

/*
 * Release the lock if and only if cpu holds it; returns whether it did.
 * For the abort path of a test: the aborted CPU calls this for every lock
 * its test might have held. A single compare-exchange, so it can never
 * release a lock that another CPU acquired in the meantime.
 */
static inline bool spin_force_release_if_owner(struct spinlock *l, unsigned cpu)
{
	uint32_t expected = (uint32_t)cpu + 1;

	return __atomic_compare_exchange_n(&l->owner, &expected, 0, false, __ATOMIC_RELEASE,
					   __ATOMIC_RELAXED);
}

#endif
