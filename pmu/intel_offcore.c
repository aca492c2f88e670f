/* Offcore response (Intel): which models have MSR_OFFCORE_RSP_0/1, which
 * bits they accept, and who holds them (sharing, the 0xB7 <-> 0xBB move). */
#include "pmu/intel_offcore.h"

#include "arch/x86/msr.h"
#include "lib/bits.h"
#include "lib/printf.h"
#include "lib/spinlock.h"
#include "pmu/pmu_hw.h"

/*
 * The RSP MSR layouts (SDM vol. 3B, "Off-core Response Performance
 * Monitoring" in the Nehalem, Westmere, Sandy Bridge, Haswell and Skylake
 * sections; the valid masks are the ones Linux uses per model in
 * arch/x86/events/intel/core.c, intel_nehalem/westmere/snb/snbep/skl
 * _extra_regs, whose #GP behaviour they were fixed against).
 *
 * Nehalem/Westmere: [7:0] request type (bit 0 demand data read), [15:8]
 * response type; L3 misses are the responses 12 remote cache forward,
 * 13 remote DRAM, 14 local DRAM, 15 non-DRAM. The MSRs belong to the core
 * and are shared by its two threads (Linux keeps them in per-core shared
 * state for these models only).
 *
 * Sandy Bridge on: [15:0] request type (bits 0-11 and 15 exist), [30:16]
 * supplier (16 any response, 17 no supplier, 18-21 L3 hit states, 22 local
 * DRAM, 23-30 remote suppliers on multi-socket parts), [37:31] snoop
 * result. Everything from bit 22 up is "not an L3 hit": demand data reads
 * that missed the L3 with any response, DEMAND_DATA_RD.L3_MISS.ANY_RESPONSE,
 * are bit 0 with bits 37:22, 0x3FFFC00001. Client Sandy/Ivy Bridge lack the remote bits
 * 23-30. From Sandy Bridge the MSRs are per logical processor (Linux sets
 * PMU_FL_NO_HT_SHARING: "all extra regs are per-cpu when HT is on").
 */
#define NHM_VALID 0xffffull
#define NHM_REQUEST 0x00ffull
#define NHM_DMND_RD_L3_MISS 0xf001ull /* request bit 0, responses 12-15 */
#define SNB_REQUEST 0x8fffull
#define SNB_CLIENT_VALID 0x3f807f8fffull
#define SNB_SERVER_VALID 0x3fffff8fffull
#define SNB_L3_MISS_RESPONSE 0x3fffc00000ull /* bits 37:22 */
#define SNB_DMND_DATA_RD 0x1ull

#define NHM INTEL_UARCHS(INTEL_NEHALEM)
#define WSM INTEL_UARCHS(INTEL_WESTMERE)
#define SNB_IVB (INTEL_UARCHS(INTEL_SANDYBRIDGE) | INTEL_UARCHS(INTEL_IVYBRIDGE))
#define HSW_BDW (INTEL_UARCHS(INTEL_HASWELL) | INTEL_UARCHS(INTEL_BROADWELL))
#define SKL INTEL_UARCHS(INTEL_SKYLAKE)

static const struct pmu_offcore_model offcore_models[] = {
	/* SDM vol. 3B, Nehalem "Off-core Response Performance Monitoring in
	 * the Processor Core"; Linux intel_nehalem_extra_regs. */
	{ "Nehalem", NHM, NHM, 1, NHM_VALID, NHM_REQUEST, NHM_DMND_RD_L3_MISS, true },
	/* SDM vol. 3B, Westmere off-core response (RSP_0 and RSP_1); Linux
	 * intel_westmere_extra_regs. */
	{ "Westmere", WSM, WSM, 2, NHM_VALID, NHM_REQUEST, NHM_DMND_RD_L3_MISS, true },
	/* SDM vol. 3B, Sandy Bridge "Off-core Response Performance
	 * Monitoring"; Linux intel_snb_extra_regs. Client Sandy/Ivy Bridge
	 * lack the remote supplier bits. */
	{ "Sandy/Ivy Bridge client", SNB_IVB, 0, 2, SNB_CLIENT_VALID, SNB_REQUEST,
	  SNB_DMND_DATA_RD | (SNB_L3_MISS_RESPONSE & SNB_CLIENT_VALID), false },
	/* SDM vol. 3B, Sandy Bridge/Haswell off-core response; Linux
	 * intel_snbep_extra_regs. */
	{ "Sandy/Ivy Bridge-EP, Haswell, Broadwell", HSW_BDW, SNB_IVB | HSW_BDW, 2, SNB_SERVER_VALID,
	  SNB_REQUEST, SNB_DMND_DATA_RD | SNB_L3_MISS_RESPONSE, false },
	/* SDM vol. 3B, Skylake "Off-core Response Performance Monitoring";
	 * Linux intel_skl_extra_regs. */
	{ "Skylake", SKL, SKL, 2, SNB_SERVER_VALID, SNB_REQUEST, SNB_DMND_DATA_RD | SNB_L3_MISS_RESPONSE,
	  false },
};

