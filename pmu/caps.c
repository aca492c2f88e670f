/* Printing and comparing decoded PMU capabilities (the boot-time "#"
 * diagnostics, one block per distinct CPU type). */
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/intel/v6.h"
#include "pmu/pmu.h"

/* A line assembled piece by piece; output is cut, never overrun. */
struct caps_line {
	char buf[240];
	size_t len;
};

static void line_add(struct caps_line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line_add(struct caps_line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len >= sizeof(l->buf) - 1)
		return;
	va_start(ap, fmt);
	n = kvsnprintf(l->buf + l->len, sizeof(l->buf) - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += (size_t)n;
	if (l->len > sizeof(l->buf) - 1)
		l->len = sizeof(l->buf) - 1;
}

static void line_emit(struct caps_line *l, pmu_line_fn out, void *ctx)
{
	out(ctx, l->buf);
	l->len = 0;
	l->buf[0] = '\0';
}

static const char *core_type_name(unsigned t)
{
	switch (t) {
	case CPUID_1A_CORE_TYPE_ATOM: return "Atom";
	case CPUID_1A_CORE_TYPE_CORE: return "Core";
	default: return "unknown";
	}
}

/* AMD has no CPUID.0AH and no IA32_PERF_CAPABILITIES: say what the
 * backend found instead (pmu/amd/core.c). */
static void amd_caps_print(const struct pmu_caps *c, const char *prefix, pmu_line_fn out, void *ctx)
{
	struct caps_line l = { .len = 0 };

	if (c->version == 0) {
		line_add(&l, "%sno PMU: %s", prefix, c->no_pmu_why ? c->no_pmu_why : "unknown reason");
		line_emit(&l, out, ctx);
		return;
	}
	line_add(&l, "%sAMD PMU %s: %u counters x %u bits (mask %#x%s), no fixed counters", prefix,
		 c->amd_perfmon_v2 ? "PerfMonV2"
		 : c->amd_ext_core ? "PerfCtrExtCore"
				   : "legacy",
		 c->num_gp, c->gp_width, c->gp_mask,
		 c->counters_assumed ? ", from the family" : ", CPUID 0x80000022");
	line_emit(&l, out, ctx);
	line_add(&l, "%sevents available:", prefix);
	for (int e = 0; e < PMU_ARCH_NR; e++)
		if ((c->events_avail >> e) & 1)
			line_add(&l, " %s", pmu_arch_events[e].name);
	line_emit(&l, out, ctx);
	line_add(&l, "%sregisters: %s0 %#x, %s0 %#x, stride %u", prefix, pmu_evtsel_name(c), c->evtsel_base,
		 pmu_ctr_name(c), c->ctr_base, c->ctr_stride);
	if (c->global_ctrl)
		line_add(&l, ", %s %#x STATUS %#x STATUS_CLR %#x", pmu_global_ctrl_name(c), c->global_ctrl,
			 c->global_status, c->global_ovf);
	if (c->global_status_set)
		line_add(&l, " STATUS_SET %#x", c->global_status_set);
	if (c->amd_lbr_pmc_freeze)
		line_add(&l, ", LbrAndPmcFreeze");
	if (!c->global_ctrl && c->no_global_why)
		line_add(&l, "; %s", c->no_global_why);
	line_emit(&l, out, ctx);
}

void pmu_caps_print(const struct pmu_caps *c, const char *prefix, pmu_line_fn out, void *ctx)
{
	struct caps_line l = { .len = 0 };

	line_add(&l, "%s%s family %#x model %#x stepping %u", prefix, c->vendor_id, c->family, c->model,
		 c->stepping);
	if (c->uarch)
		line_add(&l, " (%s)", c->uarch);
	if (c->hv_signature[0])
		line_add(&l, ", under %s (CPUID %#x: \"%s\")", pmu_hv_name(c->hv), c->hv_leaf,
			 c->hv_signature);
	else if (c->hypervisor)
		line_add(&l, ", under %s", pmu_hv_name(c->hv));
	if (c->hybrid)
		line_add(&l, ", hybrid: core type %#x (%s), native model %#x", c->core_type,
			 core_type_name(c->core_type), c->native_model);
	line_emit(&l, out, ctx);

	if (c->vendor == PMU_VENDOR_UNKNOWN) {
		line_add(&l, "%sno PMU backend for vendor \"%s\"", prefix, c->vendor_id);
		line_emit(&l, out, ctx);
		return;
	}
	if (c->vendor == PMU_VENDOR_AMD) {
		amd_caps_print(c, prefix, out, ctx);
		return;
	}
	if (c->version == 0) {
		line_add(&l, "%sno architectural PMU (CPUID.0AH.EAX[7:0]=0, max leaf %#x)", prefix,
			 c->max_leaf);
		line_emit(&l, out, ctx);
		return;
	}

	line_add(&l, "%sarchitectural PMU v%u: %u GP counters x %u bits (mask %#x%s)", prefix, c->version,
		 c->num_gp, c->gp_width, c->gp_mask, c->leaf23 ? ", CPUID.23H" : "");
	if (c->version >= 2)
		line_add(&l, ", fixed counters x %u bits (mask %#x, EDX[4:0]=%u%s)", c->fixed_width,
			 c->fixed_mask, c->num_fixed, c->version >= 5 ? ", v5 ECX bitmap" : "");
	if (c->anythread_deprecated)
		line_add(&l, ", AnyThread deprecated");
	if (c->counters_added)
		line_add(&l, "; with %s", c->counters_added);
	line_emit(&l, out, ctx);

	line_add(&l, "%sevents (CPUID.0AH:EBX=%#x, length %u): available:", prefix, c->events_unavail,
		 c->events_len);
	for (int e = 0; e < PMU_ARCH_NR; e++)
		if ((c->events_avail >> e) & 1)
			line_add(&l, " %s", pmu_arch_events[e].name);
	line_add(&l, "; not available:");
	for (int e = 0; e < PMU_ARCH_NR; e++)
		if (!((c->events_avail >> e) & 1))
			line_add(&l, " %s", pmu_arch_events[e].name);
	if (c->events_unknown)
		line_add(&l, "; further available bits, unknown to pmutest: %#x", c->events_unknown);
	line_emit(&l, out, ctx);

	if (!c->pdcm)
		line_add(&l, "%sIA32_PERF_CAPABILITIES absent (CPUID.01H:ECX.PDCM[15]=0)", prefix);
	else if (!c->perf_caps_valid)
		line_add(&l, "%sIA32_PERF_CAPABILITIES unreadable although CPUID.01H:ECX.PDCM=1", prefix);
	else
		line_add(
			&l,
			"%sIA32_PERF_CAPABILITIES=%#llx: full-width writes %s, LBR format %u, PEBS format %u%s%s%s%s%s",
			prefix, (unsigned long long)c->perf_caps, c->full_width_write ? "yes" : "no",
			c->lbr_format, c->pebs_format, c->pebs_trap ? ", PEBS trap" : "",
			c->pebs_arch_regs ? ", PEBS arch regs" : "",
			c->pebs_baseline ? ", PEBS baseline" : "", c->perf_metrics ? ", perf metrics" : "",
			c->freeze_smm ? ", freeze while SMM" : "");
	line_emit(&l, out, ctx);

	line_add(&l, "%sregisters: PERFEVTSEL0 %#x, counter0 %#x (writes via %#x), stride %u", prefix,
		 c->evtsel_base, c->ctr_base, c->ctr_write_base, c->ctr_stride);
	if (c->fixed_base)
		line_add(&l, ", FIXED_CTR0 %#x", c->fixed_base);
	if (c->fixed_ctrl)
		line_add(&l, ", FIXED_CTR_CTRL %#x", c->fixed_ctrl);
	if (c->global_ctrl)
		line_add(&l, ", GLOBAL_CTRL %#x STATUS %#x OVF_CTRL %#x", c->global_ctrl, c->global_status,
			 c->global_ovf);
	if (c->global_status_set)
		line_add(&l, " STATUS_SET %#x", c->global_status_set);
	if (c->global_inuse)
		line_add(&l, " INUSE %#x", c->global_inuse);
	if (c->offcore_msrs)
		line_add(&l, ", %u offcore-response MSR(s)", c->offcore_msrs);
	line_emit(&l, out, ctx);
	intel_v6_print(c, prefix, out, ctx);
}

bool pmu_caps_same(const struct pmu_caps *a, const struct pmu_caps *b)
{
	return a->vendor == b->vendor && strcmp(a->vendor_id, b->vendor_id) == 0 && a->family == b->family &&
	       a->model == b->model && a->version == b->version && a->gp_mask == b->gp_mask &&
	       a->gp_width == b->gp_width && a->fixed_mask == b->fixed_mask &&
	       a->fixed_width == b->fixed_width && a->events_len == b->events_len &&
	       a->events_unavail == b->events_unavail && a->perf_caps_valid == b->perf_caps_valid &&
	       a->perf_caps == b->perf_caps && a->hybrid == b->hybrid && a->core_type == b->core_type &&
	       a->native_model == b->native_model && a->events_avail == b->events_avail &&
	       a->v6_features == b->v6_features && a->acr_reload == b->acr_reload &&
	       a->acr_cause == b->acr_cause && a->amd_lbr_pmc_freeze == b->amd_lbr_pmc_freeze;
}

const char *pmu_idx_name(const struct pmu_caps *c, int idx, char *buf, size_t n)
{
	if (idx < 0)
		ksnprintf(buf, n, "(no counter)");
	else if (PMU_IDX_IS_FIXED(idx))
		ksnprintf(buf, n, "IA32_FIXED_CTR%d", idx - PMU_IDX_FIXED_BASE);
	else
		ksnprintf(buf, n, "%s%d", c ? pmu_ctr_name(c) : "IA32_PMC", idx);
	return buf;
}
