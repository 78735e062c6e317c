/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * ring_conn: what the daemon keeps of a reader on the RING transport and
 * the frames it is sent; conn.c sends them (conn_ring_start,
 * conn_ring_notify).
 *
 * Decides who may map the page ring (a peer of the Unix socket, which is
 * root or in the socket's group and may select every event; never over
 * TCP), makes the Ring frame, which says where the reader starts on each
 * CPU, and the RingReady notes of the CPUs whose pages moved since the last
 * note sent. A ring reader gets no Pages, Batch or Lost frames: its losses
 * are in the ring's slots. Touches no descriptor.
 */
#include <stdbool.h>
#include <stdint.h>

struct rt_buf;
struct rt_page_ring;

struct ring_reader {
	unsigned int ncpus;
	uint64_t *told;			/* per CPU: the written count the last note gave */
	uint64_t *told_events;		/* per CPU: events read from the kernel before that page */
};

/*
 * Why a peer may not map the ring (the Refusal's text), or NULL: tcp, the
 * globs its certificate allows (NULL: every event), the daemon's ring.
 */
const char *ring_conn_refusal(bool tcp, const char *const *allowed,
			      const struct rt_page_ring *ring);

/* NULL without memory. */
struct ring_reader *ring_reader_new(unsigned int ncpus);
void ring_reader_free(struct ring_reader *r);

/*
 * The Ring frame into out: each CPU's next page, behind which every page
 * whole now is, and the counts before it; the reader has been told those.
 * 0, or -ENOMEM.
 */
int ring_reader_ring_frame(struct ring_reader *r, const struct rt_page_ring *pr,
			   struct rt_buf *out);
/* CPUs whose pages moved since the reader was last told. */
unsigned int ring_reader_moved(const struct ring_reader *r, const struct rt_page_ring *pr);
/* A RingReady for the CPUs that moved into out: 0, or -ENOMEM. */
int ring_reader_ready_frame(const struct ring_reader *r, const struct rt_page_ring *pr,
			    struct rt_buf *out);
/*
 * The RingReady made was queued: the reader has been told where every CPU
 * is. Returns the events in the pages it was newly told of (the kernel's
 * losses not counted): what its status calls delivered, made available to
 * it; what it reads of them the daemon does not see.
 */
uint64_t ring_reader_told(struct ring_reader *r, const struct rt_page_ring *pr);
