// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel selection carried out: a subscription's events switched on,
 * and after any change each event's filter, the events no one selects and
 * the pid list written through tracefs.c, each change logged once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "layout.h"
#include "log.h"
#include "select.h"
#include "selection.h"
#include "tracefs.h"
#include "util.h"

int selection_subscribe(struct rt_session *session, struct rt_layout *layout,
			const char *const *globs, size_t n_globs, const char *const *allowed,
			unsigned int max_events, struct tep_event ***events, size_t *n,
			struct rt_why *why)
{
	const struct rt_catalogue *cat = rt_session_catalogue(session, false);
	struct rt_selection sel = { 0 };
	struct tep_event **evs = NULL;
	int ret;

	*events = NULL;
	*n = 0;
	ret = rt_select_events(cat, globs, n_globs, allowed, max_events, &sel, why);
	/* An event that came since the catalogue was read (a module loaded, say). */
	if (ret == -ENOENT) {
		cat = rt_session_catalogue(session, true);
		ret = rt_select_events(cat, globs, n_globs, allowed, max_events, &sel, why);
	}
	if (ret)
		return ret;
	ret = rt_session_enable(session, layout, &sel, why);
	/*
	 * Symbols make pointers readable; without them they stay addresses.
	 * Read once, when the layout first has a pointer field (any event's,
	 * settings' events included).
	 */
	(void)rt_session_symbols(session, layout);
	evs = calloc(sel.n + 1, sizeof(*evs));
	if (ret >= 0 && !evs)
		ret = -ENOMEM;
	for (size_t i = 0; ret >= 0 && i < sel.n; i++) {
		const struct rt_event_name *e = &cat->events[sel.events[i]];

		evs[i] = tep_find_event_by_name(layout->tep, e->system, e->name);
		if (!evs[i])
			ret = rt_why_set(why, -ENOENT, "%s:%s", e->system, e->name);
	}
	if (ret < 0) {
		free(evs);
		rt_selection_release(&sel);
		return ret;
	}
	*events = evs;
	*n = sel.n;
	rt_selection_release(&sel);
	return 0;
}

static void set_filter(struct rt_session *s, size_t i, const char *name, const char *filter)
{
	int ret = rt_session_set_filter(s, i, filter);

	if (ret < 0)
		rt_log(LOG_NOTICE, "%s: the kernel refused the filter '%s' (%s); the subscribers' "
		       "filters apply in ringtapd alone", name, filter, strerror(-ret));
	else if (ret)
		rt_log(LOG_INFO, "%s: kernel filter %s%s%s", name, filter ? "'" : "",
		       filter ?: "none", filter ? "'" : "");
}

static void set_pids(struct rt_session *s, const char *pids)
{
	int ret = rt_session_set_pids(s, pids);

	if (ret < 0)
		rt_log(LOG_NOTICE, "the kernel refused the pid list '%s' (%s); the subscribers' "
		       "pids apply in ringtapd alone", pids, strerror(-ret));
	else if (ret)
		rt_log(LOG_INFO, "kernel pid filter: %s", pids ?: "none");
}

static void disable(struct rt_session *s, size_t i)
{
	char name[512];
	int ret;

	/* Named before: switched off, it is gone from the session's list. */
	snprintf(name, sizeof(name), "%s", rt_session_events(s, NULL)[i]);
	ret = rt_session_disable(s, i);
	if (ret < 0)
		rt_log(LOG_WARNING, "switching %s off: %s", name, strerror(-ret));
	else if (ret)
		rt_log(LOG_INFO, "%s switched off: no subscription names it", name);
}

void selection_apply(struct rt_session *s, const struct rt_layout *layout,
		     const struct selection_sub *subs, size_t n_subs, bool user_space,
		     bool stopping)
{
	struct selection_plan plan;
	size_t n_events;
	const char *const *events = rt_session_events(s, &n_events);

	if (!stopping && (!subs || selection_plan(layout, events, rt_session_pinned(s), n_events,
						   subs, n_subs, user_space, &plan))) {
		/* Without memory to decide: the kernel filters nothing, the subscribers all. */
		rt_log(LOG_WARNING, "out of memory choosing the kernel's filters: none in force");
		for (size_t i = 0; i < n_events; i++)
			set_filter(s, i, events[i], NULL);
		set_pids(s, NULL);
	} else if (!stopping) {
		for (size_t i = 0; i < n_events; i++)
			if (plan.verdict[i] == SELECTION_ON)
				set_filter(s, i, events[i], plan.filter[i]);
		/* From the last: switching one off takes it out of the list. */
		for (size_t i = n_events; i-- > 0;)
			if (plan.verdict[i] == SELECTION_OFF)
				disable(s, i);
		set_pids(s, plan.pids);
		selection_plan_release(&plan);
	}
}
