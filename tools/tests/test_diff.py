"""tools/pmutest-diff (pmutest.diff): stored logs against themselves and
against a copy that differs in one outcome and one figure; XFAIL runs
against clean ones; how figures are found and keyed."""
import contextlib
import io
import os
import shutil
import tempfile
import unittest

from fixtures import XFAIL_ID, XFAIL_LOG, stored
from pmutest import diff
from pmutest.ktap import parse_ktap

NOPMU = 'kvm-nopmu-smp4.log'
# One outcome (arch.msr_safe_fault on cpu 2 fails) and one figure (the IPI
# round trip's median) changed, nothing else.
ONE_OUTCOME = ('    ok 3 arch.msr_safe_fault\r\n    ok 4 arch.self_ipi\r\n    ok 5 arch.usermode\r\n'
               '  ok 3 cpu2-apic3')
ONE_OUTCOME_NEW = ('    not ok 3 arch.msr_safe_fault\r\n    ok 4 arch.self_ipi\r\n    ok 5 arch.usermode\r\n'
                   '  not ok 3 cpu2-apic3')


def changed_copy(text):
    assert text.count(ONE_OUTCOME) == 1
    text = text.replace(ONE_OUTCOME, ONE_OUTCOME_NEW)
    text = text.replace('ok 2 arch\r\n', 'not ok 2 arch\r\n')
    text = text.replace('34 passed, 0 failed', '33 passed, 1 failed')
    text = text.replace('exit=0x10', 'exit=0x11')
    figure = 'median 350499 ns'
    assert text.count(figure) == 1
    return text.replace(figure, 'median 351000 ns')


def run_main(*paths):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        rc = diff.main(list(paths))
    return rc, out.getvalue()


