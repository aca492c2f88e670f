/* Host tests of the LBR and PEBS driver (pmu/lbr.c, pmu/intel/pebs.c) on CPUs
 * whose PMU registers are all emu/model's, shaped as QEMU shapes them
 * (x86pmu_shape): decoding each facility, the filter encodings, the
 * record formats read back after branches and PEBS assists the model
 * makes, and record parsing against layouts written here from the SDM. */
#include <string.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/msr.h"
#include "emu/model/x86-pmu.h"
#include "pmu/intel/pebs.h"
#include "pmu/lbr.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "pmu/sampling_hw.h"
#include "tests/host/emu_cpu.h"
#include "tests/host/hosttest.h"
#include "tests/host/pmu_model.h"

/* --- A CPU on emu/model (tests/host/emu_cpu.c) --- */

/* CPUID.23H sub-leaves 0-5 where a test gives them (architectural PEBS,
 * which the model does not emulate). */
static bool leaf23_given;
static struct cpuid_regs leaf23[6];

static void leaf23_cpuid(unsigned cpu, uint32_t leaf, uint32_t sub, struct cpuid_regs *r)
{
	(void)cpu;
	if (leaf == 0x23 && leaf23_given)
		*r = sub < 6 ? leaf23[sub] : (struct cpuid_regs){ 0 };
}

/* The state a PEBS record saves, for ticks that owe one. */
static X86PMUMachine emu_machine;

/* The work's events, branch by branch (so that a PEBS counter overflows
 * on the branch that makes it), then the owed PEBS record. */
static bool emu_tick(unsigned cpu, const struct model_work *w)
{
	uint64_t t[X86PMU_EV_NUM] = { 0 };
	uint32_t one[X86PMU_EV_NUM] = { 0 };
	unsigned pmis;

	t[X86PMU_EV_INSTRUCTIONS] = w->instructions;
	t[X86PMU_EV_CYCLES] = w->cycles;
	pmis = x86pmu_count_bulk(&emu[cpu].pmu, X86PMU_RING_OS, t);
	one[X86PMU_EV_BRANCHES] = 1;
	for (uint64_t b = 0; b < w->branches; b++) {
		pmis += x86pmu_count_cycles(&emu[cpu].pmu, X86PMU_RING_OS, 1, one);
		if (emu_machine.write)
			pmis += x86pmu_pebs_assist(&emu[cpu].pmu, &emu_machine);
	}
	return pmis != 0;
}

/* One CPU with the PMU QEMU gives `cpu_model` (Intel) or family 19h model
 * 11h (AMD, qemu_model NULL), edited by `edit` when not NULL. */
static X86PMUState *boot(const char *qemu_model, void (*edit)(X86PMUConfig *))
{
	static const struct pmu_init_opts opts = { .workload = model_tick_probe };
	struct model_cpu_config mc = { .cpu_ops = &emu_cpu_ops };
	X86PMUConfig *c = &emu[0].cfg;

	emu_hooks = (struct emu_cpu_hooks){ .cpuid = leaf23_cpuid, .tick = emu_tick };

	if (qemu_model)
		HT_CHECK(x86pmu_shape(qemu_model, X86PMU_VENDOR_INTEL, 6, 0, c) != NULL, "shape %s",
			 qemu_model);
	else
		HT_CHECK(x86pmu_shape(NULL, X86PMU_VENDOR_AMD, 0x19, 0x11, c) != NULL, "Zen 4 shape");
	if (edit)
		edit(c);
	HT_CHECK(x86pmu_config_check(c) == NULL, "config: %s", x86pmu_config_check(c));
	emu[0].misc_enable = 1;
	mc.vendor = qemu_model ? "GenuineIntel" : "AuthenticAMD";
	model_init_custom(&mc, 1);
	pmu_cpu_init(&opts);
	return &emu[0].pmu;
}

static void arch_lbr(X86PMUConfig *c)
{
	c->lbr = X86PMU_LBR_ARCH;
	c->lbr_depth = 32;
	c->arch_lbr_ebx = 0x7;
	c->perf_caps |= 0x3f;
	c->perf_caps = (c->perf_caps & ~0xf00ull) | 0x500; /* PEBS format 5 */
}

/* KVM's PERF_CAPABILITIES: the PEBS format kept, PEBS_BASELINE cleared. */
static void no_baseline(X86PMUConfig *c)
{
	c->perf_caps &= ~(1ull << 14);
}

/* --- LBR decoding --- */

HT_TEST(lbr_decode_each_facility)
{
	struct pmu_lbr_caps l;

	boot("Haswell", NULL);
	pmu_lbr_decode(pmu_caps(), &l);
	HT_CHECK(l.kind == PMU_LBR_LEGACY, "Haswell: %s", l.why);
	HT_CHECK_EQ(l.format, 4);
	HT_CHECK_EQ(l.depth, 16);
	HT_CHECK_EQ(l.from_msr, 0x680);
	HT_CHECK_EQ(l.to_msr, 0x6c0);
	HT_CHECK_EQ(l.info_msr, 0);
	HT_CHECK_EQ(l.tos_msr, 0x1c9);
	HT_CHECK_EQ(l.select_msr, 0x1c8);
	HT_CHECK(l.call_stack && l.cpl_filter && l.type_filter && l.freeze && !l.freeze_status,
		 "Haswell: call stack %u, filters %u/%u, freeze %u (v3: clears DEBUGCTL.LBR)", l.call_stack,
		 l.cpl_filter, l.type_filter, l.freeze);

	boot("Skylake-Client", NULL);
	pmu_lbr_decode(pmu_caps(), &l);
	HT_CHECK(l.kind == PMU_LBR_LEGACY && l.format == 5 && l.depth == 32 && l.info_msr == 0xdc0,
		 "Skylake: kind %d format %u depth %u info %#x", l.kind, l.format, l.depth, l.info_msr);
	HT_CHECK(l.freeze_status, "v4 freezes through LBR_FRZ");

	boot("Nehalem", NULL);
	pmu_lbr_decode(pmu_caps(), &l);
	HT_CHECK(l.kind == PMU_LBR_LEGACY && l.format == 3 && l.depth == 16 && !l.call_stack,
		 "Nehalem: format %u depth %u call stack %u", l.format, l.depth, l.call_stack);

	boot("Icelake-Server", arch_lbr);
	pmu_lbr_decode(pmu_caps(), &l);
	HT_CHECK(l.kind == PMU_LBR_ARCH, "arch: %s", l.why);
	HT_CHECK(l.depth == 32 && l.arch_depths == 0xf && l.from_msr == 0x1500 && l.to_msr == 0x1600 &&
			 l.info_msr == 0x1200 && l.ctl_msr == 0x14ce && !l.tos_msr && !l.select_msr,
		 "arch: depth %u depths %#x from %#x ctl %#x", l.depth, l.arch_depths, l.from_msr, l.ctl_msr);
	HT_CHECK(l.call_stack && l.cpl_filter && l.type_filter, "CPUID.1CH:EBX = 7");

	boot(NULL, NULL);
	pmu_lbr_decode(pmu_caps(), &l);
	HT_CHECK(l.kind == PMU_LBR_EXTV2, "Zen 4: %s", l.why);
	HT_CHECK(l.depth == 16 && l.from_msr == 0xc0010300 && l.to_msr == 0xc0010301 && l.stride == 2 &&
			 l.ctl_msr == 0xc000010f && l.ctl_enable == 0x40 && l.select_msr == 0xc000010e,
		 "Zen 4: depth %u from %#x stride %u ctl %#x", l.depth, l.from_msr, l.stride, l.ctl_msr);

	/* No LBR: the SKIP reasons. */
	boot("core2duo", NULL);
	pmu_lbr_decode(pmu_caps(), &l);
	HT_CHECK(l.kind == PMU_LBR_NONE && strstr(l.why, "[5:0]=0"), "Core 2 shape (format 0): %s", l.why);
	emu[0].cfg.pdcm = false;
	emu[0].cfg.perf_caps = 0;
	boot("core2duo", NULL);
	pmu_lbr_decode(pmu_caps(), &l);
	HT_CHECK(l.kind == PMU_LBR_NONE, "no PDCM");
}

