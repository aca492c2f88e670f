/* Host tests of the PMI handler (pmu/pmi.c) and sampling sessions
 * (pmu/sampling.c) against the SDM model: the handler's exact MSR writes,
 * overflow -> status -> clear, PMIs only with INT, freeze on PMI, STATUS_SET,
 * spurious PMIs, exact period reloads, sample records and LOST accounting. */
#include "arch/x86/msr.h"
#include "lib/ringbuf.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"
#include "pmu/sample_record.h"
#include "tests/host/hosttest.h"
#include "tests/host/pmu_model.h"

#define MASK48 ((1ull << 48) - 1)
#define RING_DATA 16384u

/* What the modelled interrupt reports as the interrupted context. */
static uint64_t cur_rip = 0xffffffff80101234ull;
static unsigned cur_from;
/* Ticks of one event each, and the tick at which each PMI came. */
static uint64_t ticks;
static uint64_t pmi_ticks[64];
static unsigned npmi_ticks;

static uint8_t ring_mem[PMU_SAMPLING_CTL_SIZE + RING_DATA] __attribute__((aligned(4096)));

static void model_pmi(void *arg)
{
	(void)arg;
	if (npmi_ticks < 64)
		pmi_ticks[npmi_ticks++] = ticks;
	pmu_pmi_handle(cur_rip, cur_from);
}

static void pmi_reset_cpu(void *arg)
{
	(void)arg;
	pmu_pmi_set_ring(NULL, 0);
	pmu_pmi_set_observer(NULL, NULL);
	pmu_pmi_reset_stats();
}

static void boot(enum model_profile p, bool full_width)
{
	model_init(p, full_width);
	pmu_init_all(&model_probe_opts, model_run_on);
	for (unsigned c = 0; c < model_ncpus(); c++)
		model_run_on(c, pmi_reset_cpu, NULL);
	model_set_cpu(0);
	model_set_pmi_handler(model_pmi, NULL);
	model_trace_clear();
	for (unsigned c = 0; c < model_ncpus(); c++)
		model_pmi_clear(c);
	cur_from = 0;
	ticks = 0;
	npmi_ticks = 0;
}

static void arch_ev(struct pmu_event *ev, enum pmu_arch_event e, uint64_t period, bool intr)
{
	struct pmu_event_attr a;
	pmu_attr_arch(&a, e);
	a.period = period;
	a.intr = intr;
	pmu_event_init(ev, &a, pmu_arch_events[e].name);
}

static struct pmu_pmi_stats stats(unsigned cpu)
{
	struct pmu_pmi_stats s;
	pmu_pmi_get_stats(cpu, &s);
	return s;
}

/* n instructions, one per cycle, one tick each: overflows are seen at the
 * exact event that wraps the counter. */
static void tick_insns(uint64_t n)
{
	struct model_work w = { .instructions = 1, .cycles = 1, .ref_cycles = 1, .slots = 1 };
	for (uint64_t i = 0; i < n; i++) {
		ticks++;
		model_tick(&w);
	}
}

static void tick_bulk(uint64_t insns)
{
	struct model_work w = { .instructions = insns, .cycles = insns };
	model_tick(&w);
}

static void check_write(size_t i, uint32_t msr, uint64_t val)
{
	const struct model_write *w = model_trace_at(i);
	HT_CHECK(w && w->msr == msr && w->val == val && !w->fault, "write %zu: expected %#x<-%#llx, trace %s",
		 i, msr, (unsigned long long)val, model_trace_text());
}

/* The handler's writes for one GP overflow: reload through the full-width
 * alias, then OVF_CTRL with exactly that counter's bit. */
