/* Host tests of lib/ringbuf.c: exact byte layout at every offset, LOST
 * accounting, overwrite resynchronisation, watermark, nested writers at
 * every step of the producer path, and a two-thread stress run. */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#include "lib/ringbuf.h"
#include "pmu/sample_record.h"
#include "tests/host/hosttest.h"

#define T_USER (RB_RECORD_USER + 7)
#define FILL 0xa5 /* the data area's contents before any write */

struct ring {
	struct rb rb;
	struct rb_control ctl;
	uint8_t *data;
	uint64_t size;
};

/* Exactly data_size bytes from malloc, so ASan flags any stray write. */
static bool ring_open(struct ring *r, uint64_t size, uint32_t flags, uint64_t watermark, uint32_t id)
{
	struct rb_params p = { .flags = flags, .id = id, .watermark = watermark };

	r->size = size;
	r->data = malloc(size);
	memset(r->data, FILL, size);
	return rb_init(&r->rb, &r->ctl, r->data, size, &p) == RB_OK;
}

static void ring_close(struct ring *r)
{
	free(r->data);
	r->data = NULL;
}

/* White-box: make the ring look as if `pos` bytes had been written and read. */
static void ring_seek(struct ring *r, uint64_t pos)
{
	r->ctl.data_head = r->ctl.write_head = r->ctl.data_tail = pos;
	r->rb.stamped = pos;
}

static uint64_t round8(uint64_t n)
{
	return (n + 7) & ~(uint64_t)7;
}

/* Bytes a record with plen payload bytes takes in the ring. */
static uint64_t ring_bytes(const struct ring *r, size_t plen)
{
	return round8(sizeof(struct rb_header) + plen) + ((r->rb.flags & RB_OVERWRITE) ? RB_TRAILER_SIZE : 0);
}

/* Payload: the record's sequence number (when there is room for it), then
 * a pattern derived from it, so a torn or misplaced byte is detected. */
static uint8_t pattern(uint64_t seq, size_t i)
{
	return (uint8_t)(seq * 31 + i * 7 + 1);
}

static void make_payload(uint8_t *buf, uint64_t seq, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pattern(seq, i);
	if (len >= 8)
		memcpy(buf, &seq, 8);
}

static bool payload_ok(const uint8_t *buf, uint64_t seq, size_t len)
{
	for (size_t i = len >= 8 ? 8 : 0; i < len; i++)
		if (buf[i] != pattern(seq, i))
			return false;
	if (len >= 8) {
		uint64_t s;
		memcpy(&s, buf, 8);
		return s == seq;
	}
	return true;
}

static int put(struct ring *r, uint64_t seq, size_t plen)
{
	uint8_t buf[65536];

	make_payload(buf, seq, plen);
	return rb_write(&r->rb, T_USER, (uint16_t)seq, buf, plen);
}

/* Read one record and check it is the user record `seq` with plen bytes. */
static bool get_user(struct ring *r, uint64_t seq, size_t plen)
{
	uint8_t buf[65536];
	struct rb_header hdr;
	int n = rb_read(&r->rb, buf, sizeof(buf));
	uint64_t want = round8(sizeof(hdr) + plen);

	if (n <= 0) {
		printf("    # read returned %d, expected record seq %llu\n", n, (unsigned long long)seq);
		return false;
	}
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.type != T_USER || hdr.misc != (uint16_t)seq || hdr.size != want || (uint64_t)n != want ||
	    !payload_ok(buf + 8, seq, plen)) {
		printf("    # record: type %u misc %u size %u (read %d); expected type %u misc %u "
		       "size %llu, payload ok %d\n",
		       hdr.type, hdr.misc, hdr.size, n, T_USER, (uint16_t)seq, (unsigned long long)want,
		       payload_ok(buf + 8, seq, plen));
		return false;
	}
	for (uint64_t i = sizeof(hdr) + plen; i < want; i++)
		if (buf[i] != 0) {
			printf("    # padding byte %llu is %#x\n", (unsigned long long)i, buf[i]);
			return false;
		}
	return true;
}

/* Read one record and check it is LOST(count) with the given misc and id. */
static bool get_lost(struct ring *r, uint64_t count, uint16_t misc, uint64_t id)
{
	struct rb_lost rec;
	uint8_t buf[64];
	int n = rb_read(&r->rb, buf, sizeof(buf));

	memcpy(&rec, buf, sizeof(rec));
	if (n != (int)sizeof(rec) || rec.hdr.type != RB_RECORD_LOST || rec.hdr.size != 24 ||
	    rec.hdr.misc != misc || rec.lost != count || rec.id != id) {
		printf("    # read %d: type %u misc %u size %u lost %llu id %llu; expected LOST "
		       "misc %u lost %llu id %llu\n",
		       n, rec.hdr.type, rec.hdr.misc, rec.hdr.size, (unsigned long long)rec.lost,
		       (unsigned long long)rec.id, misc, (unsigned long long)count, (unsigned long long)id);
		return false;
	}
	return true;
}

static bool empty(struct ring *r)
{
	uint8_t buf[64];
	return rb_peek(&r->rb, buf, sizeof(buf)) == 0;
}

