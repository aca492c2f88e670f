/* Host tests of the memory-controller counters (pmu/intel/imc.c) on the
 * model's platform (tests/host/pmu_model.c): each table row, MCHBAR found
 * and its free-running counters read across a window, the refusals, and
 * Skylake-SP's channels found through the UBOX of each package's bus,
 * programmed with the exact PCI writes, counting their own package only. */
#include <string.h>

#include "pmu/intel/imc.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/host/hosttest.h"
#include "tests/host/pmu_model.h"

static struct model_cpu_config skl_cfg(void)
{
	model_init(MODEL_V4, false); /* Skylake 0x5E */
	struct model_cpu_config c = *model_config(0);
	c.uncore = MODEL_UNCORE_SKL, c.uncore_cboxes = 4, c.cores_per_pkg = 4;
	return c;
}

HT_TEST(rows_per_generation)
{
	static const struct {
		uint8_t model;
		const char *row; /* NULL: no table */
		enum pmu_imc_kind kind;
		uint32_t rd, wr, mc_stride;
		unsigned nmc, width, bytes_min;
	} cases[] = {
		{ 0x2a, "Sandy Bridge..Comet Lake, Ice Lake, Rocket Lake client", PMU_IMC_MCHBAR, 0x5050,
		  0x5054, 0, 1, 32, 64 },
		{ 0xa5, "Sandy Bridge..Comet Lake, Ice Lake, Rocket Lake client", PMU_IMC_MCHBAR, 0x5050,
		  0x5054, 0, 1, 32, 64 },
		{ 0x7e, "Sandy Bridge..Comet Lake, Ice Lake, Rocket Lake client", PMU_IMC_MCHBAR, 0x5050,
		  0x5054, 0, 1, 32, 64 },
		{ 0x8c, "Tiger Lake-L client", PMU_IMC_MCHBAR, 0x5058, 0x50a0, 0x10000, 2, 64, 64 },
		{ 0x8d, "Tiger Lake-H, Alder/Raptor Lake client", PMU_IMC_MCHBAR, 0xd858, 0xd8a0, 0x10000, 2,
		  64, 64 },
		{ 0xbf, "Tiger Lake-H, Alder/Raptor Lake client", PMU_IMC_MCHBAR, 0xd858, 0xd8a0, 0x10000, 2,
		  64, 64 },
		{ 0xaa, "Meteor/Arrow/Lunar Lake client", PMU_IMC_MCHBAR, 0xd858, 0xd8a0, 0x10000, 2, 64,
		  32 },
		{ 0xbd, "Meteor/Arrow/Lunar Lake client", PMU_IMC_MCHBAR, 0xd858, 0xd8a0, 0x10000, 2, 64,
		  32 },
		{ 0x55, "Skylake-SP/Cascade Lake", PMU_IMC_CHANNELS, 0, 0, 0, 0, 0, 64 },
		{ .model = 0xcc }, /* Panther Lake: the discovery table places it */
		{ .model = 0x6a }, /* Ice Lake-SP: MMIO through 8086:3451 */
		{ 0x8f, "Sapphire/Emerald Rapids", PMU_IMC_DISCOVERY, 0, 0, 0, 0, 0, 64 },
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pmu_caps c = { .vendor = PMU_VENDOR_INTEL, .family = 6, .model = cases[i].model };
		const struct pmu_imc_model *m = pmu_imc_model(&c);

		if (!cases[i].row) {
			HT_CHECK(m == NULL, "model %#x: row %s, want none", cases[i].model, m ? m->name : "");
			continue;
		}
		HT_CHECK(m && strcmp(m->name, cases[i].row) == 0, "model %#x: row %s", cases[i].model,
			 m ? m->name : "(none)");
		if (!m)
			continue;
		HT_CHECK(m->kind == cases[i].kind && m->rd == cases[i].rd && m->wr == cases[i].wr &&
				 m->mc_stride == cases[i].mc_stride && m->nmc == cases[i].nmc &&
				 m->width == cases[i].width && m->bytes_min == cases[i].bytes_min,
			 "model %#x: kind %d rd %#x wr %#x stride %#x mcs %u width %u bytes %u",
			 cases[i].model, m->kind, m->rd, m->wr, m->mc_stride, m->nmc, m->width, m->bytes_min);
	}
}

HT_TEST(client_mchbar_free_running_window)
{
	struct model_cpu_config c = skl_cfg();
	struct pmu_imc m;
	struct pmu_imc_counts k;

	model_boot_custom(&c, 1);
	model_tick(&(struct model_work){ .cycles = 10, .cas_reads = 12345, .cas_writes = 77 }); /* before */
	HT_CHECK_EQ(pmu_imc_detect(&m, pmu_caps()), PMU_OK);
	HT_CHECK_EQ(m.mchbar_reg, 0xfed10001ull);
	HT_CHECK_EQ(m.base, 0xfed10000ull);
	HT_CHECK_EQ(pmu_imc_begin(&m, &k), PMU_OK);
	HT_CHECK_EQ(k.rd0[0], 12345);
	model_tick(&(struct model_work){ .cycles = 10, .cas_reads = 4096, .cas_writes = 1024 });
	HT_CHECK_EQ(pmu_imc_end(&m, &k), PMU_OK);
	HT_CHECK_EQ(k.reads, 4096);
	HT_CHECK_EQ(k.writes, 1024);
	HT_CHECK_EQ(model_trace_len(), 0); /* free-running: nothing written */

	/* 32 bits: a window across the wrap still gives the difference. */
	model_tick(&(struct model_work){ .cycles = 10, .cas_reads = 0xffffffffull - 12345 - 4096 - 10 });
	HT_CHECK_EQ(pmu_imc_begin(&m, &k), PMU_OK);
	model_tick(&(struct model_work){ .cycles = 10, .cas_reads = 100 });
	HT_CHECK_EQ(pmu_imc_end(&m, &k), PMU_OK);
	HT_CHECK_EQ(k.reads, 100);
}

