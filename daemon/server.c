// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The server's face (server.h), all of it here: its life (listeners opened
 * by listener.c, the heartbeat that keeps every stream's clock pairs coming
 * and ends handshakes that stall, the limits a reload changes, the stop),
 * and each drain's records, pages, losses and CPU states handed to every
 * connection, which fanout.c puts in its queue and conn.c writes out.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <openssl/crypto.h>

#include "conn.h"
#include "decode.h"
#include "fanout.h"
#include "listener.h"
#include "log.h"
#include "ring_conn.h"
#include "replay.h"
#include "server.h"
#include "tracefs.h"
#include "util.h"

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

void rt_server_hold_selection(struct rt_server *srv)
{
	srv->hold_until = rt_monotonic_ns() + RT_SELECTION_HOLD_SEC * 1000000000ULL;
}

static int on_heartbeat(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct rt_server *srv = userdata;

	/* The previous ringtapd's subscribers had their while: the selection follows those here. */
	if (srv->hold_until && rt_monotonic_ns() >= srv->hold_until) {
		srv->hold_until = 0;
		conn_reselect(srv);
	}

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
		if (c->state == CONN_STREAMING && !rt_subscriber_queued_any(&c->out.sub) &&
		    conn_push_heartbeat(c))
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
	srv->fan.layout = layout;
	srv->limits = o->limits;
	srv->user_space_selection = o->user_space_selection;
	srv->latency_changed = o->latency_changed;
	srv->pass_wanted = o->pass_wanted;
	srv->status = o->status;
	srv->userdata = o->userdata;
	srv->trace_clockid = trace_clockid(rt_session_clock(session));
	rt_host_id_read(&srv->id, session);
	if (o->resume_secret)
		srv->secret = *o->resume_secret;
	else if ((ret = rt_token_secret_new(&srv->secret)) < 0)
		rt_log(LOG_WARNING, "no random bytes for resume tokens (%s): resumes are refused",
		       strerror(-ret));
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
	fanout_release(&srv->fan);
	rt_decoder_free(srv->replay_decoder);
	OPENSSL_cleanse(&srv->secret, sizeof(srv->secret));
	free(srv);
}

void rt_server_set_ring(struct rt_server *srv, struct rt_page_ring *ring)
{
	srv->ring = ring;
}

void rt_server_set_limits(struct rt_server *srv, const struct rt_server_limits *limits)
{
	srv->limits = *limits;
}

uint64_t rt_server_dropped(const struct rt_server *srv)
{
	uint64_t n = srv->dropped_gone;

	for (const struct rt_conn *c = srv->conns; c; c = c->next)
		n += c->out.sub.dropped;
	return n;
}

int rt_server_status(const struct rt_server *srv, Ringtap__Status *st)
{
	size_t n = conn_count(srv, CONN_STREAMING), i = 0;
	/* The pointers, then what they point to, in one block (rt_server_status_release). */
	Ringtap__SubscriberCounters **ptrs = calloc(n + 1, sizeof(*ptrs) + sizeof(**ptrs));
	Ringtap__SubscriberCounters *subs;

	if (!ptrs)
		return -ENOMEM;
	subs = (Ringtap__SubscriberCounters *)(ptrs + n + 1);
	for (const struct rt_conn *c = srv->conns; c; c = c->next) {
		Ringtap__SubscriberCounters *s = &subs[i];

		if (c->state != CONN_STREAMING)
			continue;
		ringtap__subscriber_counters__init(s);
		s->id = c->id;
		s->client_name = (char *)c->name;
		s->uid = (uint32_t)c->uid;
		s->pid = (int32_t)c->pid;
		s->encoding = c->out.encoding;
		s->delivered = c->out.sub.delivered;
		s->lost_queue = c->out.sub.dropped;
		s->lost_kernel = c->out.sub.kernel_lost;
		s->queued_bytes = rt_subscriber_queued_bytes(&c->out.sub);
		s->queued_records = c->out.sub.queued_records;
		s->queue_limit_bytes = rt_subscriber_queue_limit(&c->out.sub);
		s->peer = c->tcp ? (char *)c->peer : NULL;
		ptrs[i++] = s;
	}
	st->hostname = (char *)srv->id.hostname;
	st->subscribers = ptrs;
	st->n_subscribers = i;
	st->subscribers_accepted = srv->accepted;
	st->subscribers_refused = srv->refused;
	st->lost_queue = rt_server_dropped(srv);
	return 0;
}

void rt_server_status_release(Ringtap__Status *st)
{
	free(st->subscribers);
	st->subscribers = NULL;
	st->n_subscribers = 0;
}

