/* The PMU driver's public interface: per-CPU capabilities, events and their
 * counters, allocation, enable/disable/read, event strings, the boot probe.
 * Hardware is reached only through pmu/pmu_hw.h, so the same code runs in
 * the kernel and against the host-side PMU model. */
#ifndef PMU_PMU_H
#define PMU_PMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/hypervisor.h"
#include "lib/cmpxchg16b.h"
#include "pmu/topology.h"

#define PMU_MAX_CPUS 256 /* the kernel's MAX_CPUS (asserted in pmu/kernel/hw.c) */
#define PMU_MAX_GP 32    /* GP counters live in index 0..31 */
/* Fixed counter i is GLOBAL_CTRL bit 32 + i; bits 48 and up hold other
 * controls (e.g. PERF_METRICS), so 16 fixed counters is the ceiling. */
#define PMU_MAX_FIXED 16

/* One index space for all counters, as Linux's (X86_PMC_IDX_FIXED in
 * arch/x86/include/asm/perf_event.h): 0..31 are GP counters, 32 + i is
 * fixed counter i, which is also its GLOBAL_CTRL/STATUS bit (SDM vol. 3B,
 * "Architectural Performance Monitoring Version 2"). */
#define PMU_IDX_FIXED_BASE 32
#define PMU_IDX_FIXED(i) (PMU_IDX_FIXED_BASE + (int)(i))
#define PMU_IDX_IS_FIXED(idx) ((idx) >= PMU_IDX_FIXED_BASE)
#define PMU_IDX_NR (PMU_IDX_FIXED_BASE + PMU_MAX_FIXED)
/* RDPMC ECX type for fixed counters (SDM vol. 2B, RDPMC: type 4000H). */
#define PMU_RDPMC_FIXED (1u << 30)
/* RDPMC ECX[31] "fast read" (low 32 bits), pre-architectural parts only. */
#define PMU_RDPMC_FAST (1u << 31)

#define PMU_REASON_LEN 192

/* Output goes through the caller, one line at a time, without "# ". */
typedef void (*pmu_line_fn)(void *ctx, const char *line);

enum pmu_err {
	PMU_OK = 0,
	PMU_E_NOPMU = -1,       /* no usable PMU on this CPU */
	PMU_E_INVAL = -2,       /* the request makes no sense for this PMU */
	PMU_E_BUSY = -3,        /* no counter fits (all candidates taken) */
	PMU_E_UNSUPPORTED = -4, /* the PMU lacks the feature asked for */
	PMU_E_FAULT = -5,       /* a register access raised an exception */
	PMU_E_STATE = -6,       /* wrong state (not added, already added, ...) */
};

/* --- Architectural events (SDM vol. 3B, "Pre-defined Architectural
 * Performance Events"). The enum value is the CPUID.0AH:EBX bit that says
 * the event is NOT available. --- */
enum pmu_arch_event {
	PMU_ARCH_NONE = -1,
	PMU_ARCH_CYCLES = 0,
	PMU_ARCH_INSTRUCTIONS = 1,
	PMU_ARCH_REF_CYCLES = 2,
	PMU_ARCH_LLC_REFERENCES = 3,
	PMU_ARCH_LLC_MISSES = 4,
	PMU_ARCH_BRANCHES = 5,
	PMU_ARCH_BRANCH_MISSES = 6,
	PMU_ARCH_TOPDOWN_SLOTS = 7,
	/* Bits 8-12 of the vector (CPUID.23H.3:EAX says "supported" for the
	 * same bits): pmu/intel/arch_events.c gives the sources. */
	PMU_ARCH_TOPDOWN_BE_BOUND = 8,
	PMU_ARCH_TOPDOWN_BAD_SPEC = 9,
	PMU_ARCH_TOPDOWN_FE_BOUND = 10,
	PMU_ARCH_TOPDOWN_RETIRING = 11,
	PMU_ARCH_LBR_INSERTS = 12,
	PMU_ARCH_NR
};

struct pmu_arch_event_desc {
	const char *name; /* perf's name: "instructions" (the SDM's names are in pmu/intel/arch_events.c) */
	uint8_t event, umask; /* encoding on a GP counter */
	int8_t fixed;         /* the fixed counter that counts it, or -1 */
};

