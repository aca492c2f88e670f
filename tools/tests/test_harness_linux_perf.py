"""harness/: the initramfs writer, the workload, the expected shapes, and
make linux-perf's judge on made-up consoles (each assertion can fail)."""
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from harness import debian, initramfs, linux_perf, perf_guest, pmu_shape  # noqa: E402
from pmutest import profiles  # noqa: E402


def cpio_entries(data):
    """(name, mode, rdev major, minor, data) of a newc archive."""
    out, off = [], 0
    while True:
        hdr = data[off:off + 110]
        assert hdr[:6] == b"070701", hdr[:6]
        f = [int(hdr[6 + 8 * i:14 + 8 * i], 16) for i in range(13)]
        namesize, filesize = f[11], f[6]
        name = data[off + 110:off + 110 + namesize - 1].decode()
        off += 110 + namesize
        off += -off % 4
        body = data[off:off + filesize]
        off += filesize
        off += -off % 4
        if name == "TRAILER!!!":
            return out
        out.append((name, f[1], f[9], f[10], body))


class Initramfs(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="pmutest-initramfs-")
        self.addCleanup(shutil.rmtree, self.tmp)

    def image(self):
        img = initramfs.Image()
        img.add_file("/usr/bin/tool", b"\x7fELF", mode=0o755)
        img.add_symlink("/bin/sh", "busybox")
        img.add_node("/dev/console", 5, 1)
        img.add_init("#!/bin/sh\necho hi\n")
        return img

    def test_same_bytes_for_the_same_inputs(self):
        a = self.image().write(os.path.join(self.tmp, "a.cpio.gz"))
        b = self.image().write(os.path.join(self.tmp, "b.cpio.gz"))
        with open(a, "rb") as fa, open(b, "rb") as fb:
            self.assertEqual(fa.read(), fb.read())

    def test_newc_entries_parents_nodes_and_modes(self):
        path = self.image().write(os.path.join(self.tmp, "i.cpio.gz"))
        with gzip.open(path) as f:
            entries = {e[0]: e for e in cpio_entries(f.read())}
        self.assertEqual(sorted(entries), ["bin", "bin/sh", "dev", "dev/console", "init",
                                           "usr", "usr/bin", "usr/bin/tool"])
        self.assertEqual(entries["usr/bin/tool"][1], 0o100755)
        self.assertEqual(entries["usr/bin/tool"][4], b"\x7fELF")
        self.assertEqual(entries["bin/sh"][4], b"busybox")
        self.assertEqual(entries["dev/console"][1:4], (0o020600, 5, 1))
        self.assertEqual(entries["usr"][1], 0o040755)

    def test_modules_with_dependencies_decompressed(self):
        import lzma
        root = os.path.join(self.tmp, "k")
        mdir = os.path.join(root, "lib", "modules", "6.1.0-1-amd64", "kernel")
        os.makedirs(mdir)
        with lzma.open(os.path.join(mdir, "a.ko.xz"), "wb") as f:
            f.write(b"ELF\0license=GPL\0depends=b_mod\0")
        with open(os.path.join(mdir, "b-mod.ko"), "wb") as f:
            f.write(b"ELF\0depends=\0")
        img = initramfs.Image()
        paths = initramfs.add_modules(img, root, "6.1.0-1-amd64", ["a"])
        self.assertEqual(paths, ["/lib/modules/6.1.0-1-amd64/kernel/b-mod.ko",
                                 "/lib/modules/6.1.0-1-amd64/kernel/a.ko"])
        self.assertIn(b"depends=b_mod", img.entries[paths[1].lstrip("/")][1])
        with self.assertRaises(FileNotFoundError):
            initramfs.add_modules(img, root, "6.1.0-1-amd64", ["missing"])


