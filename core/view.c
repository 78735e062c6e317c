// SPDX-License-Identifier: LGPL-2.1-or-later
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "view.h"

enum wire_type { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

/* Frame.batch, Batch.cpu and .records, Record's and Value's fields (ringtap.proto). */
#define FRAME_BATCH		5
#define FRAME_LAST_MESSAGE	14
#define BATCH_CPU		1
#define BATCH_RECORDS		2
/* Pages: cpu = 1, pages = 2, records = 3 (a count per page, packed or not). */
#define PAGES_CPU		1
#define PAGES_PAGES		2
#define PAGES_RECORDS		3
#define PAGES_FIRST_SEQ		4

static bool get_varint_slow(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t x = 0;

	for (unsigned int shift = 0; p < end && shift < 64; shift += 7) {
		uint8_t b = *p++;

		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			*pp = p;
			return true;
		}
	}
	return false;
}

/*
 * A varint of two to eight bytes from the eight bytes at p, all of them
 * before the end: every byte's seven bits gathered in three steps instead
 * of a loop of a test per byte. Time stamps take six bytes, pids two or
 * three. The number of bytes it took; 0 for a longer one.
 */
static inline __attribute__((always_inline)) unsigned int varint_of_word(const uint8_t *p,
									 uint64_t *v)
{
	uint64_t w, stops;
	unsigned int bits;

	memcpy(&w, p, sizeof(w));
	w = le64toh(w);
	stops = ~w & 0x8080808080808080ULL;	/* bytes without a continuation bit */
	if (!stops)
		return 0;
	bits = (unsigned int)__builtin_ctzll(stops) + 1;	/* through the first of them */
	if (bits < 64)
		w &= (1ULL << bits) - 1;
	w = ((w & 0x7f007f007f007f00ULL) >> 1) | (w & 0x007f007f007f007fULL);
	w = ((w & 0x3fff00003fff0000ULL) >> 2) | (w & 0x00003fff00003fffULL);
	w = ((w & 0x0fffffff00000000ULL) >> 4) | (w & 0x000000000fffffffULL);
	*v = w;
	return bits / 8;
}

/* A varint of more than one byte: out of line, so that the one-byte case inlines small. */
static __attribute__((noinline)) bool get_varint_long(const uint8_t **pp, const uint8_t *end,
						      uint64_t *v)
{
	const uint8_t *p = *pp;
	unsigned int n;

	/* Two bytes: pids, prios, lengths of 128 bytes and more. */
	if (end - p >= 2 && p[1] < 0x80) {
		*v = (p[0] & 0x7fu) | (uint64_t)p[1] << 7;
		*pp = p + 2;
		return true;
	}
	if (end - p >= 8 && (n = varint_of_word(p, v))) {
		*pp = p + n;
		return true;
	}
	return get_varint_slow(pp, end, v);
}

static inline __attribute__((always_inline)) bool get_varint(const uint8_t **pp,
							   const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;

	/* Most varints here are one byte (tags, lengths, small numbers). */
	if (__builtin_expect(p < end && *p < 0x80, 1)) {
		*v = *p;
		*pp = p + 1;
		return true;
	}
	return get_varint_long(pp, end, v);
}

/* A field's key and, for a length-delimited one, its bytes; false past the end. */
static inline bool get_field(const uint8_t **pp, const uint8_t *end, uint32_t *number,
			     unsigned int *type, uint64_t *num, const uint8_t **bytes, size_t *len)
{
	uint64_t key;

	if (!get_varint(pp, end, &key) || key >> 3 == 0 || key >> 3 > UINT32_MAX)
		return false;
	*number = (uint32_t)(key >> 3);
	*type = key & 7;
	switch (*type) {
	case WT_VARINT:
		return get_varint(pp, end, num);
	case WT_LEN:
		if (!get_varint(pp, end, num) || *num > (uint64_t)(end - *pp))
			return false;
		*bytes = *pp;
		*len = (size_t)*num;
		*pp += *len;
		return true;
	case WT_I64:
		if (end - *pp < 8)
			return false;
		memcpy(num, *pp, 8);
		*pp += 8;
		return true;
	case WT_I32:
		if (end - *pp < 4)
			return false;
		*num = 0;
		memcpy(num, *pp, 4);
		*pp += 4;
		return true;
	default:
		return false;	/* groups are not ours */
	}
}

