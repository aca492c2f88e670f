"""kexec: boot pmutest from a running Linux, as on a data-centre server, and
judge both sides of the hand-over from the serial log.

A Debian kernel with an initramfs this harness builds (busybox, Debian's
kexec-tools with its libraries, the msr module, pmutest.elf) boots on the
emulated PMU (emu/, the intel-v4 profile), so that Linux's perf driver and
its NMI watchdog really own a counter. Its /init prints what Linux had: the
CPUs online, the watchdog's dmesg lines, and per CPU the PMU registers (read
through /dev/cpu/N/msr). Then it loads pmutest with kexec-tools'
multiboot-x86 loader (kexec-tools 2.0.25 probes an ELF64 as elf-x86_64, a
Linux vmlinux entered in 64-bit mode, so the type is named) and jumps:

  exec   kexec -l, kexec -e: Linux's reboot notifiers run first, and perf's
         (kernel/events/core.c, perf_reboot) removes every event, the
         watchdog's too, so only IA32_PERF_GLOBAL_CTRL keeps Linux's value.
         pmutest must report it per CPU, equal to what Linux read, and end
         with exit=reboot: the machine resets and Linux boots again.
  crash  kexec -p, then a panic on CPU 0 (sysrq c), as kdump does: no notifier runs,
         the watchdog's counter is still programmed when pmutest starts.
         pmutest must report it as in use at boot and, with pmu.takeover=1,
         take it over; it ends with exit=poweroff: QEMU stops, no reset.
         The crash kernel region is crashkernel=15M@1M: pmutest.elf is
         linked at 1 MiB and kexec -p loads only inside that region.

In both: a complete, valid KTAP log (tools/pmutest-run --log against
tests/expect/kexec.expect), every CPU Linux had online brought up again.
One line per problem; "kexec-test: N passed, M failed, K skipped" last.

  python3 -m harness.kexec [--kernel build/pmutest.elf] [--only exec|crash]
"""
import argparse
import os
import re
import subprocess
import sys
import time

from harness import _paths, debian, initramfs
from pmutest.qemu import DEBUG_EXIT, run_qemu

ROOT = _paths.ROOT
RUNNER = os.path.join(_paths.TOOLS, 'pmutest-run')
EXPECT = os.path.join(ROOT, 'tests', 'expect', 'kexec.expect')
PROFILE = 'intel-v4'
TESTS = 'boot.*,arch.*,smp.*,pmu.caps.*'
SMP = 2
TAG = 'kexec-harness:'
# The PMU registers /init prints (SDM vol. 4, table 2-2): the fixed-counter
# control, the global control and the four event selects of the profile.
MSRS = {0x38d: 'IA32_FIXED_CTR_CTRL', 0x38f: 'IA32_PERF_GLOBAL_CTRL',
        0x186: 'IA32_PERFEVTSEL0', 0x187: 'IA32_PERFEVTSEL1',
        0x188: 'IA32_PERFEVTSEL2', 0x189: 'IA32_PERFEVTSEL3'}
EVTSEL_EN = 1 << 22

MODES = {
    'exec': {'load': 'kexec -l', 'go': 'kexec -e', 'linux_args': '',
             'pmutest_args': 'tests=%s exit=reboot' % TESTS},
    # The panic on CPU 0, the boot processor: a crash kexec from another CPU
    # starts pmutest on an application processor, which then starts no
    # other CPU (an INIT to the boot processor would reset the machine).
    'crash': {'load': 'kexec -p', 'go': "taskset 1 sh -c 'echo c > /proc/sysrq-trigger'",
              'linux_args': ' crashkernel=15M@1M',
              'pmutest_args': 'tests=%s pmu.takeover=1 exit=poweroff' % TESTS},
}


def init_script(mode, insmods):
    m = MODES[mode]
    msr_lines = ''.join(
        '    echo "%s cpu $c msr %#x $(dd if=/dev/cpu/$c/msr bs=8 count=1 skip=%d iflag=skip_bytes'
        ' 2>/dev/null | od -A n -t x8 | tr -d \' \')"\n'
        % (TAG, msr, msr) for msr in sorted(MSRS))
    return initramfs.INIT_PRELUDE + insmods + """
echo "{tag} linux up $(uname -r), cpus online $(cat /sys/devices/system/cpu/online)"
dmesg | grep -E 'NMI watchdog|Performance Events|smpboot: Total' | sed 's/^/{tag} dmesg: /'
sleep 1
for d in /sys/devices/system/cpu/cpu[0-9]*; do
    c=${{d##*cpu}}
    [ "$(cat $d/online 2>/dev/null || echo 1)" = 1 ] || continue
{msrs}done
echo "{tag} {load} -t multiboot-x86 /pmutest.elf"
{load} -t multiboot-x86 /pmutest.elf --command-line="{args}" || echo "{tag} kexec load failed"
echo "{tag} {go}"
{go}
echo "{tag} still in Linux after {go}"
poweroff -f
""".format(tag=TAG, msrs=msr_lines, load=m['load'], go=m['go'], args=m['pmutest_args'])


