/* Architectural PEBS on each CPU, driven at the registers: counters with
 * PEBS on in their CFG_C register count retired branches (or, on a fixed
 * counter, instructions) through the crafted path of pmu_pebs.c, whose
 * every block is one LEA counting in RAX and one two-byte JMP. The
 * records must be one per overflow with the counter reloaded from CFG_C,
 * point at the path, hold exactly the groups each counter's CFG_C asks
 * for, advance IA32_PEBS_INDEX by their size, raise the threshold PMI
 * (IA32_PERF_GLOBAL_STATUS bit 54) where the threshold says, and name
 * only counters that have PEBS on. */
#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "arch/x86/timer.h"
#include "lib/bits.h"
#include "lib/string.h"
#include "pmu/intel/arch_pebs.h"
#include "pmu/lbr.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/ktest.h"
#include "tests/pmu/pmu_common.h"

/* The path and its register state, defined in tests/pmu/pmu_pebs.c:
 * pebs_path(msr, on, off) writes msr <- on, runs 256 blocks of
 * "lea 1(%rax), %rax; jmp 1f; 1:" (6 bytes, the JMP at +4) from
 * pebs_path_start with every other GPR holding 0xa5a5000000000000 |
 * n << 8 | n (n its encoding number), then writes msr <- off. */
void pebs_path(uint32_t msr, uint64_t on, uint64_t off);
extern const char pebs_path_start[], pebs_path_end[];
#define PATH_BLOCKS 256u
#define PATH_BLOCK_BYTES 6u
#define PATH_LEA_BYTES 4u
#define PATH_GPR(n) (0xa5a5000000000000ull | (uint64_t)(n) << 8 | (uint64_t)(n))
/* A record's GPRs in the encoding order: RAX 0, RBX 3, RSP 4. */
#define GPR_RAX 0u
#define GPR_RBX 3u
#define GPR_RSP 4u

/* The buffer: 16 KiB (IA32_PEBS_BASE SIZE 2), 4 KiB aligned. The kernel
 * runs on the identity map (arch/x86/paging.h), so its address is the
 * physical address IA32_PEBS_BASE takes. */
#define BUF_SIZE_LOG 2u
#define BUF_SIZE (4096u << BUF_SIZE_LOG)
static uint8_t buf[BUF_SIZE] __attribute__((aligned(4096)));

static struct pmu_arch_pebs_caps caps_of[PMU_MAX_CPUS];

static struct pmu_arch_pebs_caps *here(void)
{
	return &caps_of[pmu_hw_cpu() % PMU_MAX_CPUS];
}

static uint32_t free_pebs_gp(void)
{
	return (uint32_t)here()->counters & pmu_test_free_gp();
}

static const char *needs_arch_pebs(void)
{
	const char *why = pmu_needs_global_ctrl();

	if (why)
		return why;
	pmu_arch_pebs_decode(pmu_caps(), here());
	if (!here()->present)
		return ktest_reason("%s", here()->why);
	if (!((pmu_caps()->events_avail >> PMU_ARCH_BRANCHES) & 1))
		return "the branches-retired event is not available (CPUID.0AH:EBX[5])";
	if (!free_pebs_gp())
		return ktest_reason(
			"no free GP counter that can use PEBS (CPUID.23H.5 counters %#lx, free %#x)",
			(unsigned long)here()->counters, pmu_test_free_gp());
	return NULL;
}

static const char *needs_pmi(void)
{
	const char *why = needs_arch_pebs();

	return why ? why : pmu_needs_pmi();
}

static const char *needs_fixed0(void)
{
	const char *why = needs_arch_pebs();

	if (why)
		return why;
	if (!((here()->counters >> PMU_IDX_FIXED(0)) & 1))
		return ktest_reason("fixed counter 0 cannot use PEBS (CPUID.23H.5:ECX=%#lx)",
				    (unsigned long)(here()->counters >> PMU_IDX_FIXED_BASE));
	if (!(pmu_test_free_fixed() & 1))
		return "fixed counter 0 is in use";
	return NULL;
}

static const char *needs_two(void)
{
	const char *why = needs_arch_pebs();
	uint32_t f;

	if (why)
		return why;
	f = free_pebs_gp();
	if (popcount32(f) < 2 || popcount32(pmu_test_free_gp()) < 3)
		return ktest_reason(
			"needs two free PEBS GP counters and a third GP counter (PEBS %#x, free %#x)", f,
			pmu_test_free_gp());
	return NULL;
}

/* One counter of a run. */
struct run_ctr {
	struct pmu_event ev;
	uint64_t period; /* preset and reload: -period */
	uint64_t groups; /* CFG_C group bits; PEBS off when !pebs */
	bool pebs;
	uint64_t after; /* the counter after the run */
	unsigned size;  /* its record size */
};

