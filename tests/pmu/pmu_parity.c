/* The peers' checks pmutest lacked, each on every CPU (pmu/README.md maps
 * each to the peer check it covers): kvm-unit-tests' running-counter
 * writes, instructions the hypervisor emulates (KVM's forced-emulation
 * prefix), TSX cycles and IBPB-forced branch misses; the KVM selftests'
 * absent-counter rules and a counter-width check they leave as a TODO. */
#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "arch/x86/traps.h"
#include "arch/x86/vectors.h"
#include "pmu/bracket.h"
#include "pmu/intel/caps.h"
#include "pmu/loops.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/deviations.h"
#include "tests/ktest.h"
#include "tests/pmu/pmu_common.h"

/* Loop iterations before and after a write to a running counter. */
#define RUN_BEFORE ((uint64_t)100000)
#define RUN_AFTER1 ((uint64_t)1000)
#define RUN_AFTER2 ((uint64_t)21000)

/* --- Writes to a running counter (kvm-unit-tests check_running_counter_wrmsr) --- */

/* With the counter counting: n iterations, then WRMSR 0 to it and m more. */
static void write_while_running(uint32_t msr, uint64_t n, uint64_t m)
{
	uint64_t acc = 0;

	pmu_workload_loop(n);
	__asm__ volatile("wrmsr\n\t" PMU_LOOP_BODY
			 : [n] "+&r"(m), [acc] "+&r"(acc)
			 : "c"(msr), "a"(0), "d"(0)
			 : "cc", "memory");
}

static bool run_and_restart(struct pmu_event *ev, uint64_t m, uint64_t *count)
{
	if (!check(pmu_event_enable(ev) == PMU_OK, "enable: %s", ev->reason))
		return false;
	bool irq = irq_save();
	write_while_running(ev->hw.write_base, RUN_BEFORE, m);
	irq_restore(irq);
	pmu_event_disable(ev);
	/* The count folds in from the enable's 0: what the write left plus
	 * what came after. */
	*count = pmu_event_count(ev);
	return true;
}

/* The least count of PMU_TEST_TRIALS runs of run_and_restart: an SMI
 * (not frozen) or NMI only adds, so the least is the run nothing
 * disturbed. */
static bool least_after_restart(struct pmu_event *ev, uint64_t m, uint64_t *count)
{
	uint64_t v;

	*count = UINT64_MAX;
	for (unsigned t = 0; t < PMU_TEST_TRIALS; t++) {
		if (!run_and_restart(ev, m, &v))
			return false;
		if (v < *count)
			*count = v;
	}
	return true;
}

/* A WRMSR of 0 to a counter that counts restarts it from 0: the count at
 * the stop is what ran after the write, not the 3 x 100000 instructions
 * before it (kvm-unit-tests "running counter wrmsr: cntr"), and two runs
 * that differ only in the loop after the write differ by exactly its
 * instructions (3 per iteration): by the difference, nothing rests on
 * whether the write or the disabling WRMSR counts. */
KTEST("pmu.parity", running_counter_wrmsr, pmu_needs_counting, KTEST_PER_CPU,
      "WRMSR 0 to a running counter restarts it; the count after is exact")
{
	const struct pmu_caps *c = pmu_caps();
	unsigned x = pmu_test_first_absent(~pmu_test_free_gp(), PMU_MAX_GP);
	struct pmu_event ev;
	uint64_t c1 = 0, c2 = 0;

	if (x >= PMU_MAX_GP)
		ktest_skip("no free GP counter (mask %#x)", pmu_test_free_gp());
	pmu_test_need_gp_event(PMU_ARCH_INSTRUCTIONS);
	pmu_test_event(&ev, PMU_ARCH_INSTRUCTIONS);
	if (!check(pmu_event_add_idx(&ev, (int)x) == PMU_OK, "%s%u: %s", pmu_ctr_name(c), x, ev.reason))
		return;
	if (least_after_restart(&ev, RUN_AFTER1, &c1) && least_after_restart(&ev, RUN_AFTER2, &c2)) {
		uint64_t want = PMU_LOOP_INSNS_PER_ITER * (RUN_AFTER2 - RUN_AFTER1);
		check(c1 >= PMU_LOOP_INSNS_PER_ITER * RUN_AFTER1 && c1 < PMU_LOOP_INSNS_PER_ITER * RUN_BEFORE,
		      "%s%u written 0 after %lu iterations, %lu more after: expected %lu..%lu instructions, saw %lu (the write did not restart it?)",
		      pmu_ctr_name(c), x, RUN_BEFORE, RUN_AFTER1, PMU_LOOP_INSNS_PER_ITER * RUN_AFTER1,
		      PMU_LOOP_INSNS_PER_ITER * RUN_BEFORE - 1, c1);
		check(c2 - c1 == want,
		      "%lu more iterations after the write: expected exactly %lu more instructions, saw %lu (%lu -> %lu, the least of %u runs each)",
		      RUN_AFTER2 - RUN_AFTER1, want, c2 - c1, c1, c2, PMU_TEST_TRIALS);
		diag("after the write: %lu and %lu instructions", c1, c2);
	}
	pmu_event_del(&ev);
}

