/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * page_ring: the daemon's page ring (core/ring.h) in a sealed memfd, the
 * one place a page read from the kernel is kept.
 *
 * Owns the memfd, its mapping, a read-only descriptor of it for local
 * readers (the RING transport, ring_conn.c) and a page handle per slot:
 * queues that send a page on the socket hold the handle, not a copy. When
 * the writer comes round to a slot whose handle a queue still holds (a
 * slow socket subscriber), the handle takes a private copy of the page
 * first, so what a queue holds never changes; those copies are counted.
 * What each CPU counted so far (the next page's counts) is kept for a
 * reader that starts now.
 */
#include <stdbool.h>
#include <stdint.h>

#include "ring.h"
#include "why.h"

struct rt_page_buf;

struct rt_page_ring {
	struct rt_ring ring;
	int fd;				/* read-write, sealed against resizing */
	int ro_fd;			/* read-only: what a reader is given */
	struct rt_page_buf **handles;	/* per slot, CPU c's slot i at c * slots + i */
	struct rt_ring_page_info *next;	/* per CPU: counts before its next page */
	uint64_t copies;		/* pages copied out of a slot a queue still held */
	/*
	 * After a restart or a crash: the previous ringtapd's area, mapped
	 * read-only, whose pages come before this one's, until every CPU wrote
	 * a lap here (prev_left: CPUs that did not yet). Zeroed once let go.
	 */
	struct rt_ring prev;
	unsigned int prev_left;
};

/*
 * ncpus circles of slots pages of page_size bytes, in a new memfd; -errno
 * with why.
 */
int rt_page_ring_new(struct rt_page_ring **out, unsigned int ncpus, unsigned int slots,
		     unsigned int page_size, struct rt_why *why);
void rt_page_ring_free(struct rt_page_ring *pr);
/*
 * A restart: a new ring of slots per CPU whose page numbers go on from the
 * ring the previous ringtapd handed over in from_fd (the caller closes it).
 * Nothing is copied: its readers are sent the new ring and read what the
 * old one holds there first. -errno with why when from_fd holds no ring of
 * g's CPUs and page size.
 */
int rt_page_ring_adopt(struct rt_page_ring **out, int from_fd, unsigned int slots,
		       const struct rt_ring_geometry *g, struct rt_why *why);
/* The previous ringtapd's area while it still holds pages this one does not; NULL: none. */
const struct rt_ring *rt_page_ring_prev(const struct rt_page_ring *pr);
/* A restart: what the CPU counted before its next page, as the previous ringtapd left it. */
void rt_page_ring_set_next(struct rt_page_ring *pr, unsigned int cpu,
			   const struct rt_ring_page_info *counts);


/*
 * Room for the CPU's next page (page_size bytes), as a handle on its slot;
 * NULL without memory for a private copy of the page a queue still held
 * there (the slot is then left as it was).
 */
struct rt_page_buf *rt_page_ring_begin(struct rt_page_ring *pr, unsigned int cpu);
/* The page begun is whole (info->len bytes), with its counts; the CPU's counts move past it. */
void rt_page_ring_commit(struct rt_page_ring *pr, unsigned int cpu,
			 const struct rt_ring_page_info *info);
/* No page came: the slot holds its old page again. */
void rt_page_ring_abort(struct rt_page_ring *pr, unsigned int cpu);

/* What a reader starting now is told for the CPU: its next page's number and counts before it. */
uint64_t rt_page_ring_next(const struct rt_page_ring *pr, unsigned int cpu,
			   struct rt_ring_page_info *counts);
