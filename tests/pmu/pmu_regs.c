/* Register-level checks on each CPU: RDPMC against RDMSR and its index
 * rules, IA32_PERF_GLOBAL_CTRL's RESET value and gating, reserved bits and
 * absent counters raising #GP, legacy vs full-width counter writes. */
#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "arch/x86/traps.h"
#include "arch/x86/vectors.h"
#include "lib/printf.h"
#include "pmu/bracket.h"
#include "pmu/intel/caps.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/deviations.h"
#include "tests/ktest.h"
#include "tests/pmu/pmu_common.h"

/* RDPMC reads what RDMSR reads, for every free counter; an index past the
 * last counter of either type raises #GP (SDM vol. 2B, RDPMC). Fast mode
 * (ECX[31]) is reserved with an architectural PMU and #GPs (KVM commit
 * 5728a4a0ea79 "KVM: x86/pmu: Disallow 'fast' RDPMC for architectural
 * Intel PMUs", citing the SDM and bare metal; KVM before it returned the
 * low 32 bits, a known deviation); where the backend's manual leaves it
 * undefined the outcome is only reported. The GP counters hold a value
 * with bit 31 set, so their upper bits are not 0 and a low-32-bit read
 * shows. */
KTEST("pmu.regs", rdpmc_vs_rdmsr, pmu_needs_counting, KTEST_PER_CPU,
      "RDPMC = RDMSR = the value written; bad indices #GP")
{
	const struct pmu_caps *c = pmu_caps();
	uint32_t gp = pmu_test_free_gp(), fx = c->global_ctrl ? pmu_test_free_fixed() : 0;
	uint64_t v, m;
	int vec;

	for (unsigned x = 0; x < PMU_MAX_GP; x++) {
		if (!((gp >> x) & 1))
			continue;
		uint64_t want = pmu_sext32(0xa5a5a5a5ull + x, c->gp_width);
		pmu_hw_wrmsr(pmu_ctr_write_msr(c, x), want);
		pmu_hw_rdmsr(pmu_ctr_msr(c, x), &m);
		vec = pmu_hw_rdpmc(x, &v);
		check(vec == 0 && v == m && m == want,
		      "IA32_PMC%u: wrote %#lx, RDMSR %#lx, RDPMC %#lx (vector %d); expected all equal", x,
		      want, m, v, vec);
		vec = pmu_hw_rdpmc(PMU_RDPMC_FAST | x, &v);
		if (c->rdpmc_fast_unchecked_why) {
			diag("fast RDPMC(%u): vector %d, value %#lx (counter %#lx); not checked: %s", x, vec,
			     v, want, c->rdpmc_fast_unchecked_why);
		} else {
			struct dev_obs o = { .kind = DEV_OBS_FAST_RDPMC, .pc = pmu_this_cpu() };
			o.fast_rdpmc.vector = vec ? vec : -1;
			o.fast_rdpmc.value = v;
			o.fast_rdpmc.counter = want;
			check_or_deviation(
				vec == X86_VEC_GP, &o,
				"fast RDPMC(%u) (ECX[31] reserved, PMU v%u): expected #GP, saw vector %d (value %#lx, counter %#lx)",
				x, c->version, vec, v, want);
		}
		pmu_hw_wrmsr(pmu_ctr_write_msr(c, x), 0);
	}
	for (unsigned i = 0; i < PMU_MAX_FIXED; i++) {
		if (!((fx >> i) & 1))
			continue;
		uint64_t want = 0x123456789aull & pmu_width_mask(c->fixed_width);
		pmu_hw_wrmsr(pmu_fixed_msr(c, i), want);
		pmu_hw_rdmsr(pmu_fixed_msr(c, i), &m);
		vec = pmu_hw_rdpmc(PMU_RDPMC_FIXED | i, &v);
		check(vec == 0 && v == m && m == want,
		      "IA32_FIXED_CTR%u: wrote %#lx, RDMSR %#lx, RDPMC %#lx (vector %d); expected all equal",
		      i, want, m, v, vec);
		pmu_hw_wrmsr(pmu_fixed_msr(c, i), 0);
	}
	/* Past the GP counters and the other counters RDPMC reads (AMD's
	 * northbridge/L3 indices, APM vol. 3, RDPMC). */
	unsigned past = pmu_test_first_absent(c->gp_mask | c->rdpmc_extra_mask, PMU_MAX_GP);
	if (past < PMU_MAX_GP) {
		vec = pmu_hw_rdpmc(past, &v);
		struct dev_obs o = { .kind = DEV_OBS_RDPMC_ABSENT, .pc = pmu_this_cpu() };
		o.rdpmc_absent.vector = vec ? vec : -1;
		o.rdpmc_absent.idx = past;
		o.rdpmc_absent.gp_mask = c->gp_mask;
		check_or_deviation(vec == X86_VEC_GP, &o,
				   "RDPMC(%u), past the GP counters (mask %#x): expected #GP, saw vector %d",
				   past, c->gp_mask, vec);
	}
	past = pmu_test_first_absent(c->fixed_mask, PMU_MAX_FIXED);
	if (c->version >= 2 && past < PMU_MAX_FIXED) {
		vec = pmu_hw_rdpmc(PMU_RDPMC_FIXED | past, &v);
		check(vec == X86_VEC_GP, "RDPMC(fixed %u), absent (mask %#x): expected #GP, saw vector %d",
		      past, c->fixed_mask, vec);
	}
	vec = pmu_hw_rdpmc(0x3fffffff, &v);
	check(vec == X86_VEC_GP, "RDPMC(0x3fffffff): expected #GP, saw vector %d", vec);
	/* Indices 32 and 64 of either type name no counter (ECX[29:0] is
	 * the index; nothing past 31 is enumerated): #GP, not the counter
	 * the index modulo 32 would be. */
	for (unsigned far = 32; far <= 64; far += 32) {
		vec = pmu_hw_rdpmc(far, &v);
		check(vec == X86_VEC_GP,
		      "RDPMC(%u), past every GP counter: expected #GP, saw vector %d (%#lx)", far, vec, v);
		if (c->version < 2)
			continue;
		vec = pmu_hw_rdpmc(PMU_RDPMC_FIXED | far, &v);
		check(vec == X86_VEC_GP,
		      "RDPMC(fixed %u), past every fixed counter: expected #GP, saw vector %d (%#lx)", far,
		      vec, v);
	}
}

