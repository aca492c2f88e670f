/* The known deviations (tests/deviations.h): each row says what is seen,
 * where it comes from, on which platform, and which observation is it;
 * anything else a check sees stays a FAIL. */
#include "tests/deviations.h"

#include <stdarg.h>

#include "arch/x86/lapic.h"
#include "arch/x86/msr.h"
#include "arch/x86/vectors.h"
#include "lib/bits.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/intel/models.h"

/* A retired-count excess a VM exit explains: one per exit, the enabling
 * WRMSR's and the asynchronous ones (host interrupts, IPIs, NMIs) that
 * outlast the minimum over a few trials of a window well under a
 * millisecond. More means something else ran in the window. */
#define VMEXIT_EXCESS_MAX 16
/* AMD's VMRUN in the guest: the bracket has one synchronous exit (the
 * enabling WRMSR's; the VMRUN after the disabling one resumes a stopped
 * counter), so 1, and one asynchronous exit that fell into every one of
 * the trials' windows; more is what a KVM that counted each emulated
 * instruction twice would add, which this row must not excuse. */
#define AMD_VMRUN_EXCESS_MAX 2

#define differs_if(cond, buf, n, ...) \
	((cond) ? (ksnprintf((buf), (n), __VA_ARGS__), (const char *)(buf)) : NULL)

static const char *cmask255_differs(const struct dev_obs *o, char *buf, size_t n)
{
	const uint64_t *c = o->cmask255.count;
	return differs_if(
		c[0] != 1 || c[1] != 1, buf, n,
		"CMASK=255 counted %lu and %lu at the two lengths; the row counts exactly 1 at both", c[0],
		c[1]);
}

static const char *fast_rdpmc_differs(const struct dev_obs *o, char *buf, size_t n)
{
	uint64_t ctr = o->fast_rdpmc.counter;

	if (o->fast_rdpmc.vector >= 0)
		return differs_if(true, buf, n, "it raised vector %d; the row does not fault",
				  o->fast_rdpmc.vector);
	if (!(ctr >> 32))
		return differs_if(
			true, buf, n,
			"the counter held %#lx, nothing above bit 31: its low half and its whole value are one",
			ctr);
	return differs_if(o->fast_rdpmc.value != (uint32_t)ctr, buf, n,
			  "it returned %#lx for a counter holding %#lx; the row returns the low 32 bits",
			  o->fast_rdpmc.value, ctr);
}

/* One per VM exit over the bracket's plausible most: a constant excess,
 * the same at both lengths, of at most most_excess; or, where the loop
 * has instructions a VMM intercepts (each an exit), exactly one more for
 * each of them, and a constant part of at most most_excess over the
 * bracket's most, never below its least. */
static const char *excess_differs(const struct dev_obs *o, char *buf, size_t n, int64_t most_excess)
{
	int64_t excess = o->retired.intercept - o->retired.intercept_max;
	int64_t icpt = o->retired.intercepted;
	bool per_exit = icpt && o->retired.slope_error == icpt;

	if (o->retired.slope_error && !per_exit && icpt)
		return differs_if(
			true, buf, n,
			"the two lengths differ by %+ld against the workload; the row adds a constant, or one for each of the %ld intercepted instructions",
			o->retired.slope_error, icpt);
	if (o->retired.slope_error && !per_exit)
		return differs_if(
			true, buf, n,
			"the two lengths differ by %+ld against the workload; the row adds a constant",
			o->retired.slope_error);
	if (per_exit ? o->retired.intercept < 0 : excess < 1)
		return differs_if(true, buf, n,
				  "the bracket counted %ld, %ld below its least; the row only adds",
				  o->retired.intercept, -o->retired.intercept);
	return differs_if(excess > most_excess, buf, n,
			  "%ld over the bracket's most, more than the row's %ld (one per VM exit)", excess,
			  most_excess);
}

/* Each intercepted instruction of the loop (an RDPMC) not counted at
 * all, and the bracket within its bounds. */
static const char *rdpmc_uncounted_differs(const struct dev_obs *o, char *buf, size_t n)
{
	int64_t icpt = o->retired.intercepted;

	if (!icpt || o->retired.branches)
		return differs_if(true, buf, n, "no intercepted instruction in the loop");
	if (o->retired.slope_error != -icpt)
		return differs_if(
			true, buf, n,
			"the two lengths differ by %+ld against the workload; the row has one fewer for each of the %ld RDPMCs (%+ld)",
			o->retired.slope_error, icpt, -icpt);
	return differs_if(o->retired.intercept < 0 || o->retired.intercept > o->retired.intercept_max, buf, n,
			  "the bracket counted %ld; the row's 0..%ld", o->retired.intercept,
			  o->retired.intercept_max);
}

static const char *vmexit_excess_differs(const struct dev_obs *o, char *buf, size_t n)
{
	return excess_differs(o, buf, n, VMEXIT_EXCESS_MAX);
}

static const char *amd_vmrun_differs(const struct dev_obs *o, char *buf, size_t n)
{
	return excess_differs(o, buf, n, AMD_VMRUN_EXCESS_MAX);
}