struct run {
	struct run_ctr *c;
	unsigned n;
	unsigned thresh_rec;            /* threshold after this many records of c[0]; 0: past the buffer */
	uint64_t index;                 /* IA32_PEBS_INDEX after the run */
	uint64_t status;                /* IA32_PERF_GLOBAL_STATUS after the run */
	const struct pmu_lbr_regs *lbr; /* LBRs on around the path (arch LBRs); NULL: off */
	bool faulted;
};

static uint64_t cfg_c_of(const struct run_ctr *k)
{
	if (!k->pebs)
		return 0;
	return BIT(ARCH_PEBS_EN_BIT) | k->groups | ((0 - k->period) & ARCH_PEBS_RELOAD_MASK);
}

/* Program every counter of r (PEBS through CFG_C, INT/PMI clear as Linux
 * does for PEBS events), the buffer, run the path with GLOBAL_CTRL as the
 * bracket, tear down in the reverse order. False after a failed check. */
static bool run(struct run *r)
{
	const struct pmu_caps *c = pmu_caps();
	uint64_t on = 0, global = 0, fixed_ctrl = 0;
	struct pmu_arch_pebs_index ix;
	int f = 0;
	bool was;

	memset(buf, 0, sizeof(buf));
	pmu_hw_rdmsr(c->global_ctrl, &global);
	pmu_hw_wrmsr(c->global_ctrl, 0);
	pmu_hw_rdmsr(c->fixed_ctrl, &fixed_ctrl);
	for (unsigned i = 0; i < r->n; i++) {
		struct run_ctr *k = &r->c[i];
		int x = k->ev.hw.idx;
		uint64_t start = (0 - k->period) & pmu_width_mask(k->ev.hw.width);

		k->size = pmu_arch_pebs_record_size(cfg_c_of(k), 0);
		if (!check(pmu_event_write_counter(&k->ev, start) == PMU_OK, "presetting %s to -%lu: %s",
			   k->ev.name, (unsigned long)k->period, k->ev.reason))
			f = 1;
		if (k->pebs)
			f |= pmu_hw_wrmsr(pmu_arch_pebs_cfg_c_msr(x), cfg_c_of(k));
		if (PMU_IDX_IS_FIXED(x)) {
			unsigned s = 4 * (unsigned)(x - PMU_IDX_FIXED_BASE);
			fixed_ctrl = (fixed_ctrl & ~(FIXED_CTR_CTRL_FIELD_MASK << s)) | FIXED_CTR_CTRL_EN_MASK
												<< s;
		} else {
			f |= pmu_hw_wrmsr(pmu_evtsel_msr(c, (unsigned)x),
					  k->ev.hw.config | BIT(PERFEVTSEL_EN_BIT));
		}
		on |= pmu_idx_bit(x);
	}
	f |= pmu_hw_wrmsr(c->fixed_ctrl, fixed_ctrl);
	f |= pmu_hw_wrmsr(MSR_IA32_PEBS_BASE, pmu_arch_pebs_base((uint64_t)buf, BUF_SIZE_LOG));
	f |= pmu_hw_wrmsr(
		MSR_IA32_PEBS_INDEX,
		pmu_arch_pebs_index(0, r->thresh_rec ? (uint64_t)r->thresh_rec * r->c[0].size : BUF_SIZE,
				    true));
	if (r->lbr)
		f |= pmu_hw_wrmsr(r->lbr->ctl_msr, r->lbr->ctl_on);
	r->faulted = f != 0;
	if (!r->faulted) {
		was = irq_save();
		pebs_path(c->global_ctrl, on, 0);
		irq_restore(was);
	}
	if (r->lbr)
		pmu_hw_wrmsr(r->lbr->ctl_msr, r->lbr->ctl_off);
	pmu_hw_rdmsr(MSR_IA32_PEBS_INDEX, &r->index);
	for (unsigned i = 0; i < r->n; i++) {
		struct run_ctr *k = &r->c[i];
		int x = k->ev.hw.idx;

		if (k->pebs)
			pmu_hw_wrmsr(pmu_arch_pebs_cfg_c_msr(x), 0);
		if (PMU_IDX_IS_FIXED(x)) {
			unsigned s = 4 * (unsigned)(x - PMU_IDX_FIXED_BASE);
			fixed_ctrl &= ~(FIXED_CTR_CTRL_FIELD_MASK << s);
			pmu_hw_rdmsr(pmu_fixed_msr(c, (unsigned)(x - PMU_IDX_FIXED_BASE)), &k->after);
		} else {
			pmu_hw_rdmsr(pmu_ctr_msr(c, (unsigned)x), &k->after);
			pmu_hw_wrmsr(pmu_evtsel_msr(c, (unsigned)x), 0);
		}
	}
	pmu_hw_wrmsr(c->fixed_ctrl, fixed_ctrl);
	pmu_hw_wrmsr(MSR_IA32_PEBS_INDEX, 0);
	pmu_hw_wrmsr(MSR_IA32_PEBS_BASE, 0);
	pmu_hw_rdmsr(c->global_status, &r->status);
	pmu_hw_wrmsr(c->global_ovf, r->status & (on | BIT(PERF_GLOBAL_STATUS_ARCH_PEBS_THRESH_BIT)));
	pmu_hw_wrmsr(c->global_ctrl, global);
	ix = pmu_arch_pebs_index_decode(r->index);
	return check(!r->faulted,
		     "programming architectural PEBS faulted (CFG_C, event selects, PEBS_BASE/INDEX%s)",
		     r->lbr ? ", IA32_LBR_CTL" : "") &&
	       check(ix.wr <= BUF_SIZE, "IA32_PEBS_INDEX %#lx: write offset %lu past the %u-byte buffer",
		     (unsigned long)r->index, (unsigned long)ix.wr, BUF_SIZE);
}

