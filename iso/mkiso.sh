#!/bin/sh
# The pmutest ISO: GRUB for BIOS (i386-pc) and UEFI (x86_64-efi) in one
# hybrid image that boots as a CD and as a raw disk / USB stick.
#
#   iso/mkiso.sh OUTPUT KERNEL GRUB_CFG STAGING_DIR
#
# Built with grub-mkimage and xorriso rather than grub-mkrescue, because
# under TCG GRUB's start-up is mostly decompression and console output:
# - the BIOS core image is always LZMA-compressed, and GRUB's decoder is
#   slow under TCG (a 155 KB core with every module took 0.13 s to
#   unpack): the core holds only what reads the disk, every other module
#   is an uncompressed file (--compress=xz would have GRUB run the same
#   decoder on each);
# - grub-mkrescue's built-in configuration loads every partition map
#   GRUB knows; each one missing from the image prints an error, and the
#   BIOS console draws it one int 10h call per character;
# - a UEFI image is a PE file that the firmware loads as it is: all its
#   modules go inside, so GRUB reads nothing from the CD but grub.cfg and
#   the kernel. It carries no partition-map module: GRUB then names the
#   whole disk as the one it started from, on a CD and on a USB stick
#   (where the firmware loads it from the ESP partition) alike, and finds
#   /boot/grub in the ISO 9660 tree.
# The image has no command or file-system lists, so GRUB loads nothing on
# demand: grub.cfg loads each module it uses by name.
set -eu

if [ $# -ne 4 ]; then
	echo "usage: $0 OUTPUT KERNEL GRUB_CFG STAGING_DIR" >&2
	exit 2
fi
out=$1 kernel=$2 cfg=$3 stage=$4
GRUB_LIB=${GRUB_LIB:-/usr/lib/grub}

# What grub.cfg uses, per firmware: the menu (normal), the serial port,
# [ (test), the SMBIOS look-up that picks the menu timeout, the loader,
# and the video driver that gives the kernel a linear framebuffer.
MODULES="normal serial terminal test smbios multiboot2"
BIOS_MODULES="$MODULES vbe"
EFI_MODULES="$MODULES efi_gop"

# with_deps DIR MODULE...: the modules and everything they need (moddep.lst).
with_deps() {
	dir=$1
	shift
	todo="$*" seen=""
	while [ -n "$todo" ]; do
		set -- $todo
		m=$1
		shift
		todo="$*"
		case " $seen " in *" $m "*) continue ;; esac
		seen="$seen $m"
		todo="$todo $(sed -n "s/^$m://p" "$dir/moddep.lst")"
	done
	echo $seen
}

rm -rf "$stage"
mkdir -p "$stage/iso/boot/grub/i386-pc" "$stage/esp"
strip --strip-debug -o "$stage/iso/boot/pmutest.elf" "$kernel"
cp "$cfg" "$stage/iso/boot/grub/grub.cfg"

# BIOS: El Torito boot file with the disk and ISO 9660 drivers; GRUB finds
# the rest under its prefix on the device it booted from (CD or stick).
for m in $(with_deps "$GRUB_LIB/i386-pc" $BIOS_MODULES); do
	cp "$GRUB_LIB/i386-pc/$m.mod" "$stage/iso/boot/grub/i386-pc/"
done
grub-mkimage -O i386-pc-eltorito -d "$GRUB_LIB/i386-pc" -p /boot/grub \
	-o "$stage/iso/boot/grub/i386-pc/eltorito.img" biosdisk iso9660

# UEFI: one PE file with every module, on a FAT image that is both the El
# Torito UEFI boot image and, on a stick, the EFI system partition.
grub-mkimage -O x86_64-efi -d "$GRUB_LIB/x86_64-efi" -p /boot/grub \
	-o "$stage/esp/bootx64.efi" iso9660 $EFI_MODULES
mformat -C -f 1440 -i "$stage/iso/efi.img" ::
mmd -i "$stage/iso/efi.img" ::/EFI ::/EFI/BOOT
mcopy -i "$stage/iso/efi.img" "$stage/esp/bootx64.efi" ::/EFI/BOOT/BOOTX64.EFI

# The hybrid layout grub-mkrescue makes: an MBR that starts the El Torito
# BIOS image from a stick (boot_hybrid.img), the FAT image as EFI system
# partition, boot files first on the disc.
xorriso -as mkisofs -graft-points -V PMUTEST \
	-b boot/grub/i386-pc/eltorito.img -no-emul-boot -boot-load-size 4 -boot-info-table \
	--grub2-boot-info --grub2-mbr "$GRUB_LIB/i386-pc/boot_hybrid.img" \
	--efi-boot efi.img -efi-boot-part --efi-boot-image --protective-msdos-label \
	-o "$out" -r "$stage/iso" --sort-weight 0 / --sort-weight 1 /boot
