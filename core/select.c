// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "acl.h"
#include "filter.h"
#include "glob.h"
#include "layout.h"
#include "select.h"
#include "util.h"

int rt_catalogue_add(struct rt_catalogue *cat, const char *system, const char *name)
{
	struct rt_event_name *grown = realloc(cat->events, (cat->n + 1) * sizeof(*grown));
	struct rt_event_name e = { strdup(system), strdup(name) };

	if (grown)
		cat->events = grown;
	if (!grown || !e.system || !e.name) {
		free(e.system);
		free(e.name);
		return -ENOMEM;
	}
	cat->events[cat->n++] = e;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	const struct rt_event_name *x = a, *y = b;

	return strcmp(x->system, y->system) ?: strcmp(x->name, y->name);
}

void rt_catalogue_sort(struct rt_catalogue *cat)
{
	size_t kept = 0;

	if (!cat->n)
		return;
	qsort(cat->events, cat->n, sizeof(*cat->events), by_name);
	for (size_t i = 0; i < cat->n; i++) {
		if (kept && !by_name(&cat->events[kept - 1], &cat->events[i])) {
			free(cat->events[i].system);
			free(cat->events[i].name);
			continue;
		}
		cat->events[kept++] = cat->events[i];
	}
	cat->n = kept;
}

void rt_catalogue_release(struct rt_catalogue *cat)
{
	for (size_t i = 0; i < cat->n; i++) {
		free(cat->events[i].system);
		free(cat->events[i].name);
	}
	free(cat->events);
	cat->events = NULL;
	cat->n = 0;
}

static int add_index(struct rt_selection *sel, size_t i)
{
	size_t *grown;

	/* Several globs may name the same event: it is selected once. */
	for (size_t k = 0; k < sel->n; k++)
		if (sel->events[k] == i)
			return 0;
	grown = realloc(sel->events, (sel->n + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	sel->events = grown;
	sel->events[sel->n++] = i;
	return 0;
}

static int by_index(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

int rt_select_events(const struct rt_catalogue *cat, const char *const *globs, size_t n_globs,
		     const char *const *allowed, unsigned int max_events, struct rt_selection *out,
		     struct rt_why *why)
{
	struct rt_selection sel = { 0 };
	int ret = 0;

	*out = sel;
	if (max_events && n_globs > max_events)
		return rt_why_set(why, -E2BIG, "%zu event names: more than max_events allows (%u)",
				  n_globs, max_events);
	/* Checked before anything is enabled: enabling is itself an effect on the host. */
	for (size_t g = 0; allowed && g < n_globs; g++)
		if (!rt_acl_allows_glob(allowed, globs[g]))
			return rt_why_set(why, -EACCES, "%s", globs[g]);
	for (size_t g = 0; g < n_globs && !ret; g++) {
		bool matched = false;

		for (size_t i = 0; i < cat->n && !ret; i++) {
			const struct rt_event_name *e = &cat->events[i];

			if (!rt_glob_match(globs[g], e->system, e->name))
				continue;
			matched = true;
			if (allowed && !rt_acl_allows_event(allowed, e->system, e->name))
				ret = rt_why_set(why, -EACCES, "%s:%s", e->system, e->name);
			else
				ret = add_index(&sel, i);
			if (!ret && max_events && sel.n > max_events)
				ret = rt_why_set(why, -E2BIG, "the patterns match more events than "
						 "max_events allows (%u)", max_events);
		}
		if (!ret && !matched)
			ret = rt_why_set(why, -ENOENT, "%s", globs[g]);
	}
	if (ret) {
		rt_selection_release(&sel);
		return ret;
	}
	if (sel.n)
		qsort(sel.events, sel.n, sizeof(*sel.events), by_index);
	*out = sel;
	return 0;
}

void rt_selection_release(struct rt_selection *sel)
{
	free(sel->events);
	sel->events = NULL;
	sel->n = 0;
}

int rt_select_filter(const char *expr, struct tep_event *const *events, size_t n_events,
		     struct rt_filter **out, struct rt_why *why)
{
	*out = NULL;
	if (!expr || !*expr)
		return 0;
	return rt_filter_compile(expr, events, n_events, out, why);
}

int rt_select_fields(char *const *fields, size_t n_fields, struct tep_event *const *events,
		     size_t n_events, char ***out, struct rt_why *why)
{
	char **only;

	*out = NULL;
	if (!n_fields)
		return 0;
	only = calloc(n_fields + 1, sizeof(*only));
	if (!only)
		return -ENOMEM;
	for (size_t i = 0; i < n_fields; i++) {
		bool found = false;

		for (size_t e = 0; e < n_events && !found; e++)
			found = tep_find_field(events[e], fields[i]) != NULL;
		if (!found) {
			rt_strv_free(only);
			return rt_why_set(why, -EINVAL, "no selected event has a field '%s'",
					  fields[i]);
		}
		only[i] = strdup(fields[i]);
		if (!only[i]) {
			rt_strv_free(only);
			return -ENOMEM;
		}
	}
	*out = only;
	return 0;
}

int rt_select_latency(bool has, uint32_t asked, unsigned int *out, struct rt_why *why)
{
	if (!has) {
		*out = 0;
		return 0;
	}
	if (asked < RT_LATENCY_MIN_MS || asked > RT_LATENCY_MAX_MS)
		return rt_why_set(why, -EINVAL, "max_latency_ms %u is outside %u..%u", asked,
				  RT_LATENCY_MIN_MS, RT_LATENCY_MAX_MS);
	*out = asked;
	return 0;
}