/* GLOBAL_CTRL comes out of RESET with the GP enables set and the fixed
 * ones clear (SDM vol. 3A, "Processor State After Reset", from edition
 * 325462-079; earlier editions said 0); a counter whose GLOBAL_CTRL bit is
 * clear does not move even with its EN set. The SDM gives the RESET value,
 * not what firmware, a loader or a hypervisor's own reset path hands over
 * (QEMU writes 0 after reset, Xen starts at 0, KVM before v6.0 set the
 * fixed enables too: tests/deviations.c), so the boot value is reported,
 * and named when it is one of those. It is asserted only under QEMU's TCG
 * (CPUID 0x40000000 "TCGTCGTCGTCG"), an emulator: nothing runs there
 * before pmutest but QEMU's own firmware, which programs no counter, so
 * with no counter in use at boot the value is the emulated RESET value
 * (a Linux that kexecs pmutest leaves its own: harness/kexec.py runs
 * pmu.caps.* only, and judges that hand-over itself). */
KTEST("pmu.regs", global_ctrl_reset_and_gating, pmu_needs_global_ctrl, KTEST_PER_CPU,
      "GLOBAL_CTRL's boot value reported; no count without its GLOBAL_CTRL bit")
{
	struct pmu_cpu *pc = pmu_cpu_ensure();
	const struct pmu_caps *c = pmu_cpu_caps(pc);

	if (pmu_cpu_inuse(pc)->gp || pmu_cpu_inuse(pc)->fixed || pmu_cpu_inuse(pc)->taken_over)
		diag("counters were in use at boot: the boot value %#lx need not be the RESET value",
		     pmu_cpu_inuse(pc)->global_ctrl);
	else if (c->global_reset_unchecked_why)
		diag("%s at boot: %#lx (%s)", pmu_global_ctrl_name(c), pmu_cpu_inuse(pc)->global_ctrl,
		     c->global_reset_unchecked_why);
	else if (c->hv == PMU_HV_TCG && pmu_cpu_inuse(pc)->global_ctrl_valid)
		check(pmu_cpu_inuse(pc)->global_ctrl == c->global_ctrl_reset,
		      "%s at boot: expected the SDM's RESET value %#lx under QEMU TCG (its firmware programs no counter), saw %#lx",
		      pmu_global_ctrl_name(c), c->global_ctrl_reset, pmu_cpu_inuse(pc)->global_ctrl);
	else
		diag("%s at boot: %#lx (the SDM's RESET value %#lx); reported, not checked: anything that ran before may change it",
		     pmu_global_ctrl_name(c), pmu_cpu_inuse(pc)->global_ctrl, c->global_ctrl_reset);
	struct dev_obs boot = { .kind = DEV_OBS_GLOBAL_CTRL_BOOT, .pc = pc };
	boot.global_ctrl_boot.value = pmu_cpu_inuse(pc)->global_ctrl;
	boot.global_ctrl_boot.gp_mask = c->gp_mask;
	boot.global_ctrl_boot.fixed_mask = c->fixed_mask;
	report_fingerprint(&boot);

	uint32_t gp = pmu_test_free_gp();
	unsigned a = pmu_test_first_absent(~gp, PMU_MAX_GP);
	unsigned b = pmu_test_first_absent(~(gp & ~(1u << a)), PMU_MAX_GP);
	if (b >= PMU_MAX_GP)
		ktest_skip("gating needs two free GP counters (mask %#x)", gp);
	pmu_test_need_gp_event(PMU_ARCH_INSTRUCTIONS);
	struct pmu_event on, off;
	struct pmu_test_counts *m = pmu_test_counts_here();
	pmu_test_event(&on, PMU_ARCH_INSTRUCTIONS);
	pmu_test_event(&off, PMU_ARCH_INSTRUCTIONS);
	struct pmu_event *g[] = { &on, &off };
	if (check(pmu_event_add_idx(&on, (int)a) == PMU_OK && pmu_event_add_idx(&off, (int)b) == PMU_OK,
		  "two instruction counters: %s %s", on.reason, off.reason)) {
		/* Both selects have EN; GLOBAL_CTRL enables only the first. */
		struct pmu_test_window w = { .only = pmu_idx_bit(on.hw.idx) };
		if (pmu_test_measure(g, 2, &w, m)) {
			char what[48];
			ksnprintf(what, sizeof(what), "%s%u (enabled)", pmu_ctr_name(c), a);
			pmu_test_check_exact(pc, what, PMU_ARCH_INSTRUCTIONS, false, m->min[0]);
			for (unsigned k = 0; k < 2; k++)
				check(m->last[1][k] == 0,
				      "IA32_PMC%u (EN set, GLOBAL_CTRL bit clear): expected 0 over %lu iterations, saw %lu",
				      b, m->len[k], m->last[1][k]);
		}
	}
	if (on.hw.idx >= 0)
		pmu_event_del(&on);
	if (off.hw.idx >= 0)
		pmu_event_del(&off);
}

