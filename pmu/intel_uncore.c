/* Client uncore driver: model table, detection (box count from
 * MSR_UNC_CBO_CONFIG), and the C-box program / enable / read sequence. */
#include "pmu/intel_uncore.h"

#include "arch/x86/cpuid.h"
#include "lib/bits.h"
#include "lib/printf.h"
#include "pmu/intel_models.h"
#include "pmu/pmu_hw.h"

/*
 * Register addresses, all package scope (SDM vol. 4, chapter 2, the MSR
 * tables of the 2nd generation Intel Core processors (Sandy Bridge), the
 * 3rd (Ivy Bridge), the 4th (Haswell, also listed for the 5th, Broadwell)
 * and the 6th-10th (Skylake, Kaby/Coffee/Comet Lake) generations; cross-
 * checked with Linux arch/x86/events/intel/uncore_snb.c):
 *   MSR_UNC_PERF_GLOBAL_CTRL   391H (Sandy Bridge .. Broadwell), E01H (Skylake on:
 *                              391H became IA32_PERF_GLOBAL_STATUS_SET of the
 *                              version-4 core PMU): [3:0] (Skylake [4:0]) PMI
 *                              core/slice select, 29 enable all, 30 wake on PMI,
 *                              31 freeze on overflow
 *   MSR_UNC_CBO_CONFIG         396H, read-only: [3:0] number of C-boxes; on
 *                              Haswell/Broadwell "encoded, derive value by -1"
 *   MSR_UNC_CBO_n_PERFEVTSEL0/1  700H/701H + 10H * n
 *   MSR_UNC_CBO_n_PERFCTR0/1     706H/707H + 10H * n (44 bits)
 */
#define SNB_CORE_SELECT_ALL 0xfull   /* [3:0] */
#define SKL_SLICE_SELECT_ALL 0x1full /* [4:0] */

static const struct pmu_uncore_model uncore_models[] = {
	/* SDM vol. 4, MSRs of 2nd/3rd generation Core processors (391H, 396H,
	 * 700H-737H); Linux uncore_snb.c. */
	{ "Sandy/Ivy Bridge client", INTEL_UARCHS(INTEL_SANDYBRIDGE) | INTEL_UARCHS(INTEL_IVYBRIDGE),
	  MSR_UNC_PERF_GLOBAL_CTRL, BIT(UNC_GLOBAL_EN_BIT) | SNB_CORE_SELECT_ALL, false, 4 },
	/* SDM vol. 4, MSRs of 4th generation Core processors (391H, 396H
	 * "derive value by -1", 700H-737H). */
	{ "Haswell/Broadwell client", INTEL_UARCHS(INTEL_HASWELL) | INTEL_UARCHS(INTEL_BROADWELL),
	  MSR_UNC_PERF_GLOBAL_CTRL, BIT(UNC_GLOBAL_EN_BIT) | SNB_CORE_SELECT_ALL, true, 4 },
	/* SDM vol. 4, uncore PMU MSRs of 6th-10th generation Core processors
	 * (E01H, 396H, 700H-767H). Eight-core Coffee Lake has its eighth
	 * C-box at other addresses (Linux UNCORE_BOX_FLAG_CFL8_CBOX_MSR_OFFS):
	 * the table stops at 7. */
	{ "Skylake..Comet Lake client", INTEL_UARCHS(INTEL_SKYLAKE), MSR_SKL_UNC_PERF_GLOBAL_CTL,
	  BIT(UNC_GLOBAL_EN_BIT) | SKL_SLICE_SELECT_ALL, false, 7 },
};

const struct pmu_uncore_model *pmu_uncore_model(const struct pmu_caps *c)
{
	const struct intel_model *m = intel_model_of(c);

	for (unsigned i = 0; m && !m->server && i < ARRAY_LEN(uncore_models); i++)
		if (intel_uarch_in(m->uarch, uncore_models[i].uarchs))
			return &uncore_models[i];
	return NULL;
}

/* Cores per package: CPUID.04H:EAX[31:26] + 1 (SDM vol. 2A, CPUID leaf 04H,
 * "maximum number of addressable IDs for processor cores"), 0 if unknown. */
static unsigned cores_per_package(const struct pmu_caps *c)
{
	struct cpuid_regs r;

	if (c->max_leaf < 4)
		return 0;
	pmu_hw_cpuid(4, 0, &r);
	if (!BITS(r.eax, 4, 0)) /* cache type 0: no cache parameters */
		return 0;
	return (unsigned)BITS(r.eax, 31, 26) + 1;
}

