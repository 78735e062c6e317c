// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "subscriber.h"

struct rt_qframe {
	struct rt_qframe *next;
	size_t len;
	unsigned int cpu, records;	/* records: 0 for control frames */
	uint64_t first_ts, last_ts;
	/* A page held by reference: data is the frame's head (head_len bytes), then its tail. */
	struct rt_page_buf *page;
	size_t head_len, page_len;
	uint8_t data[];
};

struct rt_page_buf *rt_page_buf_new(size_t size)
{
	struct rt_page_buf *page = calloc(1, sizeof(*page));

	if (page && !(page->data = malloc(size ?: 1))) {
		free(page);
		return NULL;
	}
	if (page) {
		page->refs = 1;
		page->own = true;
	}
	return page;
}

struct rt_page_buf *rt_page_buf_wrap(uint8_t *data)
{
	struct rt_page_buf *page = calloc(1, sizeof(*page));

	if (page) {
		page->refs = 1;
		page->data = data;
	}
	return page;
}

int rt_page_buf_detach(struct rt_page_buf *page)
{
	uint8_t *copy;

	if (page->own)
		return 0;
	copy = malloc(page->len ?: 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, page->data, page->len);
	page->data = copy;
	page->own = true;
	return 0;
}

void rt_page_buf_put(struct rt_page_buf *page)
{
	if (!page || --page->refs)
		return;
	if (page->own)
		free(page->data);
	free(page);
}

static void free_frame(struct rt_qframe *f)
{
	rt_page_buf_put(f->page);
	free(f);
}

/* The frame's bytes in order: one piece, or its head, the shared page and its tail. */
static unsigned int frame_pieces(const struct rt_qframe *f, struct iovec *piece)
{
	if (!f->page) {
		piece[0] = (struct iovec){ (void *)f->data, f->len };
		return 1;
	}
	piece[0] = (struct iovec){ (void *)f->data, f->head_len };
	piece[1] = (struct iovec){ f->page->data, f->page_len };
	piece[2] = (struct iovec){ (void *)(f->data + f->head_len),
				   f->len - f->head_len - f->page_len };
	return 3;
}

int rt_subscriber_init(struct rt_subscriber *s, unsigned int ncpus, size_t max_queued)
{
	memset(s, 0, sizeof(*s));
	s->ncpus = ncpus;
	s->max_queued = max_queued;
	s->data_kind = RINGTAP__FRAME__MSG_BATCH;
	s->lost_kernel = calloc(ncpus, sizeof(*s->lost_kernel));
	s->lost_queue = calloc(ncpus, sizeof(*s->lost_queue));
	if (!s->lost_kernel || !s->lost_queue) {
		rt_subscriber_release(s);
		return -ENOMEM;
	}
	return 0;
}

void rt_subscriber_release(struct rt_subscriber *s)
{
	while (s->head) {
		struct rt_qframe *f = s->head;

		s->head = f->next;
		free_frame(f);
	}
	s->tail = NULL;
	free(s->events);
	free(s->schema_sent);
	free(s->cpus);
	free(s->pids);
	free(s->lost_kernel);
	free(s->lost_queue);
	rt_buf_free(&s->batch);
	s->events = s->schema_sent = NULL;
	s->cpus = NULL;
	s->pids = NULL;
	s->lost_kernel = s->lost_queue = NULL;
}

static bool bit(const uint8_t *map, unsigned int bits, unsigned int i)
{
	return i < bits && (map[i / 8] & (1u << (i % 8)));
}

static int grow_bitmaps(struct rt_subscriber *s, unsigned int id)
{
	unsigned int bits = (id / 64 + 1) * 64;
	uint8_t *e = realloc(s->events, bits / 8), *sent;

	if (!e)
		return -ENOMEM;
	s->events = e;
	sent = realloc(s->schema_sent, bits / 8);
	if (!sent)
		return -ENOMEM;
	s->schema_sent = sent;
	memset(e + s->events_bits / 8, 0, (bits - s->events_bits) / 8);
	memset(sent + s->events_bits / 8, 0, (bits - s->events_bits) / 8);
	s->events_bits = bits;
	return 0;
}

int rt_subscriber_select_event(struct rt_subscriber *s, unsigned int id)
{
	int ret;

	if (id >= s->events_bits && (ret = grow_bitmaps(s, id)))
		return ret;
	s->events[id / 8] |= 1u << (id % 8);
	return 0;
}

