"""usb-write: write the hybrid pmutest ISO to a whole USB disk, read it back to
verify, and refuse anything that could destroy data the user still needs.

Usage:
  tools/usb-write --dev /dev/sdX [--image build/pmutest.iso] [--force] [--yes]
  tools/usb-write --dev /dev/sdX --verify-only      # compare only, write nothing
  make usb DEV=/dev/sdX [FORCE=1]

It refuses, with one line naming the reason and before opening the target for
writing: no --dev; a target that does not exist, is a directory, a character
device or anything but a block device (a regular file only with --allow-file);
a partition instead of a whole disk; a disk with a mounted partition, a swap
area or a holder (LVM, RAID, dm-crypt) on it; the disk holding /, /boot or
/boot/efi; a read-only disk; a non-removable disk unless --force; a disk
smaller than the image; a missing or empty image; no confirmation (it asks
unless --yes, and refuses instead of asking when stdin is not a terminal).

Exit status: 0 written and verified; 1 write/read error or verify mismatch;
2 usage error or refusal (nothing was written).

Environment (for tests only: read only together with --allow-file, so a
stray variable can never weaken the checks on a real disk):
  PMUTEST_SYSFS=DIR      sysfs root instead of /sys
  PMUTEST_MOUNTS=FILE    mount table instead of /proc/self/mounts + /proc/mounts
  PMUTEST_SWAPS=FILE     swap table instead of /proc/swaps
  PMUTEST_FAKE_DISKS=1   with --allow-file and PMUTEST_SYSFS set: a regular file
                         stands for the disk named like its basename, and gets
                         every check a real disk gets (so tests need no disks)
"""

import argparse
import errno
import fcntl
import hashlib
import os
import stat
import struct
import sys

EXIT_OK, EXIT_FAIL, EXIT_REFUSED = 0, 1, 2
CHUNK = 4 << 20

# Kernel interfaces (Linux Documentation/ABI/stable/sysfs-block):
# /sys/class/block/<dev>/{size,ro,removable,partition,holders,slaves};
# "size" counts 512-byte sectors whatever the logical block size;
# /sys/dev/block/MAJ:MIN links a device number to its directory
# (Documentation/ABI/stable/sysfs-dev). A partition is registered as a child
# of its disk's device (block/partitions/core.c), so its directory sits
# inside the disk's.
SECTOR = 512

# linux/fs.h: _IOR(0x12, 114, size_t) and _IO(0x12, 97).
BLKGETSIZE64 = 0x80081272
BLKFLSBUF = 0x1261

# Mount points whose disk is never a target, even with --force.
SYSTEM_MOUNTS = ('/', '/boot', '/boot/efi')


class Refused(Exception):
    """A reason not to write; str() is the one-line message."""


def say(msg):
    print('usb-write: ' + msg, file=sys.stderr, flush=True)


def human(n):
    if n < 1024:
        return '%d bytes' % n
    for unit in ('KiB', 'MiB', 'GiB', 'TiB'):
        n /= 1024.0
        if n < 1024 or unit == 'TiB':
            return '%.1f %s' % (n, unit)


# ---------------------------------------------------------------- system view

