/* Host tests for boot/multiboot.c: synthetic Multiboot1/2 images built byte
 * by byte from the specs, truncations, garbage, and the memory-map helpers. */
#include "boot/bootinfo.h"
#include "tests/host/fakemem.h"
#include "tests/host/hosttest.h"

#include <stdint.h>

/* ---- fake physical memory for Multiboot1 pointers ---------------------- */

static void fake_reset(void)
{
	fake_free_all();
	bootinfo_set_phys_accessor(fake_phys);
}

/* ---- little-endian builders -------------------------------------------- */

/* ---- Multiboot2 image builder (Multiboot2 spec §3.6) ------------------- */

static void mb2_begin(struct buf *w)
{
	w->len = 0;
	put32(w, 0); /* total_size, patched by mb2_finish */
	put32(w, 0); /* reserved */
}

/* Tag header {type, size = 8 + n}, body, then zero padding to 8 bytes. */
static void mb2_tag(struct buf *w, uint32_t type, const void *body, size_t n)
{
	static const uint8_t zero[8];

	put32(w, type);
	put32(w, (uint32_t)(8 + n));
	if (n)
		put(w, body, n);
	put(w, zero, (8 - (w->len & 7)) & 7);
}

static void mb2_str_tag(struct buf *w, uint32_t type, const char *s)
{
	mb2_tag(w, type, s, strlen(s) + 1);
}

/* Returns an exact-size heap copy of the finished image. */
static uint8_t *mb2_finish(struct buf *w, bool end_tag)
{
	uint8_t *img;

	if (end_tag)
		mb2_tag(w, 0, NULL, 0);
	set32(w->b, (uint32_t)w->len);
	img = malloc(w->len);
	memcpy(img, w->b, w->len);
	return img;
}

struct mmap_ent {
	uint64_t base, len;
	uint32_t type;
};

static void mb2_mmap_tag(struct buf *w, const struct mmap_ent *e, size_t n, uint32_t esize)
{
	struct buf body = { 0 };

	put32(&body, esize);
	put32(&body, 0); /* entry_version */
	for (size_t i = 0; i < n; i++) {
		size_t start = body.len;

		put64(&body, e[i].base);
		put64(&body, e[i].len);
		put32(&body, e[i].type);
		put32(&body, 0);
		while (body.len - start < esize)
			put8(&body, 0xEE); /* fields of a future entry version */
	}
	mb2_tag(w, 6, body.b, body.len);
	free(body.b);
}