void rt_subscriber_clear_selection(struct rt_subscriber *s)
{
	if (s->events)
		memset(s->events, 0, s->events_bits / 8);
}

int rt_subscriber_select_cpus(struct rt_subscriber *s, const uint32_t *cpus, size_t n)
{
	free(s->cpus);
	s->cpus = NULL;
	if (!n)
		return 0;
	s->cpus = calloc(s->ncpus, sizeof(*s->cpus));
	if (!s->cpus)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (cpus[i] >= s->ncpus)
			return -EINVAL;
		s->cpus[cpus[i]] = true;
	}
	return 0;
}

int rt_subscriber_select_pids(struct rt_subscriber *s, const int32_t *pids, size_t n)
{
	free(s->pids);
	s->pids = NULL;
	s->n_pids = 0;
	if (!n)
		return 0;
	s->pids = malloc(n * sizeof(*pids));
	if (!s->pids)
		return -ENOMEM;
	memcpy(s->pids, pids, n * sizeof(*pids));
	s->n_pids = n;
	return 0;
}

bool rt_subscriber_wants_event(const struct rt_subscriber *s, unsigned int id)
{
	return bit(s->events, s->events_bits, id);
}

static bool wants_cpu(const struct rt_subscriber *s, unsigned int cpu)
{
	return !s->cpus || (cpu < s->ncpus && s->cpus[cpu]);
}

bool rt_subscriber_wants(const struct rt_subscriber *s, unsigned int cpu, unsigned int id,
			 int32_t pid)
{
	bool pid_ok = !s->n_pids;

	for (size_t i = 0; i < s->n_pids && !pid_ok; i++)
		pid_ok = s->pids[i] == pid;
	return pid_ok && wants_cpu(s, cpu) && rt_subscriber_wants_event(s, id);
}

bool rt_subscriber_selects_cpu(const struct rt_subscriber *s, unsigned int cpu)
{
	return wants_cpu(s, cpu);
}

const int32_t *rt_subscriber_pids(const struct rt_subscriber *s, size_t *n)
{
	*n = s->n_pids;
	return s->pids;
}

/* Copies the parts into a new frame at the tail; with page, parts[1] (its data) by reference. */
static int push_parts(struct rt_subscriber *s, const struct iovec *parts, unsigned int n,
		      size_t len, struct rt_page_buf *page)
{
	size_t by_ref = page ? parts[1].iov_len : 0;
	struct rt_qframe *f = malloc(sizeof(*f) + len - by_ref);
	size_t off = 0;

	if (!f)
		return -ENOMEM;
	f->next = NULL;
	f->len = len;
	f->cpu = 0;
	f->records = 0;
	f->page = NULL;
	f->head_len = f->page_len = 0;
	for (unsigned int i = 0; i < n; i++) {
		if (page && i == 1) {
			page->refs++;
			f->page = page;
			f->head_len = off;
			f->page_len = by_ref;
			continue;
		}
		memcpy(f->data + off, parts[i].iov_base, parts[i].iov_len);
		off += parts[i].iov_len;
	}
	if (s->tail)
		s->tail->next = f;
	else
		s->head = f;
	s->tail = f;
	s->queued += len;
	return 0;
}

int rt_subscriber_push(struct rt_subscriber *s, const uint8_t *frame, size_t len)
{
	struct iovec one = { (void *)frame, len };

	return push_parts(s, &one, 1, len, NULL);
}

static int push_buf(struct rt_subscriber *s, struct rt_buf *b)
{
	int ret = rt_subscriber_push(s, b->data, b->len);

	rt_buf_free(b);
	return ret;
}

bool rt_subscriber_has_schema(const struct rt_subscriber *s, unsigned int id)
{
	return bit(s->schema_sent, s->events_bits, id);
}

int rt_subscriber_push_schema(struct rt_subscriber *s, unsigned int id, const uint8_t *frame,
			      size_t len)
{
	int ret;

	if (id >= s->events_bits && (ret = grow_bitmaps(s, id)))
		return ret;
	ret = rt_subscriber_push(s, frame, len);
	if (!ret)
		s->schema_sent[id / 8] |= 1u << (id % 8);
	return ret;
}

static void count_in_batch(struct rt_subscriber *s, const struct rt_record *rec)
{
	if (!s->batch_records)
		s->batch_first_ts = rec->timestamp;
	s->batch_cpu = rec->cpu;
	s->batch_last_ts = rec->timestamp;
	s->batch_records++;
}

