"""Unit tests of the judgements of harness/netboot.py and harness/kexec.py
(the boots themselves run in the boot matrix and make netboot-test /
make kexec-test): synthetic serial logs, each way they must fail.
Run: tools/run-tests.py tools/tests/test_reach.py"""
import os
import sys
import unittest

from pmutest import REPO_ROOT

if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)       # the harness package sits at the top
from harness import kexec, netboot  # noqa: E402

T = kexec.TAG


def linux(ctrl=0x70000000f, fixed=0xb0, cpus=2):
    lines = ['%s linux up 6.1.0-50-amd64, cpus online 0-%d' % (T, cpus - 1),
             '%s dmesg: [    0.69] NMI watchdog: Enabled. Permanently consumes one hw-PMU counter.' % T]
    for c in range(cpus):
        lines += ['%s cpu %d msr 0x186 0000000000000000' % (T, c),
                  '%s cpu %d msr 0x38d %016x' % (T, c, fixed),
                  '%s cpu %d msr 0x38f %016x' % (T, c, ctrl)]
    return '\r\n'.join(lines) + '\r\n'


def pmutest(cpus=2, pmu_lines=(), online=None):
    return ('\nKTAP version 1\n1..1\n# smp: %d of %d CPUs online (xapic)\n' % (online or cpus, cpus)
            + ''.join(line + '\n' for line in pmu_lines)
            + '# pmutest: 1 passed, 0 failed, 0 skipped\n# pmutest: end exit=0x10\n')


GCTRL = '# pmu: cpu %d: IA32_PERF_GLOBAL_CTRL (MSR 0x38f) = 0x70000000f at boot, RESET value is 0xf'
FIXED = ('# pmu: cpu %d: IA32_FIXED_CTR_CTRL (MSR 0x38d) = 0xb0: FIXED_CTR1 enabled (field 0xb) by an '
         'earlier owner; %s')


class KexecJudge(unittest.TestCase):
    def test_exec_passes_with_global_ctrl_and_a_second_linux(self):
        text = linux() + pmutest(pmu_lines=[GCTRL % 0, GCTRL % 1]) + linux()
        self.assertEqual(kexec.judge('exec', text, None, False, True), [])

    def test_exec_fails_without_the_reset(self):
        text = linux() + pmutest(pmu_lines=[GCTRL % 0, GCTRL % 1])
        self.assertIn('Linux did not boot again', ' '.join(kexec.judge('exec', text, 0, False, True)))

    def test_exec_fails_when_global_ctrl_differs_or_is_missing(self):
        text = linux(ctrl=0x70000000e) + pmutest(pmu_lines=[GCTRL % 0, GCTRL % 1]) + linux()
        problems = kexec.judge('exec', text, None, False, True)
        self.assertEqual(len(problems), 2, problems)

    def test_a_cpu_left_down_fails(self):
        text = linux() + pmutest(online=1, pmu_lines=[GCTRL % 0, GCTRL % 1]) + linux()
        self.assertIn('Linux had 2 CPUs online', ' '.join(kexec.judge('exec', text, None, False, True)))

    def test_crash_needs_the_counter_reported_and_taken_over(self):
        taken = [FIXED % (c, 'taken over (pmu.takeover=1)') for c in (0, 1)]
        self.assertEqual(kexec.judge('crash', linux() + pmutest(pmu_lines=taken), 0, False, True), [])
        left = [FIXED % (c, 'left alone') for c in (0, 1)]
        self.assertEqual(len(kexec.judge('crash', linux() + pmutest(pmu_lines=left), 0, False, True)), 2)
        self.assertEqual(len(kexec.judge('crash', linux() + pmutest(), 0, False, True)), 2)

    def test_crash_must_power_off_not_reset(self):
        taken = [FIXED % (c, 'taken over (pmu.takeover=1)') for c in (0, 1)]
        text = linux() + pmutest(pmu_lines=taken)
        self.assertIn('did not power off', ' '.join(kexec.judge('crash', text, None, True, True)))
        self.assertIn('booted again', ' '.join(kexec.judge('crash', text + linux(), 0, False, True)))

    def test_no_watchdog_or_no_pmutest(self):
        self.assertIn('NMI watchdog', ' '.join(kexec.judge('exec', linux().replace('Enabled', 'off'), 0,
                                                            False, True)))
        self.assertIn('never started', ' '.join(kexec.judge('exec', linux(), 0, False, True)))
        self.assertIn('never reached /init', ' '.join(kexec.judge('exec', '', 0, False, True)))

    def test_cpu_count(self):
        self.assertEqual(kexec.cpu_count('0-3,6,8-9'), 7)


class NetbootJudge(unittest.TestCase):
    def test_status_from_the_end_marker(self):
        text = 'command line "tftp://10.0.2.2/boot/pmutest.elf"\n# pmutest: end exit=0x11\n'
        self.assertEqual(netboot.status_problems(text, 35), [])
        self.assertEqual(len(netboot.status_problems(text, 33)), 1)

    def test_reboot_is_status_zero(self):
        text = 'command line "tftp://10.0.2.2/boot/pmutest.elf exit=reboot"\n# pmutest: end exit=0x10\n'
        self.assertEqual(netboot.status_problems(text, 0), [])
        self.assertEqual(len(netboot.status_problems(text, 33)), 1)

    def test_every_client_has_a_boot_file_and_facts(self):
        for client, (bootfile, firmware, facts) in netboot.CLIENTS.items():
            self.assertIn(firmware, ('bios', 'uefi'), client)
            self.assertTrue(bootfile and facts, client)


if __name__ == '__main__':
    unittest.main()
