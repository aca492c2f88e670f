"""LAVA's side of ci-examples/lava-job*.yaml, rebuilt so the tests can run it
without a LAVA lab: the QEMU command its stock `qemu` device type renders
for an amd64 job, and its test monitor (Linaro lava,
lava_dispatcher/actions/test/monitor.py) step for step.

The monitor: wait for `start`; then repeatedly take the earliest match of
[end, pattern] in what has arrived (pexpect compiles the patterns with
re.DOTALL and searches the unconsumed buffer), consume up to the match end,
map `result` through the fixupdict (it must then be pass, fail, skip or
unknown), and name the case by lower-casing `test_case_id` and turning each
run of non-word characters into '_'.
"""
import re
import shlex

LAVA_RESULTS = ('pass', 'fail', 'skip', 'unknown')
# What the stock template (etc/dispatcher-config/device-types/qemu.jinja2)
# adds for arch amd64 whatever the job says.
_TEMPLATE_NET = ['-net', 'nic,model=virtio,macaddr=52:54:00:12:34:58', '-net', 'user']


def case_id(raw):
    return re.sub(r'\W+', '_', raw.strip().lower())


def job_parts(job):
    """(context, deploy action, test action's monitors) of a job document."""
    actions = {list(a)[0]: a[list(a)[0]] for a in job['actions']}
    return job.get('context') or {}, actions['deploy'], actions['test']['monitors']


def qemu_command(job, iso, qemu='qemu-system-x86_64', extra=()):
    """The argv the stock qemu device type starts for this amd64 job: -cpu
    host -enable-kvm unless the context says no_kvm (it reads neither cpu
    nor machine for amd64), the template's own options, extra_options, then
    the image's image_arg with {iso} filled in."""
    context, deploy, _ = job_parts(job)
    if context.get('arch') not in ('amd64', 'x86_64'):
        raise ValueError('not an amd64 job')
    cmd = [qemu]
    if not context.get('no_kvm'):
        cmd += ['-cpu', 'host', '-enable-kvm']
    cmd += ['-nographic'] + _TEMPLATE_NET
    cmd += ['-m', str(context.get('memory', 512)), '-monitor', context.get('monitor', 'none')]
    for option in list(context.get('extra_options') or []) + list(extra):
        cmd += shlex.split(option)
    cmd += shlex.split(deploy['images']['iso']['image_arg'].replace('{iso}', iso))
    return cmd


class Monitor:
    """One LAVA test monitor fed with text as it arrives."""

    def __init__(self, monitor):
        self.start = re.compile(monitor['start'], re.DOTALL)
        self.patterns = [re.compile(monitor['end'], re.DOTALL), re.compile(monitor['pattern'], re.DOTALL)]
        self.fixup = monitor.get('fixupdict') or {}
        self.buf, self.started, self.ended = '', False, False
        self.results, self.bad = [], []      # [(case, result)], results LAVA rejects
        self.report = {}                    # what LAVA's dispatcher keeps: case -> last result

    def feed(self, chunk):
        self.buf += chunk
        while not self.ended:
            if not self.started:
                m = self.start.search(self.buf)
                if not m:
                    return
                self.buf, self.started = self.buf[m.end():], True
                continue
            best = None
            for i, p in enumerate(self.patterns):
                m = p.search(self.buf)
                if m and (best is None or m.start() < best[1].start()):
                    best = (i, m)
            if best is None:
                return
            self.buf = self.buf[best[1].end():]
            if best[0] == 0:
                self.ended = True
                return
            self.record(best[1].groupdict())

    def record(self, groups):
        result = self.fixup.get(groups['result'], groups['result'])
        if result not in LAVA_RESULTS:
            self.bad.append(groups['result'])
            return
        case = case_id(groups['test_case_id'])
        self.results.append((case, result))
        self.report[case] = result


def run_monitor(chunks, monitor):
    m = Monitor(monitor)
    for chunk in chunks:
        m.feed(chunk)
    return m


def expected_results(log, text, fixup):
    """What a monitor should report for a log, from pmutest's own parse:
    every leaf, plus the top-level suite result lines (the pattern cannot
    tell those from leaves), never the per-CPU block lines; each outcome as
    the fixupdict maps the word the pattern captures."""
    from .ktap import clean_line
    word = {'pass': 'ok', 'fail': 'not ok', 'timeout': 'TIMEOUT', 'skip': 'SKIP', 'xfail': 'XFAIL'}
    lines = text.split('\n')
    result = re.compile(r'^(ok|not ok) \d+ ([a-z0-9_.]+(?:@cpu[0-9]+-apic[0-9]+)?)(?: # (SKIP|TIMEOUT|XFAIL)\b.*)?$')
    # A leaf as its line names it: newer kernels add the per-CPU block
    # ("x@cpu1-apic1"), which is what keeps CPUs apart in the report.
    rows = []
    for leaf in log.leaves:
        m = result.match(clean_line(lines[leaf.lineno - 1]).strip())
        rows.append((leaf.lineno, m.group(2) if m else leaf.name, word[leaf.outcome]))
    for lineno, line in enumerate(lines, 1):
        m = result.match(clean_line(line))
        if m:
            rows.append((lineno, m.group(2), m.group(3) or m.group(1)))
    return [(case_id(name), fixup.get(w, w)) for _, name, w in sorted(rows)]
