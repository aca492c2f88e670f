# Host tests of monitor mode's pure parts (modes/monitor_fmt.c): event-list
# splitting, checked against the real event parser, and the table layout.
# Recursive '=' so PMU_HOST_SRCS (tests/host/pmu.mk) is seen whatever order
# the .mk files are read in.
HOST_SRCS_monitor = $(PMU_HOST_SRCS) modes/monitor_fmt.c
