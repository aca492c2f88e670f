#!/usr/bin/env python3
"""Check that the kernel's includes and calls only point down the house,
and that neither includes nor calls form a circle (in the kernel, in the
emulated PMU's model emu/model, and among the Python modules of the tools
and the harnesses).

The house is a stack of layers, top first; a layer is one or more folders.
LAYERS below is the one list of them: docs/HACKING.md draws it (checked:
its drawing runs through every layer in this order), README.md's folder
map names every folder of it (checked), and the Makefile's KERNEL_DIRS
must build every source of it (checked from the objects). A file may
include, or call into, files of its own layer or of a layer below, never
of a layer above. Files are grouped into rooms (a .c, .h or .S file with
the files of the same name beside it: pmu/event.c and arch/x86/lapic.h
are one room), and the room graphs must have no circle, inside a layer
too.

Calls are measured, not read from the sources: each object file's symbol
table (nm) says which global symbols it defines and which it references;
a reference from room A to a symbol room B defines is an edge A -> B. A
symbol that a header of a lower layer declares and a higher layer defines
is a seam (SEAMS: pmu/pmu_hw.h, implemented by pmu/kernel/hw.c): the edge
goes to the header's room, not up. The kernel's objects are the build's
(BUILD/k); emu/model is built as host objects (BUILD/layers/emu/model) the
way tests/host links it. The Python edges are the imports (ast) among the
modules of tools/pmutest and harness/, across both packages.

Usage: python3 -m pmutest.check_layers [--root DIR] [--build DIR] [--weights]
Prints every violation with the include line or symbol that makes it, then
"layers: N passed, M failed, K skipped" (ten checks: include direction,
include circles, reference direction (calls and data) with every kernel
source built, kernel call circles, the vendor-neutral core, emu/model
call circles, emu/model include circles, Python import circles,
README.md's folder map naming every top-level folder and every layer,
and docs/HACKING.md's drawing of LAYERS; a check whose objects are not
built is skipped and says so).

The vendor-neutral core (CORE, pmu/'s own files, not its subfolders) is
read from its objects too: no core object refers to a symbol a vendor
backend's object (VENDORS: pmu/intel, pmu/amd) defines, the backends
being reached only through the pmu_ops they register (PMU_BACKEND); no
name in a core object's symbol table or debug information (functions,
variables, parameters, types, struct members, enumerators: DWARF
DW_AT_name) has a vendor word (VENDOR_WORD: intel, amd, pebs, ia32 as a
part between underscores), or names a register only one vendor has
(VENDOR_REGISTER: offcore, omr, perf_caps, leaf23, perf_metrics, ...) or
an event-select field only one vendor has (VENDOR_FIELD: anythread,
host_only, guest_only, and a struct member named any), but
the vendor enumerators of enum pmu_vendor (VENDOR_ID_NAMES: the identity a
backend registers under); and no string
constant of a core object (its .rodata sections) holds a vendor's
register or name (VENDOR_TEXT: IA32_*, MSR_*, Intel, AMD, PEBS).
--weights prints the non-blank kernel C/asm lines
per folder (its own files, not its subfolders') instead, with each
folder's share. Exit 1 on a violation."""
import argparse
import ast
import os
import re
import subprocess
import sys