HT_TEST(handler_msr_sequence_gp_full_width)
{
	struct pmu_event ev;
	boot(MODEL_V4, true);
	arch_ev(&ev, PMU_ARCH_INSTRUCTIONS, 1000, true);
	HT_CHECK_EQ(pmu_event_add_idx(&ev, 2), PMU_OK);
	HT_CHECK_EQ(pmu_event_enable(&ev), PMU_OK);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PMC0 + 2), (0 - 1000ull) & MASK48);
	HT_CHECK_EQ((model_peek(0, MSR_IA32_PERFEVTSEL0 + 2) >> PERFEVTSEL_INT_BIT) & 1, 1);
	model_trace_clear();
	tick_bulk(1003); /* wraps to 3 */
	HT_CHECK_EQ(model_pmi_count(0), 1);
	HT_CHECK_EQ(model_trace_len(), 2);
	check_write(0, MSR_IA32_A_PMC0 + 2, (0 - 1000ull) & MASK48);
	check_write(1, MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1ull << 2);
	HT_CHECK_EQ(pmu_event_count(&ev), 1003);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PERF_GLOBAL_STATUS), 0);
	struct pmu_pmi_stats s = stats(0);
	HT_CHECK_EQ(s.pmis, 1);
	HT_CHECK_EQ(s.overflows, 1);
	HT_CHECK_EQ(s.ovf[2], 1);
	HT_CHECK_EQ(s.spurious, 0);
	HT_CHECK_EQ(s.last_status, 1ull << 2);
	HT_CHECK_EQ(s.last_cleared, 1ull << 2);
	HT_CHECK_EQ(s.last_rip, cur_rip);
	HT_CHECK_EQ(s.samples, 0); /* no ring set: nothing written */
	pmu_event_del(&ev);
}

HT_TEST(handler_msr_sequence_legacy_and_fixed)
{
	struct pmu_event g, f;
	boot(MODEL_V2, false);
	arch_ev(&g, PMU_ARCH_BRANCHES, 500, true);
	HT_CHECK_EQ(pmu_event_add_idx(&g, 1), PMU_OK);
	HT_CHECK_EQ(pmu_event_enable(&g), PMU_OK);
	model_trace_clear();
	model_tick_loop(600); /* 600 branches */
	HT_CHECK_EQ(model_trace_len(), 2);
	/* IA32_PMC1: EAX only, sign-extended by the CPU. */
	check_write(0, MSR_IA32_PMC0 + 1, (uint32_t)(0 - 500u));
	check_write(1, MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1ull << 1);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PMC0 + 1), (0 - 500ull) & ((1ull << 40) - 1));
	HT_CHECK_EQ(pmu_event_count(&g), 600);
	pmu_event_del(&g);

	arch_ev(&f, PMU_ARCH_INSTRUCTIONS, 2000, true);
	HT_CHECK_EQ(pmu_event_add_idx(&f, PMU_IDX_FIXED(0)), PMU_OK);
	HT_CHECK_EQ((f.hw.config >> FIXED_CTR_CTRL_PMI_BIT) & 1, 1);
	HT_CHECK_EQ(pmu_event_enable(&f), PMU_OK);
	model_trace_clear();
	tick_bulk(2001);
	HT_CHECK_EQ(model_trace_len(), 2);
	check_write(0, MSR_IA32_FIXED_CTR0, (0 - 2000ull) & ((1ull << 40) - 1));
	check_write(1, MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1ull << 32);
	HT_CHECK_EQ(stats(0).ovf[PMU_IDX_FIXED(0)], 1);
	HT_CHECK_EQ(pmu_event_count(&f), 2001);
	pmu_event_del(&f);
}

/* Two counters that wrap in the same tick: one PMI, both handled, one
 * OVF_CTRL write with both bits. A bit of a counter we do not own stays. */
HT_TEST(two_overflows_one_pmi_foreign_bit_kept)
{
	struct pmu_event a, b;
	boot(MODEL_V4, true);
	arch_ev(&a, PMU_ARCH_INSTRUCTIONS, 100, true);
	arch_ev(&b, PMU_ARCH_CYCLES, 100, true);
	HT_CHECK_EQ(pmu_event_add_idx(&a, 0), PMU_OK);
	HT_CHECK_EQ(pmu_event_add_idx(&b, PMU_IDX_FIXED(1)), PMU_OK);
	struct pmu_event *g[] = { &a, &b };
	HT_CHECK_EQ(pmu_events_enable(g, 2), PMU_OK);
	model_poke(0, MSR_IA32_PERF_GLOBAL_STATUS, 1ull << 3); /* PMC3: not ours */
	model_trace_clear();
	tick_bulk(150);
	HT_CHECK_EQ(model_pmi_count(0), 1);
	HT_CHECK_EQ(model_trace_len(), 3);
	check_write(0, MSR_IA32_A_PMC0, (0 - 100ull) & MASK48);
	check_write(1, MSR_IA32_FIXED_CTR0 + 1, (0 - 100ull) & MASK48);
	check_write(2, MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1ull | 1ull << 33);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PERF_GLOBAL_STATUS), 1ull << 3);
	HT_CHECK_EQ(stats(0).last_status, 1ull | 1ull << 33 | 1ull << 3);
	HT_CHECK_EQ(stats(0).overflows, 2);
	pmu_events_del(g, 2);
}

