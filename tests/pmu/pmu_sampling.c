/* Sampling checks: with period P over a loop of known instruction count C,
 * each CPU writes C/P samples (+-1), loses none, and every sample's fields
 * are right (CPU, counter, period, TSC inside the window, RIP inside the
 * loop); the same on all CPUs at once; exact LOST accounting in a ring
 * that is too small. */
#include "arch/x86/bootmem.h"
#include "arch/x86/cpu.h"
#include "arch/x86/lapic.h"
#include "arch/x86/percpu.h"
#include "arch/x86/smp.h"
#include "arch/x86/timer.h"
#include "lib/printf.h"
#include "lib/ringbuf.h"
#include "pmu/kernel/pmi_lvt.h"
#include "pmu/loops.h"
#include "pmu/pmu.h"
#include "pmu/sample_record.h"
#include "tests/deviations.h"
#include "tests/ktest.h"
#include "tests/pmu/pmu_common.h"

/* Period and samples per run: the loop retires (SAMP_K + 1/2) periods, so
 * the last overflow is half a period from either end of the loop and skid
 * or start-up cannot add or remove a sample; what the handler adds to the
 * count after each reload (a few hundred instructions) sums to far less
 * than half a period over SAMP_K samples. */
#define SAMP_PERIOD ((uint64_t)100000)
#define SAMP_K 20u
#define SAMP_LOOPS ((SAMP_K * SAMP_PERIOD + SAMP_PERIOD / 2) / PMU_LOOP_INSNS_PER_ITER)
/* 64 KiB of ring per CPU: 20 samples of 64 bytes need 1280. */
#define SAMP_RING_DATA 65536u
/* The ring for the LOST check: 256 bytes hold four 64-byte samples. */
#define SAMP_SMALL_DATA 256u
#define SAMP_LINES 2
#define RFLAGS_IF (1ull << 9)

/* The sampled loop as a function with known bounds: 3n + 1 instructions. */
void pmu_sampling_loop(uint64_t n);
extern const char pmu_sampling_loop_end[];
__asm__(".pushsection .text\n"
	".globl pmu_sampling_loop\n"
	".type pmu_sampling_loop, @function\n"
	"pmu_sampling_loop:\n\t"
	"1: add $1, %rax\n\t"
	"dec %rdi\n\t"
	"jnz 1b\n\t"
	"ret\n"
	".globl pmu_sampling_loop_end\n"
	"pmu_sampling_loop_end:\n"
	".size pmu_sampling_loop, pmu_sampling_loop_end - pmu_sampling_loop\n"
	".popsection\n");

static uint8_t *ring_mem[MAX_CPUS];

/* Ring memory of the calling CPU, allocated on first use (never freed). */
static void *cpu_ring(void)
{
	unsigned cpu = this_cpu()->cpu;

	if (!ring_mem[cpu])
		ring_mem[cpu] = bootmem_alloc(PMU_SAMPLING_CTL_SIZE + SAMP_RING_DATA);
	return ring_mem[cpu];
}

/* What one run on one CPU found; filled there, checked by the caller. */
struct samp_run {
	unsigned cpu;
	enum pmi_delivery mode;
	int err;
	char why[PMU_REASON_LEN];
	int idx, vidx;
	uint64_t t0, t1;
	uint64_t count; /* the sampled event's total */
	uint64_t ovf, pmis, handler_lost, ring_lost;
	struct pmu_pmi_stats s0, s1; /* the handler's, around the run */
	struct pmu_sampling_tally tally;
	uint32_t lvt_after;
	/* Per-sample checks, with the first offender for the message. */
	uint64_t bad_rip, bad_field, tsc_order, value_order;
	uint64_t first_bad_rip;
	char bad_what[128];
	uint64_t last_tsc, last_value;
	char lines[SAMP_LINES][sizeof(PMU_SAMPLE_LINE_PREFIX) + PMU_SAMPLE_HEX_MAX];
	unsigned nlines;
};

static void keep_line(void *ctx, const char *l)
{
	struct samp_run *r = ctx;
	if (r->nlines < SAMP_LINES)
		ksnprintf(r->lines[r->nlines++], sizeof(r->lines[0]), "%s", l);
}

static void field_bad(struct samp_run *r, const char *fmt, uint64_t seen, uint64_t want)
{
	if (!r->bad_field++)
		ksnprintf(r->bad_what, sizeof(r->bad_what), fmt, seen, want);
}