struct wr_try {
	uint32_t msr;
	uint64_t val;
};

static void try_wrmsr(void *arg)
{
	struct wr_try *t = arg;
	__asm__ volatile("wrmsr" ::"c"(t->msr), "a"((uint32_t)t->val), "d"((uint32_t)(t->val >> 32))
			 : "memory");
}

/* Write val to msr and report the outcome where the backend's manual does
 * not document a #GP (c->reserved_gp_unchecked_why); put old back if the
 * write took. */
static void report_wr(const struct pmu_caps *c, uint32_t msr, uint64_t val, uint64_t old, const char *what)
{
	struct wr_try t = { msr, val };
	int v = expect_exception(try_wrmsr, &t);
	diag("%s: wrmsr %#x <- %#lx: %s %d; not checked: %s", what, msr, val, v < 0 ? "no fault" : "vector",
	     v, c->reserved_gp_unchecked_why);
	if (v < 0)
		pmu_hw_wrmsr(msr, old);
}

/* Write val, whose bits in reserved the backend's manual calls reserved
 * without promising a #GP (c->reserved_gp_unchecked_why: AMD, whose
 * silicon and KVM drop or keep them, Linux 9b026073db2f): a #GP, or the
 * write taken with every other bit read back as written; say which, and
 * put old back. */
static void expect_gp_or_taken(const struct pmu_caps *c, uint32_t msr, uint64_t val, uint64_t reserved,
			       uint64_t old, const char *what)
{
	struct wr_try t = { msr, val };
	struct dev_obs o = { .kind = DEV_OBS_RESERVED_WRITE, .pc = pmu_this_cpu() };
	uint64_t back = 0;
	int v = expect_exception(try_wrmsr, &t);

	o.reserved_write.vector = v;
	o.reserved_write.value = val;
	if (v == X86_VEC_GP) {
		diag("%s: wrmsr %#x <- %#lx: #GP (%s)", what, msr, val, c->reserved_gp_unchecked_why);
		check(true, "a #GP is one of the two outcomes");
		return;
	}
	int rv = pmu_hw_rdmsr(msr, &back);
	o.reserved_write.readback = back;
	if (check(v < 0 && rv == 0 && (back & ~reserved) == (val & ~reserved),
		  "%s: wrmsr %#x <- %#lx: expected #GP, or the write taken with the bits outside %#lx as written; saw %s %d, read back %#lx",
		  what, msr, val, reserved, v < 0 ? "no fault" : "vector", v, back))
		diag("%s: wrmsr %#x <- %#lx: no #GP, the reserved bits %s (read back %#lx)", what, msr, val,
		     (back & reserved) == (val & reserved) ? "kept" : "dropped", back);
	report_fingerprint(&o);
	if (v < 0)
		pmu_hw_wrmsr(msr, old);
}

