// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Where NATS publishing stands, for a crash's successor: the shared mark
 * (core/publish-mark.c) reads back the last whole copy whatever a crash
 * cut, and refuses what is not a mark; the daemon's tracking
 * (daemon/nats-mark.c) moves it only past messages whose answers all
 * came; and a publisher that goes on from a mark gives the fixture's pages
 * published again exactly the message ids they had, with control ids
 * that never meet the dead run's.
 */
#include <stdatomic.h>
#include <sys/mman.h>

#include "check.h"
#include "decode.h"
#include "fixture.h"
#include "layout.h"
#include "nats-mark.h"
#include "publish-mark.h"
#include "publish.h"

static const char *const events[] = { "ringtap_test:ringtap_test", NULL };

static void test_area(void)
{
	struct rt_pub_place a[2] = { { .page = 3, .seq = 30 }, { .page = 5, .seq = 50 } };
	struct rt_pub_place b[2] = { { .page = 4, .seq = 41, .kernel_reports = 1 },
				     { .page = 6, .seq = 61 } };
	struct rt_pub_place got[2];
	size_t size = rt_pub_mark_size(2);
	uint8_t *area = calloc(1, size);
	uint64_t session, runs, key;

	CHECK_EQ(rt_pub_mark_size(0), 0);
	CHECK_EQ(rt_pub_mark_read(area, size, 2, &session, &runs, &key, got), -EBADMSG);
	CHECK_EQ(rt_pub_mark_format(area, size - 1, 2, 9, 77, a), -EINVAL);
	CHECK_EQ(rt_pub_mark_format(area, size, 2, 9, 77, a), 0);
	CHECK_EQ(rt_pub_mark_read(area, size, 2, &session, &runs, &key, got), 0);
	CHECK_EQ(session, 9);
	CHECK_EQ(runs, 0);
	CHECK_EQ(key, 77);
	CHECK_EQ(got[1].page, 5);
	CHECK_EQ(got[1].seq, 50);
	rt_pub_mark_put(area, b);
	CHECK_EQ(rt_pub_mark_read(area, size, 2, &session, &runs, &key, got), 0);
	CHECK_EQ(got[0].page, 4);
	CHECK_EQ(got[0].seq, 41);
	CHECK_EQ(got[0].kernel_reports, 1);
	/* A put cut before its copy was made current (the other one, 0): the copy before stands. */
	memset(area + size - 4 * sizeof(*a), 0x5a, 2 * sizeof(*a));
	CHECK_EQ(rt_pub_mark_read(area, size, 2, &session, &runs, &key, got), 0);
	CHECK_EQ(got[0].page, 4);
	CHECK_EQ(got[1].seq, 61);
	rt_pub_mark_take_over(area, runs);
	CHECK_EQ(rt_pub_mark_read(area, size, 2, &session, &runs, &key, got), 0);
	CHECK_EQ(runs, 1);
	/* Not this machine's CPUs, too short, another version, a wild copy number. */
	CHECK_EQ(rt_pub_mark_read(area, size, 4, &session, &runs, &key, got), -EINVAL);
	CHECK_EQ(rt_pub_mark_read(area, size - 1, 2, &session, &runs, &key, got), -EBADMSG);
	CHECK_EQ(rt_pub_mark_read(area, 8, 2, &session, &runs, &key, got), -EBADMSG);
	area[8] = 2;
	CHECK_EQ(rt_pub_mark_read(area, size, 2, &session, &runs, &key, got), -EPROTONOSUPPORT);
	area[8] = 1;
	area[32] = 7;
	CHECK_EQ(rt_pub_mark_read(area, size, 2, &session, &runs, &key, got), -EBADMSG);
	area[32] = 0;
	area[0] ^= 1;
	CHECK_EQ(rt_pub_mark_read(area, size, 2, &session, &runs, &key, got), -EBADMSG);
	free(area);
}

/* A sink that keeps every message, numbered in order as nats.c's enqueue numbers them. */
struct kept {
	struct rt_pub_msg *head, **tail;
	uint64_t next_order;
	size_t n;
};

static bool always(void *ctx)
{
	return true;
}

/* No room at all: records drop, a kernel loss still goes (its number must not depend on room). */
static bool never(void *ctx)
{
	return false;
}

