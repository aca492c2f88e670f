#!/usr/bin/env python3
"""Check that the kernel's includes only point down the house, and that no
includes form a circle.

The house is a stack of layers, top first; a layer is one or more folders
(docs/HACKING.md draws it). A file may include files of its own layer or
of a layer below, never of a layer above. Files are grouped into rooms (a
.c, .h or .S file with the files of the same name beside it: pmu/event.c
and arch/x86/lapic.h are one room), and the room graph of the includes must
have no circle, inside a layer too.

Usage: tools/check-layers.py [--root DIR] [--weights]
Prints every violation with the include line that makes it, then
"layers: N passed, M failed, 0 skipped" (two checks: direction, circles).
--weights prints the non-blank kernel C/asm lines per folder (its own
files, not its subfolders') instead, with each folder's share. Exit 1 on a violation."""
import argparse
import os
import re
import subprocess
import sys

# Top first. Folders of one layer may include each other; lower layers
# never include higher ones. A longer folder path wins over a shorter one
# (pmu/kernel is its own layer above pmu).
LAYERS = [
    ('boot', 'tests'),   # how the machine starts, and the test suite it runs
                         # (tests/pmu: the PMU checks)
    ('modes',),          # applications of the driver: monitor, sample, workloads
    ('pmu/kernel',),     # the driver's kernel binding: register seam, PMI/LVT glue
    ('pmu/intel', 'pmu/amd'),  # the vendor backends, reached by the core only through pmu_ops
    ('pmu',),            # the PMU driver's vendor-neutral core, host-buildable
    ('arch',),           # the CPU (arch/x86) and the PC platform devices (arch/x86/pc)
    ('lib',),            # freestanding support, host-tested
]
# Not kernel code: host-side test programs, and the QEMU device model.
IGNORED = ('tests/host', 'emu')
SOURCE = re.compile(r'\.(c|h|S)$')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def tracked_files(root):
    """The repository's C and assembly files (git's list, untracked ones
    that are not ignored included; every file below root without git)."""
    try:
        out = subprocess.run(['git', '-C', root, 'ls-files', '--cached', '--others', '--exclude-standard'],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True,
                             universal_newlines=True).stdout.split('\n')
        names = [n for n in out if n and os.path.exists(os.path.join(root, n))]
    except (OSError, subprocess.CalledProcessError):
        names = [os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs]
    return sorted(n for n in names if SOURCE.search(n))


def under(path, folder):
    return path == folder or path.startswith(folder + '/')


def layer_of(path):
    """(layer index, folder) by the longest folder that holds path; None
    outside every layer."""
    best = None
    for i, folders in enumerate(LAYERS):
        for f in folders:
            if under(path, f) and (best is None or len(f) > len(best[1])):
                best = (i, f)
    return best


def room_of(path):
    return os.path.splitext(path)[0]


def includes(root, path):
    """(line number, included path) of each quoted include, resolved like
    the build does: against the repository root (-I.), else beside the file."""
    found = []
    with open(os.path.join(root, path), errors='replace') as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            name = m.group(1)
            for cand in (name, os.path.normpath(os.path.join(os.path.dirname(path), name))):
                if os.path.isfile(os.path.join(root, cand)):
                    found.append((n, cand))
                    break
            else:
                found.append((n, None if name else name))
    return found


def circles(edges):
    """Strongly connected components with more than one room (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def weights(root, files):
    """Non-blank lines of kernel C/asm per folder (a file counts for the
    folder it is in, not for the folders above it)."""
    per = {}
    for path in files:
        if any(under(path, i) for i in IGNORED) or layer_of(path) is None:
            continue
        top = os.path.dirname(path)
        with open(os.path.join(root, path), errors='replace') as f:
            per[top] = per.get(top, 0) + sum(1 for line in f if line.strip())
    total = sum(per.values())
    for top, n in sorted(per.items(), key=lambda kv: -kv[1]):
        print('%-14s %6d lines %5.1f%%' % (top + '/', n, 100.0 * n / total))
    print('%-14s %6d lines' % ('total', total))
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--root', default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument('--weights', action='store_true', help='print the kernel lines per top-level folder')
    args = ap.parse_args(argv)
    files = tracked_files(args.root)
    if args.weights:
        return weights(args.root, files)

    upward, strays = [], []
    edges, why = {}, {}
    for path in files:
        if any(under(path, i) for i in IGNORED):
            continue
        mine = layer_of(path)
        if mine is None:
            strays.append('%s: in no layer of tools/check-layers.py (add its folder to LAYERS)' % path)
            continue
        for line, inc in includes(args.root, path):
            if inc is None:
                strays.append('%s:%d: include not found' % (path, line))
                continue
            theirs = layer_of(inc)
            if theirs is None:
                continue
            if theirs[0] < mine[0]:
                upward.append('%s:%d includes %s: %s/ is a layer above %s/' % (path, line, inc, theirs[1],
                                                                               mine[1]))
            a, b = room_of(path), room_of(inc)
            if a != b:
                edges.setdefault(a, set()).add(b)
                why.setdefault((a, b), '%s:%d' % (path, line))
    loops = circles(edges)
    for msg in strays + upward:
        print(msg)
    for comp in loops:
        members = set(comp)
        links = ['%s -> %s (%s)' % (a, b, why[(a, b)]) for a in comp for b in sorted(edges.get(a, ()))
                 if b in members]
        print('circle of includes among %s: %s' % (', '.join(comp), '; '.join(links)))
    failed = (1 if upward or strays else 0) + (1 if loops else 0)
    print('layers: %d passed, %d failed, 0 skipped' % (2 - failed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