/* Builds an RSDP-shaped blob: only the bytes matter to bootinfo. */
static void fill_pattern(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

static struct boot_info bi; /* ~10 KiB: keep it off the stack */

/* Every result must leave the struct self-consistent, whatever the input. */
static void check_invariants(const struct boot_info *b)
{
	HT_CHECK(b->cmdline_len <= BOOTINFO_CMDLINE_MAX, "cmdline_len %zu", b->cmdline_len);
	HT_CHECK(b->cmdline[b->cmdline_len] == 0 && strlen(b->cmdline) == b->cmdline_len,
		 "cmdline not NUL-terminated at cmdline_len %zu", b->cmdline_len);
	HT_CHECK(memchr(b->loader, 0, sizeof(b->loader)) != NULL, "loader not terminated");
	HT_CHECK(b->mmap_count <= BOOTINFO_MMAP_MAX, "mmap_count %zu", b->mmap_count);
	for (size_t i = 1; i < b->mmap_count; i++)
		HT_CHECK(b->mmap[i - 1].base <= b->mmap[i].base, "mmap unsorted at %zu", i);
	for (size_t i = 0; i < b->mmap_count; i++) {
		HT_CHECK(b->mmap[i].type >= MEM_AVAILABLE && b->mmap[i].type <= MEM_BAD, "type %u",
			 b->mmap[i].type);
		HT_CHECK(b->mmap[i].len <= UINT64_MAX - b->mmap[i].base, "region %zu wraps", i);
	}
	HT_CHECK(b->rsdp_len == 0 || (b->rsdp_len >= 20 && b->rsdp_len <= 36), "rsdp_len %zu", b->rsdp_len);
	HT_CHECK((b->rsdp_len == 0) == (b->rsdp_tag == 0), "rsdp_len %zu tag %d", b->rsdp_len, b->rsdp_tag);
}

/* ---- Multiboot2 -------------------------------------------------------- */

HT_TEST(mb2_every_tag)
{
	struct buf w = { 0 };
	uint8_t meminfo[8], efi64[8], fb[30], rsdp1[20], rsdp2[36];
	const struct mmap_ent map[] = {
		{ 0x100000, 0x7EE0000, 1 }, /* listed out of order on purpose */
		{ 0x0, 0x9FC00, 1 },        { 0x9FC00, 0x400, 2 },     { 0xF0000, 0x10000, 2 },
		{ 0x7FE0000, 0x20000, 3 },  { 0xFEFFC000, 0x4000, 4 }, { 0x200000000ull, 0x1000, 5 },
		{ 0xFFFC0000, 0x40000, 7 }, /* unknown type: reserved */
	};
	uint8_t *img;
	int rc;

	fake_reset();
	mb2_begin(&w);
	mb2_str_tag(&w, 1, "/boot/pmutest.elf pmu.verbose=1 cpus=4");
	mb2_str_tag(&w, 2, "GRUB 2.12");
	mb2_tag(&w, 3, "\x00\x00\x20\x00\x00\x10\x20\x00modinitrd", 17); /* module: ignored */
	set32(meminfo, 639);
	set32(meminfo + 4, 130048);
	mb2_tag(&w, 4, meminfo, 8);
	mb2_mmap_tag(&w, map, sizeof(map) / sizeof(map[0]), 24);
	/* Framebuffer common part after the tag header: addr, pitch, width,
	 * height, bpp, type, u16 reserved, then RGB colour info. */
	memset(fb, 0, sizeof(fb));
	set32(fb, 0xFD000000u);
	set32(fb + 4, 0x1);
	set32(fb + 8, 4096);
	set32(fb + 12, 1024);
	set32(fb + 16, 768);
	fb[20] = 32;
	fb[21] = 1;
	fb[24] = 16;
	fb[25] = 8;
	fb[26] = 8;
	fb[27] = 8;
	fb[28] = 0;
	fb[29] = 8;
	mb2_tag(&w, 8, fb, sizeof(fb));
	set32(efi64, 0x7F9E0018u);
	set32(efi64 + 4, 0x1);
	mb2_tag(&w, 12, efi64, 8);
	fill_pattern(rsdp2, sizeof(rsdp2), 0x40);
	mb2_tag(&w, 15, rsdp2, sizeof(rsdp2));
	fill_pattern(rsdp1, sizeof(rsdp1), 0x10);
	mb2_tag(&w, 14, rsdp1, sizeof(rsdp1)); /* after 15: must not replace it */
	mb2_tag(&w, 18, NULL, 0);
	mb2_tag(&w, 21, "\x00\x00\x20\x00", 4); /* load base: ignored */
	img = mb2_finish(&w, true);

	rc = bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi);
	HT_CHECK_EQ(rc, 0);
	HT_CHECK_EQ(bi.protocol, 2);
	HT_CHECK_STR(bi.cmdline, "/boot/pmutest.elf pmu.verbose=1 cpus=4");
	HT_CHECK_EQ(bi.cmdline_len, strlen("/boot/pmutest.elf pmu.verbose=1 cpus=4"));
	HT_CHECK(!bi.cmdline_truncated, "cmdline flagged truncated");
	HT_CHECK_STR(bi.loader, "GRUB 2.12");
	HT_CHECK(bi.has_basic_meminfo, "no basic meminfo");
	HT_CHECK_EQ(bi.mem_lower_kib, 639);
	HT_CHECK_EQ(bi.mem_upper_kib, 130048);
	HT_CHECK_EQ(bi.mmap_count, 8);
	HT_CHECK(!bi.mmap_truncated, "mmap flagged truncated");
	/* Sorted by base. */
	HT_CHECK_EQ(bi.mmap[0].base, 0);
	HT_CHECK_EQ(bi.mmap[0].len, 0x9FC00);
	HT_CHECK_EQ(bi.mmap[0].type, MEM_AVAILABLE);
	HT_CHECK_EQ(bi.mmap[1].base, 0x9FC00);
	HT_CHECK_EQ(bi.mmap[1].type, MEM_RESERVED);
	HT_CHECK_EQ(bi.mmap[2].base, 0xF0000);
	HT_CHECK_EQ(bi.mmap[3].base, 0x100000);
	HT_CHECK_EQ(bi.mmap[3].len, 0x7EE0000);
	HT_CHECK_EQ(bi.mmap[4].type, MEM_ACPI_RECLAIM);
	HT_CHECK_EQ(bi.mmap[5].base, 0xFEFFC000);
	HT_CHECK_EQ(bi.mmap[5].type, MEM_ACPI_NVS);
	HT_CHECK_EQ(bi.mmap[6].base, 0xFFFC0000);
	HT_CHECK_EQ(bi.mmap[6].type, MEM_RESERVED);
	HT_CHECK_EQ(bi.mmap[7].base, 0x200000000ull);
	HT_CHECK_EQ(bi.mmap[7].type, MEM_BAD);
	HT_CHECK(bi.has_fb, "no framebuffer");
	HT_CHECK_EQ(bi.fb.addr, 0x1FD000000ull);
	HT_CHECK_EQ(bi.fb.pitch, 4096);
	HT_CHECK_EQ(bi.fb.width, 1024);
	HT_CHECK_EQ(bi.fb.height, 768);
	HT_CHECK_EQ(bi.fb.bpp, 32);
	HT_CHECK_EQ(bi.fb.type, BOOT_FB_RGB);
	HT_CHECK_EQ(bi.fb.red_pos, 16);
	HT_CHECK_EQ(bi.fb.red_size, 8);
	HT_CHECK_EQ(bi.fb.green_pos, 8);
	HT_CHECK_EQ(bi.fb.green_size, 8);
	HT_CHECK_EQ(bi.fb.blue_pos, 0);
	HT_CHECK_EQ(bi.fb.blue_size, 8);
	HT_CHECK_EQ(bi.efi_systab, 0x17F9E0018ull);
	HT_CHECK_EQ(bi.efi_systab_bits, 64);
	HT_CHECK_EQ(bi.rsdp_tag, 15);
	HT_CHECK_EQ(bi.rsdp_len, 36);
	HT_CHECK(memcmp(bi.rsdp, rsdp2, 36) == 0, "RSDP copy differs from tag 15");
	HT_CHECK(bi.efi_boot_services_not_exited, "tag 18 not seen");
	HT_CHECK_EQ(bi.info_phys, (uint64_t)(uintptr_t)img);
	HT_CHECK_EQ(bi.info_size, w.len);
	check_invariants(&bi);
	free(img);
	free(w.b);
}

HT_TEST(mb2_minimal_image)
{
	struct buf w = { 0 };
	uint8_t *img;

	mb2_begin(&w);
	img = mb2_finish(&w, true);
	HT_CHECK_EQ(w.len, 16);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi), 0);
	HT_CHECK_EQ(bi.cmdline_len, 0);
	HT_CHECK_STR(bi.cmdline, "");
	HT_CHECK_EQ(bi.mmap_count, 0);
	HT_CHECK(!bi.has_fb && !bi.has_basic_meminfo && bi.rsdp_tag == 0 && bi.efi_systab_bits == 0 &&
			 !bi.efi_boot_services_not_exited,
		 "empty image produced data");
	free(img);
	free(w.b);
}

