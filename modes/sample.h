/* Sample mode (mode=sample): sample chosen events on chosen CPUs while a
 * named workload runs, then drain every CPU's ring as "# sample:" lines
 * (pmu/sample_record.h) with a per-CPU summary that tools/pmutest-samples
 * and a reader can check. sample.c is the kernel side (on modes/run.c's
 * coordinator); sample_opts.c (options) and sample_drain.c (drain,
 * summary, verdict) are pure and host-tested. */
#ifndef MODES_SAMPLE_H
#define MODES_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/cpulist.h"
#include "modes/modes.h"
#include "modes/monitor.h"
#include "modes/workloads.h"
#include "pmu/pmu.h"
#include "pmu/sample_record.h"
#include "pmu/sampling_hw.h"

/* A sampling session takes at most this many events (pmu/pmu.h). */
#define SAMPLE_MODE_MAX_EVENTS PMU_SAMPLING_MAX_EVENTS
/* A "# sample:" line of the largest record, "# " and NUL included. */
#define SAMPLE_MODE_LINE_LEN (sizeof(PMU_SAMPLE_LINE_PREFIX) + PMU_SAMPLE_HEX_MAX)

/* About 300 samples per second per CPU at 3 GHz: one second of them
 * (64-byte records) fits the default ring with room to spare. */
#define SAMPLE_MODE_DEFAULT_EVENTS "cycles/period=10000000/"
#define SAMPLE_MODE_DEFAULT_DURATION_MS 1000
#define SAMPLE_MODE_MAX_DURATION_MS 3600000ull
/* Ring data bytes per CPU (ring=): 2^n pages like perf's mmap ring; at
 * least one page so a LOST record and the largest sample always fit. */
#define SAMPLE_MODE_DEFAULT_RING (64u * 1024)
#define SAMPLE_MODE_MIN_RING 4096u
#define SAMPLE_MODE_MAX_RING (16u * 1024 * 1024)
/* The smallest period accepted. Each overflow costs a PMI (a few thousand
 * cycles of handler and MSR writes; far more under a hypervisor, where
 * every MSR access exits): near that cost the CPU would do little but take
 * PMIs, so such a run would measure the handler, not the workload. */
#define SAMPLE_MODE_MIN_PERIOD 10000ull
/* The RIP verdict: at least this share of a CPU's samples must lie in the
 * workload's code, once it has SAMPLE_MODE_RIP_MIN_SAMPLES of them. The
 * rest is the timed-step clock reads between workload steps and skid. */
#define SAMPLE_MODE_RIP_MIN_PERCENT 90u
#define SAMPLE_MODE_RIP_MIN_SAMPLES 10u
#define SAMPLE_MODE_MAX_RANGES 2u

/*
 * Run sample mode from one CPU (the coordinator, normally the BSP) with the
 * options of struct mode_opts it has: events (comma-separated, see
 * sample_mode_parse_event(); default SAMPLE_MODE_DEFAULT_EVENTS),
 * duration_ms, cpus, workload, size, ring_bytes (a power of two, default
 * SAMPLE_MODE_DEFAULT_RING) and overwrite (keep the newest records instead
 * of dropping new ones). Every
 * chosen CPU places the events, starts sampling, runs the workload for the
 * duration and stops; then the coordinator drains each CPU's ring, in CPU
 * order, printing
 *     # sample: <hex>                                          (per record)
 *     # sample-mode: cpu N: S samples, L lost, P PMIs, period X[, ...]
 * and once, before the samples,
 *     # sample-mode: workload rip range 0xLO-0xHI (what)       (HI exclusive)
 * Every line goes through line(), whole, without a newline, starting with
 * "# " (NULL: console_printf). With no PMU it prints one line
 *     # sample-mode: no PMU on cpu N: <reason>
 * and returns MODE_E_NOPMU. Returns the enum mode_status, also in *res
 * with the reason (res may be NULL). Never hangs: every wait is bounded.
 */
int sample_mode_run(const struct mode_opts *o, void (*line)(const char *), struct mode_result *res);

/* A test budget that covers a run of o on the chosen CPUs (all ncpus if
 * the list is bad): set-up, the duration, and printing every chosen CPU's
 * full ring at 115200 baud. */
uint64_t sample_mode_budget_ms(const struct mode_opts *o, unsigned ncpus);

/* --- Options (sample_opts.c, pure) --- */

/*
 * One event of the list. Accepted forms:
 *   cpu/event=0x3c,umask=0,period=100000/[:u|:k]   any pmu_event_parse() term
 *   cycles/period=100000/[:u|:k]                   a named event + period
 *   r003c/period=100000/[:u|:k]                    a raw event + period
 *   cycles, r003c, cpu/event=0x3c/                 no period: counted only,
 *                                                  carried in each sample
 * After a named or raw event, period=N (decimal or 0x hex) is the only term
 * (perf's other terms go in the cpu/.../ form). Returns PMU_OK or
 * PMU_E_INVAL with err naming the bad token.
 */
