"""Expect files: what each test's outcome should be in one environment, and
the judgement of every leaf against them (the runner's verdict and the
JUnit report use the same judgement).

Format, one rule per line, '#' starts a comment:
  <glob> <outcome>[|<outcome>...] [ID,...]   fnmatch glob against "name@cpuN-apicM" and
                                             against the bare name; the last match wins.
                                             Outcomes: pass fail skip timeout xfail any.
                                             IDs, only after xfail: the deviation IDs an
                                             XFAIL may name (none given: any ID)
  cpus <N>                      the "# smp: N of M CPUs online" line says N
  exit <status>                 expected QEMU status (e.g. 35)
  summary <P> <F> <S> [<X>]     exact leaf counts as the summary line gives them
  deviations <ID,...>|none      the deviations block lists exactly these IDs
A `pass` rule does not accept an XFAIL: a known deviation is not silicon
behaviour, and a CI job watching a virtual PMU must notice a new one. Write
`pass|xfail` (optionally with IDs) where deviations are acceptable.
Every glob must match some test that ran; tests that match no rule must not
fail or time out.
"""
import fnmatch
import re
from dataclasses import dataclass, field

from .ktap import OUTCOMES

RULE_OUTCOMES = OUTCOMES + ('any',)
_ID_RE = re.compile(r'^[^\s,]+$')


@dataclass
class ExpectRule:
    glob: str
    outcomes: tuple
    lineno: int
    xfail_ids: tuple = ()         # empty: an XFAIL may name any deviation

    def describe(self):
        ids = ' ' + ','.join(self.xfail_ids) if self.xfail_ids else ''
        return '|'.join(self.outcomes) + ids


@dataclass
class Expectations:
    rules: list = field(default_factory=list)
    cpus: int = None
    exit: int = None
    summary: tuple = None         # (P, F, S) or (P, F, S, X)
    deviations: tuple = None      # exact set of deviation IDs, () for none
    source: str = '<none>'


class ExpectError(Exception):
    pass


def _int(tok, source, lineno, what, lo=0, hi=None):
    try:
        value = int(tok, 0)
    except ValueError:
        raise ExpectError('%s:%d: %s must be a number, not %r' % (source, lineno, what, tok))
    if value < lo or (hi is not None and value > hi):
        raise ExpectError('%s:%d: %s %d out of range' % (source, lineno, what, value))
    return value


def _ids(tok, source, lineno):
    ids = tuple(tok.split(','))
    if not all(_ID_RE.match(i) for i in ids):
        raise ExpectError('%s:%d: %r is not a comma-separated list of deviation IDs'
                          % (source, lineno, tok))
    return ids


def _rule(toks, source, lineno):
    outcomes = tuple(toks[1].split('|'))
    for outcome in outcomes:
        if outcome not in RULE_OUTCOMES:
            raise ExpectError('%s:%d: outcome %r is not one of %s'
                              % (source, lineno, outcome, '|'.join(RULE_OUTCOMES)))
    if 'any' in outcomes and len(outcomes) > 1:
        raise ExpectError('%s:%d: any already accepts every outcome' % (source, lineno))
    ids = ()
    if len(toks) == 3:
        if 'xfail' not in outcomes:
            raise ExpectError('%s:%d: deviation IDs %r need an xfail outcome'
                              % (source, lineno, toks[2]))
        ids = _ids(toks[2], source, lineno)
    return ExpectRule(toks[0], outcomes, lineno, ids)


def parse_expect(text, source='<expect>'):
    exp = Expectations(source=source)
    for lineno, raw in enumerate(text.splitlines(), 1):
        toks = re.sub(r'(^|\s)#.*$', '', raw).split()
        if not toks:
            continue
        key = toks[0]
        if key == 'cpus' and len(toks) == 2:
            exp.cpus = _int(toks[1], source, lineno, 'cpus', lo=1)
        elif key == 'exit' and len(toks) == 2:
            exp.exit = _int(toks[1], source, lineno, 'exit status', hi=255)
        elif key == 'summary' and len(toks) in (4, 5):
            exp.summary = tuple(_int(t, source, lineno, 'summary count') for t in toks[1:])
        elif key == 'deviations' and len(toks) == 2:
            exp.deviations = () if toks[1] == 'none' else tuple(sorted(_ids(toks[1], source, lineno)))
        elif len(toks) in (2, 3) and key not in ('cpus', 'exit', 'summary', 'deviations'):
            exp.rules.append(_rule(toks, source, lineno))
        else:
            raise ExpectError('%s:%d: cannot parse %r (want "<glob> <outcome>[|...] [IDs]", "cpus N", '
                              '"exit N", "summary P F S [X]" or "deviations IDs|none")'
                              % (source, lineno, raw.strip()))
    return exp