HT_TEST(mb2_old_rsdp_then_new)
{
	struct buf w = { 0 };
	uint8_t rsdp1[20], rsdp2[36], *img;

	fill_pattern(rsdp1, sizeof(rsdp1), 1);
	fill_pattern(rsdp2, sizeof(rsdp2), 2);
	mb2_begin(&w);
	mb2_tag(&w, 14, rsdp1, sizeof(rsdp1));
	img = mb2_finish(&w, true);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi), 0);
	HT_CHECK_EQ(bi.rsdp_tag, 14);
	HT_CHECK_EQ(bi.rsdp_len, 20);
	HT_CHECK(memcmp(bi.rsdp, rsdp1, 20) == 0, "v1 copy differs");
	free(img);

	mb2_begin(&w);
	mb2_tag(&w, 14, rsdp1, sizeof(rsdp1));
	mb2_tag(&w, 15, rsdp2, sizeof(rsdp2));
	img = mb2_finish(&w, true);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi), 0);
	HT_CHECK_EQ(bi.rsdp_tag, 15);
	HT_CHECK_EQ(bi.rsdp_len, 36);
	HT_CHECK(memcmp(bi.rsdp, rsdp2, 36) == 0, "v2 copy differs");
	free(img);

	/* A too-short RSDP tag (under 20 bytes) is malformed and ignored. */
	mb2_begin(&w);
	mb2_tag(&w, 15, rsdp2, 12);
	img = mb2_finish(&w, true);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi), BOOTINFO_EGARBLED);
	HT_CHECK_EQ(bi.rsdp_tag, 0);
	HT_CHECK_EQ(bi.rsdp_len, 0);
	free(img);
	free(w.b);
}

HT_TEST(mb2_efi32_and_first_tag_wins)
{
	struct buf w = { 0 };
	uint8_t ptr[4], *img;

	mb2_begin(&w);
	set32(ptr, 0x7F00AB00u);
	mb2_tag(&w, 11, ptr, 4);
	mb2_str_tag(&w, 1, "first");
	mb2_str_tag(&w, 1, "second");
	mb2_str_tag(&w, 2, "loader-one");
	mb2_str_tag(&w, 2, "loader-two");
	img = mb2_finish(&w, true);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi), 0);
	HT_CHECK_EQ(bi.efi_systab, 0x7F00AB00u);
	HT_CHECK_EQ(bi.efi_systab_bits, 32);
	HT_CHECK_STR(bi.cmdline, "first");
	HT_CHECK_STR(bi.loader, "loader-one");
	free(img);
	free(w.b);
}

HT_TEST(mb2_mmap_unsorted_overlapping)
{
	struct buf w = { 0 };
	const struct mmap_ent map[] = {
		{ 0x500000, 0x100000, 1 }, { 0x100000, 0x800000, 1 }, /* overlaps the one above */
		{ 0x400000, 0x1000, 2 },                              /* reserved hole inside both */
		{ 0x100000, 0x10, 2 },                                /* same base as #2: stable order */
		{ 0x0, 0x1000, 1 },
	};
	uint8_t *img;

	mb2_begin(&w);
	mb2_mmap_tag(&w, map, 5, 24);
	img = mb2_finish(&w, true);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi), 0);
	HT_CHECK_EQ(bi.mmap_count, 5);
	HT_CHECK_EQ(bi.mmap[0].base, 0x0);
	HT_CHECK_EQ(bi.mmap[1].base, 0x100000);
	HT_CHECK_EQ(bi.mmap[1].len, 0x800000);
	HT_CHECK_EQ(bi.mmap[2].base, 0x100000);
	HT_CHECK_EQ(bi.mmap[2].len, 0x10);
	HT_CHECK_EQ(bi.mmap[3].base, 0x400000);
	HT_CHECK_EQ(bi.mmap[3].type, MEM_RESERVED);
	HT_CHECK_EQ(bi.mmap[4].base, 0x500000);
	check_invariants(&bi);
	free(img);
	free(w.b);
}

HT_TEST(mb2_mmap_entry_size_variants)
{
	struct buf w = { 0 };
	const struct mmap_ent map[] = { { 0x1000, 0x9E000, 1 }, { 0x100000, 0x100000, 1 } };
	uint8_t *img, body[8 + 24];

	/* A future, wider entry: the extra bytes are skipped. */
	mb2_begin(&w);
	mb2_mmap_tag(&w, map, 2, 40);
	img = mb2_finish(&w, true);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi), 0);
	HT_CHECK_EQ(bi.mmap_count, 2);
	HT_CHECK_EQ(bi.mmap[1].base, 0x100000);
	HT_CHECK_EQ(bi.mmap[1].len, 0x100000);
	HT_CHECK_EQ(bi.mmap[1].type, MEM_AVAILABLE);
	free(img);

	/* entry_size 0 (and 16, below one entry): the tag is ignored, the
	 * tags after it are still read, and the result says garbled. */
	for (uint32_t esize = 0; esize <= 16; esize += 16) {
		memset(body, 0, sizeof(body));
		set32(body, esize);
		mb2_begin(&w);
		mb2_tag(&w, 6, body, sizeof(body));
		mb2_str_tag(&w, 1, "after");
		img = mb2_finish(&w, true);
		HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi), BOOTINFO_EGARBLED);
		HT_CHECK_EQ(bi.mmap_count, 0);
		HT_CHECK_STR(bi.cmdline, "after");
		free(img);
	}

	/* A trailing partial entry: whole entries are kept, result garbled. */
	{
		struct buf b = { 0 };

		put32(&b, 24);
		put32(&b, 0);
		put64(&b, 0x1000);
		put64(&b, 0x2000);
		put32(&b, 1);
		put32(&b, 0);
		put64(&b, 0x5000); /* half an entry */
		mb2_begin(&w);
		mb2_tag(&w, 6, b.b, b.len);
		img = mb2_finish(&w, true);
		HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi), BOOTINFO_EGARBLED);
		HT_CHECK_EQ(bi.mmap_count, 1);
		HT_CHECK_EQ(bi.mmap[0].len, 0x2000);
		free(img);
		free(b.b);
	}
	free(w.b);
}

