/* Offcore response (Intel): which models have MSR_OFFCORE_RSP_0/1 or the
 * off-module response MSRs OMR_0-3, which bits they accept, and who holds
 * them (sharing, the move to the next MSR with its select). */
#include "pmu/intel/offcore.h"

#include "arch/x86/msr.h"
#include "lib/bits.h"
#include "lib/printf.h"
#include "lib/spinlock.h"
#include "pmu/intel/caps.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"

/*
 * The RSP MSR layouts (SDM vol. 3B, "Off-core Response Performance
 * Monitoring" in the Nehalem, Westmere, Sandy Bridge, Haswell and Skylake
 * sections; the valid masks are the ones Linux uses per model in
 * arch/x86/events/intel/core.c, intel_*_extra_regs, whose #GP behaviour
 * they were fixed against).
 *
 * Nehalem/Westmere: [7:0] request type (bit 0 demand data read), [15:8]
 * response type; L3 misses are the responses 12 remote cache forward,
 * 13 remote DRAM, 14 local DRAM, 15 non-DRAM. The MSRs belong to the core
 * and are shared by its two threads (Linux keeps them in per-core shared
 * state for these models only).
 *
 * Sandy Bridge to Skylake: [15:0] request type (bits 0-11 and 15 exist),
 * [30:16] supplier (16 any response, 17 no supplier, 18-21 L3 hit states,
 * 22 local DRAM on Sandy Bridge / L4 hit on Skylake client, 26-29 DRAM
 * local and remote on Skylake), [37:31] snoop result. Everything from bit
 * 22 up is "not an L3 hit": demand data reads with any of those suppliers
 * and any snoop result are bit 0 with bits 37:22, 0x3FFFC00001. That is
 * the value the project's mission text gives for Skylake-SP under the name
 * OFFCORE_RESPONSE.DEMAND_DATA_RD.L3_MISS.ANY_RESPONSE, a name Intel uses
 * for it only on Haswell client (perfmon HSW); on Skylake it is a superset
 * of Intel's own L3-miss events, which the Skylake rows carry beside it.
 * Client Sandy/Ivy Bridge lack the remote bits 23-30. From Sandy Bridge the
 * MSRs are per logical processor (Linux sets PMU_FL_NO_HT_SHARING: "all
 * extra regs are per-cpu when HT is on"); Atom cores have no SMT.
 *
 * Ice Lake on: the same request bits (13 added), the supplier and snoop
 * fields named only by Intel's event values. Golden Cove and later P-cores
 * select the MSRs with events 0x2A/0x2B umask 0x01, and Lion Cove widens
 * them to 44 bits; the Atom cores (Tremont, Gracemont, Crestmont, Skymont,
 * Darkmont) select both with event 0xB7, umask 0x01 for RSP_0 and 0x02 for
 * RSP_1, accept request bits 44-51, and Crestmont on bit 63 on RSP_0 only.
 * The L3-miss values are Intel's OCR.DEMAND_DATA_RD.L3_MISS per event
 * file (github.com/intel/perfmon, the core file of each part, versions as
 * in pmu/README.md); where the file has none, the row says so and the
 * hardware check SKIPs naming the file rather than guess.
 *
 * Off-module response (Linux 4e955c08d6dc "Support the 4 new OMR MSRs
 * introduced in DMR and NVL", citing Intel's ISE section "Off-Module
 * Response (OMR) Facility"): Diamond Rapids and Nova Lake replace the two
 * RSP MSRs with four, OMR_0-3 at 0x3E0-0x3E3; one event code selects all
 * four, umask bit n naming OMR n. Panther Cove (Diamond Rapids) and Coyote
 * Cove (Nova Lake's P-cores, "the same PMU capabilities as Panther Cove")
 * select them with event 0x2A and accept bits 15:0, 55:32 and 62 (Linux
 * d345b6bb8860 and c847a208f43b, intel_pnc_extra_regs; no counter
 * constraint in intel_pnc_event_constraints); Arctic Wolf (Nova Lake's
 * E-cores) selects them with event 0xB7 (and 0xD4, not driven here),
 * accepts bits 61:0 but 57:56, 62 and 63 (intel_arw_extra_regs) and runs
 * select n on GP counter n only (intel_arw_event_constraints). No perfmon
 * file publishes an OMR.DEMAND_DATA_RD.L3_MISS: Diamond Rapids has no
 * event file, and Nova Lake's V1.00 files list only retired-load events
 * (0xD6) that use the OMR MSRs. The L3-miss value checked is the one
 * Linux's generic LLC-load-misses event programs on both core types
 * (pnc_hw_cache_extra_regs, arw_hw_cache_extra_regs: request bit 0 with
 * bits 55:36); any response is bit 62 (the LLC-loads value).
 */