# Top first. Folders of one layer may include each other; lower layers
# never include higher ones. A longer folder path wins over a shorter one
# (pmu/kernel is its own layer above pmu).
LAYERS = [
    ('boot', 'tests'),   # how the machine starts, and the test suite it runs
                         # (tests/pmu: the PMU checks)
    ('modes',),          # applications of the driver: monitor, sample, workloads
    ('pmu/kernel',),     # the driver's kernel binding: register seam, PMI/LVT glue
    ('pmu/intel', 'pmu/amd'),  # the vendor backends, reached by the core only through pmu_ops
    ('pmu',),            # the PMU driver's vendor-neutral core, host-buildable
    ('arch',),           # the CPU (arch/x86) and the PC platform devices (arch/x86/pc)
    ('lib',),            # freestanding support, host-tested
]
# Not kernel code: host-side test programs, and the QEMU device model.
IGNORED = ('tests/host', 'emu')
# Contracts a lower layer declares and a higher one implements: header ->
# the folders whose definitions of its functions are seam ends.
SEAMS = {
    'pmu/pmu_hw.h': ('pmu/kernel', 'tests/host'),
}
# The emulated PMU's model, built as host objects for the call check.
MODEL = 'emu/model'
# The vendor-neutral core and the vendor backends it reaches only through
# pmu_ops (the vendor check, from the objects: see the docstring).
CORE = 'pmu'
VENDORS = ('pmu/intel', 'pmu/amd')
VENDOR_WORD = re.compile(r'(?i)(?:^|_)(intel|amd|pebs|ia32)(?=_|$|\d)')
VENDOR_ID_NAMES = re.compile(r'^PMU_VENDOR_[A-Z]+$')
# Registers only one vendor has, which the core reaches through its
# backend: Intel's offcore-response and OMR MSRs, IA32_PERF_CAPABILITIES,
# CPUID leaf 23H and PERF_METRICS (SDM vol. 3B, vol. 4; the architectural
# PMU's CPUID.0AH registers are the core's).
VENDOR_REGISTER = re.compile(r'(?i)(?:^|_)(offcore|omr|perf_caps|perf_capabilities|leaf23|perf_metrics)(?=_|$|\d)')
# Event-select fields only one vendor has, which a backend keeps in the
# event attr's own_config (its pmu_ops.terms): Intel's AnyThread
# (IA32_PERFEVTSELx bit 21, SDM vol. 3B "Architectural Performance
# Monitoring Version 3") and AMD's HostOnly/GuestOnly (PerfEvtSel bits
# 41/40, APM vol. 2, 13.2). As a part of any name, and a struct member
# named just "any" (a plain word for a local variable, not for a field).
VENDOR_FIELD = re.compile(r'(?i)(?:^|_)(any_?thread|host_?only|guest_?only)(?=_|$|\d)')
VENDOR_FIELD_MEMBER = re.compile(r'(?i)^any$')
VENDOR_TEXT = re.compile(r'\b(IA32_\w*|MSR_\w+|Intel|AMD|PEBS)\b')
# Call circles known and not yet broken, each a set of rooms: a circle
# inside one of these passes (and is printed as known); a new room in it,
# or a new circle, fails.  None is left.
KNOWN_CIRCLES = []
# The Python packages, for the import check: folder -> the name it is
# imported by (tools/ is on sys.path, the repository root for harness).
TOOLS_PACKAGE = 'tools/pmutest'
HARNESS_PACKAGE = 'harness'
PY_PACKAGES = {TOOLS_PACKAGE: 'pmutest', HARNESS_PACKAGE: 'harness'}
# The developers' guide, whose drawing of the house must show LAYERS in
# their order.
HACKING = 'docs/HACKING.md'
DECLARED = re.compile(r'\b([A-Za-z_]\w*)\s*\(')
SOURCE = re.compile(r'\.(c|h|S)$')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def tracked_files(root):
    """The repository's C and assembly files (git's list, untracked ones
    that are not ignored included; every file below root without git)."""
    try:
        out = subprocess.run(['git', '-C', root, 'ls-files', '--cached', '--others', '--exclude-standard'],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True,
                             universal_newlines=True).stdout.split('\n')
        names = [n for n in out if n and os.path.exists(os.path.join(root, n))]
    except (OSError, subprocess.CalledProcessError):
        names = [os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs]
    return sorted(n for n in names if SOURCE.search(n))


def tracked_dirs_files(root):
    """Every tracked file (not only sources), for the folder map."""
    try:
        out = subprocess.run(['git', '-C', root, 'ls-files'], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, check=True, universal_newlines=True).stdout
        return [n for n in out.split('\n') if n]
    except (OSError, subprocess.CalledProcessError):
        return []


def under(path, folder):
    return path == folder or path.startswith(folder + '/')


def layer_of(path):
    """(layer index, folder) by the longest folder that holds path; None
    outside every layer."""
    best = None
    for i, folders in enumerate(LAYERS):
        for f in folders:
            if under(path, f) and (best is None or len(f) > len(best[1])):
                best = (i, f)
    return best


def room_of(path):
    return os.path.splitext(path)[0]