/* A WRMSR of -1 (all ones of the width) to a counter that counts makes it
 * wrap at its next event: its GLOBAL_STATUS bit sets (kvm-unit-tests
 * "running counter wrmsr: status msr bit"). */
KTEST("pmu.parity", status_msr_bit, pmu_needs_global_ctrl, KTEST_PER_CPU,
      "a running counter written to -1 wraps: its GLOBAL_STATUS bit sets")
{
	const struct pmu_caps *c = pmu_caps();
	unsigned x = pmu_test_first_absent(~pmu_test_free_gp(), PMU_MAX_GP);
	struct pmu_event ev;
	uint64_t st = 0, raw = 0, acc = 0, n = 100;

	if (x >= PMU_MAX_GP)
		ktest_skip("no free GP counter (mask %#x)", pmu_test_free_gp());
	if (!c->global_status)
		ktest_skip("no global status register");
	pmu_test_need_gp_event(PMU_ARCH_INSTRUCTIONS);
	pmu_test_event(&ev, PMU_ARCH_INSTRUCTIONS);
	if (!check(pmu_event_add_idx(&ev, (int)x) == PMU_OK, "%s%u: %s", pmu_ctr_name(c), x, ev.reason))
		return;
	pmu_hw_wrmsr(c->global_ovf, pmu_idx_bit((int)x));
	if (check(pmu_event_enable(&ev) == PMU_OK, "enable: %s", ev.reason)) {
		uint64_t m1 = pmu_width_mask(c->gp_width);
		bool irq = irq_save();
		/* Legacy writes sign-extend: 0xffffffff is all ones too. */
		__asm__ volatile("wrmsr\n\t" PMU_LOOP_BODY
				 : [n] "+&r"(n), [acc] "+&r"(acc)
				 : "c"(ev.hw.write_base), "a"((uint32_t)m1), "d"((uint32_t)(m1 >> 32))
				 : "cc", "memory");
		irq_restore(irq);
		pmu_event_disable(&ev);
		pmu_hw_rdmsr(c->global_status, &st);
		pmu_hw_rdmsr(ev.hw.event_base, &raw);
		/* A small count shows the wrap; then only the status bit is
		 * in question (Xen shows it only through a PMI). */
		struct dev_obs o = { .kind = DEV_OBS_QUIET_OVERFLOW, .pc = pmu_this_cpu() };
		o.quiet_overflow.count_exact = raw < 10000;
		o.quiet_overflow.status_bit = (st >> x) & 1;
		check_or_deviation(
			(st >> x) & 1, &o,
			"%s%u written %#lx while counting, then 100 iterations: expected GLOBAL_STATUS bit %u, read %#lx (counter %#lx)",
			pmu_ctr_name(c), x, m1, x, st, raw);
		check(raw < 10000, "%s%u: expected it to have wrapped to a small count, reads %#lx",
		      pmu_ctr_name(c), x, raw);
		pmu_hw_wrmsr(c->global_ovf, pmu_idx_bit((int)x));
	}
	pmu_event_del(&ev);
}

/* --- Instructions the hypervisor emulates (KVM's forced emulation) --- */

/* KVM's forced-emulation prefix: UD2 then "kvm" (0F 0B 6B 76 6D). With
 * kvm.force_emulation_prefix set KVM skips it and emulates the next
 * instruction; elsewhere it is a plain #UD (kvm-unit-tests lib/x86/desc.h
 * KVM_FEP; Linux arch/x86/kvm/x86.c handle_ud). */
#define KVM_FEP "ud2; .byte 0x6b, 0x76, 0x6d\n\t"

