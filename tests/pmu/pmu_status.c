/* Global status with several bits at once, on every free counter: each
 * counter's overflow sets its own bit of IA32_PERF_GLOBAL_STATUS (AMD:
 * PerfCntrGlobalStatus), the bits stay while other counters overflow, and
 * a write of one bit to OVF_CTRL (AMD: PerfCntrGlobalStatusClr) clears that
 * bit and no other (SDM vol. 3B, "Architectural Performance Monitoring
 * Version 2"; APM vol. 2, 13.2.2). Where STATUS_SET exists (Intel version
 * 4, "Architectural Performance Monitoring Version 4"; AMD PerfMonV2's
 * PerfCntrGlobalStatusSet) it sets them all at once, and they clear one by
 * one again. pmu.count.overflow_status checks one counter's bit alone. */
#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "pmu/bracket.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/ktest.h"
#include "tests/pmu/pmu_common.h"

/* Events before the wrap: far fewer than the loop gives any counter. */
#define STATUS_PRESET 100
#define STATUS_LOOPS ((uint64_t)20000)
/* Retired instructions: 0xC0 with unit mask 0 on Intel (SDM vol. 3B,
 * "Pre-defined Architectural Performance Events") and on AMD (APM vol. 2,
 * 13.2). */
#define EVENT_RETIRED_INSNS 0xc0
/* Fixed counters 0-3 count instructions, core, reference cycles and slots,
 * all of which a loop gives by the thousand; 4-6's top-down events may
 * give a loop next to nothing. */
#define STATUS_FIXED 4

/* The GP counters' event select (without EN): retired instructions, or,
 * where CPUID offers no instructions on a GP counter, the architectural
 * core cycles (3CH, SDM vol. 3B, "Pre-defined Architectural Performance
 * Events"), which a loop gives by the thousand too. 0, with the reason in
 * the diagnostics, where it offers neither. */
static uint64_t gp_select(void)
{
	uint64_t rings = BIT(PERFEVTSEL_USR_BIT) | BIT(PERFEVTSEL_OS_BIT);
	const char *why = pmu_test_gp_event_missing(PMU_ARCH_INSTRUCTIONS);

	if (!why)
		return EVENT_RETIRED_INSNS | rings;
	diag("%s", why);
	if ((why = pmu_test_gp_event_missing(PMU_ARCH_CYCLES))) {
		diag("%s: no GP counter checked", why);
		return 0;
	}
	diag("the GP counters overflow on cycles");
	return pmu_arch_events[PMU_ARCH_CYCLES].event |
	       (uint64_t)pmu_arch_events[PMU_ARCH_CYCLES].umask << 8 | rings;
}

/* Run the loop with only counter idx enabled, from STATUS_PRESET events
 * before its wrap; no PMI (INT clear). sel: a GP counter's event select. */
static void overflow_one(struct pmu_cpu *pc, int idx, uint64_t sel)
{
	const struct pmu_caps *c = pmu_cpu_caps(pc);
	uint64_t bit = pmu_idx_bit(idx);
	struct pmu_bracket_regs br = { .msr = c->global_ctrl,
				       .on = pmu_cpu_global_ctrl(pc) | bit,
				       .off = pmu_cpu_global_ctrl(pc) & ~bit };

	if (PMU_IDX_IS_FIXED(idx)) {
		unsigned i = (unsigned)idx - PMU_IDX_FIXED_BASE;
		uint64_t ctl = pmu_cpu_fixed_ctrl(pc) & ~(FIXED_CTR_CTRL_EN_MASK << FIXED_CTR_CTRL_SHIFT(i));

		pmu_hw_wrmsr(pmu_fixed_msr(c, i),
			     (0 - (uint64_t)STATUS_PRESET) & pmu_width_mask(c->fixed_width));
		pmu_hw_wrmsr(c->fixed_ctrl, ctl | (FIXED_CTR_CTRL_EN_MASK << FIXED_CTR_CTRL_SHIFT(i)));
		bool irq = irq_save();
		pmu_bracket_loop(&br, STATUS_LOOPS);
		irq_restore(irq);
		pmu_hw_wrmsr(c->fixed_ctrl, pmu_cpu_fixed_ctrl(pc));
		pmu_hw_wrmsr(pmu_fixed_msr(c, i), 0);
	} else {
		unsigned x = (unsigned)idx;

		pmu_hw_wrmsr(pmu_ctr_write_msr(c, x),
			     (0 - (uint64_t)STATUS_PRESET) & pmu_width_mask(c->gp_width));
		pmu_hw_wrmsr(pmu_evtsel_msr(c, x), sel | BIT(PERFEVTSEL_EN_BIT));
		bool irq = irq_save();
		pmu_bracket_loop(&br, STATUS_LOOPS);
		irq_restore(irq);
		pmu_hw_wrmsr(pmu_evtsel_msr(c, x), 0);
		pmu_hw_wrmsr(pmu_ctr_write_msr(c, x), 0);
	}
}

