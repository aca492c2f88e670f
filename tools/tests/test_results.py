"""pmutest.results: the result line, the host-program runner, the total of
`make test`'s parts, and the one unittest runner's sub-totals."""
import io
import os
import shutil
import tempfile
import unittest

from pmutest import results, testing


class ResultLines(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='pmutest-results-test-')
        self.addCleanup(shutil.rmtree, self.tmp)

    def write(self, name, text, mode=0o644):
        path = os.path.join(self.tmp, name)
        with open(path, 'w') as f:
            f.write(text)
        os.chmod(path, mode)
        return path

    def test_format_and_parse(self):
        self.assertEqual(results.format_line('tools', 3, 1, 2), 'tools: 3 passed, 1 failed, 2 skipped')
        self.assertEqual(results.parse_line('  # host.acpi: 3 passed, 0 failed, 1 skipped'),
                         ('host.acpi', [3, 0, 1], True))
        self.assertEqual(results.parse_line('bracket: 1 passed, 0 failed'), ('bracket', [1, 0, 0], False))
        self.assertIsNone(results.parse_line('ok 1 something'))

    def program(self, name, body):
        return self.write(name, '#!/bin/sh\n' + body, 0o755)

    def test_host_programs(self):
        good = self.program('good', 'echo "# host.a: 2 passed, 0 failed, 1 skipped"\n')
        silent = self.program('silent', 'echo hello\n')
        crash = self.program('crash', 'echo "# host.b: 1 passed, 0 failed, 0 skipped"; exit 3\n')
        out = io.StringIO()
        self.assertEqual(results.run_programs([good], out=out), 0)
        self.assertTrue(out.getvalue().endswith('host: 2 passed, 0 failed, 1 skipped\n'))
        out = io.StringIO()
        self.assertEqual(results.run_programs([good, silent, crash], out=out), 1)
        text = out.getvalue()
        self.assertIn('not ok %s # exited 0 without a summary line' % silent, text)
        self.assertIn('not ok %s # exited 3' % crash, text)
        self.assertTrue(text.endswith('host: 3 passed, 2 failed, 1 skipped\n'))

    def test_total(self):
        a = self.write('a.txt', '# host.x: 9 passed, 9 failed, 9 skipped\nhost: 5 passed, 0 failed, 1 skipped\n')
        b = self.write('b.txt', '  # tools.test_a: 2 passed, 0 failed, 0 skipped\ntools: 2 passed, 0 failed, 0 skipped\n')
        out = io.StringIO()
        self.assertEqual(results.total([a + ':host', b + ':tools'], out=out), 0)
        self.assertEqual(out.getvalue(), '7 passed, 0 failed, 1 skipped\n')
        out = io.StringIO()
        self.assertEqual(results.total([a + ':host,bracket', os.path.join(self.tmp, 'none')], out=out), 1)
        self.assertIn('total: missing: %s (no "bracket:" result line)' % a, out.getvalue())
        self.assertIn('total: missing: %s' % os.path.join(self.tmp, 'none'), out.getvalue())


class Runner(unittest.TestCase):
    def test_sub_totals_and_result_line(self):
        tmp = tempfile.mkdtemp(prefix='pmutest-runner-')
        self.addCleanup(shutil.rmtree, tmp)
        with open(os.path.join(tmp, 'test_sample_a.py'), 'w') as f:
            f.write('import unittest\n'
                    'class T(unittest.TestCase):\n'
                    '    def test_ok(self): pass\n'
                    '    def test_bad(self): self.fail("no")\n'
                    '    @unittest.skip("why")\n'
                    '    def test_skip(self): pass\n')
        with open(os.path.join(tmp, 'test_sample_b.py'), 'w') as f:
            f.write('raise ImportError("broken module")\n')
        out = io.StringIO()
        self.assertEqual(testing.run([tmp], part='demo', out=out), 1)
        lines = out.getvalue().splitlines()
        self.assertIn('# demo.test_sample_a: 1 passed, 1 failed, 1 skipped', lines)
        self.assertIn('# demo.test_sample_b: 0 passed, 1 failed, 0 skipped', lines)
        self.assertEqual(lines[-1], 'demo: 1 passed, 2 failed, 1 skipped')
