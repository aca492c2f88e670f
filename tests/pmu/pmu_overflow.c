/* Overflow and PMI checks on each CPU: every counter preset to -N raises
 * exactly one PMI with its own status bit, cleared by the handler; no PMI
 * without INT; fixed and NMI delivery; freeze on PMI and STATUS_SET (v4);
 * a USR-only overflow in ring 3; isolation between CPUs; and a
 * reference-cycles overflow's PMI while nothing touches the PMU. */
#include "arch/x86/cpu.h"
#include "arch/x86/lapic.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "arch/x86/smp.h"
#include "arch/x86/timer.h"
#include "arch/x86/usermode.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/bracket.h"
#include "pmu/kernel/pmi_lvt.h"
#include "pmu/loops.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/deviations.h"
#include "tests/ktest.h"
#include "tests/pmu/pmu_common.h"

/* Events before the overflow: far below any window's count (the bracket
 * loop retires 3 * PMU_TEST_LOOPS instructions in >= PMU_TEST_LOOPS
 * cycles), so each counter wraps exactly once, early in the window. */
#define OVF_N ((uint64_t)1000)
/* How long a PMI may take to arrive after its window (real parts: a few
 * instructions; generous for hypervisors). */
#define PMI_WAIT_US 10000

/* The counted loop as a function with known bounds, so a PMI's RIP can be
 * checked against them: 3n + 1 instructions (n >= 1). */
void pmu_ovf_loop(uint64_t n);
extern const char pmu_ovf_loop_end[];
__asm__(".pushsection .text\n"
	".globl pmu_ovf_loop\n"
	".type pmu_ovf_loop, @function\n"
	"pmu_ovf_loop:\n\t"
	"1: add $1, %rax\n\t"
	"dec %rdi\n\t"
	"jnz 1b\n\t"
	"ret\n"
	".globl pmu_ovf_loop_end\n"
	"pmu_ovf_loop_end:\n"
	".size pmu_ovf_loop, pmu_ovf_loop_end - pmu_ovf_loop\n"
	".popsection\n");

/* Intel v4 IA32_PERF_GLOBAL_STATUS_SET, AMD PerfMonV2 PerfCntrGlobalStatusSet. */
static const char *needs_status_set(void)
{
	const char *why = pmu_needs_pmi();

	if (why)
		return why;
	if (!pmu_caps()->global_status_set)
		return ktest_reason("no status-set register (Intel: v4, this PMU v%u; AMD: PerfMonV2)",
				    pmu_caps()->version);
	return NULL;
}

static struct pmu_pmi_stats my_stats(void)
{
	struct pmu_pmi_stats s;
	pmu_pmi_get_stats(this_cpu()->cpu, &s);
	return s;
}

/* Wait (interrupts on) until the handler counted `want` overflows of idx. */
static void wait_ovf(int idx, uint32_t want)
{
	uint64_t end = rdtsc() + us_to_tsc(PMI_WAIT_US);

	while (my_stats().ovf[idx] < want && rdtsc() < end)
		cpu_relax();
}

/* GLOBAL_STATUS, or 0 where there is none. */
static uint64_t status_now(void)
{
	uint64_t st = 0;
	if (pmu_caps()->global_status)
		pmu_hw_rdmsr(pmu_caps()->global_status, &st);
	return st;
}

/* What an overflow window saw, from the start of its last attempt (a
 * window an SMI fell into runs again: pmu_test_window). */
struct ovf_ctx {
	struct pmu_event *const *evs;
	unsigned n;
	uint32_t preset;
	struct pmu_pmi_stats s0;
	uint64_t path0[2];          /* pmi_count() of each delivery path */
	void (*restart)(void *ctx); /* the caller's own state, reset per attempt, or NULL */
	void *restart_ctx;
};

static void ovf_before(void *arg)
{
	struct ovf_ctx *o = arg;
	unsigned cpu = this_cpu()->cpu;

	o->s0 = my_stats();
	o->path0[PMI_DELIVERY_FIXED] = pmi_count(cpu, PMI_DELIVERY_FIXED);
	o->path0[PMI_DELIVERY_NMI] = pmi_count(cpu, PMI_DELIVERY_NMI);
	if (o->restart)
		o->restart(o->restart_ctx);
}

/* Interrupts still on: wait for a PMI that comes late. */
static void ovf_after(void *arg)
{
	struct ovf_ctx *o = arg;

	for (unsigned i = 0; i < o->n; i++)
		if ((o->preset >> i) & 1)
			wait_ovf(o->evs[i]->hw.idx, o->s0.ovf[o->evs[i]->hw.idx] + 1);
}

/* One window of PMU_TEST_LOOPS iterations: the counters marked in preset
 * start at -OVF_N (the handler then folds the wrap in, no reload: period
 * 0), interrupts are on so the PMI lands inside, late PMIs are waited
 * for. o (zeroed, its restart set or not) gets what the PMIs did. */
static bool ovf_window(struct pmu_event *const *evs, unsigned n, uint32_t preset, struct ovf_ctx *o)
{
	o->evs = evs;
	o->n = n;
	o->preset = preset;
	struct pmu_test_window w = { .irq = true,
				     .preset = preset,
				     .preset_by = OVF_N,
				     .before = ovf_before,
				     .after = ovf_after,
				     .ctx = o };
	return pmu_test_window(evs, n, &w, PMU_TEST_LOOPS, NULL);
}

/* The PMIs of an attempt, for the known deviations. */
static struct dev_obs pmis_seen(const struct pmu_pmi_stats *s0, const struct pmu_pmi_stats *s1,
				uint64_t overflows)
{
	struct dev_obs o = { .kind = DEV_OBS_PMIS, .pc = pmu_this_cpu() };

	o.pmis.overflows = overflows;
	o.pmis.pmis = s1->pmis - s0->pmis;
	o.pmis.spurious = s1->spurious - s0->spurious;
	o.pmis.unclaimed = s1->unclaimed - s0->unclaimed;
	return o;
}

/* The register state that explains a failed PMI check. */
static void diag_pmi_state(const struct pmu_pmi_stats *s)
{
	diag("PMI: path %s, LVT %#x (programmed %#x), last status %#lx, cleared %#lx, now %#lx, pmis %lu spurious %lu unclaimed %lu",
	     pmi_delivery_name(pmi_delivery()), pmi_lvt_read(), pmi_lvt_value(pmi_delivery()), s->last_status,
	     s->last_cleared, status_now(), s->pmis, s->spurious, s->unclaimed);
}

/* A second counter for the same instructions, never overflowing: it
 * counts the PMI handler's instructions too, so the overflowing counter
 * must equal it exactly. -1 when none is free. */
/* The event a GP counter's overflow counts where the PMI, not the event,
 * is what the check is about: instructions, or cycles where CPUID offers
 * no instructions on GP counters; PMU_ARCH_NONE, with CPUID's reason in
 * why, where it offers neither. */
static enum pmu_arch_event gp_ovf_event(char *why, size_t n)
{
	const char *missing = pmu_test_gp_event_missing(PMU_ARCH_INSTRUCTIONS);