static bool reserve(struct run_ctr *k, int idx, enum pmu_arch_event e)
{
	pmu_test_event(&k->ev, e);
	k->ev.name = PMU_IDX_IS_FIXED(idx) ? "instructions (fixed, PEBS)" : "branches (PEBS)";
	return check(pmu_event_add_idx(&k->ev, idx) == PMU_OK, "counter %d: %s", idx, k->ev.reason);
}

/* The i-th free PEBS-capable GP counter. */
static int pebs_gp(unsigned i)
{
	uint32_t f = free_pebs_gp();

	while (i--)
		f &= f - 1;
	return f ? __builtin_ctz(f) : -1;
}

/* The records of a run, parsed in order. */
struct walk {
	unsigned n;
	struct pmu_arch_pebs_record rec[16];
	size_t off[16];
};

/* One at a time: the checks of a CPU run one after another, as the
 * buffer's use says. */
static struct walk the_walk;

static bool walk(const struct run *r, struct walk *w)
{
	size_t end = pmu_arch_pebs_index_decode(r->index).wr, off = 0;
	char why[PMU_REASON_LEN];

	w->n = 0;
	while (off < end && w->n < 16) {
		struct pmu_arch_pebs_record *rec = &w->rec[w->n];
		if (!check(pmu_arch_pebs_parse(buf + off, end - off, rec, why, sizeof(why)) == PMU_OK,
			   "record %u at +%zu (index %#lx): %s", w->n, off, (unsigned long)r->index, why))
			return false;
		if (!check(rec->size && !rec->cont, "record %u at +%zu: size %u%s", w->n, off, rec->size,
			   rec->cont ? ", a fragment" : ""))
			return false;
		w->off[w->n++] = off;
		off += rec->size;
	}
	return true;
}

static void diag_run(const struct run *r, const struct walk *w)
{
	diag("IA32_PEBS_INDEX %#lx, GLOBAL_STATUS %#lx; buffer %p", (unsigned long)r->index,
	     (unsigned long)r->status, (void *)buf);
	for (unsigned i = 0; i < r->n; i++)
		diag("  counter %d: CFG_C %#lx, period %lu, after the run %#lx", r->c[i].ev.hw.idx,
		     (unsigned long)cfg_c_of(&r->c[i]), (unsigned long)r->c[i].period,
		     (unsigned long)r->c[i].after);
	for (unsigned k = 0; w && k < w->n && k < 8; k++)
		diag("  record %u at +%zu: size %u groups %#lx ip %#lx applicable %#lx (path %p-%p)", k,
		     w->off[k], w->rec[k].size, (unsigned long)w->rec[k].groups, (unsigned long)w->rec[k].ip,
		     (unsigned long)w->rec[k].applicable, (const void *)pebs_path_start,
		     (const void *)pebs_path_end);
}

static bool is_path_jmp(uint64_t ip)
{
	return ip >= (uint64_t)pebs_path_start && ip < (uint64_t)pebs_path_end &&
	       (ip - (uint64_t)pebs_path_start) % PATH_BLOCK_BYTES == PATH_LEA_BYTES;
}

/* An instruction boundary of the path: block k's LEA (RAX = k) or its
 * JMP (RAX = k + 1). */
