// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <string.h>

#include "ring.h"

#define RING_ALIGN	64
#define RING_MAX_CPUS	8192
#define RING_MAX_SLOTS	(1u << 24)
#define RING_MAX_PAGE	(1u << 26)
#define RING_MAX_SIZE	(1ull << 40)

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

/* a * b + c, or 0 when it does not fit in a size_t. */
static size_t mul_add(size_t a, size_t b, size_t c)
{
	size_t r;

	if (__builtin_mul_overflow(a, b, &r) || __builtin_add_overflow(r, c, &r))
		return 0;
	return r;
}

static int plan(const struct rt_ring_geometry *g, struct rt_ring_head *h)
{
	size_t slots_bytes;

	if (!g->ncpus || g->ncpus > RING_MAX_CPUS || g->slots < 2 || g->slots > RING_MAX_SLOTS ||
	    !g->page_size || g->page_size > RING_MAX_PAGE)
		return -EINVAL;
	memset(h, 0, sizeof(*h));
	h->magic = RT_RING_MAGIC;
	h->version = RT_RING_VERSION;
	h->head_size = sizeof(*h);
	h->ncpus = g->ncpus;
	h->slots = g->slots;
	h->page_size = g->page_size;
	h->slot_head_size = (uint32_t)round_up(sizeof(struct rt_ring_slot), RING_ALIGN);
	h->slot_size = (uint32_t)round_up(h->slot_head_size + (size_t)g->page_size, RING_ALIGN);
	h->cpus_offset = round_up(sizeof(*h), RING_ALIGN);
	/* Slots start on a page of their own, apart from the counts. */
	h->slots_offset = round_up(h->cpus_offset + (size_t)g->ncpus * sizeof(struct rt_ring_cpu),
				   4096);
	slots_bytes = mul_add((size_t)g->ncpus * g->slots, h->slot_size, 0);
	if (!slots_bytes || slots_bytes > RING_MAX_SIZE)
		return -EINVAL;
	h->size = round_up(h->slots_offset + slots_bytes, 4096);
	return 0;
}

size_t rt_ring_size(const struct rt_ring_geometry *g)
{
	struct rt_ring_head h;

	return plan(g, &h) ? 0 : h.size;
}

int rt_ring_format(struct rt_ring *ring, void *base, size_t size,
		   const struct rt_ring_geometry *g)
{
	int ret = plan(g, &ring->head);

	if (ret)
		return ret;
	if (size < ring->head.size)
		return -EINVAL;
	ring->base = base;
	ring->size = size;
	memcpy(base, &ring->head, sizeof(ring->head));
	return 0;
}

int rt_ring_attach(struct rt_ring *ring, const void *base, size_t size)
{
	struct rt_ring_head *h = &ring->head;
	size_t end;

	if (size < sizeof(*h) || (uintptr_t)base % 8)
		return -EBADMSG;
	memcpy(h, base, sizeof(*h));
	if (h->magic != RT_RING_MAGIC)
		return -EBADMSG;
	if (h->version != RT_RING_VERSION)
		return -EPROTONOSUPPORT;
	/* A later writer may grow the headers; what this reader reads must be there. */
	if (h->head_size < sizeof(*h) || h->slot_head_size < sizeof(struct rt_ring_slot) ||
	    h->slot_head_size % 8 || h->slot_size % 8 || h->cpus_offset % 8 ||
	    h->slots_offset % 8 ||
	    !h->ncpus || h->ncpus > RING_MAX_CPUS || h->slots < 2 || h->slots > RING_MAX_SLOTS ||
	    !h->page_size || h->page_size > RING_MAX_PAGE ||
	    (uint64_t)h->slot_head_size + h->page_size > h->slot_size ||
	    h->cpus_offset < h->head_size || h->size > size)
		return -EBADMSG;
	end = mul_add(h->ncpus, sizeof(struct rt_ring_cpu), h->cpus_offset);
	if (!end || end > h->slots_offset || h->slots_offset > h->size)
		return -EBADMSG;
	end = mul_add((size_t)h->ncpus * h->slots, h->slot_size, h->slots_offset);
	if (!end || end > h->size)
		return -EBADMSG;
	ring->base = (uint8_t *)base;
	ring->size = size;
	return 0;
}

