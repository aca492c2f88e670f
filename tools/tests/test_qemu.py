"""pmutest.qemu: the one QEMU command builder, the firmware table, and the
one KVM probe with its cache."""
import json
import os
import shutil
import tempfile
import unittest

from pmutest.qemu import (KVM_MSR_WORKAROUND, QemuConfig, build_qemu_command, choose_accel, find_ovmf,
                          kvm_unusable_reason, private_ovmf)


class QemuCommand(unittest.TestCase):
    OVMF_PAIR = {'code': '/fw/OVMF_CODE.fd', 'vars': '/tmp/w/OVMF_VARS.fd'}

    def cfg(self, **kw):
        base = dict(qemu='qemu-system-x86_64', serial_log='/tmp/s.log', smp=4, memory='512M',
                    machine='q35')
        base.update(kw)
        return QemuConfig(**base)

    def test_exact_kernel_tcg_bios(self):
        cmd = build_qemu_command(self.cfg(kernel='build/pmutest.elf', append='tests=pmu.*',
                                             accel='tcg'))
        self.assertEqual(cmd, [
            'qemu-system-x86_64', '-nodefaults', '-no-reboot', '-display', 'none',
            '-machine', 'q35', '-m', '512M', '-smp', '4',
            '-accel', 'tcg,thread=multi', '-cpu', 'max',
            '-kernel', 'build/pmutest.elf', '-append', 'tests=pmu.*',
            '-serial', 'file:/tmp/s.log', '-device', 'isa-debug-exit,iobase=0xf4,iosize=0x04'])

    def test_every_configuration(self):
        images = {'kernel': dict(kernel='k.elf'), 'cd': dict(iso='p.iso', boot='cd'),
                  'usb': dict(iso='p.iso', boot='usb')}
        for image, ikw in images.items():
            for fw in ('bios', 'uefi'):
                for accel in ('kvm', 'tcg'):
                    with self.subTest(image=image, firmware=fw, accel=accel):
                        cfg = self.cfg(firmware=fw, accel=accel, ovmf=self.OVMF_PAIR, **ikw)
                        cmd = build_qemu_command(cfg)
                        joined = ' '.join(cmd)
                        for always in ('-nodefaults', '-no-reboot', '-display none',
                                       '-serial file:/tmp/s.log', '-m 512M', '-smp 4',
                                       '-machine q35',
                                       '-device isa-debug-exit,iobase=0xf4,iosize=0x04'):
                            self.assertIn(always, joined)
                        if accel == 'kvm':
                            self.assertIn('-accel kvm -cpu host', joined)
                            self.assertNotIn('tcg', joined)
                        else:
                            self.assertIn('-accel tcg,thread=multi -cpu max', joined)
                            self.assertNotIn('kvm', joined)
                        pflash = ('-drive if=pflash,format=raw,unit=0,readonly=on,file=/fw/OVMF_CODE.fd '
                                  '-drive if=pflash,format=raw,unit=1,file=/tmp/w/OVMF_VARS.fd')
                        self.assertEqual(pflash in joined, fw == 'uefi')
                        self.assertEqual('-kernel k.elf' in joined, image == 'kernel')
                        self.assertEqual('-cdrom p.iso' in joined, image == 'cd')
                        usb = ('-device qemu-xhci -drive if=none,id=stick,format=raw,file=p.iso,'
                               'snapshot=on -device usb-storage,drive=stick')
                        self.assertEqual(usb in joined, image == 'usb')
                        self.assertNotIn('-append', cmd)
                        self.assertEqual(cmd.count('-cpu'), 1)

    def test_unified_ovmf_as_bios(self):
        cmd = build_qemu_command(self.cfg(iso='p.iso', firmware='uefi',
                                             ovmf={'bios': '/usr/share/ovmf/OVMF.fd'}))
        self.assertIn(['-bios', '/usr/share/ovmf/OVMF.fd'],
                      [cmd[i:i + 2] for i in range(len(cmd))])
        self.assertNotIn('if=pflash', ' '.join(cmd))

    def test_bios_adds_no_firmware(self):
        cmd = build_qemu_command(self.cfg(iso='p.iso', ovmf=self.OVMF_PAIR))
        self.assertNotIn('-bios', cmd)
        self.assertNotIn('pflash', ' '.join(cmd))

    def test_cpu_model_suffix_machine_and_extra(self):
        cmd = build_qemu_command(self.cfg(kernel='k', accel='kvm', cpu_suffix=',-arch-capabilities',
                                             machine='pc', smp=2, memory='1G',
                                             extra=('-d', 'int')))
        self.assertEqual(cmd[cmd.index('-cpu') + 1], 'host,-arch-capabilities')
        self.assertEqual(cmd[cmd.index('-machine') + 1], 'pc')
        self.assertEqual(cmd[cmd.index('-smp') + 1], '2')
        self.assertEqual(cmd[cmd.index('-m') + 1], '1G')
        self.assertEqual(cmd[-2:], ['-d', 'int'])
        cmd = build_qemu_command(self.cfg(kernel='k', accel='tcg', cpu='EPYC'))
        self.assertEqual(cmd[cmd.index('-cpu') + 1], 'EPYC')

    def test_commas_in_drive_paths_are_doubled(self):
        cmd = build_qemu_command(self.cfg(iso='/a,b/p.iso', boot='usb'))
        self.assertIn('if=none,id=stick,format=raw,file=/a,,b/p.iso,snapshot=on', cmd)
        cmd = build_qemu_command(self.cfg(iso='/a,b/p.iso', boot='cd'))
        self.assertEqual(cmd[cmd.index('-cdrom') + 1], '/a,b/p.iso')

    def test_find_ovmf(self):
        def only(*present):
            return lambda p: p in present
        # The unified image first (no flash writes), then the 2M pair, then the 4M one.
        self.assertEqual(find_ovmf(only('/usr/share/OVMF/OVMF_CODE.fd', '/usr/share/OVMF/OVMF_VARS.fd',
                                           '/usr/share/ovmf/OVMF.fd')),
                         {'bios': '/usr/share/ovmf/OVMF.fd'})
        self.assertEqual(find_ovmf(only('/usr/share/OVMF/OVMF_CODE.fd', '/usr/share/OVMF/OVMF_VARS.fd',
                                           '/usr/share/OVMF/OVMF_CODE_4M.fd', '/usr/share/OVMF/OVMF_VARS_4M.fd')),
                         {'code': '/usr/share/OVMF/OVMF_CODE.fd', 'vars': '/usr/share/OVMF/OVMF_VARS.fd'})
        self.assertEqual(find_ovmf(only('/usr/share/OVMF/OVMF_CODE.fd', '/usr/share/OVMF/OVMF_CODE_4M.fd',
                                           '/usr/share/OVMF/OVMF_VARS_4M.fd')),
                         {'code': '/usr/share/OVMF/OVMF_CODE_4M.fd', 'vars': '/usr/share/OVMF/OVMF_VARS_4M.fd'})
        self.assertIsNone(find_ovmf(only()))


