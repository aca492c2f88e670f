/* Host tests of the uncore discovery tables (pmu/intel/discovery.c) and
 * the CHAs and memory channels placed from them (pmu/intel/uncore.c,
 * pmu/intel/imc.c), on synthetic tables the model's platform serves
 * (tests/host/pmu_model.h, struct model_platform): a DVSEC in a function's
 * extended configuration space, its BAR, the table in memory built from
 * Linux uncore_discovery.h's layout, and the memory channels' MMIO
 * registers. Each malformed shape must give its reason with the value. */
#include <string.h>

#include "pmu/intel/discovery.h"
#include "pmu/intel/imc.h"
#include "pmu/intel/uncore.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/host/hosttest.h"
#include "tests/host/pmu_model.h"

/* --- The synthetic platform --- */

#define NFN 4
#define TABLE0 0xd0000000ull /* package p's table at TABLE0 + p * 0x10000 */
#define IMC0 0xe0000000ull   /* package p's channel c at IMC0 + p * 0x10000 + c * 0x1000 */
#define MAX_ENTRIES 16

static struct fn {
	bool on;
	uint8_t bus, dev;
	uint32_t cfg[1024];
} fns[NFN];

static uint64_t table[2][3 * (MAX_ENTRIES + 1)];
static uint32_t imc_regs[2][4][0x100]; /* dwords of each channel's first KiB */

static struct fn *fn_at(uint8_t bus, uint8_t dev, uint8_t f)
{
	for (unsigned i = 0; i < NFN; i++)
		if (fns[i].on && fns[i].bus == bus && fns[i].dev == dev && f == 0)
			return &fns[i];
	return NULL;
}

static bool p_pcie_read(uint8_t bus, uint8_t dev, uint8_t f, uint16_t off, uint32_t *val)
{
	struct fn *x = fn_at(bus, dev, f);

	if (!x)
		return false;
	*val = x->cfg[off / 4];
	return true;
}

static bool p_pcie_write(uint8_t bus, uint8_t dev, uint8_t f, uint16_t off, uint32_t val)
{
	(void)val;
	return fn_at(bus, dev, f) && off < 4096;
}

static bool p_mmio_read32(uint64_t a, uint32_t *val)
{
	for (unsigned p = 0; p < 2; p++) {
		uint64_t t = TABLE0 + p * 0x10000;
		if (a >= t && a + 4 <= t + sizeof(table[p])) {
			*val = (uint32_t)(table[p][(a - t) / 8] >> ((a - t) % 8 * 8));
			return true;
		}
		for (unsigned c = 0; c < 4; c++) {
			uint64_t r = IMC0 + p * 0x10000 + c * 0x1000;
			if (a >= r && a + 4 <= r + sizeof(imc_regs[p][c])) {
				*val = imc_regs[p][c][(a - r) / 4];
				return true;
			}
		}
	}
	return false;
}

static bool p_mmio_write32(uint64_t a, uint32_t val)
{
	for (unsigned p = 0; p < 2; p++)
		for (unsigned c = 0; c < 4; c++) {
			uint64_t r = IMC0 + p * 0x10000 + c * 0x1000;
			if (a >= r && a + 4 <= r + sizeof(imc_regs[p][c])) {
				imc_regs[p][c][(a - r) / 4] = val;
				return true;
			}
		}
	return false;
}

static const struct model_platform platform = {
	.pcie_read = p_pcie_read,
	.pcie_write = p_pcie_write,
	.mmio_read32 = p_mmio_read32,
	.mmio_write32 = p_mmio_write32,
};

/* Function i: 8086:09A7 at bus:dev.0 with memory decoding on, a 64-bit
 * BAR0 at the package's table, and at 100H an unrelated extended
 * capability, then at 140H the DVSEC (ID 23H, DVSEC ID 1, BIR 0). */
static void add_fn(unsigned i, uint8_t bus, uint8_t dev, uint64_t bar)
{
	struct fn *x = &fns[i];

	memset(x, 0, sizeof(*x));
	x->on = true, x->bus = bus, x->dev = dev;
	x->cfg[0] = 0x09a78086;
	x->cfg[1] = 0x00100002; /* memory space on, capabilities list */
	x->cfg[0x10 / 4] = (uint32_t)bar | 4;
	x->cfg[0x14 / 4] = (uint32_t)(bar >> 32);
	x->cfg[0x100 / 4] = 0x14010001; /* AER, version 1, next 140H */
	x->cfg[0x140 / 4] = 0x00010023; /* DVSEC, version 1, last */
	x->cfg[0x144 / 4] = 0x01008086; /* vendor 8086, revision 0, length 16 */
	x->cfg[0x148 / 4] = PMU_DISC_DVSEC_ID_PMON;
	x->cfg[0x14c / 4] = 0; /* BIR 0 */
}

