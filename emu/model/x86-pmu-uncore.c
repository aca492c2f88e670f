/* SPDX-License-Identifier: MIT */
/*
 * The uncore of one package (x86-pmu-uncore.h).
 *
 * Client layouts (SDM vol. 4, the MSR tables of the 2nd to 10th
 * generation Core processors; Linux arch/x86/events/intel/uncore_snb.c):
 * C-box n has event selects 700H/701H + 10H n ([7:0] event, [15:8] umask,
 * 18 edge, 20 overflow PMI, 22 enable, 23 invert, [28:24] threshold) and
 * 44-bit counters 706H/707H + 10H n; MSR_UNC_CBO_CONFIG (396H) reads the
 * number of C-boxes (plus one on Haswell/Broadwell); one global control
 * (391H, E01H from Skylake: bit 29 enables every box, the low bits pick
 * the cores a PMI goes to, 30 wake on PMI, 31 freeze on overflow); the ARB
 * at 3B0H-3B3H; the memory controller's free-running DRAM read and write
 * counters at MCHBAR + 5050H/5054H, 32 bits of 64-byte lines (Linux
 * snb_uncore_imc, Intel PCM's client bandwidth code).
 *
 * Skylake-SP (Linux arch/x86/events/intel/uncore_snbep.c, skx_*; Intel
 * PCM src/types.h): CHA n at E00H + 10H n: box control, event selects
 * +1..+4 (the fields above, 17 counter reset, 19 TID filter, [31:24]
 * threshold), filters +5/+6, status +7, 48-bit counters +8..+B; MSR 702H
 * [5:0] the number of CHAs (PCM).  A box control's bit 0 resets the event
 * selects, bit 1 the counters, bit 8 freezes the box (bit 16 enables the
 * freeze).  The memory channels are PCI functions (8086:2042 at 10.2 and
 * 12.2, 2046 at 10.6 and 12.6, 204A at 11.2 and 13.2 of the package's
 * bus): box control F4H, event selects D8H + 4i, 48-bit counters A0H + 8i,
 * the fixed DCLK counter's control F0H and counter D0H.
 *
 * What counts (the model's choices, emu/qemu/README.md): a C-box counts
 * event 34H (UNC_CBO_CACHE_LOOKUP), one per request that missed a core's
 * L2 and went to its slice, when its unit mask has the bit of the state
 * the lookup found the line in (Intel perfmon sandybridge_uncore.json,
 * haswell_uncore.json, skylake_uncore.json: .ANY_M 81H, .ANY_ES 86H,
 * .ANY_I 88H, bits [3:0] M, E, S, I; bits [7:4] the request type): M for
 * a line the model's LLC holds modified, E or S (either bit: the event
 * lists name the two only together) for one it holds unmodified, I for a
 * miss; the request-type bits are not looked at (the lists do not say
 * which type a core's RFO is); a
 * CHA event 50H (UNC_CHA_REQUESTS) with READS_LOCAL (umask bit 0), one per
 * such request of its own package (every request is local: the model has
 * one memory, no remote socket's reads); a memory channel event 04H
 * (UNC_M_CAS_COUNT) with RD (umask bits 0-1) or WR (bits 2-3); the ARB and
 * the DCLK counters count nothing.  A request goes to slice and channel
 * line mod n, the address hash the model does not know.  Counters need
 * their enable bit, the global enable (client) and an unfrozen box
 * (server).  MSRs of boxes past the count raise #GP; so do reserved bits
 * and writes to read-only registers (the CHA counters: Linux never writes
 * them, and whether silicon takes writes is not published).
 *
 * Sapphire Rapids (Linux uncore_snbep.c spr_uncore_chabox, spr_uncore_imc
 * and the generic discovery ops of uncore_discovery.c, which take the
 * addresses from the discovery table the model publishes: see
 * x86pmu_discovery_word): CHA n's box control at 2000H + 10H n, counter
 * controls +2..+5, counters +8..+B (48 bits, read-only as Skylake-SP's),
 * filter +EH; MSR 2FFEH reads the number of CHAs (Linux
 * SPR_MSR_UNC_CBO_CONFIG); 2FF0H is the global control, bit 0 freezing
 * every box (Intel PCM).  A box control's bit 0 freezes the box, bit 8
 * resets its controls, bit 9 its counters (Linux GENERIC_PMON_BOX_CTL_*).
 * There is no enable bit: a control counts its event while neither its
 * box nor the global control is frozen (Linux writes the event alone).
 * The memory channels, eight a package (Sapphire Rapids' eight DDR5
 * channels), are MMIO units of a 4 KiB page each: box control +0, counter
 * controls +40H + 4i (dwords), 48-bit counters +08H + 8i, the fixed
 * counter +38H and its control +54H (Linux SNR_IMC_MMIO_PMON_*, which
 * spr_uncore_imc reuses).  UNC_M_CAS_COUNT is event 05H: a read counts
 * with a unit-mask bit in [3:0], a write with one in [5:4] (perfmon
 * sapphirerapids_uncore_memory.json: .RD CFH, .WR F0H).
 *
 * Copyright (c) 2025 The pmutest authors
 */

