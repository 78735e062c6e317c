/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * view: decoded records and raw pages read where they lie, as a subscriber
 * receives them.
 * A Batch frame's records come one at a time with their timestamp, event
 * id, pid and values (numbers, texts, bytes, kernel symbols) pointing into
 * the frame's bytes, without protobuf-c unpacking a message per record or
 * allocating anything. Every read is checked against the end of the bytes;
 * fields a later version of the protocol adds are skipped, as protobuf
 * readers do. Pure.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ringtap.pb-c.h"

enum rt_value_kind {
	RT_VALUE_NONE,		/* no value set */
	RT_VALUE_SIGNED,	/* s */
	RT_VALUE_UNSIGNED,	/* u, and symbol when it points into the kernel */
	RT_VALUE_TEXT,		/* bytes, len: UTF-8, not NUL-terminated */
	RT_VALUE_BYTES,		/* bytes, len */
};

struct rt_value {
	enum rt_value_kind kind;
	union {
		int64_t s;
		uint64_t u;
	};
	const uint8_t *bytes;
	size_t len;
	const char *symbol;	/* not NUL-terminated; NULL: none */
	size_t symbol_len;
};

struct rt_record_view {
	uint64_t timestamp;
	uint32_t event_id;
	int32_t pid;
	size_t n_fields, n_common;
	const struct rt_value *fields;	/* in the order of the event's Schema */
	const struct rt_value *common;	/* in the order of Layout.common_fields */
	uint64_t seq;			/* Record.seq; 0: not sent (last: libringtap's ABI) */
};

/* A Batch's records, in order. */
struct rt_batch_view {
	uint32_t cpu;
	const uint8_t *next, *end;	/* the Batch's bytes not yet read */
};

/*
 * The Frame's message: 1 with its field number in Frame (5 for a Batch, 6
 * for Pages, ...) and its bytes; 0 for a Frame with none this version knows
 * (to be unpacked for its error); -EBADMSG for bytes that are no Frame.
 */
int rt_view_frame_message(const uint8_t *frame, size_t len, uint32_t *number,
			  const uint8_t **msg, size_t *msg_len);

/*
 * The Frame's message when it is a Batch: 1 with its bytes, 0 for any other
 * message (to be unpacked), -EBADMSG for bytes that are no Frame.
 */
int rt_view_frame_batch(const uint8_t *frame, size_t len, const uint8_t **batch,
			size_t *batch_len);

/* Reads the Batch's CPU; the records are then read one by one. -EBADMSG. */
int rt_batch_view_open(struct rt_batch_view *b, const uint8_t *batch, size_t len);

/*
 * The next record, its values in vals (room for max of them): 1, 0 after
 * the last, -EBADMSG for a malformed one, -ENOSPC when it holds more than
 * max values (nothing is consumed: call again with more room).
 */
int rt_batch_view_next(struct rt_batch_view *b, struct rt_record_view *rec, struct rt_value *vals,
		       size_t max);

/* A Pages message's sub-buffers, in order, with the daemon's count of each one's events. */
struct rt_pages_view {
	uint32_t cpu;
	uint64_t first_seq;			/* Pages.first_seq; 0: not sent */
	const uint8_t *next, *end;		/* the fields not yet read for pages */
	const uint8_t *counts;			/* ... and for Pages.records */
	const uint8_t *count_run, *count_end;	/* a packed run of counts being read */
};

/* Reads and checks the Pages' fields (its CPU, the kinds of the others). -EBADMSG. */
int rt_pages_view_open(struct rt_pages_view *v, const uint8_t *pages, size_t len);

/*
 * The next page: 1 with its bytes (into the frame) and its count of events
 * (0 when the daemon sent none), 0 after the last, -EBADMSG.
 */
int rt_pages_view_next(struct rt_pages_view *v, const uint8_t **page, size_t *len,
		       uint32_t *records);

/* The same view of a protobuf-c Record (the unpacking API's records), values in vals. */
int rt_record_view_of(const Ringtap__Record *r, struct rt_record_view *rec, struct rt_value *vals,
		      size_t max);
