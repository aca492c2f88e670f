/* Host tests of offcore response (pmu/intel/offcore.c through pmu/event.c) on the
 * model: the per-model table, invalid bits refused before any write,
 * sharing, the 0xB7 <-> 0xBB move, the refused third value, SMT siblings
 * of a shared-MSR model, and the exact MSR writes. */
#include <string.h>

#include "arch/x86/msr.h"
#include "pmu/intel/caps.h"
#include "pmu/intel/offcore.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"
#include "tests/host/hosttest.h"
#include "tests/host/pmu_model.h"

static void boot(enum model_profile p)
{
	model_init(p, false);
	pmu_init_all(&model_probe_opts, model_run_on);
	model_set_cpu(0);
	model_trace_clear();
}

static void offcore_ev(struct pmu_event *ev, uint8_t event, uint64_t rsp, const char *name)
{
	struct pmu_event_attr a;
	pmu_attr_raw(&a, event, 0x01);
	a.extra_config = rsp;
	pmu_event_init(ev, &a, name);
}

/* DEMAND_DATA_RD with an L3-miss response on Sandy Bridge client: request
 * bit 0, supplier local DRAM (22), any snoop (31-37). */
#define SNB_DMND_RD_L3_MISS 0x3f80400001ull
#define SNB_DMND_RD_ANY 0x10001ull /* request bit 0, ANY_RESPONSE (16) */

HT_TEST(model_table)
{
	const struct pmu_offcore_model *m;

	boot(MODEL_SNB_CLIENT);
	m = pmu_offcore_model(pmu_caps());
	HT_CHECK(m != NULL, "Sandy Bridge client (model 0x2a) has a row");
	if (m) {
		HT_CHECK_STR(m->name, "Sandy/Ivy Bridge client");
		HT_CHECK_EQ(m->valid[0], 0x3f807f8fffull);
		HT_CHECK_EQ(m->valid[1], 0x3f807f8fffull);
		HT_CHECK_EQ(m->dmnd_rd_l3_miss, SNB_DMND_RD_L3_MISS);
		HT_CHECK_EQ(m->smt_shared, false);
	}
	HT_CHECK_EQ(intel_caps(pmu_caps())->offcore_msrs, 2);

	boot(MODEL_V4); /* Skylake 0x5E */
	m = pmu_offcore_model(pmu_caps());
	HT_CHECK(m && m->valid[0] == 0x3fffff8fffull && m->dmnd_rd_l3_miss == 0x3fffc00001ull,
		 "Skylake: valid %#llx, L3 miss %#llx", m ? (unsigned long long)m->valid[0] : 0ull,
		 m ? (unsigned long long)m->dmnd_rd_l3_miss : 0ull);

	boot(MODEL_WESTMERE);
	m = pmu_offcore_model(pmu_caps());
	HT_CHECK(m && m->smt_shared && m->nmsrs == 2 && m->valid[0] == 0xffff, "Westmere row");

	boot(MODEL_V2); /* Core 2 model 0xF: no row */
	HT_CHECK(pmu_offcore_model(pmu_caps()) == NULL, "Core 2 has no offcore table");
	HT_CHECK_EQ(intel_caps(pmu_caps())->offcore_msrs, 0);
}

/* CPUID.01H:EAX of family 6, DisplayModel m (SDM vol. 2A, CPUID leaf 01H). */
static uint32_t sig6(uint8_t m)
{
	return (uint32_t)(m >> 4) << 16 | 6u << 8 | (uint32_t)(m & 0xf) << 4;
}

/* One CPU of family 6 model `model`; a hybrid one reports core type ct and
 * native model id nat (CPUID.07H:EDX[15], 1AH). */
static struct model_cpu_config cpu_of(uint8_t model, uint8_t ct, uint32_t nat)
{
	model_init(MODEL_V4, false);
	struct model_cpu_config c = *model_config(0);
	c.signature = sig6(model);
	c.max_leaf = 0x1a;
	if (ct) {
		c.hybrid = true;
		c.core_type = ct;
		c.native_model = nat;
	}
	return c;
}

/* The row each CPU of the parts since Skylake gets: the core's selects,
 * masks and L3-miss value (pmu/intel/offcore.c, sources beside the rows). */
