/* PEBS: decoding what a CPU offers, the DS area's reset slots, record
 * sizes and record parsing.
 *
 * Sources: Intel SDM vol. 3B, chapter "Performance Monitoring" ("Debug
 * Store (DS) Mechanism", the "Processor Event Based Sampling (PEBS)"
 * section of each microarchitecture with its record layout, "Adaptive
 * PEBS"), chapter "Debug, Branch Profile, TSC, ..." ("DS Save Area");
 * vol. 4 (IA32_MISC_ENABLE, IA32_PERF_CAPABILITIES); Linux
 * arch/x86/events/intel/ds.c (intel_ds_init: DTES64 required; format 5's
 * counter-reset area, 2145e77fecfb; the adaptive groups' order and sizes)
 * and arch/x86/include/asm/perf_event.h; kvm-unit-tests x86/pmu_pebs.c
 * (record size and format field); the Linux architectural-PEBS series
 * (tip d21954c8a0ff) for CPUID.23H sub-leaves 4 and 5. */
#include "pmu/intel/pebs.h"

#include "arch/x86/cpuid.h"
#include "lib/bits.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/intel/caps.h"
#include "pmu/pmu_hw.h"

/* Fixed formats 0-3: RFLAGS, RIP, RAX..R15 (0x90 bytes), then format 1's
 * status, data address, data source and latency (0xB0), format 2's
 * eventing IP and TSX tuning (0xC0), format 3's TSC (0xC8). */
static const unsigned fixed_size[] = { 0x90, 0xb0, 0xc0, 0xc8 };
#define REC_STATUS 0x90
#define REC_EVENTING_IP 0xb0
#define REC_TSC 0xc0

/* Adaptive groups (Linux perf_event.h: pebs_basic 32, pebs_meminfo 32,
 * pebs_gprs 144, pebs_xmm 256, lbr_entry 24). */
#define BASIC_SIZE 32u
#define MEMINFO_SIZE 32u
#define GPRS_SIZE 144u
#define XMMS_SIZE 256u
#define LBR_ENTRY_SIZE 24u

static void arch_pebs_decode(const struct pmu_caps *c, struct pmu_pebs_caps *p)
{
	struct cpuid_regs r;

	p->arch = true;
	if (c->max_leaf < 0x23) {
		ksnprintf(p->why, sizeof(p->why),
			  "PEBS format 0xF (architectural PEBS) but max CPUID leaf %#x < 23H", c->max_leaf);
		return;
	}
	pmu_hw_cpuid(0x23, 0, &r);
	if (!((r.eax >> CPUID_23_EAX_PEBS_CAPS_BIT) & 1) ||
	    !((r.eax >> CPUID_23_EAX_PEBS_COUNTERS_BIT) & 1)) {
		ksnprintf(
			p->why, sizeof(p->why),
			"PEBS format 0xF (architectural PEBS) but CPUID.23H.0:EAX=%#x lacks sub-leaves 4 and 5",
			r.eax);
		return;
	}
	pmu_hw_cpuid(0x23, 4, &r);
	p->arch_caps = r.ebx;
	pmu_hw_cpuid(0x23, 5, &r);
	p->arch_gp = r.eax;
	p->arch_pdist_gp = r.ebx;
	p->arch_fixed = r.ecx;
	p->arch_pdist_fixed = r.edx;
	ksnprintf(p->why, sizeof(p->why),
		  "architectural PEBS (CPUID.23H.4:EBX=%#x, PEBS counters GP %#x fixed %#x) replaces DS-area "
		  "PEBS (no IA32_PEBS_ENABLE): pmu.arch_pebs checks it",
		  p->arch_caps, p->arch_gp, p->arch_fixed);
}

