/* Architectural PEBS: decoding CPUID.23H sub-leaves 4 and 5, the
 * IA32_PEBS_BASE/INDEX and CFG_C encodings, record sizes and record
 * parsing.
 *
 * Sources: the Intel ISE, chapter "Architectural PEBS" (the SDM's text
 * since 2024), as Linux reads it: the arch-PEBS series merged for 6.19
 * (tip cc5755ee9b8b "Initialize architectural PEBS": CPUID.23H.4/5;
 * d21954c8a0ff "Process arch-PEBS records or record fragments": the
 * header, the groups' layout and order, the index's WR field;
 * 2721e8da2de7 "Allocate arch-PEBS buffer and initialize PEBS_BASE MSR":
 * physical address, SIZE in [3:0]; "Setup PEBS data configuration and
 * enable legacy groups": the CFG_C bits and the threshold). */
#include "pmu/intel/arch_pebs.h"

#include "arch/x86/cpuid.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/intel/caps.h"

void pmu_arch_pebs_decode(const struct pmu_caps *c, struct pmu_arch_pebs_caps *a)
{
	const struct intel_caps *ic = intel_caps(c);
	struct cpuid_regs r;
	uint64_t exist;

	*a = (struct pmu_arch_pebs_caps){ .present = false };
	if (c->vendor != PMU_VENDOR_INTEL) {
		ksnprintf(a->why, sizeof(a->why),
			  "architectural PEBS is Intel's (AMD samples precisely with IBS)");
		return;
	}
	if (!ic->perf_caps_valid || ic->pebs_format != 0xf) {
		ksnprintf(
			a->why, sizeof(a->why),
			"no architectural PEBS: IA32_PERF_CAPABILITIES[11:8] (PEBS format) is %u%s, not 0xF",
			ic->pebs_format, ic->perf_caps_valid ? "" : " (the MSR is absent)");
		return;
	}
	/* Linux update_pmu_cap: both sub-leaves valid, or no arch-PEBS. */
	if (!ic->arch_perfmon_ext || !((ic->leaf23_valid >> CPUID_23_EAX_PEBS_CAPS_BIT) & 1) ||
	    !((ic->leaf23_valid >> CPUID_23_EAX_PEBS_COUNTERS_BIT) & 1)) {
		ksnprintf(
			a->why, sizeof(a->why),
			"PEBS format 0xF (architectural PEBS), but CPUID.23H.0:EAX=%#x lacks sub-leaves 4 and 5%s",
			ic->leaf23_valid,
			ic->arch_perfmon_ext ? "" : " (no leaf 23H: CPUID.(07H,1):EAX[8]=0)");
		return;
	}
	r = ic->leaf23_regs[4];
	a->groups = (uint64_t)r.ebx << 32;
	r = ic->leaf23_regs[5];
	a->counters = (uint64_t)r.eax | (uint64_t)r.ecx << PERF_GLOBAL_FIXED_SHIFT;
	a->pdist = (uint64_t)r.ebx | (uint64_t)r.edx << PERF_GLOBAL_FIXED_SHIFT;
	/* Linux WARNs and turns arch-PEBS off when 23.5 names a counter
	 * 23.1 does not have. */
	exist = (uint64_t)c->gp_mask | (uint64_t)c->fixed_mask << PERF_GLOBAL_FIXED_SHIFT;
	if ((a->counters | a->pdist) & ~exist) {
		ksnprintf(
			a->why, sizeof(a->why),
			"CPUID.23H.5 names counters %#lx (PEBS) / %#lx (PDIST) beyond those that exist (%#lx)",
			(unsigned long)a->counters, (unsigned long)a->pdist, (unsigned long)exist);
		return;
	}
	if (!a->counters) {
		ksnprintf(a->why, sizeof(a->why), "architectural PEBS, but CPUID.23H.5 names no counter");
		return;
	}
	a->present = true;
}

