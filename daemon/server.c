// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <grp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <systemd/sd-daemon.h>

#include "acl.h"
#include "encode.h"
#include "filter.h"
#include "handshake.h"
#include "host.h"
#include "layout.h"
#include "legacy.h"
#include "log.h"
#include "server.h"
#include "subscriber.h"
#include "tls.h"
#include "read_file.h"
#include "tracefs.h"
#include "util.h"
#include "wire.h"

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
	struct rt_subscriber sub;
	bool authorized;
	bool common;
	Ringtap__Encoding encoding;
	const struct rt_legacy_layout *legacy;	/* with FIXED */
	struct tep_event_filter *filter;	/* NULL: every record of the selection */
	char **only;			/* projection, NULL-terminated; NULL: every field */
	pid_t pid;
	uid_t uid;
	char name[160];
	char peer[112];		/* TCP: [common name@]address, which the client cannot choose */
	const char *dead;	/* set by handlers: closed when the I/O callback returns */
	size_t raw_schemas;	/* RAW: session events whose Schema it was sent */
	bool said_bye;		/* a Bye is queued or sent: the stream ends here */
};

struct rt_server {
	sd_event *loop;
	int listen_fd;
	bool own_socket;
	char *path;
	sd_event_source *listen_src;
	int tcp_fd;
	sd_event_source *tcp_src;
	struct rt_tls *tls;		/* NULL: plain TCP (tcp_insecure) */
	bool warned_tcp_flood;
	struct rt_acl *acl;
	char *clients_path;		/* the clients file, read again on reload */
	sd_event_source *heartbeat;
	clockid_t trace_clockid;
	gid_t group;
	bool have_group;
	size_t max_queue;
	unsigned int max_clients;
	unsigned int max_events;
	uint64_t dropped_gone;		/* by connections closed since */
	struct rt_conn *conns;
	unsigned int n_conns;
	struct rt_session *session;
	struct rt_layout *layout;
	struct rt_host_id id;
	struct rt_buf packed;		/* the current record, as sent */
	struct rt_buf packed_common;	/* the same with common fields */
	struct rt_buf packed_fixed;	/* the same in the legacy layout */
	struct rt_buf packed_projected;	/* for one connection's projection */
};

static const Ringtap__Encoding offered[] = {
	RINGTAP__ENCODING__DECODED,
	RINGTAP__ENCODING__RAW,
	RINGTAP__ENCODING__FIXED,
};

static void free_projection(struct rt_conn *c)
{
	rt_strv_free(c->only);
	c->only = NULL;
}

