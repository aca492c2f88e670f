/* Client uncore (Intel Sandy Bridge .. Coffee/Comet Lake): the C-box (LLC
 * slice) counters and the uncore global control. One set per package, so
 * it is driven from one CPU and counted once, never per CPU. */
#ifndef PMU_INTEL_UNCORE_H
#define PMU_INTEL_UNCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/msr.h"
#include "pmu/pmu.h"

/* C-box event select layout (SDM vol. 3B, "Uncore Performance Monitoring
 * Facilities" of the 2nd-generation Core processor; Linux uncore_snb.c):
 * [7:0] event, [15:8] unit mask, 18 edge, 20 overflow PMI, 22 enable,
 * 23 invert, [28:24] threshold. Counters are 44 bits wide. */
#define UNC_CBO_EVTSEL_EN_BIT 22
#define UNC_CBO_EVTSEL_VALID 0x1fd4ffffull /* [28:24], 23, 22, 20, 18, [15:0] */
#define UNC_CBO_WIDTH 44
#define UNC_GLOBAL_EN_BIT 29

/* LLC lookups of any request in any MESI state, incl. I (misses):
 * UNC_CBO_CACHE_LOOKUP.ANY_MESI, event 0x34 umask 0x8F (Intel perfmon event
 * files for Sandy Bridge .. Skylake client uncore). */
#define UNC_CBO_LOOKUP_EVENT 0x34
#define UNC_CBO_LOOKUP_ANY_UMASK 0x8f

#define PMU_UNCORE_MAX_BOXES 8

/* A table row: the client parts it holds for (pmu/intel_models.h) and
 * where their registers sit; its sources are beside it in
 * pmu/intel_uncore.c. */
struct pmu_uncore_model {
	const char *name;
	uint32_t uarchs;        /* INTEL_UARCHS() of the client parts it holds for */
	uint32_t global_ctrl;   /* MSR_UNC_PERF_GLOBAL_CTRL or its Skylake address */
	uint64_t global_enable; /* EN (bit 29) and the PMI slice/core selects */
	bool config_minus_one;  /* MSR_UNC_CBO_CONFIG[3:0] holds count + 1 (Haswell, Broadwell) */
	unsigned max_boxes;     /* C-boxes the table has addresses for */
};

/* What detection found on this package. */
struct pmu_uncore {
	const struct pmu_uncore_model *model;
	uint32_t family, model_nr;
	uint64_t cbo_config;      /* MSR_UNC_CBO_CONFIG as read */
	unsigned boxes_reported;  /* decoded from cbo_config */
	unsigned cores;           /* cores per package from CPUID.04H (0: unknown) */
	unsigned nboxes;          /* C-boxes driven: reported, bounded by cores and the table */
	unsigned ctrs_per_box;    /* 2 */
	unsigned width;           /* 44 */
	char why[PMU_REASON_LEN]; /* why detection failed: the SKIP reason */
};

static inline uint32_t pmu_uncore_evtsel_msr(unsigned box, unsigned ctr)
{
	return MSR_UNC_CBO_0_PERFEVTSEL0 + box * MSR_UNC_CBO_STRIDE + ctr;
}
static inline uint32_t pmu_uncore_ctr_msr(unsigned box, unsigned ctr)
{
	return MSR_UNC_CBO_0_PERFCTR0 + box * MSR_UNC_CBO_STRIDE + ctr;
}

/* The table row for caps' model, or NULL; server parts and the Nehalem
 * uncore are not in it (detection says so, naming the model). */
const struct pmu_uncore_model *pmu_uncore_model(const struct pmu_caps *c);

/* On the calling CPU: match the model, read MSR_UNC_CBO_CONFIG, decode the
 * box count. PMU_OK, or PMU_E_UNSUPPORTED / PMU_E_FAULT with u->why. Reads
 * only; writes nothing. */
int pmu_uncore_detect(struct pmu_uncore *u, const struct pmu_caps *c);

/* Zero counter ctr of C-box box and program it (enable bit set): it counts
 * once the global enable is on. Invalid event bits are refused. */
int pmu_uncore_program(const struct pmu_uncore *u, unsigned box, unsigned ctr, uint8_t event, uint8_t umask,
		       char *why, size_t whylen);
/* Clear the event select (the counter stops and keeps its value). */
int pmu_uncore_clear(const struct pmu_uncore *u, unsigned box, unsigned ctr);
/* Global enable on / off: one write starts or stops every C-box counter. */
int pmu_uncore_enable(const struct pmu_uncore *u);
int pmu_uncore_disable(const struct pmu_uncore *u);
int pmu_uncore_read(const struct pmu_uncore *u, unsigned box, unsigned ctr, uint64_t *val);

/* Whether box 0's counter 0 holds a write (a hypervisor may drop them):
 * NULL, or the reason it does not (in u->why). Leaves the counter 0. */
const char *pmu_uncore_probe(struct pmu_uncore *u);

#endif
