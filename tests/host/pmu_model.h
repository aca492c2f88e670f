/* A software Intel PMU behind pmu/pmu_hw.h: the host build of pmu/ runs
 * against it. Its registers are emu/model, the register model QEMU's
 * emulated PMU runs, written from the SDM: strict where the SDM is strict
 * (reserved bits and absent MSRs raise #GP). This harness adds the
 * profiles for the PMU versions and the broken emulations the driver
 * must recognise. */
#ifndef TESTS_HOST_PMU_MODEL_H
#define TESTS_HOST_PMU_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/vectors.h"
#include "emu/model/x86-pmu.h"

struct pmu_init_opts;

#define MODEL_MAX_CPUS 8
#define MODEL_VEC_UD X86_VEC_UD
#define MODEL_VEC_GP X86_VEC_GP

enum model_profile {
	MODEL_NO_PMU,         /* CPUID.0AH all zero; PMU MSRs #GP; RDPMC #GP */
	MODEL_IGNORES_WRITES, /* CPUID claims v2, MSRs read 0, writes dropped, RDPMC #UD (TCG-like) */
	MODEL_V1,             /* 2 GP x 40 bits, no fixed counters, no GLOBAL_* MSRs */
	MODEL_V2,             /* 2 GP x 40, 3 fixed x 40, GLOBAL_CTRL/STATUS/OVF_CTRL */
	MODEL_V4,             /* 4 GP x 48, 3 fixed x 48, PDCM, STATUS_SET, INUSE, offcore MSRs */
	MODEL_V5_GAP,         /* v5, 8 GP x 48, fixed counters {0,1,3}: ECX bitmap with a gap at 2 */
	MODEL_HYBRID,         /* CPUs 0-1 P-cores (v5, 8 GP, fixed 0-3), 2-3 E-cores (6 GP, fixed 0-2) */
	/* Core i7-2600 (Sandy Bridge client, family 6 model 0x2A): v3, 4 GP x 48,
	 * 3 fixed x 48, per-thread RSP MSRs with the SNB-client valid bits,
	 * CPUs 0-1 and 2-3 SMT siblings, client uncore with 4 C-boxes. */
	MODEL_SNB_CLIENT,
	/* Xeon 5600 (Westmere-EP, family 6 model 0x2C): v3, RSP_0/RSP_1 of 16
	 * bits shared by the two threads of a core (CPUs 0-1, 2-3). */
	MODEL_WESTMERE,
	MODEL_PROFILE_NR
};

/* Uncore layouts (emu/model/x86-pmu-uncore.c): client global control at
 * 0x391 (Sandy Bridge .. Broadwell; Haswell's MSR_UNC_CBO_CONFIG holds
 * count + 1) or 0xE01 (Skylake on), Skylake-SP's CHAs and memory channels.
 * One per package (CPUID.0BH: the x2APIC ID above smt_bits + 4). */
enum model_uncore {
	MODEL_UNCORE_NONE,
	MODEL_UNCORE_SNB,
	MODEL_UNCORE_HSW,
	MODEL_UNCORE_SKL,
	MODEL_UNCORE_SKX,
	/* Sapphire Rapids: CHAs and MMIO memory channels, placed by each
	 * package's discovery table (8086:09A7 at bus 2p + 1, device 3). */
	MODEL_UNCORE_SPR
};
#define MODEL_MAX_PKGS 4

struct model_cpu_ops;

