/* Host tests of the client-uncore driver (pmu/intel_uncore.c) on the model:
 * detection and box count from MSR_UNC_CBO_CONFIG per layout, the refusals
 * (server, other vendors, absent MSRs), and the exact register sequence
 * enable / program each box / read / disable. */
#include "pmu/intel_uncore.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/host/hosttest.h"
#include "tests/host/pmu_model.h"

static void tick_probe(void *ctx)
{
	(void)ctx;
	model_tick_loop(PMU_PROBE_LOOPS);
}

static const struct pmu_init_opts opts = { .workload = tick_probe };

static void boot_cfg(const struct model_cpu_config *cfg)
{
	model_init_custom(cfg, 1);
	pmu_cpu_init(&opts);
	model_trace_clear();
}

static struct model_cpu_config snb_cfg(void)
{
	model_init(MODEL_SNB_CLIENT, false);
	return *model_config(0);
}

static const char *trace(void)
{
	static char t[4096];
	model_trace_format(t, sizeof(t));
	return t;
}

HT_TEST(detect_sandy_bridge_client)
{
	struct model_cpu_config c = snb_cfg();
	struct pmu_uncore u;

	boot_cfg(&c);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_OK);
	HT_CHECK(u.model != NULL, "%s", u.why);
	if (!u.model)
		return;
	HT_CHECK_STR(u.model->name, "Sandy/Ivy Bridge client");
	HT_CHECK_EQ(u.model->global_ctrl, 0x391);
	HT_CHECK_EQ(u.cbo_config, 4);
	HT_CHECK_EQ(u.boxes_reported, 4);
	HT_CHECK_EQ(u.cores, 4);
	HT_CHECK_EQ(u.nboxes, 4);
	HT_CHECK_EQ(u.width, 44);
	HT_CHECK_EQ(model_trace_len(), 0); /* detection only reads */
}

HT_TEST(box_count_per_layout)
{
	struct model_cpu_config c = snb_cfg();
	struct pmu_uncore u;

	/* Haswell: CONFIG holds count + 1 ("derive value by -1"). */
	c.signature = 0x000306c3, c.uncore = MODEL_UNCORE_HSW, c.uncore_cboxes = 3;
	boot_cfg(&c);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_OK);
	HT_CHECK_EQ(u.cbo_config, 4);
	HT_CHECK_EQ(u.nboxes, 3);

	/* More boxes reported than cores: bounded by the cores. */
	c = snb_cfg();
	c.uncore_cboxes = 6, c.cores_per_pkg = 2;
	boot_cfg(&c);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_OK);
	HT_CHECK_EQ(u.boxes_reported, 6);
	HT_CHECK_EQ(u.nboxes, 2);

	/* Skylake: global control at 0xE01, [4:0] slice selects; an 8-core
	 * count stops at the 7 boxes the table has addresses for. */
	c = snb_cfg();
	c.signature = 0x000906ec, c.version = 4, c.uncore = MODEL_UNCORE_SKL, c.uncore_cboxes = 8;
	c.cores_per_pkg = 8;
	boot_cfg(&c);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_OK);
	HT_CHECK_EQ(u.model ? u.model->global_ctrl : 0, 0xe01);
	HT_CHECK_EQ(u.boxes_reported, 8);
	HT_CHECK_EQ(u.nboxes, 7);
}

HT_TEST(refusals_name_the_reason)
{
	struct model_cpu_config c = snb_cfg();
	struct pmu_uncore u;
	struct pmu_caps amd = { .vendor = PMU_VENDOR_AMD, .vendor_id = "AuthenticAMD", .family = 0x19 };

	c.signature = 0x00050654; /* Skylake-SP, model 0x55 */
	boot_cfg(&c);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(u.why,
		     "family 6 model 0x55 is Skylake-SP/Cascade Lake server: its uncore is not implemented "
		     "(client C-boxes only)");

	c = snb_cfg();
	c.signature = 0x000006f6; /* Core 2, model 0xF */
	boot_cfg(&c);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(u.why, "no client uncore table for family 6 model 0xf");

	HT_CHECK_EQ(pmu_uncore_detect(&u, &amd), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(u.why, "client uncore C-boxes are Intel-only (vendor AuthenticAMD)");

	/* A hypervisor's Sandy Bridge without the uncore MSRs (TCG/KVM). */
	c = snb_cfg();
	c.uncore = MODEL_UNCORE_NONE, c.hypervisor = true;
	boot_cfg(&c);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_E_FAULT);
	HT_CHECK_STR(u.why,
		     "MSR_UNC_CBO_CONFIG (0x396) raised vector 13 on Sandy/Ivy Bridge client model 0x2a "
		     "(under a hypervisor, which does not expose the uncore)");

	/* MSRs that read 0 and drop writes (KVM with ignore_msrs). */
	c = snb_cfg();
	c.ignores_writes = true;
	boot_cfg(&c);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(u.why, "MSR_UNC_CBO_CONFIG (0x396) reads 0: no C-box to count with");
}

