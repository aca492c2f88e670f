# Host tests of tests/pmu/vpmu_model.c (the vPMU model read from the cost map).
HOST_SRCS_vpmu_model := tests/pmu/vpmu_model.c
