/* Boot-time PMU checks on one CPU: which counters an earlier owner left
 * running (reported, left alone unless pmu.takeover=1), and whether the
 * counters are real, probed like Linux's check_msr(): write a pattern,
 * read it back, restore; then count a known workload. */
#include "arch/x86/cpuid.h"
#include "arch/x86/msr.h"
#include "arch/x86/vectors.h"
#include "lib/bits.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/loops.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"

/* Bit 31 clear, so a legacy (sign-extending) write stores it unchanged;
 * both halves non-zero so a counter that drops high or low bits shows. */
#define PMU_PROBE_PATTERN 0x2a5b3c4dull

static const char *vector_name(int v)
{
	return x86_vector_mnemonic((unsigned)v, "an exception");
}

/* The probe's verdict: why this CPU's counters are not used. */
#define reason(pc, ...) kerrf((pc)->reason, sizeof((pc)->reason), 0, __VA_ARGS__)

void pmu_inuse_scan(struct pmu_cpu *pc)
{
	const struct pmu_caps *c = &pc->caps;
	struct pmu_inuse *iu = &pc->inuse;
	uint64_t v;
	int vec;

	memset(iu, 0, sizeof(*iu));
	pc->gp_reserved = pc->fixed_reserved = 0;
	if (!pc->ops || c->version == 0)
		return;

#define SCAN_READ(msr_, dst_)                        \
	do {                                         \
		vec = pmu_hw_rdmsr((msr_), &v);      \
		if (vec && !iu->read_fault) {        \
			iu->read_fault = vec;        \
			iu->read_fault_msr = (msr_); \
		}                                    \
		dst_ = vec ? 0 : v;                  \
	} while (0)

	for (unsigned x = 0; x < PMU_MAX_GP; x++) {
		if (!pmu_has_gp(c, x))
			continue;
		SCAN_READ(pmu_evtsel_msr(c, x), iu->evtsel[x]);
		if ((iu->evtsel[x] >> PERFEVTSEL_EN_BIT) & 1)
			iu->gp |= 1u << x;
	}
	if (c->fixed_ctrl) {
		SCAN_READ(c->fixed_ctrl, iu->fixed_ctrl);
		for (unsigned i = 0; i < PMU_MAX_FIXED; i++)
			if (pmu_has_fixed(c, i) &&
			    pc->ops->fixed_field_counts(pc->ops->fixed_field(iu->fixed_ctrl, i)))
				iu->fixed |= 1u << i;
	}
	if (c->global_ctrl) {
		SCAN_READ(c->global_ctrl, iu->global_ctrl);
		iu->global_ctrl_valid = !vec;
	}
	/* Version 4's INUSE marks a GP counter whose event select is non-zero
	 * even with EN clear: another agent's claim, so it is left alone too
	 * (SDM vol. 3B, "Architectural Performance Monitoring Version 4",
	 * IA32_PERF_GLOBAL_INUSE). */
	/* A hypervisor may advertise version 4 without INUSE (Xen's lacked it
	 * until a 2023 RFC, VMware lists only the version 2 MSRs): a faulting
	 * read means no INUSE, reported, and the scan goes on without it. */
	if (c->global_inuse) {
		iu->global_inuse_fault = pmu_hw_rdmsr(c->global_inuse, &v);
		iu->global_inuse = iu->global_inuse_fault ? 0 : v;
		iu->global_inuse_valid = !iu->global_inuse_fault;
		iu->gp |= (uint32_t)iu->global_inuse & c->gp_mask;
	}
#undef SCAN_READ
	pc->gp_reserved = iu->gp;
	pc->fixed_reserved = iu->fixed;
	pc->fixed_ctrl_shadow = iu->fixed_ctrl;
	pc->global_ctrl_shadow = iu->global_ctrl;
}

