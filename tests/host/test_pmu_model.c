/* Host tests of the PMU model itself: it must hold to the SDM rules the
 * driver is proven against, or the driver's proof proves nothing. */
#include "arch/x86/msr.h"
#include "pmu/pmu_hw.h"
#include "tests/host/hosttest.h"
#include "tests/host/pmu_model.h"

static uint64_t rd(uint32_t msr)
{
	uint64_t v = 0xdead;
	int f = pmu_hw_rdmsr(msr, &v);
	HT_CHECK(f == 0, "rdmsr %#x faulted with %d", msr, f);
	return v;
}

static int wr(uint32_t msr, uint64_t v)
{
	return pmu_hw_wrmsr(msr, v);
}

HT_TEST(no_pmu_faults_everything)
{
	uint64_t v;
	model_init(MODEL_NO_PMU, false);
	HT_CHECK_EQ(pmu_hw_rdmsr(MSR_IA32_PMC0, &v), X86_VEC_GP);
	HT_CHECK_EQ(v, 0);
	HT_CHECK_EQ(pmu_hw_wrmsr(MSR_IA32_PERFEVTSEL0, 0), X86_VEC_GP);
	HT_CHECK_EQ(pmu_hw_rdmsr(MSR_IA32_PERF_GLOBAL_CTRL, &v), X86_VEC_GP);
	HT_CHECK_EQ(pmu_hw_rdpmc(0, &v), X86_VEC_GP);
	struct cpuid_regs r;
	pmu_hw_cpuid(0x0a, 0, &r);
	HT_CHECK_EQ(r.eax, 0);
}

HT_TEST(ignores_writes_reads_zero_rdpmc_ud)
{
	uint64_t v = 1;
	model_init(MODEL_IGNORES_WRITES, false);
	HT_CHECK_EQ(wr(MSR_IA32_PMC0, 0x1234), 0);
	HT_CHECK_EQ(rd(MSR_IA32_PMC0), 0);
	HT_CHECK_EQ(wr(MSR_IA32_PERFEVTSEL0, ~0ull), 0); /* even reserved bits are dropped */
	HT_CHECK_EQ(rd(MSR_IA32_PERF_GLOBAL_CTRL), 0);
	HT_CHECK_EQ(pmu_hw_rdpmc(0, &v), 6);
}

HT_TEST(legacy_write_sign_extends_bit31)
{
	model_init(MODEL_V4, false);
	HT_CHECK_EQ(wr(MSR_IA32_PMC0, 0x80000001ull), 0);
	HT_CHECK_EQ(rd(MSR_IA32_PMC0), 0xffff80000001ull);        /* 48 bits */
	HT_CHECK_EQ(wr(MSR_IA32_PMC0, 0xffffff0012345678ull), 0); /* EDX ignored */
	HT_CHECK_EQ(rd(MSR_IA32_PMC0), 0x12345678);
	model_init(MODEL_V2, false);
	HT_CHECK_EQ(wr((MSR_IA32_PMC0 + 1), 0xfffffffeull), 0);
	HT_CHECK_EQ(rd((MSR_IA32_PMC0 + 1)), 0xfffffffffeull); /* 40 bits */
}

HT_TEST(full_width_alias_only_with_perf_caps_13)
{
	model_init(MODEL_V4, false);
	HT_CHECK_EQ(wr(MSR_IA32_A_PMC0, 5), X86_VEC_GP);
	model_init(MODEL_V4, true);
	HT_CHECK_EQ(wr(MSR_IA32_A_PMC0, 0xffff80000000ull), 0);
	HT_CHECK_EQ(rd(MSR_IA32_PMC0), 0xffff80000000ull);
	HT_CHECK_EQ(wr(MSR_IA32_A_PMC0, 0x123456789abcull), 0);
	HT_CHECK_EQ(rd(MSR_IA32_A_PMC0), 0x123456789abcull);
	HT_CHECK_EQ(wr(MSR_IA32_A_PMC0, 1ull << 48), X86_VEC_GP); /* past the width */
	HT_CHECK_EQ(wr(MSR_IA32_A_PMC0 + 4, 0), X86_VEC_GP);      /* PMC4 absent */
}