HT_TEST(init_validates_geometry)
{
	struct rb rb;
	struct rb_control ctl;
	static uint64_t mem[1 << 15];
	struct rb_params ow = { .flags = RB_OVERWRITE };
	struct rb_params bad = { .flags = 2 };
	uint8_t payload[32] = { 0 };

	HT_CHECK_EQ(rb_init(&rb, &ctl, mem, 32, NULL), (uint64_t)RB_EINVAL);
	HT_CHECK_EQ(rb_init(&rb, &ctl, mem, 96, NULL), (uint64_t)RB_EINVAL);
	HT_CHECK_EQ(rb_init(&rb, &ctl, (uint8_t *)mem + 4, 64, NULL), (uint64_t)RB_EINVAL);
	HT_CHECK_EQ(rb_init(&rb, &ctl, mem, 64, &bad), (uint64_t)RB_EINVAL);
	HT_CHECK_EQ(rb_init(&rb, &ctl, mem, 64, NULL), RB_OK);
	HT_CHECK_EQ(rb_max_record(&rb), 32);
	HT_CHECK_EQ(ctl.watermark, 32);
	HT_CHECK_EQ(ctl.data_size, 64);
	HT_CHECK_EQ(rb_init(&rb, &ctl, mem, 64, &ow), RB_OK);
	HT_CHECK_EQ(rb_max_record(&rb), 24);
	HT_CHECK_EQ(rb_init(&rb, &ctl, mem, sizeof(mem), NULL), RB_OK);
	HT_CHECK_EQ(rb_max_record(&rb), 65528);
	/* Out-of-range sizes are refused, not counted as lost. */
	HT_CHECK_EQ(rb_init(&rb, &ctl, mem, 64, NULL), RB_OK);
	HT_CHECK_EQ(rb_write(&rb, T_USER, 0, payload, 25), (uint64_t)RB_EINVAL);
	HT_CHECK_EQ(rb_write(&rb, T_USER, 0, payload, 24), RB_WAKEUP); /* 32 of 64 */
	HT_CHECK_EQ(ctl.lost, 0);
	HT_CHECK_EQ(ctl.data_head, 32);
}

HT_TEST(empty_ring_reads_nothing)
{
	struct ring r;

	HT_CHECK(ring_open(&r, 256, 0, 0, 0), "init");
	HT_CHECK(empty(&r), "fresh ring is empty");
	HT_CHECK_EQ(rb_fill(&r.rb), 0);
	ring_close(&r);
	HT_CHECK(ring_open(&r, 256, RB_OVERWRITE, 0, 0), "init");
	HT_CHECK(empty(&r), "fresh overwrite ring is empty");
	ring_close(&r);
}

/* Every 8-aligned start offset, every payload length up to the maximum, in
 * both modes and at three bases (fresh, after several laps, and across the
 * 64-bit wrap of the position counters): the record reads back byte for
 * byte, the head moves by exactly its size, and no byte outside it changes. */
HT_TEST(wrap_at_every_offset)
{
	static const uint64_t sizes[] = { 64, 128 };
	unsigned cases = 0, bad = 0;

	for (unsigned si = 0; si < 2; si++) {
		uint64_t ds = sizes[si];
		for (unsigned mode = 0; mode < 2; mode++) {
			uint32_t flags = mode ? RB_OVERWRITE : 0;
			for (uint64_t start = 0; start < ds; start += 8) {
				uint64_t bases[] = { start, 7 * ds + start, (uint64_t)0 - 2 * ds + start };
				for (unsigned bi = 0; bi < 3; bi++) {
					struct ring r;
					ring_open(&r, ds, flags, 0, 0);
					size_t maxp = rb_max_record(&r.rb) - 8;
					for (size_t plen = 0; plen <= maxp; plen++) {
						uint64_t base = bases[bi];
						uint64_t rs = ring_bytes(&r, plen);
						bool ok;

						memset(r.data, FILL, ds);
						ring_seek(&r, base);
						ok = put(&r, plen + 1000, plen) >= 0 &&
						     r.ctl.data_head == base + rs &&
						     r.ctl.write_head == base + rs;
						for (uint64_t p = base + rs; p != base + ds; p++)
							ok = ok && r.data[p & (ds - 1)] == FILL;
						ok = ok && get_user(&r, plen + 1000, plen) && empty(&r) &&
						     r.ctl.data_tail == base + rs;
						cases++;
						if (!ok) {
							bad++;
							printf("    # ds %llu mode %u base %#llx plen %zu\n",
							       (unsigned long long)ds, mode,
							       (unsigned long long)base, plen);
						}
					}
					ring_close(&r);
				}
			}
		}
	}
	HT_CHECK(bad == 0, "%u of %u offset/length cases failed", bad, cases);
	/* starts x bases x payload lengths 0..max, per ring size and mode */
	HT_CHECK_EQ(cases, 3 * (8 * 25 + 8 * 17 + 16 * 57 + 16 * 49));
}

/* A reservation that straddles the end comes back as two pieces, and
 * rb_handle_write lays bytes across the seam at any offset. */
HT_TEST(straddling_reservation_in_two_pieces)
{
	struct ring r;
	struct rb_handle h;
	uint8_t payload[40];

	ring_open(&r, 128, 0, 0, 0);
	ring_seek(&r, 112);
	if (rb_reserve(&r.rb, T_USER, 9, 8 + sizeof(payload), &h) != RB_OK) {
		HT_CHECK(false, "reserve 48 bytes in a 128-byte ring");
		ring_close(&r);
		return;
	}
	HT_CHECK(h.ptr[0] == r.data + 120, "first piece starts after the header at 112");
	HT_CHECK_EQ(h.len[0], 8);
	HT_CHECK(h.ptr[1] == r.data, "second piece starts at the beginning");
	HT_CHECK_EQ(h.len[1], 32);
	HT_CHECK_EQ(h.pos, 112);
	make_payload(payload, 9, sizeof(payload));
	/* Byte by byte, in reverse, so every offset crosses the piece logic. */
	for (size_t i = sizeof(payload); i-- > 0;)
		rb_handle_write(&h, i, payload + i, 1);
	HT_CHECK_EQ(r.ctl.data_head, 112); /* nothing visible before commit */
	HT_CHECK_EQ(rb_commit(&h), RB_OK); /* 48 bytes < watermark 64 */
	HT_CHECK_EQ(r.ctl.data_head, 160);
	HT_CHECK(get_user(&r, 9, sizeof(payload)), "straddling record intact");
	/* Writes past the reservation are clipped, not spilled into the ring. */
	ring_seek(&r, 120);
	memset(r.data, FILL, 128);
	HT_CHECK_EQ(rb_reserve(&r.rb, T_USER, 1, 8 + 4, &h), RB_OK);
	rb_handle_write(&h, 2, payload, 10);
	HT_CHECK_EQ(r.data[4], 0); /* header at 120, payload 0..3, zeroed pad 4..7 */
	HT_CHECK_EQ(r.data[7], 0);
	HT_CHECK_EQ(r.data[2], payload[0]);
	HT_CHECK_EQ(r.data[3], payload[1]);
	HT_CHECK_EQ(r.data[8], FILL);
	rb_commit(&h);
	ring_close(&r);
}

