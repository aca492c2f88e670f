"""`make linux-perf`: Linux's own perf driver judges the emulated PMU.

Debian's kernel (the newest bookworm 6.1 linux-image), its linux-perf and
busybox-static, fetched through harness/debian.py, boot from an initramfs
(harness/perf_guest.py) under the emulated QEMU on every silicon profile of
emu/profiles.list (or those PROFILES globs name).  Per profile it asserts:

- Linux's "Performance Events" lines name the profile's shape
  (harness/pmu_shape.py): version, GP counters and width, fixed counters,
  PEBS format and LBR depth where the shape has them (and none where it has
  not), full-width writes; no "unchecked MSR access" or "Broken BIOS" line,
  at boot nor among the lines the perf runs add to the kernel's log;
- perf stat's instructions:u and branches:u on the workload exact, three
  times, with k from Linux's own counters; the raw events likewise;
  perf stat -a counting on every CPU;
- perf record with a fixed period gets every sample (throttling off), no
  throttle records; plain `perf record` gets samples;
- PEBS samples (branches:upp) all at the workload's JNZ, the eventing IP;
- LBR stacks full depth, of the workload's one branch (and of returns from
  the kernel into it);
- top-down metrics where Linux's driver case has them: listed exactly when
  fixed counter 3 is there, and their counts against the slots, in a task
  that runs alone and in one switched out and back in;
- perf's built-in PMU tests (perf_guest.PERF_TESTS) pass.

Writes build/linux-perf/<profile>.log (the guest's console, then each
assertion) and build/linux-perf/summary.txt (one line a profile); exits 1
if any profile fails.  docs/linux-perf.md has the details.
"""
import argparse
import concurrent.futures
import fnmatch
import os
import re
import subprocess
import sys
import time

from harness import _paths, debian, initramfs, perf_guest, pmu_shape
from pmutest import profiles as pmu_profiles

SUITE = "bookworm-security"   # the newest bookworm kernel and perf
FALLBACK = "bookworm"
SERIES = "6.1"
# nohz_full=1: context tracking on CPU 1, where the workload runs (perf_guest);
# tsc=reliable: a loaded host must not make the guest's clocksource watchdog
# declare the TSC unstable (perf's time-to-TSC test then skips).
# no_timer_check: on a loaded host the IO-APIC timer check can miss its
# ticks and panic ("IO-APIC + timer doesn't work!"), as in any slow VM.
APPEND = ("console=ttyS0 panic=-1 quiet nohz_full=1 tsc=reliable no_timer_check "
          "mitigations=off")
TIMEOUT = 1500   # seconds of host time per profile: generous, the host is shared
KERNEL_FLOOR = 0xFFFF800000000000


def log(msg):
    print(msg, flush=True)


# --- The guest image

def build_image(outdir):
    """(vmlinuz, kernel package version, initramfs path)."""
    image_pkg = debian.newest_linux_image(SUITE, SERIES)
    kver = debian.version(image_pkg, SUITE)
    _, kroot = debian.extracted(image_pkg, SUITE)
    vmlinuz, release = debian.kernel_files(kroot)
    perf_pkg = "linux-perf"
    pver = debian.version(perf_pkg, SUITE)
    suite = SUITE
    if not pver:
        suite, pver = FALLBACK, debian.version(perf_pkg, FALLBACK)
    _, proot = debian.extracted(perf_pkg, suite)
    _, bbroot = debian.extracted("busybox-static", FALLBACK)
    log(f"linux-perf: kernel {image_pkg} {kver}, linux-perf {pver}, busybox-static")
    img = initramfs.busybox_root(os.path.join(bbroot, "bin", "busybox"),
                                 perf_guest.init_script(initramfs.INIT_PRELUDE))
    perf_bin = os.path.join(proot, "usr", "bin", "perf")
    if not os.path.exists(perf_bin):   # older packages: perf_<version>
        cands = sorted(f for f in os.listdir(os.path.join(proot, "usr", "bin"))
                       if f.startswith("perf_"))
        perf_bin = os.path.join(proot, "usr", "bin", cands[-1])
    staging = os.path.join(outdir, "root")
    subprocess.run(["rm", "-rf", staging], check=True)
    libs = debian.library_roots(perf_pkg, suite, FALLBACK)
    debian.copy_with_libraries(perf_bin, staging, dest="/usr/bin/perf", lib_roots=libs)
    img.add_tree(staging)
    for sub in ("usr/lib/perf-core", "usr/libexec/perf-core"):
        if os.path.isdir(os.path.join(proot, sub)):
            img.add_tree(os.path.join(proot, sub), "/" + sub)
    img.add_file("/root/loop", perf_guest.workload_elf(perf_guest.ITER_SHORT), mode=0o755)
    img.add_file("/root/loop10m", perf_guest.workload_elf(perf_guest.ITER_LONG), mode=0o755)
    img.add_file("/root/nap", perf_guest.nap_elf(), mode=0o755)
    path = img.write(os.path.join(outdir, "initramfs.cpio.gz"))
    return vmlinuz, kver, path


# --- Running a profile

