/* The test framework's side that boot calls: selecting and running the
 * tests, and the record of one test's run on one CPU. */
#ifndef TESTS_KTEST_INTERNAL_H
#define TESTS_KTEST_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/context.h"

struct ktest;

/* KTEST_XFAIL: every check passed or matched a known deviation, and at
 * least one matched ("ok N name # XFAIL ID: ..."). */
enum ktest_result { KTEST_PASS, KTEST_FAIL, KTEST_SKIP, KTEST_TIMEOUT, KTEST_XFAIL };

/* Distinct deviation rows one run may name. */
#define KTEST_XFAIL_IDS 4

#define KTEST_LOG_SIZE 4096
#define KTEST_REASON_SIZE 256

/* One execution of one test on one CPU. */
struct ktest_run {
	const struct ktest *test;
	unsigned cpu;
	uint32_t budget_ms;
	uint64_t start_tsc;    /* when the body began */
	uint64_t deadline_tsc; /* start + budget x stretch */
	unsigned stretch;      /* the budget's multiplier: the guest's slowdown (timer_slowdown) */
	enum ktest_result result;
	unsigned checks, failed_checks;
	unsigned xfail_checks;
	uint8_t xfail_rows[KTEST_XFAIL_IDS]; /* dev_table indexes, first seen first */
	unsigned nxfail_rows;
	char xfail_seen[KTEST_REASON_SIZE]; /* what the first match saw */
	bool exception;
	char skip_reason[KTEST_REASON_SIZE];
	char log[KTEST_LOG_SIZE]; /* "# ..." lines, printed before the result */
	unsigned log_len;
	bool log_truncated;
	struct ctx abort_ctx;
	bool finished;
	char whose[64]; /* "test <name>", for register dumps */
};

/* passed counts every ok result that is not a SKIP, XFAIL included;
 * xfail how many of them were XFAIL. */
struct ktest_totals {
	unsigned passed, failed, skipped, xfail;
};

struct ktest_config {
	const char *select;         /* tests= */
	uint32_t default_budget_ms; /* timeout= */
};

/* Every registered test, selected or not, in the order a run of all of
 * them takes (suites as ktest_run_all orders them, tests in source order):
 * fills tests[0..max) and returns how many. */
unsigned ktest_registered(const struct ktest **tests, unsigned max);

/* Select the tests and print the KTAP version and plan lines. tests=list
 * selects the listing (tests/list.c). */
void ktest_begin(const struct ktest_config *cfg);
/* Run every selected test and print the KTAP report (not the summary). */
struct ktest_totals ktest_run_all(const struct ktest_config *cfg);
/* The deviations block, before the summary, when any test was XFAIL:
 * "# deviations: K seen", then per row "# deviation <ID> cpus <list>
 * tests <test>[,<test>...]: <what> (source: <source>)". */
void ktest_report_deviations(void);

#endif
