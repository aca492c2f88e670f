/* Host tests of the freestanding support library: string routines and
 * printf against the host libc, cmdline rules and fuzzing, glob against
 * fnmatch(3), and the spinlock under real thread contention. */
#include <fnmatch.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/host/hosttest.h"

#include "lib/cmdline.h"
#include "lib/glob.h"
#include "lib/printf.h"
#include "lib/spinlock.h"
#include "lib/string.h"

/* lib/string.h renamed the standard names to kstr_* for this build; undo
 * that here so that plain names are the host libc (the reference) and the
 * code under test is always called as kstr_*. */
#undef memcpy
#undef memmove
#undef memset
#undef memcmp
#undef strlen
#undef strnlen
#undef strcmp
#undef strncmp
#undef strchr
#undef strrchr
#undef strstr
#undef strlcpy
#undef str_starts_with

/* Report at most a few mismatches of a large loop one by one, then the
 * total, so that a broken routine does not flood the log. */
#define LOOP_CHECK(bad, cond, ...)                   \
	do {                                         \
		if (!(cond) && (bad)++ < 5)          \
			HT_CHECK(cond, __VA_ARGS__); \
	} while (0)

/* Deterministic xorshift64*: the fuzz and random tables are repeatable. */
static uint64_t rng_state;

static void rng_seed(uint64_t seed)
{
	rng_state = seed ? seed : 1;
}

static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

static unsigned rng_below(unsigned n)
{
	return (unsigned)(rng_next() % n);
}

static int sign(int v)
{
	return (v > 0) - (v < 0);
}

/* ---------------------------------------------------------------- string */

HT_TEST(memcpy_sizes_and_alignments)
{
	unsigned char src[96], dst[96], want[96];
	int bad = 0;

	for (int i = 0; i < 96; i++)
		src[i] = (unsigned char)(i * 7 + 1);
	for (size_t n = 0; n <= 65; n++) {
		for (int so = 0; so < 8; so++) {
			for (int dof = 0; dof < 8; dof++) {
				void *ret;

				memset(dst, 0xEE, sizeof(dst));
				memset(want, 0xEE, sizeof(want));
				for (size_t k = 0; k < n; k++)
					want[dof + k] = src[so + k];
				ret = kstr_memcpy(dst + dof, src + so, n);
				LOOP_CHECK(bad, ret == dst + dof,
					   "n=%zu so=%d do=%d: returned %p, not dst %p", n, so, dof, ret,
					   (void *)(dst + dof));
				LOOP_CHECK(bad, memcmp(dst, want, sizeof(dst)) == 0,
					   "n=%zu src+%d dst+%d: copy or surrounding bytes wrong", n, so,
					   dof);
			}
		}
	}
	HT_CHECK(bad == 0, "%d memcpy cases wrong", bad);
}

HT_TEST(memmove_overlap_both_directions)
{
	unsigned char buf[160], want[160], tmp[160];
	int bad = 0, cases = 0;

	for (size_t n = 0; n <= 65; n++) {
		for (int so = 0; so <= 40; so++) {
			for (int dof = 0; dof <= 40; dof++) {
				void *ret;

				for (int i = 0; i < 160; i++)
					buf[i] = want[i] = (unsigned char)(i ^ 0x5A);
				/* Reference: through a separate buffer, which is
				 * what memmove must behave like. */
				for (size_t k = 0; k < n; k++)
					tmp[k] = want[so + k];
				for (size_t k = 0; k < n; k++)
					want[dof + k] = tmp[k];
				ret = kstr_memmove(buf + dof, buf + so, n);
				cases++;
				LOOP_CHECK(bad, ret == buf + dof, "returned %p, not dst", ret);
				LOOP_CHECK(bad, memcmp(buf, want, sizeof(buf)) == 0,
					   "n=%zu src=%d dst=%d (%s): wrong bytes", n, so, dof,
					   dof > so   ? "dst above src"
					   : dof < so ? "dst below src"
						      : "same");
			}
		}
	}
	HT_CHECK_EQ(cases, 66 * 41 * 41);
	HT_CHECK(bad == 0, "%d memmove cases wrong", bad);
}

HT_TEST(memset_sizes_values_alignments)
{
	static const int values[] = { 0, 0xA5, 0x1FF, -1, 0x80 };
	unsigned char buf[96];
	int bad = 0;

	for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
		for (size_t n = 0; n <= 65; n++) {
			for (int off = 0; off < 8; off++) {
				unsigned char b = (unsigned char)values[v];
				bool ok = true;

				memset(buf, 0x11, sizeof(buf));
				if (kstr_memset(buf + off, values[v], n) != buf + off)
					ok = false;
				for (int i = 0; i < 96; i++) {
					bool inside = i >= off && (size_t)i < off + n;

					if (buf[i] != (inside ? b : 0x11))
						ok = false;
				}
				LOOP_CHECK(bad, ok, "value %#x n=%zu off=%d", values[v], n, off);
			}
		}
	}
	HT_CHECK(bad == 0, "%d memset cases wrong", bad);
}

HT_TEST(memcmp_sign_and_unsigned_bytes)
{
	unsigned char a[64], b[64];
	int bad = 0;

	rng_seed(1);
	for (int iter = 0; iter < 20000; iter++) {
		size_t n = rng_below(65);
		size_t diff = n ? rng_below((unsigned)n) : 0;

		for (size_t i = 0; i < 64; i++)
			a[i] = b[i] = (unsigned char)rng_next();
		if (n && rng_below(4))
			b[diff] = (unsigned char)rng_next();
		LOOP_CHECK(bad, sign(kstr_memcmp(a, b, n)) == sign(memcmp(a, b, n)),
			   "n=%zu diff at %zu: %#x vs %#x: got %d, libc %d", n, diff, a[diff], b[diff],
			   kstr_memcmp(a, b, n), memcmp(a, b, n));
	}
	HT_CHECK(bad == 0, "%d memcmp cases wrong", bad);
	/* Bytes compare as unsigned char (C11 7.24.4p1): 0x80 > 0x7f. */
	HT_CHECK(kstr_memcmp("\x80", "\x7f", 1) > 0, "0x80 must compare above 0x7f");
	HT_CHECK_EQ(kstr_memcmp("abc", "abd", 2), 0);
	HT_CHECK_EQ(kstr_memcmp(NULL, NULL, 0), 0);
}

HT_TEST(strlen_strnlen)
{
	char unterminated[5] = { 'a', 'b', 'c', 'd', 'e' };

	HT_CHECK_EQ(kstr_strlen(""), 0);
	HT_CHECK_EQ(kstr_strlen("a"), 1);
	HT_CHECK_EQ(kstr_strlen("hello, world"), 12);
	HT_CHECK_EQ(kstr_strlen("\xff\x80"), 2);
	HT_CHECK_EQ(kstr_strnlen("hello", 0), 0);
	HT_CHECK_EQ(kstr_strnlen("hello", 3), 3);
	HT_CHECK_EQ(kstr_strnlen("hello", 5), 5);
	HT_CHECK_EQ(kstr_strnlen("hello", 100), 5);
	/* ASan turns a read past the bound into a failure. */
	HT_CHECK_EQ(kstr_strnlen(unterminated, sizeof(unterminated)), 5);
	HT_CHECK_EQ(kstr_strnlen(unterminated, 2), 2);
}

static const char *const str_samples[] = {
	"",      "a",    "b",    "ab",    "abc",  "abd",         "abcd",      "abcabc",       "b\x80",
	"b\x7f", "\xff", "\x01", "hello", "hell", "hello world", "pmu.count", "pmu.counting", "pmu",
};
#define NSAMPLES (sizeof(str_samples) / sizeof(str_samples[0]))

HT_TEST(strcmp_strncmp_against_libc)
{
	int bad = 0;

	for (size_t i = 0; i < NSAMPLES; i++) {
		for (size_t j = 0; j < NSAMPLES; j++) {
			const char *a = str_samples[i], *b = str_samples[j];

			LOOP_CHECK(bad, sign(kstr_strcmp(a, b)) == sign(strcmp(a, b)),
				   "strcmp(\"%s\", \"%s\"): got %d, libc %d", a, b, kstr_strcmp(a, b),
				   strcmp(a, b));
			for (size_t n = 0; n <= 13; n++)
				LOOP_CHECK(bad, sign(kstr_strncmp(a, b, n)) == sign(strncmp(a, b, n)),
					   "strncmp(\"%s\", \"%s\", %zu): got %d, libc %d", a, b, n,
					   kstr_strncmp(a, b, n), strncmp(a, b, n));
		}
	}
	HT_CHECK(bad == 0, "%d comparisons disagree with libc", bad);
}