class System:
    """What the kernel says about block devices and their users, read from the
    (possibly fake) sysfs, mount and swap tables."""

    def __init__(self, env=None):
        env = os.environ if env is None else env
        self.sysfs = env.get('PMUTEST_SYSFS') or '/sys'
        self.fake_disks = bool(env.get('PMUTEST_FAKE_DISKS')) and self.sysfs != '/sys'
        mounts = env.get('PMUTEST_MOUNTS')
        self.mount_files = [mounts] if mounts else ['/proc/self/mounts', '/proc/mounts']
        self.swaps_file = env.get('PMUTEST_SWAPS') or '/proc/swaps'

    # --- sysfs

    def block_dir(self, name):
        return os.path.join(self.sysfs, 'class', 'block', name)

    def known(self, name):
        return bool(name) and os.path.isdir(self.block_dir(name))

    def attr(self, name, attr, base=None):
        """A sysfs attribute of block device name, stripped; None if absent."""
        path = os.path.join(base or self.block_dir(name), attr)
        try:
            with open(path) as f:
                return f.read().strip()
        except OSError:
            return None

    def is_partition(self, name):
        return os.path.exists(os.path.join(self.block_dir(name), 'partition'))

    def parent_disk(self, name):
        # A partition's sysfs directory sits inside its disk's
        # (/sys/devices/.../block/sdb/sdb1): the parent directory names the disk.
        return os.path.basename(os.path.dirname(os.path.realpath(self.block_dir(name))))

    def partitions(self, disk):
        d = self.block_dir(disk)
        try:
            entries = sorted(os.listdir(d))
        except OSError:
            return []
        return [e for e in entries if os.path.exists(os.path.join(d, e, 'partition'))]

    def listdir(self, name, sub):
        try:
            return sorted(os.listdir(os.path.join(self.block_dir(name), sub)))
        except OSError:
            return []

    def name_of_devnum(self, devnum):
        """Block device name for a dev_t, through /sys/dev/block/MAJ:MIN."""
        link = os.path.join(self.sysfs, 'dev', 'block', '%d:%d' % (os.major(devnum), os.minor(devnum)))
        if os.path.exists(link):
            return os.path.basename(os.path.realpath(link))
        return None

    def disks_under(self, name, seen=None):
        """The whole disks a block device lives on: a partition's parent, and
        through slaves/ the disks under device-mapper or md devices."""
        seen = set() if seen is None else seen
        if name in seen or not self.known(name):
            return set()
        seen.add(name)
        slaves = self.listdir(name, 'slaves')
        if slaves:
            out = set()
            for s in slaves:
                out |= self.disks_under(s, seen)
            return out
        return {self.parent_disk(name)} if self.is_partition(name) else {name}

    def name_of_path(self, path):
        """Block device name a path stands for, or None. A device node is
        looked up by its number, so /dev/disk/by-id/... and /dev/mapper/...
        names work; a path that does not exist (or a fake) by its basename."""
        real = os.path.realpath(path)
        try:
            st = os.stat(real)
        except OSError:
            st = None
        if st is not None and stat.S_ISBLK(st.st_mode):
            name = self.name_of_devnum(st.st_rdev)
            if name:
                return name
        base = os.path.basename(real)
        return base if self.known(base) else None

    def source_names(self, source):
        """Block devices behind a mount or swap source: a device node, or for
        a swap file the device its filesystem is on."""
        if not source.startswith('/'):
            return set()
        names = set()
        name = self.name_of_path(source)
        if name:
            names.add(name)
        try:
            st = os.stat(os.path.realpath(source))
            if stat.S_ISREG(st.st_mode):
                holder = self.name_of_devnum(st.st_dev)
                if holder:
                    names.add(holder)
        except OSError:
            pass
        return names

    # --- mount and swap tables

    @staticmethod
    def unescape(field):
        # /proc/mounts writes space, tab, newline and backslash as \ooo (fs/proc_namespace.c).
        out, i = [], 0
        while i < len(field):
            if field[i] == '\\' and i + 3 < len(field) and all(c in '01234567' for c in field[i + 1:i + 4]):
                out.append(chr(int(field[i + 1:i + 4], 8)))
                i += 4
            else:
                out.append(field[i])
                i += 1
        return ''.join(out)

    def mounts(self):
        """(source, mount point) pairs from every mount table; a table that
        cannot be read is a refusal, since silence would mean "nothing mounted"."""
        entries, readable = [], False
        for path in self.mount_files:
            try:
                with open(path) as f:
                    text = f.read()
            except OSError as e:
                if len(self.mount_files) == 1:
                    raise Refused('cannot read the mount table %s (%s)' % (path, e.strerror))
                continue
            readable = True
            for line in text.splitlines():
                fields = line.split()
                if len(fields) >= 2:
                    entries.append((self.unescape(fields[0]), self.unescape(fields[1])))
        if not readable:
            raise Refused('cannot read the mount table (%s)' % ' or '.join(self.mount_files))
        return entries

    def swaps(self):
        try:
            with open(self.swaps_file) as f:
                lines = f.read().splitlines()
        except OSError as e:
            if e.errno == errno.ENOENT and self.swaps_file == '/proc/swaps':
                return []       # a kernel without swap support has no table
            raise Refused('cannot read the swap table %s (%s)' % (self.swaps_file, e.strerror))
        return [self.unescape(line.split()[0]) for line in lines[1:] if line.split()]

    def system_disks(self):
        """{disk: mount point} for the disks holding /, /boot and /boot/efi,
        from the mount table and from the device numbers of those directories
        (the table may name root "/dev/root", which exists nowhere)."""
        held = {}
        for source, where in self.mounts():
            if where in SYSTEM_MOUNTS:
                for name in self.source_names(source):
                    for disk in self.disks_under(name):
                        held.setdefault(disk, where)
        for where in SYSTEM_MOUNTS:
            try:
                name = self.name_of_devnum(os.stat(where).st_dev)
            except OSError:
                continue
            for disk in self.disks_under(name) if name else ():
                held.setdefault(disk, where)
        return held