void pmu_pebs_decode(const struct pmu_caps *c, struct pmu_pebs_caps *p)
{
	const struct intel_caps *ic = intel_caps(c);
	struct cpuid_regs r = { 0 };
	uint64_t misc = 0;
	int f;

	*p = (struct pmu_pebs_caps){ .present = false, .why = "" };
	if (c->vendor != PMU_VENDOR_INTEL) {
		ksnprintf(p->why, sizeof(p->why), "PEBS is Intel's (AMD samples precisely with IBS)");
		return;
	}
	if (!ic->pdcm || !ic->perf_caps_valid) {
		ksnprintf(p->why, sizeof(p->why),
			  "CPUID.01H:ECX.PDCM[15]=%u: no IA32_PERF_CAPABILITIES, no PEBS record format",
			  ic->pdcm);
		return;
	}
	if (!c->version) {
		ksnprintf(p->why, sizeof(p->why), "no architectural PMU (CPUID.0AH:EAX[7:0]=0)");
		return;
	}
	p->format = ic->pebs_format;
	p->trap = ic->pebs_trap;
	p->arch_regs = ic->pebs_arch_regs;
	if (p->format == PMU_PEBS_FORMAT_ARCH) {
		arch_pebs_decode(c, p);
		return;
	}
	pmu_hw_cpuid(1, 0, &r);
	if (!((r.edx >> CPUID_1_EDX_DS_BIT) & 1)) {
		ksnprintf(p->why, sizeof(p->why), "CPUID.01H:EDX.DS[21]=0: no debug store, no PEBS");
		return;
	}
	/* Linux intel_ds_init refuses PEBS without the 64-bit DS layout. */
	if (!((r.ecx >> CPUID_1_ECX_DTES64_BIT) & 1)) {
		ksnprintf(p->why, sizeof(p->why), "CPUID.01H:ECX.DTES64[2]=0: no 64-bit DS save area");
		return;
	}
	if ((f = pmu_hw_rdmsr(MSR_IA32_MISC_ENABLE, &misc))) {
		ksnprintf(p->why, sizeof(p->why), "IA32_MISC_ENABLE (MSR %#x) unreadable (vector %d)",
			  MSR_IA32_MISC_ENABLE, f);
		return;
	}
	if ((misc >> MISC_ENABLE_PEBS_UNAVAIL_BIT) & 1) {
		ksnprintf(p->why, sizeof(p->why), "IA32_MISC_ENABLE[12] PEBS_UNAVAILABLE=1 (MSR value %#lx)",
			  (unsigned long)misc);
		return;
	}
	if (p->format > 6) {
		ksnprintf(p->why, sizeof(p->why),
			  "PEBS record format %u is not one this driver knows (0-6, 0xF)", p->format);
		return;
	}
	/* Formats 4 and later write adaptive records (a basic group, then
	 * what PEBS_DATA_CFG asks); without PEBS_BASELINE there is no
	 * DATA_CFG and no per-counter adaptive bit, so the record is the basic
	 * group alone (Linux intel_ds_init: "Only basic record supported").
	 * KVM gives guests that shape (vmx_get_perf_capabilities clears
	 * PEBS_BASELINE, keeps the format).  Not driven here: refused with the
	 * value rather than sized as a fixed format it is not. */
	if (p->format >= 4 && !ic->pebs_baseline) {
		ksnprintf(p->why, sizeof(p->why),
			  "PEBS format %u without PEBS_BASELINE (IA32_PERF_CAPABILITIES=%#lx, bit 14 clear): "
			  "basic-group-only records are not driven here",
			  p->format, (unsigned long)ic->perf_caps);
		return;
	}
	p->adaptive = ic->pebs_baseline && p->format >= 4;
	p->fixed_reset_offset = p->format >= 5 ? DS_PEBS_RESET_FIXED0_FMT5 : DS_PEBS_RESET_FIXED0;
	/* Which counters: PMC0 only on Core 2 and Atom (format 0), PMC0-3 up
	 * to Skylake, every counter with adaptive PEBS (fixed ones at 32 + i
	 * in IA32_PEBS_ENABLE). */
	if (p->adaptive)
		p->counters = (uint64_t)c->gp_mask | (uint64_t)c->fixed_mask << PEBS_ENABLE_FIXED_SHIFT;
	else
		p->counters = c->gp_mask & (p->format == 0 ? 0x1u : 0xfu);
	if (!p->counters) {
		ksnprintf(p->why, sizeof(p->why), "PEBS format %u, but no counter that can use it",
			  p->format);
		return;
	}
	p->present = true;
}

uint64_t *pmu_pebs_reset_slot(const struct pmu_pebs_caps *p, struct pmu_ds_area *ds, int idx)
{
	unsigned gp_slots = p->format >= 5 ? 32 : 8;

	if (idx < 0)
		return NULL;
	if (!PMU_IDX_IS_FIXED(idx))
		return (unsigned)idx < gp_slots ? &ds->reset[idx] : NULL;
	idx -= PMU_IDX_FIXED_BASE;
	if ((unsigned)idx >= 16)
		return NULL;
	return &ds->reset[(p->fixed_reset_offset - DS_PEBS_RESET_GP0) / 8 + (unsigned)idx];
}

static unsigned adaptive_size(uint64_t cfg)
{
	unsigned n = BASIC_SIZE;

	if ((cfg >> PEBS_DATA_CFG_MEMINFO_BIT) & 1)
		n += MEMINFO_SIZE;
	if ((cfg >> PEBS_DATA_CFG_GPRS_BIT) & 1)
		n += GPRS_SIZE;
	if ((cfg >> PEBS_DATA_CFG_XMMS_BIT) & 1)
		n += XMMS_SIZE;
	if ((cfg >> PEBS_DATA_CFG_LBRS_BIT) & 1)
		n += LBR_ENTRY_SIZE *
		     (unsigned)(((cfg & PEBS_DATA_CFG_LBR_MASK) >> PEBS_DATA_CFG_LBR_SHIFT) + 1);
	return n;
}