HT_TEST(strchr_strrchr_against_libc)
{
	static const int chars[] = { 'a', 'b', 'c', 'l', 'o', '.', 0, 0x80, 0xff, 0x100 + 'a', -1 };
	int bad = 0;

	for (size_t i = 0; i < NSAMPLES; i++) {
		for (size_t k = 0; k < sizeof(chars) / sizeof(chars[0]); k++) {
			const char *s = str_samples[i];
			int c = chars[k];

			LOOP_CHECK(bad, kstr_strchr(s, c) == strchr(s, c),
				   "strchr(\"%s\", %#x): got offset %td, libc %td", s, c,
				   kstr_strchr(s, c) ? kstr_strchr(s, c) - s : -1,
				   strchr(s, c) ? strchr(s, c) - s : -1);
			LOOP_CHECK(bad, kstr_strrchr(s, c) == strrchr(s, c),
				   "strrchr(\"%s\", %#x): got offset %td, libc %td", s, c,
				   kstr_strrchr(s, c) ? kstr_strrchr(s, c) - s : -1,
				   strrchr(s, c) ? strrchr(s, c) - s : -1);
		}
	}
	HT_CHECK(bad == 0, "%d searches disagree with libc", bad);
	/* The terminator itself is found (C11 7.24.5.2p2). */
	{
		const char *s = "xyz";

		HT_CHECK(kstr_strchr(s, 0) == s + 3, "strchr(s, 0) must point at the NUL");
		HT_CHECK(kstr_strrchr(s, 0) == s + 3, "strrchr(s, 0) must point at the NUL");
	}
}

HT_TEST(strstr_against_libc)
{
	int bad = 0;

	for (size_t i = 0; i < NSAMPLES; i++) {
		for (size_t j = 0; j < NSAMPLES; j++) {
			const char *h = str_samples[i], *n = str_samples[j];

			LOOP_CHECK(bad, kstr_strstr(h, n) == strstr(h, n),
				   "strstr(\"%s\", \"%s\"): got offset %td, libc %td", h, n,
				   kstr_strstr(h, n) ? kstr_strstr(h, n) - h : -1,
				   strstr(h, n) ? strstr(h, n) - h : -1);
		}
	}
	HT_CHECK(bad == 0, "%d searches disagree with libc", bad);
	{
		const char *h = "aaab";

		HT_CHECK(kstr_strstr(h, "aab") == h + 1, "overlapping partial match");
		HT_CHECK(kstr_strstr(h, "") == h, "empty needle is found at the start");
		HT_CHECK(kstr_strstr("", "") != NULL, "empty in empty");
	}
}

HT_TEST(strlcpy_truncation)
{
	static const char *const srcs[] = { "", "a", "hello", "exactly16chars!!" };
	char dst[24];
	int bad = 0;

	for (size_t s = 0; s < sizeof(srcs) / sizeof(srcs[0]); s++) {
		size_t len = strlen(srcs[s]);

		for (size_t size = 0; size <= len + 2; size++) {
			size_t ret, copied = size ? (len < size - 1 ? len : size - 1) : 0;
			bool ok = true;

			memset(dst, '#', sizeof(dst));
			ret = kstr_strlcpy(dst, srcs[s], size);
			if (ret != len)
				ok = false;
			if (size && (memcmp(dst, srcs[s], copied) != 0 || dst[copied] != '\0'))
				ok = false;
			/* Nothing at or past dst[size] may change. */
			for (size_t i = size; i < sizeof(dst); i++)
				if (dst[i] != '#')
					ok = false;
			LOOP_CHECK(bad, ok, "strlcpy(\"%s\", size %zu): returned %zu, dst \"%.*s\"", srcs[s],
				   size, ret, (int)sizeof(dst), dst);
		}
	}
	HT_CHECK(bad == 0, "%d strlcpy cases wrong", bad);
	HT_CHECK_EQ(kstr_strlcpy(NULL, "abc", 0), 3);
}

HT_TEST(str_starts_with)
{
	HT_CHECK(kstr_str_starts_with("pmu.count", "pmu."), "prefix");
	HT_CHECK(kstr_str_starts_with("pmu.count", ""), "empty prefix");
	HT_CHECK(kstr_str_starts_with("", ""), "empty both");
	HT_CHECK(kstr_str_starts_with("pmu", "pmu"), "whole string");
	HT_CHECK(!kstr_str_starts_with("pm", "pmu"), "prefix longer than string");
	HT_CHECK(!kstr_str_starts_with("pmx.count", "pmu"), "mismatch");
	HT_CHECK(!kstr_str_starts_with("", "a"), "empty string, non-empty prefix");
}

/* ---------------------------------------------------------------- printf */

#define PF_BUF 600
#define PF_WHY (2 * PF_BUF + 200) /* room for both outputs in a message */

/* Format with both implementations; returns true when return values and
 * output bytes agree (compared as bytes: %c may print a NUL). */
__attribute__((format(printf, 2, 3))) static bool pf_compare(char *why, const char *fmt, ...)
{
	char want[PF_BUF], got[PF_BUF + 16];
	va_list ap, ap2;
	int wn, gn;

	va_start(ap, fmt);
	va_copy(ap2, ap);
	wn = vsnprintf(want, PF_BUF, fmt, ap);
	memset(got, 0x5A, sizeof(got));
	gn = kvsnprintf(got, PF_BUF, fmt, ap2);
	va_end(ap2);
	va_end(ap);
	if (wn != gn || wn < 0 || wn >= PF_BUF || memcmp(want, got, (size_t)wn + 1) != 0 ||
	    got[PF_BUF] != 0x5A) {
		snprintf(why, PF_WHY, "fmt \"%s\": libc %d \"%s\", ours %d \"%.*s\"", fmt, wn, want, gn,
			 PF_BUF - 1, got);
		return false;
	}
	return true;
}

enum pf_len { PF_HH, PF_H, PF_NONE, PF_L, PF_LL, PF_Z, PF_T, PF_J, PF_NLEN };
static const char *const pf_len_text[PF_NLEN] = {
	[PF_HH] = "hh", [PF_H] = "h", [PF_NONE] = "", [PF_L] = "l",
	[PF_LL] = "ll", [PF_Z] = "z", [PF_T] = "t",   [PF_J] = "j",
};

/* Pass v as the type the length modifier names, so that both sides read
 * an argument of the right type. */
static bool pf_compare_int(char *why, const char *fmt, enum pf_len len, bool is_signed, uint64_t v)
{
	int64_t s = (int64_t)v;

	switch (len) {
	case PF_HH:
	case PF_H:
	case PF_NONE: return is_signed ? pf_compare(why, fmt, (int)s) : pf_compare(why, fmt, (unsigned)v);
	case PF_L: return is_signed ? pf_compare(why, fmt, (long)s) : pf_compare(why, fmt, (unsigned long)v);
	case PF_LL:
		return is_signed ? pf_compare(why, fmt, (long long)s)
				 : pf_compare(why, fmt, (unsigned long long)v);
	case PF_Z: return pf_compare(why, fmt, (size_t)v);
	case PF_T: return pf_compare(why, fmt, (ptrdiff_t)s);
	case PF_J: return is_signed ? pf_compare(why, fmt, (intmax_t)s) : pf_compare(why, fmt, (uintmax_t)v);
	case PF_NLEN: break;
	}
	return false;
}

static const uint64_t pf_values[] = {
	0,
	1,
	(uint64_t)-1,
	7,
	8,
	9,
	10,
	15,
	16,
	42,
	127,
	128,
	255,
	256,
	(uint64_t)-128,
	(uint64_t)-129,
	32767,
	32768,
	65535,
	65536,
	0x7fffffff,
	(uint64_t)INT32_MIN,
	0xffffffff,
	0x100000000ull,
	123456789012345ull,
	0xdeadbeefcafeull,
	INT64_MAX,
	(uint64_t)INT64_MIN,
	UINT64_MAX,
};

