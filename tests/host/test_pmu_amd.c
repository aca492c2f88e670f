/* Host tests of the AMD backend (pmu/amd/core.c) through the AMD model: caps of
 * each layout, the probe's verdict (and the KVM-here SKIP reason), the
 * event names' AMD encodings, allocation, the exact MSR writes of legacy
 * (per-counter EN) and PerfMonV2 (PerfCntrGlobalCtl) groups, 48-bit
 * deltas, 12-bit events and reserved bits refused before any write. */
#include "arch/x86/msr.h"
#include "pmu/amd/caps.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"
#include "tests/host/hosttest.h"
#include "tests/host/pmu_model.h"
#include "tests/host/pmu_model_amd.h"

/* PerfEvtSel USR | OS and EN (APM vol. 2, 13.2). */
#define SEL_USR_OS 0x30000ull
#define SEL_EN 0x400000ull

static void boot(enum model_amd_profile p)
{
	model_amd_init(p, 4);
	pmu_init_all(&model_probe_opts, model_run_on);
	model_set_cpu(0);
	model_trace_clear();
}

static void boot_cfg(const struct model_amd_config *cfg)
{
	model_amd_init_custom(cfg, 1);
	pmu_cpu_init(&model_probe_opts);
	model_trace_clear();
}

static void arch_ev(struct pmu_event *ev, enum pmu_arch_event e)
{
	struct pmu_event_attr a;
	pmu_attr_arch(&a, e);
	pmu_event_init(ev, &a, pmu_arch_events[e].name);
}

/* The write at position i of the trace is msr <- val, without a fault. */
static void check_write(size_t i, uint32_t msr, uint64_t val)
{
	const struct model_write *w = model_trace_at(i);

	HT_CHECK(w && w->msr == msr && w->val == val && !w->fault,
		 "write %zu: expected %#x<-%#llx, trace: %s", i, msr, (unsigned long long)val,
		 model_trace_text());
}

static uint32_t arch_mask(void)
{
	return 1u << PMU_ARCH_CYCLES | 1u << PMU_ARCH_INSTRUCTIONS | 1u << PMU_ARCH_BRANCHES |
	       1u << PMU_ARCH_BRANCH_MISSES;
}

/* --- Caps --- */

HT_TEST(caps_legacy_family_10h)
{
	boot(MODEL_AMD_LEGACY);
	const struct pmu_caps *c = pmu_caps();
	HT_CHECK_EQ(c->vendor, PMU_VENDOR_AMD);
	HT_CHECK_STR(pmu_this_cpu()->ops->name, "amd");
	HT_CHECK_EQ(c->family, 0x10);
	HT_CHECK_STR(c->uarch, "K10");
	HT_CHECK_EQ(c->version, 1);
	HT_CHECK_EQ(c->num_gp, 4);
	HT_CHECK_EQ(c->gp_width, 48);
	HT_CHECK_EQ(c->gp_mask, 0xf);
	HT_CHECK_EQ(c->fixed_mask, 0);
	HT_CHECK_EQ(c->evtsel_base, 0xc0010000);
	HT_CHECK_EQ(c->ctr_base, 0xc0010004);
	HT_CHECK_EQ(c->ctr_write_base, 0xc0010004);
	HT_CHECK_EQ(c->ctr_stride, 1);
	HT_CHECK_EQ(pmu_evtsel_msr(c, 3), 0xc0010003);
	HT_CHECK_EQ(pmu_ctr_msr(c, 3), 0xc0010007);
	HT_CHECK_EQ(c->global_ctrl, 0);
	HT_CHECK_EQ(c->global_status, 0);
	HT_CHECK_EQ(c->global_ovf, 0);
	HT_CHECK_EQ(c->fixed_ctrl, 0);
	/* APM vol. 2, 13.2: 19, 21, 39:36 and 63:42; 40/41 are HostOnly/GuestOnly. */
	HT_CHECK_EQ(c->evtsel_reserved, 0xfffffcf000280000ull);
	HT_CHECK_EQ(c->events_avail, arch_mask());
	HT_CHECK(c->counters_assumed, "legacy counters come from the family rule");
	HT_CHECK(c->ctr_write_full, "PerfCtr writes are full width");
	HT_CHECK(!amd_caps(c)->ext_core && !amd_caps(c)->perfmon_v2, "no ExtCore, no PerfMonV2");
	HT_CHECK(c->no_global_why && strstr(c->no_global_why, "PerfMonV2 absent"), "no_global_why: %s",
		 c->no_global_why ? c->no_global_why : "(null)");
	HT_CHECK_STR(c->no_fixed_why, "AMD has no fixed counters (APM vol. 2, 13.2)");
}

