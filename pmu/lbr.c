/* Last branch records: which facility a CPU has (the backend decodes it:
 * pmu/intel/lbr.c, pmu/amd/lbr.c), encoding a filter for it, reading its
 * stack most recent first, each kind's MSRs and stride as data.
 *
 * Sources: Intel SDM vol. 3B, chapter "Debug, Branch Profile, TSC, and
 * Intel Resource Director Technology Features" ("Last Branch, Interrupt,
 * and Exception Recording" and the "LBR Stack" section of each
 * microarchitecture, "Filtering of Last Branch Records", "Call Stack
 * Profiling", "Architectural Last Branch Records"); vol. 4 for the MSRs;
 * Linux arch/x86/events/intel/lbr.c (record formats, arch-LBR entry
 * order) and arch/x86/events/amd/lbr.c (LbrExtV2). */
#include "pmu/lbr.h"

#include "arch/x86/msr.h"
#include "lib/bits.h"
#include "lib/printf.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"

void pmu_lbr_decode(const struct pmu_caps *c, struct pmu_lbr_caps *l)
{
	const struct pmu_ops *ops = pmu_backend_of(c->vendor);

	*l = (struct pmu_lbr_caps){ .kind = PMU_LBR_NONE, .why = "" };
	if (!ops || !ops->lbr) {
		ksnprintf(l->why, sizeof(l->why), "no pmutest backend decodes the LBRs of vendor \"%s\"",
			  c->vendor_id);
		return;
	}
	ops->lbr->decode(c, l);
}

int pmu_lbr_encode(const struct pmu_lbr_caps *l, const struct pmu_lbr_filter *f, uint64_t ctl_now,
		   struct pmu_lbr_regs *r, char *why, size_t whylen)
{
	/* The suppress bit of each kind in the select register, laid out
	 * alike by Intel's MSR_LBR_SELECT and AMD's LBR_SELECT (SDM vol. 3B,
	 * "Filtering of Last Branch Records"; APM vol. 2, "LBR Stack"; Linux
	 * arch/x86/events/amd/lbr.c amd_pmu_lbr_setup_filter). */
	static const uint8_t select_bit[PMU_LBR_BR_NR] = {
		[PMU_LBR_BR_JCC] = LBR_SELECT_JCC_BIT,
		[PMU_LBR_BR_NEAR_REL_JMP] = LBR_SELECT_NEAR_REL_JMP_BIT,
		[PMU_LBR_BR_NEAR_IND_JMP] = LBR_SELECT_NEAR_IND_JMP_BIT,
		[PMU_LBR_BR_NEAR_REL_CALL] = LBR_SELECT_NEAR_REL_CALL_BIT,
		[PMU_LBR_BR_NEAR_IND_CALL] = LBR_SELECT_NEAR_IND_CALL_BIT,
		[PMU_LBR_BR_NEAR_RET] = LBR_SELECT_NEAR_RET_BIT,
		[PMU_LBR_BR_FAR] = LBR_SELECT_FAR_BRANCH_BIT,
	};
	uint32_t kinds = f->kinds & PMU_LBR_BR_ALL;

	*r = (struct pmu_lbr_regs){ 0 };
	if (l->kind == PMU_LBR_NONE)
		return kerrf(why, whylen, PMU_E_UNSUPPORTED, "%s", l->why);
	if (!f->os && !f->usr)
		return kerrf(why, whylen, PMU_E_INVAL, "a filter that keeps neither ring records nothing");
	if ((!f->os || !f->usr) && !l->cpl_filter)
		return kerrf(why, whylen, PMU_E_UNSUPPORTED, "%s LBRs: no privilege-level filter",
			     pmu_lbr_kind_name(l->kind));
	if (kinds != PMU_LBR_BR_ALL && !l->type_filter)
		return kerrf(why, whylen, PMU_E_UNSUPPORTED, "%s LBRs: no branch-type filter",
			     pmu_lbr_kind_name(l->kind));
	if (f->call_stack && !l->call_stack)
		return kerrf(why, whylen, PMU_E_UNSUPPORTED, "%s LBRs: no call-stack mode",
			     pmu_lbr_kind_name(l->kind));
	r->ctl_msr = l->ctl_msr;
	if (l->ctl_filter) {
		/* The filter is in the enabling register (architectural
		 * LBRs): the backend encodes it. */
		r->ctl_on = pmu_backend_lbr(l->kind)->encode_ctl(l, f, kinds);
		r->ctl_off = 0;
		return PMU_OK;
	}
	/* A select register: suppress what is not asked for (Linux
	 * intel_pmu_setup_hw_lbr_filter, amd_pmu_lbr_setup_filter). */
	if (l->select_msr) {
		uint64_t v = (f->os ? 0 : BIT(LBR_SELECT_CPL_EQ_0_BIT)) |
			     (f->usr ? 0 : BIT(LBR_SELECT_CPL_NEQ_0_BIT));
		for (unsigned k = 0; k < PMU_LBR_BR_NR; k++)
			if (!((kinds >> k) & 1))
				v |= BIT(select_bit[k]);
		if (f->call_stack)
			v |= BIT(LBR_SELECT_EN_CALLSTACK_BIT);
		r->select_msr = l->select_msr;
		r->select = v;
	}
	r->ctl_on = ctl_now | l->ctl_enable;
	r->ctl_off = ctl_now & ~l->ctl_enable;
	return PMU_OK;
}

