# Host test for boot/multiboot.c and boot/pvh.c (Multiboot1/2 and PVH parsing, memory-map helpers).
HOST_SRCS_bootinfo := boot/multiboot.c boot/pvh.c
