/* Shared pieces of the PMU hardware checks (tests/pmu_*.c): SKIP
 * predicates that give the probe's precise reason, event set-up, and the
 * bracketed measurement of the known workloads of pmu/loops.h. */
#ifndef TESTS_PMU_COMMON_H
#define TESTS_PMU_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "pmu/pmu.h"

/* Iterations of the counted loop in one measurement: 3N+3 instructions,
 * N branches; long enough that start/stop skew of a few cycles is small
 * against the cycle count, short enough to run with interrupts off. */
#define PMU_TEST_LOOPS ((uint64_t)100000)
/* Lines walked by the memory loop (its buffer is this many 64-byte lines). */
#define PMU_TEST_MEM_LINES ((uint64_t)4096)

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

/* Make sure `cpu` went through pmu_cpu_init, running it there if boot did
 * not (from any CPU; `cpu` may be the caller's own). */
void pmu_test_init_cpu(unsigned cpu);

/* Counters of the calling CPU that no one holds: neither an earlier owner
 * (found in use at boot) nor an event of ours. */
uint32_t pmu_test_free_gp(void);
uint32_t pmu_test_free_fixed(void);

/* Event helpers: a named architectural event counting at both rings. */
void pmu_test_event(struct pmu_event *ev, enum pmu_arch_event e);

/* Run PMU_TEST_LOOPS (or mem_lines of the memory walk when mem is true)
 * inside a measurement bracket around the events, which must hold
 * counters. Interrupts are off inside; *tsc gets the TSC ticks around
 * the bracket (an upper bound on its length) when not NULL. Returns
 * false, after a failed check naming the reason, when arming failed. */
bool pmu_test_measure(struct pmu_event *const *evs, unsigned n, bool mem, uint64_t *tsc);

/* Expected-count helpers for the events of a measurement. */
uint64_t pmu_test_expected_insns(bool mem);
uint64_t pmu_test_expected_branches(bool mem);

/* Check one event's count against the bounds its workload implies, with
 * a message naming counter, event, expected and seen. */
void pmu_test_check_count(const struct pmu_event *ev, bool mem, uint64_t tsc);

/* Diagnostics of the control registers, for failure context. */
void pmu_test_diag_regs(void);

/* The lowest index in mask that is not set, below limit; limit if none. */
unsigned pmu_test_first_absent(uint32_t mask, unsigned limit);

#endif
