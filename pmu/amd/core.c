/* AMD backend: decides from the family and CPUID 0x80000001/0x80000022 which
 * of the three AMD counter layouts a CPU has (legacy, PerfCtrExtCore,
 * PerfMonV2), fills struct pmu_caps with it, and encodes events. */
#include "arch/x86/cpuid.h"
#include "arch/x86/msr.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/amd/amd.h"
#include "pmu/amd/caps.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"

/*
 * Supported models (the rule, not a table):
 *  - family >= 0Fh (K8, the first AMD64 processor, and every later one,
 *    Hygon's 18h included): four legacy counters, PerfEvtSel0-3 at
 *    0xC0010000-3 and PerfCtr0-3 at 0xC0010004-7, 48 bits wide (APM vol. 2,
 *    13.2 "Performance Monitoring Counters"). AMD has no CPUID leaf for
 *    them, so the family is the only enumeration; a kernel that runs in
 *    long mode is on such a CPU. Only the probe (pmu/probe.c) can confirm
 *    that they count: hypervisors often leave them as write-ignored MSRs.
 *  - CPUID 0x80000001:ECX[23] PerfCtrExtCore (family 15h on): six counters
 *    at PerfEvtSel n = 0xC0010200 + 2n, PerfCtr n = 0xC0010201 + 2n; the
 *    legacy addresses alias counters 0-3 (APM vol. 2, 13.2).
 *  - CPUID 0x80000022:EAX[0] PerfMonV2 (family 19h on), only together with
 *    PerfCtrExtCore as Linux requires (arch/x86/events/amd/core.c,
 *    amd_core_pmu_init): EBX[3:0] counters and PerfCntrGlobalCtl / Status /
 *    StatusClr at 0xC0000301 / 0xC0000300 / 0xC0000302 (APM vol. 2, 13.2;
 *    APM vol. 3, CPUID Fn8000_0022).
 * "version" follows KVM's and Linux's convention for AMD (arch/x86/kvm/
 * svm/pmu.c, amd_pmu_refresh): 1 without PerfMonV2, 2 with it.
 */
#define AMD_FAMILY_AMD64 0x0f   /* K8 */
#define AMD_FAMILY_EVENT12 0x10 /* EventSelect[11:8] in bits 35:32 from family 10h */
#define AMD_LEGACY_COUNTERS 4
#define AMD_EXTCORE_COUNTERS 6
#define AMD_COUNTER_WIDTH 48

#define CPUID_AMD_EXT_MAX 0x80000000u
#define CPUID_AMD_EXT_FEATURES 0x80000001u
#define CPUID_AMD_PERFMON 0x80000022u
/* RDPMC indices of the PerfCtrExtNB and PerfCtrExtLLC counters (APM vol. 3,
 * RDPMC). */
#define AMD_RDPMC_NB_MASK 0x000003c0u  /* indices 6-9 */
#define AMD_RDPMC_LLC_MASK 0x0000fc00u /* indices 10-15 */

/*
 * PerfEvtSel (APM vol. 2, 13.2, "Core Performance Event-Select
 * Registers"): [7:0] EventSelect[7:0], [15:8] UnitMask, 16 USR, 17 OS,
 * 18 Edge, 20 Int, 22 En, 23 Inv, [31:24] CntMask (the same positions as
 * Intel's, so the PERFEVTSEL_* bit names of msr.h apply), [35:32]
 * EventSelect[11:8], 40 GuestOnly, 41 HostOnly; 19, 21, 39:36 and 63:42
 * reserved, refused before any write. GuestOnly/HostOnly count by
 * EFER.SVME and guest mode (the APM's rule, tests/pmu/pmu_amd.c checks it);
 * KVM's vPMU drops both (its reserved mask 0xfffffff000280000 in
 * arch/x86/kvm/svm/pmu.c), which tests/pmu/pmu_amd.c reports. K8 (family 0Fh)
 * predates EventSelect[11:8]: reserved there too.
 */
#define AMD_EVTSEL_EVENT_HI_SHIFT 32
#define AMD_EVTSEL_EVENT_HI_MASK 0x0000000f00000000ull
#define AMD_EVTSEL_RESERVED 0xfffffcf000280000ull

/* The architectural event names on AMD: "CPU Clocks not Halted" 0x76,
 * "Retired Instructions" 0xC0, "Retired Branch Instructions" 0xC2,
 * "Retired Mispredicted Branch Instructions" 0xC3, all unit mask 0, the
 * same on every family from K8 to 1Ah (the family BKDG/PPR event tables;
 * Linux amd_perfmon_event_map). LLC, reference-cycle and
 * top-down events have no core-counter equivalent here. */