/* Write val to msr expecting #GP; put old back if the write took. */
static void expect_gp(uint32_t msr, uint64_t val, uint64_t old, const char *what)
{
	struct wr_try t = { msr, val };
	int v = expect_exception(try_wrmsr, &t);
	if (!check(v == X86_VEC_GP, "%s: wrmsr %#x <- %#lx: expected #GP, saw %s %d", what, msr, val,
		   v < 0 ? "no fault" : "vector", v))
		pmu_hw_wrmsr(msr, old);
}

/* Write val, with AnyThread set, to msr where the PMU defines AnyThread
 * (Intel version 3 on, CPUID.0AH:EDX[15] clear): SDM vol. 3B,
 * "Architectural Performance Monitoring Version 3", makes bit 21 of
 * IA32_PERFEVTSELx and bit 2 + 4i of IA32_FIXED_CTR_CTRL control bits,
 * so the write takes and reads back as written (a hypervisor that refuses
 * them: tests/deviations.c). Put old back. */
/* Intel version 3 or later with CPUID.0AH:EDX[15] (AnyThread deprecation,
 * "Architectural Performance Monitoring Version 5") clear. Where it is
 * set the SDM asks software not to use the bit and pmutest asserts
 * nothing of a write to it. */
static bool anythread_defined(const struct pmu_caps *c)
{
	return c->vendor == PMU_VENDOR_INTEL && c->version >= 3 && !intel_caps(c)->anythread_deprecated;
}

static void expect_anythread_taken(uint32_t msr, uint64_t val, uint64_t old, const char *what)
{
	struct wr_try t = { msr, val };
	struct dev_obs o = { .kind = DEV_OBS_ANYTHREAD_WRITE, .pc = pmu_this_cpu() };
	uint64_t back = 0;
	int v = expect_exception(try_wrmsr, &t);
	int rv = v < 0 ? pmu_hw_rdmsr(msr, &back) : 0;

	o.anythread_write.vector = v;
	o.anythread_write.msr = msr;
	o.anythread_write.value = val;
	o.anythread_write.readback = back;
	check_or_deviation(
		v < 0 && rv == 0 && back == val, &o,
		"%s: wrmsr %#x <- %#lx: expected the write taken and read back, saw %s %d, read back %#lx",
		what, msr, val, v < 0 ? "no fault" : "vector", v, back);
	if (v < 0)
		pmu_hw_wrmsr(msr, old);
}

/* Reserved bits and absent counters raise #GP (SDM vol. 3B,
 * "Architectural Performance Monitoring Version 1/2/5"; vol. 4 table 2-2). */
