"""pmutest.cpu_budget: a budget of CPU seconds, a wall-clock cap, the
command's own status passed through."""
import io
import sys
import unittest

from pmutest.cpu_budget import TIMED_OUT, run


class CpuBudget(unittest.TestCase):
    def test_status_passes_through(self):
        err = io.StringIO()
        self.assertEqual(run(['sh', '-c', 'exit 33'], 5, err=err), 33)
        self.assertEqual(err.getvalue(), '')

    def test_signal_is_128_plus(self):
        self.assertEqual(run(['sh', '-c', 'kill -TERM $$'], 5, err=io.StringIO()), 128 + 15)

    def test_spinning_command_stops_at_its_cpu_budget(self):
        err = io.StringIO()
        status = run([sys.executable, '-c', 'while True: pass'], 0.5, wall_factor=1000,
                     poll=0.05, err=err)
        self.assertEqual(status, TIMED_OUT)
        self.assertIn('budget of 0.5 CPU seconds was spent', err.getvalue())
        self.assertIn('load average', err.getvalue())

    def test_command_given_no_cpu_stops_at_the_wall_cap(self):
        err = io.StringIO()
        status = run(['sleep', '30'], 0.1, wall_factor=5, poll=0.05, err=err)
        self.assertEqual(status, TIMED_OUT)
        self.assertIn('5 times its CPU budget', err.getvalue())


if __name__ == '__main__':
    unittest.main()
