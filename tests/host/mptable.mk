# Host test for lib/mptable.c (MP spec 1.4 floating pointer and table).
HOST_SRCS_mptable := lib/mptable.c
