/* The PMU driver's private interface, for pmu/ and its vendor backends
 * (pmu/intel/, pmu/amd/) only: the backend contract (struct pmu_ops),
 * the event-select helpers the backends share, the boot scan and probe
 * steps, and the line builder of the caps printers. Modes and tests use
 * pmu/pmu.h. */
#ifndef PMU_PMU_INTERNAL_H
#define PMU_PMU_INTERNAL_H

#include "pmu/pmu.h"

/* The driver's per-CPU state; modes and tests read it through the
 * pmu_cpu_*() accessors of pmu/pmu.h. */
struct pmu_cpu {
	bool initialised;
	unsigned cpu;
	const struct pmu_ops *ops; /* NULL: no backend for this vendor */
	struct pmu_caps caps;
	struct pmu_inuse inuse;

	/* Allocation: ours, and someone else's that we leave alone. */
	uint32_t gp_used, fixed_used;
	uint32_t gp_reserved, fixed_reserved;
	struct pmu_event *owner[PMU_IDX_NR];
	/* The values the backend's get_extra put in its extra MSRs, and how
	 * many of our events use each (Intel's offcore-response and OMR
	 * MSRs: pmu/intel/offcore.c). */
	uint64_t extra_val[4];
	unsigned extra_users[4];
	/* Where the CPU sits (package, core): the models whose RSP MSRs its
	 * hyperthreads share (pmu/intel/offcore.c) and the uncore, once per
	 * package, ask. */
	struct pmu_topology topo;

	/* Shadows of the shared control registers, so enabling one counter
	 * does not need a read-modify-write of hardware state. */
	uint64_t fixed_ctrl_shadow, global_ctrl_shadow;

	/* The probe's verdict: counting works, or why not. */
	bool counting;
	bool rdpmc_ok; /* RDPMC works at CPL 0 */
	int probe_gp;  /* the GP counter the probe used, or -1 */
	char reason[PMU_REASON_LEN];
};

struct pmu_attr_term;
struct pmu_caps_line;
struct pmu_lbr_caps;
struct pmu_lbr_entry;
struct pmu_lbr_filter;
struct pmu_lbr_ops;
struct pmu_precise_ops;
struct pmu_sampling_hw;
struct pmu_ops {
	const char *name;
	enum pmu_vendor vendor;
	bool (*match)(const char *vendor_id);
	/* Fill caps for the calling CPU (caps->vendor_id etc. already set). */
	void (*decode_caps)(struct pmu_caps *caps);
	/* GP counters attr may use (counter constraints), the name of the
	 * constraint that narrowed them (or NULL), and its fixed counter. */
	uint32_t (*gp_allowed)(const struct pmu_caps *caps, const struct pmu_event_attr *attr,
			       const char **constraint);
	int (*fixed_for)(const struct pmu_caps *caps, const struct pmu_event_attr *attr);
	/* Validate attr for this PMU and encode it for a GP counter / fixed
	 * counter i (the 4-bit field, unshifted). */
	int (*encode_gp)(const struct pmu_caps *caps, const struct pmu_event_attr *attr, uint64_t *evtsel,
			 char *why, size_t whylen);
	int (*encode_fixed)(const struct pmu_caps *caps, const struct pmu_event_attr *attr, unsigned i,
			    uint64_t *field, char *why, size_t whylen);
	/* The fixed counters' control register (caps->fixed_ctrl) holds one
	 * field per counter, as encode_fixed gives it: fixed counter i's
	 * field in ctrl; ctrl with that field replaced (0: cleared); whether
	 * a field counts at some privilege level. Required when decode_caps
	 * sets caps->fixed_ctrl (the core calls them unchecked then). */
	uint64_t (*fixed_field)(uint64_t ctrl, unsigned i);
	uint64_t (*fixed_field_set)(uint64_t ctrl, unsigned i, uint64_t field);
	bool (*fixed_field_counts)(uint64_t field);
	/* The extra MSR an event needs (offcore response), or 0. */
	uint32_t (*extra_msr)(const struct pmu_caps *caps, const struct pmu_event_attr *attr);
	/* PMU_OK, or why attr cannot have the extra MSR extra_msr gave it
	 * (extra), or asks for one it cannot have (extra 0). NULL: no check. */
	int (*extra_check)(const struct pmu_caps *caps, const struct pmu_event_attr *attr, uint32_t extra,
			   char *why, size_t whylen);
	/* Take the extra MSRs of a group on the calling CPU: msr[i] is the
	 * one event i asks for (0: none) and comes back as the one it got;
	 * evtsel[i] is its event select, rewritten when another MSR means
	 * another select. On failure nothing is held and the reason is in
	 * the event that did not fit. put_extra gives one back. */
	int (*get_extra)(struct pmu_cpu *pc, struct pmu_event *const *evs, unsigned n, uint32_t *msr,
			 uint64_t *evtsel);
	void (*put_extra)(struct pmu_cpu *pc, uint32_t msr);
	/* What the backend adds to the caps report's first line (a hybrid
	 * part's core type); NULL: nothing. */
	void (*print_caps_ident)(const struct pmu_caps *caps, struct pmu_caps_line *l);
	/* Whether the backend's own caps (pmu_caps.vendor_caps) of two CPUs
	 * whose common caps agree make them one CPU type; NULL: the words
	 * are equal. */
	bool (*caps_same)(const struct pmu_caps *a, const struct pmu_caps *b);
	/* The caps lines past the generic first one (pmu_caps_print). */
	void (*print_caps)(const struct pmu_caps *caps, const char *prefix, pmu_line_fn out, void *ctx);
	/* The encoding of a named architectural event on this PMU (the names
	 * mean the same event everywhere, the numbers differ by vendor);
	 * false when it has none. NULL: the architectural PMU's, which
	 * pmu_attr_arch gives (pmu_backend_arch()'s events:
	 * pmu/intel/arch_events.c). */
	bool (*arch_encoding)(const struct pmu_caps *caps, enum pmu_arch_event e, uint16_t *event,
			      uint8_t *umask);
	/* Precise sampling for pmu/sampling_hw.c; NULL: the PMU has none the
	 * driver drives. */
	const struct pmu_precise_ops *precise;
	/* Where the probe's and the allocator's reasons (pmu/probe.c,
	 * pmu/event.c) say the caps' shape comes from: the GP counters'
	 * number and width, the events' availability, the fixed counters'
	 * width. */
	const char *src_gp_number, *src_gp_width, *src_events, *src_fixed_width;
	/* A counter's short name, apart from its register's, in the boot
	 * in-use report (pmu_inuse_report: "PMC1 enabled"); NULL: the
	 * register's (pmu_ctr_name(), pmu_fixed_name()). */
	const char *gp_counter_name, *fixed_counter_name;
	/* For a CPU no backend's match() takes: the probe's reason, when this
	 * backend's PMU (one other vendors implement too) tells something. */
	bool (*foreign_why)(const struct pmu_caps *caps, char *why, size_t whylen);
	/* Last branch records (pmu/lbr.c); NULL: none. */
	const struct pmu_lbr_ops *lbr;
	/* The definitions of the architectural PMU (CPUID.0AH's), given by
	 * the backend whose PMU it is; NULL for the others. */
	const struct pmu_arch_defs *arch;
	/* The cpu/.../ terms of the backend's own event fields, ended by a
	 * NULL name; NULL: none. */
	const struct pmu_attr_term *terms;
};

