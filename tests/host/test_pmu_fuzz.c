/* What a VMM may put in the PMU's CPUID leaves and IA32_PERF_CAPABILITIES,
 * fuzzed: CPUID.0AH (zero or huge widths, more counters than MSRs, event
 * and fixed bitmaps with holes, versions from the future), CPUID.23H's
 * sub-leaves, CPUID 0x80000022 (AMD PerfMonV2), and PERF_CAPABILITIES
 * (LBR and PEBS formats 0-0xF and 0x3F, baseline without a format, ...).
 * The MSRs behind them are emu/model's (a real shape), so the CPUID may
 * promise what the registers do not have.
 *
 * Every case must end with the probe's verdict and the LBR/PEBS decode:
 * counting, or a reason; LBRs and PEBS present, or a reason. A crash, a
 * division by zero or an out-of-bounds access aborts the program (ASan,
 * UBSan); a hang is caught by the case budget. Seeded: the same cases each
 * run (PMUTEST_FUZZ_SEED=N picks others). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/msr.h"
#include "emu/model/x86-pmu.h"
#include "lib/printf.h"
#include "pmu/intel/pebs.h"
#include "pmu/lbr.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"
#include "tests/host/emu_cpu.h"
#include "tests/host/hosttest.h"
#include "tests/host/pmu_model.h"

#define FUZZ_CASES 1500
#define FUZZ_SECONDS_MAX 120

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

/* A byte a VMM might give: 0, 1, a small count, the largest, or any. */
static uint32_t odd_byte(void)
{
	static const uint32_t picks[] = { 0, 1, 2, 3, 4, 6, 8, 16, 31, 32, 33, 48, 63, 64, 65, 127, 255 };
	return rnd() % 3 ? picks[rnd() % (sizeof(picks) / sizeof(picks[0]))] : (uint32_t)(rnd() & 0xff);
}

static uint32_t odd_word(void)
{
	switch (rnd() % 4) {
	case 0: return 0;
	case 1: return 0xffffffffu;
	case 2: return (uint32_t)rnd();
	default: return odd_byte() | odd_byte() << 8 | odd_byte() << 16 | odd_byte() << 24;
	}
}

/* One fuzzed CPU: emu/model registers (tests/host/emu_cpu.c), fuzzed
 * CPUID and PERF_CAPABILITIES. */
static struct {
	bool amd;
	uint32_t max_leaf;
	struct cpuid_regs leaf1, leaf0a, leaf23[6], leaf80000022, leaf80000001;
	uint64_t perf_caps;
	bool perf_caps_gp;
} fz;

/* The fuzzed leaves replace the model's; past the maximum leaf, zeros. */
static void fz_cpuid(unsigned cpu, uint32_t leaf, uint32_t sub, struct cpuid_regs *r)
{
	(void)cpu;
	if (leaf < 0x80000000u && leaf > fz.max_leaf) {
		memset(r, 0, sizeof(*r));
		return;
	}
	switch (leaf) {
	case 0: r->eax = fz.max_leaf; return;
	case 1: *r = fz.leaf1; return;
	case 0xa: *r = fz.leaf0a; return;
	case 0x23: *r = sub < 6 ? fz.leaf23[sub] : (struct cpuid_regs){ 0 }; return;
	case 0x80000001: *r = fz.leaf80000001; return;
	case 0x80000022: *r = fz.leaf80000022; return;
	default: return;
	}
}

static bool fz_rdmsr(unsigned cpu, uint32_t msr, uint64_t *val, int *rc)
{
	(void)cpu;
	if (msr != MSR_IA32_PERF_CAPABILITIES)
		return false;
	*rc = fz.perf_caps_gp ? MODEL_VEC_GP : (*val = fz.perf_caps, 0);
	return true;
}

