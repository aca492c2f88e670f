"""pmutest-run: boot pmutest under QEMU (or read a stored serial log), check the
KTAP v1 report it prints on the serial port, and give one verdict CI can trust.

Examples:
  tools/pmutest-run --kernel build/pmutest.elf                     # KVM if it works, else TCG
  tools/pmutest-run --kernel build/pmutest.elf --append "tests=pmu.*" --accel kvm --expect auto
  tools/pmutest-run --kernel build/pmutest.elf --accel tcg --cpu EPYC \\
      --expect tests/expect/tcg.expect --junit build/junit.xml
  tools/pmutest-run --iso build/pmutest.iso --boot usb --firmware uefi --smp 8
  tools/pmutest-run --kernel build/pmutest.elf --profile NAME     # an emulated PMU (emu/profiles.list)
  tools/pmutest-run --log build/logs/20250101-120000.log --expect tests/expect/tcg.expect

Exit status: 0 when the log is complete, the QEMU status agrees with it and every
outcome is as expected; 1 for a verdict failure (each reason on a line of its
own); 2 for usage or environment errors.

QEMU status: isa-debug-exit makes QEMU exit with (code << 1) | 1, so the
kernel's codes 0x10 / 0x11 / 0x26 / 0x3f give 33 / 35 / 77 / 127. QEMU's own
errors give 1; a triple fault under -no-reboot gives 0, which is never a pass.

KVM on this host: the runner prints the host's PMU settings (kvm.enable_pmu,
kvm.ignore_msrs, kernel.nmi_watchdog, processes holding perf events) and
warns about each one that will disturb the guest. --expect auto picks the
expect file for the run: the KVM one that fits this host, or the TCG one.

Expect files (--expect): one rule per line, '#' starts a comment.
  <glob> <outcome>[|<outcome>...] [IDs]  outcomes pass fail skip timeout xfail any;
                                      fnmatch glob against "name@cpuN-apicM" and
                                      against the bare name; the last match wins;
                                      IDs (after xfail): the deviations an XFAIL may name
  cpus <N>                            the "# smp: N of M CPUs online" line says N
  exit <status>                       expected QEMU status (e.g. 35)
  summary <P> <F> <S> [<X>]           exact counts as the summary line gives them
  deviations <ID,...>|none            the deviations block lists exactly these
A pass rule does not accept an XFAIL. Every glob must match some test that
ran; tests that match no rule must not fail or time out.
"""
import argparse
import datetime
import fnmatch
import os
import platform
import re
import shlex
import shutil
import sys
import tempfile

from . import REPO_ROOT
from . import host as hostmod
from .expect import ExpectError, Expectations, judge_all, load_expect
from .junit import junit_xml
from .ktap import parse_ktap
from . import profiles
from .profiles import ProfileError
from .qemu import (QEMU, QEMU_PACKAGE, QemuConfig, build_qemu_command, choose_accel, find_ovmf,
                   private_ovmf, run_qemu, stop_after_end_grace)
from .verdict import format_summary, verdict

EXIT_OK, EXIT_VERDICT, EXIT_USAGE = 0, 1, 2
EXPECT_DIR = os.path.join(REPO_ROOT, 'tests', 'expect')


def note(msg):
    print('pmutest-run: ' + msg, flush=True)


