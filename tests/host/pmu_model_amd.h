/* The AMD CPUs of the host PMU model (tests/host/pmu_model.c): profiles of
 * AMD's counter layouts, whose registers are emu/model's AMD part. */
#ifndef TESTS_HOST_PMU_MODEL_AMD_H
#define TESTS_HOST_PMU_MODEL_AMD_H

#include <stdbool.h>
#include <stdint.h>

#include "tests/host/pmu_model.h"

enum model_amd_profile {
	MODEL_AMD_K8,         /* family 0Fh: 4 legacy counters, 8-bit event selects */
	MODEL_AMD_LEGACY,     /* family 10h: PerfEvtSel0-3 / PerfCtr0-3 at 0xC0010000-7 */
	MODEL_AMD_EXTCORE,    /* family 15h: PerfCtrExtCore, 6 counters at 0xC0010200 + 2n */
	MODEL_AMD_PERFMON_V2, /* family 19h: ExtCore + PerfMonV2, 6 counters, global ctl/status/clr/set */
	MODEL_AMD_KVM_HERE,   /* family 17h guest of a KVM without vPMU: legacy MSRs take writes
			       * and read 0, extended MSRs #GP, RDPMC #GP */
	MODEL_AMD_PROFILE_NR
};

struct model_amd_config {
	const char *vendor;  /* "AuthenticAMD" or "HygonGenuine" */
	uint32_t signature;  /* CPUID Fn0000_0001_EAX */
	bool hypervisor;     /* CPUID Fn0000_0001_ECX[31] */
	bool ext_core;       /* CPUID Fn8000_0001_ECX[23] PerfCtrExtCore */
	bool perfmon_v2;     /* CPUID Fn8000_0022_EAX[0] */
	bool lbr_pmc_freeze; /* CPUID Fn8000_0022_EAX[2] */
	uint8_t v2_counters; /* CPUID Fn8000_0022_EBX[3:0] */
	bool svm;            /* CPUID Fn8000_0001_ECX[2] */
	bool ignores_writes; /* legacy MSRs drop writes and read 0; RDPMC #GP (KVM, no vPMU) */
};

#define MODEL_AMD_WIDTH 48

/* The configuration of a profile, and resets to it (or to explicit
 * configurations) on ncpus CPUs through model_init_custom. */
struct model_amd_config model_amd_profile_config(enum model_amd_profile p);
const char *model_amd_profile_name(enum model_amd_profile p);
void model_amd_init(enum model_amd_profile p, unsigned ncpus);
void model_amd_init_custom(const struct model_amd_config *cfgs, unsigned ncpus);

#endif
