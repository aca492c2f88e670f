"""pmutest.ktap: the KTAP parser on good logs, on every structural problem
it must name, and on XFAIL results with their deviations block."""
import unittest

from fixtures import ALL_SKIP_LOG, FIRMWARE_NOISE, GOOD_LOG, PASS_LOG, XFAIL_ID, XFAIL_LOG, crlf
from pmutest.ktap import diagnostics_before_version, end_marker_seen, parse_cpu_list, parse_ktap


def errors_of(text):
    return parse_ktap(text).errors


def any_error(errors, fragment):
    return any(fragment in e for e in errors)


class ParserGoodLogs(unittest.TestCase):
    def test_good_log_has_no_errors(self):
        log = parse_ktap(GOOD_LOG)
        self.assertEqual(log.errors, [])
        self.assertTrue(log.started)
        self.assertEqual(log.summary, (3, 3, 2, None))
        self.assertEqual(log.summary_counts(), (3, 3, 2, 0))
        self.assertEqual(log.counts(), {'pass': 3, 'fail': 2, 'skip': 2, 'timeout': 1, 'xfail': 0})
        self.assertEqual(log.end_code, 0x11)
        self.assertEqual(log.end_status(), 35)
        self.assertEqual(log.smp, (2, 2, 'x2apic'))

    def test_leaf_identities_suites_and_outcomes(self):
        log = parse_ktap(GOOD_LOG)
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
        leaves = {lf.identity: lf for lf in parse_ktap(GOOD_LOG).leaves}
        self.assertEqual(leaves['boot.memory_map'].diagnostics,
                         ['memory map: 0 usable ranges, expected at least 1'])
        self.assertEqual(leaves['pmu.count.gp_instructions@cpu1-apic2'].diagnostics,
                         ['PMC0 = 0x0 after 1000 instructions'])
        self.assertEqual(leaves['boot.cmdline'].diagnostics, [])
        self.assertEqual(leaves['pmu.count.fixed@cpu1-apic2'].diagnostics, [])

    def test_line_numbers_point_at_the_result(self):
        leaves = parse_ktap(GOOD_LOG).leaves
        lines = GOOD_LOG.split('\r\n')
        for leaf in leaves:
            self.assertIn(leaf.name, lines[leaf.lineno - 1])

    def test_leading_noise_and_escape_sequences(self):
        log = parse_ktap(FIRMWARE_NOISE + GOOD_LOG)
        self.assertEqual(log.errors, [])
        self.assertEqual(len(log.leaves), 8)
        self.assertEqual(log.leaves[0].name, 'boot.cmdline')

    def test_version_line_sharing_a_line_with_escapes(self):
        log = parse_ktap('\x1b[0m\x1b[37m\x1b[40m\r' + PASS_LOG)
        self.assertEqual(log.errors, [])
        self.assertEqual(log.summary_counts(), (1, 0, 1, 0))

    def test_crlf_line_endings(self):
        log = parse_ktap(crlf(PASS_LOG))
        self.assertEqual(log.errors, [])
        self.assertEqual([lf.outcome for lf in log.leaves], ['pass', 'skip'])

    def test_top_level_leaves_belong_to_suite_pmutest(self):
        log = parse_ktap(PASS_LOG)
        self.assertEqual([(lf.suite, lf.cpu) for lf in log.leaves],
                         [('pmutest', ''), ('pmutest', '')])

    def test_directives_are_case_insensitive_and_skip_wins_over_not_ok(self):
        text = PASS_LOG.replace('ok 1 boot.cmdline', 'not ok 1 boot.cmdline # skip later')
        text = text.replace('1 passed, 0 failed, 1 skipped', '0 passed, 0 failed, 2 skipped')
        log = parse_ktap(text)
        self.assertEqual(log.errors, [])
        self.assertEqual((log.leaves[0].outcome, log.leaves[0].reason), ('skip', 'later'))

    def test_free_text_lines_are_ignored(self):
        text = PASS_LOG.replace('ok 2 smp', 'lapic: timer calibrated\nok 2 smp')
        self.assertEqual(errors_of(text), [])

    def test_cpu_block_regex_only_takes_cpu_names(self):
        text = ('''KTAP version 1
1..1
  KTAP version 1
  # Subtest: cpuid
  1..1
  ok 1 cpuid.leaf0a
ok 1 cpuid
# pmutest: 1 passed, 0 failed, 0 skipped
# pmutest: end exit=0x10
''')
        log = parse_ktap(text)
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
        self.assertTrue(any_error(errors, "no '# pmutest: P passed"), errors)
        self.assertTrue(any_error(errors, 'no end marker'), errors)
        self.assertEqual(len(parse_ktap(GOOD_LOG[:cut]).leaves), 5)

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
        text = PASS_LOG.replace('1..2\n', '1..2\n1..2\n')
        self.assertEqual(errors_of(text), ['line 3: second plan line in top level'])

    def test_repeated_number(self):
        text = GOOD_LOG.replace('  ok 1 selftest.pass_check', '  ok 2 selftest.pass_check')
        errors = errors_of(text)
        self.assertEqual(len(errors), 2, errors)
        self.assertTrue(errors[0].endswith('result number 2, expected 1'), errors)
        self.assertTrue(errors[1].endswith('result number 2, expected 3'), errors)

    def test_skipped_number_reported_once(self):
        text = PASS_LOG.replace('1..2', '1..3').replace('ok 2 smp.online', 'ok 3 smp.online')
        text = text.replace('ok 3 smp.online # SKIP one CPU\n',
                            'ok 3 smp.online # SKIP one CPU\nok 4 smp.ipi\n')
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
                         ["no '# pmutest: P passed, F failed, S skipped[, X xfail]' summary line"])

    def test_missing_end_marker(self):
        text = GOOD_LOG.replace('# pmutest: end exit=0x11\r\n', '')
        log = parse_ktap(text)
        self.assertEqual(log.errors, ["no end marker '# pmutest: end exit=0xNN' (truncated?)"])
        self.assertIsNone(log.end_status())

    def test_output_after_end_marker(self):
        errors = errors_of(PASS_LOG + 'ok 3 late\nmore\n')
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
        errors = errors_of(PASS_LOG.replace('ok 2 smp', '    KTAP version 1\nok 2 smp'))
        self.assertTrue(any_error(errors, 'version line at nesting level 2'), errors)

    def test_result_without_name(self):
        errors = errors_of(PASS_LOG.replace('ok 1 boot.cmdline', 'ok 1'))
        self.assertEqual(errors, ['line 3: result 1 has no test name'])




