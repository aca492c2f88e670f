/* Sample mode, kernel side: on every chosen CPU place the events, sample
 * while the workload runs for the duration, stop; then drain each CPU's
 * ring from the coordinator and judge the records (sample_mode_drain.c). */
#include "modes/sample.h"

/* This file needs the kernel (cross-CPU calls, the clock, boot memory, the
 * PMI glue), so tests/host/pmu.mk leaves it out of the host build; its pure
 * parts are sample_mode_opts.c and sample_mode_drain.c. */

#include "arch/x86/bootmem.h"
#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "pmu/kernel/pmi_lvt.h"
#include "arch/x86/smp.h"
#include "arch/x86/timer.h"
#include "arch/x86/pc/console.h"
#include "lib/cpulist.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/pmu.h"
#include "modes/workloads.h"

_Static_assert(CPULIST_MAX_CPUS == MAX_CPUS, "lib/cpulist.h must cover every CPU the kernel starts");

/* Between "go" and the start, so every CPU has seen the flag and all
 * start sampling at the same TSC-derived moment. */
#define SM_START_DELAY_US 20000
/* Setting up includes zeroing and shuffling up to 1 GiB per CPU for the
 * chase workload, which takes seconds (more under TCG). */
#define SM_SETUP_TIMEOUT_US (120ull * 1000000)
/* How long after the end a CPU may still be finishing its last workload
 * step (well under a millisecond) and stopping: generous. */
#define SM_LATE_US (2ull * 1000000)
#define SM_CALL_TIMEOUT_US (1ull * 1000000)
#define SM_SEED 0x706d7574657374ull /* "pmutest": the same chase and bits as monitor mode */
/* A workload function's code is far smaller than this; a larger "range"
 * means the neighbour used as its end is not its neighbour. */
#define SM_MAX_FN_BYTES 16384u

enum sm_state { SM_SETUP, SM_READY, SM_NOPMU, SM_FAILED, SM_RAN };
enum sm_go { SM_WAIT, SM_GO, SM_ABORT };

struct sm_run;

/* One chosen CPU. Written by that CPU until `done`; read by the
 * coordinator afterwards. */
struct sm_cpu {
	unsigned cpu;
	struct sm_run *run;
	int state;                  /* enum sm_state */
	bool done;                  /* the CPU has left sm_worker (or never entered) */
	bool launched, placed;
	uint64_t ticket;
	char why[PMU_REASON_LEN];
	void *mem;                  /* PMU_SAMPLING_CTL_SIZE + ring bytes */
	struct pmu_event ev[SAMPLE_MODE_MAX_EVENTS];
	struct pmu_sampling s;
	struct pmu_wl wl;
	uint64_t t0_us, t1_us;      /* sampling started / stopped */
	struct sample_mode_cpu res;
} __attribute__((aligned(64)));

struct sm_run {
	struct sample_mode_plan plan;
	uint64_t start_us, end_us;
	int go;                     /* enum sm_go */
	unsigned ncpu;
	struct sm_cpu *cpus;
	struct sm_cpu *self;        /* the coordinator's own entry, or NULL */
	void (*line)(const char *);
	struct sample_mode_range ranges[SAMPLE_MODE_MAX_RANGES];
	unsigned nranges;
	const char *no_ranges_why;
};

static const struct pmu_wl_env sm_env = { bootmem_alloc, uptime_us };
static const struct sample_mode_opts *sm_requested;

/* Ring memory per CPU, kept for later runs: boot memory is never freed. */
static struct {
	void *p;
	size_t size;
} sm_mem[MAX_CPUS];

void sample_mode_request(const struct sample_mode_opts *o)
{
	sm_requested = o;
}

const struct sample_mode_opts *sample_mode_requested(void)
{
	return sm_requested;
}

/* One console_write per line: console_printf cuts lines at 511
 * characters, and a sample carrying 15 other counters prints 586. */
