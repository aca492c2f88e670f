/* Multiboot1 and Multiboot2 boot-information parsing into struct boot_info.
 * Pure: it only reads memory the loader left, bounded by the sizes found. */
#include "boot/bootinfo.h"

#include "boot/bootinfo_internal.h"
#include "lib/unaligned.h"

/* Multiboot2 tag types (Multiboot2 spec §3.6, one subsection per tag). */
enum {
	MB2_TAG_END = 0,
	MB2_TAG_CMDLINE = 1,        /* §3.6.5 Boot command line */
	MB2_TAG_LOADER = 2,         /* §3.6.9 Boot loader name */
	MB2_TAG_BASIC_MEMINFO = 4,  /* §3.6.3 Basic memory information */
	MB2_TAG_MMAP = 6,           /* §3.6.8 Memory map */
	MB2_TAG_FRAMEBUFFER = 8,    /* §3.6.12 Framebuffer info */
	MB2_TAG_EFI32_SYSTAB = 11,  /* §3.6.13 EFI 32-bit system table pointer */
	MB2_TAG_EFI64_SYSTAB = 12,  /* §3.6.14 EFI 64-bit system table pointer */
	MB2_TAG_ACPI_OLD = 14,      /* §3.6.16 ACPI old RSDP (a v1 copy) */
	MB2_TAG_ACPI_NEW = 15,      /* §3.6.17 ACPI new RSDP (a v2+ copy) */
	MB2_TAG_EFI_BS_ACTIVE = 18, /* §3.6.20 EFI boot services not terminated */
};

/* Multiboot2 §3.6.2: 8-byte fixed part {total_size, reserved}, then tags of
 * {type, size} each starting 8-byte aligned; size excludes the padding. */
#define MB2_FIXED_SIZE 8
#define MB2_TAG_HDR 8
#define MB2_MMAP_ENTRY_MIN 24 /* u64 base, u64 length, u32 type, u32 reserved */
/* §3.6.12 shows one reserved byte after framebuffer_type, but GRUB (the
 * loader that writes this tag) declares it u16 in its multiboot2.h, so the
 * colour fields start at offset 32; no loader we know uses 31. */
#define MB2_FB_COLOR_OFF 32

#define BIT32(n) (1u << (n))

/* Multiboot 0.6.96 §3.3 "Boot information format": offsets into the info
 * structure and the flag bit that says each group is valid. */
#define MB1_FLAG_MEM BIT32(0)
#define MB1_FLAG_CMDLINE BIT32(2)
#define MB1_FLAG_MMAP BIT32(6)
#define MB1_FLAG_LOADER BIT32(9)
#define MB1_FLAG_FB BIT32(12)
#define MB1_OFF_FLAGS 0
#define MB1_OFF_MEM_LOWER 4
#define MB1_OFF_MEM_UPPER 8
#define MB1_OFF_CMDLINE 16
#define MB1_OFF_MMAP_LENGTH 44
#define MB1_OFF_MMAP_ADDR 48
#define MB1_OFF_LOADER 64
#define MB1_OFF_FB_ADDR 88
#define MB1_SIZE_NO_FB 88 /* the structure ends here unless flag 12 is set */
#define MB1_SIZE_FULL 116
/* An mmap entry is {u32 size, u64 base, u64 length, u32 type}, and `size`
 * counts the bytes after itself (at least 20). */
#define MB1_MMAP_ENTRY_MIN 20

#define PAGE_SIZE_4K 0x1000ull

/* How physical memory is read: the kernel installs its identity map
 * (boot/main.c), the host tests their synthetic memory. */
static bootinfo_phys_fn bootinfo_phys;

void bootinfo_set_phys_accessor(bootinfo_phys_fn fn)
{
	bootinfo_phys = fn;
}

const uint8_t *mb_phys(uint64_t phys, size_t len)
{
	return bootinfo_phys ? bootinfo_phys(phys, len) : NULL;
}

