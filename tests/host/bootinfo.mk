# Host test for boot/multiboot.c (Multiboot1/2 parsing, memory-map helpers).
HOST_SRCS_bootinfo := boot/multiboot.c