class Workload(unittest.TestCase):
    def test_disassembly_matches_the_addresses(self):
        if not shutil.which("objdump"):
            self.skipTest("no objdump")
        tmp = tempfile.mkdtemp(prefix="pmutest-loop-")
        self.addCleanup(shutil.rmtree, tmp)
        path = os.path.join(tmp, "loop")
        with open(path, "wb") as f:
            f.write(perf_guest.workload_elf(1000))
        out = subprocess.run(["objdump", "-D", "-b", "binary", "-mi386:x86-64",
                              "--adjust-vma=0x%x" % perf_guest.BASE,
                              "--start-address=0x%x" % perf_guest.ENTRY, path],
                             stdout=subprocess.PIPE, text=True, check=True).stdout
        lines = [ln.split("\t") for ln in out.splitlines() if ln.startswith("  4")]
        addrs = [int(ln[0].strip().rstrip(":"), 16) for ln in lines]
        a = perf_guest.addresses(1000)
        self.assertEqual(addrs, a["insns"])
        jnz = [ln for ln in lines if ln[2].startswith("jne")][0]
        self.assertEqual(int(jnz[0].strip().rstrip(":"), 16), a["jnz"])
        self.assertIn("%x" % a["loop"], jnz[2])
        self.assertIn("$0x3e8,%rcx", lines[0][2])
        self.assertEqual(sum(1 for ln in lines if ln[2].startswith("add")), 8)

    def test_runs_and_exits_zero(self):
        tmp = tempfile.mkdtemp(prefix="pmutest-loop-")
        self.addCleanup(shutil.rmtree, tmp)
        path = os.path.join(tmp, "loop")
        with open(path, "wb") as f:
            f.write(perf_guest.workload_elf(1000))
        os.chmod(path, 0o755)
        self.assertEqual(subprocess.run([path]).returncode, 0)

    def test_nap_sleeps_between_its_loops(self):
        # ./nap: its loops, each followed by a nanosleep that blocks (the
        # switch-out TOPDOWN-SWITCH wants); the sleeps alone take NAPS * 0.1 s.
        tmp = tempfile.mkdtemp(prefix="pmutest-nap-")
        self.addCleanup(shutil.rmtree, tmp)
        path = os.path.join(tmp, "nap")
        with open(path, "wb") as f:
            f.write(perf_guest.nap_elf(1000, 3, 50_000_000))
        os.chmod(path, 0o755)
        t0 = time.monotonic()
        self.assertEqual(subprocess.run([path]).returncode, 0)
        self.assertGreaterEqual(time.monotonic() - t0, 0.15)
        if shutil.which("strace"):
            out = subprocess.run(["strace", "-f", "-e", "trace=nanosleep", path],
                                 stderr=subprocess.PIPE, text=True).stderr
            self.assertEqual(out.count("nanosleep({tv_sec=0, tv_nsec=50000000}, NULL) = 0"), 3)

    def test_expected_counts(self):
        self.assertEqual(perf_guest.insn_expected(1_000_000), 10_000_004)
        self.assertEqual(perf_guest.branches_expected(1_000_000), 1_000_001)


class Shapes(unittest.TestCase):
    def test_silicon_profiles(self):
        got = {p.name: pmu_shape.shape(p.cpu) for p in profiles.load_profiles()
               if p.kind == "silicon" and p.name in ("intel-v4", "intel-v5", "intel-v5-fixed-gap",
                                                     "intel-v1", "amd-perfmon-v2", "amd-k8")}
        v4 = got["intel-v4"]
        self.assertEqual((v4.version, v4.gp, v4.width, v4.fixed, v4.pebs, v4.lbr, v4.fw_writes),
                         (4, 4, 48, 3, 3, 32, True))
        self.assertEqual(got["intel-v5"].fixed, 4)
        self.assertEqual(got["intel-v5-fixed-gap"].fixed, 3)   # ECX 0xb: counters 0, 1, 3
        self.assertEqual((got["intel-v1"].version, got["intel-v1"].fixed, got["intel-v1"].lbr),
                         (1, 0, None))
        amd = got["amd-perfmon-v2"]
        self.assertEqual((amd.vendor, amd.version, amd.gp, amd.lbr), ("amd", 2, 6, 16))
        self.assertEqual((got["amd-k8"].version, got["amd-k8"].gp), (0, 4))

    def test_every_silicon_profile_has_a_shape(self):
        # The named shapes are read through the functions that build them:
        # a function moved or renamed in emu/model must not go unnoticed.
        got = {p.name: pmu_shape.shape(p.cpu) for p in profiles.load_profiles()
               if p.kind == "silicon"}
        lnl = got["intel-v6-lnl-p"]
        self.assertEqual((lnl.version, lnl.gp, lnl.width, lnl.fixed), (6, 8, 48, 3))
        self.assertEqual(got["intel-arch-pebs"].pebs, 0xf)
        self.assertEqual(got["intel-dmr"].version, 6)

    def test_perf_metrics_by_family_and_model(self):
        # emu/model/x86-pmu-config.c perf_metrics_shape: level 1 on Ice
        # Lake SP, level 2 too on Sapphire Rapids, none on QEMU's own
        # Icelake-Server model number (06_86H) nor without fixed counter 3.
        def pm(cpu):
            s = pmu_shape.shape(cpu)
            return s.perf_metrics, s.td_level2
        self.assertEqual(pm("Icelake-Server,model=106,pmu=on"), (True, False))
        self.assertEqual(pm("Icelake-Server,model=143,pmu=on"), (True, True))
        self.assertEqual(pm("Icelake-Server,pmu=on"), (False, False))
        self.assertEqual(pm("Icelake-Server,model=106,pmu=on,pmu-fixed=3"), (False, False))
        self.assertEqual(pm("Icelake-Server,model=106,pmu=on,pmu-fixed=2,pmu-fixed-bitmap=0xb"),
                         (True, False))
        self.assertEqual(pm("Skylake-Client,pmu=on"), (False, False))
        self.assertEqual(pm("Icelake-Server,model=189,pmu=on,pmu-shape=lunarlake-p"), (True, True))
        self.assertEqual(pm("Icelake-Server,model=189,pmu=on,pmu-shape=lunarlake-e"), (False, False))

    def test_unknown_property_refused(self):
        with self.assertRaises(pmu_shape.ShapeError):
            pmu_shape.shape("Skylake-Client,pmu=on,pmu-perf-caps=0x2000")