/* A cpu/.../ term a backend adds to the parser (pmu/attr.c), as a Linux
 * PMU exports its own format/ terms: a bare name means 1 when it is a
 * flag; the value must be at most max; set stores it, get reads it back
 * for pmu_attr_format (0: the term is left out). Every CPU parses every
 * backend's terms: the backend's encode refuses what its PMU lacks. */
struct pmu_attr_term {
	const char *name;
	bool flag;
	uint64_t max;
	void (*set)(struct pmu_event_attr *attr, uint64_t v);
	uint64_t (*get)(const struct pmu_event_attr *attr);
};

/* What the architectural PMU defines, which the core uses where no CPU
 * says otherwise (pmu_backend_arch()): the named events' encodings and
 * fixed counters, the default of pmu_attr_arch (a backend with its own
 * numbers gives arch_encoding), and the register names of the messages
 * a backend's caps leave NULL (pmu_evtsel_name() ...; every one set). */
struct pmu_arch_defs {
	const struct pmu_arch_event_desc *events; /* PMU_ARCH_NR entries */
	const char *evtsel_name, *ctr_name, *fixed_name, *fixed_ctrl_name;
	const char *global_ctrl_name, *global_inuse_name;
	/* Why a write to ctr_base sign-extends bit 31 (no full-width writes). */
	const char *narrow_write_why;
};

/* A backend's last branch records, for pmu/lbr.c: which facility the CPU
 * has, and the facts of each kind the backend decodes. */
struct pmu_lbr_ops {
	uint32_t kinds; /* BIT(enum pmu_lbr_kind) of each kind decode gives */
	/* Which LBR facility the CPU has (*l comes zeroed, kind PMU_LBR_NONE). */
	void (*decode)(const struct pmu_caps *caps, struct pmu_lbr_caps *l);
	/* l->ctl_filter: the enabling value of filter f (kinds its branch
	 * kinds), a filter pmu_lbr_encode found l can keep. */
	uint64_t (*encode_ctl)(const struct pmu_lbr_caps *l, const struct pmu_lbr_filter *f, uint32_t kinds);
	/* The kind's name in reports ("legacy", "architectural", ...). */
	const char *(*kind_name)(unsigned kind);
	/* One record's raw FROM, TO and INFO as this kind lays them out. */
	struct pmu_lbr_entry (*entry)(const struct pmu_lbr_caps *l, uint64_t from, uint64_t to,
				      uint64_t info);
};

