/* The cost map of the PMU as this guest (or machine) sees it, per CPU: TSC
 * ticks taken by RDPMC, by RDMSR and WRMSR of each class of PMU register,
 * and from the overflowing event to the PMI handler, as median, minimum
 * and 90th percentile, next to two references: RDTSC (never intercepted)
 * and CPUID (always a VM exit under VMX; KVM intercepts it on SVM too).
 * Printed as "# cost:" lines; docs/operating.md says how to read them. Figures,
 * not verdicts: the check only asserts that every access it timed
 * completed and every PMI arrived. */
#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "arch/x86/timer.h"
#include "pmu/bracket.h"
#include "pmu/kernel/pmi_lvt.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/ktest.h"
#include "tests/pmu/pmu_common.h"
#include "tests/pmu/vpmu_model.h"

#define COST_SAMPLES 64u
#define COST_PMI_SAMPLES 16u
/* Events to the overflow in the PMI latency runs: the counter is preset
 * to minus this, so the overflow comes a few instructions after the
 * enabling WRMSR. */
#define COST_PMI_EVENTS 16
#define COST_PMI_WAIT_US 10000

/* RDTSC ordered against the code around it (LFENCE: SDM vol. 2B, RDTSC). */
static inline uint64_t tsc_fenced(void)
{
	uint32_t lo, hi;

	__asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi)::"memory");
	return (uint64_t)hi << 32 | lo;
}

struct cost_row {
	const char *name;
	uint64_t min, med, p90;
	unsigned n, faults;
};

static void sort64(uint64_t *v, unsigned n)
{
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
			uint64_t t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
}

static void row_from(struct cost_row *r, uint64_t *s, unsigned n)
{
	sort64(s, n);
	r->n = n;
	r->min = n ? s[0] : 0;
	r->med = n ? s[n / 2] : 0;
	r->p90 = n ? s[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1] : 0;
}

/* What one sample times; returns the vector it raised, or 0. */
struct cost_op {
	const char *name;
	int (*fn)(const struct cost_op *op, unsigned i);
	uint32_t reg;
	uint64_t a, b; /* values to write (alternating for b != a) */
};

static int op_empty(const struct cost_op *op, unsigned i)
{
	(void)op, (void)i;
	return 0;
}

static int op_rdtsc(const struct cost_op *op, unsigned i)
{
	(void)op, (void)i;
	__asm__ volatile("rdtsc" ::: "eax", "edx", "memory");
	return 0;
}

static int op_cpuid(const struct cost_op *op, unsigned i)
{
	struct cpuid_regs r;
	(void)op, (void)i;
	cpuid_count(0, 0, &r);
	return 0;
}

static int op_rdpmc(const struct cost_op *op, unsigned i)
{
	uint64_t v;
	(void)i;
	return pmu_hw_rdpmc(op->reg, &v);
}

static int op_rdmsr(const struct cost_op *op, unsigned i)
{
	uint64_t v;
	(void)i;
	return pmu_hw_rdmsr(op->reg, &v);
}

static int op_wrmsr(const struct cost_op *op, unsigned i)
{
	return pmu_hw_wrmsr(op->reg, (i & 1) ? op->b : op->a);
}

/* Median and spread of one operation, less the empty RDTSC pair (base). */
static struct cost_row time_op(const struct cost_op *op, uint64_t base)
{
	static uint64_t s[MAX_CPUS][COST_SAMPLES];
	uint64_t *v = s[this_cpu()->cpu];
	struct cost_row r = { .name = op->name };
	bool irq = irq_save();

	for (unsigned i = 0; i < COST_SAMPLES; i++) {
		uint64_t t0 = tsc_fenced();
		int vec = op->fn(op, i);
		uint64_t t1 = tsc_fenced();

		r.faults += vec != 0;
		v[i] = t1 - t0 > base ? t1 - t0 - base : 0;
	}
	irq_restore(irq);
	row_from(&r, v, COST_SAMPLES);
	return r;
}

static void print_row(const struct cost_row *r, uint64_t cpuid_med)
{
	uint64_t x100 = cpuid_med ? r->med * 100 / cpuid_med : 0;

	diag("cost: cpu%u %s median %lu min %lu p90 %lu TSC ticks (n=%u, %lu.%02lu x cpuid)", this_cpu()->cpu,
	     r->name, r->med, r->min, r->p90, r->n, x100 / 100, x100 % 100);
}

/* From the enabling WRMSR to the handler's entry: a counter preset to
 * -COST_PMI_EVENTS instructions with INT, started by its bracket register;
 * the handler records its entry TSC (pmu/kernel/pmi_lvt.c). */
