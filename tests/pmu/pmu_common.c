/* Shared pieces of the PMU hardware checks: lazy per-CPU init, SKIP
 * reasons, bracketed measurement and workload-derived bounds. */
#include "tests/pmu/pmu_common.h"

#include "arch/x86/bootmem.h"
#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "arch/x86/smp.h"
#include "lib/bits.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/bracket.h"
#include "pmu/kernel/pmi_lvt.h"
#include "pmu/loops.h"
#include "pmu/pmu_hw.h"
#include "tests/deviations.h"
#include "tests/ktest.h"

/* Lines the memory walk touches; flushed before each measurement so the
 * loads miss in every cache level. */
static uint8_t pmu_test_mem[PMU_TEST_MEM_LINES * PMU_MEMLOOP_STRIDE] __attribute__((aligned(64)));

static void init_here(void *arg)
{
	(void)arg;
	pmu_cpu_ensure();
}

void pmu_test_init_cpu(unsigned cpu)
{
	struct pmu_cpu *pc = pmu_cpu_of(cpu);

	/* A call slot does not serve itself while it runs the test: the
	 * test's own CPU initialises in place. */
	if (pc && !pmu_cpu_initialised(pc)) {
		if (cpu == smp_this_cpu())
			init_here(NULL);
		else
			on_cpu(cpu, init_here, NULL);
	}
}

uint32_t pmu_test_free_gp(void)
{
	struct pmu_cpu *pc = pmu_cpu_ensure();
	return pmu_cpu_caps(pc)->gp_mask & ~pmu_cpu_gp_others(pc) & ~pmu_cpu_gp_ours(pc);
}

uint32_t pmu_test_free_fixed(void)
{
	struct pmu_cpu *pc = pmu_cpu_ensure();
	/* The driver counts with none narrower than PMU_MIN_COUNTER_WIDTH
	 * (pmu_needs_fixed says so). */
	if (pmu_cpu_caps(pc)->fixed_width < PMU_MIN_COUNTER_WIDTH)
		return 0;
	return pmu_cpu_caps(pc)->fixed_mask & ~pmu_cpu_fixed_others(pc) & ~pmu_cpu_fixed_ours(pc);
}

const char *pmu_needs_counting(void)
{
	/* Normally boot ran pmu_init_all; if not, this CPU initialises now
	 * with the same options, so the checks still run. */
	if (!pmu_cpu_ensure())
		return "CPU index beyond PMU_MAX_CPUS";
	return pmu_skip_reason();
}

const char *pmu_needs_global_ctrl(void)
{
	const char *why = pmu_needs_counting();
	if (why)
		return why;
	if (!pmu_caps()->global_ctrl && pmu_caps()->no_global_why)
		return pmu_caps()->no_global_why;
	if (!pmu_caps()->global_ctrl)
		return ktest_reason("architectural PMU v%u has no IA32_PERF_GLOBAL_CTRL (needs v2)",
				    pmu_caps()->version);
	return NULL;
}

const char *pmu_needs_fixed(void)
{
	const char *why = pmu_needs_counting();
	/* The precise reason first: "AMD has no fixed counters", not "no GLOBAL_CTRL". */
	if (!why && !pmu_caps()->fixed_mask && pmu_caps()->no_fixed_why)
		return pmu_caps()->no_fixed_why;
	why = pmu_needs_global_ctrl();
	if (why)
		return why;
	if (!pmu_caps()->fixed_mask)
		return ktest_reason("no fixed counters (CPUID.0AH: EDX[4:0]=%u, ECX=%#x)",
				    pmu_caps()->num_fixed, pmu_caps()->leaf_0a.ecx);
	if (pmu_caps()->fixed_width < PMU_MIN_COUNTER_WIDTH)
		return ktest_reason(
			"the fixed counters are %u-bit (CPUID.0AH:EDX[12:5], EDX=%#x): narrower than the %u bits the driver counts with",
			pmu_caps()->fixed_width, pmu_caps()->leaf_0a.edx, PMU_MIN_COUNTER_WIDTH);
	return NULL;
}