void mb_zero(void *dst, size_t n)
{
	uint8_t *d = dst;

	while (n--)
		*d++ = 0;
}

/* Copies a string of at most `avail` bytes, stopping at NUL, into dst of
 * capacity cap (>= 1, NUL included). Returns the bytes copied; *truncated
 * says the source went on past cap - 1 bytes. */
static size_t mb_copy_str(char *dst, size_t cap, const uint8_t *src, size_t avail, bool *truncated)
{
	size_t n = 0;

	while (n < avail && src[n] != 0 && n < cap - 1) {
		dst[n] = (char)src[n];
		n++;
	}
	dst[n] = 0;
	if (truncated)
		*truncated = n == cap - 1 && n < avail && src[n] != 0;
	return n;
}

/* Same, for a string behind a physical pointer of unknown length: each byte
 * is fetched through the accessor so a string running into unmapped memory
 * simply ends there. */
size_t mb_copy_phys_str(char *dst, size_t cap, uint64_t phys, bool *truncated)
{
	size_t n = 0;
	const uint8_t *c = NULL;

	if (truncated)
		*truncated = false;
	if (phys == 0) {
		dst[0] = 0;
		return 0;
	}
	while (n < cap - 1) {
		c = mb_phys(phys + n, 1);
		if (!c || *c == 0)
			break;
		dst[n++] = (char)*c;
	}
	dst[n] = 0;
	if (truncated && n == cap - 1) {
		c = mb_phys(phys + n, 1);
		*truncated = c && *c != 0;
	}
	return n;
}

/* Both protocols share the E820-derived type numbers (Multiboot 0.6.96 §3.3,
 * Multiboot2 §3.6.8): 1 RAM, 3 ACPI reclaimable, 4 preserve on hibernation
 * (NVS), 5 defective; anything else is reserved. */
static uint32_t mb_mem_type(uint32_t raw)
{
	switch (raw) {
	case MEM_AVAILABLE:
	case MEM_ACPI_RECLAIM:
	case MEM_ACPI_NVS:
	case MEM_BAD: return raw;
	default: return MEM_RESERVED;
	}
}

void mb_add_region(struct boot_info *bi, uint64_t base, uint64_t len, uint32_t raw_type)
{
	if (bi->mmap_count == BOOTINFO_MMAP_MAX) {
		bi->mmap_truncated = true;
		return;
	}
	/* Clamp a region that wraps past 2^64 so base + len is always valid. */
	if (len > UINT64_MAX - base)
		len = UINT64_MAX - base;
	bi->mmap[bi->mmap_count++] = (struct mem_region){ base, len, mb_mem_type(raw_type) };
}

/* Firmware maps are not always sorted (and may overlap); sort by base,
 * stable so equal bases keep the loader's order. 256 entries: insertion
 * sort is plenty. */
void mb_sort_mmap(struct boot_info *bi)
{
	for (size_t i = 1; i < bi->mmap_count; i++) {
		struct mem_region r = bi->mmap[i];
		size_t j = i;

		while (j > 0 && bi->mmap[j - 1].base > r.base) {
			bi->mmap[j] = bi->mmap[j - 1];
			j--;
		}
		bi->mmap[j] = r;
	}
}

/* Framebuffer fields after the address are laid out identically in both
 * protocols (Multiboot 0.6.96 §3.3 offsets 88..115, Multiboot2 §3.6.12
 * offsets 8..), apart from where the colour info starts. */
static void mb_read_fb(struct boot_fb *fb, const uint8_t *p, const uint8_t *color, bool have_color)
{
	fb->addr = get_le64(p);
	fb->pitch = get_le32(p + 8);
	fb->width = get_le32(p + 12);
	fb->height = get_le32(p + 16);
	fb->bpp = p[20];
	fb->type = p[21];
	if (fb->type == BOOT_FB_RGB && have_color) {
		fb->red_pos = color[0];
		fb->red_size = color[1];
		fb->green_pos = color[2];
		fb->green_size = color[3];
		fb->blue_pos = color[4];
		fb->blue_size = color[5];
	}
}