static struct cost_row pmi_latency(unsigned x, uint64_t base)
{
	static uint64_t s[MAX_CPUS][COST_PMI_SAMPLES];
	uint64_t *v = s[this_cpu()->cpu];
	struct cost_row r = { .name = "pmi-latency (enable to handler entry)" };
	unsigned cpu = this_cpu()->cpu, n = 0;
	struct pmu_event ev;
	struct pmu_event *g[] = { &ev };
	struct pmu_bracket_regs br;
	char why[PMU_REASON_LEN];

	if (pmi_check_delivery(why, sizeof(why))) {
		diag("cost: cpu%u pmi-latency not measured: %s", cpu, why);
		return r;
	}
	/* Instructions, or cycles where CPUID offers no instructions on a
	 * GP counter: either overflows within the workload. */
	enum pmu_arch_event e = PMU_ARCH_INSTRUCTIONS;
	if (pmu_test_gp_event_missing(e))
		e = PMU_ARCH_CYCLES;
	const char *why_not = pmu_test_gp_event_missing(e);
	if (why_not) {
		diag("cost: cpu%u pmi-latency not measured: %s", cpu, why_not);
		return r;
	}
	pmu_test_event(&ev, e);
	ev.attr.intr = true;
	if (pmu_event_add_idx(&ev, (int)x) != PMU_OK) {
		r.faults++;
		diag("cost: cpu%u pmi-latency: %s", cpu, ev.reason);
		return r;
	}
	bool irq = irq_save();
	for (unsigned k = 0; k < COST_PMI_SAMPLES; k++) {
		struct pmu_pmi_stats s0, s1;

		if (pmu_events_arm(g, 1, &br) != PMU_OK) {
			r.faults++;
			break;
		}
		pmu_event_write_counter(&ev, (0 - (uint64_t)COST_PMI_EVENTS) & pmu_width_mask(ev.hw.width));
		pmu_pmi_get_stats(cpu, &s0);
		irq_enable();
		uint64_t t0 = tsc_fenced(), end;
		wrmsr(br.msr, br.on);
		pmu_workload_loop(100);
		end = rdtsc() + us_to_tsc(COST_PMI_WAIT_US);
		do
			pmu_pmi_get_stats(cpu, &s1);
		while (s1.ovf[x] == s0.ovf[x] && rdtsc() < end);
		irq_disable();
		wrmsr(br.msr, br.off);
		pmu_events_disarm(g, 1);
		if (s1.ovf[x] == s0.ovf[x]) {
			r.faults++;
			continue;
		}
		uint64_t t1 = pmi_last_entry_tsc(cpu);
		v[n++] = t1 - t0 > base ? t1 - t0 - base : 0;
	}
	irq_restore(irq);
	pmu_event_del(&ev);
	row_from(&r, v, n);
	return r;
}

/* Every class of PMU register this CPU has: counters, event selects (a
 * WRMSR that changes the event of an enabled counter is what makes a
 * perf-backed vPMU re-create its host event), fixed counters and their
 * control, the global registers. RDPMC and the counter MSRs are passed
 * through by a mediated vPMU, intercepted by a perf-backed one. */
