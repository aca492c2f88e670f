"""Real KVM judges pmutest: Debian's kernels and QEMUs, nested on the
emulated AMD PMU (emu/), run pmutest's default suite as their guest.

The chain: the emulated-PMU QEMU (TCG, an AMD Zen 4 shape with SVM) boots a
Debian kernel (L1) from an initramfs holding busybox, that kernel's KVM
modules, a Debian QEMU (the L1 VMM) with its libraries and firmware, and
build/pmutest.elf; L1 loads kvm and kvm_amd and runs pmutest as L2 with
-accel kvm -cpu host -smp 2. Each *leg* is one L1 kernel, VMM, vPMU mode
and NMI-watchdog setting (LEGS says why each is there).

Each leg's L2 serial log is judged by the expect file tools/pmutest-run
--expect auto would pick on that L1 (tools/pmutest/host.py, from the
facts L1 prints), and the leg's line goes to summary.txt:
  <leg> kernel=<L1 uname -r> vmm=<L1 QEMU version> vpmu=<...> watchdog=<0|1>
      result=<P passed, F failed, S skipped, X xfail> verdict=<PASS|FAIL>
Outputs: build/kvm-nested/<leg>.log (L2's serial log), <leg>.l1.log (L1's
console: its facts, L2's progress, its dmesg after L2), <leg>.l0.log (the
emulated-PMU QEMU's stdout and stderr), summary.txt; a last line "kvm-nested: N passed, M failed,
K skipped" (legs) for tools/total-results.py. Exit 1 when a leg FAILs.

  python3 -m harness.kvm_nested [--legs GLOB,...] [--list]
"""
import argparse
import fnmatch
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass

from harness import _paths  # noqa: F401  (tools/ on sys.path)
from harness import debian, initramfs
from pmutest import host as hostmod
from pmutest import ktap, profiles
from pmutest.expect import load_expect
from pmutest.runner import host_kernel_version
from pmutest.verdict import verdict_problems

ROOT = _paths.ROOT
OUT = os.path.join(ROOT, "build", "kvm-nested")
WORK = os.path.join(debian.CACHE, "kvm-nested")
# The L0 CPU: the amd-perfmon-v2 silicon profile of emu/profiles.list (a
# Zen 4 PMU: PerfCtrExtCore, PerfMonV2, LbrAndPmcFreeze) with SVM, which TCG
# emulates with nested paging; read from the list, so L1 runs on the shape
# silicon has.
L0_PROFILE = "amd-perfmon-v2"
L0_CPU = profiles.find_profile(L0_PROFILE).cpu + ",+svm"
L0_MEMORY = "2G"
# One host thread for L1's vCPUs: with multi-threaded TCG a vCPU may run a
# stale translation of code another vCPU patched with text_poke_bp, and L1
# oopses on an int3 that memory no longer holds (stock QEMU 7.2 shows it
# too: docs/kvm-nested.md).
L0_ACCEL = "tcg,thread=single"
# L1's budget: it boots in 10-20 s and runs the default suite in 40-60 s on
# an idle 2-core host under TCG; a loaded host is many times slower.
L1_TIMEOUT = 1800
INIT = os.path.join(ROOT, "harness", "kvm_nested_init.sh")
# The default suite, as it is (pmutest's 10 s per-test budget counts TSC
# time: on a host with load 20 one check of the mediated leg ran out of it
# once; timeout=60 here was tried on a host with load 28 and its first leg
# did not finish in 30 min, cause not found: docs/kvm-nested.md).
L2_APPEND = ""
# kvm_amd, loaded with what it depends on (irqbypass, kvm, ccp, ...).
TOP_MODULE = "kvm-amd"

KERNELS = {  # name: suite of linux-image-amd64
    "6.1": "bookworm-security",
    "6.12": "bookworm-backports",
    "7.3": "trixie-backports",
}
VMMS = {  # name: suite of qemu-system-x86 (its data and SeaBIOS too)
    "q7.2": "bookworm-security",
    "q10": "bookworm-backports",
}


@dataclass
class Leg:
    name: str
    kernel: str
    vmm: str
    vpmu: str          # emulated | mediated | off
    watchdog: int
    why: str

    @property
    def kvmparams(self):
        """module.parameter=value words for L1's insmod lines."""
        return {"emulated": "", "mediated": "kvm_amd.enable_mediated_pmu=1",
                "off": "kvm.enable_pmu=0"}[self.vpmu]


def _leg(kernel, vmm, vpmu, watchdog, why):
    name = "k%s-%s-%s-wd%d" % (kernel, vmm, vpmu, watchdog)
    return Leg(name, kernel, vmm, vpmu, watchdog, why)