def console(insn_k=0, fixed=3, driver="PEBS fmt3+, Skylake events, 32-deep LBR, "
            "full-width counters, Intel PMU driver.", pebs_ip="4000aa", samples=999,
            msr_error=False, perftest="Ok", iret_cx=None, lbr_depths=(), switch_in=False,
            nmis=None, lost="0", lbr_irqs=None, msr_error_later=False):
    """A made-up intel-v4 console as perf_guest's /init prints it.  iret_cx:
    the 50th PEBS sample is at the IRET returning to ring 3, with that RCX
    (the kernel entry before it saved 0x1234); lbr_depths: samples of those
    depths after the 999 full ones, the first of them after a switch-in if
    switch_in; nmis: CPU 1's NMIs and PMIs during the record (the sections
    are left out when None), lost: perf's PERF_RECORD_LOST count; lbr_irqs:
    CPU 1's maskable interrupts during the LBR run (left out when None);
    msr_error_later: the log after the runs has a WRMSR fault the boot's
    has not."""
    a = perf_guest.addresses()
    order = "  1.0: context_tracking:user_exit: ffffffff81000100 ABI:2 CX:0x0 ABI:2 CX:0x0\n"
    for i in range(1, 100):
        cx = perf_guest.ITER_SHORT - 10007 * i
        if i == 50 and iret_cx is not None:
            order += ("  %d.5: context_tracking:user_exit: ffffffff81000100 ABI:2 CX:0x0 "
                      "ABI:2 CX:0x1234\n" % i)
            order += ("  %d.6: branches/period=10007/upp: ffffffff81001220 ABI:2 CX:0x%x "
                      "ABI:2 CX:0x%x\n" % (i, iret_cx, iret_cx))
            continue
        order += ("  %d.7: branches/period=10007/upp: %s ABI:2 CX:0x%x ABI:2 CX:0x%x\n"
                  % (i, pebs_ip, cx, cx))
    switches = "SAMPLE 32 4000aa\n" * 999 + ("SWITCH-OUT\nSWITCH-IN\n" if switch_in else "")
    switches += "".join("SAMPLE %d 4000a7\n" % d for d in lbr_depths)
    depths = "  999 32 4000aa _start\n" + "".join("  1 %d 4000a7 _start\n" % d for d in lbr_depths)
    stat = ("%d,,instructions:u,1,100.00,,\n%d,,branches:u,1,100.00,,\n"
            "3,,context_tracking:user_exit,1,100.00,,\n1,,raw_syscalls:sys_enter,1,100.00,,\n"
            "0,,nmi:nmi_handler,1,100.00,,\n1,,page-faults:u,1,100.00,,\n"
            % (10000006 + insn_k, 1000003))
    raw = stat.replace("instructions:u", "r00c0:u").replace("branches:u", "r00c4:u").replace(
        "%d," % (10000006 + insn_k), "10000006,")
    s = {
        "DMESG": ("[0.5] Performance Events: %s\n[0.5] ... version:                4\n"
                  "[0.5] ... bit width:              48\n[0.5] ... generic registers:      4\n"
                  "[0.5] ... fixed-purpose events:   %d\n" % (driver, fixed))
        + ("[0.6] unchecked MSR access error: WRMSR to 0xc0000302\n" if msr_error else ""),
        "CPU": "vendor_id\t: GenuineIntel\n6.1.0-56-amd64\n#1 SMP Debian 6.1.192-2 (2026)\nncpus=2\n",
        "SYSCTL": "1000000\n0\n",
        "STAT1": stat, "STAT2": stat, "STAT3": stat, "RAW": raw,
        "ALLCPU": "CPU0,5,,instructions,1,100.00,,\nCPU1,6,,instructions,1,100.00,,\n"
                  "CPU0,7,,cycles,1,100.00,,\nCPU1,8,,cycles,1,100.00,,\n",
        "RECORD": "",
        "RECORD-SAMPLES": "  %d instructions/period=100003/u:\n  999 nmi:nmi_handler:\n"
                          "  30 context_tracking:user_exit:\n  1 raw_syscalls:sys_enter:\n" % samples,
        "RECORD-THROTTLE": "0\n",
        "DEFAULT": "", "DEFAULT-SAMPLES": "  400 cycles:P:\n",
        "PEBS": "", "PEBS-SAMPLES": "  99 branches/period=10007/upp:\n  3 context_tracking:user_exit:\n"
                                    "  1 raw_syscalls:sys_enter:\n",
        "PEBS-IPS": "  99 branches/period=10007/upp: %s _start\n" % pebs_ip,
        "PEBS-ORDER": order,
        "PEBS-IRET": "ffffffff81001220 T native_irq_return_iret\n",
        "LBR": "", "LBR-DEPTHS": depths, "LBR-SWITCHES": switches,
        "LBR-ENTRIES": "  31968 0x%x/0x%x\n" % (a["jnz"], a["loop"]),
        "PERFTEST-LIST": " 4: mmap interface tests\n",
        "PERFTEST-4": "  4: mmap interface tests :\n  4.1: Read samples using the mmap interface : %s\n"
                      % perftest,
    }
    s["DMESG-END"] = s["DMESG"] + ("[4.3] unchecked MSR access error: WRMSR to 0x329 (tried to "
                                   "write 0x0000000086400336)\n" if msr_error_later else "")
    if lbr_irqs is not None:
        rows = ("           CPU0       CPU1\n  0:   90   0   IO-APIC   2-edge      timer\n"
                " NMI:  7  %d  Non-maskable interrupts\n LOC:  500  %d  Local timer interrupts\n"
                " PMI:  7  %d  Performance monitoring interrupts\n")
        s["LBR-IRQS0"] = rows % (40, 100, 40)
        s["LBR-IRQS1"] = rows % (1040, 100 + lbr_irqs, 1040)
    if nmis is not None:
        irqs = (" NMI:  7  %d  Non-maskable interrupts\n"
                " PMI:  7  %d  Performance monitoring interrupts\n")
        s["RECORD-IRQS0"] = irqs % (40, 40)
        s["RECORD-IRQS1"] = irqs % (40 + nmis, 40 + nmis)
        s["RECORD-LOST"] = lost + "\n"
    return "".join("@@ BEGIN %s\n%s@@ END %s rc=0\n" % (k, v, k) for k, v in s.items()) + "@@ DONE\n"