HT_TEST(caps_extcore_family_15h)
{
	boot(MODEL_AMD_EXTCORE);
	const struct pmu_caps *c = pmu_caps();
	HT_CHECK_EQ(c->family, 0x15);
	HT_CHECK_EQ(c->version, 1);
	HT_CHECK_EQ(c->num_gp, 6);
	HT_CHECK_EQ(c->gp_mask, 0x3f);
	HT_CHECK_EQ(c->ctr_stride, 2);
	/* Interleaved: PerfEvtSel n = 0xC0010200 + 2n, PerfCtr n = 0xC0010201 + 2n. */
	HT_CHECK_EQ(pmu_evtsel_msr(c, 0), 0xc0010200);
	HT_CHECK_EQ(pmu_ctr_msr(c, 0), 0xc0010201);
	HT_CHECK_EQ(pmu_evtsel_msr(c, 5), 0xc001020a);
	HT_CHECK_EQ(pmu_ctr_msr(c, 5), 0xc001020b);
	HT_CHECK_EQ(c->global_ctrl, 0);
	HT_CHECK(amd_caps(c)->ext_core && !amd_caps(c)->perfmon_v2, "ExtCore only");
}

HT_TEST(caps_perfmon_v2_family_19h)
{
	boot(MODEL_AMD_PERFMON_V2);
	const struct pmu_caps *c = pmu_caps();
	HT_CHECK_EQ(c->family, 0x19);
	HT_CHECK_EQ(c->model, 0x11);
	HT_CHECK_EQ(c->version, 2);
	HT_CHECK_EQ(c->num_gp, 6);
	HT_CHECK_EQ(c->evtsel_base, 0xc0010200);
	HT_CHECK_EQ(c->global_ctrl, 0xc0000301);
	HT_CHECK_EQ(c->global_status, 0xc0000300);
	HT_CHECK_EQ(c->global_ovf, 0xc0000302);
	HT_CHECK_EQ(c->global_ctrl_reserved, ~0x3full);
	HT_CHECK_EQ(c->global_ctrl_reset, 0x3f);
	HT_CHECK(!c->counters_assumed, "PerfMonV2 enumerates its counters");
	HT_CHECK(c->no_global_why == NULL, "has a global control");
	HT_CHECK(c->global_reset_unchecked_why != NULL, "RESET value only in PPRs");
	HT_CHECK(!pmu_inuse_found(pmu_this_cpu()), "GlobalCtl at its RESET value is not 'in use'");
}

HT_TEST(caps_perfmon_v2_counter_count_from_cpuid)
{
	struct model_amd_config cfg = model_amd_profile_config(MODEL_AMD_PERFMON_V2);

	cfg.v2_counters = 4; /* EBX[3:0], not the ExtCore default of 6 */
	boot_cfg(&cfg);
	HT_CHECK_EQ(pmu_caps()->num_gp, 4);
	HT_CHECK_EQ(pmu_caps()->gp_mask, 0xf);
	HT_CHECK_EQ(pmu_caps()->global_ctrl_reserved, ~0xfull);

	cfg.v2_counters = 0;
	boot_cfg(&cfg);
	HT_CHECK_EQ(pmu_caps()->version, 0);
	HT_CHECK_STR(pmu_skip_reason(), "PerfMonV2 reports no core counters (CPUID 0x80000022:EBX[3:0]=0)");
	HT_CHECK_EQ(model_trace_len(), 0);
}

HT_TEST(caps_k8_and_hygon_and_pre_amd64)
{
	boot(MODEL_AMD_K8);
	HT_CHECK_EQ(pmu_caps()->family, 0xf);
	HT_CHECK_EQ(pmu_caps()->num_gp, 4);
	/* EventSelect[11:8] does not exist before family 10h. */
	HT_CHECK_EQ(pmu_caps()->evtsel_reserved, 0xfffffcf000280000ull | 0xf00000000ull);

	struct model_amd_config cfg = model_amd_profile_config(MODEL_AMD_EXTCORE);
	cfg.vendor = "HygonGenuine";
	cfg.signature = 0x00900f02; /* family 18h */
	boot_cfg(&cfg);
	HT_CHECK_EQ(pmu_caps()->vendor, PMU_VENDOR_AMD);
	HT_CHECK_STR(pmu_caps()->uarch, "Hygon Dhyana (Zen)");
	HT_CHECK_EQ(pmu_caps()->num_gp, 6);
	HT_CHECK(pmu_skip_reason() == NULL, "Hygon counts: %s", pmu_skip_reason());

	cfg = model_amd_profile_config(MODEL_AMD_LEGACY);
	cfg.signature = 0x00000622; /* family 6: K7, not AMD64 */
	boot_cfg(&cfg);
	HT_CHECK_EQ(pmu_caps()->version, 0);
	HT_CHECK_EQ(pmu_caps()->gp_mask, 0);
	HT_CHECK_STR(pmu_skip_reason(),
		     "AMD family below 0Fh (pre-AMD64): no performance counters pmutest knows");
	HT_CHECK_EQ(model_trace_len(), 0);
}

/* --- Probe --- */

HT_TEST(probe_counts_on_every_profile)
{
	static const enum model_amd_profile ps[] = { MODEL_AMD_K8, MODEL_AMD_LEGACY, MODEL_AMD_EXTCORE,
						     MODEL_AMD_PERFMON_V2 };
	for (unsigned i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		boot(ps[i]);
		for (unsigned cpu = 0; cpu < 4; cpu++) {
			const struct pmu_cpu *pc = pmu_cpu_of(cpu);
			HT_CHECK(pc->counting && pc->rdpmc_ok && pc->probe_gp == 0, "%s cpu %u: %s",
				 model_amd_profile_name(ps[i]), cpu, pc->reason);
		}
	}
}

