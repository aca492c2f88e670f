/* Host tests of the emulated PMU's register model (emu/model): each case
 * is one rule of the Intel SDM vol. 3B "Performance Monitoring" chapter or
 * AMD APM vol. 2 13.2, checked against the model QEMU runs. */
#include <string.h>

#include "emu/model/x86-pmu.h"
#include "tests/host/emu_cpu.h"
#include "tests/host/hosttest.h"

static X86PMUState st;

/* A shape by QEMU model name (Intel) with overrides applied after. */
static void intel(const char *model)
{
	X86PMUConfig c;
	const char *what = x86pmu_shape(model, X86PMU_VENDOR_INTEL, 6, 0, &c);

	HT_CHECK(what != NULL, "no shape for %s", model);
	x86pmu_reset(&st, &c);
}

static void amd(uint32_t family, uint32_t model)
{
	X86PMUConfig c;
	const char *what = x86pmu_shape(NULL, X86PMU_VENDOR_AMD, family, model, &c);

	HT_CHECK(what != NULL, "no AMD shape for family %#x", family);
	x86pmu_reset(&st, &c);
}

static void reconfigure(void (*edit)(X86PMUConfig *))
{
	X86PMUConfig c = st.cfg;

	edit(&c);
	HT_CHECK(x86pmu_config_check(&c) == NULL, "config refused: %s", x86pmu_config_check(&c));
	x86pmu_reset(&st, &c);
}

/* The model st's registers: 0, X86_VEC_GP, or -1 (tests/host/emu_cpu.h). */
#define rd(msr, v) emu_state_rdmsr(&st, (msr), (v))
#define wr(msr, v) emu_state_wrmsr(&st, (msr), (v))
#define rdv(msr) emu_state_rdv(&st, (msr))

static int rdpmc(uint32_t ecx, unsigned cpl, bool pce, uint64_t *v)
{
	return x86pmu_rdpmc(&st, ecx, cpl, pce, v) == X86PMU_OK ? 0 : X86_VEC_GP;
}

/* n instructions of one cycle each, b of them branches, at ring r. */
static unsigned run(X86PMURing r, unsigned n, unsigned b)
{
	unsigned pmis = 0;

	for (unsigned i = 0; i < n; i++) {
		X86PMUInsn in = { .cycles = 1 };
		in.ev[X86PMU_EV_INSTRUCTIONS] = 1;
		in.ev[X86PMU_EV_BRANCHES] = i < b;
		pmis += x86pmu_count_insn(&st, r, &in);
	}
	return pmis;
}

#define SEL(ev, umask) ((uint64_t)(ev) | (uint64_t)(umask) << 8 | 1ull << 16 | 1ull << 17 | 1ull << 22)
#define SEL_INSTR SEL(0xc0, 0)
#define SEL_CYC SEL(0x3c, 0)
#define INT (1ull << 20)

HT_TEST(cpuid_0a_encodes_the_shape)
{
	uint32_t a = 0, b = 0, c = 0, d = 0;

	/* SDM vol. 2A, CPUID leaf 0AH: EAX version | GP << 8 | width << 16 |
	 * EBX length << 24; EDX fixed count | width << 5 (v2+); ECX bitmap (v5). */
	intel("core2duo");
	x86pmu_cpuid(&st, 0x0a, 0, &a, &b, &c, &d);
	HT_CHECK_EQ(a, 0x07280202);
	HT_CHECK_EQ(d, 0x503);
	intel("coreduo");
	x86pmu_cpuid(&st, 0x0a, 0, &a, &b, &c, &d);
	HT_CHECK_EQ(a, 0x07280201);
	HT_CHECK_EQ(d, 0); /* reserved in version 1 */
	intel("Icelake-Server");
	x86pmu_cpuid(&st, 0x0a, 0, &a, &b, &c, &d);
	HT_CHECK_EQ(a, 0x08300805);
	HT_CHECK_EQ(d, 0x8604); /* 4 fixed x 48, AnyThread deprecated */
	/* PDCM (CPUID.01H:ECX[15]) and, for PEBS, DTES64 (ECX[2]) and DS
	 * (EDX[21]) follow the shape; other bits stay. */
	a = b = d = 0;
	c = 0x1;
	x86pmu_cpuid(&st, 1, 0, &a, &b, &c, &d);
	HT_CHECK_EQ(c, 0x8005);
	HT_CHECK_EQ(d, 1u << 21);
}

HT_TEST(no_pmu_version_0_faults_everything)
{
	uint64_t v;
	X86PMUConfig c = { .vendor = X86PMU_VENDOR_INTEL, .slots_per_cycle = 4 };

	HT_CHECK(x86pmu_config_check(&c) == NULL, "version 0 is a valid shape");
	x86pmu_reset(&st, &c);
	HT_CHECK_EQ(rd(0xc1, &v), X86_VEC_GP);
	HT_CHECK_EQ(wr(0x186, 0), X86_VEC_GP);
	HT_CHECK_EQ(rd(0x38f, &v), X86_VEC_GP);
	HT_CHECK_EQ(rdpmc(0, 0, false, &v), X86_VEC_GP);
	HT_CHECK_EQ(rd(0x10, &v), -1); /* the TSC is not the model's */
}

HT_TEST(legacy_pmc_write_sign_extends_eax)
{
	/* SDM vol. 3B, "Full-Width Writes to Performance Counter Registers":
	 * IA32_PMCx takes EAX sign-extended, EDX is ignored. */
	intel("Skylake-Client");
	HT_CHECK_EQ(wr(0xc1, 0x80000001ull), 0);
	HT_CHECK_EQ(rdv(0xc1), 0xffff80000001ull);
	HT_CHECK_EQ(wr(0xc1, 0xffffff0012345678ull), 0);
	HT_CHECK_EQ(rdv(0xc1), 0x12345678);
	intel("core2duo");
	HT_CHECK_EQ(wr(0xc2, 0xfffffffeull), 0);
	HT_CHECK_EQ(rdv(0xc2), 0xfffffffffeull);
}

static void no_fw(X86PMUConfig *c)
{
	c->perf_caps &= ~X86PMU_CAP_FW_WRITE;
}

HT_TEST(full_width_alias_needs_perf_caps_13)
{
	intel("Skylake-Client");
	HT_CHECK_EQ(rdv(0x345) & X86PMU_CAP_FW_WRITE, X86PMU_CAP_FW_WRITE);
	HT_CHECK_EQ(wr(0x4c1, 0x123456789abcull), 0);
	HT_CHECK_EQ(rdv(0xc1), 0x123456789abcull);
	HT_CHECK_EQ(wr(0x4c1, 1ull << 48), X86_VEC_GP);
	HT_CHECK_EQ(wr(0x4c5, 0), X86_VEC_GP); /* PMC4 absent */
	reconfigure(no_fw);
	HT_CHECK_EQ(wr(0x4c1, 5), X86_VEC_GP);
	uint64_t v;
	HT_CHECK_EQ(rd(0x4c1, &v), X86_VEC_GP);
}

HT_TEST(reserved_bits_and_absent_counters_fault)
{
	intel("core2duo"); /* version 2 */
	HT_CHECK_EQ(wr(0x186, 1ull << 32), X86_VEC_GP);
	HT_CHECK_EQ(wr(0x186, 1ull << 21), X86_VEC_GP); /* AnyThread before v3 */
	HT_CHECK_EQ(wr(0x38d, 0x4), X86_VEC_GP);        /* fixed AnyThread before v3 */
	HT_CHECK_EQ(wr(0x38d, 0xbbb), 0);
	HT_CHECK_EQ(wr(0x38d, 0xb000), X86_VEC_GP); /* no FIXED_CTR3 */
	HT_CHECK_EQ(wr(0x38f, 0x700000003ull), 0);
	HT_CHECK_EQ(wr(0x38f, 0x4), X86_VEC_GP); /* PMC2 absent */
	HT_CHECK_EQ(wr(0x38f, 1ull << 35), X86_VEC_GP);
	HT_CHECK_EQ(wr(0x38e, 0), X86_VEC_GP);          /* GLOBAL_STATUS read-only */
	HT_CHECK_EQ(wr(0x345, 0), X86_VEC_GP);          /* PERF_CAPABILITIES read-only */
	HT_CHECK_EQ(wr(0x391, 1), X86_VEC_GP);          /* STATUS_SET is v4 */
	HT_CHECK_EQ(wr(0x309, 1ull << 40), X86_VEC_GP); /* past the fixed width */
	HT_CHECK_EQ(wr(0x1a6, 0), X86_VEC_GP);          /* no offcore layout for this model */
	intel("Haswell");
	HT_CHECK_EQ(wr(0x186, 1ull << 21), 0); /* v3 has AnyThread */
	HT_CHECK_EQ(wr(0x38d, 0xfff), 0);
}

/* SDM vol. 3B, Skylake off-core response: the shape of a Skylake model
 * number has the RSP MSRs (valid bits as Linux intel_skl_extra_regs); a
 * value counts a request when it selects its type and the model's answer
 * (L3 hit: supplier 18, snoop 32; L3 miss: local DRAM 26, snoop 33) or
 * ANY_RESPONSE. */