#include <string.h>

#include "x86-pmu-uncore.h"

#define BIT64(n)            (1ull << (n))
#define MASK(w)             ((w) >= 64 ? ~0ull : BIT64(w) - 1)

#define CLIENT_GLOBAL_EN    BIT64(29)
#define CLIENT_GLOBAL_VALID (BIT64(29) | BIT64(30) | BIT64(31))
#define CLIENT_SEL_VALID    0x1fd4ffffull
#define CLIENT_WIDTH        44
#define SEL_EN              BIT64(22)
#define SERVER_SEL_VALID    0xffffffffull
#define SERVER_WIDTH        48
#define BOX_RST_CTRL        BIT64(0)
#define BOX_RST_CTRS        BIT64(1)
#define BOX_FRZ             BIT64(8)
#define BOX_FRZ_EN          BIT64(16)
#define BOX_CTL_VALID       (BOX_RST_CTRL | BOX_RST_CTRS | BOX_FRZ | BOX_FRZ_EN)

#define MSR_UNC_PERF_GLOBAL_CTRL    0x391
#define MSR_SKL_UNC_PERF_GLOBAL_CTL 0xe01
#define MSR_UNC_CBO_CONFIG          0x396
#define MSR_UNC_CBO_0               0x700
#define MSR_UNC_ARB_PERFCTR0        0x3b0
#define MSR_SKX_NCU_PMON_CONFIG     0x702
#define MSR_SKX_CHA_0               0xe00

#define MSR_SPR_CHA_0               0x2000
#define MSR_SPR_UNC_PMON_GLOBAL_CTL 0x2ff0
#define MSR_SPR_UNC_CBO_CONFIG      0x2ffe
#define SPR_FRZ                     BIT64(0)
#define SPR_RST_CTRL                BIT64(8)
#define SPR_RST_CTRS                BIT64(9)
#define SPR_BOX_CTL_VALID           (SPR_FRZ | SPR_RST_CTRL | SPR_RST_CTRS)

#define MCHBAR_DRAM_READS   0x5050
#define MCHBAR_DRAM_WRITES  0x5054

static bool client(const X86PMUUncoreState *s)
{
    return s->cfg.layout == X86PMU_UNCORE_SNB_CLIENT ||
           s->cfg.layout == X86PMU_UNCORE_HSW_CLIENT ||
           s->cfg.layout == X86PMU_UNCORE_SKL_CLIENT;
}

void x86pmu_uncore_shape(uint32_t family, uint32_t model, unsigned cores,
                         X86PMUUncoreConfig *cfg)
{
    unsigned cap;

    memset(cfg, 0, sizeof(*cfg));
    if (family != 6) {
        return;
    }
    /*
     * One C-box or CHA per core.  The client parts have at most 4 cores
     * before Skylake; an 8-core Coffee Lake's eighth C-box sits at other
     * addresses (Linux UNCORE_BOX_FLAG_CFL8_CBOX_MSR_OFFS), so the model
     * stops at 7.
     */
    switch (model) {
    case 0x2a: case 0x3a:
        cfg->layout = X86PMU_UNCORE_SNB_CLIENT;
        cap = 4;
        break;
    case 0x3c: case 0x45: case 0x46: case 0x3d: case 0x47:
        cfg->layout = X86PMU_UNCORE_HSW_CLIENT;
        cap = 4;
        break;
    case 0x4e: case 0x5e: case 0x8e: case 0x9e: case 0xa5: case 0xa6:
        cfg->layout = X86PMU_UNCORE_SKL_CLIENT;
        cap = 7;
        break;
    case 0x55:
        cfg->layout = X86PMU_UNCORE_SKX;
        cap = X86PMU_UNC_MAX_BOXES;
        break;
    case 0x8f: case 0xcf:
        cfg->layout = X86PMU_UNCORE_SPR;
        cap = X86PMU_UNC_MAX_BOXES;
        break;
    default:
        return;
    }
    cores = cores ? cores : 1;
    cfg->nboxes = cores > cap ? cap : cores;
}