static void conn_free(struct rt_conn *c)
{
	struct rt_server *srv = c->srv;

	for (struct rt_conn **p = &srv->conns; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	srv->n_conns--;
	srv->dropped_gone += c->sub.dropped;
	sd_event_source_disable_unref(c->io);
	sd_event_source_disable_unref(c->more);
	rt_tls_conn_free(c->tls);
	free(c->common_name);
	close(c->fd);
	rt_wire_reader_release(&c->reader);
	rt_subscriber_release(&c->sub);
	if (c->filter)
		tep_filter_free(c->filter);
	free_projection(c);
	free(c);
}

static void conn_close(struct rt_conn *c, const char *why)
{
	rt_log(LOG_INFO, "client %s (pid %d): %s; %llu records delivered, %llu dropped, %llu lost "
	       "in the kernel", c->name, (int)c->pid, why, (unsigned long long)c->sub.delivered,
	       (unsigned long long)c->sub.dropped, (unsigned long long)c->sub.kernel_lost);
	conn_free(c);
}

static int conn_want_write(struct rt_conn *c, bool on)
{
	return sd_event_source_set_io_events(c->io, EPOLLIN | (on ? EPOLLOUT : 0));
}

static int conn_push(struct rt_conn *c, struct rt_buf *b)
{
	int ret = rt_subscriber_push(&c->sub, b->data, b->len);

	rt_buf_free(b);
	return ret ?: conn_want_write(c, true);
}

/* Sends a last frame and closes once it is written. */
static void conn_finish(struct rt_conn *c, struct rt_buf *frame)
{
	if (conn_push(c, frame) < 0) {
		c->dead = "out of memory";
		return;
	}
	c->state = CONN_CLOSING;
}

/*
 * Client-chosen text (its name, an event glob, a filter) goes into log lines:
 * a newline in it would start a forged line, with the journal priority of
 * whatever "<N>" follows.
 */
static void printable(char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			*s = '?';
}

static void refuse(struct rt_conn *c, Ringtap__RefusalReason reason, const char *text)
{
	struct rt_buf b = { 0 };
	char logged[256];

	snprintf(logged, sizeof(logged), "%s", text);
	printable(logged);
	rt_log(LOG_NOTICE, "client %s (pid %d uid %u) refused: %s", c->name, (int)c->pid,
	       (unsigned int)c->uid, logged);
	if (rt_encode_refusal_frame(reason, text, &b)) {
		rt_buf_free(&b);
		c->dead = "refused";
		return;
	}
	conn_finish(c, &b);
}

static void send_error(struct rt_conn *c, int err, const char *text)
{
	struct rt_buf b = { 0 };

	rt_log(LOG_NOTICE, "client %s (pid %d): %s", c->name, (int)c->pid, text);
	if (rt_encode_error_frame(err, text, &b)) {
		rt_buf_free(&b);
		c->dead = "protocol error";
		return;
	}
	conn_finish(c, &b);
}

/* The i-th event the session enabled, as the layout knows it; NULL if it does not. */
static struct tep_event *enabled_event(struct rt_server *srv, size_t i)
{
	const char *name = srv->session->events[i];
	const char *colon = strchr(name, ':');
	_cleanup_free_ char *sys = strndup(name, colon - name);

	return sys ? tep_find_event_by_name(srv->layout->tep, sys, colon + 1) : NULL;
}

/*
 * The subscription's filter, in libtraceevent's syntax (the kernel's filter
 * syntax: "seq < 10 && cpu == 1"), applied to every event it selects: each
 * must have the fields the filter names.
 */
static int set_filter(struct rt_conn *c, const char *expr, const char **why)
{
	static char errbuf[256];
	struct rt_server *srv = c->srv;
	struct tep_event_filter *filter;

	if (c->filter)
		tep_filter_free(c->filter);
	c->filter = NULL;
	if (!expr || !*expr)
		return 0;
	filter = tep_filter_alloc(srv->layout->tep);
	if (!filter)
		return -ENOMEM;
	for (size_t i = 0; i < srv->session->n_events; i++) {
		const char *name = srv->session->events[i];
		struct tep_event *ev = enabled_event(srv, i);
		_cleanup_free_ char *one = NULL;
		enum tep_errno err;

		if (!ev || !rt_subscriber_wants_event(&c->sub, (unsigned int)ev->id))
			continue;
		/* Proven well-formed first: tep's parser crashes on some malformed filters. */
		if (rt_filter_check(expr, ev, errbuf, sizeof(errbuf))) {
			*why = errbuf;
			tep_filter_free(filter);
			return -EINVAL;
		}
		if (asprintf(&one, "%s/%s:%s", ev->system, ev->name, expr) < 0) {
			tep_filter_free(filter);
			return -ENOMEM;
		}
		err = tep_filter_add_filter_str(filter, one);
		if (err) {
			char msg[160];

			tep_filter_strerror(filter, err, msg, sizeof(msg));
			snprintf(errbuf, sizeof(errbuf), "filter '%s' on %s: %s", expr, name, msg);
			*why = errbuf;
			tep_filter_free(filter);
			return -EINVAL;
		}
	}
	c->filter = filter;
	return 0;
}

/* Projected fields must each exist in some selected event: a typo is an error, not silence. */
static int set_projection(struct rt_conn *c, const Ringtap__Subscription *sub, const char **why)
{
	static char errbuf[160];
	struct rt_server *srv = c->srv;

	free_projection(c);
	if (!sub->n_fields || c->encoding != RINGTAP__ENCODING__DECODED)
		return 0;
	c->only = calloc(sub->n_fields + 1, sizeof(*c->only));
	if (!c->only)
		return -ENOMEM;
	for (size_t i = 0; i < sub->n_fields; i++) {
		bool found = false;

		c->only[i] = strdup(sub->fields[i]);
		if (!c->only[i])
			return -ENOMEM;
		for (int e = 0; e < tep_get_events_count(srv->layout->tep) && !found; e++) {
			struct tep_event *ev = tep_get_event(srv->layout->tep, e);

			found = rt_subscriber_wants_event(&c->sub, (unsigned int)ev->id) &&
				tep_find_field(ev, sub->fields[i]);
		}
		if (!found) {
			snprintf(errbuf, sizeof(errbuf), "no selected event has a field '%s'",
				 sub->fields[i]);
			*why = errbuf;
			return -EINVAL;
		}
	}
	return 0;
}

/* Enables what the subscription names and selects, on this connection, what it matches. */
static int subscribe(struct rt_conn *c, const Ringtap__Subscription *sub, const char **why)
{
	struct rt_server *srv = c->srv;
	_cleanup_free_ const char **globs = NULL;
	unsigned int selected = 0;
	int ret;

	if (!sub)
		return 0;
	if (srv->max_events && sub->n_events > srv->max_events) {
		*why = "more event names than this daemon's max_events allows";
		return -E2BIG;
	}
	/* Checked before anything is enabled: enabling is itself an effect on the host. */
	for (size_t i = 0; c->allowed && i < sub->n_events; i++)
		if (!rt_acl_allows_glob(c->allowed, sub->events[i])) {
			*why = sub->events[i];
			return -EACCES;
		}
	/* protobuf-c arrays carry a count, rt_session_enable wants a NULL at the end. */
	globs = calloc(sub->n_events + 1, sizeof(*globs));
	if (!globs)
		return -ENOMEM;
	for (size_t i = 0; i < sub->n_events; i++)
		globs[i] = sub->events[i];
	ret = rt_session_enable(srv->session, srv->layout, globs, srv->max_events, why);
	if (ret < 0)
		return ret;
	rt_session_symbols(srv->session, srv->layout);
	for (size_t i = 0; i < srv->session->n_events; i++) {
		const char *name = srv->session->events[i];
		char *colon = strchr(name, ':');
		bool match = false;

		for (size_t g = 0; g < sub->n_events && !match; g++)
			match = !fnmatch(sub->events[g], name, 0) ||
				(!strchr(sub->events[g], ':') && !fnmatch(sub->events[g], colon + 1, 0));
		if (match && c->allowed && !rt_acl_allows_event(c->allowed, name)) {
			*why = name;
			return -EACCES;
		}
		if (match) {
			struct tep_event *ev = enabled_event(srv, i);

			if (!ev)
				return -ENOENT;
			if (srv->max_events && ++selected > srv->max_events) {
				*why = "selects more events than this daemon's max_events allows";
				return -E2BIG;
			}
			ret = rt_subscriber_select_event(&c->sub, (unsigned int)ev->id);
			if (ret)
				return ret;
		}
	}
	ret = set_filter(c, sub->filter, why);
	if (ret)
		return ret;
	ret = set_projection(c, sub, why);
	if (ret)
		return ret;
	ret = rt_subscriber_select_cpus(&c->sub, sub->cpus, sub->n_cpus);
	if (ret) {
		*why = "a CPU this machine does not have";
		return ret;
	}
	c->common = sub->has_common_fields && sub->common_fields;
	return rt_subscriber_select_pids(&c->sub, sub->pids, sub->n_pids);
}

/*
 * For trace.dat writers: kallsyms, printk formats and saved cmdlines, read
 * now (cmdlines change). A text that cannot be read is left out, not fatal:
 * the file then shows addresses or "<...>", as trace-cmd's would.
 */
static int push_host_texts(struct rt_conn *c)
{
	static const char *const names[] = { "kallsyms", "printk_formats", "saved_cmdlines" };
	char *text[3] = { NULL };
	size_t len[3] = { 0 };
	struct rt_host_texts t;
	struct rt_buf b = { 0 };
	int ret;

	for (int i = 0; i < 3; i++) {
		if (rt_session_read_text(c->srv->session, names[i], &text[i], &len[i]))
			rt_log(LOG_NOTICE, "client %s: no %s to send", c->name, names[i]);
		/* Together they must fit in one frame a client accepts. */
		if (text[i] && len[i] > (i == 0 ? RT_WIRE_MAX_FRAME_DEFAULT - (4u << 20) : 1u << 20)) {
			rt_log(LOG_NOTICE, "client %s: %s is %zu bytes, too big to send", c->name,
			       names[i], len[i]);
			free(text[i]);
			text[i] = NULL;
		}
	}
	t = (struct rt_host_texts){
		.kallsyms = text[0], .kallsyms_len = len[0],
		.printk_formats = text[1], .printk_formats_len = len[1],
		.saved_cmdlines = text[2], .saved_cmdlines_len = len[2],
	};
	ret = rt_encode_host_texts_frame(&t, &b);
	if (!ret)
		ret = conn_push(c, &b);
	if (ret)
		rt_buf_free(&b);
	for (int i = 0; i < 3; i++)
		free(text[i]);
	return ret;
}

static uint64_t clock_ns(clockid_t id);

/* A (trace clock, realtime) pair, taken now. */
static int push_heartbeat(struct rt_conn *c)
{
	struct rt_buf b = { 0 };
	int ret = rt_encode_heartbeat_frame(clock_ns(c->srv->trace_clockid),
					    clock_ns(CLOCK_REALTIME), &b);

	if (!ret)
		ret = conn_push(c, &b);
	rt_buf_free(&b);
	return ret;
}

static void on_hello(struct rt_conn *c, const Ringtap__Hello *hello)
{
	struct rt_server *srv = c->srv;
	struct rt_offer offer = { RT_PROTOCOL_MIN, RT_PROTOCOL_MAX, offered,
				  sizeof(offered) / sizeof(offered[0]), 256 };
	struct rt_agreement agreed;
	Ringtap__RefusalReason reason;
	const char *text = "", *why = "";
	struct rt_buf b = { 0 };
	int ret;

	if (hello->client_name) {
		snprintf(c->name, sizeof(c->name), "%.40s", hello->client_name);
		printable(c->name);
		if (c->tcp) {
			size_t len = strlen(c->name);

			snprintf(c->name + len, sizeof(c->name) - len, " via %s", c->peer);
		}
	}
	if (!c->authorized) {
		refuse(c, RINGTAP__REFUSAL_REASON__NOT_AUTHORIZED, c->tcp ?
		       "the certificate's common name is not in this daemon's clients file" :
		       "the peer is neither root nor in the allowed group");
		return;
	}
	if (rt_handshake(hello, &offer, &agreed, &reason, &text)) {
		refuse(c, reason, text);
		return;
	}
	c->encoding = agreed.encoding;
	/*
	 * Pages go out whole, with every event anyone enabled in them, and
	 * HostTexts hold kallsyms: RAW is for certificates allowed everything.
	 */
	if (c->encoding == RINGTAP__ENCODING__RAW && c->allowed &&
	    !rt_acl_allows_glob(c->allowed, "*:*")) {
		refuse(c, RINGTAP__REFUSAL_REASON__NOT_AUTHORIZED,
		       "RAW pages carry every enabled event: this certificate may select only some");
		return;
	}
	if (c->encoding == RINGTAP__ENCODING__FIXED) {
		const char *name = hello->subscription && hello->subscription->fixed_layout ?
					   hello->subscription->fixed_layout : "padded-2012";

		c->legacy = rt_legacy_find(name);
		if (!c->legacy) {
			refuse(c, RINGTAP__REFUSAL_REASON__BAD_SUBSCRIPTION,
			       "unknown fixed layout (known: padded-2012)");
			return;
		}
		c->sub.data_kind = RINGTAP__FRAME__MSG_FIXED;
	}
	if (srv->max_clients && rt_server_subscribers(srv) >= srv->max_clients) {
		char msg[128];

		snprintf(msg, sizeof(msg), "this daemon serves at most %u subscribers (max_clients)",
			 srv->max_clients);
		refuse(c, RINGTAP__REFUSAL_REASON__TOO_MANY_CLIENTS, msg);
		return;
	}
	ret = subscribe(c, hello->subscription, &why);
	if (ret == -ENOENT) {
		char msg[256];

		snprintf(msg, sizeof(msg), "no event matches '%s'", why);
		refuse(c, RINGTAP__REFUSAL_REASON__UNKNOWN_EVENT, msg);
		return;
	}
	if (ret == -EACCES) {
		char msg[300];

		snprintf(msg, sizeof(msg), "this certificate may not subscribe to '%s'", why);
		refuse(c, RINGTAP__REFUSAL_REASON__NOT_AUTHORIZED, msg);
		return;
	}
	if (ret) {
		refuse(c, RINGTAP__REFUSAL_REASON__BAD_SUBSCRIPTION, why);
		return;
	}
	ret = rt_encode_welcome_frame(agreed.version, agreed.encoding, &srv->id.host, srv->layout, &b);
	if (ret || conn_push(c, &b)) {
		rt_buf_free(&b);
		c->dead = "cannot send Welcome";
		return;
	}
	if (c->encoding == RINGTAP__ENCODING__RAW && hello->subscription &&
	    hello->subscription->has_host_texts && hello->subscription->host_texts &&
	    push_host_texts(c)) {
		c->dead = "cannot send HostTexts";
		return;
	}
	/* The first clock pair, before any record. */
	if (push_heartbeat(c)) {
		c->dead = "cannot send a Heartbeat";
		return;
	}
	c->state = CONN_STREAMING;
	rt_log(LOG_INFO, "client %s (pid %d uid %u) subscribed: %zu event pattern(s), version %u",
	       c->name, (int)c->pid, (unsigned int)c->uid,
	       hello->subscription ? hello->subscription->n_events : 0, agreed.version);
}

static void on_frame(struct rt_conn *c, Ringtap__Frame *f)
{
	const char *why = "";

	switch (c->state) {
	case CONN_HELLO:
		if (f->msg_case != RINGTAP__FRAME__MSG_HELLO) {
			send_error(c, EPROTO, "the first frame must be a Hello");
			return;
		}
		on_hello(c, f->hello);
		return;
	case CONN_STREAMING:
		if (f->msg_case == RINGTAP__FRAME__MSG_BYE) {
			c->state = CONN_CLOSING;
			conn_want_write(c, true);
			return;
		}
		if (f->msg_case == RINGTAP__FRAME__MSG_UPDATE && f->update->subscription) {
			/*
			 * Keep the queue, the losses and which Schemas were sent (a
			 * client must not get one twice); replace the selection.
			 */
			rt_subscriber_clear_selection(&c->sub);
			if (subscribe(c, f->update->subscription, &why) < 0) {
				send_error(c, EINVAL, "the updated subscription cannot be served");
				return;
			}
			/* A recorder asks again at its end: cmdlines seen meanwhile. */
			if (c->encoding == RINGTAP__ENCODING__RAW &&
			    f->update->subscription->has_host_texts &&
			    f->update->subscription->host_texts && push_host_texts(c))
				c->dead = "cannot send HostTexts";
			return;
		}
		send_error(c, EPROTO, "unexpected message");
		return;
	case CONN_CLOSING:
		return;
	}
}

/* recv() or its TLS equivalent: n > 0, 0 at the end, -EAGAIN, -errno. */
static ssize_t conn_read(struct rt_conn *c, void *buf, size_t len)
{
	ssize_t n;

	if (c->tls)
		return rt_tls_read(c->tls, buf, len);
	n = recv(c->fd, buf, len, MSG_DONTWAIT);
	return n >= 0 ? n : (errno == EAGAIN || errno == EINTR) ? -EAGAIN : -errno;
}

/* Frames queued at once go out in one call: a page per send() is most of a raw stream's cost. */
#define FRAMES_PER_WRITE 64

static ssize_t conn_write_queue(struct rt_conn *c, const void *head, size_t head_len)
{
	struct iovec iov[FRAMES_PER_WRITE];
	struct msghdr msg = { .msg_iov = iov };
	ssize_t n;

	if (c->tls)
		return rt_tls_write(c->tls, head, head_len);
	msg.msg_iovlen = rt_subscriber_peekv(&c->sub, iov, FRAMES_PER_WRITE);
	n = sendmsg(c->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
	return n >= 0 ? n : (errno == EAGAIN || errno == EINTR) ? -EAGAIN : -errno;
}

static const char *conn_error(struct rt_conn *c, ssize_t err)
{
	return c->tls ? rt_tls_conn_error(c->tls) : strerror((int)-err);
}

/*
 * The certificate's common name decides what it may subscribe to; a name
 * the clients file does not list may connect, to be told so, but select
 * nothing.
 */
static void tls_handshake_done(struct rt_conn *c)
{
	char cn[256], addr[64];

	c->handshaking = false;
	snprintf(addr, sizeof(addr), "%.63s", c->peer);
	if (rt_tls_peer_common_name(c->tls, cn, sizeof(cn)))
		return;
	c->allowed = rt_acl_lookup(c->srv->acl, cn);
	c->authorized = c->allowed != NULL;
	c->common_name = strdup(cn);
	if (!c->common_name)
		c->authorized = false;
	printable(cn);
	snprintf(c->peer, sizeof(c->peer), "%.40s@%.64s", cn, addr);
	snprintf(c->name, sizeof(c->name), "%s", c->peer);
	if (!c->authorized)
		rt_log(LOG_NOTICE, "client %s: certificate name '%s' is not in the clients file",
		       c->name, cn);
}

static int on_conn_io(sd_event_source *s, int fd, uint32_t revents, void *userdata);

static int on_conn_more(sd_event_source *s, void *userdata)
{
	struct rt_conn *c = userdata;

	return on_conn_io(c->io, c->fd, EPOLLIN, c);
}

/* Reads one connection takes at a time before the others (and the ring buffers) get theirs. */
#define READS_PER_TURN 16

static int on_conn_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct rt_conn *c = userdata;
	unsigned int reads = 0;

	if (c->refused_beats) {
		uint8_t discard[4096];
		ssize_t n = recv(fd, discard, sizeof(discard), MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			conn_free(c);
		return 0;
	}
	if (c->handshaking) {
		int ret = rt_tls_handshake(c->tls);

		if (ret == -EAGAIN)
			return sd_event_source_set_io_events(c->io, rt_tls_wants_write(c->tls) ?
							     EPOLLOUT : EPOLLIN);
		if (ret) {
			rt_log(LOG_NOTICE, "client %s: %s", c->name, rt_tls_conn_error(c->tls));
			/*
			 * With TLS 1.3 the client has sent its first frame by now; closing
			 * with it unread would reset the connection and lose the alert
			 * that says why. The alert is out: end our side, read until the
			 * client closes (or two heartbeats pass).
			 */
			shutdown(fd, SHUT_WR);
			c->refused_beats = 1;
			return sd_event_source_set_io_events(c->io, EPOLLIN);
		}
		tls_handshake_done(c);
		conn_want_write(c, false);
		/* What came with the handshake's last flight is read below. */
		revents |= EPOLLIN;
	}
	if (revents & EPOLLIN) {
		uint8_t buf[4096];
		ssize_t n;

		/* Until it would block: TLS may hold decrypted bytes the socket no longer shows. */
		while ((n = conn_read(c, buf, sizeof(buf))) != -EAGAIN) {
			if (n <= 0) {
				conn_close(c, n == 0 ? "disconnected" : conn_error(c, n));
				return 0;
			}
			for (size_t off = 0; off < (size_t)n && c->state != CONN_CLOSING;) {
				Ringtap__Frame *f = NULL;
				size_t used = 0;
				int ret = rt_wire_reader_feed(&c->reader, buf + off, n - off, &used);

				off += used;
				if (ret >= 0)
					ret = rt_wire_reader_next(&c->reader, &f);
				if (ret < 0) {
					send_error(c, -ret, c->reader.why ? c->reader.why : "bad frame");
					break;
				}
				if (ret == 0)
					break;
				on_frame(c, f);
				ringtap__frame__free_unpacked(f, NULL);
			}
			if (c->dead) {
				conn_close(c, c->dead);
				return 0;
			}
			/* Level-triggered: a plain socket with more to read comes back. */
			if (c->state == CONN_CLOSING || !c->tls)
				break;
			/*
			 * TLS: what it holds decrypted no longer shows on the socket,
			 * so its turn ends with a deferred call to read on.
			 */
			if (++reads == READS_PER_TURN) {
				if (rt_tls_has_pending(c->tls)) {
					if (!c->more && sd_event_add_defer(c->srv->loop, &c->more,
									   on_conn_more, c) < 0) {
						conn_close(c, "out of memory");
						return 0;
					}
					sd_event_source_set_enabled(c->more, SD_EVENT_ONESHOT);
				}
				break;
			}
		}
		if (c->tls && rt_tls_wants_write(c->tls))
			conn_want_write(c, true);
	}
	if (revents & (EPOLLOUT | EPOLLHUP | EPOLLERR)) {
		const uint8_t *data;
		size_t len;

		for (;;) {
			ssize_t n;

			if (!rt_subscriber_peek(&c->sub, &data, &len)) {
				/* Drained: report what was dropped meanwhile, then rest. */
				if (rt_subscriber_flush_losses(&c->sub) == 0 && c->sub.head)
					continue;
				if (c->state == CONN_CLOSING) {
					conn_close(c, "closed");
					return 0;
				}
				conn_want_write(c, false);
				break;
			}
			n = conn_write_queue(c, data, len);
			if (n == -EAGAIN) {
				/*
				 * TLS may have sealed part of the head into a record that
				 * waits for room: the retry must offer the same bytes, so
				 * a stop's abandon must keep that frame.
				 */
				c->sub.head_in_flight = c->tls != NULL;
				break;
			}
			if (n < 0) {
				conn_close(c, "vanished mid-write");
				return 0;
			}
			c->sub.head_in_flight = false;
			rt_subscriber_consume(&c->sub, (size_t)n);
		}
	}
	return 0;
}

static bool peer_in_group(int fd, gid_t group, gid_t primary)
{
	gid_t groups[256];
	socklen_t len = sizeof(groups);

	if (primary == group)
		return true;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len))
		return false;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == group)
			return true;
	return false;
}