static const char *srf7_differs(const struct dev_obs *o, char *buf, size_t n)
{
	const struct intel_model *m = intel_model_of(pmu_cpu_caps(o->pc));

	if (o->retired.branches && m && (m->errata & INTEL_ERRATUM_SRF7_INSTRUCTIONS) &&
	    !(m->errata & INTEL_ERRATUM_SRF7_BRANCHES))
		return differs_if(true, buf, n,
				  "%s overcounts instructions only under SRF7, and branches exceeded",
				  m->name);
	return vmexit_excess_differs(o, buf, n);
}

static const char *quiet_overflow_differs(const struct dev_obs *o, char *buf, size_t n)
{
	if (o->quiet_overflow.status_bit)
		return differs_if(true, buf, n, "the status bit was set");
	return differs_if(!o->quiet_overflow.count_exact, buf, n,
			  "the count across the wrap was wrong: the counter need not have wrapped");
}

static const char *pmc_quirk_differs(const struct dev_obs *o, char *buf, size_t n)
{
	return differs_if(o->pmi_overflow.excess != 1, buf, n,
			  "the overflowing counter is %+ld against its reference; the row is exactly +1",
			  o->pmi_overflow.excess);
}

static const char *cycle_split_differs(const struct dev_obs *o, char *buf, size_t n)
{
	uint64_t sum = o->cycle_split.busy + o->cycle_split.idle;

	return differs_if(
		o->cycle_split.cycles <= sum + o->cycle_split.tolerance, buf, n,
		"cycles retiring >= 1 and 0 add up to %lu against %lu core cycles; the row has more core cycles",
		sum, o->cycle_split.cycles);
}

static const char *pmis_differs(const struct dev_obs *o, char *buf, size_t n)
{
	uint64_t ovf = o->pmis.overflows, sp = o->pmis.spurious;
	uint64_t found = o->pmis.pmis - sp - o->pmis.unclaimed;

	if (o->pmis.unclaimed)
		return differs_if(true, buf, n, "%lu PMIs found only bits of no counter of ours",
				  o->pmis.unclaimed);
	if (found != ovf)
		return differs_if(true, buf, n, "%lu PMIs found a status bit for %lu overflows", found, ovf);
	return differs_if(
		sp == 0 || sp > ovf, buf, n,
		"%lu PMIs found GLOBAL_STATUS empty for %lu overflows; the row has 1 per overflow at most",
		sp, ovf);
}

static const char *boot_zero_differs(const struct dev_obs *o, char *buf, size_t n)
{
	return differs_if(o->global_ctrl_boot.value != 0, buf, n, "it read %#lx", o->global_ctrl_boot.value);
}

static const char *boot_gp_and_fixed_differs(const struct dev_obs *o, char *buf, size_t n)
{
	uint64_t want = o->global_ctrl_boot.gp_mask | (uint64_t)o->global_ctrl_boot.fixed_mask << 32;
	return differs_if(o->global_ctrl_boot.value != want, buf, n, "it read %#lx, not %#lx",
			  o->global_ctrl_boot.value, want);
}

static const char *wide_write_differs(const struct dev_obs *o, char *buf, size_t n)
{
	uint64_t want = o->wide_write.value & pmu_width_mask(o->wide_write.width);

	if (o->wide_write.vector >= 0)
		return differs_if(true, buf, n, "it raised vector %d", o->wide_write.vector);
	return differs_if(o->wide_write.readback != want, buf, n, "it read back %#lx, not %#lx",
			  o->wide_write.readback, want);
}

static const char *lvtpc_unmasked_differs(const struct dev_obs *o, char *buf, size_t n)
{
	/* The writable bits (LAPIC_LVT_WRITABLE: vector, delivery mode,
	 * mask); delivery status (12) is the APIC's own. */
	uint32_t got = o->lvt_at_pmi.lvt & LAPIC_LVT_WRITABLE, want = o->lvt_at_pmi.programmed;

	return differs_if(got != want, buf, n,
			  "the entry read %#x; the row has it exactly as programmed (%#x), only unmasked",
			  got, want);
}

/* The counters RDPMC reads on an AMD core with PerfCtrExtCore (APM vol. 3,
 * RDPMC: ECX 0-5), whatever the guest's CPUID says. */
#define AMD_CORE_COUNTERS 6u

static const char *rdpmc_unintercepted_differs(const struct dev_obs *o, char *buf, size_t n)
{
	if (o->rdpmc_absent.vector >= 0)
		return differs_if(true, buf, n, "it raised vector %d; the row does not fault",
				  o->rdpmc_absent.vector);
	return differs_if(o->rdpmc_absent.idx >= AMD_CORE_COUNTERS, buf, n,
			  "RDPMC(%u) is past the %u core counters the hardware has: the row reads only those",
			  o->rdpmc_absent.idx, AMD_CORE_COUNTERS);
}