void x86pmu_uncore_reset(X86PMUUncoreState *s, const X86PMUUncoreConfig *cfg)
{
    X86PMUUncoreConfig c = *cfg;    /* cfg may be s->cfg */

    memset(s, 0, sizeof(*s));
    s->cfg = c;
}

/* --- Registers --- */

typedef enum UncReg {
    U_GLOBAL, U_CBO_CONFIG, U_NCU_CONFIG, U_SEL, U_CTR, U_BOX_CTL, U_FILTER,
    U_STATUS,
} UncReg;

/* Sapphire Rapids' CHA MSRs (the layout above). */
static X86PMUAccess decode_spr(const X86PMUUncoreState *s, uint32_t msr,
                               UncReg *reg, int *box, unsigned *i)
{
    unsigned off;

    if (msr == MSR_SPR_UNC_PMON_GLOBAL_CTL) {
        *reg = U_GLOBAL;
        return X86PMU_OK;
    }
    if (msr == MSR_SPR_UNC_CBO_CONFIG) {
        *reg = U_NCU_CONFIG;
        return X86PMU_OK;
    }
    if (msr < MSR_SPR_CHA_0 ||
        msr >= MSR_SPR_CHA_0 + 0x10 * X86PMU_UNC_MAX_BOXES) {
        return X86PMU_NOT_MINE;
    }
    *box = (msr - MSR_SPR_CHA_0) / 0x10;
    off = (msr - MSR_SPR_CHA_0) % 0x10;
    if (*box >= s->cfg.nboxes) {
        return X86PMU_GP;
    }
    if (off == 0) {
        *reg = U_BOX_CTL;
    } else if (off == 1) {
        *reg = U_STATUS;
    } else if (off >= 2 && off <= 5) {
        *reg = U_SEL, *i = off - 2;
    } else if (off >= 8 && off <= 0xb) {
        *reg = U_CTR, *i = off - 8;
    } else if (off == 0xe) {
        *reg = U_FILTER, *i = 0;
    } else {
        return X86PMU_GP;
    }
    return X86PMU_OK;
}

/* Which register `msr` is, and of which box (-1: the ARB) and counter. */
static X86PMUAccess decode(const X86PMUUncoreState *s, uint32_t msr,
                           UncReg *reg, int *box, unsigned *i)
{
    *box = 0;
    *i = 0;
    if (client(s)) {
        bool skl = s->cfg.layout == X86PMU_UNCORE_SKL_CLIENT;
        uint32_t global = skl ? MSR_SKL_UNC_PERF_GLOBAL_CTL :
                                MSR_UNC_PERF_GLOBAL_CTRL;

        if (msr == global) {
            *reg = U_GLOBAL;
            return X86PMU_OK;
        }
        if (msr == MSR_UNC_CBO_CONFIG) {
            *reg = U_CBO_CONFIG;
            return X86PMU_OK;
        }
        if (msr >= MSR_UNC_ARB_PERFCTR0 && msr < MSR_UNC_ARB_PERFCTR0 + 4) {
            *box = -1;
            *i = (msr - MSR_UNC_ARB_PERFCTR0) & 1;
            *reg = msr < MSR_UNC_ARB_PERFCTR0 + 2 ? U_CTR : U_SEL;
            return X86PMU_OK;
        }
        if (msr >= MSR_UNC_CBO_0 && msr < MSR_UNC_CBO_0 + 0x10 * 8) {
            unsigned off = (msr - MSR_UNC_CBO_0) % 0x10;

            *box = (msr - MSR_UNC_CBO_0) / 0x10;
            if (off < 2 || (off >= 6 && off < 8)) {
                *i = off & 1;
                *reg = off < 2 ? U_SEL : U_CTR;
                return *box < s->cfg.nboxes ? X86PMU_OK : X86PMU_GP;
            }
            return X86PMU_GP;
        }
        return X86PMU_NOT_MINE;
    }
    if (s->cfg.layout == X86PMU_UNCORE_SPR) {
        return decode_spr(s, msr, reg, box, i);
    }
    if (s->cfg.layout == X86PMU_UNCORE_SKX) {
        if (msr == MSR_SKX_NCU_PMON_CONFIG) {
            *reg = U_NCU_CONFIG;
            return X86PMU_OK;
        }
        if (msr >= MSR_SKX_CHA_0 &&
            msr < MSR_SKX_CHA_0 + 0x10 * X86PMU_UNC_MAX_BOXES) {
            unsigned off = (msr - MSR_SKX_CHA_0) % 0x10;

            *box = (msr - MSR_SKX_CHA_0) / 0x10;
            if (*box >= s->cfg.nboxes || off > 0xb) {
                return X86PMU_GP;
            }
            if (off == 0) {
                *reg = U_BOX_CTL;
            } else if (off <= 4) {
                *reg = U_SEL, *i = off - 1;
            } else if (off <= 6) {
                *reg = U_FILTER, *i = off - 5;
            } else if (off == 7) {
                *reg = U_STATUS;
            } else {
                *reg = U_CTR, *i = off - 8;
            }
            return X86PMU_OK;
        }
    }
    return X86PMU_NOT_MINE;
}

