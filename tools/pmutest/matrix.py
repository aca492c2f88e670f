#!/usr/bin/env python3
"""The boot matrix `make test` runs: every way pmutest boots, each checked by
tools/pmutest-run against an expect file (complete KTAP log, expected
outcomes, CPUs online == -smp, QEMU status).

Runs two QEMUs at a time (the CI machine has 2 cores) and ends with one line
"boot-matrix: N passed, M failed, K skipped". A configuration that cannot run
here (KVM not usable) is SKIP with the reason, never a pass.

  tools/boot-matrix.py --kernel build/pmutest.elf --iso build/pmutest.iso \\
      [--screen-iso build/pmutest-screen.iso] [--only GLOB]
"""
import argparse
import concurrent.futures
import fnmatch
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, 'pmutest-run')
EXPECT = os.path.join(HERE, '..', 'tests', 'expect')

# A command line with everything the parser must survive: unknown options,
# bad values, control bytes, bytes >= 0x80, and more than 4 KiB in all.
GARBAGE_CMDLINE = ('bogus=1 cpus=abc exit=sideways timeout=0 \x01\x02\x7f\xfe\xff '
                   + 'x' * 4500 + ' tests=boot.*,arch.*,smp.*,pmu.*')


def configs(kernel, iso, screen_iso=None):
    k, i = ['--kernel', kernel], ['--iso', iso]
    tcg = ['--accel', 'tcg']
    e = lambda name: ['--expect', os.path.join(EXPECT, name)]
    logs = os.path.join(HERE, '..', 'tests', 'logs')
    return [
        ('stored-log-kvm-nopmu', ['--log', os.path.join(logs, 'kvm-nopmu-smp4.log'), '--cpus', '4']
         + e('kvm-nopmu.expect'), None),
        ('stored-log-selftest', ['--log', os.path.join(logs, 'selftest-tcg-smp4.log')]
         + e('selftest.expect'), None),
        ('kernel-tcg-smp1-q35', k + tcg + ['--smp', '1'] + e('tcg-smp1.expect'), None),
        ('kernel-tcg-smp4-q35', k + tcg + ['--smp', '4'] + e('tcg.expect'), None),
        ('kernel-tcg-smp64-q35', k + tcg + ['--smp', '64'] + e('tcg.expect'), None),
        ('kernel-tcg-smp64-pc', k + tcg + ['--smp', '64', '--machine', 'pc'] + e('tcg.expect'), None),
        ('kernel-tcg-smp255-q35', k + tcg + ['--smp', '255'] + e('tcg.expect'), None),
        ('kernel-tcg-intel-skylake', k + tcg + ['--smp', '2', '--cpu', 'Skylake-Client'] + e('tcg.expect'), None),
        ('kernel-tcg-amd-epyc', k + tcg + ['--smp', '2', '--cpu', 'EPYC'] + e('tcg.expect'), None),
        ('kernel-kvm-smp4', k + ['--accel', 'kvm', '--smp', '4'] + e('kvm-nopmu.expect'), 'kvm'),
        # An AMD CPU model on this KVM: its legacy counter MSRs take writes
        # and read back 0, which must end in SKIP "counters do not count".
        ('kernel-kvm-amd-model', k + ['--accel', 'kvm', '--smp', '2', '--cpu', 'EPYC,vendor=AuthenticAMD']
         + e('kvm-nopmu.expect'), 'kvm'),
        ('iso-cd-bios', i + tcg + ['--boot', 'cd', '--firmware', 'bios', '--smp', '2'] + e('tcg.expect'), None),
        ('iso-cd-uefi', i + tcg + ['--boot', 'cd', '--firmware', 'uefi', '--smp', '2'] + e('tcg.expect'), None),
        ('iso-usb-bios', i + tcg + ['--boot', 'usb', '--firmware', 'bios', '--smp', '2'] + e('tcg.expect'), None),
        ('iso-usb-uefi', i + tcg + ['--boot', 'usb', '--firmware', 'uefi', '--smp', '2'] + e('tcg.expect'), None),
        ('selftest-tcg-smp4', k + tcg + ['--smp', '4', '--append', 'tests=selftest.*'] + e('selftest.expect'), None),
        ('cmdline-unknown-option', k + tcg + ['--smp', '2', '--append', 'frobnicate=yes cpus=2'] + e('bad-cmdline.expect'), None),
        ('cmdline-garbage-4k', k + tcg + ['--smp', '2', '--append', GARBAGE_CMDLINE] + e('bad-cmdline.expect'), None),
        ('cmdline-cpus2-of-4', k + tcg + ['--smp', '4', '--cpus', '2', '--append', 'cpus=2'] + e('tcg.expect'), None),
        # A fault outside any test must end in a dump and QEMU status 127,
        # never a silent reset: the runner rightly calls such a log
        # incomplete, so these pass when it fails for exactly that reason.
        ('panic-ud-outside-test', k + tcg + ['--smp', '2', '--append', 'debug.fault=ud'],
         ('panic', '# PANIC: unexpected exception outside any test', '#UD invalid opcode')),
        ('panic-double-fault', k + tcg + ['--smp', '2', '--append', 'debug.fault=df'],
         ('panic', '# PANIC: #DF double fault', '#DF double fault (vector 8)')),
        ('framebuffer-ovmf-screenshot', [], ('screen', screen_iso)) if screen_iso else None,
        ('cmdline-empty', k + tcg + ['--smp', '2', '--append', ''] + e('tcg.expect'), None),
    ]


