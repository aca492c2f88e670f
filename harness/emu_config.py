"""The emulated PMU's refusals at QEMU start, judged from the command line.

A configuration the manuals forbid, or the model cannot emulate, stops QEMU
at start with one line naming the property (emu/qemu/README.md, "Switching
it on"); the limit itself starts.  No guest can see these checks: a broken
one either refuses a real part's shape (which the boots of emu/profiles.list
notice) or lets a forbidden configuration through, which only a command
line that gives one can tell.  This harness gives them, one boundary at a
time: the value just past each limit must be refused, the limit itself
accepted, each against the manual or the emulator's documented limit that
fixes it (the `source` of each case).

Each case starts `qemu-system-x86_64 -machine q35 -cpu MODEL,pmu=on,... -S`
and quits from the monitor: QEMU realizes the CPU (where the shape is built
and checked) before it pauses, so a refusal exits 1 within a second and an
accepted configuration reaches the monitor.

    python3 -m harness.emu_config [--qemu PATH] [--only GLOB]

prints one line a case (`ok NAME` / `not ok NAME: why`) and ends with
`emu-config: N passed, M failed, K skipped`.  harness/mutants.py runs it on
every mutant whose site it executes (X86PMU_MUTANT), as make test would.
"""

import argparse
import fnmatch
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, 'emu', 'qemu', 'README.md')

# Cases: (name, -cpu argument, accepted, source).  Each limit appears twice:
# the limit accepted, the value just past it refused.  The base of each is
# a profile of emu/profiles.list, so that only the property named differs
# from a configuration the boots already accept.
V4 = 'Skylake-Client,pmu=on'                          # intel-v4
V5 = 'Icelake-Server,model=106,pmu=on'                # intel-v5
V3_PLATFORM_INFO = 'Haswell,pmu=on'                   # intel-v3: MSR_PLATFORM_INFO reports the ratio
LNL_P = 'Icelake-Server,model=189,pmu=on,pmu-shape=lunarlake-p'   # intel-v6-lnl-p
AMD_V2 = 'EPYC-Milan,model=17,pmu=on'                 # amd-perfmon-v2
AMD_EXT = 'EPYC,pmu=on'                               # amd-extcore

