// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "decode.h"
#include "rb-abi.h"

/* Absolute time stamps lack the top 5 bits: they come from the running time. */
#define TS_ABSOLUTE_MSB		(0xf8ULL << 56)

/* Where a page's records are, found by one walk before any is passed on. */
struct slot {
	uint32_t offset;	/* of the record's payload, in the data */
	uint32_t size;
	uint64_t timestamp;
};

struct rt_decoder {
	const struct rt_layout *layout;
	struct slot *slots;		/* room for a sub-buffer full of records */
	size_t n_slots;
	struct tep_event **events;	/* by id, looked up once; NULL: not yet */
	size_t n_events;
};

int rt_decoder_new(struct rt_decoder **out, const struct rt_layout *layout)
{
	struct rt_decoder *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->layout = layout;
	/* The smallest record is a header word and one of payload. */
	d->n_slots = layout->sub_buffer_size / 8 + 1;
	d->slots = calloc(d->n_slots, sizeof(*d->slots));
	if (!d->slots) {
		rt_decoder_free(d);
		return -ENOMEM;
	}
	*out = d;
	return 0;
}

void rt_decoder_free(struct rt_decoder *d)
{
	if (!d)
		return;
	free(d->slots);
	free(d->events);
	free(d);
}

/* The layout's event for an id, cached: records of a few events come by the million. */
static struct tep_event *event_for(struct rt_decoder *d, unsigned int id)
{
	struct tep_event *ev;

	if (id < d->n_events && d->events[id])
		return d->events[id];
	ev = tep_find_event(d->layout->tep, (int)id);
	/* Events are only ever added to a layout: a miss is asked again, a hit is kept. */
	if (ev && id < 65536) {
		if (id >= d->n_events) {
			size_t n = id + 64;
			struct tep_event **grown = realloc(d->events, n * sizeof(*grown));

			if (!grown)
				return ev;
			memset(grown + d->n_events, 0, (n - d->n_events) * sizeof(*grown));
			d->events = grown;
			d->n_events = n;
		}
		d->events[id] = ev;
	}
	return ev;
}

/*
 * Walks the record chain of the committed data once, proving that every
 * step moves forward and that every data record ends inside the data, and
 * notes each record's place, size and time stamp. Nothing is passed on
 * before the whole page is proven: a page is delivered whole or not at all.
 * The sizes and time stamps are kbuffer's: payloads rounded up to 4 bytes,
 * deltas of 27 bits, extended by TIME_EXTEND, replaced by TIME_STAMP.
 */
static const char *walk_records(const struct rt_layout *l, const uint8_t *data, uint32_t size,
				uint64_t ts, struct slot *slots, unsigned int *records)
{
	uint32_t pos = 0, n = 0;

	while (pos < size) {
		uint32_t word, type_len, delta, len;
		uint64_t next, extend;

		if (pos + 4 > size)
			return "record header crosses the end of the data";
		word = (uint32_t)rt_layout_read_uint(l, data + pos, 4);
		if (l->big_endian) {
			type_len = word >> (32 - TYPE_LEN_BITS);
			delta = word & ((1u << (32 - TYPE_LEN_BITS)) - 1);
		} else {
			type_len = word & ((1u << TYPE_LEN_BITS) - 1);
			delta = word >> TYPE_LEN_BITS;
		}
		switch (type_len) {
		case TYPE_PADDING:
			/* Its length may lie past the commit: the rest is padding then. */
			if (pos + 8 > size)
				goto done;
			len = (uint32_t)rt_layout_read_uint(l, data + pos + 4, 4);
			if (len > INT32_MAX)
				return "padding length out of range";
			next = (uint64_t)pos + 4 + len;
			if (next >= size)
				goto done;	/* the rest of the page is padding */
			/* A discarded event still moves time on. */
			ts += delta;
			break;
		case TYPE_TIME_EXTEND:
		case TYPE_TIME_STAMP:
			/* A time record carries no event: one cut off at the end ends the data. */
			if (pos + 8 > size)
				goto done;
			extend = rt_layout_read_uint(l, data + pos + 4, 4) << (32 - TYPE_LEN_BITS);
			extend += delta;
			if (type_len == TYPE_TIME_STAMP)
				ts = extend | (ts & TS_ABSOLUTE_MSB);
			else
				ts += extend;
			next = (uint64_t)pos + 8;
			break;
		case 0:
			if (pos + 8 > size)
				return "record crosses the end of the data";
			len = (uint32_t)rt_layout_read_uint(l, data + pos + 4, 4);
			if (len < 4 || len > size)
				return "record length out of range";
			len = (len - 4 + 3) & ~3u;
			next = (uint64_t)pos + 8 + len;
			if (next > size)
				return "record crosses the end of the data";
			ts += delta;
			slots[n++] = (struct slot){ pos + 8, len, ts };
			break;
		default:
			next = (uint64_t)pos + 4 + 4ULL * type_len;
			if (next > size)
				return "record crosses the end of the data";
			ts += delta;
			slots[n++] = (struct slot){ pos + 4, 4 * type_len, ts };
			break;
		}
		pos = (uint32_t)next;
	}
done:
	*records = n;
	return NULL;
}

static const char *check_page(struct rt_decoder *d, const uint8_t *buf, size_t len,
			      struct rt_page_result *r)
{
	const struct rt_layout *l = d->layout;
	uint64_t commit, flags;

