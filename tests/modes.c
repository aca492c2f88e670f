/* The modes as KTAP tests: with mode=monitor or mode=sample, boot selects
 * only monitor.run or sample.run, which runs the command line's options
 * with the mode's lines going to the console live. Each passes when its
 * run ends well, SKIPs with the run's reason when a chosen CPU has no PMU,
 * and fails otherwise. */
#include "arch/x86/pc/console.h"
#include "lib/printf.h"
#include "modes/modes.h"
#include "modes/monitor.h"
#include "modes/sample.h"
#include "tests/ktest.h"

static const char *needs_monitor_mode(void)
{
	return mode_requested(MODE_MONITOR) ? NULL : "not in monitor mode (boot with mode=monitor)";
}

static const char *needs_sample_mode(void)
{
	return mode_requested(MODE_SAMPLE) ? NULL : "not in sample mode (boot with mode=sample)";
}

/* Live, not through diag(): the test log is printed only when the test
 * ends, a monitor run is for watching and a drain can be thousands of
 * lines. Two spaces of indent put the lines inside the suite's KTAP block
 * (level 1); tools/pmutest-samples allows that. One console_write per line
 * keeps long sample lines whole. */
static void mode_line(const char *s)
{
	char buf[SAMPLE_MODE_LINE_LEN + 4];
	int n = ksnprintf(buf, sizeof(buf), "  %s\n", s);

	console_write(buf, n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static void judge(enum mode_kind kind, const struct mode_result *res)
{
	if (res->status == MODE_E_NOPMU)
		ktest_skip("%s", res->reason);
	check(res->status == MODE_OK, "the %s run ended with status %d (%s), see the lines above",
	      kind == MODE_SAMPLE ? "sample-mode" : "monitor", res->status, mode_status_name(kind, res->status));
}

KTEST("monitor", run, needs_monitor_mode, KTEST_EXPLICIT)
{
	struct mode_result res;

	monitor_run(mode_requested(MODE_MONITOR), mode_line, &res);
	judge(MODE_MONITOR, &res);
}

KTEST("sample", run, needs_sample_mode, KTEST_EXPLICIT)
{
	struct mode_result res;

	sample_mode_run(mode_requested(MODE_SAMPLE), mode_line, &res);
	judge(MODE_SAMPLE, &res);
}