HT_TEST(offcore_response_skylake)
{
	X86PMUConfig c;
	uint64_t rsp[X86PMU_OFFCORE_MAX] = { 0 };

	HT_CHECK(x86pmu_shape("Skylake-Server", X86PMU_VENDOR_INTEL, 6, 0x55, &c) != NULL, "shape");
	HT_CHECK_EQ(c.offcore.nmsrs, 2);
	x86pmu_reset(&st, &c);
	HT_CHECK_EQ(wr(0x1a6, 0x3fffc00001ull), 0);
	HT_CHECK_EQ(rdv(0x1a6), 0x3fffc00001ull);
	HT_CHECK_EQ(wr(0x1a7, 1ull << 40), X86_VEC_GP); /* past bit 37 */
	HT_CHECK_EQ(wr(0x1a7, 1ull << 13), X86_VEC_GP); /* request bits 12-14 reserved */
	/* PMC0: 0xB7 with Intel's L3_MISS.ANY_SNOOP; PMC1: 0xBB with L3_HIT.ANY_SNOOP. */
	HT_CHECK_EQ(wr(0x1a6, 0x3fbc000001ull), 0);
	HT_CHECK_EQ(wr(0x1a7, 0x3f803c0001ull), 0);
	HT_CHECK_EQ(wr(0x186, 0x4301b7), 0);
	HT_CHECK_EQ(wr(0x187, 0x4301bb), 0);
	HT_CHECK_EQ(wr(0x38f, 0x3), 0);
	rsp[0] = st.offcore_rsp[0], rsp[1] = st.offcore_rsp[1];
	x86pmu_count_offcore(&st, X86PMU_RING_OS, rsp, X86PMU_REQ_DATA_RD, false, 100);
	x86pmu_count_offcore(&st, X86PMU_RING_OS, rsp, X86PMU_REQ_DATA_RD, true, 7);
	x86pmu_count_offcore(&st, X86PMU_RING_OS, rsp, X86PMU_REQ_RFO, false, 50); /* not selected */
	HT_CHECK_EQ(rdv(0xc1), 100);
	HT_CHECK_EQ(rdv(0xc2), 7);
	HT_CHECK(x86pmu_activity(&st).offcore, "offcore counters are activity");
	/* A snoop field with no bit selected matches nothing; ANY_RESPONSE all. */
	rsp[0] = 0x4000001ull, rsp[1] = 0x10002ull;
	x86pmu_count_offcore(&st, X86PMU_RING_OS, rsp, X86PMU_REQ_DATA_RD, false, 5);
	x86pmu_count_offcore(&st, X86PMU_RING_OS, rsp, X86PMU_REQ_RFO, true, 3);
	HT_CHECK_EQ(rdv(0xc1), 100);
	HT_CHECK_EQ(rdv(0xc2), 10);
	/* Other models of the shape: no layout, the MSRs #GP. */
	HT_CHECK(x86pmu_shape("Skylake-Server", X86PMU_VENDOR_INTEL, 6, 0xaf, &c) != NULL, "shape");
	HT_CHECK_EQ(c.offcore.nmsrs, 0);
}

HT_TEST(version_1_has_en_only)
{
	uint64_t v;

	/* SDM vol. 3B, "Architectural Performance Monitoring Version 1":
	 * no fixed counters or global registers; EN starts a counter. */
	intel("coreduo");
	HT_CHECK_EQ(rd(0x38f, &v), X86_VEC_GP);
	HT_CHECK_EQ(rd(0x38d, &v), X86_VEC_GP);
	HT_CHECK_EQ(rd(0x309, &v), X86_VEC_GP);
	HT_CHECK_EQ(wr(0x186, SEL_INSTR), 0);
	run(X86PMU_RING_OS, 30, 0);
	HT_CHECK_EQ(rdv(0xc1), 30);
}

static void v5_gap(X86PMUConfig *c)
{
	c->num_fixed = 2, c->fixed_bitmap = 0xb;
}

HT_TEST(version_5_ecx_has_a_bit_per_fixed_counter)
{
	uint32_t a = 0, b = 0, c = 0, d = 0;
	X86PMUConfig cfg;

	/* Real version-5+ parts set CPUID.0AH:ECX for the fixed counters EDX
	 * counts (Raptor Lake i7-14700: ECX 7, EDX[4:0] 3); Linux takes the
	 * fixed counters from ECX alone from version 5 on. */
	intel("Icelake-Server");
	x86pmu_cpuid(&st, 0x0a, 0, &a, &b, &c, &d);
	HT_CHECK_EQ(c, 0xf);
	HT_CHECK_EQ(d & 0x1f, 4);
	intel("Skylake-Client");
	x86pmu_cpuid(&st, 0x0a, 0, &a, &b, &c, &d);
	HT_CHECK_EQ(c, 0); /* reserved before version 5 */
	cfg = st.cfg;
	cfg.version = 5, cfg.num_fixed = 3;
	x86pmu_fixed_bitmap_default(&cfg);
	HT_CHECK_EQ(cfg.fixed_bitmap, 0x7);
	cfg.version = 4;
	x86pmu_fixed_bitmap_default(&cfg);
	HT_CHECK_EQ(cfg.fixed_bitmap, 0);
}

static void width_one(X86PMUConfig *c)
{
	c->retire_width = 1;
}

/* n one-cycle instructions at CPL 3, counted cycle by cycle. */
static void run_cycles(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint32_t ev[X86PMU_EV_NUM] = { 0 };
		ev[X86PMU_EV_INSTRUCTIONS] = 1;
		x86pmu_count_cycles(&st, X86PMU_RING_USR, 1, ev);
	}
}

HT_TEST(model_specific_retired_instruction_and_uop_events)
{
	/* SDM vol. 3B event tables, Intel perfmon files: C0H/01H
	 * INST_RETIRED.PREC_DIST (Sandy Bridge-Skylake; Nehalem ANY_P),
	 * C2H/01H UOPS_RETIRED.ALL, C2H/02H RETIRE_SLOTS (Ice Lake: SLOTS);
	 * one uop per instruction in the model. */
	const char *counting[] = { "Nehalem", "SandyBridge", "Haswell", "Skylake-Client" };

	for (unsigned m = 0; m < 4; m++) {
		intel(counting[m]);
		wr(0x186, SEL(0xc0, 0x01));
		wr(0x187, SEL(0xc2, 0x01));
		wr(0x188, SEL(0xc2, 0x02));
		wr(0x189, SEL(0xc4, 0x02)); /* NEAR_CALL: not emulated */
		run(X86PMU_RING_USR, 7, 2);
		HT_CHECK_EQ(rdv(0xc1), 7);
		HT_CHECK_EQ(rdv(0xc2), 7);
		HT_CHECK_EQ(rdv(0xc3), 7);
		HT_CHECK_EQ(rdv(0xc4), 0);
	}
	/* Linux's precise cycles on Skylake (intel_pebs_aliases_precdist):
	 * PREC_DIST with INV and CMASK=16 counts every cycle. */
	intel("Skylake-Client");
	wr(0x186, SEL(0xc0, 0x01) | 1ull << 23 | 16ull << 24);
	run_cycles(9);
	HT_CHECK_EQ(rdv(0xc1), 9);
	/* With one instruction a cycle at most (QEMU's cycle model:
	 * retire_width 1), INV and CMASK=16 decide every cycle alike: such a
	 * counter counts cycles in bulk, no cycle-by-cycle mode needed; CMASK
	 * 16 without INV counts nothing. */
	intel("Skylake-Client");
	reconfigure(width_one);
	wr(0x186, SEL(0xc0, 0x01) | 1ull << 23 | 16ull << 24);
	wr(0x187, SEL(0xc2, 0x01) | 16ull << 24);
	wr(0x188, SEL(0xc0, 0x01) | 1ull << 23 | 1ull << 24); /* CMASK 1: per cycle */
	HT_CHECK(x86pmu_activity(&st).filters, "CMASK=1 still needs each cycle");
	wr(0x188, 0);
	HT_CHECK(!x86pmu_activity(&st).filters, "INV CMASK=16 is plain cycles");
	{
		uint64_t t[X86PMU_EV_NUM] = { 0 };
		t[X86PMU_EV_CYCLES] = 50;
		t[X86PMU_EV_INSTRUCTIONS] = 20;
		x86pmu_count_bulk(&st, X86PMU_RING_USR, t);
	}
	HT_CHECK_EQ(rdv(0xc1), 50);
	HT_CHECK_EQ(rdv(0xc2), 0);
	/* Ice Lake: PREC_DIST is fixed counter 0's; C2H/02H is SLOTS. */
	intel("Icelake-Server");
	wr(0x186, SEL(0xc0, 0x01));
	wr(0x187, SEL(0xc2, 0x02));
	run(X86PMU_RING_USR, 5, 0);
	HT_CHECK_EQ(rdv(0xc1), 0);
	HT_CHECK_EQ(rdv(0xc2), 5);
	/* Core 2 knows none of them. */
	intel("core2duo");
	wr(0x186, SEL(0xc0, 0x01));
	wr(0x187, SEL(0xc2, 0x01));
	run(X86PMU_RING_USR, 5, 0);
	HT_CHECK_EQ(rdv(0xc1), 0);
	HT_CHECK_EQ(rdv(0xc2), 0);
	/* AMD C1H: retired uops (K8, family 10h BKDGs), retired ops (family
	 * 17h/19h PPRs). */
	amd(0x19, 0x11);
	wr(0xc0010200, SEL(0xc1, 0));
	run(X86PMU_RING_USR, 6, 1);
	HT_CHECK_EQ(rdv(0xc0010201), 6);
}

