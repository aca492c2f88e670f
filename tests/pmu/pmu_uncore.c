/* Uncore checks, once per package, each package's boxes driven from its
 * first CPU (pmu_packages: the CPUs the ACPI MADT brought up, grouped by
 * the package ID CPUID gives them): the boxes hold writes; their requests
 * agree with the core's LLC references; a disabled counter counts nothing;
 * one package's work shows in no other package's boxes; the memory
 * controller counts the lines a known stream reads and writes. */
#include "arch/x86/cpu.h"
#include "arch/x86/smp.h"
#include "lib/printf.h"
#include "modes/workloads.h"
#include "pmu/intel/discovery.h"
#include "pmu/intel/imc.h"
#include "pmu/intel/uncore.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/ktest.h"
#include "tests/pmu/pmu_cache.h"
#include "tests/pmu/pmu_common.h"

/* Requests a window may see besides the chase: the counter-control code,
 * the idle CPUs' timer and halt traffic, snoops. */
#define UNCORE_SLACK 4096
#define UNCORE_PASSES 2

/* One package's uncore, detected and driven from its lead CPU. */
struct pkg {
	struct pmu_package pk;
	struct pmu_uncore u;
	int err;
	const char *probe_why;
	/* The window's results. */
	uint64_t refs, sum, box[PMU_UNCORE_MAX_BOXES];
	uint64_t hops, bytes;
	char why[PMU_REASON_LEN];
};

static struct pkg pkgs[PMU_MAX_PACKAGES];
static unsigned npkgs;

static void detect_here(void *arg)
{
	struct pkg *p = arg;

	pmu_cpu_ensure();
	p->probe_why = NULL;
	p->err = pmu_uncore_detect(&p->u, pmu_caps());
	if (p->err == PMU_OK)
		p->probe_why = pmu_uncore_probe(&p->u);
}

/* Every CPU initialised, the packages grouped, each one's uncore detected
 * on its lead CPU. NULL, or why package 0's cannot be used (the others'
 * refusals are the checks' failures: packages of one machine are alike). */
static const char *detect_packages(void)
{
	struct pmu_package pk[PMU_MAX_PACKAGES];

	if (!pmu_cpu_ensure())
		return "CPU index beyond PMU_MAX_CPUS";
	for (unsigned cpu = 0; cpu < smp_num_cpus(); cpu++)
		pmu_test_init_cpu(cpu);
	npkgs = pmu_packages(pk, PMU_MAX_PACKAGES);
	for (unsigned i = 0; i < npkgs; i++) {
		pkgs[i] = (struct pkg){ .pk = pk[i] };
		on_cpu(pk[i].lead, detect_here, &pkgs[i]);
	}
	if (!npkgs)
		return "no initialised CPU";
	if (pkgs[0].err != PMU_OK)
		return ktest_reason("%s", pkgs[0].u.why);
	if (pkgs[0].probe_why)
		return ktest_reason("%s", pkgs[0].probe_why);
	return NULL;
}

static const char *uncore_needs(void)
{
	return detect_packages();
}

/* Counting the requests a box sees: an event for it, and the core's LLC
 * references to compare with. */
static const char *requests_needs(void)
{
	const char *why = detect_packages();
	const struct pmu_uncore_model *m;

	if (why)
		return why;
	m = pkgs[0].u.model;
	if (!m->req_event)
		return ktest_reason("%s: %s", m->name, m->no_req_why);
	if ((why = pmu_needs_counting()) != NULL)
		return why;
	if ((why = pmu_test_gp_event_missing(PMU_ARCH_LLC_REFERENCES)) != NULL)
		return why;
	return NULL;
}

/* A check needs each package usable: the ones past package 0 that are not
 * fail it, with their reason. */
static bool package_ok(const struct pkg *p)
{
	return check(p->err == PMU_OK && !p->probe_why, "package %u (CPU %u): %s", p->pk.id, p->pk.lead,
		     p->err != PMU_OK ? p->u.why : p->probe_why);
}

/* --- Every box holds writes --- */

struct regs_result {
	const struct pmu_uncore *u;
	unsigned checked, bad;
	char first_bad[PMU_REASON_LEN];
};

/* The pattern register `msr` of box b, counter i gets: distinct for every
 * register, so that two addresses reaching one register show. */
static uint64_t regs_pattern(const struct pmu_unc_layout *l, unsigned b, unsigned i, bool ctr)
{
	if (ctr)
		return (0x123456789abull ^ (uint64_t)b << 8 ^ i) & pmu_width_mask(l->width);
	/* An event and unit mask without the enable bit. */
	return ((0x5a ^ b) | (uint64_t)(0xa5 ^ i) << 8) & l->sel_valid;
}

