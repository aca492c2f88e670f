/* Shared pieces of the PMU hardware checks: lazy per-CPU init, SKIP
 * reasons, bracketed measurement and workload-derived bounds. */
#include "tests/pmu_common.h"

#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "arch/x86/smp.h"
#include "pmu/bracket.h"
#include "pmu/kernel/pmi_lvt.h"
#include "pmu/loops.h"
#include "pmu/pmu_hw.h"
#include "tests/ktest.h"

/* Lines the memory walk touches; flushed before each measurement so the
 * loads miss in every cache level. */
static uint8_t pmu_test_mem[PMU_TEST_MEM_LINES * PMU_MEMLOOP_STRIDE] __attribute__((aligned(64)));

static void init_here(void *arg)
{
	(void)arg;
	pmu_cpu_ensure();
}

void pmu_test_init_cpu(unsigned cpu)
{
	struct pmu_cpu *pc = pmu_cpu_of(cpu);

	/* A call slot does not serve itself while it runs the test: the
	 * test's own CPU initialises in place. */
	if (pc && !pc->initialised) {
		if (cpu == smp_this_cpu())
			init_here(NULL);
		else
			on_cpu(cpu, init_here, NULL);
	}
}

uint32_t pmu_test_free_gp(void)
{
	struct pmu_cpu *pc = pmu_cpu_ensure();
	return pc->caps.gp_mask & ~pc->gp_reserved & ~pc->gp_used;
}

uint32_t pmu_test_free_fixed(void)
{
	struct pmu_cpu *pc = pmu_cpu_ensure();
	return pc->caps.fixed_mask & ~pc->fixed_reserved & ~pc->fixed_used;
}

const char *pmu_needs_counting(void)
{
	/* Normally boot ran pmu_init_all; if not, this CPU initialises now
	 * with the same options, so the checks still run. */
	if (!pmu_cpu_ensure())
		return "CPU index beyond PMU_MAX_CPUS";
	return pmu_skip_reason();
}

const char *pmu_needs_global_ctrl(void)
{
	const char *why = pmu_needs_counting();
	if (why)
		return why;
	if (!pmu_caps()->global_ctrl && pmu_caps()->no_global_why)
		return pmu_caps()->no_global_why;
	if (!pmu_caps()->global_ctrl)
		return ktest_reason("architectural PMU v%u has no IA32_PERF_GLOBAL_CTRL (needs v2)",
				    pmu_caps()->version);
	return NULL;
}

const char *pmu_needs_fixed(void)
{
	const char *why = pmu_needs_counting();
	/* The precise reason first: "AMD has no fixed counters", not "no GLOBAL_CTRL". */
	if (!why && !pmu_caps()->fixed_mask && pmu_caps()->no_fixed_why)
		return pmu_caps()->no_fixed_why;
	why = pmu_needs_global_ctrl();
	if (why)
		return why;
	if (!pmu_caps()->fixed_mask)
		return ktest_reason("no fixed counters (CPUID.0AH: EDX[4:0]=%u, ECX=%#x)",
				    pmu_caps()->num_fixed, pmu_caps()->leaf_0a.ecx);
	return NULL;
}

const char *pmu_needs_pmi(void)
{
	/* Without a global status register (Intel v1, AMD before PerfMonV2)
	 * the handler infers overflows from the counters (pmu/pmi.c), as
	 * Linux does: PMIs still come from the INT bit. */
	const char *why = pmu_needs_counting();
	char buf[PMU_REASON_LEN];

	if (why)
		return why;
	if (pmi_check_delivery(buf, sizeof(buf)))
		return ktest_reason("%s", buf);
	pmu_pmi_set_ring(NULL, 0);
	pmu_pmi_set_observer(NULL, NULL);
	return NULL;
}

void pmu_test_event(struct pmu_event *ev, enum pmu_arch_event e)
{
	struct pmu_event_attr a;

	pmu_attr_arch(&a, e);
	pmu_event_init(ev, &a, pmu_arch_events[e].name);
}

unsigned pmu_test_first_absent(uint32_t mask, unsigned limit)
{
	for (unsigned i = 0; i < limit; i++)
		if (!((mask >> i) & 1))
			return i;
	return limit;
}

