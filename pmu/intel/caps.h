/* The Intel backend's own caps: what IA32_PERF_CAPABILITIES says (SDM
 * vol. 3B, "IA32_PERF_CAPABILITIES" and "Processor Event Based
 * Sampling"), the hybrid core type (CPUID.1AH), version 6's CPUID.23H and
 * the model table's offcore MSRs, kept in pmu_caps.vendor_caps, which the
 * core only zeroes and copies, and compares through intel_caps_same;
 * pmu/intel/caps.c prints them. Tests and modes read them through
 * intel_caps(), which gives zeros for another vendor's caps. */
#ifndef PMU_INTEL_CAPS_H
#define PMU_INTEL_CAPS_H

#include "pmu/pmu.h"

/* may_alias: it lives in the uint64_t words of pmu_caps.vendor_caps. */
struct __attribute__((may_alias)) intel_caps {
	bool pdcm;                 /* CPUID.01H:ECX[15]: IA32_PERF_CAPABILITIES exists */
	bool anythread_deprecated; /* CPUID.0AH:EDX[15] */
	bool full_width_write;     /* PERF_CAPABILITIES[13]: IA32_A_PMCx */
	bool perf_caps_valid;      /* IA32_PERF_CAPABILITIES was read */
	uint64_t perf_caps;
	unsigned lbr_format;  /* PERF_CAPABILITIES[5:0] */
	unsigned pebs_format; /* [11:8] */
	bool pebs_trap;       /* [6] */
	bool pebs_arch_regs;  /* [7] */
	bool pebs_baseline;   /* [14] */
	bool perf_metrics;    /* [15] */

	bool hybrid;           /* CPUID.07H.0:EDX[15] */
	unsigned core_type;    /* CPUID.1AH:EAX[31:24]: 0x20 Atom, 0x40 Core */
	uint32_t native_model; /* CPUID.1AH:EAX[23:0] */
	unsigned offcore_msrs; /* MSR_OFFCORE_RSP_x present (model table) */

	/* Version 6 and CPUID.23H (pmu/intel/v6.c). */
	bool leaf23;                      /* counter bitmaps came from CPUID.23H.1 */
	bool arch_perfmon_ext;            /* CPUID.(07H,1):EAX[8]: leaf 23H exists */
	uint32_t leaf23_valid;            /* 23.0 EAX: bit n = sub-leaf n valid */
	struct cpuid_regs leaf23_regs[6]; /* sub-leaves 0-5 as read (0 when not valid) */
	uint32_t v6_features;             /* 23.0 EBX: UMASK2, EQ, RDPMC user disable */
	uint64_t acr_reload;              /* 23.2 EAX | EBX << 32 (GLOBAL_CTRL layout) */
	uint64_t acr_cause;               /* 23.2 ECX | EDX << 32 */
	bool events_from_leaf23;          /* events_avail came from 23.3 EAX */
	bool v6_msrs;                     /* the counters are driven through 0x1900 + 4n */
};
_Static_assert(sizeof(struct intel_caps) <= sizeof(((struct pmu_caps *)0)->vendor_caps),
	       "struct intel_caps fits in pmu_caps.vendor_caps");

/* The Intel caps of c; all zero (no PERF_CAPABILITIES, not hybrid, no
 * leaf 23H) when c is another vendor's, whose words mean other things. */
static inline const struct intel_caps *intel_caps(const struct pmu_caps *c)
{
	static const struct intel_caps none;

	if (c->vendor != PMU_VENDOR_INTEL)
		return &none;
	return (const struct intel_caps *)(const void *)c->vendor_caps;
}
/* For the decode (pmu/intel/core.c) and the tests that build caps. */
static inline struct intel_caps *intel_caps_rw(struct pmu_caps *c)
{
	return (struct intel_caps *)(void *)c->vendor_caps;
}

#endif
