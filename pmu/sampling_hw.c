/* Sampling with PEBS records and LBR branch stacks: set-up and tear-down on
 * the session's CPU, and what the PMI handler asks of them.
 *
 * PEBS as Linux drives it for one record per PMI (arch/x86/events/intel/
 * ds.c: the threshold one record above the base, the counter's INT bit
 * clear, its DS reset value -period); LBRs with FREEZE_LBRS_ON_PMI where
 * it exists, so the stack the handler reads is the one at the overflow
 * (SDM vol. 3B, "Freezing LBR and Performance Counters on PMI"). */
#include "pmu/sampling_hw.h"

#include "arch/x86/msr.h"
#include "lib/bits.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"

#define fail(h, err, ...) kerrf((h)->reason, sizeof((h)->reason), (err), __VA_ARGS__)

uint32_t pmu_sampling_hw_pebs_counters(char *why, size_t whylen)
{
	struct pmu_cpu *pc = pmu_this_cpu();
	struct pmu_pebs_caps p;
	uint32_t free;

	if (!pc || !pc->initialised)
		return kerrf(why, whylen, 0, "PMU driver not initialised on this CPU");
	pmu_pebs_decode(&pc->caps, &p);
	if (!p.present)
		return kerrf(why, whylen, 0, "%s", p.why);
	free = (uint32_t)p.counters & pc->caps.gp_mask & ~pc->gp_reserved & ~pc->gp_used;
	if (!free)
		return kerrf(why, whylen, 0, "no free GP counter can use PEBS (PEBS counters %#llx)",
			     (unsigned long long)p.counters);
	return free;
}

static int start_pebs(struct pmu_sampling_hw *h, struct pmu_event *ev, void *mem, size_t mem_size)
{
	const struct pmu_caps *c = pmu_caps();
	uint64_t *slot, start = (0 - ev->attr.period) & pmu_width_mask(ev->hw.width);
	size_t ds_bytes = (sizeof(struct pmu_ds_area) + 63) & ~(size_t)63;
	int f = 0;

	pmu_pebs_decode(c, &h->pebs);
	if (!h->pebs.present)
		return fail(h, PMU_E_UNSUPPORTED, "precise sampling: %s", h->pebs.why);
	if (ev->hw.idx < 0 || PMU_IDX_IS_FIXED(ev->hw.idx) || !((h->pebs.counters >> ev->hw.idx) & 1))
		return fail(h, PMU_E_INVAL,
			    "precise sampling: %s holds counter %d, not a PEBS GP counter (%#llx)",
			    ev->name ? ev->name : "the event", ev->hw.idx,
			    (unsigned long long)h->pebs.counters);
	if (!ev->attr.period)
		return fail(h, PMU_E_INVAL, "precise sampling needs a period");
	if (!mem || ((uintptr_t)mem & 63) || mem_size < PMU_SAMPLING_HW_MEM)
		return fail(h, PMU_E_INVAL, "precise sampling: %zu bytes at %p, needs %u 64-byte aligned",
			    mem_size, mem, PMU_SAMPLING_HW_MEM);
	/* The basic group alone (adaptive) or the format's record: the
	 * eventing IP is all a sample needs. */
	h->record_size = pmu_pebs_record_size(&h->pebs, h->pebs.adaptive, 0);
	if (!h->record_size || h->record_size > mem_size - ds_bytes)
		return fail(h, PMU_E_INVAL, "precise sampling: PEBS format %u gives a record of %u bytes",
			    h->pebs.format, h->record_size);
	h->ds = mem;
	h->buf = (uint8_t *)mem + ds_bytes;
	memset(h->ds, 0, sizeof(*h->ds));
	h->ds->pebs_base = h->ds->pebs_index = (uint64_t)(uintptr_t)h->buf;
	h->ds->pebs_max = h->ds->pebs_base + (mem_size - ds_bytes) / h->record_size * h->record_size;
	h->ds->pebs_threshold = h->ds->pebs_base + h->record_size;
	slot = pmu_pebs_reset_slot(&h->pebs, h->ds, ev->hw.idx);
	if (!slot)
		return fail(h, PMU_E_INVAL, "no DS reset slot for counter %d", ev->hw.idx);
	*slot = start;
	/* Encoded once more: no INT (the buffer PMI replaces it), and the
	 * adaptive opt-in where records are adaptive. */
	ev->hw.config &= ~BIT(PERFEVTSEL_INT_BIT);
	if (h->pebs.adaptive)
		ev->hw.config |= BIT(PERFEVTSEL_ADAPTIVE_BIT);
	f |= pmu_hw_wrmsr(MSR_IA32_DS_AREA, (uint64_t)(uintptr_t)h->ds);
	if (h->pebs.adaptive)
		f |= pmu_hw_wrmsr(MSR_PEBS_DATA_CFG, 0);
	f |= pmu_hw_wrmsr(MSR_IA32_PEBS_ENABLE, pmu_idx_bit(ev->hw.idx));
	if (f) {
		pmu_hw_wrmsr(MSR_IA32_PEBS_ENABLE, 0);
		pmu_hw_wrmsr(MSR_IA32_DS_AREA, 0);
		return fail(h, PMU_E_FAULT, "programming PEBS (DS_AREA, DATA_CFG, PEBS_ENABLE) faulted");
	}
	h->precise = ev;
	return PMU_OK;
}

