// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * decode-bench: ns per event of ringtap's page decoder against a plain
 * libtraceevent loop (kbuffer + tep_print_event, what trace-cmd report
 * does per record), on the same captured pages, in the same process.
 *
 * usage: decode-bench FIXTURE_DIR [ROUNDS [MODE]]
 * MODE (decode, text, encode or tep, ...) runs that loop alone: what
 * bench/instructions counts under callgrind.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event-parse.h>
#include <kbuffer.h>
#include <trace-seq.h>

#include "decode.h"
#include "encode.h"
#include "format.h"
#include "layout.h"
#include "ring-reader.h"
#include "ring.h"
#include "text.h"
#include "tracefs.h"
#include "view.h"
#include "wire.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

struct ctx {
	const struct rt_layout *layout;
	struct trace_seq seq;
	unsigned long long events;
	bool text;
	bool encode;
	struct rt_buf packed;
	struct rt_record_encoder *encoder;
};

static int on_record(const struct rt_record *rec, void *p)
{
	struct ctx *c = p;

	c->events++;
	if (c->text) {
		trace_seq_reset(&c->seq);
		rt_record_text(&c->seq, rec, c->layout, 0);
	}
	if (c->encode && rec->event) {
		/* What the daemon does once per record for its decoded subscribers. */
		c->packed.len = 0;
		rt_record_encoder_put(c->encoder, rec, &c->packed);
	}
	return 0;
}

/* Every page's records as the daemon sends them: one Batch frame (its payload) per page. */
struct frames {
	struct rt_buf *batch;	/* the Frame payload of each page */
	size_t n;
	struct ctx *c;
	struct rt_buf records;
};

static int collect(const struct rt_record *rec, void *p)
{
	struct frames *f = p;

	if (rec->event)
		rt_record_encoder_put(f->c->encoder, rec, &f->records);
	return 0;
}

/*
 * The client's side of the decoded stream: the same pages' records
 * encoded once (setup, outside the rounds), then each round reads every
 * Batch (modes view, line: in place; unpack, unpack-line: protobuf-c) and,
 * for the line modes, formats `ringtap stream`'s text line of each record.
 */