static void no_pdcm(X86PMUConfig *c)
{
	c->pdcm = false;
	c->perf_caps = 0;
	c->lbr = X86PMU_LBR_NONE;
	c->ds = false;
}

static void zen3(X86PMUConfig *c)
{
	c->lbr = X86PMU_LBR_NONE;
	c->lbr_depth = 0;
}

HT_TEST(lbr_skip_reasons)
{
	struct pmu_lbr_caps l;

	boot("Skylake-Client", no_pdcm);
	pmu_lbr_decode(pmu_caps(), &l);
	HT_CHECK_STR(l.why,
		     "CPUID.01H:ECX.PDCM[15]=0: no IA32_PERF_CAPABILITIES to give the LBR record format");
	boot(NULL, zen3);
	pmu_lbr_decode(pmu_caps(), &l);
	HT_CHECK(strstr(l.why, "Fn8000_0022_EAX[1] (LbrExtV2)=0"), "AMD without LbrExtV2: %s", l.why);
}

/* --- The model's register rules (emu/model/x86-pmu-lbr.c, -pebs.c) --- */

HT_TEST(lbr_and_pebs_register_rules)
{
	uint64_t v = 0;

	boot("Haswell", NULL); /* legacy format 4, 16 deep, no LBR_INFO */
	HT_CHECK_EQ(emu_wrmsr(0, 0x68f, 0x1234), 0);
	HT_CHECK_EQ(emu_rdmsr(0, 0x690, &v), MODEL_VEC_GP); /* entry 16 of 16 */
	HT_CHECK_EQ(emu_rdmsr(0, 0xdc0, &v), MODEL_VEC_GP); /* no LBR_INFO in format 4 */
	HT_CHECK_EQ(emu_wrmsr(0, 0x1c8, 0x3ff), 0);         /* suppress bits + call stack */
	HT_CHECK_EQ(emu_wrmsr(0, 0x1c8, 0x400), MODEL_VEC_GP);
	HT_CHECK_EQ(emu_wrmsr(0, 0x1c9, 15), 0);
	HT_CHECK_EQ(emu_wrmsr(0, 0x1c9, 16), MODEL_VEC_GP);
	HT_CHECK_EQ(emu_rdmsr(0, 0x14ce, &v), MODEL_VEC_GP);  /* no arch LBRs */
	HT_CHECK_EQ(emu_wrmsr(0, 0x3f1, 0x10), MODEL_VEC_GP); /* PMC0-3 only */
	HT_CHECK_EQ(emu_wrmsr(0, 0x3f1, 0xf0000000full), 0);  /* with the load-latency bits */
	HT_CHECK_EQ(emu_rdmsr(0, 0x3f2, &v), MODEL_VEC_GP);   /* no adaptive PEBS */

	boot("Nehalem", NULL); /* format 3: no call-stack bit */
	HT_CHECK_EQ(emu_wrmsr(0, 0x1c8, 0x200), MODEL_VEC_GP);

	boot("Icelake-Server", arch_lbr);
	HT_CHECK_EQ(emu_rdmsr(0, 0x14cf, &v), 0);
	HT_CHECK_EQ(v, 32);
	HT_CHECK_EQ(emu_wrmsr(0, 0x1500, 0x4000), 0);
	HT_CHECK_EQ(emu_wrmsr(0, 0x14cf, 24), 0); /* a depth of the bitmap empties the stack */
	HT_CHECK_EQ(emu_peek(0, 0x1500), 0);
	HT_CHECK_EQ(emu_rdmsr(0, 0x1500 + 24, &v), MODEL_VEC_GP); /* past the depth in use */
	HT_CHECK_EQ(emu_wrmsr(0, 0x14cf, 40), MODEL_VEC_GP);
	HT_CHECK_EQ(emu_wrmsr(0, 0x14ce, 0x7f000f), 0);
	HT_CHECK_EQ(emu_wrmsr(0, 0x14ce, 1u << 4), MODEL_VEC_GP);
	HT_CHECK_EQ(emu_rdmsr(0, 0x680, &v), MODEL_VEC_GP); /* no legacy stack */
	HT_CHECK_EQ(emu_wrmsr(0, 0x3f2, 0x1f00000f), 0);
	HT_CHECK_EQ(emu_wrmsr(0, 0x3f2, 0x10), MODEL_VEC_GP); /* no counter group before format 6 */
	HT_CHECK_EQ(emu_wrmsr(0, 0x3f1, 0xf000000ffull), 0);  /* every counter, fixed at 32 + i */
	HT_CHECK_EQ(emu_wrmsr(0, 0x186, 1ull << 34), 0);      /* adaptive opt-in */
	HT_CHECK_EQ(emu_wrmsr(0, 0x38d, 1ull << 36), 0);      /* FIXED_CTR1's */

	boot(NULL, NULL); /* Zen 4 */
	HT_CHECK_EQ(emu_wrmsr(0, 0xc000010f, 0x40), 0);
	HT_CHECK_EQ(emu_wrmsr(0, 0xc000010f, 0x4), MODEL_VEC_GP); /* no BRS */
	HT_CHECK_EQ(emu_wrmsr(0, 0xc000010e, 0x200), MODEL_VEC_GP);
	HT_CHECK_EQ(emu_rdmsr(0, 0xc0010300 + 2 * 16, &v), MODEL_VEC_GP); /* entry 16 of 16 */

	boot("core2duo", NULL); /* no DS */
	HT_CHECK_EQ(emu_rdmsr(0, 0x600, &v), MODEL_VEC_GP);
	HT_CHECK_EQ(emu_rdmsr(0, 0x3f1, &v), MODEL_VEC_GP);
	HT_CHECK_EQ(emu_rdmsr(0, 0x680, &v), MODEL_VEC_GP);
}

/* --- Filter encodings (SDM "Filtering of Last Branch Records": suppress
 * bits; IA32_LBR_CTL: enable bits; AMD LBR_SELECT: suppress bits) --- */

