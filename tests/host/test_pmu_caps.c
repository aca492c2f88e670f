/* Host tests of capability decoding (pmu/intel/core.c, pmu/cpu.c, pmu/caps.c)
 * on every model profile: CPUID.0AH fields, the v5 fixed bitmap, PDCM and
 * IA32_PERF_CAPABILITIES, hybrid per-CPU caps, the register map. */
#include "arch/x86/msr.h"
#include "pmu/intel/caps.h"
#include "pmu/pmu_internal.h"
#include "tests/host/hosttest.h"
#include "tests/host/pmu_model.h"

static void boot(enum model_profile p, bool full_width)
{
	struct pmu_init_opts o = { .workload = model_tick_probe };
	model_init(p, full_width);
	pmu_init_all(&o, model_run_on);
}

static const struct pmu_caps *caps_of(unsigned cpu)
{
	return &pmu_cpu_of(cpu)->caps;
}

/* Collects printed lines into one buffer, newline separated. */
static char printed[8192];
static void collect(void *ctx, const char *line)
{
	(void)ctx;
	strncat(printed, line, sizeof(printed) - strlen(printed) - 2);
	strcat(printed, "\n");
}

HT_TEST(no_pmu)
{
	boot(MODEL_NO_PMU, false);
	const struct pmu_caps *c = caps_of(0);
	HT_CHECK_EQ(c->vendor, PMU_VENDOR_INTEL);
	HT_CHECK_STR(c->vendor_id, "GenuineIntel");
	HT_CHECK_EQ(c->version, 0);
	HT_CHECK_EQ(c->gp_mask, 0);
	HT_CHECK_EQ(c->evtsel_base, 0);
	HT_CHECK_EQ(c->global_ctrl, 0);
	HT_CHECK_EQ(c->fixed_ctrl, 0);
}

HT_TEST(v1)
{
	boot(MODEL_V1, false);
	const struct pmu_caps *c = caps_of(0);
	HT_CHECK_EQ(c->family, 6);
	HT_CHECK_EQ(c->model, 0xe);
	HT_CHECK_EQ(c->version, 1);
	HT_CHECK_EQ(c->num_gp, 2);
	HT_CHECK_EQ(c->gp_width, 40);
	HT_CHECK_EQ(c->gp_mask, 0x3);
	HT_CHECK_EQ(c->fixed_mask, 0);
	HT_CHECK_EQ(c->events_len, 7);
	HT_CHECK_EQ(c->events_avail, 0x7f);
	HT_CHECK_EQ(c->global_ctrl, 0);
	HT_CHECK_EQ(c->fixed_ctrl, 0);
	HT_CHECK_EQ(c->evtsel_base, MSR_IA32_PERFEVTSEL0);
	HT_CHECK_EQ(c->ctr_base, MSR_IA32_PMC0);
	HT_CHECK_EQ(c->ctr_write_base, MSR_IA32_PMC0);
	HT_CHECK_EQ(c->evtsel_reserved, 0xffffffff00000000ull | BIT(PERFEVTSEL_ANY_BIT));
	HT_CHECK(!intel_caps(c)->pdcm, "v1 profile has no PDCM");
}

HT_TEST(v2)
{
	boot(MODEL_V2, false);
	const struct pmu_caps *c = caps_of(1);
	HT_CHECK_EQ(c->version, 2);
	HT_CHECK_EQ(c->model, 0xf);
	HT_CHECK_EQ(c->num_fixed, 3);
	HT_CHECK_EQ(c->fixed_width, 40);
	HT_CHECK_EQ(c->fixed_mask, 0x7);
	HT_CHECK_EQ(c->fixed_base, MSR_IA32_FIXED_CTR0);
	HT_CHECK_EQ(c->fixed_ctrl, MSR_IA32_FIXED_CTR_CTRL);
	HT_CHECK_EQ(c->global_ctrl, MSR_IA32_PERF_GLOBAL_CTRL);
	HT_CHECK_EQ(c->global_status, MSR_IA32_PERF_GLOBAL_STATUS);
	HT_CHECK_EQ(c->global_ovf, MSR_IA32_PERF_GLOBAL_OVF_CTRL);
	HT_CHECK_EQ(c->global_status_set, 0);
	HT_CHECK_EQ(c->global_inuse, 0);
	HT_CHECK_EQ(c->global_ctrl_reset, 0x3);
	HT_CHECK_EQ(c->global_ctrl_reserved, ~0x700000003ull);
	HT_CHECK_EQ(c->fixed_ctrl_reserved, ~0xbbbull); /* no AnyThread before v3 */
	HT_CHECK(intel_caps(c)->pdcm && intel_caps(c)->perf_caps_valid, "PDCM and PERF_CAPABILITIES");
	HT_CHECK_EQ(intel_caps(c)->perf_caps, 0x1);
	HT_CHECK_EQ(intel_caps(c)->lbr_format, 1);
	HT_CHECK(!intel_caps(c)->full_width_write, "no full-width writes");
	HT_CHECK_EQ(c->ctr_write_base, MSR_IA32_PMC0);
}

