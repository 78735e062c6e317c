// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * subscriber: fed the records of captured pages, a subscriber's queue holds
 * exactly its selection; past its byte limit it drops whole batches and its
 * Lost frames account for every dropped record; kernel losses on its CPUs
 * reach it with the kernel's counts; a Schema precedes an event's records.
 * Records packed straight into a batch make the same frames as records
 * packed aside and copied in.
 * A page's frame queued by reference goes out byte for byte as the frame
 * made whole, a few bytes at a time, and holds the page until then.
 */
#include "fixture.h"
#include "encode.h"
#include "subscriber.h"
#include "wire.h"

struct feed {
	struct fixture *fx;
	struct rt_subscriber *subs[4];
	unsigned int n_subs;
	unsigned long long selected[4];
	struct rt_buf packed;
	struct rt_record_encoder *enc;	/* for those packed straight into their batch */
	bool direct[4];
	bool spill[4];			/* a batch that overflows is let go (taken from a ring) */
	unsigned long long spilled[4];
};

static int on_record(const struct rt_record *rec, void *ctx)
{
	struct feed *f = ctx;
	const struct rt_field_desc *pidf = rt_layout_common(f->fx->layout, "common_pid");
	uint64_t pid = 0;

	rt_record_read_common(rec, f->fx->layout, pidf, &pid);
	f->packed.len = 0;
	if (!rec->event || rt_encode_record(rec, f->fx->layout, false, NULL, &f->packed))
		return 0;
	for (unsigned int i = 0; i < f->n_subs; i++)
		if (rt_subscriber_wants(f->subs[i], rec->cpu, rec->type, (int32_t)pid)) {
			f->selected[i]++;
			if (!rt_subscriber_has_schema(f->subs[i], rec->type)) {
				struct rt_buf schema = { 0 };

				CHECK_EQ(rt_encode_schema_frame(rec->event, NULL, NULL, NULL, &schema), 0);
				CHECK_EQ(rt_subscriber_push_schema(f->subs[i], rec->type, schema.data,
								   schema.len), 0);
				rt_buf_free(&schema);
			}
			if (f->direct[i])
				CHECK_EQ(rt_subscriber_encode(f->subs[i], rec, f->enc), 0);
			else
				CHECK_EQ(rt_subscriber_add(f->subs[i], rec, f->packed.data,
							   f->packed.len), 0);
		}
	return 0;
}

static void feed_fixture(struct feed *f)
{
	for (int cpu = 0; cpu < f->fx->ncpus; cpu++) {
		size_t len;
		uint8_t *pages = fixture_pages(f->fx, cpu, &len);

		uint64_t last_read = 0;

		for (size_t off = 0; pages && off < len; off += f->fx->layout->sub_buffer_size) {
			struct rt_page_result r;

			rt_decode_page(f->fx->decoder, (unsigned int)cpu, pages + off,
				       f->fx->layout->sub_buffer_size, on_record, f, &r);
			for (unsigned int i = 0; i < f->n_subs; i++) {
				if (r.missed)
					rt_subscriber_kernel_loss(f->subs[i], (unsigned int)cpu,
								  r.missed_count, r.missed_exact,
								  last_read, r.timestamp);
				if (f->spill[i] && rt_subscriber_batch_overflows(f->subs[i])) {
					f->spilled[i] += f->subs[i]->batch_records;
					rt_subscriber_discard_batch(f->subs[i]);
					continue;
				}
				CHECK_EQ(rt_subscriber_end_page(f->subs[i]), 0);
			}
			last_read = r.last_timestamp;
		}
		free(pages);
	}
}

struct seen {
	unsigned long long records, lost_queue, lost_kernel, frames;
	unsigned long long per_cpu[2];
	/* Lost bounds against the records around them, per CPU. */
	uint64_t last_ts[2], lost_before[2];
	unsigned long long lost_bounded, bounds_wrong;
	bool record_before_schema;
	uint8_t schema[1024];
};

