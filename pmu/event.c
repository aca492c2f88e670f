/* Events on counters: allocation (fixed counter first, per-event GP
 * constraints, all-or-nothing groups), enable/disable through the per-counter
 * enables and GLOBAL_CTRL, counter writes and the race-safe read. Everything
 * acts on the calling CPU's PMU. */
#include "arch/x86/msr.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"

/* Backtracking over counter choices stops after this many steps; a group
 * that needs more is refused (real groups are a handful of events). */
#define PMU_ALLOC_BUDGET 20000
#define PMU_GROUP_MAX PMU_IDX_NR

/* Refuse with err, the reason in the event. */
#define fail(ev, err, ...) kerrf((ev)->reason, sizeof((ev)->reason), (err), __VA_ARGS__)

static const char *ev_name(const struct pmu_event *ev)
{
	return ev->name ? ev->name : "event";
}

void pmu_event_init(struct pmu_event *ev, const struct pmu_event_attr *attr, const char *name)
{
	memset(ev, 0, sizeof(*ev));
	ev->attr = *attr;
	ev->name = name;
	ev->hw.idx = -1;
}

/* The calling CPU's state, if it has a PMU the driver can drive. */
static struct pmu_cpu *usable_cpu(struct pmu_event *ev, int *err)
{
	struct pmu_cpu *pc = pmu_this_cpu();

	if (!pc || !pc->initialised) {
		*err = fail(ev, PMU_E_NOPMU, "PMU driver not initialised on CPU %u", pmu_hw_cpu());
		return NULL;
	}
	if (!pc->ops || pc->caps.version == 0 || !pc->caps.gp_mask) {
		*err = fail(ev, PMU_E_NOPMU, "no usable PMU on CPU %u: %s", pc->cpu,
			    pc->reason[0] ? pc->reason : "no counters");
		return NULL;
	}
	/* pmu_event_update and the PMI reload pair the last value with a
	 * generation in one CMPXCHG16B; the earliest AMD64/EM64T parts lack
	 * it (#UD). */
	if (!pc->caps.cx16) {
		*err = fail(ev, PMU_E_UNSUPPORTED,
			    "CPU %u has no CMPXCHG16B (CPUID.01H:ECX[13]=0): counter reads need it", pc->cpu);
		return NULL;
	}
	return pc;
}

/* --- Encoding helpers for the backends --- */

uint64_t pmu_evtsel_common(const struct pmu_event_attr *a)
{
	uint64_t v = (uint64_t)(a->event & 0xff) << PERFEVTSEL_EVENT_SHIFT |
		     (uint64_t)a->umask << PERFEVTSEL_UMASK_SHIFT |
		     (uint64_t)a->cmask << PERFEVTSEL_CMASK_SHIFT;

	if (a->usr)
		v |= BIT(PERFEVTSEL_USR_BIT);
	if (a->os)
		v |= BIT(PERFEVTSEL_OS_BIT);
	if (a->edge)
		v |= BIT(PERFEVTSEL_EDGE_BIT);
	if (a->intr)
		v |= BIT(PERFEVTSEL_INT_BIT);
	if (a->inv)
		v |= BIT(PERFEVTSEL_INV_BIT);
	return v;
}

int pmu_attr_check_rings(const struct pmu_event_attr *a, char *why, size_t whylen)
{
	if (!a->usr && !a->os)
		return kerrf(why, whylen, PMU_E_INVAL,
			     "neither usr nor os set: the counter would count nothing");
	return PMU_OK;
}

int pmu_evtsel_check(const struct pmu_caps *c, uint64_t v, const char *hint, char *why, size_t whylen)
{
	if (!(v & c->evtsel_reserved))
		return PMU_OK;
	return kerrf(why, whylen, PMU_E_UNSUPPORTED, "%s value %#llx sets reserved bits %#llx%s",
		     pmu_evtsel_name(c), (unsigned long long)v, (unsigned long long)(v & c->evtsel_reserved),
		     hint);
}

/* --- Allocation --- */

