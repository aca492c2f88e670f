/*
 * The emulated PMU's uncore (-cpu MODEL,pmu=on,pmu-uncore=on): the boxes of
 * each package, shared by that package's vCPUs, whose rules live in
 * pmutest's emu/model (x86-pmu-uncore.c).  This file keeps one state per
 * package under one lock, routes the package-scope MSRs to it, feeds it
 * what the cache model (pmu-sim.c) sees, and gives the memory controller's
 * other registers a home: the client layouts' MCHBAR on q35's host bridge,
 * and Skylake-SP's UBOX and memory channels as PCI functions
 * (-device x86-pmu-skx-ubox / x86-pmu-skx-imc), and Sapphire Rapids'
 * uncore discovery table with the memory channels it places
 * (-device x86-pmu-spr-discovery).  pmutest's emu/qemu/README.md says what
 * is emulated and why.
 *
 * Copyright (c) 2025 The pmutest authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "qemu/thread.h"
#include "qapi/error.h"
#include "cpu.h"
#include "exec/address-spaces.h"
#include "hw/boards.h"
#include "hw/pci/pci.h"
#include "hw/pci/pci_host.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "sysemu/reset.h"
#include "sysemu/sysemu.h"

#define PMU_MAX_PKGS        8
/* Where firmware puts MCHBAR on Intel clients (0:0.0 config 48H). */
#define PMU_MCHBAR_BASE     0xfed10000ull
#define PMU_MCHBAR_SIZE     0x8000
#define MCHBAR_REG          0x48
#define Q35_MCH_DEVICE_ID   0x29c0

typedef struct X86PMUPackage {
    X86PMUUncoreState st;
    unsigned socket;
    bool watching;          /* x86pmu_uncore_watching(), under the lock */
} X86PMUPackage;

static X86PMUPackage *pkgs[PMU_MAX_PKGS];
static X86PMUUncoreState *states[PMU_MAX_PKGS];
static QemuMutex uncore_lock;
static bool client_imc;
static MemoryRegion mchbar;
static Notifier mchbar_done;

/* --- MCHBAR: the client memory controller's free-running counters --- */

static uint64_t mchbar_read(void *opaque, hwaddr off, unsigned size)
{
    uint32_t sum = 0, v;
    unsigned p;

    /* One memory controller serves every package: their counts add. */
    qemu_mutex_lock(&uncore_lock);
    for (p = 0; p < PMU_MAX_PKGS; p++) {
        if (states[p] && x86pmu_uncore_mchbar_read(states[p], off & ~3, &v)) {
            sum += v;
        }
    }
    qemu_mutex_unlock(&uncore_lock);
    return size == 4 ? sum : extract32(sum, (off & 3) * 8, size * 8);
}

static void mchbar_write(void *opaque, hwaddr off, uint64_t val, unsigned size)
{
}

static const MemoryRegionOps mchbar_ops = {
    .read = mchbar_read,
    .write = mchbar_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 4 },
};

/*
 * As firmware does: MCHBAR enabled at its usual base in the host bridge
 * (q35's MCH; bit 0 MCHBAREN), read-only to the guest.
 */
static void mchbar_machine_done(Notifier *n, void *unused)
{
    Object *q35 = object_resolve_path("/machine/q35", NULL);
    PCIHostState *host = q35 ? PCI_HOST_BRIDGE(q35) : NULL;
    PCIDevice *d = host && host->bus ?
                   pci_find_device(host->bus, 0, PCI_DEVFN(0, 0)) : NULL;

    if (!d || pci_get_word(d->config + PCI_DEVICE_ID) != Q35_MCH_DEVICE_ID) {
        warn_report("pmu-uncore: no q35 host bridge at 0:0.0 to hold "
                    "MCHBAR; the client memory controller is not reachable");
        return;
    }
    pci_set_quad(d->config + MCHBAR_REG, PMU_MCHBAR_BASE | 1);
    pci_set_quad(d->wmask + MCHBAR_REG, 0);
}

