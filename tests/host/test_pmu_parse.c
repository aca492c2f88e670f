/* Host tests of event strings (pmu/attr.c): named events, raw rUUEE,
 * cpu/term,.../ lists with :u/:k modifiers, malformed input naming the bad
 * token, a canonical format that parses back, and a fuzz loop. */
#include "arch/x86/msr.h"
#include "lib/bits.h"
#include "pmu/pmu.h"
#include "tests/host/hosttest.h"

static char err[256];
static struct pmu_event_attr attr;

static int parse(const char *s)
{
	memset(&attr, 0xa5, sizeof(attr));
	return pmu_event_parse(s, &attr, err, sizeof(err));
}

/* Parse must fail with exactly this message. */
#define CHECK_BAD(s, msg)                           \
	do {                                        \
		HT_CHECK_EQ(parse(s), PMU_E_INVAL); \
		HT_CHECK_STR(err, msg);             \
	} while (0)

static bool attr_eq(const struct pmu_event_attr *a, const struct pmu_event_attr *b)
{
	return a->event == b->event && a->umask == b->umask && a->cmask == b->cmask && a->usr == b->usr &&
	       a->os == b->os && a->edge == b->edge && a->inv == b->inv && a->own_config == b->own_config &&
	       a->intr == b->intr && a->period == b->period && a->extra_config == b->extra_config;
}

HT_TEST(named_events)
{
	for (int e = 0; e < PMU_ARCH_NR; e++) {
		HT_CHECK_EQ(parse(pmu_arch_events[e].name), PMU_OK);
		HT_CHECK_EQ(attr.event, pmu_arch_events[e].event);
		HT_CHECK_EQ(attr.umask, pmu_arch_events[e].umask);
		HT_CHECK_EQ(attr.arch, e);
		HT_CHECK(attr.usr && attr.os && !attr.edge && !attr.inv && !attr.cmask && !attr.period,
			 "%s: plain counting attr", pmu_arch_events[e].name);
	}
	HT_CHECK_EQ(parse("ref-cycles"), PMU_OK); /* starts like a raw event */
	HT_CHECK_EQ(attr.event, 0x3c);
	HT_CHECK_EQ(attr.umask, 0x01);
	HT_CHECK_EQ(pmu_arch_event_by_name("topdown-slots"), PMU_ARCH_TOPDOWN_SLOTS);
	HT_CHECK_EQ(pmu_arch_event_by_code(0xc5, 0), PMU_ARCH_BRANCH_MISSES);
	HT_CHECK_EQ(pmu_arch_event_of_fixed(3), PMU_ARCH_TOPDOWN_SLOTS);
	/* Fixed counters 4-6 of the Atom-derived cores (Linux intel_skt_event_constraints). */
	HT_CHECK_EQ(pmu_arch_event_of_fixed(4), PMU_ARCH_TOPDOWN_BAD_SPEC);
	HT_CHECK_EQ(pmu_arch_event_of_fixed(6), PMU_ARCH_TOPDOWN_RETIRING);
	HT_CHECK_EQ(pmu_arch_event_of_fixed(7), PMU_ARCH_NONE);
	HT_CHECK_EQ(pmu_arch_event_by_code(0x73, 0), PMU_ARCH_TOPDOWN_BAD_SPEC);
}

HT_TEST(modifiers)
{
	HT_CHECK_EQ(parse("cycles:u"), PMU_OK);
	HT_CHECK(attr.usr && !attr.os, "u: user only");
	HT_CHECK_EQ(parse("instructions:k"), PMU_OK);
	HT_CHECK(!attr.usr && attr.os, "k: kernel only");
	HT_CHECK_EQ(parse("branches:ku"), PMU_OK);
	HT_CHECK(attr.usr && attr.os, "ku: both");
	CHECK_BAD("cycles:uu", "bad modifier 'u' in ':uu' (known: u, k, each once)");
	CHECK_BAD("cycles:p", "bad modifier 'p' in ':p' (known: u, k, each once)");
	CHECK_BAD("cycles:", "empty modifier after ':'");
}