class Xfail(unittest.TestCase):
    def test_xfail_log_parses(self):
        log = parse_ktap(XFAIL_LOG)
        self.assertEqual(log.errors, [])
        self.assertEqual(log.summary, (5, 0, 0, 2))
        self.assertEqual(log.summary_counts(), (5, 0, 0, 2))
        xfails = [lf for lf in log.leaves if lf.outcome == 'xfail']
        self.assertEqual([(lf.identity, lf.xfail_ids, lf.reason) for lf in xfails], [
            ('pmu.count.cmask_inv_edge@cpu0-apic0', (XFAIL_ID,), 'cmask=255 counter read 1, expected 0'),
            ('pmu.count.cmask_inv_edge@cpu1-apic1', (XFAIL_ID,), 'cmask=255 counter read 1, expected 0')])
        self.assertEqual(log.deviations_seen, 1)
        (dev,) = log.deviations
        self.assertEqual((dev.id, dev.cpus, dev.tests), (XFAIL_ID, '0-1', ('pmu.count.cmask_inv_edge',)))
        self.assertEqual(dev.what, 'the emulated enabling WRMSR is counted whatever CMASK says')
        self.assertEqual(dev.source, 'Linux arch/x86/kvm/pmu.c, kvm_pmu_trigger_event()')
        self.assertEqual(log.deviation_ids(), [XFAIL_ID])

    def test_several_ids_on_one_result(self):
        text = XFAIL_LOG.replace('# XFAIL %s:' % XFAIL_ID, '# XFAIL %s,OTHER-ID:' % XFAIL_ID)
        text = text.replace('# deviations: 1 seen\n', '# deviations: 2 seen\n'
                            '# deviation OTHER-ID cpus 0,1 tests pmu.count.cmask_inv_edge: x (source: y)\n')
        log = parse_ktap(text)
        self.assertEqual(log.errors, [])
        self.assertEqual(log.leaves[2].xfail_ids, (XFAIL_ID, 'OTHER-ID'))

    def test_summary_without_xfail_count(self):
        text = XFAIL_LOG.replace(', 2 xfail', '')
        self.assertEqual(errors_of(text), ['summary line says 5 passed, 0 failed, 0 skipped; '
                                           'the results say 5 passed, 0 failed, 0 skipped, 2 xfail'])

    def test_xfail_must_count_as_passed(self):
        text = XFAIL_LOG.replace('5 passed, 0 failed, 0 skipped, 2 xfail', '3 passed, 0 failed, 0 skipped, 2 xfail')
        self.assertEqual(errors_of(text), ['summary line says 3 passed, 0 failed, 0 skipped, 2 xfail; '
                                           'the results say 5 passed, 0 failed, 0 skipped, 2 xfail'])

    def test_zero_xfail_count_is_accepted(self):
        self.assertEqual(errors_of(PASS_LOG.replace('1 skipped\n', '1 skipped, 0 xfail\n')), [])

    def test_xfail_on_not_ok_is_a_failure(self):
        text = XFAIL_LOG.replace('    ok 2 pmu.count.cmask_inv_edge@cpu0-apic0 # XFAIL', '    not ok 2 pmu.count.cmask_inv_edge@cpu0-apic0 # XFAIL', 1)
        log = parse_ktap(text)
        self.assertEqual(log.leaves[2].outcome, 'fail')
        self.assertTrue(any_error(log.errors, 'XFAIL on a not ok line'), log.errors)

    def test_xfail_without_id(self):
        text = XFAIL_LOG.replace('# XFAIL %s: cmask' % XFAIL_ID, '# XFAIL : cmask', 1)
        self.assertTrue(any_error(errors_of(text), 'XFAIL names no deviation ID'))

    def test_deviation_block_must_list_every_xfail_id(self):
        text = XFAIL_LOG.replace('# XFAIL %s:' % XFAIL_ID, '# XFAIL UNLISTED:', 1)
        errors = errors_of(text)
        self.assertIn('line 20: pmu.count.cmask_inv_edge@cpu0-apic0 is XFAIL UNLISTED, which the deviations '
                      'block does not list', errors)

    def test_deviation_count_and_position(self):
        errors = errors_of(XFAIL_LOG.replace('# deviations: 1 seen', '# deviations: 2 seen'))
        self.assertEqual(errors, ["'# deviations: 2 seen' but 1 deviation lines follow"])
        errors = errors_of(XFAIL_LOG.replace('# deviations: 1 seen\n', ''))
        self.assertTrue(any_error(errors, "before the '# deviations: K seen' line"), errors)

    def test_deviation_cpus_must_cover_the_xfail_cpus(self):
        errors = errors_of(XFAIL_LOG.replace('cpus 0-1 tests', 'cpus 0 tests'))
        self.assertEqual(errors, ['line 28: pmu.count.cmask_inv_edge@cpu1-apic1 is XFAIL %s, but deviation '
                                  '%s lists cpus 0' % (XFAIL_ID, XFAIL_ID)])
        self.assertTrue(any_error(errors_of(XFAIL_LOG.replace('cpus 0-1 tests', 'cpus all tests')),
                                  "cpus 'all' is not a CPU list"))

    def test_deviation_tests_must_be_xfail(self):
        text = XFAIL_LOG.replace('tests pmu.count.cmask_inv_edge:', 'tests pmu.count.cmask_inv_edge,pmu.count.gp_instructions:')
        self.assertEqual(errors_of(text), ['line 32: deviation %s lists test pmu.count.gp_instructions, but no '
                                           'pmu.count.gp_instructions result is XFAIL %s' % (XFAIL_ID, XFAIL_ID)])

    def test_deviation_needs_a_source(self):
        text = XFAIL_LOG.replace(' (source: Linux arch/x86/kvm/pmu.c, kvm_pmu_trigger_event())', '')
        self.assertTrue(any_error(errors_of(text), "has no '(source: ...)'"))

    def test_cpu_lists(self):
        self.assertEqual(parse_cpu_list('0-3,6'), {0, 1, 2, 3, 6})
        self.assertEqual(parse_cpu_list('5'), {5})
        for bad in ('', '3-1', 'a', '1,,2', '1-'):
            self.assertIsNone(parse_cpu_list(bad), bad)


