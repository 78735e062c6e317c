// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the kernel is asked for all subscribers at once, decided from their
 * subscriptions and the layout alone: no descriptor, no log (selection.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "layout.h"
#include "selection.h"
#include "subscriber.h"
#include "util.h"

/* The open_memstream's text, or NULL when it could not be finished. */
static char *closed_text(FILE *f, char **text)
{
	char *out;

	if (fclose(f)) {
		free(*text);
		*text = NULL;
		return NULL;
	}
	out = *text;
	*text = NULL;
	return out;
}

char *selection_kernel_filter(unsigned int id, bool pinned, const struct selection_sub *subs,
			      size_t n_subs)
{
	char *text = NULL, *out;
	size_t len = 0;
	bool all = !pinned, any = false;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	for (size_t k = 0; k < n_subs && all; k++) {
		if (!rt_subscriber_wants_event(subs[k].sub, id))
			continue;
		all = subs[k].filter && !subs[k].raw;
		if (all)
			fprintf(f, "%s(%s)", any ? " || " : "", subs[k].filter);
		any = true;
	}
	out = closed_text(f, &text);
	if (out && all && any)
		return out;
	free(out);
	return NULL;
}

static int compare_pids(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

char *selection_kernel_pids(const bool *pinned, size_t n_events, const struct selection_sub *subs,
			    size_t n_subs)
{
	_cleanup_free_ int32_t *all = NULL;
	char *text = NULL;
	size_t n = 0, len = 0;
	FILE *f;

	for (size_t i = 0; i < n_events; i++)
		if (pinned[i])
			return NULL;
	for (size_t k = 0; k < n_subs; k++) {
		const int32_t *pids;
		size_t n_pids;
		int32_t *more;

		if (!subs[k].streaming)
			continue;
		pids = rt_subscriber_pids(subs[k].sub, &n_pids);
		if (!n_pids || subs[k].raw)
			return NULL;
		more = realloc(all, (n + n_pids) * sizeof(*all));
		if (!more)
			return NULL;
		all = more;
		memcpy(all + n, pids, n_pids * sizeof(*all));
		n += n_pids;
	}
	if (!n)
		return NULL;
	qsort(all, n, sizeof(*all), compare_pids);
	f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!i || all[i] != all[i - 1])
			fprintf(f, "%s%d", i ? " " : "", (int)all[i]);
	return closed_text(f, &text);
}

/* The layout's event for "system:event"; NULL when it has none. */
static const struct tep_event *find_event(const struct rt_layout *layout, const char *name)
{
	const char *colon = strchr(name, ':');
	char system[256];

	if (!colon || (size_t)(colon - name) >= sizeof(system))
		return NULL;
	memcpy(system, name, (size_t)(colon - name));
	system[colon - name] = '\0';
	return tep_find_event_by_name(layout->tep, system, colon + 1);
}

int selection_plan(const struct rt_layout *layout, const char *const *events, const bool *pinned,
		   size_t n_events, const struct selection_sub *subs, size_t n_subs,
		   bool user_space, struct selection_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	plan->verdict = calloc(n_events ?: 1, sizeof(*plan->verdict));
	plan->filter = calloc(n_events ?: 1, sizeof(*plan->filter));
	if (!plan->verdict || !plan->filter) {
		selection_plan_release(plan);
		return -ENOMEM;
	}
	plan->n_events = n_events;
	for (size_t i = 0; i < n_events; i++) {
		const struct tep_event *ev = find_event(layout, events[i]);
		unsigned int id = ev ? (unsigned int)ev->id : 0;
		bool wanted = false;

		for (size_t k = 0; ev && k < n_subs && !wanted; k++)
			wanted = rt_subscriber_wants_event(subs[k].sub, id);
		/* The settings' own events stay on for NATS, wanted or not. */
		plan->verdict[i] = !ev || (!wanted && pinned[i]) ? SELECTION_KEEP :
				   wanted ? SELECTION_ON : SELECTION_OFF;
		if (wanted && !user_space)
			plan->filter[i] = selection_kernel_filter(id, pinned[i], subs, n_subs);
	}
	if (!user_space)
		plan->pids = selection_kernel_pids(pinned, n_events, subs, n_subs);
	return 0;
}

void selection_plan_release(struct selection_plan *plan)
{
	for (size_t i = 0; plan->filter && i < plan->n_events; i++)
		free(plan->filter[i]);
	free(plan->filter);
	free(plan->verdict);
	free(plan->pids);
	memset(plan, 0, sizeof(*plan));
}