static int client_side(struct ctx *c, struct rt_decoder *d, const struct rt_layout *l,
		       uint8_t *pages[2], size_t lens[2], int rounds, int only, double ns[4])
{
	struct frames f = { .c = c };
	struct rt_host host = { "bench", "6.1", "b00t", 2, "local" };
	struct rt_buf b = { 0 };
	Ringtap__Welcome *welcome;
	Ringtap__Schema *schemas[4096] = { 0 };
	struct rt_value vals[256];
	char line[1024];

	/* The Welcome's layout and every event's Schema, as a client holds them. */
	const uint8_t *msg;
	size_t msg_len;

	if (rt_encode_welcome_frame(1, RINGTAP__ENCODING__DECODED, &host, l, &b) ||
	    rt_encode_inner(&b, true, &msg, &msg_len))
		return 1;
	welcome = ringtap__welcome__unpack(NULL, msg_len, msg);
	for (int i = 0; i < tep_get_events_count(l->tep); i++) {
		struct tep_event *ev = tep_get_event(l->tep, i);
		struct rt_buf sb = { 0 };
		const uint8_t *inner;
		size_t len;

		if (ev->id < 0 || ev->id >= 4096 || rt_encode_schema_frame(ev, NULL, NULL, NULL, &sb) ||
		    rt_encode_inner(&sb, true, &inner, &len))
			return 1;
		schemas[ev->id] = ringtap__schema__unpack(NULL, len, inner);
		rt_buf_free(&sb);
	}
	rt_buf_free(&b);
	if (!welcome)
		return 1;
	for (int cpu = 0; cpu < 2; cpu++)
		for (size_t off = 0; off < lens[cpu]; off += l->sub_buffer_size) {
			struct rt_page_result res;
			struct rt_frame_parts parts;
			struct rt_buf *frame;

			f.records.len = 0;
			rt_decode_page(d, cpu, pages[cpu] + off, l->sub_buffer_size, collect, &f,
				       &res);
			if (rt_encode_batch_parts(RINGTAP__FRAME__MSG_BATCH, (unsigned int)cpu,
						  &f.records, &parts))
				return 1;
			f.batch = realloc(f.batch, (f.n + 1) * sizeof(*f.batch));
			frame = &f.batch[f.n++];
			memset(frame, 0, sizeof(*frame));
			for (unsigned int i = 0; i < parts.n; i++)
				rt_buf_put(frame, parts.iov[i].iov_base, parts.iov[i].iov_len);
		}
	for (int mode = 4; mode < 8; mode++) {
		unsigned long long events = 0;
		double t;

		if (only >= 0 && mode != only)
			continue;
		t = now_ns();
		for (int r = 0; r < rounds; r++)
			for (size_t i = 0; i < f.n; i++) {
				const uint8_t *payload, *batch;
				uint64_t flen;
				size_t blen;
				int used = rt_wire_varint_decode(f.batch[i].data, f.batch[i].len, &flen);

				payload = f.batch[i].data + used;
				if (mode < 6) {
					struct rt_batch_view bv;
					struct rt_record_view rec;

					if (rt_view_frame_batch(payload, flen, &batch, &blen) != 1 ||
					    rt_batch_view_open(&bv, batch, blen))
						return 1;
					while (rt_batch_view_next(&bv, &rec, vals, 256) == 1) {
						events++;
						if (mode == 5)
							rt_format_view(line, sizeof(line),
								       welcome->layout, bv.cpu,
								       &rec, schemas[rec.event_id],
								       0);
					}
				} else {
					Ringtap__Frame *fr = ringtap__frame__unpack(NULL, flen, payload);

					for (size_t k = 0; fr && k < fr->batch->n_records; k++) {
						const Ringtap__Record *rec = fr->batch->records[k];

						events++;
						if (mode == 7)
							rt_format_record(line, sizeof(line),
									 welcome->layout,
									 fr->batch->cpu, rec,
									 schemas[rec->event_id], 0);
					}
					ringtap__frame__free_unpacked(fr, NULL);
				}
			}
		ns[mode - 4] = (now_ns() - t) / (double)events;
		c->events = events;
	}
	for (size_t i = 0; i < f.n; i++)
		rt_buf_free(&f.batch[i]);
	free(f.batch);
	rt_buf_free(&f.records);
	for (int i = 0; i < 4096; i++)
		if (schemas[i])
			ringtap__schema__free_unpacked(schemas[i], NULL);
	ringtap__welcome__free_unpacked(welcome, NULL);
	return 0;
}

/*
 * A raw subscriber's side (ringtap record): every page as ringtapd sends it,
 * a Pages frame each (setup), then each round takes every page out of its
 * frame, unpacked by protobuf-c (mode pages-unpack, as before Pages were read
 * in place) or read in place (pages-view), and adds up its event count.
 */
