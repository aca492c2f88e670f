/* Host tests of monitor mode's pure parts: splitting event lists (commas
 * inside cpu/.../ stay), every refusal, the split items through the real
 * event parser, and the perf-stat-like table down to the character. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/host/hosttest.h"

#include "modes/monitor.h"
#include "pmu/pmu.h"

static char names[MONITOR_MAX_EVENTS][MONITOR_EVENT_LEN];
static char err[256];

static int split(const char *s)
{
	memset(names, 0, sizeof(names));
	return monitor_split_events(s, names, MONITOR_MAX_EVENTS, err, sizeof(err));
}

HT_TEST(split_plain_and_pmu_terms)
{
	HT_CHECK_EQ(split("instructions,cycles"), 2);
	HT_CHECK_STR(names[0], "instructions");
	HT_CHECK_STR(names[1], "cycles");
	HT_CHECK_STR(err, "");

	HT_CHECK_EQ(split("cpu/event=0xc0,umask=0,usr,cmask=1/,cycles"), 2);
	HT_CHECK_STR(names[0], "cpu/event=0xc0,umask=0,usr,cmask=1/");
	HT_CHECK_STR(names[1], "cycles");

	HT_CHECK_EQ(split("cycles:u,cpu/event=0x3c/:k,r01c0,cpu/event=0xc4,umask=0/"), 4);
	HT_CHECK_STR(names[0], "cycles:u");
	HT_CHECK_STR(names[1], "cpu/event=0x3c/:k");
	HT_CHECK_STR(names[2], "r01c0");
	HT_CHECK_STR(names[3], "cpu/event=0xc4,umask=0/");

	HT_CHECK_EQ(split("branch-misses"), 1);
	HT_CHECK_STR(names[0], "branch-misses");
	/* Splitting keeps what is between commas; the parser judges it. */
	HT_CHECK_EQ(split("cycles ,x"), 2);
	HT_CHECK_STR(names[0], "cycles ");
}

static void split_refused(const char *s, const char *want)
{
	int n = split(s);
	HT_CHECK(n == -1, "\"%s\" should be refused, got %d", s, n);
	HT_CHECK(strstr(err, want) != NULL, "\"%s\": expected \"%s\" in \"%s\"", s, want, err);
}

HT_TEST(split_refusals)
{
	split_refused("", "empty event list");
	split_refused(",cycles", "empty event at offset 0");
	split_refused("cycles,,instructions", "empty event at offset 7");
	split_refused("cycles,", "empty event at offset 7");
	split_refused("cpu/event=0xc0,umask=0", "event 'cpu/event=0xc0,umask=0' has no closing '/'");
	split_refused("cycles,cpu/event=1/,cpu/x", "event 'cpu/x' has no closing '/'");
	HT_CHECK_EQ(monitor_split_events(NULL, names, 4, err, sizeof(err)), -1);

	char many[512] = "";
	for (int i = 0; i < MONITOR_MAX_EVENTS; i++)
		strcat(many, i ? ",cycles" : "cycles");
	HT_CHECK_EQ(split(many), MONITOR_MAX_EVENTS);
	strcat(many, ",r00c5");
	split_refused(many, "more than 16 events ('r00c5' is one too many");

	char longev[MONITOR_EVENT_LEN + 8];
	memset(longev, 'c', sizeof(longev) - 1);
	longev[sizeof(longev) - 1] = '\0';
	split_refused(longev, "is longer than 63 characters");
	longev[MONITOR_EVENT_LEN - 1] = '\0'; /* 63: fits */
	HT_CHECK_EQ(split(longev), 1);
	HT_CHECK_EQ(strlen(names[0]), MONITOR_EVENT_LEN - 1);

	char small[8];
	HT_CHECK_EQ(monitor_split_events(",", names, 4, small, sizeof(small)), -1);
	HT_CHECK_EQ(strlen(small), 7);
}

/* What the monitor does next with each item: the event parser. */
HT_TEST(split_items_parse)
{
	struct pmu_event_attr a;
	char perr[PMU_REASON_LEN];

	HT_CHECK_EQ(split("instructions,cpu/event=0xc0,umask=0,usr,cmask=1/,branch-misses:u"), 3);
	HT_CHECK_EQ(pmu_event_parse(names[0], &a, perr, sizeof(perr)), PMU_OK);
	HT_CHECK_EQ(a.arch, PMU_ARCH_INSTRUCTIONS);
	HT_CHECK_EQ(pmu_event_parse(names[1], &a, perr, sizeof(perr)), PMU_OK);
	HT_CHECK_EQ(a.event, 0xc0);
	HT_CHECK_EQ(a.cmask, 1);
	HT_CHECK(a.usr && !a.os, "cpu/...,usr/ counts user only");
	HT_CHECK_EQ(pmu_event_parse(names[2], &a, perr, sizeof(perr)), PMU_OK);
	HT_CHECK_EQ(a.arch, PMU_ARCH_BRANCH_MISSES);

	/* A bad item: the parser's message names it. */
	HT_CHECK_EQ(split("cycles,instrucions"), 2);
	HT_CHECK_EQ(pmu_event_parse(names[1], &a, perr, sizeof(perr)), PMU_E_INVAL);
	HT_CHECK(strstr(perr, "unknown event 'instrucions'") != NULL, "parser said: %s", perr);
	HT_CHECK_EQ(split("cpu/event=0xc0,umsk=1/"), 1);
	HT_CHECK_EQ(pmu_event_parse(names[0], &a, perr, sizeof(perr)), PMU_E_INVAL);
	HT_CHECK(strstr(perr, "unknown term 'umsk'") != NULL, "parser said: %s", perr);
}

