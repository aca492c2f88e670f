/* Host tests of the uncore driver (pmu/intel/uncore.c) on the model
 * (emu/model/x86-pmu-uncore.c): the table row and register addresses of
 * every generation, detection and box counts per layout, the refusals,
 * the exact register sequences of client C-boxes and server CHAs, a
 * disabled counter, and packages that keep their counts apart. */
#include <string.h>

#include "pmu/intel/uncore.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/host/hosttest.h"
#include "tests/host/pmu_model.h"

static struct model_cpu_config snb_cfg(void)
{
	model_init(MODEL_SNB_CLIENT, false);
	return *model_config(0);
}

/* CPUID.01H:EAX of family 6, DisplayModel m. */
static uint32_t sig6(uint8_t m)
{
	return (uint32_t)(m >> 4) << 16 | 6u << 8 | (uint32_t)(m & 0xf) << 4;
}

HT_TEST(detect_sandy_bridge_client)
{
	struct model_cpu_config c = snb_cfg();
	struct pmu_uncore u;

	model_boot_custom(&c, 1);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_OK);
	HT_CHECK(u.model != NULL, "%s", u.why);
	if (!u.model)
		return;
	HT_CHECK_STR(u.model->name, "Sandy/Ivy Bridge client");
	HT_CHECK_EQ(u.model->global[0].msr, 0x391);
	HT_CHECK_EQ(u.count_msr, 0x396);
	HT_CHECK_EQ(u.count_val, 4);
	HT_CHECK_EQ(u.boxes_reported, 4);
	HT_CHECK_EQ(u.cores, 4);
	HT_CHECK_EQ(u.nboxes, 4);
	HT_CHECK_EQ(u.model->box->width, 44);
	HT_CHECK_EQ(pmu_uncore_nboxes(&u, u.model->arb), 1);
	HT_CHECK_EQ(model_trace_len(), 0); /* detection only reads */
}

HT_TEST(box_count_per_layout)
{
	struct model_cpu_config c = snb_cfg();
	struct pmu_uncore u;

	/* Haswell: CONFIG holds count + 1 ("derive value by -1"). */
	c.signature = 0x000306c3, c.uncore = MODEL_UNCORE_HSW, c.uncore_cboxes = 3;
	model_boot_custom(&c, 1);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_OK);
	HT_CHECK_EQ(u.count_val, 4);
	HT_CHECK_EQ(u.nboxes, 3);

	/* More boxes reported than cores: bounded by the cores. */
	c = snb_cfg();
	c.uncore_cboxes = 4, c.cores_per_pkg = 2;
	model_boot_custom(&c, 1);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_OK);
	HT_CHECK_EQ(u.boxes_reported, 4);
	HT_CHECK_EQ(u.nboxes, 2);

	/* Skylake: global control at 0xE01, [4:0] slice selects; 7 boxes. */
	c = snb_cfg();
	c.signature = 0x000906ec, c.version = 4, c.uncore = MODEL_UNCORE_SKL, c.uncore_cboxes = 7;
	c.cores_per_pkg = 8;
	model_boot_custom(&c, 1);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_OK);
	HT_CHECK_EQ(u.model ? u.model->global[0].msr : 0, 0xe01);
	HT_CHECK_EQ(u.nboxes, 7);

	/* Skylake-SP: MSR 0x702[5:0] counts the CHAs; not bounded by the
	 * cores (a fused-off core keeps its CHA). */
	c = model_skx_config(0, 0, 5);
	model_boot_custom(&c, 1);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_OK);
	HT_CHECK_STR(u.model ? u.model->name : "", "Skylake-SP/Cascade Lake");
	HT_CHECK_EQ(u.count_msr, 0x702);
	HT_CHECK_EQ(u.nboxes, 5);
}

