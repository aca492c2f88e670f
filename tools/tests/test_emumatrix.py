"""Unit tests of tools/emu-matrix.py's judgements (no QEMU here: make test
runs the matrix itself): the expect rules it writes per kind, which defect
counts as caught, the failures it prints, and its monitor-row and sample
checks against logs written here.
Run: PYTHONPATH=tools python3 -m pmutest.testing tools/tests/test_emumatrix.py"""
import struct
import unittest

from pmutest import emumatrix as em
from pmutest.expect import parse_expect
from pmutest.ktap import parse_ktap
from pmutest.profiles import parse_profiles

PROFILES = parse_profiles("""\
kvm-x  hypervisor Skylake-Client,pmu=on deviations=A-ONE,B-TWO source=x
quiet  hypervisor Skylake-Client,pmu=on source=y
bug    defect     Skylake-Client,pmu=on,pmu-defect=z catches=pmu.count.some_check
none   defect     Skylake-Client,pmu=on,pmu-defect=w catches=none
""", 'test')
KVM, QUIET, BUG, NONE = PROFILES

LOG = """\
KTAP version 1
1..1
  KTAP version 1
  # Subtest: pmu.count
  1..2
    KTAP version 1
    # Subtest: cpu0-apic0
    1..2
    # FAIL pmu_count.c:10: expected 3, saw 4
    not ok 1 pmu.count.some_check
    ok 2 pmu.count.other
  not ok 1 cpu0-apic0
    KTAP version 1
    # Subtest: cpu1-apic1
    1..2
    ok 1 pmu.count.some_check
    # FAIL pmu_count.c:20: expected 5, saw 6
    not ok 2 pmu.count.other
  not ok 2 cpu1-apic1
not ok 1 pmu.count
# pmutest: 2 passed, 2 failed, 0 skipped
"""


class Rules(unittest.TestCase):
    def test_hypervisor_for_now_accepts_any_pmu_outcome(self):
        exp = parse_expect('\n'.join(em.hypervisor_rules(KVM, asserted=False)))
        self.assertIn(('pmu.*', ('any',)), [(r.glob, r.outcomes) for r in exp.rules])
        self.assertIsNone(exp.deviations)

    def test_hypervisor_asserted_wants_its_deviations_and_no_probe_skip(self):
        exp = parse_expect('\n'.join(em.hypervisor_rules(KVM, asserted=True)))
        rules = {r.glob: r for r in exp.rules}
        self.assertEqual(rules['pmu.*'].outcomes, ('pass', 'xfail', 'skip'))
        self.assertEqual(rules['pmu.*'].xfail_ids, ('A-ONE', 'B-TWO'))
        self.assertEqual(rules['pmu.caps.probe_verdict'].outcomes, ('pass',))
        self.assertEqual(exp.deviations, ('A-ONE', 'B-TWO'))
        self.assertNotIn('monitor.*', rules)          # the modes must pass then
        quiet = parse_expect('\n'.join(em.hypervisor_rules(QUIET, asserted=True)))
        self.assertEqual(quiet.deviations, ())

    def test_defect_rules_keep_boot_exact(self):
        exp = parse_expect('\n'.join(em.defect_rules()))
        rules = {r.glob: r.outcomes for r in exp.rules}
        self.assertEqual(rules['boot.*'], ('pass',))
        self.assertEqual(rules['pmu.*'], ('any',))
        self.assertEqual(rules['sample.*'], ('any',))


class ShippedHypervisorExpectFiles(unittest.TestCase):
    """A hypervisor profile with its own expect file (the odd values a VMM
    may give) keeps the hypervisor rules' promises: exactly its deviations,
    no FAIL or TIMEOUT accepted anywhere, and each SKIP of the value named."""
    def test_own_expect_files(self):
        import os
        from pmutest.profiles import load_profiles
        own = [p for p in load_profiles() if p.kind == 'hypervisor'
               and os.path.isfile(os.path.join(em.EXPECT_DIR, p.name + '.expect'))]
        self.assertGreaterEqual(len([p for p in own if p.name.startswith('vmm-')]), 6)
        for p in own:
            with open(os.path.join(em.EXPECT_DIR, p.name + '.expect')) as f:
                exp = parse_expect(f.read(), p.name)
            ids = tuple(sorted(i for i in em.deviation_ids(p) if i != 'none'))
            self.assertEqual(exp.deviations, ids, p.name)
            for r in exp.rules:
                self.assertFalse({'fail', 'timeout', 'any'} & set(r.outcomes), '%s: %s' % (p.name, r.glob))