struct alloc_cand {
	int fixed;          /* fixed counter the event may use, or -1 */
	uint64_t fixed_cfg; /* its encoded field */
	uint32_t gp;        /* GP counters it may use */
	uint64_t gp_cfg;    /* its PERFEVTSEL value (without EN) */
	const char *constraint;
	uint32_t extra; /* extra MSR */
};

static int fixed_too_narrow(const struct pmu_cpu *pc, unsigned i, char *why, size_t whylen)
{
	return kerrf(why, whylen, PMU_E_UNSUPPORTED,
		     "%s%u is %u-bit (%s), narrower than the %u bits counted with", pmu_fixed_name(&pc->caps),
		     i, pc->caps.fixed_width, pc->ops->src_fixed_width, PMU_MIN_COUNTER_WIDTH);
}

/* Work out where one event may go, ignoring what is taken. */
static int alloc_candidates(struct pmu_cpu *pc, struct pmu_event *ev, struct alloc_cand *k)
{
	const struct pmu_caps *c = &pc->caps;
	struct pmu_event_attr resolved = ev->attr;
	const struct pmu_event_attr *a = &resolved;
	char why_gp[PMU_REASON_LEN] = "", why_fx[PMU_REASON_LEN] = "";
	int err_gp = PMU_OK, err_fx = PMU_OK;

	/* A named event is numbered by the CPU that places it. */
	pmu_attr_resolve(pc, &resolved);
	k->fixed = pc->ops->fixed_for(c, a);
	k->gp = pc->ops->gp_allowed(c, a, &k->constraint);
	k->extra = pc->ops->extra_msr ? pc->ops->extra_msr(c, a) : 0;
	/* The backend checks an event that names an extra MSR (or should)
	 * now, so a reserved bit never reaches the WRMSR (it would #GP there). */
	if (pc->ops->extra_check &&
	    (err_gp = pc->ops->extra_check(c, a, k->extra, why_gp, sizeof(why_gp))) != PMU_OK)
		return fail(ev, err_gp, "%s: %s", ev_name(ev), why_gp);
	if (k->fixed >= 0) {
		err_fx = pc->ops->encode_fixed(c, a, (unsigned)k->fixed, &k->fixed_cfg, why_fx,
					       sizeof(why_fx));
		if (!err_fx && c->fixed_width < PMU_MIN_COUNTER_WIDTH)
			err_fx = fixed_too_narrow(pc, (unsigned)k->fixed, why_fx, sizeof(why_fx));
		if (err_fx)
			k->fixed = -1;
	}
	if (k->gp) {
		err_gp = pc->ops->encode_gp(c, a, &k->gp_cfg, why_gp, sizeof(why_gp));
		if (err_gp)
			k->gp = 0;
	}
	if (k->fixed < 0 && !k->gp) {
		if (err_gp)
			return fail(ev, err_gp, "%s: %s", ev_name(ev), why_gp);
		if (err_fx)
			return fail(ev, err_fx, "%s: %s", ev_name(ev), why_fx);
		return fail(ev, PMU_E_UNSUPPORTED,
			    "%s (event 0x%02x umask 0x%02x): no counter can count it on this CPU (%s)",
			    ev_name(ev), a->event, a->umask,
			    k->constraint ? k->constraint : "no GP counter allowed");
	}
	return PMU_OK;
}

struct alloc_search {
	struct pmu_cpu *pc;
	struct pmu_event *const *evs;
	const struct alloc_cand *cand;
	const unsigned *order;
	unsigned n;
	int *choice;
	unsigned steps;
};

/* Depth-first: the fixed counter first (the preference), then GP counters
 * from the lowest. Events are visited most-constrained first. */
