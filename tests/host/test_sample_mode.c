/* Host tests of sample mode's pure parts: event strings with periods (the
 * named "cycles/period=N/" form and the cpu/.../ form), every option
 * refusal, and the drain -> summary -> verdict path on rings the PMU model
 * filled through the real PMI handler: exact lines, exact loss accounting
 * in both ring modes, the RIP verdict. With SAMPLE_MODE_E2E_DIR set, the
 * e2e_* cases also write their serial-style logs there for
 * tools/test_sample_mode_e2e.py to feed to tools/pmutest-samples. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ringbuf.h"
#include "modes/sample.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "pmu/sample_record.h"
#include "tests/host/hosttest.h"
#include "tests/host/pmu_model.h"

static char err[512];
static struct pmu_event_attr attr;

/* ---- Event strings ---- */

static void parses_like(const char *s, const char *plain, uint64_t period)
{
	struct pmu_event_attr want;
	char e2[256];

	memset(&attr, 0xa5, sizeof(attr));
	HT_CHECK(sample_mode_parse_event(s, &attr, err, sizeof(err)) == PMU_OK, "\"%s\": %s", s, err);
	HT_CHECK(pmu_event_parse(plain, &want, e2, sizeof(e2)) == PMU_OK, "\"%s\": %s", plain, e2);
	want.period = period;
	HT_CHECK(
		memcmp(&attr, &want, sizeof(want)) == 0,
		"\"%s\" should equal \"%s\" with period %llu: event %#x/%#x period %llu usr %d os %d intr %d",
		s, plain, (unsigned long long)period, attr.event, attr.umask, (unsigned long long)attr.period,
		attr.usr, attr.os, attr.intr);
}

HT_TEST(parse_period_forms)
{
	parses_like("cycles/period=100000/", "cycles", 100000);
	parses_like("instructions/period=0x186a0/:u", "instructions:u", 100000);
	parses_like("branch-misses/period=20000/:k", "branch-misses:k", 20000);
	parses_like("r003c/period=50000/", "r003c", 50000);
	/* The cpu/ form is the driver parser's own, period term included. */
	parses_like("cpu/event=0x3c,umask=0,period=100000/", "cpu/event=0x3c,umask=0,period=100000/", 100000);
	parses_like("cycles", "cycles", 0);
	parses_like("cycles:u", "cycles:u", 0);

	HT_CHECK_EQ(sample_mode_parse_event("cycles/period=100000/", &attr, err, sizeof(err)), PMU_OK);
	HT_CHECK_EQ(attr.arch, PMU_ARCH_CYCLES);
	HT_CHECK_EQ(attr.event, 0x3c);
	HT_CHECK_EQ(attr.umask, 0);
	HT_CHECK_EQ(attr.period, 100000);
	HT_CHECK(attr.usr && attr.os && !attr.intr, "both rings, no INT yet");
	HT_CHECK_STR(err, "");
}

static void parse_refused(const char *s, const char *want, bool exact)
{
	int rc = sample_mode_parse_event(s, &attr, err, sizeof(err));
	HT_CHECK(rc == PMU_E_INVAL, "\"%s\" should be refused, got %d", s, rc);
	if (exact)
		HT_CHECK(strcmp(err, want) == 0, "\"%s\": expected \"%s\", seen \"%s\"", s, want, err);
	else
		HT_CHECK(strstr(err, want) != NULL, "\"%s\": expected \"%s\" in \"%s\"", s, want, err);
}

HT_TEST(parse_refusals)
{
	parse_refused("cycles//", "'cycles//': empty term list between the slashes (NAME/period=N/)", true);
	parse_refused(
		"cycles/cmask=1/",
		"term 'cmask=1' is not supported after a named or raw event (only period=N, branches and callstack; other terms need cpu/event=..,umask=..,term/)",
		true);
	parse_refused("cycles/period=1000,period=2000/", "duplicate term 'period'", true);
	parse_refused("cycles/period=12x/",
		      "term 'period=12x': '12x' is not a number in 1..0x7fffffffffffffff (decimal or 0x hex)",
		      true);
	parse_refused("cycles/period=0x8000000000000000/", "is not a number in 1..0x7fffffffffffffff", false);
	parse_refused("cycles/period=0/",
		      "term 'period=0' samples nothing (leave the period out to only count the event)", true);
	parse_refused("cycles/period=1000", "missing closing '/' in 'cycles/period=1000'", true);
	parse_refused("/period=1000/", "'/period=1000/' has no event before the '/'", true);
	parse_refused("bogus/period=1000/", "unknown event 'bogus'", false);
	parse_refused("cycles/period=1000/:x", "bad modifier 'x'", false);
	parse_refused("cpu/event=0x3c,umsk=1/", "unknown term 'umsk'", false);
	parse_refused("", "empty event string", true);
}

