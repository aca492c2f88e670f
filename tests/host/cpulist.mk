# Host tests of lib/cpulist.c (CPU list parsing, iteration, printing).
HOST_SRCS_cpulist := lib/cpulist.c lib/printf.c lib/string.c