/* A consumer that lags: N records dropped become one LOST(N) record ahead
 * of the next record that fits, and the records around it are intact. */
HT_TEST(lost_exact_under_lagging_consumer)
{
	struct ring r;
	uint64_t seq = 0;
	unsigned fit = 0;

	ring_open(&r, 256, 0, 0, 42);
	/* 40-byte records: 6 fit (240 bytes), the 7th does not. */
	while (put(&r, seq, 32) >= 0) {
		seq++;
		fit++;
	}
	HT_CHECK_EQ(fit, 6);
	HT_CHECK_EQ(r.ctl.lost, 1);
	for (unsigned i = 0; i < 99; i++)
		HT_CHECK_EQ(put(&r, ++seq, 32), (uint64_t)RB_ENOSPC);
	HT_CHECK_EQ(r.ctl.lost, 100);
	HT_CHECK_EQ(r.ctl.data_head, 240);
	/* Consuming one record frees 40 bytes: 56 free < LOST 24 + 40, so the
	 * next record is still dropped (both or neither). */
	HT_CHECK(get_user(&r, 0, 32), "oldest record");
	HT_CHECK_EQ(put(&r, ++seq, 32), (uint64_t)RB_ENOSPC);
	HT_CHECK_EQ(r.ctl.lost, 101);
	HT_CHECK_EQ(r.ctl.data_head, 240);
	HT_CHECK(get_user(&r, 1, 32), "second record");
	/* 96 free >= 64: LOST(101) and the record go in together. */
	HT_CHECK_EQ(put(&r, ++seq, 32), RB_OK);
	HT_CHECK_EQ(r.ctl.data_head, 240 + 24 + 40);
	HT_CHECK_EQ(put(&r, ++seq, 32), (uint64_t)RB_ENOSPC); /* 32 free */
	for (uint64_t s = 2; s < 6; s++)
		HT_CHECK(get_user(&r, s, 32), "record %llu before the loss", (unsigned long long)s);
	HT_CHECK(get_lost(&r, 101, RB_LOST_DROPPED, 42), "one LOST record with all 101");
	HT_CHECK(get_user(&r, seq - 1, 32), "first record after the loss");
	HT_CHECK(empty(&r), "nothing else");
	/* The one drop since is reported with the next record, then no more. */
	HT_CHECK_EQ(put(&r, ++seq, 32), RB_OK);
	HT_CHECK_EQ(put(&r, ++seq, 32), RB_OK);
	HT_CHECK(get_lost(&r, 1, RB_LOST_DROPPED, 42), "LOST(1)");
	HT_CHECK(get_user(&r, seq - 1, 32), "record after LOST(1)");
	HT_CHECK(get_user(&r, seq, 32), "then a plain record");
	HT_CHECK(empty(&r), "drained");
	HT_CHECK_EQ(r.ctl.lost, 102);
	ring_close(&r);
}

/* Free space between "record fits" and "LOST + record fits", byte-exact:
 * with a pending loss, the record goes in only when both fit. */
HT_TEST(lost_and_record_reserved_together)
{
	for (uint64_t free_bytes = 0; free_bytes <= 128; free_bytes += 8) {
		struct ring r;
		uint64_t used = 256 - free_bytes;
		bool fits = free_bytes >= 24 + 40;

		ring_open(&r, 256, 0, 0, 3);
		ring_seek(&r, 1000); /* arbitrary, 8-aligned */
		/* Occupy `used` bytes with one-header filler records. */
		for (uint64_t i = 0; i < used / 8; i++)
			HT_CHECK(rb_write(&r.rb, T_USER, 0, NULL, 0) >= 0, "filler fits");
		HT_CHECK_EQ(r.ctl.data_head - r.ctl.data_tail, used);
		r.rb.lost_pending = 5; /* five earlier drops not yet reported */
		HT_CHECK_EQ(put(&r, 77, 32), fits ? RB_OK : (uint64_t)RB_ENOSPC);
		HT_CHECK_EQ(r.ctl.data_head - r.ctl.data_tail, used + (fits ? 64 : 0));
		HT_CHECK_EQ(r.rb.lost_pending, fits ? 0 : 6);
		for (uint64_t i = 0; i < used / 8; i++)
			HT_CHECK(get_user(&r, 0, 0), "filler");
		if (fits) {
			HT_CHECK(get_lost(&r, 5, RB_LOST_DROPPED, 3), "free %llu: LOST(5) first",
				 (unsigned long long)free_bytes);
			HT_CHECK(get_user(&r, 77, 32), "then the record");
		}
		HT_CHECK(empty(&r), "free %llu: nothing else", (unsigned long long)free_bytes);
		ring_close(&r);
	}
}

/* Overwrite mode with no reader: the reader later gets one LOST record with
 * exactly the number of overwritten records, then exactly the newest
 * records that lie wholly in the last data_size bytes. */
