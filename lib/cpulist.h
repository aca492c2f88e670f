/* CPU lists as users write them ("0,2-3", "all") and the bitmap they name,
 * for options that choose CPUs (monitor mode's CPU list). */
#ifndef LIB_CPULIST_H
#define LIB_CPULIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Same bound as the kernel's MAX_CPUS (arch/x86/percpu.h); lib/ does not
 * include arch/, so users that mix the two assert the equality. */
#define CPULIST_MAX_CPUS 256

struct cpulist {
	uint64_t bits[CPULIST_MAX_CPUS / 64];
};

/*
 * Parse s into *out. Items are separated by commas: "N", "N-M" (N <= M,
 * both ends included) or "all" (CPUs 0..ncpus-1); numbers are decimal. The
 * result is the union of the items. Every CPU named must be below ncpus
 * (the CPUs that are online). Returns 0, or -1 with err saying which item
 * is wrong and why; *out is cleared on error. ncpus is at most
 * CPULIST_MAX_CPUS (larger values are treated as that).
 */
int cpulist_parse(const char *s, unsigned ncpus, struct cpulist *out, char *err, size_t errlen);

static inline void cpulist_clear(struct cpulist *l)
{
	for (unsigned i = 0; i < CPULIST_MAX_CPUS / 64; i++)
		l->bits[i] = 0;
}

static inline void cpulist_set(struct cpulist *l, unsigned cpu)
{
	if (cpu < CPULIST_MAX_CPUS)
		l->bits[cpu / 64] |= 1ull << (cpu % 64);
}

static inline bool cpulist_test(const struct cpulist *l, unsigned cpu)
{
	return cpu < CPULIST_MAX_CPUS && (l->bits[cpu / 64] >> (cpu % 64)) & 1;
}

/* *l gains every CPU of *other. */
static inline void cpulist_or(struct cpulist *l, const struct cpulist *other)
{
	for (unsigned i = 0; i < CPULIST_MAX_CPUS / 64; i++)
		l->bits[i] |= other->bits[i];
}

unsigned cpulist_count(const struct cpulist *l);
/* The lowest CPU >= from in the list, or CPULIST_MAX_CPUS if none. */
unsigned cpulist_next(const struct cpulist *l, unsigned from);
/* Canonical form, ranges merged: "0,2-3"; "" for an empty list. Returns
 * the length the whole form needs, like snprintf. */
int cpulist_format(const struct cpulist *l, char *buf, size_t n);

#define cpulist_for_each(cpu, l) \
	for ((cpu) = cpulist_next((l), 0); (cpu) < CPULIST_MAX_CPUS; (cpu) = cpulist_next((l), (cpu) + 1))

#endif