/* INT clear: the counter wraps, its status bit sets, no PMI; OVF_CTRL
 * clears it. With INT set: exactly one PMI per overflow. */
HT_TEST(pmi_only_with_int)
{
	struct pmu_event ev;
	boot(MODEL_V4, true);
	arch_ev(&ev, PMU_ARCH_INSTRUCTIONS, 1000, false);
	HT_CHECK_EQ(pmu_event_add_idx(&ev, 0), PMU_OK);
	HT_CHECK_EQ(pmu_event_enable(&ev), PMU_OK);
	model_trace_clear();
	tick_bulk(1500);
	HT_CHECK_EQ(model_pmi_count(0), 0);
	HT_CHECK_EQ(stats(0).pmis, 0);
	HT_CHECK_EQ(model_trace_len(), 0);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PERF_GLOBAL_STATUS), 1);
	HT_CHECK_EQ(pmu_hw_wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1), 0);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PERF_GLOBAL_STATUS), 0);
	pmu_event_del(&ev);

	arch_ev(&ev, PMU_ARCH_INSTRUCTIONS, 1000, true);
	HT_CHECK_EQ(pmu_event_add_idx(&ev, 0), PMU_OK);
	HT_CHECK_EQ(pmu_event_enable(&ev), PMU_OK);
	for (int i = 0; i < 10; i++)
		tick_bulk(1000);
	HT_CHECK_EQ(model_pmi_count(0), 10);
	HT_CHECK_EQ(stats(0).pmis, 10);
	HT_CHECK_EQ(stats(0).ovf[0], 10);
	HT_CHECK_EQ(pmu_event_count(&ev), 10000);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PERF_GLOBAL_STATUS), 0);
	pmu_event_del(&ev);
}

/* After a reload, the next PMI comes after exactly `period` more events:
 * driven one event per tick, PMIs land on ticks P, 2P, 3P, ... */
HT_TEST(period_reload_exact)
{
	const uint64_t P = 37;
	struct pmu_event ev;
	boot(MODEL_V4, true);
	arch_ev(&ev, PMU_ARCH_INSTRUCTIONS, P, true);
	HT_CHECK_EQ(pmu_event_add_idx(&ev, 1), PMU_OK);
	HT_CHECK_EQ(pmu_event_enable(&ev), PMU_OK);
	tick_insns(10 * P + P / 2);
	HT_CHECK_EQ(npmi_ticks, 10);
	for (unsigned i = 0; i < npmi_ticks; i++)
		HT_CHECK(pmi_ticks[i] == (i + 1) * P, "PMI %u: expected at event %llu, came at %llu", i,
			 (unsigned long long)((i + 1) * P), (unsigned long long)pmi_ticks[i]);
	HT_CHECK_EQ(pmu_event_update(&ev), 10 * P + P / 2);
	pmu_event_del(&ev);
}

struct observed {
	uint64_t status, before, after;
	unsigned calls;
};

/* Inside the handler: counters frozen means more work changes nothing. */
static void observe_frozen(void *ctx, uint64_t status)
{
	struct observed *o = ctx;
	o->calls++;
	o->status = status;
	o->before = model_peek(0, MSR_IA32_FIXED_CTR0 + 1);
	model_tick_loop(100);
	o->after = model_peek(0, MSR_IA32_FIXED_CTR0 + 1);
}