static X86PMUUncoreBox *box_of(X86PMUUncoreState *s, int box)
{
    return box < 0 ? &s->arb : &s->box[box];
}

X86PMUAccess x86pmu_uncore_rdmsr(X86PMUUncoreState *s, uint32_t msr,
                                 uint64_t *val)
{
    X86PMUAccess a;
    UncReg reg;
    unsigned i;
    int box;

    *val = 0;
    a = decode(s, msr, &reg, &box, &i);
    if (a != X86PMU_OK) {
        return a;
    }
    switch (reg) {
    case U_GLOBAL:
        *val = s->global_ctrl;
        break;
    case U_CBO_CONFIG:
        /* Haswell/Broadwell: "encoded number of C-Box, derive value by -1" */
        *val = s->cfg.nboxes +
               (s->cfg.layout == X86PMU_UNCORE_HSW_CLIENT ? 1 : 0);
        break;
    case U_NCU_CONFIG:
        *val = s->cfg.nboxes;
        break;
    case U_SEL:
        *val = box_of(s, box)->sel[i];
        break;
    case U_CTR:
        *val = box_of(s, box)->ctr[i];
        break;
    case U_BOX_CTL:
        *val = box_of(s, box)->box_ctl;
        break;
    case U_FILTER:
        *val = box_of(s, box)->filter[i];
        break;
    case U_STATUS:
        break;
    }
    return X86PMU_OK;
}

/* A discovery-era box control (MSR or MMIO): reset, then the freeze. */
static X86PMUAccess spr_box_ctl(X86PMUUncoreBox *b, uint64_t val,
                                bool reserved_ok)
{
    if ((val & ~SPR_BOX_CTL_VALID) && !reserved_ok) {
        return X86PMU_GP;
    }
    if (val & SPR_RST_CTRL) {
        memset(b->sel, 0, sizeof(b->sel));
    }
    if (val & SPR_RST_CTRS) {
        memset(b->ctr, 0, sizeof(b->ctr));
    }
    b->box_ctl = val & SPR_FRZ;
    return X86PMU_OK;
}

