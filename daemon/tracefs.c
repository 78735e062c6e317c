// SPDX-License-Identifier: LGPL-2.1-or-later
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <event-parse.h>
#include <tracefs/tracefs.h>

#include "layout.h"
#include "read_file.h"
#include "tracefs.h"
#include "util.h"

static int count_cpus(const char *dir)
{
	char path[4096];
	int n = 0;

	for (;;) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d", dir, n);
		if (stat(path, &st) || !S_ISDIR(st.st_mode))
			return n;
		n++;
	}
}

static bool has_event(const struct rt_session *s, const char *sys, const char *ev)
{
	size_t slen = strlen(sys);

	for (size_t i = 0; i < s->n_events; i++)
		if (!strncmp(s->events[i], sys, slen) && s->events[i][slen] == ':' &&
		    !strcmp(s->events[i] + slen + 1, ev))
			return true;
	return false;
}

/* Reads the format, teaches it to the layout, then switches the event on. */
static int enable_one(struct rt_session *s, struct rt_layout *l, const char *sys, const char *ev,
		      const char **why)
{
	_cleanup_free_ char *fmt = NULL, *name = NULL, *sysre = NULL, *evre = NULL;
	char **nl;
	int len = 0, ret;

	if (asprintf(&name, "%s:%s", sys, ev) < 0)
		return -ENOMEM;
	fmt = tracefs_event_file_read(NULL, sys, ev, "format", &len);
	if (!fmt) {
		*why = "reading an event format";
		return -ENOENT;
	}
	ret = rt_layout_add_event(l, sys, fmt, len, NULL);
	if (ret) {
		*why = "parsing an event format";
		return ret;
	}
	/*
	 * libtracefs takes regexes: anchor the exact names. Events without an
	 * enable file (ftrace:print and the other ftrace ones) are written
	 * whenever their source is used: there is nothing to switch on.
	 */
	if (!s->read_only && tracefs_event_file_exists(s->instance, sys, ev, "enable")) {
		if (asprintf(&sysre, "^%s$", sys) < 0 || asprintf(&evre, "^%s$", ev) < 0)
			return -ENOMEM;
		if (tracefs_event_enable(s->instance, sysre, evre)) {
			*why = "enabling an event";
			return -EIO;
		}
	}
	nl = realloc(s->events, (s->n_events + 2) * sizeof(*nl));
	if (!nl)
		return -ENOMEM;
	s->events = nl;
	s->events[s->n_events++] = name;
	s->events[s->n_events] = NULL;
	name = NULL;
	return 0;
}

/* Adds name to a tracefs list unless it is there; -ENOMEM, or 0. */
static int add_system(char ***list, const char *name)
{
	char **l;

	for (l = *list; *l; l++)
		if (!strcmp(*l, name))
			return 0;
	l = tracefs_list_add(*list, name);
	if (!l)
		return -ENOMEM;
	*list = l;
	return 0;
}

/*
 * Every event the globs match, once per glob that matches it; enabled (and
 * counted in *n) when l is given, only counted otherwise.
 */
static int walk_matches(struct rt_session *s, char **systems, const char *const *globs,
			struct rt_layout *l, unsigned int *n, const char **why)
{
	int ret = 0;

	for (const char *const *g = globs; g && *g && !ret; g++) {
		const char *colon = strchr(*g, ':');
		_cleanup_free_ char *sysglob = colon ? strndup(*g, colon - *g) : strdup("*");
		const char *evglob = colon ? colon + 1 : *g;
		bool matched = false;

		if (!sysglob)
			return -ENOMEM;
		for (char **sys = systems; *sys && !ret; sys++) {
			char **events;

			if (fnmatch(sysglob, *sys, 0))
				continue;
			events = tracefs_system_events(s->tracing_dir, *sys);
			for (char **ev = events; ev && *ev && !ret; ev++) {
				if (fnmatch(evglob, *ev, 0))
					continue;
				matched = true;
				if (!l) {
					(*n)++;
				} else if (!has_event(s, *sys, *ev)) {
					ret = enable_one(s, l, *sys, *ev, why);
					*n += !ret;
				}
			}
			tracefs_list_free(events);
		}
		if (!ret && !matched) {
			*why = *g;	/* the glob that matched nothing */
			ret = -ENOENT;
		}
	}
	return ret;
}

int rt_session_enable(struct rt_session *s, struct rt_layout *l, const char *const *globs,
		      unsigned int max_matches, const char **why)
{
	char **systems = tracefs_event_systems(s->tracing_dir);
	unsigned int matches = 0, added = 0;
	int ret;

	if (!systems) {
		*why = "listing event systems";
		return -ENOENT;
	}
	/* tracefs_event_systems() leaves out systems without an enable file: ftrace's. */
	if (tracefs_event_file_exists(NULL, "ftrace", "print", "format") &&
	    add_system(&systems, "ftrace")) {
		tracefs_list_free(systems);
		return -ENOMEM;
	}
	/* Counted before anything is switched on: a refused subscription enables nothing. */
	ret = max_matches ? walk_matches(s, systems, globs, NULL, &matches, why) : 0;
	if (!ret && matches > max_matches) {
		*why = "the patterns match more events than max_events allows";
		ret = -E2BIG;
	}
	if (!ret)
		ret = walk_matches(s, systems, globs, l, &added, why);
	tracefs_list_free(systems);
	return ret ? ret : (int)added;
}