class UsageError(Exception):
    pass


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog='pmutest-run', description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog='\n\n'.join(__doc__.split('\n\n')[1:]))
    image = p.add_mutually_exclusive_group(required=True)
    image.add_argument('--kernel', metavar='FILE', help='boot this Multiboot kernel with -kernel')
    image.add_argument('--iso', metavar='FILE', help='boot this ISO (see --boot)')
    image.add_argument('--log', metavar='FILE', help='do not boot: check a stored serial log')
    p.add_argument('--append', metavar='CMDLINE', help='kernel command line (with --kernel)')
    p.add_argument('--boot', choices=('cd', 'usb'), default='cd',
                   help='ISO as a CD-ROM or as a USB stick on xHCI (default cd)')
    p.add_argument('--firmware', choices=('bios', 'uefi'), default='bios',
                   help='SeaBIOS or OVMF (default bios)')
    p.add_argument('--smp', type=int, default=4, help='CPUs (default 4)')
    p.add_argument('--machine', choices=('pc', 'q35'), default='q35', help='default q35')
    p.add_argument('--memory', default='512M', help='guest RAM (default 512M)')
    p.add_argument('--accel', choices=('auto', 'kvm', 'tcg'), default='auto',
                   help='auto: KVM if QEMU can start a KVM guest here, else TCG')
    p.add_argument('--cpu', metavar='MODEL', help='-cpu model (default host under KVM, max under TCG)')
    p.add_argument('--profile', metavar='NAME',
                   help='an emulated PMU from emu/profiles.list: TCG with its -cpu, on the patched QEMU')
    p.add_argument('--qemu', metavar='PATH',
                   help='QEMU binary (default %s; with --profile, emu/qemu/build.sh --print-path)' % QEMU)
    p.add_argument('--extra-qemu', action='append', default=[], metavar='ARG',
                   help='one more QEMU argument (repeatable)')
    p.add_argument('--timeout', type=float, default=120, metavar='SECONDS',
                   help='kill QEMU after this long (default 120)')
    p.add_argument('--log-file', metavar='FILE',
                   help='serial log (default build/logs/<timestamp>.log or a temp file)')
    p.add_argument('--quiet', action='store_true', help='do not stream the serial log')
    p.add_argument('--junit', metavar='FILE', help='write JUnit XML here')
    p.add_argument('--expect', metavar='FILE|auto',
                   help='expected outcomes (format below); auto: the file for this host and accelerator')
    p.add_argument('--cpus', type=int, metavar='N',
                   help='expected online CPUs (overrides the expect file; default --smp when booting)')
    p.add_argument('--no-cpu-check', action='store_true',
                   help='do not default the expected CPU count to --smp')
    p.add_argument('--stop-at-first-failure', action='store_true',
                   help='stop the boot at the first result the expect file does not allow: the verdict '
                        'is FAIL from then on whatever follows (for mutation testing)')
    p.add_argument('--stop-ignore', action='append', default=[], metavar='GLOB',
                   help='with --stop-at-first-failure, a test (glob on its name) whose failure does not '
                        'stop the boot (repeatable); it still counts in the verdict')
    args = p.parse_args(argv)
    if args.append is not None and not args.kernel:
        p.error('--append needs --kernel (an ISO takes its command line from grub.cfg)')
    if args.smp < 1:
        p.error('--smp must be at least 1')
    if args.timeout <= 0:
        p.error('--timeout must be positive')
    if args.cpus is not None and args.cpus < 1:
        p.error('--cpus must be at least 1')
    if args.profile and args.log:
        p.error('--profile boots an image: it needs --kernel or --iso')
    if args.profile and (args.cpu or args.accel == 'kvm'):
        p.error('--profile sets the CPU model and runs under TCG: drop --cpu/--accel kvm')
    if args.expect == 'auto' and args.log:
        p.error('--expect auto picks a file for a boot on this host; give --expect FILE with --log')
    return args


def expected_cpu_count(args, exp):
    """--cpus, else the expect file's cpus line, else --smp when booting."""
    if args.cpus is not None:
        return args.cpus
    if exp.cpus is not None:
        return exp.cpus
    if args.log is None and not args.no_cpu_check:
        return args.smp
    return None


def default_log_path():
    logs = os.path.join(REPO_ROOT, 'build', 'logs')
    if os.path.isdir(os.path.dirname(logs)):
        os.makedirs(logs, exist_ok=True)
        return os.path.join(logs, datetime.datetime.now().strftime('%Y%m%d-%H%M%S') + '.log')
    fd, path = tempfile.mkstemp(prefix='pmutest-', suffix='.log')
    os.close(fd)
    return path


