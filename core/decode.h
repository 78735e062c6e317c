/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * decode: one sub-buffer's bytes to records.
 *
 * Pure: takes (bytes, length) and a layout, calls back once per record,
 * touches no file descriptor and never logs. Every length in the page is
 * checked against the page before kbuffer walks it, because kbuffer trusts
 * the page: a record length that points backwards would make it loop.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "layout.h"

struct tep_event;

struct rt_record {
	uint64_t timestamp;		/* in trace clock units, as the kernel wrote it */
	unsigned int cpu;
	unsigned int type;		/* common_type: the event id on this kernel */
	struct tep_event *event;	/* NULL when the id is not in the layout */
	const uint8_t *data;		/* the event, from its common header on */
	unsigned int size;
	/* Its number among the records read on its CPU (Record.seq); 0: not numbered. */
	uint64_t seq;
};

struct rt_page_result {
	uint64_t timestamp;		/* the page's base timestamp */
	uint64_t first_timestamp;	/* of its first and last record; the base without any */
	uint64_t last_timestamp;
	unsigned int data_size;		/* bytes of records, from the commit word */
	bool missed;			/* events were lost between the last page and this */
	bool missed_exact;		/* missed_count is the kernel's count */
	uint64_t missed_count;
	unsigned int records;		/* records passed to the callback (counted, without one) */
	unsigned int unknown;		/* of which with an id the layout does not know */
	const char *error;		/* why the page was rejected, or NULL */
};

/* Return non-zero to stop the walk; that value is returned by rt_decode_page. */
typedef int (*rt_record_fn)(const struct rt_record *record, void *ctx);

struct rt_decoder;

int rt_decoder_new(struct rt_decoder **out, const struct rt_layout *layout);
void rt_decoder_free(struct rt_decoder *decoder);

/*
 * Decodes one sub-buffer. Returns 0, the callback's non-zero value, or
 * -EBADMSG for a malformed page (result->error says why; no record of a
 * malformed page is passed on, so a page is either delivered whole or
 * counted as lost whole). With fn NULL the page is checked and its records
 * counted, not walked by kbuffer: all a page sent on whole needs.
 */
int rt_decode_page(struct rt_decoder *decoder, unsigned int cpu, const void *buf, size_t len,
		   rt_record_fn fn, void *ctx, struct rt_page_result *result);

/* Integer fields of 1, 2, 4 or 8 bytes; -ERANGE when outside the record. */
struct tep_format_field;
int rt_record_read_int(const struct rt_record *record, const struct tep_format_field *field,
		       uint64_t *value);
/* Common fields by their layout description. */
int rt_record_read_common(const struct rt_record *record, const struct rt_layout *layout,
			  const struct rt_field_desc *field, uint64_t *value);
/*
 * The bytes of a field: for __data_loc and __rel_loc fields the dynamic
 * part, checked against the record; otherwise the field itself.
 */
int rt_record_field_bytes(const struct rt_record *record, const struct tep_format_field *field,
			  const uint8_t **ptr, unsigned int *len);
