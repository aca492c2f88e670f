/* The host PMU model: implements pmu/pmu_hw.h over simulated CPUs. Their
 * PMU registers are emu/model, the register model QEMU runs for its
 * emulated PMU (SDM vol. 3B "Performance Monitoring", vol. 4 table 2-2,
 * vol. 2B RDPMC; AMD APM vol. 2 13.2 for AMD CPUs, whose profiles are in
 * tests/host/pmu_model_amd.c); this file keeps what only the host tests need: the
 * profiles, the CPUs and the current one, the write trace, the offcore
 * response MSRs and the client uncore, and the behaviours of broken
 * emulations (writes ignored, RDPMC refused, counters that never count).
 * Approximations are named where they are made. */
#include "tests/host/pmu_model.h"

#include <stdio.h>
#include <string.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/msr.h"
#include "emu/model/x86-pmu-uncore.h"
#include "emu/model/x86-pmu.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"

#define MODEL_TRACE_MAX 4096

struct model_cpu {
	struct model_cpu_config cfg;
	X86PMUState pmu; /* the PMU registers (emu/model), offcore response included */
	unsigned pmi_count;
	uint64_t tsc;
};

static struct model_cpu cpus[MODEL_MAX_CPUS];

/* The uncore: one per package (emu/model), the package from the x2APIC ID
 * as CPUID.0BH reports it. */
static X86PMUUncoreState unc_state[MODEL_MAX_PKGS];
static X86PMUUncoreState *unc_pkgs[MODEL_MAX_PKGS];
static void uncore_init(void);
static unsigned ncpus = 1, cur;
static unsigned cur_cpl;
static bool cur_pce;
static struct model_write trace[MODEL_TRACE_MAX];
static size_t trace_len;
static struct model_platform platform;
static void (*rdpmc_hook)(void *);
static void *rdpmc_hook_arg;
static void (*pmi_handler)(void *);
static void *pmi_handler_arg;

/* --- Profiles --- */

/* No profile has fast_rdpmc: with an architectural PMU (version >= 1)
 * RDPMC's ECX[31] is reserved and #GPs (SDM vol. 2B, RDPMC; confirmed on
 * bare metal in KVM commit "KVM: x86/pmu: Disallow 'fast' RDPMC for
 * architectural Intel PMUs"). Only pre-architectural parts had it. */

/* Family 6 signatures: 0x0006_06e8 Core Duo (model 0xE), 0x0000_06f6 Core 2
 * (0xF), 0x0005_06e3 Skylake (0x5E), 0x0009_06a3 Alder Lake (0x9A). */
static const struct model_cpu_config base_cfg = {
	.vendor = "GenuineIntel",
	.signature = 0x000506e3,
	.max_leaf = 0x16,
};

/* Offcore layouts the QEMU shapes do not have (emu/model has Skylake's):
 * Sandy Bridge client (SDM vol. 3B, Sandy Bridge off-core response; valid
 * bits as Linux intel_snb_extra_regs: no remote suppliers 23-30; L3 hit 18,
 * local DRAM 22, SNOOP_NOT_NEEDED 32, SNOOP_MISS 33) and Nehalem/Westmere
 * (one 16-bit field: requests [7:0], responses [15:8], UNCORE_HIT 8,
 * LOCAL_DRAM 14, no snoop field). */
static const X86PMUOffcoreConfig snb_client_offcore = {
	.nmsrs = 2,
	.event = { 0xb7, 0xbb },
	.umask = { 0x01, 0x01 },
	.valid = { 0x3f807f8fffull, 0x3f807f8fffull },
	.any_response = 1ull << 16,
	.hit_supplier = 1ull << 18,
	.hit_snoop = 1ull << 32,
	.miss_supplier = 1ull << 22,
	.miss_snoop = 1ull << 33,
};
static const X86PMUOffcoreConfig nhm_offcore = {
	.nmsrs = 2,
	.event = { 0xb7, 0xbb },
	.umask = { 0x01, 0x01 },
	.valid = { 0xffffull, 0xffffull },
	.hit_supplier = 1ull << 8,
	.miss_supplier = 1ull << 14,
};

static struct model_cpu_config profile_cfg(enum model_profile p, unsigned cpu, bool full_width)
{
	struct model_cpu_config c = base_cfg;