/* GuestOnly forced on: a select written with HostOnly counts both modes,
 * the guest's code and the hypervisor's work in the window; that work is
 * a few VM exits' handling, under a tenth of the loop. */
static const char *guest_only_forced_differs(const struct dev_obs *o, char *buf, size_t n)
{
	const struct dev_host_guest_only *h = &o->host_guest_only;
	unsigned host = h->combo & 2;

	if (h->read != (host | 1))
		return differs_if(
			true, buf, n,
			"written HostOnly/GuestOnly %u read back %u; the row reads what was written with GuestOnly set",
			h->combo, h->read);
	if (h->svme)
		return differs_if(true, buf, n,
				  "the guest's EFER.SVME was set; the row's figures are with it clear");
	if (host)
		return differs_if(
			h->count < h->lo || h->count > h->lo + h->lo / 10, buf, n,
			"it counted %lu; the row counts the loop's %lu and the hypervisor's work, under a tenth more",
			h->count, h->lo);
	return differs_if(
		h->count < h->lo || h->count > h->most, buf, n,
		"it counted %lu; the row counts the guest's code as the plain counter does (%lu..%lu)",
		h->count, h->lo, h->most);
}

static const char *reserved_no_gp_differs(const struct dev_obs *o, char *buf, size_t n)
{
	return differs_if(o->reserved_write.vector >= 0, buf, n, "it raised vector %d",
			  o->reserved_write.vector);
}

/* Xen refuses AnyThread through two masks (ARCH_CTRL_MASK, fixed_ctrl_mask):
 * one row each, so that either one alone is told apart. */
static const char *anythread_gp(const struct dev_obs *o, char *buf, size_t n)
{
	if (o->anythread_write.vector < 0)
		return differs_if(true, buf, n, "it did not fault (read back %#lx); the row raises #GP",
				  o->anythread_write.readback);
	return differs_if(o->anythread_write.vector != X86_VEC_GP, buf, n,
			  "it raised vector %d; the row raises #GP", o->anythread_write.vector);
}

static const char *evtsel_anythread_differs(const struct dev_obs *o, char *buf, size_t n)
{
	if (o->anythread_write.msr == MSR_IA32_FIXED_CTR_CTRL)
		return differs_if(true, buf, n, "it is FIXED_CTR_CTRL; the row is the event selects'");
	return anythread_gp(o, buf, n);
}

static const char *fixed_anythread_differs(const struct dev_obs *o, char *buf, size_t n)
{
	if (o->anythread_write.msr != MSR_IA32_FIXED_CTR_CTRL)
		return differs_if(true, buf, n, "it is MSR %#x; the row is FIXED_CTR_CTRL's",
				  o->anythread_write.msr);
	return anythread_gp(o, buf, n);
}

