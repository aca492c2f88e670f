/* Intel memory-controller counters: the generation table, finding the
 * registers (MCHBAR; the UBOX bus-to-package map and the channel
 * functions), and the counting windows. */
#include "pmu/intel/imc.h"

#include "lib/bits.h"
#include "lib/printf.h"
#include "pmu/intel/models.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"

#define PCI_VENDOR_INTEL 0x8086
#define MCHBAR_REG 0x48 /* host bridge 0:0.0, 64 bits; bit 0 MCHBAREN */
#define MCHBAR_EN BIT(0)
/* Box control and event-select bits of the Skylake-SP channels (Linux
 * uncore_snbep.c: SNBEP_PMON_BOX_CTL_RST_CTRL/RST_CTRS/FRZ, IVBEP
 * FRZ_EN; SNBEP_PMON_CTL_EN). */
#define CHAN_BOX_RST (BIT(0) | BIT(1))
#define CHAN_BOX_FRZ BIT(8)
#define CHAN_BOX_FRZ_EN BIT(16)
#define CHAN_SEL_EN BIT(22)
/* The discovery-era box control (Linux uncore_discovery.h
 * GENERIC_PMON_BOX_CTL_FRZ/RST_CTRL/RST_CTRS). */
#define DISC_BOX_FRZ BIT(0)
#define DISC_BOX_RST (BIT(8) | BIT(9))

#define SNB_TO_CML                                                                                       \
	(INTEL_UARCHS(INTEL_SANDYBRIDGE) | INTEL_UARCHS(INTEL_IVYBRIDGE) | INTEL_UARCHS(INTEL_HASWELL) | \
	 INTEL_UARCHS(INTEL_BROADWELL) | INTEL_UARCHS(INTEL_SKYLAKE))
/* MCHBAR's base: Linux takes the page-aligned register (bit 0 the enable;
 * the 2nd-10th generation datasheets, vol. 2, give bits 38:15). */
#define MCHBAR_BASE 0x7ffffff000ull

/* Skylake-SP's six channels: two controllers of three (Linux
 * skx_uncore_pci_ids; PCM src/types.h SKX_MCx_CHy_REGISTER_DEV/FUNC_ADDR). */
static const struct pmu_imc_fn skx_chans[] = {
	{ 10, 2, 0x2042 }, { 10, 6, 0x2046 }, { 11, 2, 0x204a },
	{ 12, 2, 0x2042 }, { 12, 6, 0x2046 }, { 13, 2, 0x204a },
};