HT_TEST(lbr_filter_encodings)
{
	struct pmu_lbr_caps l;
	struct pmu_lbr_regs r;
	char why[PMU_REASON_LEN];
	struct pmu_lbr_filter all = { .os = true, .usr = true, .kinds = PMU_LBR_BR_ALL };
	struct pmu_lbr_filter no_jcc_ret = { .os = true,
					     .usr = true,
					     .kinds = PMU_LBR_BR_ALL &
						      ~(1u << PMU_LBR_BR_JCC | 1u << PMU_LBR_BR_NEAR_RET) };
	struct pmu_lbr_filter user = { .os = false, .usr = true, .kinds = PMU_LBR_BR_ALL };
	struct pmu_lbr_filter stack = { .os = true,
					.usr = true,
					.kinds = 1u << PMU_LBR_BR_NEAR_REL_CALL |
						 1u << PMU_LBR_BR_NEAR_IND_CALL | 1u << PMU_LBR_BR_NEAR_RET,
					.call_stack = true };

	boot("Skylake-Client", NULL);
	pmu_lbr_decode(pmu_caps(), &l);
	HT_CHECK_EQ(pmu_lbr_encode(&l, &all, 0x800, &r, why, sizeof(why)), PMU_OK);
	HT_CHECK(r.select_msr == 0x1c8 && r.select == 0 && r.ctl_msr == 0x1d9 && r.ctl_on == 0x801 &&
			 r.ctl_off == 0x800,
		 "legacy all: select %#lx on %#lx off %#lx", r.select, r.ctl_on, r.ctl_off);
	pmu_lbr_encode(&l, &no_jcc_ret, 0, &r, why, sizeof(why));
	HT_CHECK_EQ(r.select, 0x24); /* JCC (2), NEAR_RET (5) */
	pmu_lbr_encode(&l, &user, 0, &r, why, sizeof(why));
	HT_CHECK_EQ(r.select, 0x1); /* CPL_EQ_0 */
	pmu_lbr_encode(&l, &stack, 0, &r, why, sizeof(why));
	HT_CHECK_EQ(r.select, 0x200 | 0x4 | 0x40 | 0x80 | 0x100); /* EN_CALLSTACK, no Jcc/jumps/far */

	boot("Icelake-Server", arch_lbr);
	pmu_lbr_decode(pmu_caps(), &l);
	pmu_lbr_encode(&l, &all, 0, &r, why, sizeof(why));
	HT_CHECK(!r.select_msr && r.ctl_msr == 0x14ce && r.ctl_on == 0x7f0007 && r.ctl_off == 0,
		 "arch all: ctl %#lx", r.ctl_on);
	pmu_lbr_encode(&l, &no_jcc_ret, 0, &r, why, sizeof(why));
	HT_CHECK_EQ(r.ctl_on, 0x5e0007); /* no COND (16), no NEAR_RET (21) */
	pmu_lbr_encode(&l, &user, 0, &r, why, sizeof(why));
	HT_CHECK_EQ(r.ctl_on, 0x7f0005); /* LBREn, USR */
	pmu_lbr_encode(&l, &stack, 0, &r, why, sizeof(why));
	HT_CHECK_EQ(r.ctl_on, 0x38000f); /* REL_CALL, IND_CALL, RET; CALL_STACK, USR, OS, LBREn */

	boot(NULL, NULL);
	pmu_lbr_decode(pmu_caps(), &l);
	pmu_lbr_encode(&l, &no_jcc_ret, 0x0, &r, why, sizeof(why));
	HT_CHECK(r.select_msr == 0xc000010e && r.select == 0x24 && r.ctl_on == 0x40 && r.ctl_off == 0,
		 "AMD: select %#lx on %#lx", r.select, r.ctl_on);
	HT_CHECK_EQ(pmu_lbr_encode(&l, &stack, 0, &r, why, sizeof(why)), PMU_E_UNSUPPORTED);
	HT_CHECK(strstr(why, "call-stack"), "AMD call stack refused: %s", why);
}

/* --- Records the model makes, read back by the driver --- */

struct br {
	X86PMUBranch kind;
	uint64_t from, to;
};

/* Kernel-half addresses so that the formats' sign extension matters. */
static const struct br branches[] = {
	{ X86PMU_BR_NEAR_REL_JMP, 0xffffffff81000010ull, 0xffffffff81000040ull },
	{ X86PMU_BR_NEAR_REL_CALL, 0xffffffff81000044ull, 0xffffffff81002000ull },
	{ X86PMU_BR_NEAR_RET, 0xffffffff81002010ull, 0xffffffff81000049ull },
	{ X86PMU_BR_JCC, 0xffffffff8100004cull, 0xffffffff81000060ull },
	{ X86PMU_BR_NEAR_IND_JMP, 0xffffffff81000066ull, 0xffffffff81000080ull },
};
#define NBR (sizeof(branches) / sizeof(branches[0]))

/* Enable with filter f, make the branches at CPL 0, read newest first. */
static unsigned record(X86PMUState *s, const struct pmu_lbr_filter *f, struct pmu_lbr_entry *out)
{
	struct pmu_lbr_caps l;
	struct pmu_lbr_regs r;
	struct pmu_lbr_snapshot snap;
	char why[PMU_REASON_LEN];
	uint64_t now = 0;

	pmu_lbr_decode(pmu_caps(), &l);
	if (l.kind != PMU_LBR_ARCH)
		pmu_hw_rdmsr(l.ctl_msr, &now);
	HT_CHECK_EQ(pmu_lbr_encode(&l, f, now, &r, why, sizeof(why)), PMU_OK);
	HT_CHECK_EQ(pmu_lbr_clear(&l), 0);
	if (r.select_msr)
		HT_CHECK_EQ(pmu_hw_wrmsr(r.select_msr, r.select), 0);
	HT_CHECK_EQ(pmu_hw_wrmsr(r.ctl_msr, r.ctl_on), 0);
	HT_CHECK(x86pmu_lbr_recording(s), "recording after %#x <- %#lx", r.ctl_msr, r.ctl_on);
	for (unsigned i = 0; i < NBR; i++)
		x86pmu_branch(s, branches[i].kind, branches[i].from, branches[i].to, 0, 0);
	HT_CHECK_EQ(pmu_hw_wrmsr(r.ctl_msr, r.ctl_off), 0);
	/* Off: nothing more. */
	x86pmu_branch(s, X86PMU_BR_JCC, 0x1000, 0x2000, 0, 0);
	HT_CHECK_EQ(pmu_lbr_snapshot(&l, &snap), 0);
	for (unsigned k = 0; k < l.depth && k < 8; k++)
		out[k] = pmu_lbr_recent(&l, &snap, k);
	return l.depth;
}

