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


class Monitor(unittest.TestCase):
    """hmp() returns once the monitor printed its prompt after the command."""

    def serve(self, delay, reply_prompt=True):
        import socket
        import threading
        import time
        tmp = tempfile.mkdtemp()
        path = os.path.join(tmp, 'mon.sock')
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(1)
        got = []

        def run():
            c, _ = srv.accept()
            c.sendall(b'QEMU 7.2 monitor\r\n(qemu) ')
            got.append(c.recv(4096))
            time.sleep(delay)   # the command runs
            if reply_prompt:
                c.sendall(b'(qemu) ')
            time.sleep(0.3)
            c.close()
            srv.close()
        t = threading.Thread(target=run)
        t.start()
        return path, got, t

    def test_waits_for_the_command_to_finish(self):
        path, got, t = self.serve(1.0)
        self.assertTrue(matrix.hmp(path, 'screendump x.ppm', timeout=10))
        t.join()
        self.assertEqual(got, [b'screendump x.ppm\n'])

    def test_a_monitor_that_never_answers_is_not_done(self):
        path, got, t = self.serve(0.1, reply_prompt=False)
        self.assertFalse(matrix.hmp(path, 'screendump x.ppm', timeout=2))
        t.join()
