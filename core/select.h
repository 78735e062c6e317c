/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * select: which events a request names, and whether the rest of a
 * subscription holds, decided without touching the kernel.
 *
 * A subscription is served in three steps: rt_select_events() checks the
 * request against the catalogue of events the kernel offers, the
 * certificate's allowed globs and max_events, and returns what to enable;
 * the daemon enables those (selection-edge.c, through tracefs.c), which
 * teaches their formats to the layout; rt_select_filter() and
 * rt_select_fields() then check the filter and the projection against
 * those formats. Nothing is enabled for a request that the first step
 * refuses. Pure.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "glob.h"
#include "why.h"

struct rt_layout;
struct tep_event;
struct rt_filter;

/* An event the kernel offers, as events/<system>/<name> names it. */
struct rt_event_name {
	char *system;
	char *name;
};

/* Every event of a tracefs tree, sorted by system then name. */
struct rt_catalogue {
	struct rt_event_name *events;
	size_t n;
};

int rt_catalogue_add(struct rt_catalogue *catalogue, const char *system, const char *name);
/* Sorts and drops duplicates: a catalogue then lists each event once, in a stable order. */
void rt_catalogue_sort(struct rt_catalogue *catalogue);
void rt_catalogue_release(struct rt_catalogue *catalogue);


/* Indices into a catalogue, ascending. */
struct rt_selection {
	size_t *events;
	size_t n;
};

/*
 * The events n globs name. allowed (NULL: anything) are a certificate's
 * globs (acl.h): each requested glob must stay inside them. max_events (0:
 * no limit) bounds globs and matches. Returns 0; -ENOENT with the glob that
 * matched nothing in why.text; -EACCES with the glob or event refused;
 * -E2BIG; -ENOMEM.
 */
int rt_select_events(const struct rt_catalogue *catalogue, const char *const *globs,
		     size_t n_globs, const char *const *allowed, unsigned int max_events,
		     struct rt_selection *out, struct rt_why *why);
void rt_selection_release(struct rt_selection *selection);

/*
 * The filter expression (the kernel's filter language, filter.h) for every event given,
 * each of which must have the fields it names. *out NULL for no filter
 * (expr NULL or empty). -EINVAL with why.
 */
int rt_select_filter(const char *expr, struct tep_event *const *events, size_t n_events,
		     struct rt_filter **out, struct rt_why *why);

/*
 * A projection: each field named must exist in one of the events, or the
 * name is a typo. *out is a NULL-terminated copy of the names (NULL for
 * n_fields 0). -EINVAL with why.
 */
int rt_select_fields(char *const *fields, size_t n_fields, struct tep_event *const *events,
		     size_t n_events, char ***out, struct rt_why *why);

/*
 * The latency bound a subscriber asked (Subscription.max_latency_ms) in
 * *out; 0 when it asked none, for "the daemon's max_latency_ms", which a
 * reload may change. Any bound the daemon's own setting may take is
 * granted, shorter or longer: a subscriber that may enable events already
 * decides what ringtapd costs. -EINVAL with why outside
 * RT_LATENCY_MIN_MS..RT_LATENCY_MAX_MS.
 */
#define RT_LATENCY_MIN_MS 10u
#define RT_LATENCY_MAX_MS 60000u
int rt_select_latency(bool has, uint32_t asked, unsigned int *out, struct rt_why *why);