static void visit(void *ctx, const struct pmu_sample *s)
{
	struct samp_run *r = ctx;
	uint16_t nmi = r->mode == PMI_DELIVERY_NMI ? PMU_SAMPLE_MISC_NMI : 0;

	if (s->rip < (uint64_t)pmu_sampling_loop || s->rip > (uint64_t)pmu_sampling_loop_end) {
		if (!r->bad_rip++)
			r->first_bad_rip = s->rip;
	}
	if (s->cpu != r->cpu)
		field_bad(r, "cpu %lu, expected %lu", s->cpu, r->cpu);
	if (s->idx != (uint32_t)r->idx)
		field_bad(r, "counter %lu, expected %lu", s->idx, (uint64_t)r->idx);
	if (s->period != SAMP_PERIOD)
		field_bad(r, "period %lu, expected %lu", s->period, SAMP_PERIOD);
	if (s->hdr.misc != nmi)
		field_bad(r, "misc %#lx, expected %#lx", s->hdr.misc, nmi);
	if (s->tsc < r->t0 || s->tsc > r->t1)
		field_bad(r, "TSC %lu outside the window starting %lu", s->tsc, r->t0);
	if (s->nr_values != 1 || s->values[0].idx != (uint32_t)r->vidx)
		field_bad(r, "%lu values, expected 1 (the cycles counter %lu)", s->nr_values,
			  (uint64_t)r->vidx);
	else if (s->values[0].value < r->last_value)
		r->value_order++;
	else
		r->last_value = s->values[0].value;
	if (s->tsc < r->last_tsc)
		r->tsc_order++;
	r->last_tsc = s->tsc;
}

/* One sampling run on the calling CPU: instructions every SAMP_PERIOD,
 * cycles carried in each sample, over SAMP_LOOPS iterations with
 * interrupts on; then drain. No check() here: this may run on another
 * CPU than the test. */
static void samp_run(struct samp_run *r, void *mem, size_t mem_size)
{
	struct pmu_event ins, cyc;
	struct pmu_event *g[] = { &ins, &cyc };
	struct pmu_sampling s;
	struct pmu_pmi_stats s0, s1;
	bool was_on = read_rflags() & RFLAGS_IF;

	r->cpu = this_cpu()->cpu;
	r->mode = pmi_delivery();
	pmu_cpu_ensure();
	pmu_test_event(&ins, PMU_ARCH_INSTRUCTIONS);
	ins.attr.period = SAMP_PERIOD;
	pmu_test_event(&cyc, PMU_ARCH_CYCLES);
	pmu_pmi_get_stats(r->cpu, &s0);
	if ((r->err = pmu_sampling_start(&s, g, 2, mem, mem_size, false)) != PMU_OK) {
		ksnprintf(r->why, sizeof(r->why), "%s", s.reason);
		return;
	}
	r->idx = ins.hw.idx;
	r->vidx = cyc.hw.idx;
	if (!was_on)
		irq_enable();
	r->t0 = rdtsc();
	pmu_sampling_loop(SAMP_LOOPS);
	r->t1 = rdtsc();
	if (!was_on)
		irq_disable();
	r->count = pmu_event_update(&ins);
	if ((r->err = pmu_sampling_stop(&s)) != PMU_OK)
		ksnprintf(r->why, sizeof(r->why), "%s", s.reason);
	pmu_pmi_get_stats(r->cpu, &s1);
	r->ovf = s1.ovf[r->idx] - s0.ovf[r->idx];
	r->pmis = s1.pmis - s0.pmis;
	r->s0 = s0;
	r->s1 = s1;
	r->handler_lost = s1.lost - s0.lost;
	r->ring_lost = pmu_sampling_ring_lost(&s);
	r->lvt_after = pmi_lvt_read();
	pmu_sampling_drain(&s, keep_line, r, visit, r, &r->tally);
}

