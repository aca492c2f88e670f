/* Host tests of the emulated uncore's C-box lookups (emu/model/
 * x86-pmu-uncore.c): UNC_CBO_CACHE_LOOKUP counts a lookup under the
 * unit-mask bit of the state it found (Intel perfmon skylake_uncore.json:
 * .ANY_M 81H, .ANY_ES 86H, .ANY_I 88H, .ANY_MESI 8FH); a Skylake-SP CHA
 * counts every request, whatever the LLC held. */
#include "emu/model/x86-pmu-uncore.h"
#include "tests/host/hosttest.h"

static X86PMUUncoreState u;

static void pkg(uint32_t model)
{
	X86PMUUncoreConfig c;

	x86pmu_uncore_shape(6, model, 1, &c);
	x86pmu_uncore_reset(&u, &c);
}

static uint64_t ctr(uint32_t msr)
{
	uint64_t v = 0;

	HT_CHECK_EQ(x86pmu_uncore_rdmsr(&u, msr, &v), X86PMU_OK);
	return v;
}

/* One lookup of each state into C-box 0, whose counter 0 has `umask`. */
static uint64_t client_counts(unsigned umask)
{
	X86PMUUncoreState *p[1] = { &u };

	pkg(0x5e); /* Skylake client: global E01H, C-box 0 at 700H */
	HT_CHECK_EQ(x86pmu_uncore_wrmsr(&u, 0x700, 0x34 | umask << 8 | 1u << 22), X86PMU_OK);
	HT_CHECK_EQ(x86pmu_uncore_wrmsr(&u, 0xe01, 1u << 29), X86PMU_OK);
	x86pmu_uncore_count(p, 1, 0, X86PMU_UNC_LLC_HIT_M, 0, 1);
	x86pmu_uncore_count(p, 1, 0, X86PMU_UNC_LLC_HIT, 0, 10);
	x86pmu_uncore_count(p, 1, 0, X86PMU_UNC_LLC_MISS, 0, 100);
	return ctr(0x706);
}

HT_TEST(cbo_lookup_counts_under_the_state_found)
{
	HT_CHECK_EQ(client_counts(0x81), 1);   /* ANY_M */
	HT_CHECK_EQ(client_counts(0x86), 10);  /* ANY_ES */
	HT_CHECK_EQ(client_counts(0x82), 10);  /* E alone: the model's E|S */
	HT_CHECK_EQ(client_counts(0x88), 100); /* ANY_I */
	HT_CHECK_EQ(client_counts(0x8f), 111); /* ANY_MESI */
	HT_CHECK_EQ(client_counts(0x80), 0);   /* no state bit */
}

HT_TEST(cha_counts_every_request)
{
	X86PMUUncoreState *p[1] = { &u };

	pkg(0x55); /* Skylake-SP: CHA 0 at E00H, counter 0 at E08H */
	HT_CHECK_EQ(x86pmu_uncore_wrmsr(&u, 0xe01, 0x50 | 0x01 << 8 | 1u << 22), X86PMU_OK);
	x86pmu_uncore_count(p, 1, 0, X86PMU_UNC_LLC_HIT_M, 0, 1);
	x86pmu_uncore_count(p, 1, 0, X86PMU_UNC_LLC_HIT, 0, 10);
	x86pmu_uncore_count(p, 1, 0, X86PMU_UNC_LLC_MISS, 0, 100);
	HT_CHECK_EQ(ctr(0xe08), 111);
}

HT_MAIN("emu_uncore")