static void expect_newest_first(const struct pmu_lbr_entry *e, const char *what)
{
	for (unsigned k = 0; k < NBR; k++) {
		const struct br *b = &branches[NBR - 1 - k];
		HT_CHECK(e[k].valid && e[k].from == b->from && e[k].to == b->to,
			 "%s: entry %u is %#lx -> %#lx, expected %#lx -> %#lx", what, k,
			 (unsigned long)e[k].from, (unsigned long)e[k].to, (unsigned long)b->from,
			 (unsigned long)b->to);
	}
	HT_CHECK(!e[NBR].from && !e[NBR].to, "%s: entry %u should be empty", what, (unsigned)NBR);
}

static void nehalem_fmt(X86PMUConfig *c)
{
	(void)c;
}

HT_TEST(lbr_records_read_back_in_every_format)
{
	struct pmu_lbr_filter all = { .os = true, .usr = true, .kinds = PMU_LBR_BR_ALL };
	struct pmu_lbr_entry e[8];
	X86PMUState *s;

	/* Format 3 keeps MISPRED in FROM[63] over a 48-bit address, 4 three
	 * flags over 61 bits, 5 plain addresses; architectural and AMD: entry
	 * 0 is the newest, AMD's TO carries VALID. */
	s = boot("Nehalem", nehalem_fmt);
	record(s, &all, e);
	expect_newest_first(e, "format 3");
	s = boot("Haswell", NULL);
	record(s, &all, e);
	expect_newest_first(e, "format 4");
	s = boot("Skylake-Client", NULL);
	record(s, &all, e);
	expect_newest_first(e, "format 5");
	s = boot("Icelake-Server", arch_lbr);
	record(s, &all, e);
	expect_newest_first(e, "architectural");
	s = boot(NULL, NULL);
	record(s, &all, e);
	expect_newest_first(e, "AMD LbrExtV2");
}

HT_TEST(lbr_filters_drop_what_they_name)
{
	struct pmu_lbr_filter f = { .os = true,
				    .usr = true,
				    .kinds = PMU_LBR_BR_ALL &
					     ~(1u << PMU_LBR_BR_JCC | 1u << PMU_LBR_BR_NEAR_RET) };
	struct pmu_lbr_filter user = { .os = false, .usr = true, .kinds = PMU_LBR_BR_ALL };
	const char *shapes[] = { "Skylake-Client", "Icelake-Server", NULL };
	struct pmu_lbr_entry e[8];

	for (unsigned i = 0; i < 3; i++) {
		X86PMUState *s = boot(shapes[i], i == 1 ? arch_lbr : NULL);
		record(s, &f, e);
		/* Kept: the JMP rel, CALL rel, JMP indirect (newest first). */
		HT_CHECK(e[0].from == branches[4].from && e[1].from == branches[1].from &&
				 e[2].from == branches[0].from && !e[3].from,
			 "%s: kept %#lx %#lx %#lx %#lx", shapes[i] ? shapes[i] : "AMD",
			 (unsigned long)e[0].from, (unsigned long)e[1].from, (unsigned long)e[2].from,
			 (unsigned long)e[3].from);
		record(s, &user, e);
		HT_CHECK(!e[0].from && !e[0].to, "%s: CPL 0 branches kept by a user-only filter",
			 shapes[i] ? shapes[i] : "AMD");
	}
}

HT_TEST(lbr_entry_decoding)
{
	struct pmu_lbr_caps l = { .kind = PMU_LBR_LEGACY };
	struct pmu_lbr_entry e;

	l.format = 0; /* FROM in 31:0, TO in 63:32 of one MSR */
	e = pmu_lbr_decode_entry(&l, 0x0040200000401000ull, 0, 0);
	HT_CHECK(e.from == 0x401000 && e.to == 0x402000, "format 0: %#lx -> %#lx", (unsigned long)e.from,
		 (unsigned long)e.to);
	l.format = 3;
	e = pmu_lbr_decode_entry(&l, 0xffffffff81000010ull & ~(1ull << 63), 0xffffffff81000040ull, 0);
	HT_CHECK(e.from == 0xffffffff81000010ull && !e.mispred, "format 3: %#lx", (unsigned long)e.from);
	e = pmu_lbr_decode_entry(&l, (1ull << 63) | 0x401000, 0x402000, 0);
	HT_CHECK(e.from == 0x401000 && e.mispred, "format 3 mispredicted: %#lx %u", (unsigned long)e.from,
		 e.mispred);
	l.format = 4;
	e = pmu_lbr_decode_entry(&l, (7ull << 61) | 0x401000, 0x402000, 0);
	HT_CHECK(e.from == 0x401000 && e.mispred, "format 4: %#lx", (unsigned long)e.from);
	l.format = 5;
	e = pmu_lbr_decode_entry(&l, 0x401000, 0x402000, 1ull << 63);
	HT_CHECK(e.from == 0x401000 && e.mispred, "format 5: LBR_INFO[63]");
	l.format = 6; /* Goldmont: TO[63:48] cycles */
	e = pmu_lbr_decode_entry(&l, 0x401000, 0x1234000000402000ull, 0);
	HT_CHECK(e.to == 0x402000, "format 6: TO %#lx", (unsigned long)e.to);
	l.kind = PMU_LBR_EXTV2;
	e = pmu_lbr_decode_entry(&l, (1ull << 63) | 0x03ffffff81000010ull, 0x8000000081000040ull, 0);
	HT_CHECK(e.from == 0xffffffff81000010ull && e.mispred && e.valid && e.to == 0x81000040,
		 "AMD: %#lx -> %#lx valid %u", (unsigned long)e.from, (unsigned long)e.to, e.valid);
	e = pmu_lbr_decode_entry(&l, 0, 0, 0);
	HT_CHECK(!e.valid, "AMD: TO[63] clear is an empty entry");
}

HT_TEST(lbr_depth_wraps_and_call_stack_pops)
{
	struct pmu_lbr_caps l;
	struct pmu_lbr_snapshot snap;
	X86PMUState *s = boot("Haswell", NULL);

	pmu_lbr_decode(pmu_caps(), &l);
	pmu_lbr_clear(&l);
	pmu_hw_wrmsr(MSR_IA32_DEBUGCTL, 1);
	for (unsigned i = 0; i < 20; i++)
		x86pmu_branch(s, X86PMU_BR_NEAR_REL_JMP, 0x1000 + 2 * i, 0x1002 + 2 * i, 0, 0);
	pmu_lbr_snapshot(&l, &snap);
	HT_CHECK_EQ(snap.tos, 20 % 16);
	HT_CHECK_EQ(pmu_lbr_recent(&l, &snap, 0).from, 0x1000 + 2 * 19);
	HT_CHECK_EQ(pmu_lbr_recent(&l, &snap, 15).from, 0x1000 + 2 * 4);
	/* Call stack: call A, call B, return, call C: C then A. */
	pmu_lbr_clear(&l);
	pmu_hw_wrmsr(MSR_LBR_SELECT, 0x200 | 0x4 | 0x40 | 0x80 | 0x100);
	x86pmu_branch(s, X86PMU_BR_NEAR_REL_CALL, 0xa0, 0xa00, 0, 0);
	x86pmu_branch(s, X86PMU_BR_NEAR_REL_CALL, 0xa10, 0xb00, 0, 0);
	x86pmu_branch(s, X86PMU_BR_NEAR_RET, 0xb10, 0xa15, 0, 0);
	x86pmu_branch(s, X86PMU_BR_NEAR_REL_CALL, 0xa20, 0xc00, 0, 0);
	pmu_lbr_snapshot(&l, &snap);
	HT_CHECK_EQ(snap.tos, 2);
	HT_CHECK_EQ(pmu_lbr_recent(&l, &snap, 0).to, 0xc00);
	HT_CHECK_EQ(pmu_lbr_recent(&l, &snap, 1).to, 0xa00);
	/* Freeze (v3): a PMI request clears DEBUGCTL.LBR. */
	pmu_hw_wrmsr(MSR_IA32_DEBUGCTL, 1 | 1ull << 11);
	pmu_hw_wrmsr(MSR_IA32_PERFEVTSEL0, 0x5300c4); /* branches, USR OS INT EN */
	pmu_hw_wrmsr(MSR_IA32_PMC0, (uint64_t)-1);
	pmu_hw_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1);
	uint32_t one[X86PMU_EV_NUM] = { 0 };
	one[X86PMU_EV_BRANCHES] = 1;
	HT_CHECK_EQ(x86pmu_count_cycles(s, X86PMU_RING_OS, 1, one), 1);
	HT_CHECK_EQ(emu_peek(0, MSR_IA32_DEBUGCTL) & 1, 0);
	HT_CHECK(!x86pmu_lbr_recording(s), "frozen by clearing DEBUGCTL.LBR");
}

