// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The page ring: pages read back whole and in order with their counts, a
 * reader the writer lapped told exactly what it missed and why, a slot
 * being rewritten never delivered (one thread writing while another reads
 * every page it can, each page's bytes saying which page it is), an
 * area whose numbers contradict themselves refused, and a restarted
 * writer's new area going on with the old one's page numbers.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "check.h"
#include "ring.h"

struct area {
	struct rt_ring ring;
	void *base;
	size_t size;
};

static int area_new(struct area *a, unsigned int ncpus, unsigned int slots, unsigned int page_size)
{
	struct rt_ring_geometry g = { .ncpus = ncpus, .slots = slots, .page_size = page_size };

	a->size = rt_ring_size(&g);
	if (!a->size || posix_memalign(&a->base, 4096, a->size))
		return -ENOMEM;
	memset(a->base, 0, a->size);
	return rt_ring_format(&a->ring, a->base, a->size, &g);
}

/* A page of `records` events whose every byte is its number, as a writer would commit it. */
static void write_page(struct rt_ring *ring, unsigned int cpu, uint64_t *events, uint64_t *lost,
		       uint32_t records, uint64_t kernel_loss)
{
	uint64_t page = rt_ring_written(ring, cpu);
	uint8_t *room = rt_ring_begin(ring, cpu);
	struct rt_ring_page_info info = { 0 };

	memset(room, (int)(page & 0xff), ring->head.page_size);
	*events += kernel_loss;
	*lost += kernel_loss;
	info.len = ring->head.page_size;
	info.records = records;
	info.events_before = *events;
	info.kernel_lost = *lost;
	info.first_ts = page * 10;
	info.last_ts = page * 10 + 9;
	rt_ring_commit(ring, cpu, &info);
	*events += records;
}

static bool page_is(const uint8_t *buf, size_t len, uint64_t page)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != (uint8_t)(page & 0xff))
			return false;
	return true;
}

static void test_geometry(void)
{
	struct rt_ring_geometry bad[] = {
		{ 0, 4, 4096 }, { 1, 1, 4096 }, { 1, 4, 0 }, { 9000, 4, 4096 },
		{ 1, 1u << 25, 4096 }, { 8192, 1u << 24, 1u << 26 },
	};
	struct rt_ring_geometry g = { .ncpus = 3, .slots = 8, .page_size = 4096 };
	struct rt_ring r;
	struct area a;
	size_t size = rt_ring_size(&g);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_EQ(rt_ring_size(&bad[i]), 0);
	/* Room for every slot's header and page, on whole pages of memory. */
	CHECK(size >= 3 * 8 * (4096 + sizeof(struct rt_ring_slot)));
	CHECK_EQ(size % 4096, 0);
	CHECK_EQ(area_new(&a, 3, 8, 4096), 0);
	CHECK_EQ(a.size, size);
	CHECK_EQ(rt_ring_attach(&r, a.base, a.size), 0);
	CHECK_EQ(r.head.ncpus, 3);
	CHECK_EQ(r.head.slots, 8);
	CHECK_EQ(r.head.page_size, 4096);
	CHECK_EQ(rt_ring_written(&r, 2), 0);
	/* Too short a mapping for what the header says, a bad magic, another version. */
	CHECK_EQ(rt_ring_attach(&r, a.base, a.size - 1), -EBADMSG);
	((struct rt_ring_head *)a.base)->version = 2;
	CHECK_EQ(rt_ring_attach(&r, a.base, a.size), -EPROTONOSUPPORT);
	((struct rt_ring_head *)a.base)->version = RT_RING_VERSION;
	((struct rt_ring_head *)a.base)->slots_offset = a.size - 4096;
	CHECK_EQ(rt_ring_attach(&r, a.base, a.size), -EBADMSG);
	((struct rt_ring_head *)a.base)->magic ^= 1;
	CHECK_EQ(rt_ring_attach(&r, a.base, a.size), -EBADMSG);
	free(a.base);
}