class Judge(unittest.TestCase):
    def setUp(self):
        self.prof = [p for p in profiles.load_profiles() if p.name == "intel-v4"][0]
        self.shape = pmu_shape.shape(self.prof.cpu)
        self.old_tests = perf_guest.PERF_TESTS
        perf_guest.PERF_TESTS = ("mmap interface tests",)
        self.addCleanup(setattr, perf_guest, "PERF_TESTS", self.old_tests)

    def judge(self, text):
        j = linux_perf.Judge(self.prof)
        sec = linux_perf.sections(text)
        linux_perf.judge_boot(j, sec, self.shape)
        linux_perf.judge_stat(j, sec, self.shape)
        linux_perf.judge_record(j, sec, self.shape, perf_guest.addresses())
        linux_perf.judge_perf_tests(j, sec)
        linux_perf.judge_end_dmesg(j, sec)
        return j

    def test_a_right_console_passes(self):
        j = self.judge(console())
        self.assertEqual(j.failed, [])
        self.assertEqual(j.summary(), 'intel-v4 kernel=6.1.192-2 driver="PEBS fmt3+, Skylake events, '
                         '32-deep LBR, full-width counters, Intel PMU driver." gp=4 fixed=3 '
                         'insn=exact samples=999/999 pebs=ok lbr=ok verdict=PASS')

    def test_each_departure_fails(self):
        cases = {
            "insn=off by 1": console(insn_k=1),
            "fixed=0": console(fixed=0),
            "pebs=bad": console(pebs_ip="ffffffff81001220"),
            "samples=998/999": console(samples=998),
            "verdict=FAIL": console(msr_error=True),
            "lbr=ok verdict=FAIL": console(msr_error_later=True),
        }
        for want, text in cases.items():
            j = self.judge(text)
            self.assertIn(want, j.summary())
            self.assertIn("verdict=FAIL", j.summary())
        j = self.judge(console(perftest="FAILED!"))
        self.assertTrue(any("perf test 4" in f for f in j.failed))
        j = self.judge(console(driver="PEBS fmt3+, Skylake events, Intel PMU driver."))
        self.assertTrue(any("LBR depth" in f for f in j.failed))
        # A fault the perf runs caused, after boot: once, as a new line.
        j = self.judge(console(msr_error_later=True))
        self.assertEqual([f for f in j.failed if "after the perf runs" in f],
                         ['no "unchecked MSR access" line after the perf runs: [4.3] unchecked MSR '
                          'access error: WRMSR to 0x329 (tried to write 0x0000000086400336) (1 in all)'])
        # The boot's own fault is the boot check's, not counted again.
        j = self.judge(console(msr_error=True))
        self.assertFalse([f for f in j.failed if "after the perf runs" in f])
        # No log after the runs (the guest stopped early).
        text = console()
        text = text[:text.index("@@ BEGIN DMESG-END")] + "@@ DONE\n"
        self.assertTrue(self.judge(text).failed)

    def test_a_missing_sample_says_whether_its_nmi_came(self):
        cases = {
            (998, "0"): "CPU 1 took 998 NMIs: the missing overflow's NMI never came",
            (999, "0"): "CPU 1 took 999 NMIs: Linux made no sample of 1",
            (998, "2"): "perf lost records (2)",
            (None, "0"): "(CPU 1's NMIs and perf's lost records not in this log)",
        }
        for (nmis, lost), want in cases.items():
            j = self.judge(console(samples=998, nmis=nmis, lost=lost))
            self.assertTrue(any(f.startswith("perf record -e instructions:u") and f.endswith(want)
                                for f in j.failed), (want, j.failed))
        j = self.judge(console(nmis=999))
        self.assertEqual(j.failed, [])
        self.assertIn("     record: CPU 1 took 999 NMIs, 999 PMIs; PERF_RECORD_LOST records 0",
                      j.lines)

    def test_judged_again_from_the_log(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "intel-v4.log"), "w") as f:
                f.write("# qemu ...\n" + console(insn_k=1) + linux_perf.MARK + "FAIL old\n")
            j = linux_perf.rejudge_profile(self.prof, d)
            self.assertIn("insn=off by 1", j.summary())
            with open(os.path.join(d, "intel-v4.log")) as f:
                text = f.read()
            self.assertEqual(text.count(linux_perf.MARK), 1)
            self.assertNotIn("FAIL old", text)
            self.assertTrue(text.endswith("# " + j.summary() + "\n"))

    def test_kernel_messages_inside_a_perf_test_line(self):
        # An RCU stall printed on the console in the middle of "... : Ok".
        j = self.judge(console(perftest="[ 4526.708565] rcu: INFO: rcu_preempt detected stalls\n"
                                        "[ 4526.730093] rcu: \t1-...!: (3 GPs behind)\n Ok"))
        self.assertEqual(j.failed, [])

    def test_a_sample_at_the_returning_iret(self):
        # Right only with the registers that IRET restored.
        self.assertIn("pebs=ok", self.judge(console(iret_cx=0x1234)).summary())
        self.assertIn("pebs=bad", self.judge(console(iret_cx=0x1235)).summary())

    def test_a_stack_short_by_an_interrupts_return(self):
        arch = ("Architectural LBR, PEBS fmt3+, Skylake events, 32-deep LBR, "
                "full-width counters, Intel PMU driver.")
        # One entry missing per interrupt CPU 1 took, on any kind of LBRs.
        self.assertIn("lbr=ok", self.judge(console(driver=arch, lbr_depths=(31,), lbr_irqs=1)).summary())
        self.assertIn("lbr=ok", self.judge(console(lbr_depths=(31,), lbr_irqs=1)).summary())
        self.assertIn("lbr=ok", self.judge(console(lbr_depths=(31, 30), lbr_irqs=3)).summary())
        # No interrupt on CPU 1, more entries missing than interrupts, or
        # the interrupts not counted: still bad.
        self.assertIn("lbr=bad", self.judge(console(driver=arch, lbr_depths=(31,), lbr_irqs=0)).summary())
        self.assertIn("lbr=bad", self.judge(console(lbr_depths=(31, 30), lbr_irqs=2)).summary())
        self.assertIn("lbr=bad", self.judge(console(lbr_depths=(0,), lbr_irqs=5)).summary())
        self.assertIn("lbr=bad", self.judge(console(driver=arch, lbr_depths=(31,))).summary())
        self.assertIn("lbr=bad", self.judge(console(lbr_depths=(31,))).summary())

    def test_a_short_stack_only_after_a_switch_in(self):
        self.assertIn("lbr=ok", self.judge(console(lbr_depths=(0,), switch_in=True)).summary())
        self.assertIn("lbr=bad", self.judge(console(lbr_depths=(0,))).summary())
        self.assertIn("lbr=bad", self.judge(console(lbr_depths=(0, 5), switch_in=True)).summary())
        self.assertIn("lbr=bad", self.judge(console(lbr_depths=(33,), switch_in=True)).summary())