static void keep(void *ctx, struct rt_pub_msg *m)
{
	struct kept *k = ctx;

	m->order = k->next_order++;
	*k->tail = m;
	k->tail = &m->next;
	k->n++;
}

/* The fixture's records cut into "pages" of 10, as drains that took parts of pages would. */
struct feed {
	struct rt_publisher *pub;
	size_t unit, in_unit, from, to;
	unsigned int records;
};

static int offer(const struct rt_record *rec, void *ctx)
{
	struct feed *f = ctx;
	bool in = f->unit >= f->from && f->unit < f->to;

	if (!rec->event || strcmp(rec->event->name, "ringtap_test"))
		return 0;
	if (in) {
		if ((f->unit == 1 || f->unit == 4) && !f->in_unit)
			rt_publisher_kernel_loss(f->pub, 0, 17, true, 1, 2);
		rt_publisher_record(f->pub, rec);
		f->records++;
	}
	if (++f->in_unit == 10) {
		if (in)
			rt_publisher_end_page(f->pub);
		f->unit++;
		f->in_unit = 0;
	}
	return 0;
}

/* "Pages" [from, to) of CPU 0, a page a message, with kernel losses before pages 1 and 4. */
static unsigned int publish_pages(struct fixture *fx, struct rt_publisher *pub, size_t from,
				  size_t to)
{
	size_t len, size = fx->layout->sub_buffer_size;
	uint8_t *pages = fixture_pages(fx, 0, &len);
	struct feed f = { .pub = pub, .from = from, .to = to };

	for (size_t off = 0; pages && off + size <= len; off += size) {
		struct rt_page_result res;

		CHECK_EQ(rt_decode_page(fx->decoder, 0, pages + off, size, offer, &f, &res), 0);
	}
	if (f.in_unit && f.unit >= from && f.unit < to)
		rt_publisher_end_page(pub);
	rt_publisher_end_drain(pub);
	free(pages);
	return f.records;
}

static size_t count_kind(const struct kept *k, char kind, const char *session)
{
	size_t n = 0;

	for (const struct rt_pub_msg *m = k->head; m; m = m->next)
		n += strstr(m->id, session) && strrchr(m->id, '.')[1] == kind;
	return n;
}

/* Record and kernel loss messages' ids of a after its first skip messages: b's, in order. */
static size_t same_ids(const struct kept *a, size_t skip, const struct kept *b)
{
	const struct rt_pub_msg *x = a->head, *y = b->head;
	size_t same = 0;

	for (size_t i = 0; x && i < skip; i++)
		x = x->next;
	for (;;) {
		while (x && strrchr(x->id, '.')[1] == 'c')
			x = x->next;
		while (y && strrchr(y->id, '.')[1] == 'c')
			y = y->next;
		if (!x || !y)
			break;
		CHECK_STR(y->id, x->id);
		same++;
		x = x->next;
		y = y->next;
	}
	CHECK(!x && !y);
	return same;
}

static bool has_id(const struct kept *k, const char *id)
{
	for (const struct rt_pub_msg *m = k->head; m; m = m->next)
		if (!strcmp(m->id, id))
			return true;
	return false;
}

/*
 * A run publishes pages 0-5; its successor goes on from the place after
 * page 2 and publishes 3-5 again: every record and kernel loss message of
 * those pages has the id it had, and no control id of the successor's is
 * one of the dead run's.
 */
