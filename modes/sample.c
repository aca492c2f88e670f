/* Sample mode, kernel side: on every chosen CPU (modes/run.c) place the
 * events, sample while the workload runs for the duration, stop; then drain
 * each CPU's ring from the coordinator and judge the records
 * (sample_drain.c). The pure parts, sample_opts.c and sample_drain.c, are
 * host-tested. */
#include "modes/sample.h"

#include "arch/x86/bootmem.h"
#include "arch/x86/cpu.h"
#include "arch/x86/pc/console.h"
#include "arch/x86/percpu.h"
#include "arch/x86/smp.h"
#include "arch/x86/timer.h"
#include "arch/x86/usermode.h"
#include "lib/cpulist.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "modes/run.h"
#include "modes/workloads.h"
#include "pmu/kernel/pmi_lvt.h"
#include "pmu/pmu.h"
#include "pmu/sampling_hw.h"

/* A workload function's code is far smaller than this; a larger "range"
 * means the neighbour used as its end is not its neighbour. */
#define SM_MAX_FN_BYTES 16384u

struct sm_run;

/* One chosen CPU. Written by that CPU until `done`; read by the
 * coordinator afterwards. */
struct sm_cpu {
	struct run_cpu rc; /* first: modes/run.c sees only this */
	struct sm_run *sm;
	bool placed;
	void *mem; /* PMU_SAMPLING_CTL_SIZE + ring bytes, then PMU_SAMPLING_HW_MEM */
	struct pmu_event ev[SAMPLE_MODE_MAX_EVENTS];
	struct pmu_sampling s;
	struct pmu_sampling_hw hw; /* PEBS and branch stacks (precise, callstack) */
	struct pmu_wl wl;
	uint64_t t0_us, t1_us; /* sampling started / stopped */
	struct sample_mode_cpu res;
} __attribute__((aligned(64)));

struct sm_run {
	struct run run;
	struct sample_mode_plan plan;
	uint64_t start_us, end_us;
	struct sample_mode_range ranges[SAMPLE_MODE_MAX_RANGES];
	unsigned nranges;
	const char *no_ranges_why;
};

/* Ring memory per CPU, kept for later runs: boot memory is never freed. */
static struct {
	void *p;
	size_t size;
} sm_mem[MAX_CPUS];

/* One console_write per line: console_printf cuts lines at 511
 * characters, and a sample carrying 15 other counters prints 586. */
