// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event-parse.h>
#include <nats/nats.h>

#include "layout.h"
#include "log.h"
#include "nats.h"
#include "nats-mark.h"
#include "publish.h"
#include "util.h"

/* A server that is away is tried again this often, forever. */
#define RECONNECT_WAIT_MS 2000
/*
 * An acknowledgment not back by then counts the message as failed (and
 * reported lost); a stalled server shorter than this loses nothing.
 */
#define ACK_WAIT_MS 10000
/*
 * The stream's duplicate window when the daemon creates it: a message
 * published again within it (Nats-Msg-Id, core/msgid.h) is stored once.
 * The longest retry: an acknowledgment awaited ACK_WAIT_MS, every other in
 * flight awaited as long again, then a failover to another server of the
 * cluster; two minutes (JetStream's default, set so that it is not left to
 * chance) leave a wide margin. It costs the server an id per message kept
 * that long.
 */
#define DUPLICATE_WINDOW_NS (120 * 1000000000LL)
/* A message's place in the order of publishing, to put republished ones back in it. */
#define ORDER_HEADER "Ringtap-Order"

struct ncpu {
	_Atomic uint64_t failed;	/* records whose publish failed, not yet folded in */
	_Atomic uint64_t report_again;	/* of Lost messages whose publish failed */
};

enum conn_state { CONN_WAITING, CONN_READY, CONN_AWAY, CONN_STREAM_FAILED, CONN_CLOSED };

struct rt_nats {
	/* The loop thread's. */
	struct rt_publisher *pub;	/* what is published (publish.c) */
	const struct rt_host *host;
	unsigned long max_pending;
	size_t max_message;		/* nats_max_message_kb, in bytes */
	bool republishing;		/* rt_nats_republishing(): no bound, a page a message */
	bool said_stuck;		/* the mark stopped: logged once */
	/* To start over (rt_nats_start_over): what the publisher was made with. */
	const struct rt_layout *layout;
	const char *const *events;
	unsigned int ncpus;
	unsigned int seen_reconnects;
	unsigned int seen_resubjects;
	uint64_t seen_republished;	/* messages sent again, as last logged */
	time_t republished_logged_at;
	uint64_t failed_logged;		/* records whose failed publish was logged */
	time_t failed_logged_at;
	enum conn_state logged_state;

	/* Shared with the publisher thread and libnats' threads. */
	struct ncpu *cpus;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct rt_pub_msg *head, **tail;	/* to publish, in order */
	/*
	 * Messages no stream took (our subject was gone), in the order sent:
	 * published again, first, once the stream takes our subject again.
	 */
	natsMsg **again;
	size_t nagain, again_cap;
	struct rt_nats_mark *mark;	/* answers tracked for a crash's successor; NULL: none */
	uint64_t next_order;		/* the loop's: messages handed to the publisher thread */
	unsigned int bounces;		/* the publisher thread's: replays in a row, none acked */
	uint64_t acked_at_replay;
	bool stop, connected, need_stream, ready;
	bool take_pending;		/* a reconnect: what the last server did not answer, again */
	bool replay;			/* again holds messages to publish before any new one */
	char why[200];			/* the last failure, for the loop to log */
	_Atomic unsigned long pending;	/* queued or unacknowledged */
	_Atomic uint64_t acked;
	_Atomic unsigned int reconnects;
	_Atomic bool resend;		/* a Welcome or Schema failed: send them again */
	_Atomic bool restream;		/* ... and make sure the stream takes our subjects */
	_Atomic bool bounced;		/* a message no stream took: publish nothing new */
	_Atomic unsigned int resubjects;	/* times our subject was added back */
	_Atomic uint64_t published_again;
	_Atomic int state;
	_Atomic bool closing;		/* the stop: failures are final */
	_Atomic uint64_t republished;	/* messages sent again after a failure or reconnect */
	pthread_t thread;
	bool have_thread;

	/* The publisher thread's, once connected. */
	char *url, *stream, *subjects;
	char **servers;			/* url's comma-separated list */
	int nservers;
	natsOptions *nopts;
	natsConnection *nc;
	jsCtx *js;
};

static void set_why(struct rt_nats *n, enum conn_state st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_why(struct rt_nats *n, enum conn_state st, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&n->lock);
	va_start(ap, fmt);
	vsnprintf(n->why, sizeof(n->why), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&n->lock);
	atomic_store(&n->state, st);
}

static uint64_t order_of(natsMsg *msg)
{
	const char *v = NULL;

	return natsMsgHeader_Get(msg, ORDER_HEADER, &v) == NATS_OK && v ? strtoull(v, NULL, 10) : 0;
}

