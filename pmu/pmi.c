/* The PMI handler's logic, independent of how the interrupt arrived: read
 * the overflow status, fold in counts, reload sampling periods, write
 * samples, clear what was handled. Registers only through pmu/pmu_hw.h. */
#include "lib/printf.h"
#include "lib/ringbuf.h"
#include "lib/string.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"
#include "pmu/sample_record.h"
#include "pmu/sampling_hw.h"

_Static_assert(PMU_PMI_FROM_USER == PMU_SAMPLE_MISC_USER, "PMI origin bits are the sample's misc bits");
_Static_assert(PMU_PMI_FROM_NMI == PMU_SAMPLE_MISC_NMI, "PMI origin bits are the sample's misc bits");

struct pmi_cpu {
	struct pmu_pmi_stats stats;
	struct rb *ring;
	uint64_t values_mask;
	pmu_pmi_observer_fn observer;
	void *observer_ctx;
	bool freeze;
	struct pmu_sampling_hw *hw; /* PEBS records and branch stacks, or NULL */
};

static struct pmi_cpu pmi_cpus[PMU_MAX_CPUS];

static struct pmi_cpu *pmi_this(void)
{
	unsigned cpu = pmu_hw_cpu();
	return cpu < PMU_MAX_CPUS ? &pmi_cpus[cpu] : NULL;
}

/* The counter bits of the calling CPU's status register. */
static uint64_t counter_bits(const struct pmu_caps *c)
{
	return (uint64_t)c->gp_mask | (uint64_t)c->fixed_mask << PMU_IDX_FIXED_BASE;
}

/* Without IA32_PERF_GLOBAL_STATUS (architectural v1, AMD before
 * PerfMonV2) an overflow can only be inferred, as Linux x86_pmu_handle_irq
 * does: a counter armed with a negative value (a sampling period, or a
 * preset written through pmu_event_write_counter) keeps its top bit until
 * it wraps. So an event with INT whose last known raw value had the top
 * bit set and whose counter now has it clear has overflowed. A counter
 * started at 0 cannot be told apart and is never claimed. */
static uint64_t inferred_status(struct pmu_cpu *pc)
{
	uint64_t st = 0, v;

	for (int idx = 0; idx < PMU_IDX_NR; idx++) {
		struct pmu_event *ev = pc->owner[idx];
		if (!ev || !ev->attr.intr)
			continue;
		uint64_t top = 1ull << (ev->hw.width - 1);
		uint64_t prev = __atomic_load_n(&ev->hw.prev.lo, __ATOMIC_RELAXED);
		if ((prev & top) && pmu_hw_rdmsr(ev->hw.event_base, &v) == 0 && !(v & top))
			st |= pmu_idx_bit(idx);
	}
	return st;
}

/* One sample: this CPU, TSC, the interrupted RIP (or a PEBS record's,
 * misc PMU_SAMPLE_MISC_PRECISE), the counter, its period, the counts of
 * the other events in values_mask, and the branch stack when the session
 * keeps one. */
static void write_sample(struct pmi_cpu *p, struct pmu_cpu *pc, struct pmu_event *ev, uint64_t rip,
			 unsigned from)
{
	/* Room for the largest sample; values[] lives in the bytes after s. */
	union {
		struct pmu_sample s;
		uint8_t bytes[PMU_SAMPLE_MAX_SIZE];
	} rec;
	uint32_t nv = 0;
	size_t size;
	int r;

	memset(&rec, 0, sizeof(rec));
	rec.s.cpu = pc->cpu;
	rec.s.idx = (uint32_t)ev->hw.idx;
	rec.s.tsc = pmu_hw_tsc();
	rec.s.rip = rip;
	rec.s.period = ev->attr.period;
	for (int idx = 0; idx < PMU_IDX_NR && nv < PMU_SAMPLE_MAX_VALUES; idx++) {
		struct pmu_event *o = pc->owner[idx];
		if (idx == ev->hw.idx || !o || !((p->values_mask >> idx) & 1))
			continue;
		rec.s.values[nv].idx = (uint32_t)idx;
		rec.s.values[nv].value = pmu_event_update(o);
		nv++;
	}
	rec.s.nr_values = nv;
	rec.s.version = PMU_SAMPLE_VERSION;
	size = pmu_sample_size(nv);
	if (p->hw && p->hw->branches) {
		struct pmu_sample_branches *b = (struct pmu_sample_branches *)(rec.bytes + size);
		b->nr = pmu_sampling_hw_branches(p->hw, b->entry, PMU_SAMPLE_MAX_BRANCHES);
		size = pmu_sample_size_branches(nv, b->nr);
		from |= PMU_SAMPLE_MISC_BRANCHES;
	}
	r = rb_write(p->ring, RB_RECORD_SAMPLE, (uint16_t)from, (const uint8_t *)&rec + sizeof(rec.s.hdr),
		     size - sizeof(rec.s.hdr));
	if (r >= 0)
		p->stats.samples++;
	else
		p->stats.lost++;
}

