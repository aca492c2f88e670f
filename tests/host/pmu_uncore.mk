# Host tests of the client-uncore driver (pmu/intel/uncore.c): detection and the
# exact C-box register sequences on the PMU model (tests/host/pmu.mk list).
HOST_SRCS_pmu_uncore = $(PMU_HOST_SRCS)
