/* Host tests of the deviation table (tests/deviations.c): each XFAIL row
 * matches what it describes on its platform and nothing else; a near miss
 * (the behaviour elsewhere, or the platform with other figures) is no
 * match and is named; fingerprints; the table's own rules; and the
 * table of known deviations in docs/operating.md is the one the code has. The CPUs
 * are the software PMU model's, with the hypervisor signatures real ones
 * present, decoded by the driver as in the kernel. */
#include "arch/x86/msr.h"
#include "emu/model/x86-pmu.h"
#include "pmu/intel/models.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"
#include "tests/deviations.h"
#include "tests/host/hosttest.h"
#include "tests/host/pmu_model.h"

static const char kvm_sig[12] = "KVMKVMKVM\0\0";

/* CPU 0 of a model with this vendor, CPUID.01H:EAX signature and
 * hypervisor signature (NULL: bare metal, "": the bit without a
 * signature). Each call remakes CPU 0: the last one is what earlier
 * pointers see. */
static const struct pmu_cpu *cpu_as(const char *vendor, uint32_t signature, const char *hv)
{
	struct model_cpu_config cfg = *(model_init(MODEL_V2, false), model_config(0));

	cfg.vendor = vendor;
	cfg.signature = signature;
	cfg.hypervisor = hv != NULL;
	cfg.hv_sig[0] = hv && hv[0] ? hv : NULL;
	model_init_custom(&cfg, 1);
	pmu_cpu_init(NULL);
	return pmu_cpu_of(0);
}

#define SKYLAKE 0x000506e3u
#define SIERRA_FOREST 0x000a06f3u     /* family 6 model 0xaf */
#define CLEARWATER_FOREST 0x000d06d1u /* model 0xdd */

static const struct pmu_cpu *kvm_intel(void)
{
	return cpu_as("GenuineIntel", SKYLAKE, kvm_sig);
}

/* Collects near misses: "ID: why" lines. */
static char nears[2048];
static void collect_near(void *ctx, const struct deviation *d, const char *why)
{
	(void)ctx;
	size_t len = strlen(nears);
	snprintf(nears + len, sizeof(nears) - len, "%s: %s\n", d->id, why);
}

/* The row o matches, with the near misses collected. */
static const char *match(const struct dev_obs *o)
{
	nears[0] = '\0';
	const struct deviation *d = dev_match(o, collect_near, NULL);
	return d ? d->id : NULL;
}

static bool near_named(const char *id, const char *text)
{
	char want[256];
	snprintf(want, sizeof(want), "%s: ", id);
	const char *p = strstr(nears, want);
	return p && (!text || strstr(p, text));
}

#define HT_CHECK_MATCH(obs, id) HT_CHECK_STR(match(obs), id)
#define HT_CHECK_NO_MATCH(obs, id, text)                                                              \
	do {                                                                                          \
		const char *m_ = match(obs);                                                          \
		HT_CHECK(m_ == NULL, "matched %s", m_);                                               \
		HT_CHECK(near_named(id, text), "near miss %s (\"%s\") in:\n%s", id, text ? text : "", \
			 nears);                                                                      \
	} while (0)

HT_TEST(cmask255_counted_once_under_kvm)
{
	struct dev_obs o = { .kind = DEV_OBS_CMASK255, .pc = kvm_intel(), .cmask255 = { { 1, 1 } } };
	HT_CHECK_MATCH(&o, "KVM-EMULATED-WRMSR-IGNORES-CMASK");
	/* The hypervisor hiding its name is KVM for this row. */
	o.pc = cpu_as("GenuineIntel", SKYLAKE, "");
	HT_CHECK_MATCH(&o, "KVM-EMULATED-WRMSR-IGNORES-CMASK");
	o.pc = kvm_intel();
	o.cmask255.count[1] = 2; /* grows with the loop: not one emulated WRMSR */
	HT_CHECK_NO_MATCH(&o, "KVM-EMULATED-WRMSR-IGNORES-CMASK", "counted 1 and 2");
	o.cmask255.count[0] = o.cmask255.count[1] = 2;
	HT_CHECK_NO_MATCH(&o, "KVM-EMULATED-WRMSR-IGNORES-CMASK", NULL);
	o.cmask255.count[0] = o.cmask255.count[1] = 1;
	o.pc = cpu_as("GenuineIntel", SKYLAKE, NULL);
	HT_CHECK_NO_MATCH(&o, "KVM-EMULATED-WRMSR-IGNORES-CMASK", "but this is bare metal");
	o.pc = cpu_as("GenuineIntel", SKYLAKE, "TCGTCGTCGTCG");
	HT_CHECK_NO_MATCH(&o, "KVM-EMULATED-WRMSR-IGNORES-CMASK", "this is QEMU TCG (\"TCGTCGTCGTCG\")");
	o.pc = cpu_as("GenuineIntel", SKYLAKE, "XenVMMXenVMM");
	HT_CHECK(match(&o) == NULL, "not Xen's");
}