int pmu_uncore_detect(struct pmu_uncore *u, const struct pmu_caps *c)
{
	uint64_t v;
	int vec;

	*u = (struct pmu_uncore){
		.family = c->family, .model_nr = c->model, .ctrs_per_box = 2, .width = UNC_CBO_WIDTH
	};
	if (c->vendor != PMU_VENDOR_INTEL) {
		ksnprintf(u->why, sizeof(u->why), "client uncore C-boxes are Intel-only (vendor %s)",
			  c->vendor_id);
		return PMU_E_UNSUPPORTED;
	}
	u->model = pmu_uncore_model(c);
	if (!u->model) {
		const struct intel_model *m = intel_model_of(c);
		/* Listed, but its uncore is another one: a server's, the
		 * Nehalem/Westmere client uncore at 391H/3B0H-3C7H, or a later
		 * client's that has no row here. */
		if (m)
			return kerrf(
				u->why, sizeof(u->why), PMU_E_UNSUPPORTED,
				"family 6 model %#x is %s%s: its uncore is not implemented (client C-boxes only)",
				c->model, m->name,
				m->server ? " server"
				: intel_uarch_in(m->uarch,
						 INTEL_UARCHS(INTEL_NEHALEM) | INTEL_UARCHS(INTEL_WESTMERE))
					? " (Nehalem uncore at 391H/3B0H-3C7H)"
					: "");
		return kerrf(u->why, sizeof(u->why), PMU_E_UNSUPPORTED,
			     "no client uncore table for family %u model %#x", c->family, c->model);
	}
	if ((vec = pmu_hw_rdmsr(MSR_UNC_CBO_CONFIG, &v)) != 0) {
		ksnprintf(u->why, sizeof(u->why),
			  "MSR_UNC_CBO_CONFIG (0x396) raised vector %d on %s model %#x%s", vec,
			  u->model->name, c->model,
			  c->hypervisor ? " (under a hypervisor, which does not expose the uncore)" : "");
		return PMU_E_FAULT;
	}
	u->cbo_config = v;
	u->boxes_reported = (unsigned)BITS(v, 3, 0);
	if (u->model->config_minus_one && u->boxes_reported)
		u->boxes_reported--;
	if (!u->boxes_reported) {
		ksnprintf(u->why, sizeof(u->why),
			  "MSR_UNC_CBO_CONFIG (0x396) reads %#llx: no C-box to count with%s",
			  (unsigned long long)v,
			  c->hypervisor ? " (under a hypervisor, which does not expose the uncore)" : "");
		return PMU_E_UNSUPPORTED;
	}
	/* One C-box per core slice: a count above the cores per package is
	 * not believed (Linux bounds its fixed count the same way). */
	u->cores = cores_per_package(c);
	u->nboxes = u->boxes_reported;
	if (u->cores && u->nboxes > u->cores)
		u->nboxes = u->cores;
	if (u->nboxes > u->model->max_boxes)
		u->nboxes = u->model->max_boxes;
	return PMU_OK;
}

static int check_box(const struct pmu_uncore *u, unsigned box, unsigned ctr)
{
	return u->model && box < u->nboxes && ctr < u->ctrs_per_box ? PMU_OK : PMU_E_INVAL;
}

int pmu_uncore_program(const struct pmu_uncore *u, unsigned box, unsigned ctr, uint8_t event, uint8_t umask,
		       char *why, size_t whylen)
{
	uint64_t sel = (uint64_t)event | (uint64_t)umask << 8 | BIT(UNC_CBO_EVTSEL_EN_BIT);
	int vec;

	if (check_box(u, box, ctr)) {
		ksnprintf(why, whylen, "C-box %u counter %u: only %u boxes x %u counters", box, ctr,
			  u->nboxes, u->ctrs_per_box);
		return PMU_E_INVAL;
	}
	/* Zero first, then the select: the counter starts from 0 when the
	 * global enable goes on. */
	if ((vec = pmu_hw_wrmsr(pmu_uncore_ctr_msr(box, ctr), 0)) != 0 ||
	    (vec = pmu_hw_wrmsr(pmu_uncore_evtsel_msr(box, ctr), sel & UNC_CBO_EVTSEL_VALID)) != 0) {
		ksnprintf(why, whylen, "C-box %u counter %u: wrmsr raised vector %d", box, ctr, vec);
		return PMU_E_FAULT;
	}
	return PMU_OK;
}

int pmu_uncore_clear(const struct pmu_uncore *u, unsigned box, unsigned ctr)
{
	if (check_box(u, box, ctr))
		return PMU_E_INVAL;
	return pmu_hw_wrmsr(pmu_uncore_evtsel_msr(box, ctr), 0) ? PMU_E_FAULT : PMU_OK;
}

int pmu_uncore_enable(const struct pmu_uncore *u)
{
	if (!u->model)
		return PMU_E_INVAL;
	return pmu_hw_wrmsr(u->model->global_ctrl, u->model->global_enable) ? PMU_E_FAULT : PMU_OK;
}

int pmu_uncore_disable(const struct pmu_uncore *u)
{
	if (!u->model)
		return PMU_E_INVAL;
	return pmu_hw_wrmsr(u->model->global_ctrl, 0) ? PMU_E_FAULT : PMU_OK;
}

int pmu_uncore_read(const struct pmu_uncore *u, unsigned box, unsigned ctr, uint64_t *val)
{
	*val = 0;
	if (check_box(u, box, ctr))
		return PMU_E_INVAL;
	if (pmu_hw_rdmsr(pmu_uncore_ctr_msr(box, ctr), val))
		return PMU_E_FAULT;
	*val &= pmu_width_mask(u->width);
	return PMU_OK;
}

const char *pmu_uncore_probe(struct pmu_uncore *u)
{
	const uint64_t pattern = 0x5a5a5a5ull;
	uint32_t msr = pmu_uncore_ctr_msr(0, 0);
	uint64_t back = 0;
	int vec;

	if (!u->model || !u->nboxes)
		return u->why[0] ? u->why : "uncore not detected";
	if ((vec = pmu_hw_wrmsr(msr, pattern)) != 0 || (vec = pmu_hw_rdmsr(msr, &back)) != 0) {
		ksnprintf(u->why, sizeof(u->why), "MSR_UNC_CBO_0_PERFCTR0 (%#x) raised vector %d", msr, vec);
		return u->why;
	}
	pmu_hw_wrmsr(msr, 0);
	if (back != pattern) {
		ksnprintf(
			u->why, sizeof(u->why),
			"C-box counters do not hold writes: wrote %#llx to MSR_UNC_CBO_0_PERFCTR0 (%#x), read back %#llx",
			(unsigned long long)pattern, msr, (unsigned long long)back);
		return u->why;
	}
	return NULL;
}