	switch (p) {
	case MODEL_NO_PMU: c.max_leaf = 0x0d; break;
	case MODEL_IGNORES_WRITES:
		c.version = 2, c.num_gp = 2, c.gp_width = 40, c.ebx_len = 7;
		c.num_fixed = 3, c.fixed_width = 40, c.hypervisor = true;
		c.ignores_writes = true;
		break;
	case MODEL_V1:
		c.signature = 0x000006e8, c.max_leaf = 0x0a;
		c.version = 1, c.num_gp = 2, c.gp_width = 40, c.ebx_len = 7;
		break;
	case MODEL_V2:
		c.signature = 0x000006f6, c.max_leaf = 0x0a;
		c.version = 2, c.num_gp = 2, c.gp_width = 40, c.ebx_len = 7;
		c.num_fixed = 3, c.fixed_width = 40;
		c.pdcm = true, c.perf_caps = 0x0001; /* LBR format 1 */
		break;
	case MODEL_V4:
		c.version = 4, c.num_gp = 4, c.gp_width = 48, c.ebx_len = 7;
		c.num_fixed = 3, c.fixed_width = 48;
		c.pdcm = true, c.perf_caps = 0x33c5; /* LBR fmt 5, PEBS trap+arch regs, fmt 3, SMM freeze */
		x86pmu_offcore_shape(6, 0x5e, &c.offcore); /* Skylake's, as QEMU's */
		break;
	case MODEL_V5_GAP:
		c.signature = 0x000906a3, c.max_leaf = 0x1f;
		c.version = 5, c.num_gp = 8, c.gp_width = 48, c.ebx_len = 8;
		c.num_fixed = 2, c.fixed_width = 48, c.fixed_bitmap = 0x0b; /* 0, 1, 3 */
		c.pdcm = true, c.perf_caps = 0xf4c5;
		break;
	case MODEL_HYBRID:
		c.signature = 0x000906a3, c.max_leaf = 0x23, c.hybrid = true;
		c.version = 5, c.gp_width = 48, c.fixed_width = 48, c.leaf23 = true;
		c.pdcm = true, c.perf_caps = 0xf4c5;
		if (cpu < 2) {
			c.num_gp = 8, c.ebx_len = 8, c.num_fixed = 4, c.core_type = 0x40;
			c.native_model = 0x1, c.leaf23_gp = 0xff, c.leaf23_fixed = 0xf;
		} else {
			c.num_gp = 6, c.ebx_len = 7, c.num_fixed = 3, c.core_type = 0x20;
			c.native_model = 0x2, c.leaf23_gp = 0x3f, c.leaf23_fixed = 0x7;
		}
		break;
	case MODEL_SNB_CLIENT:
		c.signature = 0x000206a7, c.max_leaf = 0x0d;
		c.version = 3, c.num_gp = 4, c.gp_width = 48, c.ebx_len = 7;
		c.num_fixed = 3, c.fixed_width = 48;
		c.pdcm = true, c.perf_caps = 0x11c3; /* LBR fmt 3, PEBS trap+arch regs, fmt 1, SMM freeze */
		c.offcore = snb_client_offcore;
		c.leaf_0b = true, c.smt_bits = 1, c.x2apic_id = cpu, c.cores_per_pkg = 4;
		c.uncore = MODEL_UNCORE_SNB, c.uncore_cboxes = 4;
		break;
	case MODEL_WESTMERE:
		c.signature = 0x000206c2, c.max_leaf = 0x0b;
		c.version = 3, c.num_gp = 4, c.gp_width = 48, c.ebx_len = 7;
		c.num_fixed = 3, c.fixed_width = 48;
		c.pdcm = true, c.perf_caps = 0x11c2;
		c.offcore = nhm_offcore, c.offcore_shared = true;
		c.leaf_0b = true, c.smt_bits = 1, c.x2apic_id = cpu, c.cores_per_pkg = 6;
		break;
	case MODEL_PROFILE_NR: break;
	}
	if (c.pdcm && full_width)
		c.perf_caps |= BIT(PERF_CAP_FW_WRITE_BIT);
	else
		c.perf_caps &= ~BIT(PERF_CAP_FW_WRITE_BIT);
	return c;
}

const char *model_profile_name(enum model_profile p)
{
	static const char *const names[MODEL_PROFILE_NR] = {
		[MODEL_NO_PMU] = "no-pmu",
		[MODEL_IGNORES_WRITES] = "ignores-writes",
		[MODEL_V1] = "v1",
		[MODEL_V2] = "v2",
		[MODEL_V4] = "v4",
		[MODEL_V5_GAP] = "v5-gap",
		[MODEL_HYBRID] = "hybrid",
		[MODEL_SNB_CLIENT] = "snb-client",
		[MODEL_WESTMERE] = "westmere",
	};
	return p < MODEL_PROFILE_NR ? names[p] : "?";
}

/* The register model's view of a profile. The profiles' LBR and PEBS
 * bits of IA32_PERF_CAPABILITIES are only reported, as on hardware the
 * driver does not use them; "fast RDPMC" (pre-architectural parts) is
 * the model's quirk of the same behaviour (low 32 bits). The work of a
 * tick gives its top-down slots itself: none are implied per cycle. */
static bool is_amd(const struct model_cpu_config *c)
{
	return strcmp(c->vendor, "AuthenticAMD") == 0 || strcmp(c->vendor, "HygonGenuine") == 0;
}

/* DisplayFamily (SDM vol. 2A / APM vol. 3, CPUID Fn0000_0001_EAX): base +
 * extended when the base family is 0Fh. */
static uint32_t family_of(uint32_t sig)
{
	uint32_t f = BITS(sig, 11, 8);
	return f == 0xf ? f + (uint32_t)BITS(sig, 27, 20) : f;
}

static X86PMUConfig pmu_config(const struct model_cpu_config *c)
{
	if (is_amd(c)) {
		X86PMUConfig a = {
			.vendor = X86PMU_VENDOR_AMD,
			.family = family_of(c->signature),
			.perfctr_core = c->amd_ext_core,
			.perfmon_v2 = c->amd_perfmon_v2,
			.lbr_pmc_freeze = c->amd_lbr_pmc_freeze,
			.num_gp = c->amd_counters,
			.gp_width = X86PMU_AMD_WIDTH,
			/* Reserved bits #GP, as the emulated AMD silicon
			 * profiles run (emu/profiles.list): the driver's
			 * refusal before the write is checked against it. */
			.amd_reserved_gp = true,
		};
		return a;
	}
	X86PMUConfig p = {
		.vendor = X86PMU_VENDOR_INTEL,
		.version = c->version,
		.num_gp = c->num_gp,
		.gp_width = c->gp_width,
		.events_len = c->ebx_len,
		.events_unavail = c->ebx_unavail,
		.num_fixed = c->num_fixed,
		.fixed_width = c->fixed_width,
		.fixed_bitmap = c->fixed_bitmap,
		.anythread_deprecated = c->anythread_deprecated,
		.pdcm = c->pdcm,
		.perf_caps = c->perf_caps,
		.hybrid = c->hybrid,
		.core_type = c->core_type,
		.native_model = c->native_model,
		.leaf23 = c->leaf23,
		.leaf23_gp = c->leaf23_gp,
		.leaf23_fixed = c->leaf23_fixed,
		.v6_features = c->v6_features,
		.acr = c->acr,
		.acr_reload = c->acr_reload,
		.acr_cause = c->acr_cause,
		.leaf23_events = c->leaf23_events,
		.events_avail23 = c->events_avail23,
		.slots_per_cycle = 0,
		.offcore = c->offcore,
		.quirks = c->quirks | (c->fast_rdpmc ? X86PMU_QUIRK_KVM_FAST_RDPMC_ALLOWED : 0),
	};
	return p;
}

static void reset_cpu(struct model_cpu *m, const struct model_cpu_config *cfg)
{
	X86PMUConfig p = pmu_config(cfg);

	memset(m, 0, sizeof(*m));
	m->cfg = *cfg;
	/* RESET state, GLOBAL_CTRL's GP enables included (emu/model). A
	 * broken emulation that ignores writes reads 0 everywhere. */
	if (cfg->ignores_writes)
		p.quirks |= X86PMU_QUIRK_GLOBAL_CTRL_RESET_ZERO;
	x86pmu_reset(&m->pmu, &p);
}