static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* The checks of one run, on the test's CPU. */
static void samp_check(const struct samp_run *r)
{
	uint64_t us = tsc_to_us(r->t1 - r->t0);

	if (!check(r->err == PMU_OK, "cpu %u: sampling session failed (%d): %s", r->cpu, r->err, r->why))
		return;
	check(absdiff(r->tally.samples, SAMP_K) <= 1,
	      "cpu %u: expected %u +-1 samples (%lu instructions / period %lu), drained %lu (PMIs %lu, overflows %lu)",
	      r->cpu, SAMP_K, SAMP_LOOPS * PMU_LOOP_INSNS_PER_ITER, SAMP_PERIOD, r->tally.samples, r->pmis,
	      r->ovf);
	check(r->tally.samples == r->ovf, "cpu %u: %lu overflows handled but %lu samples drained", r->cpu,
	      r->ovf, r->tally.samples);
	struct dev_obs po = { .kind = DEV_OBS_PMIS, .pc = pmu_cpu_of(r->cpu) };
	po.pmis.overflows = r->ovf;
	po.pmis.pmis = r->pmis;
	po.pmis.spurious = r->s1.spurious - r->s0.spurious;
	po.pmis.unclaimed = r->s1.unclaimed - r->s0.unclaimed;
	check_or_deviation(
		r->pmis == r->ovf, &po,
		"cpu %u: %lu PMIs for %lu overflows (%lu found GLOBAL_STATUS empty, %lu only foreign bits)",
		r->cpu, r->pmis, r->ovf, po.pmis.spurious, po.pmis.unclaimed);
	check(r->handler_lost == 0 && r->ring_lost == 0 && r->tally.lost == 0,
	      "cpu %u: expected no lost samples, handler %lu, ring %lu, LOST records %lu", r->cpu,
	      r->handler_lost, r->ring_lost, r->tally.lost);
	check(r->tally.bad == 0, "cpu %u: %lu unreadable records", r->cpu, r->tally.bad);
	check(r->bad_rip == 0, "cpu %u: %lu samples with RIP outside the loop [%p, %p], first %#lx", r->cpu,
	      r->bad_rip, (void *)pmu_sampling_loop, (const void *)pmu_sampling_loop_end, r->first_bad_rip);
	check(r->bad_field == 0, "cpu %u: %lu samples with a wrong field, first: %s", r->cpu, r->bad_field,
	      r->bad_what);
	check(r->tsc_order == 0 && r->value_order == 0,
	      "cpu %u: TSC went backwards %lu times, cycle values %lu times between samples", r->cpu,
	      r->tsc_order, r->value_order);
	check(r->count >= SAMP_LOOPS * PMU_LOOP_INSNS_PER_ITER,
	      "cpu %u: the sampled counter counted %lu instructions, fewer than the loop's %lu", r->cpu,
	      r->count, SAMP_LOOPS * PMU_LOOP_INSNS_PER_ITER);
	check((r->lvt_after & LAPIC_LVT_WRITABLE) == pmi_lvt_value(r->mode),
	      "cpu %u: LVT entry %#x after %lu PMIs, expected %#x (a missed unmask)", r->cpu, r->lvt_after,
	      r->pmis, pmi_lvt_value(r->mode));
	diag("cpu %u, %s delivery: %lu samples in %lu us (%lu samples/s), lost 0 at that rate", r->cpu,
	     pmi_delivery_name(r->mode), r->tally.samples, us, us ? r->tally.samples * 1000000 / us : 0);
}

/* PMIs, and two counters for the sessions' instructions and cycles (a VMM
 * may give a single one). */
static const char *needs_pmi_two_counters(void)
{
	const char *why = pmu_needs_pmi();

	return why ? why : pmu_test_few_counters(pmu_cpu_ensure(), 2);
}

KTEST("pmu.sampling", period_on_each_cpu, needs_pmi_two_counters, KTEST_PER_CPU,
      "C/P +-1 samples over C events, none lost, every RIP in the loop")
{
	static const enum pmi_delivery modes[] = { PMI_DELIVERY_FIXED, PMI_DELIVERY_NMI };
	enum pmi_delivery was = pmi_delivery();
	struct samp_run run, *r = &run;

	for (unsigned m = 0; m < 2; m++) {
		if (!check(pmi_set_delivery(modes[m]) == 0, "%s delivery: LVT reads %#x",
			   pmi_delivery_name(modes[m]), pmi_lvt_read()))
			continue;
		*r = (struct samp_run){ 0 };
		samp_run(r, cpu_ring(), PMU_SAMPLING_CTL_SIZE + SAMP_RING_DATA);
		samp_check(r);
	}
	for (unsigned i = 0; i < r->nlines; i++)
		diag("%s", r->lines[i]);
	pmi_set_delivery(was);
}

/* One result per CPU, from boot memory (too big for .bss at MAX_CPUS). */
static struct samp_run *all_runs;

static void samp_on_this_cpu(void *arg)
{
	(void)arg;
	struct samp_run *r = &all_runs[this_cpu()->cpu];

	*r = (struct samp_run){ 0 };
	if (!pmi_ready())
		pmi_init_cpu();
	samp_run(r, cpu_ring(), PMU_SAMPLING_CTL_SIZE + SAMP_RING_DATA);
}

