// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "layout.h"
#include "publish.h"
#include "glob.h"
#include "util.h"

struct pub_event {
	uint8_t state;		/* 0: not looked at, 1: published, 2: not */
	bool schema_sent;	/* since the last Welcome */
	char *subject;
};

struct pub_cpu {
	uint64_t seq;		/* records offered on this CPU, published or not */
	struct rt_loss kernel, dropped;	/* owed a report */
};

struct rt_publisher {
	const struct rt_layout *layout;
	const struct rt_host *host;
	struct rt_publisher_sink sink;
	char **globs;
	char host_token[64];
	char *subject_lost, *subject_hello, *subject_all;
	uint64_t session;
	unsigned int ncpus;
	struct pub_cpu *cpus;
	struct pub_event *events;	/* by kernel event id */
	size_t n_events;
	struct rt_pub_msg *page_head, **page_tail;
	unsigned int page_cpu;
	struct rt_buf scratch, packed;
	struct rt_record_encoder *encoder;	/* records as the socket's DECODED sends them */
	uint64_t records, dropped, failed;
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

static struct rt_pub_msg *msg_new(const char *subject, const struct rt_buf *b)
{
	size_t sl = strlen(subject) + 1;
	struct rt_pub_msg *m = malloc(sizeof(*m) + b->len + sl);

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

static bool room(struct rt_publisher *p)
{
	return p->sink.room(p->sink.ctx);
}

/* Wraps what scratch holds (a Frame, or a Batch entry) into a Published message. */
static struct rt_pub_msg *wrap(struct rt_publisher *p, const char *subject, unsigned int cpu,
			       Ringtap__Published__MsgCase kind, bool delimited)
{
	struct rt_published_head h = {
		.boot_id = p->host->boot_id, .session = p->session, .cpu = cpu,
		.seq = cpu < p->ncpus ? p->cpus[cpu].seq : 0,
	};
	const uint8_t *inner;
	size_t len;

	p->packed.len = 0;
	if (rt_encode_inner(&p->scratch, delimited, &inner, &len) ||
	    rt_encode_published(&h, kind, inner, len, &p->packed))
		return NULL;
	return msg_new(subject, &p->packed);
}

void rt_publisher_welcome(struct rt_publisher *p)
{
	struct rt_pub_msg *m = NULL;

	for (size_t i = 0; i < p->n_events; i++)
		p->events[i].schema_sent = false;
	/* Control messages are not dropped: their number is bounded by events and reconnects. */
	p->scratch.len = 0;
	if (!rt_encode_welcome_frame(1, RINGTAP__ENCODING__DECODED, p->host, p->layout,
				     &p->scratch))
		m = wrap(p, p->subject_hello, 0, RINGTAP__PUBLISHED__MSG_WELCOME, true);
	if (m)
		p->sink.send(p->sink.ctx, m);
}

int rt_publisher_new(struct rt_publisher **out, const struct rt_host *host, uint64_t session,
		     const struct rt_layout *layout, const char *const *globs, unsigned int ncpus,
		     const struct rt_publisher_sink *sink)
{
	struct rt_publisher *p = calloc(1, sizeof(*p));
	size_t n = 0;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->page_tail = &p->page_head;
	p->layout = layout;
	p->host = host;
	p->sink = *sink;
	p->session = session;
	p->ncpus = ncpus;
	token(p->host_token, sizeof(p->host_token), host->hostname);
	while (globs && globs[n])
		n++;
	p->cpus = calloc(ncpus, sizeof(*p->cpus));
	p->globs = calloc(n + 1, sizeof(*p->globs));
	for (size_t i = 0; p->globs && i < n; i++)
		if (!(p->globs[i] = strdup(globs[i])))
			goto fail;
	if (!p->cpus || !p->globs || rt_record_encoder_new(&p->encoder, layout, false, NULL) ||
	    asprintf(&p->subject_lost, "ringtap.%s._lost", p->host_token) < 0 ||
	    asprintf(&p->subject_hello, "ringtap.%s._hello", p->host_token) < 0 ||
	    asprintf(&p->subject_all, "ringtap.%s.>", p->host_token) < 0)
		goto fail;
	rt_publisher_welcome(p);
	*out = p;
	return 0;
fail:
	rt_publisher_free(p);
	return -ENOMEM;
}

void rt_pub_msg_free_list(struct rt_pub_msg *m)
{
	while (m) {
		struct rt_pub_msg *next = m->next;

		free(m);
		m = next;
	}
}

void rt_publisher_free(struct rt_publisher *p)
{
	if (!p)
		return;
	rt_pub_msg_free_list(p->page_head);
	for (size_t i = 0; i < p->n_events; i++)
		free(p->events[i].subject);
	free(p->events);
	rt_strv_free(p->globs);
	free(p->cpus);
	free(p->subject_lost);
	free(p->subject_hello);
	free(p->subject_all);
	rt_buf_free(&p->scratch);
	rt_buf_free(&p->packed);
	rt_record_encoder_free(p->encoder);
	free(p);
}

const char *rt_publisher_subjects(const struct rt_publisher *p)
{
	return p->subject_all;
}

static struct pub_event *event_slot(struct rt_publisher *p, const struct tep_event *ev)
{
	size_t id = (size_t)ev->id;
	struct pub_event *e;