# Not the full product: each leg shows something the others do not.
LEGS = [
    _leg("6.1", "q7.2", "emulated", 0,
         "Debian 12 as installed: KVM 6.1 gives a version 1 PMU (no PerfMonV2) and "
         "accepts fast RDPMC"),
    _leg("6.12", "q7.2", "emulated", 0,
         "a PerfMonV2 KVM under a VMM without CPUID 0x80000022: the guest still has no PerfMonV2"),
    _leg("6.12", "q10", "emulated", 0,
         "KVM 6.12 and QEMU 10: PerfMonV2 in the guest (the kvm-amd profile's shape)"),
    _leg("6.12", "q10", "emulated", 1,
         "the host's NMI watchdog holds a counter: the guest's sixth counter never counts"),
    _leg("7.3", "q10", "emulated", 0,
         "the newest kernel, emulated vPMU (make test's leg)"),
    _leg("7.3", "q10", "mediated", 0,
         "the mediated vPMU (Linux 7.0+, kvm_amd.enable_mediated_pmu=1)"),
    _leg("7.3", "q10", "off", 0,
         "kvm.enable_pmu=0: no vPMU, every PMU check SKIPs with the probe's reason"),
]


def log(msg):
    print("kvm-nested: " + msg, flush=True)


# --- Packages ----------------------------------------------------------------

def _depends(pkg, suite):
    text = debian.apt_cache(suite, "show", "--no-all-versions", pkg)
    m = re.search(r"^Depends: (.*)$", text, re.M)
    return [d.split()[0] for d in re.split(r",\s*", m.group(1))] if m else []


def kernel_trees(kernel):
    """The extracted trees (image, and where Debian splits them, binary and
    modules) of the kernel linux-image-amd64 names in the leg's suite."""
    suite = KERNELS[kernel]
    image = [d for d in _depends("linux-image-amd64", suite)
             if d.startswith("linux-image-")][0]
    pkgs = [image] + [d for d in _depends(image, suite)
                      if re.match(r"linux-(binary|modules)-", d)]
    return [debian.extracted(p, suite)[1] for p in pkgs]


def _vmlinuz(trees):
    """(vmlinuz, release): in /boot, or (Debian 13's linux-binary-*) in
    /usr/lib/modules/<release>/vmlinuz."""
    for t in trees:
        try:
            return debian.kernel_files(t)
        except (debian.DebianError, OSError):
            pass
        mods = os.path.join(t, "usr", "lib", "modules")
        for rel in sorted(os.listdir(mods)) if os.path.isdir(mods) else []:
            if os.path.exists(os.path.join(mods, rel, "vmlinuz")):
                return os.path.join(mods, rel, "vmlinuz"), rel
    raise debian.DebianError("no vmlinuz in %s" % trees)


def _module_root(trees, release):
    """The extracted tree that holds the kernel's modules (Debian 13 and
    later ship them in linux-modules-*)."""
    for t in trees:
        for sub in ("lib", "usr/lib"):
            if os.path.isdir(os.path.join(t, sub, "modules", release, "kernel")):
                return t
    raise debian.DebianError("no modules of %s in %s" % (release, trees))


def vmm_trees(vmm):
    """The extracted VMM packages; a package the suite does not update
    (seabios in bookworm-security) comes from bookworm."""
    suite, trees = VMMS[vmm], []
    for p in ("qemu-system-x86", "qemu-system-data", "seabios"):
        try:
            trees.append(debian.extracted(p, suite)[1])
        except debian.DebianError:
            trees.append(debian.extracted(p, "bookworm")[1])
    return trees


# --- The L1 initramfs ----------------------------------------------------------

def build_initramfs(kernel_trees_, release, vmm, pmutest):
    """The leg's L1 initramfs (harness/initramfs.py), rebuilt each time:
    pmutest.elf changes with the tree and the rest is cached already. It is
    written in the clone's build/ (not the shared cache), so two clones
    running a leg at once cannot boot each other's pmutest.elf."""
    out = os.path.join(OUT, "initrd-%s-%s.cpio.gz" % (release, vmm))
    _, bb = debian.extracted("busybox-static", "bookworm")
    image = initramfs.busybox_root(os.path.join(bb, "bin", "busybox"), open(INIT).read())
    modules = initramfs.add_modules(image, _module_root(kernel_trees_, release), release,
                                    [TOP_MODULE])
    image.add_file("/modules/order", "".join(m + "\n" for m in modules))
    trees = vmm_trees(vmm)
    staging = out[:-len(".cpio.gz")] + ".root"
    shutil.rmtree(staging, ignore_errors=True)
    debian.copy_with_libraries(os.path.join(trees[0], "usr", "bin", "qemu-system-x86_64"),
                               staging, dest="/usr/bin/qemu-system-x86_64", lib_roots=trees)
    for t in trees[1:]:
        share = os.path.join(t, "usr", "share")
        if os.path.isdir(share):
            shutil.copytree(share, os.path.join(staging, "usr", "share"), symlinks=True,
                            dirs_exist_ok=True)
    image.add_tree(staging)
    image.add_file("/pmutest.elf", src=pmutest, mode=0o644)
    image.write(out)
    shutil.rmtree(staging, ignore_errors=True)
    return out


