/* Sampling with precise records and LBR branch stacks: set-up and
 * tear-down on the session's CPU, and what the PMI handler asks of them.
 *
 * Precise records are the backend's (pmu_ops.precise: Intel's PEBS,
 * pmu/intel/precise.c); LBRs frozen on a PMI where the backend says how
 * (struct pmu_lbr_caps' freeze_msr: Intel's FREEZE_LBRS_ON_PMI), so the
 * stack the handler reads is the one at the overflow (SDM vol. 3B,
 * "Freezing LBR and Performance Counters on PMI"). */
#include "pmu/sampling_hw.h"

#include "lib/bits.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"

#define fail(h, err, ...) kerrf((h)->reason, sizeof((h)->reason), (err), __VA_ARGS__)

/* The backend named in a refusal (PEBS is pmu/intel/precise.c's). */
static const char *backend_name(const struct pmu_cpu *pc)
{
	return pc && pc->ops ? pc->ops->name : "no";
}

uint32_t pmu_sampling_hw_precise_counters(char *why, size_t whylen)
{
	struct pmu_cpu *pc = pmu_this_cpu();

	if (!pc || !pc->initialised)
		return kerrf(why, whylen, 0, "PMU driver not initialised on this CPU");
	if (!pc->ops || !pc->ops->precise)
		return kerrf(why, whylen, 0, "the %s backend has no precise sampling", backend_name(pc));
	return pc->ops->precise->counters(pc, why, whylen);
}

static int start_precise(struct pmu_sampling_hw *h, struct pmu_event *ev, void *mem, size_t mem_size)
{
	const struct pmu_cpu *pc = pmu_this_cpu();

	if (!pc || !pc->ops || !pc->ops->precise)
		return fail(h, PMU_E_UNSUPPORTED, "precise sampling: the %s backend has none",
			    backend_name(pc));
	return pc->ops->precise->start(h, ev, mem, mem_size);
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
	if (!h->lbr.ctl_filter && pmu_hw_rdmsr(h->lbr.ctl_msr, &now))
		return fail(h, PMU_E_FAULT, "reading MSR %#x faulted", h->lbr.ctl_msr);
	if ((err = pmu_lbr_encode(&h->lbr, &f, now, &h->lbr_regs, why, sizeof(why))) != PMU_OK)
		return fail(h, err, "branch stacks: %s", why);
	if (h->lbr.freeze && pmu_hw_rdmsr(h->lbr.freeze_msr, &h->debugctl) == 0) {
		uint64_t dbg = h->debugctl | h->lbr.freeze_enable;
		if (h->lbr_regs.ctl_msr == h->lbr.freeze_msr) {
			h->lbr_regs.ctl_on |= h->lbr.freeze_enable;
			h->lbr_regs.ctl_off = h->debugctl;
		} else {
			pmu_hw_wrmsr(h->lbr.freeze_msr, dbg);
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
	if (precise && (err = start_precise(h, precise, mem, mem_size)) != PMU_OK)
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
		pmu_this_cpu()->ops->precise->stop(h);
		h->precise = NULL;
		h->precise_state = NULL;
	}
	if (h->branches) {
		pmu_hw_wrmsr(h->lbr_regs.ctl_msr, h->lbr_regs.ctl_off);
		if (h->lbr_regs.select_msr)
			pmu_hw_wrmsr(h->lbr_regs.select_msr, 0);
		if (h->lbr.freeze && h->lbr_regs.ctl_msr != h->lbr.freeze_msr)
			pmu_hw_wrmsr(h->lbr.freeze_msr, h->debugctl);
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

unsigned pmu_sampling_hw_precise(struct pmu_sampling_hw *h, void (*emit)(void *ctx, uint64_t rip), void *ctx)
{
	if (!h->precise)
		return 0;
	return pmu_this_cpu()->ops->precise->drain(h, emit, ctx);
}

void pmu_sampling_hw_pmi_done(const struct pmu_sampling_hw *h)
{
	/* A freeze that does not show in GLOBAL_STATUS cleared the enable
	 * (before Intel's version 4, DEBUGCTL.LBR): set it again. */
	if (h->branches && h->lbr.freeze && !h->lbr.freeze_status && h->lbr_regs.ctl_msr == h->lbr.freeze_msr)
		pmu_hw_wrmsr(h->lbr_regs.ctl_msr, h->lbr_regs.ctl_on);
}
