# Host test for boot/pvh.c (hvm_start_info parsing).
HOST_SRCS_pvh := boot/multiboot.c boot/pvh.c