/* Reads the whole queue back as a client would. */
static void drain(struct rt_subscriber *s, struct seen *out)
{
	struct rt_wire_reader r;
	const uint8_t *data;
	size_t len;

	memset(out, 0, sizeof(*out));
	rt_subscriber_flush_losses(s);
	rt_wire_reader_init(&r, 0);
	while (rt_subscriber_peek(s, &data, &len)) {
		size_t used = 0;
		Ringtap__Frame *f;

		/* Partial consumption, as a socket that takes a few bytes at a time. */
		if (len > 7)
			len = 7;
		/* A frame read in place is read from the queue: consumed after. */
		CHECK(rt_wire_reader_feed(&r, data, len, &used) >= 0);
		while (rt_wire_reader_next(&r, &f) == 1) {
			out->frames++;
			if (f->msg_case == RINGTAP__FRAME__MSG_SCHEMA && f->schema->event_id < 1024)
				out->schema[f->schema->event_id] = 1;
			if (f->msg_case == RINGTAP__FRAME__MSG_BATCH) {
				for (size_t i = 0; i < f->batch->n_records; i++) {
					uint32_t id = f->batch->records[i]->event_id;
					uint64_t ts = f->batch->records[i]->timestamp;
					unsigned int cpu = f->batch->cpu;

					if (id >= 1024 || !out->schema[id])
						out->record_before_schema = true;
					if (cpu < 2 && out->lost_before[cpu] > ts)
						out->bounds_wrong++;
					if (cpu < 2) {
						out->lost_before[cpu] = 0;
						out->last_ts[cpu] = ts;
					}
				}
				out->records += f->batch->n_records;
				if (f->batch->cpu < 2)
					out->per_cpu[f->batch->cpu] += f->batch->n_records;
			}
			if (f->msg_case == RINGTAP__FRAME__MSG_LOST) {
				if (f->lost->source == RINGTAP__LOSS_SOURCE__QUEUE)
					out->lost_queue += f->lost->count;
				else
					out->lost_kernel += f->lost->count;
				CHECK(f->lost->count_exact);
				if (f->lost->cpu < 2) {
					const Ringtap__Lost *l = f->lost;

					/* first_ns <= every lost record <= last_ns, between the records. */
					if ((l->has_first_ns && l->first_ns < out->last_ts[l->cpu]) ||
					    (l->has_first_ns && l->has_last_ns &&
					     l->first_ns > l->last_ns))
						out->bounds_wrong++;
					out->lost_bounded += l->has_last_ns;
					out->lost_before[l->cpu] = l->has_last_ns ? l->last_ns : 0;
				}
			}
			ringtap__frame__free_unpacked(f, NULL);
		}
		rt_subscriber_consume(s, used);
	}
	CHECK_EQ(s->queued, 0);
	rt_wire_reader_release(&r);
}

static unsigned long long count_in_trace(struct fixture *fx, const char *what)
{
	char path[4200];
	size_t len;
	char *text, *p;
	unsigned long long n = 0;

	snprintf(path, sizeof(path), "%s/trace.txt", fx->dir);
	text = read_whole_file(path, &len);
	for (p = text; p && (p = strstr(p, what)); p++)
		n++;
	free(text);
	return n;
}

static void select_named(struct fixture *fx, struct rt_subscriber *s, const char *sys,
			 const char *name)
{
	struct tep_event *ev = tep_find_event_by_name(fx->layout->tep, sys, name);

	CHECK(ev != NULL);
	if (ev)
		CHECK_EQ(rt_subscriber_select_event(s, (unsigned int)ev->id), 0);
}

static const char *const events[] = { "ringtap_test:ringtap_test", "sched:sched_switch",
				      "ftrace:print", NULL };