/* Write want to msr (pass 0), read it back (1), write 0 (2). */
static void regs_one(struct regs_result *r, unsigned pass, uint32_t msr, uint64_t want)
{
	uint64_t back = 0;
	int vec;

	if (pass != 1) {
		vec = pmu_hw_wrmsr(msr, pass ? 0 : want);
		back = want;
	} else {
		vec = pmu_hw_rdmsr(msr, &back);
		r->checked++;
	}
	if ((vec || back != want) && !r->bad++)
		ksnprintf(r->first_bad, sizeof(r->first_bad), "MSR %#x: wrote %#llx, %s %#llx", msr,
			  (unsigned long long)want,
			  vec ? (pass == 1 ? "read: vector" : "write: vector") : "read back",
			  vec ? (unsigned long long)vec : (unsigned long long)back);
}

/* pass 0: write every register; 1: read each back; 2: write 0. */
static void regs_pass(struct regs_result *r, unsigned pass)
{
	const struct pmu_unc_layout *ls[] = { pmu_uncore_box(r->u), r->u->model->arb };

	for (unsigned k = 0; k < ARRAY_LEN(ls); k++) {
		const struct pmu_unc_layout *l = ls[k];
		for (unsigned b = 0; l && b < pmu_uncore_nboxes(r->u, l); b++) {
			/* The event selects; a counter where software may
			 * write it (no box control). */
			for (unsigned i = l->first_ctr; i < l->nctrs; i++)
				for (unsigned ctr = 0; ctr < (l->has_box_ctl ? 1u : 2u); ctr++)
					regs_one(r, pass,
						 ctr ? pmu_uncore_ctr_msr(l, b, i)
						     : pmu_uncore_sel_msr(l, b, i),
						 regs_pattern(l, b, i, ctr));
			/* The box's filter: a thread ID, distinct per box. */
			if (l->filter)
				regs_one(r, pass, pmu_uncore_filter_msr(l, b),
					 ((0x1a5u ^ b) | 1) & l->filter_tid);
		}
	}
}

/* Every register written first, then every one read: each holds its own
 * value (two addresses reaching one register would show), then 0. */
static void regs_here(void *arg)
{
	struct regs_result *r = arg;

	for (unsigned pass = 0; pass < 3; pass++)
		regs_pass(r, pass);
}

KTEST("pmu.uncore", registers_hold_writes, uncore_needs, 0,
      "every box's selects, CHA filters (and client counters) hold writes, per package")
{
	for (unsigned p = 0; p < npkgs; p++) {
		struct regs_result r = { .u = &pkgs[p].u };
		const struct pmu_uncore_model *m = pkgs[p].u.model;

		if (!package_ok(&pkgs[p]))
			continue;
		on_cpu(pkgs[p].pk.lead, regs_here, &r);
		diag("package %u (CPU %u, %u CPUs): %s, %u %s(s) (count MSR %#x = %#llx, %u cores) x %u counters%s: "
		     "%u registers",
		     pkgs[p].pk.id, pkgs[p].pk.lead, pkgs[p].pk.ncpus, m->name, pkgs[p].u.nboxes,
		     pmu_uncore_box(&pkgs[p].u)->name, pkgs[p].u.count_msr,
		     (unsigned long long)pkgs[p].u.count_val, pkgs[p].u.cores,
		     pmu_uncore_box(&pkgs[p].u)->nctrs, m->arb ? ", the ARB" : "", r.checked);
		if (pkgs[p].u.from_table)
			diag("package %u: %ss placed by the discovery table of %02x:%02x.%x (at %#llx): box 0 at MSR "
			     "%#x, controls +%#x, counters +%#x",
			     pkgs[p].pk.id, pmu_uncore_box(&pkgs[p].u)->name, pkgs[p].u.table_bus,
			     pkgs[p].u.table_dev, pkgs[p].u.table_fn,
			     (unsigned long long)pkgs[p].u.table_base, pkgs[p].u.table_units[0],
			     pmu_uncore_box(&pkgs[p].u)->sel, pmu_uncore_box(&pkgs[p].u)->ctr);
		else if (m->discovery)
			diag("package %u: %ss at the row's addresses: %s", pkgs[p].pk.id, m->box->name,
			     pkgs[p].u.table_why);
		check(r.bad == 0, "package %u: %u of %u registers did not hold a write; first: %s",
		      pkgs[p].pk.id, r.bad, r.checked, r.first_bad);
	}
}

