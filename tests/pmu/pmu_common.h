/* Shared pieces of the PMU hardware checks (tests/pmu/pmu_*.c): SKIP
 * predicates that give the probe's precise reason, event set-up, and the
 * bracketed measurement of the known workloads of pmu/loops.h. */
#ifndef TESTS_PMU_COMMON_H
#define TESTS_PMU_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/pmu.h"

/* The counted loop's two lengths, and the memory walk's (its buffer has
 * PMU_TEST_MEM_LINES 64-byte lines). Every exact instructions/branches
 * check runs both in brackets of one shape and asserts their difference,
 * which holds nothing but the workload: what the bracket adds (its MOVs,
 * and its WRMSRs as far as they are counted, which no manual says for
 * silicon; pmu/bracket.h) cancels, and is reported. Long enough that the
 * start/stop skew of a few cycles is small against the cycle count, short
 * enough to run with interrupts off. */
#define PMU_TEST_LOOPS ((uint64_t)100000)
#define PMU_TEST_LOOPS_SHORT ((uint64_t)50000)
#define PMU_TEST_MEM_LINES ((uint64_t)4096)
#define PMU_TEST_MEM_LINES_SHORT ((uint64_t)2048)
/* Windows per length: an interrupt, a VM exit or an SMI in a window only
 * adds to a count, so the smallest of them is the count. */
#define PMU_TEST_TRIALS 3
/* A window an SMI fell into is run again, at most this often. */
#define PMU_TEST_SMI_RERUNS 5

/* Cycles two counters of the same event may differ by when started and
 * stopped by the same WRMSR: 1% of the count, and at least 64 cycles for
 * the pipeline latency of the WRMSR itself. */
#define PMU_CYCLES_TOLERANCE(c) ((c) / 100 + 64)

/* needs() predicates. Each first makes sure the calling CPU went through
 * pmu_cpu_init (once: pmu_cpu_ensure), then returns NULL or the precise
 * SKIP reason. */
const char *pmu_needs_counting(void);    /* the probe found counters that count */
const char *pmu_needs_global_ctrl(void); /* ... and IA32_PERF_GLOBAL_CTRL (v2+) */
const char *pmu_needs_fixed(void);       /* ... and at least one fixed counter */
/* ... and PMIs reach this CPU (the LVT entry holds what is programmed);
 * no sample ring or observer left from an earlier test. Without a global
 * status register the PMI handler infers overflows from the counters. */
const char *pmu_needs_pmi(void);

/* NULL, or why CPUID leaves architectural event e off this CPU's GP
 * counters, with the value that says so: CPUID.0AH:EBX bit e set, the
 * vector length EAX[31:24] at or below e (SDM vol. 3B, "Pre-defined
 * Architectural Performance Events": an event is available when its EBX
 * bit is clear and the length covers it), or CPUID.23H.3:EAX's bit clear
 * (version 6). A VMM may give any of these. */
const char *pmu_test_gp_event_missing(enum pmu_arch_event e);
/* The check needs e on a GP counter: SKIP with that reason when it has
 * none. Call before the check holds a counter. */
void pmu_test_need_gp_event(enum pmu_arch_event e);

/* NULL, or why pc's CPU has fewer than n counters for a group of n events
 * (a VMM may give a single one: CPUID.0AH:EAX[15:8], AMD's
 * Fn8000_0022_EBX[3:0]), naming its counters. */
const char *pmu_test_few_counters(struct pmu_cpu *pc, unsigned n);

/* Make sure `cpu` went through pmu_cpu_init, running it there if boot did
 * not (from any CPU; `cpu` may be the caller's own). */
void pmu_test_init_cpu(unsigned cpu);

/* Counters of the calling CPU that no one holds: neither an earlier owner
 * (found in use at boot) nor an event of ours. */
uint32_t pmu_test_free_gp(void);
uint32_t pmu_test_free_fixed(void);

/* Event helpers: a named architectural event counting at both rings. */
void pmu_test_event(struct pmu_event *ev, enum pmu_arch_event e);

/* One bracketed window of the workload (pmu/bracket.h) around events that
 * hold counters. */
