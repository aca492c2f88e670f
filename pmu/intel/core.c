/* Intel backend: decodes CPUID leaves 0AH/1AH/23H and IA32_PERF_CAPABILITIES
 * into struct pmu_caps, says which MSR holds what, and encodes events. */
#include "arch/x86/cpuid.h"
#include "arch/x86/msr.h"
#include "lib/bits.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/intel/caps.h"
#include "pmu/intel/intel.h"
#include "pmu/intel/models.h"
#include "pmu/intel/offcore.h"
#include "pmu/intel/v6.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"

/* Counter constraints per microarchitecture (pmu/intel/models.h), from
 * Linux arch/x86/events/intel/core.c (intel_skl_event_constraints); the
 * other listed microarchitectures have none that pmutest models. */
struct intel_constraint {
	uint8_t event, umask;
	bool any_umask; /* the constraint holds for every umask */
	uint32_t gp_mask;
	const char *name;
};

static const struct intel_constraint skl_constraints[] = {
	{ 0xc0, 0x01, false, 0x2, "INST_RETIRED.PREC_DIST (PMC1 only)" },
	{ 0xd0, 0, true, 0xf, "MEM_INST_RETIRED.* (PMC0-3)" },
	{ 0xd1, 0, true, 0xf, "MEM_LOAD_RETIRED.* (PMC0-3)" },
	{ 0xd2, 0, true, 0xf, "MEM_LOAD_L3_HIT_RETIRED.* (PMC0-3)" },
	{ 0xcd, 0, true, 0xf, "MEM_TRANS_RETIRED.* (PMC0-3)" },
	{ 0xc6, 0, true, 0xf, "FRONTEND_RETIRED.* (PMC0-3)" },
};

static const struct {
	const struct intel_constraint *list;
	unsigned n;
} constraints[INTEL_UARCH_NR] = {
	[INTEL_SKYLAKE] = { skl_constraints, ARRAY_LEN(skl_constraints) },
};

static bool intel_match(const char *vendor_id)
{
	return strcmp(vendor_id, "GenuineIntel") == 0;
}

static void intel_decode_perf_caps(struct pmu_caps *c)
{
	struct intel_caps *ic = intel_caps_rw(c);
	struct cpuid_regs r;
	uint64_t v;

	pmu_hw_cpuid(1, 0, &r);
	intel_caps_rw(c)->pdcm = (r.ecx >> CPUID_1_ECX_PDCM_BIT) & 1;
	if (!intel_caps_rw(c)->pdcm || pmu_hw_rdmsr(MSR_IA32_PERF_CAPABILITIES, &v) != 0)
		return;
	ic->perf_caps_valid = true;
	ic->perf_caps = v;
	ic->lbr_format = v & PERF_CAP_LBR_FMT_MASK;
	ic->pebs_trap = (v >> PERF_CAP_PEBS_TRAP_BIT) & 1;
	ic->pebs_arch_regs = (v >> PERF_CAP_PEBS_ARCH_REG_BIT) & 1;
	ic->pebs_format = (v & PERF_CAP_PEBS_FMT_MASK) >> PERF_CAP_PEBS_FMT_SHIFT;
	c->freeze_smm = (v >> PERF_CAP_FREEZE_SMM_BIT) & 1;
	/* SDM vol. 3B, "IA32_DEBUGCTL MSR": bit 14, valid when
	 * IA32_PERF_CAPABILITIES[12] (SMM_FREEZE) is set. */
	c->freeze_smm_ctl = BIT(DEBUGCTL_FREEZE_WHILE_SMM_BIT);
	intel_caps_rw(c)->full_width_write = (v >> PERF_CAP_FW_WRITE_BIT) & 1;
	ic->pebs_baseline = (v >> PERF_CAP_PEBS_BASELINE_BIT) & 1;
	ic->perf_metrics = (v >> PERF_CAP_PERF_METRICS_BIT) & 1;
}

