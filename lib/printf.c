/* kvsnprintf/ksnprintf: C99 snprintf semantics for integers, characters,
 * strings and pointers, writing into a caller's bounded buffer. */
#include "lib/printf.h"

#include <stdbool.h>
#include <stdint.h>

#include "lib/string.h"

/* <limits.h> is not ours to include; int is 32 bits on every target. */
#define FMT_INT_MAX ((int)(~0u >> 1))
#define FMT_INT_MIN (-FMT_INT_MAX - 1)

enum fmt_flag {
	FMT_LEFT = 1u << 0,  /* '-' */
	FMT_PLUS = 1u << 1,  /* '+' */
	FMT_SPACE = 1u << 2, /* ' ' */
	FMT_ALT = 1u << 3,   /* '#' */
	FMT_ZERO = 1u << 4,  /* '0' */
};

enum fmt_length {
	FMT_LEN_NONE,
	FMT_LEN_HH,
	FMT_LEN_H,
	FMT_LEN_L,
	FMT_LEN_LL,
	FMT_LEN_Z,
	FMT_LEN_T,
	FMT_LEN_J
};

struct fmt_spec {
	unsigned flags;
	int width; /* 0 when absent */
	int prec;  /* -1 when absent */
	enum fmt_length length;
};

/* The output cursor keeps counting past the end of the buffer: the return
 * value is the length the whole output would have had (C99 7.19.6.5). */
struct fmt_out {
	char *buf;
	size_t size;
	size_t len;
};

