// SPDX-License-Identifier: LGPL-2.1-or-later
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <tracefs/tracefs.h>

#include "config.h"
#include "layout.h"
#include "read_file.h"
#include "select.h"
#include "tracefs.h"
#include "util.h"

struct rt_session {
	struct tracefs_instance *instance;	/* NULL: top level of tracing_dir */
	char *tracing_dir;
	bool reclaimed;			/* a stale instance of ours was removed first */
	bool owned;			/* remove the instance on close */
	bool read_only;			/* a fixture tree: write nothing */
	bool symbols_loaded;
	char *clock;			/* the clock in force, as the kernel reports it */
	size_t buffer_kb;		/* what the kernel took, not what was asked */
	int ncpus;			/* per_cpu/cpuN directories present */
	int cpu_gap;			/* the first cpuN missing below one present, or -1 */
	char **events;			/* "system:event" of every event enabled, NULL-terminated */
	bool *pinned;			/* per event: enabled by the settings, stays on */
	/*
	 * Per event: the filter last written to the kernel, or NULL; when the
	 * kernel refused it, the event has none and it is not tried again.
	 */
	char **kfilter;
	bool *kfilter_refused;
	size_t n_events;
	unsigned int enable_writes;	/* tracefs writes made to switch events on */
	uint64_t learn_ns, switch_ns;	/* time spent reading formats and switching on */
	char *kpids;			/* set_event_pid as last written; NULL: every pid */
	struct rt_catalogue catalogue;	/* every event the tree offers, read once */
	int *stats_fds;			/* per CPU: per_cpu/cpuN/stats, opened when first read */
	bool catalogue_read;
};

int rt_session_ncpus(const struct rt_session *s)
{
	return s->ncpus;
}

struct tracefs_instance *rt_session_instance(const struct rt_session *s)
{
	return s->instance;
}

const char *rt_session_clock(const struct rt_session *s)
{
	return s->clock;
}

size_t rt_session_buffer_kb(const struct rt_session *s)
{
	return s->buffer_kb;
}

bool rt_session_read_only(const struct rt_session *s)
{
	return s->read_only;
}

bool rt_session_owned(const struct rt_session *s)
{
	return s->owned;
}

bool rt_session_reclaimed(const struct rt_session *s)
{
	return s->reclaimed;
}

const char *const *rt_session_events(const struct rt_session *s, size_t *n)
{
	if (n)
		*n = s->n_events;
	return (const char *const *)s->events;
}

const bool *rt_session_pinned(const struct rt_session *s)
{
	return s->pinned;
}

struct rt_session_costs rt_session_costs(const struct rt_session *s)
{
	return (struct rt_session_costs){ s->n_events, s->enable_writes, s->learn_ns, s->switch_ns };
}

int rt_session_cpu_gap(const struct rt_session *s)
{
	return s->cpu_gap;
}

static bool has_cpu(const char *dir, int n)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/per_cpu/cpu%d", dir, n);
	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/*
 * CPUs are read from 0 up to the first one missing; a cpuN past that gap
 * (a captured tree with a CPU left out) sets cpu_gap for the caller to say.
 */
static int count_cpus(struct rt_session *s, const char *dir)
{
	char path[4096];
	struct dirent *e;
	DIR *per_cpu;
	int n = 0;

	while (has_cpu(dir, n))
		n++;
	snprintf(path, sizeof(path), "%s/per_cpu", dir);
	per_cpu = opendir(path);
	while (per_cpu && (e = readdir(per_cpu))) {
		unsigned int cpu;
		int end = 0;

		if (sscanf(e->d_name, "cpu%u%n", &cpu, &end) == 1 && !e->d_name[end] &&
		    cpu > (unsigned int)n)
			s->cpu_gap = n;
	}
	if (per_cpu)
		closedir(per_cpu);
	return n;
}

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

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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
	uint64_t t0 = monotonic_ns(), t1;
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
	t1 = monotonic_ns();
	s->learn_ns += t1 - t0;
	if (s->read_only || !n)
		return (int)n;
	qsort(added, n, sizeof(*added), by_index);
	ret = switch_on(s, added, n, why);
	s->switch_ns += monotonic_ns() - t1;
	return ret ? ret : (int)n;
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

