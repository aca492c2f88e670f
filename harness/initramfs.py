"""Initramfs images for the harnesses: a gzip'd newc cpio, written by this
module (no cpio tool), the same bytes for the same inputs.

API (stable; other harnesses import it):

``Image()``
    an image being built, a map of paths to entries:
    ``add_dir(path)``, ``add_file(path, data=None, src=None, mode=0o644)``
    (bytes or str data, or a host file's contents), ``add_symlink(path,
    target)``, ``add_node(path, major, minor, char=True)`` (a device node,
    written without root), ``add_tree(src_dir, prefix="/")`` (a host
    directory, symlinks kept), ``add_init(script)`` (``/init``, mode 0755),
    ``write(path)`` (parents created for every entry; entries sorted, every
    time and owner 0, gzip mtime 0).
``busybox_root(busybox, init, image=None)``
    a minimal root: busybox (the static binary, e.g. from Debian's
    busybox-static ``bin/busybox``) at ``/bin/busybox``, ``/dev/console``,
    the usual mount points, and init as ``/init``. The init script should
    start with ``INIT_PRELUDE`` (shebang, ``busybox --install -s``, PATH,
    proc/sys/dev/tmp mounts).
``add_modules(image, kernel_root, release, names)``
    copy the kernel modules names (e.g. ``["msr"]``) and every module they
    depend on (modules.dep) from an extracted linux-image into
    ``/lib/modules/<release>/``, decompressed (.ko.xz, .ko.zst, .ko.gz) so
    that busybox's insmod loads them; returns their image paths in load
    order (dependencies first), for ``insmod`` lines in /init.
``insmod_lines(paths)``
    those ``insmod`` lines.
"""
import gzip
import io
import lzma
import os
import stat
import subprocess

INIT_PRELUDE = """#!/bin/busybox sh
/bin/busybox --install -s
export PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME=/root
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
"""


class Image:
    """Entries of an initramfs, keyed by their path (no leading slash)."""

    def __init__(self):
        self.entries = {}  # path -> (mode, data bytes, rdev (major, minor))

    @staticmethod
    def _key(path):
        return os.path.normpath("/" + path).lstrip("/")

    def _parents(self, key):
        parts = key.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            d = "/".join(parts[:i])
            self.entries.setdefault(d, (stat.S_IFDIR | 0o755, b"", (0, 0)))

    def _put(self, path, mode, data=b"", rdev=(0, 0)):
        key = self._key(path)
        if not key:
            return
        self._parents(key)
        self.entries[key] = (mode, data, rdev)

    def add_dir(self, path, mode=0o755):
        self._put(path, stat.S_IFDIR | mode)

    def add_file(self, path, data=None, src=None, mode=0o644):
        if src is not None:
            with open(src, "rb") as f:
                data = f.read()
        if isinstance(data, str):
            data = data.encode()
        self._put(path, stat.S_IFREG | mode, data or b"")

    def add_symlink(self, path, target):
        self._put(path, stat.S_IFLNK | 0o777, target.encode())

    def add_node(self, path, major, minor, char=True, mode=0o600):
        kind = stat.S_IFCHR if char else stat.S_IFBLK
        self._put(path, kind | mode, b"", (major, minor))

    def add_init(self, script):
        self.add_file("/init", script, mode=0o755)

    def add_tree(self, src_dir, prefix="/"):
        for dirpath, dirnames, filenames in os.walk(src_dir):
            dirnames.sort()
            rel = os.path.relpath(dirpath, src_dir)
            base = os.path.join(prefix, "" if rel == "." else rel)
            self.add_dir(base, stat.S_IMODE(os.lstat(dirpath).st_mode))
            for name in sorted(dirnames + filenames):
                p = os.path.join(dirpath, name)
                st = os.lstat(p)
                if stat.S_ISLNK(st.st_mode):
                    self.add_symlink(os.path.join(base, name), os.readlink(p))
                elif stat.S_ISREG(st.st_mode):
                    self.add_file(os.path.join(base, name), src=p,
                                  mode=stat.S_IMODE(st.st_mode))

    def cpio(self):
        """The uncompressed newc archive (kernel's
        Documentation/driver-api/early-userspace/buffer-format.rst)."""
        out = io.BytesIO()

        def entry(ino, name, mode, data, rdev, nlink):
            nb = name.encode() + b"\0"
            hdr = "070701" + "".join("%08X" % v for v in (
                ino, mode, 0, 0, nlink, 0, len(data), 0, 0,
                rdev[0], rdev[1], len(nb), 0))
            out.write(hdr.encode() + nb)
            out.write(b"\0" * (-(110 + len(nb)) % 4))
            out.write(data)
            out.write(b"\0" * (-len(data) % 4))

        for ino, key in enumerate(sorted(self.entries), start=1):
            mode, data, rdev = self.entries[key]
            entry(ino, key, mode, data, rdev, 2 if stat.S_ISDIR(mode) else 1)
        entry(0, "TRAILER!!!", 0, b"", (0, 0), 1)
        return out.getvalue()

    def write(self, path):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0,
                               compresslevel=6) as gz:
                gz.write(self.cpio())
        os.replace(tmp, path)
        return path