HT_TEST(fast_rdpmc_low_half_under_old_kvm)
{
	struct dev_obs o = { .kind = DEV_OBS_FAST_RDPMC, .pc = kvm_intel() };
	o.fast_rdpmc.vector = -1;
	o.fast_rdpmc.counter = 0xffffa5a5a5a5ull;
	o.fast_rdpmc.value = 0xa5a5a5a5;
	HT_CHECK_MATCH(&o, "KVM-PRE69-FAST-RDPMC-LOW32");
	o.fast_rdpmc.value = o.fast_rdpmc.counter; /* the whole value: no row */
	HT_CHECK_NO_MATCH(&o, "KVM-PRE69-FAST-RDPMC-LOW32", "returns the low 32 bits");
	o.fast_rdpmc.counter = o.fast_rdpmc.value = 0x5a5a5a5a; /* cannot tell */
	HT_CHECK_NO_MATCH(&o, "KVM-PRE69-FAST-RDPMC-LOW32", "nothing above bit 31");
	o.fast_rdpmc.counter = 0xffffa5a5a5a5ull;
	o.fast_rdpmc.value = 0xa5a5a5a5;
	o.pc = cpu_as("AuthenticAMD", 0x00a00f11, kvm_sig);
	HT_CHECK_NO_MATCH(&o, "KVM-PRE69-FAST-RDPMC-LOW32", "AuthenticAMD");
}

static struct dev_obs retired(const struct pmu_cpu *pc, bool branches, int64_t slope, int64_t intercept)
{
	struct dev_obs o = { .kind = DEV_OBS_RETIRED, .pc = pc };
	o.retired.branches = branches;
	o.retired.slope_error = slope;
	o.retired.intercept = intercept;
	o.retired.intercept_max = branches ? 0 : 2;
	return o;
}

/* hv.kernel=: a KVM row for a bug fixed before the host's Linux is a FAIL
 * there, a near miss naming the fix; an older host or none given, XFAIL. */
HT_TEST(kvm_rows_scoped_to_the_host_kernel)
{
	struct dev_obs o = { .kind = DEV_OBS_FAST_RDPMC, .pc = kvm_intel() };
	o.fast_rdpmc.vector = -1;
	o.fast_rdpmc.counter = 0xffffa5a5a5a5ull;
	o.fast_rdpmc.value = 0xa5a5a5a5;
	dev_set_host_kernel(DEV_LINUX_VERSION(6, 8, 12));
	HT_CHECK_MATCH(&o, "KVM-PRE69-FAST-RDPMC-LOW32");
	dev_set_host_kernel(DEV_LINUX_VERSION(6, 9, 0));
	HT_CHECK_NO_MATCH(&o, "KVM-PRE69-FAST-RDPMC-LOW32",
			  "Linux 6.9.0 (hv.kernel=) has the fix (Linux 6.9, 5728a4a0ea79)");
	dev_set_host_kernel(DEV_LINUX_VERSION(6, 12, 95));
	HT_CHECK_NO_MATCH(&o, "KVM-PRE69-FAST-RDPMC-LOW32", "has the fix");
	/* A row that no fix ended stays a match on any host. */
	struct dev_obs c = { .kind = DEV_OBS_CMASK255, .pc = kvm_intel() };
	c.cmask255.count[0] = c.cmask255.count[1] = 1;
	HT_CHECK_MATCH(&c, "KVM-EMULATED-WRMSR-IGNORES-CMASK");
	/* LVTPC: fixed in 6.6. */
	struct dev_obs l = { .kind = DEV_OBS_LVT_AT_PMI, .pc = kvm_intel() };
	l.lvt_at_pmi.lvt = l.lvt_at_pmi.programmed = 0xfe;
	HT_CHECK_NO_MATCH(&l, "KVM-LVTPC-NOT-MASKED-ON-PMI", "(Linux 6.6, a16eb25b09c0");
	dev_set_host_kernel(DEV_LINUX_VERSION(6, 1, 0));
	HT_CHECK_MATCH(&l, "KVM-LVTPC-NOT-MASKED-ON-PMI");
	dev_set_host_kernel(0);
	HT_CHECK_MATCH(&o, "KVM-PRE69-FAST-RDPMC-LOW32");
}

