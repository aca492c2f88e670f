"""pmutest.junit: every leaf written as its judgement against the expect
file, the run-level verdict case, and every document valid against the
Jenkins xunit plugin's junit-10.xsd and Ant's JUnit schema
(pmutest.junit_schema, which is itself tested on documents it must refuse)."""
import unittest
import xml.etree.ElementTree as ET

from fixtures import FIRMWARE_NOISE, GOOD_LOG, PASS_LOG, XFAIL_ID, XFAIL_LOG, stored
from pmutest.expect import Expectations, parse_expect
from pmutest.junit import junit_xml
from pmutest.junit_schema import validate
from pmutest.ktap import parse_ktap
from pmutest.verdict import verdict

STAMP = dict(timestamp='2025-01-02T03:04:05', hostname='ci')


def document(text, exp=None, run_problems=()):
    exp = exp or Expectations()
    log = parse_ktap(text)
    result = verdict(log, None, exp, None)
    result.problems += list(run_problems)
    return junit_xml(log, result, text, exp, 1.5, **STAMP)


def cases(xml):
    suite = ET.fromstring(xml).find('testsuite')
    return suite, {c.get('name'): c for c in suite.findall('testcase')}


class Judged(unittest.TestCase):
    def assertValid(self, xml):
        for schema in ('xunit', 'ant'):
            self.assertEqual(validate(xml, schema), [], schema)

    def test_foreseen_failures_are_skipped_not_failed(self):
        exp = parse_expect('* any\n', 'e')
        xml = document(FIRMWARE_NOISE + GOOD_LOG, exp)
        self.assertValid(xml)
        suite, by_name = cases(xml)
        self.assertEqual((suite.get('tests'), suite.get('failures'), suite.get('skipped')), ('9', '0', '5'))
        fail = by_name['pmu.count.gp_instructions@cpu1-apic2'].find('skipped')
        self.assertEqual((fail.get('type'), fail.get('message'), fail.text),
                         ('pmutest.expected-fail', 'expected fail (e:1): not ok',
                          'PMC0 = 0x0 after 1000 instructions'))
        hang = by_name['selftest.hang'].find('skipped')
        self.assertEqual((hang.get('type'), hang.get('message')),
                         ('pmutest.expected-timeout', 'expected timeout (e:1): TIMEOUT 2000ms'))
        self.assertEqual(by_name['pmu.count.fixed@cpu0-apic0'].find('skipped').attrib,
                         {'message': 'no fixed counters'})
        self.assertEqual(list(by_name['boot.cmdline']), [])
        self.assertEqual(list(by_name['verdict']), [])
        out = suite.find('system-out').text
        self.assertIn('Welcome to GRUB!', out)
        self.assertNotIn('\x1b', out)

    def test_unexpected_outcomes_fail_on_their_leaf(self):
        exp = parse_expect('boot.cmdline fail\nboot.memory_map fail\npmu.count.fixed@cpu0-* pass\n'
                           'pmu.count.fixed@cpu1-* skip\nselftest.* any\n', 'e')
        xml = document(GOOD_LOG, exp)
        self.assertValid(xml)
        suite, by_name = cases(xml)
        wanted = {
            'boot.cmdline': ('unexpected-pass', 'boot.cmdline: expected fail (e:1), got pass (ok)'),
            'pmu.count.fixed@cpu0-apic0': ('unexpected-skip', 'pmu.count.fixed@cpu0-apic0: expected pass '
                                           '(e:3), got skip (no fixed counters)'),
            'pmu.count.fixed@cpu1-apic2': ('unexpected-pass', 'pmu.count.fixed@cpu1-apic2: expected skip '
                                           '(e:4), got pass (ok)'),
            'pmu.count.gp_instructions@cpu1-apic2': ('unexpected-fail', 'unexpected fail: '
                                                     'pmu.count.gp_instructions@cpu1-apic2 (not ok)'),
        }
        for name, (kind, message) in wanted.items():
            failure = by_name[name].find('failure')
            self.assertEqual((failure.get('type'), failure.get('message')), (kind, message), name)
        self.assertIsNone(by_name['boot.memory_map'].find('failure'))
        verdict_fail = by_name['verdict'].find('failure')
        self.assertEqual(verdict_fail.get('message'), '4 problem(s)')
        self.assertEqual(suite.get('failures'), '5')

    def test_xfail_is_skipped_with_its_deviation(self):
        xml = document(XFAIL_LOG, parse_expect('* pass|xfail\n', 'e'))
        self.assertValid(xml)
        suite, by_name = cases(xml)
        x = by_name['pmu.count.cmask_inv_edge@cpu1-apic1'].find('skipped')
        self.assertEqual((x.get('type'), x.get('message'), x.text), (
            'pmutest.xfail', 'XFAIL %s: cmask=255 counter read 1, expected 0' % XFAIL_ID,
            'cmask=255 counter: 1, cmask=1 counter: 3001'))
        self.assertEqual((suite.get('failures'), suite.get('skipped')), ('0', '2'))
        props = {p.get('name'): p.get('value') for p in suite.find('properties')}
        self.assertEqual(props, {'smp': '2 of 2 online', 'deviations': XFAIL_ID})

    def test_xfail_under_a_pass_rule_fails_its_leaf(self):
        xml = document(XFAIL_LOG, parse_expect('* pass\n', 'e'))
        self.assertValid(xml)
        _, by_name = cases(xml)
        failure = by_name['pmu.count.cmask_inv_edge@cpu0-apic0'].find('failure')
        self.assertEqual(failure.get('type'), 'unexpected-xfail')
        self.assertIn('expected pass (e:1), got xfail %s' % XFAIL_ID, failure.get('message'))

    def test_run_level_problems_fail_only_the_verdict_case(self):
        xml = document(PASS_LOG[:-30])
        self.assertValid(xml)
        suite, by_name = cases(xml)
        self.assertEqual(by_name['verdict'].get('classname'), 'pmutest')
        self.assertIn("log: no end marker", by_name['verdict'].find('failure').text)
        self.assertEqual(suite.get('failures'), '1')

    def test_clean_run(self):
        xml = document(PASS_LOG)
        suite, by_name = cases(xml)
        self.assertEqual((suite.get('tests'), suite.get('failures'), suite.get('skipped')), ('3', '0', '1'))
        self.assertEqual(list(by_name['verdict']), [])
        self.assertEqual(ET.fromstring(xml).attrib, {})       # nothing on <testsuites>

    def test_control_bytes_and_markup(self):
        text = PASS_LOG.replace('ok 1 boot.cmdline', '# <&>"\x01\x07\nnot ok 1 boot.cmdline')
        text = text.replace('1 passed, 0 failed', '0 passed, 1 failed')
        xml = document('\x00\x1b[2J' + text)
        self.assertValid(xml)
        self.assertEqual(cases(xml)[1]['boot.cmdline'].find('failure').text, '<&>"')

    def test_stored_logs(self):
        for name, expect in (('kvm-nopmu-smp4.log', 'boot.* pass\narch.* pass\nsmp.* pass\npmu.* skip\n'),
                             ('selftest-tcg-smp4.log', None)):
            exp = parse_expect(expect, 'e') if expect else None
            xml = document(stored(name), exp)
            self.assertValid(xml)


