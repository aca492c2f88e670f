/* What the user asks for: attributes built from a name or raw numbers, and
 * event strings in perf's syntax (named architectural events, raw "rUUEE"
 * configs and "cpu/term,term=value/" lists, each with optional ":u"/":k"
 * modifiers). Errors name the offending token; nothing is assumed about the
 * input's length or content beyond NUL termination. */
#include "arch/x86/msr.h"
#include "lib/bits.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/pmu_internal.h"

struct parse {
	char *err;
	size_t errlen;
};

void pmu_attr_raw(struct pmu_event_attr *attr, uint16_t event, uint8_t umask)
{
	memset(attr, 0, sizeof(*attr));
	attr->event = event;
	attr->umask = umask;
	attr->usr = attr->os = true;
	attr->arch = PMU_ARCH_NONE;
}

void pmu_attr_arch(struct pmu_event_attr *attr, enum pmu_arch_event e)
{
	const struct pmu_arch_event_desc *d = pmu_arch_event(e);

	pmu_attr_raw(attr, d ? d->event : 0, d ? d->umask : 0);
	attr->arch = d ? e : PMU_ARCH_NONE;
}

void pmu_attr_resolve(const struct pmu_cpu *pc, struct pmu_event_attr *attr)
{
	uint16_t event;
	uint8_t umask;

	/* AMD numbers the same events differently (instructions are 0xC0 on
	 * both, cycles 0x3C vs 0x76): the backend says. Event 0 when it has
	 * none; its gp_allowed then refuses the event with the reason. */
	if (attr->arch == PMU_ARCH_NONE || !pc->ops || !pc->ops->arch_encoding)
		return;
	if (!pc->ops->arch_encoding(&pc->caps, attr->arch, &event, &umask))
		event = umask = 0;
	attr->event = event;
	attr->umask = umask;
}

/* Every refusal is PMU_E_INVAL with the message in the caller's buffer. */
#define perr(p, ...) kerrf((p)->err, (p)->errlen, PMU_E_INVAL, __VA_ARGS__)

static bool tok_is(const char *s, size_t len, const char *word)
{
	return strlen(word) == len && strncmp(s, word, len) == 0;
}

/* ":u", ":k", ":uk" after an event: count user / kernel only. */
static int parse_mods(struct parse *p, const char *s, struct pmu_event_attr *a)
{
	bool u = false, k = false;

	if (*s == '\0')
		return PMU_OK;
	if (*s != ':')
		return perr(p, "unexpected '%.*s' after the event", kshown(strlen(s)), s);
	if (s[1] == '\0')
		return perr(p, "empty modifier after ':'");
	for (const char *m = s + 1; *m; m++) {
		if (*m == 'u' && !u)
			u = true;
		else if (*m == 'k' && !k)
			k = true;
		else
			return perr(p, "bad modifier '%c' in ':%.*s' (known: u, k, each once)", *m,
				    kshown(strlen(s + 1)), s + 1);
	}
	a->usr = u;
	a->os = k;
	return PMU_OK;
}

/* Raw config: PERFEVTSEL layout, but the bits the driver owns (USR, OS,
 * PC, INT, EN) and the reserved upper half may not be given. The bits the
 * common fields leave are the backend's (attr.own_config): its encode_gp
 * places or refuses them. */
static int parse_raw(struct parse *p, const char *s, struct pmu_event_attr *a)
{
	const char *hex = s + 1, *end = hex;
	uint64_t cfg = 0;
	const uint64_t owned = BIT(PERFEVTSEL_USR_BIT) | BIT(PERFEVTSEL_OS_BIT) | BIT(PERFEVTSEL_PC_BIT) |
			       BIT(PERFEVTSEL_INT_BIT) | BIT(PERFEVTSEL_EN_BIT);
	const uint64_t common = PERFEVTSEL_EVENT_MASK | PERFEVTSEL_UMASK_MASK | PERFEVTSEL_CMASK_MASK |
				BIT(PERFEVTSEL_EDGE_BIT) | BIT(PERFEVTSEL_INV_BIT);

	while (*end && *end != ':')
		end++;
	size_t len = (size_t)(end - hex);
	if (len == 0)
		return perr(p, "raw event 'r' needs hex digits (rUUEE: umask UU, event EE)");
	if (len > 16)
		return perr(p, "raw event '%.*s': more than 16 hex digits", kshown(len + 1), s);
	for (size_t i = 0; i < len; i++) {
		int d = parse_hex_digit(hex[i]);
		if (d < 0)
			return perr(p, "raw event '%.*s': '%c' is not a hex digit", kshown(len + 1), s,
				    hex[i]);
		cfg = cfg << 4 | (uint64_t)d;
	}
	if (cfg >> 32)
		return perr(p, "raw event '%.*s': bits above 31 are reserved in PERFEVTSEL", kshown(len + 1),
			    s);
	if (cfg & owned)
		return perr(
			p,
			"raw event '%.*s': bits %#llx (USR/OS/PC/INT/EN) are set by the driver; use :u/:k or cpu/usr,os,int/",
			kshown(len + 1), s, (unsigned long long)(cfg & owned));
	pmu_attr_raw(a, (uint8_t)(cfg & PERFEVTSEL_EVENT_MASK),
		     (uint8_t)((cfg & PERFEVTSEL_UMASK_MASK) >> PERFEVTSEL_UMASK_SHIFT));
	a->cmask = (uint8_t)((cfg & PERFEVTSEL_CMASK_MASK) >> PERFEVTSEL_CMASK_SHIFT);
	a->edge = (cfg >> PERFEVTSEL_EDGE_BIT) & 1;
	a->inv = (cfg >> PERFEVTSEL_INV_BIT) & 1;
	a->own_config = cfg & ~common;
	return parse_mods(p, end, a);
}

