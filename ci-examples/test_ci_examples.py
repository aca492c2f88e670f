#!/usr/bin/env python3
"""Tests for ci-examples/ and the per-environment expect files: the CI files
are valid YAML that point at files that exist; the expect files parse and
name tests that exist; kvm-expect.sh picks the right file for each host; the
job summary counts what the JUnit XML says; and the LAVA monitor patterns,
run the way LAVA runs them (pexpect: re.DOTALL, earliest match wins, the
buffer cut at arbitrary points), turn a KTAP log into exactly the results the
log holds.

Run: python3 ci-examples/test_ci_examples.py  (last line: "ci-examples: N passed, M failed, K skipped")
"""
import importlib.machinery
import importlib.util
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.dont_write_bytecode = True

try:
    import yaml
except ImportError:             # python3-yaml: only the YAML checks need it
    yaml = None
try:
    import pexpect
except ImportError:             # python3-pexpect: only the real-pexpect check needs it
    pexpect = None


def _load(name, path):
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


runner = _load('pmutest_run', os.path.join(ROOT, 'tools', 'pmutest-run'))
junit_summary = _load('junit_summary', os.path.join(HERE, 'junit-summary.py'))


def read(*parts):
    with open(os.path.join(ROOT, *parts)) as f:
        return f.read()


def need_yaml(test):
    return unittest.skipUnless(yaml, 'python3-yaml not installed')(test)


# A complete, consistent report (plans, numbering, summary) as the kernel
# prints it: CR LF line ends, firmware noise first, a failure with its
# diagnostic, per-CPU blocks, a SKIP, a TIMEOUT, a skipped suite, and a
# diagnostic that says "took 5 us".
KTAP_LOG = ('\x1b[2J\x1b[01;01HBdsDxe: starting Boot0001 "UEFI QEMU DVD-ROM"\n'
            'Welcome to GRUB!\n'
            '''KTAP version 1
1..3
# pmutest 0.1: booted by GRUB 2.06 (multiboot2), command line ""
# smp: 2 of 2 CPUs online (xapic)
# smp: AP bring-up took 5 us of guest time
  KTAP version 1
  # Subtest: boot
  1..3
  ok 1 boot.cmdline
  # FAIL boot.c:55: expected the kernel image inside available RAM
  not ok 2 boot.memory_map
  ok 3 boot.acpi
not ok 1 boot
  KTAP version 1
  # Subtest: arch
  1..2
    KTAP version 1
    # Subtest: cpu0-apic0
    1..2
    ok 1 arch.msr_safe
    ok 2 arch.msr_safe_fault # SKIP TCG raises no #GP for invalid MSR accesses
  ok 1 cpu0-apic0
    KTAP version 1
    # Subtest: cpu1-apic1
    1..2
    ok 1 arch.msr_safe
    not ok 2 arch.msr_safe_fault # TIMEOUT 10000ms
  not ok 2 cpu1-apic1
not ok 2 arch
  KTAP version 1
  # Subtest: pmu.count
  1..1
    KTAP version 1
    # Subtest: cpu0-apic0
    1..1
    ok 1 pmu.count.fixed_counters # SKIP no architectural PMU (CPUID.0AH.EAX[7:0]=0)
  ok 1 cpu0-apic0 # SKIP
ok 3 pmu.count # SKIP
# pmutest: 4 passed, 2 failed, 2 skipped
# pmutest: end exit=0x11
''').replace('\n', '\r\n')


# ---------------------------------------------------------------- CI YAML

