// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl.h"
#include "glob.h"
#include "util.h"

struct acl_entry {
	char *common_name;
	char **globs;		/* NULL-terminated */
};

struct rt_acl {
	struct acl_entry *entries;
	size_t n;
};

static void free_entry(struct acl_entry *e)
{
	rt_strv_free(e->globs);
	free(e->common_name);
}

void rt_acl_free(struct rt_acl *acl)
{
	if (!acl)
		return;
	for (size_t i = 0; i < acl->n; i++)
		free_entry(&acl->entries[i]);
	free(acl->entries);
	free(acl);
}

static bool is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r';
}

/* One line, without its newline and comment, into e. */
static int parse_line(const char *p, const char *end, struct acl_entry *e, struct rt_why *why)
{
	const char *start;
	size_t n = 0;

	while (p < end && is_space(*p))
		p++;
	if (p < end && *p == '"') {
		start = ++p;
		while (p < end && *p != '"')
			p++;
		if (p == end)
			return rt_why_set(why, -EINVAL, "unterminated quoted name");
		e->common_name = strndup(start, (size_t)(p - start));
		p++;
	} else {
		start = p;
		while (p < end && !is_space(*p))
			p++;
		e->common_name = strndup(start, (size_t)(p - start));
	}
	if (!e->common_name)
		return -ENOMEM;
	if (!*e->common_name)
		return rt_why_set(why, -EINVAL, "empty name");
	for (;;) {
		char **grown;

		while (p < end && (is_space(*p) || *p == ','))
			p++;
		if (p == end)
			break;
		start = p;
		while (p < end && !is_space(*p) && *p != ',')
			p++;
		grown = realloc(e->globs, (n + 2) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		e->globs = grown;
		e->globs[n] = strndup(start, (size_t)(p - start));
		e->globs[n + 1] = NULL;
		if (!e->globs[n])
			return -ENOMEM;
		if (strpbrk(e->globs[n], "?[]\\"))
			return rt_why_set(why, -EINVAL, "an allowed glob may use '*' only");
		if (strchr(e->globs[n], ':') != strrchr(e->globs[n], ':'))
			return rt_why_set(why, -EINVAL, "more than one ':' in a glob");
		n++;
	}
	if (!n)
		return rt_why_set(why, -EINVAL, "a name without event globs");
	return 0;
}

int rt_acl_parse(struct rt_acl **out, const char *text, size_t len, unsigned int *line,
		 struct rt_why *why)
{
	struct rt_acl *acl = calloc(1, sizeof(*acl));
	const char *p = text, *end = text + len;
	int ret = 0;

	*out = NULL;
	*line = 0;
	if (!acl)
		return -ENOMEM;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end, *stop = eol, *hash = memchr(p, '#', (size_t)(eol - p));
		const char *q;
		struct acl_entry e = { 0 }, *grown;

		++*line;
		if (hash)
			stop = hash;
		if (memchr(p, '\0', (size_t)(stop - p))) {
			rt_why_set(why, 0, "a NUL byte");
			ret = -EINVAL;
			goto fail;
		}
		for (q = p; q < stop && is_space(*q); q++)
			;
		if (q < stop) {
			ret = parse_line(q, stop, &e, why);
			if (!ret && rt_acl_lookup(acl, e.common_name)) {
				rt_why_set(why, 0, "a name listed twice");
				ret = -EINVAL;
			}
			grown = ret ? NULL : realloc(acl->entries, (acl->n + 1) * sizeof(*grown));
			if (!ret && !grown)
				ret = -ENOMEM;
			if (ret) {
				free_entry(&e);
				goto fail;
			}
			acl->entries = grown;
			acl->entries[acl->n++] = e;
		}
		p = nl ? nl + 1 : end;
	}
	*out = acl;
	return 0;
fail:
	rt_acl_free(acl);
	return ret;
}

const char *const *rt_acl_lookup(const struct rt_acl *acl, const char *common_name)
{
	for (size_t i = 0; acl && i < acl->n; i++)
		if (!strcmp(acl->entries[i].common_name, common_name))
			return (const char *const *)acl->entries[i].globs;
	return NULL;
}

/* A glob without a system matches that event name in every system. */
static char *qualified(const char *glob)
{
	char *q;

	if (strchr(glob, ':'))
		return strdup(glob);
	if (asprintf(&q, "*:%s", glob) < 0)
		return NULL;
	return q;
}

/*
 * Sound because allowed globs hold only literals and '*': a literal of the
 * allowed glob can only have matched a literal of the request (never one of
 * its wildcards), and whatever a request's '*' or '?' expands to is taken by
 * one of the allowed glob's stars. A bracket or an escape in the request
 * breaks that, so such a request needs an allowed glob that takes anything.
 */
bool rt_acl_allows_glob(const char *const *allowed, const char *requested)
{
	char *req = qualified(requested);
	bool ok = false;

	if (!req)
		return false;
	for (const char *const *a = allowed; a && *a && !ok; a++) {
		char *alw = qualified(*a);

		if (!alw)
			break;
		if (strpbrk(req, "[]\\"))
			ok = !fnmatch(alw, "x:y", 0) && strspn(alw, "*:") == strlen(alw);
		else
			ok = !fnmatch(alw, req, 0);
		free(alw);
	}
	free(req);
	return ok;
}

bool rt_acl_allows_event(const char *const *allowed, const char *system, const char *name)
{
	for (const char *const *a = allowed; a && *a; a++)
		if (rt_glob_match(*a, system, name))
			return true;
	return false;
}