static struct rt_ring_cpu *cpu_of(const struct rt_ring *ring, unsigned int cpu)
{
	return (struct rt_ring_cpu *)(ring->base + ring->head.cpus_offset +
				      (size_t)cpu * sizeof(struct rt_ring_cpu));
}

static struct rt_ring_slot *slot_of(const struct rt_ring *ring, unsigned int cpu, uint64_t page)
{
	size_t index = (size_t)cpu * ring->head.slots + (size_t)(page % ring->head.slots);

	return (struct rt_ring_slot *)(ring->base + ring->head.slots_offset +
				       index * ring->head.slot_size);
}

uint64_t rt_ring_written(const struct rt_ring *ring, unsigned int cpu)
{
	if (cpu >= ring->head.ncpus)
		return 0;
	return __atomic_load_n(&cpu_of(ring, cpu)->written, __ATOMIC_ACQUIRE);
}

uint8_t *rt_ring_begin(struct rt_ring *ring, unsigned int cpu)
{
	uint64_t page = cpu_of(ring, cpu)->written;
	struct rt_ring_slot *slot = slot_of(ring, cpu, page);

	__atomic_store_n(&slot->seq, 2 * page + 1, __ATOMIC_RELAXED);
	/* The mark is seen before any byte of the page changes. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return (uint8_t *)slot + ring->head.slot_head_size;
}

void rt_ring_abort(struct rt_ring *ring, unsigned int cpu)
{
	uint64_t page = cpu_of(ring, cpu)->written;
	struct rt_ring_slot *slot = slot_of(ring, cpu, page);
	uint64_t held = page >= ring->head.slots ? page - ring->head.slots : 0;

	/* Nothing was read into the room: the page the slot held is whole again. */
	__atomic_store_n(&slot->seq, page >= ring->head.slots ? 2 * held + 2 : 0,
			 __ATOMIC_RELEASE);
}

/* The counts after a page (info's), for a successor after a crash: the page's own events added. */
static void store_next(struct rt_ring_cpu *c, uint64_t next_page,
		       const struct rt_ring_page_info *info)
{
	bool malformed = info->flags & RT_RING_MALFORMED;

	c->next_events_before = info->events_before + (malformed ? 0 : info->records);
	c->next_kernel_lost = info->kernel_lost;
	c->next_kernel_inexact = info->kernel_inexact;
	c->next_malformed = info->malformed + malformed;
	__atomic_store_n(&c->next_page, next_page, __ATOMIC_RELEASE);
}

int rt_ring_left_at(const struct rt_ring *ring, unsigned int cpu, uint64_t *next_page,
		    struct rt_ring_page_info *counts)
{
	const struct rt_ring_cpu *c;
	uint64_t written, next;

	if (cpu >= ring->head.ncpus)
		return -EBADMSG;
	c = cpu_of(ring, cpu);
	written = rt_ring_written(ring, cpu);
	next = __atomic_load_n(&c->next_page, __ATOMIC_ACQUIRE);
	if (next != written && next != written + 1)
		return -EBADMSG;
	*next_page = next;
	*counts = (struct rt_ring_page_info){
		.events_before = c->next_events_before, .kernel_lost = c->next_kernel_lost,
		.kernel_inexact = c->next_kernel_inexact, .malformed = c->next_malformed,
	};
	if (counts->kernel_lost > counts->events_before)
		return -EBADMSG;
	return 0;
}

const uint8_t *rt_ring_room_left(const struct rt_ring *ring, unsigned int cpu, uint64_t page,
				 uint64_t *held_page, struct rt_ring_page_info *held)
{
	const struct rt_ring_slot *slot;

	if (cpu >= ring->head.ncpus)
		return NULL;
	slot = slot_of(ring, cpu, page);
	if (__atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE) != 2 * page + 1)
		return NULL;
	*held_page = slot->page;
	*held = (struct rt_ring_page_info){
		.len = slot->len, .records = slot->records, .flags = slot->flags,
		.first_ts = slot->first_ts, .last_ts = slot->last_ts,
	};
	return (const uint8_t *)slot + ring->head.slot_head_size;
}

