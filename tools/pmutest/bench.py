"""`make bench`: pmutest's performance figures, as medians of N runs with
min-max, printed as one table and saved to build/bench.txt, and the same
figures as JSON in build/bench.json for trend tracking (one object per
figure, keyed by a stable name, with its unit, median, min, max and every
run's value).

Measured: boot-to-exit wall time per boot path (QEMU start to QEMU exit,
which comes right after the summary line), AP bring-up guest time (the
kernel's own TSC figure from its log) for -smp 4/64/255, the PMI handler's
cost and the sample rate where there is a PMU (KVM) and on the emulated PMU
(emu/, profile EMU_PROFILE), the handler's length in instructions per PMI
counted by the emulated PMU itself (pmu.overflow.handler_length), the PMU's
cost map (pmu.cost.table's "# cost:" rows, on KVM and on the emulated PMU),
the emulated-PMU QEMU's build time from an empty cache (once;
BENCH_EMU_FRESH=0 skips it) and from the cache, image sizes, the measurement
bracket, and the host benchmarks the tree provides (build/host/bench_*).
Figures, not pass/fail: the machines are noisy, so nothing here is asserted."""
import datetime
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from . import REPO_ROOT, profiles
from .qemu import QEMU, QemuConfig, build_qemu_command, find_ovmf, kvm_unusable_reason, private_ovmf
from .verdict import STATUS_ALL_SKIP, STATUS_FAIL, STATUS_PASS

RUNS = int(os.environ.get('BENCH_RUNS', '5'))
JSON_FORMAT = 'pmutest-bench 1'
BRINGUP = re.compile(r'^# smp: AP bring-up took (\d+) us')
PMI_COST = re.compile(r'^# pmi: cpu (\d+) handler cost: mean (\d+) TSC ticks \((\d+) ns\)')
SAMPLES = re.compile(r'^# sample-mode: cpu (\d+): (\d+) samples, (\d+) lost')
SKIP = re.compile(r'ok \d+ sample\.run # SKIP (.*)$')
HANDLER_LENGTH = re.compile(r'^# PMI handler length: (\d+) instructions per PMI \((\w+) delivery')
# The emulated PMU the PMI rows use: Skylake's shape (emu/profiles.list).
EMU_PROFILE = 'intel-v4'
# pmu.cost.table's rows (tests/pmu/pmu_cost.c), on CPU 0.
COST = re.compile(r'^# cost: cpu0 (.+) median (\d+) min (\d+) p90 (\d+) TSC ticks')
COST_SKIP = re.compile(r'ok \d+ pmu\.cost\.table@cpu0\S* # SKIP (.*)$')


@dataclass
class Figure:
    """One row: a series of per-run values, or one value, or only text."""
    name: str
    unit: str = ''
    values: list = field(default_factory=list)
    wanted: int = 0               # runs asked for (a series)
    value: float = None           # a single measurement (a size)
    text: str = ''                # what there is when there is no number
    fmt: str = '%.2f'

    def series(self):
        return self.wanted > 0

    def cell(self):
        if self.series():
            if not self.values:
                return 'n/a' + (': ' + self.text if self.text else '')
            f = self.fmt
            cell = (f + ' %s (' + f + '-' + f + ')') % (statistics.median(self.values), self.unit,
                                                          min(self.values), max(self.values))
            if len(self.values) != self.wanted:
                cell += '  [%d of %d runs completed]' % (len(self.values), self.wanted)
            return cell
        if self.value is not None:
            return (self.fmt + ' %s') % (self.value, self.unit)
        return self.text or 'n/a'

    def as_json(self):
        out = {'name': self.name, 'unit': self.unit}
        if self.series():
            out.update(runs=len(self.values), wanted_runs=self.wanted, values=self.values)
            if self.values:
                out.update(median=statistics.median(self.values), min=min(self.values),
                           max=max(self.values))
        elif self.value is not None:
            out['value'] = self.value
        if self.text:
            out['text'] = self.text
        return out


def boot(cfg, tmp, timeout=120):
    """One boot: (wall seconds, serial text, whether it ended properly)."""
    log = os.path.join(tmp, 'serial.log')
    if os.path.exists(log):
        os.remove(log)
    # OVMF writes its boot order into the variable store: every run starts
    # from a fresh copy, or one path's NVRAM steers the next one.
    if cfg.ovmf:
        cfg.ovmf = private_ovmf(find_ovmf(), tmp)
    cfg.serial_log = log
    t0 = time.monotonic()
    try:
        proc = subprocess.run(build_qemu_command(cfg), stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout)
        status = proc.returncode
    except subprocess.TimeoutExpired:
        status = None
    wall = time.monotonic() - t0
    text = open(log, errors='replace').read() if os.path.exists(log) else ''
    ok = status in (STATUS_PASS, STATUS_FAIL, STATUS_ALL_SKIP) and '# pmutest: end' in text
    return wall, text, ok