const char *pmu_needs_pmi(void)
{
	/* Without a global status register (Intel v1, AMD before PerfMonV2)
	 * the handler infers overflows from the counters (pmu/pmi.c), as
	 * Linux does: PMIs still come from the INT bit. */
	const char *why = pmu_needs_counting();
	char buf[PMU_REASON_LEN];

	if (why)
		return why;
	if (pmi_check_delivery(buf, sizeof(buf)))
		return ktest_reason("%s", buf);
	pmu_pmi_set_ring(NULL, 0);
	pmu_pmi_set_observer(NULL, NULL);
	return NULL;
}

const char *pmu_test_gp_event_missing(enum pmu_arch_event e)
{
	const struct pmu_caps *c = pmu_caps();
	const char *name = pmu_arch_events[e].name;

	if ((c->events_avail >> e) & 1)
		return NULL;
	if (c->vendor != PMU_VENDOR_INTEL)
		return ktest_reason("%s is not an event of this PMU (events %#x)", name, c->events_avail);
	if (c->events_from_leaf23)
		return ktest_reason("%s is not available on GP counters: CPUID.23H.3:EAX=%#x, bit %d clear",
				    name, c->leaf23_regs[3].eax, (int)e);
	if ((unsigned)e >= c->events_len)
		return ktest_reason("%s is not available on GP counters: CPUID.0AH:EAX[31:24]=%u, the event "
				    "vector ends before bit %d",
				    name, c->events_len, (int)e);
	return ktest_reason("%s is not available on GP counters: CPUID.0AH:EBX=%#x, bit %d set", name,
			    c->events_unavail, (int)e);
}

void pmu_test_need_gp_event(enum pmu_arch_event e)
{
	const char *why = pmu_test_gp_event_missing(e);

	if (why)
		ktest_skip("%s", why);
}

const char *pmu_test_few_counters(struct pmu_cpu *pc, unsigned n)
{
	const struct pmu_caps *c = pmu_cpu_caps(pc);
	uint32_t gp = c->gp_mask & ~pmu_cpu_gp_others(pc);
	uint32_t fx = c->fixed_width >= PMU_MIN_COUNTER_WIDTH ? c->fixed_mask & ~pmu_cpu_fixed_others(pc) : 0;
	unsigned have = popcount32(gp) + popcount32(fx);

	if (have >= n)
		return NULL;
	return ktest_reason("%u events need %u counters; this PMU has %u free: GP %#x of %u, fixed %#x", n, n,
			    have, gp, c->num_gp, fx);
}

void pmu_test_event(struct pmu_event *ev, enum pmu_arch_event e)
{
	struct pmu_event_attr a;

	pmu_attr_arch(&a, e);
	pmu_event_init(ev, &a, pmu_arch_events[e].name);
}

unsigned pmu_test_first_absent(uint32_t mask, unsigned limit)
{
	for (unsigned i = 0; i < limit; i++)
		if (!((mask >> i) & 1))
			return i;
	return limit;
}

static void flush_mem(void)
{
	for (uint64_t i = 0; i < PMU_TEST_MEM_LINES; i++)
		__asm__ volatile("clflush %0" : "+m"(pmu_test_mem[i * PMU_MEMLOOP_STRIDE]));
	__asm__ volatile("mfence" ::: "memory");
}

/* SMIs (F10 of the hardware-truth review): SMM code runs at CPL 0, so an
 * OS-mode counter counts it unless IA32_DEBUGCTL.FREEZE_WHILE_SMM stops
 * the counters in SMM (SDM vol. 3B, "IA32_DEBUGCTL MSR", bit 14, offered
 * by IA32_PERF_CAPABILITIES[12]); MSR_SMI_COUNT (arch/x86/msr.h) tells a
 * window an SMI fell into, which then runs again. */
static struct {
	bool done;
	bool counts;   /* MSR_SMI_COUNT reads */
	int freeze;    /* pmu_smm_freeze()'s result */
	uint64_t boot; /* MSR_SMI_COUNT when first read */
} smi[MAX_CPUS];

static bool smi_read(uint64_t *v)
{
	return smi[this_cpu()->cpu].counts && pmu_hw_rdmsr(MSR_SMI_COUNT, v) == 0;
}

