/* Precise sampling with PEBS (pmu/intel/pebs.c decodes and parses): a
 * sampling session's DS area and IA32_PEBS_ENABLE, and the records drained
 * in the PMI, as Linux drives PEBS for one record per PMI
 * (arch/x86/events/intel/ds.c: the threshold one record above the base,
 * the counter's INT bit clear, its DS reset value -period). The core
 * (pmu/sampling_hw.c) reaches it through pmu_ops' precise member. */
#include "pmu/intel/intel.h"

#include "arch/x86/msr.h"
#include "lib/bits.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/intel/pebs.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"
#include "pmu/sampling_hw.h"

#define fail(h, err, ...) kerrf((h)->reason, sizeof((h)->reason), (err), __VA_ARGS__)

/* The session's PEBS state, one per CPU (a session samples on one). */
struct pmu_precise_state {
	struct pmu_pebs_caps pebs;
	struct pmu_ds_area *ds;
	uint8_t *buf;
	unsigned record_size;
};
static struct pmu_precise_state states[PMU_MAX_CPUS];

static uint32_t intel_precise_counters(struct pmu_cpu *pc, char *why, size_t whylen)
{
	struct pmu_pebs_caps p;
	uint32_t free;

	pmu_pebs_decode(&pc->caps, &p);
	if (!p.present)
		return kerrf(why, whylen, 0, "%s", p.why);
	free = (uint32_t)p.counters & pc->caps.gp_mask & ~pc->gp_reserved & ~pc->gp_used;
	if (!free)
		return kerrf(why, whylen, 0, "no free GP counter can use PEBS (PEBS counters %#llx)",
			     (unsigned long long)p.counters);
	return free;
}

static int intel_precise_start(struct pmu_sampling_hw *h, struct pmu_event *ev, void *mem, size_t mem_size)
{
	struct pmu_precise_state *st = &states[pmu_this_cpu()->cpu];
	const struct pmu_caps *c = pmu_caps();
	uint64_t *slot, start = (0 - ev->attr.period) & pmu_width_mask(ev->hw.width);
	size_t ds_bytes = (sizeof(struct pmu_ds_area) + 63) & ~(size_t)63;
	int f = 0;

	pmu_pebs_decode(c, &st->pebs);
	if (!st->pebs.present)
		return fail(h, PMU_E_UNSUPPORTED, "precise sampling: %s", st->pebs.why);
	if (ev->hw.idx < 0 || PMU_IDX_IS_FIXED(ev->hw.idx) || !((st->pebs.counters >> ev->hw.idx) & 1))
		return fail(h, PMU_E_INVAL,
			    "precise sampling: %s holds counter %d, not a PEBS GP counter (%#llx)",
			    ev->name ? ev->name : "the event", ev->hw.idx,
			    (unsigned long long)st->pebs.counters);
	if (!ev->attr.period)
		return fail(h, PMU_E_INVAL, "precise sampling needs a period");
	if (!mem || ((uintptr_t)mem & 63) || mem_size < PMU_SAMPLING_HW_MEM)
		return fail(h, PMU_E_INVAL, "precise sampling: %zu bytes at %p, needs %u 64-byte aligned",
			    mem_size, mem, PMU_SAMPLING_HW_MEM);
	/* The basic group alone (adaptive) or the format's record: the
	 * eventing IP is all a sample needs. */
	st->record_size = pmu_pebs_record_size(&st->pebs, st->pebs.adaptive, 0);
	if (!st->record_size || st->record_size > mem_size - ds_bytes)
		return fail(h, PMU_E_INVAL, "precise sampling: PEBS format %u gives a record of %u bytes",
			    st->pebs.format, st->record_size);
	st->ds = mem;
	st->buf = (uint8_t *)mem + ds_bytes;
	memset(st->ds, 0, sizeof(*st->ds));
	st->ds->pebs_base = st->ds->pebs_index = (uint64_t)(uintptr_t)st->buf;
	st->ds->pebs_max = st->ds->pebs_base + (mem_size - ds_bytes) / st->record_size * st->record_size;
	st->ds->pebs_threshold = st->ds->pebs_base + st->record_size;
	slot = pmu_pebs_reset_slot(&st->pebs, st->ds, ev->hw.idx);
	if (!slot)
		return fail(h, PMU_E_INVAL, "no DS reset slot for counter %d", ev->hw.idx);
	*slot = start;
	/* Encoded once more: no INT (the buffer PMI replaces it), and the
	 * adaptive opt-in where records are adaptive. */
	ev->hw.config &= ~BIT(PERFEVTSEL_INT_BIT);
	if (st->pebs.adaptive)
		ev->hw.config |= BIT(PERFEVTSEL_ADAPTIVE_BIT);
	f |= pmu_hw_wrmsr(MSR_IA32_DS_AREA, (uint64_t)(uintptr_t)st->ds);
	if (st->pebs.adaptive)
		f |= pmu_hw_wrmsr(MSR_PEBS_DATA_CFG, 0);
	f |= pmu_hw_wrmsr(MSR_IA32_PEBS_ENABLE, pmu_idx_bit(ev->hw.idx));
	if (f) {
		pmu_hw_wrmsr(MSR_IA32_PEBS_ENABLE, 0);
		pmu_hw_wrmsr(MSR_IA32_DS_AREA, 0);
		return fail(h, PMU_E_FAULT, "programming PEBS (DS_AREA, DATA_CFG, PEBS_ENABLE) faulted");
	}
	h->precise = ev;
	h->precise_state = st;
	return PMU_OK;
}

static void intel_precise_stop(struct pmu_sampling_hw *h)
{
	pmu_hw_wrmsr(MSR_IA32_PEBS_ENABLE, 0);
	pmu_hw_wrmsr(MSR_IA32_DS_AREA, 0);
	h->precise->hw.config &= ~BIT(PERFEVTSEL_ADAPTIVE_BIT);
}

static unsigned intel_precise_drain(struct pmu_sampling_hw *h, void (*emit)(void *ctx, uint64_t rip),
				    void *ctx)
{
	struct pmu_precise_state *st = h->precise_state;
	struct pmu_pebs_record r;
	char why[PMU_REASON_LEN];
	uint64_t base, end;
	unsigned n = 0;

	base = st->ds->pebs_base;
	end = __atomic_load_n(&st->ds->pebs_index, __ATOMIC_ACQUIRE);
	for (uint64_t at = base; at + st->record_size <= end; at += st->record_size) {
		if (pmu_pebs_parse(&st->pebs, (const void *)(uintptr_t)at, (size_t)(end - at), &r, why,
				   sizeof(why)) != PMU_OK)
			break;
		/* The eventing IP where the format has one, else RIP (the
		 * instruction after the event). */
		emit(ctx, r.has_ip ? r.ip : r.rip);
		n++;
	}
	/* Empty again: the next record raises the next PMI. */
	__atomic_store_n(&st->ds->pebs_index, base, __ATOMIC_RELEASE);
	return n;
}

const struct pmu_precise_ops pmu_intel_precise_ops = {
	/* OvfBuffer (SDM vol. 3B, "IA32_PERF_GLOBAL_STATUS"), for the DS
	 * buffer and architectural PEBS alike. */
	.buffer_status = BIT(PERF_GLOBAL_STATUS_OVF_BUF_BIT),
	.counters = intel_precise_counters,
	.start = intel_precise_start,
	.stop = intel_precise_stop,
	.drain = intel_precise_drain,
};