def busybox_root(busybox, init, image=None):
    """A minimal busybox root with init as /init."""
    image = image or Image()
    image.add_file("/bin/busybox", src=busybox, mode=0o755)
    image.add_symlink("/bin/sh", "busybox")
    for d in ("proc", "sys", "dev", "tmp", "root", "etc", "sbin", "usr/bin",
              "usr/sbin", "mnt", "run", "var"):
        image.add_dir(d)
    image.add_node("/dev/console", 5, 1)
    image.add_node("/dev/null", 1, 3, mode=0o666)
    image.add_file("/etc/passwd", "root:x:0:0:root:/root:/bin/sh\n")
    image.add_file("/etc/group", "root:x:0:\n")
    image.add_init(init)
    return image


def _decompress(path):
    if path.endswith(".xz"):
        with lzma.open(path) as f:
            return f.read(), path[:-3]
    if path.endswith(".gz"):
        with gzip.open(path) as f:
            return f.read(), path[:-3]
    if path.endswith(".zst"):
        data = subprocess.run(["zstd", "-dc", path], check=True,
                              stdout=subprocess.PIPE).stdout
        return data, path[:-4]
    with open(path, "rb") as f:
        return f.read(), path


def _module_depends(data):
    """The depends= field of a module's .modinfo (NUL-separated key=value
    strings; Debian's packages ship no modules.dep, depmod makes it)."""
    i = data.find(b"\0depends=")
    if i < 0:
        return []
    value = data[i + len(b"\0depends="):data.index(b"\0", i + 1)]
    return [d for d in value.decode().split(",") if d]


def add_modules(image, kernel_root, release, names):
    """Copy modules names and their dependencies; image paths in load order."""
    mdir = os.path.join(kernel_root, "lib", "modules", release)
    if not os.path.isdir(mdir):
        mdir = os.path.join(kernel_root, "usr", "lib", "modules", release)
    by_name = {}
    for dirpath, _, files in os.walk(mdir):
        for f in files:
            if ".ko" in f:
                by_name[f.split(".ko")[0].replace("-", "_")] = os.path.join(dirpath, f)
    order, loaded = [], {}

    def visit(name):
        key = name.replace("-", "_")
        if key in loaded:
            return
        path = by_name.get(key)
        if not path:
            raise FileNotFoundError(f"no module {name} under {mdir}")
        data, rel = _decompress(path)
        loaded[key] = None
        for dep in _module_depends(data):
            visit(dep)
        dest = "/lib/modules/%s/%s" % (release, os.path.relpath(rel, mdir))
        image.add_file(dest, data)
        order.append(dest)

    for n in names:
        visit(n)
    return order


def insmod_lines(paths):
    return "".join(f"insmod {p}\n" for p in paths)