SDM_0A = 'SDM vol. 3B, CPUID.0AH (Architectural Performance Monitoring Leaf, SDM vol. 2A)'
CASES = [
    # CPUID.0AH:EAX[7:0]: versions 1-6 are defined (SDM vol. 3B 21.2.1-21.2.6,
    # "Architectural Performance Monitoring Version 6"); the README's 0-6.
    ('version_6_accepted', V5 + ',pmu-version=6', True, SDM_0A + '; emu/qemu/README.md pmu-version 0-6'),
    ('version_7_refused', V5 + ',pmu-version=7', False, SDM_0A + '; emu/qemu/README.md pmu-version 0-6'),
    # IA32_PMC0-7 (0xC1-0xC8) and IA32_PERFEVTSEL0-7 (0x186-0x18D) have room
    # for 8 GP counters (SDM vol. 4, Table 2-2); version 6 adds the
    # IA32_PMC_GPn_CTR block at 0x1900 (SDM vol. 3B, "Architectural
    # Performance Monitoring Version 6"); the emulator stops at 10.
    ('gp_8_accepted_v5', V5 + ',pmu-gp=8', True, 'SDM vol. 4 Table 2-2: IA32_PMC0-7, IA32_PERFEVTSEL0-7'),
    ('gp_9_refused_v5', V5 + ',pmu-gp=9', False, 'SDM vol. 4 Table 2-2: no IA32_PMC8 before version 6'),
    ('gp_10_accepted_v6', V5 + ',pmu-version=6,pmu-gp=10', True,
     'SDM vol. 3B version 6 MSR layout (0x1900 + 4n); emu/qemu/README.md pmu-gp 0-10 with version 6'),
    ('gp_11_refused_v6', V5 + ',pmu-version=6,pmu-gp=11', False, 'emu/qemu/README.md pmu-gp 0-10 with version 6'),
    # CPUID.0AH:EAX[23:16], GP counter width: a write to IA32_PMCx
    # sign-extends bit 31 (SDM vol. 3B 21.2.6 "Full-Width Writes"), so at
    # least 32; an MSR is 64 bits.
    ('gp_width_32_accepted', V4 + ',pmu-gp-width=32', True, 'SDM vol. 3B: IA32_PMCx writes sign-extend bit 31'),
    ('gp_width_31_refused', V4 + ',pmu-gp-width=31', False, 'SDM vol. 3B: IA32_PMCx writes sign-extend bit 31'),
    ('gp_width_64_accepted', V4 + ',pmu-gp-width=64', True, 'a counter MSR is 64 bits (RDMSR/WRMSR, SDM vol. 2B)'),
    ('gp_width_65_refused', V4 + ',pmu-gp-width=65', False, 'a counter MSR is 64 bits (RDMSR/WRMSR, SDM vol. 2B)'),
    # CPUID.0AH:EDX[12:5], fixed counter width: a counter of 0 bits
    # counts nothing; 64 at most (the MSR).  The model's limit is 1..64
    # (its refusal "pmu-fixed-width=N: must be 1..64").
    ('fixed_width_1_accepted', V4 + ',pmu-fixed-width=1', True, 'CPUID.0AH:EDX[12:5]; the model emulates 1..64'),
    ('fixed_width_0_refused', V4 + ',pmu-fixed-width=0', False, 'CPUID.0AH:EDX[12:5]: a 0-bit counter'),
    ('fixed_width_64_accepted', V4 + ',pmu-fixed-width=64', True, 'IA32_FIXED_CTRx is a 64-bit MSR'),
    ('fixed_width_65_refused', V4 + ',pmu-fixed-width=65', False, 'IA32_FIXED_CTRx is a 64-bit MSR'),
    # Fixed counters: CPUID.0AH:EDX is reserved in version 1 (SDM vol. 2A,
    # leaf 0AH); ECX (the fixed-counter bitmap) before version 5.
    ('fixed_1_refused_v1', 'core2duo,pmu=on,pmu-version=1,pmu-fixed=1', False,
     SDM_0A + ': EDX reserved in version 1'),
    ('fixed_0_accepted_v1', 'core2duo,pmu=on,pmu-version=1,pmu-fixed=0', True, SDM_0A + ' (intel-v1)'),
    ('fixed_bitmap_refused_v4', V4 + ',pmu-fixed-bitmap=0x7', False, SDM_0A + ': ECX reserved before version 5'),
    ('fixed_bitmap_accepted_v5', V5 + ',pmu-fixed-bitmap=0x7', True, SDM_0A + ': ECX from version 5'),
    # IA32_FIXED_CTR0-6 (0x309-0x30F) are the fixed counters the model has.
    ('fixed_7_accepted', V5 + ',pmu-fixed=7', True, 'SDM vol. 4: IA32_FIXED_CTR0-6 (0x309-0x30F)'),
    ('fixed_8_refused', V5 + ',pmu-fixed=8', False, 'emu/qemu/README.md: fixed counters past IA32_FIXED_CTR6'),
    # CPUID.0AH:EBX bits 0-12: the 13 architectural events the SDM defines
    # (SDM vol. 3B Table 21-1).
    ('events_len_13_accepted', V5 + ',pmu-events-len=13', True, 'SDM vol. 3B Table 21-1: 13 architectural events'),
    ('events_len_14_refused', V5 + ',pmu-events-len=14', False, 'SDM vol. 3B Table 21-1: 13 architectural events'),
    # MSR_PLATFORM_INFO[15:8] (SDM vol. 4, Nehalem to Broadwell) is an
    # 8-bit ratio; the ratio of reference cycles to TSC ticks is >= 1.
    ('ref_ratio_255_accepted', V3_PLATFORM_INFO + ',pmu-ref-ratio=255', True,
     'SDM vol. 4 MSR_PLATFORM_INFO[15:8]: 8 bits'),
    ('ref_ratio_256_refused', V3_PLATFORM_INFO + ',pmu-ref-ratio=256', False,
     'SDM vol. 4 MSR_PLATFORM_INFO[15:8]: 8 bits'),
    ('ref_ratio_1_accepted', V4 + ',pmu-ref-ratio=1', True, 'emu/qemu/README.md pmu-ref-ratio: ticks per tick'),
    ('ref_ratio_0_refused', V4 + ',pmu-ref-ratio=0', False, 'a clock of 0 TSC ticks per tick (README: 1 or more)'),
    # Top-down: the events 8-12 and PERF_METRICS divide slots among
    # retiring, bad speculation and the frontend, one each a cycle at least
    # (emu/qemu/README.md pmu-slots-per-cycle: at least 3 with the top-down
    # events; 1-16 otherwise).
    ('slots_3_accepted_topdown', V5 + ',pmu-events-len=13,pmu-slots-per-cycle=3', True,
     'emu/qemu/README.md: at least 3 slots per cycle with the top-down events'),
    ('slots_2_refused_topdown', V5 + ',pmu-events-len=13,pmu-slots-per-cycle=2', False,
     'emu/qemu/README.md: at least 3 slots per cycle with the top-down events'),
    ('slots_16_accepted', V4 + ',pmu-slots-per-cycle=16', True, 'the model: 1..16 slots per cycle'),
    ('slots_17_refused', V4 + ',pmu-slots-per-cycle=17', False, 'the model: 1..16 slots per cycle'),
    # PERF_METRICS divides IA32_FIXED_CTR3's slots (SDM vol. 3B, "Performance
    # Metrics"); IA32_PERF_CAPABILITIES needs CPUID.01H:ECX[15] PDCM.
    ('perf_metrics_refused_without_fixed3', V4 + ',pmu-perf-caps=0xa000', False,
     'SDM vol. 3B Performance Metrics: slots of IA32_FIXED_CTR3'),
    ('perf_metrics_accepted_with_fixed3', V5 + ',pmu-perf-caps=0xa000', True,
     'SDM vol. 3B Performance Metrics: slots of IA32_FIXED_CTR3'),
    # The Ice Lake shape's own PERF_METRICS (emu/model/x86-pmu-config.c
    # perf_metrics_shape) goes with fixed counter 3: taken away with it,
    # kept (and refused) when pmu-perf-caps= names the bit.
    ('fixed_3_accepted_shape_perf_metrics_dropped', V5 + ',pmu-fixed=3', True,
     'SDM vol. 3B Performance Metrics: slots of IA32_FIXED_CTR3'),
    ('explicit_perf_metrics_refused_without_fixed3', V5 + ',pmu-fixed=3,pmu-perf-caps=0xa000', False,
     'SDM vol. 3B Performance Metrics: slots of IA32_FIXED_CTR3'),
    ('perf_caps_refused_without_pdcm', V4 + ',pmu-pdcm=off,pmu-perf-caps=0x2000', False,
     'SDM vol. 2A CPUID.01H:ECX[15] PDCM enumerates IA32_PERF_CAPABILITIES'),
    # Legacy LBR stacks have 4, 8, 16 or 32 entries (SDM vol. 3B, "LBR
    # Stack" sections: Core 2 4, Atom 8, Nehalem 16, Skylake 32).
    ('lbr_depth_4_accepted_legacy', V4 + ',pmu-lbr-depth=4', True, 'SDM vol. 3B: Core 2 LBR stack, 4 entries'),
    ('lbr_depth_5_refused_legacy', V4 + ',pmu-lbr-depth=5', False, 'SDM vol. 3B: legacy stacks 4, 8, 16 or 32'),
    ('lbr_depth_32_accepted_legacy', V4 + ',pmu-lbr-depth=32', True, 'SDM vol. 3B: Skylake LBR stack, 32'),
    ('lbr_depth_33_refused_legacy', V4 + ',pmu-lbr-depth=33', False, 'SDM vol. 3B: legacy stacks 4, 8, 16 or 32'),
    # Architectural LBRs: CPUID.1CH:EAX[7:0] bit n is depth 8(n+1), 8..64.
    ('lbr_depth_64_accepted_arch', V4 + ',pmu-lbr=arch,pmu-lbr-depth=64', True, 'SDM vol. 3B CPUID.1CH:EAX[7:0]'),
    ('lbr_depth_72_refused_arch', V4 + ',pmu-lbr=arch,pmu-lbr-depth=72', False, 'SDM vol. 3B CPUID.1CH:EAX[7:0]'),
    ('lbr_depth_12_refused_arch', V4 + ',pmu-lbr=arch,pmu-lbr-depth=12', False,
     'SDM vol. 3B CPUID.1CH:EAX[7:0]: steps of 8'),
    # CPUID.23H's GP bitmap past IA32_PMC7 needs the version 6 MSR layout
    # (SDM vol. 3B, version 6: IA32_PMC_GPn_CTR at 0x1900 + 4n).
    ('leaf23_gp_past_pmc7_accepted_v6', LNL_P, True, 'the Lion Cove dump: version 6, CPUID.23H.1 GP 0-9'),
    ('leaf23_gp_past_pmc7_refused_v5', LNL_P + ',pmu-version=5', False,
     'SDM vol. 3B: counters past IA32_PMC7 are version 6 MSRs'),
    # CPUID.23H.0:EBX: bits 0-2 are UMASK2, EQ and RDPMC user disable (SDM
    # vol. 2A, leaf 23H); they are sub-leaf 0 of CPUID.23H, which a shape
    # without the leaf cannot give (emu/qemu/README.md pmu-v6-caps).
    ('v6_caps_7_accepted', LNL_P + ',pmu-v6-caps=0x7', True, 'SDM vol. 2A CPUID.23H.0:EBX bits 0-2'),
    ('v6_caps_8_refused', LNL_P + ',pmu-v6-caps=0x8', False, 'emu/qemu/README.md pmu-v6-caps: 1, 2, 4'),
    ('v6_caps_refused_without_leaf23', V5 + ',pmu-v6-caps=0x1', False, 'SDM vol. 2A: CPUID.23H.0:EBX is leaf 23H\'s'),
    # IA32_PERF_CAPABILITIES[11:8]: PEBS record formats 0-5 (SDM vol. 3B,
    # "PEBS Record Format"); 4 and 5 with adaptive PEBS (Ice Lake on).
    ('pebs_format_5_accepted', V5 + ',pmu-pebs-format=5', True, 'SDM vol. 3B: PEBS record format 5'),
    ('pebs_format_6_refused', V5 + ',pmu-pebs-format=6', False, 'emu/qemu/README.md pmu-pebs-format 0-5'),
    # AMD (APM vol. 2, 13.2): PerfMonV2's counters are PerfEvtSel/PerfCtr
    # 0-5 at the PerfCtrExtCore addresses (0xC0010200-0xC001020B, CPUID
    # Fn8000_0022_EBX[3:0]); counters are 48 bits.
    ('amd_gp_6_accepted', AMD_V2 + ',pmu-gp=6', True, 'APM vol. 2 13.2: PerfCtr 0-5 at 0xC0010200-0xC001020B'),
    ('amd_gp_7_refused', AMD_V2 + ',pmu-gp=7', False, 'APM vol. 2 13.2: PerfCtr 0-5 at 0xC0010200-0xC001020B'),
    ('amd_gp_1_accepted', AMD_V2 + ',pmu-gp=1', True, 'APM vol. 2: Fn8000_0022_EBX[3:0] counts the counters'),
    ('amd_gp_0_refused', AMD_V2 + ',pmu-gp=0', False, 'APM vol. 2: PerfMonV2 with no counter'),
    ('amd_width_48_accepted', AMD_V2 + ',pmu-gp-width=48', True, 'APM vol. 2 13.2: the counters are 48 bits'),
    ('amd_width_49_refused', AMD_V2 + ',pmu-gp-width=49', False, 'APM vol. 2 13.2: the counters are 48 bits'),
    ('amd_perfmon_v2_refused_without_extcore', AMD_V2 + ',pmu-perfctr-core=off', False,
     'APM vol. 2 13.2: PerfMonV2 counters live at the PerfCtrExtCore addresses'),
    ('amd_perfmon_v2_accepted_with_extcore', AMD_V2 + ',pmu-perfctr-core=on', True,
     'APM vol. 2 13.2: PerfMonV2 counters live at the PerfCtrExtCore addresses'),
    ('amd_extcore_off_accepted', AMD_EXT + ',pmu-perfctr-core=off', True,
     'APM vol. 2 13.2: the four legacy counters at 0xC0010000-7'),
    ('amd_freeze_refused_without_v2', AMD_EXT + ',pmu-lbr-pmc-freeze=on', False,
     'APM vol. 2: LbrAndPmcFreeze status is PerfCntrGlobalStatus[58] (PerfMonV2)'),
    # LbrExtV2 (Zen 4): Fn8000_0022_EBX[9:4] gives the depth; the model
    # emulates 1..32 (emu/qemu/README.md pmu-lbr-depth, AMD 1-32).
    ('amd_lbr_depth_32_accepted', AMD_V2 + ',pmu-lbr-depth=32', True,
     'APM vol. 2 Fn8000_0022_EBX[9:4]; emu/qemu/README.md pmu-lbr-depth AMD 1-32'),
    ('amd_lbr_depth_33_refused', AMD_V2 + ',pmu-lbr-depth=33', False, 'emu/qemu/README.md pmu-lbr-depth AMD 1-32'),
    ('amd_lbr_depth_0_refused', AMD_V2 + ',pmu-lbr-depth=0', False,
     'APM vol. 2 Fn8000_0022_EBX[9:4]: an LBR stack of no entry'),
    ('amd_intel_lbr_refused', AMD_V2 + ',pmu-lbr=arch', False, 'architectural LBRs are Intel\'s (CPUID.07H:EDX[19])'),
]

