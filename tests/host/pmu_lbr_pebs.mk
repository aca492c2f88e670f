# Host tests of the LBR and PEBS driver (pmu/lbr.c, pmu/pebs.c) on CPUs whose
# PMU registers are emu/model's.
HOST_SRCS_pmu_lbr_pebs = $(PMU_HOST_SRCS)
