/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * libringtap: the client side of the ringtap protocol (docs/PROTOCOL.md).
 *
 * Owns one connection to ringtapd: the handshake (Hello, then Welcome or
 * Refusal), the schemas the daemon sends once per event, and turning the
 * frames that follow into one event at a time. Batches are unrolled into
 * their records, each given with its CPU and its event's schema. Messages
 * are the protobuf-c structs of ringtap.pb-c.h, read in place.
 *
 * Nothing here blocks longer than the caller allows, installs signal
 * handlers, or writes to stdout or stderr. A client is not thread-safe: use
 * one per thread, or lock around it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ringtap.pb-c.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RINGTAP_DEFAULT_SOCKET "/run/ringtap/ringtapd.sock"
#define RINGTAP_PROTOCOL_VERSION 1

struct ringtap_client;

/* How records and pages reach the client. */
enum ringtap_transport {
	RINGTAP_TRANSPORT_SOCKET,	/* frames on the socket: every daemon, every address */
	/*
	 * ringtapd's page ring, mapped read-only (protocol version 2; a Unix
	 * socket only, and a peer the daemon allows every event of its
	 * instance): pages are read and, for DECODED, decoded here, with the
	 * same events, views, Schemas and lines a DECODED stream gives; pids,
	 * filter and fields are applied here. Losses of the ring's own (this
	 * reader was too slow and the daemon wrote over pages it had not
	 * read) come as RINGTAP_LOST with source QUEUE, with an exact count of
	 * every event on those pages. A selected field that points into the
	 * kernel gets its function's name as on the socket: the library asks
	 * ringtapd for kallsyms then (HostTexts). ringtap_connect() fails when
	 * the daemon does not serve the ring to this client.
	 */
	RINGTAP_TRANSPORT_RING,
	/* The ring when the address is local and ringtapd serves it, the socket otherwise. */
	RINGTAP_TRANSPORT_RING_OR_SOCKET,
};

struct ringtap_client_opts {
	/*
	 * NULL: RINGTAP_DEFAULT_SOCKET. A Unix socket's path, or a daemon's
	 * TCP listener: "tls://HOST:PORT" (with the tls_ fields below) or
	 * "tcp://HOST:PORT" (a daemon with tcp_insecure: nothing is checked).
	 */
	const char *socket_path;
	const char *client_name;	/* NULL: "libringtap"; shown in the daemon's logs */
	/*
	 * NULL-terminated "system:event" globs. NULL or empty: the Hello has
	 * no subscription, which ringtapd refuses (BAD_SUBSCRIPTION).
	 */
	const char *const *events;
	const uint32_t *cpus;		/* only these CPUs' records; n_cpus 0: every CPU */
	size_t n_cpus;
	const int32_t *pids;		/* only these processes' records; n_pids 0: all; not RAW */
	size_t n_pids;
	bool common_fields;		/* also send every record's common fields */
	/*
	 * 0 or RINGTAP__ENCODING__DECODED: typed records (RINGTAP_RECORD).
	 * RINGTAP__ENCODING__RAW: sub-buffers as the kernel wrote them
	 * (RINGTAP_PAGE), with the format texts in the Schemas.
	 * RINGTAP__ENCODING__FIXED: records rewritten into fixed_layout
	 * (RINGTAP_FIXED; NULL: "padded-2012"), for tools with fixed offsets.
	 */
	Ringtap__Encoding encoding;
	const char *fixed_layout;
	/* Only records for which this holds, e.g. "seq < 10 && cpu == 1" (kernel syntax); not RAW. */
	const char *filter;
	/* Only these payload fields (NULL-terminated names); NULL: every field. DECODED only. */
	const char *const *fields;
	/*
	 * Called with every frame received, Welcome first, in the delimited form
	 * it came in: what a recording of the stream writes out.
	 */
	void (*tap)(void *ctx, const uint8_t *frame, size_t len);
	void *tap_ctx;
	int timeout_ms;			/* for connect and handshake; 0: 5000 */
	/*
	 * RAW: ask for a HostTexts frame after the Welcome (kallsyms, printk
	 * formats, saved cmdlines), which only the tap sees.
	 */
	bool host_texts;
	/*
	 * tls://: the CA the daemon's certificate must be signed by (NULL: the
	 * system's), this client's certificate and key (the daemon's clients
	 * file decides what its common name may select), and the name the
	 * daemon's certificate must carry (NULL: the address's host).
	 */
	const char *tls_ca;
	const char *tls_cert;
	const char *tls_key;
	const char *tls_server_name;
	/*
	 * How late a record may reach us, 10 to 60000 ms (ringtapd refuses
	 * others); 0: the daemon's max_latency_ms. A recorder that accepts
	 * seconds lets ringtapd wake less often while no one asks for less.
	 */
	unsigned int max_latency_ms;
	/*
	 * 0: RINGTAP_TRANSPORT_SOCKET. With the ring, a tap sees the frames
	 * the socket carries but the ring's own (Ring, RingReady) and, RAW,
	 * the Pages and Lost frames a socket would have carried, made from
	 * the ring; a DECODED stream's records reach no tap.
	 */
	enum ringtap_transport transport;
};

