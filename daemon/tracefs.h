/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * tracefs: ringtapd's session with the kernel's tracing file system.
 *
 * Owns the private instance (created, reclaimed when a crashed run left it,
 * removed on a clean exit), its per-CPU buffer size, trace clock, enabled
 * events and tracing switch, and reads the texts the layout is built from.
 * With a tracing directory given (a captured fixture tree) it uses that
 * directory's top level as it is and changes nothing.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "select.h"
#include "why.h"

struct rt_cpu_stats;
struct rt_layout;
struct tracefs_instance;

struct rt_session_opts {
	const char *tracing_dir;	/* NULL: the system's tracefs */
	const char *instance_name;	/* NULL with tracing_dir: use the top level */
	size_t buffer_kb;		/* per CPU; 0 leaves the kernel's default */
	const char *clock;		/* NULL leaves the kernel's choice */
};

/* Opaque: tracefs.c alone reads and writes it; the rest asks through these. */
struct rt_session;

int rt_session_ncpus(const struct rt_session *session);
/* libtracefs's instance, for the CPU readers; NULL: the top level of the tree. */
struct tracefs_instance *rt_session_instance(const struct rt_session *session);
/* The clock in force, as the kernel reports it; NULL when it could not be read. */
const char *rt_session_clock(const struct rt_session *session);
/* Per CPU, what the kernel took, not what was asked; 0: unknown. */
size_t rt_session_buffer_kb(const struct rt_session *session);
/* A captured tree: nothing is written. */
bool rt_session_read_only(const struct rt_session *session);
/* The instance is ours: made by us, removed at the close. */
bool rt_session_owned(const struct rt_session *session);
/* A stale instance of ours was removed first. */
bool rt_session_reclaimed(const struct rt_session *session);
/*
 * The first per_cpu/cpuN missing below one that is there (a captured tree
 * with a CPU left out), or -1: only the CPUs below it are read.
 */
int rt_session_cpu_gap(const struct rt_session *session);
/* "system:event" of every event on (n of them, when n is not NULL); valid until the next change. */
const char *const *rt_session_events(const struct rt_session *session, size_t *n);
/* Per event of rt_session_events(): enabled by the settings, stays on. */
const bool *rt_session_pinned(const struct rt_session *session);
/* What switching events on cost: tracefs writes, time reading formats and switching. */
struct rt_session_costs {
	size_t n_events;
	unsigned int enable_writes;
	uint64_t learn_ns, switch_ns;
};
struct rt_session_costs rt_session_costs(const struct rt_session *session);


/* -errno; why names the step that failed, for the one log line at the edge. */
int rt_session_open(struct rt_session **out, const struct rt_session_opts *opts,
		    struct rt_why *why);
int rt_session_start(struct rt_session *session);
/* Resizes every CPU's buffer of our instance (a reload); buffer_kb then says what the kernel took. */
int rt_session_set_buffer_kb(struct rt_session *session, size_t kb);
int rt_session_stop(struct rt_session *session);
/*
 * The instance's buffer_percent: how full a CPU's buffer gets before poll()
 * on its trace_pipe_raw says readable (0: any data). A poller registered
 * before the change must register again to wait on the right queue.
 */
int rt_session_set_buffer_percent(struct rt_session *session, unsigned int percent);
/*
 * Leaves this task, and every task it starts from now on, out of the
 * instance's events (set_event_notrace_pid with the event-fork option).
 */
int rt_session_exclude_self(struct rt_session *session);
/*
 * Switches events[i] off and drops it from the list, unless the settings
 * enabled it: 1 when it did, 0 when it stays, -errno.
 */
int rt_session_disable(struct rt_session *session, size_t i);
/*
 * Writes the kernel filter of events[i] (NULL: none) when it differs from
 * the one in force: 1 when written, 0 when unchanged, -errno when the kernel
 * refused it (then the event has none).
 */
int rt_session_set_filter(struct rt_session *session, size_t i, const char *filter);
/*
 * Writes the instance's set_event_pid (pids "1 42 ...", NULL: every pid)
 * when it differs from the list in force: 1 when written, 0 when unchanged,
 * -errno when the kernel refused it (then every pid is written).
 */
int rt_session_set_pids(struct rt_session *session, const char *pids);
/* Removes an instance ringtapd made: -errno when the kernel kept it. */
int rt_session_close(struct rt_session *session);

/* Builds the layout from header_page, header_event and the common header. */
int rt_session_layout(struct rt_session *session, struct rt_layout **out, struct rt_why *why);

/*
 * Every event the tree offers (events/<system>/<name>), read on the first
 * call and kept; reread reads it again (an event that was not there before:
 * a module loaded since).
 */
const struct rt_catalogue *rt_session_catalogue(struct rt_session *session, bool reread);

/*
 * Enables the selected events of the catalogue that are not on yet: their
 * formats go into the layout first, so no record arrives that the layout
 * cannot decode. Returns how many were added, or -errno with why.
 */
int rt_session_enable(struct rt_session *session, struct rt_layout *layout,
		      const struct rt_selection *selection, struct rt_why *why);
/*
 * The same for globs (NULL-terminated) with no limit: the configured events.
 * -ENOENT with "no event matches 'GLOB'".
 */
int rt_session_enable_globs(struct rt_session *session, struct rt_layout *layout,
			    const char *const *globs, struct rt_why *why);

/* A captured tree (read-only): every event it has a format for, as its pages may hold any. */
int rt_session_enable_recorded(struct rt_session *session, struct rt_layout *layout,
			       struct rt_why *why);

/*
 * Loads kernel symbols into the layout's tep when a selected event has a
 * pointer field, so pointers print as symbols: /proc/kallsyms live, the
 * tree's "kallsyms" file for a captured tree. Returns the number of symbols
 * loaded, 0 when none were needed or none can be read (tinyconfig kernels
 * have no kallsyms), or -errno.
 */
int rt_session_symbols(struct rt_session *session, struct rt_layout *layout);

/*
 * A text of the top level a trace.dat carries: "kallsyms" (/proc/kallsyms,
 * or the captured tree's copy), "printk_formats", "saved_cmdlines".
 * *text is NUL-terminated; the caller frees it.
 */
int rt_session_read_text(struct rt_session *session, const char *name, char **text, size_t *len);

/* Reads per_cpu/cpuN/stats (kept open): the kernel's own loss counters. */
int rt_session_cpu_stats(struct rt_session *session, int cpu, struct rt_cpu_stats *stats);
