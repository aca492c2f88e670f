/* Host tests of the emulated PMU's register model (emu/model): each case
 * is one rule of the Intel SDM vol. 3B "Performance Monitoring" chapter or
 * AMD APM vol. 2 13.2, checked against the model QEMU runs. */
#include <string.h>

#include "emu/model/x86-pmu.h"
#include "tests/host/hosttest.h"

#define GP 13

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

/* 0 = ok, 13 = #GP, -1 = not a PMU register. */
static int rd(uint32_t msr, uint64_t *v)
{
	X86PMUAccess a = x86pmu_rdmsr(&st, msr, v);
	return a == X86PMU_OK ? 0 : a == X86PMU_GP ? GP : -1;
}

static uint64_t rdv(uint32_t msr)
{
	uint64_t v = 0xdead;
	HT_CHECK_EQ(rd(msr, &v), 0);
	return v;
}

static int wr(uint32_t msr, uint64_t v)
{
	unsigned pmis;
	X86PMUAccess a = x86pmu_wrmsr(&st, msr, v, &pmis);
	return a == X86PMU_OK ? 0 : a == X86PMU_GP ? GP : -1;
}

static int rdpmc(uint32_t ecx, unsigned cpl, bool pce, uint64_t *v)
{
	return x86pmu_rdpmc(&st, ecx, cpl, pce, v) == X86PMU_OK ? 0 : GP;
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
	HT_CHECK_EQ(rd(0xc1, &v), GP);
	HT_CHECK_EQ(wr(0x186, 0), GP);
	HT_CHECK_EQ(rd(0x38f, &v), GP);
	HT_CHECK_EQ(rdpmc(0, 0, false, &v), GP);
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
	HT_CHECK_EQ(wr(0x4c1, 1ull << 48), GP);
	HT_CHECK_EQ(wr(0x4c5, 0), GP); /* PMC4 absent */
	reconfigure(no_fw);
	HT_CHECK_EQ(wr(0x4c1, 5), GP);
	uint64_t v;
	HT_CHECK_EQ(rd(0x4c1, &v), GP);
}

HT_TEST(reserved_bits_and_absent_counters_fault)
{
	intel("core2duo"); /* version 2 */
	HT_CHECK_EQ(wr(0x186, 1ull << 32), GP);
	HT_CHECK_EQ(wr(0x186, 1ull << 21), GP); /* AnyThread before v3 */
	HT_CHECK_EQ(wr(0x38d, 0x4), GP);        /* fixed AnyThread before v3 */
	HT_CHECK_EQ(wr(0x38d, 0xbbb), 0);
	HT_CHECK_EQ(wr(0x38d, 0xb000), GP); /* no FIXED_CTR3 */
	HT_CHECK_EQ(wr(0x38f, 0x700000003ull), 0);
	HT_CHECK_EQ(wr(0x38f, 0x4), GP); /* PMC2 absent */
	HT_CHECK_EQ(wr(0x38f, 1ull << 35), GP);
	HT_CHECK_EQ(wr(0x38e, 0), GP);          /* GLOBAL_STATUS read-only */
	HT_CHECK_EQ(wr(0x345, 0), GP);          /* PERF_CAPABILITIES read-only */
	HT_CHECK_EQ(wr(0x391, 1), GP);          /* STATUS_SET is v4 */
	HT_CHECK_EQ(wr(0x309, 1ull << 40), GP); /* past the fixed width */
	HT_CHECK_EQ(wr(0x1a6, 0), GP);          /* offcore response: not emulated */
	intel("Haswell");
	HT_CHECK_EQ(wr(0x186, 1ull << 21), 0); /* v3 has AnyThread */
	HT_CHECK_EQ(wr(0x38d, 0xfff), 0);
}

HT_TEST(version_1_has_en_only)
{
	uint64_t v;

	/* SDM vol. 3B, "Architectural Performance Monitoring Version 1":
	 * no fixed counters or global registers; EN starts a counter. */
	intel("coreduo");
	HT_CHECK_EQ(rd(0x38f, &v), GP);
	HT_CHECK_EQ(rd(0x38d, &v), GP);
	HT_CHECK_EQ(rd(0x309, &v), GP);
	HT_CHECK_EQ(wr(0x186, SEL_INSTR), 0);
	run(X86PMU_RING_OS, 30, 0);
	HT_CHECK_EQ(rdv(0xc1), 30);
}

