// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tracefs-events: the events a tree offers (its catalogue, read once) and
 * those the session switched on: in bulk (the instance's events/enable for
 * every event, a system's own enable, the rest through set_event opened
 * once), each one's format taught to the layout first, and off again one by
 * one when no subscription names it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>
#include <tracefs/tracefs.h>

#include "config.h"
#include "layout.h"
#include "read_file.h"
#include "tracefs-session.h"
#include "util.h"

/* Where sys:ev is in the list of events switched on, or -1. */
static ssize_t find_event(const struct rt_session *s, const char *sys, const char *ev)
{
	size_t slen = strlen(sys);

	for (size_t i = 0; i < s->n_events; i++)
		if (!strncmp(s->events[i], sys, slen) && s->events[i][slen] == ':' &&
		    !strcmp(s->events[i] + slen + 1, ev))
			return (ssize_t)i;
	return -1;
}

static bool has_event(const struct rt_session *s, const char *sys, const char *ev)
{
	return find_event(s, sys, ev) >= 0;
}

/* Reads the format and teaches it to the layout; switch_on() then switches it on. */
static int learn_one(struct rt_session *s, struct rt_layout *l, const char *sys, const char *ev,
		     struct rt_why *why)
{
	_cleanup_free_ char *fmt = NULL, *name = NULL;
	char **nl, **kfilter;
	bool *pinned, *refused;
	int len = 0, ret;

	if (asprintf(&name, "%s:%s", sys, ev) < 0)
		return -ENOMEM;
	fmt = tracefs_event_file_read(NULL, sys, ev, "format", &len);
	if (!fmt)
		return rt_why_set(why, -ENOENT, "reading the format of %s", name);
	ret = rt_layout_add_event(l, sys, fmt, len, NULL);
	if (ret)
		return rt_why_set(why, ret, "parsing the format of %s", name);
	nl = realloc(s->events, (s->n_events + 2) * sizeof(*nl));
	if (!nl)
		return -ENOMEM;
	s->events = nl;
	pinned = realloc(s->pinned, s->n_events + 1);
	if (!pinned)
		return -ENOMEM;
	s->pinned = pinned;
	s->pinned[s->n_events] = false;
	kfilter = realloc(s->kfilter, (s->n_events + 1) * sizeof(*kfilter));
	if (!kfilter)
		return -ENOMEM;
	s->kfilter = kfilter;
	s->kfilter[s->n_events] = NULL;
	refused = realloc(s->kfilter_refused, s->n_events + 1);
	if (!refused)
		return -ENOMEM;
	s->kfilter_refused = refused;
	s->kfilter_refused[s->n_events] = false;
	s->events[s->n_events++] = name;
	s->events[s->n_events] = NULL;
	name = NULL;
	return 0;
}

/* Every event of the tree: each system's events, ftrace's too (it has no enable file). */
static int read_catalogue(struct rt_session *s, struct rt_catalogue *cat)
{
	char **systems = tracefs_event_systems(s->tracing_dir);
	bool ftrace = false;
	int ret = 0;

	if (!systems)
		return -ENOENT;
	for (char **sys = systems; *sys; sys++)
		ftrace |= !strcmp(*sys, "ftrace");
	if (!ftrace && tracefs_event_file_exists(NULL, "ftrace", "print", "format")) {
		char **l = tracefs_list_add(systems, "ftrace");

		if (!l) {
			tracefs_list_free(systems);
			return -ENOMEM;
		}
		systems = l;
	}
	for (char **sys = systems; *sys && !ret; sys++) {
		char **events = tracefs_system_events(s->tracing_dir, *sys);

		for (char **ev = events; ev && *ev && !ret; ev++)
			ret = rt_catalogue_add(cat, *sys, *ev);
		tracefs_list_free(events);
	}
	tracefs_list_free(systems);
	rt_catalogue_sort(cat);
	return ret;
}

const struct rt_catalogue *rt_session_catalogue(struct rt_session *s, bool reread)
{
	if (s->catalogue_read && !reread)
		return &s->catalogue;
	rt_catalogue_release(&s->catalogue);
	s->catalogue_read = !read_catalogue(s, &s->catalogue);
	return &s->catalogue;
}