int rt_subscriber_add(struct rt_subscriber *s, const struct rt_record *rec,
		      const uint8_t *packed, size_t len)
{
	int ret = rt_buf_put(&s->batch, packed, len);

	/* Not in the batch, not counted in it: the caller reports it as dropped. */
	if (ret)
		return ret;
	count_in_batch(s, rec);
	return 0;
}

int rt_subscriber_encode(struct rt_subscriber *s, const struct rt_record *rec,
			 struct rt_record_encoder *enc)
{
	/* The encoder appends whole or not at all. */
	int ret = rt_record_encoder_put(enc, rec, &s->batch);

	if (ret)
		return ret;
	count_in_batch(s, rec);
	return 0;
}

void rt_subscriber_kernel_loss(struct rt_subscriber *s, unsigned int cpu, uint64_t count,
			       bool exact, uint64_t after_ts, uint64_t before_ts)
{
	struct rt_loss *l;

	if (cpu >= s->ncpus || !wants_cpu(s, cpu))
		return;
	l = &s->lost_kernel[cpu];
	if (!l->count)
		l->first_ts = after_ts;
	/* An unknown count means "at least one". */
	l->count += exact ? count : (count ? count : 1);
	l->exact = (l->count == count || l->exact) && exact;
	l->last_ts = before_ts;
	s->kernel_lost += exact ? count : 1;
}

static int flush_one(struct rt_subscriber *s, unsigned int cpu, Ringtap__LossSource source,
		     struct rt_loss *l)
{
	struct rt_buf b = { 0 };
	int ret;

	if (!l->count)
		return 0;
	ret = rt_encode_lost_frame(cpu, source, l, &b);
	if (!ret)
		ret = push_buf(s, &b);
	else
		rt_buf_free(&b);
	if (!ret)
		memset(l, 0, sizeof(*l));
	return ret;
}

int rt_subscriber_flush_losses(struct rt_subscriber *s)
{
	int ret = 0;

	for (unsigned int cpu = 0; cpu < s->ncpus && !ret; cpu++) {
		ret = flush_one(s, cpu, RINGTAP__LOSS_SOURCE__KERNEL, &s->lost_kernel[cpu]);
		if (!ret)
			ret = flush_one(s, cpu, RINGTAP__LOSS_SOURCE__QUEUE, &s->lost_queue[cpu]);
	}
	return ret;
}

void rt_subscriber_drop(struct rt_subscriber *s, unsigned int cpu, uint64_t count, uint64_t ts)
{
	struct rt_loss *l = &s->lost_queue[cpu < s->ncpus ? cpu : 0];

	if (!l->count) {
		l->first_ts = ts;
		l->exact = true;
	}
	l->count += count;
	l->last_ts = ts;
	s->dropped += count;
}

void rt_subscriber_drop_span(struct rt_subscriber *s, unsigned int cpu, uint64_t records,
			     uint64_t first_ts, uint64_t last_ts)
{
	rt_subscriber_drop(s, cpu, records, first_ts);
	s->lost_queue[cpu < s->ncpus ? cpu : 0].last_ts = last_ts;
}

static int push_data(struct rt_subscriber *s, unsigned int cpu, const struct rt_frame_parts *frame,
		     struct rt_page_buf *page, unsigned int records, uint64_t first_ts,
		     uint64_t last_ts)
{
	int ret;

	if (s->queued + frame->len > s->max_queued) {
		rt_subscriber_drop_span(s, cpu, records, first_ts, last_ts);
		/* Kernel losses wait too: a report must not overtake what came before it. */
		return 0;
	}
	ret = rt_subscriber_flush_losses(s);
	if (!ret)
		ret = push_parts(s, frame->iov, frame->n, frame->len, page);
	if (ret) {
		/* Out of memory: the frame is lost to this subscriber, and reported as such. */
		rt_subscriber_drop_span(s, cpu, records, first_ts, last_ts);
		return ret;
	}
	s->tail->cpu = cpu;
	s->tail->records = records;
	s->tail->first_ts = first_ts;
	s->tail->last_ts = last_ts;
	s->queued_records += records;
	return 0;
}

