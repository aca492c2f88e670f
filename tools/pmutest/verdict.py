"""The verdict on one run: is the log complete, does the QEMU status agree
with it, is every outcome the expected one, are the CPUs all there. Each
reason the run is not a pass is one line."""
from dataclasses import dataclass

from .expect import check_expectations, judge_all

# QEMU exit statuses: isa-debug-exit makes QEMU exit with (code << 1) | 1.
STATUS_PASS, STATUS_FAIL, STATUS_ALL_SKIP, STATUS_PANIC = 33, 35, 77, 127
STATUS_QEMU_ERROR, STATUS_RESET = 1, 0
STATUS_MEANING = {
    STATUS_PASS: 'no test failed',
    STATUS_FAIL: 'some test failed',
    STATUS_ALL_SKIP: 'every test skipped',
    STATUS_PANIC: 'kernel panic',
    STATUS_QEMU_ERROR: "QEMU's own error",
    STATUS_RESET: 'triple fault or reset under -no-reboot',
}
# How long QEMU may keep running after the end marker before the runner
# decides isa-debug-exit is missing: a busy host may take seconds to run
# QEMU's exit (5 s were too few under 4x oversubscription).
END_GRACE_SECONDS = 30


@dataclass
class RunResult:
    """How a QEMU run ended; status is None when it was killed."""
    status: int = None
    timed_out: bool = False
    stopped: bool = False         # killed because stop_when() said so
    stderr: str = ''
    elapsed: float = 0.0
    host_note: str = ''           # at a timeout: how busy the host was
    stop_reason: str = ''         # stopped by stop_when() for a reason of its own


def describe_status(status):
    if status is not None and status < 0:
        return 'killed by signal %d' % -status
    return STATUS_MEANING.get(status, 'unknown')


def expected_statuses(log):
    """The statuses the log's results imply, and why. An XFAIL is an ok
    result: it neither fails the run nor counts as skipped."""
    c = log.counts()
    if c['fail'] or c['timeout']:
        return {STATUS_FAIL}, 'a test failed'
    if not log.leaves:
        # No test ran: "no test failed" and "every test skipped" both hold.
        return {STATUS_PASS, STATUS_ALL_SKIP}, 'no test ran'
    if c['skip'] == len(log.leaves):
        return {STATUS_ALL_SKIP}, 'every test skipped'
    return {STATUS_PASS}, 'no test failed'


def check_status(log, run, exp, timeout=None):
    """Problems with how the run ended. run is None for a stored log, whose
    end marker then stands in for the QEMU status."""
    problems = []
    if run is not None and run.timed_out:
        note = []
        if run.elapsed and timeout and run.elapsed > timeout + 1:
            note.append('it ran %.0f s: still printing at the timeout, it was given more' % run.elapsed)
        if run.host_note:
            note.append(run.host_note)
        return ['timeout: QEMU was still running after %g s and was killed%s'
                % (timeout, ' (%s)' % '; '.join(note) if note else '')]
    if run is not None and run.stopped and run.stop_reason:
        return [run.stop_reason]
    if run is not None and run.stopped:
        return ['QEMU kept running %d s after the end marker (is isa-debug-exit missing?)'
                % END_GRACE_SECONDS]
    status = log.end_status() if run is None else run.status
    if status is None:
        return problems                   # no end marker: already a log error
    if exp.exit is not None:
        wanted, why = {exp.exit}, 'as %s says' % exp.source
    else:
        wanted, why = expected_statuses(log)
    source = 'end marker gives QEMU status' if run is None else 'QEMU status'
    if status not in wanted:
        msg = '%s %d (%s), expected %s (%s)' % (
            source, status, describe_status(status),
            ' or '.join(str(s) for s in sorted(wanted)), why)
        if run is not None and status == STATUS_QEMU_ERROR and run.stderr.strip():
            msg += ': ' + run.stderr.strip().splitlines()[-1]
        problems.append(msg)
    if run is not None and log.end_code is not None and log.end_status() != status:
        problems.append('end marker says exit=0x%02x (status %d) but QEMU exited with %d'
                        % (log.end_code, log.end_status(), status))
    return problems


def check_cpus(log, expected):
    if expected is None:
        return []
    if log.smp is None:
        return ["expected %d CPUs online, but the log has no '# smp: N of M CPUs online' line"
                % expected]
    if log.smp[0] != expected:
        return ['expected %d CPUs online, the kernel brought up %d of %d'
                % (expected, log.smp[0], log.smp[1])]
    return []


@dataclass
class Verdict:
    """Everything the reports need: the problems in reading order, and each
    leaf's judgement against the expect file."""
    problems: list
    judgements: list

    @property
    def passed(self):
        return not self.problems


def verdict(log, run, exp, expected_cpus, timeout=None):
    judgements = judge_all(log, exp)
    problems = (['log: ' + e for e in log.errors] + check_status(log, run, exp, timeout)
                + check_expectations(log, exp, judgements) + check_cpus(log, expected_cpus))
    return Verdict(problems, judgements)


def verdict_problems(log, run, exp, expected_cpus, timeout=None):
    """Every reason the run is not a pass, one line each, in reading order."""
    return verdict(log, run, exp, expected_cpus, timeout).problems


def format_summary(log, problems, run=None, log_path=None):
    c = log.counts()
    out = ['', '== pmutest-run summary ==']
    if log_path:
        out.append('serial log: %s' % log_path)
    line = ('tests: %d leaves: %d passed, %d failed, %d timed out, %d skipped'
            % (len(log.leaves), c['pass'], c['fail'], c['timeout'], c['skip']))
    if c['xfail']:
        line += ', %d xfail' % c['xfail']
    out.append(line)
    if log.smp:
        out.append('cpus: %d of %d online%s' % (log.smp[0], log.smp[1],
                                                ' (%s)' % log.smp[2] if log.smp[2] else ''))
    if run is not None and not run.timed_out and not run.stopped:
        out.append('qemu status: %d (%s) after %.1f s'
                   % (run.status, describe_status(run.status), run.elapsed))
    if log.deviations:
        out.append('deviations (known, reported as XFAIL):')
        out.extend('  %s on cpus %s: %s (source: %s)' % (d.id, d.cpus, d.what, d.source)
                   for d in log.deviations)
    failed = [lf for lf in log.leaves if lf.outcome in ('fail', 'timeout')]
    if failed:
        out.append('failures:')
        for leaf in failed:
            extra = ' # TIMEOUT %s' % leaf.reason if leaf.outcome == 'timeout' else ''
            out.append('  not ok %s (%s, line %d)%s' % (leaf.identity, leaf.suite, leaf.lineno, extra))
            out.extend('      # ' + d for d in leaf.diagnostics)
    if problems:
        out.append('problems:')
        out.extend('  ' + p for p in problems)
        out.append('verdict: FAIL (%d problem%s)' % (len(problems), '' if len(problems) == 1 else 's'))
    else:
        out.append('verdict: PASS')
    return '\n'.join(out)
