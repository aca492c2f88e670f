# test_msr_defs checks arch/x86/msr.h against a table; it links nothing else.
HOST_SRCS_msr_defs :=
