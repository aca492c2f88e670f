#!/bin/sh
# Install what a pmutest target needs from Debian's packages, only what is
# missing. As root it runs apt-get; otherwise it prints the exact command
# and fails, so `make` stops with the fix on screen.
set -eu

want=""
need() { # need <command-or-file> <package>
	case "$1" in
	/*) [ -e "$1" ] || want="$want $2" ;;
	*) command -v "$1" >/dev/null 2>&1 || want="$want $2" ;;
	esac
}

need_py() { # need_py <python-module> <package>
	python3 -c "import $1" >/dev/null 2>&1 || want="$want $2"
}

for what in "$@"; do
	case "$what" in
	build)
		need make make
		need gcc gcc
		need /usr/include/stdio.h libc6-dev
		need objdump binutils
		need python3 python3
		;;
	qemu)
		need qemu-system-x86_64 qemu-system-x86
		need python3 python3
		need objdump binutils
		;;
	iso)
		need grub-mkimage grub-common
		need /usr/lib/grub/i386-pc/multiboot2.mod grub-pc-bin
		need /usr/lib/grub/x86_64-efi/multiboot2.mod grub-efi-amd64-bin
		need xorriso xorriso
		need mformat mtools
		# make netboot and its QEMU clients: the e1000 option ROM (iPXE, BIOS + UEFI).
		need /usr/lib/ipxe/qemu/efi-e1000.rom ipxe-qemu
		# Debian 12 ships OVMF_CODE.fd; newer releases only the 4M image.
		[ -e /usr/share/OVMF/OVMF_CODE.fd ] || need /usr/share/OVMF/OVMF_CODE_4M.fd ovmf
		;;
	clang)
		need clang clang
		;;
	format)
		# make format / format-check: .clang-format is for version 14,
		# Debian 12's.
		need clang-format clang-format
		;;
	qemu-pmu)
		# emu/qemu/build.sh: Debian's QEMU source, patched and built.
		need gcc gcc
		need make make
		need ninja ninja-build
		need meson meson
		need pkg-config pkg-config
		need python3 python3
		need dpkg-source dpkg-dev
		need patch patch
		need rsync rsync
		need strip binutils
		need xz xz-utils
		need /usr/lib/ccache/gcc ccache
		need /usr/include/glib-2.0/glib.h libglib2.0-dev
		need /usr/include/pixman-1/pixman.h libpixman-1-dev
		need /usr/include/libfdt.h libfdt-dev
		need /usr/include/zlib.h zlib1g-dev
		;;
	debian)
		# harness/debian.py and harness/initramfs.py: private apt downloads,
		# package extraction, library closures, compressed kernel modules.
		need apt-get apt
		need dpkg-deb dpkg
		need readelf binutils
		need xz xz-utils
		need zstd zstd
		need /usr/share/keyrings/debian-archive-keyring.gpg debian-archive-keyring
		need python3 python3
		;;
	pytest-deps)
		# ci-examples' tests read YAML and drive a LAVA-like pexpect monitor.
		need_py yaml python3-yaml
		need_py pexpect python3-pexpect
		;;
	*)
		echo "install-deps.sh: unknown group '$what'" >&2
		exit 2
		;;
	esac
done

[ -z "$want" ] && exit 0
# shellcheck disable=SC2086
set -- $(printf '%s\n' $want | sort -u)
if [ "$(id -u)" != 0 ]; then
	echo "pmutest needs: $*" >&2
	echo "run: sudo apt-get install -y $*" >&2
	exit 1
fi
echo "installing: $*"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || true
apt-get install -y -qq --no-install-recommends "$@" >/dev/null
