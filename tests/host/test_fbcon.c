/* Host tests of lib/fbcon.c and lib/font8x16.c: exact pixels in 32/24/16
 * bpp with padded pitches, wrapping, tab stops, control bytes, scrolling,
 * checksums against an independent reading of the pixels, format refusal,
 * and the font's own properties. */
#include <stdint.h>

#include "lib/fbcon.h"
#include "tests/host/hosttest.h"

#define POISON 0x5a /* framebuffer bytes before fbcon_init */

/* The framebuffer under test, read back by the helpers below. */
static struct fbcon_fb fb;
static size_t fb_size;
static uint32_t fb_fg; /* expected pixel value of a lit pixel */

/* A format: bpp and (pos, size) of red, green, blue, and the light grey
 * 0xAA of each channel cut to the channel's size, as the test expects it. */
struct fmt {
	uint8_t bpp, rp, rs, gp, gs, bp, bs;
	uint32_t fg;
};

/* 0xAA >> 3 = 0x15 in the 5-bit channels, 0xAA >> 2 = 0x2A in the 6-bit
 * one: 0x15 << 11 | 0x2A << 5 | 0x15. */
static const struct fmt XRGB8888 = { 32, 16, 8, 8, 8, 0, 8, 0x00aaaaaa };
static const struct fmt RGB888 = { 24, 16, 8, 8, 8, 0, 8, 0xaaaaaa };
static const struct fmt RGB565 = { 16, 11, 5, 5, 6, 0, 5, 0xad55 };
/* Channels at bytes 0, 1 and 3, byte 2 unused: positions must be honoured
 * and the unused byte must stay 0. */
static const struct fmt ODD32 = { 32, 0, 8, 8, 8, 24, 8, 0xaa00aaaa };

/* Exactly pitch * height bytes from malloc, so ASan flags any stray access;
 * filled with POISON so the test sees what fbcon wrote. */
static bool fb_open(const struct fmt *f, uint32_t width, uint32_t height, uint32_t pad)
{
	fb = (struct fbcon_fb){
		.pitch = width * (f->bpp / 8) + pad,
		.width = width,
		.height = height,
		.bpp = f->bpp,
		.red_pos = f->rp,
		.red_size = f->rs,
		.green_pos = f->gp,
		.green_size = f->gs,
		.blue_pos = f->bp,
		.blue_size = f->bs,
	};
	fb_size = (size_t)fb.pitch * height;
	fb.base = malloc(fb_size);
	memset(fb.base, POISON, fb_size);
	fb_fg = f->fg;
	return fbcon_init(&fb);
}

static void fb_close(void)
{
	free(fb.base);
	fb.base = NULL;
}

