/* What monitor.run and sample.run share: the modes' lines printed live,
 * and the verdict on a run's result. */
#ifndef TESTS_MODES_H
#define TESTS_MODES_H

#include "modes/modes.h"

/* Live, not through diag(): the test log is printed only when the test
 * ends, a monitor run is for watching and a drain can be thousands of
 * lines. Two spaces of indent put the line inside the suite's KTAP block
 * (level 1); tools/pmutest-samples allows that. */
void mode_test_line(const char *s);
/* Pass when the run ended well, SKIP with its reason when a chosen CPU has
 * no PMU, fail otherwise. */
void mode_test_judge(enum mode_kind kind, const struct mode_result *res);

#endif
