// SPDX-License-Identifier: LGPL-2.1-or-later
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <event-parse.h>

#include "filter.h"

#define MAX_COMPARISONS 64
#define MAX_DEPTH 16

struct parser {
	const char *p;
	const struct tep_event *event;
	unsigned int comparisons;
	unsigned int depth;
	char *err;
	size_t errlen;
};

static int error(struct parser *ps, const char *what)
{
	snprintf(ps->err, ps->errlen, "%s at '%.20s'", what, *ps->p ? ps->p : "(end)");
	return -EINVAL;
}

static void skip_space(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t')
		ps->p++;
}

static bool take(struct parser *ps, const char *tok)
{
	size_t n = strlen(tok);

	skip_space(ps);
	if (strncmp(ps->p, tok, n))
		return false;
	ps->p += n;
	return true;
}

static bool has_field(const struct tep_event *ev, const char *name, size_t len)
{
	for (struct tep_format_field *f = ev->format.fields; f; f = f->next)
		if (strlen(f->name) == len && !strncmp(f->name, name, len))
			return true;
	for (struct tep_format_field *f = ev->format.common_fields; f; f = f->next)
		if (strlen(f->name) == len && !strncmp(f->name, name, len))
			return true;
	return false;
}

static int parse_value(struct parser *ps)
{
	skip_space(ps);
	if (*ps->p == '"') {
		for (ps->p++; *ps->p && *ps->p != '"'; ps->p++)
			if (*ps->p == '\\' && ps->p[1])
				ps->p++;
		if (*ps->p != '"')
			return error(ps, "unterminated string");
		ps->p++;
		return 0;
	}
	if (ps->p[0] == '0' && (ps->p[1] == 'x' || ps->p[1] == 'X')) {
		ps->p += 2;
		if (!isxdigit((unsigned char)*ps->p))
			return error(ps, "expected a hex number");
		while (isxdigit((unsigned char)*ps->p))
			ps->p++;
		return 0;
	}
	if (!isdigit((unsigned char)*ps->p))
		return error(ps, "expected a number or a quoted string");
	while (isdigit((unsigned char)*ps->p))
		ps->p++;
	return 0;
}

static int parse_comparison(struct parser *ps)
{
	static const char *const ops[] = { "==", "!=", "<=", ">=", "<", ">", "&" };
	const char *name;
	bool op = false;

	skip_space(ps);
	name = ps->p;
	while (isalnum((unsigned char)*ps->p) || *ps->p == '_')
		ps->p++;
	if (ps->p == name || isdigit((unsigned char)*name))
		return error(ps, "expected a field name");
	if (!has_field(ps->event, name, (size_t)(ps->p - name))) {
		snprintf(ps->err, ps->errlen, "%s:%s has no field '%.*s'", ps->event->system,
			 ps->event->name, (int)(ps->p - name), name);
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]) && !op; i++)
		op = take(ps, ops[i]);
	if (!op)
		return error(ps, "expected a comparison operator");
	if (++ps->comparisons > MAX_COMPARISONS)
		return error(ps, "too many comparisons");
	return parse_value(ps);
}

static int parse_or(struct parser *ps);

static int parse_unary(struct parser *ps)
{
	int ret;

	if (++ps->depth > MAX_DEPTH)
		return error(ps, "nested too deep");
	if (take(ps, "(")) {
		ret = parse_or(ps);
		if (!ret && !take(ps, ")"))
			ret = error(ps, "expected ')'");
	} else {
		ret = parse_comparison(ps);
	}
	ps->depth--;
	return ret;
}

static int parse_and(struct parser *ps)
{
	int ret = parse_unary(ps);

	while (!ret && take(ps, "&&"))
		ret = parse_unary(ps);
	return ret;
}

static int parse_or(struct parser *ps)
{
	int ret = parse_and(ps);

	while (!ret && take(ps, "||"))
		ret = parse_and(ps);
	return ret;
}

int rt_filter_check(const char *expr, const struct tep_event *ev, char *err, size_t errlen)
{
	struct parser ps = { .p = expr, .event = ev, .err = err, .errlen = errlen };
	int ret;

	if (errlen)
		err[0] = '\0';
	ret = parse_or(&ps);
	if (ret)
		return ret;
	skip_space(&ps);
	if (*ps.p)
		return error(&ps, "unexpected text");
	return 0;
}
