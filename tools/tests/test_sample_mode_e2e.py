"""End-to-end check that tools/pmutest-samples accepts what sample mode
prints: the host test build/host/test_sample_mode drains rings that the PMU
model filled through the real PMI handler, with the kernel's drain code
(modes/sample_drain.c), and writes the lines as sample.run prints them
(SAMPLE_MODE_E2E_DIR). Each log is decoded by the tool, and its per-CPU
samples and losses must equal the "# sample-mode: cpu N:" summaries, every
RIP must resolve to the symbol of the "workload rip range" line or lie
outside it as the summary counts.
Run: PYTHONPATH=tools python3 -m pmutest.testing tools/tests/test_sample_mode_e2e.py"""
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from pmutest import samples as ps

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOOL = os.path.join(os.path.dirname(HERE), 'pmutest-samples')
TEST_NAME = 'test_sample_mode'

# Symbols around the host test's addresses (tests/host/test_sample_mode.c:
# RANGE_LO, RANGE_HI, OUTSIDE_RIP), laid out like a kernel's `nm -n`.
FAKE_NM = """\
ffffffff80108ba0 T memcpy
ffffffff80108c40 T memmove
ffffffff80112000 T pmu_wl_step
ffffffff801121a0 T pmu_wl_step_timed
"""

SUMMARY = re.compile(r'# sample-mode: cpu (\d+): (\d+) samples, (\d+) lost, (\d+) PMIs, period (\d+(?:,\d+)*)'
                     r'(?:, (\d+) in workload range)?')
RANGE = re.compile(r'# sample-mode: workload rip range 0x([0-9a-f]+)-0x([0-9a-f]+) \((\S+)\)')


LOGS = {}          # name -> text, filled once by setUpModule
SETUP_ERROR = None


def build_dir():
    return os.environ.get('BUILD', os.path.join(ROOT, 'build'))