/* --- Requests against LLC references --- */

/*
 * The workload: a random cyclic chase over a buffer of 8 x L2 (at most half
 * the LLC), warmed by one pass, then UNCORE_PASSES passes in the window.
 * Every hop is a dependent load of a line that is not in L2 with
 * probability >= 7/8 and is in the LLC, so it becomes one LLC request: the
 * core counts it as an LLC reference (SDM vol. 3B, "Pre-defined
 * Architectural Performance Events": requests from the core that reference
 * the LLC) and exactly one box (the slice its address hashes to) counts it:
 * a C-box lookup (UNC_CBO_CACHE_LOOKUP, any request, any state) or a CHA
 * read request (UNC_CHA_REQUESTS.READS_LOCAL: reads from this socket).
 *
 * Bounds: requests >= references / 2, because the boxes see every core
 * request; the factor leaves room for references the core counts that a
 * slice merges (two requests to one line in flight) and for the window
 * edges. requests <= 3 x references + UNCORE_SLACK, because besides each
 * reference a slice may see the line's adjacent-line prefetch (1 per hop
 * at most) and the write-back of a dirty L2 victim the buffer build left
 * (1 per line at most), plus traffic from outside the chase. Each box must
 * see at least 1/(4n) of the total: the slice hash spreads consecutive
 * lines over all n slices (a box counting nothing would mean a wrong
 * address or a dead slice).
 */
static bool chase_size(struct pkg *p)
{
	struct pmu_cache_geom g;

	if (!pmu_cache_geom(&g) || !g.l2) {
		ksnprintf(p->why, sizeof(p->why),
			  "CPUID.04H lists no L2: cannot size a buffer that misses it");
		return false;
	}
	p->bytes = 8 * g.l2;
	if (p->bytes > g.llc / 2)
		p->bytes = g.llc / 2;
	p->bytes &= ~(uint64_t)(PMU_CHASE_NODE - 1);
	if (p->bytes <= g.l2) {
		ksnprintf(
			p->why, sizeof(p->why),
			"LLC %lu KiB is not larger than 2 x L2 %lu KiB: no buffer misses L2 and fits the LLC",
			g.llc >> 10, g.l2 >> 10);
		return false;
	}
	p->hops = UNCORE_PASSES * (p->bytes / PMU_CHASE_NODE);
	return true;
}

static void requests_here(void *arg)
{
	struct pkg *p = arg;
	const struct pmu_uncore *u = &p->u;
	const struct pmu_unc_layout *l = pmu_uncore_box(u);
	struct pmu_event ref;
	const void *buf;
	bool irq;
	int err;

	p->why[0] = '\0';
	if (!chase_size(p))
		return;
	buf = pmu_cache_chase_buffer(2, p->bytes, 0x756e636f7265ull + p->pk.id);
	pmu_cache_chase(buf, p->bytes / PMU_CHASE_NODE); /* warm: into the LLC */
	pmu_test_event(&ref, PMU_ARCH_LLC_REFERENCES);
	if ((err = pmu_event_add(&ref)) != PMU_OK) {
		ksnprintf(p->why, sizeof(p->why), "LLC references (%d): %s", err, ref.reason);
		return;
	}
	err = pmu_uncore_prepare(u);
	for (unsigned b = 0; err == PMU_OK && b < u->nboxes; b++)
		err = pmu_uncore_program(u, l, b, l->first_ctr, u->model->req_event, u->model->req_umask,
					 true, p->why, sizeof(p->why));
	if (err == PMU_OK) {
		irq = irq_save();
		err = pmu_uncore_start(u);
		if (err == PMU_OK && (err = pmu_event_enable(&ref)) == PMU_OK) {
			pmu_cache_chase(buf, p->hops);
			err = pmu_event_disable(&ref);
		}
		pmu_uncore_stop(u);
		irq_restore(irq);
		if (err != PMU_OK && !p->why[0])
			ksnprintf(p->why, sizeof(p->why), "starting/stopping the counters failed (%d): %s",
				  err, ref.reason);
	}
	p->refs = pmu_event_count(&ref);
	p->sum = 0;
	for (unsigned b = 0; b < u->nboxes; b++) {
		p->box[b] = 0;
		if (err == PMU_OK && pmu_uncore_read(u, l, b, l->first_ctr, &p->box[b]) != PMU_OK &&
		    !p->why[0])
			ksnprintf(p->why, sizeof(p->why), "reading %s %u failed", l->name, b);
		p->sum += p->box[b];
		pmu_uncore_clear(u, l, b, l->first_ctr);
	}
	pmu_event_del(&ref);
}