const struct deviation dev_table[DEV_ROWS] = {
	[DEV_KVM_EMULATED_WRMSR_IGNORES_CMASK] = {
		.id = "KVM-EMULATED-WRMSR-IGNORES-CMASK",
		.seen = "an instructions counter with CMASK=255 counts 1: the enabling WRMSR, which KVM emulates and counts on every enabled instructions counter whatever its CMASK",
		.source = "Linux arch/x86/kvm/pmu.c kvm_pmu_trigger_event(), since 9cd803d496e7 (v5.17)",
		.verdict = DEV_XFAIL,
		.obs = DEV_OBS_CMASK255,
		.on = { .hv = DEV_HV_KVM_OR_HIDDEN },
		.differs = cmask255_differs,
	},
	[DEV_KVM_PRE69_FAST_RDPMC_LOW32] = {
		.id = "KVM-PRE69-FAST-RDPMC-LOW32",
		.seen = "RDPMC with ECX[31] set does not fault and returns the counter's low 32 bits",
		.source = "Linux arch/x86/kvm/pmu.c kvm_pmu_rdpmc() before 5728a4a0ea79 \"KVM: x86/pmu: Disallow 'fast' RDPMC for architectural Intel PMUs\" (v6.9)",
		.verdict = DEV_XFAIL,
		.obs = DEV_OBS_FAST_RDPMC,
		.on = { .hv = DEV_HV_KVM_OR_HIDDEN, .vendor = PMU_VENDOR_INTEL },
		.differs = fast_rdpmc_differs,
		.fixed_in = DEV_LINUX_VERSION(6, 9, 0),
		.fixed_by = "5728a4a0ea79",
	},
	[DEV_AMD_SVM_VMRUN_COUNTED_IN_GUEST] = {
		.id = "AMD-SVM-VMRUN-COUNTED-IN-GUEST",
		.seen = "retired instructions or branches exceed the exact count by a few, the same at both loop lengths, and by one more for each RDPMC the VMM intercepts: the VMRUN resuming the guest after each VM exit counts as a guest instruction and branch",
		.source = "kvm-unit-tests x86/pmu.c (exact counts checked on Intel only, commit 89126fa4); Sandipan Das (AMD) on the KVM list, 2024-07-04; KVM intercepts RDPMC (Linux arch/x86/kvm/svm/svm.c init_vmcb(), INTERCEPT_RDPMC) and counts the one it emulates (kvm_skip_emulated_instruction(), since 9cd803d496e7, v5.17)",
		.verdict = DEV_XFAIL,
		.obs = DEV_OBS_RETIRED,
		.on = { .hv = DEV_HV_ANY_GUEST, .vendor = PMU_VENDOR_AMD },
		.differs = amd_vmrun_differs,
	},
	[DEV_SRF7] = {
		.id = "SRF7",
		.seen = "retired instructions (and branches, except on Clearwater Forest) exceed the exact count by a few, the same at both loop lengths: the VM exits and entries of the window are counted",
		.source = "Intel erratum SRF7 (Xeon 6700 E-core specification update); kvm-unit-tests lib/x86/pmu.c, commits 3ffdf39c and 61a7ee52",
		.verdict = DEV_XFAIL,
		.obs = DEV_OBS_RETIRED,
		.on = { .hv = DEV_HV_ANY_GUEST, .vendor = PMU_VENDOR_INTEL,
			.intel_errata = INTEL_ERRATUM_SRF7_INSTRUCTIONS },
		.differs = srf7_differs,
	},
	[DEV_XEN_STATUS_ONLY_VIA_PMI] = {
		.id = "XEN-STATUS-ONLY-VIA-PMI",
		.seen = "an overflow with INT/PMI clear leaves GLOBAL_STATUS clear: Xen updates the guest's status only when a PMI comes",
		.source = "Xen xen/arch/x86/cpu/vpmu_intel.c, core2_vpmu_do_rdmsr() and core2_vpmu_do_interrupt()",
		.verdict = DEV_XFAIL,
		.obs = DEV_OBS_QUIET_OVERFLOW,
		.on = { .hv = DEV_HV(PMU_HV_XEN), .vendor = PMU_VENDOR_INTEL },
		.differs = quiet_overflow_differs,
	},
	[DEV_XEN_PMC_QUIRK_ZERO_BECOMES_ONE] = {
		.id = "XEN-PMC-QUIRK-ZERO-BECOMES-ONE",
		.seen = "a counter that overflowed with a PMI counts one more than a reference counter: Xen's PMI handler writes 1 into an overflowed counter that reads 0",
		.source = "Xen xen/arch/x86/cpu/vpmu_intel.c, handle_pmc_quirk()",
		.verdict = DEV_XFAIL,
		.obs = DEV_OBS_PMI_OVERFLOW,
		.on = { .hv = DEV_HV(PMU_HV_XEN), .vendor = PMU_VENDOR_INTEL },
		.differs = pmc_quirk_differs,
	},
	[DEV_VMWARE_HYBRID_FREEZE_CYCLES_INCLUDE_VMM] = {
		.id = "VMWARE-HYBRID-FREEZE-CYCLES-INCLUDE-VMM",
		.seen = "core cycles exceed cycles retiring >= 1 plus cycles retiring 0: in the hybrid freeze mode cycles count VMware's work for the guest, instruction events do not",
		.source = "VMware KB 344161 \"Using Virtual CPU Performance Monitoring Counters\" (vpmc.freezeMode, default hybrid)",
		.verdict = DEV_XFAIL,
		.obs = DEV_OBS_CYCLE_SPLIT,
		.on = { .hv = DEV_HV(PMU_HV_VMWARE) },
		.differs = cycle_split_differs,
	},
	[DEV_KVM_PMI_DUPLICATE_OR_SPURIOUS] = {
		.id = "KVM-PMI-DUPLICATE-OR-SPURIOUS",
		.seen = "an overflow's PMI is followed by one more that finds GLOBAL_STATUS empty",
		.source = "Linux 73554b29bd70 \"KVM: x86/pmu: Synthesize at most one PMI per VM-exit\" and a16eb25b09c0 \"KVM: x86: Mask LVTPC when handling a PMI\" (2023) end it",
		.verdict = DEV_XFAIL,
		.obs = DEV_OBS_PMIS,
		.on = { .hv = DEV_HV_KVM_OR_HIDDEN },
		.differs = pmis_differs,
		.fixed_in = DEV_LINUX_VERSION(6, 6, 0),
		.fixed_by = "73554b29bd70, a16eb25b09c0 (kvm-x86-pmu-6.6-fixes)",
	},
	[DEV_XEN_SVM_RDPMC_NOT_INTERCEPTED] = {
		.id = "XEN-SVM-RDPMC-NOT-INTERCEPTED",
		.seen = "RDPMC of counter 4 or 5, which the guest's CPUID does not give (no PerfCtrExtCore), returns without #GP: Xen does not intercept RDPMC, so the guest reads the host's counter",
		.source = "Xen xen/arch/x86/hvm/svm/vmcb.c construct_vmcb(): no GENERAL1_INTERCEPT_RDPMC (4.17.5 to 4.22.0); xen/arch/x86/cpu/vpmu_amd.c gives the guest the legacy counters",
		.verdict = DEV_XFAIL,
		.obs = DEV_OBS_RDPMC_ABSENT,
		.on = { .hv = DEV_HV(PMU_HV_XEN), .vendor = PMU_VENDOR_AMD },
		.differs = rdpmc_unintercepted_differs,
	},
	[DEV_XEN_AMD_GUEST_ONLY_FORCED] = {
		.id = "XEN-AMD-GUESTONLY-FORCED",
		.seen = "every PerfEvtSel reads back with GuestOnly (bit 40) set: Xen sets it in each select the guest writes, so the host's SVM judges it: GuestOnly counts the guest's code whatever the guest's EFER.SVME, and HostOnly, now both bits, counts Xen's work too",
		.source = "Xen xen/arch/x86/cpu/vpmu_amd.c amd_vpmu_do_wrmsr(), \"enable guest only mode for HVM guest\" (4.17.5 to 4.22.0)",
		.verdict = DEV_XFAIL,
		.obs = DEV_OBS_HOST_GUEST_ONLY,
		.on = { .hv = DEV_HV(PMU_HV_XEN), .vendor = PMU_VENDOR_AMD },
		.differs = guest_only_forced_differs,
	},
	[DEV_KVM_PRE517_EMULATED_RDPMC_NOT_COUNTED] = {
		.id = "KVM-PRE517-EMULATED-RDPMC-NOT-COUNTED",
		.seen = "a loop that reads a counter with RDPMC counts one instruction fewer per RDPMC: KVM intercepts RDPMC and, before v5.17, emulated it without counting it",
		.source = "Linux arch/x86/kvm/x86.c kvm_emulate_rdpmc() ends in kvm_skip_emulated_instruction(), which counts the instruction only from 9cd803d496e7 \"KVM: x86: Update vPMCs when retiring instructions\" (v5.17); on AMD the VMRUN back into the guest makes up for it (AMD-SVM-VMRUN-COUNTED-IN-GUEST)",
		.verdict = DEV_XFAIL,
		.obs = DEV_OBS_RETIRED,
		.on = { .hv = DEV_HV_KVM_OR_HIDDEN },
		.differs = rdpmc_uncounted_differs,
		.fixed_in = DEV_LINUX_VERSION(5, 17, 0),
		.fixed_by = "9cd803d496e7",
	},
	[DEV_QEMU_GLOBAL_CTRL_RESET_ZERO] = {
		.id = "QEMU-GLOBAL-CTRL-RESET-ZERO",
		.seen = "IA32_PERF_GLOBAL_CTRL is 0 at boot, not the GP enables of the SDM's RESET value: QEMU puts its own reset value, 0, into the vCPU",
		.source = "QEMU target/i386/kvm/kvm.c kvm_put_msrs() at KVM_PUT_RESET_STATE, after x86_cpu_reset() zeroed env->msr_global_ctrl",
		.verdict = DEV_FINGERPRINT,
		.obs = DEV_OBS_GLOBAL_CTRL_BOOT,
		.on = { .hv = DEV_HV_KVM_OR_HIDDEN, .vendor = PMU_VENDOR_INTEL },
		.differs = boot_zero_differs,
	},
	[DEV_XEN_GLOBAL_CTRL_RESET_ZERO] = {
		.id = "XEN-GLOBAL-CTRL-RESET-ZERO",
		.seen = "IA32_PERF_GLOBAL_CTRL is 0 at boot: Xen starts the guest's value at 0",
		.source = "Xen xen/arch/x86/cpu/vpmu_intel.c, core2_vpmu_alloc_resource()",
		.verdict = DEV_FINGERPRINT,
		.obs = DEV_OBS_GLOBAL_CTRL_BOOT,
		.on = { .hv = DEV_HV(PMU_HV_XEN), .vendor = PMU_VENDOR_INTEL },
		.differs = boot_zero_differs,
	},
	[DEV_KVM_PRE60_GLOBAL_CTRL_RESET_GP_AND_FIXED] = {
		.id = "KVM-PRE60-GLOBAL-CTRL-RESET-GP-AND-FIXED",
		.seen = "IA32_PERF_GLOBAL_CTRL at boot enables the GP and the fixed counters: KVM before v6.0 set both at vCPU RESET (under a VMM that leaves it)",
		.source = "Linux f19a0c2c2e6a, until c49467a45fe0 (v6.0); the history in the message of de120e1d692d",
		.verdict = DEV_FINGERPRINT,
		.obs = DEV_OBS_GLOBAL_CTRL_BOOT,
		.on = { .hv = DEV_HV_KVM_OR_HIDDEN, .vendor = PMU_VENDOR_INTEL },
		.differs = boot_gp_and_fixed_differs,
	},
	[DEV_KVM_FIXED_CTR_WIDE_WRITE_TRUNCATED] = {
		.id = "KVM-FIXED-CTR-WIDE-WRITE-TRUNCATED",
		.seen = "a fixed-counter write with bits past the counter's width takes without #GP, truncated to the width",
		.source = "Linux arch/x86/kvm/pmu.c pmc_write_counter() masks to the width; arch/x86/kvm/vmx/pmu_intel.c intel_pmu_set_msr() checks no reserved bits of fixed counters (the SDM's WRMSR raises #GP for reserved bits)",
		.verdict = DEV_XFAIL,
		.obs = DEV_OBS_WIDE_WRITE,
		.on = { .hv = DEV_HV_KVM_OR_HIDDEN, .vendor = PMU_VENDOR_INTEL },
		.differs = wide_write_differs,
	},
	[DEV_AMD_RESERVED_BITS_NO_GP] = {
		.id = "AMD-RESERVED-BITS-NO-GP",
		.seen = "a PerfEvtSel or PerfCntrGlobalCtl write with reserved bits set takes without #GP",
		.source = "Linux 9b026073db2f \"KVM: x86/svm: Clear reserved bits written to PerfEvtSeln MSRs\" (EPYC raises no #GP; KVM clears the bits); arch/x86/kvm/pmu.c \"AMD ignores writes to reserved bits\"",
		.verdict = DEV_FINGERPRINT,
		.obs = DEV_OBS_RESERVED_WRITE,
		.on = { .hv = DEV_HV(PMU_HV_NONE) | DEV_HV_ANY_GUEST, .vendor = PMU_VENDOR_AMD },
		.differs = reserved_no_gp_differs,
	},
	[DEV_KVM_LVTPC_NOT_MASKED_ON_PMI] = {
		.id = "KVM-LVTPC-NOT-MASKED-ON-PMI",
		.seen = "the LVT performance-counter entry is not masked when the PMI handler starts: KVM delivered the guest's PMI without setting the mask bit",
		.source = "Linux a16eb25b09c0 \"KVM: x86: Mask LVTPC when handling a PMI\" (2023) sets it",
		.verdict = DEV_XFAIL,
		.obs = DEV_OBS_LVT_AT_PMI,
		.on = { .hv = DEV_HV_KVM_OR_HIDDEN, .vendor = PMU_VENDOR_INTEL },
		.differs = lvtpc_unmasked_differs,
		.fixed_in = DEV_LINUX_VERSION(6, 6, 0),
		.fixed_by = "a16eb25b09c0 (kvm-x86-pmu-6.6-fixes)",
	},
	[DEV_XEN_ANYTHREAD_RESERVED] = {
		.id = "XEN-ANYTHREAD-RESERVED",
		.seen = "a PERFEVTSEL write with AnyThread (bit 21) set raises #GP on a version 3 or later PMU whose CPUID.0AH:EDX[15] leaves AnyThread defined: Xen refuses AnyThread (and pin control) in every guest's event selects",
		.source = "Xen xen/arch/x86/cpu/vpmu_intel.c core2_vpmu_do_wrmsr(), ARCH_CTRL_MASK (4.23-dev c447b7308b)",
		.verdict = DEV_XFAIL,
		.obs = DEV_OBS_ANYTHREAD_WRITE,
		.on = { .hv = DEV_HV(PMU_HV_XEN), .vendor = PMU_VENDOR_INTEL },
		.differs = evtsel_anythread_differs,
	},
	[DEV_XEN_FIXED_ANYTHREAD_RESERVED] = {
		.id = "XEN-FIXED-ANYTHREAD-RESERVED",
		.seen = "a FIXED_CTR_CTRL write with a fixed counter's AnyThread (bit 2 + 4i) set raises #GP on a version 3 or later PMU whose CPUID.0AH:EDX[15] leaves AnyThread defined: Xen reserves those bits",
		.source = "Xen xen/arch/x86/cpu/vpmu_intel.c core2_vpmu_do_wrmsr(), fixed_ctrl_mask as core2_vpmu_init() sets it (4.23-dev c447b7308b)",
		.verdict = DEV_XFAIL,
		.obs = DEV_OBS_ANYTHREAD_WRITE,
		.on = { .hv = DEV_HV(PMU_HV_XEN), .vendor = PMU_VENDOR_INTEL },
		.differs = fixed_anythread_differs,
	},
};

