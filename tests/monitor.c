/* Monitor mode as KTAP tests. monitor.run (selected only by mode=monitor)
 * runs the command line's options; the others check monitor mode itself:
 * 200 ms of a workload on the last CPU, output captured, must refuse with
 * the probe's reason and no table without a PMU, and with one give a row
 * per interval with non-zero counts that fit the workload; events=none
 * works everywhere; bad options are refused naming the bad item. */
#include "modes/monitor.h"
#include "arch/x86/smp.h"
#include "lib/bits.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/loops.h"
#include "pmu/pmu.h"
#include "tests/ktest.h"
#include "tests/modes.h"
#include "tests/pmu/pmu_common.h"

/* With mode=monitor, boot selects only this test: it runs the command
 * line's options with the lines going to the console live. */
static const char *needs_monitor_mode(void)
{
	return mode_requested(MODE_MONITOR) ? NULL : "not in monitor mode (boot with mode=monitor)";
}

KTEST("monitor", run, needs_monitor_mode, KTEST_EXPLICIT,
      "mode=monitor: the run completes (SKIP without a PMU)")
{
	struct mode_result res;

	monitor_run(mode_requested(MODE_MONITOR), mode_test_line, &res);
	mode_test_judge(MODE_MONITOR, &res);
}

/* Read one unsigned decimal field; false when there is none. */
static bool next_u64(const char **p, uint64_t *v)
{
	const char *s = *p;
	size_t n;
	while (*s == ' ')
		s++;
	if (!(n = parse_dec_prefix(s, v)))
		return false;
	*p = s + n;
	return true;
}

/* "#     50.1    3   <n columns>": the time in tenths of a ms, then the
 * cpu and n numbers; false for any other line. */
static bool parse_row(const char *s, uint64_t *tenths, uint64_t *f, unsigned n)
{
	uint64_t tenth;
	if (strncmp(s, "# ", 2) != 0)
		return false;
	s += 2;
	if (!next_u64(&s, tenths) || *s++ != '.' || !next_u64(&s, &tenth) || tenth > 9)
		return false;
	*tenths = *tenths * 10 + tenth;
	for (unsigned i = 0; i < n; i++)
		if (!next_u64(&s, &f[i]))
			return false;
	return *s == '\0';
}

KTEST("monitor", run_on_last_cpu, NULL, 0, "200 ms on the last CPU: rows of counts, or the probe's reason")
{
	unsigned last;
	char list[16];
	struct pmu_cpu *pc = mode_test_last_cpu(&last, list, sizeof(list), 2); /* two events at once */
	struct mode_result res;

	struct mode_opts o = {
		.events = "instructions,cycles",
		.interval_ms = 50,
		.duration_ms = 200,
		.cpus = list,
		.workload = "branchy",
	};
	mode_cap_reset();
	int st = monitor_run(&o, mode_cap_keep, &res);

	/* The probe's verdict, read independently of the monitor, says
	 * which outcome is right. */
	if (!pmu_cpu_counts(pc)) {
		check(!mode_cap_find("time(ms)"), "no table header may be printed without a PMU");
		mode_test_no_pmu(MODE_MONITOR, "# monitor: ", last, st, &res,
				 mode_cap_find("# monitor: no PMU on cpu"));
		return;
	}
	if (!mode_test_ran(MODE_MONITOR, last, st, &res))
		return;
	check(mode_cap_find("#     time(ms)  cpu") != NULL, "no table header");
	unsigned rows = 0;
	for (unsigned i = 0; i < mode_cap.n; i++) {
		uint64_t t, f[4];
		if (!parse_row(mode_cap.line[i], &t, f, 4))
			continue;
		uint64_t cpu = f[0], ins = f[1], cyc = f[2], work = f[3];
		rows++;
		check(cpu == last, "row %u is for cpu %lu, expected %u", rows, cpu, last);
		check(ins > 0 && cyc > 0, "row %u: instructions %lu and cycles %lu must both be non-zero",
		      rows, ins, cyc);
		/* The loop retires exactly 3 instructions per iteration; the
		 * rest (clock reads, snapshots, interrupts) only adds. */
		check(ins >= PMU_LOOP_INSNS_PER_ITER * work,
		      "row %u: %lu instructions for %lu loop iterations, fewer than %u per iteration", rows,
		      ins, work, PMU_LOOP_INSNS_PER_ITER);
		diag("%s", mode_cap.line[i] + 2);
	}
	check(rows == 4, "expected 4 rows (200 ms in 50 ms intervals), saw %u", rows);
	if (rows != 4)
		mode_cap_dump();
}

/* events=none: the work column alone, so the whole machinery (every CPU,
 * the coordinator among them, the boundaries, the snapshot rings) runs
 * with or without a PMU. */
/* The longest run work_only_on_every_cpu retries at (200, 400, ... ms). */
#define NO_WORK_MAX_MS 1600

/* The first of CPUs 0..cpus-1 whose captured rows show no work, or ~0u. */
static unsigned idle_cpu(unsigned cpus)
{
	uint64_t work[MODE_CAP_LINES] = { 0 };

	for (unsigned i = 0; i < mode_cap.n; i++) {
		uint64_t t, f[2];
		if (parse_row(mode_cap.line[i], &t, f, 2) && f[0] < cpus && f[0] < MODE_CAP_LINES)
			work[f[0]] += f[1];
	}
	for (unsigned c = 0; c < cpus && c < MODE_CAP_LINES; c++)
		if (!work[c])
			return c;
	return ~0u;
}

