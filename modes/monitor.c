/* Monitor mode, kernel side: checks the options, starts the workload and
 * the counters on every chosen CPU (modes/run.c), and prints each CPU's
 * deltas every interval until the duration ends. Its pure parts are in
 * monitor_fmt.c, which the host tests cover. */
#include "modes/monitor.h"

#include "arch/x86/bootmem.h"
#include "arch/x86/cpu.h"
#include "arch/x86/pc/console.h"
#include "arch/x86/smp.h"
#include "arch/x86/timer.h"
#include "lib/cpulist.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "modes/run.h"
#include "modes/workloads.h"
#include "pmu/pmu.h"

/* Snapshots kept per CPU: the coordinator may fall this many intervals
 * behind (a slow UART, many CPUs) before a row is lost. */
#define MON_RING 16

struct mon_snap {
	uint64_t t_us, work;
	uint64_t count[MONITOR_MAX_EVENTS];
};

struct mon_run;

/* One chosen CPU. Written by that CPU; the coordinator reads the state,
 * the reason and the ring. */
struct mon_cpu {
	struct run_cpu rc; /* first: modes/run.c sees only this */
	struct mon_run *mon;
	bool added;
	uint64_t writing;   /* the interval whose slot is being (or was last) written */
	uint64_t published; /* the last interval whose snapshot is complete */
	struct pmu_event ev[MONITOR_MAX_EVENTS];
	struct pmu_wl wl;
	struct mon_snap ring[MON_RING];
} __attribute__((aligned(64)));

struct mon_run {
	struct run run;
	unsigned nev;
	char names[MONITOR_MAX_EVENTS][MONITOR_EVENT_LEN];
	struct pmu_event_attr attr[MONITOR_MAX_EVENTS];
	enum pmu_wl_kind kind;
	uint64_t size;
	uint64_t interval_us, duration_us, nint;
	uint64_t start_us;
	/* Coordinator only: */
	struct monitor_cols cols;
	uint64_t next; /* the next interval to print */
	int status;
};

static void mon_console_line(const char *s)
{
	console_printf("%s\n", s);
}

static struct mon_cpu *mon_cpu(struct run_cpu *rc)
{
	return (struct mon_cpu *)rc;
}

static struct mon_cpu *mon_cpu_at(const struct mon_run *m, unsigned i)
{
	return mon_cpu(run_cpu_at(&m->run, i));
}

/* The end of interval k (1..nint) since start; the last one ends with the
 * duration even when that is not a whole number of intervals. */
static uint64_t mon_boundary(const struct mon_run *m, uint64_t k)
{
	uint64_t t = k * m->interval_us;
	return m->start_us + (t < m->duration_us ? t : m->duration_us);
}

/* ---- On each chosen CPU ---- */

static void mon_setup(struct run_cpu *rc)
{
	struct mon_cpu *mc = mon_cpu(rc);
	struct mon_run *m = mc->mon;
	struct pmu_event *evp[MONITOR_MAX_EVENTS];

	/* events=none needs no PMU: the work column alone. */
	if (m->nev && !run_need_pmu(rc))
		return;
	for (unsigned i = 0; i < m->nev; i++) {
		pmu_event_init(&mc->ev[i], &m->attr[i], m->names[i]);
		evp[i] = &mc->ev[i];
	}
	/* All or nothing: a row with some columns missing would mislead. */
	if (m->nev) {
		if (!(mc->added = run_place_events(rc, evp, m->nev)))
			return;
		if (pmu_events_enable(evp, m->nev) != PMU_OK) {
			run_setup_failed(rc, "cannot start the events: %s", evp[0]->reason);
			return;
		}
	}
	run_setup_workload(rc, &mc->wl, m->kind, m->size);
}

static void mon_teardown(struct run_cpu *rc)
{
	struct mon_cpu *mc = mon_cpu(rc);
	struct pmu_event *evp[MONITOR_MAX_EVENTS];

	if (!mc->added)
		return;
	for (unsigned i = 0; i < mc->mon->nev; i++)
		evp[i] = &mc->ev[i];
	pmu_events_disable(evp, mc->mon->nev);
	pmu_events_del(evp, mc->mon->nev);
	mc->added = false;
}

/* Snapshot interval k into the ring. `writing` goes up before the slot is
 * touched, so a reader that finds it past the slots it copied knows the
 * copy may be torn (a seqlock with the interval number as sequence). */
static void mon_publish(struct mon_cpu *mc, uint64_t k)
{
	struct mon_snap *s = &mc->ring[k % MON_RING];

	__atomic_store_n(&mc->writing, k, __ATOMIC_SEQ_CST);
	for (unsigned i = 0; i < mc->mon->nev; i++)
		s->count[i] = pmu_event_update(&mc->ev[i]);
	s->work = mc->wl.work;
	s->t_us = uptime_us();
	__atomic_store_n(&mc->published, k, __ATOMIC_RELEASE);
}

