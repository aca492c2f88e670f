/* Sample mode as KTAP tests. sample.run (selected only by mode=sample)
 * runs the command line's options; the other tests run by default: bad
 * options are refused naming the bad item, and a short run on the last CPU
 * either samples correctly or refuses with the probe's reason. */
#include "modes/sample.h"
#include "arch/x86/smp.h"
#include "lib/bits.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "modes/workloads.h"
#include "pmu/intel/pebs.h"
#include "pmu/lbr.h"
#include "pmu/pmu.h"
#include "tests/ktest.h"
#include "tests/modes.h"
#include "tests/pmu/pmu_common.h"

/* With mode=sample, boot selects only this test: it runs the command
 * line's options with the lines going to the console live. */
static const char *needs_sample_mode(void)
{
	return mode_requested(MODE_SAMPLE) ? NULL : "not in sample mode (boot with mode=sample)";
}

KTEST("sample", run, needs_sample_mode, KTEST_EXPLICIT, "mode=sample: every CPU's samples and losses add up")
{
	struct mode_result res;

	sample_mode_run(mode_requested(MODE_SAMPLE), mode_test_line, &res);
	mode_test_judge(MODE_SAMPLE, &res);
}

#define SM_PREFIX "# sample-mode: "

/* ---- Captured runs (tests/modes.h keeps the lines) ---- */

static uint64_t nsample_lines, nsample_records;
/* The call-stack check's view of every sample record (cap_stacks). */
static bool cap_stacks;
static uint64_t nstack_in_step, nstack_step_called;

static void cap_reset(void)
{
	mode_cap_reset();
	nsample_lines = nsample_records = 0;
	nstack_in_step = nstack_step_called = 0;
}

/* A sample record from its hex (pmu/sample_record.h): a sample whose RIP
 * is in pmu_wl_step, but for its RET, must have, as its newest live call,
 * the call into pmu_wl_step. */
static void cap_check_stack(const char *hex)
{
	static uint8_t raw[PMU_SAMPLE_MAX_SIZE] __attribute__((aligned(8)));
	const struct pmu_sample *smp = (const void *)raw;
	size_t n = 0;

	for (; hex[2 * n] && hex[2 * n + 1] && n < sizeof(raw); n++)
		raw[n] = (uint8_t)(parse_hex_digit(hex[2 * n]) << 4 | parse_hex_digit(hex[2 * n + 1]));
	if (n < sizeof(struct pmu_sample) || smp->hdr.type != 2 ||
	    !(smp->hdr.misc & PMU_SAMPLE_MISC_BRANCHES) || n < pmu_sample_size_branches(smp->nr_values, 0))
		return;
	const struct pmu_sample_branches *b = (const void *)(raw + pmu_sample_size(smp->nr_values));
	if (smp->rip < (uint64_t)pmu_wl_step || smp->rip >= (uint64_t)pmu_wl_step_timed)
		return;
	/* A precise sample on pmu_wl_step's own RET (C3H, or F3H C3H): in call-stack
	 * mode that RET popped the call's entry as it retired (SDM vol. 3B,
	 * "LBR Call Stack"), before the record took the stack. */
	const volatile uint8_t *op = (const volatile uint8_t *)(uintptr_t)smp->rip;
	if (op[0] == 0xc3 || (op[0] == 0xf3 && op[1] == 0xc3))
		return;
	nstack_in_step++;
	nstack_step_called += b->nr && b->entry[0].to == (uint64_t)pmu_wl_step;
}

/* Sample lines are counted, not kept (a run makes hundreds); a record
 * whose first 4 bytes are 02 00 00 00 is RB_RECORD_SAMPLE (lib/ringbuf.h). */
static void cap_line(const char *s)
{
	static const char pre[] = PMU_SAMPLE_LINE_PREFIX;

	if (strncmp(s, pre, sizeof(pre) - 1) == 0) {
		nsample_lines++;
		nsample_records += strncmp(s + sizeof(pre) - 1, "02000000", 8) == 0;
		if (cap_stacks)
			cap_check_stack(s + sizeof(pre) - 1);
		return;
	}
	mode_cap_keep(s);
}

/* Pure option checks: the same refusals with or without a PMU, before any
 * CPU is touched. */
