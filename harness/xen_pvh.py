"""Xen judges pmutest: Debian's Xen 4.17 (xen-hypervisor-4.17-amd64), booted
by the emulated-PMU QEMU on the amd-perfmon-v2 silicon row with SVM, with
Debian's Linux 6.1 as its PV dom0 and Debian's toolstack (xen-utils-4.17:
xl, xenstored, xenconsoled), runs pmutest as a PVH guest (no device
model) with Xen's vPMU on.

pmutest writes its log to Xen's debug port (console=0xe9, Xen prints each
line as "(d1) ..." with guest_loglvl=all); the harness cuts the guest's
KTAP out of Xen's console and judges it with tests/expect/xen-amd.expect.
Outputs in build/xen-pvh/: console.log (Xen, dom0 and the guest),
pmutest.log (the guest's KTAP), summary.txt (one line, kvm-nested's
format); a last line "xen-pvh: N passed, M failed, K skipped".

  python3 -m harness.xen_pvh [--smap-smep] [--qemu Q] [--timeout S]
"""
import argparse
import gzip
import os
import re
import subprocess
import sys
import time

from harness import _paths  # noqa: F401  (tools/ on sys.path)
from harness import debian, initramfs
from harness import kvm_nested as kn
from pmutest import ktap
from pmutest.expect import load_expect
from pmutest.verdict import verdict_problems

ROOT = _paths.ROOT
OUT = os.path.join(ROOT, "build", "xen-pvh")
WORK = os.path.join(debian.CACHE, "xen-pvh")
INIT = os.path.join(ROOT, "harness", "xen_pvh_init.sh")
XEN_PKG, UTILS_PKG, SUITE = "xen-hypervisor-4.17-amd64", "xen-utils-4.17", "bookworm"
DOM0_KERNEL = "6.1"
# Xen's command line.  vpmu=on: guests get Xen's vPMU (off by default).
# smap=0 smep=0: without them the PV dom0 dies at its first exception
# (docs/kvm-nested.md, "Xen").
XEN_APPEND = ("console=com1 com1=115200,8n1 dom0_mem=1024M,max:1024M vpmu=on "
              "guest_loglvl=all loglvl=all noreboot")
XEN_SMAP_SMEP_OFF = "smap=0 smep=0"
DOM0_MODULES = ["xen-evtchn", "xenfs", "xen-privcmd", "xen-gntdev", "xen-gntalloc"]
EXPECT = os.path.join(ROOT, "tests", "expect", "xen-amd.expect")
TIMEOUT = 1800


def log(msg):
    print("xen-pvh: " + msg, flush=True)


def xen_binary():
    """Xen's ELF image (the package ships it gzipped; QEMU's multiboot
    loader takes it uncompressed)."""
    _, tree = debian.extracted(XEN_PKG, SUITE)
    gz = os.path.join(tree, "boot", "xen-4.17-amd64.gz")
    out = os.path.join(WORK, "xen-4.17-amd64")
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(gz):
        with gzip.open(gz) as f, open(out + ".tmp", "wb") as g:
            g.write(f.read())
        os.replace(out + ".tmp", out)
    return out


def build_initramfs(trees, release, pmutest, out_dir):
    """dom0's initramfs, in out_dir (rebuilt each run: pmutest.elf changes)."""
    out = os.path.join(out_dir, "dom0-%s.cpio.gz" % release)
    _, bb = debian.extracted("busybox-static", SUITE)
    image = initramfs.busybox_root(os.path.join(bb, "bin", "busybox"), open(INIT).read())
    modules = initramfs.add_modules(image, kn._module_root(trees, release), release, DOM0_MODULES)
    image.add_file("/modules/order", "".join(m + "\n" for m in modules))
    _, utils = debian.extracted(UTILS_PKG, SUITE)
    roots = [utils] + debian.library_roots(UTILS_PKG, SUITE)
    staging = out[:-len(".cpio.gz")] + ".root"
    subprocess.run(["rm", "-rf", staging], check=True)
    bindir = os.path.join(utils, "usr", "lib", "xen-4.17", "bin")
    for b in ("xl", "xenstored", "xenconsoled", "xen-init-dom0"):
        debian.copy_with_libraries(os.path.join(bindir, b), staging,
                                   dest="/usr/lib/xen-4.17/bin/" + b, lib_roots=roots)
    image.add_tree(staging)
    image.add_file("/pmutest.elf", src=pmutest, mode=0o644)
    image.write(out)
    subprocess.run(["rm", "-rf", staging], check=True)
    return out


