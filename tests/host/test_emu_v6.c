/* Host tests of the emulated PMU's newest registers (emu/model): version 6
 * and CPUID.23H (emu/model/x86-pmu-v6.c) and AMD's HostOnly/GuestOnly,
 * StatusSet and LbrAndPmcFreeze (emu/model/x86-pmu-amd.c). Each case is
 * one rule, with the source the model quotes for it. */
#include <string.h>

#include "emu/model/x86-pmu.h"
#include "tests/host/emu_cpu.h"
#include "tests/host/hosttest.h"

static X86PMUState st;

static void shape(const char *name)
{
	X86PMUConfig c;

	HT_CHECK(x86pmu_shape_named(name, &c) != NULL, "no shape %s", name);
	HT_CHECK(x86pmu_config_check(&c) == NULL, "%s refused: %s", name, x86pmu_config_check(&c));
	x86pmu_reset(&st, &c);
}

static void with(void (*edit)(X86PMUConfig *))
{
	X86PMUConfig c = st.cfg;

	edit(&c);
	HT_CHECK(x86pmu_config_check(&c) == NULL, "config refused: %s", x86pmu_config_check(&c));
	x86pmu_reset(&st, &c);
}

static void reserved_gp(X86PMUConfig *c)
{
	c->amd_reserved_gp = true;
}

static void amd_v2(void)
{
	X86PMUConfig c;

	HT_CHECK(x86pmu_shape(NULL, X86PMU_VENDOR_AMD, 0x19, 0x11, &c) != NULL, "Zen 4 shape");
	x86pmu_reset(&st, &c);
}

/* The model st's registers: 0, X86_VEC_GP, or -1 (tests/host/emu_cpu.h). */
#define rd(msr, v) emu_state_rdmsr(&st, (msr), (v))
#define wr(msr, v) emu_state_wrmsr(&st, (msr), (v))
#define rdv(msr) emu_state_rdv(&st, (msr))

static int rdpmc(uint32_t ecx, unsigned cpl, uint64_t *v)
{
	return x86pmu_rdpmc(&st, ecx, cpl, true, v) == X86PMU_OK ? 0 : X86_VEC_GP;
}

/* n one-cycle instructions at CPL 0, b of them mispredicted branches. */
static unsigned run(unsigned n, unsigned b)
{
	unsigned pmis = 0;

	for (unsigned i = 0; i < n; i++) {
		X86PMUInsn in = { .cycles = 1 };
		in.ev[X86PMU_EV_INSTRUCTIONS] = 1;
		in.ev[X86PMU_EV_BRANCHES] = i < b;
		in.ev[X86PMU_EV_BRANCH_MISSES] = i < b;
		pmis += x86pmu_count_insn(&st, X86PMU_RING_OS, &in);
	}
	return pmis;
}

static void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
	r[0] = r[1] = r[2] = r[3] = 0;
	x86pmu_cpuid(&st, leaf, sub, &r[0], &r[1], &r[2], &r[3]);
}

#define SEL(ev, umask) ((uint64_t)(ev) | (uint64_t)(umask) << 8 | 1ull << 16 | 1ull << 17 | 1ull << 22)
#define SEL_INSTR SEL(0xc0, 0)
#define INT (1ull << 20)
#define GP_CTR(n) (0x1900u + 4 * (n))
#define GP_CFG_A(n) (0x1901u + 4 * (n))
#define GP_CFG_B(n) (0x1902u + 4 * (n))
#define GP_CFG_C(n) (0x1903u + 4 * (n))
#define FX_CTR(m) (0x1980u + 4 * (m))
#define FX_CFG_B(m) (0x1982u + 4 * (m))

/* --- CPUID --- */