/* perf's precise modifier and the branch-stack terms. */
HT_TEST(parse_precise_and_branch_stacks)
{
	enum pmu_sampling_branches br = PMU_SAMPLING_BRANCHES_NONE;
	bool precise = false;

	HT_CHECK_EQ(sample_mode_parse_event_hw("branches/period=20000/:p", &attr, &precise, &br, err,
					       sizeof(err)),
		    PMU_OK);
	HT_CHECK(precise && br == PMU_SAMPLING_BRANCHES_NONE && attr.period == 20000 && attr.usr && attr.os,
		 "':p': precise %d branches %d period %llu", precise, br, (unsigned long long)attr.period);
	precise = false;
	HT_CHECK_EQ(sample_mode_parse_event_hw("cycles/period=20000,callstack/:up", &attr, &precise, &br, err,
					       sizeof(err)),
		    PMU_OK);
	HT_CHECK(precise && br == PMU_SAMPLING_BRANCHES_USER_CALLSTACK && attr.usr && !attr.os,
		 "':up' and callstack: precise %d branches %d usr %d os %d", precise, br, attr.usr, attr.os);
	precise = false;
	br = PMU_SAMPLING_BRANCHES_NONE;
	HT_CHECK_EQ(sample_mode_parse_event_hw("cpu/event=0xc4,umask=0,period=30000/:pp", &attr, &precise,
					       &br, err, sizeof(err)),
		    PMU_OK);
	HT_CHECK(precise && attr.event == 0xc4 && attr.period == 30000, "cpu/ form with :pp");
	HT_CHECK_EQ(sample_mode_parse_event_hw("cycles/branches,period=100000/", &attr, &precise, &br, err,
					       sizeof(err)),
		    PMU_OK);
	HT_CHECK_EQ(br, PMU_SAMPLING_BRANCHES_ANY);
	HT_CHECK_EQ(sample_mode_parse_event_hw("cycles/callstack,period=100000/", &attr, &precise, &br, err,
					       sizeof(err)),
		    PMU_E_INVAL);
	HT_CHECK_STR(err, "term 'callstack': the LBRs keep either the last branches or a call stack");
	/* The plain parser takes neither. */
	parse_refused("cycles/period=100000/:p", "the precise modifier 'p' is not taken here", false);
	parse_refused("cycles/period=100000,branches/", "term 'branches' is not taken here", true);
}

HT_TEST(plan_precise_and_branches)
{
	struct sample_mode_plan pl;
	struct mode_opts o = { .events = "instructions,branches/period=20000,callstack/:p" };

	HT_CHECK(sample_mode_plan(&pl, &o, err, sizeof(err)) == MODE_OK, "%s", err);
	HT_CHECK(pl.precise == 1 && pl.branches == PMU_SAMPLING_BRANCHES_USER_CALLSTACK && pl.nsampling == 1,
		 "precise %d branches %d", pl.precise, pl.branches);
	o.events = "cycles/period=20000/:p,branches/period=20000/:p";
	HT_CHECK_EQ(sample_mode_plan(&pl, &o, err, sizeof(err)), MODE_E_ARGS);
	HT_CHECK_STR(err, "event 'branches/period=20000/:p': only one event is sampled through PEBS (already "
			  "'cycles/period=20000/:p')");
	o.events = "cycles:p,branches/period=20000/";
	HT_CHECK_EQ(sample_mode_plan(&pl, &o, err, sizeof(err)), MODE_E_ARGS);
	HT_CHECK_STR(err, "event 'cycles:p': precise (:p) sampling needs a period");
	o.events = "cycles/period=20000/";
	HT_CHECK(sample_mode_plan(&pl, &o, err, sizeof(err)) == MODE_OK && pl.precise == -1 &&
			 pl.branches == PMU_SAMPLING_BRANCHES_NONE,
		 "plain: %s", err);
}

/* ---- Options ---- */

static struct sample_mode_plan plan;