HT_TEST(amd_guest_counts_vmrun)
{
	const struct pmu_cpu *kvm_amd = cpu_as("AuthenticAMD", 0x00a00f11, kvm_sig);
	struct dev_obs o = retired(kvm_amd, true, 0, 1);
	HT_CHECK_MATCH(&o, "AMD-SVM-VMRUN-COUNTED-IN-GUEST");
	o = retired(kvm_amd, false, 0, 3);
	HT_CHECK_MATCH(&o, "AMD-SVM-VMRUN-COUNTED-IN-GUEST");
	/* Any hypervisor runs an AMD guest with VMRUN. */
	o.pc = cpu_as("AuthenticAMD", 0x00a00f11, "XenVMMXenVMM");
	HT_CHECK_MATCH(&o, "AMD-SVM-VMRUN-COUNTED-IN-GUEST");
	o = retired(kvm_amd, true, 1, 1); /* the per-iteration count is off */
	HT_CHECK_NO_MATCH(&o, "AMD-SVM-VMRUN-COUNTED-IN-GUEST", "the row adds a constant");
	o = retired(kvm_amd, true, 0, -1); /* short */
	HT_CHECK_NO_MATCH(&o, "AMD-SVM-VMRUN-COUNTED-IN-GUEST", "the row only adds");
	o = retired(kvm_amd, true, 0, 2); /* the enabling WRMSR's exit and one asynchronous */
	HT_CHECK_MATCH(&o, "AMD-SVM-VMRUN-COUNTED-IN-GUEST");
	o = retired(kvm_amd, true, 0, 3); /* one more: an emulated instruction counted twice */
	HT_CHECK_NO_MATCH(&o, "AMD-SVM-VMRUN-COUNTED-IN-GUEST", "more than the row's 2");
	o = retired(kvm_amd, false, 0, 5);
	HT_CHECK_NO_MATCH(&o, "AMD-SVM-VMRUN-COUNTED-IN-GUEST", "more than the row's 2");
	o = retired(cpu_as("AuthenticAMD", 0x00a00f11, NULL), true, 0, 1);
	HT_CHECK_NO_MATCH(&o, "AMD-SVM-VMRUN-COUNTED-IN-GUEST", "bare metal");
	o = retired(kvm_intel(), true, 0, 1);
	HT_CHECK(match(&o) == NULL, "an Intel guest: no row");
}

/* A loop of n RDPMCs a VMM intercepts, measured at n and 2n: slope and
 * the part left at length 0. */
static struct dev_obs rdpmc_loop(const struct pmu_cpu *pc, int64_t n, int64_t slope, int64_t intercept)
{
	struct dev_obs o = retired(pc, false, slope, intercept);
	o.retired.intercepted = n;
	return o;
}

/* One VMRUN per intercepted RDPMC on AMD, the constant part within the
 * bracket's bounds and the row's; KVM before 5.17 leaving the RDPMC it
 * emulated uncounted; neither matches anything in between. */
HT_TEST(rdpmc_loop_under_a_vmm)
{
	const struct pmu_cpu *kvm_amd = cpu_as("AuthenticAMD", 0x00a00f11, kvm_sig);
	struct dev_obs o = rdpmc_loop(kvm_amd, 50, 50, 2); /* KVM >= 5.17: WRMSR 1, its VMRUN 1 */
	HT_CHECK_MATCH(&o, "AMD-SVM-VMRUN-COUNTED-IN-GUEST");
	o = rdpmc_loop(kvm_amd, 50, 50, 0);
	HT_CHECK_MATCH(&o, "AMD-SVM-VMRUN-COUNTED-IN-GUEST");
	o = rdpmc_loop(kvm_amd, 50, 50, 4); /* + one asynchronous exit in every window */
	HT_CHECK_MATCH(&o, "AMD-SVM-VMRUN-COUNTED-IN-GUEST");
	o = rdpmc_loop(kvm_amd, 50, 50, 5);
	HT_CHECK_NO_MATCH(&o, "AMD-SVM-VMRUN-COUNTED-IN-GUEST", "more than the row's 2");
	o = rdpmc_loop(kvm_amd, 50, 50, -1);
	HT_CHECK_NO_MATCH(&o, "AMD-SVM-VMRUN-COUNTED-IN-GUEST", "the row only adds");
	o = rdpmc_loop(kvm_amd, 50, 100, 2); /* two per RDPMC: an emulated RDPMC counted twice */
	HT_CHECK_NO_MATCH(&o, "AMD-SVM-VMRUN-COUNTED-IN-GUEST", "one for each of the 50 intercepted");
	o = rdpmc_loop(kvm_amd, 50, 7, 2); /* asynchronous exits, not per RDPMC */
	HT_CHECK_NO_MATCH(&o, "AMD-SVM-VMRUN-COUNTED-IN-GUEST", "differ by +7");
	/* The constant alone, slope exact, as the plain loop's. */
	o = rdpmc_loop(kvm_amd, 50, 0, 3);
	HT_CHECK_MATCH(&o, "AMD-SVM-VMRUN-COUNTED-IN-GUEST");
	o = rdpmc_loop(cpu_as("AuthenticAMD", 0x00a00f11, NULL), 50, 50, 2);
	HT_CHECK_NO_MATCH(&o, "AMD-SVM-VMRUN-COUNTED-IN-GUEST", "bare metal");
	o = rdpmc_loop(kvm_intel(), 50, 50, 2);
	HT_CHECK(match(&o) == NULL, "an Intel guest under KVM: no row counts RDPMC twice");

	/* KVM before 5.17: none of the RDPMCs counted. */
	o = rdpmc_loop(kvm_intel(), 50, -50, 0);
	HT_CHECK_MATCH(&o, "KVM-PRE517-EMULATED-RDPMC-NOT-COUNTED");
	o = rdpmc_loop(kvm_intel(), 50, -49, 0);
	HT_CHECK_NO_MATCH(&o, "KVM-PRE517-EMULATED-RDPMC-NOT-COUNTED", "one fewer for each of the 50");
	o = rdpmc_loop(kvm_intel(), 50, -50, 3);
	HT_CHECK_NO_MATCH(&o, "KVM-PRE517-EMULATED-RDPMC-NOT-COUNTED", "the row's 0..2");
	o = retired(kvm_intel(), false, -50, 0); /* the plain loop has nothing intercepted */
	HT_CHECK_NO_MATCH(&o, "KVM-PRE517-EMULATED-RDPMC-NOT-COUNTED", "no intercepted instruction");
	o = rdpmc_loop(cpu_as("GenuineIntel", SKYLAKE, "XenVMMXenVMM"), 50, -50, 0);
	HT_CHECK_NO_MATCH(&o, "KVM-PRE517-EMULATED-RDPMC-NOT-COUNTED", "this is Xen");
	dev_set_host_kernel(DEV_LINUX_VERSION(5, 17, 0));
	o = rdpmc_loop(kvm_intel(), 50, -50, 0);
	HT_CHECK_NO_MATCH(&o, "KVM-PRE517-EMULATED-RDPMC-NOT-COUNTED",
			  "has the fix (Linux 5.17, 9cd803d496e7)");
	dev_set_host_kernel(0);
}