const struct pmu_offcore_model *pmu_offcore_model(const struct pmu_caps *c)
{
	const struct intel_model *m = intel_model_of(c);

	for (unsigned i = 0; m && i < ARRAY_LEN(offcore_models); i++)
		if (intel_uarch_in(m->uarch, m->server ? offcore_models[i].server : offcore_models[i].client))
			return &offcore_models[i];
	return NULL;
}

unsigned pmu_offcore_msrs(const struct pmu_caps *c)
{
	const struct pmu_offcore_model *m = pmu_offcore_model(c);
	return m ? m->nmsrs : 0;
}

int pmu_offcore_check(const struct pmu_caps *c, const struct pmu_event_attr *a, char *why, size_t whylen)
{
	const struct pmu_offcore_model *m = pmu_offcore_model(c);
	uint64_t v = a->offcore_rsp;

	if (!m) {
		ksnprintf(why, whylen, "no offcore response table for family %u model %#x", c->family,
			  c->model);
		return PMU_E_UNSUPPORTED;
	}
	/* A reserved bit would #GP at the WRMSR, long after the caller could
	 * be told why: refuse it here. */
	if (v & ~m->valid) {
		ksnprintf(
			why, whylen,
			"offcore_rsp=%#llx sets bits %#llx that MSR_OFFCORE_RSP_x does not have on %s (valid %#llx)",
			(unsigned long long)v, (unsigned long long)(v & ~m->valid), m->name,
			(unsigned long long)m->valid);
		return PMU_E_INVAL;
	}
	/* The SDM's off-core response sections: a request type and a response
	 * type must both be selected, or the event counts nothing. */
	if (!(v & m->request)) {
		ksnprintf(why, whylen,
			  "offcore_rsp=%#llx selects no request type (bits %#llx): it would count nothing",
			  (unsigned long long)v, (unsigned long long)m->request);
		return PMU_E_INVAL;
	}
	if (!(v & m->valid & ~m->request)) {
		ksnprintf(why, whylen,
			  "offcore_rsp=%#llx selects no response type (bits %#llx): it would count nothing",
			  (unsigned long long)v, (unsigned long long)(m->valid & ~m->request));
		return PMU_E_INVAL;
	}
	return PMU_OK;
}

uint32_t pmu_offcore_core_id(void)
{
	struct cpuid_regs r;
	uint32_t max_leaf, apic, logical, cores = 1, threads, shift = 0;

	pmu_hw_cpuid(0, 0, &r);
	max_leaf = r.eax;
	if (max_leaf >= 0x0b) {
		pmu_hw_cpuid(0x0b, 0, &r);
		/* EBX[15:0] = 0: the leaf is not implemented (SDM vol. 2A, CPUID
		 * leaf 0BH). Sub-leaf 0 is the SMT level. */
		if (BITS(r.ebx, 15, 0) != 0)
			return r.edx >> BITS(r.eax, 4, 0);
	}
	/* Pre-0BH: initial APIC ID, logical processors per package
	 * (CPUID.01H:EBX[23:16], valid with EDX[28] HTT) over cores per
	 * package (CPUID.04H:EAX[31:26] + 1) gives the threads per core. */
	pmu_hw_cpuid(1, 0, &r);
	apic = BITS(r.ebx, 31, 24);
	logical = ((r.edx >> 28) & 1) ? (uint32_t)BITS(r.ebx, 23, 16) : 1;
	if (max_leaf >= 4) {
		pmu_hw_cpuid(4, 0, &r);
		if (BITS(r.eax, 4, 0))
			cores = (uint32_t)BITS(r.eax, 31, 26) + 1;
	}
	threads = logical > cores ? logical / cores : 1;
	while ((1u << shift) < threads)
		shift++;
	return apic >> shift;
}

static struct spinlock offcore_lock = SPINLOCK_INIT;

static void ensure_core_id(struct pmu_cpu *pc)
{
	if (!pc->core_id_valid) {
		pc->core_id = pmu_offcore_core_id();
		pc->core_id_valid = true;
	}
}