#define NHM_VALID 0xffffull
#define NHM_REQUEST 0x00ffull
#define NHM_DMND_RD_L3_MISS 0xf001ull /* request bit 0, responses 12-15 */
#define SNB_REQUEST 0x8fffull
#define SNB_CLIENT_VALID 0x3f807f8fffull
#define SNB_SERVER_VALID 0x3fffff8fffull
#define SNB_L3_MISS_RESPONSE 0x3fffc00000ull /* bits 37:22 */
#define SNB_DMND_DATA_RD 0x1ull
#define ICL_VALID 0x3fffffbfffull /* Linux "fix the mask of ICL OFFCORE_RSP" (bit 13) */
#define ICL_REQUEST 0xbfffull
#define GLC_VALID 0x3fffffffffull
#define LNC_VALID 0xfffffffffffull /* Linux aa5d2ca7c179: 44 bits from Lion Cove */
#define ALL_REQUEST 0xffffull
#define CMT_VALID_0 0x800ff3ffffffffffull /* bit 63 on RSP_0 only */
#define CMT_VALID_1 0xff3ffffffffffull
#define TNT_VALID_0 0x800ff0ffffff9fffull
#define TNT_VALID_1 0xff0ffffff9fffull
#define ATOM_REQUEST_HI 0xff00000000000ull /* bits 51:44 */
#define PMC0_3 0xfu                        /* perfmon "Counter": "0,1,2,3" */
#define PNC_OMR_VALID 0x40ffffff0000ffffull
#define ARW_OMR_VALID 0xc0ffffffffffffffull
#define OMR_REQUEST 0xffffull
#define OMR_LLC_READ_MISS 0xfffff000000001ull
#define OMR_LLC_READ_ANY 0x4000000000000001ull

#define NHM INTEL_UARCHS(INTEL_NEHALEM)
#define WSM INTEL_UARCHS(INTEL_WESTMERE)
#define SNB_IVB (INTEL_UARCHS(INTEL_SANDYBRIDGE) | INTEL_UARCHS(INTEL_IVYBRIDGE))
#define HSW_BDW (INTEL_UARCHS(INTEL_HASWELL) | INTEL_UARCHS(INTEL_BROADWELL))
#define SKL INTEL_UARCHS(INTEL_SKYLAKE)
#define ICL INTEL_UARCHS(INTEL_ICELAKE)
#define TGL (INTEL_UARCHS(INTEL_TIGERLAKE_L) | INTEL_UARCHS(INTEL_TIGERLAKE))
#define RKL INTEL_UARCHS(INTEL_ROCKETLAKE)
#define ADL INTEL_UARCHS(INTEL_ALDERLAKE)
#define SPR INTEL_UARCHS(INTEL_SAPPHIRERAPIDS)
#define MTL INTEL_UARCHS(INTEL_METEORLAKE)
#define ARL INTEL_UARCHS(INTEL_ARROWLAKE)
#define LNL_PTL (INTEL_UARCHS(INTEL_LUNARLAKE) | INTEL_UARCHS(INTEL_PANTHERLAKE))
#define GNR INTEL_UARCHS(INTEL_GRANITERAPIDS)
#define TNT INTEL_UARCHS(INTEL_TREMONT)
#define GRT INTEL_UARCHS(INTEL_GRACEMONT)
#define CMT INTEL_UARCHS(INTEL_CRESTMONT)
#define SKT INTEL_UARCHS(INTEL_SKYMONT)
#define DKT INTEL_UARCHS(INTEL_DARKMONT)
#define DMR INTEL_UARCHS(INTEL_DIAMONDRAPIDS)
#define NVL INTEL_UARCHS(INTEL_NOVALAKE)
#define ARW INTEL_UARCHS(INTEL_ARCTICWOLF)

/* The selects of RSP_0 and RSP_1. */
#define SEL_B7_BB .event = { 0xb7, 0xbb }, .umask = { 0x01, 0x01 }
#define SEL_2A_2B .event = { 0x2a, 0x2b }, .umask = { 0x01, 0x01 }
#define SEL_ATOM .event = { 0xb7, 0xb7 }, .umask = { 0x01, 0x02 }
#define VALID(v0, v1) .valid = { (v0), (v1) }
/* OMR: one event, umask bit n for OMR n, the same bits in all four. */
#define SEL_OMR(ev) \
	.omr = true, .nmsrs = 4, .event = { (ev), (ev), (ev), (ev) }, .umask = { 0x01, 0x02, 0x04, 0x08 }
