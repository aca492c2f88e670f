/* Numbers in text: the one parser the command line, event strings and
 * sample-mode options share, and the digit helpers around it. */
#ifndef LIB_PARSE_H
#define LIB_PARSE_H

#include <stddef.h>
#include <stdint.h>

enum parse_num { PARSE_OK, PARSE_BAD, PARSE_OVERFLOW };

/* s[0, len) as a number: decimal, or hexadecimal after "0x"/"0X" (digits
 * of either case); the whole span must be the number. Every character is
 * looked at, so "not a number" wins over "too large" for 99999999999999999999x.
 * *out is written only on PARSE_OK. */
enum parse_num parse_u64(const char *s, size_t len, uint64_t *out);

/* The value of hex digit c (either case), or -1. */
int parse_hex_digit(char c);

/* The decimal digits at the start of s: their value goes to *out and their
 * count is returned (0: s does not start with a digit, *out unchanged). No
 * overflow check: for reading back figures a program printed. */
size_t parse_dec_prefix(const char *s, uint64_t *out);

#endif