void model_init_custom(const struct model_cpu_config *cfgs, unsigned n)
{
	ncpus = n > MODEL_MAX_CPUS ? MODEL_MAX_CPUS : (n ? n : 1);
	for (unsigned c = 0; c < ncpus; c++) {
		reset_cpu(&cpus[c], &cfgs[c]);
		if (cfgs[c].cpu_ops)
			cfgs[c].cpu_ops->reset(c);
	}
	uncore_init();
	cur = 0;
	cur_cpl = 0;
	cur_pce = false;
	trace_len = 0;
	rdpmc_hook = NULL;
	pmi_handler = NULL;
	platform = (struct model_platform){ 0 };
}

void model_init(enum model_profile p, bool full_width)
{
	struct model_cpu_config cfgs[4];

	for (unsigned c = 0; c < 4; c++)
		cfgs[c] = profile_cfg(p, c, full_width);
	model_init_custom(cfgs, 4);
}

const struct model_cpu_config *model_config(unsigned cpu)
{
	return cpu < ncpus ? &cpus[cpu].cfg : NULL;
}

void model_set_cpu(unsigned cpu)
{
	cur = cpu < ncpus ? cpu : 0;
}
unsigned model_cpu(void)
{
	return cur;
}
unsigned model_ncpus(void)
{
	return ncpus;
}

void model_run_on(unsigned cpu, void (*fn)(void *), void *arg)
{
	unsigned was = cur;
	model_set_cpu(cpu);
	fn(arg);
	model_set_cpu(was);
}

void model_set_cpl(unsigned cpl)
{
	cur_cpl = cpl;
}
void model_set_cr4_pce(bool on)
{
	cur_pce = on;
}
void model_set_svm(bool svme, bool guest)
{
	x86pmu_set_svm(&cpus[cur].pmu, svme, guest);
}

/* --- The uncore of each package, offcore MSRs shared per core --- */

/* The package of a CPU: CPUID.0BH's package shift is smt_bits + 4. */
static unsigned pkg_of(const struct model_cpu_config *c)
{
	unsigned p = c->leaf_0b ? c->x2apic_id >> (c->smt_bits + 4u) : 0;
	return p < MODEL_MAX_PKGS ? p : MODEL_MAX_PKGS - 1;
}

static X86PMUUncoreLayout unc_layout(enum model_uncore u)
{
	switch (u) {
	case MODEL_UNCORE_SNB: return X86PMU_UNCORE_SNB_CLIENT;
	case MODEL_UNCORE_HSW: return X86PMU_UNCORE_HSW_CLIENT;
	case MODEL_UNCORE_SKL: return X86PMU_UNCORE_SKL_CLIENT;
	case MODEL_UNCORE_SKX: return X86PMU_UNCORE_SKX;
	case MODEL_UNCORE_SPR: return X86PMU_UNCORE_SPR;
	case MODEL_UNCORE_NONE: break;
	}
	return X86PMU_UNCORE_NONE;
}

/* Each package's uncore from the first CPU of it. */
static void uncore_init(void)
{
	memset(unc_state, 0, sizeof(unc_state));
	memset(unc_pkgs, 0, sizeof(unc_pkgs));
	for (unsigned c = 0; c < ncpus; c++) {
		const struct model_cpu_config *cfg = &cpus[c].cfg;
		unsigned p = pkg_of(cfg);
		X86PMUUncoreConfig u = {
			.layout = unc_layout(cfg->uncore),
			.nboxes = cfg->uncore_cboxes,
			.defect = cfg->uncore_defect,
		};
		if (unc_pkgs[p] || u.layout == X86PMU_UNCORE_NONE)
			continue;
		x86pmu_uncore_reset(&unc_state[p], &u);
		unc_pkgs[p] = &unc_state[p];
	}
}

static X86PMUUncoreState *unc_of(const struct model_cpu *m)
{
	return unc_pkgs[pkg_of(&m->cfg)];
}

/* Whose PMU holds CPU m's MSR_OFFCORE_RSP_0/1: its own, or, where the
 * model shares them per core, the lowest CPU's of its core. */
static struct model_cpu *offcore_owner(struct model_cpu *m)
{
	if (m->cfg.offcore_shared) {
		uint32_t core = m->cfg.x2apic_id >> m->cfg.smt_bits;
		for (unsigned c = 0; c < ncpus; c++)
			if ((cpus[c].cfg.x2apic_id >> cpus[c].cfg.smt_bits) == core)
				return &cpus[c];
	}
	return m;
}

static bool is_offcore_msr(uint32_t msr)
{
	return msr == MSR_OFFCORE_RSP_0 || msr == MSR_OFFCORE_RSP_1 ||
	       (msr >= MSR_OMR_0 && msr < MSR_OMR_0 + MSR_OMR_NR);
}

/* --- MSRs: the harness's, else the PMU model's --- */

/* A broken emulation that ignores writes still reports its PERF_CAPABILITIES
 * and DEBUGCTL; every other PMU register reads 0 and drops writes. */
static bool ignored(const struct model_cpu *m, uint32_t msr)
{
	return m->cfg.ignores_writes && msr != MSR_IA32_DEBUGCTL && msr != MSR_IA32_PERF_CAPABILITIES;
}

static int do_rdmsr(struct model_cpu *m, uint32_t msr, uint64_t *val)
{
	X86PMUUncoreState *u = unc_of(m);
	X86PMUAccess a;

	*val = 0;
	if (u && (a = x86pmu_uncore_rdmsr(u, msr, val)) != X86PMU_NOT_MINE) {
		if (ignored(m, msr))
			*val = 0;
		return a == X86PMU_OK || ignored(m, msr) ? 0 : MODEL_VEC_GP;
	}
	if (is_offcore_msr(msr))
		m = offcore_owner(m);
	if (x86pmu_rdmsr(&m->pmu, msr, val) != X86PMU_OK) {
		*val = 0;
		return MODEL_VEC_GP; /* absent, or no PMU register at all */
	}
	if (ignored(m, msr))
		*val = 0;
	return 0;
}

