/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * server: ringtapd's subscribers, as the rest of the daemon sees them.
 *
 * Listens on the Unix socket (from systemd, or its own) and, when set, a
 * TCP listener with TLS and client certificates (listener.c); runs each
 * connection's handshake and stream (conn.c); switches on the events
 * subscriptions name and keeps the kernel's filters and pid list to their
 * union (selection.c decides, selection-edge.c writes); takes records,
 * pages and losses from the pump and queues each for those who selected it
 * (fanout.c). Logs each client's coming and going, once. Every function
 * here is defined in server.c.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "decode.h"
#include "ringtap.pb-c.h"
#include "server-opts.h"

struct rt_page_buf;
struct rt_page_ring;
struct rt_session;
struct rt_layout;
struct rt_server;

int rt_server_new(struct rt_server **out, sd_event *loop, const struct rt_server_opts *opts,
		  struct rt_session *session, struct rt_layout *layout);
void rt_server_free(struct rt_server *server);
/* The page ring RING readers map (the pump's, which outlives the server). */
void rt_server_set_ring(struct rt_server *server, struct rt_page_ring *ring);

void rt_server_record(struct rt_server *server, const struct rt_record *record);
/*
 * Events the kernel lost on cpu. in_ring: the page ring's next slot carries
 * them and RING readers count them there; otherwise (the stop's count, which
 * no page follows) RING readers are told in a Lost frame as well.
 */
void rt_server_kernel_loss(struct rt_server *server, unsigned int cpu, uint64_t count, bool exact,
			   uint64_t after_ts, uint64_t before_ts, bool in_ring);
/*
 * Events lost in ringtapd itself before cpu's next page (a crashed run's):
 * told as dropped to those streaming live; the ring's counts tell the rest.
 */
void rt_server_daemon_loss(struct rt_server *server, unsigned int cpu, uint64_t count,
			   uint64_t after_ts, uint64_t before_ts);
/* Raw subscribers get the page itself, as read: their queues hold it by reference. */
void rt_server_page(struct rt_server *server, unsigned int cpu, struct rt_page_buf *page,
		    size_t len, unsigned int records, uint64_t first_ts, uint64_t last_ts,
		    uint64_t first_seq);
void rt_server_end_page(struct rt_server *server);

/*
 * After a restart or a crash: the kernel's selection stays as the previous
 * ringtapd left it (events are switched on, none off, no filter narrowed)
 * for RT_SELECTION_HOLD_SEC, while its subscribers come back.
 */
#define RT_SELECTION_HOLD_SEC 10
void rt_server_hold_selection(struct rt_server *server);

/* Tells the subscribers that select this CPU that it went offline or came back. */
void rt_server_cpu_state(struct rt_server *server, unsigned int cpu, bool online);

/* Whether a client takes records one by one (DECODED or FIXED), not only whole pages. */
bool rt_server_wants_records(const struct rt_server *server);

/* At the end of a drain: what it queued for each subscriber is written now. */
void rt_server_flush(struct rt_server *server);

/*
 * After a drain pass: subscribers that said Bye got what the kernel held
 * when they said it, and now their losses and our Bye. read_all false: the
 * pass left pages behind (its cap per CPU), and they wait for the next one,
 * max_passes at most: as many as a buffer held, since passes read it oldest
 * page first, and a source that refills it faster cannot hold a Bye back.
 */
void rt_server_pass_done(struct rt_server *server, bool read_all, unsigned int max_passes);

/* True when every client's queue is sent. */
bool rt_server_drained(struct rt_server *server);
/*
 * At a stop, after the last data and loss reports: a Bye, which tells each
 * subscriber that every loss was reported (a stream cut without it may
 * have lost its end uncounted).
 */
void rt_server_say_bye(struct rt_server *server);
/* Turns what slow clients still have queued into Lost reports (at a stop). */
void rt_server_abandon(struct rt_server *server);
/* Clients past the handshake. */
unsigned int rt_server_subscribers(const struct rt_server *server);
/*
 * The shortest latency bound among the subscribers (Subscription.max_latency_ms);
 * daemon_ms for those that asked none, and with no subscriber at all.
 */
unsigned int rt_server_latency_ms(const struct rt_server *server, unsigned int daemon_ms);

/* New limits from a reload: queues and subscriptions from now on, connections already open keep theirs. */
void rt_server_set_limits(struct rt_server *server, const struct rt_server_limits *limits);
/*
 * Reads the clients file again (a reload): connections of names no longer
 * listed, or listed with other globs, end with an Error saying so.
 */
int rt_server_reload_clients(struct rt_server *server);

/* Records dropped from slow subscribers' queues since start, connections gone included. */
uint64_t rt_server_dropped(const struct rt_server *server);
/*
 * Its part of the counters (ringtap status): hostname, each subscriber
 * streaming, Hellos accepted and refused, queue losses; pointing into the
 * server until rt_server_status_release(). 0 or -ENOMEM.
 */
int rt_server_status(const struct rt_server *server, Ringtap__Status *status);
void rt_server_status_release(Ringtap__Status *status);