def auto_expect(args, accel, host):
    """The expect file --expect auto means for this run, and why."""
    if args.profile:
        raise UsageError('--expect auto: no expect file describes emulated profile %s; give --expect FILE'
                         % args.profile)
    if accel == 'kvm':
        return hostmod.expect_path(host)
    if args.smp == 1:
        return os.path.join(EXPECT_DIR, 'tcg-smp1.expect'), 'TCG with one CPU'
    return os.path.join(EXPECT_DIR, 'tcg.expect'), 'TCG: no PMU, every PMU check SKIPs'


def host_kernel_version(release=None):
    """X.Y.Z (or X.Y) of this host's kernel release, e.g. 6.12.95 of
    6.12.95-cloud-amd64, or None."""
    m = re.match(r'(\d+)\.(\d+)(?:\.(\d+))?', release if release is not None else platform.release())
    if not m:
        return None
    return '.'.join(g for g in m.groups() if g is not None)


def report_host(host):
    """Print what on this host decides the guest's PMU; return the host."""
    for line in hostmod.describe(host):
        note(line)
    for warning in hostmod.warnings(host):
        note('warning: ' + warning)
    return host


def machine_config(args, log_path, workdir):
    """The QemuConfig for this run, before the accelerator is resolved."""
    qemu_name, cpu, extra = args.qemu or QEMU, args.cpu, []
    if args.profile:
        profile = profiles.find_profile(args.profile, profiles.PROFILES)
        qemu_name = args.qemu or profiles.emulated_qemu(profiles.EMU_QEMU_SCRIPT)
        cpu = profile.cpu
        extra = profiles.qemu_args(profile)
        note('profile: %s (%s), -cpu %s%s' % (profile.name, profile.kind, profile.cpu, ''.join(
            ' %s=%s' % kv for kv in sorted(profile.keys.items()))))
    qemu = shutil.which(qemu_name)
    if qemu is None:
        raise UsageError('%s not found; on Debian/Ubuntu it comes with the package %s '
                         '(apt-get install %s)' % (qemu_name, QEMU_PACKAGE, QEMU_PACKAGE))
    image = args.kernel or args.iso
    if not os.path.isfile(image):
        raise UsageError('%s: no such file' % image)
    cfg = QemuConfig(qemu=qemu, kernel=args.kernel, append=args.append, iso=args.iso,
                     boot=args.boot, firmware=args.firmware, machine=args.machine,
                     smp=args.smp, memory=args.memory, cpu=cpu, serial_log=log_path,
                     extra=tuple(extra + args.extra_qemu))
    if args.firmware == 'uefi':
        ovmf = find_ovmf()
        if ovmf is None:
            raise UsageError('no OVMF firmware found; on Debian/Ubuntu install the package ovmf')
        cfg.ovmf = private_ovmf(ovmf, workdir)
        note('firmware: UEFI, %s' % (ovmf.get('bios') or '%s with a copy of %s' % (ovmf['code'], ovmf['vars'])))
        if args.kernel:
            note('warning: OVMF loads -kernel images as EFI/Linux programs, not Multiboot; '
                 'use --iso to boot through GRUB')
    return cfg


def stop_at_first_failure(exp, ignore=()):
    """stop_when: a reason to stop once a complete result line is one the
    expect file does not allow (a judged problem of a leaf, which no later
    line can undo: the verdict is FAIL whatever follows), else None.  Tests
    matching an ignore glob do not stop the run."""
    seen = {'checked': 0}

    def stop(text, elapsed):
        end = text.rfind('\n') + 1
        new, seen['checked'] = text[seen['checked']:end], end
        if 'not ok' not in new and '# SKIP' not in new.upper():
            return None
        for j in judge_all(parse_ktap(text[:end]), exp):
            if j.problem and not any(fnmatch.fnmatchcase(j.leaf.name, g) for g in ignore):
                return 'stopped at the first failure the expect file does not allow: %s' % j.problem
        return None
    return stop