const char *pmu_test_smi_setup(char *buf, size_t n)
{
	unsigned cpu = this_cpu()->cpu;
	const struct pmu_caps *c = pmu_caps();

	if (!smi[cpu].done) {
		smi[cpu].done = true;
		smi[cpu].counts = pmu_hw_rdmsr(MSR_SMI_COUNT, &smi[cpu].boot) == 0;
		smi[cpu].freeze = pmu_smm_freeze(true);
	}
	if (!buf)
		return NULL;
	const char *freeze = smi[cpu].freeze == PMU_OK
				     ? "counters frozen in SMM (IA32_DEBUGCTL.FREEZE_WHILE_SMM set)"
			     : c && c->perf_caps_valid && c->freeze_smm
				     ? "IA32_DEBUGCTL refused FREEZE_WHILE_SMM"
				     : "no FREEZE_WHILE_SMM (IA32_PERF_CAPABILITIES[12] clear)";
	if (smi[cpu].counts)
		ksnprintf(
			buf, n,
			"SMIs: %s; MSR_SMI_COUNT %lu, read around every window: one an SMI fell into runs again",
			freeze, smi[cpu].boot);
	else
		ksnprintf(buf, n, "SMIs: %s; no MSR_SMI_COUNT here: a window with an SMI is not recognised",
			  freeze);
	return buf;
}

bool pmu_test_window(struct pmu_event *const *evs, unsigned n, const struct pmu_test_window *w, uint64_t len,
		     uint64_t *tsc)
{
	static const struct pmu_test_window plain;
	struct pmu_cpu *pc = pmu_this_cpu();
	struct pmu_bracket_regs br;
	uint64_t t0 = 0, t1 = 0;
	int err;

	if (!w)
		w = &plain;
	pmu_test_smi_setup(NULL, 0);
	for (unsigned attempt = 0;; attempt++) {
		uint64_t smi0 = 0, smi1 = 0;
		bool smi_known = smi_read(&smi0);

		if (w->before)
			w->before(w->ctx);
		if ((err = pmu_events_arm(evs, n, &br)) != PMU_OK) {
			check(false, "arming %u event(s) for a bracket failed (%d): %s", n, err,
			      evs[0]->reason);
			return false;
		}
		for (unsigned i = 0; i < n; i++) {
			uint64_t by = w->preset_by ? w->preset_by : evs[i]->attr.period;
			if (((w->preset >> i) & 1) &&
			    !check(pmu_event_write_counter(
					   evs[i], (0 - by) & pmu_width_mask(evs[i]->hw.width)) == PMU_OK,
				   "presetting %s to -%lu: %s", evs[i]->name, by, evs[i]->reason)) {
				pmu_events_disarm(evs, n);
				return false;
			}
		}
		if (w->only && pmu_cpu_caps(pc)->global_ctrl)
			br.on = br.off | (br.on & w->only);
		if (w->mem)
			flush_mem();
		/* Interrupts off: nothing but the bracket runs in the window,
		 * unless a PMI is to land in it. */
		bool was_on = irq_save();
		if (w->irq)
			irq_enable();
		t0 = rdtsc();
		if (w->mem)
			pmu_bracket_memloop(&br, pmu_test_mem, len);
		else
			pmu_bracket_loop(&br, len);
		t1 = rdtsc();
		if (w->after)
			w->after(w->ctx);
		irq_restore(was_on);
		pmu_events_disarm(evs, n);
		if (!smi_known || !smi_read(&smi1) || smi1 == smi0)
			break;
		/* The SDM says RSM sets GLOBAL_CTRL's enables again after a
		 * frozen SMM: the bracket's "off" must be what holds. */
		uint64_t gc = 0;
		if (pmu_cpu_caps(pc)->global_ctrl && pmu_hw_rdmsr(pmu_cpu_caps(pc)->global_ctrl, &gc) == 0 &&
		    gc != pmu_cpu_global_ctrl(pc))
			pmu_hw_wrmsr(pmu_cpu_caps(pc)->global_ctrl, pmu_cpu_global_ctrl(pc));
		diag("smi: %lu SMI(s) during a window of %lu %s (attempt %u; GLOBAL_CTRL %#lx after it, %#lx meant)%s",
		     smi1 - smi0, len, w->mem ? "lines" : "iterations", attempt + 1, gc,
		     pmu_cpu_global_ctrl(pc),
		     attempt < PMU_TEST_SMI_RERUNS ? ": run again"
						   : ": every attempt had one, the last counts stand");
		if (attempt >= PMU_TEST_SMI_RERUNS)
			break;
	}
	if (tsc)
		*tsc = t1 - t0;
	return true;
}

