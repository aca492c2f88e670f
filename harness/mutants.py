"""Mutation testing of the emulated PMU (`make mutants`, docs/mutants.md).

One QEMU holds every mutant (emu/qemu/build.sh --mutants, harness/mutgen.py);
X86PMU_MUTANT=id picks one at run time.  For each mutant run here:

1. coverage: the default suite once per profile of COVER_PROFILES on the
   unmutated binary (id 0), which must pass its expect file (else the
   profile is not used: the baseline is broken), recording per test which
   mutant sites ran (X86PMU_COVERAGE pairs each site with the serial lines
   it ran in: Cover, per_test_coverage) and the run's wall time;
2. each mutant runs, on every profile whose coverage run executed its site
   (cheapest first, plan), only the tests that executed it there (tests=,
   the expect file cut to them); a site that also ran at boot gets the
   whole suite after that; one executed by none is a survivor
   "not executed" without a run (the suite cannot see what never runs);
3. a run is tools/pmutest-run on that profile with its expect file, at
   -smp 2, stopped at the first result the expect file rejects: a FAIL
   verdict (a failed or missing check, a crash, a hang, a timeout) kills
   the mutant; a pass lets it survive there.  The timeout is generous:
   TIMEOUT_FACTOR times the selection's unmutated wall time, and at least
   MIN_TIMEOUT seconds;
4. harness/mutants-equivalent.tsv marks equivalent mutants (by identity,
   with the argument); they are not run;
5. make test's refusal cases (harness/emu_config.py: QEMU started with
   each limit of the pmu-* properties and the value just past it) run
   first on every mutant whose site one of them executes (their coverage,
   unmutated, once per binary): QEMU's start-up checks, which no boot of a
   profile can fail, are what they judge.  A failed case kills the mutant.

build/mutants/summary.txt: the first line
  mutants: N generated, K killed, E equivalent, S survived, score P%
(score = K / (N - E)), then one line per survivor.  With SAMPLE=N SEED=S
the same for a seeded random sample of N mutants.

  python3 -m harness.mutants [--sample N] [--seed S] [--jobs 2]
  python3 -m harness.mutants --check-sample   # make test's fixed sample
"""
import argparse
import bisect
import concurrent.futures
import fnmatch
import hashlib
import json
import os
import queue
import random
import re
import shutil
import subprocess
import sys
import threading
import time

from harness import _paths  # noqa: F401  (tools/ on sys.path)

ROOT = _paths.ROOT
OUT = os.path.join(ROOT, 'build', 'mutants')
RUNNER = os.path.join(ROOT, 'tools', 'pmutest-run')
EXPECT_DIR = os.path.join(ROOT, 'tests', 'expect', 'emu')
EQUIVALENT = os.path.join(ROOT, 'harness', 'mutants-equivalent.tsv')
EXPECTED_KILLS = os.path.join(ROOT, 'harness', 'mutants-expected.tsv')
SMP = 2
# The kernel's per-test budget (timeout=, seconds; default 10): every site
# of the mutant build costs a test of the mutant id, which makes the
# model's step mode (CMASK/INV/EDGE windows fold every instruction) about
# three times slower: pmu.count.cmask_inv_edge then needs more than 10 s of
# a loaded host.  A budget, not an assertion: a check's bounds are the same.
GUEST_BUDGET_S = 60
# A mutant's run may take TIMEOUT_FACTOR times its profile's unmutated run
# (at least MIN_TIMEOUT s); the runner gives a run still printing at its
# timeout more time (up to ten timeouts: pmutest.qemu.TIMEOUT_STRETCH_MAX),
# so only a guest that stopped printing is cut at the timeout itself.
MIN_TIMEOUT = 150
TIMEOUT_FACTOR = 3
# The profiles whose shapes execute the model's paths, most general first.
# A mutant runs on every one that executed its site (cheapest first) until
# one kills it.
COVER_PROFILES = ['intel-v4', 'amd-perfmon-v2', 'intel-v6-lnl-p', 'intel-v6-lnl-e', 'intel-arch-lbr-pebs5',
                  'skx-2s', 'intel-v2', 'amd-k8', 'intel-v1', 'intel-lbr-pebs-nehalem', 'amd-zen4-freeze',
                  'kvm-intel', 'kvm-amd', 'xen',
                  # Shapes the ones above miss: the client uncore, adaptive
                  # PEBS format 4, AMD's legacy and PerfCtrExtCore parts,
                  # v3, no full-width writes, a fixed-counter gap, the v6
                  # user-disable bits.
                  'skl-client-2s', 'intel-v5', 'amd-legacy', 'amd-extcore', 'intel-v3', 'intel-v4-no-fw-writes',
                  'intel-v5-fixed-gap', 'intel-v6-user-disable',
                  # Architectural PEBS (Clearwater Forest), Diamond Rapids'
                  # OMR and level-2 topdown, the SPR uncore found by
                  # discovery tables.
                  'intel-arch-pebs', 'intel-dmr', 'spr-2s-discovery',
                  # Each runs sites no profile above does (measured with
                  # --coverage-only --extra-profiles): the WRMSR-counted
                  # conventions, IBPB's CPUID bit, an event CPUID marks
                  # unavailable, VMware's hybrid freeze, a host counter
                  # KVM cannot schedule, delivery retiring.
                  'intel-v4-w1-disabling', 'intel-v4-ibpb', 'vmm-events-unavail', 'vmware-hybrid',
                  'kvm-busy-host', 'intel-v4-delivery', 'intel-v4-w0', 'intel-v4-w2',
                  # CPUID.0AH's vector length, GP width, fixed width.
                  'vmm-events-len2-gp32', 'vmm-events-none', 'vmm-fixed-width-1',
                  # A family 19h model outside Zen 4's ranges (Zen 3):
                  # amd_shape's range checks past model 10h-1Fh.
                  'amd-zen3']
# The other silicon and hypervisor profiles (--coverage-only
# --extra-profiles measures them): the first four ran no site the list
# above misses (measured on the mutant QEMU of de2b3f0); the last three
# were not measured yet.  Left out, so that a survivor does not pay for
# runs that execute nothing new.
EXTRA_PROFILES = ['kvm-old-pmi', 'kvm-sierra-forest', 'kvm-pebs-fmt4-no-baseline', 'vmm-fixed-none',
                  'vmm-gp-none', 'vmm-pebs-fmt5-no-baseline', 'vmm-amd-one-counter']
# A stratified sample's least share of each file (sample_of).
MIN_PER_FILE = 5
# make test's fixed sample: CHECK_SAMPLE kills of a measured sample (record).
CHECK_SAMPLE, CHECK_SEED = 30, 21
RECORD_MAX_S = 60


def log(msg):
    print('mutants: ' + msg if not msg.startswith('mutants') else msg, flush=True)