# Xen prints a guest's debug-port text in pieces of at most this many
# characters (hvm_print_line flushes its 200-byte buffer when full, Xen 4.17
# xen/arch/x86/hvm/hvm.c, DOMAIN_PBUF_SIZE): a longer line goes on in the
# next "(dN) " line.
XEN_PBUF_CHARS = 199


def guest_log(console):
    """The guest's lines from Xen's console ("(d1) text"), pieces of a
    long line joined, or None. A line may start with another writer's
    text that had no newline yet (dom0's "xl: Parsing config from ..."
    on the same serial port): the guest's line starts at its "(dN) "."""
    lines, joining = [], False
    for m in re.finditer(r"^.*?\(d\d+\) (.*?)\r?$", console, re.M):
        text = m.group(1)
        if joining:
            lines[-1] += text
        else:
            lines.append(text)
        joining = len(text) == XEN_PBUF_CHARS
    return "\n".join(lines) + "\n" if lines else None


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m harness.xen_pvh",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--qemu", help="the L0 QEMU (default: emu/qemu/build.sh's)")
    ap.add_argument("--cpu", default=kn.L0_CPU, help="L0's -cpu (default %(default)s)")
    ap.add_argument("--keep-smap-smep", action="store_true",
                    help="boot Xen without smap=0 smep=0 (to see where dom0 stops)")
    ap.add_argument("--kernel", default=os.path.join(ROOT, "build", "pmutest.elf"))
    ap.add_argument("--append", default="", help="pmutest's command line, besides console=0xe9")
    ap.add_argument("--timeout", type=int, default=TIMEOUT)
    ap.add_argument("--out", default=OUT, help="the output folder (default build/xen-pvh)")
    a = ap.parse_args(argv)
    out_dir = a.out
    os.makedirs(out_dir, exist_ok=True)
    os.makedirs(WORK, exist_ok=True)
    qemu = a.qemu or kn.emulated_qemu()
    trees = kn.kernel_trees(DOM0_KERNEL)
    vmlinuz, release = kn._vmlinuz(trees)
    initrd = build_initramfs(trees, release, a.kernel, out_dir)
    xen = xen_binary()
    guest_append = ("console=debugcon exit=poweroff " + a.append).strip()
    dom0 = ("console=hvc0 earlyprintk=xen loglevel=4 guestappend=%s guestvcpus=2 guesttimeout=%d"
            % (guest_append.replace(" ", "+"), a.timeout - 200))
    xen_append = XEN_APPEND + ("" if a.keep_smap_smep else " " + XEN_SMAP_SMEP_OFF)
    console = os.path.join(out_dir, "console.log")
    cmd = [qemu, "-machine", "q35", "-accel", kn.L0_ACCEL, "-cpu", a.cpu, "-m", "2G",
           "-smp", "2", "-kernel", xen, "-append", xen_append,
           "-initrd", "%s %s,%s" % (vmlinuz, dom0, initrd),
           "-nographic", "-no-reboot", "-nodefaults", "-serial", "file:" + console,
           "-display", "none"]
    log("booting Xen 4.17 (%s) with dom0 %s" % (xen_append, release))
    start = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=a.timeout)
        rc, err = p.returncode, p.stdout
    except subprocess.TimeoutExpired:
        rc, err = None, "still running after %d s: killed" % a.timeout
    text = open(console, errors="replace").read() if os.path.exists(console) else ""
    with open(os.path.join(out_dir, "l0.log"), "w") as f:
        f.write(err or "")
    steps = re.findall(r"^xen-pvh: step: (.*?)\r?$", text, re.M)
    log("%.0f s; dom0 reached: %s" % (time.time() - start, ", ".join(steps) or "nothing"))
    g = guest_log(text)
    with open(os.path.join(out_dir, "pmutest.log"), "w") as f:
        f.write(g or "")
    problems = []
    if g is None:
        result, problems = "no guest log", ["the guest printed nothing on Xen's console"]
    else:
        lg = ktap.parse_ktap(g)
        problems = verdict_problems(lg, None, load_expect(EXPECT), 2)
        result = "%d passed, %d failed, %d skipped, %d xfail" % lg.summary_counts()
    if rc != 0:
        problems.append("L0 QEMU status %s: %s" % (rc, (err or "").strip()[-300:]))
    verdict = "FAIL" if problems else "PASS"
    line = "xen4.17-pvh-vpmu kernel=%s vmm=xen-4.17 vpmu=xen watchdog=0 result=%s verdict=%s" % (
        release, result, verdict)
    for pr in problems[:30]:
        log(pr)
    print(line)
    with open(os.path.join(out_dir, "summary.txt"), "w") as f:
        f.write(line + "\n")
    print("xen-pvh: %d passed, %d failed, 0 skipped" % (verdict == "PASS", verdict == "FAIL"))
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
