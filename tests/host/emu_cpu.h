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
#include "arch/x86/vectors.h"
#include "emu/model/x86-pmu.h"
#include "tests/host/hosttest.h"
#include "tests/host/pmu_model.h"

/* One access to a model's register as RDMSR/WRMSR end it: 0, X86_VEC_GP
 * for a #GP, -1 for an MSR the model does not own (the emu_model tests
 * drive one X86PMUState with these; the adapter below, whole CPUs). */
static inline int emu_state_rdmsr(X86PMUState *s, uint32_t msr, uint64_t *v)
{
	X86PMUAccess a = x86pmu_rdmsr(s, msr, v);

	return a == X86PMU_OK ? 0 : a == X86PMU_GP ? X86_VEC_GP : -1;
}

static inline int emu_state_wrmsr(X86PMUState *s, uint32_t msr, uint64_t v)
{
	unsigned pmis;
	X86PMUAccess a = x86pmu_wrmsr(s, msr, v, &pmis);

	return a == X86PMU_OK ? 0 : a == X86PMU_GP ? X86_VEC_GP : -1;
}

/* An MSR of s that must read without a fault: its value, or 0xdead with
 * the check failed, naming the MSR. */
static inline uint64_t emu_state_rdv(X86PMUState *s, uint32_t msr)
{
	uint64_t v = 0xdead;
	int rc = emu_state_rdmsr(s, msr, &v);

	HT_CHECK(rc == 0, "RDMSR %#x: %d", msr, rc);
	return v;
}

/* A write to s that must not fault: the check fails naming the MSR and
 * the value. */
static inline void emu_state_wrv(X86PMUState *s, uint32_t msr, uint64_t v)
{
	int rc = emu_state_wrmsr(s, msr, v);

	HT_CHECK(rc == 0, "WRMSR %#x <- %#llx: %d", msr, (unsigned long long)v, rc);
}

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
