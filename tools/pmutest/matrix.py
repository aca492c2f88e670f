"""The boot matrix `make test` runs: every way pmutest boots, each checked by
tools/pmutest-run against an expect file (complete KTAP log, expected
outcomes, CPUs online == -smp, QEMU status), and every booted log also read
by a line-splitting consumer (pmutest.linesplit) both ways it splits, and
every JUnit file checked against the xunit and Ant schemas.
The LAVA configurations boot the QEMU command LAVA's qemu device type
renders for ci-examples/lava-job.yaml, captured through a pty as LAVA
captures it, with LAVA's monitor run live over pexpect. The menu
configuration boots the ISO as a physical machine sees it (SMBIOS
manufacturer other than QEMU) and picks the selftest by its hotkey.

Runs two QEMUs at a time (the CI machine has 2 cores) and ends with one line
"boot-matrix: N passed, M failed, K skipped". A configuration that cannot run
here (KVM not usable, a Python module missing) is SKIP with the reason,
never a pass.

  tools/boot-matrix.py --kernel build/pmutest.elf --iso build/pmutest.iso \\
      [--screen-iso build/pmutest-screen.iso] [--only GLOB]
"""
import argparse
import concurrent.futures
import fnmatch
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from . import REPO_ROOT, lava, linesplit
from .junit_schema import validate
from .ktap import clean_line, diagnostics_before_version, parse_ktap
from .qemu import QEMU, QemuConfig, build_qemu_command, find_ovmf, kvm_unusable_reason, private_ovmf

TOOLS = os.path.join(REPO_ROOT, 'tools')
RUNNER = os.path.join(TOOLS, 'pmutest-run')
EXPECT = os.path.join(REPO_ROOT, 'tests', 'expect')
LOGS = os.path.join(REPO_ROOT, 'tests', 'logs')
LAVA_JOB = os.path.join(REPO_ROOT, 'ci-examples', 'lava-job.yaml')

# A command line with everything the parser must survive: unknown options,
# bad values, control bytes, bytes >= 0x80, and more than 4 KiB in all.
GARBAGE_CMDLINE = ('bogus=1 cpus=abc exit=sideways timeout=0 \x01\x02\x7f\xfe\xff '
                   + 'x' * 4500 + ' tests=boot.*,arch.*,smp.*,pmu.*')


# QEMU -machine pc without ACPI: SeaBIOS writes an MP table (one processor
# entry per package, so one socket per CPU) and no RSDP, the shape of a
# Firecracker guest.
NO_ACPI = ['--machine', 'pc', '--extra-qemu=-machine', '--extra-qemu=acpi=off',
           '--extra-qemu=-smp', '--extra-qemu=4,sockets=4,cores=1,threads=1']