HT_TEST(freeze_on_pmi_v4_stops_counters_until_cleared)
{
	struct pmu_event a, c;
	struct observed o = { 0 };
	boot(MODEL_V4, true);
	HT_CHECK_EQ(pmu_pmi_set_freeze(true), PMU_OK);
	HT_CHECK_EQ((model_peek(0, MSR_IA32_DEBUGCTL) >> DEBUGCTL_FREEZE_PERFMON_ON_PMI_BIT) & 1, 1);
	arch_ev(&a, PMU_ARCH_INSTRUCTIONS, 1000, true);
	arch_ev(&c, PMU_ARCH_CYCLES, 0, false);
	HT_CHECK_EQ(pmu_event_add_idx(&a, 0), PMU_OK);
	HT_CHECK_EQ(pmu_event_add_idx(&c, PMU_IDX_FIXED(1)), PMU_OK);
	struct pmu_event *g[] = { &a, &c };
	HT_CHECK_EQ(pmu_events_enable(g, 2), PMU_OK);
	pmu_pmi_set_observer(observe_frozen, &o);
	model_trace_clear();
	tick_bulk(1001);
	HT_CHECK_EQ(o.calls, 1);
	HT_CHECK_EQ(o.status, 1ull | BIT(PERF_GLOBAL_STATUS_CTR_FRZ_BIT));
	HT_CHECK(o.before == o.after, "frozen FIXED_CTR1 moved inside the handler: %llu -> %llu",
		 (unsigned long long)o.before, (unsigned long long)o.after);
	HT_CHECK_EQ(o.before, 1001);
	HT_CHECK_EQ(model_trace_len(), 2);
	check_write(0, MSR_IA32_A_PMC0, (0 - 1000ull) & MASK48);
	check_write(1, MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1ull | BIT(PERF_GLOBAL_STATUS_CTR_FRZ_BIT));
	HT_CHECK_EQ(stats(0).frozen, 1);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PERF_GLOBAL_STATUS), 0);
	/* Unfrozen by that write: counting goes on. */
	tick_bulk(10);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_FIXED_CTR0 + 1), 1011);
	pmu_pmi_set_observer(NULL, NULL);
	HT_CHECK_EQ(pmu_pmi_set_freeze(false), PMU_OK);
	HT_CHECK_EQ((model_peek(0, MSR_IA32_DEBUGCTL) >> DEBUGCTL_FREEZE_PERFMON_ON_PMI_BIT) & 1, 0);
	pmu_events_del(g, 2);
}

/* Before v4 the freeze clears GLOBAL_CTRL: the handler puts it back last. */
HT_TEST(freeze_on_pmi_legacy_restores_global_ctrl)
{
	struct pmu_event a, c;
	boot(MODEL_V2, false);
	HT_CHECK_EQ(pmu_pmi_set_freeze(true), PMU_OK);
	arch_ev(&a, PMU_ARCH_INSTRUCTIONS, 1000, true);
	arch_ev(&c, PMU_ARCH_CYCLES, 0, false);
	HT_CHECK_EQ(pmu_event_add_idx(&a, 0), PMU_OK);
	HT_CHECK_EQ(pmu_event_add_idx(&c, PMU_IDX_FIXED(1)), PMU_OK);
	struct pmu_event *g[] = { &a, &c };
	HT_CHECK_EQ(pmu_events_enable(g, 2), PMU_OK);
	uint64_t gctl = model_peek(0, MSR_IA32_PERF_GLOBAL_CTRL);
	HT_CHECK_EQ(gctl, 1ull | 1ull << 33);
	model_trace_clear();
	tick_bulk(1001);
	HT_CHECK_EQ(model_trace_len(), 3);
	check_write(0, MSR_IA32_PMC0, (uint32_t)(0 - 1000u));
	check_write(1, MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1);
	check_write(2, MSR_IA32_PERF_GLOBAL_CTRL, gctl);
	tick_bulk(10);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_FIXED_CTR0 + 1), 1011);
	HT_CHECK_EQ(pmu_pmi_set_freeze(false), PMU_OK);
	pmu_events_del(g, 2);

	boot(MODEL_V1, false);
	HT_CHECK_EQ(pmu_pmi_set_freeze(true), PMU_E_UNSUPPORTED);
}

/* STATUS_SET (v4) raises a bit with no overflow; the handler claims only
 * counters that hold our events. Before v4 there is no such MSR. */
