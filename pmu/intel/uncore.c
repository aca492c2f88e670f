/* Intel uncore boxes reached through MSRs: the generation table (client
 * C-boxes and ARB, server CHAs), the box count, and the program / start /
 * read / stop sequences of each kind of box. */
#include "pmu/intel/uncore.h"

#include "arch/x86/cpuid.h"
#include "lib/bits.h"
#include "lib/printf.h"
#include "pmu/intel/discovery.h"
#include "pmu/intel/models.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"

/*
 * Event-select bits each layout takes: [7:0] event, [15:8] unit mask, 18
 * edge, 22 enable, 23 invert, and the threshold: [28:24] before Alder
 * Lake (SDM vol. 3B, 2nd-generation Core uncore; Linux snb formats, also
 * bit 20 "overflow PMI" of the SDM's layout), [29:24] on Alder and Meteor
 * Lake (Linux ADL_UNC_RAW_EVENT_MASK), [31:24] on Lunar Lake and the
 * servers (Linux LNL formats, SNBEP_PMON_RAW_EVENT_MASK; the CHAs add TID
 * enable 19). The discovery-era CHAs have no enable bit.
 */
#define SNB_SEL_VALID 0x1fd4ffffull
#define ADL_SEL_VALID 0x3fc4ffffull
#define LNL_SEL_VALID 0xffc4ffffull
#define SKX_CHA_SEL_VALID 0xffccffffull
#define SPR_CHA_SEL_VALID 0xff84ffffull
/* CHA FILTER0 at box + 5 on Skylake-SP and Ice Lake-SP, + 0xE on Sapphire
 * Rapids on (Linux uncore_snbep.c SKX_C0_MSR_PMON_BOX_FILTER0 0xE05,
 * ICX_C34_MSR_PMON_BOX_FILTER0 0xB65, SPR_C0_MSR_PMON_BOX_FILTER0 0x200E);
 * its thread-ID field, Linux's filter_tid4 (config1:0-8) and filter_tid5
 * (config1:0-9). */
#define SKX_CHA_FILTER0 5
#define SKX_CHA_FILTER_TID 0x1ffull
#define SPR_CHA_FILTER0 0xe
#define SPR_CHA_FILTER_TID 0x3ffull

/*
 * The layouts. Client: SDM vol. 4 chapter 2, MSRs of the 2nd to 10th
 * generation Core processors (C-box n at 700H + 10H n, event selects
 * 700H/701H, counters 706H/707H, 44 bits; the ARB at 3B0H-3B3H), and
 * from Ice Lake, Linux arch/x86/events/intel/uncore_snb.c (icl_, tgl_,
 * rkl_, adl_, mtl_, lnl_, ptl_uncore_*): C-boxes 8 apart with counters at
 * + 2 from Ice Lake, moved to 2000H on Alder Lake and 2442H (16 apart,
 * 48 bits) on Meteor Lake. Servers: Linux uncore_snbep.c (skx_, icx_,
 * spr_uncore_chabox), PCM src/types.h for the same addresses.
 */
#define LAYOUT(name_, kind_, unit0_, stride_, sel_, ctr_, nctrs_, width_, valid_, ...)                   \
	{                                                                                                \
		.name = (name_), .kind = (kind_), .unit0 = (unit0_), .stride = (stride_), .sel = (sel_), \
		.ctr = (ctr_), .nctrs = (nctrs_), .width = (width_), .sel_valid = (valid_), __VA_ARGS__  \
	}

static const struct pmu_unc_layout snb_cbox = LAYOUT(
	"C-box", PMU_UNC_CBOX, MSR_UNC_CBO_0_PERFEVTSEL0, MSR_UNC_CBO_STRIDE, 0,
	MSR_UNC_CBO_0_PERFCTR0 - MSR_UNC_CBO_0_PERFEVTSEL0, 2, 44, SNB_SEL_VALID);
static const struct pmu_unc_layout snb_arb = LAYOUT("ARB", PMU_UNC_ARB, MSR_UNC_ARB_PERFCTR0, 0,
						    MSR_UNC_ARB_PERFEVTSEL0 - MSR_UNC_ARB_PERFCTR0, 0, 2, 44,
						    SNB_SEL_VALID, .fixed_nbox = 1);
static const struct pmu_unc_layout icl_cbox = LAYOUT(
	"C-box", PMU_UNC_CBOX, MSR_UNC_CBO_0_PERFEVTSEL0, MSR_ICL_UNC_CBO_STRIDE, 0,
	MSR_ICL_UNC_CBO_0_PER_CTR0 - MSR_UNC_CBO_0_PERFEVTSEL0, 2, 44, SNB_SEL_VALID);
/* Ice Lake's ARB has counter 1 only (Linux icl_uncore_arb; perfmon
 * icelake_uncore.json lists its events on counter 1); Rocket Lake's events
 * too (rocketlake_uncore.json), though Linux gives it Tiger Lake's two. */
static const struct pmu_unc_layout icl_arb = LAYOUT("ARB", PMU_UNC_ARB, MSR_UNC_ARB_PERFCTR0, 0,
						    MSR_UNC_ARB_PERFEVTSEL0 - MSR_UNC_ARB_PERFCTR0, 0, 2, 44,
						    SNB_SEL_VALID, .first_ctr = 1, .fixed_nbox = 1);
