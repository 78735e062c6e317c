/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * wire: the framing of the ringtap protocol.
 *
 * Owns how a Frame (proto/ringtap.proto) becomes bytes on the socket and
 * back: protobuf's standard delimited form, a base-128 varint length then
 * that many bytes of the serialized Frame. The reader takes a byte stream
 * in whatever pieces the socket hands out and never holds more than one
 * frame's bytes, so a peer cannot make it buffer more than max_frame.
 * Pure: takes (bytes, length), touches no file descriptor, never logs.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ringtap.pb-c.h"

/* The largest serialized Frame either side sends or accepts by default. */
#define RT_WIRE_MAX_FRAME_DEFAULT (16u << 20)
#define RT_WIRE_VARINT_MAX 10

/*
 * Serializes one frame with its length in front, into a buffer the caller
 * frees. -EINVAL when no message is set or a required field is missing,
 * -EMSGSIZE when the Frame is larger than RT_WIRE_MAX_FRAME_DEFAULT, -ENOMEM.
 */
int rt_wire_encode(const Ringtap__Frame *frame, uint8_t **out, size_t *out_len);

/* Returns the number of bytes written, 1 to RT_WIRE_VARINT_MAX. */
size_t rt_wire_varint_encode(uint64_t v, uint8_t out[RT_WIRE_VARINT_MAX]);
/*
 * Returns the number of bytes the varint took, 0 when buf ends before it
 * does, -EBADMSG when it runs past RT_WIRE_VARINT_MAX bytes or 64 bits.
 */
int rt_wire_varint_decode(const uint8_t *buf, size_t len, uint64_t *v);

/* The reader's own state; max_frame, error and why may be read. */
struct rt_wire_reader {
	size_t max_frame;
	int error;		/* once set, every call returns it */
	const char *why;	/* with error: what was wrong, for a log line */
	bool have_len;		/* the varint is complete, len is the payload's */
	unsigned int len_bytes;	/* varint bytes seen so far */
	uint8_t len_raw[RT_WIRE_VARINT_MAX];	/* and the bytes themselves */
	uint64_t len;
	uint8_t *buf;		/* the frame as it came, varint first; grows with the bytes received */
	size_t buf_alloc;
	size_t buf_used;	/* payload bytes received */
	const uint8_t *borrowed;	/* a whole frame inside the bytes fed: read there, not copied */
	const uint8_t *last;	/* the frame next() returned, delimited */
	size_t last_len;
	bool shrink;		/* buf outgrew what is kept: freed at the next feed */
};

/* max_frame 0 means RT_WIRE_MAX_FRAME_DEFAULT. */
void rt_wire_reader_init(struct rt_wire_reader *r, size_t max_frame);
void rt_wire_reader_release(struct rt_wire_reader *r);

/*
 * Takes bytes from buf and sets *consumed to how many. Stops early once a
 * whole frame is buffered: feed the rest after rt_wire_reader_next() took
 * it. A frame that lies whole in buf is not copied: buf's bytes must stay
 * as they are until rt_wire_reader_next() has taken it. Returns 1 when a
 * whole frame is buffered, 0 when every byte was taken and more are needed,
 * or the reader's error: -EMSGSIZE as soon as a length over max_frame is
 * read, -EBADMSG for a bad varint, -ENOMEM.
 */
int rt_wire_reader_feed(struct rt_wire_reader *r, const uint8_t *buf, size_t len,
			size_t *consumed);

/*
 * Returns 1 and a frame when a whole one is buffered (the caller frees it
 * with ringtap__frame__free_unpacked(frame, NULL)), 0 when more bytes are
 * needed, or the reader's error: those of rt_wire_reader_feed(), and
 * -EBADMSG for a payload that is not a Frame or a Frame with no message set.
 */
int rt_wire_reader_next(struct rt_wire_reader *r, Ringtap__Frame **frame);

/*
 * The same without unpacking: 1 and the payload (the serialized Frame),
 * valid until the next feed (and only as long as the bytes fed, for a
 * frame read in place); a reader of Batches in place (view.h) takes it so.
 * rt_wire_unpack() then unpacks one that is not read in place.
 */
int rt_wire_reader_take(struct rt_wire_reader *r, const uint8_t **payload, size_t *len);
/* 1 and the Frame, or the reader's error set to -EBADMSG for bytes that are no Frame. */
int rt_wire_unpack(struct rt_wire_reader *r, const uint8_t *payload, size_t len,
		   Ringtap__Frame **frame);

/*
 * The frame the last rt_wire_reader_next() unpacked, delimited, as it
 * arrived: for whoever keeps the stream's bytes (a recording) without
 * packing the frame again. Valid until the next feed (and only as long as
 * the bytes fed, for a frame read in place); NULL before the first frame.
 */
const uint8_t *rt_wire_reader_last(const struct rt_wire_reader *r, size_t *len);

/* Short text for the errors above; strerror() for any other. */
const char *rt_wire_strerror(int err);

/* The name of the message a Frame holds ("batch", "schema"), for error texts. */
const char *rt_wire_frame_name(const Ringtap__Frame *frame);
