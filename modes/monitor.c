/* Monitor mode, kernel side: checks the options, starts the workload and
 * the counters on every chosen CPU, and prints each CPU's deltas every
 * interval until the duration ends. */
#include "modes/monitor.h"

/* This file needs the kernel (cross-CPU calls, the clock, the console), so
 * tests/host/pmu.mk leaves it out of the host build; its pure parts are in
 * monitor_fmt.c, which the host tests cover. */

#include "arch/x86/bootmem.h"
#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "arch/x86/smp.h"
#include "arch/x86/timer.h"
#include "arch/x86/pc/console.h"
#include "lib/cpulist.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/pmu.h"
#include "modes/workloads.h"

_Static_assert(CPULIST_MAX_CPUS == MAX_CPUS, "lib/cpulist.h must cover every CPU the kernel starts");

/* Snapshots kept per CPU: the coordinator may fall this many intervals
 * behind (a slow UART, many CPUs) before a row is lost. */
#define MON_RING 16
/* Between "go" and the first snapshot, so every CPU has seen the flag and
 * all take their baseline at the same TSC-derived moment. */
#define MON_START_DELAY_US 20000
/* Setting up includes zeroing and shuffling up to 1 GiB per CPU, which
 * takes seconds (more under TCG); past this a CPU counts as stalled. */
#define MON_SETUP_TIMEOUT_US (120ull * 1000000)
/* How late an interval's snapshot may be before its CPU counts as stalled:
 * a workload step is well under a millisecond, so this is generous. */
#define MON_LATE_US (2ull * 1000000)
/* Waiting for a CPU to take the cross-CPU call, and to leave it. */
#define MON_CALL_TIMEOUT_US (1ull * 1000000)
#define MON_SEED 0x706d7574657374ull /* "pmutest": the same chase and bits every run */

enum mon_state { MON_SETUP, MON_READY, MON_NOPMU, MON_FAILED };
enum mon_go { MON_WAIT, MON_GO, MON_ABORT };

struct mon_snap {
	uint64_t t_us, work;
	uint64_t count[MONITOR_MAX_EVENTS];
};

struct mon_run;

/* One chosen CPU. Written by that CPU; the coordinator reads the state,
 * the reason and the ring. */
struct mon_cpu {
	unsigned cpu;
	struct mon_run *run;
	int state;                 /* enum mon_state */
	bool done;                 /* the CPU has left mon_worker (or never entered) */
	bool added;
	char why[PMU_REASON_LEN];
	uint64_t ticket;
	bool launched;
	uint64_t writing;          /* the interval whose slot is being (or was last) written */
	uint64_t published;        /* the last interval whose snapshot is complete */
	struct pmu_event ev[MONITOR_MAX_EVENTS];
	struct pmu_wl wl;
	struct mon_snap ring[MON_RING];
} __attribute__((aligned(64)));

struct mon_run {
	unsigned nev;
	char names[MONITOR_MAX_EVENTS][MONITOR_EVENT_LEN];
	struct pmu_event_attr attr[MONITOR_MAX_EVENTS];
	enum pmu_wl_kind kind;
	uint64_t size;
	uint64_t interval_us, duration_us, nint;
	uint64_t start_us;
	int go;                    /* enum mon_go */
	unsigned ncpu;
	struct mon_cpu *cpus;
	struct mon_cpu *self;      /* the coordinator's own entry, or NULL */
	/* Coordinator only: */
	void (*line)(const char *);
	struct monitor_cols cols;
	uint64_t next;             /* the next interval to print */
	int status;
};

static const struct pmu_wl_env mon_env = { bootmem_alloc, uptime_us };
static const struct monitor_opts *mon_requested;

void monitor_request(const struct monitor_opts *o)
{
	mon_requested = o;
}

const struct monitor_opts *monitor_requested(void)
{
	return mon_requested;
}

const char *monitor_status_name(int status)
{
	switch (status) {
	case MONITOR_OK: return "ok";
	case MONITOR_E_ARGS: return "bad options";
	case MONITOR_E_NOPMU: return "no PMU";
	case MONITOR_E_EVENTS: return "events could not be counted";
	case MONITOR_E_STALLED: return "a CPU stalled";
	}
	return "unknown status";
}

static void mon_console_line(const char *s)
{
	console_printf("%s\n", s);
}

static void say(struct mon_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct mon_run *r, const char *fmt, ...)
{
	char buf[MONITOR_LINE_LEN];
	va_list ap;

	va_start(ap, fmt);
	kvsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	r->line(buf);
}

