"""Debian packages for the harnesses, fetched without touching the machine's
apt configuration.

Each suite gets a private apt configuration under ``~/.cache/pmutest/apt/<suite>/``
(its own sources.list, lists, cache, preferences and an empty dpkg status:
nothing of the machine's apt or dpkg state is read or written), derived from the system's mirror ``http://deb.debian.org/debian``
(``.../debian-security`` for bookworm-security) and verified with
``/usr/share/keyrings/debian-archive-keyring.gpg``. Its package lists are
fetched by ``apt-get update`` when missing, older than a day, or on demand.
Downloaded .deb files are cached in ``~/.cache/pmutest/debs/`` by their pool
file name, so a version is fetched once.

API (stable; other harnesses import it):

``SUITES``
    the suites known: bookworm, bookworm-updates, bookworm-security,
    bookworm-backports, trixie, trixie-backports, sid.
``update(suite, force=False)``
    refresh the suite's private lists (cached for a day); returns the
    configuration directory.
``apt_get(suite, *args)`` / ``apt_cache(suite, *args)``
    run apt-get / apt-cache under the suite's private configuration, return
    stdout (raise DebianError on failure).
``version(pkg, suite)``
    the candidate version of a package in the suite, or None.
``download(pkgs, suite="bookworm")``
    the cached .deb paths (one per package, same order), downloading what is
    missing. A package may be given as ``name=version``.
``extract(deb, dest)``
    ``dpkg-deb -x`` the package into dest (created); returns dest.
``extracted(pkg, suite="bookworm")``
    download and extract into a cache directory keyed by the .deb's name;
    returns (deb path, directory).
``newest_linux_image(suite="bookworm", series=None)``
    the name of the newest ``linux-image-<abi>-amd64`` (signed) package of
    the suite, else the ``-unsigned`` one, of the series (e.g. "6.1") if
    given; for Debian the modules are in the same package.
``library_roots(pkg, suite="bookworm", fallback="bookworm")``
    the extracted trees of the lib* packages pkg depends on, transitively
    (for copy_with_libraries' lib_roots).
``kernel_files(root)``
    (vmlinuz path, kernel release) of an extracted linux-image.
``copy_with_libraries(binary, root, dest=None, lib_roots=())``
    copy a dynamically linked binary into root (at dest, default its own path
    under root) with the closure of its DT_NEEDED libraries and its program
    interpreter, each looked up first in the extracted package trees of
    lib_roots, else on the host; returns the list of paths written (relative
    to root).

Command line (for debugging):
    python3 -m harness.debian [--suite S] [--refresh] update
    python3 -m harness.debian [--suite S] version PKG...
    python3 -m harness.debian [--suite S] download PKG...
    python3 -m harness.debian [--suite S] extract PKG DEST
    python3 -m harness.debian [--suite S] linux-image
    python3 -m harness.debian closure BINARY ROOT [LIBROOT...]
"""
import argparse
import fcntl
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

MIRROR = "http://deb.debian.org/debian"
SECURITY_MIRROR = "http://deb.debian.org/debian-security"
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
SUITES = ("bookworm", "bookworm-updates", "bookworm-security",
          "bookworm-backports", "trixie", "trixie-backports", "sid")
MAX_AGE = 24 * 3600  # lists older than this are refreshed
ARCH = "amd64"

CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME")
                     or os.path.join(os.path.expanduser("~"), ".cache"),
                     "pmutest")
APT_DIR = os.path.join(CACHE, "apt")
DEB_DIR = os.path.join(CACHE, "debs")
EXTRACT_DIR = os.path.join(CACHE, "debs", "extracted")

# Where the host's libraries live (Debian's multiarch layout; /lib64 for the
# loader).
HOST_LIB_DIRS = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                 "/lib64", "/usr/lib64", "/lib", "/usr/lib")


class DebianError(Exception):
    """A private apt operation or a package file failed; the message says which."""


def _suite_dir(suite):
    if suite not in SUITES:
        raise DebianError(f"unknown suite {suite!r} (known: {', '.join(SUITES)})")
    return os.path.join(APT_DIR, suite)


def _sources_line(suite):
    uri = SECURITY_MIRROR if suite.endswith("-security") else MIRROR
    return (f"Types: deb\nURIs: {uri}\nSuites: {suite}\nComponents: main\n"
            f"Architectures: {ARCH}\nSigned-By: {KEYRING}\n")