static void mon_print_ready(struct mon_run *m);

/* The measurement: the baseline at start_us, then a snapshot at every
 * boundary, the workload running in steps in between. The coordinator,
 * when it is a chosen CPU too, prints between steps. */
static void mon_measure(struct run_cpu *rc)
{
	struct mon_cpu *mc = mon_cpu(rc);
	struct mon_run *m = mc->mon;
	bool coordinator = rc == m->run.self;

	while (uptime_us() < m->start_us)
		cpu_relax();
	mon_publish(mc, 0);
	for (uint64_t k = 1; k <= m->nint; k++) {
		uint64_t end = mon_boundary(m, k);
		while (uptime_us() < end) {
			if (run_go_state(&m->run) == RUN_ABORT)
				return;
			pmu_wl_step_timed(&mc->wl, &run_wl_env);
			if (coordinator)
				mon_print_ready(m);
		}
		mon_publish(mc, k);
	}
}

static const struct run_ops mon_ops = { mon_setup, mon_measure, mon_teardown };

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

static void mon_print_interval(struct mon_run *m, uint64_t k)
{
	char buf[MONITOR_LINE_LEN];

	for (unsigned c = 0; c < m->run.ncpu; c++) {
		struct mon_cpu *mc = mon_cpu_at(m, c);
		struct mon_snap now, prev;
		uint64_t delta[MONITOR_MAX_EVENTS];

		if (!mon_read(mc, k, &now, &prev)) {
			run_say(&m->run, "cpu %u: interval %llu lost (printing fell %u intervals behind)",
				mc->rc.cpu, (unsigned long long)k, MON_RING - 1);
			continue;
		}
		for (unsigned i = 0; i < m->nev; i++)
			delta[i] = now.count[i] - prev.count[i];
		monitor_format_row(&m->cols, now.t_us - m->start_us, mc->rc.cpu, delta, now.work - prev.work,
				   buf, sizeof(buf));
		m->run.line(buf);
	}
}

/* Print every interval all CPUs have published; a CPU that is too late
 * stops the run (MODE_E_STALLED) rather than hanging it. */
static void mon_print_ready(struct mon_run *m)
{
	while (m->next <= m->nint && m->status == MODE_OK) {
		for (unsigned c = 0; c < m->run.ncpu; c++) {
			struct mon_cpu *mc = mon_cpu_at(m, c);
			if (__atomic_load_n(&mc->published, __ATOMIC_ACQUIRE) >= m->next)
				continue;
			if (run_late(&m->run, mon_boundary(m, m->next))) {
				m->status = run_fail(
					&m->run, MODE_E_STALLED,
					"cpu %u did not report interval %llu within %llu ms of its end (the guest ran %u times slower than native); stopping",
					mc->rc.cpu, (unsigned long long)m->next,
					(unsigned long long)run_late_ms(&m->run), m->run.late_stretch);
				__atomic_store_n(&m->run.go, RUN_ABORT, __ATOMIC_RELEASE);
			}
			return;
		}
		mon_print_interval(m, m->next);
		m->next++;
	}
}