def build_initramfs(kernel_root, release, pmutest, mode, out):
    img = initramfs.Image()
    _, bb = debian.extracted('busybox-static')
    _, kx = debian.extracted('kexec-tools')
    stage = out + '.kexec-root'
    if os.path.isdir(stage):
        import shutil
        shutil.rmtree(stage)
    debian.copy_with_libraries(os.path.join(kx, 'sbin', 'kexec'), stage, dest='/sbin/kexec',
                               lib_roots=debian.library_roots('kexec-tools'))
    mods = initramfs.add_modules(img, kernel_root, release, ['msr'])
    initramfs.busybox_root(os.path.join(bb, 'bin', 'busybox'), init_script(mode, initramfs.insmod_lines(mods)),
                           img)
    img.add_tree(stage)
    stripped = out + '.pmutest.elf'
    subprocess.run(['strip', '--strip-debug', '-o', stripped, pmutest], check=True)
    img.add_file('/pmutest.elf', src=stripped, mode=0o644)
    img.write(out)
    return out


def profile_cpu(name=PROFILE):
    with open(os.path.join(ROOT, 'emu', 'profiles.list')) as f:
        for line in f:
            parts = line.split()
            if parts and parts[0] == name:
                return parts[2]
    raise SystemExit('kexec: no profile %s in emu/profiles.list' % name)


def emulated_qemu():
    out = subprocess.run([os.path.join(ROOT, 'emu', 'qemu', 'build.sh')], stdout=subprocess.PIPE,
                         text=True, check=True).stdout.strip().splitlines()
    return out[-1]


def linux_facts(text):
    """What /init printed before the jump (not what a Linux booted after
    pmutest's reset prints)."""
    facts = {'cpus': None, 'msr': {}, 'dmesg': []}
    jump = text.find('KTAP version 1')
    for line in (text[:jump] if jump >= 0 else text).splitlines():
        line = line.strip('\r')
        if TAG not in line:
            continue
        rest = line[line.index(TAG) + len(TAG):].strip()
        m = re.match(r'linux up \S+, cpus online (\S+)', rest)
        if m and facts['cpus'] is None:
            facts['cpus'] = cpu_count(m.group(1))
        m = re.match(r'cpu (\d+) msr (0x[0-9a-f]+) ([0-9a-f]+)$', rest)
        if m:
            facts['msr'][(int(m.group(1)), int(m.group(2), 16))] = int(m.group(3), 16)
        if rest.startswith('dmesg: '):
            facts['dmesg'].append(rest[len('dmesg: '):])
    return facts


def cpu_count(spec):
    n = 0
    for part in spec.split(','):
        lo, _, hi = part.partition('-')
        n += int(hi or lo) - int(lo) + 1
    return n


def pmutest_part(text):
    i = text.find('KTAP version 1')
    return text[i:] if i >= 0 else ''


def judge(mode, text, status, timed_out, runner_ok):
    """The problems of one run (empty: it passed)."""
    problems = []
    linux = linux_facts(text)
    report = pmutest_part(text)
    if linux['cpus'] is None:
        return ['Linux never reached /init (no "%s linux up" line)' % TAG]
    if not any('NMI watchdog: Enabled' in d for d in linux['dmesg']):
        problems.append('Linux did not say "NMI watchdog: Enabled": no counter was Linux\'s')
    if not report:
        return problems + ['pmutest never started after the jump (no KTAP version line)']
    if not runner_ok:
        problems.append('tools/pmutest-run --log rejects the pmutest part of the log')
    m = re.search(r'# smp: (\d+) of (\d+) CPUs online', report)
    if not m or int(m.group(1)) != linux['cpus']:
        problems.append('Linux had %d CPUs online, pmutest says %s' % (linux['cpus'], m.group(0) if m else 'nothing'))
    for cpu in range(linux['cpus']):
        ctrl = linux['msr'].get((cpu, 0x38f))
        if ctrl is None:
            problems.append('cpu %d: /init printed no IA32_PERF_GLOBAL_CTRL' % cpu)
            continue
        if mode == 'exec':
            want = '# pmu: cpu %d: IA32_PERF_GLOBAL_CTRL (MSR 0x38f) = %#x at boot' % (cpu, ctrl)
            if want not in report:
                problems.append('cpu %d: expected pmutest to report Linux\'s GLOBAL_CTRL, the line "%s"'
                                % (cpu, want))
        else:
            problems += crash_counter_problems(cpu, linux['msr'], report)
    after = report[report.find('# pmutest: end exit='):] if '# pmutest: end exit=' in report else ''
    relinux = TAG + ' linux up' in after
    if mode == 'exec' and not relinux:
        problems.append('exit=reboot: Linux did not boot again after pmutest\'s end marker')
    if mode == 'crash':
        if relinux:
            problems.append('exit=poweroff: the machine reset and Linux booted again')
        elif timed_out or status != 0:
            problems.append('exit=poweroff: QEMU did not power off (status %s%s)'
                            % (status, ', still running' if timed_out else ''))
    return problems