def boot(qemu, profile, vmlinuz, initrd, logpath, timeout=TIMEOUT):
    """The guest's console text and whether it finished."""
    cmd = [qemu, "-machine", "q35", "-accel", "tcg", "-cpu", profile.cpu, "-m", "768M",
           "-smp", "2", *pmu_profiles.qemu_args(profile), "-display", "none",
           "-nodefaults", "-serial", "stdio", "-no-reboot",
           "-kernel", vmlinuz, "-initrd", initrd, "-append", APPEND]
    t0 = time.time()
    with open(logpath, "w") as f:
        f.write("# " + " ".join(cmd) + "\n")
        f.flush()
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            p.wait(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            timed_out = True
    with open(logpath, errors="replace") as f:
        text = re.sub(r"\x1b\[[0-9;]*m", "", f.read().replace("\r", ""))
    return text, timed_out, time.time() - t0


def sections(text):
    """{name: (body, rc)} of the '@@ BEGIN name' ... '@@ END name rc=N' blocks."""
    out = {}
    for m in re.finditer(r"^@@ BEGIN (\S+)\n(.*?)^@@ END \1 rc=(\d+)$", text, re.S | re.M):
        out[m.group(1)] = (m.group(2), int(m.group(3)))
    return out


def stat_counts(body):
    """{event: count or None} of perf stat -x, output."""
    out = {}
    for line in body.splitlines():
        f = line.split(",")
        if len(f) >= 3 and f[2]:
            try:
                out[f[2]] = int(f[0])
            except ValueError:
                out[f[2]] = None   # <not counted>, <not supported>
    return out


def uniq_counts(body):
    """[(count, rest)] of `uniq -c` output."""
    out = []
    for line in body.splitlines():
        m = re.match(r"^\s*(\d+)\s+(.*?)\s*$", line)
        if m:
            out.append((int(m.group(1)), m.group(2)))
    return out


def k_of(counts):
    """Returns to ring 3 that count as an instruction and a branch (perf_guest)."""
    ue = counts.get("context_tracking:user_exit")
    se = counts.get("raw_syscalls:sys_enter")
    nmi = counts.get("nmi:nmi_handler")
    if None in (ue, se, nmi):
        return None
    return ue - se + nmi


class Samples(dict):
    """{event name as perf script prints it: samples}; of(prefix) adds up the
    events whose name starts with prefix ("instructions" for
    "instructions/period=100003/u")."""

    def __init__(self, body):
        super().__init__()
        for n, rest in uniq_counts(body):
            key = rest.rstrip(":").strip()
            self[key] = self.get(key, 0) + n

    def of(self, prefix):
        return sum(n for k, n in self.items() if k.startswith(prefix))

    def k(self):
        return (self.of("context_tracking:user_exit") - self.of("raw_syscalls:sys_enter")
                + self.of("nmi:nmi_handler"))


class Judge:
    """The assertions of one profile, each logged; the summary fields."""

    def __init__(self, profile):
        self.profile = profile
        self.lines = []
        self.failed = []
        self.f = {"kernel": "?", "driver": "", "gp": "?", "fixed": "?", "insn": "off by ?",
                  "samples": "0/?", "pebs": "bad", "lbr": "bad"}

    def check(self, ok, what):
        self.lines.append(("ok   " if ok else "FAIL ") + what)
        if not ok:
            self.failed.append(what)
        return ok

    def note(self, what):
        self.lines.append("     " + what)

    def summary(self):
        f = self.f
        return (f'{self.profile.name} kernel={f["kernel"]} driver="{f["driver"]}" gp={f["gp"]} '
                f'fixed={f["fixed"]} insn={f["insn"]} samples={f["samples"]} pebs={f["pebs"]} '
                f'lbr={f["lbr"]} verdict={"FAIL" if self.failed else "PASS"}')


BAD_LINES = ("unchecked MSR access", "Broken BIOS", "Broken PMU hardware",
             "PMU not available", "Firmware Bug")


def judge_boot(j, sec, shape):
    dmesg = sec.get("DMESG", ("", 1))[0]
    cpu = sec.get("CPU", ("", 1))[0]
    m = re.search(r"Debian (\S+)", cpu) or re.search(r"^(\d+\.\d+\S*)$", cpu, re.M)
    if m:
        j.f["kernel"] = m.group(1)
    m = re.search(r"Performance Events: (.*)$", dmesg, re.M)
    driver = m.group(1).strip() if m else ""
    j.f["driver"] = driver.replace('"', "'")
    j.check(bool(m), f'a "Performance Events:" line: {driver or "none"}')

    def field(name):
        m = re.search(r"\.\.\. %s:\s+(\d+)" % re.escape(name), dmesg)
        return int(m.group(1)) if m else None

    ver, width, gp, fixed = (field("version"), field("bit width"),
                             field("generic registers"), field("fixed-purpose events"))
    j.f["gp"] = gp if gp is not None else "?"
    j.f["fixed"] = fixed if fixed is not None else "?"
    j.check(ver == shape.version, f"PMU version {ver}, the shape's {shape.version}")
    j.check(gp == shape.gp, f"GP counters {gp}, the shape's {shape.gp}")
    j.check(width == shape.width, f"GP counter width {width}, the shape's {shape.width}")
    j.check(fixed == shape.fixed, f"fixed counters {fixed}, the shape's {shape.fixed}")
    # Linux names its version-1 driver "core" (arch/x86/events/intel/core.c
    # core_pmu), the later ones "Intel".
    vendor = ("AMD PMU driver" if shape.vendor == "amd" else
              "core PMU driver" if shape.version < 2 else "Intel PMU driver")
    j.check(vendor in driver, f'the driver line names the "{vendor}"')
    pebs = re.search(r"PEBS fmt(\d+)", driver)
    if shape.pebs is not None and shape.pebs not in pmu_shape.LINUX_PEBS_FORMATS:
        # A format Linux 6.1 does not drive (architectural PEBS): it says
        # so and leaves PEBS off (pmu_shape.LINUX_PEBS_FORMATS).
        no = re.search(r"no PEBS fmt(\d+)", driver)
        j.check(no and int(no.group(1)) == shape.pebs,
                f"PEBS format {shape.pebs}, which Linux 6.1 does not drive: \"no PEBS "
                f"fmt{shape.pebs}\" in the driver line: {no and no.group(0)}")
    elif shape.pebs is None:
        j.check(not pebs, f"no PEBS in the driver line (the shape has none): {pebs and pebs.group(0)}")
    else:
        got = int(pebs.group(1)) if pebs else None
        # Linux 6.1's intel_ds_init prints "PEBS fmt4" for format 5 too (case
        # 5 falls through to case 4's literal "fmt4"; "fmt%d" came with format 6).
        want = 4 if shape.pebs == 5 else shape.pebs
        j.check(got == want, f"PEBS format {got} in the driver line, the shape's {shape.pebs}"
                + (" (Linux 6.1 prints 4 for 5)" if want != shape.pebs else ""))
    lbr = re.search(r"(\d+)-deep LBR", driver)
    if shape.lbr is None:
        j.check(not lbr, f"no LBR in the driver line (the shape has none): {lbr and lbr.group(0)}")
    else:
        got = int(lbr.group(1)) if lbr else None
        j.check(got == shape.lbr, f"LBR depth {got}, the shape's {shape.lbr}")
    if shape.vendor == "intel" and shape.version >= 2:
        fw = "full-width counters" in driver
        j.check(fw == shape.fw_writes, f"full-width counters {'named' if fw else 'not named'}, "
                f"the shape {'has' if shape.fw_writes else 'has no'} full-width writes")
    for bad in BAD_LINES:
        hits = [l for l in dmesg.splitlines() if bad.lower() in l.lower()]
        j.check(not hits, f'no "{bad}" line' + (f": {hits[0].strip()}" if hits else ""))
    sysctl = sec.get("SYSCTL", ("", 1))[0].split()
    j.check(sysctl == ["1000000", "0"], f"throttling off (max_sample_rate 1000000, cpu_time_max_percent 0): {sysctl}")


def judge_stat(j, sec, shape):
    it = perf_guest.ITER_SHORT
    ie, be = perf_guest.insn_expected(it), perf_guest.branches_expected(it)
    offs = []
    for i in (1, 2, 3):
        body, rc = sec.get(f"STAT{i}", ("", None))
        c = stat_counts(body)
        k = k_of(c)
        insn, br = c.get("instructions:u"), c.get("branches:u")
        if rc != 0 or k is None or insn is None or br is None:
            j.check(False, f"perf stat run {i}: rc={rc}, counts {c}")
            offs.append(None)
            continue
        j.note(f"run {i}: k = user_exit {c['context_tracking:user_exit']} - sys_enter "
               f"{c['raw_syscalls:sys_enter']} + nmi {c['nmi:nmi_handler']} = {k} "
               f"(page-faults:u {c.get('page-faults:u')})")
        j.check(insn == ie + k, f"run {i}: instructions:u {insn} = {ie} + k ({ie + k})")
        j.check(br == be + k, f"run {i}: branches:u {br} = {be} + k ({be + k})")
        offs.append(insn - (ie + k))
    bad = [o for o in offs if o != 0]
    j.f["insn"] = "exact" if not bad else ("off by %s" % (bad[0] if bad[0] is not None else "?"))

    body, rc = sec.get("RAW", ("", None))
    c = stat_counts(body)
    k = k_of(c)
    if k is None or rc != 0:
        j.check(False, f"perf stat of raw events: rc={rc}, counts {c}")
    else:
        want = {"r00c0:u": ie + k}
        if shape.vendor == "intel":
            want["r00c4:u"] = be + k          # BR_INST_RETIRED.ALL_BRANCHES
        else:
            want["r00c2:u"] = be + k          # retired branches (APM: PMCx0C2)
            # retired taken branches (PMCx0C4): every JNZ but the last, the returns
            want["r00c4:u"] = (it - 1) + 1 + k
        for ev, w in want.items():
            j.check(c.get(ev) == w, f"raw {ev} {c.get(ev)} = {w} (k {k})")

    body, rc = sec.get("ALLCPU", ("", None))
    cpus = {}
    for line in body.splitlines():
        f = line.split(",")
        if len(f) > 3 and f[0].startswith("CPU"):
            try:
                cpus.setdefault(f[0], {})[f[3]] = int(f[1])
            except ValueError:
                cpus.setdefault(f[0], {})[f[3]] = None
    ncpus = re.search(r"ncpus=(\d+)", sec.get("CPU", ("", 0))[0])
    n = int(ncpus.group(1)) if ncpus else 0
    ok = n > 0 and len(cpus) == n and all(
        all(isinstance(v, int) and v > 0 for v in d.values()) and len(d) == 2 for d in cpus.values())
    j.check(ok, f"perf stat -a counts instructions and cycles on each of {n} CPUs: {cpus}")


def pebs_ips(body, addrs, iret):
    """Walk `perf script -F time,event,ip,iregs,uregs` of the PEBS run in time
    order: (samples, [the ones at neither of the workload's ring-3 branches]).

    The ring-3 branches a USR counter sees (perf_guest's formula) are the
    JNZ, the return from execve and each return to ring 3 from an interrupt,
    exception or NMI: that IRET counts at CPL 3, where it goes.  When such an
    IRET is the branch that overflows the counter, its PEBS record holds the
    IRET's address as the eventing IP (as on silicon: the instruction that
    caused the event) and the registers the IRET restored.  So a sample is
    right at the JNZ, or at native_irq_return_iret when its record's RCX
    (iregs) is the user RCX the kernel entry just before it saved (uregs of
    context_tracking:user_exit or nmi:nmi_handler): the state that IRET
    returned to.  Format 1 records no eventing IP: Linux rebuilds it from
    the record's next IP and the newest LBR entry (intel_pmu_pebs_fixup_ip:
    a next IP equal to that entry's TO gives its FROM), and under the
    user-only filter the newest entry is that IRET, which ends in ring 3
    (SDM vol. 3B, "Filtering of Last Branch Records"): the same IP.
    """
    n, entry_cx, bad = 0, None, []
    for line in body.splitlines():
        m = re.match(r"\s*[\d.]+:\s+(\S+?):?\s+([0-9a-f]+)\s+(.*)$", line)
        if not m:
            continue
        ev, ip = m.group(1), int(m.group(2), 16)
        regs = [re.search(r"CX:0x([0-9a-f]+)", b) for b in m.group(3).split("ABI:")[1:]]
        cx = [int(r.group(1), 16) if r else None for r in regs] + [None, None]
        if ev.startswith(("context_tracking:user_exit", "nmi:nmi_handler")):
            entry_cx = cx[1]
        elif ev.startswith("branches"):
            n += 1
            if ip == addrs["jnz"]:
                continue
            if not (ip == iret and cx[0] is not None and cx[0] == entry_cx):
                bad.append(line.strip())
    return n, bad


def lbr_short_stacks(body, depth):
    """(short stacks explained, [the others]) of the LBR run's samples and
    context switches in time order ("SWITCH-IN", "SAMPLE n ip").

    When the workload is switched back in, Linux empties the LBRs (lbr.c
    intel_pmu_lbr_sched_task: the entries carry no address-space tag), as
    on silicon; the first sample
    after it holds only the user branches retired since, which can be fewer
    than the depth.  Any other sample must hold the full depth.
    """
    wiped, since_in, odd = 0, False, []
    for line in body.splitlines():
        t = line.split()
        if t[:1] == ["SWITCH-IN"]:
            since_in = True
        elif t[:1] == ["SAMPLE"] and len(t) >= 2:
            n = int(t[1])
            if n != depth:
                if since_in and n < depth:
                    wiped += 1
                else:
                    odd.append(line.strip())
            since_in = False
    return wiped, odd


def cpu1_irqs(body):
    """{"NMI": n, "PMI": n} of CPU 1 from /proc/interrupts lines."""
    out = {}
    for line in body.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0] in ("NMI:", "PMI:") and f[2].isdigit():
            out[f[0][:-1]] = int(f[2])
    return out


