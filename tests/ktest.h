/* The in-kernel test framework: registration, checks, skips, diagnostics.
 * Tests live one area per file in tests/, register with KTEST() into the
 * .ktests linker section and report as KTAP v1 through tests/ktest.c. */
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
	const char *(*needs)(void); /* NULL when always runnable, else SKIP reason or NULL */
	void (*body)(void);
	uint32_t flags;
	uint32_t budget_ms;         /* 0: the timeout= default */
	const char *file;           /* with line: tests of a suite run in source order */
	unsigned line;
};

/* The symbols carry the line, so that two suites of one file may each
 * have a test of the same name (monitor.run and sample.run). */
#define KTEST_CAT_(a, b) a##b
#define KTEST_CAT(a, b) KTEST_CAT_(a, b)
#define KTEST_DEFINE_(suite_, name_, needs_, flags_, budget_, body_, desc_)   \
	static void body_(void);                                              \
	static const struct ktest desc_                                       \
		__attribute__((used, section(".ktests"), aligned(8))) = {     \
			.suite = suite_,                                      \
			.name = #name_,                                       \
			.needs = needs_,                                      \
			.body = body_,                                        \
			.flags = flags_,                                      \
			.budget_ms = budget_,                                 \
			.file = __FILE__,                                     \
			.line = __LINE__,                                     \
	};                                                                    \
	static void body_(void)
#define KTEST_BUDGET(suite_, name_, needs_, flags_, budget_)                  \
	KTEST_DEFINE_(suite_, name_, needs_, flags_, budget_,                 \
		      KTEST_CAT(ktest_body_##name_##_, __LINE__),             \
		      KTEST_CAT(ktest_desc_##name_##_, __LINE__))

/* KTEST("pmu.count", gp_instructions, pmu_needs_counting, KTEST_PER_CPU) { ... } */
#define KTEST(suite_, name_, needs_, flags_) KTEST_BUDGET(suite_, name_, needs_, flags_, 0)

/* Record one expectation. On failure prints "# FAIL file:line: <msg>" where
 * msg says what was expected and what was seen, with units. The test goes on;
 * it is "not ok" at the end. Returns cond. A test that runs no check and does
 * not skip is reported not ok ("no check ran"). */
bool check_(bool cond, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define check(cond, ...) check_(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

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

#endif