/* --- PEBS --- */

HT_TEST(pebs_decode_each_format)
{
	struct pmu_pebs_caps p;

	boot("Skylake-Client", NULL);
	pmu_pebs_decode(pmu_caps(), &p);
	HT_CHECK(p.present && p.format == 3 && !p.adaptive && p.trap && p.counters == 0xf &&
			 p.fixed_reset_offset == 0x80,
		 "Skylake: %s; format %u counters %#lx", p.why, p.format, (unsigned long)p.counters);
	boot("Icelake-Server", NULL);
	pmu_pebs_decode(pmu_caps(), &p);
	HT_CHECK(p.present && p.format == 4 && p.adaptive && p.counters == (0xffull | 0xfull << 32),
		 "Ice Lake: %s; format %u adaptive %u counters %#lx", p.why, p.format, p.adaptive,
		 (unsigned long)p.counters);
	/* KVM's shape: format 4 kept, PEBS_BASELINE (bit 14) cleared. */
	boot("Icelake-Server", no_baseline);
	pmu_pebs_decode(pmu_caps(), &p);
	HT_CHECK(!p.present && strstr(p.why, "PEBS format 4 without PEBS_BASELINE"),
		 "format 4, no baseline: %s", p.why);
	HT_CHECK_EQ(pmu_pebs_record_size(&p, false, 0), 32);
	boot("Icelake-Server", arch_lbr);
	pmu_pebs_decode(pmu_caps(), &p);
	HT_CHECK(p.present && p.format == 5 && p.fixed_reset_offset == 0x140, "format 5: %s", p.why);
	boot("Nehalem", NULL);
	pmu_pebs_decode(pmu_caps(), &p);
	HT_CHECK(p.present && p.format == 1 && p.counters == 0xf, "Nehalem: %s", p.why);
	/* Absent: the SKIP reasons. */
	boot("core2duo", NULL);
	pmu_pebs_decode(pmu_caps(), &p);
	HT_CHECK_STR(p.why, "CPUID.01H:EDX.DS[21]=0: no debug store, no PEBS");
	boot("Skylake-Client", NULL);
	emu[0].misc_enable = 1 | 1ull << 12;
	pmu_pebs_decode(pmu_caps(), &p);
	HT_CHECK(!p.present && strstr(p.why, "PEBS_UNAVAILABLE"), "MISC_ENABLE[12]: %s", p.why);
	boot(NULL, NULL);
	pmu_pebs_decode(pmu_caps(), &p);
	HT_CHECK(!p.present && strstr(p.why, "IBS"), "AMD: %s", p.why);
}

/* Architectural PEBS (format 0xF; Linux's arch-PEBS series, tip
 * d21954c8a0ff): CPUID.23H.0:EAX[4,5] announce sub-leaves 4 (EBX: the
 * CFG_C capabilities, bit k = CFG_C bit 32 + k) and 5 (EAX GP and ECX
 * fixed PEBS counters, EBX/EDX PDIST); the DS-area decode reports it as
 * what replaces it (pmu/intel/arch_pebs.c drives it). */
HT_TEST(arch_pebs_decoded_and_reported)
{
	static const struct pmu_init_opts opts = { .workload = model_tick_probe };
	struct model_cpu_config mc = { .vendor = "GenuineIntel", .cpu_ops = &emu_cpu_ops };
	struct pmu_pebs_caps p;

	emu_hooks = (struct emu_cpu_hooks){ .cpuid = leaf23_cpuid, .tick = emu_tick };
	x86pmu_shape("Icelake-Server", X86PMU_VENDOR_INTEL, 6, 0, &emu[0].cfg);
	emu[0].cfg.perf_caps = (emu[0].cfg.perf_caps & ~0xf00ull) | 0xf00; /* format 0xF */
	emu[0].misc_enable = 1;
	memset(leaf23, 0, sizeof(leaf23));
	leaf23[0].eax = 1u << 1 | 1u << 4 | 1u << 5;
	leaf23[1].eax = 0xff, leaf23[1].ebx = 0x7;
	leaf23[4].ebx = 1u << 29 | 1u << 30 | 3u << 8 | 1u << 3;
	leaf23[5] = (struct cpuid_regs){ .eax = 0xff, .ebx = 0x1, .ecx = 0x7, .edx = 0x1 };
	leaf23_given = true;
	model_init_custom(&mc, 1);
	pmu_cpu_init(&opts);
	pmu_pebs_decode(pmu_caps(), &p);
	HT_CHECK(!p.present && p.arch && p.arch_caps == leaf23[4].ebx && p.arch_gp == 0xff &&
			 p.arch_pdist_gp == 1 && p.arch_fixed == 7 && p.arch_pdist_fixed == 1,
		 "arch PEBS: present %u arch %u caps %#x gp %#x fixed %#x", p.present, p.arch, p.arch_caps,
		 p.arch_gp, p.arch_fixed);
	HT_CHECK(strstr(p.why,
			"architectural PEBS (CPUID.23H.4:EBX=0x60000308, PEBS counters GP 0xff fixed 0x7)"),
		 "reason: %s", p.why);
	/* Without sub-leaves 4 and 5 the reason says so. */
	leaf23[0].eax = 1u << 1;
	pmu_pebs_decode(pmu_caps(), &p);
	HT_CHECK(!p.present && strstr(p.why, "lacks sub-leaves 4 and 5"), "reason: %s", p.why);
	leaf23_given = false;
}