KTEST("monitor", work_only_on_every_cpu, NULL, 0, "events=none on every CPU: per-CPU rows in time order")
{
	unsigned n = smp_num_cpus();
	/* A row per CPU per interval: few enough CPUs that all 4
	 * intervals' rows and 4 other lines fit the capture. */
	unsigned rows = 0, cpus = n < (MODE_CAP_LINES - 4) / 4 ? n : (MODE_CAP_LINES - 4) / 4;
	uint64_t last_t[MODE_CAP_LINES] = { 0 }; /* tenths of a ms, per CPU */
	uint64_t work[MODE_CAP_LINES] = { 0 };
	unsigned rows_of[MODE_CAP_LINES] = { 0 };
	char list[16];
	struct mode_result res;

	ksnprintf(list, sizeof(list), "0-%u", cpus - 1);
	struct mode_opts o = {
		.events = "none",
		.interval_ms = 50,
		.duration_ms = 200,
		.cpus = list,
		.workload = "branchy",
	};
	/* The duration is guest time (TSC), and a vCPU the host does not run
	 * (an overcommitted host, TCG with more vCPUs than cores) does no work
	 * in it however correct it is: a run with a CPU that did none is no
	 * evidence either way, and is done again for twice as long, up to
	 * NO_WORK_MAX_MS. A CPU that never works still fails. */
	int st;
	for (;;) {
		mode_cap_reset();
		st = monitor_run(&o, mode_cap_keep, &res);
		if (st != MODE_OK || res.status != MODE_OK || o.duration_ms >= NO_WORK_MAX_MS)
			break;
		unsigned idle = idle_cpu(cpus);
		if (idle == ~0u)
			break;
		diag("cpu %u did no work in %lu ms of guest time (its vCPU not run: a busy host?); again for %lu ms",
		     idle, (unsigned long)o.duration_ms, (unsigned long)o.duration_ms * 2);
		o.duration_ms *= 2;
		o.interval_ms *= 2;
	}
	if (!check(st == MODE_OK && res.status == MODE_OK,
		   "events=none on cpus %s: expected status 0, got %d (%s): %s", list, st,
		   mode_status_name(MODE_MONITOR, st), res.reason)) {
		mode_cap_dump();
		return;
	}
	check(mode_cap_find("#     time(ms)  cpu   branchy.iters") != NULL, "no header with the work column");
	for (unsigned i = 0; i < mode_cap.n; i++) {
		uint64_t t, f[2];
		if (!parse_row(mode_cap.line[i], &t, f, 2))
			continue;
		unsigned cpu = (unsigned)f[0];
		rows++;
		if (!check(cpu < cpus, "row \"%s\" names cpu %u, outside 0-%u", mode_cap.line[i], cpu,
			   cpus - 1))
			continue;
		unsigned k = ++rows_of[cpu];
		/* A snapshot is taken at or after its boundary, and the
		 * intervals of one CPU come in order. A CPU that ran late (64
		 * vCPUs on 2 host cores) takes two snapshots back to back, which
		 * the 0.1 ms column can show as the same time: not before is the
		 * property, not strictly after. */
		check(t >= k * o.interval_ms * 10 && t >= last_t[cpu],
		      "cpu %u interval %u at %lu.%lu ms: expected >= %lu ms, not before %lu.%lu", cpu, k,
		      t / 10, t % 10, (unsigned long)(k * o.interval_ms), last_t[cpu] / 10, last_t[cpu] % 10);
		work[cpu] += f[1];
		last_t[cpu] = t;
	}
	check(rows == 4 * cpus, "expected %u rows (4 intervals x %u CPUs), saw %u", 4 * cpus, cpus, rows);
	/* One interval may show no work where a single step outlasts it (a
	 * slow emulator), but every CPU must have worked. */
	for (unsigned c = 0; c < cpus; c++)
		check(rows_of[c] == 4 && work[c] > 0,
		      "cpu %u: %u rows, %lu iterations; expected 4 rows and some work", c, rows_of[c],
		      work[c]);
	if (rows != 4 * cpus)
		mode_cap_dump();
	else
		for (unsigned i = 0; i < mode_cap.n; i++)
			diag("%s", mode_cap.line[i] + 2);
}

KTEST("monitor", refuses_bad_options, NULL, 0, "10 bad option sets, each refused naming the bad item")
{
	struct mode_past_cpu past;

	mode_test_past_cpu(&past);
	const struct mode_bad_case cases[] = {
		{ { .events = "instructions,instrucions" },
		  "event 'instrucions': unknown event 'instrucions'" },
		{ { .events = "cycles,cpu/event=0xc0,umask=0" }, "has no closing '/'" },
		{ { .events = "cpu/event=0xc0,umsk=1/" }, "unknown term 'umsk'" },
		{ { .events = "cycles,,instructions" }, "empty event at offset 7" },
		{ { .cpus = past.list }, past.want },
		{ { .cpus = "1-0" }, "runs backwards" },
		{ { .cpus = "first" }, "\"first\" is not N, N-M or all" },
		{ { .workload = "spin" }, "unknown workload 'spin'" },
		{ { .workload = "chase", .size = 64 }, "size 64 bytes is outside" },
		{ { .interval_ms = 5 }, "interval 5 ms is outside" },
	};
	for (unsigned i = 0; i < ARRAY_LEN(cases); i++) {
		struct mode_result res;
		mode_cap_reset();
		int st = monitor_run(&cases[i].o, mode_cap_keep, &res);
		mode_test_refused(MODE_MONITOR, "# monitor: ", i, cases[i].want, st, &res);
	}
}