/* Entry words (Linux uncore_discovery.h struct uncore_unit_discovery). */
static void set_unit(unsigned p, unsigned i, uint8_t nregs, uint8_t ctl_off, uint8_t width, uint8_t ctr_off,
		     unsigned access, uint64_t ctl, uint16_t type, uint16_t id)
{
	uint64_t *e = &table[p][3 * (i + 1)];

	e[0] = nregs | (uint64_t)ctl_off << 8 | (uint64_t)width << 16 | (uint64_t)ctr_off << 24 |
	       (uint64_t)access << 62;
	e[1] = ctl;
	e[2] = type | (uint64_t)id << 16;
}

/* Package p's table: a global state (stride 3 qwords, n entries, global
 * control MSR 2FF0H), two CHAs at 2000H/2010H (controls +2, counters +8,
 * 4 x 48), an empty entry, two memory channels in MMIO (controls +40H,
 * counters +8), and a unit of a type pmutest does not name. */
static void spr_table(unsigned p)
{
	memset(table[p], 0, sizeof(table[p]));
	table[p][0] = 3ull << 8 | 6ull << 16;
	table[p][1] = 0x2ff0;
	table[p][2] = 0;
	set_unit(p, 0, 4, 2, 48, 8, PMU_DISC_MSR, 0x2010, 0, 1);
	set_unit(p, 1, 4, 2, 48, 8, PMU_DISC_MSR, 0x2000, 0, 0);
	/* entry 2 left empty */
	set_unit(p, 3, 4, 0x40, 48, 0x08, PMU_DISC_MMIO, IMC0 + p * 0x10000, 6, 0);
	set_unit(p, 4, 4, 0x40, 48, 0x08, PMU_DISC_MMIO, IMC0 + p * 0x10000 + 0x1000, 6, 1);
	set_unit(p, 5, 2, 0x10, 48, 0x20, PMU_DISC_MSR, 0x3000, 42, 0);
}

/* Two Sapphire Rapids packages (family 6 model 0x8F) of two CPUs each
 * (the x2APIC ID's package field from bit 5: CPUID.0BH smt_bits 1 + 4),
 * package p's function on bus 0x7e p + 1 (buses rising with the package). */
static struct model_cpu_config spr_cpu(unsigned pkg, unsigned core)
{
	model_init(MODEL_SNB_CLIENT, false);
	struct model_cpu_config c = *model_config(0);
	c.signature = 0x000806f8, c.version = 5, c.uncore = MODEL_UNCORE_NONE;
	c.x2apic_id = pkg << 5 | core << 1, c.cores_per_pkg = 2;
	return c;
}

static void boot_spr(unsigned ntables)
{
	struct model_cpu_config cfg[4] = { spr_cpu(0, 0), spr_cpu(0, 1), spr_cpu(1, 0), spr_cpu(1, 1) };

	model_init_custom(cfg, 4);
	pmu_init_all(&model_probe_opts, model_run_on);
	memset(fns, 0, sizeof(fns));
	memset(imc_regs, 0, sizeof(imc_regs));
	for (unsigned p = 0; p < ntables; p++) {
		add_fn(p, (uint8_t)(0x7e * p + 1), 3, TABLE0 + p * 0x10000);
		spr_table(p);
	}
	model_set_platform(&platform);
	model_set_cpu(0);
	model_trace_clear();
	pmu_discovery_forget();
}

/* --- The tests --- */