static void sm_console_line(const char *s)
{
	char buf[SAMPLE_MODE_LINE_LEN + 1];
	int n = ksnprintf(buf, sizeof(buf), "%s\n", s);

	console_write(buf, n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static void say(struct sm_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct sm_run *r, const char *fmt, ...)
{
	char buf[SAMPLE_MODE_LINE_LEN];
	va_list ap;

	va_start(ap, fmt);
	kvsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	r->line(buf);
}

static int sm_go_state(const struct sm_run *r)
{
	return __atomic_load_n(&r->go, __ATOMIC_ACQUIRE);
}

/* ---- The workload's code ---- */

/* Where the workload runs: pmu_wl_step() with the loops it inlines, and for
 * memcpy the kernel's memcpy(). C gives a function's start but not its
 * end, so the end is the next function of the same file: GCC and clang
 * emit a file's functions in source order at -O2 (checked with nm on both
 * builds), and modes/workloads.c defines pmu_wl_step_timed right after
 * pmu_wl_step, lib/string.c memmove right after memcpy. A compiler that
 * orders them otherwise gives an inverted or oversized range: the RIP
 * verdict is then skipped and a line says why. */
static bool sm_add_range(struct sm_run *r, uintptr_t lo, uintptr_t hi, const char *what)
{
	if (hi <= lo || hi - lo > SM_MAX_FN_BYTES) {
		r->no_ranges_why = what;
		r->nranges = 0;
		return false;
	}
	r->ranges[r->nranges++] = (struct sample_mode_range){ lo, hi, what };
	return true;
}

static void sm_find_ranges(struct sm_run *r)
{
	r->nranges = 0;
	if (!sm_add_range(r, (uintptr_t)&pmu_wl_step, (uintptr_t)&pmu_wl_step_timed, "pmu_wl_step"))
		return;
	if (r->plan.wl_kind == PMU_WL_MEMCPY)
		sm_add_range(r, (uintptr_t)&memcpy, (uintptr_t)&memmove, "memcpy");
}

/* ---- On each chosen CPU ---- */

static void sm_events(struct sm_cpu *mc, struct pmu_event **evp)
{
	for (unsigned i = 0; i < mc->run->plan.nev; i++)
		evp[i] = &mc->ev[i];
}

static void sm_setup(struct sm_cpu *mc)
{
	struct sm_run *r = mc->run;
	struct pmu_event *evp[SAMPLE_MODE_MAX_EVENTS];
	const char *why = pmu_skip_reason();

	if (why) {
		ksnprintf(mc->why, sizeof(mc->why), "%s", why);
		__atomic_store_n(&mc->state, SM_NOPMU, __ATOMIC_RELEASE);
		return;
	}
	/* Samples need the PMI: an LVT entry that does not hold what was
	 * written (no local APIC PMI support) means no sample would come. */
	if (pmi_check_delivery(mc->why, sizeof(mc->why))) {
		__atomic_store_n(&mc->state, SM_NOPMU, __ATOMIC_RELEASE);
		return;
	}
	for (unsigned i = 0; i < r->plan.nev; i++)
		pmu_event_init(&mc->ev[i], &r->plan.attr[i], r->plan.names[i]);
	sm_events(mc, evp);
	/* Placed now, as a group, so a refusal shows before anything runs. */
	if (pmu_events_add(evp, r->plan.nev) != PMU_OK) {
		ksnprintf(mc->why, sizeof(mc->why), "cannot place the %u events: %s", r->plan.nev, evp[0]->reason);
		goto fail;
	}
	mc->placed = true;
	if (pmu_wl_setup(&mc->wl, &sm_env, r->plan.wl_kind, r->plan.wl_size, mc->cpu, SM_SEED, mc->why,
			 sizeof(mc->why)))
		goto fail;
	__atomic_store_n(&mc->state, SM_READY, __ATOMIC_RELEASE);
	return;
fail:
	__atomic_store_n(&mc->state, SM_FAILED, __ATOMIC_RELEASE);
}

static void sm_teardown(struct sm_cpu *mc)
{
	struct pmu_event *evp[SAMPLE_MODE_MAX_EVENTS];

	if (!mc->placed)
		return;
	sm_events(mc, evp);
	pmu_events_del(evp, mc->run->plan.nev);
	mc->placed = false;
}

/* The run: sampling on from start_us to end_us with the workload in timed
 * steps in between. The handler's statistics are read around it, so the
 * figures are this run's even after earlier tests took PMIs here. */
static void sm_measure(struct sm_cpu *mc)
{
	struct sm_run *r = mc->run;
	const struct sample_mode_plan *p = &r->plan;
	struct pmu_event *evp[SAMPLE_MODE_MAX_EVENTS];
	struct pmu_pmi_stats st0, st1;
	/* A fixed-vector PMI needs interrupts on (NMI delivery does not). */
	bool was_on = read_rflags() & BIT(RFLAGS_IF_BIT);
	int err;

	sm_events(mc, evp);
	while (uptime_us() < r->start_us)
		cpu_relax();
	pmu_pmi_get_stats(mc->cpu, &st0);
	if (!was_on)
		irq_enable();
	err = pmu_sampling_start(&mc->s, evp, p->nev, mc->mem, PMU_SAMPLING_CTL_SIZE + (size_t)p->ring_bytes,
				 p->overwrite);
	if (err != PMU_OK) {
		ksnprintf(mc->why, sizeof(mc->why), "cannot start sampling: %s", mc->s.reason);
		if (!was_on)
			irq_disable();
		__atomic_store_n(&mc->state, SM_FAILED, __ATOMIC_RELEASE);
		return;
	}
	mc->t0_us = uptime_us();
	pmu_wl_run_until(&mc->wl, &sm_env, r->end_us);
	err = pmu_sampling_stop(&mc->s);
	mc->t1_us = uptime_us();
	if (!was_on)
		irq_disable();
	pmu_pmi_get_stats(mc->cpu, &st1);

	struct sample_mode_cpu *res = &mc->res;
	res->pmis = st1.pmis - st0.pmis;
	res->spurious = st1.spurious - st0.spurious;
	res->written = st1.samples - st0.samples;
	res->handler_lost = st1.lost - st0.lost;
	for (unsigned i = 0; i < p->nev; i++)
		if (p->attr[i].period && mc->ev[i].hw.idx >= 0)
			res->overflows += (uint32_t)(st1.ovf[mc->ev[i].hw.idx] - st0.ovf[mc->ev[i].hw.idx]);
	res->ring_lost = pmu_sampling_ring_lost(&mc->s);
	if (err != PMU_OK) {
		ksnprintf(mc->why, sizeof(mc->why), "cannot stop sampling: %s", mc->s.reason);
		__atomic_store_n(&mc->state, SM_FAILED, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&mc->state, SM_RAN, __ATOMIC_RELEASE);
}

/* Runs on every chosen CPU but the coordinator, as a cross-CPU call. */
static void sm_worker(void *arg)
{
	struct sm_cpu *mc = arg;
	struct sm_run *r = mc->run;

	sm_setup(mc);
	if (__atomic_load_n(&mc->state, __ATOMIC_ACQUIRE) == SM_READY) {
		/* Bounded: a coordinator that gave up must not strand us. */
		uint64_t limit = uptime_us() + SM_SETUP_TIMEOUT_US;
		while (sm_go_state(r) == SM_WAIT && uptime_us() < limit)
			cpu_relax();
		if (sm_go_state(r) == SM_GO)
			sm_measure(mc);
	}
	sm_teardown(mc);
	__atomic_store_n(&mc->done, true, __ATOMIC_RELEASE);
}

/* ---- The coordinator ---- */

static void *sm_ring_mem(unsigned cpu, size_t size)
{
	if (sm_mem[cpu].size < size) {
		sm_mem[cpu].p = bootmem_alloc(size);
		sm_mem[cpu].size = size;
	}
	return sm_mem[cpu].p;
}

static bool sm_all_set_up(const struct sm_run *r)
{
	for (unsigned c = 0; c < r->ncpu; c++)
		if (__atomic_load_n(&r->cpus[c].state, __ATOMIC_ACQUIRE) == SM_SETUP)
			return false;
	return true;
}

/* After every CPU set up (or failed to): the first problem, printed. No
 * PMU comes first, in one line: it explains every other failure. */
static int sm_check_setup(struct sm_run *r)
{
	unsigned nopmu = 0, failed = 0;
	struct sm_cpu *first = NULL;

	for (unsigned c = 0; c < r->ncpu; c++)
		if (__atomic_load_n(&r->cpus[c].state, __ATOMIC_ACQUIRE) == SM_NOPMU && !nopmu++)
			first = &r->cpus[c];
	if (first) {
		char more[64] = "";
		if (nopmu > 1)
			ksnprintf(more, sizeof(more), " (and %u more of the %u chosen CPUs)", nopmu - 1, r->ncpu);
		say(r, "# sample-mode: no PMU on cpu %u: %s%s", first->cpu, first->why, more);
		return SAMPLE_MODE_E_NOPMU;
	}
	for (unsigned c = 0; c < r->ncpu; c++) {
		struct sm_cpu *mc = &r->cpus[c];
		int st = __atomic_load_n(&mc->state, __ATOMIC_ACQUIRE);
		if (st == SM_FAILED) {
			say(r, "# sample-mode: cpu %u: %s", mc->cpu, mc->why);
			failed++;
		} else if (st == SM_SETUP) {
			say(r, "# sample-mode: cpu %u did not finish setting up within %llu s", mc->cpu,
			    SM_SETUP_TIMEOUT_US / 1000000);
			return SAMPLE_MODE_E_STALLED;
		}
	}
	return failed ? SAMPLE_MODE_E_EVENTS : SAMPLE_MODE_OK;
}

/* Wait for every launched CPU to leave its call; bounded. */
static void sm_join(struct sm_run *r)
{
	for (unsigned c = 0; c < r->ncpu; c++) {
		struct sm_cpu *mc = &r->cpus[c];
		if (mc->launched && !on_cpu_wait(mc->cpu, mc->ticket, SM_CALL_TIMEOUT_US + SM_LATE_US))
			say(r, "# sample-mode: cpu %u did not finish its run in time; its counters may still be programmed",
			    mc->cpu);
	}
}

static void sm_describe(struct sm_run *r)
{
	const struct sample_mode_plan *p = &r->plan;
	const struct pmu_wl_desc *d = &pmu_wl_descs[p->wl_kind];
	char list[128], ev[256];
	size_t len = 0;

	cpulist_format(&p->cpus, list, sizeof(list));
	ev[0] = '\0';
	for (unsigned i = 0; i < p->nev && len < sizeof(ev); i++)
		len += (size_t)ksnprintf(ev + len, sizeof(ev) - len, "%s%s", i ? " " : "", p->names[i]);
	say(r, "# sample-mode: workload %s, size %llu %s: %s", d->name, (unsigned long long)p->wl_size, d->size_unit,
	    d->what);
	say(r, "# sample-mode: cpus %s, events %s, for %llu ms, ring %llu bytes per CPU, overwrite %d, PMI %s", list,
	    ev, (unsigned long long)p->duration_ms, (unsigned long long)p->ring_bytes, p->overwrite,
	    pmi_delivery_name(pmi_delivery()));
	char buf[SAMPLE_MODE_LINE_LEN];
	for (unsigned i = 0; i < r->nranges; i++) {
		sample_mode_format_range(&r->ranges[i], buf, sizeof(buf));
		r->line(buf);
	}
	if (!r->nranges)
		say(r, "# sample-mode: workload rip range unknown (%s and the function after it are not adjacent in this build): RIPs are not judged",
		    r->no_ranges_why);
}

/* Drain, summarise and judge each CPU that ran, in CPU order; the first
 * bad verdict is the run's status, every one is printed. */
static int sm_report(struct sm_run *r)
{
	char buf[SAMPLE_MODE_LINE_LEN], why[PMU_REASON_LEN];
	uint64_t samples = 0, lost = 0;
	int status = SAMPLE_MODE_OK;

	for (unsigned c = 0; c < r->ncpu; c++) {
		struct sm_cpu *mc = &r->cpus[c];
		if (!__atomic_load_n(&mc->done, __ATOMIC_ACQUIRE)) {
			say(r, "# sample-mode: cpu %u did not finish within %llu ms of the end; its ring is not drained",
			    mc->cpu, SM_LATE_US / 1000);
			if (!status)
				status = SAMPLE_MODE_E_STALLED;
			continue;
		}
		if (__atomic_load_n(&mc->state, __ATOMIC_ACQUIRE) != SM_RAN) {
			say(r, "# sample-mode: cpu %u: %s", mc->cpu, mc->why);
			if (!status)
				status = SAMPLE_MODE_E_EVENTS;
			continue;
		}
		mc->res.cpu = mc->cpu;
		sample_mode_drain(&mc->s, &r->plan, r->ranges, r->nranges, r->line, &mc->res);
		sample_mode_format_summary(&mc->res, &r->plan, r->nranges > 0, buf, sizeof(buf));
		r->line(buf);
		int v = sample_mode_judge(&mc->res, r->plan.overwrite, r->nranges > 0, why, sizeof(why));
		if (v != SAMPLE_MODE_OK) {
			say(r, "# sample-mode: %s", why);
			if (!status)
				status = v;
		}
		samples += mc->res.tally.samples;
		lost += r->plan.overwrite ? mc->res.tally.lost : mc->res.ring_lost;
	}
	say(r, "# sample-mode: done: %llu samples, %llu lost on %u CPUs: %s", (unsigned long long)samples,
	    (unsigned long long)lost, r->ncpu, sample_mode_status_name(status));
	return status;
}

static int sm_plan_cpus(struct sample_mode_plan *p, const struct sample_mode_opts *o, unsigned ncpus, char *err,
			size_t errlen)
{
	const char *list = o->cpus && *o->cpus ? o->cpus : "all";
	char why[PMU_REASON_LEN];

	if (cpulist_parse(list, ncpus, &p->cpus, why, sizeof(why)) == 0)
		return SAMPLE_MODE_OK;
	ksnprintf(err, errlen, "CPU list '%s' refused: %s", list, why);
	return SAMPLE_MODE_E_ARGS;
}

uint64_t sample_mode_budget_ms(const struct sample_mode_opts *o, unsigned ncpus)
{
	struct cpulist cpus;
	const char *list = o->cpus && *o->cpus ? o->cpus : "all";
	uint64_t duration = o->duration_ms ? o->duration_ms : SAMPLE_MODE_DEFAULT_DURATION_MS;
	uint64_t ring = o->ring_bytes ? o->ring_bytes : SAMPLE_MODE_DEFAULT_RING;
	unsigned n = ncpus;

	if (duration > SAMPLE_MODE_MAX_DURATION_MS)
		duration = SAMPLE_MODE_MAX_DURATION_MS;
	if (ring > SAMPLE_MODE_MAX_RING)
		ring = SAMPLE_MODE_MAX_RING;
	if (cpulist_parse(list, ncpus, &cpus, NULL, 0) == 0)
		n = cpulist_count(&cpus);
	/* A record of B bytes prints as 2B hex digits plus "# sample: " and a
	 * newline, about 2.3 characters per ring byte for 48-byte samples;
	 * 115200 baud 8N1 moves 11.52 characters per ms: ring / 5 ms per CPU,
	 * rounded up to ring / 4. Set-up gets what monitor mode gives it. */
	return duration + 180000 + n * (ring / 4);
}

int sample_mode_run(const struct sample_mode_opts *o, void (*line)(const char *))
{
	static const struct sample_mode_opts none;
	/* The run state lives in boot memory, not on this stack: a CPU that
	 * is late leaving its call still writes into valid memory. */
	struct sm_run *r = bootmem_alloc(sizeof(*r));
	char err[PMU_REASON_LEN];
	unsigned self = smp_this_cpu(), cpu, c = 0;
	int status;

	r->line = line ? line : sm_console_line;
	if (!o)
		o = &none;
	if (sample_mode_plan(&r->plan, o, err, sizeof(err)) != SAMPLE_MODE_OK ||
	    sm_plan_cpus(&r->plan, o, smp_num_cpus(), err, sizeof(err)) != SAMPLE_MODE_OK) {
		say(r, "# sample-mode: %s", err);
		return SAMPLE_MODE_E_ARGS;
	}
	r->ncpu = cpulist_count(&r->plan.cpus);
	r->cpus = bootmem_alloc(sizeof(*r->cpus) * r->ncpu);
	cpulist_for_each(cpu, &r->plan.cpus) {
		struct sm_cpu *mc = &r->cpus[c++];
		mc->cpu = cpu;
		mc->run = r;
		if (cpu == self)
			r->self = mc;
	}
	sm_find_ranges(r);

	/* Others first, so their setup overlaps ours. */
	status = SAMPLE_MODE_OK;
	for (c = 0; c < r->ncpu; c++) {
		struct sm_cpu *mc = &r->cpus[c];
		if (mc == r->self)
			continue;
		if (!on_cpu_try_async(mc->cpu, sm_worker, mc, SM_CALL_TIMEOUT_US, &mc->ticket)) {
			say(r, "# sample-mode: cpu %u is still busy with an earlier cross-CPU call", mc->cpu);
			status = SAMPLE_MODE_E_STALLED;
			break;
		}
		mc->launched = true;
	}
	if (status == SAMPLE_MODE_OK) {
		if (r->self)
			sm_setup(r->self);
		uint64_t limit = uptime_us() + SM_SETUP_TIMEOUT_US;
		while (!sm_all_set_up(r) && uptime_us() < limit)
			cpu_relax();
		status = sm_check_setup(r);
	}
	if (status != SAMPLE_MODE_OK) {
		__atomic_store_n(&r->go, SM_ABORT, __ATOMIC_RELEASE);
		if (r->self)
			sm_teardown(r->self);
		sm_join(r);
		return status;
	}

	/* Rings only now that every CPU can sample: a run refused for want
	 * of a PMU costs no boot memory. The workers read mc->mem after "go"
	 * (release/acquire on r->go). */
	for (c = 0; c < r->ncpu; c++)
		r->cpus[c].mem = sm_ring_mem(r->cpus[c].cpu, PMU_SAMPLING_CTL_SIZE + (size_t)r->plan.ring_bytes);
	sm_describe(r);
	r->start_us = uptime_us() + SM_START_DELAY_US;
	r->end_us = r->start_us + r->plan.duration_ms * 1000;
	__atomic_store_n(&r->go, SM_GO, __ATOMIC_RELEASE);
	if (r->self) {
		sm_measure(r->self);
		sm_teardown(r->self);
		__atomic_store_n(&r->self->done, true, __ATOMIC_RELEASE);
	}
	/* Nothing is printed while CPUs sample: the drain comes after, so the
	 * UART's pace never stretches the measurement. */
	for (c = 0; c < r->ncpu; c++) {
		struct sm_cpu *mc = &r->cpus[c];
		while (!__atomic_load_n(&mc->done, __ATOMIC_ACQUIRE) && uptime_us() < r->end_us + SM_LATE_US)
			cpu_relax();
	}
	status = sm_report(r);
	sm_join(r);
	return status;
}