# ---------------------------------------------------------------- the checks

class Target:
    """What --dev resolved to."""

    def __init__(self, path, kind, name=None, size=None, removable=None, label=''):
        self.path, self.kind, self.name = path, kind, name
        self.size, self.removable, self.label = size, removable, label


def block_size(path):
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        buf = fcntl.ioctl(fd, BLKGETSIZE64, b'\0' * 8)
        return struct.unpack('Q', buf)[0]
    finally:
        os.close(fd)


def check_image(image):
    if not image:
        raise Refused('no image given (--image build/pmutest.iso; run "make iso" first)')
    try:
        st = os.stat(image)
    except OSError:
        raise Refused('image %s does not exist (run "make iso" first)' % image)
    if not stat.S_ISREG(st.st_mode):
        raise Refused('image %s is not a regular file' % image)
    if st.st_size == 0:
        raise Refused('image %s is empty' % image)
    return st.st_size


def resolve_target(sysm, dev, allow_file):
    """Classify --dev; refuse anything that is not a block device (or a
    regular file under --allow-file)."""
    if not dev:
        raise Refused('no target device given (--dev /dev/sdX, or make usb DEV=/dev/sdX)')
    try:
        st = os.stat(dev)
    except OSError:
        raise Refused('%s does not exist' % dev)
    if stat.S_ISDIR(st.st_mode):
        raise Refused('%s is a directory, not a disk' % dev)
    if stat.S_ISCHR(st.st_mode):
        raise Refused('%s is a character device, not a block device (a disk is /dev/sdX or /dev/mmcblkN)' % dev)
    if stat.S_ISREG(st.st_mode):
        if not allow_file:
            raise Refused('%s is a regular file, not a block device (files only with --allow-file)' % dev)
        if not sysm.fake_disks:
            return Target(dev, 'file', size=None, label='regular file')
        name = os.path.basename(os.path.realpath(dev))
        if not sysm.known(name):
            raise Refused('%s: no %s in %s' % (dev, name, sysm.block_dir(name)))
        return Target(dev, 'fake', name=name)
    if not stat.S_ISBLK(st.st_mode):
        raise Refused('%s is neither a block device nor a regular file' % dev)
    name = sysm.name_of_path(dev)
    if not name:
        raise Refused('%s: block device %d:%d not found under %s (is sysfs mounted?)'
                      % (dev, os.major(st.st_rdev), os.minor(st.st_rdev), sysm.sysfs))
    return Target(dev, 'block', name=name)


def check_partition(sysm, t):
    if sysm.is_partition(t.name):
        parent = sysm.parent_disk(t.name)
        raise Refused('%s is a partition (%s of disk %s), not a whole disk; give /dev/%s'
                      % (t.path, t.name, parent, parent))


def check_unused(sysm, t):
    """The disk must hold nothing the running system uses: not /, /boot or
    /boot/efi, no mounted filesystem, no swap, no holder on it or its
    partitions."""
    name = t.name
    system = sysm.system_disks()
    if name in system:
        raise Refused('%s is the disk holding %s' % (t.path, system[name]))
    for source, where in sysm.mounts():
        names = sysm.source_names(source)
        if name in names or os.path.realpath(source) == os.path.realpath(t.path):
            raise Refused('%s is mounted on %s; unmount it first' % (t.path, where))
        if any(name in sysm.disks_under(n) for n in names):
            raise Refused('%s has %s mounted on %s; unmount it first' % (t.path, source, where))
    for source in sysm.swaps():
        if any(name in sysm.disks_under(n) for n in sysm.source_names(source)):
            raise Refused('%s holds active swap %s; swapoff it first' % (t.path, source))
    for m in [name] + sysm.partitions(name):
        holders = sysm.listdir(m, 'holders')
        if holders:
            raise Refused('%s is in use: %s is held by %s (LVM, RAID or dm-crypt?)'
                          % (t.path, m, ', '.join(holders)))