static void intel_decode_hybrid(struct pmu_caps *c)
{
	struct intel_caps *ic = intel_caps_rw(c);
	struct cpuid_regs r;

	if (c->max_leaf >= 7) {
		pmu_hw_cpuid(7, 0, &r);
		ic->hybrid = (r.edx >> CPUID_7_EDX_HYBRID_BIT) & 1;
	}
	if (ic->hybrid && c->max_leaf >= 0x1a) {
		pmu_hw_cpuid(0x1a, 0, &r);
		ic->core_type = BITS(r.eax, 31, 24);
		ic->native_model = BITS(r.eax, 23, 0);
	}
	/* Leaf 0x23 overrides the counter counts of leaf 0x0A with bitmaps:
	 * on hybrid parts they differ per core type, and they may have holes
	 * (pmu/intel/v6.c decodes every sub-leaf). */
	intel_v6_decode_leaf23(c);
}

/* Alder Lake and Raptor Lake enumerate in CPUID.0AH only the counters
 * both core types have, and no leaf 23H: a P-core has two more GP
 * counters and one more fixed counter than it says. Linux adds them the
 * same way, and takes leaf 0AH as it is when it already reports more than
 * the common set (the E-cores disabled in the BIOS: then it enumerates
 * the P-core's own 8 GP and 4 fixed counters) (Linux
 * arch/x86/events/intel/core.c, intel_pmu_init(), Alder Lake). */
#define ADL_COMMON_GP 6
#define ADL_COMMON_FIXED 3

static void intel_decode_p_core_counters(struct pmu_caps *c)
{
	struct intel_caps *ic = intel_caps_rw(c);
	const struct intel_model *m = intel_model_of(c);

	/* A hypervisor's CPUID.0AH describes the counters of its vCPU. */
	if (!m || !m->hybrid_0a_common || !ic->hybrid || ic->leaf23 || c->hypervisor ||
	    ic->core_type != CPUID_1A_CORE_TYPE_CORE)
		return;
	if (c->num_gp > ADL_COMMON_GP || c->num_fixed > ADL_COMMON_FIXED)
		return;
	c->gp_mask = c->gp_mask << 2 | 0x3;
	c->num_gp = fls32(c->gp_mask);
	c->fixed_mask = c->fixed_mask << 1 | 0x1;
	c->num_fixed = fls32(c->fixed_mask);
	c->counters_added = "two GP and one fixed counter beyond CPUID.0AH (an Alder/Raptor Lake P-core)";
}