	if (len < l->page_data.offset)
		return "shorter than the page header";
	if (len > l->sub_buffer_size)
		return "longer than a sub-buffer";
	r->timestamp = rt_layout_read_uint(l, buf + l->page_timestamp.offset,
					   l->page_timestamp.size);
	commit = rt_layout_read_uint(l, buf + l->page_commit.offset, l->page_commit.size);
	/*
	 * The kernel ORs the flags in as ints: with a 64-bit commit word, bit
	 * 31 arrives sign-extended into the upper half. Only the low 32 bits
	 * carry meaning, as for kbuffer.
	 */
	if (commit >> 32 && (commit >> 32 != 0xffffffffULL || !(commit & COMMIT_MISSED_EVENTS)))
		return "commit word has unknown upper bits set";
	commit &= 0xffffffffULL;
	flags = commit & (COMMIT_MISSED_EVENTS | COMMIT_MISSED_STORED);
	commit &= ~flags;
	if (commit >> COMMIT_SIZE_BITS)
		return "commit word has unknown bits set";
	if (commit > l->page_data.size || l->page_data.offset + commit > len)
		return "commit size larger than the page";
	r->data_size = (unsigned int)commit;
	r->missed = flags & COMMIT_MISSED_EVENTS;
	if (flags == COMMIT_MISSED_STORED)
		return "missed count stored without events missed";
	if (flags & COMMIT_MISSED_STORED) {
		size_t at = l->page_data.offset + commit;

		if (at + l->long_size > len)
			return "missed count outside the page";
		r->missed_count = rt_layout_read_uint(l, buf + at, l->long_size);
		r->missed_exact = true;
	}
	return NULL;
}

int rt_decode_page(struct rt_decoder *d, unsigned int cpu, const void *buf, size_t len,
		   rt_record_fn fn, void *ctx, struct rt_page_result *r)
{
	const struct rt_layout *l = d->layout;
	const uint8_t *data = (const uint8_t *)buf + l->page_data.offset;
	unsigned int n;
	int ret;

	memset(r, 0, sizeof(*r));
	r->error = check_page(d, buf, len, r);
	if (r->error)
		return -EBADMSG;
	r->error = walk_records(l, data, r->data_size, r->timestamp, d->slots, &n);
	if (r->error)
		return -EBADMSG;
	r->first_timestamp = n ? d->slots[0].timestamp : r->timestamp;
	r->last_timestamp = n ? d->slots[n - 1].timestamp : r->timestamp;
	if (!fn) {
		/* Checked and counted is all a page passed on whole needs. */
		r->records = n;
		return 0;
	}
	for (unsigned int i = 0; i < n; i++) {
		struct rt_record rec = {
			.timestamp = d->slots[i].timestamp,
			.cpu = cpu,
			.data = data + d->slots[i].offset,
			.size = d->slots[i].size,
		};

		if (rec.size < l->common_type->offset + l->common_type->size) {
			r->error = "record shorter than the common header";
			return -EBADMSG;
		}
		rec.type = (unsigned int)rt_layout_read_uint(l, rec.data + l->common_type->offset,
							     l->common_type->size);
		rec.event = event_for(d, rec.type);
		if (!rec.event)
			r->unknown++;
		r->records++;
		ret = fn(&rec, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

int rt_record_read_int(const struct rt_record *rec, const struct tep_format_field *f,
		       uint64_t *value)
{
	if (f->offset < 0 || (unsigned int)f->offset + (unsigned int)f->size > rec->size)
		return -ERANGE;
	switch (f->size) {
	case 1:
	case 2:
	case 4:
	case 8:
		break;
	default:
		return -EINVAL;
	}
	*value = tep_read_number(rec->event->tep, rec->data + f->offset, f->size);
	return 0;
}

int rt_record_read_common(const struct rt_record *rec, const struct rt_layout *l,
			  const struct rt_field_desc *f, uint64_t *value)
{
	if (f->offset + f->size > rec->size || f->size > 8)
		return -ERANGE;
	*value = rt_layout_read_uint(l, rec->data + f->offset, f->size);
	return 0;
}

int rt_record_field_bytes(const struct rt_record *rec, const struct tep_format_field *f,
			  const uint8_t **ptr, unsigned int *len)
{
	uint32_t start, loc;

	if (f->offset < 0 || f->size < 0 || (unsigned int)f->offset + (unsigned int)f->size > rec->size)
		return -ERANGE;
	if (!(f->flags & TEP_FIELD_IS_DYNAMIC)) {
		*ptr = rec->data + f->offset;
		*len = (unsigned int)f->size;
		/* A flexible array ("char buf[]", size 0) runs to the record's end. */
		if (!f->size && (f->flags & TEP_FIELD_IS_ARRAY))
			*len = rec->size - (unsigned int)f->offset;
		return 0;
	}
	if (f->size != 4)
		return -EINVAL;
	loc = (uint32_t)tep_read_number(rec->event->tep, rec->data + f->offset, 4);
	/* A constant for each kind: no work for a __rel_loc base on a __data_loc. */
	if (!((f->flags & TEP_FIELD_IS_RELATIVE) ?
	      rt_data_loc(loc, (size_t)f->offset, true, rec->size, &start, len) :
	      rt_data_loc(loc, (size_t)f->offset, false, rec->size, &start, len)))
		return -ERANGE;
	*ptr = rec->data + start;
	return 0;
}