HT_TEST(v4_full_width_on_and_off)
{
	boot(MODEL_V4, true);
	const struct pmu_caps *c = caps_of(0);
	HT_CHECK_EQ(c->version, 4);
	HT_CHECK_EQ(c->model, 0x5e);
	HT_CHECK_STR(c->uarch, "Skylake");
	HT_CHECK_EQ(intel_caps(c)->offcore_msrs, 2);
	HT_CHECK_EQ(c->gp_mask, 0xf);
	HT_CHECK_EQ(c->gp_width, 48);
	HT_CHECK_EQ(intel_caps(c)->perf_caps, 0x33c5);
	HT_CHECK(intel_caps(c)->full_width_write, "PERF_CAPABILITIES[13] set");
	HT_CHECK_EQ(c->ctr_write_base, MSR_IA32_A_PMC0);
	HT_CHECK_EQ(intel_caps(c)->lbr_format, 5);
	HT_CHECK_EQ(intel_caps(c)->pebs_format, 3);
	HT_CHECK(intel_caps(c)->pebs_trap && intel_caps(c)->pebs_arch_regs && c->freeze_smm,
		 "PEBS trap, arch regs, SMM freeze");
	HT_CHECK(!intel_caps(c)->pebs_baseline && !intel_caps(c)->perf_metrics, "no baseline, no metrics");
	HT_CHECK_EQ(c->global_status_set, MSR_IA32_PERF_GLOBAL_STATUS_SET);
	HT_CHECK_EQ(c->global_inuse, MSR_IA32_PERF_GLOBAL_INUSE);
	HT_CHECK_EQ(c->fixed_ctrl_reserved, ~0xfffull);
	HT_CHECK_EQ(c->evtsel_reserved, 0xffffffff00000000ull);

	boot(MODEL_V4, false);
	c = caps_of(0);
	HT_CHECK_EQ(intel_caps(c)->perf_caps, 0x13c5);
	HT_CHECK(!intel_caps(c)->full_width_write, "PERF_CAPABILITIES[13] clear");
	HT_CHECK_EQ(c->ctr_write_base, MSR_IA32_PMC0);
}

HT_TEST(v5_fixed_bitmap_with_gap)
{
	boot(MODEL_V5_GAP, true);
	const struct pmu_caps *c = caps_of(0);
	HT_CHECK_EQ(c->version, 5);
	HT_CHECK_EQ(c->num_fixed, 2);
	HT_CHECK_EQ(c->fixed_mask, 0xb);
	HT_CHECK(pmu_has_fixed(c, 3) && !pmu_has_fixed(c, 2), "fixed 3 yes, fixed 2 no");
	HT_CHECK_EQ(c->events_len, 8);
	HT_CHECK_EQ(c->events_avail, 0xff);
	/* Bit 48 lets PERF_METRICS count (PERF_CAPABILITIES[15] and fixed 3). */
	HT_CHECK_EQ(c->global_ctrl_reserved, ~(0xffull | 0xbull << 32 | 1ull << 48));
	HT_CHECK_EQ(c->fixed_ctrl_reserved, ~0xf0ffull);
	HT_CHECK(intel_caps(c)->pebs_baseline && intel_caps(c)->perf_metrics, "baseline and metrics");
	HT_CHECK_EQ(intel_caps(c)->pebs_format, 4);
}