static bool alloc_rec(struct alloc_search *s, unsigned k, uint32_t gp_used, uint32_t fx_used)
{
	if (k == s->n)
		return true;
	if (++s->steps > PMU_ALLOC_BUDGET)
		return false;
	unsigned e = s->order[k];
	const struct alloc_cand *c = &s->cand[e];
	uint32_t gp_busy = gp_used | s->pc->gp_used | s->pc->gp_reserved;
	uint32_t fx_busy = fx_used | s->pc->fixed_used | s->pc->fixed_reserved;

	if (c->fixed >= 0 && !((fx_busy >> c->fixed) & 1)) {
		s->choice[e] = PMU_IDX_FIXED(c->fixed);
		if (alloc_rec(s, k + 1, gp_used, fx_used | 1u << c->fixed))
			return true;
	}
	uint32_t free = c->gp & ~gp_busy;
	for (unsigned x = 0; x < PMU_MAX_GP; x++) {
		if (!((free >> x) & 1))
			continue;
		s->choice[e] = (int)x;
		if (alloc_rec(s, k + 1, gp_used | 1u << x, fx_used))
			return true;
	}
	return false;
}

/* Events with an extra MSR (Intel's offcore response): the backend takes
 * the shared MSRs, then each candidate points at the MSR it got, with the
 * event select that names that MSR. Nothing is assigned on failure. */
static int alloc_extra(struct pmu_cpu *pc, struct pmu_event *const *evs, struct alloc_cand *cand, unsigned n)
{
	uint32_t msr[PMU_GROUP_MAX];
	uint64_t evtsel[PMU_GROUP_MAX];
	bool any = false;
	int err;

	for (unsigned i = 0; i < n; i++) {
		msr[i] = cand[i].extra;
		evtsel[i] = cand[i].gp_cfg;
		any |= msr[i] != 0;
	}
	if (!any || !pc->ops->get_extra)
		return PMU_OK;
	if ((err = pc->ops->get_extra(pc, evs, n, msr, evtsel)) != PMU_OK)
		return err;
	for (unsigned i = 0; i < n; i++) {
		cand[i].extra = msr[i];
		cand[i].gp_cfg = evtsel[i];
	}
	return PMU_OK;
}

static void hwc_assign(struct pmu_cpu *pc, struct pmu_event *ev, int idx, const struct alloc_cand *k)
{
	const struct pmu_caps *c = &pc->caps;
	struct pmu_hwc *hw = &ev->hw;

	hw->idx = idx;
	hw->cpu = pc->cpu;
	hw->enabled = false;
	hw->rdpmc_faulted = false;
	hw->prev = (struct u64_pair){ 0, 0 };
	hw->count = 0;
	hw->extra_msr = k->extra;
	if (PMU_IDX_IS_FIXED(idx)) {
		unsigned i = (unsigned)(idx - PMU_IDX_FIXED_BASE);
		hw->config_base = c->fixed_ctrl;
		hw->event_base = hw->write_base = pmu_fixed_msr(c, i);
		hw->rdpmc_idx = PMU_RDPMC_FIXED | i;
		hw->config = k->fixed_cfg;
		hw->width = c->fixed_width;
		pc->fixed_used |= 1u << i;
	} else {
		unsigned x = (unsigned)idx;
		hw->config_base = pmu_evtsel_msr(c, x);
		hw->event_base = pmu_ctr_msr(c, x);
		hw->write_base = pmu_ctr_write_msr(c, x);
		hw->rdpmc_idx = x;
		hw->config = k->gp_cfg;
		hw->width = c->gp_width;
		pc->gp_used |= 1u << x;
	}
	pc->owner[idx] = ev;
	ev->reason[0] = '\0';
}

/* Why an event that has candidates found none free. */
static int alloc_busy_reason(struct pmu_cpu *pc, struct pmu_event *ev, const struct alloc_cand *k,
			     unsigned group_n)
{
	char fx[64] = "";

	if (k->fixed >= 0)
		ksnprintf(fx, sizeof(fx), "%s%d and ", pmu_fixed_name(&pc->caps), k->fixed);
	return fail(
		ev, PMU_E_BUSY,
		"%s: no free counter%s: %sGP counters 0x%x%s%s%s are taken (ours 0x%x, in use at boot 0x%x)",
		ev_name(ev), group_n > 1 ? " for the whole group" : "", fx, k->gp, k->constraint ? " (" : "",
		k->constraint ? k->constraint : "", k->constraint ? ")" : "", pc->gp_used, pc->gp_reserved);
}