static void fep_nop(void *arg)
{
	(void)arg;
	__asm__ volatile(KVM_FEP "nop" ::: "memory");
}

static const char *needs_fep(void)
{
	const char *why = pmu_needs_global_ctrl();
	int vec;

	if (why)
		return why;
	if (!pmu_caps()->global_status)
		return "no global status register";
	vec = expect_exception(fep_nop, NULL);
	if (vec >= 0)
		return ktest_reason(
			"KVM's forced-emulation prefix (0F 0B 6B 76 6D) raised vector %d: not KVM, or kvm.force_emulation_prefix=0",
			vec);
	return NULL;
}

/* The blob's instructions between the bracket's WRMSRs (below). */
#define FEP_BODY_INSNS 21u

struct fep_rdpmc {
	uint32_t ecx;
	uint64_t val;
};

static void fep_rdpmc(void *arg)
{
	struct fep_rdpmc *r = arg;
	uint32_t lo, hi;

	__asm__ volatile(KVM_FEP "rdpmc" : "=a"(lo), "=d"(hi) : "c"(r->ecx) : "memory");
	r->val = (uint64_t)hi << 32 | lo;
}

/* The blob kvm-unit-tests counts (x86/pmu.c kvm_fep_asm, KVM_FEP_INSNS 22,
 * KVM_FEP_BRANCHES 5): between the bracket's two WRMSRs, 3 set-up
 * instructions, 5 emulated not-taken JNEs, 5 x (MOV, CPUID) (CPUID is
 * intercepted: emulated too) and 3 MOVs: 21 instructions, 5 branches.
 * kvm-unit-tests' 22 counts the enabling WRMSR, as KVM does; whether a
 * PMU counts either WRMSR is not proven (pmu/bracket.h), so 21..23
 * instructions are right and exactly 5 branches. Presets of -21 and -5
 * overflow whichever WRMSRs count. RDPMC through the emulator reads what
 * RDPMC reads, and #GPs past the counters (the KVM selftests'
 * rdpmc_safe_fep). */