static void quiet_clear(void *ctx)
{
	struct pmu_test_quiet *q = ctx;
	/* No OVF_CTRL (Intel v1, AMD before PerfMonV2): MSR 0 is a
	 * machine-check register there, not ours to write. */
	if (pmu_caps()->global_ovf)
		pmu_hw_wrmsr(pmu_caps()->global_ovf, q->bits);
}

static void quiet_status(void *ctx)
{
	struct pmu_test_quiet *q = ctx;
	q->status = 0;
	if (pmu_caps()->global_status)
		pmu_hw_rdmsr(pmu_caps()->global_status, &q->status);
}

struct pmu_test_window pmu_test_quiet_window(struct pmu_test_quiet *q)
{
	return (struct pmu_test_window){ .before = quiet_clear, .after = quiet_status, .ctx = q };
}

struct pmu_test_counts *pmu_test_counts_here(void)
{
	/* From boot memory on first use: the image's .bss must stay below
	 * OVMF's ACPI NVS at 8 MiB (arch/x86/bootmem.h). */
	static struct pmu_test_counts *counts[MAX_CPUS];
	unsigned cpu = this_cpu()->cpu;

	if (!counts[cpu])
		counts[cpu] = bootmem_alloc(sizeof(*counts[cpu]));
	return counts[cpu];
}

static bool measure_trials(struct pmu_event *const *evs, unsigned n, const struct pmu_test_window *w,
			   struct pmu_test_counts *m, bool first);

bool pmu_test_measure(struct pmu_event *const *evs, unsigned n, const struct pmu_test_window *w,
		      struct pmu_test_counts *m)
{
	static const struct pmu_test_window plain;

	if (!w)
		w = &plain;
	if (n > PMU_IDX_NR)
		n = PMU_IDX_NR;
	memset(m, 0, sizeof(*m));
	m->mem = w->mem;
	m->n = n;
	m->evs = evs;
	m->len[0] = w->len[0] ? w->len[0] : w->mem ? PMU_TEST_MEM_LINES_SHORT : PMU_TEST_LOOPS_SHORT;
	m->len[1] = w->len[1] ? w->len[1] : w->mem ? PMU_TEST_MEM_LINES : PMU_TEST_LOOPS;
	return measure_trials(evs, n, w, m, true);
}

/* Run PMU_TEST_TRIALS more windows at each length into m: the least
 * counts only go down, the last and best-rate windows are the newest. */
static bool measure_trials(struct pmu_event *const *evs, unsigned n, const struct pmu_test_window *w,
			   struct pmu_test_counts *m, bool first)
{
	for (unsigned k = 0; k < 2; k++)
		for (unsigned t = 0; t < PMU_TEST_TRIALS; t++) {
			if (!pmu_test_window(evs, n, w, m->len[k], &m->last_tsc[k]))
				return false;
			for (unsigned i = 0; i < n; i++) {
				uint64_t v = pmu_event_count(evs[i]);
				uint64_t rate = m->last_tsc[k] ? v * 1000 / m->last_tsc[k] : 0;
				m->last[i][k] = v;
				if ((first && t == 0) || v < m->min[i][k])
					m->min[i][k] = v;
				if (rate > m->rate[i][k] || (first && t == 0)) {
					m->rate[i][k] = rate;
					m->rate_count[i][k] = v;
					m->rate_tsc[i][k] = m->last_tsc[k];
				}
			}
		}
	return true;
}

uint64_t pmu_test_workload(enum pmu_arch_event e, bool mem, uint64_t len)
{
	if (e == PMU_ARCH_BRANCHES)
		return (mem ? PMU_MEMLOOP_BRANCHES_PER_ITER : PMU_LOOP_BRANCHES_PER_ITER) * len;
	return (mem ? PMU_MEMLOOP_INSNS_PER_ITER : PMU_LOOP_INSNS_PER_ITER) * len;
}