HT_TEST(raw_events)
{
	HT_CHECK_EQ(parse("r00c0"), PMU_OK);
	HT_CHECK_EQ(attr.event, 0xc0);
	HT_CHECK_EQ(attr.umask, 0x00);
	HT_CHECK_EQ(attr.arch, PMU_ARCH_NONE);
	HT_CHECK(attr.usr && attr.os, "raw counts both rings");
	HT_CHECK_EQ(parse("r01c0:u"), PMU_OK);
	HT_CHECK_EQ(attr.umask, 0x01);
	HT_CHECK(attr.usr && !attr.os, "raw with :u");
	HT_CHECK_EQ(parse("rc4"), PMU_OK);
	HT_CHECK_EQ(attr.event, 0xc4);
	HT_CHECK_EQ(parse("r018401a3"), PMU_OK); /* cmask 1, INV, EDGE */
	HT_CHECK_EQ(attr.event, 0xa3);
	HT_CHECK_EQ(attr.umask, 0x01);
	HT_CHECK_EQ(attr.cmask, 1);
	HT_CHECK(attr.inv && attr.edge && !attr.own_config, "inv, edge");
	HT_CHECK_EQ(parse("r2000c0"), PMU_OK); /* bit 21, the backend's (Intel's AnyThread) */
	HT_CHECK_EQ(attr.own_config, BIT(PERFEVTSEL_ANY_BIT));
	CHECK_BAD("r", "raw event 'r' needs hex digits (rUUEE: umask UU, event EE)");
	CHECK_BAD("rxyz", "raw event 'rxyz': 'x' is not a hex digit");
	CHECK_BAD("r12345678901234567", "raw event 'r12345678901234567': more than 16 hex digits");
	CHECK_BAD("r1000000c0", "raw event 'r1000000c0': bits above 31 are reserved in PERFEVTSEL");
	CHECK_BAD(
		"r4300c0",
		"raw event 'r4300c0': bits 0x430000 (USR/OS/PC/INT/EN) are set by the driver; use :u/:k or cpu/usr,os,int/");
	CHECK_BAD("r00c0:x", "bad modifier 'x' in ':x' (known: u, k, each once)");
}

HT_TEST(cpu_term_lists)
{
	HT_CHECK_EQ(parse("cpu/event=0xc0,umask=0x00,usr,os,cmask=1,inv,edge/"), PMU_OK);
	HT_CHECK_EQ(attr.event, 0xc0);
	HT_CHECK_EQ(attr.cmask, 1);
	HT_CHECK(attr.usr && attr.os && attr.inv && attr.edge && !attr.own_config && !attr.intr, "flags");
	HT_CHECK_EQ(parse("cpu/event=0x3c/"), PMU_OK);
	HT_CHECK(attr.usr && attr.os, "both rings by default");
	HT_CHECK_EQ(parse("cpu/event=0xc0,usr/"), PMU_OK);
	HT_CHECK(attr.usr && !attr.os, "usr only");
	HT_CHECK_EQ(parse("cpu/os=1,event=196,usr=0/"), PMU_OK);
	HT_CHECK(!attr.usr && attr.os, "os only, decimal event");
	HT_CHECK_EQ(attr.event, 196);
	HT_CHECK_EQ(parse("cpu/event=0xc0,any,int,period=100000/"), PMU_OK);
	HT_CHECK(attr.own_config == BIT(PERFEVTSEL_ANY_BIT) && attr.intr, "any, int");
	HT_CHECK_EQ(attr.period, 100000);
	HT_CHECK_EQ(parse("cpu/event=0xb7,umask=0x01,offcore_rsp=0x3fffc00001/"), PMU_OK);
	HT_CHECK_EQ(attr.extra_config, 0x3fffc00001ull);
	HT_CHECK_EQ(parse("cpu/event=0xc0/:u"), PMU_OK);
	HT_CHECK(attr.usr && !attr.os, "modifier after the list");
}

