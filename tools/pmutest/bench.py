#!/usr/bin/env python3
"""`make bench`: pmutest's performance figures, as medians of N runs with
min-max, printed as one table and saved to build/bench.txt.

Measured: boot-to-exit wall time per boot path (QEMU start to QEMU exit,
which comes right after the summary line), AP bring-up guest time (the
kernel's own TSC figure from its log) for -smp 4/64/255, image sizes, and
the host benchmarks the tree provides (build/host/bench_*). Figures, not
pass/fail: the machines are noisy, so nothing here is asserted."""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

RUNS = int(os.environ.get('BENCH_RUNS', '5'))
QEMU = 'qemu-system-x86_64'
BASE = [QEMU, '-nodefaults', '-no-reboot', '-display', 'none', '-m', '512M',
        '-device', 'isa-debug-exit,iobase=0xf4,iosize=0x04']
# Debian 12 ships the first pair; newer releases only the 4M one.
OVMF_CODE, OVMF_VARS = next(
    (p for p in (('/usr/share/OVMF/OVMF_CODE.fd', '/usr/share/OVMF/OVMF_VARS.fd'),
                 ('/usr/share/OVMF/OVMF_CODE_4M.fd', '/usr/share/OVMF/OVMF_VARS_4M.fd'))
     if os.path.exists(p[0])), ('/usr/share/OVMF/OVMF_CODE.fd', '/usr/share/OVMF/OVMF_VARS.fd'))
BRINGUP = re.compile(r'^# smp: AP bring-up took (\d+) us')


