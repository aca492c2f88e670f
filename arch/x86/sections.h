/* Addresses the linker script (linker.ld) defines: the image's bounds and
 * the sections code walks or copies. Each is an array so that its address
 * is the symbol's value. */
#ifndef ARCH_X86_SECTIONS_H
#define ARCH_X86_SECTIONS_H

#include <stdint.h>

extern uint8_t _kernel_start[], _kernel_end[]; /* the loaded image with its .bss */
extern uint8_t _load_end[], _bss_start[], _bss_end[];
/* The AP start-up code (boot/trampoline.S), copied below 1 MiB before use. */
extern uint8_t __trampoline_start[], __trampoline_end[];

#endif
