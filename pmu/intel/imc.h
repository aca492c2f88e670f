/* Intel memory-controller counters: the client parts' free-running DRAM
 * read and write counters in MCHBAR, and the server parts' memory channels
 * (Skylake-SP: PCI functions with CAS counters). One memory controller set
 * per package (a client platform has one), driven from a CPU of it. */
#ifndef PMU_INTEL_IMC_H
#define PMU_INTEL_IMC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/intel/discovery.h"
#include "pmu/pmu.h"

enum pmu_imc_kind {
	PMU_IMC_MCHBAR,    /* free-running counters at offsets of MCHBAR (client) */
	PMU_IMC_CHANNELS,  /* programmable channels in PCI configuration space (server) */
	PMU_IMC_DISCOVERY, /* channels the package's discovery table places (MMIO, PCI or MSR) */
};

/* A channel function: device, function and device ID (vendor 8086). */
struct pmu_imc_fn {
	uint8_t dev, fn;
	uint16_t id;
};

#define PMU_IMC_MAX_CHANNELS 8
#define PMU_IMC_MAX_MCS 2
#define PMU_IMC_MAX_UNITS 16

/* A generation's memory controller; its sources are beside it in
 * pmu/intel/imc.c. */
struct pmu_imc_model {
	const char *name;
	uint32_t client, server; /* INTEL_UARCHS() of the parts it holds for */
	enum pmu_imc_kind kind;
	/* MCHBAR: host bridge 0:0.0 config 48H (64 bits, bit 0 enable); the
	 * counters of controller k at base + k * mc_stride + rd / wr. */
	uint64_t base_mask;
	uint32_t rd, wr, mc_stride;
	uint8_t nmc, width;
	/* Channels: the UBOX that says a bus's package (node ID at node_off,
	 * the node-to-package map at map_off, eight 3-bit fields), the channel
	 * functions, their registers and the CAS events. */
	struct pmu_imc_fn ubox;
	uint8_t node_off, map_off;
	const struct pmu_imc_fn *chans;
	unsigned nchans;
	uint8_t box_ctl, sel0, ctr0, cas_event, rd_umask, wr_umask;
	/* Bytes one count stands for: 64, or 32 to 64 where a CAS may move
	 * half a line (Meteor Lake on, perfmon's descriptions). */
	uint8_t bytes_min, bytes_max;
	const char *what;   /* "UNC_M_CAS_COUNT.RD/.WR" or the free-running counters' names */
	uint16_t disc_type; /* discovery: the channels' unit type */
	/* Discovery MMIO units: the fixed (DCLK) counter and its control, as
	 * offsets from the box control (0: none; the table does not list them). */
	uint8_t fixed_ctr, fixed_ctl;
};

/* What detection found on one package. */
struct pmu_imc {
	const struct pmu_imc_model *model;
	uint32_t package;
	uint64_t mchbar_reg, base; /* client: 0:0.0 48H as read, and the base */
	unsigned nchan;            /* server: the package's channels found */
	struct {
		uint8_t bus, dev, fn;
	} chan[PMU_IMC_MAX_CHANNELS];
	unsigned buses_scanned, uboxes;
	char why[PMU_REASON_LEN];
	/* Discovery: the package's table and its memory-channel units. */
	uint8_t table_bus, table_dev, table_fn;
	uint64_t table_base;
	unsigned nunits; /* the units of the type the table lists (at most PMU_IMC_MAX_UNITS kept) */
	struct pmu_disc_unit unit[PMU_IMC_MAX_UNITS];
};

/* CAS reads and writes (the counts; x bytes_min..bytes_max in bytes). */
struct pmu_imc_counts {
	uint64_t reads, writes;
	/* The same two events on counters 2 and 3 of the same channels, in
	 * the same window (programmed counters only: `second`). */
	bool second;
	uint64_t reads2, writes2;
	/* Free-running counters: the raw values at pmu_imc_begin. */
	uint64_t rd0[PMU_IMC_MAX_MCS], wr0[PMU_IMC_MAX_MCS];
};

/* The table row for caps' model, or NULL (detection names the model). */
const struct pmu_imc_model *pmu_imc_model(const struct pmu_caps *c);

/* On a CPU of the package: match the model and find its registers (client:
 * MCHBAR, enabled by firmware; server: the UBOX of each bus and the
 * channels on the buses of this package). Reads only. PMU_OK, or
 * PMU_E_UNSUPPORTED / PMU_E_FAULT with m->why. */
int pmu_imc_detect(struct pmu_imc *m, const struct pmu_caps *c);

/* Begin a window: free-running counters are read; channels are frozen,
 * reset, programmed with the CAS events (reads on counters 0 and 2,
 * writes on 1 and 3: every counter of a channel) and started. */
int pmu_imc_begin(const struct pmu_imc *m, struct pmu_imc_counts *k);
/* End it: the CAS reads and writes since pmu_imc_begin (free-running
 * counters modulo their width); channels are frozen and cleared. */
int pmu_imc_end(const struct pmu_imc *m, struct pmu_imc_counts *k);
/* Counter control i of channel (or discovery unit) c: write v, read it
 * back into *back, write 0. PMU_E_INVAL where there is none (the client
 * free-running counters, c or i out of range), PMU_E_FAULT on a fault. */
int pmu_imc_ctl_roundtrip(const struct pmu_imc *m, unsigned c, unsigned i, uint32_t v, uint32_t *back);
/* Discovery unit c's fixed counter, where the row places one: its control
 * (32 bits) and the counter, read as 64 bits and as its two 32-bit halves.
 * PMU_E_INVAL where there is none (or the unit is not MMIO), PMU_E_FAULT
 * on a fault. */
int pmu_imc_fixed_read(const struct pmu_imc *m, unsigned c, uint32_t *ctl, uint64_t *q, uint32_t half[2]);
/* Channels (or units) and counters per channel the window can program. */
unsigned pmu_imc_nchan(const struct pmu_imc *m);

#endif