/* One Multiboot2 tag; `size` is already known to lie inside the structure,
 * and the caller passes only the first well-formed tag of each type.
 * Returns false if the tag is malformed (it is then ignored). */
static bool mb2_tag(struct boot_info *bi, uint32_t type, const uint8_t *t, uint32_t size)
{
	const uint8_t *body = t + MB2_TAG_HDR;
	uint32_t blen = size - MB2_TAG_HDR;

	switch (type) {
	case MB2_TAG_CMDLINE:
		/* No NUL inside the tag: the tag's end ends the string. */
		bi->cmdline_len = mb_copy_str(bi->cmdline, sizeof(bi->cmdline), body, blen,
					      &bi->cmdline_truncated);
		return true;
	case MB2_TAG_LOADER: mb_copy_str(bi->loader, sizeof(bi->loader), body, blen, NULL); return true;
	case MB2_TAG_BASIC_MEMINFO:
		if (blen < 8)
			return false;
		bi->mem_lower_kib = get_le32(body);
		bi->mem_upper_kib = get_le32(body + 4);
		bi->has_basic_meminfo = true;
		return true;
	case MB2_TAG_MMAP: {
		uint32_t esize, n;

		if (blen < 8)
			return false;
		esize = get_le32(body);
		/* entry_size may grow in later versions (it is "guaranteed to be a
		 * multiple of 8"), but never below the 24 bytes read here; a 0
		 * would make the walk below stand still. */
		if (esize < MB2_MMAP_ENTRY_MIN)
			return false;
		n = (blen - 8) / esize;
		for (uint32_t i = 0; i < n; i++) {
			const uint8_t *e = body + 8 + (size_t)i * esize;

			mb_add_region(bi, get_le64(e), get_le64(e + 8), get_le32(e + 16));
		}
		return (blen - 8) % esize == 0;
	}
	case MB2_TAG_FRAMEBUFFER:
		/* The common part runs to offset 30 (bpp at 28, type at 29). */
		if (size < 30)
			return false;
		mb_read_fb(&bi->fb, body, t + MB2_FB_COLOR_OFF, size >= MB2_FB_COLOR_OFF + 6);
		bi->has_fb = true;
		return true;
	case MB2_TAG_EFI32_SYSTAB:
		if (blen < 4)
			return false;
		/* A loader giving both describes one firmware; keep the 64-bit. */
		if (bi->efi_systab_bits != 64) {
			bi->efi_systab = get_le32(body);
			bi->efi_systab_bits = 32;
		}
		return true;
	case MB2_TAG_EFI64_SYSTAB:
		if (blen < 8)
			return false;
		bi->efi_systab = get_le64(body);
		bi->efi_systab_bits = 64;
		return true;
	case MB2_TAG_ACPI_OLD:
	case MB2_TAG_ACPI_NEW: {
		/* A v1 RSDP is 20 bytes, v2+ 36 (ACPI 6.5 §5.2.5.3). */
		size_t n = blen < sizeof(bi->rsdp) ? blen : sizeof(bi->rsdp);

		if (n < 20)
			return false;
		/* The new (v2+) copy wins over the old one, in either order. */
		if (bi->rsdp_tag == MB2_TAG_ACPI_NEW)
			return true;
		mb_zero(bi->rsdp, sizeof(bi->rsdp));
		for (size_t i = 0; i < n; i++)
			bi->rsdp[i] = body[i];
		bi->rsdp_len = n;
		bi->rsdp_tag = (int)type;
		return true;
	}
	case MB2_TAG_EFI_BS_ACTIVE: bi->efi_boot_services_not_exited = true; return true;
	default: return true; /* modules, ELF sections, SMBIOS...: not ours */
	}
}

