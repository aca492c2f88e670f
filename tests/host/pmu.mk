# Host tests of the PMU driver: the pmu/ sources (minus the kernel seam)
# against the software PMU model, one program per area.
PMU_HOST_SRCS := $(filter-out pmu/pmu_hw_kernel.c pmu/monitor.c pmu/sample_mode.c,$(wildcard pmu/*.c)) \
	lib/printf.c lib/string.c lib/ringbuf.c tests/host/pmu_model.c \
	$(wildcard emu/model/*.c)
HOST_SRCS_pmu_model := $(PMU_HOST_SRCS)
HOST_SRCS_pmu_caps := $(PMU_HOST_SRCS)
HOST_SRCS_pmu_probe := $(PMU_HOST_SRCS)
HOST_SRCS_pmu_event := $(PMU_HOST_SRCS)
HOST_SRCS_pmu_delta := $(PMU_HOST_SRCS)
HOST_SRCS_pmu_parse := $(PMU_HOST_SRCS)
