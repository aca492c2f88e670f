/* Sample mode after the run: drain a CPU's ring as "# sample:" lines,
 * check each sample, print the CPU's summary and judge whether every
 * sample and every loss is accounted for. Pure: the host tests drive it
 * with rings the PMU model filled. */
#include "lib/printf.h"
#include "lib/string.h"
#include "modes/sample.h"
#include "pmu/sample_record.h"

struct sm_drain {
	const struct sample_mode_plan *p;
	const struct sample_mode_range *ranges;
	unsigned nranges;
	void (*line)(const char *);
	struct sample_mode_cpu *res;
	bool seen_out;
	char buf[SAMPLE_MODE_LINE_LEN];
};

/* pmu_sampling_drain() hands lines without the "# " (pmu/pmu.h); sample
 * mode's lines are whole. */
static void sm_line(void *ctx, const char *l)
{
	struct sm_drain *d = ctx;

	ksnprintf(d->buf, sizeof(d->buf), "# %s", l);
	d->line(d->buf);
}

static bool sm_period_known(const struct sample_mode_plan *p, uint64_t period)
{
	for (unsigned i = 0; i < p->nev; i++)
		if (p->attr[i].period && p->attr[i].period == period)
			return true;
	return false;
}

static void sm_visit(void *ctx, const struct pmu_sample *smp)
{
	struct sm_drain *d = ctx;
	struct sample_mode_cpu *r = d->res;
	bool in = false;

	for (unsigned i = 0; i < d->nranges && !in; i++)
		in = smp->rip >= d->ranges[i].lo && smp->rip < d->ranges[i].hi;
	if (in) {
		r->in_range++;
	} else if (!d->seen_out) {
		d->seen_out = true;
		r->first_out_rip = smp->rip;
	}
	r->precise += (smp->hdr.misc & PMU_SAMPLE_MISC_PRECISE) != 0;
	r->stacks += (smp->hdr.misc & PMU_SAMPLE_MISC_BRANCHES) != 0;
	/* The ring is per CPU and its records say whose they are: another
	 * CPU's sample here would mean a ring routed to the wrong CPU. */
	if (smp->cpu != r->cpu) {
		if (!r->bad_fields++)
			ksnprintf(r->bad_what, sizeof(r->bad_what), "a sample says cpu %u", smp->cpu);
	} else if (!sm_period_known(d->p, smp->period)) {
		if (!r->bad_fields++)
			ksnprintf(r->bad_what, sizeof(r->bad_what),
				  "a sample has period %llu, which no event asked for",
				  (unsigned long long)smp->period);
	}
}

uint64_t sample_mode_drain(struct pmu_sampling *s, const struct sample_mode_plan *p,
			   const struct sample_mode_range *ranges, unsigned nranges,
			   void (*line)(const char *), struct sample_mode_cpu *res)
{
	struct sm_drain d = { .p = p, .ranges = ranges, .nranges = nranges, .line = line, .res = res };

	return pmu_sampling_drain(s, line ? sm_line : NULL, &d, sm_visit, &d, &res->tally);
}

int sample_mode_format_range(const struct sample_mode_range *r, char *buf, size_t len)
{
	return ksnprintf(buf, len, "# sample-mode: workload rip range 0x%llx-0x%llx (%s)",
			 (unsigned long long)r->lo, (unsigned long long)r->hi, r->what ? r->what : "?");
}

