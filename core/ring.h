/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * ring: the page ring, one circle of slots per CPU in one shared memory
 * area. ringtapd read()s each page from trace_pipe_raw straight into the
 * next slot of its CPU (the only copy of a page it makes), and local
 * readers map the area read-only and take pages from it themselves.
 *
 * The area is ringtap's own structure, not the kernel's: its header says
 * how it is cut (CPUs, slots, page room), and every slot's header says
 * which page it holds and how many events came before it on that CPU, so
 * that a reader that was lapped by the writer knows exactly what it missed.
 *
 * Writing and reading a slot is a sequence lock: the writer marks the slot
 * odd before the page is read into it and even with the page's number when
 * it is whole; a reader copies the slot out, then checks the mark again,
 * and never delivers a copy the writer touched meanwhile. One writer per
 * CPU (ringtapd's loop), any number of readers, no reader ever slows the
 * writer. Pure: works on (base, size); no descriptor, no log. The area a
 * reader maps is untrusted: every number in it is checked before use.
 *
 * Integers are in the host's byte order: the area never leaves the machine.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RT_RING_MAGIC	0x3130474e49525452ULL	/* "RTRING01" in memory on a little-endian host */
#define RT_RING_VERSION	1

/* At offset 0. */
struct rt_ring_head {
	uint64_t magic;
	uint32_t version;
	uint32_t head_size;		/* sizeof(struct rt_ring_head) of the writer */
	uint32_t ncpus;
	uint32_t slots;			/* per CPU */
	uint32_t page_size;		/* room for a page in each slot (the sub-buffer size) */
	uint32_t slot_size;		/* a slot's header and page room, a multiple of 64 */
	uint32_t slot_head_size;	/* where the page starts in a slot */
	uint32_t reserved;
	uint64_t cpus_offset;		/* struct rt_ring_cpu[ncpus], 64 bytes apart */
	/* CPU c's slot i at slots_offset + (c * slots + i) * slot_size */
	uint64_t slots_offset;
	uint64_t size;			/* of the whole area */
};

/*
 * One per CPU, on a cache line of its own. After written, the writer's own
 * record of its counts after page next_page - 1 (readers need not look):
 * what a ringtapd that takes the area over after a crash goes on from.
 * Stored before written moves, so next_page is written or written + 1.
 */
struct rt_ring_cpu {
	uint64_t written;		/* pages whole so far: numbers below it are written */
	uint64_t next_page;		/* the counts below are those before this page */
	uint64_t next_events_before, next_kernel_lost, next_kernel_inexact, next_malformed;
	uint64_t reserved[2];
};

/* Flags of a slot. */
enum {
	RT_RING_MALFORMED = 1 << 0,	/* the page failed the daemon's checks: no record is read */
};

/* Before each page; the page follows at slot_head_size. */
struct rt_ring_slot {
	uint64_t seq;			/* 2 * page + 2: page is whole; odd: being written */
	uint64_t page;			/* its number on this CPU, from 0 */
	/*
	 * Events on this CPU before this page: read in earlier pages and lost
	 * by the kernel, that loss before this page included. Malformed pages
	 * count none (how many they held is unknown).
	 */
	uint64_t events_before;
	uint64_t kernel_lost;		/* of events_before, lost by the kernel */
	uint64_t kernel_inexact;	/* losses given no count ("some"): not in events_before */
	uint64_t malformed;		/* malformed pages on this CPU before this one */
	uint64_t first_ts, last_ts;	/* of its first and last record, trace clock */
	uint32_t len;			/* bytes of the page */
	uint32_t records;		/* events in it, as the daemon counted them */
	uint32_t flags;			/* RT_RING_* */
	uint32_t reserved;
};

/* The geometry; sizes of 0 mean the numbers do not make an area (overflow, zero). */
struct rt_ring_geometry {
	unsigned int ncpus;
	unsigned int slots;
	unsigned int page_size;
};

/* Bytes an area of this geometry takes; 0 when it cannot be made. */
size_t rt_ring_size(const struct rt_ring_geometry *g);

/* An area as one side sees it: the header copied out and checked, and where it lies. */
struct rt_ring {
	uint8_t *base;
	size_t size;
	struct rt_ring_head head;	/* private copy: never re-read from the area */
};

/*
 * The writer: lays out a zeroed area of rt_ring_size(g) bytes at base.
 * 0, or -EINVAL for a geometry that makes none.
 */
int rt_ring_format(struct rt_ring *ring, void *base, size_t size,
		   const struct rt_ring_geometry *g);

/*
 * A reader: takes the area mapped at base (size bytes, read-only) after
 * checking its header against size. 0, -EBADMSG (not a ring, or numbers
 * that do not fit in size), -EPROTONOSUPPORT (a version this code does not read).
 */
int rt_ring_attach(struct rt_ring *ring, const void *base, size_t size);

/*
 * The writer of a new, empty area, before it writes a page: each CPU's
 * page numbers go on from from's (a restarted ringtapd's ring after the
 * one the last ringtapd wrote, which no one writes any more). A reader
 * reads pages below from's written counts in from, the rest in the new
 * area; no page is copied. 0, or -EINVAL for another number of CPUs.
 */
int rt_ring_continue(struct rt_ring *ring, const struct rt_ring *from);
/*
 * The oldest page whole in the area on the CPU (rt_ring_written() when
 * none is): where a reader that wants all it holds starts.
 */
uint64_t rt_ring_oldest(const struct rt_ring *ring, unsigned int cpu);
/*
 * A writer gone without a word (a crash): the CPU's next page number and
 * the counts before it, as its last commit left them (a commit cut between
 * its two stores counts as done: its slot was whole first). 0, or -EBADMSG
 * when the area's numbers do not agree.
 */
struct rt_ring_page_info;
int rt_ring_left_at(const struct rt_ring *ring, unsigned int cpu, uint64_t *next_page,
		    struct rt_ring_page_info *counts);
/*
 * After a crash: the room of the CPU's page `page` when its slot is still
 * marked as being written (the writer died between its read and its
 * commit), with what the slot's header says (*held: the page it held
 * before, or this one's where the commit had begun: held_page says which);
 * NULL otherwise. The caller decides whether the room holds a page read.
 */
const uint8_t *rt_ring_room_left(const struct rt_ring *ring, unsigned int cpu, uint64_t page,
				 uint64_t *held_page, struct rt_ring_page_info *held);
/* Pages whole on the CPU so far (the writer's count, read with acquire). */
uint64_t rt_ring_written(const struct rt_ring *ring, unsigned int cpu);

/*
 * Writer, one CPU at a time: the room for the CPU's next page (page_size
 * bytes), its slot marked as being written. Every reader is then kept off
 * the page that slot held. Then either rt_ring_commit() with the page's
 * accounting, or rt_ring_abort() when no page came (the slot's old page is
 * then whole again: the room was not written).
 */
uint8_t *rt_ring_begin(struct rt_ring *ring, unsigned int cpu);

/* What the writer knows of a page when it commits it. */
struct rt_ring_page_info {
	uint32_t len;
	uint32_t records;
	uint32_t flags;
	uint64_t events_before, kernel_lost, kernel_inexact, malformed;
	uint64_t first_ts, last_ts;
};

/* The page begun on the CPU is whole: its slot header written, then marked, then counted. */
void rt_ring_commit(struct rt_ring *ring, unsigned int cpu, const struct rt_ring_page_info *info);
void rt_ring_abort(struct rt_ring *ring, unsigned int cpu);

/*
 * A reader's place on one CPU: the next page it wants and what it has
 * accounted for so far. Start it with rt_ring_cursor_start() from the
 * numbers the daemon gave (the Ring frame).
 */
struct rt_ring_cursor {
	uint64_t page;			/* the next page wanted */
	uint64_t events;		/* events accounted for: read, or reported lost */
	uint64_t kernel_lost, kernel_inexact, malformed;
};

/* What a read gave: the page copied out, and what was lost before it. */
struct rt_ring_read {
	uint64_t page;
	uint32_t len, records, flags;
	uint64_t first_ts, last_ts;
	/* Lost between the cursor's place and this page, by cause; all exact counts. */
	uint64_t lost_kernel;		/* overwritten in the kernel's buffer */
	uint64_t lost_kernel_inexact;	/* kernel losses without a count (at least one each) */
	uint64_t lost_ring;		/* overwritten in the ring before this reader took them */
	uint64_t lost_malformed;	/* malformed pages (their events uncounted) */
};

void rt_ring_cursor_start(struct rt_ring_cursor *cur, uint64_t page, uint64_t events_before,
			  uint64_t kernel_lost, uint64_t kernel_inexact, uint64_t malformed);

/*
 * A cursor on the CPU's page `page` with the counts before it, as if
 * everything before it had been read: a reader that starts there is told
 * no loss before that page, and every loss after it. 0; -ESTALE when the
 * slot holds that page no more (or not yet whole).
 */
int rt_ring_cursor_at(const struct rt_ring *ring, unsigned int cpu, uint64_t page,
		      struct rt_ring_cursor *cur);

/*
 * Where a reader that has the CPU's records up to `after` (numbered from 1,
 * as the slots count them: events before a page less its kernel losses)
 * starts: the last whole page with fewer than `after` records before it,
 * the one that holds record `after`, so that every loss told by the pages
 * after it is read as a scan from the oldest would read it. Found by the
 * slots' counts alone (a binary search, no page copied); the oldest page
 * when `after` is older; the writer's place when there is no whole page. A
 * slot overwritten meanwhile ends the search where it got.
 */
uint64_t rt_ring_page_after(const struct rt_ring *ring, unsigned int cpu, uint64_t after);

/*
 * The CPU's next whole page for this reader, copied into buf (page_size
 * bytes of room): 1 with out filled and the cursor moved past it; 0 when
 * no page is ready; -EBADMSG when the area's numbers contradict themselves
 * (a slot that says it holds another page than its place, counts that go
 * backwards, a length beyond the room). A reader the writer lapped skips to
 * the oldest page still whole and is told what it missed in out.
 */
int rt_ring_read(const struct rt_ring *ring, unsigned int cpu, struct rt_ring_cursor *cur,
		 void *buf, size_t buf_size, struct rt_ring_read *out);