	if (!missing)
		return PMU_ARCH_INSTRUCTIONS;
	ksnprintf(why, n, "%s", missing);
	if (!pmu_test_gp_event_missing(PMU_ARCH_CYCLES)) {
		diag("%s: the GP counters overflow on cycles", why);
		return PMU_ARCH_CYCLES;
	}
	ksnprintf(why + strlen(why), n - strlen(why), "; %s", pmu_test_gp_event_missing(PMU_ARCH_CYCLES));
	return PMU_ARCH_NONE;
}

/* gp_ovf_event, or SKIP with CPUID's reason. */
static enum pmu_arch_event gp_ovf_event_or_skip(void)
{
	char why[2 * PMU_REASON_LEN];
	enum pmu_arch_event e = gp_ovf_event(why, sizeof(why));

	if (e == PMU_ARCH_NONE)
		ktest_skip("%s", why);
	return e;
}

static int reference_idx(int idx)
{
	uint32_t gp = pmu_test_free_gp(), fx = pmu_test_free_fixed();

	if (idx != PMU_IDX_FIXED(0) && (fx & 1))
		return PMU_IDX_FIXED(0);
	for (unsigned x = 0; x < PMU_MAX_GP; x++)
		if (((gp >> x) & 1) && (int)x != idx)
			return (int)x;
	return -1;
}

/* Counter idx counts e preset to -OVF_N with its INT/PMI bit: exactly one
 * PMI through the current path, only its status bit, cleared by the
 * handler, the LVT re-armed, and its count across the wrap right. */
static void overflow_one(int idx, enum pmu_arch_event e)
{
	struct pmu_event a, r;
	struct pmu_event *g[2] = { &a, &r };
	struct ovf_ctx oc = { 0 };
	char name[24];
	enum pmi_delivery d = pmi_delivery();
	unsigned cpu = this_cpu()->cpu, n = 1;
	/* Two counters start together only through GLOBAL_CTRL. */
	int ridx = e == PMU_ARCH_INSTRUCTIONS && pmu_caps()->global_ctrl ? reference_idx(idx) : -1;
	struct pmu_pmi_stats s1;
	bool ok = true;

	/* A GP reference needs instructions on a GP counter (CPUID.0AH:EBX). */
	if (ridx >= 0 && !PMU_IDX_IS_FIXED(ridx) && pmu_test_gp_event_missing(PMU_ARCH_INSTRUCTIONS))
		ridx = -1;

	pmu_idx_name(pmu_caps(), idx, name, sizeof(name));
	pmu_test_event(&a, e);
	a.attr.intr = true;
	if (!check(pmu_event_add_idx(&a, idx) == PMU_OK, "%s on %s: %s", a.name, name, a.reason))
		return;
	if (ridx >= 0) {
		pmu_test_event(&r, PMU_ARCH_INSTRUCTIONS);
		r.name = "reference instructions";
		if (check(pmu_event_add_idx(&r, ridx) == PMU_OK, "reference counter %d: %s", ridx, r.reason))
			n = 2;
	}
	if (!ovf_window(g, n, 1u, &oc)) {
		pmu_events_del(g, n);
		return;
	}
	const char *why = pmu_test_unscheduled(&a, pmu_event_count(&a), n == 2 ? &r : NULL,
					       n == 2 ? pmu_event_count(&r) : 0, n);
	if (why) {
		pmu_events_del(g, n);
		ktest_skip("%s", why);
	}
	s1 = my_stats();
	const struct pmu_pmi_stats *s0 = &oc.s0;
	uint64_t bit = pmu_idx_bit(idx), st = status_now();
	/* Only the counters that are ours: one an earlier owner (firmware)
	 * runs may have a status bit of its own. */
	struct pmu_cpu *pc = pmu_this_cpu();
	uint64_t ctr_bits = (uint64_t)(pmu_cpu_caps(pc)->gp_mask & ~pmu_cpu_gp_others(pc)) |
			    (uint64_t)(pmu_cpu_caps(pc)->fixed_mask & ~pmu_cpu_fixed_others(pc))
				    << PERF_GLOBAL_FIXED_SHIFT;
	uint64_t pmis = s1.pmis - s0->pmis, on_path = pmi_count(cpu, d) - oc.path0[d];
	uint64_t off_path = pmi_count(cpu, (enum pmi_delivery) !d) - oc.path0[!d];
	struct dev_obs po = pmis_seen(s0, &s1, s1.ovf[idx] - s0->ovf[idx]);
	ok &= check(s1.ovf[idx] - s0->ovf[idx] == 1, "%s: expected exactly 1 overflow handled, saw %u", name,
		    s1.ovf[idx] - s0->ovf[idx]);
	ok &= check_or_deviation(
		pmis == 1, &po,
		"%s: expected exactly 1 PMI, the handler ran %lu times (%lu found GLOBAL_STATUS empty)", name,
		pmis, po.pmis.spurious);
	ok &= check(on_path == pmis && off_path == 0,
		    "%s: expected every PMI through %s delivery: %s %lu, %s %lu of %lu", name,
		    pmi_delivery_name(d), pmi_delivery_name(d), on_path,
		    pmi_delivery_name((enum pmi_delivery) !d), off_path, pmis);
	ok &= check((s1.last_status & ctr_bits) == bit,
		    "%s: expected GLOBAL_STATUS counter bits %#lx at the PMI, read %#lx", name, bit,
		    s1.last_status);
	ok &= check((s1.last_cleared & ctr_bits) == bit, "%s: expected OVF_CTRL <- %#lx, handler wrote %#lx",
		    name, bit, s1.last_cleared);
	ok &= check(!(st & bit), "%s: GLOBAL_STATUS bit still set after the handler: %#lx", name, st);
	ok &= check((pmi_lvt_read() & LAPIC_LVT_WRITABLE) == pmi_lvt_value(d),
		    "%s: LVT entry %#x after the PMI, expected %#x (unmasked)", name, pmi_lvt_read(),
		    pmi_lvt_value(d));
	uint64_t v = pmu_event_count(&a);
	if (e == PMU_ARCH_INSTRUCTIONS) {
		/* The workload and the bracket's MOVs surely retire; its WRMSRs
		 * may count (pmu/bracket.h), and the handler's instructions
		 * count on top (interrupts on, OS mode): a handler longer than
		 * 20000 is broken. */
		uint64_t lo = pmu_test_workload(PMU_ARCH_INSTRUCTIONS, false, PMU_TEST_LOOPS) +
			      PMU_BRACKET_EXTRA_INSNS;
		uint64_t hi = lo + PMU_BRACKET_WRMSRS + 20000;
		ok &= check(
			v >= lo && v <= hi,
			"%s: expected %lu..%lu instructions across the wrap (workload, bracket, handler), saw %lu",
			name, lo, hi, v);
		if (n == 2) {
			/* Both count the same instructions, the handler's too:
			 * exactly equal, whatever the bracket adds. */
			struct dev_obs xo = { .kind = DEV_OBS_PMI_OVERFLOW, .pc = pmu_this_cpu() };
			xo.pmi_overflow.excess = (int64_t)(v - pmu_event_count(&r));
			ok &= check_or_deviation(
				v == pmu_event_count(&r), &xo,
				"%s: preset counter counted %lu, reference counter %d counted %lu: expected equal",
				name, v, ridx, pmu_event_count(&r));
		}
	} else {
		/* It wrapped after OVF_N events; cycles-like events at most 16
		 * slots of 400 cycles per iteration (pmu_test_check_count's
		 * bounds). Reference cycles tick with the TSC, and a guest the
		 * host does not run (TCG, a busy host) sees more of them per
		 * iteration: that bound times its slowdown (docs/verdicts.md). */
		uint64_t hi = 16 * (400 * PMU_TEST_LOOPS + 100000);
		if (a.attr.arch == PMU_ARCH_REF_CYCLES)
			hi *= timer_slowdown();
		ok &= check(v >= OVF_N && v <= hi, "%s: expected %lu..%lu %s across the wrap, saw %lu", name,
			    OVF_N, hi, a.name, v);
	}
	if (!ok)
		diag_pmi_state(&s1);
	pmu_events_del(g, n);
}