HT_TEST(leaf_23_reads_as_the_lunar_lake_dumps)
{
	uint32_t r[4];

	/* InstLatx64's B06D1 dump: Lion Cove 23.0 = B-3-0, 23.1 = 3FF/F, 23.3 = 1DFF. */
	shape("lunarlake-p");
	cpuid(0x0a, 0, r);
	HT_CHECK(r[0] == 0x0d300806 && r[1] == 0x280 && r[2] == 0x7 && r[3] == 0x8603,
		 "leaf 0AH %08x-%x-%x-%x", r[0], r[1], r[2], r[3]);
	cpuid(0x23, 0, r);
	HT_CHECK(r[0] == 0xb && r[1] == 3 && r[2] == 0 && r[3] == 0, "23.0 %x-%x-%x-%x", r[0], r[1], r[2],
		 r[3]);
	cpuid(0x23, 1, r);
	HT_CHECK(r[0] == 0x3ff && r[1] == 0xf, "23.1 %x-%x", r[0], r[1]);
	cpuid(0x23, 2, r);
	HT_CHECK(!r[0] && !r[1] && !r[2] && !r[3], "no auto counter reload on Lion Cove");
	cpuid(0x23, 3, r);
	HT_CHECK_EQ(r[0], 0x1dff);
	cpuid(0x07, 1, r);
	HT_CHECK_EQ(r[0], 1u << 8); /* ArchPerfmonExt */
	cpuid(0x1a, 0, r);
	HT_CHECK_EQ(r[0] >> 24, 0x40);

	/* Skymont: 23.0 = F-3, 23.1 = FF/77, 23.2 = FC/3, FC/3, 23.3 = 1F7F. */
	shape("lunarlake-e");
	cpuid(0x23, 0, r);
	HT_CHECK(r[0] == 0xf && r[1] == 3, "23.0 %x-%x", r[0], r[1]);
	cpuid(0x23, 1, r);
	HT_CHECK(r[0] == 0xff && r[1] == 0x77, "23.1 %x-%x", r[0], r[1]);
	cpuid(0x23, 2, r);
	HT_CHECK(r[0] == 0xfc && r[1] == 0x3 && r[2] == 0xfc && r[3] == 0x3, "23.2 %x-%x-%x-%x", r[0], r[1],
		 r[2], r[3]);
	cpuid(0x23, 3, r);
	HT_CHECK_EQ(r[0], 0x1f7f);
	cpuid(0x1a, 0, r);
	HT_CHECK_EQ(r[0] >> 24, 0x20);
}

HT_TEST(lunar_lake_architectural_lbrs_as_the_dump)
{
	static const char *const names[] = { "lunarlake-p", "lunarlake-e" };
	uint32_t r[4];
	unsigned i;

	for (i = 0; i < 2; i++) {
		/* B06D1: 07H EDX[19]; 1CH 4000000B-7-000F0007 (ECX and the E-core's EAX[31] not emulated). */
		shape(names[i]);
		cpuid(0x07, 0, r);
		HT_CHECK(r[3] >> 19 & 1, "%s: CPUID.07H:EDX[19] (architectural LBRs) clear", names[i]);
		cpuid(0x1c, 0, r);
		HT_CHECK(r[0] == 0x4000000b && r[1] == 7 && r[2] == 0 && r[3] == 0, "%s: 1CH %08x-%x-%x-%x",
			 names[i], r[0], r[1], r[2], r[3]);
		HT_CHECK_EQ(rdv(0x345) & 0x3f, 0x3f); /* PERF_CAPABILITIES: LBR format 3FH */
		/* IA32_LBR_DEPTH starts at the deepest, takes 8, 16 and 32, not 24. */
		HT_CHECK_EQ(rdv(0x14cf), 32);
		HT_CHECK_EQ(wr(0x14cf, 16), 0);
		HT_CHECK_EQ(rdv(0x14cf), 16);
		HT_CHECK_EQ(wr(0x14cf, 24), X86_VEC_GP);
		HT_CHECK_EQ(wr(0x14cf, 32), 0);
	}
}

/* --- The version 6 MSR map --- */

