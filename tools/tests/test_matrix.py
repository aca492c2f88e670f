"""Unit tests of the boot matrix's own judgements (tools/pmutest/matrix.py;
the matrix itself boots in make boot-test): the no-long-mode rows.
Run: PYTHONPATH=tools python3 -m pmutest.testing tools/tests/test_matrix.py"""
import os
import tempfile
import unittest

from pmutest import matrix

LINE = 'pmutest: this CPU has no long mode (CPUID.80000001H:EDX[29]=0)\r\n'


class NoLongMode(unittest.TestCase):
    def setUp(self):
        fd, self.log = tempfile.mkstemp()
        os.close(fd)
        self.addCleanup(os.remove, self.log)

    def write(self, text):
        with open(self.log, 'w') as f:
            f.write(text)

    def test_qemu_exit_with_the_panic_status(self):
        self.write(LINE)
        rc, _ = matrix.no_long_mode_verdict('qemu status: 127 (kernel panic) after 0.2 s', self.log, 127)
        self.assertEqual(rc, 0)
        rc, out = matrix.no_long_mode_verdict('timeout: QEMU was still running after 3 s', self.log, 127)
        self.assertEqual(rc, 1)
        self.assertIn('missing: QEMU status 127', out)

    def test_bare_metal_halts(self):
        self.write(LINE)
        rc, _ = matrix.no_long_mode_verdict('timeout: QEMU was still running after 3 s and was killed',
                                            self.log, None)
        self.assertEqual(rc, 0)
        rc, out = matrix.no_long_mode_verdict('qemu status: 127 (kernel panic)', self.log, None)
        self.assertIn('a halted kernel', out)

    def test_the_line_must_be_there(self):
        self.write('')
        rc, out = matrix.no_long_mode_verdict('qemu status: 127 (kernel panic)', self.log, 127)
        self.assertEqual(rc, 1)
        self.assertIn('no long mode', out)


if __name__ == '__main__':
    unittest.main()
