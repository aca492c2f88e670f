# Host tests of lib/parse.c, lib/bits.h and kerrf (lib/printf.c).
HOST_SRCS_parse := lib/parse.c lib/printf.c lib/string.c