/* The end of interval k (1..nint) since start; the last one ends with the
 * duration even when that is not a whole number of intervals. */
static uint64_t mon_boundary(const struct mon_run *r, uint64_t k)
{
	uint64_t t = k * r->interval_us;
	return r->start_us + (t < r->duration_us ? t : r->duration_us);
}

static int mon_go(const struct mon_run *r)
{
	return __atomic_load_n(&r->go, __ATOMIC_ACQUIRE);
}

/* ---- On each chosen CPU ---- */

static void mon_setup(struct mon_cpu *mc)
{
	struct mon_run *r = mc->run;
	struct pmu_event *evp[MONITOR_MAX_EVENTS];
	const char *why = r->nev ? pmu_skip_reason() : NULL;
	int rc;

	if (why) {
		ksnprintf(mc->why, sizeof(mc->why), "%s", why);
		__atomic_store_n(&mc->state, MON_NOPMU, __ATOMIC_RELEASE);
		return;
	}
	for (unsigned i = 0; i < r->nev; i++) {
		pmu_event_init(&mc->ev[i], &r->attr[i], r->names[i]);
		evp[i] = &mc->ev[i];
	}
	/* All or nothing: a row with some columns missing would mislead. */
	if (!r->nev)
		goto workload;
	if ((rc = pmu_events_add(evp, r->nev)) != PMU_OK) {
		ksnprintf(mc->why, sizeof(mc->why), "cannot place the %u events: %s", r->nev, evp[0]->reason);
		goto fail;
	}
	mc->added = true;
	if ((rc = pmu_events_enable(evp, r->nev)) != PMU_OK) {
		ksnprintf(mc->why, sizeof(mc->why), "cannot start the events: %s", evp[0]->reason);
		goto fail;
	}
workload:
	if (pmu_wl_setup(&mc->wl, &mon_env, r->kind, r->size, mc->cpu, MON_SEED, mc->why, sizeof(mc->why)))
		goto fail;
	__atomic_store_n(&mc->state, MON_READY, __ATOMIC_RELEASE);
	return;
fail:
	__atomic_store_n(&mc->state, MON_FAILED, __ATOMIC_RELEASE);
}

static void mon_teardown(struct mon_cpu *mc)
{
	struct pmu_event *evp[MONITOR_MAX_EVENTS];

	if (!mc->added)
		return;
	for (unsigned i = 0; i < mc->run->nev; i++)
		evp[i] = &mc->ev[i];
	pmu_events_disable(evp, mc->run->nev);
	pmu_events_del(evp, mc->run->nev);
	mc->added = false;
}

/* Snapshot interval k into the ring. `writing` goes up before the slot is
 * touched, so a reader that finds it past the slots it copied knows the
 * copy may be torn (a seqlock with the interval number as sequence). */
static void mon_publish(struct mon_cpu *mc, uint64_t k)
{
	struct mon_snap *s = &mc->ring[k % MON_RING];

	__atomic_store_n(&mc->writing, k, __ATOMIC_SEQ_CST);
	for (unsigned i = 0; i < mc->run->nev; i++)
		s->count[i] = pmu_event_update(&mc->ev[i]);
	s->work = mc->wl.work;
	s->t_us = uptime_us();
	__atomic_store_n(&mc->published, k, __ATOMIC_RELEASE);
}

static void mon_print_ready(struct mon_run *r);

/* The measurement: the baseline at start_us, then a snapshot at every
 * boundary, the workload running in steps in between. The coordinator,
 * when it is a chosen CPU too, prints between steps. */
static void mon_measure(struct mon_cpu *mc, bool coordinator)
{
	struct mon_run *r = mc->run;

	while (uptime_us() < r->start_us)
		cpu_relax();
	mon_publish(mc, 0);
	for (uint64_t k = 1; k <= r->nint; k++) {
		uint64_t end = mon_boundary(r, k);
		while (uptime_us() < end) {
			if (mon_go(r) == MON_ABORT)
				return;
			pmu_wl_step_timed(&mc->wl, &mon_env);
			if (coordinator)
				mon_print_ready(r);
		}
		mon_publish(mc, k);
	}
}

/* Runs on every chosen CPU but the coordinator, as a cross-CPU call: it
 * owns the CPU for the whole run, so nothing else needs to interrupt it. */
