#!/bin/sh
# Print the expect file a KVM boot of pmutest should be checked against on
# this host: what the guest's PMU can be depends on the host CPU and on KVM.
#   tools/pmutest-run --iso build/pmutest.iso --accel kvm --expect "$(ci-examples/kvm-expect.sh)"
# (the same as --expect auto). The choice is made in one place,
# tools/pmutest/host.py; tools/pmutest-host also prints the settings behind it.
# PMUTEST_CPUINFO and PMUTEST_SYSFS replace /proc/cpuinfo and /sys (tests);
# PMUTEST_QEMU names the VMM whose CPU flags decide PerfMonV2 for an AMD
# guest (default qemu-system-x86_64; empty: do not ask).
set -eu
tools=$(cd "$(dirname "$0")/../tools" && pwd)
set -- --expect-path
if [ -n "${PMUTEST_CPUINFO:-}" ]; then set -- "$@" --cpuinfo "$PMUTEST_CPUINFO"; fi
if [ -n "${PMUTEST_SYSFS:-}" ]; then set -- "$@" --sysfs "$PMUTEST_SYSFS"; fi
if [ -n "${PMUTEST_QEMU+set}" ]; then set -- "$@" --qemu "$PMUTEST_QEMU"; fi
exec python3 "$tools/pmutest-host" "$@"
