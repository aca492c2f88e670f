/* MP spec 1.4 table reading. Pure: memory comes through the accessor. */
#include "lib/mptable.h"

#include "lib/unaligned.h"

/* MP spec 1.4, 4.1 "MP Floating Pointer Structure": 16 bytes, "_MP_",
 * the table's physical address at 4, length in 16-byte units at 8, spec
 * revision at 9, checksum over the whole structure, feature bytes 1..5 at
 * 11..15. */
#define FPS_LEN 16
#define FPS_OFF_TABLE 4
#define FPS_OFF_LENGTH 8
#define FPS_OFF_REV 9
#define FPS_OFF_FEATURE1 11
/* 4.2 "MP Configuration Table Header": "PCMP", base length (u16) at 4,
 * revision at 6, checksum over the base table, entry count (u16) at 34,
 * local APIC address at 36; 44 bytes, then the entries. */
#define CT_HDR_LEN 44
#define CT_OFF_LENGTH 4
#define CT_OFF_COUNT 34
#define CT_OFF_LAPIC 36
#define CT_MAX_LEN 0x10000
/* 4.3, Table 4-3: entry types and lengths. A processor entry holds the
 * APIC ID at 1 and the CPU flags at 3 (bit 0 EN, bit 1 BP); an I/O APIC
 * entry its flags at 3 (bit 0 EN) and address at 4. */
#define ENT_PROCESSOR 0
#define ENT_IOAPIC 2
#define ENT_PROCESSOR_LEN 20
#define ENT_OTHER_LEN 8
#define CPU_FLAG_EN 0x01
#define CPU_FLAG_BP 0x02
/* Chapter 5: the default configurations' local and I/O APICs. */
#define DEFAULT_LAPIC 0xFEE00000u
#define DEFAULT_IOAPIC 0xFEC00000u

static uint8_t mp_sum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s = (uint8_t)(s + *p++);
	return s;
}

static bool mp_fps_at(const uint8_t *p)
{
	return p[0] == '_' && p[1] == 'M' && p[2] == 'P' && p[3] == '_' && p[FPS_OFF_LENGTH] == 1 &&
	       mp_sum(p, FPS_LEN) == 0;
}

static uint64_t mp_scan(mptable_phys_fn phys, uint64_t lo, uint64_t len)
{
	for (uint64_t a = lo; a + FPS_LEN <= lo + len; a += 16) {
		const uint8_t *p = phys(a, FPS_LEN);

		if (p && mp_fps_at(p))
			return a;
	}
	return 0;
}

/* The spec's places, then Linux's extra one (arch/x86/kernel/mpparse.c
 * also scans 0-1 KiB). Firecracker writes its pointer at 639 KiB with no
 * BIOS data area, so the base-memory KiB is tried even without one. */
static uint64_t mp_find(mptable_phys_fn phys)
{
	const uint8_t *bda_ebda = phys(0x40E, 2), *bda_base = phys(0x413, 2);
	uint64_t ebda = bda_ebda ? (uint64_t)get_le16(bda_ebda) << 4 : 0;
	uint64_t base_kib = bda_base ? get_le16(bda_base) : 0;
	uint64_t a = 0;

	if (ebda >= 0x500 && ebda < 0xA0000)
		a = mp_scan(phys, ebda, 1024);
	if (!a && base_kib >= 64 && base_kib <= 640)
		a = mp_scan(phys, (base_kib - 1) * 1024, 1024);
	if (!a)
		a = mp_scan(phys, 639 * 1024, 1024);
	if (!a)
		a = mp_scan(phys, 0xF0000, 0x10000);
	if (!a)
		a = mp_scan(phys, 0, 0x400);
	return a;
}

static void mp_zero(void *p, size_t n)
{
	uint8_t *b = p;

	while (n--)
		*b++ = 0;
}

int mptable_cpus(mptable_phys_fn phys, struct mp_cpu *cpus, unsigned max, struct mp_info *info)
{
	mp_zero(info, sizeof(*info));
	if (!phys)
		return MPTABLE_ENOTFOUND;
	uint64_t fps_phys = mp_find(phys);
	if (!fps_phys)
		return MPTABLE_ENOTFOUND;
	const uint8_t *fps = phys(fps_phys, FPS_LEN);
	info->fps_phys = fps_phys;
	info->spec_rev = fps[FPS_OFF_REV];
	info->default_config = fps[FPS_OFF_FEATURE1];
	if (info->default_config) {
		info->lapic_phys = DEFAULT_LAPIC;
		info->ioapic_phys[info->nioapic++] = DEFAULT_IOAPIC;
		info->ncpus = 2;
		for (unsigned i = 0; i < 2 && i < max; i++)
			cpus[i] = (struct mp_cpu){ .apic_id = i, .enabled = true, .bsp = i == 0 };
		return max < 2 ? (int)max : 2;
	}

	uint64_t ct_phys = get_le32(fps + FPS_OFF_TABLE);
	const uint8_t *h = ct_phys ? phys(ct_phys, CT_HDR_LEN) : NULL;
	if (!h || h[0] != 'P' || h[1] != 'C' || h[2] != 'M' || h[3] != 'P')
		return MPTABLE_EINVAL;
	uint32_t len = get_le16(h + CT_OFF_LENGTH);
	const uint8_t *t = len >= CT_HDR_LEN && len <= CT_MAX_LEN ? phys(ct_phys, len) : NULL;
	if (!t || mp_sum(t, len) != 0)
		return MPTABLE_EINVAL;
	info->lapic_phys = get_le32(t + CT_OFF_LAPIC);

	/* The entries are walked to the base table's length, not counted:
	 * the entry count (MP spec 1.4, 4.2) is left 0 by Firecracker's and
	 * qboot's tables, whose length and checksum are right; Linux walks by
	 * the length too (arch/x86/kernel/mpparse.c, smp_read_mpc). */
	unsigned n = 0;
	uint32_t off = CT_HDR_LEN;
	while (off < len) {
		uint8_t type = t[off];
		uint32_t elen = type == ENT_PROCESSOR ? ENT_PROCESSOR_LEN : ENT_OTHER_LEN;

		/* Types 0-4 are the base table's; anything else means we no
		 * longer know where the next entry starts. */
		if (type > 4 || elen > len - off) {
			info->malformed = true;
			break;
		}
		if (type == ENT_PROCESSOR) {
			if (n < max)
				cpus[n++] = (struct mp_cpu){ .apic_id = t[off + 1],
							     .enabled = t[off + 3] & CPU_FLAG_EN,
							     .bsp = t[off + 3] & CPU_FLAG_BP };
			info->ncpus++;
		}
		if (type == ENT_IOAPIC && (t[off + 3] & CPU_FLAG_EN) && info->nioapic < 8)
			info->ioapic_phys[info->nioapic++] = get_le32(t + off + 4);
		off += elen;
	}
	return (int)n;
}