HT_TEST(refusals_name_the_reason)
{
	struct model_cpu_config c = snb_cfg();
	struct pmu_uncore u;
	struct pmu_caps amd = { .vendor = PMU_VENDOR_AMD, .vendor_id = "AuthenticAMD", .family = 0x19 };

	c.signature = sig6(0x4f); /* Broadwell-EP */
	model_boot_custom(&c, 1);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(u.why, "family 6 model 0x4f is Broadwell-EP (server): no uncore table for it");

	c.signature = sig6(0x1e); /* Lynnfield: the Nehalem client uncore */
	model_boot_custom(&c, 1);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(u.why, "family 6 model 0x1e is Lynnfield: no uncore table for it (the Nehalem uncore "
			    "at 391H/3B0H-3C7H)");

	c.signature = sig6(0xdd); /* Clearwater Forest: no source addresses its CHAs */
	model_boot_custom(&c, 1);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(
		u.why,
		"family 6 model 0xdd is Clearwater Forest (Atom Darkmont-X) (server): no uncore table for it");

	c = snb_cfg();
	c.signature = 0x000006f6; /* Core 2, model 0xF */
	model_boot_custom(&c, 1);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(u.why, "no uncore table for family 6 model 0xf");

	HT_CHECK_EQ(pmu_uncore_detect(&u, &amd), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(u.why, "the uncore boxes are Intel's (vendor AuthenticAMD)");

	/* A hypervisor's Sandy Bridge without the uncore MSRs (TCG/KVM). */
	c = snb_cfg();
	c.uncore = MODEL_UNCORE_NONE, c.hypervisor = true;
	model_boot_custom(&c, 1);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_E_FAULT);
	HT_CHECK_STR(u.why,
		     "box count MSR 0x396 raised vector 13 on Sandy/Ivy Bridge client model 0x2a (under a "
		     "hypervisor, which does not expose the uncore)");

	/* MSRs that read 0 and drop writes (KVM with ignore_msrs). */
	c = snb_cfg();
	c.ignores_writes = true;
	model_boot_custom(&c, 1);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_E_UNSUPPORTED);
	HT_CHECK_STR(u.why, "box count MSR 0x396 reads 0: no C-box to count with on Sandy/Ivy Bridge client");
}

/* The generations since Ice Lake, from the table alone (the model emulates
 * Sandy Bridge to Skylake client and Skylake-SP): row, box and ARB register
 * addresses, the box count, the start, and the counting event or the gap. */