int rt_view_frame_message(const uint8_t *frame, size_t len, uint32_t *number,
			  const uint8_t **msg, size_t *msg_len)
{
	const uint8_t *p = frame, *end = frame + len, *bytes = NULL;
	uint32_t field, last = 0;
	unsigned int type;
	size_t n = 0;
	uint64_t num;

	/* Of a oneof's fields the last one counts, as protobuf readers take it. */
	while (p < end) {
		const uint8_t *b;
		size_t l;

		if (!get_field(&p, end, &field, &type, &num, &b, &l))
			return -EBADMSG;
		if (field > FRAME_LAST_MESSAGE)
			continue;
		if (type != WT_LEN)
			return -EBADMSG;	/* every message of the oneof is length-delimited */
		last = field;
		bytes = b;
		n = l;
	}
	*number = last;
	*msg = bytes;
	*msg_len = n;
	return last != 0;
}

int rt_view_frame_batch(const uint8_t *frame, size_t len, const uint8_t **batch,
			size_t *batch_len)
{
	uint32_t number;
	int ret = rt_view_frame_message(frame, len, &number, batch, batch_len);

	return ret < 0 ? ret : ret && number == FRAME_BATCH;
}

int rt_batch_view_open(struct rt_batch_view *b, const uint8_t *batch, size_t len)
{
	const uint8_t *p = batch, *end = batch + len, *bytes;
	bool have_cpu = false;
	uint32_t number;
	unsigned int type;
	uint64_t num;
	size_t l;

	/* The CPU may come anywhere among the records: found first. */
	while (p < end) {
		size_t off = 0, left = (size_t)(end - p);

		/* Records under 128 bytes, as ringtapd writes most, skipped at a glance. */
		while (off + 2 <= left && p[off] == ((BATCH_RECORDS << 3) | WT_LEN) &&
		       p[off + 1] < 0x80)
			off += 2 + p[off + 1];
		if (off > left)
			return -EBADMSG;	/* the last one runs past the Batch */
		p += off;
		if (p == end)
			break;
		if (!get_field(&p, end, &number, &type, &num, &bytes, &l))
			return -EBADMSG;
		if (number == BATCH_CPU && type != WT_VARINT)
			return -EBADMSG;	/* protobuf-c refuses it too */
		if (number == BATCH_CPU) {
			b->cpu = (uint32_t)num;
			have_cpu = true;
		}
	}
	if (!have_cpu)
		return -EBADMSG;	/* a required field */
	b->next = batch;
	b->end = end;
	return 0;
}

/*
 * The next count of Pages.records, packed or one by one: true and the
 * count; false after the last (the open checked them all).
 */
static bool next_page_count(struct rt_pages_view *v, uint32_t *count)
{
	uint64_t num;

	while (v->count_run == v->count_end) {
		const uint8_t *bytes = NULL;
		uint32_t number;
		unsigned int type;
		size_t len = 0;

		if (v->counts == v->end ||
		    !get_field(&v->counts, v->end, &number, &type, &num, &bytes, &len))
			return false;
		if (number != PAGES_RECORDS)
			continue;
		if (type == WT_VARINT) {
			*count = (uint32_t)num;
			return true;
		}
		v->count_run = bytes;
		v->count_end = bytes + len;
	}
	if (!get_varint(&v->count_run, v->count_end, &num))
		return false;
	*count = (uint32_t)num;
	return true;
}

static bool whole_varints(const uint8_t *p, const uint8_t *end)
{
	uint64_t num;

	while (p < end)
		if (!get_varint(&p, end, &num))
			return false;
	return true;
}