static int do_wrmsr(struct model_cpu *m, uint32_t msr, uint64_t val)
{
	X86PMUUncoreState *u = unc_of(m);
	unsigned pmis;
	uint64_t v;

	if (u && x86pmu_uncore_rdmsr(u, msr, &v) != X86PMU_NOT_MINE)
		return ignored(m, msr) ? 0 : x86pmu_uncore_wrmsr(u, msr, val) == X86PMU_OK ? 0 : MODEL_VEC_GP;
	if (is_offcore_msr(msr))
		m = offcore_owner(m);
	/* Writes to a register that exists are dropped, reserved bits and all. */
	if (ignored(m, msr))
		return x86pmu_rdmsr(&m->pmu, msr, &v) == X86PMU_OK ? 0 : MODEL_VEC_GP;
	return x86pmu_wrmsr(&m->pmu, msr, val, &pmis) == X86PMU_OK ? 0 : MODEL_VEC_GP;
}

/* --- pmu/pmu_hw.h on the model --- */

int pmu_hw_rdmsr(uint32_t msr, uint64_t *val)
{
	if (cpus[cur].cfg.cpu_ops)
		return cpus[cur].cfg.cpu_ops->rdmsr(cur, msr, val);
	return do_rdmsr(&cpus[cur], msr, val);
}

int pmu_hw_wrmsr(uint32_t msr, uint64_t val)
{
	const struct model_cpu_ops *ops = cpus[cur].cfg.cpu_ops;
	int fault = ops ? ops->wrmsr(cur, msr, val) : do_wrmsr(&cpus[cur], msr, val);

	if (trace_len < MODEL_TRACE_MAX)
		trace[trace_len++] = (struct model_write){ cur, msr, val, fault };
	return fault;
}

static void rdpmc_hook_fire(void)
{
	if (rdpmc_hook) {
		void (*fn)(void *) = rdpmc_hook;
		rdpmc_hook = NULL;
		fn(rdpmc_hook_arg);
	}
}

/* RDPMC (SDM vol. 2B, APM vol. 3) is the model's; the harness adds the
 * broken emulations: #GP for every counter, and #UD (TCG without a PMU). */
int pmu_hw_rdpmc(uint32_t ecx, uint64_t *val)
{
	struct model_cpu *m = &cpus[cur];

	*val = 0;
	if (m->cfg.cpu_ops) {
		int fault = m->cfg.cpu_ops->rdpmc(cur, ecx, val);
		if (!fault)
			rdpmc_hook_fire();
		return fault;
	}
	if (m->cfg.rdpmc_gp)
		return MODEL_VEC_GP;
	if (m->cfg.ignores_writes)
		return MODEL_VEC_UD;
	if (x86pmu_rdpmc(&m->pmu, ecx, cur_cpl, cur_pce, val) != X86PMU_OK) {
		*val = 0;
		return MODEL_VEC_GP;
	}
	rdpmc_hook_fire();
	return 0;
}

void model_set_rdpmc_hook(void (*fn)(void *), void *arg)
{
	rdpmc_hook = fn;
	rdpmc_hook_arg = arg;
}

void pmu_hw_cpuid(uint32_t leaf, uint32_t subleaf, struct cpuid_regs *r)
{
	const struct model_cpu_config *c = &cpus[cur].cfg;
	const char *v = c->vendor;

	memset(r, 0, sizeof(*r));
	if (c->cpu_ops) {
		c->cpu_ops->cpuid(cur, leaf, subleaf, r);
		return;
	}
	if ((leaf == 0x40000000u || leaf == 0x40000100u) && c->hv_sig[leaf >> 8 & 1]) {
		const char *sig = c->hv_sig[leaf >> 8 & 1];
		r->eax = leaf + 1;
		memcpy(&r->ebx, sig, 4);
		memcpy(&r->ecx, sig + 4, 4);
		memcpy(&r->edx, sig + 8, 4);
		return;
	}
	if (leaf > c->max_leaf && leaf < 0x80000000u)
		return;
	if (leaf >= 0x80000000u && leaf > c->max_ext_leaf)
		return;
	switch (leaf) {
	case 0:
		r->eax = c->max_leaf;
		memcpy(&r->ebx, v, 4);
		memcpy(&r->edx, v + 4, 4);
		memcpy(&r->ecx, v + 8, 4);
		break;
	case 1:
		r->eax = c->signature;
		r->ecx = BIT(CPUID_1_ECX_CX16_BIT) | (c->hypervisor ? BIT(CPUID_1_ECX_HYPERVISOR_BIT) : 0);
		break;
	case 4:
		/* Sub-leaf 0 only: a 32 KiB 8-way L1D (64 sets of 64 bytes),
		 * carrying the cores-per-package field EAX[31:26]. */
		if (c->cores_per_pkg && subleaf == 0) {
			r->eax = 1u | 1u << 5 | (uint32_t)(c->cores_per_pkg - 1) << 26;
			r->ebx = 7u << 22 | 63u;
			r->ecx = 63;
		}
		break;
	case 0x80000000u: r->eax = c->max_ext_leaf; break;
	case 0x80000001u:
		/* Long mode, and SVM where the CPU has it (APM vol. 3). */
		r->edx = BIT(CPUID_80000001_EDX_LM_BIT);
		r->ecx = c->svm ? BIT(CPUID_80000001_ECX_SVM_BIT) : 0;
		break;
	case 0x0b:
		if (!c->leaf_0b)
			break;
		r->ecx = subleaf & 0xff;
		r->edx = c->x2apic_id;
		if (subleaf == 0) {
			r->eax = c->smt_bits, r->ebx = 1u << c->smt_bits, r->ecx |= 1u << 8;
		} else if (subleaf == 1) {
			r->eax = c->smt_bits + 4u, r->ebx = ncpus, r->ecx |= 2u << 8;
		}
		break;
	default: break;
	}
	/* The PMU's leaves and bits (01H PDCM, 07H hybrid, 0AH, 1AH, 23H). */
	x86pmu_cpuid(&cpus[cur].pmu, leaf, subleaf, &r->eax, &r->ebx, &r->ecx, &r->edx);
}

