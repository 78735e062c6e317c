/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * tracefs-session: struct rt_session, for tracefs.c (the instance, buffers,
 * clock, filters, texts) and tracefs-events.c (the catalogue, events switched
 * on and off) alone. Everyone else asks through tracefs.h.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "select.h"
#include "tracefs.h"

struct tracefs_instance;

struct rt_session {
	struct tracefs_instance *instance;	/* NULL: top level of tracing_dir */
	char *tracing_dir;
	bool reclaimed;			/* a stale instance of ours was removed first */
	bool owned;			/* remove the instance on close */
	bool adopted;			/* handed over by a previous ringtapd */
	int *trace_fds;			/* per CPU: handed back by the fd store, -1: none */
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