unsigned pmu_pebs_record_size(const struct pmu_pebs_caps *p, bool adaptive_counter, uint64_t data_cfg)
{
	if (p->adaptive)
		return adaptive_counter ? adaptive_size(data_cfg) : BASIC_SIZE;
	if (p->format >= 4)
		return BASIC_SIZE; /* the basic group alone: never 0, callers divide by it */
	return fixed_size[p->format];
}

static uint64_t rd64(const uint8_t *b, size_t off)
{
	uint64_t v;
	memcpy(&v, b + off, sizeof(v));
	return v;
}

int pmu_pebs_parse(const struct pmu_pebs_caps *p, const void *rec, size_t avail, struct pmu_pebs_record *r,
		   char *why, size_t whylen)
{
	/* The fixed formats' GPR order, as encoding-order indices. */
	static const uint8_t fixed_order[16] = { PMU_GPR_RAX, PMU_GPR_RBX, PMU_GPR_RCX, PMU_GPR_RDX,
						 PMU_GPR_RSI, PMU_GPR_RDI, PMU_GPR_RBP, PMU_GPR_RSP,
						 8,           9,           10,          11,
						 12,          13,          14,          15 };
	const uint8_t *b = rec;
	size_t off;

	memset(r, 0, sizeof(*r));
	if (!p->adaptive) {
		if (p->format >= ARRAY_LEN(fixed_size))
			return kerrf(why, whylen, PMU_E_INVAL, "PEBS format %u has no fixed layout",
				     p->format);
		r->size = fixed_size[p->format];
		if (avail < r->size)
			return kerrf(why, whylen, PMU_E_INVAL, "a format-%u record is %u bytes, %zu remain",
				     p->format, r->size, avail);
		r->has_gprs = true;
		r->rflags = rd64(b, 0x00);
		r->rip = rd64(b, 0x08);
		for (unsigned i = 0; i < 16; i++)
			r->gpr[fixed_order[i]] = rd64(b, 0x10 + 8 * i);
		if (p->format >= 1) {
			r->has_applicable = true;
			r->applicable = rd64(b, REC_STATUS);
		}
		if (p->format >= 2) {
			r->has_ip = true;
			r->ip = rd64(b, REC_EVENTING_IP);
		}
		if (p->format >= 3) {
			r->has_tsc = true;
			r->tsc = rd64(b, REC_TSC);
		}
		return PMU_OK;
	}
	if (avail < BASIC_SIZE)
		return kerrf(why, whylen, PMU_E_INVAL, "an adaptive record is at least %u bytes, %zu remain",
			     BASIC_SIZE, avail);
	/* Basic group: bits 47:0 the DATA_CFG the record follows (31:0 with
	 * timed PEBS, kvm-unit-tests 939d7902), 63:48 its size. */
	r->format_field = rd64(b, 0) & 0xffffffffffffull;
	r->size = (unsigned)(rd64(b, 0) >> 48);
	r->has_ip = r->has_applicable = r->has_tsc = true;
	r->ip = rd64(b, 0x08);
	r->applicable = rd64(b, 0x10);
	r->tsc = rd64(b, 0x18);
	if (r->size != adaptive_size(r->format_field))
		return kerrf(why, whylen, PMU_E_INVAL,
			     "record size field %u, but format field %#lx makes its groups %u bytes", r->size,
			     (unsigned long)r->format_field, adaptive_size(r->format_field));
	if (r->size > avail)
		return kerrf(why, whylen, PMU_E_INVAL, "record of %u bytes, %zu remain", r->size, avail);
	off = BASIC_SIZE;
	if ((r->format_field >> PEBS_DATA_CFG_MEMINFO_BIT) & 1)
		off += MEMINFO_SIZE;
	if ((r->format_field >> PEBS_DATA_CFG_GPRS_BIT) & 1) {
		r->has_gprs = true;
		r->rflags = rd64(b, off);
		r->rip = rd64(b, off + 8);
		for (unsigned i = 0; i < 16; i++)
			r->gpr[i] = rd64(b, off + 16 + 8 * i);
		off += GPRS_SIZE;
	}
	if ((r->format_field >> PEBS_DATA_CFG_XMMS_BIT) & 1)
		off += XMMS_SIZE;
	if ((r->format_field >> PEBS_DATA_CFG_LBRS_BIT) & 1) {
		r->lbr_total =
			(unsigned)((r->format_field & PEBS_DATA_CFG_LBR_MASK) >> PEBS_DATA_CFG_LBR_SHIFT) + 1;
		r->lbr_n = r->lbr_total > PMU_PEBS_MAX_LBR ? PMU_PEBS_MAX_LBR : r->lbr_total;
		for (unsigned k = 0; k < r->lbr_n; k++) {
			r->lbr[k].from = rd64(b, off + LBR_ENTRY_SIZE * k);
			r->lbr[k].to = rd64(b, off + LBR_ENTRY_SIZE * k + 8);
			r->lbr[k].info = rd64(b, off + LBR_ENTRY_SIZE * k + 16);
		}
	}
	return PMU_OK;
}