int rt_session_open(struct rt_session **out, const struct rt_session_opts *o, const char **why)
{
	struct rt_session *s;
	const char *top;
	int ret;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (o->tracing_dir) {
		_cleanup_free_ char *dir = strdup(o->tracing_dir);

		/* Also stops libtracefs from mounting anything on its own. */
		if (!dir || tracefs_set_tracing_dir(dir)) {
			*why = "using the tracing directory";
			ret = -ENOENT;
			goto fail;
		}
	}
	top = tracefs_tracing_dir();
	if (!top) {
		*why = "finding tracefs (is it mounted, and are we root?)";
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
		const char *name = o->instance_name ? o->instance_name : "ringtap";

		if (tracefs_instance_exists(name)) {
			/* Left by a run that did not exit cleanly: nobody else names it ours. */
			struct tracefs_instance *stale = tracefs_instance_alloc(NULL, name);

			if (!stale || tracefs_instance_destroy(stale)) {
				tracefs_instance_free(stale);
				*why = "removing the stale instance";
				ret = -errno ? -errno : -EBUSY;
				goto fail;
			}
			tracefs_instance_free(stale);
			s->reclaimed = true;
		}
		s->instance = tracefs_instance_create(name);
		if (!s->instance) {
			*why = "creating the tracefs instance";
			ret = errno ? -errno : -EIO;
			goto fail;
		}
		s->owned = true;
		/* Instances start with tracing on: nothing is recorded until we start. */
		tracefs_trace_off(s->instance);
		if (o->buffer_kb &&
		    tracefs_instance_set_buffer_size(s->instance, o->buffer_kb, -1)) {
			*why = "setting the buffer size";
			ret = errno ? -errno : -EINVAL;
			goto fail;
		}
		if (o->clock && tracefs_instance_file_write(s->instance, "trace_clock", o->clock) < 0) {
			*why = "setting the trace clock";
			ret = -EINVAL;
			goto fail;
		}
	}
	{
		_cleanup_free_ char *dir = s->instance ? tracefs_instance_get_dir(s->instance) :
							 strdup(s->tracing_dir);

		s->ncpus = dir ? count_cpus(dir) : 0;
	}
	if (!s->ncpus) {
		*why = "finding per_cpu directories";
		ret = -ENOENT;
		goto fail;
	}
	if (!s->read_only) {
		ssize_t kb = tracefs_instance_get_buffer_size(s->instance, 0);

		s->buffer_kb = kb > 0 ? (size_t)kb : 0;
	}
	s->clock = tracefs_get_clock(s->instance);
	*out = s;
	return 0;
fail:
	rt_session_close(s);
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

void rt_session_close(struct rt_session *s)
{
	if (!s)
		return;
	if (s->instance) {
		if (s->owned)
			tracefs_instance_destroy(s->instance);
		tracefs_instance_free(s->instance);
	}
	for (size_t i = 0; i < s->n_events; i++)
		free(s->events[i]);
	free(s->events);
	free(s->clock);
	free(s->tracing_dir);
	free(s);
}

int rt_session_layout(struct rt_session *s, struct rt_layout **out, const char **why)
{
	_cleanup_free_ char *hp = NULL, *he = NULL, *fmt = NULL;
	struct rt_layout *l = NULL;
	int hp_len = 0, he_len = 0, len = 0, ret;

	/* The headers live only at the top level, instances share them. */
	hp = tracefs_instance_file_read(NULL, "events/header_page", &hp_len);
	he = tracefs_instance_file_read(NULL, "events/header_event", &he_len);
	if (!hp || !he) {
		*why = "reading events/header_page and events/header_event";
		return -ENOENT;
	}
	ret = rt_layout_new(&l, hp, hp_len, he, he_len, false);
	if (ret) {
		*why = ret == -EPROTONOSUPPORT ? "header_page or header_event describes a ring buffer "
						 "this libtraceevent cannot decode" :
						 "parsing header_page and header_event";
		return ret;
	}
	/*
	 * The common header is learned from ftrace:print, which every kernel
	 * with tracing has, so it is known before any event is enabled.
	 */
	fmt = tracefs_event_file_read(NULL, "ftrace", "print", "format", &len);
	if (!fmt) {
		*why = "reading events/ftrace/print/format";
		ret = -ENOENT;
		goto fail;
	}
	ret = rt_layout_add_event(l, "ftrace", fmt, len, NULL);
	if (ret) {
		*why = "parsing events/ftrace/print/format";
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
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "entries:", offsetof(struct rt_cpu_stats, entries) },
		{ "overrun:", offsetof(struct rt_cpu_stats, overrun) },
		{ "commit overrun:", offsetof(struct rt_cpu_stats, commit_overrun) },
		{ "dropped events:", offsetof(struct rt_cpu_stats, dropped_events) },
		{ "read events:", offsetof(struct rt_cpu_stats, read_events) },
	};
	_cleanup_free_ char *path = NULL, *text = NULL;
	int len = 0;

	memset(st, 0, sizeof(*st));
	if (asprintf(&path, "per_cpu/cpu%d/stats", cpu) < 0)
		return -ENOMEM;
	text = tracefs_instance_file_read(s->instance, path, &len);
	if (!text)
		return -ENOENT;
	for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
			if (!strncmp(line, keys[i].key, strlen(keys[i].key)))
				*(unsigned long long *)((char *)st + keys[i].off) =
					strtoull(line + strlen(keys[i].key), NULL, 10);
	return 0;
}