/* Precise sampling (Intel's PEBS: pmu/intel/precise.c), on the session's
 * CPU; the state it keeps is h->precise_state. */
struct pmu_precise_ops {
	/* The GLOBAL_STATUS bit a PMI for a full buffer sets (Intel's
	 * OvfBuffer). */
	uint64_t buffer_status;
	/* The free GP counters that can sample precisely (0 with why). */
	uint32_t (*counters)(struct pmu_cpu *pc, char *why, size_t whylen);
	/* Give ev precise samples (pmu_sampling_hw_start's contract). */
	int (*start)(struct pmu_sampling_hw *h, struct pmu_event *ev, void *mem, size_t mem_size);
	/* Undo start (h->precise still set). */
	void (*stop)(struct pmu_sampling_hw *h);
	/* In the PMI: each record as emit(ctx, rip), the buffer emptied. */
	unsigned (*drain)(struct pmu_sampling_hw *h, void (*emit)(void *ctx, uint64_t rip), void *ctx);
};

/* attr as pc's backend numbers it: a named event (attr->arch) takes the
 * backend's encoding, event 0 where it has none; anything else is kept. */
void pmu_attr_resolve(const struct pmu_cpu *pc, struct pmu_event_attr *attr);

/* For the backends' encode_gp: the PERFEVTSEL bits Intel and AMD lay out
 * alike (SDM vol. 3B, figure "Layout of IA32_PERFEVTSELx MSRs"; APM vol. 2,
 * 13.2 "Core Performance Event-Select Registers"): EventSelect[7:0], unit
 * mask, USR, OS, edge, INT, INV and CMASK. A backend adds its own bits
 * (Intel AnyThread, AMD EventSelect[11:8]) and checks the result with
 * pmu_evtsel_check(). */
uint64_t pmu_evtsel_common(const struct pmu_event_attr *a);
/* PMU_OK, or why attr cannot be counted on any counter of any vendor
 * (neither ring selected: it would count nothing). */
int pmu_attr_check_rings(const struct pmu_event_attr *a, char *why, size_t whylen);
/* PMU_OK, or PMU_E_UNSUPPORTED when v sets caps->evtsel_reserved bits:
 * "<register> value V sets reserved bits R<hint>". */
int pmu_evtsel_check(const struct pmu_caps *c, uint64_t v, const char *hint, char *why, size_t whylen);

/* A backend registers itself in the pmu_backends section (as KTEST does
 * for tests), so that the core names no vendor: pmu_cpu_init asks each
 * one's match(). */
#define PMU_BACKEND(ops)                                     \
	static const struct pmu_ops *const pmu_backend_##ops \
		__attribute__((used, section("pmu_backends"), aligned(sizeof(void *)))) = &(ops)
/* The backend whose match() takes vendor_id (CPUID.0 EBX:EDX:ECX), or
 * the backend of a vendor; NULL when there is none (pmu/backend.c). */
const struct pmu_ops *pmu_backend_for(const char *vendor_id);
const struct pmu_ops *pmu_backend_of(enum pmu_vendor vendor);
/* Why a CPU of a vendor no backend takes has no counting: the first
 * backend foreign_why that says something, else no backend's. */
void pmu_backend_foreign_why(const struct pmu_caps *caps, char *why, size_t whylen);
/* The architectural PMU's definitions: the first backend's arch; NULL:
 * no backend gives them. */
const struct pmu_arch_defs *pmu_backend_arch(void);
/* The LBR ops of the backend that decodes LBRs of kind k; NULL: none. */
const struct pmu_lbr_ops *pmu_backend_lbr(unsigned k);
/* The backends' cpu/.../ terms one after the other, in the order of the
 * pmu_backends section (the link order); NULL past the last. */
const struct pmu_attr_term *pmu_backend_term(unsigned k);

/* The boot scan and the probe (pmu/probe.c), normally via pmu_cpu_init. */
void pmu_inuse_scan(struct pmu_cpu *pc);
void pmu_inuse_takeover(struct pmu_cpu *pc);
void pmu_probe(struct pmu_cpu *pc, const struct pmu_init_opts *opts);

/* A caps report line assembled piece by piece (pmu/caps.c); output is
 * cut, never overrun. */
struct pmu_caps_line {
	char buf[240];
	size_t len;
};
void pmu_caps_line_add(struct pmu_caps_line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pmu_caps_line_emit(struct pmu_caps_line *l, pmu_line_fn out, void *ctx);

#endif
