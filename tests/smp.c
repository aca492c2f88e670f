/* SMP checks: every enabled CPU came up, cross-CPU calls reach the right
 * CPU from any CPU, and each CPU's private state is its own. */
#include "arch/x86/smp.h"
#include "arch/x86/cpu.h"
#include "arch/x86/lapic.h"
#include "arch/x86/msr.h"
#include "arch/x86/timer.h"
#include "tests/ktest.h"

static const char *const ap_state_names[] = {
	[AP_NOT_TRIED] = "not tried",
	[AP_ONLINE] = "online",
	[AP_TIMED_OUT] = "did not start within its timeout",
	[AP_OVER_LIMIT] = "not started: over the cpus= / MAX_CPUS limit",
	[AP_NOT_FROM_AN_AP] = "not started: this kernel runs on an application processor",
};

KTEST("smp", ap_online, NULL, 0, "every enabled MADT (or MP table) CPU (up to cpus=) is online")
{
	const struct smp_summary *s = smp_summary();
	if (!s->from_madt && !s->from_mptable)
		ktest_skip("no CPU list: %s", s->why_bsp_only ? s->why_bsp_only : "unknown");
	if (s->started_on_ap)
		ktest_skip("%s", s->why_bsp_only);
	unsigned expected = s->madt_enabled < s->limit ? s->madt_enabled : s->limit;
	diag("CPUs from %s: %u enabled, %u entries skipped (disabled or online-capable only); limit %u",
	     s->cpu_source, s->madt_enabled, s->madt_skipped, s->limit);
	diag("AP bring-up took %lu us of guest time (TSC), first INIT to last check-in",
	     tsc_to_us(s->bringup_tsc));
	uint64_t slowest = 0;
	unsigned slowest_id = 0;
	for (unsigned i = 0; i < s->nreports; i++) {
		const struct smp_cpu_report *r = &s->reports[i];
		if (r->state == AP_ONLINE && r->online_tsc - s->init_tsc > slowest) {
			slowest = r->online_tsc - s->init_tsc;
			slowest_id = r->apic_id;
		}
	}
	/* Start latency: silicon takes milliseconds; seconds mean a vCPU
	 * thread the host did not run (an overcommitted host), not a dead AP. */
	if (slowest)
		diag("slowest AP start: APIC ID %u checked in %lu ms after the INIT (waited up to %lu ms)",
		     slowest_id, tsc_to_us(slowest) / 1000, s->wait_us / 1000);
	for (unsigned i = 0; i < s->nreports; i++) {
		const struct smp_cpu_report *r = &s->reports[i];
		if (r->state == AP_TIMED_OUT)
			check(false, "AP with APIC ID %u %s (%lu ms of guest time after its INIT)",
			      r->apic_id, ap_state_names[r->state], s->wait_us / 1000);
		else if (r->state != AP_ONLINE)
			diag("AP with APIC ID %u: %s", r->apic_id, ap_state_names[r->state]);
	}
	check(smp_num_cpus() == expected, "expected %u CPUs online, saw %u", expected, smp_num_cpus());
}

struct whoami {
	unsigned cpu;
	uint32_t apic_id, lapic_id;
	uint64_t gs_self;
};

static void who_am_i(void *arg)
{
	struct whoami *w = arg;
	w->cpu = this_cpu()->cpu;
	w->apic_id = this_cpu()->apic_id;
	w->lapic_id = lapic_id();
	w->gs_self = (uint64_t)this_cpu()->self;
}

KTEST("smp", on_cpu_reaches_target, NULL, 0, "on_cpu(n) runs on CPU n: CPU number, APIC ID, GS base")
{
	for (unsigned c = 0; c < smp_num_cpus(); c++) {
		struct whoami w = { .cpu = ~0u };
		on_cpu(c, who_am_i, &w);
		check(w.cpu == c, "on_cpu(%u): ran on cpu %u", c, w.cpu);
		check(w.apic_id == w.lapic_id && w.apic_id == smp_cpu(c)->apic_id,
		      "cpu %u: expected APIC ID %u, percpu says %u, LAPIC says %u", c, smp_cpu(c)->apic_id,
		      w.apic_id, w.lapic_id);
		check(w.gs_self == (uint64_t)smp_cpu(c), "cpu %u: GS base points to %#lx, expected %p", c,
		      w.gs_self, (void *)smp_cpu(c));
	}
}

static void count_me(void *arg)
{
	__atomic_fetch_add((uint32_t *)arg + this_cpu()->cpu, 1, __ATOMIC_RELAXED);
}