class Diff(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='pmutest-diff-test-')
        self.addCleanup(shutil.rmtree, self.tmp)

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, 'w', newline='') as f:
            f.write(text)
        return path

    def test_a_stored_log_against_itself(self):
        for name in (NOPMU, 'selftest-tcg-smp4.log'):
            text = stored(name)
            cmp = diff.compare(parse_ktap(text), parse_ktap(text))
            self.assertTrue(cmp.outcomes_agree)
            self.assertEqual((cmp.outcomes, cmp.figures, cmp.deviations, cmp.only_figures), ([], [], [], 0))
            self.assertGreater(cmp.compared, 40)

    def test_one_outcome_and_one_figure(self):
        a = self.write('a.log', stored(NOPMU))
        b = self.write('b.log', changed_copy(stored(NOPMU)))
        self.assertEqual(parse_ktap(changed_copy(stored(NOPMU))).errors, [])
        rc, out = run_main(a, b)
        self.assertEqual(rc, 1, out)
        self.assertIn('  arch.msr_safe_fault@cpu2  pass                     | fail', out)
        self.assertIn('  smp.ipi_round_trip@cpu0  "on_cpu round trip to cpu #: median [#] ns (min #, max #)": '
                      '350499 -> 351000 (+0.1%)', out)
        self.assertIn('outcomes: 1 differ', out)
        self.assertIn('figures: ', out)
        self.assertIn(', 1 differ, 0 printed by one run only', out)
        self.assertTrue(out.rstrip().endswith('verdict: outcomes differ'))

    def test_figures_alone_do_not_fail(self):
        text = stored(NOPMU)
        b = self.write('b.log', text.replace('median 350499 ns', 'median 1 ns'))
        rc, out = run_main(self.write('a.log', text), b)
        self.assertEqual(rc, 0, out)
        self.assertIn('figures: ', out)
        self.assertTrue(out.rstrip().endswith('verdict: outcomes agree'))

    def test_checks_in_one_run_only(self):
        start = XFAIL_LOG.index('    KTAP version 1\n    # Subtest: cpu1-apic1')
        end = XFAIL_LOG.index('  ok 2 cpu1-apic1\n') + len('  ok 2 cpu1-apic1\n')
        one_cpu = (XFAIL_LOG[:start] + XFAIL_LOG[end:]).replace('  # Subtest: pmu.count\n  1..2',
                                                               '  # Subtest: pmu.count\n  1..1')
        one_cpu = one_cpu.replace('5 passed, 0 failed, 0 skipped, 2 xfail', '3 passed, 0 failed, 0 skipped, 1 xfail')
        self.assertEqual(parse_ktap(one_cpu).errors, [])
        cmp = diff.compare(parse_ktap(one_cpu), parse_ktap(XFAIL_LOG))
        self.assertEqual(cmp.only_b, [('pmu.count.gp_instructions@cpu1', 'pass'),
                                      ('pmu.count.cmask_inv_edge@cpu1', 'xfail %s' % XFAIL_ID)])
        self.assertEqual((cmp.only_a, cmp.outcomes), ([], []))
        self.assertFalse(cmp.outcomes_agree)

    def test_xfail_against_silicon(self):
        silicon = XFAIL_LOG.replace(' # XFAIL %s: cmask=255 counter read 1, expected 0' % XFAIL_ID, '')
        silicon = silicon.replace('cmask=255 counter: 1,', 'cmask=255 counter: 0,')
        silicon = silicon[:silicon.index('# deviations')] + silicon[silicon.index('# pmutest: 5'):]
        silicon = silicon.replace(', 2 xfail', '')
        self.assertEqual(parse_ktap(silicon).errors, [])
        rc, out = run_main(self.write('silicon.log', silicon), self.write('guest.log', XFAIL_LOG))
        self.assertEqual(rc, 1)
        self.assertIn('  pmu.count.cmask_inv_edge@cpu0  pass                     | xfail %s' % XFAIL_ID, out)
        self.assertIn('  %s: B only (cpus 0-1, tests pmu.count.cmask_inv_edge: the emulated enabling WRMSR '
                      'is counted whatever CMASK says)' % XFAIL_ID, out)
        self.assertIn('"cmask=# counter: [#], cmask=# counter: #": 0 -> 1', out)
        self.assertIn('deviations: 1 differ (A: none; B: %s)' % XFAIL_ID, out)

    def test_unreadable_file(self):
        rc, out = run_main(os.path.join(self.tmp, 'none.log'), os.path.join(self.tmp, 'none.log'))
        self.assertEqual(rc, 2)
        self.assertIn('pmutest-diff: ', out)


class Figures(unittest.TestCase):
    def test_numbers_and_shapes(self):
        line = 'PMC0 = 0x3e8 after 1000 instructions on cpu1, 2000ms, 12.5%, CPUID.0AH.EAX[7:0]=0 mmap 000000000009fbff'
        nums = [m.group('num') for m in diff._NUMBER_RE.finditer(line)]
        self.assertEqual(nums, ['0x3e8', '1000', '2000', '12.5', '7', '0', '0', '000000000009fbff'])
        self.assertEqual(diff.shape_of(line), 'PMC0 = # after # instructions on cpu1, #ms, #%, '
                                              'CPUID.0AH.EAX[#:#]=# mmap #')

    def test_repeated_shapes_line_up_in_order(self):
        check = diff.Check('x', 'pass', lines=['mmap 0-9 type 1', 'mmap 10-19 type 2'])
        figs = check.figures()
        self.assertEqual(figs[('mmap #-# type #', 1, 1)][0], '19')
        self.assertEqual(len(figs), 6)

    def test_keys_drop_the_apic_id(self):
        self.assertEqual(diff.check_key('pmu.count.x@cpu3-apic6'), 'pmu.count.x@cpu3')
        self.assertEqual(diff.check_key('boot.acpi'), 'boot.acpi')
        self.assertEqual(diff.check_key('arch@cpu1-apic2'), 'arch@cpu1')

    def test_change(self):
        self.assertEqual(diff.change('100', '150'), '100 -> 150 (+50.0%)')
        self.assertEqual(diff.change('0x10', '0x20'), '0x10 -> 0x20')
        self.assertEqual(diff.change('0', '5'), '0 -> 5')