def configs(kernel, iso, screen_iso=None, pvh_kernel=None, netboot_tree=None):
    """(name, pmutest-run arguments, kind): kind None for a plain run, 'kvm'
    for one that needs KVM, or a tuple for the special checks ('facts', ...:
    a plain run whose log must also hold each of these boot facts)."""
    k, i = ['--kernel', kernel], ['--iso', iso]
    pvh = ['--kernel', pvh_kernel or os.path.join(os.path.dirname(kernel), 'pmutest-pvh.elf')]
    tcg = ['--accel', 'tcg']

    def e(name):
        return ['--expect', os.path.join(EXPECT, name)]
    return [
        ('stored-log-kvm-nopmu', ['--log', os.path.join(LOGS, 'kvm-nopmu-smp4.log'), '--cpus', '4']
         + e('kvm-nopmu.expect'), None),
        ('stored-log-selftest', ['--log', os.path.join(LOGS, 'selftest-tcg-smp4.log')]
         + e('selftest.expect'), None),
        ('stored-log-iso-bios', ['--log', os.path.join(LOGS, 'iso-bios-tcg-smp2.log'), '--cpus', '2']
         + e('tcg.expect'), None),
        ('stored-log-lava-pty', ['--log', os.path.join(LOGS, 'lava-pty-tcg-smp4.log'), '--cpus', '4']
         + e('tcg.expect'), None),
        ('kernel-tcg-smp1-q35', k + tcg + ['--smp', '1'] + e('tcg-smp1.expect'), None),
        ('kernel-tcg-smp4-q35', k + tcg + ['--smp', '4'] + e('tcg.expect'), None),
        ('kernel-tcg-smp64-q35', k + tcg + ['--smp', '64'] + e('tcg.expect'), None),
        ('kernel-tcg-smp64-pc', k + tcg + ['--smp', '64', '--machine', 'pc'] + e('tcg.expect'), None),
        ('kernel-tcg-smp255-q35', k + tcg + ['--smp', '255'] + e('tcg.expect'), None),
        ('kernel-tcg-intel-skylake', k + tcg + ['--smp', '2', '--cpu', 'Skylake-Client'] + e('tcg.expect'), None),
        ('kernel-tcg-amd-epyc', k + tcg + ['--smp', '2', '--cpu', 'EPYC'] + e('tcg.expect'), None),
        # --expect auto: the runner reads this host and picks the KVM file.
        ('kernel-kvm-smp4', k + ['--accel', 'kvm', '--smp', '4', '--expect', 'auto'], 'kvm'),
        # An AMD CPU model on this KVM: its legacy counter MSRs take writes
        # and read back 0, which must end in SKIP "counters do not count".
        ('kernel-kvm-amd-model', k + ['--accel', 'kvm', '--smp', '2', '--cpu', 'EPYC,vendor=AuthenticAMD']
         + e('kvm-nopmu.expect'), 'kvm'),
        ('iso-cd-bios', i + tcg + ['--boot', 'cd', '--firmware', 'bios', '--smp', '2'] + e('tcg.expect'), None),
        ('iso-cd-uefi', i + tcg + ['--boot', 'cd', '--firmware', 'uefi', '--smp', '2'] + e('tcg.expect'), None),
        ('iso-usb-bios', i + tcg + ['--boot', 'usb', '--firmware', 'bios', '--smp', '2'] + e('tcg.expect'), None),
        # What a physical machine shows: the menu, and its selftest entry.
        ('iso-grub-menu-selftest', [], ('menu', iso)),
        ('iso-usb-uefi', i + tcg + ['--boot', 'usb', '--firmware', 'uefi', '--smp', '2'] + e('tcg.expect'), None),
        ('selftest-tcg-smp4', k + tcg + ['--smp', '4', '--append', 'tests=selftest.*'] + e('selftest.expect'), None),
        ('verdict-selftest-tcg', k + tcg + ['--smp', '2', '--append', 'tests=verdict.*']
         + e('verdict-selftest.expect'), None),
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
        # A CPU without long mode (Core Duo): the kernel says why; under
        # QEMU it leaves with the panic status, on bare metal (no
        # hypervisor bit) it halts, so that run must be stopped.
        ('no-long-mode-qemu-exits', k + tcg + ['--smp', '2', '--cpu', 'coreduo'],
         ('no-long-mode', 127)),
        ('no-long-mode-bare-metal-halts', k + tcg + ['--smp', '2', '--cpu', 'coreduo,hypervisor=off',
                                                     '--timeout', '3'], ('no-long-mode', None)),
        ('framebuffer-ovmf-screenshot', [], ('screen', screen_iso)) if screen_iso else None,
        ('cmdline-empty', k + tcg + ['--smp', '2', '--append', ''] + e('tcg.expect'), None),
        # PVH: the image without a multiboot1 header, which QEMU -kernel
        # boots through the PVH note (SeaBIOS's pvh.bin builds start_info).
        ('pvh-tcg-smp4-q35', pvh + tcg + ['--smp', '4', '--append', 'cpus=4']
         + e('tcg.expect'), ('facts', '(pvh), command line "cpus=4"',
                             '# boot: entry pvh, memory map from start_info',
                             'ACPI RSDP from start_info, CPUs from the ACPI MADT')),
        ('pvh-tcg-smp2-pc', pvh + tcg + ['--smp', '2', '--machine', 'pc'] + e('tcg.expect'),
         ('facts', '# boot: entry pvh, memory map from start_info')),
        # Network boot from `make netboot`'s TFTP tree through QEMU's own
        # DHCP/TFTP server (harness/netboot.py): BIOS PXE to GRUB, BIOS
        # iPXE to its script, UEFI PXE to GRUB.
        ('netboot-pxe-bios-grub', [], ('netboot', netboot_tree, 'bios')) if netboot_tree else None,
        ('netboot-ipxe-bios-script', [], ('netboot', netboot_tree, 'bios-ipxe')) if netboot_tree else None,
        ('netboot-pxe-uefi-grub', [], ('netboot', netboot_tree, 'uefi')) if netboot_tree else None,
        # The iPXE commands ci-examples/lava-job-tftp.yaml has LAVA type.
        ('netboot-lava-tftp-commands', [], ('netboot', netboot_tree, 'lava-tftp')) if netboot_tree else None,
        # kexec from Linux on the emulated PMU (harness/kexec.py): kexec -e
        # (GLOBAL_CTRL as Linux left it, exit=reboot) and kexec -p after a
        # panic (the watchdog's counter in use, taken over, exit=poweroff).
        ('kexec-linux-exec-reboot', [], ('kexec', kernel, 'exec')),
        ('kexec-linux-crash-takeover', [], ('kexec', kernel, 'crash')),
        # QEMU's microvm machine (qboot, no PCI): a microVM's shape. With
        # ACPI, the RSDP through start_info; without, qboot's MP table,
        # whose entry count is 0 as Firecracker's is: every CPU from it.
        ('pvh-microvm-smp4', pvh + tcg + ['--smp', '4', '--extra-qemu=-machine', '--extra-qemu=microvm']
         + e('tcg.expect'), ('facts', '# boot: entry pvh', 'ACPI RSDP from start_info, CPUs from the ACPI MADT')),
        ('pvh-microvm-mptable', pvh + tcg + ['--smp', '4', '--extra-qemu=-machine',
                                             '--extra-qemu=microvm,acpi=off'] + e('no-acpi.expect'),
         ('facts', '# boot: entry pvh', 'ACPI RSDP from nowhere (no ACPI tables), CPUs from the MP table')),
        # No ACPI: every CPU of the MP table up, by multiboot and by PVH.
        ('no-acpi-mptable-multiboot', k + tcg + ['--smp', '4'] + NO_ACPI + e('no-acpi.expect'),
         ('facts', '# boot: entry multiboot1', 'ACPI RSDP from nowhere (no ACPI tables), CPUs from the MP table')),
        ('no-acpi-mptable-pvh', pvh + tcg + ['--smp', '4'] + NO_ACPI + e('no-acpi.expect'),
         ('facts', '# boot: entry pvh', 'ACPI RSDP from nowhere (no ACPI tables), CPUs from the MP table')),
        # LAVA's rendering of ci-examples/lava-job.yaml through a pty, as is
        # and with its UEFI line uncommented (OVMF must really boot).
        ('lava-tcg-pty', [], ('lava', iso, False)),
        ('lava-tcg-uefi-pty', [], ('lava', iso, True)),
    ]


