"""The local host as a KVM guest's PMU sees it: the settings that decide
whether the guest gets a virtual PMU and whether anything on the host will
disturb it, and the expect file that fits.

What is read, and why it matters (Linux arch/x86/kvm/pmu.c backs every
guest counter with a pinned host perf event):
  kvm.enable_pmu        N: the guest gets no vPMU (parameter since Linux 5.17)
  kernel.nmi_watchdog   1: the watchdog holds one counter per CPU, so a guest
                        that uses every counter gets one that never counts
                        (kvm-unit-tests' x86/unittests.cfg refuses to run its
                        PMU tests unless it is 0)
  kvm.ignore_msrs       Y: MSRs KVM does not emulate read 0 instead of #GP,
                        so absent-MSR and offcore checks see a register that
                        is not there
  perf users            processes holding perf events compete for counters
  perf's core PMU       no event_source device "cpu": the host (itself a VM?)
                        has no PMU to back guest counters; "cpu_core" and
                        "cpu_atom": a hybrid host, where KVM turns its vPMU off
  kernel release        KVM gives an AMD guest PerfMonV2 since Linux 6.4
                        (4a2771895ca6), where the host has it (perfmon_v2)
  the VMM's CPU flags   a QEMU without "perfmon-v2" among them (7.2, Debian
                        12's) leaves CPUID 0x80000022 zero: no PerfMonV2
"""
import os
import re
import subprocess
from dataclasses import dataclass, field

from . import REPO_ROOT

EXPECT_DIR = os.path.join(REPO_ROOT, 'tests', 'expect')
PERF_FD_TARGET = 'anon_inode:[perf_event]'


def _read(path):
    try:
        with open(path, errors='replace') as f:
            return f.read().strip()
    except OSError:
        return None


def _cpuinfo_field(text, name):
    for line in (text or '').splitlines():
        key, sep, value = line.partition(':')
        if sep and key.strip() == name:
            return value.strip()
    return ''


@dataclass
class Host:
    vendor: str = ''
    flags: frozenset = frozenset()
    enable_pmu: str = None        # 'Y' / 'N' / None when the parameter is absent
    ignore_msrs: str = None
    nmi_watchdog: str = None      # '0' / '1' / None
    perf_pmus: tuple = ()         # /sys/bus/event_source/devices
    perf_users: list = field(default_factory=list)   # (pid, command)
    perf_hidden: int = 0          # processes whose fds this user cannot read
    release: str = ''             # the kernel's (KVM's) release, uname -r
    mediated_pmu: str = None      # kvm_amd/kvm_intel.enable_mediated_pmu (Linux 7.0+), None when absent
    vmm_flags: frozenset = None   # the CPU flags the VMM knows (qemu -cpu help); None: unknown
    vmm: str = None               # the VMM's version line (qemu --version), None: not asked

    @property
    def pmu_off(self):
        return (self.enable_pmu or 'Y').upper() in ('N', '0')

    @property
    def amd_perfmon_v2(self):
        """Does an AMD guest get PerfMonV2: the host has it, KVM passes it
        on (Linux 4a2771895ca6, v6.4), and the VMM knows the flag?"""
        m = re.match(r'^(\d+)\.(\d+)', self.release or '')
        kvm_has = m is None or (int(m.group(1)), int(m.group(2))) >= (6, 4)
        vmm_has = self.vmm_flags is None or 'perfmon-v2' in self.vmm_flags
        return 'perfmon_v2' in self.flags and kvm_has and vmm_has

    @property
    def hybrid(self):
        return 'cpu_core' in self.perf_pmus or 'cpu_atom' in self.perf_pmus


def perf_users(procfs='/proc'):
    """Processes with a perf event open, and how many could not be read."""
    users, hidden = [], 0
    try:
        pids = [p for p in os.listdir(procfs) if p.isdigit()]
    except OSError:
        return users, hidden
    for pid in pids:
        fd_dir = os.path.join(procfs, pid, 'fd')
        try:
            fds = os.listdir(fd_dir)
        except PermissionError:
            hidden += 1
            continue
        except OSError:
            continue              # exited meanwhile
        for fd in fds:
            try:
                if os.readlink(os.path.join(fd_dir, fd)) == PERF_FD_TARGET:
                    users.append((int(pid), _read(os.path.join(procfs, pid, 'comm')) or '?'))
                    break
            except OSError:
                continue
    return sorted(users), hidden