HT_TEST(branch_events_count_taken_branches_by_kind)
{
	/* BR_INST_RETIRED.NEAR_CALL C4H/02H (Nehalem on), NEAR_RETURN 08H and
	 * NEAR_TAKEN 20H (Sandy Bridge on); AMD C4H taken branches, far
	 * transfers and interrupts included, C8H near returns. */
	const X86PMUBranch path[] = {
		X86PMU_BR_JCC,      X86PMU_BR_NEAR_REL_CALL, X86PMU_BR_NEAR_IND_CALL,
		X86PMU_BR_NEAR_RET, X86PMU_BR_NEAR_IND_JMP,  X86PMU_BR_FAR,
	};
	const char *models[] = { "Haswell", "Skylake-Client", "Icelake-Server" };
	X86PMUActivity act;

	for (unsigned m = 0; m < 3; m++) {
		intel(models[m]);
		wr(0x186, SEL(0xc4, 0x02));
		wr(0x187, SEL(0xc4, 0x08));
		wr(0x188, SEL(0xc4, 0x20));
		act = x86pmu_activity(&st);
		HT_CHECK(act.branch_kinds, "%s: branch events must be reported", models[m]);
		for (unsigned i = 0; i < 6; i++)
			x86pmu_count_branch(&st, X86PMU_RING_USR, path[i]);
		HT_CHECK_EQ(rdv(0xc1), 2);
		HT_CHECK_EQ(rdv(0xc2), 1);
		HT_CHECK_EQ(rdv(0xc3), 5);
	}
	/* Nehalem has NEAR_CALL, not NEAR_TAKEN; Core 2 neither. */
	intel("Nehalem");
	wr(0x186, SEL(0xc4, 0x02));
	wr(0x187, SEL(0xc4, 0x20));
	for (unsigned i = 0; i < 6; i++)
		x86pmu_count_branch(&st, X86PMU_RING_USR, path[i]);
	HT_CHECK_EQ(rdv(0xc1), 2);
	HT_CHECK_EQ(rdv(0xc2), 0);
	intel("core2duo");
	wr(0x186, SEL(0xc4, 0x02));
	act = x86pmu_activity(&st);
	HT_CHECK(!act.branch_kinds, "core2duo has no near-call event in the model");
	/* USR-only counters see no CPL-0 branch. */
	intel("Skylake-Client");
	wr(0x186, SEL(0xc4, 0x20) & ~(1ull << 17));
	x86pmu_count_branch(&st, X86PMU_RING_OS, X86PMU_BR_JCC);
	HT_CHECK_EQ(rdv(0xc1), 0);
	/* AMD. */
	amd(0x19, 0x11);
	wr(0xc0010200, SEL(0xc4, 0));
	wr(0xc0010202, SEL(0xc8, 0));
	for (unsigned i = 0; i < 6; i++)
		x86pmu_count_branch(&st, X86PMU_RING_USR, path[i]);
	HT_CHECK_EQ(rdv(0xc0010201), 6);
	HT_CHECK_EQ(rdv(0xc0010203), 1);
	/* Overflow raises the PMI like any other event. */
	wr(0xc0010201, 0xffffffffffffull);
	wr(0xc0010200, SEL(0xc4, 0) | INT);
	HT_CHECK_EQ(x86pmu_count_branch(&st, X86PMU_RING_USR, X86PMU_BR_JCC), 1);
	HT_CHECK_EQ(rdv(0xc0000300) & 1, 1);
}

HT_TEST(version_5_fixed_bitmap_gap)
{
	uint64_t v;

	/* "fixed counter i is supported if ECX[i] || (EDX[4:0] > i)". */
	intel("Icelake-Server");
	reconfigure(v5_gap);
	HT_CHECK_EQ(rd(0x30b, &v), X86_VEC_GP);
	HT_CHECK_EQ(rd(0x30c, &v), 0);
	HT_CHECK_EQ(rd(0x30d, &v), X86_VEC_GP); /* FIXED_CTR4: no such counter */
	HT_CHECK_EQ(rd(0x318, &v), X86_VEC_GP); /* FIXED_CTR15, the last FIXED_CTR_CTRL field */
	HT_CHECK_EQ(wr(0x38d, 0x3 << 8), X86_VEC_GP);
	HT_CHECK_EQ(wr(0x38d, 0x3 << 12), 0);
	HT_CHECK_EQ(wr(0x38f, 1ull << 34), X86_VEC_GP);
	HT_CHECK_EQ(wr(0x38f, 1ull << 35), 0);
	HT_CHECK_EQ(rdpmc((1u << 30) | 2, 0, false, &v), X86_VEC_GP);
	HT_CHECK_EQ(rdpmc((1u << 30) | 3, 0, false, &v), 0);
}

static void reset_zero(X86PMUConfig *c)
{
	c->quirks = X86PMU_QUIRK_GLOBAL_CTRL_RESET_ZERO;
}

HT_TEST(global_ctrl_reset_value_and_gating)
{
	/* SDM vol. 3A, "Processor State After Reset": GP enables set. */
	intel("Skylake-Client");
	HT_CHECK_EQ(rdv(0x38f), 0xf);
	wr(0x186, SEL_INSTR);
	wr(0x187, SEL_INSTR);
	wr(0x38f, 0x1);
	run(X86PMU_RING_OS, 100, 0);
	HT_CHECK_EQ(rdv(0xc1), 100);
	HT_CHECK_EQ(rdv(0xc2), 0); /* EN set, GLOBAL_CTRL bit clear */
	wr(0x38d, 0x3);
	run(X86PMU_RING_OS, 1, 0);
	HT_CHECK_EQ(rdv(0x309), 0);
	wr(0x38f, 1ull << 32);
	run(X86PMU_RING_OS, 3, 0);
	HT_CHECK_EQ(rdv(0x309), 3);
	reconfigure(reset_zero);
	HT_CHECK_EQ(rdv(0x38f), 0);
}

HT_TEST(usr_os_filtering_by_ring)
{
	intel("Skylake-Client");
	wr(0x186, SEL_INSTR & ~(1ull << 17)); /* USR */
	wr(0x187, SEL_INSTR & ~(1ull << 16)); /* OS */
	wr(0x38d, 0x2);                       /* FIXED_CTR0 USR */
	wr(0x38f, 0x100000003ull);
	run(X86PMU_RING_USR, 10, 0);
	run(X86PMU_RING_OS, 3, 0);
	HT_CHECK_EQ(rdv(0xc1), 10);
	HT_CHECK_EQ(rdv(0xc2), 3);
	HT_CHECK_EQ(rdv(0x309), 10);
}

HT_TEST(overflow_sets_status_and_pmi_only_with_int)
{
	unsigned pmis;

	intel("Skylake-Client");
	wr(0x4c1, 0xfffffffffffeull);
	wr(0x186, SEL_INSTR | INT);
	wr(0x38f, 0x1);
	HT_CHECK_EQ(run(X86PMU_RING_OS, 1, 0), 0); /* -2 + 1: no wrap yet */
	HT_CHECK_EQ(run(X86PMU_RING_OS, 1, 0), 1); /* wraps to 0: PMI */
	HT_CHECK_EQ(rdv(0xc1), 0);
	HT_CHECK_EQ(rdv(0x38e), 1);
	HT_CHECK_EQ(x86pmu_wrmsr(&st, 0x390, 1, &pmis), X86PMU_OK);
	HT_CHECK_EQ(pmis, 0);
	HT_CHECK_EQ(rdv(0x38e), 0);
	wr(0x186, SEL_INSTR);
	wr(0x4c1, 0xffffffffffffull);
	HT_CHECK_EQ(run(X86PMU_RING_OS, 1, 0), 0); /* no INT: no PMI */
	HT_CHECK_EQ(rdv(0x38e), 1);
	/* v4 STATUS_SET sets, STATUS_RESET clears; CondChgd cannot be set. */
	HT_CHECK_EQ(wr(0x391, 0x2), 0);
	HT_CHECK_EQ(rdv(0x38e), 3);
	HT_CHECK_EQ(wr(0x391, 1ull << 63), X86_VEC_GP);
	HT_CHECK_EQ(wr(0x390, 1ull << 40), X86_VEC_GP);
}

