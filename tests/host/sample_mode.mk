# Host tests of sample mode's pure parts (modes/sample_opts.c,
# modes/sample_drain.c, modes/modes.c) against the PMU model, which fills
# the rings through the real PMI handler. Recursive '=' so PMU_HOST_SRCS
# (tests/host/pmu.mk) is seen whatever order the .mk files are read in.
HOST_SRCS_sample_mode = $(PMU_HOST_SRCS) modes/sample_opts.c modes/sample_drain.c modes/monitor_fmt.c \
	modes/workloads.c modes/modes.c lib/cpulist.c