/* Why ringtap_connect() failed, for a message to the user. */
struct ringtap_connect_error {
	/*
	 * A Ringtap__RefusalReason when the daemon refused, 0 otherwise. Tells
	 * a refusal from a local failure with the same errno (UNKNOWN_EVENT and
	 * a missing socket are both -ENOENT).
	 */
	int refusal;
	char text[512];			/* one line, no newline; "" on success */
};

/*
 * Connects, sends the Hello (protocol version 1 and the encoding asked; for
 * the ring version 2, RAW and the RING transport) and waits for the
 * answer, and for the ring its Ring frame. 0 and a client on Welcome. On failure, -errno and,
 * when err is not NULL, err filled in:
 *   -EPROTONOSUPPORT  refused: NO_COMMON_VERSION
 *   -ENOPROTOOPT      refused: NO_ACCEPTABLE_ENCODING
 *   -ENOENT           refused: UNKNOWN_EVENT (or the socket does not exist)
 *   -EACCES           refused: NOT_AUTHORIZED (or no permission on the socket)
 *   -EINVAL           refused: BAD_SUBSCRIPTION
 *   -ECONNREFUSED     refused for another reason, or nobody listens
 *   -ETIMEDOUT        no answer within timeout_ms
 *   -ECONNRESET       the daemon closed the connection without an answer
 *   -EBADMSG          the answer is not a valid frame
 *   -EPROTO           the answer is a frame the handshake does not expect
 *   -EMSGSIZE         the Hello would exceed the daemon's 64 KiB limit
 *   -ENAMETOOLONG     socket_path does not fit a Unix socket address
 * or what socket(), connect() or the daemon's Error frame said.
 */
int ringtap_connect(struct ringtap_client **out, const struct ringtap_client_opts *opts,
		    struct ringtap_connect_error *err);

/*
 * A stream that survives its connection: a daemon's crash or restart, a
 * network cut. Connects as ringtap_connect() does, asking for a resumable
 * stream: every record and page comes numbered, and the Welcome carries a
 * token only this peer (uid, or certificate name) can resume with. With
 * from holding a place (ringtap_resume_save() of an earlier connection),
 * the daemon first sends everything that came after it, from its page
 * ring, then the live stream: no record twice, none missed while the ring
 * still held it (what it no longer held comes as a Lost report). The
 * subscription of opts must be the one the place was saved from. With
 * the ring transport (asked for by name; auto resumes on the socket) the
 * place is the ring reader itself: it reads on where it was, in the area
 * the gone daemon wrote, then in the new one's, and the place hands it to
 * the client that resumes. -ESTALE when the daemon refused the
 * resume (RESUME_REFUSED: a token stale, forged or another peer's; err
 * says which): connect again with from NULL, a new stream.
 */
struct ringtap_resume;

struct ringtap_resume *ringtap_resume_new(void);
void ringtap_resume_free(struct ringtap_resume *r);
int ringtap_connect_resumable(struct ringtap_client **out, const struct ringtap_client_opts *opts,
			      struct ringtap_resume *from, struct ringtap_connect_error *err);
/*
 * The place after the last event ringtap_next() handed out, and the token,
 * into r (before ringtap_close()). A ring reader's reader goes with it: c
 * reads nothing more. 0; -EINVAL for a stream not resumable.
 */