def _prepare(suite):
    """Create the suite's private directories and sources; return its dir."""
    top = _suite_dir(suite)
    for sub in ("etc/sources.list.d", "etc/preferences.d", "lists/partial",
                "cache/archives/partial"):
        os.makedirs(os.path.join(top, sub), exist_ok=True)
    sources = os.path.join(top, "etc", "sources.list.d", "private.sources")
    text = _sources_line(suite)
    if not os.path.exists(sources) or open(sources).read() != text:
        with open(sources, "w") as f:
            f.write(text)
    # An empty classic list: the machine's own /etc/apt/sources.list must not leak in.
    open(os.path.join(top, "etc", "sources.list"), "a").close()
    open(os.path.join(top, "status"), "a").close()
    return top


def _options(top):
    return [
        "-o", f"Dir::Etc::SourceList={top}/etc/sources.list",
        "-o", f"Dir::Etc::SourceParts={top}/etc/sources.list.d",
        "-o", f"Dir::Etc::Preferences={top}/etc/preferences",
        "-o", f"Dir::Etc::PreferencesParts={top}/etc/preferences.d",
        "-o", f"Dir::State::Lists={top}/lists",
        # An empty dpkg status: what the machine has installed is not a candidate.
        "-o", f"Dir::State::status={top}/status",
        "-o", f"Dir::Cache={top}/cache",
        "-o", f"APT::Architecture={ARCH}",
        "-o", "APT::Architectures::=amd64",
        "-o", "APT::Sandbox::User=root",
        "-o", "Acquire::Languages=none",
    ]


class _Lock:
    """An exclusive flock on a file of the suite's directory, so that several
    harnesses (or engineers) updating the same suite at once take turns."""

    def __init__(self, top):
        self.path = os.path.join(top, ".lock")

    def __enter__(self):
        self.f = open(self.path, "a")
        fcntl.flock(self.f, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.f, fcntl.LOCK_UN)
        self.f.close()


def _run(cmd, cwd=None):
    env = dict(os.environ, LC_ALL="C", DEBIAN_FRONTEND="noninteractive")
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise DebianError(f"{' '.join(cmd[:1] + cmd[-3:])}: exit {p.returncode}: "
                          + (p.stderr.strip().splitlines() or ["(no message)"])[-1])
    return p.stdout


def _stamp(top):
    return os.path.join(top, "updated")


def update(suite, force=False):
    """apt-get update the suite's private configuration when its lists are
    missing, older than MAX_AGE or force is set. Returns the suite's dir."""
    top = _prepare(suite)
    with _Lock(top):
        stamp = _stamp(top)
        fresh = (os.path.exists(stamp)
                 and time.time() - os.path.getmtime(stamp) < MAX_AGE)
        if fresh and not force:
            return top
        try:
            _run(["apt-get", "-q", *_options(top), "update"])
        except DebianError:
            # Stale lists still name files the mirror may keep; use them.
            if os.path.exists(stamp):
                print(f"harness.debian: update of {suite} failed, using lists of "
                      f"{time.ctime(os.path.getmtime(stamp))}", file=sys.stderr)
                return top
            raise
        with open(stamp, "w") as f:
            f.write(time.strftime("%Y-%m-%dT%H:%M:%SZ\n", time.gmtime()))
    return top


def apt_get(suite, *args):
    top = update(suite)
    return _run(["apt-get", "-q", *_options(top), *args])


def apt_cache(suite, *args):
    top = update(suite)
    return _run(["apt-cache", *_options(top), *args])