HT_TEST(rows_since_skylake_per_core)
{
	static const struct {
		uint8_t model, core_type;
		uint32_t native;
		const char *row;
		uint8_t ev0, ev1, um0, um1;
		uint64_t valid0, valid1, l3_miss, intel;
		uint32_t gp_mask;
	} cases[] = {
		{ 0x5e, 0, 0, "Skylake client", 0xb7, 0xbb, 1, 1, 0x3fffff8fff, 0x3fffff8fff, 0x3fffc00001,
		  0x3ffc400001, 0xf },
		{ 0xa5, 0, 0, "Skylake client", 0xb7, 0xbb, 1, 1, 0x3fffff8fff, 0x3fffff8fff, 0x3fffc00001,
		  0x3ffc400001, 0xf },
		/* The mission text's Skylake-SP example stays the checked value. */
		{ 0x55, 0, 0, "Skylake-SP/Cascade Lake", 0xb7, 0xbb, 1, 1, 0x3fffff8fff, 0x3fffff8fff,
		  0x3fffc00001, 0x3fbc000001, 0xf },
		{ 0x7e, 0, 0, "Ice Lake/Rocket Lake client", 0xb7, 0xbb, 1, 1, 0x3fffffbfff, 0x3fffffbfff,
		  0x3fffc00001, 0, 0xf },
		{ 0xa7, 0, 0, "Ice Lake/Rocket Lake client", 0xb7, 0xbb, 1, 1, 0x3fffffbfff, 0x3fffffbfff,
		  0x3fffc00001, 0, 0xf },
		{ 0x8c, 0, 0, "Tiger Lake", 0xb7, 0xbb, 1, 1, 0x3fffffbfff, 0x3fffffbfff, 0, 0, 0xf },
		{ 0x6a, 0, 0, "Ice Lake-SP/-D", 0xb7, 0xbb, 1, 1, 0x3fffffbfff, 0x3fffffbfff, 0x3fbfc00001, 0,
		  0xf },
		{ 0x97, 0x40, 1, "Golden/Raptor/Redwood Cove", 0x2a, 0x2b, 1, 1, 0x3fffffffff, 0x3fffffffff,
		  0x3fbfc00001, 0, 0xf },
		{ 0x97, 0x20, 1, "Gracemont", 0xb7, 0xb7, 1, 2, 0x3fffffffff, 0x3fffffffff, 0x3f84400001, 0,
		  0 },
		{ 0x97, 0, 0, "Golden/Raptor/Redwood Cove", 0x2a, 0x2b, 1, 1, 0x3fffffffff, 0x3fffffffff,
		  0x3fbfc00001, 0, 0xf }, /* P-cores only (E-cores off): not hybrid */
		{ 0xba, 0x20, 1, "Gracemont", 0xb7, 0xb7, 1, 2, 0x3fffffffff, 0x3fffffffff, 0x3f84400001, 0,
		  0 },
		{ 0xbe, 0, 0, "Gracemont", 0xb7, 0xb7, 1, 2, 0x3fffffffff, 0x3fffffffff, 0x3f84400001, 0, 0 },
		{ 0x8f, 0, 0, "Golden/Raptor/Redwood Cove", 0x2a, 0x2b, 1, 1, 0x3fffffffff, 0x3fffffffff,
		  0x3fbfc00001, 0, 0xf },
		{ 0xcf, 0, 0, "Golden/Raptor/Redwood Cove", 0x2a, 0x2b, 1, 1, 0x3fffffffff, 0x3fffffffff,
		  0x3fbfc00001, 0, 0xf },
		{ 0xad, 0, 0, "Golden/Raptor/Redwood Cove", 0x2a, 0x2b, 1, 1, 0x3fffffffff, 0x3fffffffff,
		  0x3fbfc00001, 0, 0xf },
		{ 0xaa, 0x40, 2, "Golden/Raptor/Redwood Cove", 0x2a, 0x2b, 1, 1, 0x3fffffffff, 0x3fffffffff,
		  0x3fbfc00001, 0, 0xf },
		{ 0xaa, 0x20, 2, "Crestmont", 0xb7, 0xb7, 1, 2, 0x800ff3ffffffffff, 0xff3ffffffffff,
		  0x3fbfc00001, 0, 0 },
		{ 0xb5, 0x20, 2, "Crestmont", 0xb7, 0xb7, 1, 2, 0x800ff3ffffffffff, 0xff3ffffffffff,
		  0x3fbfc00001, 0, 0 },
		{ 0xc6, 0x40, 3, "Lion Cove (Arrow Lake)", 0x2a, 0x2b, 1, 1, 0xfffffffffff, 0xfffffffffff,
		  0xfe7f8000001, 0, 0xf },
		{ 0xc5, 0x20, 3, "Skymont (Arrow Lake)", 0xb7, 0xb7, 1, 2, 0x800ff3ffffffffff,
		  0xff3ffffffffff, 0, 0, 0 },
		/* Arrow Lake-H's low-power E-cores: Crestmont, native model id 2. */
		{ 0xc5, 0x20, 2, "Crestmont (Arrow Lake-H low-power E-cores)", 0xb7, 0xb7, 1, 2,
		  0x800ff3ffffffffff, 0xff3ffffffffff, 0, 0, 0 },
		{ 0xbd, 0x40, 3, "Lion/Cougar Cove (Lunar/Panther Lake)", 0x2a, 0x2b, 1, 1, 0xfffffffffff,
		  0xfffffffffff, 0x9e7fa000001, 0, 0xf },
		{ 0xbd, 0x20, 3, "Skymont/Darkmont (Lunar/Panther Lake)", 0xb7, 0xb7, 1, 2,
		  0x800ff3ffffffffff, 0xff3ffffffffff, 0x13fbfc00001, 0, 0 },
		{ 0xcc, 0x40, 4, "Lion/Cougar Cove (Lunar/Panther Lake)", 0x2a, 0x2b, 1, 1, 0xfffffffffff,
		  0xfffffffffff, 0x9e7fa000001, 0, 0xf },
		{ 0xcc, 0x20, 4, "Skymont/Darkmont (Lunar/Panther Lake)", 0xb7, 0xb7, 1, 2,
		  0x800ff3ffffffffff, 0xff3ffffffffff, 0x13fbfc00001, 0, 0 },
		{ 0xd5, 0x20, 4, "Skymont/Darkmont (Lunar/Panther Lake)", 0xb7, 0xb7, 1, 2,
		  0x800ff3ffffffffff, 0xff3ffffffffff, 0x13fbfc00001, 0, 0 },
		/* Panther Lake-R: Cougar Cove / Darkmont like 0xCC (Linux intel-family.h). */
		{ 0xe5, 0x40, 4, "Lion/Cougar Cove (Lunar/Panther Lake)", 0x2a, 0x2b, 1, 1, 0xfffffffffff,
		  0xfffffffffff, 0x9e7fa000001, 0, 0xf },
		{ 0xe5, 0x20, 4, "Skymont/Darkmont (Lunar/Panther Lake)", 0xb7, 0xb7, 1, 2,
		  0x800ff3ffffffffff, 0xff3ffffffffff, 0x13fbfc00001, 0, 0 },
		{ 0xaf, 0, 0, "Crestmont", 0xb7, 0xb7, 1, 2, 0x800ff3ffffffffff, 0xff3ffffffffff,
		  0x3fbfc00001, 0, 0 },
		{ 0xb6, 0, 0, "Crestmont", 0xb7, 0xb7, 1, 2, 0x800ff3ffffffffff, 0xff3ffffffffff,
		  0x3fbfc00001, 0, 0 },
		{ 0xdd, 0, 0, "Darkmont (Clearwater Forest)", 0xb7, 0xb7, 1, 2, 0x800ff3ffffffffff,
		  0xff3ffffffffff, 0x33fbfc00001, 0, 0 },
		{ 0x86, 0, 0, "Tremont", 0xb7, 0xb7, 1, 2, 0x800ff0ffffff9fff, 0xff0ffffff9fff, 0x2184000001,
		  0, 0xf },
		{ 0x9c, 0, 0, "Tremont", 0xb7, 0xb7, 1, 2, 0x800ff0ffffff9fff, 0xff0ffffff9fff, 0x2184000001,
		  0, 0xf },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct model_cpu_config c = cpu_of(cases[i].model, cases[i].core_type, cases[i].native);
		const struct pmu_offcore_model *m;

		model_boot_custom(&c, 1);
		m = pmu_offcore_model(pmu_caps());
		HT_CHECK(m != NULL, "model %#x core type %#x: no row", cases[i].model, cases[i].core_type);
		if (!m)
			continue;
		HT_CHECK(strcmp(m->name, cases[i].row) == 0,
			 "model %#x core type %#x native %u: row %s, want %s", cases[i].model,
			 cases[i].core_type, cases[i].native, m->name, cases[i].row);
		HT_CHECK(m->event[0] == cases[i].ev0 && m->event[1] == cases[i].ev1 &&
				 m->umask[0] == cases[i].um0 && m->umask[1] == cases[i].um1,
			 "model %#x: selects %#x/%#x umask %u/%u", cases[i].model, m->event[0], m->event[1],
			 m->umask[0], m->umask[1]);
		HT_CHECK(m->valid[0] == cases[i].valid0 && m->valid[1] == cases[i].valid1,
			 "model %#x %s: valid %#llx/%#llx", cases[i].model, m->name,
			 (unsigned long long)m->valid[0], (unsigned long long)m->valid[1]);
		HT_CHECK(m->dmnd_rd_l3_miss == cases[i].l3_miss && m->intel_l3_miss == cases[i].intel,
			 "model %#x %s: L3 miss %#llx, Intel's %#llx", cases[i].model, m->name,
			 (unsigned long long)m->dmnd_rd_l3_miss, (unsigned long long)m->intel_l3_miss);
		/* A checked value is inside its MSR's bits, and Intel's inside it. */
		HT_CHECK((m->dmnd_rd_l3_miss & ~m->valid[0]) == 0 &&
				 (m->intel_l3_miss & ~m->dmnd_rd_l3_miss) == 0,
			 "model %#x: value outside the mask or not a superset", cases[i].model);
		HT_CHECK(m->dmnd_rd_l3_miss || (m->no_l3_miss_why && m->no_l3_miss_why[0]),
			 "model %#x %s: no value and no reason", cases[i].model, m->name);
		HT_CHECK_EQ(m->gp_mask, cases[i].gp_mask);
		HT_CHECK_EQ(intel_caps(pmu_caps())->offcore_msrs, 2);
	}
}

