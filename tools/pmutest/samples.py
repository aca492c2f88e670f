"""Decode the "# sample: <hex>" lines of a pmutest serial log into a report:
samples and lost records per CPU, the most frequent RIPs resolved to kernel
symbols (from `nm -n` of build/pmutest.elf), how many were precise (PEBS),
and the most frequent branches of the samples' branch stacks (LBRs).

The record layout is the ABI in lib/ringbuf.h (struct rb_header, struct
rb_lost) and pmu/sample_record.h (struct pmu_sample); the line format is described
in pmu/sample_record.h. Exit status: 0, or 1 if any sample line was malformed, or
2 on a usage error (unreadable log, nm failure)."""
import argparse
import bisect
import collections
import json
import os
import re
import struct
import subprocess
import sys

# enum rb_record_type and the LOST misc values (lib/ringbuf.h).
RB_RECORD_LOST = 1
RB_RECORD_SAMPLE = 2
RB_LOST_DROPPED = 0
RB_LOST_OVERWRITTEN = 1

HEADER = struct.Struct('<IHH')                 # type, misc, size
LOST = struct.Struct('<IHHQQ')                 # header, id, lost
SAMPLE = struct.Struct('<IHHIIQQQII')          # header, cpu, idx, tsc, rip, period, nr, version
SAMPLE_VALUE = struct.Struct('<IIQ')           # idx, reserved, value
BRANCHES = struct.Struct('<II')                # nr, reserved
BRANCH = struct.Struct('<QQ')                  # from, to
PMU_SAMPLE_MAX_VALUES = 16
PMU_SAMPLE_MAX_BRANCHES = 16
PMU_SAMPLE_VERSION = 1                         # 0: before the misc sections
SAMPLE_MISC_USER = 1 << 0
SAMPLE_MISC_NMI = 1 << 1
SAMPLE_MISC_PRECISE = 1 << 2                   # rip from a PEBS record
SAMPLE_MISC_BRANCHES = 1 << 3                  # a branch stack follows values[]

LINE = re.compile(r'#\s*sample:\s*([0-9A-Fa-f]*)\s*$')
TEXT_SYMBOL_TYPES = set('TtWw')


class Malformed(Exception):
    pass


