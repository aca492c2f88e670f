/* Host tests of modes/workloads.c: the chase is one cycle through every
 * node, branchy's bits and taken count match a reference xorshift, the
 * copy covers the buffer and wraps, sizes are checked, buffers reused. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/host/hosttest.h"

#include "modes/workloads.h"

/* The env the kernel fills with bootmem_alloc() and uptime_us(): zeroed
 * page-aligned memory (never freed, as in the kernel; kept listed so
 * LeakSanitizer sees it reachable) and a clock that advances 10 us per
 * reading. */
static unsigned allocs;
static void *alloc_list[64];
static void *host_alloc(size_t size)
{
	size_t want = (size + 4095) & ~(size_t)4095;
	void *p = aligned_alloc(4096, want);
	if (!p || allocs >= sizeof(alloc_list) / sizeof(alloc_list[0]))
		abort();
	memset(p, 0, want);
	alloc_list[allocs++] = p;
	return p;
}

static uint64_t fake_now, fake_tick = 10;
static uint64_t fake_clock(void)
{
	return fake_now += fake_tick;
}

static const struct pmu_wl_env env = { host_alloc, fake_clock };

HT_TEST(names)
{
	HT_CHECK_EQ(pmu_wl_find("loop"), PMU_WL_LOOP);
	HT_CHECK_EQ(pmu_wl_find("chase"), PMU_WL_CHASE);
	HT_CHECK_EQ(pmu_wl_find("branchy"), PMU_WL_BRANCHY);
	HT_CHECK_EQ(pmu_wl_find("memcpy"), PMU_WL_MEMCPY);
	HT_CHECK_EQ(pmu_wl_find("Loop"), -1);
	HT_CHECK_EQ(pmu_wl_find(""), -1);
	HT_CHECK_EQ(pmu_wl_find(NULL), -1);
	for (int k = 0; k < PMU_WL_NR; k++)
		HT_CHECK(pmu_wl_descs[k].name && pmu_wl_descs[k].default_size >= pmu_wl_descs[k].min_size &&
				 pmu_wl_descs[k].default_size <= pmu_wl_descs[k].max_size,
			 "descriptor %d incomplete or default out of its range", k);
}

/* Walk from node 0: the first return to node 0 must come after exactly n
 * hops, each node seen once. */
static void check_one_cycle(uint64_t n, uint64_t seed)
{
	unsigned char *base = aligned_alloc(64, (size_t)(n * PMU_CHASE_NODE));
	unsigned char *seen = calloc((size_t)n, 1);
	uint64_t hops = 0, dup = 0, stray = 0;

	pmu_wl_chase_build(base, n, seed);
	const unsigned char *p = base;
	do {
		uint64_t idx = (uint64_t)(p - base) / PMU_CHASE_NODE;
		if ((uint64_t)(p - base) % PMU_CHASE_NODE || idx >= n) {
			stray++;
			break;
		}
		dup += seen[idx]++;
		p = *(unsigned char *const *)(const void *)p;
		hops++;
	} while (p != base && hops <= n);
	HT_CHECK(stray == 0 && dup == 0 && hops == n,
		 "n=%llu seed=%#llx: cycle length %llu, repeats %llu, stray pointers %llu",
		 (unsigned long long)n, (unsigned long long)seed, (unsigned long long)hops,
		 (unsigned long long)dup, (unsigned long long)stray);
	free(base);
	free(seen);
}

HT_TEST(chase_is_one_cycle)
{
	static const uint64_t sizes[] = { 1, 2, 3, 4, 17, 64, 1000, 4096, 65536 };
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (uint64_t seed = 0; seed < 4; seed++)
			check_one_cycle(sizes[i], seed * 0x1234567ull);
}

HT_TEST(chase_deterministic_and_shuffled)
{
	const uint64_t n = 1000;
	unsigned char *a = aligned_alloc(64, n * PMU_CHASE_NODE), *b = aligned_alloc(64, n * PMU_CHASE_NODE);
	uint64_t same = 0, sequential = 0;

	pmu_wl_chase_build(a, n, 42);
	pmu_wl_chase_build(b, n, 42);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t na = (uint64_t)(*(unsigned char **)(void *)(a + i * 64) - a) / 64;
		uint64_t nb = (uint64_t)(*(unsigned char **)(void *)(b + i * 64) - b) / 64;
		same += na == nb;
		sequential += na == (i + 1) % n;
	}
	HT_CHECK_EQ(same, n);
	/* A random successor is the next node with probability 1/n: a few
	 * at most, not a sequential walk a prefetcher would follow. */
	HT_CHECK(sequential < 10, "%llu of %llu nodes point at their neighbour",
		 (unsigned long long)sequential, (unsigned long long)n);
	pmu_wl_chase_build(b, n, 43);
	same = 0;
	for (uint64_t i = 0; i < n; i++)
		same += *(uint64_t *)(void *)(a + i * 64) - (uint64_t)(uintptr_t)a ==
			*(uint64_t *)(void *)(b + i * 64) - (uint64_t)(uintptr_t)b;
	HT_CHECK(same < 10, "seeds 42 and 43 share %llu of %llu links", (unsigned long long)same,
		 (unsigned long long)n);
	free(a);
	free(b);
}