class CiYaml(unittest.TestCase):
    @need_yaml
    def test_gitlab(self):
        doc = yaml.safe_load(read('ci-examples', 'gitlab-ci.yml'))
        jobs = {k: v for k, v in doc.items() if isinstance(v, dict) and 'script' in v}
        self.assertEqual(sorted(jobs), ['boot-kvm', 'boot-tcg', 'build-iso'])
        self.assertEqual(doc['stages'], ['build', 'boot'])
        for name in ('boot-tcg', 'boot-kvm'):
            job = jobs[name]
            script = '\n'.join(job['script'])
            junit = re.search(r'--junit (\S+)', script).group(1)
            self.assertEqual(job['artifacts']['reports']['junit'], junit, name)
            self.assertEqual(job['artifacts']['when'], 'always', name)
            self.assertIn(junit, job['artifacts']['paths'])
            self.assertEqual(job['needs'], ['build-iso'])
            self.assertIn(job['extends'], doc)
        self.assertIn('exit 77', '\n'.join(jobs['boot-kvm']['script']))
        self.assertEqual(jobs['boot-kvm']['allow_failure'], {'exit_codes': [77]})
        self.assertEqual(jobs['build-iso']['artifacts']['paths'], ['build/pmutest.iso'])

    @need_yaml
    def test_github(self):
        doc = yaml.safe_load(read('ci-examples', 'github-actions.yml'))
        steps = doc['jobs']['boot']['steps']
        uses = sorted({s['uses'] for s in steps if 'uses' in s})
        # Only actions whose names and inputs are certain.
        self.assertEqual(uses, ['actions/checkout@v4', 'actions/upload-artifact@v4'])
        runs = '\n'.join(s.get('run', '') for s in steps)
        self.assertEqual(set(re.findall(r'--junit (\S+)', runs)), {'junit.xml'})
        upload = [s for s in steps if s.get('uses', '').startswith('actions/upload-artifact')][0]
        self.assertIn('junit.xml', upload['with']['path'].split())
        self.assertEqual(upload['if'], 'always()')
        self.assertEqual(doc['jobs']['boot']['strategy']['matrix']['accel'], ['tcg', 'kvm'])

    def test_referenced_files_exist(self):
        for name in ('gitlab-ci.yml', 'github-actions.yml', 'lava-job.yaml', 'README.md'):
            text = read('ci-examples', name)
            for path in set(re.findall(r'\b((?:tools|tests/expect|ci-examples)/[\w./-]+[\w])', text)):
                self.assertTrue(os.path.exists(os.path.join(ROOT, path)), '%s names %s' % (name, path))

    def test_scripts_are_executable(self):
        for name in ('kvm-expect.sh', 'junit-summary.py', 'test_ci_examples.py'):
            self.assertTrue(os.access(os.path.join(HERE, name), os.X_OK), name)


# ---------------------------------------------------------------- expect files

def registered_tests():
    names = set()
    for f in os.listdir(os.path.join(ROOT, 'tests')):
        if f.endswith('.c'):
            for suite, name in re.findall(r'^KTEST\("([^"]+)",\s*(\w+)', read('tests', f), re.M):
                names.add('%s.%s' % (suite, name))
    return names


class ExpectFiles(unittest.TestCase):
    FILES = ('kvm-intel', 'kvm-amd', 'bare-metal')

    def test_parse_and_match_registered_tests(self):
        tests = registered_tests()
        self.assertIn('boot.cmdline', tests)
        for f in self.FILES:
            exp = runner.parse_expect(read('tests', 'expect', f + '.expect'), f)
            self.assertEqual([r.glob for r in exp.rules][:3], ['boot.*', 'arch.*', 'smp.*'], f)
            for rule in exp.rules:
                hits = [t for t in tests if re.fullmatch(re.escape(rule.glob).replace(r'\*', '.*'), t)]
                self.assertTrue(hits, '%s.expect: %s matches no registered test' % (f, rule.glob))

    def test_pmu_outcomes(self):
        amd_fixed = [('pmu.count.fixed_counters', 'skip'), ('pmu.count.fixed_vs_gp', 'skip'),
                     ('pmu.cross.*', 'skip')]
        # KVM exposes neither the offcore response nor the uncore MSRs.
        no_offcore_uncore = [('pmu.offcore.*', 'skip'), ('pmu.uncore.*', 'skip')]
        want = {'kvm-intel': [('pmu.*', 'pass')] + no_offcore_uncore,
                'kvm-amd': [('pmu.*', 'pass')] + amd_fixed + no_offcore_uncore,
                'bare-metal': [('pmu.*', 'pass')]}
        for f, rules in want.items():
            exp = runner.parse_expect(read('tests', 'expect', f + '.expect'), f)
            self.assertEqual([(r.glob, r.outcome) for r in exp.rules if r.glob.startswith('pmu')], rules, f)
            self.assertIsNone(exp.exit, '%s: no QEMU status to expect on hardware or a real vPMU' % f)


# ---------------------------------------------------------------- kvm-expect.sh

