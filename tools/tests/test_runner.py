"""tools/pmutest-run (pmutest.runner): the command line, stored-log verdicts
(XFAIL logs included), --expect auto, the host report for KVM, emulated-PMU
profiles; and end-to-end runs against a tiny generated Multiboot kernel when
qemu-system-x86_64 is installed (skipped otherwise)."""
import contextlib
import io
import os
import shutil
import struct
import tempfile
import unittest
import xml.etree.ElementTree as ET
from unittest import mock

from fixtures import EXPECT_DIR, GOOD_LOG, PASS_LOG, XFAIL_ID, XFAIL_LOG
from pmutest import host as hostmod
from pmutest import profiles, runner
from pmutest.expect import Expectations, parse_expect
from pmutest.junit_schema import validate

QEMU = shutil.which('qemu-system-x86_64')


class _TmpDirCase(unittest.TestCase):
    """A scratch directory and an in-process main() with captured output."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='pmutest-runner-test-')

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, 'w', newline='') as f:
            f.write(text)
        return path

    def main(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = runner.main(list(argv))
            except SystemExit as e:
                rc = e.code
        return rc, out.getvalue() + err.getvalue()


class CommandLine(_TmpDirCase):
    def test_usage_errors_exit_2(self):
        self.assertEqual(self.main()[0], 2)
        self.assertEqual(self.main('--iso', 'x.iso', '--append', 'a')[0], 2)
        self.assertEqual(self.main('--kernel', 'k', '--log', 'l')[0], 2)
        self.assertEqual(self.main('--kernel', 'k', '--smp', '0')[0], 2)
        self.assertEqual(self.main('--kernel', 'k', '--accel', 'hvf')[0], 2)

    def test_missing_qemu_names_the_package(self):
        rc, out = self.main('--kernel', self.write('k', ''), '--qemu', 'no-such-qemu-binary')
        self.assertEqual(rc, 2)
        self.assertIn('qemu-system-x86', out)

    def test_log_mode_verdicts(self):
        good = self.write('good.log', GOOD_LOG)
        rc, out = self.main('--log', good, '--quiet')
        self.assertEqual(rc, 1)
        self.assertIn('unexpected fail: boot.memory_map', out)
        exp = self.write('e.expect', '* any\nexit 35\ncpus 2\n')
        rc, out = self.main('--log', good, '--expect', exp)
        self.assertEqual(rc, 0, out)
        self.assertIn('verdict: PASS', out)
        rc, out = self.main('--log', good, '--expect', exp, '--cpus', '3')
        self.assertEqual(rc, 1)
        self.assertIn('expected 3 CPUs online, the kernel brought up 2 of 2', out)
        self.assertEqual(self.main('--log', self.write('p.log', PASS_LOG))[0], 0)
        rc, out = self.main('--log', self.write('t.log', PASS_LOG[:-30]))
        self.assertEqual(rc, 1)
        self.assertIn('log: no end marker', out)

    def test_expect_auto_needs_a_boot(self):
        self.assertEqual(self.main('--log', self.write('p.log', PASS_LOG), '--expect', 'auto')[0], 2)

    def test_bad_or_missing_expect_file_exit_2(self):
        good = self.write('good.log', GOOD_LOG)
        self.assertEqual(self.main('--log', good, '--expect', self.write('b', 'x y z\n'))[0], 2)
        self.assertEqual(self.main('--log', good, '--expect', os.path.join(self.tmp, 'none'))[0], 2)
        self.assertEqual(self.main('--log', os.path.join(self.tmp, 'none.log'))[0], 2)

    def test_junit_file_written(self):
        junit = os.path.join(self.tmp, 'j.xml')
        rc, _ = self.main('--log', self.write('p.log', PASS_LOG), '--junit', junit)
        self.assertEqual(rc, 0)
        suite = ET.parse(junit).getroot().find('testsuite')
        self.assertEqual(suite.get('tests'), '3')
        with open(junit) as f:
            self.assertEqual(validate(f.read()), [])

    def test_expected_cpu_count_precedence(self):
        exp4 = parse_expect('cpus 4\n')
        none = Expectations()
        args = runner.parse_args(['--kernel', 'k', '--smp', '8'])
        self.assertEqual(runner.expected_cpu_count(args, none), 8)
        self.assertEqual(runner.expected_cpu_count(args, exp4), 4)
        args = runner.parse_args(['--kernel', 'k', '--smp', '8', '--cpus', '2'])
        self.assertEqual(runner.expected_cpu_count(args, exp4), 2)
        args = runner.parse_args(['--kernel', 'k', '--no-cpu-check'])
        self.assertIsNone(runner.expected_cpu_count(args, none))
        args = runner.parse_args(['--log', 'l'])
        self.assertIsNone(runner.expected_cpu_count(args, none))


# ------------------------------------------------------------ end to end

class StopAtFirstFailure(unittest.TestCase):
    """--stop-at-first-failure: the boot stops at the first complete result
    line the expect file does not allow, not before, and not for an allowed
    failure or an ignored test."""

    def feed(self, stop, text):
        """The reason stop gives after each prefix of text, line by line."""
        reasons, upto = [], 0
        for line in text.splitlines(keepends=True):
            upto += len(line)
            reasons.append(stop(text[:upto], 0.0))
        return reasons

    def test_stops_at_the_first_unexpected_fail(self):
        reasons = self.feed(runner.stop_at_first_failure(parse_expect('cpus 2\n')), GOOD_LOG)
        first = next(i for i, r in enumerate(reasons) if r)
        self.assertIn('not ok 2 boot.memory_map', GOOD_LOG.splitlines()[first])
        self.assertIn('unexpected fail: boot.memory_map', reasons[first])

    def test_an_allowed_failure_or_an_ignored_test_does_not_stop(self):
        allowed = parse_expect('boot.memory_map fail\npmu.count.gp_instructions skip|fail\nselftest.hang timeout\n')
        self.assertFalse(any(self.feed(runner.stop_at_first_failure(allowed), GOOD_LOG)))
        ignored = runner.stop_at_first_failure(parse_expect('pmu.* pass|skip\n'), ['boot.*', 'pmu.count.*', 'selftest.*'])
        self.assertFalse(any(self.feed(ignored, GOOD_LOG)))

    def test_an_unexpected_skip_stops(self):
        reasons = self.feed(runner.stop_at_first_failure(parse_expect('boot.* any\npmu.count.fixed pass\n')), GOOD_LOG)
        self.assertTrue(any(r and 'pmu.count.fixed' in r for r in reasons))

    def test_a_half_written_line_is_not_judged(self):
        stop = runner.stop_at_first_failure(parse_expect('cpus 2\n'))
        head = GOOD_LOG[:GOOD_LOG.index('not ok 2 boot.memory_map') + len('not ok 2 boot.mem')]
        self.assertIsNone(stop(head, 0.0))


def fake_kernel(serial_text, exit_code=None):
    """A Multiboot 1 image (a.out kludge, spec section 3.1.3) whose 32-bit entry
    writes serial_text to COM1 and exit_code to isa-debug-exit, then halts."""
    base, msg = 0x100000, serial_text.encode()
    code = b'\xbe%s\xb9%s' % (b'MSGA', struct.pack('<I', len(msg)))   # mov esi, msg; mov ecx, len
    code += b'\x66\xba\xf8\x03\xac\xee\xe2\xfc'     # mov dx, 0x3f8; 1: lodsb; out dx, al; loop 1b
    if exit_code is not None:                      # mov dx, 0xf4; mov eax, code; out dx, eax
        code += b'\x66\xba\xf4\x00\xb8' + struct.pack('<I', exit_code) + b'\xef'
    code += b'\xfa\xf4\xeb\xfd'                     # cli; 2: hlt; jmp 2b
    code = code.replace(b'MSGA', struct.pack('<I', base + 32 + len(code)))
    size = 32 + len(code) + len(msg)
    magic, flags = 0x1BADB002, 1 << 16              # flag 16: the address fields are valid
    header = struct.pack('<8I', magic, flags, -(magic + flags) & 0xffffffff,
                         base, base, base + size, 0, base + 32)
    return header + code + msg


@unittest.skipUnless(QEMU, 'qemu-system-x86_64 not installed')
class EndToEnd(_TmpDirCase):
    def boot(self, serial_text, exit_code, *extra):
        kernel = os.path.join(self.tmp, 'fake.bin')
        with open(kernel, 'wb') as f:
            f.write(fake_kernel(serial_text, exit_code))
        log = os.path.join(self.tmp, 'serial.log')
        rc, out = self.main('--kernel', kernel, '--accel', 'tcg', '--smp', '1', '--memory', '64M',
                            '--log-file', log, *extra)
        with open(log, newline='') as f:
            return rc, out, f.read()

    def test_passing_kernel(self):
        rc, out, log = self.boot(PASS_LOG, 0x10)
        self.assertEqual(rc, 0, out)
        self.assertEqual(log, PASS_LOG)
        self.assertIn('\nok 1 boot.cmdline\n', out)       # streamed, CR removed
        self.assertIn('qemu status: 33 (no test failed)', out)

    def test_quiet_does_not_stream(self):
        rc, out, _ = self.boot(PASS_LOG, 0x10, '--quiet')
        self.assertEqual(rc, 0, out)
        self.assertNotIn('ok 1 boot.cmdline', out)

    def test_failing_kernel_with_expect_file(self):
        exp = self.write('e.expect', '* any\nexit 35\ncpus 2\n')
        rc, out, _ = self.boot(GOOD_LOG, 0x11, '--expect', exp, '--quiet')
        self.assertEqual(rc, 0, out)
        rc, out, _ = self.boot(GOOD_LOG, 0x11, '--quiet')
        self.assertEqual(rc, 1)
        self.assertIn('expected 1 CPUs online, the kernel brought up 2 of 2', out)

    def test_exit_code_disagreeing_with_end_marker(self):
        rc, out, _ = self.boot(PASS_LOG, 0x11, '--quiet')
        self.assertEqual(rc, 1)
        self.assertIn('QEMU status 35 (some test failed), expected 33 (no test failed)', out)
        self.assertIn('end marker says exit=0x10 (status 33) but QEMU exited with 35', out)

    def test_hang_is_killed_at_timeout(self):
        rc, out, log = self.boot(PASS_LOG[:40], None, '--timeout', '2', '--quiet')
        self.assertEqual(rc, 1)
        self.assertIn('timeout: QEMU was still running after 2 s and was killed', out)
        self.assertIn('log: no end marker', out)
        self.assertEqual(log, PASS_LOG[:40])
        self.assertNotIn('terminating on signal', out)


class XfailLogs(_TmpDirCase):
    def test_xfail_log_passes_where_deviations_are_accepted(self):
        log = self.write('x.log', XFAIL_LOG)
        exp = self.write('e.expect', 'boot.* pass\npmu.* pass|xfail\ncpus 2\n')
        junit = os.path.join(self.tmp, 'j.xml')
        rc, out = self.main('--log', log, '--expect', exp, '--junit', junit)
        self.assertEqual(rc, 0, out)
        self.assertIn('tests: 5 leaves: 3 passed, 0 failed, 0 timed out, 0 skipped, 2 xfail', out)
        self.assertIn('  %s on cpus 0-1: the emulated enabling WRMSR' % XFAIL_ID, out)
        with open(junit) as f:
            xml = f.read()
        self.assertEqual(validate(xml, 'xunit'), [])
        self.assertEqual(validate(xml, 'ant'), [])
        skipped = [s for s in ET.fromstring(xml).iter('skipped') if s.get('type') == 'pmutest.xfail']
        self.assertEqual(len(skipped), 2)

    def test_a_pass_rule_notices_the_deviation(self):
        log = self.write('x.log', XFAIL_LOG)
        exp = self.write('e.expect', 'boot.* pass\npmu.* pass\n')
        rc, out = self.main('--log', log, '--expect', exp)
        self.assertEqual(rc, 1)
        self.assertIn('pmu.count.cmask_inv_edge@cpu0-apic0: expected pass (%s:2), got xfail %s' % (exp, XFAIL_ID), out)
        exp = self.write('f.expect', '* pass|xfail\ndeviations none\n')
        rc, out = self.main('--log', log, '--expect', exp)
        self.assertEqual(rc, 1)
        self.assertIn('expected deviations none', out)

    def test_no_expect_file_accepts_xfail(self):
        rc, out = self.main('--log', self.write('x.log', XFAIL_LOG))
        self.assertEqual(rc, 0, out)


def fake_host(**kw):
    base = dict(vendor='GenuineIntel', flags=frozenset({'arch_perfmon'}), enable_pmu='Y', ignore_msrs='N',
                nmi_watchdog='0', perf_pmus=('cpu', 'software'))
    base.update(kw)
    return hostmod.Host(**base)


def fixed_accel(accel, suffix=''):
    return lambda requested, cfg: (accel, suffix, 'accel: %s (test)' % accel)


class Prepare(_TmpDirCase):
    """Everything before the boot: accelerator, host report, expect file."""

    def prepare(self, *argv, host=None, accel='kvm'):
        kernel = self.write('k.elf', '')
        args = runner.parse_args(['--kernel', kernel, '--qemu', QEMU or '/bin/true',
                                  '--log-file', os.path.join(self.tmp, 's.log')] + list(argv))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            cfg, expect = runner.prepare(args, self.tmp, host_reader=lambda **kw: host or fake_host(),
                                         accel_chooser=fixed_accel(accel))
        return cfg, expect, out.getvalue()

    def test_kvm_asks_the_vmm_it_runs(self):
        """The host is read with the VMM of the run: its CPU flags decide
        whether an AMD guest gets PerfMonV2 (pmutest.host.read_vmm)."""
        asked = []
        kernel = self.write('k.elf', '')
        args = runner.parse_args(['--kernel', kernel, '--qemu', QEMU or '/bin/true', '--accel', 'kvm',
                                  '--log-file', os.path.join(self.tmp, 's.log')])
        with contextlib.redirect_stdout(io.StringIO()):
            runner.prepare(args, self.tmp, host_reader=lambda **kw: asked.append(kw) or fake_host(),
                           accel_chooser=fixed_accel('kvm'))
        self.assertEqual(len(asked), 1)
        self.assertTrue(asked[0]['qemu'].endswith(os.path.basename(QEMU or '/bin/true')), asked)

    def test_kvm_prints_the_host_and_warns(self):
        host = fake_host(nmi_watchdog='1', ignore_msrs='Y', perf_users=[(42, 'perf')])
        cfg, expect, out = self.prepare('--accel', 'kvm', host=host)
        self.assertEqual(cfg.accel, 'kvm')
        self.assertIn('pmutest-run: host: kvm.enable_pmu=Y kvm.ignore_msrs=Y kernel.nmi_watchdog=1', out)
        self.assertIn('pmutest-run: warning: kernel.nmi_watchdog=1 holds one host counter per CPU', out)
        self.assertIn('pmutest-run: warning: kvm.ignore_msrs=Y', out)
        self.assertIn('pmutest-run: warning: 1 host process(es) hold perf events (42 perf)', out)
        self.assertIsNone(expect)
        self.assertIn('expect: none given; tests/expect/kvm-intel.expect fits this host', out)

    def test_expect_auto_under_kvm_follows_the_host(self):
        for host, name in ((fake_host(), 'kvm-intel'), (fake_host(enable_pmu='N'), 'kvm-nopmu'),
                           (fake_host(vendor='AuthenticAMD', flags=frozenset(['perfmon_v2'])), 'kvm-amd'),
                           (fake_host(vendor='AuthenticAMD'), 'kvm-amd-v1'),
                           (fake_host(vendor='AuthenticAMD', flags=frozenset(['perfmon_v2']),
                                      nmi_watchdog='1'), 'kvm-amd-watchdog'),
                           (fake_host(perf_pmus=('cpu_atom', 'cpu_core')), 'kvm-nopmu')):
            _, expect, out = self.prepare('--expect', 'auto', host=host)
            self.assertEqual(expect, os.path.join(EXPECT_DIR, name + '.expect'), host)
            self.assertIn('expect: tests/expect/%s.expect (' % name, out)

    def test_expect_auto_under_tcg(self):
        _, expect, out = self.prepare('--expect', 'auto', '--accel', 'tcg', accel='tcg')
        self.assertEqual(expect, os.path.join(EXPECT_DIR, 'tcg.expect'))
        self.assertNotIn('host:', out)
        _, expect, _ = self.prepare('--expect', 'auto', '--smp', '1', accel='tcg')
        self.assertEqual(expect, os.path.join(EXPECT_DIR, 'tcg-smp1.expect'))

    def test_quiet_host_has_no_warnings(self):
        _, _, out = self.prepare()
        self.assertNotIn('warning', out)
        _, _, out = self.prepare(host=fake_host(enable_pmu='N', nmi_watchdog='1'))
        self.assertNotIn('warning', out)      # no vPMU: nothing for the watchdog to disturb


class Profiles(_TmpDirCase):
    LIST = """# name kind cpuarg [key=value ...]