static const struct pmu_imc_model imc_models[] = {
	/* Linux uncore_snb.c snb/skl/icl/rkl IMC: DRAM data reads at MCHBAR +
	 * 5050H, writes 5054H, 32-bit counts of 64-byte lines (its scale
	 * 6.103515625e-5 MiB); Intel PCM src/bw.cpp reads the same. */
	{ .name = "Sandy Bridge..Comet Lake, Ice Lake, Rocket Lake client",
	  .client = SNB_TO_CML | INTEL_UARCHS(INTEL_ICELAKE) | INTEL_UARCHS(INTEL_ROCKETLAKE),
	  .kind = PMU_IMC_MCHBAR,
	  .base_mask = MCHBAR_BASE,
	  .rd = 0x5050,
	  .wr = 0x5054,
	  .nmc = 1,
	  .width = 32,
	  .bytes_min = 64,
	  .bytes_max = 64,
	  .what = "UNC_IMC_DRAM_DATA_READS/WRITES (free-running)" },
	/* Linux tgl_l_uncore_imc_freerunning: reads 5058H, writes 50A0H, 64
	 * bits, memory controller 1 at + 10000H (TGL_UNCORE_MMIO_IMC_MEM_OFFSET). */
	{ .name = "Tiger Lake-L client",
	  .client = INTEL_UARCHS(INTEL_TIGERLAKE_L),
	  .kind = PMU_IMC_MCHBAR,
	  .base_mask = MCHBAR_BASE,
	  .rd = 0x5058,
	  .wr = 0x50a0,
	  .mc_stride = 0x10000,
	  .nmc = 2,
	  .width = 64,
	  .bytes_min = 64,
	  .bytes_max = 64,
	  .what = "UNC_MCx_RDCAS/WRCAS_COUNT_FREERUN" },
	/* Linux tgl_uncore_imc_freerunning and adl_uncore_imc_freerunning:
	 * D858H reads, D8A0H writes (perfmon alderlake_uncore.json
	 * UNC_MC0/1_RDCAS/WRCAS_COUNT_FREERUN, "every 64B"). */
	{ .name = "Tiger Lake-H, Alder/Raptor Lake client",
	  .client = INTEL_UARCHS(INTEL_TIGERLAKE) | INTEL_UARCHS(INTEL_ALDERLAKE),
	  .kind = PMU_IMC_MCHBAR,
	  .base_mask = MCHBAR_BASE,
	  .rd = 0xd858,
	  .wr = 0xd8a0,
	  .mc_stride = 0x10000,
	  .nmc = 2,
	  .width = 64,
	  .bytes_min = 64,
	  .bytes_max = 64,
	  .what = "UNC_MCx_RDCAS/WRCAS_COUNT_FREERUN" },
	/* The same registers (Linux mtl/lnl reuse Alder Lake's); perfmon
	 * meteorlake/arrowlake_uncore.json: a CAS moves 32 or 64 bytes,
	 * where Linux scales by 64. */
	{ .name = "Meteor/Arrow/Lunar Lake client",
	  .client = INTEL_UARCHS(INTEL_METEORLAKE) | INTEL_UARCHS(INTEL_ARROWLAKE) |
		    INTEL_UARCHS(INTEL_LUNARLAKE),
	  .kind = PMU_IMC_MCHBAR,
	  .base_mask = MCHBAR_BASE,
	  .rd = 0xd858,
	  .wr = 0xd8a0,
	  .mc_stride = 0x10000,
	  .nmc = 2,
	  .width = 64,
	  .bytes_min = 32,
	  .bytes_max = 64,
	  .what = "UNC_M_MCx_RDCAS/WRCAS_COUNT_FREERUN" },
	/* Linux skx_uncore_imc and snbep_pci2phy_map_init(0x2014, SKX_CPUNODEID
	 * C0H, SKX_GIDNIDMAP D4H); the UBOX at 8.2 as PCM's
	 * pcm-iio-topology.cpp; perfmon skylakex_uncore.json UNC_M_CAS_COUNT.RD
	 * (04H/03H) and .WR (04H/0CH). */
	{ .name = "Skylake-SP/Cascade Lake",
	  .server = INTEL_UARCHS(INTEL_SKYLAKE),
	  .kind = PMU_IMC_CHANNELS,
	  .ubox = { 8, 2, 0x2014 },
	  .node_off = 0xc0,
	  .map_off = 0xd4,
	  .chans = skx_chans,
	  .nchans = ARRAY_LEN(skx_chans),
	  .box_ctl = 0xf4,
	  .sel0 = 0xd8,
	  .ctr0 = 0xa0,
	  .cas_event = 0x04,
	  .rd_umask = 0x03,
	  .wr_umask = 0x0c,
	  .bytes_min = 64,
	  .bytes_max = 64,
	  .what = "UNC_M_CAS_COUNT.RD/.WR" },
	/* The memory channels are unit type 6 of the discovery table (Linux
	 * uncore_snbep.c spr_uncores[6], spr_uncore_imc: MMIO units), driven
	 * as the generic discovery units (uncore_discovery.c: no enable bit,
	 * box control freeze/reset); CAS reads 05H/CFH, writes 05H/F0H (Linux
	 * "perf/x86/intel/uncore: Add events for Intel SPR IMC PMU",
	 * spr_uncore_imc_events; perfmon sapphirerapids_uncore_memory.json
	 * UNC_M_CAS_COUNT.RD/.WR), 64 bytes a count (Linux's scale). The
	 * fixed DCLK counter at +38H, its control at +54H (Linux
	 * spr_uncore_imc: SNR_IMC_MMIO_PMON_FIXED_CTR/_CTL). */
	{ .name = "Sapphire/Emerald Rapids",
	  .server = INTEL_UARCHS(INTEL_SAPPHIRERAPIDS),
	  .kind = PMU_IMC_DISCOVERY,
	  .disc_type = 6,
	  .fixed_ctr = 0x38,
	  .fixed_ctl = 0x54,
	  .cas_event = 0x05,
	  .rd_umask = 0xcf,
	  .wr_umask = 0xf0,
	  .bytes_min = 64,
	  .bytes_max = 64,
	  .what = "UNC_M_CAS_COUNT.RD/.WR" },
};