HT_TEST(hybrid_caps_per_cpu)
{
	boot(MODEL_HYBRID, false);
	const struct pmu_caps *p = caps_of(0), *p1 = caps_of(1), *e = caps_of(2);
	HT_CHECK(intel_caps(p)->hybrid && intel_caps(e)->hybrid, "CPUID.07H:EDX[15] on both");
	HT_CHECK_EQ(intel_caps(p)->core_type, 0x40);
	HT_CHECK_EQ(intel_caps(e)->core_type, 0x20);
	HT_CHECK_EQ(intel_caps(p)->native_model, 1);
	HT_CHECK_EQ(intel_caps(e)->native_model, 2);
	HT_CHECK(intel_caps(p)->leaf23 && intel_caps(e)->leaf23, "leaf 0x23 used");
	HT_CHECK_EQ(p->gp_mask, 0xff);
	HT_CHECK_EQ(e->gp_mask, 0x3f);
	HT_CHECK_EQ(p->fixed_mask, 0xf);
	HT_CHECK_EQ(e->fixed_mask, 0x7);
	HT_CHECK_EQ(e->num_gp, 6);
	HT_CHECK(pmu_caps_same(p, p1), "CPUs 0 and 1 are one type");
	HT_CHECK(!pmu_caps_same(p, e), "CPUs 0 and 2 differ");
}

HT_TEST(leaf23_gp_bitmap_with_hole)
{
	/* A VMM may hand out GP counters 0, 1 and 3 only. */
	struct model_cpu_config cfg = *(model_init(MODEL_HYBRID, false), model_config(0));
	cfg.leaf23_gp = 0xb;
	model_init_custom(&cfg, 1);
	pmu_cpu_init(NULL);
	const struct pmu_caps *c = caps_of(0);
	HT_CHECK_EQ(c->gp_mask, 0xb);
	HT_CHECK_EQ(c->num_gp, 4);
	HT_CHECK(!pmu_has_gp(c, 2), "no PMC2");
	HT_CHECK_EQ(c->global_ctrl_reset, 0xb);
}

/* Alder/Raptor Lake without leaf 23H: CPUID.0AH gives the counters both
 * core types share, so a P-core adds PMC6-7 and FIXED_CTR3 as Linux does;
 * an E-core, a P-core whose leaf 0AH already lists its own counters (the
 * E-cores off in the BIOS), another hybrid model and a vCPU keep CPUID's. */
static const struct pmu_caps *adl_core(uint32_t signature, uint8_t core_type, uint8_t gp, uint8_t fixed,
				       bool hypervisor)
{
	struct model_cpu_config cfg = *(model_init(MODEL_HYBRID, false), model_config(0));
	cfg.signature = signature;
	cfg.leaf23 = false;
	cfg.core_type = core_type;
	cfg.num_gp = gp;
	cfg.num_fixed = fixed;
	cfg.hypervisor = hypervisor;
	model_init_custom(&cfg, 1);
	pmu_cpu_init(NULL);
	return caps_of(0);
}

HT_TEST(alder_lake_p_core_counters)
{
	const struct pmu_caps *c = adl_core(0x000906a3, 0x40, 6, 3, false); /* model 0x9a */
	HT_CHECK_EQ(c->gp_mask, 0xff);
	HT_CHECK_EQ(c->num_gp, 8);
	HT_CHECK_EQ(c->fixed_mask, 0xf);
	HT_CHECK_EQ(c->global_ctrl_reset, 0xff);
	HT_CHECK(c->counters_added != NULL, "the addition is named");
	c = adl_core(0x000b06f1, 0x40, 6, 3, false); /* Raptor Lake-S, 0xbf */
	HT_CHECK_EQ(c->gp_mask, 0xff);
	c = adl_core(0x000906a3, 0x20, 6, 3, false);
	HT_CHECK_EQ(c->gp_mask, 0x3f);
	HT_CHECK_EQ(c->fixed_mask, 0x7);
	HT_CHECK(c->counters_added == NULL, "nothing added on an E-core");
	c = adl_core(0x000906a3, 0x40, 8, 4, false);
	HT_CHECK_EQ(c->gp_mask, 0xff);
	HT_CHECK_EQ(c->fixed_mask, 0xf);
	c = adl_core(0x000a06a4, 0x40, 6, 3, false); /* Meteor Lake (0xaa): not in the rule */
	HT_CHECK_EQ(c->gp_mask, 0x3f);
	c = adl_core(0x000906a3, 0x40, 6, 3, true);
	HT_CHECK_EQ(c->gp_mask, 0x3f);
}

