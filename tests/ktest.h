/* The in-kernel test framework: registration, checks, skips, diagnostics.
 * Tests live one area per file in tests/, register with KTEST() into the
 * .ktests linker section with a one-line description of what they assert
 * (seL4's DEFINE_TEST), and report as KTAP v1 through tests/ktest.c. */
#ifndef TESTS_KTEST_H
#define TESTS_KTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ktest_flags {
	KTEST_SELFTEST = 1u << 0, /* only when selected explicitly (tests=selftest.*) */
	KTEST_PER_CPU = 1u << 1,  /* body runs on every online CPU, one KTAP block per CPU */
	KTEST_EXPLICIT = 1u << 2, /* only when the selector names its suite (e.g. monitor.run) */
};

struct ktest {
	const char *suite;          /* e.g. "pmu.count"; one KTAP block per suite */
	const char *name;           /* within the suite; full name "suite.name" */
	const char *desc;           /* what it asserts, one line: tests=list prints it */
	const char *(*needs)(void); /* NULL when always runnable, else SKIP reason or NULL */
	void (*body)(void);
	uint32_t line; /* a suite is one file: its tests run in source order */
	uint16_t flags;
	uint16_t budget_ms; /* 0: the timeout= default */
};

/* The symbols carry the line, so that two suites of one file may each
 * have a test of the same name (monitor.run and sample.run). */
#define KTEST_CAT_(a, b) a##b
#define KTEST_CAT(a, b) KTEST_CAT_(a, b)
#define KTEST_DEFINE_(suite_, name_, needs_, flags_, budget_, what_, body_, reg_)                \
	static void body_(void);                                                                 \
	static const struct ktest reg_ __attribute__((used, section(".ktests"), aligned(8))) = { \
		.suite = suite_,                                                                 \
		.name = #name_,                                                                  \
		.desc = what_,                                                                   \
		.needs = needs_,                                                                 \
		.body = body_,                                                                   \
		.line = __LINE__,                                                                \
		.flags = flags_,                                                                 \
		.budget_ms = budget_,                                                            \
	};                                                                                       \
	static void body_(void)
/* A test with its own time budget in ms (at most 65535). */
#define KTEST_BUDGET(suite_, name_, needs_, flags_, budget_, what_)  \
	KTEST_DEFINE_(suite_, name_, needs_, flags_, budget_, what_, \
		      KTEST_CAT(ktest_body_##name_##_, __LINE__),    \
		      KTEST_CAT(ktest_desc_##name_##_, __LINE__))

/* KTEST("pmu.count", gp_instructions, pmu_needs_counting, KTEST_PER_CPU,
 *       "instructions retired on a GP counter are exact") { ... }
 * The description says what the test asserts, in one line of at most
 * KTEST_DESC_MAX characters; README.md or pmu/README.md has a row for the
 * test that starts with it (tools/pmutest/check_test_docs.py). */
#define KTEST(suite_, name_, needs_, flags_, what_) KTEST_BUDGET(suite_, name_, needs_, flags_, 0, what_)
#define KTEST_DESC_MAX 80

/* Record one expectation. On failure prints "# FAIL file:line: <msg>" where
 * msg says what was expected and what was seen, with units. The test goes on;
 * it is "not ok" at the end. Returns cond. A test that runs no check and does
 * not skip is reported not ok ("no check ran"). */
bool check_(bool cond, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define check(cond, ...) check_(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

/* check() for a check whose failure may be a known deviation of a virtual
 * PMU or an erratum (tests/deviations.h): on failure obs, what the check
 * measured, goes to the deviation table. A row that matches it makes the
 * line "# XFAIL <ID> file:line: <msg>" and the test XFAIL (if no other
 * check fails); none keeps it "# FAIL file:line: <msg>", followed by a
 * "# near miss <ID>: ..." line for each row that matched only in part.
 * Returns cond. */
struct dev_obs;
bool check_or_deviation_(bool cond, const struct dev_obs *obs, const char *file, int line, const char *fmt,
			 ...) __attribute__((format(printf, 5, 6)));
#define check_or_deviation(cond, obs, ...) \
	check_or_deviation_(!!(cond), (obs), __FILE__, __LINE__, __VA_ARGS__)

/* For a figure a test reports and never asserts: a "# fingerprint <ID>:
 * ..." line when a fingerprint row of the deviation table names it. */
void report_fingerprint(const struct dev_obs *obs);

/* A "# ..." diagnostic line attached to the running test (figures, state). */
void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* End the running test now as SKIP with this reason (it stays not ok if a
 * check already failed). */
_Noreturn void ktest_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* End the running test now as not ok with this message. */
_Noreturn void ktest_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* For needs() predicates: format a SKIP reason into a per-CPU buffer that
 * stays valid until the next call on this CPU. */
const char *ktest_reason(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Whether budget_us of guest time since start_tsc, stretched by *stretch,
 * is over; at its end the slowdown (timer_slowdown) is measured again and
 * *stretch raised to it. */
bool ktest_budget_over(uint64_t start_tsc, uint64_t budget_us, unsigned *stretch);

#endif
