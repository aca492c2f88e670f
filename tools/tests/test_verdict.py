"""pmutest.verdict: the QEMU status against the log, the CPU count, every
problem collected, and the summary block."""
import unittest

from fixtures import ALL_SKIP_LOG, GOOD_LOG, PASS_LOG, XFAIL_ID, XFAIL_LOG
from pmutest.expect import Expectations, parse_expect
from pmutest.ktap import parse_ktap
from pmutest.verdict import (RunResult, check_cpus, check_status, expected_statuses, format_summary,
                             verdict_problems)


def run(status, stderr='', **kw):
    return RunResult(status=status, stderr=stderr, **kw)


class Status(unittest.TestCase):
    none = Expectations()

    def test_expected_statuses(self):
        self.assertEqual(expected_statuses(parse_ktap(GOOD_LOG))[0], {35})
        self.assertEqual(expected_statuses(parse_ktap(PASS_LOG))[0], {33})
        self.assertEqual(expected_statuses(parse_ktap(ALL_SKIP_LOG))[0], {77})
        self.assertEqual(expected_statuses(parse_ktap(''))[0], {33, 77})

    def test_stored_log_uses_end_marker(self):
        for text in (GOOD_LOG, PASS_LOG, ALL_SKIP_LOG):
            self.assertEqual(check_status(parse_ktap(text), None, self.none), [])
        lying = parse_ktap(GOOD_LOG.replace('exit=0x11', 'exit=0x10'))
        self.assertEqual(check_status(lying, None, self.none),
                         ['end marker gives QEMU status 33 (no test failed), expected 35 (a test failed)'])
        skip_as_pass = parse_ktap(ALL_SKIP_LOG.replace('exit=0x26', 'exit=0x10'))
        self.assertEqual(check_status(skip_as_pass, None, self.none),
                         ['end marker gives QEMU status 33 (no test failed), expected 77 (every test skipped)'])

    def test_qemu_status_consistent(self):
        self.assertEqual(check_status(parse_ktap(GOOD_LOG), run(35), self.none), [])
        self.assertEqual(check_status(parse_ktap(PASS_LOG), run(33), self.none), [])
        self.assertEqual(check_status(parse_ktap(ALL_SKIP_LOG), run(77), self.none), [])

    def test_qemu_status_disagrees_with_log_and_marker(self):
        problems = check_status(parse_ktap(GOOD_LOG), run(33), self.none)
        self.assertEqual(problems, [
            'QEMU status 33 (no test failed), expected 35 (a test failed)',
            'end marker says exit=0x11 (status 35) but QEMU exited with 33'])

    def test_special_statuses(self):
        log = parse_ktap(GOOD_LOG[:GOOD_LOG.index('# smp')])
        self.assertEqual(check_status(log, run(127), self.none),
                         ['QEMU status 127 (kernel panic), expected 35 (a test failed)'])
        self.assertEqual(check_status(log, run(0), self.none),
                         ['QEMU status 0 (triple fault or reset under -no-reboot), expected 35 (a test failed)'])
        self.assertEqual(check_status(log, run(1, 'warning: x\nqemu: could not load kernel\n'), self.none),
                         ["QEMU status 1 (QEMU's own error), expected 35 (a test failed): "
                          'qemu: could not load kernel'])
        self.assertEqual(check_status(log, run(-6), self.none),
                         ['QEMU status -6 (killed by signal 6), expected 35 (a test failed)'])

    def test_status_zero_never_passes_even_with_empty_log(self):
        self.assertEqual(len(check_status(parse_ktap(''), run(0), self.none)), 1)

    def test_timeout_and_linger(self):
        log = parse_ktap(PASS_LOG)
        self.assertEqual(check_status(log, RunResult(timed_out=True), self.none, 120),
                         ['timeout: QEMU was still running after 120 s and was killed'])
        busy = RunResult(timed_out=True, elapsed=1200.4,
                         host_note='the host was busy: load average 9.3 on 2 CPUs')
        self.assertEqual(check_status(log, busy, self.none, 120),
                         ['timeout: QEMU was still running after 120 s and was killed '
                          '(it ran 1200 s: still printing at the timeout, it was given more; '
                          'the host was busy: load average 9.3 on 2 CPUs)'])
        self.assertIn('after the end marker',
                      check_status(log, RunResult(stopped=True), self.none)[0])

    def test_expect_exit_overrides(self):
        exp = parse_expect('exit 35\n', 'sel.expect')
        self.assertEqual(check_status(parse_ktap(GOOD_LOG), run(35), exp), [])
        self.assertEqual(check_status(parse_ktap(PASS_LOG), None,
                                         parse_expect('exit 33\n')), [])
        panic = parse_expect('exit 127\n', 'p.expect')
        self.assertEqual(check_status(parse_ktap(PASS_LOG), run(33), panic),
                         ['QEMU status 33 (no test failed), expected 127 (as p.expect says)'])

    def test_verdict_problems_collects_everything(self):
        text = GOOD_LOG.replace('3 passed, 3 failed', '9 passed, 3 failed')
        exp = parse_expect('* any\nnot.there pass\n', 'e')
        problems = verdict_problems(parse_ktap(text), run(33), exp, 4)
        self.assertEqual(len(problems), 5, problems)
        self.assertTrue(problems[0].startswith('log: summary line says 9 passed'))
        self.assertTrue(problems[1].startswith('QEMU status 33'))
        self.assertTrue(problems[2].startswith('end marker says'))
        self.assertEqual(problems[3], 'expected test not.there did not run (e:2)')
        self.assertTrue(problems[4].startswith('expected 4 CPUs online'))

    def test_cpus(self):
        log = parse_ktap(GOOD_LOG)
        self.assertEqual(check_cpus(log, None), [])
        self.assertEqual(check_cpus(log, 2), [])
        self.assertEqual(check_cpus(log, 4), ['expected 4 CPUs online, the kernel brought up 2 of 2'])
        nosmp = parse_ktap(GOOD_LOG.replace('# smp: 2 of 2 CPUs online (x2apic)\r\n', ''))
        self.assertIn("no '# smp: N of M CPUs online' line", check_cpus(nosmp, 2)[0])


