/* tests=list: every registered test with what it asserts, one KTAP
 * diagnostic line each ("# test: <suite.name>: <description>"), printed
 * live inside the block of the one test that checks them. */
#include "arch/x86/pc/console.h"
#include "lib/string.h"
#include "tests/ktest.h"
#include "tests/ktest_internal.h"

#define LIST_MAX 512

static bool printable_ascii(const char *s)
{
	for (; *s; s++)
		if (*s < ' ' || *s > '~')
			return false;
	return true;
}

KTEST("list", tests, NULL, KTEST_EXPLICIT, "prints every test with its one-line description")
{
	static const struct ktest *all[LIST_MAX];
	unsigned n = ktest_registered(all, LIST_MAX);

	check(n < LIST_MAX, "more than %u tests: raise LIST_MAX", LIST_MAX - 1);
	for (unsigned i = 0; i < n; i++) {
		const struct ktest *t = all[i];
		size_t len = t->desc ? strlen(t->desc) : 0;
		/* Two spaces of indent put the lines inside the suite's block. */
		console_printf("  # test: %s.%s: %s\n", t->suite, t->name, t->desc ? t->desc : "");
		check(len > 0 && len <= KTEST_DESC_MAX && printable_ascii(t->desc),
		      "%s.%s: expected a description of 1..%u printable ASCII characters, saw %zu", t->suite,
		      t->name, KTEST_DESC_MAX, len);
	}
	diag("%u tests", n);
}