const struct pmu_imc_model *pmu_imc_model(const struct pmu_caps *c)
{
	const struct intel_model *m = intel_model_of(c);

	for (unsigned i = 0; m && i < ARRAY_LEN(imc_models); i++)
		if (intel_uarch_in(m->uarch, m->server ? imc_models[i].server : imc_models[i].client))
			return &imc_models[i];
	return NULL;
}

static uint32_t cfg_read(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off)
{
	uint32_t v;
	return pmu_hw_pci_read32(bus, dev, fn, off, &v) ? ~0u : v;
}

/* Under a hypervisor the host bridge and the buses are the VM's. */
static const char *hv_note(const struct pmu_caps *c)
{
	return c->hypervisor ? " (under a hypervisor, whose platform has none)" : "";
}

static int detect_mchbar(struct pmu_imc *m, const struct pmu_caps *c)
{
	const struct pmu_imc_model *r = m->model;
	uint32_t id = cfg_read(0, 0, 0, 0), probe;

	if ((id & 0xffff) != PCI_VENDOR_INTEL)
		return kerrf(m->why, sizeof(m->why), PMU_E_UNSUPPORTED,
			     "0:0.0 is no Intel host bridge (vendor:device %04x:%04x): no MCHBAR",
			     id & 0xffff, id >> 16);
	m->mchbar_reg = cfg_read(0, 0, 0, MCHBAR_REG) | (uint64_t)cfg_read(0, 0, 0, MCHBAR_REG + 4) << 32;
	if (!(m->mchbar_reg & MCHBAR_EN) || !(m->mchbar_reg & r->base_mask))
		return kerrf(
			m->why, sizeof(m->why), PMU_E_UNSUPPORTED,
			"MCHBAR (host bridge 0:0.0 config 48H) reads %#llx: not enabled by the firmware%s",
			(unsigned long long)m->mchbar_reg, hv_note(c));
	m->base = m->mchbar_reg & r->base_mask;
	if (pmu_hw_mmio_read32(m->base + r->rd, &probe))
		return kerrf(m->why, sizeof(m->why), PMU_E_FAULT, "MCHBAR %#llx + %#x is not mapped",
			     (unsigned long long)m->base, r->rd);
	return PMU_OK;
}

/* The package of bus b: the UBOX on it, else the nearest UBOX bus below
 * (Linux snbep_pci2phy_map_init without "reverse" for Skylake-SP); -1 if
 * none. The UBOX's node ID is field i of its node-to-package map. */
static int detect_channels(struct pmu_imc *m, const struct pmu_caps *c)
{
	const struct pmu_imc_model *r = m->model;
	int pkg = -1;

	for (unsigned bus = 0; bus < 256; bus++) {
		uint32_t id = cfg_read((uint8_t)bus, r->ubox.dev, r->ubox.fn, 0);

		m->buses_scanned++;
		if (id == ((uint32_t)r->ubox.id << 16 | PCI_VENDOR_INTEL)) {
			uint32_t node = cfg_read((uint8_t)bus, r->ubox.dev, r->ubox.fn, r->node_off) & 7;
			uint32_t map = cfg_read((uint8_t)bus, r->ubox.dev, r->ubox.fn, r->map_off);
			m->uboxes++;
			pkg = -1;
			for (int i = 0; i < 8; i++)
				if (((map >> (3 * i)) & 7) == node) {
					pkg = i;
					break;
				}
		}
		if (pkg < 0 || (uint32_t)pkg != m->package)
			continue;
		for (unsigned c = 0; c < r->nchans && m->nchan < PMU_IMC_MAX_CHANNELS; c++) {
			if (cfg_read((uint8_t)bus, r->chans[c].dev, r->chans[c].fn, 0) !=
			    ((uint32_t)r->chans[c].id << 16 | PCI_VENDOR_INTEL))
				continue;
			m->chan[m->nchan].bus = (uint8_t)bus;
			m->chan[m->nchan].dev = r->chans[c].dev;
			m->chan[m->nchan].fn = r->chans[c].fn;
			m->nchan++;
		}
	}
	if (!m->uboxes)
		return kerrf(m->why, sizeof(m->why), PMU_E_UNSUPPORTED,
			     "no UBOX (PCI 8086:%04x at %u.%u) on any of %u buses: no bus-to-package map",
			     r->ubox.id, r->ubox.dev, r->ubox.fn, m->buses_scanned);
	if (!m->nchan)
		return kerrf(
			m->why, sizeof(m->why), PMU_E_UNSUPPORTED,
			"no memory channel function (8086:%04x at %u.%u, ...) on the buses of package %u (%u UBOX "
			"found)",
			r->chans[0].id, r->chans[0].dev, r->chans[0].fn, m->package, m->uboxes);
	return PMU_OK;
}