HT_TEST(srf7_by_model)
{
	struct dev_obs o = retired(cpu_as("GenuineIntel", SIERRA_FOREST, kvm_sig), true, 0, 1);
	HT_CHECK_MATCH(&o, "SRF7");
	o = retired(o.pc, false, 0, 4);
	HT_CHECK_MATCH(&o, "SRF7");
	/* Clearwater Forest: instructions only. */
	o = retired(cpu_as("GenuineIntel", CLEARWATER_FOREST, kvm_sig), false, 0, 3);
	HT_CHECK_MATCH(&o, "SRF7");
	o = retired(o.pc, true, 0, 1);
	HT_CHECK_NO_MATCH(&o, "SRF7", "instructions only");
	/* Not a listed model; not under a hypervisor. */
	o = retired(kvm_intel(), true, 0, 1);
	HT_CHECK_NO_MATCH(&o, "SRF7", "has no such erratum");
	o = retired(cpu_as("GenuineIntel", SIERRA_FOREST, NULL), true, 0, 1);
	HT_CHECK_NO_MATCH(&o, "SRF7", "bare metal");
	o = retired(cpu_as("GenuineIntel", SIERRA_FOREST, kvm_sig), true, 2, 1);
	HT_CHECK_NO_MATCH(&o, "SRF7", "adds a constant");
}

HT_TEST(xen_rows)
{
	const struct pmu_cpu *xen = cpu_as("GenuineIntel", SKYLAKE, "XenVMMXenVMM");
	struct dev_obs o = { .kind = DEV_OBS_QUIET_OVERFLOW, .pc = xen };
	o.quiet_overflow.count_exact = true;
	HT_CHECK_MATCH(&o, "XEN-STATUS-ONLY-VIA-PMI");
	o.quiet_overflow.count_exact = false; /* did it even wrap? */
	HT_CHECK_NO_MATCH(&o, "XEN-STATUS-ONLY-VIA-PMI", "need not have wrapped");
	o.quiet_overflow.count_exact = true;
	o.pc = kvm_intel();
	HT_CHECK_NO_MATCH(&o, "XEN-STATUS-ONLY-VIA-PMI", "this is KVM");

	/* pmu_cpu_of(0) was made KVM's: Xen's again. */
	xen = cpu_as("GenuineIntel", SKYLAKE, "XenVMMXenVMM");
	o = (struct dev_obs){ .kind = DEV_OBS_PMI_OVERFLOW, .pc = xen, .pmi_overflow = { 1 } };
	HT_CHECK_MATCH(&o, "XEN-PMC-QUIRK-ZERO-BECOMES-ONE");
	o.pmi_overflow.excess = 2;
	HT_CHECK_NO_MATCH(&o, "XEN-PMC-QUIRK-ZERO-BECOMES-ONE", "exactly +1");
	o.pmi_overflow.excess = -1;
	HT_CHECK_NO_MATCH(&o, "XEN-PMC-QUIRK-ZERO-BECOMES-ONE", NULL);

	/* AnyThread refused with #GP; any other outcome stays a FAIL. */
	xen = cpu_as("GenuineIntel", SKYLAKE, "XenVMMXenVMM");
	o = (struct dev_obs){ .kind = DEV_OBS_ANYTHREAD_WRITE, .pc = xen };
	o.anythread_write.vector = X86_VEC_GP, o.anythread_write.msr = 0x186;
	o.anythread_write.value = 1ull << 21 | 0xc0;
	HT_CHECK_MATCH(&o, "XEN-ANYTHREAD-RESERVED");
	o.anythread_write.vector = -1, o.anythread_write.readback = 0xc0; /* took, bit dropped */
	HT_CHECK_NO_MATCH(&o, "XEN-ANYTHREAD-RESERVED", "did not fault");
	o.anythread_write.vector = X86_VEC_UD;
	HT_CHECK_NO_MATCH(&o, "XEN-ANYTHREAD-RESERVED", "vector 6");
	o.anythread_write.vector = X86_VEC_GP, o.anythread_write.msr = 0x38d;
	o.anythread_write.value = 1ull << 2;
	HT_CHECK_MATCH(&o, "XEN-FIXED-ANYTHREAD-RESERVED");
	o.anythread_write.msr = 0x186;
	HT_CHECK_MATCH(&o, "XEN-ANYTHREAD-RESERVED");
	o.pc = kvm_intel();
	HT_CHECK_NO_MATCH(&o, "XEN-ANYTHREAD-RESERVED", NULL);
}