/* The table of the backend that defines the architectural PMU (its
 * pmu_ops.arch, pmu/named_events.c), PMU_ARCH_NR entries indexed by
 * enum pmu_arch_event; NULL when no backend is linked.
 * pmu_arch_events[e].name reads it as an array. */
const struct pmu_arch_event_desc *pmu_arch_event_table(void);
#define pmu_arch_events (pmu_arch_event_table())
/* NULL for PMU_ARCH_NONE or out of range. */
const struct pmu_arch_event_desc *pmu_arch_event(enum pmu_arch_event e);
/* Its perf name ("instructions"); "?" for PMU_ARCH_NONE or out of range. */
const char *pmu_arch_event_name(enum pmu_arch_event e);
enum pmu_arch_event pmu_arch_event_by_name(const char *name);
enum pmu_arch_event pmu_arch_event_by_code(uint8_t event, uint8_t umask);
/* The architectural event fixed counter i counts, or PMU_ARCH_NONE. */
enum pmu_arch_event pmu_arch_event_of_fixed(unsigned i);

/* --- Capabilities: decoded once per CPU by the vendor backend. Register
 * addresses are 0 when the register does not exist, so callers never
 * branch on the vendor to find an MSR. --- */
enum pmu_vendor { PMU_VENDOR_UNKNOWN, PMU_VENDOR_INTEL, PMU_VENDOR_AMD };

/* The hypervisor a CPU runs under, as arch/x86/hypervisor.h identifies
 * it; the known deviations (tests/deviations.c) are matched by this. */
enum pmu_hv {
	PMU_HV_NONE = HV_NONE,
	PMU_HV_HIDDEN = HV_HIDDEN,
	PMU_HV_OTHER = HV_OTHER,
	PMU_HV_KVM = HV_KVM,
	PMU_HV_XEN = HV_XEN,
	PMU_HV_VMWARE = HV_VMWARE,
	PMU_HV_HYPERV = HV_HYPERV,
	PMU_HV_TCG = HV_TCG,
	PMU_HV_NR = HV_NR
};
/* "KVM", "bare metal", ...; NULL out of range. */
static inline const char *pmu_hv_name(enum pmu_hv hv)
{
	return hv_name((enum hv)hv);
}

struct pmu_caps {
	enum pmu_vendor vendor;
	char vendor_id[13];
	uint32_t max_leaf;
	uint32_t family, model, stepping; /* DisplayFamily / DisplayModel */
	bool hypervisor;                  /* CPUID.01H:ECX[31] */
	enum pmu_hv hv;                   /* which one, by its signature */
	char hv_signature[13];            /* as read, NUL-terminated; "" when none */
	uint32_t hv_leaf;                 /* the leaf it was read from */
	bool cx16;                        /* CPUID.01H:ECX[13]: CMPXCHG16B, which reads need */

	struct cpuid_regs leaf_0a; /* raw, for diagnostics */
	unsigned version;          /* 0: no architectural PMU */
	unsigned num_gp, gp_width;
	uint32_t gp_mask;   /* which GP counters exist */
	unsigned num_fixed; /* contiguous count, EDX[4:0] */
	unsigned fixed_width;
	uint32_t fixed_mask;     /* which fixed counters exist */
	unsigned events_len;     /* EAX[31:24] */
	uint32_t events_unavail; /* EBX as read */
	uint32_t events_avail;   /* known events usable on GP counters */
	uint32_t events_unknown; /* available bits past the ones we know */

	bool freeze_smm; /* freeze_smm_ctl works (PERF_CAPABILITIES[12] on Intel) */

	/* Register map. GP counter x: event select evtsel_base + x*ctr_stride,
	 * counter ctr_base + x*ctr_stride (read), ctr_write_base + x*stride
	 * (write; the full-width alias when there is one). */
	uint32_t evtsel_base, ctr_base, ctr_write_base, ctr_stride;
	uint32_t fixed_base, fixed_stride, fixed_ctrl;
	uint32_t global_ctrl, global_status, global_ovf, global_status_set, global_inuse;
	uint32_t debugctl;

