/* Host tests of architectural PEBS: the driver's decoding and encoding
 * (pmu/intel/arch_pebs.c) against records and registers laid out here by
 * hand from Linux's structures (perf_event.h union arch_pebs_index,
 * struct arch_pebs_header and the groups), and the register model's
 * architectural PEBS (emu/model/x86-pmu-arch-pebs.c) driven at its
 * registers, its records read back with the driver's parser, each defect
 * profile's break shown. */
#include <string.h>

#include "arch/x86/msr.h"
#include "emu/model/x86-pmu.h"
#include "pmu/intel/arch_pebs.h"
#include "pmu/intel/caps.h"
#include "tests/host/emu_cpu.h"
#include "tests/host/hosttest.h"

static void put(uint8_t *b, size_t off, uint64_t v)
{
	memcpy(b + off, &v, 8);
}

/* --- The driver's encodings, against Linux's field layout --- */

HT_TEST(index_and_base_encodings)
{
	struct pmu_arch_pebs_index ix;

	/* wr:23 at bit 4, full 31, en 32, thresh:23 at bit 36. */
	HT_CHECK_EQ(pmu_arch_pebs_index(0x40, 0x1000, true), 0x40ull | 1ull << 32 | (0x1000ull >> 4) << 36);
	HT_CHECK_EQ(pmu_arch_pebs_index(0, 0, false), 0);
	ix = pmu_arch_pebs_index_decode(0x7fffff0ull | 1ull << 31 | 0x7fffffull << 36);
	HT_CHECK(ix.wr == 0x7fffff0 && ix.full && !ix.en && ix.thresh == 0x7fffff0,
		 "decode: wr %#lx thresh %#lx", (unsigned long)ix.wr, (unsigned long)ix.thresh);
	ix = pmu_arch_pebs_index_decode(pmu_arch_pebs_index(0x1230, 0xff0, true));
	HT_CHECK(ix.wr == 0x1230 && ix.thresh == 0xff0 && ix.en && !ix.full, "round trip");
	/* Linux init_arch_pebs_on_cpu: physical address | PEBS_BUFFER_SHIFT. */
	HT_CHECK_EQ(pmu_arch_pebs_base(0x12345000, 4), 0x12345004);
	HT_CHECK_EQ(pmu_arch_pebs_cfg_c_msr(0), 0x1903);
	HT_CHECK_EQ(pmu_arch_pebs_cfg_c_msr(7), 0x191f);
	HT_CHECK_EQ(pmu_arch_pebs_cfg_c_msr(PMU_IDX_FIXED(0)), 0x1983);
	HT_CHECK_EQ(pmu_arch_pebs_cfg_c_msr(PMU_IDX_FIXED(6)), 0x199b);
}

HT_TEST(record_sizes)
{
	/* Header 16 + basic 48; aux 64; gprs 160; xer 16 + 256; LBR header
	 * 48 + 24 an entry. */
	HT_CHECK_EQ(pmu_arch_pebs_record_size(1ull << 63, 0), 64);
	HT_CHECK_EQ(pmu_arch_pebs_record_size(1ull << 63 | 1ull << 62, 0), 128);
	HT_CHECK_EQ(pmu_arch_pebs_record_size(1ull << 63 | 1ull << 61, 0), 224);
	HT_CHECK_EQ(pmu_arch_pebs_record_size(1ull << 63 | 1ull << 49, 0), 336);
	HT_CHECK_EQ(pmu_arch_pebs_record_size(1ull << 63 | 1ull << 40, 0), 64 + 48 + 8 * 24);
	HT_CHECK_EQ(pmu_arch_pebs_record_size(1ull << 63 | 2ull << 40, 0), 64 + 48 + 16 * 24);
	HT_CHECK_EQ(pmu_arch_pebs_record_size(1ull << 63 | 3ull << 40, 32), 64 + 48 + 32 * 24);
	HT_CHECK_EQ(pmu_arch_pebs_record_size(1ull << 63 | 1ull << 36, 0), 0); /* counters group: not sized */
	/* The reload value does not change the size. */
	HT_CHECK_EQ(pmu_arch_pebs_record_size(1ull << 63 | 0xffffffc0, 0), 64);
}