/* Any thread: the message has its answer (the mark may move past it). */
static void settle(struct rt_nats *n, uint64_t order)
{
	if (n->mark)
		rt_nats_mark_settle(n->mark, order);
}

/*
 * Any thread: a failed message's records go back to its CPU's owed report
 * (folded in by the loop); a Welcome's or Schema's loss sends them again.
 */
static void account_failure(struct rt_nats *n, const void *data, size_t len, uint64_t order)
{
	unsigned int cpu;
	uint64_t records;
	int ret = rt_publisher_parse_failed(data, len, &cpu, &records);

	if (ret == RT_PUB_FAILED_RECORD && cpu < n->ncpus)
		atomic_fetch_add(&n->cpus[cpu].failed, records);
	else if (ret == RT_PUB_FAILED_REPORT && cpu < n->ncpus)
		atomic_fetch_add(&n->cpus[cpu].report_again, records);
	else if (ret == RT_PUB_FAILED_DESCRIPTION) {
		/*
		 * Another daemon's update of a shared stream may have replaced our
		 * subjects: the stream is checked again before the next publish.
		 */
		atomic_store(&n->resend, true);
		atomic_store(&n->restream, true);
	}
	/*
	 * Records lost whose report is not yet stored: the mark must not pass
	 * them on this message's answer (told before it is settled).
	 */
	if (n->mark && (ret == RT_PUB_FAILED_RECORD || ret == RT_PUB_FAILED_REPORT))
		rt_nats_mark_failed(n->mark);
	settle(n, order);
	atomic_fetch_sub(&n->pending, 1);
}

/*
 * libnats' thread: "no responders" means no stream took the message, so it
 * is certainly not stored: another daemon's update of a shared stream
 * replaced our subject. Every later message fails the same way until the
 * subject is back, so publishing stops, and the messages go again in the
 * order they were sent. false if it could not be kept.
 */
static bool keep_for_again(struct rt_nats *n, natsMsg *msg)
{
	bool kept = false;

	pthread_mutex_lock(&n->lock);
	if (n->nagain == n->again_cap) {
		size_t cap = n->again_cap ? 2 * n->again_cap : 64;
		natsMsg **again = realloc(n->again, cap * sizeof(*again));

		if (again) {
			n->again = again;
			n->again_cap = cap;
		}
	}
	if (n->nagain < n->again_cap) {
		n->again[n->nagain++] = msg;
		n->ready = false;
		atomic_store(&n->bounced, true);
		pthread_cond_signal(&n->wake);
		kept = true;
	}
	pthread_mutex_unlock(&n->lock);
	return kept;
}

/*
 * Failures after which the message may or may not be stored: sent again
 * with its id, JetStream stores it once. No acknowledgment in time (a
 * server that died or stalled), no stream there to take it (our subject
 * gone, or the cluster electing a stream leader), a connection lost, or
 * one reconnecting (no reconnect buffer: "insufficient buffer").
 */
static bool again_may_store(natsStatus s)
{
	return s == NATS_TIMEOUT || s == NATS_NO_RESPONDERS || s == NATS_CONNECTION_CLOSED ||
	       s == NATS_CONNECTION_DISCONNECTED || s == NATS_NOT_YET_CONNECTED ||
	       s == NATS_INSUFFICIENT_BUFFER;
}

/* libnats' thread: every async publish ends here, acknowledged or not. */
static void on_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure)
{
	struct rt_nats *n = closure;

	if (pae && again_may_store(pae->Err) && !atomic_load(&n->closing) &&
	    keep_for_again(n, msg))
		return;
	if (pae) {
		account_failure(n, natsMsg_GetData(msg), (size_t)natsMsg_GetDataLength(msg),
				order_of(msg));
		set_why(n, atomic_load(&n->state), "publish to %s: %s", natsMsg_GetSubject(msg),
			pae->ErrText ? pae->ErrText : natsStatus_GetText(pae->Err));
	} else {
		settle(n, order_of(msg));
		atomic_fetch_sub(&n->pending, 1);
		atomic_fetch_add(&n->acked, 1);
	}
	natsMsg_Destroy(msg);
}

static void on_connected(natsConnection *nc, void *closure)
{
	struct rt_nats *n = closure;

	pthread_mutex_lock(&n->lock);
	n->connected = true;
	n->need_stream = true;
	pthread_cond_signal(&n->wake);
	pthread_mutex_unlock(&n->lock);
}

static void on_reconnected(natsConnection *nc, void *closure)
{
	struct rt_nats *n = closure;

	pthread_mutex_lock(&n->lock);
	n->take_pending = true;
	pthread_mutex_unlock(&n->lock);
	on_connected(nc, closure);
	/* The stream may be new: Welcome and Schemas again, before the next records. */
	atomic_fetch_add(&n->reconnects, 1);
}