def boot(args, cfg, exp=None):
    """Run QEMU once; returns the RunResult."""
    note('serial log: %s' % cfg.serial_log)
    cmd = build_qemu_command(cfg)
    print('+ ' + shlex.join(cmd), flush=True)
    end_grace = stop_after_end_grace()
    stop_when = end_grace
    if args.stop_at_first_failure and exp is not None:
        first_failure = stop_at_first_failure(exp, args.stop_ignore)

        def stop_when(text, elapsed):
            return first_failure(text, elapsed) or end_grace(text, elapsed)
    run = run_qemu(cmd, cfg.serial_log, args.timeout, echo=not args.quiet, stop_when=stop_when)
    for line in run.stderr.strip().splitlines():
        # QEMU announces the SIGTERM we sent it; that is ours, not news.
        if not ((run.timed_out or run.stopped) and 'terminating on signal' in line):
            print('qemu: ' + line, flush=True)
    return run


def prepare(args, workdir, host_reader=hostmod.read_host, accel_chooser=choose_accel):
    """Resolve everything a boot needs: (cfg, expect path or None)."""
    log_path = args.log_file or default_log_path()
    if os.path.dirname(log_path):
        os.makedirs(os.path.dirname(log_path), exist_ok=True)
    cfg = machine_config(args, log_path, workdir)
    requested = 'tcg' if args.profile else args.accel
    cfg.accel, cfg.cpu_suffix, why = accel_chooser(requested, cfg)
    note(why)
    # The VMM's CPU flags decide whether an AMD guest gets PerfMonV2.
    host = report_host(host_reader(qemu=cfg.qemu)) if cfg.accel == 'kvm' else None
    if cfg.accel == 'kvm' and cfg.kernel:
        # The guest cannot see the host's KVM version; deviation rows for
        # KVM bugs fixed before it are FAILs there (tests/deviations.c).
        version = host_kernel_version()
        if version:
            cfg.append = ((cfg.append + ' ') if cfg.append else '') + 'hv.kernel=' + version
            note('host kernel %s: passed to the guest as hv.kernel=%s' % (platform.release(), version))
    expect = args.expect
    if expect == 'auto':
        expect, reason = auto_expect(args, cfg.accel, host)
        note('expect: %s (%s)' % (os.path.relpath(expect, REPO_ROOT), reason))
    elif expect is None and host is not None:
        path, reason = hostmod.expect_path(host)
        note('expect: none given; %s fits this host (%s): --expect auto uses it'
             % (os.path.relpath(path, REPO_ROOT), reason))
    return cfg, expect


def read_text(path):
    try:
        with open(path, errors='replace') as f:
            return f.read()
    except OSError:
        return None


def write_junit(path, text):
    if os.path.dirname(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    run = None
    try:
        with tempfile.TemporaryDirectory(prefix='pmutest-run-') as workdir:
            if args.log:
                log_path, expect = args.log, args.expect
            else:
                cfg, expect = prepare(args, workdir)
                log_path = cfg.serial_log
            exp = load_expect(expect) if expect else Expectations()
            if not args.log:
                run = boot(args, cfg, exp)
    except (UsageError, ProfileError, ExpectError) as e:
        print('pmutest-run: %s' % e, file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:
        print('pmutest-run: %s: %s' % (e.filename or '', e.strerror), file=sys.stderr)
        return EXIT_USAGE
    text = read_text(log_path)
    if text is None:
        print('pmutest-run: %s: cannot read the serial log' % log_path, file=sys.stderr)
        return EXIT_USAGE
    log = parse_ktap(text)
    result = verdict(log, run, exp, expected_cpu_count(args, exp), args.timeout)
    print(format_summary(log, result.problems, run, log_path), flush=True)
    if args.junit:
        try:
            write_junit(args.junit, junit_xml(log, result, text, exp, run.elapsed if run else 0.0))
        except OSError as e:
            print('pmutest-run: cannot write %s: %s' % (args.junit, e), file=sys.stderr)
            return EXIT_USAGE
    return EXIT_VERDICT if result.problems else EXIT_OK