/* The least counts' difference between the two lengths against the
 * workload's, for an exact event (instructions, branches) that counted
 * at least the workload at both lengths: what a VM exit in a window
 * would leave (it only adds). 0 otherwise: a counter short of the
 * workload (dead, unscheduled) is not measured again, nor one with
 * CMASK, INV or EDGE, which counts cycles, not the event. */
static int64_t slope_error(const struct pmu_test_counts *m, unsigned i)
{
	const struct pmu_event_attr *a = &m->evs[i]->attr;
	enum pmu_arch_event e = a->arch;
	uint64_t w0 = pmu_test_workload(e, m->mem, m->len[0]), w1 = pmu_test_workload(e, m->mem, m->len[1]);

	if ((e != PMU_ARCH_INSTRUCTIONS && e != PMU_ARCH_BRANCHES) || a->cmask || a->inv || a->edge ||
	    m->min[i][0] < w0 || m->min[i][1] < w1)
		return 0;
	return (int64_t)(m->min[i][1] - m->min[i][0]) - (int64_t)(w1 - w0);
}

bool pmu_test_measure_exact(struct pmu_event *const *evs, unsigned n, const struct pmu_test_window *w,
			    struct pmu_test_counts *m)
{
	static const struct pmu_test_window plain;

	if (!pmu_test_measure(evs, n, w, m))
		return false;
	if (!pmu_caps()->hypervisor)
		return true;
	for (unsigned round = 1; round <= PMU_TEST_EXIT_RERUNS; round++) {
		unsigned off = PMU_IDX_NR;
		int64_t err = 0;
		for (unsigned i = 0; i < m->n && off == PMU_IDX_NR; i++)
			if ((err = slope_error(m, i)) != 0)
				off = i;
		if (off == PMU_IDX_NR)
			break;
		char where[24];
		pmu_idx_name(pmu_caps(), m->evs[off]->hw.idx, where, sizeof(where));
		diag("%s on %s: least %lu and %lu at %lu and %lu %s, %+ld against the workload's difference: a window of every trial of one length held more (a VM exit inside it, under a hypervisor): %u more at each length (round %u of at most %u)",
		     m->evs[off]->name, where, m->min[off][0], m->min[off][1], m->len[0], m->len[1],
		     m->mem ? "lines" : "iterations", err, PMU_TEST_TRIALS, round, PMU_TEST_EXIT_RERUNS);
		if (!measure_trials(evs, m->n, w ? w : &plain, m, false))
			return false;
	}
	return true;
}

bool pmu_test_check_exact(const struct pmu_cpu *pc, const char *what, enum pmu_arch_event e, bool mem,
			  const uint64_t count[2])
{
	const uint64_t len[2] = { mem ? PMU_TEST_MEM_LINES_SHORT : PMU_TEST_LOOPS_SHORT,
				  mem ? PMU_TEST_MEM_LINES : PMU_TEST_LOOPS };

	return pmu_test_check_exact_at(pc, what, e, mem, len, count);
}

bool pmu_test_check_exact_at(const struct pmu_cpu *pc, const char *what, enum pmu_arch_event e, bool mem,
			     const uint64_t len[2], const uint64_t count[2])
{
	bool branches = e == PMU_ARCH_BRANCHES;
	uint64_t len0 = len[0], len1 = len[1];
	uint64_t want = pmu_test_workload(e, mem, len1) - pmu_test_workload(e, mem, len0);
	int64_t moves = branches ? PMU_BRACKET_OVERHEAD_BRANCHES : PMU_BRACKET_EXTRA_INSNS;
	int64_t most = branches ? 0 : PMU_BRACKET_WRMSRS;
	struct dev_obs o = { .kind = DEV_OBS_RETIRED, .pc = pc };

	o.retired.branches = branches;
	o.retired.slope_error = (int64_t)(count[1] - count[0]) - (int64_t)want;
	o.retired.intercept = (int64_t)count[0] - (int64_t)pmu_test_workload(e, mem, len0) - moves;
	o.retired.intercept_max = most;
	if (!branches)
		diag("bracket: %s: %lu, %lu at %lu, %lu %s: workload + %ld MOVs + w, w=%ld (KVM >= 5.17: 1; Xen, KVM < 5.17: 0; silicon: not documented)",
		     what, count[0], count[1], len0, len1, mem ? "lines" : "iterations", moves,
		     o.retired.intercept);
	return check_or_deviation(
		o.retired.slope_error == 0 && o.retired.intercept >= 0 && o.retired.intercept <= most, &o,
		"%s: %lu and %lu at %lu and %lu %s: expected them to differ by exactly %lu and the bracket to add 0..%ld; %+ld against the workload, the bracket %ld",
		what, count[0], count[1], len0, len1, mem ? "lines" : "iterations", want, most,
		o.retired.slope_error, o.retired.intercept);
}

