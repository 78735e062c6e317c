// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What libringtap makes of a daemon's stream, from untrusted bytes: the
 * input is delimited frames; the first must be a Welcome the consumer takes
 * (as ringtap_connect would), the rest go through the consumer, and every
 * event it gives is formatted as text and as JSON. The stream is read
 * twice, Batches and Pages unpacked by protobuf-c and read in place
 * (view.c): when both read it to the end, their lines must be the same.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consumer.h"
#include "format.h"
#include "wire.h"

struct lines {
	char *text;
	size_t len, cap;
};

static void keep(struct lines *out, const char *line, int n)
{
	if (n < 0)
		return;
	if (out->len + (size_t)n + 1 > out->cap) {
		size_t cap = (out->len + (size_t)n + 1) * 2;
		char *grown = realloc(out->text, cap);

		if (!grown)
			abort();
		out->text = grown;
		out->cap = cap;
	}
	memcpy(out->text + out->len, line, (size_t)n);
	out->len += (size_t)n;
	out->text[out->len++] = '\n';
}

static void format(const struct rt_consumer *c, const struct ringtap_event *ev, struct lines *out)
{
	const Ringtap__Layout *layout = c->welcome->welcome->layout;
	char line[512];

	if (ev->kind == RINGTAP_PAGE) {
		/* A page as its CPU, count, length and a hash of its bytes (FNV-1a). */
		uint64_t h = 0xcbf29ce484222325ULL;

		for (size_t i = 0; i < ev->page->len; i++)
			h = (h ^ ev->page->data[i]) * 0x100000001b3ULL;
		keep(out, line, snprintf(line, sizeof(line), "page cpu=%u records=%u len=%zu %016llx",
					 ev->cpu, ev->page_records, ev->page->len,
					 (unsigned long long)h));
		return;
	}
	for (unsigned int flags = 0; flags < 4; flags++) {
		const Ringtap__Layout *l = flags & 2 ? NULL : layout;
		int n = 0;

		if (ev->kind == RINGTAP_RECORD && ev->record)
			n = rt_format_record(line, sizeof(line), l, ev->cpu, ev->record, ev->schema,
					     flags);
		else if (ev->kind == RINGTAP_RECORD)
			n = rt_format_view(line, sizeof(line), l, ev->cpu, &c->view, ev->schema, flags);
		else if (ev->kind == RINGTAP_LOST)
			n = rt_format_lost(line, sizeof(line), ev->lost, flags);
		else if (ev->kind == RINGTAP_CPU_STATE)
			n = rt_format_cpu_state(line, sizeof(line), ev->cpu_state, flags);
		else
			continue;
		keep(out, line, n < (int)sizeof(line) ? n : (int)sizeof(line) - 1);
	}
}

/* Every event of one frame; -1 at an error, 0 at the stream's end, 1 to go on. */
static int take(struct rt_consumer *c, struct rt_wire_reader *r, const uint8_t *payload,
		size_t len, bool in_place, struct lines *out)
{
	struct ringtap_event ev;
	Ringtap__Frame *f = NULL;
	int ret = -ENOMSG;

	if (!c->welcome) {
		if (rt_wire_unpack(r, payload, len, &f) < 0)
			return -1;
		if (rt_consumer_welcome(c, f, 1, f->msg_case == RINGTAP__FRAME__MSG_WELCOME ?
							 f->welcome->encoding : 0)) {
			ringtap__frame__free_unpacked(f, NULL);
			return -1;
		}
		return 1;
	}
	if (in_place)
		ret = rt_consumer_take_in_place(c, payload, len, &ev);
	if (ret == -ENOMSG) {
		if (rt_wire_unpack(r, payload, len, &f) < 0)
			return -1;
		ret = rt_consumer_take(c, f, &ev);
	}
	for (; ret == 1; ret = rt_consumer_next(c, &ev)) {
		if (ev.kind == RINGTAP_END)
			return 0;
		format(c, &ev, out);
	}
	return ret < 0 ? -1 : 1;
}

/* 1 when the stream was read to its end (or its Bye), 0 when it stopped at an error. */
static int read_stream(const uint8_t *data, size_t size, bool in_place, struct lines *out)
{
	struct rt_wire_reader r;
	struct rt_consumer c = { 0 };
	size_t off = 0;
	int ret;

	rt_wire_reader_init(&r, 1u << 20);
	for (;;) {
		const uint8_t *payload;
		size_t used = 0, len;

		ret = rt_wire_reader_take(&r, &payload, &len);
		if (ret == 0 && off < size) {
			ret = rt_wire_reader_feed(&r, data + off, size - off, &used);
			off += used;
			if (ret >= 0)
				continue;
		}
		if (ret == 0) {
			ret = 1;
			break;
		}
		if (ret < 0)
			break;
		ret = take(&c, &r, payload, len, in_place, out);
		if (ret <= 0) {
			ret = ret == 0;
			break;
		}
	}
	rt_consumer_release(&c);
	rt_wire_reader_release(&r);
	return ret > 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lines unpacked = { 0 }, in_place = { 0 };
	int a = read_stream(data, size, false, &unpacked);
	int b = read_stream(data, size, true, &in_place);

	if (a && b && (unpacked.len != in_place.len ||
		       (unpacked.len && memcmp(unpacked.text, in_place.text, unpacked.len))))
		abort();
	free(unpacked.text);
	free(in_place.text);
	return 0;
}