#define VALID4(v) .valid = { (v), (v), (v), (v) }
#define OMR_L3_MISS_NAME "LLC read miss as Linux's LLC-load-misses programs it (request 0, bits 55:36)"

#define NHM_L3_MISS_NAME "DMND_DATA_RD, responses 12-15 (remote forward, remote/local DRAM, non-DRAM)"
/* The value the mission text names for Skylake-SP, kept as a check. */
#define SEED_L3_MISS (SNB_DMND_DATA_RD | SNB_L3_MISS_RESPONSE)
#define SEED_L3_MISS_NAME "DMND_DATA_RD with every non-L3-hit supplier (bits 22-37), any snoop"
/* Skylake: DEMAND_DATA_RD (0), L3_MISS_LOCAL_DRAM (26), SNOOP_HITM (36)
 * (perfmon skylake_matrix_bit_definitions.json). */
#define SKL_DRAM_HITM                 \
	.dram_hitm = 0x1004000001ull, \
	.dram_hitm_name =             \
		"DEMAND_DATA_RD.L3_MISS_LOCAL_DRAM.SNOOP_HITM (perfmon skylake_matrix_bit_definitions.json)"

static const struct pmu_offcore_model offcore_models[] = {
	/* SDM vol. 3B, Nehalem "Off-core Response Performance Monitoring in
	 * the Processor Core"; Linux intel_nehalem_extra_regs. */
	{ .name = "Nehalem",
	  .client = NHM,
	  .server = NHM,
	  .nmsrs = 1,
	  SEL_B7_BB,
	  VALID(NHM_VALID, NHM_VALID),
	  .request = NHM_REQUEST,
	  .dmnd_rd_l3_miss = NHM_DMND_RD_L3_MISS,
	  .l3_miss_name = NHM_L3_MISS_NAME,
	  .smt_shared = true },
	/* SDM vol. 3B, Westmere off-core response (RSP_0 and RSP_1); Linux
	 * intel_westmere_extra_regs. */
	{ .name = "Westmere",
	  .client = WSM,
	  .server = WSM,
	  .nmsrs = 2,
	  SEL_B7_BB,
	  VALID(NHM_VALID, NHM_VALID),
	  .request = NHM_REQUEST,
	  .dmnd_rd_l3_miss = NHM_DMND_RD_L3_MISS,
	  .l3_miss_name = NHM_L3_MISS_NAME,
	  .smt_shared = true },
	/* SDM vol. 3B, Sandy Bridge "Off-core Response Performance
	 * Monitoring"; Linux intel_snb_extra_regs. Client Sandy/Ivy Bridge
	 * lack the remote supplier bits. */
	{ .name = "Sandy/Ivy Bridge client",
	  .client = SNB_IVB,
	  .nmsrs = 2,
	  SEL_B7_BB,
	  VALID(SNB_CLIENT_VALID, SNB_CLIENT_VALID),
	  .request = SNB_REQUEST,
	  .dmnd_rd_l3_miss = SNB_DMND_DATA_RD | (SNB_L3_MISS_RESPONSE & SNB_CLIENT_VALID),
	  .l3_miss_name = "DMND_DATA_RD, local DRAM (22), any snoop (31-37)" },
	/* SDM vol. 3B, Sandy Bridge/Haswell off-core response; Linux
	 * intel_snbep_extra_regs. */
	{ .name = "Sandy/Ivy Bridge-EP, Haswell, Broadwell",
	  .client = HSW_BDW,
	  .server = SNB_IVB | HSW_BDW,
	  .nmsrs = 2,
	  SEL_B7_BB,
	  VALID(SNB_SERVER_VALID, SNB_SERVER_VALID),
	  .request = SNB_REQUEST,
	  .dmnd_rd_l3_miss = SEED_L3_MISS,
	  .l3_miss_name = SEED_L3_MISS_NAME },
	/* SDM vol. 3B, Skylake "Off-core Response Performance Monitoring";
	 * Linux intel_skl_extra_regs; perfmon skylake_core.json v59 (counters
	 * 0-3). */
	{ .name = "Skylake client",
	  .client = SKL,
	  .nmsrs = 2,
	  SEL_B7_BB,
	  VALID(SNB_SERVER_VALID, SNB_SERVER_VALID),
	  .request = SNB_REQUEST,
	  .gp_mask = PMC0_3,
	  .dmnd_rd_l3_miss = SEED_L3_MISS,
	  .l3_miss_name = SEED_L3_MISS_NAME,
	  .intel_l3_miss = 0x3ffc400001ull,
	  .intel_l3_miss_name =
		  "OFFCORE_RESPONSE.DEMAND_DATA_RD.L3_MISS.ANY_SNOOP (perfmon skylake_core.json)",
	  SKL_DRAM_HITM },
	/* As above; perfmon skylakex_core.json v1.37 and cascadelakex_core.json
	 * v1.25. */
	{ .name = "Skylake-SP/Cascade Lake",
	  .server = SKL,
	  .nmsrs = 2,
	  SEL_B7_BB,
	  VALID(SNB_SERVER_VALID, SNB_SERVER_VALID),
	  .request = SNB_REQUEST,
	  .gp_mask = PMC0_3,
	  .dmnd_rd_l3_miss = SEED_L3_MISS,
	  .l3_miss_name = SEED_L3_MISS_NAME,
	  .intel_l3_miss = 0x3fbc000001ull,
	  .intel_l3_miss_name =
		  "OFFCORE_RESPONSE.DEMAND_DATA_RD.L3_MISS.ANY_SNOOP (perfmon skylakex_core.json)",
	  SKL_DRAM_HITM },
	/* Linux intel_icl_extra_regs; perfmon icelake_core.json v1.24 and
	 * rocketlake_core.json v1.04. */
	{ .name = "Ice Lake/Rocket Lake client",
	  .client = ICL | RKL,
	  .nmsrs = 2,
	  SEL_B7_BB,
	  VALID(ICL_VALID, ICL_VALID),
	  .request = ICL_REQUEST,
	  .gp_mask = PMC0_3,
	  .dmnd_rd_l3_miss = 0x3fffc00001ull,
	  .l3_miss_name = "OCR.DEMAND_DATA_RD.L3_MISS (perfmon icelake_core.json)" },
	/* Linux intel_icl_extra_regs (Tiger Lake takes Ice Lake's PMU). */
	{ .name = "Tiger Lake",
	  .client = TGL,
	  .nmsrs = 2,
	  SEL_B7_BB,
	  VALID(ICL_VALID, ICL_VALID),
	  .request = ICL_REQUEST,
	  .gp_mask = PMC0_3,
	  .no_l3_miss_why =
		  "Intel's perfmon tigerlake_core.json (v1.19) lists no OCR.DEMAND_DATA_RD.L3_MISS" },
	/* Linux intel_icl_extra_regs; perfmon icelakex_core.json v1.30. */
	{ .name = "Ice Lake-SP/-D",
	  .server = ICL,
	  .nmsrs = 2,
	  SEL_B7_BB,
	  VALID(ICL_VALID, ICL_VALID),
	  .request = ICL_REQUEST,
	  .gp_mask = PMC0_3,
	  .dmnd_rd_l3_miss = 0x3fbfc00001ull,
	  .l3_miss_name = "OCR.DEMAND_DATA_RD.L3_MISS (perfmon icelakex_core.json)" },
	/* Linux intel_glc_extra_regs; perfmon alderlake_goldencove_core.json
	 * v1.40, sapphirerapids_core.json v1.39, emeraldrapids_core.json v1.24,
	 * meteorlake_redwoodcove_core.json v1.22, graniterapids_core.json v1.20. */
	{ .name = "Golden/Raptor/Redwood Cove",
	  .client = ADL | MTL,
	  .server = SPR | GNR,
	  .nmsrs = 2,
	  SEL_2A_2B,
	  VALID(GLC_VALID, GLC_VALID),
	  .request = ALL_REQUEST,
	  .gp_mask = PMC0_3,
	  .dmnd_rd_l3_miss = 0x3fbfc00001ull,
	  .l3_miss_name = "OCR.DEMAND_DATA_RD.L3_MISS (perfmon alderlake_goldencove_core.json)" },
	/* Linux intel_lnc_extra_regs and intel_lnc_event_constraints (0x012A/
	 * 0x012B on PMC0-3; perfmon says 0-9); arrowlake_lioncove_core.json v1.20. */
	{ .name = "Lion Cove (Arrow Lake)",
	  .client = ARL,
	  .nmsrs = 2,
	  SEL_2A_2B,
	  VALID(LNC_VALID, LNC_VALID),
	  .request = ALL_REQUEST,
	  .gp_mask = PMC0_3,
	  .dmnd_rd_l3_miss = 0xfe7f8000001ull,
	  .l3_miss_name = "OCR.DEMAND_DATA_RD.L3_MISS (perfmon arrowlake_lioncove_core.json)" },
	/* As above; lunarlake_lioncove_core.json v1.26,
	 * pantherlake_cougarcove_core.json v1.07. */
	{ .name = "Lion/Cougar Cove (Lunar/Panther Lake)",
	  .client = LNL_PTL,
	  .nmsrs = 2,
	  SEL_2A_2B,
	  VALID(LNC_VALID, LNC_VALID),
	  .request = ALL_REQUEST,
	  .gp_mask = PMC0_3,
	  .dmnd_rd_l3_miss = 0x9e7fa000001ull,
	  .l3_miss_name = "OCR.DEMAND_DATA_RD.L3_MISS (perfmon lunarlake_lioncove_core.json)" },
	/* Linux intel_grt_extra_regs; alderlake_gracemont_core.json v1.40
	 * (counters 0-5: all of them). */
	{ .name = "Gracemont",
	  .client = GRT,
	  .nmsrs = 2,
	  SEL_ATOM,
	  VALID(GLC_VALID, GLC_VALID),
	  .request = ALL_REQUEST,
	  .dmnd_rd_l3_miss = 0x3f84400001ull,
	  .l3_miss_name = "OCR.DEMAND_DATA_RD.L3_MISS (perfmon alderlake_gracemont_core.json)" },
	/* Linux intel_cmt_extra_regs; meteorlake_crestmont_core.json v1.22,
	 * sierraforest_core.json v1.18, grandridge_core.json v1.13. */
	{ .name = "Crestmont",
	  .client = CMT,
	  .server = CMT,
	  .parts = MTL | CMT,
	  .nmsrs = 2,
	  SEL_ATOM,
	  VALID(CMT_VALID_0, CMT_VALID_1),
	  .request = ALL_REQUEST | ATOM_REQUEST_HI,
	  .dmnd_rd_l3_miss = 0x3fbfc00001ull,
	  .l3_miss_name = "OCR.DEMAND_DATA_RD.L3_MISS (perfmon meteorlake_crestmont_core.json)" },
	{ .name = "Crestmont (Arrow Lake-H low-power E-cores)",
	  .client = CMT,
	  .parts = ARL,
	  .nmsrs = 2,
	  SEL_ATOM,
	  VALID(CMT_VALID_0, CMT_VALID_1),
	  .request = ALL_REQUEST | ATOM_REQUEST_HI,
	  .no_l3_miss_why = "Intel's perfmon arrowlake_crestmont_core.json (v1.20) lists no OCR events" },
	/* Linux intel_pmu_init_skt() (Crestmont's extra regs);
	 * lunarlake_skymont_core.json v1.26, pantherlake_darkmont_core.json v1.07. */
	{ .name = "Skymont/Darkmont (Lunar/Panther Lake)",
	  .client = SKT | DKT,
	  .parts = LNL_PTL,
	  .nmsrs = 2,
	  SEL_ATOM,
	  VALID(CMT_VALID_0, CMT_VALID_1),
	  .request = ALL_REQUEST | ATOM_REQUEST_HI,
	  .dmnd_rd_l3_miss = 0x13fbfc00001ull,
	  .l3_miss_name = "OCR.DEMAND_DATA_RD.L3_MISS (perfmon lunarlake_skymont_core.json)" },
	{ .name = "Skymont (Arrow Lake)",
	  .client = SKT,
	  .parts = ARL,
	  .nmsrs = 2,
	  SEL_ATOM,
	  VALID(CMT_VALID_0, CMT_VALID_1),
	  .request = ALL_REQUEST | ATOM_REQUEST_HI,
	  .no_l3_miss_why = "Intel's perfmon arrowlake_skymont_core.json (v1.20) lists no "
			    "OCR.DEMAND_DATA_RD.L3_MISS (only streaming-write OCR events)" },
	/* clearwaterforest_core.json v1.04. */
	{ .name = "Darkmont (Clearwater Forest)",
	  .server = DKT,
	  .nmsrs = 2,
	  SEL_ATOM,
	  VALID(CMT_VALID_0, CMT_VALID_1),
	  .request = ALL_REQUEST | ATOM_REQUEST_HI,
	  .dmnd_rd_l3_miss = 0x33fbfc00001ull,
	  .l3_miss_name = "OCR.DEMAND_DATA_RD.L3_MISS (perfmon clearwaterforest_core.json)" },
	/* Panther Cove and Coyote Cove (Linux intel_pnc_extra_regs and
	 * pnc_hw_cache_extra_regs; see the OMR paragraph above). */
	{ .name = "Panther/Coyote Cove (OMR)",
	  .client = NVL,
	  .server = DMR,
	  SEL_OMR(0x2a),
	  VALID4(PNC_OMR_VALID),
	  .request = OMR_REQUEST,
	  .dmnd_rd_l3_miss = OMR_LLC_READ_MISS,
	  .l3_miss_name = OMR_L3_MISS_NAME,
	  .dmnd_rd_any = OMR_LLC_READ_ANY },
	/* Arctic Wolf (Linux intel_arw_extra_regs, intel_arw_event_constraints,
	 * arw_hw_cache_extra_regs). */
	{ .name = "Arctic Wolf (OMR)",
	  .client = ARW,
	  SEL_OMR(0xb7),
	  VALID4(ARW_OMR_VALID),
	  .request = OMR_REQUEST,
	  .slot_counter = true,
	  .dmnd_rd_l3_miss = OMR_LLC_READ_MISS,
	  .l3_miss_name = OMR_L3_MISS_NAME,
	  .dmnd_rd_any = OMR_LLC_READ_ANY },
	/* Linux intel_tnt_extra_regs; snowridgex_core.json v1.23,
	 * elkhartlake_core.json v1.05 (counters 0-3). */
	{ .name = "Tremont",
	  .client = TNT,
	  .server = TNT,
	  .nmsrs = 2,
	  SEL_ATOM,
	  VALID(TNT_VALID_0, TNT_VALID_1),
	  .request = 0x9fffull | ATOM_REQUEST_HI,
	  .gp_mask = PMC0_3,
	  .dmnd_rd_l3_miss = 0x2184000001ull,
	  .l3_miss_name = "OCR.DEMAND_DATA_RD.L3_MISS (perfmon snowridgex_core.json)" },
};

