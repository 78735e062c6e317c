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
#define MAX_LENGTH 512

struct parser {
	const char *p;
	const struct tep_event *event;
	unsigned int comparisons;
	unsigned int depth;
	struct rt_why *why;
};

static int error(struct parser *ps, const char *what)
{
	return rt_why_set(ps->why, -EINVAL, "%s at '%.20s'", what, *ps->p ? ps->p : "(end)");
}

static void skip_space(struct parser *ps)
{
	while (*ps->p == ' ')
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

static const struct tep_format_field *find_field(const struct tep_event *ev, const char *name,
						size_t len)
{
	for (struct tep_format_field *f = ev->format.fields; f; f = f->next)
		if (strlen(f->name) == len && !strncmp(f->name, name, len))
			return f;
	for (struct tep_format_field *f = ev->format.common_fields; f; f = f->next)
		if (strlen(f->name) == len && !strncmp(f->name, name, len))
			return f;
	return NULL;
}

static int parse_value(struct parser *ps)
{
	skip_space(ps);
	if (*ps->p == '"') {
		for (ps->p++; *ps->p && *ps->p != '"'; ps->p++)
			;
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
	const struct tep_format_field *field;
	const char *name, *op = NULL;

	skip_space(ps);
	name = ps->p;
	while (isalnum((unsigned char)*ps->p) || *ps->p == '_')
		ps->p++;
	if (ps->p == name || isdigit((unsigned char)*name))
		return error(ps, "expected a field name");
	field = find_field(ps->event, name, (size_t)(ps->p - name));
	if (!field)
		return rt_why_set(ps->why, -EINVAL, "%s:%s has no field '%.*s'", ps->event->system,
				  ps->event->name, (int)(ps->p - name), name);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]) && !op; i++)
		if (take(ps, ops[i]))
			op = ops[i];
	if (!op)
		return error(ps, "expected a comparison operator");
	if (++ps->comparisons > MAX_COMPARISONS)
		return error(ps, "too many comparisons");
	skip_space(ps);
	/* A string field compares for (in)equality with a string; others with a number. */
	if (field->flags & TEP_FIELD_IS_STRING) {
		if (strcmp(op, "==") && strcmp(op, "!="))
			return error(ps, "a string field takes == or != only");
		if (*ps->p != '"')
			return error(ps, "a string field compares with a quoted string");
	} else if (*ps->p == '"') {
		return error(ps, "a number field compares with a number");
	}
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

int rt_filter_check(const char *expr, const struct tep_event *ev, struct rt_why *why)
{
	struct parser ps = { .p = expr, .event = ev, .why = why };
	int ret;

	if (strlen(expr) > MAX_LENGTH)
		return error(&ps, "longer than 512 characters");
	/*
	 * tep 1.7.1's tokenizer crashes on bytes outside printable ASCII and
	 * leaks on a tab inside a string (both found by fuzz-filter).
	 */
	for (const char *c = expr; *c; c++) {
		if (*c < 0x20 || *c > 0x7e) {
			ps.p = c;
			return error(&ps, "only printable ASCII is accepted");
		}
		/*
		 * tep splits "event,event:filter" on ',' and ':' even inside a
		 * string, and crashes on some backslash escapes.
		 */
		if (*c == ',' || *c == ':' || *c == '\\') {
			ps.p = c;
			return error(&ps, "',', ':' and '\\' are not accepted");
		}
	}
	ret = parse_or(&ps);
	if (ret)
		return ret;
	skip_space(&ps);
	if (*ps.p)
		return error(&ps, "unexpected text");
	return 0;
}
