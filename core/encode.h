/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * encode: decoded records, schemas, losses and the layout as protocol bytes.
 *
 * A record is packed once (rt_encode_record) and its bytes are copied into
 * the Batch of every subscriber that selected it, so fan-out costs a memcpy,
 * not an encoding, per subscriber. Frames come out delimited, ready for the
 * socket. Pure: no file descriptor, no logging.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "decode.h"
#include "ringtap.pb-c.h"
#include "view.h"

struct tep_event;

struct rt_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
};

/* Room for n more bytes at b->data + b->len: 0 or -ENOMEM. */
int rt_buf_grow(struct rt_buf *b, size_t n);
static inline int rt_buf_reserve(struct rt_buf *b, size_t n)
{
	return b->len + n <= b->cap ? 0 : rt_buf_grow(b, n);
}

int rt_buf_put(struct rt_buf *b, const void *p, size_t n);
int rt_buf_put_varint(struct rt_buf *b, uint64_t v);
void rt_buf_free(struct rt_buf *b);

/*
 * A record encoder: one way of sending records (with the common fields or
 * not; every field, or only those named), with a plan per event compiled
 * from its format the first time a record of it comes. The daemon keeps one
 * per way its subscribers asked for, so a record is encoded once per way
 * and its bytes copied into each subscriber's Batch (written straight into
 * it when the way has one subscriber).
 */
struct rt_record_encoder;

int rt_record_encoder_new(struct rt_record_encoder **out, const struct rt_layout *layout,
			  bool common, const char *const *only);
void rt_record_encoder_free(struct rt_record_encoder *e);
/* Record.seq (rt_record.seq, when not 0) goes with every record from now: a resumable stream. */
void rt_record_encoder_set_numbered(struct rt_record_encoder *e, bool numbered);
bool rt_record_encoder_numbered(const struct rt_record_encoder *e);
/* Whether it sends records that way (only: NULL-terminated names, or NULL). */
bool rt_record_encoder_is(const struct rt_record_encoder *e, bool common,
			  const char *const *only);
/*
 * Appends the record as Batch.records wants it (field tag, length, packed
 * Record) to out: values typed as the event's format says. -EINVAL for a
 * record whose event the layout does not know, -ENOMEM.
 */
int rt_record_encoder_put(struct rt_record_encoder *e, const struct rt_record *rec,
			  struct rt_buf *out);

/*
 * The record's view as a DECODED subscriber reads it (view.h) from what
 * rt_record_encoder_put() would write, taken from the record directly by
 * the same plan: values in vals (room for max), bytes pointing into the
 * record. For a reader that decodes pages itself (libringtap's ring
 * reader). -EINVAL for an event the layout does not know, -ENOSPC, -ENOMEM.
 */
int rt_record_encoder_view(struct rt_record_encoder *e, const struct rt_record *rec,
			   struct rt_record_view *view, struct rt_value *vals, size_t max);

/* The same through an encoder made for this one record (tests, tools). */
int rt_encode_record(const struct rt_record *rec, const struct rt_layout *layout, bool common,
		     const char *const *only, struct rt_buf *out);

/* Whether a field is in a projection (NULL: every field is). */
bool rt_encode_selected(const char *const *only, const char *name);

/* Appends a FixedRecord (tag, length, packed) holding legacy bytes. */
int rt_encode_fixed_record(uint64_t timestamp, uint64_t seq, const uint8_t *data, size_t len,
			   struct rt_buf *out);

/*
 * A data frame is built as parts around bytes the caller already holds (a
 * Batch's records, a raw page): the bulk is copied once, straight into each
 * subscriber's queue, instead of into a frame first. iov[0..n) in order is
 * the delimited frame; head and tail hold the bytes around the bulk.
 */
#define RT_FRAME_EDGE_MAX	32

struct rt_frame_parts {
	uint8_t head[RT_FRAME_EDGE_MAX];
	uint8_t tail[RT_FRAME_EDGE_MAX];
	struct iovec iov[3];
	unsigned int n;
	size_t len;			/* the whole frame */
};

