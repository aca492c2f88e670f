/* Last branch records on each CPU (legacy, architectural, AMD LbrExtV2):
 * crafted code paths whose branches are known from their labels, run
 * between the two WRMSRs that start and stop recording; the stack must
 * hold exactly those branches, in order, filtered as asked, wrapped at its
 * depth, popped in call-stack mode, frozen on a PMI, and untouched while
 * recording is off. */
#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "arch/x86/timer.h"
#include "lib/bits.h"
#include "pmu/intel/caps.h"
#include "pmu/lbr.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/ktest.h"
#include "tests/pmu/pmu_common.h"

/*
 * The paths take (msr, on, off): ECX = msr for both WRMSRs, the first
 * writes `on`, the last `off`. Nothing between them but the path; its
 * only branches are the labelled ones, and no compare sits next to a Jcc
 * (AMD may fuse the pair and record the compare's address, Linux
 * amd/lbr.c branch_type_fused). Interrupts are off around every call.
 *
 * lbr_path, seven taken branches, oldest first:
 *   1 lbr_b_jmp   -> lbr_t_jmp     JMP rel
 *   2 lbr_b_call  -> lbr_f1        CALL rel
 *   3 lbr_f1      -> lbr_t_ret1    RET
 *   4 lbr_b_jcc   -> lbr_t_jcc     Jcc (taken; the JNZ after it is not)
 *   5 lbr_b_ind   -> lbr_t_ind     JMP indirect
 *   6 lbr_b_icall -> lbr_f2        CALL indirect
 *   7 lbr_f2      -> lbr_t_ret2    RET
 */
void lbr_path(uint32_t msr, uint64_t on, uint64_t off);
/* LBR_CHAIN jumps "jmp 1f; 1:", two bytes each, from lbr_chain_start. */
void lbr_chain(uint32_t msr, uint64_t on, uint64_t off);
/* Call stack: lbr_cs_b1 calls lbr_cs_f1, which calls lbr_cs_f2 (that
 * returns) and then lbr_cs_f3, where recording stops. */
void lbr_cs_path(uint32_t msr, uint64_t on, uint64_t off);
/* n >= 1 iterations of DEC/JNZ: the freeze check's busy branches. */
void lbr_loop(uint64_t n);
extern const char lbr_b_jmp[], lbr_t_jmp[], lbr_b_call[], lbr_f1[], lbr_t_ret1[], lbr_b_jcc[], lbr_t_jcc[],
	lbr_b_ind[], lbr_t_ind[], lbr_b_icall[], lbr_f2[], lbr_t_ret2[];
extern const char lbr_chain_start[], lbr_cs_b1[], lbr_cs_f1[], lbr_cs_b3[], lbr_cs_f3[];
extern const char lbr_loop_start[], lbr_loop_end[];
#define LBR_CHAIN 72 /* more than the deepest stack (64) */

/* Each path keeps `off` in R8D/R9D (copied before EDX takes on's high
 * half) and the MSR in ECX from the first WRMSR to the last. */