int ringtap_resume_save(struct ringtap_client *c, struct ringtap_resume *r);
/* The CPUs a place counts, and the last seq handed out on one (0: none yet). */
size_t ringtap_resume_cpus(const struct ringtap_resume *r);
uint64_t ringtap_resume_seq(const struct ringtap_resume *r, unsigned int cpu);

/*
 * Ends the stream but not the connection: sends a Bye; ringtap_next() then
 * gives what the daemon had queued for this client, its last loss reports
 * and RINGTAP_END (end_clean when the daemon said Bye back). What a
 * recording does at its end, so that everything sent reaches its file.
 */
int ringtap_bye(struct ringtap_client *c);

/* Sends Bye (unless ringtap_bye() did), closes the connection and frees everything. NULL is fine. */
void ringtap_close(struct ringtap_client *c);

/*
 * Replaces the subscription mid-stream (events, CPUs, pids, filter of opts;
 * the encoding stays). Records already queued for the old one still come.
 * 0 or -errno; a subscription the daemon cannot serve ends the stream with
 * an Error frame. -EOPNOTSUPP for a DECODED client on the ring, which
 * applies the subscription of its Hello (connect again for another).
 */
int ringtap_update(struct ringtap_client *c, const struct ringtap_client_opts *opts);

/* The daemon's Welcome: host, clock, CPUs and the kernel's ring buffer layout. */
const Ringtap__Welcome *ringtap_welcome(const struct ringtap_client *c);

/* Whether records and pages come from ringtapd's page ring (RINGTAP_TRANSPORT_RING). */
bool ringtap_uses_ring(const struct ringtap_client *c);

/* The socket, for a poll loop; see ringtap_next() on how to drain it. */
int ringtap_fd(const struct ringtap_client *c);

enum ringtap_event_kind {
	RINGTAP_RECORD,		/* record, schema, cpu */
	RINGTAP_FIXED,		/* fixed, cpu: one record in the legacy layout */
	RINGTAP_PAGE,		/* page, cpu: one sub-buffer as read */
	RINGTAP_LOST,		/* lost, cpu */
	RINGTAP_HEARTBEAT,	/* heartbeat */
	RINGTAP_ERROR_FRAME,	/* error: the daemon gives up and closes the connection */
	RINGTAP_END,		/* the stream ended: end_clean says whether with a Bye */
	RINGTAP_CPU_STATE,	/* cpu_state, cpu: a selected CPU went offline or came back */
};

/* Pointers into the client's frames: valid until the next ringtap_next() or ringtap_close(). */
struct ringtap_event {
	enum ringtap_event_kind kind;
	unsigned int cpu;
	const Ringtap__Record *record;	/* NULL with record views on: ringtap_record_view() */
	const Ringtap__FixedRecord *fixed;
	const ProtobufCBinaryData *page;
	unsigned int page_records;	/* RINGTAP_PAGE: its events, as the daemon counted */
	const Ringtap__Schema *schema;	/* of record->event_id; fields match record->fields */
	const Ringtap__Lost *lost;
	const Ringtap__Heartbeat *heartbeat;
	const Ringtap__Error *error;
	const Ringtap__CpuState *cpu_state;
	/*
	 * RINGTAP_END: true when the daemon ended the stream with a Bye, after
	 * reporting every loss; false when the connection was cut (the daemon
	 * died, say): records lost at the end may then not have been reported.
	 */
	bool end_clean;
};

/*
 * Waits up to timeout_ms (negative: no limit, 0: only what is already
 * there) for the next event. Returns 1 and the event, 0 on timeout, or
 * -errno: -EINTR when a signal interrupted the wait (try again), and, for
 * good, -EBADMSG (a frame that does not parse or is over 16 MiB, or the
 * connection cut inside one), -EPROTO (a frame out of place: a Record
 * before its Schema, values that do not match it, an unexpected message),
 * -ECONNRESET and other socket errors. ringtap_error_text() says more.
 * After RINGTAP_END or an error, every call returns the same again.
 *
 * Frames are buffered: after poll() says ringtap_fd() is readable, call
 * this with timeout 0 until it returns 0 before polling again.
 */
int ringtap_next(struct ringtap_client *c, struct ringtap_event *ev, int timeout_ms);

/*
 * Called with every frame received from now on once it is unpacked, after
 * the tap (with tap_ctx): Schemas and HostTexts, which ringtap_next() does not
 * hand out, reach a recorder this way. Valid during the call only. Every
 * Batch and Pages is then unpacked too, record views or not.
 */