int pmu_events_add(struct pmu_event *const *evs, unsigned n)
{
	struct alloc_cand cand[PMU_GROUP_MAX];
	unsigned order[PMU_GROUP_MAX];
	int choice[PMU_GROUP_MAX];
	struct alloc_search s;
	struct pmu_cpu *pc;
	int err = PMU_OK;

	if (n == 0)
		return PMU_OK;
	if (n > PMU_GROUP_MAX)
		return fail(evs[0], PMU_E_INVAL, "group of %u events: more than the %u counters there can be",
			    n, PMU_GROUP_MAX);
	if (!(pc = usable_cpu(evs[0], &err)))
		return err;
	for (unsigned i = 0; i < n; i++) {
		if (evs[i]->hw.idx >= 0)
			return fail(evs[i], PMU_E_STATE, "%s already holds %d", ev_name(evs[i]),
				    evs[i]->hw.idx);
		if ((err = alloc_candidates(pc, evs[i], &cand[i])) != PMU_OK) {
			if (i)
				ksnprintf(evs[0]->reason, sizeof(evs[0]->reason), "%s", evs[i]->reason);
			return err;
		}
	}
	/* The RSP MSRs first: their refusal is the more precise reason, and
	 * a move to 0xBB changes no counter choice. Given back on failure. */
	if ((err = alloc_extra(pc, evs, cand, n)) != PMU_OK)
		return err;

	/* Most constrained first: fewest candidate counters. */
	for (unsigned i = 0; i < n; i++)
		order[i] = i;
	for (unsigned i = 1; i < n; i++) {
		unsigned o = order[i], j = i;
		unsigned w = popcount32(cand[o].gp) + (cand[o].fixed >= 0);
		while (j > 0 && popcount32(cand[order[j - 1]].gp) + (cand[order[j - 1]].fixed >= 0) > w) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = o;
	}
	s = (struct alloc_search){ pc, evs, cand, order, n, choice, 0 };
	if (!alloc_rec(&s, 0, 0, 0)) {
		for (unsigned i = 0; i < n; i++)
			if (cand[i].extra)
				pc->ops->put_extra(pc, cand[i].extra);
		/* Name the first event (most constrained) that cannot go anywhere
		 * on its own; otherwise the group as a whole does not fit. */
		for (unsigned k = 0; k < n; k++) {
			unsigned e = order[k];
			const struct alloc_cand *c = &cand[e];
			bool fx_free = c->fixed >= 0 &&
				       !(((pc->fixed_used | pc->fixed_reserved) >> c->fixed) & 1);
			if (!fx_free && !(c->gp & ~(pc->gp_used | pc->gp_reserved))) {
				err = alloc_busy_reason(pc, evs[e], c, 1);
				if (e)
					ksnprintf(evs[0]->reason, sizeof(evs[0]->reason), "%s",
						  evs[e]->reason);
				return err;
			}
		}
		err = alloc_busy_reason(pc, evs[order[n - 1]], &cand[order[n - 1]], n);
		ksnprintf(evs[0]->reason, sizeof(evs[0]->reason), "%s%s",
			  s.steps > PMU_ALLOC_BUDGET ? "allocation search gave up: " : "",
			  evs[order[n - 1]]->reason);
		return err;
	}
	for (unsigned i = 0; i < n; i++)
		hwc_assign(pc, evs[i], choice[i], &cand[i]);
	return PMU_OK;
}

int pmu_event_add(struct pmu_event *ev)
{
	return pmu_events_add(&ev, 1);
}