/* This machine's KVM without a vPMU: the legacy MSRs take the pattern and
 * read back 0; that must be a SKIP with the exact reason, nothing more. */
HT_TEST(probe_kvm_here_skips_with_reason)
{
	model_amd_init(MODEL_AMD_KVM_HERE, 2);
	model_trace_clear();
	pmu_init_all(&model_probe_opts, model_run_on);
	for (unsigned cpu = 0; cpu < 2; cpu++) {
		model_set_cpu(cpu);
		HT_CHECK_STR(
			pmu_skip_reason(),
			"counters do not count: wrote 0x2a5b3c4d to PerfCtr0 (MSR 0xc0010004), read back 0x0");
		HT_CHECK(pmu_caps()->counters_assumed, "legacy counters are assumed");
	}
	/* The probe wrote the pattern, then put the counter back (0). */
	check_write(0, 0xc0010004, 0x2a5b3c4d);
	check_write(1, 0xc0010004, 0);
	model_set_cpu(0);
	struct pmu_event ev;
	arch_ev(&ev, PMU_ARCH_INSTRUCTIONS);
	/* Allocation still works (the skip is the tests' decision), counting does not. */
	HT_CHECK_EQ(pmu_event_add(&ev), PMU_OK);
	pmu_event_del(&ev);
}

HT_TEST(probe_v2_trace_uses_global_ctl)
{
	model_amd_init(MODEL_AMD_PERFMON_V2, 1);
	model_trace_clear();
	pmu_cpu_init(&model_probe_opts);
	/* Quiesce our GlobalCtl bits, pattern write/restore, then count on
	 * counter 0 with GlobalCtl bit 0 around the workload. */
	check_write(0, 0xc0000301, 0);
	check_write(1, 0xc0010201, 0x2a5b3c4d);
	check_write(2, 0xc0010201, 0);
	check_write(3, 0xc0010200, SEL_EN | SEL_USR_OS | 0xc0);
	check_write(4, 0xc0000301, 1);
	check_write(5, 0xc0000301, 0);
	check_write(6, 0xc0010200, 0);
	HT_CHECK(pmu_this_cpu()->counting, "%s", pmu_this_cpu()->reason);
}

/* --- Event names --- */

HT_TEST(event_names_map_to_amd_encodings)
{
	static const struct {
		enum pmu_arch_event e;
		uint16_t event;
	} want[] = {
		{ PMU_ARCH_INSTRUCTIONS, 0xc0 },
		{ PMU_ARCH_CYCLES, 0x76 },
		{ PMU_ARCH_BRANCHES, 0xc2 },
		{ PMU_ARCH_BRANCH_MISSES, 0xc3 },
	};
	struct pmu_event_attr a;
	char err[128];

	struct pmu_event ev;

	boot(MODEL_AMD_EXTCORE);
	/* The attr says what was asked for, the same on every CPU (the SDM's
	 * encoding); the CPU that places it programs AMD's. */
	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		pmu_attr_arch(&a, want[i].e);
		HT_CHECK(a.event == pmu_arch_events[want[i].e].event && a.arch == want[i].e,
			 "%s: expected the SDM's event %#x, got %#x", pmu_arch_events[want[i].e].name,
			 pmu_arch_events[want[i].e].event, a.event);
		pmu_event_init(&ev, &a, pmu_arch_events[want[i].e].name);
		HT_CHECK_EQ(pmu_event_add(&ev), PMU_OK);
		HT_CHECK(BITS(ev.hw.config, 7, 0) == want[i].event && BITS(ev.hw.config, 15, 8) == 0,
			 "%s: expected PerfEvtSel event %#x umask 0, got %#llx",
			 pmu_arch_events[want[i].e].name, want[i].event, (unsigned long long)ev.hw.config);
		pmu_event_del(&ev);
	}
	/* The parser's names are placed the same way. */
	HT_CHECK_EQ(pmu_event_parse("cycles:u", &a, err, sizeof(err)), PMU_OK);
	HT_CHECK(a.arch == PMU_ARCH_CYCLES && a.usr && !a.os, "cycles:u is user-only cycles");
	pmu_event_init(&ev, &a, "cycles:u");
	HT_CHECK_EQ(pmu_event_add(&ev), PMU_OK);
	HT_CHECK_EQ(BITS(ev.hw.config, 7, 0), 0x76);
	pmu_event_del(&ev);
	HT_CHECK_EQ(pmu_event_parse("branch-misses", &a, err, sizeof(err)), PMU_OK);
	pmu_event_init(&ev, &a, "branch-misses");
	HT_CHECK_EQ(pmu_event_add(&ev), PMU_OK);
	HT_CHECK_EQ(BITS(ev.hw.config, 7, 0), 0xc3);
	pmu_event_del(&ev);

	/* A name with no AMD encoding is refused with the reason, nothing written. */
	arch_ev(&ev, PMU_ARCH_REF_CYCLES);
	model_trace_clear();
	HT_CHECK_EQ(pmu_event_add(&ev), PMU_E_UNSUPPORTED);
	HT_CHECK(strstr(ev.reason, "no AMD core-counter encoding") != NULL, "reason: %s", ev.reason);
	HT_CHECK_EQ(model_trace_len(), 0);
}