HT_TEST(printf_integers_match_libc)
{
	static const char *const widths[] = { "", "1", "5", "25" };
	static const char *const precs[] = { "", ".", ".0", ".1", ".5", ".25" };
	static const char convs[] = "diuoxX";
	const char flag_chars[] = "-+ #0";
	char fmt[32], why[PF_WHY];
	long compared = 0;
	int bad = 0;

	for (unsigned flags = 0; flags < 32; flags++) {
		char fl[8];
		size_t nf = 0;

		for (int b = 0; b < 5; b++)
			if (flags & (1u << b))
				fl[nf++] = flag_chars[b];
		fl[nf] = '\0';
		for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++)
			for (size_t p = 0; p < sizeof(precs) / sizeof(precs[0]); p++)
				for (size_t c = 0; convs[c]; c++)
					for (int len = 0; len < PF_NLEN; len++) {
						snprintf(fmt, sizeof(fmt), "<%%%s%s%s%s%c>", fl, widths[w],
							 precs[p], pf_len_text[len], convs[c]);
						for (size_t v = 0;
						     v < sizeof(pf_values) / sizeof(pf_values[0]); v++) {
							compared++;
							LOOP_CHECK(bad,
								   pf_compare_int(why, fmt, (enum pf_len)len,
										  convs[c] == 'd' ||
											  convs[c] == 'i',
										  pf_values[v]),
								   "value %#llx: %s",
								   (unsigned long long)pf_values[v], why);
						}
					}
	}
	HT_CHECK_EQ(compared, 32L * 4 * 6 * 6 * 8 * (long)(sizeof(pf_values) / sizeof(pf_values[0])));
	HT_CHECK(bad == 0, "%d of %ld formats differ from libc", bad, compared);
}

HT_TEST(printf_star_width_and_precision_match_libc)
{
	static const int stars[] = { -30, -7, -1, 0, 1, 3, 7, 30 };
	static const char *const fmts[] = { "[%*d]", "[%-*x]", "[%0*d]", "[%*s]", "[%-*s]", "[%*c]" };
	static const char *const pfmts[] = { "[%.*d]", "[%.*s]", "[%#.*o]", "[%+.*i]", "[%08.*d]" };
	char why[PF_WHY];
	int bad = 0;

	for (size_t i = 0; i < sizeof(stars) / sizeof(stars[0]); i++) {
		int s = stars[i];

		for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++) {
			bool ok;

			char conv = fmts[f][strlen(fmts[f]) - 2]; /* the letter before ']' */

			if (conv == 's')
				ok = pf_compare(why, fmts[f], s, "abc");
			else if (conv == 'c')
				ok = pf_compare(why, fmts[f], s, 'q');
			else
				ok = pf_compare(why, fmts[f], s, -42);
			LOOP_CHECK(bad, ok, "star %d: %s", s, why);
		}
		for (size_t f = 0; f < sizeof(pfmts) / sizeof(pfmts[0]); f++) {
			bool ok = strchr(pfmts[f], 's') ? pf_compare(why, pfmts[f], s, "abcdefgh")
							: pf_compare(why, pfmts[f], s, 1234);

			LOOP_CHECK(bad, ok, "star precision %d: %s", s, why);
		}
		LOOP_CHECK(bad, pf_compare(why, "[%*.*d]", s, s, 99), "both stars %d: %s", s, why);
	}
	HT_CHECK(bad == 0, "%d star formats differ from libc", bad);
}

HT_TEST(printf_strings_and_chars_match_libc)
{
	static const char *const flags[] = { "", "-", "0", "-0" };
	static const char *const widths[] = { "", "1", "3", "8", "20" };
	static const char *const precs[] = { "", ".", ".0", ".2", ".5", ".30" };
	static const char *const strs[] = { "", "a", "hello", "hello, world of pmu", "\xff\x80 hi" };
	static const int chars[] = { 'a', 0xff, 0, ' ' };
	char fmt[32], why[PF_WHY];
	int bad = 0;

	for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++)
		for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
			for (size_t p = 0; p < sizeof(precs) / sizeof(precs[0]); p++) {
				snprintf(fmt, sizeof(fmt), "|%%%s%s%ss|", flags[f], widths[w], precs[p]);
				for (size_t s = 0; s < sizeof(strs) / sizeof(strs[0]); s++)
					LOOP_CHECK(bad, pf_compare(why, fmt, strs[s]), "%s", why);
			}
			snprintf(fmt, sizeof(fmt), "|%%%s%sc|", flags[f], widths[w]);
			for (size_t c = 0; c < sizeof(chars) / sizeof(chars[0]); c++)
				LOOP_CHECK(bad, pf_compare(why, fmt, chars[c]), "char %#x: %s", chars[c],
					   why);
		}
	HT_CHECK(bad == 0, "%d string/char formats differ from libc", bad);
}

HT_TEST(printf_mixed_formats_match_libc)
{
	char why[PF_WHY];

	HT_CHECK(pf_compare(why, "cpu %u: %s at %#010llx (%c) %%done %ld", 3u, "PMC0", 0xc1ull, 'x', -5L),
		 "%s", why);
	HT_CHECK(pf_compare(why, "%d%d%d%s%x%%", 1, -2, 3, "", 0xabc), "%s", why);
	/* Odd but valid spellings the format checker would refuse. */
	const char *volatile odd[] = { "%%%%|%%", "%+d % d %+ d % +d %+u", "%---5d|%00005d|%-+-+5d",
				       "%5%|%-5%", "%hhd %hhu %hd %hu %hhx" };
	char buf[16];

	/* The unused trailing 0 keeps -Wformat-security quiet. */
	HT_CHECK(pf_compare(why, odd[0], 0), "%s", why);
	HT_CHECK(pf_compare(why, odd[1], 0, 0, 5, 5, 5u), "%s", why);
	/* glibc prints "%5%" as a bare '%' too, but ASan's printf
	 * interceptor complains about it: compare with the known text. */
	HT_CHECK_EQ(ksnprintf(buf, sizeof(buf), odd[3], 0), 3);
	HT_CHECK_STR(buf, "%|%");
	HT_CHECK(pf_compare(why, odd[2], 1, 2, 3), "%s", why);
	/* hh and h narrow a promoted int (C11 7.21.6.1p7). */
	HT_CHECK(pf_compare(why, odd[4], 300, 300, 70000, 70000, -129), "%s", why);
	HT_CHECK(pf_compare(why, "%zu %zd %td %jd %ju", (size_t)-1, (size_t)5, (ptrdiff_t)-9, INTMAX_MIN,
			    UINTMAX_MAX),
		 "%s", why);
	HT_CHECK(pf_compare(why, "%lld %llu %llx %llo", (long long)INT64_MIN, (unsigned long long)UINT64_MAX,
			    0x8000000000000000ull, (unsigned long long)UINT64_MAX),
		 "%s", why);
	HT_CHECK(pf_compare(why, "%.0d|%.0x|%#.0x|%#.0o|%#o|%#x|%#X", 0, 0u, 0u, 0u, 0u, 0u, 255u), "%s",
		 why);
	HT_CHECK(pf_compare(why, "%s", ""), "%s", why);
	HT_CHECK(pf_compare(why, "no conversions at all"), "%s", why);
}

/* Every buffer size from 0 to past the full length: the prefix, the NUL,
 * the return value, and no byte written at or after buf[size]. */
