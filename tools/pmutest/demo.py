"""make emu-demo: pmutest on an emulated PMU (emu/, profile intel-v4, a
Skylake's shape) for a newcomer: the default suite, with real counts and
PMIs picked out of its log; monitor mode's rows; sample mode's samples
and tools/pmutest-samples' report of them. The full logs stay in the
directory given (build/emu-demo).

  python3 -m pmutest.demo --kernel build/pmutest.elf --qemu PATH [--logdir DIR]"""
import argparse
import os
import re
import subprocess
import sys

from . import REPO_ROOT, profiles

TOOLS = os.path.join(REPO_ROOT, 'tools')
PROFILE = 'intel-v4'

# Lines of the suite's log worth a first look, each shown once (its first
# occurrence, from cpu 0), in this order.
SUITE_PICKS = (
    ('the PMU the kernel found', re.compile(r'^# pmu: ')),
    ('two counters, same window: exact and equal', re.compile(r'^# instructions \d+/\d+, cycles')),
    ('CMASK/INV/EDGE', re.compile(r'^# cmask=1 \d+')),
    ('counted on another CPU', re.compile(r'^# cpu \d+ \(APIC ID \d+\), from cpu 0')),
    ('overflow exactly at the preset', re.compile(r'^# IA32_PMC0: a window of')),
    ('a PMI from ring 3', re.compile(r'^# USR-only instructions after')),
    ('the LVT entry at PMI delivery', re.compile(r'^# (fixed|nmi) delivery: LVT')),
    ('the PMI handler, counted by the PMU', re.compile(r'^# PMI handler length')),
    ('PMIs taken', re.compile(r'^# pmi cpu \d+: pmis')),
    ('the verdict', re.compile(r'^# pmutest: \d+ passed')),
)
MONITOR_LINE = re.compile(r'^# (monitor: |\s+time\(ms\)|\s+\d+\.\d+\s)')
SAMPLE_LINE = re.compile(r'^# sample-mode: ')


def run(kernel, qemu, logdir, name, append=None, expect=None):
    log = os.path.join(logdir, name + '.log')
    cmd = [sys.executable, os.path.join(TOOLS, 'pmutest-run'), '--quiet', '--kernel', kernel,
           '--profile', PROFILE, '--qemu', qemu, '--smp', '4', '--log-file', log]
    if append:
        cmd += ['--append', append]
    if expect:
        cmd += ['--expect', expect]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors='replace')
    verdict = [line for line in proc.stdout.splitlines() if line.startswith(('verdict:', 'tests:'))]
    with open(log, errors='replace') as f:
        lines = [line.strip() for line in f]
    return proc.returncode, lines, verdict, log


def show(title, lines):
    print('\n== %s' % title)
    for line in lines:
        print('  ' + line)


def main(argv=None):
    ap = argparse.ArgumentParser(prog='emu-demo', description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--kernel', required=True)
    ap.add_argument('--qemu', required=True, help='the emulated-PMU QEMU (make emu-qemu prints it)')
    ap.add_argument('--logdir', default='build/emu-demo')
    a = ap.parse_args(argv)
    os.makedirs(a.logdir, exist_ok=True)
    failed = 0

    rc, lines, verdict, log = run(a.kernel, a.qemu, a.logdir, 'suite',
                                  expect=os.path.join(REPO_ROOT, 'tests', 'expect', 'emu', PROFILE + '.expect'))
    failed += rc != 0
    picked = []
    for what, pattern in SUITE_PICKS:
        hits = [line for line in lines if pattern.match(line)]
        if what in ('the PMU the kernel found', 'PMIs taken'):
            picked += hits
        elif hits:
            picked.append(hits[0] + '    <- ' + what)
    show('the default suite on profile %s (-cpu %s); full log %s'
         % (PROFILE, profiles.find_profile(PROFILE).cpu, log), picked + verdict)

    rc, lines, verdict, log = run(a.kernel, a.qemu, a.logdir, 'monitor',
                                  append='mode=monitor duration=2000 interval=500')
    failed += rc != 0
    show('monitor mode: instructions, cycles and branch misses per CPU every 500 ms (%s)' % log,
         [line for line in lines if MONITOR_LINE.match(line)] + verdict)

    rc, lines, verdict, log = run(a.kernel, a.qemu, a.logdir, 'sample',
                                  append='mode=sample duration=1000 events=cycles/period=1000000/')
    failed += rc != 0
    show('sample mode: a sample every 10^6 cycles on every CPU (%s)' % log,
         [line for line in lines if SAMPLE_LINE.match(line)] + verdict)
    report = subprocess.run([sys.executable, os.path.join(TOOLS, 'pmutest-samples'), '--elf', a.kernel, log],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors='replace')
    failed += report.returncode != 0
    show('tools/pmutest-samples %s' % log, report.stdout.splitlines())
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