def cpu1_maskable_irqs(body):
    """CPU 1's interrupts other than NMIs (PMIs are NMIs) from a
    /proc/interrupts listing: every row whose second column is CPU 1's."""
    total = 0
    for line in body.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0].endswith(":") and f[0] not in ("NMI:", "PMI:") and f[2].isdigit():
            total += int(f[2])
    return total


def record_diagnosis(j, sec, got):
    """Where a missing sample went, from CPU 1's NMI and PMI counts around
    the record and perf's PERF_RECORD_LOST records (logs before these
    sections existed say so).  NMIs = samples: the overflow's NMI never
    came; more NMIs than samples: one came and Linux made no sample of it
    (arch/x86/events/intel/core.c handle_pmi_common skips a counter whose
    event is no longer active); lost records: perf's buffer."""
    a = cpu1_irqs(sec.get("RECORD-IRQS0", ("", None))[0])
    b = cpu1_irqs(sec.get("RECORD-IRQS1", ("", None))[0])
    lost = sec.get("RECORD-LOST", ("", None))[0].strip().splitlines()[-1:]
    if not (a and b and lost):
        return " (CPU 1's NMIs and perf's lost records not in this log)"
    nmi, pmi = b.get("NMI", 0) - a.get("NMI", 0), b.get("PMI", 0) - a.get("PMI", 0)
    j.note(f"record: CPU 1 took {nmi} NMIs, {pmi} PMIs; PERF_RECORD_LOST records {lost[0]}")
    if lost[0] != "0":
        return f"; perf lost records ({lost[0]})"
    if nmi <= got:
        return f"; CPU 1 took {nmi} NMIs: the missing overflow's NMI never came"
    return f"; CPU 1 took {nmi} NMIs: Linux made no sample of {nmi - got}"