void pmu_inuse_takeover(struct pmu_cpu *pc)
{
	const struct pmu_caps *c = &pc->caps;
	struct pmu_inuse *iu = &pc->inuse;

	if (!iu->gp && !iu->fixed)
		return;
	/* Stop globally first so nothing counts half-reconfigured. */
	if (c->global_ctrl) {
		pc->global_ctrl_shadow &= ~((uint64_t)iu->gp | (uint64_t)iu->fixed
								       << PERF_GLOBAL_FIXED_SHIFT);
		pmu_hw_wrmsr(c->global_ctrl, pc->global_ctrl_shadow);
	}
	for (unsigned x = 0; x < PMU_MAX_GP; x++)
		if ((iu->gp >> x) & 1)
			pmu_hw_wrmsr(pmu_evtsel_msr(c, x), 0);
	if (iu->fixed && c->fixed_ctrl) {
		for (unsigned i = 0; i < PMU_MAX_FIXED; i++)
			if ((iu->fixed >> i) & 1)
				pc->fixed_ctrl_shadow = pc->ops->fixed_field_set(pc->fixed_ctrl_shadow, i, 0);
		pmu_hw_wrmsr(c->fixed_ctrl, pc->fixed_ctrl_shadow);
	}
	pc->gp_reserved = pc->fixed_reserved = 0;
	iu->taken_over = true;
}

/* GLOBAL_CTRL comes out of RESET with every GP enable set (SDM vol. 3A,
 * "Processor State After Reset"): clear the bits of the counters that are
 * ours, so that setting a counter's own EN later does not start it before
 * the GLOBAL_CTRL write that is meant to. Other owners' bits stay. */
static void pmu_quiesce_free(struct pmu_cpu *pc)
{
	const struct pmu_caps *c = &pc->caps;
	uint64_t ours, want;

	if (!c->global_ctrl || !pc->inuse.global_ctrl_valid)
		return;
	ours = ((uint64_t)c->gp_mask & ~(uint64_t)pc->gp_reserved) |
	       ((uint64_t)(c->fixed_mask & ~pc->fixed_reserved) << PERF_GLOBAL_FIXED_SHIFT);
	want = pc->global_ctrl_shadow & ~ours;
	/* The shadow equals the hardware here (scan read it, takeover wrote it). */
	if (want != pc->global_ctrl_shadow) {
		pc->global_ctrl_shadow = want;
		pmu_hw_wrmsr(c->global_ctrl, want);
	}
}

static void probe_default_workload(void *ctx)
{
	(void)ctx;
	pmu_workload_loop(PMU_PROBE_LOOPS);
}

/* The event the counting check uses: the first architectural event CPUID
 * says a GP counter can count, preferring instructions. */
static enum pmu_arch_event probe_event(const struct pmu_caps *c)
{
	static const enum pmu_arch_event order[] = { PMU_ARCH_INSTRUCTIONS, PMU_ARCH_CYCLES,
						     PMU_ARCH_BRANCHES };
	for (unsigned i = 0; i < ARRAY_LEN(order); i++)
		if ((c->events_avail >> order[i]) & 1)
			return order[i];
	return PMU_ARCH_NONE;
}

/* Count the workload on GP counter x; *count gets the result. Leaves the
 * event select at 0 and GLOBAL_CTRL at the shadow. Returns 0 or the
 * faulting vector, with the reason already written. */
