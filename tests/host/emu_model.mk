# Host tests of the emulated PMU's register model (emu/model), the code QEMU runs.
HOST_SRCS_emu_model := $(wildcard emu/model/*.c)
