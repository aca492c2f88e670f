"""harness/mutants.py without QEMU: per-test coverage (a site belongs to
the tests whose output surrounds it; before the first test or with epochs
that do not match the log, to the whole suite), the tests= selector and
the expect file cut to the tests that run."""
import os
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from harness import mutants  # noqa: E402

# 0-based line numbers on the left (the epoch of a site that ran while
# that line was written).
LOG = [
    'KTAP version 1',                       # 0
    '1..2',                                 # 1
    '# pmu: probe',                         # 2
    '  KTAP version 1',                     # 3
    '  # Subtest: pmu.a',                   # 4
    '  1..2',                               # 5
    '  # a.one diag',                       # 6
    '  ok 1 pmu.a.one',                     # 7
    '  ok 2 pmu.a.two',                     # 8
    'ok 1 pmu.a',                           # 9
    '  KTAP version 1',                     # 10
    '  # Subtest: pmu.b',                   # 11
    '  1..1',                               # 12
    '  # b.one diag',                       # 13
    '  ok 1 pmu.b.one',                     # 14
    'ok 2 pmu.b',                           # 15
    '# pmutest: 3 passed, 0 failed, 0 skipped',  # 16
]


class PerTestCoverage(unittest.TestCase):
    def cover(self, pairs, epochs=None, times=None):
        d = tempfile.mkdtemp(prefix='mut.')
        log = os.path.join(d, 'p.log')
        with open(log, 'w') as f:
            f.write('\n'.join(LOG) + '\n')
        ids = os.path.join(d, 'p.ids')
        with open(ids, 'w') as f:
            f.write('# epochs %d\n' % (len(LOG) if epochs is None else epochs))
            f.writelines('%d %d\n' % p for p in pairs)
            f.writelines('t %d %.3f\n' % t for t in (times or []))
        return mutants.Cover(mutants.per_test_coverage(ids, log, 100.0))

    def test_site_belongs_to_the_tests_around_it(self):
        c = self.cover([(1, 6), (2, 8), (3, 14), (4, 10), (5, 7), (5, 14), (6, 13)])
        self.assertEqual(c.sites[1], {'pmu.a.one'})
        # Right after a result: that test's clean-up or the next one's set-up.
        self.assertEqual(c.sites[2], {'pmu.a.two', 'pmu.a.one'})
        self.assertEqual(c.sites[3], {'pmu.b.one'})
        # Only KTAP's frame since pmu.a.two's result: either of them.
        self.assertEqual(c.sites[4], {'pmu.a.two', 'pmu.b.one'})
        self.assertEqual(c.sites[5], {'pmu.a.one', 'pmu.b.one'})
        # While pmu.b.one's first line was written: it, or before any of it.
        self.assertEqual(c.sites[6], {'pmu.a.two', 'pmu.b.one'})

    def test_boot_and_end(self):
        c = self.cover([(1, 2), (1, 6), (2, 16), (3, 0), (4, 3)])
        # At boot (before the first block) and in a test: that test first,
        # then the whole suite (plan); at boot only: the whole suite.
        self.assertEqual(c.sites[1], {'pmu.a.one'})
        self.assertEqual(c.sites[3], set())
        self.assertEqual(c.boot, {1, 3})
        # After the last result only: no test of its own (the whole suite).
        self.assertEqual(c.sites[2], set())
        # The first suite's block is open: the first test (and its set-up).
        self.assertEqual(c.sites[4], {'pmu.a.one'})
        self.assertEqual(c.cost(None), 100.0)

    def test_epochs_not_matching_the_log_mean_the_whole_suite(self):
        c = self.cover([(1, 6)], epochs=len(LOG) + 3)
        self.assertFalse(c.exact)
        self.assertIsNone(c.sites[1])

    def test_test_seconds_from_the_line_times(self):
        c = self.cover([(1, 6)], times=[(8, 10.0), (9, 12.5), (15, 20.0)])
        self.assertEqual(c.test_secs, {'pmu.a.two': 2.5, 'pmu.b.one': 7.5})
        self.assertEqual(c.cost({'pmu.b.one'}), 90.0 + 7.5)


class Plan(unittest.TestCase):
    def test_tests_first_then_the_whole_suite_of_a_boot_site(self):
        def cover(sites, boot, secs, test_secs):
            tests = sorted({t for v in sites.values() if v for t in v})
            return mutants.Cover({'secs': secs, 'tests': tests, 'test_secs': test_secs, 'overhead': 5,
                                  'exact': True, 'boot': boot,
                                  'sites': {str(k): (None if v is None else [tests.index(t) for t in v])
                                            for k, v in sites.items()}})
        cov = {'intel-v4': cover({1: ['a'], 2: [], 3: None}, [1, 2], 100, {'a': 20}),
               'amd-k8': cover({1: ['b'], 3: ['b']}, [], 50, {'b': 2})}
        m = lambda i: {'id': i}  # noqa: E731
        self.assertEqual(mutants.plan(m(1), cov), ['amd-k8', 'intel-v4', 'intel-v4:whole'])
        self.assertEqual(mutants.plan(m(2), cov), ['intel-v4'])
        self.assertEqual(mutants.plan(m(3), cov), ['amd-k8', 'intel-v4'])
        self.assertEqual(mutants.plan(m(4), cov), [])
        with mock.patch.object(mutants, 'selected_expect', side_effect=lambda p, runs: p + '.expect'):
            self.assertEqual(mutants.selection(m(1), 'intel-v4', cov), ('a', {'a'}, 'intel-v4.expect', 150))
            self.assertEqual(mutants.selection(m(1), 'intel-v4:whole', cov)[:2], (None, None))
            self.assertEqual(mutants.selection(m(2), 'intel-v4', cov)[:2], (None, None))

    def test_the_refusal_cases_first_where_they_run_the_site(self):
        cov = {'intel-v4': mutants.Cover({'secs': 100, 'tests': [], 'test_secs': {}, 'overhead': 5,
                                          'exact': True, 'boot': [1], 'sites': {'1': [], '2': []}}),
               mutants.CONFIG_TEST: {1, 3}}
        m = lambda i: {'id': i}  # noqa: E731
        self.assertEqual(mutants.plan(m(1), cov), [mutants.CONFIG_TEST, 'intel-v4'])
        self.assertEqual(mutants.plan(m(2), cov), ['intel-v4'])
        # A site only a refusal case runs (QEMU's start-up) is run there.
        self.assertEqual(mutants.plan(m(3), cov), [mutants.CONFIG_TEST])
        self.assertEqual(mutants.profiles_of(m(3), cov), [])


