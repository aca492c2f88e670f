# Host tests of sample mode's pure parts (pmu/sample_mode_opts.c,
# pmu/sample_mode_drain.c) against the PMU model, which fills the rings
# through the real PMI handler. Recursive '=' so PMU_HOST_SRCS
# (tests/host/pmu.mk) is seen whatever order the .mk files are read in.
HOST_SRCS_sample_mode = $(PMU_HOST_SRCS)