static bool path_rax_at(uint64_t ip, uint64_t *rax)
{
	uint64_t off = ip - (uint64_t)pebs_path_start;

	if (ip < (uint64_t)pebs_path_start || ip > (uint64_t)pebs_path_end)
		return false;
	if (off % PATH_BLOCK_BYTES == 0)
		return *rax = off / PATH_BLOCK_BYTES, true;
	if (off % PATH_BLOCK_BYTES == PATH_LEA_BYTES)
		return *rax = off / PATH_BLOCK_BYTES + 1, true;
	return false;
}

/* 256 branches, period 40: 6 overflows, the last 16 branches before the end. */
#define PERIOD 40u
#define RECORDS (PATH_BLOCKS / PERIOD)

/* The reload: the counter ends within one period below zero. */
static bool reloaded(const struct run_ctr *k)
{
	uint64_t left = (0 - k->after) & pmu_width_mask(k->ev.hw.width);

	return check(
		left >= 1 && left <= k->period,
		"counter %d %#lx after the run: expected -1..-%lu (reloaded from CFG_C[31:0] after each record)",
		k->ev.hw.idx, (unsigned long)k->after, (unsigned long)k->period);
}

KTEST("pmu.arch_pebs", record_per_overflow, needs_arch_pebs, KTEST_PER_CPU,
      "one architectural PEBS record per overflow, the counter reloaded from CFG_C")
{
	struct run_ctr k = { .period = PERIOD, .pebs = true };
	struct run r = { .c = &k, .n = 1 };
	struct walk *w = &the_walk;
	bool ok = true;

	if (!reserve(&k, pebs_gp(0), PMU_ARCH_BRANCHES))
		return;
	if (run(&r)) {
		uint64_t wr = pmu_arch_pebs_index_decode(r.index).wr;
		ok &= check(
			wr == (uint64_t)RECORDS * k.size,
			"%u branches, period %u: expected %u records of %u bytes, IA32_PEBS_INDEX moved %lu bytes",
			PATH_BLOCKS, PERIOD, RECORDS, k.size, (unsigned long)wr);
		ok &= walk(&r, w);
		for (unsigned i = 0; ok && i < w->n; i++)
			ok &= check(
				w->rec[i].size == k.size && w->rec[i].applicable == pmu_idx_bit(k.ev.hw.idx),
				"record %u: size %u (expected %u), applicable counters %#lx (expected %#lx)",
				i, w->rec[i].size, k.size, (unsigned long)w->rec[i].applicable,
				(unsigned long)pmu_idx_bit(k.ev.hw.idx));
		ok &= reloaded(&k);
		/* Whether PEBS leaves the counter's own status bit is not
		 * documented: reported, not asserted. */
		diag("counter %d's GLOBAL_STATUS bit after PEBS took its overflows: %s", k.ev.hw.idx,
		     (r.status & pmu_idx_bit(k.ev.hw.idx)) ? "set" : "clear");
		if (!ok)
			diag_run(&r, w);
	}
	pmu_event_del(&k.ev);
}

KTEST("pmu.arch_pebs", record_ip, needs_arch_pebs, KTEST_PER_CPU,
      "each record's eventing IP is a JMP of the path; its GPRs agree with its RIP")
{
	struct run_ctr k = { .period = PERIOD, .pebs = true };
	struct run r = { .c = &k, .n = 1 };
	struct walk *w = &the_walk;
	bool ok = true;

	if (!reserve(&k, pebs_gp(0), PMU_ARCH_BRANCHES))
		return;
	if (here()->groups & BIT(ARCH_PEBS_GPR_BIT))
		k.groups = BIT(ARCH_PEBS_GPR_BIT);
	if (run(&r) && walk(&r, w)) {
		ok &= check(w->n > 0, "no record written (IA32_PEBS_INDEX %#lx)", (unsigned long)r.index);
		for (unsigned i = 0; i < w->n; i++) {
			const struct pmu_arch_pebs_record *rec = &w->rec[i];
			uint64_t rax = 0;
			ok &= check(is_path_jmp(rec->ip),
				    "record %u: eventing IP %#lx is not one of the path's JMPs (%p + 6k + 4)",
				    i, (unsigned long)rec->ip, (const void *)pebs_path_start);
			if (!rec->has_gprs)
				continue;
			ok &= check(path_rax_at(rec->rip, &rax) && rec->gpr[GPR_RAX] == rax,
				    "record %u: RAX %lu at RIP %#lx; the path holds RAX = %lu there", i,
				    (unsigned long)rec->gpr[GPR_RAX], (unsigned long)rec->rip,
				    (unsigned long)rax);
			for (unsigned g = GPR_RBX; g < 16; g++)
				if (g != GPR_RSP)
					ok &= check(rec->gpr[g] == PATH_GPR(g),
						    "record %u: GPR %u %#lx, expected %#lx", i, g,
						    (unsigned long)rec->gpr[g], (unsigned long)PATH_GPR(g));
		}
		if (!ok)
			diag_run(&r, w);
	} else {
		diag_run(&r, NULL);
	}
	pmu_event_del(&k.ev);
}