void rt_ring_commit(struct rt_ring *ring, unsigned int cpu, const struct rt_ring_page_info *info)
{
	struct rt_ring_cpu *c = cpu_of(ring, cpu);
	uint64_t page = c->written;
	struct rt_ring_slot *slot = slot_of(ring, cpu, page);

	slot->page = page;
	slot->events_before = info->events_before;
	slot->kernel_lost = info->kernel_lost;
	slot->kernel_inexact = info->kernel_inexact;
	slot->malformed = info->malformed;
	slot->first_ts = info->first_ts;
	slot->last_ts = info->last_ts;
	slot->len = info->len;
	slot->records = info->records;
	slot->flags = info->flags;
	__atomic_store_n(&slot->seq, 2 * page + 2, __ATOMIC_RELEASE);
	store_next(c, page + 1, info);
	__atomic_store_n(&c->written, page + 1, __ATOMIC_RELEASE);
}

int rt_ring_continue(struct rt_ring *ring, const struct rt_ring *from)
{
	if (ring->head.ncpus != from->head.ncpus)
		return -EINVAL;
	/* Its slots stay empty: pages below these numbers are read in from. */
	for (unsigned int cpu = 0; cpu < ring->head.ncpus; cpu++) {
		struct rt_ring_cpu *c = cpu_of(ring, cpu);
		struct rt_ring_page_info n = { 0 };
		uint64_t next;

		/* Where the last commit got to, a crash's cut one included. */
		if (rt_ring_left_at(from, cpu, &next, &n))
			next = rt_ring_written(from, cpu);
		c->written = next;
		/* Its counts too: a crash before the first page here still finds them. */
		c->next_events_before = n.events_before;
		c->next_kernel_lost = n.kernel_lost;
		c->next_kernel_inexact = n.kernel_inexact;
		c->next_malformed = n.malformed;
		c->next_page = next;
	}
	return 0;
}

uint64_t rt_ring_oldest(const struct rt_ring *ring, unsigned int cpu)
{
	uint64_t written = rt_ring_written(ring, cpu);
	uint32_t slots = ring->head.slots;
	/* The slot of page written - slots may be the one the writer reads into: kept off. */
	uint64_t page = written >= slots ? written - (slots - 1) : 0;

	if (cpu >= ring->head.ncpus)
		return 0;
	/* A ring that went on from another's starts with empty slots. */
	while (page < written &&
	       __atomic_load_n(&slot_of(ring, cpu, page)->seq, __ATOMIC_ACQUIRE) != 2 * page + 2)
		page++;
	return page;
}

void rt_ring_cursor_start(struct rt_ring_cursor *cur, uint64_t page, uint64_t events_before,
			  uint64_t kernel_lost, uint64_t kernel_inexact, uint64_t malformed)
{
	cur->page = page;
	cur->events = events_before;
	cur->kernel_lost = kernel_lost;
	cur->kernel_inexact = kernel_inexact;
	cur->malformed = malformed;
}

int rt_ring_cursor_at(const struct rt_ring *ring, unsigned int cpu, uint64_t page,
		      struct rt_ring_cursor *cur)
{
	const struct rt_ring_slot *slot;
	uint64_t seq;

	if (cpu >= ring->head.ncpus || page >= rt_ring_written(ring, cpu))
		return -ESTALE;
	slot = slot_of(ring, cpu, page);
	seq = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);
	if (seq != 2 * page + 2)
		return -ESTALE;
	rt_ring_cursor_start(cur, page, __atomic_load_n(&slot->events_before, __ATOMIC_RELAXED),
			     __atomic_load_n(&slot->kernel_lost, __ATOMIC_RELAXED),
			     __atomic_load_n(&slot->kernel_inexact, __ATOMIC_RELAXED),
			     __atomic_load_n(&slot->malformed, __ATOMIC_RELAXED));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&slot->seq, __ATOMIC_RELAXED) == seq ? 0 : -ESTALE;
}