def check_writable(sysm, t, force):
    name = t.name
    if sysm.attr(name, 'ro') == '1':
        raise Refused('%s is read-only (write-protect switch?)' % t.path)
    # /sys/block/<disk>/removable: the medium can be removed from the drive.
    # USB sticks normally say 1; some USB SSDs and card readers say 0.
    removable = sysm.attr(name, 'removable', os.path.join(sysm.sysfs, 'block', name))
    if removable is None:
        removable = sysm.attr(name, 'removable')
    t.removable = removable == '1'
    if not t.removable and not force:
        raise Refused('%s is not a removable disk (%s/block/%s/removable is %s); if it really is the '
                      'stick, add --force (make usb ... FORCE=1)'
                      % (t.path, sysm.sysfs, name, removable if removable is not None else 'missing'))


def check_size(sysm, t, image_size):
    sectors = sysm.attr(t.name, 'size')
    if sectors is not None and sectors.isdigit():
        t.size, how = int(sectors) * SECTOR, 'sysfs'
    elif t.kind == 'block':
        try:
            t.size, how = block_size(t.path), 'BLKGETSIZE64'
        except OSError as e:
            raise Refused('%s: cannot read its size (%s)' % (t.path, e.strerror))
    else:
        raise Refused('%s: no size in %s' % (t.path, sysm.block_dir(t.name)))
    if t.size < image_size:
        raise Refused('%s holds %d bytes (%s, from %s) but the image is %d bytes (%s)'
                      % (t.path, t.size, human(t.size), how, image_size, human(image_size)))
    vendor = sysm.attr(t.name, 'device/vendor') or ''
    model = sysm.attr(t.name, 'device/model') or ''
    t.label = ' '.join(x for x in (vendor, model, human(t.size),
                                   'removable' if t.removable else 'NOT removable') if x)


