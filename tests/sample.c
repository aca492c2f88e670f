/* Sample mode as KTAP tests. sample.run (selected only by mode=sample)
 * runs the command line's options with the lines going to the console
 * live; it passes when every CPU's samples and losses are accounted for
 * and SKIPs with the probe's reason without a PMU. The other tests run by
 * default: bad options are refused naming the bad item, and a short run on
 * the last CPU either samples correctly or refuses with the probe's reason. */
#include "arch/x86/smp.h"
#include "arch/x86/pc/console.h"
#include "lib/bits.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/pmu.h"
#include "modes/sample.h"
#include "tests/ktest.h"
#include "tests/pmu_common.h"

#define SM_PREFIX "# sample-mode: "
#define CAP_LINES 24
#define CAP_LEN 256

static char mode_nopmu[CAP_LEN];

static const char *needs_sample_mode(void)
{
	return sample_mode_requested() ? NULL : "not in sample mode (boot with mode=sample)";
}

/* Live, not through diag(): a drain can be thousands of lines and the
 * test log is printed only when the test ends. Two spaces of indent put
 * the lines inside the suite's KTAP block; tools/pmutest-samples allows
 * that. One console_write per line keeps long sample lines whole. */
static void mode_line(const char *s)
{
	static const char nopmu[] = SM_PREFIX "no PMU on ";
	char buf[SAMPLE_MODE_LINE_LEN + 4];
	int n = ksnprintf(buf, sizeof(buf), "  %s\n", s);

	console_write(buf, n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
	if (strncmp(s, nopmu, sizeof(nopmu) - 1) == 0)
		strlcpy(mode_nopmu, s + strlen(SM_PREFIX), sizeof(mode_nopmu));
}

KTEST("sample", run, needs_sample_mode, KTEST_EXPLICIT)
{
	mode_nopmu[0] = '\0';
	int st = sample_mode_run(sample_mode_requested(), mode_line);
	if (st == SAMPLE_MODE_E_NOPMU)
		ktest_skip("%s", mode_nopmu[0] ? mode_nopmu : "no PMU");
	check(st == SAMPLE_MODE_OK, "the sample-mode run ended with status %d (%s), see the lines above", st,
	      sample_mode_status_name(st));
}

/* ---- Captured runs ---- */

static char cap[CAP_LINES][CAP_LEN];
static unsigned ncap, ndropped;
static uint64_t nsample_lines, nsample_records;

static void cap_reset(void)
{
	ncap = ndropped = 0;
	nsample_lines = nsample_records = 0;
}

/* Sample lines are counted, not kept (a run makes hundreds); a record
 * whose first 4 bytes are 02 00 00 00 is RB_RECORD_SAMPLE (lib/ringbuf.h). */
static void cap_line(const char *s)
{
	static const char pre[] = PMU_SAMPLE_LINE_PREFIX;

	if (strncmp(s, pre, sizeof(pre) - 1) == 0) {
		nsample_lines++;
		nsample_records += strncmp(s + sizeof(pre) - 1, "02000000", 8) == 0;
		return;
	}
	if (ncap < CAP_LINES)
		strlcpy(cap[ncap++], s, CAP_LEN);
	else
		ndropped++;
}

static const char *cap_find(const char *needle)
{
	for (unsigned i = 0; i < ncap; i++)
		if (strstr(cap[i], needle))
			return cap[i];
	return NULL;
}

static void cap_dump(void)
{
	for (unsigned i = 0; i < ncap; i++)
		diag("captured: %s", cap[i]);
	if (ndropped)
		diag("captured: (%u more lines dropped)", ndropped);
}

struct bad_case {
	struct sample_mode_opts o;
	const char *want; /* in the refusal line */
};

/* Pure option checks: the same refusals with or without a PMU, before any
 * CPU is touched. */
KTEST("sample", refuses_bad_options, NULL, 0)
{
	char past[64], want_past[64];
	unsigned n = smp_num_cpus();

	ksnprintf(past, sizeof(past), "0,%u", n);
	ksnprintf(want_past, sizeof(want_past), "\"%u\" names a CPU past the last one online", n);
	const struct bad_case cases[] = {
		{ { .events = "cycles" }, "event 'cycles' has no period: sample mode needs at least one" },
		{ { .events = "cycles,instructions" },
		  "none of the events 'cycles', 'instructions' has a period" },
		{ { .events = "cpu/event=0x3c,umask=0/" }, "event 'cpu/event=0x3c,umask=0/' has no period" },
		{ { .events = "cycles/period=100/" }, "event 'cycles/period=100/': period 100 is below 10000" },
		{ { .events = "cycles/cmask=1/" }, "term 'cmask=1' is not supported after a named or raw event" },
		{ { .events = "cycles/period=0/" }, "term 'period=0' samples nothing" },
		{ { .events = "cycles/period=100000" }, "has no closing '/'" },
		{ { .events = "cycls/period=100000/" }, "unknown event 'cycls'" },
		{ { .events = "cpu/event=0x3c,int/" }, "int without a period" },
		{ { .ring_bytes = 65535 }, "ring=65535: the ring size must be a power of two" },
		{ { .ring_bytes = 1024 }, "ring=1024: outside 4096.." },
		{ { .workload = "spin" }, "unknown workload 'spin'" },
		{ { .workload = "chase", .size = 64 }, "size 64 bytes is outside" },
		{ { .cpus = past }, want_past },
		{ { .duration_ms = SAMPLE_MODE_MAX_DURATION_MS + 1 }, "is longer than" },
	};
	for (unsigned i = 0; i < ARRAY_LEN(cases); i++) {
		cap_reset();
		int st = sample_mode_run(&cases[i].o, cap_line);
		const char *l = cap_find(cases[i].want);
		check(st == SAMPLE_MODE_E_ARGS, "case %u: expected status %d (bad options), got %d (%s)", i,
		      SAMPLE_MODE_E_ARGS, st, sample_mode_status_name(st));
		check(l != NULL, "case %u: no line containing \"%s\"; first line: \"%s\"", i, cases[i].want,
		      ncap ? cap[0] : "(none)");
		check(ncap == 1 && nsample_lines == 0 && strncmp(cap[0], SM_PREFIX, strlen(SM_PREFIX)) == 0,
		      "case %u: expected one \"" SM_PREFIX "\" line, saw %u lines and %lu sample lines", i, ncap,
		      nsample_lines);
	}
}

/* Read the unsigned decimal after needle in s; false when absent. */
static bool field_after(const char *s, const char *needle, uint64_t *v)
{
	const char *p = s ? strstr(s, needle) : NULL;

	if (!p)
		return false;
	return parse_dec_prefix(p + strlen(needle), v) != 0;
}

/* 200 ms of the loop on the last CPU, cycles sampled every 10^6 with
 * instructions carried in each sample. */
KTEST("sample", short_run_on_last_cpu, NULL, 0)
{
	unsigned last = smp_num_cpus() - 1;
	struct pmu_cpu *pc = pmu_cpu_of(last);
	char list[16], want[PMU_REASON_LEN + 64], head[64];

	if (!pc)
		ktest_skip("cpu %u is beyond PMU_MAX_CPUS", last);
	pmu_test_init_cpu(last);
	ksnprintf(list, sizeof(list), "%u", last);
	struct sample_mode_opts o = {
		.events = "cycles/period=1000000/,instructions",
		.duration_ms = 200,
		.cpus = list,
		.workload = "loop",
	};
	cap_reset();
	int st = sample_mode_run(&o, cap_line);

	/* The probe's verdict, read independently of sample mode, says which
	 * outcome is right. */
	if (!pc->counting) {
		ksnprintf(want, sizeof(want), SM_PREFIX "no PMU on cpu %u: %s", last, pc->reason);
		check(st == SAMPLE_MODE_E_NOPMU, "no PMU on cpu %u: expected status %d (no PMU), got %d (%s)", last,
		      SAMPLE_MODE_E_NOPMU, st, sample_mode_status_name(st));
		check(ncap == 1 && strcmp(cap[0], want) == 0, "expected exactly the line \"%s\", saw %u lines, first \"%s\"",
		      want, ncap, ncap ? cap[0] : "(none)");
		check(nsample_lines == 0, "no sample lines without a PMU, saw %lu", nsample_lines);
		if (ncap)
			diag("%s", cap[0] + 2);
		return;
	}
	/* Counting works but the LVT cannot deliver a PMI (seen under some
	 * hypervisors): a refusal that says so is the right outcome. */
	const char *nopmi = cap_find("no PMI delivery");
	if (st == SAMPLE_MODE_E_NOPMU && nopmi)
		ktest_skip("%s", nopmi + strlen(SM_PREFIX));
	if (!check(st == SAMPLE_MODE_OK, "cpu %u counts: expected status 0, got %d (%s)", last, st,
		   sample_mode_status_name(st))) {
		cap_dump();
		return;
	}
	ksnprintf(head, sizeof(head), SM_PREFIX "cpu %u: ", last);
	const char *sum = cap_find(head);
	uint64_t samples = 0, lost = 0;
	check(sum && field_after(sum, head, &samples) && field_after(sum, "samples, ", &lost),
	      "no parsable summary line \"%s...\"", head);
	check(cap_find(SM_PREFIX "workload rip range 0x") != NULL, "no workload rip range line");
	/* The loop at 200 ms is hundreds of millions of cycles: at 10^6 per
	 * sample there must be samples, and each drained one printed. */
	check(samples > 0, "cpu %u: no samples in 200 ms at period 10^6 cycles", last);
	check(samples == nsample_records, "summary says %lu samples, %lu sample records were printed", samples,
	      nsample_records);
	check(nsample_lines >= nsample_records, "%lu lines for %lu sample records", nsample_lines, nsample_records);
	if (sum)
		diag("%s", sum + 2);
	if (!samples || samples != nsample_records)
		cap_dump();
}
