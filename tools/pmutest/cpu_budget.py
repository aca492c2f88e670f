"""Run a command with a budget of CPU seconds rather than wall-clock ones.

A guest under TCG advances only while its QEMU is on a CPU: on a busy host
(a shared CI runner, a build beside it) a wall-clock timeout fails a run
that is merely slow.  make emu-selftest's guest prints nothing for long
stretches (the step-mode cost loop), so stretching a timeout on output
(pmutest.qemu.run_qemu) does not fit it; its budget counts the CPU time the
command's process has had instead (user + system, all its threads, from
/proc/PID/stat).  A wall-clock cap, WALL_FACTOR times the budget, still
ends a run that is given no CPU at all (a stopped or blocked process).

At either limit the command is killed, one line on stderr says which limit
and how busy the host was (pmutest.qemu.host_note), and the exit status is
124, as timeout(1) gives.  Otherwise the command's own status is returned
(128 + N for a signal N).  Its output is not touched.

  python3 -m pmutest.cpu_budget [--wall-factor F] SECONDS COMMAND [ARG...]
"""
import argparse
import subprocess
import sys
import time

from .qemu import _cpu_seconds, host_note

WALL_FACTOR = 20
POLL_SECONDS = 0.2
TIMED_OUT = 124


def run(argv, budget, wall_factor=WALL_FACTOR, poll=POLL_SECONDS, err=sys.stderr):
    """Run argv; return its exit status, or TIMED_OUT at a limit."""
    proc = subprocess.Popen(argv)
    start = time.monotonic()
    try:
        while True:
            try:
                status = proc.wait(poll)
                return 128 - status if status < 0 else status
            except subprocess.TimeoutExpired:
                pass
            elapsed = time.monotonic() - start
            cpu = _cpu_seconds(proc.pid)
            if cpu is not None and cpu > budget:
                why = 'its budget of %g CPU seconds was spent' % budget
            elif elapsed > budget * wall_factor:
                why = 'it had %.0f s of wall-clock time, %g times its CPU budget' % (elapsed, wall_factor)
            else:
                continue
            err.write('cpu-budget: %s stopped: %s (%s)\n'
                      % (argv[0], why, host_note(proc.pid, elapsed)))
            err.flush()
            return TIMED_OUT
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def main(args=None):
    parser = argparse.ArgumentParser(prog='python3 -m pmutest.cpu_budget',
                                     description=__doc__.split('\n\n')[0])
    parser.add_argument('--wall-factor', type=float, default=WALL_FACTOR)
    parser.add_argument('seconds', type=float)
    parser.add_argument('command', nargs=argparse.REMAINDER)
    opts = parser.parse_args(args)
    if not opts.command:
        parser.error('no command')
    return run(opts.command, opts.seconds, opts.wall_factor)


if __name__ == '__main__':
    sys.exit(main())