int rt_pages_view_open(struct rt_pages_view *v, const uint8_t *pages, size_t len)
{
	const uint8_t *p = pages, *end = pages + len, *bytes;
	bool have_cpu = false;
	uint32_t number;
	unsigned int type;
	uint64_t num;
	size_t l;

	v->first_seq = 0;
	/* The CPU may come anywhere; every field is checked here, so next only finds. */
	while (p < end) {
		if (!get_field(&p, end, &number, &type, &num, &bytes, &l))
			return -EBADMSG;
		if (((number == PAGES_CPU || number == PAGES_FIRST_SEQ) && type != WT_VARINT) ||
		    (number == PAGES_PAGES && type != WT_LEN) ||
		    (number == PAGES_RECORDS && type != WT_VARINT && type != WT_LEN))
			return -EBADMSG;	/* a known field with another wire type */
		if (number == PAGES_CPU) {
			v->cpu = (uint32_t)num;
			have_cpu = true;
		}
		if (number == PAGES_FIRST_SEQ)
			v->first_seq = num;
		/* A packed run of counts must hold whole varints, as protobuf-c checks. */
		if (number == PAGES_RECORDS && type == WT_LEN && !whole_varints(bytes, bytes + l))
			return -EBADMSG;
	}
	if (!have_cpu)
		return -EBADMSG;	/* a required field */
	v->next = v->counts = pages;
	v->end = end;
	v->count_run = v->count_end = NULL;
	return 0;
}

int rt_pages_view_next(struct rt_pages_view *v, const uint8_t **page, size_t *len,
		       uint32_t *records)
{
	while (v->next < v->end) {
		uint32_t number;
		unsigned int type;
		uint64_t num;

		/* Checked by the open: the fields parse, pages are length-delimited. */
		if (!get_field(&v->next, v->end, &number, &type, &num, page, len))
			return -EBADMSG;
		if (number != PAGES_PAGES)
			continue;
		/* The i-th count is the i-th page's; a daemon before Pages.records sent none: 0. */
		if (!next_page_count(v, records))
			*records = 0;
		return 1;
	}
	return 0;
}

/* A length-delimited field's bytes after its key; false past the end. */
static inline __attribute__((always_inline)) bool get_bytes(const uint8_t **pp,
							  const uint8_t *end,
							  const uint8_t **bytes, size_t *len)
{
	uint64_t n;

	if (!get_varint(pp, end, &n) || n > (uint64_t)(end - *pp))
		return false;
	*bytes = *pp;
	*len = (size_t)n;
	*pp += n;
	return true;
}

/*
 * One Value message into v. The keys ringtapd writes are one byte each and
 * are taken by a switch on that byte; anything else (a longer key, a field
 * of a later version) goes through the general field reader.
 */
static inline __attribute__((always_inline)) int read_value(const uint8_t *p,
							  const uint8_t *end,
							  struct rt_value *v)
{
	uint32_t number;
	unsigned int type;
	uint64_t num;
	const uint8_t *bytes;
	size_t len;

	v->kind = RT_VALUE_NONE;
	v->symbol = NULL;
	while (p < end) {
		switch (*p) {
		case (1 << 3) | WT_VARINT:	/* int64 s */
		case (2 << 3) | WT_VARINT:	/* uint64 u */
			v->kind = *p++ == ((1 << 3) | WT_VARINT) ? RT_VALUE_SIGNED :
								   RT_VALUE_UNSIGNED;
			if (!get_varint(&p, end, &v->u))
				return -EBADMSG;
			continue;
		case (3 << 3) | WT_LEN:		/* string str */
		case (4 << 3) | WT_LEN:		/* bytes raw */
			v->kind = *p++ == ((3 << 3) | WT_LEN) ? RT_VALUE_TEXT : RT_VALUE_BYTES;
			if (!get_bytes(&p, end, &v->bytes, &v->len))
				return -EBADMSG;
			continue;
		case (5 << 3) | WT_LEN:		/* string symbol */
			p++;
			if (!get_bytes(&p, end, &bytes, &len))
				return -EBADMSG;
			v->symbol = (const char *)bytes;
			v->symbol_len = len;
			continue;
		}
		/* A longer key (a third party's, or a later version's field) the general way. */
		if (!get_field(&p, end, &number, &type, &num, &bytes, &len))
			return -EBADMSG;
		if (number > 5)
			continue;
		if (type != (number <= 2 ? WT_VARINT : WT_LEN))
			return -EBADMSG;	/* a known field with another wire type */
		if (number <= 2) {
			v->kind = number == 1 ? RT_VALUE_SIGNED : RT_VALUE_UNSIGNED;
			v->u = num;
		} else if (number <= 4) {
			v->kind = number == 3 ? RT_VALUE_TEXT : RT_VALUE_BYTES;
			v->bytes = bytes;
			v->len = len;
		} else {
			v->symbol = (const char *)bytes;
			v->symbol_len = len;
		}
	}
	return 0;
}