HT_TEST(rows_since_ice_lake)
{
	static const struct {
		uint8_t model;
		bool server;
		const char *row;
		uint32_t sel1_1, ctr1_1;   /* box 1, counter 1 */
		uint32_t arb_sel, arb_ctr; /* ARB 0 (or 1 where there are 2), its first counter */
		enum pmu_unc_count count;
		enum pmu_unc_start start;
		uint32_t global0, global1;
		unsigned fixed;
		bool has_event;
	} cases[] = {
		{ 0x7e, false, "Ice Lake client", 0x709, 0x70b, 0x3b3, 0x3b1, PMU_UNC_COUNT_CBO_CONFIG,
		  PMU_UNC_EN_ONLY, 0, 0, 0, false },
		{ 0x8c, false, "Tiger Lake client", 0x709, 0x70b, 0x3b2, 0x3b0, PMU_UNC_COUNT_CBO_CONFIG,
		  PMU_UNC_GLOBAL, 0xe01, 0, 0, false },
		{ 0xa7, false, "Rocket Lake client", 0x709, 0x70b, 0x3b3, 0x3b1, PMU_UNC_COUNT_CBO_CONFIG,
		  PMU_UNC_GLOBAL, 0xe01, 0, 0, false },
		{ 0x97, false, "Alder/Raptor Lake client", 0x2009, 0x200b, 0x2fd8, 0x2fda,
		  PMU_UNC_COUNT_CBO_CONFIG, PMU_UNC_GLOBAL, 0x2ff0, 0, 0, false },
		{ 0xbe, false, "Alder/Raptor Lake client", 0x2009, 0x200b, 0x2fd8, 0x2fda,
		  PMU_UNC_COUNT_CBO_CONFIG, PMU_UNC_GLOBAL, 0x2ff0, 0, 0, false },
		{ 0xaa, false, "Meteor/Arrow Lake client", 0x2453, 0x2459, 0x2422, 0x2428,
		  PMU_UNC_COUNT_CBO_CONFIG, PMU_UNC_GLOBAL, 0x240e, 0x200e, 0, false },
		{ 0xc6, false, "Meteor/Arrow Lake client", 0x2453, 0x2459, 0x2422, 0x2428,
		  PMU_UNC_COUNT_CBO_CONFIG, PMU_UNC_GLOBAL, 0x240e, 0x200e, 0, false },
		{ 0xbd, false, "Lunar Lake client", 0x2453, 0x2459, 0x2422, 0x2428, PMU_UNC_COUNT_FIXED,
		  PMU_UNC_GLOBAL, 0x240e, 0, 4, false },
		{ 0xcc, false, "Panther Lake client", 0x2453, 0x2459, 0x2422, 0x2428, PMU_UNC_COUNT_FIXED,
		  PMU_UNC_GLOBAL, 0x240e, 0, 6, false },
		{ 0x55, true, "Skylake-SP/Cascade Lake", 0xe12, 0xe19, 0, 0, PMU_UNC_COUNT_NCU_CONFIG,
		  PMU_UNC_BOX_FREEZE, 0, 0, 0, true },
		{ 0x6a, true, "Ice Lake-SP/-D", 0xe10, 0xe17, 0, 0, PMU_UNC_COUNT_NCU_CONFIG,
		  PMU_UNC_BOX_FREEZE, 0, 0, 0, true },
		{ 0x8f, true, "Sapphire/Emerald Rapids", 0x2013, 0x2019, 0, 0, PMU_UNC_COUNT_SPR_CONFIG,
		  PMU_UNC_BOX_FREEZE0, 0x2ff0, 0, 0, true },
		{ 0xcf, true, "Sapphire/Emerald Rapids", 0x2013, 0x2019, 0, 0, PMU_UNC_COUNT_SPR_CONFIG,
		  PMU_UNC_BOX_FREEZE0, 0x2ff0, 0, 0, true },
		{ 0xad, true, "Granite Rapids, Sierra Forest, Grand Ridge", 0x2013, 0x2019, 0, 0,
		  PMU_UNC_COUNT_GNR_CONFIG, PMU_UNC_BOX_FREEZE0, 0, 0, 0, true },
		{ 0xaf, true, "Granite Rapids, Sierra Forest, Grand Ridge", 0x2013, 0x2019, 0, 0,
		  PMU_UNC_COUNT_GNR_CONFIG, PMU_UNC_BOX_FREEZE0, 0, 0, 0, true },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pmu_caps c = { .vendor = PMU_VENDOR_INTEL, .family = 6, .model = cases[i].model };
		const struct pmu_uncore_model *m = pmu_uncore_model(&c);
		const struct pmu_unc_layout *a;

		HT_CHECK(m != NULL, "model %#x: no row", cases[i].model);
		if (!m)
			continue;
		HT_CHECK(strcmp(m->name, cases[i].row) == 0, "model %#x: row %s, want %s", cases[i].model,
			 m->name, cases[i].row);
		HT_CHECK(pmu_uncore_sel_msr(m->box, 1, 1) == cases[i].sel1_1 &&
				 pmu_uncore_ctr_msr(m->box, 1, 1) == cases[i].ctr1_1,
			 "model %#x %s 1 counter 1: select %#x counter %#x", cases[i].model, m->box->name,
			 pmu_uncore_sel_msr(m->box, 1, 1), pmu_uncore_ctr_msr(m->box, 1, 1));
		a = m->arb;
		if (cases[i].arb_sel) {
			unsigned b = a && a->fixed_nbox > 1 ? 1 : 0;
			HT_CHECK(a && pmu_uncore_sel_msr(a, b, a->first_ctr) == cases[i].arb_sel &&
					 pmu_uncore_ctr_msr(a, b, a->first_ctr) == cases[i].arb_ctr,
				 "model %#x ARB %u counter %u: select %#x counter %#x", cases[i].model, b,
				 a ? a->first_ctr : 0, a ? pmu_uncore_sel_msr(a, b, a->first_ctr) : 0,
				 a ? pmu_uncore_ctr_msr(a, b, a->first_ctr) : 0);
		} else {
			HT_CHECK(a == NULL, "model %#x: no ARB", cases[i].model);
		}
		HT_CHECK_EQ(m->count, cases[i].count);
		HT_CHECK_EQ(m->start, cases[i].start);
		HT_CHECK_EQ(m->global[0].msr, cases[i].global0);
		HT_CHECK_EQ(m->global[1].msr, cases[i].global1);
		HT_CHECK_EQ(m->box->fixed_nbox, cases[i].fixed);
		HT_CHECK(cases[i].has_event ? m->req_event != 0
					    : (m->req_event == 0 && m->no_req_why != NULL),
			 "model %#x: event %#x, gap %s", cases[i].model, m->req_event,
			 m->no_req_why ? m->no_req_why : "(none)");
	}
	/* Ice Lake-SP's irregular CHA units. */
	struct pmu_caps icx = { .vendor = PMU_VENDOR_INTEL, .family = 6, .model = 0x6a };
	const struct pmu_unc_layout *l = pmu_uncore_model(&icx)->box;
	HT_CHECK_EQ(pmu_uncore_unit(l, 17), 0xeee);
	HT_CHECK_EQ(pmu_uncore_unit(l, 18), 0xf0a);
	HT_CHECK_EQ(pmu_uncore_unit(l, 33), 0xfdc);
	HT_CHECK_EQ(pmu_uncore_unit(l, 34), 0xb60);
	HT_CHECK_EQ(pmu_uncore_unit(l, 39), 0xba6);
}

