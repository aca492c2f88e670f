/* TSC calibration: CPUID 15H (crystal ratio) or 16H (base MHz) when they
 * give a number, else the PIT channel 2 one-shot, else the ACPI PM timer;
 * then the LAPIC timer rate measured against the TSC. */
#include "arch/x86/timer.h"

#include <stdbool.h>

#include "arch/x86/cpu.h"
#include "arch/x86/lapic.h"
#include "lib/acpi.h"
#include "lib/muldiv.h"

#define PIT_HZ 1193182u
#define PIT_CH2_DATA 0x42
#define PIT_MODE_CMD 0x43
#define PIT_GATE_PORT 0x61 /* bit 0 gate ch2, bit 1 speaker, bit 5 ch2 output */
#define ACPI_PM_TIMER_HZ 3579545u
#define MIN_PLAUSIBLE_TSC_HZ 100000000ull

static struct timer_info info;
static uint64_t tsc_at_boot;

const struct timer_info *timer_info(void)
{
	return &info;
}

uint64_t tsc_to_us(uint64_t ticks)
{
	return info.tsc_hz ? mul_div_u64(ticks, 1000000u, info.tsc_hz) : 0;
}

uint64_t us_to_tsc(uint64_t us)
{
	return mul_div_u64(us, info.tsc_hz, 1000000u);
}

uint64_t uptime_us(void)
{
	return tsc_to_us(rdtsc() - tsc_at_boot);
}

/* Long enough (4M iterations: 2 ms native) to span several of the host
 * scheduler's slices when the guest is slow: a short probe that fits in one
 * slice sees the emulator's speed, not the share of the host it gets. */
#define SLOWDOWN_PROBE_ITERS (1u << 22)
/* Native: one iteration (add, compare, branch) per core cycle on any x86-64
 * core, the TSC at or near the core clock; 2 ticks leaves room for a core
 * below its TSC rate. */
#define SLOWDOWN_NATIVE_TICKS 2u
#define SLOWDOWN_MAX 64u

unsigned timer_slowdown(void)
{
	uint64_t t0 = rdtsc(), ticks;

	for (unsigned i = 0; i < SLOWDOWN_PROBE_ITERS; i++)
		__asm__ volatile("" ::: "memory");
	ticks = rdtsc() - t0;
	ticks /= (uint64_t)SLOWDOWN_PROBE_ITERS * SLOWDOWN_NATIVE_TICKS;
	return ticks < 1 ? 1 : ticks > SLOWDOWN_MAX ? SLOWDOWN_MAX : (unsigned)ticks;
}

void udelay(uint64_t us)
{
	uint64_t end = rdtsc() + us_to_tsc(us);
	while ((int64_t)(rdtsc() - end) < 0)
		cpu_relax();
}

/* Hypervisors that scale the TSC say its rate in the timing leaf
 * (CPUID_HV_LEAF_TIMING, 0x40000010: EAX = kHz; VMware's interface, also
 * offered by KVM with QEMU's vmware-cpuid-freq): prefer it to CPUID.15H/16H, which a
 * hypervisor may pass through from the host unchanged. */
static uint64_t tsc_from_hypervisor_leaf(void)
{
	if (!(cpuid(1).ecx & BIT(CPUID_1_ECX_HYPERVISOR_BIT)) ||
	    cpuid(CPUID_HV_LEAF_FIRST).eax < CPUID_HV_LEAF_TIMING)
		return 0;
	uint64_t khz = cpuid(CPUID_HV_LEAF_TIMING).eax;
	if (khz * 1000 < MIN_PLAUSIBLE_TSC_HZ)
		return 0;
	info.tsc_source = "CPUID.40000010H";
	return khz * 1000;
}

static uint64_t tsc_from_cpuid(void)
{
	if (cpuid(0).eax < 0x15)
		return 0;
	/* CPUID.15H: TSC = crystal (ECX Hz) * EBX / EAX (SDM vol. 2A, CPUID leaf 15H). */
	struct cpuid_regs r = cpuid(0x15);
	if (r.eax && r.ebx && r.ecx) {
		info.tsc_source = "CPUID.15H";
		return (uint64_t)r.ecx * r.ebx / r.eax;
	}
	/* CPUID.16H:EAX = base frequency in MHz; the TSC runs at it on
	 * parts that report leaf 16H without a crystal value. */
	if (cpuid(0).eax >= 0x16) {
		r = cpuid(0x16);
		if (r.eax & 0xffff) {
			info.tsc_source = "CPUID.16H";
			return (uint64_t)(r.eax & 0xffff) * 1000000u;
		}
	}
	return 0;
}

/* Channel 2's count, latched, with the TSC read just before and after:
 * the pair brackets the moment the count was taken (8254 datasheet,
 * "Counter Latch Command"). */
static uint16_t pit_ch2_count(uint64_t *before, uint64_t *after)
{
	*before = rdtsc();
	outb(PIT_MODE_CMD, 0x80); /* latch channel 2 */
	uint16_t lo = inb(PIT_CH2_DATA);
	uint16_t hi = inb(PIT_CH2_DATA);
	*after = rdtsc();
	return (uint16_t)(lo | hi << 8);
}

