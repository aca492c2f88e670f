/* The test framework: selects registered tests, runs each on its CPU with
 * a watchdog and exception recovery, and prints KTAP v1 (Linux
 * Documentation/dev-tools/ktap.rst): one nested block per suite, and per
 * CPU inside KTEST_PER_CPU suites. Only the BSP prints; other CPUs write
 * into their run record, so output stays in order and lines stay whole. */
#include "tests/ktest_internal.h"

#include <stdarg.h>
#include <stddef.h>

#include "arch/x86/cpu.h"
#include "arch/x86/lapic.h"
#include "arch/x86/pc/console.h"
#include "arch/x86/smp.h"
#include "arch/x86/timer.h"
#include "arch/x86/traps.h"
#include "lib/cpulist.h"
#include "lib/glob.h"
#include "lib/muldiv.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "tests/deviations.h"
#include "tests/ktest.h"

extern const struct ktest __start_ktests[], __stop_ktests[];

enum { RUN_STARTED = 0, ABORT_SKIP, ABORT_FAIL, ABORT_EXCEPTION, ABORT_TIMEOUT };

/* Extra time the BSP grants a CPU past the test's own budget before it
 * declares the CPU unresponsive (its watchdog needs interrupts on). */
#define UNRESPONSIVE_GRACE_US 2000000
#define MAX_SUITES 64

static struct ktest_run runs[MAX_CPUS];
/* The test running on each CPU, or NULL. */
static struct ktest_run *running[MAX_CPUS];
static char reason_bufs[MAX_CPUS][KTEST_REASON_SIZE];
static const char *cpu_dead_reason[MAX_CPUS];
static char cpu_dead_buf[MAX_CPUS][96];
static struct ktest_totals totals;

/* The deviations block: per row, where and in which tests an XFAIL result
 * saw it. Written by the BSP as it prints results. */
#define DEV_SEEN_TESTS 32
static struct {
	struct cpulist cpus;
	const struct ktest *tests[DEV_SEEN_TESTS];
	unsigned ntests;
} dev_seen[DEV_ROWS];
/* The CPUs each running test saw its deviations on (a test may measure
 * on another CPU than its own). */
static struct cpulist xfail_cpus[MAX_CPUS];
_Static_assert(CPULIST_MAX_CPUS == MAX_CPUS, "one CPU list bound");
_Static_assert(DEV_ROWS <= 256, "rows fit the run record's uint8_t");

/* ---- Recording, on the CPU that runs the test ---- */

static struct ktest_run *current_run(void)
{
	struct ktest_run *r = running[this_cpu()->cpu];
	if (!r)
		panic("check/diag/skip called outside a test");
	return r;
}

/* A diagnostic or a SKIP reason is one KTAP line, always: fold newlines. */
static void fold_newlines(char *s)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '\r')
			*s = ' ';
}

static void log_line(struct ktest_run *r, const char *prefix, const char *fmt, va_list ap)
{
	char line[384];
	int n = ksnprintf(line, sizeof(line), "%s", prefix);
	kvsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	fold_newlines(line);
	size_t len = strlen(line);
	if (r->log_len + len + 2 > sizeof(r->log)) {
		r->log_truncated = true;
		return;
	}
	memcpy(r->log + r->log_len, line, len);
	r->log_len += (unsigned)len;
	r->log[r->log_len++] = '\n';
	r->log[r->log_len] = 0;
}