HT_TEST(tables_found_per_package_in_bus_order)
{
	const struct pmu_discovery *d;
	const struct pmu_disc_table *t;
	const struct pmu_disc_unit *cha[4];
	char why[PMU_REASON_LEN];

	boot_spr(2);
	d = pmu_discovery();
	HT_CHECK(d->ecam, "ECAM");
	HT_CHECK_EQ(d->ntables, 2);
	t = &d->table[1];
	HT_CHECK(t->bus == 0x7f && t->dev == 3 && t->fn == 0, "table 1 at %02x:%02x.%x", t->bus, t->dev,
		 t->fn);
	HT_CHECK_EQ(t->dvsec, 0x140);
	HT_CHECK_EQ(t->base, TABLE0 + 0x10000);
	HT_CHECK_EQ(t->stride, 3);
	HT_CHECK_EQ(t->max_units, 6);
	HT_CHECK_EQ(t->global_ctl, 0x2ff0);
	HT_CHECK_EQ(t->nunits, 5);
	HT_CHECK_EQ(t->empty, 1);
	HT_CHECK_EQ(t->malformed, 0);
	/* In box ID order, whatever the table order. */
	HT_CHECK_EQ(pmu_discovery_units(t, 0, cha, 4), 2);
	HT_CHECK(cha[0]->id == 0 && cha[0]->ctl == 0x2000 && cha[1]->ctl == 0x2010, "CHAs %#llx %#llx",
		 (unsigned long long)cha[0]->ctl, (unsigned long long)cha[1]->ctl);
	HT_CHECK_EQ(pmu_discovery_units(t, 42, cha, 4), 1);
	HT_CHECK_EQ(cha[0]->access, PMU_DISC_MSR);
	/* Package IDs 0 and 1: the first table is package 0's. */
	HT_CHECK(pmu_discovery_of_package(0, why, sizeof(why)) == &d->table[0], "package 0: %s", why);
	HT_CHECK(pmu_discovery_of_package(1, why, sizeof(why)) == &d->table[1], "package 1: %s", why);
	HT_CHECK(pmu_discovery_of_package(7, why, sizeof(why)) == NULL, "package 7");
	HT_CHECK_STR(why, "package 7 is not among the 2 packages of the initialised CPUs");
	/* One scan: the result is kept. */
	fns[0].on = false;
	HT_CHECK_EQ(pmu_discovery()->ntables, 2);
}

struct unc_arg {
	struct pmu_uncore u;
	struct pmu_imc m;
	struct pmu_imc_counts k;
	int err, imc_err;
};

static void detect_here(void *arg)
{
	struct unc_arg *a = arg;

	a->err = pmu_uncore_detect(&a->u, pmu_caps());
	a->imc_err = pmu_imc_detect(&a->m, pmu_caps());
}

HT_TEST(chas_placed_from_the_table)
{
	struct unc_arg a;
	const struct pmu_unc_layout *l;

	boot_spr(2);
	model_run_on(2, detect_here, &a);
	HT_CHECK_EQ(a.err, PMU_OK);
	HT_CHECK(a.u.from_table, "from the table: %s", a.u.table_why);
	HT_CHECK_EQ(a.u.nboxes, 2);
	HT_CHECK_EQ(a.u.table_bus, 0x7f);
	l = pmu_uncore_box(&a.u);
	HT_CHECK(l == &a.u.table_box && l->kind == PMU_UNC_CHA, "the table's layout");
	HT_CHECK_EQ(pmu_uncore_sel_msr(l, 1, 3), 0x2010 + 2 + 3);
	HT_CHECK_EQ(pmu_uncore_ctr_msr(l, 0, 0), 0x2008);
	HT_CHECK_EQ(l->width, 48);
	HT_CHECK_EQ(pmu_uncore_nboxes(&a.u, l), 2);
	/* Box 2 is past the table's: refused before any write. */
	HT_CHECK_EQ(pmu_uncore_program(&a.u, l, 2, 0, 0x50, 1, true, a.m.why, sizeof(a.m.why)), PMU_E_INVAL);

	/* No table at all: the row's fixed addresses, and why. */
	boot_spr(0);
	model_run_on(0, detect_here, &a);
	HT_CHECK(!a.u.from_table, "no table");
	HT_CHECK(strstr(a.u.table_why, "no uncore discovery table: no Intel function") != NULL, "%s",
		 a.u.table_why);
	HT_CHECK_STR(a.m.why, a.u.table_why);
	HT_CHECK_EQ(a.imc_err, PMU_E_UNSUPPORTED);
}