/* One Record message; common values fill vals from the top down, then turn round. */
static __attribute__((noinline)) int read_record(const uint8_t *p, const uint8_t *end,
						 struct rt_record_view *rec, struct rt_value *vals,
						 size_t max)
{
	unsigned int seen = 0;
	size_t nf = 0, nc = 0;
	uint32_t number;
	unsigned int type;
	uint64_t num;
	const uint8_t *bytes;
	size_t len;

	rec->seq = 0;
	while (p < end) {
		uint8_t key = *p;

		switch (key) {
		case (6 << 3) | WT_VARINT:	/* seq */
			p++;
			if (!get_varint(&p, end, &num))
				return -EBADMSG;
			rec->seq = num;
			continue;
		case (1 << 3) | WT_VARINT:	/* timestamp */
		case (2 << 3) | WT_VARINT:	/* event_id */
		case (3 << 3) | WT_VARINT:	/* pid */
			p++;
			if (!get_varint(&p, end, &num))
				return -EBADMSG;
			seen |= 1u << (key >> 3);
			if (key >> 3 == 1)
				rec->timestamp = num;
			else if (key >> 3 == 2)
				rec->event_id = (uint32_t)num;
			else
				rec->pid = (int32_t)num;
			continue;
		case (4 << 3) | WT_LEN:		/* fields */
		case (5 << 3) | WT_LEN: {	/* common */
			struct rt_value *v;

			p++;
			if (!get_bytes(&p, end, &bytes, &len))
				return -EBADMSG;
			if (nf + nc == max)
				return -ENOSPC;
			v = key == ((4 << 3) | WT_LEN) ? &vals[nf++] : &vals[max - ++nc];
			if (read_value(bytes, bytes + len, v))
				return -EBADMSG;
			continue;
		}
		}
		/* A longer key (a third party's, or a later version's field) the general way. */
		if (!get_field(&p, end, &number, &type, &num, &bytes, &len))
			return -EBADMSG;
		if (number > 5)
			continue;
		if (type != (number <= 3 ? WT_VARINT : WT_LEN))
			return -EBADMSG;	/* a known field with another wire type */
		if (number <= 3) {
			seen |= 1u << number;
			if (number == 1)
				rec->timestamp = num;
			else if (number == 2)
				rec->event_id = (uint32_t)num;
			else
				rec->pid = (int32_t)num;
			continue;
		}
		if (nf + nc == max)
			return -ENOSPC;
		if (read_value(bytes, bytes + len, number == 4 ? &vals[nf++] : &vals[max - ++nc]))
			return -EBADMSG;
	}
	/* timestamp, event_id and pid are required. */
	if (seen != (1u << 1 | 1u << 2 | 1u << 3))
		return -EBADMSG;
	for (size_t i = 0; i < nc / 2; i++) {
		struct rt_value t = vals[max - 1 - i];

		vals[max - 1 - i] = vals[max - nc + i];
		vals[max - nc + i] = t;
	}
	rec->fields = vals;
	rec->n_fields = nf;
	rec->common = vals + max - nc;
	rec->n_common = nc;
	return 0;
}

/*
 * The reader of records as ringtapd writes them passes pointers by value
 * (the one past what was read; NULL when it is not there), so that they
 * stay in registers rather than in memory whose address a call was given.
 */

/* A varint at p: one or two bytes (event ids, pids) inline, anything longer out of line. */
static inline __attribute__((always_inline)) const uint8_t *varint_at(const uint8_t *p,
								      const uint8_t *end,
								      uint64_t *v)
{
	if (__builtin_expect(p < end && *p < 0x80, 1)) {
		*v = *p;
		return p + 1;
	}
	if (end - p >= 2 && p[1] < 0x80) {
		*v = (p[0] & 0x7fu) | (uint64_t)p[1] << 7;
		return p + 2;
	}
	return get_varint_long(&p, end, v) ? p : NULL;
}