static void mchbar_init(void)
{
    memory_region_init_io(&mchbar, NULL, &mchbar_ops, NULL, "pmu-mchbar",
                          PMU_MCHBAR_SIZE);
    memory_region_add_subregion_overlap(get_system_memory(), PMU_MCHBAR_BASE,
                                        &mchbar, 1);
    mchbar_done.notify = mchbar_machine_done;
    qemu_add_machine_init_done_notifier(&mchbar_done);
}

/* --- The packages --- */

/*
 * The uncore is the package's: the machine's reset (power-up, RESET,
 * QEMU's system reset) clears it, a vCPU's INIT does not.  INIT leaves
 * the performance-monitoring MSRs unchanged (SDM vol. 3A,
 * "Initialization", the table of processor states following power-up,
 * reset or INIT), and starting a package's first CPU with INIT-SIPI-SIPI
 * must not clear what another CPU of the machine programmed.
 */
static void kick_package(X86PMUPackage *p);

static void package_reset(void *opaque)
{
    X86PMUPackage *p = opaque;
    bool was, now;

    qemu_mutex_lock(&uncore_lock);
    was = p->watching;
    x86pmu_uncore_reset(&p->st, &p->st.cfg);
    now = x86pmu_uncore_watching(&p->st);
    qatomic_set(&p->watching, now);
    qemu_mutex_unlock(&uncore_lock);
    if (was != now) {
        kick_package(p);
    }
}

bool x86_pmu_uncore_realize(X86CPU *cpu, Error **errp)
{
    MachineState *ms = MACHINE(qdev_get_machine());
    uint32_t v = cpu->env.cpuid_version;
    uint32_t family = ((v >> 8) & 0xf) == 0xf ? 0xf + ((v >> 20) & 0xff) :
                      (v >> 8) & 0xf;
    uint32_t model = ((v >> 4) & 0xf) |
                     (family == 6 || family >= 0xf ? (v >> 12) & 0xf0 : 0);
    unsigned socket = cpu->socket_id > 0 ? cpu->socket_id : 0;
    X86PMUUncoreConfig cfg;
    X86PMUPackage *p;

    if (cpu->pmu_cfg.vendor != X86PMU_VENDOR_INTEL) {
        error_setg(errp, "pmu-uncore=on: the emulated uncore is Intel's");
        return false;
    }
    x86pmu_uncore_shape(family, model, ms->smp.cores * ms->smp.dies, &cfg);
    if (cfg.layout == X86PMU_UNCORE_NONE) {
        error_setg(errp, "pmu-uncore=on: no uncore layout for family 0x%x "
                   "model 0x%x; pmutest's emu/qemu/README.md lists them",
                   family, model);
        return false;
    }
    if (socket >= PMU_MAX_PKGS) {
        error_setg(errp, "pmu-uncore=on: socket %u: at most %d packages",
                   socket, PMU_MAX_PKGS);
        return false;
    }
    cfg.defect = cpu->pmu_cfg.defect;
    if (!uncore_lock.initialized) {
        qemu_mutex_init(&uncore_lock);
    }
    p = pkgs[socket];
    if (!p) {
        p = g_new0(X86PMUPackage, 1);
        x86pmu_uncore_reset(&p->st, &cfg);
        p->socket = socket;
        pkgs[socket] = p;
        qemu_register_reset(package_reset, p);
        states[socket] = &p->st;
        if (cfg.layout != X86PMU_UNCORE_SKX &&
            cfg.layout != X86PMU_UNCORE_SPR && !client_imc) {
            client_imc = true;
            mchbar_init();
        }
    } else if (p->st.cfg.layout != cfg.layout) {
        error_setg(errp, "pmu-uncore=on: socket %u mixes CPU models", socket);
        return false;
    }
    cpu->pmu_pkg = p;
    return true;
}

static void kick_work(CPUState *cs, run_on_cpu_data data)
{
    x86_pmu_rethink(cs->env_ptr);
}

/*
 * The package's vCPUs re-decide whether to watch their caches, between
 * TBs (async_run_on_cpu kicks them out of their TB chains), the one that
 * made the change included: a PCI write is no instruction that ends a TB.
 */