# A refused quirk's line names every quirk the README's table documents.
QUIRK_CASE = 'unknown_quirk_names_every_quirk'


def readme_quirks():
    """The quirks of emu/qemu/README.md's "Quirks (`pmu-quirks=`)" table."""
    names, inside = [], False
    with open(README) as f:
        for line in f:
            if line.startswith('## '):
                inside = line.startswith('## Quirks')
            elif inside:
                m = re.match(r'\| `([a-z0-9-]+)`', line)
                if m:
                    names.append(m.group(1))
    return names


def start(qemu, cpu, env=None, coverage=None):
    """(started, QEMU's output) for one -cpu argument."""
    cmd = [qemu, '-nodefaults', '-no-reboot', '-display', 'none', '-machine', 'q35', '-m', '64M',
           '-accel', 'tcg', '-cpu', cpu, '-S', '-monitor', 'stdio']
    e = dict(os.environ if env is None else env)
    e.pop('X86PMU_COVERAGE', None)
    if coverage:
        e['X86PMU_COVERAGE'] = coverage
    try:
        p = subprocess.run(cmd, input='quit\n', stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env=e, timeout=120, errors='replace')
    except subprocess.TimeoutExpired:
        return None, 'no answer in 120 s (the host was slow, or QEMU hung)'
    out = p.stdout.strip().splitlines()
    err = [l for l in out if 'qemu-system' in l]
    return p.returncode == 0, (err[-1] if err else (out[-1] if out else ''))


