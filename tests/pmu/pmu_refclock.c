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

/* Golden Cove, Gracemont and their successors (below). */
static bool ref_at_tsc(enum intel_uarch u)
{
	switch (u) {
	case INTEL_ALDERLAKE:
	case INTEL_SAPPHIRERAPIDS:
	case INTEL_METEORLAKE:
	case INTEL_ARROWLAKE:
	case INTEL_LUNARLAKE:
	case INTEL_PANTHERLAKE:
	case INTEL_GRANITERAPIDS:
	case INTEL_NOVALAKE:
	case INTEL_GRACEMONT:
	case INTEL_CRESTMONT:
	case INTEL_SKYMONT:
	case INTEL_DARKMONT:
	case INTEL_ARCTICWOLF: return true;
	default: return false;
	}
}

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
 * From Golden Cove and Gracemont on the event is CPU_CLK_UNHALTED.REF_TSC_P,
 * "the same incrementing frequency as the time stamp counter" (Intel's event
 * lists, github.com/intel/perfmon at 6dadedf: ADL, SPR/EMR, MTL, ARL, LNL,
 * PTL, GNR, NVL, SRF, GRR and CWF <part>_<core>_core.json): one count per
 * TSC tick, whatever CPUID.15H says of the crystal.
 *
 * Other parts are left alone: Core 2's bus clock is in no register, and
 * Tiger Lake, Rocket Lake, the earlier Atoms and the parts no event list
 * covers yet (Diamond Rapids) are not checked here. */
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
	if (ref_at_tsc(u)) {
		r->num = r->den = 1;
		r->where = "CPU_CLK_UNHALTED.REF_TSC_P (the TSC's rate)";
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

/* The span between the two readings of the running counter, in TSC
 * ticks (about 7 ms at 3 GHz: thousands of ticks of the slowest clock),
 * and the most two TSC reads around one counter read may lie apart (a
 * reading taken while the vCPU was preempted, or an interrupt, is taken
 * again). The clocks run on while a vCPU waits, so neither the host's
 * load nor the bracket's cost enters the rate; the readings' own spread
 * is at most 1/500 of the span. */
#define REF_SPAN_TICKS ((uint64_t)20 * 1000 * 1000)
#define REF_PAIR_GAP (REF_SPAN_TICKS / 500)
#define REF_PAIR_TRIES 1000

/* RDPMC of GP counter x between two RDTSCs: the count at *tsc, the
 * middle of the two. False when no try kept them REF_PAIR_GAP apart. */
static bool reading(unsigned x, uint64_t mask, uint64_t *tsc, uint64_t *count)
{
	for (unsigned i = 0; i < REF_PAIR_TRIES; i++) {
		uint64_t a = rdtsc(), c = rdpmc(x), b = rdtsc();

		if (b - a <= REF_PAIR_GAP) {
			*tsc = a + (b - a) / 2;
			*count = c & mask;
			return true;
		}
	}
	return false;
}

void pmu_test_check_ref_ratio(struct pmu_event *ev)
{
	const struct pmu_caps *c = pmu_caps();
	/* A hypervisor may scale the guest's TSC while the event counts the
	 * host's clock, and reports its own CPUID and MSR values: compared,
	 * not asserted. TCG's emulated parts are silicon. */
	bool vmm = c->hypervisor && c->hv != PMU_HV_TCG;
	struct ref_ratio r;
	char why[160], what[48];
	enum ref_known k = ref_ratio_of(c, &r, why, sizeof(why));

	ksnprintf(what, sizeof(what), "ref-cycles on IA32_PMC%d", ev->hw.idx);
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
	uint64_t mask = pmu_width_mask(ev->hw.width), t0 = 0, c0 = 0, t1 = 0, c1 = 0;
	bool was_on = irq_save();

	irq_disable();
	bool ok = pmu_event_enable(ev) == PMU_OK && reading((unsigned)ev->hw.idx, mask, &t0, &c0);
	/* Memory and the TSC only: nothing that halts the core, which
	 * stops reference cycles. */
	while (ok && rdtsc() - t0 < REF_SPAN_TICKS)
		__asm__ volatile("" ::: "memory");
	ok = ok && reading((unsigned)ev->hw.idx, mask, &t1, &c1);
	pmu_event_disable(ev);
	irq_restore(was_on);
	if (!ok) {
		diag("%s: no two readings %lu TSC ticks apart at most in %u tries (the host did not run this CPU?): TSC ratio not compared",
		     what, REF_PAIR_GAP, REF_PAIR_TRIES);
		return;
	}
	/* TSC ticks per count, in thousandths, against num/den: within 2%
	 * (the readings' spread, a tick of the slow clock at either end). */
	uint64_t d_count = (c1 - c0) & mask, d_tsc = t1 - t0;
	uint64_t got = d_count ? d_tsc * 1000 / d_count : 0, want = r.num * 1000 / r.den;
	bool near = d_count && (got > want ? got - want : want - got) * 50 <= want;

	if (vmm) {
		diag("%s: %lu counts in %lu TSC ticks, %lu.%03lu ticks per count; %s says %lu/%lu under %s%s",
		     what, d_count, d_tsc, got / 1000, got % 1000, r.where, r.num, r.den, pmu_hv_name(c->hv),
		     near ? "" : ": not asserted, a hypervisor may scale the guest's TSC");
		return;
	}
	diag("%s: %lu counts in %lu TSC ticks, %lu.%03lu ticks per count; %s says %lu/%lu", what, d_count,
	     d_tsc, got / 1000, got % 1000, r.where, r.num, r.den);
	check(near, "%s: expected one count per %lu/%lu TSC ticks (%s) within 2%%, saw %lu in %lu ticks",
	      what, r.num, r.den, r.where, d_count, d_tsc);
}
