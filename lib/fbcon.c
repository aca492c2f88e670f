/* Framebuffer console: draws text cells of the 8x16 font on a linear
 * direct-colour framebuffer, wrapping and scrolling like a terminal. */
#include "lib/fbcon.h"

#include "lib/string.h"

/* Video memory is touched through this type so that pixels and scroll
 * copies are whole aligned words, never split into byte accesses: on real
 * hardware every access to an uncached or write-combining framebuffer is a
 * bus transaction. may_alias keeps the strict-aliasing rule intact. */
typedef uint64_t __attribute__((may_alias)) fbcon_u64;
typedef uint32_t __attribute__((may_alias)) fbcon_u32;
typedef uint16_t __attribute__((may_alias)) fbcon_u16;

/* VGA's "light grey" (attribute 7) is 0xAA in each 8-bit channel. */
#define FBCON_FG_LEVEL 0xaau
#define FBCON_TAB 8u

static struct {
	bool active;
	struct fbcon_fb fb;
	unsigned bytes_pp;
	uint32_t fg;   /* light grey in the framebuffer's pixel format */
	uint32_t mask; /* every colour bit of a pixel: lit means any is set */
	unsigned cols, rows;
	/* Invariant: every cell at or after the cursor is blank, because the
	 * cursor only moves forward and a row is blank when it is entered. */
	unsigned col, row;
	/* With a shadow, drawing and scrolling happen in RAM and only changed
	 * pixel lines [dirty_lo, dirty_hi) are written out: video memory is
	 * uncached or write-combining on real machines, and scrolling by
	 * reading it back costs a whole screen of slow reads per line. */
	uint8_t *shadow;
	unsigned dirty_lo, dirty_hi;
} fbcon;

/* Adds one channel's bits to *mask; false if the channel is empty, wider
 * than the 8 bits our colour has, outside the pixel, or overlaps another
 * (Multiboot2 1.0 §3.6.12 gives only position and size, so a loader bug
 * would show up here). */
static bool fbcon_channel(uint8_t pos, uint8_t size, unsigned bpp, uint32_t *mask)
{
	uint32_t bits;

	if (size == 0 || size > 8 || (unsigned)pos + size > bpp)
		return false;
	bits = ((1u << size) - 1) << pos;
	if (*mask & bits)
		return false;
	*mask |= bits;
	return true;
}

/* The top bits of the 8-bit level, as a framebuffer channel holds them. */
static uint32_t fbcon_level(uint8_t pos, uint8_t size)
{
	return (FBCON_FG_LEVEL >> (8 - size)) << pos;
}

static uint8_t *fbcon_pixel_line(unsigned y)
{
	return (fbcon.shadow ? fbcon.shadow : fbcon.fb.base) + (size_t)y * fbcon.fb.pitch;
}

static void fbcon_dirty(unsigned y0, unsigned n)
{
	if (y0 < fbcon.dirty_lo)
		fbcon.dirty_lo = y0;
	if (y0 + n > fbcon.dirty_hi)
		fbcon.dirty_hi = y0 + n;
}

