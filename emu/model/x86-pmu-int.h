/* SPDX-License-Identifier: MIT */
/*
 * What the register and counting halves of the x86 PMU model share:
 * which counters exist, how wide they are, and which fields of their
 * control registers mean what.
 *
 * Copyright (c) 2025 The pmutest authors
 */

#ifndef X86_PMU_INT_H
#define X86_PMU_INT_H

#include "x86-pmu.h"

#define BIT64(n)        (1ull << (n))

/*
 * IA32_PERFEVTSELx (SDM vol. 3B, "Architectural Performance Monitoring
 * Version 1 Facilities"); AMD's PerfEvtSel puts the same fields at the
 * same positions (APM vol. 2, 13.2, "Core Performance Event-Select
 * Registers") and adds EventSelect[11:8] at 35:32.
 */
#define SEL_EVENT(v)    ((unsigned)((v) & 0xff))
#define SEL_UMASK(v)    ((unsigned)(((v) >> 8) & 0xff))
#define SEL_USR         BIT64(16)
#define SEL_OS          BIT64(17)
#define SEL_EDGE        BIT64(18)
#define SEL_PC          BIT64(19)
#define SEL_INT         BIT64(20)
#define SEL_ANY         BIT64(21)
#define SEL_EN          BIT64(22)
#define SEL_INV         BIT64(23)
#define SEL_CMASK(v)    ((unsigned)(((v) >> 24) & 0xff))
#define SEL_AMD_EVENT_HI(v) ((unsigned)(((v) >> 32) & 0xf))
/*
 * Version 6 extensions, each enumerated by CPUID.23H.0:EBX (x86-pmu-v6.c):
 * EQ (36), RDPMC user disable (37), UMASK2 (47:40); AMD's GuestOnly (40)
 * and HostOnly (41) (APM vol. 2, 13.2; x86-pmu-amd.c).
 */
#define SEL_EQ          BIT64(36)
#define SEL_RDPMC_UD    BIT64(37)
#define SEL_UMASK2(v)   ((unsigned)(((v) >> 40) & 0xff))
#define SEL_UMASK2_MASK (0xffull << 40)
#define SEL_AMD_GUEST_ONLY BIT64(40)
#define SEL_AMD_HOST_ONLY  BIT64(41)

/* IA32_FIXED_CTR_CTRL: four bits per fixed counter. */
#define FIXED_FIELD(v, i)   (((v) >> (4 * (i))) & 0xf)
#define FIXED_OS            0x1u
#define FIXED_USR           0x2u
#define FIXED_ANY           0x4u
#define FIXED_PMI           0x8u
/* IA32_FIXED_CTR_CTRL bit 33 + 4i: RDPMC user disable of fixed counter i. */
#define FIXED_UD_BIT(i)     BIT64(33 + 4 * (i))

static inline uint64_t x86pmu_mask(unsigned width)
{
    return width >= 64 ? ~0ull : (1ull << width) - 1;
}

static inline bool x86pmu_is_amd(const X86PMUState *s)
{
    return s->cfg.vendor == X86PMU_VENDOR_AMD;
}

static inline bool x86pmu_defect(const X86PMUState *s, X86PMUDefect d)
{
    return s->cfg.defect == d;
}

static inline bool x86pmu_quirk(const X86PMUState *s, uint32_t q)
{
    return (s->cfg.quirks & q) != 0;
}

/*
 * --- Shape predicates (x86-pmu-shape.c), the bottom of the model's
 * layers: they call no other part. ---
 */
/* Core counters of an AMD CPU (APM vol. 2, 13.2). */
unsigned x86pmu_amd_counters(const X86PMUConfig *cfg);
bool x86pmu_gp_exists(const X86PMUState *s, unsigned x);
bool x86pmu_fixed_exists(const X86PMUState *s, unsigned i);
/* Bits of the existing counters, in GLOBAL_CTRL's layout. */
uint64_t x86pmu_counter_bits(const X86PMUState *s);
/* The width counters really have (a defect may make it differ). */
unsigned x86pmu_gp_width(const X86PMUState *s);
unsigned x86pmu_fixed_width(const X86PMUState *s);
/* PERFEVTSEL and IA32_FIXED_CTR_CTRL bits CPUID.23H.0:EBX opens. */
uint64_t x86pmu_v6_evtsel_bits(const X86PMUState *s);
uint64_t x86pmu_v6_fixed_ctrl_bits(const X86PMUState *s);
/* The offcore RSP MSR an event select names (-1: none). */
int x86pmu_offcore_slot(const X86PMUState *s, uint64_t sel);
/* Version 4 CTR_Frz (or AMD's LbrFreeze) holds every counter. */
bool x86pmu_frozen(const X86PMUState *s);

/*
 * A zeroed configuration with the counting conventions every shape starts
 * from (x86-pmu-config.c says why each is the default).
 */
void x86pmu_config_defaults(X86PMUConfig *cfg, X86PMUVendor vendor);
/*
 * Leaf 0AH of Lunar Lake's two core types and so of the shapes that take
 * Skymont's (x86-pmu-v6.c, x86-pmu-arch-pebs.c): version 6, 8 GP and 3
 * fixed counters of 48 bits, events 7 and 9 absent, AnyThread deprecated;
 * PDCM.
 */
void x86pmu_config_lunarlake_0a(X86PMUConfig *cfg);
/* After the enables changed: which counter a busy host leaves out. */
void x86pmu_sched_update(X86PMUState *s);