static void test_in_order(void)
{
	uint64_t events = 0, lost = 0;
	struct rt_ring_cursor cur;
	struct rt_ring_read out;
	struct rt_ring reader;
	uint8_t buf[256];
	struct area a;

	CHECK_EQ(area_new(&a, 2, 4, sizeof(buf)), 0);
	CHECK_EQ(rt_ring_attach(&reader, a.base, a.size), 0);
	rt_ring_cursor_start(&cur, 0, 0, 0, 0, 0);
	CHECK_EQ(rt_ring_read(&reader, 1, &cur, buf, sizeof(buf), &out), 0);
	for (uint64_t page = 0; page < 12; page++) {
		write_page(&a.ring, 1, &events, &lost, (uint32_t)page + 1, page == 5 ? 7 : 0);
		CHECK_EQ(rt_ring_read(&reader, 1, &cur, buf, sizeof(buf), &out), 1);
		CHECK_EQ(out.page, page);
		CHECK_EQ(out.records, page + 1);
		CHECK_EQ(out.lost_ring, 0);
		CHECK_EQ(out.lost_kernel, page == 5 ? 7 : 0);
		CHECK_EQ(out.first_ts, page * 10);
		CHECK(page_is(buf, out.len, page));
		CHECK_EQ(rt_ring_read(&reader, 1, &cur, buf, sizeof(buf), &out), 0);
	}
	/* 1 + 2 + ... + 12 read, 7 lost: all accounted for. */
	CHECK_EQ(cur.events, 78 + 7);
	CHECK_EQ(rt_ring_written(&reader, 0), 0);
	CHECK_EQ(rt_ring_read(&reader, 2, &cur, buf, sizeof(buf), &out), -EINVAL);
	CHECK_EQ(rt_ring_read(&reader, 1, &cur, buf, sizeof(buf) - 1, &out), -EINVAL);
	free(a.base);
}

static void test_lapped(void)
{
	uint64_t events = 0, lost = 0;
	struct rt_ring_cursor cur;
	struct rt_ring_read out;
	uint8_t buf[128];
	struct area a;

	CHECK_EQ(area_new(&a, 1, 4, sizeof(buf)), 0);
	rt_ring_cursor_start(&cur, 0, 0, 0, 0, 0);
	/* 10 pages of 5 events, 100 lost by the kernel before page 3 and 11 before page 8. */
	for (uint64_t page = 0; page < 10; page++)
		write_page(&a.ring, 0, &events, &lost, 5, page == 3 ? 100 : page == 8 ? 11 : 0);
	/*
	 * Four slots, and the next write goes into the oldest: pages 7 to 9 can
	 * be read. Pages 0 to 6 (35 events) were overwritten in the ring; the
	 * kernel's 100 came before them.
	 */
	CHECK_EQ(rt_ring_read(&a.ring, 0, &cur, buf, sizeof(buf), &out), 1);
	CHECK_EQ(out.page, 7);
	CHECK_EQ(out.lost_ring, 35);
	CHECK_EQ(out.lost_kernel, 100);
	CHECK(page_is(buf, out.len, 7));
	CHECK_EQ(rt_ring_read(&a.ring, 0, &cur, buf, sizeof(buf), &out), 1);
	CHECK_EQ(out.page, 8);
	CHECK_EQ(out.lost_ring, 0);
	CHECK_EQ(out.lost_kernel, 11);
	/* Every event written is read or reported lost. */
	CHECK_EQ(rt_ring_read(&a.ring, 0, &cur, buf, sizeof(buf), &out), 1);
	CHECK_EQ(cur.events, events);
	CHECK_EQ(events, 10 * 5 + 111);

	/* A page being written is never read: its slot's old page is off limits, the new not yet. */
	rt_ring_cursor_start(&cur, 7, 7 * 5 + 100, 100, 0, 0);
	write_page(&a.ring, 0, &events, &lost, 5, 0);	/* page 10 overwrites page 6 */
	(void)rt_ring_begin(&a.ring, 0);		/* page 11 begun over page 7 */
	CHECK_EQ(rt_ring_read(&a.ring, 0, &cur, buf, sizeof(buf), &out), 1);
	CHECK_EQ(out.page, 8);
	CHECK_EQ(out.lost_ring, 5);
	/* No page came: page 7 is whole again, but the reader has gone past it. */
	rt_ring_abort(&a.ring, 0);
	CHECK_EQ(rt_ring_written(&a.ring, 0), 11);
	CHECK_EQ(((struct rt_ring_slot *)((uint8_t *)a.base + a.ring.head.slots_offset +
					  3 * a.ring.head.slot_size))->seq, 2 * 7 + 2);
	rt_ring_cursor_start(&cur, 7, 7 * 5 + 100, 100, 0, 0);
	CHECK_EQ(rt_ring_read(&a.ring, 0, &cur, buf, sizeof(buf), &out), 1);
	CHECK_EQ(out.page, 8);
	free(a.base);
}

