/* Minimal host unit-test harness: every host test program includes this,
 * registers cases with HT_TEST and ends with HT_MAIN("area"). Output is one
 * line per case plus "# host.<area>: N passed, M failed, K skipped". */
#ifndef PMUTEST_HOSTTEST_H
#define PMUTEST_HOSTTEST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ht_case {
	const char *name;
	void (*fn)(void);
};

#define HT_MAX_CASES 512
extern struct ht_case ht_cases[HT_MAX_CASES];
extern int ht_ncases;
extern int ht_case_failed, ht_case_checks;
extern const char *ht_case_skip;

/* Register a case at load time (constructor), in source order. */
#define HT_TEST(name_)                                                                     \
	static void ht_fn_##name_(void);                                                   \
	__attribute__((constructor)) static void ht_reg_##name_(void)                      \
	{                                                                                  \
		if (ht_ncases < HT_MAX_CASES)                                              \
			ht_cases[ht_ncases++] = (struct ht_case){ #name_, ht_fn_##name_ }; \
	}                                                                                  \
	static void ht_fn_##name_(void)

/* A failing check prints file:line and the caller's expected-vs-seen text;
 * the case goes on so one run shows every broken expectation. */
#define HT_CHECK(cond, ...)                                                          \
	do {                                                                         \
		ht_case_checks++;                                                    \
		if (!(cond)) {                                                       \
			ht_case_failed++;                                            \
			printf("    # FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			printf(__VA_ARGS__);                                         \
			printf("\n");                                                \
		}                                                                    \
	} while (0)

/* Equality of two integers, printing both in hex and decimal. */
#define HT_CHECK_EQ(seen, expected)                                                                       \
	do {                                                                                              \
		unsigned long long ht_s_ = (unsigned long long)(seen);                                    \
		unsigned long long ht_e_ = (unsigned long long)(expected);                                \
		HT_CHECK(ht_s_ == ht_e_, "expected %#llx (%llu), seen %#llx (%llu)", ht_e_, ht_e_, ht_s_, \
			 ht_s_);                                                                          \
	} while (0)

#define HT_CHECK_STR(seen, expected)                                                                \
	do {                                                                                        \
		const char *ht_s_ = (seen), *ht_e_ = (expected);                                    \
		HT_CHECK(ht_s_ &&ht_e_ &&strcmp(ht_s_, ht_e_) == 0, "expected \"%s\", seen \"%s\"", \
			 ht_e_ ? ht_e_ : "(null)", ht_s_ ? ht_s_ : "(null)");                       \
	} while (0)

/* Mark the running case skipped, with the reason; return from it yourself. */
#define HT_SKIP(reason) (ht_case_skip = (reason))

#define HT_MAIN(area)                                                                                     \
	struct ht_case ht_cases[HT_MAX_CASES];                                                            \
	int ht_ncases, ht_case_failed, ht_case_checks;                                                    \
	const char *ht_case_skip;                                                                         \
	int main(int argc, char **argv)                                                                   \
	{                                                                                                 \
		int pass = 0, fail = 0, skipped = 0;                                                      \
		const char *only = argc > 1 ? argv[1] : NULL;                                             \
		for (int i = 0; i < ht_ncases; i++) {                                                     \
			if (only && !strstr(ht_cases[i].name, only))                                      \
				continue;                                                                 \
			ht_case_failed = ht_case_checks = 0;                                              \
			ht_case_skip = NULL;                                                              \
			ht_cases[i].fn();                                                                 \
			if (ht_case_skip) {                                                               \
				skipped++;                                                                \
				printf("ok %s.%s # SKIP %s\n", area, ht_cases[i].name, ht_case_skip);     \
			} else if (ht_case_failed || !ht_case_checks) {                                   \
				fail++;                                                                   \
				printf("not ok %s.%s%s\n", area, ht_cases[i].name,                        \
				       ht_case_checks ? "" : " # no check ran");                          \
			} else {                                                                          \
				pass++;                                                                   \
				printf("ok %s.%s (%d checks)\n", area, ht_cases[i].name, ht_case_checks); \
			}                                                                                 \
		}                                                                                         \
		printf("# host.%s: %d passed, %d failed, %d skipped\n", area, pass, fail, skipped);       \
		return fail ? 1 : 0;                                                                      \
	}

#endif