	/* Bits whose setting raises #GP on this CPU (architectural rules). */
	uint64_t evtsel_reserved, fixed_ctrl_reserved, global_ctrl_reserved;
	/* IA32_PERF_GLOBAL_CTRL after RESET: bits n-1:0 set, the rest clear
	 * (SDM vol. 3A, "Processor State After Reset", table of initial MSR
	 * values). */
	uint64_t global_ctrl_reset;
	const char *uarch; /* from the model table, or NULL */

	/* Backend wording and facts the architectural fields cannot carry,
	 * so that generic code and tests never branch on the vendor
	 * (NULL/0/false: the architectural PMU's meaning, pmu_ops.arch). */
	const char *evtsel_name, *ctr_name; /* "PerfEvtSel", "PerfCtr" */
	const char *fixed_name, *fixed_ctrl_name;
	const char *global_ctrl_name; /* "PerfCntrGlobalCtl" */
	const char *global_inuse_name;
	const char *no_pmu_why;                 /* why version is 0 */
	const char *no_global_why;              /* why global_ctrl is 0 */
	const char *no_fixed_why;               /* why fixed_mask is 0 */
	const char *global_reset_unchecked_why; /* the RESET value of global_ctrl is not documented */
	/* Why RDPMC with ECX[31] ("fast" read) has no documented outcome.
	 * NULL: it is reserved and #GPs with an architectural PMU (SDM
	 * vol. 2B, RDPMC; KVM commit "KVM: x86/pmu: Disallow 'fast' RDPMC
	 * for architectural Intel PMUs", confirmed on bare metal). */
	const char *rdpmc_fast_unchecked_why;
	/* Why a set reserved event-select or global-control bit and a write
	 * to the read-only global status are not known to #GP. NULL: the
	 * manual says they #GP (SDM vol. 4, table 2-2, reserved bits; vol.
	 * 3B, IA32_PERF_GLOBAL_STATUS read-only). */
	const char *reserved_gp_unchecked_why;
	bool counters_assumed;      /* counters inferred from the family, not enumerated */
	const char *counters_added; /* counters the model has beyond what CPUID says, or NULL */
	bool ctr_write_full;        /* ctr_base writes store the full width (no sign extension) */
	uint32_t rdpmc_extra_mask;  /* RDPMC indices past the GP counters that read other counters */

	/* Freeze on PMI, as the handler sees it (pmu/pmi.c): the DEBUGCTL
	 * bit that asks for it (Intel 12 FREEZE_PERFMON_ON_PMI, AMD 11 with
	 * LbrAndPmcFreeze; 0: none), the status bits that say "frozen" and
	 * that writing to the status-clear register lifts (Intel v4 58/59,
	 * AMD 58), the one that says the counters stopped, and whether the
	 * freeze clears GLOBAL_CTRL instead (Intel before v4). */
	uint64_t freeze_ctl, freeze_status_bits, freeze_counters_bit;
	bool freeze_clears_global_ctrl;
	/* The debugctl bit that freezes the counters while in SMM, valid
	 * with freeze_smm (Intel's FREEZE_WHILE_SMM). */
	uint64_t freeze_smm_ctl;

	/* The backend's own facts, in its own struct (pmu/intel/caps.h,
	 * pmu/amd/caps.h): the core zeroes and copies these words, and
	 * compares them whole where the backend has no caps_same, but never
	 * reads a field of them; the backend's caps_same compares them and
	 * its print_caps prints them. Sized for struct intel_caps, the larger
	 * (its CPUID.23H sub-leaves). */
	uint64_t vendor_caps[24];
};

/* The narrowest counter the driver counts with. A GP counter has at
 * least 32 bits: a legacy write to IA32_PMCx sets bits 31:0 and
 * sign-extends bit 31 through the counter's width (SDM vol. 3B, "Full-
 * Width Writes to Performance Counter Registers"). CPUID.0AH:EDX[12:5]
 * may give a fixed counter any width a VMM writes there (KVM takes the
 * VMM's, Linux arch/x86/kvm/vmx/pmu_intel.c intel_pmu_refresh); one that
 * wraps every few events would overflow inside the PMI handler that
 * reloads it, and the driver folds wraps only at reads and PMIs. */
#define PMU_MIN_COUNTER_WIDTH 32u

static inline uint64_t pmu_width_mask(unsigned width)
{
	return width >= 64 ? ~0ull : (1ull << width) - 1;
}

