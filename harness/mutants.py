"""Mutation testing of the emulated PMU (`make mutants`, docs/mutants.md).

One QEMU holds every mutant (emu/qemu/build.sh --mutants, harness/mutgen.py);
X86PMU_MUTANT=id picks one at run time.  For each mutant run here:

1. coverage: the default suite once per profile of COVER_PROFILES on the
   unmutated binary (id 0), which must pass its expect file (else the
   profile is not used: the baseline is broken), recording the ids of the
   mutants whose site ran (X86PMU_COVERAGE) and the run's wall time;
2. each mutant runs on the first profile, in COVER_PROFILES' order, whose
   coverage run executed its site; one executed by none is a survivor
   "not executed" without a run (the suite cannot see what never runs);
3. a run is tools/pmutest-run on that profile with its expect file, at
   -smp 2: a FAIL verdict (a failed or missing check, a crash, a hang, a
   timeout) kills the mutant; a pass lets it survive.  The timeout is
   generous: TIMEOUT_FACTOR times the profile's baseline wall time, and at
   least MIN_TIMEOUT seconds;
4. harness/mutants-equivalent.tsv marks equivalent mutants (by identity,
   with the argument); they are not run.

build/mutants/summary.txt: the first line
  mutants: N generated, K killed, E equivalent, S survived, score P%
(score = K / (N - E)), then one line per survivor.  With SAMPLE=N SEED=S
the same for a seeded random sample of N mutants.

  python3 -m harness.mutants [--sample N] [--seed S] [--jobs 2]
  python3 -m harness.mutants --check-sample   # make test's fixed sample
"""
import argparse
import concurrent.futures
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
# The profiles whose shapes execute the model's paths, most general first:
# a mutant runs on the first one that executed its site.
COVER_PROFILES = ['intel-v4', 'amd-perfmon-v2', 'intel-v6-lnl-p', 'intel-v6-lnl-e', 'intel-arch-lbr-pebs5',
                  'skx-2s', 'intel-v2', 'amd-k8', 'intel-v1', 'intel-lbr-pebs-nehalem', 'amd-zen4-freeze',
                  'kvm-intel', 'kvm-amd', 'xen']
# A stratified sample's least share of each file (sample_of).
MIN_PER_FILE = 5
# make test's fixed sample.
CHECK_SAMPLE, CHECK_SEED = 30, 21


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