def kvm_unusable_reason(kernel):
    """Why KVM cannot run here, or None. Asks QEMU alone (no pmutest kernel),
    so a kernel that crashes under KVM is a failure of its KVM configs, not a
    reason to skip them."""
    if not os.path.exists('/dev/kvm'):
        return 'no /dev/kvm'
    if not os.access('/dev/kvm', os.R_OK | os.W_OK):
        return '/dev/kvm is not read/writable by this user'
    # -S: create the VM and its vCPUs, run nothing. Still alive after 3 s
    # means KVM initialised; an early exit carries QEMU's reason.
    proc = subprocess.Popen(['qemu-system-x86_64', '-accel', 'kvm', '-machine', 'q35', '-nodefaults',
                             '-display', 'none', '-S'], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = proc.communicate(timeout=3)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None
    lines = [l for l in out.splitlines() if l.strip()] or ['exit %d' % proc.returncode]
    return 'QEMU could not start a KVM guest: ' + lines[-1]


def panic_verdict(rc, out, log, want):
    """0 when the run panicked as wanted: QEMU status 127, the panic line and
    the register dump in the log; else 1, with the reason added to out."""
    text = open(log, errors='replace').read() if os.path.exists(log) else ''
    missing = [w for w in want[1:] + ('RIP 0008:', '# pmutest: panic') if w not in text]
    if 'qemu status: 127' not in out:
        missing.append('QEMU status 127')
    if not missing:
        return 0, out
    return 1, out + '\nexpected a panic, missing: %s\n' % ', '.join(missing)


# Debian 12 ships the first pair; newer releases only the 4M one.
OVMF_PAIRS = (('/usr/share/OVMF/OVMF_CODE.fd', '/usr/share/OVMF/OVMF_VARS.fd'),
              ('/usr/share/OVMF/OVMF_CODE_4M.fd', '/usr/share/OVMF/OVMF_VARS_4M.fd'))
OVMF = next((p for p in OVMF_PAIRS if os.path.exists(p[0])), OVMF_PAIRS[0])


def hmp(sock_path, command, timeout=10):
    """Send one QEMU human-monitor command over its unix socket."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(sock_path)
    s.sendall(command.encode() + b'\n')
    time.sleep(0.5)
    s.close()


def screenshot_run(iso, logdir, name, timeout=180):
    """Boot the screen ISO under OVMF with a VGA device, wait for the end
    marker on the serial port, take a QEMU screendump and check that the
    screen shows the serial log's last lines (tools/fb-screenshot-check.py).
    Returns (rc, output)."""
    tmp = tempfile.mkdtemp(prefix='pmutest-screen-')
    log = os.path.join(logdir, name + '.log')
    shot = os.path.join(logdir, name + '.ppm')
    sock = os.path.join(tmp, 'monitor.sock')
    for f in (log, shot):
        if os.path.exists(f):
            os.remove(f)
    shutil.copy(OVMF[1], os.path.join(tmp, 'vars.fd'))
    cmd = ['qemu-system-x86_64', '-nodefaults', '-no-reboot', '-machine', 'q35', '-accel', 'tcg',
           '-cpu', 'max', '-m', '512M', '-smp', '2', '-display', 'none', '-device', 'VGA',
           '-drive', 'if=pflash,format=raw,unit=0,readonly=on,file=' + OVMF[0],
           '-drive', 'if=pflash,format=raw,unit=1,file=' + os.path.join(tmp, 'vars.fd'),
           '-cdrom', iso, '-serial', 'file:' + log, '-monitor', 'unix:%s,server,nowait' % sock,
           '-device', 'isa-debug-exit,iobase=0xf4,iosize=0x04']
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    out = ''
    try:
        end = time.monotonic() + timeout
        while time.monotonic() < end and proc.poll() is None:
            text = open(log, errors='replace').read() if os.path.exists(log) else ''
            if '# pmutest: end' in text:
                break
            time.sleep(0.5)
        else:
            return 1, 'no end marker on the serial port within %d s (QEMU %s)' % (
                timeout, 'exited %s' % proc.returncode if proc.poll() is not None else 'running')
        time.sleep(1)  # the framebuffer is written with the serial line; let it settle
        hmp(sock, 'screendump ' + shot)
        for _ in range(20):
            if os.path.exists(shot) and os.path.getsize(shot) > 0:
                break
            time.sleep(0.5)
        hmp(sock, 'quit')
        check = subprocess.run([sys.executable, os.path.join(HERE, 'fb-screenshot-check.py'), shot, log],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out = check.stdout
        text = open(log, errors='replace').read()
        if '# fbcon:' not in text:
            return 1, out + '\nthe kernel reported no framebuffer console (no "# fbcon:" line)'
        return check.returncode, out
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def run_one(name, args, kind, logdir):
    if isinstance(kind, tuple) and kind[0] == 'screen':
        t0 = time.monotonic()
        rc, out = screenshot_run(kind[1], logdir, name)
        return name, rc, out, time.monotonic() - t0
    log = os.path.join(logdir, name + '.log')
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, RUNNER, '--quiet', '--timeout', '300', '--log-file', log,
                           '--junit', os.path.join(logdir, name + '.junit.xml')] + args,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors='replace')
    rc, out = proc.returncode, proc.stdout
    if isinstance(kind, tuple) and kind[0] == 'panic':
        rc, out = panic_verdict(rc, out, log, kind)
    return name, rc, out, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--kernel', required=True)
    ap.add_argument('--iso', required=True)
    ap.add_argument('--screen-iso', help='ISO for the framebuffer screenshot check (tests=boot.* exit=halt)')
    ap.add_argument('--only', default='*', help='run only configurations matching this glob')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--logdir', default='build/matrix')
    a = ap.parse_args()
    os.makedirs(a.logdir, exist_ok=True)

    todo = [c for c in configs(a.kernel, a.iso, a.screen_iso) if c and fnmatch.fnmatch(c[0], a.only)]
    skipped = {}
    if any(c[2] == 'kvm' for c in todo):
        reason = kvm_unusable_reason(a.kernel)
        if reason:
            for c in todo:
                if c[2] == 'kvm':
                    skipped[c[0]] = reason
    passed = failed = 0
    n = 0
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        futs = [pool.submit(run_one, name, args, kind, a.logdir) for name, args, kind in todo
                if name not in skipped]
        for name in skipped:
            n += 1
            print('ok %d %s # SKIP %s' % (n, name, skipped[name]), flush=True)
        for fut in concurrent.futures.as_completed(futs):
            name, rc, out, secs = fut.result()
            n += 1
            if rc == 0:
                passed += 1
                print('ok %d %s (%.1f s)' % (n, name, secs), flush=True)
            else:
                failed += 1
                print('not ok %d %s (%.1f s, runner exit %d, log %s/%s.log)' % (n, name, secs, rc, a.logdir, name))
                for line in out.splitlines()[-25:]:
                    print('    # ' + line)
                sys.stdout.flush()
    print('boot-matrix: %d passed, %d failed, %d skipped' % (passed, failed, len(skipped)))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
