/* 16550 UART on an I/O port (COM1 = 0x3F8), 115200 8N1, polled. */
#ifndef ARCH_X86_PC_UART_H
#define ARCH_X86_PC_UART_H

#include <stdbool.h>
#include <stdint.h>

#define UART_COM1 0x3f8

/* Returns false when no UART answers at `port` (scratch-register test). */
bool uart_init(uint16_t port);
/* A write-only debug port (the "port E9" console): every byte goes out, no handshake. */
void uart_init_debugcon(uint16_t port);
void uart_putc(char c);
/* Wait until the transmitter is empty, so nothing is lost at power-off. */
void uart_flush(void);
bool uart_present(void);

#endif
