"""Check a screenshot of pmutest's framebuffer console against the serial log.

    python3 -m pmutest.fbcheck SCREENSHOT.ppm SERIAL.log [--last N] [--font FILE]
    python3 -m pmutest.fbcheck --show-font
    python3 -m pmutest.fbcheck --print-screen SCREENSHOT.ppm

SCREENSHOT.ppm is what QEMU's monitor command `screendump FILE` writes: a
binary PPM (P6). The screen is read as lib/fbcon.c draws it: a grid of 8x16
cells from the top-left corner, each cell recognised by its lit/unlit
pattern against the glyph table parsed from lib/font8x16.c (the kernel's own
font, so there is one source of truth). The serial log is laid out into
screen rows with fbcon's rules (wrap at the column count, '\\r' ignored, tab
stops every 8 columns, bytes outside the font shown as '?'), and the last
non-empty rows of the screen must equal the last rows of that layout.

Exit status: 0 match, 1 mismatch (both texts are printed), 2 bad input.
"""
import argparse
import os
import re
import sys

from . import REPO_ROOT

DEFAULT_FONT = os.path.join(REPO_ROOT, 'lib', 'font8x16.c')

CELL_W, CELL_H = 8, 16
TAB = 8
FIRST, LAST = 0x20, 0x7e
# fbcon draws light grey 0xAA on black; a 16-bpp mode comes back from QEMU
# as 0xA8/0xAC. Half of 0xAA separates the two with room either side.
LIT_MIN = 0x56
UNKNOWN = '\x00'  # a cell that matches no glyph (the log never yields NUL)

TOOL = 'fb-screenshot-check'


class InputError(Exception):
    """A file that cannot be read as what it should be."""


# --- The font -----------------------------------------------------------------

# One entry of lib/font8x16.c: ['c' - FONT8X16_FIRST] = { 16 bytes },
_ENTRY = re.compile(r"\[\s*'(\\.|[^'\\])'\s*-\s*FONT8X16_FIRST\s*\]\s*=\s*\{([^}]*)\}")
# Comments (which may quote an entry) go; character and string literals,
# which may hold "/*", are matched first so that they stay.
_COMMENT = re.compile(r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"|/\*.*?\*/|//[^\n]*", re.S)
_ESCAPES = {"\\'": "'", '\\\\': '\\', '\\"': '"', '\\?': '?'}


def _uncomment(m):
    return ' ' if m.group(0)[0] == '/' else m.group(0)


def parse_font(text):
    """{char: 16-byte bytes} for every printable ASCII character.

    Raises InputError unless the table has each of 0x20-0x7E exactly once,
    16 bytes each, and no two glyphs alike (a screen could not be read)."""
    glyphs = {}
    for m in _ENTRY.finditer(_COMMENT.sub(_uncomment, text)):
        lit = m.group(1)
        ch = _ESCAPES.get(lit, lit)
        if len(ch) != 1 or not FIRST <= ord(ch) <= LAST:
            raise InputError('font: unsupported character literal %r' % lit)
        if ch in glyphs:
            raise InputError('font: %r defined twice' % ch)
        try:
            rows = [int(v, 0) for v in m.group(2).replace('\n', ' ').split(',') if v.strip()]
        except ValueError:
            raise InputError('font: %r has a value that is not a number' % ch)
        if len(rows) != CELL_H or any(not 0 <= v <= 0xff for v in rows):
            raise InputError('font: %r needs %d bytes 0-255, has %r' % (ch, CELL_H, rows))
        glyphs[ch] = bytes(rows)
    missing = [chr(c) for c in range(FIRST, LAST + 1) if chr(c) not in glyphs]
    if missing:
        raise InputError('font: no glyph for %s' % ''.join(missing))
    seen = {}
    for ch, g in glyphs.items():
        if g in seen:
            raise InputError('font: %r and %r are identical' % (seen[g], ch))
        seen[g] = ch
    return glyphs


def load_font(path=DEFAULT_FONT):
    try:
        with open(path, encoding='ascii') as f:
            return parse_font(f.read())
    except (OSError, UnicodeDecodeError) as e:
        raise InputError('font: cannot read %s: %s' % (path, e))


