#!/usr/bin/env python3
"""Unit tests for tools/pmutest-run: KTAP parsing, expect files, verdicts, JUnit
output and the QEMU command line; plus end-to-end runs against a tiny generated
Multiboot kernel when qemu-system-x86_64 is installed (skipped otherwise).

Run: python3 tools/test_pmutest_run.py   (last line: "runner: N passed, M failed, K skipped")
"""
import contextlib
import importlib.machinery
import importlib.util
import io
import json
import os
import shutil
import struct
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True          # keep tools/ free of __pycache__


def _load_runner():
    path = os.path.join(HERE, 'pmutest-run')
    loader = importlib.machinery.SourceFileLoader('pmutest_run', path)
    spec = importlib.util.spec_from_loader('pmutest_run', loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


pr = _load_runner()


def crlf(text):
    """The kernel ends lines with CR LF."""
    return text.replace('\n', '\r\n')


# The contract's example, completed so that it is consistent: 2 CPUs.
GOOD_LOG = crlf('''KTAP version 1
1..3
  KTAP version 1
  # Subtest: boot
  1..2
  ok 1 boot.cmdline
  # memory map: 0 usable ranges, expected at least 1
  not ok 2 boot.memory_map
not ok 1 boot
  KTAP version 1
  # Subtest: pmu.count
  1..2
    KTAP version 1
    # Subtest: cpu0-apic0
    1..2
    ok 1 pmu.count.gp_instructions # SKIP no architectural PMU (CPUID.0AH.EAX[7:0]=0)
    ok 2 pmu.count.fixed # SKIP no fixed counters
  ok 1 cpu0-apic0 # SKIP
    KTAP version 1
    # Subtest: cpu1-apic2
    1..2
    # PMC0 = 0x0 after 1000 instructions
    not ok 1 pmu.count.gp_instructions
    ok 2 pmu.count.fixed
  not ok 2 cpu1-apic2
not ok 2 pmu.count
  KTAP version 1
  # Subtest: selftest
  1..2
  ok 1 selftest.pass_check
  not ok 2 selftest.hang # TIMEOUT 2000ms
not ok 3 selftest
# smp: 2 of 2 CPUs online (x2apic)
# pmutest: 3 passed, 3 failed, 2 skipped
# pmutest: end exit=0x11
''')

ALL_SKIP_LOG = crlf('''KTAP version 1
1..1
  KTAP version 1
  # Subtest: pmu.caps
  1..2
  ok 1 pmu.caps.version # SKIP no PMU
  ok 2 pmu.caps.width # SKIP no PMU
ok 1 pmu.caps # SKIP
# smp: 4 of 4 CPUs online (xapic)
# pmutest: 0 passed, 0 failed, 2 skipped
# pmutest: end exit=0x26
''')

PASS_LOG = crlf('''KTAP version 1
1..2
ok 1 boot.cmdline
ok 2 smp.online # SKIP one CPU
# smp: 1 of 1 CPUs online (xapic)
# pmutest: 1 passed, 0 failed, 1 skipped
# pmutest: end exit=0x10
''')

# What OVMF + GRUB really put before the kernel's first line (screen
# clearing, colour changes, a bare CR), as seen on the serial port.
FIRMWARE_NOISE = ('\x1b[2J\x1b[01;01H\x1b[=3h\x1b[2J\x1b[01;01HBdsDxe: loading Boot0001 '
                  '"UEFI QEMU USB HARDDRIVE" from PciRoot(0x0)/Pci(0x1,0x0)\r\n'
                  '\x1b[0m\x1b[30m\x1b[47mWelcome to GRUB!\n\r\n'
                  '\r\x1b[0m\x1b[37m\x1b[40m\x1b[H\x1b[J    Booting `pmutest\'\n\r\n'
                  'ok 1 this is not a test result\r\n1..7\r\n'
                  '\rerror: no suitable video mode found.\n\r')


def errors_of(text):
    return pr.parse_ktap(text).errors


def any_error(errors, fragment):
    return any(fragment in e for e in errors)


class ParserGoodLogs(unittest.TestCase):
    def test_good_log_has_no_errors(self):
        log = pr.parse_ktap(GOOD_LOG)
        self.assertEqual(log.errors, [])
        self.assertTrue(log.started)
        self.assertEqual(log.summary, (3, 3, 2))
        self.assertEqual(log.summary_counts(), (3, 3, 2))
        self.assertEqual(log.counts(), {'pass': 3, 'fail': 2, 'skip': 2, 'timeout': 1})
        self.assertEqual(log.end_code, 0x11)
        self.assertEqual(log.end_status(), 35)
        self.assertEqual(log.smp, (2, 2, 'x2apic'))

    def test_leaf_identities_suites_and_outcomes(self):
        log = pr.parse_ktap(GOOD_LOG)
        got = [(lf.identity, lf.suite, lf.outcome, lf.reason) for lf in log.leaves]
        self.assertEqual(got, [
            ('boot.cmdline', 'boot', 'pass', ''),
            ('boot.memory_map', 'boot', 'fail', ''),
            ('pmu.count.gp_instructions@cpu0-apic0', 'pmu.count', 'skip',
             'no architectural PMU (CPUID.0AH.EAX[7:0]=0)'),
            ('pmu.count.fixed@cpu0-apic0', 'pmu.count', 'skip', 'no fixed counters'),
            ('pmu.count.gp_instructions@cpu1-apic2', 'pmu.count', 'fail', ''),
            ('pmu.count.fixed@cpu1-apic2', 'pmu.count', 'pass', ''),
            ('selftest.pass_check', 'selftest', 'pass', ''),
            ('selftest.hang', 'selftest', 'timeout', '2000ms'),
        ])
        self.assertEqual([lf.cpu for lf in log.leaves][2:6],
                         ['cpu0-apic0', 'cpu0-apic0', 'cpu1-apic2', 'cpu1-apic2'])

    def test_diagnostics_go_to_the_next_result_at_their_level(self):
        leaves = {lf.identity: lf for lf in pr.parse_ktap(GOOD_LOG).leaves}
        self.assertEqual(leaves['boot.memory_map'].diagnostics,
                         ['memory map: 0 usable ranges, expected at least 1'])
        self.assertEqual(leaves['pmu.count.gp_instructions@cpu1-apic2'].diagnostics,
                         ['PMC0 = 0x0 after 1000 instructions'])
        self.assertEqual(leaves['boot.cmdline'].diagnostics, [])
        self.assertEqual(leaves['pmu.count.fixed@cpu1-apic2'].diagnostics, [])

    def test_line_numbers_point_at_the_result(self):
        leaves = pr.parse_ktap(GOOD_LOG).leaves
        lines = GOOD_LOG.split('\r\n')
        for leaf in leaves:
            self.assertIn(leaf.name, lines[leaf.lineno - 1])

    def test_leading_noise_and_escape_sequences(self):
        log = pr.parse_ktap(FIRMWARE_NOISE + GOOD_LOG)
        self.assertEqual(log.errors, [])
        self.assertEqual(len(log.leaves), 8)
        self.assertEqual(log.leaves[0].name, 'boot.cmdline')

    def test_version_line_sharing_a_line_with_escapes(self):
        log = pr.parse_ktap('\x1b[0m\x1b[37m\x1b[40m\r' + PASS_LOG)
        self.assertEqual(log.errors, [])
        self.assertEqual(log.summary_counts(), (1, 0, 1))

    def test_lf_only_line_endings(self):
        log = pr.parse_ktap(PASS_LOG.replace('\r\n', '\n'))
        self.assertEqual(log.errors, [])
        self.assertEqual([lf.outcome for lf in log.leaves], ['pass', 'skip'])

    def test_top_level_leaves_belong_to_suite_pmutest(self):
        log = pr.parse_ktap(PASS_LOG)
        self.assertEqual([(lf.suite, lf.cpu) for lf in log.leaves],
                         [('pmutest', ''), ('pmutest', '')])

    def test_directives_are_case_insensitive_and_skip_wins_over_not_ok(self):
        text = PASS_LOG.replace('ok 1 boot.cmdline', 'not ok 1 boot.cmdline # skip later')
        text = text.replace('1 passed, 0 failed, 1 skipped', '0 passed, 0 failed, 2 skipped')
        log = pr.parse_ktap(text)
        self.assertEqual(log.errors, [])
        self.assertEqual((log.leaves[0].outcome, log.leaves[0].reason), ('skip', 'later'))

    def test_free_text_lines_are_ignored(self):
        text = PASS_LOG.replace('ok 2 smp', 'lapic: timer calibrated\r\nok 2 smp')
        self.assertEqual(errors_of(text), [])

    def test_cpu_block_regex_only_takes_cpu_names(self):
        text = crlf('''KTAP version 1
1..1
  KTAP version 1
  # Subtest: cpuid
  1..1
  ok 1 cpuid.leaf0a
ok 1 cpuid
# pmutest: 1 passed, 0 failed, 0 skipped
# pmutest: end exit=0x10
''')
        log = pr.parse_ktap(text)
        self.assertEqual(log.errors, [])
        self.assertEqual((log.leaves[0].identity, log.leaves[0].suite), ('cpuid.leaf0a', 'cpuid'))


class ParserBadLogs(unittest.TestCase):
    def test_empty_and_noise_only(self):
        for text in ('', FIRMWARE_NOISE):
            errors = errors_of(text)
            self.assertEqual(len(errors), 1, errors)
            self.assertIn("no 'KTAP version 1' line", errors[0])

    def test_truncated_inside_a_nested_block(self):
        cut = GOOD_LOG.index('    ok 2 pmu.count.fixed\r\n  not ok 2 cpu1-apic2')
        errors = errors_of(GOOD_LOG[:cut])
        self.assertTrue(any_error(errors, "log ends inside block 'cpu1-apic2'"), errors)
        self.assertTrue(any_error(errors, "log ends inside block 'pmu.count'"), errors)
        self.assertTrue(any_error(errors, 'top level planned 3 results, saw 1'), errors)
        self.assertTrue(any_error(errors, 'no \'# pmutest: N passed'), errors)
        self.assertTrue(any_error(errors, 'no end marker'), errors)
        self.assertEqual(len(pr.parse_ktap(GOOD_LOG[:cut]).leaves), 5)

    def test_truncated_mid_line(self):
        errors = errors_of(GOOD_LOG[:GOOD_LOG.index('end exit') + 3])
        self.assertEqual(errors, ["no end marker '# pmutest: end exit=0xNN' (truncated?)"])

    def test_top_plan_too_large(self):
        errors = errors_of(GOOD_LOG.replace('\r\n1..3\r\n', '\r\n1..4\r\n', 1))
        self.assertEqual(errors, ['end of log: top level planned 4 results, saw 3'])

    def test_nested_plan_too_small(self):
        text = GOOD_LOG.replace('  # Subtest: boot\r\n  1..2', '  # Subtest: boot\r\n  1..1')
        self.assertEqual(errors_of(text), ["line 9: block 'boot' planned 1 results, saw 2"])

    def test_missing_plan(self):
        text = GOOD_LOG.replace('  # Subtest: selftest\r\n  1..2\r\n', '  # Subtest: selftest\r\n')
        errors = errors_of(text)
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("block 'selftest' has no plan line", errors[0])

    def test_second_plan(self):
        text = PASS_LOG.replace('1..2\r\n', '1..2\r\n1..2\r\n')
        self.assertEqual(errors_of(text), ['line 3: second plan line in top level'])

    def test_repeated_number(self):
        text = GOOD_LOG.replace('  ok 1 selftest.pass_check', '  ok 2 selftest.pass_check')
        errors = errors_of(text)
        self.assertEqual(len(errors), 2, errors)
        self.assertTrue(errors[0].endswith('result number 2, expected 1'), errors)
        self.assertTrue(errors[1].endswith('result number 2, expected 3'), errors)

    def test_skipped_number_reported_once(self):
        text = PASS_LOG.replace('1..2', '1..3').replace('ok 2 smp.online', 'ok 3 smp.online')
        text = text.replace('ok 3 smp.online # SKIP one CPU\r\n',
                            'ok 3 smp.online # SKIP one CPU\r\nok 4 smp.ipi\r\n')
        text = text.replace('1 passed, 0 failed, 1 skipped', '2 passed, 0 failed, 1 skipped')
        self.assertEqual(errors_of(text), ['line 4: result number 3, expected 2'])

    def test_summary_mismatch(self):
        text = GOOD_LOG.replace('3 passed, 3 failed, 2 skipped', '3 passed, 2 failed, 3 skipped')
        errors = errors_of(text)
        self.assertEqual(errors, ['summary line says 3 passed, 2 failed, 3 skipped; the results say '
                                  '3 passed, 3 failed, 2 skipped'])

    def test_missing_summary(self):
        text = GOOD_LOG.replace('# pmutest: 3 passed, 3 failed, 2 skipped\r\n', '')
        self.assertEqual(errors_of(text),
                         ["no '# pmutest: N passed, M failed, K skipped' summary line"])

    def test_missing_end_marker(self):
        text = GOOD_LOG.replace('# pmutest: end exit=0x11\r\n', '')
        log = pr.parse_ktap(text)
        self.assertEqual(log.errors, ["no end marker '# pmutest: end exit=0xNN' (truncated?)"])
        self.assertIsNone(log.end_status())

    def test_output_after_end_marker(self):
        errors = errors_of(PASS_LOG + 'ok 3 late\r\nmore\r\n')
        self.assertEqual(errors, ["line 8: output after the end marker: 'ok 3 late'"])

    def test_odd_indentation(self):
        text = GOOD_LOG.replace('  ok 1 boot.cmdline', '   ok 1 boot.cmdline')
        errors = errors_of(text)
        self.assertTrue(any_error(errors, 'line 6: indentation of 3 spaces'), errors)

    def test_result_deeper_than_open_blocks(self):
        text = PASS_LOG.replace('ok 1 boot.cmdline', '  ok 1 boot.cmdline')
        errors = errors_of(text)
        self.assertTrue(any_error(errors, 'line 3: result at nesting level 1 deeper'), errors)

    def test_parent_result_with_wrong_name(self):
        text = GOOD_LOG.replace('not ok 1 boot\r\n', 'not ok 1 bootx\r\n')
        self.assertEqual(errors_of(text), ["line 9: result 'bootx' closes subtest 'boot'"])

    def test_nested_block_without_its_result(self):
        text = GOOD_LOG.replace('  ok 1 cpu0-apic0 # SKIP\r\n', '')
        errors = errors_of(text)
        self.assertTrue(any_error(errors, "block 'cpu0-apic0' ended without its own result line"),
                        errors)
        self.assertTrue(any_error(errors, "block 'pmu.count' planned 2 results, saw 1"), errors)

    def test_two_levels_closed_by_one_result(self):
        text = GOOD_LOG.replace('  not ok 2 cpu1-apic2\r\n', '')
        errors = errors_of(text)
        self.assertTrue(any_error(errors, "block 'cpu1-apic2' has no result line of its own"),
                        errors)

    def test_second_top_level_version_line(self):
        errors = errors_of(GOOD_LOG.replace('# smp:', 'KTAP version 1\r\n# smp:'))
        self.assertTrue(any_error(errors, 'second top-level version line'), errors)

    def test_version_line_too_deep(self):
        errors = errors_of(PASS_LOG.replace('ok 2 smp', '    KTAP version 1\r\nok 2 smp'))
        self.assertTrue(any_error(errors, 'version line at nesting level 2'), errors)

    def test_result_without_name(self):
        errors = errors_of(PASS_LOG.replace('ok 1 boot.cmdline', 'ok 1'))
        self.assertEqual(errors, ['line 3: result 1 has no test name'])


class ExpectFiles(unittest.TestCase):
    def test_parse(self):
        exp = pr.parse_expect('# header\n\nboot.* pass\npmu.*@cpu1-* any  # trailing\n'
                              'cpus 4\nexit 0x23\nsummary 1 2 3\n', 'x.expect')
        self.assertEqual([(r.glob, r.outcome, r.lineno) for r in exp.rules],
                         [('boot.*', 'pass', 3), ('pmu.*@cpu1-*', 'any', 4)])
        self.assertEqual((exp.cpus, exp.exit, exp.summary, exp.source), (4, 35, (1, 2, 3), 'x.expect'))

    def test_parse_errors(self):
        for text, fragment in (('boot.* passes\n', "outcome 'passes'"),
                               ('boot.*\n', 'cannot parse'),
                               ('a b c\n', 'cannot parse'),
                               ('cpus four\n', 'cpus must be a number'),
                               ('cpus 0\n', 'out of range'),
                               ('exit 256\n', 'out of range'),
                               ('summary 1 2\n', 'cannot parse')):
            with self.assertRaises(pr.ExpectError) as ctx:
                pr.parse_expect('# c\n' + text, 'e.expect')
            self.assertIn('e.expect:2: ', str(ctx.exception))
            self.assertIn(fragment, str(ctx.exception))

    def check(self, text, log_text=GOOD_LOG):
        return pr.check_expectations(pr.parse_ktap(log_text), pr.parse_expect(text, 'e'))

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
        self.assertEqual(pr.check_expectations(pr.parse_ktap(PASS_LOG), pr.Expectations()), [])

    def test_fail_does_not_accept_timeout(self):
        self.assertEqual(self.check('* any\nselftest.hang fail\n'),
                         ['selftest.hang: expected fail (e:2), got timeout'])

    def test_summary_line(self):
        self.assertEqual(self.check('* any\nsummary 3 2 3\n'),
                         ['expected summary 3 passed, 2 failed, 3 skipped; got 3, 3, 2'])

    def test_cpus(self):
        log = pr.parse_ktap(GOOD_LOG)
        self.assertEqual(pr.check_cpus(log, None), [])
        self.assertEqual(pr.check_cpus(log, 2), [])
        self.assertEqual(pr.check_cpus(log, 4), ['expected 4 CPUs online, the kernel brought up 2 of 2'])
        nosmp = pr.parse_ktap(GOOD_LOG.replace('# smp: 2 of 2 CPUs online (x2apic)\r\n', ''))
        self.assertIn("no '# smp: N of M CPUs online' line", pr.check_cpus(nosmp, 2)[0])

    def test_shipped_expect_files_parse(self):
        root = os.path.join(os.path.dirname(HERE), 'tests', 'expect')
        names = sorted(n for n in os.listdir(root) if n.endswith('.expect'))
        self.assertIn('tcg.expect', names)
        self.assertIn('selftest.expect', names)
        for name in names:
            with open(os.path.join(root, name)) as f:
                exp = pr.parse_expect(f.read(), name)
            self.assertTrue(exp.rules, name)
        with open(os.path.join(root, 'selftest.expect')) as f:
            sel = pr.parse_expect(f.read(), 'selftest.expect')
        self.assertEqual(sel.exit, 35)
        wanted = {r.glob: r.outcome for r in sel.rules}
        for name in ('selftest.gp', 'selftest.pf', 'selftest.ud', 'selftest.de',
                     'selftest.smp.exception_on_each_cpu', 'selftest.check_fails', 'selftest.no_check'):
            self.assertEqual(wanted.get(name), 'fail', name)
        self.assertEqual(wanted.get('selftest.hang'), 'timeout')
        self.assertEqual(wanted.get('selftest.zz_lost_cpu.ap_hang_irqs_off'), 'timeout')
        self.assertEqual(wanted.get('selftest.pass_check'), 'pass')


def run(status, stderr='', **kw):
    return pr.RunResult(status=status, stderr=stderr, **kw)


class Status(unittest.TestCase):
    none = pr.Expectations()

    def test_expected_statuses(self):
        self.assertEqual(pr.expected_statuses(pr.parse_ktap(GOOD_LOG))[0], {35})
        self.assertEqual(pr.expected_statuses(pr.parse_ktap(PASS_LOG))[0], {33})
        self.assertEqual(pr.expected_statuses(pr.parse_ktap(ALL_SKIP_LOG))[0], {77})
        self.assertEqual(pr.expected_statuses(pr.parse_ktap(''))[0], {33, 77})

    def test_stored_log_uses_end_marker(self):
        for text in (GOOD_LOG, PASS_LOG, ALL_SKIP_LOG):
            self.assertEqual(pr.check_status(pr.parse_ktap(text), None, self.none), [])
        lying = pr.parse_ktap(GOOD_LOG.replace('exit=0x11', 'exit=0x10'))
        self.assertEqual(pr.check_status(lying, None, self.none),
                         ['end marker gives QEMU status 33 (no test failed), expected 35 (a test failed)'])
        skip_as_pass = pr.parse_ktap(ALL_SKIP_LOG.replace('exit=0x26', 'exit=0x10'))
        self.assertEqual(pr.check_status(skip_as_pass, None, self.none),
                         ['end marker gives QEMU status 33 (no test failed), expected 77 (every test skipped)'])

    def test_qemu_status_consistent(self):
        self.assertEqual(pr.check_status(pr.parse_ktap(GOOD_LOG), run(35), self.none), [])
        self.assertEqual(pr.check_status(pr.parse_ktap(PASS_LOG), run(33), self.none), [])
        self.assertEqual(pr.check_status(pr.parse_ktap(ALL_SKIP_LOG), run(77), self.none), [])

    def test_qemu_status_disagrees_with_log_and_marker(self):
        problems = pr.check_status(pr.parse_ktap(GOOD_LOG), run(33), self.none)
        self.assertEqual(problems, [
            'QEMU status 33 (no test failed), expected 35 (a test failed)',
            'end marker says exit=0x11 (status 35) but QEMU exited with 33'])

    def test_special_statuses(self):
        log = pr.parse_ktap(GOOD_LOG[:GOOD_LOG.index('# smp')])
        self.assertEqual(pr.check_status(log, run(127), self.none),
                         ['QEMU status 127 (kernel panic), expected 35 (a test failed)'])
        self.assertEqual(pr.check_status(log, run(0), self.none),
                         ['QEMU status 0 (triple fault or reset under -no-reboot), expected 35 (a test failed)'])
        self.assertEqual(pr.check_status(log, run(1, 'warning: x\nqemu: could not load kernel\n'), self.none),
                         ["QEMU status 1 (QEMU's own error), expected 35 (a test failed): "
                          'qemu: could not load kernel'])
        self.assertEqual(pr.check_status(log, run(-6), self.none),
                         ['QEMU status -6 (killed by signal 6), expected 35 (a test failed)'])

    def test_status_zero_never_passes_even_with_empty_log(self):
        self.assertEqual(len(pr.check_status(pr.parse_ktap(''), run(0), self.none)), 1)

    def test_timeout_and_linger(self):
        log = pr.parse_ktap(PASS_LOG)
        self.assertEqual(pr.check_status(log, pr.RunResult(timed_out=True), self.none, 120),
                         ['timeout: QEMU was still running after 120 s and was killed'])
        self.assertIn('after the end marker',
                      pr.check_status(log, pr.RunResult(stopped=True), self.none)[0])

    def test_expect_exit_overrides(self):
        exp = pr.parse_expect('exit 35\n', 'sel.expect')
        self.assertEqual(pr.check_status(pr.parse_ktap(GOOD_LOG), run(35), exp), [])
        self.assertEqual(pr.check_status(pr.parse_ktap(PASS_LOG), None,
                                         pr.parse_expect('exit 33\n')), [])
        panic = pr.parse_expect('exit 127\n', 'p.expect')
        self.assertEqual(pr.check_status(pr.parse_ktap(PASS_LOG), run(33), panic),
                         ['QEMU status 33 (no test failed), expected 127 (as p.expect says)'])

    def test_verdict_problems_collects_everything(self):
        text = GOOD_LOG.replace('3 passed, 3 failed', '9 passed, 3 failed')
        exp = pr.parse_expect('* any\nnot.there pass\n', 'e')
        problems = pr.verdict_problems(pr.parse_ktap(text), run(33), exp, 4)
        self.assertEqual(len(problems), 5, problems)
        self.assertTrue(problems[0].startswith('log: summary line says 9 passed'))
        self.assertTrue(problems[1].startswith('QEMU status 33'))
        self.assertTrue(problems[2].startswith('end marker says'))
        self.assertEqual(problems[3], 'expected test not.there did not run (e:2)')
        self.assertTrue(problems[4].startswith('expected 4 CPUs online'))


class Reporting(unittest.TestCase):
    def test_summary_block(self):
        log = pr.parse_ktap(GOOD_LOG)
        out = pr.format_summary(log, ['unexpected timeout: selftest.hang'], run(35), 'x.log')
        self.assertIn('tests: 8 leaves: 3 passed, 2 failed, 1 timed out, 2 skipped', out)
        self.assertIn('cpus: 2 of 2 online (x2apic)', out)
        self.assertIn('qemu status: 35 (some test failed)', out)
        self.assertIn('  not ok pmu.count.gp_instructions@cpu1-apic2 (pmu.count, line 23)\n'
                      '      # PMC0 = 0x0 after 1000 instructions', out)
        self.assertIn('  not ok selftest.hang (selftest, line 31) # TIMEOUT 2000ms', out)
        self.assertTrue(out.endswith('  unexpected timeout: selftest.hang\nverdict: FAIL (1 problem)'))
        self.assertTrue(pr.format_summary(pr.parse_ktap(PASS_LOG), []).endswith('verdict: PASS'))

    def junit(self, text, problems=(), exp=None):
        xml = pr.junit_xml(pr.parse_ktap(text), list(problems), text, exp)
        return ET.fromstring(xml)

    def test_junit_round_trip(self):
        exp = pr.parse_expect('* any\n', 'e')
        root = self.junit(FIRMWARE_NOISE + GOOD_LOG, ['log: x'], exp)
        self.assertEqual(root.tag, 'testsuites')
        suite = root.find('testsuite')
        self.assertEqual((suite.get('tests'), suite.get('failures'), suite.get('skipped')),
                         ('9', '4', '2'))
        cases = suite.findall('testcase')
        self.assertEqual([(c.get('classname'), c.get('name')) for c in cases][3:5],
                         [('pmu.count', 'pmu.count.fixed@cpu0-apic0'),
                          ('pmu.count', 'pmu.count.gp_instructions@cpu1-apic2')])
        by_name = {c.get('name'): c for c in cases}
        self.assertEqual(by_name['pmu.count.fixed@cpu0-apic0'].find('skipped').get('message'),
                         'no fixed counters')
        fail = by_name['pmu.count.gp_instructions@cpu1-apic2'].find('failure')
        self.assertEqual(fail.text, 'PMC0 = 0x0 after 1000 instructions')
        self.assertEqual(fail.get('message'), 'not ok (expected by e:1)')
        hang = by_name['selftest.hang'].find('failure')
        self.assertEqual((hang.get('type'), hang.get('message')),
                         ('timeout', 'TIMEOUT 2000ms (expected by e:1)'))
        self.assertEqual(list(by_name['boot.cmdline']), [])
        verdict = by_name['verdict']
        self.assertEqual((verdict.get('classname'), verdict.find('failure').text),
                         ('pmutest', 'log: x'))
        out = suite.find('system-out').text
        self.assertIn('Welcome to GRUB!', out)
        self.assertIn('# pmutest: end exit=0x11', out)
        self.assertNotIn('\x1b', out)

    def test_junit_clean_run_has_passing_verdict(self):
        root = self.junit(PASS_LOG)
        suite = root.find('testsuite')
        self.assertEqual((suite.get('tests'), suite.get('failures'), suite.get('skipped')),
                         ('3', '0', '1'))
        verdict = [c for c in suite.findall('testcase') if c.get('name') == 'verdict'][0]
        self.assertEqual(list(verdict), [])

    def test_junit_survives_control_bytes_and_markup(self):
        text = PASS_LOG.replace('ok 1 boot.cmdline', '# <&>"\x01\x07\r\nnot ok 1 boot.cmdline')
        text = text.replace('1 passed, 0 failed', '0 passed, 1 failed')
        root = self.junit('\x00\x1b[2J' + text)
        fail = root.find('testsuite').find('testcase').find('failure')
        self.assertEqual(fail.text, '<&>"')


class QemuCommand(unittest.TestCase):
    OVMF_PAIR = {'code': '/fw/OVMF_CODE.fd', 'vars': '/tmp/w/OVMF_VARS.fd'}

    def cfg(self, **kw):
        base = dict(qemu='qemu-system-x86_64', serial_log='/tmp/s.log', smp=4, memory='512M',
                    machine='q35')
        base.update(kw)
        return pr.QemuConfig(**base)

    def test_exact_kernel_tcg_bios(self):
        cmd = pr.build_qemu_command(self.cfg(kernel='build/pmutest.elf', append='tests=pmu.*',
                                             accel='tcg'))
        self.assertEqual(cmd, [
            'qemu-system-x86_64', '-nodefaults', '-no-reboot', '-display', 'none',
            '-machine', 'q35', '-m', '512M', '-smp', '4',
            '-accel', 'tcg,thread=multi', '-cpu', 'max',
            '-kernel', 'build/pmutest.elf', '-append', 'tests=pmu.*',
            '-serial', 'file:/tmp/s.log', '-device', 'isa-debug-exit,iobase=0xf4,iosize=0x04'])

    def test_every_configuration(self):
        images = {'kernel': dict(kernel='k.elf'), 'cd': dict(iso='p.iso', boot='cd'),
                  'usb': dict(iso='p.iso', boot='usb')}
        for image, ikw in images.items():
            for fw in ('bios', 'uefi'):
                for accel in ('kvm', 'tcg'):
                    with self.subTest(image=image, firmware=fw, accel=accel):
                        cfg = self.cfg(firmware=fw, accel=accel, ovmf=self.OVMF_PAIR, **ikw)
                        cmd = pr.build_qemu_command(cfg)
                        joined = ' '.join(cmd)
                        for always in ('-nodefaults', '-no-reboot', '-display none',
                                       '-serial file:/tmp/s.log', '-m 512M', '-smp 4',
                                       '-machine q35',
                                       '-device isa-debug-exit,iobase=0xf4,iosize=0x04'):
                            self.assertIn(always, joined)
                        if accel == 'kvm':
                            self.assertIn('-accel kvm -cpu host', joined)
                            self.assertNotIn('tcg', joined)
                        else:
                            self.assertIn('-accel tcg,thread=multi -cpu max', joined)
                            self.assertNotIn('kvm', joined)
                        pflash = ('-drive if=pflash,format=raw,unit=0,readonly=on,file=/fw/OVMF_CODE.fd '
                                  '-drive if=pflash,format=raw,unit=1,file=/tmp/w/OVMF_VARS.fd')
                        self.assertEqual(pflash in joined, fw == 'uefi')
                        self.assertEqual('-kernel k.elf' in joined, image == 'kernel')
                        self.assertEqual('-cdrom p.iso' in joined, image == 'cd')
                        usb = ('-device qemu-xhci -drive if=none,id=stick,format=raw,file=p.iso,'
                               'snapshot=on -device usb-storage,drive=stick')
                        self.assertEqual(usb in joined, image == 'usb')
                        self.assertNotIn('-append', cmd)
                        self.assertEqual(cmd.count('-cpu'), 1)

    def test_unified_ovmf_as_bios(self):
        cmd = pr.build_qemu_command(self.cfg(iso='p.iso', firmware='uefi',
                                             ovmf={'bios': '/usr/share/ovmf/OVMF.fd'}))
        self.assertIn(['-bios', '/usr/share/ovmf/OVMF.fd'],
                      [cmd[i:i + 2] for i in range(len(cmd))])
        self.assertNotIn('if=pflash', ' '.join(cmd))

    def test_bios_adds_no_firmware(self):
        cmd = pr.build_qemu_command(self.cfg(iso='p.iso', ovmf=self.OVMF_PAIR))
        self.assertNotIn('-bios', cmd)
        self.assertNotIn('pflash', ' '.join(cmd))

    def test_cpu_model_suffix_machine_and_extra(self):
        cmd = pr.build_qemu_command(self.cfg(kernel='k', accel='kvm', cpu_suffix=',-arch-capabilities',
                                             machine='pc', smp=2, memory='1G',
                                             extra=('-d', 'int')))
        self.assertEqual(cmd[cmd.index('-cpu') + 1], 'host,-arch-capabilities')
        self.assertEqual(cmd[cmd.index('-machine') + 1], 'pc')
        self.assertEqual(cmd[cmd.index('-smp') + 1], '2')
        self.assertEqual(cmd[cmd.index('-m') + 1], '1G')
        self.assertEqual(cmd[-2:], ['-d', 'int'])
        cmd = pr.build_qemu_command(self.cfg(kernel='k', accel='tcg', cpu='EPYC'))
        self.assertEqual(cmd[cmd.index('-cpu') + 1], 'EPYC')

    def test_commas_in_drive_paths_are_doubled(self):
        cmd = pr.build_qemu_command(self.cfg(iso='/a,b/p.iso', boot='usb'))
        self.assertIn('if=none,id=stick,format=raw,file=/a,,b/p.iso,snapshot=on', cmd)
        cmd = pr.build_qemu_command(self.cfg(iso='/a,b/p.iso', boot='cd'))
        self.assertEqual(cmd[cmd.index('-cdrom') + 1], '/a,b/p.iso')

    def test_find_ovmf(self):
        def only(*present):
            return lambda p: p in present
        self.assertEqual(pr.find_ovmf(only('/usr/share/OVMF/OVMF_CODE.fd', '/usr/share/OVMF/OVMF_VARS.fd',
                                           '/usr/share/ovmf/OVMF.fd')),
                         {'code': '/usr/share/OVMF/OVMF_CODE.fd', 'vars': '/usr/share/OVMF/OVMF_VARS.fd'})
        self.assertEqual(pr.find_ovmf(only('/usr/share/OVMF/OVMF_CODE.fd', '/usr/share/ovmf/OVMF.fd')),
                         {'bios': '/usr/share/ovmf/OVMF.fd'})
        self.assertIsNone(pr.find_ovmf(only()))


class FakeRunner:
    """Stands in for run_qemu: writes a canned serial log, records calls."""

    def __init__(self, *results):
        self.results, self.calls = list(results), []

    def __call__(self, cmd, log_path, timeout, echo=False, stop_when=None):
        self.calls.append((cmd, timeout))
        text, result = self.results.pop(0)
        with open(log_path, 'w') as f:
            f.write(text)
        if stop_when is not None and stop_when(text, 1.0):
            return pr.RunResult(stopped=True)
        return result


class AccelChoice(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='pmutest-runner-test-')
        self.kernel = os.path.join(self.tmp, 'k.elf')
        with open(self.kernel, 'wb') as f:
            f.write(b'\0' * 16)
        self.cache = os.path.join(self.tmp, 'sub', '.kvm-probe')
        self.cfg = pr.QemuConfig(qemu=sys.executable, kernel=self.kernel, append='tests=boot.*',
                                 serial_log=os.path.join(self.tmp, 's.log'))

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_explicit_choices_do_not_probe(self):
        runner = FakeRunner()
        self.assertEqual(pr.choose_accel('tcg', self.cfg, self.cache, runner, True)[:2], ('tcg', ''))
        self.assertEqual(pr.choose_accel('kvm', self.cfg, self.cache, runner, False)[:2], ('kvm', ''))
        self.assertEqual(runner.calls, [])

    def test_no_dev_kvm(self):
        runner = FakeRunner()
        accel, suffix, why = pr.choose_accel('auto', self.cfg, self.cache, runner, False)
        self.assertEqual((accel, suffix), ('tcg', ''))
        self.assertIn('/dev/kvm', why)
        self.assertEqual(runner.calls, [])

    def test_probe_success_is_cached(self):
        runner = FakeRunner((PASS_LOG, pr.RunResult(status=33)))
        accel, suffix, why = pr.choose_accel('auto', self.cfg, self.cache, runner, True)
        self.assertEqual((accel, suffix), ('kvm', ''))
        self.assertIn('probed', why)
        cmd, timeout = runner.calls[0]
        self.assertEqual(timeout, 30)
        self.assertEqual(cmd[cmd.index('-append') + 1], 'tests=-*')
        self.assertEqual(cmd[cmd.index('-accel') + 1], 'kvm')
        with open(self.cache) as f:
            cached = json.load(f)
        self.assertEqual(list(cached.values()), [{'kvm': True, 'cpu_suffix': '',
                                                  'reason': 'probe boot reached its end marker'}])
        accel, _, why = pr.choose_accel('auto', self.cfg, self.cache, FakeRunner(), True)
        self.assertEqual(accel, 'kvm')
        self.assertIn('cached', why)

    def test_cache_key_follows_the_image_mtime(self):
        key = pr.probe_key(self.cfg.qemu, self.kernel)
        st = os.stat(self.kernel)
        os.utime(self.kernel, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
        self.assertNotEqual(pr.probe_key(self.cfg.qemu, self.kernel), key)

    def test_probe_retries_with_msr_workaround(self):
        runner = FakeRunner(('', pr.RunResult(status=-6, stderr='error: failed to set MSR 0x10a to 0x1\n')),
                            (PASS_LOG, pr.RunResult(status=33)))
        accel, suffix, _ = pr.choose_accel('auto', self.cfg, self.cache, runner, True)
        self.assertEqual((accel, suffix), ('kvm', ',-arch-capabilities'))
        self.assertEqual(runner.calls[1][0][runner.calls[1][0].index('-cpu') + 1],
                         'host,-arch-capabilities')
        self.assertEqual(pr.choose_accel('kvm', self.cfg, self.cache, FakeRunner(), True)[1],
                         ',-arch-capabilities')

    def test_probe_failure_falls_back_to_tcg(self):
        runner = FakeRunner(('', pr.RunResult(status=1, stderr='Could not access KVM kernel module\n')))
        accel, _, why = pr.choose_accel('auto', self.cfg, self.cache, runner, True)
        self.assertEqual(accel, 'tcg')
        self.assertIn('Could not access KVM kernel module', why)
        runner = FakeRunner(('KTAP version 1\r\n', pr.RunResult(timed_out=True)))
        other = os.path.join(self.tmp, 'other-cache')
        accel, _, why = pr.choose_accel('auto', self.cfg, other, runner, True)
        self.assertEqual(accel, 'tcg')
        self.assertIn('did not finish in 30 s', why)

    def test_iso_probe_needs_only_the_ktap_header(self):
        cfg = pr.QemuConfig(qemu=sys.executable, iso=self.kernel, serial_log='x')
        runner = FakeRunner(('GRUB\r\nKTAP version 1\r\n1..9\r\n', pr.RunResult(timed_out=True)))
        self.assertEqual(pr.choose_accel('auto', cfg, self.cache, runner, True)[0], 'kvm')
        self.assertNotIn('-append', runner.calls[0][0])


class _TmpDirCase(unittest.TestCase):
    """A scratch directory and an in-process main() with captured output."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='pmutest-runner-test-')

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, 'w', newline='') as f:
            f.write(text)
        return path

    def main(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = pr.main(list(argv))
            except SystemExit as e:
                rc = e.code
        return rc, out.getvalue() + err.getvalue()


class CommandLine(_TmpDirCase):
    def test_usage_errors_exit_2(self):
        self.assertEqual(self.main()[0], 2)
        self.assertEqual(self.main('--iso', 'x.iso', '--append', 'a')[0], 2)
        self.assertEqual(self.main('--kernel', 'k', '--log', 'l')[0], 2)
        self.assertEqual(self.main('--kernel', 'k', '--smp', '0')[0], 2)
        self.assertEqual(self.main('--kernel', 'k', '--accel', 'hvf')[0], 2)

    def test_missing_qemu_names_the_package(self):
        rc, out = self.main('--kernel', self.write('k', ''), '--qemu', 'no-such-qemu-binary')
        self.assertEqual(rc, 2)
        self.assertIn('qemu-system-x86', out)

    def test_log_mode_verdicts(self):
        good = self.write('good.log', GOOD_LOG)
        rc, out = self.main('--log', good, '--quiet')
        self.assertEqual(rc, 1)
        self.assertIn('unexpected fail: boot.memory_map', out)
        exp = self.write('e.expect', '* any\nexit 35\ncpus 2\n')
        rc, out = self.main('--log', good, '--expect', exp)
        self.assertEqual(rc, 0, out)
        self.assertIn('verdict: PASS', out)
        rc, out = self.main('--log', good, '--expect', exp, '--cpus', '3')
        self.assertEqual(rc, 1)
        self.assertIn('expected 3 CPUs online, the kernel brought up 2 of 2', out)
        self.assertEqual(self.main('--log', self.write('p.log', PASS_LOG))[0], 0)
        rc, out = self.main('--log', self.write('t.log', PASS_LOG[:-30]))
        self.assertEqual(rc, 1)
        self.assertIn('log: no end marker', out)

    def test_bad_or_missing_expect_file_exit_2(self):
        good = self.write('good.log', GOOD_LOG)
        self.assertEqual(self.main('--log', good, '--expect', self.write('b', 'x y z\n'))[0], 2)
        self.assertEqual(self.main('--log', good, '--expect', os.path.join(self.tmp, 'none'))[0], 2)
        self.assertEqual(self.main('--log', os.path.join(self.tmp, 'none.log'))[0], 2)

    def test_junit_file_written(self):
        junit = os.path.join(self.tmp, 'j.xml')
        rc, _ = self.main('--log', self.write('p.log', PASS_LOG), '--junit', junit)
        self.assertEqual(rc, 0)
        suite = ET.parse(junit).getroot().find('testsuite')
        self.assertEqual(suite.get('tests'), '3')

    def test_expected_cpu_count_precedence(self):
        exp4 = pr.parse_expect('cpus 4\n')
        none = pr.Expectations()
        args = pr.parse_args(['--kernel', 'k', '--smp', '8'])
        self.assertEqual(pr.expected_cpu_count(args, none), 8)
        self.assertEqual(pr.expected_cpu_count(args, exp4), 4)
        args = pr.parse_args(['--kernel', 'k', '--smp', '8', '--cpus', '2'])
        self.assertEqual(pr.expected_cpu_count(args, exp4), 2)
        args = pr.parse_args(['--kernel', 'k', '--no-cpu-check'])
        self.assertIsNone(pr.expected_cpu_count(args, none))
        args = pr.parse_args(['--log', 'l'])
        self.assertIsNone(pr.expected_cpu_count(args, none))


# ------------------------------------------------------------ end to end

def fake_kernel(serial_text, exit_code=None):
    """A Multiboot 1 image (a.out kludge, spec section 3.1.3) whose 32-bit entry
    writes serial_text to COM1 and exit_code to isa-debug-exit, then halts."""
    base, msg = 0x100000, serial_text.encode()
    code = b'\xbe%s\xb9%s' % (b'MSGA', struct.pack('<I', len(msg)))   # mov esi, msg; mov ecx, len
    code += b'\x66\xba\xf8\x03\xac\xee\xe2\xfc'     # mov dx, 0x3f8; 1: lodsb; out dx, al; loop 1b
    if exit_code is not None:                      # mov dx, 0xf4; mov eax, code; out dx, eax
        code += b'\x66\xba\xf4\x00\xb8' + struct.pack('<I', exit_code) + b'\xef'
    code += b'\xfa\xf4\xeb\xfd'                     # cli; 2: hlt; jmp 2b
    code = code.replace(b'MSGA', struct.pack('<I', base + 32 + len(code)))
    size = 32 + len(code) + len(msg)
    magic, flags = 0x1BADB002, 1 << 16              # flag 16: the address fields are valid
    header = struct.pack('<8I', magic, flags, -(magic + flags) & 0xffffffff,
                         base, base, base + size, 0, base + 32)
    return header + code + msg


@unittest.skipUnless(shutil.which('qemu-system-x86_64'), 'qemu-system-x86_64 not installed')
class EndToEnd(_TmpDirCase):
    def boot(self, serial_text, exit_code, *extra):
        kernel = os.path.join(self.tmp, 'fake.bin')
        with open(kernel, 'wb') as f:
            f.write(fake_kernel(serial_text, exit_code))
        log = os.path.join(self.tmp, 'serial.log')
        rc, out = self.main('--kernel', kernel, '--accel', 'tcg', '--smp', '1', '--memory', '64M',
                            '--log-file', log, *extra)
        with open(log, newline='') as f:
            return rc, out, f.read()

    def test_passing_kernel(self):
        rc, out, log = self.boot(PASS_LOG, 0x10)
        self.assertEqual(rc, 0, out)
        self.assertEqual(log, PASS_LOG)
        self.assertIn('\nok 1 boot.cmdline\n', out)       # streamed, CR removed
        self.assertIn('qemu status: 33 (no test failed)', out)

    def test_quiet_does_not_stream(self):
        rc, out, _ = self.boot(PASS_LOG, 0x10, '--quiet')
        self.assertEqual(rc, 0, out)
        self.assertNotIn('ok 1 boot.cmdline', out)

    def test_failing_kernel_with_expect_file(self):
        exp = self.write('e.expect', '* any\nexit 35\ncpus 2\n')
        rc, out, _ = self.boot(GOOD_LOG, 0x11, '--expect', exp, '--quiet')
        self.assertEqual(rc, 0, out)
        rc, out, _ = self.boot(GOOD_LOG, 0x11, '--quiet')
        self.assertEqual(rc, 1)
        self.assertIn('expected 1 CPUs online, the kernel brought up 2 of 2', out)

    def test_exit_code_disagreeing_with_end_marker(self):
        rc, out, _ = self.boot(PASS_LOG, 0x11, '--quiet')
        self.assertEqual(rc, 1)
        self.assertIn('QEMU status 35 (some test failed), expected 33 (no test failed)', out)
        self.assertIn('end marker says exit=0x10 (status 33) but QEMU exited with 35', out)

    def test_hang_is_killed_at_timeout(self):
        rc, out, log = self.boot(PASS_LOG[:40], None, '--timeout', '2', '--quiet')
        self.assertEqual(rc, 1)
        self.assertIn('timeout: QEMU was still running after 2 s and was killed', out)
        self.assertIn('log: no end marker', out)
        self.assertEqual(log, PASS_LOG[:40])
        self.assertNotIn('terminating on signal', out)


def main():
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    print('runner: %d passed, %d failed, %d skipped' % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
