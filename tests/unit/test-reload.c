// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A reload's decisions (daemon/reload_plan.c), on settings parsed from
 * texts as the file would give them: which changed keys a running daemon
 * takes and which wait for a restart, when the kernel is written to
 * (buffers, events, buffer_percent), and what stays in force after.
 */
#include "check.h"
#include "reload_plan.h"

/* The defaults with text's keys over them, as ringtapd_load_config builds them. */
static void settings(struct rt_config *cfg, const char *text)
{
	struct rt_why why = { "" };
	unsigned int line = 0;

	rt_config_defaults(cfg);
	CHECK_EQ(rt_config_parse(cfg, text, strlen(text), &line, &why), 0);
}

static void test_unchanged(void)
{
	struct rt_config a, b;
	struct rt_reload_plan p;

	settings(&a, "max_clients = 5\nevents = sched:*\n");
	settings(&b, "# the same\nevents = sched:*\nmax_clients = 5\n");
	rt_reload_plan(&a, &b, &p);
	CHECK_EQ(p.applied, 0);
	CHECK_EQ(p.deferred, 0);
	CHECK(!p.resize_buffers && !p.enable_events && !p.write_wake);
	rt_config_release(&a);
	rt_config_release(&b);
}

/* The keys of the systemd guest's reload, and one that needs a restart. */
static void test_applied_and_deferred(void)
{
	struct rt_config a, b;
	struct rt_reload_plan p;

	settings(&a, "");
	settings(&b, "max_clients = 5\nmax_queue_kb = 2048\nsocket = /run/other.sock\n"
		     "trace_self = 1\n");
	rt_reload_plan(&a, &b, &p);
	CHECK_EQ(p.applied, (1u << RT_CONF_MAX_CLIENTS) | (1u << RT_CONF_MAX_QUEUE_KB));
	CHECK_EQ(p.deferred, (1u << RT_CONF_SOCKET) | (1u << RT_CONF_TRACE_SELF));
	CHECK(rt_reload_defers(&p, RT_CONF_SOCKET) && !rt_reload_applies(&p, RT_CONF_SOCKET));
	CHECK(!p.resize_buffers && !p.enable_events && !p.write_wake);
	/* What stays in force: the new limits, the socket the daemon listens on. */
	rt_reload_take(&a, &b);
	CHECK_EQ(a.num[RT_CONF_MAX_CLIENTS], 5);
	CHECK_EQ(a.num[RT_CONF_MAX_QUEUE_KB], 2048);
	CHECK_EQ(a.num[RT_CONF_TRACE_SELF], 0);
	CHECK_STR(rt_config_str(&a, RT_CONF_SOCKET), "/run/ringtap/ringtapd.sock");
	rt_config_release(&a);
	rt_config_release(&b);
}

/* A new wake_percent goes to the kernel whatever the loop is doing: the plan says so. */
static void test_wake_percent(void)
{
	struct rt_config a, b;
	struct rt_reload_plan p;

	settings(&a, "");
	settings(&b, "wake_percent = 10\n");
	rt_reload_plan(&a, &b, &p);
	CHECK_EQ(p.applied, 1u << RT_CONF_WAKE_PERCENT);
	CHECK(p.write_wake);
	CHECK(!p.resize_buffers && !p.enable_events);
	rt_reload_take(&a, &b);
	CHECK_EQ(a.num[RT_CONF_WAKE_PERCENT], 10);
	rt_config_release(&a);
	rt_config_release(&b);
}

/* buffer_kb = 0 means "the kernel's": nothing to resize; an events list added is enabled. */
static void test_buffers_and_events(void)
{
	struct rt_config a, b, c;
	struct rt_reload_plan p;

	settings(&a, "buffer_kb = 1024\nevents = sched:*\n");
	settings(&b, "buffer_kb = 2048\nevents = sched:*,irq:*\n");
	settings(&c, "");
	rt_reload_plan(&a, &b, &p);
	CHECK(p.resize_buffers && p.enable_events && !p.write_wake);
	CHECK_EQ(p.applied, (1u << RT_CONF_BUFFER_KB) | (1u << RT_CONF_EVENTS));
	/* Back to unset: both changed, neither asks the kernel anything. */
	rt_reload_plan(&a, &c, &p);
	CHECK_EQ(p.applied, (1u << RT_CONF_BUFFER_KB) | (1u << RT_CONF_EVENTS));
	CHECK(!p.resize_buffers && !p.enable_events);
	/* The list moves into force; the file's copy is no longer next's to free. */
	rt_reload_take(&a, &b);
	CHECK_STR(a.str[RT_CONF_EVENTS], "sched:*,irq:*");
	CHECK(!b.str[RT_CONF_EVENTS]);
	CHECK_EQ(a.num[RT_CONF_BUFFER_KB], 2048);
	rt_config_release(&a);
	rt_config_release(&b);
	rt_config_release(&c);
}

int main(void)
{
	test_unchanged();
	test_applied_and_deferred();
	test_wake_percent();
	test_buffers_and_events();
	return check_exit("test-reload");
}