static void test_selection_and_backpressure(const char *root)
{
	struct fixture fx;
	struct rt_subscriber all, cpu1, slow, pid0;
	struct feed f = { 0 };
	struct seen s;
	uint32_t one = 1;
	int32_t zero = 0;

	if (fixture_open(&fx, root, "stock", events)) {
		CHECK(!"fixture opens");
		return;
	}
	f.fx = &fx;
	CHECK_EQ(rt_subscriber_init(&all, 2, 1 << 20), 0);
	CHECK_EQ(rt_subscriber_init(&cpu1, 2, 1 << 20), 0);
	CHECK_EQ(rt_subscriber_init(&slow, 2, 4000), 0);	/* a client that never reads */
	CHECK_EQ(rt_subscriber_init(&pid0, 2, 1 << 20), 0);
	select_named(&fx, &all, "ringtap_test", "ringtap_test");
	select_named(&fx, &all, "sched", "sched_switch");
	select_named(&fx, &cpu1, "ringtap_test", "ringtap_test");
	CHECK_EQ(rt_subscriber_select_cpus(&cpu1, &one, 1), 0);
	select_named(&fx, &slow, "ringtap_test", "ringtap_test");
	select_named(&fx, &pid0, "sched", "sched_switch");
	CHECK_EQ(rt_subscriber_select_pids(&pid0, &zero, 1), 0);
	f.subs[0] = &all;
	f.subs[1] = &cpu1;
	f.subs[2] = &slow;
	f.subs[3] = &pid0;
	f.n_subs = 4;
	feed_fixture(&f);

	/* What the kernel's own text of the capture says it holds. */
	drain(&all, &s);
	CHECK_EQ(f.selected[0], count_in_trace(&fx, "ringtap_test:") +
				count_in_trace(&fx, "sched_switch:"));
	CHECK_EQ(s.records, f.selected[0]);
	CHECK_EQ(s.lost_queue + s.lost_kernel, 0);
	CHECK(!s.record_before_schema);

	drain(&cpu1, &s);
	CHECK_EQ(f.selected[1], 50);
	CHECK_EQ(s.records, 50);
	CHECK_EQ(s.per_cpu[0], 0);

	/* The slow one: what it got and what it was told it lost add up. */
	drain(&slow, &s);
	CHECK_EQ(f.selected[2], 100);
	CHECK(s.lost_queue > 0);
	CHECK(s.records > 0);
	CHECK_EQ(s.records + s.lost_queue, 100);
	CHECK_EQ(slow.delivered + slow.dropped, 100);
	printf("slow subscriber: %llu delivered, %llu reported lost\n", s.records, s.lost_queue);

	drain(&pid0, &s);
	CHECK(f.selected[3] > 0 && f.selected[3] < count_in_trace(&fx, "sched_switch:"));
	CHECK_EQ(s.records, f.selected[3]);

	rt_subscriber_release(&all);
	rt_subscriber_release(&cpu1);
	rt_subscriber_release(&slow);
	rt_subscriber_release(&pid0);
	rt_buf_free(&f.packed);
	fixture_close(&fx);
}

/*
 * A batch said to overflow is exactly one end_page would drop: a twin that
 * lets such batches go (its records are caught up from the page ring) has
 * dropped none, and let go what the other dropped.
 */
static void test_overflow_let_go(const char *root)
{
	struct fixture fx;
	struct rt_subscriber dropping, spilling;
	struct feed f = { 0 };
	struct seen s;

	if (fixture_open(&fx, root, "stock", events)) {
		CHECK(!"fixture opens");
		return;
	}
	f.fx = &fx;
	CHECK_EQ(rt_subscriber_init(&dropping, 2, 4000), 0);
	CHECK_EQ(rt_subscriber_init(&spilling, 2, 4000), 0);
	select_named(&fx, &dropping, "ringtap_test", "ringtap_test");
	select_named(&fx, &spilling, "ringtap_test", "ringtap_test");
	f.subs[0] = &dropping;
	f.subs[1] = &spilling;
	f.spill[1] = true;
	f.n_subs = 2;
	feed_fixture(&f);
	CHECK(dropping.dropped > 0);
	CHECK_EQ(f.spilled[1], dropping.dropped);
	CHECK_EQ(spilling.dropped, 0);
	drain(&spilling, &s);
	CHECK_EQ(s.lost_queue, 0);
	CHECK_EQ(s.records + f.spilled[1], 100);
	drain(&dropping, &s);
	CHECK_EQ(s.records + s.lost_queue, 100);
	rt_subscriber_release(&dropping);
	rt_subscriber_release(&spilling);
	rt_buf_free(&f.packed);
	fixture_close(&fx);
}

/* The queue's bytes, all of them, as a socket would take them. */
static void queue_bytes(struct rt_subscriber *s, struct rt_buf *out)
{
	const uint8_t *data;
	size_t len;

	while (rt_subscriber_peek(s, &data, &len)) {
		rt_buf_put(out, data, len);
		rt_subscriber_consume(s, len);
	}
}