def boot(args, tmp):
    log = os.path.join(tmp, 'serial.log')
    if os.path.exists(log):
        os.remove(log)
    # OVMF writes its boot order into the variable store: start every run
    # from a fresh copy, or one path's NVRAM steers the next one.
    if os.path.exists(OVMF_VARS):
        shutil.copy(OVMF_VARS, os.path.join(tmp, 'vars.fd'))
    t0 = time.monotonic()
    try:
        proc = subprocess.run(BASE + args + ['-serial', 'file:' + log], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        status = proc.returncode
    except subprocess.TimeoutExpired:
        status = None
    wall = time.monotonic() - t0
    text = open(log, errors='replace').read() if os.path.exists(log) else ''
    ok = status in (33, 35, 77) and '# pmutest: end' in text
    return wall, text, ok


def med(xs, fmt):
    if not xs:
        return 'n/a'
    return fmt % (statistics.median(xs), min(xs), max(xs))


PMI_COST = re.compile(r'^# pmi: cpu (\d+) handler cost: mean (\d+) TSC ticks \((\d+) ns\)')
SAMPLES = re.compile(r'^# sample-mode: cpu (\d+): (\d+) samples, (\d+) lost')
SKIP = re.compile(r'ok \d+ sample\.run # SKIP (.*)$')


def pmi_rows(kernel, tmp):
    """PMI handler cost and samples per second with zero LOST: only where
    there is a PMU (KVM with a vPMU, or hardware); else why not."""
    if not kvm_usable():
        return [('PMI handler cost / sample rate (needs a PMU)', 'n/a: no usable KVM here')]
    args = ['-machine', 'q35', '-accel', 'kvm', '-cpu', 'host', '-smp', '2', '-kernel', kernel,
            '-append', 'mode=sample events=cycles/period=100000/ duration=1000']
    costs, rates, why = [], [], None
    for _ in range(RUNS):
        _wall, text, _ok = boot(args, tmp)
        for line in text.splitlines():
            line = line.strip()
            m = PMI_COST.match(line)
            if m:
                costs.append(int(m.group(3)))
            m = SAMPLES.match(line)
            if m and int(m.group(3)) == 0:
                rates.append(int(m.group(2)))  # over duration=1000 ms: per second
            m = SKIP.search(line)
            if m:
                why = m.group(1)
    if not costs:
        return [('PMI handler cost / sample rate (needs a PMU)', 'n/a: %s' % (why or 'no PMI seen'))]
    return [('PMI handler cost (KVM, fixed delivery)', med(costs, '%.0f ns (%.0f-%.0f)')),
            ('samples/s per CPU at period 100000 cycles (runs with 0 lost)', med(rates, '%.0f (%.0f-%.0f)'))]


def kvm_usable():
    return os.access('/dev/kvm', os.R_OK | os.W_OK)


def main(kernel, iso):
    rows = []
    tmp = tempfile.mkdtemp(prefix='pmutest-bench-')
    vars_copy = os.path.join(tmp, 'vars.fd')
    uefi = []
    if os.path.exists(OVMF_CODE):
        uefi = ['-drive', 'if=pflash,format=raw,unit=0,readonly=on,file=' + OVMF_CODE,
                '-drive', 'if=pflash,format=raw,unit=1,file=' + vars_copy]
    tcg = ['-machine', 'q35', '-accel', 'tcg,thread=multi', '-cpu', 'max']
    quick = ['-append', 'tests=boot.*']
    paths = [
        ('boot to exit: -kernel, TCG, -smp 4', tcg + ['-smp', '4', '-kernel', kernel]),
        ('boot to exit: -kernel, TCG, -smp 4, tests=boot.*', tcg + ['-smp', '4', '-kernel', kernel] + quick),
        ('boot to exit: ISO CD, SeaBIOS, TCG, -smp 2', tcg + ['-smp', '2', '-cdrom', iso]),
        ('boot to exit: ISO USB, SeaBIOS, TCG, -smp 2', tcg + ['-smp', '2', '-device', 'qemu-xhci',
         '-drive', 'if=none,id=s,format=raw,snapshot=on,file=' + iso, '-device', 'usb-storage,drive=s']),
        ('boot to exit: ISO CD, OVMF, TCG, -smp 2', tcg + ['-smp', '2', '-cdrom', iso] + uefi),
        ('boot to exit: ISO USB, OVMF, TCG, -smp 2', tcg + ['-smp', '2', '-device', 'qemu-xhci',
         '-drive', 'if=none,id=s,format=raw,snapshot=on,file=' + iso, '-device', 'usb-storage,drive=s'] + uefi),
    ]
    if kvm_usable():
        paths.append(('boot to exit: -kernel, KVM, -smp 2',
                      ['-machine', 'q35', '-accel', 'kvm', '-cpu', 'host,-arch-capabilities', '-smp', '2',
                       '-kernel', kernel]))
    for name, args in paths:
        if 'OVMF' in name and not uefi:
            rows.append((name, 'n/a (no OVMF)'))
            continue
        walls = []
        for _ in range(RUNS):
            wall, _text, ok = boot(args, tmp)
            if ok:
                walls.append(wall)
        rows.append((name, med(walls, '%.2f s (%.2f-%.2f)') + ('' if len(walls) == RUNS else
                                                               '  [%d of %d runs completed]' % (len(walls), RUNS))))
    for n in (4, 64, 255):
        us = []
        for _ in range(RUNS):
            _wall, text, ok = boot(tcg + ['-smp', str(n), '-kernel', kernel, '-append', 'tests=-*'], tmp)
            for line in text.splitlines():
                m = BRINGUP.match(line.strip())
                if m:
                    us.append(int(m.group(1)))
        rows.append(('AP bring-up guest time, TCG -smp %d' % n, med([u / 1000 for u in us], '%.1f ms (%.1f-%.1f)')))
    rows.extend(pmi_rows(kernel, tmp))
    stripped = os.path.join(tmp, 'k.stripped')
    subprocess.run(['strip', '-o', stripped, kernel], check=True)
    rows.append(('stripped kernel size', '%.1f KiB' % (os.path.getsize(stripped) / 1024)))
    rows.append(('ISO size', '%.2f MB' % (os.path.getsize(iso) / 1e6)))
    bracket = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), 'check-bracket.py'), kernel],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout.strip()
    rows.append(('measurement bracket (tools/check-bracket.py)', bracket.splitlines()[-1] if bracket else 'n/a'))
    for b in sorted(os.listdir('build/host')) if os.path.isdir('build/host') else []:
        if b.startswith('bench_') and os.access(os.path.join('build/host', b), os.X_OK):
            out = subprocess.run([os.path.join('build/host', b)], stdout=subprocess.PIPE, text=True).stdout
            for line in out.splitlines():
                # Host benchmarks print table rows: "| name | figure | figure | ... |".
                cells = [c.strip() for c in line.strip().strip('|').split('|')] if line.startswith('|') else []
                if len(cells) >= 2:
                    rows.append((cells[0], '; '.join(cells[1:])))
    width = max(len(r[0]) for r in rows)
    table = ['%-*s  %s' % (width, 'figure (median of %d, min-max)' % RUNS, 'value'),
             '-' * (width + 30)] + ['%-*s  %s' % (width, a, b) for a, b in rows]
    text = '\n'.join(table) + '\n'
    sys.stdout.write(text)
    os.makedirs('build', exist_ok=True)
    with open('build/bench.txt', 'w') as f:
        f.write(text)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1], sys.argv[2]))
