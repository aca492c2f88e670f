/* PMU capabilities and the probe's verdict, per CPU: what each CPU's
 * CPUID says, and that the decoded register map holds up on the machine.
 * These run everywhere (no counting needed), so every CPU reports. */
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "arch/x86/vectors.h"
#include "pmu/intel/caps.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/ktest.h"
#include "tests/pmu/pmu_common.h"

static void diag_line(void *ctx, const char *line)
{
	(void)ctx;
	diag("%s", line);
}

/* IA32_PERF_CAPABILITIES exists exactly where CPUID.01H:ECX.PDCM[15] says
 * so (SDM vol. 2A, CPUID, "PDCM: Perfmon and Debug Capability"; vol. 4,
 * table 2-2, IA32_PERF_CAPABILITIES "If CPUID.01H:ECX[15] = 1"): with PDCM
 * the probe read it, without PDCM a read is of an MSR that is not there
 * and raises #GP. A hypervisor's MSR handling need not follow the CPUID
 * it shows: there a read that does not fault is reported, not failed. */
static void check_pdcm(const struct pmu_caps *c)
{
	bool vmm = c->hypervisor && c->hv != PMU_HV_TCG;
	uint64_t v = 0;
	int vec;

	if (intel_caps(c)->pdcm) {
		check(intel_caps(c)->perf_caps_valid,
		      "CPUID.01H:ECX.PDCM[15]=1: expected IA32_PERF_CAPABILITIES (MSR %#x) to read",
		      MSR_IA32_PERF_CAPABILITIES);
		return;
	}
	vec = pmu_hw_rdmsr(MSR_IA32_PERF_CAPABILITIES, &v);
	if (vec == 0 && vmm) {
		diag("CPUID.01H:ECX.PDCM[15]=0, yet IA32_PERF_CAPABILITIES read %#lx under %s: its MSR handling, not checked",
		     v, pmu_hv_name(c->hv));
		return;
	}
	check(vec == X86_VEC_GP,
	      "CPUID.01H:ECX.PDCM[15]=0: rdmsr IA32_PERF_CAPABILITIES (MSR %#x) expected #GP, saw %s %d (%#lx)",
	      MSR_IA32_PERF_CAPABILITIES, vec ? "vector" : "no fault", vec, v);
}

KTEST("pmu.caps", decoded, NULL, KTEST_PER_CPU,
      "caps printed; widths 1..64, hybrid core type, full-width flag")
{
	struct pmu_cpu *pc = pmu_cpu_ensure();

	if (!pc)
		ktest_skip("CPU index beyond PMU_MAX_CPUS");
	check(pmu_cpu_initialised(pc), "expected the PMU state of cpu %u initialised", this_cpu()->cpu);
	pmu_caps_print(pmu_cpu_caps(pc), "", diag_line, NULL);
	const struct pmu_caps *c = pmu_cpu_caps(pc);
	if (!pmu_cpu_has_backend(pc) || !c->version)
		ktest_skip("%s", pmu_cpu_reason(pc)[0] ? pmu_cpu_reason(pc)
						       : "no PMU"); /* never a pass without a PMU */
	/* Counters the family implies (AMD legacy) exist only if the probe saw them count. */
	if (c->counters_assumed && !pmu_cpu_counts(pc))
		ktest_skip("%s", pmu_cpu_reason(pc));
	/* CPUID consistency the rest of the checks rely on. */
	check(c->gp_width >= 1 && c->gp_width <= 64, "expected a GP width of 1..64 bits, CPUID.0AH says %u",
	      c->gp_width);
	check(!c->fixed_mask || (c->fixed_width >= 1 && c->fixed_width <= 64),
	      "expected a fixed width of 1..64 bits with fixed counters present, CPUID.0AH says %u",
	      c->fixed_width);
	check(!intel_caps(c)->hybrid || intel_caps(c)->core_type == CPUID_1A_CORE_TYPE_ATOM ||
		      intel_caps(c)->core_type == CPUID_1A_CORE_TYPE_CORE,
	      "hybrid part: expected core type 0x20 (Atom) or 0x40 (Core) in CPUID.1AH, saw %#x",
	      intel_caps(c)->core_type);
	check(intel_caps(c)->full_width_write == (intel_caps(c)->perf_caps_valid &&
						  ((intel_caps(c)->perf_caps >> PERF_CAP_FW_WRITE_BIT) & 1)),
	      "full-width flag must follow IA32_PERF_CAPABILITIES[13] (%#lx)", intel_caps(c)->perf_caps);
	if (c->vendor == PMU_VENDOR_INTEL)
		check_pdcm(c);
}

KTEST("pmu.caps", probe_verdict, NULL, KTEST_PER_CPU, "counters count, RDPMC works, every counter MSR reads")
{
	struct pmu_cpu *pc = pmu_cpu_ensure();

	if (!pc)
		ktest_skip("CPU index beyond PMU_MAX_CPUS");
	if (pmu_inuse_found(pc))
		pmu_inuse_report(pc, diag_line, NULL);
	if (!pmu_cpu_counts(pc)) {
		/* Not a failure: the reason is the product here. */
		check(pmu_cpu_reason(pc)[0] != '\0', "a CPU whose counters do not count must say why");
		ktest_skip("%s", pmu_cpu_reason(pc));
	}
	char smi[256];
	diag("%s", pmu_test_smi_setup(smi, sizeof(smi)));
	check(pmu_cpu_rdpmc_ok(pc), "counting CPU: expected RDPMC to work at CPL 0");
	check(pmu_cpu_probe_gp(pc) >= 0 && pmu_has_gp(pmu_cpu_caps(pc), (unsigned)pmu_cpu_probe_gp(pc)),
	      "expected the probe to have used an existing GP counter, used %d", pmu_cpu_probe_gp(pc));
	/* Every GP counter the caps list is really there: its select reads. */
	for (unsigned x = 0; x < PMU_MAX_GP; x++) {
		uint64_t v;
		if (!pmu_has_gp(pmu_cpu_caps(pc), x))
			continue;
		int vec = pmu_hw_rdmsr(pmu_evtsel_msr(pmu_cpu_caps(pc), x), &v);
		check(vec == 0, "rdmsr IA32_PERFEVTSEL%u (MSR %#x): expected no fault, saw vector %d", x,
		      pmu_evtsel_msr(pmu_cpu_caps(pc), x), vec);
	}
	for (unsigned i = 0; i < PMU_MAX_FIXED; i++) {
		uint64_t v;
		if (!pmu_has_fixed(pmu_cpu_caps(pc), i))
			continue;
		int vec = pmu_hw_rdmsr(pmu_fixed_msr(pmu_cpu_caps(pc), i), &v);
		check(vec == 0, "rdmsr IA32_FIXED_CTR%u: expected no fault, saw vector %d", i, vec);
	}
}
