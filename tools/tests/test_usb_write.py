"""Tests for tools/usb-write: every refusal against a fake sysfs tree, fake
mount and swap tables and regular files standing for disks (so no real disk
is ever opened); writes and verifies to plain files; and, as root with loop
support, to a real loop device on a temporary file.

Run: PYTHONPATH=tools python3 -m pmutest.testing tools/tests/test_usb_write.py
"""
import hashlib
import os
import pty
import shutil
import subprocess
import sys
import tempfile
import unittest

from pmutest import usbwrite as uw

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(os.path.dirname(HERE), 'usb-write')

MIB = 1 << 20
IMAGE_SIZE = MIB + 1234                 # not a multiple of a sector or of the tool's chunk


class FakeSysfs:
    """A sysfs tree laid out like the kernel's: disks under
    devices/virtual/block/<disk>, partitions inside their disk's directory,
    class/block/* and block/* as symlinks to them."""

    def __init__(self, root):
        self.root = root
        for d in ('devices/virtual/block', 'class/block', 'block', 'dev/block'):
            os.makedirs(os.path.join(root, d))

    def _dir(self, *parts):
        return os.path.join(self.root, 'devices', 'virtual', 'block', *parts)

    @staticmethod
    def _put(path, text):
        with open(path, 'w') as f:
            f.write('%s\n' % text)

    def _node(self, path, name, size, ro):
        os.makedirs(os.path.join(path, 'holders'))
        os.makedirs(os.path.join(path, 'slaves'))
        if size is not None:
            self._put(os.path.join(path, 'size'), size // 512)
        self._put(os.path.join(path, 'ro'), ro)
        os.symlink(os.path.relpath(path, os.path.join(self.root, 'class', 'block')),
                   os.path.join(self.root, 'class', 'block', name))

    def disk(self, name, size, removable=1, ro=0, parts=0, vendor=None, model=None):
        d = self._dir(name)
        self._node(d, name, size, ro)
        if removable is not None:
            self._put(os.path.join(d, 'removable'), removable)
        if vendor or model:
            os.makedirs(os.path.join(d, 'device'))
            self._put(os.path.join(d, 'device', 'vendor'), vendor or '')
            self._put(os.path.join(d, 'device', 'model'), model or '')
        os.symlink(os.path.relpath(d, os.path.join(self.root, 'block')), os.path.join(self.root, 'block', name))
        for i in range(1, parts + 1):
            p = os.path.join(d, '%s%d' % (name, i))
            self._node(p, '%s%d' % (name, i), size // (parts + 1), 0)
            self._put(os.path.join(p, 'partition'), i)

    def mapper(self, name, slaves):
        """A device-mapper device stacked on other block devices."""
        d = self._dir(name)
        self._node(d, name, MIB, 0)
        for s in slaves:
            target = os.path.realpath(os.path.join(self.root, 'class', 'block', s))
            os.symlink(target, os.path.join(d, 'slaves', s))
            os.symlink(d, os.path.join(target, 'holders', name))

    def devnum(self, devnum, name):
        os.symlink(os.path.realpath(os.path.join(self.root, 'class', 'block', name)),
                   os.path.join(self.root, 'dev', 'block', '%d:%d' % (os.major(devnum), os.minor(devnum))))


class _Case(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='usb-write-test.')
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.image = self.path('pmutest.iso')
        self.image_bytes = os.urandom(IMAGE_SIZE)
        with open(self.image, 'wb') as f:
            f.write(self.image_bytes)
        self.env = dict(os.environ)
        for k in ('PMUTEST_SYSFS', 'PMUTEST_MOUNTS', 'PMUTEST_SWAPS', 'PMUTEST_FAKE_DISKS'):
            self.env.pop(k, None)

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def write(self, name, data):
        p = self.path(name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, 'wb' if isinstance(data, bytes) else 'w') as f:
            f.write(data)
        return p

    def run_tool(self, *args, stdin=subprocess.DEVNULL):
        r = subprocess.run([sys.executable, TOOL] + list(args), env=self.env, stdin=stdin,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        return r.returncode, r.stderr

    def assertRefused(self, rc, err, *phrases):
        lines = err.strip().splitlines()
        self.assertEqual(rc, 2, err)
        self.assertEqual(len(lines), 1, 'a refusal is one line: %r' % err)
        self.assertTrue(lines[0].startswith('usb-write: refused: '), lines[0])
        self.assertTrue(lines[0].endswith('; nothing written'), lines[0])
        for p in phrases:
            self.assertIn(p, lines[0])


class FakeDisks(_Case):
    """Regular files stand for disks; the fake sysfs and tables say what they are."""

    def setUp(self):
        super().setUp()
        self.sys = FakeSysfs(self.path('sys'))
        self.mounts = self.write('mounts', 'proc /proc proc rw 0 0\n')
        self.swaps = self.write('swaps', 'Filename\tType\tSize\tUsed\tPriority\n')
        self.env.update(PMUTEST_SYSFS=self.sys.root, PMUTEST_MOUNTS=self.mounts,
                        PMUTEST_SWAPS=self.swaps, PMUTEST_FAKE_DISKS='1')
        os.makedirs(self.path('dev'))
        self.before = {}

    def fake_disk(self, name='sdz', size=4 * MIB, **kw):
        """The disk in sysfs and a file for it (and its partitions) in dev/,
        filled with a pattern the tests check is never overwritten."""
        self.sys.disk(name, size, **kw)
        for p in [name] + ['%s%d' % (name, i) for i in range(1, kw.get('parts', 0) + 1)]:
            data = bytes([0xA5]) * (2 * MIB)
            self.write(os.path.join('dev', p), data)
            self.before[p] = data
        return self.path('dev', name)

    def add_mount(self, source, where):
        with open(self.mounts, 'a') as f:
            f.write('%s %s ext4 rw 0 0\n' % (source, where))

    def assertUntouched(self):
        for name, data in self.before.items():
            with open(self.path('dev', name), 'rb') as f:
                self.assertEqual(f.read(), data, '%s was written' % name)

    def refused(self, dev, *phrases, extra=()):
        rc, err = self.run_tool('--dev', dev, '--image', self.image, '--allow-file', '--yes', *extra)
        self.assertRefused(rc, err, *phrases)
        self.assertUntouched()
        return err

    def written(self, dev, *extra):
        rc, err = self.run_tool('--dev', dev, '--image', self.image, '--allow-file', '--yes', *extra)
        self.assertEqual(rc, 0, err)
        with open(dev, 'rb') as f:
            data = f.read()
        self.assertEqual(data[:IMAGE_SIZE], self.image_bytes)
        self.assertEqual(data[IMAGE_SIZE:], bytes([0xA5]) * (2 * MIB - IMAGE_SIZE),
                         'bytes past the image must stay as they were')
        return err

    # --- what --dev is

    def test_missing_dev(self):
        self.fake_disk()
        rc, err = self.run_tool('--image', self.image, '--yes')
        self.assertRefused(rc, err, 'no target device given', 'make usb DEV=/dev/sdX')
        self.assertUntouched()

    def test_dev_does_not_exist(self):
        self.refused(self.path('dev', 'sdq'), self.path('dev', 'sdq') + ' does not exist')

    def test_directory(self):
        self.refused(self.path('dev'), 'is a directory')

    def test_character_device(self):
        self.refused('/dev/null', '/dev/null is a character device')

    def test_fifo(self):
        fifo = self.path('dev', 'fifo')
        os.mkfifo(fifo)
        self.refused(fifo, 'neither a block device nor a regular file')

    def test_regular_file_needs_allow_file(self):
        dev = self.fake_disk()
        rc, err = self.run_tool('--dev', dev, '--image', self.image, '--yes')
        self.assertRefused(rc, err, 'is a regular file, not a block device', '--allow-file')
        self.assertUntouched()

    def test_fake_disk_unknown_to_sysfs(self):
        dev = self.write(os.path.join('dev', 'sdx'), b'\xa5' * 10)
        self.before['sdx'] = b'\xa5' * 10
        self.refused(dev, 'no sdx in')

    def test_image_is_target(self):
        self.fake_disk()
        rc, err = self.run_tool('--dev', self.image, '--image', self.image, '--allow-file', '--yes')
        self.assertRefused(rc, err, 'is the image itself')

    # --- the image

    def test_missing_image(self):
        dev = self.fake_disk()
        rc, err = self.run_tool('--dev', dev, '--image', self.path('nope.iso'), '--allow-file', '--yes')
        self.assertRefused(rc, err, 'image %s does not exist' % self.path('nope.iso'), 'make iso')
        self.assertUntouched()

    def test_empty_image(self):
        dev = self.fake_disk()
        empty = self.write('empty.iso', b'')
        rc, err = self.run_tool('--dev', dev, '--image', empty, '--allow-file', '--yes')
        self.assertRefused(rc, err, 'is empty')
        self.assertUntouched()

    # --- partitions and users of the disk

    def test_partition(self):
        self.fake_disk(parts=2)
        self.refused(self.path('dev', 'sdz2'), 'is a partition (sdz2 of disk sdz)', 'give /dev/sdz')

    def test_mounted_partition(self):
        dev = self.fake_disk(parts=2)
        self.add_mount('/dev/sdz2', '/media/stick')
        self.refused(dev, 'has /dev/sdz2 mounted on /media/stick')

    def test_mounted_through_symlink(self):
        dev = self.fake_disk(parts=1)
        os.makedirs(self.path('dev', 'disk', 'by-label'))
        link = self.path('dev', 'disk', 'by-label', 'STICK')
        os.symlink('../../sdz1', link)
        self.add_mount(link, '/media/stick')
        self.refused(dev, 'has %s mounted on /media/stick' % link)

    def test_mount_point_escapes(self):
        dev = self.fake_disk(parts=1)
        self.add_mount('/dev/sdz1', '/media/My\\040Stick')
        self.refused(dev, 'mounted on /media/My Stick;')

    def test_whole_disk_mounted(self):
        dev = self.fake_disk()
        self.add_mount('/dev/sdz', '/mnt/iso')
        self.refused(dev, '%s is mounted on /mnt/iso' % dev)

    def test_disk_holding_root(self):
        dev = self.fake_disk(parts=2)
        self.add_mount('/dev/sdz2', '/')
        self.refused(dev, 'is the disk holding /;', extra=('--force',))

    def test_disk_holding_boot(self):
        dev = self.fake_disk(parts=2)
        self.add_mount('/dev/sda1', '/')
        self.add_mount('/dev/sdz1', '/boot')
        self.refused(dev, 'is the disk holding /boot', extra=('--force',))

    def test_root_on_device_mapper(self):
        dev = self.fake_disk(parts=2)
        self.sys.mapper('dm-0', ['sdz2'])
        os.makedirs(self.path('dev', 'mapper'))
        self.write(os.path.join('dev', 'dm-0'), b'')
        os.symlink('../dm-0', self.path('dev', 'mapper', 'vg-root'))
        self.add_mount(self.path('dev', 'mapper', 'vg-root'), '/')
        self.refused(dev, 'is the disk holding /;')

    def test_root_found_by_device_number(self):
        # The table may call root "/dev/root"; stat("/") still finds the disk.
        dev = self.fake_disk(parts=1)
        self.sys.devnum(os.stat('/').st_dev, 'sdz1')
        self.add_mount('/dev/root', '/')
        self.refused(dev, 'is the disk holding /;')

    def test_swap_partition(self):
        dev = self.fake_disk(parts=3)
        with open(self.swaps, 'a') as f:
            f.write('/dev/sdz3\tpartition\t1024\t0\t-2\n')
        self.refused(dev, 'holds active swap /dev/sdz3')

    def test_holder_on_partition(self):
        dev = self.fake_disk(parts=2)
        self.sys.mapper('dm-3', ['sdz1'])
        self.refused(dev, 'sdz1 is held by dm-3')

    def test_unreadable_mount_table(self):
        dev = self.fake_disk()
        self.env['PMUTEST_MOUNTS'] = self.path('no-such-mounts')
        self.refused(dev, 'cannot read the mount table')

    def test_other_disks_mounted_is_fine(self):
        dev = self.fake_disk(parts=1)
        self.sys.disk('sdy', 8 * MIB, parts=1)
        self.add_mount('/dev/sdy1', '/')
        self.add_mount('/dev/sdy1', '/media/sdz1-lookalike')
        self.written(dev)

    # --- the disk itself

    def test_read_only(self):
        self.refused(self.fake_disk(ro=1), 'is read-only')

    def test_not_removable(self):
        err = self.refused(self.fake_disk(removable=0), 'is not a removable disk', 'removable is 0', '--force')
        self.assertIn('FORCE=1', err)

    def test_removable_unknown_is_not_removable(self):
        self.refused(self.fake_disk(removable=None), 'removable is missing')

    def test_not_removable_with_force(self):
        self.written(self.fake_disk(removable=0), '--force')

    def test_too_small(self):
        dev = self.fake_disk(size=MIB)
        self.refused(dev, 'holds %d bytes (1.0 MiB, from sysfs) but the image is %d bytes'
                     % (MIB, IMAGE_SIZE), extra=('--force',))

    def test_exactly_the_image_size_fits(self):
        # sysfs counts 512-byte sectors: round the image up to one.
        self.written(self.fake_disk(size=(IMAGE_SIZE + 511) // 512 * 512))

    # --- confirmation

    def test_no_tty_and_no_yes(self):
        dev = self.fake_disk()
        rc, err = self.run_tool('--dev', dev, '--image', self.image, '--allow-file')
        self.assertRefused(rc, err, 'stdin is not a terminal', '--yes')
        self.assertUntouched()

    def _answer(self, answer):
        dev = self.fake_disk(vendor='ACME', model='Stick')
        master, slave = pty.openpty()
        try:
            os.write(master, answer.encode() + b'\n')
            rc, err = self.run_tool('--dev', dev, '--image', self.image, '--allow-file', stdin=slave)
        finally:
            os.close(slave)
            os.close(master)
        self.assertIn('about to overwrite %s (ACME Stick 4.0 MiB removable)' % dev, err)
        return rc, err

    def test_tty_answer_no(self):
        rc, err = self._answer('no')
        self.assertEqual(rc, 2, err)
        self.assertIn("refused: not confirmed (answer was 'no'); nothing written", err)
        self.assertUntouched()

    def test_tty_answer_yes(self):
        rc, err = self._answer('yes')
        self.assertEqual(rc, 0, err)
        with open(self.path('dev', 'sdz'), 'rb') as f:
            self.assertEqual(f.read(IMAGE_SIZE), self.image_bytes)

    # --- writing and verifying

    def test_write_and_verify(self):
        err = self.written(self.fake_disk())
        digest = hashlib.sha256(self.image_bytes).hexdigest()
        self.assertIn('wrote %d bytes to %s, read them back: sha256 %s matches'
                      % (IMAGE_SIZE, self.path('dev', 'sdz'), digest), err)

    def test_verify_only_detects_a_flipped_byte(self):
        dev = self.fake_disk()
        self.written(dev)
        with open(dev, 'r+b') as f:
            f.seek(777777)
            b = f.read(1)
            f.seek(777777)
            f.write(bytes([b[0] ^ 0x10]))
        rc, err = self.run_tool('--dev', dev, '--image', self.image, '--allow-file', '--verify-only')
        self.assertEqual(rc, 1, err)
        self.assertIn('verify FAILED', err)
        self.assertIn('first difference at byte 777777', err)
        self.assertIn(hashlib.sha256(self.image_bytes).hexdigest(), err)

    def test_verify_only_match_writes_nothing(self):
        dev = self.fake_disk()
        self.written(dev)
        st = os.stat(dev)
        rc, err = self.run_tool('--dev', dev, '--image', self.image, '--allow-file', '--verify-only')
        self.assertEqual(rc, 0, err)
        self.assertIn('verified: first %d bytes' % IMAGE_SIZE, err)
        self.assertEqual(os.stat(dev).st_mtime_ns, st.st_mtime_ns)

    def test_verify_only_of_a_shorter_target_fails(self):
        short = self.write('short.img', self.image_bytes[:1000])
        self.env.pop('PMUTEST_FAKE_DISKS')
        rc, err = self.run_tool('--dev', short, '--image', self.image, '--allow-file', '--verify-only')
        self.assertEqual(rc, 1, err)
        self.assertIn('first difference at byte 1000', err)


class PlainFiles(_Case):
    """--allow-file without the fake sysfs: a plain file, no disk checks."""

    def test_write_and_verify_plain_file(self):
        target = self.write('target.img', b'\x00' * 10)
        rc, err = self.run_tool('--dev', target, '--image', self.image, '--allow-file', '--yes')
        self.assertEqual(rc, 0, err)
        with open(target, 'rb') as f:
            self.assertEqual(f.read(), self.image_bytes)


class Units(unittest.TestCase):
    def test_mount_table_unescape(self):
        self.assertEqual(uw.System.unescape('/media/a\\040b\\011c\\134d'), '/media/a b\tc\\d')
        self.assertEqual(uw.System.unescape('trailing\\04'), 'trailing\\04')

    def test_real_root_disk_is_a_system_disk(self):
        sysm = uw.System(env={})
        name = sysm.name_of_devnum(os.stat('/').st_dev)
        if not name:
            self.skipTest('/ is on no block device sysfs knows (overlay or tmpfs root)')
        disks = sysm.disks_under(name)
        self.assertTrue(disks, 'no disk under %s' % name)
        held = sysm.system_disks()
        for d in disks:
            self.assertEqual(held.get(d), '/', 'disk %s holds /, system_disks() says %r' % (d, held))


def _loop_skip_reason():
    if os.geteuid() != 0:
        return 'not root: loop devices need root'
    if not shutil.which('losetup'):
        return 'losetup not installed'
    if not os.path.exists('/dev/loop-control') and not os.path.exists('/dev/loop0'):
        return 'no loop device support (/dev/loop-control missing)'
    return None


class LoopDevice(_Case):
    """A real block device: a loop device over a temporary file."""

    def setUp(self):
        super().setUp()
        why = _loop_skip_reason()
        if why:
            self.skipTest(why)
        self.backing = self.write('backing.img', b'\xa5' * (4 * MIB))
        self.dev = self.attach(self.backing)

    def attach(self, path):
        r = subprocess.run(['losetup', '-f', '--show', path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        if r.returncode != 0 or not r.stdout.strip().startswith('/dev/loop'):
            self.skipTest('losetup -f --show failed: %s' % (r.stderr.strip() or r.stdout.strip()))
        dev = r.stdout.strip()
        self.addCleanup(subprocess.run, ['losetup', '-d', dev])
        return dev

    def test_write_and_verify_loop(self):
        rc, err = self.run_tool('--dev', self.dev, '--image', self.image, '--force', '--yes')
        self.assertEqual(rc, 0, err)
        self.assertIn('sha256 %s matches' % hashlib.sha256(self.image_bytes).hexdigest(), err)
        with open(self.backing, 'rb') as f:
            data = f.read()
        self.assertEqual(data[:IMAGE_SIZE], self.image_bytes)
        self.assertEqual(data[IMAGE_SIZE:], b'\xa5' * (4 * MIB - IMAGE_SIZE))

    def test_loop_is_not_removable(self):
        name = os.path.basename(self.dev)
        with open('/sys/block/%s/removable' % name) as f:
            if f.read().strip() != '0':
                self.skipTest('this kernel calls loop devices removable')
        rc, err = self.run_tool('--dev', self.dev, '--image', self.image, '--yes')
        self.assertRefused(rc, err, 'is not a removable disk')
        with open(self.backing, 'rb') as f:
            self.assertEqual(f.read(), b'\xa5' * (4 * MIB))

    def test_loop_too_small_from_sysfs(self):
        small = self.attach(self.write('small.img', b'\xa5' * MIB))
        rc, err = self.run_tool('--dev', small, '--image', self.image, '--force', '--yes')
        self.assertRefused(rc, err, 'holds %d bytes (1.0 MiB, from sysfs)' % MIB)

    def test_loop_size_from_ioctl(self):
        # A fake sysfs that knows the loop device but not its size: the
        # size must come from BLKGETSIZE64 on the real device.
        small = self.attach(self.write('small.img', b'\xa5' * MIB))
        fake = FakeSysfs(self.path('sys'))
        fake.disk(os.path.basename(small), None)
        self.env.update(PMUTEST_SYSFS=fake.root, PMUTEST_MOUNTS=self.write('mounts', ''),
                        PMUTEST_SWAPS=self.write('swaps', 'Filename\n'))
        # The fake tables are read only with --allow-file (the test switch).
        rc, err = self.run_tool('--dev', small, '--image', self.image, '--yes', '--allow-file')
        self.assertRefused(rc, err, 'holds %d bytes (1.0 MiB, from BLKGETSIZE64)' % MIB)

    def test_test_overrides_ignored_without_allow_file(self):
        # A stray PMUTEST_SYSFS claiming the (non-removable) loop device is
        # removable must not get it written: without --allow-file the real
        # /sys decides.
        big = self.write('big.img', b'\xa5' * (4 * MIB))
        dev = self.attach(big)
        fake = FakeSysfs(self.path('sys'))
        fake.disk(os.path.basename(dev), 4 * MIB)
        self.env.update(PMUTEST_SYSFS=fake.root, PMUTEST_MOUNTS=self.write('mounts', ''),
                        PMUTEST_SWAPS=self.write('swaps', 'Filename\n'))
        rc, err = self.run_tool('--dev', dev, '--image', self.image, '--yes')
        self.assertRefused(rc, err, 'is not a removable disk')
        with open(big, 'rb') as f:
            self.assertEqual(f.read(), b'\xa5' * (4 * MIB))

    def test_loop_verify_detects_corruption(self):
        rc, err = self.run_tool('--dev', self.dev, '--image', self.image, '--force', '--yes')
        self.assertEqual(rc, 0, err)
        fd = os.open(self.dev, os.O_RDWR)
        try:
            os.pwrite(fd, bytes([self.image_bytes[4096] ^ 0xFF]), 4096)
            os.fsync(fd)
        finally:
            os.close(fd)
        rc, err = self.run_tool('--dev', self.dev, '--image', self.image, '--verify-only')
        self.assertEqual(rc, 1, err)
        self.assertIn('first difference at byte 4096', err)