KTEST("pmu.overflow", every_counter_one_pmi, pmu_needs_pmi, KTEST_PER_CPU,
      "each counter preset to -1000 raises one PMI, its status bit only")
{
	uint32_t gp = pmu_test_free_gp(), fx = pmu_test_free_fixed();
	char why[2 * PMU_REASON_LEN];
	enum pmu_arch_event ge = gp_ovf_event(why, sizeof(why));

	diag("PMI delivery: %s", pmi_delivery_name(pmi_delivery()));
	if (ge == PMU_ARCH_NONE && gp) {
		diag("%s: the GP counters %#x are not checked", why, gp);
		gp = 0;
	}
	for (unsigned x = 0; x < PMU_MAX_GP; x++)
		if ((gp >> x) & 1)
			overflow_one((int)x, ge);
	for (unsigned i = 0; i < PMU_MAX_FIXED; i++) {
		enum pmu_arch_event e = pmu_arch_event_of_fixed(i);
		if (!((fx >> i) & 1))
			continue;
		if (e == PMU_ARCH_NONE) {
			diag("IA32_FIXED_CTR%u: its event is not architectural; not checked", i);
			continue;
		}
		/* Fixed 4 and 5 count top-down bad speculation and frontend
		 * bound: nothing bounds them from below over the loop. */
		if (e == PMU_ARCH_TOPDOWN_BAD_SPEC || e == PMU_ARCH_TOPDOWN_FE_BOUND) {
			diag("IA32_FIXED_CTR%u (%s): the loop need not reach %lu of them; not checked", i,
			     pmu_arch_events[e].name, OVF_N);
			continue;
		}
		overflow_one(PMU_IDX_FIXED(i), e);
	}
}

/* INT (GP) / PMI (fixed) clear: the counter wraps, its status bit sets,
 * no PMI comes; OVF_CTRL clears the bit. The window runs with interrupts
 * off for an exact count; a wrongly raised fixed-vector PMI is taken when
 * they come back on, and an NMI one at once: both are counted. */
KTEST("pmu.overflow", no_pmi_without_int, pmu_needs_pmi, KTEST_PER_CPU,
      "without INT/PMI the status bit sets and no PMI arrives")
{
	struct pmu_event a, f;
	struct pmu_event *g[2];
	uint32_t gp = pmu_test_free_gp(), fx = pmu_test_free_fixed();
	unsigned x = pmu_test_first_absent(~gp, PMU_MAX_GP), n = 0;
	struct pmu_pmi_stats s0 = my_stats(), s1;
	uint64_t bits = 0;
	const char *why_not = pmu_test_gp_event_missing(PMU_ARCH_INSTRUCTIONS);

	if (why_not && x < PMU_MAX_GP) {
		diag("%s: no GP counter checked", why_not);
		x = PMU_MAX_GP;
	}
	if (x < PMU_MAX_GP) {
		pmu_test_event(&a, PMU_ARCH_INSTRUCTIONS);
		a.attr.period = OVF_N; /* preset only: INT stays clear */
		if (check(pmu_event_add_idx(&a, (int)x) == PMU_OK, "IA32_PMC%u: %s", x, a.reason))
			g[n++] = &a;
	}
	if (fx & 1) {
		pmu_test_event(&f, PMU_ARCH_INSTRUCTIONS);
		f.attr.period = OVF_N;
		if (check(pmu_event_add_idx(&f, PMU_IDX_FIXED(0)) == PMU_OK, "IA32_FIXED_CTR0: %s", f.reason))
			g[n++] = &f;
	}
	if (n == 0)
		ktest_skip(
			"no free GP counter that counts instructions and no free IA32_FIXED_CTR0 (GP %#x, fixed %#x)",
			gp, fx);
	bits = pmu_events_global_mask(g, n);
	struct pmu_test_quiet q = { .bits = bits };
	struct pmu_test_window w = pmu_test_quiet_window(&q);
	struct pmu_test_counts *m = pmu_test_counts_here();
	if (pmu_test_measure(g, n, &w, m)) {
		udelay(1000); /* interrupts on again: a pending PMI would run now */
		s1 = my_stats();
		check(s1.pmis == s0.pmis,
		      "expected no PMI with INT/PMI clear in %u windows, the handler ran %lu times (last status %#lx)",
		      2 * PMU_TEST_TRIALS, s1.pmis - s0.pmis, s1.last_status);
		struct dev_obs o = { .kind = DEV_OBS_QUIET_OVERFLOW, .pc = pmu_this_cpu() };
		o.quiet_overflow.count_exact = true;
		for (unsigned i = 0; i < n; i++) {
			char what[64];
			ksnprintf(what, sizeof(what), "%s across the wrap", g[i]->name);
			o.quiet_overflow.count_exact &= pmu_test_check_exact(
				o.pc, what, PMU_ARCH_INSTRUCTIONS, false, m->min[i]);
		}
		if (pmu_caps()->global_status) {
			o.quiet_overflow.status_bit = (q.status & bits) == bits;
			check_or_deviation(o.quiet_overflow.status_bit, &o,
					   "expected GLOBAL_STATUS bits %#lx set after the wrap, read %#lx",
					   bits, q.status);
		} else {
			diag("no global status register: the wrap shows in the exact count only");
		}
		if (pmu_caps()->global_ovf) {
			pmu_hw_wrmsr(pmu_caps()->global_ovf, bits);
			uint64_t st = status_now();
			check(!(st & bits), "OVF_CTRL <- %#lx: expected those bits clear, read %#lx", bits,
			      st);
		}
		diag("LVT %#x, status bits %#lx", pmi_lvt_read(), bits);
	}
	pmu_events_del(g, n);
}

/* The same overflow through both delivery paths, switched here. */
KTEST("pmu.overflow", fixed_and_nmi_delivery, pmu_needs_pmi, KTEST_PER_CPU,
      "one overflow each as a fixed-vector PMI and as an NMI")
{
	enum pmi_delivery was = pmi_delivery();
	unsigned x = pmu_test_first_absent(~pmu_test_free_gp(), PMU_MAX_GP);
	static const enum pmi_delivery modes[] = { PMI_DELIVERY_FIXED, PMI_DELIVERY_NMI };

	if (x >= PMU_MAX_GP)
		ktest_skip("no free GP counter (mask %#x)", pmu_test_free_gp());
	enum pmu_arch_event e = gp_ovf_event_or_skip();
	for (unsigned m = 0; m < 2; m++) {
		if (!check(pmi_set_delivery(modes[m]) == 0, "%s delivery: LVT reads %#x after writing %#x",
			   pmi_delivery_name(modes[m]), pmi_lvt_read(), pmi_lvt_value(modes[m])))
			continue;
		overflow_one((int)x, e);
		struct pmu_pmi_stats s = my_stats();
		check(!!(s.last_from & PMU_PMI_FROM_NMI) == (modes[m] == PMI_DELIVERY_NMI),
		      "%s delivery: the handler saw origin %#x", pmi_delivery_name(modes[m]), s.last_from);
	}
	pmi_set_delivery(was);
}