/* What a counter of this width holds after a 32-bit write through
 * IA32_PMCx: the low 32 bits, sign-extended (SDM vol. 3B, "Full-Width
 * Writes to Performance Counter Registers"). */
static inline uint64_t pmu_sext32(uint64_t v, unsigned width)
{
	return (uint64_t)(int64_t)(int32_t)(uint32_t)v & pmu_width_mask(width);
}

/* Counter delta modulo the counter width (as Linux x86_perf_event_update,
 * arch/x86/events/core.c): shifting both values to the top of the word
 * makes the subtraction wrap at the width. */
static inline uint64_t pmu_delta(uint64_t prev, uint64_t now, unsigned width)
{
	unsigned shift = 64 - width; /* width is 1..64 */
	return ((now << shift) - (prev << shift)) >> shift;
}

static inline uint32_t pmu_evtsel_msr(const struct pmu_caps *c, unsigned x)
{
	return c->evtsel_base + x * c->ctr_stride;
}
static inline uint32_t pmu_ctr_msr(const struct pmu_caps *c, unsigned x)
{
	return c->ctr_base + x * c->ctr_stride;
}
static inline uint32_t pmu_ctr_write_msr(const struct pmu_caps *c, unsigned x)
{
	return c->ctr_write_base + x * c->ctr_stride;
}
static inline uint32_t pmu_fixed_msr(const struct pmu_caps *c, unsigned i)
{
	return c->fixed_base + i * c->fixed_stride;
}
/* Register names for messages (pmu/caps.c): the backend's (caps'
 * evtsel_name ...), else the architectural PMU's (the backend's
 * pmu_ops.arch); c may be NULL. The counter names take the number after
 * them: "IA32_PMC" "3", "IA32_FIXED_CTR" "1". */
const char *pmu_evtsel_name(const struct pmu_caps *c);
const char *pmu_ctr_name(const struct pmu_caps *c);
const char *pmu_fixed_name(const struct pmu_caps *c);
const char *pmu_fixed_ctrl_name(const struct pmu_caps *c);
const char *pmu_global_ctrl_name(const struct pmu_caps *c);
const char *pmu_global_inuse_name(const struct pmu_caps *c);
static inline bool pmu_has_gp(const struct pmu_caps *c, unsigned x)
{
	return x < PMU_MAX_GP && (c->gp_mask >> x) & 1;
}
static inline bool pmu_has_fixed(const struct pmu_caps *c, unsigned i)
{
	return i < PMU_MAX_FIXED && (c->fixed_mask >> i) & 1;
}
/* The GLOBAL_CTRL/STATUS bit of a counter index. */
static inline uint64_t pmu_idx_bit(int idx)
{
	return 1ull << idx;
}
static inline unsigned pmu_idx_width(const struct pmu_caps *c, int idx)
{
	return PMU_IDX_IS_FIXED(idx) ? c->fixed_width : c->gp_width;
}

/* Format the caps as lines; prefix goes in front of each line. */
void pmu_caps_print(const struct pmu_caps *caps, const char *prefix, pmu_line_fn out, void *ctx);
/* True when two CPUs have the same PMU (same type for the boot report). */
bool pmu_caps_same(const struct pmu_caps *a, const struct pmu_caps *b);

/* --- Events --- */

/* What the user asked for (perf's attr.config and flags). */
struct pmu_event_attr {
	uint16_t event; /* event select: 8 bits (Intel), 12 bits (AMD, family 10h+) */
	uint8_t umask, cmask;
	bool usr, os, edge, inv, intr;
	/* The event-select bits of a backend's own fields, at their place in
	 * the event-select register (Linux: the config bits a PMU's own
	 * format terms name), set by its terms (pmu_ops.terms) or by a raw
	 * config's bits the common fields above leave; the CPU's encode_gp
	 * places them or refuses them. */
	uint64_t own_config;
	uint64_t extra_config;    /* for the extra MSR pmu_ops.extra_msr names (Linux config1) */
	uint64_t period;          /* sampling period; 0 = counting (kept for sampling) */
	enum pmu_arch_event arch; /* the named event it came from, or PMU_ARCH_NONE */
};