/* A record with the GPR and LBR (8) groups, typed in field by field. */
static unsigned hand_record(uint8_t *b)
{
	unsigned size = 16 + 48 + 160 + 48 + 8 * 24;

	memset(b, 0, 1024);
	put(b, 0, size | 1ull << 63 | 1ull << 61 | 1ull << 40);
	put(b, 16, 0x401004);   /* ip */
	put(b, 24, 1ull << 33); /* applicable: fixed 1 */
	put(b, 32, 123456789);  /* tsc */
	put(b, 64, 0x246);      /* flags */
	put(b, 72, 0x401006);   /* ip (next) */
	for (unsigned g = 0; g < 16; g++)
		put(b, 80 + 8 * g, 0x100 + g); /* ax, cx, dx, bx, sp, bp, si, di, r8-r15 */
	put(b, 80 + 128, 0x5500);              /* ssp */
	put(b, 224 + 16, 8);                   /* LBR header: depth */
	put(b, 224 + 48, 0xaaa0);              /* entry 0 from */
	put(b, 224 + 48 + 8, 0xbbb0);          /* entry 0 to */
	put(b, 224 + 48 + 7 * 24, 0xaaa7);     /* entry 7 from */
	return size;
}

HT_TEST(record_parse)
{
	static uint8_t b[1024];
	struct pmu_arch_pebs_record r;
	char why[PMU_REASON_LEN];
	unsigned size = hand_record(b);

	HT_CHECK_EQ(pmu_arch_pebs_parse(b, size, &r, why, sizeof(why)), PMU_OK);
	HT_CHECK(r.size == size && r.groups == (1ull << 63 | 1ull << 61 | 1ull << 40) && !r.cont,
		 "header: size %u groups %#lx", r.size, (unsigned long)r.groups);
	HT_CHECK(r.ip == 0x401004 && r.applicable == 1ull << 33 && r.tsc == 123456789, "basic group");
	HT_CHECK(r.has_gprs && r.rflags == 0x246 && r.rip == 0x401006 && r.gpr[0] == 0x100 &&
			 r.gpr[3] == 0x103 && r.gpr[15] == 0x10f && r.ssp == 0x5500,
		 "GPRs: rip %#lx rbx %#lx r15 %#lx ssp %#lx", (unsigned long)r.rip, (unsigned long)r.gpr[3],
		 (unsigned long)r.gpr[15], (unsigned long)r.ssp);
	HT_CHECK(!r.has_xmm, "no XMM group");
	HT_CHECK(r.lbr_total == 8 && r.lbr_n == 8 && r.lbr[0].from == 0xaaa0 && r.lbr[0].to == 0xbbb0 &&
			 r.lbr[7].from == 0xaaa7,
		 "LBRs: %u, first %#lx", r.lbr_total, (unsigned long)r.lbr[0].from);
	/* Truncated, a wrong size, no basic group, a counters group, a fragment. */
	HT_CHECK_EQ(pmu_arch_pebs_parse(b, size - 16, &r, why, sizeof(why)), PMU_E_INVAL);
	put(b, 0, (size + 16) | 1ull << 63 | 1ull << 61 | 1ull << 40);
	HT_CHECK_EQ(pmu_arch_pebs_parse(b, 1024, &r, why, sizeof(why)), PMU_E_INVAL);
	HT_CHECK(strstr(why, "size field"), "why: %s", why);
	put(b, 0, size | 1ull << 61 | 1ull << 40);
	HT_CHECK_EQ(pmu_arch_pebs_parse(b, 1024, &r, why, sizeof(why)), PMU_E_INVAL);
	HT_CHECK(strstr(why, "basic group"), "why: %s", why);
	put(b, 0, 64 | 1ull << 63 | 1ull << 36);
	HT_CHECK_EQ(pmu_arch_pebs_parse(b, 1024, &r, why, sizeof(why)), PMU_E_INVAL);
	put(b, 0, 64 | 1ull << 63 | 1ull << 31);
	HT_CHECK_EQ(pmu_arch_pebs_parse(b, 1024, &r, why, sizeof(why)), PMU_OK);
	HT_CHECK(r.cont && r.size == 64, "fragment bit");
	/* The variable LBR count comes from the LBR header's depth. */
	put(b, 0, (64 + 48 + 3 * 24) | 1ull << 63 | 3ull << 40);
	put(b, 64 + 16, 3);
	HT_CHECK_EQ(pmu_arch_pebs_parse(b, 1024, &r, why, sizeof(why)), PMU_OK);
	HT_CHECK_EQ(r.lbr_total, 3);
}

static struct pmu_caps caps_with(unsigned fmt, uint32_t valid, uint32_t ebx4, uint32_t eax5, uint32_t ecx5)
{
	struct pmu_caps c;

