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
#include "emu/model/x86-pmu.h"
#include "pmu/pmu_hw.h"

#define MODEL_TRACE_MAX 4096

struct model_cpu {
	struct model_cpu_config cfg;
	X86PMUState pmu; /* the architectural PMU registers (emu/model) */
	uint64_t offcore[2];
	unsigned pmi_count;
	uint64_t tsc;
};

static struct model_cpu cpus[MODEL_MAX_CPUS];

/* The client uncore: one per package, and the model is one package. */
static struct {
	uint64_t global_ctrl;
	uint64_t evtsel[MODEL_UNCORE_MAX_BOXES][2], ctr[MODEL_UNCORE_MAX_BOXES][2];
} unc;
static unsigned ncpus = 1, cur;
static unsigned cur_cpl;
static bool cur_pce;
static struct model_write trace[MODEL_TRACE_MAX];
static size_t trace_len;
static void (*rdpmc_hook)(void *);
static void *rdpmc_hook_arg;
static void (*pmi_handler)(void *);
static void *pmi_handler_arg;

static uint64_t wmask(unsigned w)
{
	return w >= 64 ? ~0ull : (1ull << w) - 1;
}

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
		c.offcore = true, c.offcore_valid = 0x3fffff8fffull, c.offcore_l3_miss = 0x3fffc00000ull;
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
		c.offcore = true, c.offcore_valid = 0x3f807f8fffull, c.offcore_l3_miss = 0x3fffc00000ull;
		c.leaf_0b = true, c.smt_bits = 1, c.x2apic_id = cpu, c.cores_per_pkg = 4;
		c.uncore = MODEL_UNCORE_SNB, c.uncore_cboxes = 4;
		break;
	case MODEL_WESTMERE:
		c.signature = 0x000206c2, c.max_leaf = 0x0b;
		c.version = 3, c.num_gp = 4, c.gp_width = 48, c.ebx_len = 7;
		c.num_fixed = 3, c.fixed_width = 48;
		c.pdcm = true, c.perf_caps = 0x11c2;
		c.offcore = true, c.offcore_valid = 0xffffull, c.offcore_l3_miss = 0xf000ull;
		c.offcore_shared = true;
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
	for (unsigned c = 0; c < ncpus; c++)
		reset_cpu(&cpus[c], &cfgs[c]);
	memset(&unc, 0, sizeof(unc));
	cur = 0;
	cur_cpl = 0;
	cur_pce = false;
	trace_len = 0;
	rdpmc_hook = NULL;
	pmi_handler = NULL;
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

/* --- Harness-only registers: offcore response, client uncore --- */

enum harness_reg { H_NONE, H_OFFCORE, H_UNC_GLOBAL, H_UNC_CONFIG, H_UNC_EVTSEL, H_UNC_CTR };

/* Client uncore addresses (pmu/intel_uncore.c; SDM vol. 4 client uncore MSRs). */
static uint32_t unc_global_msr(const struct model_cpu_config *c)
{
	return c->uncore == MODEL_UNCORE_SKL ? 0xe01 : 0x391;
}

static enum harness_reg decode_uncore(const struct model_cpu_config *c, uint32_t msr, unsigned *idx)
{
	unsigned box = (msr - 0x700) / 0x10, off = (msr - 0x700) % 0x10;

	if (c->uncore == MODEL_UNCORE_NONE)
		return H_NONE;
	if (msr == unc_global_msr(c))
		return H_UNC_GLOBAL;
	if (msr == 0x396)
		return H_UNC_CONFIG;
	if (msr < 0x700 || box >= c->uncore_cboxes || box >= MODEL_UNCORE_MAX_BOXES)
		return H_NONE;
	if (off < 2)
		return *idx = box * 2 + off, H_UNC_EVTSEL;
	if (off >= 6 && off < 8)
		return *idx = box * 2 + off - 6, H_UNC_CTR;
	return H_NONE;
}

/* MSR_OFFCORE_RSP_i of CPU m: its own, or, where the model shares them per
 * core, those of the lowest CPU of its core. */
static uint64_t *offcore_reg(struct model_cpu *m, unsigned i)
{
	if (m->cfg.offcore_shared) {
		uint32_t core = m->cfg.x2apic_id >> m->cfg.smt_bits;
		for (unsigned c = 0; c < ncpus; c++)
			if ((cpus[c].cfg.x2apic_id >> cpus[c].cfg.smt_bits) == core)
				return &cpus[c].offcore[i];
	}
	return &m->offcore[i];
}

static uint64_t unc_config_value(const struct model_cpu_config *c)
{
	/* Haswell/Broadwell: "encoded number of C-Box, derive value by -1". */
	return c->uncore == MODEL_UNCORE_HSW ? c->uncore_cboxes + 1u : c->uncore_cboxes;
}

/* A register only the harness models, and its index; H_NONE if it is
 * the PMU's (emu/model) or nobody's. */
static enum harness_reg decode_harness(const struct model_cpu *m, uint32_t msr, unsigned *idx)
{
	const struct model_cpu_config *c = &m->cfg;

	*idx = 0;
	if (c->offcore && (msr == MSR_OFFCORE_RSP_0 || msr == MSR_OFFCORE_RSP_1))
		return *idx = msr - MSR_OFFCORE_RSP_0, H_OFFCORE;
	return decode_uncore(c, msr, idx);
}

