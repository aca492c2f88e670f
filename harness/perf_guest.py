"""The guest of `make linux-perf`: Debian's kernel and perf, a busybox root,
a workload whose user-mode counts are known by construction, and the /init
that runs perf on it and prints each result between markers.

The workload is written here byte by byte (no compiler, no libc), a static
ELF of one page:

    _start: mov  $ITER, %rcx
    loop:   add  $1, %rax ... add $1, %r10     (8 ADDs)
            dec  %rcx
            jnz  loop
            mov  $60, %eax
            xor  %edi, %edi
            syscall                            (exit(0))

Its own ring-3 instructions are 1 + 10*ITER + 2 (SYSCALL changes the
privilege level and counts at CPL 0, where it goes: emu/qemu/README.md,
"Counting conventions"), its branches ITER (JNZ).  What a USR counter
enabled at exec (perf's enable_on_exec) also sees is each return to ring 3
that is itself an instruction and a branch counted at CPL 3: the IRET or
SYSRET that ends execve, and one IRET per interrupt or exception taken in
ring 3 (V. Weaver measured the same on Intel silicon; same README section).
So, with k such interrupts and exceptions:

    instructions:u = 10*ITER + 4 + k        branches:u = ITER + 1 + k

Linux counts k itself: the guest boots with nohz_full=1, so CPU 1 runs
with context tracking and the tracepoint context_tracking:user_exit fires
at every entry to the kernel from ring 3 there (syscalls, interrupts,
exceptions); the workload runs on CPU 1 and its one syscall (exit) is
raw_syscalls:sys_enter.  NMIs enter without context tracking: nmi:nmi_handler
counts them (none are expected: the NMI watchdog leaves nohz_full CPUs,
and perf stat takes no PMIs).  So k = user_exit - sys_enter + nmi_handler,
all per-task counts perf stat reads in the same run.
"""
import struct

BASE = 0x400000
CODE_OFF = 0x80
ENTRY = BASE + CODE_OFF
LOOP_BODY = 10          # instructions per iteration
ITER_SHORT = 1_000_000  # ./loop
ITER_LONG = 10_000_000  # ./loop10m


def insn_expected(iters):
    """instructions:u without interrupts: 1 + 10*ITER + 2, plus the return
    to ring 3 that ends execve."""
    return 1 + LOOP_BODY * iters + 2 + 1


def branches_expected(iters):
    """branches:u without interrupts: the JNZs and the return of execve."""
    return iters + 1


def _code(iters):
    body = bytes.fromhex(
        "4883c001" "4883c301" "4883c201" "4883c601"   # add $1: rax rbx rdx rsi
        "4883c701" "4983c001" "4983c101" "4983c201"   # add $1: rdi r8 r9 r10
        "48ffc9")                                     # dec %rcx
    jnz = bytes([0x75, (-(len(body) + 2)) & 0xFF])   # jnz loop (rel8)
    start = bytes.fromhex("48c7c1") + struct.pack("<i", iters)  # mov $iters, %rcx
    tail = bytes.fromhex("b83c000000" "31ff" "0f05")  # mov $60,%eax; xor %edi,%edi; syscall
    return start, body, jnz, tail


def addresses(iters=ITER_SHORT):
    """The workload's instruction addresses: {'loop': first ADD, 'jnz': the
    JNZ, 'insns': every instruction's address in order}."""
    start, body, jnz, tail = _code(iters)
    loop = ENTRY + len(start)
    sizes = [len(start)] + [4] * 8 + [3, 2, 5, 2, 2]
    insns, a = [], ENTRY
    for s in sizes:
        insns.append(a)
        a += s
    return {"loop": loop, "jnz": loop + len(body), "insns": insns,
            "end": ENTRY + len(start + body + jnz + tail)}


NAPS = 3                 # ./nap: loops, each followed by a nanosleep
NAP_NS = 100_000_000     # 0.1 s


