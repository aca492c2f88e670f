# Host test of the framebuffer console and its font (lib/string.c for the
# memset fbcon uses, renamed kstr_* on the host).
HOST_SRCS_fbcon := lib/fbcon.c lib/font8x16.c lib/string.c