__asm__(".pushsection .text\n"
	".globl lbr_path\n"
	".type lbr_path, @function\n"
	"lbr_path:\n\t"
	"mov %rdx, %r8\n\t"
	"mov %rdx, %r9\n\t"
	"shr $32, %r9\n\t"
	"mov %edi, %ecx\n\t"
	"mov %esi, %eax\n\t"
	"shr $32, %rsi\n\t"
	"mov %esi, %edx\n\t"
	"wrmsr\n"
	".globl lbr_b_jmp\nlbr_b_jmp:\n\t"
	"jmp lbr_t_jmp\n\t"
	"ud2\n"
	".globl lbr_t_jmp\nlbr_t_jmp:\n"
	".globl lbr_b_call\nlbr_b_call:\n\t"
	"call lbr_f1\n"
	".globl lbr_t_ret1\nlbr_t_ret1:\n\t"
	"xor %eax, %eax\n\t" /* ZF = 1 */
	"nop\n"
	".globl lbr_b_jcc\nlbr_b_jcc:\n\t"
	"jz lbr_t_jcc\n\t"
	"ud2\n"
	".globl lbr_t_jcc\nlbr_t_jcc:\n\t"
	"jnz lbr_never\n\t"
	"lea lbr_t_ind(%rip), %r10\n"
	".globl lbr_b_ind\nlbr_b_ind:\n\t"
	"jmp *%r10\n\t"
	"ud2\n"
	".globl lbr_t_ind\nlbr_t_ind:\n\t"
	"lea lbr_f2(%rip), %r10\n"
	".globl lbr_b_icall\nlbr_b_icall:\n\t"
	"call *%r10\n"
	".globl lbr_t_ret2\nlbr_t_ret2:\n\t"
	"mov %r8d, %eax\n\t"
	"mov %r9d, %edx\n\t"
	"wrmsr\n\t"
	"ret\n"
	"lbr_never:\n\t"
	"ud2\n"
	".globl lbr_f1\nlbr_f1:\n\t"
	"ret\n"
	".globl lbr_f2\nlbr_f2:\n\t"
	"ret\n"
	".size lbr_path, . - lbr_path\n"

	".globl lbr_chain\n"
	".type lbr_chain, @function\n"
	"lbr_chain:\n\t"
	"mov %rdx, %r8\n\t"
	"mov %rdx, %r9\n\t"
	"shr $32, %r9\n\t"
	"mov %edi, %ecx\n\t"
	"mov %esi, %eax\n\t"
	"shr $32, %rsi\n\t"
	"mov %esi, %edx\n\t"
	"wrmsr\n"
	".globl lbr_chain_start\nlbr_chain_start:\n\t"
	".rept 72\n\t"
	".byte 0xeb, 0x00\n\t" /* jmp to the next instruction */
	".endr\n\t"
	"mov %r8d, %eax\n\t"
	"mov %r9d, %edx\n\t"
	"wrmsr\n\t"
	"ret\n"
	".size lbr_chain, . - lbr_chain\n"

	".globl lbr_cs_path\n"
	".type lbr_cs_path, @function\n"
	"lbr_cs_path:\n\t"
	"mov %rdx, %r8\n\t"
	"mov %rdx, %r9\n\t"
	"shr $32, %r9\n\t"
	"mov %edi, %ecx\n\t"
	"mov %esi, %eax\n\t"
	"shr $32, %rsi\n\t"
	"mov %esi, %edx\n\t"
	"wrmsr\n"
	".globl lbr_cs_b1\nlbr_cs_b1:\n\t"
	"call lbr_cs_f1\n\t"
	"ret\n"
	".globl lbr_cs_f1\nlbr_cs_f1:\n\t"
	"call lbr_cs_f2\n"
	".globl lbr_cs_b3\nlbr_cs_b3:\n\t"
	"call lbr_cs_f3\n\t"
	"ret\n"
	"lbr_cs_f2:\n\t"
	"ret\n"
	".globl lbr_cs_f3\nlbr_cs_f3:\n\t"
	"mov %r8d, %eax\n\t"
	"mov %r9d, %edx\n\t"
	"wrmsr\n\t"
	"ret\n"
	".size lbr_cs_path, . - lbr_cs_path\n"

	".globl lbr_loop\n"
	".type lbr_loop, @function\n"
	"lbr_loop:\n"
	".globl lbr_loop_start\nlbr_loop_start:\n\t"
	"dec %rdi\n\t"
	"nop\n\t"
	"jnz lbr_loop_start\n\t"
	"ret\n"
	".globl lbr_loop_end\nlbr_loop_end:\n"
	".size lbr_loop, . - lbr_loop\n"
	".popsection\n");

struct want {
	const char *from, *to;
	enum pmu_lbr_branch kind;
};

/* lbr_path's branches, oldest first. */
static const struct want path[] = {
	{ lbr_b_jmp, lbr_t_jmp, PMU_LBR_BR_NEAR_REL_JMP }, { lbr_b_call, lbr_f1, PMU_LBR_BR_NEAR_REL_CALL },
	{ lbr_f1, lbr_t_ret1, PMU_LBR_BR_NEAR_RET },       { lbr_b_jcc, lbr_t_jcc, PMU_LBR_BR_JCC },
	{ lbr_b_ind, lbr_t_ind, PMU_LBR_BR_NEAR_IND_JMP }, { lbr_b_icall, lbr_f2, PMU_LBR_BR_NEAR_IND_CALL },
	{ lbr_f2, lbr_t_ret2, PMU_LBR_BR_NEAR_RET },
};
#define PATH_N ARRAY_LEN(path)