static const struct pmu_unc_layout adl_cbox = LAYOUT(
	"C-box", PMU_UNC_CBOX, MSR_ADL_UNC_CBO_0_PERFEVTSEL0, MSR_ADL_UNC_CBO_STRIDE, 0,
	MSR_ADL_UNC_CBO_0_PER_CTR0 - MSR_ADL_UNC_CBO_0_PERFEVTSEL0, 2, 44, ADL_SEL_VALID);
static const struct pmu_unc_layout adl_arb = LAYOUT(
	"ARB", PMU_UNC_ARB, MSR_ADL_UNC_ARB_PERFEVTSEL0, MSR_ADL_UNC_ARB_STRIDE, 0,
	MSR_ADL_UNC_ARB_PER_CTR0 - MSR_ADL_UNC_ARB_PERFEVTSEL0, 2, 44, ADL_SEL_VALID, .fixed_nbox = 2);
static const struct pmu_unc_layout mtl_cbox = LAYOUT(
	"C-box", PMU_UNC_CBOX, MSR_MTL_UNC_CBO_0_PERFEVTSEL0, MSR_MTL_UNC_STRIDE, 0,
	MSR_MTL_UNC_CBO_0_PER_CTR0 - MSR_MTL_UNC_CBO_0_PERFEVTSEL0, 2, 48, ADL_SEL_VALID);
static const struct pmu_unc_layout mtl_arb = LAYOUT("ARB", PMU_UNC_ARB, MSR_MTL_UNC_ARB_CTRL,
						    MSR_MTL_UNC_STRIDE, 0, 6, 2, 48, ADL_SEL_VALID,
						    .fixed_nbox = 2);
/* Lunar Lake: 4 C-boxes, Panther Lake 6 (Linux lnl_uncore_cbox, the
 * Panther Lake support patch's ptl_uncore_cbox), an 8-bit threshold. */
static const struct pmu_unc_layout lnl_cbox = LAYOUT(
	"C-box", PMU_UNC_CBOX, MSR_MTL_UNC_CBO_0_PERFEVTSEL0, MSR_MTL_UNC_STRIDE, 0,
	MSR_MTL_UNC_CBO_0_PER_CTR0 - MSR_MTL_UNC_CBO_0_PERFEVTSEL0, 2, 48, LNL_SEL_VALID, .fixed_nbox = 4);
static const struct pmu_unc_layout ptl_cbox = LAYOUT(
	"C-box", PMU_UNC_CBOX, MSR_MTL_UNC_CBO_0_PERFEVTSEL0, MSR_MTL_UNC_STRIDE, 0,
	MSR_MTL_UNC_CBO_0_PER_CTR0 - MSR_MTL_UNC_CBO_0_PERFEVTSEL0, 2, 48, LNL_SEL_VALID, .fixed_nbox = 6);
static const struct pmu_unc_layout lnl_arb = LAYOUT("ARB", PMU_UNC_ARB, MSR_MTL_UNC_ARB_CTRL,
						    MSR_MTL_UNC_STRIDE, 0, 6, 2, 48, LNL_SEL_VALID,
						    .fixed_nbox = 2);
static const struct pmu_unc_layout skx_cha = LAYOUT(
	"CHA", PMU_UNC_CHA, MSR_SKX_C0_PMON_BOX_CTL, MSR_SKX_CHA_STRIDE, 1, 8, 4, 48, SKX_CHA_SEL_VALID,
	.has_box_ctl = true, .filter = SKX_CHA_FILTER0, .filter_tid = SKX_CHA_FILTER_TID);
/* Ice Lake-SP: the CHA units Linux lists (icx_cha_msr_offsets from its
 * ICX_C34_MSR_PMON_BOX_CTL, 0xB60): 0xE00 + 0xE n for CHAs 0-17,
 * 0xF0A + 0xE (n - 18) for 18-33, 0xB60 + 0xE (n - 34) for 34-39. */
static const uint32_t icx_cha_units[] = {
	0xe00, 0xe0e, 0xe1c, 0xe2a, 0xe38, 0xe46, 0xe54, 0xe62, 0xe70, 0xe7e, 0xe8c, 0xe9a, 0xea8, 0xeb6,
	0xec4, 0xed2, 0xee0, 0xeee, 0xf0a, 0xf18, 0xf26, 0xf34, 0xf42, 0xf50, 0xf5e, 0xf6c, 0xf7a, 0xf88,
	0xf96, 0xfa4, 0xfb2, 0xfc0, 0xfce, 0xfdc, 0xb60, 0xb6e, 0xb7c, 0xb8a, 0xb98, 0xba6,
};
static const struct pmu_unc_layout icx_cha = LAYOUT(
	"CHA", PMU_UNC_CHA, 0, 0, 1, 8, 4, 48, SKX_CHA_SEL_VALID, .units = icx_cha_units,
	.nunits = ARRAY_LEN(icx_cha_units), .has_box_ctl = true, .filter = SKX_CHA_FILTER0,
	.filter_tid = SKX_CHA_FILTER_TID);
static const struct pmu_unc_layout spr_cha = LAYOUT(
	"CHA", PMU_UNC_CHA, MSR_SPR_C0_PMON_BOX_CTL, MSR_SPR_CHA_STRIDE, 2, 8, 4, 48, SPR_CHA_SEL_VALID,
	.has_box_ctl = true, .filter = SPR_CHA_FILTER0, .filter_tid = SPR_CHA_FILTER_TID);

