/* Intel uncore boxes reached through MSRs: the client C-boxes (LLC slices)
 * and ARB of Sandy Bridge to Panther Lake, and the server CHAs of
 * Skylake-SP to Granite Rapids, Sierra Forest and Grand Ridge. All are
 * package scope: a package's boxes are driven from one CPU of that package
 * and counted once, never per CPU.
 * The memory controller is in pmu/intel/imc.h. */
#ifndef PMU_INTEL_UNCORE_H
#define PMU_INTEL_UNCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/msr.h"
#include "pmu/pmu.h"

/* The event-select fields every layout shares (SDM vol. 3B, "Uncore
 * Performance Monitoring Facilities" of the 2nd-generation Core processor;
 * Linux arch/x86/events/intel/uncore_snb.c and uncore_snbep.c formats):
 * [7:0] event, [15:8] unit mask, 18 edge, 22 enable, 23 invert, a
 * threshold from bit 24 whose width the layout gives. */
#define UNC_EVTSEL_EN_BIT 22
#define UNC_GLOBAL_EN_BIT 29 /* the client global enables, and MTL+'s NCU box controls */

/* LLC lookups of any request in any MESI state, incl. I (misses):
 * UNC_CBO_CACHE_LOOKUP.ANY_MESI, event 0x34 umask 0x8F (Intel perfmon event
 * files for Sandy Bridge .. Skylake client uncore). */
#define UNC_CBO_LOOKUP_EVENT 0x34
#define UNC_CBO_LOOKUP_ANY_UMASK 0x8f
/* Read requests from this socket's cores into a CHA:
 * UNC_CHA_REQUESTS.READS_LOCAL, event 0x50 umask 0x01 (perfmon
 * skylakex, cascadelakex, icelakex, sapphirerapids, emeraldrapids
 * _uncore.json). */
#define UNC_CHA_READS_EVENT 0x50
#define UNC_CHA_READS_LOCAL_UMASK 0x01

#define PMU_UNCORE_MAX_BOXES 128 /* CHAs of one package, at most */
#define PMU_UNCORE_MAX_CTRS 4

enum pmu_unc_kind { PMU_UNC_CBOX, PMU_UNC_ARB, PMU_UNC_CHA };

/* How a generation's counters start and stop. */
enum pmu_unc_start {
	/* EN in each event select, then one global enable starts them all
	 * (Sandy Bridge .. Skylake, Tiger Lake, Alder Lake; Meteor Lake on
	 * through the NCU box controls). */
	PMU_UNC_GLOBAL,
	/* EN in each event select, nothing else: Ice Lake, whose global
	 * control has no effect (erratum ICL068; Linux "Update Ice Lake
	 * uncore units" stopped writing it). Counting starts at programming. */
	PMU_UNC_EN_ONLY,
	/* EN in each event select; the box control resets (bits 0, 1) and
	 * freezes (bit 8, with freeze enable bit 16) the box (Linux
	 * uncore_snbep.c: ivbep_uncore_msr_init_box, snbep_uncore_msr_*_box). */
	PMU_UNC_BOX_FREEZE,
	/* No enable bit: a programmed counter counts while its box is not
	 * frozen; box control bit 0 freezes, bits 8/9 reset (the discovery-era
	 * units: Linux uncore_discovery.h GENERIC_PMON_BOX_CTL_*). */
	PMU_UNC_BOX_FREEZE0,
};

/* One kind of box of a generation and where its registers sit: unit b at
 * unit0 + b * stride (or units[b]); event select i at unit + sel + i,
 * counter i at unit + ctr + i, the box control at unit + box_ctl. */
struct pmu_unc_layout {
	const char *name; /* "C-box" */
	enum pmu_unc_kind kind;
	uint32_t unit0, stride;
	const uint32_t *units; /* irregular units (Ice Lake-SP CHAs, a discovery table), or NULL */
	unsigned nunits;       /* entries of units[] */
	bool has_box_ctl;      /* a box control at unit + box_ctl */
	uint8_t box_ctl;
	uint8_t sel, ctr;  /* offsets of event select 0 and counter 0 */
	uint8_t nctrs;     /* counters per box */
	uint8_t first_ctr; /* the first usable one (Ice Lake's ARB: only counter 1) */
	uint8_t width;
	uint64_t sel_valid;  /* the bits an event select takes */
	unsigned fixed_nbox; /* boxes when not counted from a register (0: counted) */
	/* The box's first filter register (FILTER0) at unit + filter, 0:
	 * none; filter_tid the thread-ID field every such filter has, which
	 * a value may set without widening what is counted. */
	uint8_t filter;
	uint64_t filter_tid;
};

/* How the number of C-boxes or CHAs is found. */
enum pmu_unc_count {
	PMU_UNC_COUNT_CBO_CONFIG,       /* MSR_UNC_CBO_CONFIG[3:0] */
	PMU_UNC_COUNT_CBO_CONFIG_PLUS1, /* the same, holding count + 1 (Haswell, Broadwell) */
	PMU_UNC_COUNT_FIXED,            /* the layout's fixed_nbox */
	PMU_UNC_COUNT_NCU_CONFIG,       /* MSR 0x702[5:0] (Skylake-SP, Ice Lake-SP) */
	PMU_UNC_COUNT_SPR_CONFIG,       /* MSR 0x2FFE, the whole value (Sapphire Rapids) */
	PMU_UNC_COUNT_GNR_CONFIG,       /* MSR 0x3FED[8:0] (Granite Rapids, Sierra Forest, Grand Ridge) */
};

