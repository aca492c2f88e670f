"""JUnit XML for CI dashboards: one testcase per leaf, judged against the
expect file, and one 'verdict' testcase for the run as a whole.

Each leaf is written as its judgement, not its raw KTAP outcome:
  - an outcome nobody expected (a failure, or a pass/skip/XFAIL where the
    expect file wants something else) is a <failure type="unexpected-...">
    on that leaf, so the offending test itself goes red;
  - a foreseen fail/timeout (the expect file predicts it) and an XFAIL (a
    deviation the kernel's table knows) are <skipped type="pmutest.xfail"
    | "pmutest.expected-fail" | "pmutest.expected-timeout">, with the reason
    in the message and the diagnostics as text;
  - a SKIP is <skipped> with its reason; a pass has no child.
<skipped> is what pytest writes for its xfail (type="pytest.xfail"); GitLab
counts it as skipped, Jenkins' JUnit and xunit plugins list it as skipped
with its message, and GitHub's JUnit report actions do the same, so a
foreseen failure never turns a green verdict red, and never reads as a pass
either.

The document is valid against the Jenkins xunit plugin's junit-10.xsd and
Apache Ant's JUnit schema (checked by pmutest.junit_schema): no attributes
on <testsuites>, and each suite carries the attributes and elements Ant
requires.
"""
import datetime
import re
import socket
import xml.etree.ElementTree as ET

_XML_INVALID_RE = re.compile('[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]')

VERDICT_CLASSNAME, VERDICT_NAME = 'pmutest', 'verdict'


def _xml_text(s):
    return _XML_INVALID_RE.sub('', s)


def _leaf_message(leaf):
    if leaf.outcome == 'skip':
        return leaf.reason
    if leaf.outcome == 'timeout':
        return 'TIMEOUT %s' % leaf.reason
    if leaf.outcome == 'xfail':
        return 'XFAIL %s: %s' % (','.join(leaf.xfail_ids), leaf.reason)
    return 'ok' if leaf.outcome == 'pass' else 'not ok'


def _leaf_element(case, judgement, exp):
    """The child that says how this leaf went, or None for a plain pass."""
    leaf = judgement.leaf
    diagnostics = _xml_text('\n'.join(leaf.diagnostics))
    if judgement.problem:
        el = ET.SubElement(case, 'failure', type='unexpected-' + leaf.outcome,
                           message=_xml_text('%s (%s)' % (judgement.problem, _leaf_message(leaf))))
    elif leaf.outcome == 'xfail':
        el = ET.SubElement(case, 'skipped', type='pmutest.xfail',
                           message=_xml_text(_leaf_message(leaf)))
    elif leaf.outcome in ('fail', 'timeout'):
        el = ET.SubElement(case, 'skipped', type='pmutest.expected-' + leaf.outcome,
                           message=_xml_text('expected %s (%s): %s' % (
                               leaf.outcome, judgement.where(exp), _leaf_message(leaf))))
    elif leaf.outcome == 'skip':
        el = ET.SubElement(case, 'skipped', message=_xml_text(leaf.reason))
    else:
        return None
    if diagnostics:
        el.text = diagnostics
    return el


def junit_xml(log, verdict, log_text, exp, elapsed=0.0, timestamp=None, hostname=None):
    """The JUnit document for one run (verdict: pmutest.verdict.Verdict)."""
    timestamp = timestamp or datetime.datetime.now().strftime('%Y-%m-%dT%H:%M:%S')
    hostname = hostname or socket.gethostname() or 'localhost'
    root = ET.Element('testsuites')
    suite = ET.SubElement(root, 'testsuite', name='pmutest', package='pmutest', id='0',
                          timestamp=timestamp, hostname=hostname, time='%.3f' % elapsed)
    props = ET.SubElement(suite, 'properties')
    for name, value in (('smp', '%d of %d online' % log.smp[:2] if log.smp else ''),
                        ('deviations', ','.join(log.deviation_ids()))):
        if value:
            ET.SubElement(props, 'property', name=name, value=value)
    failures = skipped = 0
    for judgement in verdict.judgements:
        leaf = judgement.leaf
        case = ET.SubElement(suite, 'testcase', classname=leaf.suite, name=leaf.identity,
                             time='0')
        el = _leaf_element(case, judgement, exp)
        failures += el is not None and el.tag == 'failure'
        skipped += el is not None and el.tag == 'skipped'
    case = ET.SubElement(suite, 'testcase', classname=VERDICT_CLASSNAME, name=VERDICT_NAME,
                         time='%.3f' % elapsed)
    if verdict.problems:
        fail = ET.SubElement(case, 'failure', type='verdict',
                             message='%d problem(s)' % len(verdict.problems))
        fail.text = _xml_text('\n'.join(verdict.problems))
        failures += 1
    suite.set('tests', str(len(verdict.judgements) + 1))
    suite.set('failures', str(failures))
    suite.set('errors', '0')
    suite.set('skipped', str(skipped))
    ET.SubElement(suite, 'system-out').text = _xml_text(log_text)
    ET.SubElement(suite, 'system-err')
    return ET.tostring(root, encoding='unicode', xml_declaration=True) + '\n'