HT_TEST(v6_aliases_are_the_legacy_registers)
{
	uint64_t v;

	shape("lunarlake-p");
	/* GP n: CTR 0x1900 + 4n is IA32_PMCn / IA32_A_PMCn, CFG_A is PERFEVTSELn. */
	HT_CHECK_EQ(wr(GP_CTR(3), 0x123456789aull), 0);
	HT_CHECK_EQ(rdv(0xc1 + 3), 0x123456789aull);
	HT_CHECK_EQ(rdv(0x4c1 + 3), 0x123456789aull);
	HT_CHECK_EQ(wr(0xc1 + 5, 0x80000001ull), 0); /* legacy: sign-extends */
	HT_CHECK_EQ(rdv(GP_CTR(5)), 0xffff80000001ull);
	HT_CHECK_EQ(wr(GP_CTR(5), 1ull << 48), X86_VEC_GP); /* full width, past it #GP */
	HT_CHECK_EQ(wr(0x186 + 2, SEL_INSTR), 0);
	HT_CHECK_EQ(rdv(GP_CFG_A(2)), SEL_INSTR);
	HT_CHECK_EQ(wr(GP_CFG_A(2), SEL(0x3c, 0)), 0);
	HT_CHECK_EQ(rdv(0x186 + 2), SEL(0x3c, 0));
	/* Fixed m: CTR 0x1980 + 4m is IA32_FIXED_CTRm; no CFG_A. */
	HT_CHECK_EQ(wr(FX_CTR(3), 0x55), 0);
	HT_CHECK_EQ(rdv(0x309 + 3), 0x55);
	HT_CHECK_EQ(rd(0x1981 + 4 * 3, &v), X86_VEC_GP);
	/* GP 8-9 exist only in the new map; 10 and fixed 4 not at all here. */
	HT_CHECK_EQ(wr(GP_CTR(9), 7), 0);
	HT_CHECK_EQ(rdv(GP_CTR(9)), 7);
	HT_CHECK_EQ(rd(0xc1 + 9, &v), -1); /* not the model's: IA32_PMC8/9 are not defined */
	HT_CHECK_EQ(rd(GP_CTR(10), &v), X86_VEC_GP);
	HT_CHECK_EQ(rd(FX_CTR(4), &v), X86_VEC_GP);
	/* RDPMC reads counters 8-9 by index. */
	HT_CHECK_EQ(rdpmc(9, 0, &v), 0);
	HT_CHECK_EQ(v, 7);
	/* No ACR on Lion Cove: CFG_B/CFG_C raise #GP. */
	HT_CHECK_EQ(wr(GP_CFG_B(2), 0), X86_VEC_GP);
	HT_CHECK_EQ(rd(GP_CFG_C(2), &v), X86_VEC_GP);
	/* GLOBAL_CTRL takes the ten GP enables; its RESET value has them. */
	HT_CHECK_EQ(rdv(0x38f), 0x3ff);
	HT_CHECK_EQ(wr(0x38f, 0x3ffull | 0xfull << 32), 0);
	HT_CHECK_EQ(wr(0x38f, 1ull << 10), X86_VEC_GP);
}

static void v5(X86PMUConfig *c)
{
	c->version = 5;
	c->leaf23_gp = 0xff;
}

HT_TEST(v6_map_needs_version_6)
{
	uint64_t v;

	shape("lunarlake-p");
	with(v5);
	HT_CHECK_EQ(rd(GP_CTR(0), &v), X86_VEC_GP);
	HT_CHECK_EQ(wr(GP_CFG_A(0), 0), X86_VEC_GP);
	HT_CHECK_EQ(rdv(0xc1), 0);
}

/* --- Event-select extensions --- */

static void ud(X86PMUConfig *c)
{
	c->v6_features |= X86PMU_V6_RDPMC_USER_DISABLE;
}
static void no_ext(X86PMUConfig *c)
{
	c->v6_features = 0;
}

HT_TEST(umask2_eq_and_user_disable_bits_follow_leaf_23)
{
	uint64_t umask2 = 0x02ull << 40, eq = 1ull << 36, udb = 1ull << 37;

	shape("lunarlake-p");
	HT_CHECK_EQ(wr(0x186, SEL(0xd1, 1) | umask2), 0);
	HT_CHECK_EQ(rdv(GP_CFG_A(0)), SEL(0xd1, 1) | umask2);
	HT_CHECK_EQ(wr(0x186, SEL_INSTR | eq | 1ull << 24), 0);
	HT_CHECK_EQ(wr(0x186, SEL_INSTR | udb), X86_VEC_GP); /* EBX[2] clear */
	HT_CHECK_EQ(wr(0x38d, 1ull << 33), X86_VEC_GP);
	HT_CHECK_EQ(wr(0x186, SEL_INSTR | 1ull << 38), X86_VEC_GP); /* 38, 39 stay reserved */
	with(ud);
	HT_CHECK_EQ(wr(0x186, SEL_INSTR | udb), 0);
	HT_CHECK_EQ(wr(0x38d, 1ull << 33 | 1ull << 45), 0); /* fixed 0 and 3 */
	HT_CHECK_EQ(wr(0x38d, 1ull << 49), X86_VEC_GP);     /* fixed 4 does not exist */
	with(no_ext);
	HT_CHECK_EQ(wr(0x186, SEL_INSTR | umask2), X86_VEC_GP);
	HT_CHECK_EQ(wr(0x186, SEL_INSTR | eq), X86_VEC_GP);
}

