# Host tests of the emulated PMU's version 6, CPUID.23H and AMD extensions (emu/model).
HOST_SRCS_emu_v6 := $(wildcard emu/model/*.c)
