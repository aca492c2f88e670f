"""Unit tests for tools/pmutest/fbcheck.py: font parsing, PPM parsing,
cell recognition, fbcon's layout rules, the comparison and the command line;
plus an end-to-end run in which lib/fbcon.c itself (built on the host with
cc) draws a serial log into 32/24/16-bpp framebuffers that the tool reads
back (skipped when there is no C compiler).

Run: PYTHONPATH=tools python3 -m pmutest.testing tools/tests/test_fbcheck.py
"""
import contextlib
import io
import os
import shutil
import subprocess
import tempfile
import unittest

from pmutest import fbcheck as fsc

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


FONT = fsc.load_font()


def render(rows, cols, nrows, fg=(0xaa, 0xaa, 0xaa), extra_w=0, extra_h=0, maxval=255,
           bg=(0, 0, 0)):
    """A P6 image of `rows` (one string per screen row) drawn with the font,
    independently of the tool's own layout code."""
    width, height = cols * 8 + extra_w, nrows * 16 + extra_h
    pix = bytearray(bytes(bg) * (width * height))
    for r, text in enumerate(rows):
        for c, ch in enumerate(text):
            g = FONT[ch]
            for y in range(16):
                for x in range(8):
                    if g[y] & (0x80 >> x):
                        off = ((r * 16 + y) * width + c * 8 + x) * 3
                        pix[off:off + 3] = bytes(fg)
    if maxval > 255:
        pix = b''.join((v * maxval // 255).to_bytes(2, 'big') for v in pix)
    return b'P6\n%d %d\n%d\n' % (width, height, maxval) + bytes(pix)


def read(ppm):
    w, h, rgb = fsc.parse_ppm(ppm)
    return fsc.read_screen(w, h, rgb, FONT)


def run_main(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = fsc.main(argv)
        except SystemExit as e:
            rc = e.code
    return rc, out.getvalue() + err.getvalue()


class Font(unittest.TestCase):
    def test_whole_table(self):
        self.assertEqual(len(FONT), 95)
        self.assertEqual(FONT[' '], bytes(16))
        self.assertEqual(len(set(FONT.values())), 95)
        # Entries whose character literal needs an escape.
        self.assertIn("'", FONT)
        self.assertIn('\\', FONT)
        # 'H' as drawn for pmutest (the host C test checks the same rows).
        self.assertEqual(FONT['H'][2], 0x82)
        self.assertEqual(FONT['H'][6], 0xfe)

    def entry(self, ch, values):
        lit = {"'": "\\'", '\\': '\\\\'}.get(ch, ch)
        return "\t['%s' - FONT8X16_FIRST] = { %s },\n" % (lit, ', '.join(values))

    def table(self, skip=None, override=None):
        out = ['/* a quoted entry: [\'c\' - FONT8X16_FIRST] = { 1 }, */\n']
        for code in range(0x20, 0x7f):
            ch = chr(code)
            if ch == skip:
                continue
            vals = ['0x%02x' % b for b in FONT[ch]]
            out.append(self.entry(ch, override.get(ch, vals) if override else vals))
        return ''.join(out)

    def test_parses_own_table_and_ignores_comments(self):
        self.assertEqual(fsc.parse_font(self.table()), FONT)

    def test_refuses_broken_tables(self):
        cases = {
            'missing': self.table(skip='k'),
            'short': self.table(override={'k': ['0'] * 15}),
            'big': self.table(override={'k': ['0x100'] + ['0'] * 15}),
            'nan': self.table(override={'k': ['zz'] + ['0'] * 15}),
            'dup': self.table(override={'k': ['0x%02x' % b for b in FONT['x']]}),
            'twice': self.table() + self.entry('k', ['0'] * 16),
        }
        for what, text in cases.items():
            with self.assertRaises(fsc.InputError, msg=what):
                fsc.parse_font(text)

    def test_show_font(self):
        rc, out = run_main(['--show-font'])
        self.assertEqual(rc, 0)
        lines = out.splitlines()
        self.assertEqual(len(lines), 95 * 17)
        i = lines.index("0x48 'H'")
        self.assertEqual(lines[i + 1 + 6], '  #######.')


class Ppm(unittest.TestCase):
    def test_header_with_comments(self):
        body = bytes(range(12))
        w, h, rgb = fsc.parse_ppm(b'P6 # QEMU\n# another\n2\t2 # size\n255\n' + body)
        self.assertEqual((w, h, rgb), (2, 2, body))

    def test_sixteen_bit_and_odd_maxval(self):
        w, h, rgb = fsc.parse_ppm(b'P6 1 1 65535\n\xff\xff\x80\x00\x00\x00')
        self.assertEqual((w, h, rgb), (1, 1, bytes([255, 128, 0])))
        w, h, rgb = fsc.parse_ppm(b'P6 1 1 15\n\x0f\x07\x00')
        self.assertEqual(rgb, bytes([255, 119, 0]))

    def test_refusals(self):
        for bad in (b'P3 1 1 255\n0 0 0', b'P6 1 1 255\n\0\0', b'P6 0 1 255\n',
                    b'P6 1 1 0\n\0\0\0', b'P6 1 1', b'P6 x 1 255\n\0\0\0', b''):
            with self.assertRaises(fsc.InputError, msg=bad):
                fsc.parse_ppm(bad)


class Recognition(unittest.TestCase):
    ROWS = ['ok 1 pmu.caps # SKIP no PMU', '', 'Hello, World! {[(<>)]} ~`|\\\'"',
            'not ok 3 x_y-z']

    def test_reads_every_glyph(self):
        alphabet = ''.join(chr(c) for c in range(0x21, 0x7f))
        rows = [alphabet[i:i + 40] for i in range(0, len(alphabet), 40)]
        self.assertEqual(read(render(rows, 40, 4)), rows + [''])

    def test_rows_partial_cells_and_levels(self):
        # Spare pixels right and below are not cells; QEMU's 16-bpp
        # expansion gives 0xA8-ish grey; a 16-bit PPM scales.
        self.assertEqual(read(render(self.ROWS, 32, 5, extra_w=7, extra_h=15)), self.ROWS + [''])
        self.assertEqual(read(render(self.ROWS, 32, 4, fg=(0xa8, 0xac, 0xa8))), self.ROWS)
        self.assertEqual(read(render(self.ROWS, 32, 4, maxval=65535)), self.ROWS)

    def test_dark_or_foreign_cells(self):
        # Dim blue noise is not lit; a stray lit pixel makes the cell unknown.
        self.assertEqual(read(render(['ab'], 4, 1, bg=(0, 0, 0x40))), ['ab'])
        ppm = bytearray(render(['ab'], 4, 1))
        header = len(b'P6\n32 16\n255\n')
        off = header + (15 * 32 + 8 + 7) * 3        # cell 1, row 15, column 7
        ppm[off:off + 3] = b'\xff\xff\xff'
        self.assertEqual(read(bytes(ppm)), ['a' + fsc.UNKNOWN])


class Layout(unittest.TestCase):
    def test_wrapping(self):
        self.assertEqual(fsc.layout('abcdefghijklmnopqrstuvwxy\r\n', 10),
                         ['abcdefghij', 'klmnopqrst', 'uvwxy', ''])
        # Exactly one row wide: no extra empty row; one more wraps alone.
        self.assertEqual(fsc.layout('0123456789\r\nnext\r\n0123456789A', 10),
                         ['0123456789', 'next', '0123456789', 'A'])
        self.assertEqual(fsc.layout('\r\n\r\nx', 10), ['', '', 'x'])

    def test_tabs(self):
        self.assertEqual(fsc.layout('a\tb\nabcdefgh\tX\nabcdefg\tY', 20),
                         ['a       b', 'abcdefgh        X', 'abcdefg Y'])
        self.assertEqual(fsc.layout('0123456789012345678\tZ\n01234567890123456789\tW', 20),
                         ['0123456789012345678', 'Z', '01234567890123456789', '        W'])

    def test_bytes_outside_the_font(self):
        log = b'a\x01b\x7f\xffc\r\x1bd\x00e \xc3\xa9'.decode('latin-1')
        self.assertEqual(fsc.layout(log, 40), ['a?b??c?d?e ??'])


class Compare(unittest.TestCase):
    LOG = ''.join('%s\r\n' % l for l in [
        'GRUB noise', 'KTAP version 1', '1..2', 'ok 1 boot.multiboot',
        'ok 2 pmu.count # SKIP no architectural PMU (CPUID.0AH:EAX[7:0] = 0)',
        '# pmutest: 1 passed, 0 failed, 1 skipped'])

    def check(self, screen_rows, cols=24, nrows=8, log=None, extra=()):
        tmp = tempfile.mkdtemp(prefix='fbshot.')
        try:
            ppm, logf = os.path.join(tmp, 's.ppm'), os.path.join(tmp, 's.log')
            with open(ppm, 'wb') as f:
                f.write(render(screen_rows, cols, nrows))
            with open(logf, 'wb') as f:
                f.write((self.LOG if log is None else log).encode('latin-1'))
            return run_main([ppm, logf] + list(extra))
        finally:
            shutil.rmtree(tmp)

    # The log laid out at 24 columns, by hand.
    TAIL24 = ['KTAP version 1', '1..2', 'ok 1 boot.multiboot',
              'ok 2 pmu.count # SKIP no', ' architectural PMU (CPUI',
              'D.0AH:EAX[7:0] = 0)', '# pmutest: 1 passed, 0 f',
              'ailed, 1 skipped']

    def test_screen_not_yet_full(self):
        rc, out = self.check(self.TAIL24[3:], nrows=8)
        self.assertEqual(rc, 0, out)
        self.assertIn('OK: the last 5 rows', out)

    def test_scrolled_screen_starts_mid_line(self):
        rc, out = self.check(self.TAIL24[4:] + [''], nrows=5)
        self.assertEqual(rc, 0, out)
        self.assertIn('24x5 cells of a 192x80 screen', out)

    def test_mismatch_shows_both(self):
        rows = list(self.TAIL24[3:])
        rows[-1] = 'ailed, 2 skipped'
        rc, out = self.check(rows)
        self.assertEqual(rc, 1)
        self.assertIn('MISMATCH', out)
        self.assertIn("! screen 'ailed, 2 skipped'", out)
        self.assertIn("! log    'ailed, 1 skipped'", out)
        self.assertIn('1 of 5 rows differ', out)

    def test_wrapped_at_the_wrong_width(self):
        # The same text wrapped at 23 columns on a 24-column screen.
        rows = [r for r in fsc.layout(self.LOG, 23) if r][-5:]
        rc, out = self.check(rows)
        self.assertEqual(rc, 1, out)

    def test_blank_screen_and_short_log(self):
        rc, out = self.check([])
        self.assertEqual(rc, 1)
        self.assertIn('no text', out)
        rc, out = self.check(['line a', 'line b', 'line c'], log='line b\r\nline c\r\n')
        self.assertEqual(rc, 1)
        self.assertIn('the log is shorter', out)

    def test_last_n(self):
        rows = ['stale text'] + self.TAIL24[-2:]
        rc, out = self.check(rows)
        self.assertEqual(rc, 1)
        rc, out = self.check(rows, extra=['--last', '2'])
        self.assertEqual(rc, 0, out)
        rc, out = self.check(rows, extra=['--last', '4'])
        self.assertEqual(rc, 1)
        rc, out = self.check(rows, extra=['--last', '0'])
        self.assertEqual(rc, 2)

    def test_bad_input(self):
        rc, out = run_main(['/nonexistent.ppm', '/nonexistent.log'])
        self.assertEqual(rc, 2)
        self.assertIn('cannot read', out)
        rc, out = run_main([])
        self.assertEqual(rc, 2)


# A host program that feeds stdin through lib/fbcon.c into a framebuffer of
# the given format and writes it as a P6 image, each channel widened to 8
# bits the way a display does (value << (8 - size)).
DRIVER = r'''
#include <stdio.h>
#include <stdlib.h>
#include "lib/fbcon.h"

int main(int argc, char **argv)
{
	unsigned w = atoi(argv[1]), h = atoi(argv[2]), bpp = atoi(argv[3]), pad = atoi(argv[4]);
	/* XRGB8888 / RGB888 / RGB565: blue lowest, red highest. */
	unsigned rs = bpp == 16 ? 5 : 8, gs = bpp == 16 ? 6 : 8;
	struct fbcon_fb fb = { NULL, w * (bpp / 8) + pad, w, h, (uint8_t)bpp,
			       (uint8_t)(rs == 5 ? 11 : 16), (uint8_t)rs,
			       (uint8_t)(rs == 5 ? 5 : 8), (uint8_t)gs, 0, (uint8_t)rs };
	static char in[1 << 20];
	size_t n = fread(in, 1, sizeof(in), stdin);

	fb.base = malloc((size_t)fb.pitch * h);
	if (!fbcon_init(&fb))
		return 3;
	fbcon_write(in, n);
	printf("P6\n%u %u\n255\n", w, h);
	for (unsigned y = 0; y < h; y++)
		for (unsigned x = 0; x < w; x++) {
			const unsigned char *p = fb.base + (size_t)y * fb.pitch + x * (bpp / 8);
			unsigned v = 0;
			for (unsigned i = 0; i < bpp / 8; i++)
				v |= (unsigned)p[i] << (8 * i);
			putchar((v >> fb.red_pos & ((1u << rs) - 1)) << (8 - rs));
			putchar((v >> fb.green_pos & ((1u << gs) - 1)) << (8 - gs));
			putchar((v >> fb.blue_pos & ((1u << rs) - 1)) << (8 - rs));
		}
	return 0;
}
'''


class EndToEnd(unittest.TestCase):
    """lib/fbcon.c draws; the tool reads. Catches any drift between the
    C layout and the tool's mirror of it, or between the two fonts."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='fbshot-e2e.')
        cls.exe = None
        cc = shutil.which(os.environ.get('HOSTCC', 'cc')) or shutil.which('gcc')
        if not cc:
            cls.why = 'no C compiler'
            return
        src = os.path.join(cls.tmp, 'driver.c')
        with open(src, 'w') as f:
            f.write(DRIVER)
        exe = os.path.join(cls.tmp, 'driver')
        proc = subprocess.run(
            [cc, '-std=c11', '-O1', '-DPMUTEST_HOST', '-I', ROOT, '-o', exe, src,
             os.path.join(ROOT, 'lib', 'fbcon.c'), os.path.join(ROOT, 'lib', 'font8x16.c'),
             os.path.join(ROOT, 'lib', 'string.c')],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        if proc.returncode != 0:
            raise AssertionError('building the fbcon driver failed:\n' + proc.stdout)
        cls.exe = exe

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    LOG = ''.join('%s\r\n' % l for l in (
        ['KTAP version 1', '1..40'] +
        ['ok %d pmu.suite%d.case_with_a_long_name_%s' % (i, i, 'x' * (i % 13)) for i in range(1, 39)] +
        ['not ok 39 pmu.count\tinstructions: expected 1000, seen 999\x07',
         '# pmutest: 37 passed, 1 failed, 1 skipped (caf\xe9)']))

    def draw(self, log, bpp, w=8 * 41 + 3, h=16 * 12 + 9, pad=0):
        if not self.exe:
            self.skipTest(self.why)
        proc = subprocess.run([self.exe, str(w), str(h), str(bpp), str(pad)],
                              input=log.encode('latin-1'), stdout=subprocess.PIPE)
        self.assertEqual(proc.returncode, 0)
        ppm = os.path.join(self.tmp, 'shot%d.ppm' % bpp)
        logf = os.path.join(self.tmp, 'serial.log')
        with open(ppm, 'wb') as f:
            f.write(proc.stdout)
        with open(logf, 'wb') as f:
            f.write(log.encode('latin-1'))
        return run_main([ppm, logf])

    def test_each_depth(self):
        for bpp, pad in ((32, 0), (24, 5), (16, 2)):
            rc, out = self.draw(self.LOG, bpp, pad=pad)
            self.assertEqual(rc, 0, '%d bpp:\n%s' % (bpp, out))
            # 12 rows, the last the empty one the final newline opened.
            self.assertIn('the last 11 rows', out)

    def test_detects_a_changed_character(self):
        rc, _ = self.draw(self.LOG, 32)
        self.assertEqual(rc, 0)
        if not self.exe:
            return
        # Check the same screenshot against a log that differs in one byte.
        logf = os.path.join(self.tmp, 'serial.log')
        with open(logf, 'wb') as f:
            f.write(self.LOG.replace('seen 999', 'seen 998').encode('latin-1'))
        rc, out = run_main([os.path.join(self.tmp, 'shot32.ppm'), logf])
        self.assertEqual(rc, 1, out)
        self.assertIn('1 of 11 rows differ', out)

