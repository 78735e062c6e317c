// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What a ring reader makes of untrusted bytes: a Ring frame, a RingReady
 * note and the mapped area, all from the input, read by libringtap's ring
 * reader (rt_ring_attach, rt_ring_read, the decoder, the views) with the
 * stock fixture's Welcome and Schemas, DECODED (every record viewed, its
 * text and JSON lines made) and RAW. Input: a little-endian u16 length and
 * the packed Ring, the same for the packed RingReady, then the area.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "fixture-layout.h"
#include "format.h"
#include "ring-reader.h"
#include "wire.h"

/* The stock fixture's Welcome and RAW Schemas, as ringtapd sends them, once per process. */
static Ringtap__Welcome *welcome;
static Ringtap__Frame *schemas[8];
static size_t n_schemas;

static void setup(void)
{
	struct rt_host host = { "h", "6.1", "b", 2, "local" };
	struct rt_layout *l = fixture_layout();
	struct rt_buf b = { 0 };
	const uint8_t *msg;
	size_t len;

	if (rt_encode_welcome_frame(2, RINGTAP__ENCODING__RAW, &host, l, &b) ||
	    rt_encode_inner(&b, true, &msg, &len) ||
	    !(welcome = ringtap__welcome__unpack(NULL, len, msg)))
		abort();
	for (int i = 0; i < tep_get_events_count(l->tep) && n_schemas < 8; i++) {
		struct tep_event *ev = tep_get_event(l->tep, i);
		uint64_t flen;
		int used;

		b.len = 0;
		if (rt_encode_schema_frame(ev, NULL, rt_layout_format(l, ev->id), NULL, &b))
			abort();
		used = rt_wire_varint_decode(b.data, b.len, &flen);
		schemas[n_schemas] = ringtap__frame__unpack(NULL, flen, b.data + used);
		if (!schemas[n_schemas++])
			abort();
	}
	rt_buf_free(&b);
}

/* A u16-length-prefixed message of the input: its bytes, or NULL past the end. */
static const uint8_t *take(const uint8_t **p, const uint8_t *end, size_t *len)
{
	const uint8_t *msg;

	if (end - *p < 2)
		return NULL;
	*len = (size_t)(*p)[0] | (size_t)(*p)[1] << 8;
	if ((size_t)(end - *p - 2) < *len)
		return NULL;
	msg = *p + 2;
	*p = msg + *len;
	return msg;
}

static void read_ring(const Ringtap__Ring *ring, const Ringtap__RingReady *note, const void *area,
		      size_t size, Ringtap__Encoding encoding)
{
	static const char *const every[] = { "*:*", NULL };
	const struct rt_ring_reader_opts o = { .encoding = encoding, .events = every,
					       .common = encoding == RINGTAP__ENCODING__DECODED };
	Ringtap__Frame *decoded[8] = { 0 };
	const struct rt_record_view *view;
	struct rt_ring_reader *r;
	struct rt_why why;
	struct ringtap_event ev;
	char line[1024];
	int n = 0;

	if (rt_ring_reader_new(&r, welcome, &o, &why))
		abort();
	for (size_t i = 0; i < n_schemas; i++) {
		if (rt_ring_reader_schema(r, schemas[i]->schema, &decoded[i], &why))
			abort();	/* the fixture's formats parse */
		if (decoded[i])
			rt_ring_reader_bind_schema(r, decoded[i]->schema);
	}
	if (rt_ring_reader_attach(r, ring, area, size, &why) ||
	    rt_ring_reader_ready(r, note, &why))
		goto out;
	/* Bounded: a ring of many slots still ends, each page read once. */
	while (n++ < 100000 && rt_ring_reader_next(r, memset(&ev, 0, sizeof(ev)), &view, &why) == 1) {
		if (ev.kind == RINGTAP_RECORD) {
			if (!view || !ev.schema)
				abort();	/* a record comes with its view and Schema */
			rt_format_view(line, sizeof(line), welcome->layout, ev.cpu, view, ev.schema,
				       0);
			rt_format_view(line, sizeof(line), welcome->layout, ev.cpu, view, ev.schema,
				       RT_FORMAT_JSON);
		} else if (ev.kind == RINGTAP_LOST) {
			rt_format_lost(line, sizeof(line), ev.lost, RT_FORMAT_JSON);
		} else if (ev.kind == RINGTAP_PAGE && ev.page->len > ring->size) {
			abort();
		}
	}
out:
	rt_ring_reader_free(r);
	for (size_t i = 0; i < 8; i++)
		if (decoded[i])
			ringtap__frame__free_unpacked(decoded[i], NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size, *ring_msg, *note_msg;
	Ringtap__RingReady *note = NULL;
	Ringtap__Ring *ring = NULL;
	size_t ring_len, note_len, area_size;
	void *area = NULL;

	if (!welcome)
		setup();
	if (!(ring_msg = take(&p, end, &ring_len)) || !(note_msg = take(&p, end, &note_len)))
		return 0;
	ring = ringtap__ring__unpack(NULL, ring_len, ring_msg);
	note = ringtap__ring_ready__unpack(NULL, note_len, note_msg);
	/* The area as a mapping gives it: aligned, exactly its size (ASan sees a read past it). */
	area_size = (size_t)(end - p);
	if (ring && note && area_size && (area = malloc(area_size))) {
		memcpy(area, p, area_size);
		read_ring(ring, note, area, area_size, RINGTAP__ENCODING__DECODED);
		read_ring(ring, note, area, area_size, RINGTAP__ENCODING__RAW);
	}
	free(area);
	if (ring)
		ringtap__ring__free_unpacked(ring, NULL);
	if (note)
		ringtap__ring_ready__free_unpacked(note, NULL);
	return 0;
}
