/* The AMD CPUs of the host PMU model: profiles of the legacy,
 * PerfCtrExtCore and PerfMonV2 layouts and of a KVM guest without a
 * virtual PMU, as tests/host/pmu_model.c configurations. Their registers
 * and counting are emu/model's AMD part (APM vol. 2, 13.2 "Performance
 * Monitoring Counters"; vol. 3 RDPMC and CPUID), the same code QEMU runs:
 * PerfEvtSel reserved bits #GP, HostOnly/GuestOnly count by EFER.SVME,
 * PerfCntrGlobalStatusSet sets, LbrAndPmcFreeze freezes. */
#include "tests/host/pmu_model_amd.h"

#include <string.h>

/* Signatures: 0x00000f51 K8 (family 0Fh model 5), 0x00100f22 Barcelona
 * (10h), 0x00600f12 Bulldozer (15h), 0x00800f12 EPYC 7001 (17h model 1,
 * what QEMU's -cpu EPYC reports), 0x00a10f11 Genoa (19h model 11h). */
struct model_amd_config model_amd_profile_config(enum model_amd_profile p)
{
	struct model_amd_config c = { .vendor = "AuthenticAMD" };

	switch (p) {
	case MODEL_AMD_K8: c.signature = 0x00000f51; break;
	case MODEL_AMD_LEGACY: c.signature = 0x00100f22; break;
	case MODEL_AMD_EXTCORE: c.signature = 0x00600f12, c.ext_core = true; break;
	case MODEL_AMD_PERFMON_V2:
		c.signature = 0x00a10f11, c.ext_core = true, c.perfmon_v2 = true, c.v2_counters = 6;
		c.svm = true;
		break;
	case MODEL_AMD_KVM_HERE:
		c.signature = 0x00800f12, c.hypervisor = true, c.ignores_writes = true;
		break;
	case MODEL_AMD_PROFILE_NR: break;
	}
	return c;
}

const char *model_amd_profile_name(enum model_amd_profile p)
{
	static const char *const names[MODEL_AMD_PROFILE_NR] = {
		[MODEL_AMD_K8] = "amd-k8",
		[MODEL_AMD_LEGACY] = "amd-legacy",
		[MODEL_AMD_EXTCORE] = "amd-extcore",
		[MODEL_AMD_PERFMON_V2] = "amd-perfmon-v2",
		[MODEL_AMD_KVM_HERE] = "amd-kvm-here",
	};
	return p < MODEL_AMD_PROFILE_NR ? names[p] : "?";
}

/* Leaves 02h-0Dh hold nothing PMU-related on AMD (0Ah is reserved, zero);
 * the extended leaves reach Fn8000_0022 with PerfMonV2. KVM-here: the
 * legacy PerfEvtSel/PerfCtr take writes and read 0 (the harness's
 * ignores_writes), the extended ones #GP (no PerfCtrExtCore in CPUID), and
 * RDPMC #GPs. */
static struct model_cpu_config cpu_config(const struct model_amd_config *a)
{
	struct model_cpu_config c = {
		.vendor = a->vendor,
		.signature = a->signature,
		.hypervisor = a->hypervisor,
		.max_leaf = 0x0d,
		.max_ext_leaf = a->perfmon_v2 ? 0x80000022u : 0x8000001eu,
		.amd_ext_core = a->ext_core,
		.amd_perfmon_v2 = a->perfmon_v2,
		.amd_lbr_pmc_freeze = a->lbr_pmc_freeze,
		.amd_counters = a->v2_counters,
		.svm = a->svm,
		.ignores_writes = a->ignores_writes,
		.rdpmc_gp = a->ignores_writes,
	};
	return c;
}

void model_amd_init_custom(const struct model_amd_config *cfgs, unsigned n)
{
	struct model_cpu_config mc[MODEL_MAX_CPUS];

	if (n > MODEL_MAX_CPUS)
		n = MODEL_MAX_CPUS;
	if (n == 0)
		n = 1;
	memset(mc, 0, sizeof(mc));
	for (unsigned c = 0; c < n; c++)
		mc[c] = cpu_config(&cfgs[c]);
	model_init_custom(mc, n);
}

void model_amd_init(enum model_amd_profile p, unsigned n)
{
	struct model_amd_config cfgs[MODEL_MAX_CPUS];

	for (unsigned c = 0; c < MODEL_MAX_CPUS; c++)
		cfgs[c] = model_amd_profile_config(p);
	model_amd_init_custom(cfgs, n);
}
