/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * reload_plan: what a changed settings file means for a running daemon, decided
 * apart from doing it (reload_plan.c, pure: two settings in, a plan out).
 * reload.c, the SIGHUP handler, reads the file, logs the plan and carries
 * it out against the kernel, the server and the loop.
 */
#include <stdbool.h>
#include <stdint.h>

#include "config.h"

struct rt_reload_plan {
	uint32_t applied;	/* bit per key: changed and reloadable, in force from now */
	uint32_t deferred;	/* bit per key: changed, but only a restart applies it */
	bool resize_buffers;	/* buffer_kb changed to a size (0 leaves the kernel's) */
	bool enable_events;	/* events changed to a list: what it adds is switched on */
	bool write_wake;	/* wake_percent changed: buffer_percent now, unless idle */
};

/* in_force against next: what changed, what a running daemon takes of it, what waits. */
void rt_reload_plan(const struct rt_config *in_force, const struct rt_config *next,
		    struct rt_reload_plan *plan);

static inline bool rt_reload_applies(const struct rt_reload_plan *plan, enum rt_config_key key)
{
	return plan->applied & (UINT32_C(1) << key);
}

static inline bool rt_reload_defers(const struct rt_reload_plan *plan, enum rt_config_key key)
{
	return plan->deferred & (UINT32_C(1) << key);
}

/*
 * next's reloadable keys into in_force (the events list moves, next no
 * longer holds it); the others keep the values the daemon started with.
 */
void rt_reload_take(struct rt_config *in_force, struct rt_config *next);