_Static_assert(PMU_HV_NR <= 32, "enum pmu_hv must fit the DEV_HV() mask");

/* NULL when c is on d's platform; else, into buf, why not. */
static const char *platform_differs(const struct dev_platform *on, const struct pmu_caps *c, char *buf,
				    size_t n)
{
	char where[96];

	if (c->hv_signature[0])
		ksnprintf(where, sizeof(where), "%s (\"%s\")", pmu_hv_name(c->hv), c->hv_signature);
	else
		ksnprintf(where, sizeof(where), "%s", pmu_hv_name(c->hv));
	if (!((on->hv >> c->hv) & 1))
		return differs_if(true, buf, n, "this is %s", where);
	if (on->vendor != PMU_VENDOR_UNKNOWN && on->vendor != c->vendor)
		return differs_if(true, buf, n, "this is a %s CPU", c->vendor_id);
	if (on->intel_errata) {
		const struct intel_model *m = intel_model_of(c);
		if (!m || !(m->errata & on->intel_errata))
			return differs_if(true, buf, n,
					  "family %u model %#x has no such erratum (pmu/intel/models.c)",
					  c->family, c->model);
	}
	return NULL;
}

static uint32_t host_kernel;

void dev_set_host_kernel(uint32_t version)
{
	host_kernel = version;
}

