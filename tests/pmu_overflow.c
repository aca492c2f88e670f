/* Overflow and PMI checks on each CPU: every counter preset to -N raises
 * exactly one PMI with its own status bit, cleared by the handler; no PMI
 * without INT; fixed and NMI delivery; freeze on PMI and STATUS_SET (v4);
 * a USR-only overflow in ring 3; and isolation between CPUs. */
#include "arch/x86/cpu.h"
#include "arch/x86/lapic.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "arch/x86/smp.h"
#include "arch/x86/timer.h"
#include "arch/x86/usermode.h"
#include "lib/printf.h"
#include "pmu/bracket.h"
#include "pmu/kernel/pmi_lvt.h"
#include "pmu/loops.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/ktest.h"
#include "tests/pmu_common.h"

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

static const char *needs_pmi_v4(void)
{
	const char *why = pmu_needs_pmi();

	if (why)
		return why;
	if (pmu_caps()->vendor != PMU_VENDOR_INTEL || pmu_caps()->version < 4)
		return ktest_reason("%s PMU v%u: the CTR_FRZ status bit needs Intel v4",
				    pmu_caps()->vendor == PMU_VENDOR_AMD ? "AMD" : "architectural",
				    pmu_caps()->version);
	return NULL;
}

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

/* One window: arm, preset the counters marked in preset to -OVF_N (the
 * handler then folds the wrap in, no reload: period 0), run the bracket
 * with interrupts on so the PMI lands inside, wait for late PMIs, stop. */
static bool ovf_window(struct pmu_event *const *evs, unsigned n, uint32_t preset, uint64_t *tsc)
{
	struct pmu_bracket_regs br;
	bool was_on = read_rflags() & BIT(RFLAGS_IF_BIT);
	uint64_t t0, t1;
	int err;

	err = pmu_events_arm(evs, n, &br);
	if (!check(err == PMU_OK, "arming %u event(s) failed (%d): %s", n, err, evs[0]->reason))
		return false;
	for (unsigned i = 0; i < n; i++)
		if (((preset >> i) & 1) &&
		    !check(pmu_event_write_counter(evs[i], (0 - OVF_N) & pmu_width_mask(evs[i]->hw.width)) ==
				   PMU_OK,
			   "presetting %s to -%lu: %s", evs[i]->name, OVF_N, evs[i]->reason)) {
			pmu_events_disarm(evs, n);
			return false;
		}
	if (!was_on)
		irq_enable();
	t0 = rdtsc();
	pmu_bracket_loop(&br, PMU_TEST_LOOPS);
	t1 = rdtsc();
	for (unsigned i = 0; i < n; i++)
		if ((preset >> i) & 1)
			wait_ovf(evs[i]->hw.idx, 1);
	if (!was_on)
		irq_disable();
	pmu_events_disarm(evs, n);
	if (tsc)
		*tsc = t1 - t0;
	return true;
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
	char name[24];
	enum pmi_delivery d = pmi_delivery();
	unsigned cpu = this_cpu()->cpu, n = 1;
	/* Two counters start together only through GLOBAL_CTRL. */
	int ridx = e == PMU_ARCH_INSTRUCTIONS && pmu_caps()->global_ctrl ? reference_idx(idx) : -1;
	uint64_t tsc = 0, path0 = pmi_count(cpu, d), other0 = pmi_count(cpu, (enum pmi_delivery) !d);
	struct pmu_pmi_stats s0 = my_stats(), s1;
	bool ok = true;

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
	if (!ovf_window(g, n, 1u, &tsc)) {
		pmu_events_del(g, n);
		return;
	}
	s1 = my_stats();
	uint64_t bit = pmu_idx_bit(idx), st = status_now();
	uint64_t ctr_bits = (uint64_t)pmu_caps()->gp_mask | (uint64_t)pmu_caps()->fixed_mask << 32;
	ok &= check(s1.ovf[idx] - s0.ovf[idx] == 1, "%s: expected exactly 1 overflow handled, saw %u", name,
		    s1.ovf[idx] - s0.ovf[idx]);
	ok &= check(s1.pmis - s0.pmis == 1, "%s: expected exactly 1 PMI, the handler ran %lu times", name,
		    s1.pmis - s0.pmis);
	ok &= check(pmi_count(cpu, d) - path0 == 1 && pmi_count(cpu, (enum pmi_delivery) !d) == other0,
		    "%s: expected the PMI through %s delivery only: %s %lu, %s %lu", name,
		    pmi_delivery_name(d), pmi_delivery_name(d), pmi_count(cpu, d) - path0,
		    pmi_delivery_name((enum pmi_delivery) !d),
		    pmi_count(cpu, (enum pmi_delivery) !d) - other0);
	ok &= check((s1.last_status & ctr_bits) == bit,
		    "%s: expected GLOBAL_STATUS counter bits %#lx at the PMI, read %#lx", name, bit,
		    s1.last_status);
	ok &= check((s1.last_cleared & ctr_bits) == bit, "%s: expected OVF_CTRL <- %#lx, handler wrote %#lx",
		    name, bit, s1.last_cleared);
	ok &= check(!(st & bit), "%s: GLOBAL_STATUS bit still set after the handler: %#lx", name, st);
	ok &= check((pmi_lvt_read() & LAPIC_LVT_WRITABLE) == pmi_lvt_value(d),
		    "%s: LVT entry %#x after the PMI, expected %#x (unmasked)", name, pmi_lvt_read(),
		    pmi_lvt_value(d));
	if (e == PMU_ARCH_INSTRUCTIONS) {
		uint64_t want = pmu_test_expected_insns(false), v = pmu_event_count(&a);
		/* The handler's own instructions count on top (interrupts on,
		 * OS mode); a handler longer than 20000 is broken. */
		ok &= check(
			v >= want && v <= want + 20000,
			"%s: expected %lu..%lu instructions across the wrap (workload + handler), saw %lu",
			name, want, want + 20000, v);
		if (n == 2)
			ok &= check(
				v == pmu_event_count(&r),
				"%s: preset counter counted %lu, reference counter %d counted %lu: expected equal",
				name, v, ridx, pmu_event_count(&r));
	} else {
		pmu_test_check_count(&a, false, tsc);
	}
	if (!ok)
		diag_pmi_state(&s1);
	pmu_events_del(g, n);
}

