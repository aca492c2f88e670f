"""pmutest.expect: the expect-file format, and each leaf judged against it,
XFAIL rules and the deviations line included."""
import os
import re
import unittest

from fixtures import EXPECT_DIR, GOOD_LOG, PASS_LOG, XFAIL_ID, XFAIL_LOG
from pmutest.expect import ExpectError, Expectations, check_expectations, judge, parse_expect
from pmutest.ktap import parse_ktap


class ExpectFiles(unittest.TestCase):
    def test_parse(self):
        exp = parse_expect('# header\n\nboot.* pass\npmu.*@cpu1-* any  # trailing\n'
                              'cpus 4\nexit 0x23\nsummary 1 2 3\n', 'x.expect')
        self.assertEqual([(r.glob, r.outcomes, r.lineno) for r in exp.rules],
                         [('boot.*', ('pass',), 3), ('pmu.*@cpu1-*', ('any',), 4)])
        self.assertEqual((exp.cpus, exp.exit, exp.summary, exp.source), (4, 35, (1, 2, 3), 'x.expect'))

    def test_parse_errors(self):
        for text, fragment in (('boot.* passes\n', "outcome 'passes'"),
                               ('boot.*\n', 'cannot parse'),
                               ('a pass c\n', "deviation IDs 'c' need an xfail outcome"),
                               ('a b c\n', "outcome 'b'"),
                               ('a b c d\n', 'cannot parse'),
                               ('a pass|any\n', 'any already accepts'),
                               ('a pass|maybe\n', "outcome 'maybe'"),
                               ('a xfail X,,Y\n', 'not a comma-separated list'),
                               ('deviations\n', 'cannot parse'),
                               ('cpus four\n', 'cpus must be a number'),
                               ('cpus 0\n', 'out of range'),
                               ('exit 256\n', 'out of range'),
                               ('summary 1 2\n', 'cannot parse')):
            with self.assertRaises(ExpectError) as ctx:
                parse_expect('# c\n' + text, 'e.expect')
            self.assertIn('e.expect:2: ', str(ctx.exception))
            self.assertIn(fragment, str(ctx.exception))

    def check(self, text, log_text=GOOD_LOG):
        return check_expectations(parse_ktap(log_text), parse_expect(text, 'e'))

    def test_exact_expectations_pass(self):
        self.assertEqual(self.check('''
boot.cmdline pass
boot.memory_map fail
pmu.count.* skip
pmu.count.gp_instructions@cpu1-apic2 fail
pmu.count.fixed@cpu1-* pass
selftest.pass_check pass
selftest.hang timeout
summary 3 3 2
'''), [])

    def test_last_match_wins(self):
        self.assertEqual(self.check('* pass\n* skip\n', PASS_LOG),
                         ['boot.cmdline: expected skip (e:2), got pass'])
        self.assertEqual(self.check('* skip\n* pass\n', PASS_LOG),
                         ['smp.online: expected pass (e:2), got skip'])

    def test_glob_matches_identity_or_bare_name(self):
        exp = 'pmu.count.gp_instructions any\n*@cpu0-apic0 fail\n'
        problems = self.check(exp + '* any\n')
        self.assertEqual(problems, [])       # '* any' wins everywhere
        problems = self.check('* any\n' + exp)
        self.assertEqual(problems, [
            'pmu.count.gp_instructions@cpu0-apic0: expected fail (e:3), got skip',
            'pmu.count.fixed@cpu0-apic0: expected fail (e:3), got skip'])

    def test_unmatched_glob_is_an_error(self):
        self.assertEqual(self.check('* any\nselftest.gp fail\npmu.nothing.* skip\n'),
                         ['expected test selftest.gp did not run (e:2)',
                          'expected test pmu.nothing.* did not run (e:3)'])

    def test_glob_overridden_later_still_counts_as_run(self):
        self.assertEqual(self.check('boot.cmdline fail\n* any\n'), [])

    def test_unlisted_tests_must_not_fail(self):
        self.assertEqual(self.check('boot.* any\n'), [
            'unexpected fail: pmu.count.gp_instructions@cpu1-apic2',
            'unexpected timeout: selftest.hang'])
        self.assertEqual(check_expectations(parse_ktap(PASS_LOG), Expectations()), [])

    def test_fail_does_not_accept_timeout(self):
        self.assertEqual(self.check('* any\nselftest.hang fail\n'),
                         ['selftest.hang: expected fail (e:2), got timeout'])

    def test_summary_line(self):
        self.assertEqual(self.check('* any\nsummary 3 2 3\n'),
                         ['expected summary 3 passed, 2 failed, 3 skipped; got 3, 3, 2'])

    def test_shipped_expect_files_parse(self):
        root = EXPECT_DIR
        names = sorted(n for n in os.listdir(root) if n.endswith('.expect'))
        self.assertIn('tcg.expect', names)
        self.assertIn('selftest.expect', names)
        for name in names:
            with open(os.path.join(root, name)) as f:
                exp = parse_expect(f.read(), name)
            self.assertTrue(exp.rules, name)
            for rule in exp.rules:
                self.assertNotIn('any', rule.outcomes, '%s:%d: shipped files say what they expect' % (name, rule.lineno))
        with open(os.path.join(root, 'selftest.expect')) as f:
            sel = parse_expect(f.read(), 'selftest.expect')
        self.assertEqual(sel.exit, 35)
        wanted = {r.glob: '|'.join(r.outcomes) for r in sel.rules}
        for name in ('selftest.gp', 'selftest.pf', 'selftest.ud', 'selftest.de',
                     'selftest.smp.exception_on_each_cpu', 'selftest.check_fails', 'selftest.no_check'):
            self.assertEqual(wanted.get(name), 'fail', name)
        self.assertEqual(wanted.get('selftest.hang'), 'timeout')
        self.assertEqual(wanted.get('selftest.zz_lost_cpu.ap_hang_irqs_off'), 'timeout')
        self.assertEqual(wanted.get('selftest.pass_check'), 'pass')


