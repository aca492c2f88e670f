#!/usr/bin/env python3
"""Turn the JUnit XML of tools/pmutest-run into a short Markdown report for a
CI job page (GitHub's $GITHUB_STEP_SUMMARY, a GitLab MR note, ...): the
counts, every failure with its diagnostics, and the SKIPs grouped by reason,
since a SKIP reason is the answer to "why was this not tested here?".

  python3 ci-examples/junit-summary.py junit.xml >> "$GITHUB_STEP_SUMMARY"

Exit status 0 even when tests failed (the runner's own exit status is the
verdict); 2 when the file is missing or is not JUnit XML.
"""
import collections
import sys
import xml.etree.ElementTree as ET

MAX_DIAG_LINES = 20


def md_escape(text):
    return text.replace('|', '\\|').replace('\n', ' ')


def summarize(xml_text, title='pmutest'):
    root = ET.fromstring(xml_text)
    cases = root.iter('testcase')
    passed, failed, skipped = [], [], collections.OrderedDict()
    for case in cases:
        name = case.get('name', '?')
        fail = case.find('failure')
        skip = case.find('skipped')
        if fail is not None:
            failed.append((name, fail.get('message', ''), (fail.text or '').strip()))
        elif skip is not None:
            skipped.setdefault(skip.get('message', '') or '(no reason given)', []).append(name)
        else:
            passed.append(name)
    nskip = sum(len(v) for v in skipped.values())
    out = ['### %s: %d passed, %d failed, %d skipped' % (title, len(passed), len(failed), nskip), '']
    if failed:
        out += ['| failed | message |', '| --- | --- |']
        out += ['| `%s` | %s |' % (n, md_escape(m)) for n, m, _ in failed]
        out.append('')
        for name, _, diag in failed:
            if diag:
                lines = diag.splitlines()
                more = len(lines) - MAX_DIAG_LINES
                out += ['<details><summary>%s</summary>' % name, '', '```']
                out += lines[:MAX_DIAG_LINES] + (['... %d more lines' % more] if more > 0 else [])
                out += ['```', '</details>', '']
    if skipped:
        out += ['| skipped | reason |', '| --- | --- |']
        for reason, names in skipped.items():
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
