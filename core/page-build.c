// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "page-build.h"
#include "rb-abi.h"

#define DELTA_BITS	(32 - TYPE_LEN_BITS)
#define DELTA_MASK	((1u << DELTA_BITS) - 1)

struct rt_page_builder {
	const struct rt_layout *layout;
	uint8_t *page, *out;	/* being built; the last one taken */
	uint32_t used;		/* bytes of records */
	uint64_t last_ts;
	unsigned int records;
	bool missed;
	uint64_t missed_count;	/* 0: not known */
};

int rt_page_builder_new(struct rt_page_builder **out, const struct rt_layout *layout)
{
	struct rt_page_builder *b = calloc(1, sizeof(*b));

	*out = NULL;
	if (!b)
		return -ENOMEM;
	b->layout = layout;
	b->page = calloc(1, layout->sub_buffer_size);
	b->out = calloc(1, layout->sub_buffer_size);
	if (!b->page || !b->out) {
		rt_page_builder_free(b);
		return -ENOMEM;
	}
	*out = b;
	return 0;
}

void rt_page_builder_free(struct rt_page_builder *b)
{
	if (!b)
		return;
	free(b->page);
	free(b->out);
	free(b);
}

/* rt_layout_read_uint's inverse. */
static void put_uint(const struct rt_layout *l, uint8_t *p, unsigned int size, uint64_t v)
{
	for (unsigned int i = 0; i < size; i++) {
		unsigned int shift = l->big_endian ? (size - 1 - i) * 8 : i * 8;

		p[i] = (uint8_t)(v >> shift);
	}
}

/* An event header word: type_len and time_delta where header_event puts them. */
static void put_header(const struct rt_layout *l, uint8_t *p, uint32_t type_len, uint32_t delta)
{
	uint32_t word = l->big_endian ? type_len << DELTA_BITS | delta
				      : delta << TYPE_LEN_BITS | type_len;

	put_uint(l, p, 4, word);
}

int rt_page_builder_add(struct rt_page_builder *b, uint64_t ts, const void *data, size_t size)
{
	const struct rt_layout *l = b->layout;
	uint8_t *at = b->page + l->page_data.offset + b->used;
	size_t padded = (size + 3) & ~(size_t)3, need, extend = 0;
	uint64_t delta = b->records ? ts - b->last_ts : 0;
	bool small = size && padded <= 4u * TYPE_DATA_MAX;

	if (b->records && ts < b->last_ts)
		return -ENOSPC;
	/* A time extend's delta is 27 + 32 bits; a record later still begins a page. */
	if (delta >> (DELTA_BITS + 32))
		return -ENOSPC;
	if (delta > DELTA_MASK)
		extend = 8;
	need = (small ? 4 : 8) + padded;
	if (need > l->page_data.size || need > (1u << COMMIT_SIZE_BITS))
		return -EINVAL;
	if (b->used + extend + need > l->page_data.size)
		return -ENOSPC;
	if (!b->records) {
		memset(b->page, 0, l->sub_buffer_size);
		put_uint(l, b->page + l->page_timestamp.offset, l->page_timestamp.size, ts);
	}
	if (extend) {
		put_header(l, at, TYPE_TIME_EXTEND, (uint32_t)(delta & DELTA_MASK));
		put_uint(l, at + 4, 4, delta >> DELTA_BITS);
		at += 8;
		delta = 0;
	}
	if (small) {
		put_header(l, at, (uint32_t)(padded / 4), (uint32_t)delta);
		at += 4;
	} else {
		/* The length word counts itself, as the kernel writes it. */
		put_header(l, at, 0, (uint32_t)delta);
		put_uint(l, at + 4, 4, size + 4);
		at += 8;
	}
	memcpy(at, data, size);
	b->used += (uint32_t)(extend + need);
	b->last_ts = ts;
	b->records++;
	return 0;
}

void rt_page_builder_missed(struct rt_page_builder *b, uint64_t count)
{
	/* Two reports before one page: the page missed both; one unknown makes the sum unknown. */
	b->missed_count = (!b->missed || b->missed_count) && count ? b->missed_count + count : 0;
	b->missed = true;
}

unsigned int rt_page_builder_records(const struct rt_page_builder *b)
{
	return b->records;
}

const uint8_t *rt_page_builder_take(struct rt_page_builder *b, size_t *len)
{
	const struct rt_layout *l = b->layout;
	uint8_t *page = b->page;
	uint64_t commit;

	if (!b->records)
		return NULL;
	commit = b->used;
	if (b->missed) {
		commit |= COMMIT_MISSED_EVENTS;
		if (b->missed_count && b->used + l->long_size <= l->page_data.size) {
			put_uint(l, page + l->page_data.offset + b->used, l->long_size,
				 b->missed_count);
			commit |= COMMIT_MISSED_STORED;
		}
	}
	put_uint(l, page + l->page_commit.offset, l->page_commit.size, commit);
	b->missed = false;
	b->missed_count = 0;
	b->page = b->out;
	b->out = page;
	b->used = 0;
	b->records = 0;
	*len = l->sub_buffer_size;
	return page;
}
