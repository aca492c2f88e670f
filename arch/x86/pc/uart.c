/* Polled 16550 driver (register layout per the PC16550D datasheet; the
 * same on every PC UART and in QEMU's emulation). */
#include "arch/x86/pc/uart.h"

#include "arch/x86/cpu.h"

enum {
	UART_THR = 0,
	UART_DLL = 0,
	UART_IER = 1,
	UART_DLM = 1,
	UART_FCR = 2,
	UART_LCR = 3,
	UART_MCR = 4,
	UART_LSR = 5,
	UART_SCR = 7,
};
#define LSR_THRE 0x20 /* transmit holding register empty */
#define LSR_TEMT 0x40 /* transmitter (holding + shift) empty */
#define LCR_DLAB 0x80
#define LCR_8N1 0x03
/* Spin bound per byte: ~87 us at 115200 baud; a dead UART must not hang us. */
#define UART_SPIN_LIMIT 1000000

static uint16_t uart_port;
static bool uart_ok;
static bool uart_debugcon; /* a write-only debug port: no registers to poll */

void uart_init_debugcon(uint16_t port)
{
	uart_port = port;
	uart_ok = true;
	uart_debugcon = true;
}

bool uart_init(uint16_t port)
{
	uart_port = port;
	/* A port with nothing behind it reads back 0xff: write two patterns
	 * to the scratch register and require both back. */
	outb(port + UART_SCR, 0x5a);
	bool ok = inb(port + UART_SCR) == 0x5a;
	outb(port + UART_SCR, 0xa5);
	ok = ok && inb(port + UART_SCR) == 0xa5;
	uart_ok = ok;
	if (!ok)
		return false;
	outb(port + UART_IER, 0); /* polled: no UART interrupts */
	outb(port + UART_LCR, LCR_DLAB);
	outb(port + UART_DLL, 1); /* 115200 = 1.8432 MHz / 16 / 1 */
	outb(port + UART_DLM, 0);
	outb(port + UART_LCR, LCR_8N1);
	outb(port + UART_FCR, 0x07); /* FIFOs on and cleared */
	outb(port + UART_MCR, 0x03); /* DTR, RTS */
	return true;
}

bool uart_present(void)
{
	return uart_ok;
}

void uart_putc(char c)
{
	if (!uart_ok)
		return;
	if (uart_debugcon) {
		outb(uart_port, (uint8_t)c);
		return;
	}
	for (int i = 0; i < UART_SPIN_LIMIT && !(inb(uart_port + UART_LSR) & LSR_THRE); i++)
		cpu_relax();
	outb(uart_port + UART_THR, (uint8_t)c);
}

void uart_flush(void)
{
	if (!uart_ok || uart_debugcon)
		return;
	for (int i = 0; i < UART_SPIN_LIMIT && !(inb(uart_port + UART_LSR) & LSR_TEMT); i++)
		cpu_relax();
}