HT_TEST(mb2_mmap_overflow_and_wrap)
{
	struct buf w = { 0 };
	struct mmap_ent *map = calloc(300, sizeof(*map));
	uint8_t *img;

	/* 300 entries in descending order: the first 256 given are kept. */
	for (int i = 0; i < 300; i++)
		map[i] = (struct mmap_ent){ (uint64_t)(299 - i) * 0x10000, 0x8000, 1 };
	map[0] = (struct mmap_ent){ 0xFFFFFFFFFFFFF000ull, 0x10000, 1 }; /* wraps 2^64 */
	mb2_begin(&w);
	mb2_mmap_tag(&w, map, 300, 24);
	img = mb2_finish(&w, true);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi), 0);
	HT_CHECK_EQ(bi.mmap_count, BOOTINFO_MMAP_MAX);
	HT_CHECK(bi.mmap_truncated, "300 entries not flagged truncated");
	/* Kept: map[0..255], i.e. bases 0xFFFF..F000 and 298..44 * 64 KiB. */
	HT_CHECK_EQ(bi.mmap[0].base, 44 * 0x10000ull);
	HT_CHECK_EQ(bi.mmap[254].base, 298 * 0x10000ull);
	HT_CHECK_EQ(bi.mmap[255].base, 0xFFFFFFFFFFFFF000ull);
	HT_CHECK_EQ(bi.mmap[255].len, 0xFFFull); /* clamped below 2^64 */
	check_invariants(&bi);
	free(img);
	free(map);
	free(w.b);
}

HT_TEST(mb2_cmdline_limits)
{
	struct buf w = { 0 };
	char *s = malloc(5001);
	uint8_t *img;

	for (int i = 0; i < 5000; i++)
		s[i] = (char)('a' + i % 26);
	s[5000] = 0;

	/* 5000 characters: the first 4096 are kept and flagged truncated. */
	mb2_begin(&w);
	mb2_str_tag(&w, 1, s);
	img = mb2_finish(&w, true);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi), 0);
	HT_CHECK_EQ(bi.cmdline_len, BOOTINFO_CMDLINE_MAX);
	HT_CHECK(bi.cmdline_truncated, "5000-byte cmdline not flagged truncated");
	HT_CHECK(memcmp(bi.cmdline, s, BOOTINFO_CMDLINE_MAX) == 0, "cmdline content differs");
	HT_CHECK_EQ(bi.cmdline[BOOTINFO_CMDLINE_MAX], 0);
	free(img);

	/* Exactly 4096 characters fit: not truncated. */
	s[4096] = 0;
	mb2_begin(&w);
	mb2_str_tag(&w, 1, s);
	img = mb2_finish(&w, true);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi), 0);
	HT_CHECK_EQ(bi.cmdline_len, 4096);
	HT_CHECK(!bi.cmdline_truncated, "4096-byte cmdline flagged truncated");
	free(img);

	/* No NUL inside the tag: the tag's end ends the string. The image's
	 * padding bytes are 0 here, so put the tag last before the end tag and
	 * fill them: the parser must stop at the tag size, not the padding. */
	mb2_begin(&w);
	mb2_tag(&w, 1, "console=ttyS0 pmu", 17);
	memset(w.b + w.len - 7, 'X', 7);
	img = mb2_finish(&w, true);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi), 0);
	HT_CHECK_STR(bi.cmdline, "console=ttyS0 pmu");
	HT_CHECK(!bi.cmdline_truncated, "un-terminated cmdline flagged truncated");

	/* QEMU -kernel style: the path stays in front. */
	free(img);
	mb2_begin(&w);
	mb2_str_tag(&w, 1, "build/pmutest.elf pmu.cpus=all");
	img = mb2_finish(&w, true);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi), 0);
	HT_CHECK_STR(bi.cmdline, "build/pmutest.elf pmu.cpus=all");
	free(img);
	free(s);
	free(w.b);
}