def includes(root, path):
    """(line number, included path) of each quoted include, resolved like
    the build does: against the repository root (-I.), else beside the file."""
    found = []
    with open(os.path.join(root, path), errors='replace') as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            name = m.group(1)
            for cand in (name, os.path.normpath(os.path.join(os.path.dirname(path), name))):
                if os.path.isfile(os.path.join(root, cand)):
                    found.append((n, cand))
                    break
            else:
                found.append((n, None if name else name))
    return found


def circles(edges):
    """Strongly connected components with more than one room (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def symbols(objdir, root):
    """{source path: (defined globals as (name, is a function), referenced
    undefined symbols)} of
    every object below objdir (named <source>.o, as the Makefile does)
    whose source is in root."""
    objs = []
    for d, _, fs in os.walk(objdir):
        objs += [os.path.join(d, f) for f in fs if f.endswith('.o')]
    table = {}
    for obj in sorted(objs):
        src = os.path.relpath(obj, objdir)[:-2]
        if not os.path.isfile(os.path.join(root, src)):
            continue  # left over from a source that is gone
        out = subprocess.run(['nm', '-P', obj], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True, check=True).stdout
        defined, used = set(), set()
        for line in out.split('\n'):
            parts = line.split()
            if len(parts) < 2:
                continue
            name, kind = parts[0], parts[1]
            if kind == 'U':
                used.add(name)
            elif kind.isupper() or kind in 'vw':
                defined.add((name, kind in 'TW'))  # (name, is a function)
        table[src] = (defined, used)
    return table


def seam_symbols(root):
    """{symbol: seam header} for the functions SEAMS' headers declare."""
    out = {}
    for header in SEAMS:
        with open(os.path.join(root, header), errors='replace') as f:
            text = re.sub(r'/\*.*?\*/', ' ', f.read(), flags=re.S)
        for name in DECLARED.findall(text):
            out[name] = header
    return out


def call_graph(table, seams=None, calls_only=True):
    """(edges {room: {room}}, why {(a, b): symbol}) of the symbol
    references (to functions only: calls; or to data too); a seam
    symbol's edge goes to its header's room."""
    seams = seams or {}
    owner = {}
    for src, (defined, _) in table.items():
        for name, func in defined:
            if func or not calls_only:
                owner.setdefault(name, src)
    edges, why = {}, {}
    for src, (_, used) in table.items():
        for name in sorted(used):
            if name in seams and any(under(owner.get(name, ''), f) for f in SEAMS[seams[name]]):
                target = seams[name]
            elif name in owner:
                target = owner[name]
            else:
                continue
            a, b = room_of(src), room_of(target)
            if a != b:
                edges.setdefault(a, set()).add(b)
                why.setdefault((a, b), name)
    return edges, why


def debug_names(obj):
    """{(DWARF tag, name)} of the named entries of obj's debug information."""
    out = subprocess.run(['readelf', '--wide', '--debug-dump=info', obj], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True, errors='replace', check=True).stdout
    names, tag = set(), None
    for line in out.split('\n'):
        m = re.search(r'Abbrev Number: \d+ \((DW_TAG_\w+)\)', line)
        if m:
            tag = m.group(1)[len('DW_TAG_'):]
            continue
        if tag and re.match(r'\s*<[0-9a-f]+>\s+DW_AT_name\s*:', line):
            names.add((tag, line.split()[-1]))  # "(strp) (offset: 0x12): name" or "(string) name"
    return names


def rodata_strings(obj):
    """The printable strings (4 characters or more) of obj's .rodata sections."""
    out = subprocess.run(['readelf', '--wide', '--section-headers', obj], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True, errors='replace', check=True).stdout
    sections = sorted(set(re.findall(r'\]\s+(\.rodata\S*)', out)))
    if not sections:
        return []
    args = ['readelf', '--wide'] + ['--string-dump=' + s for s in sections] + [obj]
    out = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                         errors='replace', check=True).stdout
    return [m.group(1) for m in re.finditer(r'^\s*\[\s*[0-9a-f]+\]\s+(.{4,})$', out, re.M)]