static void test_malformed_and_inexact(void)
{
	struct rt_ring_page_info info = { .len = 64, .records = 3 };
	struct rt_ring_cursor cur;
	struct rt_ring_read out;
	uint8_t buf[64];
	struct area a;

	CHECK_EQ(area_new(&a, 1, 8, sizeof(buf)), 0);
	rt_ring_cursor_start(&cur, 0, 0, 0, 0, 0);
	(void)rt_ring_begin(&a.ring, 0);
	rt_ring_commit(&a.ring, 0, &info);
	(void)rt_ring_begin(&a.ring, 0);
	info.flags = RT_RING_MALFORMED;
	info.events_before = 3;
	rt_ring_commit(&a.ring, 0, &info);
	(void)rt_ring_begin(&a.ring, 0);
	info.flags = 0;
	info.malformed = 1;
	info.kernel_inexact = 1;
	rt_ring_commit(&a.ring, 0, &info);
	CHECK_EQ(rt_ring_read(&a.ring, 0, &cur, buf, sizeof(buf), &out), 1);
	CHECK_EQ(rt_ring_read(&a.ring, 0, &cur, buf, sizeof(buf), &out), 1);
	CHECK(out.flags & RT_RING_MALFORMED);
	CHECK_EQ(out.records, 0);
	CHECK_EQ(rt_ring_read(&a.ring, 0, &cur, buf, sizeof(buf), &out), 1);
	CHECK_EQ(out.lost_malformed, 0);	/* the malformed page itself was delivered flagged */
	CHECK_EQ(out.lost_kernel_inexact, 1);
	CHECK_EQ(out.lost_ring, 0);
	CHECK_EQ(cur.events, 6);
	/* Lapped past the malformed page: it is counted, as a page. */
	rt_ring_cursor_start(&cur, 0, 0, 0, 0, 0);
	cur.page = 2;
	CHECK_EQ(rt_ring_read(&a.ring, 0, &cur, buf, sizeof(buf), &out), 1);
	CHECK_EQ(out.lost_malformed, 1);
	CHECK_EQ(out.lost_ring, 3);
	free(a.base);
}

/* The area lies: each lie is refused, not believed. */
static void test_contradictions(void)
{
	uint64_t events = 0, lost = 0;
	struct rt_ring_cursor cur;
	struct rt_ring_read out;
	struct rt_ring_slot *slot;
	uint8_t buf[64];
	struct area a;

	CHECK_EQ(area_new(&a, 1, 4, sizeof(buf)), 0);
	write_page(&a.ring, 0, &events, &lost, 2, 0);
	write_page(&a.ring, 0, &events, &lost, 2, 0);
	slot = (struct rt_ring_slot *)((uint8_t *)a.base + a.ring.head.slots_offset);
	rt_ring_cursor_start(&cur, 0, 0, 0, 0, 0);
	slot->page = 1;
	CHECK_EQ(rt_ring_read(&a.ring, 0, &cur, buf, sizeof(buf), &out), -EBADMSG);
	slot->page = 0;
	slot->len = sizeof(buf) + 1;
	CHECK_EQ(rt_ring_read(&a.ring, 0, &cur, buf, sizeof(buf), &out), -EBADMSG);
	slot->len = sizeof(buf);
	slot->kernel_lost = 5;	/* more lost than the events before the page */
	CHECK_EQ(rt_ring_read(&a.ring, 0, &cur, buf, sizeof(buf), &out), -EBADMSG);
	slot->kernel_lost = 0;
	rt_ring_cursor_start(&cur, 0, 9, 0, 0, 0);	/* counts going backwards */
	CHECK_EQ(rt_ring_read(&a.ring, 0, &cur, buf, sizeof(buf), &out), -EBADMSG);
	rt_ring_cursor_start(&cur, 0, 0, 0, 0, 0);
	slot->seq = 0;		/* counted as written, never marked whole */
	CHECK_EQ(rt_ring_read(&a.ring, 0, &cur, buf, sizeof(buf), &out), -EBADMSG);
	slot->seq = 2;
	CHECK_EQ(rt_ring_read(&a.ring, 0, &cur, buf, sizeof(buf), &out), 1);
	CHECK_EQ(out.records, 2);
	free(a.base);
}

/* One writer and one reader at once: what is read is whole, and all is accounted for. */
#define RACE_PAGES 30000
#define RACE_PAGE_SIZE 4096

