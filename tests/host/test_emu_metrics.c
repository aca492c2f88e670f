/* Host tests of the emulated PMU's PERF_METRICS on the Ice Lake and
 * Sapphire Rapids shapes: which family/models enumerate it
 * (emu/model/x86-pmu-config.c perf_metrics_shape), what the pmu-*
 * properties leave of it (x86pmu_perf_metrics_settle), and MSR 329H taking
 * back a value Linux saved (emu/model/x86-pmu-v6.c metrics_write). Each
 * case is one rule, with the source the model quotes for it. */
#include <string.h>

#include "emu/model/x86-pmu.h"
#include "tests/host/emu_cpu.h"
#include "tests/host/hosttest.h"

#define CAP_METRICS (1ull << 15)
#define FIXED_CTR3 0x30cu
#define METRICS 0x329u

static X86PMUState st;

/* Icelake-Server with a family-6 model= number, as the profiles set it. */
static X86PMUConfig icx(uint32_t model)
{
	X86PMUConfig c;

	HT_CHECK(x86pmu_shape("Icelake-Server", X86PMU_VENDOR_INTEL, 6, model, &c) != NULL,
		 "no shape for 06_%02XH", model);
	return c;
}

static void boot(uint32_t model)
{
	X86PMUConfig c = icx(model);

	x86pmu_perf_metrics_settle(&c, false);
	HT_CHECK(x86pmu_config_check(&c) == NULL, "06_%02XH refused: %s", model, x86pmu_config_check(&c));
	x86pmu_reset(&st, &c);
}

/* The model st's registers: 0, X86_VEC_GP, or -1 (tests/host/emu_cpu.h). */
#define rd(msr, v) emu_state_rdmsr(&st, (msr), (v))
#define wr(msr, v) emu_state_wrmsr(&st, (msr), (v))
#define rdv(msr) emu_state_rdv(&st, (msr))

/* n one-cycle instructions at CPL 0, b of them mispredicted branches. */
static void run(unsigned n, unsigned b)
{
	for (unsigned i = 0; i < n; i++) {
		X86PMUInsn in = { .cycles = 1 };
		in.ev[X86PMU_EV_INSTRUCTIONS] = 1;
		in.ev[X86PMU_EV_BRANCHES] = i < b;
		in.ev[X86PMU_EV_BRANCH_MISSES] = i < b;
		x86pmu_count_insn(&st, X86PMU_RING_OS, &in);
	}
}

/* Fixed counter 3 at CPL 0 and PERF_METRICS counting (GLOBAL_CTRL 35, 48). */
static void count_slots(void)
{
	HT_CHECK_EQ(wr(0x38d, 0x1ull << 12), 0);
	HT_CHECK_EQ(wr(0x38f, 1ull << 35 | 1ull << 48), 0);
}

/* Linux 59a854e2f3b9 (Ice Lake: 4 top-down events) and the Sapphire Rapids
 * case of intel_pmu_init (61b985e3e775: 8, as intel_pmu_init_glc for
 * Emerald and Granite Rapids); Tremont (06_86H, QEMU 7.2's own
 * Icelake-Server number) and Skylake have none. */
HT_TEST(perf_metrics_by_family_and_model)
{
	static const struct {
		uint32_t model;
		bool metrics, level2;
	} want[] = {
		{ 0x6a, true, false },  { 0x6c, true, false },  { 0x7d, true, false },
		{ 0x7e, true, false },  { 0x8c, true, false },  { 0x8d, true, false },
		{ 0xa7, true, false },  { 0x8f, true, true },   { 0xcf, true, true },
		{ 0xad, true, true },   { 0xae, true, true },   { 0x86, false, false },
		{ 0x55, false, false }, { 0x9d, false, false }, { 0x8a, false, false },
	};

	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		X86PMUConfig c = icx(want[i].model);

		HT_CHECK(((c.perf_caps & CAP_METRICS) != 0) == want[i].metrics,
			 "06_%02XH: PERF_CAPABILITIES %#llx", want[i].model, (unsigned long long)c.perf_caps);
		HT_CHECK(c.td_level2 == want[i].level2, "06_%02XH: level 2 %d", want[i].model, c.td_level2);
	}
	/* Family 6 only: the same number in another family is another part. */
	X86PMUConfig c;
	HT_CHECK(x86pmu_shape("Icelake-Server", X86PMU_VENDOR_INTEL, 19, 0x6a, &c) != NULL, "family 19");
	HT_CHECK(!(c.perf_caps & CAP_METRICS), "family 19 model 0x6a: %#llx",
		 (unsigned long long)c.perf_caps);
}

/* pmu-fixed=3, as the QEMU glue applies it (the bitmap follows the count). */
static void three_fixed(X86PMUConfig *c)
{
	c->num_fixed = 3;
	x86pmu_fixed_bitmap_default(c);
}

/* The metrics divide fixed counter 3's slots (SDM vol. 3B, "Performance
 * Metrics"): a shape left without the counter loses the bit and level 2,
 * unless pmu-perf-caps= gave the register (keep_caps), which
 * x86pmu_config_check then refuses. */