const struct pmu_offcore_model *pmu_offcore_model(const struct pmu_caps *c)
{
	const struct intel_model *m = intel_model_of(c);
	enum intel_uarch core = intel_core_uarch_of(c);

	for (unsigned i = 0; m && i < ARRAY_LEN(offcore_models); i++) {
		const struct pmu_offcore_model *o = &offcore_models[i];
		if (intel_uarch_in(core, m->server ? o->server : o->client) &&
		    (!o->parts || intel_uarch_in(m->uarch, o->parts)))
			return o;
	}
	return NULL;
}

unsigned pmu_offcore_msrs(const struct pmu_caps *c)
{
	const struct pmu_offcore_model *m = pmu_offcore_model(c);
	return m ? m->nmsrs : 0;
}

int pmu_offcore_slot_of(const struct pmu_offcore_model *m, uint16_t event, uint8_t umask)
{
	for (int s = 0; m && s < (int)pmu_offcore_nsel(m); s++)
		if (event == m->event[s] && umask == m->umask[s])
			return s;
	return -1;
}

void pmu_offcore_attr(struct pmu_event_attr *a, const struct pmu_offcore_model *m, int slot, uint64_t rsp)
{
	pmu_attr_raw(a, m->event[slot], m->umask[slot]);
	a->extra_config = rsp;
}

