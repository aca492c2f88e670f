/* The host PMU model: implements pmu/pmu_hw.h over simulated CPUs whose
 * registers follow the SDM (vol. 3B "Performance Monitoring", vol. 4 table
 * 2-2, vol. 2B RDPMC). Approximations are named where they are made. */
#include "tests/host/pmu_model.h"

#include <stdio.h>
#include <string.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/msr.h"
#include "pmu/pmu_hw.h"

#define MODEL_TRACE_MAX 4096

struct model_cpu {
	struct model_cpu_config cfg;
	uint64_t pmc[32], evtsel[32], fixed[16];
	uint64_t fixed_ctrl, global_ctrl, global_status, debugctl, offcore[2];
	bool cond_prev[48]; /* last per-cycle condition, for EDGE */
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

static bool gp_exists(const struct model_cpu *m, unsigned x)
{
	if (x >= 32)
		return false;
	if (m->cfg.leaf23)
		return (m->cfg.leaf23_gp >> x) & 1;
	return x < m->cfg.num_gp;
}

static bool fixed_exists(const struct model_cpu *m, unsigned i)
{
	const struct model_cpu_config *c = &m->cfg;

	if (i >= 16 || c->version < 2)
		return false;
	if (c->leaf23)
		return (c->leaf23_fixed >> i) & 1;
	return i < c->num_fixed || (c->version >= 5 && ((c->fixed_bitmap >> i) & 1));
}

static uint64_t gp_bits(const struct model_cpu *m)
{
	uint64_t b = 0;
	for (unsigned x = 0; x < 32; x++)
		if (gp_exists(m, x))
			b |= 1ull << x;
	return b;
}

static uint64_t fixed_bits(const struct model_cpu *m)
{
	uint64_t b = 0;
	for (unsigned i = 0; i < 16; i++)
		if (fixed_exists(m, i))
			b |= 1ull << (32 + i);
	return b;
}

static void reset_cpu(struct model_cpu *m, const struct model_cpu_config *cfg)
{
	memset(m, 0, sizeof(*m));
	m->cfg = *cfg;
	/* IA32_PERF_GLOBAL_CTRL after RESET: bits n-1:0 set (SDM vol. 3A,
	 * "Processor State After Reset"). */
	if (cfg->version >= 2 && !cfg->ignores_writes)
		m->global_ctrl = gp_bits(m);
}

void model_init_custom(const struct model_cpu_config *cfgs, unsigned n)
{
	ncpus = n > MODEL_MAX_CPUS ? MODEL_MAX_CPUS : (n ? n : 1);
	for (unsigned c = 0; c < ncpus; c++) {
		reset_cpu(&cpus[c], &cfgs[c]);
		if (cfgs[c].vendor_ops)
			cfgs[c].vendor_ops->reset(c);
	}
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
unsigned model_cpl(void)
{
	return cur_cpl;
}
bool model_cr4_pce(void)
{
	return cur_pce;
}

/* --- MSR decoding --- */

enum reg_kind {
	R_NONE,
	R_PMC,
	R_APMC,
	R_EVTSEL,
	R_FIXED,
	R_FIXED_CTRL,
	R_GLOBAL_STATUS,
	R_GLOBAL_CTRL,
	R_OVF_CTRL,
	R_STATUS_SET,
	R_INUSE,
	R_PERF_CAPS,
	R_DEBUGCTL,
	R_OFFCORE,
	R_UNC_GLOBAL,
	R_UNC_CONFIG,
	R_UNC_EVTSEL,
	R_UNC_CTR,
};

/* Client uncore addresses (pmu/intel_uncore.c; SDM vol. 4 client uncore MSRs). */
static uint32_t unc_global_msr(const struct model_cpu_config *c)
{
	return c->uncore == MODEL_UNCORE_SKL ? 0xe01 : 0x391;
}

static enum reg_kind decode_uncore(const struct model_cpu_config *c, uint32_t msr, unsigned *idx)
{
	unsigned box = (msr - 0x700) / 0x10, off = (msr - 0x700) % 0x10;

	if (c->uncore == MODEL_UNCORE_NONE)
		return R_NONE;
	if (msr == unc_global_msr(c))
		return R_UNC_GLOBAL;
	if (msr == 0x396)
		return R_UNC_CONFIG;
	if (msr < 0x700 || box >= c->uncore_cboxes || box >= MODEL_UNCORE_MAX_BOXES)
		return R_NONE;
	if (off < 2)
		return *idx = box * 2 + off, R_UNC_EVTSEL;
	if (off >= 6 && off < 8)
		return *idx = box * 2 + off - 6, R_UNC_CTR;
	return R_NONE;
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

/* Which register msr is on this CPU, and its index; R_NONE if absent. */
static enum reg_kind decode(const struct model_cpu *m, uint32_t msr, unsigned *idx)
{
	const struct model_cpu_config *c = &m->cfg;

	*idx = 0;
	if (msr == MSR_IA32_DEBUGCTL)
		return R_DEBUGCTL;
	if (msr == MSR_IA32_PERF_CAPABILITIES)
		return c->pdcm ? R_PERF_CAPS : R_NONE;
	if (c->version == 0)
		return R_NONE;
	if (msr >= MSR_IA32_PMC0 && msr < MSR_IA32_PMC0 + 32 && gp_exists(m, msr - MSR_IA32_PMC0))
		return *idx = msr - MSR_IA32_PMC0, R_PMC;
	if (msr >= MSR_IA32_PERFEVTSEL0 && msr < MSR_IA32_PERFEVTSEL0 + 32 &&
	    gp_exists(m, msr - MSR_IA32_PERFEVTSEL0))
		return *idx = msr - MSR_IA32_PERFEVTSEL0, R_EVTSEL;
	if (msr >= MSR_IA32_A_PMC0 && msr < MSR_IA32_A_PMC0 + 32 && gp_exists(m, msr - MSR_IA32_A_PMC0) &&
	    c->pdcm && ((c->perf_caps >> PERF_CAP_FW_WRITE_BIT) & 1))
		return *idx = msr - MSR_IA32_A_PMC0, R_APMC;
	if (msr >= MSR_IA32_FIXED_CTR0 && msr < MSR_IA32_FIXED_CTR0 + 16 &&
	    fixed_exists(m, msr - MSR_IA32_FIXED_CTR0))
		return *idx = msr - MSR_IA32_FIXED_CTR0, R_FIXED;
	if (c->offcore && (msr == MSR_OFFCORE_RSP_0 || msr == MSR_OFFCORE_RSP_1))
		return *idx = msr - MSR_OFFCORE_RSP_0, R_OFFCORE;
	{
		enum reg_kind u = decode_uncore(c, msr, idx);
		if (u != R_NONE)
			return u;
	}
	if (c->version >= 2) {
		switch (msr) {
		case MSR_IA32_FIXED_CTR_CTRL: return R_FIXED_CTRL;
		case MSR_IA32_PERF_GLOBAL_STATUS: return R_GLOBAL_STATUS;
		case MSR_IA32_PERF_GLOBAL_CTRL: return R_GLOBAL_CTRL;
		case MSR_IA32_PERF_GLOBAL_OVF_CTRL: return R_OVF_CTRL;
		default: break;
		}
	}
	if (c->version >= 4) {
		if (msr == MSR_IA32_PERF_GLOBAL_STATUS_SET)
			return R_STATUS_SET;
		if (msr == MSR_IA32_PERF_GLOBAL_INUSE && !c->no_inuse)
			return R_INUSE;
	}
	return R_NONE;
}

/* IA32_PERF_GLOBAL_INUSE (SDM vol. 3B, "Architectural Performance
 * Monitoring Version 4"): PERFEVTSELx[7:0] != 0, fixed field enables != 0,
 * bit 63 when any INT/PMI bit is set. */
static uint64_t inuse_value(const struct model_cpu *m)
{
	uint64_t v = 0;

	for (unsigned x = 0; x < 32; x++) {
		if (!gp_exists(m, x))
			continue;
		if (m->evtsel[x] & PERFEVTSEL_EVENT_MASK)
			v |= 1ull << x;
		if ((m->evtsel[x] >> PERFEVTSEL_INT_BIT) & 1)
			v |= BIT(PERF_GLOBAL_INUSE_PMI_BIT);
	}
	for (unsigned i = 0; i < 16; i++) {
		uint64_t f = (m->fixed_ctrl >> FIXED_CTR_CTRL_SHIFT(i)) & FIXED_CTR_CTRL_FIELD_MASK;
		if (!fixed_exists(m, i))
			continue;
		if (f & FIXED_CTR_CTRL_EN_MASK)
			v |= 1ull << (32 + i);
		if ((f >> FIXED_CTR_CTRL_PMI_BIT) & 1)
			v |= BIT(PERF_GLOBAL_INUSE_PMI_BIT);
	}
	return v;
}

/* Status bits software may clear through OVF_CTRL (or set through
 * STATUS_SET on v4): counter bits plus the global conditions. */
static uint64_t status_bits(const struct model_cpu *m)
{
	uint64_t b = gp_bits(m) | fixed_bits(m) | BIT(PERF_GLOBAL_STATUS_OVF_BUF_BIT) |
		     BIT(PERF_GLOBAL_STATUS_COND_CHGD_BIT);
	if (m->cfg.version >= 3)
		b |= BIT(PERF_GLOBAL_STATUS_OVF_UNCORE_BIT);
	if (m->cfg.version >= 4)
		b |= BIT(PERF_GLOBAL_STATUS_LBR_FRZ_BIT) | BIT(PERF_GLOBAL_STATUS_CTR_FRZ_BIT);
	return b;
}

static uint64_t fixed_ctrl_valid(const struct model_cpu *m)
{
	uint64_t field = FIXED_CTR_CTRL_EN_MASK | BIT(FIXED_CTR_CTRL_PMI_BIT), v = 0;

	if (m->cfg.version >= 3)
		field |= BIT(FIXED_CTR_CTRL_ANY_BIT);
	for (unsigned i = 0; i < 16; i++)
		if (fixed_exists(m, i))
			v |= field << FIXED_CTR_CTRL_SHIFT(i);
	return v;
}

static uint64_t evtsel_reserved(const struct model_cpu *m)
{
	uint64_t r = ~0xffffffffull; /* no TSX in the model: bits 63:32 reserved */
	if (m->cfg.version < 3)
		r |= BIT(PERFEVTSEL_ANY_BIT);
	return r;
}

/* DEBUGCTL bits the model implements (SDM vol. 3B, "IA32_DEBUGCTL MSR"):
 * LBR, BTF, TR, BTS, BTINT, BTS_OFF_OS, BTS_OFF_USR, FREEZE_LBRS_ON_PMI,
 * FREEZE_PERFMON_ON_PMI, FREEZE_WHILE_SMM. */
#define MODEL_DEBUGCTL_VALID 0x5fc3ull

static int do_rdmsr(struct model_cpu *m, uint32_t msr, uint64_t *val)
{
	unsigned i;
	enum reg_kind k = decode(m, msr, &i);

	*val = 0;
	if (k == R_NONE)
		return MODEL_VEC_GP;
	if (m->cfg.ignores_writes && k != R_DEBUGCTL && k != R_PERF_CAPS)
		return 0;
	switch (k) {
	case R_PMC:
	case R_APMC: *val = m->pmc[i]; break;
	case R_EVTSEL: *val = m->evtsel[i]; break;
	case R_FIXED: *val = m->fixed[i]; break;
	case R_FIXED_CTRL: *val = m->fixed_ctrl; break;
	case R_GLOBAL_STATUS: *val = m->global_status; break;
	case R_GLOBAL_CTRL: *val = m->global_ctrl; break;
	case R_OVF_CTRL: *val = 0; break;   /* write-1-to-clear: reads as 0 */
	case R_STATUS_SET: *val = 0; break; /* write-1-to-set: reads as 0 */
	case R_INUSE: *val = inuse_value(m); break;
	case R_PERF_CAPS: *val = m->cfg.perf_caps; break;
	case R_DEBUGCTL: *val = m->debugctl; break;
	case R_OFFCORE: *val = *offcore_reg(m, i); break;
	case R_UNC_GLOBAL: *val = unc.global_ctrl; break;
	case R_UNC_CONFIG: *val = unc_config_value(&m->cfg); break;
	case R_UNC_EVTSEL: *val = unc.evtsel[i / 2][i % 2]; break;
	case R_UNC_CTR: *val = unc.ctr[i / 2][i % 2]; break;
	case R_NONE: break;
	}
	return 0;
}

static int do_wrmsr(struct model_cpu *m, uint32_t msr, uint64_t val)
{
	unsigned i;
	enum reg_kind k = decode(m, msr, &i);
	unsigned gpw = m->cfg.gp_width, fxw = m->cfg.fixed_width;

	if (k == R_NONE)
		return MODEL_VEC_GP;
	if (m->cfg.ignores_writes && k != R_DEBUGCTL && k != R_PERF_CAPS)
		return 0;
	switch (k) {
	case R_PMC:
		/* EAX sign-extended to the counter width; EDX is ignored (SDM
		 * vol. 3B, "Full-Width Writes to Performance Counter Registers"). */
		m->pmc[i] = (uint64_t)(int64_t)(int32_t)(uint32_t)val & wmask(gpw);
		return 0;
	case R_APMC:
		/* Bits beyond the width #GP, as KVM and kvm-unit-tests'
		 * check_gp_counters_write_width expect. */
		if (val & ~wmask(gpw))
			return MODEL_VEC_GP;
		m->pmc[i] = val;
		return 0;
	case R_EVTSEL:
		if (val & evtsel_reserved(m))
			return MODEL_VEC_GP;
		m->evtsel[i] = val;
		return 0;
	case R_FIXED:
		/* "Bits beyond the width of the fixed-function counter are
		 * reserved and must be written as zeros" (SDM, version 2). */
		if (val & ~wmask(fxw))
			return MODEL_VEC_GP;
		m->fixed[i] = val;
		return 0;
	case R_FIXED_CTRL:
		if (val & ~fixed_ctrl_valid(m))
			return MODEL_VEC_GP;
		m->fixed_ctrl = val;
		return 0;
	case R_GLOBAL_CTRL:
		if (val & ~(gp_bits(m) | fixed_bits(m)))
			return MODEL_VEC_GP;
		m->global_ctrl = val;
		return 0;
	case R_OVF_CTRL:
		if (val & ~status_bits(m))
			return MODEL_VEC_GP;
		m->global_status &= ~val;
		return 0;
	case R_STATUS_SET:
		if (val & ~(status_bits(m) & ~BIT(PERF_GLOBAL_STATUS_COND_CHGD_BIT)))
			return MODEL_VEC_GP;
		m->global_status |= val;
		return 0;
	case R_GLOBAL_STATUS:
	case R_INUSE:
	case R_PERF_CAPS: return MODEL_VEC_GP; /* read-only */
	case R_DEBUGCTL:
		if (val & ~MODEL_DEBUGCTL_VALID)
			return MODEL_VEC_GP;
		m->debugctl = val;
		return 0;
	case R_OFFCORE:
		/* Bits outside the model's table #GP (the reason the driver
		 * checks them before the write). */
		if (m->cfg.offcore_valid && (val & ~m->cfg.offcore_valid))
			return MODEL_VEC_GP;
		*offcore_reg(m, i) = val;
		return 0;
	case R_UNC_GLOBAL:
		/* [4:0] PMI selects (Skylake; [3:0] before), 29-31 EN/WAKE/FREEZE. */
		if (val & ~(0xe0000000ull | (m->cfg.uncore == MODEL_UNCORE_SKL ? 0x1full : 0xfull)))
			return MODEL_VEC_GP;
		unc.global_ctrl = val;
		return 0;
	case R_UNC_CONFIG: return MODEL_VEC_GP; /* read-only */
	case R_UNC_EVTSEL:
		/* Approximation: every bit outside the documented fields #GPs. */
		if (val & ~0x1fd4ffffull)
			return MODEL_VEC_GP;
		unc.evtsel[i / 2][i % 2] = val;
		return 0;
	case R_UNC_CTR:
		if (val & ~wmask(44))
			return MODEL_VEC_GP;
		unc.ctr[i / 2][i % 2] = val;
		return 0;
	case R_NONE: break;
	}
	return MODEL_VEC_GP;
}

/* --- pmu/pmu_hw.h on the model --- */

int pmu_hw_rdmsr(uint32_t msr, uint64_t *val)
{
	if (cpus[cur].cfg.vendor_ops)
		return cpus[cur].cfg.vendor_ops->rdmsr(cur, msr, val);
	return do_rdmsr(&cpus[cur], msr, val);
}

int pmu_hw_wrmsr(uint32_t msr, uint64_t val)
{
	const struct model_vendor_ops *vops = cpus[cur].cfg.vendor_ops;
	int fault = vops ? vops->wrmsr(cur, msr, val) : do_wrmsr(&cpus[cur], msr, val);

	if (trace_len < MODEL_TRACE_MAX)
		trace[trace_len++] = (struct model_write){ cur, msr, val, fault };
	return fault;
}

/* RDPMC (SDM vol. 2B): ECX[31:16] is the counter type with an
 * architectural PMU (0 GP, 4000H fixed); unsupported encodings #GP; at
 * CPL > 0 it needs CR4.PCE. ECX[31] "fast read" only on parts that have it. */
int pmu_hw_rdpmc(uint32_t ecx, uint64_t *val)
{
	struct model_cpu *m = &cpus[cur];
	bool fast = ecx >> 31;
	uint32_t type = (ecx >> 16) & 0x7fff, idx = ecx & 0xffff;
	uint64_t v;

	*val = 0;
	if (m->cfg.vendor_ops) {
		int fault = m->cfg.vendor_ops->rdpmc(cur, ecx, val);
		if (!fault && rdpmc_hook) {
			void (*fn)(void *) = rdpmc_hook;
			rdpmc_hook = NULL;
			fn(rdpmc_hook_arg);
		}
		return fault;
	}
	if (m->cfg.ignores_writes)
		return MODEL_VEC_UD;
	if (m->cfg.version == 0 || m->cfg.rdpmc_gp)
		return MODEL_VEC_GP;
	if (cur_cpl > 0 && !cur_pce)
		return MODEL_VEC_GP;
	if (fast && !m->cfg.fast_rdpmc)
		return MODEL_VEC_GP;
	if (type == 0 && gp_exists(m, idx))
		v = m->pmc[idx];
	else if (type == 0x4000 && fixed_exists(m, idx))
		v = m->fixed[idx];
	else
		return MODEL_VEC_GP;
	*val = fast ? (uint32_t)v : v;
	if (rdpmc_hook) {
		void (*fn)(void *) = rdpmc_hook;
		rdpmc_hook = NULL;
		fn(rdpmc_hook_arg);
	}
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
	if (c->vendor_ops) {
		c->vendor_ops->cpuid(cur, leaf, subleaf, r);
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
	switch (leaf) {
	case 0:
		r->eax = c->max_leaf;
		memcpy(&r->ebx, v, 4);
		memcpy(&r->edx, v + 4, 4);
		memcpy(&r->ecx, v + 8, 4);
		break;
	case 1:
		r->eax = c->signature;
		r->ecx = BIT(CPUID_1_ECX_CX16_BIT) | (c->pdcm ? BIT(CPUID_1_ECX_PDCM_BIT) : 0) |
			 (c->hypervisor ? BIT(CPUID_1_ECX_HYPERVISOR_BIT) : 0);
		break;
	case 7:
		if (subleaf == 0)
			r->edx = c->hybrid ? BIT(CPUID_7_EDX_HYBRID_BIT) : 0;
		break;
	case 0x0a:
		r->eax = c->version | (uint32_t)c->num_gp << 8 | (uint32_t)c->gp_width << 16 |
			 (uint32_t)c->ebx_len << 24;
		r->ebx = c->ebx_unavail;
		r->ecx = c->version >= 5 ? c->fixed_bitmap : 0;
		r->edx = c->version >= 2 ? (c->num_fixed | (uint32_t)c->fixed_width << 5 |
					    (c->anythread_deprecated ? 1u << 15 : 0))
					 : 0;
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
	case 0x1a:
		if (c->hybrid)
			r->eax = (uint32_t)c->core_type << 24 | (c->native_model & 0xffffff);
		break;
	case 0x23:
		if (!c->leaf23)
			break;
		if (subleaf == 0)
			r->eax = 1u << 1; /* sub-leaf 1 (counter bitmaps) valid */
		else if (subleaf == 1)
			r->eax = c->leaf23_gp, r->ebx = c->leaf23_fixed;
		break;
	default: break;
	}
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

uint64_t model_peek(unsigned cpu, uint32_t msr)
{
	struct model_cpu *m = &cpus[cpu < ncpus ? cpu : 0];
	unsigned i;

	if (m->cfg.vendor_ops)
		return m->cfg.vendor_ops->peek(cpu < ncpus ? cpu : 0, msr);
	switch (decode(m, msr, &i)) {
	case R_PMC:
	case R_APMC: return m->pmc[i];
	case R_EVTSEL: return m->evtsel[i];
	case R_FIXED: return m->fixed[i];
	case R_FIXED_CTRL: return m->fixed_ctrl;
	case R_GLOBAL_STATUS: return m->global_status;
	case R_GLOBAL_CTRL: return m->global_ctrl;
	case R_INUSE: return inuse_value(m);
	case R_PERF_CAPS: return m->cfg.perf_caps;
	case R_DEBUGCTL: return m->debugctl;
	case R_OFFCORE: return *offcore_reg(m, i);
	case R_UNC_GLOBAL: return unc.global_ctrl;
	case R_UNC_CONFIG: return unc_config_value(&m->cfg);
	case R_UNC_EVTSEL: return unc.evtsel[i / 2][i % 2];
	case R_UNC_CTR: return unc.ctr[i / 2][i % 2];
	default: return 0;
	}
}

void model_poke(unsigned cpu, uint32_t msr, uint64_t val)
{
	struct model_cpu *m = &cpus[cpu < ncpus ? cpu : 0];
	unsigned i;

	if (m->cfg.vendor_ops) {
		m->cfg.vendor_ops->poke(cpu < ncpus ? cpu : 0, msr, val);
		return;
	}
	switch (decode(m, msr, &i)) {
	case R_PMC:
	case R_APMC: m->pmc[i] = val; break;
	case R_EVTSEL: m->evtsel[i] = val; break;
	case R_FIXED: m->fixed[i] = val; break;
	case R_FIXED_CTRL: m->fixed_ctrl = val; break;
	case R_GLOBAL_STATUS: m->global_status = val; break;
	case R_GLOBAL_CTRL: m->global_ctrl = val; break;
	case R_DEBUGCTL: m->debugctl = val; break;
	case R_OFFCORE: *offcore_reg(m, i) = val; break;
	case R_UNC_GLOBAL: unc.global_ctrl = val; break;
	case R_UNC_EVTSEL: unc.evtsel[i / 2][i % 2] = val; break;
	case R_UNC_CTR: unc.ctr[i / 2][i % 2] = val; break;
	default: break;
	}
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

enum model_ev { EV_NONE, EV_CYCLES, EV_INSTR, EV_REF, EV_LLC_REF, EV_LLC_MISS, EV_BR, EV_BR_MISS, EV_SLOTS };

/* Architectural encodings (SDM vol. 3B, "Pre-defined Architectural
 * Performance Events"); CPUID.0AH:EBX-unavailable events count nothing. */
static enum model_ev gp_event(const struct model_cpu *m, uint64_t sel)
{
	static const struct {
		uint8_t ev, um;
		enum model_ev e;
		unsigned bit;
	} map[] = {
		{ 0x3c, 0x00, EV_CYCLES, 0 },  { 0xc0, 0x00, EV_INSTR, 1 },    { 0x3c, 0x01, EV_REF, 2 },
		{ 0x2e, 0x4f, EV_LLC_REF, 3 }, { 0x2e, 0x41, EV_LLC_MISS, 4 }, { 0xc4, 0x00, EV_BR, 5 },
		{ 0xc5, 0x00, EV_BR_MISS, 6 }, { 0xa4, 0x01, EV_SLOTS, 7 },
	};
	uint8_t ev = sel & 0xff, um = (sel >> 8) & 0xff;

	for (unsigned i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].ev == ev && map[i].um == um) {
			if (map[i].bit >= m->cfg.ebx_len || ((m->cfg.ebx_unavail >> map[i].bit) & 1))
				return EV_NONE;
			return map[i].e;
		}
	return EV_NONE;
}

static uint64_t work_total(const struct model_work *w, enum model_ev e)
{
	switch (e) {
	case EV_CYCLES: return w->cycles;
	case EV_INSTR: return w->instructions;
	case EV_REF: return w->ref_cycles;
	case EV_LLC_REF: return w->llc_refs;
	case EV_LLC_MISS: return w->llc_misses;
	case EV_BR: return w->branches;
	case EV_BR_MISS: return w->branch_misses;
	case EV_SLOTS: return w->slots;
	default: return 0;
	}
}

/* Events of kind e in cycle c: from the per-cycle array, or spread evenly. */
static uint64_t per_cycle(const struct model_work *w, enum model_ev e, size_t c, size_t ncyc)
{
	if (e == EV_CYCLES)
		return 1;
	if (e != EV_INSTR)
		return 0; /* approximation: other events have no per-cycle profile */
	if (w->retire_per_cycle)
		return w->retire_per_cycle[c];
	return w->instructions * (c + 1) / ncyc - w->instructions * c / ncyc;
}

/* CMASK / INV / EDGE (SDM vol. 3B, "Architectural Performance Monitoring
 * Version 1 Facilities"): with CMASK > 0 a cycle counts when its event
 * count >= CMASK (< CMASK with INV); EDGE counts only cycles where that
 * condition turns true. */
static uint64_t filtered(struct model_cpu *m, unsigned slot, const struct model_work *w, enum model_ev e,
			 uint64_t sel)
{
	unsigned cmask = (sel >> PERFEVTSEL_CMASK_SHIFT) & 0xff;
	bool inv = (sel >> PERFEVTSEL_INV_BIT) & 1, edge = (sel >> PERFEVTSEL_EDGE_BIT) & 1;
	size_t ncyc = w->retire_per_cycle ? w->ncycles : w->cycles;
	uint64_t n = 0;

	if (!cmask && !edge)
		return work_total(w, e);
	if (!cmask)
		cmask = 1;
	for (size_t c = 0; c < ncyc; c++) {
		uint64_t k = per_cycle(w, e, c, ncyc);
		bool cond = inv ? k < cmask : k >= cmask;
		if (edge ? (cond && !m->cond_prev[slot]) : cond)
			n++;
		m->cond_prev[slot] = cond;
	}
	return n;
}

/* Add delta to a counter of width w; true when it wrapped past the width. */
static bool add_wrap(uint64_t *ctr, uint64_t delta, unsigned w)
{
	uint64_t mask = wmask(w), old = *ctr & mask;
	bool ovf = delta > mask - old;

	*ctr = (old + delta) & mask;
	return ovf;
}

void model_tick(const struct model_work *w)
{
	struct model_cpu *m = &cpus[cur];
	const struct model_cpu_config *c = &m->cfg;
	bool frozen = c->version >= 4 && ((m->global_status >> PERF_GLOBAL_STATUS_CTR_FRZ_BIT) & 1);
	bool pmi = false;

	/* Approximation: the TSC advances with the core cycles of the work. */
	m->tsc += w->cycles;
	if (c->vendor_ops) {
		if (c->vendor_ops->tick(cur, w)) {
			m->pmi_count++;
			if (pmi_handler)
				pmi_handler(pmi_handler_arg);
		}
		return;
	}
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
	if (c->version == 0 || c->ignores_writes || c->no_count || frozen)
		return;
	for (unsigned x = 0; x < 32; x++) {
		uint64_t sel = m->evtsel[x];
		bool ring = cur_cpl == 0 ? (sel >> PERFEVTSEL_OS_BIT) & 1 : (sel >> PERFEVTSEL_USR_BIT) & 1;
		if (!gp_exists(m, x) || !((sel >> PERFEVTSEL_EN_BIT) & 1) || !ring)
			continue;
		/* GLOBAL_CTRL is AND-ed with the per-counter enable (v2+). */
		if (c->version >= 2 && !((m->global_ctrl >> x) & 1))
			continue;
		enum model_ev e = gp_event(m, sel);
		uint64_t delta = filtered(m, x, w, e, sel);
		/* OFFCORE_RESPONSE_0/1 (0xB7/0xBB umask 1) count through their
		 * RSP MSR: demand data reads with an L3-miss response, when the
		 * value selects both (approximation: no other request types). */
		if (c->offcore && ((sel & 0xff) == 0xb7 || (sel & 0xff) == 0xbb) &&
		    ((sel >> 8) & 0xff) == 1) {
			uint64_t rsp = *offcore_reg(m, (sel & 0xff) == 0xbb);
			delta = (rsp & 1) && (rsp & c->offcore_l3_miss) ? w->dmnd_rd_l3_miss : 0;
		}
		if (add_wrap(&m->pmc[x], delta, c->gp_width)) {
			if (c->version >= 2)
				m->global_status |= 1ull << x;
			if ((sel >> PERFEVTSEL_INT_BIT) & 1)
				pmi = true;
		}
	}
	for (unsigned i = 0; i < 16; i++) {
		static const enum model_ev fixed_ev[4] = { EV_INSTR, EV_CYCLES, EV_REF, EV_SLOTS };
		uint64_t f = (m->fixed_ctrl >> FIXED_CTR_CTRL_SHIFT(i)) & FIXED_CTR_CTRL_FIELD_MASK;
		bool ring = cur_cpl == 0 ? (f >> FIXED_CTR_CTRL_OS_BIT) & 1
					 : (f >> FIXED_CTR_CTRL_USR_BIT) & 1;
		if (!fixed_exists(m, i) || !ring || !((m->global_ctrl >> (32 + i)) & 1))
			continue;
		uint64_t delta = i < 4 ? work_total(w, fixed_ev[i]) : 0;
		if (add_wrap(&m->fixed[i], delta, c->fixed_width)) {
			m->global_status |= 1ull << (32 + i);
			if ((f >> FIXED_CTR_CTRL_PMI_BIT) & 1)
				pmi = true;
		}
	}
	if (!pmi)
		return;
	m->pmi_count++;
	/* Freeze on PMI, applied after the tick that raised it (approximation:
	 * hardware freezes within a few cycles of the overflow). Version 4
	 * sets CTR_FRZ/LBR_FRZ and leaves GLOBAL_CTRL; earlier versions clear
	 * GLOBAL_CTRL's enables (SDM vol. 3B, "IA32_DEBUGCTL MSR" and
	 * "Architectural Performance Monitoring Version 4"). */
	if ((m->debugctl >> DEBUGCTL_FREEZE_PERFMON_ON_PMI_BIT) & 1) {
		if (c->version >= 4)
			m->global_status |= BIT(PERF_GLOBAL_STATUS_CTR_FRZ_BIT);
		else
			m->global_ctrl = 0;
	}
	if (c->version >= 4 && ((m->debugctl >> DEBUGCTL_FREEZE_LBRS_ON_PMI_BIT) & 1))
		m->global_status |= BIT(PERF_GLOBAL_STATUS_LBR_FRZ_BIT);
	/* The PMI is taken once the tick's work is done (approximation: real
	 * parts deliver it a few instructions after the overflow). */
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