def parse_cpu_flags(help_text):
    """The CPU flags a QEMU knows, from its `-cpu help` (the words after
    "Recognized CPUID flags:"), or None when the text has no such list."""
    lines = (help_text or '').splitlines()
    for n, line in enumerate(lines):
        if line.strip() == 'Recognized CPUID flags:':
            words = []
            for rest in lines[n + 1:]:
                if rest and not rest[0].isspace():
                    break           # the next section
                words += rest.split()
            return frozenset(words)
    return None


def read_vmm(qemu, run=subprocess.run):
    """(CPU flags, version line) of the VMM binary qemu, each None when it
    cannot be asked: a QEMU that does not know "perfmon-v2" (7.2) cannot
    give a guest CPUID 0x80000022."""
    def ask(*args):
        try:
            p = run([qemu] + list(args), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                    text=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            return None
        return p.stdout if p.returncode == 0 else None
    version = (ask('--version') or '').strip().splitlines()
    return parse_cpu_flags(ask('-cpu', 'help')), (version[0] if version else None)


def _mediated_param(sysfs):
    """enable_mediated_pmu: a kvm_amd or kvm_intel parameter in Linux 7.x."""
    for module in ('kvm_amd', 'kvm_intel', 'kvm'):
        value = _read(os.path.join(sysfs, 'module', module, 'parameters', 'enable_mediated_pmu'))
        if value is not None:
            return value
    return None


def read_host(cpuinfo='/proc/cpuinfo', sysfs='/sys', procfs='/proc', qemu=None, run=subprocess.run):
    """The host as read from its files; with qemu, the VMM's CPU flags and
    version too (read_vmm)."""
    text = _read(cpuinfo)
    kvm = os.path.join(sysfs, 'module', 'kvm', 'parameters')
    vmm_flags, vmm = read_vmm(qemu, run) if qemu else (None, None)
    try:
        pmus = tuple(sorted(os.listdir(os.path.join(sysfs, 'bus', 'event_source', 'devices'))))
    except OSError:
        pmus = ()
    users, hidden = perf_users(procfs)
    return Host(vendor=_cpuinfo_field(text, 'vendor_id'),
                flags=frozenset(_cpuinfo_field(text, 'flags').split()),
                enable_pmu=_read(os.path.join(kvm, 'enable_pmu')),
                ignore_msrs=_read(os.path.join(kvm, 'ignore_msrs')),
                nmi_watchdog=_read(os.path.join(procfs, 'sys', 'kernel', 'nmi_watchdog')),
                release=_read(os.path.join(procfs, 'sys', 'kernel', 'osrelease')) or '',
                mediated_pmu=_mediated_param(sysfs),
                perf_pmus=pmus, perf_users=users, perf_hidden=hidden,
                vmm_flags=vmm_flags, vmm=vmm)


def expect_choice(host):
    """(expect file name, why) for a KVM guest with -cpu host on this host."""
    if host.pmu_off:
        return 'kvm-nopmu', "KVM's enable_pmu=%s: the guest gets no vPMU" % host.enable_pmu
    if host.hybrid:
        return 'kvm-nopmu', 'a hybrid host (perf has cpu_core/cpu_atom): KVM turns its vPMU off'
    if 'cpu' not in host.perf_pmus:
        return 'kvm-nopmu', "the host's perf has no core PMU (no event_source device 'cpu')"
    if host.vendor == 'GenuineIntel':
        if 'arch_perfmon' not in host.flags:
            return 'kvm-nopmu', 'an Intel host without the arch_perfmon flag'
        return 'kvm-intel', 'an Intel host with an architectural PMU and KVM enable_pmu on'
    if host.vendor == 'AuthenticAMD':
        if not host.amd_perfmon_v2:
            return 'kvm-amd-v1', ('an AMD host with a core PMU and KVM enable_pmu on; the guest gets '
                                  'no PerfMonV2 (the host, KVM before 6.4 or the VMM lacks it)')
        if host.nmi_watchdog not in (None, '0'):
            return 'kvm-amd-watchdog', ('an AMD host with PerfMonV2 whose NMI watchdog holds a '
                                        'counter: the guest\'s last counter does not count')
        return 'kvm-amd', 'an AMD host with PerfMonV2 and KVM enable_pmu on'
    return 'kvm-nopmu', 'vendor %r: pmutest has no KVM expect file for it' % (host.vendor or '?')


def expect_path(host):
    name, why = expect_choice(host)
    return os.path.join(EXPECT_DIR, name + '.expect'), why


def describe(host):
    """One line per setting, as the runner prints them."""
    def show(value, absent):
        return value if value is not None else absent
    users = ', '.join('%d %s' % u for u in host.perf_users[:5]) or 'none'
    if len(host.perf_users) > 5:
        users += ' and %d more' % (len(host.perf_users) - 5)
    if host.perf_hidden:
        users += ' (%d processes not readable by this user)' % host.perf_hidden
    return ['host: %s, perf PMUs: %s' % (host.vendor or 'unknown vendor', ' '.join(host.perf_pmus) or 'none'),
            'host: kvm.enable_pmu=%s kvm.ignore_msrs=%s kernel.nmi_watchdog=%s' % (
                show(host.enable_pmu, '(absent: Linux before 5.17, vPMU on)'),
                show(host.ignore_msrs, '?'), show(host.nmi_watchdog, '?')),
            'host: processes holding perf events: %s' % users,
            'host: VMM %s: %s' % (host.vmm or '(not asked)', (
                'CPU flags unknown, taken to pass PerfMonV2 on' if host.vmm_flags is None else
                'knows perfmon-v2' if 'perfmon-v2' in host.vmm_flags else
                'no perfmon-v2 among its CPU flags: no PerfMonV2 for an AMD guest'))]


def warnings(host):
    """What on this host will disturb a guest's PMU checks, with the fix."""
    out = []
    if host.pmu_off:
        return out                # no vPMU: nothing to disturb, every PMU check SKIPs
    if host.nmi_watchdog not in (None, '0'):
        out.append('kernel.nmi_watchdog=%s holds one host counter per CPU: a guest check that uses '
                   'every counter gets one that never counts (sysctl kernel.nmi_watchdog=0)'
                   % host.nmi_watchdog)
    if (host.ignore_msrs or 'N').upper() in ('Y', '1'):
        out.append('kvm.ignore_msrs=Y: MSRs KVM does not emulate read 0 instead of raising #GP, '
                   'so absent-MSR and offcore checks test registers that are not there '
                   '(echo N > /sys/module/kvm/parameters/ignore_msrs)')
    if host.perf_users:
        out.append('%d host process(es) hold perf events (%s): they compete with the guest for '
                   'counters and can make its counts short'
                   % (len(host.perf_users), ', '.join('%d %s' % u for u in host.perf_users[:3])))
    return out


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(prog='pmutest-host', description=(
        "This host's settings that decide a KVM guest's PMU, warnings for those that will "
        'disturb it, and the expect file a KVM run here should be checked against.'))
    ap.add_argument('--expect-path', action='store_true', help='print only the expect file')
    ap.add_argument('--cpuinfo', default='/proc/cpuinfo', help=argparse.SUPPRESS)
    ap.add_argument('--sysfs', default='/sys', help=argparse.SUPPRESS)
    ap.add_argument('--procfs', default='/proc', help=argparse.SUPPRESS)
    ap.add_argument('--qemu', default='qemu-system-x86_64',
                    help="the VMM whose CPU flags decide PerfMonV2 ('' : do not ask)")
    args = ap.parse_args(argv)
    host = read_host(args.cpuinfo, args.sysfs, args.procfs, qemu=args.qemu or None)
    path, why = expect_path(host)
    if args.expect_path:
        print(path)
        return 0
    for line in describe(host):
        print(line)
    for warning in warnings(host):
        print('warning: ' + warning)
    print('expect: %s (%s)' % (path, why))
    return 0