/* The terms every PMU has; a backend's own follow them (pmu_attr_term). */
enum term_kind {
	T_EVENT,
	T_UMASK,
	T_CMASK,
	T_USR,
	T_OS,
	T_EDGE,
	T_INV,
	T_INT,
	T_PERIOD,
	T_NR /* the first backend term's bit in parse_term's seen mask */
};

static const struct {
	const char *name;
	bool flag; /* bare name means 1; value must be 0 or 1 */
	uint64_t max;
} terms[T_NR] = {
	[T_EVENT] = { "event", false, 0xff },
	[T_UMASK] = { "umask", false, 0xff },
	[T_CMASK] = { "cmask", false, 0xff },
	[T_USR] = { "usr", true, 1 },
	[T_OS] = { "os", true, 1 },
	[T_EDGE] = { "edge", true, 1 },
	[T_INV] = { "inv", true, 1 },
	[T_INT] = { "int", true, 1 },
	/* Sampling reloads the counter with -period. */
	[T_PERIOD] = { "period", false, ~0ull >> 1 },
};

/* The backends' terms, in pmu_backend_term's order, each with its bit in
 * parse_term's seen mask after T_NR's. */
#define T_BACKEND_MAX (32 - T_NR)

/* The terms parse_term knows, for its refusal: the common ones, then the
 * backends'. */
static const char *known_terms(char *buf, size_t n)
{
	const struct pmu_attr_term *bt;
	size_t len = 0;
	int w;

	buf[0] = '\0';
	for (unsigned k = 0; k < T_NR && len < n; k++)
		if ((w = ksnprintf(buf + len, n - len, "%s%s", k ? " " : "", terms[k].name)) > 0)
			len += (size_t)w;
	for (unsigned b = 0; b < T_BACKEND_MAX && (bt = pmu_backend_term(b)) && len < n; b++)
		if ((w = ksnprintf(buf + len, n - len, " %s", bt->name)) > 0)
			len += (size_t)w;
	return buf;
}

static int parse_term(struct parse *p, const char *t, size_t len, struct pmu_event_attr *a, unsigned *seen)
{
	const struct pmu_attr_term *bt = NULL;
	const char *eq = NULL, *name;
	char known[160];
	size_t nlen;
	uint64_t v = 1, max;
	bool flag;
	int k;

	if (len == 0)
		return perr(p, "empty term in the cpu/.../ list");
	for (size_t i = 0; i < len; i++)
		if (t[i] == '=') {
			eq = t + i;
			break;
		}
	nlen = eq ? (size_t)(eq - t) : len;
	for (k = 0; k < T_NR; k++)
		if (tok_is(t, nlen, terms[k].name))
			break;
	if (k == T_NR) {
		unsigned b = 0;

		while (b < T_BACKEND_MAX && (bt = pmu_backend_term(b)) && !tok_is(t, nlen, bt->name))
			b++;
		if (!bt || b == T_BACKEND_MAX)
			return perr(p, "unknown term '%.*s' (known: %s)", kshown(nlen), t,
				    known_terms(known, sizeof(known)));
		k = T_NR + (int)b;
	}
	name = k < T_NR ? terms[k].name : bt->name;
	flag = k < T_NR ? terms[k].flag : bt->flag;
	max = k < T_NR ? terms[k].max : bt->max;
	if (*seen & (1u << k))
		return perr(p, "duplicate term '%s'", name);
	*seen |= 1u << k;
	if (eq) {
		size_t vlen = len - nlen - 1;
		if (parse_u64(eq + 1, vlen, &v) != PARSE_OK)
			return perr(p, "term '%.*s': '%.*s' is not a number (decimal or 0x hex)", kshown(len),
				    t, kshown(vlen), eq + 1);
	} else if (!flag) {
		return perr(p, "term '%s' needs a value (%s=N)", name, name);
	}
	if (v > max)
		return perr(p, "term '%.*s': value out of range 0..%#llx", kshown(len), t,
			    (unsigned long long)max);
	if (k >= T_NR) {
		bt->set(a, v);
		return PMU_OK;
	}
	switch ((enum term_kind)k) {
	case T_EVENT: a->event = (uint8_t)v; break;
	case T_UMASK: a->umask = (uint8_t)v; break;
	case T_CMASK: a->cmask = (uint8_t)v; break;
	case T_USR: a->usr = v; break;
	case T_OS: a->os = v; break;
	case T_EDGE: a->edge = v; break;
	case T_INV: a->inv = v; break;
	case T_INT: a->intr = v; break;
	case T_PERIOD: a->period = v; break;
	case T_NR: break;
	}
	return PMU_OK;
}

