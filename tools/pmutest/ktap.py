"""The KTAP v1 report pmutest prints on its serial port, parsed into leaves,
deviations and run facts, with every structural problem named.

The rules are Linux's Documentation/dev-tools/ktap.rst: a version line per
block, a plan, results numbered 1..N, two spaces of indentation per nesting
level, `# ` diagnostics, directives after ` # ` (SKIP, TIMEOUT, XFAIL).
pmutest adds: per-CPU blocks named cpuN-apicM, a summary line, an end
marker, and a `# deviations:` block naming each known deviation that turned
a result into XFAIL.
"""
import re
from dataclasses import dataclass, field

OUTCOMES = ('pass', 'fail', 'skip', 'timeout', 'xfail')

# Firmware and GRUB paint the screen with ANSI/VT100 sequences (CSI, OSC,
# charset selection, two-byte escapes); none of them belong in a KTAP line.
_ESCAPE_RE = re.compile(r'\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?'
                        r'|[()][0-9A-Za-z]|[@-Z\\-_])')
_CONTROL_RE = re.compile(r'[\x00-\x08\x0b-\x1f\x7f]')


def clean_line(raw):
    """One serial line without escape sequences, CR or other control bytes."""
    return _CONTROL_RE.sub('', _ESCAPE_RE.sub('', raw)).rstrip()


KTAP_VERSION = 'KTAP version 1'
_PLAN_RE = re.compile(r'^1\.\.(\d+)$')
_RESULT_RE = re.compile(r'^(ok|not ok) (\d+)(?: +([^#]*?))? *(?:#\s*(.*))?$')
_DIRECTIVE_RE = re.compile(r'^(SKIP|TIMEOUT|XFAIL)\b\s*(.*)$', re.IGNORECASE)
# "XFAIL ID[,ID...]: what was seen"
_XFAIL_RE = re.compile(r'^([^\s:,]+(?:,[^\s:,]+)*)(?::\s*(.*))?$')
_SUBTEST_RE = re.compile(r'^# Subtest: (.+)$')
_SUMMARY_RE = re.compile(r'^# pmutest: (\d+) passed, (\d+) failed, (\d+) skipped(?:, (\d+) xfail)?$')
_END_RE = re.compile(r'^# pmutest: end exit=0x([0-9a-fA-F]+)$')
_SMP_RE = re.compile(r'^# smp: (\d+) of (\d+) CPUs? online(?: \(([^)]*)\))?$')
_DEVIATIONS_RE = re.compile(r'^# deviations: (\d+) seen$')
_DEVIATION_RE = re.compile(r'^# deviation (\S+) cpus (\S+) tests (\S+): (.*)$')
_SOURCE_MARK = ' (source: '
# Per-CPU blocks are named cpu<N>-apic<ID>; their leaves get "@<block>".
_CPU_BLOCK_RE = re.compile(r'^cpu(\d+)(?:$|-)')

SUMMARY_LINE_FORMAT = "'# pmutest: P passed, F failed, S skipped[, X xfail]'"


@dataclass
class Leaf:
    """One test result that does not close a nested block."""
    name: str
    outcome: str                  # one of OUTCOMES
    reason: str = ''              # SKIP reason, TIMEOUT budget, or what an XFAIL saw
    suite: str = 'pmutest'        # nearest enclosing non-CPU block
    cpu: str = ''                 # enclosing per-CPU block, '' if none
    diagnostics: list = field(default_factory=list)
    lineno: int = 0
    xfail_ids: tuple = ()         # the deviation IDs an XFAIL names

    @property
    def identity(self):
        return '%s@%s' % (self.name, self.cpu) if self.cpu else self.name

    @property
    def cpu_number(self):
        m = _CPU_BLOCK_RE.match(self.cpu)
        return int(m.group(1)) if m else None


@dataclass
class Deviation:
    """One line of the '# deviations:' block: a known deviation seen."""
    id: str
    cpus: str
    tests: tuple
    what: str
    source: str
    lineno: int = 0