def setUpModule():
    """Build the host test (make knows when it is stale) and run its e2e_*
    cases, which write the logs."""
    global SETUP_ERROR
    tmp = tempfile.mkdtemp(prefix='sample-mode-e2e-')
    try:
        binary = os.path.join(build_dir(), 'host', TEST_NAME)
        make = subprocess.run(['make', '-C', ROOT, 'BUILD=' + build_dir(), binary],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        if make.returncode != 0:
            SETUP_ERROR = 'building %s failed:\n%s' % (binary, make.stdout[-2000:])
            return
        env = dict(os.environ, SAMPLE_MODE_E2E_DIR=tmp)
        run = subprocess.run([binary, 'e2e_'], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True)
        if run.returncode != 0:
            SETUP_ERROR = '%s e2e_ failed:\n%s' % (binary, run.stdout[-2000:])
            return
        for name in sorted(os.listdir(tmp)):
            with open(os.path.join(tmp, name)) as f:
                LOGS[name] = f.read()
    finally:
        shutil.rmtree(tmp)


def summaries(text):
    out = {}
    for line in text.splitlines():
        m = SUMMARY.search(line)
        if m:
            out[int(m.group(1))] = {
                'samples': int(m.group(2)), 'lost': int(m.group(3)), 'pmis': int(m.group(4)),
                'periods': [int(p) for p in m.group(5).split(',')],
                'in_range': None if m.group(6) is None else int(m.group(6)),
            }
    return out


def ranges(text):
    return [(int(m.group(1), 16), int(m.group(2), 16), m.group(3))
            for m in (RANGE.search(l) for l in text.splitlines()) if m]


class E2ETests(unittest.TestCase):
    EXPECTED_LOGS = ['overwrite.log', 'ring_full.log', 'two_cpus.log']

    def setUp(self):
        if SETUP_ERROR:
            self.fail(SETUP_ERROR)
        self.tmp = tempfile.mkdtemp(prefix='sample-mode-e2e-')
        self.nm = os.path.join(self.tmp, 'nm.txt')
        with open(self.nm, 'w') as f:
            f.write(FAKE_NM)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def decode(self, text):
        """The tool's JSON summary of a log, through its command line."""
        path = os.path.join(self.tmp, 'serial.log')
        with open(path, 'w') as f:
            f.write(text)
        proc = subprocess.run([sys.executable, TOOL, path, '--nm-output', self.nm, '--json', '--top', '100'],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(proc.returncode, 0, proc.stderr + proc.stdout[-1000:])
        return json.loads(proc.stdout)

    def test_every_log_written(self):
        self.assertEqual(sorted(LOGS), self.EXPECTED_LOGS)

    def check_log(self, name, overwrite=False):
        text = LOGS[name]
        sums = summaries(text)
        rngs = ranges(text)
        self.assertTrue(sums, 'no summary lines in %s' % name)
        self.assertEqual(rngs, [(0xffffffff80112000, 0xffffffff801121a0, 'pmu_wl_step')])
        dec = self.decode(text)
        self.assertEqual(dec['malformed'], [])
        self.assertEqual(dec['other'], 0)
        self.assertEqual(sorted(int(c) for c in dec['cpus']), sorted(sums))
        for cpu, s in sums.items():
            c = dec['cpus'][str(cpu)]
            self.assertEqual(c['samples'], s['samples'], 'cpu %d samples' % cpu)
            if overwrite:
                # The reader reports what the producer overwrote; nothing dropped.
                self.assertEqual((c['overwritten'], c['dropped']), (s['lost'], 0), 'cpu %d' % cpu)
            else:
                # Drops after the ring filled have no LOST record after them:
                # the summary (the ring's count) may say more than the log.
                self.assertLessEqual(c['dropped'], s['lost'], 'cpu %d' % cpu)
                self.assertEqual(c['overwritten'], 0)
        # Every RIP either resolves to the range's symbol or lies outside
        # the range, and the counts match the summaries' in-range figures.
        lo, hi, sym = rngs[0]
        in_range = sum(r['count'] for r in dec['top_rips'] if lo <= int(r['rip'], 16) < hi)
        self.assertEqual(in_range, sum(s['in_range'] for s in sums.values()))
        for r in dec['top_rips']:
            inside = lo <= int(r['rip'], 16) < hi
            self.assertEqual(r['symbol'].split('+')[0] == sym, inside, r)
        return sums, dec

    def test_two_cpus(self):
        sums, dec = self.check_log('two_cpus.log')
        self.assertEqual({c: (s['samples'], s['lost'], s['in_range']) for c, s in sums.items()},
                         {0: (5, 0, 5), 1: (12, 0, 11)})
        self.assertEqual(dec['samples'], 17)
        for cpu in ('0', '1'):
            self.assertEqual(sum(dec['cpus'][cpu]['counters'].values()), dec['cpus'][cpu]['samples'])
        outside = [r for r in dec['top_rips'] if r['symbol'].startswith('memcpy')]
        self.assertEqual([(r['symbol'], r['count']) for r in outside], [('memcpy', 1)])

    def test_ring_full(self):
        sums, dec = self.check_log('ring_full.log')
        self.assertEqual((sums[0]['samples'], sums[0]['lost']), (64, 36))
        self.assertEqual(dec['lost'], 0)  # no LOST record could follow the drops

    def test_overwrite(self):
        sums, dec = self.check_log('overwrite.log', overwrite=True)
        s = sums[0]
        self.assertEqual(s['samples'] + s['lost'], 100)
        self.assertGreater(s['lost'], 0)
        self.assertEqual(dec['lost'], s['lost'])

    def test_text_report_names_the_workload(self):
        """The human report's top symbol is the workload function."""
        path = os.path.join(self.tmp, 'serial.log')
        with open(path, 'w') as f:
            f.write(LOGS['two_cpus.log'])
        out = io.StringIO()
        saved = sys.stdout
        sys.stdout = out
        try:
            rc = ps.main([path, '--nm-output', self.nm])
        finally:
            sys.stdout = saved
        self.assertEqual(rc, 0)
        text = out.getvalue()
        self.assertIn('samples: 17 on 2 CPUs, lost: 0', text)
        top = text.split('top symbols:')[1].splitlines()[2]
        self.assertEqual(top.split()[-1], 'pmu_wl_step')
        self.assertEqual(int(top.split()[0]), 16)