const char *pmu_offcore_msr_name(uint32_t msr, char *buf, size_t n)
{
	if (msr >= MSR_OMR_0 && msr < MSR_OMR_0 + MSR_OMR_NR)
		ksnprintf(buf, n, "MSR_OMR_%u (%#x)", msr - MSR_OMR_0, msr);
	else
		ksnprintf(buf, n, "MSR_OFFCORE_RSP_%d (%#x)", msr == MSR_OFFCORE_RSP_1, msr);
	return buf;
}

const char *pmu_offcore_selects(const struct pmu_offcore_model *m, char *buf, size_t n)
{
	if (!m)
		ksnprintf(buf, n, "0x%02x/0x%02x umask 0x%02x", PMU_OFFCORE_EVENT_0, PMU_OFFCORE_EVENT_1,
			  PMU_OFFCORE_UMASK);
	else if (m->omr)
		ksnprintf(buf, n, "0x%02x umask 0x%02x/0x%02x/0x%02x/0x%02x", m->event[0], m->umask[0],
			  m->umask[1], m->umask[2], m->umask[3]);
	else if (m->event[0] == m->event[1])
		ksnprintf(buf, n, "0x%02x umask 0x%02x/0x%02x", m->event[0], m->umask[0], m->umask[1]);
	else
		ksnprintf(buf, n, "0x%02x/0x%02x umask 0x%02x", m->event[0], m->event[1], m->umask[0]);
	return buf;
}

