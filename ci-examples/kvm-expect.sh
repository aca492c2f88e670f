#!/bin/sh
# Print the expect file a KVM boot of pmutest should be checked against on
# this host: what the guest's PMU can be depends on the host CPU and on KVM.
#   tools/pmutest-run --iso build/pmutest.iso --accel kvm --expect "$(ci-examples/kvm-expect.sh)"
# PMUTEST_CPUINFO and PMUTEST_SYSFS replace /proc/cpuinfo and /sys (tests).
set -eu

cpuinfo=${PMUTEST_CPUINFO:-/proc/cpuinfo}
sysfs=${PMUTEST_SYSFS:-/sys}
dir=$(cd "$(dirname "$0")/../tests/expect" && pwd)

field() { # the first value of a /proc/cpuinfo field
	sed -n "s/^$1[[:space:]]*: *//p" "$cpuinfo" | head -n 1
}
vendor=$(field vendor_id)
flags=" $(field flags) "
enable_pmu=$(cat "$sysfs/module/kvm/parameters/enable_pmu" 2>/dev/null || echo Y)

case "$vendor" in
GenuineIntel) expect=kvm-intel ;;
AuthenticAMD) expect=kvm-amd ;;
*) expect=kvm-nopmu ;;
esac
# No vPMU for the guest: KVM told not to (module parameter enable_pmu=N);
# a host whose perf has no core PMU to back guest counters with (no
# event_source device "cpu": a CI runner that is itself a VM without a PMU);
# an Intel host without an architectural PMU (no arch_perfmon flag); or a
# hybrid host, where perf splits the core PMU into cpu_core and cpu_atom and
# KVM turns its vPMU off.
pmus=$sysfs/bus/event_source/devices
case "$enable_pmu" in N | n | 0) expect=kvm-nopmu ;; esac
[ -d "$pmus/cpu" ] || expect=kvm-nopmu
[ -d "$pmus/cpu_core" ] && expect=kvm-nopmu
if [ "$expect" = kvm-intel ]; then
	case "$flags" in *" arch_perfmon "*) ;; *) expect=kvm-nopmu ;; esac
fi
echo "$dir/$expect.expect"
