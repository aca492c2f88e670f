# Host unit tests of lib/: string, printf, cmdline, glob (spinlock is header-only).
HOST_SRCS_lib := lib/string.c lib/printf.c lib/cmdline.c lib/glob.c lib/parse.c
HOST_LDFLAGS_lib := -pthread