HT_TEST(freeze_on_pmi_version_4_and_before)
{
	/* SDM vol. 3B, "IA32_DEBUGCTL MSR" / "Architectural Performance
	 * Monitoring Version 4": v4 sets CTR_Frz and keeps GLOBAL_CTRL;
	 * earlier versions clear GLOBAL_CTRL. */
	intel("Skylake-Client");
	HT_CHECK_EQ(wr(0x1d9, 1ull << 12), 0);
	wr(0x4c1, 0xffffffffffffull);
	wr(0x186, SEL_INSTR | INT);
	wr(0x38f, 0x1);
	HT_CHECK_EQ(run(X86PMU_RING_OS, 1, 0), 1);
	HT_CHECK_EQ(rdv(0x38e), 1 | (1ull << 59));
	HT_CHECK_EQ(rdv(0x38f), 1);
	run(X86PMU_RING_OS, 5, 0);
	HT_CHECK_EQ(rdv(0xc1), 0); /* frozen */
	wr(0x390, 1ull << 59);
	run(X86PMU_RING_OS, 2, 0);
	HT_CHECK_EQ(rdv(0xc1), 2);

	intel("core2duo");
	wr(0x1d9, 1ull << 12);
	wr(0xc1, 0xffffffffull);
	wr(0x186, SEL_INSTR | INT);
	wr(0x38f, 0x1);
	HT_CHECK_EQ(run(X86PMU_RING_OS, 1, 0), 1);
	HT_CHECK_EQ(rdv(0x38f), 0);
	HT_CHECK_EQ(wr(0x1d9, 1ull << 2), X86_VEC_GP);  /* reserved */
	HT_CHECK_EQ(wr(0x1d9, 1ull << 14), X86_VEC_GP); /* no FREEZE_WHILE_SMM cap */
	intel("coreduo");                               /* no PDCM, version 1 */
	HT_CHECK_EQ(wr(0x1d9, 1ull << 12), X86_VEC_GP);
	HT_CHECK_EQ(wr(0x1d9, 0x3), 0); /* LBR, BTF: stored */
}

HT_TEST(inuse_follows_event_select_and_fixed_fields)
{
	/* IA32_PERF_GLOBAL_INUSE: PERFEVTSELx[7:0] != 0, fixed enable field
	 * != 0, bit 63 any INT/PMI bit. */
	intel("Skylake-Client");
	HT_CHECK_EQ(rdv(0x392), 0);
	wr(0x188, 0x3c);
	wr(0x38d, 0x20);
	HT_CHECK_EQ(rdv(0x392), 0x4 | (1ull << 33));
	wr(0x188, 0x10003c);
	HT_CHECK_EQ(rdv(0x392), 0x4 | (1ull << 33) | (1ull << 63));
	HT_CHECK_EQ(wr(0x392, 0), X86_VEC_GP);
}

static void fast_ok(X86PMUConfig *c)
{
	c->quirks = X86PMU_QUIRK_KVM_FAST_RDPMC_ALLOWED;
}

HT_TEST(rdpmc_index_type_and_cr4_pce)
{
	uint64_t v;

	/* SDM vol. 2B, RDPMC: ECX[31:16] type (0 GP, 4000H fixed, 2000H
	 * perf metrics), ECX[15:0] index; any other type raises #GP. */
	intel("Skylake-Client");
	wr(0xc4, 0x1234);
	HT_CHECK_EQ(rdpmc(3, 0, false, &v), 0);
	HT_CHECK_EQ(v, 0x1234);
	HT_CHECK_EQ(rdpmc(4, 0, false, &v), X86_VEC_GP);
	HT_CHECK_EQ(rdpmc(0x3fffffff, 0, false, &v), X86_VEC_GP);
	HT_CHECK_EQ(rdpmc(0x10003, 0, false, &v), X86_VEC_GP);    /* type 1 */
	HT_CHECK_EQ(rdpmc(0x20000000, 0, false, &v), X86_VEC_GP); /* perf metrics */
	HT_CHECK_EQ(rdpmc(0x40010001, 0, false, &v), X86_VEC_GP); /* type 4001H */
	HT_CHECK_EQ(rdpmc((1u << 30) | 3, 0, false, &v), X86_VEC_GP);
	HT_CHECK_EQ(rdpmc((1u << 31) | 3, 0, false, &v), X86_VEC_GP);
	HT_CHECK_EQ(rdpmc(3, 3, false, &v), X86_VEC_GP);
	HT_CHECK_EQ(rdpmc(3, 3, true, &v), 0);
	wr(0x30a, 0xabcdef012345ull);
	HT_CHECK_EQ(rdpmc((1u << 30) | 1, 0, false, &v), 0);
	HT_CHECK_EQ(v, 0xabcdef012345ull);
	reconfigure(fast_ok);
	wr(0x4c1, 0xff7abcdef0ull);
	HT_CHECK_EQ(rdpmc(1u << 31, 0, false, &v), 0);
	HT_CHECK_EQ(v, 0x7abcdef0);
}

HT_TEST(cmask_inv_edge_cycle_by_cycle)
{
	/* 8 cycles retiring 0,2,3,0,1,4,0,0: cmask 2 counts 3 cycles, cmask 1
	 * inv the 4 with none, cmask 1 edge the 2 starts of retiring runs. */
	static const uint32_t per[] = { 0, 2, 3, 0, 1, 4, 0, 0 };
	intel("Skylake-Client");
	wr(0x186, 0x024300c0);
	wr(0x187, 0x01c300c0);
	wr(0x188, 0x014700c0);
	wr(0x189, 0x004300c0);
	for (unsigned i = 0; i < 8; i++) {
		uint32_t ev[X86PMU_EV_NUM] = { 0 };
		ev[X86PMU_EV_INSTRUCTIONS] = per[i];
		x86pmu_count_cycles(&st, X86PMU_RING_OS, 1, ev);
	}
	HT_CHECK_EQ(rdv(0xc1), 3);
	HT_CHECK_EQ(rdv(0xc2), 4);
	HT_CHECK_EQ(rdv(0xc3), 2);
	HT_CHECK_EQ(rdv(0xc4), 10);
	X86PMUActivity a = x86pmu_activity(&st);
	HT_CHECK(a.filters, "CMASK counters must report filters");
}

HT_TEST(an_instruction_retires_in_its_last_cycle)
{
	/* The cycle model: a 5-cycle instruction, then a 1-cycle one. cmask=1
	 * sees 2 retiring cycles, cmask=1 inv the 4 quiet ones, edge 1 + 0:
	 * the second instruction follows a retiring cycle. cmask=255: none. */
	X86PMUInsn slow = { .cycles = 5 }, fast = { .cycles = 1 };
	slow.ev[X86PMU_EV_INSTRUCTIONS] = fast.ev[X86PMU_EV_INSTRUCTIONS] = 1;
	intel("Skylake-Client");
	wr(0x186, 0x014300c0);
	wr(0x187, 0x01c300c0);
	wr(0x188, 0x014700c0);
	wr(0x189, 0xff4300c0);
	wr(0x38d, 0x33);
	wr(0x38f, 0x30000000full);
	x86pmu_count_insn(&st, X86PMU_RING_OS, &slow);
	x86pmu_count_insn(&st, X86PMU_RING_OS, &fast);
	HT_CHECK_EQ(rdv(0xc1), 2);
	HT_CHECK_EQ(rdv(0xc2), 4);
	HT_CHECK_EQ(rdv(0xc3), 1);
	HT_CHECK_EQ(rdv(0xc4), 0);
	HT_CHECK_EQ(rdv(0x309), 2);
	HT_CHECK_EQ(rdv(0x30a), 6);
}

HT_TEST(headroom_is_events_to_overflow_per_cycle)
{
	intel("Skylake-Client");
	HT_CHECK_EQ(x86pmu_headroom(&st), UINT64_MAX);
	wr(0x4c1, 0xfffffffffff6ull); /* -10 instructions */
	wr(0x186, SEL_INSTR);
	wr(0x38f, 1);
	HT_CHECK_EQ(x86pmu_headroom(&st), 9);
	run(X86PMU_RING_OS, 9, 0);
	HT_CHECK_EQ(x86pmu_headroom(&st), 0);
	HT_CHECK_EQ(rdv(0x38e), 0);
	wr(0x4c1, 0xfffffffffff6ull);
	wr(0x186, SEL(0x2e, 0x4f)); /* LLC references: up to 4 a cycle */
	HT_CHECK_EQ(x86pmu_headroom(&st), 2);
	wr(0x186, SEL(0x3c, 0x01)); /* reference cycles: the TSC's business */
	HT_CHECK_EQ(x86pmu_headroom(&st), UINT64_MAX);
	/* The 10th tick of a clock 125 TSC ticks apart: 10 * 125 - 1 ticks. */
	HT_CHECK_EQ(x86pmu_ref_headroom(&st), 1249);
	wr(0x186, 0);
	wr(0x38d, 0x100); /* FIXED_CTR2: TSC ticks */
	wr(0x30b, 0xfffffffffff6ull);
	wr(0x38f, 1ull << 34);
	HT_CHECK_EQ(x86pmu_ref_headroom(&st), 9);
}

