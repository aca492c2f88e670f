/* The monitor-mode workloads: counted loop, pointer chase, branchy loop,
 * streaming copy. Memory is per CPU and kept between runs, because boot
 * memory is never freed; memory and clock come from the caller's env. */
#include "modes/workloads.h"

#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/loops.h"
#include "pmu/pmu.h"

const struct pmu_wl_desc pmu_wl_descs[PMU_WL_NR] = {
	[PMU_WL_LOOP] = { "loop", "iterations", "iters", 10000, 1, PMU_WL_MAX_ITERS, 1024,
			  "ADD/DEC/JNZ loop, size iterations per run: 3 instructions and 1 branch per iteration" },
	[PMU_WL_CHASE] = { "chase", "bytes", "hops", 1u << 20, 2 * PMU_CHASE_NODE, PMU_WL_MAX_BYTES, 256,
			   "pointer chase over a random cycle of 64-byte nodes, working set = size" },
	[PMU_WL_BRANCHY] = { "branchy", "iterations", "iters", 1u << 20, 1, PMU_WL_MAX_ITERS, 1024,
			     "branch on a xorshift64 bit, pattern repeating every size iterations: 13 instructions + taken, 2 branches per iteration" },
	[PMU_WL_MEMCPY] = { "memcpy", "bytes", "bytes", 1u << 20, 4096, PMU_WL_MAX_BYTES, 4096,
			    "streaming copy between two buffers of size bytes each" },
};

/* Buffers kept per CPU: slot 0 chase nodes / copy source, slot 1 copy
 * destination. A larger request replaces the buffer (the old one stays
 * allocated: bootmem cannot free). */
static struct {
	void *p;
	size_t size;
} wl_mem[PMU_MAX_CPUS][2];

static void *wl_buffer(const struct pmu_wl_env *env, unsigned cpu, unsigned slot, size_t size)
{
	if (cpu >= PMU_MAX_CPUS)
		return env->alloc(size);
	if (wl_mem[cpu][slot].size < size) {
		wl_mem[cpu][slot].p = env->alloc(size);
		wl_mem[cpu][slot].size = size;
	}
	return wl_mem[cpu][slot].p;
}

int pmu_wl_find(const char *name)
{
	for (int k = 0; name && k < PMU_WL_NR; k++)
		if (strcmp(name, pmu_wl_descs[k].name) == 0)
			return k;
	return -1;
}

void pmu_wl_chase_build(void *base, uint64_t n, uint64_t seed)
{
	unsigned char *b = base;
	uint64_t s = seed;

	/* Build the permutation in place, as node indices in each node's
	 * first word, then turn the indices into addresses. Sattolo differs
	 * from Fisher-Yates only in drawing j < i (never i itself), which is
	 * exactly what makes the result one cycle through all n nodes. */
	for (uint64_t i = 0; i < n; i++)
		*(uint64_t *)(void *)(b + i * PMU_CHASE_NODE) = i;
	for (uint64_t i = n - 1; i > 0; i--) {
		uint64_t j = pmu_wl_rand(&s) % i;
		uint64_t *a = (uint64_t *)(void *)(b + i * PMU_CHASE_NODE);
		uint64_t *c = (uint64_t *)(void *)(b + j * PMU_CHASE_NODE);
		uint64_t t = *a;
		*a = *c;
		*c = t;
	}
	for (uint64_t i = 0; i < n; i++) {
		uint64_t *a = (uint64_t *)(void *)(b + i * PMU_CHASE_NODE);
		*a = (uint64_t)(uintptr_t)(b + *a * PMU_CHASE_NODE);
	}
}

int pmu_wl_setup(struct pmu_wl *w, const struct pmu_wl_env *env, enum pmu_wl_kind kind, uint64_t size,
		 unsigned cpu, uint64_t seed, char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	if ((unsigned)kind >= PMU_WL_NR) {
		ksnprintf(err, errlen, "workload kind %d does not exist", (int)kind);
		return -1;
	}
	const struct pmu_wl_desc *d = &pmu_wl_descs[kind];
	if (!size)
		size = d->default_size;
	if (size < d->min_size || size > d->max_size) {
		ksnprintf(err, errlen, "workload %s: size %llu %s is outside %llu..%llu", d->name,
			  (unsigned long long)size, d->size_unit, (unsigned long long)d->min_size,
			  (unsigned long long)d->max_size);
		return -1;
	}
	w->kind = kind;
	w->size = size;
	uint64_t s = seed ^ ((uint64_t)cpu << 32);
	switch (kind) {
	case PMU_WL_CHASE:
		w->nodes = size / PMU_CHASE_NODE;
		w->buf = wl_buffer(env, cpu, 0, (size_t)(w->nodes * PMU_CHASE_NODE));
		pmu_wl_chase_build(w->buf, w->nodes, pmu_wl_rand(&s));
		w->pos = w->buf;
		break;
	case PMU_WL_MEMCPY:
		w->buf = wl_buffer(env, cpu, 0, (size_t)size);
		w->dst = wl_buffer(env, cpu, 1, (size_t)size);
		/* Non-zero source bytes, so the copy moves real data. */
		memset(w->buf, 0x5a, (size_t)size);
		break;
	case PMU_WL_BRANCHY:
		w->prng_start = pmu_wl_rand(&s);
		if (!w->prng_start)
			w->prng_start = 1; /* xorshift's one fixed point */
		w->prng = w->prng_start;
		w->pattern_left = size;
		break;
	case PMU_WL_LOOP:
	case PMU_WL_NR: break;
	}
	w->chunk = d->first_chunk;
	w->target_us = PMU_WL_STEP_TARGET_US;
	if (err && errlen)
		err[0] = '\0';
	return 0;
}