KTEST("pmu.arch_pebs", groups, needs_arch_pebs, KTEST_PER_CPU,
      "each record holds exactly the groups its counter's CFG_C asks for")
{
	/* Every combination of the groups CPUID.23H.4 offers (memory info,
	 * GPRs, XMMs, eight LBR entries), each asked for on its own run. */
	static const uint64_t menu[4] = { BIT(ARCH_PEBS_AUX_BIT), BIT(ARCH_PEBS_GPR_BIT),
					  BIT(ARCH_PEBS_XMM_BIT), 1ull << ARCH_PEBS_LBR_SHIFT };
	struct run_ctr k = { .period = PERIOD, .pebs = true };

	if (!reserve(&k, pebs_gp(0), PMU_ARCH_BRANCHES))
		return;
	for (unsigned m = 0; m < 16; m++) {
		uint64_t g = 0;
		struct run r = { .c = &k, .n = 1 };
		struct walk *w = &the_walk;
		bool ok = true;

		for (unsigned b = 0; b < 4; b++)
			if ((m >> b) & 1)
				g |= menu[b];
		if (g & ~here()->groups)
			continue; /* a group this CPU does not offer */
		k.groups = g;
		if (!run(&r) || !walk(&r, w)) {
			diag_run(&r, NULL);
			break;
		}
		ok &= check(w->n == RECORDS, "groups %#lx: %u records, expected %u", (unsigned long)g, w->n,
			    RECORDS);
		for (unsigned i = 0; ok && i < w->n; i++)
			ok &= check(
				w->rec[i].groups == (g | BIT(ARCH_PEBS_EN_BIT)) && w->rec[i].size == k.size &&
					(!(g & ARCH_PEBS_LBR_MASK) || w->rec[i].lbr_total == 8),
				"CFG_C groups %#lx, record %u: header groups %#lx, size %u, %u LBR entries; "
				"expected groups %#lx (the basic group too), size %u%s",
				(unsigned long)g, i, (unsigned long)w->rec[i].groups, w->rec[i].size,
				w->rec[i].lbr_total, (unsigned long)(g | BIT(ARCH_PEBS_EN_BIT)), k.size,
				(g & ARCH_PEBS_LBR_MASK) ? ", 8 LBR entries" : "");
		if (!ok) {
			diag_run(&r, w);
			break;
		}
	}
	pmu_event_del(&k.ev);
}

struct thresh_view {
	unsigned calls;
	uint64_t status, index;
};

static void observe(void *ctx, uint64_t status)
{
	struct thresh_view *v = ctx;

	if (!v->calls++) {
		v->status = status;
		pmu_hw_rdmsr(MSR_IA32_PEBS_INDEX, &v->index);
	}
}

KTEST("pmu.arch_pebs", threshold_pmi, needs_pmi, KTEST_PER_CPU,
      "the threshold PMI (GLOBAL_STATUS bit 54) comes when the index reaches it")
{
	/* Period 80: 3 records. Threshold at 3 records: one PMI with bit
	 * 54 and the index there; at 4: none. The window runs with
	 * interrupts off, so the PMI is taken right after it. */
	static const unsigned at[2] = { 3, 4 };
	struct run_ctr k = { .period = 80, .pebs = true };
	uint64_t bit = BIT(PERF_GLOBAL_STATUS_ARCH_PEBS_THRESH_BIT);

	if (!reserve(&k, pebs_gp(0), PMU_ARCH_BRANCHES))
		return;
	for (unsigned t = 0; t < 2; t++) {
		struct run r = { .c = &k, .n = 1, .thresh_rec = at[t] };
		struct thresh_view v = { 0 };
		struct pmu_pmi_stats s0, s1;
		unsigned n;

		pmu_hw_wrmsr(pmu_caps()->global_ovf, bit);
		pmu_pmi_get_stats(pmu_hw_cpu(), &s0);
		pmu_pmi_set_observer(observe, &v);
		bool ran = run(&r);
		udelay(1000);
		pmu_pmi_set_observer(NULL, NULL);
		pmu_pmi_get_stats(pmu_hw_cpu(), &s1);
		if (!ran)
			break;
		n = (unsigned)(pmu_arch_pebs_index_decode(r.index).wr / k.size);
		check(n == 3, "threshold %u: expected 3 records (period 80, %u branches), found %u", at[t],
		      PATH_BLOCKS, n);
		if (at[t] == 3) {
			check(s1.pmis - s0.pmis == 1 && v.calls == 1,
			      "threshold at 3 records: expected one PMI, the handler ran %lu times",
			      (unsigned long)(s1.pmis - s0.pmis));
			check((v.status & bit) && pmu_arch_pebs_index_decode(v.index).wr == 3ull * k.size,
			      "at the PMI: GLOBAL_STATUS %#lx (expected bit 54), IA32_PEBS_INDEX %#lx (write offset "
			      "expected %u)",
			      (unsigned long)v.status, (unsigned long)v.index, 3 * k.size);
		} else {
			check(s1.pmis == s0.pmis && !(r.status & bit),
			      "threshold at 4 records, 3 written: expected no PMI and bit 54 clear, saw %lu PMIs, "
			      "status %#lx",
			      (unsigned long)(s1.pmis - s0.pmis), (unsigned long)r.status);
		}
		pmu_hw_wrmsr(pmu_caps()->global_ovf, bit);
	}
	pmu_event_del(&k.ev);
}