HT_TEST(rdpmc_user_disable_reads_0_at_cpl_3_only)
{
	uint64_t v;

	shape("lunarlake-p");
	with(ud);
	wr(GP_CTR(1), 1234);
	wr(GP_CFG_A(1), SEL_INSTR | 1ull << 37);
	wr(FX_CTR(0), 99);
	wr(0x38d, 1ull << 33);
	HT_CHECK_EQ(rdpmc(1, 0, &v), 0);
	HT_CHECK_EQ(v, 1234);
	HT_CHECK_EQ(rdpmc(1, 3, &v), 0);
	HT_CHECK_EQ(v, 0);
	HT_CHECK_EQ(rdpmc(1u << 30, 3, &v), 0);
	HT_CHECK_EQ(v, 0);
	HT_CHECK_EQ(rdpmc(1u << 30, 0, &v), 0);
	HT_CHECK_EQ(v, 99);
	wr(GP_CFG_A(1), SEL_INSTR);
	HT_CHECK_EQ(rdpmc(1, 3, &v), 0);
	HT_CHECK_EQ(v, 1234);
	/* CR4.PCE still rules first: #GP at CPL 3 without it. */
	HT_CHECK_EQ(x86pmu_rdpmc(&st, 1, 3, false, &v), X86PMU_GP);
}

HT_TEST(eq_counts_cycles_with_exactly_cmask_events)
{
	shape("lunarlake-p");
	/* CMASK 1 + EQ on instructions: the cycles with exactly one. */
	wr(GP_CFG_A(0), SEL_INSTR | 1ull << 24 | 1ull << 36);
	wr(GP_CFG_A(1), SEL_INSTR | 2ull << 24 | 1ull << 36);
	X86PMUInsn in = { .cycles = 3 };
	in.ev[X86PMU_EV_INSTRUCTIONS] = 1;
	for (int i = 0; i < 5; i++)
		x86pmu_count_insn(&st, X86PMU_RING_OS, &in);
	HT_CHECK_EQ(rdv(GP_CTR(0)), 5);
	HT_CHECK_EQ(rdv(GP_CTR(1)), 0);
}

/* --- Auto counter reload --- */

HT_TEST(acr_per_counter_capability_raises_gp)
{
	uint64_t v;

	shape("lunarlake-e");
	/* GP 0-1 cannot be reloaded nor cause a reload (23.2 = 0xFC). */
	HT_CHECK_EQ(wr(GP_CFG_B(0), 0), X86_VEC_GP);
	HT_CHECK_EQ(rd(GP_CFG_C(1), &v), X86_VEC_GP);
	HT_CHECK_EQ(wr(GP_CFG_B(2), 1ull << 3), 0);
	HT_CHECK_EQ(rdv(GP_CFG_B(2)), 1ull << 3);
	/* Panther Lake's fault: FX1 CFG_B <- GP0 | FX1 (Linux 43796f305078). */
	HT_CHECK_EQ(wr(FX_CFG_B(1), 0x200000001ull), X86_VEC_GP);
	HT_CHECK_EQ(wr(FX_CFG_B(1), 0x200000004ull), 0);
	HT_CHECK_EQ(wr(GP_CFG_C(2), 0x1000), 0);
	HT_CHECK_EQ(wr(GP_CFG_C(2), 1ull << 32), X86_VEC_GP); /* arch-PEBS bits: not emulated */
	/* A counter disable does not clear them (Linux commit 5ad732a56be4). */
	wr(GP_CFG_A(2), SEL_INSTR);
	wr(GP_CFG_A(2), 0);
	HT_CHECK_EQ(rdv(GP_CFG_B(2)), 1ull << 3);
}

