# pmutest: one strict Makefile for the kernel, host tests, ISO, run, test, bench.
MAKEFLAGS += -rR --no-print-directory
.SUFFIXES:
.DELETE_ON_ERROR:
# bash with pipefail: "make part | tee log" must fail when the part fails.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec

CC      ?= gcc
ifeq ($(origin CC),default)
CC      := gcc
endif
HOSTCC  ?= $(CC)
PYTHON  ?= python3
BUILD   := build

# Kernel: freestanding, no red zone (interrupts use the stack), no SSE
# (no FPU state is saved across interrupts), linked at 1 MiB. Each function
# and object in a section of its own, so that the link keeps only what is
# reached from the entry point and the KEEP()s of linker.ld.
KERNEL_CFLAGS := -std=c11 -ffreestanding -fno-builtin -nostdinc -mno-red-zone \
	-mgeneral-regs-only -mcmodel=small -fno-pic -fno-pie -fno-stack-protector \
	-fno-asynchronous-unwind-tables -fno-omit-frame-pointer -Os -g \
	-ffunction-sections -fdata-sections \
	-Wall -Wextra -Werror -Wstrict-prototypes -Wmissing-prototypes -Wframe-larger-than=4096 \
	-Wno-unused-parameter -MMD -MP -I. -isystem $(shell $(CC) -print-file-name=include)
KERNEL_ASFLAGS := -D__ASSEMBLY__ -I. -MMD -MP -fno-pic -fno-pie
# --no-warn-rwx-segments only exists from binutils 2.39 on.
LD_NO_RWX_WARN := $(shell $(CC) -Wl,--help 2>/dev/null | grep -q -- --no-warn-rwx-segments \
	&& echo -Wl,--no-warn-rwx-segments)
KERNEL_LDFLAGS := -nostdlib -static -Wl,--build-id=none -Wl,--gc-sections \
	-Wl,-z,max-page-size=0x1000 -Wl,-z,noexecstack $(LD_NO_RWX_WARN) \
	-T linker.ld