/* platform_differs, and a KVM row's fix: on a KVM host known (hv.kernel=)
 * to have it, the row is not this platform. */
static const char *row_platform_differs(const struct deviation *d, const struct pmu_caps *c, char *buf,
					size_t n)
{
	const char *why = platform_differs(&d->on, c, buf, n);

	if (why || !d->fixed_in || !host_kernel || c->hv != PMU_HV_KVM || host_kernel < d->fixed_in)
		return why;
	return differs_if(true, buf, n,
			  "the host's Linux %u.%u.%u (hv.kernel=) has the fix (Linux %u.%u, %s)",
			  host_kernel >> 16, (host_kernel >> 8) & 0xff, host_kernel & 0xff, d->fixed_in >> 16,
			  (d->fixed_in >> 8) & 0xff, d->fixed_by);
}

static const struct deviation *find(const struct dev_obs *o, enum dev_verdict verdict, dev_near_fn near,
				    void *ctx)
{
	char seen_why[160], plat_why[160], line[352];

	for (unsigned i = 0; i < DEV_ROWS; i++) {
		const struct deviation *d = &dev_table[i];
		if (d->verdict == verdict && d->obs == o->kind &&
		    !d->differs(o, seen_why, sizeof(seen_why)) &&
		    !row_platform_differs(d, pmu_cpu_caps(o->pc), plat_why, sizeof(plat_why)))
			return d;
	}
	/* No row: the near misses are the rows that have the behaviour but
	 * not the platform, or the platform but not the behaviour. */
	for (unsigned i = 0; near && i < DEV_ROWS; i++) {
		const struct deviation *d = &dev_table[i];
		if (d->verdict != verdict || d->obs != o->kind)
			continue;
		const char *seen = d->differs(o, seen_why, sizeof(seen_why));
		const char *plat = row_platform_differs(d, pmu_cpu_caps(o->pc), plat_why, sizeof(plat_why));
		if (!seen == !plat)
			continue;
		if (plat)
			ksnprintf(line, sizeof(line), "seen as the row describes, but %s", plat);
		else
			ksnprintf(line, sizeof(line), "%s", seen);
		near(ctx, d, line);
	}
	return NULL;
}