class XfailRules(unittest.TestCase):
    def check(self, text, log_text=XFAIL_LOG):
        return check_expectations(parse_ktap(log_text), parse_expect(text, 'e'))

    def test_pass_does_not_accept_an_xfail(self):
        self.assertEqual(self.check('* pass\n'), [
            'pmu.count.cmask_inv_edge@cpu0-apic0: expected pass (e:1), got xfail %s' % XFAIL_ID,
            'pmu.count.cmask_inv_edge@cpu1-apic1: expected pass (e:1), got xfail %s' % XFAIL_ID])

    def test_xfail_rules(self):
        self.assertEqual(self.check('* pass|xfail\n'), [])
        self.assertEqual(self.check('* pass\npmu.count.cmask_inv_edge xfail\n'), [])
        self.assertEqual(self.check('* pass\npmu.count.cmask_inv_edge xfail %s,OTHER\n' % XFAIL_ID), [])
        self.assertEqual(self.check('* any\n'), [])
        self.assertEqual(self.check('', XFAIL_LOG), [])      # no rule: an XFAIL is not a failure

    def test_an_xfail_rule_with_other_ids_refuses_a_new_deviation(self):
        problems = self.check('* pass|xfail OTHER-ID\n')
        self.assertEqual(problems[0], 'pmu.count.cmask_inv_edge@cpu0-apic0: xfail %s is not among the '
                                      'deviations OTHER-ID allows (e:1)' % XFAIL_ID)
        self.assertEqual(len(problems), 2)

    def test_xfail_rule_on_a_pass(self):
        self.assertEqual(self.check('* pass|xfail\npmu.count.gp_instructions xfail\n'), [
            'pmu.count.gp_instructions@cpu0-apic0: expected xfail (e:2), got pass',
            'pmu.count.gp_instructions@cpu1-apic1: expected xfail (e:2), got pass'])

    def test_deviations_line(self):
        self.assertEqual(self.check('* any\ndeviations %s\n' % XFAIL_ID), [])
        self.assertEqual(self.check('* any\ndeviations none\n'), [
            'expected deviations none (e); the log lists %s' % XFAIL_ID])
        self.assertEqual(self.check('* any\ndeviations none\n', PASS_LOG), [])
        self.assertEqual(self.check('* any\ndeviations A,%s\n' % XFAIL_ID), [
            'expected deviations A,%s (e); the log lists %s' % (XFAIL_ID, XFAIL_ID)])

    def test_summary_with_xfail_count(self):
        self.assertEqual(self.check('* any\nsummary 5 0 0 2\n'), [])
        self.assertEqual(self.check('* any\nsummary 5 0 0\n'), [])
        self.assertEqual(self.check('* any\nsummary 5 0 0 0\n'),
                         ['expected summary 5 passed, 0 failed, 0 skipped, 0 xfail; got 5, 0, 0, 2'])

    def test_judgements(self):
        log = parse_ktap(GOOD_LOG)
        exp = parse_expect('boot.memory_map fail\nselftest.* pass|timeout\n', 'e')
        by_name = {lf.identity: judge(lf, exp) for lf in log.leaves}
        mm = by_name['boot.memory_map']
        self.assertEqual((mm.problem, mm.predicted, mm.where(exp)), (None, True, 'e:1'))
        hang = by_name['selftest.hang']
        self.assertEqual((hang.problem, hang.predicted), (None, True))
        self.assertEqual(by_name['pmu.count.gp_instructions@cpu1-apic2'].problem,
                         'unexpected fail: pmu.count.gp_instructions@cpu1-apic2')
        ok = by_name['boot.cmdline']
        self.assertEqual((ok.problem, ok.predicted, ok.rule), (None, False, None))
        xfail = judge(parse_ktap(XFAIL_LOG).leaves[2], Expectations())
        self.assertEqual((xfail.problem, xfail.predicted), (None, True))