static void flush_mem(void)
{
	for (uint64_t i = 0; i < PMU_TEST_MEM_LINES; i++)
		__asm__ volatile("clflush %0" : "+m"(pmu_test_mem[i * PMU_MEMLOOP_STRIDE]));
	__asm__ volatile("mfence" ::: "memory");
}

bool pmu_test_measure(struct pmu_event *const *evs, unsigned n, bool mem, uint64_t *tsc)
{
	struct pmu_bracket_regs br;
	uint64_t t0, t1;
	bool irq;
	int err;

	if ((err = pmu_events_arm(evs, n, &br)) != PMU_OK) {
		check(false, "arming %u event(s) for a bracket failed (%d): %s", n, err, evs[0]->reason);
		return false;
	}
	if (mem)
		flush_mem();
	/* Nothing but the bracket may run in the window: no interrupt. */
	irq = irq_save();
	t0 = rdtsc();
	if (mem)
		pmu_bracket_memloop(&br, pmu_test_mem, PMU_TEST_MEM_LINES);
	else
		pmu_bracket_loop(&br, PMU_TEST_LOOPS);
	t1 = rdtsc();
	irq_restore(irq);
	pmu_events_disarm(evs, n);
	if (tsc)
		*tsc = t1 - t0;
	return true;
}

uint64_t pmu_test_expected_insns(bool mem)
{
	return mem ? PMU_BRACKET_MEMLOOP_INSNS(PMU_TEST_MEM_LINES) : PMU_BRACKET_LOOP_INSNS(PMU_TEST_LOOPS);
}

uint64_t pmu_test_expected_branches(bool mem)
{
	return mem ? PMU_MEMLOOP_BRANCHES_PER_ITER * PMU_TEST_MEM_LINES + PMU_BRACKET_OVERHEAD_BRANCHES
		   : PMU_BRACKET_LOOP_BRANCHES(PMU_TEST_LOOPS);
}