static void intel_decode_caps(struct pmu_caps *c)
{
	struct cpuid_regs r;

	c->vendor = PMU_VENDOR_INTEL;
	c->uarch = NULL;
	c->no_pmu_why = "no architectural PMU (CPUID.0AH.EAX[7:0]=0)";
	if (c->max_leaf < 0x0a)
		return;
	pmu_hw_cpuid(0x0a, 0, &r);
	c->leaf_0a = r;
	c->version = BITS(r.eax, 7, 0);
	if (c->version == 0)
		return; /* no architectural PMU: every register stays absent (0) */

	c->num_gp = BITS(r.eax, 15, 8);
	if (c->num_gp > PMU_MAX_GP)
		c->num_gp = PMU_MAX_GP;
	c->gp_width = BITS(r.eax, 23, 16);
	c->gp_mask = (uint32_t)pmu_width_mask(c->num_gp);
	c->events_len = BITS(r.eax, 31, 24);
	c->events_unavail = r.ebx;
	for (unsigned e = 0; e < 32 && e < c->events_len; e++) {
		if ((r.ebx >> e) & 1)
			continue;
		if (e < PMU_ARCH_NR)
			c->events_avail |= 1u << e;
		else
			c->events_unknown |= 1u << e;
	}

	if (c->version >= 2) {
		c->num_fixed = BITS(r.edx, 4, 0);
		c->fixed_width = BITS(r.edx, 12, 5);
		/* Early Core-microarchitecture parts report version 2 with a
		 * wrong EDX (SDM vol. 3B, note under "Architectural Performance
		 * Monitoring Version 2"); like Linux, assume the three fixed
		 * counters on bare metal for versions 2-4. */
		if (c->version < 5 && c->num_fixed < 3 && !c->hypervisor) {
			c->num_fixed = 3;
			if (!c->fixed_width)
				c->fixed_width = c->gp_width;
		}
		if (c->num_fixed > PMU_MAX_FIXED)
			c->num_fixed = PMU_MAX_FIXED;
		c->fixed_mask = (uint32_t)pmu_width_mask(c->num_fixed);
		/* Version 5: fixed counter i also exists when ECX bit i is set. */
		if (c->version >= 5)
			c->fixed_mask |= r.ecx & (uint32_t)pmu_width_mask(PMU_MAX_FIXED);
		intel_caps_rw(c)->anythread_deprecated = (r.edx >> CPUID_0A_EDX_ANYTHREAD_DEPRECATED_BIT) & 1;
	}

	intel_decode_hybrid(c);
	intel_decode_p_core_counters(c);
	intel_decode_perf_caps(c);

	c->evtsel_base = MSR_IA32_PERFEVTSEL0;
	c->ctr_base = MSR_IA32_PMC0;
	c->ctr_write_base = intel_caps_rw(c)->full_width_write ? MSR_IA32_A_PMC0 : MSR_IA32_PMC0;
	c->ctr_stride = 1;
	c->debugctl = MSR_IA32_DEBUGCTL;
	/* Bits 63:32 reserved (TSX parts open 32/33: not modelled, so the
	 * driver never sets them); AnyThread needs version 3. */
	c->evtsel_reserved = ~0xffffffffull;
	if (c->version < 3)
		c->evtsel_reserved |= BIT(PERFEVTSEL_ANY_BIT);

	if (c->version >= 2) {
		uint64_t field = FIXED_CTR_CTRL_EN_MASK | BIT(FIXED_CTR_CTRL_PMI_BIT);
		uint64_t valid = 0;

		if (c->version >= 3)
			field |= BIT(FIXED_CTR_CTRL_ANY_BIT);
		for (unsigned i = 0; i < PMU_MAX_FIXED; i++)
			if (pmu_has_fixed(c, i))
				valid |= field << FIXED_CTR_CTRL_SHIFT(i);
		if (c->fixed_mask) {
			c->fixed_base = MSR_IA32_FIXED_CTR0;
			c->fixed_stride = 1;
		}
		c->fixed_ctrl = MSR_IA32_FIXED_CTR_CTRL;
		c->fixed_ctrl_reserved = ~valid;
		c->global_ctrl = MSR_IA32_PERF_GLOBAL_CTRL;
		c->global_status = MSR_IA32_PERF_GLOBAL_STATUS;
		c->global_ovf = MSR_IA32_PERF_GLOBAL_OVF_CTRL;
		c->global_ctrl_reserved = ~((uint64_t)c->gp_mask |
					    ((uint64_t)c->fixed_mask << PERF_GLOBAL_FIXED_SHIFT));
		c->global_ctrl_reset = c->gp_mask;
	}
	if (c->version >= 4) {
		c->global_status_set = MSR_IA32_PERF_GLOBAL_STATUS_SET;
		c->global_inuse = MSR_IA32_PERF_GLOBAL_INUSE;
	}
	/* IA32_DEBUGCTL.FREEZE_PERFMON_ON_PMI "if CPUID.01H:ECX[15] = 1 and
	 * CPUID.0AH:EAX[7:0] > 1" (SDM vol. 3B, "IA32_DEBUGCTL MSR"); from
	 * version 4 it sets CTR_Frz (and LBR_Frz) and writing them to
	 * GLOBAL_STATUS_RESET lifts it, before it cleared GLOBAL_CTRL. */
	if (c->version >= 2 && intel_caps_rw(c)->pdcm) {
		c->freeze_ctl = BIT(DEBUGCTL_FREEZE_PERFMON_ON_PMI_BIT);
		if (c->version >= 4) {
			c->freeze_status_bits = BIT(PERF_GLOBAL_STATUS_CTR_FRZ_BIT) |
						BIT(PERF_GLOBAL_STATUS_LBR_FRZ_BIT);
			c->freeze_counters_bit = BIT(PERF_GLOBAL_STATUS_CTR_FRZ_BIT);
		} else {
			c->freeze_clears_global_ctrl = true;
		}
	}
	intel_v6_registers(c);

	c->uarch = intel_uarch_name(intel_uarch_of(c));
	intel_caps_rw(c)->offcore_msrs = pmu_offcore_msrs(c);
}