def panic_verdict(rc, out, log, want):
    """0 when the run panicked as wanted: QEMU status 127, the panic line and
    the register dump in the log; else 1, with the reason added to out."""
    text = _read(log)
    missing = [w for w in want[1:] + ('RIP 0008:', '# pmutest: panic') if w not in text]
    if 'qemu status: 127' not in out:
        missing.append('QEMU status 127')
    if not missing:
        return 0, out
    return 1, out + '\nexpected a panic, missing: %s\n' % ', '.join(missing)


NO_LONG_MODE = 'pmutest: this CPU has no long mode'


def no_long_mode_verdict(out, log, want_status):
    """0 when the kernel refused the CPU as wanted: the no-long-mode line in
    the log, and QEMU status want_status (None: still running, halted,
    until the runner stopped it); else 1, with the reason added to out."""
    missing = [] if NO_LONG_MODE in _read(log) else ['the line "%s ..."' % NO_LONG_MODE]
    if want_status is None and 'timeout: QEMU was still running' not in out:
        missing.append('a halted kernel (QEMU still running at the timeout)')
    if want_status is not None and 'qemu status: %d ' % want_status not in out:
        missing.append('QEMU status %d' % want_status)
    if not missing:
        return 0, out
    return 1, out + '\nexpected the no-long-mode stop, missing: %s\n' % ', '.join(missing)