/* TSC ticks per pit_ticks PIT ticks over one channel-2 one-shot (mode 0,
 * counting down from 0xFFFF; OUT2 rises when it passes 0). The two
 * endpoints are counts read between two TSC reads, so a vCPU the host
 * does not run while it waits (a busy host, TCG) costs nothing; a window
 * whose endpoints are not tight (preempted during a read: brackets wider
 * than 1/256 of the window) or that ran past 0 is refused (UINT64_MAX).
 * 0: no PIT (OUT2 high as soon as the count is written; 0x61 reads 0xff on
 * machines and hypervisors without one), or it does not count. */
static uint64_t tsc_over_pit(uint16_t pit_ticks)
{
	uint8_t gate = inb(PIT_GATE_PORT);
	outb(PIT_GATE_PORT, (gate & ~0x02) & ~0x01); /* speaker off, gate low */
	outb(PIT_MODE_CMD, 0xb0);                    /* channel 2, lobyte/hibyte, mode 0, binary */
	outb(PIT_CH2_DATA, 0xff);
	outb(PIT_CH2_DATA, 0xff);
	if (inb(PIT_GATE_PORT) & 0x20)
		return 0;
	outb(PIT_GATE_PORT, (gate & ~0x02) | 0x01); /* gate high: count starts */
	uint64_t a0, b0, a1, b1, start = rdtsc();
	uint64_t limit = 1ull << 34; /* several seconds at any clock: give up */
	uint16_t c0 = pit_ch2_count(&a0, &b0), c1;
	do {
		c1 = pit_ch2_count(&a1, &b1);
		if (rdtsc() - start > limit) {
			outb(PIT_GATE_PORT, gate);
			return 0;
		}
	} while ((uint16_t)(c0 - c1) < pit_ticks && !(inb(PIT_GATE_PORT) & 0x20));
	bool wrapped = inb(PIT_GATE_PORT) & 0x20;
	outb(PIT_GATE_PORT, gate);
	uint16_t counted = (uint16_t)(c0 - c1);
	uint64_t mid = (a1 + b1) / 2 - (a0 + b0) / 2;
	if (wrapped || counted < pit_ticks || ((b0 - a0) + (b1 - a1)) * 256 > mid)
		return UINT64_MAX;
	return mid * pit_ticks / counted;
}

static uint64_t tsc_from_pit(void)
{
	/* The least of 3 tight windows of 10 ms, from up to 100 tries. */
	uint64_t best = UINT64_MAX;
	uint16_t ticks = PIT_HZ / 100;
	for (int i = 0, good = 0; i < 100 && good < 3; i++) {
		uint64_t d = tsc_over_pit(ticks);
		if (!d)
			return 0;
		if (d == UINT64_MAX)
			continue;
		good++;
		if (d < best)
			best = d;
	}
	if (best == UINT64_MAX)
		return 0;
	uint64_t hz = best * PIT_HZ / ticks;
	/* No x86-64 TSC runs below 100 MHz: a smaller figure means the PIT
	 * did not really count (boot.tsc_calibration checks the range too). */
	if (hz < MIN_PLAUSIBLE_TSC_HZ)
		return 0;
	info.tsc_source = "PIT";
	return hz;
}

static uint64_t tsc_from_pm_timer(void)
{
	struct acpi_fadt_info f;
	if (acpi_fadt(&f) != 0 || !f.pm_tmr_port)
		return 0;
	uint32_t mask = f.pm_tmr_32bit ? 0xffffffffu : 0xffffffu;
	uint32_t want = ACPI_PM_TIMER_HZ / 100;
	uint32_t t0 = inl((uint16_t)f.pm_tmr_port) & mask;
	uint64_t s0 = rdtsc();
	uint32_t t;
	do {
		t = inl((uint16_t)f.pm_tmr_port) & mask;
		if (rdtsc() - s0 > (1ull << 34)) /* seconds at any clock: it does not tick */
			return 0;
	} while (((t - t0) & mask) < want);
	uint64_t s1 = rdtsc();
	uint64_t hz = (s1 - s0) * ACPI_PM_TIMER_HZ / ((t - t0) & mask);
	if (hz < MIN_PLAUSIBLE_TSC_HZ)
		return 0;
	info.tsc_source = "ACPI PM timer";
	return hz;
}

void timer_calibrate(void)
{
	tsc_at_boot = rdtsc();
	info.tsc_hz = tsc_from_hypervisor_leaf();
	if (!info.tsc_hz)
		info.tsc_hz = tsc_from_cpuid();
	if (!info.tsc_hz)
		info.tsc_hz = tsc_from_pit();
	if (!info.tsc_hz)
		info.tsc_hz = tsc_from_pm_timer();
	if (!info.tsc_hz) {
		info.tsc_source = "assumed 1 GHz (no PIT, no PM timer)";
		info.tsc_hz = 1000000000u;
	}

	/* LAPIC timer over 10 ms of TSC, masked so it never interrupts. */
	lapic_write(LAPIC_TIMER_DIVIDE, 0x3);
	lapic_write(LAPIC_LVT_TIMER, LAPIC_LVT_MASKED);
	lapic_write(LAPIC_TIMER_INIT, 0xffffffffu);
	uint64_t start = rdtsc();
	udelay(10000);
	uint32_t left = lapic_timer_current();
	uint64_t elapsed = rdtsc() - start;
	lapic_write(LAPIC_TIMER_INIT, 0);
	uint64_t ticks = 0xffffffffu - left;
	info.lapic_hz = elapsed ? mul_div_u64(ticks, info.tsc_hz, elapsed) : 0;
}