HT_TEST(mb2_garbled_structure)
{
	struct buf w = { 0 };
	uint8_t *img;

	/* total_size below fixed part + end tag. */
	mb2_begin(&w);
	img = mb2_finish(&w, true);
	set32(img, 15);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi), BOOTINFO_EGARBLED);
	HT_CHECK_EQ(bi.protocol, 2);
	/* Huge total_size: refused, not walked. */
	set32(img, 0xFFFFFFF0u);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi), BOOTINFO_EGARBLED);
	set32(img, BOOTINFO_MB2_MAX_SIZE + 8);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi), BOOTINFO_EGARBLED);
	free(img);

	/* A tag whose size runs past total_size: earlier tags survive. */
	mb2_begin(&w);
	mb2_str_tag(&w, 2, "early");
	mb2_str_tag(&w, 1, "late cmdline");
	img = mb2_finish(&w, true);
	set32(img + 8 + 16 + 4, 4000); /* the cmdline tag's size */
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi), BOOTINFO_EGARBLED);
	HT_CHECK_STR(bi.loader, "early");
	HT_CHECK_STR(bi.cmdline, "");
	/* A tag size below its own header. */
	set32(img + 8 + 16 + 4, 4);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi), BOOTINFO_EGARBLED);
	free(img);

	/* No end tag before total_size runs out. */
	mb2_begin(&w);
	mb2_str_tag(&w, 1, "x");
	img = mb2_finish(&w, false);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi), BOOTINFO_EGARBLED);
	HT_CHECK_STR(bi.cmdline, "x");
	free(img);

	/* Short tags of each fixed-size kind are malformed. */
	static const uint32_t types[] = { 4, 6, 8, 11, 12 };
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		mb2_begin(&w);
		mb2_tag(&w, types[i], "\x01\x02\x03", 3);
		img = mb2_finish(&w, true);
		HT_CHECK(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi) == BOOTINFO_EGARBLED,
			 "3-byte tag type %u accepted", types[i]);
		HT_CHECK(!bi.has_basic_meminfo && bi.mmap_count == 0 && !bi.has_fb && bi.efi_systab_bits == 0,
			 "short tag type %u produced data", types[i]);
		free(img);
	}

	/* Framebuffer of 30 bytes (no colour info): common part only. */
	{
		uint8_t fb[22] = { 0 };

		set32(fb, 0xB8000);
		set32(fb + 8, 160);
		set32(fb + 12, 80);
		set32(fb + 16, 25);
		fb[20] = 16;
		fb[21] = BOOT_FB_EGA_TEXT;
		mb2_begin(&w);
		mb2_tag(&w, 8, fb, sizeof(fb));
		img = mb2_finish(&w, true);
		HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi), 0);
		HT_CHECK(bi.has_fb, "EGA text framebuffer dropped");
		HT_CHECK_EQ(bi.fb.addr, 0xB8000);
		HT_CHECK_EQ(bi.fb.width, 80);
		HT_CHECK_EQ(bi.fb.type, BOOT_FB_EGA_TEXT);
		HT_CHECK_EQ(bi.fb.red_size, 0);
		free(img);
	}

	{
		uint8_t any[16] = { 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0 };

		/* 0x1BADB002 is the header magic, not what a loader passes. */
		HT_CHECK_EQ(bootinfo_parse(0x1BADB002u, any, &bi), BOOTINFO_EMAGIC);
		HT_CHECK_EQ(bi.protocol, 0);
		HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, any, &bi), 0);
	}
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB2_MAGIC, NULL, &bi), BOOTINFO_EGARBLED);
	free(w.b);
}

/* ---- Multiboot1 (Multiboot 0.6.96 §3.3) -------------------------------- */

#define MB1_CMDLINE_PHYS 0x10000u
#define MB1_LOADER_PHYS 0x11000u
#define MB1_MMAP_PHYS 0x12000u

static void mb1_mmap_entry(struct buf *w, uint32_t size, uint64_t base, uint64_t len, uint32_t type)
{
	put32(w, size);
	put64(w, base);
	put64(w, len);
	put32(w, type);
	for (uint32_t i = 20; i < size; i++)
		put8(w, 0xAB);
}

HT_TEST(mb1_every_field)
{
	uint8_t *info = calloc(1, 116);
	struct buf m = { 0 };
	const char *cmd = "/pmutest.elf pmu.verbose=1";
	int rc;

	fake_reset();
	fake_add(MB1_CMDLINE_PHYS, cmd, strlen(cmd) + 1);
	fake_add(MB1_LOADER_PHYS, "qemu", 5);
	mb1_mmap_entry(&m, 20, 0x100000, 0x7EE0000, 1);
	mb1_mmap_entry(&m, 20, 0x0, 0x9FC00, 1);
	mb1_mmap_entry(&m, 24, 0x9FC00, 0x400, 2); /* a larger entry: size says so */
	mb1_mmap_entry(&m, 20, 0xFFFC0000, 0x40000, 2);
	fake_add(MB1_MMAP_PHYS, m.b, m.len);

	set32(info, (1u << 0) | (1u << 2) | (1u << 6) | (1u << 9) | (1u << 12));
	set32(info + 4, 639);
	set32(info + 8, 130048);
	set32(info + 16, MB1_CMDLINE_PHYS);
	set32(info + 44, (uint32_t)m.len);
	set32(info + 48, MB1_MMAP_PHYS);
	set32(info + 64, MB1_LOADER_PHYS);
	set32(info + 88, 0xFD000000u);
	set32(info + 96, 3200);
	set32(info + 100, 800);
	set32(info + 104, 600);
	info[108] = 32;
	info[109] = 1;
	info[110] = 16;
	info[111] = 8;
	info[112] = 8;
	info[113] = 8;
	info[114] = 0;
	info[115] = 8;

	rc = bootinfo_parse(BOOTINFO_MB1_MAGIC, info, &bi);
	HT_CHECK_EQ(rc, 0);
	HT_CHECK_EQ(bi.protocol, 1);
	HT_CHECK_STR(bi.cmdline, cmd);
	HT_CHECK_EQ(bi.cmdline_len, strlen(cmd));
	HT_CHECK_STR(bi.loader, "qemu");
	HT_CHECK(bi.has_basic_meminfo, "mem_lower/upper dropped");
	HT_CHECK_EQ(bi.mem_lower_kib, 639);
	HT_CHECK_EQ(bi.mem_upper_kib, 130048);
	HT_CHECK_EQ(bi.mmap_count, 4);
	HT_CHECK_EQ(bi.mmap[0].base, 0);
	HT_CHECK_EQ(bi.mmap[1].base, 0x9FC00);
	HT_CHECK_EQ(bi.mmap[1].len, 0x400);
	HT_CHECK_EQ(bi.mmap[1].type, MEM_RESERVED);
	HT_CHECK_EQ(bi.mmap[2].base, 0x100000);
	HT_CHECK_EQ(bi.mmap[3].base, 0xFFFC0000);
	HT_CHECK(bi.has_fb, "framebuffer dropped");
	HT_CHECK_EQ(bi.fb.addr, 0xFD000000u);
	HT_CHECK_EQ(bi.fb.pitch, 3200);
	HT_CHECK_EQ(bi.fb.width, 800);
	HT_CHECK_EQ(bi.fb.height, 600);
	HT_CHECK_EQ(bi.fb.bpp, 32);
	HT_CHECK_EQ(bi.fb.red_pos, 16);
	HT_CHECK_EQ(bi.fb.blue_size, 8);
	HT_CHECK_EQ(bi.rsdp_tag, 0);
	HT_CHECK_EQ(bi.info_size, 116);
	check_invariants(&bi);
	free(info);
	free(m.b);
}