HT_TEST(overwrite_keeps_newest)
{
	struct ring r;
	uint64_t n = 1000, pos = 0, ends[1000];

	ring_open(&r, 512, RB_OVERWRITE, 0, 5);
	for (uint64_t s = 0; s < n; s++) {
		size_t plen = 8 + (s * 13) % 41;
		HT_CHECK(put(&r, s, plen) >= 0, "overwrite never drops");
		pos += ring_bytes(&r, plen);
		ends[s] = pos;
	}
	HT_CHECK_EQ(r.ctl.lost, 0);
	HT_CHECK_EQ(r.ctl.data_head, pos);
	/* The oldest survivor is the first record starting at or above head - 512. */
	uint64_t first = 0;
	while ((first == 0 ? 0 : ends[first - 1]) < pos - 512)
		first++;
	HT_CHECK(first > 900, "sanity: only the newest survive (first %llu)", (unsigned long long)first);
	HT_CHECK(get_lost(&r, first, RB_LOST_OVERWRITTEN, 5), "LOST(%llu) first", (unsigned long long)first);
	for (uint64_t s = first; s < n; s++)
		HT_CHECK(get_user(&r, s, 8 + (s * 13) % 41), "record %llu", (unsigned long long)s);
	HT_CHECK(empty(&r), "drained");
	HT_CHECK_EQ(r.rb.rd_overwritten, first);
	HT_CHECK_EQ(r.rb.rd_resyncs, 1);
	ring_close(&r);
}

/* A reader that keeps up sees no LOST; lapped mid-stream it reports exactly
 * what it missed and resumes with the newest. */
HT_TEST(overwrite_reader_lapped_midway)
{
	struct ring r;
	uint64_t s = 0;

	ring_open(&r, 256, RB_OVERWRITE, 0, 1);
	for (; s < 5; s++)
		HT_CHECK_EQ(put(&r, s, 24) >= 0, 1); /* 40 bytes each, 200 total */
	for (uint64_t i = 0; i < 3; i++)
		HT_CHECK(get_user(&r, i, 24), "keeping up: record %llu", (unsigned long long)i);
	/* Two unread (80 bytes); 10 more laps the reader: 480 + 80 > 256. */
	for (; s < 15; s++)
		put(&r, s, 24);
	/* Newest records wholly in the last 256 bytes: 256 / 40 = 6 -> 9..14. */
	HT_CHECK(get_lost(&r, 6, RB_LOST_OVERWRITTEN, 1), "records 3..8 overwritten");
	for (uint64_t i = 9; i < 15; i++)
		HT_CHECK(get_user(&r, i, 24), "record %llu", (unsigned long long)i);
	HT_CHECK(empty(&r), "drained");
	/* Keeping up again: no LOST. */
	put(&r, 15, 24);
	HT_CHECK(get_user(&r, 15, 24), "record 15, no LOST");
	HT_CHECK_EQ(r.rb.rd_overwritten, 6);
	ring_close(&r);
}

/* Overwrite-mode reader racing the producer, made deterministic: the hook
 * plays a producer on another CPU that writes while the reader is at a
 * chosen step. */
static struct lap_state {
	struct ring *r;
	int point;
	unsigned limit, fired, each;
	uint64_t next_seq;
} lap;

static void lap_hook(struct rb *rb, enum rb_hook_point p)
{
	if ((int)p != lap.point || lap.fired >= lap.limit)
		return;
	lap.fired++;
	for (unsigned i = 0; i < lap.each; i++)
		put(lap.r, lap.next_seq++, 24);
}

static void lap_start(struct ring *r, int point, unsigned limit, unsigned each, uint64_t next)
{
	lap = (struct lap_state){ r, point, limit, 0, each, next };
	rb_test_hook = lap_hook;
}

/* Lapped between copying a record and validating it: the copy is refused
 * (it may be torn), the reader resynchronises and counts exactly. */
HT_TEST(overwrite_lapped_while_copying)
{
	struct ring r;

	ring_open(&r, 256, RB_OVERWRITE, 0, 2);
	for (uint64_t s = 0; s < 3; s++)
		put(&r, s, 24);                      /* 40 bytes each */
	lap_start(&r, RB_HOOK_READ_COPIED, 1, 7, 3); /* head 120 -> 400 */
	/* Intact after the lap: records starting at or above 400 - 256 = 144,
	 * i.e. 160.. = records 4..9. */
	HT_CHECK(get_lost(&r, 4, RB_LOST_OVERWRITTEN, 2), "copy of record 0 refused");
	rb_test_hook = NULL;
	HT_CHECK_EQ(lap.fired, 1);
	for (uint64_t s = 4; s < 10; s++)
		HT_CHECK(get_user(&r, s, 24), "record %llu", (unsigned long long)s);
	HT_CHECK(empty(&r), "drained");
	ring_close(&r);
}

/* Lapped while walking trailers backward: the walk meets a trailer the
 * producer has overwritten and stops on a boundary that is itself already
 * overwritten; the reader sees that and the next resync lands on the true
 * oldest record. */
HT_TEST(overwrite_lapped_during_resync_walk)
{
	struct ring r;

	ring_open(&r, 256, RB_OVERWRITE, 0, 2);
	for (uint64_t s = 0; s < 10; s++)
		put(&r, s, 24);                         /* head 400: lapped */
	lap_start(&r, RB_HOOK_RESYNC_LOADED, 1, 3, 10); /* -> 520 mid-walk */
	/* Intact at the end: starts >= 520 - 256 = 264, i.e. 280.. = 7..12. */
	HT_CHECK(get_lost(&r, 7, RB_LOST_OVERWRITTEN, 2), "LOST(7)");
	rb_test_hook = NULL;
	HT_CHECK_EQ(lap.fired, 1);
	for (uint64_t s = 7; s < 13; s++)
		HT_CHECK(get_user(&r, s, 24), "record %llu", (unsigned long long)s);
	HT_CHECK(empty(&r), "drained");
	HT_CHECK_EQ(r.rb.rd_resyncs, 2);
	ring_close(&r);
}

/* A producer that laps the reader again on every copy: from the third
 * resync the reader keeps half a ring of slack and gets going, instead of
 * chasing the oldest record forever. */