/* Room for one more connection, or a warning and false. */
static bool room_for_one_more(struct rt_server *srv)
{
	/*
	 * Past max_clients a client is still read, to be told why in a Refusal;
	 * only a flood beyond that is closed unanswered.
	 */
	if (srv->max_clients && srv->n_conns >= srv->max_clients + PENDING_CLIENTS) {
		rt_log(LOG_WARNING, "closing a connection unanswered: %u connections already",
		       srv->n_conns);
		return false;
	}
	return true;
}

static struct rt_conn *conn_new(struct rt_server *srv, int cfd)
{
	struct rt_conn *c = calloc(1, sizeof(*c));

	if (!c || rt_subscriber_init(&c->sub, (unsigned int)srv->session->ncpus, srv->max_queue)) {
		free(c);
		return NULL;
	}
	c->srv = srv;
	c->fd = cfd;
	snprintf(c->name, sizeof(c->name), "unnamed");
	rt_wire_reader_init(&c->reader, CLIENT_MAX_FRAME);
	return c;
}

static int conn_add(struct rt_server *srv, struct rt_conn *c, uint32_t events)
{
	int ret = sd_event_add_io(srv->loop, &c->io, c->fd, events, on_conn_io, c);

	if (ret < 0) {
		rt_tls_conn_free(c->tls);
		rt_subscriber_release(&c->sub);
		close(c->fd);
		free(c);
		return ret;
	}
	c->next = srv->conns;
	srv->conns = c;
	srv->n_conns++;
	return 0;
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct rt_server *srv = userdata;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct rt_conn *c;
	int cfd;

	cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd < 0)
		return 0;
	if (!room_for_one_more(srv) || getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ||
	    !(c = conn_new(srv, cfd))) {
		close(cfd);
		return 0;
	}
	c->pid = cred.pid;
	c->uid = cred.uid;
	c->authorized = cred.uid == 0 || (srv->have_group && peer_in_group(cfd, srv->group, cred.gid));
	conn_add(srv, c, EPOLLIN);
	return 0;
}