HT_TEST(acr_reload_on_a_cause_overflow)
{
	shape("lunarlake-e");
	/* GP3 (cause) at -10; GP2 reloads to 0x1000 when GP3 overflows. */
	wr(GP_CTR(3), 0xfffffffffff6ull);
	wr(GP_CTR(2), 0x7000);
	wr(GP_CFG_B(2), 1ull << 3);
	wr(GP_CFG_C(2), 0x1000);
	wr(GP_CFG_A(2), SEL_INSTR);
	wr(GP_CFG_A(3), SEL_INSTR);
	HT_CHECK_EQ(run(25, 0), 0);
	/* GP3 wrapped at the 10th, counted 15 more; GP2 restarted then. */
	HT_CHECK_EQ(rdv(GP_CTR(3)), 15);
	HT_CHECK_EQ(rdv(GP_CTR(2)), 0x1000 + 15);
	HT_CHECK_EQ(rdv(0x38e), 1ull << 3); /* the cause's status bit */
}

HT_TEST(acr_self_reload_sets_no_status_bit)
{
	shape("lunarlake-e");
	wr(GP_CTR(4), 0xfffffffffffbull); /* -5 */
	wr(GP_CFG_B(4), 1ull << 4);
	wr(GP_CFG_C(4), 0xfffffffb); /* -5 again, sign-extended (model's choice) */
	wr(GP_CFG_A(4), SEL_INSTR | INT);
	/* Linux 1271aeccc307: no status bit, the PMI still comes with INT. */
	HT_CHECK_EQ(run(12, 0), 2);
	HT_CHECK_EQ(rdv(0x38e), 0);
	HT_CHECK_EQ(rdv(GP_CTR(4)), 0xfffffffffffbull + 2);
}

/* --- Top-down events, fixed 4-6, PERF_METRICS --- */

HT_TEST(topdown_events_and_fixed_4_to_6)
{
	shape("lunarlake-e");
	/* GP: backend 0xA4/0x02, bad speculation 0x73, frontend 0x9C/0x01, retiring 0xC2/0x02. */
	wr(GP_CFG_A(0), SEL(0xa4, 2));
	wr(GP_CFG_A(1), SEL(0x73, 0));
	wr(GP_CFG_A(2), SEL(0x9c, 1));
	wr(GP_CFG_A(3), SEL(0xc2, 2));
	wr(GP_CFG_A(4), SEL(0xe4, 1));
	wr(GP_CFG_A(5), SEL(0xa4, 1)); /* slots: 23.3 bit 7 clear on Skymont */
	wr(0x38d, 0x333ull << 16);     /* fixed 4-6, both rings */
	wr(0x38f, 0xffull | 0x70ull << 32);
	run(100, 7);
	/* The model's split of 4 slots a cycle: 1 per instruction, 1 per miss, 1 frontend. */
	HT_CHECK_EQ(rdv(GP_CTR(3)), 100);
	HT_CHECK_EQ(rdv(GP_CTR(1)), 7);
	HT_CHECK_EQ(rdv(GP_CTR(2)), 100);
	HT_CHECK_EQ(rdv(GP_CTR(0)), 400 - 100 - 7 - 100);
	HT_CHECK_EQ(rdv(GP_CTR(4)), 0);
	HT_CHECK_EQ(rdv(GP_CTR(5)), 0);
	HT_CHECK_EQ(rdv(FX_CTR(4)), 7);
	HT_CHECK_EQ(rdv(FX_CTR(5)), 100);
	HT_CHECK_EQ(rdv(FX_CTR(6)), 100);
}