def crash_counter_problems(cpu, msr, report):
    """Every counter Linux had enabled on cpu must be reported in use at boot
    and taken over."""
    problems, owned = [], []
    fixed = msr.get((cpu, 0x38d), 0)
    for i in range(4):
        if (fixed >> (4 * i)) & 0x3:
            owned.append('IA32_FIXED_CTR_CTRL (MSR 0x38d) = %#x: FIXED_CTR%d enabled' % (fixed, i))
    for x in range(4):
        sel = msr.get((cpu, 0x186 + x), 0)
        if sel & EVTSEL_EN:
            owned.append('IA32_PERFEVTSEL%d (MSR %#x) = %#x: PMC%d enabled' % (x, 0x186 + x, sel, x))
    if not owned and cpu == 0:
        problems.append('cpu 0: Linux\'s registers show no enabled counter: nothing for pmutest to find')
    for what in owned:
        want = '# pmu: cpu %d: %s' % (cpu, what)
        lines = [line for line in report.splitlines() if line.startswith(want)]
        if not lines:
            problems.append('cpu %d: expected pmutest to report "%s ..."' % (cpu, want))
        elif not lines[0].endswith('taken over (pmu.takeover=1)'):
            problems.append('cpu %d: reported but not taken over: %s' % (cpu, lines[0]))
    return problems


def run_mode(mode, pmutest, logdir, qemu, timeout):
    kroot_name = debian.newest_linux_image('bookworm', series='6.1')
    _, kroot = debian.extracted(kroot_name)
    vmlinuz, release = debian.kernel_files(kroot)
    img = build_initramfs(kroot, release, pmutest, mode, os.path.join(logdir, 'kexec-%s.cpio.gz' % mode))
    log = os.path.join(logdir, 'kexec-%s.log' % mode)
    cmd = [qemu, '-nodefaults', '-display', 'none', '-machine', 'q35', '-m', '1G', '-smp', str(SMP),
           '-accel', 'tcg,thread=multi', '-cpu', profile_cpu(),
           '-kernel', vmlinuz, '-initrd', img,
           '-append', 'console=ttyS0 nmi_watchdog=1 panic=-1 quiet' + MODES[mode]['linux_args'],
           '-serial', 'file:' + log, '-device', DEBUG_EXIT]
    if mode == 'crash':
        cmd.insert(1, '-no-reboot')     # a reset would end QEMU: told apart by Linux's second boot

    def stop(text, elapsed):
        end = text.find('# pmutest: end exit=')
        return end >= 0 and TAG + ' linux up' in text[end:]
    print('+ ' + ' '.join(cmd), flush=True)
    res = run_qemu(cmd, log, timeout, stop_when=stop)
    with open(log, errors='replace', newline='') as f:
        text = f.read()
    pm_log = os.path.join(logdir, 'kexec-%s.pmutest.log' % mode)
    report = pmutest_part(text)
    end = report.find('\n', report.find('# pmutest: end exit=')) if '# pmutest: end exit=' in report else -1
    with open(pm_log, 'w', newline='') as f:
        f.write('\n' + (report[:end + 1] if end >= 0 else report))
    check = subprocess.run([sys.executable, RUNNER, '--quiet', '--log', pm_log, '--cpus',
                            str(linux_facts(text)['cpus'] or SMP), '--expect', EXPECT,
                            '--junit', os.path.join(logdir, 'kexec-%s.junit.xml' % mode)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors='replace')
    print(check.stdout, end='')
    problems = judge(mode, text, res.status, res.timed_out, check.returncode == 0)
    if res.timed_out:
        problems.append('QEMU still running after %d s (the host was slow, or a side hung)' % timeout)
    return problems, res


def main(argv=None):
    ap = argparse.ArgumentParser(prog='python3 -m harness.kexec', description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--kernel', default=os.path.join(ROOT, 'build', 'pmutest.elf'))
    ap.add_argument('--only', choices=sorted(MODES))
    ap.add_argument('--logdir', default=os.path.join(ROOT, 'build', 'kexec'))
    ap.add_argument('--timeout', type=int, default=600,
                    help='seconds per boot before QEMU is stopped (TCG on a busy host)')
    a = ap.parse_args(argv)
    os.makedirs(a.logdir, exist_ok=True)
    qemu = emulated_qemu()
    passed = failed = 0
    for mode in [a.only] if a.only else ['exec', 'crash']:
        t0 = time.monotonic()
        problems, res = run_mode(mode, a.kernel, a.logdir, qemu, a.timeout)
        for p in problems:
            print('kexec %s: %s' % (mode, p))
        if problems:
            failed += 1
            print('not ok kexec-%s (%.0f s, log %s/kexec-%s.log)' % (mode, time.monotonic() - t0, a.logdir, mode))
        else:
            passed += 1
            print('ok kexec-%s (%.0f s)' % (mode, time.monotonic() - t0))
    print('kexec-test: %d passed, %d failed, 0 skipped' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
