/* A CPU on emu/model for the host tests (tests/host/emu_cpu.h). */
#include "tests/host/emu_cpu.h"

#include <string.h>

#include "arch/x86/msr.h"
#include "lib/bits.h"

struct emu_cpu emu[MODEL_MAX_CPUS];
struct emu_cpu_hooks emu_hooks;

static void emu_reset(unsigned cpu)
{
	x86pmu_reset(&emu[cpu].pmu, &emu[cpu].cfg);
}

static void emu_cpuid(unsigned cpu, uint32_t leaf, uint32_t sub, struct cpuid_regs *r)
{
	bool amd = emu[cpu].cfg.vendor == X86PMU_VENDOR_AMD;
	const char *v = amd ? "AuthenticAMD" : "GenuineIntel";

	memset(r, 0, sizeof(*r));
	if ((leaf < 0x80000000u && leaf > 0x23) || leaf > 0x80000022u)
		return;
	switch (leaf) {
	case 0:
		r->eax = 0x23;
		memcpy(&r->ebx, v, 4);
		memcpy(&r->edx, v + 4, 4);
		memcpy(&r->ecx, v + 8, 4);
		break;
	case 1:
		r->eax = amd ? 0x00a10f11 : 0x000506e3;
		r->ecx = BIT(CPUID_1_ECX_CX16_BIT);
		break;
	case 0x80000000: r->eax = 0x80000022; break;
	default: break;
	}
	x86pmu_cpuid(&emu[cpu].pmu, leaf, sub, &r->eax, &r->ebx, &r->ecx, &r->edx);
	if (emu_hooks.cpuid)
		emu_hooks.cpuid(cpu, leaf, sub, r);
}

int emu_rdmsr(unsigned cpu, uint32_t msr, uint64_t *val)
{
	int rc;

	if (emu_hooks.rdmsr && emu_hooks.rdmsr(cpu, msr, val, &rc))
		return rc;
	if (msr == MSR_IA32_MISC_ENABLE)
		return *val = emu[cpu].misc_enable, 0;
	return emu_state_rdmsr(&emu[cpu].pmu, msr, val) ? MODEL_VEC_GP : 0;
}

int emu_wrmsr(unsigned cpu, uint32_t msr, uint64_t val)
{
	return emu_state_wrmsr(&emu[cpu].pmu, msr, val) ? MODEL_VEC_GP : 0;
}

static int emu_rdpmc(unsigned cpu, uint32_t ecx, uint64_t *val)
{
	return x86pmu_rdpmc(&emu[cpu].pmu, ecx, 0, false, val) == X86PMU_OK ? 0 : MODEL_VEC_GP;
}

static bool emu_tick(unsigned cpu, const struct model_work *w)
{
	uint64_t t[X86PMU_EV_NUM] = { 0 };

	if (emu_hooks.tick)
		return emu_hooks.tick(cpu, w);
	t[X86PMU_EV_INSTRUCTIONS] = w->instructions;
	t[X86PMU_EV_CYCLES] = w->cycles;
	t[X86PMU_EV_BRANCHES] = w->branches;
	return x86pmu_count_bulk(&emu[cpu].pmu, X86PMU_RING_OS, t) != 0;
}

uint64_t emu_peek(unsigned cpu, uint32_t msr)
{
	uint64_t v = 0;
	emu_rdmsr(cpu, msr, &v);
	return v;
}

static void emu_poke(unsigned cpu, uint32_t msr, uint64_t val)
{
	emu_wrmsr(cpu, msr, val);
}

const struct model_cpu_ops emu_cpu_ops = {
	.reset = emu_reset,
	.cpuid = emu_cpuid,
	.rdmsr = emu_rdmsr,
	.wrmsr = emu_wrmsr,
	.rdpmc = emu_rdpmc,
	.tick = emu_tick,
	.peek = emu_peek,
	.poke = emu_poke,
};