ICX_DRIVER = ("PEBS fmt4+-baseline, Icelake events, AnyThread deprecated, 32-deep LBR, "
              "full-width counters, Intel PMU driver.")
SPR_DRIVER = ("Architectural LBR, PEBS fmt4+-baseline, Sapphire Rapids events, AnyThread "
              "deprecated, 32-deep LBR, full-width counters, Intel PMU driver.")


def td_stat(counts, slots, switches):
    """A perf stat -x, of the top-down group: each level-1 count slots *
    byte / 255 of these bytes, or these counts when switches (given as is)."""
    stat = "%d,,slots,1,100.00,,\n" % slots
    for e, b in zip(linux_perf.TD_LEVEL1, counts):
        stat += "%d,,%s,1,100.00,,\n" % (b if switches else slots * b // 255, e)
    return stat + "%d,,context-switches,1,100.00,,\n" % switches


def topdown(level2=False, counts=(64, 0, 64, 127), slots=1000000, switches=0, listed=True,
            mask=0x1000f000000ff, switched=None, nap_switches=3):
    """DMESG (Linux's event mask), TOPDOWN-EVENTS, TOPDOWN and TOPDOWN-SWITCH
    sections; switched: TOPDOWN-SWITCH's four counts (default: the bytes'
    share of its slots, floored)."""
    names = ["slots"] + (list(linux_perf.TD_LEVEL1) if listed else [])
    names += list(linux_perf.TD_LEVEL2) if level2 and listed else []
    s = "@@ BEGIN DMESG\n[0.5] ... event mask:             %016x\n@@ END DMESG rc=0\n" % mask
    s += "@@ BEGIN TOPDOWN-EVENTS\n%s\n@@ END TOPDOWN-EVENTS rc=0\n" % "\n".join(names)
    if listed:
        s += "@@ BEGIN TOPDOWN\n%s@@ END TOPDOWN rc=0\n" % td_stat(counts, slots, switches)
        sw = switched or [3 * slots * b // 255 for b in counts]
        s += "@@ BEGIN TOPDOWN-SWITCH\n%s@@ END TOPDOWN-SWITCH rc=0\n" % td_stat(
            sw, 3 * slots, nap_switches)
    return s


class Topdown(unittest.TestCase):
    def judge(self, cpu, driver, text):
        j = linux_perf.Judge(profiles.load_profiles()[0])
        j.f["driver"] = driver
        linux_perf.judge_topdown(j, linux_perf.sections(text), pmu_shape.shape(cpu))
        return j

    ICX, SPR = "Icelake-Server,model=106,pmu=on", "Icelake-Server,model=143,pmu=on"

    def test_ice_lake_and_sapphire_rapids(self):
        self.assertEqual(self.judge(self.ICX, ICX_DRIVER, topdown()).failed, [])
        self.assertEqual(self.judge(self.SPR, SPR_DRIVER, topdown(level2=True)).failed, [])
        # Fixed counter 3 through the version-5 bitmap (0xB: event mask bits 32, 33, 35).
        self.assertEqual(self.judge("Icelake-Server,model=106,pmu=on,pmu-fixed=2,pmu-fixed-bitmap=0xb",
                                    ICX_DRIVER, topdown(mask=0xb000000ff)).failed, [])
        # After switches a count may exceed the slots (a dropped byte Linux
        # does not take back): reported, not judged.
        j = self.judge(self.ICX, ICX_DRIVER, topdown(switched=(760000, 0, 760000, 1500000)))
        self.assertEqual(j.failed, [])
        self.assertTrue(any("level 1 minus the slots +20000" in line for line in j.lines))

    def test_each_departure_fails(self):
        # Not listed where Linux's case and fixed counter 3 want them.
        self.assertTrue(self.judge(self.ICX, ICX_DRIVER, topdown(listed=False)).failed)
        # Listed without fixed counter 3 (event mask bits 32-34 only).
        self.assertTrue(self.judge(self.ICX, ICX_DRIVER, topdown(mask=0x7000000ff)).failed)
        # The emulator's table without 06_6AH: Linux lists nothing, the
        # shape says none; Linux's case and fixed counter 3 still want them.
        self.assertTrue(self.judge("Icelake-Server,pmu=on", ICX_DRIVER, topdown(listed=False)).failed)
        # Sapphire Rapids without its level-2 events.
        self.assertTrue(self.judge(self.SPR, SPR_DRIVER, topdown()).failed)
        # Bytes adding up to 0xF0 (below the slots - 4), or all 0.
        self.assertTrue(self.judge(self.ICX, ICX_DRIVER, topdown(counts=(64, 0, 64, 112))).failed)
        self.assertTrue(self.judge(self.ICX, ICX_DRIVER, topdown(counts=(0, 0, 0, 0))).failed)
        # Above the slots by more than 4/255 of them, read once.
        self.assertTrue(self.judge(self.ICX, ICX_DRIVER, topdown(counts=(64, 0, 64, 132))).failed)
        # The switched task short of its slots - 4, or never switched.
        j = self.judge(self.ICX, ICX_DRIVER, topdown(switched=(760000, 0, 760000, 1479990)))
        self.assertTrue(any("at least the 3000000 slots - 4" in f for f in j.failed))
        j = self.judge(self.ICX, ICX_DRIVER, topdown(nap_switches=0))
        self.assertTrue(any("0 context switch(es), at least 3" in f for f in j.failed))
        # The group not counted.
        text = topdown().replace("1000000,,slots", "<not counted>,,slots")
        self.assertTrue(self.judge(self.ICX, ICX_DRIVER, text).failed)
        text = topdown()
        text = text[:text.index("@@ BEGIN TOPDOWN-SWITCH")]
        self.assertTrue(self.judge(self.ICX, ICX_DRIVER, text).failed)

    def test_other_driver_cases_unjudged(self):
        # Linux 6.1's Skylake case has no PERF_METRICS events to list.
        j = self.judge("Skylake-Client,pmu=on", "PEBS fmt3+, Skylake events, Intel PMU driver.", "")
        self.assertEqual((j.failed, j.lines), ([], []))


class Debian(unittest.TestCase):
    def test_private_configuration(self):
        opts = " ".join(debian._options("/x"))
        for want in ("Dir::Etc::SourceList=/x/etc/sources.list", "Dir::State::Lists=/x/lists",
                     "Dir::State::status=/x/status", "Dir::Cache=/x/cache",
                     "Dir::Etc::SourceParts=/x/etc/sources.list.d"):
            self.assertIn(want, opts)
        self.assertIn("debian-security", debian._sources_line("bookworm-security"))
        self.assertIn("Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg",
                      debian._sources_line("sid"))
        with self.assertRaises(debian.DebianError):
            debian._suite_dir("buster")


if __name__ == "__main__":
    unittest.main()