int pmu_event_add_idx(struct pmu_event *ev, int idx)
{
	struct alloc_cand k;
	struct pmu_cpu *pc;
	char name[24];
	int err = PMU_OK;

	if (!(pc = usable_cpu(ev, &err)))
		return err;
	if (ev->hw.idx >= 0)
		return fail(ev, PMU_E_STATE, "%s already holds %d", ev_name(ev), ev->hw.idx);
	if (idx < 0 || idx >= PMU_IDX_NR)
		return fail(ev, PMU_E_INVAL, "%s: counter index %d outside 0..%d", ev_name(ev), idx,
			    PMU_IDX_NR - 1);
	pmu_idx_name(&pc->caps, idx, name, sizeof(name));
	if ((err = alloc_candidates(pc, ev, &k)) != PMU_OK && !PMU_IDX_IS_FIXED(idx))
		return err;
	if (PMU_IDX_IS_FIXED(idx)) {
		unsigned i = (unsigned)(idx - PMU_IDX_FIXED_BASE);
		struct pmu_event_attr a = ev->attr;
		char why[PMU_REASON_LEN];
		k.fixed = -1;
		k.extra = 0;
		pmu_attr_resolve(pc, &a);
		if ((err = pc->ops->encode_fixed(&pc->caps, &a, i, &k.fixed_cfg, why, sizeof(why))) ||
		    (pc->caps.fixed_width < PMU_MIN_COUNTER_WIDTH &&
		     (err = fixed_too_narrow(pc, i, why, sizeof(why)))))
			return fail(ev, err, "%s on %s: %s", ev_name(ev), name, why);
		if (((pc->fixed_used | pc->fixed_reserved) >> i) & 1)
			return fail(ev, PMU_E_BUSY, "%s: %s is taken (%s)", ev_name(ev), name,
				    ((pc->fixed_reserved >> i) & 1) ? "in use at boot" : "by another event");
	} else {
		if (!pmu_has_gp(&pc->caps, (unsigned)idx))
			return fail(ev, PMU_E_UNSUPPORTED, "%s: %s does not exist (GP mask %#x)", ev_name(ev),
				    name, pc->caps.gp_mask);
		if (!((k.gp >> idx) & 1))
			return fail(ev, PMU_E_UNSUPPORTED, "%s: %s not allowed (%s)", ev_name(ev), name,
				    k.constraint ? k.constraint : "constraint");
		if (((pc->gp_used | pc->gp_reserved) >> idx) & 1)
			return fail(ev, PMU_E_BUSY, "%s: %s is taken (%s)", ev_name(ev), name,
				    ((pc->gp_reserved >> idx) & 1) ? "in use at boot" : "by another event");
	}
	if (k.extra && (err = alloc_extra(pc, &ev, &k, 1)) != PMU_OK)
		return err;
	hwc_assign(pc, ev, idx, &k);
	return PMU_OK;
}

/* --- Register writes --- */

static int wr(struct pmu_event *ev, uint32_t msr, uint64_t val)
{
	int vec = pmu_hw_wrmsr(msr, val);

	if (vec)
		return fail(ev, PMU_E_FAULT, "%s: wrmsr %#x <- %#llx raised vector %d", ev_name(ev), msr,
			    (unsigned long long)val, vec);
	return PMU_OK;
}

static struct pmu_cpu *owner_cpu(struct pmu_event *ev, int *err)
{
	struct pmu_cpu *pc = pmu_this_cpu();

	if (ev->hw.idx < 0) {
		*err = fail(ev, PMU_E_STATE, "%s holds no counter", ev_name(ev));
		return NULL;
	}
	if (!pc || pc->cpu != ev->hw.cpu) {
		*err = fail(ev, PMU_E_STATE, "%s lives on CPU %u, called on CPU %u", ev_name(ev), ev->hw.cpu,
			    pmu_hw_cpu());
		return NULL;
	}
	return pc;
}

/* Record a counter write. The PMI handler reloads every period with the
 * same -period value, so the value alone cannot tell a reader that its
 * snapshot is stale; the generation bump can. A 16-byte exchange, not two
 * stores: a reader interrupting between two stores would see a pair that
 * never existed and could exchange against it. */
static void set_prev(struct pmu_hwc *hw, uint64_t v)
{
	struct u64_pair old = { __atomic_load_n(&hw->prev.lo, __ATOMIC_RELAXED),
				__atomic_load_n(&hw->prev.hi, __ATOMIC_RELAXED) };

	while (!cmpxchg16b(&hw->prev, &old, (struct u64_pair){ v, old.hi + 1 }))
		;
}

