// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One connection, from its first byte to its close: TLS handshake (TCP with
 * TLS), Hello, then Welcome or Refusal, the stream (Update, Bye), and its
 * queue written as the socket takes it.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event-parse.h>

#include "acl.h"
#include "conn.h"
#include "handshake.h"
#include "layout.h"
#include "legacy.h"
#include "log.h"
#include "filter.h"
#include "page_ring.h"
#include "replay.h"
#include "ring_conn.h"
#include "select.h"
#include "selection.h"
#include "tls.h"
#include "tracefs.h"
#include "util.h"

/* Globs in one Subscription, a Hello's or an Update's. */
#define MAX_GLOBS 256

static const Ringtap__Encoding offered[] = {
	RINGTAP__ENCODING__DECODED,
	RINGTAP__ENCODING__RAW,
	RINGTAP__ENCODING__FIXED,
};

static void free_selection(struct rt_conn *c)
{
	fanout_release_encoding(&c->srv->fan, &c->out);
	rt_strv_free(c->out.only);
	c->out.only = NULL;
	rt_filter_free(c->out.filter);
	c->out.filter = NULL;
	free(c->filter_text);
	c->filter_text = NULL;
}

struct rt_conn *conn_new(struct rt_server *srv, int fd)
{
	struct rt_conn *c = calloc(1, sizeof(*c));

	if (!c || rt_subscriber_init(&c->out.sub, (unsigned int)rt_session_ncpus(srv->session),
				     srv->limits.max_queue)) {
		free(c);
		return NULL;
	}
	c->srv = srv;
	c->id = ++srv->next_id;
	c->fd = fd;
	c->pass_fd = -1;
	snprintf(c->name, sizeof(c->name), "unnamed");
	rt_wire_reader_init(&c->reader, CLIENT_MAX_FRAME);
	return c;
}

static int on_conn_io(sd_event_source *s, int fd, uint32_t revents, void *userdata);

int conn_add(struct rt_server *srv, struct rt_conn *c, uint32_t events)
{
	int ret = sd_event_add_io(srv->loop, &c->io, c->fd, events, on_conn_io, c);

	if (ret < 0) {
		rt_tls_conn_free(c->tls);
		rt_subscriber_release(&c->out.sub);
		rt_wire_reader_release(&c->reader);
		close(c->fd);
		free(c);
		return ret;
	}
	c->out.copy_pages = c->tls != NULL;
	c->next = srv->conns;
	srv->conns = c;
	srv->n_conns++;
	return 0;
}

/*
 * After a subscription came, changed or went: the kernel is asked for what
 * the connections now select (selection.c decides, selection-edge.c writes).
 * Without memory for the list, selection_apply() gets NULL and asks the
 * kernel to filter nothing.
 */
void conn_reselect(struct rt_server *srv)
{
	bool hold = srv->hold_until && rt_monotonic_ns() < srv->hold_until;

	_cleanup_free_ struct selection_sub *subs = calloc(srv->n_conns ?: 1, sizeof(*subs));
	size_t n = 0;

	for (const struct rt_conn *c = srv->conns; subs && c; c = c->next)
		subs[n++] = (struct selection_sub){
			.sub = &c->out.sub,
			.filter = c->filter_text,
			/* A ring reader's selection applies in its library, after the kernel's. */
			.raw = c->out.encoding == RINGTAP__ENCODING__RAW && !c->ring,
			.streaming = c->state == CONN_STREAMING,
		};
	selection_apply(srv->session, srv->layout, subs, subs ? n : srv->n_conns,
			srv->user_space_selection, srv->stopping || hold);
	if (!srv->stopping && srv->latency_changed)
		srv->latency_changed(srv->userdata);
}

unsigned int conn_count(const struct rt_server *srv, enum conn_state state)
{
	unsigned int n = 0;

	for (const struct rt_conn *c = srv->conns; c; c = c->next)
		n += c->state == state;
	return n;
}

