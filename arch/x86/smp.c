/* Application-processor start-up and cross-CPU calls.
 * CPUs come from the firmware's tables only (never an emulator's private
 * interface), so the same kernel runs on real machines: the ACPI MADT,
 * or on a machine without ACPI the MP table (Intel MultiProcessor
 * Specification 1.4; Firecracker's and SeaBIOS's under -no-acpi). Each enabled AP is
 * woken by INIT-SIPI-SIPI addressed to its own APIC ID — a broadcast would
 * also wake CPUs the firmware disabled — and the sequence is pipelined:
 * every INIT, one 10 ms wait, every SIPI (SDM vol. 3A, 9.4.4.1). */
#include "arch/x86/smp.h"

#include "arch/x86/bootmem.h"
#include "arch/x86/cpu.h"
#include "arch/x86/gdt.h"
#include "arch/x86/lapic.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/pc/console.h"
#include "arch/x86/pc/platform_exit.h"
#include "arch/x86/sections.h"
#include "arch/x86/timer.h"
#include "arch/x86/traps.h"
#include "lib/acpi.h"
#include "lib/mptable.h"
#include "lib/spinlock.h"
#include "lib/string.h"

/* How long the BSP waits for the APs to check in, from the INIT. An AP
 * checks in within milliseconds on silicon, but a vCPU is a host thread:
 * on an overcommitted host (KVM -smp 8 on 2 busy cores) or under TCG it may
 * not run for seconds. The wait ends as soon as every AP is in, so only a
 * dead AP costs it; smp.ap_online reports each AP's start latency. */
#define AP_START_TIMEOUT_US 30000000
/* An AP that checked in runs: its set-up takes microseconds, but a virtual
 * CPU's thread on a loaded host (a nested guest under TCG) may wait seconds
 * for a host CPU. Generous, since only a hung AP reaches it. */
#define AP_SETUP_TIMEOUT_US 30000000

static struct percpu percpus[MAX_CPUS];
static unsigned cpus_online = 1;
static struct smp_summary summary;

uint64_t ap_boot_stacks;
uint32_t ap_stack_slots, ap_next_stack_slot;

struct call_slot {
	struct spinlock lock;
	void (*fn)(void *);
	void *arg;
	uint64_t requested; /* written by callers under lock */
	uint64_t done;      /* written by the target */
	bool busy;          /* the target is inside fn: no re-entry while it waits */
} __attribute__((aligned(64)));
static struct call_slot call_slots[MAX_CPUS];

unsigned smp_num_cpus(void)
{
	return __atomic_load_n(&cpus_online, __ATOMIC_ACQUIRE);
}

unsigned smp_this_cpu(void)
{
	return this_cpu()->cpu;
}

struct percpu *smp_cpu(unsigned cpu)
{
	return cpu < MAX_CPUS ? &percpus[cpu] : NULL;
}

const struct smp_summary *smp_summary(void)
{
	return &summary;
}

static void percpu_bind(struct percpu *pc)
{
	pc->self = pc;
	wrmsr(MSR_GS_BASE, (uint64_t)pc);
}

void smp_early_bsp(void)
{
	percpus[0].cpu = 0;
	percpu_bind(&percpus[0]);
}

static void call_ipi_handler(struct trap_frame *f)
{
	/* The IPI only wakes the target from HLT; calls run in thread context. */
	lapic_eoi();
}

void smp_serve_calls(void)
{
	struct call_slot *s = &call_slots[this_cpu()->cpu];
	/* A call that itself waits on another CPU comes back here through
	 * on_cpu_wait(); the call it is running is not served twice. */
	if (s->busy)
		return;
	while (__atomic_load_n(&s->requested, __ATOMIC_ACQUIRE) != s->done) {
		void (*fn)(void *) = s->fn;
		void *arg = s->arg;
		s->busy = true;
		fn(arg);
		s->busy = false;
		__atomic_store_n(&s->done, s->done + 1, __ATOMIC_RELEASE);
	}
}

