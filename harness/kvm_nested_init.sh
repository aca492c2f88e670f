#!/bin/busybox sh
# The L1 init of harness/kvm_nested.py: a Debian kernel on the emulated AMD
# PMU loads KVM, then runs pmutest as its guest (L2) with Debian's QEMU.
# Every line the harness reads starts with "kvm-nested: "; L2's serial log
# is printed between the BEGIN and END markers.  Parameters (kernel command
# line): l2append= (pmutest's command line, '+' for ' '), kvmparams=
# (module.parameter=value, ',' separated), l2smp=, l2timeout= (seconds).
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp

arg() { # arg NAME: the value of NAME= on the kernel command line
	for w in $(cat /proc/cmdline); do
		case "$w" in "$1="*) echo "${w#*=}" ;; esac
	done
}
say() { echo "kvm-nested: $*"; }
fact() { # fact NAME FILE: the file's content as one line, or "absent"
	if [ -r "$2" ]; then say "$1=$(tr '\n' ' ' <"$2" | sed 's/ *$//')"; else say "$1=absent"; fi
}

say "uname=$(uname -r)"
say "vendor=$(sed -n 's/^vendor_id[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
say "flags=$(sed -n 's/^flags[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
say "perf_pmus=$(ls /sys/bus/event_source/devices 2>/dev/null | tr '\n' ' ')"
fact nmi_watchdog /proc/sys/kernel/nmi_watchdog
dmesg | grep -E 'Performance Events|NMI watchdog|PMU|SVM|kvm' | sed 's/^/kvm-nested: dmesg: /'

# The modules in dependency order (the harness wrote /modules/order).
kvmparams=$(arg kvmparams | tr ',' ' ')
while read -r m; do
	mod=$(basename "$m" .ko | tr - _)
	p=""
	for w in $kvmparams; do
		case "$w" in "$mod".*) p="$p ${w#"$mod".}" ;; esac
	done
	# shellcheck disable=SC2086
	insmod "$m" $p 2>&1 | sed 's/^/kvm-nested: insmod: /'
done </modules/order
for p in /sys/module/kvm/parameters/* /sys/module/kvm_amd/parameters/*; do
	[ -r "$p" ] && say "param $(basename "$(dirname "$(dirname "$p")")").$(basename "$p")=$(cat "$p")"
done
dmesg | grep -E 'kvm|SVM' | tail -n 20 | sed 's/^/kvm-nested: dmesg: /'
[ -e /dev/kvm ] || say "error: no /dev/kvm"
say "vmm=$(qemu-system-x86_64 --version | head -n 1)"
# The CPU flags the VMM knows, as tools/pmutest/host.py reads them on a host.
say "vmm_flags=$(qemu-system-x86_64 -cpu help 2>/dev/null | sed '1,/^Recognized CPUID flags:/d' | tr -s ' \n' '  ')"

# L2's state, one "kvm-nested: l2 state" line per fact: the VMM's CPU
# time, KVM's exit counters (debugfs), L1's interrupt counts.
mkdir -p /sys/kernel/debug
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
l2_state() {
	st() { say "l2 state: $*"; }
	[ -r "/proc/$1/stat" ] && st "vmm utime+stime $(cut -d' ' -f14,15 "/proc/$1/stat") ticks"
	for f in exits irq_exits nmi_window_exits irq_window_exits halt_exits io_exits \
		request_irq_exits signal_exits insn_emulation irq_injections nmi_injections \
		pmu_pmi_injections; do
		[ -r "/sys/kernel/debug/kvm/$f" ] && st "kvm $f=$(cat "/sys/kernel/debug/kvm/$f")"
	done
	grep -E '^ *(LOC|PMI|NMI|CAL|RES|PMN|VPMI|[0-9]+):' /proc/interrupts | tr -s ' ' |
		sed 's/^/kvm-nested: l2 state: interrupts /'
}
# The VMM's threads' kernel stacks and every CPU's backtrace (sysrq l):
# where a stopped L2 waits.
l2_stacks() {
	for t in /proc/"$1"/task/*; do
		say "l2 stack $(basename "$t") $(cat "$t/comm"): $(tr '\n' '|' <"$t/stack" 2>/dev/null)"
	done
	echo l >/proc/sysrq-trigger
	dmesg | tail -n 80 | sed 's/^/kvm-nested: l2 sysrq: /'
}

append=$(arg l2append | tr '+' ' ')
smp=$(arg l2smp)
timeout=$(arg l2timeout)
say "l2 start uptime=$(cut -d' ' -f1 /proc/uptime) append=$append"
echo "kvm-nested: l2 start" >/dev/kmsg
qemu-system-x86_64 -nodefaults -no-reboot -display none -machine q35 -accel kvm \
	-smp "${smp:-2}" -cpu host -m 256M -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
	-kernel /pmutest.elf -append "$append" -serial file:/tmp/l2.log >/tmp/l2.err 2>&1 &
pid=$!
n=0
while kill -0 "$pid" 2>/dev/null; do
	sleep 1
	n=$((n + 1))
	# Progress every 60 s: a leg that stops shows where L2 stopped, and
	# whether its vCPUs still run (KVM's exit counts, L1's interrupts).
	if [ $((n % 60)) -eq 0 ]; then
		say "l2 progress ${n} s: $(wc -l </tmp/l2.log) lines, last: $(tail -n 1 /tmp/l2.log)"
		l2_state "$pid"
	fi
	if [ "$n" -ge "${timeout:-1800}" ]; then
		say "l2 timeout after $n s"
		l2_state "$pid"
		l2_stacks "$pid"
		kill "$pid"
	fi
done
wait "$pid"
rc=$?
say "l2 status=$rc uptime=$(cut -d' ' -f1 /proc/uptime)"
sed 's/^/kvm-nested: l2 stderr: /' /tmp/l2.err
# What KVM and perf said while L2 ran (warnings are below the console's
# loglevel): the kernel side of a leg that failed.
dmesg | sed -n '/kvm-nested: l2 start/,$p' | sed 's/^/kvm-nested: l1 dmesg: /'
echo "=== BEGIN L2 LOG"
cat /tmp/l2.log
echo "=== END L2 LOG"
poweroff -f