static int pages_side(const struct rt_layout *l, struct rt_decoder *d, uint8_t *pages[2],
		      size_t lens[2], int rounds, int only, struct ctx *c, double ns[2])
{
	struct rt_buf *frames = NULL;
	size_t n = 0;

	for (int cpu = 0; cpu < 2; cpu++)
		for (size_t off = 0; off < lens[cpu]; off += l->sub_buffer_size) {
			struct rt_buf *grown = realloc(frames, (n + 1) * sizeof(*frames));
			struct rt_frame_parts parts;
			struct rt_page_result res;

			if (!grown)
				return 1;
			frames = grown;
			if (rt_decode_page(d, (unsigned int)cpu, pages[cpu] + off, l->sub_buffer_size,
					   NULL, NULL, &res) ||
			    rt_encode_pages_parts((unsigned int)cpu, pages[cpu] + off,
						  l->sub_buffer_size, res.records, 0, &parts))
				return 1;
			memset(&frames[n], 0, sizeof(frames[n]));
			for (unsigned int i = 0; i < parts.n; i++)
				rt_buf_put(&frames[n], parts.iov[i].iov_base, parts.iov[i].iov_len);
			n++;
		}
	for (int mode = 8; mode < 10; mode++) {
		unsigned long long events = 0, bytes = 0;
		double t;

		if (only >= 0 && mode != only)
			continue;
		t = now_ns();
		for (int r = 0; r < rounds; r++)
			for (size_t i = 0; i < n; i++) {
				uint64_t flen;
				int used = rt_wire_varint_decode(frames[i].data, frames[i].len, &flen);
				const uint8_t *payload = frames[i].data + used;

				if (mode == 8) {
					Ringtap__Frame *f = ringtap__frame__unpack(NULL, flen, payload);

					if (!f || f->msg_case != RINGTAP__FRAME__MSG_PAGES)
						return 1;
					for (size_t k = 0; k < f->pages->n_pages; k++) {
						events += k < f->pages->n_records ?
								  f->pages->records[k] : 0;
						bytes += f->pages->pages[k].data[0];
					}
					ringtap__frame__free_unpacked(f, NULL);
				} else {
					struct rt_pages_view v;
					const uint8_t *msg, *page;
					uint32_t number, records;
					size_t msg_len, len;

					if (rt_view_frame_message(payload, flen, &number, &msg,
								  &msg_len) != 1 ||
					    rt_pages_view_open(&v, msg, msg_len))
						return 1;
					while (rt_pages_view_next(&v, &page, &len, &records) == 1) {
						events += records;
						bytes += page[0];
					}
				}
			}
		ns[mode - 8] = (now_ns() - t) / (double)events;
		c->events = events;
		if (!bytes && !events)
			return 1;
	}
	for (size_t i = 0; i < n; i++)
		rt_buf_free(&frames[i]);
	free(frames);
	return 0;
}


/*
 * A ring reader's side (libringtap's RING transport, client/ring-reader.c):
 * each round writes the pages into a page ring as ringtapd does (mode
 * ring-write: that alone, the daemon's part), then (ring-view) the reader
 * takes every page announced out of the ring, decodes it and makes each
 * record's view, every value of it, as ringtap stream reads them; or
 * (ring-line) formats its text line too. ring-view less ring-write is the
 * reader's decode from ring pages.
 */