static uint32_t intel_gp_allowed(const struct pmu_caps *c, const struct pmu_event_attr *a,
				 const char **constraint)
{
	uint32_t mask = c->gp_mask;
	enum intel_uarch u = intel_uarch_of(c);

	*constraint = NULL;
	/* A named event CPUID marks unavailable may not go on a GP counter. */
	if (a->arch != PMU_ARCH_NONE && !((c->events_avail >> a->arch) & 1)) {
		*constraint = "CPUID.0AH:EBX marks it unavailable on GP counters";
		return 0;
	}
	/* The offcore selects' counters (perfmon "Counter", Linux's event
	 * constraints; pmu/intel/offcore.c). */
	const struct pmu_offcore_model *o = pmu_offcore_model(c);
	int slot = pmu_offcore_slot_of(o, a->event, a->umask);
	if (slot >= 0 && o->slot_counter) {
		static const char *const pinned[PMU_OFFCORE_MAX] = { "OMR select 0 (PMC0)",
								     "OMR select 1 (PMC1)",
								     "OMR select 2 (PMC2)",
								     "OMR select 3 (PMC3)" };
		*constraint = pinned[slot];
		return mask & BIT(slot);
	}
	if (slot >= 0 && o->gp_mask) {
		*constraint = "OFFCORE_RESPONSE (PMC0-3)";
		return mask & o->gp_mask;
	}
	for (unsigned i = 0; i < constraints[u].n; i++) {
		const struct intel_constraint *k = &constraints[u].list[i];
		if (k->event == a->event && (k->any_umask || k->umask == a->umask)) {
			*constraint = k->name;
			return mask & k->gp_mask;
		}
	}
	return mask;
}

static int intel_fixed_for(const struct pmu_caps *c, const struct pmu_event_attr *a)
{
	enum pmu_arch_event e = pmu_arch_event_by_code(a->event, a->umask);
	const struct pmu_arch_event_desc *d = pmu_arch_event(e);

	/* A fixed counter has no edge/invert/threshold logic. */
	if (!d || d->fixed < 0 || a->event > 0xff || a->edge || a->inv || a->cmask)
		return -1;
	return pmu_has_fixed(c, (unsigned)d->fixed) ? d->fixed : -1;
}

/* AnyThread: the event-select bit Intel's any term sets (attr.own_config),
 * IA32_PERFEVTSELx bit 21 (SDM vol. 3B, "Architectural Performance
 * Monitoring Version 3"; deprecated from version 5, CPUID.0AH:EDX[15]). */
static bool intel_any(const struct pmu_event_attr *a)
{
	return a->own_config & BIT(PERFEVTSEL_ANY_BIT);
}

/* What GP and fixed counters refuse alike: a filter that counts nothing,
 * AnyThread before version 3 (SDM vol. 3B, AnyThread is v3 only), and
 * another backend's event-select bits (AMD's host_only/guest_only terms;
 * any other such bit is reserved here, which pmu_evtsel_check says). */
static int intel_check_filters(const struct pmu_caps *c, const struct pmu_event_attr *a, char *why,
			       size_t whylen)
{
	int err = pmu_attr_check_rings(a, why, whylen);

	if (err == PMU_OK && intel_any(a) && c->version < 3)
		return kerrf(why, whylen, PMU_E_UNSUPPORTED,
			     "AnyThread (any) needs architectural PMU version 3 (CPUID.0AH.EAX[7:0]=%u)",
			     c->version);
	if (err == PMU_OK &&
	    (a->own_config & (BIT(AMD_PERFEVTSEL_HOST_ONLY_BIT) | BIT(AMD_PERFEVTSEL_GUEST_ONLY_BIT))))
		return kerrf(
			why, whylen, PMU_E_UNSUPPORTED,
			"host_only/guest_only are AMD PerfEvtSel bits 41/40 (APM vol. 2, 13.2); Intel has none");
	return err;
}

