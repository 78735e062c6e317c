// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <string.h>

#include <systemd/sd-daemon.h>

#include "log.h"
#include "reload_plan.h"
#include "ringtapd.h"
#include "util.h"

/*
 * SIGHUP: reads the file again. What a running daemon can take (limits, the
 * drain period, wake_percent, the buffer size, events added) is applied
 * without touching a subscriber; a change that needs a restart is logged and
 * left alone. reload_plan.c decides which is which.
 */
int ringtapd_on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct ringtapd *d = userdata;
	struct rt_config next;
	struct rt_server_limits limits;
	struct rt_reload_plan plan;

	sd_notify(0, "RELOADING=1");
	if (ringtapd_load_config(d, &next)) {
		rt_log(LOG_ERR, "reload: configuration not changed");
		rt_config_release(&next);
		sd_notify(0, "READY=1");
		return 0;
	}
	rt_reload_plan(&d->cfg, &next, &plan);
	for (int k = 0; k < RT_CONF_N_KEYS; k++) {
		enum rt_config_key key = (enum rt_config_key)k;
		char was[32], now[32];

		if (rt_reload_defers(&plan, key))
			rt_log(LOG_NOTICE, "reload: %s changed to '%s': takes effect on restart",
			       rt_config_key_name(key), rt_config_value(&next, key, now, sizeof(now)));
		else if (rt_reload_applies(&plan, key))
			rt_log(LOG_INFO, "reload: %s '%s' -> '%s'", rt_config_key_name(key),
			       rt_config_value(&d->cfg, key, was, sizeof(was)),
			       rt_config_value(&next, key, now, sizeof(now)));
	}
	if (plan.resize_buffers) {
		int ret = rt_session_set_buffer_kb(d->session, next.num[RT_CONF_BUFFER_KB]);

		if (ret)
			rt_log(LOG_ERR, "reload: buffer_kb: %s", strerror(-ret));
		else
			rt_log(LOG_INFO, "reload: buffers are now %zu KiB per CPU",
			       rt_session_buffer_kb(d->session));
	}
	if (plan.enable_events) {
		char **globs = NULL;
		struct rt_why why = { "" };
		int ret = ringtapd_split_list(next.str[RT_CONF_EVENTS], &globs);

		if (ret)
			rt_why_set(&why, ret, "not a list of globs");
		else
			ret = rt_session_enable_globs(d->session, d->layout,
						      (const char *const *)globs, &why);
		if (ret < 0)
			rt_log(LOG_ERR, "reload: events: %s: %s", why.text, strerror(-ret));
		rt_strv_free(globs);
	}
	ringtapd_apply_timing(d, &next);
	if (plan.write_wake)
		ringtapd_wake_changed(d);
	ringtapd_timing_changed(d);
	d->max_pages_per_pass = (unsigned int)next.num[RT_CONF_MAX_PAGES];
	d->status_sec = (unsigned int)next.num[RT_CONF_STATUS_SEC];
	/* Revoking a certificate's access must not wait for a restart; a bad file is said there. */
	if (d->server) {
		(void)rt_server_reload_clients(d->server);
		ringtapd_server_limits(&next, &limits);
		rt_server_set_limits(d->server, &limits);
	}
	/* The session, the server and the readers keep pointers into the strings in force. */
	rt_reload_take(&d->cfg, &next);
	rt_config_release(&next);
	rt_log(LOG_INFO, "reloaded %s: %d setting(s) applied, %d waiting for a restart",
	       d->config_path, __builtin_popcount(plan.applied), __builtin_popcount(plan.deferred));
	sd_notify(0, "READY=1");
	return 0;
}