HT_TEST(perf_metrics_bytes_and_rdpmc_index)
{
	uint64_t v, m;

	shape("lunarlake-p");
	/* Lion Cove has it; Skymont (no fixed counter 3) does not. */
	HT_CHECK_EQ(wr(0x329, 0), 0);
	/* Any value is taken back (tests/host/test_emu_metrics.c). */
	HT_CHECK_EQ(wr(0x329, 1), 0);
	HT_CHECK_EQ(rdv(0x329), 1);
	HT_CHECK_EQ(wr(0x329, 0), 0);
	wr(0x38d, 0x3ull << 12);
	HT_CHECK_EQ(wr(0x38f, 1ull << 35 | 1ull << 48), 0);
	run(300, 30);
	m = rdv(0x329);
	unsigned b[4];
	for (int i = 0; i < 4; i++)
		b[i] = (m >> (8 * i)) & 0xff;
	HT_CHECK_EQ(b[0] + b[1] + b[2] + b[3], 0xff);
	/* Level 2, as Golden Cove's descendants fill it (Linux
	 * intel_pmu_init_lnc -> intel_pmu_init_glc: 8 top-down events): the
	 * split has no heavy operation and no memory-bound slot, every bad
	 * slot a mispredict and every frontend slot latency
	 * (emu/model/x86-pmu-td2.c). */
	HT_CHECK(st.cfg.td_level2, "Lion Cove fills level 2");
	HT_CHECK_EQ(m >> 32, (uint64_t)b[1] << 8 | (uint64_t)b[2] << 16);
	/* 1200 slots: retiring 300, bad 30, frontend 300, backend 570. */
	HT_CHECK_EQ(b[0], (300 * 255 + 600) / 1200);
	HT_CHECK_EQ(b[1], (30 * 255 + 600) / 1200);
	HT_CHECK_EQ(rdpmc(1u << 29, 0, &v), 0);
	HT_CHECK_EQ(v, m);
	HT_CHECK_EQ(rdv(0x309 + 3), 1200);
	/* Bit 48 clear: the metrics hold still. */
	wr(0x38f, 1ull << 35);
	run(50, 0);
	HT_CHECK_EQ(rdv(0x329), m);
	HT_CHECK_EQ(wr(0x329, 0), 0);
	HT_CHECK_EQ(rdv(0x329), 0);
	shape("lunarlake-e");
	HT_CHECK_EQ(rd(0x329, &v), X86_VEC_GP);
	HT_CHECK_EQ(rdpmc(1u << 29, 0, &v), X86_VEC_GP);
	HT_CHECK_EQ(wr(0x38f, 1ull << 48), X86_VEC_GP);
}

/* --- AMD --- */

HT_TEST(amd_host_only_guest_only_follow_svm_state)
{
	static const struct {
		bool svme, guest;
		unsigned counts; /* bit per combination: none, GO, HO, HO+GO */
	} want[] = {
		{ false, false, 0x1 }, /* SVM off: only the plain counter */
		{ true, false, 0xd },  /* host: plain, HO, HO+GO */
		{ true, true, 0xb },   /* guest: plain, GO, HO+GO */
	};

	for (unsigned k = 0; k < 3; k++) {
		amd_v2();
		for (unsigned n = 0; n < 4; n++)
			HT_CHECK_EQ(wr(0xc0010200 + 2 * n, SEL_INSTR | (uint64_t)n << 40), 0);
		x86pmu_set_svm(&st, want[k].svme, want[k].guest);
		run(10, 0);
		for (unsigned n = 0; n < 4; n++)
			HT_CHECK(rdv(0xc0010201 + 2 * n) == (((want[k].counts >> n) & 1) ? 10 : 0),
				 "svme %d guest %d counter %u (HO/GO %u): %llu", want[k].svme, want[k].guest,
				 n, n, (unsigned long long)rdv(0xc0010201 + 2 * n));
	}
}

static void kvm_amd(X86PMUConfig *c)
{
	c->quirks = X86PMU_QUIRK_KVM_AMD_RESERVED_BITS_DROPPED;
}

HT_TEST(amd_kvm_drops_host_guest_bits)
{
	amd_v2();
	with(kvm_amd);
	/* KVM's reserved mask 0xfffffff000280000 takes 40/41 with it, no #GP. */
	HT_CHECK_EQ(wr(0xc0010200, SEL_INSTR | 1ull << 41), 0);
	HT_CHECK_EQ(rdv(0xc0010200), SEL_INSTR);
	run(4, 0);
	HT_CHECK_EQ(rdv(0xc0010201), 4);
}

static void freeze(X86PMUConfig *c)
{
	c->lbr_pmc_freeze = true;
}

static void no_freeze(X86PMUConfig *c)
{
	c->lbr_pmc_freeze = false;
}

