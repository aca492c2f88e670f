/* Sampling sessions: a group of events on one CPU whose periodic overflows
 * land as sample records in that CPU's ring (lib/ringbuf.h), and the drain
 * of a ring to "# sample: <hex>" lines (pmu/sample_record.h). */
#include "lib/printf.h"
#include "lib/ringbuf.h"
#include "lib/string.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"
#include "pmu/sample_record.h"

/* The control area holds perf's "user page" (struct rb_control) and, in
 * its second half, the ring handle, so one caller buffer is the whole
 * ring. */
#define SAMPLING_HANDLE_OFFSET 2048u
_Static_assert(sizeof(struct rb_control) <= SAMPLING_HANDLE_OFFSET, "control fits the first half");
_Static_assert(sizeof(struct rb) <= PMU_SAMPLING_CTL_SIZE - SAMPLING_HANDLE_OFFSET,
	       "handle fits the second half");

/* Refuse with err, the reason in the session. */
#define fail(s, err, ...) kerrf((s)->reason, sizeof((s)->reason), (err), __VA_ARGS__)

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* The events must all be unplaced (start places them as a group) or all
 * hold counters on this CPU already. */
static int place_events(struct pmu_sampling *s, unsigned cpu)
{
	unsigned placed = 0;
	int err;

	for (unsigned i = 0; i < s->n; i++)
		placed += s->evs[i]->hw.idx >= 0;
	if (placed == 0) {
		if ((err = pmu_events_add(s->evs, s->n)) != PMU_OK)
			return fail(s, err, "placing %u events: %s", s->n, s->evs[0]->reason);
		s->owns_counters = true;
		return PMU_OK;
	}
	if (placed != s->n)
		return fail(s, PMU_E_STATE, "%u of %u events already hold counters: place all or none",
			    placed, s->n);
	for (unsigned i = 0; i < s->n; i++)
		if (s->evs[i]->hw.cpu != cpu)
			return fail(s, PMU_E_STATE, "event %u lives on CPU %u, session started on CPU %u", i,
				    s->evs[i]->hw.cpu, cpu);
	return PMU_OK;
}

int pmu_sampling_start(struct pmu_sampling *s, struct pmu_event *const *evs, unsigned n, void *mem,
		       size_t mem_size, bool overwrite)
{
	uint8_t *base = mem;
	uint64_t data_size = mem_size > PMU_SAMPLING_CTL_SIZE ? mem_size - PMU_SAMPLING_CTL_SIZE : 0;
	struct rb_params params = { .flags = overwrite ? RB_OVERWRITE : 0 };
	struct pmu_cpu *pc = pmu_this_cpu();
	unsigned sampling = 0;
	uint64_t values = 0;
	int err;

	memset(s, 0, sizeof(*s));
	s->cpu = pmu_hw_cpu();
	if (n == 0 || n > PMU_SAMPLING_MAX_EVENTS)
		return fail(s, PMU_E_INVAL, "%u events: a session takes 1..%u", n, PMU_SAMPLING_MAX_EVENTS);
	if (!pc || !pc->initialised)
		return fail(s, PMU_E_NOPMU, "PMU driver not initialised on CPU %u", s->cpu);
	if (!mem || ((uintptr_t)mem & 63) || !is_pow2(data_size) || data_size < RB_MIN_DATA_SIZE)
		return fail(
			s, PMU_E_INVAL,
			"ring memory of %zu bytes at %p: needs 64-byte alignment, %u bytes of control and a power-of-two data area of at least %u",
			mem_size, mem, PMU_SAMPLING_CTL_SIZE, RB_MIN_DATA_SIZE);
	for (unsigned i = 0; i < n; i++) {
		s->evs[i] = evs[i];
		if (!evs[i]->attr.period)
			continue;
		/* A placed event's config was encoded at placement: its INT
		 * bit cannot be added here without the backend. */
		if (evs[i]->hw.idx >= 0 && !evs[i]->attr.intr)
			return fail(
				s, PMU_E_INVAL,
				"event %u has a period but holds a counter encoded without its INT/PMI bit: set attr.intr before placing it",
				i);
		/* A period means a PMI at every overflow (INT / PMI bit). */
		evs[i]->attr.intr = true;
		sampling++;
	}
	s->n = n;
	if (!sampling)
		return fail(s, PMU_E_INVAL, "no event has a period: nothing would be sampled");

	s->rb = (struct rb *)(base + SAMPLING_HANDLE_OFFSET);
	params.id = s->cpu;
	if (rb_init(s->rb, (struct rb_control *)base, base + PMU_SAMPLING_CTL_SIZE, data_size, &params) !=
	    RB_OK)
		return fail(s, PMU_E_INVAL, "rb_init refused %llu data bytes", (unsigned long long)data_size);
	if ((err = place_events(s, s->cpu)) != PMU_OK)
		return err;
	/* Now that every event holds a counter, its width is known. */
	for (unsigned i = 0; i < n; i++)
		if (evs[i]->attr.period > pmu_width_mask(evs[i]->hw.width)) {
			err = fail(s, PMU_E_INVAL, "event %u: period %llu exceeds its %u-bit counter", i,
				   (unsigned long long)evs[i]->attr.period, evs[i]->hw.width);
			goto undo;
		}
	values = pmu_events_global_mask(s->evs, n);
	/* Route samples before the first counter can overflow. */
	pmu_pmi_set_ring(s->rb, values);
	if ((err = pmu_events_enable(s->evs, n)) != PMU_OK) {
		fail(s, err, "starting the group: %s", s->evs[0]->reason);
		pmu_pmi_set_ring(NULL, 0);
		goto undo;
	}
	s->running = true;
	return PMU_OK;
undo:
	if (s->owns_counters)
		pmu_events_del(s->evs, n);
	s->owns_counters = false;
	return err;
}