HT_TEST(pebs_record_sizes)
{
	struct pmu_pebs_caps p = { .format = 0 };

	/* Formats 0-3: 0x90, 0xB0, 0xC0, 0xC8 (SDM record layouts). */
	static const unsigned fixed[] = { 0x90, 0xb0, 0xc0, 0xc8 };
	for (unsigned f = 0; f < 4; f++) {
		p.format = f;
		HT_CHECK_EQ(pmu_pebs_record_size(&p, false, 0), fixed[f]);
	}
	/* Adaptive: kvm-unit-tests' arithmetic, 32 + 32 (memory) + 144
	 * (GPRs) + 256 (XMMs) + 24 per LBR entry. */
	p = (struct pmu_pebs_caps){ .format = 4, .adaptive = true };
	HT_CHECK_EQ(pmu_pebs_record_size(&p, true, 0), 32);
	HT_CHECK_EQ(pmu_pebs_record_size(&p, true, 0x1), 64);
	HT_CHECK_EQ(pmu_pebs_record_size(&p, true, 0x2), 176);
	HT_CHECK_EQ(pmu_pebs_record_size(&p, true, 0x7), 464);
	HT_CHECK_EQ(pmu_pebs_record_size(&p, true, 0x1f00000f), 464 + 32 * 24);
	HT_CHECK_EQ(pmu_pebs_record_size(&p, false, 0x1f00000f), 32);
}

static void put64(uint8_t *b, unsigned off, uint64_t v)
{
	memcpy(b + off, &v, 8);
}

HT_TEST(pebs_parse_fixed_and_adaptive)
{
	uint8_t rec[2048];
	struct pmu_pebs_record r;
	struct pmu_pebs_caps p = { .format = 3 };
	char why[PMU_REASON_LEN];

	/* Format 3 (SDM): RFLAGS 0, RIP 8, RAX 10, RBX 18, RCX 20, RDX 28,
	 * RSI 30, RDI 38, RBP 40, RSP 48, R8-R15 50-88, status 90, eventing
	 * IP B0, TSC C0. */
	memset(rec, 0, sizeof(rec));
	put64(rec, 0x00, 0x246);
	put64(rec, 0x08, 0x401006);
	put64(rec, 0x10, 0xa0);
	put64(rec, 0x18, 0xb0);
	put64(rec, 0x20, 0xc0);
	put64(rec, 0x28, 0xd0);
	put64(rec, 0x30, 0x51);
	put64(rec, 0x38, 0xd1);
	put64(rec, 0x40, 0xb9);
	put64(rec, 0x48, 0x59);
	put64(rec, 0x88, 0x15);
	put64(rec, 0x90, 0x2);
	put64(rec, 0xb0, 0x401004);
	put64(rec, 0xc0, 12345);
	HT_CHECK_EQ(pmu_pebs_parse(&p, rec, 0xc8, &r, why, sizeof(why)), PMU_OK);
	HT_CHECK(r.size == 0xc8 && r.rflags == 0x246 && r.rip == 0x401006 && r.has_ip && r.ip == 0x401004 &&
			 r.applicable == 2 && r.tsc == 12345,
		 "format 3 header: size %u rip %#lx ip %#lx", r.size, (unsigned long)r.rip,
		 (unsigned long)r.ip);
	HT_CHECK(r.gpr[PMU_GPR_RAX] == 0xa0 && r.gpr[PMU_GPR_RBX] == 0xb0 && r.gpr[PMU_GPR_RCX] == 0xc0 &&
			 r.gpr[PMU_GPR_RDX] == 0xd0 && r.gpr[PMU_GPR_RSI] == 0x51 &&
			 r.gpr[PMU_GPR_RDI] == 0xd1 && r.gpr[PMU_GPR_RBP] == 0xb9 &&
			 r.gpr[PMU_GPR_RSP] == 0x59 && r.gpr[15] == 0x15,
		 "format 3 GPRs in encoding order");
	HT_CHECK(pmu_pebs_parse(&p, rec, 0xc0, &r, why, sizeof(why)) == PMU_E_INVAL, "short buffer refused");
	p.format = 1;
	HT_CHECK_EQ(pmu_pebs_parse(&p, rec, 0xb0, &r, why, sizeof(why)), PMU_OK);
	HT_CHECK(!r.has_ip && r.size == 0xb0, "format 1 has no eventing IP");

	/* Adaptive with memory info, GPRs and 2 LBR entries: basic (format,
	 * IP, applicable, TSC), meminfo 4 words, GPRs RFLAGS RIP RAX RCX RDX
	 * RBX RSP RBP RSI RDI R8-R15, LBR {from, to, info}. */
	p = (struct pmu_pebs_caps){ .format = 4, .adaptive = true };
	uint64_t cfg = 0x1 | 0x2 | 0x8 | 1ull << 24;
	unsigned size = 32 + 32 + 144 + 2 * 24;
	memset(rec, 0, sizeof(rec));
	put64(rec, 0, cfg | (uint64_t)size << 48);
	put64(rec, 8, 0x401004);
	put64(rec, 16, 0x1);
	put64(rec, 64, 0x202);    /* RFLAGS */
	put64(rec, 72, 0x401006); /* RIP */
	put64(rec, 80, 7);        /* RAX */
	put64(rec, 88, 1);        /* RCX */
	put64(rec, 104, 3);       /* RBX */
	put64(rec, 112, 0x8000);  /* RSP */
	put64(rec, 208, 0x1000);  /* LBR 0 from */
	put64(rec, 216, 0x2000);  /* LBR 0 to */
	put64(rec, 232, 0x3000);  /* LBR 1 from */
	HT_CHECK_EQ(pmu_pebs_parse(&p, rec, size, &r, why, sizeof(why)), PMU_OK);
	HT_CHECK(r.format_field == cfg && r.size == size && r.ip == 0x401004 && r.applicable == 1 &&
			 r.has_gprs && r.rip == 0x401006 && r.gpr[PMU_GPR_RAX] == 7 &&
			 r.gpr[PMU_GPR_RCX] == 1 && r.gpr[PMU_GPR_RBX] == 3 && r.gpr[PMU_GPR_RSP] == 0x8000,
		 "adaptive: %s", why);
	HT_CHECK(r.lbr_n == 2 && r.lbr[0].from == 0x1000 && r.lbr[0].to == 0x2000 && r.lbr[1].from == 0x3000,
		 "adaptive LBR group: %u entries, %#lx", r.lbr_n, (unsigned long)r.lbr[0].from);
	put64(rec, 0, cfg | (uint64_t)(size + 8) << 48);
	HT_CHECK(pmu_pebs_parse(&p, rec, 4096, &r, why, sizeof(why)) == PMU_E_INVAL &&
			 strstr(why, "size field"),
		 "a size field that disagrees with the groups: %s", why);
}

/* The model writes PEBS records into host memory: the DS area's
 * addresses are host pointers. */
static bool mem_read(void *o, uint64_t la, void *buf, unsigned len)
{
	(void)o;
	memcpy(buf, (void *)(uintptr_t)la, len);
	return true;
}
static bool mem_write(void *o, uint64_t la, const void *buf, unsigned len)
{
	(void)o;
	memcpy((void *)(uintptr_t)la, buf, len);
	return true;
}