static int ring_side(const struct rt_layout *l, struct rt_decoder *d, uint8_t *pages[2],
		     size_t lens[2], const char *const *globs, int rounds, int only, struct ctx *c,
		     double ns[3])
{
	struct rt_host host = { "bench", "6.1", "b00t", 2, "local" };
	struct rt_ring_geometry g = { 2, 16, l->sub_buffer_size };
	struct rt_ring_reader_opts o = { .encoding = RINGTAP__ENCODING__DECODED,
					 .events = globs };
	Ringtap__Frame *schemas[4096] = { 0 };
	uint64_t zeros[2] = { 0, 0 }, before[2] = { 0, 0 };
	Ringtap__Ring ring_frame = RINGTAP__RING__INIT;
	struct rt_ring_reader *reader = NULL;
	struct rt_why why = { "" };
	struct rt_buf b = { 0 };
	Ringtap__Welcome *welcome;
	unsigned int records[2][64];
	const uint8_t *msg;
	struct rt_ring ring;
	size_t size = rt_ring_size(&g), len;
	void *area = NULL;
	char line[1024];

	if (rt_encode_welcome_frame(2, RINGTAP__ENCODING__RAW, &host, l, &b) ||
	    rt_encode_inner(&b, true, &msg, &len) ||
	    !(welcome = ringtap__welcome__unpack(NULL, len, msg)))
		return 1;
	rt_buf_free(&b);
	if (!size || posix_memalign(&area, 4096, size) || !memset(area, 0, size) ||
	    rt_ring_format(&ring, area, size, &g) ||
	    rt_ring_reader_new(&reader, welcome, &o, &why))
		return 1;
	for (int i = 0; i < tep_get_events_count(l->tep); i++) {
		struct tep_event *ev = tep_get_event(l->tep, i);
		Ringtap__Frame *raw, *decoded = NULL;
		uint64_t flen;
		int used;

		if (ev->id < 0 || ev->id >= 4096 || tep_find_event(l->tep, ev->id) != ev)
			continue;
		b.len = 0;
		if (rt_encode_schema_frame(ev, NULL, rt_layout_format(l, ev->id), NULL, &b))
			return 1;
		used = rt_wire_varint_decode(b.data, b.len, &flen);
		raw = ringtap__frame__unpack(NULL, flen, b.data + used);
		if (!raw || rt_ring_reader_schema(reader, raw->schema, &decoded, &why))
			return 1;
		if (decoded)
			rt_ring_reader_bind_schema(reader, decoded->schema);
		schemas[ev->id] = decoded;
		ringtap__frame__free_unpacked(raw, NULL);
	}
	rt_buf_free(&b);
	ring_frame.size = size;
	ring_frame.n_start_page = ring_frame.n_events_before = ring_frame.n_kernel_lost =
		ring_frame.n_kernel_inexact = ring_frame.n_malformed = 2;
	ring_frame.start_page = ring_frame.events_before = ring_frame.kernel_lost =
		ring_frame.kernel_inexact = ring_frame.malformed = zeros;
	if (rt_ring_reader_attach(reader, &ring_frame, area, size, &why))
		return 1;
	for (int cpu = 0; cpu < 2; cpu++)
		for (size_t off = 0, i = 0; off < lens[cpu] && i < 64; off += l->sub_buffer_size, i++) {
			struct rt_page_result res;

			if (rt_decode_page(d, (unsigned int)cpu, pages[cpu] + off, l->sub_buffer_size,
					   NULL, NULL, &res))
				return 1;
			records[cpu][i] = res.records;
		}
	for (int mode = 10; mode < 13; mode++) {
		unsigned long long events = 0;
		double t;

		if (only >= 0 && mode != only)
			continue;
		t = now_ns();
		for (int r = 0; r < rounds; r++) {
			uint32_t cpus[2] = { 0, 1 };
			uint64_t written[2];
			Ringtap__RingReady note = RINGTAP__RING_READY__INIT;
			const struct rt_record_view *view;
			struct ringtap_event ev;

			for (unsigned int cpu = 0; cpu < 2; cpu++)
				for (size_t off = 0, i = 0; off < lens[cpu] && i < 64;
				     off += l->sub_buffer_size, i++) {
					struct rt_ring_page_info info = {
						.len = l->sub_buffer_size, .records = records[cpu][i],
						.events_before = before[cpu],
					};

					memcpy(rt_ring_begin(&ring, cpu), pages[cpu] + off, info.len);
					rt_ring_commit(&ring, cpu, &info);
					before[cpu] += info.records;
					if (mode == 10)
						events += info.records;
				}
			if (mode == 10)
				continue;
			written[0] = rt_ring_written(&ring, 0);
			written[1] = rt_ring_written(&ring, 1);
			note.n_cpus = note.n_written = 2;
			note.cpus = cpus;
			note.written = written;
			if (rt_ring_reader_ready(reader, &note, &why))
				return 1;
			/* Cleared per event, as ringtap_next() does. */
			while (rt_ring_reader_next(reader, memset(&ev, 0, sizeof(ev)), &view,
						   &why) == 1) {
				if (ev.kind != RINGTAP_RECORD)
					continue;
				events++;
				if (mode == 12)
					rt_format_view(line, sizeof(line), welcome->layout, ev.cpu, view,
						       ev.schema, 0);
			}
		}
		ns[mode - 10] = (now_ns() - t) / (double)events;
		c->events = events;
	}
	rt_ring_reader_free(reader);
	for (int i = 0; i < 4096; i++)
		if (schemas[i])
			ringtap__frame__free_unpacked(schemas[i], NULL);
	ringtap__welcome__free_unpacked(welcome, NULL);
	free(area);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const events[] = { "ringtap_test:ringtap_test", "sched:sched_switch",
					      "ftrace:print", NULL };
	struct rt_session_opts opts = { 0 };
	struct rt_session *s = NULL;
	struct rt_layout *l = NULL;
	struct rt_decoder *d = NULL;
	struct rt_why why = { "" };
	int rounds = argc > 2 ? atoi(argv[2]) : 2000;
	char path[4096];
	uint8_t *pages[2];
	size_t lens[2];
	struct ctx c = { 0 };
	double t, ns_decode = 0, ns_text = 0, ns_encode = 0, ns_tep = 0;
	double ns_view = 0, ns_line = 0, ns_unpack = 0, ns_unpack_line = 0;
	unsigned long long n_tep = 0;
	static const char *const modes[] = { "decode", "text", "encode", "tep", "view", "line",
					     "unpack", "unpack-line", "pages-unpack", "pages-view",
					     "ring-write", "ring-view", "ring-line" };
	double ns_pages[2] = { 0, 0 }, ns_ring[3] = { 0, 0, 0 };
	int only = -1;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURE_DIR [ROUNDS [decode|text|encode|tep|view|line|"
			"unpack|unpack-line|pages-unpack|pages-view|ring-write|ring-view|"
			"ring-line]]\n", argv[0]);
		return 2;
	}
	for (int m = 0; argc > 3 && m < (int)(sizeof(modes) / sizeof(modes[0])); m++)
		if (!strcmp(argv[3], modes[m]))
			only = m;
	if (argc > 3 && only < 0) {
		fprintf(stderr, "decode-bench: unknown mode '%s'\n", argv[3]);
		return 2;
	}
	opts.tracing_dir = argv[1];
	if (rt_session_open(&s, &opts, &why) || rt_session_layout(s, &l, &why) ||
	    rt_session_enable_globs(s, l, events, &why) < 0 || rt_decoder_new(&d, l)) {
		fprintf(stderr, "decode-bench: %s failed\n", why.text);
		return 1;
	}
	for (int cpu = 0; cpu < 2; cpu++) {
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe_raw", argv[1], cpu);
		pages[cpu] = (uint8_t *)slurp(path, &lens[cpu]);
		if (!pages[cpu])
			return 1;
	}
	c.layout = l;
	if (rt_record_encoder_new(&c.encoder, l, false, NULL))
		return 1;
	trace_seq_init(&c.seq);

	for (int mode = 0; mode < 3; mode++) {
		if ((only >= 0 && mode != only) || only >= 4)
			continue;
		c.text = mode == 1;
		c.encode = mode == 2;
		c.events = 0;
		t = now_ns();
		for (int r = 0; r < rounds; r++)
			for (int cpu = 0; cpu < 2; cpu++)
				for (size_t off = 0; off < lens[cpu]; off += l->sub_buffer_size) {
					struct rt_page_result res;

					rt_decode_page(d, cpu, pages[cpu] + off, l->sub_buffer_size,
						       on_record, &c, &res);
				}
		t = (now_ns() - t) / c.events;
		if (mode == 2)
			ns_encode = t;
		else if (mode)
			ns_text = t;
		else
			ns_decode = t;
	}

	/*
	 * The peer: kbuffer walks the page, tep_print_event formats each record,
	 * with its own tep parsed from the unmodified format files (the layout's
	 * tep has no print fmt: ringtap never lets libtraceevent parse those).
	 */
	if (only < 0 || only == 3) {
		struct tep_handle *peer = tep_alloc();
		struct kbuffer *kb;
		size_t flen;
		char *ftext;

		snprintf(path, sizeof(path), "%s/events/header_page", argv[1]);
		ftext = slurp(path, &flen);
		if (!peer || !ftext || tep_parse_header_page(peer, ftext, (unsigned long)flen, 8))
			return 1;
		free(ftext);
		for (const char *const *e = events; *e; e++) {
			char sys[64];
			const char *colon = strchr(*e, ':');

			snprintf(sys, sizeof(sys), "%.*s", (int)(colon - *e), *e);
			snprintf(path, sizeof(path), "%s/events/%s/%s/format", argv[1], sys, colon + 1);
			ftext = slurp(path, &flen);
			if (!ftext || tep_parse_event(peer, ftext, flen, sys))
				return 1;
			free(ftext);
		}
		/*
		 * What trace-cmd tells its tep from the file's header: without the
		 * long size kbuffer reads a 4-byte commit word and walks garbage.
		 */
		tep_set_long_size(peer, (int)l->long_size);
		tep_set_page_size(peer, (int)l->sub_buffer_size);
		kb = tep_kbuffer(peer);
		struct tep_record rec = { 0 };

		t = now_ns();
		for (int r = 0; r < rounds; r++)
			for (int cpu = 0; cpu < 2; cpu++)
				for (size_t off = 0; off < lens[cpu]; off += l->sub_buffer_size) {
					unsigned long long ts;
					void *data;

					kbuffer_load_subbuffer(kb, pages[cpu] + off);
					for (data = kbuffer_read_event(kb, &ts); data;
					     data = kbuffer_next_event(kb, &ts)) {
						struct tep_event *ev;

						rec.ts = ts;
						rec.data = data;
						rec.size = kbuffer_event_size(kb);
						rec.cpu = cpu;
						ev = tep_find_event_by_record(peer, &rec);
						trace_seq_reset(&c.seq);
						if (ev)
							tep_print_event(peer, &c.seq, &rec,
									"%s: %s", TEP_PRINT_NAME,
									TEP_PRINT_INFO);
						n_tep++;
					}
				}
		ns_tep = (now_ns() - t) / n_tep;
		kbuffer_free(kb);
		tep_free(peer);
	}
	if (only < 0 || only >= 10) {
		if (ring_side(l, d, pages, lens, events, rounds, only, &c, ns_ring))
			return 1;
	}
	if (only < 0 || (only >= 8 && only < 10)) {
		if (pages_side(l, d, pages, lens, rounds, only, &c, ns_pages))
			return 1;
	}
	if (only < 0 || (only >= 4 && only < 8)) {
		double ns[4];

		if (client_side(&c, d, l, pages, lens, rounds, only, ns))
			return 1;
		ns_view = ns[0];
		ns_line = ns[1];
		ns_unpack = ns[2];
		ns_unpack_line = ns[3];
	}
	printf("decode-bench: %s, %llu events per round, %d rounds\n", argv[1],
	       (only == 3 ? n_tep : c.events) / rounds, rounds);
	if (only >= 0)
		goto out;
	printf("%-44s %8.1f ns/event\n", "ringtap decode (records, no text)", ns_decode);
	printf("%-44s %8.1f ns/event\n", "ringtap decode + text line", ns_text);
	printf("%-44s %8.1f ns/event\n", "ringtap decode + packed for the wire", ns_encode);
	printf("%-44s %8.1f ns/event (%llu events per round)\n",
	       "libtraceevent kbuffer + tep_print_event", ns_tep, n_tep / rounds);
	printf("ratio ringtap text / libtraceevent print: %.2f\n", ns_text / ns_tep);
	printf("%-44s %8.1f ns/event\n", "client: Batch records read in place", ns_view);
	printf("%-44s %8.1f ns/event\n", "client: read in place + text line", ns_line);
	printf("%-44s %8.1f ns/event\n", "client: Batch unpacked by protobuf-c", ns_unpack);
	printf("%-44s %8.1f ns/event\n", "client: unpacked + text line", ns_unpack_line);
	printf("%-44s %8.1f ns/event\n", "raw client: Pages unpacked by protobuf-c", ns_pages[0]);
	printf("%-44s %8.1f ns/event\n", "raw client: Pages read in place", ns_pages[1]);
	printf("%-44s %8.1f ns/event\n", "ring: pages written (the daemon's part)", ns_ring[0]);
	printf("%-44s %8.1f ns/event\n", "ring reader: written + pages to views", ns_ring[1]);
	printf("%-44s %8.1f ns/event\n", "ring reader: written + views + text line", ns_ring[2]);
out:
	trace_seq_destroy(&c.seq);
	rt_buf_free(&c.packed);
	rt_record_encoder_free(c.encoder);
	free(pages[0]);
	free(pages[1]);
	rt_decoder_free(d);
	rt_layout_free(l);
	rt_session_close(s);
	return 0;
}