struct amd_arch_encoding {
	bool valid;
	uint16_t event;
	uint8_t umask;
};
static const struct amd_arch_encoding amd_arch_events[PMU_ARCH_NR] = {
	[PMU_ARCH_CYCLES] = { true, 0x076, 0x00 },
	[PMU_ARCH_INSTRUCTIONS] = { true, 0x0c0, 0x00 },
	[PMU_ARCH_BRANCHES] = { true, 0x0c2, 0x00 },
	[PMU_ARCH_BRANCH_MISSES] = { true, 0x0c3, 0x00 },
};

/* Marketing names for the boot report; the rules above do not use them. */
static const char *amd_uarch_name(uint32_t family)
{
	switch (family) {
	case 0x0f: return "K8";
	case 0x10: return "K10";
	case 0x15: return "Bulldozer family";
	case 0x16: return "Jaguar family";
	case 0x17: return "Zen/Zen 2";
	case 0x18: return "Hygon Dhyana (Zen)";
	case 0x19: return "Zen 3/Zen 4";
	case 0x1a: return "Zen 5";
	default: return NULL;
	}
}

static bool amd_match(const char *vendor_id)
{
	return strcmp(vendor_id, "AuthenticAMD") == 0 || strcmp(vendor_id, "HygonGenuine") == 0;
}

