/* SPDX-License-Identifier: MIT */
/*
 * The uncore of one package: the boxes whose counters count what the cores
 * of that package do to the shared cache and the memory controller (Intel
 * client C-boxes and free-running memory-controller counters, server CHAs
 * and memory-controller channels).  Package scope: every CPU of a package
 * sees the same registers, so its user keeps one state per package and
 * serialises the accesses.
 *
 * Like x86-pmu.h, it counts nothing by itself: its user says which
 * requests the package's caches saw (QEMU: its cache model; the host
 * tests: the work they describe).
 *
 * Copyright (c) 2025 The pmutest authors
 */

#ifndef X86_PMU_UNCORE_H
#define X86_PMU_UNCORE_H

#include <stdbool.h>
#include <stdint.h>

#include "x86-pmu.h"

/* The layouts the model has (x86-pmu-uncore.c gives their sources). */
typedef enum X86PMUUncoreLayout {
    X86PMU_UNCORE_NONE,
    X86PMU_UNCORE_SNB_CLIENT,   /* Sandy/Ivy Bridge: global 391H */
    X86PMU_UNCORE_HSW_CLIENT,   /* Haswell/Broadwell: CBO_CONFIG = count + 1 */
    X86PMU_UNCORE_SKL_CLIENT,   /* Skylake .. Comet Lake: global E01H */
    X86PMU_UNCORE_SKX,          /* Skylake-SP: CHAs, memory channels in PCI */
    X86PMU_UNCORE_SPR,          /* Sapphire Rapids: the discovery table's CHAs, MMIO channels */
} X86PMUUncoreLayout;

#define X86PMU_UNC_MAX_BOXES    28  /* Skylake-SP's CHAs at most */
#define X86PMU_UNC_MAX_CTRS     4
#define X86PMU_UNC_CHANNELS     6   /* Skylake-SP: two controllers x 3 */
#define X86PMU_UNC_SPR_CHANNELS 8   /* Sapphire Rapids: eight DDR5 channels */
#define X86PMU_SPR_IMC_STRIDE   0x1000  /* a channel's MMIO page */
#define X86PMU_DISCOVERY_DEVICE_ID 0x09a7  /* Linux UNCORE_DISCOVERY_TABLE_DEVICE */

typedef struct X86PMUUncoreConfig {
    X86PMUUncoreLayout layout;
    uint8_t nboxes;             /* C-boxes / CHAs */
    X86PMUDefect defect;        /* the CPUs' (uncore ones only act here) */
} X86PMUUncoreConfig;

/* One box: C-box, ARB, CHA or memory channel. */
typedef struct X86PMUUncoreBox {
    uint64_t box_ctl;
    uint64_t sel[X86PMU_UNC_MAX_CTRS];
    uint64_t ctr[X86PMU_UNC_MAX_CTRS];
    uint64_t filter[2];
} X86PMUUncoreBox;

typedef struct X86PMUUncoreState {
    X86PMUUncoreConfig cfg;
    uint64_t global_ctrl;
    X86PMUUncoreBox box[X86PMU_UNC_MAX_BOXES];
    X86PMUUncoreBox arb;
    X86PMUUncoreBox chan[X86PMU_UNC_CHANNELS];
    X86PMUUncoreBox imc[X86PMU_UNC_SPR_CHANNELS];   /* Sapphire Rapids */
    /*
     * Client: the memory controller's free-running DRAM read and write
     * counters (64-byte lines), which count all the time.
     */
    uint64_t dram_reads, dram_writes;
} X86PMUUncoreState;

/* What the package's caches saw, for x86pmu_uncore_count(). */
typedef enum X86PMUUncoreEvent {
    /*
     * A core's request that missed its L2, by the state its lookup found
     * the line in at the LLC: unmodified (E or S), modified (M), absent
     * (I, an LLC miss).
     */
    X86PMU_UNC_LLC_HIT,
    X86PMU_UNC_LLC_HIT_M,
    X86PMU_UNC_LLC_MISS,
    X86PMU_UNC_CAS_READ,        /* a line read from DRAM */
    X86PMU_UNC_CAS_WRITE,       /* a line written to DRAM */
} X86PMUUncoreEvent;

/*
 * The uncore of Intel family 6 `model` with `cores` cores a package
 * (layout NONE if the model has none the model emulates).
 */
void x86pmu_uncore_shape(uint32_t family, uint32_t model, unsigned cores,
                         X86PMUUncoreConfig *cfg);
void x86pmu_uncore_reset(X86PMUUncoreState *s, const X86PMUUncoreConfig *cfg);

/* The package's MSRs; X86PMU_NOT_MINE for any other. */
X86PMUAccess x86pmu_uncore_rdmsr(X86PMUUncoreState *s, uint32_t msr,
                                 uint64_t *val);
X86PMUAccess x86pmu_uncore_wrmsr(X86PMUUncoreState *s, uint32_t msr,
                                 uint64_t val);

/*
 * Skylake-SP's memory channel `ch` in PCI configuration space: a dword at
 * `off` (the registers from 0xA0 up); false for an offset the model does
 * not have (reads as 0, writes dropped).
 */
bool x86pmu_uncore_chan_read(X86PMUUncoreState *s, unsigned ch, uint32_t off,
                             uint32_t *val);
bool x86pmu_uncore_chan_write(X86PMUUncoreState *s, unsigned ch,
                              uint32_t off, uint32_t val);
/* The PCI device IDs of the channels (vendor 8086). */
uint16_t x86pmu_uncore_chan_device(unsigned ch);

/*
 * Sapphire Rapids' memory channel `ch` (an MMIO unit of the discovery
 * table): `size` (4 or 8) bytes at `off` of its page; false for an offset
 * the model does not have (reads 0, writes dropped).
 */
bool x86pmu_uncore_imc_read(const X86PMUUncoreState *s, unsigned ch,
                            uint32_t off, unsigned size, uint64_t *val);
bool x86pmu_uncore_imc_write(X86PMUUncoreState *s, unsigned ch, uint32_t off,
                             unsigned size, uint64_t val);

/*
 * Sapphire Rapids' uncore discovery table (Linux
 * arch/x86/events/intel/uncore_discovery.h): qword `idx` of the package's
 * table, the global discovery state then one entry a unit, 0 past the
 * end.  imc_base[0] is where this package's memory channels are mapped,
 * imc_base[1] the next package's (a defect lists those).
 */
uint64_t x86pmu_discovery_word(const X86PMUUncoreState *s,
                               const uint64_t imc_base[2], unsigned idx);

/*
 * The client memory controller's registers in MCHBAR: a dword at `off`;
 * false where the model has none.
 */
bool x86pmu_uncore_mchbar_read(const X86PMUUncoreState *s, uint32_t off,
                               uint32_t *val);

/*
 * `n` events of `ev` at cache line `line` in package `pkg` of pkgs[npkgs]
 * (the line picks the slice and the channel).  Only pkgs[pkg] counts them,
 * unless the defect says otherwise.
 */
void x86pmu_uncore_count(X86PMUUncoreState *const *pkgs, unsigned npkgs,
                         unsigned pkg, X86PMUUncoreEvent ev, uint64_t line,
                         uint64_t n);

/*
 * Whether the package's caches must be watched: some counter is enabled,
 * or the layout has free-running counters (they always count).
 */
bool x86pmu_uncore_watching(const X86PMUUncoreState *s);

#endif
