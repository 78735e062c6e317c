// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A Subscription from untrusted bytes through the selection, as the daemon
 * serves a Hello: its globs against a catalogue (with and without a
 * certificate's allowed globs and max_events), then its filter and
 * projection against the formats of the events it selected.
 */
#include <event-parse.h>

#include "fixture-layout.h"
#include "ringtap.pb-c.h"
#include "filter.h"
#include "select.h"

static const char *const catalogue_names[][2] = {
	{ "ftrace", "print" }, { "irq", "irq_handler_entry" }, { "ringtap_test", "ringtap_test" },
	{ "sched", "sched_switch" }, { "sched", "sched_wakeup" }, { "timer", "hrtimer_start" },
};

static const struct rt_catalogue *catalogue(void)
{
	static struct rt_catalogue cat;

	for (size_t i = 0; !cat.n && i < sizeof(catalogue_names) / sizeof(catalogue_names[0]); i++)
		if (rt_catalogue_add(&cat, catalogue_names[i][0], catalogue_names[i][1]))
			abort();
	rt_catalogue_sort(&cat);
	return &cat;
}

static void serve(const Ringtap__Subscription *sub, const char *const *allowed,
		  unsigned int max_events)
{
	const struct rt_catalogue *cat = catalogue();
	struct rt_layout *l = fixture_layout();
	struct tep_event *events[sizeof(catalogue_names) / sizeof(catalogue_names[0])];
	struct rt_filter *filter = NULL;
	struct rt_selection sel;
	struct rt_why why;
	char **only = NULL;
	size_t n = 0;

	if (rt_select_events(cat, (const char *const *)sub->events, sub->n_events, allowed,
			     max_events, &sel, &why))
		return;
	for (size_t i = 0; i < sel.n; i++) {
		const struct rt_event_name *e = &cat->events[sel.events[i]];
		struct tep_event *ev = tep_find_event_by_name(l->tep, e->system, e->name);

		if (ev)
			events[n++] = ev;
	}
	if (!rt_select_filter(sub->filter, events, n, &filter, &why))
		rt_filter_free(filter);
	if (!rt_select_fields(sub->fields, sub->n_fields, events, n, &only, &why))
		for (char **p = only; p && *p; p++)
			free(*p);
	free(only);
	rt_selection_release(&sel);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const allowed[] = { "sched:*", "ringtap_test:ringtap_test", NULL };
	Ringtap__Subscription *sub = ringtap__subscription__unpack(NULL, size, data);

	if (!sub)
		return 0;
	serve(sub, NULL, 0);
	serve(sub, allowed, 2);
	ringtap__subscription__free_unpacked(sub, NULL);
	return 0;
}
