/* Sample mode's options, checked before any CPU is touched: the event list
 * (periods included), workload, duration and ring size, and the test
 * budget they need. Pure, so the host tests build exactly this file; the
 * CPU list, which needs the CPUs online, is the kernel side's. */
#include "lib/cpulist.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "modes/sample.h"
#include "modes/workloads.h"

/* The example every "needs a period" message gives. */
#define SM_PERIOD_EXAMPLE "cycles/period=10000000/ or cpu/event=0x3c,umask=0,period=10000000/"

/* The period=N list of "NAME/period=N/": perf accepts terms after a named
 * event; the driver's parser takes them only inside cpu/.../, so this form
 * is read here and the rest handed to pmu_event_parse(). */
static int parse_period_terms(const char *ev, const char *t, const char *close, uint64_t *period,
			      enum pmu_sampling_branches *branches, char *err, size_t errlen)
{
	bool seen = false;

	if (t == close)
		return kerrf(err, errlen, PMU_E_INVAL,
			     "'%.*s': empty term list between the slashes (NAME/period=N/)",
			     kshown(strlen(ev)), ev);
	while (t <= close) {
		const char *e = t;
		while (e < close && *e != ',')
			e++;
		size_t len = (size_t)(e - t);
		bool any = len == 8 && strncmp(t, "branches", 8) == 0;
		if (any || (len == 9 && strncmp(t, "callstack", 9) == 0)) {
			enum pmu_sampling_branches want = any ? PMU_SAMPLING_BRANCHES_ANY
							      : PMU_SAMPLING_BRANCHES_USER_CALLSTACK;
			if (!branches)
				return kerrf(err, errlen, PMU_E_INVAL, "term '%.*s' is not taken here",
					     kshown(len), t);
			if (*branches != PMU_SAMPLING_BRANCHES_NONE && *branches != want)
				return kerrf(
					err, errlen, PMU_E_INVAL,
					"term '%.*s': the LBRs keep either the last branches or a call stack",
					kshown(len), t);
			*branches = want;
			t = e + 1;
			continue;
		}
		if (len < 7 || strncmp(t, "period=", 7) != 0)
			return kerrf(
				err, errlen, PMU_E_INVAL,
				"term '%.*s' is not supported after a named or raw event (only period=N, branches and callstack; other terms need cpu/event=..,umask=..,term/)",
				kshown(len), t);
		if (seen)
			return kerrf(err, errlen, PMU_E_INVAL, "duplicate term 'period'");
		seen = true;
		if (parse_u64(t + 7, len - 7, period) != PARSE_OK || *period > (~0ull >> 1))
			return kerrf(err, errlen, PMU_E_INVAL,
				     "term '%.*s': '%.*s' is not a number in 1..%#llx (decimal or 0x hex)",
				     kshown(len), t, kshown(len - 7), t + 7, ~0ull >> 1);
		if (*period == 0)
			return kerrf(
				err, errlen, PMU_E_INVAL,
				"term 'period=0' samples nothing (leave the period out to only count the event)");
		t = e + 1;
	}
	return PMU_OK;
}

/* perf's precise modifier: every 'p' of the modifier group after the
 * event's last ':' (":p", ":pp", ":up") is taken out of s into out. */
static bool strip_precise(const char *s, char *out, size_t outlen)
{
	const char *colon = strrchr(s, ':'), *slash = strrchr(s, '/');
	size_t n = 0;
	bool found = false;

	for (const char *c = s; *c && n + 1 < outlen; c++) {
		if (colon && c > colon && (!slash || colon > slash) && *c == 'p') {
			found = true;
			continue;
		}
		out[n++] = *c;
	}
	out[n] = '\0';
	/* ":p" alone leaves a ':' with nothing after it. */
	if (n && out[n - 1] == ':')
		out[--n] = '\0';
	return found;
}

int sample_mode_parse_event(const char *s, struct pmu_event_attr *attr, char *err, size_t errlen)
{
	return sample_mode_parse_event_hw(s, attr, NULL, NULL, err, errlen);
}