/* CPUID.01H:EAX of DisplayFamily fam > 15, DisplayModel m: base family
 * 0FH plus the extended family, the extended model (SDM vol. 2A, CPUID
 * leaf 01H, "Version Information"). */
static uint32_t sig_ext(unsigned fam, uint8_t m)
{
	return (uint32_t)(fam - 0xf) << 20 | (uint32_t)(m >> 4) << 16 | 0xfu << 8 | (uint32_t)(m & 0xf) << 4;
}

/* The off-module response rows of the family-18 and -19 parts, decoded
 * from their CPUID signatures: four MSRs at 0x3E0, one event with umask
 * bit n for OMR n, the masks of Linux's intel_pnc/arw_extra_regs, and
 * Linux's LLC-load-misses value as the checked L3 miss. */
HT_TEST(omr_rows_of_families_18_19)
{
	static const struct {
		unsigned family;
		uint8_t model, core_type;
		const char *row, *uarch;
		uint8_t event;
		uint64_t valid;
		bool slot_counter;
	} cases[] = {
		{ 19, 0x01, 0, "Panther/Coyote Cove (OMR)", "Diamond Rapids", 0x2a, 0x40ffffff0000ffffull,
		  false },
		{ 18, 0x01, 0x40, "Panther/Coyote Cove (OMR)", "Nova Lake", 0x2a, 0x40ffffff0000ffffull,
		  false },
		{ 18, 0x03, 0x40, "Panther/Coyote Cove (OMR)", "Nova Lake", 0x2a, 0x40ffffff0000ffffull,
		  false },
		{ 18, 0x01, 0x20, "Arctic Wolf (OMR)", "Nova Lake", 0xb7, 0xc0ffffffffffffffull, true },
		{ 18, 0x03, 0x20, "Arctic Wolf (OMR)", "Nova Lake", 0xb7, 0xc0ffffffffffffffull, true },
	};
	char name[40];

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct model_cpu_config c = cpu_of(0, cases[i].core_type, 5);
		const struct pmu_offcore_model *m;

		c.signature = sig_ext(cases[i].family, cases[i].model);
		model_boot_custom(&c, 1);
		HT_CHECK(pmu_caps()->family == cases[i].family && pmu_caps()->model == cases[i].model,
			 "signature %#x decodes as family %u model %#x", c.signature, pmu_caps()->family,
			 pmu_caps()->model);
		HT_CHECK_STR(pmu_caps()->uarch, cases[i].uarch);
		m = pmu_offcore_model(pmu_caps());
		HT_CHECK(m != NULL, "family %u model %#x core type %#x: no row", cases[i].family,
			 cases[i].model, cases[i].core_type);
		if (!m)
			continue;
		HT_CHECK_STR(m->name, cases[i].row);
		HT_CHECK(m->omr && m->nmsrs == 4 && intel_caps(pmu_caps())->offcore_msrs == 4,
			 "%s: four OMR MSRs", m->name);
		for (int s = 0; s < 4; s++) {
			HT_CHECK(m->event[s] == cases[i].event && m->umask[s] == 1u << s &&
					 m->valid[s] == cases[i].valid,
				 "%s OMR_%d: event %#x umask %#x valid %#llx", m->name, s, m->event[s],
				 m->umask[s], (unsigned long long)m->valid[s]);
			HT_CHECK_EQ(pmu_offcore_msr(m, s), 0x3e0u + (unsigned)s);
			HT_CHECK_EQ(pmu_offcore_slot(pmu_offcore_msr(m, s)), s);
			HT_CHECK_EQ(pmu_offcore_slot_of(m, cases[i].event, (uint8_t)(1u << s)), s);
		}
		HT_CHECK_EQ(pmu_offcore_slot_of(m, cases[i].event, 0x03), -1);
		HT_CHECK_EQ(m->slot_counter, cases[i].slot_counter);
		HT_CHECK_EQ(m->dmnd_rd_l3_miss, 0xfffff000000001ull);
		HT_CHECK((m->dmnd_rd_l3_miss & ~m->valid[0]) == 0, "%s: value inside the mask", m->name);
		HT_CHECK_STR(pmu_offcore_msr_name(pmu_offcore_msr(m, 2), name, sizeof(name)),
			     "MSR_OMR_2 (0x3e2)");
	}
}