/* Every CPU samples at once: per CPU the same count, nothing lost, every
 * LVT entry re-armed. */
KTEST("pmu.sampling", all_cpus_at_once, needs_pmi_two_counters, 0,
      "every CPU sampling at once: per-CPU counts add up, LVTs re-armed")
{
	unsigned n = smp_num_cpus();
	uint64_t lo = ~0ull, hi = 0;

	if (!all_runs)
		all_runs = bootmem_alloc(MAX_CPUS * sizeof(*all_runs));
	on_each_cpu(samp_on_this_cpu, NULL);
	for (unsigned c = 0; c < n; c++) {
		struct samp_run *r = &all_runs[c];
		if (pmu_cpu_of(c) && !pmu_cpu_counts(pmu_cpu_of(c))) {
			diag("cpu %u: not checked: %s", c, pmu_cpu_reason(pmu_cpu_of(c)));
			continue;
		}
		samp_check(r);
		if (r->err == PMU_OK) {
			lo = r->tally.samples < lo ? r->tally.samples : lo;
			hi = r->tally.samples > hi ? r->tally.samples : hi;
		}
	}
	if (hi >= lo)
		check(hi - lo <= 2, "samples per CPU range %lu..%lu for the same workload: expected within 2",
		      lo, hi);
}

/* A ring with room for four samples: the rest are dropped, counted by
 * the handler and the ring alike, and reported by one LOST record before
 * the next sample that fits; drained + lost = overflows, exactly. */
KTEST("pmu.sampling", lost_when_ring_full, needs_pmi_two_counters, KTEST_PER_CPU,
      "a ring too small: samples drained + lost = overflows, exactly")
{
	struct pmu_event ins, cyc;
	struct pmu_event *g[] = { &ins, &cyc };
	struct pmu_sampling s;
	struct pmu_sampling_tally t = { 0 };
	struct pmu_pmi_stats s0, s1;
	unsigned cpu = this_cpu()->cpu;
	uint64_t first;
	int err;

	pmu_test_event(&ins, PMU_ARCH_INSTRUCTIONS);
	ins.attr.period = SAMP_PERIOD;
	pmu_test_event(&cyc, PMU_ARCH_CYCLES);
	pmu_pmi_get_stats(cpu, &s0);
	err = pmu_sampling_start(&s, g, 2, cpu_ring(), PMU_SAMPLING_CTL_SIZE + SAMP_SMALL_DATA, false);
	if (!check(err == PMU_OK, "sampling session failed (%d): %s", err, s.reason))
		return;
	int idx = ins.hw.idx;
	pmu_sampling_loop(SAMP_LOOPS);
	/* Drain while running, then one period more (SAMP_K + 1.5 periods in
	 * all): the one sample that fits again has the LOST record in front. */
	first = pmu_sampling_drain(&s, NULL, NULL, NULL, NULL, &t);
	pmu_sampling_loop(SAMP_PERIOD / PMU_LOOP_INSNS_PER_ITER);
	pmu_sampling_stop(&s);
	pmu_sampling_drain(&s, NULL, NULL, NULL, NULL, &t);
	pmu_pmi_get_stats(cpu, &s1);
	uint64_t ovf = s1.ovf[idx] - s0.ovf[idx], lost = s1.lost - s0.lost;
	check(first == SAMP_SMALL_DATA / pmu_sample_size(1),
	      "expected the %u-byte ring to hold exactly %lu samples of %lu bytes, drained %lu",
	      SAMP_SMALL_DATA, (uint64_t)(SAMP_SMALL_DATA / pmu_sample_size(1)), (uint64_t)pmu_sample_size(1),
	      first);
	check(lost == pmu_sampling_ring_lost(&s), "handler counted %lu lost, the ring %lu", lost,
	      pmu_sampling_ring_lost(&s));
	check(t.lost_records == 1 && t.lost == lost,
	      "expected one LOST record for %lu, saw %lu records for %lu", lost, t.lost_records, t.lost);
	check(t.samples + lost == ovf, "drained %lu + lost %lu = %lu, expected the %lu overflows handled",
	      t.samples, lost, t.samples + lost, ovf);
	check(absdiff(ovf, SAMP_K + 1) <= 1, "expected %u +-1 overflows, saw %lu", SAMP_K + 1, ovf);
	diag("ring of %u bytes: %lu samples drained, %lu lost, %lu overflows", SAMP_SMALL_DATA, t.samples,
	     lost, ovf);
}