KTEST("pmu.regs", reserved_bits_gp, pmu_needs_counting, KTEST_PER_CPU,
      "reserved bits, absent counters and read-only MSRs raise #GP")
{
	struct pmu_cpu *pc = pmu_cpu_ensure();
	const struct pmu_caps *c = pmu_cpu_caps(pc);
	uint32_t gp = pmu_test_free_gp();
	unsigned x = pmu_test_first_absent(~gp, PMU_MAX_GP);
	uint64_t v;

	if (x < PMU_MAX_GP) {
		/* Bit 63: reserved on every PMU version (TSX uses 32/33, v6's
		 * UMASK2/EQ use 47:36). */
		if (c->reserved_gp_unchecked_why)
			expect_gp_or_taken(c, pmu_evtsel_msr(c, x), BIT(63) | 0xc0, BIT(63), 0,
					   "PERFEVTSEL bit 63");
		else
			expect_gp(pmu_evtsel_msr(c, x), BIT(63) | 0xc0, 0, "PERFEVTSEL bit 63");
		/* The bits version 6 may open (EQ 36, RDPMC user disable 37,
		 * UMASK2 47:40) and the rest of 62:36 are reserved unless
		 * CPUID.23H:EBX enumerates them (SDM vol. 3B, "Architectural
		 * Performance Monitoring Version 6"): each alone #GPs. 32-35
		 * are model-specific (TSX, adaptive PEBS, branch counters). */
		static const unsigned hi[] = { 36, 37, 40, 43, 47, 48, 55, 62 };
		for (unsigned k = 0; !c->reserved_gp_unchecked_why && k < sizeof(hi) / sizeof(hi[0]); k++) {
			char what[40];
			if (!((c->evtsel_reserved >> hi[k]) & 1))
				continue;
			ksnprintf(what, sizeof(what), "PERFEVTSEL bit %u (reserved)", hi[k]);
			expect_gp(pmu_evtsel_msr(c, x), BIT(hi[k]) | 0xc0, 0, what);
		}
		/* AnyThread: Intel's before version 3; reserved on AMD. */
		if (c->reserved_gp_unchecked_why)
			expect_gp_or_taken(c, pmu_evtsel_msr(c, x), BIT(PERFEVTSEL_ANY_BIT) | 0xc0,
					   BIT(PERFEVTSEL_ANY_BIT), 0, "PERFEVTSEL bit 21 (reserved on AMD)");
		else if (c->version < 3)
			expect_gp(pmu_evtsel_msr(c, x), BIT(PERFEVTSEL_ANY_BIT) | 0xc0, 0,
				  "PERFEVTSEL AnyThread before version 3");
		else if (anythread_defined(c))
			expect_anythread_taken(pmu_evtsel_msr(c, x), BIT(PERFEVTSEL_ANY_BIT) | 0xc0, 0,
					       "PERFEVTSEL AnyThread from version 3");
		pmu_hw_wrmsr(pmu_evtsel_msr(c, x), 0);
	}
	unsigned gp_past = pmu_test_first_absent(c->gp_mask, PMU_MAX_GP);
	if (c->global_ctrl && gp_past < PMU_MAX_GP && c->reserved_gp_unchecked_why)
		expect_gp_or_taken(c, c->global_ctrl, pmu_cpu_global_ctrl(pc) | BIT(gp_past), BIT(gp_past),
				   pmu_cpu_global_ctrl(pc), "global control enable of an absent counter");
	else if (c->global_ctrl && gp_past < PMU_MAX_GP)
		expect_gp(c->global_ctrl, pmu_cpu_global_ctrl(pc) | BIT(gp_past), pmu_cpu_global_ctrl(pc),
			  "GLOBAL_CTRL enable of an absent GP counter");
	if (c->fixed_ctrl) {
		unsigned fx_past = pmu_test_first_absent(c->fixed_mask, PMU_MAX_FIXED);
		if (fx_past < PMU_MAX_FIXED) {
			expect_gp(c->fixed_ctrl,
				  pmu_cpu_fixed_ctrl(pc) |
					  (FIXED_CTR_CTRL_EN_MASK << FIXED_CTR_CTRL_SHIFT(fx_past)),
				  pmu_cpu_fixed_ctrl(pc), "FIXED_CTR_CTRL field of an absent fixed counter");
			expect_gp(c->global_ctrl,
				  pmu_cpu_global_ctrl(pc) | BIT(PERF_GLOBAL_FIXED_SHIFT + fx_past),
				  pmu_cpu_global_ctrl(pc), "GLOBAL_CTRL enable of an absent fixed counter");
			int vec = pmu_hw_rdmsr(MSR_IA32_FIXED_CTR0 + fx_past, &v);
			const char *ignored = vec != X86_VEC_GP ? pmu_test_absent_msrs_read() : NULL;
			if (ignored)
				diag("rdmsr IA32_FIXED_CTR%u (absent): vector %d, read %#lx; not checked: %s",
				     fx_past, vec, v, ignored);
			else
				check(vec == X86_VEC_GP,
				      "rdmsr IA32_FIXED_CTR%u (absent, mask %#x): expected #GP, saw vector %d",
				      fx_past, c->fixed_mask, vec);
			vec = pmu_hw_rdpmc(PMU_RDPMC_FIXED | fx_past, &v);
			check(vec == X86_VEC_GP, "RDPMC(fixed %u) (absent): expected #GP, saw vector %d",
			      fx_past, vec);
			/* A hole below the highest fixed counter is the v5 bitmap case. */
			if (c->fixed_mask >> fx_past)
				diag("fixed-counter bitmap %#x has a hole at %u (CPUID.0AH:ECX, v5)",
				     c->fixed_mask, fx_past);
		}
		if (c->version < 3 && (c->fixed_mask & 1))
			expect_gp(c->fixed_ctrl, pmu_cpu_fixed_ctrl(pc) | BIT(FIXED_CTR_CTRL_ANY_BIT),
				  pmu_cpu_fixed_ctrl(pc), "FIXED_CTR_CTRL AnyThread before version 3");
		else if (anythread_defined(c) && (c->fixed_mask & 1))
			expect_anythread_taken(
				c->fixed_ctrl, pmu_cpu_fixed_ctrl(pc) | BIT(FIXED_CTR_CTRL_ANY_BIT),
				pmu_cpu_fixed_ctrl(pc), "FIXED_CTR_CTRL AnyThread from version 3");
		/* A fixed counter's RDPMC user-disable bit (33 + 4i) exists
		 * only where CPUID.23H:EBX[2] enumerates it (version 6);
		 * elsewhere it is reserved and #GPs. */
		for (unsigned i = 0; i < 7; i++) {
			unsigned b = FIXED_CTR_CTRL_RDPMC_USER_DISABLE_BIT(i);
			char what[64];
			if (!pmu_has_fixed(c, i) || !((c->fixed_ctrl_reserved >> b) & 1) ||
			    c->reserved_gp_unchecked_why)
				continue;
			ksnprintf(what, sizeof(what),
				  "FIXED_CTR_CTRL bit %u (fixed %u user disable, reserved)", b, i);
			expect_gp(c->fixed_ctrl, pmu_cpu_fixed_ctrl(pc) | BIT(b), pmu_cpu_fixed_ctrl(pc),
				  what);
		}
	}
	if (intel_caps(c)->perf_caps_valid)
		expect_gp(MSR_IA32_PERF_CAPABILITIES, intel_caps(c)->perf_caps, intel_caps(c)->perf_caps,
			  "IA32_PERF_CAPABILITIES (read-only)");
	if (c->global_status && c->reserved_gp_unchecked_why)
		report_wr(c, c->global_status, 0, 0, "global status (read-only)");
	else if (c->global_status)
		expect_gp(c->global_status, 0, 0, "IA32_PERF_GLOBAL_STATUS (read-only)");
}