/* The per-CPU LBR facility, decoded by needs(), used by the body on the
 * same CPU right after. */
static struct pmu_lbr_caps lbr_of[PMU_MAX_CPUS];

static struct pmu_lbr_caps *lbr_here(void)
{
	return &lbr_of[pmu_hw_cpu() % PMU_MAX_CPUS];
}

static const char *needs_lbr(void)
{
	struct pmu_lbr_caps *l;

	if (!pmu_cpu_ensure())
		return "CPU index beyond PMU_MAX_CPUS";
	l = lbr_here();
	pmu_lbr_decode(pmu_caps(), l);
	return l->kind == PMU_LBR_NONE ? ktest_reason("%s", l->why) : NULL;
}

static const char *needs_lbr_filters(void)
{
	const char *why = needs_lbr();
	const struct pmu_lbr_caps *l = lbr_here();

	if (why)
		return why;
	if (!l->cpl_filter || !l->type_filter)
		return ktest_reason("%s LBRs without %s filtering (LBR_SELECT absent or CPUID.1CH:EBX=%#x)",
				    pmu_lbr_kind_name(l->kind),
				    l->cpl_filter ? "branch-type" : "privilege-level", l->leaf_1c.ebx);
	return NULL;
}

static const char *needs_lbr_call_stack(void)
{
	const char *why = needs_lbr();
	const struct pmu_lbr_caps *l = lbr_here();

	if (why)
		return why;
	if (!l->call_stack && l->kind == PMU_LBR_LEGACY)
		return ktest_reason("legacy LBRs (format %u): MSR_LBR_SELECT refused EN_CALLSTACK (bit 9)",
				    l->format);
	if (!l->call_stack && l->kind == PMU_LBR_ARCH)
		return ktest_reason("architectural LBRs: CPUID.1CH:EBX[2] (call-stack mode)=0 (EBX %#x)",
				    l->leaf_1c.ebx);
	if (!l->call_stack)
		return "AMD LbrExtV2 has no call-stack mode (LBR_SELECT bits 0-8 only)";
	return NULL;
}

static const char *needs_lbr_freeze(void)
{
	const char *why = needs_lbr();
	const struct pmu_lbr_caps *l = lbr_here();

	if (why)
		return why;
	if (l->kind == PMU_LBR_EXTV2)
		return "AMD LbrExtV2: the LBR freeze (CPUID Fn8000_0022_EAX[2], LbrAndPmcFreeze) is not driven here";
	if (!l->freeze)
		return ktest_reason("FREEZE_LBRS_ON_PMI needs PDCM and PMU version 2 (PDCM %u, version %u)",
				    intel_caps(pmu_caps())->pdcm, pmu_caps()->version);
	return pmu_needs_pmi();
}

/* Program the filter, run fn between the WRMSRs, read the stack. False
 * after a failed check naming why. */
static bool run_path(void (*fn)(uint32_t, uint64_t, uint64_t), const struct pmu_lbr_filter *f, bool enable,
		     struct pmu_lbr_snapshot *s)
{
	const struct pmu_lbr_caps *l = lbr_here();
	struct pmu_lbr_regs r;
	char why[PMU_REASON_LEN];
	uint64_t now = 0;
	int err;
	bool was;

	if (l->kind != PMU_LBR_ARCH && pmu_hw_rdmsr(l->ctl_msr, &now) != 0)
		return check(false, "reading MSR %#x (the LBR enable) faulted", l->ctl_msr);
	err = pmu_lbr_encode(l, f, now, &r, why, sizeof(why));
	if (!check(err == PMU_OK, "encoding the LBR filter: %s", why))
		return false;
	if (!check(pmu_lbr_clear(l) == 0, "emptying the %s LBR stack faulted", pmu_lbr_kind_name(l->kind)))
		return false;
	if (r.select_msr && !check(pmu_hw_wrmsr(r.select_msr, r.select) == 0,
				   "LBR filter MSR %#x <- %#lx faulted", r.select_msr, r.select))
		return false;
	was = irq_save();
	fn(r.ctl_msr, enable ? r.ctl_on : r.ctl_off, r.ctl_off);
	irq_restore(was);
	if (r.select_msr)
		pmu_hw_wrmsr(r.select_msr, 0);
	return check(pmu_lbr_snapshot(l, s) == 0, "reading the %s LBR stack faulted",
		     pmu_lbr_kind_name(l->kind));
}

