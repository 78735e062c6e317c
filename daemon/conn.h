/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * conn: the server's insides, shared by its four files and no one else
 * (server.h is its face to the daemon):
 *   listener.c  the Unix socket and the TCP listener, accepting, peer
 *               credentials, the clients file and its reload
 *   conn.c      one connection: TLS handshake, Hello, Welcome or Refusal,
 *               Update and Bye, its queue written at the end of a drain
 *               (rt_server_flush) and then as the socket takes it
 *   fanout.c    records, pages and losses into the queues of those who
 *               selected them, each record encoded once per encoding
 *   server.c    the server's life: start, limits, heartbeats, stop
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <systemd/sd-event.h>

#include "encode.h"
#include "host.h"
#include "server.h"
#include "ringtap.pb-c.h"
#include "subscriber.h"
#include "wire.h"

struct rt_acl;
struct rt_layout;
struct rt_legacy_layout;
struct rt_server_opts;
struct rt_session;
struct rt_tls;
struct rt_tls_conn;
struct tep_event;
struct rt_filter;

/* A client says little: Hello, Update, Bye. Anything bigger is not one. */
#define CLIENT_MAX_FRAME (64u << 10)
/* An idle link hears from us this often, so both ends can tell it is alive. */
#define HEARTBEAT_USEC (5 * 1000000ULL)
/* Connections past max_clients still read, to be told why they are refused. */
#define PENDING_CLIENTS 16u

enum conn_state { CONN_HELLO, CONN_STREAMING, CONN_CLOSING };

/*
 * One way of sending decoded records (common fields or not, a projection
 * or not), shared by every DECODED connection that asked for it: a record
 * is encoded once per way and its bytes copied into each one's Batch (or,
 * for a way with one user, written straight into its Batch).
 */
struct conn_encoding {
	struct conn_encoding *next;
	struct rt_record_encoder *encoder;
	unsigned int users;
	struct rt_buf packed;		/* the current record, this way */
	uint64_t record;		/* which record packed holds (the server's count) */
	bool failed;			/* it could not be encoded */
};

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
	struct rt_subscriber sub;
	bool authorized;
	bool common;
	Ringtap__Encoding encoding;
	const struct rt_legacy_layout *legacy;	/* with FIXED */
	struct rt_filter *filter;	/* NULL: every record of the selection */
	char *filter_text;		/* its text, for the kernel's filter files */
	char **only;			/* projection, NULL-terminated; NULL: every field */
	struct conn_encoding *way;	/* DECODED: how its records are encoded */
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
	size_t raw_schemas;	/* RAW: the layout's events when it was last sent their Schemas */
	unsigned int latency_ms;	/* the bound it asked; 0: the daemon's */
	bool said_bye;		/* a Bye is queued or sent: the stream ends here */
	bool leaving;		/* said Bye: drain passes until one reads all, then ours */
	unsigned int leave_passes;	/* passes since the Bye that left pages behind */
	bool said_nomem;	/* an allocation failed for it: logged once */
	bool write_due;		/* a drain queued frames: rt_server_flush() writes them */
	size_t early_write_at;	/* queued bytes before a pass writes again (fanout.c) */
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
	struct conn_encoding *ways;	/* every way DECODED connections asked for */
	uint64_t records;		/* records fanned out: which one is current */
	struct rt_buf packed_fixed;	/* the current record in the legacy layout */
	uint64_t packed_fixed_record;	/* which record packed_fixed holds; 0: none */
	uint8_t *legacy_scratch;	/* a record rewritten, before it is framed */
	size_t legacy_scratch_size;
	void (*latency_changed)(void *userdata);
	bool (*pass_wanted)(void *userdata);
	void *userdata;
};

/* listener.c */
int listener_open(struct rt_server *srv, const struct rt_server_opts *opts);
void listener_close(struct rt_server *srv);

/* conn.c */
struct rt_conn *conn_new(struct rt_server *srv, int fd);
/* Watches the connection's socket and lists it; on failure it is freed. */
int conn_add(struct rt_server *srv, struct rt_conn *c, uint32_t events);
void conn_free(struct rt_conn *c);
/* Logs what the connection got and frees it. */
void conn_close(struct rt_conn *c, const char *why);
/* A peer's connections in one state (the per-peer limits). */
unsigned int conn_count_of(const struct rt_server *srv, const char *owner, enum conn_state state);
void conn_want_write(struct rt_conn *c, bool on);
/* The queue onto the socket, as far as it takes it; false when c was closed (freed). */
bool conn_write(struct rt_conn *c);
/* Queues a frame (b is emptied either way) and asks to write it. */
int conn_push(struct rt_conn *c, struct rt_buf *b);
/* An Error frame, then the close once it is written. */
void conn_send_error(struct rt_conn *c, int err, const char *text);
int conn_push_heartbeat(struct rt_conn *c);
/* The Schema this connection's encoding describes the event with. */
int conn_push_schema(struct rt_conn *c, const struct tep_event *ev);
bool conn_selects_cpu(const struct rt_conn *c, unsigned int cpu);
/* An allocation failed for c: what it lost is counted already; said once. */
void conn_out_of_memory(struct rt_conn *c, const char *what);
/* fanout.c: the way c's records are encoded, found or made (c->common, c->only). */
int fanout_choose_encoding(struct rt_conn *c);
void fanout_release_encoding(struct rt_conn *c);
uint64_t server_clock_ns(clockid_t id);