int mb2_parse(const uint8_t *p, struct boot_info *bi)
{
	uint32_t total = get_le32(p);
	uint32_t seen = 0; /* tag types < 32 already taken: the first one wins */
	int rc = 0;
	size_t off;

	bi->info_size = total;
	/* The smallest valid structure is the fixed part plus an end tag. */
	if (total < MB2_FIXED_SIZE + MB2_TAG_HDR || total > BOOTINFO_MB2_MAX_SIZE)
		return BOOTINFO_EGARBLED;

	for (off = MB2_FIXED_SIZE; off + MB2_TAG_HDR <= total;) {
		uint32_t type = get_le32(p + off);
		uint32_t size = get_le32(p + off + 4);

		if (type == MB2_TAG_END)
			return rc;
		/* A tag shorter than its header or longer than what is left
		 * means we no longer know where the next one starts. */
		if (size < MB2_TAG_HDR || size > total - off)
			return BOOTINFO_EGARBLED;
		if (type >= 32 || !(seen & BIT32(type))) {
			if (mb2_tag(bi, type, p + off, size)) {
				if (type < 32)
					seen |= BIT32(type);
			} else {
				rc = BOOTINFO_EGARBLED;
			}
		}
		off += ((size_t)size + 7) & ~(size_t)7;
	}
	return BOOTINFO_EGARBLED; /* ran out of room before the end tag */
}

static void mb1_mmap(struct boot_info *bi, uint64_t addr, uint32_t length, int *rc)
{
	uint64_t off = 0;

	/* Each step advances at least 24 bytes, and the walk stops once the
	 * table is full, so this is bounded even for a huge mmap_length. */
	while (off + 4 <= length && !bi->mmap_truncated) {
		const uint8_t *sz = mb_phys(addr + off, 4);
		const uint8_t *e;
		uint32_t size;

		if (!sz) {
			*rc = BOOTINFO_EGARBLED;
			return;
		}
		size = get_le32(sz);
		if (size < MB1_MMAP_ENTRY_MIN || size > length - off - 4) {
			*rc = BOOTINFO_EGARBLED;
			return;
		}
		e = mb_phys(addr + off + 4, MB1_MMAP_ENTRY_MIN);
		if (!e) {
			*rc = BOOTINFO_EGARBLED;
			return;
		}
		mb_add_region(bi, get_le64(e), get_le64(e + 8), get_le32(e + 16));
		off += 4 + (uint64_t)size;
	}
}

int mb1_parse(const uint8_t *p, struct boot_info *bi)
{
	uint32_t flags = get_le32(p + MB1_OFF_FLAGS);
	int rc = 0;

	/* Only fields whose flag is set are read: older loaders end the
	 * structure early, and the bytes past it are not theirs to vouch for. */
	bi->info_size = (flags & MB1_FLAG_FB) ? MB1_SIZE_FULL : MB1_SIZE_NO_FB;
	if (flags & MB1_FLAG_MEM) {
		bi->mem_lower_kib = get_le32(p + MB1_OFF_MEM_LOWER);
		bi->mem_upper_kib = get_le32(p + MB1_OFF_MEM_UPPER);
		bi->has_basic_meminfo = true;
	}
	if (flags & MB1_FLAG_CMDLINE)
		bi->cmdline_len = mb_copy_phys_str(bi->cmdline, sizeof(bi->cmdline),
						   get_le32(p + MB1_OFF_CMDLINE), &bi->cmdline_truncated);
	if (flags & MB1_FLAG_LOADER)
		mb_copy_phys_str(bi->loader, sizeof(bi->loader), get_le32(p + MB1_OFF_LOADER), NULL);
	if (flags & MB1_FLAG_MMAP)
		mb1_mmap(bi, get_le32(p + MB1_OFF_MMAP_ADDR), get_le32(p + MB1_OFF_MMAP_LENGTH), &rc);
	if (flags & MB1_FLAG_FB) {
		/* Colour info for type 1 sits at offsets 110..115. */
		mb_read_fb(&bi->fb, p + MB1_OFF_FB_ADDR, p + MB1_OFF_FB_ADDR + 22, true);
		bi->has_fb = true;
	}
	return rc;
}

