/* Monitor mode: run a named workload on chosen CPUs and print, every
 * interval, one row per CPU with each event's delta, like `perf stat -I`.
 * monitor.c is the kernel side (on modes/run.c's coordinator);
 * monitor_fmt.c holds the pure parts (event list splitting, columns,
 * rows) that the host tests build. */
#ifndef MODES_MONITOR_H
#define MODES_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "modes/modes.h"

#define MONITOR_MAX_EVENTS 16 /* more than any PMU has counters: no multiplexing */
#define MONITOR_EVENT_LEN 64  /* longest event spec, NUL included */
#define MONITOR_LINE_LEN 512  /* longest output line, NUL included */
#define MONITOR_COL_MIN 14    /* narrowest counter column: 10^13 fits */

#define MONITOR_DEFAULT_EVENTS "instructions,cycles,branch-misses"
#define MONITOR_DEFAULT_INTERVAL_MS 1000
#define MONITOR_DEFAULT_DURATION_MS 10000
#define MONITOR_MIN_INTERVAL_MS 10          /* a row per CPU must fit through the UART */
#define MONITOR_MAX_INTERVAL_MS 3600000ull  /* one hour */
#define MONITOR_MAX_DURATION_MS 86400000ull /* one day */

/*
 * Run the monitor from the BSP (or any one CPU: "the coordinator") with the
 * options of struct mode_opts it has: events (comma-separated, the
 * default MONITOR_DEFAULT_EVENTS; "none": only the work column, which
 * needs no PMU), interval_ms, duration_ms (the last interval may be
 * shorter), cpus (default all), workload (default loop) and size. Every
 * output line goes through line(), whole, without a newline, and starts
 * with "# " so a serial log stays valid KTAP (NULL: console_printf). The
 * coordinator may itself be a chosen CPU: it then runs its workload in
 * steps between prints, so its row also counts the printing (documented in
 * the run's first line). Every other CPU runs its workload from a cross-CPU
 * call and snapshots its counters at each boundary itself; the coordinator
 * only reads the snapshots, so no CPU is interrupted to be read.
 * Returns the enum mode_status, also in *res with the reason (res may be
 * NULL); never hangs: every wait is bounded.
 */
int monitor_run(const struct mode_opts *o, void (*line)(const char *), struct mode_result *res);
/* A test budget that covers a run of o: its duration and set-up, in ms. */
uint64_t monitor_budget_ms(const struct mode_opts *o);

/* --- Pure helpers (monitor_fmt.c) --- */

/*
 * Split a comma-separated event list into names[0..max). Commas inside
 * "cpu/.../" belong to the event (between its two slashes). Returns the
 * number of events, or -1 with err naming the problem (empty item,
 * unterminated cpu/ list, over-long event, too many events).
 */
int monitor_split_events(const char *s, char names[][MONITOR_EVENT_LEN], unsigned max, char *err,
			 size_t errlen);

/* The table's columns: one per event, then the workload's work count. */
struct monitor_cols {
	unsigned n;
	const char *name[MONITOR_MAX_EVENTS];
	unsigned width[MONITOR_MAX_EVENTS];
	const char *work; /* heading of the work column, NULL for none */
	unsigned work_width;
};
void monitor_cols_init(struct monitor_cols *c, const char *const *names, unsigned n, const char *work);

/* "#     time(ms)  cpu    instructions ..." and
 * "#       1000.0    1       123456789 ...": the time is the snapshot's,
 * in ms with one decimal, since the start. Return the length, like
 * snprintf. */
int monitor_format_header(const struct monitor_cols *c, char *buf, size_t len);
int monitor_format_row(const struct monitor_cols *c, uint64_t t_us, unsigned cpu, const uint64_t *delta,
		       uint64_t work, char *buf, size_t len);

#endif