struct race {
	struct area a;
	uint64_t events;
	volatile int done;
};

static void *race_writer(void *arg)
{
	struct race *r = arg;
	uint64_t lost = 0;

	for (uint64_t page = 0; page < RACE_PAGES; page++) {
		write_page(&r->a.ring, 0, &r->events, &lost, (uint32_t)(page % 7) + 1, 0);
		/* Now and then let the reader catch up, so that it reads as well as laps. */
		if (page % 16 == 0)
			sched_yield();
	}
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_race(void)
{
	uint64_t read_pages = 0, read_events = 0, lost = 0, torn = 0, last = 0;
	struct rt_ring_cursor cur;
	struct rt_ring_read out;
	uint8_t buf[RACE_PAGE_SIZE];
	struct race r = { 0 };
	pthread_t writer;
	int ret;

	CHECK_EQ(area_new(&r.a, 1, 4, RACE_PAGE_SIZE), 0);
	rt_ring_cursor_start(&cur, 0, 0, 0, 0, 0);
	if (pthread_create(&writer, NULL, race_writer, &r)) {
		CHECK(!"pthread_create");
		return;
	}
	for (;;) {
		int done = __atomic_load_n(&r.done, __ATOMIC_ACQUIRE);

		while ((ret = rt_ring_read(&r.a.ring, 0, &cur, buf, sizeof(buf), &out)) == 1) {
			if (!page_is(buf, out.len, out.page) || out.records != out.page % 7 + 1)
				torn++;
			if (read_pages && out.page <= last)
				torn++;
			last = out.page;
			read_pages++;
			read_events += out.records;
			lost += out.lost_ring;
		}
		if (ret < 0 || done)
			break;
		sched_yield();
	}
	pthread_join(writer, NULL);
	while (rt_ring_read(&r.a.ring, 0, &cur, buf, sizeof(buf), &out) == 1) {
		read_events += out.records;
		lost += out.lost_ring;
		read_pages++;
	}
	CHECK_EQ(ret < 0 ? ret : 0, 0);
	CHECK_EQ(torn, 0);
	CHECK(read_pages > 0);
	CHECK_EQ(read_events + lost, r.events);
	printf("race: %" PRIu64 " pages read, %" PRIu64 " events read, %" PRIu64 " lost in laps\n",
	       read_pages, read_events, lost);
	free(r.a.base);
}

/*
 * A restart: the new daemon's empty ring goes on with the old one's page
 * numbers (a reader reads what the old one holds there, then the new one
 * from those numbers on); another number of CPUs is refused.
 */
static void test_continue(void)
{
	uint64_t events = 0, lost = 0, e1 = 0, l1 = 0;
	struct rt_ring_cursor cur;
	struct rt_ring_read out;
	struct area old, new, other;
	uint8_t buf[128];

	CHECK_EQ(area_new(&old, 2, 4, sizeof(buf)), 0);
	CHECK_EQ(area_new(&new, 2, 8, sizeof(buf)), 0);
	CHECK_EQ(area_new(&other, 3, 4, sizeof(buf)), 0);
	for (uint64_t page = 0; page < 6; page++)
		write_page(&old.ring, 0, &events, &lost, 3, page == 4 ? 9 : 0);
	write_page(&old.ring, 1, &e1, &l1, 2, 0);
	CHECK_EQ(rt_ring_continue(&other.ring, &old.ring), -EINVAL);
	CHECK_EQ(rt_ring_continue(&new.ring, &old.ring), 0);
	CHECK_EQ(rt_ring_written(&new.ring, 0), 6);
	CHECK_EQ(rt_ring_written(&new.ring, 1), 1);
	/* Nothing to read in the new one yet at the old one's end. */
	rt_ring_cursor_start(&cur, 6, events, lost, 0, 0);
	CHECK_EQ(rt_ring_read(&new.ring, 0, &cur, buf, sizeof(buf), &out), 0);
	/* A reader at page 4 of the old ring: 4 and 5 there, then 6 and 7 in the new one. */
	rt_ring_cursor_start(&cur, 4, 4 * 3, 0, 0, 0);
	for (int i = 0; i < 2; i++)
		write_page(&new.ring, 0, &events, &lost, 3, 0);
	for (uint64_t page = 4; page < 8; page++) {
		struct rt_ring *in = page < rt_ring_written(&old.ring, 0) ? &old.ring : &new.ring;

		CHECK_EQ(rt_ring_read(in, 0, &cur, buf, sizeof(buf), &out), 1);
		CHECK_EQ(out.page, page);
		CHECK_EQ(out.lost_ring, 0);
		CHECK_EQ(out.lost_kernel, page == 4 ? 9 : 0);
		CHECK(page_is(buf, out.len, page));
	}
	CHECK_EQ(rt_ring_read(&new.ring, 0, &cur, buf, sizeof(buf), &out), 0);
	CHECK_EQ(cur.events, events);
	free(old.base);
	free(new.base);
	free(other.base);
}

/*
 * A writer that died: its counts after the last commit (or a commit cut
 * between its two stores), the page it had begun (its room, and what the
 * slot held a lap before), the oldest page a continued area holds, and a
 * second continuation going on from the counts, not from zeros.
 */
static void test_crash(void)
{
	uint64_t events = 0, lost = 0, next, held_page;
	struct rt_ring_page_info n, held;
	struct area a, b, c;
	const uint8_t *room;
	uint8_t *begun;

	CHECK_EQ(area_new(&a, 1, 4, 64), 0);
	CHECK_EQ(area_new(&b, 1, 4, 64), 0);
	CHECK_EQ(area_new(&c, 1, 4, 64), 0);
	CHECK_EQ(rt_ring_left_at(&a.ring, 0, &next, &n), 0);
	CHECK(next == 0 && n.events_before == 0);
	CHECK(!rt_ring_room_left(&a.ring, 0, 0, &held_page, &held));
	for (int i = 0; i < 5; i++)
		write_page(&a.ring, 0, &events, &lost, 7, i == 3 ? 2 : 0);
	CHECK_EQ(rt_ring_left_at(&a.ring, 0, &next, &n), 0);
	CHECK_EQ(next, 5);
	CHECK_EQ(n.events_before, events);
	CHECK_EQ(n.kernel_lost, 2);
	CHECK_EQ(rt_ring_oldest(&a.ring, 0), 2);
	/* Page 5 begun, its read done, no commit: the room, and page 1's header a lap before. */
	begun = rt_ring_begin(&a.ring, 0);
	memset(begun, 0x55, 64);
	room = rt_ring_room_left(&a.ring, 0, 5, &held_page, &held);
	CHECK(room == begun);
	CHECK_EQ(held_page, 1);
	CHECK_EQ(held.last_ts, 19);
	CHECK(!rt_ring_room_left(&a.ring, 0, 4, &held_page, &held));
	/* Goes on where the last commit got to; a second continuation from its counts. */
	CHECK_EQ(rt_ring_continue(&b.ring, &a.ring), 0);
	CHECK_EQ(rt_ring_written(&b.ring, 0), 5);
	CHECK_EQ(rt_ring_oldest(&b.ring, 0), 5);
	CHECK_EQ(rt_ring_continue(&c.ring, &b.ring), 0);
	CHECK_EQ(rt_ring_left_at(&c.ring, 0, &next, &n), 0);
	CHECK(next == 5 && n.events_before == events && n.kernel_lost == 2);
	/* A commit cut after its slot was whole, before the count moved: counted as done. */
	rt_ring_abort(&a.ring, 0);
	write_page(&a.ring, 0, &events, &lost, 7, 0);
	((struct rt_ring_cpu *)((uint8_t *)a.base + a.ring.head.cpus_offset))->written = 5;
	CHECK_EQ(rt_ring_left_at(&a.ring, 0, &next, &n), 0);
	CHECK_EQ(next, 6);
	CHECK_EQ(n.events_before, events);
	((struct rt_ring_cpu *)((uint8_t *)a.base + a.ring.head.cpus_offset))->written = 3;
	CHECK_EQ(rt_ring_left_at(&a.ring, 0, &next, &n), -EBADMSG);
	free(a.base);
	free(b.base);
	free(c.base);
}

/*
 * A cursor on a page just written (a subscriber whose queue filled catches
 * up from it): that page reads with no loss before it, a later lap is
 * counted from there exactly, and a page the ring holds no more is refused.
 */
static void test_cursor_at(void)
{
	uint64_t events = 0, lost = 0;
	struct rt_ring_cursor cur;
	struct rt_ring_read out;
	uint8_t buf[128];
	struct area a;

	CHECK_EQ(area_new(&a, 1, 4, sizeof(buf)), 0);
	for (uint64_t page = 0; page < 6; page++)
		write_page(&a.ring, 0, &events, &lost, 5, page == 5 ? 7 : 0);
	/* Page 5: 25 events and 7 lost before it, the 7 told already. */
	CHECK_EQ(rt_ring_cursor_at(&a.ring, 0, 5, &cur), 0);
	CHECK_EQ(cur.page, 5);
	CHECK_EQ(cur.events, 32);
	CHECK_EQ(cur.kernel_lost, 7);
	CHECK_EQ(rt_ring_read(&a.ring, 0, &cur, buf, sizeof(buf), &out), 1);
	CHECK_EQ(out.page, 5);
	CHECK_EQ(out.lost_kernel + out.lost_ring, 0);
	CHECK(page_is(buf, out.len, 5));
	/* From page 5 again, lapped by 4 pages and 2 lost by the kernel: 3 pages (15) gone. */
	CHECK_EQ(rt_ring_cursor_at(&a.ring, 0, 5, &cur), 0);
	for (uint64_t page = 6; page < 10; page++)
		write_page(&a.ring, 0, &events, &lost, 5, page == 7 ? 2 : 0);
	CHECK_EQ(rt_ring_read(&a.ring, 0, &cur, buf, sizeof(buf), &out), 1);
	CHECK_EQ(out.page, 7);
	CHECK_EQ(out.lost_ring, 10);
	CHECK_EQ(out.lost_kernel, 2);
	/* Overwritten, or not written yet: no cursor. */
	CHECK_EQ(rt_ring_cursor_at(&a.ring, 0, 5, &cur), -ESTALE);
	CHECK_EQ(rt_ring_cursor_at(&a.ring, 0, 10, &cur), -ESTALE);
	CHECK_EQ(rt_ring_cursor_at(&a.ring, 1, 9, &cur), -ESTALE);
	free(a.base);
}

static void test_page_after(void)
{
	/* Records a page (the fourth with 7 kernel losses before it, the fifth empty). */
	static const uint32_t records[] = { 5, 5, 5, 5, 0, 5 };
	uint64_t events = 0, lost = 0;
	struct area a;

	CHECK_EQ(area_new(&a, 2, 8, 64), 0);
	CHECK_EQ(rt_ring_page_after(&a.ring, 0, 0), 0);
	for (unsigned int i = 0; i < 6; i++)
		write_page(&a.ring, 0, &events, &lost, records[i], i == 2 ? 7 : 0);
	/*
	 * Records before each page: 0, 5, 10 (the kernel's 7 not numbered), 15,
	 * 20, 20. The page that holds record `after`: the losses before the
	 * next one (the 7) are read there, not passed over.
	 */
	CHECK_EQ(rt_ring_page_after(&a.ring, 0, 0), 0);
	CHECK_EQ(rt_ring_page_after(&a.ring, 0, 3), 0);
	CHECK_EQ(rt_ring_page_after(&a.ring, 0, 5), 0);
	CHECK_EQ(rt_ring_page_after(&a.ring, 0, 10), 1);
	CHECK_EQ(rt_ring_page_after(&a.ring, 0, 12), 2);
	CHECK_EQ(rt_ring_page_after(&a.ring, 0, 20), 3);
	CHECK_EQ(rt_ring_page_after(&a.ring, 0, 21), 5);
	CHECK_EQ(rt_ring_page_after(&a.ring, 0, 1000), 5);
	/* Lapped: pages 0 to 4 overwritten, an older place starts at the oldest. */
	for (unsigned int i = 0; i < 6; i++)
		write_page(&a.ring, 0, &events, &lost, 5, 0);
	CHECK_EQ(rt_ring_oldest(&a.ring, 0), 5);
	CHECK_EQ(rt_ring_page_after(&a.ring, 0, 3), 5);
	CHECK_EQ(rt_ring_page_after(&a.ring, 0, 26), 6);
	CHECK_EQ(rt_ring_page_after(&a.ring, 0, 50), 10);
	CHECK_EQ(rt_ring_page_after(&a.ring, 0, 51), 11);
	/* A CPU with no whole page: the writer's place. */
	CHECK_EQ(rt_ring_page_after(&a.ring, 1, 0), 0);
	free(a.base);
}

int main(void)
{
	test_geometry();
	test_in_order();
	test_lapped();
	test_malformed_and_inexact();
	test_contradictions();
	test_race();
	test_continue();
	test_crash();
	test_cursor_at();
	test_page_after();
	return check_exit("ring");
}
