/* Mode requests from the command line, and the words for their outcomes. */
#include "modes/modes.h"

static enum mode_kind requested_kind = MODE_TEST;
static const struct mode_opts *requested_opts;

void mode_request(enum mode_kind kind, const struct mode_opts *o)
{
	requested_kind = kind;
	requested_opts = o;
}

const struct mode_opts *mode_requested(enum mode_kind kind)
{
	return kind != MODE_TEST && kind == requested_kind ? requested_opts : NULL;
}

const char *mode_test_name(enum mode_kind kind)
{
	switch (kind) {
	case MODE_MONITOR: return "monitor.run";
	case MODE_SAMPLE: return "sample.run";
	default: return NULL;
	}
}

const char *mode_status_name(enum mode_kind kind, int status)
{
	switch (status) {
	case MODE_OK: return "ok";
	case MODE_E_ARGS: return "bad options";
	case MODE_E_NOPMU: return "no PMU";
	case MODE_E_EVENTS:
		return kind == MODE_SAMPLE ? "events could not be sampled" : "events could not be counted";
	case MODE_E_STALLED: return "a CPU stalled";
	case MODE_E_RECORDS: return "samples do not add up";
	case MODE_E_RIP: return "sample RIPs outside the workload";
	}
	return "unknown status";
}