def boot_paths(kernel, iso, ovmf, kvm_cpu):
    tcg = dict(accel='tcg', cpu='max')
    paths = [
        ('boot to exit: -kernel, TCG, -smp 4', QemuConfig(kernel=kernel, smp=4, **tcg)),
        ('boot to exit: -kernel, TCG, -smp 4, tests=boot.*',
         QemuConfig(kernel=kernel, append='tests=boot.*', smp=4, **tcg)),
        ('boot to exit: ISO CD, SeaBIOS, TCG, -smp 2', QemuConfig(iso=iso, boot='cd', smp=2, **tcg)),
        ('boot to exit: ISO USB, SeaBIOS, TCG, -smp 2', QemuConfig(iso=iso, boot='usb', smp=2, **tcg)),
        ('boot to exit: ISO CD, OVMF, TCG, -smp 2',
         QemuConfig(iso=iso, boot='cd', firmware='uefi', ovmf=ovmf, smp=2, **tcg)),
        ('boot to exit: ISO USB, OVMF, TCG, -smp 2',
         QemuConfig(iso=iso, boot='usb', firmware='uefi', ovmf=ovmf, smp=2, **tcg)),
    ]
    if kvm_cpu:
        paths.append(('boot to exit: -kernel, KVM, -smp 2',
                      QemuConfig(kernel=kernel, smp=2, accel='kvm', cpu=kvm_cpu)))
    return paths


def pmi_figures(kernel, tmp, kvm_cpu, kvm_reason):
    """PMI handler cost and samples per second with zero LOST: only where
    there is a PMU (KVM with a vPMU, or hardware); else why not."""
    cost = Figure('PMI handler cost (KVM, fixed delivery)', 'ns', wanted=RUNS, fmt='%.0f')
    rate = Figure('samples/s per CPU at period 100000 cycles (runs with 0 lost)', '', wanted=RUNS,
                  fmt='%.0f')
    if not kvm_cpu:
        cost.text = rate.text = 'no usable KVM here (%s)' % kvm_reason
        return [cost, rate]
    cfg = QemuConfig(kernel=kernel, smp=2, accel='kvm', cpu=kvm_cpu,
                     append='mode=sample events=cycles/period=100000/ duration=1000')
    why = None
    for _ in range(RUNS):
        _wall, text, _ok = boot(cfg, tmp)
        for line in text.splitlines():
            line = line.strip()
            m = PMI_COST.match(line)
            if m:
                cost.values.append(int(m.group(3)))
            m = SAMPLES.match(line)
            if m and int(m.group(3)) == 0:
                rate.values.append(int(m.group(2)))  # over duration=1000 ms: per second
            m = SKIP.search(line)
            if m:
                why = m.group(1)
    if not cost.values:
        cost.text = rate.text = why or 'no PMI seen'
    return [cost, rate]


def emulated_pmi_figures(kernel, tmp):
    """The PMI rows on the emulated PMU: the handler's cost in TCG time and
    the sample rate (sample mode, as on KVM), and its length in
    instructions per PMI, counted by the emulated PMU itself: a reference
    counter over windows with 0, ~4 and ~8 PMIs (the kernel's
    pmu.overflow.handler_length prints the figure)."""
    what = 'emulated %s' % EMU_PROFILE
    # Two CPUs a run, each a value: the ring (1 MiB) holds a second of
    # samples at emulated speed, so none is lost to a full ring.
    cost = Figure('PMI handler cost per CPU (%s: TCG time, not silicon; fixed delivery)' % what, 'ns',
                  wanted=2 * RUNS, fmt='%.0f')
    rate = Figure('samples/s per CPU at period 100000 cycles (%s, runs with 0 lost)' % what, '',
                  wanted=2 * RUNS, fmt='%.0f')
    length = {d: Figure('PMI handler length (%s, %s delivery)' % (what, d), 'instructions', wanted=RUNS,
                        fmt='%.0f') for d in ('fixed', 'nmi')}
    rows = [cost, rate, length['fixed'], length['nmi']]
    try:
        qemu = profiles.emulated_qemu()
        cpu = profiles.find_profile(EMU_PROFILE).cpu
    except profiles.ProfileError as e:
        for f in rows:
            f.text = str(e)
        return rows
    sample = QemuConfig(qemu=qemu, kernel=kernel, smp=2, accel='tcg', cpu=cpu,
                        append='mode=sample events=cycles/period=100000/ duration=1000 ring=1048576')
    handler = QemuConfig(qemu=qemu, kernel=kernel, smp=1, accel='tcg', cpu=cpu,
                         append='tests=pmu.overflow.handler_length')
    for _ in range(RUNS):
        _wall, text, _ok = boot(sample, tmp)
        for line in text.splitlines():
            m = PMI_COST.match(line.strip())
            if m:
                cost.values.append(int(m.group(3)))
            m = SAMPLES.match(line.strip())
            if m and int(m.group(3)) == 0:
                rate.values.append(int(m.group(2)))
        _wall, text, _ok = boot(handler, tmp)
        for line in text.splitlines():
            m = HANDLER_LENGTH.match(line.strip())
            if m and m.group(2) in length:
                length[m.group(2)].values.append(int(m.group(1)))
    for f in rows:
        if not f.values:
            f.text = 'no figure in the emulated run\'s log'
    return rows


