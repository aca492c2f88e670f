/* One run of a mode over chosen CPUs, as monitor and sample mode share it:
 * every chosen CPU but the coordinator gets a cross-CPU call that sets up,
 * waits for "go", measures and tears down; the coordinator does the same
 * for itself when it is chosen, checks every CPU's set-up, and in the end
 * joins the calls. Every wait is bounded: a CPU that does not answer is
 * named, never waited for forever. */
#ifndef MODES_RUN_H
#define MODES_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/cpulist.h"
#include "modes/modes.h"
#include "modes/workloads.h"
#include "pmu/pmu.h"

/* Between "go" and the start of the measurement, so every CPU has seen the
 * flag and all begin at the same TSC-derived moment. */
#define RUN_START_DELAY_US 20000
/* Setting up includes zeroing and shuffling up to 1 GiB per CPU for the
 * chase workload, which takes seconds (more under TCG); past this a CPU
 * counts as stalled. */
#define RUN_SETUP_TIMEOUT_US (120ull * 1000000)
/* How late a CPU may be with a snapshot or with stopping: a workload step
 * is well under a millisecond, so this is generous on silicon; run_late()
 * stretches it by the guest's slowdown. */
#define RUN_LATE_US (2ull * 1000000)
/* A CPU later than that is waited for this many times longer before it
 * counts as stalled: the slowdown is the coordinator's, and a host that
 * does not run one vCPU at all for tens of seconds (a loaded host, more
 * so with a nested hypervisor between) gives that vCPU a larger one. A
 * vCPU the host starved comes back within the wait; a stopped CPU does
 * not. */
#define RUN_STALL_FACTOR 10
/* Waiting for a CPU to take the cross-CPU call, and to leave it. */
#define RUN_CALL_TIMEOUT_US (1ull * 1000000)
/* "pmutest": the same chase permutation and branchy bits every run. */
#define RUN_SEED 0x706d7574657374ull
/* The longest line run_say() prints, NUL included: a sample mode record
 * line ("# sample: " and 2 x 304 hex digits) fits. */
#define RUN_LINE_LEN 640

enum run_state { RUN_SETUP, RUN_READY, RUN_NOPMU, RUN_FAILED, RUN_RAN };
enum run_go { RUN_WAIT, RUN_GO, RUN_ABORT };

struct run;

/* One chosen CPU: the first member of each mode's per-CPU struct. Written
 * by that CPU until `done`; the coordinator reads the state and why. */
struct run_cpu {
	unsigned cpu;
	struct run *run;
	int state;     /* enum run_state */
	bool done;     /* the CPU has left its work (or never began it) */
	bool launched; /* a cross-CPU call carries it */
	uint64_t ticket;
	char why[PMU_REASON_LEN]; /* RUN_NOPMU / RUN_FAILED: why */
};

/* What a mode does on each chosen CPU. */
struct run_ops {
	/* Leaves the state RUN_READY, or RUN_NOPMU / RUN_FAILED with why. */
	void (*setup)(struct run_cpu *rc);
	/* After "go": the measurement. */
	void (*measure)(struct run_cpu *rc);
	/* Always, after setup: give back what setup took. */
	void (*teardown)(struct run_cpu *rc);
};

struct run {
	const char *prefix; /* of every line: "# monitor: " */
	void (*line)(const char *);
	enum mode_kind kind;
	const struct run_ops *ops;
	struct mode_result *res;
	int go; /* enum run_go */
	unsigned ncpu;
	void *cpus; /* ncpu of the mode's per-CPU structs, stride bytes apart */
	size_t stride;
	struct run_cpu *self;  /* the coordinator's own entry, or NULL */
	unsigned late_stretch; /* RUN_LATE_US's multiplier (run_late), 0 = 1 */
	bool late_said;        /* run_late() said it waits for a late CPU */
};

/* Whether a CPU is now too late past deadline_us to be waited for. Under
 * TCG or on a busy host a vCPU may not run for seconds: when RUN_LATE_US
 * is over, the coordinator times the guest (timer_slowdown) and stretches
 * that budget by the slowdown, as the tests' budgets are
 * (docs/verdicts.md); past the stretched budget it says once that it
 * waits, and waits RUN_STALL_FACTOR times longer. A CPU that stopped is
 * still late after that. */
bool run_late(struct run *r, uint64_t deadline_us);
/* The budget run_late() last judged by, in ms (the stretched one times
 * RUN_STALL_FACTOR); its stretch is r->late_stretch. */
uint64_t run_late_ms(const struct run *r);

/* What the workloads get in the kernel: boot memory and the uptime clock. */
extern const struct pmu_wl_env run_wl_env;

/* For a mode's set-up, on the chosen CPU. Each of the first three says
 * whether the set-up goes on; when not, the state and why are set. */
/* The probe found counters that count here; else RUN_NOPMU, its reason. */
bool run_need_pmu(struct run_cpu *rc);
/* The events hold counters here, as one group; else RUN_FAILED. */
bool run_place_events(struct run_cpu *rc, struct pmu_event *const *evs, unsigned n);
/* RUN_FAILED, why formatted into rc->why. */
void run_setup_failed(struct run_cpu *rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The last step: the workload set up, RUN_READY; else RUN_FAILED. */
void run_setup_workload(struct run_cpu *rc, struct pmu_wl *wl, enum pmu_wl_kind kind, uint64_t size);
static inline void run_set_state(struct run_cpu *rc, enum run_state s)
{
	__atomic_store_n(&rc->state, (int)s, __ATOMIC_RELEASE);
}

/* A run printing through line (whole lines, without a newline) with
 * prefix, reporting into res (which may be NULL). */
void run_init(struct run *r, enum mode_kind kind, const char *prefix, void (*line)(const char *),
	      struct mode_result *res);
/* "<prefix><message>" through the run's line. */
void run_say(const struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Say it and end the run with status: the first such call's message is the
 * result's reason. Returns status. */
int run_fail(struct run *r, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The chosen CPUs' per-CPU structs, each `stride` bytes and starting with
 * struct run_cpu, zeroed in boot memory (a CPU that is late leaving its
 * call still writes into valid memory). */
void run_alloc_cpus(struct run *r, const struct cpulist *cpus, size_t stride);
struct run_cpu *run_cpu_at(const struct run *r, unsigned i);

/* Launch every chosen CPU but this one, set this one up, wait (bounded)
 * until all are set up and check them: MODE_OK, or the first problem,
 * printed (no PMU first: it explains every other failure), after which the
 * run is over (aborted, torn down, joined). */
int run_start(struct run *r, const struct run_ops *ops);
/* Start the measurement everywhere. */
void run_go(struct run *r);
/* The coordinator's own measurement and teardown (when it was chosen). */
void run_self(struct run *r);
/* Wait, bounded, for every launched CPU to leave its call. */
void run_join(struct run *r);
static inline int run_go_state(const struct run *r)
{
	return __atomic_load_n(&r->go, __ATOMIC_ACQUIRE);
}

#endif