unsigned pmu_hw_cpu(void)
{
	return cur;
}
unsigned pmu_hw_ncpus(void)
{
	return ncpus;
}
uint64_t pmu_hw_tsc(void)
{
	return cpus[cur].tsc;
}

/* --- PCI configuration space and MCHBAR (the uncore's other registers) ---
 *
 * The platform the host model gives: a host bridge at 0:0.0 whose MCHBAR
 * (config 48H, enabled) is at MODEL_MCHBAR when a package has a client
 * uncore; each Skylake-SP package p's UBOX (8086:2014 at 8.2, node ID p at
 * C0H, an identity node-to-package map at D4H) and six memory channels on
 * bus 2p. The MCHBAR counters sum every package's: one memory controller. */
#define MODEL_MCHBAR 0xfed10000ull
#define MODEL_MCHBAR_SIZE 0x8000
static const struct {
	uint8_t dev, fn;
} skx_chan_fn[X86PMU_UNC_CHANNELS] = { { 10, 2 }, { 10, 6 }, { 11, 2 }, { 12, 2 }, { 12, 6 }, { 13, 2 } };

static bool any_client_uncore(void)
{
	for (unsigned p = 0; p < MODEL_MAX_PKGS; p++)
		if (unc_pkgs[p] && unc_pkgs[p]->cfg.layout != X86PMU_UNCORE_SKX)
			return true;
	return false;
}

/* The Skylake-SP package whose bus this is, or -1. */
static int skx_pkg_of_bus(uint8_t bus)
{
	unsigned p = bus / 2u;
	return (bus % 2 == 0 && p < MODEL_MAX_PKGS && unc_pkgs[p] &&
		unc_pkgs[p]->cfg.layout == X86PMU_UNCORE_SKX)
		       ? (int)p
		       : -1;
}

/* Each Sapphire Rapids package p's discovery table function (8086:09A7 at
 * bus 2p + 1, device 3; the PMON DVSEC at 100H naming BAR0), its table
 * (BAR0, emu/model's x86pmu_discovery_word) and its memory channels
 * (BAR2, a page each). */
#define MODEL_SPR_TABLE 0xd0000000ull
#define MODEL_SPR_IMC 0xd8000000ull
#define MODEL_SPR_STRIDE 0x100000ull

static int spr_pkg_of_fn(uint8_t bus, uint8_t dev, uint8_t fn)
{
	unsigned p = bus / 2u;
	return (bus % 2 == 1 && dev == 3 && fn == 0 && p < MODEL_MAX_PKGS && unc_pkgs[p] &&
		unc_pkgs[p]->cfg.layout == X86PMU_UNCORE_SPR)
		       ? (int)p
		       : -1;
}

static uint32_t spr_config(unsigned p, uint16_t off)
{
	switch (off) {
	case 0x00: return 0x09a78086u;
	case 0x04: return 0x00100002u; /* memory decoding on */
	case 0x10: return (uint32_t)(MODEL_SPR_TABLE + p * MODEL_SPR_STRIDE);
	case 0x18: return (uint32_t)(MODEL_SPR_IMC + p * MODEL_SPR_STRIDE);
	case 0x100: return 0x00010023u; /* DVSEC, version 1, the last */
	case 0x104: return 0x01008086u;
	case 0x108: return 1; /* PMON discovery */
	}
	return 0;
}

/* The package whose table or channels phys is in, -1 if none; *imc says which. */
static int spr_pkg_of_mmio(uint64_t phys, bool *imc, uint64_t *off)
{
	for (unsigned p = 0; p < MODEL_MAX_PKGS; p++) {
		if (!unc_pkgs[p] || unc_pkgs[p]->cfg.layout != X86PMU_UNCORE_SPR)
			continue;
		for (unsigned k = 0; k < 2; k++) {
			uint64_t base = (k ? MODEL_SPR_IMC : MODEL_SPR_TABLE) + p * MODEL_SPR_STRIDE;
			if (phys >= base && phys < base + MODEL_SPR_STRIDE) {
				*imc = k;
				*off = phys - base;
				return (int)p;
			}
		}
	}
	return -1;
}

static bool spr_mmio_read32(uint64_t phys, uint32_t *val)
{
	uint64_t off, v = 0;
	bool imc;
	int p = spr_pkg_of_mmio(phys, &imc, &off);

	if (p < 0)
		return false;
	if (imc) {
		x86pmu_uncore_imc_read(unc_pkgs[p], (unsigned)(off / X86PMU_SPR_IMC_STRIDE),
				       (uint32_t)(off % X86PMU_SPR_IMC_STRIDE), 4, &v);
	} else {
		/* The next package's channels, for the table's defect. */
		unsigned q = (unsigned)p + 1 < MODEL_MAX_PKGS && unc_pkgs[p + 1] ? (unsigned)p + 1 : 0;
		uint64_t bases[2] = { MODEL_SPR_IMC + (unsigned)p * MODEL_SPR_STRIDE,
				      MODEL_SPR_IMC + q * MODEL_SPR_STRIDE };
		v = x86pmu_discovery_word(unc_pkgs[p], bases, (unsigned)(off / 8)) >> (off % 8 * 8);
	}
	*val = (uint32_t)v;
	return true;
}

void model_set_platform(const struct model_platform *p)
{
	platform = p ? *p : (struct model_platform){ 0 };
}

int pmu_hw_pci_read32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off, uint32_t *val)
{
	int p = skx_pkg_of_bus(bus);

	*val = ~0u;
	if (platform.pcie_read && platform.pcie_read(bus, dev, fn, off, val))
		return 0;
	if (spr_pkg_of_fn(bus, dev, fn) >= 0) {
		*val = spr_config((unsigned)spr_pkg_of_fn(bus, dev, fn), off);
		return 0;
	}
	if (bus == 0 && dev == 0 && fn == 0) {
		*val = off == 0 ? 0x29c08086u : 0;
		if (any_client_uncore() && off == 0x48)
			*val = (uint32_t)MODEL_MCHBAR | 1;
		return 0;
	}
	if (p < 0)
		return 0;
	if (dev == 8 && fn == 2) {
		*val = off == 0 ? 0x20148086u : off == 0xc0 ? (uint32_t)p : off == 0xd4 ? 0x00fac688u : 0;
		return 0;
	}
	for (unsigned ch = 0; ch < X86PMU_UNC_CHANNELS; ch++) {
		if (skx_chan_fn[ch].dev != dev || skx_chan_fn[ch].fn != fn)
			continue;
		if (off == 0)
			*val = (uint32_t)x86pmu_uncore_chan_device(ch) << 16 | 0x8086u;
		else if (!x86pmu_uncore_chan_read(unc_pkgs[p], ch, off, val))
			*val = 0;
		return 0;
	}
	return 0;
}