int rt_server_reload_clients(struct rt_server *srv)
{
	return listener_reload_clients(srv);
}

unsigned int rt_server_subscribers(const struct rt_server *srv)
{
	return conn_count(srv, CONN_STREAMING);
}

unsigned int rt_server_latency_ms(const struct rt_server *srv, unsigned int daemon_ms)
{
	unsigned int shortest = 0;

	for (const struct rt_conn *c = srv->conns; c; c = c->next) {
		unsigned int ms = c->latency_ms ?: daemon_ms;

		if (c->state == CONN_STREAMING && (!shortest || ms < shortest))
			shortest = ms;
	}
	return shortest ?: daemon_ms;
}

bool rt_server_wants_records(const struct rt_server *srv)
{
	for (const struct rt_conn *c = srv->conns; c; c = c->next)
		if (c->state == CONN_STREAMING && c->out.encoding != RINGTAP__ENCODING__RAW)
			return true;
	return false;
}

void rt_server_record(struct rt_server *srv, const struct rt_record *rec)
{
	const struct rt_field_desc *pidf = srv->layout->common_pid;
	uint64_t pid = 0;

	if (!rec->event)
		return;
	fanout_next_record(&srv->fan);
	if (pidf)
		rt_record_read_common(rec, srv->layout, pidf, &pid);
	for (struct rt_conn *c = srv->conns; c; c = c->next) {
		const char *what = NULL;

		if (c->state == CONN_STREAMING && !c->replay &&
		    fanout_record(&srv->fan, &c->out, rec, (int32_t)pid, &what))
			conn_out_of_memory(c, what);
	}
}

void rt_server_page(struct rt_server *srv, unsigned int cpu, struct rt_page_buf *page,
		    size_t len, unsigned int records, uint64_t first_ts, uint64_t last_ts,
		    uint64_t first_seq)
{
	struct fanout_page p = {
		.cpu = cpu, .page = page, .len = len, .records = records,
		.first_ts = first_ts, .last_ts = last_ts, .first_seq = first_seq,
	};

	for (struct rt_conn *c = srv->conns; c; c = c->next) {
		/* A ring reader takes the page from the ring itself; one catching up, later. */
		if (c->state != CONN_STREAMING || c->ring || c->replay)
			continue;
		/* A queue that cannot take it: the ring holds the page, its catch-up reads it. */
		if (fanout_page_overflows(&c->out, &p) && conn_spill(c, cpu)) {
			c->write_due = true;
			continue;
		}
		if (fanout_page(&srv->fan, &c->out, &p))
			conn_out_of_memory(c, "for a page");
		if (rt_subscriber_queued_any(&c->out.sub))
			c->write_due = true;
	}
}

void rt_server_kernel_loss(struct rt_server *srv, unsigned int cpu, uint64_t count, bool exact,
			   uint64_t after_ts, uint64_t before_ts, bool in_ring)
{
	for (struct rt_conn *c = srv->conns; c; c = c->next) {
		/* One catching up is told by the ring's counts when it gets there. */
		if (c->state != CONN_STREAMING || (c->ring && in_ring) || (c->replay && in_ring))
			continue;
		rt_subscriber_kernel_loss(&c->out.sub, cpu, count, exact, after_ts, before_ts);
		/* A ring reader's queue takes no pages: its Lost goes at the next write. */
		if (c->ring) {
			if (rt_subscriber_flush_losses(&c->out.sub))
				conn_out_of_memory(c, "for a loss report");
			c->write_due = true;
		}
	}
}

void rt_server_daemon_loss(struct rt_server *srv, unsigned int cpu, uint64_t count,
			   uint64_t after_ts, uint64_t before_ts)
{
	for (struct rt_conn *c = srv->conns; c; c = c->next) {
		/* Ring readers and those catching up read the gap in the ring's counts. */
		if (c->state != CONN_STREAMING || c->ring || c->replay ||
		    !rt_subscriber_selects_cpu(&c->out.sub, cpu))
			continue;
		rt_subscriber_drop_span(&c->out.sub, cpu, count, after_ts, before_ts);
	}
}

