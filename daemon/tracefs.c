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
#include "tracefs-session.h"
#include "util.h"


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

/*
 * The instance a previous ringtapd handed over, as it is: tracing stays
 * on and nothing is written that would empty its buffers (trace_clock
 * does) or resize them, unless the settings now ask otherwise.
 */
static int adopt_instance(struct rt_session *s, const struct rt_session_opts *o, const char *name,
			  struct rt_why *why)
{
	_cleanup_free_ char *clock = NULL;

	s->instance = tracefs_instance_alloc(NULL, name);
	if (!s->instance)
		return rt_why_set(why, errno ? -errno : -ENOMEM, "adopting the tracefs instance");
	s->adopted = true;
	/*
	 * The kernel rounds a size to its pages (8192 reads back as 8195), so
	 * the setting, not what the kernel reports, says whether it changed:
	 * a resize of a live buffer, even to the size it has, lost a page.
	 */
	if (o->buffer_kb && o->buffer_kb != o->adopt_buffer_kb &&
	    tracefs_instance_set_buffer_size(s->instance, o->buffer_kb, -1))
		return rt_why_set(why, errno ? -errno : -EINVAL, "setting the buffer size");
	clock = tracefs_get_clock(s->instance);
	if (o->clock && (!clock || strcmp(clock, o->clock)) &&
	    tracefs_instance_file_write(s->instance, "trace_clock", o->clock) < 0)
		return rt_why_set(why, -EINVAL, "setting the trace clock");
	return 0;
}

/*
 * Our instance: adopted as it is after a restart, else made anew (a stale
 * one of the same name removed first) with tracing off, the buffer size
 * and clock set. 0, or -errno with why.
 */
static int open_instance(struct rt_session *s, const struct rt_session_opts *o, struct rt_why *why)
{
	const char *name = o->instance_name ? o->instance_name :
					       rt_config_default_str(RT_CONF_INSTANCE);

	if (o->adopt && tracefs_instance_exists(name)) {
		int ret = adopt_instance(s, o, name, why);

		if (ret)
			return ret;
	} else if (tracefs_instance_exists(name)) {
		/* Left by a run that did not exit cleanly: nobody else names it ours. */
		struct tracefs_instance *stale = tracefs_instance_alloc(NULL, name);

		if (!stale || tracefs_instance_destroy(stale)) {
			tracefs_instance_free(stale);
			return rt_why_set(why, errno ? -errno : -EBUSY, "removing the stale instance");
		}
		tracefs_instance_free(stale);
		s->reclaimed = true;
	}
	if (!s->instance)
		s->instance = tracefs_instance_create(name);
	if (!s->instance)
		return rt_why_set(why, errno ? -errno : -EIO, "creating the tracefs instance");
	s->owned = true;
	if (s->adopted)
		return 0;
	/* Instances start with tracing on: nothing is recorded until we start. */
	tracefs_trace_off(s->instance);
	if (o->buffer_kb && tracefs_instance_set_buffer_size(s->instance, o->buffer_kb, -1))
		return rt_why_set(why, errno ? -errno : -EINVAL, "setting the buffer size");
	if (o->clock && tracefs_instance_file_write(s->instance, "trace_clock", o->clock) < 0)
		return rt_why_set(why, -EINVAL, "setting the trace clock");
	return 0;
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
	if (!s->read_only && (ret = open_instance(s, o, why)))
		goto fail;
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

bool rt_session_adopted(const struct rt_session *s)
{
	return s->adopted;
}

void rt_session_disown(struct rt_session *s)
{
	s->owned = false;
}

int rt_session_give_trace_fd(struct rt_session *s, int cpu, int fd)
{
	if (cpu < 0 || cpu >= s->ncpus)
		return -ERANGE;
	if (!s->trace_fds) {
		s->trace_fds = malloc((size_t)s->ncpus * sizeof(*s->trace_fds));
		if (!s->trace_fds)
			return -ENOMEM;
		for (int i = 0; i < s->ncpus; i++)
			s->trace_fds[i] = -1;
	}
	if (s->trace_fds[cpu] >= 0)
		close(s->trace_fds[cpu]);
	s->trace_fds[cpu] = fd;
	return 0;
}

int rt_session_take_trace_fd(struct rt_session *s, int cpu)
{
	int fd;

	if (!s->trace_fds || cpu < 0 || cpu >= s->ncpus)
		return -1;
	fd = s->trace_fds[cpu];
	s->trace_fds[cpu] = -1;
	return fd;
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
	for (int i = 0; s->trace_fds && i < s->ncpus; i++)
		if (s->trace_fds[i] >= 0)
			close(s->trace_fds[i]);
	free(s->trace_fds);
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