def registered_tests():
    """Every KTEST's name, from the kernel's sources."""
    root = os.path.dirname(EXPECT_DIR)
    names = set()
    for d in (root, os.path.join(root, 'pmu')):
        for f in sorted(os.listdir(d)):
            if f.endswith('.c'):
                with open(os.path.join(d, f)) as src:
                    names.update('%s.%s' % m for m in re.findall(r'^KTEST\("([^"]+)",\s*(\w+)', src.read(), re.M))
    return names


class BareMetalFitsSilicon(unittest.TestCase):
    """The bare-metal expect files accept what real parts do: every emulated
    silicon shape of that vendor (tests/expect/emu/, the manuals' PMUs and
    real parts' CPUID dumps) runs its checks, and SKIPs the ones its CPUID
    leaves out; the bare-metal file must accept each such outcome, and still
    refuse a SKIP of the checks no part with a PMU may skip, and any FAIL."""
    FILES = {'bare-metal.expect': 'intel-', 'bare-metal-amd.expect': 'amd-'}
    # Never SKIP on a part with a PMU, whatever its CPUID.
    CORE = ('pmu.caps.probe_verdict', 'pmu.count.gp_arch_events', 'pmu.overflow.every_counter_one_pmi',
            'pmu.regs.counter_writes', 'pmu.ring3.usr_os_filtering', 'pmu.sampling.period_on_each_cpu')
    # TCG's, not a part's (tests/expect/tcg.expect).
    EMULATOR_ONLY = ('arch.msr_safe_fault',)

    def leaf(self, name, outcome):
        return parse_ktap('KTAP version 1\n1..1\n%s 1 %s%s\n' % (
            'not ok' if outcome == 'fail' else 'ok', name, ' # SKIP why' if outcome == 'skip' else '')).leaves[0]

    def shapes(self, prefix):
        emu = os.path.join(EXPECT_DIR, 'emu')
        return [os.path.join(emu, n) for n in sorted(os.listdir(emu))
                if n.startswith(prefix) and n.endswith('.expect') and n != 'intel-v1.expect']

    def test_every_silicon_shape_fits(self):
        tests = registered_tests()
        self.assertIn('pmu.count.gp_arch_events', tests)
        for name, prefix in self.FILES.items():
            with open(os.path.join(EXPECT_DIR, name)) as f:
                bare = parse_expect(f.read(), name)
            shapes = self.shapes(prefix)
            self.assertGreaterEqual(len(shapes), 4, name)
            for path in shapes:
                with open(path) as f:
                    shape = parse_expect(f.read(), os.path.basename(path))
                for t in sorted(tests):
                    if t.startswith(('selftest.', 'verdict.', 'list.')) or t in self.EMULATOR_ONLY:
                        continue
                    rule = None
                    for r in shape.rules:
                        if re.fullmatch(re.escape(r.glob).replace(r'\*', '.*'), t):
                            rule = r
                    if rule is None:
                        continue
                    for outcome in rule.outcomes:
                        j = judge(self.leaf(t, outcome), bare)
                        self.assertIsNone(j.problem, '%s on %s' % (t, os.path.basename(path)))
            for t in self.CORE:
                self.assertIsNotNone(judge(self.leaf(t, 'skip'), bare).problem, '%s: %s' % (name, t))
            for t in sorted(tests):
                if t.startswith(('pmu.', 'monitor.', 'sample.')):
                    self.assertIsNotNone(judge(self.leaf(t, 'fail'), bare).problem, '%s: %s' % (name, t))
