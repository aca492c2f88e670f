#!/usr/bin/env python3
"""Turn the JUnit XML of tools/pmutest-run into a short Markdown report for a
CI job page (GitHub's $GITHUB_STEP_SUMMARY, a GitLab MR note, ...): the
verdict, the leaf counts, every unexpected outcome with its diagnostics,
the known deviations (XFAIL) and foreseen failures, and the SKIPs grouped
by reason, since a SKIP reason is the answer to "why was this not tested
here?".

  python3 ci-examples/junit-summary.py junit.xml >> "$GITHUB_STEP_SUMMARY"

Counts are of test leaves only: the run-level 'verdict' case is reported as
the verdict, not counted as a test. Each leaf is counted as pmutest-run
judged it against the expect file: <failure> is an unexpected outcome,
<skipped type="pmutest.xfail"> a known deviation, <skipped
type="pmutest.expected-fail|timeout"> a failure the expect file foresees.

Exit status 0 even when tests failed (the runner's own exit status is the
verdict); 2 when the file is missing or is not JUnit XML.
"""
import collections
import sys
import xml.etree.ElementTree as ET

MAX_DIAG_LINES = 20
VERDICT = ('pmutest', 'verdict')     # (classname, name) of the run-level case


def md_escape(text):
    return text.replace('|', '\\|').replace('\n', ' ')


def details(name, text):
    lines = text.strip().splitlines()
    if not lines:
        return []
    more = len(lines) - MAX_DIAG_LINES
    return (['<details><summary>%s</summary>' % name, '', '```'] + lines[:MAX_DIAG_LINES]
            + (['... %d more lines' % more] if more > 0 else []) + ['```', '</details>', ''])


def summarize(xml_text, title='pmutest'):
    root = ET.fromstring(xml_text)
    leaves = collections.OrderedDict((k, []) for k in ('passed', 'failed', 'skipped', 'xfail', 'expected'))
    verdict = None
    for case in root.iter('testcase'):
        name = case.get('name', '?')
        if (case.get('classname'), name) == VERDICT:
            verdict = case.find('failure')
            verdict = (verdict.text or '').strip() if verdict is not None else ''
            continue
        fail, skip = case.find('failure'), case.find('skipped')
        if fail is not None:
            leaves['failed'].append((name, fail.get('message', ''), fail.text or ''))
        elif skip is not None and skip.get('type') == 'pmutest.xfail':
            leaves['xfail'].append((name, skip.get('message', ''), skip.text or ''))
        elif skip is not None and (skip.get('type') or '').startswith('pmutest.expected-'):
            leaves['expected'].append((name, skip.get('message', ''), skip.text or ''))
        elif skip is not None:
            leaves['skipped'].append((name, skip.get('message', '') or '(no reason given)', ''))
        else:
            leaves['passed'].append((name, '', ''))
    head = 'verdict %s' % ('PASS' if verdict == '' else 'FAIL' if verdict else 'unknown (no verdict case)')
    counts = ', '.join('%d %s' % (len(v), k if k != 'expected' else 'expected failures')
                       for k, v in leaves.items())
    out = ['### %s: %s; %s' % (title, head, counts), '']
    if verdict:
        out += ['Problems:', ''] + ['- %s' % md_escape(p) for p in verdict.splitlines()] + ['']
    for key, label in (('failed', 'unexpected'), ('xfail', 'known deviation (XFAIL)'),
                       ('expected', 'expected failure')):
        if leaves[key]:
            out += ['| %s | message |' % label, '| --- | --- |']
            out += ['| `%s` | %s |' % (n, md_escape(m)) for n, m, _ in leaves[key]]
            out.append('')
    for name, _, diag in leaves['failed']:
        out += details(name, diag)
    if leaves['skipped']:
        by_reason = collections.OrderedDict()
        for name, reason, _ in leaves['skipped']:
            by_reason.setdefault(reason, []).append(name)
        out += ['| skipped | reason |', '| --- | --- |']
        for reason, names in by_reason.items():
            shown = ', '.join('`%s`' % n for n in names[:3])
            if len(names) > 3:
                shown += ' and %d more' % (len(names) - 3)
            out.append('| %s | %s |' % (shown, md_escape(reason)))
        out.append('')
    return '\n'.join(out)


def main(argv):
    if len(argv) != 2:
        print('usage: junit-summary.py JUNIT.xml', file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            text = f.read()
        print(summarize(text))
    except (OSError, ET.ParseError) as e:
        print('junit-summary: %s: %s' % (argv[1], e), file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