struct frozen_view {
	unsigned calls;
	uint64_t status, ctrl;
	uint64_t first[PMU_IDX_NR], second[PMU_IDX_NR];
	struct pmu_event *const *evs;
	unsigned n;
};

/* In the handler, before the status is cleared: with FREEZE_PERFMON_ON_PMI
 * every counter must hold still across more work. */
static void observe_frozen(void *ctx, uint64_t status)
{
	struct frozen_view *v = ctx;

	if (v->calls++)
		return;
	v->status = status;
	pmu_hw_rdmsr(MSR_IA32_PERF_GLOBAL_CTRL, &v->ctrl);
	for (unsigned i = 0; i < v->n; i++)
		pmu_hw_rdmsr(v->evs[i]->hw.event_base, &v->first[i]);
	pmu_workload_loop(10000);
	for (unsigned i = 0; i < v->n; i++)
		pmu_hw_rdmsr(v->evs[i]->hw.event_base, &v->second[i]);
}

/* A window run again (an SMI in it) starts with nothing seen. */
static void forget_frozen(void *ctx)
{
	struct frozen_view *v = ctx;
	v->calls = 0;
	v->status = 0;
}

/* Intel v2 and later: IA32_DEBUGCTL.FREEZE_PERFMON_ON_PMI. */
static const char *needs_pmi_freeze(void)
{
	const char *why = pmu_needs_pmi();

	if (why)
		return why;
	if (pmu_caps()->vendor != PMU_VENDOR_INTEL || pmu_caps()->version < 2)
		return ktest_reason("%s PMU v%u: FREEZE_PERFMON_ON_PMI is Intel's, from v2",
				    pmu_caps()->vendor == PMU_VENDOR_AMD ? "AMD" : "architectural",
				    pmu_caps()->version);
	return NULL;
}

/* From v4 the PMI sets CTR_FRZ (bit 59) in GLOBAL_STATUS and leaves
 * GLOBAL_CTRL; before v4 it clears GLOBAL_CTRL's enables (SDM vol. 3B,
 * "IA32_DEBUGCTL MSR" and "Architectural Performance Monitoring Version
 * 4", legacy freeze). Either way every counter holds still in the
 * handler, and counts again once the handler lifted the freeze. */
KTEST("pmu.overflow", freeze_on_pmi, needs_pmi_freeze, KTEST_PER_CPU,
      "FREEZE_PERFMON_ON_PMI stops every counter until the status clears")
{
	struct pmu_event a, c, f;
	struct pmu_event *g[3];
	struct frozen_view v = { 0 };
	unsigned x = pmu_test_first_absent(~pmu_test_free_gp(), PMU_MAX_GP), n = 0;
	uint32_t fx = pmu_test_free_fixed();
	int err;

	if (x >= PMU_MAX_GP)
		ktest_skip("no free GP counter (mask %#x)", pmu_test_free_gp());
	pmu_test_need_gp_event(PMU_ARCH_INSTRUCTIONS);
	if ((err = pmu_pmi_set_freeze(true)) != PMU_OK) {
		if (pmu_caps()->hypervisor)
			ktest_skip(
				"IA32_DEBUGCTL refused FREEZE_PERFMON_ON_PMI (error %d) under a hypervisor",
				err);
		ktest_fail("IA32_DEBUGCTL refused FREEZE_PERFMON_ON_PMI (error %d) on a v%u PMU", err,
			   pmu_caps()->version);
	}
	pmu_test_event(&a, PMU_ARCH_INSTRUCTIONS);
	a.attr.intr = true;
	if (check(pmu_event_add_idx(&a, (int)x) == PMU_OK, "IA32_PMC%u: %s", x, a.reason))
		g[n++] = &a;
	for (unsigned i = 0; i < 2; i++) {
		struct pmu_event *e = i ? &f : &c;
		if (!((fx >> (i ? 0 : 1)) & 1))
			continue;
		pmu_test_event(e, i ? PMU_ARCH_INSTRUCTIONS : PMU_ARCH_CYCLES);
		if (check(pmu_event_add_idx(e, PMU_IDX_FIXED(i ? 0 : 1)) == PMU_OK, "%s: %s", e->name,
			  e->reason))
			g[n++] = e;
	}
	v.evs = g;
	v.n = n;
	pmu_pmi_set_observer(observe_frozen, &v);
	struct ovf_ctx oc = { .restart = forget_frozen, .restart_ctx = &v };
	if (n && g[0] == &a && ovf_window(g, n, 1u, &oc)) {
		uint64_t st = status_now();
		check(v.calls == 1, "expected the handler once, it ran %u times", v.calls);
		if (pmu_caps()->version >= 4)
			check((v.status >> PERF_GLOBAL_STATUS_CTR_FRZ_BIT) & 1,
			      "expected CTR_FRZ (bit 59) in GLOBAL_STATUS at the PMI, read %#lx", v.status);
		else
			check(v.calls == 0 || v.ctrl == 0,
			      "v%u: expected the PMI to clear IA32_PERF_GLOBAL_CTRL (legacy freeze), it reads %#lx in the handler",
			      pmu_caps()->version, v.ctrl);
		for (unsigned i = 0; i < n && v.calls; i++) {
			check(v.first[i] == v.second[i],
			      "%s kept counting while frozen: %#lx then %#lx across 10000 loop iterations",
			      g[i]->name, v.first[i], v.second[i]);
			/* Unfrozen by the handler (v4: its status clear): the rest
			 * of the window counted. Before v4 only a write of
			 * GLOBAL_CTRL restarts them, which the bracket's window
			 * leaves to its own closing write. */
			if (pmu_caps()->version < 4)
				continue;
			uint64_t start = g[i] == &a ? (0 - OVF_N) & pmu_width_mask(a.hw.width) : 0;
			uint64_t at_pmi = pmu_delta(start, v.first[i], g[i]->hw.width);
			check(pmu_event_count(g[i]) > at_pmi + PMU_TEST_LOOPS / 2,
			      "%s: %lu at the PMI, %lu at the end: expected it to count the rest of the window after unfreezing",
			      g[i]->name, at_pmi, pmu_event_count(g[i]));
		}
		if (pmu_caps()->version >= 4)
			check(!((st >> PERF_GLOBAL_STATUS_CTR_FRZ_BIT) & 1),
			      "CTR_FRZ still set after the handler: %#lx", st);
	}
	pmu_pmi_set_observer(NULL, NULL);
	check(pmu_pmi_set_freeze(false) == PMU_OK, "clearing FREEZE_PERFMON_ON_PMI failed");
	pmu_events_del(g, n);
}