int pmu_hw_pci_write32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off, uint32_t val)
{
	int p = skx_pkg_of_bus(bus);

	if (trace_len < MODEL_TRACE_MAX)
		trace[trace_len++] = (struct model_write){ cur,
							   MODEL_TRACE_PCI | (uint32_t)bus << 16 |
								   (uint32_t)dev << 11 | (uint32_t)fn << 8 |
								   off,
							   val, 0 };
	if (platform.pcie_write && platform.pcie_write(bus, dev, fn, off, val))
		return 0;
	for (unsigned ch = 0; p >= 0 && ch < X86PMU_UNC_CHANNELS; ch++)
		if (skx_chan_fn[ch].dev == dev && skx_chan_fn[ch].fn == fn)
			x86pmu_uncore_chan_write(unc_pkgs[p], ch, off, val);
	return 0;
}

int pmu_hw_mmio_read32(uint64_t phys, uint32_t *val)
{
	*val = ~0u;
	if (platform.mmio_read32 && platform.mmio_read32(phys, val))
		return 0;
	if (spr_mmio_read32(phys, val))
		return 0;
	if (!any_client_uncore() || phys < MODEL_MCHBAR || phys + 4 > MODEL_MCHBAR + MODEL_MCHBAR_SIZE)
		return -1;
	*val = 0;
	for (unsigned p = 0; p < MODEL_MAX_PKGS; p++) {
		uint32_t v;
		if (unc_pkgs[p] &&
		    x86pmu_uncore_mchbar_read(unc_pkgs[p], (uint32_t)(phys - MODEL_MCHBAR), &v))
			*val += v;
	}
	return 0;
}

int pmu_hw_mmio_read64(uint64_t phys, uint64_t *val)
{
	uint32_t lo, hi;
	int err = pmu_hw_mmio_read32(phys, &lo) | pmu_hw_mmio_read32(phys + 4, &hi);

	*val = err ? ~0ull : lo | (uint64_t)hi << 32;
	return err ? -1 : 0;
}

int pmu_hw_mmio_write32(uint64_t phys, uint32_t val)
{
	if (trace_len < MODEL_TRACE_MAX)
		trace[trace_len++] = (struct model_write){ cur, MODEL_TRACE_MMIO, (uint64_t)phys << 32 | val,
							   0 };
	if (platform.mmio_write32 && platform.mmio_write32(phys, val))
		return 0;
	{
		uint64_t off;
		bool imc;
		int p = spr_pkg_of_mmio(phys, &imc, &off);

		if (p >= 0 && imc) {
			x86pmu_uncore_imc_write(unc_pkgs[p], (unsigned)(off / X86PMU_SPR_IMC_STRIDE),
						(uint32_t)(off % X86PMU_SPR_IMC_STRIDE), 4, val);
			return 0;
		}
	}
	return -1;
}

int pmu_hw_pcie_read32(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off, uint32_t *val)
{
	*val = ~0u;
	if (platform.no_ecam || off >= 4096 || (off & 3))
		return -1;
	if (platform.pcie_read && platform.pcie_read(bus, dev, fn, off, val))
		return 0;
	if (off < 256)
		return pmu_hw_pci_read32(bus, dev, fn, (uint8_t)off, val);
	if (spr_pkg_of_fn(bus, dev, fn) >= 0)
		*val = spr_config((unsigned)spr_pkg_of_fn(bus, dev, fn), off);
	return 0;
}

int pmu_hw_pcie_write32(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off, uint32_t val)
{
	if (platform.no_ecam || off >= 4096 || (off & 3))
		return -1;
	if (off < 256)
		return pmu_hw_pci_write32(bus, dev, fn, (uint8_t)off, val);
	if (platform.pcie_write)
		platform.pcie_write(bus, dev, fn, off, val);
	return 0;
}

uint64_t model_tsc(unsigned cpu)
{
	return cpus[cpu < ncpus ? cpu : 0].tsc;
}
void model_set_tsc(unsigned cpu, uint64_t tsc)
{
	cpus[cpu < ncpus ? cpu : 0].tsc = tsc;
}

void model_set_pmi_handler(void (*fn)(void *), void *arg)
{
	pmi_handler = fn;
	pmi_handler_arg = arg;
}

/* --- Raw access, trace, PMIs --- */