/* Records packed straight into the batch: the same frames, byte for byte, as packed and copied. */
static void test_encoded_in_place(const char *root)
{
	struct fixture fx;
	struct rt_subscriber copied, in_place;
	struct rt_buf a = { 0 }, b = { 0 };
	struct feed f = { 0 };
	struct seen s;

	if (fixture_open(&fx, root, "stock", events)) {
		CHECK(!"fixture opens");
		return;
	}
	f.fx = &fx;
	CHECK_EQ(rt_record_encoder_new(&f.enc, fx.layout, false, NULL), 0);
	CHECK_EQ(rt_subscriber_init(&copied, 2, 1 << 20), 0);
	CHECK_EQ(rt_subscriber_init(&in_place, 2, 1 << 20), 0);
	select_named(&fx, &copied, "ringtap_test", "ringtap_test");
	select_named(&fx, &copied, "sched", "sched_switch");
	select_named(&fx, &in_place, "ringtap_test", "ringtap_test");
	select_named(&fx, &in_place, "sched", "sched_switch");
	f.subs[0] = &copied;
	f.subs[1] = &in_place;
	f.direct[1] = true;
	f.n_subs = 2;
	feed_fixture(&f);
	queue_bytes(&copied, &a);
	queue_bytes(&in_place, &b);
	CHECK(a.len > 1000);
	CHECK(a.len == b.len && !memcmp(a.data, b.data, a.len));
	CHECK_EQ(in_place.delivered, f.selected[1]);
	CHECK_EQ(f.selected[1], count_in_trace(&fx, "ringtap_test:") +
				count_in_trace(&fx, "sched_switch:"));
	drain(&in_place, &s);	/* empty now: nothing left behind */
	CHECK_EQ(s.frames, 0);
	rt_buf_free(&a);
	rt_buf_free(&b);
	rt_subscriber_release(&copied);
	rt_subscriber_release(&in_place);
	rt_record_encoder_free(f.enc);
	rt_buf_free(&f.packed);
	fixture_close(&fx);
}

static void test_kernel_losses(const char *root)
{
	static const char *const ovr_events[] = { "ringtap_test:ringtap_test", "ftrace:print",
						  NULL };
	struct fixture fx;
	struct rt_subscriber sub, other_cpu;
	struct feed f = { 0 };
	struct rt_cpu_stats st0, st1;
	struct seen s;
	uint32_t zero = 0;

	if (fixture_open(&fx, root, "stock-overrun", ovr_events)) {
		CHECK(!"fixture opens");
		return;
	}
	f.fx = &fx;
	CHECK_EQ(rt_subscriber_init(&sub, 2, 1 << 20), 0);
	CHECK_EQ(rt_subscriber_init(&other_cpu, 2, 1 << 20), 0);
	select_named(&fx, &sub, "ringtap_test", "ringtap_test");
	select_named(&fx, &other_cpu, "ringtap_test", "ringtap_test");
	CHECK_EQ(rt_subscriber_select_cpus(&other_cpu, &zero, 1), 0);
	f.subs[0] = &sub;
	f.subs[1] = &other_cpu;
	f.n_subs = 2;
	feed_fixture(&f);
	fixture_cpu_stats(&fx, 0, &st0);
	fixture_cpu_stats(&fx, 1, &st1);

	drain(&sub, &s);
	CHECK_EQ(s.lost_kernel, st0.overrun + st1.overrun);
	CHECK_EQ(s.records, f.selected[0]);
	/*
	 * The capture's losses precede each CPU's first page: bounded after
	 * (by that page), and not before (nothing was read earlier).
	 */
	CHECK(s.lost_bounded > 0);
	CHECK_EQ(s.bounds_wrong, 0);
	/* Only the losses of the CPUs it selected. */
	drain(&other_cpu, &s);
	CHECK_EQ(s.lost_kernel, st0.overrun);
	rt_subscriber_release(&sub);
	rt_subscriber_release(&other_cpu);
	rt_buf_free(&f.packed);
	fixture_close(&fx);
}

