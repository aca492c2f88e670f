#!/usr/bin/env python3
"""Check that the kernel ELF can be loaded through the multiboot1 a.out
kludge: QEMU -kernel copies the file bytes from the header onwards as one
block to load_addr, so every PT_LOAD's file offset must equal its physical
address minus one constant, and the headers must sit where the specs
require (multiboot1 in the first 8 KiB, multiboot2 in the first 32 KiB)."""
import struct
import sys


def main(path):
    data = open(path, 'rb').read()
    errors = []
    if data[:4] != b'\x7fELF' or data[4] != 2:
        print('%s: not an ELF64 file' % path)
        return 1
    phoff, = struct.unpack_from('<Q', data, 0x20)
    phentsize, phnum = struct.unpack_from('<HH', data, 0x36)
    deltas = set()
    for i in range(phnum):
        p_type, _flags, off, _vaddr, paddr, filesz, _memsz, _align = struct.unpack_from(
            '<IIQQQQQQ', data, phoff + i * phentsize)
        if p_type == 1 and filesz:
            deltas.add(paddr - off)
    if len(deltas) != 1:
        errors.append('PT_LOAD segments are not contiguous in the file (paddr - offset = %s)'
                      % sorted(hex(d) for d in deltas))
    mb1 = data.find(struct.pack('<I', 0x1BADB002))
    mb2 = data.find(struct.pack('<I', 0xE85250D6))
    if mb1 < 0 or mb1 + 12 > 8192 or mb1 % 4:
        errors.append('multiboot1 header not in the first 8 KiB (at %d)' % mb1)
    if mb2 < 0 or mb2 + 16 > 32768 or mb2 % 8:
        errors.append('multiboot2 header not in the first 32 KiB, 8-aligned (at %d)' % mb2)
    for e in errors:
        print('%s: %s' % (path, e))
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