static void v5_gap(X86PMUConfig *c)
{
	c->num_fixed = 2, c->fixed_bitmap = 0xb;
}

HT_TEST(version_5_fixed_bitmap_gap)
{
	uint64_t v;

	/* "fixed counter i is supported if ECX[i] || (EDX[4:0] > i)". */
	intel("Icelake-Server");
	reconfigure(v5_gap);
	HT_CHECK_EQ(rd(0x30b, &v), GP);
	HT_CHECK_EQ(rd(0x30c, &v), 0);
	HT_CHECK_EQ(rd(0x30d, &v), GP); /* FIXED_CTR4: no such counter */
	HT_CHECK_EQ(rd(0x318, &v), GP); /* FIXED_CTR15, the last FIXED_CTR_CTRL field */
	HT_CHECK_EQ(wr(0x38d, 0x3 << 8), GP);
	HT_CHECK_EQ(wr(0x38d, 0x3 << 12), 0);
	HT_CHECK_EQ(wr(0x38f, 1ull << 34), GP);
	HT_CHECK_EQ(wr(0x38f, 1ull << 35), 0);
	HT_CHECK_EQ(rdpmc((1u << 30) | 2, 0, false, &v), GP);
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
	HT_CHECK_EQ(wr(0x391, 1ull << 63), GP);
	HT_CHECK_EQ(wr(0x390, 1ull << 40), GP);
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
	HT_CHECK_EQ(wr(0x1d9, 1ull << 2), GP);  /* reserved */
	HT_CHECK_EQ(wr(0x1d9, 1ull << 14), GP); /* no FREEZE_WHILE_SMM cap */
	intel("coreduo");                       /* no PDCM, version 1 */
	HT_CHECK_EQ(wr(0x1d9, 1ull << 12), GP);
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
	HT_CHECK_EQ(wr(0x392, 0), GP);
}

static void fast_ok(X86PMUConfig *c)
{
	c->quirks = X86PMU_QUIRK_KVM_FAST_RDPMC_ALLOWED;
}

HT_TEST(rdpmc_index_type_and_cr4_pce)
{
	uint64_t v;

	/* SDM vol. 2B, RDPMC. */
	intel("Skylake-Client");
	wr(0xc4, 0x1234);
	HT_CHECK_EQ(rdpmc(3, 0, false, &v), 0);
	HT_CHECK_EQ(v, 0x1234);
	HT_CHECK_EQ(rdpmc(4, 0, false, &v), GP);
	HT_CHECK_EQ(rdpmc(0x3fffffff, 0, false, &v), GP);
	HT_CHECK_EQ(rdpmc((1u << 30) | 3, 0, false, &v), GP);
	HT_CHECK_EQ(rdpmc((1u << 31) | 3, 0, false, &v), GP);
	HT_CHECK_EQ(rdpmc(3, 3, false, &v), GP);
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
	HT_CHECK_EQ(x86pmu_ref_headroom(&st), 9);
}

static void k8(void)
{
	amd(0x0f, 5);
}

HT_TEST(amd_legacy_extcore_alias_and_widths)
{
	uint64_t v;

	/* APM vol. 2, 13.2: legacy addresses alias ExtCore counters 0-3;
	 * 48-bit counters; reserved PerfEvtSel bits. */
	amd(0x17, 1);
	HT_CHECK_EQ(wr(0xc0010004, 0x123456789abcull), 0);
	HT_CHECK_EQ(rdv(0xc0010201), 0x123456789abcull);
	HT_CHECK_EQ(wr(0xc001020b, 5), 0);   /* PerfCtr5 */
	HT_CHECK_EQ(rd(0xc001020d, &v), GP); /* no PerfCtr6 */
	HT_CHECK_EQ(wr(0xc0010201, 1ull << 48), GP);
	HT_CHECK_EQ(wr(0xc0010200, 1ull << 21), GP);
	HT_CHECK_EQ(wr(0xc0010200, 1ull << 19), GP);
	HT_CHECK_EQ(wr(0xc0010200, 1ull << 43), GP);
	HT_CHECK_EQ(wr(0xc0010200, 3ull << 40), 0); /* Host/GuestOnly */
	HT_CHECK_EQ(wr(0xc0010200, 1ull << 32), 0); /* EventSelect[11:8] */
	HT_CHECK_EQ(rd(0xc0000301, &v), GP);        /* no PerfMonV2 */
	HT_CHECK_EQ(rdpmc(5, 0, false, &v), 0);
	HT_CHECK_EQ(rdpmc(6, 0, false, &v), GP);
	HT_CHECK_EQ(rdpmc((1u << 31) | 1, 0, false, &v), GP);
	uint32_t a = 0, b = 0, c = 0, d = 0;
	x86pmu_cpuid(&st, 0x80000001, 0, &a, &b, &c, &d);
	HT_CHECK_EQ(c, 1u << 23);
	amd(0x10, 2);
	HT_CHECK_EQ(rd(0xc0010200, &v), GP); /* no PerfCtrExtCore */
	HT_CHECK_EQ(rdpmc(4, 0, false, &v), GP);
	k8();
	HT_CHECK_EQ(wr(0xc0010000, 1ull << 32), GP); /* 8-bit events on K8 */
}