/* A WRMSR the model counts: it acted between x86pmu_insn_begin and now. */
static void counted_wrmsr(uint32_t msr, uint64_t v)
{
	X86PMUInsn in = { .cycles = 100, .flags = X86PMU_INSN_INTERCEPTED | X86PMU_INSN_PMU_ACCESS };

	in.ev[X86PMU_EV_INSTRUCTIONS] = 1;
	x86pmu_insn_begin(&st);
	HT_CHECK_EQ(wr(msr, v), 0);
	x86pmu_count_insn(&st, X86PMU_RING_OS, &in);
}

static X86PMUWrmsrCounted window_rule;
static void set_window(X86PMUConfig *c)
{
	c->wrmsr_counted = window_rule;
}

HT_TEST(wrmsr_counted_by_the_configured_side)
{
	/* The SDM says a counter counts while its enables are set, not on
	 * which side of the enabling WRMSR that WRMSR retires: each rule of
	 * pmu-wrmsr-counted on a window WRMSR(on) 10 instructions WRMSR(off). */
	static const struct {
		X86PMUWrmsrCounted rule;
		uint64_t want;
	} rules[] = {
		{ X86PMU_WRMSR_ENABLING, 11 },
		{ X86PMU_WRMSR_DISABLING, 11 },
		{ X86PMU_WRMSR_BOTH, 12 },
		{ X86PMU_WRMSR_NEITHER, 10 },
	};

	for (unsigned i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		intel("Skylake-Client");
		window_rule = rules[i].rule;
		reconfigure(set_window);
		wr(0x186, SEL_INSTR);
		wr(0x38f, 0);
		counted_wrmsr(0x38f, 1);
		run(X86PMU_RING_OS, 10, 0);
		counted_wrmsr(0x38f, 0);
		HT_CHECK(rdv(0xc1) == rules[i].want, "%s: expected %lu, counted %lu",
			 x86pmu_wrmsr_counted_name(rules[i].rule), (unsigned long)rules[i].want,
			 (unsigned long)rdv(0xc1));
	}
	/* A counter an event-select write stops counts it as it was set up
	 * (instructions, OS) when the disabling side is counted. */
	window_rule = X86PMU_WRMSR_DISABLING;
	intel("Skylake-Client");
	reconfigure(set_window);
	wr(0x186, SEL_INSTR);
	counted_wrmsr(0x186, SEL(0x3c, 0) & ~(1ull << 22));
	HT_CHECK_EQ(rdv(0xc1), 1);
	/* Instructions that leave the enables alone count under every rule. */
	window_rule = X86PMU_WRMSR_NEITHER;
	reconfigure(set_window);
	wr(0x186, SEL_INSTR);
	wr(0xc1, 0);
	counted_wrmsr(0xc2, 7);
	HT_CHECK_EQ(rdv(0xc1), 1);
}

HT_TEST(reference_cycles_fixed_at_tsc_gp_at_the_bus_clock)
{
	/* FIXED_CTR2 "increments at the same TSC frequency" (SDM vol. 3B,
	 * "Cycle Counting and Opportunistic Processor Operation"); 3CH/01H on
	 * a GP counter counts a fixed-frequency reference clock, the bus
	 * clock on Core 2 (SDM vol. 3B architectural events table), at the
	 * TSC/crystal ratio of CPUID.15H from Skylake (Linux, Kan Liang,
	 * "perf/x86/intel: enable CPU ref_cycles for GP counter"). */
	uint64_t t[X86PMU_EV_NUM] = { 0 };
	uint32_t a = 0, b = 0, c = 0, d = 0;
	uint64_t v;

	intel("Skylake-Client");
	x86pmu_cpuid(&st, 0x15, 0, &a, &b, &c, &d);
	HT_CHECK_EQ(b / a, 125);
	HT_CHECK_EQ(c, 0); /* crystal Hz: not enumerated */
	wr(0x186, SEL(0x3c, 0x01));
	wr(0x38d, 0x100);
	wr(0x38f, 0x400000001ull);
	t[X86PMU_EV_REF_CYCLES] = 1000;
	x86pmu_count_bulk(&st, X86PMU_RING_OS, t);
	HT_CHECK_EQ(rdv(0x30b), 1000);
	HT_CHECK_EQ(rdv(0xc1), 8);
	t[X86PMU_EV_REF_CYCLES] = 100; /* the phase carries over */
	x86pmu_count_bulk(&st, X86PMU_RING_OS, t);
	HT_CHECK_EQ(rdv(0xc1), 8);
	x86pmu_count_bulk(&st, X86PMU_RING_OS, t);
	HT_CHECK_EQ(rdv(0xc1), 9);
	HT_CHECK_EQ(rdv(0x30b), 1200);
	/* Nehalem to Broadwell report it in MSR_PLATFORM_INFO[15:8]. */
	intel("Haswell");
	HT_CHECK_EQ(rdv(0xce), 34 << 8);
	intel("Skylake-Client");
	HT_CHECK_EQ(rd(0xce, &v), -1); /* QEMU's, as without a PMU */
	intel("Denverton");            /* Goldmont: the ratio is 1 */
	wr(0x186, SEL(0x3c, 0x01));
	wr(0x38f, 1);
	t[X86PMU_EV_REF_CYCLES] = 77;
	x86pmu_count_bulk(&st, X86PMU_RING_OS, t);
	HT_CHECK_EQ(rdv(0xc1), 77);
}

HT_TEST(reference_cycles_with_cmask_inv_or_edge_count_nothing)
{
	/* The model has no reference ticks per core cycle to compare with
	 * CMASK: such a counter counts nothing (emu/qemu/README.md), and needs
	 * no cycle-by-cycle counting. */
	X86PMUInsn slow = { .cycles = 10 };
	uint64_t t[X86PMU_EV_NUM] = { 0 };

	slow.ev[X86PMU_EV_INSTRUCTIONS] = 1;
	intel("Skylake-Client");
	wr(0x186, SEL(0x3c, 0x01) | 1ull << 23 | 1ull << 24); /* CMASK 1, INV */
	wr(0x187, SEL(0x3c, 0x01) | 1ull << 18);              /* EDGE */
	wr(0x38f, 3);
	x86pmu_count_insn(&st, X86PMU_RING_OS, &slow);
	t[X86PMU_EV_REF_CYCLES] = 5000;
	x86pmu_count_bulk(&st, X86PMU_RING_OS, t);
	HT_CHECK_EQ(rdv(0xc1), 0);
	HT_CHECK_EQ(rdv(0xc2), 0);
	HT_CHECK(!x86pmu_activity(&st).filters, "reference-cycles CMASK needs no step mode");
}

HT_TEST(freeze_while_smm_clears_then_sets_global_ctrl)
{
	/* SDM vol. 3B, "IA32_DEBUGCTL MSR", FREEZE_WHILE_SMM: at SMI delivery
	 * GLOBAL_CTRL's enables are cleared, DEBUGCTL saved and its LBR, BTF,
	 * TR and BTS cleared; after RSM "the enable bits of
	 * IA32_PERF_GLOBAL_CTRL will be set to 1" and DEBUGCTL restored. */
	intel("Skylake-Client");
	wr(0x186, SEL_INSTR);
	wr(0x38f, 1);
	HT_CHECK_EQ(wr(0x1d9, 1ull << 14 | 0x41), 0);
	x86pmu_smm_enter(&st);
	HT_CHECK_EQ(rdv(0x38f), 0);
	HT_CHECK_EQ(rdv(0x1d9), 1ull << 14);
	run(X86PMU_RING_OS, 7, 0);
	HT_CHECK_EQ(rdv(0xc1), 0);
	x86pmu_smm_leave(&st);
	HT_CHECK_EQ(rdv(0x38f), 0x70000000full);
	HT_CHECK_EQ(rdv(0x1d9), 1ull << 14 | 0x41);
	run(X86PMU_RING_OS, 7, 0);
	HT_CHECK_EQ(rdv(0xc1), 7);
	/* Without the bit, SMM changes nothing. */
	wr(0x1d9, 0);
	wr(0x38f, 1);
	x86pmu_smm_enter(&st);
	run(X86PMU_RING_OS, 2, 0);
	x86pmu_smm_leave(&st);
	HT_CHECK_EQ(rdv(0xc1), 9);
	HT_CHECK_EQ(rdv(0x38f), 1);
}

HT_TEST(conventions_default_by_vendor)
{
	/* emu/qemu/README.md, "Counting conventions": the enabling WRMSR is
	 * counted; mode-changing instructions count in their target mode (AMD:
	 * documented; Intel: V. Weaver's USR-only measurements); delivering an
	 * interrupt or exception retires as an instruction and a branch on AMD
	 * only (AMD's C0H/C2H descriptions; the SDM is silent). */
	intel("Skylake-Client");
	HT_CHECK(st.cfg.wrmsr_counted == X86PMU_WRMSR_ENABLING, "Intel: enabling WRMSR counted");
	HT_CHECK(st.cfg.target_mode && !st.cfg.delivery_retires, "Intel: target mode, no delivery");
	amd(0x19, 0x11);
	HT_CHECK(st.cfg.wrmsr_counted == X86PMU_WRMSR_ENABLING, "AMD: enabling WRMSR counted");
	HT_CHECK(st.cfg.target_mode && st.cfg.delivery_retires, "AMD: target mode, delivery");
}

