/* The modes' runs as tests (tests/modes.h). */
#include "tests/modes.h"

#include "arch/x86/pc/console.h"
#include "arch/x86/smp.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "modes/sample.h"
#include "tests/ktest.h"
#include "tests/pmu/pmu_common.h"

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

struct mode_capture mode_cap;

void mode_cap_reset(void)
{
	mode_cap.n = mode_cap.dropped = 0;
}

void mode_cap_keep(const char *s)
{
	if (mode_cap.n < MODE_CAP_LINES)
		strlcpy(mode_cap.line[mode_cap.n++], s, MODE_CAP_LEN);
	else
		mode_cap.dropped++;
}

const char *mode_cap_find(const char *needle)
{
	for (unsigned i = 0; i < mode_cap.n; i++)
		if (strstr(mode_cap.line[i], needle))
			return mode_cap.line[i];
	return NULL;
}

void mode_cap_dump(void)
{
	for (unsigned i = 0; i < mode_cap.n; i++)
		diag("captured: %s", mode_cap.line[i]);
	if (mode_cap.dropped)
		diag("captured: (%u more lines dropped)", mode_cap.dropped);
}

struct pmu_cpu *mode_test_last_cpu(unsigned *cpu, char *list, size_t len, unsigned events)
{
	unsigned last = smp_num_cpus() - 1;
	struct pmu_cpu *pc = pmu_cpu_of(last);
	const char *few;

	if (!pc)
		ktest_skip("cpu %u is beyond PMU_MAX_CPUS", last);
	pmu_test_init_cpu(last);
	ksnprintf(list, len, "%u", last);
	*cpu = last;
	few = events && pmu_cpu_counts(pc) ? pmu_test_few_counters(pc, events) : NULL;
	if (few)
		ktest_skip("cpu %u: %s", last, few);
	return pc;
}

void mode_test_past_cpu(struct mode_past_cpu *p)
{
	unsigned n = smp_num_cpus();

	ksnprintf(p->list, sizeof(p->list), "0,%u", n);
	ksnprintf(p->want, sizeof(p->want), "\"%u\" names a CPU past the last one online", n);
}

void mode_test_no_pmu(enum mode_kind kind, const char *prefix, unsigned cpu, int st,
		      const struct mode_result *res, const char *line)
{
	char want[PMU_REASON_LEN + 64];
	size_t skip = strlen(prefix);

	ksnprintf(want, sizeof(want), "%sno PMU on cpu %u: %s", prefix, cpu, pmu_cpu_reason(pmu_cpu_of(cpu)));
	check(st == MODE_E_NOPMU, "no PMU on cpu %u: expected status %d (no PMU), got %d (%s)", cpu,
	      MODE_E_NOPMU, st, mode_status_name(kind, st));
	check(line && strcmp(line, want) == 0, "expected the line \"%s\", saw \"%s\"", want,
	      line ? line : "(none)");
	check(res->status == st && strcmp(res->reason, want + skip) == 0,
	      "expected the result %d \"%s\", saw %d \"%s\"", st, want + skip, res->status, res->reason);
	if (line)
		diag("%s", line + 2);
}

bool mode_test_ran(enum mode_kind kind, unsigned cpu, int st, const struct mode_result *res)
{
	if (check(st == MODE_OK && res->status == MODE_OK,
		  "cpu %u counts: expected status 0, got %d (%s): %s", cpu, st, mode_status_name(kind, st),
		  res->reason))
		return true;
	mode_cap_dump();
	return false;
}

void mode_test_refused(enum mode_kind kind, const char *prefix, unsigned i, const char *want, int st,
		       const struct mode_result *res)
{
	const char *l = mode_cap_find(want);
	size_t skip = strlen(prefix);

	check(st == MODE_E_ARGS, "case %u: expected status %d (bad options), got %d (%s)", i, MODE_E_ARGS, st,
	      mode_status_name(kind, st));
	check(res->status == st && strstr(res->reason, want) && l && strcmp(l + skip, res->reason) == 0,
	      "case %u: expected the result %d with the line's reason, saw %d \"%s\"", i, st, res->status,
	      res->reason);
	check(l != NULL, "case %u: no line containing \"%s\"; first line: \"%s\"", i, want,
	      mode_cap.n ? mode_cap.line[0] : "(none)");
	check(mode_cap.n == 1 && strncmp(mode_cap.line[0], prefix, skip) == 0,
	      "case %u: expected one \"%s\" line, saw %u lines", i, prefix, mode_cap.n);
}