HT_TEST(status_set_v4)
{
	struct pmu_event ev;
	boot(MODEL_V4, true);
	model_trace_clear();
	HT_CHECK_EQ(pmu_pmi_status_set(1ull << 1), PMU_OK);
	check_write(0, MSR_IA32_PERF_GLOBAL_STATUS_SET, 1ull << 1);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PERF_GLOBAL_STATUS), 1ull << 1);
	HT_CHECK_EQ(model_pmi_count(0), 0);
	model_trace_clear();
	HT_CHECK_EQ(pmu_pmi_handle(cur_rip, 0), 1ull << 1);
	HT_CHECK_EQ(model_trace_len(), 0); /* not ours: not cleared */
	HT_CHECK_EQ(stats(0).unclaimed, 1);
	HT_CHECK_EQ(pmu_hw_wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1ull << 1), 0);

	/* On a counter we own it is handled like an overflow. */
	arch_ev(&ev, PMU_ARCH_INSTRUCTIONS, 1000, true);
	HT_CHECK_EQ(pmu_event_add_idx(&ev, 1), PMU_OK);
	HT_CHECK_EQ(pmu_event_enable(&ev), PMU_OK);
	HT_CHECK_EQ(pmu_pmi_status_set(1ull << 1), PMU_OK);
	model_trace_clear();
	HT_CHECK_EQ(pmu_pmi_handle(cur_rip, 0), 1ull << 1);
	HT_CHECK_EQ(model_trace_len(), 2);
	check_write(1, MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1ull << 1);
	HT_CHECK_EQ(stats(0).ovf[1], 1);
	pmu_event_del(&ev);

	boot(MODEL_V2, false);
	HT_CHECK_EQ(pmu_pmi_status_set(1), PMU_E_UNSUPPORTED);
	HT_CHECK_EQ(model_trace_len(), 0);
}

HT_TEST(spurious_counted_and_no_pmu_safe)
{
	boot(MODEL_V4, true);
	HT_CHECK_EQ(pmu_pmi_handle(0x1000, PMU_PMI_FROM_NMI), 0);
	HT_CHECK_EQ(pmu_pmi_handle(0x2000, 0), 0);
	struct pmu_pmi_stats s = stats(0);
	HT_CHECK_EQ(s.pmis, 2);
	HT_CHECK_EQ(s.spurious, 2);
	HT_CHECK_EQ(s.faults, 0);
	HT_CHECK_EQ(s.last_rip, 0); /* an empty PMI leaves the last real one's figures */
	HT_CHECK_EQ(model_trace_len(), 0);
	HT_CHECK_EQ(stats(1).pmis, 0); /* per CPU */

	boot(MODEL_NO_PMU, false);
	HT_CHECK_EQ(pmu_pmi_handle(0x1000, 0), 0);
	HT_CHECK_EQ(stats(0).spurious, 1);
	HT_CHECK_EQ(stats(0).faults, 0); /* no MSR touched */
	HT_CHECK_EQ(model_trace_len(), 0);
}

/* Version 1 has no GLOBAL_STATUS: the overflow is inferred from the
 * sampling counter's cleared top bit; no OVF_CTRL write exists. */
HT_TEST(v1_overflow_inferred)
{
	struct pmu_event ev;
	boot(MODEL_V1, false);
	arch_ev(&ev, PMU_ARCH_INSTRUCTIONS, 1000, true);
	HT_CHECK_EQ(pmu_event_add_idx(&ev, 0), PMU_OK);
	HT_CHECK_EQ(pmu_event_enable(&ev), PMU_OK);
	model_trace_clear();
	tick_bulk(1004);
	HT_CHECK_EQ(model_pmi_count(0), 1);
	HT_CHECK_EQ(stats(0).last_status, 1);
	HT_CHECK_EQ(model_trace_len(), 1);
	check_write(0, MSR_IA32_PMC0, (uint32_t)(0 - 1000u));
	HT_CHECK_EQ(pmu_event_count(&ev), 1004);
	/* Not wrapped yet: nothing inferred, a spurious PMI. */
	HT_CHECK_EQ(pmu_pmi_handle(cur_rip, 0), 0);
	HT_CHECK_EQ(stats(0).spurious, 1);
	pmu_event_del(&ev);
}

struct collect {
	struct pmu_sample s[32];
	struct pmu_sample_value v[32];
	unsigned n;
	char lines[4][700];
	unsigned nlines;
};

static void visit(void *ctx, const struct pmu_sample *smp)
{
	struct collect *c = ctx;
	if (c->n < 32) {
		c->s[c->n] = *smp;
		c->v[c->n] = smp->nr_values ? smp->values[0] : (struct pmu_sample_value){ 0 };
		c->n++;
	}
}

static void line(void *ctx, const char *l)
{
	struct collect *c = ctx;
	if (c->nlines < 4)
		snprintf(c->lines[c->nlines++], sizeof(c->lines[0]), "%s", l);
}

static void hex_of(const void *p, size_t n, char *out)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