HT_TEST(reserved_bits_fault)
{
	model_init(MODEL_V2, false);
	HT_CHECK_EQ(wr(MSR_IA32_PERFEVTSEL0, 1ull << 32), X86_VEC_GP);
	HT_CHECK_EQ(wr(MSR_IA32_PERFEVTSEL0, 1ull << PERFEVTSEL_ANY_BIT),
		    X86_VEC_GP);                                   /* v2: AnyThread reserved */
	HT_CHECK_EQ(wr(MSR_IA32_FIXED_CTR_CTRL, 0x4), X86_VEC_GP); /* ANY in field 0 */
	HT_CHECK_EQ(wr(MSR_IA32_FIXED_CTR_CTRL, 0xbbb), 0);
	HT_CHECK_EQ(wr(MSR_IA32_FIXED_CTR_CTRL, 0xb000), X86_VEC_GP); /* field 3: no FIXED_CTR3 */
	HT_CHECK_EQ(wr(MSR_IA32_PERF_GLOBAL_CTRL, 0x700000003ull), 0);
	HT_CHECK_EQ(wr(MSR_IA32_PERF_GLOBAL_CTRL, 0x4), X86_VEC_GP);        /* PMC2 absent */
	HT_CHECK_EQ(wr(MSR_IA32_PERF_GLOBAL_CTRL, 1ull << 35), X86_VEC_GP); /* FIXED_CTR3 absent */
	HT_CHECK_EQ(wr(MSR_IA32_PERF_GLOBAL_STATUS, 0), X86_VEC_GP);        /* read-only */
	HT_CHECK_EQ(wr(MSR_IA32_PERF_CAPABILITIES, 0), X86_VEC_GP);
	HT_CHECK_EQ(wr(MSR_IA32_PERF_GLOBAL_STATUS_SET, 1), X86_VEC_GP); /* v4 only */
	HT_CHECK_EQ(wr(MSR_IA32_FIXED_CTR0, 1ull << 40), X86_VEC_GP);    /* past the width */
	model_init(MODEL_V4, false);
	HT_CHECK_EQ(wr(MSR_IA32_PERFEVTSEL0, 1ull << PERFEVTSEL_ANY_BIT), 0);
	HT_CHECK_EQ(wr(MSR_IA32_FIXED_CTR_CTRL, 0xfff), 0);
}

HT_TEST(v1_has_no_global_registers)
{
	uint64_t v;
	model_init(MODEL_V1, false);
	HT_CHECK_EQ(pmu_hw_rdmsr(MSR_IA32_PERF_GLOBAL_CTRL, &v), X86_VEC_GP);
	HT_CHECK_EQ(pmu_hw_rdmsr(MSR_IA32_FIXED_CTR_CTRL, &v), X86_VEC_GP);
	HT_CHECK_EQ(pmu_hw_rdmsr(MSR_IA32_FIXED_CTR0, &v), X86_VEC_GP);
	/* Version 1: EN alone makes the counter count. */
	HT_CHECK_EQ(wr(MSR_IA32_PERFEVTSEL0, 0x4300c0), 0);
	model_tick_loop(10);
	HT_CHECK_EQ(rd(MSR_IA32_PMC0), 30);
}

HT_TEST(v5_fixed_bitmap_gap)
{
	uint64_t v;
	model_init(MODEL_V5_GAP, false);
	HT_CHECK_EQ(pmu_hw_rdmsr(MSR_IA32_FIXED_CTR0 + 2, &v), X86_VEC_GP);
	HT_CHECK_EQ(pmu_hw_rdmsr(MSR_IA32_FIXED_CTR0 + 3, &v), 0);
	HT_CHECK_EQ(wr(MSR_IA32_FIXED_CTR_CTRL, 0x3 << 8), X86_VEC_GP);
	HT_CHECK_EQ(wr(MSR_IA32_FIXED_CTR_CTRL, 0x3 << 12), 0);
	HT_CHECK_EQ(wr(MSR_IA32_PERF_GLOBAL_CTRL, 1ull << 34), X86_VEC_GP);
	HT_CHECK_EQ(wr(MSR_IA32_PERF_GLOBAL_CTRL, 1ull << 35), 0);
	HT_CHECK_EQ(pmu_hw_rdpmc((1u << 30) | 2, &v), X86_VEC_GP);
	HT_CHECK_EQ(pmu_hw_rdpmc((1u << 30) | 3, &v), 0);
}