skl-v4     silicon    Skylake-Client,pmu=on
kvm-cmask  hypervisor max,pmu=on,x-kvm-cmask=on  source=Linux
broken-pmi defect     max,pmu=on,x-no-pmi=on     catches=pmu.overflow.every_counter_one_pmi
"""

    def setUp(self):
        super().setUp()
        self.list = self.write('profiles.list', self.LIST)
        self.script = os.path.join(self.tmp, 'build.sh')
        self.patches = [mock.patch.object(profiles, 'PROFILES', self.list),
                        mock.patch.object(profiles, 'EMU_QEMU_SCRIPT', self.script)]
        for p in self.patches:
            p.start()
            self.addCleanup(p.stop)

    def build_script(self, body):
        with open(self.script, 'w') as f:
            f.write('#!/bin/sh\n' + body)
        os.chmod(self.script, 0o755)

    def test_parse(self):
        got = profiles.load_profiles(self.list)
        self.assertEqual([(p.name, p.kind, p.cpu, p.keys) for p in got], [
            ('skl-v4', 'silicon', 'Skylake-Client,pmu=on', {}),
            ('kvm-cmask', 'hypervisor', 'max,pmu=on,x-kvm-cmask=on', {'source': 'Linux'}),
            ('broken-pmi', 'defect', 'max,pmu=on,x-no-pmi=on', {'catches': 'pmu.overflow.every_counter_one_pmi'})])
        for bad, why in (('a silicon\n', 'want "NAME KIND CPUARG'), ('a chip max\n', "kind 'chip'"),
                         ('a silicon max x\n', "'x' is not key=value"), ('a silicon max\na defect max\n', 'twice')):
            with self.assertRaises(profiles.ProfileError) as ctx:
                profiles.parse_profiles(bad, 'p.list')
            self.assertIn(why, str(ctx.exception))

    def test_readconfig_key_adds_a_config_file(self):
        cfg = self.write('two.cfg', '[smp-opts]\n  sockets = "2"\n')
        p = profiles.parse_profiles('skx silicon Skylake-Server,pmu=on readconfig=two.cfg\n')[0]
        self.assertEqual(profiles.qemu_args(p, root=self.tmp), ['-readconfig', cfg])
        self.assertEqual(profiles.qemu_args(profiles.parse_profiles('a silicon max\n')[0]), [])
        with self.assertRaises(profiles.ProfileError) as ctx:
            profiles.qemu_args(profiles.parse_profiles('b silicon max readconfig=none.cfg\n')[0], root=self.tmp)
        self.assertIn('readconfig=none.cfg: no such file', str(ctx.exception))

    def test_unknown_profile_is_one_line_listing_the_known_ones(self):
        rc, out = self.main('--kernel', self.write('k', ''), '--profile', 'nope')
        self.assertEqual(rc, 2)
        self.assertEqual(out, "pmutest-run: unknown profile 'nope'; known: skl-v4 kvm-cmask broken-pmi\n")

    def test_profile_needs_a_boot_and_sets_the_cpu(self):
        self.assertEqual(self.main('--log', 'x.log', '--profile', 'skl-v4')[0], 2)
        self.assertEqual(self.main('--kernel', 'k', '--profile', 'skl-v4', '--cpu', 'max')[0], 2)
        self.assertEqual(self.main('--kernel', 'k', '--profile', 'skl-v4', '--accel', 'kvm')[0], 2)

    def test_emulated_qemu_missing_or_failing(self):
        rc, out = self.main('--kernel', self.write('k', ''), '--profile', 'skl-v4')
        self.assertEqual(rc, 2)
        self.assertIn('build.sh not found', out)
        self.build_script('echo "no cached QEMU: run make emu-qemu" >&2; exit 1\n')
        rc, out = self.main('--kernel', self.write('k', ''), '--profile', 'skl-v4')
        self.assertEqual(rc, 2)
        self.assertIn('--print-path: no cached QEMU: run make emu-qemu', out)

    @unittest.skipUnless(QEMU, 'qemu-system-x86_64 not installed')
    def test_boots_with_the_profile_cpu_on_the_emulated_qemu(self):
        fake = os.path.join(self.tmp, 'emu-qemu')
        os.symlink(QEMU, fake)
        self.build_script('echo building >&2\necho %s\n' % fake)
        kernel = os.path.join(self.tmp, 'fake.bin')
        with open(kernel, 'wb') as f:
            f.write(fake_kernel(PASS_LOG, 0x10))
        with mock.patch.object(profiles, 'PROFILES', self.write('p.list', 'tcg-max silicon max\n')):
            rc, out = self.main('--kernel', kernel, '--profile', 'tcg-max', '--smp', '1', '--memory', '64M',
                                '--quiet', '--log-file', os.path.join(self.tmp, 's.log'))
        self.assertEqual(rc, 0, out)
        self.assertIn('profile: tcg-max (silicon), -cpu max', out)
        self.assertIn('+ %s -nodefaults' % fake, out)
        self.assertIn('-accel tcg,thread=multi -cpu max ', out)


class HostKernelVersion(unittest.TestCase):
    def test_release_strings(self):
        from pmutest.runner import host_kernel_version
        self.assertEqual(host_kernel_version('6.12.95-cloud-amd64'), '6.12.95')
        self.assertEqual(host_kernel_version('6.1.0-28-amd64'), '6.1.0')
        self.assertEqual(host_kernel_version('7.0'), '7.0')
        self.assertIsNone(host_kernel_version('unknown'))
