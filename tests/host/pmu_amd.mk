# Host tests of the AMD backend: the pmu/ sources against the SDM model
# with its AMD part (deferred '=' so pmu.mk's list is read at use).
HOST_SRCS_pmu_amd = $(PMU_HOST_SRCS) tests/host/pmu_model_amd.c
