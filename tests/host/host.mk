# What each host test program links: HOST_SRCS_<name> for
# tests/host/test_<name>.c (HOST_LDFLAGS_<name> for its extra link flags),
# HOST_BENCH_SRCS_<name> for tests/host/bench_<name>.c. Recursive '=' where
# a list uses PMU_HOST_SRCS, so the order of the lines does not matter.

# Host test for lib/acpi.c (RSDP/RSDT/XSDT discovery, MADT, FADT, \_S5) and lib/acpi_mcfg.c.
HOST_SRCS_acpi := lib/acpi.c lib/acpi_mcfg.c

# Host test for boot/handover.c, boot/multiboot.c and boot/pvh.c (Multiboot1/2 and PVH parsing, memory-map helpers).
HOST_SRCS_bootinfo := boot/handover.c boot/multiboot.c boot/pvh.c

# Host tests of lib/cpulist.c (CPU list parsing, iteration, printing).
HOST_SRCS_cpulist := lib/cpulist.c lib/printf.c lib/string.c

# The deviation table (tests/deviations.c, host-built as it is) with the
# driver's caps decoding over the software PMU model for its platforms.
HOST_SRCS_deviations = $(PMU_HOST_SRCS) tests/deviations.c

# Host tests of the emulated PMU's register model (emu/model), the code QEMU runs.
HOST_SRCS_emu_model := $(wildcard emu/model/*.c)

# Host tests of the emulated LBRs' ring filters (emu/model/x86-pmu-lbr.c).
HOST_SRCS_emu_lbr := $(wildcard emu/model/*.c)

# Host tests of the emulated PMU's off-module response, Diamond Rapids shape
# and level-2 PERF_METRICS bytes (emu/model).
HOST_SRCS_emu_omr := $(wildcard emu/model/*.c)

# Host tests of the emulated PMU's PERF_METRICS on the Ice Lake and Sapphire
# Rapids shapes: the shape table, the settle, MSR 329H writes (emu/model).
HOST_SRCS_emu_metrics := $(wildcard emu/model/*.c)

# Host tests of the emulated PMU's version 6, CPUID.23H and AMD extensions (emu/model).
HOST_SRCS_emu_v6 := $(wildcard emu/model/*.c)

# Host tests of the emulated uncore's C-box lookup states (emu/model).
HOST_SRCS_emu_uncore := $(wildcard emu/model/*.c)

# Host test of the framebuffer console and its font (lib/string.c for the
# memset fbcon uses, renamed kstr_* on the host).
HOST_SRCS_fbcon := lib/fbcon.c lib/font8x16.c lib/string.c

# Host unit tests of lib/: string, printf, cmdline, glob (spinlock is header-only).
HOST_SRCS_lib := lib/string.c lib/printf.c lib/cmdline.c lib/glob.c lib/parse.c
HOST_LDFLAGS_lib := -pthread

# Host tests of monitor mode's pure parts (modes/monitor_fmt.c): event-list
# splitting, checked against the real event parser, and the table layout.
HOST_SRCS_monitor = $(PMU_HOST_SRCS) modes/monitor_fmt.c

# Host test for lib/mptable.c (MP spec 1.4 floating pointer and table).
HOST_SRCS_mptable := lib/mptable.c

# test_msr_defs checks arch/x86/msr.h against a table; it links nothing else.
HOST_SRCS_msr_defs :=

# Host tests of lib/parse.c, lib/bits.h and kerrf (lib/printf.c).
HOST_SRCS_parse := lib/parse.c lib/printf.c lib/string.c

# Host tests of the AMD backend: the pmu/ sources against the SDM model
# with its AMD part.
HOST_SRCS_pmu_amd = $(PMU_HOST_SRCS) tests/host/pmu_model_amd.c

# A fuzz of the PMU's CPUID leaves and IA32_PERF_CAPABILITIES (what a VMM may
# give) against the driver's probe and LBR/PEBS decode, on emu/model's registers.
HOST_SRCS_pmu_fuzz = $(PMU_HOST_SRCS) tests/host/emu_cpu.c

# Host test of the Intel model table keyed by family and model (pmu/intel/models.c).
HOST_SRCS_intel_models := pmu/intel/models.c

# Host test of the top-down relations (pmu/intel/topdown.c).
HOST_SRCS_intel_topdown := pmu/intel/topdown.c pmu/intel/models.c lib/printf.c lib/string.c

# Host tests of the memory-controller counters (pmu/intel/imc.c): the table,
# MCHBAR and the UBOX bus map, the exact PCI sequences, per package
#.
HOST_SRCS_pmu_imc = $(PMU_HOST_SRCS)

# Host tests of the uncore discovery tables (pmu/intel/discovery.c) and the
# CHAs and memory channels placed from them, on synthetic tables.
HOST_SRCS_pmu_discovery = $(PMU_HOST_SRCS)

# Host tests of the LBR and PEBS driver (pmu/lbr.c, pmu/*/lbr.c, pmu/intel/pebs.c) on CPUs whose
# PMU registers are emu/model's.
HOST_SRCS_pmu_lbr_pebs = $(PMU_HOST_SRCS) tests/host/emu_cpu.c