def show_font(glyphs):
    """The table as pixels, for reviewing the font."""
    out = []
    for code in range(FIRST, LAST + 1):
        g = glyphs[chr(code)]
        out.append('%#04x %r' % (code, chr(code)))
        out.extend('  ' + ''.join('#' if v & (0x80 >> x) else '.' for x in range(CELL_W))
                   for v in g)
    return '\n'.join(out)


# --- The screenshot -------------------------------------------------------------

def parse_ppm(data):
    """(width, height, rgb): rgb holds 3 bytes a pixel scaled to 0-255.

    Binary PPM, Netpbm format: "P6", width, height, maxval as ASCII decimals
    separated by whitespace (with '#' comments to the end of a line), then
    one whitespace byte, then the raster; samples are 1 byte if maxval < 256,
    else 2 bytes, most significant first."""
    pos, fields = 0, []
    while len(fields) < 4:
        while pos < len(data) and data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b'#':
            while pos < len(data) and data[pos] not in b'\r\n':
                pos += 1
            continue
        start = pos
        while pos < len(data) and not data[pos:pos + 1].isspace() and data[pos:pos + 1] != b'#':
            pos += 1
        if start == pos:
            raise InputError('ppm: header ends early')
        fields.append(data[start:pos])
    if fields[0] != b'P6':
        raise InputError('ppm: not a binary PPM (magic %r, want P6)' % fields[0][:8])
    try:
        width, height, maxval = (int(v) for v in fields[1:])
    except ValueError:
        raise InputError('ppm: bad header %r' % b' '.join(fields))
    if width <= 0 or height <= 0 or not 0 < maxval < 65536:
        raise InputError('ppm: bad size %dx%d or maxval %d' % (width, height, maxval))
    pos += 1  # the single whitespace byte before the raster
    sample = 1 if maxval < 256 else 2
    need = width * height * 3 * sample
    raster = data[pos:pos + need]
    if len(raster) < need:
        raise InputError('ppm: raster has %d bytes, %dx%d needs %d' %
                         (len(raster), width, height, need))
    if sample == 2:
        samples = (raster[i] << 8 | raster[i + 1] for i in range(0, need, 2))
    elif maxval != 255:
        samples = iter(raster)
    else:
        return width, height, raster
    return width, height, bytes(min(255, (v * 255 + maxval // 2) // maxval) for v in samples)


def read_screen(width, height, rgb, glyphs):
    """The text rows of the grid (trailing blanks dropped); a cell that is
    no glyph reads as UNKNOWN. Pixels past the last whole cell are ignored,
    as fbcon never draws there."""
    by_bits = {g: ch for ch, g in glyphs.items()}
    lit_of = bytes(1 if v >= LIT_MIN else 0 for v in range(256))
    cols, rows = width // CELL_W, height // CELL_H
    stride = width * 3
    bits_cache = {}
    screen = []
    for row in range(rows):
        cells = [bytearray(CELL_H) for _ in range(cols)]
        for y in range(CELL_H):
            line = rgb[(row * CELL_H + y) * stride:][:cols * CELL_W * 3].translate(lit_of)
            for col in range(cols):
                key = line[col * 24:col * 24 + 24]
                bits = bits_cache.get(key)
                if bits is None:
                    bits = 0
                    for x in range(CELL_W):
                        if key[3 * x] | key[3 * x + 1] | key[3 * x + 2]:
                            bits |= 0x80 >> x
                    bits_cache[key] = bits
                cells[col][y] = bits
        text = ''.join(by_bits.get(bytes(c), UNKNOWN) for c in cells)
        screen.append(text.rstrip(' '))
    return screen


# --- The serial log -------------------------------------------------------------

def layout(text, cols):
    """Screen rows for `text` (one character per byte) drawn by fbcon_write
    from column 0 of an empty screen, trailing blanks dropped. Mirrors
    lib/fbcon.c: the wrap waits for the next character, so a line of exactly
    `cols` characters takes one row."""
    rows, cur, col = [], [], 0

    def newline():
        nonlocal cur, col
        rows.append(''.join(cur).rstrip(' '))
        cur, col = [], 0

    for ch in text:
        if ch == '\n':
            newline()
            continue
        if ch == '\r':
            continue
        if col >= cols:
            newline()
        if ch == '\t':
            stop = min((col // TAB + 1) * TAB, cols)
            cur.extend(' ' * (stop - col))
            col = stop
            continue
        cur.append(ch if FIRST <= ord(ch) <= LAST else '?')
        col += 1
    rows.append(''.join(cur).rstrip(' '))
    return rows


def trim(rows):
    """Rows up to the last non-empty one."""
    n = len(rows)
    while n and not rows[n - 1]:
        n -= 1
    return rows[:n]


def compare(screen, log_rows, last=None):
    """(ok, report lines). The screen's rows from the top (or its last
    `last` rows) up to its last non-empty row must equal as many rows at
    the end of the log's layout."""
    shown, logged = trim(screen), trim(log_rows)
    if not shown:
        return False, ['the screen shows no text (is the framebuffer console wired up?)']
    if last is not None:
        if last > len(shown):
            return False, ['the screen has %d rows of text, --last asks for %d' %
                           (len(shown), last)]
        shown = shown[-last:]
    n = len(shown)
    expected = logged[-n:] if n <= len(logged) else [None] * (n - len(logged)) + logged
    bad = [i for i in range(n) if shown[i] != expected[i]]
    if not bad:
        return True, []
    report = ['%d of %d rows differ (! marks them; \\x00 = a cell that is no glyph):' %
              (len(bad), n)]
    for i in range(n):
        mark = '!' if i in bad else ' '
        report.append('%s screen %r' % (mark, shown[i]))
        if i in bad:
            report.append('%s log    %s' % (mark, '(nothing: the log is shorter)'
                                            if expected[i] is None else repr(expected[i])))
    return False, report


# --- Command line ----------------------------------------------------------------

def main(argv=None):
    p = argparse.ArgumentParser(
        prog=TOOL, description=__doc__.split('\n\n')[0],
        epilog='Exit status: 0 match, 1 mismatch, 2 bad input.')
    p.add_argument('screenshot', nargs='?', help='binary PPM from QEMU screendump')
    p.add_argument('serial_log', nargs='?', help='the serial console log')
    p.add_argument('--font', default=DEFAULT_FONT, help='lib/font8x16.c (default: %(default)s)')
    p.add_argument('--last', type=int, metavar='N',
                   help='compare only the last N rows of text on the screen')
    p.add_argument('--show-font', action='store_true', help='print the glyph table as pixels')
    p.add_argument('--print-screen', action='store_true',
                   help='print the text read from SCREENSHOT and stop')
    args = p.parse_args(argv)
    if args.last is not None and args.last < 1:
        p.error('--last must be at least 1')
    try:
        glyphs = load_font(args.font)
        if args.show_font:
            print(show_font(glyphs))
            return 0
        if not args.screenshot or not (args.serial_log or args.print_screen):
            p.error('SCREENSHOT and SERIAL_LOG are required')
        try:
            with open(args.screenshot, 'rb') as f:
                width, height, rgb = parse_ppm(f.read())
        except OSError as e:
            raise InputError('cannot read %s: %s' % (args.screenshot, e))
        screen = read_screen(width, height, rgb, glyphs)
        cols = width // CELL_W
        if args.print_screen:
            for row in screen:
                print(repr(row)[1:-1])
            return 0
        try:
            with open(args.serial_log, 'rb') as f:
                log = f.read().decode('latin-1')
        except OSError as e:
            raise InputError('cannot read %s: %s' % (args.serial_log, e))
    except InputError as e:
        print('%s: %s' % (TOOL, e), file=sys.stderr)
        return 2
    ok, report = compare(screen, layout(log, cols), args.last)
    grid = '%dx%d cells of a %dx%d screen' % (cols, height // CELL_H, width, height)
    shown = len(trim(screen)) if args.last is None else args.last
    if ok:
        print('%s: OK: the last %d rows on screen (%s) match the serial log' %
              (TOOL, shown, grid))
        return 0
    print('%s: MISMATCH between %s (%s) and %s' %
          (TOOL, args.screenshot, grid, args.serial_log))
    for line in report:
        print('  ' + line)
    return 1


if __name__ == '__main__':
    sys.exit(main())