int pmu_event_write_counter(struct pmu_event *ev, uint64_t value)
{
	struct pmu_cpu *pc;
	struct pmu_hwc *hw = &ev->hw;
	uint64_t v = value & pmu_width_mask(hw->width);
	int err = PMU_OK;

	if (!(pc = owner_cpu(ev, &err)))
		return err;
	if (!PMU_IDX_IS_FIXED(hw->idx) && !pc->caps.ctr_write_full &&
	    hw->write_base == pmu_ctr_msr(&pc->caps, (unsigned)hw->idx)) {
		/* Legacy counter write: EAX is sign-extended to the width
		 * (SDM vol. 3B, "Full-Width Writes to Performance Counter
		 * Registers"), so only such values can be stored. */
		const struct pmu_arch_defs *arch = pmu_backend_arch();
		uint64_t sx = pmu_sext32(v, hw->width);
		if (sx != v)
			return fail(
				ev, PMU_E_UNSUPPORTED,
				"%s: %#llx cannot be written through %s%d: legacy writes sign-extend bit 31 (%s)",
				ev_name(ev), (unsigned long long)v, pmu_ctr_name(&pc->caps), hw->idx,
				arch && arch->narrow_write_why ? arch->narrow_write_why
							       : "no full-width writes");
		err = wr(ev, hw->write_base, (uint32_t)v);
	} else {
		err = wr(ev, hw->write_base, v);
	}
	if (err == PMU_OK)
		set_prev(hw, v);
	return err;
}

/* Program counter and config for one event; fixed fields go to the shadow
 * and are written once per call by the caller. */
static int program_one(struct pmu_cpu *pc, struct pmu_event *ev, bool set_en)
{
	struct pmu_hwc *hw = &ev->hw;
	uint64_t start = ev->attr.period ? (0 - ev->attr.period) & pmu_width_mask(hw->width) : 0;
	int err;

	if ((err = pmu_event_write_counter(ev, start)) != PMU_OK)
		return err;
	__atomic_store_n(&hw->count, 0, __ATOMIC_RELAXED);
	if (hw->extra_msr && (err = wr(ev, hw->extra_msr, ev->attr.extra_config)) != PMU_OK)
		return err;
	if (PMU_IDX_IS_FIXED(hw->idx)) {
		pc->fixed_ctrl_shadow = pc->ops->fixed_field_set(pc->fixed_ctrl_shadow,
								 hw->idx - PMU_IDX_FIXED_BASE, hw->config);
		return PMU_OK;
	}
	return wr(ev, hw->config_base, hw->config | (set_en ? BIT(PERFEVTSEL_EN_BIT) : 0));
}

static int check_group(struct pmu_event *const *evs, unsigned n, struct pmu_cpu **pcp)
{
	int err = PMU_OK;

	for (unsigned i = 0; i < n; i++)
		if (!(*pcp = owner_cpu(evs[i], &err)))
			return err;
	return PMU_OK;
}

static bool any_fixed(struct pmu_event *const *evs, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (PMU_IDX_IS_FIXED(evs[i]->hw.idx))
			return true;
	return false;
}

int pmu_event_enable(struct pmu_event *ev)
{
	return pmu_events_enable(&ev, 1);
}

int pmu_event_disable(struct pmu_event *ev)
{
	return pmu_events_disable(&ev, 1);
}

uint64_t pmu_events_global_mask(struct pmu_event *const *evs, unsigned n)
{
	uint64_t m = 0;

	for (unsigned i = 0; i < n; i++)
		if (evs[i]->hw.idx >= 0)
			m |= pmu_idx_bit(evs[i]->hw.idx);
	return m;
}

/* Counters and configs, with GLOBAL_CTRL still off for them (v2+); on v1
 * with their EN bits set only when set_en. */
