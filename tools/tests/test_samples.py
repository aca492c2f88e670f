"""Unit tests of tools/pmutest-samples: record decoding against the layout
in pmu/sample_record.h, per-CPU and LOST accounting, symbol resolution from `nm -n`
output (fake and, when a toolchain is present, from a real tiny ELF), and
the command line.
Run: PYTHONPATH=tools python3 -m pmutest.testing tools/tests/test_samples.py"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

from pmutest import samples as ps

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(os.path.dirname(HERE), 'pmutest-samples')


# Also checked, from the C side, by tests/host/test_ringbuf.c
# (sample_record_hex_golden): cpu 3, idx 33 (fixed 1), tsc 0x0123456789abcdef,
# rip 0x80001234, period 100000, misc USER, one value {idx 0, 42}.
GOLDEN = ('02000000010040000300000021000000efcdab89674523013412008000000000'
          'a086010000000000010000000000000000000000000000002a00000000000000')


# Independent encoders, written from the field list in pmu/sample_record.h.
def sample_hex(cpu, rip, idx=0, tsc=0, period=1000, misc=0, values=(), version=0, branches=None):
    size = 48 + 16 * len(values) + (8 + 16 * len(branches) if branches is not None else 0)
    if branches is not None:
        misc |= 1 << 3
    b = struct.pack('<IHHIIQQQII', 2, misc, size, cpu, idx, tsc, rip, period, len(values), version)
    for vidx, val in values:
        b += struct.pack('<IIQ', vidx, 0, val)
    if branches is not None:
        b += struct.pack('<II', len(branches), 0)
        for frm, to in branches:
            b += struct.pack('<QQ', frm, to)
    return b.hex()


def lost_hex(rid, lost, misc=0):
    return struct.pack('<IHHQQ', 1, misc, 24, rid, lost).hex()


FAKE_NM = """\
                 U undefined_thing