HT_TEST(pebs_assist_through_the_model)
{
	static struct pmu_ds_area ds;
	static uint8_t buf[8192];
	struct pmu_pebs_caps p;
	struct pmu_pebs_record r;
	char why[PMU_REASON_LEN];
	uint32_t one[X86PMU_EV_NUM] = { 0 };
	X86PMUMachine m = {
		.rip = 0x401006, .eventing_ip = 0x401004, .rflags = 0x2, .read = mem_read, .write = mem_write
	};
	X86PMUState *s = boot("Icelake-Server", NULL);
	unsigned size;

	for (unsigned g = 0; g < 16; g++)
		m.gpr[g] = 0x100 + g;
	pmu_pebs_decode(pmu_caps(), &p);
	size = pmu_pebs_record_size(&p, true, 0x2);
	memset(&ds, 0, sizeof(ds));
	ds.pebs_base = ds.pebs_index = (uint64_t)(uintptr_t)buf;
	ds.pebs_max = ds.pebs_base + sizeof(buf);
	ds.pebs_threshold = ds.pebs_base + 2ull * size;
	*pmu_pebs_reset_slot(&p, &ds, 1) = (uint64_t)-10 & 0xffffffffffffull;
	HT_CHECK_EQ(pmu_hw_wrmsr(MSR_IA32_DS_AREA, (uint64_t)(uintptr_t)&ds), 0);
	HT_CHECK_EQ(pmu_hw_wrmsr(MSR_PEBS_DATA_CFG, 0x2), 0);
	HT_CHECK_EQ(pmu_hw_wrmsr(MSR_IA32_PERFEVTSEL0 + 1, 0x4004300c4ull), 0); /* adaptive, branches */
	HT_CHECK_EQ(pmu_hw_wrmsr(MSR_IA32_A_PMC0 + 1, (uint64_t)-10 & 0xffffffffffffull), 0);
	HT_CHECK_EQ(pmu_hw_wrmsr(MSR_IA32_PEBS_ENABLE, 0x2), 0);
	HT_CHECK_EQ(pmu_hw_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0x2), 0);
	one[X86PMU_EV_BRANCHES] = 1;
	for (unsigned i = 0; i < 10; i++)
		HT_CHECK_EQ(x86pmu_count_cycles(s, X86PMU_RING_OS, 1, one), 0);
	/* The 10th branch owes a record; the counter's own status bit stays
	 * clear (the model follows KVM). */
	HT_CHECK_EQ(x86pmu_pebs_pending(s), 0x2);
	HT_CHECK_EQ(emu_peek(0, MSR_IA32_PERF_GLOBAL_STATUS), 0);
	HT_CHECK_EQ(x86pmu_pebs_assist(s, &m), 0);
	HT_CHECK_EQ(ds.pebs_index - ds.pebs_base, size);
	HT_CHECK_EQ(emu_peek(0, MSR_IA32_PMC0 + 1), (uint64_t)-10 & 0xffffffffffffull);
	HT_CHECK_EQ(pmu_pebs_parse(&p, buf, size, &r, why, sizeof(why)), PMU_OK);
	HT_CHECK(r.format_field == 0x2 && r.ip == 0x401004 && r.applicable == 0x2 && r.rip == 0x401006 &&
			 r.gpr[PMU_GPR_RAX] == 0x100 && r.gpr[PMU_GPR_RBX] == 0x103 && r.gpr[15] == 0x10f,
		 "record: %s, ip %#lx rip %#lx rbx %#lx", why, (unsigned long)r.ip, (unsigned long)r.rip,
		 (unsigned long)r.gpr[PMU_GPR_RBX]);
	/* The second record reaches the threshold: the buffer PMI, OvfBuf. */
	for (unsigned i = 0; i < 10; i++)
		x86pmu_count_cycles(s, X86PMU_RING_OS, 1, one);
	HT_CHECK_EQ(x86pmu_pebs_assist(s, &m), 1);
	HT_CHECK_EQ(emu_peek(0, MSR_IA32_PERF_GLOBAL_STATUS), 1ull << 62);
	HT_CHECK_EQ(ds.pebs_index - ds.pebs_base, 2 * size);
	/* Without its adaptive bit the counter writes the basic group alone. */
	pmu_hw_wrmsr(MSR_IA32_PERFEVTSEL0 + 1, 0x4300c4ull);
	for (unsigned i = 0; i < 10; i++)
		x86pmu_count_cycles(s, X86PMU_RING_OS, 1, one);
	x86pmu_pebs_assist(s, &m);
	HT_CHECK_EQ(pmu_pebs_parse(&p, buf + 2 * size, 32, &r, why, sizeof(why)), PMU_OK);
	HT_CHECK(r.size == 32 && r.format_field == 0, "ignored adaptive: size %u format %#lx", r.size,
		 (unsigned long)r.format_field);
	/* A fixed format: Skylake's format 3 with the eventing IP at 0xB0. */
	s = boot("Skylake-Client", NULL);
	pmu_pebs_decode(pmu_caps(), &p);
	memset(&ds, 0, sizeof(ds));
	ds.pebs_base = ds.pebs_index = (uint64_t)(uintptr_t)buf;
	ds.pebs_max = ds.pebs_base + sizeof(buf);
	ds.pebs_threshold = ds.pebs_max;
	pmu_hw_wrmsr(MSR_IA32_DS_AREA, (uint64_t)(uintptr_t)&ds);
	pmu_hw_wrmsr(MSR_IA32_PERFEVTSEL0, 0x4300c4ull);
	pmu_hw_wrmsr(MSR_IA32_A_PMC0, 0xffffffffffffull);
	pmu_hw_wrmsr(MSR_IA32_PEBS_ENABLE, 0x1);
	pmu_hw_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0x1);
	x86pmu_count_cycles(s, X86PMU_RING_OS, 1, one);
	HT_CHECK_EQ(x86pmu_pebs_assist(s, &m), 0);
	HT_CHECK_EQ(pmu_pebs_parse(&p, buf, 0xc8, &r, why, sizeof(why)), PMU_OK);
	HT_CHECK(r.size == 0xc8 && r.rip == 0x401006 && r.ip == 0x401004 && r.applicable == 1 &&
			 r.gpr[PMU_GPR_RBX] == 0x103 && r.gpr[PMU_GPR_RSP] == 0x104,
		 "format 3 record: rip %#lx ip %#lx rbx %#lx rsp %#lx", (unsigned long)r.rip,
		 (unsigned long)r.ip, (unsigned long)r.gpr[PMU_GPR_RBX], (unsigned long)r.gpr[PMU_GPR_RSP]);
	/* PEBS_ENABLE takes PMC0-3 only before adaptive PEBS. */
	HT_CHECK_EQ(pmu_hw_wrmsr(MSR_IA32_PEBS_ENABLE, 0x10), MODEL_VEC_GP);
}

/* --- Sampling with PEBS records and branch stacks (pmu/sampling_hw.c and
 * the PMI handler) --- */

