"""A deliberately naive KTAP consumer in the style of Linux's
tools/testing/kunit/kunit_parser.py, written from the KTAP rules
(Documentation/dev-tools/ktap.rst) to stand in for the line-splitting
consumers CI systems use. It is what pmutest's own parser is not:

  - it splits the capture into lines one way and trusts the result:
    'splitlines' (Python's str.splitlines, what kunit.py does with a file)
    turns CR CR LF into a line and an empty line; 'lf' (split on LF only)
    leaves a CR at the start of a line;
  - it takes whatever stands before the first 'KTAP version' as a prefix
    (a console timestamp, say) and cuts that many characters off every
    later line;
  - a test header is strict: 'KTAP version 1', then an optional
    '# Subtest: NAME', then the plan, on consecutive lines.

The tests and the boot matrix run serial logs through it: a log that
passes here parses in kunit_parser-like consumers too.
"""
import re

_VERSION = 'KTAP version 1'
_PLAN_RE = re.compile(r'^1\.\.(\d+)$')
_RESULT_RE = re.compile(r'^(ok|not ok) (\d+)(?: ([^#]*?))?\s*(?:# (.*))?$')
_CPU_RE = re.compile(r'^cpu\d+(?:$|-)')


def split(text, how):
    if how == 'splitlines':
        return text.splitlines()
    if how == 'lf':
        return [line.rstrip('\n') for line in text.split('\n')]
    raise ValueError(how)


class _Lines:
    def __init__(self, lines):
        self.lines, self.i = lines, 0

    def peek(self):
        return self.lines[self.i] if self.i < len(self.lines) else None

    def pop(self):
        line = self.peek()
        self.i += 1
        return line


def _outcome(status, directive):
    word = (directive or '').split(' ', 1)[0].upper()
    if word == 'SKIP':
        return 'skip'
    if word == 'XFAIL' and status == 'ok':
        return 'xfail'
    if word == 'TIMEOUT':
        return 'timeout'
    return 'pass' if status == 'ok' else 'fail'


def _block(lines, indent, path, leaves, errors):
    """One test block at this indentation: header, then plan results, each
    a leaf or a nested block followed by its own result line."""
    pad = ' ' * indent
    if lines.pop() != pad + _VERSION:
        errors.append('expected %r' % (pad + _VERSION))
        return None
    name = ''
    line = lines.peek()
    if line is not None and line.startswith(pad + '# Subtest: '):
        name = lines.pop()[len(pad + '# Subtest: '):].strip()
    plan = _PLAN_RE.match((lines.peek() or '')[indent:]) if (lines.peek() or '').startswith(pad) else None
    if not plan:
        errors.append('%s: no plan right after the header (found %r)' % (name or 'top level', lines.peek()))
        return name
    lines.pop()
    inner = path + [name] if name else path
    for number in range(1, int(plan.group(1)) + 1):
        child = None
        while True:
            line = lines.peek()
            if line is None:
                errors.append('%s: ran out of lines before result %d' % (name or 'top level', number))
                return name
            if line == pad + '  ' + _VERSION:
                child = _block(lines, indent + 2, inner, leaves, errors)
                continue
            if line.startswith(pad) and _RESULT_RE.match(line[indent:]):
                break
            lines.pop()                 # a diagnostic or free text
        m = _RESULT_RE.match(lines.pop()[indent:])
        if int(m.group(2)) != number:
            errors.append('%s: result %s where %d was expected' % (name or 'top level', m.group(2), number))
        if child is None:
            cpus = [p for p in inner if _CPU_RE.match(p)]
            test = (m.group(3) or '').strip()
            suffix = '@' + cpus[-1] if cpus else ''
            if suffix and not test.endswith(suffix):    # logs before per-CPU leaf names
                test += suffix
            leaves.append((test, _outcome(m.group(1), m.group(4))))
        elif child != (m.group(3) or '').strip():
            errors.append("result %r closes block %r" % (m.group(3), child))
    return name


def parse(text, how='splitlines'):
    """(leaves as [(identity, outcome)], errors) for a whole capture."""
    lines = split(text, how)
    start = next((i for i, line in enumerate(lines) if _VERSION in line), None)
    if start is None:
        return [], ['no %r line' % _VERSION]
    prefix = len(lines[start].rstrip().split(_VERSION)[0])
    body = [line.rstrip()[prefix:] for line in lines[start:]]
    leaves, errors = [], []
    _block(_Lines(body), 0, [], leaves, errors)
    return leaves, errors