HT_TEST(amd_status_set_and_lbr_pmc_freeze)
{
	uint64_t v;
	uint32_t r[4];

	amd_v2();
	/* PerfCntrGlobalStatusSet (0xC0000303) sets, StatusClr clears. */
	HT_CHECK_EQ(wr(0xc0000303, 0x4), 0);
	HT_CHECK_EQ(rdv(0xc0000300), 0x4);
	HT_CHECK_EQ(rdv(0xc0000303), 0);
	HT_CHECK_EQ(wr(0xc0000302, 0x4), 0);
	HT_CHECK_EQ(rdv(0xc0000300), 0);
	/* Without LbrAndPmcFreeze (the Zen 4 shape has it: Genoa's
	 * Fn8000_0022_EAX = 7) DEBUGCTL is not the model's; bit 58 is
	 * reserved: dropped, as AMD drops reserved bits (x86-pmu-regs.c),
	 * or #GP with amd_reserved_gp. */
	with(no_freeze);
	HT_CHECK_EQ(rd(0x1d9, &v), -1);
	HT_CHECK_EQ(wr(0xc0000303, 1ull << 58), 0);
	HT_CHECK_EQ(rdv(0xc0000300), 0);
	with(reserved_gp);
	HT_CHECK_EQ(wr(0xc0000303, 1ull << 58), X86_VEC_GP);
	with(freeze);
	cpuid(0x80000022, 0, r);
	HT_CHECK_EQ(r[0], 0x7); /* PerfMonV2, LbrExtV2 (the Zen 4 shape), LbrAndPmcFreeze */
	HT_CHECK_EQ(wr(0x1d9, 1ull << 11), 0);
	HT_CHECK_EQ(wr(0x1d9, 1ull << 12), X86_VEC_GP);
	wr(0xc0010201, 0xfffffffffffeull);
	wr(0xc0010200, SEL_INSTR | INT);
	wr(0xc0010203, 0);
	wr(0xc0010202, SEL_INSTR);
	HT_CHECK_EQ(run(5, 0), 1);
	/* LbrFreeze at the PMI; every counter held from then on. */
	HT_CHECK_EQ(rdv(0xc0000300), 1ull << 58 | 1);
	HT_CHECK_EQ(rdv(0xc0010201), 0);
	HT_CHECK_EQ(rdv(0xc0010203), 2);
	HT_CHECK_EQ(wr(0xc0000302, 1ull << 58 | 1), 0);
	run(3, 0);
	HT_CHECK_EQ(rdv(0xc0010203), 5);
}

/* --- Defects break what they say --- */

static X86PMUDefect defect;
static void set_defect(X86PMUConfig *c)
{
	c->defect = defect;
}
static void broken(X86PMUDefect d)
{
	defect = d;
	with(set_defect);
}

