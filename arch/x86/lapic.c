/* Local APIC access in both modes, IPIs and the one-shot timer. */
#include "arch/x86/lapic.h"

#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "arch/x86/vectors.h"

static bool x2apic;
static volatile uint8_t *xapic_mmio;

void lapic_global_init(void)
{
	x2apic = cpuid(1).ecx & BIT(CPUID_1_ECX_X2APIC_BIT);
	xapic_mmio = (volatile uint8_t *)(rdmsr(MSR_IA32_APIC_BASE) & APIC_BASE_ADDR_MASK);
}

bool lapic_x2apic_mode(void)
{
	return x2apic;
}

uint32_t lapic_read(uint32_t reg)
{
	if (x2apic)
		return (uint32_t)rdmsr(MSR_X2APIC_BASE + (reg >> 4));
	return *(volatile uint32_t *)(xapic_mmio + reg);
}

void lapic_write(uint32_t reg, uint32_t val)
{
	if (x2apic)
		wrmsr(MSR_X2APIC_BASE + (reg >> 4), val);
	else
		*(volatile uint32_t *)(xapic_mmio + reg) = val;
}

uint32_t lapic_id(void)
{
	/* xAPIC keeps the 8-bit ID in [31:24]; x2APIC has the full 32 bits. */
	uint32_t id = lapic_read(LAPIC_ID);
	return x2apic ? id : id >> 24;
}

unsigned lapic_max_lvt(void)
{
	return (lapic_read(LAPIC_VERSION) >> 16) & 0xff;
}

void lapic_eoi(void)
{
	lapic_write(LAPIC_EOI, 0);
}

void lapic_init_cpu(void)
{
	uint64_t base = rdmsr(MSR_IA32_APIC_BASE);
	/* xAPIC first, then x2APIC: going straight from disabled to x2APIC is
	 * an invalid transition (SDM vol. 3A, 11.12.5, figure 11-27). */
	base |= BIT(APIC_BASE_XAPIC_ENABLE_BIT);
	wrmsr(MSR_IA32_APIC_BASE, base);
	if (x2apic)
		wrmsr(MSR_IA32_APIC_BASE, base | BIT(APIC_BASE_X2APIC_ENABLE_BIT));

	unsigned maxlvt = lapic_max_lvt();
	lapic_write(LAPIC_LVT_TIMER, LAPIC_LVT_MASKED);
	lapic_write(LAPIC_TIMER_INIT, 0);
	lapic_write(LAPIC_LVT_LINT0, LAPIC_LVT_MASKED);
	lapic_write(LAPIC_LVT_LINT1, LAPIC_LVT_MASKED);
	lapic_write(LAPIC_LVT_ERROR, LAPIC_LVT_MASKED);
	if (maxlvt >= 4)
		lapic_write(LAPIC_LVT_PERF, LAPIC_LVT_MASKED);
	if (maxlvt >= 5)
		lapic_write(LAPIC_LVT_THERMAL, LAPIC_LVT_MASKED);
	lapic_write(LAPIC_TPR, 0);
	lapic_write(LAPIC_SVR, LAPIC_SVR_ENABLE | VEC_SPURIOUS);
	/* ESR is read after a write (SDM vol. 3A, 11.5.3): write twice to clear. */
	lapic_write(LAPIC_ESR, 0);
	lapic_write(LAPIC_ESR, 0);
	lapic_eoi();
}

void lapic_send_ipi(uint32_t apic_id, uint32_t icr_low)
{
	if (x2apic) {
		/* WRMSR to x2APIC registers is not serializing: without a fence
		 * the IPI may overtake the stores that posted the work it
		 * announces (SDM vol. 3A, 11.12.3; Linux's weak_wrmsr_fence). */
		__asm__ volatile("mfence; lfence" ::: "memory");
		/* One 64-bit write, destination in [63:32] (SDM vol. 3A, 11.12.9). */
		wrmsr(MSR_X2APIC_BASE + (LAPIC_ICR_LO >> 4), ((uint64_t)apic_id << 32) | icr_low);
		return;
	}
	while (lapic_read(LAPIC_ICR_LO) & ICR_BUSY)
		cpu_relax();
	lapic_write(LAPIC_ICR_HI, apic_id << 24);
	lapic_write(LAPIC_ICR_LO, icr_low);
}

void lapic_timer_oneshot(uint32_t count)
{
	lapic_write(LAPIC_TIMER_DIVIDE, 0x3);    /* divide by 16 */
	lapic_write(LAPIC_LVT_TIMER, VEC_TIMER); /* one-shot, unmasked */
	lapic_write(LAPIC_TIMER_INIT, count);
}

void lapic_timer_stop(void)
{
	lapic_write(LAPIC_LVT_TIMER, LAPIC_LVT_MASKED);
	lapic_write(LAPIC_TIMER_INIT, 0);
}

uint32_t lapic_timer_current(void)
{
	return lapic_read(LAPIC_TIMER_CURRENT);
}