/* Golden Cove: 0x2A/0x2B select the MSRs, on PMC0-3 only; 0xB7 is a plain
 * event there, and an offcore value on it is refused naming the selects. */
HT_TEST(golden_cove_selects_2a_2b)
{
	static const X86PMUOffcoreConfig glc = {
		.nmsrs = 2,
		.event = { 0x2a, 0x2b },
		.umask = { 0x01, 0x01 },
		.valid = { 0x3fffffffffull, 0x3fffffffffull },
		.miss_supplier = 1ull << 26,
		.miss_snoop = 1ull << 33,
	};
	struct model_cpu_config c = cpu_of(0x8f, 0, 0);
	struct pmu_event a, b, p, x;

	c.num_gp = 8, c.offcore = glc;
	model_boot_custom(&c, 1);
	offcore_ev(&a, 0x2a, 0x3fbfc00001ull, "a");
	offcore_ev(&b, 0x2a, 0x10001ull, "b");
	HT_CHECK_EQ(pmu_event_add(&a), PMU_OK);
	HT_CHECK_EQ(a.hw.extra_msr, MSR_OFFCORE_RSP_0);
	HT_CHECK_EQ(pmu_event_add(&b), PMU_OK);
	HT_CHECK_EQ(b.hw.extra_msr, MSR_OFFCORE_RSP_1);
	HT_CHECK_EQ(b.hw.config & 0xffff, 0x12b); /* moved: runs as 0x2B */
	HT_CHECK(a.hw.idx < 4 && b.hw.idx < 4, "PMC0-3: %d %d", a.hw.idx, b.hw.idx);
	model_trace_clear();
	HT_CHECK_EQ(pmu_event_enable(&a), PMU_OK);
	HT_CHECK_STR(model_trace_text(), "0xc1<-0 0x1a6<-0x3fbfc00001 0x186<-0x43012a 0x38f<-0x1");
	model_tick(&(struct model_work){ .cycles = 10, .dmnd_rd_l3_miss = 321 });
	HT_CHECK_EQ(pmu_event_disable(&a), PMU_OK);
	HT_CHECK_EQ(pmu_event_count(&a), 321);
	pmu_event_del(&a);
	pmu_event_del(&b);

	/* Four offcore events fill PMC0-3; a fifth finds no counter it may use. */
	struct pmu_event o[5];
	for (int i = 0; i < 5; i++) {
		offcore_ev(&o[i], 0x2a, 0x3fbfc00001ull, "o");
		HT_CHECK_EQ(pmu_event_add(&o[i]), i < 4 ? PMU_OK : PMU_E_BUSY);
	}
	HT_CHECK(strstr(o[4].reason, "OFFCORE_RESPONSE (PMC0-3)") != NULL, "%s", o[4].reason);
	for (int i = 0; i < 4; i++)
		pmu_event_del(&o[i]);

	struct pmu_event_attr plain;
	pmu_attr_raw(&plain, 0xb7, 0x01); /* a plain event on Golden Cove */
	pmu_event_init(&p, &plain, "plain");
	HT_CHECK_EQ(pmu_event_add(&p), PMU_OK);
	HT_CHECK_EQ(p.hw.extra_msr, 0);
	pmu_event_del(&p);
	offcore_ev(&x, 0xb7, 0x3fbfc00001ull, "x");
	HT_CHECK_EQ(pmu_event_add(&x), PMU_E_INVAL);
	HT_CHECK_STR(x.reason,
		     "x: offcore_rsp=0x3fbfc00001 belongs to events 0x2a/0x2b umask 0x01 here, not event "
		     "0xb7 umask 0x01");
}