static void mon_worker(void *arg)
{
	struct mon_cpu *mc = arg;
	struct mon_run *r = mc->run;

	mon_setup(mc);
	if (__atomic_load_n(&mc->state, __ATOMIC_ACQUIRE) == MON_READY) {
		/* Bounded: a coordinator that gave up must not strand us. */
		uint64_t limit = uptime_us() + MON_SETUP_TIMEOUT_US;
		while (mon_go(r) == MON_WAIT && uptime_us() < limit)
			cpu_relax();
		if (mon_go(r) == MON_GO)
			mon_measure(mc, false);
	}
	mon_teardown(mc);
	__atomic_store_n(&mc->done, true, __ATOMIC_RELEASE);
}

/* ---- The coordinator ---- */

/* Copy interval k and k-1 of one CPU; false when the writer may have
 * overwritten them meanwhile (the coordinator fell MON_RING behind). */
static bool mon_read(const struct mon_cpu *mc, uint64_t k, struct mon_snap *now, struct mon_snap *prev)
{
	*now = mc->ring[k % MON_RING];
	*prev = mc->ring[(k - 1) % MON_RING];
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&mc->writing, __ATOMIC_RELAXED) < k - 1 + MON_RING;
}

static void mon_print_interval(struct mon_run *r, uint64_t k)
{
	char buf[MONITOR_LINE_LEN];

	for (unsigned c = 0; c < r->ncpu; c++) {
		struct mon_cpu *mc = &r->cpus[c];
		struct mon_snap now, prev;
		uint64_t delta[MONITOR_MAX_EVENTS];

		if (!mon_read(mc, k, &now, &prev)) {
			say(r, "# monitor: cpu %u: interval %llu lost (printing fell %u intervals behind)", mc->cpu,
			    (unsigned long long)k, MON_RING - 1);
			continue;
		}
		for (unsigned i = 0; i < r->nev; i++)
			delta[i] = now.count[i] - prev.count[i];
		monitor_format_row(&r->cols, now.t_us - r->start_us, mc->cpu, delta, now.work - prev.work, buf,
				   sizeof(buf));
		r->line(buf);
	}
}

/* Print every interval all CPUs have published; a CPU that is too late
 * stops the run (MONITOR_E_STALLED) rather than hanging it. */
static void mon_print_ready(struct mon_run *r)
{
	while (r->next <= r->nint && r->status == MONITOR_OK) {
		for (unsigned c = 0; c < r->ncpu; c++) {
			struct mon_cpu *mc = &r->cpus[c];
			if (__atomic_load_n(&mc->published, __ATOMIC_ACQUIRE) >= r->next)
				continue;
			if (uptime_us() > mon_boundary(r, r->next) + MON_LATE_US) {
				say(r, "# monitor: cpu %u did not report interval %llu within %llu ms of its end; stopping",
				    mc->cpu, (unsigned long long)r->next, MON_LATE_US / 1000);
				r->status = MONITOR_E_STALLED;
				__atomic_store_n(&r->go, MON_ABORT, __ATOMIC_RELEASE);
			}
			return;
		}
		mon_print_interval(r, r->next);
		r->next++;
	}
}

/* Wait for every launched CPU to leave its call; bounded. */
static void mon_join(struct mon_run *r)
{
	for (unsigned c = 0; c < r->ncpu; c++) {
		struct mon_cpu *mc = &r->cpus[c];
		if (mc->launched && !on_cpu_wait(mc->cpu, mc->ticket, MON_CALL_TIMEOUT_US + MON_LATE_US))
			say(r, "# monitor: cpu %u did not finish its run in time; its counters may still be programmed",
			    mc->cpu);
	}
}