bool on_cpu_try_async(unsigned cpu, void (*fn)(void *), void *arg, uint64_t timeout_us, uint64_t *ticket_out)
{
	struct call_slot *s = &call_slots[cpu];
	unsigned self = this_cpu()->cpu;
	uint64_t start = rdtsc(), limit = us_to_tsc(timeout_us);

	/* A call to this CPU runs right here: its own slot may be busy with
	 * the very call that is asking, and would never come free. */
	if (cpu == self) {
		fn(arg);
		*ticket_out = __atomic_load_n(&s->done, __ATOMIC_ACQUIRE);
		return true;
	}
	for (;;) {
		/* One call in flight per target: wait, without holding its
		 * lock, for the previous one to finish, serving our own queue
		 * meanwhile so that two CPUs calling each other cannot
		 * deadlock. */
		while (__atomic_load_n(&s->done, __ATOMIC_ACQUIRE) !=
		       __atomic_load_n(&s->requested, __ATOMIC_ACQUIRE)) {
			smp_serve_calls();
			if (timeout_us && rdtsc() - start > limit)
				return false;
			cpu_relax();
		}
		/* Post under the lock with interrupts off: a watchdog abort
		 * can never leave the lock held. */
		bool irq = irq_save();
		if (spin_trylock(&s->lock, self)) {
			if (__atomic_load_n(&s->done, __ATOMIC_ACQUIRE) == s->requested) {
				s->fn = fn;
				s->arg = arg;
				uint64_t ticket = s->requested + 1;
				__atomic_store_n(&s->requested, ticket, __ATOMIC_RELEASE);
				spin_unlock(&s->lock);
				irq_restore(irq);
				lapic_send_ipi(percpus[cpu].apic_id, APIC_DM_FIXED | VEC_CALL);
				*ticket_out = ticket;
				return true;
			}
			spin_unlock(&s->lock); /* another caller got there first */
		}
		irq_restore(irq);
		if (timeout_us && rdtsc() - start > limit)
			return false;
		cpu_relax();
	}
}

bool smp_serving(void)
{
	return call_slots[this_cpu()->cpu].busy;
}

void smp_calls_abandon_current(void)
{
	struct call_slot *s = &call_slots[this_cpu()->cpu];
	/* A test abort unwound a call this CPU was serving: report it done
	 * (its caller gets what it got) so the slot takes calls again. */
	if (s->busy) {
		s->busy = false;
		__atomic_store_n(&s->done, s->done + 1, __ATOMIC_RELEASE);
	}
}

uint64_t on_cpu_async(unsigned cpu, void (*fn)(void *), void *arg)
{
	uint64_t ticket = 0;
	on_cpu_try_async(cpu, fn, arg, 0, &ticket);
	return ticket;
}

bool on_cpu_wait(unsigned cpu, uint64_t ticket, uint64_t timeout_us)
{
	uint64_t start = rdtsc(), limit = us_to_tsc(timeout_us);
	while (__atomic_load_n(&call_slots[cpu].done, __ATOMIC_ACQUIRE) < ticket) {
		smp_serve_calls();
		if (timeout_us && rdtsc() - start > limit)
			return false;
		cpu_relax();
	}
	return true;
}

void on_cpu(unsigned cpu, void (*fn)(void *), void *arg)
{
	on_cpu_wait(cpu, on_cpu_async(cpu, fn, arg), 0);
}

void on_each_cpu(void (*fn)(void *), void *arg)
{
	unsigned n = smp_num_cpus(), self = this_cpu()->cpu;
	uint64_t tickets[MAX_CPUS];
	for (unsigned c = 0; c < n; c++)
		if (c != self)
			tickets[c] = on_cpu_async(c, fn, arg);
	fn(arg);
	for (unsigned c = 0; c < n; c++)
		if (c != self)
			on_cpu_wait(c, tickets[c], 0);
}

/* Common per-CPU bring-up: memory types, tables, LAPIC. */
static void cpu_setup(struct percpu *pc)
{
	/* PCD|PWT in the boot page tables means UC only with the power-up
	 * PAT; firmware or a previous kernel may have reprogrammed it. */
	if (cpuid(1).edx & BIT(CPUID_1_EDX_PAT_BIT))
		wrmsr(MSR_IA32_PAT, IA32_PAT_RESET_VALUE);
	gdt_init_cpu(pc);
	idt_load();
	lapic_init_cpu();
	pc->apic_id = lapic_id();
}

static _Noreturn void idle_loop(void)
{
	for (;;) {
		irq_disable();
		struct call_slot *s = &call_slots[this_cpu()->cpu];
		if (__atomic_load_n(&s->requested, __ATOMIC_ACQUIRE) != s->done) {
			irq_enable();
			smp_serve_calls();
			continue;
		}
		/* STI's one-instruction shadow makes "sti; hlt" race-free. */
		__asm__ volatile("sti; hlt" ::: "memory");
	}
}

