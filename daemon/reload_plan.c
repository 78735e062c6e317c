// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdlib.h>

#include "reload_plan.h"

_Static_assert(RT_CONF_N_KEYS <= 32, "a reload plan has a bit per key");

void rt_reload_plan(const struct rt_config *in_force, const struct rt_config *next,
		    struct rt_reload_plan *plan)
{
	*plan = (struct rt_reload_plan){ 0 };
	for (int k = 0; k < RT_CONF_N_KEYS; k++) {
		enum rt_config_key key = (enum rt_config_key)k;

		if (rt_config_equal(in_force, next, key))
			continue;
		if (rt_config_key_reloadable(key))
			plan->applied |= UINT32_C(1) << key;
		else
			plan->deferred |= UINT32_C(1) << key;
	}
	plan->resize_buffers = rt_reload_applies(plan, RT_CONF_BUFFER_KB) &&
			       next->num[RT_CONF_BUFFER_KB];
	plan->enable_events = rt_reload_applies(plan, RT_CONF_EVENTS) && next->str[RT_CONF_EVENTS];
	plan->write_wake = rt_reload_applies(plan, RT_CONF_WAKE_PERCENT);
}

void rt_reload_take(struct rt_config *in_force, struct rt_config *next)
{
	for (int k = 0; k < RT_CONF_N_KEYS; k++)
		if (rt_config_key_reloadable((enum rt_config_key)k))
			in_force->num[k] = next->num[k];
	/* The session and the readers point into the list in force: it moves, no copy. */
	free(in_force->str[RT_CONF_EVENTS]);
	in_force->str[RT_CONF_EVENTS] = next->str[RT_CONF_EVENTS];
	next->str[RT_CONF_EVENTS] = NULL;
}