HT_TEST(new_defects_break_what_they_say)
{
	uint64_t v;

	shape("lunarlake-p");
	broken(X86PMU_DEFECT_V6_ALIAS_WRAPS_PAST_7);
	wr(0xc1 + 1, 0x42);
	HT_CHECK_EQ(rdv(GP_CTR(9)), 0x42);
	HT_CHECK_EQ(rdv(GP_CTR(1)), 0x42);

	shape("lunarlake-p");
	broken(X86PMU_DEFECT_EVTSEL_EXTENSIONS_REFUSED);
	HT_CHECK_EQ(wr(0x186, SEL_INSTR | 1ull << 36), X86_VEC_GP);

	shape("lunarlake-p");
	with(ud);
	broken(X86PMU_DEFECT_RDPMC_USER_DISABLE_IGNORED);
	wr(GP_CTR(0), 5);
	wr(GP_CFG_A(0), 1ull << 37);
	HT_CHECK(rdpmc(0, 3, &v) == 0 && v == 5, "ignored at CPL 3: %llu", (unsigned long long)v);

	shape("lunarlake-e");
	broken(X86PMU_DEFECT_ACR_CAUSE_UNCHECKED);
	HT_CHECK_EQ(wr(GP_CFG_B(2), 1), 0);

	shape("lunarlake-e");
	broken(X86PMU_DEFECT_ACR_RELOAD_IGNORED);
	wr(GP_CTR(3), 0xfffffffffffeull);
	wr(GP_CFG_B(2), 1ull << 3);
	wr(GP_CFG_C(2), 0x1000);
	wr(GP_CFG_A(2), SEL_INSTR);
	wr(GP_CFG_A(3), SEL_INSTR);
	run(4, 0);
	HT_CHECK_EQ(rdv(GP_CTR(2)), 4);

	shape("lunarlake-e");
	broken(X86PMU_DEFECT_TOPDOWN_FIXED_STUCK);
	wr(0x38d, 0x333ull << 16);
	wr(0x38f, 0x70ull << 32);
	run(9, 0);
	HT_CHECK_EQ(rdv(FX_CTR(6)), 0);

	shape("lunarlake-p");
	broken(X86PMU_DEFECT_PERF_METRICS_RDPMC_READS_SLOTS);
	wr(0x38d, 0x3ull << 12);
	wr(0x38f, 1ull << 35 | 1ull << 48);
	run(9, 0);
	HT_CHECK(rdpmc(1u << 29, 0, &v) == 0 && v == 36, "metrics index read %llu", (unsigned long long)v);

	amd_v2();
	broken(X86PMU_DEFECT_AMD_STATUS_SET_ABSENT);
	HT_CHECK_EQ(wr(0xc0000303, 1), X86_VEC_GP);

	amd_v2();
	with(freeze);
	broken(X86PMU_DEFECT_AMD_FREEZE_STATUS_NOT_SET);
	wr(0x1d9, 1ull << 11);
	wr(0xc0010201, 0xffffffffffffull);
	wr(0xc0010200, SEL_INSTR | INT);
	HT_CHECK_EQ(run(2, 0), 1);
	HT_CHECK_EQ(rdv(0xc0000300), 1);

	amd_v2();
	broken(X86PMU_DEFECT_HOST_ONLY_COUNTS_WITHOUT_SVM);
	wr(0xc0010200, SEL_INSTR | 1ull << 41);
	run(3, 0);
	HT_CHECK_EQ(rdv(0xc0010201), 3);

	amd_v2();
	broken(X86PMU_DEFECT_RUNNING_COUNTER_WRITE_DROPPED);
	wr(0xc0010200, SEL_INSTR);
	run(3, 0);
	HT_CHECK_EQ(wr(0xc0010201, 0), 0);
	HT_CHECK_EQ(rdv(0xc0010201), 3);
}

static void ibpb(X86PMUConfig *c)
{
	c->ibpb = true;
}

/* CPUID's IBPB bits, which TCG filters, where the emulator's predictor
 * model honours IA32_PRED_CMD (Intel 07H EDX[26], AMD 8000_0008 EBX[12]). */
HT_TEST(ibpb_enumerated_on_request)
{
	uint32_t r[4];

	shape("lunarlake-p");
	cpuid(0x07, 0, r);
	HT_CHECK_EQ(r[3] >> 26 & 1, 0);
	with(ibpb);
	cpuid(0x07, 0, r);
	HT_CHECK_EQ(r[3] >> 26 & 1, 1);
	amd_v2();
	cpuid(0x80000008, 0, r);
	HT_CHECK_EQ(r[1] >> 12 & 1, 0);
	with(ibpb);
	cpuid(0x80000008, 0, r);
	HT_CHECK_EQ(r[1] >> 12 & 1, 1);
}

HT_TEST(config_check_refuses_what_is_not_emulated)
{
	X86PMUConfig c;

	x86pmu_shape_named("lunarlake-e", &c);
	c.slots_per_cycle = 2;
	HT_CHECK(x86pmu_config_check(&c) != NULL, "top-down with 2 slots a cycle accepted");
	x86pmu_shape_named("lunarlake-p", &c);
	c.version = 5;
	HT_CHECK(x86pmu_config_check(&c) != NULL, "GP 8-9 without the version 6 layout accepted");
	x86pmu_shape_named("lunarlake-p", &c);
	c.v6_features = 0x8;
	HT_CHECK(x86pmu_config_check(&c) != NULL, "23.0 EBX bit 3 accepted");
	x86pmu_shape_named("lunarlake-p", &c);
	c.version = 7;
	HT_CHECK(x86pmu_config_check(&c) != NULL, "version 7 accepted");
	x86pmu_shape(NULL, X86PMU_VENDOR_AMD, 0x17, 1, &c);
	c.lbr_pmc_freeze = true;
	HT_CHECK(x86pmu_config_check(&c) != NULL, "LbrAndPmcFreeze without PerfMonV2 accepted");
	HT_CHECK(x86pmu_shape_named("nolake", &c) == NULL, "unknown shape");
}

HT_MAIN("emu_v6")