# Host tests of the PMU driver: every pmu/*.c (the kernel binding lives in
# pmu/kernel/, which the host never builds) against the software PMU model,
# whose registers are emu/model's (the model QEMU's emulated PMU runs), one
# program per area.
PMU_HOST_SRCS := $(wildcard pmu/*.c pmu/intel/*.c pmu/amd/*.c) arch/x86/vectors.c arch/x86/hv_identify.c lib/parse.c lib/printf.c lib/string.c lib/ringbuf.c \
	tests/host/pmu_model.c $(wildcard emu/model/*.c)
HOST_SRCS_pmu_model := $(PMU_HOST_SRCS)
HOST_SRCS_pmu_caps := $(PMU_HOST_SRCS)
HOST_SRCS_pmu_probe := $(PMU_HOST_SRCS)
HOST_SRCS_pmu_event := $(PMU_HOST_SRCS)
HOST_SRCS_pmu_delta := $(PMU_HOST_SRCS)
HOST_SRCS_pmu_parse := $(PMU_HOST_SRCS)

# Host tests of the offcore-response tables and RSP MSR allocation
# (pmu/intel/offcore.c with pmu/event.c) on the PMU model.
HOST_SRCS_pmu_offcore = $(PMU_HOST_SRCS)

# Host test of the PMI handler (pmu/pmi.c) and sampling sessions
# (pmu/sampling.c) against the PMU model; links the same sources as the
# other pmu_* programs.
HOST_SRCS_pmu_pmi = $(PMU_HOST_SRCS)

# Host tests of the client-uncore driver (pmu/intel/uncore.c): detection and the
# exact C-box register sequences on the PMU model.
HOST_SRCS_pmu_uncore = $(PMU_HOST_SRCS)

# Host tests of the driver's version 6 / CPUID.23H decoding and the PMI
# handler's overflow inference (pmu/intel/v6.c, pmu/pmi.c) on the PMU model
#.
HOST_SRCS_pmu_v6 = $(PMU_HOST_SRCS)

# Host test for boot/pvh.c (hvm_start_info parsing).
HOST_SRCS_pvh := boot/handover.c boot/multiboot.c boot/pvh.c

# Host build of the ring buffer tests and benchmark (see tests/host/test_ringbuf.c).
HOST_SRCS_ringbuf := lib/ringbuf.c
HOST_LDFLAGS_ringbuf := -pthread
# The benchmark wants -O2 and no sanitizers (it says so in its row if built
# with ASan); it needs neither -DPMUTEST_HOST nor -pthread.
HOST_BENCH_SRCS_ringbuf := lib/ringbuf.c

# Host tests of sample mode's pure parts (modes/sample_opts.c,
# modes/sample_drain.c, modes/modes.c) against the PMU model, which fills
# the rings through the real PMI handler.
HOST_SRCS_sample_mode = $(PMU_HOST_SRCS) modes/sample_opts.c modes/sample_drain.c modes/monitor_fmt.c \
	modes/workloads.c modes/modes.c lib/cpulist.c

# Host tests of tests/pmu/vpmu_model.c (the vPMU model read from the cost map).
HOST_SRCS_vpmu_model := tests/pmu/vpmu_model.c

# Host tests of modes/workloads.c; the test passes its own allocator and
# clock where the kernel passes bootmem_alloc() and uptime_us().
HOST_SRCS_workloads := modes/workloads.c lib/printf.c lib/string.c

# Host tests of architectural PEBS: the driver's encodings and record
# parser (pmu/intel/arch_pebs.c) and the register model's
# (emu/model/x86-pmu-arch-pebs.c), its records read back by the parser.
HOST_SRCS_emu_arch_pebs := $(wildcard emu/model/*.c) pmu/intel/arch_pebs.c lib/printf.c lib/string.c

# Host test for lib/smbios.c (SMBIOS entry point and BIOS Information).
HOST_SRCS_smbios := lib/smbios.c
