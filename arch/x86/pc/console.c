/* Console: formats into a local buffer, then sends the whole text under
 * one lock to the UART and, when the loader gave one, the framebuffer, so
 * lines from different CPUs never interleave. */
#include "arch/x86/pc/console.h"

#include "arch/x86/cpu.h"
#include "arch/x86/pc/uart.h"
#include "lib/fbcon.h"
#include "lib/printf.h"
#include "lib/spinlock.h"

static struct spinlock console_lock;

void console_init(unsigned port, bool debugcon)
{
	if (debugcon)
		uart_init_debugcon((uint16_t)port);
	else
		uart_init((uint16_t)port);
}

/* Bare LF, no CR: a pty capture (QEMU -nographic under LAVA or pexpect)
 * turns each LF into CR LF by itself, so a CR of ours would arrive doubled
 * and split every line in two for a line-splitting reader. */
static void emit(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		uart_putc(s[i]);
}

void console_write(const char *s, size_t len)
{
	/* Interrupts off while holding the lock: a watchdog interrupt that
	 * aborts a test must never find its own CPU holding it. */
	bool irq = irq_save();
	spin_lock(&console_lock, this_cpu()->cpu);
	emit(s, len);
	fbcon_write(s, len); /* a no-op without a framebuffer */
	spin_unlock(&console_lock);
	irq_restore(irq);
}

void console_vprintf(const char *fmt, va_list ap)
{
	char buf[512];
	int n = kvsnprintf(buf, sizeof(buf), fmt, ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf)) {
		/* Keep lines whole even when cut. */
		n = sizeof(buf) - 1;
		buf[n - 1] = '\n';
	}
	console_write(buf, (size_t)n);
}

void console_printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	console_vprintf(fmt, ap);
	va_end(ap);
}

void console_flush(void)
{
	uart_flush();
}

void console_force_unlock(void)
{
	spin_force_release_if_owner(&console_lock, this_cpu()->cpu);
}