static void diag_stack(const struct pmu_lbr_snapshot *s, unsigned n)
{
	const struct pmu_lbr_caps *l = lbr_here();

	diag("%s LBRs, depth %u, TOS %lu; newest first:", pmu_lbr_kind_name(l->kind), l->depth,
	     (unsigned long)s->tos);
	for (unsigned k = 0; k < n && k < l->depth; k++) {
		struct pmu_lbr_entry e = pmu_lbr_recent(l, s, k);
		diag("  %2u: %#lx -> %#lx info %#lx%s", k, (unsigned long)e.from, (unsigned long)e.to,
		     (unsigned long)e.info, e.valid ? "" : " (not valid)");
	}
}

/* The newest len entries are want[] (oldest first), the rest empty; the
 * emptied stack took `records` records (legacy TOS). Returns whether all
 * matched. */
static bool check_stack(const struct pmu_lbr_snapshot *s, const struct want *want, unsigned len,
			unsigned records, const char *what)
{
	const struct pmu_lbr_caps *l = lbr_here();
	bool ok = true;

	for (unsigned k = 0; k < l->depth; k++) {
		struct pmu_lbr_entry e = pmu_lbr_recent(l, s, k);
		if (k < len) {
			const struct want *w = &want[len - 1 - k];
			ok &= check(e.valid && e.from == (uint64_t)w->from && e.to == (uint64_t)w->to,
				    "%s: entry %u (0 = newest) is %#lx -> %#lx, expected the %s %p -> %p",
				    what, k, (unsigned long)e.from, (unsigned long)e.to,
				    pmu_lbr_branch_name(w->kind), (const void *)w->from, (const void *)w->to);
		} else {
			ok &= check(!e.from && !e.to,
				    "%s: entry %u is %#lx -> %#lx, expected empty (%u branches)", what, k,
				    (unsigned long)e.from, (unsigned long)e.to, len);
		}
	}
	/* Legacy: TOS moved once per record from the emptied stack's 0. */
	if (l->kind == PMU_LBR_LEGACY)
		ok &= check(s->tos == records % l->depth,
			    "%s: MSR_LASTBRANCH_TOS %lu, expected %u (%u records)", what,
			    (unsigned long)s->tos, records % l->depth, records);
	return ok;
}

/* Entry i as written before recording: FROM and TO addresses of the
 * chain (canonical, distinct), INFO's MISPRED and CYC_CNT_VALID with the
 * index as cycle count (SDM vol. 3B, IA32_LBR_x_INFO). */
static void written_entry(unsigned i, uint64_t e[3])
{
	e[0] = (uint64_t)lbr_chain_start + 2 * i;
	e[1] = (uint64_t)lbr_chain_start + 2 * i + 1;
	e[2] = BIT(63) | BIT(60) | i;
}

/* As run_path, with every entry written (written_entry) after the stack
 * was emptied and before recording starts. */
static bool run_path_over(void (*fn)(uint32_t, uint64_t, uint64_t), const struct pmu_lbr_filter *f,
			  struct pmu_lbr_snapshot *s)
{
	const struct pmu_lbr_caps *l = lbr_here();
	struct pmu_lbr_regs r;
	char why[PMU_REASON_LEN];
	bool was;

	if (!check(pmu_lbr_encode(l, f, 0, &r, why, sizeof(why)) == PMU_OK, "encoding the LBR filter: %s",
		   why))
		return false;
	if (!check(pmu_lbr_clear(l) == 0, "emptying the architectural LBR stack faulted"))
		return false;
	for (unsigned i = 0; i < l->depth; i++) {
		uint64_t e[3];
		written_entry(i, e);
		if (!check(pmu_hw_wrmsr(l->from_msr + i, e[0]) == 0 &&
				   pmu_hw_wrmsr(l->to_msr + i, e[1]) == 0 &&
				   pmu_hw_wrmsr(l->info_msr + i, e[2]) == 0,
			   "writing IA32_LBR_%u_FROM/TO/INFO faulted", i))
			return false;
	}
	was = irq_save();
	fn(r.ctl_msr, r.ctl_on, r.ctl_off);
	irq_restore(was);
	return check(pmu_lbr_snapshot(l, s) == 0, "reading the architectural LBR stack faulted");
}

