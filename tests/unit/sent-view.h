/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * sent-view: a record as a DECODED subscriber reads it: packed by
 * ringtapd's encoder into a Batch frame of its own, then read in place.
 * What test-view and test-ring-reader hold a view made another way
 * against.
 */
#include "check.h"
#include "encode.h"
#include "view.h"
#include "wire.h"

/* The record's view in *view (values in vals, pointing into frame, the caller's to free). */
static inline void sent_view(struct rt_record_encoder *enc, const struct rt_record *rec,
			     struct rt_buf *frame, struct rt_record_view *view,
			     struct rt_value *vals, size_t max)
{
	struct rt_buf records = { 0 };
	struct rt_frame_parts parts;
	struct rt_batch_view b;
	const uint8_t *batch;
	uint64_t len = 0;
	size_t blen = 0;
	int used;

	frame->len = 0;
	CHECK_EQ(rt_record_encoder_put(enc, rec, &records), 0);
	CHECK_EQ(rt_encode_batch_parts(RINGTAP__FRAME__MSG_BATCH, rec->cpu, &records, &parts), 0);
	for (unsigned int k = 0; k < parts.n; k++)
		rt_buf_put(frame, parts.iov[k].iov_base, parts.iov[k].iov_len);
	rt_buf_free(&records);
	used = rt_wire_varint_decode(frame->data, frame->len, &len);
	CHECK_EQ(rt_view_frame_batch(frame->data + used, len, &batch, &blen), 1);
	CHECK_EQ(rt_batch_view_open(&b, batch, blen), 0);
	CHECK_EQ(rt_batch_view_next(&b, view, vals, max), 1);
}