/* Xen's AMD vPMU (harness/xen_pvh.py): RDPMC is not intercepted, and
 * GuestOnly is set in every event select. */
HT_TEST(xen_amd_rows)
{
	const struct pmu_cpu *xen = cpu_as("AuthenticAMD", 0x00a00f11, "XenVMMXenVMM");
	struct dev_obs o = { .kind = DEV_OBS_RDPMC_ABSENT, .pc = xen };
	o.rdpmc_absent.vector = -1, o.rdpmc_absent.idx = 4, o.rdpmc_absent.gp_mask = 0xf;
	HT_CHECK_MATCH(&o, "XEN-SVM-RDPMC-NOT-INTERCEPTED");
	o.rdpmc_absent.idx = 5;
	HT_CHECK_MATCH(&o, "XEN-SVM-RDPMC-NOT-INTERCEPTED");
	o.rdpmc_absent.idx = 6; /* past the hardware's counters: silicon faults */
	HT_CHECK_NO_MATCH(&o, "XEN-SVM-RDPMC-NOT-INTERCEPTED", "past the 6 core counters");
	o.rdpmc_absent.idx = 4, o.rdpmc_absent.vector = 6;
	HT_CHECK_NO_MATCH(&o, "XEN-SVM-RDPMC-NOT-INTERCEPTED", "raised vector 6");
	o.rdpmc_absent.vector = -1;
	o.pc = cpu_as("AuthenticAMD", 0x00a00f11, kvm_sig);
	HT_CHECK_NO_MATCH(&o, "XEN-SVM-RDPMC-NOT-INTERCEPTED", "this is KVM");

	xen = cpu_as("AuthenticAMD", 0x00a00f11, "XenVMMXenVMM");
	o = (struct dev_obs){ .kind = DEV_OBS_HOST_GUEST_ONLY, .pc = xen };
	/* Seen under Xen 4.17: GuestOnly counts the loop, HostOnly Xen's work too. */
	o.host_guest_only = (struct dev_host_guest_only){
		.combo = 1, .read = 1, .count = 300003, .lo = 300002, .most = 300004
	};
	HT_CHECK_MATCH(&o, "XEN-AMD-GUESTONLY-FORCED");
	o.host_guest_only.combo = 2, o.host_guest_only.read = 3, o.host_guest_only.count = 305488;
	HT_CHECK_MATCH(&o, "XEN-AMD-GUESTONLY-FORCED");
	o.host_guest_only.count = 300001; /* under the loop */
	HT_CHECK_NO_MATCH(&o, "XEN-AMD-GUESTONLY-FORCED", "under a tenth more");
	o.host_guest_only.count = 340000; /* more than the hypervisor's work explains */
	HT_CHECK_NO_MATCH(&o, "XEN-AMD-GUESTONLY-FORCED", "under a tenth more");
	o.host_guest_only.count = 305488, o.host_guest_only.read = 2; /* GuestOnly not set */
	HT_CHECK_NO_MATCH(&o, "XEN-AMD-GUESTONLY-FORCED", "read back 2");
	o.host_guest_only.combo = 1, o.host_guest_only.read = 1, o.host_guest_only.count = 0;
	HT_CHECK_NO_MATCH(&o, "XEN-AMD-GUESTONLY-FORCED", "as the plain counter does");
	o.host_guest_only.count = 300003;
	o.pc = cpu_as("AuthenticAMD", 0x00a00f11, NULL); /* bare metal: a FAIL */
	HT_CHECK_NO_MATCH(&o, "XEN-AMD-GUESTONLY-FORCED", "bare metal");
}

