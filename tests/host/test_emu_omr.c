/* Host tests of the emulated PMU's off-module response and Diamond Rapids
 * shape (emu/model/x86-pmu-omr.c) and its level-2 PERF_METRICS bytes
 * (emu/model/x86-pmu-td2.c), with the defects that break them. Each case
 * is one rule, with the source the model quotes for it. */
#include <string.h>

#include "emu/model/x86-pmu.h"
#include "tests/host/emu_cpu.h"
#include "tests/host/hosttest.h"

#define OMR(n) (0x3e0u + (n))
#define SEL(ev, umask) ((uint64_t)(ev) | (uint64_t)(umask) << 8 | 1ull << 16 | 1ull << 17 | 1ull << 22)
#define MISS 0xfffff000000001ull  /* Linux's LLC-load-misses on Panther Cove */
#define ANY 0x4000000000000001ull /* LLC-loads */

static X86PMUState st;

static void dmr(X86PMUDefect d)
{
	X86PMUConfig c;

	HT_CHECK(x86pmu_shape_named("diamondrapids", &c) != NULL, "no diamondrapids shape");
	c.defect = d;
	HT_CHECK(x86pmu_config_check(&c) == NULL, "refused: %s", x86pmu_config_check(&c));
	x86pmu_reset(&st, &c);
}

/* The model st's registers: 0, X86_VEC_GP, or -1 (tests/host/emu_cpu.h). */
#define rd(msr, v) emu_state_rdmsr(&st, (msr), (v))
#define wr(msr, v) emu_state_wrmsr(&st, (msr), (v))
#define rdv(msr) emu_state_rdv(&st, (msr))

HT_TEST(dmr_shape)
{
	uint32_t a = 0, b = 0, c = 0, d = 0;

	dmr(X86PMU_DEFECT_NONE);
	HT_CHECK_EQ(st.cfg.family, 19);
	HT_CHECK(!st.cfg.hybrid && st.cfg.td_level2, "one core type, level-2 metrics");
	HT_CHECK(st.cfg.offcore.omr && st.cfg.offcore.nmsrs == 4, "four OMR MSRs");
	x86pmu_cpuid(&st, 0x0a, 0, &a, &b, &c, &d);
	HT_CHECK(a == 0x08300806 && c == 0xf && (d & 0x1f) == 4, "leaf 0AH %08x-%x-%x-%x", a, b, c, d);
	x86pmu_cpuid(&st, 0x23, 1, &a, &b, &c, &d);
	HT_CHECK(a == 0xff && b == 0xf, "23.1 %x-%x", a, b);
}

/* Linux 4e955c08d6dc/d345b6bb8860: OMR_0-3 at 0x3E0, bits 15:0, 55:32, 62;
 * the RSP MSRs are not the part's. */
HT_TEST(omr_msrs)
{
	uint64_t v;

	dmr(X86PMU_DEFECT_NONE);
	for (unsigned i = 0; i < 4; i++) {
		HT_CHECK_EQ(wr(OMR(i), MISS + i), 0);
		HT_CHECK_EQ(wr(OMR(i), 1ull << 16), X86_VEC_GP);
		HT_CHECK_EQ(wr(OMR(i), 1ull << 63), X86_VEC_GP);
	}
	for (unsigned i = 0; i < 4; i++)
		HT_CHECK_EQ(rdv(OMR(i)), MISS + i);
	HT_CHECK_EQ(rd(0x1a6, &v), X86_VEC_GP);
	HT_CHECK_EQ(rd(0x1a7, &v), X86_VEC_GP);
	HT_CHECK(x86pmu_rdmsr(&st, OMR(4), &v) == X86PMU_NOT_MINE, "0x3E4 is no PMU register");
	/* A shape without OMR has none. */
	X86PMUConfig c;
	x86pmu_shape_named("lunarlake-p", &c);
	x86pmu_reset(&st, &c);
	HT_CHECK_EQ(rd(OMR(0), &v), X86_VEC_GP);
}