HT_TEST(printf_truncation_every_size)
{
	static const char *const fmts[] = { "%s|%d|%08x|%-6s|%llu", "%%%c%c%5.3s" };
	int bad = 0, sizes = 0;

	for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++) {
		char want[128];
		int wn = f == 0 ? snprintf(want, sizeof(want), fmts[0], "head", INT32_MIN, 0xbeefu, "ab",
					   (unsigned long long)UINT64_MAX)
				: snprintf(want, sizeof(want), fmts[1], 'x', 'y', "abcdef");

		for (size_t size = 0; size <= (size_t)wn + 3; size++) {
			char *buf = malloc(size + 8);
			int gn;
			bool ok = true;

			memset(buf, 0x5A, size + 8);
			gn = f == 0 ? ksnprintf(buf, size, "%s|%d|%08x|%-6s|%llu", "head", INT32_MIN, 0xbeefu,
						"ab", (unsigned long long)UINT64_MAX)
				    : ksnprintf(buf, size, "%%%c%c%5.3s", 'x', 'y', "abcdef");
			sizes++;
			if (gn != wn)
				ok = false;
			if (size) {
				size_t kept = (size_t)wn < size - 1 ? (size_t)wn : size - 1;

				if (memcmp(buf, want, kept) != 0 || buf[kept] != '\0')
					ok = false;
			}
			for (size_t i = size; i < size + 8; i++)
				if ((unsigned char)buf[i] != 0x5A)
					ok = false;
			LOOP_CHECK(bad, ok, "fmt %zu size %zu: returned %d (want %d), buf \"%.*s\"", f, size,
				   gn, wn, (int)size, buf);
			free(buf);
		}
	}
	HT_CHECK(sizes > 40, "only %d sizes tried", sizes);
	HT_CHECK(bad == 0, "%d truncated outputs wrong", bad);
	HT_CHECK_EQ(ksnprintf(NULL, 0, "%d-%s", 12345, "abc"), 9);
}

HT_TEST(printf_pointer_null_string_and_literals)
{
	char buf[64];
	/* Not literals: the format checker would reject %f with an int. */
	const char *volatile unsupported = "a%5.2fb%d";
	const char *volatile percent_n = "x%ny%d";
	const char *volatile wide = "%ls|%lc|%d";
	const char *volatile trailing = "end%";
	const char *volatile null_str = NULL; /* hidden from -Wformat-overflow */

	HT_CHECK_EQ(ksnprintf(buf, sizeof(buf), "%p", (void *)0x1234), 18);
	HT_CHECK_STR(buf, "0x0000000000001234");
	ksnprintf(buf, sizeof(buf), "%p", (void *)0);
	HT_CHECK_STR(buf, "0x0000000000000000");
	ksnprintf(buf, sizeof(buf), "%p", (void *)UINTPTR_MAX);
	HT_CHECK_STR(buf, "0xffffffffffffffff");
	ksnprintf(buf, sizeof(buf), "[%20p]", (void *)0xabcdef);
	HT_CHECK_STR(buf, "[  0x0000000000abcdef]");
	ksnprintf(buf, sizeof(buf), "[%-20p]", (void *)0xabcdef);
	HT_CHECK_STR(buf, "[0x0000000000abcdef  ]");

	/* A precision bounds the read: the array needs no NUL (ASan checks). */
	{
		static const char abc[3] = { 'a', 'b', 'c' };

		HT_CHECK_EQ(ksnprintf(buf, sizeof(buf), "[%.3s|%.*s]", abc, 2, abc), 8);
		HT_CHECK_STR(buf, "[abc|ab]");
	}

	HT_CHECK_EQ(ksnprintf(buf, sizeof(buf), "%s", null_str), 6);
	HT_CHECK_STR(buf, "(null)");
	ksnprintf(buf, sizeof(buf), "[%8s][%.3s]", null_str, null_str);
	HT_CHECK_STR(buf, "[  (null)][(nu]");

	HT_CHECK_EQ(ksnprintf(buf, sizeof(buf), unsupported, 7), 8);
	HT_CHECK_STR(buf, "a%5.2fb7");
	ksnprintf(buf, sizeof(buf), percent_n, 3);
	HT_CHECK_STR(buf, "x%ny3");
	ksnprintf(buf, sizeof(buf), wide, 5);
	HT_CHECK_STR(buf, "%ls|%lc|5");
	HT_CHECK_EQ(ksnprintf(buf, sizeof(buf), trailing, 0), 4);
	HT_CHECK_STR(buf, "end%");
}

/* --------------------------------------------------------------- cmdline */

struct cfg {
	char tests[32];
	uint64_t cpus, seed;
	bool verbose, takeover;
	int exit;
	struct cmdline_opt opts[6];
	struct cmdline_result res;
};

static const char *const exit_choices[] = { "qemu", "halt", "reboot", NULL };

static void cfg_init(struct cfg *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->tests, "default");
	c->cpus = 1;
	c->seed = 7;
	c->exit = 1;
	c->opts[0] = (struct cmdline_opt){
		.name = "tests", .type = CMDLINE_STR, .dst = c->tests, .dst_size = sizeof(c->tests)
	};
	c->opts[1] = (struct cmdline_opt){
		.name = "cpus", .type = CMDLINE_UINT, .dst = &c->cpus, .min = 1, .max = 256
	};
	c->opts[2] = (struct cmdline_opt){ .name = "verbose", .type = CMDLINE_BOOL, .dst = &c->verbose };
	c->opts[3] = (struct cmdline_opt){
		.name = "exit", .type = CMDLINE_ENUM, .dst = &c->exit, .choices = exit_choices
	};
	c->opts[4] =
		(struct cmdline_opt){ .name = "pmu.takeover", .type = CMDLINE_BOOL, .dst = &c->takeover };
	c->opts[5] = (struct cmdline_opt){
		.name = "seed", .type = CMDLINE_UINT, .dst = &c->seed, .min = 0, .max = UINT64_MAX
	};
}

/* Parse from a heap copy of exactly len bytes, so that ASan flags any read
 * past len. */
static void cfg_parse_n(struct cfg *c, const char *line, size_t len)
{
	char *copy = malloc(len ? len : 1);

	memcpy(copy, line, len);
	cmdline_parse(copy, len, c->opts, 6, &c->res);
	free(copy);
}

static void cfg_parse(struct cfg *c, const char *line)
{
	cfg_parse_n(c, line, strlen(line));
}

static bool cfg_is_default(const struct cfg *c)
{
	return strcmp(c->tests, "default") == 0 && c->cpus == 1 && c->seed == 7 && !c->verbose &&
	       !c->takeover && c->exit == 1;
}

HT_TEST(cmdline_all_types)
{
	struct cfg c;

	cfg_init(&c);
	cfg_parse(&c, "tests=pmu.* cpus=4 verbose exit=reboot pmu.takeover=yes "
		      "seed=0xffffffffffffffff");
	HT_CHECK_EQ(c.res.nerrors, 0);
	HT_CHECK(!c.res.truncated, "short line flagged truncated");
	HT_CHECK(c.res.image == NULL, "image must stay NULL");
	HT_CHECK_STR(c.tests, "pmu.*");
	HT_CHECK_EQ(c.cpus, 4);
	HT_CHECK_EQ(c.verbose, true);
	HT_CHECK_EQ(c.exit, 2);
	HT_CHECK_EQ(c.takeover, true);
	HT_CHECK_EQ(c.seed, UINT64_MAX);
}

HT_TEST(cmdline_empty_and_null)
{
	struct cfg c;

	cfg_init(&c);
	cfg_parse(&c, "");
	HT_CHECK_EQ(c.res.nerrors, 0);
	HT_CHECK(cfg_is_default(&c), "empty line changed a setting");
	cfg_parse(&c, " \t\r\n  ");
	HT_CHECK_EQ(c.res.nerrors, 0);
	HT_CHECK(cfg_is_default(&c), "blank line changed a setting");
	cmdline_parse(NULL, 100, c.opts, 6, &c.res);
	HT_CHECK_EQ(c.res.nerrors, 0);
	HT_CHECK(cfg_is_default(&c), "NULL line changed a setting");
	cmdline_parse("cpus=3", 6, NULL, 0, &c.res);
	HT_CHECK_EQ(c.res.nerrors, 1);
	HT_CHECK_STR(c.res.errors[0], "unknown option 'cpus'");
}