/* A session: instructions sampled every P on GP0, cycles counted on
 * FIXED_CTR1 and carried in each sample. Every field of every record is
 * what the model says at the PMI. */
HT_TEST(samples_land_in_ring_with_fields)
{
	const uint64_t P = 50;
	struct pmu_event ins, cyc;
	struct pmu_sampling s;
	struct collect *c = calloc(1, sizeof(*c));
	struct pmu_sampling_tally t = { 0 };

	boot(MODEL_V4, true);
	model_set_cpu(2);
	model_set_tsc(2, 1000000);
	arch_ev(&ins, PMU_ARCH_INSTRUCTIONS, P, false);
	arch_ev(&cyc, PMU_ARCH_CYCLES, 0, false);
	HT_CHECK_EQ(pmu_event_add_idx(&ins, 0), PMU_OK);
	HT_CHECK_EQ(pmu_event_add_idx(&cyc, PMU_IDX_FIXED(1)), PMU_OK);
	struct pmu_event *g[] = { &ins, &cyc };
	/* Placed by the caller without INT: refused, nothing changed. */
	HT_CHECK_EQ(pmu_sampling_start(&s, g, 2, ring_mem, sizeof(ring_mem), false), PMU_E_INVAL);
	HT_CHECK(strstr(s.reason, "without its INT/PMI bit") != NULL, "reason: %s", s.reason);
	pmu_events_del(g, 2);
	arch_ev(&ins, PMU_ARCH_INSTRUCTIONS, P, true);
	HT_CHECK_EQ(pmu_event_add_idx(&ins, 0), PMU_OK);
	HT_CHECK_EQ(pmu_event_add_idx(&cyc, PMU_IDX_FIXED(1)), PMU_OK);
	HT_CHECK(pmu_sampling_start(&s, g, 2, ring_mem, sizeof(ring_mem), false) == PMU_OK, "start: %s",
		 s.reason);
	HT_CHECK_EQ(s.cpu, 2);
	cur_from = PMU_PMI_FROM_USER;
	for (unsigned k = 1; k <= 5; k++) {
		cur_rip = 0x400000 + k;
		tick_insns(P);
	}
	HT_CHECK_EQ(pmu_sampling_stop(&s), PMU_OK);
	HT_CHECK_EQ(pmu_this_cpu()->gp_used, 1); /* placed by the caller: kept */
	HT_CHECK_EQ(pmu_sampling_drain(&s, line, c, visit, c, &t), 5);
	HT_CHECK_EQ(t.samples, 5);
	HT_CHECK_EQ(t.lost, 0);
	HT_CHECK_EQ(t.bad, 0);
	HT_CHECK_EQ(c->n, 5);
	for (unsigned k = 0; k < c->n; k++) {
		const struct pmu_sample *p = &c->s[k];
		HT_CHECK_EQ(p->hdr.type, RB_RECORD_SAMPLE);
		HT_CHECK_EQ(p->hdr.misc, PMU_SAMPLE_MISC_USER);
		HT_CHECK_EQ(p->hdr.size, pmu_sample_size(1));
		HT_CHECK_EQ(p->cpu, 2);
		HT_CHECK_EQ(p->idx, 0);
		HT_CHECK_EQ(p->tsc, 1000000 + (k + 1) * P); /* one cycle per tick */
		HT_CHECK_EQ(p->rip, 0x400000 + k + 1);
		HT_CHECK_EQ(p->period, P);
		HT_CHECK_EQ(p->nr_values, 1);
		HT_CHECK_EQ(c->v[k].idx, PMU_IDX_FIXED(1));
		HT_CHECK_EQ(c->v[k].value, (k + 1) * P);
	}
	/* The first line is the first record in hex, "sample: " in front. */
	union {
		struct pmu_sample s;
		uint8_t b[64];
	} rec = { .s = c->s[0] };
	rec.s.values[0] = c->v[0];
	char want[200] = "sample: ";
	hex_of(&rec, pmu_sample_size(1), want + 8);
	HT_CHECK_EQ(c->nlines, 4);
	HT_CHECK_STR(c->lines[0], want);
	HT_CHECK_EQ(stats(2).samples, 5);
	HT_CHECK_EQ(stats(0).pmis, 0);
	pmu_events_del(g, 2);
	free(c);
}

/* A ring of 256 bytes holds five 48-byte samples: the next five are lost,
 * counted by the handler and the ring alike, and after a drain the next
 * sample is preceded by one LOST record carrying 5. */