def vendor_names(objdir, table):
    """The vendor-neutral core's violations (see the docstring), one line
    each, from the core's objects below objdir and table (symbols())."""
    core = sorted(src for src in table if os.path.dirname(src) == CORE)
    owner = {}
    for src, (defined, _) in table.items():
        if any(under(src, v) for v in VENDORS):
            for name, _ in defined:
                owner.setdefault(name, src)
    out = []
    for src in core:
        defined, used = table[src]
        obj = os.path.join(objdir, src + '.o')
        for name in sorted(used):
            if name in owner:
                out.append('%s refers to %s, which the vendor backend %s defines: the core reaches a '
                           'backend only through its pmu_ops' % (src, name, owner[name]))
        syms = {n for n, _ in defined} | used
        named = {('symbol', n) for n in syms} | debug_names(obj)
        seen = set()
        for tag, name in sorted(named, key=lambda tn: (tn[1], tn[0])):
            if name in seen or VENDOR_ID_NAMES.match(name):
                continue
            if VENDOR_WORD.search(name):
                out.append('%s names %s (%s): a vendor name in the vendor-neutral core' % (src, name, tag))
            elif VENDOR_REGISTER.search(name):
                out.append('%s names %s (%s): a register of one vendor in the vendor-neutral core'
                           % (src, name, tag))
            elif VENDOR_FIELD.search(name) or (tag == 'member' and VENDOR_FIELD_MEMBER.match(name)):
                out.append('%s names %s (%s): an event-select field of one vendor in the vendor-neutral '
                           'core' % (src, name, tag))
            else:
                continue
            seen.add(name)
        for text in sorted(set(rodata_strings(obj))):
            m = VENDOR_TEXT.search(text)
            if m:
                out.append('%s holds the string "%s" (%s): a vendor register or name in the vendor-neutral '
                           'core' % (src, text, m.group(1)))
    return core, out


def python_imports(root, packages=None):
    """(edges, why) of the imports between the modules of the Python
    packages (PY_PACKAGES: tools/pmutest and harness, across both)."""
    packages = packages or PY_PACKAGES
    mods = {}  # (package name, module) -> its room
    for folder, pkg in packages.items():
        pkg_dir = os.path.join(root, folder)
        if os.path.isdir(pkg_dir):
            for f in sorted(os.listdir(pkg_dir)):
                if f.endswith('.py'):
                    mods[(pkg, f[:-3])] = folder + '/' + f[:-3]
    edges, why = {}, {}
    for (pkg, mod), room in sorted(mods.items()):
        with open(os.path.join(root, room + '.py'), errors='replace') as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ''
                if node.level == 1 and not base:
                    names = [pkg + '.' + a.name for a in node.names]
                elif node.level == 1:
                    names = [pkg + '.' + base]
                elif base in packages.values():
                    names = [base + '.' + a.name for a in node.names]
                else:
                    names = [base]
            for name in names:
                parts = name.split('.')
                target = mods.get((parts[0], parts[1])) if len(parts) >= 2 else None
                if target and target != room:
                    edges.setdefault(room, set()).add(target)
                    why.setdefault((room, target), 'line %d' % node.lineno)
    return edges, why


def model_includes(root, files):
    """(edges, why) of the quoted includes between emu/model's rooms."""
    edges, why = {}, {}
    for path in files:
        if not under(path, MODEL):
            continue
        for line, inc in includes(root, path):
            if inc and under(inc, MODEL) and room_of(inc) != room_of(path):
                edges.setdefault(room_of(path), set()).add(room_of(inc))
                why.setdefault((room_of(path), room_of(inc)), '%s:%d' % (path, line))
    return edges, why


def unbuilt_sources(files, kdir):
    """The kernel sources of a layer with no object in kdir: the Makefile's
    KERNEL_DIRS does not build their folder."""
    return ['%s: a source of layer %s/ that the Makefile does not build (add its folder to KERNEL_DIRS)'
            % (path, layer_of(path)[1]) for path in files
            if path.endswith(('.c', '.S')) and layer_of(path) and not any(under(path, i) for i in IGNORED)
            and not os.path.isfile(os.path.join(kdir, path + '.o'))]