HT_TEST(cmdline_image_path_skipped)
{
	struct cfg c;

	cfg_init(&c);
	cfg_parse(&c, "/build/pmutest.elf tests=x");
	HT_CHECK_EQ(c.res.nerrors, 0);
	HT_CHECK_STR(c.tests, "x");
	cfg_parse(&c, "  pmutest.elf cpus=2");
	HT_CHECK_EQ(c.res.nerrors, 0);
	HT_CHECK_EQ(c.cpus, 2);
	cfg_parse(&c, "build/kernel cpus=3");
	HT_CHECK_EQ(c.res.nerrors, 0);
	HT_CHECK_EQ(c.cpus, 3);
	/* Only the first token can be the image. */
	cfg_parse(&c, "cpus=5 /boot/pmutest.elf");
	HT_CHECK_EQ(c.res.nerrors, 1);
	HT_CHECK_STR(c.res.errors[0], "unknown option '/boot/pmutest.elf'");
	HT_CHECK_EQ(c.cpus, 5);
	/* A first token without '/' or ".elf" is an ordinary option. */
	cfg_parse(&c, "kernel cpus=6");
	HT_CHECK_EQ(c.res.nerrors, 1);
	HT_CHECK_STR(c.res.errors[0], "unknown option 'kernel'");
	HT_CHECK_EQ(c.cpus, 6);
	/* ... and so is one with '='. */
	cfg_parse(&c, "a/b=1");
	HT_CHECK_EQ(c.res.nerrors, 1);
	HT_CHECK_STR(c.res.errors[0], "unknown option 'a/b'");
}

HT_TEST(cmdline_separators_and_quotes)
{
	struct cfg c;

	cfg_init(&c);
	cfg_parse(&c, "\tcpus=9\n\nverbose\r\nexit=qemu   ");
	HT_CHECK_EQ(c.res.nerrors, 0);
	HT_CHECK_EQ(c.cpus, 9);
	HT_CHECK_EQ(c.verbose, true);
	HT_CHECK_EQ(c.exit, 0);
	cfg_parse(&c, "tests=\"pmu.a pmu.b\" cpus=\"12\"");
	HT_CHECK_EQ(c.res.nerrors, 0);
	HT_CHECK_STR(c.tests, "pmu.a pmu.b");
	HT_CHECK_EQ(c.cpus, 12);
	cfg_parse(&c, "\"tests=a b\"");
	HT_CHECK_EQ(c.res.nerrors, 0);
	HT_CHECK_STR(c.tests, "a b");
	cfg_parse(&c, "tests=\"tab\there\"");
	HT_CHECK_EQ(c.res.nerrors, 0);
	HT_CHECK_STR(c.tests, "tab\there");
	cfg_parse(&c, "tests=\"\"");
	HT_CHECK_EQ(c.res.nerrors, 0);
	HT_CHECK_STR(c.tests, "");
}

HT_TEST(cmdline_unterminated_quote)
{
	struct cfg c;

	cfg_init(&c);
	cfg_parse(&c, "cpus=2 tests=\"abc verbose");
	HT_CHECK_EQ(c.res.nerrors, 1);
	HT_CHECK_STR(c.res.errors[0], "unterminated quote at offset 13");
	HT_CHECK_STR(c.tests, "default");
	HT_CHECK_EQ(c.verbose, false); /* inside the open quote: not a token */
	HT_CHECK_EQ(c.cpus, 2);
}

HT_TEST(cmdline_unknown_and_bare)
{
	struct cfg c;

	cfg_init(&c);
	cfg_parse(&c, "foo=1 bar cpus verbose tests");
	HT_CHECK_EQ(c.res.nerrors, 4);
	HT_CHECK_STR(c.res.errors[0], "unknown option 'foo'");
	HT_CHECK_STR(c.res.errors[1], "unknown option 'bar'");
	HT_CHECK_STR(c.res.errors[2], "option 'cpus' needs a value (cpus=...)");
	HT_CHECK_STR(c.res.errors[3], "option 'tests' needs a value (tests=...)");
	HT_CHECK_EQ(c.verbose, true);
	HT_CHECK_EQ(c.cpus, 1);
	cfg_parse(&c, "=5");
	HT_CHECK_EQ(c.res.nerrors, 1);
	HT_CHECK_STR(c.res.errors[0], "unknown option ''");
	/* Names match exactly: no prefixes, no case folding. */
	cfg_parse(&c, "cpu=2 CPUS=2 cpus2=2 pmu=1");
	HT_CHECK_EQ(c.res.nerrors, 4);
	HT_CHECK_EQ(c.cpus, 1);
}

struct uint_case {
	const char *line;
	uint64_t cpus, seed; /* expected after the parse */
	const char *error;   /* NULL: no error */
};

HT_TEST(cmdline_uint_values)
{
	static const struct uint_case cases[] = {
		{ "cpus=256", 256, 7, NULL },
		{ "cpus=1", 1, 7, NULL },
		{ "cpus=010", 10, 7, NULL },
		{ "cpus=0x10", 16, 7, NULL },
		{ "cpus=0X1f", 31, 7, NULL },
		{ "cpus=0xFF", 255, 7, NULL },
		{ "cpus=0", 1, 7, "cpus=0: out of range 1..256" },
		{ "cpus=257", 1, 7, "cpus=257: out of range 1..256" },
		{ "cpus=abc", 1, 7, "cpus=abc: not a number" },
		{ "cpus=", 1, 7, "cpus=: not a number" },
		{ "cpus=0x", 1, 7, "cpus=0x: not a number" },
		{ "cpus=0xg", 1, 7, "cpus=0xg: not a number" },
		{ "cpus=-1", 1, 7, "cpus=-1: not a number" },
		{ "cpus=+1", 1, 7, "cpus=+1: not a number" },
		{ "cpus=1a", 1, 7, "cpus=1a: not a number" },
		{ "cpus=4k", 1, 7, "cpus=4k: not a number" },
		{ "seed=0", 1, 0, NULL },
		{ "seed=18446744073709551615", 1, UINT64_MAX, NULL },
		{ "seed=0xFFFFFFFFFFFFFFFF", 1, UINT64_MAX, NULL },
		{ "seed=18446744073709551616", 1, 7, "seed=18446744073709551616: does not fit in 64 bits" },
		{ "seed=0x10000000000000000", 1, 7, "seed=0x10000000000000000: does not fit in 64 bits" },
		{ "seed=99999999999999999999x", 1, 7, "seed=99999999999999999999x: not a number" },
		{ "seed=00000000000000000000000000000042", 1, 42, NULL },
		{ "cpus=2 cpus=3", 3, 7, NULL },
		{ "cpus=2 cpus=999", 2, 7, "cpus=999: out of range 1..256" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct uint_case *t = &cases[i];
		struct cfg c;

		cfg_init(&c);
		cfg_parse(&c, t->line);
		HT_CHECK(c.cpus == t->cpus && c.seed == t->seed,
			 "\"%s\": cpus %llu seed %llu, expected %llu %llu", t->line,
			 (unsigned long long)c.cpus, (unsigned long long)c.seed, (unsigned long long)t->cpus,
			 (unsigned long long)t->seed);
		HT_CHECK(c.res.nerrors == (t->error ? 1u : 0u), "\"%s\": %u errors (first: %s)", t->line,
			 c.res.nerrors, c.res.errors[0]);
		if (t->error)
			HT_CHECK_STR(c.res.errors[0], t->error);
	}
}

HT_TEST(cmdline_bool_values)
{
	static const char *const yes[] = { "1", "yes", "on", "true", "YES", "On", "TRUE" };
	static const char *const no[] = { "0", "no", "off", "false", "NO", "Off", "fAlSe" };
	char line[64];
	struct cfg c;

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		cfg_init(&c);
		snprintf(line, sizeof(line), "verbose=%s pmu.takeover=%s", yes[i], yes[i]);
		cfg_parse(&c, line);
		HT_CHECK(c.res.nerrors == 0 && c.verbose && c.takeover, "\"%s\"", line);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		cfg_init(&c);
		c.verbose = c.takeover = true;
		snprintf(line, sizeof(line), "verbose=%s pmu.takeover=%s", no[i], no[i]);
		cfg_parse(&c, line);
		HT_CHECK(c.res.nerrors == 0 && !c.verbose && !c.takeover, "\"%s\"", line);
	}
	cfg_init(&c);
	c.verbose = true;
	cfg_parse(&c, "verbose=maybe verbose= verbose=yess verbose=2");
	HT_CHECK_EQ(c.res.nerrors, 4);
	HT_CHECK_STR(c.res.errors[0], "verbose=maybe: not a boolean (0/1/yes/no/on/off/true/false)");
	HT_CHECK_STR(c.res.errors[1], "verbose=: not a boolean (0/1/yes/no/on/off/true/false)");
	HT_CHECK_EQ(c.verbose, true);
}