class KvmExpect(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='kvm-expect.')
        self.addCleanup(shutil.rmtree, self.tmp, True)
        os.makedirs(os.path.join(self.tmp, 'sys', 'module', 'kvm', 'parameters'))

    def pick(self, vendor, flags, enable_pmu='Y', hybrid=False, perf_cpu=True):
        cpuinfo = os.path.join(self.tmp, 'cpuinfo')
        with open(cpuinfo, 'w') as f:
            for cpu in range(2):
                f.write('processor\t: %d\nvendor_id\t: %s\nflags\t\t: %s\n\n' % (cpu, vendor, flags))
        with open(os.path.join(self.tmp, 'sys', 'module', 'kvm', 'parameters', 'enable_pmu'), 'w') as f:
            f.write(enable_pmu + '\n')
        pmus = os.path.join(self.tmp, 'sys', 'bus', 'event_source', 'devices')
        for pmu in ['software'] + (['cpu_core', 'cpu_atom'] if hybrid else ['cpu'] if perf_cpu else []):
            os.makedirs(os.path.join(pmus, pmu), exist_ok=True)
        env = dict(os.environ, PMUTEST_CPUINFO=cpuinfo, PMUTEST_SYSFS=os.path.join(self.tmp, 'sys'))
        out = subprocess.run([os.path.join(HERE, 'kvm-expect.sh')], env=env, stdout=subprocess.PIPE,
                             check=True, text=True).stdout.strip()
        self.assertTrue(os.path.isfile(out), out)
        self.assertEqual(os.path.dirname(out), os.path.join(ROOT, 'tests', 'expect'))
        return os.path.basename(out)

    def test_intel_with_pmu(self):
        self.assertEqual(self.pick('GenuineIntel', 'fpu vmx arch_perfmon pdcm'), 'kvm-intel.expect')

    def test_intel_runner_without_pmu(self):
        self.assertEqual(self.pick('GenuineIntel', 'fpu vmx pdcm'), 'kvm-nopmu.expect')

    def test_flag_is_matched_whole(self):
        self.assertEqual(self.pick('GenuineIntel', 'fpu arch_perfmon_ext'), 'kvm-nopmu.expect')

    def test_enable_pmu_off(self):
        self.assertEqual(self.pick('GenuineIntel', 'arch_perfmon', enable_pmu='N'), 'kvm-nopmu.expect')

    def test_hybrid_host(self):
        self.assertEqual(self.pick('GenuineIntel', 'arch_perfmon', hybrid=True), 'kvm-nopmu.expect')

    def test_amd(self):
        self.assertEqual(self.pick('AuthenticAMD', 'svm perfctr_core'), 'kvm-amd.expect')

    def test_host_perf_has_no_core_pmu(self):
        self.assertEqual(self.pick('AuthenticAMD', 'svm', perf_cpu=False), 'kvm-nopmu.expect')
        self.assertEqual(self.pick('GenuineIntel', 'arch_perfmon', perf_cpu=False), 'kvm-nopmu.expect')

    def test_other_vendor(self):
        self.assertEqual(self.pick('HygonGenuine', 'svm'), 'kvm-nopmu.expect')


# ---------------------------------------------------------------- junit-summary.py