int pmu_sampling_stop(struct pmu_sampling *s)
{
	int err;

	if (!s->running)
		return fail(s, PMU_E_STATE, "session not running");
	if (pmu_hw_cpu() != s->cpu)
		return fail(s, PMU_E_STATE, "session lives on CPU %u, stopped on CPU %u", s->cpu,
			    pmu_hw_cpu());
	err = pmu_events_disable(s->evs, s->n);
	/* After the counters stopped no PMI can come for them. */
	pmu_pmi_set_ring(NULL, 0);
	if (s->owns_counters)
		pmu_events_del(s->evs, s->n);
	s->owns_counters = false;
	s->running = false;
	if (err)
		return fail(s, err, "stopping the group: %s", s->evs[0]->reason);
	return PMU_OK;
}

uint64_t pmu_sampling_drain(struct pmu_sampling *s, pmu_line_fn out, void *out_ctx, pmu_sample_fn visit,
			    void *visit_ctx, struct pmu_sampling_tally *t)
{
	union {
		struct rb_header hdr;
		struct rb_lost lost;
		struct pmu_sample smp;
		uint8_t bytes[PMU_SAMPLE_MAX_SIZE];
	} rec;
	/* "sample: " and the hex of the largest record. */
	char line[sizeof(PMU_SAMPLE_LINE_PREFIX) + PMU_SAMPLE_HEX_MAX];
	const size_t pre = sizeof(PMU_SAMPLE_LINE_PREFIX) - 1 - 2; /* without "# " */
	struct pmu_sampling_tally none;
	uint64_t taken = 0;

	if (!t)
		t = &none;
	if (!s->rb)
		return 0;
	/* The prefix without its "# ": the caller's line printer adds it. */
	memcpy(line, &PMU_SAMPLE_LINE_PREFIX[2], pre);
	for (;;) {
		int len = rb_read(s->rb, &rec, sizeof(rec));
		if (len == 0)
			break;
		if (len < 0 || (size_t)len < sizeof(struct rb_header)) {
			/* A corrupt or oversized record: the ring cannot be walked
			 * past it safely. */
			t->bad++;
			break;
		}
		taken++;
		if (out && rb_record_to_hex(&rec, (size_t)len, line + pre, sizeof(line) - pre))
			out(out_ctx, line);
		if (rec.hdr.type == RB_RECORD_SAMPLE && (size_t)len >= sizeof(struct pmu_sample) &&
		    rec.smp.nr_values <= PMU_SAMPLE_MAX_VALUES &&
		    (size_t)len >= pmu_sample_size(rec.smp.nr_values)) {
			t->samples++;
			if (visit)
				visit(visit_ctx, &rec.smp);
		} else if (rec.hdr.type == RB_RECORD_LOST && (size_t)len >= sizeof(struct rb_lost)) {
			t->lost_records++;
			t->lost += rec.lost.lost;
		} else {
			t->bad++;
		}
	}
	return taken;
}

uint64_t pmu_sampling_ring_lost(const struct pmu_sampling *s)
{
	const struct rb_control *ctl;

	if (!s->rb)
		return 0;
	ctl = (const struct rb_control *)((const uint8_t *)s->rb - SAMPLING_HANDLE_OFFSET);
	return __atomic_load_n(&ctl->lost, __ATOMIC_RELAXED);
}