KTEST("pmu.uncore", requests_vs_llc_references, requests_needs, 0,
      "C-box lookups / CHA reads agree with LLC references, per package")
{
	for (unsigned p = 0; p < npkgs; p++) {
		struct pkg *k = &pkgs[p];
		const char *box;

		if (!package_ok(k))
			continue;
		on_cpu(k->pk.lead, requests_here, k);
		if (!check(!k->why[0], "package %u (CPU %u): %s", k->pk.id, k->pk.lead, k->why))
			continue;
		box = pmu_uncore_box(&k->u)->name;
		diag("package %u (CPU %u): %s %s x %u, %s; buffer %lu KiB, %lu hops: LLC references (core) %lu, "
		     "%s requests (sum) %lu",
		     k->pk.id, k->pk.lead, k->u.model->name, box, k->u.nboxes, k->u.model->req_name,
		     k->bytes >> 10, k->hops, k->refs, box, k->sum);
		for (unsigned b = 0; b < k->u.nboxes; b++)
			diag("package %u %s %u: %lu", k->pk.id, box, b, k->box[b]);
		check(k->refs >= k->hops / 2,
		      "package %u: LLC references expected >= %lu (half of %lu hops miss L2 at least), saw %lu",
		      k->pk.id, k->hops / 2, k->hops, k->refs);
		check(k->sum >= k->refs / 2,
		      "package %u: %s requests expected >= %lu (references / 2), saw %lu", k->pk.id, box,
		      k->refs / 2, k->sum);
		check(k->sum <= 3 * k->refs + UNCORE_SLACK,
		      "package %u: %s requests expected <= %lu (3 x references + %u), saw %lu", k->pk.id, box,
		      3 * k->refs + UNCORE_SLACK, UNCORE_SLACK, k->sum);
		for (unsigned b = 0; b < k->u.nboxes; b++)
			check(k->box[b] >= k->sum / (4 * k->u.nboxes),
			      "package %u %s %u: expected >= %lu (1/%u of the sum), saw %lu", k->pk.id, box,
			      b, k->sum / (4 * k->u.nboxes), 4 * k->u.nboxes, k->box[b]);
	}
}

/* --- A disabled counter --- */

static void disabled_here(void *arg)
{
	struct pkg *p = arg;
	const struct pmu_uncore *u = &p->u;
	const struct pmu_unc_layout *l = pmu_uncore_box(u);
	const void *buf;
	bool irq;
	int err;

	p->why[0] = '\0';
	if (!chase_size(p))
		return;
	buf = pmu_cache_chase_buffer(2, p->bytes, 0x646973ull + p->pk.id);
	err = pmu_uncore_prepare(u);
	for (unsigned b = 0; err == PMU_OK && b < u->nboxes; b++)
		err = pmu_uncore_program(u, l, b, l->first_ctr, u->model->req_event, u->model->req_umask,
					 false, p->why, sizeof(p->why));
	if (err == PMU_OK) {
		irq = irq_save();
		err = pmu_uncore_start(u);
		pmu_cache_chase(buf, p->hops);
		pmu_uncore_stop(u);
		irq_restore(irq);
	}
	p->sum = 0;
	for (unsigned b = 0; b < u->nboxes; b++) {
		p->box[b] = 0;
		if (err == PMU_OK)
			pmu_uncore_read(u, l, b, l->first_ctr, &p->box[b]);
		p->sum += p->box[b];
		pmu_uncore_clear(u, l, b, l->first_ctr);
	}
	if (err != PMU_OK && !p->why[0])
		ksnprintf(p->why, sizeof(p->why), "programming or starting the boxes failed (%d)", err);
}

static const char *disabled_needs(void)
{
	const char *why = requests_needs();

	if (!why && pkgs[0].u.model->start == PMU_UNC_BOX_FREEZE0)
		return ktest_reason("%s: its event selects have no enable bit", pkgs[0].u.model->name);
	return why;
}

/* Each box programmed with its request event but the enable bit clear,
 * the global enables on or the boxes unfrozen, the chase run: the counters
 * were zeroed and nothing enabled them, so each must read exactly 0. */