	if (id >= p->n_events) {
		size_t more = id + 64;
		struct pub_event *grown = realloc(p->events, more * sizeof(*grown));

		if (!grown)
			return NULL;
		memset(grown + p->n_events, 0, (more - p->n_events) * sizeof(*grown));
		p->events = grown;
		p->n_events = more;
	}
	e = &p->events[id];
	if (!e->state) {
		char sys[64], name[128];
		bool match = false;

		for (char **g = p->globs; *g && !match; g++)
			match = rt_glob_match(*g, ev->system, ev->name);
		e->state = match ? 1 : 2;
		token(sys, sizeof(sys), ev->system);
		token(name, sizeof(name), ev->name);
		if (match && asprintf(&e->subject, "ringtap.%s.%s.%s", p->host_token, sys, name) < 0) {
			e->subject = NULL;
			e->state = 0;
			return NULL;
		}
	}
	return e;
}

/* Schemas go on the event's own subject, so that a consumer of one event gets its Schema. */
static int send_schema(struct rt_publisher *p, struct pub_event *e, const struct tep_event *ev,
		       unsigned int cpu)
{
	struct rt_pub_msg *m;

	p->scratch.len = 0;
	if (rt_encode_schema_frame(ev, NULL, NULL, NULL, &p->scratch))
		return -ENOMEM;
	m = wrap(p, e->subject, cpu, RINGTAP__PUBLISHED__MSG_SCHEMA, true);
	if (!m)
		return -ENOMEM;
	p->sink.send(p->sink.ctx, m);
	e->schema_sent = true;
	return 0;
}

static bool owed(const struct pub_cpu *c)
{
	return c->kernel.count || c->dropped.count;
}

/* The CPU's owed reports, kernel's first; false when there is no room for them yet. */
static bool flush_losses(struct rt_publisher *p, unsigned int cpu)
{
	struct pub_cpu *c = &p->cpus[cpu];
	struct {
		struct rt_loss *l;
		Ringtap__LossSource source;
	} kinds[] = {
		{ &c->kernel, RINGTAP__LOSS_SOURCE__KERNEL },
		{ &c->dropped, RINGTAP__LOSS_SOURCE__QUEUE },
	};

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		struct rt_pub_msg *m;

		if (!kinds[i].l->count)
			continue;
		if (!room(p))
			return false;
		p->scratch.len = 0;
		if (rt_encode_lost_frame(cpu, kinds[i].source, kinds[i].l, &p->scratch))
			return false;
		m = wrap(p, p->subject_lost, cpu, RINGTAP__PUBLISHED__MSG_LOST, true);
		if (!m)
			return false;
		p->sink.send(p->sink.ctx, m);
		memset(kinds[i].l, 0, sizeof(*kinds[i].l));
	}
	return true;
}

static void drop(struct rt_publisher *p, unsigned int cpu, uint64_t count, uint64_t ts)
{
	struct rt_loss *l = &p->cpus[cpu].dropped;

	if (!l->count)
		l->first_ts = ts;
	l->count += count;
	l->last_ts = ts;
	l->exact = true;
	p->dropped += count;
}

void rt_publisher_record(struct rt_publisher *p, const struct rt_record *rec)
{
	struct pub_event *e;
	struct rt_pub_msg *m = NULL;

	if (!rec->event || rec->cpu >= p->ncpus)
		return;
	e = event_slot(p, rec->event);
	if (!e || e->state != 1)
		return;
	if (e->schema_sent || !send_schema(p, e, rec->event, rec->cpu)) {
		p->scratch.len = 0;
		if (!rt_record_encoder_put(p->encoder, rec, &p->scratch))
			m = wrap(p, e->subject, rec->cpu, RINGTAP__PUBLISHED__MSG_RECORD, false);
	}
	p->cpus[rec->cpu].seq++;
	if (!m) {
		drop(p, rec->cpu, 1, rec->timestamp);
		return;
	}
	/* Kept to the page's end: its kernel loss report comes first. */
	m->ts = rec->timestamp;
	p->page_cpu = rec->cpu;
	*p->page_tail = m;
	p->page_tail = &m->next;
}

void rt_publisher_kernel_loss(struct rt_publisher *p, unsigned int cpu, uint64_t count, bool exact,
			      uint64_t after_ts, uint64_t before_ts)
{
	struct rt_loss *l;

	if (cpu >= p->ncpus)
		return;
	l = &p->cpus[cpu].kernel;
	if (!l->count)
		l->first_ts = after_ts;
	/* An unknown count means "at least one", as a subscriber is told. */
	l->exact = (!l->count || l->exact) && exact;
	l->count += exact ? count : (count ? count : 1);
	l->last_ts = before_ts;
}

void rt_publisher_end_page(struct rt_publisher *p)
{
	struct rt_pub_msg *m = p->page_head;

	p->page_head = NULL;
	p->page_tail = &p->page_head;
	for (unsigned int cpu = 0; cpu < p->ncpus; cpu++)
		if (owed(&p->cpus[cpu]) && (!m || cpu != p->page_cpu))
			flush_losses(p, cpu);
	while (m) {
		struct rt_pub_msg *next = m->next;
		struct pub_cpu *c = &p->cpus[p->page_cpu];

		m->next = NULL;
		if ((!owed(c) || flush_losses(p, p->page_cpu)) && room(p)) {
			p->sink.send(p->sink.ctx, m);
			p->records++;
		} else {
			drop(p, p->page_cpu, 1, m->ts);
			free(m);
		}
		m = next;
	}
}

int rt_publisher_parse_failed(const uint8_t *data, size_t len, unsigned int *cpu,
			      uint64_t *records)
{
	Ringtap__Published *m = ringtap__published__unpack(NULL, len, data);
	int ret = 0;

	if (!m)
		return -EBADMSG;
	*cpu = m->cpu;
	*records = 0;
	ret = RT_PUB_FAILED_DESCRIPTION;
	if (m->msg_case == RINGTAP__PUBLISHED__MSG_RECORD) {
		*records = 1;
		ret = RT_PUB_FAILED_RECORD;
	} else if (m->msg_case == RINGTAP__PUBLISHED__MSG_LOST) {
		*records = m->lost->count;
		ret = RT_PUB_FAILED_REPORT;
	}
	ringtap__published__free_unpacked(m, NULL);
	return ret;
}

void rt_publisher_failed(struct rt_publisher *p, unsigned int cpu, uint64_t records)
{
	if (cpu >= p->ncpus || !records)
		return;
	/* Reported like a drop, counted apart: it had been handed over. */
	drop(p, cpu, records, 0);
	p->dropped -= records;
	p->failed += records;
}

void rt_publisher_report_again(struct rt_publisher *p, unsigned int cpu, uint64_t records)
{
	if (cpu >= p->ncpus || !records)
		return;
	drop(p, cpu, records, 0);
	p->dropped -= records;
}

void rt_publisher_flush(struct rt_publisher *p)
{
	for (unsigned int cpu = 0; cpu < p->ncpus; cpu++)
		if (owed(&p->cpus[cpu]))
			flush_losses(p, cpu);
}

bool rt_publisher_owes(const struct rt_publisher *p)
{
	for (unsigned int cpu = 0; cpu < p->ncpus; cpu++)
		if (owed(&p->cpus[cpu]))
			return true;
	return false;
}

void rt_publisher_get_stats(const struct rt_publisher *p, struct rt_publisher_stats *st)
{
	*st = (struct rt_publisher_stats){
		.records = p->records,
		.dropped = p->dropped,
		.failed = p->failed,
	};
	for (unsigned int cpu = 0; cpu < p->ncpus; cpu++)
		st->unreported += p->cpus[cpu].dropped.count;
}
