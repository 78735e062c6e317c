/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * subscriber: one client's selection, its bounded queue of frames, and the
 * losses it is owed a report of.
 *
 * Records are added as the page they came from is decoded, into a pending
 * Batch; at the end of the page the Batch goes into the queue whole, or is
 * dropped whole when the queue is over its byte limit: a slow subscriber
 * never slows the reader or the others. Every dropped record and every
 * record the kernel lost on a selected CPU is counted per CPU and reported
 * in a Lost frame before the next data, so nothing is lost silently.
 * Schemas, Lost and control frames are never dropped (their number is
 * bounded by the events and CPUs). Pure: bytes in, bytes out.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "encode.h"

struct rt_qframe;

/*
 * A handle on a page as read from the kernel, shared by reference by the
 * queues that hold its Pages frame: each RAW subscriber's frame keeps a
 * reference instead of a copy. The page lies where it was read (a slot of
 * the daemon's page ring) until the reader needs that place for a new page
 * while a queue still holds the handle (refs > 1): the handle then gets a
 * private copy first (rt_page_buf_detach), so a queued page never changes.
 */
struct rt_page_buf {
	unsigned int refs;
	unsigned int len;		/* bytes of the page at data */
	uint8_t *data;			/* aligned as malloc's: the page header is read in place */
	bool own;			/* data is the handle's own copy, freed with it */
};

/* A handle with a buffer of its own of size bytes, one reference (the caller's); NULL without memory. */
struct rt_page_buf *rt_page_buf_new(size_t size);
/* A handle on data someone else keeps (a ring slot), one reference; NULL without memory. */
struct rt_page_buf *rt_page_buf_wrap(uint8_t *data);
/* The handle's len bytes copied into a buffer of its own: 0, or -ENOMEM (data unchanged). */
int rt_page_buf_detach(struct rt_page_buf *page);
void rt_page_buf_put(struct rt_page_buf *page);

struct rt_subscriber {
	unsigned int ncpus;
	uint8_t *events;		/* bitmap by kernel event id */
	unsigned int events_bits;
	uint8_t *schema_sent;		/* bitmap by kernel event id */
	bool *cpus;			/* NULL: every CPU */
	int32_t *pids;			/* none: every pid */
	size_t n_pids;
	bool common;
	Ringtap__Frame__MsgCase data_kind;	/* BATCH (decoded) or FIXED */

	struct rt_qframe *head, *tail;
	size_t queued, max_queued;	/* bytes */
	size_t head_off;		/* bytes of head already written */
	bool head_in_flight;		/* a TLS write took part of head: it must be finished */

	struct rt_buf batch;		/* the current page's records */
	unsigned int batch_cpu;
	unsigned int batch_records;
	uint64_t batch_first_ts, batch_last_ts;

	struct rt_loss *lost_kernel;	/* per CPU, not yet reported */
	struct rt_loss *lost_queue;
	/*
	 * delivered: in frames written whole to the socket; queued_records: in
	 * frames still queued (a connection that closes with some lost them).
	 */
	uint64_t delivered, queued_records, dropped, kernel_lost;
};

int rt_subscriber_init(struct rt_subscriber *s, unsigned int ncpus, size_t max_queued);
void rt_subscriber_release(struct rt_subscriber *s);

int rt_subscriber_select_event(struct rt_subscriber *s, unsigned int id);
/* Deselects every event (for an Update), remembering which Schemas were sent. */
void rt_subscriber_clear_selection(struct rt_subscriber *s);
int rt_subscriber_select_cpus(struct rt_subscriber *s, const uint32_t *cpus, size_t n);
int rt_subscriber_select_pids(struct rt_subscriber *s, const int32_t *pids, size_t n);
bool rt_subscriber_wants_event(const struct rt_subscriber *s, unsigned int id);
bool rt_subscriber_wants(const struct rt_subscriber *s, unsigned int cpu, unsigned int id,
			 int32_t pid);
bool rt_subscriber_selects_cpu(const struct rt_subscriber *s, unsigned int cpu);
/* The pids it selected (none: every pid). */
const int32_t *rt_subscriber_pids(const struct rt_subscriber *s, size_t *n);

/* Queues a control frame (Welcome, Schema, Lost, Error) whatever the limit. */
int rt_subscriber_push(struct rt_subscriber *s, const uint8_t *frame, size_t len);

/* Schemas go out once per event, before its first record. */
bool rt_subscriber_has_schema(const struct rt_subscriber *s, unsigned int id);
int rt_subscriber_push_schema(struct rt_subscriber *s, unsigned int id, const uint8_t *frame,
			      size_t len);