HT_TEST(plan_defaults)
{
	struct mode_opts o = { 0 };

	HT_CHECK(sample_mode_plan(&plan, &o, err, sizeof(err)) == MODE_OK, "%s", err);
	HT_CHECK_EQ(plan.nev, 1);
	HT_CHECK_EQ(plan.nsampling, 1);
	HT_CHECK_STR(plan.names[0], SAMPLE_MODE_DEFAULT_EVENTS);
	HT_CHECK_EQ(plan.attr[0].period, 10000000);
	HT_CHECK_EQ(plan.attr[0].arch, PMU_ARCH_CYCLES);
	HT_CHECK(plan.attr[0].intr, "a sampling event is encoded with INT");
	HT_CHECK_EQ(plan.wl_kind, PMU_WL_LOOP);
	HT_CHECK_EQ(plan.wl_size, pmu_wl_descs[PMU_WL_LOOP].default_size);
	HT_CHECK_EQ(plan.duration_ms, SAMPLE_MODE_DEFAULT_DURATION_MS);
	HT_CHECK_EQ(plan.ring_bytes, 65536);
	HT_CHECK(!plan.overwrite, "default: drop new records when full");
	HT_CHECK_STR(err, "");
}

HT_TEST(plan_mixed_events_and_bounds)
{
	struct mode_opts o = {
		.events = "cycles/period=100000/,instructions,cpu/event=0xc4,umask=0,period=50000/",
		.workload = "chase",
		.size = 4096,
		.duration_ms = SAMPLE_MODE_MAX_DURATION_MS,
		.ring_bytes = SAMPLE_MODE_MAX_RING,
		.overwrite = true,
	};

	HT_CHECK(sample_mode_plan(&plan, &o, err, sizeof(err)) == MODE_OK, "%s", err);
	HT_CHECK_EQ(plan.nev, 3);
	HT_CHECK_EQ(plan.nsampling, 2);
	HT_CHECK_STR(plan.names[1], "instructions");
	HT_CHECK_EQ(plan.attr[0].period, 100000);
	HT_CHECK_EQ(plan.attr[1].period, 0);
	HT_CHECK_EQ(plan.attr[2].period, 50000);
	HT_CHECK(plan.attr[0].intr && !plan.attr[1].intr && plan.attr[2].intr,
		 "INT on the sampling events only");
	HT_CHECK_EQ(plan.wl_kind, PMU_WL_CHASE);
	HT_CHECK_EQ(plan.wl_size, 4096);
	HT_CHECK_EQ(plan.ring_bytes, SAMPLE_MODE_MAX_RING);
	HT_CHECK(plan.overwrite, "overwrite kept");

	/* The smallest period and ring accepted. */
	o = (struct mode_opts){ .events = "cycles/period=10000/", .ring_bytes = SAMPLE_MODE_MIN_RING };
	HT_CHECK(sample_mode_plan(&plan, &o, err, sizeof(err)) == MODE_OK, "%s", err);
	HT_CHECK_EQ(plan.attr[0].period, SAMPLE_MODE_MIN_PERIOD);
}

static void plan_refused(const struct mode_opts *o, const char *want, bool exact)
{
	int rc = sample_mode_plan(&plan, o, err, sizeof(err));
	HT_CHECK(rc == MODE_E_ARGS, "expected %d (bad options) for \"%s\", got %d", MODE_E_ARGS, want, rc);
	if (exact)
		HT_CHECK(strcmp(err, want) == 0, "expected \"%s\", seen \"%s\"", want, err);
	else
		HT_CHECK(strstr(err, want) != NULL, "expected \"%s\" in \"%s\"", want, err);
}