@dataclass
class KtapLog:
    """What parse_ktap() found; errors lists every structural problem."""
    leaves: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    started: bool = False
    summary: tuple = None         # (passed, failed, skipped, xfail) as printed; xfail None if absent
    end_code: int = None          # the kernel's isa-debug-exit code
    smp: tuple = None             # (online, present, mode)
    deviations: list = field(default_factory=list)
    deviations_seen: int = None   # K of '# deviations: K seen'
    # Diagnostics no leaf owns: (context, text); context is '(run)' for the
    # top level, else the suite (and '@cpuN-apicM' for a per-CPU block).
    notes: list = field(default_factory=list)

    def counts(self):
        c = dict.fromkeys(OUTCOMES, 0)
        for leaf in self.leaves:
            c[leaf.outcome] += 1
        return c

    def summary_counts(self):
        """Leaf counts as the summary line groups them: an XFAIL is an ok
        result and counts as passed (and again as xfail); a timeout is a
        failure."""
        c = self.counts()
        return (c['pass'] + c['xfail'], c['fail'] + c['timeout'], c['skip'], c['xfail'])

    def end_status(self):
        return None if self.end_code is None else (self.end_code << 1) | 1

    def deviation_ids(self):
        return sorted({d.id for d in self.deviations})


@dataclass
class _Block:
    level: int
    lineno: int
    name: str = ''
    plan: int = None
    results: int = 0
    next_number: int = 1


def _leaf_outcome(status, directive):
    """(outcome, reason, xfail ids, problem) for a result's status word and
    directive text."""
    m = _DIRECTIVE_RE.match(directive or '')
    if not m:
        return ('pass' if status == 'ok' else 'fail'), '', (), None
    word, rest = m.group(1).upper(), m.group(2).strip()
    if word == 'SKIP':
        return 'skip', rest, (), None
    if word == 'TIMEOUT':
        return 'timeout', rest, (), None
    x = _XFAIL_RE.match(rest)
    if status != 'ok':
        return 'fail', rest, (), 'XFAIL on a not ok line (a matched deviation is reported as ok)'
    if not x:
        return 'xfail', rest, (), 'XFAIL names no deviation ID'
    return 'xfail', (x.group(2) or '').strip(), tuple(x.group(1).split(',')), None


def _block_label(block):
    return "block '%s'" % block.name if block.name else 'top level'


def _check_plan(block, errors, why):
    if block.plan is None:
        errors.append('line %d: %s has no plan line' % (block.lineno, _block_label(block)))
    elif block.results != block.plan:
        errors.append('%s: %s planned %d results, saw %d'
                      % (why, _block_label(block), block.plan, block.results))


def parse_cpu_list(text):
    """'0-3,6' -> {0, 1, 2, 3, 6}; None if it is not such a list."""
    cpus = set()
    for part in text.split(','):
        m = re.fullmatch(r'(\d+)(?:-(\d+))?', part)
        if not m:
            return None
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            return None
        cpus.update(range(lo, hi + 1))
    return cpus