def build():
    """The mutant QEMU's path (built if need be) and its catalogue."""
    proc = subprocess.run([os.path.join(ROOT, 'emu', 'qemu', 'build.sh'), '--mutants'],
                          stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise SystemExit('mutants: emu/qemu/build.sh --mutants failed (above)')
    qemu = proc.stdout.strip().splitlines()[-1]
    return qemu, read_catalogue(os.path.join(os.path.dirname(qemu), 'mutants.tsv'))


def read_catalogue(path):
    rows = []
    with open(path) as f:
        head = f.readline().rstrip('\n').split('\t')
        for line in f:
            rows.append(dict(zip(head, line.rstrip('\n').split('\t'))))
    for r in rows:
        r['id'] = int(r['id'])
        r['line'] = int(r['line'])
    return rows


def read_keyed(path):
    """identity -> [fields...] of a TSV kept in the repository ('#' comments)."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            if not line.strip() or line.startswith('#'):
                continue
            fields = line.rstrip('\n').split('\t')
            out[fields[0]] = fields[1:]
    return out


def expect_file(profile):
    """A silicon profile's tests/expect/emu file; a hypervisor profile's
    rules as emu-matrix writes them (no failure, its deviations as XFAIL)."""
    from pmutest import emumatrix, profiles
    path = os.path.join(EXPECT_DIR, profile + '.expect')
    if os.path.exists(path):
        return path
    prof = {p.name: p for p in profiles.load_profiles()}[profile]
    if prof.kind != 'hypervisor':
        raise SystemExit('mutants: profile %s has no expect file' % profile)
    os.makedirs(os.path.join(OUT, 'expect'), exist_ok=True)
    return emumatrix.write_expect(os.path.join(OUT, 'expect', profile + '.expect'), prof,
                                  emumatrix.hypervisor_rules(prof), 'no failure, its deviations as XFAIL')


def run_suite(qemu, kernel, profile, mutant, logdir, name, timeout, coverage=None, tests=None, expect=None):
    """The default suite (or the tests of `tests`, a tests= selector) on one
    profile with one mutant. Returns (rc, seconds, tail).

    A mutant's run stops at the first result the expect file does not allow
    (tools/pmutest-run --stop-at-first-failure): from that line on the
    verdict is FAIL whatever follows, so the kill is the one the whole run
    would give.  The modes' timing checks (LOAD_SENSITIVE) do not stop it:
    a kill resting on them alone is run again (run_mutants)."""
    logf = os.path.join(logdir, name + '.log')
    env = dict(os.environ, X86PMU_MUTANT=str(mutant))
    env.pop('X86PMU_COVERAGE', None)
    if coverage:
        env['X86PMU_COVERAGE'] = coverage
    append = 'timeout=%d' % GUEST_BUDGET_S + (' tests=%s' % tests if tests else '')
    cmd = [sys.executable, RUNNER, '--quiet', '--kernel', kernel, '--profile', profile, '--qemu', qemu,
           '--smp', str(SMP), '--timeout', str(int(timeout)), '--log-file', logf,
           '--append', append, '--expect', expect or expect_file(profile)]
    if mutant and not coverage:
        cmd.append('--stop-at-first-failure')
        cmd += ['--stop-ignore=%s*' % p for p in LOAD_SENSITIVE]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                          errors='replace')
    out = [l for l in proc.stdout.splitlines() if l.strip()]
    return proc.returncode, time.monotonic() - t0, out[-6:]


# The lines of a serial log that belong to no test's own output: KTAP's
# frame (version, subtest, plan lines) and the results of blocks.
FRAME = re.compile(r'^(KTAP version \d+|# Subtest: .*|1\.\.\d+|(not )?ok \d+.*|)$')
# A tests= selector longer than this does not fit the kernel's option
# (boot/options.h: char tests[1024]): suites' globs, else the whole suite.
TESTS_ARG_MAX = 1000


class Cover:
    """One profile's unmutated run with coverage: which mutant sites ran,
    and in which tests.

    sites[id] is the set of tests (names without @cpu) during whose output
    the site ran (empty: only at boot or after the last result, which every
    run has too: the whole suite), or None for the whole suite: a run whose
    epochs could not be matched to its log (then every site is None, as
    before per-test coverage).  boot holds the sites that ran before the first test's
    block opened (QEMU start-up, the kernel's boot and PMU probe)."""

    def __init__(self, d):
        self.secs = d['secs']
        self.tests = d['tests']
        self.test_secs = d.get('test_secs', {})
        self.overhead = d.get('overhead', self.secs)
        self.exact = d.get('exact', False)
        self.sites = {int(k): (None if v is None else {self.tests[i] for i in v}) for k, v in d['sites'].items()}
        self.boot = {int(k) for k in d.get('boot', [])}
        self.ids = set(self.sites)

    def cost(self, sel):
        """Estimated wall seconds of a run of the selection (None: all)."""
        if sel is None:
            return self.secs
        return self.overhead + sum(self.test_secs.get(t, 0) for t in sel)


def per_test_coverage(ids_path, log_path, secs):
    """The Cover dict of a coverage run: its X86PMU_COVERAGE pairs
    ("id epoch": site id ran while the guest wrote serial line epoch,
    0-based) against its serial log.  A site that ran while line e was
    written belongs to the test whose result is the first at or after line
    e, and also to the test before when only KTAP's frame lies between that
    one's result and line e (its clean-up, and the next test's set-up).  A
    site that ran before the first test's block opened (the boot, its PMU
    probe) is in boot; after the last result, in no test."""
    from pmutest import ktap
    with open(log_path, 'rb') as f:
        raw = f.read()
    text = raw.decode('utf-8', 'replace')
    lines = text.split('\n')
    leaves = sorted((leaf.lineno, leaf.name) for leaf in ktap.parse_ktap(text).leaves)
    tests = sorted({n for _, n in leaves})
    index = {t: i for i, t in enumerate(tests)}
    linenos = [l for l, _ in leaves]
    names = [n for _, n in leaves]
    pairs, times, epochs = [], {}, None
    with open(ids_path) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == '#':
                epochs = int(w[2])
            elif w[0] == 't':
                times[int(w[1])] = float(w[2])
            else:
                pairs.append((int(w[0]), int(w[1]) if len(w) > 1 else None))
    exact = epochs is not None and epochs == raw.count(b'\n') and bool(leaves)
    frame = [bool(FRAME.match(ktap.clean_line(l).strip())) for l in lines]
    # The first test's suite opens with the first nested KTAP block: the
    # lines before it are the boot (its PMU probe), which every test needs.
    tests_start = next((k for k, l in enumerate(lines)
                        if l[:1] in (' ', '\t') and ktap.clean_line(l).strip().startswith('KTAP version')), None)

    memo = {}

    def tests_of(e):
        if e in memo:
            return memo[e]
        i = bisect.bisect_left(linenos, e + 1)
        if exact and e is not None and tests_start is not None and e < tests_start:
            sel = 'boot'
        elif exact and e is not None and tests_start is not None and i == len(linenos):
            sel = 'end'
        elif not exact or e is None or tests_start is None:
            sel = None
        elif i == 0:
            sel = {index[names[0]]}
        else:
            sel = {index[names[i]]}
            if all(frame[k - 1] for k in range(linenos[i - 1] + 1, e + 1)):
                sel.add(index[names[i - 1]])
        memo[e] = sel
        return sel
    sites, boot = {}, set()
    for n, e in pairs:
        sel = tests_of(e)
        if sel == 'boot':
            boot.add(n)
            sites.setdefault(n, set())
        elif sel == 'end':
            # After the last result (the summary, the exit): every run,
            # whatever its tests, ends so; a site that runs only there
            # runs the whole suite (an empty set, as at boot only).
            sites.setdefault(n, set())
        elif sel is None:
            sites[n] = None
        elif n not in sites:
            sites[n] = set(sel)
        elif sites[n] is not None:
            sites[n] |= sel
    test_secs = {}
    if exact and all(l in times for l in linenos):
        for i in range(1, len(linenos)):
            test_secs[names[i]] = test_secs.get(names[i], 0) + times[linenos[i]] - times[linenos[i - 1]]
    overhead = max(5.0, secs - sum(test_secs.values()))
    return {'secs': secs, 'tests': tests, 'test_secs': {k: round(v, 2) for k, v in test_secs.items()},
            'overhead': round(overhead, 1), 'exact': exact, 'format': 2, 'boot': sorted(boot),
            'sites': {str(k): (None if v is None else sorted(v)) for k, v in sites.items()}}


def tests_arg(sel, cover):
    """(tests= selector, the set of tests it runs) for a selection, or
    (None, None) for the whole suite."""
    if sel is None:
        return None, None
    names = sorted(sel)
    arg = ','.join(names)
    if len(arg) <= TESTS_ARG_MAX:
        return arg, set(names)
    suites = {}
    for t in names:
        suites.setdefault(t.rsplit('.', 1)[0], []).append(t)
    parts = sorted((s + '.*') if len(ts) > 1 else ts[0] for s, ts in suites.items())
    arg = ','.join(parts)
    if len(arg) <= TESTS_ARG_MAX:
        return arg, {t for t in cover.tests if any(fnmatch.fnmatchcase(t, p) for p in parts)}
    return None, None


def selected_expect(profile, runs):
    """The profile's expect file for a run of the tests `runs` only: its
    rules for tests that do not run are dropped (the runner fails a rule
    that matched nothing), and so are the exact summary and deviations
    lines, which count the whole suite.  Every rule for a test that runs
    is kept as it is."""
    path = expect_file(profile)
    if runs is None:
        return path
    key = hashlib.sha256(('%s\n%s' % (open(path).read(), '\n'.join(sorted(runs)))).encode()).hexdigest()[:16]
    d = os.path.join(OUT, 'expect-selected')
    os.makedirs(d, exist_ok=True)
    out = os.path.join(d, '%s-%s.expect' % (profile, key))
    if os.path.exists(out):
        return out
    kept = ['# %s for the tests that execute a mutant\'s site only (harness/mutants.py)\n' % path]
    with open(path) as f:
        for line in f:
            body = line.split('#', 1)[0].split()
            if not body or body[0] in ('cpus', 'exit'):
                kept.append(line)
            elif body[0] in ('summary', 'deviations'):
                continue
            elif any(fnmatch.fnmatchcase(t, body[0]) or fnmatch.fnmatchcase(t, body[0].split('@', 1)[0])
                     for t in runs):
                kept.append(line)
    with open(out + '.tmp', 'w') as f:
        f.writelines(kept)
    os.replace(out + '.tmp', out)
    return out


def coverage(qemu, kernel, profiles, jobs):
    """{profile: Cover} for the profiles whose baseline passes.

    Kept per binary and kernel (another kernel, with other checks, runs
    other sites) in build/mutants/coverage-<binary>-<kernel>.json.
    A baseline that failed only the modes' timing checks (LOAD_SENSITIVE,
    the host's load) is used: a mutant's kill resting on those alone is
    run again anyway.  A baseline that failed otherwise is tried once more
    in a later session, then left out (and said so)."""
    kid = kernel_id(kernel)
    covdir = os.path.join(OUT, 'coverage', kid)
    os.makedirs(covdir, exist_ok=True)
    path = os.path.join(OUT, 'coverage-%s-%s.json' % (os.path.basename(os.path.dirname(qemu)), kid))
    try:
        with open(path) as f:
            cst = json.load(f)
    except (OSError, ValueError):
        cst = {}
    broken = cst.setdefault('broken', {})
    got = cst.setdefault('per_test', {})

    def save():
        with open(path + '.tmp', 'w') as f:
            json.dump(cst, f)
        os.replace(path + '.tmp', path)

    for p, v in list(got.items()):
        if v.get('format') != 2 and os.path.exists(os.path.join(covdir, p + '.ids')):
            got[p] = per_test_coverage(os.path.join(covdir, p + '.ids'), os.path.join(covdir, p + '.log'),
                                       v['secs'])
            save()
    todo = [p for p in profiles if p not in got and (broken.get(p) or {}).get('tries', 0) < 2]

    def one(p):
        ids_path = os.path.join(covdir, p + '.ids')
        if os.path.exists(ids_path):
            os.unlink(ids_path)
        rc, secs, tail = run_suite(qemu, kernel, p, 0, covdir, p, 3600, coverage=ids_path)
        cov = None
        checks = failed_checks_log(os.path.join(covdir, p + '.log'), p) if rc == 1 else set()
        if (rc == 0 or load_only(checks)) and os.path.exists(ids_path):
            cov = per_test_coverage(ids_path, os.path.join(covdir, p + '.log'), secs)
        return p, rc, secs, cov, tail, checks
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        for p, rc, secs, cov, tail, checks in ex.map(one, todo):
            if not cov or not cov['sites']:
                log('baseline %s FAILED unmutated (rc %d, %.0f s): not used; %s' % (p, rc, secs, ' | '.join(tail)))
                broken[p] = {'tail': tail, 'tries': (broken.get(p) or {}).get('tries', 0) + 1}
                save()
                continue
            broken.pop(p, None)
            whole = sum(1 for v in cov['sites'].values() if v is None)
            log('baseline %s passed in %.0f s%s, %d mutant sites executed (%d at boot, %d after the last test)%s' % (
                    p, secs, (' but for the timing checks %s' % ','.join(sorted(checks))) if rc else '',
                    len(cov['sites']), len(cov['boot']), whole, '' if cov['exact'] else
                    '; its coverage epochs do not match its log: every site runs the whole suite'))
            got[p] = cov
            save()
    for p in profiles:
        if p in broken:
            log('baseline %s failed unmutated: not used (%s)' % (p, ' | '.join(broken[p]['tail'])[-200:]))
    return {p: Cover(v) for p, v in got.items() if p in profiles}


def state_path(qemu):
    return os.path.join(OUT, 'state-%s.json' % os.path.basename(os.path.dirname(qemu)))


STATE_FILE = None


def save_state(state):
    tmp = STATE_FILE + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(state, f, indent=0)
    os.replace(tmp, STATE_FILE)


def load_state(qemu):
    global STATE_FILE
    STATE_FILE = state_path(qemu)
    try:
        with open(STATE_FILE) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


# The modes' own run checks (monitor.*, sample.*) judge a run by its
# timing and failed unmutated under load in this harness's runs: a kill that
# rests on them alone is run once more (LOAD_RERUN).
LOAD_SENSITIVE = ('monitor.', 'sample.')
PROBLEM = re.compile(r'^\s*(?:unexpected \w+: )?([a-z0-9_]+(?:\.[a-z0-9_]+)+)(?:@\S+)?(?::| \(| expected|$)')


def failed_checks(m, prof, expect=None):
    """The checks the verdict names against the stored log of mutant m on prof."""
    return failed_checks_log(os.path.join(OUT, 'logs', 'm%d-%s.log' % (m['id'], prof)), prof, expect)


def failed_checks_log(logf, prof, expect=None):
    """The checks the verdict on a stored log names."""
    if not os.path.exists(logf):
        return set()
    proc = subprocess.run([sys.executable, RUNNER, '--log', logf, '--expect', expect or expect_file(prof),
                           '--cpus', str(SMP)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors='replace')
    names = set()
    for line in proc.stdout.splitlines():
        if 'expected' in line or line.strip().startswith('unexpected'):
            mm = PROBLEM.match(line)
            if mm:
                names.add(mm.group(1))
    return names


def load_only(names):
    return bool(names) and all(n.startswith(LOAD_SENSITIVE) for n in names)


def where(m):
    return '%s:%d' % (m['file'], m['line'])


# make test's refusal cases (make emu-config-test, harness/emu_config.py):
# QEMU started, unmutated, with each configuration at and past a limit of
# the pmu-* properties.  A mutant whose site one of them executes runs them
# before any boot (a few seconds): they are part of make test, so running
# them on a mutant is what the suite does.  Its plan key, and the prefix of
# the check a kill names.
CONFIG_TEST = 'emu-config'


def config_cover(qemu):
    """The mutant ids whose site a case of harness/emu_config.py executes
    (each case started unmutated with X86PMU_COVERAGE), kept per binary and
    set of cases in build/mutants/emu-config-coverage-<binary>.json."""
    from harness import emu_config
    key = hashlib.sha256(repr((emu_config.CASES, emu_config.names(), emu_config.readme_quirks()))
                         .encode()).hexdigest()[:12]
    path = os.path.join(OUT, 'emu-config-coverage-%s.json' % os.path.basename(os.path.dirname(qemu)))
    try:
        with open(path) as f:
            got = json.load(f)
        if got.get('cases') == key:
            return set(got['ids'])
    except (OSError, ValueError):
        pass
    ids = sorted(emu_config.coverage_ids(qemu))
    with open(path + '.tmp', 'w') as f:
        json.dump({'cases': key, 'ids': ids}, f)
    os.replace(path + '.tmp', path)
    log('emu-config cases executed %d mutant sites' % len(ids))
    return set(ids)


def run_config_test(qemu, mutant):
    """harness/emu_config.py's cases with the mutant, stopped at the first
    that fails: (rc, seconds, tail, checks), rc 1 when one failed."""
    import io
    from harness import emu_config
    env = dict(os.environ, X86PMU_MUTANT=str(mutant))
    buf = io.StringIO()
    t0 = time.monotonic()
    passed, failed, first = emu_config.run(qemu, env=env, stop_at_first_failure=True, out=buf)
    secs = time.monotonic() - t0
    bad = [l for l in buf.getvalue().splitlines() if l.startswith('not ok')]
    tail = bad or ['emu-config: %d passed, 0 failed, 0 skipped' % passed]
    return (1 if failed else 0), secs, tail, (['%s.%s' % (CONFIG_TEST, first)] if first else [])


# The configuration checks of emu/model/x86-pmu-config.c: functions of a
# const X86PMUConfig that return a refusal message (msg, put_str, put_num
# only build that message) and change nothing else.  A mutant of theirs
# that lets QEMU start on a profile leaves that profile's machine exactly
# the unmutated one: it survives there without a boot of the suite (the
# unmutated run of the profile passed); one that refuses the profile's
# configuration is booted as usual (the runner's FAIL in a second).
START_CHECKS = {'check_intel', 'check_amd', 'check_leaf23', 'check_lbr_pebs', 'x86pmu_config_check', 'msg',
                'put_str', 'put_num'}


START_CHECK_WHY = ('unobservable from a guest: a configuration check (no effect but a refusal at QEMU start) '
                   'that still accepts the configuration of every covered profile executing it; only a '
                   'configuration the manuals forbid, which no profile gives, could tell')
CONFIG_PASSED_WHY = ('missing check: a configuration check (no effect but a refusal at QEMU start) that still '
                     'accepts every covered profile, and make test\'s refusal cases (harness/emu_config.py) '
                     'all passed: no case sits at the boundary it moved')


def qemu_starts(qemu, profile, mutant):
    """Whether the mutant QEMU starts the profile's machine (-S, then quit)."""
    from pmutest import profiles
    prof = profiles.find_profile(profile)
    cmd = [qemu, '-nodefaults', '-no-reboot', '-display', 'none', '-machine', 'q35', '-m', '512M',
           '-smp', str(SMP), '-accel', 'tcg,thread=multi', '-cpu', prof.cpu] + profiles.qemu_args(prof) + \
        ['-S', '-monitor', 'stdio']
    env = dict(os.environ, X86PMU_MUTANT=str(mutant))
    env.pop('X86PMU_COVERAGE', None)
    try:
        proc = subprocess.run(cmd, input='quit\n', stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=env, timeout=300, errors='replace')
    except subprocess.TimeoutExpired:
        return False
    return proc.returncode == 0


def kernel_id(kernel):
    with open(kernel, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()[:12]


def profiles_of(m, cov):
    """The covered profiles whose unmutated run executed m's site."""
    return [p for p in COVER_PROFILES if p in cov and m['id'] in cov[p].ids]


WHOLE = ':whole'


def plan(m, cov):
    """Mutant m's runs, in the order they are tried while it survives: on
    every profile that executed its site, the tests that executed it there
    (cheapest profile first); then, for a site that also ran at boot (whose
    effect on the boot's PMU probe any test may see), the whole suite on
    those profiles.  Before them all, make test's refusal cases
    (CONFIG_TEST) when one of them executes the site.  Keys: the profile,
    or profile + WHOLE, or CONFIG_TEST."""
    first, then = [], []
    cfg = [CONFIG_TEST] if m['id'] in cov.get(CONFIG_TEST, ()) else []
    for p in profiles_of(m, cov):
        c = cov[p]
        sel = c.sites[m['id']]
        runs = tests_arg(sel or None, c)[1]
        first.append((round(c.cost(runs)), COVER_PROFILES.index(p), p))
        if runs is not None and m['id'] in c.boot:
            then.append((round(c.secs), COVER_PROFILES.index(p), p + WHOLE))
    return cfg + [k for _, _, k in sorted(first)] + [k for _, _, k in sorted(then)]


def selection(m, key, cov):
    """(tests= selector or None, the tests it runs or None, expect file,
    timeout) of mutant m's run `key` (plan): only the tests that executed
    its site there (Cover), or the whole suite."""
    prof, whole = key[:-len(WHOLE)] if key.endswith(WHOLE) else key, key.endswith(WHOLE)
    c = cov[prof]
    arg, runs = tests_arg(None if whole else (c.sites.get(m['id']) or None), c)
    return arg, runs, selected_expect(prof, runs), max(MIN_TIMEOUT, TIMEOUT_FACTOR * c.cost(runs))


def profile_of(key):
    return key[:-len(WHOLE)] if key.endswith(WHOLE) else key


def run_mutants(qemu, kernel, cat, selected, cov, jobs, state, every_profile=True, rerun_survivors=False,
                progress=None):
    """Run each selected mutant; results in state['results'][identity].

    A mutant runs first on the first covered profile that executed its
    site; while it survives it runs on the next one that executed it, until
    one kills it or none is left (every_profile).  All mutants' first runs
    come before any second run, so a run cut short still has a result for
    as many mutants as it could.  A kill resting only on the modes' timing
    checks (LOAD_SENSITIVE) is run once more on the same profile; if that
    run passes, the profile let the mutant live."""
    results = state.setdefault('results', {})
    kid = kernel_id(kernel)
    lock = threading.Lock()
    work = queue.PriorityQueue()
    seq = [0]

    def push(rank, m, prof, rerun=False):
        seq[0] += 1
        work.put((rank, seq[0], m['id'], m, prof, rerun))

    def next_profile(m, r):
        left = [k for k in plan(m, cov) if k not in r.get('tried', [])]
        return left[0] if left else None
    # In a seeded random order: a run cut short has results for a random
    # part of the sample, spread over its files, not for its first files.
    order = sorted(selected, key=lambda m: m['identity'])
    random.Random(len(order)).shuffle(order)
    for m in order:
        r = results.get(m['identity'])
        if r and r['outcome'] == 'survived' and rerun_survivors and r.get('kernel') != kid and r.get('tried'):
            r['tried'], r['runs'], r['kernel'] = [], [], kid    # the suite changed: survivors run again
        if r and r['outcome'] == 'killed':
            continue
        if not plan(m, cov):
            results[m['identity']] = {'outcome': 'survived', 'profile': '-', 'tried': [], 'kernel': kid,
                                      'why': 'not executed: no site run under the suite on %s'
                                             % ','.join(p for p in COVER_PROFILES if p in cov)}
            continue
        r = r or {'tried': []}
        prof = next_profile(m, r) if (every_profile or not r.get('tried')) else None
        if prof:
            push(len(r.get('tried', [])), m, prof)
    with lock:
        save_state(state)
        if progress:
            progress()
    logdir = os.path.join(OUT, 'logs')
    os.makedirs(logdir, exist_ok=True)
    count = [0]

    def record(m, key, rc, secs, tail, timeout, rerun, runs, expect, cfg_checks=None):
        prof = profile_of(key)
        r = dict(results.get(m['identity']) or {'tried': []})
        r.setdefault('tried', [])
        r['seconds'] = r.get('seconds', 0) + round(secs)
        r['kernel'] = kid
        r['profile'] = prof
        r['runs'] = r.get('runs', []) + [[prof, len(runs) if runs is not None else 'all', round(secs), rc]]
        again = None
        if rc == 1:
            checks = cfg_checks if cfg_checks is not None else sorted(failed_checks(m, prof, expect))
            if load_only(checks) and not rerun:
                r.update(outcome='survived', why='killed on %s only by timing checks %s: run again'
                         % (prof, ','.join(checks)))
                again = (m, key, True)
            else:
                timed = secs >= timeout
                r.update(outcome='killed', checks=checks,
                         why=('no verdict in %.0f s (the guest hung or QEMU looped)' % timeout) if timed
                         else ' | '.join(tail)[-300:])
                if rerun:
                    r['rerun'] = True
        elif rc == 0:
            r['tried'] = r['tried'] + [key]
            r['outcome'] = 'survived'
            nxt = next_profile(m, r) if every_profile else None
            left = [k for k in plan(m, cov) if k not in r['tried']]
            if m['function'] in START_CHECKS and CONFIG_TEST in r['tried']:
                r['why'] = CONFIG_PASSED_WHY + ' (started on %s%s)' % (', '.join(r['tried']), (
                    '; not yet tried on %s' % ', '.join(left)) if left else '')
            elif m['function'] in START_CHECKS:
                r['why'] = START_CHECK_WHY + ' (started on %s%s)' % (', '.join(r['tried']), (
                    '; not yet tried on %s' % ', '.join(left)) if left else '')
            else:
                r['why'] = 'missing check: passed %s%s' % (
                    ', '.join('on %s (%s)' % (x[0], 'the refusal cases' if x[0] == CONFIG_TEST else
                                              'the whole suite' if x[1] == 'all' else
                                              'the %s tests that execute the site' % x[1])
                              for x in r['runs'] if x[3] == 0),
                    ('; not yet run: %s' % ', '.join(k.replace(WHOLE, ' (the whole suite)') for k in left))
                    if left else ' (every covered profile that executes the site)')
            if rerun:
                r['why'] += '; the first run failed only timing checks, the re-run passed'
            if nxt:
                again = (m, nxt, False)
        else:
            r.update(outcome='error', why='runner error %d: %s' % (rc, ' | '.join(tail)))
        results[m['identity']] = r
        save_state(state)
        if progress:
            progress()
        return r, again

    def worker():
        while True:
            try:
                rank, _, _, m, prof, rerun = work.get_nowait()
            except queue.Empty:
                return
            key = prof
            prof = profile_of(key)
            cfg_checks = None
            if key == CONFIG_TEST:
                arg, runs, expect, timeout = None, None, None, MIN_TIMEOUT
                rc, secs, tail, cfg_checks = run_config_test(qemu, m['id'])
                with lock:
                    r, again = record(m, key, rc, secs, tail, timeout, False, runs, expect, cfg_checks)
                    count[0] += 1
                    log('[%d, %d queued] #%d %s %s (%s) on %s (the refusal cases): %s in %.0f s' % (
                        count[0], work.qsize(), m['id'], where(m), m['change'], m['function'], key,
                        r['outcome'], secs))
                    if again:
                        push(rank + 1, *again)
                continue
            arg, runs, expect, timeout = selection(m, key, cov)
            t0 = time.monotonic()
            if m['function'] in START_CHECKS and qemu_starts(qemu, prof, m['id']):
                rc, secs, tail = 0, time.monotonic() - t0, ['QEMU started: the check accepts this configuration']
            else:
                rc, secs, tail = run_suite(qemu, kernel, prof, m['id'], logdir, 'm%d-%s' % (m['id'], prof),
                                           timeout, tests=arg, expect=expect)
            with lock:
                r, again = record(m, key, rc, secs, tail, timeout, rerun, runs, expect)
                count[0] += 1
                log('[%d, %d queued] #%d %s %s (%s) on %s (%s): %s in %.0f s' % (
                    count[0], work.qsize(), m['id'], where(m), m['change'], m['function'], prof,
                    'the whole suite' if runs is None else '%d tests' % len(runs), r['outcome'], secs))
                if again:
                    push(rank + (0 if again[2] else 1), *again)
    threads = [threading.Thread(target=worker, daemon=True) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    # A worker that found the queue empty while another still runs a
    # mutant that may queue its next profile: start a fresh one for it.
    while any(t.is_alive() for t in threads):
        time.sleep(1)
        if not work.empty():
            threads = [t for t in threads if t.is_alive()]
            while len(threads) < max(1, jobs):
                t = threading.Thread(target=worker, daemon=True)
                t.start()
                threads.append(t)
    return results


# Why a site no covered profile executes cannot be seen from a guest, by
# function: the line of such a survivor says so (it still counts against
# the score: only an equivalent mutant leaves the denominator).
START_UP = ('unobservable from a guest: QEMU start-up, the checks and parsing of the -cpu properties that '
            'refuse a configuration before any guest runs; every covered profile passes them unmutated, so '
            'this is an error path of a command line no profile gives')
UNOBSERVABLE = dict.fromkeys(
    ('check_intel', 'check_amd', 'check_leaf23', 'check_lbr_pebs', 'x86pmu_config_check', 'msg', 'put_str',
     'put_num', 'pmu_config', 'pmu_conventions', 'x86_pmu_realize', 'x86pmu_parse_wrmsr_counted', 'prop_set'),
    START_UP)


def survivor_why(m, r):
    why = r.get('why', 'not run')
    if r.get('profile') == '-' and m['function'] in UNOBSERVABLE:
        return UNOBSERVABLE[m['function']]
    if m['function'] in START_CHECKS and r.get('outcome') == 'survived' and r.get('tried') \
            and not why.startswith(START_CHECK_WHY) and not why.startswith(CONFIG_PASSED_WHY):
        # Measured by a whole run before the QEMU-start shortcut: the same fact.
        return START_CHECK_WHY + ' (the default suite passed on %s)' % ', '.join(r['tried'])
    return why


def summary(selected, results, equivalent):
    # Mutants without a result (a run cut short) are left out of every
    # figure and named at the end.
    notrun = [m for m in selected if m['identity'] not in results and m['identity'] not in equivalent]
    selected = [m for m in selected if m not in notrun]
    n = len(selected)
    eq = [m for m in selected if m['identity'] in equivalent]
    killed = [m for m in selected if results.get(m['identity'], {}).get('outcome') == 'killed']
    errors = [m for m in selected if results.get(m['identity'], {}).get('outcome') == 'error']
    surv = [m for m in selected if m not in killed and m not in eq and m not in errors]
    denom = n - len(eq)
    score = 100.0 * len(killed) / denom if denom else 0.0
    lines = ['mutants: %d generated, %d killed, %d equivalent, %d survived, score %.0f%%'
             % (n, len(killed), len(eq), len(surv) + len(errors), score)]
    for m in sorted(surv + errors, key=lambda m: (m['file'], m['line'])):
        r = results.get(m['identity'], {})
        lines.append('%s\t%s\t%s (%s)\t%s' % (where(m), m['identity'], m['change'], m['function'],
                                            survivor_why(m, r)))
    for m in sorted(eq, key=lambda m: (m['file'], m['line'])):
        lines.append('%s\t%s\t%s (%s)\tequivalent: %s' % (where(m), m['identity'], m['change'], m['function'],
                                                         equivalent[m['identity']][-1]))
    for m in sorted(notrun, key=lambda m: (m['file'], m['line'])):
        lines.append('# not run (not in the figures above): %s\t%s\t%s (%s)' % (where(m), m['identity'], m['change'],
                                                                              m['function']))
    return lines


def unique_sites(cov):
    """Print, per profile, the sites it runs that no other measured profile
    does (and how many of them only it and the main list's miss)."""
    main = set().union(*(c.ids for p, c in cov.items() if p in COVER_PROFILES))
    for p, c in sorted(cov.items()):
        others = set().union(*(o.ids for q, o in cov.items() if q != p))
        whole = sum(1 for v in c.sites.values() if v is None)
        log('coverage %s: %d sites (%d run the whole suite), %d no other profile runs%s; %.0f s' % (
            p, len(c.ids), whole, len(c.ids - others),
            '' if p in COVER_PROFILES else ', %d not in COVER_PROFILES\' union' % len(c.ids - main), c.secs))


def write_summary(path, lines):
    with open(path + '.tmp', 'w') as f:
        f.write('\n'.join(lines) + '\n')
    os.replace(path + '.tmp', path)


def kernel_path():
    """A copy of build/pmutest.elf named by its hash: a rebuild of the
    kernel while mutants run changes neither their kernel nor coverage."""
    k = os.path.join(ROOT, 'build', 'pmutest.elf')
    if not os.path.exists(k):
        raise SystemExit('mutants: %s is not built (make kernel)' % k)
    copy = os.path.join(OUT, 'pmutest-%s.elf' % kernel_id(k))
    if not os.path.exists(copy):
        shutil.copyfile(k, copy + '.tmp')
        os.replace(copy + '.tmp', copy)
    return copy


def sample_of(cat, n, seed):
    """A seeded random sample of n mutants, stratified by file: each file
    gets its share of n (at least min(MIN_PER_FILE, its mutants), fewer
    when n is small), so that a small file (apic_deliver_pmi's 11 sites)
    is never left out by chance."""
    if not n or n >= len(cat):
        return list(cat)
    rng = random.Random(seed)
    by_file = {}
    for m in sorted(cat, key=lambda m: m['identity']):
        by_file.setdefault(m['file'], []).append(m)
    floor = max(1, min(MIN_PER_FILE, n // (2 * len(by_file))))
    quota = {f: min(len(ms), max(floor, round(n * len(ms) / len(cat)))) for f, ms in by_file.items()}
    while sum(quota.values()) > n:
        f = max((f for f in quota if quota[f] > floor), key=lambda f: (quota[f], f))
        quota[f] -= 1
    while sum(quota.values()) < n:
        f = max((f for f in quota if quota[f] < len(by_file[f])),
                key=lambda f: (len(by_file[f]) - quota[f], f))
        quota[f] += 1
    picked = []
    for f in sorted(by_file):
        picked += rng.sample(by_file[f], quota[f])
    return sorted(picked, key=lambda m: m['id'])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--sample', type=int, default=0, help='a seeded random sample of N mutants (0: all)')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--check-sample', action='store_true',
                    help="make test's fixed sample against harness/mutants-expected.tsv")
    ap.add_argument('--record-sample', action='store_true',
                    help="write harness/mutants-expected.tsv: CHECK_SAMPLE kills drawn (seed CHECK_SEED) "
                         "from the stored results of --sample N --seed S (runs nothing)")
    ap.add_argument('--qemu', metavar='PATH',
                    help='a built mutant QEMU (its mutants.tsv beside it) instead of emu/qemu/build.sh --mutants: '
                         'the summary or record of a measured binary')
    ap.add_argument('--kernel', metavar='ELF',
                    help='the kernel of a measured run (build/mutants/pmutest-<hash>.elf) instead of build/pmutest.elf: '
                         'resume that run with its coverage')
    ap.add_argument('--rerun', metavar='ID,...',
                    help='run these survivors (catalogue ids) again with the current kernel on --profile, '
                         'the whole default suite: a check written from a survivor, measured')
    ap.add_argument('--profile', metavar='NAME', help='with --rerun: the profile to run them on')
    ap.add_argument('--selected', action='store_true',
                    help='with --rerun: only the tests that execute each site (per-test coverage), '
                         'not the whole suite')
    ap.add_argument('--fresh', action='store_true', help='forget the stored results of this binary')
    ap.add_argument('--first-profile-only', action='store_true',
                    help='run a survivor only on the first profile that executes its site, not on every one')
    ap.add_argument('--coverage-only', action='store_true',
                    help='run the unmutated baselines (coverage) of every covered profile, nothing else')
    ap.add_argument('--extra-profiles', action='store_true',
                    help='with --coverage-only: also the profiles of EXTRA_PROFILES, and which sites each '
                         'runs that no other does')
    ap.add_argument('--rerun-survivors', action='store_true',
                    help='run again the survivors whose runs were with another kernel (the checks changed)')
    ap.add_argument('--progress-summary', metavar='FILE',
                    help='also write the summary to FILE after each result (a survivors list while it runs)')
    ap.add_argument('--summarize', action='store_true',
                    help='run nothing: the summary (and with --record-sample the record) from the stored results')
    a = ap.parse_args(argv)
    os.makedirs(OUT, exist_ok=True)
    kernel = a.kernel or kernel_path()
    if a.qemu:
        qemu, cat = a.qemu, read_catalogue(os.path.join(os.path.dirname(a.qemu), 'mutants.tsv'))
    else:
        qemu, cat = build()
    state = {} if a.fresh else load_state(qemu)
    if a.fresh:
        load_state(qemu)
    equivalent = read_keyed(EQUIVALENT)
    if a.check_sample:
        return check_sample(qemu, kernel, cat, a.jobs, state, equivalent)
    if a.rerun:
        return rerun(qemu, kernel, cat, state, [int(x) for x in a.rerun.split(',')], a.profile, a.selected)
    if a.record_sample:
        a.summarize = True
    selected = sample_of(cat, a.sample, a.seed)
    log('%d mutants in the build, %d selected (sample %s, seed %d); binary %s'
        % (len(cat), len(selected), a.sample or 'all', a.seed, qemu))
    if not a.summarize:
        if a.coverage_only:
            cov = coverage(qemu, kernel, COVER_PROFILES + (EXTRA_PROFILES if a.extra_profiles else []), a.jobs)
            unique_sites(cov)
            return 0
        cov = coverage(qemu, kernel, COVER_PROFILES, a.jobs)
        cov[CONFIG_TEST] = config_cover(qemu)
        def progress():
            if a.progress_summary:
                write_summary(a.progress_summary, summary(selected, state['results'], equivalent))
        run_mutants(qemu, kernel, cat, [m for m in selected if m['identity'] not in equivalent], cov, a.jobs,
                    state, every_profile=not a.first_profile_only, rerun_survivors=a.rerun_survivors,
                    progress=progress)
    lines = summary(selected, state.setdefault('results', {}), equivalent)
    write_summary(os.path.join(OUT, 'summary.txt'), lines)
    if a.progress_summary:
        write_summary(a.progress_summary, lines)
    print('\n'.join(lines))
    if a.record_sample:
        record(selected, state['results'], a.sample, a.seed)
    return 0


def record(selected, results, sample, seed):
    """make test's fixed sample: CHECK_SAMPLE of the kills of a measured
    sample, drawn with CHECK_SEED.  Only kills that a re-run can rely on:
    not by the timing checks alone, not by a hang (which would cost make
    test a timeout each time), and within RECORD_MAX_S (make test stays short)."""
    usable = []
    for m in selected:
        r = results.get(m['identity'], {})
        if r.get('outcome') != 'killed' or r.get('why', '').startswith('no verdict'):
            continue
        if load_only(r.get('checks') or []) or r.get('seconds', 0) > RECORD_MAX_S:
            continue
        usable.append((m, r))
    usable.sort(key=lambda mr: mr[0]['identity'])
    picked = random.Random(CHECK_SEED).sample(usable, min(CHECK_SAMPLE, len(usable)))
    with open(EXPECTED_KILLS, 'w') as f:
        f.write('# make test\'s fixed sample (docs/mutants.md): %d kills drawn with seed %d from the kills of\n'
                '# make mutants SAMPLE=%d SEED=%d (no hang, no timing-only kill, each within %d s).\n'
                '# identity<TAB>outcome<TAB>profile<TAB>where and what, written by\n'
                '# python3 -m harness.mutants --record-sample --sample %d --seed %d.\n'
                % (len(picked), CHECK_SEED, sample, seed, RECORD_MAX_S, sample, seed))
        now = current_identities()
        for m, r in sorted(picked, key=lambda mr: mr[0]['identity']):
            ident = m['identity']
            moved = now.get((m['function'], ident.rsplit(':', 1)[1]))
            note = ''
            if moved and moved != ident:
                # Measured on a binary from before its function moved to
                # another file: the same function, change and site.
                note = ' (measured as %s)' % ident
                ident = moved
            f.write('%s\tkilled\t%s\t%s %s (%s)%s\n' % (ident, r['profile'], where(m), m['change'],
                                                     m['function'], note))
    log('recorded %d kills in %s' % (len(picked), os.path.relpath(EXPECTED_KILLS, ROOT)))


def rerun(qemu, kernel, cat, state, ids, profile, selected=False):
    """Survivors run again on one profile with the current kernel (new
    checks): the whole default suite, or with selected only the tests that
    execute each one's site there (the profile's coverage with this kernel,
    measured first if need be).  The timeout is the runner's generous
    default for a suite whose baseline this kernel has not measured:
    MIN_TIMEOUT * 2.  A kill replaces the survival in the stored results,
    saying which kernel.  With profile CONFIG_TEST: make test's refusal
    cases (harness/emu_config.py) instead of a boot; the kernel plays no
    part there."""
    by_id = {m['id']: m for m in cat}
    results = state.setdefault('results', {})
    logdir = os.path.join(OUT, 'logs')
    os.makedirs(logdir, exist_ok=True)
    kid = kernel_id(kernel)
    config = profile == CONFIG_TEST
    cov = coverage(qemu, kernel, [profile], 1) if selected and not config else {}
    cfg_ids = config_cover(qemu) if config else set()
    for i in ids:
        m = by_id[i]
        arg, runs, expect = None, None, None
        if config and i not in cfg_ids:
            log('rerun #%d %s %s (%s): no case of %s executes its site: not run' % (
                i, where(m), m['change'], m['function'], CONFIG_TEST))
            continue
        if profile in cov and i in cov[profile].ids:
            arg, runs, expect, _ = selection(m, profile, cov)
        if config:
            rc, secs, tail, checks = run_config_test(qemu, i)
        else:
            rc, secs, tail = run_suite(qemu, kernel, profile, i, logdir, 'm%d-%s' % (i, profile),
                                       2 * MIN_TIMEOUT, tests=arg, expect=expect)
            checks = sorted(failed_checks(m, profile, expect)) if rc == 1 else []
        prev = results.get(m['identity'], {})
        if rc == 1 and not load_only(checks) and secs < 2 * MIN_TIMEOUT:
            results[m['identity']] = {'outcome': 'killed', 'profile': profile, 'checks': checks,
                                      'seconds': prev.get('seconds', 0) + round(secs), 'kernel': kid,
                                      'why': ('by the refusal cases (harness/emu_config.py) after it survived '
                                              'the suite with kernel %s: %s' % (
                                                  prev.get('kernel', '?'), ' | '.join(tail)[-200:])) if config else
                                             'with kernel %s (after it survived with %s): %s' % (
                                                 kid, prev.get('kernel', '?'), ' | '.join(tail)[-200:])}
        log('rerun #%d %s %s (%s) on %s (%s) with kernel %s: %s in %.0f s%s' % (
            i, where(m), m['change'], m['function'], profile,
            'the refusal cases' if config else 'the whole suite' if runs is None else '%d tests' % len(runs), kid,
            'killed' if rc == 1 else 'survived', secs,
            (' by ' + ','.join(checks)) if checks else ''))
        save_state(state)
    return 0


def current_identities():
    """(function, hash) -> identity of the repository's sources now: the
    hash does not name the file, so a function that moved keeps it."""
    from harness import mutgen
    cat, _ = mutgen.catalogue()
    return {(m.func, m.ident.rsplit(':', 1)[1]): m.ident for _, _, site in cat for m in site.mutants}


def check_sample(qemu, kernel, cat, jobs, state, equivalent):
    """make test: the fixed sample's mutants recorded as killed
    (harness/mutants-expected.tsv) must still be killed, each on its
    recorded profile.  One no longer generated (its site changed) is
    skipped and named, to be re-recorded."""
    expected = read_keyed(EXPECTED_KILLS)
    by_ident = {m['identity']: m for m in cat}
    results = state.setdefault('results', {})
    # The recorded kills themselves, by identity (file, function, a hash of
    # the site): a new seeded sample of a catalogue that grew elsewhere
    # would be other mutants, mostly not recorded, and check nothing.
    todo, skipped, passed, failed = [], 0, 0, 0
    for ident, rec in sorted(expected.items()):
        if rec[0] == 'killed' and ident in by_ident:
            todo.append((by_ident[ident], rec[1]))
    missing = [i for i, rec in expected.items() if rec[0] == 'killed' and i not in by_ident]
    for i in missing:
        log('%s: recorded as killed, no longer generated (the source changed): re-record it' % i)
    skipped += len(missing)
    # The profiles' baselines, for the timeouts (and to refuse a broken baseline).
    cov = coverage(qemu, kernel, sorted({p for _, p in todo if p != CONFIG_TEST}), jobs)
    logdir = os.path.join(OUT, 'logs')
    os.makedirs(logdir, exist_ok=True)

    def one(item):
        m, prof = item
        if prof == CONFIG_TEST:
            rc, secs, _, _ = run_config_test(qemu, m['id'])
            return m, prof, rc, secs
        if prof not in cov:
            return m, prof, None, 0
        # The tests that execute its site, then (a site that runs at boot
        # too) the whole suite; a site the profile does not run: the whole suite.
        keys = [k for k in plan(m, {prof: cov[prof]}) if profile_of(k) == prof] or [prof + WHOLE]
        total = 0
        for k in keys:
            arg, runs, expect, timeout = selection(m, k, cov)
            rc, secs, tail = run_suite(qemu, kernel, prof, m['id'], logdir, 'm%d' % m['id'], timeout, tests=arg,
                                       expect=expect)
            total += secs
            if rc != 0:
                break
        return m, prof, rc, total
    killed = 0
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        for m, prof, rc, secs in ex.map(one, todo):
            if rc is None:
                log('#%d %s: the baseline of %s fails: skipped' % (m['id'], m['identity'], prof))
                skipped += 1
            elif rc == 1:
                passed += 1
                killed += 1
            else:
                failed += 1
                log('REGRESSION: #%d %s %s (%s) on %s was killed, now %s' % (
                    m['id'], where(m), m['change'], m['function'], prof, 'survives' if rc == 0 else 'rc %d' % rc))
    n = len(todo)
    print('# the recorded kills of the fixed sample (harness/mutants-expected.tsv), run again')
    print('mutants: %d generated, %d killed, %d equivalent, %d survived, score %.0f%%'
          % (n, killed, 0, n - killed, 100.0 * killed / n if n else 0))
    print('mutants-sample: %d passed, %d failed, %d skipped' % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
