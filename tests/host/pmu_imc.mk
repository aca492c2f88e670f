# Host tests of the memory-controller counters (pmu/intel/imc.c): the table,
# MCHBAR and the UBOX bus map, the exact PCI sequences, per package
# (tests/host/pmu.mk list).
HOST_SRCS_pmu_imc = $(PMU_HOST_SRCS)