/* The package's memory channels from its discovery table. */
static int detect_discovery(struct pmu_imc *m)
{
	const struct pmu_disc_unit *list[PMU_IMC_MAX_UNITS];
	const struct pmu_disc_table *t = pmu_discovery_of_package(m->package, m->why, sizeof(m->why));

	if (!t)
		return PMU_E_UNSUPPORTED;
	m->table_bus = t->bus, m->table_dev = t->dev, m->table_fn = t->fn;
	m->table_base = t->base;
	m->nunits = pmu_discovery_units(t, m->model->disc_type, list, PMU_IMC_MAX_UNITS);
	if (!m->nunits)
		return kerrf(
			m->why, sizeof(m->why), PMU_E_UNSUPPORTED,
			"discovery table of package %u (%02x:%02x.%x, at %#llx) lists no memory channel (unit "
			"type %u) among its %u units",
			m->package, t->bus, t->dev, t->fn, (unsigned long long)t->base, m->model->disc_type,
			t->nunits);
	if (m->nunits > PMU_IMC_MAX_UNITS)
		m->nunits = PMU_IMC_MAX_UNITS;
	for (unsigned k = 0; k < m->nunits; k++) {
		m->unit[k] = *list[k];
		if (m->unit[k].nctrs < 2)
			return kerrf(
				m->why, sizeof(m->why), PMU_E_UNSUPPORTED,
				"discovery table of package %u: memory channel %u has %u counter(s); the CAS "
				"reads and writes need 2",
				m->package, m->unit[k].id, m->unit[k].nctrs);
	}
	return PMU_OK;
}

int pmu_imc_detect(struct pmu_imc *m, const struct pmu_caps *c)
{
	const struct intel_model *im = intel_model_of(c);

	*m = (struct pmu_imc){ 0 };
	if (pmu_this_cpu())
		m->package = pmu_this_cpu()->topo.package;
	if (c->vendor != PMU_VENDOR_INTEL)
		return kerrf(m->why, sizeof(m->why), PMU_E_UNSUPPORTED,
			     "memory-controller counters are Intel's here (vendor %s)", c->vendor_id);
	m->model = pmu_imc_model(c);
	if (!m->model) {
		if (im)
			return kerrf(m->why, sizeof(m->why), PMU_E_UNSUPPORTED,
				     "family %u model %#x is %s%s: no memory-controller table for it",
				     c->family, c->model, im->name, im->server ? " (server)" : "");
		return kerrf(m->why, sizeof(m->why), PMU_E_UNSUPPORTED,
			     "no memory-controller table for family %u model %#x", c->family, c->model);
	}
	if (m->model->kind == PMU_IMC_DISCOVERY)
		return detect_discovery(m);
	return m->model->kind == PMU_IMC_MCHBAR ? detect_mchbar(m, c) : detect_channels(m, c);
}

static int free_running(const struct pmu_imc *m, unsigned mc, uint32_t off, uint64_t *v)
{
	uint64_t a = m->base + mc * m->model->mc_stride + off;
	uint32_t v32;
	int err;

	if (m->model->width == 64)
		return pmu_hw_mmio_read64(a, v);
	err = pmu_hw_mmio_read32(a, &v32);
	*v = v32;
	return err;
}

static int chan_write(const struct pmu_imc *m, unsigned c, uint8_t off, uint32_t v)
{
	return pmu_hw_pci_write32(m->chan[c].bus, m->chan[c].dev, m->chan[c].fn, off, v);
}