class Reporting(unittest.TestCase):
    def test_summary_block(self):
        log = parse_ktap(GOOD_LOG)
        out = format_summary(log, ['unexpected timeout: selftest.hang'], run(35), 'x.log')
        self.assertIn('tests: 8 leaves: 3 passed, 2 failed, 1 timed out, 2 skipped', out)
        self.assertIn('cpus: 2 of 2 online (x2apic)', out)
        self.assertIn('qemu status: 35 (some test failed)', out)
        self.assertIn('  not ok pmu.count.gp_instructions@cpu1-apic2 (pmu.count, line 23)\n'
                      '      # PMC0 = 0x0 after 1000 instructions', out)
        self.assertIn('  not ok selftest.hang (selftest, line 31) # TIMEOUT 2000ms', out)
        self.assertTrue(out.endswith('  unexpected timeout: selftest.hang\nverdict: FAIL (1 problem)'))
        self.assertTrue(format_summary(parse_ktap(PASS_LOG), []).endswith('verdict: PASS'))

    def test_summary_names_the_deviations(self):
        out = format_summary(parse_ktap(XFAIL_LOG), [], run(33))
        self.assertIn('tests: 5 leaves: 3 passed, 0 failed, 0 timed out, 0 skipped, 2 xfail', out)
        self.assertIn('deviations (known, reported as XFAIL):\n  %s on cpus 0-1: the emulated enabling '
                      'WRMSR is counted whatever CMASK says (source: Linux arch/x86/kvm/pmu.c, '
                      'kvm_pmu_trigger_event())' % XFAIL_ID, out)

    def test_xfail_is_an_ok_result_for_the_status(self):
        self.assertEqual(expected_statuses(parse_ktap(XFAIL_LOG))[0], {33})
        only_xfail = parse_ktap(XFAIL_LOG.replace('ok 1 pmu.count.gp_instructions', 'ok 1 pmu.count.gp_instructions # SKIP x')
                                .replace('ok 1 boot.cmdline', 'ok 1 boot.cmdline # SKIP x'))
        self.assertEqual(expected_statuses(only_xfail)[0], {33})
