/* Host tests of events on counters (pmu/event.c with pmu/intel/core.c) against
 * the model: placement and refusal, the exact MSR writes of a request,
 * counts, legacy vs full-width writes, groups, brackets, the race-safe read. */
#include "arch/x86/msr.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"
#include "tests/host/hosttest.h"
#include "tests/host/pmu_model.h"

static void boot(enum model_profile p, bool full_width)
{
	model_init(p, full_width);
	pmu_init_all(&model_probe_opts, model_run_on);
	model_set_cpu(0);
	model_trace_clear();
}

static struct model_cpu_config cfg_of(enum model_profile p, bool fw)
{
	model_init(p, fw);
	return *model_config(0);
}

static void arch_ev(struct pmu_event *ev, enum pmu_arch_event e)
{
	struct pmu_event_attr a;
	pmu_attr_arch(&a, e);
	pmu_event_init(ev, &a, pmu_arch_events[e].name);
}

static void raw_ev(struct pmu_event *ev, uint8_t event, uint8_t umask, const char *name)
{
	struct pmu_event_attr a;
	pmu_attr_raw(&a, event, umask);
	pmu_event_init(ev, &a, name);
}

HT_TEST(fixed_counter_preferred_and_hwc_filled)
{
	struct pmu_event ins, cyc, ref, br;
	boot(MODEL_V4, true);
	arch_ev(&ins, PMU_ARCH_INSTRUCTIONS);
	arch_ev(&cyc, PMU_ARCH_CYCLES);
	arch_ev(&ref, PMU_ARCH_REF_CYCLES);
	arch_ev(&br, PMU_ARCH_BRANCHES);
	HT_CHECK_EQ(pmu_event_add(&ins), PMU_OK);
	HT_CHECK_EQ(pmu_event_add(&cyc), PMU_OK);
	HT_CHECK_EQ(pmu_event_add(&ref), PMU_OK);
	HT_CHECK_EQ(pmu_event_add(&br), PMU_OK);
	HT_CHECK_EQ(ins.hw.idx, 32);
	HT_CHECK_EQ(cyc.hw.idx, 33);
	HT_CHECK_EQ(ref.hw.idx, 34);
	HT_CHECK_EQ(br.hw.idx, 0);
	HT_CHECK_EQ(ins.hw.config_base, MSR_IA32_FIXED_CTR_CTRL);
	HT_CHECK_EQ(ins.hw.event_base, MSR_IA32_FIXED_CTR0);
	HT_CHECK_EQ(ins.hw.write_base, MSR_IA32_FIXED_CTR0);
	HT_CHECK_EQ(cyc.hw.rdpmc_idx, (1u << 30) | 1);
	HT_CHECK_EQ(ins.hw.config, 0x3);
	HT_CHECK_EQ(ins.hw.width, 48);
	HT_CHECK_EQ(br.hw.config_base, MSR_IA32_PERFEVTSEL0);
	HT_CHECK_EQ(br.hw.event_base, MSR_IA32_PMC0);
	HT_CHECK_EQ(br.hw.write_base, MSR_IA32_A_PMC0);
	HT_CHECK_EQ(br.hw.rdpmc_idx, 0);
	HT_CHECK_EQ(br.hw.config, 0x300c4);
	HT_CHECK_EQ(model_trace_len(), 0); /* allocation writes nothing */
	struct pmu_event *all[] = { &ins, &cyc, &ref, &br };
	pmu_events_del(all, 4);
	HT_CHECK_EQ(pmu_this_cpu()->gp_used, 0);
	HT_CHECK_EQ(pmu_this_cpu()->fixed_used, 0);
	HT_CHECK_EQ(ins.hw.idx, -1);
}

HT_TEST(fixed_taken_falls_back_to_gp)
{
	struct pmu_event a, b;
	boot(MODEL_V2, false);
	arch_ev(&a, PMU_ARCH_INSTRUCTIONS);
	arch_ev(&b, PMU_ARCH_INSTRUCTIONS);
	HT_CHECK_EQ(pmu_event_add(&a), PMU_OK);
	HT_CHECK_EQ(pmu_event_add(&b), PMU_OK);
	HT_CHECK_EQ(a.hw.idx, 32);
	HT_CHECK_EQ(b.hw.idx, 0);
	HT_CHECK_EQ(b.hw.write_base, MSR_IA32_PMC0); /* no full-width on v2 */
	pmu_event_del(&a);
	pmu_event_del(&b);
}