	memset(&c, 0, sizeof(c));
	c.vendor = PMU_VENDOR_INTEL;
	intel_caps_rw(&c)->perf_caps_valid = true;
	intel_caps_rw(&c)->pebs_format = fmt;
	intel_caps_rw(&c)->arch_perfmon_ext = true;
	intel_caps_rw(&c)->leaf23_valid = valid;
	c.gp_mask = 0xff;
	c.fixed_mask = 0x77;
	intel_caps_rw(&c)->leaf23_regs[4].ebx = ebx4;
	intel_caps_rw(&c)->leaf23_regs[5].eax = eax5;
	intel_caps_rw(&c)->leaf23_regs[5].ebx = 1;
	intel_caps_rw(&c)->leaf23_regs[5].ecx = ecx5;
	return c;
}

HT_TEST(caps_decode)
{
	struct pmu_arch_pebs_caps a;
	struct pmu_caps c = caps_with(0xf, 0x33, 0x60020300, 0xff, 0x77);

	pmu_arch_pebs_decode(&c, &a);
	HT_CHECK(a.present, "decoded: %s", a.why);
	HT_CHECK_EQ(a.groups, 0x6002030000000000ull);
	HT_CHECK_EQ(a.counters, 0x77000000ffull);
	HT_CHECK_EQ(a.pdist, 1);
	c = caps_with(5, 0x33, 0, 0xff, 0);
	pmu_arch_pebs_decode(&c, &a);
	HT_CHECK(!a.present && strstr(a.why, "is 5, not 0xF"), "format 5: %s", a.why);
	c = caps_with(0xf, 0x13, 0, 0xff, 0);
	pmu_arch_pebs_decode(&c, &a);
	HT_CHECK(!a.present && strstr(a.why, "lacks sub-leaves 4 and 5"), "23.0 without bit 5: %s", a.why);
	c = caps_with(0xf, 0x33, 0, 0x1ff, 0);
	pmu_arch_pebs_decode(&c, &a);
	HT_CHECK(!a.present && strstr(a.why, "beyond those that exist"), "GP 8 named: %s", a.why);
}

/* --- The register model --- */

static X86PMUState st;
static uint8_t mem[65536] __attribute__((aligned(4096)));

static void shape(X86PMUDefect d)
{
	X86PMUConfig c;

	HT_CHECK(x86pmu_shape_named("clearwater-forest", &c) != NULL, "no clearwater-forest shape");
	c.defect = d;
	HT_CHECK(x86pmu_config_check(&c) == NULL, "refused: %s", x86pmu_config_check(&c));
	x86pmu_reset(&st, &c);
}

/* The model st's registers: rd must not fault; wr gives 0 or X86_VEC_GP
 * (tests/host/emu_cpu.h). */
#define rd(msr) emu_state_rdv(&st, (msr))
#define wr(msr, v) emu_state_wrmsr(&st, (msr), (v))

/* The buffer is mem[]: "physical" address 0 of the model is mem[0]. */
static bool write_phys(void *o, uint64_t pa, const void *buf, unsigned len)
{
	(void)o;
	if (pa + len > sizeof(mem))
		return false;
	memcpy(mem + pa, buf, len);
	return true;
}

static const X86PMUMachine machine = {
	.rip = 0x401006,
	.eventing_ip = 0x401004,
	.rflags = 0x2,
	.gpr = { 0x100, 0x101, 0x102, 0x103, 0x104, 0x105, 0x106, 0x107, 0x108, 0x109, 0x10a, 0x10b, 0x10c,
		 0x10d, 0x10e, 0x10f },
	.write_phys = write_phys,
};