/* Check and decode the options into r; on error print why. */
static int mon_parse(struct mon_run *r, const struct monitor_opts *o, struct cpulist *cpus)
{
	const char *events = o->events && *o->events ? o->events : MONITOR_DEFAULT_EVENTS;
	const char *wl = o->workload && *o->workload ? o->workload : "loop";
	char err[PMU_REASON_LEN];
	int n;

	if (strcmp(events, "none") == 0)
		n = 0; /* the work column alone: needs no PMU */
	else if ((n = monitor_split_events(events, r->names, MONITOR_MAX_EVENTS, err, sizeof(err))) < 0) {
		say(r, "# monitor: events=%s: %s", events, err);
		return MONITOR_E_ARGS;
	}
	r->nev = (unsigned)n;
	for (unsigned i = 0; i < r->nev; i++) {
		if (pmu_event_parse(r->names[i], &r->attr[i], err, sizeof(err)) != PMU_OK) {
			say(r, "# monitor: event '%s': %s", r->names[i], err);
			return MONITOR_E_ARGS;
		}
		if (r->attr[i].period || r->attr[i].intr) {
			/* Counting only: an overflow interrupt would need the PMI
			 * path, and a period means sampling. */
			say(r, "# monitor: event '%s': period/int ignored (monitor mode counts, it does not sample)",
			    r->names[i]);
			r->attr[i].period = 0;
			r->attr[i].intr = false;
		}
	}
	int kind = pmu_wl_find(wl);
	if (kind < 0) {
		say(r, "# monitor: unknown workload '%s' (known: loop chase branchy memcpy)", wl);
		return MONITOR_E_ARGS;
	}
	const struct pmu_wl_desc *d = &pmu_wl_descs[kind];
	r->kind = (enum pmu_wl_kind)kind;
	r->size = o->size ? o->size : d->default_size;
	if (r->size < d->min_size || r->size > d->max_size) {
		say(r, "# monitor: workload %s: size %llu %s is outside %llu..%llu", d->name,
		    (unsigned long long)r->size, d->size_unit, (unsigned long long)d->min_size,
		    (unsigned long long)d->max_size);
		return MONITOR_E_ARGS;
	}
	uint64_t iv = o->interval_ms ? o->interval_ms : MONITOR_DEFAULT_INTERVAL_MS;
	uint64_t du = o->duration_ms ? o->duration_ms : MONITOR_DEFAULT_DURATION_MS;
	if (iv < MONITOR_MIN_INTERVAL_MS || iv > MONITOR_MAX_INTERVAL_MS) {
		say(r, "# monitor: interval %llu ms is outside %u..%llu ms", (unsigned long long)iv,
		    MONITOR_MIN_INTERVAL_MS, MONITOR_MAX_INTERVAL_MS);
		return MONITOR_E_ARGS;
	}
	if (du > MONITOR_MAX_DURATION_MS) {
		say(r, "# monitor: duration %llu ms is longer than %llu ms", (unsigned long long)du,
		    MONITOR_MAX_DURATION_MS);
		return MONITOR_E_ARGS;
	}
	r->interval_us = iv * 1000;
	r->duration_us = du * 1000;
	r->nint = (du + iv - 1) / iv;

	const char *list = o->cpus && *o->cpus ? o->cpus : "all";
	if (cpulist_parse(list, smp_num_cpus(), cpus, err, sizeof(err))) {
		say(r, "# monitor: CPU list '%s' refused: %s", list, err);
		return MONITOR_E_ARGS;
	}
	return MONITOR_OK;
}

/* After every CPU set up (or failed to): the first problem found, printed.
 * No PMU comes first: it explains every other failure. */
static int mon_check_setup(struct mon_run *r)
{
	unsigned nopmu = 0, failed = 0;
	struct mon_cpu *first_nopmu = NULL;

	for (unsigned c = 0; c < r->ncpu; c++) {
		struct mon_cpu *mc = &r->cpus[c];
		int st = __atomic_load_n(&mc->state, __ATOMIC_ACQUIRE);
		if (st == MON_NOPMU && !nopmu++)
			first_nopmu = mc;
	}
	if (first_nopmu) {
		char more[64] = "";
		if (nopmu > 1)
			ksnprintf(more, sizeof(more), " (and %u more of the %u chosen CPUs)", nopmu - 1, r->ncpu);
		say(r, "# monitor: no PMU on cpu %u: %s%s", first_nopmu->cpu, first_nopmu->why, more);
		return MONITOR_E_NOPMU;
	}
	for (unsigned c = 0; c < r->ncpu; c++) {
		struct mon_cpu *mc = &r->cpus[c];
		int st = __atomic_load_n(&mc->state, __ATOMIC_ACQUIRE);
		if (st == MON_FAILED) {
			say(r, "# monitor: cpu %u: %s", mc->cpu, mc->why);
			failed++;
		} else if (st == MON_SETUP) {
			say(r, "# monitor: cpu %u did not finish setting up within %llu s", mc->cpu,
			    MON_SETUP_TIMEOUT_US / 1000000);
			return MONITOR_E_STALLED;
		}
	}
	return failed ? MONITOR_E_EVENTS : MONITOR_OK;
}

static bool mon_all_set_up(const struct mon_run *r)
{
	for (unsigned c = 0; c < r->ncpu; c++)
		if (__atomic_load_n(&r->cpus[c].state, __ATOMIC_ACQUIRE) == MON_SETUP)
			return false;
	return true;
}

