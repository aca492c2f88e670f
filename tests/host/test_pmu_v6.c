/* Host tests of the driver's version 6 and CPUID.23H decoding
 * (pmu/intel/v6.c) on the PMU model: a Lunar Lake-like hybrid part whose
 * two core types differ only in leaf 23H, every sub-leaf decoded and
 * reported, the 0x1900 + 4n register map, the bits the extensions open,
 * and the PMI handler's overflow inference on PMUs without a status
 * register (pmu/pmi.c). */
#include "arch/x86/msr.h"
#include "pmu/intel/caps.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"
#include "tests/host/hosttest.h"
#include "tests/host/pmu_model.h"

/* Lunar Lake as InstLatx64's CPUID dump B06D1 reads: leaf 0AH
 * 0D300806-280-7-8603 on both core types; Lion Cove (CPUs 0-1) 23.0 EAX
 * 0xB EBX 3, GP 0x3FF, fixed 0xF, events 0x1DFF; Skymont (CPUs 2-3) 23.0
 * EAX 0xF EBX 3, GP 0xFF, fixed 0x77, reload/cause 0xFC/0x3, events 0x1F7F. */
static struct model_cpu_config lnl(unsigned cpu)
{
	struct model_cpu_config c = {
		.vendor = "GenuineIntel",
		.signature = 0x000b06d1,
		.max_leaf = 0x23,
		.version = 6,
		.num_gp = 8,
		.gp_width = 48,
		.ebx_len = 13,
		.ebx_unavail = 0x280,
		.num_fixed = 3,
		.fixed_width = 48,
		.fixed_bitmap = 0x7,
		.anythread_deprecated = true,
		.pdcm = true,
		.hybrid = true,
		.leaf23 = true,
		.v6_features = 3,
		.leaf23_events = true,
	};
	if (cpu < 2) {
		c.core_type = 0x40, c.leaf23_gp = 0x3ff, c.leaf23_fixed = 0xf, c.events_avail23 = 0x1dff;
		c.perf_caps = 1ull << 12 | 1ull << 13 | 1ull << 15;
	} else {
		c.core_type = 0x20, c.leaf23_gp = 0xff, c.leaf23_fixed = 0x77, c.events_avail23 = 0x1f7f;
		c.perf_caps = 1ull << 12 | 1ull << 13;
		c.acr = true, c.acr_reload = c.acr_cause = 0x3000000fcull;
	}
	return c;
}

static void boot_lnl(void)
{
	struct model_cpu_config cfgs[4];

	for (unsigned c = 0; c < 4; c++)
		cfgs[c] = lnl(c);
	model_init_custom(cfgs, 4);
	pmu_init_all(&model_probe_opts, model_run_on);
	model_set_cpu(0);
	model_trace_clear();
}

static char printed[8192];
static void collect(void *ctx, const char *line)
{
	(void)ctx;
	strncat(printed, line, sizeof(printed) - strlen(printed) - 2);
	strcat(printed, "\n");
}

