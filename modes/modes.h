/* The applications of the PMU driver, as boot runs them: which mode the
 * command line asks for (mode=), the options the modes share, and how a
 * run reports its outcome. Each mode runs as one KTAP test (monitor.run,
 * sample.run) so that a CI job reads its verdict like any other. */
#ifndef MODES_MODES_H
#define MODES_MODES_H

#include <stdbool.h>
#include <stdint.h>

#include "pmu/pmu.h"

/* Values of mode= (boot/options.c lists them in this order). */
enum mode_kind { MODE_TEST, MODE_MONITOR, MODE_SAMPLE, MODE_NR };

/* How a run ended; the same numbers for every mode. */
enum mode_status {
	MODE_OK = 0,
	MODE_E_ARGS = 1,    /* a bad option: events, CPU list, workload, size, times, ring */
	MODE_E_NOPMU = 2,   /* a chosen CPU has no usable PMU (or no PMI, sample mode) */
	MODE_E_EVENTS = 3,  /* the events could not be placed or started on a CPU */
	MODE_E_STALLED = 4, /* a CPU did not set up, report or finish in time */
	MODE_E_RECORDS = 5, /* sample mode: samples or losses do not add up, or a record is wrong */
	MODE_E_RIP = 6,     /* sample mode: too few sample RIPs in the workload's code */
};

/* A run's outcome as data: the status, and for anything but MODE_OK the
 * first problem in words, as its line said it without the mode's prefix
 * ("no PMU on cpu 0: <the probe's reason>"). */
struct mode_result {
	int status; /* enum mode_status */
	char reason[PMU_REASON_LEN];
};

/* What the command line asks of a mode; zero, NULL and "" take the mode's
 * default. Each mode reads the fields it has. */
struct mode_opts {
	const char *events;   /* comma-separated event specs (pmu_event_parse, sample: with period=) */
	uint64_t interval_ms; /* monitor: between rows */
	uint64_t duration_ms; /* how long the workload runs */
	const char *cpus;     /* "0,2-3", "all" (lib/cpulist.h) */
	const char *workload; /* loop, chase, branchy, memcpy (modes/workloads.h) */
	uint64_t size;        /* the workload's size parameter */
	uint64_t ring_bytes;  /* sample: ring data bytes per CPU, a power of two */
	bool overwrite;       /* sample: keep the newest records when the ring is full */
};

/* What a mode's test budget adds to the run's own length for setting up:
 * the set-up bound of modes/run.h (120 s) with a minute to spare. */
#define MODE_SETUP_BUDGET_MS 180000

/* Boot records what the command line asked for; the mode's test reads it
 * back. NULL unless `kind` is the mode asked for. */
void mode_request(enum mode_kind kind, const struct mode_opts *o);
const struct mode_opts *mode_requested(enum mode_kind kind);
/* The one test that runs the mode ("monitor.run"); NULL for MODE_TEST. */
const char *mode_test_name(enum mode_kind kind);
/* "ok", "bad options", "no PMU", ...: the words for a status of `kind`. */
const char *mode_status_name(enum mode_kind kind, int status);

#endif
