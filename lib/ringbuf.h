/* Lock-free record ring with Linux perf-mmap semantics: one producer context
 * per ring (plus any interrupts that nest inside it), one consumer anywhere.
 * Freestanding; the caller hands in the control area and the data area.
 *
 * Model: Linux kernel/events/ring_buffer.c (perf_output_begin/end) and
 * Documentation/userspace-api/perf_ring_buffer.rst; names and code are ours.
 *
 * Positions are 64-bit byte counts that only grow; a position p lives at
 * data[p & (data_size - 1)]. Every record is 8-byte aligned and starts with
 * struct rb_header; a record may straddle the end of the data area (it is
 * copied in two pieces, never padded), which keeps every byte usable.
 *
 * Non-overwrite mode (default): a record that does not fit between the
 * producer's reservation and data_tail is dropped and counted; the next
 * record that fits is preceded by an RB_RECORD_LOST record carrying that
 * count. Room for both is reserved together, or neither is written.
 *
 * Overwrite mode (RB_OVERWRITE): the producer never looks at data_tail. Each
 * record then ends in an 8-byte trailer {seq << 16 | size} so a lapped reader
 * can walk backward from data_head to a record boundary, and count exactly
 * how many records it missed from the gap in seq. rb_peek/rb_read hide the
 * trailer and report the gap as a synthesised RB_RECORD_LOST record whose
 * misc is RB_LOST_OVERWRITTEN. */
#ifndef LIB_RINGBUF_H
#define LIB_RINGBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every record begins with this; size counts the header and is a multiple
 * of 8 (the producer rounds up and zero-fills the padding). */
struct rb_header {
	uint32_t type; /* enum rb_record_type */
	uint16_t misc; /* meaning depends on type */
	uint16_t size; /* bytes, header included */
};
_Static_assert(sizeof(struct rb_header) == 8, "rb_header is 8 bytes");

enum rb_record_type {
	RB_RECORD_INVALID = 0, /* never written: a zero header means a bug */
	RB_RECORD_LOST = 1,    /* struct rb_lost */
	RB_RECORD_SAMPLE = 2,  /* struct pmu_sample (pmu/sample_record.h) */
	RB_RECORD_USER = 0x100 /* first type free for other users */
};

/* misc of an RB_RECORD_LOST record: who noticed the loss. */
#define RB_LOST_DROPPED 0     /* producer: ring full (non-overwrite) */
#define RB_LOST_OVERWRITTEN 1 /* reader: producer lapped it (overwrite) */

/* Same shape as perf's PERF_RECORD_LOST {header, id, lost}: `id` is the
 * ring's id (pmutest uses the CPU number) so a decoder can attribute the
 * loss without any other context. */
struct rb_lost {
	struct rb_header hdr;
	uint64_t id;
	uint64_t lost; /* records dropped since the previous LOST record */
};
_Static_assert(sizeof(struct rb_lost) == 24, "rb_lost layout is ABI");

/* The shared control area (perf's user page). Producer-written fields and
 * the consumer-written tail sit on different cache lines so a busy producer
 * and a draining consumer do not bounce one line between CPUs. */
struct rb_control {
	/* Written only by the producer. */
	uint64_t data_head;  /* published: all bytes before it are whole records */
	uint64_t write_head; /* reserved: [data_head, write_head) is being written */
	uint64_t lost;       /* records dropped since init (non-overwrite) */
	uint64_t wakeups;    /* times the fill level crossed the watermark */
	/* Written only by the consumer. */
	_Alignas(64) uint64_t data_tail;
	/* Set by rb_init, read-only afterwards. */
	_Alignas(64) uint64_t data_size; /* power of two, >= RB_MIN_DATA_SIZE */
	uint64_t watermark;              /* bytes of fill that warrant a wakeup */
	uint32_t flags;                  /* RB_OVERWRITE */
	uint32_t id;                     /* copied into LOST records */
};
_Static_assert(sizeof(struct rb_control) <= 4096, "control area fits one page");

#define RB_OVERWRITE (1u << 0)
#define RB_MIN_DATA_SIZE 64u
#define RB_TRAILER_SIZE 8u /* overwrite mode only */

/* rb_init parameters; a NULL pointer means all defaults. */
struct rb_params {
	uint32_t flags;     /* RB_OVERWRITE or 0 */
	uint32_t id;        /* e.g. the CPU number */
	uint64_t watermark; /* 0 = data_size / 2 */
};

/* The caller's handle on one ring: producer-private and consumer-private
 * state, each on its own cache line. Opaque to users; fields are here only
 * so that it can be placed statically. */
struct rb {
	struct rb_control *ctl;
	uint8_t *data;
	uint64_t mask;
	uint64_t max_record; /* largest record (trailer included) rb_reserve takes */
	uint32_t flags;
	/* Producer, touched only from the producing CPU and its interrupts. */
	_Alignas(64) uint32_t nest; /* writers inside reserve..commit */
	uint64_t lost_pending;      /* dropped, not yet reported by a LOST record */
	uint64_t stamped;           /* overwrite: trailers stamped up to here */
	uint64_t next_seq;          /* overwrite: seq of the next record stamped */
	/* Consumer. */
	_Alignas(64) uint64_t rd_size; /* ring bytes the last peek covered */
	uint64_t rd_seq;               /* overwrite: expected seq of the next record */
	uint64_t rd_seq_after;         /* overwrite: rd_seq once the peeked item is consumed */
	uint64_t rd_overwritten;       /* overwrite: records the reader missed, total */
	uint32_t rd_resyncs;           /* overwrite: how often the reader was lapped */
};