/* The shared PERFEVTSEL bits (pmu_evtsel_common) plus AnyThread (own_config). */
static int intel_encode_gp(const struct pmu_caps *c, const struct pmu_event_attr *a, uint64_t *evtsel,
			   char *why, size_t whylen)
{
	uint64_t v;
	int err = intel_check_filters(c, a, why, whylen);

	if (err != PMU_OK)
		return err;
	if (a->event > 0xff)
		return kerrf(
			why, whylen, PMU_E_INVAL,
			"event select %#x: IA32_PERFEVTSELx holds 8 bits (SDM vol. 3B, PERFEVTSEL layout)",
			a->event);
	v = pmu_evtsel_common(a) | a->own_config;
	if ((err = pmu_evtsel_check(c, v, "", why, whylen)) != PMU_OK)
		return err;
	*evtsel = v;
	return PMU_OK;
}

static int intel_encode_fixed(const struct pmu_caps *c, const struct pmu_event_attr *a, unsigned i,
			      uint64_t *field, char *why, size_t whylen)
{
	uint64_t f = 0;

	if (!pmu_has_fixed(c, i)) {
		ksnprintf(why, whylen,
			  "fixed counter %u does not exist (CPUID.0AH: EDX[4:0]=%u, ECX=%#x, mask %#x)", i,
			  c->num_fixed, c->leaf_0a.ecx, c->fixed_mask);
		return PMU_E_UNSUPPORTED;
	}
	if (intel_fixed_for(c, a) != (int)i) {
		ksnprintf(why, whylen, "event 0x%02x umask 0x%02x%s is not what IA32_FIXED_CTR%u counts",
			  a->event, a->umask, (a->edge || a->inv || a->cmask) ? " with edge/inv/cmask" : "",
			  i);
		return PMU_E_INVAL;
	}
	int err = intel_check_filters(c, a, why, whylen);
	if (err != PMU_OK)
		return err;
	if (a->os)
		f |= BIT(FIXED_CTR_CTRL_OS_BIT);
	if (a->usr)
		f |= BIT(FIXED_CTR_CTRL_USR_BIT);
	if (intel_any(a))
		f |= BIT(FIXED_CTR_CTRL_ANY_BIT);
	if (a->intr)
		f |= BIT(FIXED_CTR_CTRL_PMI_BIT);
	*field = f;
	return PMU_OK;
}

/* IA32_FIXED_CTR_CTRL: a 4-bit field per fixed counter, counter i's at
 * bit 4i, counting when its OS or USR bit (1:0) is set (SDM vol. 3B,
 * "IA32_FIXED_CTR_CTRL MSR"; Linux intel_pmu_enable_fixed writes it the
 * same way). */
static uint64_t intel_fixed_field(uint64_t ctrl, unsigned i)
{
	return (ctrl >> FIXED_CTR_CTRL_SHIFT(i)) & FIXED_CTR_CTRL_FIELD_MASK;
}

static uint64_t intel_fixed_field_set(uint64_t ctrl, unsigned i, uint64_t field)
{
	unsigned sh = FIXED_CTR_CTRL_SHIFT(i);

	return (ctrl & ~(FIXED_CTR_CTRL_FIELD_MASK << sh)) | (field << sh);
}

static bool intel_fixed_field_counts(uint64_t field)
{
	return (field & FIXED_CTR_CTRL_EN_MASK) != 0;
}