static int probe_count(struct pmu_cpu *pc, unsigned x, enum pmu_arch_event e,
		       const struct pmu_init_opts *opts, uint64_t *count, uint64_t *evtsel)
{
	const struct pmu_caps *c = &pc->caps;
	struct pmu_event_attr attr;
	char why[PMU_REASON_LEN];
	uint64_t sel;
	int vec;

	pmu_attr_arch(&attr, e);
	pmu_attr_resolve(pc, &attr);
	if (pc->ops->encode_gp(c, &attr, &sel, why, sizeof(why)) != PMU_OK) {
		reason(pc, "cannot encode %s for the probe: %s", pmu_arch_event_name(e), why);
		return -1;
	}
	sel |= BIT(PERFEVTSEL_EN_BIT);
	*evtsel = sel;
	if ((vec = pmu_hw_wrmsr(pmu_ctr_write_msr(c, x), 0)) != 0) {
		reason(pc, "wrmsr of 0 to counter %u (MSR %#x) raises %s", x, pmu_ctr_write_msr(c, x),
		       vector_name(vec));
		return vec;
	}
	if ((vec = pmu_hw_wrmsr(pmu_evtsel_msr(c, x), sel)) != 0) {
		reason(pc, "wrmsr of %#llx to %s%u (MSR %#x) raises %s", (unsigned long long)sel,
		       pmu_evtsel_name(c), x, pmu_evtsel_msr(c, x), vector_name(vec));
		return vec;
	}
	if (c->global_ctrl && (vec = pmu_hw_wrmsr(c->global_ctrl, pc->global_ctrl_shadow | BIT(x))) != 0) {
		pmu_hw_wrmsr(pmu_evtsel_msr(c, x), 0);
		reason(pc, "wrmsr of %#llx to %s raises %s",
		       (unsigned long long)(pc->global_ctrl_shadow | BIT(x)), pmu_global_ctrl_name(c),
		       vector_name(vec));
		return vec;
	}
	if (opts && opts->workload)
		opts->workload(opts->workload_ctx);
	else
		probe_default_workload(NULL);
	if (c->global_ctrl)
		pmu_hw_wrmsr(c->global_ctrl, pc->global_ctrl_shadow);
	pmu_hw_wrmsr(pmu_evtsel_msr(c, x), 0);
	if ((vec = pmu_hw_rdmsr(pmu_ctr_msr(c, x), count)) != 0) {
		reason(pc, "rdmsr of %s%u (MSR %#x) raises %s", pmu_ctr_name(c), x, pmu_ctr_msr(c, x),
		       vector_name(vec));
		return vec;
	}
	return 0;
}