/* A reservation: the payload region (after the header) in one or two
 * pieces, because a record may straddle the end of the data area. */
struct rb_handle {
	struct rb *rb;
	uint8_t *ptr[2];
	uint32_t len[2];
	uint64_t pos; /* ring position of the record's header */
};

/* Return values. Negative: nothing was written or read. */
#define RB_OK 0
#define RB_WAKEUP 1      /* this publication crossed the watermark */
#define RB_ENOSPC (-1)   /* dropped and counted as lost (non-overwrite) */
#define RB_EINVAL (-2)   /* size out of range: not counted as lost */
#define RB_E2BIG (-3)    /* caller's buffer too small for the next record */
#define RB_ECORRUPT (-4) /* a header failed validation (a producer bug) */

/* Set up a ring over ctl and data_size bytes at data (a power of two, at
 * least RB_MIN_DATA_SIZE, 8-byte aligned). Returns RB_OK or RB_EINVAL. */
int rb_init(struct rb *rb, struct rb_control *ctl, void *data, uint64_t data_size,
	    const struct rb_params *params);

/* Largest `size` rb_reserve accepts: records are capped at half the ring
 * so that a LOST record and one record always fit in an empty ring. */
size_t rb_max_record(const struct rb *rb);

/* Producer. rb_reserve claims `size` bytes (header included, rounded up to
 * 8), writes the header, zeroes the rounding padding and returns RB_OK with
 * the payload region in *h; the caller fills it (rb_handle_write or the
 * pointers) and then calls rb_commit, which returns RB_OK or RB_WAKEUP.
 * Nothing is visible to the consumer before the outermost commit. On
 * RB_ENOSPC / RB_EINVAL, do not commit. Safe to call from an interrupt that
 * interrupted another writer of the same ring on the same CPU. */
int rb_reserve(struct rb *rb, uint32_t type, uint16_t misc, size_t size, struct rb_handle *h);
void rb_handle_write(struct rb_handle *h, size_t offset, const void *src, size_t len);
int rb_commit(struct rb_handle *h);

/* reserve + copy + commit: payload of len bytes after the header. */
int rb_write(struct rb *rb, uint32_t type, uint16_t misc, const void *payload, size_t len);

/* Consumer. rb_peek copies the next record (header included, trailer
 * stripped) into buf and returns its size, 0 when the ring is empty, or a
 * negative RB_E*. Calling it again without rb_consume returns the same
 * record (in overwrite mode, unless the producer lapped it meanwhile).
 * rb_consume releases what the last peek returned; rb_read is both. */
int rb_peek(struct rb *rb, void *buf, size_t buflen);
void rb_consume(struct rb *rb);
int rb_read(struct rb *rb, void *buf, size_t buflen);

/* Bytes published and not yet consumed (may exceed data_size when an
 * overwrite-mode reader has been lapped). */
uint64_t rb_fill(const struct rb *rb);

/* Drain encoding: len bytes of a record as 2 * len lowercase hex digits in
 * memory order, NUL-terminated. Returns the digits written, or 0 if out
 * cannot hold them and the NUL. */
size_t rb_record_to_hex(const void *rec, size_t len, char *out, size_t outlen);

#ifdef PMUTEST_HOST
/* Host tests simulate a PMI arriving at each step of the producer path, and
 * a producer lapping the reader at each step of the overwrite-mode reader:
 * when set, the hook runs at every RB_HOOK_* point. Not in kernel builds. */
enum rb_hook_point {
	/* Producer. */
	RB_HOOK_RESERVE_ENTERED, /* nest raised, lost not yet claimed */
	RB_HOOK_LOST_CLAIMED,    /* pending lost count taken */
	RB_HOOK_HEAD_READ,       /* write_head loaded, not yet advanced */
	RB_HOOK_RESERVED,        /* write_head advanced, record not written */
	RB_HOOK_DROPPED,         /* record counted as lost, not yet published */
	RB_HOOK_COMMIT_ENTERED,  /* record written, commit begins */
	RB_HOOK_PUBLISH_READ,    /* outermost: head to publish loaded */
	RB_HOOK_PUBLISHED,       /* outermost: data_head stored, still nested */
	RB_HOOK_NEST_DROPPED,    /* outermost: nest back to 0, head not rechecked */
	RB_HOOK_PRODUCER_POINTS, /* how many producer points there are */
	/* Overwrite-mode reader. */
	RB_HOOK_RESYNC_LOADED = RB_HOOK_PRODUCER_POINTS, /* heads loaded, walk not begun */
	RB_HOOK_READ_COPIED,                             /* record copied, not yet validated */
};
extern void (*rb_test_hook)(struct rb *rb, enum rb_hook_point point);
#endif

#endif