/* The time stamp's varint, six bytes or so: gathered from a word where eight bytes are at hand. */
static inline __attribute__((always_inline)) const uint8_t *timestamp_at(const uint8_t *p,
									 const uint8_t *end,
									 uint64_t *v)
{
	unsigned int n;

	if (end - p >= 8 && (n = varint_of_word(p, v)))
		return p + n;
	return varint_at(p, end, v);
}

/* Value's one-byte keys as ringtapd writes them, by the kind they give: s, u, str, raw. */
static const uint8_t value_key_kind[256] = {
	[(1 << 3) | WT_VARINT] = RT_VALUE_SIGNED,
	[(2 << 3) | WT_VARINT] = RT_VALUE_UNSIGNED,
	[(3 << 3) | WT_LEN] = RT_VALUE_TEXT,
	[(4 << 3) | WT_LEN] = RT_VALUE_BYTES,
};

/*
 * A Value as ringtapd writes most of them, its key and one-byte length at
 * p: one number, or one text or bytes under 126 bytes, and nothing else in
 * it. Past it with the Value in v; NULL to read it the general way. A
 * number of one or two bytes is read here (the Value's length says which);
 * a longer one against the record's end, and must end where the Value does.
 */
static inline __attribute__((always_inline)) const uint8_t *value_as_written_at(
	const uint8_t *p, const uint8_t *end, struct rt_value *v)
{
	const uint8_t *value_end;
	enum rt_value_kind kind;
	size_t len;

	if (end - p < 4)
		return NULL;
	len = p[1];
	if (len - 2 > 0x7f - 2 || len > (size_t)(end - p) - 2)
		return NULL;	/* under 2 or over 127 bytes, or past the end */
	value_end = p + 2 + len;
	kind = (enum rt_value_kind)value_key_kind[p[2]];
	if (kind == RT_VALUE_SIGNED || kind == RT_VALUE_UNSIGNED) {
		if (len == 2 && p[3] < 0x80)
			v->u = p[3];
		else if (len == 3 && p[3] >= 0x80 && p[4] < 0x80)
			v->u = (p[3] & 0x7fu) | (uint64_t)p[4] << 7;
		else if (varint_at(p + 3, end, &v->u) != value_end)
			return NULL;
	} else if (kind != RT_VALUE_NONE && p[3] == len - 2) {
		v->bytes = p + 4;
		v->len = len - 2;
	} else {
		return NULL;
	}
	v->kind = kind;
	v->symbol = NULL;
	return value_end;
}

/* Any other Value, its key at p: past it with the Value in v; NULL if malformed. */
static __attribute__((noinline)) const uint8_t *value_at(const uint8_t *p, const uint8_t *end,
							 struct rt_value *v)
{
	const uint8_t *bytes;
	size_t len;

	p++;
	if (!get_bytes(&p, end, &bytes, &len) || read_value(bytes, bytes + len, v))
		return NULL;
	return p;
}

/*
 * A Record exactly as ringtapd writes it: timestamp, event_id, pid, the
 * fields, the common values, every key one byte, each Value a short one or
 * read the general way. One test per key instead of a switch: 1 with the
 * record in rec and vals; -ENOSPC; 0 for any other shape, which the general
 * reader then reads from its start (it gives the same view of this shape).
 */
