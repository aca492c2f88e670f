/* Kernel command-line parser: splits the line into tokens, matches each to
 * the caller's option table and converts and range-checks its value. */
#include "lib/cmdline.h"

#include <stdarg.h>

#include "lib/bits.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"

/* Longest non-string value looked at; longer ones are rejected unread. */
#define CMDLINE_VALUE_MAX 128
/* Keys and values are shown in messages up to this many characters. */
#define CMDLINE_SHOW_MAX 40

/* A token as it stands in the line: raw bytes, quotes still in. */
struct cmdline_tok {
	const char *p;
	size_t n;
	size_t offset; /* of p[0] in the line, for messages */
};

static bool cmdline_is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

__attribute__((format(printf, 2, 3))) static void cmdline_error(struct cmdline_result *res, const char *fmt,
								...)
{
	if (res->nerrors < CMDLINE_MAX_ERRORS) {
		va_list ap;

		va_start(ap, fmt);
		kvsnprintf(res->errors[res->nerrors], sizeof(res->errors[0]), fmt, ap);
		va_end(ap);
	}
	res->nerrors++;
}

/* Copy tok without its quotes into out (at most size - 1 bytes, then a NUL
 * when size > 0); returns the unquoted length, which may be larger. */
static size_t tok_unquote(struct cmdline_tok tok, char *out, size_t size)
{
	size_t len = 0;

	for (size_t i = 0; i < tok.n; i++) {
		if (tok.p[i] == '"')
			continue;
		if (len + 1 < size)
			out[len] = tok.p[i];
		len++;
	}
	if (size)
		out[len < size ? len : size - 1] = '\0';
	return len;
}

/* tok without its quotes, for a message: cut with "..." if long, and the
 * tab/CR/LF a quoted value may hold shown as '?' to keep messages on one
 * line. */
static const char *tok_show(struct cmdline_tok tok, char out[CMDLINE_SHOW_MAX + 1])
{
	size_t len = tok_unquote(tok, out, CMDLINE_SHOW_MAX + 1);

	for (size_t i = 0; out[i]; i++)
		if ((unsigned char)out[i] < 0x20)
			out[i] = '?';
	if (len > CMDLINE_SHOW_MAX)
		memcpy(out + CMDLINE_SHOW_MAX - 3, "...", 4);
	return out;
}

static bool tok_equals(struct cmdline_tok tok, const char *s)
{
	for (size_t i = 0; i < tok.n; i++) {
		if (tok.p[i] == '"')
			continue;
		if (*s++ != tok.p[i])
			return false;
	}
	return *s == '\0';
}

static bool tok_has_char(struct cmdline_tok tok, char c)
{
	for (size_t i = 0; i < tok.n; i++)
		if (tok.p[i] == c)
			return true;
	return false;
}

static bool tok_ends_with(struct cmdline_tok tok, const char *suffix)
{
	size_t k = strlen(suffix), i = tok.n;

	while (k > 0) {
		while (i > 0 && tok.p[i - 1] == '"')
			i--;
		if (i == 0 || tok.p[i - 1] != suffix[k - 1])
			return false;
		i--;
		k--;
	}
	return true;
}

static char ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool ascii_equal_nocase(const char *a, const char *b)
{
	for (; *a && ascii_lower(*a) == ascii_lower(*b); a++, b++)
		;
	return *a == '\0' && *b == '\0';
}

static void cmdline_set_uint(const struct cmdline_opt *opt, const char *val, const char *shown,
			     struct cmdline_result *res)
{
	uint64_t v;

	switch (parse_u64(val, strlen(val), &v)) {
	case PARSE_BAD: cmdline_error(res, "%s=%s: not a number", opt->name, shown); return;
	case PARSE_OVERFLOW: cmdline_error(res, "%s=%s: does not fit in 64 bits", opt->name, shown); return;
	case PARSE_OK: break;
	}
	if (v < opt->min || v > opt->max) {
		cmdline_error(res, "%s=%s: out of range %llu..%llu", opt->name, shown,
			      (unsigned long long)opt->min, (unsigned long long)opt->max);
		return;
	}
	*(uint64_t *)opt->dst = v;
}

static void cmdline_set_bool(const struct cmdline_opt *opt, const char *val, const char *shown,
			     struct cmdline_result *res)
{
	static const char *const yes[] = { "1", "yes", "on", "true" };
	static const char *const no[] = { "0", "no", "off", "false" };

	for (size_t i = 0; i < ARRAY_LEN(yes); i++) {
		if (ascii_equal_nocase(val, yes[i])) {
			*(bool *)opt->dst = true;
			return;
		}
		if (ascii_equal_nocase(val, no[i])) {
			*(bool *)opt->dst = false;
			return;
		}
	}
	cmdline_error(res, "%s=%s: not a boolean (0/1/yes/no/on/off/true/false)", opt->name, shown);
}

static void cmdline_set_enum(const struct cmdline_opt *opt, const char *val, const char *shown,
			     struct cmdline_result *res)
{
	char list[CMDLINE_ERROR_LEN];
	size_t used = 0;

	for (int i = 0; opt->choices && opt->choices[i]; i++) {
		if (strcmp(val, opt->choices[i]) == 0) {
			*(int *)opt->dst = i;
			return;
		}
	}
	list[0] = '\0';
	for (int i = 0; opt->choices && opt->choices[i] && used < sizeof(list); i++) {
		int n = ksnprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "", opt->choices[i]);
		used += n > 0 ? (size_t)n : 0;
	}
	cmdline_error(res, "%s=%s: not one of %s", opt->name, shown, list);
}