void pmu_test_check_count(const struct pmu_event *ev, bool mem, uint64_t tsc)
{
	char where[24];
	uint64_t v = pmu_event_count(ev);
	uint64_t iters = mem ? PMU_TEST_MEM_LINES : PMU_TEST_LOOPS;
	uint64_t insns = pmu_test_expected_insns(mem), br = pmu_test_expected_branches(mem);
	/* Each iteration's DEC depends on the previous one: at least one core
	 * cycle per iteration. 200 cycles per iteration is far beyond any
	 * core running this loop (a memory walk miss costs up to a few
	 * hundred); the limit only catches garbage. */
	uint64_t cyc_min = iters, cyc_max = 400 * iters + 100000;

	/* Exact where the backend says counts are (Intel: bracket.h's
	 * overhead is known); else a range whose low end is what surely
	 * retires in the window (workload and the bracket's MOVs, not its
	 * WRMSRs) and whose width is the backend's slack. */
	const struct pmu_caps *c = pmu_caps();
	uint64_t k = c ? c->retired_slack : 0;
	uint64_t insns_lo = k ? insns - PMU_BRACKET_COUNTED_WRMSRS : insns;

	pmu_idx_name(c, ev->hw.idx, where, sizeof(where));
	switch (ev->attr.arch) {
	case PMU_ARCH_INSTRUCTIONS:
		if (!k) {
			check(v == insns,
			      "%s on %s: expected exactly %lu instructions (%lu iterations x %u + %u bracket), saw %lu",
			      ev->name, where, insns, iters,
			      mem ? PMU_MEMLOOP_INSNS_PER_ITER : PMU_LOOP_INSNS_PER_ITER,
			      PMU_BRACKET_OVERHEAD_INSNS, v);
			break;
		}
		diag("%s on %s: %lu instructions (workload + bracket MOVs %lu, +%ld)", ev->name, where, v,
		     insns_lo, (long)(v - insns_lo));
		check(v >= insns_lo && v <= insns_lo + k,
		      "%s on %s: expected %lu..%lu instructions (%lu iterations x %u + %u MOVs, + up to %lu: %s), saw %lu",
		      ev->name, where, insns_lo, insns_lo + k, iters,
		      mem ? PMU_MEMLOOP_INSNS_PER_ITER : PMU_LOOP_INSNS_PER_ITER, PMU_BRACKET_EXTRA_INSNS, k,
		      c->retired_slack_why, v);
		break;
	case PMU_ARCH_BRANCHES:
		if (!k) {
			check(v == br,
			      "%s on %s: expected exactly %lu retired branches (one JNZ per iteration), saw %lu",
			      ev->name, where, br, v);
			break;
		}
		diag("%s on %s: %lu retired branches (workload %lu, +%ld)", ev->name, where, v, br,
		     (long)(v - br));
		check(v >= br && v <= br + k,
		      "%s on %s: expected %lu..%lu retired branches (one JNZ per iteration, + up to %lu: %s), saw %lu",
		      ev->name, where, br, br + k, k, c->retired_slack_why, v);
		break;
	case PMU_ARCH_BRANCH_MISSES:
		check(v <= br,
		      "%s on %s: expected at most %lu mispredicted branches (the branches retired), saw %lu",
		      ev->name, where, br, v);
		break;
	case PMU_ARCH_CYCLES:
		check(v >= cyc_min && v <= cyc_max,
		      "%s on %s: expected %lu..%lu core cycles (>= 1 per dependent iteration), saw %lu",
		      ev->name, where, cyc_min, cyc_max, v);
		break;
	case PMU_ARCH_REF_CYCLES:
		/* Reference cycles tick at the TSC rate (FIXED_CTR2) or slower
		 * (bus/crystal clock on a GP counter); the TSC window encloses
		 * the counting window. */
		check(v >= 1 && v <= tsc + 1000,
		      "%s on %s: expected 1..%lu reference cycles (TSC ticks around the bracket + 1000), saw %lu",
		      ev->name, where, tsc + 1000, v);
		break;
	case PMU_ARCH_TOPDOWN_SLOTS:
		/* At least one slot per cycle, at most 16 (widest issue known: 8). */
		check(v >= cyc_min && v <= 16 * cyc_max, "%s on %s: expected %lu..%lu slots, saw %lu",
		      ev->name, where, cyc_min, 16 * cyc_max, v);
		break;
	case PMU_ARCH_LLC_REFERENCES:
	case PMU_ARCH_LLC_MISSES:
		/* The walk touches iters freshly flushed lines: at least one must
		 * come from memory; prefetchers may add up to a few per line. */
		if (mem)
			check(v >= 1 && v <= 4 * iters + 1000,
			      "%s on %s: expected 1..%lu over %lu flushed lines, saw %lu", ev->name, where,
			      4 * iters + 1000, iters, v);
		else
			check(v <= 4 * iters + 1000, "%s on %s: expected at most %lu, saw %lu", ev->name,
			      where, 4 * iters + 1000, v);
		break;
	default:
		/* No bound is known: report the figure, claim nothing. */
		diag("%s on %s: %lu (no bound derived for this event)", ev->name, where, v);
		break;
	}
}

void pmu_test_diag_regs(void)
{
	const struct pmu_caps *c = pmu_caps();
	uint64_t v;

	if (!c || !c->version)
		return;
	for (unsigned x = 0; x < PMU_MAX_GP; x++)
		if (pmu_has_gp(c, x) && pmu_hw_rdmsr(pmu_evtsel_msr(c, x), &v) == 0 && v)
			diag("%s%u = %#lx", pmu_evtsel_name(c), x, v);
	if (c->fixed_ctrl && pmu_hw_rdmsr(c->fixed_ctrl, &v) == 0)
		diag("IA32_FIXED_CTR_CTRL = %#lx", v);
	if (c->global_ctrl && pmu_hw_rdmsr(c->global_ctrl, &v) == 0)
		diag("%s = %#lx", pmu_global_ctrl_name(c), v);
	if (c->global_status && pmu_hw_rdmsr(c->global_status, &v) == 0)
		diag("IA32_PERF_GLOBAL_STATUS = %#lx", v);
}