HT_TEST(memory_channels_counted_through_mmio)
{
	struct unc_arg a;

	boot_spr(2);
	model_run_on(2, detect_here, &a);
	HT_CHECK_EQ(a.imc_err, PMU_OK);
	HT_CHECK_EQ(a.m.nunits, 2);
	HT_CHECK_EQ(a.m.unit[1].ctl, IMC0 + 0x11000);
	model_trace_clear();
	HT_CHECK_EQ(pmu_imc_begin(&a.m, &a.k), PMU_OK);
	/* Freeze and reset (box control 301H), CAS.RD 05H/CFH on controls 0
	 * and 2 (+40H, +48H), CAS.WR 05H/F0H on 1 and 3 (+44H, +4CH), then
	 * unfreeze each. */
	HT_CHECK_STR(model_trace_text(), "0x40000000<-0xe001000000000301 0x40000000<-0xe00100400000cf05 "
					 "0x40000000<-0xe00100440000f005 0x40000000<-0xe00100480000cf05 "
					 "0x40000000<-0xe001004c0000f005 0x40000000<-0xe001100000000301 "
					 "0x40000000<-0xe00110400000cf05 0x40000000<-0xe00110440000f005 "
					 "0x40000000<-0xe00110480000cf05 0x40000000<-0xe001104c0000f005 "
					 "0x40000000<-0xe001000000000000 0x40000000<-0xe001100000000000");
	/* The counters (+8, +10H) as the hardware would leave them, above
	 * the width's 48 bits too. */
	imc_regs[1][0][0x08 / 4] = 1000, imc_regs[1][0][0x10 / 4] = 10;
	imc_regs[1][1][0x08 / 4] = 24, imc_regs[1][1][0x0c / 4] = 0x10000, imc_regs[1][1][0x10 / 4] = 5;
	HT_CHECK_EQ(pmu_imc_end(&a.m, &a.k), PMU_OK);
	HT_CHECK_EQ(a.k.reads, 1024);
	HT_CHECK_EQ(a.k.writes, 15);
	HT_CHECK_EQ(imc_regs[1][1][0x40 / 4], 0); /* the controls cleared */
	HT_CHECK_EQ(imc_regs[1][1][0], 1);        /* left frozen */
}

/* Each malformed entry is left out and the first named with its words. */
HT_TEST(malformed_entries_named_with_their_value)
{
	const struct pmu_disc_table *t;

	boot_spr(2);
	set_unit(0, 2, 4, 2, 48, 8, 3, 0x2020, 0, 2);            /* access type 3 */
	set_unit(0, 5, 4, 0, 48, 8, PMU_DISC_MSR, 0x2030, 0, 3); /* control offset 0 */
	set_unit(1, 2, 4, 2, 48, 8, PMU_DISC_MSR, 0x2000, 0, 0); /* box 0 twice */
	set_unit(1, 5, 0, 2, 48, 8, PMU_DISC_MSR, 0x2040, 0, 4); /* no counters */
	t = &pmu_discovery()->table[0];
	HT_CHECK_EQ(t->malformed, 2);
	HT_CHECK_EQ(t->nunits, 4);
	HT_CHECK_STR(t->first_malformed,
		     "entry 2 (0xc000000008300204 0x2020 0x20000, at 0xd0000048): access type 3 (reserved)");
	t = &pmu_discovery()->table[1];
	HT_CHECK_EQ(t->malformed, 2);
	HT_CHECK_STR(t->first_malformed, "entry 2 (0x8300204 0x2000 0, at 0xd0010048): a second unit of the "
					 "same type and box ID");
}

