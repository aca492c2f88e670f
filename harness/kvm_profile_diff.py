"""Compare a hand-written hypervisor profile with the real hypervisor, leaf
by leaf: what the guest saw of the PMU (pmutest's "# pmu:" facts, the
CPUID leaves as the guest decoded them), the deviations it reported, and
each test's outcome (the CPUs merged: "pass", or "skip: <reason>", with
digits masked so that counts do not differ).

  python3 -m harness.kvm_profile_diff PROFILE_LOG REAL_LOG
  python3 -m harness.kvm_profile_diff --profile kvm-amd REAL_LOG
      (boots the profile on the emulated PMU first, with the real log's
      command line and -smp 2)

Prints one line per difference ("fact", "deviation", "test") and a last
line "kvm-profile-diff: N differences"; exits 1 when there are any, so that
each one is either fixed in emu/profiles.list or written down as a
property of another KVM version (docs/kvm-nested.md).
"""
import argparse
import os
import re
import subprocess
import sys

from harness import _paths  # noqa: F401  (tools/ on sys.path)
from pmutest import ktap

ROOT = _paths.ROOT


def _mask(text):
    text = re.sub(r"0x[0-9a-fA-F]+", "0x#", text)
    return re.sub(r"\d+", "#", text)


def facts(text):
    """The PMU facts of the first CPU group, in order, and the deviation IDs."""
    out, devs = [], set()
    for raw in text.splitlines():
        line = ktap.clean_line(raw) if hasattr(ktap, "clean_line") else raw.rstrip("\r")
        m = re.match(r"^# pmu:\s+(.*)$", line)
        if m and not m.group(1).startswith("cpu ") and not m.group(1).startswith("no counter"):
            out.append(m.group(1))
        m = re.match(r"^# deviation (\S+) ", line)
        if m:
            devs.add(m.group(1))
    return out, devs


def outcomes(text):
    """{test name: outcome text} with the CPUs merged (the set of outcomes
    over the CPUs, reasons masked)."""
    log = ktap.parse_ktap(text)
    merged = {}
    for leaf in log.leaves:
        name = leaf.name.split("@")[0]
        what = leaf.outcome
        if leaf.outcome in ("skip", "xfail") and getattr(leaf, "reason", None):
            what += ": " + _mask(leaf.reason)
        if leaf.outcome == "xfail" and getattr(leaf, "xfail_ids", None):
            what = "xfail " + ",".join(leaf.xfail_ids)
        merged.setdefault(name, set()).add(what)
    return {k: " | ".join(sorted(v)) for k, v in merged.items()}


def diff(profile_text, real_text):
    lines = []
    pf, pdev = facts(profile_text)
    rf, rdev = facts(real_text)
    for p, r in zip(pf + [""] * (len(rf) - len(pf)), rf + [""] * (len(pf) - len(rf))):
        if _mask(p) != _mask(r) or (p != r and "counters" in p):
            lines.append("fact: profile %r, real %r" % (p, r))
    for d in sorted(pdev - rdev):
        lines.append("deviation: %s in the profile only" % d)
    for d in sorted(rdev - pdev):
        lines.append("deviation: %s in the real run only" % d)
    po, ro = outcomes(profile_text), outcomes(real_text)
    for name in sorted(set(po) | set(ro)):
        a, b = po.get(name, "did not run"), ro.get(name, "did not run")
        if a != b:
            lines.append("test %s: profile %s; real %s" % (name, a, b))
    return lines


def run_profile(profile, append, out):
    cmd = [os.path.join(ROOT, "tools", "pmutest-run"), "--kernel",
           os.path.join(ROOT, "build", "pmutest.elf"), "--profile", profile, "--smp", "2",
           "--log-file", out, "--no-cpu-check"]
    if append:
        cmd += ["--append", append]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return open(out, errors="replace").read()


def command_line(text):
    m = re.search(r'command line "\S*\s?(.*)"', text)
    return m.group(1).strip() if m else ""


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m harness.kvm_profile_diff",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", help="boot this profile instead of reading PROFILE_LOG")
    ap.add_argument("logs", nargs="+", help="[PROFILE_LOG] REAL_LOG")
    a = ap.parse_args(argv)
    if a.profile:
        if len(a.logs) != 1:
            ap.error("with --profile give only REAL_LOG")
        real = open(a.logs[0], errors="replace").read()
        out = os.path.join(ROOT, "build", "kvm-nested", "profile-%s.log" % a.profile)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        prof = run_profile(a.profile, command_line(real), out)
    else:
        if len(a.logs) != 2:
            ap.error("give PROFILE_LOG REAL_LOG")
        prof = open(a.logs[0], errors="replace").read()
        real = open(a.logs[1], errors="replace").read()
    lines = diff(prof, real)
    for line in lines:
        print(line)
    print("kvm-profile-diff: %d differences" % len(lines))
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