/* STATUS_SET raises a counter's status bit with no overflow; the bit of
 * a counter no event holds is not the handler's to clear; OVF_CTRL is. */
KTEST("pmu.overflow", status_set, needs_status_set, KTEST_PER_CPU,
      "GLOBAL_STATUS_SET raises a status bit; OVF_CTRL clears it")
{
	unsigned x = pmu_test_first_absent(~pmu_test_free_gp(), PMU_MAX_GP);
	uint64_t bit, st;
	struct pmu_pmi_stats s0 = my_stats(), s1;

	if (x >= PMU_MAX_GP)
		ktest_skip("no free GP counter (mask %#x)", pmu_test_free_gp());
	bit = pmu_idx_bit((int)x);
	pmu_hw_wrmsr(pmu_caps()->global_ovf, bit);
	check(pmu_pmi_status_set(bit) == PMU_OK, "status-set MSR %#x <- %#lx faulted",
	      pmu_caps()->global_status_set, bit);
	udelay(1000);
	st = status_now();
	s1 = my_stats();
	check(st & bit, "STATUS_SET <- %#lx: expected the bit in GLOBAL_STATUS, read %#lx", bit, st);
	diag("PMIs while the bit was set: %lu (unclaimed %lu)", s1.pmis - s0.pmis,
	     s1.unclaimed - s0.unclaimed);
	pmu_hw_wrmsr(pmu_caps()->global_ovf, bit);
	st = status_now();
	check(!(st & bit), "OVF_CTRL <- %#lx: expected the bit clear, read %#lx", bit, st);
}

static void user_payload(void *arg)
{
	pmu_ovf_loop((uint64_t)(uintptr_t)arg);
}

/* A USR-only counter overflows while ring 3 runs: the PMI comes from CPL 3
 * with a RIP inside the payload loop, and the counts of two payload
 * lengths differ by exactly 3 per iteration (the handler, at CPL 0, is
 * never counted). Each length runs RING3_OVF_TRIALS times and the least
 * count stands: an interrupt's IRET may count a user-mode instruction
 * (Weaver et al., ISPASS 2013), a VM exit a guest-context VMRUN on AMD. */
#define RING3_OVF_TRIALS 3

KTEST("pmu.overflow", usr_only_in_ring3, pmu_needs_pmi, KTEST_PER_CPU,
      "a USR-only overflow in ring 3: the PMI reports CPL 3 and its RIP")
{
	static const uint64_t iters[2] = { 2000, 12000 };
	unsigned x = pmu_test_first_absent(~pmu_test_free_gp(), PMU_MAX_GP);
	uint64_t count[2] = { ~0ull, ~0ull };

	if (x >= PMU_MAX_GP)
		ktest_skip("no free GP counter (mask %#x)", pmu_test_free_gp());
	pmu_test_need_gp_event(PMU_ARCH_INSTRUCTIONS);
	for (unsigned k = 0; k < 2; k++)
		for (unsigned t = 0; t < RING3_OVF_TRIALS; t++) {
			struct pmu_event u;
			struct pmu_pmi_stats s0 = my_stats(), s1;

			pmu_test_event(&u, PMU_ARCH_INSTRUCTIONS);
			u.attr.os = false;
			u.attr.intr = true;
			u.name = "instructions:u";
			if (!check(pmu_event_add_idx(&u, (int)x) == PMU_OK, "IA32_PMC%u: %s", x, u.reason))
				return;
			if (!check(pmu_event_enable(&u) == PMU_OK, "enable: %s", u.reason) ||
			    !check(pmu_event_write_counter(&u, (0 - OVF_N) & pmu_width_mask(u.hw.width)) ==
					   PMU_OK,
				   "preset: %s", u.reason)) {
				pmu_event_del(&u);
				return;
			}
			int vec = usermode_call(user_payload, (void *)(uintptr_t)iters[k]);
			wait_ovf((int)x, s0.ovf[x] + 1);
			pmu_event_disable(&u);
			s1 = my_stats();
			if (pmu_event_count(&u) - OVF_N < count[k])
				count[k] = pmu_event_count(&u) - OVF_N;
			struct dev_obs po = pmis_seen(&s0, &s1, s1.ovf[x] - s0.ovf[x]);
			check(vec == -1, "ring-3 payload: expected a normal return, saw vector %d", vec);
			check(s1.ovf[x] - s0.ovf[x] == 1,
			      "%lu ring-3 iterations: expected 1 overflow, saw %u", iters[k],
			      s1.ovf[x] - s0.ovf[x]);
			check_or_deviation(
				s1.pmis - s0.pmis == 1, &po,
				"%lu ring-3 iterations: expected 1 PMI, saw %lu (%lu with GLOBAL_STATUS empty)",
				iters[k], po.pmis.pmis, po.pmis.spurious);
			check(s1.last_from & PMU_PMI_FROM_USER,
			      "PMI origin %#x: expected CPL 3 (the counter counts only there)", s1.last_from);
			check(s1.last_rip >= (uint64_t)pmu_ovf_loop &&
				      s1.last_rip <= (uint64_t)pmu_ovf_loop_end,
			      "PMI RIP %#lx outside the ring-3 loop [%p, %p]", s1.last_rip,
			      (void *)pmu_ovf_loop, (const void *)pmu_ovf_loop_end);
			pmu_event_del(&u);
		}
	check(count[1] - count[0] == PMU_LOOP_INSNS_PER_ITER * (iters[1] - iters[0]),
	      "USR-only counts after the wrap (least of %u): %lu and %lu, expected to differ by exactly %lu",
	      RING3_OVF_TRIALS, count[0], count[1], PMU_LOOP_INSNS_PER_ITER * (iters[1] - iters[0]));
	diag("USR-only instructions after -%lu: %lu (%lu iterations), %lu (%lu iterations), least of %u",
	     OVF_N, count[0], iters[0], count[1], iters[1], RING3_OVF_TRIALS);
}

/* --- Isolation: CPU A's counters and PMIs do not touch CPU B. --- */

struct iso_snap {
	uint64_t v[2 * PMU_MAX_GP + PMU_MAX_FIXED + 3];
	uint32_t msr[2 * PMU_MAX_GP + PMU_MAX_FIXED + 3];
	unsigned n;
	uint64_t pmis, overflows;
};

/* Registers of counters nobody uses on this CPU, and the shared controls. */
static void iso_snapshot(void *arg)
{
	struct iso_snap *s = arg;
	struct pmu_cpu *pc = pmu_cpu_ensure();
	const struct pmu_caps *c = pmu_cpu_caps(pc);
	struct pmu_pmi_stats st;

	s->n = 0;
	for (unsigned x = 0; x < PMU_MAX_GP; x++)
		if (pmu_has_gp(c, x) && !((pmu_cpu_gp_others(pc) >> x) & 1)) {
			s->msr[s->n++] = pmu_ctr_msr(c, x);
			s->msr[s->n++] = pmu_evtsel_msr(c, x);
		}
	for (unsigned i = 0; i < PMU_MAX_FIXED; i++)
		if (pmu_has_fixed(c, i) && !((pmu_cpu_fixed_others(pc) >> i) & 1))
			s->msr[s->n++] = pmu_fixed_msr(c, i);
	/* The shared controls, where this PMU has them. */
	if (c->fixed_ctrl)
		s->msr[s->n++] = c->fixed_ctrl;
	if (c->global_ctrl)
		s->msr[s->n++] = c->global_ctrl;
	if (c->global_status)
		s->msr[s->n++] = c->global_status;
	for (unsigned k = 0; k < s->n; k++)
		pmu_hw_rdmsr(s->msr[k], &s->v[k]);
	/* Status bits of counters an earlier owner runs may come and go. */
	if (c->global_status)
		s->v[s->n - 1] &= ~((uint64_t)pmu_cpu_gp_others(pc) | (uint64_t)pmu_cpu_fixed_others(pc)
									      << PERF_GLOBAL_FIXED_SHIFT);
	pmu_pmi_get_stats(this_cpu()->cpu, &st);
	s->pmis = st.pmis;
	s->overflows = st.overflows;
}