HT_TEST(lunar_lake_core_types_from_leaf_23)
{
	boot_lnl();
	const struct pmu_caps *p = &pmu_cpu_of(0)->caps, *e = &pmu_cpu_of(2)->caps;

	HT_CHECK(intel_caps(p)->arch_perfmon_ext && intel_caps(e)->arch_perfmon_ext,
		 "CPUID.(07H,1):EAX[8] read");
	HT_CHECK_EQ(p->version, 6);
	HT_CHECK_EQ(intel_caps(p)->leaf23_valid, 0xb);
	HT_CHECK_EQ(intel_caps(e)->leaf23_valid, 0xf);
	HT_CHECK_EQ(p->gp_mask, 0x3ff);
	HT_CHECK_EQ(p->num_gp, 10);
	HT_CHECK_EQ(p->fixed_mask, 0xf);
	HT_CHECK_EQ(e->gp_mask, 0xff);
	HT_CHECK_EQ(e->fixed_mask, 0x77);
	HT_CHECK_EQ(intel_caps(p)->v6_features, 3);
	HT_CHECK_EQ(intel_caps(p)->acr_reload, 0);
	HT_CHECK_EQ(intel_caps(e)->acr_reload, 0x3000000fcull);
	HT_CHECK_EQ(intel_caps(e)->acr_cause, 0x3000000fcull);
	/* Events from 23.3, not from leaf 0AH's common subset (which marks 7
	 * and 9 absent on both). */
	HT_CHECK(intel_caps(p)->events_from_leaf23 && intel_caps(e)->events_from_leaf23, "events from 23.3");
	HT_CHECK_EQ(p->events_avail, 0x1dff);
	HT_CHECK_EQ(e->events_avail, 0x1f7f);
	HT_CHECK_EQ(p->events_unknown, 0);
	/* The version 6 map, full-width writes through it. */
	HT_CHECK(intel_caps(p)->v6_msrs, "v6 register map");
	HT_CHECK_EQ(pmu_evtsel_msr(p, 9), 0x1925);
	HT_CHECK_EQ(pmu_ctr_msr(p, 9), 0x1924);
	HT_CHECK_EQ(pmu_ctr_write_msr(p, 2), 0x1908);
	HT_CHECK_EQ(pmu_fixed_msr(e, 6), 0x1998);
	HT_CHECK(p->ctr_write_full, "full-width writes");
	/* UMASK2 and EQ open; 37 (no user disable) and the rest stay reserved. */
	HT_CHECK_EQ(p->evtsel_reserved, 0xffff00ef00000000ull);
	HT_CHECK_EQ(p->global_ctrl_reserved, ~(0x3ffull | 0xfull << 32 | 1ull << 48));
	HT_CHECK_EQ(e->global_ctrl_reserved, ~(0xffull | 0x77ull << 32));
	HT_CHECK(!pmu_caps_same(p, e), "two core types");
	HT_CHECK(pmu_this_cpu()->counting, "counts: %s", pmu_this_cpu()->reason);
	HT_CHECK(pmu_cpu_of(2)->counting, "E-core counts: %s", pmu_cpu_of(2)->reason);

	printed[0] = '\0';
	pmu_caps_print(e, "", collect, NULL);
	HT_CHECK(
		strstr(printed,
		       "CPUID.23H.0: EAX=0xf (sub-leaves valid), EBX=0x3 (UMASK2 yes, EQ yes, RDPMC user disable no), ECX=0, EDX=0\n") !=
			NULL,
		"%s", printed);
	HT_CHECK(strstr(printed, "CPUID.23H.1: GP counters 0xff, fixed counters 0x77\n") != NULL, "%s",
		 printed);
	HT_CHECK(
		strstr(printed,
		       "CPUID.23H.2 auto counter reload: reloadable GP 0xfc fixed 0x3, cause GP 0xfc fixed 0x3\n") !=
			NULL,
		"%s", printed);
	HT_CHECK(strstr(printed, "CPUID.23H.3: architectural events supported 0x1f7f\n") != NULL, "%s",
		 printed);
	HT_CHECK(strstr(printed,
			"registers: PERFEVTSEL0 0x1901, counter0 0x1900 (writes via 0x1900), stride 4") !=
			 NULL,
		 "%s", printed);
}

HT_TEST(ten_gp_counters_count_through_the_v6_map)
{
	struct pmu_event ev[10];
	struct pmu_event *g[10];

	boot_lnl();
	for (unsigned x = 0; x < 10; x++) {
		struct pmu_event_attr a;
		pmu_attr_arch(&a, PMU_ARCH_INSTRUCTIONS);
		pmu_event_init(&ev[x], &a, "instructions");
		g[x] = &ev[x];
		HT_CHECK_EQ(pmu_event_add_idx(&ev[x], (int)x), PMU_OK);
	}
	model_trace_clear();
	HT_CHECK_EQ(pmu_events_enable(g, 10), PMU_OK);
	/* GP 9's counter and event select through 0x1924/0x1925. */
	const struct model_write *w = NULL;
	for (size_t i = 0; i < model_trace_len(); i++)
		if (model_trace_at(i)->msr == 0x1925)
			w = model_trace_at(i);
	HT_CHECK(w && !w->fault && (w->val & 0xff) == 0xc0, "IA32_PMC_GP9_CFG_A written");
	model_tick_loop(1000);
	HT_CHECK_EQ(pmu_events_disable(g, 10), PMU_OK);
	for (unsigned x = 0; x < 10; x++)
		HT_CHECK(pmu_event_count(&ev[x]) == 3000, "GP %u counted %llu", x,
			 (unsigned long long)pmu_event_count(&ev[x]));
	pmu_events_del(g, 10);
	/* The named top-down events and fixed counters 4-6 on the E-core. */
	model_set_cpu(2);
	struct pmu_event_attr a;
	struct pmu_event fe;
	pmu_attr_arch(&a, PMU_ARCH_TOPDOWN_FE_BOUND);
	pmu_event_init(&fe, &a, "topdown-fe-bound");
	HT_CHECK_EQ(pmu_event_add(&fe), PMU_OK);
	HT_CHECK_EQ(fe.hw.idx, PMU_IDX_FIXED(5));
	HT_CHECK_EQ(fe.hw.event_base, 0x1994);
	pmu_event_del(&fe);
	pmu_attr_arch(&a, PMU_ARCH_TOPDOWN_SLOTS);
	pmu_event_init(&fe, &a, "topdown-slots");
	HT_CHECK_EQ(pmu_event_add(&fe), PMU_E_UNSUPPORTED); /* 23.3 bit 7 clear on Skymont */
	model_set_cpu(0);
}

