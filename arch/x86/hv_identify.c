/* Which hypervisor runs us, by the signatures of its CPUID leaf blocks:
 * pure (the caller passes CPUID), so the kernel and the host tests run
 * the same code. The leaves are asked only when CPUID.01H:ECX[31] is set
 * (on bare metal they return another leaf's data, SDM vol. 2A, CPUID:
 * "If a value entered for CPUID.EAX is higher than the maximum"). */
#include "arch/x86/hypervisor.h"

#include "lib/bits.h"
#include "lib/string.h"

/* The same words as HV_SIG_* (boot/entry.S compares those). */
static const struct {
	char sig[13];
	enum hv hv;
} hv_signatures[] = {
	{ "KVMKVMKVM\0\0\0", HV_KVM }, { "XenVMMXenVMM", HV_XEN }, { "VMwareVMware", HV_VMWARE },
	{ "Microsoft Hv", HV_HYPERV }, { "TCGTCGTCGTCG", HV_TCG },
};

static const char *const hv_names[HV_NR] = {
	[HV_NONE] = "bare metal",
	[HV_HIDDEN] = "a hypervisor without a signature",
	[HV_OTHER] = "a hypervisor",
	[HV_KVM] = "KVM",
	[HV_XEN] = "Xen",
	[HV_VMWARE] = "VMware",
	[HV_HYPERV] = "Hyper-V",
	[HV_TCG] = "QEMU TCG",
};

const char *hv_name(enum hv hv)
{
	return (unsigned)hv < HV_NR ? hv_names[hv] : NULL;
}

static void put_reg(char *dst, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		dst[i] = (char)(v >> (8 * i));
}

enum hv hv_at(hv_cpuid_fn cpuid_fn, uint32_t leaf, char sig[13])
{
	struct cpuid_regs r;
	enum hv hv = HV_OTHER;

	cpuid_fn(leaf, 0, &r);
	put_reg(sig, r.ebx);
	put_reg(sig + 4, r.ecx);
	put_reg(sig + 8, r.edx);
	sig[12] = '\0';
	for (unsigned k = 0; k < ARRAY_LEN(hv_signatures); k++)
		if (memcmp(sig, hv_signatures[k].sig, 12) == 0)
			hv = hv_signatures[k].hv;
	return hv;
}

static bool printable_signature(const char sig[12])
{
	for (int i = 0; i < 12; i++)
		if (sig[i] && (sig[i] < 0x20 || sig[i] > 0x7e))
			return false;
	return sig[0] != 0;
}

/* How much a signature found at leaf says: a known hypervisor other than
 * Hyper-V most, then Hyper-V, then an unknown printable one in the first
 * block (a later unknown block is noise); 0 for nothing. */
static unsigned hv_rank(enum hv hv, uint32_t leaf, const char sig[12])
{
	if (hv == HV_HYPERV)
		return 2;
	if (hv != HV_OTHER)
		return 3;
	return leaf == CPUID_HV_LEAF_FIRST && printable_signature(sig) ? 1 : 0;
}

void hv_identify(bool hypervisor_bit, hv_cpuid_fn cpuid_fn, struct hv_id *id)
{
	unsigned best = 0;

	memset(id, 0, sizeof(*id));
	id->hv = hypervisor_bit ? HV_HIDDEN : HV_NONE;
	for (uint32_t leaf = CPUID_HV_LEAF_FIRST; hypervisor_bit && best < 3 && leaf <= CPUID_HV_LEAF_LAST;
	     leaf += CPUID_HV_LEAF_STEP) {
		char sig[13];
		enum hv hv = hv_at(cpuid_fn, leaf, sig);
		unsigned rank = hv_rank(hv, leaf, sig);
		if (rank > best) {
			best = rank;
			id->hv = hv;
			id->leaf = leaf;
			memcpy(id->signature, sig, sizeof(sig));
		}
	}
}
