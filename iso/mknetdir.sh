#!/bin/sh
# Lays out a TFTP tree that network-boots pmutest on BIOS and UEFI PXE
# clients, the way a lab's DHCP/TFTP server serves it:
#
#   boot/grub/i386-pc/core.0        BIOS PXE clients: GRUB's PXE image
#   boot/grub/x86_64-efi/core.efi   UEFI PXE clients: GRUB's EFI network image
#   boot/grub/grub.cfg              the ISO's menu (iso/grub.cfg.in), which
#                                   loads /boot/pmutest.elf by multiboot2 from
#                                   the TFTP server GRUB booted from
#   boot/pmutest.elf                the kernel (debug info stripped)
#   pmutest.ipxe                    an iPXE script for iPXE clients (BIOS: the
#                                   kernel by multiboot1, iPXE has no multiboot2)
#
# The DHCP server names core.0 or core.efi as the boot file (DHCP option 67,
# by client architecture, option 93) or pmutest.ipxe for iPXE; GRUB's
# network images find grub.cfg under the server's boot/grub (grub-mknetdir).
set -eu

if [ $# -ne 4 ]; then
	echo "usage: $0 OUTPUT_DIR KERNEL GRUB_CFG CMDLINE" >&2
	exit 2
fi
out=$1 kernel=$2 cfg=$3 cmdline=$4
GRUB_LIB=${GRUB_LIB:-/usr/lib/grub}

rm -rf "$out"
mkdir -p "$out/boot/grub"
for platform in i386-pc x86_64-efi; do
	grub-mknetdir --net-directory="$out" --subdir=boot/grub --locales= --fonts= \
		-d "$GRUB_LIB/$platform"
done
cp "$cfg" "$out/boot/grub/grub.cfg"
strip --strip-debug -o "$out/boot/pmutest.elf" "$kernel"
# iPXE resolves the relative path against the script's own TFTP URI.
printf '#!ipxe\necho pmutest: loading boot/pmutest.elf by multiboot1\nkernel boot/pmutest.elf %s\nboot\n' \
	"$cmdline" > "$out/pmutest.ipxe"