def judge_record(j, sec, shape, addrs):
    P = perf_guest.RECORD_PERIOD
    body, rc = sec.get("RECORD-SAMPLES", ("", None))
    s = Samples(body)
    got = s.of("instructions")
    k = s.k()
    base = perf_guest.insn_expected(perf_guest.ITER_LONG)
    exp = (base + k) // P
    j.f["samples"] = f"{got}/{exp}"
    j.note(f"record: k = user_exit {s.of('context_tracking:user_exit')} - sys_enter "
           f"{s.of('raw_syscalls:sys_enter')} + NMIs {s.of('nmi:nmi_handler')} (the PMIs "
           f"among them) = {k}")
    j.check(rc == 0 and sec.get("RECORD", ("", 1))[1] == 0, f"perf record ran: rc={sec.get('RECORD', ('', None))[1]}")
    why = record_diagnosis(j, sec, got)
    j.check(got == exp, f"perf record -e instructions:u -c {P}: {got} samples, "
            f"floor(({base} + {k}) / {P}) = {exp}" + (why if got != exp else ""))
    thr = sec.get("RECORD-THROTTLE", ("", None))[0].strip().splitlines()
    j.check(thr[-1:] == ["0"], f"no PERF_RECORD_THROTTLE records: {thr[-1:] or '?'}")
    s = Samples(sec.get("DEFAULT-SAMPLES", ("", None))[0])
    j.check(sum(s.values()) > 0, f"plain perf record (the default event) gets samples: {s or 'none'}")

    # PEBS: branches:upp, each sample's IP the JNZ (the eventing IP).
    if shape.pebs is None or shape.pebs not in pmu_shape.LINUX_PEBS_FORMATS:
        j.f["pebs"] = "n/a"
        j.check("PEBS" not in sec, "no precise sampling without PEBS Linux drives "
                "(caps/max_precise 0)")
    else:
        body, rc = sec.get("PEBS-SAMPLES", ("", None))
        s = Samples(body)
        ips = uniq_counts(sec.get("PEBS-IPS", ("", None))[0])
        k = s.k()
        Pp = perf_guest.PEBS_PERIOD
        bexp = (perf_guest.branches_expected(perf_guest.ITER_SHORT) + k) // Pp
        got = s.of("branches")
        jnz = "%x" % addrs["jnz"]
        at = {}
        for n, rest in ips:   # "branches/period=10007/upp: 4000aa _start"
            t = rest.split()
            ip = t[1] if len(t) > 1 else "?"
            at[ip] = at.get(ip, 0) + n
        ok1 = j.check("PEBS" in sec and sec["PEBS"][1] == 0 and got == bexp,
                      f"perf record -e branches:upp -c {Pp}: {got} samples, floor(({perf_guest.branches_expected(perf_guest.ITER_SHORT)} + {k}) / {Pp}) = {bexp}")
        iret = sec.get("PEBS-IRET", ("", None))[0].split()
        iret = int(iret[0], 16) if iret else None
        seen, bad = pebs_ips(sec.get("PEBS-ORDER", ("", None))[0], addrs, iret)
        ok2 = j.check(got > 0 and seen == got and not bad,
                      f"every PEBS sample at a ring-3 branch of the workload: the JNZ "
                      f"0x{jnz}, or the return to ring 3 (native_irq_return_iret "
                      f"{iret and hex(iret)}) with the registers it restored: {ips}; "
                      f"others: {bad or 'none'}")
        j.f["pebs"] = "ok" if ok1 and ok2 else "bad"

    # LBR: every stack full depth, of JNZ -> loop and returns from the kernel.
    if shape.lbr is None:
        j.f["lbr"] = "n/a"
        j.check("LBR" not in sec, "no branch stacks without LBRs (no caps/branches)")
    else:
        depths = uniq_counts(sec.get("LBR-DEPTHS", ("", None))[0])
        entries = uniq_counts(sec.get("LBR-ENTRIES", ("", None))[0])
        nsamp = sum(n for n, _ in depths)
        # "count depth ip sym" for each (depth, sample IP)
        by_depth, short = {}, []
        for n, rest in depths:
            t = rest.split()
            by_depth[t[0]] = by_depth.get(t[0], 0) + n
            if t[0] != str(shape.lbr):
                short.append((n, rest))
        wiped, odd = lbr_short_stacks(sec.get("LBR-SWITCHES", ("", None))[0], shape.lbr)
        # Linux 6.1 reports no entry for the IRET that returns from an
        # interrupt into the workload, though the LBRs hold it (the ring
        # filters go by the ring a branch ends in: SDM vol. 3B, "Filtering
        # of Last Branch Records"; AMD: Linux amd/lbr.c, "Branches ending
        # in CPL > 0"): its software filter (intel_pmu_lbr_filter,
        # amd_pmu_lbr_filter), which runs when user branches alone were
        # asked for, drops it and compresses the stack; with architectural
        # LBRs its FROM_IP reads all ones (SDM, "Architectural Last Branch
        # Records"), no kernel text, and the filter drops it too. So a
        # sample whose last branches hold an interrupt's return is one
        # short per return, on silicon as here (docs/linux-perf.md, "Short
        # branch stacks"). At most one entry per maskable interrupt CPU 1
        # took in the run: the entries missing from the samples not after
        # a switch-in must not outnumber them.
        irqs = None
        i0, i1 = sec.get("LBR-IRQS0"), sec.get("LBR-IRQS1")
        if i0 and i1:
            irqs = cpu1_maskable_irqs(i1[0]) - cpu1_maskable_irqs(i0[0])
        by_irq = [o for o in odd if int(o.split()[1]) < shape.lbr]
        missing = sum(shape.lbr - int(o.split()[1]) for o in by_irq)
        if irqs is not None and by_irq and missing <= irqs and len(by_irq) == len(odd):
            j.note(f"LBR: {len(by_irq)} sample(s) short not after a switch-in by {missing} "
                   f"entries in all, CPU 1 took {irqs} interrupts in the run: each entry an "
                   f"interrupt's return Linux dropped: {by_irq}")
            wiped, odd = wiped + len(by_irq), []
        ok1 = j.check("LBR" in sec and sec["LBR"][1] == 0 and nsamp > 0
                      and set(by_depth) <= {str(d) for d in range(shape.lbr + 1)}
                      and sum(n for n, _ in short) == wiped and not odd,
                      f"perf record -b: {nsamp} samples, each {shape.lbr} branches deep, but "
                      f"for the first after the workload was switched back in (Linux wipes "
                      f"the LBRs then) and one entry per interrupt CPU 1 took "
                      f"({irqs if irqs is not None else 'not counted'}; Linux drops an "
                      f"interrupt's return): depths {by_depth}; "
                      f"short after a switch-in or an interrupt {wiped}, "
                      f"others: {odd or 'none'}; (samples depth ip sym): {short or 'none'}")
        want = "0x%x/0x%x" % (addrs["jnz"], addrs["loop"])
        bad = []
        for n, e in entries:
            if e == want:
                continue
            frm, _, to = e.partition("/")
            try:
                f_, t_ = int(frm, 16), int(to, 16)
            except ValueError:
                bad.append((n, e))
                continue
            if not (f_ >= KERNEL_FLOOR and addrs["insns"][0] <= t_ < addrs["end"]):
                bad.append((n, e))
        jn = dict((e, n) for n, e in entries).get(want, 0)
        ok2 = j.check(jn > 0 and not bad, f"every LBR entry is {want} ({jn}) or a return from "
                      f"the kernel into the workload; others: {bad or 'none'}")
        j.f["lbr"] = "ok" if ok1 and ok2 else "bad"