def confirm(t, image, image_size, assume_yes):
    if assume_yes:
        return
    if not sys.stdin or not sys.stdin.isatty():
        raise Refused('stdin is not a terminal, so nobody can confirm; pass --yes to write %s unattended'
                      % t.path)
    say('about to overwrite %s (%s) with %s (%s); everything on it will be lost.'
        % (t.path, t.label, image, human(image_size)))
    sys.stderr.write("usb-write: type 'yes' to continue: ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    if answer != 'yes':
        raise Refused('not confirmed (answer was %r)' % answer)


# ---------------------------------------------------------------- I/O

def progress(done, total, verb):
    if sys.stderr.isatty():
        sys.stderr.write('\rusb-write: %s %3d%%' % (verb, done * 100 // total))
        if done == total:
            sys.stderr.write('\n')
        sys.stderr.flush()


def drop_cache(fd, is_block):
    """Make the next read come from the medium, not the page cache: flush the
    device's buffers (what blockdev --flushbufs does) and drop cached pages."""
    if is_block:
        try:
            fcntl.ioctl(fd, BLKFLSBUF)
        except OSError:
            pass        # needs CAP_SYS_ADMIN; the fadvise below still helps
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    except OSError:
        pass


def write_image(image, t):
    """Copy the image to the start of the target and fsync it."""
    flags = os.O_WRONLY | os.O_CLOEXEC
    if t.kind == 'block':
        # O_EXCL without O_CREAT on a block device fails with EBUSY while
        # the kernel has it in use (mounted, held): open(2). The last line
        # of defence against a mount that appeared after the checks.
        flags |= os.O_EXCL
    try:
        fd = os.open(t.path, flags)
    except OSError as e:
        if e.errno == errno.EBUSY:
            raise Refused('%s is busy (exclusive open failed): something mounted or claimed it' % t.path)
        raise
    total = os.path.getsize(image)
    done = 0
    try:
        with open(image, 'rb') as src:
            while True:
                buf = src.read(CHUNK)
                if not buf:
                    break
                view = memoryview(buf)
                while view:
                    n = os.write(fd, view)
                    view = view[n:]
                done += len(buf)
                progress(done, total, 'writing')
        os.fsync(fd)
        drop_cache(fd, t.kind == 'block')
    finally:
        os.close(fd)
    return done


def verify(image, t):
    """sha256 of the image against the target's first len(image) bytes;
    returns (ok, image digest, target digest, first differing offset)."""
    total = os.path.getsize(image)
    want, got = hashlib.sha256(), hashlib.sha256()
    first_diff = None
    fd = os.open(t.path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        drop_cache(fd, t.kind == 'block')
        with open(image, 'rb') as src, os.fdopen(fd, 'rb', buffering=0, closefd=False) as dst:
            done = 0
            while done < total:
                a = src.read(min(CHUNK, total - done))
                if not a:
                    break
                b = b''
                while len(b) < len(a):
                    more = dst.read(len(a) - len(b))
                    if not more:
                        break
                    b += more
                want.update(a)
                got.update(b)
                if first_diff is None and a != b:
                    first_diff = done + next((i for i in range(min(len(a), len(b))) if a[i] != b[i]),
                                             min(len(a), len(b)))
                done += len(a)
                progress(done, total, 'verifying')
    finally:
        os.close(fd)
    return first_diff is None and want.digest() == got.digest(), want.hexdigest(), got.hexdigest(), first_diff


# ---------------------------------------------------------------- main

def parse_args(argv):
    p = argparse.ArgumentParser(prog='usb-write', description=__doc__.split('\n\n')[0],
                                epilog='\n\n'.join(__doc__.split('\n\n')[2:]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--dev', metavar='DEVICE', help='whole-disk block device, e.g. /dev/sdb')
    p.add_argument('--image', default='build/pmutest.iso', metavar='FILE',
                   help='image to write (default build/pmutest.iso)')
    p.add_argument('--force', action='store_true', help='accept a disk that says it is not removable')
    p.add_argument('--yes', action='store_true', help='do not ask for confirmation')
    p.add_argument('--verify-only', action='store_true',
                   help='write nothing: compare the image with the start of the device')
    p.add_argument('--allow-file', action='store_true', help='accept a regular file as target (tests)')
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    # The test overrides count only with --allow-file: a real run always
    # reads the real /sys and /proc tables.
    sysm = System(None if args.allow_file else {})
    try:
        image_size = check_image(args.image) if args.dev else None
        if args.dev and os.path.exists(args.dev) and os.path.samefile(args.image, args.dev):
            raise Refused('%s is the image itself' % args.dev)
        t = resolve_target(sysm, args.dev, args.allow_file)
        if t.kind != 'file':
            # A partition first, so the refusal names the disk the user
            # meant; reading is harmless, so --verify-only skips the checks
            # that only protect data from a write.
            check_partition(sysm, t)
            if not args.verify_only:
                check_unused(sysm, t)
                check_writable(sysm, t, args.force)
            check_size(sysm, t, image_size)
        if not args.verify_only:
            confirm(t, args.image, image_size, args.yes)
            write_image(args.image, t)
    except Refused as e:
        say('refused: %s; nothing written' % e)
        return EXIT_REFUSED
    except OSError as e:
        say('error: %s: %s' % (e.filename or args.dev, e.strerror))
        return EXIT_FAIL
    except KeyboardInterrupt:
        say('interrupted: %s may hold part of the image; write it again' % args.dev)
        return EXIT_FAIL

    try:
        ok, want, got, diff = verify(args.image, t)
    except OSError as e:
        say('error: reading back %s: %s' % (t.path, e.strerror))
        return EXIT_FAIL
    if not ok:
        say('verify FAILED: first %d bytes of %s have sha256 %s, the image %s; first difference at byte %s'
            % (image_size, t.path, got, want, diff))
        return EXIT_FAIL
    if args.verify_only:
        say('verified: first %d bytes of %s match %s (sha256 %s)' % (image_size, t.path, args.image, want))
        return EXIT_OK
    os.sync()
    say('wrote %d bytes to %s, read them back: sha256 %s matches; synced, safe to remove'
        % (image_size, t.path, want))
    return EXIT_OK