int sample_mode_parse_event_hw(const char *s0, struct pmu_event_attr *attr, bool *precise,
			       enum pmu_sampling_branches *branches, char *err, size_t errlen)
{
	char base[MONITOR_EVENT_LEN], stripped[MONITOR_EVENT_LEN];
	struct pmu_event_attr a;
	uint64_t period = 0;
	const char *s = s0;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!s || !*s)
		return kerrf(err, errlen, PMU_E_INVAL, "empty event string");
	if (strlen(s) < sizeof(stripped) && strip_precise(s, stripped, sizeof(stripped))) {
		if (!precise)
			return kerrf(err, errlen, PMU_E_INVAL,
				     "'%.*s': the precise modifier 'p' is not taken here", kshown(strlen(s)),
				     s);
		*precise = true;
		s = stripped;
	}
	const char *open = strchr(s, '/');
	if (!open || strncmp(s, "cpu/", 4) == 0)
		return pmu_event_parse(s, attr, err, errlen);
	const char *close = strchr(open + 1, '/');
	if (!close)
		return kerrf(err, errlen, PMU_E_INVAL, "missing closing '/' in '%.*s'", kshown(strlen(s)), s);
	/* The event and its modifiers, without the term list. */
	size_t nlen = (size_t)(open - s), mlen = strlen(close + 1);
	if (nlen == 0)
		return kerrf(err, errlen, PMU_E_INVAL, "'%.*s' has no event before the '/'",
			     kshown(strlen(s)), s);
	if (nlen + mlen >= sizeof(base))
		return kerrf(err, errlen, PMU_E_INVAL, "event '%.*s...' is too long", kshown(nlen), s);
	memcpy(base, s, nlen);
	memcpy(base + nlen, close + 1, mlen + 1);
	if ((rc = pmu_event_parse(base, &a, err, errlen)) != PMU_OK)
		return rc;
	if ((rc = parse_period_terms(s, open + 1, close, &period, branches, err, errlen)) != PMU_OK)
		return rc;
	a.period = period;
	*attr = a;
	return PMU_OK;
}

/* "'cycles', 'instructions'" for a message naming every event. */
static void name_list(const struct sample_mode_plan *p, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < p->nev && used < len; i++)
		used += (size_t)ksnprintf(buf + used, len - used, "%s'%s'", i ? ", " : "", p->names[i]);
}

static int plan_events(struct sample_mode_plan *p, const char *events, char *err, size_t errlen)
{
	char why[PMU_REASON_LEN];
	int n = monitor_split_events(events, p->names, SAMPLE_MODE_MAX_EVENTS, why, sizeof(why));

	if (n < 0)
		return kerrf(err, errlen, MODE_E_ARGS, "events=%.*s: %s", kshown(strlen(events)), events,
			     why);
	p->nev = (unsigned)n;
	p->precise = -1;
	for (unsigned i = 0; i < p->nev; i++) {
		struct pmu_event_attr *a = &p->attr[i];
		bool precise = false;
		if (sample_mode_parse_event_hw(p->names[i], a, &precise, &p->branches, why, sizeof(why)) !=
		    PMU_OK)
			return kerrf(err, errlen, MODE_E_ARGS, "event '%s': %s", p->names[i], why);
		if (precise && p->precise >= 0)
			return kerrf(err, errlen, MODE_E_ARGS,
				     "event '%s': only one event is sampled through PEBS (already '%s')",
				     p->names[i], p->names[p->precise]);
		if (precise && !a->period)
			return kerrf(err, errlen, MODE_E_ARGS,
				     "event '%s': precise (:p) sampling needs a period", p->names[i]);
		if (precise)
			p->precise = (int)i;
		if (!a->period && a->intr)
			return kerrf(
				err, errlen, MODE_E_ARGS,
				"event '%s': int without a period would interrupt at each counter wrap and write nothing (give period=N)",
				p->names[i]);
		if (!a->period)
			continue;
		if (a->period < SAMPLE_MODE_MIN_PERIOD)
			return kerrf(
				err, errlen, MODE_E_ARGS,
				"event '%s': period %llu is below %llu (each overflow costs a PMI; shorter periods measure the handler)",
				p->names[i], (unsigned long long)a->period, SAMPLE_MODE_MIN_PERIOD);
		/* Encoded with its INT/PMI bit from the start, so the events
		 * can be placed before sampling starts (pmu_sampling_start). */
		a->intr = true;
		p->nsampling++;
	}
	if (!p->nsampling) {
		char names[160];
		name_list(p, names, sizeof(names));
		if (p->nev == 1)
			return kerrf(
				err, errlen, MODE_E_ARGS,
				"event %s has no period: sample mode needs at least one, e.g. " SM_PERIOD_EXAMPLE,
				names);
		return kerrf(
			err, errlen, MODE_E_ARGS,
			"none of the events %s has a period: sample mode needs at least one, e.g. " SM_PERIOD_EXAMPLE,
			names);
	}
	return MODE_OK;
}