def run_suite(qemu, kernel, profile, mutant, logdir, name, timeout, coverage=None):
    """The default suite on one profile with one mutant. Returns (rc, seconds, tail).

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
    cmd = [sys.executable, RUNNER, '--quiet', '--kernel', kernel, '--profile', profile, '--qemu', qemu,
           '--smp', str(SMP), '--timeout', str(int(timeout)), '--log-file', logf,
           '--append', 'timeout=%d' % GUEST_BUDGET_S,
           '--expect', expect_file(profile)]
    if mutant and not coverage:
        cmd.append('--stop-at-first-failure')
        cmd += ['--stop-ignore=%s*' % p for p in LOAD_SENSITIVE]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                          errors='replace')
    out = [l for l in proc.stdout.splitlines() if l.strip()]
    return proc.returncode, time.monotonic() - t0, out[-6:]


def coverage(qemu, kernel, profiles, jobs, state):
    """{profile: (set of ids, wall seconds)} for the profiles whose baseline passes.

    A baseline that failed only the modes' timing checks (LOAD_SENSITIVE,
    the host's load) is used: a mutant's kill resting on those alone is
    run again anyway.  A baseline that failed otherwise is tried once more
    in a later session, then left out (and said so)."""
    covdir = os.path.join(OUT, 'coverage')
    os.makedirs(covdir, exist_ok=True)
    kid = kernel_id(kernel)
    if state.get('coverage-kernel') != kid:
        # Another kernel (other checks) runs other sites: its coverage anew.
        state['coverage'], state['broken'], state['coverage-kernel'] = {}, {}, kid
    broken = state.setdefault('broken', {})
    todo = [p for p in profiles if p not in state.get('coverage', {})
            and (broken.get(p) or {}).get('tries', 0) < 2]

    def one(p):
        path = os.path.join(covdir, p + '.ids')
        if os.path.exists(path):
            os.unlink(path)
        rc, secs, tail = run_suite(qemu, kernel, p, 0, covdir, p, 3600, coverage=path)
        ids = set()
        checks = failed_checks_log(os.path.join(covdir, p + '.log'), p) if rc == 1 else set()
        if (rc == 0 or load_only(checks)) and os.path.exists(path):
            with open(path) as f:
                ids = {int(x) for x in f.read().split()}
        return p, rc, secs, ids, tail, checks
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        for p, rc, secs, ids, tail, checks in ex.map(one, todo):
            if not ids:
                log('baseline %s FAILED unmutated (rc %d, %.0f s): not used; %s' % (p, rc, secs, ' | '.join(tail)))
                broken[p] = {'tail': tail, 'tries': (broken.get(p) or {}).get('tries', 0) + 1}
                save_state(state)
                continue
            broken.pop(p, None)
            log('baseline %s passed in %.0f s%s, %d mutant sites executed' % (
                p, secs, (' but for the timing checks %s' % ','.join(sorted(checks))) if rc else '', len(ids)))
            state.setdefault('coverage', {})[p] = [sorted(ids), secs]
            save_state(state)
    return {p: (set(v[0]), v[1]) for p, v in state.get('coverage', {}).items()}


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


def failed_checks(m, prof):
    """The checks the verdict names against the stored log of mutant m on prof."""
    return failed_checks_log(os.path.join(OUT, 'logs', 'm%d-%s.log' % (m['id'], prof)), prof)


def failed_checks_log(logf, prof):
    """The checks the verdict on a stored log names."""
    if not os.path.exists(logf):
        return set()
    proc = subprocess.run([sys.executable, RUNNER, '--log', logf, '--expect', expect_file(prof), '--cpus', str(SMP)],
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


def kernel_id(kernel):
    with open(kernel, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()[:12]


def profiles_of(m, cov):
    """The covered profiles whose unmutated run executed m's site, in COVER_PROFILES' order."""
    return [p for p in COVER_PROFILES if p in cov and m['id'] in cov[p][0]]


def run_mutants(qemu, kernel, cat, selected, cov, jobs, state, every_profile=True, rerun_survivors=False):
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
        left = [p for p in profiles_of(m, cov) if p not in r.get('tried', [])]
        return left[0] if left else None
    for m in selected:
        r = results.get(m['identity'])
        if r and r['outcome'] == 'survived' and rerun_survivors and r.get('kernel') != kid and r.get('tried'):
            r['tried'], r['kernel'] = [], kid           # the suite changed: survivors run again
        if r and r['outcome'] == 'killed':
            continue
        if not profiles_of(m, cov):
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
    logdir = os.path.join(OUT, 'logs')
    os.makedirs(logdir, exist_ok=True)
    count = [0]

    def record(m, prof, rc, secs, tail, timeout, rerun):
        r = dict(results.get(m['identity']) or {'tried': []})
        r.setdefault('tried', [])
        r['seconds'] = r.get('seconds', 0) + round(secs)
        r['kernel'] = kid
        r['profile'] = prof
        again = None
        if rc == 1:
            checks = sorted(failed_checks(m, prof))
            if load_only(checks) and not rerun:
                r.update(outcome='survived', why='killed on %s only by timing checks %s: run again'
                         % (prof, ','.join(checks)))
                again = (m, prof, True)
            else:
                timed = secs >= timeout
                r.update(outcome='killed', checks=checks,
                         why=('no verdict in %.0f s (the guest hung or QEMU looped)' % timeout) if timed
                         else ' | '.join(tail)[-300:])
                if rerun:
                    r['rerun'] = True
        elif rc == 0:
            r['tried'] = r['tried'] + [prof]
            r['outcome'] = 'survived'
            nxt = next_profile(m, r) if every_profile else None
            left = [p for p in profiles_of(m, cov) if p not in r['tried']]
            r['why'] = 'missing check: the default suite passed on %s%s' % (
                ', '.join(r['tried']), ('; not yet run on %s' % ', '.join(left)) if left
                else ' (every covered profile that executes the site)')
            if rerun:
                r['why'] += '; the first run failed only timing checks, the re-run passed'
            if nxt:
                again = (m, nxt, False)
        else:
            r.update(outcome='error', why='runner error %d: %s' % (rc, ' | '.join(tail)))
        results[m['identity']] = r
        save_state(state)
        return r, again

    def worker():
        while True:
            try:
                rank, _, _, m, prof, rerun = work.get_nowait()
            except queue.Empty:
                return
            timeout = max(MIN_TIMEOUT, TIMEOUT_FACTOR * cov[prof][1])
            rc, secs, tail = run_suite(qemu, kernel, prof, m['id'], logdir, 'm%d-%s' % (m['id'], prof), timeout)
            with lock:
                r, again = record(m, prof, rc, secs, tail, timeout, rerun)
                count[0] += 1
                log('[%d, %d queued] #%d %s %s (%s) on %s: %s in %.0f s' % (
                    count[0], work.qsize(), m['id'], where(m), m['change'], m['function'], prof, r['outcome'], secs))
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
                                            r.get('why', 'not run')))
    for m in sorted(eq, key=lambda m: (m['file'], m['line'])):
        lines.append('%s\t%s\t%s (%s)\tequivalent: %s' % (where(m), m['identity'], m['change'], m['function'],
                                                         equivalent[m['identity']][-1]))
    for m in sorted(notrun, key=lambda m: (m['file'], m['line'])):
        lines.append('# not run (not in the figures above): %s\t%s\t%s (%s)' % (where(m), m['identity'], m['change'],
                                                                              m['function']))
    return lines


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
                    help="run make test's fixed sample whole and write harness/mutants-expected.tsv")
    ap.add_argument('--fresh', action='store_true', help='forget the stored results of this binary')
    ap.add_argument('--first-profile-only', action='store_true',
                    help='run a survivor only on the first profile that executes its site, not on every one')
    ap.add_argument('--rerun-survivors', action='store_true',
                    help='run again the survivors whose runs were with another kernel (the checks changed)')
    ap.add_argument('--summarize', action='store_true',
                    help='run nothing: the summary (and with --record-sample the record) from the stored results')
    a = ap.parse_args(argv)
    os.makedirs(OUT, exist_ok=True)
    kernel = kernel_path()
    qemu, cat = build()
    state = {} if a.fresh else load_state(qemu)
    if a.fresh:
        load_state(qemu)
    equivalent = read_keyed(EQUIVALENT)
    if a.check_sample:
        return check_sample(qemu, kernel, cat, a.jobs, state, equivalent)
    if a.record_sample:
        a.sample, a.seed = CHECK_SAMPLE, CHECK_SEED
    selected = sample_of(cat, a.sample, a.seed)
    log('%d mutants in the build, %d selected (sample %s, seed %d); binary %s'
        % (len(cat), len(selected), a.sample or 'all', a.seed, qemu))
    if not a.summarize:
        cov = coverage(qemu, kernel, COVER_PROFILES, a.jobs, state)
        run_mutants(qemu, kernel, cat, [m for m in selected if m['identity'] not in equivalent], cov, a.jobs,
                    state, every_profile=not a.first_profile_only, rerun_survivors=a.rerun_survivors)
    lines = summary(selected, state.setdefault('results', {}), equivalent)
    with open(os.path.join(OUT, 'summary.txt'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    print('\n'.join(lines))
    if a.record_sample:
        record(selected, state['results'])
    return 0


def record(selected, results):
    with open(EXPECTED_KILLS, 'w') as f:
        f.write('# The kills of make test\'s fixed sample (harness/mutants.py CHECK_SAMPLE=%d, CHECK_SEED=%d):\n'
                '# identity<TAB>outcome<TAB>profile<TAB>where and what, written by\n'
                '# python3 -m harness.mutants --record-sample (docs/mutants.md).\n' % (CHECK_SAMPLE, CHECK_SEED))
        for m in selected:
            r = dict(results.get(m['identity'], {}))
            # A kill only the modes' timing checks saw could survive on a
            # quiet machine: not a kill make test may rely on.
            if r.get('outcome') == 'killed' and not r.get('rerun') and \
                    load_only(r.get('checks') or sorted(failed_checks(m, r['profile']))):
                r['outcome'] = 'killed-by-timing-checks-only'
            f.write('%s\t%s\t%s\t%s %s (%s)\n' % (m['identity'], r.get('outcome', 'not-run'), r.get('profile', '-'),
                                                  where(m), m['change'], m['function']))
    log('recorded %s' % os.path.relpath(EXPECTED_KILLS, ROOT))


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
    cov = coverage(qemu, kernel, sorted({p for _, p in todo}), jobs, state)
    logdir = os.path.join(OUT, 'logs')
    os.makedirs(logdir, exist_ok=True)

    def one(item):
        m, prof = item
        if prof not in cov:
            return m, prof, None, 0
        timeout = max(MIN_TIMEOUT, TIMEOUT_FACTOR * cov[prof][1])
        rc, secs, tail = run_suite(qemu, kernel, prof, m['id'], logdir, 'm%d' % m['id'], timeout)
        return m, prof, rc, secs
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