HT_TEST(cpu_term_errors_name_the_token)
{
	CHECK_BAD("cpu/event=0x1ff/", "term 'event=0x1ff': value out of range 0..0xff");
	CHECK_BAD("cpu/umask=1/", "'cpu/umask=1/' has no event= term");
	CHECK_BAD("cpu/event=0xc0", "missing closing '/' in 'cpu/event=0xc0'");
	CHECK_BAD("cpu/event=0xc0,,umask=1/", "empty term in the cpu/.../ list");
	CHECK_BAD("cpu//", "empty term in the cpu/.../ list");
	CHECK_BAD("cpu/event=0xc0,/", "empty term in the cpu/.../ list");
	CHECK_BAD(
		"cpu/foo=1,event=1/",
		"unknown term 'foo' (known: event umask cmask usr os edge inv int period any offcore_rsp host_only guest_only)");
	CHECK_BAD("cpu/event=0xc0,event=1/", "duplicate term 'event'");
	CHECK_BAD("cpu/event=zz/", "term 'event=zz': 'zz' is not a number (decimal or 0x hex)");
	CHECK_BAD("cpu/event=0x/", "term 'event=0x': '0x' is not a number (decimal or 0x hex)");
	CHECK_BAD("cpu/event=/", "term 'event=': '' is not a number (decimal or 0x hex)");
	CHECK_BAD("cpu/event=-1/", "term 'event=-1': '-1' is not a number (decimal or 0x hex)");
	CHECK_BAD("cpu/usr=2,event=1/", "term 'usr=2': value out of range 0..0x1");
	CHECK_BAD("cpu/event/", "term 'event' needs a value (event=N)");
	CHECK_BAD("cpu/event=0xc0/x", "unexpected 'x' after the event");
	CHECK_BAD(
		"cpu/event=1,period=99999999999999999999999/",
		"term 'period=99999999999999999999999': '99999999999999999999999' is not a number (decimal or 0x hex)");
	CHECK_BAD("cpu/event=1,period=0x8000000000000000/",
		  "term 'period=0x8000000000000000': value out of range 0..0x7fffffffffffffff");
}

HT_TEST(other_errors)
{
	CHECK_BAD("", "empty event string");
	CHECK_BAD("cycles u", "character 0x20 at offset 6 is not allowed in an event string");
	CHECK_BAD("cyc\xc3\xa9", "character 0xc3 at offset 3 is not allowed in an event string");
	CHECK_BAD(
		"instructionz",
		"unknown event 'instructionz' (named: cycles instructions ref-cycles llc-references llc-misses branches branch-misses topdown-* lbr-inserts; raw: rUUEE; cpu/.../)");
	/* The attr is untouched on error. */
	struct pmu_event_attr before;
	memset(&before, 0x5a, sizeof(before));
	attr = before;
	HT_CHECK_EQ(pmu_event_parse("cpu/event=0x100/", &attr, err, sizeof(err)), PMU_E_INVAL);
	HT_CHECK(memcmp(&attr, &before, sizeof(attr)) == 0, "attr unchanged");
	/* No error buffer, or a tiny one, is fine. */
	HT_CHECK_EQ(pmu_event_parse("bogus", &attr, NULL, 0), PMU_E_INVAL);
	char one[1] = { 'x' };
	HT_CHECK_EQ(pmu_event_parse("bogus", &attr, one, 1), PMU_E_INVAL);
	HT_CHECK_EQ(one[0], 0);
	char small[8];
	HT_CHECK_EQ(pmu_event_parse("bogus", &attr, small, sizeof(small)), PMU_E_INVAL);
	HT_CHECK_STR(small, "unknown");
	HT_CHECK_EQ(pmu_event_parse(NULL, &attr, err, sizeof(err)), PMU_E_INVAL);
}