def _read(path):
    try:
        with open(path, errors='replace', newline='') as f:
            return f.read()
    except OSError:
        return ''


def linesplit_problems(text):
    """How a line-splitting consumer's reading differs from pmutest's own."""
    want = [(leaf.identity, leaf.outcome) for leaf in parse_ktap(text).leaves]
    problems = []
    for how in ('splitlines', 'lf'):
        leaves, errors = linesplit.parse(text, how)
        if errors or leaves != want:
            problems.append('line-splitting consumer (%s): %d of %d leaves, errors: %s'
                            % (how, len(leaves), len(want), '; '.join(errors[:3]) or 'none'))
    return problems


def preamble_problems(text):
    """Kernel notes printed before "KTAP version 1", where every KTAP
    consumer drops them with the firmware's and GRUB's output."""
    return ['kernel line before "KTAP version 1" (consumers drop it as preamble): %r' % line
            for line in diagnostics_before_version(text)]


def junit_problems(path):
    """Where the run's JUnit file breaks the schemas CI tools apply."""
    text = _read(path)
    if not text:
        return ['no JUnit file %s' % path]
    return ['JUnit (%s): %s' % (schema, e) for schema in ('xunit', 'ant') for e in validate(text, schema)]


# ---------------------------------------------------------------- screenshot

HMP_PROMPT = b'(qemu) '