HT_TEST(overwrite_reader_makes_progress)
{
	struct ring r;

	ring_open(&r, 256, RB_OVERWRITE, 0, 2);
	for (uint64_t s = 0; s < 10; s++)
		put(&r, s, 24);
	lap_start(&r, RB_HOOK_READ_COPIED, 50, 1, 10); /* one record per copy */
	/* Resyncs: floor 144 (record 4), lapped -> 184 (record 5), lapped ->
	 * 224 + 128 slack = 352 (record 9), which survives the next record. */
	HT_CHECK(get_lost(&r, 9, RB_LOST_OVERWRITTEN, 2), "LOST(9)");
	HT_CHECK_EQ(r.rb.rd_resyncs, 3);
	for (uint64_t s = 9; s < 60; s++)
		HT_CHECK(get_user(&r, s, 24), "record %llu", (unsigned long long)s);
	rb_test_hook = NULL;
	HT_CHECK_EQ(lap.fired, 50);
	HT_CHECK(empty(&r), "drained");
	HT_CHECK_EQ(r.rb.rd_overwritten, 9);
	ring_close(&r);
}

/* rb_peek is idempotent; a too-small buffer leaves the record in place for
 * a retry, or rb_consume skips it; a broken header is reported. */
HT_TEST(peek_consume_and_errors)
{
	for (unsigned mode = 0; mode < 2; mode++) {
		struct ring r;
		uint8_t a[64], b[64];
		ring_open(&r, 256, mode ? RB_OVERWRITE : 0, 0, 0);
		put(&r, 1, 20);
		put(&r, 2, 20);
		HT_CHECK_EQ(rb_peek(&r.rb, a, sizeof(a)), 32);
		HT_CHECK_EQ(rb_peek(&r.rb, b, sizeof(b)), 32);
		HT_CHECK(memcmp(a, b, 32) == 0, "peek twice: same record");
		HT_CHECK_EQ(rb_peek(&r.rb, a, 31), (uint64_t)RB_E2BIG);
		HT_CHECK(get_user(&r, 1, 20), "E2BIG did not consume");
		HT_CHECK_EQ(rb_peek(&r.rb, a, 8), (uint64_t)RB_E2BIG);
		rb_consume(&r.rb); /* skip record 2 */
		HT_CHECK(empty(&r), "skipped");
		put(&r, 3, 20);
		/* Record 3's size field (header bytes 6..7) says 3: not a record. */
		r.data[(r.ctl.data_tail & 255) + 6] = 3;
		r.data[(r.ctl.data_tail & 255) + 7] = 0;
		HT_CHECK_EQ(rb_peek(&r.rb, a, sizeof(a)), (uint64_t)RB_ECORRUPT);
		ring_close(&r);
	}
}

/* The fill level crossing the watermark is signalled once per crossing. */
HT_TEST(watermark_crossing)
{
	struct ring r;
	int ret[12];

	ring_open(&r, 256, 0, 64, 0);
	for (int i = 0; i < 12; i++)
		ret[i] = put(&r, i, 8); /* 16 bytes each */
	for (int i = 0; i < 12; i++)
		HT_CHECK_EQ(ret[i], i == 3 ? RB_WAKEUP : RB_OK); /* 64 bytes after the 4th */
	HT_CHECK_EQ(r.ctl.wakeups, 1);
	for (int i = 0; i < 9; i++) /* fill 192 -> 48 */
		get_user(&r, i, 8);
	HT_CHECK_EQ(put(&r, 12, 8), RB_WAKEUP); /* 48 -> 64 */
	HT_CHECK_EQ(put(&r, 13, 8), RB_OK);
	HT_CHECK_EQ(r.ctl.wakeups, 2);
	ring_close(&r);
	/* Default watermark: half the ring; one big jump also counts. */
	ring_open(&r, 256, RB_OVERWRITE, 0, 0);
	HT_CHECK_EQ(put(&r, 0, 100), RB_OK);   /* 120 bytes */
	HT_CHECK_EQ(put(&r, 1, 8), RB_WAKEUP); /* 144 >= 128 */
	HT_CHECK_EQ(put(&r, 2, 8), RB_OK);
	ring_close(&r);
}

/* ---- Nested writers -------------------------------------------------- */

/* The hook stands for a PMI: at the chosen point of the writer running at
 * depth d it runs one more complete writer (depth d + 1). At every hook
 * call it also checks the two safety properties: data_head never goes
 * backwards, and every byte below data_head belongs to a complete record. */
static struct nest_state {
	struct ring *r;
	int levels;   /* writers in the case, outer included */
	int point[3]; /* per depth: where the next writer interrupts it */
	bool fired[3];
	int depth; /* depth of the writer currently running */
	uint64_t last_head;
	unsigned violations;
	unsigned calls;
	size_t plen[3];
} ns;

static bool published_intact(struct ring *r)
{
	uint64_t pos = r->ctl.data_tail, head = r->ctl.data_head;
	bool ow = r->rb.flags & RB_OVERWRITE;

	while (pos != head) {
		struct rb_header hdr;
		uint8_t buf[512];
		memcpy(&hdr, r->data + (pos & r->rb.mask), 8);
		if (hdr.size < 8 || (hdr.size & 7) || hdr.size > head - pos || hdr.size > sizeof(buf))
			return false;
		for (unsigned i = 0; i < hdr.size; i++)
			buf[i] = r->data[(pos + i) & r->rb.mask];
		if (hdr.type == T_USER) {
			if (hdr.misc > 2 || hdr.size != ring_bytes(r, ns.plen[hdr.misc]) ||
			    !payload_ok(buf + 8, hdr.misc, ns.plen[hdr.misc]))
				return false;
		} else if (hdr.type != RB_RECORD_LOST) {
			return false;
		}
		if (ow) {
			uint64_t t;
			memcpy(&t, buf + hdr.size - 8, 8);
			if ((t & 0xffff) != hdr.size)
				return false;
		}
		pos += hdr.size;
	}
	return true;
}

static void nest_hook(struct rb *rb, enum rb_hook_point p)
{
	int d = ns.depth;
	uint64_t head = ns.r->ctl.data_head;

	ns.calls++;
	if (head - ns.last_head > (uint64_t)1 << 62 || !published_intact(ns.r)) {
		ns.violations++;
		printf("    # at point %d depth %d: head %llu (last %llu), intact %d\n", p, d,
		       (unsigned long long)head, (unsigned long long)ns.last_head, published_intact(ns.r));
	}
	ns.last_head = head;
	if (d + 1 < ns.levels && !ns.fired[d] && ns.point[d] == (int)p) {
		ns.fired[d] = true;
		ns.depth++;
		put(ns.r, (uint64_t)d + 1, ns.plen[d + 1]);
		ns.depth--;
	}
}

