// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The page decoder on untrusted sub-buffers (what a raw client or a replayed
 * capture feeds it), with every record also typed, printed, packed for the
 * wire and rewritten into the legacy layout: all reads must stay inside,
 * and the encoder's bytes must be protobuf-c's (record-reference.h).
 */
#include <event-parse.h>
#include <trace-seq.h>

#include "decode.h"
#include "encode.h"
#include "fixture-layout.h"
#include "legacy.h"
#include "record-reference.h"
#include "text.h"

/* The encoder's bytes must be the reference's (protobuf-c's) for every record it finds. */
static void same_as_reference(struct rt_record_encoder *e, const struct rt_record *rec,
			      const struct rt_layout *l, bool common, const char *const *only)
{
	struct rt_buf b = { 0 };
	size_t len = 0;
	uint8_t *ref = reference_record(rec, l, common, only, &len);

	if (rt_record_encoder_put(e, rec, &b) || !ref || b.len != len || memcmp(b.data, ref, len))
		abort();
	free(ref);
	rt_buf_free(&b);
}

static int on_record(const struct rt_record *rec, void *ctx)
{
	static const char *const projection[] = { "seq", "msg", "prev_comm", "buf", NULL };
	static struct rt_record_encoder *all, *projected;
	const struct rt_layout *l = ctx;
	struct trace_seq s;
	uint8_t out[8192];

	trace_seq_init(&s);
	rt_record_text(&s, rec, l, RT_TEXT_COMMON);
	trace_seq_destroy(&s);
	if (!rec->event)
		return 0;
	if ((!all && rt_record_encoder_new(&all, l, true, NULL)) ||
	    (!projected && rt_record_encoder_new(&projected, l, false, projection)))
		abort();
	same_as_reference(all, rec, l, true, NULL);
	same_as_reference(projected, rec, l, false, projection);
	rt_legacy_rewrite(rt_legacy_find("padded-2012"), rec, l, out, sizeof(out));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rt_decoder *d;
	struct rt_layout *l = fixture_layout();
	struct rt_page_result r;

	if (!d && rt_decoder_new(&d, l))
		abort();
	rt_decode_page(d, 0, data, size, on_record, l, &r);
	return 0;
}