int pmu_offcore_check(const struct pmu_caps *c, const struct pmu_event_attr *a, char *why, size_t whylen)
{
	const struct pmu_offcore_model *m = pmu_offcore_model(c);
	uint64_t v = a->extra_config, valid;
	int slot;

	if (!m) {
		ksnprintf(why, whylen, "no offcore response table for family %u model %#x", c->family,
			  c->model);
		return PMU_E_UNSUPPORTED;
	}
	/* A reserved bit would #GP at the WRMSR, long after the caller could
	 * be told why: refuse it here. The MSR is the one the select names
	 * (allocation moves an event only to an MSR that has its bits). */
	slot = pmu_offcore_slot_of(m, a->event, a->umask);
	if (slot < 0)
		slot = 0;
	valid = m->valid[slot];
	if (v & ~valid) {
		if (m->omr)
			ksnprintf(
				why, whylen,
				"offcore_rsp=%#llx sets bits %#llx that MSR_OMR_%d does not have on %s (valid %#llx)",
				(unsigned long long)v, (unsigned long long)(v & ~valid), slot, m->name,
				(unsigned long long)valid);
		else
			ksnprintf(
				why, whylen,
				"offcore_rsp=%#llx sets bits %#llx that MSR_OFFCORE_RSP_%d does not have on %s (valid %#llx)",
				(unsigned long long)v, (unsigned long long)(v & ~valid), slot, m->name,
				(unsigned long long)valid);
		return PMU_E_INVAL;
	}
	/* The SDM's off-core response sections: a request type and a response
	 * type must both be selected, or the event counts nothing. */
	if (!(v & m->request)) {
		ksnprintf(why, whylen,
			  "offcore_rsp=%#llx selects no request type (bits %#llx): it would count nothing",
			  (unsigned long long)v, (unsigned long long)m->request);
		return PMU_E_INVAL;
	}
	if (!(v & valid & ~m->request)) {
		ksnprintf(why, whylen,
			  "offcore_rsp=%#llx selects no response type (bits %#llx): it would count nothing",
			  (unsigned long long)v, (unsigned long long)(valid & ~m->request));
		return PMU_E_INVAL;
	}
	return PMU_OK;
}