static uint32_t initial_apic_id(void)
{
	/* Before its LAPIC is set up an AP learns its ID from CPUID: leaf
	 * 0BH:EDX is the full x2APIC ID, leaf 01H:EBX[31:24] the 8-bit one. */
	if (cpuid(0).eax >= 0xb) {
		struct cpuid_regs r;
		cpuid_count(0xb, 0, &r);
		if (r.ebx)
			return r.edx;
	}
	return cpuid(1).ebx >> 24;
}

static struct spinlock checkin_lock;
static bool checkin_closed;

void ap_main(void)
{
	uint32_t id = initial_apic_id();
	struct smp_cpu_report *rep = NULL;
	for (unsigned i = 0; i < summary.nreports; i++)
		if (summary.reports[i].apic_id == id)
			rep = &summary.reports[i];

	/* CPU numbers are handed out at check-in, so online CPUs are always
	 * 0..n-1 even when one AP never answers. A latecomer after the BSP
	 * closed the window parks itself. */
	spin_lock(&checkin_lock, MAX_CPUS);
	if (checkin_closed || !rep || cpus_online >= MAX_CPUS) {
		spin_unlock(&checkin_lock);
		/* Parked with an IDT, so a stray NMI is handled rather than
		 * triple-faulting (and resetting) the machine. */
		idt_load();
		cpu_halt_forever();
	}
	struct percpu *pc = &percpus[cpus_online];
	pc->cpu = cpus_online;
	percpu_bind(pc);
	rep->online_tsc = rdtsc();
	rep->state = AP_ONLINE;
	__atomic_store_n(&cpus_online, cpus_online + 1, __ATOMIC_RELEASE);
	spin_unlock(&checkin_lock);

	cpu_setup(pc);
	pc->online = true;
	idle_loop();
}

/* Copy the trampoline to its page below 1 MiB; returns the page, 0 for none. */
static uint64_t install_trampoline(uint64_t page)
{
	if (page)
		memcpy((void *)page, __trampoline_start, (size_t)(__trampoline_end - __trampoline_start));
	return page;
}

static unsigned count_waiting(void)
{
	unsigned n = 0;
	for (unsigned i = 0; i < summary.nreports; i++)
		if (__atomic_load_n(&summary.reports[i].state, __ATOMIC_ACQUIRE) == AP_NOT_TRIED)
			n++;
	return n;
}

static void start_aps(uint64_t trampoline)
{
	uint32_t sipi = APIC_DM_STARTUP | (uint32_t)(trampoline >> 12);
	uint64_t t0 = rdtsc();

	/* A stack for every AP we wake, taken in check-in order by entry.S. */
	unsigned waking = count_waiting();
	ap_boot_stacks = (uint64_t)bootmem_alloc((size_t)waking * AP_BOOT_STACK_SIZE);
	__atomic_store_n(&ap_stack_slots, waking, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < summary.nreports; i++)
		if (summary.reports[i].state == AP_NOT_TRIED)
			lapic_send_ipi(summary.reports[i].apic_id, APIC_DM_INIT | ICR_ASSERT);
	udelay(10000);
	/* Two SIPIs, 200 us apart; an AP already running ignores the second. */
	for (int round = 0; round < 2; round++) {
		for (unsigned i = 0; i < summary.nreports; i++)
			if (__atomic_load_n(&summary.reports[i].state, __ATOMIC_ACQUIRE) == AP_NOT_TRIED)
				lapic_send_ipi(summary.reports[i].apic_id, sipi);
		udelay(200);
	}
	uint64_t limit = us_to_tsc(AP_START_TIMEOUT_US);
	summary.init_tsc = t0;
	summary.wait_us = AP_START_TIMEOUT_US;
	while (count_waiting() && rdtsc() - t0 < limit)
		cpu_relax();

	spin_lock(&checkin_lock, 0);
	checkin_closed = true;
	spin_unlock(&checkin_lock);

	uint64_t last = t0;
	for (unsigned i = 0; i < summary.nreports; i++) {
		struct smp_cpu_report *r = &summary.reports[i];
		if (r->state == AP_NOT_TRIED)
			r->state = AP_TIMED_OUT;
		if (r->state == AP_ONLINE && r->online_tsc > last)
			last = r->online_tsc;
	}
	summary.bringup_tsc = last - t0;
	/* The APs' own CPU-table set-up runs after check-in; wait for it so
	 * that callers see fully set-up CPUs. A CPU that never finishes is a
	 * boot failure worth a clear message, not a silent hang. */
	for (unsigned c = 1; c < smp_num_cpus(); c++) {
		uint64_t t = rdtsc(), lim = us_to_tsc(AP_SETUP_TIMEOUT_US);
		while (!__atomic_load_n(&percpus[c].online, __ATOMIC_ACQUIRE)) {
			if (rdtsc() - t > lim)
				panic("cpu %u (APIC ID %u) checked in but never finished its set-up", c,
				      percpus[c].apic_id);
			cpu_relax();
		}
	}
}