KTEST("pmu.arch_pebs", fixed_counter, needs_fixed0, KTEST_PER_CPU,
      "PEBS on fixed counter 0: one record per overflow, each inside the path")
{
	/* Period 80 instructions: the path's 512 instructions and the ten
	 * or so around it give 6 overflows, all inside the path. */
	struct run_ctr k = { .period = 80, .pebs = true };
	struct run r = { .c = &k, .n = 1 };
	struct walk *w = &the_walk;
	bool ok = true;

	if (!reserve(&k, PMU_IDX_FIXED(0), PMU_ARCH_INSTRUCTIONS))
		return;
	if (here()->groups & BIT(ARCH_PEBS_GPR_BIT))
		k.groups = BIT(ARCH_PEBS_GPR_BIT);
	if (run(&r) && walk(&r, w)) {
		ok &= check(w->n == 6, "period 80 over the path's %u instructions: %u records, expected 6",
			    2 * PATH_BLOCKS, w->n);
		for (unsigned i = 0; i < w->n; i++) {
			const struct pmu_arch_pebs_record *rec = &w->rec[i];
			uint64_t rax = 0;
			ok &= check(
				rec->applicable == pmu_idx_bit(k.ev.hw.idx) && path_rax_at(rec->ip, &rax) &&
					rec->ip < (uint64_t)pebs_path_end,
				"record %u: applicable %#lx (expected %#lx), eventing IP %#lx: expected an "
				"instruction of the path [%p, %p)",
				i, (unsigned long)rec->applicable, (unsigned long)pmu_idx_bit(k.ev.hw.idx),
				(unsigned long)rec->ip, (const void *)pebs_path_start,
				(const void *)pebs_path_end);
		}
		ok &= reloaded(&k);
		if (!ok)
			diag_run(&r, w);
	} else {
		diag_run(&r, NULL);
	}
	pmu_event_del(&k.ev);
}