int sample_mode_format_summary(const struct sample_mode_cpu *res, const struct sample_mode_plan *p,
			       bool ranges_known, char *buf, size_t len)
{
	char periods[128] = "", tail[160] = "";
	size_t used = 0;
	int n = 0;

	for (unsigned i = 0; i < p->nev && used < sizeof(periods); i++)
		if (p->attr[i].period)
			used += (size_t)ksnprintf(periods + used, sizeof(periods) - used, "%s%llu",
						  n++ ? "," : "", (unsigned long long)p->attr[i].period);
	/* overwrite=1: the reader's LOST records count what the producer
	 * overwrote; overwrite=0: the ring counts every drop, including those
	 * after the ring filled that no LOST record could carry. */
	uint64_t lost = p->overwrite ? res->tally.lost : res->ring_lost;
	used = 0;
	if (ranges_known)
		used += (size_t)ksnprintf(tail, sizeof(tail), ", %llu in workload range",
					  (unsigned long long)res->in_range);
	if (res->precise && used < sizeof(tail))
		used += (size_t)ksnprintf(tail + used, sizeof(tail) - used, ", %llu precise",
					  (unsigned long long)res->precise);
	if (res->stacks && used < sizeof(tail))
		used += (size_t)ksnprintf(tail + used, sizeof(tail) - used, ", %llu with branch stacks",
					  (unsigned long long)res->stacks);
	if (res->spurious && used < sizeof(tail))
		ksnprintf(tail + used, sizeof(tail) - used, ", %llu spurious PMIs",
			  (unsigned long long)res->spurious);
	return ksnprintf(buf, len, "# sample-mode: cpu %u: %llu samples, %llu lost, %llu PMIs, period %s%s",
			 res->cpu, (unsigned long long)res->tally.samples, (unsigned long long)lost,
			 (unsigned long long)res->pmis, periods, tail);
}

#define U(x) ((unsigned long long)(x))

int sample_mode_judge(const struct sample_mode_cpu *r, bool overwrite, bool ranges_known, char *why,
		      size_t len)
{
	const struct pmu_sampling_tally *t = &r->tally;

	if (why && len)
		why[0] = '\0';
	if (t->bad)
		return kerrf(why, len, MODE_E_RECORDS, "cpu %u: %llu unreadable records in the ring", r->cpu,
			     U(t->bad));
	if (r->bad_fields)
		return kerrf(why, len, MODE_E_RECORDS, "cpu %u: %llu samples with wrong fields; first: %s",
			     r->cpu, U(r->bad_fields), r->bad_what);
	if (overwrite) {
		if (r->handler_lost || r->ring_lost)
			return kerrf(
				why, len, MODE_E_RECORDS,
				"cpu %u: overwrite ring dropped samples (handler %llu, ring %llu): it never should",
				r->cpu, U(r->handler_lost), U(r->ring_lost));
		if (t->samples + t->lost != r->written)
			return kerrf(
				why, len, MODE_E_RECORDS,
				"cpu %u: drained %llu samples + %llu overwritten != %llu written by the handler",
				r->cpu, U(t->samples), U(t->lost), U(r->written));
		if (r->written != r->overflows)
			return kerrf(
				why, len, MODE_E_RECORDS,
				"cpu %u: %llu samples written for %llu overflows of the sampling counters",
				r->cpu, U(r->written), U(r->overflows));
	} else {
		if (t->samples != r->written)
			return kerrf(why, len, MODE_E_RECORDS,
				     "cpu %u: drained %llu samples, the handler wrote %llu", r->cpu,
				     U(t->samples), U(r->written));
		if (r->written + r->handler_lost != r->overflows)
			return kerrf(
				why, len, MODE_E_RECORDS,
				"cpu %u: %llu written + %llu lost != %llu overflows of the sampling counters",
				r->cpu, U(r->written), U(r->handler_lost), U(r->overflows));
		if (r->ring_lost != r->handler_lost)
			return kerrf(why, len, MODE_E_RECORDS,
				     "cpu %u: the ring counted %llu drops, the handler %llu", r->cpu,
				     U(r->ring_lost), U(r->handler_lost));
		if (t->lost > r->ring_lost)
			return kerrf(why, len, MODE_E_RECORDS,
				     "cpu %u: LOST records carry %llu, more than the %llu the ring dropped",
				     r->cpu, U(t->lost), U(r->ring_lost));
	}
	if (ranges_known && t->samples >= SAMPLE_MODE_RIP_MIN_SAMPLES &&
	    r->in_range * 100 < t->samples * SAMPLE_MODE_RIP_MIN_PERCENT)
		return kerrf(
			why, len, MODE_E_RIP,
			"cpu %u: %llu of %llu sample RIPs in the workload's code, expected at least %u%%; first outside: %#llx",
			r->cpu, U(r->in_range), U(t->samples), SAMPLE_MODE_RIP_MIN_PERCENT,
			U(r->first_out_rip));
	return MODE_OK;
}