static void k8(void)
{
	amd(0x0f, 5);
}

HT_TEST(amd_legacy_extcore_alias_and_widths)
{
	uint64_t v;

	/* APM vol. 2, 13.2: legacy addresses alias ExtCore counters 0-3;
	 * 48-bit counters.  Reserved bits: see amd_reserved_bits_dropped. */
	amd(0x17, 1);
	HT_CHECK_EQ(wr(0xc0010004, 0x123456789abcull), 0);
	HT_CHECK_EQ(rdv(0xc0010201), 0x123456789abcull);
	HT_CHECK_EQ(wr(0xc001020b, 5), 0);           /* PerfCtr5 */
	HT_CHECK_EQ(rd(0xc001020d, &v), X86_VEC_GP); /* no PerfCtr6 */
	HT_CHECK_EQ(wr(0xc001020c, 0), X86_VEC_GP);  /* no PerfEvtSel6 */
	HT_CHECK_EQ(wr(0xc0010200, 3ull << 40), 0);  /* Host/GuestOnly */
	HT_CHECK_EQ(rdv(0xc0010200), 3ull << 40);
	HT_CHECK_EQ(wr(0xc0010200, 1ull << 32), 0); /* EventSelect[11:8] */
	HT_CHECK_EQ(rdv(0xc0010200), 1ull << 32);
	HT_CHECK_EQ(rd(0xc0000301, &v), X86_VEC_GP); /* no PerfMonV2 */
	HT_CHECK_EQ(rdpmc(5, 0, false, &v), 0);
	HT_CHECK_EQ(rdpmc(6, 0, false, &v), X86_VEC_GP);
	HT_CHECK_EQ(rdpmc((1u << 31) | 1, 0, false, &v), X86_VEC_GP);
	uint32_t a = 0, b = 0, c = 0, d = 0;
	x86pmu_cpuid(&st, 0x80000001, 0, &a, &b, &c, &d);
	HT_CHECK_EQ(c, 1u << 23);
	amd(0x10, 2);
	HT_CHECK_EQ(rd(0xc0010200, &v), X86_VEC_GP); /* no PerfCtrExtCore */
	HT_CHECK_EQ(rdpmc(4, 0, false, &v), X86_VEC_GP);
	k8();
	HT_CHECK_EQ(wr(0xc0010000, 1ull << 32 | 0xc0), 0); /* 8-bit events on K8 */
	HT_CHECK_EQ(rdv(0xc0010000), 0xc0);
}

static void amd_drop(X86PMUConfig *c)
{
	c->quirks = X86PMU_QUIRK_KVM_AMD_RESERVED_BITS_DROPPED;
}
static void amd_gp(X86PMUConfig *c)
{
	c->amd_reserved_gp = true;
}

HT_TEST(amd_perfmon_v2_global_registers)
{
	amd(0x19, 0x11);
	/* PerfCntrGlobalCtl at RESET: all counters (AMD PPRs). */
	HT_CHECK_EQ(rdv(0xc0000301), 0x3f);
	wr(0xc0010200, SEL(0xc0, 0));
	wr(0xc0010202, SEL(0xc0, 0));
	wr(0xc0000301, 0x1);
	wr(0xc0010201, 0xfffffffffffeull);
	run(X86PMU_RING_OS, 4, 0);
	HT_CHECK_EQ(rdv(0xc0010201), 2);
	HT_CHECK_EQ(rdv(0xc0010203), 0);
	HT_CHECK_EQ(rdv(0xc0000300), 1);
	HT_CHECK_EQ(wr(0xc0000302, 1), 0);
	HT_CHECK_EQ(rdv(0xc0000300), 0);
	HT_CHECK_EQ(wr(0xc0000303, 2), 0);
	HT_CHECK_EQ(rdv(0xc0000300), 2);
	uint32_t a = 0, b = 0, c = 0, d = 0;
	x86pmu_cpuid(&st, 0x80000022, 0, &a, &b, &c, &d);
	/* Genoa (InstLatx64's dump of family 19h model 11h, A10F11):
	 * Fn8000_0022_EAX = 7, PerfMonV2, LbrExtV2, LbrAndPmcFreeze. */
	HT_CHECK_EQ(a, 7);
	HT_CHECK_EQ(b, 16u << 4 | 6); /* 16 LBR entries, 6 counters */
}

HT_TEST(amd_linux_boot_writes_take_on_the_silicon_shapes)
{
	/* Linux amd_pmu_cpu_reset writes GLOBAL_STATUS_LBRS_FROZEN (bit 58)
	 * and every counter's bit to PerfCntrGlobalStatusClr, and the PMI
	 * handler acks ~status, all 64 bits: silicon takes both (Linux
	 * 9b026073db2f), and so must every AMD shape. */
	uint32_t fam[] = { 0x0f, 0x10, 0x17, 0x19 }, mod[] = { 6, 2, 1, 0x11 };

	for (unsigned i = 0; i < 4; i++) {
		amd(fam[i], mod[i]);
		HT_CHECK_EQ(wr(0xc0010000, SEL(0xc0, 0) | 1ull << 21 | 1ull << 50), 0);
		HT_CHECK_EQ(wr(0xc0010004, 0xffff000000000007ull), 0);
		HT_CHECK_EQ(rdv(0xc0010004), 7); /* a 48-bit counter: 63:48 dropped */
	}
	amd(0x19, 0x11);
	HT_CHECK_EQ(wr(0xc0000303, 1ull << 58 | 2), 0);
	HT_CHECK_EQ(rdv(0xc0000300), 1ull << 58 | 2);
	HT_CHECK_EQ(wr(0xc0000302, 1ull << 58 | 0x3f), 0);
	HT_CHECK_EQ(rdv(0xc0000300), 0);
	wr(0xc0000303, 2);
	HT_CHECK_EQ(wr(0xc0000302, ~0ull), 0);
	HT_CHECK_EQ(rdv(0xc0000300), 0);
	HT_CHECK_EQ(wr(0xc0000301, ~0ull), 0);
	HT_CHECK_EQ(rdv(0xc0000301), 0x3f);
}

HT_TEST(amd_reserved_bits_dropped_without_fault)
{
	/* Linux 9b026073db2f: AMD EPYC parts "never raise a #GP" for a
	 * PerfEvtSel write and keep bits 19 and 42 on Zen 3, clearing other
	 * reserved bits.  KVM (arch/x86/kvm/pmu.c): "AMD ignores writes to
	 * reserved bits and read-only PMU MSRs"; PerfCntrGlobalStatus writes
	 * are ignored "Per PPR". */
	const uint64_t rsvd = 1ull << 19 | 1ull << 21 | 1ull << 37 | 1ull << 42 | 1ull << 50;

	amd(0x19, 0x11); /* Zen 4: PerfMonV2 */
	HT_CHECK_EQ(wr(0xc0010200, SEL(0xc0, 0) | rsvd), 0);
	HT_CHECK_EQ(rdv(0xc0010200), SEL(0xc0, 0) | 1ull << 19 | 1ull << 42);
	HT_CHECK_EQ(wr(0xc0010201, 1ull << 48 | 5), 0); /* bits 63:48 dropped */
	HT_CHECK_EQ(rdv(0xc0010201), 5);
	HT_CHECK_EQ(wr(0xc0000301, 0xff), 0); /* GlobalCtl: counters 0-5 */
	HT_CHECK_EQ(rdv(0xc0000301), 0x3f);
	HT_CHECK_EQ(wr(0xc0000303, 0x41), 0); /* StatusSet */
	HT_CHECK_EQ(rdv(0xc0000300), 0x1);
	HT_CHECK_EQ(wr(0xc0000300, 0), 0); /* GlobalStatus: write ignored */
	HT_CHECK_EQ(rdv(0xc0000300), 0x1);
	HT_CHECK_EQ(wr(0xc0000302, 0xc1), 0); /* StatusClr */
	HT_CHECK_EQ(rdv(0xc0000300), 0);
	amd(0x17, 1); /* Zen 2: bit 42 is Zen 3's, cleared before it */
	HT_CHECK_EQ(wr(0xc0010200, SEL(0xc0, 0) | rsvd), 0);
	HT_CHECK_EQ(rdv(0xc0010200), SEL(0xc0, 0) | 1ull << 19);
	/* KVM clears 19, 21 and 63:36, HostOnly/GuestOnly included. */
	amd(0x19, 0x11);
	reconfigure(amd_drop);
	HT_CHECK_EQ(wr(0xc0010200, SEL(0xc0, 0) | rsvd | 3ull << 40), 0);
	HT_CHECK_EQ(rdv(0xc0010200), SEL(0xc0, 0));
	/* pmu-amd-reserved-gp: #GP as on Intel, for the profiles pinned to it. */
	amd(0x19, 0x11);
	reconfigure(amd_gp);
	HT_CHECK_EQ(wr(0xc0010200, SEL(0xc0, 0) | 1ull << 21), X86_VEC_GP);
	HT_CHECK_EQ(wr(0xc0010201, 1ull << 48), X86_VEC_GP);
	HT_CHECK_EQ(wr(0xc0000301, 1ull << 6), X86_VEC_GP);
	HT_CHECK_EQ(wr(0xc0000300, 0), X86_VEC_GP);
	HT_CHECK_EQ(wr(0xc0010200, SEL(0xc0, 0) | 3ull << 40), 0);
}