static void log_printf(struct ktest_run *r, const char *prefix, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void log_printf(struct ktest_run *r, const char *prefix, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_line(r, prefix, fmt, ap);
	va_end(ap);
}

bool check_(bool cond, const char *file, int line, const char *fmt, ...)
{
	struct ktest_run *r = current_run();
	r->checks++;
	if (!cond) {
		char prefix[96];
		const char *base = strrchr(file, '/');
		r->failed_checks++;
		ksnprintf(prefix, sizeof(prefix), "# FAIL %s:%d: ", base ? base + 1 : file, line);
		va_list ap;
		va_start(ap, fmt);
		log_line(r, prefix, fmt, ap);
		va_end(ap);
	}
	return cond;
}

static void log_near_miss(void *ctx, const struct deviation *d, const char *why)
{
	log_printf(ctx, "# ", "near miss %s: %s", d->id, why);
}

static void note_xfail(struct ktest_run *r, const struct deviation *d, const struct dev_obs *obs)
{
	unsigned row = dev_index(d), i;

	r->xfail_checks++;
	cpulist_set(&xfail_cpus[this_cpu()->cpu], obs->pc ? pmu_cpu_index(obs->pc) : r->cpu);
	for (i = 0; i < r->nxfail_rows && r->xfail_rows[i] != row; i++)
		;
	if (i == r->nxfail_rows && i < KTEST_XFAIL_IDS) {
		r->xfail_rows[r->nxfail_rows++] = (uint8_t)row;
		if (i == 0)
			dev_describe(obs, r->xfail_seen, sizeof(r->xfail_seen));
	}
}

bool check_or_deviation_(bool cond, const struct dev_obs *obs, const char *file, int line, const char *fmt,
			 ...)
{
	struct ktest_run *r = current_run();
	const char *base = strrchr(file, '/');
	char prefix[128];
	va_list ap;

	r->checks++;
	if (cond)
		return true;
	const struct deviation *d = dev_match(obs, NULL, NULL);
	if (d) {
		note_xfail(r, d, obs);
		ksnprintf(prefix, sizeof(prefix), "# XFAIL %s %s:%d: ", d->id, base ? base + 1 : file, line);
	} else {
		r->failed_checks++;
		ksnprintf(prefix, sizeof(prefix), "# FAIL %s:%d: ", base ? base + 1 : file, line);
	}
	va_start(ap, fmt);
	log_line(r, prefix, fmt, ap);
	va_end(ap);
	if (!d)
		dev_match(obs, log_near_miss, r);
	return false;
}

void report_fingerprint(const struct dev_obs *obs)
{
	const struct deviation *d = dev_fingerprint(obs);

	if (d)
		log_printf(current_run(), "# ", "fingerprint %s: %s (source: %s)", d->id, d->seen, d->source);
}

void diag(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_line(current_run(), "# ", fmt, ap);
	va_end(ap);
}

_Noreturn void ktest_skip(const char *fmt, ...)
{
	struct ktest_run *r = current_run();
	va_list ap;
	va_start(ap, fmt);
	kvsnprintf(r->skip_reason, sizeof(r->skip_reason), fmt, ap);
	va_end(ap);
	fold_newlines(r->skip_reason);
	ctx_restore(&r->abort_ctx, ABORT_SKIP);
}

_Noreturn void ktest_fail(const char *fmt, ...)
{
	struct ktest_run *r = current_run();
	va_list ap;
	va_start(ap, fmt);
	log_line(r, "# FAIL: ", fmt, ap);
	va_end(ap);
	r->failed_checks++;
	ctx_restore(&r->abort_ctx, ABORT_FAIL);
}

const char *ktest_reason(const char *fmt, ...)
{
	char *buf = reason_bufs[this_cpu()->cpu];
	va_list ap;
	va_start(ap, fmt);
	kvsnprintf(buf, KTEST_REASON_SIZE, fmt, ap);
	va_end(ap);
	return buf;
}

static void dump_to_log(void *ctx, const char *s)
{
	log_printf(ctx, "# ", "%s", s);
}

/* The trap layer's catcher while a test body runs: the exception fails
 * the test, which ends here, and the suite goes on. */
static _Noreturn void abort_on_exception(struct trap_frame *f)
{
	struct ktest_run *r = current_run();
	r->exception = true;
	log_printf(r, "# FAIL: ", "unexpected exception in the test body:");
	trap_dump(f, dump_to_log, r);
	ctx_restore(&r->abort_ctx, ABORT_EXCEPTION);
}

/* ---- Budgets that hold under load ----
 *
 * A budget is guest time (TSC), and under TCG or on a busy host the guest
 * does far less per TSC second than on silicon. When a budget runs out,
 * the CPU times a fixed loop and stretches the budget by how much slower
 * than native it ran (at most SLOWDOWN_MAX times): a test that was slow
 * because the host was is given the time its work needs, one that hangs
 * still times out, and the TIMEOUT says what the guest's speed was. */
bool ktest_budget_over(uint64_t start_tsc, uint64_t budget_us, unsigned *stretch)
{
	uint64_t budget = us_to_tsc(budget_us);

	if (*stretch < 1)
		*stretch = 1;
	if (rdtsc() - start_tsc < budget * *stretch)
		return false;
	unsigned f = timer_slowdown();
	if (f > *stretch)
		*stretch = f;
	return rdtsc() - start_tsc >= budget * *stretch;
}

/* ---- The watchdog: the LAPIC one-shot timer of the CPU running a test ---- */

static void watchdog_arm(const struct ktest_run *r)
{
	/* No LAPIC timer rate (boot.tsc_calibration fails then): no watchdog
	 * rather than a timer that fires every tick. APs are still covered by
	 * the BSP's grace timeout. */
	if (!timer_info()->lapic_hz)
		return;
	uint64_t left = r->deadline_tsc - rdtsc();
	uint64_t lapic_hz = timer_info()->lapic_hz;
	uint64_t count = (int64_t)left > 0 && lapic_hz ? mul_div_u64(left, lapic_hz, timer_info()->tsc_hz)
						       : 1;
	lapic_timer_oneshot(count > 0xffffffffu ? 0xffffffffu : (count ? (uint32_t)count : 1));
}

static const char *running_whose(void)
{
	return current_run()->whose;
}

static void watchdog_irq(struct trap_frame *f)
{
	struct ktest_run *r = running[this_cpu()->cpu];
	lapic_eoi();
	if (!r)
		return;
	if ((int64_t)(rdtsc() - r->deadline_tsc) >= 0) {
		if (ktest_budget_over(r->start_tsc, (uint64_t)r->budget_ms * 1000, &r->stretch))
			ctx_restore(&r->abort_ctx, ABORT_TIMEOUT);
		r->deadline_tsc = r->start_tsc + us_to_tsc((uint64_t)r->budget_ms * 1000) * r->stretch;
	}
	watchdog_arm(r); /* the count was capped at 32 bits: go on waiting */
}

/* ---- Running one test on the current CPU ---- */

static void ktest_execute(void *arg)
{
	struct ktest_run *r = arg;
	struct percpu *pc = this_cpu();
	const bool served_as_call = smp_serving();

	int how = ctx_save(&r->abort_ctx);
	if (how == RUN_STARTED) {
		r->stretch = 1;
		r->start_tsc = rdtsc();
		r->deadline_tsc = r->start_tsc + us_to_tsc((uint64_t)r->budget_ms * 1000);
		ksnprintf(r->whose, sizeof(r->whose), "test %s", r->test->name);
		running[pc->cpu] = r;
		trap_set_catcher(abort_on_exception, running_whose);
		watchdog_arm(r);
		const char *why = r->test->needs ? r->test->needs() : NULL;
		if (why) {
			strlcpy(r->skip_reason, why, sizeof(r->skip_reason));
			fold_newlines(r->skip_reason);
		} else
			r->test->body();
	}
	lapic_timer_stop();
	/* The watchdog leaves its handler through ctx_restore, an exception
	 * may have left an expect_exception() or ring-3 call behind. */
	trap_forget_contexts();
	trap_set_catcher(NULL, NULL);
	running[pc->cpu] = NULL;
	console_force_unlock();
	/* An abort inside a cross-CPU call this CPU was serving for someone
	 * else (the body was waiting in on_cpu) must not leave that caller
	 * waiting forever. When the test itself arrived as a call (on an
	 * AP), serving does not nest and its caller finishes it as usual. */
	if (!served_as_call)
		smp_calls_abandon_current();

	if (how == ABORT_TIMEOUT) {
		r->result = KTEST_TIMEOUT;
		if (r->stretch > 1)
			log_printf(r, "# ",
				   "budget %u ms stretched x%u: the guest ran %u times slower than native "
				   "(emulated, or a busy host), and the test still did not finish",
				   r->budget_ms, r->stretch, r->stretch);
		else
			log_printf(r, "# ", "the guest ran at native speed: the test itself did not finish");
	} else if (r->exception || r->failed_checks)
		r->result = KTEST_FAIL;
	else if (r->skip_reason[0])
		r->result = KTEST_SKIP;
	else if (!r->checks) {
		r->result = KTEST_FAIL;
		log_printf(r, "# FAIL: ", "the test ran no check");
	} else
		r->result = r->xfail_checks ? KTEST_XFAIL : KTEST_PASS;
	if (r->skip_reason[0] && r->result == KTEST_FAIL)
		log_printf(r, "# ", "(it also asked to skip: %s)", r->skip_reason);
	__atomic_store_n(&r->finished, true, __ATOMIC_RELEASE);
}

/* Wait for cpu's run of r: as long as its budget, stretched as its own
 * watchdog stretches it, and stretched here too by how slow this CPU finds
 * the guest, plus the grace. False: the CPU stopped responding. */
static bool wait_run(unsigned cpu, uint64_t ticket, struct ktest_run *r)
{
	uint64_t start = rdtsc();
	unsigned mine = 1;

	for (;;) {
		if (on_cpu_wait(cpu, ticket, 100000))
			return true;
		unsigned theirs = __atomic_load_n(&r->stretch, __ATOMIC_RELAXED);
		if (theirs > mine)
			mine = theirs;
		if (ktest_budget_over(start, (uint64_t)r->budget_ms * 1000 + UNRESPONSIVE_GRACE_US, &mine))
			return false;
	}
}

static struct ktest_run *run_on(const struct ktest *t, unsigned cpu, uint32_t budget_ms)
{
	/* A CPU given up on may still be running its old test and writing
	 * into runs[cpu]: its later results use a record of their own. */
	static struct ktest_run dead_run;
	struct ktest_run *r = cpu_dead_reason[cpu] ? &dead_run : &runs[cpu];
	memset(r, 0, sizeof(*r));
	r->test = t;
	r->cpu = cpu;
	r->budget_ms = t->budget_ms ? t->budget_ms : budget_ms;

	if (cpu_dead_reason[cpu]) {
		r->result = KTEST_SKIP;
		strlcpy(r->skip_reason, cpu_dead_reason[cpu], sizeof(r->skip_reason));
		return r;
	}
	if (cpu == smp_this_cpu()) {
		cpulist_clear(&xfail_cpus[cpu]);
		ktest_execute(r);
		return r;
	}
	cpulist_clear(&xfail_cpus[cpu]);
	uint64_t ticket;
	if (!on_cpu_try_async(cpu, ktest_execute, r, UNRESPONSIVE_GRACE_US, &ticket) ||
	    !wait_run(cpu, ticket, r)) {
		/* Its watchdog could not fire (interrupts off?): give up on it. */
		ksnprintf(cpu_dead_buf[cpu], sizeof(cpu_dead_buf[cpu]), "cpu %u stopped responding in %s.%s",
			  cpu, t->suite, t->name);
		cpu_dead_reason[cpu] = cpu_dead_buf[cpu];
		r->result = KTEST_TIMEOUT;
		log_printf(
			r, "# ",
			"cpu %u did not take or finish the test within %u ms + %u ms grace, x%u for the guest's speed",
			cpu, r->budget_ms, UNRESPONSIVE_GRACE_US / 1000, r->stretch > 1 ? r->stretch : 1);
	}
	return r;
}

/* ---- Selection and KTAP output, on the BSP ---- */

/* Whether the selector mentions the first component of the suite name
 * ("selftest" of "selftest.smp", "monitor" of "monitor"). */
static bool names_suite_family(const char *sel, const char *suite)
{
	char family[32];
	size_t n = 0;
	while (suite[n] && suite[n] != '.' && n + 1 < sizeof(family)) {
		family[n] = suite[n];
		n++;
	}
	family[n] = 0;
	return strstr(sel, family) != NULL;
}

static bool is_selected(const struct ktest *t, const char *sel)
{
	char full[160];
	/* tests=list is the listing (tests/list.c), not a glob. */
	if (sel && strcmp(sel, "list") == 0)
		sel = "list.*";
	ksnprintf(full, sizeof(full), "%s.%s", t->suite, t->name);
	if (t->flags & (KTEST_SELFTEST | KTEST_EXPLICIT)) {
		/* Selftests fail on purpose, and modes like monitor.run are not
		 * tests to run by default: only a selector that names their suite
		 * runs them. */
		return sel && names_suite_family(sel, t->suite) && glob_select(sel, full, false);
	}
	return glob_select(sel ? sel : "", full, true);
}

struct suite {
	const char *name;
	bool per_cpu;
	unsigned ntests;
	const struct ktest *tests[128];
};
static struct suite suites[MAX_SUITES];
static unsigned nsuites;

/* Suites run in this order (by name prefix), the rest before selftest:
 * foundations first, so a broken foundation is reported before the PMU
 * tests that stand on it. */
static const char *const suite_order[] = { "boot", "arch", "smp", "pmu", "", "selftest" };

static unsigned suite_rank(const char *name)
{
	unsigned n = ARRAY_LEN(suite_order);
	for (unsigned i = 0; i < n; i++)
		if (suite_order[i][0] && str_starts_with(name, suite_order[i]))
			return i;
	return n - 2; /* the "" slot */
}

static bool test_before(const struct ktest *a, const struct ktest *b)
{
	return a->line < b->line;
}

static bool suite_before(const struct suite *a, const struct suite *b)
{
	unsigned ra = suite_rank(a->name), rb = suite_rank(b->name);
	return ra < rb || (ra == rb && strcmp(a->name, b->name) < 0);
}

static bool run_before(const struct ktest *a, const struct ktest *b)
{
	unsigned ra = suite_rank(a->suite), rb = suite_rank(b->suite);
	int c = strcmp(a->suite, b->suite);
	return ra < rb || (ra == rb && (c < 0 || (c == 0 && test_before(a, b))));
}

unsigned ktest_registered(const struct ktest **tests, unsigned max)
{
	unsigned n = 0;
	for (const struct ktest *t = __start_ktests; t < __stop_ktests && n < max; t++) {
		unsigned j = n++;
		for (; j > 0 && run_before(t, tests[j - 1]); j--)
			tests[j] = tests[j - 1];
		tests[j] = t;
	}
	return n;
}

/* Insertion sorts: a few hundred entries at most. */
static void sort_selection(void)
{
	for (unsigned i = 1; i < nsuites; i++)
		for (unsigned j = i; j > 0 && suite_before(&suites[j], &suites[j - 1]); j--) {
			struct suite tmp = suites[j];
			suites[j] = suites[j - 1];
			suites[j - 1] = tmp;
		}
	for (unsigned k = 0; k < nsuites; k++) {
		struct suite *s = &suites[k];
		for (unsigned i = 1; i < s->ntests; i++)
			for (unsigned j = i; j > 0 && test_before(s->tests[j], s->tests[j - 1]); j--) {
				const struct ktest *tmp = s->tests[j];
				s->tests[j] = s->tests[j - 1];
				s->tests[j - 1] = tmp;
			}
	}
}

static void collect(const char *sel)
{
	for (const struct ktest *t = __start_ktests; t < __stop_ktests; t++) {
		if (!is_selected(t, sel))
			continue;
		struct suite *s = NULL;
		for (unsigned i = 0; i < nsuites; i++)
			if (strcmp(suites[i].name, t->suite) == 0)
				s = &suites[i];
		if (!s) {
			if (nsuites == MAX_SUITES)
				panic("more than %d test suites", MAX_SUITES);
			s = &suites[nsuites++];
			s->name = t->suite;
		}
		if (s->ntests == sizeof(s->tests) / sizeof(s->tests[0]))
			panic("suite %s has too many tests", s->name);
		s->tests[s->ntests++] = t;
		s->per_cpu |= (t->flags & KTEST_PER_CPU) != 0;
	}
}

static void print_indented(unsigned level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void print_indented(unsigned level, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	unsigned n = level * 2 < 64 ? level * 2 : 64;
	memset(line, ' ', n);
	va_start(ap, fmt);
	kvsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	console_printf("%s\n", line);
}

static void print_block_header(unsigned level, const char *name, unsigned plan)
{
	print_indented(level, "KTAP version 1");
	print_indented(level, "# Subtest: %s", name);
	print_indented(level, "1..%u", plan);
}

/* "ok N name # XFAIL ID[,ID...]: <what was seen>", and the rows' tally for
 * the deviations block. */
static void report_xfail(const struct ktest_run *r, unsigned level, unsigned num, const char *name)
{
	char ids[KTEST_XFAIL_IDS * 48];
	size_t len = 0;

	ids[0] = '\0';
	for (unsigned i = 0; i < r->nxfail_rows; i++) {
		unsigned row = r->xfail_rows[i];
		int w = ksnprintf(ids + len, sizeof(ids) - len, "%s%s", i ? "," : "", dev_table[row].id);
		len += w > 0 && (size_t)w < sizeof(ids) - len ? (size_t)w : 0;
		cpulist_or(&dev_seen[row].cpus, &xfail_cpus[r->cpu]);
		unsigned t = 0;
		while (t < dev_seen[row].ntests && dev_seen[row].tests[t] != r->test)
			t++;
		if (t == dev_seen[row].ntests && t < DEV_SEEN_TESTS)
			dev_seen[row].tests[dev_seen[row].ntests++] = r->test;
	}
	print_indented(level, "ok %u %s # XFAIL %s: %s", num, name, ids, r->xfail_seen);
	totals.passed++;
	totals.xfail++;
}

void ktest_report_deviations(void)
{
	unsigned k = 0;

	for (unsigned row = 0; row < DEV_ROWS; row++)
		k += dev_seen[row].ntests != 0;
	if (!k)
		return;
	console_printf("# deviations: %u seen\n", k);
	for (unsigned row = 0; row < DEV_ROWS; row++) {
		/* Longer than a console_printf line can be: formatted here. */
		static char tests[DEV_SEEN_TESTS * 48], line[sizeof(tests) + 1024];
		char cpus[128];
		size_t len = 0;

		if (!dev_seen[row].ntests)
			continue;
		cpulist_format(&dev_seen[row].cpus, cpus, sizeof(cpus));
		tests[0] = '\0';
		for (unsigned t = 0; t < dev_seen[row].ntests; t++) {
			const struct ktest *kt = dev_seen[row].tests[t];
			int w = ksnprintf(tests + len, sizeof(tests) - len, "%s%s.%s", t ? "," : "",
					  kt->suite, kt->name);
			len += w > 0 && (size_t)w < sizeof(tests) - len ? (size_t)w : 0;
		}
		int n = ksnprintf(line, sizeof(line), "# deviation %s cpus %s tests %s: %s (source: %s)\n",
				  dev_table[row].id, cpus, tests, dev_table[row].seen, dev_table[row].source);
		console_write(line, n > 0 && (size_t)n < sizeof(line) ? (size_t)n : strlen(line));
	}
}

/* Prints a leaf result and returns it. Inside a per-CPU block the name
 * carries the block's name ("pmu.count.x@cpu1-apic1"): a consumer that reads
 * one line at a time (LAVA's test monitor, grep) then never merges two
 * CPUs' results into one test case. */
static enum ktest_result report(const struct ktest_run *r, unsigned level, unsigned num,
				const char *cpu_block)
{
	const char *p = r->log;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		print_indented(level, "%.*s", (int)len, p);
		p += len + (nl ? 1 : 0);
	}
	if (r->log_truncated)
		print_indented(level, "# (diagnostics truncated at %u bytes)", KTEST_LOG_SIZE);
	const struct ktest *t = r->test;
	char name[160];
	ksnprintf(name, sizeof(name), "%s.%s%s%s", t->suite, t->name, cpu_block ? "@" : "",
		  cpu_block ? cpu_block : "");
	switch (r->result) {
	case KTEST_PASS:
		print_indented(level, "ok %u %s", num, name);
		totals.passed++;
		break;
	case KTEST_SKIP:
		print_indented(level, "ok %u %s # SKIP %s", num, name, r->skip_reason);
		totals.skipped++;
		break;
	case KTEST_FAIL:
		print_indented(level, "not ok %u %s", num, name);
		totals.failed++;
		break;
	case KTEST_TIMEOUT:
		print_indented(level, "not ok %u %s # TIMEOUT %ums", num, name, r->budget_ms);
		totals.failed++;
		break;
	case KTEST_XFAIL: report_xfail(r, level, num, name); break;
	}
	return r->result;
}

/* A block is not ok if any child failed, SKIP if every child skipped. */
static void print_parent(unsigned level, unsigned num, const char *name, unsigned fails, unsigned skips,
			 unsigned n)
{
	if (fails)
		print_indented(level, "not ok %u %s", num, name);
	else if (n && skips == n)
		print_indented(level, "ok %u %s # SKIP every test skipped", num, name);
	else
		print_indented(level, "ok %u %s", num, name);
}

static void run_block(const struct suite *s, unsigned cpu, unsigned level, const char *cpu_block,
		      uint32_t budget, unsigned *fails, unsigned *skips, unsigned *n)
{
	unsigned num = 0;
	for (unsigned i = 0; i < s->ntests; i++) {
		const struct ktest *t = s->tests[i];
		/* In a per-CPU suite, a test without the flag runs on the BSP only. */
		if (s->per_cpu && !(t->flags & KTEST_PER_CPU) && cpu != 0)
			continue;
		enum ktest_result res = report(run_on(t, cpu, budget), level, ++num, cpu_block);
		*fails += res == KTEST_FAIL || res == KTEST_TIMEOUT;
		*skips += res == KTEST_SKIP;
		(*n)++;
	}
}

static unsigned block_size(const struct suite *s, unsigned cpu)
{
	unsigned n = 0;
	for (unsigned i = 0; i < s->ntests; i++)
		n += !s->per_cpu || (s->tests[i]->flags & KTEST_PER_CPU) || cpu == 0;
	return n;
}

void ktest_begin(const struct ktest_config *cfg)
{
	collect(cfg->select);
	sort_selection();
	irq_set_handler(VEC_TIMER, watchdog_irq);
	/* The leading LF ends whatever line the loader left open (GRUB leaves
	 * a CR), so the version line starts a line of its own. */
	console_printf("\nKTAP version 1\n1..%u\n", nsuites);
}

struct ktest_totals ktest_run_all(const struct ktest_config *cfg)
{
	for (unsigned si = 0; si < nsuites; si++) {
		const struct suite *s = &suites[si];
		unsigned fails = 0, skips = 0, n = 0;
		if (!s->per_cpu) {
			print_block_header(1, s->name, s->ntests);
			run_block(s, smp_this_cpu(), 1, NULL, cfg->default_budget_ms, &fails, &skips, &n);
		} else {
			unsigned ncpus = smp_num_cpus();
			print_block_header(1, s->name, ncpus);
			for (unsigned cpu = 0; cpu < ncpus; cpu++) {
				char name[48];
				unsigned f = 0, sk = 0, k = 0;
				ksnprintf(name, sizeof(name), "cpu%u-apic%u", cpu, smp_cpu(cpu)->apic_id);
				print_block_header(2, name, block_size(s, cpu));
				run_block(s, cpu, 2, name, cfg->default_budget_ms, &f, &sk, &k);
				print_parent(1, cpu + 1, name, f, sk, k);
				fails += f != 0;
				skips += k && sk == k;
				n++;
			}
		}
		print_parent(0, si + 1, s->name, fails, skips, n);
	}
	return totals;
}
