/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * selection: what the kernel is asked to record and filter on behalf of
 * every subscriber at once, between the connections and tracefs.
 *
 * selection.c decides, pure (no descriptor, no log): given each
 * subscription (its events, filter text, pids, encoding) and the events
 * the instance has on, which stay on, which go off, each one's kernel
 * filter and the instance's pid list. selection-edge.c carries it out
 * through tracefs.c, logs what the kernel did with it, and switches on
 * what a new subscription names.
 *
 * The kernel's filters and pid list only spare the ring buffer what nobody
 * keeps: each subscriber's own selection still applies exactly in
 * user space, so asking the kernel less is never wrong, only slower.
 */
#include <stdbool.h>
#include <stddef.h>

#include "why.h"

struct rt_layout;
struct rt_session;
struct rt_subscriber;
struct tep_event;

/* One connection's subscription, as the kernel selection sees it. */
struct selection_sub {
	const struct rt_subscriber *sub;	/* its events and pids */
	const char *filter;		/* its filter's text; NULL: none */
	bool raw;			/* takes pages whole: the kernel may drop nothing of it */
	bool streaming;			/* past its Welcome: only those ask for pids */
};

enum selection_verdict {
	SELECTION_KEEP,		/* unknown to the layout, or the settings' own: left as it is */
	SELECTION_ON,		/* someone selects it: on, with plan.filter[i] */
	SELECTION_OFF,		/* no one selects it: off */
};

/* What the kernel is asked, per event the instance has on (the session's order). */
struct selection_plan {
	size_t n_events;
	enum selection_verdict *verdict;
	char **filter;			/* SELECTION_ON: the kernel filter; NULL: none */
	char *pids;			/* set_event_pid: "1 42 ..."; NULL: every pid */
};

/*
 * The plan for events (n_events "system:event" names the instance has on,
 * pinned[i]: enabled by the settings, which publish every record to NATS)
 * and the subscriptions in subs. user_space: kernel_selection = 0, no
 * kernel filters or pid lists. 0 or -ENOMEM.
 */
int selection_plan(const struct rt_layout *layout, const char *const *events, const bool *pinned,
		   size_t n_events, const struct selection_sub *subs, size_t n_subs,
		   bool user_space, struct selection_plan *plan);
void selection_plan_release(struct selection_plan *plan);

/*
 * An event's kernel filter: the OR of its subscribers' filters when every
 * one has one, none is RAW and the settings did not pin it; NULL: none
 * (also without memory: the kernel then filters nothing).
 */
char *selection_kernel_filter(unsigned int id, bool pinned, const struct selection_sub *subs,
			      size_t n_subs);
/*
 * The instance's pid list: the union of every streaming subscriber's
 * pids, when each selects pids, none is RAW and no event is pinned; NULL:
 * every pid.
 */
char *selection_kernel_pids(const bool *pinned, size_t n_events, const struct selection_sub *subs,
			    size_t n_subs);

/* selection-edge.c: the plan carried out, logged. */

/*
 * A subscription's globs: the events they name in the catalogue (checked
 * against allowed and max_events before anything is enabled), switched
 * on, their formats in the layout, symbols loaded once if a pointer field
 * needs them. *events (n of them, NULL-terminated) for the caller to free.
 * -ENOENT, -EACCES or another -errno with why.
 */
int selection_subscribe(struct rt_session *session, struct rt_layout *layout,
			const char *const *globs, size_t n_globs, const char *const *allowed,
			unsigned int max_events, struct tep_event ***events, size_t *n,
			struct rt_why *why);

/*
 * After a subscription came, changed or went: the kernel asked what
 * selection_plan() decides for subs (unless stopping, when everything stays
 * as it is).
 */
void selection_apply(struct rt_session *session, const struct rt_layout *layout,
		     const struct selection_sub *subs, size_t n_subs, bool user_space,
		     bool stopping);
