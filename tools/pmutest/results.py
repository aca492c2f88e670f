"""The project's result line, "<part>: N passed, M failed, K skipped", which
every part of `make test` prints last: its one format, and the two places
that add such lines up (the host test programs, and `make test`'s total).
A line that starts with '#' is a sub-total and is never added again."""
import re
import subprocess
import sys

LINE = re.compile(r'^(#\s*)?([\w.-]+): (\d+) passed, (\d+) failed(?:, (\d+) skipped)?$')


def format_line(part, passed, failed, skipped, subtotal=False):
    return '%s%s: %d passed, %d failed, %d skipped' % ('# ' if subtotal else '', part,
                                                        passed, failed, skipped)


def parse_line(line):
    """(part, [passed, failed, skipped], is a sub-total) or None."""
    m = LINE.match(line.strip())
    if not m:
        return None
    return m.group(2), [int(m.group(i) or 0) for i in (3, 4, 5)], bool(m.group(1))


def run_programs(programs, part='host', out=sys.stdout):
    """Run host unit-test programs, echo their output, print one total.
    Each program prints "# host.<area>: N passed, M failed, K skipped" last;
    one that crashes or omits that line counts as one failure."""
    total = [0, 0, 0]
    for prog in programs:
        proc = subprocess.run([prog], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, errors='replace')
        out.write(proc.stdout)
        found = None
        for line in proc.stdout.splitlines():
            parsed = parse_line(line)
            if parsed and parsed[2] and parsed[0].startswith(part + '.'):
                found = parsed[1]
        if found is None:
            print('not ok %s # exited %d without a summary line' % (prog, proc.returncode), file=out)
            found = [0, 1, 0]
        elif proc.returncode != 0 and found[1] == 0:
            print('not ok %s # exited %d' % (prog, proc.returncode), file=out)
            found[1] += 1
        total = [a + b for a, b in zip(total, found)]
    print(format_line(part, *total), file=out)
    return 1 if total[1] else 0


def total(args, out=sys.stdout):
    """Add up the parts' result lines in files and print the total last.
    Each argument is FILE or FILE:part,part,...: every named part must have
    printed its line (a part that crashed before its line is a failure).
    Returns 1 if anything failed or a part is missing."""
    sums, missing = [0, 0, 0], []
    for arg in args:
        path, _, parts = arg.partition(':')
        wanted = [p for p in parts.split(',') if p]
        seen, found = set(), False
        try:
            with open(path, errors='replace') as f:
                text = f.read()
        except OSError:
            text = ''
        for line in text.splitlines():
            parsed = parse_line(line)
            if parsed and not parsed[2]:
                seen.add(parsed[0])
                found = True
                sums = [a + b for a, b in zip(sums, parsed[1])]
        missing += ['%s (no "%s:" result line)' % (path, p) for p in wanted if p not in seen]
        if not found and not wanted:
            missing.append(path)
    for path in missing:
        print('total: missing: %s' % path, file=out)
    print('%d passed, %d failed, %d skipped' % tuple(sums), file=out)
    return 1 if sums[1] or missing else 0


def main(argv=None):
    """python3 -m pmutest.results --run PROGRAM...: run host test programs;
    python3 -m pmutest.results FILE[:part,...] ...: add up result lines."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ['--run']:
        return run_programs(argv[1:])
    return total(argv)


if __name__ == '__main__':
    sys.exit(main())
