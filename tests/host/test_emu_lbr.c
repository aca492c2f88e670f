/* Host tests of the emulated LBRs' ring filters (emu/model/x86-pmu-lbr.c):
 * a branch that changes the privilege level is filtered by the level it
 * ends in, on each kind of LBR. An interrupt out of ring 3 is no user-mode
 * record; the IRET back to ring 3 is one (SDM vol. 3B, "Filtering of Last
 * Branch Records" and "Architectural Last Branch Records"; Linux's
 * branch_type() relies on it to keep or drop the records it reads). */
#include "emu/model/x86-pmu-int.h"
#include "tests/host/emu_cpu.h"
#include "tests/host/hosttest.h"

static X86PMUState st;

#define USER_JNZ 0x4000aaull
#define USER_LOOP 0x400087ull
#define KERNEL_ENTRY 0xffffffff81a00a00ull /* an interrupt's handler */
#define KERNEL_JMP 0xffffffff81a00a10ull
#define KERNEL_IRET 0xffffffff81a01220ull

/* The model st's registers, which must not fault (tests/host/emu_cpu.h). */
#define wr(msr, v) emu_state_wrv(&st, (msr), (v))
#define rd(msr) emu_state_rdv(&st, (msr))

/* A loop iteration in ring 3, an interrupt taken there, a jump in the
 * handler, the IRET back, one more iteration: what each filter keeps,
 * newest first, through x86pmu_lbr_entry (the model's own reading). */
static unsigned run(uint64_t *from, uint64_t *to, unsigned max)
{
	unsigned n = 0;

	x86pmu_branch(&st, X86PMU_BR_JCC, USER_JNZ, USER_LOOP, 3, 3);
	x86pmu_branch(&st, X86PMU_BR_FAR, USER_LOOP + 4, KERNEL_ENTRY, 3, 0);
	x86pmu_branch(&st, X86PMU_BR_NEAR_REL_JMP, KERNEL_JMP, KERNEL_IRET, 0, 0);
	x86pmu_branch(&st, X86PMU_BR_FAR, KERNEL_IRET, USER_LOOP + 4, 0, 3);
	x86pmu_branch(&st, X86PMU_BR_JCC, USER_JNZ, USER_LOOP, 3, 3);
	for (unsigned k = 0; k < max; k++) {
		uint64_t info;

		x86pmu_lbr_entry(&st, k, &from[k], &to[k], &info);
		if (!from[k] && !to[k])
			break;
		n++;
	}
	return n;
}

static void intel(const char *model, uint32_t fam_model)
{
	X86PMUConfig c;

	HT_CHECK(x86pmu_shape(model, X86PMU_VENDOR_INTEL, 6, fam_model, &c) != NULL, "no shape %s", model);
	x86pmu_reset(&st, &c);
}

static void expect(const char *what, unsigned n, const uint64_t *from, const uint64_t *to, unsigned want_n,
		   const uint64_t *want_from, const uint64_t *want_to)
{
	HT_CHECK(n == want_n, "%s: %u records, expected %u", what, n, want_n);
	for (unsigned k = 0; k < n && k < want_n; k++)
		HT_CHECK(from[k] == want_from[k] && to[k] == want_to[k],
			 "%s: record %u %#llx -> %#llx, expected %#llx -> %#llx", what, k,
			 (unsigned long long)from[k], (unsigned long long)to[k],
			 (unsigned long long)want_from[k], (unsigned long long)want_to[k]);
}

/* User-only and kernel-only stacks of the same path. */
static const uint64_t user_from[] = { USER_JNZ, KERNEL_IRET, USER_JNZ };
static const uint64_t user_to[] = { USER_LOOP, USER_LOOP + 4, USER_LOOP };
static const uint64_t kernel_from[] = { KERNEL_JMP, USER_LOOP + 4 };
static const uint64_t kernel_to[] = { KERNEL_IRET, KERNEL_ENTRY };

HT_TEST(legacy_lbr_select_filters_by_the_ring_a_branch_ends_in)
{
	uint64_t from[8], to[8];

	/* Skylake: LBR format 5, 32 entries; DEBUGCTL.LBR on. */
	intel("Skylake-Client", 0x5e);
	wr(0x1d9, 1);
	wr(0x1c8, 1); /* CPL_EQ_0: no branch ending in ring 0 (Linux's user-only filter) */
	expect("CPL_EQ_0", run(from, to, 8), from, to, 3, user_from, user_to);
	HT_CHECK_EQ(rd(0x680 + rd(0x1c9)), USER_JNZ);
	HT_CHECK_EQ(rd(0x680 + (rd(0x1c9) + 31) % 32), KERNEL_IRET); /* FROM: the IRET's own address */

	intel("Skylake-Client", 0x5e);
	wr(0x1d9, 1);
	wr(0x1c8, 2); /* CPL_NEQ_0: no branch ending in ring > 0 */
	expect("CPL_NEQ_0", run(from, to, 8), from, to, 2, kernel_from, kernel_to);
}

HT_TEST(architectural_lbr_ctl_records_by_the_cpl_at_the_end)
{
	static const uint64_t hidden[] = { USER_JNZ, ~0ull, USER_JNZ };
	static const uint64_t os_from[] = { KERNEL_JMP, ~0ull };
	static const uint64_t all_from[] = { USER_JNZ, KERNEL_IRET, KERNEL_JMP, USER_LOOP + 4, USER_JNZ };
	static const uint64_t all_to[] = { USER_LOOP, USER_LOOP + 4, KERNEL_IRET, KERNEL_ENTRY, USER_LOOP };
	uint64_t from[8], to[8];
	X86PMUConfig c;

	HT_CHECK(x86pmu_shape_named("lunarlake-p", &c) != NULL, "no lunarlake-p");
	x86pmu_reset(&st, &c);
	/* USR and every branch kind: the IRET into ring 3 is recorded with
	 * FROM_IP 0FFFFFFFFFFFFFFFFH, ring 0 being filtered out. */
	wr(0x14ce, 1 | 4 | 0x7full << 16);
	expect("USR", run(from, to, 8), from, to, 3, hidden, user_to);
	HT_CHECK_EQ(rd(0x1500 + 1), ~0ull);

	x86pmu_reset(&st, &c);
	wr(0x14ce, 1 | 2 | 0x7full << 16);
	expect("OS", run(from, to, 8), from, to, 2, os_from, kernel_to); /* the interrupt's FROM hidden too */

	x86pmu_reset(&st, &c);
	wr(0x14ce, 1 | 2 | 4 | 0x7full << 16);
	expect("OS and USR", run(from, to, 8), from, to, 5, all_from, all_to);
}

HT_TEST(amd_lbr_select_filters_by_the_ring_a_branch_ends_in)
{
	uint64_t from[8], to[8];
	X86PMUConfig c;

	HT_CHECK(x86pmu_shape(NULL, X86PMU_VENDOR_AMD, 0x19, 0x11, &c) != NULL, "Zen 4 shape");
	x86pmu_reset(&st, &c);
	wr(0xc000010f, 1 << 6); /* DBG_EXTN_CFG.LBRV2EN */
	wr(0xc000010e, 1);      /* LBR_SELECT bit 0: no branch ending in CPL 0 */
	expect("AMD CPL 0 suppressed", run(from, to, 8), from, to, 3, user_from, user_to);
}

HT_MAIN("emu_lbr")