KTEST("pmu.cost", table, pmu_needs_counting, KTEST_PER_CPU,
      "cost map: cycles of RDPMC/RDMSR/WRMSR per PMU MSR class, PMI latency")
{
	struct pmu_cpu *pc = pmu_cpu_ensure();
	const struct pmu_caps *c = pmu_cpu_caps(pc);
	unsigned x = pmu_test_first_absent(~pmu_test_free_gp(), PMU_MAX_GP);
	unsigned i = pmu_test_first_absent(~(c->global_ctrl ? pmu_test_free_fixed() : 0), PMU_MAX_FIXED);
	struct cost_op ops[20];
	unsigned n = 0;

	if (x >= PMU_MAX_GP)
		ktest_skip("no free GP counter (mask %#x)", pmu_test_free_gp());
	uint64_t ev_a = 0xc0 | BIT(PERFEVTSEL_USR_BIT) | BIT(PERFEVTSEL_OS_BIT) | BIT(PERFEVTSEL_EN_BIT);
	uint64_t ev_b = (ev_a & ~0xffull) | (c->vendor == PMU_VENDOR_AMD ? 0x76 : 0x3c);

	struct cost_op empty = { "empty", op_empty, 0, 0, 0 };
	struct cost_row base = time_op(&empty, 0);
	ops[n++] = (struct cost_op){ "reference rdtsc", op_rdtsc, 0, 0, 0 };
	ops[n++] = (struct cost_op){ "reference cpuid", op_cpuid, 0, 0, 0 };
	ops[n++] = (struct cost_op){ "rdpmc gp", op_rdpmc, x, 0, 0 };
	ops[n++] = (struct cost_op){ "rdmsr gp counter", op_rdmsr, pmu_ctr_msr(c, x), 0, 0 };
	ops[n++] = (struct cost_op){ "wrmsr gp counter", op_wrmsr, pmu_ctr_write_msr(c, x), 0, 0 };
	ops[n++] = (struct cost_op){ "rdmsr event select", op_rdmsr, pmu_evtsel_msr(c, x), 0, 0 };
	ops[n++] = (struct cost_op){ "wrmsr event select, same event", op_wrmsr, pmu_evtsel_msr(c, x), ev_a,
				     ev_a };
	ops[n++] = (struct cost_op){ "wrmsr event select, event changes", op_wrmsr, pmu_evtsel_msr(c, x),
				     ev_a, ev_b };
	if (i < PMU_MAX_FIXED) {
		ops[n++] = (struct cost_op){ "rdpmc fixed", op_rdpmc, PMU_RDPMC_FIXED | i, 0, 0 };
		ops[n++] = (struct cost_op){ "rdmsr fixed counter", op_rdmsr, pmu_fixed_msr(c, i), 0, 0 };
		ops[n++] = (struct cost_op){ "wrmsr fixed counter", op_wrmsr, pmu_fixed_msr(c, i), 0, 0 };
		ops[n++] = (struct cost_op){ "rdmsr fixed ctrl", op_rdmsr, c->fixed_ctrl, 0, 0 };
		ops[n++] = (struct cost_op){ "wrmsr fixed ctrl", op_wrmsr, c->fixed_ctrl,
					     pmu_cpu_fixed_ctrl(pc), pmu_cpu_fixed_ctrl(pc) };
	}
	if (c->global_ctrl) {
		ops[n++] = (struct cost_op){ "rdmsr global ctrl", op_rdmsr, c->global_ctrl, 0, 0 };
		ops[n++] = (struct cost_op){ "wrmsr global ctrl", op_wrmsr, c->global_ctrl,
					     pmu_cpu_global_ctrl(pc), pmu_cpu_global_ctrl(pc) };
		ops[n++] = (struct cost_op){ "rdmsr global status", op_rdmsr, c->global_status, 0, 0 };
		ops[n++] = (struct cost_op){ "wrmsr global status clear", op_wrmsr, c->global_ovf, 0, 0 };
	}

	/* The event-select rows count with the counter enabled (its
	 * GLOBAL_CTRL bit set): a perf-backed vPMU reprograms only then. */
	if (c->global_ctrl)
		pmu_hw_wrmsr(c->global_ctrl, pmu_cpu_global_ctrl(pc) | pmu_idx_bit((int)x));
	struct cost_row rows[20], cpuid_row = { 0 };
	for (unsigned k = 0; k < n; k++) {
		rows[k] = time_op(&ops[k], base.med);
		if (k == 1)
			cpuid_row = rows[k];
	}
	pmu_hw_wrmsr(pmu_evtsel_msr(c, x), 0);
	pmu_hw_wrmsr(pmu_ctr_write_msr(c, x), 0);
	if (c->global_ctrl)
		pmu_hw_wrmsr(c->global_ctrl, pmu_cpu_global_ctrl(pc));

	diag("cost: cpu%u empty RDTSC pair median %lu TSC ticks, subtracted from every row", this_cpu()->cpu,
	     base.med);
	for (unsigned k = 0; k < n; k++) {
		print_row(&rows[k], cpuid_row.med);
		check(rows[k].faults == 0, "%s: %u of %u samples faulted", rows[k].name, rows[k].faults,
		      rows[k].n);
	}
	/* rows[0..5]: rdtsc, cpuid, rdpmc, rdmsr counter, wrmsr counter, rdmsr event select */
	struct vpmu_costs vc = { rows[0].med, rows[1].med, rows[2].med,
				 rows[3].med, rows[5].med, c->hypervisor };
	diag("vpmu: cpu%u %s (RDPMC %lu, counter RDMSR %lu, event-select RDMSR %lu TSC ticks; CPUID %lu, RDTSC %lu)",
	     this_cpu()->cpu, vpmu_model_name(vpmu_model_of(&vc)), vc.rdpmc, vc.rdmsr_counter,
	     vc.rdmsr_evtsel, vc.cpuid, vc.rdtsc);
	struct cost_row pmi = pmi_latency(x, base.med);
	if (pmi.n || pmi.faults) {
		print_row(&pmi, cpuid_row.med);
		check(pmi.faults == 0, "PMI latency: %u of %u runs saw no PMI within %u us", pmi.faults,
		      COST_PMI_SAMPLES, COST_PMI_WAIT_US);
	}
}