void smp_init_bsp(void)
{
	idt_init();
	irq_set_handler(VEC_CALL, call_ipi_handler);
	cpu_setup(&percpus[0]);
	percpus[0].online = true;
}

/* The MP table lies in the first MiB, inside the boot identity map. */
static const void *mp_phys(uint64_t phys, size_t len)
{
	if (!phys || phys + len > paging_mapped_end() || phys + len < phys)
		return NULL;
	return (const void *)(uintptr_t)phys;
}

/* The MP table's processors as MADT entries: an MP table has no
 * online-capable state, only enabled or not (MP spec 1.4, 4.3.1). */
static int cpus_from_mptable(struct acpi_cpu *cpus, unsigned max)
{
	static struct mp_cpu mp[MAX_CPUS * 2];
	struct mp_info info;
	int n = mptable_cpus(mp_phys, mp, max < MAX_CPUS * 2 ? max : MAX_CPUS * 2, &info);
	for (int i = 0; i < n; i++)
		cpus[i] = (struct acpi_cpu){ .apic_id = mp[i].apic_id, .enabled = mp[i].enabled };
	return n;
}

void smp_start_aps(uint64_t trampoline_page, unsigned max_cpus)
{
	struct percpu *bsp = &percpus[0];
	static struct acpi_cpu cpus[MAX_CPUS * 2];
	struct acpi_madt_info madt;

	summary.limit = max_cpus && max_cpus < MAX_CPUS ? max_cpus : MAX_CPUS;
	int n = acpi_madt_cpus(cpus, MAX_CPUS * 2, &madt);
	if (n >= 0) {
		summary.from_madt = true;
		summary.cpu_source = "the ACPI MADT";
		summary.madt_skipped = madt.ncpus_skipped;
	} else {
		n = cpus_from_mptable(cpus, MAX_CPUS * 2);
		summary.from_mptable = n > 0;
		summary.cpu_source = "the MP table";
	}
	if (n <= 0) {
		summary.cpu_source = "the BSP alone";
		summary.why_bsp_only = "no usable ACPI MADT and no MP table";
		summary.online = 1;
		return;
	}
	unsigned total = 1; /* the BSP */
	for (int i = 0; i < n && i < MAX_CPUS * 2; i++) {
		if (!cpus[i].enabled)
			continue;
		summary.madt_enabled++;
		if (cpus[i].apic_id == bsp->apic_id)
			continue;
		struct smp_cpu_report *r = &summary.reports[summary.nreports++];
		r->apic_id = cpus[i].apic_id;
		r->state = total < summary.limit ? AP_NOT_TRIED : AP_OVER_LIMIT;
		if (r->state == AP_NOT_TRIED)
			total++;
		if (summary.nreports == MAX_CPUS)
			break;
	}
	/* Started on an application processor (IA32_APIC_BASE.BSP = 0, SDM
	 * vol. 3A, "Local APIC Status and Location"): a crash kexec from the
	 * CPU that panicked. An INIT reaching the boot processor restarts it
	 * at the reset vector, which resets the machine (Linux's kdump kernel
	 * is told disable_cpu_apicid= for this, arch/x86/kernel/apic/apic.c),
	 * and no table says for sure which CPU that is: start none. */
	if (cpus_online < total && !(rdmsr(MSR_IA32_APIC_BASE) & BIT(APIC_BASE_BSP_BIT))) {
		summary.started_on_ap = true;
		summary.why_bsp_only =
			"started on an application processor (IA32_APIC_BASE.BSP = 0: a crash kexec?); "
			"an INIT to the boot processor would reset the machine";
		for (unsigned i = 0; i < summary.nreports; i++)
			if (summary.reports[i].state == AP_NOT_TRIED)
				summary.reports[i].state = AP_NOT_FROM_AN_AP;
		total = cpus_online;
	}
	if (cpus_online < total) {
		uint64_t tramp = install_trampoline(trampoline_page);
		if (!tramp) {
			summary.why_bsp_only = "no free page below 640 KiB for the AP trampoline";
			for (unsigned i = 0; i < summary.nreports; i++)
				if (summary.reports[i].state == AP_NOT_TRIED)
					summary.reports[i].state = AP_TIMED_OUT;
		} else {
			start_aps(tramp);
		}
	}
	summary.online = smp_num_cpus();
}
