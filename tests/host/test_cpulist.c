/* Host tests of lib/cpulist.c: the accepted forms, every refusal naming
 * its item, iteration across bitmap words, and print/parse round trips. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/host/hosttest.h"

#include "lib/cpulist.h"

/* Parse and return the canonical form (or "ERR: <message>"). */
static const char *canon(const char *s, unsigned ncpus)
{
	static char buf[1024];
	struct cpulist l;
	char err[160];

	if (cpulist_parse(s, ncpus, &l, err, sizeof(err)) != 0) {
		snprintf(buf, sizeof(buf), "ERR: %s", err);
		return buf;
	}
	cpulist_format(&l, buf, sizeof(buf));
	return buf;
}

HT_TEST(accepted_forms)
{
	HT_CHECK_STR(canon("0,2-3", 4), "0,2-3");
	HT_CHECK_STR(canon("all", 4), "0-3");
	HT_CHECK_STR(canon("all", 1), "0");
	HT_CHECK_STR(canon("3,1,1-2", 4), "1-3");
	HT_CHECK_STR(canon("2-2", 4), "2");
	HT_CHECK_STR(canon("0,all", 3), "0-2");
	HT_CHECK_STR(canon("007", 8), "7"); /* decimal, leading zeros allowed */
	HT_CHECK_STR(canon("0,2,4,6", 8), "0,2,4,6");
	HT_CHECK_STR(canon("255", 1000), "255"); /* ncpus clamps to CPULIST_MAX_CPUS */
	HT_CHECK_STR(canon("60-70", 256), "60-70");
}

HT_TEST(bits_and_count)
{
	struct cpulist l;
	char err[128];

	HT_CHECK_EQ(cpulist_parse("0,2-3", 4, &l, err, sizeof(err)), 0);
	HT_CHECK_EQ(l.bits[0], 0xd);
	HT_CHECK_EQ(l.bits[1] | l.bits[2] | l.bits[3], 0);
	HT_CHECK_EQ(cpulist_count(&l), 3);
	HT_CHECK_STR(err, "");
	HT_CHECK_EQ(cpulist_parse("all", 256, &l, NULL, 0), 0);
	HT_CHECK_EQ(cpulist_count(&l), 256);
	HT_CHECK_EQ(l.bits[3], ~0ull);
}

/* Each refusal: status -1, the list cleared, and the message quoting the
 * item at fault (or saying what is missing). */
static void refused(const char *s, unsigned ncpus, const char *want_in_msg)
{
	struct cpulist l;
	char err[160];

	memset(&l, 0xff, sizeof(l));
	int rc = cpulist_parse(s, ncpus, &l, err, sizeof(err));
	HT_CHECK(rc == -1, "\"%s\" (ncpus %u) should be refused, got %d", s, ncpus, rc);
	HT_CHECK(cpulist_count(&l) == 0, "\"%s\": list not cleared on error", s);
	HT_CHECK(strstr(err, want_in_msg) != NULL, "\"%s\": expected \"%s\" in the message, got \"%s\"", s,
		 want_in_msg, err);
}

HT_TEST(refusals_name_the_item)
{
	refused("", 4, "empty CPU list");
	refused(NULL, 4, "empty CPU list");
	refused(",", 4, "empty item at offset 0");
	refused("0,,1", 4, "empty item at offset 2");
	refused("all,", 4, "empty item at offset 4");
	refused("a", 4, "\"a\" is not N, N-M or all");
	refused("ALL", 4, "\"ALL\" is not");
	refused("1-", 4, "\"1-\" is not");
	refused("-1", 4, "\"-1\" is not");
	refused("1-2-3", 4, "\"1-2-3\" is not");
	refused("1 2", 4, "\"1 2\" is not");
	refused("+1", 4, "\"+1\" is not");
	refused("3-1", 4, "\"3-1\" runs backwards");
	refused("0,4", 4, "\"4\" names a CPU past the last one online (4 CPUs: 0-3)");
	refused("0-4", 4, "\"0-4\" names a CPU past");
	refused("256", 1000, "\"256\" names a CPU past");
	refused("99999999999999999999999", 4, "names a CPU past");
	refused("0", 0, "no CPUs");
}