/* What one modelled CPU looks like (CPUID and the MSRs it implements). */
struct model_cpu_config {
	const char *vendor; /* 12 characters */
	uint32_t signature; /* CPUID.01H:EAX */
	bool hypervisor;    /* CPUID.01H:ECX[31] */
	/* 12-byte signatures at CPUID 0x40000000 and 0x40000100 (NULL: none),
	 * as a hypervisor presents them; read only with the bit above set. */
	const char *hv_sig[2];
	uint32_t max_leaf;
	uint8_t version, num_gp, gp_width, ebx_len, num_fixed, fixed_width;
	uint32_t ebx_unavail;  /* CPUID.0AH:EBX */
	uint32_t fixed_bitmap; /* CPUID.0AH:ECX (v5) */
	bool anythread_deprecated;
	bool pdcm;
	uint64_t perf_caps; /* IA32_PERF_CAPABILITIES */
	bool hybrid;
	uint8_t core_type;
	uint32_t native_model;
	bool leaf23;
	uint32_t leaf23_gp, leaf23_fixed;
	bool ignores_writes;
	bool fast_rdpmc; /* RDPMC ECX[31] reads the low 32 bits; else #GP */
	/* MSR_OFFCORE_RSP_0/1: their layout (emu/model; nmsrs 0: none), and
	 * whether one pair serves a core, SMT siblings seeing the same MSRs. */
	X86PMUOffcoreConfig offcore;
	bool offcore_shared;
	bool leaf_0b; /* CPUID.0BH: x2APIC ID and SMT bits */
	uint32_t x2apic_id;
	uint8_t smt_bits;
	uint8_t cores_per_pkg;      /* CPUID.04H.0 (an L1D entry) reports this; 0: no leaf 4 */
	enum model_uncore uncore;   /* uncore layout of the CPU's package */
	uint8_t uncore_cboxes;      /* C-boxes / CHAs; the count register encodes it per layout */
	X86PMUDefect uncore_defect; /* an uncore defect (emu/model) */
	bool rdpmc_gp;              /* RDPMC raises #GP for every counter */
	/* X86PMU_QUIRK_* (emu/model/x86-pmu.h): the known behaviours of a
	 * hypervisor's virtual PMU this CPU has, as the emulated profiles do. */
	uint32_t quirks;
	bool no_count; /* counters hold writes but never advance */
	/* AMD (vendor AuthenticAMD or HygonGenuine; tests/host/pmu_model_amd.c
	 * has the profiles): the register model's AMD part, whose family comes
	 * from the signature. */
	uint32_t max_ext_leaf;   /* CPUID 0x80000000:EAX; 0: no extended leaves */
	bool amd_ext_core;       /* Fn8000_0001_ECX[23] PerfCtrExtCore */
	bool amd_perfmon_v2;     /* Fn8000_0022_EAX[0] */
	bool amd_lbr_pmc_freeze; /* Fn8000_0022_EAX[2] */
	uint8_t amd_counters;    /* Fn8000_0022_EBX[3:0] */
	bool svm;                /* Fn8000_0001_ECX[2] */
	/* Version 6 and CPUID.23H beyond the bitmaps (emu/model's X86PMUConfig
	 * fields of the same names). */
	uint32_t v6_features;
	bool acr;
	uint64_t acr_reload, acr_cause;
	bool leaf23_events;
	uint32_t events_avail23;
	/* A CPU whose registers, CPUID and counting another harness supplies
	 * whole (NULL: this one; tests/host/test_pmu_lbr_pebs.c puts a CPU
	 * on emu/model with its LBRs, PEBS and memory). */
	const struct model_cpu_ops *cpu_ops;
};

/* Reset every CPU to a profile (4 CPUs); full_width sets
 * IA32_PERF_CAPABILITIES[13] where the profile has PDCM. */
void model_init(enum model_profile p, bool full_width);
/* Reset to explicit per-CPU configurations. */
void model_init_custom(const struct model_cpu_config *cfgs, unsigned ncpus);
const char *model_profile_name(enum model_profile p);
const struct model_cpu_config *model_config(unsigned cpu);

void model_set_cpu(unsigned cpu);
unsigned model_cpu(void);
unsigned model_ncpus(void);
/* Run fn(arg) as CPU `cpu` (the host's on_cpu). */
void model_run_on(unsigned cpu, void (*fn)(void *), void *arg);

/* Privilege of the "running" code and CR4.PCE, for counting and RDPMC. */
void model_set_cpl(unsigned cpl);
void model_set_cr4_pce(bool on);

/* A workload's events on the current CPU. When retire_per_cycle is given
 * (ncycles entries), CMASK/INV/EDGE on instructions retired and core
 * cycles are evaluated per cycle; otherwise the instructions are spread
 * as evenly as possible over `cycles`. */
struct model_work {
	uint64_t instructions, cycles, ref_cycles, branches, branch_misses;
	uint64_t llc_refs, llc_misses, slots;
	uint64_t dmnd_rd_l3_miss; /* demand data reads that missed the L3 (OFFCORE_RESPONSE) */
	uint64_t dmnd_rd_l3_hit;  /* ... and that hit it */
	uint64_t llc_lookups;     /* L2 misses: C-box lookups / CHA read requests, spread over the boxes */
	uint64_t cas_reads;       /* lines read from DRAM (free-running counters, CAS reads) */
	uint64_t cas_writes;      /* lines written to DRAM */
	const uint8_t *retire_per_cycle;
	size_t ncycles;
};
void model_tick(const struct model_work *w);