/* Points before the writer's reservation: a writer nested there lands in
 * the ring before the writer it interrupted; anywhere else, after. */
static bool before_reservation(int p)
{
	return p == RB_HOOK_RESERVE_ENTERED || p == RB_HOOK_LOST_CLAIMED || p == RB_HOOK_HEAD_READ;
}

/* Expected ring order of the writers' ids for one case. */
static int expected_order(int *order)
{
	int n = 0;

	/* Depth 2 relative to depth 1, then that pair relative to depth 0. */
	int inner[2], ni = 0;
	if (ns.fired[0]) {
		if (ns.fired[1] && before_reservation(ns.point[1]))
			inner[ni++] = 2;
		inner[ni++] = 1;
		if (ns.fired[1] && !before_reservation(ns.point[1]))
			inner[ni++] = 2;
	}
	if (ns.fired[0] && before_reservation(ns.point[0]))
		for (int i = 0; i < ni; i++)
			order[n++] = inner[i];
	order[n++] = 0;
	if (!(ns.fired[0] && before_reservation(ns.point[0])))
		for (int i = 0; i < ni; i++)
			order[n++] = inner[i];
	return n;
}

/* One case: outer writer (id 0) with nested writers at the given points.
 * pending_lost > 0 first leaves that many drops unreported. Returns the
 * number of failed expectations. */
static unsigned nest_case(uint32_t flags, int levels, int p0, int p1, uint64_t pending_lost, bool window)
{
	struct ring r;
	uint8_t buf[512];
	int order[3], n;
	unsigned bad = 0;
	uint64_t lost_seen = 0;
	int got[3], ngot = 0, lost_before = -1;

	ring_open(&r, 512, flags, 0, 9);
	ring_seek(&r, 512 - 24); /* so most cases straddle the end */
	r.rb.lost_pending = pending_lost;
	memset(&ns, 0, sizeof(ns));
	ns.r = &r;
	ns.levels = levels;
	ns.point[0] = p0;
	ns.point[1] = p1;
	ns.plen[0] = 40;
	ns.plen[1] = 16;
	ns.plen[2] = 3;
	ns.last_head = r.ctl.data_head;
	rb_test_hook = nest_hook;
	if (window) {
		/* The caller-level window: a PMI between reserve and commit,
		 * while the outer record's payload is still unwritten. */
		struct rb_handle h;
		uint8_t pay[40];
		ns.fired[0] = true;
		rb_test_hook = NULL;
		if (rb_reserve(&r.rb, T_USER, 0, 8 + 40, &h) != RB_OK)
			bad++;
		rb_test_hook = nest_hook;
		ns.depth = 1;
		put(&r, 1, ns.plen[1]);
		ns.depth = 0;
		make_payload(pay, 0, 40);
		rb_handle_write(&h, 0, pay, 40);
		rb_commit(&h);
	} else {
		put(&r, 0, ns.plen[0]);
	}
	rb_test_hook = NULL;
	bad += ns.violations;
	if (r.ctl.data_head != r.ctl.write_head)
		bad++, printf("    # head %llu left unpublished below %llu\n",
			      (unsigned long long)r.ctl.data_head, (unsigned long long)r.ctl.write_head);

	while ((n = rb_read(&r.rb, buf, sizeof(buf))) > 0) {
		struct rb_header hdr;
		memcpy(&hdr, buf, 8);
		if (hdr.type == RB_RECORD_LOST) {
			struct rb_lost l;
			memcpy(&l, buf, sizeof(l));
			lost_seen += l.lost;
			if (l.lost == 0 || lost_before >= 0)
				bad++, printf("    # extra or empty LOST(%llu)\n",
					      (unsigned long long)l.lost);
			lost_before = ngot;
			continue;
		}
		if (ngot == 3 || hdr.misc > 2 || !payload_ok(buf + 8, hdr.misc, ns.plen[hdr.misc]))
			bad++, printf("    # bad record misc %u\n", hdr.misc);
		else
			got[ngot++] = hdr.misc;
	}
	if (n != 0)
		bad++;
	if (lost_seen != pending_lost)
		bad++, printf("    # LOST total %llu, expected %llu\n", (unsigned long long)lost_seen,
			      (unsigned long long)pending_lost);
	n = window ? 2 : expected_order(order);
	if (window)
		order[0] = 0, order[1] = 1;
	if (ngot != n || memcmp(got, order, sizeof(int) * (size_t)n) != 0) {
		bad++;
		printf("    # order:");
		for (int i = 0; i < ngot; i++)
			printf(" %d", got[i]);
		printf(" expected:");
		for (int i = 0; i < n; i++)
			printf(" %d", order[i]);
		printf("\n");
	}
	/* The LOST record sits right before the writer that claimed the count:
	 * the first one to pass its claim point. */
	if (pending_lost && levels == 2 && ns.fired[0]) {
		int claimer_pos = p0 == RB_HOOK_RESERVE_ENTERED ? 0 : (before_reservation(p0) ? 1 : 0);
		if (lost_before != claimer_pos)
			bad++, printf("    # LOST before record #%d, expected #%d\n", lost_before,
				      claimer_pos);
	}
	if (bad)
		printf("    # case flags %u levels %d points %d/%d lost %llu window %d\n", flags, levels, p0,
		       p1, (unsigned long long)pending_lost, window);
	ring_close(&r);
	return bad;
}