HT_TEST(vmware_cycles_in_the_hypervisor)
{
	const struct pmu_cpu *vmw = cpu_as("GenuineIntel", SKYLAKE, "VMwareVMware");
	struct dev_obs o = { .kind = DEV_OBS_CYCLE_SPLIT, .pc = vmw };
	o.cycle_split.busy = 300003, o.cycle_split.idle = 99, o.cycle_split.cycles = 308102;
	o.cycle_split.tolerance = 3145;
	HT_CHECK_MATCH(&o, "VMWARE-HYBRID-FREEZE-CYCLES-INCLUDE-VMM");
	o.cycle_split.cycles = 290000; /* fewer cycles than the split: not this */
	HT_CHECK_NO_MATCH(&o, "VMWARE-HYBRID-FREEZE-CYCLES-INCLUDE-VMM", "the row has more core cycles");
	o.cycle_split.cycles = 308102;
	o.pc = kvm_intel();
	HT_CHECK_NO_MATCH(&o, "VMWARE-HYBRID-FREEZE-CYCLES-INCLUDE-VMM", "this is KVM");
}

HT_TEST(kvm_extra_empty_pmi)
{
	struct dev_obs o = { .kind = DEV_OBS_PMIS, .pc = kvm_intel() };
	o.pmis.overflows = 1, o.pmis.pmis = 2, o.pmis.spurious = 1;
	HT_CHECK_MATCH(&o, "KVM-PMI-DUPLICATE-OR-SPURIOUS");
	o.pmis.overflows = 20, o.pmis.pmis = 40, o.pmis.spurious = 20; /* one per overflow */
	HT_CHECK_MATCH(&o, "KVM-PMI-DUPLICATE-OR-SPURIOUS");
	o.pmis.overflows = 1, o.pmis.pmis = 3, o.pmis.spurious = 2;
	HT_CHECK_NO_MATCH(&o, "KVM-PMI-DUPLICATE-OR-SPURIOUS", "1 per overflow at most");
	o.pmis.pmis = 1, o.pmis.spurious = 1; /* the real PMI is missing */
	HT_CHECK_NO_MATCH(&o, "KVM-PMI-DUPLICATE-OR-SPURIOUS", "0 PMIs found a status bit for 1");
	o.pmis.pmis = 2, o.pmis.spurious = 0, o.pmis.unclaimed = 1; /* an extra one with a status */
	HT_CHECK_NO_MATCH(&o, "KVM-PMI-DUPLICATE-OR-SPURIOUS", "no counter of ours");
}

HT_TEST(kvm_lvtpc_not_masked_at_pmi)
{
	struct dev_obs o = { .kind = DEV_OBS_LVT_AT_PMI, .pc = kvm_intel() };
	o.lvt_at_pmi.lvt = 0xf1, o.lvt_at_pmi.programmed = 0xf1;
	HT_CHECK_MATCH(&o, "KVM-LVTPC-NOT-MASKED-ON-PMI");
	o.lvt_at_pmi.lvt = 0xf1 | 1u << 12; /* delivery status pending: still the row */
	HT_CHECK_MATCH(&o, "KVM-LVTPC-NOT-MASKED-ON-PMI");
	o.lvt_at_pmi.lvt = 0xf2; /* another vector is no match */
	HT_CHECK_NO_MATCH(&o, "KVM-LVTPC-NOT-MASKED-ON-PMI", "exactly as programmed");
	o.lvt_at_pmi.lvt = 0xf1;
	o.pc = cpu_as("GenuineIntel", SKYLAKE, NULL); /* bare metal: a FAIL */
	HT_CHECK(match(&o) == NULL, "bare metal matched %s", match(&o));
}

HT_TEST(fingerprints_name_a_figure)
{
	struct dev_obs o = { .kind = DEV_OBS_GLOBAL_CTRL_BOOT, .pc = kvm_intel() };
	o.global_ctrl_boot.gp_mask = 0xf, o.global_ctrl_boot.fixed_mask = 0x7;
	const struct deviation *d = dev_fingerprint(&o);
	HT_CHECK_STR(d ? d->id : NULL, "QEMU-GLOBAL-CTRL-RESET-ZERO");
	o.global_ctrl_boot.value = 0x70000000full;
	d = dev_fingerprint(&o);
	HT_CHECK_STR(d ? d->id : NULL, "KVM-PRE60-GLOBAL-CTRL-RESET-GP-AND-FIXED");
	o.global_ctrl_boot.value = 0xf; /* the SDM's: nothing to name */
	HT_CHECK(dev_fingerprint(&o) == NULL, "the RESET value is no fingerprint");
	o.global_ctrl_boot.value = 0;
	o.pc = cpu_as("GenuineIntel", SKYLAKE, "XenVMMXenVMM");
	d = dev_fingerprint(&o);
	HT_CHECK_STR(d ? d->id : NULL, "XEN-GLOBAL-CTRL-RESET-ZERO");
	/* A fingerprint is never a verdict. */
	HT_CHECK(dev_match(&o, NULL, NULL) == NULL, "no XFAIL row for a boot value");

	/* A write past a fixed counter's width: the SDM's #GP, or KVM's
	 * truncation as an XFAIL; kept bits, or truncation on bare metal, fail. */
	o = (struct dev_obs){ .kind = DEV_OBS_WIDE_WRITE, .pc = kvm_intel() };
	o.wide_write.vector = -1, o.wide_write.value = 1ull << 48, o.wide_write.width = 48;
	HT_CHECK_MATCH(&o, "KVM-FIXED-CTR-WIDE-WRITE-TRUNCATED");
	HT_CHECK(dev_fingerprint(&o) == NULL, "truncation is a verdict, not a fingerprint");
	o.wide_write.readback = 1ull << 48; /* kept the bit: not KVM's */
	HT_CHECK_NO_MATCH(&o, "KVM-FIXED-CTR-WIDE-WRITE-TRUNCATED", "read back");
	o.wide_write.readback = 0;
	o.pc = cpu_as("GenuineIntel", SKYLAKE, NULL);
	HT_CHECK_NO_MATCH(&o, "KVM-FIXED-CTR-WIDE-WRITE-TRUNCATED", "bare metal");

	o = (struct dev_obs){ .kind = DEV_OBS_RESERVED_WRITE,
			      .pc = cpu_as("AuthenticAMD", 0x00a00f11, NULL) };
	o.reserved_write.vector = -1;
	d = dev_fingerprint(&o);
	HT_CHECK_STR(d ? d->id : NULL, "AMD-RESERVED-BITS-NO-GP");
	o.reserved_write.vector = X86_VEC_GP;
	HT_CHECK(dev_fingerprint(&o) == NULL, "a #GP is no fingerprint");
}