static inline __attribute__((always_inline)) int read_record_as_written(
	const uint8_t *p, const uint8_t *end, struct rt_record_view *rec, struct rt_value *vals,
	size_t max)
{
	uint64_t timestamp, event_id, pid, seq = 0;
	uint8_t key = (4 << 3) | WT_LEN;	/* fields, then common */
	size_t n = 0, nf = 0;

	if (end - p < 6 || *p != ((1 << 3) | WT_VARINT) ||
	    !(p = timestamp_at(p + 1, end, &timestamp)) ||
	    p == end || *p != ((2 << 3) | WT_VARINT) || !(p = varint_at(p + 1, end, &event_id)) ||
	    p == end || *p != ((3 << 3) | WT_VARINT) || !(p = varint_at(p + 1, end, &pid)))
		return 0;
	while (p < end) {
		const uint8_t *next;

		/* A resumable stream's seq comes last. */
		if (*p == ((6 << 3) | WT_VARINT)) {
			if (!(p = varint_at(p + 1, end, &seq)) || p != end)
				return 0;
			break;
		}
		if (*p != key) {
			if (key == ((5 << 3) | WT_LEN) || *p != ((5 << 3) | WT_LEN))
				return 0;
			key = (5 << 3) | WT_LEN;
			nf = n;
			continue;
		}
		if (n == max)
			return -ENOSPC;
		next = value_as_written_at(p, end, &vals[n]);
		if (!next && !(next = value_at(p, end, &vals[n])))
			return 0;
		p = next;
		n++;
	}
	if (key == ((4 << 3) | WT_LEN))
		nf = n;
	rec->timestamp = timestamp;
	rec->event_id = (uint32_t)event_id;
	rec->pid = (int32_t)pid;
	rec->seq = seq;
	rec->fields = vals;
	rec->n_fields = nf;
	rec->common = vals + nf;
	rec->n_common = n - nf;
	return 1;
}

int rt_batch_view_next(struct rt_batch_view *b, struct rt_record_view *rec, struct rt_value *vals,
		       size_t max)
{
	while (b->next < b->end) {
		const uint8_t *p = b->next, *bytes;
		uint32_t number;
		unsigned int type;
		uint64_t num;
		size_t len;
		int ret;

		/* ringtapd's one-byte key first; anything else the general way. */
		if (*p == ((BATCH_RECORDS << 3) | WT_LEN)) {
			p++;
			if (!get_bytes(&p, b->end, &bytes, &len))
				return -EBADMSG;
		} else {
			if (!get_field(&p, b->end, &number, &type, &num, &bytes, &len))
				return -EBADMSG;
			if (number != BATCH_RECORDS) {
				b->next = p;
				continue;
			}
			if (type != WT_LEN)
				return -EBADMSG;
		}
		ret = read_record_as_written(bytes, bytes + len, rec, vals, max);
		if (ret == 0)
			ret = read_record(bytes, bytes + len, rec, vals, max);
		else if (ret == 1)
			ret = 0;
		if (ret)
			return ret;	/* -ENOSPC leaves next where it was */
		b->next = p;
		return 1;
	}
	return 0;
}

int rt_record_view_of(const Ringtap__Record *r, struct rt_record_view *rec, struct rt_value *vals,
		      size_t max)
{
	if (r->n_fields + r->n_common > max)
		return -ENOSPC;
	for (size_t i = 0; i < r->n_fields + r->n_common; i++) {
		const Ringtap__Value *from = i < r->n_fields ? r->fields[i] :
							       r->common[i - r->n_fields];
		struct rt_value *v = &vals[i];

		memset(v, 0, sizeof(*v));
		switch (from->v_case) {
		case RINGTAP__VALUE__V_S:
			v->kind = RT_VALUE_SIGNED;
			v->s = from->s;
			break;
		case RINGTAP__VALUE__V_U:
			v->kind = RT_VALUE_UNSIGNED;
			v->u = from->u;
			break;
		case RINGTAP__VALUE__V_STR:
			v->kind = RT_VALUE_TEXT;
			v->bytes = (const uint8_t *)from->str;
			v->len = strlen(from->str);
			break;
		case RINGTAP__VALUE__V_RAW:
			v->kind = RT_VALUE_BYTES;
			v->bytes = from->raw.data;
			v->len = from->raw.len;
			break;
		default:
			break;
		}
		if (from->symbol) {
			v->symbol = from->symbol;
			v->symbol_len = strlen(from->symbol);
		}
	}
	rec->timestamp = r->timestamp;
	rec->event_id = r->event_id;
	rec->pid = r->pid;
	rec->seq = r->has_seq ? r->seq : 0;
	rec->fields = vals;
	rec->n_fields = r->n_fields;
	rec->common = vals + r->n_fields;
	rec->n_common = r->n_common;
	return 0;
}