/* The hardware side of an event once it holds a counter ("hwc"). */
struct pmu_hwc {
	int idx; /* -1: holds no counter */
	unsigned cpu;
	uint32_t config_base; /* PERFEVTSELx, or IA32_FIXED_CTR_CTRL */
	uint32_t event_base;  /* counter read address: IA32_PMCx / IA32_FIXED_CTRi */
	uint32_t write_base;  /* counter write address: IA32_A_PMCx or IA32_PMCx / FIXED_CTRi */
	uint32_t rdpmc_idx;   /* x, or (1 << 30) | i */
	uint32_t extra_msr;   /* the extra MSR pmu_ops.get_extra gave (holds attr.extra_config), or 0 */
	uint64_t config;      /* GP: PERFEVTSEL without EN; fixed: the 4-bit field */
	unsigned width;
	/* lo: raw counter value at the last update; hi: a generation that
	 * every change of lo bumps. Both move in one CMPXCHG16B, so a reader
	 * whose snapshot was overtaken by a PMI's reload to the same -period
	 * value still sees the pair changed (no ABA). */
	struct u64_pair prev;
	uint64_t count; /* accumulated count (atomic add) */
	bool enabled;
	bool rdpmc_faulted; /* reads fell back to RDMSR */
};

struct pmu_event {
	struct pmu_event_attr attr;
	struct pmu_hwc hw;
	const char *name;            /* optional, for messages */
	char reason[PMU_REASON_LEN]; /* why the last call on it failed */
};

/* Counting attr for a named architectural event (usr + os), with the SDM's
 * encoding: what it counts is the name. The CPU that places the event
 * numbers it with its own backend's encoding (pmu_attr_resolve), so the
 * same attr means the same event on every CPU of any vendor. */
void pmu_attr_arch(struct pmu_event_attr *attr, enum pmu_arch_event e);
void pmu_attr_raw(struct pmu_event_attr *attr, uint16_t event, uint8_t umask);
void pmu_event_init(struct pmu_event *ev, const struct pmu_event_attr *attr, const char *name);

/* Give the event a counter on the calling CPU: the fixed counter when the
 * event has one and it is free, else a GP counter its constraints allow.
 * Returns PMU_OK or an error with ev->reason saying why. */
int pmu_event_add(struct pmu_event *ev);
/* The same on counter idx exactly (GP x or PMU_IDX_FIXED(i)). */
int pmu_event_add_idx(struct pmu_event *ev, int idx);
/* Stop it if running, clear its config register and free the counter. */
void pmu_event_del(struct pmu_event *ev);

/* All-or-nothing for a group: on failure nothing stays allocated and the
 * reason is in the event that could not be placed (and in evs[0]). */
int pmu_events_add(struct pmu_event *const *evs, unsigned n);
void pmu_events_del(struct pmu_event *const *evs, unsigned n);

/* Zero the counters and start them together: counters and configs first,
 * then one GLOBAL_CTRL write (v2+); version 1 sets each EN in turn. */
int pmu_events_enable(struct pmu_event *const *evs, unsigned n);
/* Stop together (one GLOBAL_CTRL write on v2+), then fold in the counts. */
int pmu_events_disable(struct pmu_event *const *evs, unsigned n);
int pmu_event_enable(struct pmu_event *ev);
int pmu_event_disable(struct pmu_event *ev);

/* For a measurement bracket (pmu/bracket.h): zero and configure the
 * counters with their own enables set but GLOBAL_CTRL still off, so the
 * bracket's single WRMSR starts them. Fills the bracket's register and
 * values; version 1 (no GLOBAL_CTRL) brackets one GP event through its EN
 * bit. disarm stops, folds the counts in and leaves the configs cleared. */
struct pmu_bracket_regs {
	uint32_t msr;
	uint64_t on, off;
};
int pmu_events_arm(struct pmu_event *const *evs, unsigned n, struct pmu_bracket_regs *br);
void pmu_events_disarm(struct pmu_event *const *evs, unsigned n);

/* Read the counter (RDPMC), add the width-aware delta since hw.prev,
 * return the new total. hw.prev (value and generation) moves by one 16-byte
 * compare-and-exchange, so an overflow handler that updates or reloads the
 * same event in between is counted once. */
uint64_t pmu_event_update(struct pmu_event *ev);
static inline uint64_t pmu_event_count(const struct pmu_event *ev)
{
	return __atomic_load_n(&ev->hw.count, __ATOMIC_RELAXED);
}