KTEST("pmu.uncore", disabled_counters_count_nothing, disabled_needs, 0,
      "a counter programmed without its enable bit stays 0 over the chase, per package")
{
	for (unsigned p = 0; p < npkgs; p++) {
		struct pkg *k = &pkgs[p];

		if (!package_ok(k))
			continue;
		on_cpu(k->pk.lead, disabled_here, k);
		if (!check(!k->why[0], "package %u (CPU %u): %s", k->pk.id, k->pk.lead, k->why))
			continue;
		diag("package %u (CPU %u): %u %s(s) without enable over %lu hops: %lu", k->pk.id, k->pk.lead,
		     k->u.nboxes, pmu_uncore_box(&k->u)->name, k->hops, k->sum);
		check(k->sum == 0,
		      "package %u: %s counters without their enable bit expected 0, saw %lu in all", k->pk.id,
		      pmu_uncore_box(&k->u)->name, k->sum);
	}
}

/* --- Every counter of every box, and the box resets --- */

static struct every {
	uint64_t c[PMU_UNCORE_MAX_BOXES][PMU_UNCORE_MAX_CTRS];
	unsigned left_ctrs, left_ctrl; /* registers not 0 after a reset */
	char first_left[PMU_REASON_LEN];
	bool reset; /* the boxes have a box control */
} every;

static void every_left(uint32_t msr, uint64_t v, unsigned *n, const char *what)
{
	if (v && !(*n)++ && !every.first_left[0])
		ksnprintf(every.first_left, sizeof(every.first_left), "%s MSR %#x reads %#llx", what, msr,
			  (unsigned long long)v);
}

static void every_here(void *arg)
{
	struct pkg *p = arg;
	const struct pmu_uncore *u = &p->u;
	const struct pmu_unc_layout *l = pmu_uncore_box(u);
	const void *buf;
	uint64_t v;
	int err;

	p->why[0] = '\0';
	every.left_ctrs = every.left_ctrl = 0;
	every.first_left[0] = '\0';
	if (!chase_size(p))
		return;
	buf = pmu_cache_chase_buffer(2, p->bytes, 0x65766572ull + p->pk.id);
	pmu_cache_chase(buf, p->bytes / PMU_CHASE_NODE);
	err = pmu_uncore_prepare(u);
	for (unsigned b = 0; err == PMU_OK && b < u->nboxes; b++)
		for (unsigned i = l->first_ctr; err == PMU_OK && i < l->nctrs; i++)
			err = pmu_uncore_program(u, l, b, i, u->model->req_event, u->model->req_umask, true,
						 p->why, sizeof(p->why));
	if (err == PMU_OK) {
		bool irq = irq_save();
		err = pmu_uncore_start(u);
		pmu_cache_chase(buf, p->hops);
		pmu_uncore_stop(u);
		irq_restore(irq);
	}
	for (unsigned b = 0; b < u->nboxes; b++)
		for (unsigned i = l->first_ctr; i < l->nctrs; i++) {
			every.c[b][i] = 0;
			if (err == PMU_OK)
				pmu_uncore_read(u, l, b, i, &every.c[b][i]);
		}
	every.reset = err == PMU_OK && pmu_uncore_reset(u, false, true) == PMU_OK;
	if (every.reset) {
		for (unsigned b = 0; b < u->nboxes; b++)
			for (unsigned i = l->first_ctr; i < l->nctrs; i++)
				if (pmu_uncore_read(u, l, b, i, &v) == PMU_OK)
					every_left(pmu_uncore_ctr_msr(l, b, i), v, &every.left_ctrs,
						   "counter");
		pmu_uncore_reset(u, true, false);
		for (unsigned b = 0; b < u->nboxes; b++)
			for (unsigned i = l->first_ctr; i < l->nctrs; i++)
				if (pmu_hw_rdmsr(pmu_uncore_sel_msr(l, b, i), &v) == 0)
					every_left(pmu_uncore_sel_msr(l, b, i), v, &every.left_ctrl,
						   "event select");
	}
	for (unsigned b = 0; b < u->nboxes; b++)
		for (unsigned i = l->first_ctr; i < l->nctrs; i++)
			pmu_uncore_clear(u, l, b, i);
	if (err != PMU_OK && !p->why[0])
		ksnprintf(p->why, sizeof(p->why), "programming or starting the boxes failed (%d)", err);
}

/* Every counter of every box programmed with the request event at once,
 * one window of the chase (the requests check uses counter 0 only): each
 * counter index summed over the boxes sees at least a quarter of the hops
 * (half miss L2 and the boxes see at least half of those, as there), and
 * within a box every counter reads what its first one does, within
 * UNCORE_SLACK (they count one event over one window). Where the boxes
 * have a box control, its counter reset then its control reset, the box
 * kept frozen, leave every counter and every event select 0 (Linux
 * uncore_snbep.c SNBEP_PMON_BOX_CTL_RST_CTRS/RST_CTRL; uncore_discovery.h
 * GENERIC_PMON_BOX_CTL_RST_CTRS/RST_CTRL). */