#define SNB_IVB (INTEL_UARCHS(INTEL_SANDYBRIDGE) | INTEL_UARCHS(INTEL_IVYBRIDGE))
#define HSW_BDW (INTEL_UARCHS(INTEL_HASWELL) | INTEL_UARCHS(INTEL_BROADWELL))
#define TGL (INTEL_UARCHS(INTEL_TIGERLAKE_L) | INTEL_UARCHS(INTEL_TIGERLAKE))
#define MTL_ARL (INTEL_UARCHS(INTEL_METEORLAKE) | INTEL_UARCHS(INTEL_ARROWLAKE))
#define EN29 BIT(UNC_GLOBAL_EN_BIT)
#define NO_CBO_EVENT(file) "Intel's perfmon " file " lists no C-box event (no published LLC-lookup encoding)"

#define GLOBAL(msr_, on_, off_)                           \
	{                                                 \
		.msr = (msr_), .on = (on_), .off = (off_) \
	}
#define CBO_LOOKUP                                                                \
	.req_event = UNC_CBO_LOOKUP_EVENT, .req_umask = UNC_CBO_LOOKUP_ANY_UMASK, \
	.req_name = "UNC_CBO_CACHE_LOOKUP.ANY_MESI"
#define CHA_READS                                                                 \
	.req_event = UNC_CHA_READS_EVENT, .req_umask = UNC_CHA_READS_LOCAL_UMASK, \
	.req_name = "UNC_CHA_REQUESTS.READS_LOCAL"

/* Their discovery tables list the CHAs as unit type 0 (Linux
 * uncore_snbep.c: spr_uncores[0] and gnr_uncores[0] are the CHA box). */
#define DISCOVERY_CHA .discovery = true, .disc_box = 0