class SchemaCheck(unittest.TestCase):
    """The checker refuses what the schemas refuse (each rule it encodes
    proven able to fail)."""
    GOOD = ('<testsuites><testsuite name="s" tests="1" failures="0" errors="0" time="1.5" '
            'timestamp="2025-01-02T03:04:05" hostname="h" package="s" id="0"><properties/>'
            '<testcase name="t" classname="c" time="0"/><system-out>x</system-out><system-err/>'
            '</testsuite></testsuites>')

    def test_good_document(self):
        self.assertEqual(validate(self.GOOD, 'xunit'), [])
        self.assertEqual(validate(self.GOOD, 'ant'), [])

    def test_skipped_on_testsuites(self):
        """A skipped count on <testsuites>, which pmutest once wrote in every
        file: the xunit schema (tools/pmutest/junit_schema.py) has none."""
        bad = self.GOOD.replace('<testsuites>', '<testsuites skipped="1">')
        self.assertEqual(validate(bad, 'xunit'), ["testsuites: attribute 'skipped' not allowed"])

    def test_xunit_rules(self):
        for bad, error in (
                (self.GOOD.replace(' tests="1"', ''), "testsuites/testsuite: attribute 'tests' missing"),
                (self.GOOD.replace('time="1.5"', 'time="1.5s"'), "attribute time='1.5s' is not a valid surefire-time"),
                (self.GOOD.replace('<testcase name="t"', '<testcase'), "attribute 'name' missing"),
                (self.GOOD.replace('<system-err/>', '<system-err/><bogus/>'), 'bogus: element not allowed'),
                (self.GOOD.replace('<properties/>', '<properties>text</properties>'), 'text is not allowed'),
                (self.GOOD.replace('<properties/>', '<properties><property name="a"/></properties>'),
                 "attribute 'value' missing"),
                ('<testcase name="t"/>', 'root element testcase'),
                ('<testsuites>', 'not XML')):
            errors = validate(bad, 'xunit')
            self.assertTrue(any(error in e for e in errors), (bad, errors))

    def test_ant_rules(self):
        for bad, error in (
                (self.GOOD.replace(' time="0"', ''), "testcase: attribute 'time' missing"),
                (self.GOOD.replace(' id="0"', ''), "attribute 'id' missing"),
                (self.GOOD.replace('<system-err/>', ''), 'do not fit'),
                (self.GOOD.replace('<testcase name="t" classname="c" time="0"/>',
                                   '<testcase name="t" classname="c" time="0"><skipped/><failure type="x"/>'
                                   '</testcase>'), 'do not fit'),
                (self.GOOD.replace('<testcase name="t" classname="c" time="0"/>',
                                   '<testcase name="t" classname="c" time="0"><failure/></testcase>'),
                 "failure: attribute 'type' missing"),
                (self.GOOD.replace('2025-01-02T03:04:05', '2025-01-02T03:04:05+01:00'), 'not a valid datetime'),
                (self.GOOD.replace('<testsuites>', '<testsuites name="x">'), "attribute 'name' not allowed")):
            errors = validate(bad, 'ant')
            self.assertTrue(any(error in e for e in errors), (bad, errors))
        # junit-10 lets a testcase carry system-out; Ant does not.
        both = self.GOOD.replace('time="0"/>', 'time="0"><system-out/></testcase>')
        self.assertEqual(validate(both, 'xunit'), [])
        self.assertNotEqual(validate(both, 'ant'), [])
