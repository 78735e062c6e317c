/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * page-build: sub-buffer pages written from records, the inverse of
 * decode.c: a collector that received records' bytes (NATS) rebuilds the
 * pages a trace.dat holds. The page header goes where the layout's
 * header_page puts it, the event headers are the ones header_event
 * announces (layout.c checks them): nothing about the kernel is assumed.
 * Pure: records in, pages out; no file descriptor, no logging.
 */
#include <stddef.h>
#include <stdint.h>

#include "layout.h"

struct rt_page_builder;

int rt_page_builder_new(struct rt_page_builder **out, const struct rt_layout *layout);
void rt_page_builder_free(struct rt_page_builder *b);

/*
 * Appends one record: data and size as rt_record has them (the event from
 * its common header on), at timestamp ts. -ENOSPC when it does not go on
 * this page (full, or ts earlier than the page's last record): take the
 * page and add it again. -EINVAL when it fits no page at all.
 */
int rt_page_builder_add(struct rt_page_builder *b, uint64_t ts, const void *data, size_t size);

/*
 * The kernel lost count events before the page being built (0: an unknown
 * number): its commit word says so, and the count follows the data where
 * there is room for a long, as the kernel stores it.
 */
void rt_page_builder_missed(struct rt_page_builder *b, uint64_t count);

/* Records on the page being built. */
unsigned int rt_page_builder_records(const struct rt_page_builder *b);

/*
 * The page built, sub_buffer_size bytes (valid until the next call), and a
 * new empty page begun; NULL when no record was added since the last take.
 */
const uint8_t *rt_page_builder_take(struct rt_page_builder *b, size_t *len);
