/* Bounded, allocation-free string formatting for the kernel: the subset of
 * C99 snprintf that kernel messages need, with no floating point. */
#ifndef LIB_PRINTF_H
#define LIB_PRINTF_H

#include <stdarg.h>
#include <stddef.h>

/*
 * Conversions: d i u x X o c s p %. Length modifiers: hh h l ll z t j.
 * Flags: - 0 + space #. Field width and precision, both also as '*'.
 * Behaves like C99 snprintf (returns the length the full output would have,
 * writes at most size - 1 characters and always a NUL when size > 0), with
 * three deliberate differences: %p prints "0x" and exactly 16 hex digits; a
 * conversion outside the list above (%f, %n, %ls ...) is copied to the
 * output as written and takes no argument (a '*' in it still takes its
 * int); a NULL %s prints "(null)", cut by the precision like any string.
 * Returns -1 only if the full length would exceed INT_MAX.
 */
int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
int ksnprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* How much of a token a message quotes back ("%.*s", kshown(len), s):
 * enough to recognise it, never a whole line of garbage. */
#define KSHOWN_MAX 40
static inline int kshown(size_t len)
{
	return len > KSHOWN_MAX ? KSHOWN_MAX : (int)len;
}

/* The one way code says why it failed: format the message into buf (when
 * buf is not NULL and size not 0) and return rc, so that a refusal is one
 * statement: return kerrf(ev->reason, sizeof(ev->reason), PMU_E_BUSY, ...). */
int kerrf(char *buf, size_t size, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
