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
 *                Refusal, Update and Bye, its queue written to the socket
 *   selection.c  what the kernel is asked for all subscriptions (selection.h)
 *   fanout.c     a record or page into one subscriber's queue (fanout.h)
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <systemd/sd-event.h>

#include "encode.h"
#include "fanout.h"
#include "host.h"
#include "server-opts.h"
#include "ringtap.pb-c.h"
#include "subscriber.h"
#include "wire.h"

struct rt_acl;
struct rt_layout;
struct rt_server_opts;
struct rt_session;
struct rt_tls;
struct rt_tls_conn;

/* Reads one connection takes at a time before the others (and the ring buffers) get theirs. */
#define READS_PER_TURN 16
/* A client says little: Hello, Update, Bye. Anything bigger is not one. */
#define CLIENT_MAX_FRAME (64u << 10)
/* An idle link hears from us this often, so both ends can tell it is alive. */
#define HEARTBEAT_USEC (5 * 1000000ULL)
/* Connections past max_clients still read, to be told why they are refused. */
#define PENDING_CLIENTS 16u

enum conn_state { CONN_HELLO, CONN_STREAMING, CONN_CLOSING };

struct rt_conn {
	struct rt_server *srv;
	struct rt_conn *next;
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
	size_t early_write_at;	/* queued bytes before a pass writes again (rt_server_end_page) */
};

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
	bool stopping;			/* closing every connection: events stay as they are */
	struct rt_conn *conns;
	unsigned int n_conns;
	struct rt_session *session;
	struct rt_layout *layout;
	struct rt_host_id id;
	struct fanout fan;		/* the ways records are encoded, shared by connections */
	void (*latency_changed)(void *userdata);
	bool (*pass_wanted)(void *userdata);
	void *userdata;
};

/* conn.c */
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
/* conn_io.c */
/* EPOLLOUT asked or not; EPOLLIN until the peer ended its side. */
void conn_want_write(struct rt_conn *c, bool on);
/* The queue onto the socket, as far as it takes it; false when c was closed (freed). */
bool conn_write(struct rt_conn *c);
/* recv() or its TLS equivalent: n > 0, 0 at the end, -EAGAIN, -errno. */
ssize_t conn_read(struct rt_conn *c, void *buf, size_t len);
/* What a failed read or write of c means, for the log. */
const char *conn_error(struct rt_conn *c, ssize_t err);
/* A closing connection's input read and thrown away, to find the peer's end. */
void conn_discard_input(struct rt_conn *c);

/* conn.c, again */
/* Queues a frame (b is emptied either way) and asks to write it. */
int conn_push(struct rt_conn *c, struct rt_buf *b);
/* An Error frame, then the close once it is written. */
void conn_send_error(struct rt_conn *c, int err, const char *text);
int conn_push_heartbeat(struct rt_conn *c);
/* An allocation failed for c: what it lost is counted already; said once. */
void conn_out_of_memory(struct rt_conn *c, const char *what);
/* After its Bye and a pass that read what it was owed: its losses, our Bye, the close. */
void conn_leave(struct rt_conn *c);
