/* Printing and comparing decoded PMU capabilities (the boot-time "#"
 * diagnostics, one block per distinct CPU type): the lines every vendor
 * shares; the backend's print_caps adds its own. */
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/pmu_internal.h"

void pmu_caps_line_add(struct pmu_caps_line *l, const char *fmt, ...)
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

void pmu_caps_line_emit(struct pmu_caps_line *l, pmu_line_fn out, void *ctx)
{
	out(ctx, l->buf);
	l->len = 0;
	l->buf[0] = '\0';
}

void pmu_caps_print(const struct pmu_caps *c, const char *prefix, pmu_line_fn out, void *ctx)
{
	struct pmu_caps_line l = { .len = 0 };
	const struct pmu_ops *ops;

	pmu_caps_line_add(&l, "%s%s family %#x model %#x stepping %u", prefix, c->vendor_id, c->family,
			  c->model, c->stepping);
	if (c->uarch)
		pmu_caps_line_add(&l, " (%s)", c->uarch);
	if (c->hv_signature[0])
		pmu_caps_line_add(&l, ", under %s (CPUID %#x: \"%s\")", pmu_hv_name(c->hv), c->hv_leaf,
				  c->hv_signature);
	else if (c->hypervisor)
		pmu_caps_line_add(&l, ", under %s", pmu_hv_name(c->hv));
	ops = c->vendor == PMU_VENDOR_UNKNOWN ? NULL : pmu_backend_of(c->vendor);
	if (ops && ops->print_caps_ident)
		ops->print_caps_ident(c, &l);
	pmu_caps_line_emit(&l, out, ctx);

	if (c->vendor == PMU_VENDOR_UNKNOWN) {
		pmu_caps_line_add(&l, "%sno PMU backend for vendor \"%s\"", prefix, c->vendor_id);
		pmu_caps_line_emit(&l, out, ctx);
		return;
	}
	if (ops && ops->print_caps)
		ops->print_caps(c, prefix, out, ctx);
}

bool pmu_caps_same(const struct pmu_caps *a, const struct pmu_caps *b)
{
	const struct pmu_ops *ops;

	if (!(a->vendor == b->vendor && strcmp(a->vendor_id, b->vendor_id) == 0 && a->family == b->family &&
	      a->model == b->model && a->version == b->version && a->gp_mask == b->gp_mask &&
	      a->gp_width == b->gp_width && a->fixed_mask == b->fixed_mask &&
	      a->fixed_width == b->fixed_width && a->events_len == b->events_len &&
	      a->events_unavail == b->events_unavail && a->events_avail == b->events_avail))
		return false;
	/* The backend knows which of its words tell two CPU types apart;
	 * without it, all of them do. */
	ops = a->vendor == PMU_VENDOR_UNKNOWN ? NULL : pmu_backend_of(a->vendor);
	if (ops && ops->caps_same)
		return ops->caps_same(a, b);
	return memcmp(a->vendor_caps, b->vendor_caps, sizeof(a->vendor_caps)) == 0;
}

/* The register names where no backend defines the architectural PMU. */
static const struct pmu_arch_defs plain_names = {
	.evtsel_name = "PERFEVTSEL",
	.ctr_name = "PMC",
	.fixed_name = "FIXED_CTR",
	.fixed_ctrl_name = "FIXED_CTR_CTRL",
	.global_ctrl_name = "GLOBAL_CTRL",
	.global_inuse_name = "GLOBAL_INUSE",
};

static const struct pmu_arch_defs *arch_names(void)
{
	const struct pmu_arch_defs *a = pmu_backend_arch();

	return a ? a : &plain_names;
}

const char *pmu_evtsel_name(const struct pmu_caps *c)
{
	return c && c->evtsel_name ? c->evtsel_name : arch_names()->evtsel_name;
}

const char *pmu_ctr_name(const struct pmu_caps *c)
{
	return c && c->ctr_name ? c->ctr_name : arch_names()->ctr_name;
}

const char *pmu_fixed_name(const struct pmu_caps *c)
{
	return c && c->fixed_name ? c->fixed_name : arch_names()->fixed_name;
}

const char *pmu_fixed_ctrl_name(const struct pmu_caps *c)
{
	return c && c->fixed_ctrl_name ? c->fixed_ctrl_name : arch_names()->fixed_ctrl_name;
}

const char *pmu_global_ctrl_name(const struct pmu_caps *c)
{
	return c && c->global_ctrl_name ? c->global_ctrl_name : arch_names()->global_ctrl_name;
}

const char *pmu_global_inuse_name(const struct pmu_caps *c)
{
	return c && c->global_inuse_name ? c->global_inuse_name : arch_names()->global_inuse_name;
}

const char *pmu_idx_name(const struct pmu_caps *c, int idx, char *buf, size_t n)
{
	if (idx < 0)
		ksnprintf(buf, n, "(no counter)");
	else if (PMU_IDX_IS_FIXED(idx))
		ksnprintf(buf, n, "%s%d", pmu_fixed_name(c), idx - PMU_IDX_FIXED_BASE);
	else
		ksnprintf(buf, n, "%s%d", pmu_ctr_name(c), idx);
	return buf;
}