HT_TEST(lost_when_ring_full)
{
	const uint64_t P = 10;
	struct pmu_event ins;
	struct pmu_sampling s;
	struct pmu_sampling_tally t = { 0 };

	boot(MODEL_V4, true);
	arch_ev(&ins, PMU_ARCH_INSTRUCTIONS, P, true);
	struct pmu_event *g[] = { &ins };
	HT_CHECK(pmu_sampling_start(&s, g, 1, ring_mem, PMU_SAMPLING_CTL_SIZE + 256, false) == PMU_OK,
		 "start: %s", s.reason);
	HT_CHECK(ins.hw.idx >= 0, "placed by start");
	tick_insns(10 * P);
	HT_CHECK_EQ(stats(0).overflows, 10);
	HT_CHECK_EQ(stats(0).samples, 5);
	HT_CHECK_EQ(stats(0).lost, 5);
	HT_CHECK_EQ(pmu_sampling_ring_lost(&s), 5);
	HT_CHECK_EQ(pmu_sampling_drain(&s, NULL, NULL, NULL, NULL, &t), 5);
	HT_CHECK_EQ(t.samples, 5);
	HT_CHECK_EQ(t.lost_records, 0);
	tick_insns(P);
	HT_CHECK_EQ(pmu_sampling_drain(&s, NULL, NULL, NULL, NULL, &t), 2);
	HT_CHECK_EQ(t.samples, 6);
	HT_CHECK_EQ(t.lost_records, 1);
	HT_CHECK_EQ(t.lost, 5);
	HT_CHECK_EQ(stats(0).samples + stats(0).lost, stats(0).overflows);
	HT_CHECK_EQ(pmu_sampling_stop(&s), PMU_OK);
	HT_CHECK_EQ(ins.hw.idx, -1); /* start placed it: stop freed it */
	HT_CHECK_EQ(pmu_this_cpu()->gp_used | pmu_this_cpu()->fixed_used, 0);
}

/* Sessions on two CPUs: each CPU's PMIs and samples stay its own; a CPU
 * without a session sees no register change at all. */
HT_TEST(per_cpu_isolation)
{
	const uint64_t P = 20;
	static uint8_t mem1[PMU_SAMPLING_CTL_SIZE + 4096] __attribute__((aligned(4096)));
	struct pmu_event a0, a1;
	struct pmu_sampling s0, s1;
	struct pmu_sampling_tally t0 = { 0 }, t1 = { 0 };
	uint32_t regs[] = { MSR_IA32_PMC0,
			    MSR_IA32_PMC0 + 1,
			    MSR_IA32_PERFEVTSEL0,
			    MSR_IA32_FIXED_CTR0,
			    MSR_IA32_FIXED_CTR_CTRL,
			    MSR_IA32_PERF_GLOBAL_CTRL,
			    MSR_IA32_PERF_GLOBAL_STATUS };
	uint64_t before[7];

	boot(MODEL_V4, true);
	for (int i = 0; i < 7; i++)
		before[i] = model_peek(3, regs[i]);
	arch_ev(&a0, PMU_ARCH_INSTRUCTIONS, P, true);
	arch_ev(&a1, PMU_ARCH_INSTRUCTIONS, P, true);
	struct pmu_event *g0[] = { &a0 }, *g1[] = { &a1 };
	model_set_cpu(0);
	HT_CHECK(pmu_sampling_start(&s0, g0, 1, ring_mem, sizeof(ring_mem), false) == PMU_OK, "%s",
		 s0.reason);
	model_set_cpu(1);
	HT_CHECK(pmu_sampling_start(&s1, g1, 1, mem1, sizeof(mem1), false) == PMU_OK, "%s", s1.reason);
	tick_insns(3 * P);
	model_set_cpu(0);
	tick_insns(7 * P);
	HT_CHECK_EQ(pmu_sampling_stop(&s0), PMU_OK);
	model_set_cpu(1);
	HT_CHECK_EQ(pmu_sampling_stop(&s1), PMU_OK);
	model_set_cpu(0);
	pmu_sampling_drain(&s0, NULL, NULL, NULL, NULL, &t0);
	pmu_sampling_drain(&s1, NULL, NULL, NULL, NULL, &t1);
	HT_CHECK_EQ(t0.samples, 7);
	HT_CHECK_EQ(t1.samples, 3);
	HT_CHECK_EQ(stats(0).pmis, 7);
	HT_CHECK_EQ(stats(1).pmis, 3);
	HT_CHECK_EQ(model_pmi_count(0), 7);
	HT_CHECK_EQ(model_pmi_count(1), 3);
	HT_CHECK_EQ(stats(3).pmis, 0);
	for (int i = 0; i < 7; i++)
		HT_CHECK(model_peek(3, regs[i]) == before[i], "CPU 3 MSR %#x changed: %#llx -> %#llx",
			 regs[i], (unsigned long long)before[i], (unsigned long long)model_peek(3, regs[i]));
}