/* Fold in the count up to the overflow, then restart the period: the
 * events between the read and the reload are the handler's few
 * instructions, not the workload's. */
static void handle_counter(struct pmi_cpu *p, struct pmu_cpu *pc, struct pmu_event *ev, uint64_t rip,
			   unsigned from)
{
	pmu_event_update(ev);
	if (ev->attr.period) {
		uint64_t start = (0 - ev->attr.period) & pmu_width_mask(ev->hw.width);
		if (pmu_event_write_counter(ev, start) != PMU_OK)
			p->stats.faults++;
		if (p->ring)
			write_sample(p, pc, ev, rip, from);
	}
	p->stats.overflows++;
	p->stats.ovf[ev->hw.idx]++;
}

/* A PEBS record of the session's precise event: one overflow, one sample. */
struct precise_emit {
	struct pmi_cpu *p;
	struct pmu_cpu *pc;
	unsigned from;
};

static void emit_precise(void *ctx, uint64_t rip)
{
	struct precise_emit *e = ctx;
	struct pmu_event *ev = e->p->hw->precise;

	e->p->stats.overflows++;
	e->p->stats.ovf[ev->hw.idx]++;
	if (e->p->ring)
		write_sample(e->p, e->pc, ev, rip, e->from);
}

uint64_t pmu_pmi_handle(uint64_t rip, unsigned from)
{
	struct pmi_cpu *p = pmi_this();
	struct pmu_cpu *pc = pmu_this_cpu();
	const struct pmu_caps *c;
	uint64_t status = 0, handled = 0, clear;

	if (!p)
		return 0;
	p->stats.pmis++;
	if (!pc || !pc->initialised || !pc->ops || !pc->caps.version) {
		/* No PMU we drive: nothing can have overflowed. */
		p->stats.spurious++;
		return 0;
	}
	c = &pc->caps;
	if (c->global_status) {
		if (pmu_hw_rdmsr(c->global_status, &status) != 0)
			p->stats.faults++;
	} else {
		status = inferred_status(pc);
	}
	/* A PMI that finds no status bit is counted, and leaves the last_*
	 * figures to the last one that found something: a second, empty PMI
	 * after an overflow's (KVM before 73554b29bd70) does not hide what
	 * the real one saw. */
	if (status == 0) {
		p->stats.spurious++;
		return 0;
	}
	p->stats.last_status = status;
	p->stats.last_rip = rip;
	p->stats.last_from = from;
	if (status & c->freeze_counters_bit)
		p->stats.frozen++;
	if (p->observer)
		p->observer(p->observer_ctx, status);

	/* Precise sampling: the buffer PMI carries the PEBS records; the
	 * PEBS counter's own bit, if the CPU sets it, is PEBS's (Linux
	 * handle_pmi_common leaves it to the drain too). */
	uint64_t precise_bits = 0;
	if (p->hw && p->hw->precise) {
		struct precise_emit e = { p, pc, (from & PMU_PMI_FROM_NMI) | PMU_SAMPLE_MISC_PRECISE };
		precise_bits = pmu_idx_bit(p->hw->precise->hw.idx);
		uint64_t buffer = pc->ops->precise->buffer_status;
		if (status & buffer) {
			pmu_sampling_hw_precise(p->hw, emit_precise, &e);
			handled |= buffer | (status & precise_bits);
		}
	}
	for (uint64_t bits = status & counter_bits(c) & ~precise_bits; bits; bits &= bits - 1) {
		int idx = __builtin_ctzll(bits);
		struct pmu_event *ev = idx < PMU_IDX_NR ? pc->owner[idx] : NULL;
		if (!ev)
			continue; /* someone else's counter: leave its bit alone */
		handle_counter(p, pc, ev, rip, from);
		handled |= pmu_idx_bit(idx);
	}
	if (!handled)
		p->stats.unclaimed++;

	/* Clear exactly what was handled, plus the frozen bits: on v4 (and
	 * AMD's LbrFreeze) that write is what lets the counters run again
	 * (SDM vol. 3B, "Architectural Performance Monitoring Version 4";
	 * Linux arch/x86/events/amd/core.c amd_pmu_v2_handle_irq). */
	clear = handled | (status & c->freeze_status_bits);
	p->stats.last_cleared = clear;
	if (clear && c->global_ovf && pmu_hw_wrmsr(c->global_ovf, clear) != 0)
		p->stats.faults++;
	/* Before v4, FREEZE_PERFMON_ON_PMI clears GLOBAL_CTRL's enables (SDM
	 * vol. 3B, "IA32_DEBUGCTL MSR", legacy freeze): put them back. */
	if (p->freeze && c->freeze_clears_global_ctrl && c->global_ctrl &&
	    pmu_hw_wrmsr(c->global_ctrl, pc->global_ctrl_shadow) != 0)
		p->stats.faults++;
	if (p->hw)
		pmu_sampling_hw_pmi_done(p->hw);
	return status;
}