static void kick_package(X86PMUPackage *p)
{
    CPUState *cs;

    CPU_FOREACH(cs) {
        if (X86_CPU(cs)->pmu_pkg == p) {
            async_run_on_cpu(cs, kick_work, RUN_ON_CPU_NULL);
        }
    }
}

/* 1: handled, -1: #GP, 0: not an uncore register. */
int x86_pmu_uncore_rdmsr(CPUX86State *env, uint32_t msr, uint64_t *val)
{
    X86PMUPackage *p = env_archcpu(env)->pmu_pkg;
    X86PMUAccess a;

    if (!p) {
        return 0;
    }
    qemu_mutex_lock(&uncore_lock);
    a = x86pmu_uncore_rdmsr(&p->st, msr, val);
    qemu_mutex_unlock(&uncore_lock);
    return a == X86PMU_OK ? 1 : a == X86PMU_GP ? -1 : 0;
}

int x86_pmu_uncore_wrmsr(CPUX86State *env, uint32_t msr, uint64_t val)
{
    X86PMUPackage *p = env_archcpu(env)->pmu_pkg;
    X86PMUAccess a;
    bool was, now;

    if (!p) {
        return 0;
    }
    qemu_mutex_lock(&uncore_lock);
    was = p->watching;
    a = x86pmu_uncore_wrmsr(&p->st, msr, val);
    now = x86pmu_uncore_watching(&p->st);
    qatomic_set(&p->watching, now);
    qemu_mutex_unlock(&uncore_lock);
    if (was != now) {
        kick_package(p);
    }
    return a == X86PMU_OK ? 1 : a == X86PMU_GP ? -1 : 0;
}

bool x86_pmu_uncore_watching(CPUX86State *env)
{
    X86PMUPackage *p = env_archcpu(env)->pmu_pkg;

    return p && qatomic_read(&p->watching);
}

void x86_pmu_uncore_event(CPUX86State *env, X86PMUUncoreEvent ev,
                          uint64_t line)
{
    X86PMUPackage *p = env_archcpu(env)->pmu_pkg;

    if (!p) {
        return;
    }
    qemu_mutex_lock(&uncore_lock);
    x86pmu_uncore_count(states, PMU_MAX_PKGS, p->socket, ev, line, 1);
    qemu_mutex_unlock(&uncore_lock);
}

/* --- Skylake-SP: the UBOX and the memory channels in PCI --- */

#define TYPE_X86_PMU_SKX_UBOX "x86-pmu-skx-ubox"
#define TYPE_X86_PMU_SKX_IMC "x86-pmu-skx-imc"
#define SKX_UBOX_DEVICE_ID  0x2014
#define SKX_UBOX_NODE_ID    0xc0    /* [2:0] this socket's node ID */
#define SKX_UBOX_GIDNIDMAP  0xd4    /* 3 bits a package: its node ID */
#define SKX_CHAN_REGS       0xa0    /* the channel's PMON registers from here */

#define TYPE_X86_PMU_SKX_FN "x86-pmu-skx-fn"

typedef struct X86PMUSkxFn {
    PCIDevice parent;
    uint32_t socket, channel;
} X86PMUSkxFn;

OBJECT_DECLARE_SIMPLE_TYPE(X86PMUSkxFn, X86_PMU_SKX_FN)

static X86PMUUncoreState *skx_state(X86PMUSkxFn *f, Error **errp)
{
    if (f->socket >= PMU_MAX_PKGS || !states[f->socket] ||
        states[f->socket]->cfg.layout != X86PMU_UNCORE_SKX) {
        error_setg(errp, "socket %u has no Skylake-SP uncore (its CPUs need "
                   "-cpu Skylake-Server,pmu=on,pmu-uncore=on)", f->socket);
        return NULL;
    }
    return states[f->socket];
}