static const struct pmu_uncore_model uncore_models[] = {
	/* SDM vol. 4, MSRs of 2nd/3rd generation Core processors (391H: EN 29,
	 * PMI core select [3:0]; 396H; 700H-737H); Linux uncore_snb.c. */
	{ .name = "Sandy/Ivy Bridge client",
	  .client = SNB_IVB,
	  .box = &snb_cbox,
	  .arb = &snb_arb,
	  .count = PMU_UNC_COUNT_CBO_CONFIG,
	  .max_boxes = 4,
	  .start = PMU_UNC_GLOBAL,
	  .global = { GLOBAL(MSR_UNC_PERF_GLOBAL_CTRL, EN29 | 0xf, 0) },
	  CBO_LOOKUP },
	/* SDM vol. 4, MSRs of 4th generation Core processors (396H "derive
	 * value by -1"). */
	{ .name = "Haswell/Broadwell client",
	  .client = HSW_BDW,
	  .box = &snb_cbox,
	  .arb = &snb_arb,
	  .count = PMU_UNC_COUNT_CBO_CONFIG_PLUS1,
	  .max_boxes = 4,
	  .start = PMU_UNC_GLOBAL,
	  .global = { GLOBAL(MSR_UNC_PERF_GLOBAL_CTRL, EN29 | 0xf, 0) },
	  CBO_LOOKUP },
	/* SDM vol. 4, uncore PMU MSRs of 6th-10th generation Core processors
	 * (E01H: EN 29, slice select [4:0]; 391H became IA32_PERF_GLOBAL_STATUS_SET
	 * of the version-4 core PMU). Eight-core Coffee Lake has its eighth
	 * C-box at other addresses (Linux UNCORE_BOX_FLAG_CFL8_CBOX_MSR_OFFS):
	 * the table stops at 7. */
	{ .name = "Skylake..Comet Lake client",
	  .client = INTEL_UARCHS(INTEL_SKYLAKE),
	  .box = &snb_cbox,
	  .arb = &snb_arb,
	  .count = PMU_UNC_COUNT_CBO_CONFIG,
	  .max_boxes = 7,
	  .start = PMU_UNC_GLOBAL,
	  .global = { GLOBAL(MSR_SKL_UNC_PERF_GLOBAL_CTL, EN29 | 0x1f, 0) },
	  CBO_LOOKUP },
	/* Linux icl_uncore_cbox/arb, icl_get_cbox_num (396H[3:0]); no global
	 * control: erratum ICL068, Linux "Update Ice Lake uncore units". */
	{ .name = "Ice Lake client",
	  .client = INTEL_UARCHS(INTEL_ICELAKE),
	  .box = &icl_cbox,
	  .arb = &icl_arb,
	  .count = PMU_UNC_COUNT_CBO_CONFIG,
	  .max_boxes = 8,
	  .start = PMU_UNC_EN_ONLY,
	  .no_req_why = NO_CBO_EVENT("icelake_uncore.json") },
	/* Linux tgl_uncore_cpu_init: Ice Lake's boxes, E01H bit 29 written by
	 * box 0 (rkl_uncore_msr_init_box). */
	{ .name = "Tiger Lake client",
	  .client = TGL,
	  .box = &icl_cbox,
	  .arb = &snb_arb,
	  .count = PMU_UNC_COUNT_CBO_CONFIG,
	  .max_boxes = 8,
	  .start = PMU_UNC_GLOBAL,
	  .global = { GLOBAL(MSR_SKL_UNC_PERF_GLOBAL_CTL, EN29, 0) },
	  .no_req_why = NO_CBO_EVENT("tigerlake_uncore.json") },
	{ .name = "Rocket Lake client",
	  .client = INTEL_UARCHS(INTEL_ROCKETLAKE),
	  .box = &icl_cbox,
	  .arb = &icl_arb,
	  .count = PMU_UNC_COUNT_CBO_CONFIG,
	  .max_boxes = 8,
	  .start = PMU_UNC_GLOBAL,
	  .global = { GLOBAL(MSR_SKL_UNC_PERF_GLOBAL_CTL, EN29, 0) },
	  .no_req_why = NO_CBO_EVENT("rocketlake_uncore.json") },
	/* Linux adl_uncore_cbox/arb, adl_uncore_msr_init_box (2FF0H bit 29). */
	{ .name = "Alder/Raptor Lake client",
	  .client = INTEL_UARCHS(INTEL_ALDERLAKE),
	  .box = &adl_cbox,
	  .arb = &adl_arb,
	  .count = PMU_UNC_COUNT_CBO_CONFIG,
	  .max_boxes = 10,
	  .start = PMU_UNC_GLOBAL,
	  .global = { GLOBAL(MSR_ADL_UNC_PERF_GLOBAL_CTL, EN29, 0) },
	  .no_req_why = NO_CBO_EVENT("alderlake_uncore.json") },
	/* Linux mtl_uncore_cbox/arb; no global control, but the cNCU and sNCU
	 * box controls get bit 29 (mtl_uncore_msr_init_box); whether the
	 * C-boxes need it is not published, so it is set as Linux does. */
	{ .name = "Meteor/Arrow Lake client",
	  .client = MTL_ARL,
	  .box = &mtl_cbox,
	  .arb = &mtl_arb,
	  .count = PMU_UNC_COUNT_CBO_CONFIG,
	  .max_boxes = 12,
	  .start = PMU_UNC_GLOBAL,
	  .global = { GLOBAL(MSR_MTL_UNC_CNCU_BOX_CTL, EN29, 0), GLOBAL(MSR_MTL_UNC_SNCU_BOX_CTL, EN29, 0) },
	  .no_req_why = NO_CBO_EVENT("meteorlake_uncore.json") },
	/* Linux lnl_uncore_cbox, lnl_uncore_msr_init_box (240EH bit 29). */
	{ .name = "Lunar Lake client",
	  .client = INTEL_UARCHS(INTEL_LUNARLAKE),
	  .box = &lnl_cbox,
	  .arb = &lnl_arb,
	  .count = PMU_UNC_COUNT_FIXED,
	  .max_boxes = 4,
	  .start = PMU_UNC_GLOBAL,
	  .global = { GLOBAL(MSR_MTL_UNC_CNCU_BOX_CTL, EN29, 0) },
	  .no_req_why = NO_CBO_EVENT("lunarlake_uncore.json") },
	{ .name = "Panther Lake client",
	  .client = INTEL_UARCHS(INTEL_PANTHERLAKE),
	  .box = &ptl_cbox,
	  .arb = &lnl_arb,
	  .count = PMU_UNC_COUNT_FIXED,
	  .max_boxes = 6,
	  .start = PMU_UNC_GLOBAL,
	  .global = { GLOBAL(MSR_MTL_UNC_CNCU_BOX_CTL, EN29, 0) },
	  .no_req_why = NO_CBO_EVENT("pantherlake_uncore.json") },
	/* Linux skx_uncore_chabox (box control init 0x10003, bit 8 freeze);
	 * the count from MSR 702H[5:0] as PCM reads it (Linux popcounts PCI
	 * 8086:2083 config 9CH instead); perfmon skylakex_uncore.json. */
	{ .name = "Skylake-SP/Cascade Lake",
	  .server = INTEL_UARCHS(INTEL_SKYLAKE),
	  .box = &skx_cha,
	  .count = PMU_UNC_COUNT_NCU_CONFIG,
	  .max_boxes = 28,
	  .start = PMU_UNC_BOX_FREEZE,
	  CHA_READS },
	/* Linux icx_uncore_chabox; the count as Skylake-SP's (PCM);
	 * perfmon icelakex_uncore.json. */
	{ .name = "Ice Lake-SP/-D",
	  .server = INTEL_UARCHS(INTEL_ICELAKE),
	  .box = &icx_cha,
	  .count = PMU_UNC_COUNT_NCU_CONFIG,
	  .max_boxes = 40,
	  .start = PMU_UNC_BOX_FREEZE,
	  CHA_READS },
	/* Linux spr_uncore_chabox and the generic discovery ops (no enable
	 * bit, box control bit 0 freezes, 8/9 reset); the count from MSR
	 * 2FFEH (Linux SPR_MSR_UNC_CBO_CONFIG; it reads 0 on Emerald Rapids
	 * XCC, where Linux keeps the discovery table's count); PCM unfreezes
	 * everything through 2FF0H bit 0; perfmon sapphirerapids_uncore.json. */
	{ .name = "Sapphire/Emerald Rapids",
	  .server = INTEL_UARCHS(INTEL_SAPPHIRERAPIDS),
	  .box = &spr_cha,
	  .count = PMU_UNC_COUNT_SPR_CONFIG,
	  .max_boxes = 60,
	  .start = PMU_UNC_BOX_FREEZE0,
	  .global = { GLOBAL(MSR_SPR_UNC_PMON_GLOBAL_CTL, 0, 1) },
	  CHA_READS,
	  DISCOVERY_CHA },
	/* Linux places these CHAs through the discovery table (gnr_uncore_init);
	 * Intel's PCM (src/cpucounters.cpp, CX_MSR_PMON_CTLY/CTRY) addresses
	 * them as Sapphire Rapids' and reads their count from MSR 3FEDH[8:0]:
	 * one source. Perfmon graniterapids, sierraforest, grandridge
	 * _uncore.json: UNC_CHA_REQUESTS.READS_LOCAL 50H/01H. */
	{ .name = "Granite Rapids, Sierra Forest, Grand Ridge",
	  .server = INTEL_UARCHS(INTEL_GRANITERAPIDS) | INTEL_UARCHS(INTEL_CRESTMONT),
	  .box = &spr_cha,
	  .count = PMU_UNC_COUNT_GNR_CONFIG,
	  .max_boxes = PMU_UNCORE_MAX_BOXES,
	  .start = PMU_UNC_BOX_FREEZE0,
	  CHA_READS,
	  DISCOVERY_CHA },
};