/* kexec-tools' multiboot loader (kexec -t multiboot-x86) puts the memory
 * map at physical address 0: the flag vouches for it, 0 is not "absent". */
HT_TEST(mb1_mmap_at_address_zero)
{
	uint8_t *info = calloc(1, 88);
	struct buf m = { 0 };

	fake_reset();
	mb1_mmap_entry(&m, 20, 0x400, 0x9F800, 1);
	mb1_mmap_entry(&m, 20, 0x100000, 0x3FEE0000, 1);
	fake_add(0, m.b, m.len);
	set32(info, (1u << 0) | (1u << 6));
	set32(info + 44, (uint32_t)m.len);
	set32(info + 48, 0);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB1_MAGIC, info, &bi), 0);
	HT_CHECK_EQ(bi.mmap_count, 2);
	HT_CHECK_EQ(bi.mmap[1].len, 0x3FEE0000);
	check_invariants(&bi);
	free(info);
	free(m.b);
	fake_reset();
}

HT_TEST(mb1_no_flags_reads_nothing_more)
{
	/* An 88-byte structure from a loader without framebuffer support:
	 * nothing past it may be read (ASan watches the allocation). */
	uint8_t *info = calloc(1, 88);

	fake_reset();
	memset(info, 0xFF, 88);
	set32(info, 0);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB1_MAGIC, info, &bi), 0);
	HT_CHECK(!bi.has_basic_meminfo && !bi.has_fb && bi.mmap_count == 0 && bi.cmdline_len == 0,
		 "fields read without their flag");
	HT_CHECK_EQ(bi.info_size, 88);
	free(info);
}

HT_TEST(mb1_bad_pointers)
{
	uint8_t *info = calloc(1, 88);
	struct buf m = { 0 };
	char *big = malloc(5000);

	fake_reset();
	/* cmdline pointer 0 and an unmapped loader-name pointer. */
	set32(info, (1u << 2) | (1u << 9));
	set32(info + 16, 0);
	set32(info + 64, 0x7777000);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB1_MAGIC, info, &bi), 0);
	HT_CHECK_STR(bi.cmdline, "");
	HT_CHECK_STR(bi.loader, "");

	/* A string that runs into unmapped memory without a NUL stops there. */
	fake_add(MB1_CMDLINE_PHYS, "no-terminator", 13);
	set32(info + 16, MB1_CMDLINE_PHYS);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB1_MAGIC, info, &bi), 0);
	HT_CHECK_STR(bi.cmdline, "no-terminator");
	HT_CHECK(!bi.cmdline_truncated, "short string flagged truncated");

	/* A 5000-byte command line: 4096 kept, truncated. */
	memset(big, 'q', 4999);
	big[4999] = 0;
	fake_add(0x20000, big, 5000);
	set32(info + 16, 0x20000);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB1_MAGIC, info, &bi), 0);
	HT_CHECK_EQ(bi.cmdline_len, 4096);
	HT_CHECK(bi.cmdline_truncated, "long mb1 cmdline not flagged");
	/* ...and a 4096-byte one is not truncated. */
	big[4096] = 0;
	fake_add(0x30000, big, 4097);
	set32(info + 16, 0x30000);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB1_MAGIC, info, &bi), 0);
	HT_CHECK_EQ(bi.cmdline_len, 4096);
	HT_CHECK(!bi.cmdline_truncated, "4096-byte mb1 cmdline flagged truncated");

	/* mmap: an unmapped address. */
	set32(info, 1u << 6);
	set32(info + 44, 48);
	set32(info + 48, 0x7777000);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB1_MAGIC, info, &bi), BOOTINFO_EGARBLED);
	HT_CHECK_EQ(bi.mmap_count, 0);

	/* An entry size below 20: entries before it are kept. */
	mb1_mmap_entry(&m, 20, 0x0, 0x9F000, 1);
	put32(&m, 8);
	put64(&m, 0x100000);
	put64(&m, 0x1000);
	put32(&m, 1);
	fake_add(MB1_MMAP_PHYS, m.b, m.len);
	set32(info + 44, (uint32_t)m.len);
	set32(info + 48, MB1_MMAP_PHYS);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB1_MAGIC, info, &bi), BOOTINFO_EGARBLED);
	HT_CHECK_EQ(bi.mmap_count, 1);
	HT_CHECK_EQ(bi.mmap[0].len, 0x9F000);

	/* Two good entries; mmap_length longer than the mapped buffer stops
	 * at its edge, and one that cuts the second entry short rejects it. */
	m.len = 0;
	mb1_mmap_entry(&m, 20, 0x0, 0x9F000, 1);
	mb1_mmap_entry(&m, 20, 0x100000, 0x1000000, 1);
	fake_add(MB1_MMAP_PHYS + 0x1000, m.b, m.len);
	set32(info + 48, MB1_MMAP_PHYS + 0x1000);
	set32(info + 44, (uint32_t)m.len);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB1_MAGIC, info, &bi), 0);
	HT_CHECK_EQ(bi.mmap_count, 2);
	set32(info + 44, 0x10000);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB1_MAGIC, info, &bi), BOOTINFO_EGARBLED);
	HT_CHECK_EQ(bi.mmap_count, 2);
	set32(info + 44, 24 + 10);
	HT_CHECK_EQ(bootinfo_parse(BOOTINFO_MB1_MAGIC, info, &bi), BOOTINFO_EGARBLED);
	HT_CHECK_EQ(bi.mmap_count, 1);
	free(info);
	free(m.b);
	free(big);
}