HT_TEST(event_names_stay_intel_on_intel)
{
	struct pmu_event_attr a;

	model_init(MODEL_V4, false);
	pmu_init_all(&model_probe_opts, model_run_on);
	model_set_cpu(0);
	pmu_attr_arch(&a, PMU_ARCH_CYCLES);
	HT_CHECK_EQ(a.event, 0x3c);
	pmu_attr_arch(&a, PMU_ARCH_BRANCHES);
	HT_CHECK_EQ(a.event, 0xc4);
	/* 12-bit events are AMD's: Intel's PERFEVTSEL holds 8 bits. */
	struct pmu_event ev;
	pmu_attr_raw(&a, 0x1c0, 0);
	pmu_event_init(&ev, &a, "wide");
	model_trace_clear();
	HT_CHECK_EQ(pmu_event_add(&ev), PMU_E_INVAL);
	HT_CHECK(strstr(ev.reason, "holds 8 bits") != NULL, "reason: %s", ev.reason);
	HT_CHECK_EQ(model_trace_len(), 0);
}

/* --- Allocation --- */

static void alloc_all(unsigned n, enum model_amd_profile p)
{
	struct pmu_event evs[8];
	struct pmu_event *g[8];

	boot(p);
	for (unsigned i = 0; i < n + 1; i++) {
		arch_ev(&evs[i], (i & 1) ? PMU_ARCH_BRANCHES : PMU_ARCH_INSTRUCTIONS);
		g[i] = &evs[i];
	}
	/* A group one larger than the PMU is refused whole. */
	HT_CHECK_EQ(pmu_events_add(g, n + 1), PMU_E_BUSY);
	HT_CHECK_EQ(pmu_this_cpu()->gp_used, 0);
	for (unsigned i = 0; i <= n; i++)
		HT_CHECK(evs[i].hw.idx == -1, "event %u holds %d after a refused group", i, evs[i].hw.idx);
	/* One by one: n fit, in order, and the next is refused with the reason. */
	for (unsigned i = 0; i < n; i++) {
		HT_CHECK_EQ(pmu_event_add(&evs[i]), PMU_OK);
		HT_CHECK_EQ(evs[i].hw.idx, i);
		HT_CHECK_EQ(evs[i].hw.config_base, pmu_evtsel_msr(pmu_caps(), i));
		HT_CHECK_EQ(evs[i].hw.event_base, pmu_ctr_msr(pmu_caps(), i));
		HT_CHECK_EQ(evs[i].hw.rdpmc_idx, i);
		HT_CHECK_EQ(evs[i].hw.width, 48);
	}
	HT_CHECK_EQ(pmu_event_add(&evs[n]), PMU_E_BUSY);
	HT_CHECK(strstr(evs[n].reason, "no free counter") != NULL, "reason: %s", evs[n].reason);
	HT_CHECK_EQ(pmu_this_cpu()->gp_used, (1u << n) - 1);
	pmu_events_del(g, n);
	HT_CHECK_EQ(pmu_this_cpu()->gp_used, 0);
}

HT_TEST(alloc_four_legacy_six_extcore)
{
	alloc_all(4, MODEL_AMD_LEGACY);
	alloc_all(6, MODEL_AMD_EXTCORE);
	alloc_all(6, MODEL_AMD_PERFMON_V2);
}

HT_TEST(alloc_refuses_fixed_counters)
{
	struct pmu_event ev;
	char name[24];

	boot(MODEL_AMD_PERFMON_V2);
	arch_ev(&ev, PMU_ARCH_INSTRUCTIONS);
	HT_CHECK_EQ(pmu_event_add_idx(&ev, PMU_IDX_FIXED(0)), PMU_E_UNSUPPORTED);
	HT_CHECK(strstr(ev.reason, "AMD has no fixed counters") != NULL, "reason: %s", ev.reason);
	/* Instructions go to a GP counter, which has AMD's name. */
	HT_CHECK_EQ(pmu_event_add(&ev), PMU_OK);
	HT_CHECK_EQ(ev.hw.idx, 0);
	HT_CHECK_STR(pmu_idx_name(pmu_caps(), ev.hw.idx, name, sizeof(name)), "PerfCtr0");
	pmu_event_del(&ev);
}

/* --- Enable/disable: the exact writes --- */

