/* The coordinator both modes share (modes/run.h). */
#include "modes/run.h"

#include <stdarg.h>

#include "arch/x86/bootmem.h"
#include "arch/x86/cpu.h"
#include "arch/x86/smp.h"
#include "arch/x86/timer.h"
#include "lib/printf.h"
#include "lib/string.h"

_Static_assert(CPULIST_MAX_CPUS == MAX_CPUS, "lib/cpulist.h must cover every CPU the kernel starts");

const struct pmu_wl_env run_wl_env = { bootmem_alloc, uptime_us };

bool run_need_pmu(struct run_cpu *rc)
{
	const char *why = pmu_skip_reason();

	if (!why)
		return true;
	ksnprintf(rc->why, sizeof(rc->why), "%s", why);
	run_set_state(rc, RUN_NOPMU);
	return false;
}

void run_setup_failed(struct run_cpu *rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kvsnprintf(rc->why, sizeof(rc->why), fmt, ap);
	va_end(ap);
	run_set_state(rc, RUN_FAILED);
}

bool run_place_events(struct run_cpu *rc, struct pmu_event *const *evs, unsigned n)
{
	if (pmu_events_add(evs, n) == PMU_OK)
		return true;
	run_setup_failed(rc, "cannot place the %u events: %s", n, evs[0]->reason);
	return false;
}

void run_setup_workload(struct run_cpu *rc, struct pmu_wl *wl, enum pmu_wl_kind kind, uint64_t size)
{
	if (pmu_wl_setup(wl, &run_wl_env, kind, size, rc->cpu, RUN_SEED, rc->why, sizeof(rc->why)))
		run_set_state(rc, RUN_FAILED);
	else
		run_set_state(rc, RUN_READY);
}

void run_init(struct run *r, enum mode_kind kind, const char *prefix, void (*line)(const char *),
	      struct mode_result *res)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->prefix = prefix;
	r->line = line;
	r->res = res;
	if (res) {
		res->status = MODE_OK;
		res->reason[0] = '\0';
	}
}

/* Prints "<prefix><message>"; returns the message part of buf. */
static const char *run_vsay(const struct run *r, char *buf, size_t len, const char *fmt, va_list ap)
{
	size_t n = strlcpy(buf, r->prefix, len);

	if (n >= len)
		n = len - 1;
	kvsnprintf(buf + n, len - n, fmt, ap);
	r->line(buf);
	return buf + n;
}

void run_say(const struct run *r, const char *fmt, ...)
{
	char buf[RUN_LINE_LEN];
	va_list ap;

	va_start(ap, fmt);
	run_vsay(r, buf, sizeof(buf), fmt, ap);
	va_end(ap);
}