static uint64_t chan_read64(const struct pmu_imc *m, unsigned c, uint8_t off)
{
	/* A 64-bit counter read as two dwords (Linux snbep_uncore_pci_read_counter). */
	return cfg_read(m->chan[c].bus, m->chan[c].dev, m->chan[c].fn, off) |
	       (uint64_t)cfg_read(m->chan[c].bus, m->chan[c].dev, m->chan[c].fn, off + 4) << 32;
}

/*
 * A discovery unit's registers (pmu/intel/discovery.h): reg -1 is the box
 * control, reg i counter control i; written as the unit's access type
 * says (MMIO and PCI dwords, as Linux's generic discovery ops write them).
 */
static int unit_write(const struct pmu_disc_unit *u, int reg, uint32_t v)
{
	uint64_t a = u->ctl;
	uint16_t off = (uint16_t)(u->ctl & 0xfff);

	switch (u->access) {
	case PMU_DISC_MMIO: return pmu_hw_mmio_write32(reg < 0 ? a : a + u->ctl_off + 4 * (unsigned)reg, v);
	case PMU_DISC_PCI:
		return pmu_hw_pcie_write32(
			(uint8_t)BITS(a, 27, 20), (uint8_t)BITS(a, 19, 15), (uint8_t)BITS(a, 14, 12),
			(uint16_t)(reg < 0 ? off : off + u->ctl_off + 8 * (unsigned)reg), v);
	case PMU_DISC_MSR:
		return pmu_hw_wrmsr((uint32_t)(reg < 0 ? a : a + u->ctl_off + (unsigned)reg), v) ? PMU_E_FAULT
												 : PMU_OK;
	}
	return PMU_E_INVAL;
}

static int unit_read_ctr(const struct pmu_disc_unit *u, unsigned i, uint64_t *v)
{
	uint64_t a = u->ctl;
	uint16_t off = (uint16_t)((u->ctl & 0xfff) + u->ctr_off + 8 * i);
	uint32_t lo, hi;
	int err = PMU_E_INVAL;

	*v = 0;
	switch (u->access) {
	case PMU_DISC_MMIO: err = pmu_hw_mmio_read64(a + u->ctr_off + 8 * i, v); break;
	case PMU_DISC_PCI: {
		uint8_t bus = (uint8_t)BITS(a, 27, 20), dev = (uint8_t)BITS(a, 19, 15),
			fn = (uint8_t)BITS(a, 14, 12);
		err = pmu_hw_pcie_read32(bus, dev, fn, off, &lo) |
		      pmu_hw_pcie_read32(bus, dev, fn, off + 4, &hi);
		*v = lo | (uint64_t)hi << 32;
		break;
	}
	case PMU_DISC_MSR:
		err = pmu_hw_rdmsr((uint32_t)(a + u->ctr_off + i), v) ? PMU_E_FAULT : PMU_OK;
		break;
	}
	*v &= pmu_width_mask(u->width);
	return err ? PMU_E_FAULT : PMU_OK;
}

/* Freeze and reset every unit, program the CAS events (no enable bit:
 * Linux spr_uncore_mmio_enable_event writes the event alone), unfreeze. */
static int discovery_begin(const struct pmu_imc *m)
{
	const struct pmu_imc_model *r = m->model;

	for (unsigned u = 0; u < m->nunits; u++)
		if (unit_write(&m->unit[u], -1, DISC_BOX_RST | DISC_BOX_FRZ) ||
		    unit_write(&m->unit[u], 0, (uint32_t)r->rd_umask << 8 | r->cas_event) ||
		    unit_write(&m->unit[u], 1, (uint32_t)r->wr_umask << 8 | r->cas_event) ||
		    (m->unit[u].nctrs >= 4 &&
		     (unit_write(&m->unit[u], 2, (uint32_t)r->rd_umask << 8 | r->cas_event) ||
		      unit_write(&m->unit[u], 3, (uint32_t)r->wr_umask << 8 | r->cas_event))))
			return PMU_E_FAULT;
	for (unsigned u = 0; u < m->nunits; u++)
		if (unit_write(&m->unit[u], -1, 0))
			return PMU_E_FAULT;
	return PMU_OK;
}

