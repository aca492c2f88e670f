"""Reproduce the "Oops: int3" a Linux guest takes under multi-threaded TCG
when KVM flips a static key (docs/kvm-nested.md): L1 loads kvm and kvm_amd,
keeps both vCPUs in and out of __schedule with short sleeps, and creates and
closes a KVM VM again and again (the first VM of each round enables the
preempt-notifier key: text_poke_bp rewrites __schedule's jump sites).

  python3 -m harness.tcg_smc [--qemu QEMU] [--accel tcg,thread=multi] [--vms 300] [--runs 1]

QEMU defaults to Debian's qemu-system-x86_64 (no PMU patches), so that a
result says whether the emulator's patches play a part. Prints one line per
run and "tcg-smc: N runs, K oopsed"; exits 1 when a run oopsed.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

from harness import _paths  # noqa: F401
from harness import debian, initramfs, kvm_nested

VMFLIP_C = r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>
#define KVM_CREATE_VM 0xAE01
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100, kvm = open("/dev/kvm", O_RDWR);
	if (kvm < 0) { perror("/dev/kvm"); return 1; }
	for (int i = 0; i < n; i++) {
		int vm = ioctl(kvm, KVM_CREATE_VM, 0);
		if (vm < 0) { perror("KVM_CREATE_VM"); return 1; }
		close(vm);
		usleep(20000);
	}
	printf("tcg-smc: %d VMs created and closed\n", n);
	return 0;
}
"""

INIT = initramfs.INIT_PRELUDE + """
while read -r m; do insmod "$m"; done </modules/order
n=$(sed -n 's/.*vms=\\([0-9]*\\).*/\\1/p' /proc/cmdline)
for i in 1 2 3; do (while :; do usleep 200; done) & done
/vmflip "${n:-300}"
echo "tcg-smc: $(dmesg | grep -c 'Oops') oops"
poweroff -f
"""


def build(kernel, workdir):
    trees = kvm_nested.kernel_trees(kernel)
    vmlinuz, release = kvm_nested._vmlinuz(trees)
    src = os.path.join(workdir, "vmflip.c")
    with open(src, "w") as f:
        f.write(VMFLIP_C)
    binary = os.path.join(workdir, "vmflip")
    subprocess.run(["gcc", "-O2", "-static", "-o", binary, src], check=True)
    _, bb = debian.extracted("busybox-static", "bookworm")
    image = initramfs.busybox_root(os.path.join(bb, "bin", "busybox"), INIT)
    mods = initramfs.add_modules(image, kvm_nested._module_root(trees, release), release,
                                 [kvm_nested.TOP_MODULE])
    image.add_file("/modules/order", "".join(m + "\n" for m in mods))
    image.add_file("/vmflip", src=binary, mode=0o755)
    return vmlinuz, image.write(os.path.join(workdir, "initrd.gz"))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m harness.tcg_smc",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--qemu", default="qemu-system-x86_64")
    ap.add_argument("--accel", default="tcg,thread=multi")
    ap.add_argument("--cpu", default="EPYC-Milan,+svm")
    ap.add_argument("--kernel", default="6.12", choices=sorted(kvm_nested.KERNELS))
    ap.add_argument("--vms", type=int, default=300)
    ap.add_argument("--runs", type=int, default=1)
    a = ap.parse_args(argv)
    oopsed = 0
    with tempfile.TemporaryDirectory(prefix="tcg-smc-") as work:
        vmlinuz, initrd = build(a.kernel, work)
        for run in range(a.runs):
            console = os.path.join(work, "console-%d.log" % run)
            cmd = [a.qemu, "-machine", "q35", "-accel", a.accel, "-cpu", a.cpu, "-m", "512M",
                   "-smp", "2", "-kernel", vmlinuz, "-initrd", initrd, "-append",
                   "console=ttyS0 loglevel=4 panic=-1 vms=%d" % a.vms, "-nographic",
                   "-no-reboot", "-nodefaults", "-display", "none", "-serial", "file:" + console]
            try:
                subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               timeout=3600)
            except subprocess.TimeoutExpired:
                pass
            text = open(console, errors="replace").read() if os.path.exists(console) else ""
            oops = re.search(r"Oops: int3.*\n(?:.*\n){0,3}?.*RIP: \S+ (\S+)", text)
            done = "VMs created and closed" in text
            if oops or "Oops" in text:
                oopsed += 1
                print("run %d: Oops: int3 at %s" % (run, oops.group(1) if oops else "?"))
            else:
                print("run %d: %s" % (run, "%d VMs, no oops" % a.vms if done
                                      else "did not finish (the host was slow?)"))
    print("tcg-smc: %d runs, %d oopsed (%s -accel %s)" % (a.runs, oopsed, a.qemu, a.accel))
    return 1 if oopsed else 0


if __name__ == "__main__":
    sys.exit(main())