/* Reference cycles tick at a constant rate: the TSC's (FIXED_CTR2), the
 * bus or crystal clock's (a GP counter), or another under TSC scaling or
 * with erratum W145 of Core 2-era parts: so no bound in TSC ticks, but the
 * rate itself, calibrated against the TSC as kvm-unit-tests does
 * (x86/pmu.c, set_ref_cycle_expectations()). Each length's window is its
 * best (the most per TSC tick): a window the vCPU was preempted in, or an
 * SMI froze, counts fewer per tick. One rate: the two windows' rates within
 * 30% of each other, or, where the short window lost more than that to the
 * bracket's fixed TSC ticks outside the count (a VM exit for each WRMSR
 * under a hypervisor, 12-17 us windows at 3-4 GHz), the rate of the
 * difference of the two lengths, Δcount/ΔTSC, in which that overhead
 * cancels (as the exact checks' intercept does, pmu/bracket.h), within 30%
 * of the long window's. Under TCG the windows' TSC is mostly the host's
 * noise and the difference means nothing; the first rule holds there. */
static bool within_30pct(uint64_t a, uint64_t b)
{
	uint64_t hi = a > b ? a : b, lo = a < b ? a : b;
	return hi - lo <= hi * 3 / 10;
}

static void check_ref_cycles(const char *what, const uint64_t least[2], const uint64_t rate[2],
			     const uint64_t count[2], const uint64_t tsc[2])
{
	uint64_t d_count = count[1] > count[0] ? count[1] - count[0] : 0;
	uint64_t d_tsc = tsc[1] > tsc[0] ? tsc[1] - tsc[0] : 0;
	uint64_t delta = d_tsc ? d_count * 1000 / d_tsc : 0;
	bool windows = within_30pct(rate[0], rate[1]), differential = d_tsc && within_30pct(delta, rate[1]);

	diag("%s: %lu.%03lu and %lu.%03lu per TSC tick in the short and long window, %lu.%03lu by their difference (%lu counts in %lu ticks)%s",
	     what, rate[0] / 1000, rate[0] % 1000, rate[1] / 1000, rate[1] % 1000, delta / 1000, delta % 1000,
	     d_count, d_tsc, !windows && differential ? ": the short window's overhead explains it" : "");
	check(least[0] >= 1 && least[1] >= 1 && (windows || differential),
	      "%s: expected a count in every window at one rate per TSC tick, saw at least %lu and %lu; %lu.%03lu and %lu.%03lu per tick (short, long), %lu.%03lu by difference (%lu counts in %lu ticks)",
	      what, least[0], least[1], rate[0] / 1000, rate[0] % 1000, rate[1] / 1000, rate[1] % 1000,
	      delta / 1000, delta % 1000, d_count, d_tsc);
}

/* Events the counted loop makes count in every window. */
static bool always_counts(enum pmu_arch_event e)
{
	return e == PMU_ARCH_INSTRUCTIONS || e == PMU_ARCH_BRANCHES || e == PMU_ARCH_CYCLES ||
	       e == PMU_ARCH_REF_CYCLES || e == PMU_ARCH_TOPDOWN_SLOTS;
}