def drawing_order(root):
    """Problems with docs/HACKING.md's drawing of the house (the first code
    block): the folders it names, top first, must run through every layer
    of LAYERS in LAYERS' order."""
    try:
        with open(os.path.join(root, HACKING), errors='replace') as f:
            text = f.read()
    except OSError:
        return ['%s: not found' % HACKING]
    m = re.search(r'^```\n(.*?)^```', text, re.M | re.S)
    if not m:
        return ['%s: no drawing of the house (a code block)' % HACKING]
    seen, last = [], None
    for word in re.findall(r'(?<![\w/])([a-z][\w/]*/)(?=\s|$)', m.group(1), re.M):
        layer = layer_of(word.rstrip('/'))
        if layer is None:
            return ['%s: the drawing names %s, in no layer of LAYERS' % (HACKING, word)]
        if seen and layer[0] < seen[-1]:
            return ['%s: the drawing puts %s below %s, which LAYERS puts under it' % (HACKING, word, last)]
        if not seen or seen[-1] != layer[0]:
            seen.append(layer[0])
        last = word
    return ['%s: the drawing does not show the layer %s/' % (HACKING, '/, '.join(LAYERS[i]))
            for i in range(len(LAYERS)) if i not in seen]


def folder_map(root, files):
    """Problems with README.md's folder map (the code block of "## Layout"):
    every top-level folder, every layer and every ignored folder must be
    in it, and every folder it names must exist."""
    try:
        with open(os.path.join(root, 'README.md'), errors='replace') as f:
            text = f.read()
    except OSError:
        return ['README.md: not found']
    m = re.search(r'^## Layout\n.*?^```\n(.*?)^```', text, re.M | re.S)
    if not m:
        return ['README.md: no "## Layout" section with a folder map']
    named = set()
    for line in m.group(1).split('\n'):
        first = re.match(r'^(\S.*?)(\s{2,}|$)', line)  # the folder column
        for word in re.split(r'[,\s]+', first.group(1) if first else ''):
            if word.endswith('/'):
                parts = word.rstrip('/').split('/')
                named |= {'/'.join(parts[:i]) for i in range(1, len(parts) + 1)}
    want = {n.split('/')[0] for n in files if '/' in n}
    want |= {f for layer in LAYERS for f in layer} | set(IGNORED) | {TOOLS_PACKAGE}
    out = ['README.md: the folder map does not name %s/' % f for f in sorted(want - named)]
    out += ['README.md: the folder map names %s/, which does not exist' % f for f in sorted(named)
            if not os.path.isdir(os.path.join(root, f))]
    return out


def report_circles(kind, loops, edges, why):
    for comp in loops:
        members = set(comp)
        links = ['%s -> %s (%s)' % (a, b, why[(a, b)]) for a in comp for b in sorted(edges.get(a, ()))
                 if b in members]
        print('circle of %s among %s: %s' % (kind, ', '.join(comp), '; '.join(links)))