KTEST("pmu.arch_pebs", several_counters, needs_two, KTEST_PER_CPU,
      "two PEBS counters at once: each its own records and groups; none for others")
{
	/* Periods 40 and 52 over 256 branches: 6 and 4 records, never on
	 * the same branch (their first common multiple is 520). A third
	 * counter of branches without PEBS, period 100, overflows twice:
	 * its status bit, no record. */
	struct run_ctr k[3] = {
		{ .period = 40, .pebs = true },
		{ .period = 52, .pebs = true },
		{ .period = 100, .pebs = false },
	};
	struct run r = { .c = k, .n = 3 };
	/* Chosen before any is taken: taking one changes what is free. */
	int a = pebs_gp(0), b = pebs_gp(1);
	uint64_t other = pmu_test_free_gp() & ~(pmu_idx_bit(a) | pmu_idx_bit(b));
	unsigned want[2] = { 6, 4 }, got[2] = { 0, 0 };
	struct walk *w = &the_walk;
	bool ok = true;

	if (!reserve(&k[0], a, PMU_ARCH_BRANCHES))
		return;
	if (!reserve(&k[1], b, PMU_ARCH_BRANCHES)) {
		pmu_event_del(&k[0].ev);
		return;
	}
	if (!reserve(&k[2], __builtin_ctzll(other), PMU_ARCH_BRANCHES)) {
		pmu_event_del(&k[1].ev);
		pmu_event_del(&k[0].ev);
		return;
	}
	k[2].ev.name = "branches (no PEBS)";
	k[0].groups = here()->groups & BIT(ARCH_PEBS_GPR_BIT);
	k[1].groups = here()->groups & BIT(ARCH_PEBS_AUX_BIT);
	if (run(&r) && walk(&r, w)) {
		for (unsigned i = 0; i < w->n; i++) {
			const struct pmu_arch_pebs_record *rec = &w->rec[i];
			unsigned j = rec->applicable == pmu_idx_bit(k[0].ev.hw.idx)   ? 0
				     : rec->applicable == pmu_idx_bit(k[1].ev.hw.idx) ? 1
										      : 2;
			if (!check(j < 2,
				   "record %u: applicable counters %#lx, expected counter %d's or %d's alone",
				   i, (unsigned long)rec->applicable, k[0].ev.hw.idx, k[1].ev.hw.idx)) {
				ok = false;
				continue;
			}
			got[j]++;
			ok &= check(
				rec->groups == (k[j].groups | BIT(ARCH_PEBS_EN_BIT)) &&
					rec->size == k[j].size,
				"record %u (counter %d): groups %#lx size %u, its CFG_C asks %#lx (size %u)",
				i, k[j].ev.hw.idx, (unsigned long)rec->groups, rec->size,
				(unsigned long)(k[j].groups | BIT(ARCH_PEBS_EN_BIT)), k[j].size);
		}
		for (unsigned j = 0; j < 2; j++) {
			ok &= check(got[j] == want[j], "counter %d, period %lu: %u records, expected %u",
				    k[j].ev.hw.idx, (unsigned long)k[j].period, got[j], want[j]);
			ok &= reloaded(&k[j]);
		}
		ok &= check(r.status & pmu_idx_bit(k[2].ev.hw.idx),
			    "counter %d (no PEBS) overflowed twice, but GLOBAL_STATUS %#lx lacks its bit",
			    k[2].ev.hw.idx, (unsigned long)r.status);
		if (!ok)
			diag_run(&r, w);
	} else {
		diag_run(&r, NULL);
	}
	pmu_event_del(&k[2].ev);
	pmu_event_del(&k[1].ev);
	pmu_event_del(&k[0].ev);
}

/* Arch LBRs recording the path's JMPs (every branch kind, ring 0), or a
 * reason why not; the stack emptied first. */
static const char *path_lbrs(struct pmu_lbr_caps *l, struct pmu_lbr_regs *regs)
{
	const struct pmu_lbr_filter f = { .os = true, .kinds = PMU_LBR_BR_ALL };
	static char why[PMU_REASON_LEN];

	pmu_lbr_decode(pmu_caps(), l);
	if (l->kind != PMU_LBR_ARCH)
		return ktest_reason("LBR group not checked: no architectural LBRs (%s)",
				    l->kind == PMU_LBR_NONE ? l->why : pmu_lbr_kind_name(l->kind));
	if (pmu_lbr_encode(l, &f, 0, regs, why, sizeof(why)) != PMU_OK)
		return why;
	if (pmu_lbr_clear(l) != 0)
		return "emptying the architectural LBR stack faulted";
	return NULL;
}

/* The fields of each group that pmu.arch_pebs.groups leaves unread, on a
 * record with every group CPUID.23H.4 offers (the counters group is not
 * offered by any shape here): the header's second quadword is reserved
 * (Linux d21954c8a0ff, struct arch_pebs_header: rsvd4), so 0; the XER
 * group's header is a state-component bitmap in XCR0's layout (struct
 * arch_pebs_xer_header.xstate) and the group holds XMM0-15, so its SSE
 * bit (1) is set; the LBR group's header holds IA32_LBR_CTL at the
 * record (struct arch_pebs_lbr_header.ctl), the value this run wrote, and
 * its eight entries are the most recent branches first (SDM vol. 3B,
 * "Architectural Last Branch Records": entry 0 the youngest): with LBRs
 * on around the path, whose only branches are its JMPs and whose first
 * record comes 40 of them in, each entry is a JMP of the path to the
 * next block (from + 2), one block before the entry younger than it. */