/* A stop that cannot wait: what is still queued becomes Lost, whole frames only. */
static void test_abandon(const char *root)
{
	struct fixture fx;
	struct rt_subscriber sub;
	struct feed f = { 0 };
	struct seen s;
	const uint8_t *data;
	size_t len;

	if (fixture_open(&fx, root, "stock", events)) {
		CHECK(!"fixture opens");
		return;
	}
	f.fx = &fx;
	CHECK_EQ(rt_subscriber_init(&sub, 2, 1 << 20), 0);
	select_named(&fx, &sub, "ringtap_test", "ringtap_test");
	f.subs[0] = &sub;
	f.n_subs = 1;
	feed_fixture(&f);
	/* Part of the first frame is already on the socket. */
	CHECK(rt_subscriber_peek(&sub, &data, &len));
	rt_subscriber_consume(&sub, 3);
	CHECK_EQ(rt_subscriber_abandon(&sub), 0);
	/* What a client gets: the rest of that frame, then the reports. */
	{
		struct rt_buf all = { 0 };

		rt_buf_put(&all, data, 3);	/* the bytes already sent */
		while (rt_subscriber_peek(&sub, &data, &len)) {
			rt_buf_put(&all, data, len);
			rt_subscriber_consume(&sub, len);
		}
		/* Read it all back as a client would. */
		rt_subscriber_release(&sub);
		CHECK_EQ(rt_subscriber_init(&sub, 2, 1 << 20), 0);
		rt_subscriber_push(&sub, all.data, all.len);
		drain(&sub, &s);
		rt_buf_free(&all);
	}
	CHECK(s.lost_queue > 0);
	CHECK_EQ(s.records + s.lost_queue, f.selected[0]);
	rt_subscriber_release(&sub);
	rt_buf_free(&f.packed);
	fixture_close(&fx);
}

/* An Update replaces the selection but not the memory of Schemas sent. */
static void test_clear_selection(void)
{
	struct rt_subscriber s;
	static const uint8_t frame[] = { 1, 0 };

	CHECK_EQ(rt_subscriber_init(&s, 2, 1 << 20), 0);
	CHECK_EQ(rt_subscriber_select_event(&s, 169), 0);
	CHECK_EQ(rt_subscriber_push_schema(&s, 169, frame, sizeof(frame)), 0);
	rt_subscriber_clear_selection(&s);
	CHECK(!rt_subscriber_wants_event(&s, 169));
	CHECK(rt_subscriber_has_schema(&s, 169));
	CHECK_EQ(rt_subscriber_select_event(&s, 300), 0);
	CHECK(rt_subscriber_wants_event(&s, 300));
	CHECK(rt_subscriber_has_schema(&s, 169));
	rt_subscriber_release(&s);
}

