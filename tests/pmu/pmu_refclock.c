/* The clock UnHalted Reference Cycles (3CH/01H) counts on a GP counter,
 * against the TSC ratio the part reports for it. */
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/msr.h"
#include "lib/printf.h"
#include "pmu/intel/models.h"
#include "pmu/pmu.h"
#include "tests/ktest.h"
#include "tests/pmu/pmu_common.h"

/* TSC ticks per tick of the event: num / den. */
struct ref_ratio {
	uint64_t num, den;
	const char *where;
};

enum ref_known {
	REF_UNKNOWN,  /* the event's clock is not one this check knows */
	REF_MISSING,  /* the part reports the ratio, and did not */
	REF_REPORTED, /* in *r */
};

/* Where the part reports the ratio, and the ratio; why says what is
 * missing or unknown.
 *
 * Nehalem to Broadwell: the event counts the bus clock (Nehalem and
 * Westmere CPU_CLK_UNHALTED.REF_P, "reference base clock (133 MHz)";
 * Sandy Bridge to Broadwell CPU_CLK_THREAD_UNHALTED.REF_XCLK, "increments
 * at the frequency of XCLK (100 MHz) when not halted": SDM vol. 3B, the
 * model-specific event tables; Linux tools/perf/pmu-events/arch/x86/
 * <part>/pipeline.json), and the invariant TSC runs at
 * MSR_PLATFORM_INFO[15:8] times that clock (SDM vol. 4, MSR_PLATFORM_INFO,
 * "Maximum Non-Turbo Ratio": "the ratio of the frequency that invariant
 * TSC runs at", times 133.33 MHz on Nehalem and Westmere, 100 MHz from
 * Sandy Bridge on).
 *
 * Skylake (with its client refreshes) and Ice Lake: the event counts the
 * core crystal clock (CPU_CLK_UNHALTED.REF_XCLK, "core crystal clock
 * cycles when the thread is unhalted", the same pipeline.json files), and
 * CPUID.15H reports TSC ticks per crystal tick as EBX/EAX (SDM vol. 2A,
 * CPUID, "Time Stamp Counter and Nominal Core Crystal Clock Information
 * Leaf").
 *
 * Other parts are left alone: Core 2's bus clock is in no register, and
 * the later cores' event clock is not checked here. */
static enum ref_known ref_ratio_of(const struct pmu_caps *c, struct ref_ratio *r, char *why, size_t n)
{
	enum intel_uarch u = intel_core_uarch_of(c);
	const char *name = intel_uarch_name(u);

	if (c->vendor != PMU_VENDOR_INTEL) {
		ksnprintf(why, n, "not an Intel part");
		return REF_UNKNOWN;
	}
	if (u >= INTEL_NEHALEM && u <= INTEL_BROADWELL) {
		uint64_t v = 0;
		int vec = rdmsr_safe(MSR_PLATFORM_INFO, &v);

		r->num = (v >> 8) & 0xff;
		r->den = 1;
		r->where = "MSR_PLATFORM_INFO[15:8]";
		if (vec || !r->num) {
			ksnprintf(
				why, n,
				"%s reports the maximum non-turbo ratio in MSR_PLATFORM_INFO[15:8]: %s %#lx",
				name, vec ? "RDMSR raised vector" : "it reads", vec ? (uint64_t)vec : v);
			return REF_MISSING;
		}
		return REF_REPORTED;
	}
	if (u == INTEL_SKYLAKE || u == INTEL_ICELAKE) {
		struct cpuid_regs l = { 0 };

		if (c->max_leaf >= 0x15)
			l = cpuid(0x15);
		r->num = l.ebx;
		r->den = l.eax;
		r->where = "CPUID.15H EBX/EAX";
		if (!r->num || !r->den) {
			ksnprintf(why, n,
				  "%s reports TSC ticks per crystal tick in CPUID.15H: %s EAX=%#x EBX=%#x",
				  name,
				  c->max_leaf >= 0x15 ? "it has" : "the highest basic leaf is below 15H,",
				  l.eax, l.ebx);
			return REF_MISSING;
		}
		return REF_REPORTED;
	}
	ksnprintf(why, n, "%s: its 3CH/01H clock is not one this check knows",
		  name ? name : "a model not in the table");
	return REF_UNKNOWN;
}

/* count events in tsc ticks against num/den ticks per event, within 5%
 * (the bracket's WRMSRs outside the count, a tick of each clock at either
 * end). */
static bool near_ratio(uint64_t count, uint64_t tsc, const struct ref_ratio *r, uint64_t *milli)
{
	uint64_t want = r->num * 1000 / r->den;

	*milli = count ? tsc * 1000 / count : 0;
	return count && (*milli > want ? *milli - want : want - *milli) * 20 <= want;
}

void pmu_test_check_ref_ratio(const char *what, const uint64_t count[2], const uint64_t tsc[2])
{
	const struct pmu_caps *c = pmu_caps();
	/* A hypervisor may scale the guest's TSC while the event counts the
	 * host's clock, and reports its own CPUID and MSR values: compared,
	 * not asserted. TCG's emulated parts are silicon. */
	bool vmm = c->hypervisor && c->hv != PMU_HV_TCG;
	struct ref_ratio r;
	char why[160];
	enum ref_known k = ref_ratio_of(c, &r, why, sizeof(why));

	if (k == REF_UNKNOWN) {
		diag("%s: TSC ratio not compared: %s", what, why);
		return;
	}
	if (k == REF_MISSING) {
		if (vmm)
			diag("%s: TSC ratio not compared under %s: %s", what, pmu_hv_name(c->hv), why);
		else
			check(false, "%s: %s", what, why);
		return;
	}
	uint64_t d_count = count[1] > count[0] ? count[1] - count[0] : 0;
	uint64_t d_tsc = tsc[1] > tsc[0] ? tsc[1] - tsc[0] : 0, m_long, m_diff;
	bool in_long = near_ratio(count[1], tsc[1], &r, &m_long);
	bool ok = near_ratio(d_count, d_tsc, &r, &m_diff) || in_long;

	if (vmm) {
		diag("%s: %lu.%03lu TSC ticks per tick (long window), %lu.%03lu by difference; %s says %lu/%lu under %s%s",
		     what, m_long / 1000, m_long % 1000, m_diff / 1000, m_diff % 1000, r.where, r.num, r.den,
		     pmu_hv_name(c->hv), ok ? "" : ": not asserted, a hypervisor may scale the guest's TSC");
		return;
	}
	if (ok)
		diag("%s: %lu.%03lu TSC ticks per tick (long window), %lu.%03lu by difference; %s says %lu/%lu",
		     what, m_long / 1000, m_long % 1000, m_diff / 1000, m_diff % 1000, r.where, r.num, r.den);
	check(ok,
	      "%s: expected one tick per %lu/%lu TSC ticks (%s) within 5%%, saw %lu counts in %lu ticks (%lu.%03lu per tick), %lu.%03lu by the windows' difference",
	      what, r.num, r.den, r.where, count[1], tsc[1], m_long / 1000, m_long % 1000, m_diff / 1000,
	      m_diff % 1000);
}
