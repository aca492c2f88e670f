"""Tests for ci-examples/ and the per-environment expect files: the CI files
are valid YAML that say what they do and point at files that exist; the
expect files parse and name tests that exist; kvm-expect.sh picks the right
file for each host; the job summary counts what the JUnit XML says; and the
LAVA jobs, as LAVA's qemu device type renders them and as its test monitor
reads them (pexpect: re.DOTALL, earliest match wins, the buffer cut at
arbitrary points), turn a KTAP log into exactly the results the log holds.
The boot matrix boots the rendered LAVA command through a pty as well.

Run: PYTHONPATH=tools python3 -m pmutest.testing ci-examples/test_ci_examples.py
"""
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from pmutest import lava
from pmutest.expect import judge_all, parse_expect
from pmutest.junit import junit_xml
from pmutest.ktap import parse_ktap
from pmutest.verdict import verdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

try:
    import yaml
except ImportError:             # python3-yaml: only the YAML checks need it
    yaml = None
try:
    import pexpect
except ImportError:             # python3-pexpect: only the real-pexpect check needs it
    pexpect = None

XFAIL_ID = 'KVM-EMULATED-WRMSR-IGNORES-CMASK'


def read(*parts):
    with open(os.path.join(ROOT, *parts)) as f:
        return f.read()


def need_yaml(test):
    return unittest.skipUnless(yaml, 'python3-yaml not installed')(test)


