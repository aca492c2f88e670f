/* Host tests of lib/parse.c (the number parser every option and event
 * string goes through), lib/bits.h and the kerrf() formatter. */
#include <stdint.h>
#include <string.h>

#include "tests/host/hosttest.h"

#include "lib/bits.h"
#include "lib/parse.h"
#include "lib/printf.h"

static enum parse_num num(const char *s, uint64_t *v)
{
	*v = 0xdeadull;
	return parse_u64(s, strlen(s), v);
}

HT_TEST(decimal_and_hex)
{
	uint64_t v;

	HT_CHECK_EQ(num("0", &v), PARSE_OK);
	HT_CHECK_EQ(v, 0);
	HT_CHECK_EQ(num("10000000", &v), PARSE_OK);
	HT_CHECK_EQ(v, 10000000);
	HT_CHECK_EQ(num("0x3fffc00001", &v), PARSE_OK);
	HT_CHECK_EQ(v, 0x3fffc00001ull);
	HT_CHECK_EQ(num("0XaBcD", &v), PARSE_OK);
	HT_CHECK_EQ(v, 0xabcd);
	HT_CHECK_EQ(num("18446744073709551615", &v), PARSE_OK);
	HT_CHECK_EQ(v, UINT64_MAX);
	HT_CHECK_EQ(num("0xffffffffffffffff", &v), PARSE_OK);
	HT_CHECK_EQ(v, UINT64_MAX);
	/* Only the span given counts. */
	HT_CHECK_EQ(parse_u64("123abc", 3, &v), PARSE_OK);
	HT_CHECK_EQ(v, 123);
}

HT_TEST(refusals_leave_the_value_alone)
{
	uint64_t v;
	static const char *const bad[] = { "", "0x", "x1", "1a", "0xg", "-1", " 1", "1 ", "12.5", "0x1p3" };

	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		HT_CHECK(num(bad[i], &v) == PARSE_BAD, "\"%s\" is not a number", bad[i]);
		HT_CHECK_EQ(v, 0xdeadull);
	}
	HT_CHECK_EQ(num("18446744073709551616", &v), PARSE_OVERFLOW);
	HT_CHECK_EQ(v, 0xdeadull);
	HT_CHECK_EQ(num("0x10000000000000000", &v), PARSE_OVERFLOW);
	/* "Not a number" wins over "too large": the whole string is read. */
	HT_CHECK_EQ(num("99999999999999999999x", &v), PARSE_BAD);
}

HT_TEST(digits_and_prefixes)
{
	uint64_t v = 7;

	HT_CHECK_EQ(parse_hex_digit('0'), 0);
	HT_CHECK_EQ(parse_hex_digit('F'), 15);
	HT_CHECK_EQ(parse_hex_digit('a'), 10);
	HT_CHECK(parse_hex_digit('g') < 0 && parse_hex_digit('/') < 0 && parse_hex_digit(':') < 0,
		 "non-digits are -1");
	HT_CHECK_EQ(parse_dec_prefix("1234 cycles", &v), 4);
	HT_CHECK_EQ(v, 1234);
	HT_CHECK_EQ(parse_dec_prefix("x12", &v), 0);
	HT_CHECK_EQ(v, 1234);
}

HT_TEST(bit_helpers)
{
	static const int four[4] = { 0 };

	HT_CHECK_EQ(BIT(63), 0x8000000000000000ull);
	HT_CHECK_EQ(BITS(0x12345678u, 15, 8), 0x56);
	HT_CHECK_EQ(ARRAY_LEN(four), 4);
	HT_CHECK_EQ(popcount32(0), 0);
	HT_CHECK_EQ(popcount32(0xf0f0u), 8);
	HT_CHECK_EQ(popcount32(0xffffffffu), 32);
	HT_CHECK_EQ(fls32(0), 0);
	HT_CHECK_EQ(fls32(1), 1);
	HT_CHECK_EQ(fls32(0x80000000u), 32);
}

HT_TEST(kerrf_formats_and_returns)
{
	char buf[16];

	HT_CHECK_EQ(kerrf(buf, sizeof(buf), -3, "%s %d", "busy", 7), (unsigned long long)-3);
	HT_CHECK_STR(buf, "busy 7");
	HT_CHECK_EQ(kerrf(buf, sizeof(buf), 5, "a much longer message than fits"), 5);
	HT_CHECK_EQ(strlen(buf), sizeof(buf) - 1);
	HT_CHECK_EQ(kerrf(NULL, 0, 2, "nowhere"), 2);
	HT_CHECK_EQ(kshown(3), 3);
	HT_CHECK_EQ(kshown(1000), KSHOWN_MAX);
}

HT_MAIN("parse")