HT_TEST(header_and_row_exact)
{
	static const char *const ev[] = { "instructions", "cycles", "branch-misses" };
	const uint64_t d[] = { 123456789, 987654321, 42 };
	struct monitor_cols c;
	char buf[MONITOR_LINE_LEN];

	monitor_cols_init(&c, ev, 3, "loop.iters");
	HT_CHECK_EQ(c.width[0], MONITOR_COL_MIN);
	int n = monitor_format_header(&c, buf, sizeof(buf));
	HT_CHECK_STR(buf,
		     "#     time(ms)  cpu    instructions          cycles   branch-misses      loop.iters");
	HT_CHECK_EQ(n, strlen(buf));
	n = monitor_format_row(&c, 1000049, 1, d, 41152263, buf, sizeof(buf));
	HT_CHECK_STR(buf,
		     "#       1000.0    1       123456789       987654321              42        41152263");
	HT_CHECK_EQ(n, strlen(buf));

	monitor_format_row(&c, 0, 255, d, 0, buf, sizeof(buf));
	HT_CHECK(strncmp(buf, "#          0.0  255", 19) == 0, "row: %s", buf);
	monitor_format_row(&c, 1999999, 0, d, 0, buf, sizeof(buf));
	HT_CHECK(strncmp(buf, "#       1999.9    0", 19) == 0, "ms are cut, not rounded: %s", buf);
	monitor_format_row(&c, 123456789, 0, d, 0, buf, sizeof(buf));
	HT_CHECK(strncmp(buf, "#     123456.7    0", 19) == 0, "row: %s", buf);
}

HT_TEST(columns_line_up)
{
	static const char *const ev[] = { "cpu/event=0xc0,umask=0x00,usr,cmask=1/", "cycles:u" };
	struct monitor_cols c;
	char head[MONITOR_LINE_LEN], row[MONITOR_LINE_LEN];
	uint64_t s = 1, bad = 0;

	monitor_cols_init(&c, ev, 2, "chase.hops");
	HT_CHECK_EQ(c.width[0], strlen(ev[0])); /* a long name widens its column */
	HT_CHECK_EQ(c.width[1], MONITOR_COL_MIN);
	monitor_format_header(&c, head, sizeof(head));
	/* Any value below 10^14 fits its column: each row is as long as the
	 * header and each number ends where its heading ends. */
	for (int i = 0; i < 1000; i++) {
		uint64_t d[2];
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		d[0] = s % 100000000000000ull;
		d[1] = (s >> 20) % (i + 1);
		monitor_format_row(&c, s % 100000000000ull, (unsigned)(s % 256), d, s % 1000, row,
				   sizeof(row));
		size_t end0 = strstr(head, ev[0]) - head + strlen(ev[0]);
		bad += strlen(row) != strlen(head) || row[end0 - 1] == ' ' || row[end0] != ' ';
	}
	HT_CHECK_EQ(bad, 0);
	/* No work column when there is none. */
	monitor_cols_init(&c, ev + 1, 1, NULL);
	monitor_format_header(&c, head, sizeof(head));
	HT_CHECK_STR(head, "#     time(ms)  cpu        cycles:u");
}

HT_TEST(truncation_like_snprintf)
{
	static const char *const ev[] = { "instructions" };
	const uint64_t d[] = { 7 };
	struct monitor_cols c;
	char small[10], full[MONITOR_LINE_LEN];

	monitor_cols_init(&c, ev, 1, NULL);
	int n = monitor_format_row(&c, 5000, 3, d, 0, small, sizeof(small));
	int m = monitor_format_row(&c, 5000, 3, d, 0, full, sizeof(full));
	HT_CHECK_EQ(n, m);
	HT_CHECK_EQ(strlen(small), sizeof(small) - 1);
	HT_CHECK(strncmp(small, full, sizeof(small) - 1) == 0, "prefix differs: %s / %s", small, full);
	HT_CHECK_EQ(monitor_format_header(&c, NULL, 0), strlen("#     time(ms)  cpu    instructions"));
}

HT_MAIN("monitor")