X86PMUAccess x86pmu_uncore_wrmsr(X86PMUUncoreState *s, uint32_t msr,
                                 uint64_t val)
{
    X86PMUUncoreBox *b;
    X86PMUAccess a;
    UncReg reg;
    unsigned i;
    int box;
    bool reserved_ok = s->cfg.defect == X86PMU_DEFECT_RESERVED_BITS_ACCEPTED;

    a = decode(s, msr, &reg, &box, &i);
    if (a != X86PMU_OK) {
        return a;
    }
    b = box_of(s, box);
    switch (reg) {
    case U_GLOBAL: {
        uint64_t pmi_sel = s->cfg.layout == X86PMU_UNCORE_SKL_CLIENT ?
                           0x1f : 0xf;

        if (s->cfg.layout == X86PMU_UNCORE_SPR) {
            if ((val & ~SPR_FRZ) && !reserved_ok) {
                return X86PMU_GP;
            }
            s->global_ctrl = val;
            break;
        }

        if ((val & ~(CLIENT_GLOBAL_VALID | pmi_sel)) && !reserved_ok) {
            return X86PMU_GP;
        }
        s->global_ctrl = val;
        break;
    }
    case U_CBO_CONFIG:
    case U_NCU_CONFIG:
    case U_STATUS:
        return X86PMU_GP;       /* read-only */
    case U_SEL:
        if ((val & ~(client(s) ? CLIENT_SEL_VALID : SERVER_SEL_VALID)) &&
            !reserved_ok) {
            return X86PMU_GP;
        }
        b->sel[i] = val;
        break;
    case U_CTR:
        if (!client(s) || ((val & ~MASK(CLIENT_WIDTH)) && !reserved_ok)) {
            return X86PMU_GP;
        }
        b->ctr[i] = val & MASK(CLIENT_WIDTH);
        break;
    case U_BOX_CTL:
        if (s->cfg.layout == X86PMU_UNCORE_SPR) {
            return spr_box_ctl(b, val, reserved_ok);
        }
        if ((val & ~BOX_CTL_VALID) && !reserved_ok) {
            return X86PMU_GP;
        }
        if (val & BOX_RST_CTRL) {
            memset(b->sel, 0, sizeof(b->sel));
        }
        if (val & BOX_RST_CTRS) {
            memset(b->ctr, 0, sizeof(b->ctr));
        }
        /* The reset bits act and read back 0. */
        b->box_ctl = val & ~(BOX_RST_CTRL | BOX_RST_CTRS);
        break;
    case U_FILTER:
        b->filter[i] = val;
        break;
    }
    return X86PMU_OK;
}

/* --- Skylake-SP memory channels, MCHBAR --- */

#define CHAN_CTR0       0xa0
#define CHAN_FIXED_CTR  0xd0
#define CHAN_SEL0       0xd8
#define CHAN_FIXED_CTL  0xf0
#define CHAN_BOX_CTL    0xf4

uint16_t x86pmu_uncore_chan_device(unsigned ch)
{
    static const uint16_t ids[X86PMU_UNC_CHANNELS] = {
        0x2042, 0x2046, 0x204a, 0x2042, 0x2046, 0x204a,
    };
    return ch < X86PMU_UNC_CHANNELS ? ids[ch] : 0;
}

bool x86pmu_uncore_chan_read(X86PMUUncoreState *s, unsigned ch, uint32_t off,
                             uint32_t *val)
{
    X86PMUUncoreBox *b;

    *val = 0;
    if (s->cfg.layout != X86PMU_UNCORE_SKX || ch >= X86PMU_UNC_CHANNELS) {
        return false;
    }
    b = &s->chan[ch];
    if (off >= CHAN_CTR0 && off < CHAN_CTR0 + 8 * X86PMU_UNC_MAX_CTRS) {
        uint64_t v = b->ctr[(off - CHAN_CTR0) / 8];

        *val = (off & 4) ? (uint32_t)(v >> 32) : (uint32_t)v;
    } else if (off >= CHAN_SEL0 && off < CHAN_SEL0 + 4 * X86PMU_UNC_MAX_CTRS) {
        *val = (uint32_t)b->sel[(off - CHAN_SEL0) / 4];
    } else if (off == CHAN_BOX_CTL) {
        *val = (uint32_t)b->box_ctl;
    } else if (off == CHAN_FIXED_CTL) {
        *val = (uint32_t)b->filter[0];
    } else if (off == CHAN_FIXED_CTR || off == CHAN_FIXED_CTR + 4) {
        *val = 0;
    } else {
        return false;
    }
    return true;
}

bool x86pmu_uncore_chan_write(X86PMUUncoreState *s, unsigned ch, uint32_t off,
                              uint32_t val)
{
    X86PMUUncoreBox *b;

    if (s->cfg.layout != X86PMU_UNCORE_SKX || ch >= X86PMU_UNC_CHANNELS) {
        return false;
    }
    b = &s->chan[ch];
    if (off >= CHAN_SEL0 && off < CHAN_SEL0 + 4 * X86PMU_UNC_MAX_CTRS) {
        b->sel[(off - CHAN_SEL0) / 4] = val;
    } else if (off == CHAN_BOX_CTL) {
        if (val & BOX_RST_CTRL) {
            memset(b->sel, 0, sizeof(b->sel));
        }
        if (val & BOX_RST_CTRS) {
            memset(b->ctr, 0, sizeof(b->ctr));
        }
        b->box_ctl = val & (BOX_FRZ | BOX_FRZ_EN);
    } else if (off == CHAN_FIXED_CTL) {
        b->filter[0] = val;
    } else if (off >= CHAN_CTR0 && off < CHAN_CTR0 + 8 * X86PMU_UNC_MAX_CTRS) {
        /* The counters are read-only: writes are dropped. */
    } else {
        return false;
    }
    return true;
}