KTEST("pmu.parity", emulated_instructions, needs_fep, KTEST_PER_CPU,
      "KVM forced emulation: 21 instructions + WRMSRs, 5 branches, both overflow")
{
	const struct pmu_caps *c = pmu_caps();
	uint32_t gp = pmu_test_free_gp();
	unsigned a = pmu_test_first_absent(~gp, PMU_MAX_GP);
	unsigned b = pmu_test_first_absent(~(gp & ~(1u << a)), PMU_MAX_GP);
	struct pmu_event br_ev, in_ev;
	struct pmu_event *g[] = { &br_ev, &in_ev };
	struct pmu_bracket_regs br;
	uint64_t st = 0;

	if (b >= PMU_MAX_GP)
		ktest_skip("needs two free GP counters (mask %#x)", gp);
	pmu_test_need_gp_event(PMU_ARCH_BRANCHES);
	pmu_test_need_gp_event(PMU_ARCH_INSTRUCTIONS);
	pmu_test_event(&br_ev, PMU_ARCH_BRANCHES);
	pmu_test_event(&in_ev, PMU_ARCH_INSTRUCTIONS);
	if (!check(pmu_event_add_idx(&br_ev, (int)a) == PMU_OK && pmu_event_add_idx(&in_ev, (int)b) == PMU_OK,
		   "branches on GP %u, instructions on GP %u: %s %s", a, b, br_ev.reason, in_ev.reason) ||
	    !check(pmu_events_arm(g, 2, &br) == PMU_OK, "arming: %s", br_ev.reason))
		goto out;
	pmu_hw_wrmsr(c->global_ovf, pmu_events_global_mask(g, 2));
	pmu_event_write_counter(&br_ev, (0 - 5ull) & pmu_width_mask(c->gp_width));
	pmu_event_write_counter(&in_ev, (0 - (uint64_t)FEP_BODY_INSNS) & pmu_width_mask(c->gp_width));
	{
		register uint64_t off_hi __asm__("r8") = (uint32_t)(br.off >> 32);
		uint32_t lo = (uint32_t)br.on, hi = (uint32_t)(br.on >> 32), cx = br.msr;
		bool irq = irq_save();
		__asm__ volatile("wrmsr\n\t"
				 "mov %%ecx, %%edi\n\t"
				 "mov $0, %%eax\n\t"
				 "cmp $0, %%eax\n\t" KVM_FEP "jne 1f\n\t" KVM_FEP "jne 1f\n\t" KVM_FEP
				 "jne 1f\n\t" KVM_FEP "jne 1f\n\t" KVM_FEP "jne 1f\n\t"
				 "mov $0xa, %%eax\n\tcpuid\n\t"
				 "mov $0xa, %%eax\n\tcpuid\n\t"
				 "mov $0xa, %%eax\n\tcpuid\n\t"
				 "mov $0xa, %%eax\n\tcpuid\n\t"
				 "mov $0xa, %%eax\n\tcpuid\n\t"
				 "1: mov %%edi, %%ecx\n\t"
				 "mov %%esi, %%eax\n\t"
				 "mov %%r8d, %%edx\n\t"
				 "wrmsr\n\t"
				 : "+a"(lo), "+d"(hi), "+c"(cx)
				 : "S"((uint32_t)br.off), "r"(off_hi)
				 : "ebx", "edi", "cc", "memory");
		irq_restore(irq);
	}
	pmu_hw_rdmsr(c->global_status, &st);
	pmu_events_disarm(g, 2);
	uint64_t ni = pmu_event_count(&in_ev), nb = pmu_event_count(&br_ev);
	if (c->vendor == PMU_VENDOR_AMD) {
		/* Each emulated instruction is a VM exit, and on AMD the VMRUN
		 * back counts as a guest instruction and branch
		 * (AMD-SVM-VMRUN-COUNTED-IN-GUEST): only what surely retired
		 * bounds the counts (kvm-unit-tests checks AMD likewise). */
		check(ni >= FEP_BODY_INSNS,
		      "instructions over the emulated blob: expected at least %u, saw %lu", FEP_BODY_INSNS,
		      ni);
		check(nb >= 5, "branches over the emulated blob: expected at least 5, saw %lu", nb);
		diag("AMD: %lu instructions, %lu branches over the blob (VMRUNs included)", ni, nb);
	} else {
		check(ni >= FEP_BODY_INSNS && ni <= FEP_BODY_INSNS + PMU_BRACKET_WRMSRS,
		      "instructions over the emulated blob: expected %u..%u (the bracket's WRMSRs may count), saw %lu",
		      FEP_BODY_INSNS, FEP_BODY_INSNS + PMU_BRACKET_WRMSRS, ni);
		check(nb == 5, "branches over the emulated blob: expected exactly 5, saw %lu", nb);
	}
	check((st >> a & 1) && (st >> b & 1),
	      "branches preset to -5 on GP %u and instructions to -%u on GP %u: expected both GLOBAL_STATUS bits, read %#lx",
	      a, FEP_BODY_INSNS, b, st);
	pmu_hw_wrmsr(c->global_ovf, pmu_events_global_mask(g, 2));

	/* RDPMC under emulation. */
	struct fep_rdpmc r = { .ecx = a, .val = 0 };
	pmu_hw_wrmsr(pmu_ctr_write_msr(c, a), 0x4321);
	int vec = expect_exception(fep_rdpmc, &r);
	check(vec < 0 && r.val == 0x4321, "emulated RDPMC(%u): expected 0x4321, read %#lx (vector %d)", a,
	      r.val, vec);
	r.ecx = pmu_test_first_absent(c->gp_mask, PMU_MAX_GP);
	vec = expect_exception(fep_rdpmc, &r);
	check(vec == X86_VEC_GP, "emulated RDPMC(%u) past the counters: expected #GP, saw %d", r.ecx, vec);
	pmu_hw_wrmsr(pmu_ctr_write_msr(c, a), 0);
out:
	pmu_events_del(g, 2);
}

/* --- TSX (kvm-unit-tests check_tsx_cycles) --- */

static const char *needs_rtm(void)
{
	const char *why = pmu_needs_counting();
	struct cpuid_regs r;

	if (why)
		return why;
	if (pmu_caps()->vendor != PMU_VENDOR_INTEL)
		return ktest_reason("IN_TX/IN_TXCP are Intel's (vendor %s)", pmu_caps()->vendor_id);
	if (pmu_caps()->max_leaf < 7)
		return "no CPUID leaf 07H: no RTM";
	pmu_hw_cpuid(7, 0, &r);
	if (!((r.ebx >> CPUID_7_EBX_RTM_BIT) & 1))
		return ktest_reason("no RTM: CPUID.(07H,0):EBX[11]=0 (EBX=%#x)", r.ebx);
	return NULL;
}

