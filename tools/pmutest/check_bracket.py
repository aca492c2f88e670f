#!/usr/bin/env python3
"""Check every measurement bracket (pmu/bracket.h) in a built kernel.

Usage: python3 -m pmutest.check_bracket KERNEL.elf [--allow-none]

The bracket promises that between its enabling and disabling WRMSR there is
nothing but the workload body and PMU_BRACKET_EXTRA_INSNS instructions (the
two MOVs that load the "off" value), so two brackets of different loop
lengths differ by exactly the workload's instructions and branches (the
exact checks assert that difference). Its asm leaves local symbols pmu_bracket_on_k<K>_<N>,
pmu_bracket_work_end_<N> and pmu_bracket_off_<N>; this script finds them
with nm, disassembles with objdump, and checks for each bracket that:
  - the instruction right before pmu_bracket_on is WRMSR (the enable);
  - the body [on, work_end) has exactly K instructions, K being one of the
    per-iteration counts declared in pmu/loops.h, ends in a conditional
    branch back to its first instruction, and contains no other branch;
  - the tail [work_end, off) is PMU_BRACKET_EXTRA_INSNS MOVs then one WRMSR.
Numbers are read from pmu/bracket.h and pmu/loops.h, so the comment, the
constant and the code cannot drift apart. Exit status 0 when all hold.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SYM = re.compile(r'^([0-9a-f]+)\s+\S\s+(pmu_bracket_(?:on_k(\d+)|work_end|off)_(\d+))$')
INSN = re.compile(r'^\s*([0-9a-f]+):\s+([a-z][a-z0-9.]*)\s*(.*)$')


def header_define(path, name):
    with open(os.path.join(ROOT, path)) as f:
        m = re.search(r'^#define\s+%s\s+(\d+)\b' % name, f.read(), re.M)
    if not m:
        sys.exit('check-bracket: %s not defined in %s' % (name, path))
    return int(m.group(1))


def run(cmd):
    try:
        return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit('check-bracket: %s failed: %s' % (cmd[0], e))


def main(argv):
    args = [a for a in argv[1:] if not a.startswith('--')]
    allow_none = '--allow-none' in argv
    if len(args) != 1:
        sys.exit(__doc__)
    elf = args[0]
    extra = header_define('pmu/bracket.h', 'PMU_BRACKET_EXTRA_INSNS')
    bodies = {header_define('pmu/loops.h', 'PMU_LOOP_INSNS_PER_ITER'),
              header_define('pmu/loops.h', 'PMU_MEMLOOP_INSNS_PER_ITER')}

    syms = []
    for line in run(['nm', '-n', elf]).splitlines():
        m = SYM.match(line.strip())
        if m:
            kind = 'on' if m.group(3) else ('end' if 'work_end' in m.group(2) else 'off')
            syms.append((int(m.group(1), 16), kind, int(m.group(3) or 0), m.group(4), m.group(2)))
    # Same address: on < end < off, so an empty part still pairs up.
    order = {'on': 0, 'end': 1, 'off': 2}
    syms.sort(key=lambda s: (s[0], order[s[1]]))

    insns = []
    for line in run(['objdump', '-d', '--no-show-raw-insn', elf]).splitlines():
        m = INSN.match(line)
        if m:
            insns.append((int(m.group(1), 16), m.group(2), m.group(3).strip()))
    insns.sort()
    addrs = [i[0] for i in insns]

    def between(lo, hi):
        import bisect
        return insns[bisect.bisect_left(addrs, lo):bisect.bisect_left(addrs, hi)]

    def before(addr):
        import bisect
        k = bisect.bisect_left(addrs, addr)
        return insns[k - 1] if k else None

    errors, found = [], {}
    i = 0
    while i < len(syms):
        group = syms[i:i + 3]
        kinds = [g[1] for g in group]
        if kinds != ['on', 'end', 'off'] or len({g[3] for g in group}) != 1:
            errors.append('unpaired bracket symbols near %#x: %s' % (
                syms[i][0], ', '.join(g[4] for g in group)))
            i += 1
            continue
        (on, _, k, n, name), (end, _, _, _, _), (off, _, _, _, _) = group
        i += 3
        where = '%s at %#x' % (name, on)
        prev = before(on)
        if not prev or prev[1] != 'wrmsr':
            errors.append('%s: instruction before the window is %s, not wrmsr' % (
                where, prev[1] if prev else 'nothing'))
        body = between(on, end)
        if k not in bodies:
            errors.append('%s: body size %d is not one pmu/loops.h declares (%s)' % (
                where, k, sorted(bodies)))
        if len(body) != k:
            errors.append('%s: body has %d instructions, label says %d: %s' % (
                where, len(body), k, '; '.join(b[1] for b in body)))
        elif body:
            last = body[-1]
            target = re.match(r'([0-9a-f]+)', last[2])
            if not last[1].startswith('j') or last[1] == 'jmp' or not target or int(target.group(1), 16) != on:
                errors.append('%s: body does not end in a conditional branch back to %#x (%s %s)' % (
                    where, on, last[1], last[2]))
            for b in body[:-1]:
                if b[1].startswith('j') or b[1] in ('call', 'ret', 'loop', 'wrmsr', 'rdmsr'):
                    errors.append('%s: body holds %s' % (where, b[1]))
        tail = between(end, off)
        mnem = [t[1] for t in tail]
        if len(tail) != extra + 1 or mnem[-1] != 'wrmsr' or any(not t.startswith('mov') for t in mnem[:-1]):
            errors.append('%s: expected %d MOVs then WRMSR after the body, found: %s' % (
                where, extra, '; '.join('%s %s' % (t[1], t[2]) for t in tail) or 'nothing'))
        found[k] = found.get(k, 0) + 1

    for e in errors:
        print('check-bracket: FAIL %s' % e)
    total = sum(found.values())
    if not total and not allow_none:
        print('check-bracket: FAIL no bracket in %s (pmu_bracket_* symbols missing)' % elf)
        return 1
    if errors:
        return 1
    print('check-bracket: %d bracket(s) in %s OK (%s); each adds %d instructions besides the workload' % (
        total, elf, ', '.join('%d with a %d-instruction body' % (v, k) for k, v in sorted(found.items())),
        extra))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