/* A fixed counter narrower than PMU_MIN_COUNTER_WIDTH (a VMM's CPUID.0AH:
 * EDX[12:5]) is never counted with: its event goes to a GP counter, and
 * asking for it by index is refused naming the width. */
HT_TEST(narrow_fixed_counters_refused)
{
	struct pmu_event a, b;
	struct model_cpu_config c = cfg_of(MODEL_V2, false);

	c.fixed_width = 1;
	model_boot_custom(&c, 1);
	arch_ev(&a, PMU_ARCH_INSTRUCTIONS);
	HT_CHECK_EQ(pmu_event_add(&a), PMU_OK);
	HT_CHECK_EQ(a.hw.idx, 0);
	arch_ev(&b, PMU_ARCH_CYCLES);
	HT_CHECK_EQ(pmu_event_add_idx(&b, PMU_IDX_FIXED(1)), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(b.reason, "cycles on IA32_FIXED_CTR1: IA32_FIXED_CTR1 is 1-bit (CPUID.0AH:EDX[12:5]), "
			       "narrower than the 32 bits counted with");
	pmu_event_del(&a);
}

HT_TEST(v1_and_v5_gap_placement)
{
	struct pmu_event a, s, r;
	boot(MODEL_V1, false);
	arch_ev(&a, PMU_ARCH_INSTRUCTIONS);
	HT_CHECK_EQ(pmu_event_add(&a), PMU_OK);
	HT_CHECK_EQ(a.hw.idx, 0);
	pmu_event_del(&a);

	boot(MODEL_V5_GAP, true);
	arch_ev(&s, PMU_ARCH_TOPDOWN_SLOTS);
	arch_ev(&r, PMU_ARCH_REF_CYCLES);
	HT_CHECK_EQ(pmu_event_add(&s), PMU_OK);
	HT_CHECK_EQ(pmu_event_add(&r), PMU_OK);
	HT_CHECK_EQ(s.hw.idx, 35); /* FIXED_CTR3 exists (ECX bit 3) */
	HT_CHECK_EQ(r.hw.idx, 0);  /* FIXED_CTR2 does not: a GP counter */
	pmu_event_del(&s);
	pmu_event_del(&r);
}

HT_TEST(refusal_when_full_and_group_all_or_nothing)
{
	struct pmu_event e[3];
	boot(MODEL_V2, false);
	for (int i = 0; i < 3; i++)
		arch_ev(&e[i], PMU_ARCH_BRANCHES);
	HT_CHECK_EQ(pmu_event_add(&e[0]), PMU_OK);
	HT_CHECK_EQ(pmu_event_add(&e[1]), PMU_OK);
	HT_CHECK_EQ(pmu_event_add(&e[2]), PMU_E_BUSY);
	HT_CHECK_STR(e[2].reason,
		     "branches: no free counter: GP counters 0x3 are taken (ours 0x3, in use at boot 0x0)");
	HT_CHECK_EQ(e[2].hw.idx, -1);
	pmu_event_del(&e[0]);
	pmu_event_del(&e[1]);

	/* The same three as one group: refused, nothing left allocated. */
	struct pmu_event *g[] = { &e[0], &e[1], &e[2] };
	HT_CHECK_EQ(pmu_events_add(g, 3), PMU_E_BUSY);
	HT_CHECK_EQ(pmu_this_cpu()->gp_used, 0);
	HT_CHECK_EQ(e[0].hw.idx, -1);
	HT_CHECK(strstr(e[0].reason, "no free counter for the whole group") != NULL, "reason: %s",
		 e[0].reason);
}

HT_TEST(constraints_skylake_prec_dist_and_mem)
{
	struct pmu_event pd, pd2, m[5];
	struct model_cpu_config c = cfg_of(MODEL_V4, true);
	c.num_gp = 8; /* HT off: 8 counters, MEM_* still on 0-3 */
	model_boot_custom(&c, 1);
	raw_ev(&pd, 0xc0, 0x01, "INST_RETIRED.PREC_DIST");
	raw_ev(&pd2, 0xc0, 0x01, "INST_RETIRED.PREC_DIST#2");
	HT_CHECK_EQ(pmu_event_add(&pd), PMU_OK);
	HT_CHECK_EQ(pd.hw.idx, 1);
	HT_CHECK_EQ(pmu_event_add(&pd2), PMU_E_BUSY);
	HT_CHECK(strstr(pd2.reason, "GP counters 0x2 (INST_RETIRED.PREC_DIST (PMC1 only)) are taken") != NULL,
		 "reason: %s", pd2.reason);
	HT_CHECK_EQ(pmu_event_add_idx(&pd2, 0), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(pd2.reason,
		     "INST_RETIRED.PREC_DIST#2: IA32_PMC0 not allowed (INST_RETIRED.PREC_DIST (PMC1 only))");
	pmu_event_del(&pd);

	/* A group whose only arrangement puts PREC_DIST on PMC1 and the three
	 * MEM_* events on 0, 2, 3 (most constrained placed first). */
	raw_ev(&m[0], 0xd0, 0x81, "MEM_INST_RETIRED.ALL_LOADS");
	raw_ev(&m[1], 0xd1, 0x01, "MEM_LOAD_RETIRED.L1_HIT");
	raw_ev(&m[2], 0xd2, 0x01, "MEM_LOAD_L3_HIT_RETIRED.XSNP_MISS");
	struct pmu_event *g[] = { &m[0], &m[1], &m[2], &pd };
	HT_CHECK_EQ(pmu_events_add(g, 4), PMU_OK);
	HT_CHECK_EQ(pd.hw.idx, 1);
	HT_CHECK_EQ(m[0].hw.idx, 0);
	HT_CHECK_EQ(m[1].hw.idx, 2);
	HT_CHECK_EQ(m[2].hw.idx, 3);
	pmu_events_del(g, 4);

	/* Five MEM_* events: PMC4-7 are free but not allowed. */
	for (int i = 0; i < 5; i++)
		raw_ev(&m[i], 0xd0, 0x81, "MEM_INST_RETIRED.ALL_LOADS");
	struct pmu_event *g5[] = { &m[0], &m[1], &m[2], &m[3], &m[4] };
	HT_CHECK_EQ(pmu_events_add(g5, 5), PMU_E_BUSY);
	HT_CHECK_EQ(pmu_this_cpu()->gp_used, 0);
	HT_CHECK(strstr(m[0].reason, "MEM_INST_RETIRED.* (PMC0-3)") != NULL, "reason: %s", m[0].reason);
	struct pmu_event *g4[] = { &m[0], &m[1], &m[2], &m[3] };
	HT_CHECK_EQ(pmu_events_add(g4, 4), PMU_OK);
	pmu_events_del(g4, 4);
}

HT_TEST(refusals_with_reasons)
{
	struct pmu_event e;
	struct pmu_event_attr a;
	struct model_cpu_config c = cfg_of(MODEL_V2, false);
	c.ebx_unavail = 1u << 5 | 1u << 1; /* branches and instructions unavailable */
	model_boot_custom(&c, 1);
	arch_ev(&e, PMU_ARCH_BRANCHES);
	HT_CHECK_EQ(pmu_event_add(&e), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(e.reason, "branches (event 0xc4 umask 0x00): no counter can count it on this CPU "
			       "(CPUID.0AH:EBX marks it unavailable on GP counters)");
	raw_ev(&e, 0xc4, 0x00, "r00c4");
	HT_CHECK_EQ(pmu_event_add(&e), PMU_OK); /* raw encodings are the user's call */
	pmu_event_del(&e);
	arch_ev(&e, PMU_ARCH_INSTRUCTIONS);
	HT_CHECK_EQ(pmu_event_add(&e), PMU_OK); /* the fixed counter still counts it */
	HT_CHECK_EQ(e.hw.idx, 32);
	pmu_event_del(&e);

	boot(MODEL_V2, false);
	pmu_attr_arch(&a, PMU_ARCH_BRANCHES);
	a.own_config = BIT(PERFEVTSEL_ANY_BIT);
	pmu_event_init(&e, &a, "branches:any");
	HT_CHECK_EQ(pmu_event_add(&e), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(
		e.reason,
		"branches:any: AnyThread (any) needs architectural PMU version 3 (CPUID.0AH.EAX[7:0]=2)");
	a.own_config = 0;
	a.usr = a.os = false;
	pmu_event_init(&e, &a, "branches:none");
	HT_CHECK_EQ(pmu_event_add(&e), PMU_E_INVAL);
	HT_CHECK_STR(e.reason, "branches:none: neither usr nor os set: the counter would count nothing");

	boot(MODEL_NO_PMU, false);
	arch_ev(&e, PMU_ARCH_CYCLES);
	HT_CHECK_EQ(pmu_event_add(&e), PMU_E_NOPMU);
	HT_CHECK_STR(e.reason, "no usable PMU on CPU 0: no architectural PMU (CPUID.0AH.EAX[7:0]=0)");
}

/* The backends' own terms (pmu_ops.terms) from the string to the event
 * select: Intel's any lands on PERFEVTSEL bit 21 and on the fixed
 * counter's AnyThread bit (SDM vol. 3B, "Architectural Performance
 * Monitoring Version 3"); AMD's host_only is refused on Intel. */
HT_TEST(backend_terms_reach_the_event_select)
{
	struct pmu_event_attr a;
	struct pmu_event e;
	char err[128];

	boot(MODEL_V4, true);
	HT_CHECK_EQ(pmu_event_parse("cpu/event=0xc4,any/", &a, err, sizeof(err)), PMU_OK);
	pmu_event_init(&e, &a, "branches:any");
	HT_CHECK_EQ(pmu_event_add(&e), PMU_OK);
	HT_CHECK(e.hw.idx >= 0 && e.hw.idx < 32, "on a GP counter: %d", e.hw.idx);
	HT_CHECK_EQ(e.hw.config, 0x2300c4ull); /* USR, OS, AnyThread; no EN */
	pmu_event_del(&e);
	HT_CHECK_EQ(pmu_event_parse("cpu/event=0xc0,any/", &a, err, sizeof(err)), PMU_OK);
	pmu_event_init(&e, &a, "instructions:any");
	HT_CHECK_EQ(pmu_event_add(&e), PMU_OK);
	HT_CHECK_EQ(e.hw.idx, 32);
	HT_CHECK_EQ(e.hw.config, BIT(FIXED_CTR_CTRL_ANY_BIT) | FIXED_CTR_CTRL_EN_MASK);
	pmu_event_del(&e);
	HT_CHECK_EQ(pmu_event_parse("cpu/event=0xc4,host_only/", &a, err, sizeof(err)), PMU_OK);
	pmu_event_init(&e, &a, "branches:host");
	HT_CHECK_EQ(pmu_event_add(&e), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(
		e.reason,
		"branches:host: host_only/guest_only are AMD PerfEvtSel bits 41/40 (APM vol. 2, 13.2); Intel has none");
}

HT_TEST(add_idx_checks)
{
	struct pmu_event e, f;
	boot(MODEL_V5_GAP, true);
	arch_ev(&e, PMU_ARCH_INSTRUCTIONS);
	HT_CHECK_EQ(pmu_event_add_idx(&e, 5), PMU_OK); /* forced onto a GP counter */
	HT_CHECK_EQ(e.hw.idx, 5);
	HT_CHECK_EQ(e.hw.config_base, MSR_IA32_PERFEVTSEL0 + 5);
	arch_ev(&f, PMU_ARCH_INSTRUCTIONS);
	HT_CHECK_EQ(pmu_event_add_idx(&f, 5), PMU_E_BUSY);
	HT_CHECK_STR(f.reason, "instructions: IA32_PMC5 is taken (by another event)");
	HT_CHECK_EQ(pmu_event_add_idx(&f, PMU_IDX_FIXED(1)), PMU_E_INVAL);
	HT_CHECK_STR(
		f.reason,
		"instructions on IA32_FIXED_CTR1: event 0xc0 umask 0x00 is not what IA32_FIXED_CTR1 counts");
	arch_ev(&f, PMU_ARCH_REF_CYCLES);
	HT_CHECK_EQ(pmu_event_add_idx(&f, PMU_IDX_FIXED(2)), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(f.reason, "ref-cycles on IA32_FIXED_CTR2: fixed counter 2 does not exist "
			       "(CPUID.0AH: EDX[4:0]=2, ECX=0xb, mask 0xb)");
	HT_CHECK_EQ(pmu_event_add_idx(&f, 8), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(f.reason, "ref-cycles: IA32_PMC8 does not exist (GP mask 0xff)");
	HT_CHECK_EQ(pmu_event_add_idx(&f, 99), PMU_E_INVAL);
	HT_CHECK_EQ(pmu_event_add_idx(&e, 6), PMU_E_STATE);
	pmu_event_del(&e);
}

HT_TEST(enable_disable_exact_trace_and_counts_v4)
{
	struct pmu_event ins, cyc, br, llc;
	boot(MODEL_V4, true);
	arch_ev(&ins, PMU_ARCH_INSTRUCTIONS);
	arch_ev(&cyc, PMU_ARCH_CYCLES);
	arch_ev(&br, PMU_ARCH_BRANCHES);
	arch_ev(&llc, PMU_ARCH_LLC_MISSES);
	struct pmu_event *g[] = { &ins, &cyc, &br, &llc };
	HT_CHECK_EQ(pmu_events_add(g, 4), PMU_OK);
	HT_CHECK_EQ(pmu_events_enable(g, 4), PMU_OK);
	/* Counters zeroed, selects written with EN, FIXED_CTR_CTRL once,
	 * GLOBAL_CTRL last, once: the group starts in one write. */
	HT_CHECK_STR(model_trace_text(),
		     "0x309<-0 0x30a<-0 0x4c1<-0 0x186<-0x4300c4 0x4c2<-0 0x187<-0x43412e "
		     "0x38d<-0x33 0x38f<-0x300000003");
	struct model_work w = { .instructions = 3000, .cycles = 2000, .branches = 1000, .llc_misses = 7 };
	model_tick(&w);
	HT_CHECK_EQ(pmu_event_update(&ins), 3000); /* read while running */
	model_tick(&w);
	model_trace_clear();
	HT_CHECK_EQ(pmu_events_disable(g, 4), PMU_OK);
	HT_CHECK_STR(model_trace_text(), "0x38f<-0 0x186<-0x300c4 0x187<-0x3412e 0x38d<-0");
	HT_CHECK_EQ(pmu_event_count(&ins), 6000);
	HT_CHECK_EQ(pmu_event_count(&cyc), 4000);
	HT_CHECK_EQ(pmu_event_count(&br), 2000);
	HT_CHECK_EQ(pmu_event_count(&llc), 14);
	model_tick(&w); /* stopped: nothing more */
	HT_CHECK_EQ(pmu_event_update(&br), 2000);
	model_trace_clear();
	pmu_events_del(g, 4);
	HT_CHECK_STR(model_trace_text(), "0x186<-0 0x187<-0"); /* selects cleared: INUSE released */
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PERF_GLOBAL_INUSE), 0);
}

HT_TEST(enable_v1_per_counter_en)
{
	struct pmu_event a, b;
	boot(MODEL_V1, false);
	arch_ev(&a, PMU_ARCH_INSTRUCTIONS);
	arch_ev(&b, PMU_ARCH_BRANCHES);
	struct pmu_event *g[] = { &a, &b };
	HT_CHECK_EQ(pmu_events_add(g, 2), PMU_OK);
	HT_CHECK_EQ(pmu_events_enable(g, 2), PMU_OK);
	HT_CHECK_STR(model_trace_text(), "0xc1<-0 0x186<-0x4300c0 0xc2<-0 0x187<-0x4300c4");
	model_tick_loop(50);
	model_trace_clear();
	HT_CHECK_EQ(pmu_events_disable(g, 2), PMU_OK);
	HT_CHECK_STR(model_trace_text(), "0x186<-0x300c0 0x187<-0x300c4");
	HT_CHECK_EQ(pmu_event_count(&a), 150);
	HT_CHECK_EQ(pmu_event_count(&b), 50);
	pmu_events_del(g, 2);
}

HT_TEST(boot_owner_bits_kept_in_global_ctrl)
{
	struct pmu_event e;
	model_init(MODEL_V4, false);
	model_poke(0, MSR_IA32_PERFEVTSEL0 + 1, 0x43003c);
	pmu_cpu_init(&model_probe_opts);
	model_trace_clear();
	arch_ev(&e, PMU_ARCH_BRANCHES);
	HT_CHECK_EQ(pmu_event_add(&e), PMU_OK);
	HT_CHECK_EQ(e.hw.idx, 0);
	HT_CHECK_EQ(pmu_event_enable(&e), PMU_OK);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PERF_GLOBAL_CTRL), 0x3); /* PMC1's owner keeps its bit */
	HT_CHECK_EQ(pmu_event_disable(&e), PMU_OK);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PERF_GLOBAL_CTRL), 0x2);
	pmu_event_del(&e);
}

HT_TEST(legacy_vs_full_width_counter_writes)
{
	struct pmu_event e, f;
	boot(MODEL_V4, false);
	arch_ev(&e, PMU_ARCH_BRANCHES);
	HT_CHECK_EQ(pmu_event_add(&e), PMU_OK);
	/* -2^31 is representable: low half 0x80000000 sign-extends. */
	HT_CHECK_EQ(pmu_event_write_counter(&e, 0xffff80000000ull), PMU_OK);
	HT_CHECK_STR(model_trace_text(), "0xc1<-0x80000000");
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PMC0), 0xffff80000000ull);
	HT_CHECK_EQ(pmu_event_write_counter(&e, 0x7fffffffull), PMU_OK);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PMC0), 0x7fffffffull);
	HT_CHECK_EQ(pmu_event_write_counter(&e, 0x123456789aull), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(e.reason, "branches: 0x123456789a cannot be written through IA32_PMC0: legacy writes "
			       "sign-extend bit 31 (IA32_PERF_CAPABILITIES[13]=0)");
	HT_CHECK_EQ(pmu_event_write_counter(&e, 0x80000000ull), PMU_E_UNSUPPORTED);
	pmu_event_del(&e);

	boot(MODEL_V4, true);
	arch_ev(&e, PMU_ARCH_BRANCHES);
	arch_ev(&f, PMU_ARCH_INSTRUCTIONS);
	HT_CHECK_EQ(pmu_event_add(&e), PMU_OK);
	HT_CHECK_EQ(pmu_event_add(&f), PMU_OK);
	model_trace_clear();
	HT_CHECK_EQ(pmu_event_write_counter(&e, 0x123456789aull), PMU_OK);
	HT_CHECK_EQ(pmu_event_write_counter(&e, 0x80000000ull), PMU_OK);
	HT_CHECK_EQ(pmu_event_write_counter(&f, 0xfedcba987654ull), PMU_OK); /* fixed: full width */
	HT_CHECK_STR(model_trace_text(), "0x4c1<-0x123456789a 0x4c1<-0x80000000 0x309<-0xfedcba987654");
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PMC0), 0x80000000ull);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_FIXED_CTR0), 0xfedcba987654ull);
	/* Values are cut to the width before they are written. */
	HT_CHECK_EQ(pmu_event_write_counter(&e, ~0ull), PMU_OK);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PMC0), 0xffffffffffffull);
	pmu_event_del(&e);
	pmu_event_del(&f);
}