int rt_session_open(struct rt_session **out, const struct rt_session_opts *o,
		    struct rt_why *why)
{
	struct rt_session *s;
	const char *top;
	int ret;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cpu_gap = -1;
	if (o->tracing_dir) {
		_cleanup_free_ char *dir = strdup(o->tracing_dir);
		struct stat st;

		/* libtracefs takes any path: a wrong one would be found out later, unnamed. */
		ret = stat(o->tracing_dir, &st) ? -errno : S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
		if (ret) {
			rt_why_set(why, 0, "tracing directory %s", o->tracing_dir);
			goto fail;
		}
		/* Also stops libtracefs from mounting anything on its own. */
		if (!dir || tracefs_set_tracing_dir(dir)) {
			rt_why_set(why, 0, "using the tracing directory");
			ret = -ENOENT;
			goto fail;
		}
	}
	top = tracefs_tracing_dir();
	if (!top) {
		rt_why_set(why, 0, "finding tracefs (is it mounted, and are we root?)");
		ret = -ENOENT;
		goto fail;
	}
	s->tracing_dir = strdup(top);
	if (!s->tracing_dir) {
		ret = -ENOMEM;
		goto fail;
	}
	s->read_only = o->tracing_dir && !o->instance_name;
	if (!s->read_only) {
		const char *name = o->instance_name ? o->instance_name :
						       rt_config_default_str(RT_CONF_INSTANCE);

		if (tracefs_instance_exists(name)) {
			/* Left by a run that did not exit cleanly: nobody else names it ours. */
			struct tracefs_instance *stale = tracefs_instance_alloc(NULL, name);

			if (!stale || tracefs_instance_destroy(stale)) {
				tracefs_instance_free(stale);
				rt_why_set(why, 0, "removing the stale instance");
				ret = -errno ? -errno : -EBUSY;
				goto fail;
			}
			tracefs_instance_free(stale);
			s->reclaimed = true;
		}
		s->instance = tracefs_instance_create(name);
		if (!s->instance) {
			rt_why_set(why, 0, "creating the tracefs instance");
			ret = errno ? -errno : -EIO;
			goto fail;
		}
		s->owned = true;
		/* Instances start with tracing on: nothing is recorded until we start. */
		tracefs_trace_off(s->instance);
		if (o->buffer_kb &&
		    tracefs_instance_set_buffer_size(s->instance, o->buffer_kb, -1)) {
			rt_why_set(why, 0, "setting the buffer size");
			ret = errno ? -errno : -EINVAL;
			goto fail;
		}
		if (o->clock && tracefs_instance_file_write(s->instance, "trace_clock", o->clock) < 0) {
			rt_why_set(why, 0, "setting the trace clock");
			ret = -EINVAL;
			goto fail;
		}
	}
	{
		_cleanup_free_ char *dir = s->instance ? tracefs_instance_get_dir(s->instance) :
							 strdup(s->tracing_dir);

		s->ncpus = dir ? count_cpus(s, dir) : 0;
		if (!s->ncpus) {
			rt_why_set(why, 0, "no directory per_cpu/cpu0 in %s", dir ?: "?");
			ret = -ENOENT;
			goto fail;
		}
	}
	if (!s->read_only) {
		ssize_t kb = tracefs_instance_get_buffer_size(s->instance, 0);

		s->buffer_kb = kb > 0 ? (size_t)kb : 0;
	}
	s->clock = tracefs_get_clock(s->instance);
	*out = s;
	return 0;
fail:
	(void)rt_session_close(s);
	return ret;
}

int rt_session_set_buffer_kb(struct rt_session *s, size_t kb)
{
	ssize_t took;

	if (!s->instance || s->read_only)
		return -EROFS;
	if (tracefs_instance_set_buffer_size(s->instance, kb, -1))
		return errno ? -errno : -EINVAL;
	took = tracefs_instance_get_buffer_size(s->instance, 0);
	s->buffer_kb = took > 0 ? (size_t)took : 0;
	return 0;
}

int rt_session_set_buffer_percent(struct rt_session *s, unsigned int percent)
{
	char text[16];

	if (!s->instance || s->read_only)
		return -EROFS;
	snprintf(text, sizeof(text), "%u", percent);
	return tracefs_instance_file_write(s->instance, "buffer_percent", text) < 0 ? -EIO : 0;
}

