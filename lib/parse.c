/* Number parsing (lib/parse.h). */
#include "lib/parse.h"

#include <stdbool.h>

int parse_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

enum parse_num parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	unsigned base = 10;
	bool overflow = false;
	size_t i = 0;

	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == len)
		return PARSE_BAD;
	for (; i < len; i++) {
		int d = parse_hex_digit(s[i]);

		if (d < 0 || (unsigned)d >= base)
			return PARSE_BAD;
		if (v > (UINT64_MAX - (unsigned)d) / base)
			overflow = true;
		else
			v = v * base + (unsigned)d;
	}
	if (overflow)
		return PARSE_OVERFLOW;
	*out = v;
	return PARSE_OK;
}

size_t parse_dec_prefix(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	size_t n = 0;

	for (; s[n] >= '0' && s[n] <= '9'; n++)
		v = v * 10 + (uint64_t)(s[n] - '0');
	if (n)
		*out = v;
	return n;
}