HT_TEST(plan_refusals)
{
	plan_refused(
		&(struct mode_opts){ .events = "cycles" },
		"event 'cycles' has no period: sample mode needs at least one, e.g. cycles/period=10000000/ or cpu/event=0x3c,umask=0,period=10000000/",
		true);
	plan_refused(
		&(struct mode_opts){ .events = "cycles,instructions:u" },
		"none of the events 'cycles', 'instructions:u' has a period: sample mode needs at least one",
		false);
	plan_refused(&(struct mode_opts){ .events = "cpu/event=0x3c,umask=0/" },
		     "event 'cpu/event=0x3c,umask=0/' has no period", false);
	plan_refused(
		&(struct mode_opts){ .events = "cycles/period=9999/" },
		"event 'cycles/period=9999/': period 9999 is below 10000 (each overflow costs a PMI; shorter periods measure the handler)",
		true);
	plan_refused(&(struct mode_opts){ .events = "cpu/event=0x3c,int/" },
		     "event 'cpu/event=0x3c,int/': int without a period", false);
	plan_refused(&(struct mode_opts){ .events = "cycles/cmask=2/" },
		     "event 'cycles/cmask=2/': term 'cmask=2' is not supported", false);
	plan_refused(&(struct mode_opts){ .events = ",cycles/period=100000/" },
		     "events=,cycles/period=100000/: empty event at offset 0 of the event list", true);
	plan_refused(&(struct mode_opts){ .events = "cycles/period=100000" },
		     "events=cycles/period=100000: event 'cycles/period=100000' has no closing '/'", true);
	plan_refused(&(struct mode_opts){ .events = "a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a" },
		     "more than 16 events", false);
	plan_refused(&(struct mode_opts){ .ring_bytes = 65535 },
		     "ring=65535: the ring size must be a power of two", true);
	plan_refused(&(struct mode_opts){ .ring_bytes = 2048 },
		     "ring=2048: outside 4096..16777216 bytes per CPU", true);
	plan_refused(&(struct mode_opts){ .ring_bytes = 2ull * SAMPLE_MODE_MAX_RING },
		     "ring=33554432: outside 4096..16777216 bytes per CPU", true);
	plan_refused(&(struct mode_opts){ .workload = "spin" },
		     "unknown workload 'spin' (known: loop chase branchy memcpy)", true);
	plan_refused(&(struct mode_opts){ .workload = "chase", .size = 64 },
		     "workload chase: size 64 bytes is outside 128..1073741824", true);
	plan_refused(&(struct mode_opts){ .duration_ms = SAMPLE_MODE_MAX_DURATION_MS + 1 },
		     "duration 3600001 ms is longer than 3600000 ms", true);
}

/* ---- Drain, summary, verdict on model-filled rings ---- */

#define RANGE_LO 0xffffffff80112000ull
#define RANGE_HI 0xffffffff801121a0ull
#define OUTSIDE_RIP 0xffffffff80108ba0ull /* "memcpy" in the e2e test's fake nm */

static const struct sample_mode_range ranges[] = { { RANGE_LO, RANGE_HI, "pmu_wl_step" } };

static uint64_t cur_rip = RANGE_LO;
static uint8_t ring_mem[2][PMU_SAMPLING_CTL_SIZE + 65536] __attribute__((aligned(4096)));

/* The captured log, as the kernel would print it. */
#define LOG_MAX 512
static char log_lines[LOG_MAX][SAMPLE_MODE_LINE_LEN];
static unsigned nlog;

static void log_line(const char *s)
{
	if (nlog < LOG_MAX)
		snprintf(log_lines[nlog++], sizeof(log_lines[0]), "%s", s);
}

static void model_pmi(void *arg)
{
	(void)arg;
	pmu_pmi_handle(cur_rip, 0);
}

static void pmi_reset_cpu(void *arg)
{
	(void)arg;
	pmu_pmi_set_ring(NULL, 0);
	pmu_pmi_reset_stats();
}

static void boot(void)
{
	model_init(MODEL_V4, true);
	pmu_init_all(&model_probe_opts, model_run_on);
	for (unsigned c = 0; c < model_ncpus(); c++)
		model_run_on(c, pmi_reset_cpu, NULL);
	model_set_pmi_handler(model_pmi, NULL);
	model_set_cpu(0);
	nlog = 0;
}

/* One CPU's session as sample_mode.c runs it: events from the plan placed
 * first, stats around the run, then the same result fields. */
struct session {
	struct pmu_event ev[SAMPLE_MODE_MAX_EVENTS];
	struct pmu_event *evp[SAMPLE_MODE_MAX_EVENTS];
	struct pmu_sampling s;
	struct pmu_pmi_stats st0;
	int idx[SAMPLE_MODE_MAX_EVENTS]; /* the counters they held */
	uint64_t tsc0;
	struct sample_mode_cpu res;
};