# A complete, consistent report as the kernel prints it (bare LF, a LF before
# the version line), after firmware noise: a failure with its diagnostic,
# per-CPU blocks, a SKIP, a TIMEOUT, an XFAIL with its deviations block, a
# skipped suite, and a diagnostic that says "took 5 us".
KTAP_LOG = ('\x1b[2J\x1b[01;01HBdsDxe: starting Boot0001 "UEFI QEMU DVD-ROM"\r\n'
            'Welcome to GRUB!\r\n\r'
            '''
KTAP version 1
1..4
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
    ok 1 arch.msr_safe@cpu0-apic0
    ok 2 arch.msr_safe_fault@cpu0-apic0 # SKIP TCG raises no #GP for invalid MSR accesses
  ok 1 cpu0-apic0
    KTAP version 1
    # Subtest: cpu1-apic1
    1..2
    ok 1 arch.msr_safe@cpu1-apic1
    not ok 2 arch.msr_safe_fault@cpu1-apic1 # TIMEOUT 10000ms
  not ok 2 cpu1-apic1
not ok 2 arch
  KTAP version 1
  # Subtest: pmu.count
  1..1
    KTAP version 1
    # Subtest: cpu0-apic0
    1..1
    ok 1 pmu.count.fixed_counters@cpu0-apic0 # SKIP no architectural PMU (CPUID.0AH.EAX[7:0]=0)
  ok 1 cpu0-apic0 # SKIP
ok 3 pmu.count # SKIP
  KTAP version 1
  # Subtest: pmu.regs
  1..1
  ok 1 pmu.regs.cmask # XFAIL %s: cmask=255 counter read 1, expected 0
ok 4 pmu.regs
# deviations: 1 seen
# deviation %s cpus 0 tests pmu.regs.cmask: the enabling WRMSR is counted (source: Linux arch/x86/kvm/pmu.c)
# pmutest: 5 passed, 2 failed, 2 skipped, 1 xfail
# pmutest: end exit=0x11
''' % (XFAIL_ID, XFAIL_ID))


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
        kvm = '\n'.join(jobs['boot-kvm']['script'])
        self.assertIn('exit 77', kvm)
        self.assertIn('--accel kvm', kvm)
        self.assertIn('--expect auto', kvm)
        self.assertIn('--expect tests/expect/tcg.expect', '\n'.join(jobs['boot-tcg']['script']))
        self.assertEqual(jobs['boot-kvm']['allow_failure'], {'exit_codes': [77]})
        self.assertEqual(jobs['build-iso']['artifacts']['paths'], ['build/pmutest.iso'])

    @need_yaml
    def test_github(self):
        text = read('ci-examples', 'github-actions.yml')
        doc = yaml.safe_load(text)
        job = doc['jobs']['boot']
        steps = job['steps']
        uses = sorted({s['uses'] for s in steps if 'uses' in s})
        # Only actions whose names and inputs are certain.
        self.assertEqual(uses, ['actions/checkout@v4', 'actions/upload-artifact@v4'])
        self.assertEqual(doc['permissions'], {'contents': 'read'})
        # The pin and its reason: 24.04 ships only the 4M OVMF images, which
        # the tools accept (ci-examples/github-actions.yml, tools/install-deps.sh).
        self.assertEqual(job['runs-on'], 'ubuntu-24.04')
        self.assertIn('4M OVMF', text)
        self.assertIn('OVMF_CODE_4M.fd', read('tools', 'install-deps.sh'))
        self.assertIn('OVMF_CODE_4M.fd', read('tools', 'pmutest', 'qemu.py'))
        runs = '\n'.join(s.get('run', '') for s in steps)
        self.assertEqual(set(re.findall(r'--junit (\S+)', runs)), {'junit.xml'})
        self.assertIn('--accel ${{ matrix.accel }}', runs)
        self.assertIn('--expect auto', runs)
        upload = [s for s in steps if s.get('uses', '').startswith('actions/upload-artifact')][0]
        self.assertIn('junit.xml', upload['with']['path'].split())
        self.assertEqual(upload['if'], 'always()')
        self.assertEqual(job['strategy']['matrix']['accel'], ['tcg', 'kvm'])

    @need_yaml
    def test_github_kvm_leg_never_passes_without_kvm(self):
        """A KVM leg that cannot run is red (ci-examples/github-actions.yml)."""
        steps = yaml.safe_load(read('ci-examples', 'github-actions.yml'))['jobs']['boot']['steps']
        kvm = [s for s in steps if s.get('if') == "matrix.accel == 'kvm'"]
        self.assertEqual(len(kvm), 1)
        script = kvm[0]['run']
        self.assertIn('KERNEL=="kvm", GROUP="kvm", MODE="0666", OPTIONS+="static_node=kvm"', script)
        self.assertIn('udevadm trigger --name-match=kvm', script)
        self.assertIn('::error::', script)
        self.assertIn('exit 1', script)
        self.assertNotIn('::notice::', script)
        boot = [s for s in steps if '--accel' in s.get('run', '')]
        self.assertEqual(len(boot), 1)
        self.assertNotIn('if', boot[0])                # both legs boot: nothing skips it
        fake = tempfile.mkdtemp(prefix='gha-kvm-')
        self.addCleanup(shutil.rmtree, fake, True)
        # The check itself, with the udev commands stubbed out and no /dev/kvm.
        check = script[script.index('if [ ! -r /dev/kvm ]'):].replace('/dev/kvm', os.path.join(fake, 'kvm'))
        r = subprocess.run(['sh', '-c', check], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn('::error::', r.stdout)

    def test_referenced_files_exist(self):
        for name in ('gitlab-ci.yml', 'github-actions.yml', 'lava-job.yaml', 'lava-job-kvm.yaml',
                     'lava-job-tftp.yaml', 'README.md'):
            text = read('ci-examples', name)
            for path in set(re.findall(r'\b((?:tools|tests/expect|tests/logs|ci-examples)/[\w./-]+[\w])', text)):
                self.assertTrue(os.path.exists(os.path.join(ROOT, path)), '%s names %s' % (name, path))

    def test_scripts_are_executable(self):
        for name in ('kvm-expect.sh', 'junit-summary.py'):
            self.assertTrue(os.access(os.path.join(HERE, name), os.X_OK), name)


# ---------------------------------------------------------------- expect files

def registered_tests():
    names = set()
    for d in ('tests', os.path.join('tests', 'pmu')):
        for f in os.listdir(os.path.join(ROOT, d)):
            if f.endswith('.c'):
                for suite, name in re.findall(r'^KTEST\("([^"]+)",\s*(\w+)', read(d, f), re.M):
                    names.add('%s.%s' % (suite, name))
    return names


class ExpectFiles(unittest.TestCase):
    FILES = ('kvm-intel', 'kvm-amd', 'bare-metal', 'bare-metal-amd')

    def test_parse_and_match_registered_tests(self):
        tests = registered_tests()
        self.assertIn('boot.cmdline', tests)
        for f in self.FILES:
            exp = parse_expect(read('tests', 'expect', f + '.expect'), f)
            self.assertEqual([r.glob for r in exp.rules][:3], ['boot.*', 'arch.*', 'smp.*'], f)
            for rule in exp.rules:
                hits = [t for t in tests if re.fullmatch(re.escape(rule.glob).replace(r'\*', '.*'), t)]
                self.assertTrue(hits, '%s.expect: %s matches no registered test' % (f, rule.glob))

    def test_pmu_outcomes(self):
        amd_fixed = [('pmu.count.fixed_counters', 'skip'), ('pmu.count.fixed_vs_gp', 'skip'),
                     ('pmu.cross.*', 'skip')]
        # KVM's vPMU is version 2 at most: the v4-only checks must SKIP
        # (hardware-truth finding F9).
        v4_only = [('pmu.overflow.freeze_on_pmi', 'skip'), ('pmu.overflow.status_set', 'skip')]
        # ... nor version 6 (pmu.v6.*); FEP, TSX and the level-2 top-down
        # bytes (pmu.topdown.*) depend on the host.
        intel_newest = [('pmu.v6.*', 'skip'), ('pmu.v6.arch_events_8_12', 'pass|skip'),
                        ('pmu.v6.perf_metrics', 'pass|skip'),
                        ('pmu.v6.perf_metrics_mispredicts', 'pass|skip'),
                        ('pmu.v6.perf_metrics_frontend', 'pass|skip'), ('pmu.topdown.*', 'pass|skip'),
                        ('pmu.amd.*', 'skip'),
                        ('pmu.parity.emulated_instructions', 'pass|skip'), ('pmu.parity.tsx_cycles', 'pass|skip')]
        # AMD PerfMonV2 has a status-set register: only freeze_on_pmi skips.
        # PERF_METRICS' level 2 (pmu.topdown.*) is Intel's.
        amd_newest = [('pmu.overflow.freeze_on_pmi', 'skip'),
                      ('pmu.overflow.ref_cycles_pmi_while_running', 'skip'), ('pmu.v6.*', 'skip'),
                      ('pmu.topdown.*', 'skip'),
                      ('pmu.parity.tsx_cycles', 'skip'), ('pmu.parity.absent_fixed_counters', 'skip'),
                      ('pmu.parity.emulated_instructions', 'pass|skip'), ('pmu.amd.lbr_pmc_freeze', 'pass|skip'),
                      # KVM intercepts #UD on SVM: its VMRUN leaves no exact count.
                      ('pmu.amd.exception_is_a_branch', 'skip')]
        # KVM exposes neither the offcore response nor the uncore MSRs, and
        # a VM has no memory-controller counters.
        no_offcore_uncore = [('pmu.offcore.*', 'skip'), ('pmu.uncore.*', 'skip'), ('pmu.imc.*', 'skip')]
        # KVM passes Intel's LBRs and PEBS on where host and VMM have them;
        # on AMD it gives none; INUSE is version 4's; IBPB may be absent.
        intel_lbr_pebs = [('pmu.lbr.*', 'pass|skip'), ('pmu.pebs.*', 'pass|skip'),
                          ('pmu.regs.inuse_follows_selects', 'skip'),
                          ('pmu.parity.forced_branch_misses', 'pass|skip')]
        amd_lbr_pebs = [('pmu.lbr.*', 'skip'), ('pmu.pebs.*', 'skip'),
                        ('pmu.regs.inuse_follows_selects', 'skip'),
                        ('pmu.overflow.lvt_masked_at_pmi', 'skip'),
                        ('pmu.parity.forced_branch_misses', 'pass|skip'),
                        ('pmu.count.overflow_at_exactly_p', 'pass|xfail|skip')]
        # Architectural PEBS: KVM exposes none (CPUID.23H's PEBS sub-leaves).
        arch_pebs = [('pmu.arch_pebs.*', 'skip')]
        # FREEZE_WHILE_SMM: KVM does not offer it, AMD has none; bare
        # metal raises the SMI only under SeaBIOS.
        want = {'kvm-intel': [('pmu.*', 'pass|xfail')] + v4_only + intel_newest + no_offcore_uncore
                + intel_lbr_pebs + arch_pebs + [('pmu.smm.freeze_while_smm', 'skip')],
                'kvm-amd': [('pmu.*', 'pass|xfail')] + amd_fixed + amd_newest + no_offcore_uncore
                + amd_lbr_pebs + arch_pebs + [('pmu.smm.freeze_while_smm', 'skip')],
                # What a part's CPUID may leave out SKIPs; the rest must
                # pass (tools/tests/test_expect.py: every silicon shape fits).
                'bare-metal': [('pmu.*', 'pass|xfail'), ('pmu.amd.*', 'skip'),
                               ('pmu.aliases.amd_legacy_msrs', 'skip'),
                               ('pmu.parity.emulated_instructions', 'skip'),
                               ('pmu.count.cmask_inv_edge', 'pass|xfail|skip'),
                               ('pmu.count.beside_cmask', 'pass|xfail|skip'),
                               ('pmu.count.read_while_counting', 'pass|xfail|skip'),
                               ('pmu.count.branch_kinds', 'pass|xfail|skip'),
                               ('pmu.overflow.freeze_on_pmi', 'pass|xfail|skip'),
                               ('pmu.overflow.status_set', 'pass|xfail|skip'),
                               ('pmu.regs.inuse_follows_selects', 'pass|xfail|skip'),
                               ('pmu.lbr.*', 'pass|xfail|skip'), ('pmu.pebs.*', 'pass|xfail|skip'),
                               ('pmu.arch_pebs.*', 'pass|xfail|skip'), ('pmu.topdown.*', 'pass|xfail|skip'),
                               ('pmu.v6.*', 'pass|xfail|skip'), ('pmu.parity.tsx_cycles', 'pass|skip'),
                               ('pmu.parity.forced_branch_misses', 'pass|skip'),
                               ('pmu.offcore.*', 'pass|xfail|skip'), ('pmu.uncore.*', 'pass|xfail|skip'),
                               ('pmu.imc.*', 'pass|xfail|skip'), ('pmu.smm.freeze_while_smm', 'pass|skip')]}
        for f, rules in want.items():
            exp = parse_expect(read('tests', 'expect', f + '.expect'), f)
            self.assertEqual([(r.glob, '|'.join(r.outcomes)) for r in exp.rules if r.glob.startswith('pmu')],
                             rules, f)
            self.assertIsNone(exp.exit, '%s: no QEMU status to expect on hardware or a real vPMU' % f)

    def test_v4_checks_need_v4(self):
        """The checks the KVM files SKIP: status-set needs a status-set
        register (Intel v4, AMD PerfMonV2), which KVM's Intel guests (v2)
        lack; freeze needs an Intel PMU of v2 or later and SKIPs under a
        hypervisor that refuses DEBUGCTL.FREEZE_PERFMON_ON_PMI (KVM does),
        while bare metal that refuses it FAILs."""
        source = read('tests', 'pmu', 'pmu_overflow.c')
        self.assertRegex(source, r'KTEST\("pmu\.overflow",\s*freeze_on_pmi,\s*needs_pmi_freeze')
        self.assertRegex(source, r'KTEST\("pmu\.overflow",\s*status_set,\s*needs_status_set')
        self.assertRegex(source, r'if \(pmu_caps\(\)->hypervisor\)\s*ktest_skip\(\s*"IA32_DEBUGCTL refused')
        self.assertIn('global_status_set', source)


# ---------------------------------------------------------------- kvm-expect.sh

class KvmExpect(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='kvm-expect.')
        self.addCleanup(shutil.rmtree, self.tmp, True)
        os.makedirs(os.path.join(self.tmp, 'sys', 'module', 'kvm', 'parameters'))

    def pick(self, vendor, flags, enable_pmu='Y', hybrid=False, perf_cpu=True, qemu=''):
        cpuinfo = os.path.join(self.tmp, 'cpuinfo')
        with open(cpuinfo, 'w') as f:
            for cpu in range(2):
                f.write('processor\t: %d\nvendor_id\t: %s\nflags\t\t: %s\n\n' % (cpu, vendor, flags))
        with open(os.path.join(self.tmp, 'sys', 'module', 'kvm', 'parameters', 'enable_pmu'), 'w') as f:
            f.write(enable_pmu + '\n')
        pmus = os.path.join(self.tmp, 'sys', 'bus', 'event_source', 'devices')
        for pmu in ['software'] + (['cpu_core', 'cpu_atom'] if hybrid else ['cpu'] if perf_cpu else []):
            os.makedirs(os.path.join(pmus, pmu), exist_ok=True)
        env = dict(os.environ, PMUTEST_CPUINFO=cpuinfo, PMUTEST_SYSFS=os.path.join(self.tmp, 'sys'),
                   PMUTEST_QEMU=qemu)
        out = subprocess.run([os.path.join(HERE, 'kvm-expect.sh')], env=env, stdout=subprocess.PIPE,
                             check=True, text=True).stdout.strip()
        self.assertTrue(os.path.isfile(out), out)
        self.assertEqual(os.path.dirname(out), os.path.join(ROOT, 'tests', 'expect'))
        return os.path.basename(out)

    def test_intel_with_pmu(self):
        self.assertEqual(self.pick('GenuineIntel', 'fpu vmx arch_perfmon pdcm'), 'kvm-intel.expect')

    def test_intel_runner_without_pmu(self):
        self.assertEqual(self.pick('GenuineIntel', 'fpu vmx pdcm'), 'kvm-nopmu.expect')

    def test_enable_pmu_off(self):
        self.assertEqual(self.pick('GenuineIntel', 'arch_perfmon', enable_pmu='N'), 'kvm-nopmu.expect')

    def test_hybrid_host(self):
        self.assertEqual(self.pick('GenuineIntel', 'arch_perfmon', hybrid=True), 'kvm-nopmu.expect')

    def test_amd(self):
        self.assertEqual(self.pick('AuthenticAMD', 'svm perfctr_core perfmon_v2'), 'kvm-amd.expect')
        # No PerfMonV2 in the guest (the host, KVM before 6.4 or the VMM lacks it).
        self.assertEqual(self.pick('AuthenticAMD', 'svm perfctr_core'), 'kvm-amd-v1.expect')
        # The VMM: one whose -cpu help has no perfmon-v2 (QEMU 7.2) gives none.
        for flags, want in (('svm perfctr-core', 'kvm-amd-v1.expect'),
                            ('svm perfctr-core perfmon-v2', 'kvm-amd.expect')):
            qemu = os.path.join(self.tmp, 'qemu')
            with open(qemu, 'w') as f:
                f.write('#!/bin/sh\n[ "$1" = --version ] && echo "QEMU emulator version 9"\n'
                        'printf "Recognized CPUID flags:\\n  %s\\n"\n' % flags)
            os.chmod(qemu, 0o755)
            self.assertEqual(self.pick('AuthenticAMD', 'svm perfctr_core perfmon_v2', qemu=qemu), want, flags)

    def test_host_perf_has_no_core_pmu(self):
        self.assertEqual(self.pick('AuthenticAMD', 'svm', perf_cpu=False), 'kvm-nopmu.expect')


# ---------------------------------------------------------------- junit-summary.py

def summary_of(text, expect_text):
    tmp = tempfile.mkdtemp(prefix='junit.')
    try:
        log, exp = parse_ktap(text), parse_expect(expect_text, 'x.expect')
        path = os.path.join(tmp, 'junit.xml')
        with open(path, 'w') as f:
            f.write(junit_xml(log, verdict(log, None, exp, None), text, exp))
        r = subprocess.run([sys.executable, os.path.join(HERE, 'junit-summary.py'), path],
                           stdout=subprocess.PIPE, text=True)
        return r.returncode, r.stdout
    finally:
        shutil.rmtree(tmp)


class JunitSummary(unittest.TestCase):
    def test_counts_leaves_as_judged(self):
        rc, md = summary_of(KTAP_LOG, 'boot.memory_map fail\narch.msr_safe_fault* any\n')
        self.assertEqual(rc, 0)
        lines = md.splitlines()
        # 9 leaves: 4 passed, the timeout and memory_map foreseen, 2 skips,
        # 1 XFAIL; the verdict case is the verdict, not a tenth test.
        self.assertEqual(lines[0], '### pmutest: verdict PASS; 4 passed, 0 failed, 2 skipped, 1 xfail, '
                                   '2 expected failures')
        self.assertIn('| `pmu.regs.cmask` | XFAIL %s: cmask=255 counter read 1, expected 0 |' % XFAIL_ID, lines)
        self.assertIn('| `boot.memory_map` | expected fail (x.expect:1): not ok |', lines)
        self.assertIn('| `arch.msr_safe_fault@cpu1-apic1` | expected timeout (x.expect:2): TIMEOUT 10000ms |',
                      lines)
        self.assertIn('| `arch.msr_safe_fault@cpu0-apic0` | TCG raises no #GP for invalid MSR accesses |', lines)

    def test_unexpected_outcomes_and_the_verdict(self):
        rc, md = summary_of(KTAP_LOG, 'boot.cmdline fail\nboot.memory_map fail\narch.* any\n')
        lines = md.splitlines()
        self.assertEqual(lines[0], '### pmutest: verdict FAIL; 3 passed, 1 failed, 2 skipped, 1 xfail, '
                                   '2 expected failures')
        self.assertIn('- boot.cmdline: expected fail (x.expect:1), got pass', lines)
        self.assertIn('| `boot.cmdline` | boot.cmdline: expected fail (x.expect:1), got pass (ok) |', lines)

    def test_groups_many_skips(self):
        import importlib                       # the summary as a module, for its grouping alone
        sys.path.insert(0, HERE)
        try:
            summarize = importlib.import_module('junit-summary').summarize
        finally:
            sys.path.remove(HERE)
        cases = ''.join('<testcase name="t%d"><skipped message="same"/></testcase>' % i for i in range(5))
        md = summarize('<testsuites><testsuite>%s</testsuite></testsuites>' % cases)
        self.assertIn('| `t0`, `t1`, `t2` and 2 more | same |', md.splitlines())
        self.assertIn('verdict unknown (no verdict case)', md.splitlines()[0])

    def test_bad_input(self):
        bad = os.path.join(tempfile.mkdtemp(prefix='junit.'), 'x.xml')
        self.addCleanup(shutil.rmtree, os.path.dirname(bad), True)
        with open(bad, 'w') as f:
            f.write('<not xml')
        self.assertEqual(subprocess.run([sys.executable, os.path.join(HERE, 'junit-summary.py'), bad],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode, 2)


# ---------------------------------------------------------------- LAVA

def chunkings(text):
    rng = random.Random(6)
    cuts = sorted(rng.sample(range(1, len(text)), 60))
    yield 'one read', [text]
    yield 'one byte per read', list(text)
    yield 'random reads', [text[a:b] for a, b in zip([0] + cuts, cuts + [len(text)])]
    yield 'line by line', text.splitlines(keepends=True)


def through_a_pty(text):
    return text.replace('\r\n', '\n').replace('\n', '\r\n')


class LavaJobs(unittest.TestCase):
    def setUp(self):
        if yaml is None:
            self.skipTest('python3-yaml not installed')
        self.tcg_text = read('ci-examples', 'lava-job.yaml')
        self.tcg = yaml.safe_load(self.tcg_text)
        self.kvm = yaml.safe_load(read('ci-examples', 'lava-job-kvm.yaml'))
        self.monitor = lava.job_parts(self.tcg)[2][0]

    def test_the_tftp_job(self):
        """The network-boot job: LAVA's x86 device type, a TFTP deploy of the
        kernel alone, iPXE commands that load it and boot, and the same
        monitor as the QEMU jobs; harness/netboot.py renders the commands
        as LAVA does (the boot matrix boots them: netboot-lava-tftp-commands)."""
        if ROOT not in sys.path:
            sys.path.insert(0, ROOT)        # the harness package sits at the top
        import harness.netboot as netboot
        doc = yaml.safe_load(read('ci-examples', 'lava-job-tftp.yaml'))
        self.assertEqual([list(a)[0] for a in doc['actions']], ['deploy', 'boot', 'test'])
        deploy, boot = doc['actions'][0]['deploy'], doc['actions'][1]['boot']
        self.assertEqual((doc['device_type'], deploy['to'], boot['method']), ('x86', 'tftp', 'ipxe'))
        self.assertTrue(deploy['kernel']['url'].endswith('/pmutest.elf'))
        self.assertNotIn('ramdisk', deploy)
        self.assertEqual(doc['actions'][2], self.tcg['actions'][2], 'the QEMU jobs\' monitor')
        script = netboot.lava_script(os.path.join(HERE, 'lava-job-tftp.yaml'), kernel='k/pmutest.elf')
        self.assertEqual(script.splitlines(), ['#!ipxe', 'dhcp net0',
                                               'kernel tftp://10.0.2.2/k/pmutest.elf exit=reboot', 'boot'])

    def test_job_shape(self):
        for doc in (self.tcg, self.kvm):
            self.assertEqual([list(a)[0] for a in doc['actions']], ['deploy', 'boot', 'test'])
            deploy, boot = doc['actions'][0]['deploy'], doc['actions'][1]['boot']
            self.assertEqual((deploy['to'], boot['method'], boot['media']), ('tmpfs', 'qemu', 'tmpfs'))
            self.assertIn('{iso}', deploy['images']['iso']['image_arg'])
            self.assertNotIn('uefi', deploy)
            self.assertEqual(doc['context']['arch'], 'amd64')
            for key in ('job_name', 'device_type', 'timeouts', 'visibility'):
                self.assertIn(key, doc)
        self.assertEqual(self.tcg['actions'][2], self.kvm['actions'][2], 'one monitor for both jobs')
        self.assertNotEqual(self.tcg['job_name'], self.kvm['job_name'])

    def test_the_tcg_job_renders_tcg(self):
        """The stock template ignores cpu and machine for amd64 (tools/pmutest/lava.py
        names it) and adds -cpu host -enable-kvm unless no_kvm."""
        cmd = lava.qemu_command(self.tcg, 'p.iso')
        self.assertNotIn('-enable-kvm', cmd)
        self.assertNotIn('host', cmd)
        self.assertEqual(cmd[cmd.index('-cpu') + 1], 'max')
        self.assertEqual(cmd[cmd.index('-machine') + 1], 'q35')
        self.assertEqual(cmd.count('-cpu'), 1)
        self.assertEqual(cmd[-4:], ['-drive', 'file=p.iso,media=cdrom,readonly=on', '-boot', 'd'])
        self.assertNotIn('cpu', self.tcg['context'])       # would be ignored: it must not pretend
        self.assertNotIn('machine', self.tcg['context'])

    def test_the_kvm_job_renders_kvm(self):
        cmd = lava.qemu_command(self.kvm, 'p.iso')
        self.assertEqual(cmd[1:4], ['-cpu', 'host', '-enable-kvm'])
        self.assertEqual(cmd[cmd.index('-machine') + 1], 'q35')
        self.assertEqual(cmd.count('-cpu'), 1)

    def test_the_uefi_line_is_a_bios_option(self):
        """LAVA's uefi: image becomes -L DIR and
        QEMU then boots SeaBIOS; the job's hint passes OVMF as -bios (the
        boot matrix boots it and checks that OVMF ran)."""
        from pmutest.matrix import lava_uefi_option
        option = lava_uefi_option(self.tcg_text)
        self.assertEqual(option, '-bios /usr/share/ovmf/OVMF.fd')
        cmd = lava.qemu_command(self.tcg, 'p.iso', extra=[option])
        self.assertEqual(cmd[cmd.index('-bios') + 1], '/usr/share/ovmf/OVMF.fd')
        self.assertNotIn('-L', cmd)

    def test_start_and_end_match_the_kernel_lines(self):
        self.assertTrue(re.search(self.monitor['start'], 'KTAP version 1\n'))
        for code in ('0x10', '0x11', '0x26', '0x3f'):
            self.assertTrue(re.search(self.monitor['end'], '# pmutest: end exit=%s\n' % code), code)

    def test_the_monitor_reports_every_result(self):
        log = parse_ktap(KTAP_LOG)
        self.assertEqual(log.errors, [])
        want = lava.expected_results(log, KTAP_LOG, self.monitor['fixupdict'])
        self.assertEqual(len(want), 9 + 4)              # leaves + top-level suite lines
        for capture, text in (('file', KTAP_LOG), ('pty', through_a_pty(KTAP_LOG))):
            for how, chunks in chunkings(text):
                m = lava.run_monitor(chunks, self.monitor)
                self.assertEqual(m.bad, [], (capture, how))
                self.assertTrue(m.ended, (capture, how))
                self.assertEqual(m.results, want, (capture, how))

    def test_skips_and_xfails_are_not_passes(self):
        """The SKIP-aware pattern is the job's (ci-examples/lava-job.yaml)."""
        got = lava.run_monitor([KTAP_LOG], self.monitor).results
        self.assertIn(('pmu_count_fixed_counters_cpu0_apic0', 'skip'), got)
        self.assertIn(('pmu_count', 'skip'), got)
        self.assertIn(('arch_msr_safe_fault_cpu0_apic0', 'skip'), got)
        self.assertIn(('arch_msr_safe_fault_cpu1_apic1', 'fail'), got)  # the TIMEOUT
        self.assertIn(('pmu_regs_cmask', 'skip'), got)               # the XFAIL
        self.assertNotIn(('pmu_count_fixed_counters', 'pass'), got)
        self.assertFalse([case for case, _ in got if case.startswith('cpu')])

    def test_per_cpu_results_are_distinct_test_cases(self):
        """LAVA's dispatcher keeps the last
        result per case name and the pattern sees one line at a time, so
        the kernel names each per-CPU leaf with its block; a failure on one
        CPU stays a failure whatever the other CPUs report."""
        m = lava.run_monitor([KTAP_LOG], self.monitor)
        self.assertEqual(m.report['arch_msr_safe_fault_cpu0_apic0'], 'skip')
        self.assertEqual(m.report['arch_msr_safe_fault_cpu1_apic1'], 'fail')
        self.assertEqual(m.report['arch'], 'fail')
        self.assertNotIn('arch_msr_safe_fault', m.report)

    def test_an_older_log_without_cpu_names_still_matches(self):
        # Logs from kernels before the per-CPU names: the leaves collapse
        # (the last CPU wins the dict) but every row reaches the server.
        old = KTAP_LOG.replace('@cpu0-apic0', '').replace('@cpu1-apic1', '')
        m = lava.run_monitor([old], self.monitor)
        self.assertIn(('arch_msr_safe_fault', 'fail'), m.results)
        self.assertIn(('arch_msr_safe_fault', 'skip'), m.results)
        self.assertEqual(m.report['arch'], 'fail')

    def test_readme_shows_the_pattern(self):
        self.assertIn(self.monitor['pattern'], read('ci-examples', 'README.md'))

    def test_the_unanchored_pattern_loses_results(self):
        # Why the pattern ends in [^\r\n]*[\r\n] and not .*: with re.DOTALL,
        # ".*" after a directive swallows every later result already received.
        naive = dict(self.monitor, pattern=r'(?P<result>ok|not ok) \d+ (?P<test_case_id>[a-z0-9_.]+(?:@cpu[0-9]+-apic[0-9]+)?)'
                                           r'( # (SKIP|TIMEOUT).*)?')
        got = lava.run_monitor([KTAP_LOG], naive).results
        self.assertLess(len(got), len(lava.expected_results(parse_ktap(KTAP_LOG), KTAP_LOG, {})))

    @unittest.skipUnless(pexpect, 'python3-pexpect not installed')
    def test_real_pexpect_over_a_pty(self):
        """The monitor through pexpect itself, over a pty, in small writes,
        with LAVA's settings: the terminal turns each LF into CR LF."""
        tmp = tempfile.mkdtemp(prefix='lava-monitor.')
        self.addCleanup(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, 'serial.log')
        with open(path, 'w', newline='') as f:
            f.write(KTAP_LOG)
        writer = ('import sys, time\n'
                  'data = open(sys.argv[1], "rb").read()\n'
                  'for i in range(0, len(data), 37):\n'
                  '    sys.stdout.buffer.write(data[i:i + 37]); sys.stdout.buffer.flush(); time.sleep(0.002)\n')
        child = pexpect.spawn(sys.executable, ['-c', writer, path], encoding='utf-8', timeout=20,
                              searchwindowsize=4000, maxread=2000, codec_errors='replace')
        try:
            child.expect(self.monitor['start'])
            results = []
            while True:
                i = child.expect([pexpect.EOF, pexpect.TIMEOUT, self.monitor['end'], self.monitor['pattern']])
                if i != 3:
                    break
                g = child.match.groupdict()
                results.append((lava.case_id(g['test_case_id']),
                                self.monitor['fixupdict'].get(g['result'], g['result'])))
        finally:
            child.close(force=True)
        self.assertEqual(i, 2, 'the end marker must end the monitor')
        self.assertEqual(results, lava.expected_results(parse_ktap(KTAP_LOG), KTAP_LOG, self.monitor['fixupdict']))

    def test_judged_outcomes_agree_with_the_monitor(self):
        """What LAVA reports per leaf is what pmutest-run's judgement sees
        with no expect file, outcome by outcome."""
        log = parse_ktap(KTAP_LOG)
        lava_word = {'pass': 'pass', 'fail': 'fail', 'timeout': 'fail', 'skip': 'skip', 'xfail': 'skip'}
        leaves = [(lava.case_id(j.leaf.identity), lava_word[j.leaf.outcome]) for j in judge_all(log, parse_expect(''))]
        got = lava.run_monitor([KTAP_LOG], self.monitor).results
        self.assertEqual([r for r in got if r[0] not in ('boot', 'arch', 'pmu_count', 'pmu_regs')], leaves)
