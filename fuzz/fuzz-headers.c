// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * header_page and header_event as untrusted texts (a tree given with -t, a
 * Welcome's layout): the input is header_page, a NUL, header_event, a NUL,
 * then a sub-buffer. Whatever layout the texts describe, the page must be
 * decoded (or refused) with every read inside it.
 */
#include <string.h>

#include <trace-seq.h>

#include "decode.h"
#include "fixture-layout.h"
#include "text.h"

static int on_record(const struct rt_record *rec, void *ctx)
{
	struct trace_seq s;

	trace_seq_init(&s);
	rt_record_text(&s, rec, ctx, RT_TEXT_COMMON);
	trace_seq_destroy(&s);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *print_format;
	static size_t print_len;
	const char *hp = (const char *)data, *he, *end = (const char *)data + size, *nul;
	struct rt_decoder *d = NULL;
	struct rt_page_result r;
	struct rt_layout *l;

	if (!print_format)
		print_format = slurp(RINGTAP_FIXTURE_DIR "/stock", "events/ftrace/print/format",
				     &print_len);
	nul = memchr(hp, '\0', size);
	if (!nul)
		return 0;
	he = nul + 1;
	nul = memchr(he, '\0', (size_t)(end - he));
	if (!nul)
		return 0;
	if (rt_layout_new(&l, hp, (size_t)(he - 1 - hp), he, (size_t)(nul - he), false))
		return 0;
	if (!rt_layout_add_event(l, "ftrace", print_format, print_len, NULL) &&
	    !rt_decoder_new(&d, l))
		rt_decode_page(d, 0, nul + 1, (size_t)(end - nul - 1), on_record, l, &r);
	rt_decoder_free(d);
	rt_layout_free(l);
	return 0;
}