HT_TEST(perf_metrics_settle_follows_fixed_counter_3)
{
	X86PMUConfig c = icx(0x8f);

	x86pmu_perf_metrics_settle(&c, false);
	HT_CHECK((c.perf_caps & CAP_METRICS) && c.td_level2, "4 fixed: kept, with level 2");

	c = icx(0x8f);
	three_fixed(&c);
	x86pmu_perf_metrics_settle(&c, false);
	HT_CHECK(!(c.perf_caps & CAP_METRICS) && !c.td_level2, "3 fixed: dropped with level 2");
	HT_CHECK(x86pmu_config_check(&c) == NULL, "then accepted: %s", x86pmu_config_check(&c));

	c = icx(0x6a);
	three_fixed(&c);
	x86pmu_perf_metrics_settle(&c, true);
	HT_CHECK(c.perf_caps & CAP_METRICS, "keep_caps keeps the bit");
	HT_CHECK(x86pmu_config_check(&c) != NULL, "and the check refuses it");

	/* Fixed counter 3 through the version-5 bitmap (CPUID.0AH:ECX 0xB). */
	c = icx(0x6a);
	three_fixed(&c);
	c.fixed_bitmap = 0xb;
	x86pmu_perf_metrics_settle(&c, false);
	HT_CHECK(c.perf_caps & CAP_METRICS, "bitmap 0xB has counter 3: kept");

	/* The bit cleared by other means takes level 2 with it. */
	c = icx(0x8f);
	c.perf_caps &= ~CAP_METRICS;
	x86pmu_perf_metrics_settle(&c, true);
	HT_CHECK(!c.td_level2, "no bit, no level 2");
}

/* 8 bytes of a level-1 split: retiring, bad speculation, frontend, backend. */
static uint64_t bytes(unsigned r, unsigned b, unsigned f, unsigned k)
{
	return r | (uint64_t)b << 8 | (uint64_t)f << 16 | (uint64_t)k << 24;
}

/* A task switched out and back in: Linux saves FIXED_CTR3 and PERF_METRICS
 * and writes them back, fixed counter 3 first (Linux 2cb5383b30d4,
 * icl_set_topdown_event_period). The register reads the value back, and
 * what counts after continues the saved measurement: the same reading as
 * the same work measured in one go. */
HT_TEST(perf_metrics_restore_continues_the_measurement)
{
	static const uint32_t models[] = { 0x6a, 0x8f };

	for (unsigned k = 0; k < 2; k++) {
		uint64_t whole, saved, slots, v;

		/* The whole: 300 instructions with 30 misses, then 300 without. */
		boot(models[k]);
		count_slots();
		run(300, 30);
		run(300, 0);
		whole = rdv(METRICS);
		HT_CHECK_EQ(rdv(FIXED_CTR3), 2400);

		/* In two parts, another task's counting between them. */
		boot(models[k]);
		count_slots();
		run(300, 30);
		saved = rdv(METRICS), slots = rdv(FIXED_CTR3);
		HT_CHECK_EQ(wr(FIXED_CTR3, 0), 0);
		HT_CHECK_EQ(wr(METRICS, 0), 0);
		run(500, 100);
		HT_CHECK_EQ(wr(FIXED_CTR3, slots), 0);
		HT_CHECK_EQ(wr(METRICS, saved), 0);
		HT_CHECK(rdv(METRICS) == saved, "06_%02XH: read back %#llx, written %#llx", models[k],
			 (unsigned long long)rdv(METRICS), (unsigned long long)saved);
		HT_CHECK(x86pmu_rdpmc(&st, 1u << 29, 0, true, &v) == X86PMU_OK && v == saved,
			 "RDPMC reads it too: %#llx", (unsigned long long)v);
		run(300, 0);
		HT_CHECK(rdv(METRICS) == whole, "06_%02XH: continued %#llx, in one go %#llx", models[k],
			 (unsigned long long)rdv(METRICS), (unsigned long long)whole);
		HT_CHECK_EQ(rdv(FIXED_CTR3), 2400);
	}
}

/* A written value reads back as written until the metrics count again,
 * even with fixed counter 3 at 0 (its bytes then weigh nothing); 0
 * clears it (Linux 59a854e2f3b9). Ice Lake fills level 1 only: bits 63:32
 * stay 0, and a write of them raises #GP (model's choice, reserved bits). */
HT_TEST(perf_metrics_write_reads_back)
{
	uint64_t v;

	boot(0x6a);
	count_slots();
	HT_CHECK_EQ(wr(METRICS, 1ull << 32), X86_VEC_GP);
	HT_CHECK_EQ(wr(METRICS, bytes(0x80, 0, 0, 0x7f)), 0);
	HT_CHECK_EQ(rdv(METRICS), bytes(0x80, 0, 0, 0x7f));
	/* 100 cycles of 4 slots: 100 retiring, 100 frontend, 200 backend. */
	run(100, 0);
	HT_CHECK_EQ(rdv(METRICS), bytes(64, 0, 64, 127));
	run(1000, 500);
	HT_CHECK_EQ(rdv(METRICS) >> 32, 0);
	HT_CHECK_EQ(wr(METRICS, 0), 0);
	HT_CHECK_EQ(rdv(METRICS), 0);
	/* Bytes that do not add up to 0xFF read back too, until counting. */
	HT_CHECK_EQ(wr(METRICS, 1), 0);
	HT_CHECK_EQ(rdv(METRICS), 1);

	boot(0x8f);
	count_slots();
	HT_CHECK_EQ(wr(METRICS, 0x0040030085400337ull), 0);
	HT_CHECK_EQ(rdv(METRICS), 0x0040030085400337ull);
	HT_CHECK(rd(METRICS, &v) == 0 && v == 0x0040030085400337ull, "%#llx", (unsigned long long)v);
	/* Level 2 after counting: every bad slot a mispredict, every frontend
	 * slot latency (emu/model/x86-pmu-td2.c). */
	run(100, 0);
	HT_CHECK_EQ(rdv(METRICS), bytes(64, 0, 64, 127) | (uint64_t)64 << 48);
}

HT_MAIN("emu_metrics")