/* A transaction that aborts: a store to a non-canonical address raises
 * #GP inside it, which aborts to the fallback without an exception. */
static void aborted_transaction(void)
{
	__asm__ volatile("xbegin 1f\n\t"
			 "movq $0, (%[bad])\n\t"
			 "xend\n"
			 "1:\n\t"
			 :
			 : [bad] "r"(0x8000000000000000ull)
			 : "rax", "memory");
}

/* Core cycles (0x3C) with IN_TX (PERFEVTSEL bit 32), and on GP 2 also
 * IN_TXCP (33), over an aborted XBEGIN count something (SDM vol. 3B,
 * "Performance Monitoring and Intel TSX"; kvm-unit-tests "TSX cycles":
 * IN_TXCP only on counter 2). The driver keeps bits 63:32 reserved, so
 * the event selects are written here directly. */
KTEST("pmu.parity", tsx_cycles, needs_rtm, KTEST_PER_CPU,
      "TSX: cycles with IN_TX (IN_TXCP on GP 2) over an aborted XBEGIN > 0")
{
	struct pmu_cpu *pc = pmu_cpu_ensure();
	const struct pmu_caps *c = pmu_cpu_caps(pc);
	uint32_t gp = pmu_test_free_gp();

	for (unsigned x = 0; x < PMU_MAX_GP; x++) {
		uint64_t sel = 0x3c | BIT(PERFEVTSEL_USR_BIT) | BIT(PERFEVTSEL_OS_BIT) |
			       BIT(PERFEVTSEL_EN_BIT) | BIT(PERFEVTSEL_IN_TX_BIT) |
			       (x == 2 ? BIT(PERFEVTSEL_IN_TXCP_BIT) : 0);
		uint64_t v = 0;

		if (!((gp >> x) & 1))
			continue;
		pmu_hw_wrmsr(pmu_ctr_write_msr(c, x), 0);
		int vec = pmu_hw_wrmsr(pmu_evtsel_msr(c, x), sel);
		if (!check(vec == 0, "%s%u <- %#lx (IN_TX%s) with RTM: vector %d", pmu_evtsel_name(c), x, sel,
			   x == 2 ? " + IN_TXCP" : "", vec))
			continue;
		if (c->global_ctrl)
			pmu_hw_wrmsr(c->global_ctrl, pmu_cpu_global_ctrl(pc) | pmu_idx_bit((int)x));
		aborted_transaction();
		if (c->global_ctrl)
			pmu_hw_wrmsr(c->global_ctrl, pmu_cpu_global_ctrl(pc));
		pmu_hw_wrmsr(pmu_evtsel_msr(c, x), 0);
		pmu_hw_rdmsr(pmu_ctr_msr(c, x), &v);
		check(v > 0, "GP %u: cycles in transactions%s over an aborted XBEGIN: expected > 0, saw %lu",
		      x, x == 2 ? " (IN_TXCP)" : "", v);
		pmu_hw_wrmsr(pmu_ctr_write_msr(c, x), 0);
	}
}

/* --- Absent counters (KVM selftests pmu_counters_test) --- */

/* Every GP counter below 8 that CPUID does not give raises #GP on RDMSR
 * and WRMSR of its counter, alias and event select, and on RDPMC (the KVM
 * selftests' guest_rd_wr_counters, SDM vol. 4: the MSRs exist "if
 * CPUID.0AH:EAX[15:8] > n"); with the version 6 layout also its
 * 0x1900 + 4n MSRs. KVM keeps IA32_PMC0/1 readable with no counters
 * (P6 compatibility): a hypervisor's answer there is only reported. */