static void session_start(struct session *x, unsigned cpu, void *mem, size_t mem_size)
{
	memset(x, 0, sizeof(*x));
	model_set_cpu(cpu);
	for (unsigned i = 0; i < plan.nev; i++) {
		pmu_event_init(&x->ev[i], &plan.attr[i], plan.names[i]);
		x->evp[i] = &x->ev[i];
	}
	HT_CHECK_EQ(pmu_events_add(x->evp, plan.nev), PMU_OK);
	for (unsigned i = 0; i < plan.nev; i++)
		x->idx[i] = x->ev[i].hw.idx;
	x->tsc0 = model_tsc(cpu);
	pmu_pmi_get_stats(cpu, &x->st0);
	HT_CHECK(pmu_sampling_start(&x->s, x->evp, plan.nev, mem, mem_size, plan.overwrite) == PMU_OK,
		 "start: %s", x->s.reason);
}

static void session_stop(struct session *x, unsigned cpu)
{
	struct pmu_pmi_stats st1;

	model_set_cpu(cpu);
	HT_CHECK_EQ(pmu_sampling_stop(&x->s), PMU_OK);
	pmu_pmi_get_stats(cpu, &st1);
	x->res.cpu = cpu;
	x->res.pmis = st1.pmis - x->st0.pmis;
	x->res.spurious = st1.spurious - x->st0.spurious;
	x->res.written = st1.samples - x->st0.samples;
	x->res.handler_lost = st1.lost - x->st0.lost;
	for (unsigned i = 0; i < plan.nev; i++)
		if (plan.attr[i].period)
			x->res.overflows += st1.ovf[x->ev[i].hw.idx] - x->st0.ovf[x->ev[i].hw.idx];
	x->res.ring_lost = pmu_sampling_ring_lost(&x->s);
	pmu_events_del(x->evp, plan.nev);
}

/* n periods of the sampling event (cycles), one PMI at the end of each;
 * instructions retire one per cycle. */
static void run_periods(uint64_t period, unsigned n, uint64_t rip)
{
	struct model_work w = { .instructions = period, .cycles = period };

	cur_rip = rip;
	for (unsigned i = 0; i < n; i++)
		model_tick(&w);
}

static void hex_of(const void *p, size_t n, char *out)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static unsigned count_lines(const char *prefix)
{
	unsigned n = 0;
	for (unsigned i = 0; i < nlog; i++)
		n += strncmp(log_lines[i], prefix, strlen(prefix)) == 0;
	return n;
}

/* The log to SAMPLE_MODE_E2E_DIR/name, when asked for. */
static void save_log(const char *name)
{
	const char *dir = getenv("SAMPLE_MODE_E2E_DIR");
	char path[1024];

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	HT_CHECK(f != NULL, "cannot write %s", path);
	if (!f)
		return;
	for (unsigned i = 0; i < nlog; i++)
		fprintf(f, "  %s\n", log_lines[i]); /* KTAP-indented, as sample.run prints */
	fclose(f);
}

/* Two CPUs, non-overwrite rings: CPU 0 takes 5 samples in the workload,
 * CPU 1 takes 12, one of them outside. Every line, the summaries and the
 * verdicts are exact. */