static int parse_pmu(struct parse *p, const char *s, struct pmu_event_attr *a)
{
	const char *body = s + 4; /* after "cpu/" */
	const char *close = body;
	unsigned seen = 0;
	int err;

	while (*close && *close != '/')
		close++;
	if (*close != '/')
		return perr(p, "missing closing '/' in '%.*s'", kshown(strlen(s)), s);
	pmu_attr_raw(a, 0, 0);
	a->usr = a->os = false;
	for (const char *t = body; t <= close;) {
		const char *e = t;
		while (e < close && *e != ',')
			e++;
		if ((err = parse_term(p, t, (size_t)(e - t), a, &seen)) != PMU_OK)
			return err;
		t = e + 1;
	}
	if (!(seen & (1u << T_EVENT)))
		return perr(p, "'%.*s' has no event= term", kshown((size_t)(close - s + 1)), s);
	/* perf counts both rings unless told otherwise. */
	if (!(seen & (1u << T_USR | 1u << T_OS)))
		a->usr = a->os = true;
	return parse_mods(p, close + 1, a);
}

int pmu_event_parse(const char *s, struct pmu_event_attr *attr, char *err, size_t errlen)
{
	struct parse p = { err, errlen };
	struct pmu_event_attr a;
	const char *colon;
	size_t nlen;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!s || !*s)
		return perr(&p, "empty event string");
	for (const char *c = s; *c; c++)
		if ((unsigned char)*c <= ' ' || (unsigned char)*c >= 0x7f)
			return perr(&p, "character %#x at offset %u is not allowed in an event string",
				    (unsigned char)*c, (unsigned)(c - s));

	colon = strchr(s, ':');
	nlen = colon ? (size_t)(colon - s) : strlen(s);
	if (strncmp(s, "cpu/", 4) == 0) {
		rc = parse_pmu(&p, s, &a);
	} else {
		enum pmu_arch_event e = PMU_ARCH_NONE;
		for (int i = 0; i < PMU_ARCH_NR; i++)
			if (tok_is(s, nlen, pmu_arch_event_name((enum pmu_arch_event)i)))
				e = (enum pmu_arch_event)i;
		if (e != PMU_ARCH_NONE) {
			pmu_attr_arch(&a, e);
			rc = parse_mods(&p, s + nlen, &a);
		} else if (s[0] == 'r') {
			/* Not a name ("ref-cycles" also starts with r and a hex digit). */
			rc = parse_raw(&p, s, &a);
		} else {
			return perr(
				&p,
				"unknown event '%.*s' (named: cycles instructions ref-cycles llc-references llc-misses branches branch-misses topdown-* lbr-inserts; raw: rUUEE; cpu/.../)",
				kshown(nlen), s);
		}
	}
	if (rc == PMU_OK)
		*attr = a;
	return rc;
}

int pmu_attr_format(const struct pmu_event_attr *a, char *buf, size_t n)
{
	char cmask[16] = "", period[32] = "", own[96] = "";
	const struct pmu_attr_term *bt;
	size_t len = 0;

	if (a->cmask)
		ksnprintf(cmask, sizeof(cmask), ",cmask=%u", a->cmask);
	if (a->period)
		ksnprintf(period, sizeof(period), ",period=%llu", (unsigned long long)a->period);
	for (unsigned b = 0; (bt = pmu_backend_term(b)) && len < sizeof(own); b++) {
		uint64_t v = bt->get(a);
		int w;

		if (!v)
			continue;
		w = bt->flag ? ksnprintf(own + len, sizeof(own) - len, ",%s", bt->name)
			     : ksnprintf(own + len, sizeof(own) - len, ",%s=0x%llx", bt->name,
					 (unsigned long long)v);
		if (w > 0)
			len += (size_t)w;
	}
	return ksnprintf(buf, n, "cpu/event=0x%02x,umask=0x%02x%s%s%s%s%s%s%s%s/", a->event, a->umask, cmask,
			 a->usr ? ",usr" : ",usr=0", a->os ? ",os" : ",os=0", a->edge ? ",edge" : "",
			 a->inv ? ",inv" : "", a->intr ? ",int" : "", period, own);
}
