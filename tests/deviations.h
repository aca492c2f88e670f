/* Known deviations: where a hypervisor's virtual PMU, or a silicon erratum,
 * is documented to do other than the SDM/APM say. One table
 * (tests/deviations.c), one row per deviation. A check that fails hands
 * over what it observed; a row whose platform and observation both match
 * turns the failure into an XFAIL naming the row, a row that matches in
 * part is reported as a near miss and the check stays a FAIL. Fingerprint
 * rows name a figure a check reports and never asserts (a boot value, what
 * a write the manual leaves open did). Host-built as it is: no kernel code. */
#ifndef TESTS_DEVIATIONS_H
#define TESTS_DEVIATIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/pmu.h"

/* What a check measured, by kind. */
enum dev_obs_kind {
	DEV_OBS_CMASK255,         /* an instructions counter with CMASK=255, at two loop lengths */
	DEV_OBS_FAST_RDPMC,       /* RDPMC with ECX[31] of a counter holding a known value */
	DEV_OBS_RETIRED,          /* an exact instructions/branches count, measured differentially */
	DEV_OBS_QUIET_OVERFLOW,   /* an overflow with INT/PMI clear: GLOBAL_STATUS afterwards */
	DEV_OBS_PMI_OVERFLOW,     /* an overflow with a PMI: its count against a reference counter */
	DEV_OBS_PMIS,             /* PMIs the handler took for the overflows of a window */
	DEV_OBS_CYCLE_SPLIT,      /* cycles retiring >= 1 and retiring 0 against core cycles */
	DEV_OBS_GLOBAL_CTRL_BOOT, /* IA32_PERF_GLOBAL_CTRL as the kernel found it (fingerprint) */
	DEV_OBS_WIDE_WRITE,       /* a fixed-counter write past its width (fingerprint) */
	DEV_OBS_RESERVED_WRITE,   /* a control write with a reserved bit set (fingerprint) */
	DEV_OBS_LVT_AT_PMI,       /* the LVT performance-counter entry when the PMI handler starts */
	DEV_OBS_RDPMC_ABSENT,     /* RDPMC of a GP counter CPUID does not give */
	DEV_OBS_HOST_GUEST_ONLY,  /* an AMD counter with HostOnly/GuestOnly written, read back and counted */
	DEV_OBS_ANYTHREAD_WRITE,  /* an Intel control write with AnyThread set where the PMU defines it */
	DEV_OBS_NR
};

struct dev_obs {
	enum dev_obs_kind kind;
	/* The CPU it was seen on: its caps (vendor, family/model, hypervisor)
	 * are the platform the rows match. */
	const struct pmu_cpu *pc;
	union {
		/* Counts at the short and the long loop length. */
		struct {
			uint64_t count[2];
		} cmask255;
		/* vector: -1 when RDPMC did not fault; counter: what it held. */
		struct {
			int vector;
			uint64_t value, counter;
		} fast_rdpmc;
		/* The count at the short length minus the workload and the
		 * bracket's MOVs (the bracket's intercept: for instructions the
		 * WRMSRs counted, w), the plausible most of it (2 instructions,
		 * 0 branches), and the error of the difference between the two
		 * lengths against the workload's exact per-iteration count.
		 * intercepted: how many instructions of that difference a VMM
		 * may intercept, each a VM exit (the RDPMCs of a loop that
		 * reads a counter; 0 for the plain loop): the intercept is then
		 * what is left at length 0 once the slope, whatever it is, is
		 * taken off. */
		struct {
			bool branches;
			int64_t slope_error, intercept, intercept_max;
			int64_t intercepted;
		} retired;
		/* status_bit: the counter's GLOBAL_STATUS bit was set afterwards;
		 * count_exact: its count across the wrap was (so it wrapped). */
		struct {
			bool status_bit, count_exact;
		} quiet_overflow;
		/* The overflowing counter's count minus the reference counter's,
		 * both counting the same instructions in one window. */
		struct {
			int64_t excess;
		} pmi_overflow;
		/* Overflows handled, PMIs taken, PMIs that found GLOBAL_STATUS
		 * empty (spurious) and ones that found only bits of no counter
		 * of ours. */
		struct {
			uint64_t overflows, pmis, spurious, unclaimed;
		} pmis;
		/* Cycles retiring >= 1 (busy) and 0 (idle) instructions, core
		 * cycles, and the tolerance the check allows. */
		struct {
			uint64_t busy, idle, cycles, tolerance;
		} cycle_split;
		/* GLOBAL_CTRL at boot; the GP and fixed counter masks. */
		struct {
			uint64_t value;
			uint32_t gp_mask, fixed_mask;
		} global_ctrl_boot;
		/* vector -1: no fault; readback after it; the counter width. */
		struct {
			int vector;
			uint64_t value, readback;
			unsigned width;
		} wide_write;
		/* vector -1: no fault; the value written, the readback. */
		struct {
			int vector;
			uint64_t value, readback;
		} reserved_write;
		/* The entry as the handler found it, and as it was programmed. */
		struct {
			uint32_t lvt, programmed;
		} lvt_at_pmi;
		/* vector: -1 when RDPMC did not fault; the counter index and
		 * the GP counters CPUID gives. */
		struct {
			int vector;
			unsigned idx;
			uint32_t gp_mask;
		} rdpmc_absent;
		/* combo: the bits written (bit 0 GuestOnly, bit 1 HostOnly),
		 * read: as they read back; the guest's EFER.SVME; the count of
		 * the window and what the plain counter's would be (lo..most). */
		struct dev_host_guest_only {
			unsigned combo, read;
			bool svme;
			uint64_t count, lo, most;
		} host_guest_only;
		/* vector -1: no fault; the MSR, the value written, the
		 * readback (0 after a fault). */
		struct {
			int vector;
			uint32_t msr;
			uint64_t value, readback;
		} anythread_write;
	};
};

