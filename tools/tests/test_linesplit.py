"""Serial logs through a line-splitting consumer (pmutest.linesplit, in the
style of Linux's kunit_parser), both ways it splits lines: the kernel's
line discipline (bare LF, a LF before 'KTAP version 1') must survive a file
capture, a pty capture (LF becomes CR LF) and GRUB's leftover CR; the old
discipline (CR LF, no leading LF) is shown to break exactly as consumers
a review found, so the test can fail."""
import unittest

from fixtures import FIRMWARE_NOISE, PASS_LOG, XFAIL_LOG, pty, stored
from pmutest import linesplit
from pmutest.ktap import parse_ktap

GRUB_LEFTOVER = '\x1b[H\x1b[J  Booting `pmutest: default suite\'\n\r\n\r'


def reference(text):
    return [(leaf.identity, leaf.outcome) for leaf in parse_ktap(text).leaves]


def old_discipline(text):
    """How the kernel printed before: CR LF, the version line first."""
    return text.lstrip('\n').replace('\n', '\r\n')


class LineSplitting(unittest.TestCase):
    def assertParses(self, text, what):
        want = reference(text)
        self.assertTrue(want, what)
        for how in ('splitlines', 'lf'):
            leaves, errors = linesplit.parse(text, how)
            self.assertEqual(errors, [], '%s, %s' % (what, how))
            self.assertEqual(leaves, want, '%s, %s' % (what, how))

    def test_the_kernels_output_in_every_capture(self):
        for name, text in (('xfail', XFAIL_LOG), ('pass', '\n' + PASS_LOG)):
            self.assertParses(text, name + ' file')
            self.assertParses(pty(text), name + ' pty')
            self.assertParses(GRUB_LEFTOVER + text, name + ' after GRUB')
            self.assertParses(pty(GRUB_LEFTOVER + text), name + ' after GRUB, pty')
            self.assertParses(FIRMWARE_NOISE + text, name + ' after OVMF and GRUB')

    def test_stored_captures(self):
        """A real ISO boot's file capture (SeaBIOS, GRUB) and a real pty
        capture of the QEMU command LAVA renders for ci-examples/lava-job.yaml."""
        iso = stored('iso-bios-tcg-smp2.log')
        self.assertIn('Booting `pmutest', iso)
        self.assertParses(iso, 'ISO file capture')
        lava = stored('lava-pty-tcg-smp4.log')
        report = lava[lava.index('KTAP version 1'):]
        self.assertIn('\r\n', report)
        self.assertNotIn('\r\r\n', report)
        self.assertParses(lava, 'LAVA pty capture')

    def test_the_old_discipline_breaks_line_splitters(self):
        text = old_discipline(XFAIL_LOG)
        self.assertParses(text, 'old file capture')          # a file capture was fine
        leaves, errors = linesplit.parse(pty(text), 'splitlines')
        self.assertEqual(leaves, [])
        self.assertEqual(errors, ["top level: no plan right after the header (found '')"])
        old_grub = GRUB_LEFTOVER.replace('\n', '\r\n') + text
        leaves, errors = linesplit.parse(old_grub, 'lf')
        self.assertEqual(errors, ["top level: no plan right after the header (found '..2')"])
        for stored_log in ('kvm-nopmu-smp4.log', 'selftest-tcg-smp4.log'):     # captured before the change
            self.assertEqual(linesplit.parse(pty(stored(stored_log)), 'splitlines')[0], [])

    def test_strict_header(self):
        leaves, errors = linesplit.parse('KTAP version 1\n# Subtest: x\n\n1..1\nok 1 a\n')
        self.assertEqual(errors, ["x: no plan right after the header (found '')"])
        leaves, errors = linesplit.parse('[  1.0] KTAP version 1\n[  1.0] 1..1\n[  1.0] ok 1 a\n')
        self.assertEqual((leaves, errors), ([('a', 'pass')], []))
        leaves, errors = linesplit.parse('KTAP version 1\n1..2\nok 1 a\n')
        self.assertEqual(errors, ['top level: ran out of lines before result 2'])
        self.assertEqual(linesplit.parse('nothing here'), ([], ["no 'KTAP version 1' line"]))

    def test_leaves_named_after_their_cpu_block(self):
        """The kernel names a per-CPU leaf after its block (x@cpu1-apic1):
        the consumer must not add the block's name a second time."""
        text = ('KTAP version 1\n1..1\n  KTAP version 1\n  # Subtest: s\n  1..1\n'
                '    KTAP version 1\n    # Subtest: cpu1-apic3\n    1..1\n'
                '    ok 1 s.t@cpu1-apic3\n  ok 1 cpu1-apic3\nok 1 s\n')
        self.assertEqual(reference(text), [('s.t@cpu1-apic3', 'pass')])
        self.assertParses(text, 'suffixed leaf')