HT_TEST(e2e_two_cpus_drain_lines_summary_verdict)
{
	static struct session x[2];
	char buf[SAMPLE_MODE_LINE_LEN], why[256];
	const uint64_t P = 10000;
	struct mode_opts o = { .events = "cycles/period=10000/,instructions" };

	boot();
	HT_CHECK(sample_mode_plan(&plan, &o, err, sizeof(err)) == MODE_OK, "%s", err);
	sample_mode_format_range(&ranges[0], buf, sizeof(buf));
	HT_CHECK_STR(buf,
		     "# sample-mode: workload rip range 0xffffffff80112000-0xffffffff801121a0 (pmu_wl_step)");
	log_line(buf);

	session_start(&x[0], 0, ring_mem[0], sizeof(ring_mem[0]));
	session_start(&x[1], 1, ring_mem[1], sizeof(ring_mem[1]));
	model_set_cpu(0);
	run_periods(P, 5, RANGE_LO + 0x40);
	model_set_cpu(1);
	run_periods(P, 11, RANGE_HI - 1);
	run_periods(P, 1, OUTSIDE_RIP);
	session_stop(&x[0], 0);
	session_stop(&x[1], 1);

	for (unsigned c = 0; c < 2; c++) {
		unsigned first = nlog;
		uint64_t taken = sample_mode_drain(&x[c].s, &plan, ranges, 1, log_line, &x[c].res);
		HT_CHECK_EQ(taken, c ? 12 : 5);
		HT_CHECK_EQ(nlog - first, taken);
		sample_mode_format_summary(&x[c].res, &plan, true, buf, sizeof(buf));
		log_line(buf);
		HT_CHECK_EQ(sample_mode_judge(&x[c].res, false, true, why, sizeof(why)), MODE_OK);
		HT_CHECK_STR(why, "");
		if (c == 0)
			HT_CHECK_STR(
				buf,
				"# sample-mode: cpu 0: 5 samples, 0 lost, 5 PMIs, period 10000, 5 in workload range");
		else
			HT_CHECK_STR(
				buf,
				"# sample-mode: cpu 1: 12 samples, 0 lost, 12 PMIs, period 10000, 11 in workload range");
		HT_CHECK_EQ(x[c].res.first_out_rip, c ? OUTSIDE_RIP : 0);
	}
	/* The first sample line is the record, byte for byte: CPU 0's first
	 * overflow, P cycles into the run, carrying the instructions counted
	 * so far (one per cycle). */
	union {
		struct pmu_sample s;
		uint8_t b[64];
	} rec = { .s = { .hdr = { RB_RECORD_SAMPLE, 0, 64 },
			 .cpu = 0,
			 .idx = (uint32_t)x[0].idx[0],
			 .tsc = x[0].tsc0 + P,
			 .rip = RANGE_LO + 0x40,
			 .period = P,
			 .nr_values = 1,
			 .version = PMU_SAMPLE_VERSION } };
	rec.s.values[0] = (struct pmu_sample_value){ (uint32_t)x[0].idx[1], 0, P };
	char want[SAMPLE_MODE_LINE_LEN] = "# sample: ";
	hex_of(&rec, sizeof(rec), want + strlen(want));
	HT_CHECK_STR(log_lines[1], want);
	HT_CHECK_EQ(count_lines(PMU_SAMPLE_LINE_PREFIX), 17);
	save_log("two_cpus.log");
}

/* A ring of one page takes exactly 4096 / 64 samples; the rest are
 * dropped, counted by the handler and the ring alike, and no LOST record
 * can follow once sampling stopped: accounted, so the verdict is OK. */
HT_TEST(e2e_lost_accounted_when_ring_full)
{
	static struct session x;
	char buf[SAMPLE_MODE_LINE_LEN], why[256];
	const uint64_t P = 20000;
	struct mode_opts o = { .events = "cycles/period=20000/,instructions", .ring_bytes = 4096 };

	boot();
	HT_CHECK(sample_mode_plan(&plan, &o, err, sizeof(err)) == MODE_OK, "%s", err);
	sample_mode_format_range(&ranges[0], buf, sizeof(buf));
	log_line(buf);
	session_start(&x, 0, ring_mem[0], PMU_SAMPLING_CTL_SIZE + (size_t)plan.ring_bytes);
	run_periods(P, 100, RANGE_LO);
	session_stop(&x, 0);
	HT_CHECK_EQ(sample_mode_drain(&x.s, &plan, ranges, 1, log_line, &x.res), 4096 / 64);
	HT_CHECK_EQ(x.res.tally.samples, 64);
	HT_CHECK_EQ(x.res.tally.lost, 0);
	HT_CHECK_EQ(x.res.written, 64);
	HT_CHECK_EQ(x.res.handler_lost, 36);
	HT_CHECK_EQ(x.res.ring_lost, 36);
	HT_CHECK_EQ(x.res.overflows, 100);
	sample_mode_format_summary(&x.res, &plan, true, buf, sizeof(buf));
	log_line(buf);
	HT_CHECK_STR(
		buf,
		"# sample-mode: cpu 0: 64 samples, 36 lost, 100 PMIs, period 20000, 64 in workload range");
	HT_CHECK_EQ(sample_mode_judge(&x.res, false, true, why, sizeof(why)), MODE_OK);
	save_log("ring_full.log");

	/* Each broken sum is caught, and named. */
	struct sample_mode_cpu bad = x.res;
	bad.written++;
	HT_CHECK_EQ(sample_mode_judge(&bad, false, true, why, sizeof(why)), MODE_E_RECORDS);
	HT_CHECK_STR(why, "cpu 0: drained 64 samples, the handler wrote 65");
	bad = x.res;
	bad.overflows++;
	HT_CHECK_EQ(sample_mode_judge(&bad, false, true, why, sizeof(why)), MODE_E_RECORDS);
	HT_CHECK_STR(why, "cpu 0: 64 written + 36 lost != 101 overflows of the sampling counters");
	bad = x.res;
	bad.ring_lost--;
	HT_CHECK_EQ(sample_mode_judge(&bad, false, true, why, sizeof(why)), MODE_E_RECORDS);
	HT_CHECK_STR(why, "cpu 0: the ring counted 35 drops, the handler 36");
	bad = x.res;
	bad.tally.lost = 37;
	HT_CHECK_EQ(sample_mode_judge(&bad, false, true, why, sizeof(why)), MODE_E_RECORDS);
	HT_CHECK_STR(why, "cpu 0: LOST records carry 37, more than the 36 the ring dropped");
	bad = x.res;
	bad.tally.bad = 1;
	HT_CHECK_EQ(sample_mode_judge(&bad, false, true, why, sizeof(why)), MODE_E_RECORDS);
	HT_CHECK_STR(why, "cpu 0: 1 unreadable records in the ring");
}