/* Architectural LBRs keep the newest record in entry 0: each new record
 * moves the older ones down one and drops the oldest, a return in
 * call-stack mode moves them up one and empties the last (SDM vol. 3B,
 * "Architectural Last Branch Records"; "Call Stack Profiling"); the
 * entries' MSRs are read/write. Entries written before recording (FROM,
 * TO and INFO) move as wholes: after lbr_path's 7 records entry k holds
 * what entry k - 7 was written with; after the call-stack path's three
 * calls and one return, what entry k - 2 was. Nothing on other LBRs
 * (legacy: a ring under TOS; AMD: not stated). */
static void arch_moves_whole(bool call_stack)
{
	const struct pmu_lbr_caps *l = lbr_here();
	struct pmu_lbr_filter all = { .os = true, .usr = true, .kinds = PMU_LBR_BR_ALL };
	struct pmu_lbr_filter cs = { .os = true,
				     .usr = true,
				     .kinds = 1u << PMU_LBR_BR_NEAR_REL_CALL |
					      1u << PMU_LBR_BR_NEAR_IND_CALL | 1u << PMU_LBR_BR_NEAR_RET,
				     .call_stack = true };
	struct pmu_lbr_snapshot s;
	unsigned n = call_stack ? 2 : PATH_N;
	bool ok = true;

	if (l->kind != PMU_LBR_ARCH || l->depth <= n)
		return;
	if (!run_path_over(call_stack ? lbr_cs_path : lbr_path, call_stack ? &cs : &all, &s))
		return;
	for (unsigned k = n; k < l->depth && ok; k++) {
		struct pmu_lbr_entry got = pmu_lbr_recent(l, &s, k);
		uint64_t e[3];

		written_entry(k - n, e);
		ok = check(
			got.from == e[0] && got.to == e[1] && got.info == e[2],
			"%s over written entries: entry %u is %#lx -> %#lx info %#lx; expected what entry %u was written with, %#lx -> %#lx info %#lx",
			call_stack ? "call-stack path (3 calls, 1 return)" : "lbr_path (7 branches)", k,
			(unsigned long)got.from, (unsigned long)got.to, (unsigned long)got.info, k - n,
			(unsigned long)e[0], (unsigned long)e[1], (unsigned long)e[2]);
	}
	if (!ok)
		diag_stack(&s, l->depth);
}

KTEST("pmu.lbr", records_match_path, needs_lbr, KTEST_PER_CPU,
      "LBRs hold exactly a crafted path's 7 branches, newest first")
{
	const struct pmu_lbr_caps *l = lbr_here();
	struct pmu_lbr_filter all = { .os = true, .usr = true, .kinds = PMU_LBR_BR_ALL };
	struct pmu_lbr_snapshot s;

	diag("%s LBRs: depth %u, format %#x, FROM %#x TO %#x INFO %#x stride %u, filters cpl %u type %u call stack %u",
	     pmu_lbr_kind_name(l->kind), l->depth, l->format, l->from_msr, l->to_msr, l->info_msr, l->stride,
	     l->cpl_filter, l->type_filter, l->call_stack);
	if (!run_path(lbr_path, &all, true, &s))
		return;
	if (!check_stack(&s, path, PATH_N, PATH_N, "lbr_path"))
		diag_stack(&s, PATH_N + 2);
	/* Formats 5 and 7: LBR_INFO bits 60:16 are reserved (SDM, "LBR_INFO"). */
	if (l->kind == PMU_LBR_LEGACY && l->info_msr)
		for (unsigned k = 0; k < PATH_N; k++) {
			struct pmu_lbr_entry e = pmu_lbr_recent(l, &s, k);
			check(!(e.info & 0x1fffffffffff0000ull),
			      "entry %u: MSR_LBR_INFO %#lx sets reserved bits 60:16", k,
			      (unsigned long)e.info);
		}
	arch_moves_whole(false);
}