HT_TEST(error_buffer_small_or_absent)
{
	struct cpulist l;
	char err[8];

	HT_CHECK_EQ(cpulist_parse("x", 4, &l, err, sizeof(err)), -1);
	HT_CHECK_EQ(strlen(err), 7); /* truncated, NUL-terminated */
	HT_CHECK_EQ(cpulist_parse("x", 4, &l, NULL, 0), -1);
}

HT_TEST(iteration_across_words)
{
	static const unsigned want[] = { 0, 63, 64, 127, 128, 200, 255 };
	struct cpulist l;
	unsigned cpu, i = 0;

	cpulist_clear(&l);
	for (unsigned k = 0; k < sizeof(want) / sizeof(want[0]); k++)
		cpulist_set(&l, want[k]);
	cpulist_set(&l, 256); /* out of range: ignored */
	HT_CHECK_EQ(cpulist_count(&l), 7);
	cpulist_for_each (cpu, &l) {
		HT_CHECK(i < 7 && cpu == want[i], "step %u: expected cpu %u, saw %u", i, i < 7 ? want[i] : 0,
			 cpu);
		i++;
	}
	HT_CHECK_EQ(i, 7);
	HT_CHECK_EQ(cpulist_next(&l, 201), 255);
	HT_CHECK_EQ(cpulist_next(&l, 256), CPULIST_MAX_CPUS);
	HT_CHECK(!cpulist_test(&l, 256), "cpu 256 is past the bitmap");
	char buf[64];
	cpulist_format(&l, buf, sizeof(buf));
	HT_CHECK_STR(buf, "0,63-64,127-128,200,255");
}

HT_TEST(format_truncation)
{
	struct cpulist l;
	char buf[6];

	cpulist_parse("0,2-3,5,7", 8, &l, NULL, 0);
	int n = cpulist_format(&l, buf, sizeof(buf));
	HT_CHECK_EQ(n, strlen("0,2-3,5,7"));
	HT_CHECK_STR(buf, "0,2-3");
	cpulist_clear(&l);
	HT_CHECK_EQ(cpulist_format(&l, buf, sizeof(buf)), 0);
	HT_CHECK_STR(buf, "");
}

/* Random bitmaps: the printed form parses back to the same bits, and the
 * count agrees with a plain bit loop. */
HT_TEST(round_trip_random)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;
	unsigned bad = 0;

	for (int iter = 0; iter < 2000; iter++) {
		struct cpulist a, b;
		char buf[2048];
		unsigned ref = 0;

		for (int w = 0; w < 4; w++) {
			s ^= s << 13, s ^= s >> 7, s ^= s << 17;
			/* Sparse, dense and run-heavy words alike. */
			a.bits[w] = iter % 3 == 0   ? s
				    : iter % 3 == 1 ? s & (s >> 1) & (s >> 2)
						    : s | (s << 1);
		}
		for (unsigned c = 0; c < CPULIST_MAX_CPUS; c++)
			ref += (a.bits[c / 64] >> (c % 64)) & 1;
		cpulist_format(&a, buf, sizeof(buf));
		int rc = cpulist_parse(buf, CPULIST_MAX_CPUS, &b, NULL, 0);
		if ((ref && rc != 0) || (rc == 0 && memcmp(&a, &b, sizeof(a)) != 0) ||
		    cpulist_count(&a) != ref) {
			if (bad++ < 3)
				HT_CHECK(0, "round trip of \"%s\" failed (rc %d)", buf, rc);
		}
	}
	HT_CHECK_EQ(bad, 0);
}

HT_MAIN("cpulist")