def _nap_code(iters, naps, ns):
    """./nap: NAPS times ./loop's loop, each followed by nanosleep(NAP_NS);
    one task that blocks and so is switched out and back in, NAPS times
    (RCX and R11 are SYSCALL's: the count of naps is in R12)."""
    _, body, _, tail = _code(iters)
    outer = bytes.fromhex("49c7c4") + struct.pack("<i", naps)   # mov $naps, %r12
    start = bytes.fromhex("48c7c1") + struct.pack("<i", iters)  # mov $iters, %rcx
    jnz = bytes([0x75, (-(len(body) + 2)) & 0xFF])              # jnz loop
    nap = (bytes.fromhex("488d3d") + b"\0\0\0\0"                  # lea ts(%rip), %rdi
           + bytes.fromhex("31f6" "b823000000" "0f05" "49ffcc"))  # xor %esi; mov $35; syscall; dec %r12
    back = len(start + body + jnz + nap) + 2
    code = outer + start + body + jnz + nap + bytes([0x75, (-back) & 0xFF]) + tail
    lea_end = len(outer + start + body + jnz) + 7
    rel = len(code) - lea_end
    code = code[:lea_end - 4] + struct.pack("<i", rel) + code[lea_end:]
    return code + struct.pack("<QQ", ns // 1_000_000_000, ns % 1_000_000_000)


def nap_elf(iters=ITER_SHORT, naps=NAPS, ns=NAP_NS):
    """./nap as a static ELF64 executable (see _nap_code)."""
    return _elf(_nap_code(iters, naps, ns))


def workload_elf(iters):
    """A static ELF64 executable: one PT_LOAD (R+X) of the whole file."""
    start, body, jnz, tail = _code(iters)
    return _elf(start + body + jnz + tail)


def _elf(code):
    """code at ENTRY in one PT_LOAD (R+X) of the whole file."""
    size = CODE_OFF + len(code)
    ehdr = struct.pack("<4sBBBBB7xHHIQQQIHHHHHH", b"\x7fELF", 2, 1, 1, 0, 0,
                       2, 0x3E, 1, ENTRY, 64, 0, 0, 64, 56, 1, 0, 0, 0)
    phdr = struct.pack("<IIQQQQQQ", 1, 5, 0, BASE, BASE, size, size, 0x1000)
    pad = b"\0" * (CODE_OFF - len(ehdr) - len(phdr))
    return ehdr + phdr + pad + code


# perf's built-in tests that exercise the PMU (by their name in perf 6.1's
# `perf test list`): the mmap ring and user-space RDPMC, event times, the
# backward ring buffer, the dummy tracking event, perf time to TSC, sigtrap
# on a counter, x86 sample parsing.  Left out, each for a cause outside the
# PMU (tools review s3 "linux-perf-on-emu", section 3): PERF_RECORD_* events
# (wants a dynamic `sleep`), perf_event_attr setup (python), object code
# reading (objdump), dwarf unwind (fails without a PMU too), number of exit
# events (fails in plain runs and passes with -v on every profile, not
# explained), and the shell tests (bash, a compiler, minutes each under TCG).
PERF_TESTS = (
    "mmap interface tests",
    "Use a dummy software event to keep tracking",
    "Event times",
    "Read backward ring buffer",
    "Convert perf time to TSC",
    "Sigtrap",
    "x86 Sample parsing",
)

# k's counters (see the module's docstring), added to every perf stat run.
# nmi:nmi_handler fires once per handler an NMI calls; the filter keeps
# perf_event_nmi_handler's, which every NMI calls (arch/x86/kernel/nmi.c
# default_do_nmi: the NMI_LOCAL handlers run first, each of them).
K_EVENTS = ("-e context_tracking:user_exit,raw_syscalls:sys_enter,page-faults:u "
            "-e nmi:nmi_handler --filter \"handler == $PERF_NMI\"")

RECORD_PERIOD = 100003   # instructions:u on ./loop10m, and the LBR run
PEBS_PERIOD = 10007      # branches:upp on ./loop


def init_script(prelude):
    """/init: every result between '@@ BEGIN name' and '@@ END name rc=N'."""
    tests = "|".join(PERF_TESTS)
    return prelude + f"""\
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
mount -t debugfs nodev /sys/kernel/debug 2>/dev/null
cd /root
export PAGER=cat
run() {{ n=$1; shift; echo "@@ BEGIN $n"; timeout -s KILL 600 "$@" 2>&1; echo "@@ END $n rc=$?"; }}
echo "@@ BEGIN DMESG"; dmesg; echo "@@ END DMESG rc=0"
echo "@@ BEGIN CPU"
grep -m1 vendor_id /proc/cpuinfo; grep -m1 'model name' /proc/cpuinfo; uname -r; uname -v
for f in /sys/bus/event_source/devices/cpu/caps/*; do echo "caps/${{f##*/}}=$(cat $f)"; done
echo "nmi_watchdog=$(cat /proc/sys/kernel/nmi_watchdog)"; echo "ncpus=$(grep -c ^processor /proc/cpuinfo)"
echo "@@ END CPU rc=0"
# Devices interrupt CPU 0, the workload runs alone on CPU 1.
for f in /proc/irq/*/smp_affinity; do echo 1 > $f 2>/dev/null; done
# The emulator's PMIs look slow to Linux's clock (the guest TSC is the host's):
# no throttling; the rate first, the kernel refuses it once the limit is off.
# CPU 1 (nohz_full) may have no tick to reset the per-tick budget of
# samples (rate / HZ), so the rate allows any run's samples in one tick.
echo 1000000 > /proc/sys/kernel/perf_event_max_sample_rate
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent
echo "@@ BEGIN SYSCTL"; cat /proc/sys/kernel/perf_event_max_sample_rate /proc/sys/kernel/perf_cpu_time_max_percent; echo "@@ END SYSCTL rc=0"
PERF_NMI=0x$(grep ' perf_event_nmi_handler$' /proc/kallsyms | cut -d' ' -f1)
if grep -q AuthenticAMD /proc/cpuinfo; then RAW=r00c0:u,r00c2:u,r00c4:u; else RAW=r00c0:u,r00c4:u; fi
for i in 1 2 3; do run STAT$i taskset -c 1 perf stat -x, -e instructions:u,branches:u {K_EVENTS} -- ./loop; done
run RAW taskset -c 1 perf stat -x, -e $RAW {K_EVENTS} -- ./loop
run ALLCPU perf stat -a -A -x, -e instructions,cycles -- sleep 1
# CPU 1's NMIs and PMIs around the record (/proc/interrupts), and perf's
# lost-record count: a missing sample then says whether its NMI came.
run RECORD-IRQS0 grep -E '^ *(NMI|PMI):' /proc/interrupts
run RECORD taskset -c 1 perf record -q -o /tmp/rec.data -e instructions/period={RECORD_PERIOD}/u {K_EVENTS} ./loop10m
run RECORD-IRQS1 grep -E '^ *(NMI|PMI):' /proc/interrupts
run RECORD-SAMPLES sh -c 'perf script -i /tmp/rec.data -F event | sort | uniq -c'
run RECORD-THROTTLE sh -c 'perf report -i /tmp/rec.data -D 2>/dev/null | grep -c "PERF_RECORD_THROTTLE"'
run RECORD-LOST sh -c 'perf report -i /tmp/rec.data -D 2>/dev/null | grep -c "PERF_RECORD_LOST"'
rm -f /tmp/rec.data
# The default event in frequency mode: under TCG each PMI takes long in the
# host's time, which Linux's period adjustment answers with shorter periods
# (hundreds of thousands of samples on ./loop10m); ./loop is enough.
run DEFAULT taskset -c 1 perf record -q -o /tmp/def.data ./loop
run DEFAULT-EVLIST perf evlist -v -i /tmp/def.data
run DEFAULT-SAMPLES sh -c 'perf script -i /tmp/def.data -F event | sort | uniq -c'
rm -f /tmp/def.data
if [ "$(cat /sys/bus/event_source/devices/cpu/caps/max_precise 2>/dev/null || echo 0)" -gt 0 ]; then
run PEBS taskset -c 1 perf record -q -o /tmp/pebs.data --intr-regs=cx --user-regs=cx -e branches/period={PEBS_PERIOD}/upp {K_EVENTS} ./loop
run PEBS-SAMPLES sh -c 'perf script -i /tmp/pebs.data -F event | sort | uniq -c'
run PEBS-IPS sh -c 'perf script -i /tmp/pebs.data -F event,ip,sym | grep branches | sort | uniq -c'
run PEBS-ORDER sh -c 'perf script -i /tmp/pebs.data -F time,event,ip,iregs,uregs | grep -v page-faults'
run PEBS-IRET sh -c "grep ' native_irq_return_iret$' /proc/kallsyms"
rm -f /tmp/pebs.data
fi
if [ -e /sys/bus/event_source/devices/cpu/caps/branches ]; then
run LBR-IRQS0 cat /proc/interrupts
run LBR taskset -c 1 perf record -q -o /tmp/lbr.data --switch-events -b -e instructions/period={RECORD_PERIOD}/u ./loop10m
run LBR-IRQS1 cat /proc/interrupts
run LBR-DEPTHS sh -c 'perf script -i /tmp/lbr.data -F ip,sym,brstack | awk "{{n = 0; for (i = 1; i <= NF; i++) if (\$i ~ /^0x[0-9a-f]+\/0x/) n++; print n, \$1, \$2}}" | sort | uniq -c'
run LBR-SWITCHES sh -c 'perf script -i /tmp/lbr.data --show-switch-events -F time,ip,brstack | awk "/PERF_RECORD_SWITCH/ {{print (/ OUT/ ? \\"SWITCH-OUT\\" : \\"SWITCH-IN\\"); next}} {{n = 0; for (i = 1; i <= NF; i++) if (\\$i ~ /^0x[0-9a-f]+\\/0x/) n++; print \\"SAMPLE\\", n, \\$2}}"'
run LBR-ENTRIES sh -c 'perf script -i /tmp/lbr.data -F brstack | tr " " "\\n" | grep . | cut -d/ -f1,2 | sort | uniq -c'
rm -f /tmp/lbr.data
fi
# Top-down metrics: Linux lists its topdown-* events where PERF_METRICS is
# enumerated (arch/x86/events/intel/core.c td_is_visible) and reads them
# from MSR 329H over the slots of fixed counter 3.
run TOPDOWN-EVENTS sh -c 'ls /sys/bus/event_source/devices/cpu/events/ | grep -E "^(slots|topdown-)"; true'
if [ -e /sys/bus/event_source/devices/cpu/events/topdown-retiring ]; then
run TOPDOWN taskset -c 1 perf stat -x, -e '{{slots,topdown-retiring,topdown-bad-spec,topdown-fe-bound,topdown-be-bound}}',context-switches -- ./loop
# One task switched out and back in at each nanosleep: Linux saves FIXED_CTR3
# and PERF_METRICS at the switch-out and writes them back at the switch-in
# (icl_set_topdown_event_period, Linux 2cb5383b30d4).
run TOPDOWN-SWITCH taskset -c 1 perf stat -x, -e '{{slots,topdown-retiring,topdown-bad-spec,topdown-fe-bound,topdown-be-bound}}',context-switches -- ./nap
fi
run PERFTEST-LIST sh -c 'perf test list 2>&1 | grep -E "^ *[0-9]+: ({tests})$"'
for n in $(perf test list 2>&1 | grep -E "^ *[0-9]+: ({tests})$" | sed 's/:.*//'); do run PERFTEST-$n sh -c "perf test $n 2>&1 | cat"; done
# The kernel's log again after the last perf run: what the runs made it say
# (an "unchecked MSR access" warning is pr_warn, kept off the quiet console).
echo "@@ BEGIN DMESG-END"; dmesg; echo "@@ END DMESG-END rc=0"
echo "@@ DONE"
poweroff -f
"""