int run_fail(struct run *r, int status, const char *fmt, ...)
{
	char buf[RUN_LINE_LEN];
	const char *msg;
	va_list ap;

	va_start(ap, fmt);
	msg = run_vsay(r, buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (r->res && r->res->status == MODE_OK) {
		r->res->status = status;
		strlcpy(r->res->reason, msg, sizeof(r->res->reason));
	}
	return status;
}

void run_alloc_cpus(struct run *r, const struct cpulist *cpus, size_t stride)
{
	unsigned self = smp_this_cpu(), cpu, i = 0;

	r->ncpu = cpulist_count(cpus);
	r->stride = stride;
	r->cpus = bootmem_alloc(stride * r->ncpu);
	cpulist_for_each (cpu, cpus) {
		struct run_cpu *rc = run_cpu_at(r, i++);
		rc->cpu = cpu;
		rc->run = r;
		if (cpu == self)
			r->self = rc;
	}
}

struct run_cpu *run_cpu_at(const struct run *r, unsigned i)
{
	return (struct run_cpu *)((char *)r->cpus + (size_t)i * r->stride);
}

/* On every chosen CPU but the coordinator, as a cross-CPU call: it owns
 * the CPU for the whole run, so nothing else needs to interrupt it. */
static void run_worker(void *arg)
{
	struct run_cpu *rc = arg;
	struct run *r = rc->run;

	r->ops->setup(rc);
	if (__atomic_load_n(&rc->state, __ATOMIC_ACQUIRE) == RUN_READY) {
		/* Bounded: a coordinator that gave up must not strand us. */
		uint64_t limit = uptime_us() + RUN_SETUP_TIMEOUT_US;
		while (run_go_state(r) == RUN_WAIT && uptime_us() < limit)
			cpu_relax();
		if (run_go_state(r) == RUN_GO)
			r->ops->measure(rc);
	}
	r->ops->teardown(rc);
	__atomic_store_n(&rc->done, true, __ATOMIC_RELEASE);
}

static bool run_all_set_up(const struct run *r)
{
	for (unsigned c = 0; c < r->ncpu; c++)
		if (__atomic_load_n(&run_cpu_at(r, c)->state, __ATOMIC_ACQUIRE) == RUN_SETUP)
			return false;
	return true;
}

/* After every CPU set up (or failed to): the first problem found, printed.
 * No PMU comes first, in one line: it explains every other failure. */
static int run_check_setup(struct run *r)
{
	unsigned nopmu = 0, failed = 0;
	struct run_cpu *first = NULL;

	for (unsigned c = 0; c < r->ncpu; c++)
		if (__atomic_load_n(&run_cpu_at(r, c)->state, __ATOMIC_ACQUIRE) == RUN_NOPMU && !nopmu++)
			first = run_cpu_at(r, c);
	if (first) {
		char more[64] = "";
		if (nopmu > 1)
			ksnprintf(more, sizeof(more), " (and %u more of the %u chosen CPUs)", nopmu - 1,
				  r->ncpu);
		return run_fail(r, MODE_E_NOPMU, "no PMU on cpu %u: %s%s", first->cpu, first->why, more);
	}
	for (unsigned c = 0; c < r->ncpu; c++) {
		struct run_cpu *rc = run_cpu_at(r, c);
		int st = __atomic_load_n(&rc->state, __ATOMIC_ACQUIRE);
		if (st == RUN_FAILED) {
			run_fail(r, MODE_E_EVENTS, "cpu %u: %s", rc->cpu, rc->why);
			failed++;
		} else if (st == RUN_SETUP) {
			return run_fail(r, MODE_E_STALLED, "cpu %u did not finish setting up within %llu s",
					rc->cpu, RUN_SETUP_TIMEOUT_US / 1000000);
		}
	}
	return failed ? MODE_E_EVENTS : MODE_OK;
}

/* The guest's slowdown, measured again (r->late_stretch keeps the most). */
static unsigned run_stretch(struct run *r)
{
	unsigned f = timer_slowdown();

	if (r->late_stretch < f)
		r->late_stretch = f;
	if (r->late_stretch < 1)
		r->late_stretch = 1;
	return r->late_stretch;
}

int run_start(struct run *r, const struct run_ops *ops)
{
	int status = MODE_OK;

	r->ops = ops;
	/* Others first, so their setup overlaps ours. */
	for (unsigned c = 0; c < r->ncpu; c++) {
		struct run_cpu *rc = run_cpu_at(r, c);
		if (rc == r->self)
			continue;
		/* A CPU busy past RUN_CALL_TIMEOUT_US may be a vCPU the host did
		 * not run (an earlier run's worker still leaving): waited for as
		 * run_late() waits, stretched by the slowdown. */
		if (!on_cpu_try_async(rc->cpu, run_worker, rc, RUN_CALL_TIMEOUT_US, &rc->ticket) &&
		    !on_cpu_try_async(rc->cpu, run_worker, rc,
				      RUN_CALL_TIMEOUT_US * run_stretch(r) * RUN_STALL_FACTOR, &rc->ticket)) {
			status = run_fail(r, MODE_E_STALLED,
					  "cpu %u is still busy with an earlier cross-CPU call", rc->cpu);
			break;
		}
		rc->launched = true;
	}
	if (status == MODE_OK) {
		if (r->self)
			ops->setup(r->self);
		uint64_t limit = uptime_us() + RUN_SETUP_TIMEOUT_US;
		while (!run_all_set_up(r) && uptime_us() < limit)
			cpu_relax();
		status = run_check_setup(r);
	}
	if (status != MODE_OK) {
		__atomic_store_n(&r->go, RUN_ABORT, __ATOMIC_RELEASE);
		if (r->self)
			ops->teardown(r->self);
		run_join(r);
	}
	return status;
}

void run_go(struct run *r)
{
	__atomic_store_n(&r->go, RUN_GO, __ATOMIC_RELEASE);
}

bool run_late(struct run *r, uint64_t deadline_us)
{
	if (r->late_stretch < 1)
		r->late_stretch = 1;
	if (uptime_us() < deadline_us + RUN_LATE_US * r->late_stretch)
		return false;
	uint64_t soft = RUN_LATE_US * run_stretch(r);
	if (uptime_us() < deadline_us + soft)
		return false;
	if (!r->late_said) {
		r->late_said = true;
		run_say(r,
			"a CPU is more than %llu ms late (the guest ran %u times slower than native): waiting up to %llu ms for it before calling it stalled",
			(unsigned long long)(soft / 1000), r->late_stretch,
			(unsigned long long)(soft * RUN_STALL_FACTOR / 1000));
	}
	return uptime_us() >= deadline_us + soft * RUN_STALL_FACTOR;
}

uint64_t run_late_ms(const struct run *r)
{
	return RUN_LATE_US * (r->late_stretch > 1 ? r->late_stretch : 1) * RUN_STALL_FACTOR / 1000;
}

void run_self(struct run *r)
{
	if (!r->self)
		return;
	r->ops->measure(r->self);
	r->ops->teardown(r->self);
	__atomic_store_n(&r->self->done, true, __ATOMIC_RELEASE);
}

void run_join(struct run *r)
{
	for (unsigned c = 0; c < r->ncpu; c++) {
		struct run_cpu *rc = run_cpu_at(r, c);
		if (rc->launched && !on_cpu_wait(rc->cpu, rc->ticket, RUN_CALL_TIMEOUT_US + RUN_LATE_US) &&
		    !on_cpu_wait(rc->cpu, rc->ticket,
				 (RUN_CALL_TIMEOUT_US + RUN_LATE_US) * run_stretch(r) * RUN_STALL_FACTOR))
			run_say(r,
				"cpu %u did not finish its run in time; its counters may still be programmed",
				rc->cpu);
	}
}