/* Write the raw counter: GP through IA32_A_PMCx when full-width writes
 * exist, else through IA32_PMCx (32 bits, sign-extended: only values whose
 * bits above 31 all equal bit 31 can be written); fixed at full width. */
int pmu_event_write_counter(struct pmu_event *ev, uint64_t value);

/* The GLOBAL_CTRL bits of a set of events that hold counters. */
uint64_t pmu_events_global_mask(struct pmu_event *const *evs, unsigned n);

/* --- Event strings (perf syntax) --- */
/* "instructions", "cycles:u", "r01c0", "cpu/event=0xc0,umask=0,usr,cmask=1/".
 * Returns PMU_OK, or PMU_E_INVAL with err naming the bad token. */
int pmu_event_parse(const char *s, struct pmu_event_attr *attr, char *err, size_t errlen);
/* Canonical "cpu/event=0x..,umask=0x..,.../" form; returns the length. */
int pmu_attr_format(const struct pmu_event_attr *attr, char *buf, size_t n);

struct pmu_cpu;

/* --- Per-CPU state, boot scan and probe --- */

/* Counters found enabled when this kernel started (firmware, hypervisor,
 * an earlier stage), as read. */
struct pmu_inuse {
	uint32_t gp;    /* GP counters with PERFEVTSELx.EN set */
	uint32_t fixed; /* fixed counters with an enable in FIXED_CTR_CTRL */
	uint64_t evtsel[PMU_MAX_GP];
	uint64_t fixed_ctrl, global_ctrl, global_inuse;
	bool global_ctrl_valid, global_inuse_valid;
	int global_inuse_fault; /* the vector an INUSE read raised (taken as no INUSE), or 0 */
	int read_fault;         /* first faulting read, 0 if none */
	uint32_t read_fault_msr;
	bool taken_over; /* pmu.takeover=1 cleared them */
};

struct pmu_init_opts {
	bool takeover; /* pmu.takeover=1: clear counters found in use */
	/* Run during the probe's counting check, with one counter counting
	 * instructions retired; NULL runs pmu_workload_loop(PMU_PROBE_LOOPS). */
	void (*workload)(void *ctx);
	void *workload_ctx;
};
#define PMU_PROBE_LOOPS 1000

/* Decode, scan, (take over), probe, on the calling CPU. Idempotent: a
 * second call starts that CPU's state afresh. */
void pmu_cpu_init(const struct pmu_init_opts *opts);
/* pmu_cpu_init on every CPU through run_on (the kernel passes on_cpu); the
 * options are kept for pmu_cpu_ensure. */
void pmu_init_all(const struct pmu_init_opts *opts,
		  void (*run_on)(unsigned cpu, void (*fn)(void *), void *arg));
/* pmu_cpu_init with the options pmu_init_all was given, unless the calling
 * CPU is initialised already: for code that may run before boot's
 * pmu_init_all reached this CPU. Returns the CPU's state (NULL beyond
 * PMU_MAX_CPUS). */
struct pmu_cpu *pmu_cpu_ensure(void);

struct pmu_cpu *pmu_cpu_of(unsigned cpu);

/* The packages of the CPUs pmu_cpu_init reached, in the order of their
 * lowest CPU: its package ID, that CPU (the one that drives the package's
 * uncore) and how many CPUs it has. Fills pk[0..max) and returns how many
 * it filled; packages past max are left out. */
struct pmu_package {
	uint32_t id;
	unsigned lead, ncpus;
};
#define PMU_MAX_PACKAGES 16
unsigned pmu_packages(struct pmu_package *pk, unsigned max);
struct pmu_cpu *pmu_this_cpu(void);
const struct pmu_caps *pmu_caps(void); /* the calling CPU's */

/* A CPU's driver state, read-only, for modes and tests (struct pmu_cpu's
 * fields are the driver's): its caps, the probe's verdict (counts, or
 * why not; the GP counter the probe used; RDPMC at CPL 0), the counters
 * someone else held at boot and those our events hold (bit x: GP x, bit
 * i: fixed i), the driver's shadows of GLOBAL_CTRL and FIXED_CTR_CTRL,
 * the boot scan's findings, its CPU index, and whether a backend
 * drives it. */