HT_TEST(register_sequence_enable_program_read_disable)
{
	struct model_cpu_config c = snb_cfg();
	struct pmu_uncore u;
	char why[PMU_REASON_LEN] = "";
	uint64_t v, sum = 0;

	boot_cfg(&c);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_OK);
	HT_CHECK(pmu_uncore_probe(&u) == NULL, "probe: %s", u.why);
	HT_CHECK_STR(trace(), "0x706<-0x5a5a5a5 0x706<-0");
	model_trace_clear();
	for (unsigned b = 0; b < u.nboxes; b++)
		HT_CHECK_EQ(pmu_uncore_program(&u, b, 0, UNC_CBO_LOOKUP_EVENT, UNC_CBO_LOOKUP_ANY_UMASK, why,
					       sizeof(why)),
			    PMU_OK);
	HT_CHECK_EQ(pmu_uncore_enable(&u), PMU_OK);
	HT_CHECK_STR(trace(), "0x706<-0 0x700<-0x408f34 0x716<-0 0x710<-0x408f34 0x726<-0 0x720<-0x408f34 "
			      "0x736<-0 0x730<-0x408f34 0x391<-0x2000000f");
	model_tick(&(struct model_work){ .cycles = 100, .llc_lookups = 1002 });
	model_trace_clear();
	HT_CHECK_EQ(pmu_uncore_disable(&u), PMU_OK);
	model_tick(&(struct model_work){ .cycles = 100, .llc_lookups = 5000 }); /* not counted */
	for (unsigned b = 0; b < u.nboxes; b++) {
		HT_CHECK_EQ(pmu_uncore_read(&u, b, 0, &v), PMU_OK);
		HT_CHECK_EQ(v, 1002 * (b + 1) / 4 - 1002 * b / 4);
		sum += v;
		HT_CHECK_EQ(pmu_uncore_clear(&u, b, 0), PMU_OK);
	}
	HT_CHECK_EQ(sum, 1002);
	HT_CHECK_STR(trace(), "0x391<-0 0x700<-0 0x710<-0 0x720<-0 0x730<-0");

	/* Out of range and bad bits never reach a WRMSR. */
	model_trace_clear();
	HT_CHECK_EQ(pmu_uncore_program(&u, 4, 0, 0x34, 0x8f, why, sizeof(why)), PMU_E_INVAL);
	HT_CHECK_STR(why, "C-box 4 counter 0: only 4 boxes x 2 counters");
	HT_CHECK_EQ(pmu_uncore_read(&u, 0, 2, &v), PMU_E_INVAL);
	HT_CHECK_EQ(model_trace_len(), 0);
}

HT_TEST(skylake_sequence_uses_e01)
{
	struct model_cpu_config c = snb_cfg();
	struct pmu_uncore u;
	char why[PMU_REASON_LEN] = "";

	c.signature = 0x000506e3, c.version = 4, c.uncore = MODEL_UNCORE_SKL, c.uncore_cboxes = 2;
	boot_cfg(&c);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_OK);
	HT_CHECK_EQ(pmu_uncore_program(&u, 1, 1, 0x34, 0x8f, why, sizeof(why)), PMU_OK);
	HT_CHECK_EQ(pmu_uncore_enable(&u), PMU_OK);
	HT_CHECK_EQ(pmu_uncore_disable(&u), PMU_OK);
	HT_CHECK_STR(trace(), "0x717<-0 0x711<-0x408f34 0xe01<-0x2000001f 0xe01<-0");
	/* 0x391 is IA32_PERF_GLOBAL_STATUS_SET on this v4 core PMU, not the uncore. */
	HT_CHECK_EQ(model_peek(0, 0x391), 0);
}

HT_MAIN("pmu_uncore")