/*
 * A TCP client is known by its address until its certificate names it; with
 * tcp_insecure nothing names it and it may select anything.
 */
static int on_accept_tcp(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct rt_server *srv = userdata;
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);
	char host[NI_MAXHOST] = "?", port[NI_MAXSERV] = "?";
	struct rt_conn *c;
	unsigned int waiting = 0;
	int cfd, one = 1;

	cfd = accept4(fd, (struct sockaddr *)&sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd < 0)
		return 0;
	/*
	 * Peers not yet past their Hello have a cap of their own, so that a
	 * stream of handshakes from anywhere cannot take the places of the
	 * local subscribers.
	 */
	for (struct rt_conn *o = srv->conns; o; o = o->next)
		waiting += o->tcp && o->state == CONN_HELLO;
	if (waiting >= PENDING_CLIENTS) {
		if (!srv->warned_tcp_flood)
			rt_log(LOG_WARNING, "closing TCP connections unanswered: %u are still in their "
			       "handshake or before their Hello", waiting);
		srv->warned_tcp_flood = true;
		close(cfd);
		return 0;
	}
	srv->warned_tcp_flood = false;
	if (!room_for_one_more(srv) || !(c = conn_new(srv, cfd))) {
		close(cfd);
		return 0;
	}
	/* Records go out as they come; the queue already batches under load. */
	setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	getnameinfo((struct sockaddr *)&sa, len, host, sizeof(host), port, sizeof(port),
		    NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(c->peer, sizeof(c->peer), "%s:%s", host, port);
	snprintf(c->name, sizeof(c->name), "%s", c->peer);
	c->tcp = true;
	c->pid = 0;
	c->uid = (uid_t)-1;
	if (srv->tls) {
		if (rt_tls_conn_new(srv->tls, cfd, &c->tls)) {
			rt_subscriber_release(&c->sub);
			free(c);
			close(cfd);
			return 0;
		}
		c->handshaking = true;
	} else {
		c->authorized = true;
	}
	conn_add(srv, c, EPOLLIN);
	return 0;
}