uint32_t pmu_arch_pebs_cfg_c_msr(int idx)
{
	if (PMU_IDX_IS_FIXED(idx))
		return MSR_IA32_PMC_V6_FX0_CFG_C +
		       MSR_IA32_PMC_V6_STEP * (uint32_t)(idx - PMU_IDX_FIXED_BASE);
	return MSR_IA32_PMC_V6_GP0_CFG_C + MSR_IA32_PMC_V6_STEP * (uint32_t)idx;
}

uint64_t pmu_arch_pebs_base(uint64_t phys, unsigned size_log)
{
	return (phys & ~0xfffull) | (size_log & ARCH_PEBS_BASE_SIZE_MASK);
}

uint64_t pmu_arch_pebs_index(uint64_t wr, uint64_t thresh, bool en)
{
	return (wr & ARCH_PEBS_INDEX_WR_MASK) |
	       ((thresh >> ARCH_PEBS_INDEX_OFFSET_SHIFT) << ARCH_PEBS_INDEX_THRESH_SHIFT &
		ARCH_PEBS_INDEX_THRESH_MASK) |
	       (en ? BIT(ARCH_PEBS_INDEX_EN_BIT) : 0);
}

struct pmu_arch_pebs_index pmu_arch_pebs_index_decode(uint64_t v)
{
	return (struct pmu_arch_pebs_index){
		.wr = v & ARCH_PEBS_INDEX_WR_MASK,
		.thresh = ((v & ARCH_PEBS_INDEX_THRESH_MASK) >> ARCH_PEBS_INDEX_THRESH_SHIFT)
			  << ARCH_PEBS_INDEX_OFFSET_SHIFT,
		.full = (v >> ARCH_PEBS_INDEX_FULL_BIT) & 1,
		.en = (v >> ARCH_PEBS_INDEX_EN_BIT) & 1,
	};
}

/* Linux ARCH_PEBS_LBR_NUM_8/_16/_VAR, ARCH_PEBS_BASE_LBR_ENTRIES. */
unsigned pmu_arch_pebs_lbr_entries(unsigned field, unsigned depth)
{
	switch (field & 3) {
	case 1: return 8;
	case 2: return 16;
	case 3: return depth;
	default: return 0;
	}
}

static unsigned groups_size(uint64_t g, unsigned lbr_entries)
{
	unsigned n = ARCH_PEBS_HEADER_SIZE;

	if ((g >> ARCH_PEBS_EN_BIT) & 1)
		n += ARCH_PEBS_BASIC_SIZE;
	if ((g >> ARCH_PEBS_AUX_BIT) & 1)
		n += ARCH_PEBS_AUX_SIZE;
	if ((g >> ARCH_PEBS_GPR_BIT) & 1)
		n += ARCH_PEBS_GPRS_SIZE;
	if ((g >> ARCH_PEBS_XMM_BIT) & 1)
		n += ARCH_PEBS_XER_SIZE;
	if (g & ARCH_PEBS_LBR_MASK)
		n += ARCH_PEBS_LBR_HEADER_SIZE + ARCH_PEBS_LBR_ENTRY_SIZE * lbr_entries;
	return n;
}

unsigned pmu_arch_pebs_record_size(uint64_t cfg_c, unsigned lbr_depth)
{
	if (cfg_c & ARCH_PEBS_CNTR_MASK)
		return 0;
	return groups_size(
		cfg_c | BIT(ARCH_PEBS_EN_BIT),
		pmu_arch_pebs_lbr_entries((unsigned)((cfg_c & ARCH_PEBS_LBR_MASK) >> ARCH_PEBS_LBR_SHIFT),
					  lbr_depth));
}

static uint64_t rd64(const uint8_t *b, size_t off)
{
	uint64_t v;
	memcpy(&v, b + off, sizeof(v));
	return v;
}

