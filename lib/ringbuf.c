/* Record ring with perf-mmap semantics: producer reservation with nesting,
 * LOST accounting, overwrite-mode resynchronisation, watermark wakeups.
 * The protocol is described in lib/ringbuf.h; this file explains the order.
 *
 * Memory ordering, with the barrier names of Linux's perf ring buffer
 * (kernel/events/ring_buffer.c, the A/B/C/D comment above
 * perf_output_put_handle; tools/include/linux/ring_buffer.h):
 *   producer: load data_tail (A: acquire), write the record,
 *             store data_head (B: release = wmb + store);
 *   consumer: load data_head (C: acquire = load + rmb), read the records,
 *             store data_tail (D: release).
 * D is a full barrier in Linux only because Linux has no cheaper barrier
 * that orders earlier loads before a later store; a C11 release store gives
 * exactly that (Linux's own perf tools now use smp_store_release for it).
 * On x86-64 every acquire load, release store and acquire/release fence
 * below compiles to a plain mov plus a compiler barrier: loads are not
 * reordered with loads, nor stores with older loads or stores (SDM vol. 3A,
 * "Multiple-Processor Management", "Memory Ordering in P6 and More Recent
 * Processor Families", 8.2.2 in the 2011-2022 editions). The only locked
 * instructions are the cmpxchg that reserves space and the xchg/xadd on the
 * lost counters; no mfence is emitted.
 *
 * Same-CPU nesting (a PMI or NMI interrupting a writer) is ordered with
 * signal fences: they are compiler barriers, which is all that code running
 * on one CPU needs to see its own stores in program order. */
#include "lib/ringbuf.h"

/* The data area is plain memory handed in by the caller; trailers are
 * accessed as whole 64-bit words (so a racing reader never sees a torn
 * one) through an alias-safe type. */
typedef uint64_t __attribute__((may_alias)) rb_word;

#define RB_SEQ_MASK ((UINT64_C(1) << 48) - 1) /* trailer: seq in bits 63:16 */
#define RB_MAX_SIZE 65528u                    /* largest 8-aligned uint16_t */

#define load_relaxed(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define store_relaxed(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define cpu_local_barrier() __atomic_signal_fence(__ATOMIC_SEQ_CST)

#ifdef PMUTEST_HOST
void (*rb_test_hook)(struct rb *rb, enum rb_hook_point point);
#define RB_HOOK(rb, point)                           \
	do {                                         \
		if (rb_test_hook)                    \
			rb_test_hook((rb), (point)); \
	} while (0)
#else
#define RB_HOOK(rb, point) \
	do {               \
	} while (0)
#endif

static inline uint64_t rb_round8(uint64_t n)
{
	return (n + 7) & ~(uint64_t)7;
}

static inline bool rb_overwrite(const struct rb *rb)
{
	return rb->flags & RB_OVERWRITE;
}

/* Copy into the ring at position pos, in two pieces if it straddles the end. */
static void rb_copy_in(struct rb *rb, uint64_t pos, const void *src, size_t len)
{
	uint64_t off = pos & rb->mask;
	uint64_t first = rb->mask + 1 - off;

	if (first >= len) {
		__builtin_memcpy(rb->data + off, src, len);
		return;
	}
	__builtin_memcpy(rb->data + off, src, first);
	__builtin_memcpy(rb->data, (const uint8_t *)src + first, len - first);
}

static void rb_copy_out(const struct rb *rb, uint64_t pos, void *dst, size_t len)
{
	uint64_t off = pos & rb->mask;
	uint64_t first = rb->mask + 1 - off;

	if (first >= len) {
		__builtin_memcpy(dst, rb->data + off, len);
		return;
	}
	__builtin_memcpy(dst, rb->data + off, first);
	__builtin_memcpy((uint8_t *)dst + first, rb->data, len - first);
}

/* Positions are 8-aligned and data_size is a multiple of 8, so a header or
 * a trailer never straddles the end of the data area. */
static struct rb_header rb_header_at(const struct rb *rb, uint64_t pos)
{
	struct rb_header hdr;

	__builtin_memcpy(&hdr, rb->data + (pos & rb->mask), sizeof(hdr));
	return hdr;
}

static rb_word *rb_trailer_at(const struct rb *rb, uint64_t end)
{
	return (rb_word *)(void *)(rb->data + ((end - RB_TRAILER_SIZE) & rb->mask));
}