void pmu_probe(struct pmu_cpu *pc, const struct pmu_init_opts *opts)
{
	const struct pmu_caps *c = &pc->caps;
	uint64_t saved_ctr, saved_sel, pattern, back, viapmc, count = 0, sel = 0;
	uint32_t free;
	enum pmu_arch_event e;
	unsigned x;
	int vec;

	pc->counting = false;
	pc->rdpmc_ok = false;
	pc->probe_gp = -1;
	if (!pc->ops) {
		/* No backend for this vendor; a backend may say what the
		 * CPU shows of a PMU it knows (pmu_backend_foreign_why). */
		pmu_backend_foreign_why(c, pc->reason, sizeof(pc->reason));
		return;
	}
	if (c->version == 0) {
		reason(pc, "%s", c->no_pmu_why ? c->no_pmu_why : "the backend reports no PMU version");
		return;
	}
	if (c->gp_mask == 0) {
		reason(pc, "no general-purpose counters (%s=0)", pc->ops->src_gp_number);
		return;
	}
	if (c->gp_width == 0 || c->gp_width > 64) {
		reason(pc, "implausible GP counter width %u (%s)", c->gp_width, pc->ops->src_gp_width);
		return;
	}
	if (c->gp_width < PMU_MIN_COUNTER_WIDTH) {
		reason(pc, "GP counters %u-bit (%s): narrower than the %u bits a legacy write fills",
		       c->gp_width, pc->ops->src_gp_width, PMU_MIN_COUNTER_WIDTH);
		return;
	}
	if (pc->inuse.read_fault) {
		reason(pc, "counters unusable: rdmsr of MSR %#x raises %s during the in-use scan",
		       pc->inuse.read_fault_msr, vector_name(pc->inuse.read_fault));
		return;
	}
	pmu_quiesce_free(pc);

	free = c->gp_mask & ~pc->gp_reserved;
	if (!free) {
		reason(pc,
		       "all GP counters (mask %#x) are in use by an earlier owner; boot with pmu.takeover=1 to take them",
		       c->gp_mask);
		return;
	}
	for (x = 0; !((free >> x) & 1); x++)
		;
	pc->probe_gp = (int)x;

	if ((vec = pmu_hw_rdmsr(pmu_evtsel_msr(c, x), &saved_sel)) != 0 ||
	    (vec = pmu_hw_rdmsr(pmu_ctr_msr(c, x), &saved_ctr)) != 0) {
		reason(pc, "rdmsr of %s%u/%s%u raises %s", pmu_ctr_name(c), x, pmu_evtsel_name(c), x,
		       vector_name(vec));
		return;
	}
	pattern = PMU_PROBE_PATTERN & pmu_width_mask(c->gp_width);
	if ((vec = pmu_hw_wrmsr(pmu_ctr_write_msr(c, x), pattern)) != 0) {
		reason(pc, "wrmsr of %#llx to counter %u (MSR %#x) raises %s", (unsigned long long)pattern, x,
		       pmu_ctr_write_msr(c, x), vector_name(vec));
		return;
	}
	if ((vec = pmu_hw_rdmsr(pmu_ctr_msr(c, x), &back)) != 0) {
		reason(pc, "rdmsr of %s%u (MSR %#x) raises %s after a write", pmu_ctr_name(c), x,
		       pmu_ctr_msr(c, x), vector_name(vec));
		return;
	}
	if (back != pattern) {
		reason(pc, "counters do not count: wrote 0x%llx to %s%u (MSR %#x), read back 0x%llx",
		       (unsigned long long)pattern, pmu_ctr_name(c), x, pmu_ctr_write_msr(c, x),
		       (unsigned long long)back);
		pmu_hw_wrmsr(pmu_ctr_write_msr(c, x), saved_ctr & pmu_width_mask(c->gp_width));
		return;
	}
	vec = pmu_hw_rdpmc(x, &viapmc);
	if (vec) {
		reason(pc, "rdpmc raises %s (vector %d) at CPL 0 for counter %u, which RDMSR reads fine",
		       vector_name(vec), vec, x);
	} else if (viapmc != pattern) {
		reason(pc, "rdpmc(%u) returned 0x%llx but %s%u holds 0x%llx", x, (unsigned long long)viapmc,
		       pmu_ctr_name(c), x, (unsigned long long)pattern);
	} else {
		pc->rdpmc_ok = true;
	}
	if (!pc->rdpmc_ok) {
		pmu_hw_wrmsr(pmu_ctr_write_msr(c, x), saved_ctr & pmu_width_mask(c->gp_width));
		return;
	}

	e = probe_event(c);
	if (e == PMU_ARCH_NONE) {
		reason(pc, "no architectural event a GP counter can count (%s=%#x, length %u)",
		       pc->ops->src_events, c->events_unavail, c->events_len);
		return;
	}
	vec = probe_count(pc, x, e, opts, &count, &sel);
	/* Put the counter back as found (a legacy write keeps bits 31:0 and
	 * sign-extends; a counter nobody owned is normally 0 anyway). */
	pmu_hw_wrmsr(pmu_ctr_write_msr(c, x), saved_ctr & pmu_width_mask(c->gp_width));
	pmu_hw_wrmsr(pmu_evtsel_msr(c, x), saved_sel);
	if (vec)
		return;
	if (count == 0) {
		reason(pc,
		       "counters do not count: %s%u programmed for %s (%s%u=0x%llx) stayed 0 over the probe workload",
		       pmu_ctr_name(c), x, pmu_arch_event_name(e),
		       c->evtsel_name ? c->evtsel_name : "PERFEVTSEL", x, (unsigned long long)sel);
		return;
	}
	pc->counting = true;
	pc->reason[0] = '\0';
}