KTEST("sample", refuses_bad_options, NULL, 0, "15 bad option sets, each refused in one line naming it")
{
	struct mode_past_cpu past;

	mode_test_past_cpu(&past);
	const struct mode_bad_case cases[] = {
		{ { .events = "cycles" }, "event 'cycles' has no period: sample mode needs at least one" },
		{ { .events = "cycles,instructions" },
		  "none of the events 'cycles', 'instructions' has a period" },
		{ { .events = "cpu/event=0x3c,umask=0/" }, "event 'cpu/event=0x3c,umask=0/' has no period" },
		{ { .events = "cycles/period=100/" },
		  "event 'cycles/period=100/': period 100 is below 10000" },
		{ { .events = "cycles/cmask=1/" },
		  "term 'cmask=1' is not supported after a named or raw event" },
		{ { .events = "cycles/period=0/" }, "term 'period=0' samples nothing" },
		{ { .events = "cycles/period=100000" }, "has no closing '/'" },
		{ { .events = "cycls/period=100000/" }, "unknown event 'cycls'" },
		{ { .events = "cpu/event=0x3c,int/" }, "int without a period" },
		{ { .ring_bytes = 65535 }, "ring=65535: the ring size must be a power of two" },
		{ { .ring_bytes = 1024 }, "ring=1024: outside 4096.." },
		{ { .workload = "spin" }, "unknown workload 'spin'" },
		{ { .workload = "chase", .size = 64 }, "size 64 bytes is outside" },
		{ { .cpus = past.list }, past.want },
		{ { .duration_ms = SAMPLE_MODE_MAX_DURATION_MS + 1 }, "is longer than" },
	};
	for (unsigned i = 0; i < ARRAY_LEN(cases); i++) {
		struct mode_result res;
		cap_reset();
		int st = sample_mode_run(&cases[i].o, cap_line, &res);
		mode_test_refused(MODE_SAMPLE, SM_PREFIX, i, cases[i].want, st, &res);
		check(nsample_lines == 0, "case %u: %lu sample lines with a refusal", i, nsample_lines);
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
/* The longest run run_until_samples tries (200, 400, ... ms). */
#define NO_SAMPLES_MAX_MS 1600

/* Sample mode with o, done again for twice as long while it succeeds with
 * no sample record (with cap_stacks: none in pmu_wl_step), up to
 * NO_SAMPLES_MAX_MS. The duration is guest time
 * (TSC): a vCPU the host does not run (an overcommitted host, TCG with more
 * vCPUs than cores) samples nothing in it however correct it is, so an
 * empty run is no evidence either way. A sampler that never samples still
 * fails the callers' checks. */
static int run_until_samples(struct mode_opts *o, struct mode_result *res, unsigned cpu)
{
	for (;;) {
		cap_reset();
		int st = sample_mode_run(o, cap_line, res);
		if (st != MODE_OK || res->status != MODE_OK ||
		    (nsample_records && (!cap_stacks || nstack_in_step)) ||
		    o->duration_ms >= NO_SAMPLES_MAX_MS)
			return st;
		diag("cpu %u: no samples in %lu ms of guest time (its vCPU not run: a busy host?); again for %lu ms",
		     cpu, (unsigned long)o->duration_ms, (unsigned long)o->duration_ms * 2);
		o->duration_ms *= 2;
	}
}

KTEST("sample", short_run_on_last_cpu, NULL, 0,
      "200 ms on the last CPU: samples add up, or the probe's reason")
{
	unsigned last;
	char list[16], head[64];
	struct pmu_cpu *pc = mode_test_last_cpu(&last, list, sizeof(list), 2); /* two events at once */
	struct mode_result res;

	struct mode_opts o = {
		.events = "cycles/period=1000000/,instructions",
		.duration_ms = 200,
		.cpus = list,
		.workload = "loop",
	};
	int st = run_until_samples(&o, &res, last);

	/* The probe's verdict, read independently of sample mode, says which
	 * outcome is right. */
	if (!pmu_cpu_counts(pc)) {
		check(mode_cap.n == 1, "expected exactly one line, saw %u", mode_cap.n);
		check(nsample_lines == 0, "no sample lines without a PMU, saw %lu", nsample_lines);
		mode_test_no_pmu(MODE_SAMPLE, SM_PREFIX, last, st, &res,
				 mode_cap.n ? mode_cap.line[0] : NULL);
		return;
	}
	/* Counting works but the LVT cannot deliver a PMI (seen under some
	 * hypervisors): a refusal that says so is the right outcome. */
	if (st == MODE_E_NOPMU && strstr(res.reason, "no PMI delivery"))
		ktest_skip("%s", res.reason);
	if (!mode_test_ran(MODE_SAMPLE, last, st, &res))
		return;
	ksnprintf(head, sizeof(head), SM_PREFIX "cpu %u: ", last);
	const char *sum = mode_cap_find(head);
	uint64_t samples = 0, lost = 0;
	check(sum && field_after(sum, head, &samples) && field_after(sum, "samples, ", &lost),
	      "no parsable summary line \"%s...\"", head);
	check(mode_cap_find(SM_PREFIX "workload rip range 0x") != NULL, "no workload rip range line");
	/* The loop at 200 ms is hundreds of millions of cycles: at 10^6 per
	 * sample there must be samples, and each drained one printed. */
	check(samples > 0, "cpu %u: no samples in %lu ms at period 10^6 cycles", last,
	      (unsigned long)o.duration_ms);
	check(samples == nsample_records, "summary says %lu samples, %lu sample records were printed",
	      samples, nsample_records);
	check(nsample_lines >= nsample_records, "%lu lines for %lu sample records", nsample_lines,
	      nsample_records);
	if (sum)
		diag("%s", sum + 2);
	if (!samples || samples != nsample_records)
		mode_cap_dump();
}

/* Branches sampled through PEBS (each sample's RIP a record's
 * eventing IP) with the LBR call stack of the workload, which runs at CPL
 * 3 for it (pmu/sampling_hw.h). */
KTEST("sample", precise_callstack_on_last_cpu, NULL, 0,
      "PEBS samples with LBR call stacks: every one precise, calls exact")
{
	unsigned last;
	char list[16], head[64];
	struct pmu_cpu *pc = mode_test_last_cpu(&last, list, sizeof(list), 0);
	struct pmu_pebs_caps pebs;
	struct pmu_lbr_caps lbr;
	struct mode_result res;

	if (!pmu_cpu_counts(pc))
		ktest_skip("cpu %u: %s", last, pmu_cpu_reason(pc));
	/* Decoded here, on the BSP: the emulated and real parts pmutest
	 * runs on give every CPU the same PEBS and LBRs. */
	pmu_pebs_decode(pmu_caps(), &pebs);
	if (!pebs.present)
		ktest_skip("%s", pebs.why);
	pmu_lbr_decode(pmu_caps(), &lbr);
	if (lbr.kind == PMU_LBR_NONE)
		ktest_skip("%s", lbr.why);
	if (!lbr.call_stack || !lbr.cpl_filter)
		ktest_skip("%s LBRs without a call-stack mode and a CPL filter", pmu_lbr_kind_name(lbr.kind));
	struct mode_opts o = {
		.events = "branches/period=20000,callstack/:p",
		.duration_ms = 200,
		.cpus = list,
		.workload = "loop",
	};
	cap_stacks = true;
	int st = run_until_samples(&o, &res, last);
	cap_stacks = false;
	if (st == MODE_E_NOPMU && strstr(res.reason, "no PMI delivery"))
		ktest_skip("%s", res.reason);
	if (!mode_test_ran(MODE_SAMPLE, last, st, &res))
		return;
	ksnprintf(head, sizeof(head), SM_PREFIX "cpu %u: ", last);
	const char *sum = mode_cap_find(head);
	uint64_t samples = 0, precise = 0, stacks = 0;
	check(sum && field_after(sum, head, &samples) && field_after(sum, "in workload range, ", &precise) &&
		      field_after(sum, "precise, ", &stacks),
	      "no summary line \"%s... N precise, N with branch stacks\"", head);
	check(samples > 0 && precise == samples && stacks == samples,
	      "cpu %u: %lu samples, %lu precise, %lu with branch stacks: expected all", last, samples,
	      precise, stacks);
	/* In the loop the live calls end with the one into pmu_wl_step. */
	check(nstack_in_step > 0 && nstack_step_called == nstack_in_step,
	      "%lu samples in pmu_wl_step, %lu with its call (to %p) as the newest stack entry",
	      nstack_in_step, nstack_step_called, (void *)pmu_wl_step);
	if (sum)
		diag("%s", sum + 2);
	diag("%lu samples in pmu_wl_step, each with the call into it newest on its call stack",
	     nstack_in_step);
	if (nstack_step_called != nstack_in_step)
		mode_cap_dump();
}