# --- Running a leg -------------------------------------------------------------

def emulated_qemu():
    p = subprocess.run([os.path.join(ROOT, "emu", "qemu", "build.sh")],
                       stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise debian.DebianError("emu/qemu/build.sh failed")
    return p.stdout.strip().splitlines()[-1]


def boot_l1(qemu, vmlinuz, initrd, leg, append, console, budget=L1_TIMEOUT):
    # no_timer_check: at boot L1 checks that the IO-APIC routes the 8254's
    # ticks by waiting about 160M TSC cycles for 4 of them (Linux
    # arch/x86/kernel/apic/io_apic.c, timer_irq_works()); on a loaded host
    # QEMU's timer thread delivered none in that time and L1 panicked
    # ("IO-APIC + timer doesn't work!", docs/kvm-nested.md).
    cmdline = ["console=ttyS0", "loglevel=4", "panic=-1", "no_timer_check",
               "nmi_watchdog=%d" % leg.watchdog,
               # '+' for ' ': pmutest's tests= takes ','-separated globs.
               "l2append=" + append.replace(" ", "+"),
               "kvmparams=" + leg.kvmparams.replace(" ", ","), "l2smp=2",
               "l2timeout=%d" % (budget - 120)]
    cmd = [qemu, "-machine", "q35", "-accel", L0_ACCEL, "-cpu", L0_CPU,
           "-m", L0_MEMORY, "-smp", "2", "-kernel", vmlinuz, "-initrd", initrd,
           "-append", " ".join(cmdline), "-nographic", "-no-reboot", "-nodefaults",
           "-serial", "file:" + console, "-display", "none"]
    start = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=budget)
        rc, err = p.returncode, p.stdout
    except subprocess.TimeoutExpired:
        rc, err = None, "L1 still running after %d s: killed (the host was slow, or L1 hung)" \
            % budget
    return rc, err, time.time() - start


def parse_l1(text):
    """(facts, L2 log text or None) from L1's console."""
    facts, l2, inside = {"dmesg": [], "param": {}}, None, False
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if line == "=== BEGIN L2 LOG":
            inside, l2 = True, []
            continue
        if line == "=== END L2 LOG":
            inside = False
            continue
        if inside:
            l2.append(line)
            continue
        m = re.match(r"^kvm-nested: param (\S+?)=(.*)$", line)
        if m:
            facts["param"][m.group(1)] = m.group(2)
            continue
        m = re.match(r"^kvm-nested: (\S+?)[=:] ?(.*)$", line)
        if not m:
            continue
        key, val = m.groups()
        if key == "dmesg":
            facts["dmesg"].append(val)
        else:
            facts[key] = val
    return facts, ("\n".join(l2) + "\n" if l2 is not None else None)


def l1_host(facts):
    """L1 as tools/pmutest/host.py reads a host."""
    return hostmod.Host(
        vendor=facts.get("vendor", ""),
        flags=frozenset(facts.get("flags", "").split()),
        enable_pmu=facts["param"].get("kvm.enable_pmu"),
        ignore_msrs=facts["param"].get("kvm.ignore_msrs"),
        nmi_watchdog=facts.get("nmi_watchdog"),
        perf_pmus=tuple(sorted(facts.get("perf_pmus", "").split())),
        mediated_pmu=facts["param"].get("kvm_amd.enable_mediated_pmu"),
        release=facts.get("uname", ""),
        vmm=facts.get("vmm"),
        vmm_flags=frozenset(facts["vmm_flags"].split()) if facts.get("vmm_flags") else None)


def judge(leg, facts, l2text):
    """(result text, verdict, expect file, problems)."""
    host = l1_host(facts)
    expect, why = hostmod.expect_path(host)
    exp = load_expect(expect)
    if l2text is None:
        return "no L2 log", "FAIL", expect, ["L1 printed no L2 log"]
    lg = ktap.parse_ktap(l2text)
    problems = verdict_problems(lg, None, exp, 2)
    # The vPMU model the guest names from its cost map (tests/pmu/vpmu_model.c)
    # must be the one the leg set up: KVM's perf-backed vPMU traps RDPMC
    # and the counter MSRs, the mediated one passes them through.
    if leg.vpmu != "off":
        models = set(re.findall(r"^\s*# vpmu: cpu\d+ (\S+)", l2text, re.M))
        if models != {leg.vpmu}:
            problems.append("the guest named the vPMU model %s, the leg set up %s"
                            % (",".join(sorted(models)) or "nothing", leg.vpmu))
    p, f, s, x = lg.summary_counts()
    result = "%d passed, %d failed, %d skipped, %d xfail" % (p, f, s, x)
    return result, ("FAIL" if problems else "PASS"), expect, problems