struct pmu_test_window {
	bool mem;           /* the memory walk (flushed first) instead of the counted loop */
	bool irq;           /* interrupts on inside: a PMI lands in the window */
	uint32_t preset;    /* bit i: evs[i] starts at -preset_by, to overflow in the window */
	uint64_t preset_by; /* (0: the event's own period) */
	uint64_t only;      /* GLOBAL_CTRL bits the bracket sets, of those armed (0: all) */
	/* pmu_test_measure's short and long lengths, iterations or lines
	 * (0: PMU_TEST_LOOPS_SHORT and PMU_TEST_LOOPS, or the walk's). */
	uint64_t len[2];
	/* Each attempt (a window an SMI spoiled is run again): before() ahead
	 * of arming, after() right after the bracket, interrupts as inside
	 * and the counters still armed. Either may be NULL. */
	void (*before)(void *ctx);
	void (*after)(void *ctx);
	void *ctx;
};

/* Run len iterations of w's workload between the bracket's WRMSRs around
 * evs: arm them (counters zeroed or preset, GLOBAL_CTRL off), run, disarm
 * (counts folded into the events). On a CPU with MSR_SMI_COUNT a window
 * an SMI fell into is run again (PMU_TEST_SMI_RERUNS at most, each
 * reported). *tsc, when not NULL, gets the TSC ticks around the bracket.
 * Returns false, after a failed check naming the reason, when arming
 * failed. */
bool pmu_test_window(struct pmu_event *const *evs, unsigned n, const struct pmu_test_window *w, uint64_t len,
		     uint64_t *tsc) __attribute__((nonnull(1)));

/* For windows whose counters overflow with INT/PMI clear: each attempt
 * starts with q->bits clear in GLOBAL_STATUS (OVF_CTRL) and ends with
 * GLOBAL_STATUS read into q->status, before anything else runs. */
struct pmu_test_quiet {
	uint64_t bits, status;
};
struct pmu_test_window pmu_test_quiet_window(struct pmu_test_quiet *q);

/* A differential measurement: PMU_TEST_TRIALS windows at each length. */
struct pmu_test_counts {
	bool mem;
	unsigned n;
	uint64_t len[2];              /* short and long: iterations, or lines walked */
	uint64_t min[PMU_IDX_NR][2];  /* per event: its smallest count at each length */
	uint64_t last[PMU_IDX_NR][2]; /* per event: its count in the last window of each length */
	uint64_t last_tsc[2];         /* the TSC ticks around those last windows */
	uint64_t rate[PMU_IDX_NR][2]; /* per event: the most it counted per 1000 TSC ticks of a window */
	uint64_t rate_count[PMU_IDX_NR][2], rate_tsc[PMU_IDX_NR][2]; /* that window's count and TSC ticks */
	struct pmu_event *const *evs;                                /* the events measured */
};

/* This CPU's measurement (too big for a test's stack): one test holds
 * one at a time. */
struct pmu_test_counts *pmu_test_counts_here(void);

/* Measure evs (at most PMU_IDX_NR) with w at both lengths of w->mem's
 * workload into *m; false as pmu_test_window. w may be NULL (the counted
 * loop, interrupts off). */
bool pmu_test_measure(struct pmu_event *const *evs, unsigned n, const struct pmu_test_window *w,
		      struct pmu_test_counts *m) __attribute__((nonnull(1, 4)));

/* Under a hypervisor an asynchronous VM exit inside a window (an
 * interrupt or NMI for the host) adds to its exact counts: AMD counts the
 * VMRUN back into the guest as a guest instruction and branch (the
 * AMD-SVM-VMRUN-COUNTED-IN-GUEST row), and on a slow host every trial of
 * one length may hold one, so the least counts' difference is off the
 * workload's. pmu_test_measure, then, under a hypervisor, while an
 * instructions or branches event's least counts, each at least its
 * workload (an exit only adds: a dead or unscheduled counter is not
 * measured again), differ by other than the workload, PMU_TEST_TRIALS
 * more windows at each length, at most
 * PMU_TEST_EXIT_RERUNS rounds, each reported: the least counts only go
 * down, so the exact check stays two-sided (an overcount in every window,
 * or any undercount, still fails). */
#define PMU_TEST_EXIT_RERUNS 4
bool pmu_test_measure_exact(struct pmu_event *const *evs, unsigned n, const struct pmu_test_window *w,
			    struct pmu_test_counts *m) __attribute__((nonnull(1, 4)));