/* Overwrite mode keeps the newest: the reader's LOST record says how many
 * the producer overwrote, and drained + overwritten = written. */
HT_TEST(e2e_overwrite_keeps_newest_accounted)
{
	static struct session x;
	char buf[SAMPLE_MODE_LINE_LEN], why[256];
	const uint64_t P = 10000;
	struct mode_opts o = { .events = "cycles/period=10000/", .ring_bytes = 4096, .overwrite = true };

	boot();
	HT_CHECK(sample_mode_plan(&plan, &o, err, sizeof(err)) == MODE_OK, "%s", err);
	sample_mode_format_range(&ranges[0], buf, sizeof(buf));
	log_line(buf);
	session_start(&x, 0, ring_mem[0], PMU_SAMPLING_CTL_SIZE + (size_t)plan.ring_bytes);
	run_periods(P, 99, RANGE_LO + 8);
	run_periods(P, 1, RANGE_LO + 16); /* the newest */
	session_stop(&x, 0);
	sample_mode_drain(&x.s, &plan, ranges, 1, log_line, &x.res);
	HT_CHECK_EQ(x.res.written, 100);
	HT_CHECK_EQ(x.res.handler_lost + x.res.ring_lost, 0);
	HT_CHECK(x.res.tally.samples > 0 && x.res.tally.samples < 100, "some kept, some overwritten: %llu",
		 (unsigned long long)x.res.tally.samples);
	HT_CHECK_EQ(x.res.tally.samples + x.res.tally.lost, 100);
	HT_CHECK_EQ(x.res.tally.lost_records, 1);
	/* The last sample line is the newest sample. */
	HT_CHECK(nlog >= 2 && strstr(log_lines[nlog - 1], "10201180ffffffff") != NULL,
		 "last line should carry rip %#llx: %s", RANGE_LO + 16, nlog ? log_lines[nlog - 1] : "");
	sample_mode_format_summary(&x.res, &plan, true, buf, sizeof(buf));
	log_line(buf);
	char want[160];
	snprintf(
		want, sizeof(want),
		"# sample-mode: cpu 0: %llu samples, %llu lost, 100 PMIs, period 10000, %llu in workload range",
		(unsigned long long)x.res.tally.samples, (unsigned long long)(100 - x.res.tally.samples),
		(unsigned long long)x.res.tally.samples);
	HT_CHECK_STR(buf, want);
	HT_CHECK_EQ(sample_mode_judge(&x.res, true, true, why, sizeof(why)), MODE_OK);
	save_log("overwrite.log");

	struct sample_mode_cpu bad = x.res;
	bad.tally.lost--;
	HT_CHECK_EQ(sample_mode_judge(&bad, true, true, why, sizeof(why)), MODE_E_RECORDS);
	snprintf(want, sizeof(want),
		 "cpu 0: drained %llu samples + %llu overwritten != 100 written by the handler",
		 (unsigned long long)x.res.tally.samples, (unsigned long long)(x.res.tally.lost - 1));
	HT_CHECK_STR(why, want);
	bad = x.res;
	bad.ring_lost = 1;
	HT_CHECK_EQ(sample_mode_judge(&bad, true, true, why, sizeof(why)), MODE_E_RECORDS);
	HT_CHECK_STR(why, "cpu 0: overwrite ring dropped samples (handler 0, ring 1): it never should");
}