def emu_build_figures(tmp):
    """emu/qemu/build.sh from an empty cache (one run: it downloads Debian's
    QEMU source and builds it, minutes) and from the cache."""
    script = profiles.EMU_QEMU_SCRIPT
    fresh = Figure('emulated-PMU QEMU build from an empty cache (build deps installed)', 's', wanted=1,
                   fmt='%.0f')
    cached = Figure('emulated-PMU QEMU build, cached (make emu-qemu)', 's', wanted=RUNS)

    def timed(env=None):
        t0 = time.monotonic()
        proc = subprocess.run([script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              errors='replace', env=env)
        lines = proc.stdout.strip().splitlines()
        return time.monotonic() - t0, proc.returncode, lines[-1] if lines else ''

    if os.environ.get('BENCH_EMU_FRESH', '1') == '0':
        fresh.text = 'not measured (BENCH_EMU_FRESH=0)'
    else:
        secs, rc, last = timed(dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, 'emu-cache')))
        if rc == 0:
            fresh.values.append(round(secs, 1))
        else:
            fresh.text = 'build failed: %s' % last
    _secs, rc, last = timed()          # fill the real cache first
    if rc != 0:
        cached.text = 'build failed: %s' % last
        return [fresh, cached]
    for _ in range(RUNS):
        secs, rc, _last = timed()
        if rc == 0:
            cached.values.append(round(secs, 2))
    return [fresh, cached]


def cost_figures(kernel, tmp, kvm_cpu, kvm_reason):
    """The cost map's rows (TSC ticks, median of each run's median), on KVM
    and on the emulated PMU: where RDPMC and the PMU MSRs trap and where
    they run natively (docs/operating.md, "Reading the cost map")."""
    envs = []
    if kvm_cpu:
        envs.append(('KVM', QemuConfig(kernel=kernel, smp=1, accel='kvm', cpu=kvm_cpu,
                                       append='tests=pmu.cost.*'), None))
    else:
        envs.append(('KVM', None, 'no usable KVM here (%s)' % kvm_reason))
    try:
        profile = profiles.find_profile(EMU_PROFILE)
        envs.append(('emulated %s' % EMU_PROFILE,
                     QemuConfig(qemu=profiles.emulated_qemu(), kernel=kernel, smp=1, accel='tcg',
                                cpu=profile.cpu, append='tests=pmu.cost.*'), None))
    except profiles.ProfileError as e:
        envs.append(('emulated %s' % EMU_PROFILE, None, str(e)))
    figures = []
    for env, cfg, why in envs:
        rows = {}
        for _ in range(RUNS if cfg else 0):
            _wall, text, _ok = boot(cfg, tmp)
            for line in text.splitlines():
                line = line.strip()
                m = COST.match(line)
                if m:
                    rows.setdefault(m.group(1), []).append(int(m.group(2)))
                m = COST_SKIP.search(line)
                if m:
                    why = m.group(1)
        if not rows:
            figures.append(Figure('cost map (%s)' % env, text=why or 'no "# cost:" rows'))
        for name, values in rows.items():
            figures.append(Figure('cost (%s): %s' % (env, name), 'ticks', values=values, wanted=RUNS,
                                  fmt='%.0f'))
    return figures