static void test_same_ids(const char *root)
{
	struct rt_host host = { "h1", "6.1", "b00t", 2, "local" };
	struct kept dead = { .tail = &dead.head }, next = { .tail = &next.head };
	const struct rt_publisher_sink dead_sink = { always, keep, &dead };
	const struct rt_publisher_sink next_sink = { always, keep, &next };
	struct rt_pub_place at[2] = { { 0 } };
	struct rt_publisher *pub = NULL;
	size_t dead_records, again, at_mark;
	struct fixture fx;

	if (fixture_open(&fx, root, "stock", events)) {
		CHECK(!"fixture opens");
		return;
	}
	CHECK_EQ(rt_publisher_new(&pub, &host, 42, fx.layout, events, 2, &dead_sink), 0);
	CHECK(publish_pages(&fx, pub, 0, 3) > 0);
	rt_publisher_place(pub, 0, &at[0]);
	rt_publisher_place(pub, 1, &at[1]);
	dead_records = count_kind(&dead, 'r', ".42.");
	at_mark = dead.n;
	CHECK(publish_pages(&fx, pub, 3, 6) > 0);
	rt_publisher_free(pub);
	CHECK_EQ(count_kind(&dead, 'k', ".42."), 2);

	CHECK_EQ(rt_publisher_new_from(&pub, &host, &(struct rt_publisher_from){
		.session = 42, .control = 1ULL << 40, .places = at }, fx.layout, events, 2,
		&next_sink), 0);
	CHECK(publish_pages(&fx, pub, 3, 6) > 0);
	rt_publisher_free(pub);
	CHECK_EQ(count_kind(&next, 'r', ".42."), count_kind(&dead, 'r', ".42.") - dead_records);
	CHECK_EQ(count_kind(&next, 'k', ".42."), 1);
	/* The same pages, the same ids in the same order: JetStream keeps one of each. */
	again = same_ids(&dead, at_mark, &next);
	CHECK_EQ(again, count_kind(&next, 'r', ".42.") + 1);
	CHECK(again > 1);
	for (const struct rt_pub_msg *m = next.head; m; m = m->next)
		if (strrchr(m->id, '.')[1] == 'c')
			CHECK(!has_id(&dead, m->id));
	rt_pub_msg_free_list(dead.head);
	rt_pub_msg_free_list(next.head);
	fixture_close(&fx);
}

/*
 * A run with no room for anything: each kernel loss still gets its own
 * message, numbered k0, k1 as in a run with room, so a run after a crash
 * gives them the same ids whatever room either had.
 */
static void test_kernel_loss_without_room(const char *root)
{
	struct rt_host host = { "h1", "6.1", "b00t", 2, "local" };
	struct kept full = { .tail = &full.head };
	const struct rt_publisher_sink sink = { never, keep, &full };
	struct rt_publisher *pub = NULL;
	struct rt_publisher_stats st;
	struct fixture fx;

	if (fixture_open(&fx, root, "stock", events)) {
		CHECK(!"fixture opens");
		return;
	}
	CHECK_EQ(rt_publisher_new(&pub, &host, 42, fx.layout, events, 2, &sink), 0);
	publish_pages(&fx, pub, 0, 6);
	rt_publisher_get_stats(pub, &st);
	CHECK(st.dropped > 0);
	CHECK_EQ(count_kind(&full, 'r', ".42."), 0);
	CHECK_EQ(count_kind(&full, 'k', ".42."), 2);
	CHECK(has_id(&full, "h1.b00t.42.0.k0") && has_id(&full, "h1.b00t.42.0.k1"));
	rt_publisher_free(pub);
	rt_pub_msg_free_list(full.head);
	fixture_close(&fx);
}

/* Reads the mark the tracking keeps, as a successor would. */
/* Every message below order_end answered, and the loop takes the answers in. */
static void answer_all(struct rt_nats_mark *m, uint64_t order_end)
{
	for (uint64_t o = 0; o < order_end; o++)
		rt_nats_mark_settle(m, o);
	rt_nats_mark_advance(m);
}

static struct rt_pub_place read_cpu0(struct rt_nats_mark *m, size_t size)
{
	struct rt_pub_place places[2] = { { 0 } };
	uint64_t session, runs, key;
	void *area = mmap(NULL, size, PROT_READ, MAP_SHARED, rt_nats_mark_fd(m), 0);

	CHECK(area != MAP_FAILED);
	if (area == MAP_FAILED)
		return places[0];
	CHECK_EQ(rt_pub_mark_read(area, size, 2, &session, &runs, &key, places), 0);
	CHECK_EQ(session, 42);
	munmap(area, size);
	return places[0];
}

/*
 * The daemon's tracking: a drain's note becomes the mark only once every
 * message before its end is answered, in whatever order the answers come;
 * a successor then reads the ring's place and the publisher's numbers.
 */