/*
 * Frame{Batch{cpu, records}} (kind RINGTAP__FRAME__MSG_BATCH) or
 * Frame{Fixed{cpu, records}} (RINGTAP__FRAME__MSG_FIXED) around records
 * appended by rt_encode_record or rt_encode_fixed_record.
 */
int rt_encode_batch_parts(Ringtap__Frame__MsgCase kind, unsigned int cpu,
			  const struct rt_buf *records, struct rt_frame_parts *out);

/* Frame{Pages{cpu, [page], [records], first_seq}} around the page; first_seq 0: left out. */
int rt_encode_pages_parts(unsigned int cpu, const uint8_t *page, size_t len, unsigned int records,
			  uint64_t first_seq, struct rt_frame_parts *out);

/*
 * A delimited Frame{Schema} for the event: with offsets (one per field, in
 * format order) the fields are described at those offsets, as a legacy
 * layout places them; with format, the format text goes along.
 */
int rt_encode_schema_frame(const struct tep_event *event, const unsigned int *offsets,
			   const char *format, const char *const *only, struct rt_buf *out);

struct rt_loss {
	uint64_t count;
	/* Bounds of the lost records' timestamps, 0 when unknown: first_ts <= t <= last_ts. */
	uint64_t first_ts, last_ts;
	bool exact;
};

int rt_encode_lost_frame(unsigned int cpu, Ringtap__LossSource source, const struct rt_loss *loss,
			 struct rt_buf *out);

struct rt_host {
	const char *hostname;
	const char *kernel_release;
	const char *boot_id;
	unsigned int cpus;
	const char *trace_clock;
};

int rt_encode_welcome_frame(uint32_t version, Ringtap__Encoding encoding,
			    const struct rt_host *host, const struct rt_layout *layout,
			    struct rt_buf *out);
/* A resumable subscriber's Welcome fields: its token, and per CPU the seq it starts above. */
struct rt_welcome_resume {
	const uint8_t *token;
	size_t token_len;
	const uint64_t *start_seq;
	size_t n_start_seq;
};

int rt_encode_welcome_resume_frame(uint32_t version, Ringtap__Encoding encoding,
				   const struct rt_host *host, const struct rt_layout *layout,
				   const struct rt_welcome_resume *resume, struct rt_buf *out);
int rt_encode_heartbeat_frame(uint64_t trace_clock_ns, uint64_t realtime_ns, struct rt_buf *out);

/* The texts a trace.dat carries besides formats; a NULL text is left out. */
struct rt_host_texts {
	const char *kallsyms, *printk_formats, *saved_cmdlines;
	size_t kallsyms_len, printk_formats_len, saved_cmdlines_len;
};
int rt_encode_host_texts_frame(const struct rt_host_texts *texts, struct rt_buf *out);
int rt_encode_bye_frame(struct rt_buf *out);

/*
 * The one message inside what another encoder wrote: a delimited Frame
 * (delimited set) or a Batch.records entry from rt_encode_record. Points
 * into encoded; -EINVAL when it is not one field of a message.
 */
int rt_encode_inner(const struct rt_buf *encoded, bool delimited, const uint8_t **msg,
		    size_t *len);

/* What every NATS message says besides its content (proto Published). */
struct rt_published_head {
	const char *boot_id;
	uint64_t session;	/* the daemon's start, realtime ns */
	unsigned int cpu;
	uint64_t seq;
};

/* A Published message (not delimited: NATS frames it) around msg, a packed kind. */
int rt_encode_published(const struct rt_published_head *h, Ringtap__Published__MsgCase kind,
			const uint8_t *msg, size_t len, struct rt_buf *out);
/* The answer to a Hello that asked for the daemon's counters. */
int rt_encode_status_frame(const Ringtap__Status *st, struct rt_buf *out);
int rt_encode_cpu_state_frame(unsigned int cpu, bool online, struct rt_buf *out);
/* The RING transport's frames, their messages filled by the caller. */
int rt_encode_ring_frame(const Ringtap__Ring *ring, struct rt_buf *out);
int rt_encode_ring_ready_frame(const Ringtap__RingReady *ready, struct rt_buf *out);
int rt_encode_refusal_frame(Ringtap__RefusalReason reason, const char *text, struct rt_buf *out);
int rt_encode_error_frame(int err, const char *text, struct rt_buf *out);