static int start_lbr(struct pmu_sampling_hw *h, enum pmu_sampling_branches mode)
{
	const struct pmu_caps *c = pmu_caps();
	struct pmu_lbr_filter f = { .os = true, .usr = true, .kinds = PMU_LBR_BR_ALL };
	uint64_t now = 0;
	char why[PMU_REASON_LEN];
	int err;

	pmu_lbr_decode(c, &h->lbr);
	if (h->lbr.kind == PMU_LBR_NONE)
		return fail(h, PMU_E_UNSUPPORTED, "branch stacks: %s", h->lbr.why);
	/* A call stack as Linux --call-graph lbr keeps it: near calls and
	 * returns of user code only, returns popping. */
	if (mode == PMU_SAMPLING_BRANCHES_USER_CALLSTACK) {
		if (!h->lbr.call_stack || !h->lbr.cpl_filter)
			return fail(h, PMU_E_UNSUPPORTED, "call stacks: %s LBRs without %s",
				    pmu_lbr_kind_name(h->lbr.kind),
				    h->lbr.call_stack ? "a privilege-level filter" : "a call-stack mode");
		f.kinds = 1u << PMU_LBR_BR_NEAR_REL_CALL | 1u << PMU_LBR_BR_NEAR_IND_CALL |
			  1u << PMU_LBR_BR_NEAR_RET;
		f.call_stack = true;
		f.os = false;
	}
	h->mode = mode;
	if (h->lbr.kind != PMU_LBR_ARCH && pmu_hw_rdmsr(h->lbr.ctl_msr, &now))
		return fail(h, PMU_E_FAULT, "reading MSR %#x faulted", h->lbr.ctl_msr);
	if ((err = pmu_lbr_encode(&h->lbr, &f, now, &h->lbr_regs, why, sizeof(why))) != PMU_OK)
		return fail(h, err, "branch stacks: %s", why);
	if (h->lbr.freeze && pmu_hw_rdmsr(MSR_IA32_DEBUGCTL, &h->debugctl) == 0) {
		uint64_t dbg = h->debugctl | BIT(DEBUGCTL_FREEZE_LBRS_ON_PMI_BIT);
		if (h->lbr_regs.ctl_msr == MSR_IA32_DEBUGCTL) {
			h->lbr_regs.ctl_on |= BIT(DEBUGCTL_FREEZE_LBRS_ON_PMI_BIT);
			h->lbr_regs.ctl_off = h->debugctl;
		} else {
			pmu_hw_wrmsr(MSR_IA32_DEBUGCTL, dbg);
		}
	}
	pmu_lbr_clear(&h->lbr);
	if ((h->lbr_regs.select_msr && pmu_hw_wrmsr(h->lbr_regs.select_msr, h->lbr_regs.select)) ||
	    pmu_hw_wrmsr(h->lbr_regs.ctl_msr, h->lbr_regs.ctl_on))
		return fail(h, PMU_E_FAULT, "enabling the LBRs (MSR %#x <- %#llx) faulted",
			    h->lbr_regs.ctl_msr, (unsigned long long)h->lbr_regs.ctl_on);
	h->branches = true;
	return PMU_OK;
}