def vmm_version(facts):
    m = re.search(r"version (\S+)", facts.get("vmm", ""))
    return m.group(1) if m else "unknown"


def run_leg(leg, qemu, pmutest, append, budget=L1_TIMEOUT):
    trees = kernel_trees(leg.kernel)
    vmlinuz, release = _vmlinuz(trees)
    initrd = build_initramfs(trees, release, leg.vmm, pmutest)
    console = os.path.join(OUT, leg.name + ".l1.log")
    # As tools/pmutest-run does on a KVM host: L1's release as hv.kernel=,
    # so a deviation row for a KVM bug fixed before it does not match.
    version = host_kernel_version(release)
    if version:
        append = ((append + " ") if append else "") + "hv.kernel=" + version
    log("%s: booting L1 %s with %s (%s)" % (leg.name, release, leg.vmm, leg.why))
    rc, err, secs = boot_l1(qemu, vmlinuz, initrd, leg, append, console, budget)
    # L0 QEMU's own output (its warnings, a TCG abort), kept beside L1's console.
    with open(os.path.join(OUT, leg.name + ".l0.log"), "w") as f:
        f.write(err)
    text = open(console, errors="replace").read() if os.path.exists(console) else ""
    facts, l2 = parse_l1(text)
    with open(os.path.join(OUT, leg.name + ".log"), "w") as f:
        f.write(l2 or "")
    result, verdict, expect, problems = judge(leg, facts, l2)
    if rc not in (0,):
        problems.append("L0 QEMU status %s: %s" % (rc, err.strip()[-300:]))
        verdict = "FAIL"
    if "Oops" in text or "Kernel panic" in text:
        problems.append("L1 oopsed or panicked (%s)" % console)
        verdict = "FAIL"
    line = "%s kernel=%s vmm=%s vpmu=%s watchdog=%d result=%s verdict=%s" % (
        leg.name, facts.get("uname", release), vmm_version(facts), leg.vpmu,
        leg.watchdog, result, verdict)
    log("%s: %.0f s; expect %s" % (leg.name, secs, os.path.relpath(expect, ROOT)))
    for p in problems[:30]:
        log("%s: %s" % (leg.name, p))
    return line, verdict


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m harness.kvm_nested",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--legs", default="*", help="comma-separated globs of leg names")
    ap.add_argument("--append", default=L2_APPEND,
                    help="pmutest's command line (default: the default suite, %r)" % L2_APPEND)
    ap.add_argument("--kernel", default=os.path.join(ROOT, "build", "pmutest.elf"))
    ap.add_argument("--qemu", help="the emulated-PMU QEMU (default: emu/qemu/build.sh's)")
    ap.add_argument("--list", action="store_true", help="list the legs and why each is there")
    ap.add_argument("--l1-timeout", type=int, default=L1_TIMEOUT,
                    help="seconds for L1 (L2 gets 120 fewer; default %d)" % L1_TIMEOUT)
    a = ap.parse_args(argv)
    globs = a.legs.split(",")
    legs = [l for l in LEGS if any(fnmatch.fnmatch(l.name, g) for g in globs)]
    if a.list:
        for l in LEGS:
            print("%-28s %s" % (l.name, l.why))
        return 0
    if not legs:
        ap.error("no leg matches %s" % a.legs)
    os.makedirs(OUT, exist_ok=True)
    os.makedirs(WORK, exist_ok=True)
    lines, failed = [], 0
    try:
        qemu = a.qemu or emulated_qemu()
    except debian.DebianError as e:
        log("%s" % e)
        print("kvm-nested: 0 passed, %d failed, 0 skipped" % len(legs))
        return 1
    for leg in legs:
        try:
            line, verdict = run_leg(leg, qemu, a.kernel, a.append, a.l1_timeout)
        except (debian.DebianError, OSError, subprocess.CalledProcessError) as e:
            line = "%s kernel=? vmm=? vpmu=%s watchdog=%d result=not run (%s) verdict=FAIL" % (
                leg.name, leg.vpmu, leg.watchdog, e)
            verdict = "FAIL"
        failed += verdict == "FAIL"
        lines.append(line)
        print(line, flush=True)
        with open(os.path.join(OUT, "summary.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
    print("kvm-nested: %d passed, %d failed, 0 skipped" % (len(legs) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