KTEST("pmu.uncore", every_counter_and_box_reset, requests_needs, 0,
      "every box's counters count the requests; a box reset zeroes counters, selects")
{
	for (unsigned p = 0; p < npkgs; p++) {
		struct pkg *k = &pkgs[p];
		const struct pmu_unc_layout *l = pmu_uncore_box(&k->u);

		if (!package_ok(k) || !check(chase_size(k), "%s", k->why))
			continue;
		on_cpu(k->pk.lead, every_here, k);
		if (!check(!k->why[0], "package %u (CPU %u): %s", k->pk.id, k->pk.lead, k->why))
			continue;
		for (unsigned i = l->first_ctr; i < l->nctrs; i++) {
			uint64_t sum = 0;
			for (unsigned b = 0; b < k->u.nboxes; b++) {
				uint64_t a = every.c[b][l->first_ctr], c = every.c[b][i];
				sum += c;
				check((c > a ? c - a : a - c) <= UNCORE_SLACK,
				      "package %u %s %u: counter %u read %lu, counter %u %lu (expected within %u)",
				      k->pk.id, l->name, b, i, c, l->first_ctr, a, UNCORE_SLACK);
			}
			diag("package %u: counter %u of the %u %ss: %lu requests over %lu hops", k->pk.id, i,
			     k->u.nboxes, l->name, sum, k->hops);
			check(sum >= k->hops / 4,
			      "package %u: counter %u of the %ss: expected >= %lu, saw %lu", k->pk.id, i,
			      l->name, k->hops / 4, sum);
		}
		if (!every.reset) {
			diag("package %u: %ss without a box control: no reset to check", k->pk.id, l->name);
			continue;
		}
		check(every.left_ctrs == 0 && every.left_ctrl == 0,
		      "package %u: after the box resets %u counters and %u event selects not 0; first: %s",
		      k->pk.id, every.left_ctrs, every.left_ctrl, every.first_left);
	}
}

/* --- Packages apart --- */

static void start_here(void *arg)
{
	struct pkg *p = arg;
	const struct pmu_uncore *u = &p->u;
	int err = pmu_uncore_prepare(u);

	p->why[0] = '\0';
	for (unsigned b = 0; err == PMU_OK && b < u->nboxes; b++)
		err = pmu_uncore_program(u, pmu_uncore_box(u), b, pmu_uncore_box(u)->first_ctr,
					 u->model->req_event, u->model->req_umask, true, p->why,
					 sizeof(p->why));
	if (err == PMU_OK)
		err = pmu_uncore_start(u);
	if (err != PMU_OK && !p->why[0])
		ksnprintf(p->why, sizeof(p->why), "starting the boxes failed (%d)", err);
}

static void stop_read_here(void *arg)
{
	struct pkg *p = arg;
	const struct pmu_uncore *u = &p->u;
	const struct pmu_unc_layout *l = pmu_uncore_box(u);

	pmu_uncore_stop(u);
	p->sum = 0;
	for (unsigned b = 0; b < u->nboxes; b++) {
		uint64_t v = 0;
		pmu_uncore_read(u, l, b, l->first_ctr, &v);
		p->sum += v;
		pmu_uncore_clear(u, l, b, l->first_ctr);
	}
}

/* The buffer built and warmed before any box counts, then the chase. */
static const void *apart_buf;

static void build_here(void *arg)
{
	struct pkg *p = arg;

	apart_buf = pmu_cache_chase_buffer(2, p->bytes, 0x6170617274ull + p->pk.id);
	pmu_cache_chase(apart_buf, p->bytes / PMU_CHASE_NODE);
}

static void chase_here(void *arg)
{
	struct pkg *p = arg;
	bool irq = irq_save();

	pmu_cache_chase(apart_buf, p->hops);
	irq_restore(irq);
}

static const char *apart_needs(void)
{
	const char *why = requests_needs();

	if (!why && npkgs < 2)
		return ktest_reason("one package (%u CPUs): no other package to keep counts apart from",
				    pkgs[0].pk.ncpus);
	return why;
}

/*
 * Every package's boxes counting at once, each programmed from its own
 * CPU; the chase of the requests check run on one package's CPU, the
 * others idle. The working package's boxes see at least half the hops
 * (every hop that misses L2 is a request there: see above); every other
 * package's see only their idle CPUs' own traffic, at most UNCORE_SLACK.
 * Repeated with each package working.
 */