HT_TEST(client_sequence_program_start_read_stop)
{
	struct model_cpu_config c = snb_cfg();
	const struct pmu_unc_layout *l;
	struct pmu_uncore u;
	char why[PMU_REASON_LEN] = "";
	uint64_t v, sum = 0;

	model_boot_custom(&c, 1);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_OK);
	l = u.model->box;
	HT_CHECK(pmu_uncore_probe(&u) == NULL, "probe: %s", u.why);
	HT_CHECK_STR(model_trace_text(), "0x700<-0x5aa5 0x700<-0");
	model_trace_clear();
	HT_CHECK_EQ(pmu_uncore_prepare(&u), PMU_OK);
	for (unsigned b = 0; b < u.nboxes; b++)
		HT_CHECK_EQ(pmu_uncore_program(&u, l, b, 0, UNC_CBO_LOOKUP_EVENT, UNC_CBO_LOOKUP_ANY_UMASK,
					       true, why, sizeof(why)),
			    PMU_OK);
	HT_CHECK_EQ(pmu_uncore_start(&u), PMU_OK);
	HT_CHECK_STR(model_trace_text(),
		     "0x706<-0 0x700<-0x408f34 0x716<-0 0x710<-0x408f34 0x726<-0 0x720<-0x408f34 "
		     "0x736<-0 0x730<-0x408f34 0x391<-0x2000000f");
	model_tick(&(struct model_work){ .cycles = 100, .llc_lookups = 1002 });
	model_trace_clear();
	HT_CHECK_EQ(pmu_uncore_stop(&u), PMU_OK);
	model_tick(&(struct model_work){ .cycles = 100, .llc_lookups = 5000 }); /* not counted */
	for (unsigned b = 0; b < u.nboxes; b++) {
		HT_CHECK_EQ(pmu_uncore_read(&u, l, b, 0, &v), PMU_OK);
		HT_CHECK_EQ(v, 1002 * (b + 1) / 4 - 1002 * b / 4);
		sum += v;
		HT_CHECK_EQ(pmu_uncore_clear(&u, l, b, 0), PMU_OK);
	}
	HT_CHECK_EQ(sum, 1002);
	HT_CHECK_STR(model_trace_text(), "0x391<-0 0x700<-0 0x710<-0 0x720<-0 0x730<-0");

	/* Out of range and bad bits never reach a WRMSR. */
	model_trace_clear();
	HT_CHECK_EQ(pmu_uncore_program(&u, l, 4, 0, 0x34, 0x8f, true, why, sizeof(why)), PMU_E_INVAL);
	HT_CHECK_STR(why, "C-box 4 counter 0: only 4 boxes, counters 0-1");
	HT_CHECK_EQ(pmu_uncore_read(&u, l, 0, 2, &v), PMU_E_INVAL);
	HT_CHECK_EQ(model_trace_len(), 0);
}