/* Values in this CPU's free counters that no other CPU's counters hold:
 * two CPUs that ran the same exact window hold the same counts, and a
 * count copied from one to the other would go unseen. Bit 31 clear, so
 * that a legacy IA32_PMCx write stores it unchanged. */
static void iso_mark(void *arg)
{
	struct pmu_cpu *pc = pmu_cpu_ensure();
	const struct pmu_caps *c = pmu_cpu_caps(pc);
	uint32_t mark = 0x2a5a0000u | (this_cpu()->cpu & 0xffu) << 8;

	(void)arg;
	for (unsigned x = 0; x < PMU_MAX_GP; x++)
		if (pmu_has_gp(c, x) && !((pmu_cpu_gp_others(pc) >> x) & 1))
			pmu_hw_wrmsr(pmu_ctr_write_msr(c, x), mark | x);
	for (unsigned i = 0; i < PMU_MAX_FIXED; i++)
		if (pmu_has_fixed(c, i) && !((pmu_cpu_fixed_others(pc) >> i) & 1))
			pmu_hw_wrmsr(pmu_fixed_msr(c, i), mark | 0x80u | i);
}

struct iso_job {
	int err;
	char why[PMU_REASON_LEN];
	struct pmu_pmi_stats s0, s1;
};

/* On CPU A: one GP counter with INT preset to -OVF_N overflows once.
 * No check() here (the test runs on the BSP): results travel back. */
static void iso_overflow(void *arg)
{
	struct iso_job *j = arg;
	struct pmu_event a;
	struct pmu_event *g[] = { &a };
	struct pmu_bracket_regs br;
	struct pmu_pmi_stats *s0 = &j->s0;
	unsigned x = pmu_test_first_absent(~pmu_test_free_gp(), PMU_MAX_GP);

	if (!pmi_ready())
		pmi_init_cpu();
	pmu_pmi_get_stats(this_cpu()->cpu, s0);
	j->s1 = *s0;
	if (x >= PMU_MAX_GP) {
		j->err = PMU_E_BUSY;
		ksnprintf(j->why, sizeof(j->why), "no free GP counter (mask %#x)", pmu_test_free_gp());
		return;
	}
	pmu_test_event(&a, PMU_ARCH_INSTRUCTIONS);
	a.attr.intr = true;
	if ((j->err = pmu_event_add_idx(&a, (int)x)) != PMU_OK) {
		ksnprintf(j->why, sizeof(j->why), "%s", a.reason);
		return;
	}
	if ((j->err = pmu_events_arm(g, 1, &br)) != PMU_OK ||
	    (j->err = pmu_event_write_counter(&a, (0 - OVF_N) & pmu_width_mask(a.hw.width))) != PMU_OK) {
		ksnprintf(j->why, sizeof(j->why), "%s", a.reason);
		pmu_event_del(&a);
		return;
	}
	pmu_bracket_loop(&br, PMU_TEST_LOOPS);
	wait_ovf(a.hw.idx, s0->ovf[a.hw.idx] + 1);
	pmu_events_disarm(g, 1);
	pmu_event_del(&a);
	pmu_pmi_get_stats(this_cpu()->cpu, &j->s1);
}

static const char *needs_two_cpus(void)
{
	const char *why = pmu_needs_pmi();

	if (why)
		return why;
	if (smp_num_cpus() < 2)
		return ktest_reason("needs 2 CPUs, %u online", smp_num_cpus());
	return NULL;
}

/* on_cpu, or a plain call on the test's own CPU (a call slot does not
 * serve itself while it runs the test). */
static void run_on(unsigned cpu, void (*fn)(void *), void *arg)
{
	if (cpu == this_cpu()->cpu)
		fn(arg);
	else
		on_cpu(cpu, fn, arg);
}

static void iso_init(void *arg)
{
	(void)arg;
	pmu_cpu_ensure();
	if (!pmi_ready())
		pmi_init_cpu();
}

KTEST("pmu.overflow", isolation_between_cpus, needs_two_cpus, 0,
      "one CPU's counters and overflows change nothing on another")
{
	unsigned pairs[2][2] = { { 1, 0 }, { 0, 1 } };

	run_on(1, iso_init, NULL);
	if (!pmu_cpu_counts(pmu_cpu_of(1)))
		ktest_skip("cpu 1: %s", pmu_cpu_reason(pmu_cpu_of(1)));
	pmu_test_need_gp_event(PMU_ARCH_INSTRUCTIONS);
	for (unsigned p = 0; p < 2; p++) {
		unsigned a = pairs[p][0], b = pairs[p][1];
		struct iso_snap before, after;
		struct iso_job job = { 0 };

		run_on(b, iso_mark, NULL);
		run_on(b, iso_snapshot, &before);
		run_on(a, iso_overflow, &job);
		run_on(b, iso_snapshot, &after);
		if (!check(job.err == PMU_OK, "cpu %u: overflow set-up failed (%d): %s", a, job.err, job.why))
			continue;
		struct dev_obs po = pmis_seen(&job.s0, &job.s1, job.s1.overflows - job.s0.overflows);
		po.pc = pmu_cpu_of(a);
		check_or_deviation(
			po.pmis.pmis == 1, &po,
			"cpu %u: expected 1 PMI from its own overflow, saw %lu (%lu with GLOBAL_STATUS empty)",
			a, po.pmis.pmis, po.pmis.spurious);
		check(after.pmis == before.pmis && after.overflows == before.overflows,
		      "cpu %u took PMIs (%lu -> %lu) when cpu %u's counter overflowed", b, before.pmis,
		      after.pmis, a);
		for (unsigned k = 0; k < before.n && k < after.n; k++)
			check(before.v[k] == after.v[k],
			      "cpu %u: MSR %#x changed from %#lx to %#lx while cpu %u worked", b,
			      before.msr[k], before.v[k], after.v[k], a);
	}
}

/* --- The LVT entry at PMI delivery (Intel). --- */

struct lvt_view {
	unsigned calls;
	uint32_t lvt;
};

/* In the handler, before it re-arms: the entry as delivery left it. */
static void observe_lvt(void *ctx, uint64_t status)
{
	struct lvt_view *v = ctx;

	(void)status;
	if (!v->calls++)
		v->lvt = pmi_lvt_read();
}

