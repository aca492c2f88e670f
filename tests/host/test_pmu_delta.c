/* Host tests of the counter delta arithmetic (pmu_delta): every width
 * 1..64, across wraps, against an independent modular computation. */
#include <stdint.h>

#include "pmu/pmu.h"
#include "tests/host/hosttest.h"

/* Independent reference: (now - prev) mod 2^w with the mask written out. */
static uint64_t ref_delta(uint64_t prev, uint64_t now, unsigned w)
{
	uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
	return ((now & mask) - (prev & mask)) & mask;
}

/* xorshift64*: deterministic, so a failure reproduces. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

HT_TEST(delta_no_wrap_exact)
{
	HT_CHECK_EQ(pmu_delta(0, 0, 48), 0);
	HT_CHECK_EQ(pmu_delta(100, 250, 48), 150);
	HT_CHECK_EQ(pmu_delta(0, (1ull << 40) - 1, 40), (1ull << 40) - 1);
	HT_CHECK_EQ(pmu_delta(5, 5, 1), 0);
	HT_CHECK_EQ(pmu_delta(0, 1, 1), 1);
	HT_CHECK_EQ(pmu_delta(123, 124, 64), 1);
}

HT_TEST(delta_wrap_known_values)
{
	/* 48-bit counter stepping over 2^48: 0xffff_ffff_fff0 -> 0x10 is 0x20. */
	HT_CHECK_EQ(pmu_delta(0xfffffffffff0ull, 0x10, 48), 0x20);
	/* 40-bit: -1 -> 0 is 1 event. */
	HT_CHECK_EQ(pmu_delta(0xffffffffffull, 0, 40), 1);
	/* 1-bit counter: 1 -> 0 is one event. */
	HT_CHECK_EQ(pmu_delta(1, 0, 1), 1);
	/* 64-bit: the subtraction wraps on its own. */
	HT_CHECK_EQ(pmu_delta(~0ull, 4, 64), 5);
	/* 32-bit: garbage above the width is ignored. */
	HT_CHECK_EQ(pmu_delta(0xdead0000fffffffeull, 0xbeef000000000003ull, 32), 5);
}

HT_TEST(delta_every_width_across_wrap)
{
	unsigned bad = 0;
	for (unsigned w = 1; w <= 64; w++) {
		uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
		/* d events starting k below the wrap point, for small k and d
		 * no larger than the counter can hold. */
		for (uint64_t k = 1; k <= 5; k++)
			for (uint64_t d = 0; d <= 9; d++) {
				uint64_t dd = d & mask;
				uint64_t prev = (0 - k) & mask, now = (prev + dd) & mask;
				uint64_t got = pmu_delta(prev, now, w);
				if (got != dd) {
					if (bad++ < 5)
						HT_CHECK(
							0,
							"width %u prev %#llx now %#llx: delta %#llx, expected %#llx",
							w, (unsigned long long)prev, (unsigned long long)now,
							(unsigned long long)got, (unsigned long long)dd);
				}
			}
		/* The largest delta the width can express: mask. */
		HT_CHECK_EQ(pmu_delta(1, 0, w), mask);
	}
	HT_CHECK(bad == 0, "%u wrong deltas", bad);
}

HT_TEST(delta_random_all_widths)
{
	unsigned bad = 0, n = 0;
	for (unsigned w = 1; w <= 64; w++) {
		for (int i = 0; i < 4000; i++) {
			uint64_t prev = rnd(), now = rnd();
			/* Random garbage above the width must not matter either. */
			uint64_t got = pmu_delta(prev, now, w), want = ref_delta(prev, now, w);
			n++;
			if (got != want && bad++ < 5)
				HT_CHECK(0, "width %u prev %#llx now %#llx: %#llx vs %#llx", w,
					 (unsigned long long)prev, (unsigned long long)now,
					 (unsigned long long)got, (unsigned long long)want);
		}
	}
	HT_CHECK(bad == 0, "%u of %u random deltas wrong", bad, n);
}

HT_TEST(delta_accumulates_over_many_wraps)
{
	/* Summing deltas of a counter sampled often enough (less than one wrap
	 * between samples) recovers the true total, for every width. */
	for (unsigned w = 1; w <= 64; w++) {
		uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1, raw = rnd() & mask, prev = raw;
		uint64_t total = 0, sum = 0;
		for (int i = 0; i < 500; i++) {
			uint64_t step = rnd() & (mask >> 1);
			total += step;
			raw = (raw + step) & mask;
			sum += pmu_delta(prev, raw, w);
			prev = raw;
		}
		HT_CHECK(sum == total, "width %u: summed %llu, true %llu", w, (unsigned long long)sum,
			 (unsigned long long)total);
	}
}

HT_TEST(width_mask)
{
	HT_CHECK_EQ(pmu_width_mask(1), 1);
	HT_CHECK_EQ(pmu_width_mask(40), 0xffffffffffull);
	HT_CHECK_EQ(pmu_width_mask(48), 0xffffffffffffull);
	HT_CHECK_EQ(pmu_width_mask(63), 0x7fffffffffffffffull);
	HT_CHECK_EQ(pmu_width_mask(64), ~0ull);
}

HT_MAIN("pmu_delta")