KTEST("pmu.arch_pebs", group_fields, needs_arch_pebs, KTEST_PER_CPU,
      "group headers: reserved 0, XER names SSE, LBR_CTL and the path's JMPs")
{
	struct run_ctr k = { .period = PERIOD, .pebs = true };
	struct run r = { .c = &k, .n = 1 };
	struct walk *w = &the_walk;
	struct pmu_lbr_caps l;
	struct pmu_lbr_regs regs;
	const char *no_lbr;
	bool ok = true;

	if (!reserve(&k, pebs_gp(0), PMU_ARCH_BRANCHES))
		return;
	k.groups = here()->groups & (BIT(ARCH_PEBS_AUX_BIT) | BIT(ARCH_PEBS_GPR_BIT) |
				     BIT(ARCH_PEBS_XMM_BIT) | (1ull << ARCH_PEBS_LBR_SHIFT));
	no_lbr = (k.groups & ARCH_PEBS_LBR_MASK) ? path_lbrs(&l, &regs) : "the LBR group is not offered";
	if (no_lbr) {
		diag("%s", no_lbr);
		k.groups &= ~ARCH_PEBS_LBR_MASK;
	} else {
		r.lbr = &regs;
	}
	if (run(&r) && walk(&r, w)) {
		ok &= check(w->n == RECORDS, "groups %#lx: %u records, expected %u", (unsigned long)k.groups,
			    w->n, RECORDS);
		for (unsigned i = 0; i < w->n; i++) {
			const struct pmu_arch_pebs_record *rec = &w->rec[i];
			ok &= check(rec->hdr_rsvd == 0,
				    "record %u: the header's reserved second quadword reads %#lx, expected 0",
				    i, (unsigned long)rec->hdr_rsvd);
			if (k.groups & BIT(ARCH_PEBS_XMM_BIT))
				ok &= check(
					rec->has_xmm && ((rec->xer_state >> 1) & 1),
					"record %u: XER group header %#lx lacks the SSE state bit (1) of the XMM registers it holds",
					i, (unsigned long)rec->xer_state);
			if (!r.lbr)
				continue;
			ok &= check(rec->lbr_ctl == regs.ctl_on,
				    "record %u: the LBR group's IA32_LBR_CTL field %#lx, the run wrote %#lx",
				    i, (unsigned long)rec->lbr_ctl, (unsigned long)regs.ctl_on);
			ok &= check(rec->lbr_n == 8, "record %u: %u LBR entries, expected 8", i, rec->lbr_n);
			for (unsigned e = 0; ok && e < rec->lbr_n; e++) {
				uint64_t from = rec->lbr[e].from, to = rec->lbr[e].to;
				ok &= check(
					is_path_jmp(from) && to == from + 2 &&
						(e == 0 || from + PATH_BLOCK_BYTES == rec->lbr[e - 1].from),
					"record %u, LBR entry %u: %#lx -> %#lx; expected a JMP of the path (%p + 6k + 4) to the next block%s",
					i, e, (unsigned long)from, (unsigned long)to,
					(const void *)pebs_path_start,
					e ? ", one block before the entry younger than it" : "");
			}
		}
		if (!ok)
			diag_run(&r, w);
	} else {
		diag_run(&r, NULL);
	}
	if (r.lbr)
		pmu_lbr_clear(&l);
	pmu_event_del(&k.ev);
}

/* A counter's CFG_C takes a write of each group CPUID.23H.4:EBX offers
 * (bit k of EBX lets CFG_C bit 32 + k be set: Linux cc5755ee9b8b reads it
 * so) and reads it back; a group bit EBX does not offer is reserved, and
 * a WRMSR setting a reserved bit of an MSR raises #GP (SDM vol. 4,
 * "Architectural MSRs", reserved bits). On the shapes here the counters
 * group (bits 38:35) is the one never offered. */
KTEST("pmu.arch_pebs", cfg_c_groups, needs_arch_pebs, KTEST_PER_CPU,
      "CFG_C holds each group CPUID.23H.4 offers and #GPs on the others")
{
	int x = pebs_gp(0);
	uint32_t msr = pmu_arch_pebs_cfg_c_msr(x);
	uint64_t offered = here()->groups & ARCH_PEBS_GROUPS & ~BIT(ARCH_PEBS_EN_BIT), v;
	uint64_t refused = ARCH_PEBS_GROUPS & ~here()->groups & ~BIT(ARCH_PEBS_EN_BIT);
	int vec;

	for (unsigned b = 32; b < 63; b++) {
		uint64_t bit = BIT(b);
		if (!((offered | refused) & bit))
			continue;
		v = 0;
		vec = pmu_hw_wrmsr(msr, bit);
		if (offered & bit)
			check(vec == 0 && pmu_hw_rdmsr(msr, &v) == 0 && v == bit,
			      "counter %d's CFG_C (MSR %#x) <- bit %u, a group CPUID.23H.4 offers (groups %#lx): vector %d, reads %#lx",
			      x, msr, b, (unsigned long)here()->groups, vec, (unsigned long)v);
		else
			check(vec == X86_VEC_GP,
			      "counter %d's CFG_C (MSR %#x) <- bit %u, a group CPUID.23H.4 does not offer (groups %#lx): expected #GP, saw vector %d",
			      x, msr, b, (unsigned long)here()->groups, vec);
		pmu_hw_wrmsr(msr, 0);
	}
	if (!refused)
		diag("CPUID.23H.4 offers every group (%#lx): no reserved group bit to refuse",
		     (unsigned long)here()->groups);
}