/* Where a PMU register lives in the model's state (raw access). */
static uint64_t *pmu_reg(struct model_cpu *m, uint32_t msr)
{
	X86PMUState *s = &m->pmu;

	if (is_amd(&m->cfg)) {
		if (msr >= MSR_K7_EVNTSEL0 && msr < MSR_K7_EVNTSEL0 + 4)
			return &s->gp_sel[msr - MSR_K7_EVNTSEL0];
		if (msr >= MSR_K7_PERFCTR0 && msr < MSR_K7_PERFCTR0 + 4)
			return &s->gp_ctr[msr - MSR_K7_PERFCTR0];
		if (msr >= MSR_F15H_PERF_CTL0 && msr < MSR_F15H_PERF_CTL0 + 2 * X86PMU_AMD_MAX_CTRS)
			return (msr - MSR_F15H_PERF_CTL0) % 2 ? &s->gp_ctr[(msr - MSR_F15H_PERF_CTL0) / 2]
							      : &s->gp_sel[(msr - MSR_F15H_PERF_CTL0) / 2];
		if (msr == MSR_AMD64_PERF_CNTR_GLOBAL_STATUS)
			return &s->global_status;
		if (msr == MSR_AMD64_PERF_CNTR_GLOBAL_CTL)
			return &s->global_ctrl;
		return NULL;
	}
	if (msr >= MSR_IA32_PMC0 && msr < MSR_IA32_PMC0 + X86PMU_LEGACY_GP)
		return &s->gp_ctr[msr - MSR_IA32_PMC0];
	if (msr >= MSR_IA32_A_PMC0 && msr < MSR_IA32_A_PMC0 + X86PMU_LEGACY_GP)
		return &s->gp_ctr[msr - MSR_IA32_A_PMC0];
	if (msr >= MSR_IA32_PERFEVTSEL0 && msr < MSR_IA32_PERFEVTSEL0 + X86PMU_LEGACY_GP)
		return &s->gp_sel[msr - MSR_IA32_PERFEVTSEL0];
	if (msr >= MSR_IA32_PMC_V6_GP0_CTR && msr < MSR_IA32_PMC_V6_GP0_CTR + 4 * X86PMU_MAX_GP)
		return (msr - MSR_IA32_PMC_V6_GP0_CTR) % 4 == 0
			       ? &s->gp_ctr[(msr - MSR_IA32_PMC_V6_GP0_CTR) / 4]
		       : (msr - MSR_IA32_PMC_V6_GP0_CTR) % 4 == 1
			       ? &s->gp_sel[(msr - MSR_IA32_PMC_V6_GP0_CTR) / 4]
			       : NULL;
	if (msr >= MSR_IA32_PMC_V6_FX0_CTR && msr < MSR_IA32_PMC_V6_FX0_CTR + 4 * X86PMU_MAX_FIXED &&
	    (msr - MSR_IA32_PMC_V6_FX0_CTR) % 4 == 0)
		return &s->fixed_ctr[(msr - MSR_IA32_PMC_V6_FX0_CTR) / 4];
	if (msr >= MSR_IA32_FIXED_CTR0 && msr < MSR_IA32_FIXED_CTR0 + X86PMU_MAX_FIXED)
		return &s->fixed_ctr[msr - MSR_IA32_FIXED_CTR0];
	switch (msr) {
	case MSR_IA32_FIXED_CTR_CTRL: return &s->fixed_ctrl;
	case MSR_IA32_PERF_GLOBAL_STATUS: return &s->global_status;
	case MSR_IA32_PERF_GLOBAL_CTRL: return &s->global_ctrl;
	case MSR_IA32_DEBUGCTL: return &s->debugctl;
	case MSR_OFFCORE_RSP_0: return &s->offcore_rsp[0];
	case MSR_OFFCORE_RSP_1: return &s->offcore_rsp[1];
	case MSR_OMR_0: return &s->offcore_rsp[0];
	case MSR_OMR_0 + 1: return &s->offcore_rsp[1];
	case MSR_OMR_0 + 2: return &s->offcore_rsp[2];
	case MSR_OMR_0 + 3: return &s->offcore_rsp[3];
	default: return NULL;
	}
}

uint64_t model_peek(unsigned cpu, uint32_t msr)
{
	struct model_cpu *m = &cpus[cpu < ncpus ? cpu : 0];
	X86PMUUncoreState *u;
	uint64_t v;

	if (m->cfg.cpu_ops)
		return m->cfg.cpu_ops->peek(cpu < ncpus ? cpu : 0, msr);
	if ((u = unc_of(m)) && x86pmu_uncore_rdmsr(u, msr, &v) != X86PMU_NOT_MINE)
		return v;
	if (is_offcore_msr(msr))
		m = offcore_owner(m);
	return x86pmu_rdmsr(&m->pmu, msr, &v) == X86PMU_OK ? v : 0;
}

void model_poke(unsigned cpu, uint32_t msr, uint64_t val)
{
	struct model_cpu *m = &cpus[cpu < ncpus ? cpu : 0];
	X86PMUUncoreState *u;
	uint64_t *r, v;

	if (m->cfg.cpu_ops) {
		m->cfg.cpu_ops->poke(cpu < ncpus ? cpu : 0, msr, val);
		return;
	}
	if ((u = unc_of(m)) && x86pmu_uncore_rdmsr(u, msr, &v) != X86PMU_NOT_MINE) {
		x86pmu_uncore_wrmsr(u, msr, val);
		return;
	}
	if (is_offcore_msr(msr))
		m = offcore_owner(m);
	/* Only registers that exist on this CPU, as a write would find them. */
	if (x86pmu_rdmsr(&m->pmu, msr, &v) == X86PMU_OK && (r = pmu_reg(m, msr)))
		*r = val;
}

void model_trace_clear(void)
{
	trace_len = 0;
}
size_t model_trace_len(void)
{
	return trace_len;
}
const struct model_write *model_trace_at(size_t i)
{
	return i < trace_len ? &trace[i] : NULL;
}

void model_trace_format(char *buf, size_t n)
{
	size_t len = 0;

	if (n)
		buf[0] = '\0';
	for (size_t i = 0; i < trace_len && len + 1 < n; i++) {
		uint32_t a = trace[i].msr;
		int w = (a & MODEL_TRACE_PCI)
				? snprintf(buf + len, n - len, "%s%02x:%02x.%x+%#x<-%#llx", i ? " " : "",
					   (a >> 16) & 0xff, (a >> 11) & 0x1f, (a >> 8) & 7, a & 0xff,
					   (unsigned long long)trace[i].val)
				: snprintf(buf + len, n - len, "%s%#x<-%#llx%s", i ? " " : "", a,
					   (unsigned long long)trace[i].val, trace[i].fault ? "(#GP)" : "");
		if (w < 0)
			break;
		len += (size_t)w;
	}
}

unsigned model_pmi_count(unsigned cpu)
{
	return cpus[cpu < ncpus ? cpu : 0].pmi_count;
}
void model_pmi_clear(unsigned cpu)
{
	cpus[cpu < ncpus ? cpu : 0].pmi_count = 0;
}

/* --- Counting --- */

static X86PMURing ring(void)
{
	return cur_cpl ? X86PMU_RING_USR : X86PMU_RING_OS;
}

/* Instructions retiring in cycle c: from the per-cycle array, or spread
 * as evenly as possible (approximation: other events have no per-cycle
 * profile). */
