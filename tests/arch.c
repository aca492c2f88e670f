/* Exception recovery and interrupt delivery: the machinery every other
 * test relies on to report a fault instead of dying. */
#include "arch/x86/cpu.h"
#include "arch/x86/hypervisor.h"
#include "arch/x86/lapic.h"
#include "arch/x86/msr.h"
#include "arch/x86/smp.h"
#include "arch/x86/timer.h"
#include "arch/x86/traps.h"
#include "arch/x86/usermode.h"
#include "tests/ktest.h"

/* Far above anything paging_extend() maps (it stops at 512 GiB). */
#define UNMAPPED_ADDR 0x0000700000000000ull
#define NONCANONICAL_ADDR 0x8000000000000000ull

static void do_ud(void *arg)
{
	__asm__ volatile("ud2");
}
static void do_gp(void *arg)
{
	(void)*(volatile uint64_t *)NONCANONICAL_ADDR;
}
static void do_pf(void *arg)
{
	(void)*(volatile uint64_t *)UNMAPPED_ADDR;
}
static void do_de(void *arg)
{
	/* In asm: the compiler turns 1/x into x == 1 and never divides. */
	uint32_t zero = 0;
	__asm__ volatile("movl $1, %%eax\n\txorl %%edx, %%edx\n\tdivl %0" : : "r"(zero) : "eax", "edx");
}
static void do_nothing(void *arg)
{
}

KTEST("arch", expect_exception, NULL, KTEST_PER_CPU,
      "#UD, #GP, #PF (with CR2) and #DE come back with their vectors")
{
	int v;
	v = expect_exception(do_ud, NULL);
	check(v == X86_VEC_UD, "ud2: expected vector 6 (#UD), saw %d", v);
	v = expect_exception(do_gp, NULL);
	check(v == X86_VEC_GP, "non-canonical load: expected vector 13 (#GP), saw %d", v);
	v = expect_exception(do_pf, NULL);
	check(v == X86_VEC_PF, "load from unmapped %#llx: expected vector 14 (#PF), saw %d", UNMAPPED_ADDR,
	      v);
	check(read_cr2() == UNMAPPED_ADDR, "expected CR2 = %#llx after the #PF, saw %#lx", UNMAPPED_ADDR,
	      read_cr2());
	v = expect_exception(do_de, NULL);
	check(v == X86_VEC_DE, "divide by zero: expected vector 0 (#DE), saw %d", v);
	v = expect_exception(do_nothing, NULL);
	check(v == -1, "no fault: expected -1, saw %d", v);
}

KTEST("arch", msr_safe, NULL, KTEST_PER_CPU, "rdmsr_safe reads IA32_APIC_BASE; RDPMC of a bad index faults")
{
	uint64_t val;
	int v = rdmsr_safe(MSR_IA32_APIC_BASE, &val);
	check(v == 0, "rdmsr IA32_APIC_BASE: expected no fault, saw vector %d", v);
	check(val & BIT(APIC_BASE_XAPIC_ENABLE_BIT),
	      "expected IA32_APIC_BASE[11] (APIC enabled) set, read %#lx", val);
	/* RDPMC with an index no PMU has: #GP on hardware and KVM; TCG, which
	 * has no PMU at all, raises #UD for every RDPMC. */
	v = rdpmc_safe(0x3fffffff, &val);
	check(v == X86_VEC_GP || v == X86_VEC_UD, "rdpmc 0x3fffffff: expected #GP or #UD, saw %d", v);
}

static const char *needs_msr_faults(void)
{
	/* QEMU 7.2's TCG reads unknown MSRs as 0 and ignores writes, also
	 * when it presents another hypervisor's signature first. */
	return hypervisor_is(HV_TCG) ? "TCG raises no #GP for invalid MSR accesses" : NULL;
}

KTEST("arch", msr_safe_fault, needs_msr_faults, KTEST_PER_CPU,
      "x2APIC MSRs in the wrong mode #GP; a faulting read gives 0")
{
	uint64_t val = 1;
	int v;
	/* x2APIC MSRs: reading one in xAPIC mode, or writing the read-only
	 * version register in x2APIC mode, raises #GP (SDM vol. 3A, 11.12.1.2). */
	uint32_t version_msr = MSR_X2APIC_BASE + (LAPIC_VERSION >> 4);
	if (lapic_x2apic_mode()) {
		v = wrmsr_safe(version_msr, 0);
		check(v == X86_VEC_GP, "wrmsr x2APIC version register %#x: expected #GP (13), saw %d",
		      version_msr, v);
	} else {
		v = rdmsr_safe(version_msr, &val);
		check(v == X86_VEC_GP, "rdmsr %#x in xAPIC mode: expected #GP (13), saw %d", version_msr, v);
		check(val == 0, "a faulting rdmsr_safe must return 0, saw %#lx", val);
	}
}

static volatile uint64_t self_ipi_seen[MAX_CPUS];
#define VEC_SELFTEST_IPI 0xe0

static void self_ipi_handler(struct trap_frame *f)
{
	self_ipi_seen[this_cpu()->cpu]++;
	lapic_eoi();
}

KTEST("arch", self_ipi, NULL, KTEST_PER_CPU, "a fixed IPI to itself arrives exactly once")
{
	unsigned cpu = this_cpu()->cpu;
	irq_set_handler(VEC_SELFTEST_IPI, self_ipi_handler);
	uint64_t before = self_ipi_seen[cpu];
	lapic_send_ipi(this_cpu()->apic_id, APIC_DM_FIXED | VEC_SELFTEST_IPI);
	uint64_t end = rdtsc() + us_to_tsc(100000);
	while (self_ipi_seen[cpu] == before && rdtsc() < end)
		cpu_relax();
	check(self_ipi_seen[cpu] == before + 1,
	      "expected one fixed IPI to self (vector %#x) within 100 ms, saw %lu", VEC_SELFTEST_IPI,
	      self_ipi_seen[cpu] - before);
}

static void user_add(void *arg)
{
	(*(volatile uint64_t *)arg) += 1;
}
static void user_ud(void *arg)
{
	__asm__ volatile("ud2");
}
static void user_cli(void *arg)
{
	__asm__ volatile("cli");
}

KTEST("arch", usermode, NULL, KTEST_PER_CPU, "a ring-3 payload runs and returns; its #UD and #GP come back")
{
	volatile uint64_t x = 41;
	int v = usermode_call(user_add, (void *)&x);
	check(v == -1 && x == 42, "ring-3 payload: expected return -1 and x = 42, saw %d and %lu", v, x);
	v = usermode_call(user_ud, NULL);
	check(v == X86_VEC_UD, "ud2 in ring 3: expected #UD (6), saw %d", v);
	/* CLI at CPL 3 with IOPL 0 is privileged (SDM vol. 2A, CLI). */
	v = usermode_call(user_cli, NULL);
	check(v == X86_VEC_GP, "cli in ring 3: expected #GP (13), saw %d", v);
	check(read_rflags() & BIT(RFLAGS_IF_BIT), "expected interrupts back on after ring 3");
}