uint64_t rt_ring_page_after(const struct rt_ring *ring, unsigned int cpu, uint64_t after)
{
	uint64_t lo = rt_ring_oldest(ring, cpu), hi = rt_ring_written(ring, cpu);

	if (lo >= hi)
		return hi;
	/* lo has fewer than `after` records before it (or is the oldest); hi is past the answer. */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		struct rt_ring_cursor cur;

		if (rt_ring_cursor_at(ring, cpu, mid, &cur))
			break;
		if (cur.events - cur.kernel_lost < after)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The slot's header as read between the two looks at its mark; checked only after the second. */
struct slot_copy {
	uint64_t page, events_before, kernel_lost, kernel_inexact, malformed, first_ts, last_ts;
	uint32_t len, records, flags;
};

static void copy_slot(const struct rt_ring *ring, const struct rt_ring_slot *slot,
		      struct slot_copy *s, void *buf)
{
	s->page = __atomic_load_n(&slot->page, __ATOMIC_RELAXED);
	s->events_before = __atomic_load_n(&slot->events_before, __ATOMIC_RELAXED);
	s->kernel_lost = __atomic_load_n(&slot->kernel_lost, __ATOMIC_RELAXED);
	s->kernel_inexact = __atomic_load_n(&slot->kernel_inexact, __ATOMIC_RELAXED);
	s->malformed = __atomic_load_n(&slot->malformed, __ATOMIC_RELAXED);
	s->first_ts = __atomic_load_n(&slot->first_ts, __ATOMIC_RELAXED);
	s->last_ts = __atomic_load_n(&slot->last_ts, __ATOMIC_RELAXED);
	s->len = __atomic_load_n(&slot->len, __ATOMIC_RELAXED);
	s->records = __atomic_load_n(&slot->records, __ATOMIC_RELAXED);
	s->flags = __atomic_load_n(&slot->flags, __ATOMIC_RELAXED);
	/* A torn length is caught by the second look; until then it must not overrun buf. */
	memcpy(buf, (const uint8_t *)slot + ring->head.slot_head_size,
	       s->len <= ring->head.page_size ? s->len : ring->head.page_size);
}

/* The copy against what the reader has accounted for: what was lost before it. */
static int account(const struct slot_copy *s, uint64_t page, const struct rt_ring_cursor *cur,
		   uint32_t page_size, struct rt_ring_read *out)
{
	uint64_t gap;

	if (s->page != page || s->len > page_size || s->events_before < cur->events ||
	    s->kernel_lost < cur->kernel_lost || s->kernel_inexact < cur->kernel_inexact ||
	    s->malformed < cur->malformed || s->first_ts > s->last_ts)
		return -EBADMSG;
	gap = s->events_before - cur->events;
	out->lost_kernel = s->kernel_lost - cur->kernel_lost;
	if (out->lost_kernel > gap)
		return -EBADMSG;
	out->lost_ring = gap - out->lost_kernel;
	out->lost_kernel_inexact = s->kernel_inexact - cur->kernel_inexact;
	out->lost_malformed = s->malformed - cur->malformed;
	out->page = page;
	out->len = s->len;
	out->records = s->flags & RT_RING_MALFORMED ? 0 : s->records;
	out->flags = s->flags;
	out->first_ts = s->first_ts;
	out->last_ts = s->last_ts;
	return 0;
}

/* Laps in a row before giving up for now: so fast a writer leaves nothing whole to read. */
#define RING_READ_TRIES 64

int rt_ring_read(const struct rt_ring *ring, unsigned int cpu, struct rt_ring_cursor *cur,
		 void *buf, size_t buf_size, struct rt_ring_read *out)
{
	const uint32_t slots = ring->head.slots;

	if (cpu >= ring->head.ncpus || buf_size < ring->head.page_size)
		return -EINVAL;
	for (int tries = 0; tries < RING_READ_TRIES; tries++) {
		uint64_t written = rt_ring_written(ring, cpu), page = cur->page, seq1, seq2;
		const struct rt_ring_slot *slot;
		struct slot_copy s;
		int ret;

		if (page >= written)
			return 0;
		/* The writer may be reading into the slot of page written - slots: keep off it. */
		if (written - page >= slots)
			page = written - (slots - 1);
		slot = slot_of(ring, cpu, page);
		seq1 = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);
		if (seq1 != 2 * page + 2) {
			/* Older than the count says: a lie; newer: the writer lapped us. */
			if (seq1 < 2 * page + 2)
				return -EBADMSG;
			continue;
		}
		copy_slot(ring, slot, &s, buf);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		seq2 = __atomic_load_n(&slot->seq, __ATOMIC_RELAXED);
		if (seq2 != seq1)
			continue;
		ret = account(&s, page, cur, ring->head.page_size, out);
		if (ret)
			return ret;
		cur->page = page + 1;
		cur->events = s.events_before + out->records;
		cur->kernel_lost = s.kernel_lost;
		cur->kernel_inexact = s.kernel_inexact;
		cur->malformed = s.malformed + (s.flags & RT_RING_MALFORMED ? 1 : 0);
		return 1;
	}
	return 0;
}
