// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "layout.h"
#include "msgid.h"
#include "publish.h"
#include "glob.h"
#include "util.h"

struct pub_event {
	uint8_t state;		/* 0: not looked at, 1: published, 2: not */
	bool schema_sent;	/* since the last Welcome */
	size_t part;		/* 1 + its part of the page being read, 0: none yet */
	size_t bpart;		/* 1 + its part of the batch held, 0: none */
	char *subject;
};

/* One event's records of the page being read: one message at the page's end. */
struct pub_part {
	struct pub_event *event;
	struct rt_buf records;	/* PublishedRecords.records entries */
	struct rt_buf raw;	/* PublishedRecords.raw entries */
	uint32_t *offsets;	/* each one's number less the page's first */
	size_t n, cap;
	uint64_t last_ts;	/* for a drop's report */
};

struct pub_cpu {
	uint64_t seq;		/* records offered on this CPU, published or not */
	uint64_t kernel_reports;	/* KERNEL Lost messages: their ids' numbers */
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
	struct pub_part *parts;	/* of the page being read, in the order its events came */
	size_t n_parts, parts_cap;
	bool page_open;
	unsigned int page_cpu;
	uint64_t page_seq;	/* the page's CPU's count before it */
	/*
	 * Pages of one CPU whose parts are held together, a message per event,
	 * until the drain ends or a message would pass max_message bytes.
	 */
	size_t max_message;	/* 0: a page a message */
	struct pub_part *batch;
	size_t n_batch, batch_cap, batch_bytes;
	unsigned int batch_cpu;
	uint64_t batch_seq;	/* the batch's first page's CPU count */
	uint64_t control;	/* Welcome, Schema and Lost messages: their ids' numbers */
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

static struct rt_pub_msg *msg_new(const char *subject, const char *id, const struct rt_buf *b)
{
	size_t sl = strlen(subject) + 1, il = strlen(id) + 1;
	struct rt_pub_msg *m = malloc(sizeof(*m) + b->len + sl + il);