def run_case(qemu, case, env=None, coverage=None):
    """(ok, detail) of one case by name."""
    if case == QUIRK_CASE:
        started, out = start(qemu, V4 + ',pmu-quirks=no-such-quirk', env, coverage)
        if started is not False:
            return False, 'an unknown quirk was not refused: %s' % out
        known = out.split('known:', 1)[1].split() if 'known:' in out else []
        missing = [q for q in readme_quirks() if q not in known]
        if missing or not known:
            return False, 'the refusal does not name %s: %s' % (', '.join(missing) or 'any quirk', out)
        return True, out
    name, cpu, accepted, source = next(c for c in CASES if c[0] == case)
    started, out = start(qemu, cpu, env, coverage)
    if started is None:
        return False, out
    if started != accepted:
        return False, '%s %s (%s): %s' % (cpu, 'refused' if accepted else 'started', source, out)
    return True, out


def names():
    return [c[0] for c in CASES] + [QUIRK_CASE]


def run(qemu, only=None, env=None, coverage_dir=None, stop_at_first_failure=False, out=sys.stdout):
    """Every case; (passed, failed, first failed case or None)."""
    passed = failed = 0
    first = None
    for i, n in enumerate(names()):
        if only and not fnmatch.fnmatch(n, only):
            continue
        cov = os.path.join(coverage_dir, 'case-%d' % i) if coverage_dir else None
        ok, detail = run_case(qemu, n, env, cov)
        if ok:
            passed += 1
            print('ok %s' % n, file=out)
        else:
            failed += 1
            first = first or n
            print('not ok %s: %s' % (n, detail), file=out)
            if stop_at_first_failure:
                break
    return passed, failed, first


def coverage_ids(qemu):
    """The mutant ids whose site any case executes (a mutant QEMU's
    X86PMU_COVERAGE, each case started unmutated)."""
    ids = set()
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ)
        env.pop('X86PMU_MUTANT', None)
        run(qemu, env=env, coverage_dir=d, out=open(os.devnull, 'w'))
        for f in os.listdir(d):
            with open(os.path.join(d, f)) as fh:
                for line in fh:
                    w = line.split()
                    if w and w[0].isdigit():
                        ids.add(int(w[0]))
    return ids


def qemu_path():
    p = subprocess.run([os.path.join(ROOT, 'emu', 'qemu', 'build.sh')], stdout=subprocess.PIPE, text=True)
    if p.returncode:
        raise SystemExit('emu-config: emu/qemu/build.sh failed')
    return p.stdout.strip().splitlines()[-1]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--qemu', help='the emulated-PMU QEMU (default: emu/qemu/build.sh)')
    ap.add_argument('--only', metavar='GLOB', help='the cases whose name matches')
    a = ap.parse_args(argv)
    passed, failed, _ = run(a.qemu or qemu_path(), a.only)
    print('emu-config: %d passed, %d failed, 0 skipped' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