HT_TEST(cmdline_enum_values)
{
	struct cfg c;

	cfg_init(&c);
	cfg_parse(&c, "exit=qemu");
	HT_CHECK_EQ(c.res.nerrors, 0);
	HT_CHECK_EQ(c.exit, 0);
	cfg_parse(&c, "exit=reboot");
	HT_CHECK_EQ(c.exit, 2);
	cfg_init(&c);
	cfg_parse(&c, "exit=Reboot exit= exit=qemu2");
	HT_CHECK_EQ(c.res.nerrors, 3);
	HT_CHECK_STR(c.res.errors[0], "exit=Reboot: not one of qemu, halt, reboot");
	HT_CHECK_STR(c.res.errors[1], "exit=: not one of qemu, halt, reboot");
	HT_CHECK_STR(c.res.errors[2], "exit=qemu2: not one of qemu, halt, reboot");
	HT_CHECK_EQ(c.exit, 1);
}

HT_TEST(cmdline_enum_long_choice_list)
{
	static const char *const many[] = {
		"alpha-choice",   "beta-choice",  "gamma-choice", "delta-choice",
		"epsilon-choice", "zeta-choice",  "eta-choice",   "theta-choice",
		"iota-choice",    "kappa-choice", NULL,
	};
	int v = -1;
	struct cmdline_opt opt = { .name = "mode", .type = CMDLINE_ENUM, .dst = &v, .choices = many };
	struct cmdline_result res;

	cmdline_parse("mode=x", 6, &opt, 1, &res);
	HT_CHECK_EQ(res.nerrors, 1);
	HT_CHECK(strnlen(res.errors[0], sizeof(res.errors[0])) == sizeof(res.errors[0]) - 1,
		 "message should fill and be cut at %zu bytes: \"%s\"", sizeof(res.errors[0]) - 1,
		 res.errors[0]);
	HT_CHECK(strncmp(res.errors[0], "mode=x: not one of alpha-choice, beta-choice", 44) == 0,
		 "message start: \"%s\"", res.errors[0]);
	HT_CHECK_EQ(v, -1);
	cmdline_parse("mode=kappa-choice", 17, &opt, 1, &res);
	HT_CHECK_EQ(res.nerrors, 0);
	HT_CHECK_EQ(v, 9);
}

HT_TEST(cmdline_string_length)
{
	char line[128];
	struct cfg c;

	cfg_init(&c);
	/* 31 characters fit tests[32] with its NUL; 32 do not. */
	snprintf(line, sizeof(line), "tests=%s", "0123456789012345678901234567890");
	cfg_parse(&c, line);
	HT_CHECK_EQ(c.res.nerrors, 0);
	HT_CHECK_STR(c.tests, "0123456789012345678901234567890");
	cfg_init(&c);
	snprintf(line, sizeof(line), "tests=%s", "01234567890123456789012345678901");
	cfg_parse(&c, line);
	HT_CHECK_EQ(c.res.nerrors, 1);
	HT_CHECK_STR(c.res.errors[0], "tests=01234567890123456789012345678901: longer than 31 characters");
	HT_CHECK_STR(c.tests, "default");
	/* Quotes do not count toward the length. */
	cfg_parse(&c, "tests=\"0123456789012345678901234567890\"");
	HT_CHECK_EQ(c.res.nerrors, 0);
	HT_CHECK_STR(c.tests, "0123456789012345678901234567890");
}

HT_TEST(cmdline_long_value_is_cut_in_message)
{
	char line[300];
	struct cfg c;

	cfg_init(&c);
	strcpy(line, "cpus=");
	memset(line + 5, 'x', 100);
	line[105] = '\0';
	cfg_parse(&c, line);
	HT_CHECK_EQ(c.res.nerrors, 1);
	HT_CHECK_STR(c.res.errors[0], "cpus=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...: not a number");
	/* Past the 128-byte value limit nothing is parsed at all. */
	memset(line + 5, '1', 200);
	line[205] = '\0';
	cfg_parse(&c, line);
	HT_CHECK_EQ(c.res.nerrors, 1);
	HT_CHECK_STR(c.res.errors[0], "cpus=1111111111111111111111111111111111111...: value too long");
	memset(line + 5, '9', 40);
	line[45] = '\0';
	cfg_parse(&c, line);
	HT_CHECK_EQ(c.res.nerrors, 1);
	HT_CHECK_STR(c.res.errors[0],
		     "cpus=9999999999999999999999999999999999999999: does not fit in 64 bits");
}

HT_TEST(cmdline_non_printable_bytes)
{
	struct cfg c;

	cfg_init(&c);
	cfg_parse(&c, "cpus=4 te\x01sts=1 verbose");
	HT_CHECK_EQ(c.res.nerrors, 1);
	HT_CHECK_STR(c.res.errors[0], "non-printable byte 0x01 at offset 9");
	HT_CHECK_EQ(c.cpus, 4);
	HT_CHECK_EQ(c.verbose, true);

	cfg_init(&c);
	cfg_parse(&c, "cpus=\x7f tests=\xff\x80 exit=halt\x1b");
	HT_CHECK_EQ(c.res.nerrors, 3);
	HT_CHECK_STR(c.res.errors[0], "non-printable byte 0x7f at offset 5");
	HT_CHECK_STR(c.res.errors[1], "non-printable byte 0xff at offset 13");
	HT_CHECK_STR(c.res.errors[2], "non-printable byte 0x1b at offset 25");
	HT_CHECK(cfg_is_default(&c), "a token with a bad byte must not be applied");

	/* Inside quotes too. */
	cfg_init(&c);
	cfg_parse(&c, "tests=\"a\x02\"");
	HT_CHECK_EQ(c.res.nerrors, 1);
	HT_CHECK_STR(c.res.errors[0], "non-printable byte 0x02 at offset 8");
	HT_CHECK_STR(c.tests, "default");
}

HT_TEST(cmdline_len_and_nul_bound_the_line)
{
	static const char nul_inside[] = "cpus=3\0cpus=5";
	struct cfg c;

	cfg_init(&c);
	cfg_parse_n(&c, "cpus=12", 6);
	HT_CHECK_EQ(c.res.nerrors, 0);
	HT_CHECK_EQ(c.cpus, 1);
	cfg_parse_n(&c, "cpus=12", 7);
	HT_CHECK_EQ(c.cpus, 12);
	cfg_parse_n(&c, nul_inside, sizeof(nul_inside));
	HT_CHECK_EQ(c.res.nerrors, 0);
	HT_CHECK_EQ(c.cpus, 3);
	cfg_parse_n(&c, "verbose", 0);
	HT_CHECK_EQ(c.verbose, false);
}

HT_TEST(cmdline_truncation)
{
	char *line = malloc(5000);
	struct cfg c;

	/* A token straddles byte 4096: cut, flagged and not applied. */
	memset(line, ' ', 5000);
	memcpy(line, "verbose", 7);
	memcpy(line + 4090, "cpus=123456", 11);
	cfg_init(&c);
	cfg_parse_n(&c, line, 5000);
	HT_CHECK(c.res.truncated, "5000-byte line not flagged truncated");
	HT_CHECK_EQ(c.res.nerrors, 2);
	HT_CHECK_STR(c.res.errors[0], "command line longer than 4096 bytes: the rest is ignored");
	HT_CHECK_STR(c.res.errors[1], "token at offset 4090 cut by the length limit: ignored");
	HT_CHECK_EQ(c.cpus, 1);
	HT_CHECK_EQ(c.verbose, true);

	/* A token that ends right at the cut is whole. */
	memset(line, ' ', 5000);
	memcpy(line + 4090, "cpus=8", 6);
	memcpy(line + 4200, "exit=qemu", 9);
	cfg_init(&c);
	cfg_parse_n(&c, line, 5000);
	HT_CHECK(c.res.truncated, "not flagged truncated");
	HT_CHECK_EQ(c.res.nerrors, 1);
	HT_CHECK_EQ(c.cpus, 8);
	HT_CHECK_EQ(c.exit, 1); /* past the cut */

	/* Exactly 4096 bytes, then the NUL: not truncated. */
	memset(line, ' ', 4096);
	memcpy(line + 4090, "cpus=7", 6);
	line[4096] = '\0';
	cfg_init(&c);
	cfg_parse_n(&c, line, 5000);
	HT_CHECK(!c.res.truncated, "a 4096-byte line is not truncated");
	HT_CHECK_EQ(c.res.nerrors, 0);
	HT_CHECK_EQ(c.cpus, 7);
	cfg_parse_n(&c, line, 4096);
	HT_CHECK(!c.res.truncated, "len 4096 is not truncated");
	HT_CHECK_EQ(c.cpus, 7);
	free(line);
}