HT_TEST(nested_writer_at_every_point)
{
	unsigned bad = 0, cases = 0, fired = 0;

	for (unsigned mode = 0; mode < 2; mode++) {
		uint32_t flags = mode ? RB_OVERWRITE : 0;
		for (int p = 0; p < RB_HOOK_PRODUCER_POINTS; p++) {
			bad += nest_case(flags, 2, p, -1, 0, false);
			fired += ns.fired[0];
			cases++;
		}
		bad += nest_case(flags, 2, -1, -1, 0, true);
		cases++;
	}
	HT_CHECK(bad == 0, "%u failures in %u cases", bad, cases);
	/* Every point but DROPPED lies on the path of a write that fits. */
	HT_CHECK_EQ(fired, 2 * (RB_HOOK_PRODUCER_POINTS - 1));
}

HT_TEST(nested_writers_two_deep_every_pair)
{
	unsigned bad = 0, both = 0;

	for (unsigned mode = 0; mode < 2; mode++)
		for (int p0 = 0; p0 < RB_HOOK_PRODUCER_POINTS; p0++)
			for (int p1 = 0; p1 < RB_HOOK_PRODUCER_POINTS; p1++) {
				bad += nest_case(mode ? RB_OVERWRITE : 0, 3, p0, p1, 0, false);
				both += ns.fired[0] && ns.fired[1];
			}
	HT_CHECK(bad == 0, "%u failures", bad);
	/* A writer nested at its parent's NEST_DROPPED is outermost itself, so
	 * its publish points fire too: 8 outer points x 5 inner + 1 x 3 more. */
	HT_CHECK_EQ(both, 2 * (8 * 5 + 3));
}

HT_TEST(nested_writer_with_pending_lost)
{
	unsigned bad = 0;

	for (int p = 0; p < RB_HOOK_PRODUCER_POINTS; p++)
		bad += nest_case(0, 2, p, -1, 7, false);
	for (int p0 = 0; p0 < RB_HOOK_PRODUCER_POINTS; p0++)
		for (int p1 = 0; p1 < RB_HOOK_PRODUCER_POINTS; p1++)
			bad += nest_case(0, 3, p0, p1, 7, false);
	HT_CHECK(bad == 0, "%u failures", bad);
}

/* The outer writer is dropped after a nested writer took the last space:
 * the outer's exit publishes the nested record, and the drop is reported
 * with the next record. A writer nested at the drop itself fits (smaller)
 * and carries the outer's loss. */
static void drop_hook(struct rb *rb, enum rb_hook_point p)
{
	if (ns.depth == 0 && !ns.fired[0] && ns.point[0] == (int)p) {
		ns.fired[0] = true;
		ns.depth = 1;
		ns.violations += put(ns.r, 1, 16) != RB_OK;
		ns.depth = 0;
	}
}

HT_TEST(nested_writer_makes_outer_drop)
{
	struct ring r;

	for (int which = 0; which < 2; which++) {
		ring_open(&r, 256, 0, 0, 4);
		for (int i = 0; i < 5; i++) /* 5 x 40 = 200 used, 56 free */
			put(&r, 100 + i, 32);
		memset(&ns, 0, sizeof(ns));
		ns.r = &r;
		ns.point[0] = which ? RB_HOOK_DROPPED : RB_HOOK_HEAD_READ;
		rb_test_hook = drop_hook;
		if (which) {
			/* 64-byte record does not fit in 56; the nested 24-byte one does,
			 * with the LOST(1) for the outer: 24 + 24 = 48 <= 56. */
			HT_CHECK_EQ(put(&r, 0, 56), (uint64_t)RB_ENOSPC);
		} else {
			/* 40 fits in 56 until the nested 24 takes it: 32 left. */
			HT_CHECK_EQ(put(&r, 0, 32), (uint64_t)RB_ENOSPC);
		}
		rb_test_hook = NULL;
		HT_CHECK(ns.fired[0] && ns.violations == 0, "nested writer ran and fit");
		HT_CHECK_EQ(r.ctl.data_head, r.ctl.write_head);
		HT_CHECK_EQ(r.ctl.lost, 1);
		for (int i = 0; i < 5; i++)
			HT_CHECK(get_user(&r, 100 + i, 32), "old record");
		if (which)
			HT_CHECK(get_lost(&r, 1, RB_LOST_DROPPED, 4), "nested carries LOST(1)");
		HT_CHECK(get_user(&r, 1, 16), "nested record published by the outer's exit");
		HT_CHECK(empty(&r), "nothing else");
		if (!which) {
			put(&r, 2, 8);
			HT_CHECK(get_lost(&r, 1, RB_LOST_DROPPED, 4), "outer's drop reported next");
			HT_CHECK(get_user(&r, 2, 8), "record after it");
		}
		ring_close(&r);
	}
}

/* ---- Two threads ----------------------------------------------------- */

#define STRESS_END (T_USER + 1)

struct stress {
	struct ring r;
	uint64_t records; /* the producer's attempts, each with its own seq */
	uint64_t dropped; /* RB_ENOSPC seen by the producer */
	uint64_t received, lost_reported, gaps, torn, order_errors, errors;
	uint64_t last_seq;
	int consumer_exited; /* so a broken ring fails the test instead of hanging it */
};

static size_t stress_len(uint64_t seq)
{
	return 8 + (seq * 7) % 57;
}

static void *stress_producer(void *arg)
{
	struct stress *st = arg;
	uint8_t buf[128];
	uint64_t seq = 0;

	/* Alternate paced phases (wait for the reader to drain half the ring:
	 * no loss) with flat-out phases (loss, or laps in overwrite mode). */
	for (; seq < st->records; seq++) {
		if ((seq / 4096) % 2 == 0)
			while (rb_fill(&st->r.rb) > st->r.size / 2 &&
			       !__atomic_load_n(&st->consumer_exited, __ATOMIC_RELAXED))
				sched_yield(); /* the host may have fewer CPUs than threads */
		if (put(&st->r, seq, stress_len(seq)) == RB_ENOSPC)
			st->dropped++;
	}
	/* An end marker that must get through, carrying any pending loss. */
	for (;; seq++) {
		make_payload(buf, seq, 8);
		int ret = rb_write(&st->r.rb, STRESS_END, 0, buf, 8);
		if (ret != RB_ENOSPC)
			break;
		st->dropped++;
	}
	st->last_seq = seq;
	return NULL;
}