HT_TEST(version2_edx_quirk_bare_metal_only)
{
	struct model_cpu_config cfg = *(model_init(MODEL_V2, false), model_config(0));
	cfg.num_fixed = 0;
	cfg.fixed_width = 0;
	model_init_custom(&cfg, 1);
	pmu_cpu_init(NULL);
	HT_CHECK_EQ(caps_of(0)->fixed_mask, 0x7);
	HT_CHECK_EQ(caps_of(0)->fixed_width, 40);
	cfg.hypervisor = true;
	model_init_custom(&cfg, 1);
	pmu_cpu_init(NULL);
	HT_CHECK_EQ(caps_of(0)->fixed_mask, 0);
}

HT_TEST(events_vector_unavailable_and_unknown_bits)
{
	struct model_cpu_config cfg = *(model_init(MODEL_V4, false), model_config(0));
	/* Bits 0-12 are known (the top-down events and LBR inserts at 8-12);
	 * bit 13 is past them. */
	cfg.ebx_len = 14;
	cfg.ebx_unavail = (1u << 5) | (1u << 8);
	model_init_custom(&cfg, 1);
	pmu_cpu_init(NULL);
	const struct pmu_caps *c = caps_of(0);
	HT_CHECK_EQ(c->events_avail, 0x1edf);
	HT_CHECK_EQ(c->events_unknown, 0x2000);
	/* Bits at or past the vector length say nothing: not available. */
	cfg.ebx_len = 3;
	cfg.ebx_unavail = 0;
	model_init_custom(&cfg, 1);
	pmu_cpu_init(NULL);
	HT_CHECK_EQ(caps_of(0)->events_avail, 0x7);
	HT_CHECK_EQ(caps_of(0)->events_unknown, 0);
}

HT_TEST(other_vendor_has_no_backend)
{
	struct model_cpu_config cfg = *(model_init(MODEL_V4, false), model_config(0));
	cfg.vendor = "CentaurHauls"; /* VIA/Zhaoxin: no backend (AMD has one, pmu/amd/core.c) */
	model_init_custom(&cfg, 1);
	pmu_cpu_init(NULL);
	HT_CHECK(pmu_cpu_of(0)->ops == NULL, "no ops");
	HT_CHECK_EQ(caps_of(0)->vendor, PMU_VENDOR_UNKNOWN);
	HT_CHECK_STR(pmu_skip_reason(),
		     "no pmutest backend for vendor \"CentaurHauls\" yet (CPUID.0AH.EAX[7:0]=4)");
	/* A vendor without a backend and CPUID.0AH all zero. */
	cfg = *(model_init(MODEL_NO_PMU, false), model_config(0));
	cfg.vendor = "CentaurHauls";
	model_init_custom(&cfg, 1);
	pmu_cpu_init(NULL);
	HT_CHECK_STR(
		pmu_skip_reason(),
		"no architectural PMU (CPUID.0AH.EAX[7:0]=0); no pmutest backend for vendor \"CentaurHauls\" yet");
}

/* The hypervisor by its signature (enum pmu_hv): a known one in any block,
 * Hyper-V only when nothing else answers, an unknown one named, and none
 * at all read without the CPUID.01H:ECX[31] bit. */
static enum pmu_hv hv_of(bool bit, const char *sig0, const char *sig1)
{
	struct model_cpu_config cfg = *(model_init(MODEL_V2, false), model_config(0));
	cfg.hypervisor = bit;
	cfg.hv_sig[0] = sig0;
	cfg.hv_sig[1] = sig1;
	model_init_custom(&cfg, 1);
	pmu_cpu_init(NULL);
	return caps_of(0)->hv;
}