static void skx_ubox_realize(PCIDevice *d, Error **errp)
{
    X86PMUSkxFn *f = X86_PMU_SKX_FN(d);
    uint32_t map = 0;
    unsigned i;

    if (!skx_state(f, errp)) {
        return;
    }
    /* Node IDs are the sockets; package i is node i. */
    for (i = 0; i < 8; i++) {
        map |= i << (3 * i);
    }
    pci_set_long(d->config + SKX_UBOX_NODE_ID, f->socket);
    pci_set_long(d->config + SKX_UBOX_GIDNIDMAP, map);
}

static void skx_imc_realize(PCIDevice *d, Error **errp)
{
    X86PMUSkxFn *f = X86_PMU_SKX_FN(d);

    if (!skx_state(f, errp)) {
        return;
    }
    if (f->channel >= X86PMU_UNC_CHANNELS) {
        error_setg(errp, "channel %u: Skylake-SP has %d", f->channel,
                   X86PMU_UNC_CHANNELS);
        return;
    }
    pci_set_word(d->config + PCI_DEVICE_ID,
                 x86pmu_uncore_chan_device(f->channel));
}

static uint32_t skx_imc_read(PCIDevice *d, uint32_t addr, int len)
{
    X86PMUSkxFn *f = X86_PMU_SKX_FN(d);
    uint32_t v;
    bool mine;

    if (addr < SKX_CHAN_REGS) {
        return pci_default_read_config(d, addr, len);
    }
    qemu_mutex_lock(&uncore_lock);
    mine = x86pmu_uncore_chan_read(states[f->socket], f->channel, addr & ~3,
                                   &v);
    qemu_mutex_unlock(&uncore_lock);
    if (!mine) {
        return pci_default_read_config(d, addr, len);
    }
    return len == 4 ? v : extract32(v, (addr & 3) * 8, len * 8);
}

static void skx_imc_write(PCIDevice *d, uint32_t addr, uint32_t val, int len)
{
    X86PMUSkxFn *f = X86_PMU_SKX_FN(d);
    bool mine = false;

    if (addr >= SKX_CHAN_REGS && len == 4 && !(addr & 3)) {
        qemu_mutex_lock(&uncore_lock);
        mine = x86pmu_uncore_chan_write(states[f->socket], f->channel, addr,
                                        val);
        qatomic_set(&pkgs[f->socket]->watching,
                    x86pmu_uncore_watching(states[f->socket]));
        qemu_mutex_unlock(&uncore_lock);
        kick_package(pkgs[f->socket]);
    }
    if (!mine) {
        pci_default_write_config(d, addr, val, len);
    }
}

static Property skx_fn_properties[] = {
    DEFINE_PROP_UINT32("socket", X86PMUSkxFn, socket, 0),
    DEFINE_PROP_UINT32("channel", X86PMUSkxFn, channel, 0),
    DEFINE_PROP_END_OF_LIST(),
};

