#!/usr/bin/env python3
"""Check that every kernel test is described the same way in its source and
in the user's documentation.

Each KTEST() in tests/*.c and tests/pmu/*.c carries a one-line description (what it asserts;
the kernel prints them with tests=list). README.md or pmu/README.md must
have exactly one table row for each test, whose first cell names it
(`suite.name`, optionally followed by a note such as "(per CPU)") and whose
second cell starts with that description; the row may go on with detail
after it. Markdown backticks do not count, and the tables may spell >=, <=,
->, x, +- and - with their typographic signs. A row that names a test which
does not exist is stale. Rows whose name has a '*' summarise a family and
are not checked. Also: a suite lives in one file (its tests run in source
order), and descriptions are 1..80 printable ASCII characters.

Usage: python3 -m pmutest.check_test_docs [--root DIR]
Prints each problem, then "test-docs: N passed, M failed, 0 skipped" (one
check per test, and one failure per stale row). Exit 1 on a problem."""
import argparse
import os
import re
import sys

DOCS = ('README.md', 'pmu/README.md')
DESC_MAX = 80  # tests/ktest.h, KTEST_DESC_MAX
KTEST = re.compile(r'^KTEST(?:_BUDGET)?\(\s*"([^"]+)"\s*,\s*(\w+)\s*,.*,\s*"((?:[^"\\]|\\.)*)"\s*\)$', re.S)
STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
ROW = re.compile(r'^\|\s*`([^`]+)`[^|]*\|\s*(.*?)\s*\|\s*$')
TEST_NAME = re.compile(r'^[a-z0-9_]+(?:\.[a-z0-9_]+)+$')
TYPOGRAPHY = {'\u2265': '>=', '\u2264': '<=', '\u2192': '->', '\u00d7': 'x', '\u00b1': '+-', '\u2212': '-',
              '\u2013': '-'}


def plain(cell):
    """A table cell as the kernel would spell it."""
    text = cell.replace('`', '')
    for sign, ascii_ in TYPOGRAPHY.items():
        text = text.replace(sign, ascii_)
    return text


def invocation(lines, i):
    """The KTEST(...) starting at lines[i], joined up to its closing
    parenthesis (parentheses inside strings do not count)."""
    text = lines[i]
    while i + 1 < len(lines):
        bare = STRING.sub('""', text)
        if bare.count('(') <= bare.count(')'):
            break
        i += 1
        text += ' ' + lines[i].strip()
    return text.strip()


def kernel_tests(root):
    """{full name: (description, file, line)} of every KTEST in tests/*.c and
    tests/pmu/*.c, and the problems found reading them."""
    tests, problems, suite_file = {}, [], {}
    names = ['%s/%s' % (d, n) for d in ('tests', 'tests/pmu')
             for n in sorted(os.listdir(os.path.join(root, d))) if n.endswith('.c')]
    for path in names:
        with open(os.path.join(root, path), encoding='utf-8') as f:
            lines = f.read().split('\n')
        for i, line in enumerate(lines):
            if not line.startswith('KTEST'):
                continue
            n = i + 1
            m = KTEST.match(invocation(lines, i))
            if not m:
                problems.append('%s:%d: a KTEST whose last argument is not its description string' % (path, n))
                continue
            suite, test, desc = m.group(1), m.group(2), m.group(3).encode().decode('unicode_escape')
            full = suite + '.' + test
            tests[full] = (desc, path, n)
            if suite_file.setdefault(suite, path) != path:
                problems.append('%s:%d: suite %s also has tests in %s: a suite is one file (tests run in '
                                'source order)' % (path, n, suite, suite_file[suite]))
            if not 0 < len(desc) <= DESC_MAX or not all(' ' <= c <= '~' for c in desc):
                problems.append('%s:%d: %s: the description must be 1..%d printable ASCII characters' %
                                (path, n, full, DESC_MAX))
    return tests, problems


def doc_rows(root):
    """[(doc, line, name, plain text)] of the table rows that name a test."""
    rows = []
    for doc in DOCS:
        with open(os.path.join(root, doc), encoding='utf-8') as f:
            for n, line in enumerate(f, 1):
                m = ROW.match(line)
                if m and TEST_NAME.match(m.group(1)):
                    rows.append((doc, n, m.group(1), plain(m.group(2))))
    return rows


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--root', default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    args = ap.parse_args(argv)
    tests, problems = kernel_tests(args.root)
    suites = {full.rsplit('.', 1)[0] for full in tests}
    rows = doc_rows(args.root)
    passed = failed = 0
    for full, (desc, path, line) in sorted(tests.items()):
        mine = [r for r in rows if r[2] == full]
        where = '%s:%d: %s' % (path, line, full)
        if not mine:
            problems.append('%s: no row in %s says what it asserts' % (where, ' or '.join(DOCS)))
        elif len(mine) > 1:
            problems.append('%s: %d rows (%s)' % (where, len(mine), ', '.join('%s:%d' % r[:2] for r in mine)))
        elif not mine[0][3].startswith(desc):
            problems.append('%s: %s:%d does not start with the description\n  test: %s\n  row:  %s' %
                            (where, mine[0][0], mine[0][1], desc, mine[0][3]))
        else:
            passed += 1
            continue
        failed += 1
    for doc, line, name, _ in rows:
        if name not in tests and name.rsplit('.', 1)[0] in suites:
            problems.append('%s:%d: a row for %s, which is no test' % (doc, line, name))
            failed += 1
    for msg in problems:
        print(msg)
    failed = max(failed, 1) if problems else failed
    print('test-docs: %d passed, %d failed, 0 skipped' % (passed, failed))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