/* A write to IA32_PMCx stores EAX sign-extended (EDX ignored); IA32_A_PMCx
 * stores the full width and exists only with IA32_PERF_CAPABILITIES[13]
 * (SDM vol. 3B, "Full-Width Writes to Performance Counter Registers").
 * Bits past a fixed counter's width are reserved and "must be written as
 * zeros" (SDM vol. 3B, "Architectural Performance Monitoring Version 2"),
 * and WRMSR raises #GP for reserved bits (SDM vol. 2B, WRMSR): #GP is
 * expected; KVM truncates instead (the known deviation
 * KVM-FIXED-CTR-WIDE-WRITE-TRUNCATED), and the counter may never hold a
 * bit past its width. */
/* One GP counter x: the writes of counter_writes. */
static void gp_counter_writes(const struct pmu_caps *c, unsigned x)
{
	uint64_t v;
	int vec;

	if (c->ctr_write_full) {
		/* No sign-extending path and no alias (AMD PerfCtrn, APM vol. 2,
		 * 13.2): the counter register stores the whole width. */
		uint64_t want = 0xffffff0123456789ull & pmu_width_mask(c->gp_width);
		vec = pmu_hw_wrmsr(pmu_ctr_write_msr(c, x), want);
		pmu_hw_rdmsr(pmu_ctr_msr(c, x), &v);
		check(vec == 0 && v == want, "%s%u <- %#lx: expected it stored whole, read %#lx (vector %d)",
		      pmu_ctr_name(c), x, want, v, vec);
		pmu_hw_wrmsr(pmu_ctr_write_msr(c, x), 0);
		return;
	}
	uint32_t legacy = MSR_IA32_PMC0 + x, alias = MSR_IA32_A_PMC0 + x;

	pmu_hw_wrmsr(legacy, 0x80000001ull);
	pmu_hw_rdmsr(legacy, &v);
	check(v == pmu_sext32(0x80000001ull, c->gp_width),
	      "IA32_PMC%u <- 0x80000001: expected the sign-extended %#lx, read %#lx", x,
	      pmu_sext32(0x80000001ull, c->gp_width), v);
	pmu_hw_wrmsr(legacy, 0xffffff0012345678ull);
	pmu_hw_rdmsr(legacy, &v);
	check(v == 0x12345678,
	      "IA32_PMC%u <- 0xffffff0012345678: expected EDX ignored, 0x12345678, read %#lx", x, v);

	if (intel_caps(c)->full_width_write) {
		uint64_t want = 0xffffff0123456789ull & pmu_width_mask(c->gp_width);
		vec = pmu_hw_wrmsr(alias, want);
		pmu_hw_rdmsr(legacy, &v);
		check(vec == 0 && v == want,
		      "IA32_A_PMC%u <- %#lx: expected it stored whole, read %#lx (vector %d)", x, want, v,
		      vec);
		if (c->gp_width < 64)
			expect_gp(alias, BIT(c->gp_width), 0, "IA32_A_PMC bit past the counter width");
	} else {
		vec = pmu_hw_rdmsr(alias, &v);
		const char *ignored = vec != X86_VEC_GP ? pmu_test_absent_msrs_read() : NULL;
		if (ignored)
			diag("IA32_A_PMC%u without IA32_PERF_CAPABILITIES[13]: vector %d; not checked: %s", x,
			     vec, ignored);
		else
			check(vec == X86_VEC_GP,
			      "IA32_A_PMC%u without IA32_PERF_CAPABILITIES[13]: expected #GP on rdmsr, saw vector %d",
			      x, vec);
	}
	pmu_hw_wrmsr(c->ctr_write_base + x * c->ctr_stride, 0);
}