HT_TEST(unusable_tables_say_why)
{
	struct unc_arg a;
	char why[PMU_REASON_LEN];

	/* No enhanced configuration space: nothing to scan. */
	boot_spr(2);
	model_set_platform(&(struct model_platform){ .no_ecam = true });
	HT_CHECK(!pmu_discovery()->ecam, "no ECAM");
	HT_CHECK_STR(pmu_discovery()->why, "no PCI Express extended configuration space (no ACPI MCFG): the "
					   "discovery DVSEC sits there");

	/* The BAR does not decode (reads all-ones), and memory decoding off. */
	boot_spr(2);
	fns[0].cfg[1] = 0x00100000;
	table[0][0] = table[0][1] = table[0][2] = ~0ull;
	HT_CHECK(pmu_discovery_of_package(0, why, sizeof(why)) == NULL, "package 0");
	HT_CHECK_STR(why, "package 0's table: 01:03.0 global discovery state at 0xd0000000 invalid: "
			  "0xffffffffffffffff 0xffffffffffffffff 0xffffffffffffffff (memory decoding off)");
	/* ... the CHAs then at the row's addresses; the channels refused. */
	model_run_on(0, detect_here, &a);
	HT_CHECK(!a.u.from_table, "not from the table");
	HT_CHECK_EQ(a.imc_err, PMU_E_UNSUPPORTED);
	HT_CHECK_STR(a.m.why, why);

	/* A BIR dword with more than the BAR index; an I/O BAR. */
	boot_spr(2);
	fns[0].cfg[0x14c / 4] = 0x100;
	fns[1].cfg[0x10 / 4] = 0xc001;
	HT_CHECK_STR(pmu_discovery()->table[0].why,
		     "01:03.0 DVSEC at 0x140: BIR dword 0x100 has bits beyond [2:0]");
	HT_CHECK_STR(pmu_discovery()->table[1].why,
		     "7f:03.0 DVSEC at 0x140 names BAR0 (config 0x10) = 0xc001: no 32/64-bit memory BAR");

	/* A table with no units: no CHA to place, no channel. */
	boot_spr(2);
	table[0][0] = 3ull << 8;
	model_run_on(0, detect_here, &a);
	HT_CHECK_EQ(a.err, PMU_E_UNSUPPORTED);
	HT_CHECK_STR(a.u.why,
		     "discovery table of package 0 (01:03.0, at 0xd0000000) lists no CHA (unit type 0) "
		     "among its 0 units");
	HT_CHECK_STR(a.m.why, "discovery table of package 0 (01:03.0, at 0xd0000000) lists no memory channel "
			      "(unit type 6) among its 0 units");

	/* CHAs that are not alike, or not MSRs. */
	boot_spr(2);
	set_unit(0, 0, 4, 2, 48, 9, PMU_DISC_MSR, 0x2010, 0, 1);
	model_run_on(0, detect_here, &a);
	HT_CHECK_STR(a.u.why,
		     "discovery table of package 0: CHA 1 has controls +0x2, counters +0x9, 4 x 48 bits; "
		     "CHA 0 +0x2, +0x8, 4 x 48");
	boot_spr(2);
	set_unit(0, 1, 4, 2, 48, 8, PMU_DISC_MMIO, 0xe0000000, 0, 0);
	model_run_on(0, detect_here, &a);
	HT_CHECK_STR(a.u.why,
		     "discovery table of package 0: CHA 0 is reached through MMIO at 0xe0000000, not an MSR");

	/* One table for two packages: which is whose is unknown. */
	boot_spr(1);
	HT_CHECK(pmu_discovery_of_package(0, why, sizeof(why)) == NULL, "one table");
	HT_CHECK_STR(why,
		     "1 discovery tables for 2 packages: cannot tell which is package 0's (one a package, in "
		     "bus order)");
}

/* An extended capability list that points back at itself ends the walk. */
HT_TEST(capability_loop_ends)
{
	boot_spr(2);
	fns[0].cfg[0x100 / 4] = 0x10010001; /* next: itself */
	HT_CHECK_EQ(pmu_discovery()->ntables, 1);
	HT_CHECK_EQ(pmu_discovery()->table[0].bus, 0x7f);
}

/* --- emu/model's Sapphire Rapids: its tables, read by the parser --- */

static struct model_cpu_config emu_spr_cpu(unsigned pkg, unsigned core, X86PMUDefect defect)
{
	struct model_cpu_config c = spr_cpu(pkg, core);

	c.uncore = MODEL_UNCORE_SPR, c.uncore_cboxes = 2, c.uncore_defect = defect;
	return c;
}

static void boot_emu_spr(X86PMUDefect defect)
{
	struct model_cpu_config cfg[4] = { emu_spr_cpu(0, 0, defect), emu_spr_cpu(0, 1, defect),
					   emu_spr_cpu(1, 0, defect), emu_spr_cpu(1, 1, defect) };

	model_init_custom(cfg, 4);
	pmu_init_all(&model_probe_opts, model_run_on);
	model_set_cpu(0);
	model_trace_clear();
	pmu_discovery_forget();
}

struct window {
	struct unc_arg a;
	uint64_t sum;
	int err;
};

static void cha_begin(void *arg)
{
	struct window *w = arg;
	const struct pmu_unc_layout *l;

	detect_here(&w->a);
	l = pmu_uncore_box(&w->a.u);
	w->err = w->a.err ? w->a.err : pmu_uncore_prepare(&w->a.u);
	for (unsigned b = 0; !w->err && b < w->a.u.nboxes; b++)
		w->err = pmu_uncore_program(&w->a.u, l, b, 0, UNC_CHA_READS_EVENT, UNC_CHA_READS_LOCAL_UMASK,
					    true, w->a.u.why, sizeof(w->a.u.why));
	if (!w->err)
		w->err = pmu_uncore_start(&w->a.u);
	if (!w->err && !w->a.imc_err)
		w->err = pmu_imc_begin(&w->a.m, &w->a.k);
}