static int listen_socket(struct rt_server *srv, const struct rt_server_opts *o)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_free_ char *dir = NULL;
	char *slash;
	int n = sd_listen_fds(1), fd;

	if (n > 1) {
		rt_log(LOG_ERR, "systemd passed %d sockets; one is expected", n);
		return -EINVAL;
	}
	if (n == 1) {
		fd = SD_LISTEN_FDS_START;
		if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) <= 0) {
			rt_log(LOG_ERR, "the socket systemd passed is not a listening Unix stream socket");
			return -EINVAL;
		}
		srv->listen_fd = fd;
		rt_log(LOG_INFO, "listening on the socket systemd passed");
		return 0;
	}
	if (strlen(o->socket_path) >= sizeof(sa.sun_path)) {
		rt_log(LOG_ERR, "socket path too long: %s", o->socket_path);
		return -ENAMETOOLONG;
	}
	dir = strdup(o->socket_path);
	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST) {
			rt_log(LOG_ERR, "creating %s: %m", dir);
			return -errno;
		}
	}
	strcpy(sa.sun_path, o->socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	unlink(o->socket_path);	/* a socket left by an earlier run */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    chmod(o->socket_path, 0660) ||
	    (srv->have_group && chown(o->socket_path, (uid_t)-1, srv->group)) || listen(fd, 128)) {
		int err = errno;

		rt_log(LOG_ERR, "listening on %s: %s", o->socket_path, strerror(err));
		close(fd);
		return -err;
	}
	srv->listen_fd = fd;
	srv->own_socket = true;
	srv->path = strdup(o->socket_path);
	rt_log(LOG_INFO, "listening on %s", o->socket_path);
	return 0;
}