static void v5_bad_bitmap(X86PMUConfig *c)
{
	c->version = 4, c->fixed_bitmap = 0x8;
}
static void gp_wide(X86PMUConfig *c)
{
	c->gp_width = 65;
}
static void gp_many(X86PMUConfig *c)
{
	c->num_gp = 9;
}

static void expect_refused(void (*edit)(X86PMUConfig *), const char *property)
{
	X86PMUConfig c;
	x86pmu_shape("Icelake-Server", X86PMU_VENDOR_INTEL, 6, 0, &c);
	edit(&c);
	const char *why = x86pmu_config_check(&c);
	HT_CHECK(why && strncmp(why, property, strlen(property)) == 0, "expected a refusal naming %s, got %s",
		 property, why ? why : "(accepted)");
}

HT_TEST(config_check_names_the_property)
{
	expect_refused(v5_bad_bitmap, "pmu-fixed-bitmap=0x8");
	expect_refused(gp_wide, "pmu-gp-width=65");
	expect_refused(gp_many, "pmu-gp=9");
	X86PMUConfig c;
	x86pmu_shape(NULL, X86PMU_VENDOR_AMD, 0x17, 1, &c);
	c.perfmon_v2 = true, c.perfctr_core = false;
	const char *why = x86pmu_config_check(&c);
	HT_CHECK(why && strstr(why, "pmu-perfmon-v2"), "AMD PerfMonV2 without ExtCore: %s",
		 why ? why : "(accepted)");
}

HT_TEST(every_shape_is_a_valid_configuration)
{
	static const char *const models[] = { "coreduo",        "core2duo",       "Conroe",
					      "Penryn",         "n270",           "Nehalem",
					      "Westmere",       "SandyBridge",    "IvyBridge",
					      "Haswell",        "Broadwell",      "Denverton",
					      "Skylake-Client", "Skylake-Server", "Cascadelake-Server",
					      "Cooperlake",     "Icelake-Server", "SapphireRapids" };
	static const uint32_t fams[][2] = { { 0x0f, 5 }, { 0x10, 2 },    { 0x15, 1 }, { 0x17, 1 },
					    { 0x19, 1 }, { 0x19, 0x11 }, { 0x1a, 2 } };
	X86PMUConfig c;

	for (unsigned i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		HT_CHECK(x86pmu_shape(models[i], X86PMU_VENDOR_INTEL, 6, 0, &c) != NULL, "%s", models[i]);
		HT_CHECK(x86pmu_config_check(&c) == NULL, "%s: %s", models[i], x86pmu_config_check(&c));
	}
	HT_CHECK(x86pmu_shape("qemu64", X86PMU_VENDOR_INTEL, 6, 0, &c) == NULL, "qemu64 has no shape");
	for (unsigned i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
		HT_CHECK(x86pmu_shape(NULL, X86PMU_VENDOR_AMD, fams[i][0], fams[i][1], &c) != NULL,
			 "family %#x", fams[i][0]);
		HT_CHECK(x86pmu_config_check(&c) == NULL, "family %#x: %s", fams[i][0],
			 x86pmu_config_check(&c));
	}
	x86pmu_shape(NULL, X86PMU_VENDOR_AMD, 0x19, 1, &c);
	HT_CHECK(!c.perfmon_v2, "Zen 3 has no PerfMonV2");
	x86pmu_shape(NULL, X86PMU_VENDOR_AMD, 0x19, 0x11, &c);
	HT_CHECK(c.perfmon_v2, "Zen 4 has PerfMonV2");
}

static void quirk(X86PMUConfig *c, uint32_t q)
{
	c->quirks = q;
}
static void q_f1(X86PMUConfig *c)
{
	quirk(c, X86PMU_QUIRK_KVM_EMULATED_WRMSR_IGNORES_CMASK);
}
static void q_xen(X86PMUConfig *c)
{
	quirk(c, X86PMU_QUIRK_XEN_EMULATED_WRMSR_NOT_COUNTED);
}
static void q_vmrun(X86PMUConfig *c)
{
	quirk(c, X86PMU_QUIRK_AMD_VMRUN_COUNTED);
}

HT_TEST(quirks_on_intercepted_instructions)
{
	X86PMUInsn wrmsr = { .cycles = 100, .flags = X86PMU_INSN_INTERCEPTED };
	wrmsr.ev[X86PMU_EV_INSTRUCTIONS] = 1;

	/* Silicon: cmask=255 never counts; KVM counts the emulated one (F1). */
	intel("Skylake-Client");
	wr(0x186, 0xff4300c0);
	wr(0x187, SEL_INSTR);
	x86pmu_count_insn(&st, X86PMU_RING_OS, &wrmsr);
	HT_CHECK_EQ(rdv(0xc1), 0);
	HT_CHECK_EQ(rdv(0xc2), 1);
	reconfigure(q_f1);
	wr(0x186, 0xff4300c0);
	x86pmu_count_insn(&st, X86PMU_RING_OS, &wrmsr);
	HT_CHECK_EQ(rdv(0xc1), 1);
	/* Xen does not count it at all (F13). */
	reconfigure(q_xen);
	wr(0x187, SEL_INSTR);
	x86pmu_count_insn(&st, X86PMU_RING_OS, &wrmsr);
	HT_CHECK_EQ(rdv(0xc2), 0);
	/* AMD adds VMRUN as an instruction and a branch (F7). */
	reconfigure(q_vmrun);
	wr(0x187, SEL_INSTR);
	wr(0x188, SEL(0xc4, 0));
	x86pmu_count_insn(&st, X86PMU_RING_OS, &wrmsr);
	HT_CHECK_EQ(rdv(0xc2), 2);
	HT_CHECK_EQ(rdv(0xc3), 1);
}

static void q_spurious(X86PMUConfig *c)
{
	quirk(c, X86PMU_QUIRK_KVM_SPURIOUS_PMI);
}
static void q_xen_status(X86PMUConfig *c)
{
	quirk(c, X86PMU_QUIRK_XEN_STATUS_ONLY_AT_PMI);
}
static void q_no_inuse(X86PMUConfig *c)
{
	quirk(c, X86PMU_QUIRK_NO_INUSE_MSR);
}
static void q_unsched(X86PMUConfig *c)
{
	quirk(c, X86PMU_QUIRK_HOST_COUNTER_UNSCHEDULABLE);
}
static void q_trunc(X86PMUConfig *c)
{
	quirk(c, X86PMU_QUIRK_KVM_FIXED_CTR_WRITE_TRUNCATED);
}

static void q_xen_zero(X86PMUConfig *c)
{
	quirk(c, X86PMU_QUIRK_XEN_PMC_ZERO_BECOMES_ONE);
}
static void q_xen_any(X86PMUConfig *c)
{
	quirk(c, X86PMU_QUIRK_XEN_ANYTHREAD_PC_REJECTED);
}
static void q_kvm_debugctl(X86PMUConfig *c)
{
	quirk(c, X86PMU_QUIRK_KVM_DEBUGCTL_FREEZE_REFUSED);
}

