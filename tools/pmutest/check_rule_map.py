"""Check docs/rule-map.tsv, the map of the emulated PMU's rules to the
checks that catch their breakage (docs/mutants.md):

- every row has its six columns and a unique id;
- every check it names is a KTEST of tests/ (KTEST("suite", name, ...));
  a row without one says "not checkable: WHY" or "gap: WHY";
- every model reference (file:function) names a function of that file, and
  every function of emu/model/*.c is referenced by some row, so that new
  model code without a row is visible.

Prints each problem, "# rule-map: N rules, C checked, G gaps, U not checkable",
then "rule-map: N passed, M failed, K skipped" (a row with a gap is skipped).

  python3 -m pmutest.check_rule_map [--root DIR]   (make rule-map-check)
"""
import argparse
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KTEST = re.compile(r'\bKTEST\(\s*"([a-z0-9_.]+)"\s*,\s*([a-z0-9_]+)\s*,')
FUNC = re.compile(r'^[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)\s*\([^;{]*\)\s*\{', re.M)
COLUMNS = ['id', 'shape', 'model', 'manual', 'rule', 'checks']


def ktests(root):
    names = set()
    for path in glob.glob(os.path.join(root, 'tests', '**', '*.c'), recursive=True):
        with open(path, errors='replace') as f:
            text = re.sub(r'/\*.*?\*/', '', f.read(), flags=re.S)
        names.update('%s.%s' % m for m in KTEST.findall(text))
    return names


def short_names(root):
    """The model column's file names: x86-pmu-NAME.c is NAME; the one
    private header with function bodies (x86-pmu-pebs.h) is pebs.h."""
    short = {os.path.basename(p)[len('x86-pmu-'):-len('.c')]: os.path.basename(p)
             for p in glob.glob(os.path.join(root, 'emu', 'model', 'x86-pmu-*.c'))}
    if os.path.exists(os.path.join(root, 'emu', 'model', 'x86-pmu-pebs.h')):
        short['pebs.h'] = 'x86-pmu-pebs.h'
    return short


def model_functions(root, short_map):
    out = {}
    for short, name in short_map.items():
        with open(os.path.join(root, 'emu', 'model', name)) as f:
            text = re.sub(r'/\*.*?\*/', '', f.read(), flags=re.S)
        out[short] = set(FUNC.findall(text)) - {'if', 'for', 'while', 'switch'}
    return out


def check(root, out=sys.stdout):
    short_map = short_names(root)
    tests, funcs = ktests(root), model_functions(root, short_map)
    problems, seen, used = [], set(), set()
    checked = gaps = uncheckable = 0
    with open(os.path.join(root, 'docs', 'rule-map.tsv')) as f:
        rows = [(n, l.rstrip('\n')) for n, l in enumerate(f, 1) if l.strip() and not l.startswith('#')]
    if not rows or rows[0][1].split('\t') != COLUMNS:
        problems.append('docs/rule-map.tsv: the header must be %s' % '\\t'.join(COLUMNS))
        rows = []
    for n, line in rows[1:]:
        cols = line.split('\t')
        where = 'docs/rule-map.tsv:%d' % n
        if len(cols) != len(COLUMNS) or not all(c.strip() for c in cols):
            problems.append('%s: want %d non-empty tab-separated columns, got %d' % (where, len(COLUMNS), len(cols)))
            continue
        rid, _, model, _, _, checks = cols
        if rid in seen:
            problems.append('%s: id %s twice' % (where, rid))
        seen.add(rid)
        for ref in model.split(','):
            short, _, fn = ref.partition(':')
            if short == 'qemu':
                continue
            if short not in funcs or fn not in funcs[short]:
                problems.append('%s (%s): %s is not a function of emu/model/%s' % (where, rid, ref,
                                                                                  short_map.get(short, short + '?')))
            else:
                used.add((short, fn))
        if checks.startswith('gap:'):
            gaps += 1
        elif checks.startswith('not checkable:'):
            uncheckable += 1
            if len(checks) < len('not checkable: ') + 10:
                problems.append('%s (%s): "not checkable:" needs the reason' % (where, rid))
        else:
            bad = [c for c in checks.split(',') if c.strip() not in tests]
            for c in bad:
                problems.append('%s (%s): %s is not a KTEST of tests/' % (where, rid, c))
            if not bad:
                checked += 1
    for short in sorted(funcs):
        for fn in sorted(funcs[short] - {f for s, f in used if s == short}):
            problems.append('emu/model/%s: function %s is in no row of docs/rule-map.tsv' % (short_map[short], fn))
    for p in problems:
        print('rule-map: ' + p, file=out)
    nrows = len(rows) - 1 if rows else 0
    print('# rule-map: %d rules, %d checked, %d gaps, %d not checkable' % (nrows, checked, gaps, uncheckable),
          file=out)
    print('rule-map: %d passed, %d failed, %d skipped' % (checked + uncheckable, len(problems), gaps), file=out)
    return 1 if problems else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--root', default=ROOT)
    return check(ap.parse_args(argv).root)


if __name__ == '__main__':
    sys.exit(main())
