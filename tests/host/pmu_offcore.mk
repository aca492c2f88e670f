# Host tests of the offcore-response tables and RSP MSR allocation
# (pmu/intel/offcore.c with pmu/event.c) on the PMU model (tests/host/pmu.mk list).
HOST_SRCS_pmu_offcore = $(PMU_HOST_SRCS)