static void on_disconnected(natsConnection *nc, void *closure)
{
	struct rt_nats *n = closure;

	pthread_mutex_lock(&n->lock);
	n->connected = false;
	pthread_mutex_unlock(&n->lock);
	if (atomic_load(&n->state) != CONN_CLOSED)
		atomic_store(&n->state, CONN_AWAY);
}

/* Whether the stream's subjects take ours already (ringtap.> or ringtap.<host>.>). */
static bool covers(const jsStreamConfig *cfg, const char *ours)
{
	for (int i = 0; i < cfg->SubjectsLen; i++)
		if (!strcmp(cfg->Subjects[i], ours) || !strcmp(cfg->Subjects[i], ">") ||
		    !strcmp(cfg->Subjects[i], "ringtap.>"))
			return true;
	return false;
}

/* One look at the stream, then a create or an update when it lacks our subjects. */
static natsStatus stream_step(struct rt_nats *n, bool *covered, jsErrCode *jerr)
{
	jsStreamInfo *si = NULL;
	jsStreamConfig cfg;
	const char **subjects = NULL;
	natsStatus s;

	*covered = false;
	s = js_GetStreamInfo(&si, n->js, n->stream, NULL, jerr);
	if (s == NATS_NOT_FOUND || *jerr == JSStreamNotFoundErr) {
		const char *ours[] = { n->subjects };

		jsStreamConfig_Init(&cfg);
		cfg.Name = n->stream;
		cfg.Subjects = ours;
		cfg.SubjectsLen = 1;
		cfg.Storage = js_FileStorage;
		cfg.Duplicates = DUPLICATE_WINDOW_NS;
		return js_AddStream(NULL, n->js, &cfg, NULL, jerr);
	}
	if (s != NATS_OK)
		return s;
	*covered = covers(si->Config, n->subjects);
	if (!*covered) {
		cfg = *si->Config;
		subjects = calloc((size_t)cfg.SubjectsLen + 1, sizeof(*subjects));
		if (!subjects) {
			jsStreamInfo_Destroy(si);
			return NATS_NO_MEMORY;
		}
		memcpy(subjects, cfg.Subjects, (size_t)cfg.SubjectsLen * sizeof(*subjects));
		subjects[cfg.SubjectsLen++] = n->subjects;
		cfg.Subjects = subjects;
		s = js_UpdateStream(NULL, n->js, &cfg, NULL, jerr);
	}
	free(subjects);
	jsStreamInfo_Destroy(si);
	return s;
}

/*
 * Publisher thread: the stream exists and takes ringtap.<host>.>, or why not:
 * 1 when it had to be created or given our subject, 0 when it took it already.
 * Daemons of a fleet share one stream: two may create it at once (one is
 * told it exists), or update its subjects at once (the later update drops
 * the earlier one's subject). So it is done until a look finds ours there;
 * a later loss of them shows as failed publishes, which bring us back here.
 */
static int ensure_stream(struct rt_nats *n)
{
	jsErrCode jerr = 0;
	natsStatus s = NATS_OK;

	bool changed = false;

	for (int attempt = 0; attempt < 5; attempt++) {
		bool covered;

		jerr = 0;
		s = stream_step(n, &covered, &jerr);
		if (s == NATS_OK && covered)
			return changed;
		/* Created or given our subject (a failed look, as after a failover, is neither). */
		changed |= s == NATS_OK;
	}
	set_why(n, CONN_STREAM_FAILED, "stream %s: %s (JetStream error %d)", n->stream,
		s == NATS_OK ? "our subjects keep being replaced" :
		nats_GetLastError(NULL) ?: natsStatus_GetText(s), (int)jerr);
	return -EIO;
}

/* One message, with its id and its place in the order. */
static natsStatus publish_one(struct rt_nats *n, const struct rt_pub_msg *m, jsPubOptions *po)
{
	natsMsg *msg = NULL;
	char order[24];
	natsStatus s;

	snprintf(order, sizeof(order), "%" PRIu64, m->order);
	po->MsgId = m->id;
	s = natsMsg_Create(&msg, m->subject, NULL, (const char *)m->data, (int)m->len);
	if (s == NATS_OK)
		s = natsMsgHeader_Set(msg, ORDER_HEADER, order);
	if (s == NATS_OK)
		s = js_PublishMsgAsync(n->js, &msg, po);
	natsMsg_Destroy(msg);
	return s;
}

/* What is not published because publishing stopped: to go first next time. */
static struct rt_pub_msg *publish_all(struct rt_nats *n, struct rt_pub_msg *m)
{
	jsPubOptions po;