static void cmdline_set_str(const struct cmdline_opt *opt, struct cmdline_tok val, const char *shown,
			    struct cmdline_result *res)
{
	size_t len = tok_unquote(val, NULL, 0);

	/* Check first: a value that does not fit leaves the default alone. */
	if (len >= opt->dst_size) {
		cmdline_error(res, "%s=%s: longer than %zu characters", opt->name, shown,
			      opt->dst_size ? opt->dst_size - 1 : 0);
		return;
	}
	tok_unquote(val, opt->dst, opt->dst_size);
}

static const struct cmdline_opt *cmdline_find(struct cmdline_tok key, const struct cmdline_opt *opts,
					      size_t nopts)
{
	for (size_t i = 0; i < nopts; i++)
		if (opts[i].name && tok_equals(key, opts[i].name))
			return &opts[i];
	return NULL;
}

/* One token whose bytes are all printable and whose quotes are closed. */
static void cmdline_apply(struct cmdline_tok tok, bool first, const struct cmdline_opt *opts, size_t nopts,
			  struct cmdline_result *res)
{
	char key_shown[CMDLINE_SHOW_MAX + 1], val_shown[CMDLINE_SHOW_MAX + 1];
	char val[CMDLINE_VALUE_MAX];
	struct cmdline_tok key = tok, value = { 0 };
	const struct cmdline_opt *opt;
	bool has_value = false;

	for (size_t i = 0; i < tok.n; i++) {
		if (tok.p[i] == '=') {
			key.n = i;
			value = (struct cmdline_tok){ tok.p + i + 1, tok.n - i - 1, tok.offset + i + 1 };
			has_value = true;
			break;
		}
	}
	if (!has_value && first && (tok_has_char(tok, '/') || tok_ends_with(tok, ".elf")))
		return; /* the image path in front of QEMU's -append text */

	opt = cmdline_find(key, opts, nopts);
	if (!opt) {
		cmdline_error(res, "unknown option '%s'", tok_show(key, key_shown));
		return;
	}
	if (!has_value) {
		if (opt->type == CMDLINE_BOOL)
			*(bool *)opt->dst = true;
		else
			cmdline_error(res, "option '%s' needs a value (%s=...)", opt->name, opt->name);
		return;
	}
	tok_show(value, val_shown);
	if (opt->type == CMDLINE_STR) {
		cmdline_set_str(opt, value, val_shown, res);
		return;
	}
	if (tok_unquote(value, val, sizeof(val)) >= sizeof(val)) {
		cmdline_error(res, "%s=%s: value too long", opt->name, val_shown);
		return;
	}
	switch (opt->type) {
	case CMDLINE_UINT: cmdline_set_uint(opt, val, val_shown, res); break;
	case CMDLINE_BOOL: cmdline_set_bool(opt, val, val_shown, res); break;
	case CMDLINE_ENUM: cmdline_set_enum(opt, val, val_shown, res); break;
	case CMDLINE_STR: break;
	}
}

void cmdline_parse(const char *line, size_t len, const struct cmdline_opt *opts, size_t nopts,
		   struct cmdline_result *res)
{
	size_t n = 0, i = 0;
	bool first = true, cut_token = false;

	memset(res, 0, sizeof(*res));
	if (!line)
		len = 0;
	/* Multiboot hands over a C string (Multiboot2 spec 3.6.2); callers
	 * that pass a buffer size get the same result through the NUL. */
	while (n < len && n < CMDLINE_MAX_LEN && line[n])
		n++;
	if (n == CMDLINE_MAX_LEN && len > CMDLINE_MAX_LEN && line[n]) {
		res->truncated = true;
		/* A token running across the cut is incomplete: drop it
		 * rather than apply half a value. */
		cut_token = !cmdline_is_space((unsigned char)line[n]);
		cmdline_error(res, "command line longer than %d bytes: the rest is ignored", CMDLINE_MAX_LEN);
	}

	while (i < n) {
		struct cmdline_tok tok;
		size_t bad = SIZE_MAX, open_quote = 0;
		bool quoted = false;

		if (cmdline_is_space((unsigned char)line[i])) {
			i++;
			continue;
		}
		tok.p = line + i;
		tok.offset = i;
		for (; i < n; i++) {
			unsigned char c = (unsigned char)line[i];

			if (c == '"') {
				quoted = !quoted;
				open_quote = i;
				continue;
			}
			if (cmdline_is_space(c)) {
				if (!quoted)
					break;
			} else if ((c < 0x20 || c >= 0x7f) && bad == SIZE_MAX) {
				bad = i;
			}
		}
		tok.n = i - tok.offset;

		if (bad != SIZE_MAX)
			cmdline_error(res, "non-printable byte 0x%02x at offset %zu",
				      (unsigned char)line[bad], bad);
		else if (quoted)
			cmdline_error(res, "unterminated quote at offset %zu", open_quote);
		else if (cut_token && i == n)
			cmdline_error(res, "token at offset %zu cut by the length limit: ignored",
				      tok.offset);
		else
			cmdline_apply(tok, first, opts, nopts, res);
		first = false;
	}
}