class _Parser:
    """Line-by-line KTAP state machine: a stack of open blocks, one per level."""

    def __init__(self):
        self.log = KtapLog()
        self.stack = []
        self.pending = {}          # level -> (context, text) diagnostics for its next result
        self.after_end_reported = False

    def error(self, lineno, msg):
        self.log.errors.append('line %d: %s' % (lineno, msg))

    def feed(self, lineno, line):
        if not self.log.started:
            # Everything before the first version line is firmware/GRUB noise;
            # a clear-screen sequence may share the line, hence endswith().
            if line.endswith(KTAP_VERSION):
                self.log.started = True
                self.stack = [_Block(0, lineno)]
            return
        if not line.strip():
            return
        if self.log.end_code is not None:
            if not self.after_end_reported:
                self.error(lineno, 'output after the end marker: %r' % line)
                self.after_end_reported = True
            return
        body = line.lstrip(' ')
        indent = len(line) - len(body)
        if indent % 2:
            self.error(lineno, 'indentation of %d spaces is not a multiple of 2: %r' % (indent, line))
            return
        level = indent // 2
        if body == KTAP_VERSION:
            self.open_block(lineno, level)
        elif _PLAN_RE.match(body):
            self.plan(lineno, level, int(_PLAN_RE.match(body).group(1)))
        elif _RESULT_RE.match(body):
            self.result(lineno, level, _RESULT_RE.match(body))
        elif body.startswith('#'):
            self.comment(lineno, level, body)
        # Any other line is free text (KTAP lets parsers ignore it).

    def open_block(self, lineno, level):
        if level == 0:
            self.error(lineno, 'a second top-level version line (did the machine reset?)')
            return
        if level > len(self.stack):
            self.error(lineno, 'version line at nesting level %d, but only %d block(s) open'
                       % (level, len(self.stack)))
            return
        while len(self.stack) > level:
            lost = self.stack.pop()
            self.error(lineno, '%s ended without its own result line' % _block_label(lost))
            _check_plan(lost, self.log.errors, 'line %d' % lineno)
        self.stack.append(_Block(level, lineno))

    def plan(self, lineno, level, count):
        top = self.stack[-1]
        if level != top.level:
            self.error(lineno, 'plan at nesting level %d inside a level-%d block' % (level, top.level))
        elif top.plan is not None:
            self.error(lineno, 'second plan line in %s' % _block_label(top))
        else:
            top.plan = count

    def comment(self, lineno, level, body):
        m = _SUBTEST_RE.match(body)
        if m and level == self.stack[-1].level and not self.stack[-1].name:
            self.stack[-1].name = m.group(1).strip()
            return
        if level == 0 and self.top_level_fact(lineno, body):
            return
        self.pending.setdefault(level, []).append((self.context(level), body[1:].strip()))

    def context(self, level):
        """Where a diagnostic at this level was printed: '(run)' at the top
        level, else its suite, with '@cpuN-apicM' inside a per-CPU block."""
        names = [b.name for b in self.stack[1:level + 1]]
        suites = [n for n in names if n and not _CPU_BLOCK_RE.match(n)]
        cpus = [n for n in names if _CPU_BLOCK_RE.match(n)]
        if not suites:
            return '(run)'
        return suites[-1] + ('@' + cpus[-1] if cpus else '')

    def top_level_fact(self, lineno, body):
        """Summary, end marker, CPU count and the deviations block."""
        log = self.log
        m = _SUMMARY_RE.match(body)
        if m:
            log.summary = tuple(int(x) if x is not None else None for x in m.groups())
            return True
        m = _END_RE.match(body)
        if m:
            log.end_code = int(m.group(1), 16)
            return True
        m = _SMP_RE.match(body)
        if m:
            log.smp = (int(m.group(1)), int(m.group(2)), m.group(3) or '')
            return True
        m = _DEVIATIONS_RE.match(body)
        if m:
            if log.deviations_seen is not None:
                self.error(lineno, "a second '# deviations:' line")
            log.deviations_seen = int(m.group(1))
            return True
        m = _DEVIATION_RE.match(body)
        if m:
            self.deviation(lineno, m)
            return True
        return False

    def deviation(self, lineno, m):
        ident, cpus, tests, rest = m.groups()
        what, mark, source = rest.rpartition(_SOURCE_MARK)
        if not mark or not source.endswith(')'):
            self.error(lineno, "deviation %s has no '(source: ...)' at its end" % ident)
            what, source = rest, ''
        if self.log.deviations_seen is None:
            self.error(lineno, "deviation %s before the '# deviations: K seen' line" % ident)
        if parse_cpu_list(cpus) is None:
            self.error(lineno, "deviation %s: cpus %r is not a CPU list like 0-3,6" % (ident, cpus))
        self.log.deviations.append(Deviation(ident, cpus, tuple(tests.split(',')), what.strip(),
                                             source[:-1].strip(), lineno))

    def result(self, lineno, level, m):
        if level > self.stack[-1].level:
            self.error(lineno, 'result at nesting level %d deeper than any open block' % level)
            return
        closed = []
        while self.stack[-1].level > level:
            closed.append(self.stack.pop())
            _check_plan(closed[-1], self.log.errors, 'line %d' % lineno)
        for lost in closed[:-1]:
            self.error(lineno, '%s has no result line of its own' % _block_label(lost))
        for deeper in [lv for lv in self.pending if lv > level]:
            self.log.notes.extend(self.pending.pop(deeper))
        block = self.stack[-1]
        number, name = int(m.group(2)), (m.group(3) or '').strip()
        if number != block.next_number:
            self.error(lineno, 'result number %d, expected %d' % (number, block.next_number))
        block.next_number = number + 1
        block.results += 1
        diagnostics = self.pending.pop(level, [])
        if closed:
            subtest = closed[-1].name
            if subtest and name != subtest:
                self.error(lineno, "result '%s' closes subtest '%s'" % (name, subtest))
            self.log.notes.extend(diagnostics)
            return
        if not name:
            self.error(lineno, 'result %d has no test name' % number)
        outcome, reason, ids, problem = _leaf_outcome(m.group(1), m.group(4))
        if problem:
            self.error(lineno, '%s: %s' % (name or 'result %d' % number, problem))
        names = [b.name for b in self.stack[1:]]
        cpus = [n for n in names if _CPU_BLOCK_RE.match(n)]
        suites = [n for n in names if not _CPU_BLOCK_RE.match(n)]
        # Leaves of a per-CPU block carry its name ("x@cpu1-apic1") since
        # the kernel names them for line-at-a-time consumers; older logs
        # do not. The leaf's name is the bare test name either way.
        if cpus and name.endswith('@' + cpus[-1]):
            name = name[:-len(cpus[-1]) - 1]
        self.log.leaves.append(Leaf(name=name, outcome=outcome, reason=reason,
                                    suite=suites[-1] if suites else 'pmutest',
                                    cpu=cpus[-1] if cpus else '',
                                    diagnostics=[text for _, text in diagnostics],
                                    lineno=lineno, xfail_ids=ids))

    def finish(self):
        log = self.log
        if not log.started:
            log.errors.append("no '%s' line: the kernel never started reporting" % KTAP_VERSION)
            return log
        while len(self.stack) > 1:
            block = self.stack.pop()
            log.errors.append('log ends inside %s opened at line %d (truncated?)'
                              % (_block_label(block), block.lineno))
        for level in sorted(self.pending):
            log.notes.extend(self.pending[level])
        _check_plan(self.stack[0], log.errors, 'end of log')
        check_summary(log)
        check_deviations(log)
        if log.end_code is None:
            log.errors.append("no end marker '# pmutest: end exit=0xNN' (truncated?)")
        return log


