/* The console: whole lines from any CPU, serialised by one lock, each
 * ended by a bare "\n" (README "Serial line endings" says why). Sinks: the
 * UART (and later a framebuffer). */
#ifndef ARCH_X86_PC_CONSOLE_H
#define ARCH_X86_PC_CONSOLE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* The UART at port, or with debugcon the write-only debug port there. */
void console_init(unsigned port, bool debugcon);
void console_write(const char *s, size_t len);
void console_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void console_vprintf(const char *fmt, va_list ap);
/* Drain the sinks before power-off or QEMU exit. */
void console_flush(void);
/* For panics and aborted tests: drop the lock if this CPU holds it. */
void console_force_unlock(void);

#endif