static void out_char(struct fmt_out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void out_repeat(struct fmt_out *o, char c, size_t n)
{
	while (n--)
		out_char(o, c);
}

static void out_mem(struct fmt_out *o, const char *s, size_t n)
{
	while (n--)
		out_char(o, *s++);
}

/* A decimal field width or precision; saturates instead of overflowing. */
static int parse_count(const char **p)
{
	int v = 0;

	while (**p >= '0' && **p <= '9') {
		int d = **p - '0';

		v = v > (FMT_INT_MAX - d) / 10 ? FMT_INT_MAX : v * 10 + d;
		(*p)++;
	}
	return v;
}

/* The argument of a signed conversion, converted as the length modifier
 * says (C99 7.19.6.1p7: hh and h values are promoted, then narrowed). */
static int64_t arg_signed(va_list *ap, enum fmt_length length)
{
	switch (length) {
	case FMT_LEN_HH: return (signed char)va_arg(*ap, int);
	case FMT_LEN_H: return (short)va_arg(*ap, int);
	case FMT_LEN_L: return va_arg(*ap, long);
	case FMT_LEN_LL: return va_arg(*ap, long long);
	case FMT_LEN_Z: return (int64_t)va_arg(*ap, size_t);
	case FMT_LEN_T: return va_arg(*ap, ptrdiff_t);
	case FMT_LEN_J: return va_arg(*ap, intmax_t);
	case FMT_LEN_NONE: break;
	}
	return va_arg(*ap, int);
}

static uint64_t arg_unsigned(va_list *ap, enum fmt_length length)
{
	switch (length) {
	case FMT_LEN_HH: return (unsigned char)va_arg(*ap, unsigned int);
	case FMT_LEN_H: return (unsigned short)va_arg(*ap, unsigned int);
	case FMT_LEN_L: return va_arg(*ap, unsigned long);
	case FMT_LEN_LL: return va_arg(*ap, unsigned long long);
	case FMT_LEN_Z: return va_arg(*ap, size_t);
	case FMT_LEN_T: return (uint64_t)va_arg(*ap, ptrdiff_t);
	case FMT_LEN_J: return va_arg(*ap, uintmax_t);
	case FMT_LEN_NONE: break;
	}
	return va_arg(*ap, unsigned int);
}

/* How many pad characters bring a field of n characters up to the width. */
static size_t field_pad(const struct fmt_spec *spec, size_t n)
{
	return (size_t)spec->width > n ? (size_t)spec->width - n : 0;
}

static void fmt_integer(struct fmt_out *o, const struct fmt_spec *spec, uint64_t mag, bool negative,
			bool is_signed, unsigned base, bool upper)
{
	const char *xdigits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char digits[24]; /* 22 octal digits hold 2^64 - 1 */
	char prefix[2];
	size_t ndigits = 0, nprefix = 0, zeros, pad;
	uint64_t v = mag;

	/* C99 7.19.6.1p8: precision 0 with value 0 prints no digits. */
	if (!(spec->prec == 0 && mag == 0)) {
		do {
			digits[ndigits++] = xdigits[v % base];
			v /= base;
		} while (v);
	}
	zeros = spec->prec > 0 && (size_t)spec->prec > ndigits ? (size_t)spec->prec - ndigits : 0;
	/* '#' with o raises the precision just enough that the first digit
	 * is a 0 (C99 7.19.6.1p6); digits[ndigits - 1] is the leading one. */
	if (base == 8 && (spec->flags & FMT_ALT) && zeros == 0 &&
	    (ndigits == 0 || digits[ndigits - 1] != '0'))
		zeros = 1;

	if (is_signed) {
		if (negative)
			prefix[nprefix++] = '-';
		else if (spec->flags & FMT_PLUS)
			prefix[nprefix++] = '+';
		else if (spec->flags & FMT_SPACE)
			prefix[nprefix++] = ' ';
	}
	if (base == 16 && (spec->flags & FMT_ALT) && mag != 0) {
		prefix[nprefix++] = '0';
		prefix[nprefix++] = upper ? 'X' : 'x';
	}

	pad = field_pad(spec, nprefix + zeros + ndigits);
	/* '0' pads with zeros after the sign or 0x, but is ignored under '-'
	 * or when a precision is given (C99 7.19.6.1p6). */
	if (!(spec->flags & FMT_LEFT) && (spec->flags & FMT_ZERO) && spec->prec < 0) {
		zeros += pad;
		pad = 0;
	}
	if (!(spec->flags & FMT_LEFT))
		out_repeat(o, ' ', pad);
	out_mem(o, prefix, nprefix);
	out_repeat(o, '0', zeros);
	while (ndigits)
		out_char(o, digits[--ndigits]);
	if (spec->flags & FMT_LEFT)
		out_repeat(o, ' ', pad);
}

/* Strings, characters and pointers: space padding only ('0' is undefined
 * for them in C99; glibc ignores it and so do we). */
static void fmt_text(struct fmt_out *o, const struct fmt_spec *spec, const char *s, size_t n)
{
	size_t pad = field_pad(spec, n);

	if (!(spec->flags & FMT_LEFT))
		out_repeat(o, ' ', pad);
	out_mem(o, s, n);
	if (spec->flags & FMT_LEFT)
		out_repeat(o, ' ', pad);
}

static void fmt_pointer(struct fmt_out *o, const struct fmt_spec *spec, uintptr_t v)
{
	char text[2 + 16];

	text[0] = '0';
	text[1] = 'x';
	for (int i = 17; i >= 2; i--, v >>= 4)
		text[i] = "0123456789abcdef"[v & 0xf];
	fmt_text(o, spec, text, sizeof(text));
}

/* Parse "%[flags][width][.prec][length]conv" starting after the '%' at *pp
 * and format it; *pp ends up after the conversion character. Returns false
 * when the conversion is not supported, so that the caller copies the
 * specification literally instead. */
static bool fmt_one(struct fmt_out *o, const char **pp, va_list *ap)
{
	const char *p = *pp;
	struct fmt_spec spec = { .prec = -1 };
	char c;

	for (;; p++) {
		if (*p == '-')
			spec.flags |= FMT_LEFT;
		else if (*p == '+')
			spec.flags |= FMT_PLUS;
		else if (*p == ' ')
			spec.flags |= FMT_SPACE;
		else if (*p == '#')
			spec.flags |= FMT_ALT;
		else if (*p == '0')
			spec.flags |= FMT_ZERO;
		else
			break;
	}
	if (*p == '*') {
		int w = va_arg(*ap, int);

		/* A negative '*' width is a '-' flag and a positive width. */
		if (w < 0) {
			spec.flags |= FMT_LEFT;
			w = w == FMT_INT_MIN ? FMT_INT_MAX : -w;
		}
		spec.width = w;
		p++;
	} else {
		spec.width = parse_count(&p);
	}
	if (*p == '.') {
		p++;
		if (*p == '*') {
			int prec = va_arg(*ap, int);

			/* A negative '*' precision counts as absent. */
			spec.prec = prec < 0 ? -1 : prec;
			p++;
		} else {
			spec.prec = parse_count(&p);
		}
	}
	switch (*p) {
	case 'h':
		spec.length = p[1] == 'h' ? FMT_LEN_HH : FMT_LEN_H;
		p += spec.length == FMT_LEN_HH ? 2 : 1;
		break;
	case 'l':
		spec.length = p[1] == 'l' ? FMT_LEN_LL : FMT_LEN_L;
		p += spec.length == FMT_LEN_LL ? 2 : 1;
		break;
	case 'z':
		spec.length = FMT_LEN_Z;
		p++;
		break;
	case 't':
		spec.length = FMT_LEN_T;
		p++;
		break;
	case 'j':
		spec.length = FMT_LEN_J;
		p++;
		break;
	default: break;
	}

	c = *p;
	*pp = c ? p + 1 : p;
	switch (c) {
	case 'd':
	case 'i': {
		int64_t v = arg_signed(ap, spec.length);
		/* Negate in unsigned arithmetic: -INT64_MIN does not exist. */
		uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

		fmt_integer(o, &spec, mag, v < 0, true, 10, false);
		break;
	}
	case 'u': fmt_integer(o, &spec, arg_unsigned(ap, spec.length), false, false, 10, false); break;
	case 'o': fmt_integer(o, &spec, arg_unsigned(ap, spec.length), false, false, 8, false); break;
	case 'x':
	case 'X': fmt_integer(o, &spec, arg_unsigned(ap, spec.length), false, false, 16, c == 'X'); break;
	case 'c':
	case 's':
	case 'p':
		/* %lc / %ls are wide characters: not supported. */
		if (spec.length != FMT_LEN_NONE)
			return false;
		if (c == 'c') {
			char ch = (char)(unsigned char)va_arg(*ap, int);

			fmt_text(o, &spec, &ch, 1);
		} else if (c == 's') {
			const char *s = va_arg(*ap, const char *);

			if (!s)
				s = "(null)";
			/* With a precision the array need not be terminated
			 * (C99 7.19.6.1p8): never look past prec bytes. */
			fmt_text(o, &spec, s, spec.prec >= 0 ? strnlen(s, (size_t)spec.prec) : strlen(s));
		} else {
			fmt_pointer(o, &spec, (uintptr_t)va_arg(*ap, void *));
		}
		break;
	case '%': out_char(o, '%'); break;
	default: return false;
	}
	return true;
}

int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct fmt_out o = { .buf = buf, .size = size, .len = 0 };
	va_list args;

	/* va_list may be an array type (it is on x86-64): copy it so that a
	 * pointer to it can be handed to the helpers portably. */
	va_copy(args, ap);
	while (*fmt) {
		const char *start = fmt;

		if (*fmt != '%') {
			out_char(&o, *fmt++);
			continue;
		}
		fmt++;
		/* Unsupported: show the whole "%...c" as written, so that the
		 * reader sees what the code asked for. */
		if (!fmt_one(&o, &fmt, &args))
			out_mem(&o, start, (size_t)(fmt - start));
	}
	va_end(args);
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	/* C99 leaves an unrepresentable count undefined; glibc returns -1. */
	return o.len > (size_t)FMT_INT_MAX ? -1 : (int)o.len;
}

int ksnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

int kerrf(char *buf, size_t size, int rc, const char *fmt, ...)
{
	va_list ap;

	if (buf && size) {
		va_start(ap, fmt);
		kvsnprintf(buf, size, fmt, ap);
		va_end(ap);
	}
	return rc;
}