HT_TEST(group_enable_legacy_uses_per_counter_en)
{
	struct pmu_event i, b;
	struct pmu_event *g[] = { &i, &b };

	boot(MODEL_AMD_LEGACY);
	arch_ev(&i, PMU_ARCH_INSTRUCTIONS);
	arch_ev(&b, PMU_ARCH_BRANCHES);
	HT_CHECK_EQ(pmu_events_add(g, 2), PMU_OK);
	model_trace_clear();
	HT_CHECK_EQ(pmu_events_enable(g, 2), PMU_OK);
	HT_CHECK_EQ(model_trace_len(), 4);
	check_write(0, 0xc0010004, 0);
	check_write(1, 0xc0010000, SEL_EN | SEL_USR_OS | 0xc0);
	check_write(2, 0xc0010005, 0);
	check_write(3, 0xc0010001, SEL_EN | SEL_USR_OS | 0xc2);
	model_tick_loop(1000);
	model_trace_clear();
	HT_CHECK_EQ(pmu_events_disable(g, 2), PMU_OK);
	HT_CHECK_EQ(model_trace_len(), 2);
	check_write(0, 0xc0010000, SEL_USR_OS | 0xc0);
	check_write(1, 0xc0010001, SEL_USR_OS | 0xc2);
	HT_CHECK_EQ(pmu_event_count(&i), 3000);
	HT_CHECK_EQ(pmu_event_count(&b), 1000);
	/* A bracket can start only one counter without a global control. */
	struct pmu_bracket_regs br;
	HT_CHECK_EQ(pmu_events_arm(g, 2, &br), PMU_E_UNSUPPORTED);
	HT_CHECK(strstr(i.reason, "PerfMonV2 absent") != NULL, "reason: %s", i.reason);
	HT_CHECK_EQ(pmu_events_arm(g, 1, &br), PMU_OK);
	HT_CHECK(br.msr == 0xc0010000 && br.on == (SEL_EN | SEL_USR_OS | 0xc0) &&
			 br.off == (SEL_USR_OS | 0xc0),
		 "bracket %#x on %#llx off %#llx", br.msr, (unsigned long long)br.on,
		 (unsigned long long)br.off);
	pmu_events_disarm(g, 1);
	pmu_events_del(g, 2);
}

HT_TEST(group_enable_v2_uses_global_ctl)
{
	struct pmu_event i, c;
	struct pmu_event *g[] = { &i, &c };

	boot(MODEL_AMD_PERFMON_V2);
	arch_ev(&i, PMU_ARCH_INSTRUCTIONS);
	arch_ev(&c, PMU_ARCH_CYCLES);
	HT_CHECK_EQ(pmu_events_add(g, 2), PMU_OK);
	model_trace_clear();
	HT_CHECK_EQ(pmu_events_enable(g, 2), PMU_OK);
	HT_CHECK_EQ(model_trace_len(), 5);
	check_write(0, 0xc0010201, 0);
	check_write(1, 0xc0010200, SEL_EN | SEL_USR_OS | 0xc0);
	check_write(2, 0xc0010203, 0);
	check_write(3, 0xc0010202, SEL_EN | SEL_USR_OS | 0x76);
	check_write(4, 0xc0000301, 0x3); /* one write starts both */
	model_tick_loop(500);
	model_trace_clear();
	HT_CHECK_EQ(pmu_events_disable(g, 2), PMU_OK);
	HT_CHECK_EQ(model_trace_len(), 3);
	check_write(0, 0xc0000301, 0); /* one write stops both, then the ENs */
	check_write(1, 0xc0010200, SEL_USR_OS | 0xc0);
	check_write(2, 0xc0010202, SEL_USR_OS | 0x76);
	HT_CHECK_EQ(pmu_event_count(&i), 1500);
	HT_CHECK_EQ(pmu_event_count(&c), 1000);
	/* A bracket: GlobalCtl is the one register to write. */
	struct pmu_bracket_regs br;
	HT_CHECK_EQ(pmu_events_arm(g, 2, &br), PMU_OK);
	HT_CHECK(br.msr == 0xc0000301 && br.on == 0x3 && br.off == 0, "bracket %#x on %#llx off %#llx",
		 br.msr, (unsigned long long)br.on, (unsigned long long)br.off);
	pmu_events_disarm(g, 2);
	pmu_events_del(g, 2);
}

/* --- Widths and overflow --- */

HT_TEST(counter_48_bit_delta_and_v2_overflow_status)
{
	struct pmu_event ev;

	HT_CHECK_EQ(pmu_delta(0xfffffffffff6ull, 5, 48), 15);
	boot(MODEL_AMD_PERFMON_V2);
	arch_ev(&ev, PMU_ARCH_INSTRUCTIONS);
	ev.attr.period = 10; /* start at -10: wraps 10 instructions in */
	HT_CHECK_EQ(pmu_event_add(&ev), PMU_OK);
	model_trace_clear();
	HT_CHECK_EQ(pmu_event_enable(&ev), PMU_OK);
	/* The full 48-bit value goes to PerfCtr0, no sign-extension refusal. */
	check_write(0, 0xc0010201, 0xfffffffffff6ull);
	model_tick_loop(100);
	HT_CHECK_EQ(model_peek(0, 0xc0010201), 300 - 10);
	HT_CHECK_EQ(model_peek(0, 0xc0000300) & 1, 1);
	HT_CHECK_EQ(pmu_event_disable(&ev), PMU_OK);
	HT_CHECK_EQ(pmu_event_count(&ev), 300);
	/* StatusClr clears it; GlobalStatus itself is read-only. */
	HT_CHECK_EQ(pmu_hw_wrmsr(pmu_caps()->global_ovf, 1), 0);
	HT_CHECK_EQ(model_peek(0, 0xc0000300), 0);
	HT_CHECK_EQ(pmu_hw_wrmsr(pmu_caps()->global_status, 0), X86_VEC_GP);
	/* Any value of the width can be written and read back. */
	HT_CHECK_EQ(pmu_event_write_counter(&ev, 0x923456789abcull), PMU_OK);
	HT_CHECK_EQ(model_peek(0, 0xc0010201), 0x923456789abcull);
	pmu_event_del(&ev);
}