def host_bench_figures(build):
    """The host benchmarks' table rows: "| name | figure | figure | ... |"."""
    figures, host = [], os.path.join(build, 'host')
    for b in sorted(os.listdir(host)) if os.path.isdir(host) else []:
        if b.startswith('bench_') and os.access(os.path.join(host, b), os.X_OK):
            out = subprocess.run([os.path.join(host, b)], stdout=subprocess.PIPE, text=True).stdout
            for line in out.splitlines():
                cells = [c.strip() for c in line.strip().strip('|').split('|')] if line.startswith('|') else []
                if len(cells) >= 2:
                    figures.append(Figure(cells[0], text='; '.join(cells[1:])))
    return figures


def measure(kernel, iso, tmp):
    figures = []
    ovmf = find_ovmf()
    kvm_reason, suffix = kvm_unusable_reason(QEMU, 'host')
    kvm_cpu = None if kvm_reason else 'host' + suffix
    for name, cfg in boot_paths(kernel, iso, ovmf, kvm_cpu):
        fig = Figure(name, 's', wanted=RUNS)
        if cfg.firmware == 'uefi' and not ovmf:
            fig.text = 'no OVMF'
        else:
            for _ in range(RUNS):
                wall, _text, ok = boot(cfg, tmp)
                if ok:
                    fig.values.append(round(wall, 3))
        figures.append(fig)
    for n in (4, 64, 255):
        fig = Figure('AP bring-up guest time, TCG -smp %d' % n, 'ms', wanted=RUNS, fmt='%.1f')
        cfg = QemuConfig(kernel=kernel, append='tests=-*', smp=n, accel='tcg', cpu='max')
        for _ in range(RUNS):
            _wall, text, _ok = boot(cfg, tmp)
            for line in text.splitlines():
                m = BRINGUP.match(line.strip())
                if m:
                    fig.values.append(int(m.group(1)) / 1000)
        figures.append(fig)
    figures += pmi_figures(kernel, tmp, kvm_cpu, kvm_reason)
    # The build first: it fills the cache the emulated rows boot from.
    builds = emu_build_figures(tmp)
    figures += emulated_pmi_figures(kernel, tmp) + builds
    figures += cost_figures(kernel, tmp, kvm_cpu, kvm_reason)
    stripped = os.path.join(tmp, 'k.stripped')
    subprocess.run(['strip', '-o', stripped, kernel], check=True)
    figures.append(Figure('stripped kernel size', 'KiB', value=round(os.path.getsize(stripped) / 1024, 1),
                          fmt='%.1f'))
    figures.append(Figure('ISO size', 'MB', value=round(os.path.getsize(iso) / 1e6, 2)))
    bracket = subprocess.run([sys.executable, '-m', 'pmutest.check_bracket', kernel],
                             env=dict(os.environ, PYTHONPATH=os.path.join(REPO_ROOT, 'tools')),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout.strip()
    figures.append(Figure('measurement bracket (tools/pmutest/check_bracket.py)',
                          text=bracket.splitlines()[-1] if bracket else 'n/a'))
    figures += host_bench_figures(os.path.dirname(os.path.abspath(kernel)))
    return figures


def table(figures):
    head = 'figure (median of %d, min-max)' % RUNS
    width = max([len(f.name) for f in figures] + [len(head)])
    rows = ['%-*s  %s' % (width, head, 'value'), '-' * (width + 30)]
    return '\n'.join(rows + ['%-*s  %s' % (width, f.name, f.cell()) for f in figures]) + '\n'


def git_commit():
    try:
        return subprocess.run(['git', '-C', REPO_ROOT, 'rev-parse', 'HEAD'], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True).stdout.strip() or None
    except OSError:
        return None


def as_json(figures, when=None):
    return {'format': JSON_FORMAT,
            'date': (when or datetime.datetime.now()).strftime('%Y-%m-%dT%H:%M:%S'),
            'commit': git_commit(), 'host': socket.gethostname(), 'runs': RUNS,
            'figures': [f.as_json() for f in figures]}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print('usage: bench.py KERNEL ISO', file=sys.stderr)
        return 2
    kernel, iso = argv
    out_dir = os.path.dirname(os.path.abspath(kernel))
    tmp = tempfile.mkdtemp(prefix='pmutest-bench-')
    try:
        figures = measure(kernel, iso, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    text = table(figures)
    sys.stdout.write(text)
    with open(os.path.join(out_dir, 'bench.txt'), 'w') as f:
        f.write(text)
    with open(os.path.join(out_dir, 'bench.json'), 'w') as f:
        json.dump(as_json(figures), f, indent=1)
        f.write('\n')
    print('figures saved to %s and %s' % (os.path.join(out_dir, 'bench.txt'),
                                          os.path.join(out_dir, 'bench.json')))
    return 0


if __name__ == '__main__':
    sys.exit(main())