/* Diamond Rapids (family 19 model 1) on the OMR layout of emu/model: four
 * distinct values take OMR_0-3 in turn from the MSR asked for, each moved
 * event counting with its MSR's umask bit (Linux intel_alt_er), a fifth is
 * refused naming the four; an event asking for a taken OMR_3 wraps to
 * OMR_0; the WRMSR goes to the MSR its umask names. */
HT_TEST(omr_allocation_moves_in_turn)
{
	struct model_cpu_config c = cpu_of(0, 0, 0);
	struct pmu_event o[5], w, x;
	struct pmu_event_attr a;

	c.signature = sig_ext(19, 0x01);
	c.num_gp = 8;
	x86pmu_omr_layout(&c.offcore);
	model_boot_custom(&c, 1);
	HT_CHECK_EQ(intel_caps(pmu_caps())->offcore_msrs, 4);
	for (unsigned i = 0; i < 5; i++) {
		offcore_ev(&o[i], 0x2a, 0xfffff000000001ull | (uint64_t)i << 1, "o");
		HT_CHECK_EQ(pmu_event_add(&o[i]), i < 4 ? PMU_OK : PMU_E_BUSY);
		if (i < 4) {
			HT_CHECK_EQ(o[i].hw.extra_msr, 0x3e0u + i);
			HT_CHECK_EQ(o[i].hw.config & 0xffff, 0x2au | (1u << i) << 8);
		}
	}
	HT_CHECK(strstr(o[4].reason,
			"a fifth OMR value: MSR_OMR_0-3 hold 0xfffff000000001, 0xfffff000000003, "
			"0xfffff000000005, 0xfffff000000007") != NULL,
		 "%s", o[4].reason);
	/* The same value shares its MSR. */
	offcore_ev(&x, 0x2a, 0xfffff000000005ull, "x");
	HT_CHECK_EQ(pmu_event_add(&x), PMU_OK);
	HT_CHECK_EQ(x.hw.extra_msr, 0x3e2u);
	pmu_event_del(&x);
	model_trace_clear();
	HT_CHECK_EQ(pmu_event_enable(&o[2]), PMU_OK);
	HT_CHECK(strstr(model_trace_text(), "0x3e2<-0xfffff000000005") != NULL, "%s", model_trace_text());
	HT_CHECK_EQ(pmu_event_disable(&o[2]), PMU_OK);
	for (unsigned i = 0; i < 4; i++)
		if (i != 3 && i != 0)
			pmu_event_del(&o[i]);
	/* OMR_0 and OMR_3 held: a value asking for OMR_3 wraps past it to
	 * OMR_0 (held), then OMR_1. */
	pmu_offcore_attr(&a, pmu_offcore_model(pmu_caps()), 3, 0x4000000000000001ull);
	pmu_event_init(&w, &a, "w");
	HT_CHECK_EQ(pmu_event_add(&w), PMU_OK);
	HT_CHECK_EQ(w.hw.extra_msr, 0x3e1u);
	HT_CHECK_EQ(w.hw.config & 0xffff, 0x22au);
	pmu_event_del(&w);
	pmu_event_del(&o[0]);
	pmu_event_del(&o[3]);
	HT_CHECK_EQ(pmu_this_cpu()->extra_users[0] + pmu_this_cpu()->extra_users[1] +
			    pmu_this_cpu()->extra_users[2] + pmu_this_cpu()->extra_users[3],
		    0);
	/* A bit outside the OMR mask is refused before any write. */
	offcore_ev(&x, 0x2a, 0x10001ull, "x");
	HT_CHECK_EQ(pmu_event_add(&x), PMU_E_INVAL);
	HT_CHECK(strstr(x.reason, "that MSR_OMR_0 does not have") != NULL, "%s", x.reason);
}

/* Arctic Wolf (Nova Lake E-core): select n runs on PMC n only, so an event
 * whose OMR MSR holds another value is refused rather than moved. */
HT_TEST(arctic_wolf_keeps_its_msr)
{
	struct model_cpu_config c = cpu_of(0, 0x20, 5);
	struct pmu_event a, b;

	c.signature = sig_ext(18, 0x01);
	x86pmu_omr_layout(&c.offcore);
	for (unsigned i = 0; i < 4; i++)
		c.offcore.event[i] = 0xb7, c.offcore.valid[i] = 0xc0ffffffffffffffull;
	model_boot_custom(&c, 1);
	HT_CHECK_STR(pmu_offcore_model(pmu_caps())->name, "Arctic Wolf (OMR)");
	offcore_ev(&a, 0xb7, 0xfffff000000001ull, "a");
	offcore_ev(&b, 0xb7, 0x4000000000000001ull, "b");
	HT_CHECK_EQ(pmu_event_add(&a), PMU_OK);
	HT_CHECK(a.hw.extra_msr == 0x3e0u && a.hw.idx == 0, "OMR_0 on PMC0: %#x %d", a.hw.extra_msr,
		 a.hw.idx);
	HT_CHECK_EQ(pmu_event_add(&b), PMU_E_BUSY);
	HT_CHECK(strstr(b.reason, "counts on GP counter 0 only, so it cannot move") != NULL, "%s", b.reason);
	pmu_event_del(&a);
}