static void fbcon_put_pixel(uint8_t *p, uint32_t v)
{
	switch (fbcon.bytes_pp) {
	case 4:
		if (((uintptr_t)p & 3) == 0) {
			*(fbcon_u32 *)(void *)p = v;
			return;
		}
		break;
	case 2:
		if (((uintptr_t)p & 1) == 0) {
			*(fbcon_u16 *)(void *)p = (uint16_t)v;
			return;
		}
		break;
	}
	for (unsigned i = 0; i < fbcon.bytes_pp; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t fbcon_get_pixel(const uint8_t *p)
{
	uint32_t v = 0;

	for (unsigned i = 0; i < fbcon.bytes_pp; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

static const uint8_t *fbcon_glyph(unsigned char c)
{
	if (c < FONT8X16_FIRST || c > FONT8X16_LAST)
		c = '?';
	return font8x16[c - FONT8X16_FIRST];
}

static void fbcon_draw(unsigned col, unsigned row, unsigned char c)
{
	const uint8_t *g = fbcon_glyph(c);
	size_t x0 = (size_t)col * FONT8X16_WIDTH * fbcon.bytes_pp;

	fbcon_dirty(row * FONT8X16_HEIGHT, FONT8X16_HEIGHT);
	/* The whole cell is written, unlit pixels included, so a cell never
	 * depends on what was under it. */
	for (unsigned y = 0; y < FONT8X16_HEIGHT; y++) {
		uint8_t *p = fbcon_pixel_line(row * FONT8X16_HEIGHT + y) + x0;

		for (unsigned x = 0; x < FONT8X16_WIDTH; x++, p += fbcon.bytes_pp)
			fbcon_put_pixel(p, (g[y] & (0x80u >> x)) ? fbcon.fg : 0);
	}
}

/* Black is pixel value 0 in every direct-colour format. */
static void fbcon_clear_lines(unsigned y0, unsigned n)
{
	size_t len = (size_t)fbcon.fb.width * fbcon.bytes_pp;

	fbcon_dirty(y0, n);
	for (unsigned y = y0; y < y0 + n; y++)
		memset(fbcon_pixel_line(y), 0, len);
}

/* Forward copy for dst < src. Not memmove: the library's copies bytes one
 * by one, which on video memory means one bus read and one write per byte
 * for every byte of the screen at every scroll. */
static void fbcon_copy_down(uint8_t *dst, const uint8_t *src, size_t n)
{
	if ((((uintptr_t)dst ^ (uintptr_t)src) & 7) == 0) {
		while (n && ((uintptr_t)dst & 7)) {
			*dst++ = *src++;
			n--;
		}
		for (; n >= 8; n -= 8, dst += 8, src += 8)
			*(fbcon_u64 *)(void *)dst = *(const fbcon_u64 *)(const void *)src;
	}
	while (n--)
		*dst++ = *src++;
}

static void fbcon_scroll(void)
{
	unsigned last = fbcon.rows - 1;

	/* Whole pitch-sized lines are moved in one block: the bytes past the
	 * visible width belong to the framebuffer too (pitch * height). */
	fbcon_copy_down(fbcon_pixel_line(0), fbcon_pixel_line(FONT8X16_HEIGHT),
			(size_t)last * FONT8X16_HEIGHT * fbcon.fb.pitch);
	fbcon_dirty(0, last * FONT8X16_HEIGHT);
	fbcon_clear_lines(last * FONT8X16_HEIGHT, FONT8X16_HEIGHT);
}

static void fbcon_newline(void)
{
	fbcon.col = 0;
	if (fbcon.row + 1 < fbcon.rows)
		fbcon.row++;
	else
		fbcon_scroll();
}

/* Write the changed lines of the shadow to video memory (writes only). */
static void fbcon_flush(void)
{
	if (fbcon.shadow && fbcon.dirty_lo < fbcon.dirty_hi) {
		size_t off = (size_t)fbcon.dirty_lo * fbcon.fb.pitch;
		fbcon_copy_down(fbcon.fb.base + off, fbcon.shadow + off,
				(size_t)(fbcon.dirty_hi - fbcon.dirty_lo) * fbcon.fb.pitch);
	}
	fbcon.dirty_lo = ~0u;
	fbcon.dirty_hi = 0;
}

void fbcon_clear(void)
{
	if (!fbcon.active)
		return;
	fbcon_clear_lines(0, fbcon.fb.height);
	fbcon.col = fbcon.row = 0;
	fbcon_flush();
}

bool fbcon_use_shadow(uint8_t *buf, size_t size)
{
	if (!fbcon.active || !buf || size < (size_t)fbcon.fb.pitch * fbcon.fb.height)
		return false;
	fbcon.shadow = buf;
	fbcon_clear(); /* both copies black, cursor home */
	return true;
}

bool fbcon_init(const struct fbcon_fb *fb)
{
	uint32_t mask = 0;
	unsigned bytes_pp = fb->bpp / 8;

	fbcon.active = false;
	fbcon.shadow = NULL;
	fbcon.cols = fbcon.rows = 0;
	if (fb->base == NULL || (fb->bpp != 32 && fb->bpp != 24 && fb->bpp != 16))
		return false;
	if (!fbcon_channel(fb->red_pos, fb->red_size, fb->bpp, &mask) ||
	    !fbcon_channel(fb->green_pos, fb->green_size, fb->bpp, &mask) ||
	    !fbcon_channel(fb->blue_pos, fb->blue_size, fb->bpp, &mask))
		return false;
	if ((uint64_t)fb->width * bytes_pp > fb->pitch || fb->width < FONT8X16_WIDTH ||
	    fb->height < FONT8X16_HEIGHT)
		return false;

	fbcon.fb = *fb;
	fbcon.bytes_pp = bytes_pp;
	fbcon.mask = mask;
	fbcon.fg = fbcon_level(fb->red_pos, fb->red_size) | fbcon_level(fb->green_pos, fb->green_size) |
		   fbcon_level(fb->blue_pos, fb->blue_size);
	fbcon.cols = fb->width / FONT8X16_WIDTH;
	fbcon.rows = fb->height / FONT8X16_HEIGHT;
	fbcon.active = true;
	/* The loader's last screen (GRUB menu, firmware logo) is still there;
	 * the invariant on blank cells needs it gone. */
	fbcon_clear();
	return true;
}

bool fbcon_active(void)
{
	return fbcon.active;
}

void fbcon_write(const char *s, size_t len)
{
	if (!fbcon.active)
		return;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n') {
			fbcon_newline();
			continue;
		}
		if (c == '\r')
			continue;
		/* The wrap is deferred to the next character, so a line of
		 * exactly cols characters and its '\n' take one row. */
		if (fbcon.col >= fbcon.cols)
			fbcon_newline();
		if (c == '\t') {
			/* The cells skipped are blank already (see the invariant). */
			fbcon.col = (fbcon.col / FBCON_TAB + 1) * FBCON_TAB;
			if (fbcon.col > fbcon.cols)
				fbcon.col = fbcon.cols;
			continue;
		}
		fbcon_draw(fbcon.col, fbcon.row, c);
		fbcon.col++;
	}
	fbcon_flush();
}

unsigned fbcon_cols(void)
{
	return fbcon.cols;
}

unsigned fbcon_rows(void)
{
	return fbcon.rows;
}

unsigned fbcon_cursor_row(void)
{
	return fbcon.row;
}

/* FNV-1a, 32-bit (Fowler, Noll, Vo; offset basis 2166136261, prime
 * 16777619): order-sensitive, so a moved glyph changes the sum. */
#define FBCON_FNV_BASIS 2166136261u
#define FBCON_FNV_PRIME 16777619u

static uint32_t fbcon_fnv(uint32_t h, uint8_t byte)
{
	return (h ^ byte) * FBCON_FNV_PRIME;
}

uint32_t fbcon_row_checksum(unsigned row)
{
	uint32_t h = FBCON_FNV_BASIS;

	if (!fbcon.active || row >= fbcon.rows)
		return 0;
	for (unsigned y = 0; y < FONT8X16_HEIGHT; y++) {
		const uint8_t *p = fbcon_pixel_line(row * FONT8X16_HEIGHT + y);

		for (unsigned col = 0; col < fbcon.cols; col++) {
			uint8_t bits = 0;

			for (unsigned x = 0; x < FONT8X16_WIDTH; x++, p += fbcon.bytes_pp)
				if (fbcon_get_pixel(p) & fbcon.mask)
					bits |= (uint8_t)(0x80u >> x);
			h = fbcon_fnv(h, bits);
		}
	}
	return h;
}

/* One pixel line of `text` laid out as fbcon_write lays out one row. */
static uint32_t fbcon_text_line(uint32_t h, const char *text, unsigned cols, unsigned y)
{
	unsigned col = 0;

	for (const char *p = text; *p && *p != '\n' && col < cols; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '\r')
			continue;
		if (c == '\t') {
			unsigned stop = (col / FBCON_TAB + 1) * FBCON_TAB;

			for (; col < stop && col < cols; col++)
				h = fbcon_fnv(h, 0);
			continue;
		}
		h = fbcon_fnv(h, fbcon_glyph(c)[y]);
		col++;
	}
	for (; col < cols; col++)
		h = fbcon_fnv(h, 0);
	return h;
}

uint32_t fbcon_text_checksum(const char *text, unsigned cols)
{
	uint32_t h = FBCON_FNV_BASIS;

	for (unsigned y = 0; y < FONT8X16_HEIGHT; y++)
		h = fbcon_text_line(h, text, cols, y);
	return h;
}