/* ---- memory-map helpers ------------------------------------------------ */

static void set_map(const struct mem_region *r, size_t n)
{
	memset(&bi, 0, sizeof(bi));
	for (size_t i = 0; i < n; i++)
		bi.mmap[i] = r[i];
	bi.mmap_count = n;
}

/* The map QEMU's SeaBIOS hands over for -m 128M, as E820 reports it. */
static const struct mem_region qemu_map[] = {
	{ 0x0, 0x9FC00, MEM_AVAILABLE },      { 0x9FC00, 0x400, MEM_RESERVED },
	{ 0xF0000, 0x10000, MEM_RESERVED },   { 0x100000, 0x7EE0000, MEM_AVAILABLE },
	{ 0x7FE0000, 0x20000, MEM_RESERVED }, { 0xFFFC0000, 0x40000, MEM_RESERVED },
};

HT_TEST(usable_max)
{
	uint64_t end = 1;

	set_map(qemu_map, 6);
	bootinfo_usable_max(&bi, &end);
	HT_CHECK_EQ(end, 0x7FE0000);

	{
		const struct mem_region high[] = {
			{ 0x0, 0x9F000, MEM_AVAILABLE },
			{ 0x100000000ull, 0x80000000ull, MEM_AVAILABLE },
			{ 0x200000000ull, 0x1000, MEM_RESERVED },
		};

		set_map(high, 3);
		bootinfo_usable_max(&bi, &end);
		HT_CHECK_EQ(end, 0x180000000ull);
	}

	/* No map: 1 MiB + mem_upper KiB. */
	memset(&bi, 0, sizeof(bi));
	bi.has_basic_meminfo = true;
	bi.mem_upper_kib = 130048;
	bootinfo_usable_max(&bi, &end);
	HT_CHECK_EQ(end, 0x100000ull + 130048ull * 1024);

	memset(&bi, 0, sizeof(bi));
	end = 1;
	bootinfo_usable_max(&bi, &end);
	HT_CHECK_EQ(end, 0);
}

HT_TEST(find_low_page)
{
	uint64_t page = 0;

	set_map(qemu_map, 6);
	HT_CHECK(bootinfo_find_low_page(&bi, 0x100000, 0, 0, &page), "no page in QEMU map");
	HT_CHECK_EQ(page, 0x1000); /* never page 0 */

	/* Avoid the kernel's own low use. */
	HT_CHECK(bootinfo_find_low_page(&bi, 0x100000, 0x1000, 0x8000, &page), "none");
	HT_CHECK_EQ(page, 0x8000);
	/* An avoid range ending mid-page pushes to the next page. */
	HT_CHECK(bootinfo_find_low_page(&bi, 0x100000, 0x0, 0x1001, &page), "none");
	HT_CHECK_EQ(page, 0x2000);
	/* An empty avoid range avoids nothing. */
	HT_CHECK(bootinfo_find_low_page(&bi, 0x100000, 0x5000, 0x5000, &page), "none");
	HT_CHECK_EQ(page, 0x1000);
	/* Avoiding all of low RAM but its last whole page: 0x9E000. */
	HT_CHECK(bootinfo_find_low_page(&bi, 0x100000, 0x0, 0x9E000, &page), "none");
	HT_CHECK_EQ(page, 0x9E000);
	/* ...and one page more leaves only a partial page: nothing below 1 MiB. */
	HT_CHECK(!bootinfo_find_low_page(&bi, 0x100000, 0x0, 0x9E001, &page), "found %#llx in a partial page",
		 (unsigned long long)page);
	/* `below` bounds the page's end, not its start. */
	HT_CHECK(!bootinfo_find_low_page(&bi, 0x1FFF, 0, 0, &page), "page past below");
	HT_CHECK(bootinfo_find_low_page(&bi, 0x2000, 0, 0, &page), "exact fit refused");
	HT_CHECK_EQ(page, 0x1000);

	{
		/* A reserved region inside an available one wins; unaligned
		 * available regions only offer whole pages inside them. */
		const struct mem_region r[] = {
			{ 0x0, 0x80000, MEM_AVAILABLE },
			{ 0x0, 0x3800, MEM_RESERVED },
			{ 0x4000, 0x1000, MEM_ACPI_NVS },
		};

		set_map(r, 3);
		HT_CHECK(bootinfo_find_low_page(&bi, 0x100000, 0, 0, &page), "none");
		HT_CHECK_EQ(page, 0x5000);
	}
	{
		const struct mem_region r[] = {
			{ 0x1800, 0x1000, MEM_AVAILABLE },  /* no whole page */
			{ 0x20800, 0x1800, MEM_AVAILABLE }, /* 0x21000..0x22000 fits */
		};

		set_map(r, 2);
		HT_CHECK(bootinfo_find_low_page(&bi, 0x100000, 0, 0, &page), "none");
		HT_CHECK_EQ(page, 0x21000);
	}
	{
		/* Two available regions split exactly at a page: a page may not
		 * straddle them (it must be inside one region). */
		const struct mem_region r[] = {
			{ 0x1000, 0x800, MEM_AVAILABLE },
			{ 0x1800, 0x800, MEM_AVAILABLE },
		};

		set_map(r, 2);
		HT_CHECK(!bootinfo_find_low_page(&bi, 0x100000, 0, 0, &page), "straddling page");
	}
	{
		/* Only memory above 1 MiB, or only bad RAM, below it: none. */
		const struct mem_region r[] = {
			{ 0x1000, 0x9E000, MEM_BAD },
			{ 0x100000, 0x1000000, MEM_AVAILABLE },
		};

		set_map(r, 2);
		HT_CHECK(!bootinfo_find_low_page(&bi, 0x100000, 0, 0, &page), "page in bad RAM");
		HT_CHECK(bootinfo_find_low_page(&bi, UINT64_MAX, 0, 0, &page), "none above 1M");
		HT_CHECK_EQ(page, 0x100000);
	}
	{
		/* A region touching the top of the address space. */
		const struct mem_region r[] = {
			{ 0xFFFFFFFFFFFF0000ull, 0xFFFF, MEM_AVAILABLE },
		};

		set_map(r, 1);
		HT_CHECK(bootinfo_find_low_page(&bi, UINT64_MAX, 0xFFFFFFFFFFFF0000ull, UINT64_MAX, &page) ==
				 false,
			 "page inside avoid range");
		HT_CHECK(bootinfo_find_low_page(&bi, UINT64_MAX, 0, 0, &page), "none at top");
		HT_CHECK_EQ(page, 0xFFFFFFFFFFFF0000ull);
	}
}