/* The host model has the hypervisors' behaviours as emu/model quirks: on a
 * model CPU with KVM's signature and KVM's quirks, what the driver's
 * registers show is what the rows match; the same CPU without the quirks
 * (silicon as the SDM has it) shows nothing a row names. */
static const struct pmu_cpu *model_kvm_cpu(uint32_t quirks)
{
	struct model_cpu_config cfg = *(model_init(MODEL_V4, true), model_config(0));
	cfg.hypervisor = true;
	cfg.hv_sig[0] = kvm_sig;
	cfg.quirks = quirks;
	model_init_custom(&cfg, 1);
	pmu_cpu_init(NULL);
	return pmu_cpu_of(0);
}

static struct dev_obs fast_rdpmc_seen(const struct pmu_cpu *pc)
{
	struct dev_obs o = { .kind = DEV_OBS_FAST_RDPMC, .pc = pc };
	uint64_t v = 0;

	o.fast_rdpmc.counter = 0xffffa5a5a5a5ull; /* bit 31 set, 48 bits */
	pmu_hw_wrmsr(MSR_IA32_A_PMC0, o.fast_rdpmc.counter);
	int vec = pmu_hw_rdpmc(PMU_RDPMC_FAST | 0, &v);
	o.fast_rdpmc.vector = vec ? vec : -1;
	o.fast_rdpmc.value = v;
	return o;
}

static struct dev_obs wide_write_seen(const struct pmu_cpu *pc)
{
	struct dev_obs o = { .kind = DEV_OBS_WIDE_WRITE, .pc = pc };
	uint64_t v = 0;

	o.wide_write.width = pc->caps.fixed_width;
	o.wide_write.value = pmu_width_mask(o.wide_write.width) | 1ull << o.wide_write.width;
	pmu_hw_wrmsr(MSR_IA32_FIXED_CTR0, 0);
	int vec = pmu_hw_wrmsr(MSR_IA32_FIXED_CTR0, o.wide_write.value);
	pmu_hw_rdmsr(MSR_IA32_FIXED_CTR0, &v);
	o.wide_write.vector = vec ? vec : -1;
	o.wide_write.readback = v;
	return o;
}

static struct dev_obs boot_seen(const struct pmu_cpu *pc)
{
	struct dev_obs o = { .kind = DEV_OBS_GLOBAL_CTRL_BOOT, .pc = pc };

	o.global_ctrl_boot.value = pc->inuse.global_ctrl;
	o.global_ctrl_boot.gp_mask = pc->caps.gp_mask;
	o.global_ctrl_boot.fixed_mask = pc->caps.fixed_mask;
	return o;
}

HT_TEST(model_quirks_show_what_the_rows_match)
{
	const struct pmu_cpu *pc = model_kvm_cpu(X86PMU_QUIRK_KVM_FAST_RDPMC_ALLOWED |
						 X86PMU_QUIRK_KVM_FIXED_CTR_WRITE_TRUNCATED |
						 X86PMU_QUIRK_GLOBAL_CTRL_RESET_ZERO);
	struct dev_obs o = fast_rdpmc_seen(pc);
	HT_CHECK_EQ(o.fast_rdpmc.vector, -1);
	HT_CHECK_MATCH(&o, "KVM-PRE69-FAST-RDPMC-LOW32");
	o = wide_write_seen(pc);
	HT_CHECK_MATCH(&o, "KVM-FIXED-CTR-WIDE-WRITE-TRUNCATED");
	o = boot_seen(pc);
	const struct deviation *d = dev_fingerprint(&o);
	HT_CHECK_STR(d ? d->id : NULL, "QEMU-GLOBAL-CTRL-RESET-ZERO");

	/* The SDM's PMU behind the same signature: #GP, #GP, the RESET value. */
	pc = model_kvm_cpu(0);
	o = fast_rdpmc_seen(pc);
	HT_CHECK_EQ(o.fast_rdpmc.vector, X86_VEC_GP);
	o = wide_write_seen(pc);
	HT_CHECK_EQ(o.wide_write.vector, X86_VEC_GP);
	HT_CHECK(dev_fingerprint(&o) == NULL, "a #GP is no fingerprint");
	o = boot_seen(pc);
	HT_CHECK_EQ(o.global_ctrl_boot.value, pc->caps.gp_mask);
	HT_CHECK(dev_fingerprint(&o) == NULL, "the RESET value is no fingerprint");
}