static void amd_decode_caps(struct pmu_caps *c)
{
	struct cpuid_regs r;
	uint32_t max_ext, v2_counters = 0;
	bool nb = false, llc = false;

	c->vendor = PMU_VENDOR_AMD;
	c->uarch = amd_uarch_name(c->family);
	c->evtsel_name = "PerfEvtSel";
	c->ctr_name = "PerfCtr";
	c->global_ctrl_name = "PerfCntrGlobalCtl";
	c->no_fixed_why = "AMD has no fixed counters (APM vol. 2, 13.2)";
	/* The APM's RDPMC page (vol. 3) defines no fast read and does not say
	 * ECX[31] faults. (KVM rejects any index past the counters since
	 * ecb490770ad4, "Don't ignore bits 31:30 for RDPMC index on AMD".) */
	c->rdpmc_fast_unchecked_why = "the APM (vol. 3, RDPMC) does not define ECX[31]";
	/* The APM (vol. 2, 13.2) marks PerfEvtSel bits 19, 21, 39:36 and
	 * 63:42 reserved and PerfCntrGlobalStatus read-only, and its WRMSR
	 * page (vol. 3) promises #GP only for reserved MSR addresses. EPYC
	 * parts take such writes without #GP, dropping some bits and keeping
	 * others, and KVM drops them (Linux 9b026073db2f "KVM: x86/svm: Clear
	 * reserved bits written to PerfEvtSeln MSRs"; arch/x86/kvm/pmu.c for
	 * PerfCntrGlobalCtl). So a #GP is not asserted: either outcome is
	 * reported. */
	c->reserved_gp_unchecked_why =
		"the APM (vol. 2, 13.2; vol. 3, WRMSR) calls these bits reserved but promises no #GP: EPYC and KVM take the write (Linux 9b026073db2f)";
	if (c->family < AMD_FAMILY_AMD64) {
		c->no_pmu_why = "AMD family below 0Fh (pre-AMD64): no performance counters pmutest knows";
		return;
	}

	pmu_hw_cpuid(CPUID_AMD_EXT_MAX, 0, &r);
	max_ext = r.eax;
	if (max_ext >= CPUID_AMD_EXT_FEATURES) {
		pmu_hw_cpuid(CPUID_AMD_EXT_FEATURES, 0, &r);
		amd_caps_rw(c)->ext_core = (r.ecx >> CPUID_80000001_ECX_PERFCTR_CORE_BIT) & 1;
		nb = (r.ecx >> CPUID_80000001_ECX_PERFCTR_NB_BIT) & 1;
		llc = (r.ecx >> CPUID_80000001_ECX_PERFCTR_LLC_BIT) & 1;
	}
	if (amd_caps_rw(c)->ext_core && max_ext >= CPUID_AMD_PERFMON) {
		pmu_hw_cpuid(CPUID_AMD_PERFMON, 0, &r);
		amd_caps_rw(c)->perfmon_v2 = (r.eax >> CPUID_80000022_EAX_PERFMON_V2_BIT) & 1;
		amd_caps_rw(c)->lbr_pmc_freeze = amd_caps_rw(c)->perfmon_v2 &&
						 ((r.eax >> CPUID_80000022_EAX_LBR_PMC_FREEZE_BIT) & 1);
		v2_counters = BITS(r.ebx, 3, 0);
	}

	if (amd_caps_rw(c)->perfmon_v2) {
		if (v2_counters == 0) {
			c->no_pmu_why = "PerfMonV2 reports no core counters (CPUID 0x80000022:EBX[3:0]=0)";
			return;
		}
		c->version = 2;
		c->num_gp = v2_counters;
	} else {
		c->version = 1;
		c->num_gp = amd_caps_rw(c)->ext_core ? AMD_EXTCORE_COUNTERS : AMD_LEGACY_COUNTERS;
		c->counters_assumed = true;
	}
	c->gp_width = AMD_COUNTER_WIDTH;
	c->gp_mask = (uint32_t)pmu_width_mask(c->num_gp);
	for (int e = 0; e < PMU_ARCH_NR; e++)
		if (amd_arch_events[e].valid)
			c->events_avail |= 1u << e;

	if (amd_caps_rw(c)->ext_core) {
		c->evtsel_base = MSR_F15H_PERF_CTL0;
		c->ctr_base = MSR_F15H_PERF_CTR0;
		c->ctr_stride = 2;
	} else {
		c->evtsel_base = MSR_K7_EVNTSEL0;
		c->ctr_base = MSR_K7_PERFCTR0;
		c->ctr_stride = 1;
	}
	/* PerfCtr writes store all 48 bits: no sign-extending path, no alias. */
	c->ctr_write_base = c->ctr_base;
	c->ctr_write_full = true;
	c->evtsel_reserved = AMD_EVTSEL_RESERVED;
	if (c->family < AMD_FAMILY_EVENT12)
		c->evtsel_reserved |= AMD_EVTSEL_EVENT_HI_MASK;
	c->rdpmc_extra_mask = (nb ? AMD_RDPMC_NB_MASK : 0) | (llc ? AMD_RDPMC_LLC_MASK : 0);

	if (amd_caps_rw(c)->perfmon_v2) {
		c->global_ctrl = MSR_AMD64_PERF_CNTR_GLOBAL_CTL;
		c->global_status = MSR_AMD64_PERF_CNTR_GLOBAL_STATUS;
		c->global_ovf = MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR;
		/* "supposed to exist in all AMD v2 PMUs" (KVM commit
		 * 68e61f6fd656, which added it to KVM's vPMU). */
		c->global_status_set = MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_SET;
		c->global_ctrl_reserved = ~(uint64_t)c->gp_mask;
		/* LbrAndPmcFreeze: DEBUGCTL bit 11 (FLBRI) asks for it,
		 * PerfCntrGlobalStatus bit 58 (LbrFreeze) says it happened and
		 * StatusClr lifts it (Linux commit 598c2fafc06f and
		 * arch/x86/events/amd/core.c). That the counters stop with the
		 * LBRs comes from the feature's name only. */
		if (amd_caps_rw(c)->lbr_pmc_freeze) {
			c->debugctl = MSR_IA32_DEBUGCTL;
			c->freeze_ctl = BIT(DEBUGCTL_FREEZE_LBRS_ON_PMI_BIT);
			c->freeze_status_bits = BIT(AMD_PERF_GLOBAL_STATUS_LBR_FREEZE_BIT);
			c->freeze_counters_bit = BIT(AMD_PERF_GLOBAL_STATUS_LBR_FREEZE_BIT);
		}
		/* Like Intel's, PerfCntrGlobalCtl comes out of RESET with the
		 * counter enables set, so that PerfMonV1 software still counts;
		 * AMD says so in family PPRs, not in the APM (KVM commit
		 * "KVM: x86/pmu: Set enable bits for GP counters in
		 * PERF_GLOBAL_CTRL at RESET"). The boot scan compares against it;
		 * the hardware check does not assert it. */
		c->global_ctrl_reset = c->gp_mask;
		c->global_reset_unchecked_why =
			"PerfCntrGlobalCtl's RESET value is documented in AMD family PPRs, not in the APM";
	} else {
		c->no_global_why =
			"no PerfCntrGlobalCtl: PerfMonV2 absent (CPUID 0x80000022:EAX[0]=0, APM vol. 2, 13.2); each counter starts on its own EN bit";
	}
}

static uint32_t amd_gp_allowed(const struct pmu_caps *c, const struct pmu_event_attr *a,
			       const char **constraint)
{
	*constraint = NULL;
	/* A name with no AMD encoding (pmu_attr_arch left event 0). Family
	 * 15h's per-event counter constraints (Linux amd_f15_*) are not
	 * modelled: every event may use every counter. */
	if (a->arch != PMU_ARCH_NONE && !((c->events_avail >> a->arch) & 1)) {
		*constraint = "no AMD core-counter encoding for this named event in pmutest";
		return 0;
	}
	return c->gp_mask;
}

static int amd_fixed_for(const struct pmu_caps *c, const struct pmu_event_attr *a)
{
	return -1;
}

