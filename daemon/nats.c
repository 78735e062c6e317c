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
#include "select.h"
#include "util.h"

/* A server that is away is tried again this often, forever. */
#define RECONNECT_WAIT_MS 2000
/*
 * An acknowledgment not back by then counts the message as failed (and
 * reported lost); a stalled server shorter than this loses nothing.
 */
#define ACK_WAIT_MS 10000

struct nmsg {
	struct nmsg *next;
	const char *subject;	/* in data, after the payload */
	size_t len;
	uint64_t ts;		/* a record's, for a drop's report */
	uint8_t data[];
};

struct nevent {
	uint8_t state;		/* 0: not looked at, 1: published, 2: not */
	bool schema_sent;	/* since the last (re)connect */
	char *subject;
};

struct ncpu {
	uint64_t seq;		/* records offered on this CPU, published or not */
	struct rt_loss kernel, dropped;	/* owed a report */
	_Atomic uint64_t failed;	/* records whose publish failed, not yet folded in */
};

enum conn_state { CONN_WAITING, CONN_READY, CONN_AWAY, CONN_STREAM_FAILED, CONN_CLOSED };

struct rt_nats {
	/* The loop thread's. */
	const struct rt_layout *layout;
	const struct rt_host *host;
	char **globs;
	char host_token[64];
	char *subject_lost, *subject_hello, *subject_all;
	uint64_t session;
	unsigned long max_pending;
	unsigned int ncpus;
	struct ncpu *cpus;
	struct nevent *events;
	size_t n_events;
	struct nmsg *page_head, **page_tail;
	unsigned int page_cpu;
	struct rt_buf scratch, packed;
	unsigned int seen_reconnects;
	enum conn_state logged_state;
	uint64_t records, dropped, failed;

	/* Shared with the publisher thread and libnats' threads. */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct nmsg *head, **tail;	/* to publish, in order */
	bool stop, connected, need_stream, ready;
	char why[200];			/* the last failure, for the loop to log */
	_Atomic unsigned long pending;	/* queued or unacknowledged */
	_Atomic uint64_t acked;
	_Atomic unsigned int reconnects;
	_Atomic bool resend;		/* a Welcome or Schema failed: send them again */
	_Atomic int state;
	pthread_t thread;
	bool have_thread;

	/* The publisher thread's, once connected. */
	char *url, *stream;
	natsOptions *nopts;
	natsConnection *nc;
	jsCtx *js;
};

/* Subject tokens: a hostname "a.b" would be two tokens, '*' or '>' a wildcard. */
static void token(char *dst, size_t size, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < size && src[i]; i++) {
		char c = src[i];

		dst[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			 c == '-' || c == '_' ? c : '_';
	}
	dst[i] = '\0';
}

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

/* A failed message's records go back to its CPU's owed report; a Schema's loss resends them. */
static void account_failure(struct rt_nats *n, const void *data, size_t len)
{
	Ringtap__Published *p = ringtap__published__unpack(NULL, len, data);

	atomic_fetch_sub(&n->pending, 1);
	if (!p)
		return;
	if (p->cpu < n->ncpus && p->msg_case == RINGTAP__PUBLISHED__MSG_RECORD)
		atomic_fetch_add(&n->cpus[p->cpu].failed, 1);
	else if (p->cpu < n->ncpus && p->msg_case == RINGTAP__PUBLISHED__MSG_LOST)
		atomic_fetch_add(&n->cpus[p->cpu].failed, p->lost->count);
	else
		atomic_store(&n->resend, true);
	ringtap__published__free_unpacked(p, NULL);
}

