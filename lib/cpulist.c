/* Parsing and printing CPU lists ("0,2-3", "all"). Errors quote the item
 * at fault so that a mistyped command line is easy to correct. */
#include "lib/cpulist.h"

#include "lib/printf.h"
#include "lib/string.h"

#define CPULIST_ITEM_SHOW 24 /* longest item quoted back in an error */

static int item_len(size_t len)
{
	return len > CPULIST_ITEM_SHOW ? CPULIST_ITEM_SHOW : (int)len;
}

/* Decimal digits only: the whole [s, s+len) must be the number, and it
 * must fit below limit (so no overflow is possible on the way). */
static bool parse_cpu(const char *s, size_t len, unsigned limit, unsigned *out)
{
	uint64_t v = 0;

	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > limit)
			v = limit; /* saturate: stays "too big" without wrapping */
	}
	*out = (unsigned)v;
	return true;
}

static int fail(struct cpulist *out, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(struct cpulist *out, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	cpulist_clear(out);
	if (err && errlen) {
		va_start(ap, fmt);
		kvsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int cpulist_parse(const char *s, unsigned ncpus, struct cpulist *out, char *err, size_t errlen)
{
	if (ncpus > CPULIST_MAX_CPUS)
		ncpus = CPULIST_MAX_CPUS;
	cpulist_clear(out);
	if (err && errlen)
		err[0] = '\0';
	if (!s || !*s)
		return fail(out, err, errlen, "empty CPU list (give e.g. \"0,2-3\" or \"all\")");
	if (ncpus == 0)
		return fail(out, err, errlen, "no CPUs to choose from");

	for (const char *item = s;;) {
		const char *end = strchr(item, ',');
		size_t len = end ? (size_t)(end - item) : strlen(item);
		unsigned lo, hi;

		if (len == 0)
			return fail(out, err, errlen, "empty item at offset %u in CPU list \"%.*s\"",
				    (unsigned)(item - s), item_len(strlen(s)), s);
		if (len == 3 && strncmp(item, "all", 3) == 0) {
			lo = 0;
			hi = ncpus - 1;
		} else {
			const char *dash = NULL;
			for (size_t i = 0; i < len; i++)
				if (item[i] == '-') {
					dash = item + i;
					break;
				}
			size_t llen = dash ? (size_t)(dash - item) : len;
			if (!parse_cpu(item, llen, CPULIST_MAX_CPUS, &lo) ||
			    (dash && !parse_cpu(dash + 1, len - llen - 1, CPULIST_MAX_CPUS, &hi)))
				return fail(
					out, err, errlen,
					"CPU list item \"%.*s\" is not N, N-M or all (decimal CPU numbers)",
					item_len(len), item);
			if (!dash)
				hi = lo;
			if (lo > hi)
				return fail(out, err, errlen, "CPU range \"%.*s\" runs backwards",
					    item_len(len), item);
			if (hi >= ncpus)
				return fail(
					out, err, errlen,
					"CPU list item \"%.*s\" names a CPU past the last one online (%u CPUs: 0-%u)",
					item_len(len), item, ncpus, ncpus - 1);
		}
		for (unsigned c = lo; c <= hi; c++)
			cpulist_set(out, c);
		if (!end)
			break;
		item = end + 1;
	}
	return 0;
}

unsigned cpulist_count(const struct cpulist *l)
{
	unsigned n = 0;

	/* Kernighan's loop, not __builtin_popcountll: without -mpopcnt that
	 * becomes a libgcc call, and the kernel links no libgcc. */
	for (unsigned i = 0; i < CPULIST_MAX_CPUS / 64; i++)
		for (uint64_t w = l->bits[i]; w; w &= w - 1)
			n++;
	return n;
}

unsigned cpulist_next(const struct cpulist *l, unsigned from)
{
	for (unsigned c = from; c < CPULIST_MAX_CPUS; c++) {
		uint64_t w = l->bits[c / 64] >> (c % 64);
		if (w)
			return c + (unsigned)__builtin_ctzll(w);
		c |= 63; /* rest of this word is empty: on to the next */
	}
	return CPULIST_MAX_CPUS;
}

int cpulist_format(const struct cpulist *l, char *buf, size_t n)
{
	int len = 0;
	unsigned c = cpulist_next(l, 0);

	if (n)
		buf[0] = '\0';
	while (c < CPULIST_MAX_CPUS) {
		unsigned hi = c;
		while (hi + 1 < CPULIST_MAX_CPUS && cpulist_test(l, hi + 1))
			hi++;
		size_t off = (size_t)len < n ? (size_t)len : n;
		const char *sep = len ? "," : "";
		if (hi == c)
			len += ksnprintf(buf + off, n - off, "%s%u", sep, c);
		else
			len += ksnprintf(buf + off, n - off, "%s%u-%u", sep, c, hi);
		c = cpulist_next(l, hi + 1);
	}
	return len;
}