struct pmu_lbr_entry pmu_lbr_decode_entry(const struct pmu_lbr_caps *l, uint64_t from, uint64_t to,
					  uint64_t info)
{
	const struct pmu_lbr_ops *ops = pmu_backend_lbr(l->kind);

	if (!ops)
		return (struct pmu_lbr_entry){ .from = from, .to = to, .info = info, .valid = true };
	return ops->entry(l, from, to, info);
}

int pmu_lbr_snapshot(const struct pmu_lbr_caps *l, struct pmu_lbr_snapshot *s)
{
	int f = 0;

	s->n = l->depth > PMU_LBR_MAX_DEPTH ? PMU_LBR_MAX_DEPTH : l->depth;
	s->tos = 0;
	if (l->tos_msr && (f = pmu_hw_rdmsr(l->tos_msr, &s->tos)))
		return f;
	for (unsigned i = 0; i < s->n; i++) {
		s->info[i] = 0;
		if ((f = pmu_hw_rdmsr(l->from_msr + i * l->stride, &s->from[i])) ||
		    (f = pmu_hw_rdmsr(l->to_msr + i * l->stride, &s->to[i])) ||
		    (l->info_msr && (f = pmu_hw_rdmsr(l->info_msr + i, &s->info[i]))))
			return f;
	}
	return 0;
}

struct pmu_lbr_entry pmu_lbr_recent(const struct pmu_lbr_caps *l, const struct pmu_lbr_snapshot *s,
				    unsigned k)
{
	unsigned i = k;

	/* Legacy: TOS is the most recent entry, the older ones below it
	 * (Linux intel_pmu_lbr_read_64). Architectural and AMD: entry 0 is
	 * the most recent (Linux intel_pmu_arch_lbr_read, amd_pmu_lbr_read). */
	if (l->kind == PMU_LBR_LEGACY && s->n)
		i = (unsigned)((s->tos % s->n) + s->n - k % s->n) % s->n;
	if (i >= s->n)
		return (struct pmu_lbr_entry){ 0 };
	return pmu_lbr_decode_entry(l, s->from[i], s->to[i], s->info[i]);
}

int pmu_lbr_clear(const struct pmu_lbr_caps *l)
{
	int f;

	if (l->reset_msr)
		return pmu_hw_wrmsr(l->reset_msr, l->depth);
	for (unsigned i = 0; i < l->depth; i++)
		if ((f = pmu_hw_wrmsr(l->from_msr + i * l->stride, 0)) ||
		    (f = pmu_hw_wrmsr(l->to_msr + i * l->stride, 0)) ||
		    (l->info_msr && (f = pmu_hw_wrmsr(l->info_msr + i, 0))))
			return f;
	return l->tos_msr ? pmu_hw_wrmsr(l->tos_msr, 0) : 0;
}

const char *pmu_lbr_kind_name(enum pmu_lbr_kind k)
{
	const struct pmu_lbr_ops *ops;

	if (k == PMU_LBR_NONE)
		return "no";
	ops = pmu_backend_lbr(k);
	return ops && ops->kind_name ? ops->kind_name(k) : "?";
}

const char *pmu_lbr_branch_name(enum pmu_lbr_branch b)
{
	static const char *const names[PMU_LBR_BR_NR] = {
		[PMU_LBR_BR_JCC] = "Jcc",
		[PMU_LBR_BR_NEAR_REL_JMP] = "JMP rel",
		[PMU_LBR_BR_NEAR_IND_JMP] = "JMP indirect",
		[PMU_LBR_BR_NEAR_REL_CALL] = "CALL rel",
		[PMU_LBR_BR_NEAR_IND_CALL] = "CALL indirect",
		[PMU_LBR_BR_NEAR_RET] = "RET",
		[PMU_LBR_BR_FAR] = "far",
	};
	return b < PMU_LBR_BR_NR ? names[b] : "?";
}