HT_TEST(skylake_sequence_uses_e01)
{
	struct model_cpu_config c = snb_cfg();
	struct pmu_uncore u;
	char why[PMU_REASON_LEN] = "";

	c.signature = 0x000506e3, c.version = 4, c.uncore = MODEL_UNCORE_SKL, c.uncore_cboxes = 2;
	model_boot_custom(&c, 1);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_OK);
	HT_CHECK_EQ(pmu_uncore_program(&u, u.model->box, 1, 1, 0x34, 0x8f, true, why, sizeof(why)), PMU_OK);
	HT_CHECK_EQ(pmu_uncore_start(&u), PMU_OK);
	HT_CHECK_EQ(pmu_uncore_stop(&u), PMU_OK);
	HT_CHECK_STR(model_trace_text(), "0x717<-0 0x711<-0x408f34 0xe01<-0x2000001f 0xe01<-0");
	/* 0x391 is IA32_PERF_GLOBAL_STATUS_SET on this v4 core PMU, not the uncore. */
	HT_CHECK_EQ(model_peek(0, 0x391), 0);
}

/* Skylake-SP: reset and freeze through the box controls, the event select
 * with its enable, unfreeze; CHA counters are never written. */
HT_TEST(server_cha_sequence)
{
	struct model_cpu_config c = model_skx_config(0, 0, 2);
	const struct pmu_unc_layout *l;
	struct pmu_uncore u;
	char why[PMU_REASON_LEN] = "";
	uint64_t v0, v1;

	model_boot_custom(&c, 1);
	HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_OK);
	l = u.model->box;
	HT_CHECK(pmu_uncore_probe(&u) == NULL, "probe: %s", u.why);
	model_trace_clear();
	HT_CHECK_EQ(pmu_uncore_prepare(&u), PMU_OK);
	for (unsigned b = 0; b < 2; b++)
		HT_CHECK_EQ(pmu_uncore_program(&u, l, b, 0, UNC_CHA_READS_EVENT, UNC_CHA_READS_LOCAL_UMASK,
					       true, why, sizeof(why)),
			    PMU_OK);
	HT_CHECK_EQ(pmu_uncore_start(&u), PMU_OK);
	HT_CHECK_STR(model_trace_text(),
		     "0xe00<-0x10103 0xe10<-0x10103 0xe01<-0x400150 0xe11<-0x400150 0xe00<-0x10000 "
		     "0xe10<-0x10000");
	model_tick(&(struct model_work){ .cycles = 100, .llc_lookups = 301 });
	HT_CHECK_EQ(pmu_uncore_stop(&u), PMU_OK);
	model_tick(&(struct model_work){ .cycles = 100, .llc_lookups = 999 }); /* frozen */
	HT_CHECK_EQ(pmu_uncore_read(&u, l, 0, 0, &v0), PMU_OK);
	HT_CHECK_EQ(pmu_uncore_read(&u, l, 1, 0, &v1), PMU_OK);
	HT_CHECK_EQ(v0 + v1, 301);
	HT_CHECK_EQ(v0, 150);
	/* The counters are read-only in the model: a write faults. */
	HT_CHECK_EQ(pmu_hw_wrmsr(pmu_uncore_ctr_msr(l, 0, 0), 0), MODEL_VEC_GP);
}

/* A counter programmed without its enable counts nothing; a box that
 * ignores the enable (the defect) counts anyway. */
