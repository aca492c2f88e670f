# A fuzz of the PMU's CPUID leaves and IA32_PERF_CAPABILITIES (what a VMM may
# give) against the driver's probe and LBR/PEBS decode, on emu/model's registers.
HOST_SRCS_pmu_fuzz = $(PMU_HOST_SRCS)
