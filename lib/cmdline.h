/* Table-driven parser for the kernel command line ("tests=pmu.* cpus=4"):
 * each option names its type, its destination and its accepted values. */
#ifndef LIB_CMDLINE_H
#define LIB_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest command line looked at; the rest is dropped with an error. */
#define CMDLINE_MAX_LEN 4096

enum cmdline_type { CMDLINE_STR, CMDLINE_UINT, CMDLINE_BOOL, CMDLINE_ENUM };

struct cmdline_opt {
	const char *name; /* "tests", "cpus", "exit", "pmu.takeover" ... */
	enum cmdline_type type;
	void *dst;                  /* char[dst_size] | uint64_t* | bool* | int* (enum index) */
	size_t dst_size;            /* for CMDLINE_STR: buffer size incl. NUL */
	const char *const *choices; /* CMDLINE_ENUM: NULL-terminated names; index stored */
	uint64_t min, max;          /* CMDLINE_UINT: inclusive range */
	const char *help;           /* one line, for the README/diagnostics */
};

#define CMDLINE_MAX_ERRORS 16
#define CMDLINE_ERROR_LEN 96

struct cmdline_result {
	unsigned nerrors; /* may exceed CMDLINE_MAX_ERRORS; only the first are kept */
	char errors[CMDLINE_MAX_ERRORS][CMDLINE_ERROR_LEN]; /* e.g. "unknown option 'foo'" */
	bool truncated;                                     /* input was longer than CMDLINE_MAX_LEN */
	const char *image;                                  /* not used by the parser; left NULL */
};

/*
 * Parse line[0, len) (a NUL byte ends it earlier) and store each valid
 * option into its destination; every other destination keeps the value it
 * had. res is overwritten entirely.
 *
 * Tokens are separated by space, tab, CR or LF; double quotes group text
 * containing those and are dropped ("tests=\"a b\"" gives "a b"). A token
 * is key=value, or a bare key, which sets a CMDLINE_BOOL to true and is an
 * error for other types. A first token without '=' that contains '/' or
 * ends in ".elf" is the image path QEMU's -kernel puts in front, skipped.
 * Values: CMDLINE_UINT decimal or 0x-hex within [min, max];
 * CMDLINE_BOOL 0/1/yes/no/on/off/true/false (any case); CMDLINE_ENUM one of
 * choices exactly, stored as its index; CMDLINE_STR anything that fits.
 * Errors (unknown option, bad value, non-printable byte, unterminated
 * quote, over-long line) are counted and the first CMDLINE_MAX_ERRORS kept
 * as messages naming the option and value; the token is then ignored.
 * The last option wins when one is given twice.
 */
void cmdline_parse(const char *line, size_t len, const struct cmdline_opt *opts, size_t nopts,
		   struct cmdline_result *res);

#endif