int rb_init(struct rb *rb, struct rb_control *ctl, void *data, uint64_t data_size,
	    const struct rb_params *params)
{
	static const struct rb_params defaults;
	uint64_t max;

	if (!params)
		params = &defaults;
	if (!rb || !ctl || !data || data_size < RB_MIN_DATA_SIZE || (data_size & (data_size - 1)) ||
	    ((uintptr_t)data & 7) || (params->flags & ~RB_OVERWRITE))
		return RB_EINVAL;

	__builtin_memset(ctl, 0, sizeof(*ctl));
	__builtin_memset(rb, 0, sizeof(*rb));
	ctl->data_size = data_size;
	ctl->watermark = params->watermark ? params->watermark : data_size / 2;
	if (ctl->watermark > data_size)
		ctl->watermark = data_size;
	ctl->flags = params->flags;
	ctl->id = params->id;

	/* Half the ring: a LOST record (24 bytes, <= 32 = half the smallest
	 * ring) plus one record then always fit in an empty ring, so a pending
	 * LOST can never block forever; and an overwrite-mode reader always has
	 * half a ring of slack to read the newest record before it is lapped. */
	max = data_size / 2;
	if (max > RB_MAX_SIZE)
		max = RB_MAX_SIZE;
	rb->ctl = ctl;
	rb->data = data;
	rb->mask = data_size - 1;
	rb->max_record = max;
	rb->flags = params->flags;
	return RB_OK;
}

size_t rb_max_record(const struct rb *rb)
{
	return rb->max_record - (rb_overwrite(rb) ? RB_TRAILER_SIZE : 0);
}

/* Overwrite mode: give every record in [stamped, head) its trailer, in ring
 * order. Only the outermost writer calls this (nest == 1, so a PMI arriving
 * meanwhile reserves past `head` and does not stamp), which is what makes
 * seq follow position order even when a nested writer reserved between an
 * outer writer's reservation and its commit. */
static void rb_stamp(struct rb *rb, uint64_t head)
{
	uint64_t pos = load_relaxed(&rb->stamped);
	uint64_t seq = load_relaxed(&rb->next_seq);

	while (pos != head) {
		uint64_t size = rb_header_at(rb, pos).size;

		if (size < sizeof(struct rb_header) + RB_TRAILER_SIZE || (size & 7) || size > head - pos)
			break; /* cannot happen: our own headers; never loop on garbage */
		store_relaxed(rb_trailer_at(rb, pos + size), (seq & RB_SEQ_MASK) << 16 | size);
		seq++;
		pos += size;
	}
	store_relaxed(&rb->stamped, pos);
	store_relaxed(&rb->next_seq, seq);
}

/* Leave a reserve..commit window. Like perf_output_put_handle: a nested
 * writer only drops the nesting count, so a record reserved by the writer
 * it interrupted (lower in the ring, not yet written) is never published
 * early; the outermost writer publishes the highest reservation, after
 * everything below it is complete. After dropping nest to 0 it looks at
 * write_head again: a PMI that reserved in the window between its load and
 * the nest drop would otherwise stay unpublished until the next write. */
static int rb_leave(struct rb *rb)
{
	struct rb_control *ctl = rb->ctl;
	uint32_t nest = load_relaxed(&rb->nest);
	uint64_t head, old, tail;
	int ret = RB_OK;

	if (nest > 1) {
		store_relaxed(&rb->nest, nest - 1);
		return RB_OK;
	}
	for (;;) {
		cpu_local_barrier(); /* load write_head only after nest is 1 */
		old = load_relaxed(&ctl->data_head);
		tail = load_acquire(&ctl->data_tail); /* before publishing: tail <= old */
		head = load_relaxed(&ctl->write_head);
		RB_HOOK(rb, RB_HOOK_PUBLISH_READ);
		if (rb_overwrite(rb))
			rb_stamp(rb, head);
		store_release(&ctl->data_head, head); /* B: the record before the head */
		RB_HOOK(rb, RB_HOOK_PUBLISHED);
		/* Still nest == 1 here, so no interrupting writer touches wakeups. */
		if (old - tail < ctl->watermark && head - tail >= ctl->watermark) {
			store_relaxed(&ctl->wakeups, load_relaxed(&ctl->wakeups) + 1);
			ret = RB_WAKEUP;
		}
		/* Publish before dropping nest: a writer that then runs as the new
		 * outermost publishes a higher head, never one below ours. */
		cpu_local_barrier();
		store_relaxed(&rb->nest, 0);
		cpu_local_barrier();
		RB_HOOK(rb, RB_HOOK_NEST_DROPPED);
		if (load_relaxed(&ctl->write_head) == head)
			return ret;
		store_relaxed(&rb->nest, 1);
	}
}