def decode_record(data):
    """Decode one record's bytes into a dict; raise Malformed if it is not
    a whole, self-consistent record."""
    if len(data) < HEADER.size:
        raise Malformed('%d bytes: shorter than a header' % len(data))
    rtype, misc, size = HEADER.unpack_from(data)
    if size != len(data):
        raise Malformed('header says %d bytes, line has %d' % (size, len(data)))
    if size % 8:
        raise Malformed('size %d is not a multiple of 8' % size)
    if rtype == RB_RECORD_LOST:
        if size != LOST.size:
            raise Malformed('LOST record of %d bytes, expected %d' % (size, LOST.size))
        _, _, _, rid, lost = LOST.unpack(data)
        return {'type': 'lost', 'misc': misc, 'id': rid, 'lost': lost}
    if rtype == RB_RECORD_SAMPLE:
        if size < SAMPLE.size:
            raise Malformed('sample of %d bytes, shorter than %d' % (size, SAMPLE.size))
        _, _, _, cpu, idx, tsc, rip, period, nr, version = SAMPLE.unpack_from(data)
        if nr > PMU_SAMPLE_MAX_VALUES:
            raise Malformed('sample with %d values, at most %d' % (nr, PMU_SAMPLE_MAX_VALUES))
        if version > PMU_SAMPLE_VERSION:
            raise Malformed('sample version %d, this decoder knows up to %d' % (version, PMU_SAMPLE_VERSION))
        fixed = SAMPLE.size + nr * SAMPLE_VALUE.size
        branches = []
        if version >= 1 and misc & SAMPLE_MISC_BRANCHES:
            if size < fixed + BRANCHES.size:
                raise Malformed('sample announces a branch stack but has %d bytes' % size)
            nbr, _ = BRANCHES.unpack_from(data, fixed)
            if nbr > PMU_SAMPLE_MAX_BRANCHES:
                raise Malformed('branch stack of %d entries, at most %d' % (nbr, PMU_SAMPLE_MAX_BRANCHES))
            for i in range(min(nbr, (size - fixed - BRANCHES.size) // BRANCH.size)):
                branches.append(BRANCH.unpack_from(data, fixed + BRANCHES.size + i * BRANCH.size))
            fixed += BRANCHES.size + nbr * BRANCH.size
        if size != fixed:
            raise Malformed('sample with %d values%s has %d bytes, expected %d'
                            % (nr, ' and %d branches' % len(branches) if branches else '', size, fixed))
        values = []
        for i in range(nr):
            vidx, _, value = SAMPLE_VALUE.unpack_from(data, SAMPLE.size + i * SAMPLE_VALUE.size)
            values.append((vidx, value))
        return {'type': 'sample', 'misc': misc, 'cpu': cpu, 'idx': idx, 'tsc': tsc,
                'rip': rip, 'period': period, 'values': values, 'version': version,
                'precise': bool(version >= 1 and misc & SAMPLE_MISC_PRECISE),
                'branches': [tuple(b) for b in branches]}
    return {'type': 'other', 'rtype': rtype, 'misc': misc, 'size': size}


def parse_log(lines):
    """Yield (line number, record dict or Malformed) for every sample line."""
    for number, line in enumerate(lines, 1):
        m = LINE.search(line.rstrip('\r\n'))
        if not m:
            continue
        digits = m.group(1)
        if not digits or len(digits) % 2:
            yield number, Malformed('%d hex digits: not whole bytes' % len(digits))
            continue
        try:
            yield number, decode_record(bytes.fromhex(digits))
        except Malformed as err:
            yield number, err


def counter_name(idx):
    """Counter index space of pmu/pmu.h: GP 0-31, fixed 32 + i."""
    return 'fixed%d' % (idx - 32) if idx >= 32 else 'gp%d' % idx


class Symbols:
    """Address -> symbol+offset from `nm -n` output (text symbols only)."""

    def __init__(self, nm_text):
        pairs = []
        for line in nm_text.splitlines():
            parts = line.split()
            if len(parts) < 3 or parts[1] not in TEXT_SYMBOL_TYPES:
                continue
            try:
                pairs.append((int(parts[0], 16), parts[2]))
            except ValueError:
                continue
        pairs.sort()
        self.addrs = [a for a, _ in pairs]
        self.names = [n for _, n in pairs]

    def __len__(self):
        return len(self.addrs)

    def lookup(self, addr):
        """(name, offset) of the nearest text symbol at or below addr, or
        (None, None) below the first one."""
        i = bisect.bisect_right(self.addrs, addr) - 1
        if i < 0:
            return None, None
        return self.names[i], addr - self.addrs[i]

    def describe(self, addr):
        name, off = self.lookup(addr)
        if name is None:
            return '?'
        return name if off == 0 else '%s+%#x' % (name, off)


def load_symbols(elf=None, nm_output=None, nm='nm'):
    if nm_output is not None:
        with open(nm_output) as f:
            return Symbols(f.read())
    if elf is None:
        return None
    proc = subprocess.run([nm, '-n', elf], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    if proc.returncode != 0:
        raise OSError('%s -n %s failed: %s' % (nm, elf, proc.stderr.strip()))
    return Symbols(proc.stdout)


def summarise(records):
    """Aggregate (line, record) pairs into the report's numbers."""
    s = {
        'samples': 0, 'lost': 0, 'other': 0, 'malformed': [],
        'cpus': collections.defaultdict(lambda: {
            'samples': 0, 'dropped': 0, 'overwritten': 0,
            'counters': collections.Counter(), 'user': 0, 'nmi': 0, 'precise': 0, 'stacks': 0}),
        'rips': collections.Counter(),
        'branches': collections.Counter(),
    }
    for number, rec in records:
        if isinstance(rec, Malformed):
            s['malformed'].append((number, str(rec)))
            continue
        if rec['type'] == 'sample':
            cpu = s['cpus'][rec['cpu']]
            cpu['samples'] += 1
            cpu['counters'][rec['idx']] += 1
            cpu['user'] += bool(rec['misc'] & SAMPLE_MISC_USER)
            cpu['nmi'] += bool(rec['misc'] & SAMPLE_MISC_NMI)
            cpu['precise'] += rec['precise']
            cpu['stacks'] += bool(rec['misc'] & SAMPLE_MISC_BRANCHES and rec['version'] >= 1)
            for edge in rec['branches']:
                s['branches'][edge] += 1
            s['rips'][rec['rip']] += 1
            s['samples'] += 1
        elif rec['type'] == 'lost':
            # pmutest gives each CPU's ring the CPU number as its id.
            cpu = s['cpus'][rec['id']]
            key = 'overwritten' if rec['misc'] == RB_LOST_OVERWRITTEN else 'dropped'
            cpu[key] += rec['lost']
            s['lost'] += rec['lost']
        else:
            s['other'] += 1
    return s


def top_symbols(summary, symbols):
    counts = collections.Counter()
    for rip, n in summary['rips'].items():
        name = symbols.lookup(rip)[0] if symbols else None
        counts[name if name is not None else '?'] += n
    return counts


def _ranked(counter, top):
    # Most frequent first; ties in key order so the report is deterministic.
    return sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:top]


def report(summary, symbols, top=10):
    """The human-readable report, as a list of lines."""
    out = []
    total = summary['samples']
    cpus = summary['cpus']
    out.append('samples: %d on %d CPUs, lost: %d, other records: %d, malformed lines: %d'
               % (total, sum(1 for c in cpus.values() if c['samples']), summary['lost'],
                  summary['other'], len(summary['malformed'])))
    for number, why in summary['malformed'][:10]:
        out.append('malformed line %d: %s' % (number, why))
    for cpu_id in sorted(cpus):
        c = cpus[cpu_id]
        ctrs = ', '.join('%s %d' % (counter_name(i), n) for i, n in sorted(c['counters'].items()))
        line = 'cpu %d: samples %d' % (cpu_id, c['samples'])
        if ctrs:
            line += ' (%s)' % ctrs
        line += ', lost: %d' % (c['dropped'] + c['overwritten'])
        if c['overwritten']:
            line += ' (dropped %d, overwritten %d)' % (c['dropped'], c['overwritten'])
        if c['user'] or c['nmi']:
            line += ', user %d, nmi %d' % (c['user'], c['nmi'])
        if c['precise'] or c['stacks']:
            line += ', precise %d, with branch stacks %d' % (c['precise'], c['stacks'])
        out.append(line)
    if not total:
        out.append('no samples in the log')
        return out
    if symbols is None:
        out.append('(no symbols: pass --elf build/pmutest.elf or --nm-output)')
    out.append('top RIPs:')
    out.append('  %7s %6s  %-18s  %s' % ('count', '%', 'rip', 'symbol'))
    for rip, n in _ranked(summary['rips'], top):
        out.append('  %7d %5.1f%%  %016x    %s' % (n, 100.0 * n / total, rip,
                                                  symbols.describe(rip) if symbols else '?'))
    if symbols is not None:
        out.append('top symbols:')
        out.append('  %7s %6s  %s' % ('count', '%', 'symbol'))
        for name, n in _ranked(top_symbols(summary, symbols), top):
            out.append('  %7d %5.1f%%  %s' % (n, 100.0 * n / total, name))
    if summary['branches']:
        out.append('top branches in the branch stacks:')
        out.append('  %7s  %s' % ('count', 'from -> to'))
        for (frm, to), n in _ranked(summary['branches'], top):
            out.append('  %7d  %016x %s -> %016x %s'
                       % (n, frm, symbols.describe(frm) if symbols else '?',
                          to, symbols.describe(to) if symbols else '?'))
    return out


def as_json(summary, symbols, top=10):
    cpus = {}
    for cpu_id, c in summary['cpus'].items():
        cpus[str(cpu_id)] = {
            'samples': c['samples'], 'lost': c['dropped'] + c['overwritten'],
            'dropped': c['dropped'], 'overwritten': c['overwritten'],
            'counters': {counter_name(i): n for i, n in c['counters'].items()},
            'user': c['user'], 'nmi': c['nmi'], 'precise': c['precise'], 'stacks': c['stacks'],
        }
    return {
        'samples': summary['samples'], 'lost': summary['lost'], 'other': summary['other'],
        'malformed': [{'line': n, 'why': w} for n, w in summary['malformed']],
        'cpus': cpus,
        'top_rips': [{'rip': '%#x' % rip, 'count': n,
                      'symbol': symbols.describe(rip) if symbols else None}
                     for rip, n in _ranked(summary['rips'], top)],
        'top_branches': [{'from': '%#x' % frm, 'to': '%#x' % to, 'count': n,
                          'from_symbol': symbols.describe(frm) if symbols else None,
                          'to_symbol': symbols.describe(to) if symbols else None}
                         for (frm, to), n in _ranked(summary['branches'], top)],
    }


def main(argv=None):
    ap = argparse.ArgumentParser(prog='pmutest-samples', description=__doc__.splitlines()[0])
    ap.add_argument('log', nargs='?', default='-', help='serial log (default: stdin)')
    ap.add_argument('--elf', help='kernel ELF for symbols (default: build/pmutest.elf if present)')
    ap.add_argument('--nm-output', help='use this saved `nm -n` output instead of running nm')
    ap.add_argument('--nm', default=os.environ.get('NM', 'nm'), help='nm program (default: $NM or nm)')
    ap.add_argument('--top', type=int, default=10, help='how many RIPs and symbols to list')
    ap.add_argument('--json', action='store_true', help='print the summary as JSON')
    args = ap.parse_args(argv)

    elf = args.elf
    if elf is None and args.nm_output is None and os.path.exists('build/pmutest.elf'):
        elf = 'build/pmutest.elf'
    try:
        symbols = load_symbols(elf, args.nm_output, args.nm)
        if args.log == '-':
            summary = summarise(parse_log(sys.stdin))
        else:
            with open(args.log, errors='replace') as f:
                summary = summarise(parse_log(f))
    except OSError as err:
        print('pmutest-samples: %s' % err, file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(as_json(summary, symbols, args.top), indent=2, sort_keys=True))
    else:
        print('\n'.join(report(summary, symbols, args.top)))
    return 1 if summary['malformed'] else 0