static const char *needs_pmi_intel_apic(void)
{
	const char *why = pmu_needs_pmi();

	if (why)
		return why;
	/* AMD's APIC leaves the entry unmasked: Linux's PerfMonV2 handler
	 * does not unmask it, and KVM stopped masking it for AMD guests (Linux
	 * 49ff3b4aec51 "KVM: x86/pmu: Do not mask LVTPC when handling a PMI on
	 * AMD platforms"). */
	if (pmu_caps()->vendor != PMU_VENDOR_INTEL)
		return "the LVT entry is masked on PMI delivery by Intel's APIC only (AMD's leaves it unmasked: Linux 49ff3b4aec51)";
	return NULL;
}

/* The processor sets the LVT performance-counter entry's mask bit when it
 * delivers a PMI (SDM vol. 3A, "Local Vector Table"; vol. 3B, "Generating
 * an Interrupt on Overflow"), so no second PMI comes before the handler
 * re-arms it. Read in the handler, before the re-arm, through each
 * delivery path; after the handler the entry must be unmasked again. */
KTEST("pmu.overflow", lvt_masked_at_pmi, needs_pmi_intel_apic, KTEST_PER_CPU,
      "the LVT entry is masked when the PMI handler starts (Intel)")
{
	enum pmi_delivery was = pmi_delivery();
	unsigned x = pmu_test_first_absent(~pmu_test_free_gp(), PMU_MAX_GP);
	static const enum pmi_delivery modes[] = { PMI_DELIVERY_FIXED, PMI_DELIVERY_NMI };

	if (x >= PMU_MAX_GP)
		ktest_skip("no free GP counter (mask %#x)", pmu_test_free_gp());
	enum pmu_arch_event e = gp_ovf_event_or_skip();
	for (unsigned m = 0; m < 2; m++) {
		struct lvt_view v = { 0 };
		struct pmu_event a;
		struct pmu_event *g[] = { &a };
		const char *path = pmi_delivery_name(modes[m]);

		if (!check(pmi_set_delivery(modes[m]) == 0, "%s delivery: LVT reads %#x after writing %#x",
			   path, pmi_lvt_read(), pmi_lvt_value(modes[m])))
			continue;
		pmu_test_event(&a, e);
		a.attr.intr = true;
		if (!check(pmu_event_add_idx(&a, (int)x) == PMU_OK, "IA32_PMC%u: %s", x, a.reason))
			continue;
		struct ovf_ctx oc = { 0 };
		pmu_pmi_set_observer(observe_lvt, &v);
		bool ran = ovf_window(g, 1, 1u, &oc);
		pmu_pmi_set_observer(NULL, NULL);
		pmu_event_del(&a);
		if (!ran)
			continue;
		if (!check(v.calls >= 1, "%s delivery: no PMI reached the handler (LVT %#x)", path,
			   pmi_lvt_read()))
			continue;
		struct dev_obs o = { .kind = DEV_OBS_LVT_AT_PMI, .pc = pmu_this_cpu() };
		o.lvt_at_pmi.lvt = v.lvt;
		o.lvt_at_pmi.programmed = pmi_lvt_value(modes[m]);
		check_or_deviation(
			v.lvt & LAPIC_LVT_MASKED, &o,
			"%s delivery: expected the LVT entry masked (bit 16) when the handler starts, read %#x (programmed %#x)",
			path, v.lvt, pmi_lvt_value(modes[m]));
		check((pmi_lvt_read() & LAPIC_LVT_WRITABLE) == pmi_lvt_value(modes[m]),
		      "%s delivery: expected the handler to re-arm the entry to %#x, read %#x", path,
		      pmi_lvt_value(modes[m]), pmi_lvt_read());
		diag("%s delivery: LVT %#x at the handler's start, %#x after it", path, v.lvt,
		     pmi_lvt_read());
	}
	pmi_set_delivery(was);
}

/* --- The PMI handler's length, counted by the PMU itself. --- */

/* One window of PMU_TEST_LOOPS iterations with interrupts on: counter r
 * counts instructions, s counts them too with a period, raising a PMI
 * every period events when pmis is true (else only status bits). The
 * instructions r counted, and the overflows the handler took for s. */
static bool handler_window(int ridx, int sidx, uint64_t period, bool pmis, uint64_t *count, uint32_t *ovf)
{
	struct pmu_event r, s;
	struct pmu_event *g[] = { &r, &s };
	struct ovf_ctx oc = { 0 };
	struct pmu_pmi_stats s1;
	bool ok = false;

	pmu_test_event(&r, PMU_ARCH_INSTRUCTIONS);
	r.name = "reference instructions";
	pmu_test_event(&s, PMU_ARCH_INSTRUCTIONS);
	s.attr.period = period;
	s.attr.intr = pmis;
	if (!check(pmu_event_add_idx(&r, ridx) == PMU_OK, "reference counter %d: %s", ridx, r.reason))
		return false;
	if (check(pmu_event_add_idx(&s, sidx) == PMU_OK, "sampling counter %d: %s", sidx, s.reason)) {
		ok = ovf_window(g, 2, 0, &oc);
		pmu_event_del(&s);
	}
	s1 = my_stats();
	*count = pmu_event_count(&r);
	/* From the last attempt's start (a window an SMI spoiled runs again). */
	*ovf = s1.ovf[sidx] - oc.s0.ovf[sidx];
	pmu_event_del(&r);
	/* Without PMIs the wraps left s's status bit set. */
	pmu_hw_wrmsr(pmu_caps()->global_ovf, pmu_idx_bit(sidx));
	return ok;
}

/* A window without PMIs and two with k and about 2k PMIs, the same
 * instructions otherwise: a reference counter sees each PMI's handler
 * (entry, pmu_pmi_handle, re-arm, EOI, IRET) as extra instructions, the
 * same number for every PMI but for the odd data-dependent one (a new
 * worst cost stored by pmi_account), so the two per-PMI figures agree
 * within one. The sampling counter's period leaves half a period after
 * the last overflow, so even a PMI with skid lands inside the window.
 * The per-PMI figure is `make bench`'s handler length. */
/* PMIs, and GLOBAL_CTRL: the reference and the sampling counter start
 * together only through it. */
static const char *needs_pmi_and_global_ctrl(void)
{
	const char *why = pmu_needs_pmi();

	return why ? why : pmu_needs_global_ctrl();
}