KTEST("pmu.uncore", packages_count_apart, apart_needs, 0,
      "one package's chase shows in its own boxes, not in another package's")
{
	struct pkg *w;

	for (unsigned p = 0; p < npkgs; p++)
		if (!package_ok(&pkgs[p]) || !check(chase_size(&pkgs[p]), "%s", pkgs[p].why))
			return;
	for (unsigned wp = 0; wp < npkgs; wp++) {
		w = &pkgs[wp];
		on_cpu(w->pk.lead, build_here, w);
		for (unsigned p = 0; p < npkgs; p++) {
			on_cpu(pkgs[p].pk.lead, start_here, &pkgs[p]);
			if (!check(!pkgs[p].why[0], "package %u: %s", pkgs[p].pk.id, pkgs[p].why))
				return;
		}
		on_cpu(w->pk.lead, chase_here, w);
		for (unsigned p = 0; p < npkgs; p++)
			on_cpu(pkgs[p].pk.lead, stop_read_here, &pkgs[p]);
		for (unsigned p = 0; p < npkgs; p++) {
			diag("chase on package %u (CPU %u), %lu hops: package %u's %s requests %lu", w->pk.id,
			     w->pk.lead, w->hops, pkgs[p].pk.id, pmu_uncore_box(&pkgs[p].u)->name,
			     pkgs[p].sum);
			if (p == wp)
				check(pkgs[p].sum >= w->hops / 2,
				      "package %u ran the chase: expected >= %lu requests in its boxes, saw %lu",
				      pkgs[p].pk.id, w->hops / 2, pkgs[p].sum);
			else
				check(pkgs[p].sum <= UNCORE_SLACK,
				      "package %u idle while package %u ran %lu hops: expected <= %u requests in "
				      "its boxes, saw %lu",
				      pkgs[p].pk.id, w->pk.id, w->hops, UNCORE_SLACK, pkgs[p].sum);
		}
	}
}

/* --- The discovery table --- */

static const char *discovery_needs(void)
{
	const char *why = detect_packages();
	const struct pmu_uncore *u = &pkgs[0].u;

	if (why)
		return why;
	if (!u->model->discovery)
		return ktest_reason("%s: its %ss sit at the row's addresses, no discovery table",
				    u->model->name, u->model->box->name);
	if (!u->from_table)
		return ktest_reason("%s", u->table_why);
	return NULL;
}

/* Linux uncore_snbep.c spr_uncores[]: the unit types it names. */
static const char *const spr_type_names[] = {
	[0] = "CHA", [1] = "IIO", [2] = "IRP", [3] = "M2PCIe", [4] = "PCU",
	[6] = "IMC", [7] = "M2M", [8] = "UPI", [9] = "M3UPI",  [11] = "MDF",
};

static const char *type_name(unsigned type)
{
	return type < ARRAY_LEN(spr_type_names) && spr_type_names[type] ? spr_type_names[type] : "?";
}

/* Whether a unit's box control answers: an MSR that reads, a mapped
 * address, a PCI function that is there. */
static bool unit_reachable(const struct pmu_disc_unit *d)
{
	uint64_t v;
	uint32_t w;

	switch (d->access) {
	case PMU_DISC_MSR: return d->ctl <= 0xffffffffull && pmu_hw_rdmsr((uint32_t)d->ctl, &v) == 0;
	case PMU_DISC_MMIO: return pmu_hw_mmio_read32(d->ctl, &w) == 0;
	case PMU_DISC_PCI:
		return pmu_hw_pcie_read32((uint8_t)BITS(d->ctl, 27, 20), (uint8_t)BITS(d->ctl, 19, 15),
					  (uint8_t)BITS(d->ctl, 14, 12), 0, &w) == 0 &&
		       (w & 0xffff) != 0xffff;
	}
	return false;
}

struct reach {
	const struct pmu_disc_table *t;
	unsigned bad;
	char first[PMU_REASON_LEN];
};

static void reach_here(void *arg)
{
	struct reach *r = arg;

	for (unsigned k = 0; k < r->t->nunits; k++) {
		const struct pmu_disc_unit *d = &r->t->unit[k];
		if (!unit_reachable(d) && !r->bad++)
			ksnprintf(r->first, sizeof(r->first), "type %u (%s) box %u: %s %#llx", d->type,
				  type_name(d->type), d->id, pmu_disc_access_name(d->access),
				  (unsigned long long)d->ctl);
	}
}