static uint32_t px(unsigned x, unsigned y)
{
	const uint8_t *p = fb.base + (size_t)y * fb.pitch + (size_t)x * (fb.bpp / 8);
	uint32_t v = 0;

	for (unsigned i = 0; i < fb.bpp / 8u; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

/* The cell's 16 rows of lit bits; false if any pixel is neither exactly
 * black nor exactly the foreground colour. */
static bool cell_bits(unsigned col, unsigned row, uint8_t bits[16])
{
	bool clean = true;

	for (unsigned y = 0; y < 16; y++) {
		bits[y] = 0;
		for (unsigned x = 0; x < 8; x++) {
			uint32_t v = px(col * 8 + x, row * 16 + y);

			if (v == fb_fg)
				bits[y] |= (uint8_t)(0x80u >> x);
			else if (v != 0)
				clean = false;
		}
	}
	return clean;
}

/* The character whose glyph the cell shows exactly; '\1' if none. */
static char cell_char(unsigned col, unsigned row)
{
	uint8_t bits[16];

	if (!cell_bits(col, row, bits))
		return '\1';
	for (int i = 0; i < FONT8X16_COUNT; i++)
		if (memcmp(bits, font8x16[i], 16) == 0)
			return (char)(FONT8X16_FIRST + i);
	return '\1';
}

/* Text row as read from the pixels, trailing blanks dropped. */
static const char *screen_row(unsigned row)
{
	static char buf[512];
	unsigned cols = fb.width / 8, n = 0;

	for (unsigned c = 0; c < cols && c < sizeof(buf) - 1; c++) {
		buf[c] = cell_char(c, row);
		if (buf[c] != ' ')
			n = c + 1;
	}
	buf[n] = '\0';
	return buf;
}

static void put(const char *s)
{
	fbcon_write(s, strlen(s));
}

/* Reference FNV-1a, written from the published definition. */
static uint32_t ref_fnv(uint32_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

/* The checksum of a row as fbcon.h defines it, computed from the pixels by
 * the test's own reader ("lit" = not black). */
static uint32_t ref_row_checksum(unsigned row)
{
	uint32_t h = 2166136261u;
	unsigned cols = fb.width / 8;

	for (unsigned y = 0; y < 16; y++)
		for (unsigned c = 0; c < cols; c++) {
			uint8_t bits = 0;

			for (unsigned x = 0; x < 8; x++)
				if (px(c * 8 + x, row * 16 + y) != 0)
					bits |= (uint8_t)(0x80u >> x);
			h = ref_fnv(h, &bits, 1);
		}
	return h;
}

static const uint8_t *glyph(char c)
{
	return font8x16[c - FONT8X16_FIRST];
}

HT_TEST(font_glyphs_distinct_and_drawn)
{
	int empty = 0, dup = 0;

	for (int i = 0; i < FONT8X16_COUNT; i++) {
		bool lit = false;

		for (int y = 0; y < 16; y++)
			lit |= font8x16[i][y] != 0;
		if (!lit && FONT8X16_FIRST + i != ' ') {
			empty++;
			printf("    # glyph '%c' is empty\n", FONT8X16_FIRST + i);
		}
		for (int j = 0; j < i; j++)
			if (memcmp(font8x16[i], font8x16[j], 16) == 0) {
				dup++;
				printf("    # glyphs '%c' and '%c' are identical\n", FONT8X16_FIRST + j,
				       FONT8X16_FIRST + i);
			}
	}
	HT_CHECK_EQ(empty, 0);
	HT_CHECK_EQ(dup, 0);
	for (int y = 0; y < 16; y++)
		HT_CHECK(glyph(' ')[y] == 0, "space row %d is %#x", y, glyph(' ')[y]);
	HT_CHECK_EQ(FONT8X16_COUNT, 95);
}

/* Column 7 is the gap between neighbours; only '_' joins up into a line. */
HT_TEST(font_keeps_a_gap_column)
{
	for (int i = 0; i < FONT8X16_COUNT; i++) {
		uint8_t col7 = 0;

		for (int y = 0; y < 16; y++)
			col7 |= font8x16[i][y] & 1;
		if (FONT8X16_FIRST + i == '_')
			HT_CHECK(col7, "'_' should reach column 7");
		else
			HT_CHECK(!col7, "'%c' touches column 7", FONT8X16_FIRST + i);
	}
}

HT_TEST(refuses_unsupported_formats)
{
	static const struct {
		const char *what;
		struct fmt f;
		uint32_t w, h;
		int pad;
	} bad[] = {
		{ "8 bpp", { 8, 5, 3, 2, 3, 0, 2, 0 }, 64, 32, 0 },
		{ "15 bpp", { 15, 10, 5, 5, 5, 0, 5, 0 }, 64, 32, 0 },
		{ "zero-size channel (EGA text/indexed)", { 16, 0, 0, 0, 0, 0, 0, 0 }, 64, 32, 0 },
		{ "9-bit channel", { 32, 18, 9, 9, 9, 0, 9, 0 }, 64, 32, 0 },
		{ "overlapping channels", { 32, 16, 8, 12, 8, 0, 8, 0 }, 64, 32, 0 },
		{ "channel past the pixel", { 24, 20, 8, 8, 8, 0, 8, 0 }, 64, 32, 0 },
		{ "narrower than a cell", { 32, 16, 8, 8, 8, 0, 8, 0 }, 7, 32, 0 },
		{ "shorter than a cell", { 32, 16, 8, 8, 8, 0, 8, 0 }, 64, 15, 0 },
		{ "pitch below width * 4", { 32, 16, 8, 8, 8, 0, 8, 0 }, 64, 32, -1 },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const struct fmt *f = &bad[i].f;
		/* Allocate as if 4 bytes a pixel so a wrong accept cannot
		 * overrun; the pitch the console sees is the one under test. */
		uint32_t pitch = bad[i].w * ((f->bpp + 7) / 8) + (uint32_t)bad[i].pad;
		size_t size = (size_t)bad[i].w * 4 * bad[i].h;
		uint8_t *mem = malloc(size);
		struct fbcon_fb b = { mem,   pitch, bad[i].w, bad[i].h, f->bpp, f->rp,
				      f->rs, f->gp, f->gs,    f->bp,    f->bs };

		/* Start from an active console: a refusal must switch it off. */
		HT_CHECK(fb_open(&XRGB8888, 16, 16, 0), "good format refused");
		memset(mem, POISON, size);
		HT_CHECK(!fbcon_init(&b), "%s accepted", bad[i].what);
		HT_CHECK(!fbcon_active(), "%s: still active", bad[i].what);
		HT_CHECK_EQ(fbcon_cols(), 0);
		HT_CHECK_EQ(fbcon_rows(), 0);
		put("x\n");
		fbcon_clear();
		HT_CHECK_EQ(fbcon_row_checksum(0), 0);
		size_t touched = 0;
		for (size_t j = 0; j < size; j++)
			touched += mem[j] != POISON;
		HT_CHECK(touched == 0, "%s: %zu bytes written", bad[i].what, touched);
		free(mem);
		fb_close();
	}

	struct fbcon_fb null_base = { NULL, 256, 64, 32, 32, 16, 8, 8, 8, 0, 8 };
	HT_CHECK(!fbcon_init(&null_base), "NULL base accepted");
}

/* Init clears the visible pixels and nothing else (the padding past the
 * width is not ours to draw on). */
HT_TEST(init_clears_visible_area_only)
{
	HT_CHECK(fb_open(&XRGB8888, 40, 35, 12), "XRGB8888 refused");
	HT_CHECK_EQ(fbcon_cols(), 5);
	HT_CHECK_EQ(fbcon_rows(), 2);
	HT_CHECK_EQ(fbcon_cursor_row(), 0);
	size_t nonzero = 0, pad_changed = 0;
	for (uint32_t y = 0; y < fb.height; y++)
		for (uint32_t i = 0; i < fb.pitch; i++) {
			uint8_t b = fb.base[(size_t)y * fb.pitch + i];
			if (i < fb.width * 4)
				nonzero += b != 0;
			else
				pad_changed += b != POISON;
		}
	HT_CHECK(nonzero == 0, "%zu visible bytes not cleared", nonzero);
	HT_CHECK(pad_changed == 0, "%zu padding bytes written", pad_changed);
	fb_close();
}

/* Every pixel of a known glyph at a known cell, in each pixel format, with
 * a pitch that is not a multiple of the pixel size. */
static void check_glyph_at(const struct fmt *f, uint32_t pad)
{
	HT_CHECK(fb_open(f, 8 * 12, 16 * 3, pad), "%u bpp format refused", f->bpp);
	put("ok\n  pmuH");
	/* 'H' is at column 5 of row 1. */
	const uint8_t *g = glyph('H');
	int wrong = 0;
	for (unsigned y = 0; y < 16; y++)
		for (unsigned x = 0; x < 8; x++) {
			uint32_t want = (g[y] & (0x80u >> x)) ? f->fg : 0;
			uint32_t seen = px(5 * 8 + x, 16 + y);
			if (seen != want && wrong++ < 4)
				printf("    # %u bpp: pixel (%u,%u) of 'H' is %#x, expected %#x\n", f->bpp, x,
				       y, seen, want);
		}
	HT_CHECK_EQ(wrong, 0);
	/* 'H' as drawn for pmutest: two stems, the bar on cell row 6. */
	HT_CHECK_EQ(g[2], 0x82);
	HT_CHECK_EQ(g[6], 0xfe);
	HT_CHECK_EQ(px(5 * 8 + 0, 16 + 6), f->fg);
	HT_CHECK_EQ(px(5 * 8 + 7, 16 + 6), 0);
	HT_CHECK_STR(screen_row(0), "ok");
	HT_CHECK_STR(screen_row(1), "  pmuH");
	HT_CHECK_STR(screen_row(2), "");
	fb_close();
}

HT_TEST(glyph_pixels_32bpp)
{
	check_glyph_at(&XRGB8888, 0);
	check_glyph_at(&XRGB8888, 3);
}

HT_TEST(glyph_pixels_24bpp)
{
	check_glyph_at(&RGB888, 0);
	check_glyph_at(&RGB888, 5);
	/* The bytes themselves, blue first (position 0 is the lowest byte). */
	HT_CHECK(fb_open(&RGB888, 16, 16, 1), "RGB888 refused");
	put("|");
	const uint8_t *p = fb.base + 2 * fb.pitch + 3 * 3; /* '|' stem: x 3, y 2 */
	HT_CHECK(p[0] == 0xaa && p[1] == 0xaa && p[2] == 0xaa, "bytes %02x %02x %02x", p[0], p[1], p[2]);
	HT_CHECK(p[3] == 0 && p[4] == 0 && p[5] == 0, "right of the stem: %02x %02x %02x", p[3], p[4], p[5]);
	fb_close();
}

HT_TEST(glyph_pixels_16bpp)
{
	check_glyph_at(&RGB565, 0);
	check_glyph_at(&RGB565, 1);
	HT_CHECK(fb_open(&RGB565, 16, 16, 1), "RGB565 refused");
	put("|");
	const uint8_t *p = fb.base + 2 * fb.pitch + 3 * 2;
	HT_CHECK(p[0] == 0x55 && p[1] == 0xad, "bytes %02x %02x, expected 55 ad", p[0], p[1]);
	fb_close();
}

HT_TEST(channel_positions_honoured)
{
	check_glyph_at(&ODD32, 0);
	check_glyph_at(&ODD32, 2);
}

HT_TEST(wraps_long_lines)
{
	HT_CHECK(fb_open(&XRGB8888, 8 * 10, 16 * 6, 4), "refused");
	put("abcdefghijklmnopqrstuvwxy\n");
	HT_CHECK_STR(screen_row(0), "abcdefghij");
	HT_CHECK_STR(screen_row(1), "klmnopqrst");
	HT_CHECK_STR(screen_row(2), "uvwxy");
	/* Exactly one row wide: the '\n' does not add an empty row. */
	put("0123456789\nnext");
	HT_CHECK_STR(screen_row(3), "0123456789");
	HT_CHECK_STR(screen_row(4), "next");
	HT_CHECK_EQ(fbcon_cursor_row(), 4);
	/* One more than a row, starting on the last row: the last character
	 * goes alone to a new row, which scrolls the screen. */
	put("\n0123456789A");
	HT_CHECK_STR(screen_row(0), "klmnopqrst");
	HT_CHECK_STR(screen_row(3), "next");
	HT_CHECK_STR(screen_row(4), "0123456789");
	HT_CHECK_STR(screen_row(5), "A");
	fb_close();
}

HT_TEST(tab_stops)
{
	HT_CHECK(fb_open(&XRGB8888, 8 * 20, 16 * 6, 0), "refused");
	put("a\tb\n");
	put("abcdefgh\tX\n");
	put("abcdefg\tY\n");
	HT_CHECK_STR(screen_row(0), "a       b");
	HT_CHECK_STR(screen_row(1), "abcdefgh        X");
	HT_CHECK_STR(screen_row(2), "abcdefg Y");
	fb_close();

	/* At the right edge: a stop past it leaves the cursor at the edge, so
	 * Z wraps; a tab on a full row wraps first and then moves to 8. */

	HT_CHECK(fb_open(&XRGB8888, 8 * 20, 16 * 4, 0), "refused");
	put("0123456789012345678\tZ\n");
	HT_CHECK_STR(screen_row(0), "0123456789012345678");
	HT_CHECK_STR(screen_row(1), "Z");
	put("01234567890123456789\tW");
	HT_CHECK_STR(screen_row(2), "01234567890123456789");
	HT_CHECK_STR(screen_row(3), "        W");
	fb_close();
}

HT_TEST(control_bytes)
{
	HT_CHECK(fb_open(&XRGB8888, 8 * 20, 16 * 2, 0), "refused");
	const char s[] = "a\x01"
			 "b\x7f\xff"
			 "c\r\x1b"
			 "d\0e";
	fbcon_write(s, sizeof(s) - 1); /* the NUL is a byte like any other */
	HT_CHECK_STR(screen_row(0), "a?b??c?d?e");
	HT_CHECK_STR(screen_row(1), "");
	fb_close();
}

/* With rows 4 (and 5 spare pixel lines below them), the fifth line pushes
 * the first off the top, and the bottom row is blank before it is written. */
HT_TEST(scrolls_one_row)
{
	HT_CHECK(fb_open(&RGB888, 8 * 6, 16 * 4 + 5, 7), "refused");
	HT_CHECK_EQ(fbcon_rows(), 4);
	put("L0\nL1\nL2\nL3 jpy"); /* descenders reach the cell's last rows */
	HT_CHECK_STR(screen_row(0), "L0");
	HT_CHECK_STR(screen_row(3), "L3 jpy");
	put("\n");
	HT_CHECK_STR(screen_row(0), "L1");
	HT_CHECK_STR(screen_row(1), "L2");
	HT_CHECK_STR(screen_row(2), "L3 jpy");
	HT_CHECK_EQ(fbcon_cursor_row(), 3);
	size_t lit = 0;
	for (unsigned y = 16 * 3; y < fb.height; y++)
		for (unsigned x = 0; x < fb.width; x++)
			lit += px(x, y) != 0;
	HT_CHECK(lit == 0, "%zu pixels lit in the new bottom row or below", lit);
	put("L4");
	HT_CHECK_STR(screen_row(3), "L4");
	HT_CHECK_STR(screen_row(2), "L3 jpy");

	/* Many lines, some wrapping: only the last four rows remain. */
	char line[32];
	for (int i = 5; i < 200; i++) {
		snprintf(line, sizeof(line), "\n%d%s", i, i % 7 ? "" : "wrapped");
		put(line);
	}
	/* ..."196wrapped" = "196wra" + "pped", then "197", "198", "199". */
	HT_CHECK_STR(screen_row(0), "pped");
	HT_CHECK_STR(screen_row(1), "197");
	HT_CHECK_STR(screen_row(2), "198");
	HT_CHECK_STR(screen_row(3), "199");
	fb_close();
}

/* Drawing through a RAM shadow must leave exactly the same picture in
 * video memory as drawing there directly, through wraps and scrolls. */
HT_TEST(shadow_matches_direct_drawing)
{
	/* Piece by piece: each write flushes only what it changed, so a
	 * scroll that forgot to mark the lines it moved shows up. */
	static const char *const text[] = { "first line\n",
					    "\tTabbed and a line long enough to ",
					    "wrap around the edge\n",
					    "x\n",
					    "y\n",
					    "z\n",
					    "scrolled \x01 control\n",
					    "last" };
	size_t visible = (size_t)8 * 9 * 3;

	HT_CHECK(fb_open(&RGB888, 8 * 9, 16 * 4, 5), "refused");
	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++)
		put(text[i]);
	uint8_t *direct = malloc(fb_size);
	memcpy(direct, fb.base, fb_size);
	fb_close();

	HT_CHECK(fb_open(&RGB888, 8 * 9, 16 * 4, 5), "refused");
	uint8_t *shadow = calloc(1, fb_size);
	HT_CHECK(!fbcon_use_shadow(shadow, fb_size - 1), "a shadow smaller than pitch x height was taken");
	HT_CHECK(fbcon_use_shadow(shadow, fb_size), "shadow refused");
	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++)
		put(text[i]);
	size_t diff = 0;
	for (unsigned y = 0; y < fb.height; y++)
		diff += memcmp(fb.base + (size_t)y * fb.pitch, direct + (size_t)y * fb.pitch, visible) != 0;
	HT_CHECK(diff == 0, "%zu pixel lines differ between shadowed and direct drawing", diff);
	HT_CHECK_STR(screen_row(3), "last");
	fb_close();
	free(shadow);
	free(direct);
}

HT_TEST(clear_homes_the_cursor)
{
	HT_CHECK(fb_open(&RGB565, 8 * 8, 16 * 3, 2), "refused");
	put("one\ntwo\nthree");
	fbcon_clear();
	HT_CHECK_EQ(fbcon_cursor_row(), 0);
	for (unsigned r = 0; r < 3; r++)
		HT_CHECK_STR(screen_row(r), "");
	put("again");
	HT_CHECK_STR(screen_row(0), "again");
	fb_close();
}

HT_TEST(fnv_reference_vectors)
{
	/* Published FNV-1a 32-bit test vectors, so ref_fnv is itself right. */
	HT_CHECK_EQ(ref_fnv(2166136261u, (const uint8_t *)"", 0), 0x811c9dc5);
	HT_CHECK_EQ(ref_fnv(2166136261u, (const uint8_t *)"a", 1), 0xe40c292c);
	HT_CHECK_EQ(ref_fnv(2166136261u, (const uint8_t *)"foobar", 6), 0xbf9cf968);
}

static void check_checksums(const struct fmt *f, uint32_t pad)
{
	HT_CHECK(fb_open(f, 8 * 16, 16 * 5, pad), "%u bpp refused", f->bpp);
	unsigned cols = fbcon_cols();
	const char *lines[] = { "ok 1 pmu.caps", "a\tb\x01\r~", "0123456789abcdefXYZ" };

	for (unsigned r = 0; r < 3; r++) {
		put(lines[r]);
		put("\n");
	}
	HT_CHECK_EQ(fbcon_row_checksum(0), ref_row_checksum(0));
	HT_CHECK_EQ(fbcon_row_checksum(0), fbcon_text_checksum("ok 1 pmu.caps", cols));
	HT_CHECK_EQ(fbcon_row_checksum(1), ref_row_checksum(1));
	HT_CHECK_EQ(fbcon_row_checksum(1), fbcon_text_checksum("a\tb\x01\r~", cols));
	/* A line longer than the row: the row holds its first 16 cells, the
	 * next row the rest; the text checksum stops at the row's end too. */
	HT_CHECK_EQ(fbcon_row_checksum(2), fbcon_text_checksum("0123456789abcdefXYZ", cols));
	HT_CHECK_EQ(fbcon_row_checksum(3), fbcon_text_checksum("XYZ", cols));
	HT_CHECK_EQ(fbcon_row_checksum(3), ref_row_checksum(3));
	HT_CHECK_EQ(fbcon_row_checksum(4), fbcon_text_checksum("", cols));
	HT_CHECK_EQ(fbcon_row_checksum(4), ref_row_checksum(4));
	HT_CHECK(fbcon_row_checksum(0) != fbcon_text_checksum("ok 2 pmu.caps", cols),
		 "one glyph changed, same checksum");
	HT_CHECK(fbcon_row_checksum(0) != fbcon_text_checksum(" ok 1 pmu.caps", cols),
		 "text shifted by a cell, same checksum");
	HT_CHECK_EQ(fbcon_row_checksum(5), 0); /* past the last row */
	fb_close();
}

HT_TEST(row_checksum_matches_text)
{
	check_checksums(&XRGB8888, 0);
	check_checksums(&RGB888, 3);
	check_checksums(&RGB565, 1);
	check_checksums(&ODD32, 4);
}

/* "Lit" means a colour bit is set: bits outside every channel (the X of
 * XRGB) must not count, whatever the hardware keeps in them. */
HT_TEST(checksum_ignores_unused_bits)
{
	HT_CHECK(fb_open(&ODD32, 8 * 4, 16, 0), "refused");
	put("ab");
	uint32_t before = fbcon_row_checksum(0);
	for (unsigned y = 0; y < 16; y++)
		for (unsigned x = 0; x < fb.width; x++)
			fb.base[(size_t)y * fb.pitch + x * 4 + 2] = 0xff;
	HT_CHECK_EQ(fbcon_row_checksum(0), before);
	HT_CHECK_EQ(before, fbcon_text_checksum("ab", 4));
	fb_close();
}

HT_MAIN("fbcon")