static const char *owner_note(const struct pmu_inuse *iu)
{
	return iu->taken_over ? "taken over (pmu.takeover=1)" : "left alone";
}

void pmu_inuse_report(const struct pmu_cpu *pc, pmu_line_fn out, void *ctx)
{
	const struct pmu_caps *c = &pc->caps;
	const struct pmu_inuse *iu = &pc->inuse;
	char line[PMU_REASON_LEN + 64];
	bool any = false;

	if (!pc->initialised || !pc->ops || c->version == 0)
		return;
	if (iu->read_fault) {
		ksnprintf(line, sizeof(line), "cpu %u: rdmsr of MSR %#x raised %s during the in-use scan",
			  pc->cpu, iu->read_fault_msr, vector_name(iu->read_fault));
		out(ctx, line);
		any = true;
	}
	for (unsigned x = 0; x < PMU_MAX_GP; x++) {
		uint64_t v = iu->evtsel[x];
		if (!((iu->gp >> x) & 1))
			continue;
		ksnprintf(
			line, sizeof(line),
			"cpu %u: %s%u (MSR %#x) = 0x%llx: %s%u %s (event 0x%02x umask 0x%02x) by an earlier owner; %s",
			pc->cpu, pmu_evtsel_name(c), x, pmu_evtsel_msr(c, x), (unsigned long long)v,
			pc->ops->gp_counter_name ? pc->ops->gp_counter_name : pmu_ctr_name(c), x,
			((v >> PERFEVTSEL_EN_BIT) & 1) ? "enabled" : "claimed (INUSE)",
			(unsigned)(v & PERFEVTSEL_EVENT_MASK),
			(unsigned)((v & PERFEVTSEL_UMASK_MASK) >> PERFEVTSEL_UMASK_SHIFT), owner_note(iu));
		out(ctx, line);
		any = true;
	}
	for (unsigned i = 0; i < PMU_MAX_FIXED; i++) {
		if (!((iu->fixed >> i) & 1))
			continue;
		ksnprintf(line, sizeof(line),
			  "cpu %u: %s (MSR %#x) = %#llx: %s%u enabled (field %#llx) by an earlier owner; %s",
			  pc->cpu, pmu_fixed_ctrl_name(c), c->fixed_ctrl, (unsigned long long)iu->fixed_ctrl,
			  pc->ops->fixed_counter_name ? pc->ops->fixed_counter_name : pmu_fixed_name(c), i,
			  (unsigned long long)pc->ops->fixed_field(iu->fixed_ctrl, i), owner_note(iu));
		out(ctx, line);
		any = true;
	}
	if (iu->global_ctrl_valid && iu->global_ctrl != c->global_ctrl_reset) {
		ksnprintf(line, sizeof(line), "cpu %u: %s (MSR %#x) = %#llx at boot, RESET value is %#llx",
			  pc->cpu, pmu_global_ctrl_name(c), c->global_ctrl,
			  (unsigned long long)iu->global_ctrl, (unsigned long long)c->global_ctrl_reset);
		out(ctx, line);
		any = true;
	}
	if (iu->global_inuse_fault) {
		ksnprintf(
			line, sizeof(line),
			"cpu %u: %s (MSR %#x) raised %s though the PMU is version %u: taken as absent, counters in use seen by their enables only",
			pc->cpu, pmu_global_inuse_name(c), c->global_inuse,
			vector_name(iu->global_inuse_fault), c->version);
		out(ctx, line);
		any = true;
	}
	if (iu->global_inuse_valid && iu->global_inuse) {
		ksnprintf(line, sizeof(line), "cpu %u: %s (MSR %#x) = %#llx at boot", pc->cpu,
			  pmu_global_inuse_name(c), c->global_inuse, (unsigned long long)iu->global_inuse);
		out(ctx, line);
		any = true;
	}
	if (!any) {
		ksnprintf(line, sizeof(line), "cpu %u: no counter in use at boot", pc->cpu);
		out(ctx, line);
	}
}
