/* Freestanding memory and string routines for the kernel (and, renamed to
 * kstr_*, for the host tests that check them against the host libc). */
#include "lib/string.h"

#include <stdint.h>

/* Word-sized access that may alias any object: the copy loops move 8 bytes
 * at a time through this type without breaking the strict-aliasing rule. */
typedef uint64_t __attribute__((may_alias)) lib_word;

#define LIB_WORD_SIZE sizeof(lib_word)
#define LIB_WORD_MASK (LIB_WORD_SIZE - 1)

/* GCC's loop-distribution pass can turn byte loops into calls to memcpy or
 * memset, which inside memcpy/memset themselves is infinite recursion (GCC
 * bug 56888; recent releases guard against it, older ones do not). Clang
 * does no such thing under -fno-builtin and does not know the attribute. */
#if defined(__GNUC__) && !defined(__clang__)
#define LIB_NO_LOOP_CALLS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define LIB_NO_LOOP_CALLS
#endif

LIB_NO_LOOP_CALLS
void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	/* Word copies pay off only when both pointers can reach 8-byte
	 * alignment together, i.e. they agree modulo 8. */
	if (n >= 2 * LIB_WORD_SIZE && (((uintptr_t)d ^ (uintptr_t)s) & LIB_WORD_MASK) == 0) {
		while ((uintptr_t)d & LIB_WORD_MASK) {
			*d++ = *s++;
			n--;
		}
		for (; n >= LIB_WORD_SIZE; n -= LIB_WORD_SIZE) {
			*(lib_word *)(void *)d = *(const lib_word *)(const void *)s;
			d += LIB_WORD_SIZE;
			s += LIB_WORD_SIZE;
		}
	}
	while (n--)
		*d++ = *s++;
	return dst;
}

LIB_NO_LOOP_CALLS
void *memmove(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	/* Copying forwards is safe unless dst starts inside [src, src + n);
	 * the unsigned difference tests that in one comparison. */
	if ((uintptr_t)d - (uintptr_t)s >= n) {
		while (n--)
			*d++ = *s++;
		return dst;
	}
	d += n;
	s += n;
	while (n--)
		*--d = *--s;
	return dst;
}

LIB_NO_LOOP_CALLS
void *memset(void *dst, int c, size_t n)
{
	unsigned char *d = dst;
	unsigned char b = (unsigned char)c;

	if (n >= 2 * LIB_WORD_SIZE) {
		lib_word w = 0x0101010101010101ull * b;

		while ((uintptr_t)d & LIB_WORD_MASK) {
			*d++ = b;
			n--;
		}
		for (; n >= LIB_WORD_SIZE; n -= LIB_WORD_SIZE) {
			*(lib_word *)(void *)d = w;
			d += LIB_WORD_SIZE;
		}
	}
	while (n--)
		*d++ = b;
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;

	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

size_t strlen(const char *s)
{
	const char *p = s;

	while (*p)
		p++;
	return (size_t)(p - s);
}

size_t strnlen(const char *s, size_t maxlen)
{
	size_t n = 0;

	/* Test the bound first: s need not be terminated within maxlen. */
	while (n < maxlen && s[n])
		n++;
	return n;
}

int strcmp(const char *a, const char *b)
{
	const unsigned char *x = (const unsigned char *)a;
	const unsigned char *y = (const unsigned char *)b;

	while (*x && *x == *y) {
		x++;
		y++;
	}
	return *x - *y;
}

int strncmp(const char *a, const char *b, size_t n)
{
	const unsigned char *x = (const unsigned char *)a;
	const unsigned char *y = (const unsigned char *)b;

	for (; n; n--, x++, y++)
		if (*x != *y || !*x)
			return *x - *y;
	return 0;
}

char *strchr(const char *s, int c)
{
	char ch = (char)c;

	/* The terminator is part of the string: strchr(s, 0) finds it. */
	for (;; s++) {
		if (*s == ch)
			return (char *)s;
		if (!*s)
			return NULL;
	}
}

char *strrchr(const char *s, int c)
{
	char ch = (char)c;
	const char *last = NULL;

	for (;; s++) {
		if (*s == ch)
			last = s;
		if (!*s)
			return (char *)last;
	}
}

char *strstr(const char *haystack, const char *needle)
{
	size_t n = strlen(needle);

	if (n == 0)
		return (char *)haystack;
	/* Quadratic in the worst case; the kernel searches short strings. */
	for (; *haystack; haystack++)
		if (*haystack == *needle && strncmp(haystack, needle, n) == 0)
			return (char *)haystack;
	return NULL;
}

size_t strlcpy(char *restrict dst, const char *restrict src, size_t size)
{
	size_t len = strlen(src);

	if (size) {
		size_t copy = len < size ? len : size - 1;

		memcpy(dst, src, copy);
		dst[copy] = '\0';
	}
	return len;
}

bool str_starts_with(const char *s, const char *prefix)
{
	for (; *prefix; s++, prefix++)
		if (*s != *prefix)
			return false;
	return true;
}