int sample_mode_parse_event(const char *s, struct pmu_event_attr *attr, char *err, size_t errlen);

/*
 * The same, with what sample mode takes from the hardware (LBRs, PEBS):
 *   cycles/period=100000/:p              perf's precise modifier (p, pp or
 *                                        ppp, among the others): sampled
 *                                        through PEBS, each sample's RIP the
 *                                        eventing IP of a PEBS record
 *   cycles/period=100000,branches/       each sample carries the LBRs' newest
 *                                        entries, frozen at the overflow
 *   cycles/period=100000,callstack/      each sample carries the LBR call
 *                                        stack; the workload runs at CPL 3
 * precise and branches may be NULL: those options are then refused.
 */
int sample_mode_parse_event_hw(const char *s, struct pmu_event_attr *attr, bool *precise,
			       enum pmu_sampling_branches *branches, char *err, size_t errlen);

/* The options, checked and decoded. */
struct sample_mode_plan {
	unsigned nev, nsampling;             /* events; those with a period (>= 1) */
	int precise;                         /* the event sampled through PEBS, or -1 */
	enum pmu_sampling_branches branches; /* what branch stack samples carry */
	char names[SAMPLE_MODE_MAX_EVENTS][MONITOR_EVENT_LEN];
	struct pmu_event_attr attr[SAMPLE_MODE_MAX_EVENTS]; /* sampling ones have intr set */
	enum pmu_wl_kind wl_kind;
	uint64_t wl_size;
	uint64_t duration_ms;
	uint64_t ring_bytes;
	bool overwrite;
	struct cpulist cpus; /* filled by the kernel side (sample_mode_run) */
};

/* Check o and fill p, all but the CPU list (which needs the CPUs online).
 * Returns MODE_OK, or MODE_E_ARGS with err saying which
 * option is wrong and why. */
int sample_mode_plan(struct sample_mode_plan *p, const struct mode_opts *o, char *err, size_t errlen);

/* --- Drain, summary, verdict (sample_drain.c, pure) --- */

/* Code the workload runs in: [lo, hi). */
struct sample_mode_range {
	uint64_t lo, hi;
	const char *what;
};

/* One CPU's run as the coordinator sees it. The first group comes from the
 * PMI handler's statistics (deltas over the run), the rest from the drain. */
struct sample_mode_cpu {
	unsigned cpu;
	uint64_t pmis, spurious;
	uint64_t overflows;    /* of the sampling counters */
	uint64_t written;      /* samples the handler put in the ring */
	uint64_t handler_lost; /* samples the handler could not put there */
	uint64_t ring_lost;    /* the ring's own count of dropped records */
	struct pmu_sampling_tally tally;
	uint64_t in_range;      /* samples whose RIP lies in a workload range */
	uint64_t first_out_rip; /* the first sample RIP outside them */
	uint64_t precise;       /* samples whose RIP came from a PEBS record */
	uint64_t stacks;        /* samples carrying a branch stack */
	uint64_t bad_fields;    /* samples with the wrong CPU or period */
	char bad_what[96];      /* the first of those */
};

/* Drain s (the ring of res->cpu) through line() as "# sample: <hex>" lines
 * and fill res's drain fields, checking every sample's CPU and period
 * against p and its RIP against the ranges. Returns the records taken. */
uint64_t sample_mode_drain(struct pmu_sampling *s, const struct sample_mode_plan *p,
			   const struct sample_mode_range *ranges, unsigned nranges,
			   void (*line)(const char *), struct sample_mode_cpu *res);

/* "# sample-mode: workload rip range 0x...-0x... (what)". */
int sample_mode_format_range(const struct sample_mode_range *r, char *buf, size_t len);
/* "# sample-mode: cpu N: S samples, L lost, P PMIs, period X", then
 * ", K in workload range" when ranges are known, ", N spurious PMIs" when
 * there were any. L is what the ring dropped (overwrite=0) or what the
 * producer overwrote before the drain (overwrite=1). */
int sample_mode_format_summary(const struct sample_mode_cpu *res, const struct sample_mode_plan *p,
			       bool ranges_known, char *buf, size_t len);

/*
 * The verdict on one CPU: MODE_OK, or MODE_E_RECORDS /
 * MODE_E_RIP with why. Losses are fine when accounted for:
 *   overwrite=0: drained = written, written + handler_lost = overflows,
 *                ring_lost = handler_lost, LOST records <= ring_lost
 *                (drops after the ring filled have no later record to
 *                carry them; the ring's count still has them);
 *   overwrite=1: drained + overwritten = written = overflows, nothing
 *                dropped.
 * RIPs: with ranges known and at least SAMPLE_MODE_RIP_MIN_SAMPLES samples,
 * SAMPLE_MODE_RIP_MIN_PERCENT of them in range.
 */
int sample_mode_judge(const struct sample_mode_cpu *res, bool overwrite, bool ranges_known, char *why,
		      size_t len);

#endif
