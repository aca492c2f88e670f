/* Glob matching with a single backtrack point, and the comma-separated
 * include/exclude selector that picks tests by name. */
#include "lib/glob.h"

#include <stddef.h>
#include <stdint.h>

#include "lib/string.h"

/*
 * The class starting at p[0] == '[' (n bytes of pattern available): returns
 * the length of its syntax including both brackets and sets *hit to whether
 * c is a member, or returns 0 when no ']' closes it.
 */
static size_t glob_class(const char *p, size_t n, unsigned char c, bool *hit)
{
	size_t i = 1, first;
	bool negate = false, found = false;

	if (i < n && (p[i] == '!' || p[i] == '^')) {
		negate = true;
		i++;
	}
	first = i;
	for (;;) {
		unsigned char lo, hi;

		if (i >= n)
			return 0;
		if (p[i] == ']' && i > first)
			break;
		lo = hi = (unsigned char)p[i];
		/* "a-z" is a range; a '-' before the closing ']' is literal. */
		if (i + 2 < n && p[i + 1] == '-' && p[i + 2] != ']') {
			hi = (unsigned char)p[i + 2];
			i += 3;
		} else {
			i++;
		}
		if (lo <= c && c <= hi)
			found = true;
	}
	*hit = found != negate;
	return i + 1;
}

/* glob_match over the first plen bytes of pat (selector items are not
 * NUL-terminated). */
static bool glob_match_n(const char *pat, size_t plen, const char *name)
{
	size_t pi = 0, star_pi = 0;
	const char *star_name = NULL;

	/*
	 * On a mismatch, retry from the most recent '*' with that star eating
	 * one more character. Earlier stars never need revisiting: whatever
	 * they could absorb, the latest star can absorb instead, so the work
	 * is bounded by len(pattern) * len(name) instead of exponential.
	 */
	while (*name) {
		if (pi < plen && pat[pi] == '*') {
			while (pi < plen && pat[pi] == '*')
				pi++;
			star_pi = pi;
			star_name = name;
			continue;
		}
		if (pi < plen) {
			size_t step = 1;
			bool hit;

			if (pat[pi] == '?')
				hit = true;
			else if (pat[pi] != '[' ||
				 (step = glob_class(pat + pi, plen - pi, (unsigned char)*name, &hit)) == 0) {
				step = 1;
				hit = pat[pi] == *name;
			}
			if (hit) {
				pi += step;
				name++;
				continue;
			}
		}
		if (!star_name)
			return false;
		pi = star_pi;
		name = ++star_name;
	}
	while (pi < plen && pat[pi] == '*')
		pi++;
	return pi == plen;
}

bool glob_match(const char *pattern, const char *name)
{
	return glob_match_n(pattern, strlen(pattern), name);
}

bool glob_select(const char *selector, const char *name, bool default_on)
{
	bool any_include = false, included = false;
	const char *item = selector;

	if (!selector)
		return default_on;
	for (;;) {
		const char *end = strchr(item, ',');
		size_t len = end ? (size_t)(end - item) : strlen(item);

		if (len > 0 && item[0] == '-') {
			if (glob_match_n(item + 1, len - 1, name))
				return false;
		} else if (len > 0) {
			any_include = true;
			if (!included)
				included = glob_match_n(item, len, name);
		}
		if (!end)
			break;
		item = end + 1;
	}
	return any_include ? included : default_on;
}
