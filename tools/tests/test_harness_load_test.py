"""harness/load_test.py without QEMU: a run's legs go at once (or one
after another with --sequential), R counts runs and F the failed legs, and
an interrupted run stops every leg's process group."""
import contextlib
import io
import os
import sys
import tempfile
import threading
import time
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from harness import load_test  # noqa: E402

PLAN = [('emu:x', ['a']), ('tcg', ['b']), ('kvm', ['c'])]


class LoadTest(unittest.TestCase):
    def run_main(self, fake_leg, *argv):
        kernel = tempfile.NamedTemporaryFile(suffix='.elf')
        self.addCleanup(kernel.close)
        out = io.StringIO()
        with mock.patch.object(load_test, 'legs', return_value=PLAN), \
                mock.patch.object(load_test, 'run_leg', side_effect=fake_leg), \
                contextlib.redirect_stdout(out):
            rc = load_test.main(['--factor', '0', '--kernel', kernel.name,
                                 '--logdir', tempfile.mkdtemp(prefix='lt.')] + list(argv))
        return rc, out.getvalue().splitlines()

    def test_legs_at_once_and_the_counts(self):
        running, most = set(), [0]
        lock = threading.Lock()

        def leg(name, argv, logdir, run):
            with lock:
                running.add(name)
                most[0] = max(most[0], len(running))
            time.sleep(0.2)
            with lock:
                running.discard(name)
            ok = not (name == 'tcg' and run == 2)
            return ok, [] if ok else ['reason one'], 0.2
        rc, lines = self.run_main(leg, '--runs', '2')
        self.assertEqual(most[0], 3)
        self.assertEqual(rc, 1)
        self.assertEqual(lines[-1], 'load-test: 2 runs, 1 false failures')
        self.assertIn('not ok run 2 tcg (0 s, load average %s)' % load_test.load_average(), lines)
        self.assertIn('    reason one', lines)

    def test_sequential_runs_one_leg_at_a_time(self):
        running, most = set(), [0]
        lock = threading.Lock()

        def leg(name, argv, logdir, run):
            with lock:
                running.add(name)
                most[0] = max(most[0], len(running))
            time.sleep(0.05)
            with lock:
                running.discard(name)
            return True, [], 0.05
        rc, lines = self.run_main(leg, '--runs', '1', '--sequential')
        self.assertEqual(most[0], 1)
        self.assertEqual(rc, 0)
        self.assertEqual(lines[-1], 'load-test: 1 runs, 0 false failures')

    def test_interrupt_stops_the_legs(self):
        def leg(name, argv, logdir, run):
            if name == 'emu:x':
                raise KeyboardInterrupt('signal 15')
            return True, [], 0.0
        with mock.patch.object(load_test, 'stop_legs') as stop:
            rc, lines = self.run_main(leg, '--runs', '3')
        self.assertTrue(stop.called)
        self.assertEqual(rc, 130)
        self.assertEqual(lines[-1], 'load-test: 0 runs, 0 false failures')


if __name__ == '__main__':
    unittest.main()