	jsPubOptions_Init(&po);
	po.MaxWait = ACK_WAIT_MS;
	while (m && !atomic_load(&n->bounced)) {
		struct rt_pub_msg *next = m->next;
		natsStatus s = publish_one(n, m, &po);

		/* The connection went: kept to go first once it is back. */
		if (again_may_store(s))
			break;
		if (s != NATS_OK) {
			account_failure(n, m->data, m->len, m->order);
			set_why(n, atomic_load(&n->state), "publish to %s: %s", m->subject,
				natsStatus_GetText(s));
		}
		free(m);
		m = next;
	}
	return m;
}

static int by_order(const void *a, const void *b)
{
	uint64_t x = order_of(*(natsMsg *const *)a), y = order_of(*(natsMsg *const *)b);

	return x < y ? -1 : x > y;
}

/*
 * Publisher thread, every message in flight answered or taken back: what
 * may not be stored goes again, with its id (JetStream stores a copy once),
 * in the order it was first sent, before anything new.
 */
static void publish_again(struct rt_nats *n, bool subject_was_back)
{
	natsMsg **again;
	size_t count;
	jsPubOptions po;

	pthread_mutex_lock(&n->lock);
	again = n->again;
	count = n->nagain;
	n->again = NULL;
	n->nagain = n->again_cap = 0;
	pthread_mutex_unlock(&n->lock);
	qsort(again, count, sizeof(*again), by_order);
	jsPubOptions_Init(&po);
	po.MaxWait = ACK_WAIT_MS;
	for (size_t i = 0; i < count; i++) {
		natsMsg *msg = again[i];
		/* Its id header is on it already: the same id as the first time. */
		natsStatus s = js_PublishMsgAsync(n->js, &msg, &po);

		if (s != NATS_OK) {
			account_failure(n, natsMsg_GetData(again[i]),
					(size_t)natsMsg_GetDataLength(again[i]),
					order_of(again[i]));
			set_why(n, atomic_load(&n->state), "publish to %s: %s",
				natsMsg_GetSubject(again[i]), natsStatus_GetText(s));
			natsMsg_Destroy(msg);
		}
	}
	free(again);
	atomic_fetch_add(&n->republished, count);
	if (!subject_was_back)
		return;
	atomic_fetch_add(&n->published_again, count);
	atomic_fetch_add(&n->resubjects, 1);
}

/*
 * Publisher thread, after a reconnect: the messages the last server did not
 * acknowledge are taken back from libnats (their late answers are then
 * ignored) to go again with the rest.
 */
static void take_pending(struct rt_nats *n)
{
	natsMsgList list = { 0 };

	if (js_PublishAsyncGetPendingList(&list, n->js) != NATS_OK)
		return;
	for (int i = 0; i < list.Count; i++) {
		if (!list.Msgs[i] || keep_for_again(n, list.Msgs[i])) {
			list.Msgs[i] = NULL;
			continue;
		}
		/* No memory to keep it: lost, counted and reported as a failed publish. */
		account_failure(n, natsMsg_GetData(list.Msgs[i]),
				(size_t)natsMsg_GetDataLength(list.Msgs[i]),
				order_of(list.Msgs[i]));
	}
	natsMsgList_Destroy(&list);
}

static void wait_a_while(struct rt_nats *n, int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(&n->wake, &n->lock, &ts);
}

/*
 * Every libnats call that can wait (stream requests, a publish into a full
 * socket) happens here, never on the loop thread.
 */
