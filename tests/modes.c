/* Monitor mode as a KTAP test: with mode=monitor, boot selects only
 * monitor.run, which runs the command line's monitor options and passes
 * when the run completes, SKIPs with the probe's reason when there is no
 * PMU, and fails otherwise. Its table goes to the console live. */
#include "arch/x86/pc/console.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "modes/monitor.h"
#include "tests/ktest.h"

static char mode_nopmu[MONITOR_LINE_LEN];

static const char *needs_monitor_mode(void)
{
	return monitor_requested() ? NULL : "not in monitor mode (boot with mode=monitor)";
}

/* Live, not through diag(): the test log is printed only when the test
 * ends, and a monitor run is for watching. Two spaces of indent put the
 * lines inside the suite's KTAP block (level 1). */
static void mode_line(const char *s)
{
	static const char nopmu[] = "# monitor: no PMU on ";

	console_printf("  %s\n", s);
	if (strncmp(s, nopmu, sizeof(nopmu) - 1) == 0)
		strlcpy(mode_nopmu, s + strlen("# monitor: "), sizeof(mode_nopmu));
}

KTEST("monitor", run, needs_monitor_mode, KTEST_EXPLICIT)
{
	mode_nopmu[0] = '\0';
	int st = monitor_run(monitor_requested(), mode_line);
	if (st == MONITOR_E_NOPMU)
		ktest_skip("%s", mode_nopmu[0] ? mode_nopmu : "no PMU");
	check(st == MONITOR_OK, "the monitor run ended with status %d (%s), see the lines above", st,
	      monitor_status_name(st));
}