class Verdicts(unittest.TestCase):
    def test_caught_only_where_the_named_check_failed(self):
        log = parse_ktap(LOG)
        self.assertEqual(em.caught(log, 'pmu.count.some_check'), ['cpu0-apic0'])
        self.assertEqual(em.caught(log, 'pmu.count.absent'), [])
        self.assertEqual(em.caught(log, 'none'), [])

    def test_failures_grouped_by_check_with_their_first_fail_line(self):
        got = em.failures_by_check(parse_ktap(LOG))
        self.assertEqual(got, [('pmu.count.some_check', ['cpu0-apic0'], 'FAIL pmu_count.c:10: expected 3, saw 4'),
                               ('pmu.count.other', ['cpu1-apic1'], 'FAIL pmu_count.c:20: expected 5, saw 6')])


def monitor_log(rows):
    head = '  #     time(ms)  cpu    instructions          cycles   branch-misses      loop.iters\n'
    return head + ''.join('  #  %10.1f %4d %15d %15d %15d %15d\n' % r for r in rows)


class Monitor(unittest.TestCase):
    GOOD = [(500.0, c, 3000 * (c + 1) + 7, 3100 * (c + 1), 3, 1000 * (c + 1)) for c in range(2)] * 2

    def test_real_rows_pass(self):
        self.assertEqual(em.monitor_problems(monitor_log(self.GOOD), 2), [])

    def test_zero_counts_or_too_few_instructions_fail(self):
        bad = self.GOOD[:3] + [(1000.0, 1, 5999, 6200, 0, 2000)]
        self.assertEqual(len(em.monitor_problems(monitor_log(bad), 2)), 1)
        zero = self.GOOD[:3] + [(1000.0, 1, 0, 0, 0, 2000)]
        self.assertIn('cpu 1 row 2', em.monitor_problems(monitor_log(zero), 2)[0])

    def test_missing_cpu_or_header(self):
        self.assertIn('cpu 2: 0 rows', em.monitor_problems(monitor_log(self.GOOD), 3)[0])
        self.assertIn('no monitor table header', em.monitor_problems('# nothing\n', 1)[0])


def sample_line(cpu, rip):
    rec = struct.pack('<IHHIIQQQII', 2, 0, 48, cpu, 33, 0, rip, 1000, 0, 0)
    return '  # sample: %s\n' % rec.hex()


class Samples(unittest.TestCase):
    RANGE = '  # sample-mode: workload rip range 0x1000-0x10ff (pmu_wl_step)\n'

    def log(self, rips):
        return self.RANGE + ''.join(sample_line(cpu, rip) for cpu, rip in rips)

    def test_ninety_percent_inside_passes(self):
        rips = [(i % 2, 0x1000 + i) for i in range(18)] + [(0, 0x2000), (1, 0x10ff)]
        problems, total, inside = em.sample_problems(self.log(rips), 2)
        self.assertEqual((problems, total, inside), ([], 20, 19))

    def test_too_few_inside_or_a_silent_cpu_fail(self):
        rips = [(i % 2, 0x1000) for i in range(8)] + [(0, 0x2000), (1, 0x0fff)]
        problems, _, inside = em.sample_problems(self.log(rips), 2)
        self.assertEqual(inside, 8)
        self.assertIn('8 of 10 sample RIPs (80.0 %)', problems[0])
        problems, _, _ = em.sample_problems(self.log([(0, 0x1000)]), 2)
        self.assertEqual(problems, ['cpu 1: no samples'])

    def test_no_range_line_and_malformed_lines(self):
        problems, _, _ = em.sample_problems(sample_line(0, 0x1000) + '  # sample: 0201\n', 1)
        self.assertIn('no "# sample-mode: workload rip range" line', problems)
        self.assertIn('1 malformed sample lines', problems)


class Rows(unittest.TestCase):
    def test_every_profile_and_both_modes_get_a_row(self):
        plist = parse_profiles('a silicon X,pmu=on\nb defect Y,pmu=on catches=c\n', 't')
        rows = [(name, kind) for name, kind, _, _ in em.jobs(plist, modes=('a',))]
        self.assertEqual(rows, [('a', 'silicon'), ('b', 'defect'), ('monitor@a', 'mode'), ('sample@a', 'mode')])


if __name__ == '__main__':
    unittest.main()
