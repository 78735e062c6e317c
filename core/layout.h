/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * layout: what the kernel says its ring buffer looks like.
 *
 * Owns the texts of events/header_page and events/header_event, the event
 * formats (parsed into a tep_handle) and the numbers derived from them: where
 * a sub-buffer keeps its timestamp, commit word and data, how big it is, how
 * wide a kernel long is, and the common fields every event starts with. This
 * is the only source of offsets and sizes in ringtap; nothing is assumed.
 * Pure: texts in, description out; no file descriptors, no logging.
 */
#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct tep_handle;
struct tep_event;

#define RT_FIELD_NAME_MAX 64

struct rt_field_desc {
	char name[RT_FIELD_NAME_MAX];
	char type[RT_FIELD_NAME_MAX];	/* as the kernel spells it, e.g. "unsigned short" */
	unsigned int offset;
	unsigned int size;
	bool is_signed;
};

struct rt_layout {
	struct tep_handle *tep;
	char *header_page;
	size_t header_page_len;
	char *header_event;
	size_t header_event_len;

	struct rt_field_desc page_timestamp;
	struct rt_field_desc page_commit;
	struct rt_field_desc page_data;
	unsigned int sub_buffer_size;	/* page_data.offset + page_data.size */
	unsigned int long_size;		/* the commit word is one kernel long */
	bool big_endian;

	/* Common fields, learned from the first event format added. */
	struct rt_field_desc *common;
	unsigned int n_common;
	const struct rt_field_desc *common_type;	/* the field that holds the event id */
	const struct rt_field_desc *common_pid;		/* NULL if the layout has none */
	unsigned int common_size;	/* end of the last common field */

	/* Format texts as the kernel published them, for clients that parse them. */
	struct rt_event_format {
		int id;
		char *text;
	} *formats;
	unsigned int n_formats;
};

/*
 * Parses the two header texts. The commit field's size gives the long size.
 * -EINVAL when a text is malformed or lacks a field ringtap needs;
 * -EPROTONOSUPPORT when header_event describes an event header other than
 * the one kbuffer decodes (5-bit type_len, 27-bit time_delta).
 */
int rt_layout_new(struct rt_layout **out, const char *header_page, size_t header_page_len,
		  const char *header_event, size_t header_event_len, bool big_endian);
void rt_layout_free(struct rt_layout *layout);

/* A CPU's per_cpu/cpuN/stats: the kernel's own counters of what it kept and lost. */
struct rt_cpu_stats {
	unsigned long long entries, overrun, commit_overrun, dropped_events, read_events;
};
/* The counters a stats text names (those it does not stay 0). */
void rt_cpu_stats_parse(const char *text, struct rt_cpu_stats *stats);

/*
 * Adds one event's format text. The first event added fixes the common
 * fields; a later one that disagrees gives -EPROTO.
 */
int rt_layout_add_event(struct rt_layout *layout, const char *system, const char *format,
			size_t len, struct tep_event **event);

const struct rt_field_desc *rt_layout_common(const struct rt_layout *layout, const char *name);
/* The format text of an added event, or NULL. */
const char *rt_layout_format(const struct rt_layout *layout, int id);

/* Parses one "field: TYPE NAME; offset:N; size:N; signed:N;" line, all of it. */
int rt_parse_field_line(const char *line, const char *end, char *type, size_t type_size,
			struct rt_field_desc *field);

/*
 * An unsigned number of size bytes in the traced kernel's byte order. Every
 * record's header, common fields and numbers go through here: the usual
 * sizes load at once.
 */
static inline uint64_t rt_layout_read_uint(const struct rt_layout *l, const uint8_t *p,
					   unsigned int size)
{
	uint64_t v = 0;
	uint32_t w;
	uint16_t h;

	switch (size) {
	case 1:
		return p[0];
	case 2:
		memcpy(&h, p, 2);
		return l->big_endian ? be16toh(h) : le16toh(h);
	case 4:
		memcpy(&w, p, 4);
		return l->big_endian ? be32toh(w) : le32toh(w);
	case 8:
		memcpy(&v, p, 8);
		return l->big_endian ? be64toh(v) : le64toh(v);
	}
	for (unsigned int i = 0; i < size; i++) {
		unsigned int shift = l->big_endian ? (size - 1 - i) * 8 : i * 8;

		v |= (uint64_t)p[i] << shift;
	}
	return v;
}

/*
 * Whether the trace's byte order is the host's, so that its numbers can be
 * loaded as they lie; otherwise each goes through rt_layout_read_uint().
 */
static inline bool rt_layout_host_order(const struct rt_layout *l)
{
	return l->big_endian == (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
}

/*
 * The kernel's rule for a dynamic field (__data_loc, __rel_loc): its u32
 * word holds the part's length in the high 16 bits and its offset in the
 * low 16, counted from the record's start, or for a __rel_loc from the end
 * of the word itself (at word_offset). False when the part does not lie
 * within the record's size bytes.
 */
static inline bool rt_data_loc(uint32_t word, size_t word_offset, bool relative, size_t size,
			       uint32_t *start, uint32_t *len)
{
	size_t at = (word & 0xffff) + (relative ? word_offset + 4 : 0);

	*len = word >> 16;
	if (at + *len > size)
		return false;
	*start = (uint32_t)at;
	return true;
}

/*
 * The same rule the other way: the word for a part of len bytes at start
 * (from the record's start). False when the part's length or its offset
 * does not fit in 16 bits.
 */
static inline bool rt_data_loc_make(size_t start, size_t word_offset, bool relative, size_t len,
				    uint32_t *word)
{
	size_t at = relative ? start - (word_offset + 4) : start;

	if ((relative && start < word_offset + 4) || at > 0xffff || len > 0xffff)
		return false;
	*word = (uint32_t)len << 16 | (uint32_t)at;
	return true;
}