HT_TEST(period_preload_and_wrap_counts)
{
	for (int fw = 0; fw < 2; fw++) {
		struct pmu_event e;
		struct pmu_event_attr a;
		boot(MODEL_V4, fw);
		pmu_attr_arch(&a, PMU_ARCH_BRANCHES);
		a.period = 100;
		pmu_event_init(&e, &a, "branches/period=100");
		HT_CHECK_EQ(pmu_event_add(&e), PMU_OK);
		HT_CHECK_EQ(pmu_event_enable(&e), PMU_OK);
		HT_CHECK_STR(model_trace_text(), fw ? "0x4c1<-0xffffffffff9c 0x186<-0x4300c4 0x38f<-0x1"
						    : "0xc1<-0xffffff9c 0x186<-0x4300c4 0x38f<-0x1");
		HT_CHECK_EQ(model_peek(0, MSR_IA32_PMC0), 0xffffffffff9cull);
		struct model_work w = { .branches = 40 };
		model_tick(&w);
		HT_CHECK_EQ(pmu_event_update(&e), 40);
		HT_CHECK_EQ(model_peek(0, MSR_IA32_PERF_GLOBAL_STATUS), 0);
		w.branches = 70; /* crosses -0: overflow */
		model_tick(&w);
		HT_CHECK_EQ(pmu_event_update(&e), 110);
		HT_CHECK_EQ(model_peek(0, MSR_IA32_PERF_GLOBAL_STATUS), 1);
		HT_CHECK_EQ(model_peek(0, MSR_IA32_PMC0), 10);
		pmu_event_del(&e);
	}
}