static void amd_drop(X86PMUConfig *c)
{
	c->quirks = X86PMU_QUIRK_KVM_AMD_RESERVED_BITS_DROPPED;
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
	HT_CHECK_EQ(wr(0xc0000301, 1ull << 6), GP);
	HT_CHECK_EQ(wr(0xc0000300, 0), GP);
	uint32_t a = 0, b = 0, c = 0, d = 0;
	x86pmu_cpuid(&st, 0x80000022, 0, &a, &b, &c, &d);
	HT_CHECK_EQ(a, 3);            /* PerfMonV2, LbrExtV2 */
	HT_CHECK_EQ(b, 16u << 4 | 6); /* 16 LBR entries, 6 counters */
	/* KVM drops what the APM reserves instead of #GP (hardware-truth F4). */
	reconfigure(amd_drop);
	HT_CHECK_EQ(wr(0xc0010200, SEL(0xc0, 0) | 1ull << 21), 0);
	HT_CHECK_EQ(rdv(0xc0010200), SEL(0xc0, 0));
	HT_CHECK_EQ(wr(0xc0000301, 0xff), 0);
	HT_CHECK_EQ(rdv(0xc0000301), 0x3f);
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

HT_TEST(quirks_on_registers_and_pmis)
{
	unsigned pmis;
	uint64_t v;

	intel("Skylake-Client");
	HT_CHECK(x86pmu_delivery(&st).mask_lvt, "Intel masks LVTPC on delivery");
	reconfigure(q_spurious);
	HT_CHECK(!x86pmu_delivery(&st).mask_lvt, "the old KVM did not mask");
	wr(0x4c1, 0xffffffffffffull);
	wr(0x186, SEL_INSTR | INT);
	wr(0x38f, 1);
	HT_CHECK_EQ(run(X86PMU_RING_OS, 1, 0), 1);
	x86pmu_wrmsr(&st, 0x390, 1, &pmis);
	HT_CHECK_EQ(pmis, 1); /* the second, spurious PMI */
	x86pmu_wrmsr(&st, 0x390, 1, &pmis);
	HT_CHECK_EQ(pmis, 0);

	reconfigure(q_xen_status);
	wr(0x4c1, 0xffffffffffffull);
	wr(0x186, SEL_INSTR);
	wr(0x38f, 1);
	run(X86PMU_RING_OS, 1, 0);
	HT_CHECK_EQ(rdv(0x38e), 0); /* no PMI: the guest never sees it */

	reconfigure(q_no_inuse);
	HT_CHECK_EQ(rd(0x392, &v), GP);
	HT_CHECK_EQ(rd(0x391, &v), 0);

	reconfigure(q_unsched);
	wr(0x189, SEL_INSTR);
	wr(0x186, SEL_INSTR);
	run(X86PMU_RING_OS, 5, 0);
	HT_CHECK_EQ(rdv(0xc4), 0);
	HT_CHECK_EQ(rdv(0xc1), 5);

	reconfigure(q_trunc);
	HT_CHECK_EQ(wr(0x309, 0x1ffffffffffffull), 0);
	HT_CHECK_EQ(rdv(0x309), 0xffffffffffffull);
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
}

HT_MAIN("emu_model")
