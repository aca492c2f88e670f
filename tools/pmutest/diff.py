"""pmutest-diff: two pmutest runs side by side, check by check: the outcome
(with the deviation IDs of an XFAIL), the deviations each run reports, and
the figures each check printed, then a summary of what differs.

  tools/pmutest-diff silicon.log guest.log        does my vPMU behave like silicon?
  tools/pmutest-diff host-6.8.log host-6.12.log   host kernel X against Y
  tools/pmutest-diff before.log after.log         before and after a hypervisor patch

A check is a leaf result, named as pmutest-run names it but without the
APIC ID (name@cpuN: the same CPU number lines up across machines whose APIC
IDs differ); diagnostics no leaf owns belong to their suite or to '(run)'.
A figure is a number in one of a check's '# ' diagnostic lines (or in its
SKIP/XFAIL reason): counts, bracket constants, costs, addresses. It is
keyed by the line's shape (the line with each number replaced by '#' and
blanks squeezed), the
how-manieth line of that shape it is within the check, and its place in the
line, so the same figure lines up across runs however many other lines
either run printed.

Exit status: 0 when every check has the same outcome in both runs (figures
and deviations may differ: they are reported, not judged), 1 when an outcome
differs or a check ran in one run only, 2 on a usage error.
"""
import argparse
import re
import sys
from collections import OrderedDict
from dataclasses import dataclass, field

from .ktap import parse_ktap

# A number standing alone: hex with 0x, hex digits with at least one digit
# (register dumps print them bare), decimals, with an optional unit suffix
# (2000ms, 5us, 12%). Never inside a word such as PMC0 or cpu1, nor after a
# dot as in CPUID.0AH.
_NUMBER_RE = re.compile(r'(?<![\w.])(?P<num>0x[0-9a-fA-F]+|\d+\.\d+|[0-9a-fA-F]*\d[0-9a-fA-F]*)'
                        r'(?P<unit>[a-zA-Z%]*)(?![\w.])')
_APIC_RE = re.compile(r'@(cpu\d+)-apic\d+$')
RUN = '(run)'


def check_key(identity):
    return _APIC_RE.sub(r'@\1', identity)


def shape_of(line):
    """The line with each number as '#' and each run of blanks as one
    space, so a table row lines up however wide its columns came out."""
    return ' '.join(_NUMBER_RE.sub(lambda m: '#' + m.group('unit'), line).split())


@dataclass
class Check:
    key: str
    outcome: str = None           # None: diagnostics that no leaf owns
    xfail_ids: tuple = ()
    lines: list = field(default_factory=list)

    def describe(self):
        if self.outcome == 'xfail':
            return 'xfail ' + ','.join(self.xfail_ids)
        return self.outcome or '-'

    def figures(self):
        """(shape, occurrence, place) -> (number as printed, whole line)."""
        out, seen = OrderedDict(), {}
        for line in self.lines:
            shape = shape_of(line)
            occurrence = seen.get(shape, 0)
            seen[shape] = occurrence + 1
            for place, m in enumerate(_NUMBER_RE.finditer(line)):
                out[(shape, occurrence, place)] = (m.group('num'), line)
        return out


def checks_of(log):
    checks = OrderedDict()
    for leaf in log.leaves:
        key = check_key(leaf.identity)
        check = checks.setdefault(key, Check(key))
        check.outcome, check.xfail_ids = leaf.outcome, leaf.xfail_ids
        check.lines += leaf.diagnostics + ([leaf.reason] if leaf.reason else [])
    for context, text in log.notes:
        key = check_key(context)
        checks.setdefault(key, Check(key)).lines.append(text)
    return checks


def _number(text):
    try:
        if text.startswith('0x') or re.search(r'[a-fA-F]', text):
            return int(text, 16), True
        return (float(text) if '.' in text else int(text)), False
    except ValueError:
        return None, False


def change(a, b):
    """'a -> b', with the relative change for decimal numbers."""
    va, hex_a = _number(a)
    vb, hex_b = _number(b)
    if va is None or vb is None or hex_a or hex_b or va == 0:
        return '%s -> %s' % (a, b)
    return '%s -> %s (%+.1f%%)' % (a, b, 100.0 * (vb - va) / abs(va))


@dataclass
class Comparison:
    only_a: list = field(default_factory=list)
    only_b: list = field(default_factory=list)
    outcomes: list = field(default_factory=list)      # (key, a, b)
    deviations: list = field(default_factory=list)    # (id, which run, deviation)
    figures: list = field(default_factory=list)       # (key, shape, occurrence, place, a, b)
    compared: int = 0
    only_figures: int = 0                              # figures one run printed and the other did not

    @property
    def outcomes_agree(self):
        return not (self.only_a or self.only_b or self.outcomes)