def hmp(sock_path, command, timeout=120):
    """Send one QEMU human-monitor command over its unix socket and wait
    until the monitor has run it: it prints its prompt once at the start
    and again when the command is done. A fixed pause instead lost the
    screendump on a busy host (the file never appeared). Returns False if
    the prompt did not come back within timeout ('quit' may close the
    socket first, which counts as done)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(sock_path)
        seen, prompts = b'', 0
        end = time.monotonic() + timeout
        while prompts < 1 and time.monotonic() < end:
            chunk = s.recv(4096)
            if not chunk:
                return False
            seen += chunk
            prompts = seen.count(HMP_PROMPT)
        s.sendall(command.encode() + b'\n')
        while prompts < 2 and time.monotonic() < end:
            chunk = s.recv(4096)
            if not chunk:
                return command == 'quit'
            seen += chunk
            prompts = seen.count(HMP_PROMPT)
        return prompts >= 2
    except OSError:
        return command == 'quit'
    finally:
        s.close()


def screenshot_run(iso, logdir, name, timeout=180):
    """Boot the screen ISO under OVMF with a VGA device, wait for the end
    marker on the serial port, take a QEMU screendump and check that the
    screen shows the serial log's last lines (pmutest.fbcheck).
    Returns (rc, output)."""
    tmp = tempfile.mkdtemp(prefix='pmutest-screen-')
    log = os.path.join(logdir, name + '.log')
    shot = os.path.join(logdir, name + '.ppm')
    sock = os.path.join(tmp, 'monitor.sock')
    for f in (log, shot):
        if os.path.exists(f):
            os.remove(f)
    ovmf = find_ovmf()
    if ovmf is None:
        return 1, 'no OVMF firmware installed (package ovmf)'
    cfg = QemuConfig(iso=iso, firmware='uefi', ovmf=private_ovmf(ovmf, tmp), smp=2, serial_log=log,
                     extra=('-device', 'VGA', '-monitor', 'unix:%s,server,nowait' % sock))
    proc = subprocess.Popen(build_qemu_command(cfg), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    try:
        end = time.monotonic() + timeout
        while time.monotonic() < end and proc.poll() is None:
            if '# pmutest: end' in _read(log):
                break
            time.sleep(0.5)
        else:
            return 1, 'no end marker on the serial port within %d s (QEMU %s)' % (
                timeout, 'exited %s' % proc.returncode if proc.poll() is not None else 'running')
        time.sleep(1)  # the framebuffer is written with the serial line; let it settle
        if not hmp(sock, 'screendump ' + shot):
            return 1, 'the QEMU monitor did not finish "screendump" within 120 s (a busy host?)'
        hmp(sock, 'quit')
        check = subprocess.run([sys.executable, '-m', 'pmutest.fbcheck', shot, log],
                               env=dict(os.environ, PYTHONPATH=TOOLS),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out = check.stdout
        if '# fbcon:' not in _read(log):
            return 1, out + '\nthe kernel reported no framebuffer console (no "# fbcon:" line)'
        early = preamble_problems(_read(log))
        if early:
            return 1, out + '\n' + '\n'.join(early)
        return check.returncode, out
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------- the GRUB menu

GRUB_CFG = os.path.join(REPO_ROOT, 'iso', 'grub.cfg.in')


def menu_titles(cfg_text):
    return re.findall(r'^menuentry "([^"]+)"', cfg_text, re.M)


def menu_run(iso, logdir, name, timeout=120):
    """The menu a physical machine shows: boot the ISO (SeaBIOS, CD) with
    an SMBIOS manufacturer other than QEMU, wait for every entry of
    iso/grub.cfg.in on the serial port, type the selftest's hotkey, and
    check the run with tools/pmutest-run against selftest.expect.
    Returns (rc, output)."""
    log = os.path.join(logdir, name + '.log')
    titles = menu_titles(_read(GRUB_CFG))
    cfg = QemuConfig(iso=iso, boot='cd', smp=2, accel='tcg', serial_log=log,
                     extra=('-smbios', 'type=1,manufacturer=pmutest menu check'))
    cmd = build_qemu_command(cfg)
    cmd[cmd.index('-serial') + 1] = 'stdio'    # keys go in where the report comes out
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    text, typed, problems = b'', False, []
    end = time.monotonic() + timeout
    try:
        os.set_blocking(proc.stdout.fileno(), False)
        while time.monotonic() < end:
            chunk = proc.stdout.read() or b''
            text += chunk
            screen = '\n'.join(clean_line(line) for line in text.decode('utf-8', 'replace').split('\n'))
            if not typed and all(t in screen for t in titles):
                proc.stdin.write(b's')
                proc.stdin.flush()
                typed = True
            if proc.poll() is not None and not chunk:
                break
            time.sleep(0.05)
        else:
            problems.append('QEMU still running after %d s' % timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        with open(log, 'wb') as f:
            f.write(text)
    if len(titles) != 4:
        problems.append('iso/grub.cfg.in has %d menu entries, not 4' % len(titles))
    if not typed:
        problems.append('the menu never showed all of: %s' % '; '.join(titles))
    captured = _read(log)
    check = subprocess.run([sys.executable, RUNNER, '--log', log, '--cpus', '2',
                            '--expect', os.path.join(EXPECT, 'selftest.expect')],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors='replace')
    if check.returncode != 0:
        problems.append('tools/pmutest-run --log rejects the run the selftest entry started')
    problems += preamble_problems(captured)
    return (1 if problems else 0), '\n'.join([check.stdout] + problems)


# ---------------------------------------------------------------- LAVA over a pty

def lava_skip_reason():
    for module, package in (('yaml', 'python3-yaml'), ('pexpect', 'python3-pexpect')):
        try:
            __import__(module)
        except ImportError:
            return '%s not installed (tools/install-deps.sh pytest-deps)' % package
    if find_ovmf() is None:
        return 'no OVMF firmware installed (package ovmf)'
    return None


def lava_uefi_option(job_text):
    """The UEFI line the job carries commented out in extra_options."""
    for line in job_text.splitlines():
        stripped = line.strip()
        if stripped.startswith('# - -bios '):
            return stripped[len('# - '):].split('  #')[0].strip()
    raise ValueError('%s has no commented "- -bios ..." line in extra_options' % LAVA_JOB)


def lava_pty_run(iso, uefi, logdir, name, timeout=240):
    """Boot what LAVA would, read it the way LAVA does (pexpect over a pty,
    LAVA's settings), run the monitor live; then check the capture with
    pmutest-run and the line-splitting consumer. Returns (rc, output)."""
    import pexpect
    import yaml
    text = _read(LAVA_JOB)
    job = yaml.safe_load(text)
    _, _, monitors = lava.job_parts(job)
    extra = [lava_uefi_option(text)] if uefi else []
    cmd = lava.qemu_command(job, iso, QEMU, extra)
    log = os.path.join(logdir, name + '.log')
    out = ['+ ' + ' '.join(cmd)]
    capture = open(log, 'w', newline='')
    child = pexpect.spawn(cmd[0], cmd[1:], encoding='utf-8', codec_errors='replace',
                          searchwindowsize=4000, maxread=2000, timeout=timeout)
    child.logfile_read = capture
    results, event = [], 'start'
    try:
        child.expect(monitors[0]['start'])
        while True:
            i = child.expect([pexpect.EOF, pexpect.TIMEOUT, monitors[0]['end'], monitors[0]['pattern']])
            if i != 3:
                event = ('EOF', 'TIMEOUT', 'end')[i]
                break
            g = child.match.groupdict()
            results.append((lava.case_id(g['test_case_id']),
                            monitors[0]['fixupdict'].get(g['result'], g['result'])))
    except (pexpect.EOF, pexpect.TIMEOUT) as e:
        event = 'no start (%s)' % type(e).__name__
    finally:
        child.close(force=True)
        capture.close()
    captured = _read(log)
    problems = [] if event == 'end' else ['the monitor stopped at %s, not at the end marker' % event]
    report = captured[captured.find('KTAP version 1'):]
    if '\r\r\n' in report:
        problems.append('the pty capture holds CR CR LF line ends in the report')
    want = lava.expected_results(parse_ktap(captured), captured, monitors[0]['fixupdict'])
    bad = [r for r in results if r[1] not in lava.LAVA_RESULTS]
    if bad or results != want:
        problems.append('the live monitor reported %d results (%d rejected), the log holds %d'
                        % (len(results), len(bad), len(want)))
    firmware = 'BdsDxe' in captured, 'SeaBIOS' in captured
    if firmware != ((True, False) if uefi else (False, True)):
        problems.append('expected %s to boot; the capture shows %s' % (
            'OVMF' if uefi else 'SeaBIOS', 'OVMF' if firmware[0] else 'SeaBIOS' if firmware[1] else 'neither'))
    problems += linesplit_problems(captured) + preamble_problems(captured)
    smp = cmd[cmd.index('-smp') + 1] if '-smp' in cmd else '1'
    check = subprocess.run([sys.executable, RUNNER, '--log', log, '--cpus', smp,
                            '--expect', os.path.join(EXPECT, 'tcg.expect')],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors='replace')
    out.append(check.stdout)
    if check.returncode != 0:
        problems.append('tools/pmutest-run --log rejects the capture')
    out += problems
    return (1 if problems else 0), '\n'.join(out)


# ---------------------------------------------------------------- network boot

def netboot_run(tree, client, logdir, name):
    """harness/netboot.py boots the client from the TFTP tree and judges the
    log (runner, QEMU status, the path taken); the line-splitting consumer,
    the preamble and the JUnit schemas are checked here as for every boot."""
    log, junit = os.path.join(logdir, name + '.log'), os.path.join(logdir, name + '.junit.xml')
    proc = subprocess.run([sys.executable, '-m', 'harness.netboot', '--tree', tree, '--client', client,
                           '--smp', '2', '--log-file', log, '--junit', junit],
                          cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors='replace')
    problems = junit_problems(junit) + linesplit_problems(_read(log)) + preamble_problems(_read(log))
    out = proc.stdout + ''.join('\n' + p for p in problems)
    return (1 if proc.returncode or problems else 0), out


# ---------------------------------------------------------------- one config

def run_one(name, args, kind, logdir):
    t0 = time.monotonic()
    if isinstance(kind, tuple) and kind[0] == 'screen':
        rc, out = screenshot_run(kind[1], logdir, name)
        return name, rc, out, time.monotonic() - t0
    if isinstance(kind, tuple) and kind[0] == 'menu':
        rc, out = menu_run(kind[1], logdir, name)
        return name, rc, out, time.monotonic() - t0
    if isinstance(kind, tuple) and kind[0] == 'lava':
        rc, out = lava_pty_run(kind[1], kind[2], logdir, name)
        return name, rc, out, time.monotonic() - t0
    if isinstance(kind, tuple) and kind[0] == 'netboot':
        rc, out = netboot_run(kind[1], kind[2], logdir, name)
        return name, rc, out, time.monotonic() - t0
    if isinstance(kind, tuple) and kind[0] == 'kexec':
        proc = subprocess.run([sys.executable, '-m', 'harness.kexec', '--kernel', os.path.abspath(kind[1]),
                               '--only', kind[2], '--logdir', os.path.abspath(logdir)],
                              cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              errors='replace')
        return name, proc.returncode, proc.stdout, time.monotonic() - t0
    log, junit = os.path.join(logdir, name + '.log'), os.path.join(logdir, name + '.junit.xml')
    if os.path.exists(junit):
        os.remove(junit)
    proc = subprocess.run([sys.executable, RUNNER, '--quiet', '--timeout', '300', '--log-file', log,
                           '--junit', junit] + args,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors='replace')
    rc, out = proc.returncode, proc.stdout
    if isinstance(kind, tuple) and kind[0] == 'panic':
        rc, out = panic_verdict(rc, out, log, kind)
    elif isinstance(kind, tuple) and kind[0] == 'no-long-mode':
        rc, out = no_long_mode_verdict(out, log, kind[1])
    else:
        live = [] if '--log' in args else linesplit_problems(_read(log)) + preamble_problems(_read(log))
        problems = junit_problems(junit) + live
        if isinstance(kind, tuple) and kind[0] == 'facts':
            text = _read(log)
            problems += ['the log does not say %r' % fact for fact in kind[1:] if fact not in text]
        if problems:
            rc, out = 1, out + '\n' + '\n'.join(problems)
    return name, rc, out, time.monotonic() - t0


def skip_reasons(todo):
    """name -> why it cannot run here, for the configurations that cannot."""
    skipped = {}
    if any(kind == 'kvm' for _, _, kind in todo):
        reason, _ = kvm_unusable_reason(QEMU)
        if reason:
            skipped.update((name, reason) for name, _, kind in todo if kind == 'kvm')
    if any(isinstance(kind, tuple) and kind[0] == 'lava' for _, _, kind in todo):
        reason = lava_skip_reason()
        if reason:
            skipped.update((name, reason) for name, _, kind in todo
                           if isinstance(kind, tuple) and kind[0] == 'lava')
    return skipped


def main(argv=None):
    ap = argparse.ArgumentParser(prog='boot-matrix.py', description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--kernel', required=True)
    ap.add_argument('--iso', required=True)
    ap.add_argument('--screen-iso', help='ISO for the framebuffer screenshot check (tests=boot.* exit=halt)')
    ap.add_argument('--pvh-kernel', help='the PVH image (default: pmutest-pvh.elf beside --kernel)')
    ap.add_argument('--netboot-tree', help='the TFTP tree of make netboot (without it: no network boots)')
    ap.add_argument('--only', default='*', help='run only configurations matching this glob')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--logdir', default='build/matrix')
    a = ap.parse_args(argv)
    os.makedirs(a.logdir, exist_ok=True)

    tree = a.netboot_tree and os.path.abspath(a.netboot_tree)
    todo = [c for c in configs(a.kernel, a.iso, a.screen_iso, a.pvh_kernel, tree)
            if c and fnmatch.fnmatch(c[0], a.only)]
    skipped = skip_reasons(todo)
    passed = failed = n = 0
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
                print('not ok %d %s (%.1f s, exit %d, log %s/%s.log)' % (n, name, secs, rc, a.logdir, name))
                for line in out.splitlines()[-25:]:
                    print('    # ' + line)
                sys.stdout.flush()
    print('boot-matrix: %d passed, %d failed, %d skipped' % (passed, failed, len(skipped)))
    return 1 if failed else 0