def load_expect(path):
    with open(path) as f:
        return parse_expect(f.read(), path)


def rule_matches(rule, leaf):
    return (fnmatch.fnmatchcase(leaf.identity, rule.glob)
            or fnmatch.fnmatchcase(leaf.name, rule.glob))


def rule_for(leaf, exp):
    """(index, rule) of the last rule matching the leaf, or (None, None)."""
    found = (None, None)
    for i, rule in enumerate(exp.rules):
        if rule_matches(rule, leaf):
            found = (i, rule)
    return found


def _outcome_text(leaf):
    if leaf.outcome == 'xfail':
        return 'xfail %s' % ','.join(leaf.xfail_ids) if leaf.xfail_ids else 'xfail'
    return leaf.outcome


@dataclass
class Judgement:
    """One leaf against the expect file. problem is None when the outcome is
    acceptable; predicted says a fail/timeout/xfail was foreseen (by a rule,
    or, for an XFAIL, by the kernel's own table of known deviations)."""
    leaf: object
    rule: ExpectRule = None
    rule_index: int = None
    problem: str = None
    predicted: bool = False

    def where(self, exp):
        return '%s:%d' % (exp.source, self.rule.lineno) if self.rule else 'no rule'


def judge(leaf, exp):
    index, rule = rule_for(leaf, exp)
    j = Judgement(leaf, rule, index)
    if rule is None:
        if leaf.outcome in ('fail', 'timeout'):
            j.problem = 'unexpected %s: %s' % (leaf.outcome, leaf.identity)
        j.predicted = leaf.outcome == 'xfail'
        return j
    where = '%s:%d' % (exp.source, rule.lineno)
    if 'any' in rule.outcomes:
        j.predicted = leaf.outcome in ('fail', 'timeout', 'xfail')
        return j
    if leaf.outcome not in rule.outcomes:
        j.problem = '%s: expected %s (%s), got %s' % (leaf.identity, rule.describe(), where,
                                                     _outcome_text(leaf))
        return j
    if leaf.outcome == 'xfail' and rule.xfail_ids:
        new = [i for i in leaf.xfail_ids if i not in rule.xfail_ids]
        if new:
            j.problem = '%s: xfail %s is not among the deviations %s allows (%s)' % (
                leaf.identity, ','.join(new), ','.join(rule.xfail_ids), where)
            return j
    j.predicted = leaf.outcome in ('fail', 'timeout', 'xfail')
    return j


def judge_all(log, exp):
    return [judge(leaf, exp) for leaf in log.leaves]


def check_expectations(log, exp, judgements=None):
    """Problems with test outcomes; with no rules, every failure is unexpected."""
    judgements = judge_all(log, exp) if judgements is None else judgements
    problems = [j.problem for j in judgements if j.problem]
    used = set()
    for leaf in log.leaves:
        used.update(i for i, r in enumerate(exp.rules) if rule_matches(r, leaf))
    for i, r in enumerate(exp.rules):
        if i not in used:
            problems.append('expected test %s did not run (%s:%d)' % (r.glob, exp.source, r.lineno))
    if exp.summary is not None:
        got = log.summary_counts()[:len(exp.summary)]
        if exp.summary != got:
            names = ('passed', 'failed', 'skipped', 'xfail')
            problems.append('expected summary %s; got %s' % (
                ', '.join('%d %s' % (n, w) for n, w in zip(exp.summary, names)),
                ', '.join('%d' % n for n in got)))
    if exp.deviations is not None:
        seen = tuple(log.deviation_ids())
        if seen != exp.deviations:
            problems.append('expected deviations %s (%s); the log lists %s' % (
                ','.join(exp.deviations) or 'none', exp.source, ','.join(seen) or 'none'))
    return problems