/* Atom cores: 0xB7 umask 0x01 is RSP_0, umask 0x02 RSP_1; a move changes
 * the umask; bit 63 exists on RSP_0 only, so a value with it never moves. */
HT_TEST(atom_cores_select_by_umask)
{
	static const X86PMUOffcoreConfig cmt = {
		.nmsrs = 2,
		.event = { 0xb7, 0xb7 },
		.umask = { 0x01, 0x02 },
		.valid = { 0x800ff3ffffffffffull, 0xff3ffffffffffull },
		.miss_supplier = 1ull << 26,
		.miss_snoop = 1ull << 33,
	};
	struct model_cpu_config c = cpu_of(0xaf, 0, 0); /* Sierra Forest */
	struct pmu_event a, b, h, k;

	c.num_gp = 8, c.offcore = cmt;
	model_boot_custom(&c, 1);
	offcore_ev(&a, 0xb7, 0x3fbfc00001ull, "a");
	offcore_ev(&b, 0xb7, 0x10001ull, "b");
	HT_CHECK_EQ(pmu_event_add(&a), PMU_OK);
	HT_CHECK_EQ(pmu_event_add(&b), PMU_OK);
	HT_CHECK_EQ(b.hw.extra_msr, MSR_OFFCORE_RSP_1);
	HT_CHECK_EQ(b.hw.config & 0xffff, 0x2b7);
	pmu_event_del(&a);
	pmu_event_del(&b);

	/* Bit 63 on RSP_1 is refused before any write. */
	struct pmu_event_attr ha;
	pmu_attr_raw(&ha, 0xb7, 0x02);
	ha.extra_config = 0x8000000000010001ull;
	pmu_event_init(&h, &ha, "h");
	model_trace_clear();
	HT_CHECK_EQ(pmu_event_add(&h), PMU_E_INVAL);
	HT_CHECK_STR(h.reason, "h: offcore_rsp=0x8000000000010001 sets bits 0x8000000000000000 that "
			       "MSR_OFFCORE_RSP_1 does not have on Crestmont (valid 0xff3ffffffffff)");
	HT_CHECK_EQ(model_trace_len(), 0);
	/* With RSP_0 taken, a bit-63 value cannot move to RSP_1. */
	offcore_ev(&a, 0xb7, 0x10001ull, "a");
	offcore_ev(&k, 0xb7, 0x8000000000010001ull, "k");
	HT_CHECK_EQ(pmu_event_add(&a), PMU_OK);
	HT_CHECK_EQ(pmu_event_add(&k), PMU_E_BUSY);
	pmu_event_del(&a);
	HT_CHECK_EQ(pmu_event_add(&k), PMU_OK);
	HT_CHECK_EQ(k.hw.extra_msr, MSR_OFFCORE_RSP_0);
	pmu_event_del(&k);
}

/* A hybrid part: the same code asks each CPU for its own row. */
HT_TEST(hybrid_rows_per_cpu)
{
	struct model_cpu_config cfg[4];

	for (unsigned i = 0; i < 4; i++) {
		cfg[i] = cpu_of(0x9a, i < 2 ? 0x40 : 0x20, 1);
		cfg[i].leaf_0b = true, cfg[i].x2apic_id = i;
	}
	model_boot_custom(cfg, 4);
	for (unsigned i = 0; i < 4; i++) {
		const struct pmu_offcore_model *m = pmu_offcore_model(&pmu_cpu_of(i)->caps);
		HT_CHECK_STR(m ? m->name : "(none)", i < 2 ? "Golden/Raptor/Redwood Cove" : "Gracemont");
	}
}

HT_TEST(invalid_bits_refused_before_any_write)
{
	struct pmu_event e;

	boot(MODEL_SNB_CLIENT);
	/* Bit 23 is a remote supplier: valid on Sandy Bridge-EP, not client. */
	offcore_ev(&e, 0xb7, 0x800001ull, "remote");
	HT_CHECK_EQ(pmu_event_add(&e), PMU_E_INVAL);
	HT_CHECK_STR(e.reason,
		     "remote: offcore_rsp=0x800001 sets bits 0x800000 that MSR_OFFCORE_RSP_0 does not "
		     "have on Sandy/Ivy Bridge client (valid 0x3f807f8fff)");
	HT_CHECK_EQ(e.hw.idx, -1);
	offcore_ev(&e, 0xb7, 0x10000ull, "no-request");
	HT_CHECK_EQ(pmu_event_add(&e), PMU_E_INVAL);
	HT_CHECK_STR(e.reason,
		     "no-request: offcore_rsp=0x10000 selects no request type (bits 0x8fff): it would "
		     "count nothing");
	offcore_ev(&e, 0xbb, 0x1ull, "no-response");
	HT_CHECK_EQ(pmu_event_add(&e), PMU_E_INVAL);
	HT_CHECK_STR(e.reason,
		     "no-response: offcore_rsp=0x1 selects no response type (bits 0x3f807f0000): it "
		     "would count nothing");
	offcore_ev(&e, 0xc0, SNB_DMND_RD_ANY, "not-offcore");
	e.attr.umask = 0;
	HT_CHECK_EQ(pmu_event_add(&e), PMU_E_INVAL);
	HT_CHECK_STR(e.reason,
		     "not-offcore: offcore_rsp=0x10001 belongs to events 0xb7/0xbb umask 0x01 here, not "
		     "event 0xc0 umask 0x00");
	HT_CHECK_EQ(model_trace_len(), 0);
	HT_CHECK_EQ(pmu_this_cpu()->extra_users[0] + pmu_this_cpu()->extra_users[1], 0);

	/* The same remote bit is fine where the model has it. */
	boot(MODEL_V4);
	offcore_ev(&e, 0xb7, 0x800001ull, "remote");
	HT_CHECK_EQ(pmu_event_add(&e), PMU_OK);
	HT_CHECK_EQ(pmu_event_enable(&e), PMU_OK);
	HT_CHECK_EQ(model_peek(0, MSR_OFFCORE_RSP_0), 0x800001ull);
	pmu_event_del(&e);
	/* And the model #GPs a bit outside its table: what the check spares. */
	HT_CHECK_EQ(pmu_hw_wrmsr(MSR_OFFCORE_RSP_0, 1ull << 40), MODEL_VEC_GP);
}