KTEST("pmu.parity", absent_gp_counters, pmu_needs_counting, KTEST_PER_CPU,
      "every absent GP counter's MSRs and RDPMC index raise #GP")
{
	const struct pmu_caps *c = pmu_caps();
	unsigned n = 0;
	uint64_t v;

	for (unsigned x = 0; x < (intel_caps(c)->v6_msrs ? 10u : 8u); x++) {
		uint32_t msrs[5];
		unsigned k = 0;

		if (pmu_has_gp(c, x) || ((c->rdpmc_extra_mask >> x) & 1))
			continue;
		n++;
		int vec = pmu_hw_rdpmc(x, &v);
		struct dev_obs o = { .kind = DEV_OBS_RDPMC_ABSENT, .pc = pmu_this_cpu() };
		o.rdpmc_absent.vector = vec ? vec : -1;
		o.rdpmc_absent.idx = x;
		o.rdpmc_absent.gp_mask = c->gp_mask;
		check_or_deviation(vec == X86_VEC_GP, &o, "RDPMC(%u) (GP counters %#x): expected #GP, saw %d",
				   x, c->gp_mask, vec);
		if (c->vendor != PMU_VENDOR_INTEL)
			continue; /* the KVM selftests' MSR rules are Intel's */
		if (x < 8) {
			msrs[k++] = MSR_IA32_PMC0 + x;
			msrs[k++] = MSR_IA32_PERFEVTSEL0 + x;
			msrs[k++] = MSR_IA32_A_PMC0 + x;
		}
		if (intel_caps(c)->v6_msrs) {
			msrs[k++] = MSR_IA32_PMC_V6_GP0_CTR + x * MSR_IA32_PMC_V6_STEP;
			msrs[k++] = MSR_IA32_PMC_V6_GP0_CFG_A + x * MSR_IA32_PMC_V6_STEP;
		}
		for (unsigned j = 0; j < k; j++) {
			int rv = pmu_hw_rdmsr(msrs[j], &v), wv = pmu_hw_wrmsr(msrs[j], 0);
			if (c->hypervisor && x < 2 && msrs[j] == MSR_IA32_PMC0 + x && (rv == 0 || wv == 0)) {
				diag("GP %u absent, but MSR %#x reads (vector %d) and takes writes (vector %d): KVM's P6 compatibility",
				     x, msrs[j], rv, wv);
				continue;
			}
			check(rv == X86_VEC_GP && wv == X86_VEC_GP,
			      "GP %u absent (mask %#x): MSR %#x rdmsr vector %d, wrmsr vector %d; expected #GP both",
			      x, c->gp_mask, msrs[j], rv, wv);
		}
	}
	if (!n)
		check(true, "no absent GP counter below %u", intel_caps(c)->v6_msrs ? 10 : 8);
}

/* Every fixed counter below 8 that CPUID does not give (past EDX[4:0]
 * and not in the version 5 bitmap or CPUID.23H.1) raises #GP on its
 * IA32_FIXED_CTR_CTRL field, its GLOBAL_CTRL enable, RDMSR of its counter
 * and RDPMC (SDM vol. 2A, CPUID leaf 0AH: "using one that does not exist
 * raises #GP"; the KVM selftests' guest_test_fixed_counters). */
KTEST("pmu.parity", absent_fixed_counters, pmu_needs_global_ctrl, KTEST_PER_CPU,
      "every absent fixed counter's enables, MSR and RDPMC index raise #GP")
{
	struct pmu_cpu *pc = pmu_cpu_ensure();
	const struct pmu_caps *c = pmu_cpu_caps(pc);
	unsigned n = 0;
	uint64_t v;

	if (!c->fixed_ctrl)
		ktest_skip("%s", c->no_fixed_why ? c->no_fixed_why : "no IA32_FIXED_CTR_CTRL");
	for (unsigned i = 0; i < 8; i++) {
		if (pmu_has_fixed(c, i))
			continue;
		n++;
		uint64_t f = pmu_cpu_fixed_ctrl(pc) | FIXED_CTR_CTRL_EN_MASK << FIXED_CTR_CTRL_SHIFT(i);
		int vec = pmu_hw_wrmsr(c->fixed_ctrl, f);
		check(vec == X86_VEC_GP,
		      "fixed %u absent (mask %#x): IA32_FIXED_CTR_CTRL <- %#lx expected #GP, saw %d", i,
		      c->fixed_mask, f, vec);
		if (vec != X86_VEC_GP)
			pmu_hw_wrmsr(c->fixed_ctrl, pmu_cpu_fixed_ctrl(pc));
		uint64_t gc = pmu_cpu_global_ctrl(pc) | BIT(PERF_GLOBAL_FIXED_SHIFT + i);
		vec = pmu_hw_wrmsr(c->global_ctrl, gc);
		check(vec == X86_VEC_GP,
		      "fixed %u absent: IA32_PERF_GLOBAL_CTRL <- %#lx expected #GP, saw %d", i, gc, vec);
		if (vec != X86_VEC_GP)
			pmu_hw_wrmsr(c->global_ctrl, pmu_cpu_global_ctrl(pc));
		vec = pmu_hw_rdmsr(MSR_IA32_FIXED_CTR0 + i, &v);
		check(vec == X86_VEC_GP, "fixed %u absent: rdmsr IA32_FIXED_CTR%u expected #GP, saw %d", i, i,
		      vec);
		vec = pmu_hw_rdpmc(PMU_RDPMC_FIXED | i, &v);
		check(vec == X86_VEC_GP, "fixed %u absent: RDPMC(%#x) expected #GP, saw %d", i,
		      PMU_RDPMC_FIXED | i, vec);
	}
	if (!n)
		check(true, "no absent fixed counter below 8");
}

