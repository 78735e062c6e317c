/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * conn: one connection, and the server's insides its files share (server.h
 * is the server's face to the daemon). Calls go one way:
 *   server.c     the rt_server_* functions: start, limits, heartbeats, the
 *                drain's records, pages and losses handed to each connection,
 *                the stop; calls every module below
 *   listener.c   the Unix socket and the TCP listener, accepting, peer
 *                credentials, the clients file (listener.h)
 *   conn.c       one connection's protocol: TLS handshake, Hello, Welcome or
 *                Refusal, Update and Bye, when it closes
 *   conn_io.c    what a connection is and its bytes (conn_io.h)
 *   selection.c  what the kernel is asked for all subscriptions (selection.h)
 *   fanout.c     a record or page into one subscriber's queue (fanout.h)
 *   ring_conn.c  the RING transport: who may map the page ring, the Ring
 *                frame and the RingReady notes (ring_conn.h), which conn.c
 *                sends
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <systemd/sd-event.h>

#include "conn_io.h"
#include "encode.h"
#include "fanout.h"
#include "host.h"
#include "server-opts.h"
#include "ringtap.pb-c.h"
#include "subscriber.h"
#include "token.h"
#include "wire.h"

struct rt_acl;
struct rt_layout;
struct rt_page_ring;
struct rt_server_opts;
struct rt_session;
struct rt_tls;
struct rt_tls_conn;
struct rt_why;

/* Reads one connection takes at a time before the others (and the ring buffers) get theirs. */
/* A client says little: Hello, Update, Bye. Anything bigger is not one. */
#define CLIENT_MAX_FRAME (64u << 10)
/* An idle link hears from us this often, so both ends can tell it is alive. */
#define HEARTBEAT_USEC (5 * 1000000ULL)
/* Connections past max_clients still read, to be told why they are refused. */
#define PENDING_CLIENTS 16u

struct rt_server {
	sd_event *loop;
	int listen_fd;
	bool own_socket;
	char *path;
	dev_t socket_dev;		/* the file we made: one put over it later is not ours */
	ino_t socket_ino;
	sd_event_source *listen_src;
	int tcp_fd;
	sd_event_source *tcp_src;
	struct rt_tls *tls;		/* NULL: plain TCP (tcp_insecure) */
	bool warned_tcp_flood;
	bool warned_flood;		/* "turning connections away" logged for this flood */
	bool user_space_selection;	/* kernel_selection = 0: no kernel filters or pid lists */
	struct rt_acl *acl;
	char *clients_path;		/* the clients file, read again on reload */
	sd_event_source *heartbeat;
	clockid_t trace_clockid;
	gid_t group;
	bool have_group;
	struct rt_server_limits limits;
	char warned_peer[72];		/* the peer a flood was logged for, until it is let in */
	uint64_t dropped_gone;		/* by connections closed since */
	uint64_t next_id;		/* the last connection's id */
	uint64_t accepted, refused;	/* Hellos answered with a Welcome, a Refusal */
	bool stopping;			/* closing every connection: events stay as they are */
	uint64_t hold_until;		/* CLOCK_MONOTONIC ns: events stay as they are till then */
	struct rt_conn *conns;
	unsigned int n_conns;
	struct rt_session *session;
	struct rt_layout *layout;
	struct rt_host_id id;
	struct fanout fan;		/* the ways records are encoded, shared by connections */
	struct rt_page_ring *ring;	/* what RING readers map (the pump's); NULL: none */
	struct rt_token_secret secret;	/* resume tokens are signed with it (token.h) */
	struct rt_decoder *replay_decoder;	/* pages of a resumed subscriber's catch-up */
	void (*latency_changed)(void *userdata);
	bool (*pass_wanted)(void *userdata);
	int (*status)(void *userdata, struct rt_buf *frame);
	void *userdata;
};

/* conn.c */
/* The kernel's selection made to follow the connections (unless stopping or held). */
void conn_reselect(struct rt_server *srv);
struct rt_conn *conn_new(struct rt_server *srv, int fd);
/* Watches the connection's socket and lists it; on failure it is freed. */
int conn_add(struct rt_server *srv, struct rt_conn *c, uint32_t events);
/* Unlists and frees it; the kernel selection follows the connections left. */
void conn_free(struct rt_conn *c);
/* Logs what the connection got and frees it. */
void conn_close(struct rt_conn *c, const char *why);
/* Connections in one state (the limits, the subscribers counted). */
unsigned int conn_count(const struct rt_server *srv, enum conn_state state);
/* A peer's connections in one state (the per-peer limits). */
unsigned int conn_count_of(const struct rt_server *srv, const char *owner, enum conn_state state);
/* The queue onto the socket, as far as it takes it; false when c was closed (freed). */
bool conn_write(struct rt_conn *c);
/* Queues a frame (b is emptied either way) and asks to write it. */
int conn_push(struct rt_conn *c, struct rt_buf *b);
/* An Error frame, then the close once it is written. */
void conn_send_error(struct rt_conn *c, int err, const char *text);
int conn_push_heartbeat(struct rt_conn *c);
/* An allocation failed for c: what it lost is counted already; said once. */
void conn_out_of_memory(struct rt_conn *c, const char *what);
/*
 * A resuming subscriber (replay.h): more of its catch-up queued; false
 * when it cannot go on (it was sent an Error and is closing).
 */
bool conn_replay(struct rt_conn *c);
/*
 * Its queue cannot take the page just read on cpu: it catches up from the
 * page ring instead (replay_spill); false when it cannot (the page is
 * dropped and reported as before).
 */
bool conn_spill(struct rt_conn *c, unsigned int cpu);
/*
 * A conn kept over a restart while it caught up: on from places (as
 * replay_pack_places() packed them into the state). -errno with why.
 */
struct rt_why;
int conn_catch_up(struct rt_conn *c, const uint8_t *places, size_t len, struct rt_why *why);
/* After its Bye and a pass that read what it was owed: its losses, our Bye, the close. */
void conn_leave(struct rt_conn *c);
/*
 * A RING reader after its Welcome: the Schemas of every event the instance
 * records, then the Ring frame with the ring's read-only descriptor. 0, or
 * -ENOMEM.
 */
int conn_ring_start(struct rt_conn *c);
/*
 * After a drain pass: a RingReady for the CPUs whose pages moved, unless
 * frames wait unsent (last: queued behind them all the same, before a
 * Bye). A reader that never reads costs one pending note. false when c
 * was closed (its link failed).
 */
bool conn_ring_notify(struct rt_conn *c, bool last);
/* Remembers the subscription in force (sub may be NULL: none) for a restart. */
void conn_keep_subscription(struct rt_conn *c, const Ringtap__Subscription *sub,
			    unsigned int version);
/*
 * A subscriber a previous ringtapd handed over (handover.c): its encoding
 * and subscription served again without a Welcome (it had one), the
 * Schemas it was sent marked sent. -errno with why; the caller tells it.
 */
int conn_resume(struct rt_conn *c, Ringtap__Encoding enc, unsigned int version,
		const Ringtap__Subscription *sub, const uint8_t *schema_sent, size_t schema_len,
		struct rt_why *why);