KMSG = re.compile(r"\[\s*\d+\.\d+\] [^\n]*\n")


def judge_perf_tests(j, sec):
    listed = sec.get("PERFTEST-LIST", ("", None))[0]
    names = re.findall(r"^\s*(\d+): (.*?)\s*$", listed, re.M)
    j.check(len(names) == len(perf_guest.PERF_TESTS),
            f"perf test list names {len(names)} of the {len(perf_guest.PERF_TESTS)} tests: "
            + ", ".join(f"{n} {t}" for n, t in names))
    for num, name in names:
        body, rc = sec.get(f"PERFTEST-{num}", ("", None))
        # The console may print kernel messages (an RCU stall on a starved
        # host) in the middle of perf's result line: take them out.
        body = KMSG.sub("", body)
        results = re.findall(r"^\s*([\d.:]+): (.*?)\s*:\s*(Ok|FAILED!|Skip.*)$", body, re.M)
        failed = [r for r in results if r[2] == "FAILED!"]
        skipped = [r for r in results if r[2].startswith("Skip")]
        j.check(bool(results) and not failed and rc is not None,
                f"perf test {num} ({name}): " + (", ".join(f"{a} {c}" for a, _, c in results) or f"no result, rc={rc}"))
        for a, t, c in skipped:
            j.note(f"perf test {a} {t}: {c}")


