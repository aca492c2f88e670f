# Host tests of the driver's version 6 / CPUID.23H decoding and the PMI
# handler's overflow inference (pmu/intel/v6.c, pmu/pmi.c) on the PMU model
# (tests/host/pmu.mk list).
HOST_SRCS_pmu_v6 = $(PMU_HOST_SRCS)
