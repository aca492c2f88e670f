/* Whether a given hypervisor runs this CPU, through the kernel's CPUID
 * (arch/x86/hv_identify.c reads the signatures). */
#include "arch/x86/hypervisor.h"

#include "arch/x86/cpu.h"

bool hypervisor_is(enum hv hv)
{
	char sig[13];

	if (!(cpuid(1).ecx & BIT(CPUID_1_ECX_HYPERVISOR_BIT)))
		return false;
	for (uint32_t leaf = HV_LEAF_FIRST; leaf <= HV_LEAF_NEXT; leaf += HV_LEAF_NEXT - HV_LEAF_FIRST)
		if (hv_at(cpuid_count, leaf, sig) == hv)
			return true;
	return false;
}
