// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The page decoder on untrusted sub-buffers (what a raw client or a replayed
 * capture feeds it), with every record also typed, printed, packed for the
 * wire and rewritten into the legacy layout: all reads must stay inside.
 */
#include <event-parse.h>
#include <trace-seq.h>

#include "decode.h"
#include "encode.h"
#include "fixture-layout.h"
#include "legacy.h"
#include "text.h"

static int on_record(const struct rt_record *rec, void *ctx)
{
	const struct rt_layout *l = ctx;
	struct trace_seq s;
	struct rt_buf b = { 0 };
	uint8_t out[8192];

	trace_seq_init(&s);
	rt_record_text(&s, rec, l, RT_TEXT_COMMON);
	trace_seq_destroy(&s);
	if (rec->event) {
		rt_encode_record(rec, l, true, NULL, &b);
		rt_legacy_rewrite(rt_legacy_find("padded-2012"), rec, l, out, sizeof(out));
	}
	rt_buf_free(&b);
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