static struct spinlock offcore_lock = SPINLOCK_INIT;

/* Under offcore_lock. */
static void view_locked(struct pmu_cpu *pc, const struct pmu_offcore_model *m, struct pmu_offcore_view *v)
{
	unsigned n = pmu_hw_ncpus();

	for (int s = 0; s < PMU_OFFCORE_MAX; s++) {
		v->val[s] = pc->extra_val[s];
		v->users[s] = pc->extra_users[s];
		v->sibling[s] = -1;
	}
	if (!m || !m->smt_shared)
		return;
	for (unsigned cpu = 0; cpu < n && cpu < PMU_MAX_CPUS; cpu++) {
		struct pmu_cpu *o = pmu_cpu_of(cpu);
		if (cpu == pc->cpu || !o->initialised || o->topo.core != pc->topo.core)
			continue;
		for (int s = 0; s < PMU_OFFCORE_MAX; s++) {
			if (!o->extra_users[s])
				continue;
			/* Reservation keeps the values of one core equal. */
			v->val[s] = o->extra_val[s];
			v->users[s] += o->extra_users[s];
			if (v->sibling[s] < 0)
				v->sibling[s] = (int)cpu;
		}
	}
}

void pmu_offcore_view(struct pmu_cpu *pc, struct pmu_offcore_view *v)
{
	spin_lock(&offcore_lock, pmu_hw_cpu());
	view_locked(pc, pmu_offcore_model(&pc->caps), v);
	spin_unlock(&offcore_lock);
}

/* MSR s can take val: free or holding it, and val has no bit it lacks. */
static bool slot_fits(const struct pmu_offcore_model *m, const struct pmu_offcore_view *v, int s,
		      uint64_t val)
{
	if (m && (val & ~m->valid[s]))
		return false;
	return !v->users[s] || v->val[s] == val;
}