static int program_group(struct pmu_cpu *pc, struct pmu_event *const *evs, unsigned n, bool set_en)
{
	int err;

	for (unsigned i = 0; i < n; i++)
		if ((err = program_one(pc, evs[i], set_en)) != PMU_OK)
			return err;
	if (any_fixed(evs, n) && (err = wr(evs[0], pc->caps.fixed_ctrl, pc->fixed_ctrl_shadow)) != PMU_OK)
		return err;
	return PMU_OK;
}

int pmu_events_enable(struct pmu_event *const *evs, unsigned n)
{
	struct pmu_cpu *pc = NULL;
	int err;

	if (n == 0)
		return PMU_OK;
	if ((err = check_group(evs, n, &pc)) != PMU_OK)
		return err;
	if (!pc->caps.global_ctrl) {
		/* Version 1: each counter starts when its EN is written. */
		for (unsigned i = 0; i < n; i++) {
			if ((err = program_one(pc, evs[i], true)) != PMU_OK)
				return err;
			evs[i]->hw.enabled = true;
		}
		return PMU_OK;
	}
	if ((err = program_group(pc, evs, n, true)) != PMU_OK)
		return err;
	/* One write starts the whole group (SDM vol. 3B, "Architectural
	 * Performance Monitoring Version 4": set GLOBAL_CTRL last). */
	pc->global_ctrl_shadow |= pmu_events_global_mask(evs, n);
	if ((err = wr(evs[0], pc->caps.global_ctrl, pc->global_ctrl_shadow)) != PMU_OK)
		return err;
	for (unsigned i = 0; i < n; i++)
		evs[i]->hw.enabled = true;
	return PMU_OK;
}

/* Clear the per-counter enables and fold in the final counts. */
static int stop_group(struct pmu_cpu *pc, struct pmu_event *const *evs, unsigned n)
{
	int err = PMU_OK, e;

	for (unsigned i = 0; i < n; i++) {
		struct pmu_hwc *hw = &evs[i]->hw;
		if (!PMU_IDX_IS_FIXED(hw->idx) && (e = wr(evs[i], hw->config_base, hw->config)) && !err)
			err = e;
		pmu_event_update(evs[i]);
		if (PMU_IDX_IS_FIXED(hw->idx))
			pc->fixed_ctrl_shadow = pc->ops->fixed_field_set(pc->fixed_ctrl_shadow,
									 hw->idx - PMU_IDX_FIXED_BASE, 0);
		hw->enabled = false;
	}
	if (any_fixed(evs, n) && (e = wr(evs[0], pc->caps.fixed_ctrl, pc->fixed_ctrl_shadow)) && !err)
		err = e;
	return err;
}

int pmu_events_disable(struct pmu_event *const *evs, unsigned n)
{
	struct pmu_cpu *pc = NULL;
	int err;

	if (n == 0)
		return PMU_OK;
	if ((err = check_group(evs, n, &pc)) != PMU_OK)
		return err;
	if (pc->caps.global_ctrl) {
		/* Stop all at once, then read at leisure. */
		pc->global_ctrl_shadow &= ~pmu_events_global_mask(evs, n);
		err = wr(evs[0], pc->caps.global_ctrl, pc->global_ctrl_shadow);
	}
	int e = stop_group(pc, evs, n);
	return err ? err : e;
}