def check_summary(log):
    if log.summary is None:
        log.errors.append('no %s summary line' % SUMMARY_LINE_FORMAT)
        return
    passed, failed, skipped, xfail = log.summary_counts()
    said = '%d passed, %d failed, %d skipped' % log.summary[:3]
    if log.summary[3] is not None:
        said += ', %d xfail' % log.summary[3]
    got = '%d passed, %d failed, %d skipped' % (passed, failed, skipped)
    if xfail or log.summary[3] is not None:
        got += ', %d xfail' % xfail
    if said != got:
        log.errors.append('summary line says %s; the results say %s' % (said, got))


def check_deviations(log):
    """The deviations block and the XFAIL results must tell the same story."""
    if log.deviations_seen is not None and log.deviations_seen != len(log.deviations):
        log.errors.append("'# deviations: %d seen' but %d deviation lines follow"
                          % (log.deviations_seen, len(log.deviations)))
    listed = {d.id: d for d in log.deviations}
    for leaf in log.leaves:
        for ident in leaf.xfail_ids:
            dev = listed.get(ident)
            if dev is None:
                log.errors.append('line %d: %s is XFAIL %s, which the deviations block does not list'
                                  % (leaf.lineno, leaf.identity, ident))
                continue
            cpus = parse_cpu_list(dev.cpus) or set()
            if leaf.cpu_number is not None and leaf.cpu_number not in cpus:
                log.errors.append('line %d: %s is XFAIL %s, but deviation %s lists cpus %s'
                                  % (leaf.lineno, leaf.identity, ident, ident, dev.cpus))
    for dev in log.deviations:
        for test in dev.tests:
            if not any(lf.name == test and dev.id in lf.xfail_ids for lf in log.leaves):
                log.errors.append('line %d: deviation %s lists test %s, but no %s result is XFAIL %s'
                                  % (dev.lineno, dev.id, test, test, dev.id))


def parse_ktap(text):
    """Parse a whole serial log (noise, escapes, CR LF or LF allowed) into a KtapLog."""
    parser = _Parser()
    for lineno, raw in enumerate(text.split('\n'), 1):
        parser.feed(lineno, clean_line(raw))
    return parser.finish()


def end_marker_seen(text):
    """Whether a (partial) serial log holds the end marker."""
    if '# pmutest: end exit=' not in text:     # cheap test first: called every poll
        return False
    return any(_END_RE.match(clean_line(line)) for line in text.split('\n'))


def version_line_seen(text):
    return any(clean_line(line).endswith(KTAP_VERSION) for line in text.split('\n'))


def diagnostics_before_version(text):
    """The '#' lines before the first version line. KTAP consumers drop
    everything there as preamble, together with what firmware and GRUB
    print; neither of those prints such a line, and the kernel prints
    nothing before its version line (boot/main.c), so each one is a kernel
    note lost to every consumer. A log without a version line gives none:
    nothing in it was kept, so nothing tells the two apart."""
    found = []
    for raw in text.split('\n'):
        line = clean_line(raw)
        if line.endswith(KTAP_VERSION):
            return found
        if line.lstrip().startswith('#'):
            found.append(line.strip())
    return []