const char *pmu_test_unscheduled(const struct pmu_event *ev, uint64_t counted, const struct pmu_event *other,
				 uint64_t other_counted, unsigned armed)
{
	const struct pmu_caps *c = pmu_caps();
	struct pmu_event again;
	char name[24], oname[24] = "no other counter";

	if (counted || !always_counts(ev->attr.arch) || (c->hv != PMU_HV_KVM && c->hv != PMU_HV_HIDDEN))
		return NULL;
	pmu_idx_name(c, ev->hw.idx, name, sizeof(name));
	/* The same event alone on a counter that is free now: does the event
	 * count at all, and without the others? */
	struct pmu_event *g[] = { &again };
	uint64_t tsc, alone = 0;
	pmu_event_init(&again, &ev->attr, ev->name);
	if (pmu_event_add(&again) == PMU_OK) {
		bool ran = pmu_test_window(g, 1, NULL, PMU_TEST_LOOPS, &tsc);
		alone = ran ? pmu_event_count(&again) : 0;
		pmu_idx_name(c, again.hw.idx, oname, sizeof(oname));
		pmu_event_del(&again);
	} else {
		/* Every counter is the caller's (pmu.count.all_counters): the
		 * event again on its own counter, the others left out of the
		 * window (GLOBAL_CTRL arms only it). */
		struct pmu_event *self[] = { (struct pmu_event *)ev };
		uint64_t before = pmu_event_count(ev);
		bool ran = pmu_test_window(self, 1, NULL, PMU_TEST_LOOPS, &tsc);
		uint64_t after = ran ? pmu_event_count(ev) : before;
		alone = after >= before ? after - before : after;
		pmu_idx_name(c, ev->hw.idx, oname, sizeof(oname));
	}
	/* The host's perf places each guest counter's event on a counter of
	 * its own; with its NMI watchdog or a perf user holding one, the last
	 * of a guest's full set finds none (Linux arch/x86/kvm/pmu.c
	 * pmc_reprogram_counter). Only that fits "counts alone, not with the
	 * others armed": anything else is named as what it is. */
	if (alone && armed >= 2)
		return ktest_reason(
			"%s counted no %s with %u counters armed, %s counted %lu alone, under %s: the host did not schedule its perf event for the full set (its NMI watchdog or perf users hold a counter)",
			name, ev->name, armed, oname, alone, pmu_hv_name(c->hv));
	if (alone)
		diag("%s counted no %s although it was the only counter armed, while %s counted %lu of it: an unexplained dead counter (a hypervisor filter on this counter, or a broken one; the host's scheduling would have placed a lone event)",
		     name, ev->name, oname, alone);
	else if (other && other_counted)
		diag("%s counted no %s while %s counted %lu, and alone on %s it counted nothing: an unexplained dead counter or event (a hypervisor event filter denies by event code)",
		     name, ev->name, other->name, other_counted, oname);
	else
		diag("%s counted no %s, nor did %s alone: the event is dead or filtered (a KVM PMU event filter denies by event code), not the host's scheduling",
		     name, ev->name, oname);
	return NULL;
}