HT_TEST(global_ctrl_reset_and_gating)
{
	model_init(MODEL_V4, false);
	HT_CHECK_EQ(rd(MSR_IA32_PERF_GLOBAL_CTRL), 0xf); /* RESET: GP bits set, fixed clear */
	wr(MSR_IA32_PERFEVTSEL0, 0x4300c0);
	wr((MSR_IA32_PERFEVTSEL0 + 1), 0x4300c0);
	wr(MSR_IA32_PERF_GLOBAL_CTRL, 0x1); /* PMC1 gated off */
	model_tick_loop(100);
	HT_CHECK_EQ(rd(MSR_IA32_PMC0), 300);
	HT_CHECK_EQ(rd((MSR_IA32_PMC0 + 1)), 0);
	wr(MSR_IA32_FIXED_CTR_CTRL, 0x3);
	model_tick_loop(1);
	HT_CHECK_EQ(rd(MSR_IA32_FIXED_CTR0), 0); /* GLOBAL_CTRL bit 32 clear */
	wr(MSR_IA32_PERF_GLOBAL_CTRL, 1ull << 32);
	model_tick_loop(1);
	HT_CHECK_EQ(rd(MSR_IA32_FIXED_CTR0), 3);
}

HT_TEST(ring_filtering)
{
	model_init(MODEL_V4, false);
	wr(MSR_IA32_PERF_GLOBAL_CTRL, 0x3);
	wr(MSR_IA32_PERFEVTSEL0, 0x4100c0 | (0ull << 17)); /* USR only */
	wr((MSR_IA32_PERFEVTSEL0 + 1), 0x4200c0);          /* OS only */
	model_set_cpl(3);
	model_tick_loop(10);
	model_set_cpl(0);
	model_tick_loop(1);
	HT_CHECK_EQ(rd(MSR_IA32_PMC0), 30);
	HT_CHECK_EQ(rd((MSR_IA32_PMC0 + 1)), 3);
}

HT_TEST(overflow_status_ovf_ctrl_and_pmi)
{
	model_init(MODEL_V4, true);
	wr(MSR_IA32_A_PMC0, 0xfffffffffffeull);
	wr(MSR_IA32_PERFEVTSEL0, 0x5300c0); /* INT set */
	wr(MSR_IA32_PERF_GLOBAL_CTRL, 0x1);
	model_tick_loop(1); /* +3: wraps to 1 */
	HT_CHECK_EQ(rd(MSR_IA32_PMC0), 1);
	HT_CHECK_EQ(rd(MSR_IA32_PERF_GLOBAL_STATUS), 1);
	HT_CHECK_EQ(model_pmi_count(0), 1);
	HT_CHECK_EQ(wr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1), 0);
	HT_CHECK_EQ(rd(MSR_IA32_PERF_GLOBAL_STATUS), 0);
	/* Without INT: status but no PMI. */
	wr(MSR_IA32_PERFEVTSEL0, 0x4300c0);
	wr(MSR_IA32_A_PMC0, 0xffffffffffffull);
	model_tick_loop(1);
	HT_CHECK_EQ(rd(MSR_IA32_PERF_GLOBAL_STATUS), 1);
	HT_CHECK_EQ(model_pmi_count(0), 1);
	/* v4 STATUS_SET sets, OVF_CTRL clears. */
	HT_CHECK_EQ(wr(MSR_IA32_PERF_GLOBAL_STATUS_SET, 0x2), 0);
	HT_CHECK_EQ(rd(MSR_IA32_PERF_GLOBAL_STATUS), 3);
	HT_CHECK_EQ(wr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1ull << 40), X86_VEC_GP); /* no FIXED_CTR8 */
}