static int by_index(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

/* Whether catalogue event @i of a system is on once @added (sorted) is. */
static bool on_after(const struct rt_session *s, size_t i, const size_t *added, size_t n)
{
	const struct rt_event_name *e = &s->catalogue.events[i];

	return bsearch(&i, added, n, sizeof(*added), by_index) || has_event(s, e->system, e->name);
}

/* The events of the list that have an enable file, or all of them one by one. */
static int switch_on_each(struct rt_session *s, const size_t *added, size_t n, bool one_by_one,
			  FILE *set_event, struct rt_why *why)
{
	for (size_t i = 0; i < n; i++) {
		const struct rt_event_name *e = &s->catalogue.events[added[i]];

		/* ftrace:print and its kin have no enable file: their source writes them. */
		if (!tracefs_event_file_exists(s->instance, e->system, e->name, "enable"))
			continue;
		if (!one_by_one) {
			fprintf(set_event, "%s:%s\n", e->system, e->name);
			continue;
		}
		s->enable_writes++;
		if (tracefs_event_file_write(s->instance, e->system, e->name, "enable", "1") < 0)
			return rt_why_set(why, errno ? -errno : -EIO, "enabling %s:%s", e->system,
					  e->name);
	}
	return 0;
}

/*
 * Names to set_event in one open. The kernel takes one name per write() and
 * answers the rest with a short count, so the rest is written again; opened
 * to append, as truncating set_event switches every event off first.
 */
static int append_set_event(struct rt_session *s, const char *list, size_t len)
{
	_cleanup_free_ char *path = tracefs_instance_get_file(s->instance, "set_event");
	int fd, ret = 0;

	if (!path)
		return -ENOMEM;
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len && !ret) {
		ssize_t n = write(fd, list, len);

		s->enable_writes++;
		if (n <= 0)
			ret = n < 0 ? -errno : -EIO;
		else
			list += n, len -= (size_t)n;
	}
	close(fd);
	return ret;
}

/*
 * Switches on @added (catalogue indices, sorted) with as few writes as the
 * kernel allows: every event through the instance's events/enable, a system
 * whose every event is then on through its own enable file, the rest
 * through set_event, opened once. Writing each event's enable file instead
 * cost 1,336 opens and writes for '*:*' on Debian's kernel, and
 * tracefs_event_enable() a regex scan of every event for each.
 */
static int switch_on(struct rt_session *s, const size_t *added, size_t n, struct rt_why *why)
{
	const struct rt_catalogue *cat = &s->catalogue;
	_cleanup_free_ size_t *rest = calloc(n + 1, sizeof(*rest));
	_cleanup_free_ char *list = NULL;
	size_t n_rest = 0, list_len = 0;
	FILE *set_event;
	int ret = 0;

	if (!rest)
		return -ENOMEM;
	/* Every event of the tree ('*:*'): the instance's own events/enable, one write. */
	for (size_t j = 0; j < cat->n && ret == 0; j++)
		ret = !on_after(s, j, added, n);
	if (!ret && tracefs_file_exists(s->instance, "events/enable")) {
		s->enable_writes++;
		if (tracefs_instance_file_write(s->instance, "events/enable", "1") < 0)
			return rt_why_set(why, errno ? -errno : -EIO, "enabling every event");
		return 0;
	}
	ret = 0;
	for (size_t i = 0; i < n;) {
		const char *sys = cat->events[added[i]].system;
		size_t first = added[i], end = added[i], run = i;
		bool whole = true;
		_cleanup_free_ char *file = NULL;

		while (run < n && !strcmp(cat->events[added[run]].system, sys))
			run++;
		while (first && !strcmp(cat->events[first - 1].system, sys))
			first--;
		while (end < cat->n && !strcmp(cat->events[end].system, sys))
			end++;
		for (size_t j = first; j < end && whole; j++)
			whole = on_after(s, j, added, n);
		if (asprintf(&file, "events/%s/enable", sys) < 0)
			return -ENOMEM;
		if (whole && tracefs_file_exists(s->instance, file)) {
			s->enable_writes++;
			if (tracefs_instance_file_write(s->instance, file, "1") < 0)
				return rt_why_set(why, errno ? -errno : -EIO, "enabling system %s", sys);
		} else {
			for (; i < run; i++)
				rest[n_rest++] = added[i];
		}
		i = run;
	}
	if (!n_rest)
		return 0;
	set_event = open_memstream(&list, &list_len);
	if (!set_event)
		return -ENOMEM;
	ret = switch_on_each(s, rest, n_rest, false, set_event, why);
	if (fclose(set_event) || ret)
		return ret ? ret : -ENOMEM;
	if (!list_len)
		return 0;
	if (!append_set_event(s, list, list_len))
		return 0;
	/* The kernel stops at the first name it refuses: then each on its own. */
	return switch_on_each(s, rest, n_rest, true, NULL, why);
}