const char *pmu_test_check_count(const struct pmu_event *ev, unsigned i, const struct pmu_test_counts *m)
{
	if (m->min[i][0] == 0 && m->last[i][1] == 0) {
		const struct pmu_event *other = NULL;
		uint64_t counted = 0;
		for (unsigned j = 0; j < m->n && !counted; j++)
			if (j != i && always_counts(m->evs[j]->attr.arch) && m->last[j][1])
				other = m->evs[j], counted = m->last[j][1];
		const char *why = pmu_test_unscheduled(ev, 0, other, counted, m->n);
		if (why)
			return why;
	}

	char where[24], what[64];
	uint64_t v = m->last[i][1], iters = m->len[1];
	bool mem = m->mem;
	/* Each iteration's DEC depends on the previous one: at least one core
	 * cycle per iteration. 200 cycles per iteration is far beyond any
	 * core running this loop (a memory walk miss costs up to a few
	 * hundred); the limit only catches garbage. */
	uint64_t cyc_min = iters, cyc_max = 400 * iters + 100000;
	uint64_t br = pmu_test_workload(PMU_ARCH_BRANCHES, mem, iters) + PMU_BRACKET_OVERHEAD_BRANCHES;

	pmu_idx_name(pmu_caps(), ev->hw.idx, where, sizeof(where));
	ksnprintf(what, sizeof(what), "%s on %s", ev->name, where);
	switch (ev->attr.arch) {
	case PMU_ARCH_INSTRUCTIONS:
	case PMU_ARCH_BRANCHES:
		pmu_test_check_exact_at(pmu_this_cpu(), what, ev->attr.arch, mem, m->len, m->min[i]);
		break;
	case PMU_ARCH_BRANCH_MISSES:
		check(v <= br,
		      "%s: expected at most %lu mispredicted branches (the branches retired), saw %lu", what,
		      br, v);
		break;
	case PMU_ARCH_CYCLES:
		check(v >= cyc_min && v <= cyc_max,
		      "%s: expected %lu..%lu core cycles (>= 1 per dependent iteration), saw %lu", what,
		      cyc_min, cyc_max, v);
		break;
	case PMU_ARCH_REF_CYCLES:
		check_ref_cycles(what, m->min[i], m->rate[i], m->rate_count[i], m->rate_tsc[i]);
		break;
	case PMU_ARCH_TOPDOWN_SLOTS:
		/* At least one slot per cycle, at most 16 (widest issue known: 8). */
		check(v >= cyc_min && v <= 16 * cyc_max, "%s: expected %lu..%lu slots, saw %lu", what,
		      cyc_min, 16 * cyc_max, v);
		break;
	case PMU_ARCH_LLC_REFERENCES:
	case PMU_ARCH_LLC_MISSES:
		/* The walk touches iters freshly flushed lines: at least one must
		 * come from memory; prefetchers may add up to a few per line. */
		if (mem)
			check(v >= 1 && v <= 4 * iters + 1000,
			      "%s: expected 1..%lu over %lu flushed lines, saw %lu", what, 4 * iters + 1000,
			      iters, v);
		else
			check(v <= 4 * iters + 1000, "%s: expected at most %lu, saw %lu", what,
			      4 * iters + 1000, v);
		break;
	case PMU_ARCH_TOPDOWN_RETIRING: {
		/* A slot for each uop that retires (SDM vol. 3B, "Top-down
		 * Microarchitecture Analysis"): at least the instructions
		 * less the branches, which a JNZ may fuse with its DEC, and
		 * the bracket's MOVs (pmu/bracket.h). */
		uint64_t uops = pmu_test_workload(PMU_ARCH_INSTRUCTIONS, mem, iters) -
				pmu_test_workload(PMU_ARCH_BRANCHES, mem, iters) + PMU_BRACKET_EXTRA_INSNS;
		check(v >= uops, "%s: expected a slot for each of at least %lu uops retired, saw %lu slots",
		      what, uops, v);
		break;
	}
	default:
		/* No bound is known: report the figure, claim nothing. */
		diag("%s: %lu (no bound derived for this event)", what, v);
		break;
	}
	return NULL;
}

const char *pmu_test_absent_msrs_read(void)
{
	const struct pmu_caps *c = pmu_caps();
	uint64_t v = 0;

	if (!c || !c->hypervisor || pmu_hw_rdmsr(MSR_UNIMPLEMENTED, &v) != 0)
		return NULL;
	return ktest_reason(
		"rdmsr %#x, an MSR no processor has, read %#lx without #GP: %s reads MSRs it does not implement (KVM's ignore_msrs=Y; tools/pmutest-run warns)",
		MSR_UNIMPLEMENTED, v, pmu_hv_name(c->hv));
}

void pmu_test_diag_regs(void)
{
	const struct pmu_caps *c = pmu_caps();
	uint64_t v;

	if (!c || !c->version)
		return;
	for (unsigned x = 0; x < PMU_MAX_GP; x++)
		if (pmu_has_gp(c, x) && pmu_hw_rdmsr(pmu_evtsel_msr(c, x), &v) == 0 && v)
			diag("%s%u = %#lx", pmu_evtsel_name(c), x, v);
	if (c->fixed_ctrl && pmu_hw_rdmsr(c->fixed_ctrl, &v) == 0)
		diag("IA32_FIXED_CTR_CTRL = %#lx", v);
	if (c->global_ctrl && pmu_hw_rdmsr(c->global_ctrl, &v) == 0)
		diag("%s = %#lx", pmu_global_ctrl_name(c), v);
	if (c->global_status && pmu_hw_rdmsr(c->global_status, &v) == 0)
		diag("IA32_PERF_GLOBAL_STATUS = %#lx", v);
}