TD_LEVEL1 = ("topdown-retiring", "topdown-bad-spec", "topdown-fe-bound", "topdown-be-bound")
TD_LEVEL2 = ("topdown-heavy-ops", "topdown-br-mispredict", "topdown-fetch-lat", "topdown-mem-bound")
# Linux 6.1's driver cases with top-down events (intel_pmu_init): Ice Lake's 4
# (59a854e2f3b9), Sapphire Rapids' 8 (61b985e3e775).
TD_CASES = ("Icelake events", "Sapphire Rapids events")


def event_mask(dmesg):
    """Linux's "... event mask:" (x86_pmu.intel_ctrl: GP counters, fixed
    counter i at bit 32 + i, PERF_METRICS at 48), or None."""
    m = re.search(r"\.\.\. event mask:\s+([0-9a-fA-F]+)", dmesg)
    return int(m.group(1), 16) if m else None


def topdown_sum(j, sec, name, switches_at_least):
    """The four level-1 counts of a perf stat run against its slots.  Linux
    reads the group at each switch-out against the slots and metrics saved
    at the one before (intel_update_topdown_event resets nothing then) and
    adds a metric's difference only when it grew (__icl_update_topdown_event's
    `delta > last`): so each metric counts at least its last read, slots *
    byte / 255 floored (icl_get_metrics_event_value), and the four at least
    slots - 4 where the bytes add up to 0xFF, as the emulator's do (its
    metrics_value).  With no switch there is that one read and they are at
    most slots * (sum of bytes) / 255: within 4/255 of the slots, an envelope
    for a part whose bytes need not add up to 0xFF (Intel's TMA divides by
    their sum).  After switches a byte that dropped between reads was not
    taken back, so the excess is reported, not judged."""
    body, rc = sec.get(name, ("", None))
    c = stat_counts(body)
    slots, cs, ms = c.get("slots"), c.get("context-switches"), [c.get(e) for e in TD_LEVEL1]
    if rc != 0 or not isinstance(slots, int) or not slots or not isinstance(cs, int) \
            or not all(isinstance(m, int) for m in ms):
        j.check(False, f"{name}: perf stat of the top-down group: rc={rc}, counts {c}")
        return
    total = sum(ms)
    if switches_at_least:
        j.check(cs >= switches_at_least, f"{name}: {cs} context switch(es), at least "
                f"{switches_at_least} (one a nanosleep)")
    j.check(total >= slots - 4, f"{name}: top-down level 1 {' + '.join(map(str, ms))} = {total}, "
            f"at least the {slots} slots - 4")
    if cs == 0:
        j.check(total <= slots + 4 * slots // 255, f"{name}: and at most the slots + 4/255 of "
                f"them ({slots + 4 * slots // 255}), read once (no switch)")
    else:
        j.note(f"{name}: {cs} switch(es): level 1 minus the slots {total - slots:+d} "
               f"(not judged: Linux keeps what a later read would take back)")