/* Under offcore_lock. */
static void view_locked(struct pmu_cpu *pc, const struct pmu_offcore_model *m, struct pmu_offcore_view *v)
{
	unsigned n = pmu_hw_ncpus();

	for (int s = 0; s < 2; s++) {
		v->val[s] = pc->extra_val[s];
		v->users[s] = pc->extra_users[s];
		v->sibling[s] = -1;
	}
	if (!m || !m->smt_shared)
		return;
	ensure_core_id(pc);
	for (unsigned cpu = 0; cpu < n && cpu < PMU_MAX_CPUS; cpu++) {
		struct pmu_cpu *o = pmu_cpu_of(cpu);
		if (cpu == pc->cpu || !o->initialised || !o->core_id_valid || o->core_id != pc->core_id)
			continue;
		for (int s = 0; s < 2; s++) {
			if (!o->extra_users[s])
				continue;
			/* Reservation keeps the values of one core equal. */
			v->val[s] = o->extra_val[s];
			v->users[s] += o->extra_users[s];
			if (v->sibling[s] < 0)
				v->sibling[s] = (int)cpu;
		}
	}
}

void pmu_offcore_view(struct pmu_cpu *pc, struct pmu_offcore_view *v)
{
	spin_lock(&offcore_lock, pmu_hw_cpu());
	view_locked(pc, pmu_offcore_model(&pc->caps), v);
	spin_unlock(&offcore_lock);
}

static bool slot_fits(const struct pmu_offcore_view *v, int s, uint64_t val)
{
	return !v->users[s] || v->val[s] == val;
}

static void busy_reason(struct pmu_event *ev, const struct pmu_offcore_view *v, unsigned nmsrs)
{
	char held[2][64];

	for (int s = 0; s < 2; s++) {
		if (v->sibling[s] >= 0)
			ksnprintf(held[s], sizeof(held[s]), " (also by SMT sibling CPU %d)", v->sibling[s]);
		else
			held[s][0] = '\0';
	}
	if (nmsrs < 2)
		ksnprintf(ev->reason, sizeof(ev->reason),
			  "%s: MSR_OFFCORE_RSP_0 (0x1a6) holds %#llx for %u event(s)%s and this model has no "
			  "MSR_OFFCORE_RSP_1; this one needs %#llx",
			  ev->name ? ev->name : "event", (unsigned long long)v->val[0], v->users[0], held[0],
			  (unsigned long long)ev->attr.offcore_rsp);
	else
		ksnprintf(
			ev->reason, sizeof(ev->reason),
			"%s: a third offcore value: MSR_OFFCORE_RSP_0 holds %#llx%s, MSR_OFFCORE_RSP_1 holds %#llx%s; "
			"this one needs %#llx",
			ev->name ? ev->name : "event", (unsigned long long)v->val[0], held[0],
			(unsigned long long)v->val[1], held[1], (unsigned long long)ev->attr.offcore_rsp);
}

int pmu_offcore_reserve(struct pmu_cpu *pc, struct pmu_event *const *evs, unsigned n, uint32_t *msr)
{
	const struct pmu_offcore_model *m = pmu_offcore_model(&pc->caps);
	unsigned nmsrs = m ? m->nmsrs : (pc->caps.offcore_msrs > 2 ? 2 : pc->caps.offcore_msrs);
	struct pmu_offcore_view v;
	int got[PMU_IDX_NR];
	int err = PMU_OK;

	if (n > PMU_IDX_NR)
		return PMU_E_INVAL;
	spin_lock(&offcore_lock, pmu_hw_cpu());
	view_locked(pc, m, &v);
	for (unsigned i = 0; i < n; i++) {
		uint64_t val = evs[i]->attr.offcore_rsp;
		int want, s;

		got[i] = -1;
		if (!msr[i])
			continue;
		want = pmu_offcore_slot(msr[i]);
		/* Linux's order (intel_alt_er): the MSR of the event code asked
		 * for, then the other one, whose event code the event takes. */
		if (want < (int)nmsrs && slot_fits(&v, want, val))
			s = want;
		else if (1 - want < (int)nmsrs && slot_fits(&v, 1 - want, val))
			s = 1 - want;
		else {
			busy_reason(evs[i], &v, nmsrs);
			if (i)
				ksnprintf(evs[0]->reason, sizeof(evs[0]->reason), "%s", evs[i]->reason);
			err = PMU_E_BUSY;
			break;
		}
		v.val[s] = val;
		v.users[s]++;
		got[i] = s;
	}
	if (err == PMU_OK) {
		for (unsigned i = 0; i < n; i++) {
			if (got[i] < 0)
				continue;
			pc->extra_val[got[i]] = evs[i]->attr.offcore_rsp;
			pc->extra_users[got[i]]++;
			msr[i] = got[i] ? MSR_OFFCORE_RSP_1 : MSR_OFFCORE_RSP_0;
		}
	}
	spin_unlock(&offcore_lock);
	return err;
}

void pmu_offcore_release(struct pmu_cpu *pc, uint32_t msr)
{
	int s = pmu_offcore_slot(msr);

	spin_lock(&offcore_lock, pmu_hw_cpu());
	if (pc->extra_users[s])
		pc->extra_users[s]--;
	spin_unlock(&offcore_lock);
}