class FakeStarter:
    """Stands in for starting QEMU paused: answers from a list, records calls."""

    def __init__(self, *answers):
        self.answers, self.calls = list(answers), []

    def __call__(self, qemu, accel, cpu_model):
        self.calls.append((qemu, accel, cpu_model))
        return self.answers.pop(0)


class KvmProbe(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='pmutest-qemu-test-')
        self.addCleanup(shutil.rmtree, self.tmp)
        self.dev = os.path.join(self.tmp, 'kvm')
        with open(self.dev, 'w'):
            pass

    def test_no_device(self):
        starter = FakeStarter()
        self.assertEqual(kvm_unusable_reason('q', dev=os.path.join(self.tmp, 'none'), starter=starter),
                         ('no %s' % os.path.join(self.tmp, 'none'), ''))
        self.assertEqual(starter.calls, [])

    def test_device_not_writable(self):
        reason, _ = kvm_unusable_reason('q', dev=self.dev, starter=FakeStarter(), access=lambda p, m: False)
        self.assertEqual(reason, '%s is not read/writable by this user' % self.dev)

    def test_qemu_starts_a_kvm_guest(self):
        starter = FakeStarter((0, ''))
        self.assertEqual(kvm_unusable_reason('q', 'host', dev=self.dev, starter=starter), (None, ''))
        self.assertEqual(starter.calls, [('q', 'kvm', 'host')])

    def test_msr_workaround(self):
        starter = FakeStarter((-6, 'error: failed to set MSR 0x10a to 0x1\n'), (0, ''))
        self.assertEqual(kvm_unusable_reason('q', 'host', dev=self.dev, starter=starter),
                         (None, KVM_MSR_WORKAROUND))
        self.assertEqual(starter.calls[1][2], 'host' + KVM_MSR_WORKAROUND)

    def test_qemu_refuses(self):
        starter = FakeStarter((1, 'warning: x\nqemu-system-x86_64: Could not access KVM kernel module\n'))
        reason, suffix = kvm_unusable_reason('q', 'host', dev=self.dev, starter=starter)
        self.assertEqual(reason, 'QEMU could not start a KVM guest with -cpu host: '
                                 'qemu-system-x86_64: Could not access KVM kernel module')
        self.assertEqual(suffix, '')

    def test_choose_accel_caches_the_probe(self):
        cache = os.path.join(self.tmp, 'sub', 'probe.json')
        cfg = QemuConfig(qemu='/bin/true')
        calls = []

        def probe(qemu, cpu_model):
            calls.append(cpu_model)
            return None, ''
        self.assertEqual(choose_accel('tcg', cfg, cache, probe), ('tcg', '', 'accel: tcg (requested)'))
        self.assertEqual(calls, [])
        accel, suffix, why = choose_accel('auto', cfg, cache, probe)
        self.assertEqual((accel, suffix), ('kvm', ''))
        self.assertIn('probed', why)
        accel, _, why = choose_accel('auto', cfg, cache, probe)
        self.assertIn('cached', why)
        self.assertEqual(calls, ['host'])
        with open(cache) as f:
            self.assertEqual(list(json.load(f).values()), [{'reason': None, 'cpu_suffix': ''}])

    def test_choose_accel_falls_back_to_tcg(self):
        cache = os.path.join(self.tmp, 'probe.json')
        cfg = QemuConfig(qemu='/bin/true', cpu='EPYC')
        accel, _, why = choose_accel('auto', cfg, cache, lambda q, c: ('no /dev/kvm', ''))
        self.assertEqual(accel, 'tcg')
        self.assertEqual(why, 'accel: tcg, because KVM does not work here (probed: no /dev/kvm)')
        # Asked for, KVM is used anyway, and the probe's answer is shown.
        accel, _, why = choose_accel('kvm', cfg, cache, lambda q, c: self.fail('cached'))
        self.assertEqual(accel, 'kvm')
        self.assertIn('the probe says: no /dev/kvm', why)

    def test_choose_accel_keeps_the_workaround(self):
        cache = os.path.join(self.tmp, 'probe.json')
        cfg = QemuConfig(qemu='/bin/true')
        self.assertEqual(choose_accel('kvm', cfg, cache, lambda q, c: (None, KVM_MSR_WORKAROUND))[:2],
                         ('kvm', KVM_MSR_WORKAROUND))

    def test_private_ovmf_copies_the_variable_store(self):
        vars_file = os.path.join(self.tmp, 'VARS.fd')
        with open(vars_file, 'wb') as f:
            f.write(b'nvram')
        work = os.path.join(self.tmp, 'work')
        os.mkdir(work)
        ovmf = private_ovmf({'code': '/fw/CODE.fd', 'vars': vars_file}, work)
        self.assertEqual(ovmf, {'code': '/fw/CODE.fd', 'vars': os.path.join(work, 'VARS.fd')})
        with open(ovmf['vars'], 'rb') as f:
            self.assertEqual(f.read(), b'nvram')
        self.assertEqual(private_ovmf({'bios': '/x.fd'}, work), {'bios': '/x.fd'})