/* ---- fuzz -------------------------------------------------------------- */

/* xorshift64*: a fixed seed makes every failure reproducible. */
static uint64_t rng_state;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

/* A valid image with every tag kind, to mutate: random bytes alone rarely
 * get past the first tag header. */
static uint8_t *fuzz_seed_image(size_t *len)
{
	struct buf w = { 0 };
	const struct mmap_ent map[] = { { 0, 0x9FC00, 1 }, { 0x100000, 0x1000000, 1 } };
	uint8_t small[36] = { 0 }, *img;

	mb2_begin(&w);
	mb2_str_tag(&w, 1, "pmutest cmdline");
	mb2_str_tag(&w, 2, "GRUB");
	mb2_tag(&w, 4, small, 8);
	mb2_mmap_tag(&w, map, 2, 24);
	mb2_tag(&w, 8, small, 30);
	mb2_tag(&w, 11, small, 4);
	mb2_tag(&w, 12, small, 8);
	mb2_tag(&w, 14, small, 20);
	mb2_tag(&w, 15, small, 36);
	mb2_tag(&w, 18, NULL, 0);
	img = mb2_finish(&w, true);
	*len = w.len;
	free(w.b);
	return img;
}

HT_TEST(fuzz_mb2)
{
	size_t seed_len;
	uint8_t *seed = fuzz_seed_image(&seed_len);
	int ok = 0, garbled = 0;

	rng_state = 0x9E3779B97F4A7C15ull;
	for (int iter = 0; iter < 50000; iter++) {
		size_t len;
		uint8_t *img;
		uint64_t mode = rng() % 4;

		if (mode == 0) {
			/* Pure noise of random length. */
			len = 8 + rng() % 2048;
			img = malloc(len);
			for (size_t i = 0; i < len; i++)
				img[i] = (uint8_t)rng();
		} else {
			/* The seed image with a few bytes changed. */
			len = seed_len;
			img = malloc(len);
			memcpy(img, seed, len);
			for (uint64_t k = 1 + rng() % 8; k; k--)
				img[rng() % len] = (uint8_t)rng();
		}
		/* total_size must describe memory the caller owns (that is the
		 * contract); beyond that, anything. */
		switch (rng() % 8) {
		case 0: set32(img, (uint32_t)(rng() % (len + 1))); break;
		case 1: set32(img, (uint32_t)(BOOTINFO_MB2_MAX_SIZE + 1 + rng() % 0x7FFFFFFF)); break;
		default: set32(img, (uint32_t)len); break;
		}
		if (bootinfo_parse(BOOTINFO_MB2_MAGIC, img, &bi) == 0)
			ok++;
		else
			garbled++;
		/* Invariants hold whatever came in; report once per failing run
		 * rather than flooding (check_invariants counts every check). */
		check_invariants(&bi);
		free(img);
	}
	printf("    # fuzz_mb2: %d parsed cleanly, %d garbled\n", ok, garbled);
	HT_CHECK(ok > 0 && garbled > 0, "fuzz never reached one of the outcomes (%d/%d)", ok, garbled);
	free(seed);
}

HT_TEST(fuzz_mb1)
{
	rng_state = 0xC2B2AE3D27D4EB4Full;
	for (int iter = 0; iter < 50000; iter++) {
		uint8_t *info = malloc(116), *mem;
		size_t memlen = 1 + rng() % 512;

		fake_reset();
		for (int i = 0; i < 116; i++)
			info[i] = (uint8_t)rng();
		mem = fake_add(0x40000, NULL, memlen);
		for (size_t i = 0; i < memlen; i++)
			mem[i] = (uint8_t)rng();
		/* Point the pointers into (or just around) the random region. */
		set32(info + 16, (uint32_t)(0x40000 - 8 + rng() % (memlen + 16)));
		set32(info + 48, (uint32_t)(0x40000 - 8 + rng() % (memlen + 16)));
		set32(info + 64, (uint32_t)(0x40000 - 8 + rng() % (memlen + 16)));
		if (rng() % 2)
			set32(info + 44, (uint32_t)(rng() % (memlen + 64)));
		/* Framebuffer flag off means the structure is 88 bytes long;
		 * copy it into an exact 88-byte buffer so ASan holds us to it. */
		if (!(info[1] & 0x10)) {
			uint8_t *short_info = malloc(88);

			memcpy(short_info, info, 88);
			free(info);
			info = short_info;
		}
		(void)bootinfo_parse(BOOTINFO_MB1_MAGIC, info, &bi);
		check_invariants(&bi);
		free(info);
	}
	fake_reset();
}

HT_MAIN("bootinfo")