def _fields(stanza):
    out = {}
    for line in stanza.splitlines():
        m = re.match(r"^([A-Za-z0-9-]+):\s*(.*)$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


@functools.lru_cache(maxsize=None)
def _show(pkg, suite):
    """The fields of the candidate (or of name=version) in the suite."""
    try:
        text = apt_cache(suite, "show", "--no-all-versions", pkg)
    except DebianError:
        return None
    stanza = text.strip().split("\n\n")[0]
    return _fields(stanza) if stanza else None


def _show_many(names, suite):
    """{name: fields} of the candidates of names in the suite, in one
    apt-cache run (names the suite lacks are left out)."""
    top = update(suite)
    env = dict(os.environ, LC_ALL="C")
    p = subprocess.run(["apt-cache", *_options(top), "show", "--no-all-versions",
                        *names], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    out = {}
    for stanza in p.stdout.split("\n\n"):
        f = _fields(stanza)
        if "Package" in f:
            out.setdefault(f["Package"], f)
    return out


def version(pkg, suite="bookworm"):
    f = _show(pkg, suite)
    return f.get("Version") if f else None


def download(pkgs, suite="bookworm"):
    """Cached .deb paths of pkgs (names or name=version) from the suite."""
    if isinstance(pkgs, str):
        pkgs = [pkgs]
    os.makedirs(DEB_DIR, exist_ok=True)
    paths = []
    for pkg in pkgs:
        f = _show(pkg, suite)
        if not f or "Filename" not in f:
            raise DebianError(f"no package {pkg} in {suite}")
        paths.append(_deb_for(f, suite))
    return paths


def _deb_for(f, suite):
    """The cached .deb of a package's apt-cache fields, downloaded if missing."""
    path = os.path.join(DEB_DIR, os.path.basename(f["Filename"]))
    if not os.path.exists(path):
        with tempfile.TemporaryDirectory(dir=DEB_DIR) as tmp:
            name = f["Package"] + "=" + f["Version"]
            _run(["apt-get", "-q", *_options(update(suite)), "download",
                  name], cwd=tmp)
            got = os.listdir(tmp)
            if len(got) != 1:
                raise DebianError(f"apt-get download {name}: got {got}")
            os.replace(os.path.join(tmp, got[0]), path)
    return path


def extract(deb, dest):
    os.makedirs(dest, exist_ok=True)
    _run(["dpkg-deb", "-x", deb, dest])
    return dest


def extracted(pkg, suite="bookworm"):
    """Download pkg and extract it once into the cache; (deb, directory)."""
    return _extracted_deb(download([pkg], suite)[0])


def _extracted_deb(deb):
    """Extract deb once. Harnesses run side by side (boot-matrix runs the
    kexec rows in parallel) ask for the same package at the same moment:
    they take turns on the cache's lock, and the tree is extracted aside
    and renamed into place, so nobody sees, or removes, a half-made one."""
    dest = os.path.join(EXTRACT_DIR, os.path.basename(deb)[:-len(".deb")])
    done = dest + ".done"
    if os.path.exists(done):
        return deb, dest
    os.makedirs(EXTRACT_DIR, exist_ok=True)
    with _Lock(EXTRACT_DIR):
        if not os.path.exists(done):
            shutil.rmtree(dest, ignore_errors=True)
            tmp = tempfile.mkdtemp(dir=EXTRACT_DIR, prefix=".part-")
            try:
                extract(deb, tmp)
                os.rename(tmp, dest)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            open(done, "w").close()
    return deb, dest


def library_roots(pkg, suite="bookworm", fallback="bookworm"):
    """Extracted trees of the shared-library packages (lib*) that pkg
    depends on, transitively (the first of each alternative), each taken
    from the suite or else from fallback: the lib_roots that make
    copy_with_libraries independent of what the host has installed."""
    roots, seen, level = [], {pkg}, [pkg]
    while level:
        found = _show_many(level, suite)
        rest = [n for n in level if n not in found]
        if rest and fallback != suite:
            found.update((n, (f, fallback)) for n, f in _show_many(rest, fallback).items())
        found = {n: (v if isinstance(v, tuple) else (v, suite)) for n, v in found.items()}
        missing = [n for n in level if n not in found]
        if missing:
            raise DebianError(f"no package {', '.join(missing)} in {suite} or {fallback}")
        nxt = []
        for name in level:
            f, where = found[name]
            if name != pkg:
                roots.append(_extracted_deb(_deb_for(f, where))[1])
            for dep in (f.get("Pre-Depends", "") + "," + f.get("Depends", "")).split(","):
                dep = dep.split("|")[0].strip().split(" ")[0].split(":")[0]
                if dep.startswith("lib") and dep not in seen:
                    seen.add(dep)
                    nxt.append(dep)
        level = nxt
    return roots


def _compare_versions(a, b):
    if a == b:
        return 0
    r = subprocess.run(["dpkg", "--compare-versions", a, "lt", b])
    return -1 if r.returncode == 0 else 1


def newest_linux_image(suite="bookworm", series=None):
    """The newest linux-image-<abi>-amd64 package of the suite (the signed
    one if the suite has it, else linux-image-<abi>-amd64-unsigned); with
    series (e.g. "6.1"), the newest whose version is of that series."""
    names = apt_cache(suite, "pkgnames", "linux-image-").split()
    # 6.1.0-56-amd64 (bookworm), not metapackages (linux-image-6.12-amd64), 6.12.48+deb13-amd64 (trixie), 6.12.12+bpo-amd64
    pat = re.compile(r"^linux-image-(\d+\.\d+\.\d+[^-]*(?:-\d[^-]*)?)-amd64(-unsigned)?$")
    cands = {}
    for n in names:
        m = pat.match(n)
        if not m:
            continue
        v = version(n, suite)
        if v and (not series or v.split(":")[-1].startswith(series + ".")):
            cands[n] = v
    if not cands:
        raise DebianError(f"no linux-image-*-amd64 {series or ''} in {suite}")
    best = max(cands.values(), key=functools.cmp_to_key(_compare_versions))
    same = sorted(n for n, v in cands.items() if v == best)
    signed = [n for n in same if not n.endswith("-unsigned")]
    return (signed or same)[0]


def kernel_files(root):
    """(vmlinuz path, release) of an extracted linux-image package."""
    boot = os.path.join(root, "boot")
    for name in sorted(os.listdir(boot)):
        if name.startswith("vmlinuz-"):
            return os.path.join(boot, name), name[len("vmlinuz-"):]
    raise DebianError(f"no boot/vmlinuz-* in {root}")


def _elf_deps(path):
    """(interpreter or None, [DT_NEEDED], [RUNPATH dirs]) of an ELF file."""
    out = _run(["readelf", "-W", "-l", "-d", path])
    interp = re.search(r"\[Requesting program interpreter: ([^\]]+)\]", out)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
    runpath = []
    for m in re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[([^\]]+)\]", out):
        runpath += [d for d in m.split(":") if d and "$ORIGIN" not in d]
    return (interp.group(1) if interp else None), needed, runpath


def _find_lib(name, lib_roots, extra_dirs):
    """(source path, path inside the image) of a library, looked up in the
    extracted trees first, then on the host."""
    dirs = list(extra_dirs) + list(HOST_LIB_DIRS)
    for root in lib_roots:
        for d in dirs:
            p = os.path.join(root, d.lstrip("/"), name)
            if os.path.exists(p):
                return p, os.path.join(d, name)
    for d in dirs:
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p, p
    return None, None


def _copy(src, root, rel):
    dst = os.path.join(root, rel.lstrip("/"))
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if os.path.lexists(dst):
        os.unlink(dst)
    shutil.copy(os.path.realpath(src), dst)  # the file, not a symlink to it
    return rel.lstrip("/")


def copy_with_libraries(binary, root, dest=None, lib_roots=()):
    """Copy binary into root (at dest, default the binary's own path) with
    its libraries and loader; returns the paths written, relative to root."""
    written = [_copy(binary, root, dest or binary)]
    todo, seen = [binary], set()
    while todo:
        elf = todo.pop()
        interp, needed, runpath = _elf_deps(elf)
        if interp and interp not in seen:
            seen.add(interp)
            src, _ = _find_lib(os.path.basename(interp), lib_roots,
                               [os.path.dirname(interp)])
            if not src:
                raise DebianError(f"{elf}: no program interpreter {interp}")
            written.append(_copy(src, root, interp))
        for name in needed:
            if name in seen:
                continue
            seen.add(name)
            src, rel = _find_lib(name, lib_roots, runpath)
            if not src:
                raise DebianError(f"{elf}: library {name} not found in "
                                  f"{list(lib_roots)} nor on the host")
            written.append(_copy(src, root, rel))
            todo.append(src)
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m harness.debian",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", default="bookworm", choices=SUITES)
    ap.add_argument("--refresh", action="store_true",
                    help="apt-get update even if the lists are fresh")
    ap.add_argument("command", choices=("update", "version", "download",
                                        "extract", "linux-image", "closure"))
    ap.add_argument("args", nargs="*")
    a = ap.parse_args(argv)
    try:
        if a.command == "closure":
            if len(a.args) < 2:
                ap.error("closure BINARY ROOT [LIBROOT...]")
            for p in copy_with_libraries(a.args[0], a.args[1], lib_roots=a.args[2:]):
                print(p)
            return 0
        update(a.suite, force=a.refresh)
        if a.command == "update":
            print(_suite_dir(a.suite))
        elif a.command == "version":
            for p in a.args:
                print(p, version(p, a.suite) or "(none)")
        elif a.command == "download":
            for p in download(a.args, a.suite):
                print(p)
        elif a.command == "extract":
            if len(a.args) != 2:
                ap.error("extract PKG DEST")
            print(extract(download([a.args[0]], a.suite)[0], a.args[1]))
        elif a.command == "linux-image":
            n = newest_linux_image(a.suite)
            print(n, version(n, a.suite))
    except DebianError as e:
        print(f"harness.debian: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