/* The RSP or OMR MSR an offcore select names: 0xB7/0xBB umask 0x01 from
 * Nehalem to Ice Lake, 0x2A/0x2B umask 0x01 on Golden Cove to Cougar Cove
 * P-cores, 0xB7 umask 0x01/0x02 on Atom cores, and OMR n with umask bit n
 * of 0x2A (Panther/Coyote Cove) or 0xB7 (Arctic Wolf) (pmu/intel/offcore.c
 * has the rows and their sources). On a one-MSR model (Nehalem) 0xBB
 * still names RSP_1, and allocation may run it as 0xB7 on RSP_0. */
static uint32_t intel_extra_msr(const struct pmu_caps *c, const struct pmu_event_attr *a)
{
	const struct pmu_offcore_model *m = pmu_offcore_model(c);
	int slot = pmu_offcore_slot_of(m, a->event, a->umask);

	if (slot < 0)
		return 0;
	return pmu_offcore_msr(m, slot);
}

/* An event that names an RSP MSR, or carries an offcore_rsp value, is
 * checked against the model's table row before anything is written: a
 * model with no row has no RSP MSRs known, one with a row says which
 * events select them, and the value must keep to the MSR's valid bits. */
static int intel_extra_check(const struct pmu_caps *c, const struct pmu_event_attr *a, uint32_t extra,
			     char *why, size_t whylen)
{
	if ((a->event == PMU_OFFCORE_EVENT_0 || a->event == PMU_OFFCORE_EVENT_1) &&
	    a->umask == PMU_OFFCORE_UMASK && !extra && !pmu_offcore_model(c)) {
		ksnprintf(
			why, whylen,
			"offcore-response event %#x needs MSR_OFFCORE_RSP_%d, unknown on family %#x model %#x",
			a->event, a->event == PMU_OFFCORE_EVENT_0 ? 0 : 1, c->family, c->model);
		return PMU_E_UNSUPPORTED;
	}
	if (extra)
		return pmu_offcore_check(c, a, why, whylen);
	if (a->extra_config) {
		char sel[48];
		ksnprintf(why, whylen,
			  "offcore_rsp=%#llx belongs to events %s here, not event 0x%02x umask 0x%02x",
			  (unsigned long long)a->extra_config,
			  pmu_offcore_selects(pmu_offcore_model(c), sel, sizeof(sel)), a->event, a->umask);
		return PMU_E_INVAL;
	}
	return PMU_OK;
}

/* Take the RSP/OMR MSRs for a group (pmu/intel/offcore.c); an event moved
 * to another MSR counts with that MSR's select (0xB7 <-> 0xBB, 0x2A <->
 * 0x2B, umask 0x01 <-> 0x02 on Atom cores, the OMR umask bit). */
static int intel_get_extra(struct pmu_cpu *pc, struct pmu_event *const *evs, unsigned n, uint32_t *msr,
			   uint64_t *evtsel)
{
	uint32_t asked[PMU_IDX_NR];
	const struct pmu_offcore_model *m = pmu_offcore_model(&pc->caps);
	int err;

	for (unsigned i = 0; i < n; i++)
		asked[i] = msr[i];
	if ((err = pmu_offcore_reserve(pc, evs, n, msr)) != PMU_OK)
		return err;
	for (unsigned i = 0; i < n; i++) {
		int s = pmu_offcore_slot(msr[i]);
		if (!msr[i] || msr[i] == asked[i] || !m)
			continue;
		evtsel[i] = (evtsel[i] & ~(uint64_t)(PERFEVTSEL_EVENT_MASK | PERFEVTSEL_UMASK_MASK)) |
			    m->event[s] | (uint64_t)m->umask[s] << PERFEVTSEL_UMASK_SHIFT;
	}
	return PMU_OK;
}

/* Other vendors (Centaur, Zhaoxin) implement the architectural PMU too:
 * say what CPUID.0AH shows of it on a CPU no backend takes. */