static void test_tracking(const char *root)
{
	struct rt_host host = { "h1", "6.1", "b00t", 2, "local" };
	struct kept sent = { .tail = &sent.head };
	const struct rt_publisher_sink sink = { always, keep, &sent };
	struct rt_ring_page_info before = { .events_before = 1000, .kernel_lost = 7 };
	struct rt_publisher *pub = NULL;
	struct rt_nats_mark *m = NULL;
	size_t size = rt_pub_mark_size(2);
	struct rt_pub_place p;
	struct fixture fx;
	unsigned int offered;

	if (fixture_open(&fx, root, "stock", events)) {
		CHECK(!"fixture opens");
		return;
	}
	CHECK_EQ(rt_nats_mark_new(&m, -1, 2, 16), 0);
	if (!m)
		return;
	rt_nats_mark_ring_at(m, 0, 100, &before);
	CHECK_EQ(rt_nats_mark_start(m, 42, 5), 0);
	p = read_cpu0(m, size);
	CHECK_EQ(p.page, 100);
	CHECK_EQ(p.events_before, 1000);
	CHECK_EQ(p.seq, 0);

	CHECK_EQ(rt_publisher_new(&pub, &host, 42, fx.layout, events, 2, &sink), 0);
	offered = publish_pages(&fx, pub, 0, 3);
	before.events_before = 1400;
	rt_nats_mark_ring_at(m, 0, 103, &before);
	rt_nats_mark_note(m, sent.next_order, pub);
	CHECK(sent.n > 3);
	/* Answers out of order, the first one last: the mark waits for it. */
	for (const struct rt_pub_msg *x = sent.head ? sent.head->next : NULL; x; x = x->next)
		rt_nats_mark_settle(m, x->order);
	rt_nats_mark_advance(m);
	CHECK_EQ(read_cpu0(m, size).page, 100);
	rt_nats_mark_settle(m, sent.head->order);
	rt_nats_mark_settle(m, sent.head->order);	/* a late second answer changes nothing */
	rt_nats_mark_advance(m);
	p = read_cpu0(m, size);
	CHECK_EQ(p.page, 103);
	CHECK_EQ(p.events_before, 1400);
	CHECK_EQ(p.kernel_lost, 7);
	CHECK_EQ(p.seq, offered);

	/*
	 * A message that failed for good: its records' report is still to go,
	 * so the note it fell in never becomes the mark, even once all is answered.
	 */
	publish_pages(&fx, pub, 3, 4);
	rt_nats_mark_ring_at(m, 0, 104, &before);
	rt_nats_mark_note(m, sent.next_order, pub);
	rt_nats_mark_failed(m);
	answer_all(m, sent.next_order);
	CHECK_EQ(read_cpu0(m, size).page, 103);
	/* A note taken after the report went, once answered: the mark moves. */
	publish_pages(&fx, pub, 4, 5);
	rt_nats_mark_ring_at(m, 0, 105, &before);
	rt_nats_mark_note(m, sent.next_order, pub);
	answer_all(m, sent.next_order);
	CHECK_EQ(read_cpu0(m, size).page, 105);

	/* An answer too far ahead to track: the mark stays where it is from then on. */
	publish_pages(&fx, pub, 5, 6);
	rt_nats_mark_ring_at(m, 0, 106, &before);
	rt_nats_mark_note(m, sent.next_order, pub);
	CHECK(!rt_nats_mark_stuck(m));
	rt_nats_mark_settle(m, sent.next_order + (1u << 22));
	answer_all(m, sent.next_order);
	CHECK_EQ(read_cpu0(m, size).page, 105);
	CHECK(rt_nats_mark_stuck(m));

	/* A successor publishing something else (another key) does not go on from it. */
	{
		struct rt_publisher_from from;
		struct rt_pub_place places[2];

		CHECK_EQ(rt_nats_mark_resume(m, 6, &from, places), -ESTALE);
		CHECK_EQ(rt_nats_mark_resume(m, 5, &from, places), 0);
		CHECK_EQ(from.session, 42);
		CHECK_EQ(from.control, 1ULL << 40);
		CHECK_EQ(places[0].page, 105);
	}

	rt_publisher_free(pub);
	rt_nats_mark_free(m);
	rt_pub_msg_free_list(sent.head);
	fixture_close(&fx);
}

int main(int argc, char **argv)
{
	const char *root = argc > 1 ? argv[1] : "tests/fixtures";

	test_area();
	test_same_ids(root);
	test_tracking(root);
	test_kernel_loss_without_room(root);
	return check_exit("test-publish-mark");
}