/* --- Counter width --- */

/* A counter preset to 2^w - K counts C events of a window and reads
 * exactly (2^w - K + C) mod 2^w, where w is the width CPUID gives (leaf
 * 0AH EAX[23:16], EDX[12:5]; AMD 48) and C what an unpreset counter of
 * the same event counted in the same window: the counter is neither
 * narrower nor wider than CPUID says (the KVM selftests leave this as a
 * TODO in guest_rd_wr_counters). A legacy IA32_PMCx write of -K
 * sign-extends to 2^w - K, so it works without full-width writes. */
static void wrap_one(int idx, int ref)
{
	const struct pmu_caps *c = pmu_caps();
	struct pmu_event a, r;
	struct pmu_event *g[] = { &a, &r };
	char name[24];
	unsigned w = pmu_idx_width(c, idx);
	uint64_t k = 1000, p = (0 - k) & pmu_width_mask(w), raw = 0;

	pmu_idx_name(c, idx, name, sizeof(name));
	pmu_test_event(&a, PMU_ARCH_INSTRUCTIONS);
	pmu_test_event(&r, PMU_ARCH_INSTRUCTIONS);
	if (!check(pmu_event_add_idx(&a, idx) == PMU_OK && pmu_event_add_idx(&r, ref) == PMU_OK,
		   "%s and reference %d: %s %s", name, ref, a.reason, r.reason))
		goto out;
	struct pmu_bracket_regs br;
	if (!check(pmu_events_arm(g, 2, &br) == PMU_OK, "arming: %s", a.reason))
		goto out;
	if (!check(pmu_event_write_counter(&a, p) == PMU_OK, "%s <- %#lx: %s", name, p, a.reason)) {
		pmu_events_disarm(g, 2);
		goto out;
	}
	bool irq = irq_save();
	pmu_bracket_loop(&br, PMU_TEST_LOOPS);
	irq_restore(irq);
	pmu_hw_rdmsr(a.hw.event_base, &raw);
	pmu_events_disarm(g, 2);
	uint64_t cnt = pmu_event_count(&r), want = (p + cnt) & pmu_width_mask(w);
	check(raw == want, "%s (%u bits) preset to %#lx, %lu instructions later: expected %#lx, reads %#lx",
	      name, w, p, cnt, want, raw);
	/* The status bit the wrap sets is pmu.parity.status_msr_bit's. */
	if (c->global_ovf)
		pmu_hw_wrmsr(c->global_ovf, pmu_idx_bit(idx));
out:
	pmu_events_del(g, 2);
}

KTEST("pmu.parity", counter_width_wrap, pmu_needs_global_ctrl, KTEST_PER_CPU,
      "counters wrap at CPUID's width: 2^w-K plus C events reads C-K")
{
	uint32_t gp = pmu_test_free_gp(), fx = pmu_test_free_fixed();
	unsigned x = pmu_test_first_absent(~gp, PMU_MAX_GP);
	unsigned y = pmu_test_first_absent(~(gp & ~(1u << x)), PMU_MAX_GP);

	if (y >= PMU_MAX_GP)
		ktest_skip("needs two free GP counters (mask %#x)", gp);
	pmu_test_need_gp_event(PMU_ARCH_INSTRUCTIONS);
	wrap_one((int)x, (int)y);
	if (fx & 1)
		wrap_one(PMU_IDX_FIXED(0), (int)x);
}

/* --- Forced branch misses (kvm-unit-tests, IBPB) --- */