static void *publisher(void *arg)
{
	struct rt_nats *n = arg;

	pthread_mutex_lock(&n->lock);
	for (;;) {
		struct rt_pub_msg *batch, *rest;

		if (n->take_pending && n->connected) {
			n->take_pending = false;
			pthread_mutex_unlock(&n->lock);
			take_pending(n);
			pthread_mutex_lock(&n->lock);
		}
		if (atomic_load(&n->bounced)) {
			jsPubOptions po;

			/* Every message in flight answered first, so that none overtakes. */
			pthread_mutex_unlock(&n->lock);
			jsPubOptions_Init(&po);
			po.MaxWait = ACK_WAIT_MS;
			js_PublishAsyncComplete(n->js, &po);
			pthread_mutex_lock(&n->lock);
			atomic_store(&n->bounced, false);
			n->replay = true;
			atomic_store(&n->restream, true);
		}
		if (atomic_exchange(&n->restream, false)) {
			n->need_stream = true;
			n->ready = false;
		}
		if (n->need_stream && n->connected) {
			int ret;

			n->need_stream = false;
			pthread_mutex_unlock(&n->lock);
			ret = ensure_stream(n);
			pthread_mutex_lock(&n->lock);
			if (ret < 0) {
				n->need_stream = true;
				if (!n->stop)
					wait_a_while(n, RECONNECT_WAIT_MS);
				if (n->stop)
					break;
				continue;
			}
			n->ready = true;
			atomic_store(&n->state, CONN_READY);
			if (n->replay) {
				uint64_t acked = atomic_load(&n->acked);

				/*
				 * Bounced again with our subject there all along and
				 * nothing acknowledged since (a stream electing its
				 * leader, a node catching up): wait, 50 ms doubling to
				 * 2 s, rather than spin.
				 */
				n->bounces = ret == 0 && acked == n->acked_at_replay ? n->bounces + 1 : 0;
				n->acked_at_replay = acked;
				if (n->bounces && !n->stop)
					wait_a_while(n, 50 << (n->bounces < 6 ? n->bounces - 1 : 5));
				n->replay = false;
				pthread_mutex_unlock(&n->lock);
				publish_again(n, ret == 1);
				pthread_mutex_lock(&n->lock);
			}
			continue;
		}
		if (!n->ready || !n->head || !n->connected) {
			if (n->stop)
				break;
			wait_a_while(n, 1000);
			continue;
		}
		batch = n->head;
		n->head = NULL;
		n->tail = &n->head;
		pthread_mutex_unlock(&n->lock);
		rest = publish_all(n, batch);
		pthread_mutex_lock(&n->lock);
		if (rest) {
			struct rt_pub_msg *last = rest;

			while (last->next)
				last = last->next;
			last->next = n->head;
			if (!n->head)
				n->tail = &last->next;
			n->head = rest;
		}
	}
	pthread_mutex_unlock(&n->lock);
	return NULL;
}

static int connect_nats(struct rt_nats *n, const struct rt_nats_opts *o)
{
	jsOptions jo;
	natsStatus s;
	char name[128];

	snprintf(name, sizeof(name), "ringtapd %s", n->host->hostname);
	s = natsOptions_Create(&n->nopts);
	if (s == NATS_OK)
		s = natsOptions_SetServers(n->nopts, (const char **)n->servers, n->nservers);
	if (s == NATS_OK)
		s = natsOptions_SetName(n->nopts, name);
	if (s == NATS_OK)
		s = natsOptions_SetMaxReconnect(n->nopts, -1);
	if (s == NATS_OK)
		s = natsOptions_SetReconnectWait(n->nopts, RECONNECT_WAIT_MS);
	if (s == NATS_OK)
		s = natsOptions_SetRetryOnFailedConnect(n->nopts, true, on_connected, n);
	if (s == NATS_OK)
		s = natsOptions_SetDisconnectedCB(n->nopts, on_disconnected, n);
	if (s == NATS_OK)
		s = natsOptions_SetReconnectedCB(n->nopts, on_reconnected, n);
	if (s != NATS_OK) {
		rt_log(LOG_ERR, "nats_url %s: %s", o->url, nats_GetLastError(NULL) ?: natsStatus_GetText(s));
		return -EINVAL;
	}
	/* JetStream's acknowledgments are our record of what is stored: none kept for later. */
	if (s == NATS_OK)
		s = natsOptions_SetReconnectBufSize(n->nopts, 0);
	if (s == NATS_OK)
		s = natsConnection_Connect(&n->nc, n->nopts);
	if (s == NATS_OK) {
		on_connected(n->nc, n);
	} else if (s == NATS_NOT_YET_CONNECTED) {
		rt_log(LOG_WARNING, "NATS at %s not reachable yet; trying every %d s meanwhile, "
		       "records wait up to nats_max_pending, then drop and are counted", o->url,
		       RECONNECT_WAIT_MS / 1000);
		atomic_store(&n->state, CONN_AWAY);
		n->logged_state = CONN_AWAY;
	} else {
		rt_log(LOG_ERR, "NATS at %s: %s", o->url, nats_GetLastError(NULL) ?: natsStatus_GetText(s));
		return -EIO;
	}
	jsOptions_Init(&jo);
	/* Our own bound is nats_max_pending: libnats must never stall the publisher for it. */
	jo.PublishAsync.MaxPending = 1 << 30;
	jo.PublishAsync.AckHandler = on_ack;
	jo.PublishAsync.AckHandlerClosure = n;
	s = natsConnection_JetStream(&n->js, n->nc, &jo);
	if (s != NATS_OK) {
		rt_log(LOG_ERR, "JetStream context: %s", natsStatus_GetText(s));
		return -ENOMEM;
	}
	return 0;
}

/* The publisher's sink: queued for the publisher thread, counted until acknowledged. */
static void enqueue(void *ctx, struct rt_pub_msg *m)
{
	struct rt_nats *n = ctx;

	m->order = n->next_order++;
	atomic_fetch_add(&n->pending, 1);
	pthread_mutex_lock(&n->lock);
	*n->tail = m;
	n->tail = &m->next;
	pthread_cond_signal(&n->wake);
	pthread_mutex_unlock(&n->lock);
}