int pmu_sampling_hw_start(struct pmu_sampling_hw *h, struct pmu_event *precise,
			  enum pmu_sampling_branches branches, void *mem, size_t mem_size)
{
	int err;

	memset(h, 0, sizeof(*h));
	if (precise && (err = start_pebs(h, precise, mem, mem_size)) != PMU_OK)
		return err;
	if (branches != PMU_SAMPLING_BRANCHES_NONE && (err = start_lbr(h, branches)) != PMU_OK) {
		pmu_sampling_hw_stop(h);
		return err;
	}
	return PMU_OK;
}

void pmu_sampling_hw_stop(struct pmu_sampling_hw *h)
{
	if (h->precise) {
		pmu_hw_wrmsr(MSR_IA32_PEBS_ENABLE, 0);
		pmu_hw_wrmsr(MSR_IA32_DS_AREA, 0);
		h->precise->hw.config &= ~BIT(PERFEVTSEL_ADAPTIVE_BIT);
		h->precise = NULL;
	}
	if (h->branches) {
		pmu_hw_wrmsr(h->lbr_regs.ctl_msr, h->lbr_regs.ctl_off);
		if (h->lbr_regs.select_msr)
			pmu_hw_wrmsr(h->lbr_regs.select_msr, 0);
		if (h->lbr.freeze && h->lbr_regs.ctl_msr != MSR_IA32_DEBUGCTL)
			pmu_hw_wrmsr(MSR_IA32_DEBUGCTL, h->debugctl);
		h->branches = false;
	}
}

unsigned pmu_sampling_hw_branches(const struct pmu_sampling_hw *h, struct pmu_sample_branch *out,
				  unsigned max)
{
	struct pmu_lbr_snapshot s;
	unsigned n = 0;

	if (!h->branches || pmu_lbr_snapshot(&h->lbr, &s) != 0)
		return 0;
	for (unsigned k = 0; k < h->lbr.depth && n < max; k++) {
		struct pmu_lbr_entry e = pmu_lbr_recent(&h->lbr, &s, k);
		/* An empty entry ends the stack (Linux lbr.c stops at FROM 0). */
		if (!e.valid || (!e.from && !e.to))
			break;
		out[n++] = (struct pmu_sample_branch){ e.from, e.to };
	}
	return n;
}

unsigned pmu_sampling_hw_pebs(struct pmu_sampling_hw *h, void (*emit)(void *ctx, uint64_t rip), void *ctx)
{
	struct pmu_pebs_record r;
	char why[PMU_REASON_LEN];
	uint64_t base, end;
	unsigned n = 0;

	if (!h->precise)
		return 0;
	base = h->ds->pebs_base;
	end = __atomic_load_n(&h->ds->pebs_index, __ATOMIC_ACQUIRE);
	for (uint64_t at = base; at + h->record_size <= end; at += h->record_size) {
		if (pmu_pebs_parse(&h->pebs, (const void *)(uintptr_t)at, (size_t)(end - at), &r, why,
				   sizeof(why)) != PMU_OK)
			break;
		/* The eventing IP where the format has one, else RIP (the
		 * instruction after the event). */
		emit(ctx, r.has_ip ? r.ip : r.rip);
		n++;
	}
	/* Empty again: the next record raises the next PMI. */
	__atomic_store_n(&h->ds->pebs_index, base, __ATOMIC_RELEASE);
	return n;
}

void pmu_sampling_hw_pmi_done(const struct pmu_sampling_hw *h)
{
	/* Before version 4 the freeze cleared DEBUGCTL.LBR: set it again. */
	if (h->branches && h->lbr.freeze && !h->lbr.freeze_status && h->lbr_regs.ctl_msr == MSR_IA32_DEBUGCTL)
		pmu_hw_wrmsr(MSR_IA32_DEBUGCTL, h->lbr_regs.ctl_on);
}