/* The table's own rules: stable IDs, one line each, every field given. */
HT_TEST(table_rules)
{
	for (unsigned i = 0; i < DEV_ROWS; i++) {
		const struct deviation *d = &dev_table[i];
		HT_CHECK(d->id && d->seen && d->source && d->differs, "row %u complete", i);
		if (!d->id)
			continue;
		for (const char *p = d->id; *p; p++)
			HT_CHECK((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-',
				 "%s: IDs are upper case, digits and '-'", d->id);
		for (unsigned j = 0; j < i; j++)
			HT_CHECK(strcmp(dev_table[j].id, d->id) != 0, "%s twice", d->id);
		HT_CHECK(!strchr(d->seen, '\n') && !strchr(d->source, '\n') && !strchr(d->seen, '|') &&
				 !strchr(d->source, '|'),
			 "%s: one line, no table bar", d->id);
		HT_CHECK(!strstr(d->seen, "(source: "), "%s: the log's source marker stays unique", d->id);
		HT_CHECK(d->obs < DEV_OBS_NR && d->on.hv != 0, "%s: an observation and a platform", d->id);
	}
}

HT_TEST(platform_text)
{
	char buf[256];
	HT_CHECK_STR(dev_platform_text(&dev_table[DEV_KVM_PRE69_FAST_RDPMC_LOW32], buf, sizeof(buf)),
		     "KVM or a hypervisor without a signature; Intel");
	HT_CHECK_STR(dev_platform_text(&dev_table[DEV_SRF7], buf, sizeof(buf)),
		     "any hypervisor; Intel, family 6 models 0x4d, 0x5f, 0x86, 0xaf, 0xdd");
	HT_CHECK_STR(dev_platform_text(&dev_table[DEV_AMD_RESERVED_BITS_NO_GP], buf, sizeof(buf)),
		     "bare metal or any hypervisor; AMD or Hygon");
	char tiny[8];
	HT_CHECK_STR(dev_platform_text(&dev_table[DEV_SRF7], tiny, sizeof(tiny)), "any hyp");
}

/* The "Known deviations" table of docs/operating.md is the code's, row
 * for row: a changed row prints the line the docs must have. Run from the
 * repository's top (make host-test). */
static void readme_row(const struct deviation *d, char *buf, size_t n)
{
	char plat[256];
	snprintf(buf, n, "| `%s` | %s | %s | %s | %s |", d->id,
		 d->verdict == DEV_XFAIL ? "XFAIL" : "reported", d->seen,
		 dev_platform_text(d, plat, sizeof(plat)), d->source);
}

HT_TEST(readme_table_is_the_code_table)
{
	static char text[1 << 18];
	FILE *f = fopen("docs/operating.md", "r");
	if (!f) {
		HT_SKIP("docs/operating.md not found: run from the repository's top");
		return;
	}
	size_t len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = '\0';
	const char *start = strstr(text, "\n| ID | verdict | seen | platform | source |\n");
	HT_CHECK(start != NULL, "docs/operating.md has the known-deviations table header");
	if (!start)
		return;
	start = strchr(start + 1, '\n') + 1;
	start = strchr(start, '\n') + 1; /* past the |---| line */
	unsigned rows = 0;
	for (const char *line = start; *line == '|'; line = strchr(line, '\n') + 1, rows++) {
		char want[2048];
		size_t l = (size_t)(strchr(line, '\n') - line);
		if (rows >= DEV_ROWS) {
			HT_CHECK(false, "docs/operating.md row %u has no row in the code: %.*s", rows, (int)l,
				 line);
			continue;
		}
		readme_row(&dev_table[rows], want, sizeof(want));
		HT_CHECK(strlen(want) == l && strncmp(line, want, l) == 0,
			 "docs/operating.md row %u must be:\n%s\n     is:\n%.*s", rows, want, (int)l, line);
	}
	for (unsigned i = rows; i < DEV_ROWS; i++) {
		char want[2048];
		readme_row(&dev_table[i], want, sizeof(want));
		HT_CHECK(false, "docs/operating.md lacks row %u:\n%s", i, want);
	}
}

HT_MAIN("deviations")