/* One line a unit type: how many, how reached, box 0's layout. */
static void list_units(unsigned pkg, const struct pmu_disc_table *t)
{
	diag("package %u: discovery table of %02x:%02x.%x (8086:%04x, DVSEC at %#x, BAR%u) at %#llx: %u entries "
	     "of %u bytes, %u units, %u empty, %u malformed; global control %s %#llx",
	     pkg, t->bus, t->dev, t->fn, t->device, t->dvsec, t->bir, (unsigned long long)t->base,
	     t->max_units, t->stride * 8, t->nunits, t->empty, t->malformed,
	     pmu_disc_access_name(t->global_access), (unsigned long long)t->global_ctl);
	for (unsigned k = 0; k < t->nunits; k++) {
		const struct pmu_disc_unit *d = &t->unit[k];
		const struct pmu_disc_unit *first[1];
		unsigned n;

		n = pmu_discovery_units(t, d->type, first, 1);
		if (first[0] != d)
			continue; /* listed with its type's lowest box ID */
		diag("package %u: type %u (%s) x %u: %s, box %u at %#llx, controls +%#x, counters +%#x, %u x %u bits",
		     pkg, d->type, type_name(d->type), n, pmu_disc_access_name(d->access), d->id,
		     (unsigned long long)d->ctl, d->ctl_off, d->ctr_off, d->nctrs, d->width);
	}
}

/*
 * Per package: its table (the k-th in bus order for the k-th package) is
 * listed, has no malformed entry, lists as many CHAs as the box count
 * register says (where it reads one), and every unit's box control
 * answers from a CPU of the package; no MMIO or PCI unit is listed by two
 * packages (those addresses are the machine's, so a unit listed twice is
 * on the wrong package in one table); every package lists the same
 * number of units of each type as package 0.
 */
KTEST("pmu.uncore", discovery_table, discovery_needs, 0,
      "each package's discovery table is well formed, reachable and its own")
{
	for (unsigned p = 0; p < npkgs; p++) {
		struct pkg *k = &pkgs[p];
		char why[PMU_REASON_LEN];
		const struct pmu_disc_table *t = pmu_discovery_of_package(k->pk.id, why, sizeof(why));
		struct reach r = { .t = t };

		if (!check(t != NULL, "package %u (CPU %u): %s", k->pk.id, k->pk.lead, why))
			continue;
		list_units(k->pk.id, t);
		check(t->malformed == 0, "package %u: %u malformed entries in its discovery table; first: %s",
		      k->pk.id, t->malformed, t->first_malformed);
		check(t->dropped == 0, "package %u: %u units past the %u pmutest keeps", k->pk.id, t->dropped,
		      PMU_DISC_MAX_UNITS);
		if (k->u.boxes_reported)
			check(k->u.table_boxes == k->u.boxes_reported,
			      "package %u: the table lists %u %ss, MSR %#x = %#llx says %u", k->pk.id,
			      k->u.table_boxes, pmu_uncore_box(&k->u)->name, k->u.count_msr,
			      (unsigned long long)k->u.count_val, k->u.boxes_reported);
		on_cpu(k->pk.lead, reach_here, &r);
		check(r.bad == 0, "package %u: %u units do not answer at their box control; first: %s",
		      k->pk.id, r.bad, r.first);
		for (unsigned q = 0; q < p; q++) {
			const struct pmu_disc_table *o = pmu_discovery_of_package(pkgs[q].pk.id, why,
										  sizeof(why));
			unsigned twice = 0;

			for (unsigned a = 0; o && a < t->nunits; a++) {
				const struct pmu_disc_unit *d = &t->unit[a];
				const struct pmu_disc_unit *one[1];
				unsigned mine = pmu_discovery_units(t, d->type, one, 1), theirs;

				for (unsigned b = 0; d->access != PMU_DISC_MSR && b < o->nunits; b++)
					if (o->unit[b].access == d->access && o->unit[b].ctl == d->ctl &&
					    !twice++)
						check(false,
						      "package %u's type %u (%s) box %u at %s %#llx is also package %u's "
						      "type %u box %u",
						      k->pk.id, d->type, type_name(d->type), d->id,
						      pmu_disc_access_name(d->access),
						      (unsigned long long)d->ctl, pkgs[q].pk.id,
						      o->unit[b].type, o->unit[b].id);
				if (q != 0 || one[0] != d)
					continue; /* each type once, against package 0 */
				theirs = pmu_discovery_units(o, d->type, one, 1);
				check(mine == theirs,
				      "package %u lists %u units of type %u (%s), package %u %u", k->pk.id,
				      mine, d->type, type_name(d->type), pkgs[q].pk.id, theirs);
			}
		}
	}
}
