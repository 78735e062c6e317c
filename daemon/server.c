// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The server's life: its listeners opened (listener.c), the heartbeat that
 * keeps every stream's clock pairs coming and ends handshakes that stall,
 * the limits a reload changes, and the stop. Connections are conn.c's; the
 * fan-out of records and pages is fanout.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "log.h"
#include "server.h"
#include "tracefs.h"

/*
 * The trace clock as a clock_gettime() clock: exact for mono, mono_raw and
 * boot; local, global and perf count sched_clock, which on x86 runs with
 * CLOCK_MONOTONIC, so that is the closest sample.
 */
static clockid_t trace_clockid(const char *name)
{
	if (name && !strcmp(name, "mono_raw"))
		return CLOCK_MONOTONIC_RAW;
	if (name && !strcmp(name, "boot"))
		return CLOCK_BOOTTIME;
	return CLOCK_MONOTONIC;
}

static int on_heartbeat(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct rt_server *srv = userdata;

	for (struct rt_conn *c = srv->conns, *next; c; c = next) {
		next = c->next;
		if (c->refused_beats && ++c->refused_beats > 2) {
			conn_free(c);
			continue;
		}
		/*
		 * Every peer, local or not, gets 10 to 15 s from connecting to a
		 * whole Hello: one that sends half a frame and waits does not keep
		 * its place. It is told why when its socket takes it.
		 */
		if (c->state == CONN_HELLO && !c->handshaking && ++c->hello_beats > 2) {
			conn_send_error(c, ETIMEDOUT, "no Hello within 10 s");
			c->state = CONN_CLOSING;
			continue;
		}
		if (c->state == CONN_HELLO && c->handshaking && ++c->hello_beats > 2) {
			conn_close(c, "no TLS handshake within 10 s");
			continue;
		}
		/*
		 * Every period, busy or not: each Heartbeat is a (trace clock,
		 * realtime) pair, which collectors use to align hosts. A backlog
		 * gets none: its pair would be late by the time it is read.
		 */
		if (c->state == CONN_STREAMING && !c->sub.head && conn_push_heartbeat(c))
			conn_out_of_memory(c, "for a Heartbeat");
	}
	return sd_event_source_set_time_relative(s, HEARTBEAT_USEC) ?:
	       sd_event_source_set_enabled(s, SD_EVENT_ON);
}

int rt_server_new(struct rt_server **out, sd_event *loop, const struct rt_server_opts *o,
		  struct rt_session *session, struct rt_layout *layout)
{
	struct rt_server *srv = calloc(1, sizeof(*srv));
	int ret;

	if (!srv) {
		rt_log(LOG_ERR, "starting the server: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	srv->loop = loop;
	srv->listen_fd = -1;
	srv->tcp_fd = -1;
	srv->session = session;
	srv->layout = layout;
	srv->limits = o->limits;
	srv->user_space_selection = o->user_space_selection;
	srv->latency_changed = o->latency_changed;
	srv->pass_wanted = o->pass_wanted;
	srv->userdata = o->userdata;
	srv->trace_clockid = trace_clockid(session->clock);
	rt_host_id_read(&srv->id, session);
	ret = listener_open(srv, o);
	if (!ret) {
		ret = sd_event_add_time_relative(loop, &srv->heartbeat, CLOCK_MONOTONIC,
						 HEARTBEAT_USEC, 100000, on_heartbeat, srv);
		if (ret < 0)
			rt_log(LOG_ERR, "starting the heartbeat: %s", strerror(-ret));
	}
	if (ret < 0) {
		rt_server_free(srv);
		return ret;
	}
	*out = srv;
	return 0;
}

void rt_server_free(struct rt_server *srv)
{
	if (!srv)
		return;
	srv->stopping = true;
	while (srv->conns)
		conn_close(srv->conns, "daemon stopping");
	listener_close(srv);
	sd_event_source_disable_unref(srv->heartbeat);
	rt_buf_free(&srv->packed_fixed);
	free(srv->legacy_scratch);
	free(srv);
}

void rt_server_set_limits(struct rt_server *srv, const struct rt_server_limits *limits)
{
	srv->limits = *limits;
}

uint64_t rt_server_dropped(const struct rt_server *srv)
{
	uint64_t n = srv->dropped_gone;

	for (const struct rt_conn *c = srv->conns; c; c = c->next)
		n += c->sub.dropped;
	return n;
}
