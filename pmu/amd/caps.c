/* The AMD backend's caps lines (pmu_ops.print_caps, after the generic
 * first line of pmu/caps.c). */
#include "pmu/amd/caps.h"
#include "lib/printf.h"
#include "pmu/amd/amd.h"
#include "pmu/pmu_internal.h"

void amd_caps_print(const struct pmu_caps *c, const char *prefix, pmu_line_fn out, void *ctx)
{
	struct pmu_caps_line l = { .len = 0 };

	if (c->version == 0) {
		pmu_caps_line_add(&l, "%sno PMU: %s", prefix,
				  c->no_pmu_why ? c->no_pmu_why : "unknown reason");
		pmu_caps_line_emit(&l, out, ctx);
		return;
	}
	pmu_caps_line_add(&l, "%sAMD PMU %s: %u counters x %u bits (mask %#x%s), no fixed counters", prefix,
			  amd_caps(c)->perfmon_v2 ? "PerfMonV2"
			  : amd_caps(c)->ext_core ? "PerfCtrExtCore"
						  : "legacy",
			  c->num_gp, c->gp_width, c->gp_mask,
			  c->counters_assumed ? ", from the family" : ", CPUID 0x80000022");
	pmu_caps_line_emit(&l, out, ctx);
	pmu_caps_line_add(&l, "%sevents available:", prefix);
	for (int e = 0; e < PMU_ARCH_NR; e++)
		if ((c->events_avail >> e) & 1)
			pmu_caps_line_add(&l, " %s", pmu_arch_events[e].name);
	pmu_caps_line_emit(&l, out, ctx);
	pmu_caps_line_add(&l, "%sregisters: %s0 %#x, %s0 %#x, stride %u", prefix, pmu_evtsel_name(c),
			  c->evtsel_base, pmu_ctr_name(c), c->ctr_base, c->ctr_stride);
	if (c->global_ctrl)
		pmu_caps_line_add(&l, ", %s %#x STATUS %#x STATUS_CLR %#x", pmu_global_ctrl_name(c),
				  c->global_ctrl, c->global_status, c->global_ovf);
	if (c->global_status_set)
		pmu_caps_line_add(&l, " STATUS_SET %#x", c->global_status_set);
	if (amd_caps(c)->lbr_pmc_freeze)
		pmu_caps_line_add(&l, ", LbrAndPmcFreeze");
	if (!c->global_ctrl && c->no_global_why)
		pmu_caps_line_add(&l, "; %s", c->no_global_why);
	pmu_caps_line_emit(&l, out, ctx);
}