static uint32_t retired_in(const struct model_work *w, size_t c, size_t ncyc)
{
	if (w->retire_per_cycle)
		return w->retire_per_cycle[c];
	return (uint32_t)(w->instructions * (c + 1) / ncyc - w->instructions * c / ncyc);
}

/* The events of a tick into the model: cycle by cycle while a counter
 * uses CMASK/INV/EDGE (instructions retire as the work says, the other
 * events in bulk), in bulk otherwise. Offcore response (0xB7/0xBB umask
 * 1) counts through its RSP MSR: demand data reads with an L3-miss
 * response, when the value selects both (approximation: no other request
 * types). Returns whether a PMI was raised. */
static bool count_work(struct model_cpu *m, const struct model_work *w)
{
	uint64_t t[X86PMU_EV_NUM] = { 0 };
	size_t ncyc = w->retire_per_cycle ? w->ncycles : w->cycles;
	unsigned pmis = 0;

	t[X86PMU_EV_REF_CYCLES] = w->ref_cycles;
	t[X86PMU_EV_LLC_REFS] = w->llc_refs;
	t[X86PMU_EV_LLC_MISSES] = w->llc_misses;
	t[X86PMU_EV_BRANCHES] = w->branches;
	t[X86PMU_EV_BRANCH_MISSES] = w->branch_misses;
	t[X86PMU_EV_SLOTS] = w->slots;
	if (x86pmu_activity(&m->pmu).filters && ncyc) {
		for (size_t c = 0; c < ncyc; c++) {
			uint32_t per[X86PMU_EV_NUM] = { 0 };
			per[X86PMU_EV_INSTRUCTIONS] = retired_in(w, c, ncyc);
			pmis += x86pmu_count_cycles(&m->pmu, ring(), 1, per);
		}
	} else {
		t[X86PMU_EV_CYCLES] = w->cycles;
		t[X86PMU_EV_INSTRUCTIONS] = w->instructions;
	}
	pmis += x86pmu_count_bulk(&m->pmu, ring(), t);
	/* Offcore response through the RSP values of the CPU's own MSRs, or
	 * its core's (emu/model's rule for which requests a value counts). */
	pmis += x86pmu_count_offcore(&m->pmu, ring(), offcore_owner(m)->pmu.offcore_rsp, X86PMU_REQ_DATA_RD,
				     false, w->dmnd_rd_l3_miss);
	pmis += x86pmu_count_offcore(&m->pmu, ring(), offcore_owner(m)->pmu.offcore_rsp, X86PMU_REQ_DATA_RD,
				     true, w->dmnd_rd_l3_hit);
	return pmis != 0;
}

/* n events spread over k lines 0..k-1, as evenly as whole events allow. */
static void spread(unsigned pkg, X86PMUUncoreEvent ev, uint64_t n, unsigned k)
{
	for (unsigned b = 0; n && b < k; b++)
		x86pmu_uncore_count(unc_pkgs, MODEL_MAX_PKGS, pkg, ev, b, n * (b + 1) / k - n * b / k);
}

static void uncore_tick(unsigned pkg, const struct model_work *w)
{
	const X86PMUUncoreState *u = unc_pkgs[pkg];
	unsigned boxes = u->cfg.nboxes ? u->cfg.nboxes : 1;

	unsigned chans = u->cfg.layout == X86PMU_UNCORE_SPR ? X86PMU_UNC_SPR_CHANNELS : X86PMU_UNC_CHANNELS;

	spread(pkg, X86PMU_UNC_LLC_HIT, w->llc_lookups, boxes);
	spread(pkg, X86PMU_UNC_CAS_READ, w->cas_reads, chans);
	spread(pkg, X86PMU_UNC_CAS_WRITE, w->cas_writes, chans);
}

void model_tick(const struct model_work *w)
{
	struct model_cpu *m = &cpus[cur];
	const struct model_cpu_config *c = &m->cfg;

	/* Approximation: the TSC advances with the core cycles of the work. */
	m->tsc += w->cycles;
	if (c->cpu_ops) {
		if (c->cpu_ops->tick(cur, w)) {
			m->pmi_count++;
			if (pmi_handler)
				pmi_handler(pmi_handler_arg);
		}
		return;
	}
	/* The package's uncore sees the work's LLC requests and DRAM lines,
	 * spread evenly over its slices and channels (approximation of the
	 * address hash): the CPU's own package, emu/model's rules. */
	if (unc_of(m))
		uncore_tick(pkg_of(c), w);
	if ((c->version == 0 && !is_amd(c)) || c->ignores_writes || c->no_count)
		return;
	/* Overflow, GLOBAL_STATUS and freeze-on-PMI are the model's; the
	 * PMI is taken once the tick's work is done (approximation: real
	 * parts deliver it a few instructions after the overflow). */
	if (!count_work(m, w))
		return;
	m->pmi_count++;
	if (pmi_handler)
		pmi_handler(pmi_handler_arg);
}

void model_tick_loop(uint64_t n)
{
	struct model_work w = { .instructions = 3 * n,
				.branches = n,
				.cycles = 2 * n,
				.ref_cycles = 2 * n,
				.slots = 8 * n,
				.branch_misses = n ? 1 : 0 };
	model_tick(&w);
}

void model_tick_probe(void *ctx)
{
	(void)ctx;
	model_tick_loop(PMU_PROBE_LOOPS);
}

const struct pmu_init_opts model_probe_opts = { .workload = model_tick_probe };

void model_boot_custom(const struct model_cpu_config *cfgs, unsigned ncpus)
{
	model_init_custom(cfgs, ncpus);
	pmu_init_all(&model_probe_opts, model_run_on);
	model_set_cpu(0);
	model_trace_clear();
}

struct model_cpu_config model_skx_config(unsigned pkg, unsigned core, unsigned chas)
{
	model_init(MODEL_SNB_CLIENT, false);
	struct model_cpu_config c = *model_config(0);
	c.signature = 0x00050654, c.version = 4, c.uncore = MODEL_UNCORE_SKX, c.uncore_cboxes = (uint8_t)chas;
	c.x2apic_id = pkg << 5 | core << 1, c.cores_per_pkg = 2;
	return c;
}

const char *model_trace_text(void)
{
	static char t[8192];

	model_trace_format(t, sizeof(t));
	return t;
}
