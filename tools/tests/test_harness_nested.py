"""harness/: what kvm_nested and xen_pvh read from a console, on made-up
consoles (each assertion can fail): the VMM's CPU flags decide the expect
file of a KVM leg, and Xen's pieces of a guest's long lines are joined."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from harness import kvm_nested, xen_pvh  # noqa: E402


def l1_console(vmm_flags, release='6.12.95+deb12-amd64'):
    return '\n'.join([
        'kvm-nested: uname=%s' % release,
        'kvm-nested: vendor=AuthenticAMD',
        'kvm-nested: flags=fpu svm perfctr_core perfmon_v2',
        'kvm-nested: perf_pmus=cpu software ',
        'kvm-nested: nmi_watchdog=0',
        'kvm-nested: param kvm.enable_pmu=Y',
        'kvm-nested: vmm=QEMU emulator version 7.2.18',
        'kvm-nested: vmm_flags=%s' % vmm_flags,
        'kvm-nested: l2 progress 60 s: 3 lines, last: ok 1 x',
        '=== BEGIN L2 LOG', 'KTAP version 1', '=== END L2 LOG', ''])


class KvmNestedL1(unittest.TestCase):
    def test_vmm_flags_pick_the_expect_file(self):
        for flags, want in (('3dnow svm xsave', 'kvm-amd-v1.expect'),
                            ('3dnow perfmon-v2 svm', 'kvm-amd.expect')):
            facts, l2 = kvm_nested.parse_l1(l1_console(flags))
            self.assertEqual(l2, 'KTAP version 1\n')
            path, _ = kvm_nested.hostmod.expect_path(kvm_nested.l1_host(facts))
            self.assertEqual(os.path.basename(path), want, flags)

    def test_kvm_61_gives_no_perfmon_v2_whatever_the_vmm(self):
        facts, _ = kvm_nested.parse_l1(l1_console('perfmon-v2 svm', release='6.1.0-56-amd64'))
        path, _ = kvm_nested.hostmod.expect_path(kvm_nested.l1_host(facts))
        self.assertEqual(os.path.basename(path), 'kvm-amd-v1.expect')


class XenGuestLog(unittest.TestCase):
    def test_pieces_of_a_long_line_are_joined(self):
        long = '# ' + 'x' * 300
        pieces = [long[i:i + xen_pvh.XEN_PBUF_CHARS] for i in range(0, len(long), xen_pvh.XEN_PBUF_CHARS)]
        console = ''.join('(d1) %s\r\n' % p for p in ['KTAP version 1'] + pieces + ['1..0']) + \
            '(XEN) not the guest\r\nxen-pvh: nor this\r\n'
        self.assertEqual(xen_pvh.guest_log(console), 'KTAP version 1\n%s\n1..0\n' % long)

    def test_no_guest_lines(self):
        self.assertIsNone(xen_pvh.guest_log('(XEN) d0v0 Unhandled: vec 14, #PF[0001]\n'))


if __name__ == '__main__':
    unittest.main()