/* "host:port", "[v6]:port" or ":port" (every address). */
static int listen_tcp(struct rt_server *srv, const char *address)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	_cleanup_free_ char *host = strdup(address);
	struct addrinfo *ai = NULL;
	char *port, *h;
	int fd = -1, one = 1, ret;

	if (!host)
		return -ENOMEM;
	port = strrchr(host, ':');
	if (!port) {
		rt_log(LOG_ERR, "listen_tcp '%s': want host:port", address);
		return -EINVAL;
	}
	*port++ = '\0';
	h = host;
	if (*h == '[' && h[strlen(h) - 1] == ']') {
		h[strlen(h) - 1] = '\0';
		h++;
	}
	ret = getaddrinfo(*h ? h : NULL, port, &hints, &ai);
	if (ret) {
		rt_log(LOG_ERR, "listen_tcp '%s': %s", address, gai_strerror(ret));
		return -EINVAL;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 128)) {
		ret = -errno;
		rt_log(LOG_ERR, "listening on TCP %s: %s%s", address, strerror(-ret),
		       ret == -EAFNOSUPPORT ? " (the unit allows no network: install its fleet "
					      "drop-in, see FLEET.md)" : "");
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return ret;
	}
	freeaddrinfo(ai);
	srv->tcp_fd = fd;
	return 0;
}

static int load_clients(const char *path, struct rt_acl **out)
{
	_cleanup_free_ char *text = NULL;
	const char *why;
	unsigned int line;
	size_t len;
	int ret = rt_read_file(path, 1 << 20, &text, &len);

	if (ret) {
		rt_log(LOG_ERR, "reading %s: %s", path, strerror(-ret));
		return ret;
	}
	ret = rt_acl_parse(out, text, len, &line, &why);
	if (ret)
		rt_log(LOG_ERR, "%s:%u: %s", path, line, why);
	return ret;
}

static bool same_globs(const char *const *a, const char *const *b)
{
	for (; a && b && *a && *b; a++, b++)
		if (strcmp(*a, *b))
			return false;
	return a && b && !*a && !*b;
}

int rt_server_reload_clients(struct rt_server *srv)
{
	struct rt_acl *acl = NULL;
	unsigned int cut = 0;
	int ret;

	if (!srv->clients_path)
		return 0;
	ret = load_clients(srv->clients_path, &acl);
	if (ret) {
		rt_log(LOG_ERR, "reload: %s kept as it was", srv->clients_path);
		return ret;
	}
	/*
	 * A name no longer listed, or listed with other globs, loses its
	 * connections: what it selected was decided under the old entry.
	 */
	for (struct rt_conn *c = srv->conns, *next; c; c = next) {
		const char *const *now;

		next = c->next;
		if (!c->common_name)
			continue;
		now = rt_acl_lookup(acl, c->common_name);
		if (c->allowed && same_globs(now, c->allowed)) {
			c->allowed = now;
			continue;
		}
		cut++;
		if (c->state == CONN_STREAMING) {
			send_error(c, EACCES, "this certificate's entry in the clients file was "
				   "removed or changed");
			conn_want_write(c, true);
		} else {
			conn_close(c, "its clients file entry was removed or changed");
		}
	}
	rt_acl_free(srv->acl);
	srv->acl = acl;
	rt_log(LOG_INFO, "reload: %s read again; %u connection(s) of changed names ended",
	       srv->clients_path, cut);
	return 0;
}