const struct deviation *dev_match(const struct dev_obs *o, dev_near_fn near, void *ctx)
{
	return find(o, DEV_XFAIL, near, ctx);
}

const struct deviation *dev_fingerprint(const struct dev_obs *o)
{
	return find(o, DEV_FINGERPRINT, NULL, NULL);
}

static const char *const retired_name[2] = { "instructions", "branches" };

const char *dev_describe(const struct dev_obs *o, char *buf, size_t n)
{
	switch (o->kind) {
	case DEV_OBS_CMASK255:
		ksnprintf(buf, n, "CMASK=255 counted %lu and %lu (short and long loop)", o->cmask255.count[0],
			  o->cmask255.count[1]);
		break;
	case DEV_OBS_FAST_RDPMC:
		if (o->fast_rdpmc.vector >= 0)
			ksnprintf(buf, n, "fast RDPMC raised vector %d", o->fast_rdpmc.vector);
		else
			ksnprintf(buf, n, "fast RDPMC returned %#lx for a counter holding %#lx",
				  o->fast_rdpmc.value, o->fast_rdpmc.counter);
		break;
	case DEV_OBS_RETIRED:
		if (o->retired.intercepted && o->retired.slope_error)
			ksnprintf(buf, n, "%s %+ld over the bracket's most, slope %+ld for %ld RDPMCs",
				  retired_name[o->retired.branches],
				  o->retired.intercept - o->retired.intercept_max, o->retired.slope_error,
				  o->retired.intercepted);
		else
			ksnprintf(buf, n, "%s %+ld over the bracket's most, slope %s",
				  retired_name[o->retired.branches],
				  o->retired.intercept - o->retired.intercept_max,
				  o->retired.slope_error ? "off" : "exact");
		break;
	case DEV_OBS_QUIET_OVERFLOW:
		ksnprintf(buf, n, "GLOBAL_STATUS bit %s after a wrap with INT clear, count %s",
			  o->quiet_overflow.status_bit ? "set" : "clear",
			  o->quiet_overflow.count_exact ? "exact" : "wrong");
		break;
	case DEV_OBS_PMI_OVERFLOW:
		ksnprintf(buf, n, "the overflowing counter %+ld against its reference",
			  o->pmi_overflow.excess);
		break;
	case DEV_OBS_PMIS:
		ksnprintf(buf, n, "%lu PMIs for %lu overflows, %lu with GLOBAL_STATUS empty", o->pmis.pmis,
			  o->pmis.overflows, o->pmis.spurious);
		break;
	case DEV_OBS_CYCLE_SPLIT:
		ksnprintf(buf, n, "core cycles %lu, retiring >= 1 %lu + retiring 0 %lu",
			  o->cycle_split.cycles, o->cycle_split.busy, o->cycle_split.idle);
		break;
	case DEV_OBS_GLOBAL_CTRL_BOOT:
		ksnprintf(buf, n, "IA32_PERF_GLOBAL_CTRL %#lx at boot", o->global_ctrl_boot.value);
		break;
	case DEV_OBS_WIDE_WRITE:
		ksnprintf(buf, n, "a write of %#lx past the %u-bit width: %s, read back %#lx",
			  o->wide_write.value, o->wide_write.width,
			  o->wide_write.vector >= 0 ? "fault" : "no fault", o->wide_write.readback);
		break;
	case DEV_OBS_RESERVED_WRITE:
		ksnprintf(buf, n, "a write of %#lx with reserved bits: %s, read back %#lx",
			  o->reserved_write.value, o->reserved_write.vector >= 0 ? "fault" : "no fault",
			  o->reserved_write.readback);
		break;
	case DEV_OBS_LVT_AT_PMI:
		ksnprintf(buf, n, "the LVT entry read %#x at the handler's start (programmed %#x)",
			  o->lvt_at_pmi.lvt, o->lvt_at_pmi.programmed);
		break;
	case DEV_OBS_RDPMC_ABSENT:
		if (o->rdpmc_absent.vector >= 0)
			ksnprintf(buf, n, "RDPMC(%u) raised vector %d (GP counters %#x)", o->rdpmc_absent.idx,
				  o->rdpmc_absent.vector, o->rdpmc_absent.gp_mask);
		else
			ksnprintf(buf, n, "RDPMC(%u) did not fault (GP counters %#x)", o->rdpmc_absent.idx,
				  o->rdpmc_absent.gp_mask);
		break;
	case DEV_OBS_HOST_GUEST_ONLY:
		ksnprintf(buf, n,
			  "HostOnly/GuestOnly %u read back %u, EFER.SVME=%u, counted %lu (the loop %lu)",
			  o->host_guest_only.combo, o->host_guest_only.read, o->host_guest_only.svme,
			  o->host_guest_only.count, o->host_guest_only.lo);
		break;
	case DEV_OBS_ANYTHREAD_WRITE:
		if (o->anythread_write.vector >= 0)
			ksnprintf(buf, n, "wrmsr %#x <- %#lx (AnyThread set) raised vector %d",
				  o->anythread_write.msr, o->anythread_write.value,
				  o->anythread_write.vector);
		else
			ksnprintf(buf, n, "wrmsr %#x <- %#lx (AnyThread set) took, read back %#lx",
				  o->anythread_write.msr, o->anythread_write.value,
				  o->anythread_write.readback);
		break;
	default: ksnprintf(buf, n, "an observation of kind %d", o->kind); break;
	}
	return buf;
}