/* The hooks of a model_cpu_config.cpu_ops CPU, each given its number. */
struct model_cpu_ops {
	void (*reset)(unsigned cpu);
	void (*cpuid)(unsigned cpu, uint32_t leaf, uint32_t subleaf, struct cpuid_regs *r);
	int (*rdmsr)(unsigned cpu, uint32_t msr, uint64_t *val);
	int (*wrmsr)(unsigned cpu, uint32_t msr, uint64_t val);
	int (*rdpmc)(unsigned cpu, uint32_t ecx, uint64_t *val);
	bool (*tick)(unsigned cpu, const struct model_work *w); /* true: a PMI */
	uint64_t (*peek)(unsigned cpu, uint32_t msr);
	void (*poke)(unsigned cpu, uint32_t msr, uint64_t val);
};

/* AMD's EFER.SVME and guest mode on the current CPU, for HostOnly and
 * GuestOnly (emu/model x86pmu_set_svm). */
void model_set_svm(bool svme, bool guest);

/* The counted loop of pmu/loops.h: 3n instructions, n branches, 2n cycles. */
void model_tick_loop(uint64_t n);
/* The probe's workload on the model (the loop, PMU_PROBE_LOOPS times),
 * and the init options that run it. */
void model_tick_probe(void *ctx);
extern const struct pmu_init_opts model_probe_opts;
/* model_init_custom, then the driver booted on every CPU with
 * model_probe_opts; CPU 0 current, the trace empty. */
void model_boot_custom(const struct model_cpu_config *cfgs, unsigned ncpus);
/* A Skylake-SP CPU (the Sandy Bridge client profile, resetting the model,
 * made version 4 with the SKX uncore) with chas CHAs, package pkg and core
 * core in CPUID.0BH (x2APIC ID pkg << 5 | core << 1: SMT bits 1, core
 * bits 4). */
struct model_cpu_config model_skx_config(unsigned pkg, unsigned core, unsigned chas);
/* model_trace_format into a static buffer. */
const char *model_trace_text(void);

/* Raw state, bypassing the checks and the trace (firmware set-up, asserts). */
uint64_t model_peek(unsigned cpu, uint32_t msr);
void model_poke(unsigned cpu, uint32_t msr, uint64_t val);

/* Every WRMSR attempted, in order, with its outcome; PCI configuration
 * writes too, their msr field MODEL_TRACE_PCI | bus << 16 | dev << 11 |
 * fn << 8 | offset. */
#define MODEL_TRACE_PCI 0x80000000u
/* MMIO writes: msr MODEL_TRACE_MMIO, val the address << 32 | the dword. */
#define MODEL_TRACE_MMIO 0x40000000u
struct model_write {
	unsigned cpu;
	uint32_t msr;
	uint64_t val;
	int fault;
};
void model_trace_clear(void);
size_t model_trace_len(void);
const struct model_write *model_trace_at(size_t i);
/* "0x186<-0x430000 0x38f<-0x1 ..." for failure messages. */
void model_trace_format(char *buf, size_t n);

/* PMIs raised (INT/PMI bit set when a counter overflowed). */
unsigned model_pmi_count(unsigned cpu);
void model_pmi_clear(unsigned cpu);

/* Call fn(arg) once, inside the next RDPMC, after the value was sampled:
 * a PMI arriving right after the instruction. */
void model_set_rdpmc_hook(void (*fn)(void *), void *arg);

/* PMI delivery: when a tick raises a PMI (a counter with INT/PMI set
 * wrapped), fn(arg) runs at the end of that model_tick, on the CPU that
 * raised it, after the freeze-on-PMI effects: the interrupt handler. NULL
 * (the default after model_init) only counts PMIs. */
void model_set_pmi_handler(void (*fn)(void *), void *arg);

/* Each CPU's time-stamp counter (pmu_hw_tsc): 0 after model_init, advanced
 * by every model_tick by the work's cycles. */
uint64_t model_tsc(unsigned cpu);
void model_set_tsc(unsigned cpu, uint64_t tsc);

/* Devices a test adds to the platform: each hook returns true when the
 * access is its own (NULL hooks: none). PCI Express configuration space
 * (pmu_hw_pcie_*) reaches the conventional 256 bytes of the model's own
 * functions below them and all-ones above, unless `no_ecam` says the
 * platform has no enhanced configuration mechanism (then it fails). Reset
 * by model_init. */
struct model_platform {
	bool no_ecam;
	bool (*pcie_read)(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off, uint32_t *val);
	bool (*pcie_write)(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off, uint32_t val);
	bool (*mmio_read32)(uint64_t phys, uint32_t *val);
	bool (*mmio_write32)(uint64_t phys, uint32_t val);
};
void model_set_platform(const struct model_platform *p);

#endif