int pmu_events_arm(struct pmu_event *const *evs, unsigned n, struct pmu_bracket_regs *br)
{
	struct pmu_cpu *pc = NULL;
	int err;

	if (n == 0)
		return fail(evs[0], PMU_E_INVAL, "nothing to arm");
	if ((err = check_group(evs, n, &pc)) != PMU_OK)
		return err;
	if (!pc->caps.global_ctrl) {
		/* Version 1: the bracket's WRMSR is the event select itself. */
		if ((n != 1 || PMU_IDX_IS_FIXED(evs[0]->hw.idx)) && pc->caps.no_global_why)
			return fail(evs[0], PMU_E_UNSUPPORTED, "%s: a bracket can start only one GP counter",
				    pc->caps.no_global_why);
		if (n != 1 || PMU_IDX_IS_FIXED(evs[0]->hw.idx))
			return fail(
				evs[0], PMU_E_UNSUPPORTED,
				"architectural PMU v%u has no %s: a bracket can start only one GP counter",
				pc->caps.version, pmu_global_ctrl_name(&pc->caps));
		if ((err = program_one(pc, evs[0], false)) != PMU_OK)
			return err;
		br->msr = evs[0]->hw.config_base;
		br->on = evs[0]->hw.config | BIT(PERFEVTSEL_EN_BIT);
		br->off = evs[0]->hw.config;
	} else {
		if ((err = program_group(pc, evs, n, true)) != PMU_OK)
			return err;
		br->msr = pc->caps.global_ctrl;
		br->on = pc->global_ctrl_shadow | pmu_events_global_mask(evs, n);
		br->off = pc->global_ctrl_shadow;
	}
	for (unsigned i = 0; i < n; i++)
		evs[i]->hw.enabled = true;
	return PMU_OK;
}

void pmu_events_disarm(struct pmu_event *const *evs, unsigned n)
{
	struct pmu_cpu *pc = NULL;

	if (n == 0 || check_group(evs, n, &pc) != PMU_OK)
		return;
	/* The bracket already wrote GLOBAL_CTRL (or EN) off. */
	stop_group(pc, evs, n);
}

void pmu_events_del(struct pmu_event *const *evs, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		pmu_event_del(evs[i]);
}

void pmu_event_del(struct pmu_event *ev)
{
	struct pmu_cpu *pc;
	struct pmu_hwc *hw = &ev->hw;
	int err = PMU_OK;

	if (!(pc = owner_cpu(ev, &err)))
		return;
	if (hw->enabled)
		pmu_event_disable(ev);
	/* A zero event select also clears the counter's INUSE bit (v4). */
	if (!PMU_IDX_IS_FIXED(hw->idx)) {
		wr(ev, hw->config_base, 0);
		pc->gp_used &= ~(1u << hw->idx);
	} else {
		pc->fixed_used &= ~(1u << (hw->idx - PMU_IDX_FIXED_BASE));
	}
	if (hw->extra_msr)
		pc->ops->put_extra(pc, hw->extra_msr);
	pc->owner[hw->idx] = NULL;
	hw->idx = -1;
	hw->enabled = false;
}

/* --- Reading --- */

uint64_t pmu_event_update(struct pmu_event *ev)
{
	struct pmu_hwc *hw = &ev->hw;
	struct u64_pair prev;
	uint64_t now;

	if (hw->idx < 0)
		return pmu_event_count(ev);
	/* Two loads may straddle a PMI and give a pair that never existed;
	 * then the exchange below fails (every generation has one value) and
	 * hands back the real pair. */
	prev.lo = __atomic_load_n(&hw->prev.lo, __ATOMIC_RELAXED);
	prev.hi = __atomic_load_n(&hw->prev.hi, __ATOMIC_RELAXED);
	do {
		if (pmu_hw_rdpmc(hw->rdpmc_idx, &now) != 0) {
			/* RDPMC refused (CR4.PCE, hypervisor): RDMSR reads the same
			 * counter at CPL 0. */
			hw->rdpmc_faulted = true;
			if (pmu_hw_rdmsr(hw->event_base, &now) != 0)
				return pmu_event_count(ev);
		}
		/* A PMI (an NMI: it cannot be masked) that updated or reloaded
		 * the event anywhere between our load and the exchange bumped
		 * the generation, even when the reload stored the very value
		 * we loaded: then the exchange fails, prev is reloaded, the
		 * counter is read again, and only the remainder is added. A
		 * PMI after a successful exchange starts from our now, so the
		 * intervals each side adds do not overlap. */
	} while (!cmpxchg16b(&hw->prev, &prev, (struct u64_pair){ now, prev.hi + 1 }));
	__atomic_fetch_add(&hw->count, pmu_delta(prev.lo, now, hw->width), __ATOMIC_RELAXED);
	return pmu_event_count(ev);
}
