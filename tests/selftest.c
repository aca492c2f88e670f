/* The framework proving itself: each of these is meant to be reported as
 * written in tests/expect/selftest.expect. Run only with tests=selftest.*,
 * never by default. */
#include "arch/x86/cpu.h"
#include "arch/x86/smp.h"
#include "tests/ktest.h"

KTEST("selftest", pass_check, NULL, KTEST_SELFTEST, "a passing check is ok")
{
	check(1 + 1 == 2, "arithmetic");
}

KTEST("selftest", check_fails, NULL, KTEST_SELFTEST,
      "a failing check is not ok; a later passing one does not hide it")
{
	int seen = 3;
	check(seen == 4, "expected 4 widgets, saw %d", seen);
	check(true, "a later passing check does not hide the failure");
}

KTEST("selftest", no_check, NULL, KTEST_SELFTEST, "a test that runs no check is not ok")
{
	/* Runs no check and does not skip: must be reported not ok. */
}

static const char *needs_impossible(void)
{
	return ktest_reason("needs %d CPUs (selftest of the SKIP path)", 100000);
}

KTEST("selftest", skip_from_needs, needs_impossible, KTEST_SELFTEST,
      "needs() returning a reason is a SKIP with it")
{
	check(false, "must not run: needs() said skip");
}

KTEST("selftest", skip_from_body, NULL, KTEST_SELFTEST, "ktest_skip() in the body is a SKIP with its reason")
{
	ktest_skip("the body decided to skip");
}

KTEST("selftest", gp, NULL, KTEST_SELFTEST, "#GP in a test is not ok with a register dump")
{
	check(true, "about to raise #GP");
	(void)*(volatile uint64_t *)0x8000000000000000ull; /* non-canonical */
	check(false, "must not get here after #GP");
}

KTEST("selftest", pf, NULL, KTEST_SELFTEST, "#PF in a test is not ok with a register dump")
{
	check(true, "about to raise #PF");
	(void)*(volatile uint64_t *)0x0000700000000000ull; /* unmapped */
}

KTEST("selftest", ud, NULL, KTEST_SELFTEST, "#UD in a test is not ok with a register dump")
{
	check(true, "about to raise #UD");
	__asm__ volatile("ud2");
}

KTEST("selftest", de, NULL, KTEST_SELFTEST, "#DE in a test is not ok with a register dump")
{
	check(true, "about to raise #DE");
	__asm__ volatile("xorl %%ecx, %%ecx\n\tmovl $1, %%eax\n\txorl %%edx, %%edx\n\tdivl %%ecx" ::
				 : "eax", "ecx", "edx");
}

KTEST_BUDGET("selftest", hang, NULL, KTEST_SELFTEST, 300, "a test past its budget is a TIMEOUT")
{
	check(true, "about to spin past the 300 ms budget");
	for (;;)
		cpu_relax();
}

KTEST("selftest", after_the_faults, NULL, KTEST_SELFTEST, "the suite goes on after the aborts, interrupts on")
{
	/* The suite goes on after every forced failure above. */
	check(read_rflags() & BIT(RFLAGS_IF_BIT), "interrupts are back on after the aborts");
}

static const char *needs_an_ap(void)
{
	return smp_num_cpus() < 2 ? ktest_reason("needs an AP, %u CPU online", smp_num_cpus()) : NULL;
}

/* Runs on every CPU: on each AP the #UD must be charged to this test on
 * that CPU's block, like on the BSP. */
KTEST("selftest.smp", exception_on_each_cpu, needs_an_ap, KTEST_SELFTEST | KTEST_PER_CPU,
      "#UD on every CPU is charged to that CPU's block")
{
	check(true, "about to raise #UD on cpu %u", this_cpu()->cpu);
	__asm__ volatile("ud2");
}

/* On an AP with interrupts off its own watchdog cannot fire: the BSP must
 * give up on that CPU after the grace period and go on. Last, because the
 * CPU stays lost. */
static void spin_with_irqs_off(void *arg)
{
	irq_disable();
	for (;;)
		cpu_relax();
}

KTEST_BUDGET("selftest.zz_lost_cpu", ap_hang_irqs_off, needs_an_ap, KTEST_SELFTEST, 300,
	     "an AP hung with interrupts off is given up on")
{
	unsigned last = smp_num_cpus() - 1;
	check(true, "cpu %u is about to hang with interrupts off", last);
	on_cpu_async(last, spin_with_irqs_off, NULL);
	/* The BSP itself now waits: its own watchdog ends this test. */
	for (;;)
		cpu_relax();
}