class Selection(unittest.TestCase):
    def test_tests_arg(self):
        c = mock.Mock(tests=['pmu.a.one', 'pmu.a.two', 'pmu.b.one'])
        self.assertEqual(mutants.tests_arg(None, c), (None, None))
        self.assertEqual(mutants.tests_arg({'pmu.b.one', 'pmu.a.one'}, c),
                         ('pmu.a.one,pmu.b.one', {'pmu.a.one', 'pmu.b.one'}))
        with mock.patch.object(mutants, 'TESTS_ARG_MAX', 15):
            # Too long: the suites' globs, which run the whole suite pmu.a.
            self.assertEqual(mutants.tests_arg({'pmu.a.one', 'pmu.a.two'}, c),
                             ('pmu.a.*', {'pmu.a.one', 'pmu.a.two'}))
        with mock.patch.object(mutants, 'TESTS_ARG_MAX', 5):
            self.assertEqual(mutants.tests_arg({'pmu.a.one', 'pmu.b.one'}, c), (None, None))

    def test_selected_expect_keeps_the_rules_of_the_tests_that_run(self):
        d = tempfile.mkdtemp(prefix='mut.')
        exp = os.path.join(d, 'x.expect')
        with open(exp, 'w') as f:
            f.write('# head\npmu.*  pass\npmu.b.* skip  # why\npmu.c.one@cpu1* fail\ncpus 2\n'
                    'summary 3 0 1\ndeviations none\n')
        with mock.patch.object(mutants, 'expect_file', return_value=exp), \
                mock.patch.object(mutants, 'OUT', d):
            self.assertEqual(mutants.selected_expect('x', None), exp)
            with open(mutants.selected_expect('x', {'pmu.a.one'})) as f:
                lines = f.read().splitlines()
            self.assertEqual(lines[1:], ['# head', 'pmu.*  pass', 'cpus 2'])
            with open(mutants.selected_expect('x', {'pmu.b.one', 'pmu.c.one'})) as f:
                lines = f.read().splitlines()
            self.assertEqual(lines[1:], ['# head', 'pmu.*  pass', 'pmu.b.* skip  # why',
                                         'pmu.c.one@cpu1* fail', 'cpus 2'])


if __name__ == '__main__':
    unittest.main()


class RefusalCases(unittest.TestCase):
    """harness/emu_config.py without QEMU: every limit has its case on
    both sides, and a refusal is judged by QEMU's exit status."""

    def test_each_case_once_and_both_verdicts_present(self):
        from harness import emu_config
        names = emu_config.names()
        self.assertEqual(len(names), len(set(names)))
        self.assertTrue(any(c[2] for c in emu_config.CASES))
        self.assertTrue(any(not c[2] for c in emu_config.CASES))
        for name, cpu, accepted, source in emu_config.CASES:
            self.assertIn('pmu=on', cpu, name)
            self.assertTrue(source, name)
            self.assertEqual(accepted, 'accepted' in name, name)

    def test_the_readme_quirks_table_is_read(self):
        from harness import emu_config
        quirks = emu_config.readme_quirks()
        self.assertIn('kvm-emulated-wrmsr-ignores-cmask', quirks)
        self.assertNotIn('pmi-never-delivered', quirks)   # a defect, not a quirk

    def test_a_case_fails_when_qemu_answers_otherwise(self):
        from harness import emu_config
        done = mock.Mock(returncode=0, stdout='(qemu) quit\n')
        with mock.patch.object(emu_config.subprocess, 'run', return_value=done):
            self.assertTrue(emu_config.run_case('q', 'gp_width_64_accepted')[0])
            self.assertFalse(emu_config.run_case('q', 'gp_width_65_refused')[0])
        refused = mock.Mock(returncode=1, stdout='qemu-system-x86_64: pmu-quirks: unknown quirk \'x\'; known: a b\n')
        with mock.patch.object(emu_config.subprocess, 'run', return_value=refused):
            self.assertFalse(emu_config.run_case('q', 'gp_width_64_accepted')[0])
            self.assertTrue(emu_config.run_case('q', 'gp_width_65_refused')[0])
            ok, why = emu_config.run_case('q', emu_config.QUIRK_CASE)
            self.assertFalse(ok)
            self.assertIn('kvm-emulated-wrmsr-ignores-cmask', why)