static uint64_t *harness_reg(struct model_cpu *m, enum harness_reg k, unsigned i)
{
	static uint64_t config;

	switch (k) {
	case H_OFFCORE: return offcore_reg(m, i);
	case H_UNC_GLOBAL: return &unc.global_ctrl;
	case H_UNC_EVTSEL: return &unc.evtsel[i / 2][i % 2];
	case H_UNC_CTR: return &unc.ctr[i / 2][i % 2];
	case H_UNC_CONFIG: config = unc_config_value(&m->cfg); return &config;
	case H_NONE: break;
	}
	return NULL;
}

static int harness_wrmsr(struct model_cpu *m, enum harness_reg k, unsigned i, uint64_t val)
{
	switch (k) {
	case H_OFFCORE:
		/* Bits outside the model's table #GP (the reason the driver
		 * checks them before the write). */
		if (m->cfg.offcore_valid && (val & ~m->cfg.offcore_valid))
			return MODEL_VEC_GP;
		break;
	case H_UNC_GLOBAL:
		/* [4:0] PMI selects (Skylake; [3:0] before), 29-31 EN/WAKE/FREEZE. */
		if (val & ~(0xe0000000ull | (m->cfg.uncore == MODEL_UNCORE_SKL ? 0x1full : 0xfull)))
			return MODEL_VEC_GP;
		break;
	case H_UNC_CONFIG: return MODEL_VEC_GP; /* read-only */
	case H_UNC_EVTSEL:
		/* Approximation: every bit outside the documented fields #GPs. */
		if (val & ~0x1fd4ffffull)
			return MODEL_VEC_GP;
		break;
	case H_UNC_CTR:
		if (val & ~wmask(44))
			return MODEL_VEC_GP;
		break;
	case H_NONE: return MODEL_VEC_GP;
	}
	*harness_reg(m, k, i) = val;
	return 0;
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
	unsigned i;
	enum harness_reg h = decode_harness(m, msr, &i);

	*val = 0;
	if (h != H_NONE) {
		if (!ignored(m, msr))
			*val = *harness_reg(m, h, i);
		return 0;
	}
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
	unsigned i, pmis;
	uint64_t v;
	enum harness_reg h = decode_harness(m, msr, &i);

	if (h != H_NONE)
		return ignored(m, msr) ? 0 : harness_wrmsr(m, h, i, val);
	/* Writes to a register that exists are dropped, reserved bits and all. */
	if (ignored(m, msr))
		return x86pmu_rdmsr(&m->pmu, msr, &v) == X86PMU_OK ? 0 : MODEL_VEC_GP;
	return x86pmu_wrmsr(&m->pmu, msr, val, &pmis) == X86PMU_OK ? 0 : MODEL_VEC_GP;
}

/* --- pmu/pmu_hw.h on the model --- */

int pmu_hw_rdmsr(uint32_t msr, uint64_t *val)
{
	return do_rdmsr(&cpus[cur], msr, val);
}

int pmu_hw_wrmsr(uint32_t msr, uint64_t val)
{
	int fault = do_wrmsr(&cpus[cur], msr, val);

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
	default: return NULL;
	}
}

uint64_t model_peek(unsigned cpu, uint32_t msr)
{
	struct model_cpu *m = &cpus[cpu < ncpus ? cpu : 0];
	enum harness_reg h;
	unsigned i;
	uint64_t v;

	h = decode_harness(m, msr, &i);
	if (h != H_NONE)
		return *harness_reg(m, h, i);
	return x86pmu_rdmsr(&m->pmu, msr, &v) == X86PMU_OK ? v : 0;
}

void model_poke(unsigned cpu, uint32_t msr, uint64_t val)
{
	struct model_cpu *m = &cpus[cpu < ncpus ? cpu : 0];
	enum harness_reg h;
	uint64_t *r, v;
	unsigned i;

	h = decode_harness(m, msr, &i);
	if (h != H_NONE && h != H_UNC_CONFIG) {
		*harness_reg(m, h, i) = val;
		return;
	}
	/* Only registers that exist on this CPU, as a write would find them. */
	if (h == H_NONE && x86pmu_rdmsr(&m->pmu, msr, &v) == X86PMU_OK && (r = pmu_reg(m, msr)))
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
		int w = snprintf(buf + len, n - len, "%s%#x<-%#llx%s", i ? " " : "", trace[i].msr,
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
	if (m->cfg.offcore) {
		for (unsigned i = 0; i < 2; i++) {
			uint64_t rsp = *offcore_reg(m, i);
			uint64_t n = (rsp & 1) && (rsp & m->cfg.offcore_l3_miss) ? w->dmnd_rd_l3_miss : 0;
			pmis += x86pmu_count_raw(&m->pmu, ring(), i ? 0xbb : 0xb7, 0x01, n);
		}
	}
	return pmis != 0;
}

void model_tick(const struct model_work *w)
{
	struct model_cpu *m = &cpus[cur];
	const struct model_cpu_config *c = &m->cfg;

	/* Approximation: the TSC advances with the core cycles of the work. */
	m->tsc += w->cycles;
	/* The uncore counts whatever the core PMU does: global EN and the
	 * box's EN; lookups spread evenly over the boxes (approximation of
	 * the address hash), event 0x34 only. */
	if (c->uncore != MODEL_UNCORE_NONE && ((unc.global_ctrl >> 29) & 1)) {
		unsigned nb = c->uncore_cboxes;
		for (unsigned b = 0; b < nb && b < MODEL_UNCORE_MAX_BOXES; b++)
			for (unsigned k = 0; k < 2; k++)
				if (((unc.evtsel[b][k] >> 22) & 1) && (unc.evtsel[b][k] & 0xff) == 0x34)
					unc.ctr[b][k] = (unc.ctr[b][k] + w->llc_lookups * (b + 1) / nb -
							 w->llc_lookups * b / nb) &
							wmask(44);
	}
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