/* Samples whose CPU or period is not this run's are caught by the drain. */
HT_TEST(drain_catches_wrong_fields)
{
	static struct session x;
	char why[256];
	struct mode_opts o = { .events = "cycles/period=10000/" };

	boot();
	HT_CHECK(sample_mode_plan(&plan, &o, err, sizeof(err)) == MODE_OK, "%s", err);
	session_start(&x, 0, ring_mem[0], sizeof(ring_mem[0]));
	run_periods(10000, 3, RANGE_LO);
	session_stop(&x, 0);
	/* Judged as if it were CPU 2's ring, with another period asked. */
	x.res.cpu = 2;
	plan.attr[0].period = 20000;
	sample_mode_drain(&x.s, &plan, ranges, 1, NULL, &x.res);
	HT_CHECK_EQ(x.res.tally.samples, 3);
	HT_CHECK_EQ(x.res.bad_fields, 3);
	HT_CHECK_EQ(sample_mode_judge(&x.res, false, true, why, sizeof(why)), MODE_E_RECORDS);
	HT_CHECK_STR(why, "cpu 2: 3 samples with wrong fields; first: a sample says cpu 0");

	memset(&x.res, 0, sizeof(x.res));
	boot();
	o.events = "cycles/period=10000/";
	HT_CHECK(sample_mode_plan(&plan, &o, err, sizeof(err)) == MODE_OK, "%s", err);
	session_start(&x, 0, ring_mem[0], sizeof(ring_mem[0]));
	run_periods(10000, 2, RANGE_LO);
	session_stop(&x, 0);
	plan.attr[0].period = 20000;
	sample_mode_drain(&x.s, &plan, ranges, 1, NULL, &x.res);
	HT_CHECK_EQ(sample_mode_judge(&x.res, false, true, why, sizeof(why)), MODE_E_RECORDS);
	HT_CHECK_STR(
		why,
		"cpu 0: 2 samples with wrong fields; first: a sample has period 10000, which no event asked for");
}

/* The RIP verdict's threshold, its minimum sample count, and unknown
 * ranges. */
HT_TEST(rip_verdict_threshold)
{
	struct sample_mode_cpu r = {
		.cpu = 3, .written = 20, .overflows = 20, .in_range = 18, .first_out_rip = 0x1234
	};
	char why[256];

	r.tally.samples = 20;
	HT_CHECK_EQ(sample_mode_judge(&r, false, true, why, sizeof(why)), MODE_OK); /* 90% */
	r.in_range = 17;
	HT_CHECK_EQ(sample_mode_judge(&r, false, true, why, sizeof(why)), MODE_E_RIP);
	HT_CHECK_STR(
		why,
		"cpu 3: 17 of 20 sample RIPs in the workload's code, expected at least 90%; first outside: 0x1234");
	HT_CHECK_EQ(sample_mode_judge(&r, false, false, why, sizeof(why)), MODE_OK); /* ranges unknown */
	r.tally.samples = r.written = r.overflows = SAMPLE_MODE_RIP_MIN_SAMPLES - 1;
	r.in_range = 0;
	HT_CHECK_EQ(sample_mode_judge(&r, false, true, why, sizeof(why)), MODE_OK); /* too few to judge */
}

HT_TEST(summary_several_periods_and_spurious)
{
	struct mode_opts o = { .events = "cycles/period=100000/,instructions/period=50000/,branches" };
	struct sample_mode_cpu r = { .cpu = 7, .pmis = 9, .spurious = 2, .ring_lost = 4 };
	char buf[SAMPLE_MODE_LINE_LEN];

	HT_CHECK(sample_mode_plan(&plan, &o, err, sizeof(err)) == MODE_OK, "%s", err);
	r.tally.samples = 8;
	sample_mode_format_summary(&r, &plan, false, buf, sizeof(buf));
	HT_CHECK_STR(buf,
		     "# sample-mode: cpu 7: 8 samples, 4 lost, 9 PMIs, period 100000,50000, 2 spurious PMIs");
	HT_CHECK_STR(mode_status_name(MODE_SAMPLE, MODE_E_RIP), "sample RIPs outside the workload");
	HT_CHECK_STR(mode_status_name(MODE_SAMPLE, 42), "unknown status");
}

HT_MAIN("sample_mode")