/* --- Encoding and reserved bits --- */

HT_TEST(encoding_12_bit_event_and_flags)
{
	struct pmu_event_attr a;
	struct pmu_event ev;

	boot(MODEL_AMD_PERFMON_V2);
	pmu_attr_raw(&a, 0x1c0, 0x5a);
	a.cmask = 2;
	a.inv = a.edge = a.intr = true;
	a.usr = false;
	pmu_event_init(&ev, &a, "wide");
	HT_CHECK_EQ(pmu_event_add(&ev), PMU_OK);
	/* EventSelect[7:0]=0xC0, UnitMask 0x5A, OS 17, Edge 18, Int 20, Inv 23,
	 * CntMask 2 at 31:24, EventSelect[11:8]=1 at 35:32. */
	HT_CHECK_EQ(ev.hw.config,
		    0x100000000ull | 0x02000000 | 0x800000 | 0x100000 | 0x40000 | 0x20000 | 0x5a00 | 0xc0);
	model_trace_clear();
	HT_CHECK_EQ(pmu_event_enable(&ev), PMU_OK);
	check_write(1, 0xc0010200, ev.hw.config | SEL_EN);
	pmu_event_del(&ev);

	pmu_attr_raw(&a, 0x1000, 0);
	pmu_event_init(&ev, &a, "too wide");
	HT_CHECK_EQ(pmu_event_add(&ev), PMU_E_INVAL);
	HT_CHECK(strstr(ev.reason, "12 bits") != NULL, "reason: %s", ev.reason);
}

HT_TEST(reserved_bits_refused_before_the_write)
{
	struct pmu_event_attr a;
	struct pmu_event ev;

	/* K8 has no EventSelect[11:8]. */
	boot(MODEL_AMD_K8);
	pmu_attr_raw(&a, 0x1c0, 0);
	pmu_event_init(&ev, &a, "wide");
	HT_CHECK_EQ(pmu_event_add(&ev), PMU_E_UNSUPPORTED);
	HT_CHECK(strstr(ev.reason, "reserved bits 0x100000000") && strstr(ev.reason, "family 10h"),
		 "reason: %s", ev.reason);
	HT_CHECK_EQ(model_trace_len(), 0);
	/* ... and the model would have raised #GP on that write. */
	HT_CHECK_EQ(pmu_hw_wrmsr(0xc0010000, 0x1004300c0ull), X86_VEC_GP);

	/* AnyThread (bit 21) is reserved on every AMD part. */
	boot(MODEL_AMD_EXTCORE);
	HT_CHECK_EQ(pmu_event_parse("r2000c0", &a, NULL, 0), PMU_OK); /* raw bit 21: the backend's */
	pmu_event_init(&ev, &a, "any");
	HT_CHECK_EQ(pmu_event_add(&ev), PMU_E_UNSUPPORTED);
	HT_CHECK(strstr(ev.reason, "bit 21 is reserved") != NULL, "reason: %s", ev.reason);
	HT_CHECK_EQ(model_trace_len(), 0);
	HT_CHECK_EQ(pmu_hw_wrmsr(0xc0010200, 0x2000c0ull), X86_VEC_GP);
	/* GuestOnly/HostOnly (40/41) are no reserved bits (APM vol. 2, 13.2):
	 * the driver encodes them, the model takes them. The old reading
	 * (refused like KVM's reserved mask) is gone. */
	HT_CHECK(!(pmu_caps()->evtsel_reserved >> 40 & 3), "bits 40/41 are not in the reserved mask");
	HT_CHECK_EQ(pmu_hw_wrmsr(0xc0010200, (1ull << 40) | 0xc0), 0);
	HT_CHECK_EQ(pmu_hw_wrmsr(0xc0010200, (1ull << 41) | 0xc0), 0);
	HT_CHECK_EQ(pmu_hw_wrmsr(0xc0010200, (1ull << 42) | 0xc0), X86_VEC_GP);
	pmu_hw_wrmsr(0xc0010200, 0);
}

/* HostOnly/GuestOnly from the event string to the counter: nothing counts
 * with EFER.SVME clear, HostOnly counts in the host with it set, GuestOnly
 * only in a guest (APM vol. 2, 13.2; Linux arch/x86/events/amd/core.c). */