/* --- Sapphire Rapids: memory channels in MMIO, the discovery table --- */

#define SPR_IMC_CTR0        0x08
#define SPR_IMC_FIXED_CTR   0x38
#define SPR_IMC_CTL0        0x40
#define SPR_IMC_FIXED_CTL   0x54

bool x86pmu_uncore_imc_read(const X86PMUUncoreState *s, unsigned ch,
                            uint32_t off, unsigned size, uint64_t *val)
{
    const X86PMUUncoreBox *b;
    uint64_t v;

    *val = 0;
    if (s->cfg.layout != X86PMU_UNCORE_SPR || ch >= X86PMU_UNC_SPR_CHANNELS ||
        (size != 4 && size != 8) || (off & (size - 1))) {
        return false;
    }
    b = &s->imc[ch];
    if (off >= SPR_IMC_CTR0 && off < SPR_IMC_CTR0 + 8 * X86PMU_UNC_MAX_CTRS) {
        v = b->ctr[(off - SPR_IMC_CTR0) / 8];
        *val = size == 8 ? v : (off & 4) ? v >> 32 : (uint32_t)v;
    } else if (size == 4 && off >= SPR_IMC_CTL0 &&
               off < SPR_IMC_CTL0 + 4 * X86PMU_UNC_MAX_CTRS) {
        *val = (uint32_t)b->sel[(off - SPR_IMC_CTL0) / 4];
    } else if (size == 4 && off == 0) {
        *val = (uint32_t)b->box_ctl;
    } else if (size == 4 && off == SPR_IMC_FIXED_CTL) {
        *val = (uint32_t)b->filter[0];
    } else if (off == SPR_IMC_FIXED_CTR || off == SPR_IMC_FIXED_CTR + 4) {
        *val = 0;
    } else {
        return false;
    }
    return true;
}

bool x86pmu_uncore_imc_write(X86PMUUncoreState *s, unsigned ch, uint32_t off,
                             unsigned size, uint64_t val)
{
    X86PMUUncoreBox *b;

    if (s->cfg.layout != X86PMU_UNCORE_SPR || ch >= X86PMU_UNC_SPR_CHANNELS ||
        size != 4 || (off & 3)) {
        return false;
    }
    b = &s->imc[ch];
    if (off >= SPR_IMC_CTL0 && off < SPR_IMC_CTL0 + 4 * X86PMU_UNC_MAX_CTRS) {
        b->sel[(off - SPR_IMC_CTL0) / 4] = (uint32_t)val;
    } else if (off == 0) {
        spr_box_ctl(b, (uint32_t)val, true);
    } else if (off == SPR_IMC_FIXED_CTL) {
        b->filter[0] = (uint32_t)val;
    } else if (off >= SPR_IMC_CTR0 && off < SPR_IMC_CTR0 + 8 * X86PMU_UNC_MAX_CTRS) {
        /* The counters are read-only: writes are dropped. */
    } else {
        return false;
    }
    return true;
}

/*
 * The table (Linux uncore_discovery.h): the global discovery state (type
 * [7:0], entry stride in qwords [15:8], entries [25:16], access type
 * [63:62]; the global control's address; status words), then a unit an
 * entry of DISC_STRIDE qwords: counters [7:0], control offset [15:8],
 * width [23:16], counter offset [31:24], access type [63:62]; the unit's
 * box control; type [15:0] and box ID [31:16].  Units: the CHAs (type 0,
 * MSR), then the memory channels (type 6, MMIO): Linux uncore_snbep.c
 * spr_uncores[] gives the types.
 */
#define DISC_STRIDE     4
#define DISC_MSR        0ull
#define DISC_MMIO       1ull
#define DISC_TYPE_CHA   0
#define DISC_TYPE_IMC   6

static uint64_t disc_entry(uint8_t nregs, uint8_t ctl_off, uint8_t ctr_off,
                           uint64_t access)
{
    return nregs | (uint64_t)ctl_off << 8 | (uint64_t)SERVER_WIDTH << 16 |
           (uint64_t)ctr_off << 24 | access << 62;
}

