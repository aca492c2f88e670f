# Host tests of the PMU driver: every pmu/*.c (the kernel binding lives in
# pmu/kernel/, which the host never builds) against the software PMU model,
# whose registers are emu/model's (the model QEMU's emulated PMU runs), one
# program per area.
PMU_HOST_SRCS := $(wildcard pmu/*.c pmu/intel/*.c pmu/amd/*.c) arch/x86/vectors.c arch/x86/hv_identify.c lib/parse.c lib/printf.c lib/string.c lib/ringbuf.c \
	tests/host/pmu_model.c $(wildcard emu/model/*.c)
HOST_SRCS_pmu_model := $(PMU_HOST_SRCS)
HOST_SRCS_pmu_caps := $(PMU_HOST_SRCS)
HOST_SRCS_pmu_probe := $(PMU_HOST_SRCS)
HOST_SRCS_pmu_event := $(PMU_HOST_SRCS)
HOST_SRCS_pmu_delta := $(PMU_HOST_SRCS)
HOST_SRCS_pmu_parse := $(PMU_HOST_SRCS)