KTEST("pmu.lbr", nothing_while_disabled, needs_lbr, KTEST_PER_CPU,
      "with recording off the path leaves the emptied LBR stack empty")
{
	struct pmu_lbr_filter all = { .os = true, .usr = true, .kinds = PMU_LBR_BR_ALL };
	struct pmu_lbr_snapshot s;

	if (run_path(lbr_path, &all, false, &s) && !check_stack(&s, path, 0, 0, "recording off"))
		diag_stack(&s, 4);
}

KTEST("pmu.lbr", filters, needs_lbr_filters, KTEST_PER_CPU,
      "branch-type and CPL filters drop exactly the branches they name")
{
	/* Without Jcc and returns: the jumps and calls, in order. */
	const struct want no_jcc_ret[] = { path[0], path[1], path[4], path[5] };
	struct pmu_lbr_filter f = { .os = true,
				    .usr = true,
				    .kinds = PMU_LBR_BR_ALL &
					     ~(1u << PMU_LBR_BR_JCC | 1u << PMU_LBR_BR_NEAR_RET) };
	struct pmu_lbr_snapshot s;

	if (run_path(lbr_path, &f, true, &s) && !check_stack(&s, no_jcc_ret, 4, 4, "no Jcc, no RET"))
		diag_stack(&s, 6);
	/* Only ring > 0: the path runs at CPL 0, nothing is kept. */
	f = (struct pmu_lbr_filter){ .os = false, .usr = true, .kinds = PMU_LBR_BR_ALL };
	if (run_path(lbr_path, &f, true, &s) && !check_stack(&s, path, 0, 0, "user only, run at CPL 0"))
		diag_stack(&s, 4);
	/* Only calls: the two calls. */
	const struct want calls[] = { path[1], path[5] };
	f = (struct pmu_lbr_filter){ .os = true,
				     .usr = true,
				     .kinds = 1u << PMU_LBR_BR_NEAR_REL_CALL |
					      1u << PMU_LBR_BR_NEAR_IND_CALL };
	if (run_path(lbr_path, &f, true, &s) && !check_stack(&s, calls, 2, 2, "calls only"))
		diag_stack(&s, 4);
}

KTEST("pmu.lbr", depth_and_wrap, needs_lbr, KTEST_PER_CPU,
      "72 jumps fill the stack: the newest <depth> in order, TOS wrapped")
{
	const struct pmu_lbr_caps *l = lbr_here();
	struct pmu_lbr_filter all = { .os = true, .usr = true, .kinds = PMU_LBR_BR_ALL };
	static struct want chain[LBR_CHAIN];
	struct pmu_lbr_snapshot s;

	for (unsigned i = 0; i < LBR_CHAIN; i++)
		chain[i] = (struct want){ lbr_chain_start + 2 * i, lbr_chain_start + 2 * i + 2,
					  PMU_LBR_BR_NEAR_REL_JMP };
	if (!run_path(lbr_chain, &all, true, &s))
		return;
	/* The depth entries hold the newest jumps; TOS went round 72 times. */
	if (!check_stack(&s, chain + LBR_CHAIN - l->depth, l->depth, LBR_CHAIN, "72 jumps"))
		diag_stack(&s, 4);
	diag("depth %u (%s)", l->depth,
	     l->kind == PMU_LBR_LEGACY ? "probed: FROM/TO pairs that take a write"
	     : l->kind == PMU_LBR_ARCH ? "IA32_LBR_DEPTH"
				       : "CPUID Fn8000_0022_EBX[9:4]");
}

