"""netboot: boot pmutest from the TFTP tree `make netboot` lays out, as a
lab's PXE client does, and judge the serial log.

QEMU's user-mode network is the lab: its DHCP server names the boot file
(-netdev user,tftp=TREE,bootfile=FILE) and its TFTP server serves the tree.
The NIC is an e1000 with the option ROM Debian ships (ipxe-qemu's
efi-e1000.rom: iPXE for BIOS and for UEFI in one ROM); UEFI runs OVMF. The
clients:

  bios       BIOS PXE -> GRUB's core.0 -> grub.cfg -> pmutest.elf (multiboot2)
  bios-ipxe  BIOS iPXE -> pmutest.ipxe -> pmutest.elf (multiboot1)
  uefi       OVMF PXE -> GRUB's core.efi -> grub.cfg -> pmutest.elf (multiboot2)
  lava-tftp  BIOS iPXE -> the commands LAVA types for ci-examples/lava-job-tftp.yaml
             (rendered into a script, {SERVER_IP} and {KERNEL} filled in as
             LAVA's TFTP deploy does) -> pmutest.elf (multiboot1)

The log is judged by tools/pmutest-run --log (complete KTAP, expected
outcomes, every CPU online), and further: QEMU's status must be the one the
end marker's exit code gives, and the log must show the path taken (the
loader and protocol the kernel names; under UEFI, iPXE's EFI load line).
Exit status 0 when all hold; one line per problem otherwise.

  python3 -m harness.netboot --tree build/netboot --client uefi --smp 2 \\
      --expect tests/expect/tcg.expect --log-file build/netboot-uefi.log
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

from harness import _paths
from pmutest.qemu import DEBUG_EXIT, QEMU, accel_args, find_ovmf, private_ovmf, run_qemu, stop_after_end_grace

RUNNER = os.path.join(_paths.TOOLS, 'pmutest-run')

# client -> (boot file in the tree, firmware, what the log must say)
CLIENTS = {
    'bios': ('boot/grub/i386-pc/core.0', 'bios', ('booted by GRUB', '(multiboot2)')),
    'bios-ipxe': ('pmutest.ipxe', 'bios', ('booted by iPXE', '(multiboot1), command line "tftp://')),
    'uefi': ('boot/grub/x86_64-efi/core.efi', 'uefi',
             ('core.efi : ', '[EFI]', 'booted by GRUB', '(multiboot2)')),
    'lava-tftp': ('lava-job-tftp.ipxe', 'bios', ('booted by iPXE', '(multiboot1), command line "tftp://')),
}
LAVA_JOB = os.path.join(_paths.ROOT, 'ci-examples', 'lava-job-tftp.yaml')
# QEMU's user network: the TFTP server's address, as LAVA's dispatcher's.
SERVER_IP = '10.0.2.2'


def lava_script(job_path, kernel='boot/pmutest.elf'):
    """The job's inline iPXE boot commands as a script, with the
    placeholders LAVA's BootloaderCommandOverlay substitutes filled in."""
    import yaml
    with open(job_path) as f:
        job = yaml.safe_load(f)
    boot = [a['boot'] for a in job['actions'] if 'boot' in a][0]
    if boot.get('method') != 'ipxe' or not isinstance(boot.get('commands'), list):
        raise SystemExit('netboot: %s has no inline ipxe commands' % job_path)
    lines = [c.replace('{SERVER_IP}', SERVER_IP).replace('{KERNEL}', kernel) for c in boot['commands']]
    return '#!ipxe\n' + '\n'.join(lines) + '\n'