/* The TCP listener, when configured: TLS with client certificates, or plain when insecure. */
static int setup_tcp(struct rt_server *srv, const struct rt_server_opts *o)
{
	char why[320];
	int ret;

	if (!o->tcp_listen)
		return 0;
	if (o->tcp_insecure) {
		rt_log(LOG_WARNING, "TCP %s is plain and unauthenticated (tcp_insecure): anyone who "
		       "reaches it may subscribe to any event", o->tcp_listen);
	} else {
		if (!o->tls_cert || !o->tls_key || !o->tls_ca || !o->tls_clients) {
			rt_log(LOG_ERR, "listen_tcp needs tls_cert, tls_key, tls_ca and tls_clients "
			       "(or tcp_insecure)");
			return -EINVAL;
		}
		ret = rt_tls_new(&srv->tls, o->tls_cert, o->tls_key, o->tls_ca, why, sizeof(why));
		if (ret) {
			rt_log(LOG_ERR, "TLS: %s", why);
			return ret;
		}
		srv->clients_path = strdup(o->tls_clients);
		if (!srv->clients_path)
			return -ENOMEM;
		ret = load_clients(srv->clients_path, &srv->acl);
		if (ret)
			return ret;
	}
	ret = listen_tcp(srv, o->tcp_listen);
	if (ret)
		return ret;
	rt_log(LOG_INFO, "listening on TCP %s (%s)", o->tcp_listen,
	       srv->tls ? "TLS 1.3, client certificates" : "plain");
	return sd_event_add_io(srv->loop, &srv->tcp_src, srv->tcp_fd, EPOLLIN, on_accept_tcp, srv);
}

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

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
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
		/* A TCP peer gets 10 to 15 s from connecting to its Hello. */
		if (c->tcp && c->state == CONN_HELLO && ++c->hello_beats > 2) {
			conn_close(c, "no Hello within 10 s");
			continue;
		}
		/*
		 * Every period, busy or not: each Heartbeat is a (trace clock,
		 * realtime) pair, which collectors use to align hosts. A backlog
		 * gets none: its pair would be late by the time it is read.
		 */
		if (c->state == CONN_STREAMING && !c->sub.head)
			push_heartbeat(c);
	}
	return sd_event_source_set_time_relative(s, HEARTBEAT_USEC) ?:
	       sd_event_source_set_enabled(s, SD_EVENT_ON);
}

int rt_server_new(struct rt_server **out, sd_event *loop, const struct rt_server_opts *o,
		  struct rt_session *session, struct rt_layout *layout)
{
	struct rt_server *srv = calloc(1, sizeof(*srv));
	int ret;

	if (!srv)
		return -ENOMEM;
	srv->loop = loop;
	srv->listen_fd = -1;
	srv->tcp_fd = -1;
	srv->session = session;
	srv->layout = layout;
	srv->max_queue = o->max_queue;
	srv->max_clients = o->max_clients;
	srv->max_events = o->max_events;
	if (o->group) {
		struct group *g = getgrnam(o->group);

		if (!g) {
			rt_log(LOG_WARNING, "group %s does not exist: only root may subscribe",
			       o->group);
		} else {
			srv->group = g->gr_gid;
			srv->have_group = true;
		}
	}
	rt_host_id_read(&srv->id, session);
	ret = listen_socket(srv, o);
	if (!ret)
		ret = sd_event_add_io(loop, &srv->listen_src, srv->listen_fd, EPOLLIN, on_accept, srv);
	if (ret >= 0)
		ret = setup_tcp(srv, o);
	srv->trace_clockid = trace_clockid(session->clock);
	if (ret >= 0)
		ret = sd_event_add_time_relative(loop, &srv->heartbeat, CLOCK_MONOTONIC,
						 HEARTBEAT_USEC, 100000, on_heartbeat, srv);
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
	while (srv->conns)
		conn_close(srv->conns, "daemon stopping");
	sd_event_source_disable_unref(srv->listen_src);
	sd_event_source_disable_unref(srv->tcp_src);
	if (srv->tcp_fd >= 0)
		close(srv->tcp_fd);
	rt_tls_free(srv->tls);
	rt_acl_free(srv->acl);
	free(srv->clients_path);
	sd_event_source_disable_unref(srv->heartbeat);
	if (srv->listen_fd >= 0 && srv->own_socket) {
		close(srv->listen_fd);
		if (srv->path)
			unlink(srv->path);
	}
	free(srv->path);
	rt_buf_free(&srv->packed);
	rt_buf_free(&srv->packed_common);
	rt_buf_free(&srv->packed_fixed);
	rt_buf_free(&srv->packed_projected);
	free(srv);
}

/* The Schema this connection's encoding describes the event with. */
static int push_schema(struct rt_conn *c, const struct tep_event *ev)
{
	const struct rt_layout *l = c->srv->layout;
	struct rt_buf b = { 0 };
	unsigned int offsets[128], fixed;
	_cleanup_free_ char *legacy_format = NULL;
	int ret;

	switch (c->encoding) {
	case RINGTAP__ENCODING__FIXED:
		ret = rt_legacy_offsets(c->legacy, ev, offsets, 128, &fixed);
		ret = ret ?: rt_legacy_format(c->legacy, ev, &legacy_format);
		ret = ret ?: rt_encode_schema_frame(ev, offsets, legacy_format, NULL, &b);
		break;
	case RINGTAP__ENCODING__RAW:
		ret = rt_encode_schema_frame(ev, NULL, rt_layout_format(l, ev->id), NULL, &b);
		break;
	default:
		ret = rt_encode_schema_frame(ev, NULL, NULL, (const char *const *)c->only, &b);
		break;
	}
	ret = ret ?: rt_subscriber_push_schema(&c->sub, (unsigned int)ev->id, b.data, b.len);
	rt_buf_free(&b);
	return ret;
}

/* Packs the record as this connection's encoding sends it, once per record. */
static struct rt_buf *packed_for(struct rt_server *srv, struct rt_conn *c,
				 const struct rt_record *rec, unsigned int *done)
{
	unsigned int kind = c->encoding == RINGTAP__ENCODING__FIXED ? 2 : c->common ? 1 : 0;
	struct rt_buf *b = kind == 2 ? &srv->packed_fixed : kind ? &srv->packed_common : &srv->packed;
	int ret;

	/* A projection is this connection's own: packed for it alone. */
	if (c->only) {
		srv->packed_projected.len = 0;
		if (rt_encode_record(rec, srv->layout, c->common, (const char *const *)c->only,
				     &srv->packed_projected))
			return NULL;
		return &srv->packed_projected;
	}
	if (*done & (1u << kind))
		return b;
	b->len = 0;
	if (kind == 2) {
		/* A record fits a sub-buffer; its legacy form adds at most a header and alignment. */
		size_t size = srv->layout->sub_buffer_size + c->legacy->header_size + RT_LEGACY_SLACK;
		uint8_t *out = malloc(size);
		int n = out ? rt_legacy_rewrite(c->legacy, rec, srv->layout, out, size) : -ENOMEM;

		ret = n < 0 ? n : rt_encode_fixed_record(rec->timestamp, out, (size_t)n, b);
		free(out);
	} else {
		ret = rt_encode_record(rec, srv->layout, kind == 1, NULL, b);
	}
	if (ret)
		return NULL;
	*done |= 1u << kind;
	return b;
}

