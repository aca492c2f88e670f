#!/usr/bin/env python3
"""Add up the "<part>: N passed, M failed, K skipped" lines of the parts of
`make test` (lines starting with "#", indented or not, are sub-totals and
are not counted) and print the total as the last line. Each argument is
FILE or FILE:part,part,...: every named part must have printed its line
(a part that crashed before its line is a failure). Exit 1 if anything
failed or a part is missing."""
import re
import sys

LINE = re.compile(r'^(?:# )?([\w.-]+): (\d+) passed, (\d+) failed(?:, (\d+) skipped)?$')


def main(args):
    total = [0, 0, 0]
    missing = []
    for arg in args:
        path, _, parts = arg.partition(':')
        wanted = [p for p in parts.split(',') if p]
        seen = set()
        found = None
        try:
            text = open(path, errors='replace').read()
        except OSError:
            text = ''
        for line in text.splitlines():
            m = LINE.match(line.strip())
            # Only the parts' own totals: "host:", "runner:", "boot-matrix:", ...
            if m and not line.lstrip().startswith('#'):
                seen.add(m.group(1))
                found = found or [0, 0, 0]
                for i in range(3):
                    found[i] += int(m.group(i + 2) or 0)
        for part in wanted:
            if part not in seen:
                missing.append('%s (no "%s:" result line)' % (path, part))
        if found is None:
            if not wanted:
                missing.append(path)
            continue
        for i in range(3):
            total[i] += found[i]
    for path in missing:
        print('total: missing: %s' % path)
    print('%d passed, %d failed, %d skipped' % tuple(total))
    return 1 if total[1] or missing else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