def weights(root, files):
    """Non-blank lines of kernel C/asm per folder (a file counts for the
    folder it is in, not for the folders above it)."""
    per = {}
    for path in files:
        if any(under(path, i) for i in IGNORED) or layer_of(path) is None:
            continue
        top = os.path.dirname(path)
        with open(os.path.join(root, path), errors='replace') as f:
            per[top] = per.get(top, 0) + sum(1 for line in f if line.strip())
    total = sum(per.values())
    for top, n in sorted(per.items(), key=lambda kv: -kv[1]):
        print('%-14s %6d lines %5.1f%%' % (top + '/', n, 100.0 * n / total))
    print('%-14s %6d lines' % ('total', total))
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--root', default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    ap.add_argument('--build', default=None, help='the build folder (default ROOT/build)')
    ap.add_argument('--weights', action='store_true', help='print the kernel lines per top-level folder')
    args = ap.parse_args(argv)
    if args.build is None:
        args.build = os.path.join(args.root, 'build')
    files = tracked_files(args.root)
    if args.weights:
        return weights(args.root, files)

    upward, strays = [], []
    edges, why = {}, {}
    for path in files:
        if any(under(path, i) for i in IGNORED):
            continue
        mine = layer_of(path)
        if mine is None:
            strays.append('%s: in no layer of tools/pmutest/check_layers.py (add its folder to LAYERS)' % path)
            continue
        for line, inc in includes(args.root, path):
            if inc is None:
                strays.append('%s:%d: include not found' % (path, line))
                continue
            theirs = layer_of(inc)
            if theirs is None:
                continue
            if theirs[0] < mine[0]:
                upward.append('%s:%d includes %s: %s/ is a layer above %s/' % (path, line, inc, theirs[1],
                                                                               mine[1]))
            a, b = room_of(path), room_of(inc)
            if a != b:
                edges.setdefault(a, set()).add(b)
                why.setdefault((a, b), '%s:%d' % (path, line))
    loops = circles(edges)
    for msg in strays + upward:
        print(msg)
    report_circles('includes', loops, edges, why)
    results = [not (upward or strays), not loops]

    # Calls: the kernel's objects.
    kdir = os.path.join(args.build, 'k')
    if os.path.isdir(kdir):
        table = {src: syms for src, syms in symbols(kdir, args.root).items() if layer_of(src)}
        cedges, cwhy = call_graph(table, seam_symbols(args.root))
        _, rwhy = call_graph(table, seam_symbols(args.root), calls_only=False)
        up = []
        for (a, b), name in sorted(rwhy.items()):
            la, lb = layer_of(a), layer_of(b)
            if la and lb and lb[0] < la[0]:
                up.append('%s refers to %s (%s): %s/ is a layer above %s/' % (a, b, name, lb[1], la[1]))
        unbuilt = unbuilt_sources(files, kdir)
        for msg in up + unbuilt:
            print(msg)
        cloops = circles(cedges)
        report_circles('calls', cloops, cedges, cwhy)
        results += [not (up or unbuilt), not cloops]
        print('layers: kernel: %d rooms, %d call edges, %d upward, %d call circle(s)'
              % (len({room_of(s) for s in table}), sum(len(v) for v in cedges.values()), len(up), len(cloops)))
        core, vendor = vendor_names(kdir, table)
        for msg in vendor:
            print(msg)
        results.append(bool(core) and not vendor)
        print('layers: %s/ core: %d objects, %d vendor name(s) or reference(s)' % (CORE, len(core), len(vendor)))
    else:
        print('layers: SKIP: calls: no kernel objects in %s (make kernel builds them)' % kdir)
        results += [None, None, None]

    # Calls: emu/model as host objects.
    mdir = os.path.join(args.build, 'layers')
    if os.path.isdir(os.path.join(mdir, MODEL)):
        mtable = symbols(mdir, args.root)
        medges, mwhy = call_graph(mtable)
        mloops = circles(medges)
        known = [c for c in mloops if any(set(c) <= k for k in KNOWN_CIRCLES)]
        mloops = [c for c in mloops if c not in known]
        for comp in known:
            print('layers: known call circle (KNOWN_CIRCLES), %d rooms: %s' % (len(comp), ', '.join(comp)))
        report_circles('calls', mloops, medges, mwhy)
        results.append(not mloops)
        print('layers: %s: %d rooms, %d call edges, %d call circle(s), %d known'
              % (MODEL, len(mtable), sum(len(v) for v in medges.values()), len(mloops), len(known)))
    else:
        print('layers: SKIP: calls: no %s objects in %s (make layer-check builds them)' % (MODEL, mdir))
        results.append(None)

    # Includes: emu/model (QEMU code, no kernel layer, but no circle).
    iedges, iwhy = model_includes(args.root, files)
    iloops = circles(iedges)
    report_circles('includes', iloops, iedges, iwhy)
    results.append(not iloops)
    print('layers: %s: %d include edges, %d include circle(s)'
          % (MODEL, sum(len(v) for v in iedges.values()), len(iloops)))

    # Imports: the tools' package and the harnesses, across both.
    pedges, pwhy = python_imports(args.root)
    ploops = circles(pedges)
    report_circles('imports', ploops, pedges, pwhy)
    results.append(not ploops)
    print('layers: %s: %d import edges, %d import circle(s)'
          % (' and '.join(p + '/' for p in PY_PACKAGES), sum(len(v) for v in pedges.values()), len(ploops)))

    # The one list of layers, drawn in docs/HACKING.md.
    drawn = drawing_order(args.root)
    for msg in drawn:
        print(msg)
    results.append(not drawn)

    # The newcomer's map of the folders.
    mapped = folder_map(args.root, files + tracked_dirs_files(args.root))
    for msg in mapped:
        print(msg)
    results.append(not mapped)

    passed = sum(1 for r in results if r is True)
    failed = sum(1 for r in results if r is False)
    skipped = sum(1 for r in results if r is None)
    print('layers: %d passed, %d failed, %d skipped' % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
