/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * conn_io: what a connection is (its socket, TLS, state and queue), and its
 * bytes below the frames: reads, the queue written with one gather (TLS: a
 * frame at a time), what its socket is watched for, a closing connection's
 * end of input. It knows no protocol and closes nothing: conn.c decides.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "fanout.h"
#include "wire.h"

struct ring_reader;
struct rt_server;
struct rt_tls_conn;

/* Reads one connection takes at a time before the others (and the ring buffers) get theirs. */
#define READS_PER_TURN 16

enum conn_state { CONN_HELLO, CONN_STREAMING, CONN_CLOSING };

struct rt_conn {
	struct rt_server *srv;
	struct rt_conn *next;
	uint64_t id;			/* the server's number for it, never reused (ringtap status) */
	bool status;			/* asked for the counters: comes and goes unlogged */
	int fd;
	sd_event_source *io;
	struct rt_tls_conn *tls;	/* TCP with TLS; NULL on the Unix socket and plain TCP */
	sd_event_source *more;		/* TLS: read on after others had their turn */
	bool handshaking;		/* TLS handshake not done: nothing else is read */
	unsigned int refused_beats;	/* handshake failed: heartbeats since (closed at 2) */
	unsigned int hello_beats;	/* TCP: heartbeats waiting for the Hello */
	bool tcp;
	const char *const *allowed;	/* TLS: the event globs its certificate may select */
	char *common_name;		/* TLS: the verified certificate's, for a reload */
	enum conn_state state;
	struct rt_wire_reader reader;
	bool authorized;
	/* Its queue (out.sub, core/subscriber.h) and how it takes records. */
	struct fanout_sub out;
	char *filter_text;		/* its filter's text, for the kernel's filter files */
	pid_t pid;
	uid_t uid;
	/*
	 * The peer whose share of the slots it takes: "uid N", "certificate
	 * NAME" or "address A"; "" for root, who has no share but the whole.
	 */
	char owner[80];
	char name[160];
	char peer[112];		/* TCP: [common name@]address, which the client cannot choose */
	const char *dead;	/* set by handlers: closed when the I/O callback returns */
	unsigned int latency_ms;	/* the bound it asked; 0: the daemon's */
	bool said_bye;		/* a Bye is queued or sent: the stream ends here */
	bool leaving;		/* said Bye: drain passes until one reads all, then ours */
	bool peer_shut;		/* its side ended: nothing more to read, what it is owed goes */
	unsigned int leave_passes;	/* passes since the Bye that left pages behind */
	bool said_nomem;	/* an allocation failed for it: logged once */
	bool write_due;		/* a drain queued frames: rt_server_flush() writes them */
	struct ring_reader *ring;	/* the RING transport (ring_conn.h); NULL: pages on the socket */
	bool ring_moves;		/* its Hello: it takes a new ring after a restart */
	/* Resuming (replay.h): caught up from the ring first; the live stream passes it by. */
	struct conn_replay *replay;
	/*
	 * A descriptor (not ours to close) passed with the byte pass_fd_at
	 * queued bytes on (SCM_RIGHTS); -1: none. A write stops before that
	 * byte, and the next one starts with it and carries the descriptor.
	 */
	int pass_fd;
	size_t pass_fd_at;
	size_t early_write_at;	/* queued bytes before a pass writes again (rt_server_end_page) */
	/* For a restart (handover.c): the protocol version agreed, the subscription in force, packed. */
	unsigned int version;
	struct rt_buf kept_sub;
};

/* EPOLLOUT asked or not; EPOLLIN until the peer ended its side. */
void conn_want_write(struct rt_conn *c, bool on);
/*
 * The queue onto the socket, as far as it takes it: 0 when it is empty, 1
 * when the socket is full (EPOLLOUT asked), -errno when the link failed.
 */
int conn_flush(struct rt_conn *c);
/* recv() or its TLS equivalent: n > 0, 0 at the end, -EAGAIN, -errno. */
ssize_t conn_read(struct rt_conn *c, void *buf, size_t len);
/* What a failed read or write of c means, for the log. */
const char *conn_error(struct rt_conn *c, ssize_t err);
/* A closing connection's input read and thrown away, to find the peer's end. */
void conn_discard_input(struct rt_conn *c);