/* Check evs[i] of measurement m against what its workload implies:
 * instructions and branches exactly, by the difference between the
 * lengths (pmu_test_check_exact); the other events within bounds derived
 * from the loop, with a message naming counter, event, expected and seen.
 * An event that counted nothing at all under KVM while another counter
 * counted is not checked: the SKIP reason comes back
 * (pmu_test_unscheduled), NULL otherwise. */
const char *pmu_test_check_count(const struct pmu_event *ev, unsigned i, const struct pmu_test_counts *m);

/* 3CH/01H on GP counter ev (added, not running): its rate while it runs,
 * read against the TSC, and the TSC ratio the part reports, where it
 * fixes one (tests/pmu/pmu_refclock.c); asserted on bare metal and TCG,
 * reported under a hypervisor. */
void pmu_test_check_ref_ratio(struct pmu_event *ev);

/* The exact check of an instructions or branches count measured on pc's
 * CPU at the two lengths of mem's workload (count[0] short, count[1]
 * long, each the least of its windows): the difference is exactly the
 * workload's, and the bracket adds 0..2 instructions (its WRMSRs, as far
 * as they are counted) or no branch; the figure it adds is reported. A
 * failure goes to the known deviations (DEV_OBS_RETIRED). what names the
 * counter. True when the count was exact. */
bool pmu_test_check_exact(const struct pmu_cpu *pc, const char *what, enum pmu_arch_event e, bool mem,
			  const uint64_t count[2]);
/* The same at the lengths len[0] (short) and len[1] (long). */
bool pmu_test_check_exact_at(const struct pmu_cpu *pc, const char *what, enum pmu_arch_event e, bool mem,
			     const uint64_t len[2], const uint64_t count[2]);

/* The workload's exact instructions or branches in len iterations
 * (lines) of mem's workload, bracket not included. */
uint64_t pmu_test_workload(enum pmu_arch_event e, bool mem, uint64_t len);

/* Set IA32_DEBUGCTL.FREEZE_WHILE_SMM on the calling CPU where
 * IA32_PERF_CAPABILITIES[12] offers it, once, and say in one line what
 * this CPU does about SMIs in a window (buf may be NULL). */
const char *pmu_test_smi_setup(char *buf, size_t n);

/* KVM backs each guest counter with a pinned host perf event; when the
 * host's NMI watchdog or another perf user holds a counter, one guest
 * event is never scheduled and its counter stays 0 (Linux
 * arch/x86/kvm/pmu.c, pmc_reprogram_counter(); kvm-unit-tests runs its PMU
 * tests only with nmi_watchdog=0). Under KVM (or a hypervisor without a
 * signature), when ev, which must count in any window, counted nothing
 * with armed counters armed (at least 2), and the same event counts alone
 * on a free counter now, the SKIP reason saying so. Otherwise NULL, with
 * a diagnostic naming what was seen: an unexplained dead counter (nothing
 * although alone), or an event that counts nowhere (dead or filtered).
 * The caller frees its events and skips. */
const char *pmu_test_unscheduled(const struct pmu_event *ev, uint64_t counted, const struct pmu_event *other,
				 uint64_t other_counted, unsigned armed);

/* NULL when a read of an MSR no processor has raises #GP here; else why
 * absent MSRs do not fault (a hypervisor that reads every MSR it does not
 * implement as 0: KVM with ignore_msrs=Y, QEMU's TCG), for the checks that
 * expect #GP from an absent PMU MSR. */
const char *pmu_test_absent_msrs_read(void);

/* Diagnostics of the control registers, for failure context. */
void pmu_test_diag_regs(void);

/* The lowest index in mask that is not set, below limit; limit if none. */
unsigned pmu_test_first_absent(uint32_t mask, unsigned limit);

/* RDPMC at CPL 3 (run through the ring-3 runner, tests/pmu/pmu_ring3.c
 * and pmu_v6.c): ecx in, the value read out. */
struct user_rdpmc {
	uint32_t ecx;
	volatile uint64_t val;
};

static inline void user_rdpmc(void *arg)
{
	struct user_rdpmc *u = arg;
	uint32_t lo, hi;

	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(u->ecx));
	u->val = (uint64_t)hi << 32 | lo;
}

#endif