ffffffff80100000 T _start
ffffffff80100000 t boot_alias
ffffffff80100040 T kmain
ffffffff80100200 t workload_loop
ffffffff80100280 T workload_end
ffffffff80200000 D some_data
ffffffff80100300 W weak_fn
"""


class DecodeTests(unittest.TestCase):
    def test_golden_line_fields(self):
        rec = ps.decode_record(bytes.fromhex(GOLDEN))
        self.assertEqual(rec, {'type': 'sample', 'misc': 1, 'cpu': 3, 'idx': 33,
                               'tsc': 0x0123456789abcdef, 'rip': 0x80001234,
                               'period': 100000, 'values': [(0, 42)], 'version': 0,
                               'precise': False, 'branches': []})
        self.assertEqual(ps.counter_name(rec['idx']), 'fixed1')

    def test_encoder_matches_golden(self):
        self.assertEqual(sample_hex(3, 0x80001234, idx=33, tsc=0x0123456789abcdef,
                                    period=100000, misc=1, values=[(0, 42)]), GOLDEN)

    def test_lost_record(self):
        rec = ps.decode_record(bytes.fromhex(lost_hex(5, 123456789012, misc=1)))
        self.assertEqual(rec, {'type': 'lost', 'misc': 1, 'id': 5, 'lost': 123456789012})

    def test_many_values(self):
        vals = [(i, 1000 * i + 7) for i in range(16)]
        rec = ps.decode_record(bytes.fromhex(sample_hex(1, 0x10, values=vals)))
        self.assertEqual(rec['values'], vals)

    def test_malformed_records(self):
        good = bytes.fromhex(sample_hex(0, 0x10, values=[(1, 2)]))
        cases = {
            'short': good[:6],
            'size mismatch': good[:-8],
            'too many values': good[:40] + struct.pack('<I', 17) + good[44:],
            'values vs size': good[:40] + struct.pack('<I', 2) + good[44:],
            'lost size': bytes.fromhex(lost_hex(0, 1))[:6] + struct.pack('<H', 32) + bytes(24),
            'unaligned': struct.pack('<IHH', 9, 0, 12) + bytes(4),
        }
        for name, data in cases.items():
            with self.subTest(name):
                with self.assertRaises(ps.Malformed):
                    ps.decode_record(data)

    def test_version_1_precise_and_branch_stack(self):
        # pmu/sample_record.h version 1: misc bit 2 precise (PEBS), bit 3 a
        # branch stack {nr, reserved, {from, to} x nr} after values[].
        stack = [(0x401010, 0x402000), (0x400100, 0x401000)]
        rec = ps.decode_record(bytes.fromhex(sample_hex(2, 0x402004, misc=1 << 2, values=[(1, 5)],
                                                        version=1, branches=stack)))
        self.assertEqual(rec['version'], 1)
        self.assertTrue(rec['precise'])
        self.assertEqual(rec['branches'], stack)
        self.assertEqual(rec['values'], [(1, 5)])
        # Version 0 records know no sections: misc bits 2/3 mean nothing.
        rec = ps.decode_record(bytes.fromhex(sample_hex(2, 0x10, misc=1 << 2)))
        self.assertFalse(rec['precise'])

    def test_malformed_branch_stacks(self):
        good = bytes.fromhex(sample_hex(0, 0x10, version=1, branches=[(1, 2)]))
        cases = {
            'stack cut short': good[:-16] + bytes(0),
            'nr over 16': good[:48] + struct.pack('<II', 17, 0) + good[56:],
            'newer version': good[:44] + struct.pack('<I', 2) + good[48:],
        }
        for name, data in cases.items():
            with self.subTest(name):
                data = data[:6] + struct.pack('<H', len(data)) + data[8:]
                with self.assertRaises(ps.Malformed):
                    ps.decode_record(data)

    def test_unknown_type_is_other(self):
        rec = ps.decode_record(struct.pack('<IHH', 0x107, 3, 16) + bytes(8))
        self.assertEqual(rec, {'type': 'other', 'rtype': 0x107, 'misc': 3, 'size': 16})


LOG = [
    'TAP version 14\n',
    '1..1\n',
    '    KTAP version 1\n',
    '    # sample: %s\r\n' % sample_hex(0, 0xffffffff80100210, idx=0),
    '    # sample: %s\n' % sample_hex(0, 0xffffffff80100210, idx=32),
    '    # sample: %s\n' % sample_hex(1, 0xffffffff80100044, idx=0, misc=3),
    '# sample: %s\n' % lost_hex(1, 5),
    '# sample: %s\n' % lost_hex(1, 2, misc=1),
    '# sample: %s\n' % lost_hex(2, 9),
    '# sample: %s\n' % sample_hex(0, 0x400000, idx=0),
    '# sample: %s\n' % sample_hex(0, 0xffffffff80100300, idx=0),
    '# sample: 0200\n',
    '# sample: 123\n',
    'ok 1 pmu.sampling\n',
    '# not a sample: 020000\n',
]


class SummaryTests(unittest.TestCase):
    def setUp(self):
        self.summary = ps.summarise(ps.parse_log(LOG))
        self.symbols = ps.Symbols(FAKE_NM)

    def test_counts(self):
        s = self.summary
        self.assertEqual(s['samples'], 5)
        self.assertEqual(s['lost'], 16)
        self.assertEqual(s['other'], 0)
        self.assertEqual([n for n, _ in s['malformed']], [12, 13])
        self.assertEqual(s['cpus'][0]['samples'], 4)
        self.assertEqual(dict(s['cpus'][0]['counters']), {0: 3, 32: 1})
        self.assertEqual(s['cpus'][1]['dropped'], 5)
        self.assertEqual(s['cpus'][1]['overwritten'], 2)
        self.assertEqual((s['cpus'][1]['user'], s['cpus'][1]['nmi']), (1, 1))
        self.assertEqual(s['cpus'][2]['samples'], 0)
        self.assertEqual(s['cpus'][2]['dropped'], 9)

    def test_symbols(self):
        sym = self.symbols
        self.assertEqual(len(sym), 6)  # U and D lines are not text symbols
        self.assertEqual(sym.describe(0xffffffff80100210), 'workload_loop+0x10')
        self.assertEqual(sym.describe(0xffffffff80100200), 'workload_loop')
        self.assertEqual(sym.describe(0xffffffff80100044), 'kmain+0x4')
        self.assertEqual(sym.describe(0xffffffff80100308), 'weak_fn+0x8')
        self.assertEqual(sym.describe(0x400000), '?')
        self.assertIn(sym.describe(0xffffffff80100000), ('_start', 'boot_alias'))

    def test_report_lines(self):
        lines = ps.report(self.summary, self.symbols, top=3)
        self.assertEqual(lines[0], 'samples: 5 on 2 CPUs, lost: 16, other records: 0, '
                                   'malformed lines: 2')
        self.assertEqual(lines[1], 'malformed line 12: 2 bytes: shorter than a header')
        self.assertEqual(lines[2], 'malformed line 13: 3 hex digits: not whole bytes')
        self.assertEqual(lines[3], 'cpu 0: samples 4 (gp0 3, fixed0 1), lost: 0')
        self.assertEqual(lines[4], 'cpu 1: samples 1 (gp0 1), lost: 7 '
                                   '(dropped 5, overwritten 2), user 1, nmi 1')
        self.assertEqual(lines[5], 'cpu 2: samples 0, lost: 9')
        self.assertEqual(lines[6], 'top RIPs:')
        self.assertEqual(lines[8].split(), ['2', '40.0%', 'ffffffff80100210', 'workload_loop+0x10'])
        # Ties (one sample each) in address order; top=3 keeps two of three.
        self.assertEqual(lines[9].split(), ['1', '20.0%', '0000000000400000', '?'])
        self.assertEqual(lines[10].split(), ['1', '20.0%', 'ffffffff80100044', 'kmain+0x4'])
        self.assertEqual(lines[11], 'top symbols:')
        self.assertEqual(lines[13].split(), ['2', '40.0%', 'workload_loop'])
        self.assertEqual(len(lines), 16)

    def test_no_samples(self):
        lines = ps.report(ps.summarise(ps.parse_log(['ok 1 x\n'])), None)
        self.assertEqual(lines, ['samples: 0 on 0 CPUs, lost: 0, other records: 0, '
                                 'malformed lines: 0', 'no samples in the log'])

    def test_json(self):
        j = ps.as_json(self.summary, self.symbols, top=1)
        self.assertEqual(j['cpus']['1']['lost'], 7)
        self.assertEqual(j['top_rips'], [{'rip': '0xffffffff80100210', 'count': 2,
                                          'symbol': 'workload_loop+0x10'}])


class PreciseAndStackTests(unittest.TestCase):
    """Version-1 samples: precise counts per CPU and the branch stacks'
    most frequent edges, resolved to symbols."""

    def setUp(self):
        call = (0xffffffff80100044, 0xffffffff80100200)   # kmain+0x4 -> workload_loop
        loop = (0xffffffff80100210, 0xffffffff80100200)   # workload_loop+0x10 -> workload_loop
        log = ['# sample: %s\n' % sample_hex(0, 0xffffffff80100210, misc=1 << 2, version=1,
                                             branches=[loop, call]),
               '# sample: %s\n' % sample_hex(0, 0xffffffff80100214, misc=1 << 2, version=1,
                                             branches=[loop, loop, call]),
               '# sample: %s\n' % sample_hex(1, 0xffffffff80100044, version=1, branches=[])]
        self.summary = ps.summarise(ps.parse_log(log))
        self.symbols = ps.Symbols(FAKE_NM)

    def test_counts(self):
        cpus = self.summary['cpus']
        self.assertEqual((cpus[0]['precise'], cpus[0]['stacks']), (2, 2))
        self.assertEqual((cpus[1]['precise'], cpus[1]['stacks']), (0, 1))
        self.assertEqual(self.summary['branches'][(0xffffffff80100210, 0xffffffff80100200)], 3)
        self.assertEqual(self.summary['branches'][(0xffffffff80100044, 0xffffffff80100200)], 2)

    def test_report_and_json(self):
        lines = ps.report(self.summary, self.symbols, top=2)
        self.assertEqual(lines[1], 'cpu 0: samples 2 (gp0 2), lost: 0, precise 2, with branch stacks 2')
        i = lines.index('top branches in the branch stacks:')
        self.assertEqual(lines[i + 2].split(), ['3', 'ffffffff80100210', 'workload_loop+0x10', '->',
                                                'ffffffff80100200', 'workload_loop'])
        j = ps.as_json(self.summary, self.symbols, top=1)
        self.assertEqual(j['cpus']['0']['precise'], 2)
        self.assertEqual(j['top_branches'], [{'from': '0xffffffff80100210', 'to': '0xffffffff80100200',
                                              'count': 3, 'from_symbol': 'workload_loop+0x10',
                                              'to_symbol': 'workload_loop'}])


class CommandLineTests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='pmutest-samples-test.')

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, 'w') as f:
            f.write(text)
        return path

    def run_tool(self, *args, stdin=None):
        return subprocess.run([sys.executable, TOOL] + list(args), input=stdin,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, cwd=self.tmp)

    def test_clean_log_exit_0(self):
        bad = ('# sample: 0200\n', '# sample: 123\n')
        log = self.write('serial.log', ''.join(l for l in LOG if l not in bad))
        nm = self.write('nm.txt', FAKE_NM)
        proc = self.run_tool(log, '--nm-output', nm)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn('cpu 1: samples 1 (gp0 1), lost: 7 (dropped 5, overwritten 2), '
                      'user 1, nmi 1\n', proc.stdout)
        self.assertIn('workload_loop+0x10', proc.stdout)

    def test_malformed_exit_1_and_stdin(self):
        proc = self.run_tool('--nm-output', self.write('nm.txt', FAKE_NM), stdin=''.join(LOG))
        self.assertEqual(proc.returncode, 1)
        self.assertIn('malformed lines: 2', proc.stdout)

    def test_missing_log_exit_2(self):
        proc = self.run_tool(os.path.join(self.tmp, 'nope.log'))
        self.assertEqual(proc.returncode, 2)
        self.assertIn('pmutest-samples:', proc.stderr)


class RealElfTests(unittest.TestCase):
    """Symbols from a real ELF through `nm -n`: two functions placed at known
    addresses by an assembler file and a linker address."""

    def test_tiny_elf(self):
        gcc, nm = shutil.which('gcc') or shutil.which('cc'), shutil.which('nm')
        if not gcc or not nm:
            self.skipTest('no gcc/nm to build a tiny ELF')
        tmp = tempfile.mkdtemp(prefix='pmutest-samples-elf.')
        try:
            src = os.path.join(tmp, 'tiny.S')
            elf = os.path.join(tmp, 'tiny.elf')
            with open(src, 'w') as f:
                f.write('.text\n.globl alpha\nalpha:\n.skip 32, 0x90\n'
                        '.globl beta\nbeta:\n.skip 16, 0x90\n')
            proc = subprocess.run([gcc, '-nostdlib', '-static', '-Wl,-Ttext=0x100000',
                                   '-Wl,-e,alpha', '-o', elf, src],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  universal_newlines=True)
            if proc.returncode != 0:
                self.skipTest('cannot link a tiny ELF: ' + proc.stderr.strip()[:200])
            sym = ps.load_symbols(elf=elf, nm=nm)
            self.assertEqual(sym.describe(0x100000), 'alpha')
            self.assertEqual(sym.describe(0x10001f), 'alpha+0x1f')
            self.assertEqual(sym.describe(0x100025), 'beta+0x5')
            self.assertEqual(sym.describe(0xfffff), '?')
        finally:
            shutil.rmtree(tmp)