KTEST("smp", on_each_cpu_once_each, NULL, 0, "on_each_cpu runs exactly once on every CPU")
{
	static uint32_t hits[MAX_CPUS];
	for (unsigned c = 0; c < MAX_CPUS; c++)
		hits[c] = 0;
	on_each_cpu(count_me, hits);
	for (unsigned c = 0; c < smp_num_cpus(); c++)
		check(hits[c] == 1, "cpu %u ran the call %u times, expected once", c, hits[c]);
}

struct chain {
	unsigned target;
	struct whoami w;
};

static void call_onwards(void *arg)
{
	struct chain *ch = arg;
	on_cpu(ch->target, who_am_i, &ch->w);
}

KTEST("smp", on_cpu_from_an_ap, NULL, 0, "an AP's on_cpu reaches the waiting BSP and another AP")
{
	unsigned n = smp_num_cpus();
	if (n < 2)
		ktest_skip("needs 2 CPUs, %u online", n);
	/* The last AP calls the BSP (which is itself waiting in on_cpu and must
	 * serve the call) and, with 3+ CPUs, another AP. */
	unsigned last = n - 1;
	struct chain ch = { .target = 0, .w.cpu = ~0u };
	on_cpu(last, call_onwards, &ch);
	check(ch.w.cpu == 0, "cpu %u -> cpu 0: ran on cpu %u", last, ch.w.cpu);
	if (n >= 3) {
		ch = (struct chain){ .target = 1, .w.cpu = ~0u };
		on_cpu(last, call_onwards, &ch);
		check(ch.w.cpu == 1, "cpu %u -> cpu 1: ran on cpu %u", last, ch.w.cpu);
	}
}

static void stamp(void *arg)
{
	*(uint64_t *)arg = rdtsc();
}

KTEST("smp", ipi_round_trip, NULL, 0, "9 cross-CPU calls complete; prints the median round trip")
{
	unsigned n = smp_num_cpus();
	if (n < 2)
		ktest_skip("needs 2 CPUs, %u online", n);
	/* Figures for the log, not a timed assertion: the median of 9 calls. */
	uint64_t t[9];
	for (int i = 0; i < 9; i++) {
		uint64_t remote, t0 = rdtsc();
		on_cpu(n - 1, stamp, &remote);
		t[i] = rdtsc() - t0;
		check(remote != 0, "call %d did not run", i);
	}
	for (int i = 1; i < 9; i++)
		for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
			uint64_t x = t[j];
			t[j] = t[j - 1];
			t[j - 1] = x;
		}
	diag("on_cpu round trip to cpu %u: median %lu ns (min %lu, max %lu)", n - 1, tsc_to_us(t[4] * 1000),
	     tsc_to_us(t[0] * 1000), tsc_to_us(t[8] * 1000));
}

KTEST("smp", cpu_state, NULL, KTEST_PER_CPU, "GS self pointer, LAPIC ID, IF set, CR4.PCE clear, APIC mode")
{
	struct percpu *pc = this_cpu();
	check(pc->self == pc, "GS:0 self pointer %p, expected %p", (void *)pc->self, (void *)pc);
	check(lapic_id() == pc->apic_id, "LAPIC ID %u, percpu APIC ID %u", lapic_id(), pc->apic_id);
	check(read_rflags() & BIT(RFLAGS_IF_BIT), "expected interrupts enabled in a test body");
	check((read_cr4() & BIT(CR4_PCE_BIT)) == 0, "expected CR4.PCE clear by default, CR4 = %#lx",
	      read_cr4());
	check(lapic_x2apic_mode() == ((rdmsr(MSR_IA32_APIC_BASE) >> APIC_BASE_X2APIC_ENABLE_BIT) & 1),
	      "APIC mode differs from the BSP's choice (IA32_APIC_BASE %#lx)", rdmsr(MSR_IA32_APIC_BASE));
}

static void note_cpu(void *arg)
{
	*(unsigned *)arg = this_cpu()->cpu;
}

/* A CPU calling itself, also from inside a call it serves (every AP runs
 * its tests as one): the call runs at once instead of waiting for a slot
 * that the caller itself keeps busy. */
KTEST("smp", on_cpu_to_self, NULL, KTEST_PER_CPU,
      "on_cpu to the calling CPU runs at once, from a served call too")
{
	unsigned me = this_cpu()->cpu, seen = ~0u;
	on_cpu(me, note_cpu, &seen);
	check(seen == me, "on_cpu(%u) from cpu %u ran on cpu %u", me, me, seen);
	seen = ~0u;
	on_cpu_wait(me, on_cpu_async(me, note_cpu, &seen), 1000000);
	check(seen == me, "on_cpu_async(%u) + wait from cpu %u ran on cpu %u", me, me, seen);
}
