/* The Intel backend's caps lines (after the generic first line of
 * pmu/caps.c; pmu/intel/v6.c prints CPUID.23H's after them): CPUID.0AH,
 * IA32_PERF_CAPABILITIES and the register map; the hybrid core type on
 * the first line (print_caps_ident); and which of struct intel_caps tell
 * two CPU types apart (caps_same). */
#include "pmu/intel/caps.h"
#include "lib/printf.h"
#include "pmu/intel/intel.h"
#include "pmu/pmu_internal.h"

void intel_caps_print(const struct pmu_caps *c, const char *prefix, pmu_line_fn out, void *ctx)
{
	const struct intel_caps *ic = intel_caps(c);
	struct pmu_caps_line l = { .len = 0 };

	if (c->version == 0) {
		pmu_caps_line_add(&l, "%sno architectural PMU (CPUID.0AH.EAX[7:0]=0, max leaf %#x)", prefix,
				  c->max_leaf);
		pmu_caps_line_emit(&l, out, ctx);
		return;
	}

	pmu_caps_line_add(&l, "%sarchitectural PMU v%u: %u GP counters x %u bits (mask %#x%s)", prefix,
			  c->version, c->num_gp, c->gp_width, c->gp_mask, ic->leaf23 ? ", CPUID.23H" : "");
	if (c->version >= 2)
		pmu_caps_line_add(&l, ", fixed counters x %u bits (mask %#x, EDX[4:0]=%u%s)", c->fixed_width,
				  c->fixed_mask, c->num_fixed, c->version >= 5 ? ", v5 ECX bitmap" : "");
	if (ic->anythread_deprecated)
		pmu_caps_line_add(&l, ", AnyThread deprecated");
	if (c->counters_added)
		pmu_caps_line_add(&l, "; with %s", c->counters_added);
	pmu_caps_line_emit(&l, out, ctx);

	pmu_caps_line_add(&l, "%sevents (CPUID.0AH:EBX=%#x, length %u): available:", prefix,
			  c->events_unavail, c->events_len);
	for (int e = 0; e < PMU_ARCH_NR; e++)
		if ((c->events_avail >> e) & 1)
			pmu_caps_line_add(&l, " %s", pmu_arch_events[e].name);
	pmu_caps_line_add(&l, "; not available:");
	for (int e = 0; e < PMU_ARCH_NR; e++)
		if (!((c->events_avail >> e) & 1))
			pmu_caps_line_add(&l, " %s", pmu_arch_events[e].name);
	if (c->events_unknown)
		pmu_caps_line_add(&l, "; further available bits, unknown to pmutest: %#x", c->events_unknown);
	pmu_caps_line_emit(&l, out, ctx);

	if (!ic->pdcm)
		pmu_caps_line_add(&l, "%sIA32_PERF_CAPABILITIES absent (CPUID.01H:ECX.PDCM[15]=0)", prefix);
	else if (!ic->perf_caps_valid)
		pmu_caps_line_add(&l, "%sIA32_PERF_CAPABILITIES unreadable although CPUID.01H:ECX.PDCM=1",
				  prefix);
	else
		pmu_caps_line_add(
			&l,
			"%sIA32_PERF_CAPABILITIES=%#llx: full-width writes %s, LBR format %u, PEBS format %u%s%s%s%s%s",
			prefix, (unsigned long long)ic->perf_caps, ic->full_width_write ? "yes" : "no",
			ic->lbr_format, ic->pebs_format, ic->pebs_trap ? ", PEBS trap" : "",
			ic->pebs_arch_regs ? ", PEBS arch regs" : "",
			ic->pebs_baseline ? ", PEBS baseline" : "", ic->perf_metrics ? ", perf metrics" : "",
			c->freeze_smm ? ", freeze while SMM" : "");
	pmu_caps_line_emit(&l, out, ctx);

	pmu_caps_line_add(&l, "%sregisters: PERFEVTSEL0 %#x, counter0 %#x (writes via %#x), stride %u",
			  prefix, c->evtsel_base, c->ctr_base, c->ctr_write_base, c->ctr_stride);
	if (c->fixed_base)
		pmu_caps_line_add(&l, ", FIXED_CTR0 %#x", c->fixed_base);
	if (c->fixed_ctrl)
		pmu_caps_line_add(&l, ", FIXED_CTR_CTRL %#x", c->fixed_ctrl);
	if (c->global_ctrl)
		pmu_caps_line_add(&l, ", GLOBAL_CTRL %#x STATUS %#x OVF_CTRL %#x", c->global_ctrl,
				  c->global_status, c->global_ovf);
	if (c->global_status_set)
		pmu_caps_line_add(&l, " STATUS_SET %#x", c->global_status_set);
	if (c->global_inuse)
		pmu_caps_line_add(&l, " INUSE %#x", c->global_inuse);
	if (ic->offcore_msrs)
		pmu_caps_line_add(&l,
				  ic->offcore_msrs > 2 ? ", %u off-module response MSRs (OMR)"
						       : ", %u offcore-response MSR(s)",
				  ic->offcore_msrs);
	pmu_caps_line_emit(&l, out, ctx);
}

/* CPUID.1AH:EAX[31:24] (SDM vol. 2A, CPUID "Native Model ID Enumeration
 * Leaf"). */
static const char *intel_core_type_name(unsigned t)
{
	switch (t) {
	case CPUID_1A_CORE_TYPE_ATOM: return "Atom";
	case CPUID_1A_CORE_TYPE_CORE: return "Core";
	default: return "unknown";
	}
}

void intel_caps_print_ident(const struct pmu_caps *c, struct pmu_caps_line *l)
{
	const struct intel_caps *ic = intel_caps(c);

	if (ic->hybrid)
		pmu_caps_line_add(l, ", hybrid: core type %#x (%s), native model %#x", ic->core_type,
				  intel_core_type_name(ic->core_type), ic->native_model);
}

/* Two CPU types differ in what IA32_PERF_CAPABILITIES says, their core
 * type, and version 6's features and auto counter reload. The LBR format
 * and perf metrics are bits of PERF_CAPABILITIES, and CPUID.23H's counter
 * bitmaps are the common caps' masks, which pmu_caps_same compares. */
bool intel_caps_same(const struct pmu_caps *a, const struct pmu_caps *b)
{
	const struct intel_caps *x = intel_caps(a), *y = intel_caps(b);

	return x->perf_caps_valid == y->perf_caps_valid && x->perf_caps == y->perf_caps &&
	       x->pebs_format == y->pebs_format && x->pebs_trap == y->pebs_trap &&
	       x->pebs_arch_regs == y->pebs_arch_regs && x->pebs_baseline == y->pebs_baseline &&
	       x->hybrid == y->hybrid && x->core_type == y->core_type && x->native_model == y->native_model &&
	       x->v6_features == y->v6_features && x->acr_reload == y->acr_reload &&
	       x->acr_cause == y->acr_cause;
}