/* Register writes the two MSR maps share (x86-pmu-write.c). */
X86PMUAccess x86pmu_write_evtsel(X86PMUState *s, unsigned x, uint64_t val);
X86PMUAccess x86pmu_write_gp_full(X86PMUState *s, unsigned x, uint64_t val);
X86PMUAccess x86pmu_write_fixed(X86PMUState *s, unsigned i, uint64_t val);

/* --- Version 6, CPUID.23H, PERF_METRICS (x86-pmu-v6.c) --- */
bool x86pmu_v6_owns(uint32_t msr);
X86PMUAccess x86pmu_v6_rdmsr(X86PMUState *s, uint32_t msr, uint64_t *val);
X86PMUAccess x86pmu_v6_wrmsr(X86PMUState *s, uint32_t msr, uint64_t val);
void x86pmu_v6_cpuid(const X86PMUState *s, uint32_t leaf, uint32_t subleaf,
                     uint32_t *eax, uint32_t *ebx, uint32_t *ecx,
                     uint32_t *edx);
/* RDPMC at CPL > 0 of this counter reads 0 (RDPMC user disable). */
bool x86pmu_v6_user_disabled(const X86PMUState *s, bool fixed, unsigned i);
/* RDPMC ECX[29]: PERF_METRICS; false when ecx is no metrics index. */
bool x86pmu_v6_rdpmc_metrics(X86PMUState *s, uint32_t ecx, uint64_t *val,
                             X86PMUAccess *r);
bool x86pmu_perf_metrics_exist(const X86PMUState *s);
/*
 * Auto counter reload: the counters counter idx reloads when it
 * overflows are noted, then reloaded together once the span is counted.
 */
bool x86pmu_acr_self(const X86PMUState *s, unsigned idx);
void x86pmu_acr_overflowed(X86PMUState *s, unsigned idx);
void x86pmu_acr_apply(X86PMUState *s);
/*
 * The top-down split of `cycles` cycles in which `insns` instructions and
 * `bmiss` mispredicted branches retire: td[] = retiring, bad speculation,
 * frontend bound, backend bound (PERF_METRICS' byte order).
 */
void x86pmu_td_split(const X86PMUState *s, uint64_t cycles, uint64_t insns,
                     uint64_t bmiss, uint64_t td[4]);
/* PERF_METRICS counts at `ring` now. */
bool x86pmu_metrics_counting(const X86PMUState *s, X86PMURing ring);

/* --- AMD extensions (x86-pmu-amd.c) --- */
/* The counter with event select `sel` counts in the current SVM state. */
bool x86pmu_amd_host_guest_counts(const X86PMUState *s, uint64_t sel);
/* PerfCntrGlobalStatus bits StatusClr/StatusSet take. */
uint64_t x86pmu_amd_status_bits(const X86PMUState *s);
/* IA32_DEBUGCTL with LbrAndPmcFreeze: bits that take writes, 0 if none. */
uint64_t x86pmu_amd_debugctl_valid(const X86PMUState *s);
/* At a PMI: LbrAndPmcFreeze sets LbrFreeze. */
void x86pmu_amd_pmi_freeze(X86PMUState *s);

/* Offcore response (x86-pmu-offcore.c): the rules of a write to RSP MSR i. */
X86PMUAccess x86pmu_offcore_write(X86PMUState *s, unsigned i, uint64_t val);
/*
 * A PMI was requested (counters `ovf` wrapped): freeze-on-PMI and the
 * quirks' state (count.c).
 */
unsigned x86pmu_pmi_raised(X86PMUState *s, uint64_t ovf);

/* Last branch records (x86-pmu-lbr.c). */
void x86pmu_lbr_reset(X86PMUState *s);
void x86pmu_lbr_cpuid(const X86PMUState *s, uint32_t leaf, uint32_t subleaf,
                      uint32_t *eax, uint32_t *ebx, uint32_t *ecx,
                      uint32_t *edx);
X86PMUAccess x86pmu_lbr_rdmsr(X86PMUState *s, uint32_t msr, uint64_t *val);
X86PMUAccess x86pmu_lbr_wrmsr(X86PMUState *s, uint32_t msr, uint64_t val);
/* The k-th most recent record, plain addresses (0 past the stack). */
void x86pmu_lbr_entry(const X86PMUState *s, unsigned k, uint64_t *from,
                      uint64_t *to, uint64_t *info);

/* PEBS (x86-pmu-pebs.c). */
bool x86pmu_pebs_present(const X86PMUState *s);
void x86pmu_pebs_cpuid(const X86PMUState *s, uint32_t leaf,
                       uint32_t *ecx, uint32_t *edx);
X86PMUAccess x86pmu_pebs_rdmsr(X86PMUState *s, uint32_t msr, uint64_t *val);
X86PMUAccess x86pmu_pebs_wrmsr(X86PMUState *s, uint32_t msr, uint64_t val);
/*
 * The adaptive opt-in bits that take writes: PERFEVTSELx[34], or
 * IA32_FIXED_CTR_CTRL[32 + 4i] of each fixed counter (fixed = true).
 */
uint64_t x86pmu_pebs_ctrl_bits(const X86PMUState *s, bool fixed);
/* A counter overflowed; true when PEBS takes the overflow. */
bool x86pmu_pebs_overflow(X86PMUState *s, unsigned idx);

#endif
