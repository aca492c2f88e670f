/* Host-test helpers shared by the firmware-structure parsers' tests: a
 * fake physical memory (each region its own exact-size allocation, so ASan
 * catches a read one byte past what the parser may see) and little-endian
 * byte builders for synthetic tables and loader structures. */
#ifndef TESTS_HOST_FAKEMEM_H
#define TESTS_HOST_FAKEMEM_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct fake_region {
	uint64_t phys;
	uint8_t *buf;
	size_t len;
};

#define FAKE_MAX 64
static struct fake_region fake[FAKE_MAX];
static int nfake;

static inline const void *fake_phys(uint64_t phys, size_t len)
{
	for (int i = 0; i < nfake; i++)
		if (phys >= fake[i].phys && len <= fake[i].len && phys - fake[i].phys <= fake[i].len - len)
			return fake[i].buf + (phys - fake[i].phys);
	return NULL;
}

/* A zeroed region at phys, filled from data when given. */
static inline uint8_t *fake_add(uint64_t phys, const void *data, size_t len)
{
	uint8_t *b = calloc(1, len ? len : 1);

	if (data)
		memcpy(b, data, len);
	if (nfake == FAKE_MAX)
		abort();
	fake[nfake++] = (struct fake_region){ phys, b, len };
	return b;
}

static inline void fake_free_all(void)
{
	for (int i = 0; i < nfake; i++)
		free(fake[i].buf);
	nfake = 0;
}

struct buf {
	uint8_t *b;
	size_t len, cap;
};

static inline void put(struct buf *w, const void *p, size_t n)
{
	if (w->len + n > w->cap) {
		w->cap = (w->len + n) * 2 + 64;
		w->b = realloc(w->b, w->cap);
	}
	memcpy(w->b + w->len, p, n);
	w->len += n;
}

static inline void put8(struct buf *w, uint8_t v)
{
	put(w, &v, 1);
}

static inline void put16(struct buf *w, uint16_t v)
{
	put8(w, (uint8_t)v);
	put8(w, (uint8_t)(v >> 8));
}

static inline void put32(struct buf *w, uint32_t v)
{
	put16(w, (uint16_t)v);
	put16(w, (uint16_t)(v >> 16));
}

static inline void put64(struct buf *w, uint64_t v)
{
	put32(w, (uint32_t)v);
	put32(w, (uint32_t)(v >> 32));
}

static inline void set16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void set32(uint8_t *p, uint32_t v)
{
	set16(p, (uint16_t)v);
	set16(p + 2, (uint16_t)(v >> 16));
}

static inline void set64(uint8_t *p, uint64_t v)
{
	set32(p, (uint32_t)v);
	set32(p + 4, (uint32_t)(v >> 32));
}

#endif