/* libnats' thread: every async publish ends here, acknowledged or not. */
static void on_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure)
{
	struct rt_nats *n = closure;

	if (pae) {
		account_failure(n, natsMsg_GetData(msg), (size_t)natsMsg_GetDataLength(msg));
		set_why(n, atomic_load(&n->state), "publish to %s: %s", natsMsg_GetSubject(msg),
			pae->ErrText ? pae->ErrText : natsStatus_GetText(pae->Err));
	} else {
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

/* Publisher thread: the stream exists and takes ringtap.<host>.>, or why not. */
static int ensure_stream(struct rt_nats *n)
{
	jsStreamInfo *si = NULL;
	jsStreamConfig cfg;
	jsErrCode jerr = 0;
	const char **subjects = NULL;
	natsStatus s;

	s = js_GetStreamInfo(&si, n->js, n->stream, NULL, &jerr);
	if (s == NATS_NOT_FOUND || jerr == JSStreamNotFoundErr) {
		const char *ours[] = { n->subject_all };

		jsStreamConfig_Init(&cfg);
		cfg.Name = n->stream;
		cfg.Subjects = ours;
		cfg.SubjectsLen = 1;
		cfg.Storage = js_FileStorage;
		s = js_AddStream(NULL, n->js, &cfg, NULL, &jerr);
	} else if (s == NATS_OK && !covers(si->Config, n->subject_all)) {
		cfg = *si->Config;
		subjects = calloc((size_t)cfg.SubjectsLen + 1, sizeof(*subjects));
		if (!subjects) {
			jsStreamInfo_Destroy(si);
			return -ENOMEM;
		}
		memcpy(subjects, cfg.Subjects, (size_t)cfg.SubjectsLen * sizeof(*subjects));
		subjects[cfg.SubjectsLen++] = n->subject_all;
		cfg.Subjects = subjects;
		s = js_UpdateStream(NULL, n->js, &cfg, NULL, &jerr);
	}
	free(subjects);
	jsStreamInfo_Destroy(si);
	if (s == NATS_OK)
		return 0;
	set_why(n, CONN_STREAM_FAILED, "stream %s: %s (JetStream error %d)", n->stream,
		nats_GetLastError(NULL) ?: natsStatus_GetText(s), (int)jerr);
	return -EIO;
}

static void publish_all(struct rt_nats *n, struct nmsg *m)
{
	jsPubOptions po;

	jsPubOptions_Init(&po);
	po.MaxWait = ACK_WAIT_MS;
	while (m) {
		struct nmsg *next = m->next;
		natsStatus s = js_PublishAsync(n->js, m->subject, m->data, (int)m->len, &po);

		if (s != NATS_OK) {
			account_failure(n, m->data, m->len);
			set_why(n, atomic_load(&n->state), "publish to %s: %s", m->subject,
				natsStatus_GetText(s));
		}
		free(m);
		m = next;
	}
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
		struct nmsg *batch;

		if (n->need_stream && n->connected) {
			int ret;

			n->need_stream = false;
			pthread_mutex_unlock(&n->lock);
			ret = ensure_stream(n);
			pthread_mutex_lock(&n->lock);
			if (ret) {
				n->need_stream = true;
				if (!n->stop)
					wait_a_while(n, RECONNECT_WAIT_MS);
				if (n->stop)
					break;
				continue;
			}
			n->ready = true;
			atomic_store(&n->state, CONN_READY);
			continue;
		}
		if (!n->ready || !n->head) {
			if (n->stop)
				break;
			wait_a_while(n, 1000);
			continue;
		}
		batch = n->head;
		n->head = NULL;
		n->tail = &n->head;
		pthread_mutex_unlock(&n->lock);
		publish_all(n, batch);
		pthread_mutex_lock(&n->lock);
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
		s = natsOptions_SetURL(n->nopts, o->url);
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

static struct nmsg *nmsg_new(const char *subject, const struct rt_buf *b)
{
	size_t sl = strlen(subject) + 1;
	struct nmsg *m = malloc(sizeof(*m) + b->len + sl);

	if (!m)
		return NULL;
	m->next = NULL;
	m->ts = 0;
	m->len = b->len;
	memcpy(m->data, b->data, b->len);
	memcpy(m->data + b->len, subject, sl);
	m->subject = (const char *)m->data + b->len;
	return m;
}

static void enqueue(struct rt_nats *n, struct nmsg *m)
{
	atomic_fetch_add(&n->pending, 1);
	pthread_mutex_lock(&n->lock);
	*n->tail = m;
	n->tail = &m->next;
	pthread_cond_signal(&n->wake);
	pthread_mutex_unlock(&n->lock);
}

static bool room(struct rt_nats *n)
{
	return atomic_load(&n->pending) < n->max_pending;
}

/* Wraps what encoded holds (a Frame, or a Batch entry) into a Published message. */
static struct nmsg *wrap(struct rt_nats *n, const char *subject, unsigned int cpu,
			 Ringtap__Published__MsgCase kind, bool delimited)
{
	struct rt_published_head h = {
		.boot_id = n->host->boot_id, .session = n->session, .cpu = cpu,
		.seq = cpu < n->ncpus ? n->cpus[cpu].seq : 0,
	};
	const uint8_t *inner;
	size_t len;

	n->packed.len = 0;
	if (rt_encode_inner(&n->scratch, delimited, &inner, &len) ||
	    rt_encode_published(&h, kind, inner, len, &n->packed))
		return NULL;
	return nmsg_new(subject, &n->packed);
}

/* Control messages are not dropped: their number is bounded by events and reconnects. */
static void send_welcome(struct rt_nats *n)
{
	struct nmsg *m;

	n->scratch.len = 0;
	if (rt_encode_welcome_frame(1, RINGTAP__ENCODING__DECODED, n->host, n->layout, &n->scratch))
		return;
	m = wrap(n, n->subject_hello, 0, RINGTAP__PUBLISHED__MSG_WELCOME, true);
	if (m)
		enqueue(n, m);
}

static int split_globs(const char *const *events, char ***out)
{
	size_t k = 0;
	char **g;

	while (events && events[k])
		k++;
	g = calloc(k + 1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	*out = g;
	for (size_t i = 0; i < k; i++)
		if (!(g[i] = strdup(events[i])))
			return -ENOMEM;
	return 0;
}

int rt_nats_new(struct rt_nats **out, const struct rt_nats_opts *o, const struct rt_host *host,
		const struct rt_layout *layout, unsigned int ncpus)
{
	struct rt_nats *n = calloc(1, sizeof(*n));
	struct timespec now;
	int ret;

	if (!n)
		return -ENOMEM;
	*out = n;
	pthread_mutex_init(&n->lock, NULL);
	pthread_cond_init(&n->wake, NULL);
	n->tail = &n->head;
	n->page_tail = &n->page_head;
	n->layout = layout;
	n->host = host;
	n->ncpus = ncpus;
	n->max_pending = o->max_pending;
	n->logged_state = CONN_WAITING;
	clock_gettime(CLOCK_REALTIME, &now);
	n->session = (uint64_t)now.tv_sec * 1000000000 + (uint64_t)now.tv_nsec;
	token(n->host_token, sizeof(n->host_token), host->hostname);
	n->cpus = calloc(ncpus, sizeof(*n->cpus));
	n->url = strdup(o->url);
	n->stream = strdup(o->stream);
	if (!n->cpus || !n->url || !n->stream || split_globs(o->events, &n->globs) ||
	    asprintf(&n->subject_lost, "ringtap.%s._lost", n->host_token) < 0 ||
	    asprintf(&n->subject_hello, "ringtap.%s._hello", n->host_token) < 0 ||
	    asprintf(&n->subject_all, "ringtap.%s.>", n->host_token) < 0)
		return -ENOMEM;
	send_welcome(n);
	ret = connect_nats(n, o);
	if (ret)
		return ret;
	ret = -pthread_create(&n->thread, NULL, publisher, n);
	if (ret)
		return ret;
	n->have_thread = true;
	return 0;
}

static struct nevent *event_slot(struct rt_nats *n, const struct tep_event *ev)
{
	size_t id = (size_t)ev->id;
	struct nevent *e;

	if (id >= n->n_events) {
		size_t more = id + 64;
		struct nevent *ne = realloc(n->events, more * sizeof(*ne));

		if (!ne)
			return NULL;
		memset(ne + n->n_events, 0, (more - n->n_events) * sizeof(*ne));
		n->events = ne;
		n->n_events = more;
	}
	e = &n->events[id];
	if (!e->state) {
		char sys[64], name[128];
		bool match = false;

		for (char **g = n->globs; *g && !match; g++)
			match = rt_glob_match(*g, ev->system, ev->name);
		e->state = match ? 1 : 2;
		token(sys, sizeof(sys), ev->system);
		token(name, sizeof(name), ev->name);
		if (match && asprintf(&e->subject, "ringtap.%s.%s.%s", n->host_token, sys, name) < 0) {
			e->subject = NULL;
			e->state = 0;
			return NULL;
		}
	}
	return e;
}

/* Schemas go on the event's own subject, so that a consumer of one event gets its Schema. */
static int send_schema(struct rt_nats *n, struct nevent *e, const struct tep_event *ev,
		       unsigned int cpu)
{
	struct nmsg *m;

	n->scratch.len = 0;
	if (rt_encode_schema_frame(ev, NULL, NULL, NULL, &n->scratch))
		return -ENOMEM;
	m = wrap(n, e->subject, cpu, RINGTAP__PUBLISHED__MSG_SCHEMA, true);
	if (!m)
		return -ENOMEM;
	enqueue(n, m);
	e->schema_sent = true;
	return 0;
}

static bool owed(const struct ncpu *c)
{
	return c->kernel.count || c->dropped.count;
}

/* The CPU's owed reports, kernel's first; false when there is no room for them yet. */
static bool flush_losses(struct rt_nats *n, unsigned int cpu)
{
	struct ncpu *c = &n->cpus[cpu];
	struct {
		struct rt_loss *l;
		Ringtap__LossSource source;
	} kinds[] = {
		{ &c->kernel, RINGTAP__LOSS_SOURCE__KERNEL },
		{ &c->dropped, RINGTAP__LOSS_SOURCE__QUEUE },
	};

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		struct nmsg *m;

		if (!kinds[i].l->count)
			continue;
		if (!room(n))
			return false;
		n->scratch.len = 0;
		if (rt_encode_lost_frame(cpu, kinds[i].source, kinds[i].l, &n->scratch))
			return false;
		m = wrap(n, n->subject_lost, cpu, RINGTAP__PUBLISHED__MSG_LOST, true);
		if (!m)
			return false;
		enqueue(n, m);
		memset(kinds[i].l, 0, sizeof(*kinds[i].l));
	}
	return true;
}

static void drop(struct rt_nats *n, unsigned int cpu, uint64_t count, uint64_t ts)
{
	struct rt_loss *l = &n->cpus[cpu].dropped;

	if (!l->count)
		l->first_ts = ts;
	l->count += count;
	l->last_ts = ts;
	l->exact = true;
	n->dropped += count;
}

static void refresh(struct rt_nats *n)
{
	unsigned int r = atomic_load(&n->reconnects);
	bool resend = atomic_exchange(&n->resend, false);

	if (r == n->seen_reconnects && !resend)
		return;
	n->seen_reconnects = r;
	for (size_t i = 0; i < n->n_events; i++)
		n->events[i].schema_sent = false;
	send_welcome(n);
}

void rt_nats_record(struct rt_nats *n, const struct rt_record *rec)
{
	struct nevent *e;
	struct nmsg *m;
	struct ncpu *c;

	if (!rec->event || rec->cpu >= n->ncpus)
		return;
	e = event_slot(n, rec->event);
	if (!e || e->state != 1)
		return;
	c = &n->cpus[rec->cpu];
	refresh(n);
	m = NULL;
	if (e->schema_sent || !send_schema(n, e, rec->event, rec->cpu)) {
		n->scratch.len = 0;
		if (!rt_encode_record(rec, n->layout, false, NULL, &n->scratch))
			m = wrap(n, e->subject, rec->cpu, RINGTAP__PUBLISHED__MSG_RECORD, false);
	}
	c->seq++;
	if (!m) {
		drop(n, rec->cpu, 1, rec->timestamp);
		return;
	}
	/* Kept to the page's end: its kernel loss report comes first. */
	m->ts = rec->timestamp;
	n->page_cpu = rec->cpu;
	*n->page_tail = m;
	n->page_tail = &m->next;
}

void rt_nats_kernel_loss(struct rt_nats *n, unsigned int cpu, uint64_t count, bool exact,
			 uint64_t before_ts)
{
	struct rt_loss *l;

	if (cpu >= n->ncpus)
		return;
	l = &n->cpus[cpu].kernel;
	/* An unknown count means "at least one", as a subscriber is told. */
	l->exact = (!l->count || l->exact) && exact;
	l->count += exact ? count : (count ? count : 1);
	l->last_ts = before_ts;
}

void rt_nats_end_page(struct rt_nats *n)
{
	struct nmsg *m = n->page_head;

	n->page_head = NULL;
	n->page_tail = &n->page_head;
	for (unsigned int cpu = 0; cpu < n->ncpus; cpu++)
		if (owed(&n->cpus[cpu]) && (!m || cpu != n->page_cpu))
			flush_losses(n, cpu);
	while (m) {
		struct nmsg *next = m->next;
		struct ncpu *c = &n->cpus[n->page_cpu];

		m->next = NULL;
		if ((!owed(c) || flush_losses(n, n->page_cpu)) && room(n)) {
			enqueue(n, m);
			n->records++;
		} else {
			drop(n, n->page_cpu, 1, m->ts);
			free(m);
		}
		m = next;
	}
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

void rt_nats_poll(struct rt_nats *n)
{
	enum conn_state st = (enum conn_state)atomic_load(&n->state);

	for (unsigned int cpu = 0; cpu < n->ncpus; cpu++) {
		uint64_t failed = atomic_exchange(&n->cpus[cpu].failed, 0);

		if (failed) {
			drop(n, cpu, failed, 0);
			n->dropped -= failed;
			n->failed += failed;
		}
	}
	refresh(n);
	for (unsigned int cpu = 0; cpu < n->ncpus; cpu++)
		if (owed(&n->cpus[cpu]))
			flush_losses(n, cpu);
	if (st == n->logged_state)
		return;
	n->logged_state = st;
	pthread_mutex_lock(&n->lock);
	if (st == CONN_READY)
		rt_log(LOG_NOTICE, "NATS %s: publishing to stream %s on %s", n->url, n->stream,
		       n->subject_all);
	else
		rt_log(st == CONN_STREAM_FAILED ? LOG_ERR : LOG_WARNING, "NATS %s: %s%s%s", n->url,
		       state_text(st), *n->why ? ": " : "", n->why);
	pthread_mutex_unlock(&n->lock);
}

bool rt_nats_drained(struct rt_nats *n)
{
	for (unsigned int cpu = 0; cpu < n->ncpus; cpu++)
		if (owed(&n->cpus[cpu]) || atomic_load(&n->cpus[cpu].failed))
			return false;
	return atomic_load(&n->pending) == 0;
}

void rt_nats_get_stats(struct rt_nats *n, struct rt_nats_stats *st)
{
	*st = (struct rt_nats_stats){
		.records = n->records,
		.acked = atomic_load(&n->acked),
		.dropped = n->dropped,
		.failed = n->failed,
		.pending = atomic_load(&n->pending),
	};
	for (unsigned int cpu = 0; cpu < n->ncpus; cpu++)
		st->unreported += n->cpus[cpu].dropped.count + atomic_load(&n->cpus[cpu].failed);
}

static void free_list(struct nmsg *m)
{
	while (m) {
		struct nmsg *next = m->next;

		free(m);
		m = next;
	}
}

void rt_nats_free(struct rt_nats *n)
{
	if (!n)
		return;
	if (n->have_thread) {
		pthread_mutex_lock(&n->lock);
		n->stop = true;
		pthread_cond_signal(&n->wake);
		pthread_mutex_unlock(&n->lock);
		pthread_join(n->thread, NULL);
	}
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
	free_list(n->head);
	free_list(n->page_head);
	for (size_t i = 0; i < n->n_events; i++)
		free(n->events[i].subject);
	free(n->events);
	rt_strv_free(n->globs);
	free(n->cpus);
	free(n->url);
	free(n->stream);
	free(n->subject_lost);
	free(n->subject_hello);
	free(n->subject_all);
	rt_buf_free(&n->scratch);
	rt_buf_free(&n->packed);
	pthread_cond_destroy(&n->wake);
	pthread_mutex_destroy(&n->lock);
	free(n);
	/* libnats' own threads and memory, so that memcheck sees ours alone. */
	nats_CloseAndWait(1000);
}