void rt_server_record(struct rt_server *srv, const struct rt_record *rec)
{
	const struct rt_field_desc *pidf = srv->layout->common_pid;
	uint64_t pid = 0;
	unsigned int done = 0;

	if (!rec->event)
		return;
	if (pidf)
		rt_record_read_common(rec, srv->layout, pidf, &pid);
	for (struct rt_conn *c = srv->conns; c; c = c->next) {
		struct rt_buf *b;

		if (c->state != CONN_STREAMING || c->encoding == RINGTAP__ENCODING__RAW ||
		    !rt_subscriber_wants(&c->sub, rec->cpu, rec->type, (int32_t)pid))
			continue;
		if (c->filter) {
			struct tep_record r = {
				.ts = rec->timestamp,
				.size = (int)rec->size,
				.cpu = (int)rec->cpu,
				.data = (void *)rec->data,
			};

			if (tep_filter_match(c->filter, &r) != TEP_ERRNO__FILTER_MATCH)
				continue;
		}
		if (!rt_subscriber_has_schema(&c->sub, rec->type) && push_schema(c, rec->event)) {
			rt_subscriber_drop(&c->sub, rec->cpu, 1, rec->timestamp);
			continue;
		}
		b = packed_for(srv, c, rec, &done);
		if (!b || rt_subscriber_add(&c->sub, rec, b->data, b->len))
			/* Counted and reported to it like any other drop. */
			rt_subscriber_drop(&c->sub, rec->cpu, 1, rec->timestamp);
	}
}

void rt_server_page(struct rt_server *srv, unsigned int cpu, const uint8_t *page, size_t len,
		    unsigned int records, uint64_t first_ts)
{
	struct rt_frame_parts frame = { 0 };

	for (struct rt_conn *c = srv->conns; c; c = c->next) {
		if (c->state != CONN_STREAMING || c->encoding != RINGTAP__ENCODING__RAW ||
		    (c->sub.cpus && (cpu >= c->sub.ncpus || !c->sub.cpus[cpu])))
			continue;
		/*
		 * The page holds every enabled event: its client needs every
		 * format, once, including those enabled since its last page.
		 */
		for (; c->raw_schemas < srv->session->n_events; c->raw_schemas++) {
			struct tep_event *ev = enabled_event(srv, c->raw_schemas);

			if (ev && !rt_subscriber_has_schema(&c->sub, (unsigned int)ev->id))
				push_schema(c, ev);
		}
		if (!frame.len && rt_encode_pages_parts(cpu, page, len, records, &frame))
			break;
		rt_subscriber_push_data(&c->sub, cpu, &frame, records, first_ts, first_ts);
		if (c->sub.head)
			conn_want_write(c, true);
	}
}

void rt_server_kernel_loss(struct rt_server *srv, unsigned int cpu, uint64_t count, bool exact,
			   uint64_t before_ts)
{
	for (struct rt_conn *c = srv->conns; c; c = c->next)
		if (c->state == CONN_STREAMING)
			rt_subscriber_kernel_loss(&c->sub, cpu, count, exact, before_ts);
}

void rt_server_end_page(struct rt_server *srv)
{
	for (struct rt_conn *c = srv->conns; c; c = c->next) {
		if (c->state != CONN_STREAMING)
			continue;
		rt_subscriber_end_page(&c->sub);
		if (c->sub.head)
			conn_want_write(c, true);
	}
}

void rt_server_abandon(struct rt_server *srv)
{
	for (struct rt_conn *c = srv->conns; c; c = c->next) {
		if (!c->sub.head)
			continue;
		rt_subscriber_abandon(&c->sub);
		c->said_bye = false;	/* a queued Bye went with the rest */
		rt_log(LOG_WARNING, "client %s (pid %d): too slow to take its queue before the stop; "
		       "%llu records dropped in all, reported in its stream", c->name, (int)c->pid,
		       (unsigned long long)c->sub.dropped);
		conn_want_write(c, true);
	}
}

void rt_server_say_bye(struct rt_server *srv)
{
	for (struct rt_conn *c = srv->conns; c; c = c->next) {
		struct rt_buf b = { 0 };

		if (c->state != CONN_STREAMING || c->said_bye)
			continue;
		if (rt_encode_bye_frame(&b) || conn_push(c, &b))
			rt_buf_free(&b);
		else
			c->said_bye = true;
	}
}

bool rt_server_drained(struct rt_server *srv)
{
	for (struct rt_conn *c = srv->conns; c; c = c->next)
		if (c->sub.head)
			return false;
	return true;
}


bool rt_server_wants_records(const struct rt_server *srv)
{
	for (const struct rt_conn *c = srv->conns; c; c = c->next)
		if (c->state == CONN_STREAMING && c->encoding != RINGTAP__ENCODING__RAW)
			return true;
	return false;
}

unsigned int rt_server_subscribers(const struct rt_server *srv)
{
	unsigned int n = 0;

	for (struct rt_conn *c = srv->conns; c; c = c->next)
		n += c->state == CONN_STREAMING;
	return n;
}

void rt_server_set_limits(struct rt_server *srv, size_t max_queue, unsigned int max_clients,
			  unsigned int max_events)
{
	srv->max_queue = max_queue;
	srv->max_clients = max_clients;
	srv->max_events = max_events;
}

uint64_t rt_server_dropped(const struct rt_server *srv)
{
	uint64_t n = srv->dropped_gone;

	for (const struct rt_conn *c = srv->conns; c; c = c->next)
		n += c->sub.dropped;
	return n;
}

void rt_server_cpu_state(struct rt_server *srv, unsigned int cpu, bool online)
{
	for (struct rt_conn *c = srv->conns; c; c = c->next) {
		struct rt_buf b = { 0 };

		if (c->state != CONN_STREAMING || (c->sub.cpus && (cpu >= c->sub.ncpus ||
								   !c->sub.cpus[cpu])))
			continue;
		if (rt_encode_cpu_state_frame(cpu, online, &b) || conn_push(c, &b)) {
			rt_buf_free(&b);
			c->dead = "out of memory";
		}
	}
}