HT_TEST(refusals_name_the_reason)
{
	struct model_cpu_config c = skl_cfg();
	struct pmu_imc m;

	/* No client uncore in the model: MCHBAR reads 0 (firmware left it off). */
	c.uncore = MODEL_UNCORE_NONE;
	model_boot_custom(&c, 1);
	HT_CHECK_EQ(pmu_imc_detect(&m, pmu_caps()), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(m.why, "MCHBAR (host bridge 0:0.0 config 48H) reads 0: not enabled by the firmware");

	c.signature = 0x000c06c0; /* Panther Lake 0xCC */
	model_boot_custom(&c, 1);
	HT_CHECK_EQ(pmu_imc_detect(&m, pmu_caps()), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(m.why, "family 6 model 0xcc is Panther Lake: no memory-controller table for it");

	/* Skylake-SP without its PCI functions (a VM): no UBOX anywhere. */
	c = model_skx_config(0, 0, 2);
	c.uncore = MODEL_UNCORE_NONE;
	model_boot_custom(&c, 1);
	HT_CHECK_EQ(pmu_imc_detect(&m, pmu_caps()), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(m.why, "no UBOX (PCI 8086:2014 at 8.2) on any of 256 buses: no bus-to-package map");
}

struct imc_arg {
	struct pmu_imc m;
	struct pmu_imc_counts k;
	int err;
};

static void detect_begin(void *p)
{
	struct imc_arg *a = p;
	a->err = pmu_imc_detect(&a->m, pmu_caps());
	if (a->err == PMU_OK)
		a->err = pmu_imc_begin(&a->m, &a->k);
}

static void end(void *p)
{
	struct imc_arg *a = p;
	a->err = pmu_imc_end(&a->m, &a->k);
}

static void stream(void *p)
{
	(void)p;
	model_tick(&(struct model_work){ .cycles = 10, .cas_reads = 6000, .cas_writes = 600 });
}

/* Two Skylake-SP packages: each finds the six channels of its own bus
 * through the UBOX's node map, programs them with the exact writes, and
 * counts only its own package's CAS. */
HT_TEST(server_channels_per_package)
{
	struct model_cpu_config cfg[4] = { model_skx_config(0, 0, 2), model_skx_config(0, 1, 2),
					   model_skx_config(1, 0, 2), model_skx_config(1, 1, 2) };
	struct imc_arg a[2];

	model_boot_custom(cfg, 4);
	model_run_on(2, detect_begin, &a[1]);
	HT_CHECK_EQ(a[1].err, PMU_OK);
	HT_CHECK_EQ(a[1].m.package, 1);
	HT_CHECK_EQ(a[1].m.nchan, 6);
	HT_CHECK_EQ(a[1].m.uboxes, 2);
	HT_CHECK_EQ(a[1].m.chan[0].bus, 2);
	HT_CHECK(a[1].m.chan[5].dev == 13 && a[1].m.chan[5].fn == 2, "channel 5 at %u.%u", a[1].m.chan[5].dev,
		 a[1].m.chan[5].fn);
	/* Freeze and reset, CAS.RD on counter 0 and CAS.WR on 1, unfreeze. */
	HT_CHECK(strncmp(model_trace_text(),
			 "02:0a.2+0xf4<-0x10103 02:0a.2+0xd8<-0x400304 02:0a.2+0xdc<-0x400c04 "
			 "02:0a.6+0xf4<-0x10103",
			 strlen("02:0a.2+0xf4<-0x10103 02:0a.2+0xd8<-0x400304 02:0a.2+0xdc<-0x400c04 "
				"02:0a.6+0xf4<-0x10103")) == 0,
		 "%s", model_trace_text());
	model_run_on(0, detect_begin, &a[0]);
	HT_CHECK_EQ(a[0].err, PMU_OK);
	HT_CHECK_EQ(a[0].m.chan[0].bus, 0);
	model_run_on(3, stream, NULL); /* package 1's CPU */
	model_run_on(2, end, &a[1]);
	model_run_on(0, end, &a[0]);
	HT_CHECK_EQ(a[1].k.reads, 6000);
	HT_CHECK_EQ(a[1].k.writes, 600);
	HT_CHECK_EQ(a[0].k.reads, 0);
	HT_CHECK_EQ(a[0].k.writes, 0);
}

HT_MAIN("pmu_imc")