/* The rows, in the table's order (designated initializers keyed by this). */
enum dev_row {
	DEV_KVM_EMULATED_WRMSR_IGNORES_CMASK,
	DEV_KVM_PRE69_FAST_RDPMC_LOW32,
	DEV_AMD_SVM_VMRUN_COUNTED_IN_GUEST,
	DEV_SRF7,
	DEV_XEN_STATUS_ONLY_VIA_PMI,
	DEV_XEN_PMC_QUIRK_ZERO_BECOMES_ONE,
	DEV_VMWARE_HYBRID_FREEZE_CYCLES_INCLUDE_VMM,
	DEV_KVM_PMI_DUPLICATE_OR_SPURIOUS,
	DEV_XEN_SVM_RDPMC_NOT_INTERCEPTED,
	DEV_XEN_AMD_GUEST_ONLY_FORCED,
	DEV_KVM_PRE517_EMULATED_RDPMC_NOT_COUNTED,
	/* Fingerprints: reported, never a verdict. */
	DEV_QEMU_GLOBAL_CTRL_RESET_ZERO,
	DEV_XEN_GLOBAL_CTRL_RESET_ZERO,
	DEV_KVM_PRE60_GLOBAL_CTRL_RESET_GP_AND_FIXED,
	DEV_KVM_FIXED_CTR_WIDE_WRITE_TRUNCATED,
	DEV_AMD_RESERVED_BITS_NO_GP,
	DEV_KVM_LVTPC_NOT_MASKED_ON_PMI,
	DEV_XEN_ANYTHREAD_RESERVED,
	DEV_XEN_FIXED_ANYTHREAD_RESERVED,
	DEV_ROWS
};

/* Where a row is known: hypervisors as bits of enum pmu_hv. */
#define DEV_HV(hv) (1u << (hv))
#define DEV_HV_ANY_GUEST (~DEV_HV(PMU_HV_NONE) & (DEV_HV(PMU_HV_NR) - 1))
/* KVM, or a guest that hides which hypervisor it is (QEMU's kvm=off). */
#define DEV_HV_KVM_OR_HIDDEN (DEV_HV(PMU_HV_KVM) | DEV_HV(PMU_HV_HIDDEN))

struct dev_platform {
	uint32_t hv;            /* DEV_HV() bits; never 0 */
	enum pmu_vendor vendor; /* PMU_VENDOR_UNKNOWN: any */
	uint32_t intel_errata;  /* INTEL_ERRATUM_* the model must have (pmu/intel/models.c), or 0 */
};

enum dev_verdict {
	DEV_XFAIL,       /* a failed check that matches is XFAIL */
	DEV_FINGERPRINT, /* a reported figure that matches is named, nothing more */
};

/* A Linux version as one number, X.Y.Z (each part at most 255). */
#define DEV_LINUX_VERSION(x, y, z) ((uint32_t)(x) << 16 | (uint32_t)(y) << 8 | (uint32_t)(z))

struct deviation {
	const char *id;     /* stable: an erratum's name or ours, upper case */
	const char *seen;   /* what is observed, one line */
	const char *source; /* erratum, commit, file or vendor document */
	enum dev_verdict verdict;
	enum dev_obs_kind obs;
	struct dev_platform on;
	/* NULL when o shows what the row describes; else, into buf, how it
	 * differs (the near miss's reason). o->kind is the row's. */
	const char *(*differs)(const struct dev_obs *o, char *buf, size_t n);
	/* A KVM bug: the first Linux release with the fix, and its commit. A
	 * guest cannot see its host's KVM, but the runner that boots it under
	 * local KVM can (hv.kernel=, dev_set_host_kernel): on a host at or past
	 * fixed_in the row does not match, and the check FAILs. 0: not scoped. */
	uint32_t fixed_in;
	const char *fixed_by;
};

/* The host's Linux version (DEV_LINUX_VERSION) when known, else 0:
 * boot passes hv.kernel= here. */
void dev_set_host_kernel(uint32_t version);

extern const struct deviation dev_table[DEV_ROWS];

/* Called for each row that matched o only in part, with why not. */
typedef void (*dev_near_fn)(void *ctx, const struct deviation *d, const char *why);

/* The XFAIL row o matches (platform and observation), or NULL; near
 * misses go to near (may be NULL). Fingerprint rows are not considered. */
const struct deviation *dev_match(const struct dev_obs *o, dev_near_fn near, void *ctx);
/* The same for fingerprint rows. */
const struct deviation *dev_fingerprint(const struct dev_obs *o);

/* What o shows, one line, for a result's "XFAIL ID: <what was seen>". */
const char *dev_describe(const struct dev_obs *o, char *buf, size_t n);
/* The row's platform in words ("KVM or a hypervisor without a signature;
 * Intel"), for the report and the table in docs/operating.md. */
const char *dev_platform_text(const struct deviation *d, char *buf, size_t n);

/* The row's index in dev_table. */
static inline unsigned dev_index(const struct deviation *d)
{
	return (unsigned)(d - dev_table);
}

#endif
