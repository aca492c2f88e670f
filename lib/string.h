/* Freestanding memory and string routines. The compiler emits calls to
 * memcpy/memmove/memset/memcmp on its own, so those keep the ISO C names. */
#ifndef LIB_STRING_H
#define LIB_STRING_H

#include <stdbool.h>
#include <stddef.h>

#ifdef PMUTEST_HOST
/* Host unit tests link these next to the host libc: rename ours so both
 * exist in one program and the test can compare them. The #undefs guard
 * against a libc that defines any of these as macros. */
#undef memcpy
#undef memmove
#undef memset
#undef memcmp
#undef strlen
#undef strnlen
#undef strcmp
#undef strncmp
#undef strchr
#undef strrchr
#undef strstr
#undef strlcpy
#define memcpy kstr_memcpy
#define memmove kstr_memmove
#define memset kstr_memset
#define memcmp kstr_memcmp
#define strlen kstr_strlen
#define strnlen kstr_strnlen
#define strcmp kstr_strcmp
#define strncmp kstr_strncmp
#define strchr kstr_strchr
#define strrchr kstr_strrchr
#define strstr kstr_strstr
#define strlcpy kstr_strlcpy
#define str_starts_with kstr_str_starts_with
#endif

void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

size_t strlen(const char *s);
size_t strnlen(const char *s, size_t maxlen);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);
char *strrchr(const char *s, int c);
char *strstr(const char *haystack, const char *needle);

/* BSD strlcpy: copies at most size - 1 bytes, NUL-terminates when size > 0,
 * returns strlen(src) so that a result >= size means "truncated". */
size_t strlcpy(char *restrict dst, const char *restrict src, size_t size);

/* True when s begins with prefix (every string begins with ""). */
bool str_starts_with(const char *s, const char *prefix);

#endif