static void skx_fn_class_init(ObjectClass *oc, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(oc);

    k->vendor_id = PCI_VENDOR_ID_INTEL;
    k->class_id = PCI_CLASS_SYSTEM_OTHER;
    device_class_set_props(dc, skx_fn_properties);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static void skx_ubox_class_init(ObjectClass *oc, void *data)
{
    PCIDeviceClass *k = PCI_DEVICE_CLASS(oc);
    DeviceClass *dc = DEVICE_CLASS(oc);

    k->realize = skx_ubox_realize;
    k->device_id = SKX_UBOX_DEVICE_ID;
    dc->desc = "Skylake-SP UBOX (emulated PMU: socket node ID and map)";
}

static void skx_imc_class_init(ObjectClass *oc, void *data)
{
    PCIDeviceClass *k = PCI_DEVICE_CLASS(oc);
    DeviceClass *dc = DEVICE_CLASS(oc);

    k->realize = skx_imc_realize;
    k->config_read = skx_imc_read;
    k->config_write = skx_imc_write;
    dc->desc = "Skylake-SP memory channel (emulated PMU: CAS counters)";
}

static const TypeInfo skx_fn_types[] = {
    {
        .name = TYPE_X86_PMU_SKX_FN,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(X86PMUSkxFn),
        .class_init = skx_fn_class_init,
        .abstract = true,
        .interfaces = (InterfaceInfo[]) {
            { INTERFACE_CONVENTIONAL_PCI_DEVICE },
            { },
        },
    }, {
        .name = TYPE_X86_PMU_SKX_UBOX,
        .parent = TYPE_X86_PMU_SKX_FN,
        .class_init = skx_ubox_class_init,
    }, {
        .name = TYPE_X86_PMU_SKX_IMC,
        .parent = TYPE_X86_PMU_SKX_FN,
        .class_init = skx_imc_class_init,
    },
};

DEFINE_TYPES(skx_fn_types)

/*
 * --- Sapphire Rapids: the discovery table and the memory channels ---
 *
 * One PCI Express function a socket (8086:09A7, the generic discovery
 * table device of Linux's uncore_discovery.h), with the PMON DVSEC at
 * 100H (extended capability 23H, DVSEC ID 1, BIR 0), BAR0 the table the
 * model writes (x86-pmu-discovery.c) and BAR2 the socket's memory
 * channels, one 4 KiB page each, the MMIO units the table lists.  Both
 * BARs are 32-bit, so the firmware places them below 4 GiB.
 */

#define TYPE_X86_PMU_SPR_DISCOVERY "x86-pmu-spr-discovery"
#define SPR_DVSEC_OFFSET    0x100
#define SPR_DVSEC_SIZE      0x10
#define SPR_TABLE_SIZE      0x1000
#define SPR_IMC_SIZE        (X86PMU_UNC_SPR_CHANNELS * X86PMU_SPR_IMC_STRIDE)

typedef struct X86PMUSprDiscovery {
    PCIDevice parent;
    uint32_t socket;
    MemoryRegion table, imc;
} X86PMUSprDiscovery;

OBJECT_DECLARE_SIMPLE_TYPE(X86PMUSprDiscovery, X86_PMU_SPR_DISCOVERY)

static X86PMUSprDiscovery *spr_devs[PMU_MAX_PKGS];

/* Where socket p's channels are: BAR2 as the firmware placed it, or 0. */
static uint64_t spr_imc_base(unsigned p)
{
    X86PMUSprDiscovery *f = p < PMU_MAX_PKGS ? spr_devs[p] : NULL;
    pcibus_t a = f ? pci_get_bar_addr(&f->parent, 2) : PCI_BAR_UNMAPPED;

    return a == PCI_BAR_UNMAPPED ? 0 : a;
}

static uint64_t spr_table_read(void *opaque, hwaddr off, unsigned size)
{
    X86PMUSprDiscovery *f = opaque;
    uint64_t bases[2], w;
    unsigned next = f->socket + 1;

    /* The socket after this one (the first after the last): a table
     * with the defect lists its channels. */
    while (next != f->socket && (next >= PMU_MAX_PKGS || !spr_devs[next])) {
        next = next >= PMU_MAX_PKGS ? 0 : next + 1;
    }
    bases[0] = spr_imc_base(f->socket);
    bases[1] = spr_imc_base(next);
    qemu_mutex_lock(&uncore_lock);
    w = x86pmu_discovery_word(states[f->socket], bases, off / 8);
    qemu_mutex_unlock(&uncore_lock);
    return size == 8 ? w : extract64(w, (off & 7) * 8, size * 8);
}

static void spr_table_write(void *opaque, hwaddr off, uint64_t val,
                            unsigned size)
{
}

static const MemoryRegionOps spr_table_ops = {
    .read = spr_table_read,
    .write = spr_table_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 4, .max_access_size = 8 },
    .impl = { .min_access_size = 4, .max_access_size = 8 },
};

static uint64_t spr_imc_read(void *opaque, hwaddr off, unsigned size)
{
    X86PMUSprDiscovery *f = opaque;
    uint64_t v = 0;

    qemu_mutex_lock(&uncore_lock);
    x86pmu_uncore_imc_read(states[f->socket], off / X86PMU_SPR_IMC_STRIDE,
                           off % X86PMU_SPR_IMC_STRIDE, size, &v);
    qemu_mutex_unlock(&uncore_lock);
    return v;
}