int pmu_arch_pebs_parse(const void *rec, size_t avail, struct pmu_arch_pebs_record *r, char *why,
			size_t whylen)
{
	const uint8_t *b = rec;
	uint64_t h;
	size_t off = ARCH_PEBS_HEADER_SIZE;
	unsigned lbr_field, want;

	memset(r, 0, sizeof(*r));
	if (avail < ARCH_PEBS_HEADER_SIZE)
		return kerrf(why, whylen, PMU_E_INVAL, "a record header is %u bytes, %zu remain",
			     ARCH_PEBS_HEADER_SIZE, avail);
	h = rd64(b, 0);
	r->size = (unsigned)(h & ARCH_PEBS_HDR_SIZE_MASK);
	r->groups = h & ARCH_PEBS_GROUPS;
	r->cont = (h >> ARCH_PEBS_HDR_CONT_BIT) & 1;
	r->hdr_rsvd = rd64(b, 8);
	if (!((h >> ARCH_PEBS_EN_BIT) & 1))
		return kerrf(why, whylen, PMU_E_INVAL,
			     "header %#lx: no basic group (bit 63), so not a record's first fragment",
			     (unsigned long)h);
	if (h & ARCH_PEBS_CNTR_MASK)
		return kerrf(why, whylen, PMU_E_INVAL,
			     "header %#lx: a counters group, which is not parsed here", (unsigned long)h);
	if (r->size > avail)
		return kerrf(why, whylen, PMU_E_INVAL, "record of %u bytes, %zu remain", r->size, avail);
	/* The LBR header's depth is needed before the size can be checked. */
	lbr_field = (unsigned)((h & ARCH_PEBS_LBR_MASK) >> ARCH_PEBS_LBR_SHIFT);
	want = groups_size(h, 0);
	if (lbr_field) {
		size_t lbr_off = want - ARCH_PEBS_LBR_HEADER_SIZE;
		if (lbr_off + ARCH_PEBS_LBR_HEADER_SIZE > r->size)
			return kerrf(why, whylen, PMU_E_INVAL,
				     "record of %u bytes has no room for its LBR header", r->size);
		r->lbr_ctl = rd64(b, lbr_off + 8);
		r->lbr_depth = rd64(b, lbr_off + 16);
		r->lbr_total = pmu_arch_pebs_lbr_entries(lbr_field,
							 r->lbr_depth > 64 ? 65 : (unsigned)r->lbr_depth);
		want = groups_size(h, r->lbr_total);
	}
	if (r->size != want)
		return kerrf(why, whylen, PMU_E_INVAL,
			     "header %#lx: size field %u, but its groups make %u bytes", (unsigned long)h,
			     r->size, want);
	r->ip = rd64(b, off);
	r->applicable = rd64(b, off + 8);
	r->tsc = rd64(b, off + 16);
	off += ARCH_PEBS_BASIC_SIZE;
	if ((h >> ARCH_PEBS_AUX_BIT) & 1)
		off += ARCH_PEBS_AUX_SIZE;
	if ((h >> ARCH_PEBS_GPR_BIT) & 1) {
		r->has_gprs = true;
		r->rflags = rd64(b, off);
		r->rip = rd64(b, off + 8);
		for (unsigned i = 0; i < 16; i++)
			r->gpr[i] = rd64(b, off + 16 + 8 * i);
		r->ssp = rd64(b, off + 16 + 8 * 16);
		off += ARCH_PEBS_GPRS_SIZE;
	}
	if ((h >> ARCH_PEBS_XMM_BIT) & 1) {
		r->has_xmm = true;
		r->xer_state = rd64(b, off);
		r->xmm0[0] = rd64(b, off + 16);
		r->xmm0[1] = rd64(b, off + 24);
		off += ARCH_PEBS_XER_SIZE;
	}
	if (lbr_field) {
		off += ARCH_PEBS_LBR_HEADER_SIZE;
		r->lbr_n = r->lbr_total > ARCH_PEBS_MAX_LBR ? ARCH_PEBS_MAX_LBR : r->lbr_total;
		for (unsigned k = 0; k < r->lbr_n; k++) {
			r->lbr[k].from = rd64(b, off + ARCH_PEBS_LBR_ENTRY_SIZE * k);
			r->lbr[k].to = rd64(b, off + ARCH_PEBS_LBR_ENTRY_SIZE * k + 8);
			r->lbr[k].info = rd64(b, off + ARCH_PEBS_LBR_ENTRY_SIZE * k + 16);
		}
	}
	return PMU_OK;
}