HT_TEST(equal_values_share_exact_trace)
{
	struct pmu_event a, b;
	struct pmu_event *g[] = { &a, &b };

	boot(MODEL_SNB_CLIENT);
	offcore_ev(&a, 0xb7, SNB_DMND_RD_L3_MISS, "a");
	offcore_ev(&b, 0xb7, SNB_DMND_RD_L3_MISS, "b");
	HT_CHECK_EQ(pmu_events_add(g, 2), PMU_OK);
	HT_CHECK_EQ(a.hw.extra_msr, MSR_OFFCORE_RSP_0);
	HT_CHECK_EQ(b.hw.extra_msr, MSR_OFFCORE_RSP_0);
	HT_CHECK_EQ(pmu_this_cpu()->extra_users[0], 2);
	HT_CHECK_EQ(pmu_this_cpu()->extra_users[1], 0);
	HT_CHECK_EQ(model_trace_len(), 0); /* allocation writes nothing */
	HT_CHECK_EQ(pmu_events_enable(g, 2), PMU_OK);
	/* Per event: counter (legacy IA32_PMCx, no full-width writes here),
	 * the RSP value, the event select with EN; then GLOBAL_CTRL once. */
	HT_CHECK_STR(model_trace_text(),
		     "0xc1<-0 0x1a6<-0x3f80400001 0x186<-0x4301b7 0xc2<-0 0x1a6<-0x3f80400001 "
		     "0x187<-0x4301b7 0x38f<-0x3");
	model_tick(&(struct model_work){ .cycles = 100, .dmnd_rd_l3_miss = 777 });
	HT_CHECK_EQ(pmu_events_disable(g, 2), PMU_OK);
	HT_CHECK_EQ(pmu_event_count(&a), 777);
	HT_CHECK_EQ(pmu_event_count(&b), 777);
	pmu_events_del(g, 2);
	HT_CHECK_EQ(pmu_this_cpu()->extra_users[0], 0);
}

HT_TEST(move_b7_to_bb_and_bb_to_b7)
{
	struct pmu_event x, y, p, q;

	boot(MODEL_SNB_CLIENT);
	offcore_ev(&x, 0xb7, SNB_DMND_RD_ANY, "x");
	offcore_ev(&y, 0xb7, SNB_DMND_RD_L3_MISS, "y");
	HT_CHECK_EQ(pmu_event_add(&x), PMU_OK);
	HT_CHECK_EQ(pmu_event_add(&y), PMU_OK);
	HT_CHECK_EQ(y.hw.extra_msr, MSR_OFFCORE_RSP_1);
	HT_CHECK_EQ(y.hw.config, 0x301bbull); /* runs as OFFCORE_RESPONSE_1 */
	HT_CHECK_EQ(y.attr.event, 0xb7);      /* what the user asked for is kept */
	model_trace_clear();
	HT_CHECK_EQ(pmu_event_enable(&y), PMU_OK);
	HT_CHECK_STR(model_trace_text(), "0xc2<-0 0x1a7<-0x3f80400001 0x187<-0x4301bb 0x38f<-0x2");
	model_tick(&(struct model_work){ .cycles = 10, .dmnd_rd_l3_miss = 4096 });
	HT_CHECK_EQ(pmu_event_disable(&y), PMU_OK);
	HT_CHECK_EQ(pmu_event_count(&y), 4096); /* counted through RSP_1's value */
	pmu_event_del(&x);
	pmu_event_del(&y);

	/* The other way: RSP_1 held by 0xBB, a 0xBB with another value takes
	 * RSP_0 as 0xB7. */
	offcore_ev(&p, 0xbb, SNB_DMND_RD_ANY, "p");
	offcore_ev(&q, 0xbb, SNB_DMND_RD_L3_MISS, "q");
	HT_CHECK_EQ(pmu_event_add(&p), PMU_OK);
	HT_CHECK_EQ(p.hw.extra_msr, MSR_OFFCORE_RSP_1);
	HT_CHECK_EQ(pmu_event_add(&q), PMU_OK);
	HT_CHECK_EQ(q.hw.extra_msr, MSR_OFFCORE_RSP_0);
	HT_CHECK_EQ(q.hw.config & 0xff, 0xb7);
	pmu_event_del(&p);
	pmu_event_del(&q);
}