uint64_t x86pmu_discovery_word(const X86PMUUncoreState *s,
                               const uint64_t imc_base[2], unsigned idx)
{
    unsigned nunits = s->cfg.nboxes + X86PMU_UNC_SPR_CHANNELS;
    unsigned unit = idx / DISC_STRIDE, w = idx % DISC_STRIDE, k;
    uint64_t base;

    if (s->cfg.layout != X86PMU_UNCORE_SPR || unit > nunits || w > 2) {
        return 0;
    }
    if (unit == 0) {
        return w == 0 ? (uint64_t)DISC_STRIDE << 8 | (uint64_t)nunits << 16 :
               w == 1 ? MSR_SPR_UNC_PMON_GLOBAL_CTL : 0;
    }
    k = unit - 1;
    if (k < s->cfg.nboxes) {
        /* The defect: the counters listed one register too far. */
        uint8_t ctr = s->cfg.defect == X86PMU_DEFECT_DISCOVERY_COUNTER_OFFSET_WRONG ?
                      9 : 8;

        return w == 0 ? disc_entry(X86PMU_UNC_MAX_CTRS, 2, ctr, DISC_MSR) :
               w == 1 ? MSR_SPR_CHA_0 + 0x10 * k :
               DISC_TYPE_CHA | (uint64_t)k << 16;
    }
    k -= s->cfg.nboxes;
    /* The defect: the next package's channels listed as this one's. */
    base = imc_base[s->cfg.defect ==
                    X86PMU_DEFECT_DISCOVERY_UNIT_ON_WRONG_PACKAGE ? 1 : 0];
    if (w == 1) {
        return base ? base + X86PMU_SPR_IMC_STRIDE * k : 0;
    }
    return w == 0 ? disc_entry(X86PMU_UNC_MAX_CTRS, SPR_IMC_CTL0, SPR_IMC_CTR0,
                               DISC_MMIO) :
           DISC_TYPE_IMC | (uint64_t)k << 16;
}

bool x86pmu_uncore_mchbar_read(const X86PMUUncoreState *s, uint32_t off,
                               uint32_t *val)
{
    *val = 0;
    if (!client(s)) {
        return false;
    }
    if (off == MCHBAR_DRAM_READS) {
        *val = (uint32_t)s->dram_reads;
    } else if (off == MCHBAR_DRAM_WRITES) {
        *val = (uint32_t)s->dram_writes;
    } else {
        return false;
    }
    return true;
}

/* --- Counting --- */

static bool enabled(const X86PMUUncoreState *s, uint64_t sel)
{
    return (sel & SEL_EN) ||
           s->cfg.defect == X86PMU_DEFECT_UNCORE_IGNORES_ENABLE;
}

/* Add n to the counters of box b whose select says (event, umask & m). */
static void add(const X86PMUUncoreState *s, X86PMUUncoreBox *b, unsigned ev,
                unsigned umask_bits, unsigned width, uint64_t n)
{
    unsigned i;

    if (b->box_ctl & BOX_FRZ) {
        return;
    }
    for (i = 0; i < X86PMU_UNC_MAX_CTRS; i++) {
        uint64_t sel = b->sel[i];

        if (enabled(s, sel) && (sel & 0xff) == ev &&
            ((sel >> 8) & umask_bits)) {
            b->ctr[i] = (b->ctr[i] + n) & MASK(width);
        }
    }
}

/* The discovery-era boxes: no enable bit, the box's freeze bit 0. */
static void add_spr(X86PMUUncoreBox *b, unsigned ev, unsigned umask_bits,
                    uint64_t n)
{
    unsigned i;

    if (b->box_ctl & SPR_FRZ) {
        return;
    }
    for (i = 0; i < X86PMU_UNC_MAX_CTRS; i++) {
        uint64_t sel = b->sel[i];

        if ((sel & 0xff) == ev && ((sel >> 8) & umask_bits)) {
            b->ctr[i] = (b->ctr[i] + n) & MASK(SERVER_WIDTH);
        }
    }
}

