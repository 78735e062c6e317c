// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <kbuffer.h>

#include "decode.h"

/*
 * The commit word's flag bits and the event header's type_len values are
 * the ring buffer's ABI (kernel/trace/ring_buffer.c), which kbuffer also
 * decodes; layout.c checks that header_event announces these values.
 */
#define COMMIT_MISSED_EVENTS	(1ULL << 31)
#define COMMIT_MISSED_STORED	(1ULL << 30)
#define COMMIT_SIZE_BITS	27
#define TYPE_LEN_BITS		5
#define TYPE_PADDING		29
#define TYPE_TIME_EXTEND	30
#define TYPE_TIME_STAMP		31

struct rt_decoder {
	const struct rt_layout *layout;
	struct kbuffer *kbuf;
	uint8_t *page;		/* private copy with zeroed slack, so nothing reads past it */
	size_t page_alloc;
};

int rt_decoder_new(struct rt_decoder **out, const struct rt_layout *layout)
{
	struct rt_decoder *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->layout = layout;
	d->page_alloc = layout->sub_buffer_size + 2 * sizeof(uint64_t);
	d->page = calloc(1, d->page_alloc);
	d->kbuf = kbuffer_alloc(layout->long_size == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4,
				layout->big_endian ? KBUFFER_ENDIAN_BIG : KBUFFER_ENDIAN_LITTLE);
	if (!d->page || !d->kbuf) {
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
	kbuffer_free(d->kbuf);
	free(d->page);
	free(d);
}

/*
 * Walks the record chain exactly as kbuffer will, on the same zero-padded
 * copy, proving that every step moves forward and that every data record
 * ends inside the committed data. kbuffer computes lengths in int: a length
 * word read as negative would send it backwards, forever.
 */
static const char *validate_records(const struct rt_layout *l, const uint8_t *data,
				    unsigned int size, unsigned int *records)
{
	uint64_t pos = 0;

	*records = 0;
	while (pos < size) {
		uint32_t word, type_len, len;
		uint64_t next;

		word = (uint32_t)rt_layout_read_uint(l, data + pos, 4);
		type_len = l->big_endian ? word >> (32 - TYPE_LEN_BITS) :
					   word & ((1u << TYPE_LEN_BITS) - 1);
		switch (type_len) {
		case TYPE_PADDING:
			/* Its length may lie past the commit (read as 0 there). */
			len = (uint32_t)rt_layout_read_uint(l, data + pos + 4, 4);
			if (len > INT32_MAX)
				return "padding length out of range";
			next = pos + 4 + len;
			if (next >= size)
				return NULL;	/* the rest of the page is padding */
			break;
		case TYPE_TIME_EXTEND:
		case TYPE_TIME_STAMP:
			next = pos + 8;
			break;
		case 0:
			len = (uint32_t)rt_layout_read_uint(l, data + pos + 4, 4);
			if (len < 4 || len > size)
				return "record length out of range";
			next = pos + 8 + (((uint64_t)len - 4 + 3) & ~3ULL);
			if (next > size)
				return "record crosses the end of the data";
			++*records;
			break;
		default:
			next = pos + 4 + 4ULL * type_len;
			if (next > size)
				return "record crosses the end of the data";
			++*records;
			break;
		}
		pos = next;
	}
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
	unsigned long long ts;
	unsigned int counted;
	void *data;
	int ret;

	memset(r, 0, sizeof(*r));
	r->error = check_page(d, buf, len, r);
	if (r->error)
		return -EBADMSG;
	/*
	 * A private copy, zeroed past the commit: the bytes there are stale
	 * records (or the stored missed count, already read), and kbuffer reads
	 * a padding record's length from them.
	 */
	memcpy(d->page, buf, l->page_data.offset + r->data_size);
	memset(d->page + l->page_data.offset + r->data_size, 0,
	       d->page_alloc - l->page_data.offset - r->data_size);
	r->error = validate_records(l, d->page + l->page_data.offset, r->data_size, &counted);
	if (r->error)
		return -EBADMSG;
	if (!fn) {
		/* Checked and counted is all a page passed on whole needs. */
		r->records = counted;
		return 0;
	}
	if (kbuffer_load_subbuffer(d->kbuf, d->page)) {
		r->error = "kbuffer refused the page";
		return -EBADMSG;
	}
	for (data = kbuffer_read_event(d->kbuf, &ts); data; data = kbuffer_next_event(d->kbuf, &ts)) {
		struct rt_record rec = {
			.timestamp = ts,
			.cpu = cpu,
			.data = data,
		};
		int size = kbuffer_event_size(d->kbuf);

		if (size < 0 || (const uint8_t *)data + size > d->page + l->page_data.offset + r->data_size) {
			r->error = "kbuffer returned a record outside the data";
			return -EBADMSG;
		}
		rec.size = (unsigned int)size;
		if (rec.size < l->common_type->offset + l->common_type->size) {
			r->error = "record shorter than the common header";
			return -EBADMSG;
		}
		rec.type = (unsigned int)rt_layout_read_uint(l, rec.data + l->common_type->offset,
							     l->common_type->size);
		rec.event = tep_find_event(l->tep, (int)rec.type);
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
	unsigned int start, n;
	uint64_t loc;

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
	/* A __data_loc word: length in the high 16 bits, offset in the low 16. */
	loc = tep_read_number(rec->event->tep, rec->data + f->offset, 4);
	start = loc & 0xffff;
	n = (loc >> 16) & 0xffff;
	if (f->flags & TEP_FIELD_IS_RELATIVE)
		start += (unsigned int)f->offset + 4;	/* __rel_loc counts from the field's end */
	if ((uint64_t)start + n > rec->size)
		return -ERANGE;
	*ptr = rec->data + start;
	*len = n;
	return 0;
}