HT_TEST(quirks_on_registers_and_pmis)
{
	unsigned pmis;
	uint64_t v;
	X86PMUInsn wrmsr = { .cycles = 100, .flags = X86PMU_INSN_INTERCEPTED };
	wrmsr.ev[X86PMU_EV_INSTRUCTIONS] = 1;

	intel("Skylake-Client");
	HT_CHECK(x86pmu_delivery(&st).mask_lvt, "Intel masks LVTPC on delivery");
	/* KVM before 73554b29bd70: an overflow on an emulated instruction
	 * raised two PMIs, the second after the first handler; one on guest
	 * code raised one.  The LVT entry was not masked (a16eb25b09c0). */
	reconfigure(q_spurious);
	HT_CHECK(!x86pmu_delivery(&st).mask_lvt, "the old KVM did not mask");
	wr(0x4c1, 0xffffffffffffull);
	wr(0x186, SEL_INSTR | INT);
	wr(0x38f, 1);
	HT_CHECK_EQ(run(X86PMU_RING_OS, 1, 0), 1);
	HT_CHECK_EQ(x86pmu_owed_pmis(&st), 0);
	x86pmu_wrmsr(&st, 0x390, 1, &pmis);
	HT_CHECK_EQ(pmis, 0);
	wr(0x4c1, 0xffffffffffffull);
	HT_CHECK_EQ(x86pmu_count_insn(&st, X86PMU_RING_OS, &wrmsr), 1);
	HT_CHECK_EQ(x86pmu_owed_pmis(&st), 1); /* the second PMI */
	HT_CHECK_EQ(x86pmu_owed_pmis(&st), 0);

	reconfigure(q_xen_status);
	wr(0x4c1, 0xffffffffffffull);
	wr(0x186, SEL_INSTR);
	wr(0x38f, 1);
	run(X86PMU_RING_OS, 1, 0);
	HT_CHECK_EQ(rdv(0x38e), 0); /* no PMI: the guest never sees it */

	reconfigure(q_no_inuse);
	HT_CHECK_EQ(rd(0x392, &v), X86_VEC_GP);
	HT_CHECK_EQ(rd(0x391, &v), 0);

	reconfigure(q_trunc);
	HT_CHECK_EQ(wr(0x309, 0x1ffffffffffffull), 0);
	HT_CHECK_EQ(rdv(0x309), 0xffffffffffffull);

	/* Xen's handle_pmc_quirk: at a PMI, an overflowed counter at 0 is
	 * written 1 (vpmu_intel.c, every Intel family 6 part). */
	intel("Haswell");
	reconfigure(q_xen_zero);
	wr(0x4c1, 0xffffffffffffull);
	wr(0x186, SEL_INSTR | INT);
	wr(0x187, SEL_INSTR);
	wr(0xc2, 0x7fffffff); /* no overflow: stays as counted */
	wr(0x38f, 3);
	HT_CHECK_EQ(run(X86PMU_RING_OS, 1, 0), 1);
	HT_CHECK_EQ(rdv(0xc1), 1);
	HT_CHECK_EQ(rdv(0xc2), 0x80000000ull);
	/* Xen's ARCH_CTRL_MASK and fixed_ctrl_mask: AnyThread (21) and pin
	 * control (19) refused at version 3, fixed AnyThread too. */
	reconfigure(q_xen_any);
	HT_CHECK_EQ(wr(0x186, 1ull << 21), X86_VEC_GP);
	HT_CHECK_EQ(wr(0x186, 1ull << 19), X86_VEC_GP);
	HT_CHECK_EQ(wr(0x38d, 0x4), X86_VEC_GP);
	HT_CHECK_EQ(wr(0x38d, 0xbbb), 0);

	/* KVM's vmx_set_msr: DEBUGCTL takes no freeze bit; LBR and BTF are
	 * dropped without a fault. */
	intel("Skylake-Client");
	HT_CHECK_EQ(wr(0x1d9, 1ull << 12 | 1ull << 14), 0);
	reconfigure(q_kvm_debugctl);
	HT_CHECK_EQ(wr(0x1d9, 1ull << 12), X86_VEC_GP);
	HT_CHECK_EQ(wr(0x1d9, 1ull << 11), X86_VEC_GP);
	HT_CHECK_EQ(wr(0x1d9, 1ull << 14), X86_VEC_GP);
	HT_CHECK_EQ(wr(0x1d9, 0x3), 0);
	HT_CHECK_EQ(rdv(0x1d9), 0);
}

HT_TEST(host_counter_unschedulable_only_when_all_are_taken)
{
	/* KVM backs each enabled guest counter with a pinned host perf event;
	 * the host NMI watchdog holds one cycles event (FIXED_CTR1 on Intel).
	 * Only every GP counter plus FIXED_CTR1 asks for one counter too many,
	 * and perf refuses the event added last. */
	intel("Skylake-Client");
	reconfigure(q_unsched);
	wr(0x186, SEL_INSTR);
	wr(0x187, SEL_INSTR);
	wr(0x188, SEL_INSTR);
	wr(0x189, SEL_INSTR);
	wr(0x38d, 0x30); /* FIXED_CTR1 */
	wr(0x38f, 0xf);  /* every X86_VEC_GP counter, FIXED_CTR1 off: fits */
	run(X86PMU_RING_OS, 5, 0);
	HT_CHECK_EQ(rdv(0xc4), 5);
	wr(0x38f, 0x20000000full); /* FIXED_CTR1 added last: it loses */
	run(X86PMU_RING_OS, 5, 0);
	HT_CHECK_EQ(rdv(0xc4), 10);
	HT_CHECK_EQ(rdv(0xc1), 10);
	HT_CHECK_EQ(rdv(0x30a), 0);
	wr(0x38f, 0x200000007ull); /* PMC3 off: FIXED_CTR1 finds a counter */
	run(X86PMU_RING_OS, 5, 0);
	HT_CHECK_EQ(rdv(0x30a), 5);
	wr(0x38f, 0x20000000full); /* now PMC3 is the one added last */
	run(X86PMU_RING_OS, 5, 0);
	HT_CHECK_EQ(rdv(0xc4), 10);
	HT_CHECK_EQ(rdv(0x30a), 10);
	/* AMD: the watchdog takes a GP counter; all six in use leaves one out. */
	amd(0x19, 0x11);
	reconfigure(q_unsched);
	for (unsigned i = 0; i < 5; i++)
		wr(0xc0010200 + 2 * i, SEL(0xc0, 0));
	run(X86PMU_RING_OS, 3, 0);
	HT_CHECK_EQ(rdv(0xc0010209), 3);
	wr(0xc001020a, SEL(0xc0, 0));
	run(X86PMU_RING_OS, 3, 0);
	HT_CHECK_EQ(rdv(0xc001020b), 0);
	HT_CHECK_EQ(rdv(0xc0010209), 6);
}

static void d_swap(X86PMUConfig *c)
{
	c->defect = X86PMU_DEFECT_USR_OS_SWAPPED;
}
static void d_twice(X86PMUConfig *c)
{
	c->defect = X86PMU_DEFECT_PMI_DELIVERED_TWICE;
}
static void d_late(X86PMUConfig *c)
{
	c->defect = X86PMU_DEFECT_OVERFLOW_ONE_EVENT_LATE;
}

HT_TEST(defects_break_what_they_say)
{
	unsigned pmis;

	intel("Skylake-Client");
	reconfigure(d_swap);
	wr(0x186, SEL_INSTR & ~(1ull << 17)); /* USR */
	run(X86PMU_RING_OS, 4, 0);
	HT_CHECK_EQ(rdv(0xc1), 4);

	reconfigure(d_twice);
	wr(0x4c1, 0xffffffffffffull);
	wr(0x186, SEL_INSTR | INT);
	HT_CHECK_EQ(run(X86PMU_RING_OS, 1, 0), 1);
	x86pmu_wrmsr(&st, 0x390, 1, &pmis);
	HT_CHECK_EQ(pmis, 1);
	HT_CHECK_EQ(rdv(0x38e), 1); /* raised again */

	reconfigure(d_late);
	wr(0x4c1, 0xfffffffffffeull);
	wr(0x186, SEL_INSTR | INT);
	HT_CHECK_EQ(run(X86PMU_RING_OS, 2, 0), 0); /* wrapped to 0: not seen */
	HT_CHECK_EQ(run(X86PMU_RING_OS, 1, 0), 1);

	/* An L3-miss value counts L3 hits too. */
	X86PMUConfig c;
	uint64_t rsp[X86PMU_OFFCORE_MAX] = { 0x3fbc000001ull, 0 };
	x86pmu_shape("Skylake-Client", X86PMU_VENDOR_INTEL, 6, 0x5e, &c);
	c.defect = X86PMU_DEFECT_OFFCORE_IGNORES_RESPONSE;
	x86pmu_reset(&st, &c);
	wr(0x186, 0x4301b7);
	wr(0x38f, 1);
	x86pmu_count_offcore(&st, X86PMU_RING_OS, rsp, X86PMU_REQ_DATA_RD, true, 9);
	HT_CHECK_EQ(rdv(0xc1), 9);
}

HT_TEST(names_round_trip)
{
	uint32_t q;
	const char *bad;
	unsigned len;
	X86PMUDefect d;

	HT_CHECK(x86pmu_parse_quirks("srf7+kvm-fast-rdpmc-allowed", &q, &bad, &len), "known quirks");
	HT_CHECK_EQ(q, X86PMU_QUIRK_SRF7_VM_EXIT_OVERCOUNT | X86PMU_QUIRK_KVM_FAST_RDPMC_ALLOWED);
	HT_CHECK(!x86pmu_parse_quirks("srf7+nope", &q, &bad, &len) && len == 4 &&
			 strncmp(bad, "nope", 4) == 0,
		 "unknown quirk named");
	for (unsigned i = 0; i < X86PMU_DEFECT_NUM; i++) {
		HT_CHECK(x86pmu_parse_defect(x86pmu_defect_name((X86PMUDefect)i), &d) && d == i, "defect %u",
			 i);
	}
	for (unsigned i = 0; i < X86PMU_QUIRK_NUM; i++) {
		HT_CHECK(x86pmu_parse_quirks(x86pmu_quirk_name(i), &q, &bad, &len) && q == 1u << i,
			 "quirk %u", i);
	}
	for (unsigned i = 0; i < X86PMU_WRMSR_NUM; i++) {
		X86PMUWrmsrCounted w;
		HT_CHECK(x86pmu_parse_wrmsr_counted(x86pmu_wrmsr_counted_name((X86PMUWrmsrCounted)i), &w) &&
				 w == i,
			 "wrmsr-counted %u", i);
	}
	X86PMUWrmsrCounted w;
	HT_CHECK(!x86pmu_parse_wrmsr_counted("1", &w), "pmu-wrmsr-counted takes names");
}

HT_MAIN("emu_model")