static bool intel_foreign_why(const struct pmu_caps *c, char *why, size_t whylen)
{
	struct cpuid_regs r = { 0 };

	if (c->max_leaf >= 0x0a)
		pmu_hw_cpuid(0x0a, 0, &r);
	if (BITS(r.eax, 7, 0) == 0)
		ksnprintf(
			why, whylen,
			"no architectural PMU (CPUID.0AH.EAX[7:0]=0); no pmutest backend for vendor \"%s\" yet",
			c->vendor_id);
	else
		ksnprintf(why, whylen, "no pmutest backend for vendor \"%s\" yet (CPUID.0AH.EAX[7:0]=%u)",
			  c->vendor_id, (unsigned)BITS(r.eax, 7, 0));
	return true;
}

/* The caps lines: pmu/intel/caps.c's, then version 6's (pmu/intel/v6.c,
 * which reads struct intel_caps and so is not called from caps.c). */
static void intel_print_caps(const struct pmu_caps *c, const char *prefix, pmu_line_fn out, void *ctx)
{
	intel_caps_print(c, prefix, out, ctx);
	intel_v6_print(c, prefix, out, ctx);
}

/* offcore_rsp=V: the value of the event's MSR_OFFCORE_RSP_x or OMR (the
 * extra MSR extra_msr names), as Linux's offcore_rsp format term
 * (config1) on Intel. */
static void intel_term_offcore_set(struct pmu_event_attr *a, uint64_t v)
{
	a->extra_config = v;
}

static uint64_t intel_term_offcore_get(const struct pmu_event_attr *a)
{
	return a->extra_config;
}

/* any: AnyThread (intel_any), kept where IA32_PERFEVTSELx has it. */
static void intel_term_any_set(struct pmu_event_attr *a, uint64_t v)
{
	a->own_config = v ? a->own_config | BIT(PERFEVTSEL_ANY_BIT)
			  : a->own_config & ~BIT(PERFEVTSEL_ANY_BIT);
}

static uint64_t intel_term_any_get(const struct pmu_event_attr *a)
{
	return intel_any(a);
}

static const struct pmu_attr_term intel_terms[] = {
	{ "any", true, 1, intel_term_any_set, intel_term_any_get },
	{ "offcore_rsp", false, ~0ull, intel_term_offcore_set, intel_term_offcore_get },
	{ NULL, false, 0, NULL, NULL },
};

static const struct pmu_ops pmu_intel_ops = {
	.name = "intel",
	.vendor = PMU_VENDOR_INTEL,
	.match = intel_match,
	.decode_caps = intel_decode_caps,
	.gp_allowed = intel_gp_allowed,
	.fixed_for = intel_fixed_for,
	.encode_gp = intel_encode_gp,
	.encode_fixed = intel_encode_fixed,
	.fixed_field = intel_fixed_field,
	.fixed_field_set = intel_fixed_field_set,
	.fixed_field_counts = intel_fixed_field_counts,
	.extra_msr = intel_extra_msr,
	.extra_check = intel_extra_check,
	.get_extra = intel_get_extra,
	.put_extra = pmu_offcore_release,
	.src_gp_number = "CPUID.0AH.EAX[15:8]",
	.src_gp_width = "CPUID.0AH.EAX[23:16]",
	.src_events = "CPUID.0AH:EBX",
	.src_fixed_width = "CPUID.0AH:EDX[12:5]",
	/* As IA32_PERF_GLOBAL_CTRL's fields name the counters (PMCn_EN,
	 * FIXED_CTRn_EN: SDM vol. 3B, "IA32_PERF_GLOBAL_CTRL"); harness/kexec.py
	 * reads these lines. */
	.gp_counter_name = "PMC",
	.fixed_counter_name = "FIXED_CTR",
	.foreign_why = intel_foreign_why,
	.print_caps_ident = intel_caps_print_ident,
	.caps_same = intel_caps_same,
	.print_caps = intel_print_caps,
	.precise = &pmu_intel_precise_ops,
	.lbr = &intel_lbr_ops,
	.arch_encoding = NULL, /* the SDM's (arch), as pmu_attr_arch gives them */
	.arch = &intel_arch_defs,
	.terms = intel_terms,
};
PMU_BACKEND(pmu_intel_ops);