void pmu_pmi_get_stats(unsigned cpu, struct pmu_pmi_stats *out)
{
	if (cpu < PMU_MAX_CPUS)
		*out = pmi_cpus[cpu].stats;
	else
		memset(out, 0, sizeof(*out));
}

void pmu_pmi_reset_stats(void)
{
	struct pmi_cpu *p = pmi_this();

	if (p)
		memset(&p->stats, 0, sizeof(p->stats));
}

void pmu_pmi_set_ring(struct rb *rb, uint64_t values_mask)
{
	struct pmi_cpu *p = pmi_this();

	if (!p)
		return;
	/* The handler runs on this CPU only: compiler barriers order these
	 * stores against a PMI that lands between them. */
	p->ring = NULL;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	p->values_mask = values_mask;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	p->ring = rb;
}

void pmu_pmi_set_hw(struct pmu_sampling_hw *h)
{
	struct pmi_cpu *p = pmi_this();

	if (p)
		__atomic_store_n(&p->hw, h, __ATOMIC_RELEASE);
}

void pmu_pmi_set_observer(pmu_pmi_observer_fn fn, void *ctx)
{
	struct pmi_cpu *p = pmi_this();

	if (!p)
		return;
	p->observer = NULL;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	p->observer_ctx = ctx;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	p->observer = fn;
}

int pmu_pmi_set_freeze(bool on)
{
	struct pmi_cpu *p = pmi_this();
	struct pmu_cpu *pc = pmu_this_cpu();
	uint64_t v;

	if (!p || !pc || !pc->initialised || !pc->caps.freeze_ctl || !pc->caps.debugctl)
		return PMU_E_UNSUPPORTED;
	if (pmu_hw_rdmsr(pc->caps.debugctl, &v) != 0)
		return PMU_E_FAULT;
	v = on ? v | pc->caps.freeze_ctl : v & ~pc->caps.freeze_ctl;
	/* The handler must know before the first frozen PMI. */
	p->freeze = on;
	if (pmu_hw_wrmsr(pc->caps.debugctl, v) != 0) {
		p->freeze = false;
		return PMU_E_FAULT;
	}
	return PMU_OK;
}

int pmu_smm_freeze(bool on)
{
	struct pmu_cpu *pc = pmu_this_cpu();
	uint64_t v;

	if (!pc || !pc->initialised || !pc->caps.freeze_smm || !pc->caps.debugctl)
		return PMU_E_UNSUPPORTED;
	if (pmu_hw_rdmsr(pc->caps.debugctl, &v) != 0)
		return PMU_E_FAULT;
	v = on ? v | pc->caps.freeze_smm_ctl : v & ~pc->caps.freeze_smm_ctl;
	return pmu_hw_wrmsr(pc->caps.debugctl, v) ? PMU_E_FAULT : PMU_OK;
}

int pmu_pmi_status_set(uint64_t bits)
{
	struct pmu_cpu *pc = pmu_this_cpu();

	if (!pc || !pc->initialised || !pc->caps.global_status_set)
		return PMU_E_UNSUPPORTED;
	return pmu_hw_wrmsr(pc->caps.global_status_set, bits) ? PMU_E_FAULT : PMU_OK;
}

void pmu_pmi_report(unsigned cpu, pmu_line_fn out, void *ctx)
{
	struct pmu_pmi_stats s;
	char buf[192];

	pmu_pmi_get_stats(cpu, &s);
	ksnprintf(
		buf, sizeof(buf),
		"pmi cpu %u: pmis %llu spurious %llu unclaimed %llu overflows %llu samples %llu lost %llu frozen %llu faults %llu",
		cpu, (unsigned long long)s.pmis, (unsigned long long)s.spurious,
		(unsigned long long)s.unclaimed, (unsigned long long)s.overflows,
		(unsigned long long)s.samples, (unsigned long long)s.lost, (unsigned long long)s.frozen,
		(unsigned long long)s.faults);
	out(ctx, buf);
	ksnprintf(buf, sizeof(buf), "pmi cpu %u: last status %#llx cleared %#llx rip %#llx%s%s", cpu,
		  (unsigned long long)s.last_status, (unsigned long long)s.last_cleared,
		  (unsigned long long)s.last_rip, (s.last_from & PMU_PMI_FROM_USER) ? " user" : "",
		  (s.last_from & PMU_PMI_FROM_NMI) ? " nmi" : "");
	out(ctx, buf);
}