HT_TEST(freeze_on_pmi_v4_and_legacy)
{
	model_init(MODEL_V4, true);
	wr(MSR_IA32_DEBUGCTL, 1ull << DEBUGCTL_FREEZE_PERFMON_ON_PMI_BIT);
	wr(MSR_IA32_A_PMC0, 0xffffffffffffull);
	wr(MSR_IA32_PERFEVTSEL0, 0x5300c0);
	wr(MSR_IA32_PERF_GLOBAL_CTRL, 0x1);
	model_tick_loop(1);
	HT_CHECK_EQ(rd(MSR_IA32_PERF_GLOBAL_STATUS), 1 | (1ull << 59));
	HT_CHECK_EQ(rd(MSR_IA32_PERF_GLOBAL_CTRL), 1); /* v4 leaves GLOBAL_CTRL */
	model_tick_loop(1);
	HT_CHECK_EQ(rd(MSR_IA32_PMC0), 2); /* frozen */
	wr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1ull << 59);
	model_tick_loop(1);
	HT_CHECK_EQ(rd(MSR_IA32_PMC0), 5);

	model_init(MODEL_V2, false);
	wr(MSR_IA32_DEBUGCTL, 1ull << DEBUGCTL_FREEZE_PERFMON_ON_PMI_BIT);
	wr(MSR_IA32_PMC0, 0xffffffffull); /* sign-extends to -1 */
	wr(MSR_IA32_PERFEVTSEL0, 0x5300c0);
	wr(MSR_IA32_PERF_GLOBAL_CTRL, 0x1);
	model_tick_loop(1);
	HT_CHECK_EQ(rd(MSR_IA32_PERF_GLOBAL_CTRL), 0); /* legacy freeze clears it */
	HT_CHECK_EQ(wr(MSR_IA32_DEBUGCTL, 1ull << 2), X86_VEC_GP);
}

HT_TEST(inuse_follows_evtsel_and_fixed_ctrl)
{
	model_init(MODEL_V4, false);
	HT_CHECK_EQ(rd(MSR_IA32_PERF_GLOBAL_INUSE), 0);
	wr((MSR_IA32_PERFEVTSEL0 + 2), 0x3c); /* event code only, EN clear: in use */
	wr(MSR_IA32_FIXED_CTR_CTRL, 0x20);    /* FIXED_CTR1 USR */
	HT_CHECK_EQ(rd(MSR_IA32_PERF_GLOBAL_INUSE), 0x4 | (1ull << 33));
	wr((MSR_IA32_PERFEVTSEL0 + 2), 0x10003c); /* INT */
	HT_CHECK_EQ(rd(MSR_IA32_PERF_GLOBAL_INUSE), 0x4 | (1ull << 33) | (1ull << 63));
	HT_CHECK_EQ(wr(MSR_IA32_PERF_GLOBAL_INUSE, 0), X86_VEC_GP);
}

HT_TEST(rdpmc_index_and_pce)
{
	uint64_t v;
	model_init(MODEL_V4, false);
	wr(MSR_IA32_PMC0 + 3, 0x1234);
	HT_CHECK_EQ(pmu_hw_rdpmc(3, &v), 0);
	HT_CHECK_EQ(v, 0x1234);
	HT_CHECK_EQ(pmu_hw_rdpmc(4, &v), X86_VEC_GP);
	HT_CHECK_EQ(pmu_hw_rdpmc(0x100, &v), X86_VEC_GP); /* ECX[15:8] must be 0 */
	HT_CHECK_EQ(pmu_hw_rdpmc((1u << 30) | 3, &v), X86_VEC_GP);
	HT_CHECK_EQ(pmu_hw_rdpmc((1u << 31) | 3, &v), X86_VEC_GP); /* ECX[31] reserved: architectural PMU */
	model_set_cpl(3);
	HT_CHECK_EQ(pmu_hw_rdpmc(3, &v), X86_VEC_GP);
	model_set_cr4_pce(true);
	HT_CHECK_EQ(pmu_hw_rdpmc(3, &v), 0);
	model_set_cpl(0);
	model_init(MODEL_V2, false);
	HT_CHECK_EQ(pmu_hw_rdpmc(1u << 31, &v), X86_VEC_GP); /* v1/v2 too */
	/* The model's fast-read path (pre-architectural parts), by hand. */
	struct model_cpu_config c = *model_config(0);
	c.fast_rdpmc = true;
	model_init_custom(&c, 1);
	model_poke(0, MSR_IA32_PMC0, 0xff7abcdef0ull);
	HT_CHECK_EQ(pmu_hw_rdpmc(1u << 31, &v), 0);
	HT_CHECK_EQ(v, 0x7abcdef0);
}