def compare(log_a, log_b):
    a, b = checks_of(log_a), checks_of(log_b)
    cmp = Comparison()
    for key in a:
        if key not in b:
            if a[key].outcome is not None:
                cmp.only_a.append((key, a[key].describe()))
            continue
        ca, cb = a[key], b[key]
        if ca.describe() != cb.describe():
            cmp.outcomes.append((key, ca.describe(), cb.describe()))
        fa, fb = ca.figures(), cb.figures()
        for fig, (va, _) in fa.items():
            if fig not in fb:
                cmp.only_figures += 1
                continue
            cmp.compared += 1
            if va != fb[fig][0]:
                cmp.figures.append((key, fig[0], fig[1], fig[2], va, fb[fig][0]))
        cmp.only_figures += sum(1 for fig in fb if fig not in fa)
    cmp.only_b = [(key, b[key].describe()) for key in b if key not in a and b[key].outcome is not None]
    devs_a = {d.id: d for d in log_a.deviations}
    devs_b = {d.id: d for d in log_b.deviations}
    for ident in sorted(set(devs_a) | set(devs_b)):
        if ident not in devs_b:
            cmp.deviations.append((ident, 'A only', devs_a[ident]))
        elif ident not in devs_a:
            cmp.deviations.append((ident, 'B only', devs_b[ident]))
        elif (devs_a[ident].cpus, devs_a[ident].tests) != (devs_b[ident].cpus, devs_b[ident].tests):
            cmp.deviations.append((ident, 'both, differently', devs_b[ident]))
    return cmp


def _figure_label(shape, occurrence, place):
    slots = [m.start() for m in re.finditer('#', shape)]
    marked = shape
    if place < len(slots):
        marked = shape[:slots[place]] + '[#]' + shape[slots[place] + 1:]
    return '"%s"%s' % (marked, ' (%d)' % (occurrence + 1) if occurrence else '')


def report(name_a, name_b, log_a, log_b, cmp, all_figures=False, limit=40):
    out = ['pmutest-diff: A = %s, B = %s' % (name_a, name_b)]
    for name, log in (('A', log_a), ('B', log_b)):
        for error in log.errors[:5]:
            out.append('warning: %s: log: %s' % (name, error))
    width = max([len(k) for k, _, _ in cmp.outcomes] + [len(k) for k, _ in cmp.only_a + cmp.only_b] + [10])
    out.append('')
    out.append('== outcomes (A | B) ==')
    rows = ([(k, a, b) for k, a, b in cmp.outcomes] + [(k, a, '(not run)') for k, a in cmp.only_a]
            + [(k, '(not run)', b) for k, b in cmp.only_b])
    out += ['  %-*s  %-24s | %s' % (width, k, a, b) for k, a, b in rows] or ['  every check has the same outcome']
    out.append('')
    out.append('== deviations ==')
    out += ['  %s: %s (cpus %s, tests %s: %s)' % (ident, which, d.cpus, ','.join(d.tests), d.what)
            for ident, which, d in cmp.deviations] or [
        '  the same in both: %s' % (', '.join(log_a.deviation_ids()) or 'none')]
    out.append('')
    out.append('== figures that differ (A -> B) ==')
    shown = cmp.figures if all_figures else cmp.figures[:limit]
    out += ['  %s  %s: %s' % (key, _figure_label(shape, occ, place), change(a, b))
            for key, shape, occ, place, a, b in shown] or ['  none']
    if len(shown) < len(cmp.figures):
        out.append('  ... and %d more (--all-figures shows them)' % (len(cmp.figures) - len(shown)))
    out.append('')
    out.append('== summary ==')
    n_a = sum(1 for lf in log_a.leaves)
    n_b = sum(1 for lf in log_b.leaves)
    out.append('checks: %d in A, %d in B; %d only in A, %d only in B' % (n_a, n_b, len(cmp.only_a), len(cmp.only_b)))
    out.append('outcomes: %d differ' % len(cmp.outcomes))
    out.append('deviations: %d differ (A: %s; B: %s)' % (len(cmp.deviations), ', '.join(log_a.deviation_ids()) or 'none',
                                                        ', '.join(log_b.deviation_ids()) or 'none'))
    out.append('figures: %d compared, %d differ, %d printed by one run only'
               % (cmp.compared, len(cmp.figures), cmp.only_figures))
    out.append('verdict: %s' % ('outcomes agree' if cmp.outcomes_agree else 'outcomes differ'))
    return '\n'.join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(prog='pmutest-diff', description=__doc__.split('\n\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog='\n\n'.join(__doc__.split('\n\n')[1:]))
    ap.add_argument('a', metavar='A.log')
    ap.add_argument('b', metavar='B.log')
    ap.add_argument('--all-figures', action='store_true', help='list every differing figure (default: 40)')
    args = ap.parse_args(argv)
    logs = []
    for path in (args.a, args.b):
        try:
            with open(path, errors='replace') as f:
                logs.append(parse_ktap(f.read()))
        except OSError as e:
            print('pmutest-diff: %s: %s' % (path, e.strerror), file=sys.stderr)
            return 2
    cmp = compare(*logs)
    print(report(args.a, args.b, logs[0], logs[1], cmp, args.all_figures))
    return 0 if cmp.outcomes_agree else 1
