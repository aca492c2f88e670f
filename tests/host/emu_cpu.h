/* A CPU whose PMU registers are emu/model's, for the host tests that run
 * the driver on it through tests/host/pmu_model.c (model_cpu_ops): CPUID
 * is the model's over an Intel or AMD vendor, family and maximum leaf
 * 23H; MSRs and RDPMC are the model's, IA32_MISC_ENABLE is misc_enable.
 * A test changes what a VMM would (CPUID leaves, MSRs) and how the work
 * is counted through emu_hooks. */
#ifndef TESTS_HOST_EMU_CPU_H
#define TESTS_HOST_EMU_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "emu/model/x86-pmu.h"
#include "tests/host/pmu_model.h"

struct emu_cpu {
	X86PMUConfig cfg;
	X86PMUState pmu;
	uint64_t misc_enable;
};
extern struct emu_cpu emu[MODEL_MAX_CPUS];

struct emu_cpu_hooks {
	/* After the model's answer: the leaf as the test's VMM gives it. */
	void (*cpuid)(unsigned cpu, uint32_t leaf, uint32_t sub, struct cpuid_regs *r);
	/* An MSR the test answers itself: true, with *rc 0 or MODEL_VEC_GP. */
	bool (*rdmsr)(unsigned cpu, uint32_t msr, uint64_t *val, int *rc);
	/* The work's events; NULL: one bulk count at CPL 0. */
	bool (*tick)(unsigned cpu, const struct model_work *w);
};
extern struct emu_cpu_hooks emu_hooks;

/* The adapter, for model_cpu_config.cpu_ops. */
extern const struct model_cpu_ops emu_cpu_ops;
/* RDMSR as the driver sees it: 0, or MODEL_VEC_GP for a #GP. */
int emu_rdmsr(unsigned cpu, uint32_t msr, uint64_t *val);
int emu_wrmsr(unsigned cpu, uint32_t msr, uint64_t val);
/* An MSR as the driver would read it (0 when it faults). */
uint64_t emu_peek(unsigned cpu, uint32_t msr);

#endif
