/* The modes' runs as tests (tests/modes.h). */
#include "tests/modes.h"

#include "arch/x86/pc/console.h"
#include "lib/printf.h"
#include "modes/sample.h"
#include "tests/ktest.h"

void mode_test_line(const char *s)
{
	char buf[SAMPLE_MODE_LINE_LEN + 4];
	int n = ksnprintf(buf, sizeof(buf), "  %s\n", s);

	/* One console_write per line keeps long sample lines whole. */
	console_write(buf, n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

void mode_test_judge(enum mode_kind kind, const struct mode_result *res)
{
	if (res->status == MODE_E_NOPMU)
		ktest_skip("%s", res->reason);
	check(res->status == MODE_OK, "the %s run ended with status %d (%s), see the lines above",
	      kind == MODE_SAMPLE ? "sample-mode" : "monitor", res->status,
	      mode_status_name(kind, res->status));
}