HT_TEST(chase_steps_follow_the_cycle)
{
	struct pmu_wl w;
	char err[128];

	HT_CHECK_EQ(pmu_wl_setup(&w, &env, PMU_WL_CHASE, 64 * 1024, 1, 7, err, sizeof(err)), 0);
	HT_CHECK_EQ(w.nodes, 1024);
	/* 4096 hops = 4 full turns of a 1024-node cycle: back at the start. */
	pmu_wl_step(&w, 4096);
	HT_CHECK(w.pos == w.buf, "after 4 turns the chase is at %p, not its start %p", w.pos, w.buf);
	HT_CHECK_EQ(w.work, 4096);
	pmu_wl_step(&w, 1);
	HT_CHECK(w.pos != w.buf, "one hop further it must have left the start");
	HT_CHECK_EQ(w.work, 4097);
}

/* The same xorshift in C, restarting every `period` iterations. */
static void branchy_ref(uint64_t start, uint64_t period, uint64_t n, uint64_t *x_out, uint64_t *taken_out)
{
	uint64_t x = start, taken = 0;
	for (uint64_t i = 0; i < n; i++) {
		if (i % period == 0)
			x = start;
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		taken += x & 1;
	}
	if (n % period == 0)
		x = start; /* the step leaves the state ready for the next pattern */
	*x_out = x;
	*taken_out = taken;
}

HT_TEST(branchy_matches_reference)
{
	struct pmu_wl w;
	char err[128];
	uint64_t x, taken;

	HT_CHECK_EQ(pmu_wl_setup(&w, &env, PMU_WL_BRANCHY, 1u << 20, 0, 99, err, sizeof(err)), 0);
	HT_CHECK(w.prng != 0, "xorshift state must not be 0");
	uint64_t start = w.prng;
	/* Steps of odd sizes, all inside one long pattern. */
	pmu_wl_step(&w, 100000);
	pmu_wl_step(&w, 77777);
	pmu_wl_step(&w, 122223);
	branchy_ref(start, 1u << 20, 300000, &x, &taken);
	HT_CHECK_EQ(w.prng, x);
	HT_CHECK_EQ(w.taken, taken);
	HT_CHECK_EQ(w.work, 300000);
	/* Unpredictable means about half taken; 300000 fair coin flips stay
	 * within 1% of half with overwhelming probability. */
	HT_CHECK(taken > 148500 && taken < 151500, "taken %llu of 300000", (unsigned long long)taken);
}

HT_TEST(branchy_pattern_repeats)
{
	struct pmu_wl w;
	char err[128];
	uint64_t x, taken;

	/* Period 7, steps that straddle the restarts at odd places. */
	HT_CHECK_EQ(pmu_wl_setup(&w, &env, PMU_WL_BRANCHY, 7, 0, 5, err, sizeof(err)), 0);
	uint64_t start = w.prng;
	pmu_wl_step(&w, 3);
	pmu_wl_step(&w, 11);
	pmu_wl_step(&w, 7);
	branchy_ref(start, 7, 21, &x, &taken);
	HT_CHECK_EQ(w.taken, taken);
	HT_CHECK_EQ(w.prng, x);
	HT_CHECK_EQ(w.prng, start); /* 21 = 3 whole patterns */
	HT_CHECK_EQ(w.pattern_left, 7);
	/* Every pattern takes the branch the same number of times. */
	uint64_t one;
	branchy_ref(start, 7, 7, &x, &one);
	HT_CHECK_EQ(taken, 3 * one);
}

HT_TEST(memcpy_covers_and_wraps)
{
	struct pmu_wl w;
	char err[128];
	const uint64_t size = 200 * 1024;

	HT_CHECK_EQ(pmu_wl_setup(&w, &env, PMU_WL_MEMCPY, size, 2, 0, err, sizeof(err)), 0);
	pmu_wl_step(&w, 150 * 1024);
	HT_CHECK_EQ(w.offset, 150 * 1024);
	pmu_wl_step(&w, 60 * 1024); /* 50 KiB to the end, then 10 KiB from the start */
	HT_CHECK_EQ(w.offset, 10 * 1024);
	HT_CHECK_EQ(w.work, 210 * 1024);
	const unsigned char *d = w.dst;
	uint64_t wrong = 0;
	for (uint64_t i = 0; i < size; i++)
		wrong += d[i] != 0x5a;
	HT_CHECK_EQ(wrong, 0);
}

