/* Whether a given hypervisor runs this CPU, through the kernel's CPUID
 * (arch/x86/hv_identify.c reads the signatures). */
#include "arch/x86/hypervisor.h"

#include "arch/x86/cpu.h"

bool hypervisor_is(enum hv hv)
{
	char sig[13];

	if (!(cpuid(1).ecx & BIT(CPUID_1_ECX_HYPERVISOR_BIT)))
		return false;
	/* The first two blocks: its own, or its own after another's. */
	for (uint32_t leaf = CPUID_HV_LEAF_FIRST; leaf <= CPUID_HV_LEAF_FIRST + CPUID_HV_LEAF_STEP;
	     leaf += CPUID_HV_LEAF_STEP)
		if (hv_at(cpuid_count, leaf, sig) == hv)
			return true;
	return false;
}