static bool has_ibpb(void)
{
	struct cpuid_regs r;
	uint32_t max_ext;

	if (pmu_caps()->max_leaf >= 7) {
		pmu_hw_cpuid(7, 0, &r);
		if ((r.edx >> CPUID_7_EDX_SPEC_CTRL_BIT) & 1)
			return true;
	}
	pmu_hw_cpuid(0x80000000u, 0, &r);
	max_ext = r.eax;
	if (max_ext >= 0x80000008u) {
		pmu_hw_cpuid(0x80000008u, 0, &r);
		return (r.ebx >> CPUID_80000008_EBX_IBPB_BIT) & 1;
	}
	return false;
}

static const char *needs_ibpb(void)
{
	const char *why = pmu_needs_counting();

	if (why)
		return why;
	if ((why = pmu_test_gp_event_missing(PMU_ARCH_BRANCH_MISSES)))
		return why;
	if (!has_ibpb())
		return "no IBPB: CPUID.(07H,0):EDX[26]=0 and CPUID.80000008H:EBX[12]=0";
	return NULL;
}

/* The window: [IBPB, when asked (IA32_PRED_CMD <- 1)], then an indirect
 * JMP over one NOP, between the bracket's WRMSRs. */
static void ibpb_window(const struct pmu_bracket_regs *br, bool ibpb)
{
	register uint64_t off_hi __asm__("r8") = (uint32_t)(br->off >> 32);
	register uint64_t msr __asm__("r9") = br->msr;
	uint32_t lo = (uint32_t)br->on, hi = (uint32_t)(br->on >> 32), cx = br->msr;
	uint64_t flag = ibpb;

	__asm__ volatile("wrmsr\n\t"
			 "test %[f], %[f]\n\t"
			 "jz 2f\n\t"
			 "mov $0x49, %%ecx\n\t"
			 "mov $1, %%eax\n\t"
			 "xor %%edx, %%edx\n\t"
			 "wrmsr\n"
			 "2:\n\t"
			 "lea 1f(%%rip), %%rax\n\t"
			 "jmp *%%rax\n\t"
			 "nop\n"
			 "1:\n\t"
			 "mov %%r9d, %%ecx\n\t"
			 "mov %%esi, %%eax\n\t"
			 "mov %%r8d, %%edx\n\t"
			 "wrmsr\n\t"
			 : "+a"(lo), "+d"(hi), "+c"(cx)
			 : [f] "r"(flag), "S"((uint32_t)br->off), "r"(off_hi), "r"(msr)
			 : "cc", "memory");
}

/* An indirect jump right after IBPB (IA32_PRED_CMD bit 0, SDM vol. 4)
 * cannot be predicted: at least one branch miss retires in the window
 * (kvm-unit-tests: the branch-misses lower bound is 1 with IBPB, commit
 * 8dbfe326). The jump is first run twice in counted windows without
 * IBPB, so a predictor that kept its targets across IBPB would predict
 * it; those windows' misses are only reported. */
KTEST("pmu.parity", forced_branch_misses, needs_ibpb, KTEST_PER_CPU,
      "IBPB then an indirect jump: at least one branch miss retires")
{
	unsigned x = pmu_test_first_absent(~pmu_test_free_gp(), PMU_MAX_GP);
	struct pmu_event m;
	struct pmu_event *g[] = { &m };
	struct pmu_bracket_regs br;
	uint64_t warm[2] = { 0, 0 };

	if (x >= PMU_MAX_GP)
		ktest_skip("no free GP counter (mask %#x)", pmu_test_free_gp());
	pmu_test_event(&m, PMU_ARCH_BRANCH_MISSES);
	if (!check(pmu_event_add_idx(&m, (int)x) == PMU_OK, "branch-misses on GP %u: %s", x, m.reason))
		return;
	for (unsigned t = 0; t < 3; t++) {
		if (!check(pmu_events_arm(g, 1, &br) == PMU_OK, "arming: %s", m.reason))
			break;
		bool irq = irq_save();
		ibpb_window(&br, t == 2);
		irq_restore(irq);
		pmu_events_disarm(g, 1);
		if (t < 2)
			warm[t] = pmu_event_count(&m);
	}
	check(pmu_event_count(&m) >= 1,
	      "branch misses over IBPB + an indirect JMP: expected at least 1, saw %lu (without IBPB: %lu, %lu)",
	      pmu_event_count(&m), warm[0], warm[1]);
	diag("branch misses: %lu, %lu without IBPB; %lu with", warm[0], warm[1], pmu_event_count(&m));
	pmu_event_del(&m);
}