KTEST("pmu.lbr", call_stack, needs_lbr_call_stack, KTEST_PER_CPU,
      "call-stack mode: a return pops its call, the live calls remain")
{
	const struct pmu_lbr_caps *l = lbr_here();
	struct pmu_lbr_filter f = { .os = true,
				    .usr = true,
				    .kinds = 1u << PMU_LBR_BR_NEAR_REL_CALL | 1u << PMU_LBR_BR_NEAR_IND_CALL |
					     1u << PMU_LBR_BR_NEAR_RET,
				    .call_stack = true };
	struct pmu_lbr_snapshot s;

	if (!run_path(lbr_cs_path, &f, true, &s))
		return;
	/* Three calls, one return: the first and third calls are live (SDM,
	 * "Call Stack Profiling"; Linux lbr.c reads them newest first). */
	struct pmu_lbr_entry e0 = pmu_lbr_recent(l, &s, 0), e1 = pmu_lbr_recent(l, &s, 1);
	bool ok = check(e0.from == (uint64_t)lbr_cs_b3 && e0.to == (uint64_t)lbr_cs_f3,
			"newest entry %#lx -> %#lx, expected the live call %p -> %p", (unsigned long)e0.from,
			(unsigned long)e0.to, (const void *)lbr_cs_b3, (const void *)lbr_cs_f3);
	ok &= check(e1.from == (uint64_t)lbr_cs_b1 && e1.to == (uint64_t)lbr_cs_f1,
		    "second entry %#lx -> %#lx, expected the outer call %p -> %p (the returned call popped)",
		    (unsigned long)e1.from, (unsigned long)e1.to, (const void *)lbr_cs_b1,
		    (const void *)lbr_cs_f1);
	if (l->kind == PMU_LBR_LEGACY)
		ok &= check(s.tos == 2, "MSR_LASTBRANCH_TOS %lu, expected 2 (three pushes, one pop)",
			    (unsigned long)s.tos);
	if (!ok)
		diag_stack(&s, 4);
	arch_moves_whole(true);
}

/* --- Freeze on PMI --- */

struct freeze_view {
	unsigned calls;
	uint64_t status, debugctl;
	int fault;
	struct pmu_lbr_snapshot first, second;
};

static bool same_stack(const struct pmu_lbr_snapshot *a, const struct pmu_lbr_snapshot *b)
{
	if (a->tos != b->tos || a->n != b->n)
		return false;
	for (unsigned i = 0; i < a->n; i++)
		if (a->from[i] != b->from[i] || a->to[i] != b->to[i])
			return false;
	return true;
}

/* In the handler, before the status is cleared: the stack holds still
 * across the handler's own branches (the reads loop, lbr_loop runs). */
static void observe_lbr(void *ctx, uint64_t status)
{
	struct freeze_view *v = ctx;
	const struct pmu_lbr_caps *l = lbr_here();

	if (v->calls++)
		return;
	v->status = status;
	v->fault = pmu_hw_rdmsr(MSR_IA32_DEBUGCTL, &v->debugctl);
	v->fault |= pmu_lbr_snapshot(l, &v->first);
	lbr_loop(100);
	v->fault |= pmu_lbr_snapshot(l, &v->second);
}

