#!/usr/bin/env python3
"""Run host unit-test programs, echo their output, and print one total line.

Each program prints "# host.<area>: N passed, M failed, K skipped" last; a
program that crashes or omits that line counts as one failure."""
import re
import subprocess
import sys

SUMMARY = re.compile(r'^# host\.(\S+): (\d+) passed, (\d+) failed, (\d+) skipped$')


def main(argv):
    total = [0, 0, 0]
    for prog in argv[1:]:
        proc = subprocess.run([prog], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, errors='replace')
        sys.stdout.write(proc.stdout)
        found = None
        for line in proc.stdout.splitlines():
            m = SUMMARY.match(line)
            if m:
                found = [int(m.group(i)) for i in (2, 3, 4)]
        if found is None:
            print('not ok %s # exited %d without a summary line' % (prog, proc.returncode))
            found = [0, 1, 0]
        elif proc.returncode != 0 and found[1] == 0:
            print('not ok %s # exited %d' % (prog, proc.returncode))
            found[1] += 1
        for i in range(3):
            total[i] += found[i]
    print('host: %d passed, %d failed, %d skipped' % tuple(total))
    return 1 if total[1] else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