int rb_reserve(struct rb *rb, uint32_t type, uint16_t misc, size_t size, struct rb_handle *h)
{
	struct rb_control *ctl = rb->ctl;
	bool overwrite = rb_overwrite(rb);
	uint64_t rsize, lost = 0, lost_size, need, off, tail, pos;
	size_t plen, pad;
	struct rb_header hdr;

	if (size < sizeof(struct rb_header) || size > rb_max_record(rb))
		return RB_EINVAL;
	rsize = rb_round8(size) + (overwrite ? RB_TRAILER_SIZE : 0);

	/* A plain load/store is enough: an interrupt between them runs a
	 * whole writer, which leaves nest as it found it. */
	store_relaxed(&rb->nest, load_relaxed(&rb->nest) + 1);
	cpu_local_barrier();
	RB_HOOK(rb, RB_HOOK_RESERVE_ENTERED);
	/* Claim the pending count before reserving, so that a nested writer
	 * cannot report the same drops: the claimed count is either written in
	 * our LOST record or handed back if we are dropped too. A nested
	 * writer reserving between this claim and our reservation lands before
	 * our LOST record; the count stays exact. */
	if (!overwrite && load_relaxed(&rb->lost_pending))
		lost = __atomic_exchange_n(&rb->lost_pending, 0, __ATOMIC_RELAXED);
	RB_HOOK(rb, RB_HOOK_LOST_CLAIMED);
	lost_size = lost ? sizeof(struct rb_lost) : 0;
	need = lost_size + rsize;

	off = load_relaxed(&ctl->write_head);
	for (;;) {
		RB_HOOK(rb, RB_HOOK_HEAD_READ);
		if (!overwrite) {
			tail = load_acquire(&ctl->data_tail); /* A */
			if (need > ctl->data_size - (off - tail)) {
				__atomic_fetch_add(&rb->lost_pending, lost + 1, __ATOMIC_RELAXED);
				__atomic_fetch_add(&ctl->lost, 1, __ATOMIC_RELAXED);
				RB_HOOK(rb, RB_HOOK_DROPPED);
				/* A writer we interrupted is still below us; a writer
				 * that interrupted us is complete and waits for the
				 * outermost to publish it, which may be us. */
				rb_leave(rb);
				return RB_ENOSPC;
			}
		}
		if (__atomic_compare_exchange_n(&ctl->write_head, &off, off + need, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			break;
	}
	/* An overwrite-mode reader validates a copy by re-reading write_head:
	 * the reservation must be visible before any byte of the overwrite. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	RB_HOOK(rb, RB_HOOK_RESERVED);

	if (lost) {
		struct rb_lost rec = {
			.hdr = { .type = RB_RECORD_LOST,
				 .misc = RB_LOST_DROPPED,
				 .size = sizeof(struct rb_lost) },
			.id = ctl->id,
			.lost = lost,
		};
		rb_copy_in(rb, off, &rec, sizeof(rec));
	}
	pos = off + lost_size;
	hdr = (struct rb_header){ .type = type, .misc = misc, .size = (uint16_t)rsize };
	rb_copy_in(rb, pos, &hdr, sizeof(hdr));

	h->rb = rb;
	h->pos = pos;
	plen = size - sizeof(hdr);
	pad = rb_round8(size) - size;
	if (pad) {
		static const uint8_t zero[8];
		rb_copy_in(rb, pos + size, zero, pad);
	}
	{
		uint64_t start = (pos + sizeof(hdr)) & rb->mask;
		uint64_t room = rb->mask + 1 - start;

		h->ptr[0] = rb->data + start;
		h->len[0] = (uint32_t)(plen < room ? plen : room);
		h->ptr[1] = rb->data;
		h->len[1] = (uint32_t)(plen - h->len[0]);
	}
	return RB_OK;
}

void rb_handle_write(struct rb_handle *h, size_t offset, const void *src, size_t len)
{
	const uint8_t *s = src;
	size_t total = (size_t)h->len[0] + h->len[1];

	if (offset >= total)
		return;
	if (len > total - offset)
		len = total - offset; /* never write past the reservation */
	if (offset < h->len[0]) {
		size_t n = h->len[0] - offset < len ? h->len[0] - offset : len;

		__builtin_memcpy(h->ptr[0] + offset, s, n);
		s += n;
		len -= n;
		offset = h->len[0];
	}
	if (len)
		__builtin_memcpy(h->ptr[1] + (offset - h->len[0]), s, len);
}

int rb_commit(struct rb_handle *h)
{
	RB_HOOK(h->rb, RB_HOOK_COMMIT_ENTERED);
	return rb_leave(h->rb);
}

int rb_write(struct rb *rb, uint32_t type, uint16_t misc, const void *payload, size_t len)
{
	struct rb_handle h;
	int ret;

	if (len > RB_MAX_SIZE)
		return RB_EINVAL;
	ret = rb_reserve(rb, type, misc, sizeof(struct rb_header) + len, &h);
	if (ret < 0)
		return ret;
	rb_handle_write(&h, 0, payload, len);
	return rb_commit(&h);
}

/* Non-overwrite mode: the producer never writes past data_tail, so what
 * lies between tail and head is stable until we move the tail. */
static int rb_peek_plain(struct rb *rb, void *buf, size_t buflen)
{
	struct rb_control *ctl = rb->ctl;
	uint64_t head = load_acquire(&ctl->data_head); /* C */
	uint64_t tail = load_relaxed(&ctl->data_tail);
	uint64_t size;

	if (head == tail)
		return 0;
	size = rb_header_at(rb, tail).size;
	if (size < sizeof(struct rb_header) || (size & 7) || size > head - tail)
		return RB_ECORRUPT;
	rb->rd_size = size;
	if (size > buflen)
		return RB_E2BIG;
	rb_copy_out(rb, tail, buf, size);
	return (int)size;
}

/* Overwrite mode, lapped: move the tail to the oldest record boundary
 * still intact, found by walking trailers backward from data_head. The
 * floor is the oldest byte the producer has not yet reserved over; from
 * the third attempt of one peek on it is raised by half a ring, so a
 * producer that keeps lapping a slow reader leaves it time to read the
 * record it lands on (liveness; the loss is still counted exactly). The walk may read a trailer the producer
 * is overwriting; then the boundary it finds lies below an overwritten byte, rb_peek's validation of the next
 * record fails, and we come back here. */
static void rb_resync(struct rb *rb, unsigned attempt)
{
	struct rb_control *ctl = rb->ctl;
	uint64_t data_size = ctl->data_size;
	uint64_t head = load_acquire(&ctl->data_head);
	uint64_t w = load_relaxed(&ctl->write_head); /* >= head: loaded later */
	uint64_t tail = load_relaxed(&ctl->data_tail);
	uint64_t floor = w - data_size;
	uint64_t pos = head;

	RB_HOOK(rb, RB_HOOK_RESYNC_LOADED);
	/* Positions compare by signed difference: they are free-running
	 * 64-bit counters, and w - data_size is "below zero" early on. */
	if (attempt >= 2)
		floor += data_size / 2;
	if ((int64_t)(floor - tail) < 0)
		floor = tail;
	if ((int64_t)(head - floor) < 0)
		floor = head; /* everything published is being lapped */
	while (pos - floor >= sizeof(struct rb_header) + RB_TRAILER_SIZE) {
		uint64_t size = load_relaxed(rb_trailer_at(rb, pos)) & 0xffff;

		if (size < sizeof(struct rb_header) + RB_TRAILER_SIZE || (size & 7) ||
		    size > rb->max_record || size > pos - floor)
			break;
		pos -= size;
	}
	store_release(&ctl->data_tail, pos);
	rb->rd_resyncs++;
}

/* Overwrite mode: the producer may overwrite the record while we copy it,
 * so the copy is validated afterwards, seqlock style: it is intact if the
 * producer had not yet reserved the byte one ring above the record's first
 * byte when we finished copying (the fence orders the copy before that
 * check, pairing with the release fence after the reservation). */
static int rb_peek_overwrite(struct rb *rb, void *buf, size_t buflen)
{
	struct rb_control *ctl = rb->ctl;
	uint64_t data_size = ctl->data_size;

	for (unsigned attempt = 0;; attempt++) {
		uint64_t head = load_acquire(&ctl->data_head); /* C */
		uint64_t tail = load_relaxed(&ctl->data_tail);
		uint64_t size, trailer = 0, seq, gap, w;
		bool sane;

		if (head == tail)
			return 0;
		if (head - tail > data_size) {
			rb_resync(rb, attempt);
			continue;
		}
		size = rb_header_at(rb, tail).size;
		sane = size >= sizeof(struct rb_header) + RB_TRAILER_SIZE && !(size & 7) &&
		       size <= rb->max_record && size <= head - tail;
		if (sane) {
			trailer = load_relaxed(rb_trailer_at(rb, tail + size));
			if (size - RB_TRAILER_SIZE <= buflen)
				rb_copy_out(rb, tail, buf, size - RB_TRAILER_SIZE);
		}
		RB_HOOK(rb, RB_HOOK_READ_COPIED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		w = load_relaxed(&ctl->write_head);
		if (w - tail > data_size) {
			rb_resync(rb, attempt);
			continue;
		}
		if (!sane || (trailer & 0xffff) != size)
			return RB_ECORRUPT;

		seq = trailer >> 16;
		gap = (seq - rb->rd_seq) & RB_SEQ_MASK;
		if (gap) {
			struct rb_lost rec = {
				.hdr = { .type = RB_RECORD_LOST,
					 .misc = RB_LOST_OVERWRITTEN,
					 .size = sizeof(struct rb_lost) },
				.id = ctl->id,
				.lost = gap,
			};

			rb->rd_size = 0; /* the record itself comes next */
			rb->rd_seq_after = seq;
			if (buflen < sizeof(rec))
				return RB_E2BIG;
			__builtin_memcpy(buf, &rec, sizeof(rec));
			return (int)sizeof(rec);
		}
		rb->rd_size = size;
		rb->rd_seq_after = (seq + 1) & RB_SEQ_MASK;
		if (size - RB_TRAILER_SIZE > buflen)
			return RB_E2BIG;
		{
			/* The caller sees the record without its trailer. */
			uint16_t visible = (uint16_t)(size - RB_TRAILER_SIZE);

			__builtin_memcpy((uint8_t *)buf + offsetof(struct rb_header, size), &visible,
					 sizeof(visible));
		}
		return (int)(size - RB_TRAILER_SIZE);
	}
}

int rb_peek(struct rb *rb, void *buf, size_t buflen)
{
	rb->rd_size = 0;
	rb->rd_seq_after = rb->rd_seq;
	return rb_overwrite(rb) ? rb_peek_overwrite(rb, buf, buflen) : rb_peek_plain(rb, buf, buflen);
}

void rb_consume(struct rb *rb)
{
	struct rb_control *ctl = rb->ctl;

	if (rb->rd_seq_after != rb->rd_seq) {
		if (!rb->rd_size) /* a synthesised LOST record */
			rb->rd_overwritten += (rb->rd_seq_after - rb->rd_seq) & RB_SEQ_MASK;
		rb->rd_seq = rb->rd_seq_after;
	}
	if (rb->rd_size) {
		/* D: our reads of the record happen before the producer may reuse it. */
		store_release(&ctl->data_tail, load_relaxed(&ctl->data_tail) + rb->rd_size);
		rb->rd_size = 0;
	}
}

int rb_read(struct rb *rb, void *buf, size_t buflen)
{
	int ret = rb_peek(rb, buf, buflen);

	if (ret > 0)
		rb_consume(rb);
	return ret;
}

uint64_t rb_fill(const struct rb *rb)
{
	return load_acquire(&rb->ctl->data_head) - load_relaxed(&rb->ctl->data_tail);
}

size_t rb_record_to_hex(const void *rec, size_t len, char *out, size_t outlen)
{
	static const char digits[] = "0123456789abcdef";
	const uint8_t *p = rec;

	if (outlen < 1 || len > (outlen - 1) / 2)
		return 0;
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * len] = '\0';
	return 2 * len;
}