/* Event 0x2A umask bit n counts through OMR n: an L3 miss answers with
 * bits 41 and 48, a hit with 34 and 48, bit 62 matches any response. */
static void count_four(void)
{
	uint64_t rsp[X86PMU_OFFCORE_MAX];

	wr(OMR(0), MISS), wr(OMR(1), ANY), wr(OMR(2), MISS | 2), wr(OMR(3), ANY | 2);
	for (unsigned i = 0; i < 4; i++)
		wr(0x186 + i, SEL(0x2a, 1u << i));
	wr(0x38f, 0xf);
	memcpy(rsp, st.offcore_rsp, sizeof(rsp));
	x86pmu_count_offcore(&st, X86PMU_RING_OS, rsp, X86PMU_REQ_DATA_RD, false, 10);
	x86pmu_count_offcore(&st, X86PMU_RING_OS, rsp, X86PMU_REQ_DATA_RD, true, 100);
	x86pmu_count_offcore(&st, X86PMU_RING_OS, rsp, X86PMU_REQ_RFO, true, 1000);
}

HT_TEST(omr_counts_per_msr)
{
	dmr(X86PMU_DEFECT_NONE);
	count_four();
	HT_CHECK_EQ(rdv(0xc1), 10);
	HT_CHECK_EQ(rdv(0xc2), 110);
	HT_CHECK_EQ(rdv(0xc3), 10);
	HT_CHECK_EQ(rdv(0xc4), 1110);
}

HT_TEST(omr_defects)
{
	dmr(X86PMU_DEFECT_OMR_UMASK_IGNORED);
	count_four();
	HT_CHECK_EQ(rdv(0xc2), 10); /* OMR_0's miss value, not OMR_1's any */
	HT_CHECK_EQ(rdv(0xc4), 10);
	dmr(X86PMU_DEFECT_OMR_MSRS_ALIAS);
	HT_CHECK_EQ(wr(OMR(0), MISS), 0);
	HT_CHECK_EQ(wr(OMR(2), ANY), 0);
	HT_CHECK_EQ(rdv(OMR(0)), ANY);
	HT_CHECK_EQ(rdv(OMR(2)), ANY);
}

/* PERF_METRICS level 2 from the split: heavy ops 0, mispredicts = bad
 * speculation, fetch latency = frontend bound, memory bound 0. */
HT_TEST(level2_bytes)
{
	dmr(X86PMU_DEFECT_NONE);
	wr(0x38d, 0x3ull << 12);
	HT_CHECK_EQ(wr(0x38f, 1ull << 35 | 1ull << 48), 0);
	for (unsigned i = 0; i < 300; i++) {
		X86PMUInsn in = { .cycles = 1 };
		in.ev[X86PMU_EV_INSTRUCTIONS] = 1;
		in.ev[X86PMU_EV_BRANCHES] = i < 30;
		in.ev[X86PMU_EV_BRANCH_MISSES] = i < 30;
		x86pmu_count_insn(&st, X86PMU_RING_OS, &in);
	}
	uint64_t m = rdv(0x329);
	unsigned b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (m >> (8 * i)) & 0xff;
	HT_CHECK(b[1] && b[2], "bad speculation %u, frontend %u", b[1], b[2]);
	HT_CHECK(b[4] == 0 && b[5] == b[1] && b[6] == b[2] && b[7] == 0, "level 2 %u %u %u %u of %u %u %u %u",
		 b[4], b[5], b[6], b[7], b[0], b[1], b[2], b[3]);
	dmr(X86PMU_DEFECT_TD_LEVEL2_OVER_PARENT);
	wr(0x38d, 0x3ull << 12);
	wr(0x38f, 1ull << 35 | 1ull << 48);
	X86PMUInsn in = { .cycles = 1 };
	in.ev[X86PMU_EV_INSTRUCTIONS] = 1;
	x86pmu_count_insn(&st, X86PMU_RING_OS, &in);
	HT_CHECK_EQ((rdv(0x329) >> 32) & 0xff, 0xff);
}

HT_MAIN("emu_omr")