static void count_one(X86PMUUncoreState *s, X86PMUUncoreEvent ev,
                      uint64_t line, uint64_t n)
{
    switch (s->cfg.layout) {
    case X86PMU_UNCORE_SNB_CLIENT:
    case X86PMU_UNCORE_HSW_CLIENT:
    case X86PMU_UNCORE_SKL_CLIENT:
        if (ev == X86PMU_UNC_CAS_READ) {
            s->dram_reads += n;
        } else if (ev == X86PMU_UNC_CAS_WRITE) {
            s->dram_writes += n;
        } else if ((s->global_ctrl & CLIENT_GLOBAL_EN) && s->cfg.nboxes) {
            /* UNC_CBO_CACHE_LOOKUP under the state found: M, E|S or I. */
            add(s, &s->box[line % s->cfg.nboxes], 0x34,
                ev == X86PMU_UNC_LLC_HIT_M ? 0x01 :
                ev == X86PMU_UNC_LLC_MISS ? 0x08 : 0x06, CLIENT_WIDTH, n);
        }
        break;
    case X86PMU_UNCORE_SKX:
        if (ev == X86PMU_UNC_CAS_READ) {
            add(s, &s->chan[line % X86PMU_UNC_CHANNELS], 0x04, 0x03,
                SERVER_WIDTH, n);
        } else if (ev == X86PMU_UNC_CAS_WRITE) {
            add(s, &s->chan[line % X86PMU_UNC_CHANNELS], 0x04, 0x0c,
                SERVER_WIDTH, n);
        } else if (s->cfg.nboxes) {
            /* UNC_CHA_REQUESTS.READS_LOCAL, whatever the LLC held */
            add(s, &s->box[line % s->cfg.nboxes], 0x50, 0x01, SERVER_WIDTH, n);
        }
        break;
    case X86PMU_UNCORE_SPR:
        if (s->global_ctrl & SPR_FRZ) {
            break;
        }
        if (ev == X86PMU_UNC_CAS_READ) {
            add_spr(&s->imc[line % X86PMU_UNC_SPR_CHANNELS], 0x05, 0x0f, n);
        } else if (ev == X86PMU_UNC_CAS_WRITE) {
            add_spr(&s->imc[line % X86PMU_UNC_SPR_CHANNELS], 0x05, 0x30, n);
        } else if (s->cfg.nboxes) {
            add_spr(&s->box[line % s->cfg.nboxes], 0x50, 0x01, n);
        }
        break;
    case X86PMU_UNCORE_NONE:
        break;
    }
}

void x86pmu_uncore_count(X86PMUUncoreState *const *pkgs, unsigned npkgs,
                         unsigned pkg, X86PMUUncoreEvent ev, uint64_t line,
                         uint64_t n)
{
    if (pkg >= npkgs || !pkgs[pkg] || !n) {
        return;
    }
    count_one(pkgs[pkg], ev, line, n);
    /* A package's events show up in the next package's boxes too. */
    if (pkgs[pkg]->cfg.defect == X86PMU_DEFECT_UNCORE_LEAKS_ACROSS_PACKAGES) {
        unsigned k;

        for (k = 1; k < npkgs; k++) {
            if (pkgs[(pkg + k) % npkgs]) {
                count_one(pkgs[(pkg + k) % npkgs], ev, line, n);
                break;
            }
        }
    }
}

bool x86pmu_uncore_watching(const X86PMUUncoreState *s)
{
    unsigned b, i;

    if (client(s)) {
        return true;    /* the free-running DRAM counters */
    }
    if (s->cfg.layout == X86PMU_UNCORE_SPR) {
        /* No enable bit: any programmed control may count. */
        for (b = 0; b < X86PMU_UNC_MAX_BOXES; b++) {
            for (i = 0; i < X86PMU_UNC_MAX_CTRS; i++) {
                if (s->box[b].sel[i]) {
                    return true;
                }
            }
        }
        for (b = 0; b < X86PMU_UNC_SPR_CHANNELS; b++) {
            for (i = 0; i < X86PMU_UNC_MAX_CTRS; i++) {
                if (s->imc[b].sel[i]) {
                    return true;
                }
            }
        }
        return false;
    }
    for (b = 0; b < X86PMU_UNC_MAX_BOXES; b++) {
        for (i = 0; i < X86PMU_UNC_MAX_CTRS; i++) {
            if (enabled(s, s->box[b].sel[i]) && s->box[b].sel[i]) {
                return true;
            }
        }
    }
    for (b = 0; b < X86PMU_UNC_CHANNELS; b++) {
        for (i = 0; i < X86PMU_UNC_MAX_CTRS; i++) {
            if (enabled(s, s->chan[b].sel[i]) && s->chan[b].sel[i]) {
                return true;
            }
        }
    }
    return false;
}