int sample_mode_plan(struct sample_mode_plan *p, const struct mode_opts *o, char *err, size_t errlen)
{
	const char *events = o->events && *o->events ? o->events : SAMPLE_MODE_DEFAULT_EVENTS;
	const char *wl = o->workload && *o->workload ? o->workload : "loop";
	int rc;

	memset(p, 0, sizeof(*p));
	if (err && errlen)
		err[0] = '\0';
	if ((rc = plan_events(p, events, err, errlen)) != MODE_OK)
		return rc;

	int kind = pmu_wl_find(wl);
	if (kind < 0)
		return kerrf(err, errlen, MODE_E_ARGS,
			     "unknown workload '%.*s' (known: loop chase branchy memcpy)", kshown(strlen(wl)),
			     wl);
	const struct pmu_wl_desc *d = &pmu_wl_descs[kind];
	p->wl_kind = (enum pmu_wl_kind)kind;
	p->wl_size = o->size ? o->size : d->default_size;
	if (p->wl_size < d->min_size || p->wl_size > d->max_size)
		return kerrf(err, errlen, MODE_E_ARGS, "workload %s: size %llu %s is outside %llu..%llu",
			     d->name, (unsigned long long)p->wl_size, d->size_unit,
			     (unsigned long long)d->min_size, (unsigned long long)d->max_size);

	p->duration_ms = o->duration_ms ? o->duration_ms : SAMPLE_MODE_DEFAULT_DURATION_MS;
	if (p->duration_ms > SAMPLE_MODE_MAX_DURATION_MS)
		return kerrf(err, errlen, MODE_E_ARGS, "duration %llu ms is longer than %llu ms",
			     (unsigned long long)p->duration_ms, SAMPLE_MODE_MAX_DURATION_MS);

	/* The ring's positions wrap by masking (lib/ringbuf.h). */
	p->ring_bytes = o->ring_bytes ? o->ring_bytes : SAMPLE_MODE_DEFAULT_RING;
	if (p->ring_bytes & (p->ring_bytes - 1))
		return kerrf(err, errlen, MODE_E_ARGS, "ring=%llu: the ring size must be a power of two",
			     (unsigned long long)p->ring_bytes);
	if (p->ring_bytes < SAMPLE_MODE_MIN_RING || p->ring_bytes > SAMPLE_MODE_MAX_RING)
		return kerrf(err, errlen, MODE_E_ARGS, "ring=%llu: outside %u..%u bytes per CPU",
			     (unsigned long long)p->ring_bytes, SAMPLE_MODE_MIN_RING, SAMPLE_MODE_MAX_RING);
	p->overwrite = o->overwrite;
	return MODE_OK;
}

uint64_t sample_mode_budget_ms(const struct mode_opts *o, unsigned ncpus)
{
	struct cpulist cpus;
	const char *list = o->cpus && *o->cpus ? o->cpus : "all";
	uint64_t duration = o->duration_ms ? o->duration_ms : SAMPLE_MODE_DEFAULT_DURATION_MS;
	uint64_t ring = o->ring_bytes ? o->ring_bytes : SAMPLE_MODE_DEFAULT_RING;
	unsigned n = ncpus;

	if (duration > SAMPLE_MODE_MAX_DURATION_MS)
		duration = SAMPLE_MODE_MAX_DURATION_MS;
	if (ring > SAMPLE_MODE_MAX_RING)
		ring = SAMPLE_MODE_MAX_RING;
	if (cpulist_parse(list, ncpus, &cpus, NULL, 0) == 0)
		n = cpulist_count(&cpus);
	/* A record of B bytes prints as 2B hex digits plus "# sample: " and a
	 * newline, about 2.3 characters per ring byte for 48-byte samples;
	 * 115200 baud 8N1 moves 11.52 characters per ms: ring / 5 ms per CPU,
	 * rounded up to ring / 4. Set-up gets what monitor mode gives it. */
	return duration + MODE_SETUP_BUDGET_MS + n * (ring / 4);
}