static void *stress_consumer(void *arg)
{
	struct stress *st = arg;
	uint8_t buf[256];
	uint64_t expect = 0;

	for (;;) {
		struct rb_header hdr;
		uint64_t seq;
		int n = rb_read(&st->r.rb, buf, sizeof(buf));

		if (n == 0) {
			sched_yield();
			continue;
		}
		if (n < 0) {
			st->errors++;
			__atomic_store_n(&st->consumer_exited, 1, __ATOMIC_RELAXED);
			return NULL;
		}
		memcpy(&hdr, buf, 8);
		if (hdr.type == RB_RECORD_LOST) {
			struct rb_lost l;
			memcpy(&l, buf, sizeof(l));
			st->lost_reported += l.lost;
			expect += l.lost;
			continue;
		}
		memcpy(&seq, buf + 8, 8);
		if (seq != expect)
			st->order_errors++;
		if (hdr.type == STRESS_END)
			break;
		if (hdr.size != round8(8 + stress_len(seq)) || !payload_ok(buf + 8, seq, stress_len(seq)))
			st->torn++;
		st->received++;
		expect = seq + 1;
	}
	return NULL;
}

static void stress_run(struct stress *st, uint64_t ring_size, uint32_t flags, uint64_t records)
{
	pthread_t prod, cons;

	memset(st, 0, sizeof(*st));
	ring_open(&st->r, ring_size, flags, 0, 0);
	st->records = records;
	pthread_create(&cons, NULL, stress_consumer, st);
	pthread_create(&prod, NULL, stress_producer, st);
	pthread_join(prod, NULL);
	pthread_join(cons, NULL);
}

HT_TEST(two_thread_stress_non_overwrite)
{
	struct stress st;

	stress_run(&st, 4096, 0, 300000);
	HT_CHECK_EQ(st.errors, 0);
	HT_CHECK_EQ(st.order_errors, 0);
	HT_CHECK_EQ(st.torn, 0);
	/* Every producer attempt is either received or reported lost, once. */
	HT_CHECK_EQ(st.received + st.lost_reported, st.last_seq);
	HT_CHECK_EQ(st.lost_reported, st.dropped);
	HT_CHECK_EQ(st.r.ctl.lost, st.dropped);
	HT_CHECK(empty(&st.r), "drained");
	printf("    # %llu records, %llu dropped\n", (unsigned long long)st.last_seq,
	       (unsigned long long)st.dropped);
	ring_close(&st.r);
}

HT_TEST(two_thread_stress_overwrite)
{
	struct stress st;

	stress_run(&st, 4096, RB_OVERWRITE, 300000);
	HT_CHECK_EQ(st.errors, 0);
	HT_CHECK_EQ(st.order_errors, 0);
	HT_CHECK_EQ(st.torn, 0);
	HT_CHECK_EQ(st.dropped, 0);
	HT_CHECK_EQ(st.received + st.lost_reported, st.records);
	HT_CHECK_EQ(st.lost_reported, st.r.rb.rd_overwritten);
	printf("    # %llu records, %llu overwritten, %u resyncs\n", (unsigned long long)st.records,
	       (unsigned long long)st.lost_reported, st.r.rb.rd_resyncs);
	ring_close(&st.r);
}

/* ---- Drain encoding ---------------------------------------------------- */

/* The golden line is also decoded by tools/test_pmutest_samples.py, which
 * builds it independently with Python's struct module: both sides agree on
 * the layout in pmu/sample_record.h. */
#define GOLDEN_SAMPLE                                                      \
	"02000000010040000300000021000000efcdab89674523013412008000000000" \
	"a086010000000000010000000000000000000000000000002a00000000000000"

HT_TEST(sample_record_hex_golden)
{
	_Alignas(8) uint8_t raw[64] = { 0 };
	struct pmu_sample *smp = (struct pmu_sample *)raw;
	char hex[PMU_SAMPLE_HEX_MAX];
	char small[8];
	struct ring r;
	uint8_t buf[128];

	smp->hdr = (struct rb_header){ RB_RECORD_SAMPLE, PMU_SAMPLE_MISC_USER, (uint16_t)pmu_sample_size(1) };
	smp->cpu = 3;
	smp->idx = 33;
	smp->tsc = 0x0123456789abcdefULL;
	smp->rip = 0x80001234ULL;
	smp->period = 100000;
	smp->nr_values = 1;
	smp->values[0].idx = 0;
	smp->values[0].value = 42;
	HT_CHECK_EQ(pmu_sample_size(1), sizeof(raw));
	HT_CHECK_EQ(rb_record_to_hex(raw, smp->hdr.size, hex, sizeof(hex)), 128);
	HT_CHECK_STR(hex, GOLDEN_SAMPLE);
	HT_CHECK_EQ(rb_record_to_hex(raw, 4, small, sizeof(small)), 0); /* needs 9 */
	HT_CHECK_EQ(rb_record_to_hex(raw, 3, small, sizeof(small)), 6);
	HT_CHECK_STR(small, "020000");
	HT_CHECK_EQ(PMU_SAMPLE_HEX_MAX, 1137);

	/* Through a ring: what rb_read returns is what gets printed. */
	ring_open(&r, 256, 0, 0, 0);
	HT_CHECK_EQ(rb_write(&r.rb, RB_RECORD_SAMPLE, PMU_SAMPLE_MISC_USER, raw + 8, 56), RB_OK);
	HT_CHECK_EQ(rb_read(&r.rb, buf, sizeof(buf)), 64);
	HT_CHECK_EQ(rb_record_to_hex(buf, 64, hex, sizeof(hex)), 128);
	HT_CHECK_STR(hex, GOLDEN_SAMPLE);
	ring_close(&r);
}

HT_MAIN("ringbuf")