	if (!m)
		return NULL;
	m->next = NULL;
	m->ts = 0;
	m->order = 0;
	m->len = b->len;
	memcpy(m->data, b->data, b->len);
	memcpy(m->data + b->len, subject, sl);
	memcpy(m->data + b->len + sl, id, il);
	m->subject = (const char *)m->data + b->len;
	m->id = m->subject + sl;
	return m;
}

/* Published.seq and the id's number differ for records: the page's start, its first record. */
static struct rt_pub_msg *publish_msg(struct rt_publisher *p, const char *subject, unsigned int cpu,
				      uint64_t seq, Ringtap__Published__MsgCase kind,
				      const uint8_t *inner, size_t len, enum rt_msg_id_kind id_kind,
				      uint64_t id_seq)
{
	struct rt_published_head h = {
		.boot_id = p->host->boot_id, .session = p->session, .cpu = cpu, .seq = seq,
	};
	struct rt_msg_id mid = {
		.host = p->host_token, .boot_id = p->host->boot_id, .session = p->session,
		.cpu = cpu, .kind = id_kind, .seq = id_seq,
	};
	char id[RT_PUB_MSG_ID_MAX];

	p->packed.len = 0;
	if (rt_msg_id_format(id, sizeof(id), &mid) < 0 ||
	    rt_encode_published(&h, kind, inner, len, &p->packed))
		return NULL;
	return msg_new(subject, id, &p->packed);
}

static bool room(struct rt_publisher *p)
{
	return p->sink.room(p->sink.ctx);
}

/*
 * Wraps the Frame scratch holds (a Welcome, Schema or Lost) into a Published
 * message. A kernel loss is numbered on its CPU: the pages it stands before
 * give it the same id when a run after a crash publishes them again.
 */
static struct rt_pub_msg *wrap(struct rt_publisher *p, const char *subject, unsigned int cpu,
			       Ringtap__Published__MsgCase kind, bool kernel_loss)
{
	const uint8_t *inner;
	size_t len;

	if (rt_encode_inner(&p->scratch, true, &inner, &len))
		return NULL;
	return publish_msg(p, subject, cpu, cpu < p->ncpus ? p->cpus[cpu].seq : 0, kind, inner,
			   len, kernel_loss ? RT_MSG_ID_KERNEL : RT_MSG_ID_CONTROL,
			   kernel_loss ? p->cpus[cpu].kernel_reports++ : p->control++);
}

static void send_batch(struct rt_publisher *p);

void rt_publisher_welcome(struct rt_publisher *p)
{
	struct rt_pub_msg *m = NULL;

	/* What is held goes to the stream its Schemas went to. */
	send_batch(p);
	for (size_t i = 0; i < p->n_events; i++)
		p->events[i].schema_sent = false;
	/* Control messages are not dropped: their number is bounded by events and reconnects. */
	p->scratch.len = 0;
	if (!rt_encode_welcome_frame(1, RINGTAP__ENCODING__DECODED, p->host, p->layout,
				     &p->scratch))
		m = wrap(p, p->subject_hello, 0, RINGTAP__PUBLISHED__MSG_WELCOME, false);
	if (m)
		p->sink.send(p->sink.ctx, m);
}

int rt_publisher_new(struct rt_publisher **out, const struct rt_host *host, uint64_t session,
		     const struct rt_layout *layout, const char *const *globs, unsigned int ncpus,
		     const struct rt_publisher_sink *sink)
{
	return rt_publisher_new_from(out, host, &(struct rt_publisher_from){ .session = session },
				     layout, globs, ncpus, sink);
}

int rt_publisher_new_from(struct rt_publisher **out, const struct rt_host *host,
			  const struct rt_publisher_from *from, const struct rt_layout *layout,
			  const char *const *globs, unsigned int ncpus,
			  const struct rt_publisher_sink *sink)
{
	struct rt_publisher *p = calloc(1, sizeof(*p));
	size_t n = 0;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->layout = layout;
	p->host = host;
	p->sink = *sink;
	p->session = from->session;
	p->control = from->control;
	p->ncpus = ncpus;
	token(p->host_token, sizeof(p->host_token), host->hostname);
	while (globs && globs[n])
		n++;
	p->cpus = calloc(ncpus, sizeof(*p->cpus));
	p->globs = calloc(n + 1, sizeof(*p->globs));
	for (size_t i = 0; p->globs && i < n; i++)
		if (!(p->globs[i] = strdup(globs[i])))
			goto fail;
	for (unsigned int cpu = 0; p->cpus && from->places && cpu < ncpus; cpu++) {
		p->cpus[cpu].seq = from->places[cpu].seq;
		p->cpus[cpu].kernel_reports = from->places[cpu].kernel_reports;
	}
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
	for (size_t i = 0; i < p->parts_cap; i++) {
		rt_buf_free(&p->parts[i].records);
		rt_buf_free(&p->parts[i].raw);
		free(p->parts[i].offsets);
	}
	free(p->parts);
	for (size_t i = 0; i < p->batch_cap; i++) {
		rt_buf_free(&p->batch[i].records);
		rt_buf_free(&p->batch[i].raw);
		free(p->batch[i].offsets);
	}
	free(p->batch);
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
	/* The format text too: a collector's trace.dat needs it. */
	if (rt_encode_schema_frame(ev, NULL, rt_layout_format(p->layout, ev->id), NULL,
				   &p->scratch))
		return -ENOMEM;
	m = wrap(p, e->subject, cpu, RINGTAP__PUBLISHED__MSG_SCHEMA, false);
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
		/*
		 * A kernel loss goes whatever the room, a message per page it
		 * stands before: its id's number (the CPU's count of them) is
		 * then the same in a run after a crash that publishes the
		 * pages again, whatever room either run had.
		 */
		if (kinds[i].source != RINGTAP__LOSS_SOURCE__KERNEL && !room(p))
			return false;
		p->scratch.len = 0;
		if (rt_encode_lost_frame(cpu, kinds[i].source, kinds[i].l, &p->scratch))
			return false;
		m = wrap(p, p->subject_lost, cpu, RINGTAP__PUBLISHED__MSG_LOST,
			 kinds[i].source == RINGTAP__LOSS_SOURCE__KERNEL);
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

/* The event's part in parts (the page's or the batch's; *index its 1 + index), made if new. */
static struct pub_part *get_part(struct pub_part **parts, size_t *n, size_t *cap,
				 struct pub_event *e, size_t *index)
{
	struct pub_part *part;

	if (*index)
		return &(*parts)[*index - 1];
	if (*n == *cap) {
		size_t more = *cap ? 2 * *cap : 8;
		struct pub_part *grown = realloc(*parts, more * sizeof(*grown));

		if (!grown)
			return NULL;
		memset(grown + *cap, 0, (more - *cap) * sizeof(*grown));
		*parts = grown;
		*cap = more;
	}
	part = &(*parts)[(*n)++];
	part->event = e;
	part->records.len = 0;
	part->raw.len = 0;
	part->n = 0;
	*index = *n;
	return part;
}

static struct pub_part *page_part(struct rt_publisher *p, struct pub_event *e)
{
	return get_part(&p->parts, &p->n_parts, &p->parts_cap, e, &e->part);
}

static int part_room(struct pub_part *part, size_t n)
{
	if (part->n + n > part->cap) {
		size_t cap = part->cap ? part->cap : 64;
		uint32_t *grown;

		while (cap < part->n + n)
			cap *= 2;
		grown = realloc(part->offsets, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		part->offsets = grown;
		part->cap = cap;
	}
	return 0;
}

static int part_put(struct rt_publisher *p, struct pub_event *e, const struct rt_record *rec,
		    uint32_t offset)
{
	struct pub_part *part = page_part(p, e);
	size_t len, raw;

	if (!part || part_room(part, 1))
		return -ENOMEM;
	len = part->records.len;
	raw = part->raw.len;
	if (rt_record_encoder_put(p->encoder, rec, &part->records) ||
	    rt_buf_put_varint(&part->raw, (3 << 3) | 2) ||
	    rt_buf_put_varint(&part->raw, rec->size) ||
	    rt_buf_put(&part->raw, rec->data, rec->size)) {
		part->records.len = len;
		part->raw.len = raw;
		return -ENOMEM;
	}
	part->offsets[part->n++] = offset;
	part->last_ts = rec->timestamp;
	return 0;
}

void rt_publisher_record(struct rt_publisher *p, const struct rt_record *rec)
{
	struct pub_event *e;
	struct pub_cpu *c;
	bool kept;

	if (!rec->event || rec->cpu >= p->ncpus)
		return;
	e = event_slot(p, rec->event);
	if (!e || e->state != 1)
		return;
	/* A page is one CPU's: another CPU's record ends the one before. */
	if (p->page_open && rec->cpu != p->page_cpu)
		rt_publisher_end_page(p);
	c = &p->cpus[rec->cpu];
	if (!p->page_open) {
		p->page_open = true;
		p->page_cpu = rec->cpu;
		p->page_seq = c->seq;
	}
	/* Kept to the page's end: its kernel loss report comes first. */
	kept = (e->schema_sent || !send_schema(p, e, rec->event, rec->cpu)) &&
	       c->seq - p->page_seq <= UINT32_MAX &&
	       !part_put(p, e, rec, (uint32_t)(c->seq - p->page_seq));
	c->seq++;
	if (!kept)
		drop(p, rec->cpu, 1, rec->timestamp);
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

/* A part's message: PublishedRecords, its records as they are, the packed offsets, the raw ones. */
static struct rt_pub_msg *part_msg(struct rt_publisher *p, const struct pub_part *part,
				   unsigned int cpu, uint64_t seq)
{
	size_t packed = 0;

	for (size_t i = 0; i < part->n; i++) {
		uint32_t v = part->offsets[i];

		do
			packed++;
		while (v >>= 7);
	}
	p->scratch.len = 0;
	if (rt_buf_put(&p->scratch, part->records.data, part->records.len) ||
	    rt_buf_put_varint(&p->scratch, (1 << 3) | 2) ||
	    rt_buf_put_varint(&p->scratch, packed))
		return NULL;
	for (size_t i = 0; i < part->n; i++)
		if (rt_buf_put_varint(&p->scratch, part->offsets[i]))
			return NULL;
	if (rt_buf_put(&p->scratch, part->raw.data, part->raw.len))
		return NULL;
	return publish_msg(p, part->event->subject, cpu, seq, RINGTAP__PUBLISHED__MSG_RECORDS,
			   p->scratch.data, p->scratch.len, RT_MSG_ID_RECORDS,
			   seq + part->offsets[0]);
}

/* A part's message, or its records dropped; losses owed on its CPU go first (check_losses). */
static void send_part(struct rt_publisher *p, struct pub_part *part, unsigned int cpu, uint64_t seq,
		      bool check_losses)
{
	struct rt_pub_msg *m = NULL;

	if ((!check_losses || !owed(&p->cpus[cpu]) || flush_losses(p, cpu)) && room(p))
		m = part_msg(p, part, cpu, seq);
	if (m) {
		m->ts = part->last_ts;
		p->sink.send(p->sink.ctx, m);
		p->records += part->n;
	} else {
		drop(p, cpu, part->n, part->last_ts);
	}
}

/* The batch held, a message per event; its CPU's losses since came after it. */
static void send_batch(struct rt_publisher *p)
{
	for (size_t i = 0; i < p->n_batch; i++) {
		send_part(p, &p->batch[i], p->batch_cpu, p->batch_seq, false);
		p->batch[i].event->bpart = 0;
	}
	p->n_batch = 0;
	p->batch_bytes = 0;
}

/* A page's part into the batch, its numbers counted from the batch's first page. */
static int batch_put(struct rt_publisher *p, const struct pub_part *part)
{
	struct pub_part *b = get_part(&p->batch, &p->n_batch, &p->batch_cap, part->event,
				      &part->event->bpart);
	uint64_t shift = p->page_seq - p->batch_seq;
	size_t len, raw;

	if (!b || part_room(b, part->n) || shift + part->offsets[part->n - 1] > UINT32_MAX)
		return -ENOMEM;
	len = b->records.len;
	raw = b->raw.len;
	if (rt_buf_put(&b->records, part->records.data, part->records.len) ||
	    rt_buf_put(&b->raw, part->raw.data, part->raw.len)) {
		b->records.len = len;
		b->raw.len = raw;
		return -ENOMEM;
	}
	for (size_t i = 0; i < part->n; i++)
		b->offsets[b->n++] = (uint32_t)(shift + part->offsets[i]);
	b->last_ts = part->last_ts;
	if (b->records.len + b->raw.len + 5 * b->n > p->batch_bytes)
		p->batch_bytes = b->records.len + b->raw.len + 5 * b->n;
	return 0;
}

void rt_publisher_end_page(struct rt_publisher *p)
{
	unsigned int cpu = p->page_cpu;
	size_t first = 0;	/* parts before it went into the batch */

	/* Another CPU's pages, or this one's before a loss, go before what follows. */
	if (p->n_batch && (p->batch_cpu != cpu || owed(&p->cpus[cpu])))
		send_batch(p);
	for (unsigned int i = 0; i < p->ncpus; i++)
		if (owed(&p->cpus[i]) && (!p->n_parts || i != cpu))
			flush_losses(p, i);
	if (p->max_message && p->n_parts && (!owed(&p->cpus[cpu]) || flush_losses(p, cpu))) {
		size_t k = 0;

		if (!p->n_batch) {
			p->batch_cpu = cpu;
			p->batch_seq = p->page_seq;
		}
		while (k < p->n_parts && !batch_put(p, &p->parts[k]))
			p->parts[k++].event->part = 0;
		/* Out of memory or numbers: the batch goes, then the page's other parts. */
		if (k < p->n_parts || p->batch_bytes >= p->max_message)
			send_batch(p);
		first = k;
	}
	for (size_t i = first; i < p->n_parts; i++) {
		send_part(p, &p->parts[i], cpu, p->page_seq, true);
		p->parts[i].event->part = 0;
	}
	p->n_parts = 0;
	p->page_open = false;
}

void rt_publisher_end_drain(struct rt_publisher *p)
{
	if (p->page_open)
		rt_publisher_end_page(p);
	send_batch(p);
}

void rt_publisher_set_max_message(struct rt_publisher *p, size_t bytes)
{
	send_batch(p);
	p->max_message = bytes;
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
	} else if (m->msg_case == RINGTAP__PUBLISHED__MSG_RECORDS) {
		*records = m->records->n_offsets;
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

void rt_publisher_place(const struct rt_publisher *p, unsigned int cpu, struct rt_pub_place *at)
{
	at->seq = p->cpus[cpu].seq;
	at->kernel_reports = p->cpus[cpu].kernel_reports;
}

uint64_t rt_publisher_session(const struct rt_publisher *p)
{
	return p->session;
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
