/* Which hypervisor runs us: the signature of the first two CPUID
 * hypervisor leaf blocks, asked only when CPUID.01H:ECX[31] is set (on
 * bare metal those leaves return another leaf's data, SDM vol. 2A,
 * CPUID: "If a value entered for CPUID.EAX is higher than the maximum"). */
#include "arch/x86/hypervisor.h"

#include "arch/x86/cpu.h"

static const struct cpuid_regs hv_sigs[] = {
	[HV_TCG] = { 0, HV_SIG_TCG_EBX, HV_SIG_TCG_ECX, HV_SIG_TCG_EDX },
	[HV_KVM] = { 0, HV_SIG_KVM_EBX, HV_SIG_KVM_ECX, HV_SIG_KVM_EDX },
};

bool hypervisor_is(enum hv_kind kind)
{
	const struct cpuid_regs *want = &hv_sigs[kind];

	if (!(cpuid(1).ecx & BIT(CPUID_1_ECX_HYPERVISOR_BIT)))
		return false;
	for (uint32_t leaf = HV_LEAF_FIRST; leaf <= HV_LEAF_NEXT; leaf += HV_LEAF_NEXT - HV_LEAF_FIRST) {
		struct cpuid_regs r = cpuid(leaf);
		if (r.ebx == want->ebx && r.ecx == want->ecx && r.edx == want->edx)
			return true;
	}
	return false;
}