static void cha_end(void *arg)
{
	struct window *w = arg;
	const struct pmu_unc_layout *l = pmu_uncore_box(&w->a.u);

	pmu_uncore_stop(&w->a.u);
	w->sum = 0;
	for (unsigned b = 0; b < w->a.u.nboxes; b++) {
		uint64_t v = 0;
		pmu_uncore_read(&w->a.u, l, b, 0, &v);
		w->sum += v;
	}
	if (!w->a.imc_err)
		w->err = pmu_imc_end(&w->a.m, &w->a.k);
}

static void work(void *arg)
{
	(void)arg;
	model_tick(&(struct model_work){
		.cycles = 10, .llc_lookups = 5000, .cas_reads = 8000, .cas_writes = 800 });
}

/* Two packages of emu/model's Sapphire Rapids: each finds its own table,
 * its CHAs and channels, and counts only its own package's work. */
HT_TEST(emulated_tables_place_each_package)
{
	struct window w[2] = { 0 };
	const struct pmu_disc_table *t;
	const struct pmu_disc_unit *imc[8];

	boot_emu_spr(X86PMU_DEFECT_NONE);
	HT_CHECK_EQ(pmu_discovery()->ntables, 2);
	t = &pmu_discovery()->table[1];
	HT_CHECK(t->bus == 3 && t->why[0] == 0, "table 1 at bus %u: %s", t->bus, t->why);
	HT_CHECK_EQ(t->nunits, 10);
	HT_CHECK_EQ(t->stride, 4);
	HT_CHECK_EQ(t->global_ctl, 0x2ff0);
	HT_CHECK_EQ(pmu_discovery_units(t, 6, imc, 8), 8);
	HT_CHECK_EQ(imc[7]->ctl, 0xd8000000ull + 0x100000 + 7 * 0x1000);
	model_run_on(0, cha_begin, &w[0]);
	model_run_on(2, cha_begin, &w[1]);
	HT_CHECK(w[0].err == PMU_OK && w[1].err == PMU_OK, "begin: %d %d (%s / %s)", w[0].err, w[1].err,
		 w[0].a.u.why, w[1].a.m.why);
	HT_CHECK(w[1].a.u.from_table && w[1].a.u.nboxes == 2, "package 1's CHAs from its table");
	model_run_on(3, work, NULL);
	model_run_on(0, cha_end, &w[0]);
	model_run_on(2, cha_end, &w[1]);
	HT_CHECK_EQ(w[1].sum, 5000);
	HT_CHECK_EQ(w[1].a.k.reads, 8000);
	HT_CHECK_EQ(w[1].a.k.writes, 800);
	HT_CHECK_EQ(w[0].sum, 0);
	HT_CHECK_EQ(w[0].a.k.reads, 0);
}

/* The profiles' defects, seen by the same windows. */
HT_TEST(emulated_table_defects)
{
	struct window w = { 0 };
	const struct pmu_disc_unit *imc[8];

	boot_emu_spr(X86PMU_DEFECT_DISCOVERY_COUNTER_OFFSET_WRONG);
	model_run_on(2, cha_begin, &w);
	HT_CHECK_EQ(w.err, PMU_OK);
	HT_CHECK_EQ(pmu_uncore_box(&w.a.u)->ctr, 9);
	model_run_on(3, work, NULL);
	model_run_on(2, cha_end, &w);
	HT_CHECK_EQ(w.sum, 0); /* counter 1 of each CHA, which nothing programmed */

	boot_emu_spr(X86PMU_DEFECT_DISCOVERY_UNIT_ON_WRONG_PACKAGE);
	HT_CHECK_EQ(pmu_discovery_units(&pmu_discovery()->table[0], 6, imc, 8), 8);
	HT_CHECK_EQ(imc[0]->ctl, 0xd8000000ull + 0x100000); /* package 1's */
	HT_CHECK_EQ(pmu_discovery_units(&pmu_discovery()->table[1], 6, imc, 8), 8);
	HT_CHECK_EQ(imc[0]->ctl, 0xd8000000ull);
}

HT_MAIN("pmu_discovery")
