# The deviation table (tests/deviations.c, host-built as it is) with the
# driver's caps decoding over the software PMU model for its platforms.
HOST_SRCS_deviations = $(PMU_HOST_SRCS) tests/deviations.c