static bool room(void *ctx)
{
	struct rt_nats *n = ctx;

	/* Pages published again after a crash all go: a drop would only lose them again. */
	return n->republishing || atomic_load(&n->pending) < n->max_pending;
}

/* nats_url: servers of a cluster, comma-separated; libnats tries another when one dies. */
static int split_servers(struct rt_nats *n)
{
	char *copy = strdup(n->url), *save = NULL;
	size_t count = 1;

	if (!copy)
		return -ENOMEM;
	for (const char *c = n->url; *c; c++)
		count += *c == ',';
	n->servers = calloc(count + 1, sizeof(*n->servers));
	for (char *tok = strtok_r(copy, ",", &save); n->servers && tok;
	     tok = strtok_r(NULL, ",", &save)) {
		tok += strspn(tok, " \t");
		tok[strcspn(tok, " \t")] = '\0';
		if (*tok && !(n->servers[n->nservers++] = strdup(tok)))
			break;
	}
	free(copy);
	if (!n->servers || (n->nservers && !n->servers[n->nservers - 1]))
		return -ENOMEM;
	if (!n->nservers) {
		rt_log(LOG_ERR, "nats_url names no server");
		return -EINVAL;
	}
	return 0;
}

int rt_nats_new(struct rt_nats **out, const struct rt_nats_opts *o, const struct rt_host *host,
		const struct rt_layout *layout, unsigned int ncpus)
{
	struct rt_nats *n = calloc(1, sizeof(*n));
	struct rt_publisher_sink sink = { room, enqueue, n };
	struct rt_publisher_from from = { 0 };
	struct timespec now;
	int ret;

	if (!n) {
		rt_nats_mark_free(o->mark);
		goto nomem;
	}
	n->mark = o->mark;
	n->layout = layout;
	n->events = o->events;
	pthread_mutex_init(&n->lock, NULL);
	pthread_cond_init(&n->wake, NULL);
	n->tail = &n->head;
	n->host = host;
	n->ncpus = ncpus;
	n->max_pending = o->max_pending;
	n->logged_state = CONN_WAITING;
	clock_gettime(CLOCK_REALTIME, &now);
	n->cpus = calloc(ncpus, sizeof(*n->cpus));
	n->url = strdup(o->url);
	n->stream = strdup(o->stream);
	ret = n->url ? split_servers(n) : 0;
	if (ret == -ENOMEM)
		goto nomem;
	if (ret)
		goto fail;
	/* A crash's successor goes on with the dead run's numbers, else a run of its own. */
	from = o->from ? *o->from : (struct rt_publisher_from){
		.session = (uint64_t)now.tv_sec * 1000000000 + (uint64_t)now.tv_nsec };
	if (!n->cpus || !n->url || !n->stream ||
	    rt_publisher_new_from(&n->pub, host, &from, layout, o->events, ncpus, &sink) ||
	    !(n->subjects = strdup(rt_publisher_subjects(n->pub))))
		goto nomem;
	if (n->mark && !o->from && (ret = rt_nats_mark_start(n->mark, from.session, o->mark_key))) {
		rt_log(LOG_WARNING, "NATS: keeping where publishing stands for a crash: %s; after "
		       "one, publishing starts anew", strerror(-ret));
		rt_nats_mark_free(n->mark);
		n->mark = NULL;
	}
	n->max_message = o->max_message_kb * 1024;
	rt_publisher_set_max_message(n->pub, n->max_message);
	ret = connect_nats(n, o);
	if (ret)
		goto fail;
	ret = -pthread_create(&n->thread, NULL, publisher, n);
	if (ret) {
		rt_log(LOG_ERR, "NATS: starting the publisher thread: %s", strerror(-ret));
		goto fail;
	}
	n->have_thread = true;
	*out = n;
	return 0;
nomem:
	rt_log(LOG_ERR, "NATS: %s", strerror(ENOMEM));
	ret = -ENOMEM;
fail:
	rt_nats_free(n);
	return ret;
}

/* After a reconnect, or a Welcome or Schema that failed: the stream may be new. */
static void refresh(struct rt_nats *n)
{
	unsigned int r = atomic_load(&n->reconnects);
	bool resend = atomic_exchange(&n->resend, false);

	if (r == n->seen_reconnects && !resend)
		return;
	n->seen_reconnects = r;
	rt_publisher_welcome(n->pub);
}

void rt_nats_record(struct rt_nats *n, const struct rt_record *rec)
{
	refresh(n);
	rt_publisher_record(n->pub, rec);
}