/* One fixed counter i: full width stored, a bit past it #GP. */
static void fixed_counter_writes(const struct pmu_caps *c, unsigned i)
{
	uint64_t want = pmu_width_mask(c->fixed_width), v;
	int vec = pmu_hw_wrmsr(pmu_fixed_msr(c, i), want);

	pmu_hw_rdmsr(pmu_fixed_msr(c, i), &v);
	check(vec == 0 && v == want, "IA32_FIXED_CTR%u <- %#lx (full width): read %#lx (vector %d)", i, want,
	      v, vec);
	if (c->fixed_width < 64) {
		struct wr_try t = { pmu_fixed_msr(c, i), want | BIT(c->fixed_width) };
		struct dev_obs o = { .kind = DEV_OBS_WIDE_WRITE, .pc = pmu_this_cpu() };
		pmu_hw_wrmsr(pmu_fixed_msr(c, i), 0);
		vec = expect_exception(try_wrmsr, &t);
		int rv = pmu_hw_rdmsr(pmu_fixed_msr(c, i), &v);
		o.wide_write.vector = vec;
		o.wide_write.value = t.val;
		o.wide_write.readback = v;
		o.wide_write.width = c->fixed_width;
		/* The SDM (vol. 2B, WRMSR: #GP(0) "if the value in EDX:EAX sets
		 * bits that are reserved in the MSR"; vol. 3B: bits past a fixed
		 * counter's width "must be written as zeros") expects #GP and
		 * the counter unchanged; KVM truncates (deviation row). */
		check_or_deviation(
			rv == 0 && vec == X86_VEC_GP && v == 0, &o,
			"IA32_FIXED_CTR%u <- %#lx (bit %u past the width): expected #GP leaving 0 (SDM, WRMSR: reserved bits), saw %s%.0d, read %#lx",
			i, t.val, c->fixed_width, vec < 0 ? "no fault" : "vector ", vec < 0 ? 0 : vec, v);
	}
	pmu_hw_wrmsr(pmu_fixed_msr(c, i), 0);
}

/* Every free counter, not the first free one only: a width or an alias
 * wrong on one counter is a counter the allocator may never hand out. */
KTEST("pmu.regs", counter_writes, pmu_needs_counting, KTEST_PER_CPU,
      "IA32_PMCx writes sign-extend; A_PMCx and fixed ones take every bit")
{
	const struct pmu_caps *c = pmu_caps();
	uint32_t gp = pmu_test_free_gp();
	uint32_t fx = c->global_ctrl ? pmu_test_free_fixed() : 0;

	if (!gp)
		ktest_skip("no free GP counter (mask %#x)", c->gp_mask);
	for (unsigned x = 0; x < PMU_MAX_GP; x++)
		if ((gp >> x) & 1)
			gp_counter_writes(c, x);
	for (unsigned i = 0; i < PMU_MAX_FIXED; i++)
		if ((fx >> i) & 1)
			fixed_counter_writes(c, i);
}

static const char *needs_inuse(void)
{
	const char *why = pmu_needs_counting();

	if (why)
		return why;
	if (!pmu_caps()->global_inuse)
		return ktest_reason(
			"no IA32_PERF_GLOBAL_INUSE: it comes with Intel's architectural PMU v4 (this one: %s v%u)",
			pmu_caps()->vendor_id, pmu_caps()->version);
	return NULL;
}

/* INUSE after a write: read it, or fail the test naming the fault. */
static uint64_t inuse_now(void)
{
	uint64_t v = 0;
	int vec = pmu_hw_rdmsr(pmu_caps()->global_inuse, &v);

	if (vec)
		ktest_fail("rdmsr IA32_PERF_GLOBAL_INUSE (MSR %#x) raised vector %d on a v%u PMU",
			   pmu_caps()->global_inuse, vec, pmu_caps()->version);
	return v;
}

/* IA32_PERF_GLOBAL_INUSE (SDM vol. 3B, "Architectural Performance
 * Monitoring Version 4"): bit x while IA32_PERFEVTSELx selects an event,
 * bit 32 + i while FIXED_CTR_CTRL's enable field i is non-zero, bit 63
 * while an INT or PMI bit is set. Each free counter alone, from the
 * state the other counters leave: exactly its bit (and 63 with INT/PMI)
 * comes and goes. */