void rt_server_end_page(struct rt_server *srv)
{
	struct rt_conn *next;

	for (struct rt_conn *c = srv->conns; c; c = next) {
		struct rt_subscriber *sub = &c->out.sub;
		size_t limit = rt_subscriber_queue_limit(sub), queued;

		next = c->next;
		if (c->state != CONN_STREAMING || c->ring)
			continue;
		/*
		 * A batch its queue cannot take: the page is in the ring, and the
		 * subscriber catches up from there at its own pace. Else (no ring,
		 * no memory) it is counted lost by the subscriber.
		 */
		if (rt_subscriber_batch_overflows(sub) && conn_spill(c, sub->batch_cpu))
			rt_subscriber_discard_batch(sub);
		else if (rt_subscriber_end_page(sub))
			conn_out_of_memory(c, "for a batch");
		if (rt_subscriber_queued_any(sub))
			c->write_due = true;
		/*
		 * Half its queue filled within one pass (a long period, many CPUs):
		 * out as far as the socket takes it now, not when the pass ends,
		 * so that the pass's own pages do not overflow it. A socket that
		 * took little is tried again once an eighth more is queued, not
		 * at every page.
		 */
		queued = rt_subscriber_queued_bytes(sub);
		if (c->write_due && queued > limit / 2 && queued >= c->early_write_at &&
		    conn_write(c))
			c->early_write_at = rt_subscriber_queued_bytes(sub) + limit / 8;
	}
}

void rt_server_cpu_state(struct rt_server *srv, unsigned int cpu, bool online)
{
	for (struct rt_conn *c = srv->conns; c; c = c->next) {
		struct rt_buf b = { 0 };

		if (c->state != CONN_STREAMING || !rt_subscriber_selects_cpu(&c->out.sub, cpu))
			continue;
		if (rt_encode_cpu_state_frame(cpu, online, &b) || conn_push(c, &b)) {
			rt_buf_free(&b);
			/* Its stream would not say the CPU changed: it ends, with an Error if it can. */
			conn_send_error(c, ENOMEM, "out of memory for a CpuState");
		}
	}
}

/*
 * Written at once, not when EPOLLOUT comes: arming it for each pass and
 * disarming it once drained cost two epoll_ctl() and a turn of the loop a
 * pass (at 8,000 events/s, about a fifth of ringtapd's system calls). Only
 * a socket found full waits for EPOLLOUT, armed by conn_write().
 */
void rt_server_flush(struct rt_server *srv)
{
	struct rt_conn *next;

	for (struct rt_conn *c = srv->conns; c; c = next) {
		uint32_t events;

		next = c->next;
		if (c->ring && c->state == CONN_STREAMING && !conn_ring_notify(c, false))
			continue;
		if (c->replay && c->state == CONN_STREAMING && !conn_replay(c))
			continue;
		if (!c->write_due)
			continue;
		c->write_due = false;
		if (sd_event_source_get_io_events(c->io, &events) < 0 || !(events & EPOLLOUT))
			conn_write(c);
	}
}

void rt_server_pass_done(struct rt_server *srv, bool read_all, unsigned int max_passes)
{
	for (struct rt_conn *c = srv->conns; c; c = c->next)
		if (c->leaving && c->state == CONN_STREAMING &&
		    (read_all || ++c->leave_passes >= max_passes))
			conn_leave(c);
}

void rt_server_abandon(struct rt_server *srv)
{
	for (struct rt_conn *c = srv->conns; c; c = c->next) {
		/* A ring reader's queue holds no data; its Ring frame must not go. */
		if ((!rt_subscriber_queued_any(&c->out.sub) && !c->replay) || c->ring)
			continue;
		replay_abandon(c);
		if (rt_subscriber_abandon(&c->out.sub))
			conn_out_of_memory(c, "for its loss reports");
		c->said_bye = false;	/* a queued Bye went with the rest */
		rt_log(LOG_WARNING, "client %s (pid %d): too slow to take its queue before the stop; "
		       "%llu records dropped in all, reported in its stream", c->name, (int)c->pid,
		       (unsigned long long)c->out.sub.dropped);
		conn_want_write(c, true);
	}
}

void rt_server_say_bye(struct rt_server *srv)
{
	for (struct rt_conn *c = srv->conns; c; c = c->next) {
		struct rt_buf b = { 0 };

		if (c->state != CONN_STREAMING || c->said_bye)
			continue;
		/* Still catching up at the grace's end: what it did not read is lost to it. */
		replay_abandon(c);
		/* The pages read last, told before the end. */
		if (c->ring)
			(void)conn_ring_notify(c, true);
		if (rt_encode_bye_frame(&b) || conn_push(c, &b))
			rt_buf_free(&b);
		else
			c->said_bye = true;
	}
}

bool rt_server_drained(struct rt_server *srv)
{
	for (struct rt_conn *c = srv->conns; c; c = c->next)
		if (rt_subscriber_queued_any(&c->out.sub) ||
		    (c->replay && c->state == CONN_STREAMING))
			return false;
	return true;
}