static void mon_describe(struct mon_run *r, const struct cpulist *cpus)
{
	const struct pmu_wl_desc *d = &pmu_wl_descs[r->kind];
	char list[128], ev[256];
	int len = 0;

	cpulist_format(cpus, list, sizeof(list));
	ev[0] = '\0';
	for (unsigned i = 0; i < r->nev && (size_t)len < sizeof(ev); i++)
		len += ksnprintf(ev + len, sizeof(ev) - (size_t)len, "%s%s", i ? " " : "", r->names[i]);
	if (!r->nev)
		ksnprintf(ev, sizeof(ev), "none (work only)");
	say(r, "# monitor: workload %s, size %llu %s: %s", d->name, (unsigned long long)r->size, d->size_unit,
	    d->what);
	say(r, "# monitor: cpus %s, events %s, every %llu ms for %llu ms%s", list, ev,
	    (unsigned long long)(r->interval_us / 1000), (unsigned long long)(r->duration_us / 1000),
	    r->self ? "; this CPU also prints, its rows include that work" : "");
}

int monitor_run(const struct monitor_opts *o, void (*line)(const char *))
{
	struct mon_run *r = bootmem_alloc(sizeof(*r));
	struct cpulist cpus;
	unsigned self = smp_this_cpu(), cpu;
	static const struct monitor_opts none;

	/* The run state lives in boot memory, not on this stack: a CPU that
	 * is late leaving its call still writes into valid memory. */
	r->line = line ? line : mon_console_line;
	if ((r->status = mon_parse(r, o ? o : &none, &cpus)) != MONITOR_OK)
		return r->status;
	r->ncpu = cpulist_count(&cpus);
	r->cpus = bootmem_alloc(sizeof(*r->cpus) * r->ncpu);
	unsigned c = 0;
	cpulist_for_each(cpu, &cpus) {
		struct mon_cpu *mc = &r->cpus[c++];
		mc->cpu = cpu;
		mc->run = r;
		if (cpu == self)
			r->self = mc;
	}
	mon_describe(r, &cpus);

	/* Others first, so their setup overlaps ours. */
	for (c = 0; c < r->ncpu; c++) {
		struct mon_cpu *mc = &r->cpus[c];
		if (mc == r->self)
			continue;
		if (!on_cpu_try_async(mc->cpu, mon_worker, mc, MON_CALL_TIMEOUT_US, &mc->ticket)) {
			say(r, "# monitor: cpu %u is still busy with an earlier cross-CPU call", mc->cpu);
			r->status = MONITOR_E_STALLED;
			break;
		}
		mc->launched = true;
	}
	if (r->status == MONITOR_OK) {
		if (r->self)
			mon_setup(r->self);
		uint64_t limit = uptime_us() + MON_SETUP_TIMEOUT_US;
		while (!mon_all_set_up(r) && uptime_us() < limit)
			cpu_relax();
		r->status = mon_check_setup(r);
	}
	if (r->status != MONITOR_OK) {
		__atomic_store_n(&r->go, MON_ABORT, __ATOMIC_RELEASE);
		if (r->self)
			mon_teardown(r->self);
		mon_join(r);
		return r->status;
	}

	const char *heads[MONITOR_MAX_EVENTS];
	char work[32];
	char buf[MONITOR_LINE_LEN];
	for (unsigned i = 0; i < r->nev; i++)
		heads[i] = r->names[i];
	ksnprintf(work, sizeof(work), "%s.%s", pmu_wl_descs[r->kind].name, pmu_wl_descs[r->kind].work_unit);
	monitor_cols_init(&r->cols, heads, r->nev, work);
	monitor_format_header(&r->cols, buf, sizeof(buf));
	r->line(buf);

	r->next = 1;
	r->start_us = uptime_us() + MON_START_DELAY_US;
	__atomic_store_n(&r->go, MON_GO, __ATOMIC_RELEASE);
	if (r->self) {
		mon_measure(r->self, true);
		mon_teardown(r->self);
	}
	while (r->next <= r->nint && r->status == MONITOR_OK) {
		mon_print_ready(r);
		cpu_relax();
	}
	mon_join(r);
	if (r->status == MONITOR_OK)
		say(r, "# monitor: done: %llu intervals on %u CPUs", (unsigned long long)r->nint, r->ncpu);
	return r->status;
}