/* Append to buf (size n, *len used so far), never past its end. */
static void append(char *buf, size_t n, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t n, size_t *len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int w = kvsnprintf(buf + *len, n - *len, fmt, ap);
	va_end(ap);
	*len += w > 0 ? (size_t)w : 0;
	if (*len >= n)
		*len = n - 1;
}

/* Named hypervisors first, then the unnamed, then none. */
static const enum pmu_hv hv_order[] = { PMU_HV_KVM, PMU_HV_XEN,   PMU_HV_VMWARE, PMU_HV_HYPERV,
					PMU_HV_TCG, PMU_HV_OTHER, PMU_HV_HIDDEN, PMU_HV_NONE };
_Static_assert(ARRAY_LEN(hv_order) == PMU_HV_NR, "every hypervisor in the order");

const char *dev_platform_text(const struct deviation *d, char *buf, size_t n)
{
	const struct dev_platform *on = &d->on;
	size_t len = 0;

	buf[0] = '\0';
	if (on->hv == (DEV_HV(PMU_HV_NONE) | DEV_HV_ANY_GUEST))
		append(buf, n, &len, "bare metal or any hypervisor");
	else if (on->hv == DEV_HV_ANY_GUEST)
		append(buf, n, &len, "any hypervisor");
	else
		for (unsigned i = 0; i < ARRAY_LEN(hv_order); i++)
			if ((on->hv >> hv_order[i]) & 1)
				append(buf, n, &len, "%s%s", len ? " or " : "", pmu_hv_name(hv_order[i]));
	if (on->vendor == PMU_VENDOR_INTEL)
		append(buf, n, &len, "; Intel");
	else if (on->vendor == PMU_VENDOR_AMD)
		append(buf, n, &len, "; AMD or Hygon");
	if (on->intel_errata) {
		unsigned nm;
		const struct intel_model *m = intel_models(&nm);
		append(buf, n, &len, ", family 6 models");
		for (unsigned i = 0, k = 0; i < nm; i++)
			if (m[i].errata & on->intel_errata)
				append(buf, n, &len, "%s %#x", k++ ? "," : "", m[i].model);
	}
	return buf;
}