int rt_subscriber_push_data(struct rt_subscriber *s, unsigned int cpu,
			    const struct rt_frame_parts *frame, unsigned int records,
			    uint64_t first_ts, uint64_t last_ts)
{
	return push_data(s, cpu, frame, NULL, records, first_ts, last_ts);
}

int rt_subscriber_push_page(struct rt_subscriber *s, unsigned int cpu,
			    const struct rt_frame_parts *frame, struct rt_page_buf *page,
			    unsigned int records, uint64_t first_ts, uint64_t last_ts)
{
	/* Anything but a page between a head and a tail is copied like any frame. */
	if (!page || frame->n != 3 || frame->iov[1].iov_base != page->data)
		page = NULL;
	return push_data(s, cpu, frame, page, records, first_ts, last_ts);
}

int rt_subscriber_abandon(struct rt_subscriber *s)
{
	struct rt_qframe **p = s->head_off || s->head_in_flight ? &s->head->next : &s->head, *f;

	/* The frame being written must finish, or the stream would be cut mid-frame. */
	while ((f = *p)) {
		*p = f->next;
		if (f->records) {
			rt_subscriber_drop_span(s, f->cpu, f->records, f->first_ts, f->last_ts);
			s->queued_records -= f->records;
		}
		s->queued -= f->len;
		free_frame(f);
	}
	s->tail = NULL;
	for (f = s->head; f; f = f->next)
		s->tail = f;
	return rt_subscriber_flush_losses(s);
}

bool rt_subscriber_batch_overflows(const struct rt_subscriber *s)
{
	struct rt_frame_parts frame;

	if (!s->batch_records ||
	    rt_encode_batch_parts(s->data_kind, s->batch_cpu, &s->batch, &frame))
		return false;
	return s->queued + frame.len > s->max_queued;
}

void rt_subscriber_discard_batch(struct rt_subscriber *s)
{
	s->batch.len = 0;
	s->batch_records = 0;
}

int rt_subscriber_end_page(struct rt_subscriber *s)
{
	struct rt_frame_parts frame;
	int ret;

	if (!s->batch_records) {
		/* Kernel losses on a page with nothing selected still get reported. */
		return rt_subscriber_flush_losses(s);
	}
	ret = rt_encode_batch_parts(s->data_kind, s->batch_cpu, &s->batch, &frame);
	if (ret)
		rt_subscriber_drop_span(s, s->batch_cpu, s->batch_records, s->batch_first_ts, s->batch_last_ts);
	else
		ret = rt_subscriber_push_data(s, s->batch_cpu, &frame, s->batch_records,
					      s->batch_first_ts, s->batch_last_ts);
	s->batch.len = 0;
	s->batch_records = 0;
	return ret;
}

bool rt_subscriber_peek(const struct rt_subscriber *s, const uint8_t **data, size_t *len)
{
	struct iovec next;

	if (!rt_subscriber_peekv(s, &next, 1))
		return false;
	*data = next.iov_base;
	*len = next.iov_len;
	return true;
}

unsigned int rt_subscriber_peekv(const struct rt_subscriber *s, struct iovec *iov,
				 unsigned int max)
{
	unsigned int n = 0;

	for (const struct rt_qframe *f = s->head; f && n < max; f = f->next) {
		struct iovec piece[3];
		unsigned int pieces = frame_pieces(f, piece);
		size_t skip = f == s->head ? s->head_off : 0;

		for (unsigned int i = 0; i < pieces && n < max; i++) {
			/* Written already, or empty (a page frame without a tail). */
			if (skip >= piece[i].iov_len) {
				skip -= piece[i].iov_len;
				continue;
			}
			iov[n++] = (struct iovec){ (uint8_t *)piece[i].iov_base + skip,
						   piece[i].iov_len - skip };
			skip = 0;
		}
	}
	return n;
}

void rt_subscriber_head_held(struct rt_subscriber *s, bool held)
{
	s->head_in_flight = held;
}

void rt_subscriber_consume(struct rt_subscriber *s, size_t n)
{
	while (n && s->head) {
		struct rt_qframe *f = s->head;
		size_t left = f->len - s->head_off;

		if (n < left) {
			s->head_off += n;
			s->queued -= n;
			return;
		}
		n -= left;
		s->queued -= left;
		s->head_off = 0;
		/* Written whole: its records are the subscriber's now. */
		s->delivered += f->records;
		s->queued_records -= f->records;
		s->head = f->next;
		if (!s->head)
			s->tail = NULL;
		free_frame(f);
	}
}