class JunitSummary(unittest.TestCase):
    def test_counts_failures_and_skip_reasons(self):
        log = runner.parse_ktap(KTAP_LOG)
        self.assertEqual(log.errors, [])
        exp = runner.parse_expect('boot.memory_map fail\narch.msr_safe_fault* any\n', 'x.expect')
        problems = runner.verdict_problems(log, None, exp, None)
        self.assertEqual(problems, [])
        md = junit_summary.summarize(runner.junit_xml(log, problems, KTAP_LOG, exp))
        lines = md.splitlines()
        # Passed: 4 leaves and the verdict case; failed: memory_map and the timeout.
        self.assertEqual(lines[0], '### pmutest: 5 passed, 2 failed, 2 skipped')
        self.assertIn('| `boot.memory_map` | not ok (expected by x.expect:1) |', lines)
        self.assertIn('| `arch.msr_safe_fault@cpu1-apic1` | TIMEOUT 10000ms (expected by x.expect:2) |', lines)
        self.assertIn('FAIL boot.c:55: expected the kernel image inside available RAM', lines)
        self.assertIn('| `arch.msr_safe_fault@cpu0-apic0` | TCG raises no #GP for invalid MSR accesses |', lines)
        self.assertIn('| `pmu.count.fixed_counters@cpu0-apic0` | no architectural PMU (CPUID.0AH.EAX[7:0]=0) |',
                      lines)

    def test_groups_many_skips(self):
        cases = ''.join('<testcase name="t%d"><skipped message="same"/></testcase>' % i for i in range(5))
        md = junit_summary.summarize('<testsuites><testsuite>%s</testsuite></testsuites>' % cases)
        self.assertIn('| `t0`, `t1`, `t2` and 2 more | same |', md.splitlines())

    def test_bad_input(self):
        bad = os.path.join(tempfile.mkdtemp(prefix='junit.'), 'x.xml')
        self.addCleanup(shutil.rmtree, os.path.dirname(bad), True)
        with open(bad, 'w') as f:
            f.write('<not xml')
        self.assertEqual(subprocess.run([sys.executable, os.path.join(HERE, 'junit-summary.py'), bad],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode, 2)


# ---------------------------------------------------------------- LAVA monitor

def lava_case_id(raw):
    # LAVA's monitor: strip, lower case, each run of non-word characters -> "_".
    return re.sub(r'\W+', '_', raw.strip().lower())


def lava_monitor(chunks, monitor):
    """LAVA's test monitor over pexpect, step for step: wait for start, then
    repeatedly take the earliest match of [end, pattern] in what has arrived
    (patterns compiled with re.DOTALL, as pexpect does), drop the buffer up
    to the match end, map the result through the fixupdict. Returns the
    (case, result) list, whether the end was seen, and rejected results."""
    start = re.compile(monitor['start'], re.DOTALL)
    pats = [re.compile(monitor['end'], re.DOTALL), re.compile(monitor['pattern'], re.DOTALL)]
    fixup = monitor.get('fixupdict') or {}
    buf, started, results, bad = '', False, [], []
    for chunk in chunks:
        buf += chunk
        while True:
            if not started:
                m = start.search(buf)
                if not m:
                    break
                buf, started = buf[m.end():], True
                continue
            best = None
            for i, p in enumerate(pats):
                m = p.search(buf)
                if m and (best is None or m.start() < best[1].start()):
                    best = (i, m)
            if best is None:
                break
            buf = buf[best[1].end():]
            if best[0] == 0:
                return results, True, bad
            g = best[1].groupdict()
            result = fixup.get(g['result'], g['result'])
            if result not in ('pass', 'fail', 'skip', 'unknown'):
                bad.append(g['result'])
            else:
                results.append((lava_case_id(g['test_case_id']), result))
    return results, False, bad


def chunkings(text):
    rng = random.Random(6)
    cuts = sorted(rng.sample(range(1, len(text)), 60))
    yield 'one read', [text]
    yield 'one byte per read', list(text)
    yield 'random reads', [text[a:b] for a, b in zip([0] + cuts, cuts + [len(text)])]
    yield 'line by line', text.splitlines(keepends=True)


def expected_results(text, skip_aware):
    """What the log holds, from the runner's own parser: every leaf, plus the
    top-level suite lines (the monitor cannot tell those from leaves), never
    the per-CPU block lines."""
    log = runner.parse_ktap(text)
    rows = []
    for leaf in log.leaves:
        outcome = {'pass': 'pass', 'fail': 'fail', 'timeout': 'fail',
                   'skip': 'skip' if skip_aware else 'pass'}[leaf.outcome]
        rows.append((leaf.lineno, leaf.name, outcome))
    lines = [runner.clean_line(x) for x in text.split('\n')]
    for lineno, line in enumerate(lines, 1):
        m = re.match(r'^(ok|not ok) \d+ ([a-z0-9_.]+)(?: # (SKIP))?$', line)
        if m:
            outcome = 'fail' if m.group(1) == 'not ok' else ('skip' if m.group(3) and skip_aware else 'pass')
            rows.append((lineno, m.group(2), outcome))
    return [(lava_case_id(n), o) for _, n, o in sorted(rows)]


def skip_aware_monitor(text):
    """The commented SKIP-aware alternative in lava-job.yaml, uncommented."""
    block = re.search(r'# SKIP-aware monitor[^\n]*\n(?:[ \t]*#[^\n]*\n)*?((?:[ \t]*# (?:pattern|fixupdict|  )[^\n]*\n)+)',
                      text).group(1)
    return yaml.safe_load(''.join(re.sub(r'^[ \t]*# ', '', x) + '\n' for x in block.splitlines()))


class LavaMonitor(unittest.TestCase):
    def setUp(self):
        if yaml is None:
            self.skipTest('python3-yaml not installed')
        self.text = read('ci-examples', 'lava-job.yaml')
        doc = yaml.safe_load(self.text)
        tests = [a['test'] for a in doc['actions'] if 'test' in a]
        self.assertEqual(len(tests), 1)
        self.monitor = tests[0]['monitors'][0]
        alt = skip_aware_monitor(self.text)
        self.skip_monitor = dict(self.monitor, pattern=alt['pattern'], fixupdict=alt['fixupdict'])

    def test_job_shape(self):
        doc = yaml.safe_load(self.text)
        self.assertEqual([list(a)[0] for a in doc['actions']], ['deploy', 'boot', 'test'])
        deploy, boot = doc['actions'][0]['deploy'], doc['actions'][1]['boot']
        self.assertEqual((deploy['to'], boot['method'], boot['media']), ('tmpfs', 'qemu', 'tmpfs'))
        self.assertIn('{iso}', deploy['images']['iso']['image_arg'])
        self.assertEqual(doc['context']['arch'], 'amd64')
        for key in ('job_name', 'device_type', 'timeouts', 'visibility'):
            self.assertIn(key, doc)
        self.assertEqual(self.monitor['fixupdict'], {'ok': 'pass', 'not ok': 'fail'})
        self.assertEqual(self.skip_monitor['fixupdict'],
                         {'ok': 'pass', 'not ok': 'fail', 'SKIP': 'skip', 'TIMEOUT': 'fail'})

    def test_start_and_end_match_the_kernel_lines(self):
        self.assertTrue(re.search(self.monitor['start'], 'KTAP version 1\r\n'))
        for code in ('0x10', '0x11', '0x26', '0x3f'):
            self.assertTrue(re.search(self.monitor['end'], '# pmutest: end exit=%s\r\n' % code), code)

    def check(self, monitor, skip_aware):
        want = expected_results(KTAP_LOG, skip_aware)
        self.assertEqual(len(want), 11)
        for how, chunks in chunkings(KTAP_LOG):
            got, ended, bad = lava_monitor(chunks, monitor)
            self.assertEqual(bad, [], how)
            self.assertTrue(ended, how)
            self.assertEqual(got, want, how)

    def test_pattern_reports_every_result(self):
        self.check(self.monitor, skip_aware=False)
        got = dict(lava_monitor([KTAP_LOG], self.monitor)[0])
        self.assertEqual(got['arch_msr_safe_fault'], 'fail')      # the later one: TIMEOUT
        self.assertNotIn('cpu0', got)

    def test_skip_aware_pattern(self):
        self.check(self.skip_monitor, skip_aware=True)
        got = lava_monitor([KTAP_LOG], self.skip_monitor)[0]
        self.assertIn(('pmu_count_fixed_counters', 'skip'), got)
        self.assertIn(('arch_msr_safe_fault', 'skip'), got)
        self.assertIn(('arch_msr_safe_fault', 'fail'), got)

    def test_readme_shows_the_same_patterns(self):
        readme = read('ci-examples', 'README.md')
        self.assertIn(self.monitor['pattern'], readme)
        self.assertIn(self.skip_monitor['pattern'], readme)

    def test_the_unanchored_pattern_loses_results(self):
        # Why the pattern ends in [^\r\n]*[\r\n] and not .*: with re.DOTALL,
        # ".*" after a SKIP swallows every later result already received.
        naive = dict(self.monitor, pattern=r'(?P<result>ok|not ok) \d+ (?P<test_case_id>[a-z0-9_.]+)'
                                           r'( # (SKIP|TIMEOUT).*)?')
        got, _, _ = lava_monitor([KTAP_LOG], naive)
        self.assertLess(len(got), len(expected_results(KTAP_LOG, False)))

    @unittest.skipUnless(pexpect, 'python3-pexpect not installed')
    def test_real_pexpect(self):
        """The same monitor through pexpect itself, over a pty, in small writes."""
        tmp = tempfile.mkdtemp(prefix='lava-monitor.')
        self.addCleanup(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, 'serial.log')
        with open(path, 'w', newline='') as f:
            f.write(KTAP_LOG)
        writer = ('import sys, time\n'
                  'data = open(sys.argv[1], "rb").read()\n'
                  'for i in range(0, len(data), 37):\n'
                  '    sys.stdout.buffer.write(data[i:i + 37]); sys.stdout.buffer.flush(); time.sleep(0.002)\n')
        for monitor, skip_aware in ((self.monitor, False), (self.skip_monitor, True)):
            child = pexpect.spawn(sys.executable, ['-c', writer, path], encoding='utf-8', timeout=20)
            try:
                child.expect(monitor['start'])
                results = []
                while True:
                    i = child.expect([pexpect.EOF, pexpect.TIMEOUT, monitor['end'], monitor['pattern']])
                    if i != 3:
                        break
                    g = child.match.groupdict()
                    results.append((lava_case_id(g['test_case_id']),
                                    monitor['fixupdict'].get(g['result'], g['result'])))
            finally:
                child.close(force=True)
            self.assertEqual(i, 2, 'the end marker must end the monitor')
            self.assertEqual(results, expected_results(KTAP_LOG, skip_aware))


def main():
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    print('ci-examples: %d passed, %d failed, %d skipped' % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