HT_TEST(cmdline_error_count_exceeds_kept_messages)
{
	char line[512];
	size_t used = 0;
	struct cfg c;

	for (int i = 0; i < 20; i++)
		used += (size_t)snprintf(line + used, sizeof(line) - used, "bad%d=1 ", i);
	strcat(line, "cpus=5");
	cfg_init(&c);
	cfg_parse(&c, line);
	HT_CHECK_EQ(c.res.nerrors, 20);
	HT_CHECK_STR(c.res.errors[0], "unknown option 'bad0'");
	HT_CHECK_STR(c.res.errors[CMDLINE_MAX_ERRORS - 1], "unknown option 'bad15'");
	HT_CHECK_EQ(c.cpus, 5);
}

/* Random lines: mostly plausible tokens (so that deep paths run), some
 * pure noise. Every run must keep the invariants and, under ASan, stay
 * inside its buffers. */
static size_t fuzz_line(char *buf, size_t cap)
{
	static const char *const pieces[] = {
		"tests=",
		"cpus=",
		"verbose",
		"exit=",
		"pmu.takeover=",
		"seed=",
		"0x",
		"=",
		"\"",
		" ",
		"\t",
		"\n",
		"halt",
		"yes",
		"999",
		"18446744073709551616",
		"/x.elf",
		"*",
		"abcdefghijklmnopqrstuvwxyz0123456789",
		"\x01",
		"\xff",
		"\x7f",
	};
	size_t len = rng_below((unsigned)cap + 1), i = 0;
	int mode = (int)rng_below(4);

	while (i < len) {
		if (mode == 0 || rng_below(8) == 0) {
			buf[i++] = (char)rng_next();
		} else {
			const char *p = pieces[rng_below(sizeof(pieces) / sizeof(pieces[0]))];

			while (*p && i < len)
				buf[i++] = *p++;
		}
	}
	return len;
}

HT_TEST(cmdline_fuzz)
{
	enum { ITERATIONS = 100000, MAX_LEN = 8192 };
	static char line[MAX_LEN];
	int bad = 0;

	rng_seed(0x9e3779b97f4a7c15ull);
	for (int iter = 0; iter < ITERATIONS; iter++) {
		size_t len = fuzz_line(line, iter % 16 ? 600 : MAX_LEN), eff = 0;
		struct cfg c;
		char *copy;
		bool ok = true;

		while (eff < len && line[eff])
			eff++;
		cfg_init(&c);
		copy = malloc(len ? len : 1);
		memcpy(copy, line, len);
		cmdline_parse(copy, len, c.opts, 6, &c.res);
		free(copy);

		for (unsigned e = 0; e < c.res.nerrors && e < CMDLINE_MAX_ERRORS; e++) {
			size_t n = strnlen(c.res.errors[e], sizeof(c.res.errors[e]));

			if (n == 0 || n == sizeof(c.res.errors[e]))
				ok = false;
			for (size_t k = 0; k < n; k++)
				if ((unsigned char)c.res.errors[e][k] < 0x20 ||
				    (unsigned char)c.res.errors[e][k] >= 0x7f)
					ok = false;
		}
		if (strnlen(c.tests, sizeof(c.tests)) == sizeof(c.tests))
			ok = false;
		if (c.cpus < 1 || c.cpus > 256 || c.exit < 0 || c.exit > 2)
			ok = false;
		if (c.res.truncated != (eff > CMDLINE_MAX_LEN) || c.res.image)
			ok = false;
		LOOP_CHECK(bad, ok, "iteration %d (len %zu): invariant broken, %u errors, first \"%.96s\"",
			   iter, len, c.res.nerrors, c.res.errors[0]);
	}
	HT_CHECK(bad == 0, "%d of %d fuzz runs broke an invariant", bad, ITERATIONS);
}

/* ------------------------------------------------------------------ glob */

struct glob_case {
	const char *pattern, *name;
	bool match;
};