HT_TEST(third_value_refused_group_all_or_nothing)
{
	struct pmu_event a, b, c;
	struct pmu_event *g[] = { &a, &b, &c };

	boot(MODEL_SNB_CLIENT);
	offcore_ev(&a, 0xb7, SNB_DMND_RD_ANY, "a");
	offcore_ev(&b, 0xb7, SNB_DMND_RD_L3_MISS, "b");
	offcore_ev(&c, 0xbb, 0x20001ull, "c");
	HT_CHECK_EQ(pmu_events_add(g, 3), PMU_E_BUSY);
	HT_CHECK_STR(c.reason,
		     "c: a third offcore value: MSR_OFFCORE_RSP_0 holds 0x10001, MSR_OFFCORE_RSP_1 holds "
		     "0x3f80400001; this one needs 0x20001");
	HT_CHECK_STR(a.reason, c.reason); /* the group's reason is in evs[0] too */
	HT_CHECK_EQ(a.hw.idx, -1);
	HT_CHECK_EQ(pmu_this_cpu()->gp_used, 0);
	HT_CHECK_EQ(pmu_this_cpu()->extra_users[0] + pmu_this_cpu()->extra_users[1], 0);
	/* Two of them fit. */
	HT_CHECK_EQ(pmu_events_add(g, 2), PMU_OK);
	pmu_events_del(g, 2);

	/* A counter shortage gives the RSP MSRs back. */
	struct pmu_event o[4];
	struct pmu_event *og[5];
	for (int i = 0; i < 4; i++) {
		offcore_ev(&o[i], 0xb7, SNB_DMND_RD_ANY, "o");
		og[i] = &o[i];
	}
	og[4] = &a;
	HT_CHECK_EQ(pmu_events_add(og, 5), PMU_E_BUSY); /* 5 events, 4 GP counters */
	HT_CHECK_EQ(pmu_this_cpu()->extra_users[0] + pmu_this_cpu()->extra_users[1], 0);
}

HT_TEST(nehalem_has_one_msr)
{
	struct model_cpu_config cfg;
	struct pmu_event a, b;

	model_init(MODEL_WESTMERE, false);
	cfg = *model_config(0);
	cfg.signature = 0x000106a5; /* Nehalem (Core i7-9xx), model 0x1A */
	model_boot_custom(&cfg, 1);
	HT_CHECK_EQ(intel_caps(pmu_caps())->offcore_msrs, 1);
	offcore_ev(&a, 0xbb, 0xf001ull, "a"); /* 0xBB asked: there is only RSP_0 */
	HT_CHECK_EQ(pmu_event_add(&a), PMU_OK);
	HT_CHECK_EQ(a.hw.extra_msr, MSR_OFFCORE_RSP_0);
	HT_CHECK_EQ(a.hw.config & 0xff, 0xb7);
	offcore_ev(&b, 0xb7, 0x0101ull, "b");
	HT_CHECK_EQ(pmu_event_add(&b), PMU_E_BUSY);
	HT_CHECK_STR(b.reason,
		     "b: MSR_OFFCORE_RSP_0 (0x1a6) holds 0xf001 for 1 event(s) and this model has no "
		     "MSR_OFFCORE_RSP_1; this one needs 0x101");
	pmu_event_del(&a);
}

static void add_on(void *arg)
{
	struct pmu_event *ev = arg;
	pmu_event_add(ev);
}

static void del_on(void *arg)
{
	pmu_event_del(arg);
}

HT_TEST(smt_siblings_share_the_msrs_on_westmere)
{
	struct pmu_event a, b, c, d;

	boot(MODEL_WESTMERE); /* CPUs 0-1 core 0, CPUs 2-3 core 1 */
	HT_CHECK_EQ(pmu_cpu_of(3)->topo.core, 1);
	HT_CHECK_STR(pmu_cpu_of(3)->topo.source, "CPUID.0BH");
	offcore_ev(&a, 0xb7, 0x0101ull, "a");
	offcore_ev(&b, 0xb7, 0xf001ull, "b");
	offcore_ev(&c, 0xb7, 0x0201ull, "c");
	offcore_ev(&d, 0xb7, 0xf001ull, "d");
	model_run_on(0, add_on, &a);
	HT_CHECK_EQ(a.hw.extra_msr, MSR_OFFCORE_RSP_0);
	model_run_on(1, add_on, &b); /* the sibling sees RSP_0 taken: moves */
	HT_CHECK_EQ(b.hw.idx >= 0, true);
	HT_CHECK_EQ(b.hw.extra_msr, MSR_OFFCORE_RSP_1);
	model_run_on(1, add_on, &c);
	HT_CHECK_EQ(c.hw.idx, -1);
	HT_CHECK_STR(c.reason,
		     "c: a third offcore value: MSR_OFFCORE_RSP_0 holds 0x101 (also by SMT sibling CPU 0), "
		     "MSR_OFFCORE_RSP_1 holds 0xf001; this one needs 0x201");
	model_run_on(2, add_on, &d); /* another core: its own pair */
	HT_CHECK_EQ(d.hw.extra_msr, MSR_OFFCORE_RSP_0);
	model_run_on(0, del_on, &a);
	model_run_on(1, add_on, &c); /* RSP_0 free on the core again */
	HT_CHECK_EQ(c.hw.extra_msr, MSR_OFFCORE_RSP_0);
	model_run_on(1, del_on, &b);
	model_run_on(1, del_on, &c);
	model_run_on(2, del_on, &d);

	/* Sandy Bridge: per thread, the sibling keeps its own RSP_0. */
	boot(MODEL_SNB_CLIENT);
	offcore_ev(&a, 0xb7, SNB_DMND_RD_ANY, "a");
	offcore_ev(&b, 0xb7, SNB_DMND_RD_L3_MISS, "b");
	model_run_on(0, add_on, &a);
	model_run_on(1, add_on, &b);
	HT_CHECK_EQ(b.hw.extra_msr, MSR_OFFCORE_RSP_0);
	model_run_on(0, del_on, &a);
	model_run_on(1, del_on, &b);
}

HT_MAIN("pmu_offcore")