HT_TEST(loop_whole_runs)
{
	struct pmu_wl w;
	char err[128];

	HT_CHECK_EQ(pmu_wl_setup(&w, &env, PMU_WL_LOOP, 0, 0, 0, err, sizeof(err)), 0);
	HT_CHECK_EQ(w.size, pmu_wl_descs[PMU_WL_LOOP].default_size);
	HT_CHECK_EQ(pmu_wl_setup(&w, &env, PMU_WL_LOOP, 100, 0, 0, err, sizeof(err)), 0);
	pmu_wl_step(&w, 250); /* three runs of 100 */
	HT_CHECK_EQ(w.work, 300);
	pmu_wl_step(&w, 1); /* at least one run */
	HT_CHECK_EQ(w.work, 400);
	pmu_wl_step(&w, 0); /* 0 counts as 1 */
	HT_CHECK_EQ(w.work, 500);
}

/* The chunk follows the (fake) clock: 10 us per reading means a step
 * takes 10 us, under half the 200 us target, so the chunk doubles; at
 * 1000 us per reading it halves, down to 1. */
HT_TEST(timed_steps_adapt)
{
	struct pmu_wl w;
	char err[128];

	HT_CHECK_EQ(pmu_wl_setup(&w, &env, PMU_WL_CHASE, 4096, 0, 0, err, sizeof(err)), 0);
	HT_CHECK_EQ(w.chunk, pmu_wl_descs[PMU_WL_CHASE].first_chunk);
	fake_tick = 10;
	fake_now = 0;
	/* Readings: step 10/20, deadline check 30; step 40/50, check 60. */
	pmu_wl_run_until(&w, &env, 50);
	HT_CHECK_EQ(w.steps, 2);
	HT_CHECK_EQ(w.work, 256 + 512);
	HT_CHECK_EQ(w.chunk, 1024);
	fake_tick = 1000;
	for (int i = 0; i < 20; i++)
		pmu_wl_step_timed(&w, &env);
	HT_CHECK_EQ(w.chunk, 1);
	fake_tick = 150; /* within [target/2, 2 target]: no change */
	pmu_wl_step_timed(&w, &env);
	HT_CHECK_EQ(w.chunk, 1);
	pmu_wl_run_until(&w, &env, 0); /* deadline passed: still one step */
	HT_CHECK_EQ(w.steps, 2 + 20 + 1 + 1);
	fake_tick = 10;
}

HT_TEST(sizes_refused)
{
	struct pmu_wl w;
	char err[128];

	HT_CHECK_EQ(pmu_wl_setup(&w, &env, PMU_WL_CHASE, 64, 0, 0, err, sizeof(err)), -1);
	HT_CHECK_STR(err, "workload chase: size 64 bytes is outside 128..1073741824");
	HT_CHECK_EQ(pmu_wl_setup(&w, &env, PMU_WL_MEMCPY, (1ull << 30) + 1, 0, 0, err, sizeof(err)), -1);
	HT_CHECK(strstr(err, "memcpy: size 1073741825 bytes") != NULL, "message: %s", err);
	HT_CHECK_EQ(pmu_wl_setup(&w, &env, PMU_WL_BRANCHY, (1ull << 32) + 1, 0, 0, err, sizeof(err)), -1);
	HT_CHECK(strstr(err, "iterations is outside 1..") != NULL, "message: %s", err);
	HT_CHECK_EQ(pmu_wl_setup(&w, &env, (enum pmu_wl_kind)PMU_WL_NR, 1, 0, 0, err, sizeof(err)), -1);
}

HT_TEST(buffers_reused_per_cpu)
{
	struct pmu_wl a, b;
	char err[128];

	HT_CHECK_EQ(pmu_wl_setup(&a, &env, PMU_WL_CHASE, 1 << 20, 5, 1, err, sizeof(err)), 0);
	unsigned before = allocs;
	HT_CHECK_EQ(pmu_wl_setup(&b, &env, PMU_WL_CHASE, 1 << 16, 5, 1, err, sizeof(err)), 0);
	HT_CHECK(b.buf == a.buf && allocs == before, "a smaller run on the same CPU should reuse its buffer");
	HT_CHECK_EQ(pmu_wl_setup(&b, &env, PMU_WL_CHASE, 1 << 16, 6, 1, err, sizeof(err)), 0);
	HT_CHECK(b.buf != a.buf && allocs == before + 1, "another CPU gets its own buffer");
	HT_CHECK_EQ(pmu_wl_setup(&b, &env, PMU_WL_CHASE, 1 << 21, 5, 1, err, sizeof(err)), 0);
	HT_CHECK(allocs == before + 2, "a larger run allocates anew");
}

HT_MAIN("workloads")