/* What two subscribers write of one page held by reference, whatever the writes' sizes. */
static void test_page_by_reference(void)
{
	struct rt_page_buf *page = rt_page_buf_new(4096);
	struct rt_subscriber a, b;
	struct rt_frame_parts parts;
	struct rt_buf whole = { 0 }, out = { 0 };
	struct iovec iov[8];
	const uint8_t *data;
	size_t len;
	unsigned int n;

	CHECK(page != NULL);
	if (!page)
		return;
	for (unsigned int i = 0; i < 4096; i++)
		page->data[i] = (uint8_t)(i * 7 + 3);
	CHECK_EQ(rt_encode_pages_parts(1, page->data, 4000, 200, 0, &parts), 0);
	for (unsigned int i = 0; i < parts.n; i++)
		rt_buf_put(&whole, parts.iov[i].iov_base, parts.iov[i].iov_len);
	CHECK_EQ(rt_subscriber_init(&a, 2, 1 << 20), 0);
	CHECK_EQ(rt_subscriber_init(&b, 2, 1 << 20), 0);
	CHECK_EQ(rt_subscriber_push_page(&a, 1, &parts, page, 200, 10, 20), 0);
	CHECK_EQ(rt_subscriber_push_page(&b, 1, &parts, page, 200, 10, 20), 0);
	/* A Lost-free control frame after it: gathers cross frames. */
	CHECK_EQ(rt_subscriber_push(&a, (const uint8_t *)"\x02\x08\x01", 3), 0);
	CHECK_EQ(page->refs, 3);
	CHECK_EQ(a.queued, whole.len + 3);
	CHECK_EQ(a.queued_records, 200);

	/* a: 7 bytes at a time, across the head, the page and the tail. */
	while (rt_subscriber_peek(&a, &data, &len)) {
		if (len > 7)
			len = 7;
		rt_buf_put(&out, data, len);
		rt_subscriber_consume(&a, len);
	}
	CHECK_EQ(out.len, whole.len + 3);
	CHECK(out.len >= whole.len && !memcmp(out.data, whole.data, whole.len));
	CHECK(out.len == whole.len + 3 && !memcmp(out.data + whole.len, "\x02\x08\x01", 3));
	CHECK_EQ(a.delivered, 200);
	CHECK_EQ(a.queued, 0);
	CHECK_EQ(page->refs, 2);

	/* b: a gather is head, page, tail; a write that ends inside the page resumes there. */
	n = rt_subscriber_peekv(&b, iov, 8);
	CHECK_EQ(n, 3);
	CHECK(iov[1].iov_base == page->data && iov[1].iov_len == 4000);
	CHECK_EQ(iov[0].iov_len + iov[1].iov_len + iov[2].iov_len, whole.len);
	rt_subscriber_consume(&b, iov[0].iov_len + 10);
	n = rt_subscriber_peekv(&b, iov, 8);
	CHECK_EQ(n, 2);
	CHECK(iov[0].iov_base == page->data + 10 && iov[0].iov_len == 3990);
	/* At a stop, the frame being written stays whole: the page is still held. */
	CHECK_EQ(rt_subscriber_abandon(&b), 0);
	CHECK_EQ(page->refs, 2);
	rt_subscriber_release(&b);
	CHECK_EQ(page->refs, 1);

	/* A frame whose middle is not the page's data is copied, not held. */
	rt_subscriber_release(&a);
	CHECK_EQ(rt_subscriber_init(&a, 2, 1 << 20), 0);
	parts.iov[1].iov_base = whole.data + parts.iov[0].iov_len;
	CHECK_EQ(rt_subscriber_push_page(&a, 1, &parts, page, 200, 10, 20), 0);
	CHECK_EQ(page->refs, 1);
	CHECK(rt_subscriber_peek(&a, &data, &len));
	CHECK(len == whole.len && !memcmp(data, whole.data, len));
	rt_subscriber_release(&a);
	rt_page_buf_put(page);
	rt_buf_free(&whole);
	rt_buf_free(&out);
}

/*
 * A handle on a slot someone else keeps: a queue that holds it keeps the
 * page as it was when the slot's owner writes a new page there, once the
 * handle took its own copy (what the ring's writer does first).
 */
static void test_page_detached(void)
{
	static uint8_t slot[512];
	struct rt_page_buf *page = rt_page_buf_wrap(slot);
	struct rt_frame_parts parts;
	struct rt_buf whole = { 0 }, out = { 0 };
	struct rt_subscriber a;
	const uint8_t *data;
	size_t len;

	CHECK(page != NULL);
	if (!page)
		return;
	memset(slot, 0x5a, sizeof(slot));
	page->len = 300;
	CHECK_EQ(rt_encode_pages_parts(0, page->data, page->len, 3, 0, &parts), 0);
	for (unsigned int i = 0; i < parts.n; i++)
		rt_buf_put(&whole, parts.iov[i].iov_base, parts.iov[i].iov_len);
	CHECK_EQ(rt_subscriber_init(&a, 1, 1 << 20), 0);
	CHECK_EQ(rt_subscriber_push_page(&a, 0, &parts, page, 3, 1, 2), 0);
	CHECK_EQ(page->refs, 2);
	CHECK(!page->own);
	CHECK_EQ(rt_page_buf_detach(page), 0);
	CHECK(page->own && page->data != slot);
	memset(slot, 0xa5, sizeof(slot));	/* the slot's next page */
	while (rt_subscriber_peek(&a, &data, &len)) {
		rt_buf_put(&out, data, len);
		rt_subscriber_consume(&a, len);
	}
	CHECK(out.len == whole.len && !memcmp(out.data, whole.data, whole.len));
	rt_subscriber_release(&a);
	CHECK_EQ(page->refs, 1);
	rt_page_buf_put(page);
	rt_buf_free(&whole);
	rt_buf_free(&out);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	test_page_by_reference();
	test_page_detached();
	test_clear_selection();
	test_abandon(argv[1]);
	test_selection_and_backpressure(argv[1]);
	test_encoded_in_place(argv[1]);
	test_kernel_losses(argv[1]);
	test_overflow_let_go(argv[1]);
	return check_exit("test-subscriber");
}