HT_TEST(disabled_counter_counts_nothing)
{
	for (int defect = 0; defect < 2; defect++) {
		struct model_cpu_config c = snb_cfg();
		struct pmu_uncore u;
		char why[PMU_REASON_LEN];
		uint64_t v;

		c.uncore_defect = defect ? X86PMU_DEFECT_UNCORE_IGNORES_ENABLE : X86PMU_DEFECT_NONE;
		model_boot_custom(&c, 1);
		HT_CHECK_EQ(pmu_uncore_detect(&u, pmu_caps()), PMU_OK);
		HT_CHECK_EQ(pmu_uncore_program(&u, u.model->box, 0, 0, 0x34, 0x8f, false, why, sizeof(why)),
			    PMU_OK);
		HT_CHECK_EQ(model_peek(0, 0x700), 0x8f34);
		HT_CHECK_EQ(pmu_uncore_start(&u), PMU_OK);
		model_tick(&(struct model_work){ .cycles = 100, .llc_lookups = 400 });
		pmu_uncore_stop(&u);
		HT_CHECK_EQ(pmu_uncore_read(&u, u.model->box, 0, 0, &v), PMU_OK);
		HT_CHECK_EQ(v, defect ? 100 : 0);
	}
}

static void detect_on(void *arg)
{
	pmu_uncore_detect(arg, pmu_caps());
}

static void program_and_start(void *arg)
{
	struct pmu_uncore *u = arg;
	char why[PMU_REASON_LEN];
	pmu_uncore_prepare(u);
	for (unsigned b = 0; b < u->nboxes; b++)
		pmu_uncore_program(u, u->model->box, b, 0, UNC_CHA_READS_EVENT, UNC_CHA_READS_LOCAL_UMASK,
				   true, why, sizeof(why));
	pmu_uncore_start(u);
}

static void lookups(void *arg)
{
	(void)arg;
	model_tick(&(struct model_work){ .cycles = 100, .llc_lookups = 1000 });
}

static uint64_t total(const struct pmu_uncore *u)
{
	uint64_t sum = 0, v;
	for (unsigned b = 0; b < u->nboxes; b++)
		if (pmu_uncore_read(u, u->model->box, b, 0, &v) == PMU_OK)
			sum += v;
	return sum;
}

struct read_arg {
	const struct pmu_uncore *u;
	uint64_t sum;
};

static void read_total(void *arg)
{
	struct read_arg *r = arg;
	r->sum = total(r->u);
}

/* Two packages, each detected and programmed from one of its own CPUs:
 * the work of package 1's CPU shows in package 1's CHAs only; with the
 * leak defect package 0's see it too. */
HT_TEST(packages_keep_their_counts)
{
	for (int defect = 0; defect < 2; defect++) {
		struct model_cpu_config cfg[4] = { model_skx_config(0, 0, 2), model_skx_config(0, 1, 2),
						   model_skx_config(1, 0, 2), model_skx_config(1, 1, 2) };
		struct pmu_package pk[PMU_MAX_PACKAGES];
		struct pmu_uncore u[2];
		struct read_arg r[2];

		for (unsigned i = 0; i < 4; i++)
			cfg[i].uncore_defect = defect ? X86PMU_DEFECT_UNCORE_LEAKS_ACROSS_PACKAGES
						      : X86PMU_DEFECT_NONE;
		model_boot_custom(cfg, 4);
		HT_CHECK_EQ(pmu_packages(pk, PMU_MAX_PACKAGES), 2);
		HT_CHECK(pk[0].id == 0 && pk[0].lead == 0 && pk[0].ncpus == 2,
			 "package 0: id %u lead %u cpus %u", pk[0].id, pk[0].lead, pk[0].ncpus);
		HT_CHECK(pk[1].id == 1 && pk[1].lead == 2 && pk[1].ncpus == 2,
			 "package 1: id %u lead %u cpus %u", pk[1].id, pk[1].lead, pk[1].ncpus);
		for (unsigned p = 0; p < 2; p++) {
			model_run_on(pk[p].lead, detect_on, &u[p]);
			HT_CHECK_EQ(u[p].package, p);
			model_run_on(pk[p].lead, program_and_start, &u[p]);
		}
		model_run_on(3, lookups, NULL);
		for (unsigned p = 0; p < 2; p++) {
			r[p].u = &u[p];
			model_run_on(pk[p].lead, read_total, &r[p]);
		}
		HT_CHECK_EQ(r[1].sum, 1000);
		HT_CHECK_EQ(r[0].sum, defect ? 1000 : 0);
	}
}

HT_MAIN("pmu_uncore")
