# Host tests of modes/workloads.c; the test passes its own allocator and
# clock where the kernel passes bootmem_alloc() and uptime_us().
HOST_SRCS_workloads := modes/workloads.c lib/printf.c lib/string.c