static void pmi_now(void *arg)
{
	(void)arg;
	pmu_pmi_handle(0xdead, 0);
}

struct seen {
	unsigned n, precise, stacks;
	struct pmu_sample s;
	struct pmu_sample_branch br[PMU_SAMPLE_MAX_BRANCHES];
	uint32_t nbr;
};

static void visit_sample(void *ctx, const struct pmu_sample *smp)
{
	struct seen *v = ctx;

	if (v->n++ == 0) {
		v->s = *smp;
		if (smp->hdr.misc & PMU_SAMPLE_MISC_BRANCHES) {
			const struct pmu_sample_branches *b = (const void *)((const uint8_t *)smp +
									     pmu_sample_size(smp->nr_values));
			v->nbr = b->nr;
			memcpy(v->br, b->entry, b->nr * sizeof(b->entry[0]));
		}
	}
	v->precise += (smp->hdr.misc & PMU_SAMPLE_MISC_PRECISE) != 0;
	v->stacks += (smp->hdr.misc & PMU_SAMPLE_MISC_BRANCHES) != 0;
}

HT_TEST(sampling_with_pebs_records_and_branch_stacks)
{
	static uint8_t hw_mem[PMU_SAMPLING_HW_MEM] __attribute__((aligned(64)));
	static uint8_t ring_mem[PMU_SAMPLING_CTL_SIZE + 16384] __attribute__((aligned(64)));
	X86PMUState *st = boot("Skylake-Client", NULL);
	struct pmu_event ev, *evs[1] = { &ev };
	struct pmu_event_attr a;
	struct pmu_sampling_hw h;
	struct pmu_sampling s;
	struct seen v = { 0 };
	struct model_work w = { .branches = 100, .instructions = 300, .cycles = 200 };

	pmu_attr_arch(&a, PMU_ARCH_BRANCHES);
	a.period = 100;
	a.intr = true;
	pmu_event_init(&ev, &a, "branches");
	HT_CHECK(pmu_event_add_idx(&ev, 0) == PMU_OK, "placing: %s", ev.reason);
	int rc = pmu_sampling_hw_start(&h, &ev, PMU_SAMPLING_BRANCHES_ANY, hw_mem, sizeof(hw_mem));
	HT_CHECK(rc == PMU_OK, "pmu_sampling_hw_start: %s", h.reason);
	if (rc != PMU_OK)
		return;
	/* PEBS: no INT on the counter, the DS reset value -period (the DS
	 * area heads hw_mem: pmu/intel/precise.c). */
	const struct pmu_ds_area *ds = (const void *)hw_mem;
	HT_CHECK_EQ(ev.hw.config & (1ull << 20), 0);
	HT_CHECK_EQ(ds->reset[0], (uint64_t)-100 & 0xffffffffffffull);
	HT_CHECK_EQ(ds->pebs_threshold - ds->pebs_base, 0xc8);
	pmu_pmi_set_hw(&h);
	HT_CHECK_EQ(pmu_sampling_start(&s, evs, 1, ring_mem, sizeof(ring_mem), false), PMU_OK);
	model_set_pmi_handler(pmi_now, NULL);
	emu_machine = (X86PMUMachine){
		.rip = 0x401006, .eventing_ip = 0x401004, .read = mem_read, .write = mem_write
	};
	/* Three branches into the LBRs, then 2 periods of branches: 2 buffer
	 * PMIs, each one precise sample with the stack frozen at it. */
	x86pmu_branch(st, X86PMU_BR_NEAR_REL_CALL, 0x400010, 0x401000, 0, 0);
	x86pmu_branch(st, X86PMU_BR_JCC, 0x401002, 0x401000, 0, 0);
	x86pmu_branch(st, X86PMU_BR_JCC, 0x401004, 0x401000, 0, 0);
	model_tick(&w);
	model_tick(&w);
	HT_CHECK_EQ(pmu_sampling_stop(&s), PMU_OK);
	pmu_pmi_set_hw(NULL);
	pmu_sampling_hw_stop(&h);
	emu_machine.write = NULL;
	pmu_sampling_drain(&s, NULL, NULL, visit_sample, &v, NULL);
	HT_CHECK_EQ(v.n, 2);
	HT_CHECK_EQ(v.precise, 2);
	HT_CHECK_EQ(v.stacks, 2);
	HT_CHECK(v.s.rip == 0x401004 && v.s.version == PMU_SAMPLE_VERSION && v.s.period == 100 &&
			 v.s.idx == 0,
		 "first sample: rip %#lx version %u period %lu idx %u", (unsigned long)v.s.rip, v.s.version,
		 (unsigned long)v.s.period, v.s.idx);
	HT_CHECK(v.nbr == 3 && v.br[0].from == 0x401004 && v.br[2].from == 0x400010 && v.br[2].to == 0x401000,
		 "the first sample's stack: %u entries, newest %#lx", v.nbr, (unsigned long)v.br[0].from);
	/* Torn down: PEBS and the LBRs off. */
	HT_CHECK_EQ(emu_peek(0, MSR_IA32_PEBS_ENABLE), 0);
	HT_CHECK_EQ(emu_peek(0, MSR_IA32_DEBUGCTL) & 1, 0);
	model_set_pmi_handler(NULL, NULL);
	pmu_event_del(&ev);
}

HT_TEST(sampling_call_stacks_need_the_mode)
{
	struct pmu_sampling_hw h;

	boot("Nehalem", NULL); /* format 3: no call-stack mode */
	HT_CHECK_EQ(pmu_sampling_hw_start(&h, NULL, PMU_SAMPLING_BRANCHES_USER_CALLSTACK, NULL, 0),
		    PMU_E_UNSUPPORTED);
	HT_CHECK(strstr(h.reason, "call-stack mode"), "refusal: %s", h.reason);
	boot("Haswell", NULL);
	HT_CHECK_EQ(pmu_sampling_hw_start(&h, NULL, PMU_SAMPLING_BRANCHES_USER_CALLSTACK, NULL, 0), PMU_OK);
	HT_CHECK_EQ(emu_peek(0, MSR_LBR_SELECT), 0x200 | 0x1 | 0x4 | 0x40 | 0x80 | 0x100);
	pmu_sampling_hw_stop(&h);
	boot("core2duo", NULL);
	HT_CHECK_EQ(pmu_sampling_hw_start(&h, NULL, PMU_SAMPLING_BRANCHES_NONE, NULL, 0), PMU_OK);
	struct pmu_event ev;
	struct pmu_event_attr a;
	pmu_attr_arch(&a, PMU_ARCH_BRANCHES);
	a.period = 100;
	pmu_event_init(&ev, &a, "branches");
	pmu_event_add_idx(&ev, 0);
	HT_CHECK_EQ(pmu_sampling_hw_start(&h, &ev, PMU_SAMPLING_BRANCHES_NONE, NULL, 0), PMU_E_UNSUPPORTED);
	HT_CHECK(strstr(h.reason, "DS[21]=0"), "no DS: %s", h.reason);
	pmu_event_del(&ev);
}

HT_MAIN("pmu_lbr_pebs")