KTEST("pmu.overflow", every_counter_one_pmi, pmu_needs_pmi, KTEST_PER_CPU,
      "each counter preset to -1000 raises one PMI, its status bit only")
{
	uint32_t gp = pmu_test_free_gp(), fx = pmu_test_free_fixed();

	diag("PMI delivery: %s", pmi_delivery_name(pmi_delivery()));
	for (unsigned x = 0; x < PMU_MAX_GP; x++)
		if ((gp >> x) & 1)
			overflow_one((int)x, PMU_ARCH_INSTRUCTIONS);
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
		ktest_skip("no free GP counter and no free IA32_FIXED_CTR0");
	bits = pmu_events_global_mask(g, n);
	if (pmu_test_measure(g, n, false, NULL)) {
		udelay(1000); /* interrupts on again: a pending PMI would run now */
		s1 = my_stats();
		uint64_t st = status_now();
		check(s1.pmis == s0.pmis,
		      "expected no PMI with INT/PMI clear, the handler ran %lu times (last status %#lx)",
		      s1.pmis - s0.pmis, s1.last_status);
		if (pmu_caps()->global_status)
			check((st & bits) == bits,
			      "expected GLOBAL_STATUS bits %#lx set after the wrap, read %#lx", bits, st);
		else
			diag("no global status register: the wrap shows in the exact count only");
		for (unsigned i = 0; i < n; i++)
			check(pmu_event_count(g[i]) == pmu_test_expected_insns(false),
			      "%s: expected exactly %lu instructions across the wrap, saw %lu", g[i]->name,
			      pmu_test_expected_insns(false), pmu_event_count(g[i]));
		if (pmu_caps()->global_ovf) {
			pmu_hw_wrmsr(pmu_caps()->global_ovf, bits);
			st = status_now();
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
	for (unsigned m = 0; m < 2; m++) {
		if (!check(pmi_set_delivery(modes[m]) == 0, "%s delivery: LVT reads %#x after writing %#x",
			   pmi_delivery_name(modes[m]), pmi_lvt_read(), pmi_lvt_value(modes[m])))
			continue;
		overflow_one((int)x, PMU_ARCH_INSTRUCTIONS);
		struct pmu_pmi_stats s = my_stats();
		check(!!(s.last_from & PMU_PMI_FROM_NMI) == (modes[m] == PMI_DELIVERY_NMI),
		      "%s delivery: the handler saw origin %#x", pmi_delivery_name(modes[m]), s.last_from);
	}
	pmi_set_delivery(was);
}

struct frozen_view {
	unsigned calls;
	uint64_t status;
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
	for (unsigned i = 0; i < v->n; i++)
		pmu_hw_rdmsr(v->evs[i]->hw.event_base, &v->first[i]);
	pmu_workload_loop(10000);
	for (unsigned i = 0; i < v->n; i++)
		pmu_hw_rdmsr(v->evs[i]->hw.event_base, &v->second[i]);
}

KTEST("pmu.overflow", freeze_on_pmi, needs_pmi_v4, KTEST_PER_CPU,
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
	if (n && g[0] == &a && ovf_window(g, n, 1u, NULL)) {
		uint64_t st = status_now();
		check(v.calls == 1, "expected the handler once, it ran %u times", v.calls);
		check((v.status >> PERF_GLOBAL_STATUS_CTR_FRZ_BIT) & 1,
		      "expected CTR_FRZ (bit 59) in GLOBAL_STATUS at the PMI, read %#lx", v.status);
		for (unsigned i = 0; i < n && v.calls; i++) {
			check(v.first[i] == v.second[i],
			      "%s kept counting while frozen: %#lx then %#lx across 10000 loop iterations",
			      g[i]->name, v.first[i], v.second[i]);
			/* Unfrozen by the handler: the rest of the window counted. */
			uint64_t start = g[i] == &a ? (0 - OVF_N) & pmu_width_mask(a.hw.width) : 0;
			uint64_t at_pmi = pmu_delta(start, v.first[i], g[i]->hw.width);
			check(pmu_event_count(g[i]) > at_pmi + PMU_TEST_LOOPS / 2,
			      "%s: %lu at the PMI, %lu at the end: expected it to count the rest of the window after unfreezing",
			      g[i]->name, at_pmi, pmu_event_count(g[i]));
		}
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
 * never counted). */
KTEST("pmu.overflow", usr_only_in_ring3, pmu_needs_pmi, KTEST_PER_CPU,
      "a USR-only overflow in ring 3: the PMI reports CPL 3 and its RIP")
{
	static const uint64_t iters[2] = { 2000, 12000 };
	unsigned x = pmu_test_first_absent(~pmu_test_free_gp(), PMU_MAX_GP);
	uint64_t count[2] = { 0, 0 };

	if (x >= PMU_MAX_GP)
		ktest_skip("no free GP counter (mask %#x)", pmu_test_free_gp());
	for (unsigned k = 0; k < 2; k++) {
		struct pmu_event u;
		struct pmu_pmi_stats s0 = my_stats(), s1;

		pmu_test_event(&u, PMU_ARCH_INSTRUCTIONS);
		u.attr.os = false;
		u.attr.intr = true;
		u.name = "instructions:u";
		if (!check(pmu_event_add_idx(&u, (int)x) == PMU_OK, "IA32_PMC%u: %s", x, u.reason))
			return;
		if (!check(pmu_event_enable(&u) == PMU_OK, "enable: %s", u.reason) ||
		    !check(pmu_event_write_counter(&u, (0 - OVF_N) & pmu_width_mask(u.hw.width)) == PMU_OK,
			   "preset: %s", u.reason)) {
			pmu_event_del(&u);
			return;
		}
		int vec = usermode_call(user_payload, (void *)(uintptr_t)iters[k]);
		wait_ovf((int)x, s0.ovf[x] + 1);
		pmu_event_disable(&u);
		s1 = my_stats();
		count[k] = pmu_event_count(&u) - OVF_N;
		check(vec == -1, "ring-3 payload: expected a normal return, saw vector %d", vec);
		check(s1.ovf[x] - s0.ovf[x] == 1 && s1.pmis - s0.pmis == 1,
		      "%lu ring-3 iterations: expected 1 PMI / 1 overflow, saw %lu / %u", iters[k],
		      s1.pmis - s0.pmis, s1.ovf[x] - s0.ovf[x]);
		check(s1.last_from & PMU_PMI_FROM_USER,
		      "PMI origin %#x: expected CPL 3 (the counter counts only there)", s1.last_from);
		check(s1.last_rip >= (uint64_t)pmu_ovf_loop && s1.last_rip <= (uint64_t)pmu_ovf_loop_end,
		      "PMI RIP %#lx outside the ring-3 loop [%p, %p]", s1.last_rip, (void *)pmu_ovf_loop,
		      (const void *)pmu_ovf_loop_end);
		pmu_event_del(&u);
	}
	check(count[1] - count[0] == PMU_LOOP_INSNS_PER_ITER * (iters[1] - iters[0]),
	      "USR-only counts after the wrap: %lu and %lu, expected to differ by exactly %lu", count[0],
	      count[1], PMU_LOOP_INSNS_PER_ITER * (iters[1] - iters[0]));
	diag("USR-only instructions after -%lu: %lu (%lu iterations), %lu (%lu iterations)", OVF_N, count[0],
	     iters[0], count[1], iters[1]);
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
	const struct pmu_caps *c = &pc->caps;
	struct pmu_pmi_stats st;

	s->n = 0;
	for (unsigned x = 0; x < PMU_MAX_GP; x++)
		if (pmu_has_gp(c, x) && !((pc->gp_reserved >> x) & 1)) {
			s->msr[s->n++] = pmu_ctr_msr(c, x);
			s->msr[s->n++] = pmu_evtsel_msr(c, x);
		}
	for (unsigned i = 0; i < PMU_MAX_FIXED; i++)
		if (pmu_has_fixed(c, i) && !((pc->fixed_reserved >> i) & 1))
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
	pmu_pmi_get_stats(this_cpu()->cpu, &st);
	s->pmis = st.pmis;
	s->overflows = st.overflows;
}

struct iso_job {
	int err;
	char why[PMU_REASON_LEN];
	uint64_t pmis;
};

/* On CPU A: one GP counter with INT preset to -OVF_N overflows once.
 * No check() here (the test runs on the BSP): results travel back. */
static void iso_overflow(void *arg)
{
	struct iso_job *j = arg;
	struct pmu_event a;
	struct pmu_event *g[] = { &a };
	struct pmu_bracket_regs br;
	struct pmu_pmi_stats s0, s1;
	unsigned x = pmu_test_first_absent(~pmu_test_free_gp(), PMU_MAX_GP);

	if (!pmi_ready())
		pmi_init_cpu();
	pmu_pmi_get_stats(this_cpu()->cpu, &s0);
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
	wait_ovf(a.hw.idx, s0.ovf[a.hw.idx] + 1);
	pmu_events_disarm(g, 1);
	pmu_event_del(&a);
	pmu_pmi_get_stats(this_cpu()->cpu, &s1);
	j->pmis = s1.pmis - s0.pmis;
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
	if (!pmu_cpu_of(1)->counting)
		ktest_skip("cpu 1: %s", pmu_cpu_of(1)->reason);
	for (unsigned p = 0; p < 2; p++) {
		unsigned a = pairs[p][0], b = pairs[p][1];
		struct iso_snap before, after;
		struct iso_job job = { 0 };

		run_on(b, iso_snapshot, &before);
		run_on(a, iso_overflow, &job);
		run_on(b, iso_snapshot, &after);
		if (!check(job.err == PMU_OK, "cpu %u: overflow set-up failed (%d): %s", a, job.err, job.why))
			continue;
		check(job.pmis == 1, "cpu %u: expected 1 PMI from its own overflow, saw %lu", a, job.pmis);
		check(after.pmis == before.pmis && after.overflows == before.overflows,
		      "cpu %u took PMIs (%lu -> %lu) when cpu %u's counter overflowed", b, before.pmis,
		      after.pmis, a);
		for (unsigned k = 0; k < before.n && k < after.n; k++)
			check(before.v[k] == after.v[k],
			      "cpu %u: MSR %#x changed from %#lx to %#lx while cpu %u worked", b,
			      before.msr[k], before.v[k], after.v[k], a);
	}
}