HT_TEST(model_cpuid_and_msrs)
{
	uint32_t a, b, c, d;

	shape(X86PMU_DEFECT_NONE);
	a = b = c = d = 0;
	x86pmu_cpuid(&st, 0x23, 0, &a, &b, &c, &d);
	HT_CHECK_EQ(a & 0x30, 0x30);
	x86pmu_cpuid(&st, 0x23, 4, &a, &b, &c, &d);
	HT_CHECK_EQ(b, 0x60020300);
	x86pmu_cpuid(&st, 0x23, 5, &a, &b, &c, &d);
	HT_CHECK(a == 0xff && c == 0x77 && b == 1 && d == 1, "23.5: %#x %#x %#x %#x", a, b, c, d);
	/* Format 0xF: the DS-area PEBS MSRs are gone. */
	HT_CHECK_EQ((rd(MSR_IA32_PERF_CAPABILITIES) >> 8) & 0xf, 0xf);
	HT_CHECK_EQ(wr(MSR_IA32_PEBS_ENABLE, 1), X86_VEC_GP);
	HT_CHECK_EQ(wr(MSR_PEBS_DATA_CFG, 0), X86_VEC_GP);
	/* PEBS_BASE: [11:4] reserved; PEBS_INDEX: its gaps reserved. */
	HT_CHECK_EQ(wr(MSR_IA32_PEBS_BASE, 0x10000 | 2), 0);
	HT_CHECK_EQ(rd(MSR_IA32_PEBS_BASE), 0x10002);
	HT_CHECK_EQ(wr(MSR_IA32_PEBS_BASE, 0x10010), X86_VEC_GP);
	HT_CHECK_EQ(wr(MSR_IA32_PEBS_INDEX, 0x8), X86_VEC_GP);
	HT_CHECK_EQ(wr(MSR_IA32_PEBS_INDEX, 1ull << 33), X86_VEC_GP);
	/* CFG_C: the reload, EN and the groups 23.4 offers; not the counters
	 * group, which this shape does not offer. */
	HT_CHECK_EQ(wr(0x1903, 1ull << 63 | 1ull << 62 | 1ull << 61 | 1ull << 49 | 3ull << 40 | 0xffffffc0),
		    0);
	HT_CHECK_EQ(wr(0x1903, 1ull << 63 | 1ull << 36), X86_VEC_GP);
	HT_CHECK_EQ(wr(0x1983 + 4 * 4, 1ull << 63), 0);          /* fixed 4 */
	HT_CHECK_EQ(wr(0x1983 + 4 * 3, 1ull << 63), X86_VEC_GP); /* fixed 3 does not exist */
	/* A part without it: #GP, and no sub-leaves 4 and 5. */
	{
		X86PMUConfig lnl;
		HT_CHECK(x86pmu_shape_named("lunarlake-e", &lnl) != NULL, "lunarlake-e");
		x86pmu_reset(&st, &lnl);
		HT_CHECK_EQ(wr(MSR_IA32_PEBS_BASE, 0), X86_VEC_GP);
		a = b = c = d = 0;
		x86pmu_cpuid(&st, 0x23, 0, &a, &b, &c, &d);
		HT_CHECK_EQ(a & 0x30, 0);
	}
}

/* Counter 0 counts branches with PEBS on, groups g, period p; index EN,
 * threshold thresh bytes. */
static void arm(uint64_t g, uint64_t p, uint64_t thresh)
{
	memset(mem, 0, sizeof(mem));
	HT_CHECK_EQ(wr(MSR_IA32_PEBS_BASE, 0 | 2), 0); /* 16 KiB at 0 */
	HT_CHECK_EQ(wr(MSR_IA32_PEBS_INDEX, pmu_arch_pebs_index(0, thresh, true)), 0);
	HT_CHECK_EQ(wr(0x1903, 1ull << 63 | g | ((0 - p) & 0xffffffff)), 0);
	HT_CHECK_EQ(wr(0x1900, (0 - p) & 0xffffffffffffull), 0);
	HT_CHECK_EQ(wr(0x1901, 0x4300c4), 0); /* branches, OS|USR|EN, no INT */
	HT_CHECK_EQ(wr(MSR_IA32_PERF_GLOBAL_CTRL, 1), 0);
}

/* n branches, each followed by the instruction boundary's assist. */
static unsigned branches(unsigned n)
{
	uint32_t one[X86PMU_EV_NUM] = { 0 };
	unsigned pmis = 0;

	one[X86PMU_EV_BRANCHES] = 1;
	for (unsigned i = 0; i < n; i++) {
		pmis += x86pmu_count_cycles(&st, X86PMU_RING_OS, 1, one);
		pmis += x86pmu_pebs_assist(&st, &machine);
	}
	return pmis;
}