/* The PMI race: an overflow handler updates the event between the read's
 * RDPMC and its compare-and-exchange. Every event is counted once. */
static struct pmu_event *race_ev;
static unsigned race_hits;
static void race_pmi(void *arg)
{
	(void)arg;
	race_hits++;
	model_tick_loop(10); /* 30 more instructions after the sampled value */
	pmu_event_update(race_ev);
}

HT_TEST(read_is_safe_against_racing_pmi_update)
{
	struct pmu_event e;
	boot(MODEL_V4, true);
	arch_ev(&e, PMU_ARCH_INSTRUCTIONS);
	HT_CHECK_EQ(pmu_event_add_idx(&e, 2), PMU_OK);
	HT_CHECK_EQ(pmu_event_enable(&e), PMU_OK);
	race_ev = &e;
	race_hits = 0;
	uint64_t expect = 0;
	for (int i = 0; i < 50; i++) {
		model_tick_loop(100);
		expect += 300;
		model_set_rdpmc_hook(race_pmi, NULL);
		pmu_event_update(&e);
		expect += 30;
		HT_CHECK(pmu_event_count(&e) == expect, "round %d: count %llu, expected %llu", i,
			 (unsigned long long)pmu_event_count(&e), (unsigned long long)expect);
	}
	HT_CHECK_EQ(race_hits, 50);
	HT_CHECK_EQ(pmu_event_disable(&e), PMU_OK);
	HT_CHECK_EQ(pmu_event_count(&e), expect);
	pmu_event_del(&e);
}