int rt_session_start(struct rt_session *s)
{
	if (s->read_only)
		return 0;
	return tracefs_trace_on(s->instance) ? -EIO : 0;
}

int rt_session_stop(struct rt_session *s)
{
	if (s->read_only)
		return 0;
	return tracefs_trace_off(s->instance) ? -EIO : 0;
}

int rt_session_set_filter(struct rt_session *s, size_t i, const char *filter)
{
	char *name = s->events[i], *colon = strchr(name, ':');
	char *copy = NULL;
	int ret = 0;

	if (s->read_only || !colon)
		return 0;
	if (!filter == !s->kfilter[i] && (!filter || !strcmp(filter, s->kfilter[i])))
		return 0;
	if (filter && !(copy = strdup(filter)))
		return -ENOMEM;
	*colon = '\0';
	/* "0" clears an event's filter. */
	if (tracefs_event_file_write(s->instance, name, colon + 1, "filter", filter ?: "0") < 0) {
		ret = errno ? -errno : -EIO;
		(void)tracefs_event_file_write(s->instance, name, colon + 1, "filter", "0");
	}
	*colon = ':';
	free(s->kfilter[i]);
	s->kfilter[i] = copy;
	s->kfilter_refused[i] = ret != 0;
	return ret ? ret : 1;
}

int rt_session_set_pids(struct rt_session *s, const char *pids)
{
	char *copy = NULL;
	int ret = 0;

	if (s->read_only || (!pids == !s->kpids && (!pids || !strcmp(pids, s->kpids))))
		return 0;
	if (pids && !(copy = strdup(pids)))
		return -ENOMEM;
	/* Opened for writing with O_TRUNC, the list is emptied first: a write replaces it. */
	if (pids ? tracefs_instance_file_write(s->instance, "set_event_pid", pids) < 0 :
		   tracefs_instance_file_clear(s->instance, "set_event_pid") < 0) {
		ret = errno ? -errno : -EIO;
		(void)tracefs_instance_file_clear(s->instance, "set_event_pid");
		free(copy);
		copy = NULL;
	}
	free(s->kpids);
	s->kpids = copy;
	return ret ? ret : 1;
}

int rt_session_exclude_self(struct rt_session *s)
{
	char pid[24];

	if (s->read_only)
		return 0;
	if (tracefs_option_enable(s->instance, TRACEFS_OPTION_EVENT_FORK))
		return errno ? -errno : -EIO;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (tracefs_instance_file_write(s->instance, "set_event_notrace_pid", pid) < 0)
		return errno ? -errno : -EIO;
	return 0;
}

int rt_session_close(struct rt_session *s)
{
	int ret = 0;

	if (!s)
		return 0;
	/* An open file of the instance keeps it busy: rmdir would fail. */
	for (int i = 0; s->stats_fds && i < s->ncpus; i++)
		if (s->stats_fds[i] >= 0)
			close(s->stats_fds[i]);
	free(s->stats_fds);
	if (s->instance) {
		if (s->owned && tracefs_instance_destroy(s->instance))
			ret = errno ? -errno : -EIO;
		tracefs_instance_free(s->instance);
	}
	for (size_t i = 0; i < s->n_events; i++)
		free(s->events[i]);
	free(s->events);
	free(s->pinned);
	for (size_t i = 0; s->kfilter && i < s->n_events; i++)
		free(s->kfilter[i]);
	free(s->kfilter);
	free(s->kfilter_refused);
	free(s->kpids);
	rt_catalogue_release(&s->catalogue);
	free(s->clock);
	free(s->tracing_dir);
	free(s);
	return ret;
}