int rt_session_enable(struct rt_session *s, struct rt_layout *l, const struct rt_selection *sel,
		      struct rt_why *why)
{
	_cleanup_free_ size_t *added = calloc(sel->n + 1, sizeof(*added));
	uint64_t t0 = rt_monotonic_ns(), t1;
	size_t n = 0;
	int ret;

	if (!added)
		return -ENOMEM;
	/* Every format first, so that whole systems can be switched on at once. */
	for (size_t i = 0; i < sel->n; i++) {
		const struct rt_event_name *e = &s->catalogue.events[sel->events[i]];

		if (has_event(s, e->system, e->name))
			continue;
		ret = learn_one(s, l, e->system, e->name, why);
		if (ret)
			return ret;
		added[n++] = sel->events[i];
	}
	t1 = rt_monotonic_ns();
	s->learn_ns += t1 - t0;
	if (s->read_only || !n)
		return (int)n;
	qsort(added, n, sizeof(*added), by_index);
	ret = switch_on(s, added, n, why);
	s->switch_ns += rt_monotonic_ns() - t1;
	return ret ? ret : (int)n;
}

/*
 * A captured tree's pages hold every event it recorded, whatever a
 * subscriber selects: a RAW one needs each format (fanout.c sends what the
 * layout knows). A live instance records only what was switched on.
 */
int rt_session_enable_recorded(struct rt_session *s, struct rt_layout *l, struct rt_why *why)
{
	const struct rt_catalogue *cat;
	struct rt_selection sel = { 0 };
	int ret;

	if (!s->read_only)
		return 0;
	cat = rt_session_catalogue(s, false);
	sel.events = calloc(cat->n + 1, sizeof(*sel.events));
	if (!sel.events)
		return -ENOMEM;
	while (sel.n < cat->n) {
		sel.events[sel.n] = sel.n;
		sel.n++;
	}
	ret = rt_session_enable(s, l, &sel, why);
	rt_selection_release(&sel);
	return ret < 0 ? ret : 0;
}

int rt_session_enable_globs(struct rt_session *s, struct rt_layout *l,
			    const char *const *globs, struct rt_why *why)
{
	const struct rt_catalogue *cat = rt_session_catalogue(s, false);
	struct rt_selection sel;
	size_t n = 0;
	int ret;

	while (globs && globs[n])
		n++;
	ret = rt_select_events(cat, globs, n, NULL, 0, &sel, why);
	/* An event that came since the catalogue was read (a module loaded, say). */
	if (ret == -ENOENT) {
		cat = rt_session_catalogue(s, true);
		ret = rt_select_events(cat, globs, n, NULL, 0, &sel, why);
	}
	if (ret == -ENOENT && why) {
		/* why holds the glob: copied out, as it is also where the text goes. */
		char glob[sizeof(why->text)];

		memcpy(glob, why->text, sizeof(glob));
		return rt_why_set(why, ret, "no event matches '%s'", glob);
	}
	if (ret)
		return ret;
	ret = rt_session_enable(s, l, &sel, why);
	for (size_t i = 0; ret >= 0 && i < sel.n; i++) {
		const struct rt_event_name *e = &cat->events[sel.events[i]];
		ssize_t at = find_event(s, e->system, e->name);

		if (at >= 0)
			s->pinned[at] = true;
	}
	rt_selection_release(&sel);
	return ret;
}

int rt_session_disable(struct rt_session *s, size_t i)
{
	char *name = s->events[i], *colon = strchr(name, ':');
	int ret = 0;

	if (s->read_only || s->pinned[i] || !colon)
		return 0;
	*colon = '\0';
	/* The filter file keeps its text while the event is off: cleared with it. */
	if (s->kfilter[i] && !s->kfilter_refused[i] &&
	    tracefs_event_file_write(s->instance, name, colon + 1, "filter", "0") < 0)
		ret = errno ? -errno : -EIO;
	if (!ret && tracefs_event_file_exists(s->instance, name, colon + 1, "enable") &&
	    tracefs_event_file_write(s->instance, name, colon + 1, "enable", "0") < 0)
		ret = errno ? -errno : -EIO;
	*colon = ':';
	if (ret)
		return ret;
	free(name);
	free(s->kfilter[i]);
	memmove(&s->events[i], &s->events[i + 1], (s->n_events - i) * sizeof(*s->events));
	memmove(&s->pinned[i], &s->pinned[i + 1], s->n_events - i - 1);
	memmove(&s->kfilter[i], &s->kfilter[i + 1], (s->n_events - i - 1) * sizeof(*s->kfilter));
	memmove(&s->kfilter_refused[i], &s->kfilter_refused[i + 1], s->n_events - i - 1);
	s->n_events--;
	return 1;
}