def judge_topdown(j, sec, shape):
    """PERF_METRICS as Linux 6.1 sees it, on the parts whose driver case
    names top-down events.  Every silicon part of those cases with fixed
    counter 3 enumerates PERF_METRICS (IA32_PERF_CAPABILITIES[15]; this
    harness boots the silicon rows only), so Linux's own
    lines set the expectation: the case, and fixed counter 3 in its event
    mask; td_is_visible lists the level-1 events when the bit is set, and on
    Sapphire Rapids the level-2 ones with them (6.1 lists both whenever the
    bit is set; whether level 2 is filled is pmutest's and make
    emu-selftest's to check).  The emulator's own table (pmu_shape) must
    agree.  Then the counts (topdown_sum): once without a switch, once in a
    task switched out and back in at each of ./nap's nanosleeps."""
    driver = j.f.get("driver", "")
    cases = [c for c in TD_CASES if c in driver]
    if shape.vendor != "intel" or not cases:
        return
    mask = event_mask(sec.get("DMESG", ("", None))[0])
    want = mask is not None and bool((mask >> 35) & 1)
    listed = set(sec.get("TOPDOWN-EVENTS", ("", None))[0].split())
    has1 = all(e in listed for e in TD_LEVEL1)
    j.check(has1 == want, f"level-1 topdown events {'listed' if has1 else 'not listed'}; "
            f"{cases[0]} with{'' if want else 'out'} fixed counter 3 (event mask "
            f"{mask if mask is None else hex(mask)}): {sorted(listed)}")
    j.check(shape.perf_metrics == want, f"the emulator's shape {'has' if shape.perf_metrics else 'has no'} "
            f"PERF_METRICS, as {cases[0]} with{'' if want else 'out'} fixed counter 3 wants")
    if cases[0] == "Sapphire Rapids events":
        has2 = all(e in listed for e in TD_LEVEL2)
        j.check(has2 == want, f"level-2 topdown events {'listed' if has2 else 'not listed'} "
                f"(Linux 6.1 lists them with the level-1 ones)")
    if not has1:
        return
    topdown_sum(j, sec, "TOPDOWN", 0)
    topdown_sum(j, sec, "TOPDOWN-SWITCH", perf_guest.NAPS)


def judge_end_dmesg(j, sec):
    """The kernel's log after the last perf run: none of the boot check's
    bad lines among those the runs added (a restore Linux writes when a task
    is switched in, for one, faults only then)."""
    body, rc = sec.get("DMESG-END", ("", None))
    j.check(rc == 0, f"the kernel's log after the perf runs (rc={rc})")
    boot = set(sec.get("DMESG", ("", None))[0].splitlines())
    new = [l for l in body.splitlines() if l not in boot]
    for bad in BAD_LINES:
        hits = [l for l in new if bad.lower() in l.lower()]
        j.check(not hits, f'no "{bad}" line after the perf runs'
                + (f": {hits[0].strip()} ({len(hits)} in all)" if hits else ""))