/* Per iteration (see PMU_BRANCHY_INSNS_PER_ITER): xorshift64 with the
 * 13/7/17 shifts (Marsaglia, "Xorshift RNGs", 2003), then a JZ on bit 0.
 * The bit sequence obeys a degree-64 linear recurrence, far longer than
 * any predictor's history, so about half of the JZs mispredict unless
 * the pattern (size iterations) is short enough to be learnt. */
static void wl_branchy(struct pmu_wl *w, uint64_t n)
{
	uint64_t x = w->prng, t, taken = 0;

	if (!n)
		return; /* DEC of 0 would run 2^64 iterations */
	__asm__ volatile("1: mov %[x], %[t]\n\t"
			 "shl $13, %[t]\n\t"
			 "xor %[t], %[x]\n\t"
			 "mov %[x], %[t]\n\t"
			 "shr $7, %[t]\n\t"
			 "xor %[t], %[x]\n\t"
			 "mov %[x], %[t]\n\t"
			 "shl $17, %[t]\n\t"
			 "xor %[t], %[x]\n\t"
			 "test $1, %[x]\n\t"
			 "jz 2f\n\t"
			 "inc %[taken]\n"
			 "2: dec %[n]\n\t"
			 "jnz 1b\n"
			 : [x] "+&r"(x), [t] "=&r"(t), [taken] "+&r"(taken), [n] "+&r"(n)
			 :
			 : "cc");
	w->prng = x;
	w->taken += taken;
}

void pmu_wl_step(struct pmu_wl *w, uint64_t n)
{
	uint64_t done = 0;

	if (!n)
		n = 1;
	switch (w->kind) {
	case PMU_WL_LOOP:
		do {
			pmu_workload_loop(w->size);
			done += w->size;
		} while (done < n);
		break;
	case PMU_WL_BRANCHY:
		/* Restarting from the same state makes the taken/not-taken
		 * sequence periodic with period size. */
		while (done < n) {
			uint64_t m = n - done < w->pattern_left ? n - done : w->pattern_left;
			wl_branchy(w, m);
			done += m;
			if (!(w->pattern_left -= m)) {
				w->prng = w->prng_start;
				w->pattern_left = w->size;
			}
		}
		break;
	case PMU_WL_CHASE: {
		/* Each load's address is the previous load's value: the hops
		 * cannot overlap, so time per hop is the load latency of the
		 * level the working set fits in. */
		const void *p = w->pos;
		for (; done < n; done++)
			p = *(const void *const *)p;
		w->pos = p;
		break;
	}
	case PMU_WL_MEMCPY:
		while (done < n) {
			uint64_t m = w->size - w->offset;
			if (m > n - done)
				m = n - done;
			memcpy((char *)w->dst + w->offset, (const char *)w->buf + w->offset, (size_t)m);
			w->offset = w->offset + m == w->size ? 0 : w->offset + m;
			done += m;
		}
		break;
	case PMU_WL_NR: break;
	}
	w->work += done;
	w->steps++;
}

void pmu_wl_step_timed(struct pmu_wl *w, const struct pmu_wl_env *env)
{
	uint64_t t0 = env->now_us();
	pmu_wl_step(w, w->chunk);
	uint64_t dt = env->now_us() - t0;

	if (dt * 2 < w->target_us && w->chunk < PMU_WL_MAX_CHUNK)
		w->chunk *= 2;
	else if (dt > 2 * w->target_us && w->chunk > 1)
		w->chunk /= 2;
}

void pmu_wl_run_until(struct pmu_wl *w, const struct pmu_wl_env *env, uint64_t until_us)
{
	do
		pmu_wl_step_timed(w, env);
	while (env->now_us() < until_us);
}
