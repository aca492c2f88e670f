/* The vPMU model from the cost map. CPUID is the yardstick: an
 * unconditional VM exit under VMX, intercepted by KVM on SVM too, so an
 * access "near CPUID" exits and one "near RDTSC" does not. What each model
 * intercepts: KVM's default vPMU backs every counter with a host perf event
 * and traps RDPMC and every PMU MSR (Linux arch/x86/kvm/pmu.c); the mediated
 * vPMU (Linux 7.0, kvm.enable_mediated_pmu) passes the counter MSRs and
 * RDPMC through and keeps the event selects trapped. */
#include "tests/pmu/vpmu_model.h"

/* An access exits when it costs at least half a CPUID, and does not when
 * it costs under a quarter; between the two the map says nothing. */
static bool exits(uint64_t t, uint64_t cpuid)
{
	return 2 * t >= cpuid;
}

static bool stays(uint64_t t, uint64_t cpuid)
{
	return 4 * t < cpuid;
}

enum vpmu_model vpmu_model_of(const struct vpmu_costs *c)
{
	if (!c->hypervisor)
		return VPMU_NONE;
	/* CPUID must itself stand out from RDTSC to be a yardstick (under
	 * TCG nothing exits and every row is an emulator's helper). */
	if (!stays(c->rdtsc, c->cpuid))
		return VPMU_UNKNOWN;
	bool ctr_exit = exits(c->rdpmc, c->cpuid) && exits(c->rdmsr_counter, c->cpuid);
	bool ctr_stay = stays(c->rdpmc, c->cpuid) && stays(c->rdmsr_counter, c->cpuid);
	if (ctr_exit && exits(c->rdmsr_evtsel, c->cpuid))
		return VPMU_EMULATED;
	if (ctr_stay && exits(c->rdmsr_evtsel, c->cpuid))
		return VPMU_MEDIATED;
	if (ctr_stay && stays(c->rdmsr_evtsel, c->cpuid))
		return VPMU_PASSTHROUGH;
	return VPMU_UNKNOWN;
}

const char *vpmu_model_name(enum vpmu_model m)
{
	switch (m) {
	case VPMU_NONE: return "none";
	case VPMU_EMULATED: return "emulated";
	case VPMU_MEDIATED: return "mediated";
	case VPMU_PASSTHROUGH: return "passthrough";
	case VPMU_UNKNOWN: break;
	}
	return "unknown";
}
