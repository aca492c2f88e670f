#!/bin/busybox sh
# dom0's init for harness/xen_pvh.py: Debian's Linux as Xen's PV dom0
# starts the toolstack (xenstored, xenconsoled) and runs pmutest as a PVH
# guest with xl.  pmutest writes its log to Xen's debug port 0xe9 (Xen
# prints it as "(d1) ..." lines on its console, the serial port).  Every
# line the harness reads starts with "xen-pvh: ".
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin:/usr/sbin:/usr/lib/xen-4.17/bin
export LD_LIBRARY_PATH=/usr/lib/xen-4.17/lib
mkdir -p /proc /sys /dev /tmp /run /var/run/xen /var/run/xenstored /var/lib/xenstored \
	/var/log/xen /var/lib/xen /etc/xen
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mkdir -p /dev/pts
mount -t devpts devpts /dev/pts
say() { echo "xen-pvh: $*"; }
arg() {
	for w in $(cat /proc/cmdline); do
		case "$w" in "$1="*) echo "${w#*=}" ;; esac
	done
}
say "uname=$(uname -r)"
say "hypervisor=$(cat /sys/hypervisor/type 2>/dev/null) $(cat /sys/hypervisor/version/major 2>/dev/null).$(cat /sys/hypervisor/version/minor 2>/dev/null)"
say "xen pmu=$(cat /sys/hypervisor/pmu/pmu_mode 2>/dev/null || echo absent)"
while read -r m; do
	insmod "$m" 2>&1 | sed 's/^/xen-pvh: insmod: /'
done </modules/order
mkdir -p /proc/xen
mount -t xenfs xenfs /proc/xen || say "error: no xenfs"
mkdir -p /dev/xen
say "step: xenstored"
xenstored --pid-file /var/run/xenstored.pid 2>&1 | sed 's/^/xen-pvh: xenstored: /'
sleep 1
say "step: xen-init-dom0"
xen-init-dom0 2>&1 | sed 's/^/xen-pvh: xen-init-dom0: /'
say "step: xenconsoled"
xenconsoled --pid-file=/var/run/xenconsoled.pid --log=guest --log-dir=/tmp 2>&1 |
	sed 's/^/xen-pvh: xenconsoled: /'
cat >/etc/xen/pmutest.cfg <<CFG
name = "pmutest"
type = "pvh"
kernel = "/pmutest.elf"
cmdline = "$(arg guestappend | tr '+' ' ')"
memory = 256
vcpus = $(arg guestvcpus)
on_poweroff = "destroy"
on_crash = "destroy"
CFG
say "step: xl create"
xl create /etc/xen/pmutest.cfg 2>&1 | sed 's/^/xen-pvh: xl: /'
n=0
timeout=$(arg guesttimeout)
while xl list pmutest >/dev/null 2>&1; do
	sleep 5
	n=$((n + 5))
	# pmutest's last line is in Xen's console ring (xl dmesg): a guest
	# that halts instead of powering off is done too.
	if xl dmesg 2>/dev/null | grep -q 'pmutest: end'; then
		sleep 2
		say "guest printed its end after $n s"
		xl destroy pmutest
		break
	fi
	if [ "$n" -ge "${timeout:-1500}" ]; then
		say "guest timeout after $n s"
		xl destroy pmutest
	fi
done
say "step: guest gone after $n s"
poweroff -f