int rt_session_layout(struct rt_session *s, struct rt_layout **out, struct rt_why *why)
{
	_cleanup_free_ char *hp = NULL, *he = NULL, *fmt = NULL;
	struct rt_layout *l = NULL;
	int hp_len = 0, he_len = 0, len = 0, ret;

	/* The headers live only at the top level, instances share them. */
	hp = tracefs_instance_file_read(NULL, "events/header_page", &hp_len);
	he = tracefs_instance_file_read(NULL, "events/header_event", &he_len);
	if (!hp || !he)
		return rt_why_set(why, -ENOENT, "reading events/header_page and events/header_event");
	ret = rt_layout_new(&l, hp, hp_len, he, he_len, false);
	if (ret == -EPROTONOSUPPORT)
		return rt_why_set(why, ret, "header_page or header_event describes a ring buffer "
				  "this libtraceevent cannot decode");
	if (ret)
		return rt_why_set(why, ret, "parsing header_page and header_event");
	/*
	 * The common header is learned from ftrace:print, which every kernel
	 * with tracing has, so it is known before any event is enabled.
	 */
	fmt = tracefs_event_file_read(NULL, "ftrace", "print", "format", &len);
	if (!fmt) {
		rt_why_set(why, 0, "reading events/ftrace/print/format");
		ret = -ENOENT;
		goto fail;
	}
	ret = rt_layout_add_event(l, "ftrace", fmt, len, NULL);
	if (ret) {
		rt_why_set(why, 0, "parsing events/ftrace/print/format");
		goto fail;
	}
	*out = l;
	return 0;
fail:
	rt_layout_free(l);
	return ret;
}

static bool has_pointer_field(struct rt_layout *l)
{
	/* Not tep_list_events(): its cached list misses events parsed after the first call. */
	for (int i = 0; i < tep_get_events_count(l->tep); i++) {
		struct tep_event *ev = tep_get_event(l->tep, i);

		for (struct tep_format_field *f = ev ? ev->format.fields : NULL; f; f = f->next)
			if (f->flags & TEP_FIELD_IS_POINTER)
				return true;
	}
	return false;
}

static char *kallsyms_path(const struct rt_session *s)
{
	char *path = NULL;

	if (s->read_only)
		return asprintf(&path, "%s/kallsyms", s->tracing_dir) < 0 ? NULL : path;
	return strdup("/proc/kallsyms");
}

int rt_session_symbols(struct rt_session *s, struct rt_layout *l)
{
	_cleanup_free_ char *path = NULL, *text = NULL;
	size_t len;
	int n = 0;

	if (s->symbols_loaded || !has_pointer_field(l))
		return 0;
	s->symbols_loaded = true;
	path = kallsyms_path(s);
	if (!path)
		return -ENOMEM;
	if (rt_read_file(path, 0, &text, &len))
		return 0;
	if (tep_parse_kallsyms(l->tep, text))
		return -EINVAL;
	for (char *p = text; (p = strchr(p, '\n')); p++)
		n++;
	return n;
}

int rt_session_read_text(struct rt_session *s, const char *name, char **text, size_t *len)
{
	_cleanup_free_ char *path = NULL;

	if (!strcmp(name, "kallsyms"))
		path = kallsyms_path(s);
	else if (asprintf(&path, "%s/%s", s->tracing_dir, name) < 0)
		path = NULL;
	if (!path)
		return -ENOMEM;
	return rt_read_file(path, 0, text, len);
}

int rt_session_cpu_stats(struct rt_session *s, int cpu, struct rt_cpu_stats *st)
{
	char text[1024], path[64];
	ssize_t n;

	memset(st, 0, sizeof(*st));
	if (cpu < 0 || cpu >= s->ncpus)
		return -EINVAL;
	/* Kept open: read at every page that lost events without saying how many. */
	if (!s->stats_fds) {
		s->stats_fds = calloc((size_t)s->ncpus, sizeof(*s->stats_fds));
		if (!s->stats_fds)
			return -ENOMEM;
		for (int i = 0; i < s->ncpus; i++)
			s->stats_fds[i] = -1;
	}
	if (s->stats_fds[cpu] < 0) {
		snprintf(path, sizeof(path), "per_cpu/cpu%d/stats", cpu);
		s->stats_fds[cpu] = tracefs_instance_file_open(s->instance, path, O_RDONLY);
		if (s->stats_fds[cpu] < 0)
			return -ENOENT;
	}
	n = pread(s->stats_fds[cpu], text, sizeof(text) - 1, 0);
	if (n < 0)
		return -errno;
	text[n] = '\0';
	rt_cpu_stats_parse(text, st);
	return 0;
}