HT_TEST(format_parses_back)
{
	static const char *const in[] = {
		"instructions",
		"cycles:u",
		"r018401a3:k",
		"cpu/event=0xc0,any,int,period=100000/",
		"cpu/event=0xb7,umask=0x01,offcore_rsp=0x3fffc00001/",
		"cpu/event=0x2e,umask=0x41,cmask=255,inv/",
	};
	char buf[256];
	for (unsigned i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		struct pmu_event_attr a;
		HT_CHECK_EQ(parse(in[i]), PMU_OK);
		a = attr;
		int n = pmu_attr_format(&a, buf, sizeof(buf));
		HT_CHECK(n > 0 && (size_t)n < sizeof(buf), "%s: formatted length %d", in[i], n);
		HT_CHECK_EQ(parse(buf), PMU_OK);
		HT_CHECK(attr_eq(&attr, &a), "%s -> %s does not parse back the same", in[i], buf);
	}
	struct pmu_event_attr a;
	pmu_attr_arch(&a, PMU_ARCH_LLC_MISSES);
	a.cmask = 2;
	pmu_attr_format(&a, buf, sizeof(buf));
	HT_CHECK_STR(buf, "cpu/event=0x2e,umask=0x41,cmask=2,usr,os/");
}

static uint64_t rng = 0x243f6a8885a308d3ull;
static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

HT_TEST(fuzz)
{
	static const char *const pieces[] = {
		"cpu/",
		"/",
		",",
		"=",
		":",
		"event",
		"umask",
		"cmask",
		"usr",
		"os",
		"inv",
		"edge",
		"any",
		"int",
		"period",
		"offcore_rsp",
		"0x",
		"0",
		"1",
		"ff",
		"c0",
		"3c",
		"99999999999999999999",
		"r",
		"u",
		"k",
		"cycles",
		"instructions",
		"ref-cycles",
		"branches",
		"topdown-slots",
		"-",
		" ",
		"\x01",
		"\xff",
	};
	char s[128];
	unsigned ok = 0, bad = 0, broken = 0;
	for (int iter = 0; iter < 200000; iter++) {
		size_t len = 0;
		unsigned n = 1 + rnd(10);
		for (unsigned p = 0; p < n; p++) {
			const char *pc = pieces[rnd(sizeof(pieces) / sizeof(pieces[0]))];
			size_t l = strlen(pc);
			if (len + l >= sizeof(s))
				break;
			memcpy(s + len, pc, l);
			len += l;
		}
		/* Sometimes flip one byte, sometimes cut the string short. */
		if (len && rnd(4) == 0)
			s[rnd((unsigned)len)] = (char)(rnd(256) ? rnd(256) : 1);
		if (len && rnd(4) == 0)
			len = rnd((unsigned)len) + 1;
		s[len] = '\0';

		struct pmu_event_attr a;
		memset(&a, 0x77, sizeof(a));
		err[0] = 'X';
		int rc = pmu_event_parse(s, &a, err, sizeof(err));
		if (rc == PMU_OK) {
			char buf[256];
			struct pmu_event_attr b;
			ok++;
			pmu_attr_format(&a, buf, sizeof(buf));
			if (pmu_event_parse(buf, &b, err, sizeof(err)) != PMU_OK || !attr_eq(&a, &b)) {
				if (broken++ < 3)
					HT_CHECK(0, "'%s' parsed but its format '%s' does not parse back", s,
						 buf);
			}
		} else {
			bad++;
			if (rc != PMU_E_INVAL || strlen(err) == 0 || strlen(err) >= sizeof(err)) {
				if (broken++ < 3)
					HT_CHECK(0, "'%s': rc %d, error '%s'", s, rc, err);
			}
		}
	}
	HT_CHECK(broken == 0, "%u broken results (%u ok, %u rejected)", broken, ok, bad);
	HT_CHECK(ok > 100 && bad > 100, "fuzz reached both outcomes: %u ok, %u rejected", ok, bad);
}

HT_MAIN("pmu_parse")
