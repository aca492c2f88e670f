/* AMD's last branch records: LbrExtV2 (CPUID Fn8000_0022), decoded into
 * struct pmu_lbr_caps for pmu/lbr.c, and its records (the backend's
 * pmu_lbr_ops). Sources: APM vol. 2 and Linux arch/x86/events/amd/lbr.c. */
#include "pmu/amd/amd.h"

#include "arch/x86/cpuid.h"
#include "arch/x86/msr.h"
#include "lib/bits.h"
#include "lib/printf.h"
#include "pmu/lbr.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"

static void amd_lbr_decode(const struct pmu_caps *c, struct pmu_lbr_caps *l)
{
	(void)c;
	struct cpuid_regs r;

	pmu_hw_cpuid(0x80000000, 0, &r);
	if (r.eax < 0x80000022) {
		ksnprintf(l->why, sizeof(l->why),
			  "CPUID Fn8000_0022 absent (max extended leaf %#x): no LbrExtV2", r.eax);
		return;
	}
	pmu_hw_cpuid(0x80000022, 0, &r);
	if (!((r.eax >> CPUID_80000022_EAX_LBR_EXT_V2_BIT) & 1)) {
		ksnprintf(l->why, sizeof(l->why), "CPUID Fn8000_0022_EAX[1] (LbrExtV2)=0 (EAX %#x)", r.eax);
		return;
	}
	l->depth = (r.ebx & CPUID_80000022_EBX_LBR_DEPTH_MASK) >> CPUID_80000022_EBX_LBR_DEPTH_SHIFT;
	if (!l->depth || l->depth > 32) {
		ksnprintf(l->why, sizeof(l->why),
			  "LbrExtV2 with %u entries (CPUID Fn8000_0022_EBX[9:4], EBX %#x)", l->depth, r.ebx);
		return;
	}
	l->from_msr = MSR_AMD_LBR_FROM_0;
	l->to_msr = MSR_AMD_LBR_TO_0;
	l->stride = 2;
	l->select_msr = MSR_AMD_LBR_SELECT;
	l->ctl_msr = MSR_AMD_DBG_EXTN_CFG;
	l->ctl_enable = BIT(AMD_DBG_EXTN_CFG_LBRV2EN_BIT);
	l->cpl_filter = l->type_filter = true;
	l->kind = PMU_LBR_EXTV2;
}

/* FROM 57:0 address, 63 mispredicted; TO 57:0 address, 62 speculative,
 * 63 valid (Linux amd/lbr.c, struct branch_entry). */
static struct pmu_lbr_entry amd_lbr_entry(const struct pmu_lbr_caps *l, uint64_t from, uint64_t to,
					  uint64_t info)
{
	(void)l;
	(void)info;
	return (struct pmu_lbr_entry){
		.from = sign_extend64(from, 58),
		.to = sign_extend64(to, 58),
		.info = 0,
		.mispred = (from >> AMD_LBR_FROM_MISPRED_BIT) & 1,
		.valid = (to >> AMD_LBR_TO_VALID_BIT) & 1,
	};
}

static const char *amd_lbr_kind_name(unsigned kind)
{
	(void)kind;
	return "AMD LbrExtV2";
}

const struct pmu_lbr_ops amd_lbr_ops = {
	.kinds = BIT(PMU_LBR_EXTV2),
	.kind_name = amd_lbr_kind_name,
	.decode = amd_lbr_decode,
	.entry = amd_lbr_entry,
};