HT_TEST(glob_match_table)
{
	static const struct glob_case cases[] = {
		{ "", "", true },
		{ "", "a", false },
		{ "*", "", true },
		{ "*", "anything.at.all", true },
		{ "**", "x", true },
		{ "?", "", false },
		{ "?", "a", true },
		{ "?", "ab", false },
		{ "pmu.*", "pmu.count.gp", true },
		{ "pmu.*", "pmu", false },
		{ "pmu.*", "pmu.", true },
		{ "pmu.offcore*", "pmu.offcore_rsp0", true },
		{ "*count*", "pmu.count.fixed", true },
		{ "*.gp", "pmu.count.gp", true },
		{ "*.gp", "pmu.count.gpx", false },
		{ "a*b*c", "abc", true },
		{ "a*b*c", "aXbYc", true },
		{ "a*b*c", "acb", false },
		{ "a*b", "abab", true },
		{ "a*ab", "abab", true },
		{ "*ab", "aab", true },
		{ "a?c", "abc", true },
		{ "a?c", "ac", false },
		{ "[abc]", "b", true },
		{ "[abc]", "d", false },
		{ "[a-c]x", "cx", true },
		{ "[a-c]x", "dx", false },
		{ "[!a-c]", "d", true },
		{ "[!a-c]", "a", false },
		{ "[^a-c]", "d", true },
		{ "[]]", "]", true },
		{ "[!]]", "]", false },
		{ "[!]]", "a", true },
		{ "[a-]", "-", true },
		{ "[b-a]", "a", false },
		{ "[", "[", true },
		{ "a[", "a[", true },
		{ "[ab", "[ab", true },
		{ "[a-", "[a-", true },
		{ "*[*-", "x[[-", true },
		{ "cpu[0-9]", "cpu7", true },
		{ "cpu[0-9]", "cpu10", false },
		{ "cpu[0-9]*", "cpu10", true },
		{ "/", "/", true },
		{ "*/x", "a/b/x", true },
		{ "\\*", "\\x", true },
		{ "[\x80-\xff]", "\xc3", true },
		{ "[\x80-\xff]", "a", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		HT_CHECK(glob_match(cases[i].pattern, cases[i].name) == cases[i].match,
			 "glob_match(\"%s\", \"%s\") should be %s", cases[i].pattern, cases[i].name,
			 cases[i].match ? "true" : "false");
}

/* fnmatch(3) with no flags has the same rules for this alphabet (no '\\',
 * no "[:", no '/' or leading-'.' flags), so it is an independent oracle. */
HT_TEST(glob_match_agrees_with_fnmatch)
{
	static const char pat_alpha[] = "ab*?[]!^-";
	static const char name_alpha[] = "ab-]^![";
	char pat[12], name[12];
	int bad = 0, matches = 0, skipped = 0;

	rng_seed(42);
	for (int iter = 0; iter < 200000; iter++) {
		size_t pl = rng_below(sizeof(pat)), nl = rng_below(sizeof(name));
		bool want, got;

		for (size_t i = 0; i < pl; i++)
			pat[i] = pat_alpha[rng_below(sizeof(pat_alpha) - 1)];
		pat[pl] = '\0';
		for (size_t i = 0; i < nl; i++)
			name[i] = name_alpha[rng_below(sizeof(name_alpha) - 1)];
		name[nl] = '\0';
		/* glibc refuses to match at all when an unclosed '[' ends in a
		 * dangling range ("[a-"); POSIX (and bash) read such a '[' as
		 * itself, as glob_match does, which the table above checks. */
		if (pl && pat[pl - 1] == '-' && strchr(pat, '[')) {
			skipped++;
			continue;
		}
		want = fnmatch(pat, name, 0) == 0;
		got = glob_match(pat, name);
		matches += want;
		LOOP_CHECK(bad, got == want, "glob_match(\"%s\", \"%s\") = %d, fnmatch says %d", pat, name,
			   got, want);
	}
	/* The oracle must also say "match" often enough to mean something. */
	HT_CHECK(matches > 2000, "only %d matches in the random table", matches);
	HT_CHECK(skipped < 20000, "%d of 200000 patterns skipped", skipped);
	HT_CHECK(bad == 0, "%d disagreements with fnmatch", bad);
}

static double seconds_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

HT_TEST(glob_match_pathological_is_fast)
{
	static char name[10001], pat[256];
	double t0, dt;
	bool r1, r2, r3;

	memset(name, 'a', 10000);
	name[10000] = '\0';
	/* "*a*a*...*a*b": exponential for a naive recursive matcher. */
	pat[0] = '\0';
	for (int i = 0; i < 40; i++)
		strcat(pat, "*a");
	strcat(pat, "*b");
	t0 = seconds_now();
	r1 = glob_match(pat, name);
	pat[strlen(pat) - 1] = 'a';
	r2 = glob_match(pat, name);
	r3 = glob_match("*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?c", name);
	dt = seconds_now() - t0;
	HT_CHECK(!r1, "no 'b' in the name, yet matched");
	HT_CHECK(r2, "pattern of '*a' must match a run of a's");
	HT_CHECK(!r3, "no 'c' in the name, yet matched");
	/* O(n*m) is ~10^6 steps here; exponential would never finish. */
	HT_CHECK(dt < 2.0, "took %.3f s", dt);
}

struct select_case {
	const char *selector, *name;
	bool default_on, selected;
};

HT_TEST(glob_select_table)
{
	static const struct select_case cases[] = {
		{ "", "pmu.count", true, true },
		{ "", "pmu.count", false, false },
		{ NULL, "pmu.count", true, true },
		{ NULL, "pmu.count", false, false },
		{ ",,,", "pmu.count", true, true },
		{ "pmu.*", "pmu.count", false, true },
		{ "pmu.*", "smp.boot", true, false },
		{ "pmu.*,-pmu.offcore*", "pmu.offcore.rsp0", true, false },
		{ "pmu.*,-pmu.offcore*", "pmu.count", false, true },
		{ "-pmu.offcore*,pmu.*", "pmu.offcore.rsp0", true, false },
		{ "-pmu.offcore*", "pmu.count", true, true },
		{ "-pmu.offcore*", "pmu.count", false, false },
		{ "-pmu.offcore*", "pmu.offcore.x", true, false },
		{ "-pmu.*,pmu.count", "pmu.count", true, false },
		{ "pmu.count,-pmu.*", "pmu.count", true, false },
		{ "a,b,c", "b", false, true },
		{ "a,b,c", "d", true, false },
		{ ",,pmu.count,,", "pmu.count", false, true },
		{ "selftest.*", "pmu.x", true, false },
		{ "selftest.*", "selftest.fail", false, true },
		{ "*", "anything", false, true },
		{ "*,-*", "anything", true, false },
		{ "-", "x", true, true },
		{ "pmu.c[aeiou]unt", "pmu.count", false, true },
		{ "pmu.count", "pmu.count.gp", false, false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct select_case *t = &cases[i];

		HT_CHECK(glob_select(t->selector, t->name, t->default_on) == t->selected,
			 "glob_select(\"%s\", \"%s\", %d) should be %d", t->selector ? t->selector : "(null)",
			 t->name, t->default_on, t->selected);
	}
}

/* -------------------------------------------------------------- spinlock */

HT_TEST(spinlock_single_thread)
{
	struct spinlock l = SPINLOCK_INIT;
	struct spinlock zeroed;

	memset(&zeroed, 0, sizeof(zeroed));
	HT_CHECK(!spin_is_locked(&zeroed), "zeroed memory must be an unlocked lock");
	HT_CHECK(!spin_is_locked(&l), "SPINLOCK_INIT must be unlocked");
	HT_CHECK_EQ(spin_owner(&l), SPINLOCK_NO_OWNER);
	HT_CHECK(spin_trylock(&l, 0), "trylock of a free lock");
	HT_CHECK_EQ(spin_owner(&l), 0);
	HT_CHECK(!spin_trylock(&l, 1), "trylock of a held lock must fail");
	HT_CHECK_EQ(spin_owner(&l), 0);
	spin_unlock(&l);
	HT_CHECK(!spin_is_locked(&l), "unlocked");
	spin_lock(&l, 17);
	HT_CHECK_EQ(spin_owner(&l), 17);
	spin_unlock(&l);
	HT_CHECK_EQ(spin_owner(&l), SPINLOCK_NO_OWNER);
	spin_init(&l);
	HT_CHECK(!spin_is_locked(&l), "spin_init leaves it unlocked");
}

HT_TEST(spinlock_force_release)
{
	struct spinlock l = SPINLOCK_INIT;

	HT_CHECK(!spin_force_release_if_owner(&l, 3), "a free lock has no owner to release");
	spin_lock(&l, 3);
	HT_CHECK(!spin_force_release_if_owner(&l, 2), "CPU 2 does not hold it");
	HT_CHECK_EQ(spin_owner(&l), 3);
	HT_CHECK(spin_force_release_if_owner(&l, 3), "CPU 3 holds it");
	HT_CHECK(!spin_is_locked(&l), "released");
	HT_CHECK(!spin_force_release_if_owner(&l, 3), "second release must do nothing");
	HT_CHECK(spin_trylock(&l, 4), "free again for others");
	HT_CHECK_EQ(spin_owner(&l), 4);
	spin_unlock(&l);
	/* cpu 0 is a real owner, distinct from "free". */
	spin_lock(&l, 0);
	HT_CHECK(spin_force_release_if_owner(&l, 0), "CPU 0 holds it");
	HT_CHECK(!spin_is_locked(&l), "released");
}

enum { SPIN_THREADS = 4, SPIN_ITERS = 200000 };

struct spin_shared {
	struct spinlock lock;
	uint64_t counter; /* plain, non-atomic: protected by lock only */
	int inside;       /* threads in the critical section right now */
	int max_inside;
	int wrong_owner;
};

struct spin_arg {
	struct spin_shared *s;
	unsigned cpu;
};

static void *spin_worker(void *p)
{
	struct spin_arg *a = p;
	struct spin_shared *s = a->s;

	for (int i = 0; i < SPIN_ITERS; i++) {
		/* Every 4th entry through trylock, so both paths contend. */
		if (i % 4 == 0)
			while (!spin_trylock(&s->lock, a->cpu))
				spin_relax();
		else
			spin_lock(&s->lock, a->cpu);
		/* Read-modify-write in separate steps with a window between
		 * them: without mutual exclusion updates get lost. */
		int in = ++s->inside;
		if (in > s->max_inside)
			s->max_inside = in;
		if (spin_owner(&s->lock) != a->cpu)
			s->wrong_owner++;
		uint64_t v = *(volatile uint64_t *)&s->counter;
		for (volatile int k = 0; k < 8; k++)
			;
		*(volatile uint64_t *)&s->counter = v + 1;
		s->inside--;
		spin_unlock(&s->lock);
		/* Some work outside the lock, varying per thread, so that
		 * threads arrive at the lock at unrelated moments and the
		 * holder does not simply take it again every time. */
		for (volatile unsigned k = 0; k < 8 + (a->cpu * 5 + (unsigned)i) % 16; k++)
			;
	}
	return NULL;
}

HT_TEST(spinlock_threads_hammer_counter)
{
	static struct spin_shared s;
	pthread_t th[SPIN_THREADS];
	struct spin_arg args[SPIN_THREADS];
	int started = 0;

	memset(&s, 0, sizeof(s));
	for (int i = 0; i < SPIN_THREADS; i++) {
		args[i] = (struct spin_arg){ &s, (unsigned)i };
		if (pthread_create(&th[i], NULL, spin_worker, &args[i]) == 0)
			started++;
	}
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	HT_CHECK_EQ(started, SPIN_THREADS);
	HT_CHECK_EQ(s.counter, (uint64_t)started * SPIN_ITERS);
	HT_CHECK_EQ(s.max_inside, 1);
	HT_CHECK_EQ(s.wrong_owner, 0);
	HT_CHECK(!spin_is_locked(&s.lock), "lock left held after all threads finished");
}

HT_MAIN("lib")