KTEST("pmu.lbr", freeze_on_pmi, needs_lbr_freeze, KTEST_PER_CPU,
      "FREEZE_LBRS_ON_PMI: the stack stops at the PMI, LBR_FRZ or LBR clear")
{
	const struct pmu_lbr_caps *l = lbr_here();
	struct pmu_lbr_filter all = { .os = true, .usr = true, .kinds = PMU_LBR_BR_ALL };
	unsigned x = pmu_test_first_absent(~pmu_test_free_gp(), PMU_MAX_GP);
	struct freeze_view v = { 0 };
	struct pmu_lbr_regs r;
	struct pmu_event a;
	char why[PMU_REASON_LEN];
	uint64_t dbg = 0, on, st = 0;

	if (x >= PMU_MAX_GP)
		ktest_skip("no free GP counter (mask %#x)", pmu_test_free_gp());
	pmu_test_need_gp_event(PMU_ARCH_INSTRUCTIONS);
	if (!check(pmu_hw_rdmsr(MSR_IA32_DEBUGCTL, &dbg) == 0, "reading IA32_DEBUGCTL faulted") ||
	    !check(pmu_lbr_encode(l, &all, l->kind == PMU_LBR_ARCH ? 0 : dbg, &r, why, sizeof(why)) == PMU_OK,
		   "encoding the LBR filter: %s", why))
		return;
	pmu_lbr_clear(l);
	if (r.select_msr)
		pmu_hw_wrmsr(r.select_msr, r.select);
	pmu_test_event(&a, PMU_ARCH_INSTRUCTIONS);
	a.attr.intr = true;
	if (!check(pmu_event_add_idx(&a, (int)x) == PMU_OK, "IA32_PMC%u: %s", x, a.reason))
		return;
	/* FREEZE_LBRS_ON_PMI lives in DEBUGCTL whatever enables the LBRs. */
	on = dbg | BIT(DEBUGCTL_FREEZE_LBRS_ON_PMI_BIT) |
	     (l->kind == PMU_LBR_LEGACY ? BIT(DEBUGCTL_LBR_BIT) : 0);
	if (!check(pmu_hw_wrmsr(MSR_IA32_DEBUGCTL, on) == 0, "IA32_DEBUGCTL <- %#lx faulted", on)) {
		pmu_event_del(&a);
		return;
	}
	if (l->kind == PMU_LBR_ARCH)
		pmu_hw_wrmsr(l->ctl_msr, r.ctl_on);
	pmu_pmi_set_observer(observe_lbr, &v);
	bool was = irq_save();
	if (check(pmu_event_enable(&a) == PMU_OK, "enable: %s", a.reason) &&
	    check(pmu_event_write_counter(&a, (0 - 1000ull) & pmu_width_mask(a.hw.width)) == PMU_OK,
		  "preset: %s", a.reason)) {
		irq_enable();
		lbr_loop(20000);
		udelay(1000);
		irq_disable();
		pmu_event_disable(&a);
	}
	irq_restore(was);
	pmu_pmi_set_observer(NULL, NULL);
	uint64_t after = 0;
	pmu_hw_rdmsr(MSR_IA32_DEBUGCTL, &after);
	pmu_hw_rdmsr(pmu_caps()->global_status, &st);
	pmu_hw_wrmsr(MSR_IA32_DEBUGCTL, dbg);
	if (l->kind == PMU_LBR_ARCH)
		pmu_hw_wrmsr(l->ctl_msr, 0);
	if (r.select_msr)
		pmu_hw_wrmsr(r.select_msr, 0);
	pmu_event_del(&a);

	if (!check(v.calls == 1, "expected the PMI handler once, it ran %u times", v.calls))
		return;
	check(v.fault == 0, "reading DEBUGCTL or the LBRs in the handler faulted");
	check(same_stack(&v.first, &v.second),
	      "the LBR stack changed across 100 loop iterations in the PMI handler: not frozen (TOS %lu then %lu)",
	      (unsigned long)v.first.tos, (unsigned long)v.second.tos);
	/* The frozen stack holds the loop the PMI interrupted (whether the
	 * PMI's own transfer is recorded first is not documented). */
	bool in_loop = false;
	for (unsigned k = 0; k < 2 && k < l->depth; k++) {
		struct pmu_lbr_entry e = pmu_lbr_recent(l, &v.first, k);
		in_loop |= e.from >= (uint64_t)lbr_loop_start && e.from < (uint64_t)lbr_loop_end;
	}
	check(in_loop, "neither of the two newest frozen entries comes from the interrupted loop [%p, %p)",
	      (const void *)lbr_loop_start, (const void *)lbr_loop_end);
	if (!in_loop)
		diag_stack(&v.first, 4);
	if (l->freeze_status) {
		/* v4: LBR_FRZ set, DEBUGCTL untouched; the handler's status
		 * clear unfroze it. */
		check((v.status >> PERF_GLOBAL_STATUS_LBR_FRZ_BIT) & 1,
		      "expected LBR_FRZ (bit 58) in GLOBAL_STATUS at the PMI, read %#lx", v.status);
		check(!((st >> PERF_GLOBAL_STATUS_LBR_FRZ_BIT) & 1),
		      "LBR_FRZ still set after the handler: %#lx", st);
		if (l->kind == PMU_LBR_LEGACY)
			check(v.debugctl & BIT(DEBUGCTL_LBR_BIT),
			      "v%u: DEBUGCTL %#lx at the PMI: expected LBR left set (the freeze is LBR_FRZ)",
			      pmu_caps()->version, v.debugctl);
	} else {
		/* v2-v3: the freeze clears DEBUGCTL.LBR (SDM, "Freezing LBR
		 * and Performance Counters on PMI"). */
		check(!(v.debugctl & BIT(DEBUGCTL_LBR_BIT)) && !(after & BIT(DEBUGCTL_LBR_BIT)),
		      "v%u: DEBUGCTL %#lx at the PMI, %#lx after: expected LBR cleared by the freeze",
		      pmu_caps()->version, v.debugctl, after);
	}
	diag("PMI status %#lx, DEBUGCTL at the PMI %#lx, after %#lx", v.status, v.debugctl, after);
}
