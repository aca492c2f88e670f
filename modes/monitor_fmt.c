/* The pure parts of monitor mode: splitting the event list, laying out
 * the table, the test budget. No hardware and no kernel services, so the
 * host tests build exactly this file. */
#include "lib/printf.h"
#include "lib/string.h"
#include "modes/monitor.h"

/* Every refusal is -1 with the message in err. */
#define split_err(err, errlen, ...) kerrf(err, errlen, -1, __VA_ARGS__)

int monitor_split_events(const char *s, char names[][MONITOR_EVENT_LEN], unsigned max, char *err,
			 size_t errlen)
{
	unsigned n = 0;

	if (err && errlen)
		err[0] = '\0';
	if (!s || !*s)
		return split_err(err, errlen, "empty event list");
	for (const char *item = s;;) {
		const char *p = item;
		bool in_slashes = false;

		/* A '/' opens a cpu/.../ term list and the next one closes it;
		 * only commas outside such a list separate events. */
		for (; *p && (in_slashes || *p != ','); p++)
			if (*p == '/')
				in_slashes = !in_slashes;
		size_t len = (size_t)(p - item);
		if (in_slashes)
			return split_err(err, errlen, "event '%.*s' has no closing '/'", kshown(len), item);
		if (len == 0)
			return split_err(err, errlen, "empty event at offset %u of the event list",
					 (unsigned)(item - s));
		if (n == max)
			return split_err(
				err, errlen,
				"more than %u events ('%.*s' is one too many; counters are not multiplexed)",
				max, kshown(len), item);
		if (len >= MONITOR_EVENT_LEN)
			return split_err(err, errlen, "event '%.*s...' is longer than %u characters",
					 kshown(len), item, MONITOR_EVENT_LEN - 1);
		memcpy(names[n], item, len);
		names[n][len] = '\0';
		n++;
		if (!*p)
			break;
		item = p + 1;
	}
	return (int)n;
}

void monitor_cols_init(struct monitor_cols *c, const char *const *names, unsigned n, const char *work)
{
	memset(c, 0, sizeof(*c));
	c->n = n > MONITOR_MAX_EVENTS ? MONITOR_MAX_EVENTS : n;
	for (unsigned i = 0; i < c->n; i++) {
		size_t len = strlen(names[i]);
		c->name[i] = names[i];
		c->width[i] = len > MONITOR_COL_MIN ? (unsigned)len : MONITOR_COL_MIN;
	}
	c->work = work;
	if (work) {
		size_t len = strlen(work);
		c->work_width = len > MONITOR_COL_MIN ? (unsigned)len : MONITOR_COL_MIN;
	}
}

/* Append with snprintf's contract: *len counts what the whole line needs,
 * the buffer keeps what fits. */
static void put(char *buf, size_t size, int *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t size, int *len, const char *fmt, ...)
{
	va_list ap;
	size_t off = (size_t)*len < size ? (size_t)*len : size;

	va_start(ap, fmt);
	*len += kvsnprintf(buf ? buf + off : NULL, size - off, fmt, ap);
	va_end(ap);
}

/* The time and cpu columns: 12 + 1 + 4 characters after "# ". */
int monitor_format_header(const struct monitor_cols *c, char *buf, size_t size)
{
	int len = 0;

	if (buf && size)
		buf[0] = '\0';
	put(buf, size, &len, "# %12s %4s", "time(ms)", "cpu");
	for (unsigned i = 0; i < c->n; i++)
		put(buf, size, &len, "  %*s", (int)c->width[i], c->name[i]);
	if (c->work)
		put(buf, size, &len, "  %*s", (int)c->work_width, c->work);
	return len;
}

int monitor_format_row(const struct monitor_cols *c, uint64_t t_us, unsigned cpu, const uint64_t *delta,
		       uint64_t work, char *buf, size_t size)
{
	int len = 0;

	if (buf && size)
		buf[0] = '\0';
	put(buf, size, &len, "# %10llu.%llu %4u", (unsigned long long)(t_us / 1000),
	    (unsigned long long)(t_us % 1000 / 100), cpu);
	for (unsigned i = 0; i < c->n; i++)
		put(buf, size, &len, "  %*llu", (int)c->width[i], (unsigned long long)delta[i]);
	if (c->work)
		put(buf, size, &len, "  %*llu", (int)c->work_width, (unsigned long long)work);
	return len;
}

uint64_t monitor_budget_ms(const struct mode_opts *o)
{
	return (o->duration_ms ? o->duration_ms : MONITOR_DEFAULT_DURATION_MS) + MODE_SETUP_BUDGET_MS;
}