HT_TEST(read_near_wrap_with_small_width)
{
	/* A 32-bit wide counter read across its wrap many times. */
	struct pmu_event e;
	struct model_cpu_config c = cfg_of(MODEL_V4, true);
	c.gp_width = 32;
	model_boot_custom(&c, 1);
	arch_ev(&e, PMU_ARCH_BRANCHES);
	HT_CHECK_EQ(pmu_event_add(&e), PMU_OK);
	HT_CHECK_EQ(pmu_event_enable(&e), PMU_OK);
	HT_CHECK_EQ(pmu_event_write_counter(&e, 0xfffff000ull), PMU_OK);
	uint64_t total = 0;
	for (int i = 0; i < 100; i++) {
		struct model_work w = { .branches = 0x7fffff00ull };
		model_tick(&w);
		total += w.branches;
		pmu_event_update(&e);
	}
	HT_CHECK_EQ(pmu_event_count(&e), total);
	pmu_event_del(&e);
}

HT_TEST(bracket_arm_v4_and_v1)
{
	struct pmu_event ins, br;
	struct pmu_bracket_regs r;
	boot(MODEL_V4, true);
	arch_ev(&ins, PMU_ARCH_INSTRUCTIONS);
	arch_ev(&br, PMU_ARCH_BRANCHES);
	struct pmu_event *g[] = { &ins, &br };
	HT_CHECK_EQ(pmu_events_add(g, 2), PMU_OK);
	HT_CHECK_EQ(pmu_events_arm(g, 2, &r), PMU_OK);
	HT_CHECK_STR(model_trace_text(),
		     "0x309<-0 0x4c1<-0 0x186<-0x4300c4 0x38d<-0x3"); /* no GLOBAL_CTRL yet */
	HT_CHECK_EQ(r.msr, MSR_IA32_PERF_GLOBAL_CTRL);
	HT_CHECK_EQ(r.on, 0x100000001ull);
	HT_CHECK_EQ(r.off, 0);
	model_tick_loop(5); /* armed but not started: nothing */
	/* What the bracket does: on, workload, off. */
	pmu_hw_wrmsr(r.msr, r.on);
	model_tick_loop(1000);
	pmu_hw_wrmsr(r.msr, r.off);
	pmu_events_disarm(g, 2);
	HT_CHECK_EQ(pmu_event_count(&ins), 3000);
	HT_CHECK_EQ(pmu_event_count(&br), 1000);
	pmu_events_del(g, 2);

	boot(MODEL_V1, false);
	arch_ev(&ins, PMU_ARCH_INSTRUCTIONS);
	HT_CHECK_EQ(pmu_event_add(&ins), PMU_OK);
	HT_CHECK_EQ(pmu_events_arm(g, 1, &r), PMU_OK);
	HT_CHECK_EQ(r.msr, MSR_IA32_PERFEVTSEL0);
	HT_CHECK_EQ(r.on, 0x4300c0);
	HT_CHECK_EQ(r.off, 0x300c0);
	arch_ev(&br, PMU_ARCH_BRANCHES);
	HT_CHECK_EQ(pmu_event_add(&br), PMU_OK);
	HT_CHECK_EQ(pmu_events_arm(g, 2, &r), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(
		ins.reason,
		"architectural PMU v1 has no IA32_PERF_GLOBAL_CTRL: a bracket can start only one GP counter");
	pmu_events_del(g, 2);
}

HT_TEST(offcore_response_msrs)
{
	struct pmu_event a, b, c, d, e;
	struct pmu_event_attr at;
	boot(MODEL_V4, true);
	pmu_attr_raw(&at, 0xb7, 0x01);
	at.extra_config = 0x3fffc00001ull; /* DEMAND_DATA_RD.L3_MISS.ANY_RESPONSE (pmu/intel/offcore.c) */
	pmu_event_init(&a, &at, "offcore0");
	pmu_event_init(&b, &at, "offcore0-same");
	at.extra_config = 0x10001ull;
	pmu_event_init(&c, &at, "offcore0-other");
	at.event = 0xbb;
	pmu_event_init(&d, &at, "offcore1");
	at.extra_config = 0x20001ull;
	pmu_event_init(&e, &at, "offcore-third");
	HT_CHECK_EQ(pmu_event_add(&a), PMU_OK);
	HT_CHECK_EQ(pmu_event_add(&b), PMU_OK); /* same value: shares the MSR */
	HT_CHECK_EQ(pmu_event_add(&c), PMU_OK); /* RSP_0 taken by another value: moves to RSP_1 as 0xBB */
	HT_CHECK_EQ(c.hw.extra_msr, MSR_OFFCORE_RSP_1);
	HT_CHECK_EQ(c.hw.config & 0xff, 0xbb);
	HT_CHECK_EQ(pmu_event_add(&d), PMU_OK); /* shares RSP_1 with c */
	HT_CHECK_EQ(d.hw.extra_msr, MSR_OFFCORE_RSP_1);
	HT_CHECK_EQ(pmu_event_add(&e), PMU_E_BUSY);
	HT_CHECK_STR(e.reason, "offcore-third: a third offcore value: MSR_OFFCORE_RSP_0 holds 0x3fffc00001, "
			       "MSR_OFFCORE_RSP_1 holds 0x10001; this one needs 0x20001");
	HT_CHECK_EQ(pmu_event_enable(&a), PMU_OK);
	HT_CHECK_STR(model_trace_text(), "0x4c1<-0 0x1a6<-0x3fffc00001 0x186<-0x4301b7 0x38f<-0x1");
	pmu_event_del(&a);
	pmu_event_del(&b);
	HT_CHECK_EQ(pmu_event_add(&e), PMU_OK); /* RSP_0 free again: e moves there as 0xB7 */
	HT_CHECK_EQ(e.hw.extra_msr, MSR_OFFCORE_RSP_0);
	HT_CHECK_EQ(e.hw.config & 0xff, 0xb7);
	pmu_event_del(&c);
	pmu_event_del(&d);
	pmu_event_del(&e);

	boot(MODEL_V2, false); /* Core 2: not in the offcore model table */
	HT_CHECK_EQ(pmu_event_add(&a), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(
		a.reason,
		"offcore0: offcore-response event 0xb7 needs MSR_OFFCORE_RSP_0, unknown on family 0x6 model 0xf");
}

HT_TEST(per_cpu_hybrid_and_wrong_cpu)
{
	struct pmu_event e[7];
	struct pmu_event *g[7];
	boot(MODEL_HYBRID, false);
	for (int i = 0; i < 7; i++) {
		arch_ev(&e[i], PMU_ARCH_BRANCHES);
		g[i] = &e[i];
	}
	model_set_cpu(2); /* E-core: 6 GP counters */
	HT_CHECK_EQ(pmu_events_add(g, 7), PMU_E_BUSY);
	model_set_cpu(0); /* P-core: 8 */
	HT_CHECK_EQ(pmu_events_add(g, 7), PMU_OK);
	HT_CHECK_EQ(e[6].hw.cpu, 0);
	model_set_cpu(1);
	HT_CHECK_EQ(pmu_event_enable(&e[0]), PMU_E_STATE);
	HT_CHECK_STR(e[0].reason, "branches lives on CPU 0, called on CPU 1");
	model_set_cpu(0);
	pmu_events_del(g, 7);
}

HT_TEST(index_names)
{
	char b[24];
	HT_CHECK_STR(pmu_idx_name(pmu_caps(), 3, b, sizeof(b)), "IA32_PMC3");
	HT_CHECK_STR(pmu_idx_name(NULL, 3, b, sizeof(b)), "IA32_PMC3");
	HT_CHECK_STR(pmu_idx_name(pmu_caps(), PMU_IDX_FIXED(2), b, sizeof(b)), "IA32_FIXED_CTR2");
	HT_CHECK_STR(pmu_idx_name(pmu_caps(), -1, b, sizeof(b)), "(no counter)");
	HT_CHECK_EQ(pmu_idx_bit(PMU_IDX_FIXED(1)), 1ull << 33);
}

HT_MAIN("pmu_event")