/* A case: a real shape's registers, then what a VMM might claim. */
static void make_case(char *what, size_t n)
{
	static const char *const intel_shapes[] = { "core2duo", "Nehalem", "Haswell", "Skylake-Client",
						    "Icelake-Server" };
	const char *shape = intel_shapes[rnd() % 5];

	memset(&fz, 0, sizeof(fz));
	memset(&emu[0], 0, sizeof(emu[0]));
	emu[0].misc_enable = 1;
	fz.amd = rnd() % 4 == 0;
	if (fz.amd)
		x86pmu_shape(NULL, X86PMU_VENDOR_AMD, 0x19, 0x11, &emu[0].cfg);
	else
		x86pmu_shape(shape, X86PMU_VENDOR_INTEL, 6, 0, &emu[0].cfg);
	fz.max_leaf = (uint32_t[]){ 0x1, 0xa, 0x1f, 0x23, 0x23 }[rnd() % 5];
	fz.leaf1.eax = fz.amd ? 0x00a10f11 : (uint32_t)(rnd() % 2 ? 0x000506e3 : 0x000a0671);
	fz.leaf1.ecx = (uint32_t)rnd() & (BIT(CPUID_1_ECX_PDCM_BIT) | BIT(CPUID_1_ECX_DTES64_BIT) | BIT(31));
	fz.leaf1.ecx |= BIT(CPUID_1_ECX_CX16_BIT);
	fz.leaf1.edx = (uint32_t)rnd() & BIT(CPUID_1_EDX_DS_BIT);
	fz.leaf0a = (struct cpuid_regs){ .eax = odd_byte() | odd_byte() << 8 | odd_byte() << 16 |
						odd_byte() << 24,
					 .ebx = odd_word(),
					 .ecx = odd_word(),
					 .edx = odd_byte() | odd_byte() << 5 | (rnd() % 2) << 15 };
	for (unsigned i = 0; i < 6; i++)
		fz.leaf23[i] = (struct cpuid_regs){ odd_word(), odd_word(), odd_word(), odd_word() };
	fz.leaf80000001.ecx = (uint32_t)rnd() & (BIT(23) | BIT(2));
	fz.leaf80000022 = (struct cpuid_regs){ .eax = odd_word() & 0x7, .ebx = odd_word() };
	/* LBR format (5:0), PEBS trap/arch regs (6,7), PEBS format (11:8),
	 * FREEZE_WHILE_SMM, FW writes, PEBS baseline, PERF_METRICS, and
	 * anything above. */
	fz.perf_caps = (rnd() % 3 ? (uint64_t[]){ 0, 1, 4, 5, 6, 7, 0x1f, 0x3f }[rnd() % 8] : rnd() & 0x3f) |
		       (rnd() & 0xc0) | (rnd() % 17) << 8 | (rnd() & 0xf000) |
		       (rnd() % 8 == 0 ? rnd() << 16 : 0);
	fz.perf_caps_gp = rnd() % 8 == 0;
	ksnprintf(
		what, n,
		"%s shape %s, max leaf %#x, 01H ECX %#x EDX %#x, 0AH %#x %#x %#x %#x, 23H.0 EAX %#x, 80000022H %#x %#x, PERF_CAPABILITIES %s%#lx",
		fz.amd ? "AMD" : "Intel", fz.amd ? "Zen 4" : shape, fz.max_leaf, fz.leaf1.ecx, fz.leaf1.edx,
		fz.leaf0a.eax, fz.leaf0a.ebx, fz.leaf0a.ecx, fz.leaf0a.edx, fz.leaf23[0].eax,
		fz.leaf80000022.eax, fz.leaf80000022.ebx, fz.perf_caps_gp ? "#GP, else " : "",
		(unsigned long)fz.perf_caps);
}

HT_TEST(cpuid_and_perf_caps_fuzz)
{
	static const struct pmu_init_opts opts = { .workload = model_tick_probe };
	const char *env = getenv("PMUTEST_FUZZ_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : 0x22;
	time_t start = time(NULL);
	unsigned counting = 0, refused = 0, bad = 0;
	char what[512];

	rng_state = seed ? seed : 1;
	emu_hooks = (struct emu_cpu_hooks){ .cpuid = fz_cpuid, .rdmsr = fz_rdmsr };
	for (unsigned i = 0; i < FUZZ_CASES; i++) {
		struct model_cpu_config mc = { .cpu_ops = &emu_cpu_ops };
		struct pmu_pebs_caps pebs;
		struct pmu_lbr_caps lbr;

		make_case(what, sizeof(what));
		mc.vendor = fz.amd ? "AuthenticAMD" : "GenuineIntel";
		model_init_custom(&mc, 1);
		pmu_cpu_init(&opts);
		struct pmu_cpu *pc = pmu_cpu_of(0);
		pmu_pebs_decode(pmu_caps(), &pebs);
		pmu_lbr_decode(pmu_caps(), &lbr);
		bool ok = pc && (pc->counting || pc->reason[0]) && (pebs.present || pebs.why[0]) &&
			  (lbr.kind != PMU_LBR_NONE || lbr.why[0]);
		if (!ok && bad++ < 5)
			HT_CHECK(
				false,
				"case %u (seed %#lx): no verdict or no reason: counting %d \"%s\", PEBS %d \"%s\", LBR %d \"%s\"; %s",
				i, (unsigned long)seed, pc ? pc->counting : -1, pc ? pc->reason : "",
				pebs.present, pebs.why, lbr.kind, lbr.why, what);
		if (pc && pc->counting)
			counting++;
		else
			refused++;
		/* PEBS's record size, which callers divide by, is never 0. */
		if (pebs.present)
			HT_CHECK(pmu_pebs_record_size(&pebs, pebs.adaptive, 0) > 0, "PEBS record size 0: %s",
				 what);
		if (time(NULL) - start > FUZZ_SECONDS_MAX) {
			HT_CHECK(false, "case %u: %d s spent, more than %d: a hang? %s", i,
				 (int)(time(NULL) - start), FUZZ_SECONDS_MAX, what);
			break;
		}
	}
	HT_CHECK(bad == 0, "%u cases without a verdict", bad);
	/* Both outcomes occur: the fuzz reaches past the first refusal. */
	HT_CHECK(counting > 0 && refused > 0, "%u cases counting, %u refused", counting, refused);
	printf("# %u cases (seed %#lx): %u counting, %u refused with a reason, in %d s\n", FUZZ_CASES,
	       (unsigned long)seed, counting, refused, (int)(time(NULL) - start));
}

HT_MAIN("pmu_fuzz")