/* A generation's uncore. A row names its sources beside it in
 * pmu/intel/uncore.c. */
struct pmu_uncore_model {
	const char *name;
	uint32_t client, server;          /* INTEL_UARCHS() of the client / server parts it holds for */
	const struct pmu_unc_layout *box; /* the C-boxes or CHAs */
	const struct pmu_unc_layout *arb; /* the ARB, or NULL */
	enum pmu_unc_count count;
	unsigned max_boxes; /* boxes the table has addresses for */
	enum pmu_unc_start start;
	/* Global enables: written `on` to start, `off` to stop (0 msr: none). */
	struct {
		uint32_t msr;
		uint64_t on, off;
	} global[2];
	/* The event a box counts a core's LLC request with (the C-box lookup,
	 * the CHA read request), what it is called; where none is published,
	 * 0 and why. */
	uint8_t req_event, req_umask;
	const char *req_name;
	const char *no_req_why;
	/* Where a discovery table places the boxes (pmu/intel/discovery.h):
	 * the unit type of the C-boxes/CHAs in it (disc_box), used when a
	 * table is found; otherwise the layout above. */
	bool discovery;
	uint16_t disc_box;
};

/* What detection found on one package. */
struct pmu_uncore {
	const struct pmu_uncore_model *model;
	uint32_t family, model_nr;
	uint32_t package;         /* the package ID of the CPU that detected it */
	uint32_t count_msr;       /* the register the box count came from (0: fixed) */
	uint64_t count_val;       /* ... as read */
	unsigned boxes_reported;  /* decoded from it */
	unsigned cores;           /* cores per package from CPUID.04H (0: unknown) */
	unsigned nboxes;          /* C-boxes/CHAs driven: reported, bounded by the table */
	char why[PMU_REASON_LEN]; /* why detection failed: the SKIP reason */
	/* The boxes as this package's discovery table places them (when
	 * from_table): layout table_box, box b's unit at table_units[b];
	 * where the table is; or why none was used (table_why). */
	bool from_table;
	struct pmu_unc_layout table_box;
	uint32_t table_units[PMU_UNCORE_MAX_BOXES];
	uint8_t table_bus, table_dev, table_fn;
	uint64_t table_base;
	unsigned table_boxes; /* the units of the type the table lists */
	char table_why[PMU_REASON_LEN];
};

/* The C-boxes'/CHAs' layout detection chose: the table's or the row's. */
static inline const struct pmu_unc_layout *pmu_uncore_box(const struct pmu_uncore *u)
{
	return u->from_table ? &u->table_box : u->model ? u->model->box : NULL;
}

/* The table row for caps' model, or NULL (detection says why, naming it). */
const struct pmu_uncore_model *pmu_uncore_model(const struct pmu_caps *c);

/* Boxes of a layout on this package: the C-boxes/CHAs found, or the ARBs. */
unsigned pmu_uncore_nboxes(const struct pmu_uncore *u, const struct pmu_unc_layout *l);

/* Register addresses of box b of layout l. */
uint32_t pmu_uncore_unit(const struct pmu_unc_layout *l, unsigned b);
static inline uint32_t pmu_uncore_sel_msr(const struct pmu_unc_layout *l, unsigned b, unsigned i)
{
	return pmu_uncore_unit(l, b) + l->sel + i;
}
static inline uint32_t pmu_uncore_ctr_msr(const struct pmu_unc_layout *l, unsigned b, unsigned i)
{
	return pmu_uncore_unit(l, b) + l->ctr + i;
}
static inline uint32_t pmu_uncore_filter_msr(const struct pmu_unc_layout *l, unsigned b)
{
	return pmu_uncore_unit(l, b) + l->filter;
}

/* On the calling CPU: match the model, read the box count register (the
 * package of that CPU is the one detected). PMU_OK, or PMU_E_UNSUPPORTED /
 * PMU_E_FAULT with u->why. Reads only; writes nothing. */
int pmu_uncore_detect(struct pmu_uncore *u, const struct pmu_caps *c);

/* Whether box 0's first event select holds a write (a hypervisor may
 * drop them or fault): NULL, or the reason it does not (in u->why).
 * Leaves the select 0. */
const char *pmu_uncore_probe(struct pmu_uncore *u);

/* The counting sequence, every step on a CPU of the package:
 * prepare (freeze and reset the boxes that have a box control), program
 * each counter (zeroed; EN set when `enable`), start (the global enables
 * or the box controls), the workload, stop, read, clear. Invalid event
 * bits and out-of-range boxes are refused before any write. */
int pmu_uncore_prepare(const struct pmu_uncore *u);
int pmu_uncore_program(const struct pmu_uncore *u, const struct pmu_unc_layout *l, unsigned box, unsigned ctr,
		       uint8_t event, uint8_t umask, bool enable, char *why, size_t whylen);
int pmu_uncore_start(const struct pmu_uncore *u);
int pmu_uncore_stop(const struct pmu_uncore *u);
int pmu_uncore_read(const struct pmu_uncore *u, const struct pmu_unc_layout *l, unsigned box, unsigned ctr,
		    uint64_t *val);
/* Clear the event select (the counter stops and keeps its value). */
int pmu_uncore_clear(const struct pmu_uncore *u, const struct pmu_unc_layout *l, unsigned box, unsigned ctr);
/* Through every box control, the boxes left frozen: reset the event
 * selects (ctrl) and/or the counters (ctrs). PMU_E_UNSUPPORTED where the
 * boxes have no box control. */
int pmu_uncore_reset(const struct pmu_uncore *u, bool ctrl, bool ctrs);

#endif
