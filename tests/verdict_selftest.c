/* The verdict machinery proving itself on any machine: a failed check whose
 * observation a known deviation describes is XFAIL naming it and fills the
 * deviations block; the same observation on another platform stays a FAIL
 * with the row as a near miss; a fingerprint names a reported figure. The
 * observations are made up, on a made-up CPU, so the run shows each
 * outcome whatever PMU it has. Run only with tests=verdict.*, checked by
 * tests/expect/verdict-selftest.expect. */
#include "arch/x86/percpu.h"
#include "lib/string.h"
#include "pmu/pmu_internal.h" /* it fabricates a CPU's driver state */
#include "tests/deviations.h"
#include "tests/ktest.h"

/* The running CPU as a KVM guest (or as bare metal) on an Intel part.
 * These tests run on the BSP only, one at a time. */
static struct pmu_cpu *made_up_cpu(enum pmu_hv hv)
{
	static struct pmu_cpu made_up;
	struct pmu_cpu *pc = &made_up;

	memset(pc, 0, sizeof(*pc));
	pc->cpu = this_cpu()->cpu;
	pc->caps.vendor = PMU_VENDOR_INTEL;
	strlcpy(pc->caps.vendor_id, "GenuineIntel", sizeof(pc->caps.vendor_id));
	pc->caps.family = 6;
	pc->caps.model = 0x5e;
	pc->caps.hypervisor = hv != PMU_HV_NONE;
	pc->caps.hv = hv;
	if (hv == PMU_HV_KVM)
		strlcpy(pc->caps.hv_signature, "KVMKVMKVM", sizeof(pc->caps.hv_signature));
	return pc;
}

KTEST("verdict", deviation_matched, NULL, KTEST_SELFTEST,
      "a failed check a known deviation describes is XFAIL with its ID")
{
	struct dev_obs o = { .kind = DEV_OBS_CMASK255,
			     .pc = made_up_cpu(PMU_HV_KVM),
			     .cmask255 = { { 1, 1 } } };

	check(true, "a passing check beside it");
	check_or_deviation(o.cmask255.count[1] == 0, &o,
			   "cmask=255 (made up): expected 0, saw %lu and %lu at the two lengths",
			   o.cmask255.count[0], o.cmask255.count[1]);
}

KTEST("verdict", near_miss_fails, NULL, KTEST_SELFTEST,
      "the same observation on bare metal stays a FAIL, the row a near miss")
{
	struct dev_obs o = { .kind = DEV_OBS_CMASK255,
			     .pc = made_up_cpu(PMU_HV_NONE),
			     .cmask255 = { { 1, 1 } } };

	check_or_deviation(o.cmask255.count[1] == 0, &o,
			   "cmask=255 (made up): expected 0, saw %lu and %lu at the two lengths",
			   o.cmask255.count[0], o.cmask255.count[1]);
}

KTEST("verdict", matched_and_failed, NULL, KTEST_SELFTEST,
      "a matched deviation does not hide another check's failure")
{
	struct dev_obs o = { .kind = DEV_OBS_CMASK255,
			     .pc = made_up_cpu(PMU_HV_KVM),
			     .cmask255 = { { 1, 1 } } };

	check_or_deviation(false, &o, "cmask=255 (made up): expected 0, saw 1 at both lengths");
	check(false, "an unrelated check fails (made up)");
}

KTEST("verdict", fingerprint_named, NULL, KTEST_SELFTEST,
      "a reported figure a fingerprint row describes is named, and passes")
{
	struct dev_obs o = { .kind = DEV_OBS_GLOBAL_CTRL_BOOT, .pc = made_up_cpu(PMU_HV_KVM) };

	o.global_ctrl_boot.gp_mask = 0xf;
	o.global_ctrl_boot.fixed_mask = 0x7;
	diag("IA32_PERF_GLOBAL_CTRL at boot (made up): 0; not asserted");
	report_fingerprint(&o);
	check(true, "a fingerprint is no verdict");
}
