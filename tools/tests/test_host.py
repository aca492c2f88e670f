"""pmutest.host: the host's PMU settings read from a fake /proc and /sys,
the warnings, and the expect file each kind of host gets."""
import os
import shutil
import tempfile
import unittest

from pmutest import host as hostmod


class FakeHost(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='pmutest-host-test-')
        self.addCleanup(shutil.rmtree, self.tmp)
        self.sys = os.path.join(self.tmp, 'sys')
        self.proc = os.path.join(self.tmp, 'proc')
        os.makedirs(os.path.join(self.sys, 'module', 'kvm', 'parameters'))
        os.makedirs(os.path.join(self.proc, 'sys', 'kernel'))

    def write(self, path, text):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(text)

    def host(self, vendor='GenuineIntel', flags='fpu arch_perfmon', enable_pmu='Y', ignore_msrs='N',
             watchdog='0', pmus=('cpu', 'software'), perf_pids=(), other_pids=()):
        self.write(os.path.join(self.proc, 'cpuinfo'),
                   ''.join('processor\t: %d\nvendor_id\t: %s\nflags\t\t: %s\n\n' % (n, vendor, flags)
                           for n in range(2)))
        params = os.path.join(self.sys, 'module', 'kvm', 'parameters')
        for name, value in (('enable_pmu', enable_pmu), ('ignore_msrs', ignore_msrs)):
            if value is not None:
                self.write(os.path.join(params, name), value + '\n')
        if watchdog is not None:
            self.write(os.path.join(self.proc, 'sys', 'kernel', 'nmi_watchdog'), watchdog + '\n')
        for pmu in pmus:
            os.makedirs(os.path.join(self.sys, 'bus', 'event_source', 'devices', pmu), exist_ok=True)
        for pid, targets in [(p, ['/dev/null', 'anon_inode:[perf_event]']) for p in perf_pids] + \
                [(p, ['/dev/null', 'anon_inode:[eventfd]']) for p in other_pids]:
            fd_dir = os.path.join(self.proc, str(pid), 'fd')
            os.makedirs(fd_dir)
            for n, target in enumerate(targets):
                os.symlink(target, os.path.join(fd_dir, str(n)))
            self.write(os.path.join(self.proc, str(pid), 'comm'), 'prog%d\n' % pid)
        return hostmod.read_host(os.path.join(self.proc, 'cpuinfo'), self.sys, self.proc)

    def test_reads_every_setting(self):
        h = self.host(enable_pmu='Y', ignore_msrs='Y', watchdog='1', perf_pids=(7, 12), other_pids=(9,))
        self.assertEqual((h.vendor, h.enable_pmu, h.ignore_msrs, h.nmi_watchdog),
                         ('GenuineIntel', 'Y', 'Y', '1'))
        self.assertIn('arch_perfmon', h.flags)
        self.assertEqual(h.perf_pmus, ('cpu', 'software'))
        self.assertEqual(h.perf_users, [(7, 'prog7'), (12, 'prog12')])
        lines = hostmod.describe(h)
        self.assertEqual(lines[1], 'host: kvm.enable_pmu=Y kvm.ignore_msrs=Y kernel.nmi_watchdog=1')
        self.assertEqual(lines[2], 'host: processes holding perf events: 7 prog7, 12 prog12')
        warnings = hostmod.warnings(h)
        self.assertEqual(len(warnings), 3)
        self.assertTrue(warnings[0].startswith('kernel.nmi_watchdog=1 holds one host counter per CPU'))
        self.assertTrue(warnings[1].startswith('kvm.ignore_msrs=Y: MSRs KVM does not emulate read 0'))
        self.assertTrue(warnings[2].startswith('2 host process(es) hold perf events (7 prog7, 12 prog12)'))

    def test_a_quiet_host(self):
        h = self.host()
        self.assertEqual(hostmod.warnings(h), [])
        self.assertEqual(hostmod.describe(h)[2], 'host: processes holding perf events: none')

    def test_absent_parameters(self):
        h = self.host(enable_pmu=None, ignore_msrs=None, watchdog=None)
        self.assertIn('kvm.enable_pmu=(absent: Linux before 5.17, vPMU on)', hostmod.describe(h)[1])
        self.assertEqual(hostmod.expect_choice(h)[0], 'kvm-intel')

    def test_expect_choice(self):
        cases = [
            (dict(), 'kvm-intel'),
            (dict(flags='fpu'), 'kvm-nopmu'),
            (dict(flags='fpu arch_perfmon_ext'), 'kvm-nopmu'),          # the flag is matched whole
            (dict(enable_pmu='N'), 'kvm-nopmu'),
            (dict(enable_pmu='0'), 'kvm-nopmu'),
            (dict(pmus=('cpu_atom', 'cpu_core', 'software')), 'kvm-nopmu'),
            (dict(pmus=('software',)), 'kvm-nopmu'),
            (dict(vendor='AuthenticAMD', flags='svm perfctr_core perfmon_v2'), 'kvm-amd'),
            (dict(vendor='AuthenticAMD', flags='svm perfctr_core'), 'kvm-amd-v1'),
            (dict(vendor='AuthenticAMD', flags='svm perfctr_core perfmon_v2', watchdog='1'),
             'kvm-amd-watchdog'),
            (dict(vendor='AuthenticAMD', flags='svm perfctr_core', watchdog='1'), 'kvm-amd-v1'),
            (dict(vendor='AuthenticAMD', pmus=('software',)), 'kvm-nopmu'),
            (dict(vendor='HygonGenuine'), 'kvm-nopmu'),
        ]
        for kw, want in cases:
            shutil.rmtree(self.sys)
            os.makedirs(os.path.join(self.sys, 'module', 'kvm', 'parameters'))
            h = self.host(**kw)
            name, why = hostmod.expect_choice(h)
            self.assertEqual(name, want, (kw, why))
            path, _ = hostmod.expect_path(h)
            self.assertTrue(os.path.isfile(path), path)

    def test_amd_perfmon_v2(self):
        h = hostmod.Host(vendor='AuthenticAMD', flags=frozenset(['perfmon_v2']), perf_pmus=('cpu',))
        self.assertTrue(h.amd_perfmon_v2)                   # release and VMM unknown: as the host
        for kw in (dict(release='6.1.0-56-amd64'), dict(vmm_flags=frozenset(['svm']))):
            h = hostmod.Host(vendor='AuthenticAMD', flags=frozenset(['perfmon_v2']), **kw)
            self.assertFalse(h.amd_perfmon_v2, kw)
        h = hostmod.Host(vendor='AuthenticAMD', flags=frozenset(['perfmon_v2']),
                         release='6.12.95+deb12-amd64', vmm_flags=frozenset(['perfmon-v2']))
        self.assertTrue(h.amd_perfmon_v2)

    QEMU72_HELP = ('Available CPUs:\n  x86 EPYC-Milan  AMD EPYC-Milan Processor\n\n'
                   'Recognized CPUID flags:\n  3dnow abm perfctr-core svm\n  xsave\n')

    def fake_qemu(self, help_text, version):
        """A subprocess.run stand-in for `qemu -cpu help` and `--version`."""
        import subprocess

        def run(cmd, **kw):
            if cmd[0] == 'absent-qemu':
                raise FileNotFoundError(cmd[0])
            out = help_text if cmd[1:] == ['-cpu', 'help'] else version + '\n'
            return subprocess.CompletedProcess(cmd, 0, stdout=out)
        return run

    def test_parse_cpu_flags(self):
        self.assertEqual(hostmod.parse_cpu_flags(self.QEMU72_HELP),
                         frozenset(['3dnow', 'abm', 'perfctr-core', 'svm', 'xsave']))
        self.assertIsNone(hostmod.parse_cpu_flags('Available CPUs:\n  x86 qemu64\n'))
        self.assertEqual(hostmod.parse_cpu_flags('Recognized CPUID flags:\n  a b\nNext:\n  c\n'),
                         frozenset(['a', 'b']))

    def test_the_vmm_decides_perfmon_v2(self):
        """An AMD host with PerfMonV2 and KVM 6.12: QEMU 7.2 (no perfmon-v2
        flag) gives the guest none, QEMU 10 does; a VMM that cannot be
        asked counts as passing it on."""
        self.host(vendor='AuthenticAMD', flags='fpu perfctr_core perfmon_v2 svm')
        self.write(os.path.join(self.proc, 'sys', 'kernel', 'osrelease'), '6.12.95+deb12-amd64\n')
        q10 = self.QEMU72_HELP.replace('svm', 'perfmon-v2 svm')
        for qemu, help_text, version, want, flags in (
                ('qemu-7.2', self.QEMU72_HELP, 'QEMU emulator version 7.2.18', 'kvm-amd-v1', False),
                ('qemu-10', q10, 'QEMU emulator version 10.0.2', 'kvm-amd', True),
                ('absent-qemu', '', '', 'kvm-amd', None)):
            h = hostmod.read_host(os.path.join(self.proc, 'cpuinfo'), self.sys, self.proc, qemu=qemu,
                                  run=self.fake_qemu(help_text, version))
            self.assertEqual(hostmod.expect_choice(h)[0], want, qemu)
            self.assertEqual(None if h.vmm_flags is None else 'perfmon-v2' in h.vmm_flags, flags)
            self.assertEqual(h.vmm, version or None)
        self.assertIn('host: VMM QEMU emulator version 7.2.18: no perfmon-v2 among its CPU flags',
                      hostmod.describe(hostmod.read_host(
                          os.path.join(self.proc, 'cpuinfo'), self.sys, self.proc, qemu='qemu-7.2',
                          run=self.fake_qemu(self.QEMU72_HELP, 'QEMU emulator version 7.2.18')))[3])

    def test_mediated_parameter_of_the_vendor_module(self):
        self.host(vendor='AuthenticAMD')
        self.write(os.path.join(self.sys, 'module', 'kvm_amd', 'parameters', 'enable_mediated_pmu'), 'Y\n')
        self.assertEqual(hostmod.read_host(os.path.join(self.proc, 'cpuinfo'), self.sys,
                                           self.proc).mediated_pmu, 'Y')

    def test_cli(self):
        import contextlib
        import io
        self.host(watchdog='1')
        args = ['--cpuinfo', os.path.join(self.proc, 'cpuinfo'), '--sysfs', self.sys, '--procfs', self.proc,
                '--qemu', '']
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(hostmod.main(args + ['--expect-path']), 0)
        self.assertEqual(out.getvalue().strip(), os.path.join(hostmod.EXPECT_DIR, 'kvm-intel.expect'))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            hostmod.main(args)
        self.assertIn('warning: kernel.nmi_watchdog=1', out.getvalue())
        self.assertIn('expect: %s (an Intel host' % os.path.join(hostmod.EXPECT_DIR, 'kvm-intel.expect'),
                      out.getvalue())