const struct pmu_caps *pmu_cpu_caps(const struct pmu_cpu *pc);
bool pmu_cpu_counts(const struct pmu_cpu *pc);
const char *pmu_cpu_reason(const struct pmu_cpu *pc);
int pmu_cpu_probe_gp(const struct pmu_cpu *pc);
bool pmu_cpu_rdpmc_ok(const struct pmu_cpu *pc);
bool pmu_cpu_initialised(const struct pmu_cpu *pc);
bool pmu_cpu_has_backend(const struct pmu_cpu *pc);
unsigned pmu_cpu_index(const struct pmu_cpu *pc);
uint32_t pmu_cpu_gp_others(const struct pmu_cpu *pc);
uint32_t pmu_cpu_fixed_others(const struct pmu_cpu *pc);
uint32_t pmu_cpu_gp_ours(const struct pmu_cpu *pc);
uint32_t pmu_cpu_fixed_ours(const struct pmu_cpu *pc);
uint64_t pmu_cpu_global_ctrl(const struct pmu_cpu *pc);
uint64_t pmu_cpu_fixed_ctrl(const struct pmu_cpu *pc);
const struct pmu_inuse *pmu_cpu_inuse(const struct pmu_cpu *pc);

/* NULL when this CPU's counters count; else the probe's precise reason. */
const char *pmu_skip_reason(void);

/* Reports: the in-use findings of one CPU, and the boot summary (caps of
 * each distinct CPU type, probe verdicts, in-use findings) for all CPUs. */
void pmu_inuse_report(const struct pmu_cpu *pc, pmu_line_fn out, void *ctx);
/* Whether the scan found anything worth reporting on this CPU. */
bool pmu_inuse_found(const struct pmu_cpu *pc);
void pmu_boot_report(pmu_line_fn out, void *ctx);

/* Names of counter registers for messages: "IA32_PMC3", "IA32_FIXED_CTR1",
 * or the backend's ("PerfCtr3") on c; Intel's when c is NULL. */
const char *pmu_idx_name(const struct pmu_caps *c, int idx, char *buf, size_t n);

/* --- PMI and sampling (pmu/pmi.c, pmu/sampling.c) ---
 * The overflow handler's logic, hardware-independent: the kernel's
 * interrupt glue (pmu/kernel/pmi_lvt.c) and the host model call the same code. */
struct rb;
struct pmu_sample;

/* Where a PMI came from (same bits as a sample's misc, pmu/sample_record.h). */
#define PMU_PMI_FROM_USER (1u << 0) /* the interrupted code ran at CPL 3 */
#define PMU_PMI_FROM_NMI (1u << 1)  /* delivered as an NMI */

/* Per-CPU handler statistics. Written only by that CPU's handler. */
struct pmu_pmi_stats {
	uint64_t pmis;      /* handler entries */
	uint64_t spurious;  /* entries that found no status bit at all */
	uint64_t unclaimed; /* entries whose status held no counter of ours */
	uint64_t overflows; /* counter overflows handled */
	uint64_t samples;   /* sample records written */
	uint64_t lost;      /* samples that did not fit in the ring */
	uint64_t frozen;    /* entries that found the counters frozen (v4) */
	uint64_t faults;    /* register accesses that faulted in the handler */
	/* Of the last entry that found a status bit (a spurious one leaves
	 * them): */
	uint64_t last_status;     /* GLOBAL_STATUS as it read it */
	uint64_t last_cleared;    /* what it wrote to OVF_CTRL */
	uint64_t last_rip;        /* the interrupted RIP */
	unsigned last_from;       /* PMU_PMI_FROM_* */
	uint32_t ovf[PMU_IDX_NR]; /* overflows handled, per counter index */
};

/* The PMI handler, on the interrupted CPU: read GLOBAL_STATUS; for each
 * overflowed counter that holds one of our events, fold in its count,
 * reload -period (sampling events) and write a sample to the ring set by
 * pmu_pmi_set_ring; then clear exactly those bits (and the v4 frozen
 * bits, which unfreezes) through OVF_CTRL. Returns the status read; 0 is
 * a spurious PMI (counted). It neither unmasks the LVT nor sends EOI: the
 * interrupt glue does. */
uint64_t pmu_pmi_handle(uint64_t rip, unsigned from);