static void spr_imc_write(void *opaque, hwaddr off, uint64_t val,
                          unsigned size)
{
    X86PMUSprDiscovery *f = opaque;
    X86PMUPackage *p = pkgs[f->socket];

    qemu_mutex_lock(&uncore_lock);
    x86pmu_uncore_imc_write(&p->st, off / X86PMU_SPR_IMC_STRIDE,
                            off % X86PMU_SPR_IMC_STRIDE, size, val);
    qatomic_set(&p->watching, x86pmu_uncore_watching(&p->st));
    qemu_mutex_unlock(&uncore_lock);
    kick_package(p);
}

static const MemoryRegionOps spr_imc_ops = {
    .read = spr_imc_read,
    .write = spr_imc_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 4, .max_access_size = 8 },
    .impl = { .min_access_size = 4, .max_access_size = 8 },
};

static void spr_discovery_realize(PCIDevice *d, Error **errp)
{
    X86PMUSprDiscovery *f = X86_PMU_SPR_DISCOVERY(d);

    if (f->socket >= PMU_MAX_PKGS || !states[f->socket] ||
        states[f->socket]->cfg.layout != X86PMU_UNCORE_SPR) {
        error_setg(errp, "socket %u has no Sapphire Rapids uncore (its CPUs "
                   "need -cpu Icelake-Server,model=143,pmu=on,pmu-uncore=on)",
                   f->socket);
        return;
    }
    if (spr_devs[f->socket]) {
        error_setg(errp, "socket %u has a discovery table already",
                   f->socket);
        return;
    }
    /* DVSEC header 1: vendor 8086, revision 0, length; header 2: the
     * PMON discovery ID; then the BIR dword naming BAR0. */
    pcie_add_capability(d, PCI_EXT_CAP_ID_DVSEC, 1, SPR_DVSEC_OFFSET,
                        SPR_DVSEC_SIZE);
    pci_set_long(d->config + SPR_DVSEC_OFFSET + 4,
                 PCI_VENDOR_ID_INTEL | SPR_DVSEC_SIZE << 20);
    pci_set_long(d->config + SPR_DVSEC_OFFSET + 8, 1);
    pci_set_long(d->config + SPR_DVSEC_OFFSET + 12, 0);
    memory_region_init_io(&f->table, OBJECT(d), &spr_table_ops, f,
                          "pmu-spr-discovery-table", SPR_TABLE_SIZE);
    memory_region_init_io(&f->imc, OBJECT(d), &spr_imc_ops, f,
                          "pmu-spr-imc", SPR_IMC_SIZE);
    pci_register_bar(d, 0, PCI_BASE_ADDRESS_SPACE_MEMORY, &f->table);
    pci_register_bar(d, 2, PCI_BASE_ADDRESS_SPACE_MEMORY, &f->imc);
    spr_devs[f->socket] = f;
}

static Property spr_discovery_properties[] = {
    DEFINE_PROP_UINT32("socket", X86PMUSprDiscovery, socket, 0),
    DEFINE_PROP_END_OF_LIST(),
};

static void spr_discovery_class_init(ObjectClass *oc, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(oc);

    k->vendor_id = PCI_VENDOR_ID_INTEL;
    k->device_id = X86PMU_DISCOVERY_DEVICE_ID;
    k->class_id = PCI_CLASS_SYSTEM_OTHER;
    k->realize = spr_discovery_realize;
    device_class_set_props(dc, spr_discovery_properties);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
    dc->desc = "Sapphire Rapids uncore discovery table (emulated PMU)";
}

static const TypeInfo spr_discovery_type = {
    .name = TYPE_X86_PMU_SPR_DISCOVERY,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(X86PMUSprDiscovery),
    .class_init = spr_discovery_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { },
    },
};

static void spr_discovery_register(void)
{
    type_register_static(&spr_discovery_type);
}

type_init(spr_discovery_register)
