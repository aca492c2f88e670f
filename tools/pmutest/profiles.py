"""Emulated-PMU profiles (emu/profiles.list) and the patched QEMU that runs
them (emu/qemu/build.sh --print-path).

profiles.list: one profile a line, `NAME KIND CPUARG [key=value ...]`, '#'
starts a comment; KIND is silicon, hypervisor or defect; CPUARG is what
follows -cpu (no spaces).
"""
import os
import subprocess
from dataclasses import dataclass, field

from . import REPO_ROOT

PROFILES = os.path.join(REPO_ROOT, 'emu', 'profiles.list')
EMU_QEMU_SCRIPT = os.path.join(REPO_ROOT, 'emu', 'qemu', 'build.sh')
KINDS = ('silicon', 'hypervisor', 'defect')


class ProfileError(Exception):
    pass


@dataclass
class Profile:
    name: str
    kind: str
    cpu: str
    keys: dict = field(default_factory=dict)
    lineno: int = 0


def parse_profiles(text, source=PROFILES):
    profiles = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        toks = raw.split('#', 1)[0].split()
        if not toks:
            continue
        if len(toks) < 3:
            raise ProfileError('%s:%d: want "NAME KIND CPUARG [key=value ...]", got %r'
                               % (source, lineno, raw.strip()))
        name, kind, cpu = toks[:3]
        if kind not in KINDS:
            raise ProfileError('%s:%d: kind %r is not one of %s' % (source, lineno, kind, ', '.join(KINDS)))
        keys = {}
        for tok in toks[3:]:
            key, sep, value = tok.partition('=')
            if not sep or not key:
                raise ProfileError('%s:%d: %r is not key=value' % (source, lineno, tok))
            keys[key] = value
        if any(p.name == name for p in profiles):
            raise ProfileError('%s:%d: profile %s listed twice' % (source, lineno, name))
        profiles.append(Profile(name, kind, cpu, keys, lineno))
    return profiles


def qemu_args(profile, root=REPO_ROOT):
    """More QEMU arguments a profile asks for: readconfig=PATH (relative to
    the repository) reads a QEMU config file, e.g. the sockets and the PCI
    functions of an emulated server uncore (emu/qemu/configs/)."""
    path = profile.keys.get('readconfig')
    if path is None:
        return []
    full = os.path.join(root, path)
    if not os.path.isfile(full):
        raise ProfileError('profile %s: readconfig=%s: no such file' % (profile.name, path))
    return ['-readconfig', full]


def load_profiles(path=PROFILES):
    try:
        with open(path) as f:
            return parse_profiles(f.read(), path)
    except OSError as e:
        raise ProfileError('cannot read the profile list %s: %s (the emulated PMU lives in emu/)'
                           % (path, e.strerror or e))


def find_profile(name, path=PROFILES):
    """The named profile; an unknown name is one line listing the known ones."""
    profiles = load_profiles(path)
    for p in profiles:
        if p.name == name:
            return p
    raise ProfileError('unknown profile %r; known: %s' % (name, ' '.join(p.name for p in profiles)
                                                         or '(none in %s)' % path))


def emulated_qemu(script=EMU_QEMU_SCRIPT, runner=subprocess.run):
    """The patched QEMU's path from `emu/qemu/build.sh --print-path`, which
    prints the cached binary or fails saying how to build it."""
    if not os.path.isfile(script):
        raise ProfileError('%s not found: this tree has no emulated-PMU QEMU' % script)
    try:
        proc = runner([script, '--print-path'], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                      text=True, errors='replace')
    except OSError as e:
        raise ProfileError('cannot run %s: %s' % (script, e))
    lines = [line.strip() for line in proc.stdout.splitlines() if line.strip()]
    if proc.returncode != 0 or not lines:
        said = (proc.stderr.strip() or proc.stdout.strip() or 'exit %d' % proc.returncode).splitlines()
        raise ProfileError('%s --print-path: %s' % (script, said[-1]))
    path = lines[-1]
    if not os.access(path, os.X_OK):
        raise ProfileError('%s --print-path names %s, which is not an executable' % (script, path))
    return path