static uint64_t status_of(const struct pmu_caps *c, uint64_t bits)
{
	uint64_t st = 0;

	pmu_hw_rdmsr(c->global_status, &st);
	return st & bits;
}

/* Clear `bits` one by one, lowest first, through OVF_CTRL: after each
 * write exactly the bits not yet cleared are left. */
static void clear_one_by_one(const struct pmu_caps *c, uint64_t bits, const char *how)
{
	uint64_t left = bits;

	for (int idx = 0; idx < PMU_IDX_NR; idx++) {
		uint64_t b = pmu_idx_bit(idx);

		if (!(bits & b))
			continue;
		pmu_hw_wrmsr(c->global_ovf, b);
		left &= ~b;
		uint64_t st = status_of(c, bits);
		check(st == left,
		      "%s: OVF_CTRL <- %#lx (counter %d): expected status %#lx of %#lx left, read %#lx", how,
		      b, idx, left, bits, st);
	}
}

static const char *needs_status(void)
{
	const char *why = pmu_needs_global_ctrl();

	if (why)
		return why;
	if (!pmu_caps()->global_status || !pmu_caps()->global_ovf)
		return ktest_reason("no global status and overflow-clear MSRs");
	return NULL;
}

KTEST("pmu.status", each_counter_bit, needs_status, KTEST_PER_CPU,
      "every free counter's overflow sets its own status bit; OVF_CTRL clears one")
{
	struct pmu_cpu *pc = pmu_cpu_ensure();
	const struct pmu_caps *c = pmu_cpu_caps(pc);
	uint32_t gp = pmu_test_free_gp(), fx = pmu_test_free_fixed();
	uint64_t bits = 0, sel = gp ? gp_select() : 0;

	if (!sel)
		gp = 0;
	for (unsigned x = 0; x < PMU_MAX_GP; x++)
		if (gp & BIT(x))
			bits |= pmu_idx_bit((int)x);
	for (unsigned i = 0; i < STATUS_FIXED && i < PMU_MAX_FIXED; i++)
		if ((fx & BIT(i)) && pmu_has_fixed(c, i))
			bits |= pmu_idx_bit(PMU_IDX_FIXED(i));
	if (!bits)
		ktest_skip("no free counter (GP mask %#x, fixed mask %#x)", gp, fx);
	pmu_hw_wrmsr(c->global_ovf, bits);
	check(status_of(c, bits) == 0, "OVF_CTRL <- %#lx: expected those status bits clear, read %#lx", bits,
	      status_of(c, bits));

	/* Overflow each counter alone, one after the other: each sets its own
	 * bit and leaves the others' as they were. */
	uint64_t want = 0;
	for (int idx = 0; idx < PMU_IDX_NR; idx++) {
		if (!(bits & pmu_idx_bit(idx)))
			continue;
		overflow_one(pc, idx, sel);
		want |= pmu_idx_bit(idx);
		uint64_t st = status_of(c, bits);
		if (st == 0 && idx == __builtin_ctzll(bits) && c->hv == PMU_HV_XEN) {
			/* Xen updates the guest's status only at a PMI
			 * (XEN-STATUS-ONLY-VIA-PMI, which pmu.count.overflow_status
			 * matches and reports): nothing to clear here. */
			diag("counter %d wrapped, status reads 0 under Xen (XEN-STATUS-ONLY-VIA-PMI): the status bits are not checked",
			     idx);
			return;
		}
		check(st == want,
		      "counter %d wrapped after %d events: expected status %#lx (the counters so far), read %#lx",
		      idx, STATUS_PRESET, want, st);
	}
	clear_one_by_one(c, bits, "after the overflows");

	if (c->global_status_set) {
		check(pmu_hw_wrmsr(c->global_status_set, bits) == 0, "STATUS_SET <- %#lx faulted", bits);
		uint64_t st = status_of(c, bits);
		check(st == bits, "STATUS_SET <- %#lx: expected all of them in the status, read %#lx", bits,
		      st);
		clear_one_by_one(c, bits, "after STATUS_SET");
	}
	diag("status bits %#lx set by their counters' overflows and cleared one by one%s", bits,
	     c->global_status_set ? ", then through STATUS_SET" : "");
}