/* Check and decode the options into m; on error say why. */
static int mon_parse(struct mon_run *m, const struct mode_opts *o, struct cpulist *cpus)
{
	struct run *r = &m->run;
	const char *events = o->events && *o->events ? o->events : MONITOR_DEFAULT_EVENTS;
	const char *wl = o->workload && *o->workload ? o->workload : "loop";
	char err[PMU_REASON_LEN];
	int n;

	if (strcmp(events, "none") == 0)
		n = 0; /* the work column alone: needs no PMU */
	else if ((n = monitor_split_events(events, m->names, MONITOR_MAX_EVENTS, err, sizeof(err))) < 0)
		return run_fail(r, MODE_E_ARGS, "events=%s: %s", events, err);
	m->nev = (unsigned)n;
	for (unsigned i = 0; i < m->nev; i++) {
		if (pmu_event_parse(m->names[i], &m->attr[i], err, sizeof(err)) != PMU_OK)
			return run_fail(r, MODE_E_ARGS, "event '%s': %s", m->names[i], err);
		if (m->attr[i].period || m->attr[i].intr) {
			/* Counting only: an overflow interrupt would need the PMI
			 * path, and a period means sampling. */
			run_say(r, "event '%s': period/int ignored (monitor mode counts, it does not sample)",
				m->names[i]);
			m->attr[i].period = 0;
			m->attr[i].intr = false;
		}
	}
	int kind = pmu_wl_find(wl);
	if (kind < 0)
		return run_fail(r, MODE_E_ARGS, "unknown workload '%s' (known: loop chase branchy memcpy)",
				wl);
	const struct pmu_wl_desc *d = &pmu_wl_descs[kind];
	m->kind = (enum pmu_wl_kind)kind;
	m->size = o->size ? o->size : d->default_size;
	if (m->size < d->min_size || m->size > d->max_size)
		return run_fail(r, MODE_E_ARGS, "workload %s: size %llu %s is outside %llu..%llu", d->name,
				(unsigned long long)m->size, d->size_unit, (unsigned long long)d->min_size,
				(unsigned long long)d->max_size);
	uint64_t iv = o->interval_ms ? o->interval_ms : MONITOR_DEFAULT_INTERVAL_MS;
	uint64_t du = o->duration_ms ? o->duration_ms : MONITOR_DEFAULT_DURATION_MS;
	if (iv < MONITOR_MIN_INTERVAL_MS || iv > MONITOR_MAX_INTERVAL_MS)
		return run_fail(r, MODE_E_ARGS, "interval %llu ms is outside %u..%llu ms",
				(unsigned long long)iv, MONITOR_MIN_INTERVAL_MS, MONITOR_MAX_INTERVAL_MS);
	if (du > MONITOR_MAX_DURATION_MS)
		return run_fail(r, MODE_E_ARGS, "duration %llu ms is longer than %llu ms",
				(unsigned long long)du, MONITOR_MAX_DURATION_MS);
	m->interval_us = iv * 1000;
	m->duration_us = du * 1000;
	m->nint = (du + iv - 1) / iv;

	const char *list = o->cpus && *o->cpus ? o->cpus : "all";
	if (cpulist_parse(list, smp_num_cpus(), cpus, err, sizeof(err)))
		return run_fail(r, MODE_E_ARGS, "CPU list '%s' refused: %s", list, err);
	return MODE_OK;
}

static void mon_describe(struct mon_run *m, const struct cpulist *cpus)
{
	const struct pmu_wl_desc *d = &pmu_wl_descs[m->kind];
	char list[128], ev[256];
	int len = 0;

	cpulist_format(cpus, list, sizeof(list));
	ev[0] = '\0';
	for (unsigned i = 0; i < m->nev && (size_t)len < sizeof(ev); i++)
		len += ksnprintf(ev + len, sizeof(ev) - (size_t)len, "%s%s", i ? " " : "", m->names[i]);
	if (!m->nev)
		ksnprintf(ev, sizeof(ev), "none (work only)");
	run_say(&m->run, "workload %s, size %llu %s: %s", d->name, (unsigned long long)m->size, d->size_unit,
		d->what);
	run_say(&m->run, "cpus %s, events %s, every %llu ms for %llu ms%s", list, ev,
		(unsigned long long)(m->interval_us / 1000), (unsigned long long)(m->duration_us / 1000),
		m->run.self ? "; this CPU also prints, its rows include that work" : "");
}

int monitor_run(const struct mode_opts *o, void (*line)(const char *), struct mode_result *res)
{
	/* The run state lives in boot memory, not on this stack: a CPU that
	 * is late leaving its call still writes into valid memory. */
	struct mon_run *m = bootmem_alloc(sizeof(*m));
	static const struct mode_opts none;
	struct cpulist cpus;

	run_init(&m->run, MODE_MONITOR, "# monitor: ", line ? line : mon_console_line, res);
	if ((m->status = mon_parse(m, o ? o : &none, &cpus)) != MODE_OK)
		return m->status;
	run_alloc_cpus(&m->run, &cpus, sizeof(struct mon_cpu));
	for (unsigned c = 0; c < m->run.ncpu; c++)
		mon_cpu_at(m, c)->mon = m;
	mon_describe(m, &cpus);
	if ((m->status = run_start(&m->run, &mon_ops)) != MODE_OK)
		return m->status;

	const char *heads[MONITOR_MAX_EVENTS];
	char work[32];
	char buf[MONITOR_LINE_LEN];
	for (unsigned i = 0; i < m->nev; i++)
		heads[i] = m->names[i];
	ksnprintf(work, sizeof(work), "%s.%s", pmu_wl_descs[m->kind].name, pmu_wl_descs[m->kind].work_unit);
	monitor_cols_init(&m->cols, heads, m->nev, work);
	monitor_format_header(&m->cols, buf, sizeof(buf));
	m->run.line(buf);

	m->next = 1;
	m->start_us = uptime_us() + RUN_START_DELAY_US;
	run_go(&m->run);
	run_self(&m->run);
	while (m->next <= m->nint && m->status == MODE_OK) {
		mon_print_ready(m);
		cpu_relax();
	}
	run_join(&m->run);
	if (m->status == MODE_OK)
		run_say(&m->run, "done: %llu intervals on %u CPUs", (unsigned long long)m->nint, m->run.ncpu);
	return m->status;
}