HT_TEST(cmask_inv_edge_per_cycle)
{
	/* 8 cycles retiring 0,2,3,0,1,4,0,0 instructions. */
	static const uint8_t per[] = { 0, 2, 3, 0, 1, 4, 0, 0 };
	struct model_work w = { .instructions = 10, .cycles = 8, .retire_per_cycle = per, .ncycles = 8 };
	model_init(MODEL_V4, false);
	wr(MSR_IA32_PERF_GLOBAL_CTRL, 0xf);
	wr(MSR_IA32_PERFEVTSEL0, 0x024300c0);       /* cmask 2: cycles with >= 2 */
	wr((MSR_IA32_PERFEVTSEL0 + 1), 0x01c300c0); /* cmask 1 inv: cycles with 0 */
	wr((MSR_IA32_PERFEVTSEL0 + 2), 0x014700c0); /* cmask 1 edge: starts of retiring runs */
	wr((MSR_IA32_PERFEVTSEL0 + 3), 0x4300c0);
	model_tick(&w);
	HT_CHECK_EQ(rd(MSR_IA32_PMC0), 3);
	HT_CHECK_EQ(rd((MSR_IA32_PMC0 + 1)), 4);
	HT_CHECK_EQ(rd((MSR_IA32_PMC0 + 2)), 2);
	HT_CHECK_EQ(rd((MSR_IA32_PMC0 + 3)), 10);
}

HT_TEST(write_trace_records_faults)
{
	model_init(MODEL_V2, false);
	model_trace_clear();
	wr(MSR_IA32_PERFEVTSEL0, 0x4300c0);
	wr(MSR_IA32_PERFEVTSEL0 + 5, 0);
	HT_CHECK_EQ(model_trace_len(), 2);
	HT_CHECK_EQ(model_trace_at(0)->msr, MSR_IA32_PERFEVTSEL0);
	HT_CHECK_EQ(model_trace_at(0)->fault, 0);
	HT_CHECK_EQ(model_trace_at(1)->fault, X86_VEC_GP);
}

HT_TEST(hybrid_cpuid_per_cpu)
{
	struct cpuid_regs r;
	model_init(MODEL_HYBRID, false);
	model_set_cpu(0);
	pmu_hw_cpuid(0x1a, 0, &r);
	HT_CHECK_EQ(r.eax >> 24, 0x40);
	pmu_hw_cpuid(0x23, 1, &r);
	HT_CHECK_EQ(r.eax, 0xff);
	model_set_cpu(3);
	pmu_hw_cpuid(0x1a, 0, &r);
	HT_CHECK_EQ(r.eax >> 24, 0x20);
	pmu_hw_cpuid(0x23, 1, &r);
	HT_CHECK_EQ(r.eax, 0x3f);
	HT_CHECK_EQ(r.ebx, 0x7);
	uint64_t v;
	HT_CHECK_EQ(pmu_hw_rdmsr(MSR_IA32_PMC0 + 6, &v), X86_VEC_GP);
	model_set_cpu(0);
	HT_CHECK_EQ(pmu_hw_rdmsr(MSR_IA32_PMC0 + 6, &v), 0);
}

HT_MAIN("pmu_model")