const char *bootinfo_protocol_name(int protocol)
{
	switch (protocol) {
	case BOOT_PROTO_MB1: return "multiboot1";
	case BOOT_PROTO_MB2: return "multiboot2";
	case BOOT_PROTO_PVH: return "pvh";
	default: return "unknown";
	}
}

void bootinfo_usable_max(const struct boot_info *bi, uint64_t *max_ram_end)
{
	uint64_t end = 0;

	for (size_t i = 0; i < bi->mmap_count; i++) {
		const struct mem_region *r = &bi->mmap[i];

		if (r->type == MEM_AVAILABLE && r->len && r->base + r->len > end)
			end = r->base + r->len;
	}
	/* mem_upper counts KiB from 1 MiB up to the first hole (Multiboot
	 * 0.6.96 §3.3); only worth anything when there is no map at all. */
	if (bi->mmap_count == 0 && bi->has_basic_meminfo && bi->mem_upper_kib)
		end = 0x100000ull + bi->mem_upper_kib * 1024ull;
	*max_ram_end = end;
}

static uint64_t mb_align_up_4k(uint64_t v, bool *overflow)
{
	if (v > UINT64_MAX - (PAGE_SIZE_4K - 1)) {
		*overflow = true;
		return 0;
	}
	return (v + PAGE_SIZE_4K - 1) & ~(PAGE_SIZE_4K - 1);
}

/* Lowest usable page inside AVAILABLE region r, or false. A candidate that
 * hits a forbidden range moves past that range's end, so each range stops
 * it at most once and the loop ends after mmap_count + 1 moves. */
static bool mb_low_page_in(const struct boot_info *bi, const struct mem_region *r, uint64_t limit,
			   uint64_t avoid_lo, uint64_t avoid_hi, uint64_t *page)
{
	uint64_t end = r->base + r->len < limit ? r->base + r->len : limit;
	bool overflow = false;
	uint64_t p = mb_align_up_4k(r->base > PAGE_SIZE_4K ? r->base : PAGE_SIZE_4K, &overflow);

	while (!overflow && p < end && end - p >= PAGE_SIZE_4K) {
		uint64_t clash_end = 0;

		if (avoid_lo < avoid_hi && p < avoid_hi && avoid_lo < p + PAGE_SIZE_4K)
			clash_end = avoid_hi;
		for (size_t i = 0; i < bi->mmap_count && !clash_end; i++) {
			const struct mem_region *o = &bi->mmap[i];

			if (o->type != MEM_AVAILABLE && o->len && p < o->base + o->len &&
			    o->base < p + PAGE_SIZE_4K)
				clash_end = o->base + o->len;
		}
		if (!clash_end) {
			*page = p;
			return true;
		}
		p = mb_align_up_4k(clash_end, &overflow);
	}
	return false;
}

bool bootinfo_find_low_page(const struct boot_info *bi, uint64_t below, uint64_t avoid_lo, uint64_t avoid_hi,
			    uint64_t *page)
{
	bool found = false;
	uint64_t best = 0;

	/* Overlapping AVAILABLE regions can each yield a different lowest
	 * page, so look at all of them rather than stopping at the first. */
	for (size_t i = 0; i < bi->mmap_count; i++) {
		uint64_t p;

		if (bi->mmap[i].type != MEM_AVAILABLE)
			continue;
		if (mb_low_page_in(bi, &bi->mmap[i], below, avoid_lo, avoid_hi, &p) && (!found || p < best)) {
			best = p;
			found = true;
		}
	}
	if (found)
		*page = best;
	return found;
}