static int amd_encode_gp(const struct pmu_caps *c, const struct pmu_event_attr *a, uint64_t *evtsel,
			 char *why, size_t whylen)
{
	char hint[64];
	uint64_t v;
	int err = pmu_attr_check_rings(a, why, whylen);

	if (err != PMU_OK)
		return err;
	if (a->own_config & BIT(PERFEVTSEL_ANY_BIT))
		return kerrf(
			why, whylen, PMU_E_UNSUPPORTED,
			"AnyThread (any) does not exist on AMD: PerfEvtSel bit 21 is reserved (APM vol. 2, 13.2)");
	if (a->extra_config)
		return kerrf(why, whylen, PMU_E_UNSUPPORTED,
			     "offcore_rsp=%#llx: AMD has no MSR_OFFCORE_RSP registers",
			     (unsigned long long)a->extra_config);
	if (a->event > 0xfff)
		return kerrf(why, whylen, PMU_E_INVAL,
			     "event select %#x: PerfEvtSel holds 12 bits (7:0 and 35:32)", a->event);
	/* The shared bits (pmu_evtsel_common) plus EventSelect[11:8] and
	 * HostOnly/GuestOnly (own_config, amd_terms); any other bit of
	 * own_config is reserved here, which pmu_evtsel_check says. */
	v = pmu_evtsel_common(a) | (uint64_t)(a->event >> 8) << AMD_EVTSEL_EVENT_HI_SHIFT | a->own_config;
	ksnprintf(hint, sizeof(hint), " (family %#x%s)", c->family,
		  (v & c->evtsel_reserved & AMD_EVTSEL_EVENT_HI_MASK) ? ": 12-bit events need family 10h"
								      : "");
	if ((err = pmu_evtsel_check(c, v, hint, why, whylen)) != PMU_OK)
		return err;
	*evtsel = v;
	return PMU_OK;
}

static int amd_encode_fixed(const struct pmu_caps *c, const struct pmu_event_attr *a, unsigned i,
			    uint64_t *field, char *why, size_t whylen)
{
	ksnprintf(why, whylen, "fixed counter %u: %s", i, c->no_fixed_why);
	return PMU_E_UNSUPPORTED;
}

static bool amd_arch_encoding(const struct pmu_caps *c, enum pmu_arch_event e, uint16_t *event,
			      uint8_t *umask)
{
	if ((int)e < 0 || e >= PMU_ARCH_NR || !amd_arch_events[e].valid)
		return false;
	*event = amd_arch_events[e].event;
	*umask = amd_arch_events[e].umask;
	return true;
}

/* host_only, guest_only: PerfEvtSel HostOnly (41) and GuestOnly (40)
 * (APM vol. 2, 13.2), kept where PerfEvtSel has them (attr.own_config),
 * which amd_encode_gp places. */
static void amd_own_bit_set(struct pmu_event_attr *a, unsigned bit, uint64_t v)
{
	a->own_config = v ? a->own_config | BIT(bit) : a->own_config & ~BIT(bit);
}

static void amd_term_host_only_set(struct pmu_event_attr *a, uint64_t v)
{
	amd_own_bit_set(a, AMD_PERFEVTSEL_HOST_ONLY_BIT, v);
}

static uint64_t amd_term_host_only_get(const struct pmu_event_attr *a)
{
	return (a->own_config >> AMD_PERFEVTSEL_HOST_ONLY_BIT) & 1;
}

static void amd_term_guest_only_set(struct pmu_event_attr *a, uint64_t v)
{
	amd_own_bit_set(a, AMD_PERFEVTSEL_GUEST_ONLY_BIT, v);
}

static uint64_t amd_term_guest_only_get(const struct pmu_event_attr *a)
{
	return (a->own_config >> AMD_PERFEVTSEL_GUEST_ONLY_BIT) & 1;
}

static const struct pmu_attr_term amd_terms[] = {
	{ "host_only", true, 1, amd_term_host_only_set, amd_term_host_only_get },
	{ "guest_only", true, 1, amd_term_guest_only_set, amd_term_guest_only_get },
	{ NULL, false, 0, NULL, NULL },
};

static const struct pmu_ops pmu_amd_ops = {
	.name = "amd",
	.vendor = PMU_VENDOR_AMD,
	.match = amd_match,
	.decode_caps = amd_decode_caps,
	.gp_allowed = amd_gp_allowed,
	.fixed_for = amd_fixed_for,
	.encode_gp = amd_encode_gp,
	.encode_fixed = amd_encode_fixed,
	.extra_msr = NULL, /* no offcore-response MSRs */
	.src_gp_number = "CPUID 0x80000022:EBX[3:0], or the family's fixed number",
	.src_gp_width = "48 bits on every AMD family, APM vol. 2, 13.2",
	.src_events = "pmu/amd/core.c's event table",
	.src_fixed_width = "AMD has no fixed counters",
	.print_caps = amd_caps_print,
	.lbr = &amd_lbr_ops,
	.arch_encoding = amd_arch_encoding,
	.terms = amd_terms,
};
PMU_BACKEND(pmu_amd_ops);
