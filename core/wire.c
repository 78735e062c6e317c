// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

/*
 * A reader keeps its buffer between frames to save a malloc per frame, but
 * not a big one: one large frame should not pin that much per connection.
 */
#define READER_KEEP_ALLOC	(64u << 10)
#define READER_MIN_ALLOC	4096u

int rt_wire_encode(const Ringtap__Frame *frame, uint8_t **out, size_t *out_len)
{
	uint8_t hdr[RT_WIRE_VARINT_MAX];
	size_t size, hdr_len;
	uint8_t *p;

	/* protobuf-c packs a missing required string as strlen(NULL). */
	if (!protobuf_c_message_check(&frame->base))
		return -EINVAL;
	size = ringtap__frame__get_packed_size(frame);
	/* No message set, or its pointer NULL: the peer would refuse it. */
	if (size == 0)
		return -EINVAL;
	if (size > RT_WIRE_MAX_FRAME_DEFAULT)
		return -EMSGSIZE;
	hdr_len = rt_wire_varint_encode(size, hdr);
	p = malloc(hdr_len + size);
	if (!p)
		return -ENOMEM;
	memcpy(p, hdr, hdr_len);
	ringtap__frame__pack(frame, p + hdr_len);
	*out = p;
	*out_len = hdr_len + size;
	return 0;
}

size_t rt_wire_varint_encode(uint64_t v, uint8_t out[RT_WIRE_VARINT_MAX])
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

/*
 * Adds one byte to a varint being read. Returns 1 when it was the last,
 * 0 when more follow, -EBADMSG when the varint cannot fit 64 bits: the
 * tenth byte holds only bit 63, and must be the last.
 */
static int varint_step(uint64_t *v, unsigned int *n, uint8_t byte)
{
	if (*n == RT_WIRE_VARINT_MAX - 1 && byte > 1)
		return -EBADMSG;
	*v |= (uint64_t)(byte & 0x7f) << (7 * *n);
	(*n)++;
	return !(byte & 0x80);
}

int rt_wire_varint_decode(const uint8_t *buf, size_t len, uint64_t *v)
{
	uint64_t val = 0;
	unsigned int n = 0;

	for (size_t i = 0; i < len; i++) {
		int ret = varint_step(&val, &n, buf[i]);

		if (ret < 0)
			return ret;
		if (ret) {
			*v = val;
			return n;
		}
	}
	return 0;
}

void rt_wire_reader_init(struct rt_wire_reader *r, size_t max_frame)
{
	memset(r, 0, sizeof(*r));
	r->max_frame = max_frame ? max_frame : RT_WIRE_MAX_FRAME_DEFAULT;
}

void rt_wire_reader_release(struct rt_wire_reader *r)
{
	free(r->buf);
	r->buf = NULL;
	r->buf_alloc = 0;
	r->buf_used = 0;
	r->borrowed = r->last = NULL;
	r->last_len = 0;
}

static bool frame_ready(const struct rt_wire_reader *r)
{
	return r->have_len && r->buf_used == r->len;
}

static int fail(struct rt_wire_reader *r, int err, const char *why)
{
	r->error = err;
	r->why = why;
	rt_wire_reader_release(r);
	return err;
}

/*
 * Grows the buffer with the bytes that actually arrived rather than to the
 * announced length at once, so a peer that announces a big frame and sends
 * nothing more holds little memory.
 */
static int reserve(struct rt_wire_reader *r, size_t need)
{
	size_t n, whole = r->len_bytes + r->len;
	uint8_t *p;

	if (need <= r->buf_alloc)
		return 0;
	n = r->buf_alloc ? r->buf_alloc * 2 : READER_MIN_ALLOC;
	if (n < need)
		n = need;
	if (n > whole)
		n = whole;
	p = realloc(r->buf, n);
	if (!p)
		return -ENOMEM;
	r->buf = p;
	r->buf_alloc = n;
	return 0;
}

/*
 * At a frame boundary, a frame whose varint and payload are all in buf is
 * taken in place: a page-sized frame is then never copied on its way in.
 * Returns 1 when it was, 0 when the bytes must be gathered.
 */
static int borrow(struct rt_wire_reader *r, const uint8_t *buf, size_t len, size_t *consumed)
{
	uint64_t flen;
	int used = rt_wire_varint_decode(buf, len, &flen);

	/* Bad or oversized lengths are refused byte by byte, where *consumed is exact. */
	if (used <= 0 || flen > r->max_frame || flen > len - (size_t)used)
		return 0;
	r->borrowed = buf;
	r->len_bytes = (unsigned int)used;
	r->len = flen;
	r->have_len = true;
	r->buf_used = flen;
	*consumed = (size_t)used + flen;
	return 1;
}

