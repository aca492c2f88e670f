"""load-test: pmutest's verdicts on a busy host (docs/verdicts.md).

Runs the default suite, N times, while the host's cores run oversubscribed
(FACTOR x nproc busy loops this harness starts, and always stops: at the
end, on an error, on Ctrl-C or SIGTERM). Each run boots:

- a correct emulated PMU (--profile, default intel-v4) on the patched QEMU,
  judged by its tests/expect/emu/ file, at -smp 8;
- a plain -kernel TCG boot at -smp 8, judged by tests/expect/tcg.expect;
- a KVM boot at -smp 8 (expect auto) when QEMU can start a KVM guest here.

The legs of a run go at once (--sequential: one after another): the host
then has the busy loops and every leg's QEMU to run, more than FACTOR x
nproc, and a run takes as long as its slowest leg, not the sum. Every leg
that does not end with the runner's "verdict: PASS" is a false failure
(the PMUs are correct; only the host is busy): its reasons are printed.
The last line is exactly

    load-test: R runs, F false failures

R counts runs (each with all its legs), F the legs that failed.

  python3 -m harness.load_test [--runs N] [--factor 4] [--smp 8] [--profile NAME] [--sequential]
"""
import argparse
import concurrent.futures
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

from harness import _paths  # noqa: F401  (tools/ on sys.path)
from pmutest import qemu as pq  # noqa: E402

ROOT = _paths.ROOT
RUNNER = os.path.join(ROOT, 'tools', 'pmutest-run')
# Generous: the runner also stretches its timeout while the guest prints.
LEG_TIMEOUT = 900


class BusyLoops:
    """n processes spinning on the CPU; stopped by stop() (idempotent)."""

    def __init__(self, n):
        self.procs = []
        for _ in range(n):
            self.procs.append(subprocess.Popen([sys.executable, '-c', 'while True: pass'],
                                               stdin=subprocess.DEVNULL))

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                pass
        self.procs = []


def patched_qemu():
    """The emulated-PMU QEMU's path (emu/qemu/build.sh --print-path), or
    exit saying how to build it."""
    proc = subprocess.run([os.path.join(ROOT, 'emu', 'qemu', 'build.sh'), '--print-path'],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    path = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ''
    if proc.returncode != 0 or not os.path.isfile(path):
        sys.exit('load-test: no emulated-PMU QEMU (%s): run make emu-qemu' % path)
    return path


def legs(args):
    """(name, runner arguments) of one run."""
    k = ['--kernel', args.kernel, '--smp', str(args.smp), '--timeout', str(LEG_TIMEOUT), '--quiet']
    out = [('emu:%s' % args.profile,
            k + ['--profile', args.profile, '--qemu', args.qemu or patched_qemu(),
                 '--expect', os.path.join(ROOT, 'tests', 'expect', 'emu', args.profile + '.expect')]),
           ('tcg', k + ['--accel', 'tcg', '--expect', os.path.join(ROOT, 'tests', 'expect', 'tcg.expect')])]
    why, _ = pq.kvm_unusable_reason()
    if why is None:
        out.append(('kvm', k + ['--accel', 'kvm', '--expect', 'auto']))
    else:
        print('# load-test: no KVM leg: %s' % why, flush=True)
    return out


# The legs running now, each in a process group of its own (the runner and
# its QEMU), so that an interrupted load test stops them all.
LIVE = set()
LIVE_LOCK = threading.Lock()


def stop_legs():
    with LIVE_LOCK:
        for proc in LIVE:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass


def run_leg(name, argv, logdir, run):
    """Returns (ok, reasons, seconds)."""
    log = os.path.join(logdir, 'run%d-%s.log' % (run, name.replace(':', '-')))
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, RUNNER, '--log-file', log] + argv, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors='replace', start_new_session=True)
    with LIVE_LOCK:
        LIVE.add(proc)
    try:
        out, _ = proc.communicate()
    finally:
        with LIVE_LOCK:
            LIVE.discard(proc)
    secs = time.monotonic() - t0
    lines = out.splitlines()
    if proc.returncode == 0 and any(line.startswith('verdict: PASS') for line in lines):
        return True, [], secs
    start = next((i for i, line in enumerate(lines) if line.startswith(('failures:', 'problems:'))),
                 max(0, len(lines) - 20))
    reasons = [line.rstrip() for line in lines[start:] if line.strip()][:40]
    return False, reasons + ['(serial log: %s)' % log], secs


def load_average():
    try:
        return '%.1f' % os.getloadavg()[0]
    except OSError:
        return '?'


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--runs', type=int, default=int(os.environ.get('N', '10') or 10))
    p.add_argument('--factor', type=int, default=4, help='busy loops per CPU (default 4)')
    p.add_argument('--smp', type=int, default=8)
    p.add_argument('--profile', default='intel-v4', help='a correct (silicon) emulated profile')
    p.add_argument('--kernel', default=os.path.join(ROOT, 'build', 'pmutest.elf'))
    p.add_argument('--qemu', default=None, help='the emulated-PMU QEMU (default: emu/qemu/build.sh --print-path)')
    p.add_argument('--logdir', default=None)
    p.add_argument('--sequential', action='store_true', help="a run's legs one after another")
    args = p.parse_args(argv)
    if args.runs < 1 or args.factor < 0:
        p.error('--runs must be at least 1, --factor not negative')
    if not os.path.isfile(args.kernel):
        p.error('no kernel %s (make kernel)' % args.kernel)
    logdir = args.logdir or tempfile.mkdtemp(prefix='pmutest-load-')
    os.makedirs(logdir, exist_ok=True)

    # SIGTERM unwinds like Ctrl-C, so that the busy loops are stopped.
    def term(signum, frame):
        raise KeyboardInterrupt('signal %d' % signum)
    signal.signal(signal.SIGTERM, term)

    ncpu = os.cpu_count() or 1
    plan = legs(args)
    runs = false = 0
    busy = None
    try:
        busy = BusyLoops(args.factor * ncpu)
        print('# load-test: %d busy loops on %d CPUs (x%d), %d runs of %s at -smp %d, %s; logs in %s'
              % (args.factor * ncpu, ncpu, args.factor, args.runs, ', '.join(n for n, _ in plan),
                 args.smp, 'one leg at a time' if args.sequential else 'the legs at once', logdir),
              flush=True)
        for run in range(1, args.runs + 1):
            t0 = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(1 if args.sequential else len(plan)) as pool:
                done = [(name, pool.submit(run_leg, name, leg, logdir, run)) for name, leg in plan]
                for name, fut in done:
                    try:
                        ok, reasons, secs = fut.result()
                    except BaseException:
                        for _, f in done:
                            f.cancel()
                        stop_legs()
                        raise
                    print('%s run %d %s (%.0f s, load average %s)'
                          % ('ok' if ok else 'not ok', run, name, secs, load_average()), flush=True)
                    if not ok:
                        false += 1
                        for r in reasons:
                            print('    ' + r, flush=True)
            runs += 1
            print('# load-test: run %d took %.0f s' % (run, time.monotonic() - t0), flush=True)
    except KeyboardInterrupt as e:
        print('# load-test: interrupted (%s) after %d runs' % (e or 'Ctrl-C', runs), flush=True)
        if busy:
            busy.stop()
        print('load-test: %d runs, %d false failures' % (runs, false), flush=True)
        return 130
    finally:
        if busy:
            busy.stop()
    print('load-test: %d runs, %d false failures' % (runs, false), flush=True)
    return 1 if false else 0


if __name__ == '__main__':
    sys.exit(main())
