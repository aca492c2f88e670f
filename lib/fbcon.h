/* Framebuffer console: mirrors console text onto a linear direct-colour
 * framebuffer (UEFI GOP / VBE, as handed over by the loader) with the
 * built-in 8x16 font, so a machine without a serial port shows the report. */
#ifndef LIB_FBCON_H
#define LIB_FBCON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A direct-RGB framebuffer: Multiboot2 1.0 §3.6.12 framebuffer tag with
 * framebuffer_type 1, whose colour info gives each channel's bit position
 * and size inside a pixel. Only the type-1 layout is accepted here: the
 * caller passes nothing else (indexed and EGA-text modes have no fields to
 * fill these with, and all-zero sizes are refused). */
struct fbcon_fb {
	uint8_t *base;                 /* first byte of the top-left pixel, directly addressable */
	uint32_t pitch, width, height; /* pitch in bytes, width/height in pixels */
	uint8_t bpp;                   /* 32, 24 or 16 */
	uint8_t red_pos, red_size, green_pos, green_size, blue_pos, blue_size;
};

/* The font: one glyph per printable ASCII byte, 16 rows of one byte each,
 * top row first, bit 7 = leftmost pixel. tools/pmutest/fbcheck.py
 * parses lib/font8x16.c, so the table there is the one source of truth. */
#define FONT8X16_FIRST 0x20
#define FONT8X16_LAST 0x7e
#define FONT8X16_COUNT (FONT8X16_LAST - FONT8X16_FIRST + 1)
#define FONT8X16_WIDTH 8
#define FONT8X16_HEIGHT 16
extern const uint8_t font8x16[FONT8X16_COUNT][FONT8X16_HEIGHT];

/* Takes over the framebuffer, clears it to black and puts the cursor at
 * the top-left cell. Returns false (and every other call becomes a no-op,
 * cols/rows 0) if the format is not one this console draws: bpp other than
 * 32/24/16, a channel of size 0 or more than 8 bits, channels that overlap
 * or lie outside the pixel, a pitch smaller than a row of pixels, or a
 * screen smaller than one character cell. */
bool fbcon_init(const struct fbcon_fb *fb);
bool fbcon_active(void);

/* Draws text in light grey on black. '\n' starts a new line, '\r' is
 * ignored (the console's serial sink needs it, the screen does not), '\t'
 * moves to the next multiple of 8 columns, any other byte outside the
 * font is drawn as '?'. A line longer than the screen wraps; a line of
 * exactly fbcon_cols() characters takes one row (the wrap waits for the
 * next character). At the bottom the screen scrolls up by one text row.
 * Not locked: call it under the console lock. */
/* Draw into `buf` (at least pitch * height bytes of RAM) and write only
 * changed lines to the framebuffer: never read video memory back. Clears
 * the screen; false if refused. */
bool fbcon_use_shadow(uint8_t *buf, size_t size);
void fbcon_write(const char *s, size_t len);

/* Clears the screen and homes the cursor. */
void fbcon_clear(void);

unsigned fbcon_cols(void);
unsigned fbcon_rows(void);
/* Text row the next character goes to (0 = top). */
unsigned fbcon_cursor_row(void);

/* FNV-1a (32-bit) over text row `row` as it is on the screen, reduced to
 * one bit per pixel (lit = any colour bit set): for each of the 16 pixel
 * lines, top first, one byte per character cell, bit 7 = leftmost pixel.
 * 0 when inactive or row >= fbcon_rows(). */
uint32_t fbcon_row_checksum(unsigned row);

/* The same checksum computed from text instead of pixels: `text` laid out
 * in one row of `cols` cells as fbcon_write would draw it from column 0
 * (tabs expanded, '\r' skipped, bytes outside the font as '?', blank cells
 * after the text; the row ends at '\n', NUL or the last column). Needs no
 * framebuffer, so a test can compare screen and text. */
uint32_t fbcon_text_checksum(const char *text, unsigned cols);

#endif