static int discovery_end(const struct pmu_imc *m, struct pmu_imc_counts *k)
{
	for (unsigned u = 0; u < m->nunits; u++)
		if (unit_write(&m->unit[u], -1, DISC_BOX_FRZ))
			return PMU_E_FAULT;
	for (unsigned u = 0; u < m->nunits; u++) {
		uint64_t rd, wr;

		if (unit_read_ctr(&m->unit[u], 0, &rd) || unit_read_ctr(&m->unit[u], 1, &wr))
			return PMU_E_FAULT;
		k->reads += rd;
		k->writes += wr;
		unit_write(&m->unit[u], 0, 0);
		unit_write(&m->unit[u], 1, 0);
		if (m->unit[u].nctrs < 4) {
			k->second = false;
			continue;
		}
		if (unit_read_ctr(&m->unit[u], 2, &rd) || unit_read_ctr(&m->unit[u], 3, &wr))
			return PMU_E_FAULT;
		k->reads2 += rd;
		k->writes2 += wr;
		unit_write(&m->unit[u], 2, 0);
		unit_write(&m->unit[u], 3, 0);
	}
	return PMU_OK;
}

int pmu_imc_begin(const struct pmu_imc *m, struct pmu_imc_counts *k)
{
	const struct pmu_imc_model *r = m->model;

	*k = (struct pmu_imc_counts){ 0 };
	if (!r)
		return PMU_E_INVAL;
	if (r->kind == PMU_IMC_DISCOVERY)
		return discovery_begin(m);
	if (r->kind == PMU_IMC_MCHBAR) {
		for (unsigned mc = 0; mc < r->nmc; mc++)
			if (free_running(m, mc, r->rd, &k->rd0[mc]) ||
			    free_running(m, mc, r->wr, &k->wr0[mc]))
				return PMU_E_FAULT;
		return PMU_OK;
	}
	/* Freeze and reset, the two CAS events with their enables, unfreeze
	 * (Linux: init_box, enable_event, enable_box). */
	for (unsigned c = 0; c < m->nchan; c++)
		if (chan_write(m, c, r->box_ctl, CHAN_BOX_RST | CHAN_BOX_FRZ_EN | CHAN_BOX_FRZ) ||
		    chan_write(m, c, r->sel0, CHAN_SEL_EN | (uint32_t)r->rd_umask << 8 | r->cas_event) ||
		    chan_write(m, c, r->sel0 + 4, CHAN_SEL_EN | (uint32_t)r->wr_umask << 8 | r->cas_event) ||
		    chan_write(m, c, r->sel0 + 8, CHAN_SEL_EN | (uint32_t)r->rd_umask << 8 | r->cas_event) ||
		    chan_write(m, c, r->sel0 + 12, CHAN_SEL_EN | (uint32_t)r->wr_umask << 8 | r->cas_event))
			return PMU_E_FAULT;
	for (unsigned c = 0; c < m->nchan; c++)
		if (chan_write(m, c, r->box_ctl, CHAN_BOX_FRZ_EN))
			return PMU_E_FAULT;
	return PMU_OK;
}

int pmu_imc_end(const struct pmu_imc *m, struct pmu_imc_counts *k)
{
	const struct pmu_imc_model *r = m->model;

	if (!r)
		return PMU_E_INVAL;
	k->reads = k->writes = 0;
	k->reads2 = k->writes2 = 0;
	k->second = r->kind != PMU_IMC_MCHBAR;
	if (r->kind == PMU_IMC_DISCOVERY)
		return discovery_end(m, k);
	if (r->kind == PMU_IMC_MCHBAR) {
		for (unsigned mc = 0; mc < r->nmc; mc++) {
			uint64_t rd, wr;
			if (free_running(m, mc, r->rd, &rd) || free_running(m, mc, r->wr, &wr))
				return PMU_E_FAULT;
			k->reads += pmu_delta(k->rd0[mc], rd, r->width);
			k->writes += pmu_delta(k->wr0[mc], wr, r->width);
		}
		return PMU_OK;
	}
	for (unsigned c = 0; c < m->nchan; c++)
		if (chan_write(m, c, r->box_ctl, CHAN_BOX_FRZ_EN | CHAN_BOX_FRZ))
			return PMU_E_FAULT;
	for (unsigned c = 0; c < m->nchan; c++) {
		k->reads += chan_read64(m, c, r->ctr0) & pmu_width_mask(48);
		k->writes += chan_read64(m, c, r->ctr0 + 8) & pmu_width_mask(48);
		k->reads2 += chan_read64(m, c, r->ctr0 + 16) & pmu_width_mask(48);
		k->writes2 += chan_read64(m, c, r->ctr0 + 24) & pmu_width_mask(48);
		for (uint8_t i = 0; i < 4; i++)
			chan_write(m, c, (uint8_t)(r->sel0 + 4 * i), 0);
	}
	return PMU_OK;
}