int rt_wire_reader_feed(struct rt_wire_reader *r, const uint8_t *buf, size_t len,
			size_t *consumed)
{
	size_t pos = 0;
	int ret;

	*consumed = 0;
	if (r->error)
		return r->error;
	r->last = NULL;
	r->last_len = 0;
	if (r->shrink) {
		rt_wire_reader_release(r);
		r->shrink = false;
	}
	if (!r->have_len && !r->len_bytes && borrow(r, buf, len, consumed))
		return 1;
	while (pos < len && !frame_ready(r)) {
		if (!r->have_len) {
			if (r->len_bytes < RT_WIRE_VARINT_MAX)
				r->len_raw[r->len_bytes] = buf[pos];
			ret = varint_step(&r->len, &r->len_bytes, buf[pos++]);
			*consumed = pos;
			if (ret < 0)
				return fail(r, ret, "length varint longer than 64 bits");
			/* Refused on the length alone: nothing is allocated for it. */
			if (ret && r->len > r->max_frame)
				return fail(r, -EMSGSIZE, "frame length over the limit");
			r->have_len = ret;
		} else {
			size_t n = r->len - r->buf_used;

			if (n > len - pos)
				n = len - pos;
			ret = reserve(r, r->len_bytes + r->buf_used + n);
			if (ret < 0)
				return fail(r, ret, "no memory for the frame");
			if (!r->buf_used)
				memcpy(r->buf, r->len_raw, r->len_bytes);
			memcpy(r->buf + r->len_bytes + r->buf_used, buf + pos, n);
			r->buf_used += n;
			pos += n;
			*consumed = pos;
		}
	}
	return frame_ready(r);
}

int rt_wire_reader_take(struct rt_wire_reader *r, const uint8_t **payload, size_t *len)
{
	static const uint8_t empty[1];

	*payload = NULL;
	*len = 0;
	if (r->error)
		return r->error;
	if (!frame_ready(r))
		return 0;
	if (r->borrowed) {
		*payload = r->borrowed + r->len_bytes;
		r->last = r->borrowed;
	} else {
		*payload = r->buf ? r->buf + r->len_bytes : empty;
		r->last = r->buf;
	}
	*len = r->len;
	r->last_len = r->last ? r->len_bytes + r->len : 0;
	r->borrowed = NULL;
	r->have_len = false;
	r->len = 0;
	r->len_bytes = 0;
	r->buf_used = 0;
	r->shrink = r->buf_alloc > READER_KEEP_ALLOC;
	return 1;
}

int rt_wire_reader_next(struct rt_wire_reader *r, Ringtap__Frame **frame)
{
	const uint8_t *payload;
	size_t len;
	int ret = rt_wire_reader_take(r, &payload, &len);

	*frame = NULL;
	if (ret <= 0)
		return ret;
	return rt_wire_unpack(r, payload, len, frame);
}

int rt_wire_unpack(struct rt_wire_reader *r, const uint8_t *payload, size_t len,
		   Ringtap__Frame **frame)
{
	/* protobuf-c copies strings and bytes out, so the buffer can be reused. */
	Ringtap__Frame *f = ringtap__frame__unpack(NULL, len, payload);

	*frame = NULL;
	if (!f)
		return fail(r, -EBADMSG, "payload is not a valid Frame");
	/*
	 * An empty payload, or one with only fields this version does not
	 * know, unpacks to a Frame that carries nothing to act on.
	 */
	if (f->msg_case == RINGTAP__FRAME__MSG__NOT_SET) {
		ringtap__frame__free_unpacked(f, NULL);
		return fail(r, -EBADMSG, "Frame without a message");
	}
	*frame = f;
	return 1;
}

const uint8_t *rt_wire_reader_last(const struct rt_wire_reader *r, size_t *len)
{
	*len = r->last_len;
	return r->last;
}

const char *rt_wire_strerror(int err)
{
	switch (err) {
	case -EMSGSIZE:
		return "frame larger than the limit";
	case -EBADMSG:
		return "malformed frame";
	default:
		return strerror(err < 0 ? -err : err);
	}
}

const char *rt_wire_frame_name(const Ringtap__Frame *frame)
{
	const ProtobufCFieldDescriptor *d =
		protobuf_c_message_descriptor_get_field(&ringtap__frame__descriptor,
							(unsigned int)frame->msg_case);

	return d ? d->name : "unknown";
}