KTEST("pmu.regs", inuse_follows_selects, needs_inuse, KTEST_PER_CPU,
      "INUSE: a select or fixed field sets exactly its bit; clearing clears it")
{
	const struct pmu_caps *c = pmu_caps();
	uint32_t gp = pmu_test_free_gp(), fx = pmu_test_free_fixed();
	const uint64_t pmi_bit = BIT(PERF_GLOBAL_INUSE_PMI_BIT);
	const struct pmu_arch_event_desc *ins = pmu_arch_event(PMU_ARCH_INSTRUCTIONS);
	uint64_t base = inuse_now(), v, fixed_ctrl = 0;

	diag("IA32_PERF_GLOBAL_INUSE = %#lx before the check", base);
	/* The state the check starts from, asserted too: bit 63 is set
	 * exactly when an existing select's INT or a fixed field's PMI bit
	 * is (a PEBS_ENABLE left non-zero by a hypervisor or firmware is not
	 * in that list: then bit 63 is only reported). */
	bool want_pmi = false;
	uint64_t sel_now = 0, ctrl_now = 0;
	for (unsigned x = 0; x < PMU_MAX_GP; x++)
		if (((c->gp_mask >> x) & 1) && pmu_hw_rdmsr(pmu_evtsel_msr(c, x), &sel_now) == 0 &&
		    (sel_now & BIT(PERFEVTSEL_INT_BIT)))
			want_pmi = true;
	if (c->fixed_mask && pmu_hw_rdmsr(c->fixed_ctrl, &ctrl_now) == 0)
		for (unsigned i = 0; i < PMU_MAX_FIXED; i++)
			if (((c->fixed_mask >> i) & 1) &&
			    (ctrl_now & BIT(FIXED_CTR_CTRL_PMI_BIT) << FIXED_CTR_CTRL_SHIFT(i)))
				want_pmi = true;
	uint64_t pebs_en = 0;
	if (intel_caps(c)->pebs_format && pmu_hw_rdmsr(MSR_IA32_PEBS_ENABLE, &pebs_en) == 0 && pebs_en)
		diag("PEBS_ENABLE = %#lx: INUSE bit 63 (%u) not checked against the selects", pebs_en,
		     (unsigned)(base >> PERF_GLOBAL_INUSE_PMI_BIT) & 1);
	else
		check(!!(base & pmi_bit) == want_pmi,
		      "IA32_PERF_GLOBAL_INUSE = %#lx: bit 63 %s, but %s select's INT or fixed field's PMI bit is set",
		      base, base & pmi_bit ? "set" : "clear", want_pmi ? "a" : "no");
	for (unsigned x = 0; x < PMU_MAX_GP; x++) {
		uint64_t sel = (uint64_t)ins->event | (uint64_t)ins->umask << PERFEVTSEL_UMASK_SHIFT |
			       BIT(PERFEVTSEL_OS_BIT);
		uint64_t bit = pmu_idx_bit((int)x);

		if (!((gp >> x) & 1))
			continue;
		pmu_hw_wrmsr(pmu_evtsel_msr(c, x), sel);
		v = inuse_now();
		check(v == (base | bit), "%s%u <- %#lx (EN clear): expected INUSE %#lx, read %#lx",
		      pmu_evtsel_name(c), x, sel, base | bit, v);
		uint64_t sel_int = sel | BIT(PERFEVTSEL_INT_BIT);
		pmu_hw_wrmsr(pmu_evtsel_msr(c, x), sel_int);
		v = inuse_now();
		check(v == (base | bit | pmi_bit), "%s%u <- %#lx (INT set): expected INUSE %#lx, read %#lx",
		      pmu_evtsel_name(c), x, sel_int, base | bit | pmi_bit, v);
		pmu_hw_wrmsr(pmu_evtsel_msr(c, x), 0);
		v = inuse_now();
		check(v == base, "%s%u <- 0: expected INUSE back at %#lx, read %#lx", pmu_evtsel_name(c), x,
		      base, v);
	}
	if (fx && pmu_hw_rdmsr(c->fixed_ctrl, &fixed_ctrl) != 0)
		ktest_fail("rdmsr IA32_FIXED_CTR_CTRL faulted");
	for (unsigned i = 0; i < PMU_MAX_FIXED; i++) {
		unsigned sh = FIXED_CTR_CTRL_SHIFT(i);
		uint64_t bit = pmu_idx_bit(PMU_IDX_FIXED(i));
		uint64_t os = fixed_ctrl | BIT(FIXED_CTR_CTRL_OS_BIT) << sh;
		uint64_t os_pmi = os | BIT(FIXED_CTR_CTRL_PMI_BIT) << sh;

		if (!((fx >> i) & 1))
			continue;
		pmu_hw_wrmsr(c->fixed_ctrl, os);
		v = inuse_now();
		check(v == (base | bit),
		      "IA32_FIXED_CTR_CTRL <- %#lx (FIXED_CTR%u at CPL 0): expected INUSE %#lx, read %#lx",
		      os, i, base | bit, v);
		pmu_hw_wrmsr(c->fixed_ctrl, os_pmi);
		v = inuse_now();
		check(v == (base | bit | pmi_bit),
		      "IA32_FIXED_CTR_CTRL <- %#lx (FIXED_CTR%u with PMI): expected INUSE %#lx, read %#lx",
		      os_pmi, i, base | bit | pmi_bit, v);
		pmu_hw_wrmsr(c->fixed_ctrl, fixed_ctrl);
		v = inuse_now();
		check(v == base, "IA32_FIXED_CTR_CTRL <- %#lx: expected INUSE back at %#lx, read %#lx",
		      fixed_ctrl, base, v);
	}
}