/*
 * Adds one record, packed by rt_encode_record or rt_encode_fixed_record, to
 * the pending batch; -ENOMEM leaves it out (the caller counts it with
 * rt_subscriber_drop).
 */
int rt_subscriber_add(struct rt_subscriber *s, const struct rt_record *rec,
		      const uint8_t *packed, size_t len);

/*
 * The same, the record packed by enc straight into the pending batch: for
 * a subscriber alone with its encoding, whose bytes no one else shares, it
 * saves packing them aside and copying them in. The encoder's error
 * (-ENOMEM) leaves the batch as it was, for the caller to count.
 */
int rt_subscriber_encode(struct rt_subscriber *s, const struct rt_record *rec,
			 struct rt_record_encoder *enc);

/*
 * Queues a frame of records (a Batch, or raw Pages), or drops it whole when
 * the queue is over its limit, counting its records as lost on that CPU.
 * Out of memory, the frame is dropped and counted the same way, and
 * -ENOMEM returned for the log: a record is never lost unreported.
 */
int rt_subscriber_push_data(struct rt_subscriber *s, unsigned int cpu,
			    const struct rt_frame_parts *frame, unsigned int records,
			    uint64_t first_ts, uint64_t last_ts);
/*
 * The same for a Pages frame whose page (frame->iov[1]) is page's data:
 * queued by reference. Without page (NULL), copied like any frame.
 */
int rt_subscriber_push_page(struct rt_subscriber *s, unsigned int cpu,
			    const struct rt_frame_parts *frame, struct rt_page_buf *page,
			    unsigned int records, uint64_t first_ts, uint64_t last_ts);

/* Records this subscriber selected but that could not be queued (out of memory). */
void rt_subscriber_drop(struct rt_subscriber *s, unsigned int cpu, uint64_t count, uint64_t ts);
/* The same for a page of records that ran from first_ts to last_ts. */
void rt_subscriber_drop_span(struct rt_subscriber *s, unsigned int cpu, uint64_t count,
			     uint64_t first_ts, uint64_t last_ts);

/*
 * The kernel lost events on this CPU, written after after_ts (the last record
 * read before them) and before before_ts (the page that says so); 0: unknown.
 */
void rt_subscriber_kernel_loss(struct rt_subscriber *s, unsigned int cpu, uint64_t count,
			       bool exact, uint64_t after_ts, uint64_t before_ts);

/*
 * Whether the page's pending Batch would go over the queue's limit (and
 * rt_subscriber_end_page() drop it): the caller may deliver its records
 * another way, and let it go with rt_subscriber_discard_batch().
 */
bool rt_subscriber_batch_overflows(const struct rt_subscriber *s);
/* The pending Batch let go uncounted: its records reach the subscriber another way. */
void rt_subscriber_discard_batch(struct rt_subscriber *s);

/* Ends the page: pending losses as Lost frames, then the Batch or its drop (counted, as above). */
int rt_subscriber_end_page(struct rt_subscriber *s);

/*
 * At a stop that cannot wait for a slow subscriber: every queued batch but
 * the one being written is dropped and reported in Lost frames, which take
 * its place. Control frames still queued go too.
 */
int rt_subscriber_abandon(struct rt_subscriber *s);

/* Reports losses still pending (when the queue drained, or at the end). */
int rt_subscriber_flush_losses(struct rt_subscriber *s);

/* The next bytes to write (up to the end of a frame's piece), and how many were written. */
bool rt_subscriber_peek(const struct rt_subscriber *s, const uint8_t **data, size_t *len);
/*
 * The next frames to write as one gather of up to max pieces (a frame is
 * one, or three for a page held by reference); 0 when the queue is empty.
 */
unsigned int rt_subscriber_peekv(const struct rt_subscriber *s, struct iovec *iov,
				 unsigned int max);
void rt_subscriber_consume(struct rt_subscriber *s, size_t n);
/*
 * A write that would block took part of the head (TLS sealed it into a
 * record that waits for room): the retry must offer the same bytes, so an
 * abandon keeps that frame. Any write that went through clears it.
 */
void rt_subscriber_head_held(struct rt_subscriber *s, bool held);

/* Whether any frame waits to be written. */
static inline bool rt_subscriber_queued_any(const struct rt_subscriber *s)
{
	return s->head != NULL;
}

/* Queued bytes, and whether they fill more than the share (1/share) of its limit. */
static inline size_t rt_subscriber_queued_bytes(const struct rt_subscriber *s)
{
	return s->queued;
}

static inline size_t rt_subscriber_queue_limit(const struct rt_subscriber *s)
{
	return s->max_queued;
}