/* Without 07H.1 EAX[8] leaf 23H is not read, even with a maximum leaf
 * that reaches it; leaf 0AH then tells the counters. */
HT_TEST(leaf_23_needs_arch_perfmon_ext)
{
	struct model_cpu_config c = lnl(0);

	c.leaf23 = false, c.v6_features = 0, c.leaf23_events = false;
	model_init_custom(&c, 1);
	pmu_cpu_init(&model_probe_opts);
	const struct pmu_caps *p = pmu_caps();
	HT_CHECK(!intel_caps(p)->arch_perfmon_ext && !intel_caps(p)->leaf23, "no leaf 23H");
	HT_CHECK_EQ(p->gp_mask, 0xff);
	HT_CHECK_EQ(p->fixed_mask, 0x7);
	HT_CHECK_EQ(p->events_avail, 0x1fff & ~0x280u);
	HT_CHECK(intel_caps(p)->v6_msrs, "version 6: the v6 map all the same");
	printed[0] = '\0';
	pmu_caps_print(p, "", collect, NULL);
	HT_CHECK(strstr(printed, "version 6 without CPUID.23H (CPUID.(07H,1):EAX[8]=0)") != NULL, "%s",
		 printed);
}

/* Architectural v1 (no GLOBAL_STATUS): the handler infers the overflow of
 * an event with INT from its counter's top bit, for a preset counting
 * event as for a sampling one, and claims nothing for a counter that was
 * never armed negative. */
HT_TEST(overflow_inferred_without_global_status)
{
	struct pmu_event ev, plain;

	model_init(MODEL_V1, false);
	pmu_cpu_init(&model_probe_opts);
	HT_CHECK_EQ(pmu_caps()->global_status, 0);
	struct pmu_event_attr a;
	pmu_attr_arch(&a, PMU_ARCH_INSTRUCTIONS);
	a.intr = true;
	pmu_event_init(&ev, &a, "preset");
	pmu_event_init(&plain, &a, "from zero");
	HT_CHECK_EQ(pmu_event_add_idx(&ev, 0), PMU_OK);
	HT_CHECK_EQ(pmu_event_add_idx(&plain, 1), PMU_OK);
	HT_CHECK_EQ(pmu_event_enable(&ev), PMU_OK);
	HT_CHECK_EQ(pmu_event_enable(&plain), PMU_OK);
	HT_CHECK_EQ(pmu_event_write_counter(&ev, (0 - 100ull) & pmu_width_mask(40)), PMU_OK);
	model_tick_loop(10);
	HT_CHECK_EQ(pmu_pmi_handle(0x1000, 0), 0); /* not wrapped yet: spurious */
	model_tick_loop(40);
	HT_CHECK_EQ(model_pmi_count(0), 1);
	HT_CHECK_EQ(pmu_pmi_handle(0x1000, 0), 1); /* counter 0 only */
	struct pmu_pmi_stats s;
	pmu_pmi_get_stats(0, &s);
	HT_CHECK_EQ(s.ovf[0], 1);
	HT_CHECK_EQ(s.ovf[1], 0);
	HT_CHECK_EQ(s.last_cleared, 1);
	/* Folded in at the PMI: the count across the wrap is right. */
	HT_CHECK_EQ(pmu_event_update(&ev), 150);
	/* Seen once: a second PMI finds nothing. */
	HT_CHECK_EQ(pmu_pmi_handle(0x1000, 0), 0);
	pmu_event_del(&ev);
	pmu_event_del(&plain);
}

HT_MAIN("pmu_v6")