static void busy_reason(struct pmu_event *ev, const struct pmu_offcore_view *v, unsigned nmsrs, bool omr)
{
	char held[PMU_OFFCORE_MAX][64];

	for (int s = 0; s < PMU_OFFCORE_MAX; s++) {
		if (v->sibling[s] >= 0)
			ksnprintf(held[s], sizeof(held[s]), " (also by SMT sibling CPU %d)", v->sibling[s]);
		else
			held[s][0] = '\0';
	}
	if (omr)
		ksnprintf(
			ev->reason, sizeof(ev->reason),
			"%s: a fifth OMR value: MSR_OMR_0-3 hold %#llx%s, %#llx%s, %#llx%s, %#llx%s; this one "
			"needs %#llx",
			ev->name ? ev->name : "event", (unsigned long long)v->val[0], held[0],
			(unsigned long long)v->val[1], held[1], (unsigned long long)v->val[2], held[2],
			(unsigned long long)v->val[3], held[3], (unsigned long long)ev->attr.extra_config);
	else if (nmsrs < 2)
		ksnprintf(ev->reason, sizeof(ev->reason),
			  "%s: MSR_OFFCORE_RSP_0 (0x1a6) holds %#llx for %u event(s)%s and this model has no "
			  "MSR_OFFCORE_RSP_1; this one needs %#llx",
			  ev->name ? ev->name : "event", (unsigned long long)v->val[0], v->users[0], held[0],
			  (unsigned long long)ev->attr.extra_config);
	else
		ksnprintf(
			ev->reason, sizeof(ev->reason),
			"%s: a third offcore value: MSR_OFFCORE_RSP_0 holds %#llx%s, MSR_OFFCORE_RSP_1 holds %#llx%s; "
			"this one needs %#llx",
			ev->name ? ev->name : "event", (unsigned long long)v->val[0], held[0],
			(unsigned long long)v->val[1], held[1], (unsigned long long)ev->attr.extra_config);
}

int pmu_offcore_reserve(struct pmu_cpu *pc, struct pmu_event *const *evs, unsigned n, uint32_t *msr)
{
	const struct pmu_offcore_model *m = pmu_offcore_model(&pc->caps);
	unsigned nmsrs = m ? m->nmsrs
			   : (intel_caps(&pc->caps)->offcore_msrs > 2 ? 2
								      : intel_caps(&pc->caps)->offcore_msrs);
	unsigned nsel = pmu_offcore_nsel(m);
	struct pmu_offcore_view v;
	int got[PMU_IDX_NR];
	int err = PMU_OK;

	if (n > PMU_IDX_NR)
		return PMU_E_INVAL;
	spin_lock(&offcore_lock, pmu_hw_cpu());
	view_locked(pc, m, &v);
	for (unsigned i = 0; i < n; i++) {
		uint64_t val = evs[i]->attr.extra_config;
		int want, s = -1;

		got[i] = -1;
		if (!msr[i])
			continue;
		want = pmu_offcore_slot(msr[i]);
		/* Linux's order (intel_alt_er): the MSR of the select asked
		 * for, then the next ones in turn, whose select the event
		 * takes; none where the select also fixes the counter. */
		for (unsigned k = 0; k < (m && m->slot_counter ? 1u : nsel); k++) {
			int t = (int)((unsigned)want + k) % (int)nsel;
			if (t < (int)nmsrs && slot_fits(m, &v, t, val)) {
				s = t;
				break;
			}
		}
		if (s < 0) {
			if (m && m->slot_counter)
				ksnprintf(evs[i]->reason, sizeof(evs[i]->reason),
					  "%s: MSR_OMR_%d holds %#llx; this one needs %#llx, and its select "
					  "(umask %#x) counts on GP counter %d only, so it cannot move",
					  evs[i]->name ? evs[i]->name : "event", want,
					  (unsigned long long)v.val[want], (unsigned long long)val,
					  m->umask[want], want);
			else
				busy_reason(evs[i], &v, nmsrs, m && m->omr);
			if (i)
				ksnprintf(evs[0]->reason, sizeof(evs[0]->reason), "%s", evs[i]->reason);
			err = PMU_E_BUSY;
			break;
		}
		v.val[s] = val;
		v.users[s]++;
		got[i] = s;
	}
	if (err == PMU_OK) {
		for (unsigned i = 0; i < n; i++) {
			if (got[i] < 0)
				continue;
			pc->extra_val[got[i]] = evs[i]->attr.extra_config;
			pc->extra_users[got[i]]++;
			msr[i] = pmu_offcore_msr(m, got[i]);
		}
	}
	spin_unlock(&offcore_lock);
	return err;
}

void pmu_offcore_release(struct pmu_cpu *pc, uint32_t msr)
{
	int s = pmu_offcore_slot(msr);

	spin_lock(&offcore_lock, pmu_hw_cpu());
	if (pc->extra_users[s])
		pc->extra_users[s]--;
	spin_unlock(&offcore_lock);
}

unsigned pmu_offcore_users(const struct pmu_cpu *pc, int slot)
{
	return pc->extra_users[slot];
}