HT_TEST(model_records)
{
	struct pmu_arch_pebs_record r;
	char why[PMU_REASON_LEN];
	uint64_t g = 1ull << 61 | 1ull << 62;
	unsigned size = pmu_arch_pebs_record_size(1ull << 63 | g, 0);

	shape(X86PMU_DEFECT_NONE);
	arm(g, 10, 0x4000);
	HT_CHECK_EQ(branches(35), 0);
	/* 3 overflows: 3 records, the index past them, the counter reloaded
	 * from CFG_C[31:0] sign-extended, no status bit of its own. */
	HT_CHECK_EQ(pmu_arch_pebs_index_decode(rd(MSR_IA32_PEBS_INDEX)).wr, 3ull * size);
	HT_CHECK_EQ(rd(0x1900), (uint64_t)-5 & 0xffffffffffffull);
	HT_CHECK_EQ(rd(MSR_IA32_PERF_GLOBAL_STATUS), 0);
	for (unsigned k = 0; k < 3; k++) {
		HT_CHECK_EQ(pmu_arch_pebs_parse(mem + k * size, size, &r, why, sizeof(why)), PMU_OK);
		HT_CHECK(r.groups == (1ull << 63 | g) && r.ip == 0x401004 && r.applicable == 1 &&
				 r.has_gprs && r.rip == 0x401006 && r.gpr[3] == 0x103,
			 "record %u: %s groups %#lx ip %#lx", k, why, (unsigned long)r.groups,
			 (unsigned long)r.ip);
	}
	/* The threshold: at 2 records, bit 54 and one PMI at the second. */
	arm(0, 10, 2 * 64);
	HT_CHECK_EQ(branches(10), 0);
	HT_CHECK_EQ(branches(10), 1);
	HT_CHECK_EQ(rd(MSR_IA32_PERF_GLOBAL_STATUS), 1ull << 54);
	HT_CHECK_EQ(wr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1ull << 54), 0);
	HT_CHECK_EQ(rd(MSR_IA32_PERF_GLOBAL_STATUS), 0);
	/* EN clear in CFG_C: an ordinary overflow, its status bit. */
	HT_CHECK_EQ(wr(0x1903, 0), 0);
	HT_CHECK_EQ(wr(0x1900, (uint64_t)-2 & 0xffffffffffffull), 0);
	branches(2);
	HT_CHECK_EQ(rd(MSR_IA32_PERF_GLOBAL_STATUS), 1);
	/* A full buffer: FULL set, the record dropped. */
	arm(1ull << 49 | 1ull << 61, 1, 0x4000);
	branches(60);
	/* Records of 496 bytes: 33 fit in 16 KiB. */
	HT_CHECK(pmu_arch_pebs_index_decode(rd(MSR_IA32_PEBS_INDEX)).full,
		 "FULL after 60 records of 496 bytes");
	HT_CHECK_EQ(pmu_arch_pebs_index_decode(rd(MSR_IA32_PEBS_INDEX)).wr, 33ull * 496);
}

HT_TEST(model_defects)
{
	struct pmu_arch_pebs_record r;
	char why[PMU_REASON_LEN];

	shape(X86PMU_DEFECT_ARCH_PEBS_INDEX_STUCK);
	arm(0, 10, 0x4000);
	branches(30);
	HT_CHECK_EQ(pmu_arch_pebs_index_decode(rd(MSR_IA32_PEBS_INDEX)).wr, 0);
	shape(X86PMU_DEFECT_ARCH_PEBS_NO_RELOAD);
	arm(0, 10, 0x4000);
	branches(30);
	HT_CHECK_EQ(pmu_arch_pebs_index_decode(rd(MSR_IA32_PEBS_INDEX)).wr, 64);
	shape(X86PMU_DEFECT_ARCH_PEBS_NO_THRESHOLD_PMI);
	arm(0, 10, 64);
	HT_CHECK_EQ(branches(10), 0);
	HT_CHECK_EQ(rd(MSR_IA32_PERF_GLOBAL_STATUS), 0);
	shape(X86PMU_DEFECT_ARCH_PEBS_GROUPS_IGNORED);
	arm(0, 10, 0x4000);
	branches(10);
	HT_CHECK_EQ(pmu_arch_pebs_parse(mem, sizeof(mem), &r, why, sizeof(why)), PMU_OK);
	HT_CHECK(r.groups != 1ull << 63, "every group written: %#lx", (unsigned long)r.groups);
	shape(X86PMU_DEFECT_ARCH_PEBS_UNCONFIGURED_RECORD);
	arm(0, 10, 0x4000);
	HT_CHECK_EQ(wr(0x1903, 0), 0);
	branches(10);
	HT_CHECK_EQ(pmu_arch_pebs_index_decode(rd(MSR_IA32_PEBS_INDEX)).wr, 64);
	HT_CHECK_EQ(rd(MSR_IA32_PERF_GLOBAL_STATUS), 0);
}

HT_MAIN("emu_arch_pebs")
