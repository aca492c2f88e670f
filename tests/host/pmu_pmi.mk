# Host test of the PMI handler (pmu/pmi.c) and sampling sessions
# (pmu/sampling.c) against the PMU model; links the same sources as the
# other pmu_* programs (tests/host/pmu.mk).
HOST_SRCS_pmu_pmi = $(PMU_HOST_SRCS)