# The folders of kernel sources, every layer's (LAYERS in
# tools/pmutest/check_layers.py, the one list of layers; make layer-check
# fails when a source of a layer is not built from here). A new file in one
# of these folders is built without touching this list.
KERNEL_DIRS := boot modes pmu pmu/intel pmu/amd pmu/kernel arch/x86 arch/x86/pc lib tests tests/pmu
KERNEL_SRCS := $(wildcard $(foreach d,$(KERNEL_DIRS),$(d)/*.S $(d)/*.c))
KERNEL_OBJS := $(patsubst %,$(BUILD)/k/%.o,$(KERNEL_SRCS))

# Host: the same pmu/ and lib/ sources against the software PMU model.
HOST_CFLAGS := -std=c11 -O1 -g -Wall -Wextra -Werror -Wstrict-prototypes \
	-Wno-unused-parameter -D_DEFAULT_SOURCE -DPMUTEST_HOST -I. -MMD -MP \
	-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
HOST_TEST_NAMES := $(patsubst tests/host/test_%.c,%,$(wildcard tests/host/test_*.c))
HOST_TEST_BINS  := $(patsubst %,$(BUILD)/host/test_%,$(HOST_TEST_NAMES))
# tests/host/host.mk: the sources each host test program links.
-include $(wildcard tests/host/*.mk)

.PHONY: FORCE all kernel iso usb run test host-test boot-test runner-test clang-build bracket-check bench clean deps deps-iso deps-test \
	doc-check layer-check format format-check deps-format
all: kernel
kernel: $(BUILD)/pmutest.elf $(BUILD)/pmutest-pvh.elf

# V=1 shows whole command lines.
Q := $(if $(V),,@)

$(BUILD)/k/%.c.o: %.c Makefile
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(KERNEL_CFLAGS) -c $< -o $@

$(BUILD)/k/%.S.o: %.S Makefile
	@mkdir -p $(@D)
	$(if $(Q),@echo "  AS      $<")
	$(Q)$(CC) $(KERNEL_ASFLAGS) -c $< -o $@

$(BUILD)/pmutest.elf: $(KERNEL_OBJS) linker.ld tools/pmutest/check_elf_layout.py
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(KERNEL_LDFLAGS) -o $@ $(KERNEL_OBJS)
	$(Q)PYTHONPATH=tools $(PYTHON) -m pmutest.check_elf_layout $@

# The PVH image: the same kernel without the multiboot1 header, which QEMU
# -kernel would take over the PVH note (boot/header.S says why).
PVH_OBJS := $(filter-out $(BUILD)/k/boot/header.S.o,$(KERNEL_OBJS)) $(BUILD)/k/boot/header-pvh.S.o
$(BUILD)/k/boot/header-pvh.S.o: boot/header.S Makefile
	@mkdir -p $(@D)
	$(if $(Q),@echo "  AS      $< (PVH image)")
	$(Q)$(CC) $(KERNEL_ASFLAGS) -DPMUTEST_PVH_IMAGE -c $< -o $@

$(BUILD)/pmutest-pvh.elf: $(PVH_OBJS) linker.ld tools/pmutest/check_elf_layout.py
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(KERNEL_LDFLAGS) -o $@ $(PVH_OBJS)
	$(Q)PYTHONPATH=tools $(PYTHON) -m pmutest.check_elf_layout --pvh-only $@

# Each source is compiled once into build/host/obj and linked into every
# test program that lists it: the programs share most of pmu/ and emu/model
# (about 1100 compilations of 110 files when each program compiled its own).
host_objs = $(patsubst %.c,$(BUILD)/host/obj/%.o,$(1))
$(BUILD)/host/obj/%.o: %.c Makefile
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_CFLAGS) -c -o $@ $<

define host_test_rule
$(BUILD)/host/test_$(1): $$(call host_objs,tests/host/test_$(1).c $$(HOST_SRCS_$(1))) tests/host/host.mk
	@mkdir -p $$(@D)
	$$(HOSTCC) $$(HOST_CFLAGS) -o $$@ $$(filter %.o,$$^) $$(HOST_LDFLAGS_$(1))
endef
$(foreach t,$(HOST_TEST_NAMES),$(eval $(call host_test_rule,$(t))))

# Host benchmarks: tests/host/bench_<area>.c, optimised, no sanitizers.
HOST_BENCH_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -D_DEFAULT_SOURCE -DPMUTEST_HOST -I.
HOST_BENCH_NAMES := $(patsubst tests/host/bench_%.c,%,$(wildcard tests/host/bench_*.c))
HOST_BENCH_BINS := $(patsubst %,$(BUILD)/host/bench_%,$(HOST_BENCH_NAMES))
define host_bench_rule
$(BUILD)/host/bench_$(1): tests/host/bench_$(1).c $$(HOST_BENCH_SRCS_$(1)) Makefile
	@mkdir -p $$(@D)
	$$(HOSTCC) $$(HOST_BENCH_CFLAGS) -o $$@ tests/host/bench_$(1).c $$(HOST_BENCH_SRCS_$(1)) $$(HOST_LDFLAGS_$(1))
endef
$(foreach t,$(HOST_BENCH_NAMES),$(eval $(call host_bench_rule,$(t))))

host-test: $(HOST_TEST_BINS)
	@PYTHONPATH=tools $(PYTHON) -m pmutest.results --run $(HOST_TEST_BINS)

# --- ISO: GRUB for BIOS (i386-pc) and UEFI (x86_64-efi) in one hybrid image
# that boots as a CD and as a raw disk / USB stick; iso/mkiso.sh says how
# it is laid out and why.
CMDLINE ?=
ISO_DIR := $(BUILD)/iso

iso: $(BUILD)/pmutest.iso

# The ISO carries CMDLINE in its grub.cfg: rebuild when it changes.
$(BUILD)/iso-cmdline.stamp: FORCE
	@mkdir -p $(@D)
	@echo '$(CMDLINE)' | cmp -s - $@ || echo '$(CMDLINE)' > $@
FORCE:

# $(call iso_rule,OUTPUT,CMDLINE,STAGING_DIR)
define iso_rule
$(1): $(BUILD)/pmutest.elf iso/grub.cfg.in iso/mkiso.sh Makefile $(BUILD)/iso-cmdline.stamp | deps-iso
	sed 's|@CMDLINE@|$(2)|g' iso/grub.cfg.in > $(3).grub.cfg
	iso/mkiso.sh $$@ $(BUILD)/pmutest.elf $(3).grub.cfg $(3) >$$@.log 2>&1 || { cat $$@.log; exit 1; }
endef
$(eval $(call iso_rule,$(BUILD)/pmutest.iso,$(CMDLINE),$(ISO_DIR)))
# For the framebuffer check: a short run that halts, so the screen stays up.
$(eval $(call iso_rule,$(BUILD)/pmutest-screen.iso,tests=boot.* exit=halt,$(BUILD)/iso-screen))

# --- USB stick: the hybrid ISO onto a whole removable disk, verified by
# reading it back. tools/usb-write refuses partitions, mounted or system
# disks, non-removable disks (unless FORCE=1) and disks smaller than the image.
usb: $(if $(DEV),$(BUILD)/pmutest.iso)
	tools/usb-write $(if $(DEV),--dev $(DEV)) --image $(BUILD)/pmutest.iso \
		$(if $(FORCE),--force) $(if $(YES),--yes)

# --- Dependencies: installed on demand (root + apt-get), else the exact
# command is printed and make stops.
deps:
	@tools/install-deps.sh build qemu
deps-iso:
	@tools/install-deps.sh iso
deps-test:
	@tools/install-deps.sh build qemu iso clang format pytest-deps
deps-format:
	@tools/install-deps.sh format

# --- Running and testing
SMP ?= 4
RUN_ARGS ?=
run: deps $(BUILD)/pmutest.elf
	$(PYTHON) tools/pmutest-run --kernel $(BUILD)/pmutest.elf --smp $(SMP) \
		$(if $(CMDLINE),--append "$(CMDLINE)") $(RUN_ARGS)

# The Python tests of tools/ and ci-examples/, one runner, one result line.
runner-test:
	@BUILD=$(BUILD) PYTHONPATH=tools $(PYTHON) -m pmutest.testing

boot-test: deps deps-debian $(BUILD)/pmutest.elf $(BUILD)/pmutest-pvh.elf $(BUILD)/pmutest.iso $(BUILD)/pmutest-screen.iso \
		$(BUILD)/netboot/boot/pmutest.elf
	$(PYTHON) tools/boot-matrix.py --kernel $(BUILD)/pmutest.elf --iso $(BUILD)/pmutest.iso \
		--screen-iso $(BUILD)/pmutest-screen.iso --pvh-kernel $(BUILD)/pmutest-pvh.elf \
		--netboot-tree $(BUILD)/netboot

# Everything CI runs: host unit tests, tool tests, a clang build, the boot
# matrix, and the emulated-PMU matrix (which builds the patched QEMU, or
# takes it from the cache). Each part prints its own "N passed, M failed"
# line; the last line is the total.
test: deps-test
	@mkdir -p $(BUILD)
	@$(MAKE) layer-check | tee $(BUILD)/test-layers.txt
	@$(MAKE) doc-check | tee $(BUILD)/test-docs.txt
	@$(MAKE) format-check | tee $(BUILD)/test-format.txt
	@$(MAKE) host-test | tee $(BUILD)/test-host.txt
	@$(MAKE) runner-test | tee $(BUILD)/test-tools.txt
	@$(MAKE) clang-build
	@$(MAKE) bracket-check | tee $(BUILD)/test-bracket.txt
	@$(MAKE) boot-test | tee $(BUILD)/test-boot.txt
	@$(MAKE) emu-selftest | tee $(BUILD)/test-emu-selftest.txt
	@$(MAKE) emu-config-test | tee $(BUILD)/test-emu-config.txt
	@$(MAKE) emu-matrix | tee $(BUILD)/test-emu.txt
	@$(MAKE) linux-perf-test | tee $(BUILD)/test-linux-perf.txt
	@$(MAKE) kvm-nested-test | tee $(BUILD)/test-kvm-nested.txt
	@$(MAKE) rule-map-check | tee $(BUILD)/test-rule-map.txt
	@$(MAKE) mutants-test | tee $(BUILD)/test-mutants.txt
	@PYTHONPATH=tools $(PYTHON) -m pmutest.results $(BUILD)/test-layers.txt:layers $(BUILD)/test-docs.txt:test-docs \
		$(BUILD)/test-format.txt:format $(BUILD)/test-host.txt:host \
		$(BUILD)/test-tools.txt:tools \
		$(BUILD)/test-bracket.txt:bracket $(BUILD)/test-boot.txt:boot-matrix \
		$(BUILD)/test-emu-selftest.txt:emu-selftest $(BUILD)/test-emu-config.txt:emu-config \
		$(BUILD)/test-emu.txt:emu-matrix \
		$(BUILD)/test-linux-perf.txt:linux-perf \
		$(BUILD)/test-kvm-nested.txt:kvm-nested \
		$(BUILD)/test-rule-map.txt:rule-map $(BUILD)/test-mutants.txt:mutgen-selftest,mutants-sample

# The house stays straight: every include and every call points down the
# layers of docs/HACKING.md (the order is data in tools/pmutest/check_layers.py)
# and none closes a circle. Calls are read from the objects' symbols: the
# kernel's, and emu/model's built as host objects.
MODEL_LAYER_OBJS := $(patsubst %,$(BUILD)/layers/%.o,$(wildcard emu/model/*.c))
$(BUILD)/layers/%.c.o: %.c Makefile
	@mkdir -p $(@D)
	$(if $(Q),@echo "  HOSTCC  $<")
	$(Q)$(HOSTCC) $(filter-out -fsanitize% -fno-sanitize%,$(HOST_CFLAGS)) -c $< -o $@
layer-check: $(KERNEL_OBJS) $(MODEL_LAYER_OBJS)
	@PYTHONPATH=tools $(PYTHON) -m pmutest.check_layers --build $(BUILD)

# Each test's one-line description (KTEST) heads its row in README.md or
# pmu/README.md, so the kernel's listing (tests=list) and the docs agree.
doc-check:
	@PYTHONPATH=tools $(PYTHON) -m pmutest.check_test_docs

# C layout: .clang-format, for clang-format 14 (Debian 12's; another
# version lays some lines out differently, so the check SKIPs with it).
# emu/ is QEMU code in QEMU's style and is not formatted.
CLANG_FORMAT ?= $(shell command -v clang-format-14 || command -v clang-format)
FORMAT_SRCS = $(sort $(wildcard $(foreach d,$(KERNEL_DIRS) tests/host,$(d)/*.c $(d)/*.h)))
format: deps-format
	$(CLANG_FORMAT) --style=file -i $(FORMAT_SRCS)
format-check: deps-format
	@if ! $(CLANG_FORMAT) --version 2>/dev/null | grep -q 'version 14\.'; then \
		echo "format: SKIP: clang-format 14 is needed, found: $$($(CLANG_FORMAT) --version 2>&1 | head -1)"; \
		echo "format: 0 passed, 0 failed, 1 skipped"; exit 0; fi; \
	n=0; bad=0; for f in $(FORMAT_SRCS); do n=$$((n + 1)); \
		if ! $(CLANG_FORMAT) --style=file --dry-run --Werror "$$f" >/dev/null 2>&1; then bad=$$((bad + 1)); \
			echo "format: $$f is not laid out as .clang-format says (make format rewrites it)"; fi; \
	done; echo "format: $$((n - bad)) passed, $$bad failed, 0 skipped"; [ $$bad = 0 ]

# The measurement bracket adds a documented number of instructions: check
# the built kernel's disassembly says so (pmu/bracket.h).
bracket-check: $(BUILD)/pmutest.elf
	@if PYTHONPATH=tools $(PYTHON) -m pmutest.check_bracket $(BUILD)/pmutest.elf; \
	then echo "bracket: 1 passed, 0 failed, 0 skipped"; \
	else echo "bracket: 0 passed, 1 failed, 0 skipped"; fi

# The kernel must build with clang too (docs/HACKING.md); same flags.
clang-build:
	@if command -v clang >/dev/null; then $(MAKE) BUILD=$(BUILD)/clang CC=clang kernel; \
	else echo "clang-build: SKIP (clang not installed)"; fi

# Figures, not tests: medians of 5 with min-max, saved to build/bench.txt
# and, for trend tracking, build/bench.json.
bench: deps $(BUILD)/pmutest.elf $(BUILD)/pmutest.iso $(HOST_BENCH_BINS)
	PYTHONPATH=tools $(PYTHON) -m pmutest.bench $(BUILD)/pmutest.elf $(BUILD)/pmutest.iso

# --- The emulated-PMU QEMU (emu/): Debian's QEMU with emu/qemu's
# patches, cached outside the clone; the binary's path is the last line.
.PHONY: emu-qemu emu-profiles emu-selftest emu-matrix emu-demo
emu-qemu:
	@emu/qemu/build.sh
# Every profile booted and judged by its kind, and monitor/sample mode on an
# emulated PMU, two QEMUs at a time (tools/pmutest/emumatrix.py); ends with
# "defects caught: N of M" and "emu-matrix: N passed, M failed, K skipped".
emu-matrix: $(BUILD)/pmutest.elf
	@if q=$$(emu/qemu/build.sh | tail -n 1); then \
		$(PYTHON) tools/emu-matrix.py --kernel $(BUILD)/pmutest.elf --qemu "$$q" --logdir $(BUILD)/emu-matrix; \
	else echo "emu-matrix: emu/qemu/build.sh failed (above): no emulated PMU to test"; \
		echo "emu-matrix: 0 passed, 1 failed, 0 skipped"; exit 1; fi
# For a newcomer: the suite, monitor and sample mode on an emulated PMU,
# the interesting lines picked out (tools/pmutest/demo.py).
emu-demo: $(BUILD)/pmutest.elf
	@q=$$(emu/qemu/build.sh | tail -n 1) && PYTHONPATH=tools $(PYTHON) -m pmutest.demo --kernel $(BUILD)/pmutest.elf \
		--qemu "$$q" --logdir $(BUILD)/emu-demo
# The profiles to boot it with: NAME KIND CPUARG, one per line.
emu-profiles:
	@awk '!/^[[:space:]]*(#|$$)/ { print $$1, $$2, $$3 }' emu/profiles.list
# The emulator's own counting conventions, and the hv-sig leaves, checked
# by a 32-bit multiboot kernel on the v4 shape (emu/qemu/selftest), once as
# the shape is and once with pmu-delivery-retires=on; then one run for each
# departure from silicon fixed in the emulator, on the machine it needs,
# the case named on the command line; each run prints "emu-selftest: N
# passed, M failed". EMU_SELFTEST_QEMU=path runs another build (an older
# emulator, to see a case fail on it).
EMU_SELFTEST := $(BUILD)/emu/selftest.elf
$(EMU_SELFTEST): emu/qemu/selftest/selftest.c emu/qemu/selftest/selftest.ld Makefile
	@mkdir -p $(@D)
	$(CC) -m32 -std=gnu11 -ffreestanding -fno-pic -fno-pie -fno-stack-protector \
		-fno-asynchronous-unwind-tables -O2 -Wall -Wextra -Werror -Wmissing-prototypes \
		-nostdinc -isystem $(shell $(CC) -print-file-name=include) -c $< -o $(@:.elf=.o)
	ld -m elf_i386 -nostdlib $(shell ld --help 2>/dev/null | grep -- --no-warn-rwx-segments >/dev/null \
		&& echo --no-warn-rwx-segments) -T emu/qemu/selftest/selftest.ld -o $@ $(@:.elf=.o)
# The kernel's "# emu-selftest: ..." line is repeated without the "#", so
# that make test's total counts it.
emu-selftest: $(EMU_SELFTEST)
	@q=$${EMU_SELFTEST_QEMU:-$$(emu/qemu/build.sh | tail -n 1)} && fail=0 && \
	for v in "" delivery-retires uncore-init ref-tsc amd-lbr-freeze td-level2 cbo-lookup-state \
		perf-metrics-icx perf-metrics-spr; do rc=0; \
		case $$v in \
		""|delivery-retires) m="-cpu Skylake-Client,pmu=on,hv-sig=KVMKVMKVM$${v:+,pmu-$$v=on}";; \
		uncore-init) m="-cpu Skylake-Server,pmu=on,pmu-uncore=on -smp 2,sockets=2 \
			-device x86-pmu-skx-imc,bus=pcie.0,addr=10.0,socket=1,channel=0";; \
		ref-tsc) m="-cpu Icelake-Server,model=143,pmu=on";; \
		amd-lbr-freeze) m="-cpu EPYC-Milan,model=17,pmu=on,pmu-lbr-pmc-freeze=on";; \
		td-level2) m="-cpu Icelake-Server,model=189,pmu=on,pmu-shape=lunarlake-p";; \
		cbo-lookup-state) m="-cpu Skylake-Client,pmu=on,pmu-uncore=on";; \
		perf-metrics-icx) m="-cpu Icelake-Server,model=106,pmu=on";; \
		perf-metrics-spr) m="-cpu Icelake-Server,model=143,pmu=on";; \
		esac; \
		PYTHONPATH=tools $(PYTHON) -m pmutest.cpu_budget --wall-factor 10 120 $$q -machine q35 -accel tcg $$m \
		-m 128M -display none -nodefaults -no-reboot -serial stdio \
		-device isa-debug-exit,iobase=0xf4,iosize=0x04 -kernel $(EMU_SELFTEST) $${v:+-append $$v} 2>/dev/null \
		| tee $(BUILD)/emu/selftest$${v:+-$$v}.out || rc=$$?; \
		sed -n 's/\r$$//; s/^# \(emu-selftest: [0-9].*\)$$/\1/p' $(BUILD)/emu/selftest$${v:+-$$v}.out; \
		[ $$rc = 33 ] || fail=1; done; exit $$fail

# --- Linux's perf driver judges the emulated PMU (harness/linux_perf.py,
# docs/linux-perf.md): Debian's 6.1 kernel, linux-perf and busybox-static on
# every silicon profile, or those PROFILES globs name; one line a profile in
# build/linux-perf/summary.txt. make test runs the legs LINUX_PERF_LEGS and
# ends with "linux-perf: N passed, M failed, K skipped".
.PHONY: linux-perf linux-perf-test deps-debian
LINUX_PERF_LEGS ?= intel-v4 intel-v5 amd-perfmon-v2
# Profiles booted at once by make linux-perf (each a 2-CPU TCG guest).
LINUX_PERF_JOBS ?= 1
deps-debian:
	@tools/install-deps.sh debian
linux-perf: deps-debian
	@$(PYTHON) -m harness.linux_perf --outdir $(BUILD)/linux-perf --jobs $(LINUX_PERF_JOBS) "$(PROFILES)"
linux-perf-test: deps-debian
	@$(PYTHON) -m harness.linux_perf --outdir $(BUILD)/linux-perf-test \
		--result-line linux-perf $(LINUX_PERF_LEGS)

# --- Network boot (harness/netboot.py): a TFTP tree for BIOS and UEFI PXE
# clients and iPXE (iso/mknetdir.sh says how it is laid out), carrying
# CMDLINE like the ISO; netboot-test boots each client from it under QEMU's
# own DHCP/TFTP server and prints "netboot-test: N passed, M failed, K skipped".
NETBOOT_DIR := $(BUILD)/netboot
netboot: $(NETBOOT_DIR)/boot/pmutest.elf
$(NETBOOT_DIR)/boot/pmutest.elf: $(BUILD)/pmutest.elf iso/grub.cfg.in iso/mknetdir.sh Makefile \
		$(BUILD)/iso-cmdline.stamp | deps-iso
	@mkdir -p $(BUILD)
	sed 's|@CMDLINE@|$(CMDLINE)|g' iso/grub.cfg.in > $(BUILD)/netboot.grub.cfg
	iso/mknetdir.sh $(NETBOOT_DIR) $(BUILD)/pmutest.elf $(BUILD)/netboot.grub.cfg '$(CMDLINE)' \
		>$(BUILD)/netboot.log 2>&1 || { cat $(BUILD)/netboot.log; exit 1; }
netboot-test: deps $(NETBOOT_DIR)/boot/pmutest.elf
	@p=0; f=0; for c in bios bios-ipxe uefi lava-tftp; do \
		if $(PYTHON) -m harness.netboot --tree $(NETBOOT_DIR) --client $$c \
			--log-file $(BUILD)/netboot-$$c.log >$(BUILD)/netboot-$$c.out 2>&1; \
		then p=$$((p+1)); echo "ok netboot $$c"; \
		else f=$$((f+1)); echo "not ok netboot $$c"; tail -n 15 $(BUILD)/netboot-$$c.out; fi; done; \
		echo "netboot-test: $$p passed, $$f failed, 0 skipped"; [ $$f = 0 ]
.PHONY: netboot netboot-test

# --- kexec from a running Linux (harness/kexec.py): Debian's kernel and
# kexec-tools on the emulated PMU kexec into pmutest, once by kexec -e and
# once after a panic (kexec -p); prints "kexec-test: N passed, M failed, K skipped".
kexec-test: deps $(BUILD)/pmutest.elf
	$(PYTHON) -m harness.kexec --kernel $(BUILD)/pmutest.elf --logdir $(BUILD)/kexec
.PHONY: kexec-test

# Real KVM judges pmutest: Debian's kernels (6.1, 6.12, 7.3) and QEMUs run
# it nested on the emulated AMD PMU, each leg judged by the expect file
# --expect auto picks for that host (harness/kvm_nested.py,
# docs/kvm-nested.md). kvm-nested runs every leg; make test runs one (the
# newest kernel, emulated vPMU).
KVM_NESTED_TEST_LEG := k7.3-q10-emulated-wd0
kvm-nested: $(BUILD)/pmutest.elf
	@$(PYTHON) -m harness.kvm_nested --kernel $(BUILD)/pmutest.elf
kvm-nested-test: $(BUILD)/pmutest.elf
	@$(PYTHON) -m harness.kvm_nested --kernel $(BUILD)/pmutest.elf --legs $(KVM_NESTED_TEST_LEG)
.PHONY: kvm-nested kvm-nested-test

# The default suite on a correct emulated PMU, plain TCG and KVM (when it
# works) at -smp 8, N times (default 10), while the host's cores run 4x
# oversubscribed (harness/load_test.py); the last line is
# "load-test: R runs, F false failures".
.PHONY: load-test
N ?= 10
load-test: $(BUILD)/pmutest.elf emu-qemu
	$(PYTHON) -m harness.load_test --runs $(N) --kernel $(BUILD)/pmutest.elf

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# --- Mutation testing of the emulated PMU (harness/mutants.py, docs/mutants.md):
# every mutant of emu/model and the PMI glue in one QEMU (build.sh --mutants),
# on each profile that executes a mutant's site the tests that execute it;
# summary in build/mutants/summary.txt.  SAMPLE=N SEED=S: a seeded sample;
# MUTANT_JOBS: QEMUs at once; MUTANT_FLAGS: more options of harness/mutants.py.
# mutants-test (a part of make test): the generator's own test, then the fixed
# sample's recorded kills must still be killed ("mutants-sample: N passed, M
# failed, K skipped").
# rule-map-check: docs/rule-map.tsv names existing checks for every rule.
.PHONY: mutants mutants-test rule-map-check
SAMPLE ?= 0
SEED ?= 1
MUTANT_JOBS ?= 2
MUTANT_FLAGS ?=
mutants: $(BUILD)/pmutest.elf
	$(PYTHON) -m harness.mutants --sample $(SAMPLE) --seed $(SEED) --jobs $(MUTANT_JOBS) $(MUTANT_FLAGS)
mutants-test: $(BUILD)/pmutest.elf
	@$(PYTHON) -m harness.test_mutgen
	@$(PYTHON) -m harness.mutants --check-sample --jobs $(MUTANT_JOBS)
rule-map-check:
	@PYTHONPATH=tools $(PYTHON) -m pmutest.check_rule_map

# --- Xen judges pmutest (harness/xen_pvh.py, docs/kvm-nested.md "Xen"):
# Debian's Xen 4.17 with vpmu=on on the emulated AMD PMU, Debian's Linux as
# its PV dom0, pmutest as a PVH guest; build/xen-pvh/summary.txt, judged by
# tests/expect/xen-amd.expect; "xen-pvh: N passed, M failed, K skipped".
.PHONY: xen-pvh
xen-pvh: $(BUILD)/pmutest.elf
	$(PYTHON) -m harness.xen_pvh --kernel $(BUILD)/pmutest.elf

# --- The emulated PMU's refusals at QEMU start (harness/emu_config.py):
# each limit of the -cpu pmu-* properties accepted, the value just past it
# refused; "emu-config: N passed, M failed, K skipped".
.PHONY: emu-config-test
emu-config-test:
	@$(PYTHON) -m harness.emu_config