void rt_nats_kernel_loss(struct rt_nats *n, unsigned int cpu, uint64_t count, bool exact,
			 uint64_t after_ts, uint64_t before_ts)
{
	rt_publisher_kernel_loss(n->pub, cpu, count, exact, after_ts, before_ts);
}

void rt_nats_end_page(struct rt_nats *n)
{
	rt_publisher_end_page(n->pub);
}

void rt_nats_ring_at(struct rt_nats *n, unsigned int cpu, uint64_t page,
		     const struct rt_ring_page_info *before)
{
	if (n->mark && cpu < n->ncpus)
		rt_nats_mark_ring_at(n->mark, cpu, page, before);
}

void rt_nats_republishing(struct rt_nats *n, bool on)
{
	n->republishing = on;
	rt_publisher_set_max_message(n->pub, on ? 0 : n->max_message);
}

static uint64_t realtime_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return (uint64_t)now.tv_sec * 1000000000 + (uint64_t)now.tv_nsec;
}

int rt_nats_start_over(struct rt_nats *n, uint64_t key)
{
	struct rt_publisher_sink sink = { room, enqueue, n };
	struct rt_publisher *pub;
	int ret;

	/* What the old numbering had queued goes as it is; nothing new takes its numbers. */
	rt_publisher_end_drain(n->pub);
	ret = rt_publisher_new(&pub, n->host, realtime_ns(), n->layout, n->events, n->ncpus,
			       &sink);
	if (ret)
		return ret;
	rt_publisher_free(n->pub);
	n->pub = pub;
	rt_publisher_set_max_message(n->pub, n->republishing ? 0 : n->max_message);
	if (n->mark && rt_nats_mark_start(n->mark, rt_publisher_session(pub), key)) {
		rt_nats_mark_free(n->mark);
		n->mark = NULL;
	}
	return 0;
}

int rt_nats_kept_fd(const struct rt_nats *n)
{
	return n->mark ? rt_nats_mark_fd(n->mark) : -1;
}

static bool failures_unfolded(struct rt_nats *n)
{
	for (unsigned int cpu = 0; cpu < n->ncpus; cpu++)
		if (atomic_load(&n->cpus[cpu].failed) || atomic_load(&n->cpus[cpu].report_again))
			return true;
	return false;
}

void rt_nats_end_drain(struct rt_nats *n)
{
	rt_publisher_end_drain(n->pub);
	/*
	 * Everything read so far is handed over, no loss is owed a report or
	 * still to be folded in: once answered, the mark may move here.
	 */
	if (n->mark && !rt_publisher_owes(n->pub) && !failures_unfolded(n))
		rt_nats_mark_note(n->mark, n->next_order, n->pub);
	if (n->mark)
		rt_nats_mark_advance(n->mark);
}

static const char *state_text(enum conn_state st)
{
	switch (st) {
	case CONN_READY:
		return "publishing";
	case CONN_AWAY:
		return "not connected; reconnecting";
	case CONN_STREAM_FAILED:
		return "stream not usable; trying again";
	default:
		return "connecting";
	}
}

/* Failed publishes at most once a minute, each return of our subject once. */
static void log_news(struct rt_nats *n)
{
	unsigned int resubjects = atomic_load(&n->resubjects);
	uint64_t republished = atomic_load(&n->republished);
	struct rt_publisher_stats ps;
	uint64_t failed;
	struct timespec now;

	if (resubjects != n->seen_resubjects) {
		n->seen_resubjects = resubjects;
		rt_log(LOG_WARNING, "NATS %s: stream %s no longer takes %s (another daemon's "
		       "update of it?); added again, %" PRIu64 " message(s) published again so "
		       "far", n->url, n->stream, n->subjects, atomic_load(&n->published_again));
	} else if (republished != n->seen_republished) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		/* At most every 10 s: a stream without a leader bounces everything for a while. */
		if (!n->republished_logged_at || now.tv_sec >= n->republished_logged_at + 10) {
			rt_log(LOG_NOTICE, "NATS %s: %" PRIu64 " message(s) not acknowledged (a "
			       "server that went away, late, or no stream leader yet) published "
			       "again with their ids", n->url, republished - n->seen_republished);
			n->seen_republished = republished;
			n->republished_logged_at = now.tv_sec;
		}
	} else {
		n->seen_republished = republished;
	}
	/* The publisher's count: failures folded in by rt_nats_poll before this. */
	rt_publisher_get_stats(n->pub, &ps);
	failed = ps.failed;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (failed == n->failed_logged ||
	    (n->failed_logged_at && now.tv_sec < n->failed_logged_at + 60))
		return;
	pthread_mutex_lock(&n->lock);
	rt_log(LOG_WARNING, "NATS: %" PRIu64 " record(s) failed to publish, reported lost on the "
	       "stream; the last failure: %s", failed - n->failed_logged, n->why);
	pthread_mutex_unlock(&n->lock);
	n->failed_logged = failed;
	n->failed_logged_at = now.tv_sec;
}

