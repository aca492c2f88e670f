#!/usr/bin/env python3
"""Add up the "<part>: N passed, M failed, K skipped" lines of the parts of
`make test` (lines starting with "#" are sub-totals and are not counted)
and print the total as the last line; exit 1 if anything failed or a part
printed no such line."""
import re
import sys

LINE = re.compile(r'^(?:# )?([\w.-]+): (\d+) passed, (\d+) failed(?:, (\d+) skipped)?$')


def main(paths):
    total = [0, 0, 0]
    missing = []
    for path in paths:
        found = None
        try:
            text = open(path, errors='replace').read()
        except OSError:
            text = ''
        for line in text.splitlines():
            m = LINE.match(line.strip())
            # Only the parts' own totals: "host:", "runner:", "boot-matrix:", ...
            if m and not line.startswith('#'):
                found = found or [0, 0, 0]
                for i in range(3):
                    found[i] += int(m.group(i + 2) or 0)
        if found is None:
            missing.append(path)
            continue
        for i in range(3):
            total[i] += found[i]
    for path in missing:
        print('total: %s has no result line' % path)
    print('%d passed, %d failed, %d skipped' % tuple(total))
    return 1 if total[1] or missing else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