class Notes(unittest.TestCase):
    def test_diagnostics_no_leaf_owns(self):
        log = parse_ktap(XFAIL_LOG)
        self.assertIn(('(run)', 'smp: AP bring-up took 14029 us of guest time'), log.notes)
        text = XFAIL_LOG.replace('  ok 1 cpu0-apic0', '    # per-CPU tail\n  # suite note\n  ok 1 cpu0-apic0')
        log = parse_ktap(text)
        self.assertEqual(log.errors, [])
        self.assertIn(('pmu.count@cpu0-apic0', 'per-CPU tail'), log.notes)
        self.assertIn(('pmu.count', 'suite note'), log.notes)

    def test_end_marker_seen(self):
        self.assertTrue(end_marker_seen(PASS_LOG))
        self.assertFalse(end_marker_seen(PASS_LOG[:-10]))
        self.assertTrue(end_marker_seen(GOOD_LOG))
        self.assertEqual(parse_ktap(ALL_SKIP_LOG).errors, [])


class KernelLinesBeforeTheVersionLine(unittest.TestCase):
    """A kernel note printed before "KTAP version 1" is preamble to every
    consumer; firmware and GRUB noise there is not a kernel line."""

    def test_firmware_and_grub_noise_is_not_flagged(self):
        self.assertEqual(diagnostics_before_version(FIRMWARE_NOISE + GOOD_LOG), [])

    def test_a_note_before_the_version_line_is_flagged(self):
        early = FIRMWARE_NOISE + '\x1b[H# fbcon: 800x600 24 bpp\r\n' + GOOD_LOG
        self.assertEqual(diagnostics_before_version(early), ['# fbcon: 800x600 24 bpp'])

    def test_notes_after_the_version_line_are_the_report(self):
        self.assertEqual(diagnostics_before_version(GOOD_LOG), [])
        self.assertIn('#', GOOD_LOG.split('KTAP version 1', 1)[1])

    def test_no_version_line_no_verdict(self):
        self.assertEqual(diagnostics_before_version('# PANIC: early\n'), [])