unsigned pmu_imc_nchan(const struct pmu_imc *m)
{
	if (!m->model || m->model->kind == PMU_IMC_MCHBAR)
		return 0;
	return m->model->kind == PMU_IMC_DISCOVERY ? m->nunits : m->nchan;
}

static int unit_read_ctl(const struct pmu_disc_unit *u, unsigned i, uint32_t *v)
{
	uint64_t a = u->ctl, q = 0;
	uint16_t off = (uint16_t)((u->ctl & 0xfff) + u->ctl_off + 8 * i);
	int err = PMU_E_INVAL;

	switch (u->access) {
	case PMU_DISC_MMIO: return pmu_hw_mmio_read32(a + u->ctl_off + 4 * i, v) ? PMU_E_FAULT : PMU_OK;
	case PMU_DISC_PCI:
		return pmu_hw_pcie_read32((uint8_t)BITS(a, 27, 20), (uint8_t)BITS(a, 19, 15),
					  (uint8_t)BITS(a, 14, 12), off, v)
			       ? PMU_E_FAULT
			       : PMU_OK;
	case PMU_DISC_MSR:
		err = pmu_hw_rdmsr((uint32_t)(a + u->ctl_off + i), &q) ? PMU_E_FAULT : PMU_OK;
		*v = (uint32_t)q;
		break;
	}
	return err;
}

int pmu_imc_fixed_read(const struct pmu_imc *m, unsigned c, uint32_t *ctl, uint64_t *q, uint32_t half[2])
{
	const struct pmu_disc_unit *u;
	uint64_t a;

	*ctl = 0, *q = 0, half[0] = half[1] = 0;
	if (!m->model || m->model->kind != PMU_IMC_DISCOVERY || !m->model->fixed_ctr || c >= m->nunits ||
	    m->unit[c].access != PMU_DISC_MMIO)
		return PMU_E_INVAL;
	u = &m->unit[c];
	a = u->ctl + m->model->fixed_ctr;
	if (pmu_hw_mmio_read32(u->ctl + m->model->fixed_ctl, ctl) || pmu_hw_mmio_read64(a, q) ||
	    pmu_hw_mmio_read32(a, &half[0]) || pmu_hw_mmio_read32(a + 4, &half[1]))
		return PMU_E_FAULT;
	return PMU_OK;
}

int pmu_imc_ctl_roundtrip(const struct pmu_imc *m, unsigned c, unsigned i, uint32_t v, uint32_t *back)
{
	int err;

	*back = 0;
	if (c >= pmu_imc_nchan(m) || i >= 4)
		return PMU_E_INVAL;
	if (m->model->kind == PMU_IMC_DISCOVERY) {
		if (i >= m->unit[c].nctrs)
			return PMU_E_INVAL;
		err = unit_write(&m->unit[c], (int)i, v);
		if (!err)
			err = unit_read_ctl(&m->unit[c], i, back);
		unit_write(&m->unit[c], (int)i, 0);
		return err ? PMU_E_FAULT : PMU_OK;
	}
	err = chan_write(m, c, (uint8_t)(m->model->sel0 + 4 * i), v);
	if (!err)
		*back = cfg_read(m->chan[c].bus, m->chan[c].dev, m->chan[c].fn,
				 (uint8_t)(m->model->sel0 + 4 * i));
	chan_write(m, c, (uint8_t)(m->model->sel0 + 4 * i), 0);
	return err ? PMU_E_FAULT : PMU_OK;
}