def run_profile(profile, qemu, vmlinuz, initrd, outdir, timeout=TIMEOUT):
    j = Judge(profile)
    logpath = os.path.join(outdir, profile.name + ".log")
    try:
        shape = pmu_shape.shape(profile.cpu)
    except pmu_shape.ShapeError as e:
        j.check(False, f"the profile's shape: {e}")
        with open(logpath, "w") as f:
            f.write("\n".join(j.lines) + "\n")
        return j
    text, timed_out, secs = boot(qemu, profile, vmlinuz, initrd, logpath, timeout)
    sec = sections(text)
    last = re.findall(r"^@@ BEGIN (\S+)$", text, re.M)
    if timed_out:
        j.check(False, f"the guest finished within {timeout} s: killed at {secs:.0f} s in "
                f"section {last[-1] if last else '(boot)'}: the host was slow, or the guest hung")
    else:
        panic = re.search(r"Kernel panic.*$", text, re.M)
        j.check("@@ DONE" in text, f"the guest ran to the end ({secs:.0f} s); last section "
                f"{last[-1] if last else '(none)'}" + (f"; {panic.group(0)}" if panic else ""))
    judge_console(j, sec, shape)
    with open(logpath, "a") as f:
        f.write(MARK + "\n".join(j.lines) + "\n# " + j.summary() + "\n")
    return j


MARK = "\n# ---- linux-perf assertions\n"


def judge_console(j, sec, shape):
    j.note(f"shape: {shape}")
    judge_boot(j, sec, shape)
    judge_stat(j, sec, shape)
    judge_record(j, sec, shape, perf_guest.addresses())
    judge_topdown(j, sec, shape)
    judge_perf_tests(j, sec)
    judge_end_dmesg(j, sec)


def rejudge_profile(profile, outdir):
    """Judge a profile's log in outdir again with this harness (no boot):
    its console part is kept, the assertions are written anew."""
    j = Judge(profile)
    logpath = os.path.join(outdir, profile.name + ".log")
    try:
        with open(logpath, errors="replace") as f:
            console = f.read().split(MARK)[0]
        shape = pmu_shape.shape(profile.cpu)
    except (OSError, pmu_shape.ShapeError) as e:
        j.check(False, f"a log to judge again: {e}")
        return j
    text = re.sub(r"\x1b\[[0-9;]*m", "", console)
    last = re.findall(r"^@@ BEGIN (\S+)$", text, re.M)
    j.check("@@ DONE" in text, f"the guest ran to the end (judged again from {logpath}); last "
            f"section {last[-1] if last else '(none)'}")
    judge_console(j, sections(text), shape)
    with open(logpath, "w") as f:
        f.write(console + MARK + "\n".join(j.lines) + "\n# " + j.summary() + "\n")
    return j


def selected(globs):
    sil = [p for p in pmu_profiles.load_profiles() if p.kind == "silicon"]
    pats = [g for arg in globs for g in arg.split()]
    if not pats:
        return sil
    out = [p for p in sil if any(fnmatch.fnmatchcase(p.name, g) for g in pats)]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m harness.linux_perf",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("profiles", nargs="*", help="globs of silicon profiles (default: all)")
    ap.add_argument("--outdir", default=os.path.join(_paths.ROOT, "build", "linux-perf"))
    ap.add_argument("--qemu", help="the emulated QEMU (default: emu/qemu/build.sh's)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=TIMEOUT)
    ap.add_argument("--result-line", metavar="PART",
                    help='end with "PART: N passed, M failed, K skipped"')
    ap.add_argument("--rejudge", action="store_true",
                    help="judge the profiles' logs in OUTDIR again, booting nothing")
    a = ap.parse_args(argv)
    os.makedirs(a.outdir, exist_ok=True)
    profs = selected(a.profiles)
    if not profs:
        log(f"linux-perf: no silicon profile matches {a.profiles}")
        return 2
    fails = 0
    if a.rejudge:
        return report(a, profs, [rejudge_profile(p, a.outdir) for p in profs])
    try:
        qemu = a.qemu or subprocess.run(
            [os.path.join(_paths.ROOT, "emu", "qemu", "build.sh")], check=True,
            stdout=subprocess.PIPE, text=True).stdout.strip().splitlines()[-1]
        vmlinuz, kver, initrd = build_image(a.outdir)
    except (debian.DebianError, subprocess.CalledProcessError, OSError) as e:
        log(f"linux-perf: cannot prepare the guest: {e}")
        if a.result_line:
            log(f"{a.result_line}: 0 passed, {len(profs)} failed, 0 skipped")
        return 1
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        futs = [ex.submit(run_profile, p, qemu, vmlinuz, initrd, a.outdir, a.timeout)
                for p in profs]
        return report(a, profs, (fut.result() for fut in concurrent.futures.as_completed(futs)))


def report(a, profs, judges):
    """Each profile's line and failures as they come, summary.txt in the
    profile list's order, the result line; the exit status."""
    summary, fails = [], 0
    for j in judges:
        line = j.summary()
        log(line)
        for what in j.failed:
            log(f"  {j.profile.name}: FAIL {what}")
        summary.append((j.profile.lineno, line))
        fails += bool(j.failed)
    with open(os.path.join(a.outdir, "summary.txt"), "w") as f:
        f.write("".join(line + "\n" for _, line in sorted(summary)))
    if a.result_line:
        log(f"{a.result_line}: {len(profs) - fails} passed, {fails} failed, 0 skipped")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