HT_TEST(hypervisor_by_signature)
{
	static const char kvm[12] = "KVMKVMKVM\0\0";
	HT_CHECK_EQ(hv_of(false, kvm, NULL), PMU_HV_NONE);
	HT_CHECK_EQ(hv_of(true, NULL, NULL), PMU_HV_HIDDEN);
	HT_CHECK_STR(caps_of(0)->hv_signature, "");
	HT_CHECK_EQ(hv_of(true, kvm, NULL), PMU_HV_KVM);
	HT_CHECK_STR(caps_of(0)->hv_signature, "KVMKVMKVM");
	HT_CHECK_EQ(caps_of(0)->hv_leaf, 0x40000000);
	/* QEMU's KVM with Hyper-V enlightenments; Xen with Viridian. */
	HT_CHECK_EQ(hv_of(true, "Microsoft Hv", kvm), PMU_HV_KVM);
	HT_CHECK_EQ(caps_of(0)->hv_leaf, 0x40000100);
	HT_CHECK_EQ(hv_of(true, "Microsoft Hv", "XenVMMXenVMM"), PMU_HV_XEN);
	HT_CHECK_EQ(hv_of(true, "Microsoft Hv", NULL), PMU_HV_HYPERV);
	HT_CHECK_EQ(hv_of(true, "VMwareVMware", NULL), PMU_HV_VMWARE);
	HT_CHECK_EQ(hv_of(true, "TCGTCGTCGTCG", NULL), PMU_HV_TCG);
	HT_CHECK_EQ(hv_of(true, "bhyve bhyve ", NULL), PMU_HV_OTHER);
	HT_CHECK_STR(caps_of(0)->hv_signature, "bhyve bhyve ");
	printed[0] = '\0';
	pmu_caps_print(caps_of(0), "", collect, NULL);
	HT_CHECK(strstr(printed, ", under a hypervisor (CPUID 0x40000000: \"bhyve bhyve \")") != NULL,
		 "hypervisor in:\n%s", printed);
	/* An unknown block after a known one does not replace it. */
	HT_CHECK_EQ(hv_of(true, kvm, "bhyve bhyve "), PMU_HV_KVM);
	HT_CHECK_EQ(hv_of(true, "\x01\x02garbage...", NULL), PMU_HV_HIDDEN);
}

HT_TEST(caps_print_lines)
{
	boot(MODEL_V4, true);
	printed[0] = '\0';
	pmu_caps_print(caps_of(0), "> ", collect, NULL);
	HT_CHECK(strstr(printed, "> GenuineIntel family 0x6 model 0x5e stepping 3 (Skylake)\n") != NULL,
		 "vendor line in:\n%s", printed);
	HT_CHECK(
		strstr(printed,
		       "> architectural PMU v4: 4 GP counters x 48 bits (mask 0xf), fixed counters x 48 bits (mask 0x7, EDX[4:0]=3)\n") !=
			NULL,
		"counter line in:\n%s", printed);
	HT_CHECK(
		strstr(printed,
		       "available: cycles instructions ref-cycles llc-references llc-misses branches branch-misses; not available: topdown-slots") !=
			NULL,
		"events line in:\n%s", printed);
	HT_CHECK(
		strstr(printed,
		       "IA32_PERF_CAPABILITIES=0x33c5: full-width writes yes, LBR format 5, PEBS format 3") !=
			NULL,
		"perf caps line in:\n%s", printed);
	HT_CHECK(strstr(printed, "counter0 0xc1 (writes via 0x4c1)") != NULL, "registers line in:\n%s",
		 printed);

	boot(MODEL_NO_PMU, false);
	printed[0] = '\0';
	pmu_caps_print(caps_of(0), "", collect, NULL);
	HT_CHECK(strstr(printed, "no architectural PMU (CPUID.0AH.EAX[7:0]=0, max leaf 0xd)") != NULL,
		 "no-PMU line in:\n%s", printed);
}

HT_TEST(boot_report_one_block_per_cpu_type)
{
	boot(MODEL_HYBRID, false);
	printed[0] = '\0';
	pmu_boot_report(collect, NULL);
	HT_CHECK(strstr(printed, "pmu: cpu 0-1:\n") != NULL, "P-core block in:\n%s", printed);
	HT_CHECK(strstr(printed, "pmu: cpu 2-3:\n") != NULL, "E-core block in:\n%s", printed);
	HT_CHECK(strstr(printed, "core type 0x40 (Core)") && strstr(printed, "core type 0x20 (Atom)"),
		 "both core types in:\n%s", printed);
	HT_CHECK(strstr(printed, "pmu:   counters count (probe on IA32_PMC0)") != NULL, "verdict in:\n%s",
		 printed);
	HT_CHECK(strstr(printed, "pmu: no counter in use at boot on 4 CPU(s)") != NULL,
		 "in-use summary in:\n%s", printed);

	boot(MODEL_V2, false);
	printed[0] = '\0';
	pmu_boot_report(collect, NULL);
	HT_CHECK(strstr(printed, "pmu: cpu 0-3:\n") != NULL, "one block in:\n%s", printed);
	HT_CHECK(strstr(printed, "pmu: cpu 1") == NULL, "no second block in:\n%s", printed);
}

HT_MAIN("pmu_caps")