KTEST("pmu.overflow", handler_length, needs_pmi_and_global_ctrl, KTEST_PER_CPU,
      "k PMIs add k times the same instructions to a reference counter")
{
	enum pmi_delivery was = pmi_delivery();
	uint32_t gp = pmu_test_free_gp();
	unsigned x = pmu_test_first_absent(~gp, PMU_MAX_GP);
	int ridx = x < PMU_MAX_GP ? reference_idx((int)x) : -1;
	static const enum pmi_delivery modes[] = { PMI_DELIVERY_FIXED, PMI_DELIVERY_NMI };
	static const uint64_t pmis_wanted[2] = { 4, 8 };

	if (x >= PMU_MAX_GP || ridx < 0)
		ktest_skip("needs a free GP counter and a second free counter (GP %#x, fixed %#x)", gp,
			   pmu_test_free_fixed());
	pmu_test_need_gp_event(PMU_ARCH_INSTRUCTIONS);
	for (unsigned m = 0; m < 2; m++) {
		const char *path = pmi_delivery_name(modes[m]);
		uint64_t base, count[2];
		uint32_t ovf, k[2];

		if (!check(pmi_set_delivery(modes[m]) == 0, "%s delivery: LVT reads %#x after writing %#x",
			   path, pmi_lvt_read(), pmi_lvt_value(modes[m])))
			continue;
		/* The window's own count first, without PMIs; then periods of
		 * window / (k + 1/2): k overflows, half a period of slack. */
		if (!handler_window(ridx, (int)x, 0, false, &base, &ovf))
			continue;
		check(ovf == 0, "%s delivery: %u overflows handled with INT clear", path, ovf);
		bool ok = true;
		for (unsigned j = 0; j < 2 && ok; j++)
			ok = handler_window(ridx, (int)x, 2 * base / (2 * pmis_wanted[j] + 1), true,
					    &count[j], &k[j]);
		if (!ok)
			continue;
		if (!check(k[0] >= 1 && k[1] > k[0] && count[0] > base && count[1] > count[0],
			   "%s delivery: expected more PMIs and instructions in the second window: %u PMIs %lu, %u PMIs %lu, none %lu",
			   path, k[0], count[0], k[1], count[1], base))
			continue;
		/* Per PMI within one instruction of each other:
		 * |(count[0] - base) / k[0] - (count[1] - base) / k[1]| <= 1. */
		int64_t a = (int64_t)((count[0] - base) * k[1]), b = (int64_t)((count[1] - base) * k[0]);
		check((a > b ? a - b : b - a) <= (int64_t)k[0] * k[1],
		      "%s delivery: %u PMIs added %lu instructions, %u PMIs %lu: expected the same number per PMI within 1",
		      path, k[0], count[0] - base, k[1], count[1] - base);
		diag("PMI handler length: %lu instructions per PMI (%s delivery; %u PMIs added %lu, %u added %lu, to a window of %lu)",
		     (count[1] - base + k[1] / 2) / k[1], path, k[0], count[0] - base, k[1], count[1] - base,
		     base);
	}
	pmi_set_delivery(was);
}

/* A reference-cycles overflow raises its PMI while the CPU runs code that
 * touches no PMU register. The processor signals the PMI when a counter
 * with its INT (GP) or PMI (fixed) bit set overflows (SDM vol. 3B,
 * "Performance Monitoring Interrupt"/"Generating an Interrupt on
 * Overflow"; vol. 3A, the LVT performance monitoring counters register),
 * not when software next reads or writes the PMU. Reference cycles tick
 * with time rather than with instructions: a VMM or an emulator that
 * counts them by time has to raise the PMI by time too. */
/* Ticks before the overflow: TSC ticks on FIXED_CTR2 (about 30 us at 3
 * GHz), bus or crystal clock ticks on a GP counter (at most a few hundred
 * TSC ticks each on the parts known). */
#define REF_PMI_TICKS_FIXED ((uint64_t)100000)
#define REF_PMI_TICKS_GP ((uint64_t)1000)
/* How long to wait: far beyond either, so that only a PMI that never
 * comes while the code runs (or a host that did not run this vCPU for
 * that long) fails. */
#define REF_PMI_WAIT_US ((uint64_t)10 * 1000 * 1000)

/* FIXED_CTR2 when it is free, else a free GP counter for 3CH/01H; -1. */
static int ref_counter(void)
{
	uint32_t fx = pmu_test_free_fixed(), gp = pmu_test_free_gp();

	for (unsigned i = 0; i < PMU_MAX_FIXED; i++)
		if (((fx >> i) & 1) && pmu_arch_event_of_fixed(i) == PMU_ARCH_REF_CYCLES)
			return PMU_IDX_FIXED(i);
	if (pmu_test_gp_event_missing(PMU_ARCH_REF_CYCLES))
		return -1;
	for (unsigned x = 0; x < PMU_MAX_GP; x++)
		if ((gp >> x) & 1)
			return (int)x;
	return -1;
}

static uint32_t ref_ovf_of(unsigned cpu, int idx)
{
	struct pmu_pmi_stats s;

	pmu_pmi_get_stats(cpu, &s);
	return s.ovf[idx];
}

KTEST("pmu.overflow", ref_cycles_pmi_while_running, pmu_needs_pmi, KTEST_PER_CPU,
      "a reference-cycles overflow raises its PMI while no PMU register is touched")
{
	unsigned cpu = this_cpu()->cpu;
	int idx = ref_counter();
	struct pmu_event a;
	struct pmu_event *g[] = { &a };
	struct pmu_bracket_regs br;
	char name[24];

	if (idx < 0)
		ktest_skip(
			"no free counter of reference cycles (FIXED_CTR2, or 3CH/01H on a free GP counter: %s)",
			pmu_test_gp_event_missing(PMU_ARCH_REF_CYCLES) ?: "none free");
	uint64_t n = PMU_IDX_IS_FIXED(idx) ? REF_PMI_TICKS_FIXED : REF_PMI_TICKS_GP;
	pmu_idx_name(pmu_caps(), idx, name, sizeof(name));
	pmu_test_event(&a, PMU_ARCH_REF_CYCLES);
	a.attr.intr = true;
	if (!check(pmu_event_add_idx(&a, idx) == PMU_OK, "%s on %s: %s", a.name, name, a.reason))
		return;
	if (!check(pmu_events_arm(g, 1, &br) == PMU_OK, "arming %s: %s", name, a.reason)) {
		pmu_event_del(&a);
		return;
	}
	if (!check(pmu_event_write_counter(&a, (0 - n) & pmu_width_mask(a.hw.width)) == PMU_OK,
		   "presetting %s to -%lu: %s", name, n, a.reason)) {
		pmu_events_disarm(g, 1);
		pmu_event_del(&a);
		return;
	}
	uint32_t ovf0 = ref_ovf_of(cpu, idx);
	bool was_on = irq_save();
	irq_enable();
	uint64_t t0 = rdtsc(), end = t0 + us_to_tsc(REF_PMI_WAIT_US), t;
	wrmsr(br.msr, br.on);
	/* Memory and the TSC only until the handler counts it: nothing
	 * that halts the core, which stops reference cycles. */
	do {
		__asm__ volatile("" ::: "memory");
		t = rdtsc();
	} while (ref_ovf_of(cpu, idx) == ovf0 && t < end);
	uint32_t running = ref_ovf_of(cpu, idx) - ovf0;
	wrmsr(br.msr, br.off);
	/* A PMI the switch-off let through: taken at once, interrupts on. */
	for (unsigned i = 0; i < 1000; i++)
		cpu_relax();
	uint32_t after = ref_ovf_of(cpu, idx) - ovf0 - running;
	irq_restore(was_on);
	pmu_events_disarm(g, 1);
	pmu_event_del(&a);

	if (running)
		diag("%s: its PMI came %lu TSC ticks after it started %lu ticks short of the overflow", name,
		     t - t0, n);
	check(running >= 1,
	      "%s: started %lu ticks short of its overflow, no PMI in %lu TSC ticks (%lu us) of code that touches no PMU register; %s",
	      name, n, t - t0, REF_PMI_WAIT_US,
	      after ? "it came when the counter was switched off: the overflow was noticed only at the next PMU access"
		    : "none at the switch-off either (or the host did not run this CPU for that long)");
}