void ringtap_set_frame_tap(struct ringtap_client *c,
			   void (*frame_tap)(void *ctx, const Ringtap__Frame *frame));

/*
 * Records read in place. With views on, a Batch is not unpacked: each
 * RINGTAP_RECORD event comes with record NULL (schema and cpu as before)
 * and ringtap_record_view() reads its values where they lie in the frame,
 * without an allocation per record. Pages are not unpacked either: each
 * RINGTAP_PAGE event's page points at the sub-buffer in the frame, not at
 * a copy: read-only, and not aligned (copy it before casting its words).
 * Off by default; a frame tap turns it off.
 */
enum ringtap_value_kind {
	RINGTAP_VALUE_NONE,		/* no value was sent */
	RINGTAP_VALUE_SIGNED,		/* s */
	RINGTAP_VALUE_UNSIGNED,		/* u, and symbol when it points into the kernel */
	RINGTAP_VALUE_TEXT,		/* bytes, len: UTF-8, not NUL-terminated */
	RINGTAP_VALUE_BYTES,		/* bytes, len */
};

struct ringtap_value {
	enum ringtap_value_kind kind;
	union {
		int64_t s;
		uint64_t u;
	};
	const uint8_t *bytes;
	size_t len;
	const char *symbol;		/* not NUL-terminated; NULL: none */
	size_t symbol_len;
};

struct ringtap_record_view {
	uint64_t timestamp;
	uint32_t event_id;
	int32_t pid;
	size_t n_fields, n_common;
	const struct ringtap_value *fields;	/* in the order of the event's Schema */
	const struct ringtap_value *common;	/* in the order of Layout.common_fields */
	/* A resumable stream's Record.seq (0: none); last, for programs built before it. */
	uint64_t seq;
};

void ringtap_set_record_views(struct ringtap_client *c, bool on);

/*
 * The values of a RINGTAP_RECORD event, views on or off; valid until the
 * next ringtap_next(). NULL for another kind of event (or no memory).
 */
const struct ringtap_record_view *ringtap_record_view(struct ringtap_client *c,
						      const struct ringtap_event *ev);

/* What went wrong in ringtap_next(), as one line; "" when nothing did. */
const char *ringtap_error_text(const struct ringtap_client *c);

/* The Schema received for an event, by name; NULL before it came. */
const Ringtap__Schema *ringtap_find_schema(const struct ringtap_client *c, const char *system,
					   const char *name);

enum ringtap_format_flags {
	RINGTAP_FORMAT_NO_TIME = 1 << 0,	/* leave out the timestamp */
	RINGTAP_FORMAT_JSON = 1 << 1,		/* one JSON object instead of text */
};

/*
 * Writes a RINGTAP_RECORD (views on or off), RINGTAP_LOST or
 * RINGTAP_CPU_STATE event as one line without the newline, like snprintf(): returns the length of the whole line, of which
 * at most size - 1 characters and a NUL went into buf. The text is that of
 * ringtapd --stdout:
 *   SEC.NSEC [CPU] SYSTEM:NAME pid=PID FIELD=VALUE ... [| COMMON=VALUE ...]
 *   # cpu N: lost M events (kernel|queue|malformed)
 * strings raw with bytes outside printable ASCII and '\' as \xNN, other
 * arrays as {v,v,...} in the width the schema gives. JSON:
 *   {"ts":T,"cpu":C,"event":"SYSTEM:NAME","pid":P,"fields":{...}[,"common":{...}]}
 *   {"lost":M,"cpu":C,"source":"kernel"[,"exact":false]}
 * c gives the common fields' names and the kernel's byte order for arrays;
 * NULL means names like common0 and the host's byte order. -EINVAL for
 * other kinds of events.
 */
int ringtap_format_event(const struct ringtap_client *c, const struct ringtap_event *ev,
			 char *buf, size_t size, unsigned int flags);

/*
 * The same with the layout of a Welcome received some other way (ringtapd's
 * NATS stream carries it in a message of its own); NULL as with c NULL. A
 * record must be unpacked (ev->record set).
 */
int ringtap_format_event_layout(const Ringtap__Layout *layout, const struct ringtap_event *ev,
				char *buf, size_t size, unsigned int flags);

#ifdef __cplusplus
}
#endif