HT_TEST(sampling_start_refusals)
{
	struct pmu_event c, big;
	struct pmu_sampling s;
	boot(MODEL_V4, false); /* legacy 32-bit GP writes */
	arch_ev(&c, PMU_ARCH_CYCLES, 0, false);
	struct pmu_event *g[] = { &c };
	HT_CHECK_EQ(pmu_sampling_start(&s, g, 1, ring_mem, sizeof(ring_mem), false), PMU_E_INVAL);
	HT_CHECK_STR(s.reason, "no event has a period: nothing would be sampled");
	c.attr.period = 100;
	HT_CHECK_EQ(pmu_sampling_start(&s, g, 1, ring_mem, PMU_SAMPLING_CTL_SIZE + 1000, false), PMU_E_INVAL);
	HT_CHECK(strstr(s.reason, "power-of-two data area") != NULL, "reason: %s", s.reason);
	HT_CHECK_EQ(c.hw.idx, -1);

	/* 2^40 cannot be preloaded through IA32_PMCx (bit 31 sign-extends):
	 * refused when the group starts, nothing left placed. */
	arch_ev(&big, PMU_ARCH_BRANCHES, 1ull << 40, false);
	struct pmu_event *gb[] = { &big };
	HT_CHECK_EQ(pmu_sampling_start(&s, gb, 1, ring_mem, sizeof(ring_mem), false), PMU_E_UNSUPPORTED);
	HT_CHECK(strstr(s.reason, "legacy writes sign-extend") != NULL, "reason: %s", s.reason);
	HT_CHECK_EQ(big.hw.idx, -1);
	HT_CHECK_EQ(pmu_this_cpu()->gp_used, 0);
	HT_CHECK_EQ(pmu_sampling_stop(&s), PMU_E_STATE);
}

HT_MAIN("pmu_pmi")

/* The reload ABA: every PMI reloads the counter to -P and records -P as
 * the last value read. A read that loaded that -P, ran RDPMC, and was then
 * interrupted by an overflow PMI (an NMI: nothing masks it) used to find
 * -P again at its compare-and-exchange, succeed on the stale snapshot,
 * add the pre-overflow span a second time and leave prev ahead of the
 * counter (the next delta wrapped to ~2^48). The model's RDPMC hook fires
 * the PMI exactly between the read's RDPMC and its exchange. */
static void overflow_in_read(void *arg)
{
	(void)arg;
	tick_insns(600); /* overflows after 500 (PMI, reload to -1000), then 100 */
}

HT_TEST(read_raced_by_period_reload_counts_once)
{
	const uint64_t P = 1000;
	struct pmu_event ev;
	boot(MODEL_V4, true);
	arch_ev(&ev, PMU_ARCH_INSTRUCTIONS, P, true);
	HT_CHECK_EQ(pmu_event_add_idx(&ev, 0), PMU_OK);
	HT_CHECK_EQ(pmu_event_enable(&ev), PMU_OK);
	/* No read yet: the recorded value is the enable's -P, the very value
	 * the reload will store again. */
	tick_insns(500);
	model_set_rdpmc_hook(overflow_in_read, NULL);
	uint64_t got = pmu_event_update(&ev);
	HT_CHECK_EQ(npmi_ticks, 1);
	HT_CHECK(got == 1100, "read raced by the overflow: expected 1100 instructions, got %llu",
		 (unsigned long long)got);
	tick_insns(10);
	got = pmu_event_update(&ev);
	HT_CHECK(got == 1110, "next read: expected 1110 instructions, got %llu (prev ahead of the counter)",
		 (unsigned long long)got);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PMC0), (0 - P + 110) & MASK48);
	pmu_event_del(&ev);
}
