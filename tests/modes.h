/* What the monitor and sample tests share: the modes' lines printed live,
 * the verdict on a run's result, the lines of a captured run, and the
 * short run on the last CPU judged by the probe's verdict. */
#ifndef TESTS_MODES_H
#define TESTS_MODES_H

#include <stdbool.h>
#include <stddef.h>

#include "modes/modes.h"
#include "modes/monitor.h"
#include "pmu/pmu.h"

/* Live, not through diag(): the test log is printed only when the test
 * ends, a monitor run is for watching and a drain can be thousands of
 * lines. Two spaces of indent put the line inside the suite's KTAP block
 * (level 1); tools/pmutest-samples allows that. */
void mode_test_line(const char *s);
/* Pass when the run ended well, SKIP with its reason when a chosen CPU has
 * no PMU, fail otherwise. */
void mode_test_judge(enum mode_kind kind, const struct mode_result *res);

/* A captured run's lines (pass mode_cap_keep as the run's line sink): the
 * first MODE_CAP_LINES kept, the rest counted. */
#define MODE_CAP_LINES 48
#define MODE_CAP_LEN MONITOR_LINE_LEN
struct mode_capture {
	char line[MODE_CAP_LINES][MODE_CAP_LEN];
	unsigned n, dropped;
};
extern struct mode_capture mode_cap;
void mode_cap_reset(void);
void mode_cap_keep(const char *s);
/* The first kept line containing needle, or NULL. */
const char *mode_cap_find(const char *needle);
/* The kept lines as diagnostics, for a failed check. */
void mode_cap_dump(void);

/* The last CPU, where the mode tests run: its number, and as a CPU list
 * in list; SKIPs when the driver holds no state for it, and, naming the
 * counters, when its PMU counts but has fewer than events counters for
 * that many events at once (a VMM may give one: the mode rightly
 * refuses; 0: no such need). */
struct pmu_cpu *mode_test_last_cpu(unsigned *cpu, char *list, size_t len, unsigned events);
/* A CPU list that names the first CPU past the last one online, and the
 * refusal a mode must give for it (the bad-options tests' shared case). */
struct mode_past_cpu {
	char list[64], want[64];
};
void mode_test_past_cpu(struct mode_past_cpu *p);
/* The probe found no PMU on cpu: the run (status st) must have refused
 * with MODE_E_NOPMU, printed "<prefix>no PMU on cpu N: <the probe's
 * reason>" as line (NULL: no such line) and ended with that reason. */
void mode_test_no_pmu(enum mode_kind kind, const char *prefix, unsigned cpu, int st,
		      const struct mode_result *res, const char *line);
/* A bad option set and the text its refusal must contain. */
struct mode_bad_case {
	struct mode_opts o;
	const char *want;
};
/* Case i of a refusals check, run with the lines captured: status
 * MODE_E_ARGS, one line "<prefix><reason>" containing want, and the
 * result carrying that reason. */
void mode_test_refused(enum mode_kind kind, const char *prefix, unsigned i, const char *want, int st,
		       const struct mode_result *res);
/* The probe found a PMU on cpu: the run must have ended with status 0;
 * false, with the captured lines shown, when it did not. */
bool mode_test_ran(enum mode_kind kind, unsigned cpu, int st, const struct mode_result *res);

#endif