void conn_free(struct rt_conn *c)
{
	struct rt_server *srv = c->srv;

	for (struct rt_conn **p = &srv->conns; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	srv->n_conns--;
	srv->dropped_gone += c->out.sub.dropped + c->out.sub.queued_records;
	sd_event_source_disable_unref(c->io);
	sd_event_source_disable_unref(c->more);
	rt_tls_conn_free(c->tls);
	free(c->common_name);
	close(c->fd);
	rt_wire_reader_release(&c->reader);
	rt_subscriber_release(&c->out.sub);
	free_selection(c);
	replay_free(c);
	ring_reader_free(c->ring);
	c->ring = NULL;
	rt_buf_free(&c->kept_sub);
	free(c);
	conn_reselect(srv);
	/*
	 * The last connection gone: give back what the busiest moment took
	 * (full queues of slow readers), or an idle daemon keeps its peak for good.
	 */
	if (!srv->conns)
		malloc_trim(0);
}

void conn_close(struct rt_conn *c, const char *why)
{
	char unsent[96] = "";

	/* A scrape every few seconds would fill the journal. */
	if (c->status) {
		conn_free(c);
		return;
	}
	/* Queued, never written: the client is gone before it could be told. */
	if (c->out.sub.queued_records)
		snprintf(unsent, sizeof(unsent), ", %llu queued and never sent",
			 (unsigned long long)c->out.sub.queued_records);
	rt_log(LOG_INFO, "client %s (pid %d): %s; %llu records delivered, %llu dropped, %llu lost "
	       "in the kernel%s", c->name, (int)c->pid, why, (unsigned long long)c->out.sub.delivered,
	       (unsigned long long)c->out.sub.dropped, (unsigned long long)c->out.sub.kernel_lost, unsent);
	conn_free(c);
}

int conn_push(struct rt_conn *c, struct rt_buf *b)
{
	int ret = rt_subscriber_push(&c->out.sub, b->data, b->len);

	rt_buf_free(b);
	if (!ret)
		conn_want_write(c, true);
	return ret;
}

bool conn_write(struct rt_conn *c)
{
	int ret = conn_flush(c);

	/* Drained, or the link failed: a closing connection is done either way. */
	if (ret < 0 || (ret == 0 && c->state == CONN_CLOSING)) {
		conn_close(c, ret < 0 ? "vanished mid-write" : "closed");
		return false;
	}
	return true;
}

void conn_out_of_memory(struct rt_conn *c, const char *what)
{
	if (c->said_nomem)
		return;
	c->said_nomem = true;
	rt_log(LOG_ERR, "client %s: out of memory %s; what it lost is counted and reported to it",
	       c->name, what);
}

unsigned int conn_count_of(const struct rt_server *srv, const char *owner, enum conn_state state)
{
	unsigned int n = 0;

	for (const struct rt_conn *c = srv->conns; c; c = c->next)
		n += c->state == state && !strcmp(c->owner, owner);
	return n;
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

	c->srv->refused++;
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

void conn_send_error(struct rt_conn *c, int err, const char *text)
{
	struct rt_buf b = { 0 };
	char logged[256];

	snprintf(logged, sizeof(logged), "%s", text);
	printable(logged);
	rt_log(LOG_NOTICE, "client %s (pid %d): %s", c->name, (int)c->pid, logged);
	if (rt_encode_error_frame(err, text, &b)) {
		rt_buf_free(&b);
		c->dead = "protocol error";
		return;
	}
	conn_finish(c, &b);
}

/*
 * Serves a subscription: the events its globs name, switched on
 * (selection_subscribe), then its filter, projection, CPUs and pids.
 * -ENOENT, -EACCES or another -errno with why.
 */
static int subscribe(struct rt_conn *c, const Ringtap__Subscription *sub, struct rt_why *why)
{
	struct rt_server *srv = c->srv;
	_cleanup_free_ struct tep_event **events = NULL;
	size_t n = 0;
	int ret;

	ret = selection_subscribe(srv->session, srv->layout, (const char *const *)sub->events,
				  sub->n_events, c->allowed, srv->limits.max_events, &events, &n, why);
	/* RAW pages of a captured tree hold every event it recorded: each one's Schema goes too. */
	if (!ret && c->out.encoding == RINGTAP__ENCODING__RAW)
		ret = rt_session_enable_recorded(srv->session, srv->layout, why);
	for (size_t i = 0; !ret && i < n; i++)
		ret = rt_subscriber_select_event(&c->out.sub, (unsigned int)events[i]->id);
	if (!ret)
		ret = rt_select_filter(sub->filter, events, n, &c->out.filter, why);
	if (!ret && c->out.filter && !(c->filter_text = strdup(sub->filter)))
		ret = -ENOMEM;
	if (!ret && (c->out.encoding == RINGTAP__ENCODING__DECODED || c->ring))
		ret = rt_select_fields(sub->fields, sub->n_fields, events, n, &c->out.only, why);
	if (!ret && rt_subscriber_select_cpus(&c->out.sub, sub->cpus, sub->n_cpus)) {
		int ncpus = rt_session_ncpus(srv->session);
		size_t i = 0;

		while (i + 1 < sub->n_cpus && sub->cpus[i] < (uint32_t)ncpus)
			i++;
		ret = rt_why_set(why, -EINVAL, "CPU %" PRIu32 ": this machine has cpu0 to cpu%d only",
				 sub->cpus[i], ncpus - 1);
	}
	if (!ret)
		ret = rt_subscriber_select_pids(&c->out.sub, sub->pids, sub->n_pids);
	c->out.common = sub->has_common_fields && sub->common_fields;
	if (!ret)
		ret = fanout_choose_encoding(&srv->fan, &c->out);
	return ret < 0 ? ret : 0;
}

/* For trace.dat writers: the host's texts as they are now (host.c reads them). */
static int push_host_texts(struct rt_conn *c)
{
	struct rt_host_texts t;
	struct rt_buf b = { 0 };
	int ret;

	rt_host_texts_read(&t, c->srv->session, c->name);
	ret = rt_encode_host_texts_frame(&t, &b);
	if (!ret)
		ret = conn_push(c, &b);
	rt_buf_free(&b);
	rt_host_texts_free(&t);
	return ret;
}

static uint64_t server_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A (trace clock, realtime) pair, taken now. */
int conn_push_heartbeat(struct rt_conn *c)
{
	struct rt_buf b = { 0 };
	int ret = rt_encode_heartbeat_frame(server_clock_ns(c->srv->trace_clockid),
					    server_clock_ns(CLOCK_REALTIME), &b);

	if (!ret)
		ret = conn_push(c, &b);
	rt_buf_free(&b);
	return ret;
}

#define UNKNOWN_LAYOUT "unknown fixed layout (known: padded-2012)"

/* The legacy layout a FIXED subscription names (padded-2012 when none); NULL: unknown. */
static const struct rt_legacy_layout *fixed_layout_of(const Ringtap__Subscription *sub)
{
	return rt_legacy_find(sub && sub->fixed_layout ? sub->fixed_layout : "padded-2012");
}

/* The encoding and, with FIXED, the legacy layout; false when refused. */
static bool take_encoding(struct rt_conn *c, const Ringtap__Hello *hello, Ringtap__Encoding enc)
{
	const Ringtap__Subscription *sub = hello->subscription;

	c->out.encoding = enc;
	/*
	 * Pages go out whole, with every event anyone enabled in them, and
	 * HostTexts hold kallsyms: RAW is for certificates allowed everything.
	 */
	if (enc == RINGTAP__ENCODING__RAW && c->allowed && !rt_acl_allows_glob(c->allowed, "*:*")) {
		refuse(c, RINGTAP__REFUSAL_REASON__NOT_AUTHORIZED,
		       "RAW pages carry every enabled event: this certificate may select only some");
		return false;
	}
	if (enc != RINGTAP__ENCODING__FIXED)
		return true;
	c->out.legacy = fixed_layout_of(sub);
	if (!c->out.legacy) {
		refuse(c, RINGTAP__REFUSAL_REASON__BAD_SUBSCRIPTION, UNKNOWN_LAYOUT);
		return false;
	}
	c->out.sub.data_kind = RINGTAP__FRAME__MSG_FIXED;
	return true;
}

static Ringtap__RefusalReason refusal_for(int err)
{
	switch (err) {
	case -ENOENT:
		return RINGTAP__REFUSAL_REASON__UNKNOWN_EVENT;
	case -EACCES:
		return RINGTAP__REFUSAL_REASON__NOT_AUTHORIZED;
	default:
		return RINGTAP__REFUSAL_REASON__BAD_SUBSCRIPTION;
	}
}

/* What a subscription that cannot be served is told, for a Refusal or an Update's Error. */
static void subscription_refusal_text(int err, const struct rt_why *why, char *msg, size_t size)
{
	if (err == -ENOENT)
		snprintf(msg, size, "no event matches '%s'", why->text);
	else if (err == -EACCES)
		snprintf(msg, size, "this certificate may not subscribe to '%s'", why->text);
	else if (why->text[0])
		snprintf(msg, size, "%s", why->text);
	else
		snprintf(msg, size, "the subscription cannot be served: %s", strerror(-err));
}

static void refuse_subscription(struct rt_conn *c, int err, const struct rt_why *why)
{
	char msg[320];

	subscription_refusal_text(err, why, msg, sizeof(msg));
	refuse(c, refusal_for(err), msg);
}

/*
 * Options that mean nothing for the encoding are refused, not ignored: a
 * client that sets them expects something it would not get.
 */
static int options_apply(struct rt_conn *c, const Ringtap__Subscription *sub, struct rt_why *why)
{
	Ringtap__Encoding enc = c->out.encoding;
	/* A ring reader decodes pages itself: what DECODED may ask, it may ask (its library applies it). */
	bool decoded = enc == RINGTAP__ENCODING__DECODED || c->ring;
	bool whole_pages = enc == RINGTAP__ENCODING__RAW && !c->ring;

	/* Unknown, refused as in a Hello; known, it changes nothing: the Hello's layout stays. */
	if (enc == RINGTAP__ENCODING__FIXED && !fixed_layout_of(sub))
		return rt_why_set(why, -EINVAL, UNKNOWN_LAYOUT);
	if (sub->n_fields && !decoded)
		return rt_why_set(why, -EINVAL, "fields (a projection) apply to DECODED only");
	if (sub->has_common_fields && sub->common_fields && !decoded)
		return rt_why_set(why, -EINVAL, "common_fields apply to DECODED only");
	if (sub->has_host_texts && sub->host_texts && enc != RINGTAP__ENCODING__RAW)
		return rt_why_set(why, -EINVAL, "host_texts apply to RAW only");
	/* RAW pages go out whole: nothing in them can be left out for a pid or a filter. */
	if (sub->n_pids && whole_pages)
		return rt_why_set(why, -EINVAL, "pids apply to DECODED and FIXED only");
	if (sub->filter && *sub->filter && whole_pages)
		return rt_why_set(why, -EINVAL, "filter applies to DECODED and FIXED only");
	if (sub->fixed_layout && enc != RINGTAP__ENCODING__FIXED)
		return rt_why_set(why, -EINVAL, "fixed_layout applies to FIXED only");
	return rt_select_latency(sub->has_max_latency_ms, sub->max_latency_ms, &c->latency_ms, why);
}

/* A Hello that asks for the counters: one Status frame (the daemon's), then the close. */
static void answer_status(struct rt_conn *c, const Ringtap__Hello *hello)
{
	struct rt_server *srv = c->srv;
	struct rt_buf b = { 0 };

	if (hello->subscription) {
		refuse(c, RINGTAP__REFUSAL_REASON__BAD_SUBSCRIPTION,
		       "a status request takes no subscription");
		return;
	}
	if (!srv->status || srv->status(srv->userdata, &b)) {
		rt_buf_free(&b);
		c->dead = "out of memory for its status";
		return;
	}
	c->status = true;
	conn_finish(c, &b);
}

/* The name the client gives, as logged: printable, with the peer's address over TCP. */
static void take_name(struct rt_conn *c, const char *client_name)
{
	snprintf(c->name, sizeof(c->name), "%.40s", client_name);
	printable(c->name);
	if (c->tcp) {
		size_t len = strlen(c->name);

		snprintf(c->name + len, sizeof(c->name) - len, " via %s", c->peer);
	}
}

/*
 * Hello.resumable and Hello.resume: its records numbered, and where it
 * resumes checked against its token; false when refused.
 */
/* What of the server a resume works with. */
static struct replay_env replay_env_of(struct rt_server *srv)
{
	return (struct replay_env){
		.session = srv->session, .layout = srv->layout, .host = &srv->id.host,
		.fan = &srv->fan, .ring = srv->ring, .secret = &srv->secret,
		.decoder = &srv->replay_decoder,
	};
}

static bool take_resume(struct rt_conn *c, const Ringtap__Hello *hello)
{
	struct replay_env env = replay_env_of(c->srv);
	struct rt_why why = { "" };

	c->out.numbered = (hello->has_resumable && hello->resumable) || hello->resume;
	if (!c->out.numbered)
		return true;
	/* A ring reader resumes by itself from its place in the ring: only its right is checked. */
	if (hello->resume && (c->ring ? replay_check(&env, c, hello->resume, &why) :
			      replay_begin(&env, c, hello->resume, &why))) {
		refuse(c, RINGTAP__REFUSAL_REASON__RESUME_REFUSED, why.text);
		return false;
	}
	return true;
}

/* Whether the limits leave room for one more subscriber; refused with the limit's name if not. */
static bool room_for(struct rt_conn *c)
{
	const struct rt_server *srv = c->srv;
	/* Half by default: one peer's flood leaves the other half to everyone else. */
	unsigned int per_peer = srv->limits.max_clients_per_peer ?:
				(srv->limits.max_clients + 1) / 2;
	char msg[160];

	if (conn_count(srv, CONN_STREAMING) >= srv->limits.max_clients) {
		snprintf(msg, sizeof(msg), "this daemon serves at most %u subscribers (max_clients)",
			 srv->limits.max_clients);
		refuse(c, RINGTAP__REFUSAL_REASON__TOO_MANY_CLIENTS, msg);
		return false;
	}
	if (*c->owner && conn_count_of(srv, c->owner, CONN_STREAMING) >= per_peer) {
		snprintf(msg, sizeof(msg), "%s already has %u subscriptions (max_clients_per_peer)",
			 c->owner, per_peer);
		refuse(c, RINGTAP__REFUSAL_REASON__TOO_MANY_CLIENTS, msg);
		return false;
	}
	return true;
}

static void on_hello(struct rt_conn *c, const Ringtap__Hello *hello)
{
	struct rt_server *srv = c->srv;
	struct rt_offer offer = { RT_PROTOCOL_MIN, RT_PROTOCOL_MAX, offered, ARRAY_SIZE(offered),
				  MAX_GLOBS };
	struct rt_agreement agreed;
	Ringtap__RefusalReason reason;
	struct rt_why why = { "" };
	struct rt_buf b = { 0 };
	int ret;

	if (hello->client_name)
		take_name(c, hello->client_name);
	if (!c->authorized) {
		refuse(c, RINGTAP__REFUSAL_REASON__NOT_AUTHORIZED, c->tcp ?
		       "the certificate's common name is not in this daemon's clients file" :
		       "the peer is neither root nor in the allowed group");
		return;
	}
	/* Who may subscribe may read the counters; nothing else of the Hello matters. */
	if (hello->has_status && hello->status) {
		answer_status(c, hello);
		return;
	}
	if (rt_handshake(hello, &offer, &agreed, &reason, &why)) {
		refuse(c, reason, why.text);
		return;
	}
	if (!take_encoding(c, hello, agreed.encoding))
		return;
	if (agreed.ring) {
		const char *no = ring_conn_refusal(c->tcp, c->allowed, srv->ring);

		if (no) {
			refuse(c, RINGTAP__REFUSAL_REASON__NOT_AUTHORIZED, no);
			return;
		}
		if (!(c->ring = ring_reader_new((unsigned int)rt_session_ncpus(srv->session)))) {
			c->dead = "out of memory";
			return;
		}
		c->ring_moves = hello->has_ring_moves && hello->ring_moves;
	}
	if (!take_resume(c, hello))
		return;
	if (!room_for(c))
		return;
	ret = hello->subscription ? options_apply(c, hello->subscription, &why) : 0;
	if (!ret && hello->subscription)
		ret = subscribe(c, hello->subscription, &why);
	if (ret) {
		refuse_subscription(c, ret, &why);
		return;
	}
	if (c->out.numbered) {
		struct replay_env env = replay_env_of(srv);

		ret = replay_welcome(&env, c, agreed.version, agreed.encoding, &b);
	} else {
		ret = rt_encode_welcome_frame(agreed.version, agreed.encoding, &srv->id.host,
					      srv->layout, &b);
	}
	if (ret || conn_push(c, &b)) {
		rt_buf_free(&b);
		c->dead = "cannot send Welcome";
		return;
	}
	if (c->out.encoding == RINGTAP__ENCODING__RAW && hello->subscription &&
	    hello->subscription->has_host_texts && hello->subscription->host_texts &&
	    push_host_texts(c)) {
		c->dead = "cannot send HostTexts";
		return;
	}
	/* The first clock pair, before any record. */
	if (conn_push_heartbeat(c)) {
		c->dead = "cannot send a Heartbeat";
		return;
	}
	if (c->ring && conn_ring_start(c)) {
		c->dead = "cannot send the Ring";
		return;
	}
	c->state = CONN_STREAMING;
	srv->accepted++;
	conn_keep_subscription(c, hello->subscription, agreed.version);
	conn_reselect(srv);
	rt_log(LOG_INFO, "client %s (pid %d uid %u) subscribed: %zu event pattern(s), version %u%s",
	       c->name, (int)c->pid, (unsigned int)c->uid,
	       hello->subscription ? hello->subscription->n_events : 0, agreed.version,
	       c->ring ? (hello->resume ? ", reading the page ring on from its place there" :
			  ", reading the page ring") : c->replay ? ", resuming" : "");
	/* Its first catch-up now: a daemon with nothing new to read would not call again soon. */
	conn_replay(c);
}

bool conn_spill(struct rt_conn *c, unsigned int cpu)
{
	struct replay_env env = replay_env_of(c->srv);

	if (c->state != CONN_STREAMING || c->ring || c->leaving || replay_spill(&env, c, cpu))
		return false;
	/* Losses before the page go now: the catch-up starts after them. */
	if (rt_subscriber_flush_losses(&c->out.sub))
		conn_out_of_memory(c, "for a loss report");
	return true;
}

int conn_catch_up(struct rt_conn *c, const uint8_t *places, size_t len, struct rt_why *why)
{
	struct replay_env env = replay_env_of(c->srv);

	return replay_adopt_packed(&env, c, places, len, why);
}

bool conn_replay(struct rt_conn *c)
{
	const char *nomem;
	int ret = replay_step(c, &nomem);

	if (nomem)
		conn_out_of_memory(c, nomem);
	if (!ret)
		return true;
	conn_send_error(c, -ret, ret == -EBADMSG ? "the page ring's numbers contradict "
			"themselves: cannot resume from it" :
			"out of memory to resume this subscription");
	return false;
}

static void on_update(struct rt_conn *c, const Ringtap__Subscription *sub)
{
	struct rt_why why = { "" };
	unsigned int latency_ms = c->latency_ms;
	int ret;

	/*
	 * Keep the queue, the losses and which Schemas were sent (a client must
	 * not get one twice); replace the selection.
	 */
	rt_subscriber_clear_selection(&c->out.sub);
	free_selection(c);
	/* In the Hello's order: what rt_handshake() checks, then the options, then the kernel. */
	ret = rt_subscription_check(sub, MAX_GLOBS, &why);
	if (!ret)
		ret = options_apply(c, sub, &why);
	if (!ret)
		ret = subscribe(c, sub, &why);
	/* A stream that ends here does not get to set the drain period on its way out. */
	if (ret < 0)
		c->latency_ms = latency_ms;
	conn_reselect(c->srv);
	if (ret < 0) {
		char msg[400];

		/* The reason a Hello's Refusal would give; the stream ends with it. */
		subscription_refusal_text(ret, &why, msg, sizeof(msg));
		conn_send_error(c, -ret == ENOENT || -ret == EACCES ? -ret : EINVAL, msg);
		return;
	}
	conn_keep_subscription(c, sub, c->version);
	/* Catching up: the CPUs it reads follow the new selection. */
	replay_reselect(c);
	/* A recorder asks again at its end: cmdlines seen meanwhile. */
	if (c->out.encoding == RINGTAP__ENCODING__RAW && sub->has_host_texts && sub->host_texts &&
	    push_host_texts(c))
		c->dead = "cannot send HostTexts";
}

int conn_ring_start(struct rt_conn *c)
{
	struct rt_buf b = { 0 };
	int ret;

	if (!fanout_raw_schemas(&c->srv->fan, &c->out))
		return -ENOMEM;
	ret = ring_reader_ring_frame(c->ring, c->srv->ring, &b);
	if (ret) {
		rt_buf_free(&b);
		return ret;
	}
	/* The descriptor goes with the Ring frame's first byte. */
	c->pass_fd_at = rt_subscriber_queued_bytes(&c->out.sub);
	ret = conn_push(c, &b);
	if (!ret)
		c->pass_fd = c->srv->ring->ro_fd;
	return ret;
}

bool conn_ring_notify(struct rt_conn *c, bool last)
{
	struct rt_buf b = { 0 };

	if (!ring_reader_moved(c->ring, c->srv->ring))
		return true;
	/* What waits unsent goes first; a note behind it would only be merged into the next. */
	if (!last && rt_subscriber_queued_any(&c->out.sub)) {
		if (!conn_write(c))
			return false;
		if (rt_subscriber_queued_any(&c->out.sub))
			return true;
	}
	/* Pages may hold events enabled since: their Schemas come before the note. */
	if (!fanout_raw_schemas(&c->srv->fan, &c->out) ||
	    ring_reader_ready_frame(c->ring, c->srv->ring, &b) || conn_push(c, &b)) {
		rt_buf_free(&b);
		conn_out_of_memory(c, "for a RingReady");
		return true;
	}
	c->out.sub.delivered += ring_reader_told(c->ring, c->srv->ring);
	c->write_due = true;
	return true;
}

/* What is queued goes, then the losses owed, then our Bye, then the close. */
void conn_leave(struct rt_conn *c)
{
	struct rt_buf b = { 0 };

	c->leaving = false;
	replay_abandon(c);
	if (rt_subscriber_flush_losses(&c->out.sub))
		conn_out_of_memory(c, "for its last loss reports");
	if (c->ring && !c->said_bye)
		(void)conn_ring_notify(c, true);
	if (!c->said_bye && !rt_encode_bye_frame(&b) && !conn_push(c, &b))
		c->said_bye = true;
	rt_buf_free(&b);
	c->state = CONN_CLOSING;
	conn_want_write(c, true);
}

static void on_frame(struct rt_conn *c, Ringtap__Frame *f)
{
	switch (c->state) {
	case CONN_HELLO:
		if (f->msg_case != RINGTAP__FRAME__MSG_HELLO) {
			conn_send_error(c, EPROTO, "the first frame must be a Hello");
			return;
		}
		on_hello(c, f->hello);
		return;
	case CONN_STREAMING:
		if (f->msg_case == RINGTAP__FRAME__MSG_BYE) {
			/*
			 * The client ends the stream and reads on to its end. What the
			 * kernel holds was written while it was subscribed: with a long
			 * latency bound that is up to most of it. A pass first, so it
			 * gets those records; then the rest of the leaving.
			 */
			if (c->leaving)
				return;
			c->leaving = true;
			if (!c->srv->pass_wanted || !c->srv->pass_wanted(c->srv->userdata))
				conn_leave(c);
			return;
		}
		if (f->msg_case == RINGTAP__FRAME__MSG_UPDATE && f->update->subscription) {
			on_update(c, f->update->subscription);
			return;
		}
		conn_send_error(c, EPROTO, "unexpected message");
		return;
	case CONN_CLOSING:
		return;
	}
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
	/* From here its slots are its name's, wherever it connects from. */
	snprintf(c->owner, sizeof(c->owner), "certificate %.64s", cn);
	snprintf(c->name, sizeof(c->name), "%s", c->peer);
	if (!c->authorized)
		rt_log(LOG_NOTICE, "client %s: certificate name '%s' is not in the clients file",
		       c->name, cn);
}

static int on_conn_more(sd_event_source *s, void *userdata)
{
	struct rt_conn *c = userdata;

	return on_conn_io(c->io, c->fd, EPOLLIN, c);
}

#define READS_PER_TURN 16

/* The TLS handshake goes on; false when the connection is done for (closed or refused). */
static bool conn_handshake(struct rt_conn *c, int fd)
{
	int ret = rt_tls_handshake(c->tls);

	if (ret == -EAGAIN) {
		(void)sd_event_source_set_io_events(c->io, rt_tls_wants_write(c->tls) ? EPOLLOUT :
										      EPOLLIN);
		return false;
	}
	if (ret) {
		rt_log(LOG_NOTICE, "client %s: %s", c->name, rt_tls_conn_error(c->tls));
		/*
		 * With TLS 1.3 the client has sent its first frame by now; closing
		 * with it unread would reset the connection and lose the alert that
		 * says why. The alert is out: end our side, read until the client
		 * closes (or two heartbeats pass).
		 */
		shutdown(fd, SHUT_WR);
		c->refused_beats = 1;
		(void)sd_event_source_set_io_events(c->io, EPOLLIN);
		return false;
	}
	tls_handshake_done(c);
	conn_want_write(c, false);
	return true;
}

/* Frames from the peer, until it would block (or its turn ends); false when c is gone. */
static bool conn_take_input(struct rt_conn *c)
{
	unsigned int reads = 0;
	uint8_t buf[4096];
	ssize_t n;

	/* Until it would block: TLS may hold decrypted bytes the socket no longer shows. */
	while ((n = conn_read(c, buf, sizeof(buf))) != -EAGAIN) {
		/* After its Bye a peer may end its side and read on: it is owed the rest. */
		if (n == 0 && c->leaving) {
			c->peer_shut = true;
			conn_want_write(c, rt_subscriber_queued_any(&c->out.sub));
			return true;
		}
		if (n <= 0) {
			conn_close(c, n == 0 ? "disconnected" : conn_error(c, n));
			return false;
		}
		for (size_t off = 0; off < (size_t)n && c->state != CONN_CLOSING;) {
			Ringtap__Frame *f = NULL;
			size_t used = 0;
			int ret = rt_wire_reader_feed(&c->reader, buf + off, (size_t)n - off, &used);

			off += used;
			if (ret >= 0)
				ret = rt_wire_reader_next(&c->reader, &f);
			if (ret < 0) {
				conn_send_error(c, -ret, c->reader.why ? c->reader.why : "bad frame");
				break;
			}
			if (ret == 0)
				break;
			on_frame(c, f);
			ringtap__frame__free_unpacked(f, NULL);
		}
		if (c->dead) {
			conn_close(c, c->dead);
			return false;
		}
		/* Level-triggered: a plain socket with more to read comes back. */
		if (c->state == CONN_CLOSING || !c->tls)
			break;
		/*
		 * TLS: what it holds decrypted no longer shows on the socket, so
		 * its turn ends with a deferred call to read on.
		 */
		if (++reads == READS_PER_TURN) {
			if (rt_tls_has_pending(c->tls)) {
				if (!c->more && sd_event_add_defer(c->srv->loop, &c->more, on_conn_more,
								   c) < 0) {
					conn_close(c, "out of memory");
					return false;
				}
				(void)sd_event_source_set_enabled(c->more, SD_EVENT_ONESHOT);
			}
			break;
		}
	}
	if (c->tls && rt_tls_wants_write(c->tls))
		conn_want_write(c, true);
	return true;
}

static int on_conn_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct rt_conn *c = userdata;

	if (c->refused_beats) {
		uint8_t discard[4096];
		ssize_t n = recv(fd, discard, sizeof(discard), MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			conn_free(c);
		return 0;
	}
	if (c->handshaking) {
		if (!conn_handshake(c, fd))
			return 0;
		/* What came with the handshake's last flight is read below. */
		revents |= EPOLLIN;
	}
	/*
	 * Its last frames (an Error, a Refusal, our Bye) are owed to a peer
	 * that may have ended its side already: finding that end must not
	 * close the connection before they are out.
	 */
	if (c->state == CONN_CLOSING) {
		if (revents & EPOLLIN)
			conn_discard_input(c);
		conn_write(c);
		return 0;
	}
	if ((revents & EPOLLIN) && !c->peer_shut && !conn_take_input(c))
		return 0;
	if ((revents & (EPOLLOUT | EPOLLHUP | EPOLLERR)) && !conn_write(c))
		return 0;
	/* Its socket took some: more of its catch-up, whether pages come or not. */
	if ((revents & EPOLLOUT) && c->replay && c->state == CONN_STREAMING)
		conn_replay(c);
	return 0;
}

/*
 * A restart: the subscription in force, packed, so the next ringtapd can
 * serve it again (handover.c). Without memory it is not kept, and the
 * subscriber is not handed over (it reconnects as after a stop).
 */
void conn_keep_subscription(struct rt_conn *c, const Ringtap__Subscription *sub,
			    unsigned int version)
{
	size_t len = sub ? ringtap__subscription__get_packed_size(sub) : 0;

	c->version = version;
	c->kept_sub.len = 0;
	if (rt_buf_reserve(&c->kept_sub, len + 1)) {
		rt_buf_free(&c->kept_sub);
		return;
	}
	c->kept_sub.len = sub ? ringtap__subscription__pack(sub, c->kept_sub.data) : 0;
}

int conn_resume(struct rt_conn *c, Ringtap__Encoding enc, unsigned int version,
		const Ringtap__Subscription *sub, const uint8_t *schema_sent, size_t schema_len,
		struct rt_why *why)
{
	struct rt_subscriber *s = &c->out.sub;
	size_t top = schema_len * 8;
	int ret = 0;

	/* Room for every Schema it had (RAW has them for events it never selected). */
	while (top && !(schema_sent[(top - 1) / 8] & (1u << ((top - 1) % 8))))
		top--;
	if (top && rt_subscriber_select_event(s, (unsigned int)(top - 1)))
		return rt_why_set(why, -ENOMEM, "out of memory");
	rt_subscriber_clear_selection(s);
	c->out.encoding = enc;
	if (enc == RINGTAP__ENCODING__FIXED) {
		c->out.legacy = fixed_layout_of(sub);
		if (!c->out.legacy)
			return rt_why_set(why, -EINVAL, UNKNOWN_LAYOUT);
		s->data_kind = RINGTAP__FRAME__MSG_FIXED;
	}
	if (sub && !(ret = options_apply(c, sub, why)))
		ret = subscribe(c, sub, why);
	if (ret)
		return ret;
	/* Schemas it has had are not sent twice. */
	for (size_t id = 0; id < top && id < s->events_bits; id++)
		if (schema_sent[id / 8] & (1u << (id % 8)))
			s->schema_sent[id / 8] |= (uint8_t)(1u << (id % 8));
	c->state = CONN_STREAMING;
	conn_keep_subscription(c, sub, version);
	conn_reselect(c->srv);
	return 0;
}
