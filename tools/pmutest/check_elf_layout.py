#!/usr/bin/env python3
"""Check that the kernel ELF can be loaded through the multiboot1 a.out
kludge: QEMU -kernel copies the file bytes from the header onwards as one
block to load_addr, so every PT_LOAD's file offset must equal its physical
address minus one constant, and the headers must sit where the specs
require (multiboot1 in the first 8 KiB, multiboot2 in the first 32 KiB).
Every image also carries the PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY in a
PT_NOTE segment, naming an address inside the executable segment); with
--pvh-only (build/pmutest-pvh.elf) there must be no multiboot1 header, or
QEMU -kernel would boot it by multiboot instead (hw/i386/x86.c)."""
import struct
import sys

XEN_ELFNOTE_PHYS32_ENTRY = 18


def pvh_entry(data, notes):
    """The PHYS32_ENTRY address from the PT_NOTE segments, or None."""
    for off, size, align in notes:
        pos, end = off, off + size
        align = max(align, 1)
        while pos + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from('<III', data, pos)
            name = data[pos + 12:pos + 12 + namesz]
            desc = pos + 12 + (namesz + align - 1) // align * align
            if name == b'Xen\0' and ntype == XEN_ELFNOTE_PHYS32_ENTRY and descsz in (4, 8):
                return struct.unpack_from('<Q' if descsz == 8 else '<I', data, desc)[0]
            pos = desc + (descsz + align - 1) // align * align
    return None


def main(path, pvh_only=False):
    data = open(path, 'rb').read()
    errors = []
    if data[:4] != b'\x7fELF' or data[4] != 2:
        print('%s: not an ELF64 file' % path)
        return 1
    phoff, = struct.unpack_from('<Q', data, 0x20)
    phentsize, phnum = struct.unpack_from('<HH', data, 0x36)
    deltas = set()
    notes, text = [], []
    for i in range(phnum):
        p_type, flags, off, _vaddr, paddr, filesz, _memsz, align = struct.unpack_from(
            '<IIQQQQQQ', data, phoff + i * phentsize)
        if p_type == 1 and filesz:
            deltas.add(paddr - off)
        if p_type == 1 and flags & 1:
            text.append((paddr, paddr + filesz))
        if p_type == 4:
            notes.append((off, filesz, align))
    entry = pvh_entry(data, notes)
    if entry is None:
        errors.append('no PVH entry note (Xen, XEN_ELFNOTE_PHYS32_ENTRY) in a PT_NOTE segment')
    elif not any(lo <= entry < hi for lo, hi in text):
        errors.append('the PVH entry %#x is outside the executable segment' % entry)
    if len(deltas) != 1:
        errors.append('PT_LOAD segments are not contiguous in the file (paddr - offset = %s)'
                      % sorted(hex(d) for d in deltas))
    mb1 = data.find(struct.pack('<I', 0x1BADB002))
    mb2 = data.find(struct.pack('<I', 0xE85250D6))
    if pvh_only and 0 <= mb1 < 8192:
        errors.append('a multiboot1 header in the PVH image (at %d): QEMU -kernel would take it' % mb1)
    if not pvh_only and (mb1 < 0 or mb1 + 12 > 8192 or mb1 % 4):
        errors.append('multiboot1 header not in the first 8 KiB (at %d)' % mb1)
    if mb2 < 0 or mb2 + 16 > 32768 or mb2 % 8:
        errors.append('multiboot2 header not in the first 32 KiB, 8-aligned (at %d)' % mb2)
    for e in errors:
        print('%s: %s' % (path, e))
    return 1 if errors else 0


if __name__ == '__main__':
    args = sys.argv[1:]
    sys.exit(main(args[-1], pvh_only='--pvh-only' in args))