/* Box control bits (Linux uncore_snbep.c SNBEP_PMON_BOX_CTL_*, IVBEP
 * freeze enable; uncore_discovery.h GENERIC_PMON_BOX_CTL_*). */
#define SNBEP_BOX_RST_CTRL BIT(0)
#define SNBEP_BOX_RST_CTRS BIT(1)
#define SNBEP_BOX_FRZ BIT(8)
#define IVBEP_BOX_FRZ_EN BIT(16)
#define GENERIC_BOX_FRZ BIT(0)
#define GENERIC_BOX_RST_CTRL BIT(8)
#define GENERIC_BOX_RST_CTRS BIT(9)

const struct pmu_uncore_model *pmu_uncore_model(const struct pmu_caps *c)
{
	const struct intel_model *m = intel_model_of(c);

	for (unsigned i = 0; m && i < ARRAY_LEN(uncore_models); i++)
		if (intel_uarch_in(m->uarch, m->server ? uncore_models[i].server : uncore_models[i].client))
			return &uncore_models[i];
	return NULL;
}

uint32_t pmu_uncore_unit(const struct pmu_unc_layout *l, unsigned b)
{
	if (l->units)
		return b < l->nunits ? l->units[b] : 0;
	return l->unit0 + b * l->stride;
}

unsigned pmu_uncore_nboxes(const struct pmu_uncore *u, const struct pmu_unc_layout *l)
{
	if (!u->model || !l)
		return 0;
	return l == pmu_uncore_box(u) ? u->nboxes : l->fixed_nbox;
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

static uint32_t count_msr(enum pmu_unc_count k)
{
	switch (k) {
	case PMU_UNC_COUNT_CBO_CONFIG:
	case PMU_UNC_COUNT_CBO_CONFIG_PLUS1: return MSR_UNC_CBO_CONFIG;
	case PMU_UNC_COUNT_NCU_CONFIG: return MSR_SKX_NCU_PMON_CONFIG;
	case PMU_UNC_COUNT_SPR_CONFIG: return MSR_SPR_UNC_CBO_CONFIG;
	case PMU_UNC_COUNT_GNR_CONFIG: return MSR_GNR_PMON_NUMBER_CBOS;
	case PMU_UNC_COUNT_FIXED: break;
	}
	return 0;
}

static unsigned count_decode(enum pmu_unc_count k, uint64_t v)
{
	switch (k) {
	case PMU_UNC_COUNT_CBO_CONFIG: return (unsigned)BITS(v, 3, 0);
	/* Haswell/Broadwell: "encoded number of C-Box, derive value by -1". */
	case PMU_UNC_COUNT_CBO_CONFIG_PLUS1: return BITS(v, 3, 0) ? (unsigned)BITS(v, 3, 0) - 1 : 0;
	case PMU_UNC_COUNT_NCU_CONFIG: return (unsigned)BITS(v, 5, 0);
	case PMU_UNC_COUNT_SPR_CONFIG:
		return v > PMU_UNCORE_MAX_BOXES ? PMU_UNCORE_MAX_BOXES + 1 : (unsigned)v;
	case PMU_UNC_COUNT_GNR_CONFIG: return (unsigned)BITS(v, 8, 0);
	case PMU_UNC_COUNT_FIXED: break;
	}
	return 0;
}

static const char *hv_note(const struct pmu_caps *c)
{
	return c->hypervisor ? " (under a hypervisor, which does not expose the uncore)" : "";
}

/*
 * The boxes of this package's discovery table, when it has one: every unit
 * of the row's type, in box ID order, reached through MSRs, all with one
 * layout (the unit's address is its box control; counter controls at + the
 * control offset, counters at + the counter offset: Linux
 * uncore_discovery.c, uncore_update_uncore_type for MSR units). No table:
 * PMU_OK with the row's fixed layout (table_why says why); a table whose
 * units cannot be driven: PMU_E_UNSUPPORTED with the value in u->why.
 */
static int place_from_table(struct pmu_uncore *u)
{
	const struct pmu_disc_unit *list[PMU_UNCORE_MAX_BOXES];
	const struct pmu_unc_layout *row = u->model->box;
	const struct pmu_disc_table *t = pmu_discovery_of_package(u->package, u->table_why,
								  sizeof(u->table_why));
	const char *name = row ? row->name : "box";
	unsigned n;

	if (!t)
		return PMU_OK;
	u->table_bus = t->bus, u->table_dev = t->dev, u->table_fn = t->fn;
	u->table_base = t->base;
	n = pmu_discovery_units(t, u->model->disc_box, list, PMU_UNCORE_MAX_BOXES);
	u->table_boxes = n;
	if (!n)
		return kerrf(
			u->why, sizeof(u->why), PMU_E_UNSUPPORTED,
			"discovery table of package %u (%02x:%02x.%x, at %#llx) lists no %s (unit type %u) among "
			"its %u units",
			u->package, t->bus, t->dev, t->fn, (unsigned long long)t->base, name,
			u->model->disc_box, t->nunits);
	for (unsigned b = 0; b < n && b < PMU_UNCORE_MAX_BOXES; b++) {
		const struct pmu_disc_unit *d = list[b];

		if (d->access != PMU_DISC_MSR || d->ctl > 0xffffffffull)
			return kerrf(
				u->why, sizeof(u->why), PMU_E_UNSUPPORTED,
				"discovery table of package %u: %s %u is reached through %s at %#llx, not an MSR",
				u->package, name, d->id, pmu_disc_access_name(d->access),
				(unsigned long long)d->ctl);
		if (d->ctl_off != list[0]->ctl_off || d->ctr_off != list[0]->ctr_off ||
		    d->nctrs != list[0]->nctrs || d->width != list[0]->width)
			return kerrf(
				u->why, sizeof(u->why), PMU_E_UNSUPPORTED,
				"discovery table of package %u: %s %u has controls +%#x, counters +%#x, %u x %u "
				"bits; %s %u +%#x, +%#x, %u x %u",
				u->package, name, d->id, d->ctl_off, d->ctr_off, d->nctrs, d->width, name,
				list[0]->id, list[0]->ctl_off, list[0]->ctr_off, list[0]->nctrs,
				list[0]->width);
		u->table_units[b] = (uint32_t)d->ctl;
	}
	u->table_box = (struct pmu_unc_layout){
		.name = name,
		.kind = row ? row->kind : PMU_UNC_CHA,
		.units = u->table_units,
		.nunits = n < PMU_UNCORE_MAX_BOXES ? n : PMU_UNCORE_MAX_BOXES,
		.has_box_ctl = true,
		.sel = list[0]->ctl_off,
		.ctr = list[0]->ctr_off,
		.nctrs = list[0]->nctrs,
		.width = list[0]->width,
		.sel_valid = row ? row->sel_valid : SPR_CHA_SEL_VALID,
		/* The table places the box control; the filter is the row's,
		 * at the same offset from it. */
		.filter = row ? row->filter : 0,
		.filter_tid = row ? row->filter_tid : 0,
	};
	u->from_table = true;
	return PMU_OK;
}

int pmu_uncore_detect(struct pmu_uncore *u, const struct pmu_caps *c)
{
	const struct intel_model *m;
	uint64_t v;
	int vec;

	*u = (struct pmu_uncore){ .family = c->family, .model_nr = c->model };
	if (pmu_this_cpu())
		u->package = pmu_this_cpu()->topo.package;
	if (c->vendor != PMU_VENDOR_INTEL)
		return kerrf(u->why, sizeof(u->why), PMU_E_UNSUPPORTED,
			     "the uncore boxes are Intel's (vendor %s)", c->vendor_id);
	m = intel_model_of(c);
	u->model = pmu_uncore_model(c);
	if (!u->model) {
		/* Listed, but its uncore is one the table does not have: the
		 * Nehalem/Westmere ones (client at 391H/3B0H-3C7H), the older
		 * servers, the Atom-based parts, and those whose boxes only the
		 * discovery table places. */
		if (m)
			return kerrf(
				u->why, sizeof(u->why), PMU_E_UNSUPPORTED,
				"family %u model %#x is %s%s: no uncore table for it%s", c->family, c->model,
				m->name, m->server ? " (server)" : "",
				!m->server && intel_uarch_in(m->uarch, INTEL_UARCHS(INTEL_NEHALEM) |
									       INTEL_UARCHS(INTEL_WESTMERE))
					? " (the Nehalem uncore at 391H/3B0H-3C7H)"
					: "");
		return kerrf(u->why, sizeof(u->why), PMU_E_UNSUPPORTED,
			     "no uncore table for family %u model %#x", c->family, c->model);
	}
	u->cores = cores_per_package(c);
	if (u->model->discovery && place_from_table(u) != PMU_OK)
		return PMU_E_UNSUPPORTED;
	if (u->from_table) {
		/* The table says how many; the count register is read for the
		 * log (it reads 0 on Emerald Rapids XCC). */
		u->count_msr = count_msr(u->model->count);
		if (u->count_msr && !pmu_hw_rdmsr(u->count_msr, &v)) {
			u->count_val = v;
			u->boxes_reported = count_decode(u->model->count, v);
		}
		u->nboxes = u->table_boxes > PMU_UNCORE_MAX_BOXES ? PMU_UNCORE_MAX_BOXES : u->table_boxes;
		return PMU_OK;
	}
	if (u->model->count == PMU_UNC_COUNT_FIXED) {
		u->boxes_reported = u->model->box->fixed_nbox;
	} else {
		u->count_msr = count_msr(u->model->count);
		if ((vec = pmu_hw_rdmsr(u->count_msr, &v)) != 0)
			return kerrf(u->why, sizeof(u->why), PMU_E_FAULT,
				     "box count MSR %#x raised vector %d on %s model %#x%s", u->count_msr,
				     vec, u->model->name, c->model, hv_note(c));
		u->count_val = v;
		u->boxes_reported = count_decode(u->model->count, v);
		if (!u->boxes_reported)
			return kerrf(u->why, sizeof(u->why), PMU_E_UNSUPPORTED,
				     "box count MSR %#x reads %#llx: no %s to count with on %s%s",
				     u->count_msr, (unsigned long long)v, u->model->box->name, u->model->name,
				     hv_note(c));
	}
	u->nboxes = u->boxes_reported;
	/* A client C-box per core slice: a count above the cores per package
	 * is not believed (Linux bounds its fixed counts the same way). CHAs
	 * may outnumber the enabled cores (fused-off cores keep their CHA). */
	if (u->model->box->kind == PMU_UNC_CBOX && u->cores && u->nboxes > u->cores)
		u->nboxes = u->cores;
	if (u->nboxes > u->model->max_boxes)
		u->nboxes = u->model->max_boxes;
	if (u->model->box->units && u->nboxes > u->model->box->nunits)
		u->nboxes = u->model->box->nunits;
	return PMU_OK;
}

static bool in_range(const struct pmu_uncore *u, const struct pmu_unc_layout *l, unsigned box, unsigned ctr)
{
	return u->model && l && box < pmu_uncore_nboxes(u, l) && ctr >= l->first_ctr && ctr < l->nctrs;
}

const char *pmu_uncore_probe(struct pmu_uncore *u)
{
	const struct pmu_unc_layout *l = pmu_uncore_box(u);
	uint64_t pattern, back = 0;
	uint32_t msr;
	int vec;

	if (!l || !u->nboxes)
		return u->why[0] ? u->why : "uncore not detected";
	/* An event and unit mask without the enable bit: nothing counts. */
	pattern = 0x5aa5ull & l->sel_valid;
	msr = pmu_uncore_sel_msr(l, 0, l->first_ctr);
	if ((vec = pmu_hw_wrmsr(msr, pattern)) != 0 || (vec = pmu_hw_rdmsr(msr, &back)) != 0) {
		ksnprintf(u->why, sizeof(u->why), "%s 0 event select (MSR %#x) raised vector %d", l->name,
			  msr, vec);
		return u->why;
	}
	pmu_hw_wrmsr(msr, 0);
	if (back != pattern) {
		ksnprintf(u->why, sizeof(u->why),
			  "%s event selects do not hold writes: wrote %#llx to MSR %#x, read back %#llx",
			  l->name, (unsigned long long)pattern, msr, (unsigned long long)back);
		return u->why;
	}
	return NULL;
}

/* Every box with a box control: write v to it. */
static int box_ctl_all(const struct pmu_uncore *u, uint64_t v)
{
	const struct pmu_unc_layout *l = pmu_uncore_box(u);

	if (!l->has_box_ctl)
		return PMU_OK;
	for (unsigned b = 0; b < u->nboxes; b++)
		if (pmu_hw_wrmsr(pmu_uncore_unit(l, b) + l->box_ctl, v))
			return PMU_E_FAULT;
	return PMU_OK;
}

int pmu_uncore_prepare(const struct pmu_uncore *u)
{
	if (!u->model)
		return PMU_E_INVAL;
	switch (u->model->start) {
	case PMU_UNC_BOX_FREEZE:
		return box_ctl_all(u, SNBEP_BOX_RST_CTRL | SNBEP_BOX_RST_CTRS | IVBEP_BOX_FRZ_EN |
					      SNBEP_BOX_FRZ);
	case PMU_UNC_BOX_FREEZE0:
		return box_ctl_all(u, GENERIC_BOX_RST_CTRL | GENERIC_BOX_RST_CTRS | GENERIC_BOX_FRZ);
	case PMU_UNC_GLOBAL:
	case PMU_UNC_EN_ONLY: break;
	}
	return PMU_OK;
}

int pmu_uncore_program(const struct pmu_uncore *u, const struct pmu_unc_layout *l, unsigned box, unsigned ctr,
		       uint8_t event, uint8_t umask, bool enable, char *why, size_t whylen)
{
	bool has_en = u->model && u->model->start != PMU_UNC_BOX_FREEZE0;
	uint64_t sel = (uint64_t)event | (uint64_t)umask << 8 |
		       (enable && has_en ? BIT(UNC_EVTSEL_EN_BIT) : 0);
	int vec;

	if (!in_range(u, l, box, ctr))
		return kerrf(why, whylen, PMU_E_INVAL, "%s %u counter %u: only %u boxes, counters %u-%u",
			     l ? l->name : "box", box, ctr, u->model ? pmu_uncore_nboxes(u, l) : 0,
			     l ? l->first_ctr : 0, l ? l->nctrs - 1 : 0);
	if (sel & ~l->sel_valid)
		return kerrf(why, whylen, PMU_E_INVAL, "%s event select %#llx sets bits %#llx it lacks",
			     l->name, (unsigned long long)sel, (unsigned long long)(sel & ~l->sel_valid));
	/* Client counters are zeroed by a write; those with a box control
	 * were reset by pmu_uncore_prepare. Then the select: with a global
	 * enable or a frozen box, the counter starts at pmu_uncore_start. */
	if (!l->has_box_ctl && (vec = pmu_hw_wrmsr(pmu_uncore_ctr_msr(l, box, ctr), 0)) != 0)
		return kerrf(why, whylen, PMU_E_FAULT, "%s %u counter %u (MSR %#x): wrmsr raised vector %d",
			     l->name, box, ctr, pmu_uncore_ctr_msr(l, box, ctr), vec);
	if ((vec = pmu_hw_wrmsr(pmu_uncore_sel_msr(l, box, ctr), sel)) != 0)
		return kerrf(why, whylen, PMU_E_FAULT,
			     "%s %u event select %u (MSR %#x): wrmsr raised vector %d", l->name, box, ctr,
			     pmu_uncore_sel_msr(l, box, ctr), vec);
	return PMU_OK;
}

static int globals(const struct pmu_uncore *u, bool on)
{
	for (unsigned i = 0; i < ARRAY_LEN(u->model->global); i++)
		if (u->model->global[i].msr &&
		    pmu_hw_wrmsr(u->model->global[i].msr,
				 on ? u->model->global[i].on : u->model->global[i].off))
			return PMU_E_FAULT;
	return PMU_OK;
}

int pmu_uncore_start(const struct pmu_uncore *u)
{
	if (!u->model)
		return PMU_E_INVAL;
	switch (u->model->start) {
	case PMU_UNC_GLOBAL: return globals(u, true);
	case PMU_UNC_EN_ONLY: return PMU_OK;
	case PMU_UNC_BOX_FREEZE: return box_ctl_all(u, IVBEP_BOX_FRZ_EN);
	case PMU_UNC_BOX_FREEZE0: return globals(u, true) ? PMU_E_FAULT : box_ctl_all(u, 0);
	}
	return PMU_E_INVAL;
}

int pmu_uncore_stop(const struct pmu_uncore *u)
{
	if (!u->model)
		return PMU_E_INVAL;
	switch (u->model->start) {
	case PMU_UNC_GLOBAL: return globals(u, false);
	case PMU_UNC_EN_ONLY: {
		/* Nothing but the enables stops them: clear every select. */
		const struct pmu_unc_layout *ls[] = { pmu_uncore_box(u), u->model->arb };
		for (unsigned k = 0; k < ARRAY_LEN(ls); k++)
			for (unsigned b = 0; ls[k] && b < pmu_uncore_nboxes(u, ls[k]); b++)
				for (unsigned i = ls[k]->first_ctr; i < ls[k]->nctrs; i++)
					if (pmu_uncore_clear(u, ls[k], b, i))
						return PMU_E_FAULT;
		return PMU_OK;
	}
	case PMU_UNC_BOX_FREEZE: return box_ctl_all(u, IVBEP_BOX_FRZ_EN | SNBEP_BOX_FRZ);
	case PMU_UNC_BOX_FREEZE0: return box_ctl_all(u, GENERIC_BOX_FRZ);
	}
	return PMU_E_INVAL;
}

int pmu_uncore_read(const struct pmu_uncore *u, const struct pmu_unc_layout *l, unsigned box, unsigned ctr,
		    uint64_t *val)
{
	*val = 0;
	if (!in_range(u, l, box, ctr))
		return PMU_E_INVAL;
	if (pmu_hw_rdmsr(pmu_uncore_ctr_msr(l, box, ctr), val))
		return PMU_E_FAULT;
	*val &= pmu_width_mask(l->width);
	return PMU_OK;
}

int pmu_uncore_clear(const struct pmu_uncore *u, const struct pmu_unc_layout *l, unsigned box, unsigned ctr)
{
	if (!in_range(u, l, box, ctr))
		return PMU_E_INVAL;
	return pmu_hw_wrmsr(pmu_uncore_sel_msr(l, box, ctr), 0) ? PMU_E_FAULT : PMU_OK;
}

int pmu_uncore_reset(const struct pmu_uncore *u, bool ctrl, bool ctrs)
{
	if (!u->model || !pmu_uncore_box(u)->has_box_ctl)
		return PMU_E_UNSUPPORTED;
	switch (u->model->start) {
	case PMU_UNC_BOX_FREEZE:
		return box_ctl_all(u, (ctrl ? SNBEP_BOX_RST_CTRL : 0) | (ctrs ? SNBEP_BOX_RST_CTRS : 0) |
					      IVBEP_BOX_FRZ_EN | SNBEP_BOX_FRZ);
	case PMU_UNC_BOX_FREEZE0:
		return box_ctl_all(u, (ctrl ? GENERIC_BOX_RST_CTRL : 0) | (ctrs ? GENERIC_BOX_RST_CTRS : 0) |
					      GENERIC_BOX_FRZ);
	case PMU_UNC_GLOBAL:
	case PMU_UNC_EN_ONLY: break;
	}
	return PMU_E_UNSUPPORTED;
}