HT_TEST(host_only_guest_only_encoded_and_counted)
{
	struct pmu_event_attr a;
	struct pmu_event ho, go;
	char err[128];

	boot(MODEL_AMD_PERFMON_V2);
	HT_CHECK_EQ(pmu_event_parse("cpu/event=0xc0,host_only/", &a, err, sizeof(err)), PMU_OK);
	HT_CHECK_EQ(a.own_config, BIT(AMD_PERFEVTSEL_HOST_ONLY_BIT));
	pmu_event_init(&ho, &a, "host-only");
	HT_CHECK_EQ(pmu_event_parse("cpu/event=0xc0,guest_only/", &a, err, sizeof(err)), PMU_OK);
	pmu_event_init(&go, &a, "guest-only");
	struct pmu_event *g[] = { &ho, &go };
	HT_CHECK_EQ(pmu_events_add(g, 2), PMU_OK);
	HT_CHECK_EQ(ho.hw.config >> 40 & 3, 2);
	HT_CHECK_EQ(go.hw.config >> 40 & 3, 1);
	for (unsigned svme = 0; svme < 2; svme++) {
		model_set_svm(svme, false);
		HT_CHECK_EQ(pmu_events_enable(g, 2), PMU_OK);
		model_tick_loop(100);
		HT_CHECK_EQ(pmu_events_disable(g, 2), PMU_OK);
		HT_CHECK(pmu_event_count(&ho) == (svme ? 300 : 0) && pmu_event_count(&go) == 0,
			 "EFER.SVME=%u: host-only %llu, guest-only %llu", svme,
			 (unsigned long long)pmu_event_count(&ho), (unsigned long long)pmu_event_count(&go));
	}
	pmu_events_del(g, 2);
	/* Intel has no such bits: refused with the reason, nothing written. */
	model_init(MODEL_V4, true);
	pmu_cpu_init(&model_probe_opts);
	model_trace_clear();
	HT_CHECK_EQ(pmu_event_parse("cpu/event=0xc0,guest_only/", &a, err, sizeof(err)), PMU_OK);
	pmu_event_init(&go, &a, "guest-only");
	HT_CHECK_EQ(pmu_event_add(&go), PMU_E_UNSUPPORTED);
	HT_CHECK(strstr(go.reason, "AMD PerfEvtSel bits 41/40") != NULL, "reason: %s", go.reason);
	HT_CHECK_EQ(model_trace_len(), 0);
}

/* PerfMonV2's StatusSet (KVM commit 68e61f6fd656) is the driver's status-set
 * register; LbrAndPmcFreeze its freeze, cleared by the PMI handler. */
HT_TEST(perfmon_v2_status_set_and_lbr_pmc_freeze)
{
	struct model_amd_config cfg = model_amd_profile_config(MODEL_AMD_PERFMON_V2);

	boot_cfg(&cfg);
	HT_CHECK_EQ(pmu_caps()->global_status_set, 0xc0000303);
	HT_CHECK(!amd_caps(pmu_caps())->lbr_pmc_freeze && !pmu_caps()->freeze_ctl,
		 "no freeze without EAX[2]");
	HT_CHECK_EQ(pmu_pmi_set_freeze(true), PMU_E_UNSUPPORTED);
	HT_CHECK_EQ(pmu_pmi_status_set(0x2), PMU_OK);
	HT_CHECK_EQ(model_peek(0, 0xc0000300), 0x2);
	HT_CHECK_EQ(pmu_hw_wrmsr(0xc0000302, 0x2), 0);

	cfg.lbr_pmc_freeze = true;
	boot_cfg(&cfg);
	const struct pmu_caps *c = pmu_caps();
	HT_CHECK(amd_caps(c)->lbr_pmc_freeze, "CPUID 0x80000022:EAX[2] decoded");
	HT_CHECK_EQ(c->freeze_ctl, 1ull << 11);
	HT_CHECK_EQ(c->freeze_status_bits, 1ull << 58);
	HT_CHECK_EQ(pmu_pmi_set_freeze(true), PMU_OK);
	HT_CHECK_EQ(model_peek(0, 0x1d9), 1ull << 11);

	struct pmu_event ev;
	arch_ev(&ev, PMU_ARCH_INSTRUCTIONS);
	ev.attr.period = 10;
	ev.attr.intr = true;
	HT_CHECK_EQ(pmu_event_add(&ev), PMU_OK);
	HT_CHECK_EQ(pmu_event_enable(&ev), PMU_OK);
	model_tick_loop(5);
	HT_CHECK_EQ(model_pmi_count(0), 1);
	HT_CHECK_EQ(model_peek(0, 0xc0000300) >> 58 & 1, 1);
	/* The handler clears the overflow and LbrFreeze; counting goes on. */
	uint64_t st = pmu_pmi_handle(0, 0);
	HT_CHECK_EQ(st, 1ull << 58 | 1);
	HT_CHECK_EQ(model_peek(0, 0xc0000300), 0);
	pmu_event_del(&ev);
	HT_CHECK_EQ(pmu_pmi_set_freeze(false), PMU_OK);
}

/* --- The model against the APM --- */