void rt_nats_poll(struct rt_nats *n)
{
	enum conn_state st = (enum conn_state)atomic_load(&n->state);

	for (unsigned int cpu = 0; cpu < n->ncpus; cpu++) {
		rt_publisher_failed(n->pub, cpu, atomic_exchange(&n->cpus[cpu].failed, 0));
		rt_publisher_report_again(n->pub, cpu,
					  atomic_exchange(&n->cpus[cpu].report_again, 0));
	}
	refresh(n);
	rt_publisher_flush(n->pub);
	if (n->mark)
		rt_nats_mark_advance(n->mark);
	if (n->mark && rt_nats_mark_stuck(n->mark) && !n->said_stuck) {
		n->said_stuck = true;
		rt_log(LOG_WARNING, "NATS: more messages in flight than the mark can follow: it "
		       "stays where it is; after a crash more is published again (JetStream "
		       "keeps each once within its duplicate window)");
	}
	log_news(n);
	if (st == n->logged_state)
		return;
	n->logged_state = st;
	pthread_mutex_lock(&n->lock);
	if (st == CONN_READY)
		rt_log(LOG_NOTICE, "NATS %s: publishing to stream %s on %s", n->url, n->stream,
		       n->subjects);
	else
		rt_log(st == CONN_STREAM_FAILED ? LOG_ERR : LOG_WARNING, "NATS %s: %s%s%s", n->url,
		       state_text(st), *n->why ? ": " : "", n->why);
	pthread_mutex_unlock(&n->lock);
}

bool rt_nats_ready(struct rt_nats *n)
{
	return atomic_load(&n->state) == CONN_READY;
}

bool rt_nats_drained(struct rt_nats *n)
{
	if (rt_publisher_owes(n->pub))
		return false;
	for (unsigned int cpu = 0; cpu < n->ncpus; cpu++)
		if (atomic_load(&n->cpus[cpu].failed) || atomic_load(&n->cpus[cpu].report_again))
			return false;
	return atomic_load(&n->pending) == 0;
}

void rt_nats_get_stats(struct rt_nats *n, struct rt_nats_stats *st)
{
	struct rt_publisher_stats ps = { 0 };

	if (n->pub)
		rt_publisher_get_stats(n->pub, &ps);
	*st = (struct rt_nats_stats){
		.records = ps.records,
		.acked = atomic_load(&n->acked),
		.dropped = ps.dropped,
		.failed = ps.failed,
		.unreported = ps.unreported,
		.pending = atomic_load(&n->pending),
		.republished = atomic_load(&n->republished),
	};
	for (unsigned int cpu = 0; n->cpus && cpu < n->ncpus; cpu++)
		st->unreported += atomic_load(&n->cpus[cpu].failed) +
				  atomic_load(&n->cpus[cpu].report_again);
}

void rt_nats_free(struct rt_nats *n)
{
	if (!n)
		return;
	atomic_store(&n->closing, true);
	if (n->have_thread) {
		pthread_mutex_lock(&n->lock);
		n->stop = true;
		pthread_cond_signal(&n->wake);
		pthread_mutex_unlock(&n->lock);
		pthread_join(n->thread, NULL);
	}
	/* No stream took these and none will now: lost, and counted so. */
	for (size_t i = 0; i < n->nagain; i++) {
		account_failure(n, natsMsg_GetData(n->again[i]),
				(size_t)natsMsg_GetDataLength(n->again[i]), order_of(n->again[i]));
		natsMsg_Destroy(n->again[i]);
	}
	free(n->again);
	if (n->nc) {
		struct rt_nats_stats st;

		rt_nats_get_stats(n, &st);
		if (st.pending || st.unreported)
			rt_log(LOG_WARNING, "NATS: at exit %" PRIu64 " message(s) unacknowledged (in "
			       "the stream or lost, unknown) and %" PRIu64 " lost record(s) not "
			       "reported on it", st.pending, st.unreported);
		natsConnection_Destroy(n->nc);
	}
	jsCtx_Destroy(n->js);
	natsOptions_Destroy(n->nopts);
	rt_pub_msg_free_list(n->head);
	rt_publisher_free(n->pub);
	free(n->cpus);
	free(n->url);
	rt_strv_free(n->servers);
	free(n->stream);
	free(n->subjects);
	rt_nats_mark_free(n->mark);
	pthread_cond_destroy(&n->wake);
	pthread_mutex_destroy(&n->lock);
	free(n);
	/* libnats' own threads and memory, so that memcheck sees ours alone. */
	nats_CloseAndWait(1000);
}