def qemu_command(tree, client, smp, log, workdir, qemu=QEMU):
    """The QEMU argv for one network boot (no disk: the NIC is the only
    boot device)."""
    bootfile, firmware, _ = CLIENTS[client]
    cmd = [qemu, '-nodefaults', '-no-reboot', '-display', 'none', '-machine', 'q35',
           '-m', '512M', '-smp', str(smp)] + accel_args('tcg', 'max')
    if firmware == 'uefi':
        ovmf = private_ovmf(find_ovmf(), workdir)
        if ovmf is None:
            raise SystemExit('netboot: no OVMF firmware installed (package ovmf)')
        if 'bios' in ovmf:
            cmd += ['-bios', ovmf['bios']]
        else:
            cmd += ['-drive', 'if=pflash,format=raw,unit=0,readonly=on,file=' + ovmf['code'],
                    '-drive', 'if=pflash,format=raw,unit=1,file=' + ovmf['vars']]
    # tftp= and bootfile= are comma-separated QEMU options: no commas in paths.
    cmd += ['-netdev', 'user,id=net0,tftp=%s,bootfile=%s' % (os.path.abspath(tree), bootfile),
            '-device', 'e1000,netdev=net0,bootindex=1', '-boot', 'n',
            '-serial', 'file:' + log, '-device', DEBUG_EXIT]
    return cmd


def status_problems(text, status):
    """QEMU's status must be what the kernel's end marker asked for
    (isa-debug-exit: (code << 1) | 1), or, when the command line says
    exit=reboot, 0: the kernel resets the machine and QEMU's -no-reboot
    turns that reset into an exit with status 0."""
    m = re.search(r'# pmutest: end exit=(0x[0-9a-f]+)', text)
    if not m:
        return []  # the runner already says the log is incomplete
    cmdline = re.search(r'command line "([^"]*)"', text)
    if cmdline and 'exit=reboot' in cmdline.group(1).split():
        if status != 0:
            return ['QEMU status %s, but exit=reboot should reset the machine (status 0 under -no-reboot)'
                    % status]
        return []
    want = (int(m.group(1), 16) << 1) | 1
    if status != want:
        return ['QEMU status %s, but the end marker says exit=%s (status %d)' % (status, m.group(1), want)]
    return []


def main(argv=None):
    ap = argparse.ArgumentParser(prog='python3 -m harness.netboot', description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--tree', default='build/netboot', help='the TFTP tree (make netboot)')
    ap.add_argument('--client', choices=sorted(CLIENTS), required=True)
    ap.add_argument('--smp', type=int, default=2)
    ap.add_argument('--expect', default=os.path.join(_paths.ROOT, 'tests', 'expect', 'tcg.expect'))
    ap.add_argument('--log-file', required=True)
    ap.add_argument('--junit')
    ap.add_argument('--timeout', type=int, default=300, help='seconds before QEMU is stopped (TCG on a busy host)')
    a = ap.parse_args(argv)
    if a.client == 'lava-tftp':
        with open(os.path.join(a.tree, CLIENTS[a.client][0]), 'w') as f:
            f.write(lava_script(LAVA_JOB))
    for f in (CLIENTS[a.client][0], 'boot/pmutest.elf'):
        if not os.path.isfile(os.path.join(a.tree, f)):
            print('netboot: %s has no %s: run make netboot' % (a.tree, f))
            return 2
    with tempfile.TemporaryDirectory(prefix='pmutest-netboot-') as work:
        cmd = qemu_command(a.tree, a.client, a.smp, a.log_file, work)
        print('+ ' + ' '.join(cmd), flush=True)
        res = run_qemu(cmd, a.log_file, a.timeout, stop_when=stop_after_end_grace())
    with open(a.log_file, errors='replace', newline='') as f:
        text = f.read()
    problems = []
    if res.timed_out:
        problems.append('QEMU still running after %d s (the host was slow, or the boot hung)' % a.timeout)
    check = subprocess.run([sys.executable, RUNNER, '--quiet', '--log', a.log_file, '--cpus', str(a.smp),
                            '--expect', a.expect] + (['--junit', a.junit] if a.junit else []),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors='replace')
    print(check.stdout, end='')
    if check.returncode != 0:
        problems.append('tools/pmutest-run --log rejects the log')
    problems += status_problems(text, res.status)
    problems += ['the log does not say %r (the %s path)' % (fact, a.client)
                 for fact in CLIENTS[a.client][2] if fact not in text]
    for p in problems:
        print('netboot: ' + p)
    print('netboot %s: %s (QEMU status %s after %.1f s)' % (a.client, 'FAIL' if problems else 'PASS',
                                                          res.status, res.elapsed))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