HT_TEST(model_layouts_and_kvm_here)
{
	uint64_t v;

	model_amd_init(MODEL_AMD_EXTCORE, 1);
	/* Legacy addresses alias counters 0-3 of the extended set. */
	HT_CHECK_EQ(pmu_hw_wrmsr(0xc0010207, 0x1234), 0);
	HT_CHECK_EQ(pmu_hw_rdmsr(0xc0010007, &v), 0);
	HT_CHECK_EQ(v, 0x1234);
	HT_CHECK_EQ(pmu_hw_rdpmc(3, &v), 0);
	HT_CHECK_EQ(v, 0x1234);
	HT_CHECK_EQ(pmu_hw_rdpmc(6, &v), X86_VEC_GP);                  /* past the core counters */
	HT_CHECK_EQ(pmu_hw_wrmsr(0xc0010201, 1ull << 48), X86_VEC_GP); /* past 48 bits */
	HT_CHECK_EQ(pmu_hw_rdmsr(0xc0000301, &v), X86_VEC_GP);         /* no PerfMonV2 */
	model_set_cpl(3);
	HT_CHECK_EQ(pmu_hw_rdpmc(0, &v), X86_VEC_GP); /* CPL 3 without CR4.PCE */
	model_set_cr4_pce(true);
	HT_CHECK_EQ(pmu_hw_rdpmc(0, &v), 0);
	model_set_cpl(0);

	model_amd_init(MODEL_AMD_LEGACY, 1);
	HT_CHECK_EQ(pmu_hw_rdmsr(0xc0010200, &v), X86_VEC_GP); /* no ExtCore */
	HT_CHECK_EQ(pmu_hw_rdpmc(4, &v), X86_VEC_GP);

	model_amd_init(MODEL_AMD_KVM_HERE, 1);
	HT_CHECK_EQ(pmu_hw_wrmsr(0xc0010004, 0x2a5b3c4d), 0);
	HT_CHECK_EQ(pmu_hw_rdmsr(0xc0010004, &v), 0);
	HT_CHECK_EQ(v, 0);
	HT_CHECK_EQ(pmu_hw_wrmsr(0xc0010000, 1ull << 63), 0); /* no reserved-bit check either */
	HT_CHECK_EQ(pmu_hw_rdpmc(0, &v), X86_VEC_GP);
	HT_CHECK_EQ(pmu_hw_rdmsr(0xc0010200, &v), X86_VEC_GP);
}

/* --- Reports --- */

static char printed[8192];
static void collect(void *ctx, const char *line)
{
	(void)ctx;
	strncat(printed, line, sizeof(printed) - strlen(printed) - 2);
	strcat(printed, "\n");
}

HT_TEST(boot_report_names_amd_layout_and_verdict)
{
	model_amd_init(MODEL_AMD_KVM_HERE, 2);
	pmu_init_all(&model_probe_opts, model_run_on);
	printed[0] = '\0';
	pmu_boot_report(collect, NULL);
	HT_CHECK(strstr(printed, "pmu: cpu 0-1:\n") != NULL, "%s", printed);
	HT_CHECK(strstr(printed,
			"AuthenticAMD family 0x17 model 0x1 stepping 2 (Zen/Zen 2), under a hypervisor") !=
			 NULL,
		 "%s", printed);
	HT_CHECK(
		strstr(printed,
		       "AMD PMU legacy: 4 counters x 48 bits (mask 0xf, from the family), no fixed counters") !=
			NULL,
		"%s", printed);
	HT_CHECK(
		strstr(printed,
		       "registers: PerfEvtSel0 0xc0010000, PerfCtr0 0xc0010004, stride 1; no PerfCntrGlobalCtl") !=
			NULL,
		"%s", printed);
	HT_CHECK(
		strstr(printed,
		       "counting checks SKIP: counters do not count: wrote 0x2a5b3c4d to PerfCtr0 (MSR 0xc0010004), read back 0x0") !=
			NULL,
		"%s", printed);

	model_amd_init(MODEL_AMD_PERFMON_V2, 1);
	pmu_init_all(&model_probe_opts, model_run_on);
	printed[0] = '\0';
	pmu_boot_report(collect, NULL);
	HT_CHECK(strstr(printed, "AMD PMU PerfMonV2: 6 counters x 48 bits (mask 0x3f, CPUID 0x80000022)") !=
			 NULL,
		 "%s", printed);
	HT_CHECK(strstr(printed, "PerfCntrGlobalCtl 0xc0000301 STATUS 0xc0000300 STATUS_CLR 0xc0000302") !=
			 NULL,
		 "%s", printed);
	HT_CHECK(strstr(printed, "counters count (probe on PerfCtr0)") != NULL, "%s", printed);
}

/* The in-use report names AMD's counters as the APM does (PerfCtr n,
 * APM vol. 2, 13.2), not by Intel's PMC n. */
HT_TEST(inuse_report_names_perfctr)
{
	model_amd_init(MODEL_AMD_PERFMON_V2, 1);
	model_poke(0, 0xc0010202, SEL_USR_OS | SEL_EN | 0x76); /* PerfEvtSel1: cycles, enabled */
	pmu_init_all(&model_probe_opts, model_run_on);
	model_set_cpu(0);
	printed[0] = '\0';
	pmu_inuse_report(pmu_this_cpu(), collect, NULL);
	HT_CHECK(
		strstr(printed,
		       "cpu 0: PerfEvtSel1 (MSR 0xc0010202) = 0x430076: PerfCtr1 enabled (event 0x76 umask 0x00) by an earlier owner; left alone\n") !=
			NULL,
		"%s", printed);
}

HT_MAIN("pmu_amd")