static void sm_console_line(const char *s)
{
	char buf[SAMPLE_MODE_LINE_LEN + 1];
	int n = ksnprintf(buf, sizeof(buf), "%s\n", s);

	console_write(buf, n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static struct sm_cpu *sm_cpu(struct run_cpu *rc)
{
	return (struct sm_cpu *)rc;
}

static struct sm_cpu *sm_cpu_at(const struct sm_run *m, unsigned i)
{
	return sm_cpu(run_cpu_at(&m->run, i));
}

/* ---- The workload's code ---- */

/* Where the workload runs: pmu_wl_step() with the loops it inlines, and for
 * memcpy the kernel's memcpy(). C gives a function's start but not its
 * end, so the end is the next function of the same file: GCC and clang
 * emit a file's functions in source order (checked with nm on the -Os
 * kernel and its clang build), and modes/workloads.c defines pmu_wl_step_timed right after
 * pmu_wl_step, lib/string.c memmove right after memcpy. A compiler that
 * orders them otherwise gives an inverted or oversized range: the RIP
 * verdict is then skipped and a line says why. */
static bool sm_add_range(struct sm_run *m, uintptr_t lo, uintptr_t hi, const char *what)
{
	if (hi <= lo || hi - lo > SM_MAX_FN_BYTES) {
		m->no_ranges_why = what;
		m->nranges = 0;
		return false;
	}
	m->ranges[m->nranges++] = (struct sample_mode_range){ lo, hi, what };
	return true;
}

static void sm_find_ranges(struct sm_run *m)
{
	m->nranges = 0;
	if (!sm_add_range(m, (uintptr_t)&pmu_wl_step, (uintptr_t)&pmu_wl_step_timed, "pmu_wl_step"))
		return;
	if (m->plan.wl_kind == PMU_WL_MEMCPY)
		sm_add_range(m, (uintptr_t)&memcpy, (uintptr_t)&memmove, "memcpy");
}

/* ---- On each chosen CPU ---- */

static void sm_events(struct sm_cpu *mc, struct pmu_event **evp)
{
	for (unsigned i = 0; i < mc->sm->plan.nev; i++)
		evp[i] = &mc->ev[i];
}

static void sm_setup(struct run_cpu *rc)
{
	struct sm_cpu *mc = sm_cpu(rc);
	struct sm_run *m = mc->sm;
	struct pmu_event *evp[SAMPLE_MODE_MAX_EVENTS];

	if (!run_need_pmu(rc))
		return;
	/* Samples need the PMI: an LVT entry that does not hold what was
	 * written (no local APIC PMI support) means no sample would come. */
	if (pmi_check_delivery(rc->why, sizeof(rc->why))) {
		run_set_state(rc, RUN_NOPMU);
		return;
	}
	for (unsigned i = 0; i < m->plan.nev; i++)
		pmu_event_init(&mc->ev[i], &m->plan.attr[i], m->plan.names[i]);
	sm_events(mc, evp);
	/* The precise event first, on a counter that can use PEBS; then the
	 * rest, as a group, so a refusal shows before anything runs. */
	if (m->plan.precise >= 0) {
		char why[PMU_REASON_LEN];
		struct pmu_event *pev = &mc->ev[m->plan.precise];
		uint32_t can = pmu_sampling_hw_precise_counters(why, sizeof(why));
		unsigned x = 0;
		while (x < 32 && !((can >> x) & 1))
			x++;
		if (!can || pmu_event_add_idx(pev, (int)x) != PMU_OK) {
			run_setup_failed(rc, "precise sampling of '%s': %s", m->plan.names[m->plan.precise],
					 can ? pev->reason : why);
			return;
		}
		evp[m->plan.precise] = evp[m->plan.nev - 1];
		if (!(mc->placed = run_place_events(rc, evp, m->plan.nev - 1))) {
			pmu_event_del(pev);
			return;
		}
	} else if (!(mc->placed = run_place_events(rc, evp, m->plan.nev))) {
		return;
	}
	run_setup_workload(rc, &mc->wl, m->plan.wl_kind, m->plan.wl_size);
}

static void sm_teardown(struct run_cpu *rc)
{
	struct sm_cpu *mc = sm_cpu(rc);
	struct pmu_event *evp[SAMPLE_MODE_MAX_EVENTS];

	if (!mc->placed)
		return;
	sm_events(mc, evp);
	pmu_events_del(evp, mc->sm->plan.nev);
	mc->placed = false;
}

static void sm_user_workload(void *arg)
{
	struct sm_cpu *mc = arg;

	pmu_wl_run_until(&mc->wl, &run_wl_env, mc->sm->end_us);
}

/* The run: sampling on from start_us to end_us with the workload in timed
 * steps in between. The handler's statistics are read around it, so the
 * figures are this run's even after earlier tests took PMIs here. */
static void sm_measure(struct run_cpu *rc)
{
	struct sm_cpu *mc = sm_cpu(rc);
	struct sm_run *m = mc->sm;
	const struct sample_mode_plan *p = &m->plan;
	struct pmu_event *evp[SAMPLE_MODE_MAX_EVENTS];
	struct pmu_pmi_stats st0, st1;
	/* A fixed-vector PMI needs interrupts on (NMI delivery does not). */
	bool was_on = read_rflags() & BIT(RFLAGS_IF_BIT);
	int err;

	sm_events(mc, evp);
	while (uptime_us() < m->start_us)
		cpu_relax();
	pmu_pmi_get_stats(rc->cpu, &st0);
	if (!was_on)
		irq_enable();
	/* PEBS and the LBRs before the counters start, the handler routed
	 * to them before the first PMI. */
	if (p->precise >= 0 || p->branches != PMU_SAMPLING_BRANCHES_NONE) {
		uint8_t *hw_mem = (uint8_t *)mc->mem + PMU_SAMPLING_CTL_SIZE + (size_t)p->ring_bytes;
		err = pmu_sampling_hw_start(&mc->hw, p->precise >= 0 ? &mc->ev[p->precise] : NULL,
					    p->branches, hw_mem, PMU_SAMPLING_HW_MEM);
		if (err != PMU_OK) {
			ksnprintf(rc->why, sizeof(rc->why), "%s", mc->hw.reason);
			if (!was_on)
				irq_disable();
			run_set_state(rc, RUN_FAILED);
			return;
		}
		pmu_pmi_set_hw(&mc->hw);
	}
	err = pmu_sampling_start(&mc->s, evp, p->nev, mc->mem, PMU_SAMPLING_CTL_SIZE + (size_t)p->ring_bytes,
				 p->overwrite);
	if (err != PMU_OK) {
		ksnprintf(rc->why, sizeof(rc->why), "cannot start sampling: %s", mc->s.reason);
		pmu_pmi_set_hw(NULL);
		pmu_sampling_hw_stop(&mc->hw);
		if (!was_on)
			irq_disable();
		run_set_state(rc, RUN_FAILED);
		return;
	}
	/* The PEBS counter's count restarts at every record (its DS reset
	 * value): other samples do not carry it. */
	if (p->precise >= 0)
		pmu_pmi_set_ring(mc->s.rb, pmu_events_global_mask(evp, p->nev) &
						   ~pmu_idx_bit(mc->ev[p->precise].hw.idx));
	mc->t0_us = uptime_us();
	/* LBR call stacks are the workload's at CPL 3 (pmu/sampling_hw.h). */
	int user_vec = -1;
	if (p->branches == PMU_SAMPLING_BRANCHES_USER_CALLSTACK)
		user_vec = usermode_call(sm_user_workload, mc);
	else
		pmu_wl_run_until(&mc->wl, &run_wl_env, m->end_us);
	err = pmu_sampling_stop(&mc->s);
	pmu_pmi_set_hw(NULL);
	pmu_sampling_hw_stop(&mc->hw);
	mc->t1_us = uptime_us();
	if (!was_on)
		irq_disable();
	pmu_pmi_get_stats(rc->cpu, &st1);

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
		ksnprintf(rc->why, sizeof(rc->why), "cannot stop sampling: %s", mc->s.reason);
		run_set_state(rc, RUN_FAILED);
		return;
	}
	if (user_vec != -1) {
		ksnprintf(rc->why, sizeof(rc->why), "the ring-3 workload raised vector %d", user_vec);
		run_set_state(rc, RUN_FAILED);
		return;
	}
	run_set_state(rc, RUN_RAN);
}

static const struct run_ops sm_ops = { sm_setup, sm_measure, sm_teardown };

/* ---- The coordinator ---- */

static void *sm_ring_mem(unsigned cpu, size_t size)
{
	if (sm_mem[cpu].size < size) {
		sm_mem[cpu].p = bootmem_alloc(size);
		sm_mem[cpu].size = size;
	}
	return sm_mem[cpu].p;
}

static void sm_describe(struct sm_run *m)
{
	const struct sample_mode_plan *p = &m->plan;
	const struct pmu_wl_desc *d = &pmu_wl_descs[p->wl_kind];
	char list[128], ev[256];
	size_t len = 0;

	cpulist_format(&p->cpus, list, sizeof(list));
	ev[0] = '\0';
	for (unsigned i = 0; i < p->nev && len < sizeof(ev); i++)
		len += (size_t)ksnprintf(ev + len, sizeof(ev) - len, "%s%s", i ? " " : "", p->names[i]);
	run_say(&m->run, "workload %s, size %llu %s: %s", d->name, (unsigned long long)p->wl_size,
		d->size_unit, d->what);
	run_say(&m->run, "cpus %s, events %s, for %llu ms, ring %llu bytes per CPU, overwrite %d, PMI %s",
		list, ev, (unsigned long long)p->duration_ms, (unsigned long long)p->ring_bytes, p->overwrite,
		pmi_delivery_name(pmi_delivery()));
	char buf[SAMPLE_MODE_LINE_LEN];
	for (unsigned i = 0; i < m->nranges; i++) {
		sample_mode_format_range(&m->ranges[i], buf, sizeof(buf));
		m->run.line(buf);
	}
	if (!m->nranges)
		run_say(&m->run,
			"workload rip range unknown (%s and the function after it are not adjacent in this build): RIPs are not judged",
			m->no_ranges_why);
}

/* Drain, summarise and judge each CPU that ran, in CPU order; the first
 * bad verdict is the run's status, every one is printed. */
static int sm_report(struct sm_run *m)
{
	struct run *r = &m->run;
	char buf[SAMPLE_MODE_LINE_LEN], why[PMU_REASON_LEN];
	uint64_t samples = 0, lost = 0;
	int status = MODE_OK;

	for (unsigned c = 0; c < r->ncpu; c++) {
		struct sm_cpu *mc = sm_cpu_at(m, c);
		int v;
		if (!__atomic_load_n(&mc->rc.done, __ATOMIC_ACQUIRE)) {
			v = run_fail(
				r, MODE_E_STALLED,
				"cpu %u did not finish within %llu ms of the end (the guest ran %u times slower than native); its ring is not drained",
				mc->rc.cpu, (unsigned long long)run_late_ms(r),
				r->late_stretch < 1 ? 1 : r->late_stretch);
			status = status ? status : v;
			continue;
		}
		if (__atomic_load_n(&mc->rc.state, __ATOMIC_ACQUIRE) != RUN_RAN) {
			v = run_fail(r, MODE_E_EVENTS, "cpu %u: %s", mc->rc.cpu, mc->rc.why);
			status = status ? status : v;
			continue;
		}
		mc->res.cpu = mc->rc.cpu;
		sample_mode_drain(&mc->s, &m->plan, m->ranges, m->nranges, r->line, &mc->res);
		sample_mode_format_summary(&mc->res, &m->plan, m->nranges > 0, buf, sizeof(buf));
		r->line(buf);
		v = sample_mode_judge(&mc->res, m->plan.overwrite, m->nranges > 0, why, sizeof(why));
		if (v != MODE_OK) {
			run_fail(r, v, "%s", why);
			status = status ? status : v;
		}
		samples += mc->res.tally.samples;
		lost += m->plan.overwrite ? mc->res.tally.lost : mc->res.ring_lost;
	}
	run_say(r, "done: %llu samples, %llu lost on %u CPUs: %s", (unsigned long long)samples,
		(unsigned long long)lost, r->ncpu, mode_status_name(MODE_SAMPLE, status));
	return status;
}

static int sm_plan_cpus(struct sample_mode_plan *p, const struct mode_opts *o, unsigned ncpus, char *err,
			size_t errlen)
{
	const char *list = o->cpus && *o->cpus ? o->cpus : "all";
	char why[PMU_REASON_LEN];

	if (cpulist_parse(list, ncpus, &p->cpus, why, sizeof(why)) == 0)
		return MODE_OK;
	return kerrf(err, errlen, MODE_E_ARGS, "CPU list '%s' refused: %s", list, why);
}

int sample_mode_run(const struct mode_opts *o, void (*line)(const char *), struct mode_result *res)
{
	static const struct mode_opts none;
	/* The run state lives in boot memory, not on this stack: a CPU that
	 * is late leaving its call still writes into valid memory. */
	struct sm_run *m = bootmem_alloc(sizeof(*m));
	char err[PMU_REASON_LEN];
	int status;

	run_init(&m->run, MODE_SAMPLE, "# sample-mode: ", line ? line : sm_console_line, res);
	if (!o)
		o = &none;
	if (sample_mode_plan(&m->plan, o, err, sizeof(err)) != MODE_OK ||
	    sm_plan_cpus(&m->plan, o, smp_num_cpus(), err, sizeof(err)) != MODE_OK)
		return run_fail(&m->run, MODE_E_ARGS, "%s", err);
	run_alloc_cpus(&m->run, &m->plan.cpus, sizeof(struct sm_cpu));
	for (unsigned c = 0; c < m->run.ncpu; c++)
		sm_cpu_at(m, c)->sm = m;
	sm_find_ranges(m);
	if ((status = run_start(&m->run, &sm_ops)) != MODE_OK)
		return status;

	/* Rings only now that every CPU can sample: a run refused for want
	 * of a PMU costs no boot memory. The workers read mc->mem after "go"
	 * (release/acquire on the run's go flag). */
	for (unsigned c = 0; c < m->run.ncpu; c++) {
		struct sm_cpu *mc = sm_cpu_at(m, c);
		mc->mem = sm_ring_mem(mc->rc.cpu, PMU_SAMPLING_CTL_SIZE + (size_t)m->plan.ring_bytes +
							  PMU_SAMPLING_HW_MEM);
	}
	sm_describe(m);
	m->start_us = uptime_us() + RUN_START_DELAY_US;
	m->end_us = m->start_us + m->plan.duration_ms * 1000;
	run_go(&m->run);
	run_self(&m->run);
	/* Nothing is printed while CPUs sample: the drain comes after, so the
	 * UART's pace never stretches the measurement. */
	for (unsigned c = 0; c < m->run.ncpu; c++) {
		struct sm_cpu *mc = sm_cpu_at(m, c);
		while (!__atomic_load_n(&mc->rc.done, __ATOMIC_ACQUIRE) && !run_late(&m->run, m->end_us))
			cpu_relax();
	}
	status = sm_report(m);
	run_join(&m->run);
	return status;
}