/* A copy of a CPU's statistics; reset the calling CPU's. */
void pmu_pmi_get_stats(unsigned cpu, struct pmu_pmi_stats *out);
void pmu_pmi_reset_stats(void);
/* Samples of the calling CPU go to rb (NULL: none are written); each
 * carries the counts of the events on the counters in values_mask (one
 * bit per counter index), other than the one that overflowed. */
void pmu_pmi_set_ring(struct rb *rb, uint64_t values_mask);
/* Called by the handler of the calling CPU right after it read the status
 * (counters still frozen with freeze-on-PMI); for tests. NULL: none. */
typedef void (*pmu_pmi_observer_fn)(void *ctx, uint64_t status);
void pmu_pmi_set_observer(pmu_pmi_observer_fn fn, void *ctx);
/* Freeze on PMI on the calling CPU: the DEBUGCTL bit caps.freeze_ctl
 * names (Intel FREEZE_PERFMON_ON_PMI, AMD FLBRI with LbrAndPmcFreeze).
 * Before Intel v4 the freeze clears GLOBAL_CTRL; the handler then
 * restores it. */
int pmu_pmi_set_freeze(bool on);
/* IA32_DEBUGCTL.FREEZE_WHILE_SMM on the calling CPU, where
 * IA32_PERF_CAPABILITIES[12] offers it (PMU_E_UNSUPPORTED elsewhere):
 * the counters stop while SMM code, which runs at CPL 0, executes. */
int pmu_smm_freeze(bool on);
/* Set status bits through caps.global_status_set (Intel v4
 * IA32_PERF_GLOBAL_STATUS_SET, AMD PerfCntrGlobalStatusSet). */
int pmu_pmi_status_set(uint64_t bits);
/* "pmis 3 spurious 0 ..." lines for one CPU's statistics. */
void pmu_pmi_report(unsigned cpu, pmu_line_fn out, void *ctx);

/* A sampling session: a group of events on one CPU, some with a period,
 * whose overflows write samples into a ring (lib/ringbuf.h). The ring's
 * memory is the caller's: PMU_SAMPLING_CTL_SIZE bytes of control area
 * (perf's user page; here also the ring handle), then a power-of-two data
 * area of at least RB_MIN_DATA_SIZE. */
#define PMU_SAMPLING_CTL_SIZE 4096u
#define PMU_SAMPLING_MAX_EVENTS 16u

struct pmu_sampling {
	unsigned cpu;
	unsigned n;
	struct pmu_event *evs[PMU_SAMPLING_MAX_EVENTS];
	struct rb *rb; /* in the control area */
	bool running;
	bool owns_counters; /* start placed the events; stop frees them */
	char reason[PMU_REASON_LEN];
};

/* On the calling CPU: set up the ring over mem (overwrite: keep the
 * newest, else drop and count), place the events (unless they all hold
 * counters here already), give sampling events their INT bit, route
 * this CPU's samples to the ring and start the group. Returns PMU_OK or
 * an error with s->reason saying why. */
int pmu_sampling_start(struct pmu_sampling *s, struct pmu_event *const *evs, unsigned n, void *mem,
		       size_t mem_size, bool overwrite);
/* On the same CPU: stop the group, stop routing samples, free the
 * counters start placed. The ring keeps its records for the drain. */
int pmu_sampling_stop(struct pmu_sampling *s);

/* What a drain found. */
struct pmu_sampling_tally {
	uint64_t samples;      /* RB_RECORD_SAMPLE records */
	uint64_t lost_records; /* RB_RECORD_LOST records */
	uint64_t lost;         /* the samples they say were lost */
	uint64_t bad;          /* unreadable or unknown records */
};
typedef void (*pmu_sample_fn)(void *ctx, const struct pmu_sample *smp);
/* From any CPU (the ring's one consumer): take every record, print it as
 * "sample: <hex>" through out (the caller adds "# ", pmu/sample_record.h), pass
 * samples to visit; either may be NULL. Adds to *t when not NULL. Returns
 * the records taken. */
uint64_t pmu_sampling_drain(struct pmu_sampling *s, pmu_line_fn out, void *out_ctx, pmu_sample_fn visit,
			    void *visit_ctx, struct pmu_sampling_tally *t);
/* Samples the ring dropped since start (non-overwrite mode). */
uint64_t pmu_sampling_ring_lost(const struct pmu_sampling *s);

#endif
