// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ring-reader: every fixture tree's pages written into a page ring (core's
 * writer) and read by the client's ring reader give, line for line in text
 * and JSON, what a DECODED subscriber prints of the same pages encoded by
 * ringtapd's encoder: every field, the common fields, a projection, pids
 * and a filter, with the Schemas a DECODED subscriber gets. Losses: a
 * reader lapped by the writer is told the exact count of the events it
 * missed (QUEUE), the kernel's losses come as KERNEL with their count, a
 * malformed page as one more KERNEL loss of at least one, as ringtapd
 * reports it on the socket; RAW pages come out as they went in. A Ring
 * frame that does not fit its area and notes for CPUs that are not there
 * are refused. After a restart the reader reads the old area out, then
 * the new one, and lets the old one go.
 */
#include <stdlib.h>

#include "encode.h"
#include "filter.h"
#include "fixture.h"
#include "format.h"
#include "glob.h"
#include "ring-reader.h"
#include "ring.h"
#include "pointer-event.h"
#include "select.h"
#include "sent-view.h"
#include "util.h"
#include "wire.h"

#define SLOTS_MAX 64

struct ring_fx {
	struct fixture fx;
	Ringtap__Welcome *welcome;
	struct rt_buf welcome_bytes;
	struct rt_ring ring;
	void *area;
	size_t size;
	uint64_t events[2], kernel_lost[2], malformed[2];
	uint8_t *pages[2];
	size_t lens[2];
};

static int ring_fx_open(struct ring_fx *r, const char *root, const char *name, unsigned int slots)
{
	static const char *const every[] = { "*:*", NULL };
	struct rt_host host = { "h", "6.1", "b", 2, "local" };
	struct rt_ring_geometry g;
	const uint8_t *msg;
	size_t len;

	memset(r, 0, sizeof(*r));
	if (fixture_open(&r->fx, root, name, every))
		return -1;
	if (rt_encode_welcome_frame(2, RINGTAP__ENCODING__RAW, &host, r->fx.layout,
				    &r->welcome_bytes) ||
	    rt_encode_inner(&r->welcome_bytes, true, &msg, &len) ||
	    !(r->welcome = ringtap__welcome__unpack(NULL, len, msg)))
		return -1;
	g = (struct rt_ring_geometry){ 2, slots, r->fx.layout->sub_buffer_size };
	r->size = rt_ring_size(&g);
	if (!r->size || posix_memalign(&r->area, 4096, r->size))
		return -1;
	memset(r->area, 0, r->size);
	for (int cpu = 0; cpu < 2; cpu++)
		r->pages[cpu] = fixture_pages(&r->fx, cpu, &r->lens[cpu]);
	return rt_ring_format(&r->ring, r->area, r->size, &g);
}

static void ring_fx_close(struct ring_fx *r);

/* The tree's ring open, or a failed check and nothing to close. */
static bool ring_fx_ready(struct ring_fx *r, const char *root, const char *name, unsigned int slots)
{
	if (!ring_fx_open(r, root, name, slots))
		return true;
	CHECK(!"the fixture's ring opens");
	ring_fx_close(r);
	return false;
}

static void ring_fx_close(struct ring_fx *r)
{
	for (int cpu = 0; cpu < 2; cpu++)
		free(r->pages[cpu]);
	free(r->area);
	if (r->welcome)
		ringtap__welcome__free_unpacked(r->welcome, NULL);
	rt_buf_free(&r->welcome_bytes);
	fixture_close(&r->fx);
}

/* One page into the CPU's next slot, as ringtapd writes it; kernel_lost events lost before it. */
static void put_page(struct ring_fx *r, unsigned int cpu, const uint8_t *page, uint64_t kernel_lost,
		     bool malformed)
{
	struct rt_ring_page_info info = { 0 };
	struct rt_page_result res;
	uint32_t len = r->fx.layout->sub_buffer_size;
	uint8_t *room;

	rt_decode_page(r->fx.decoder, cpu, page, len, NULL, NULL, &res);
	r->events[cpu] += kernel_lost;
	r->kernel_lost[cpu] += kernel_lost;
	room = rt_ring_begin(&r->ring, cpu);
	memcpy(room, page, len);
	info.len = len;
	info.records = malformed ? 0 : res.records;
	info.flags = malformed ? RT_RING_MALFORMED : 0;
	info.events_before = r->events[cpu];
	info.kernel_lost = r->kernel_lost[cpu];
	info.malformed = r->malformed[cpu];
	info.first_ts = res.first_timestamp;
	info.last_ts = res.last_timestamp;
	rt_ring_commit(&r->ring, cpu, &info);
	if (malformed)
		r->malformed[cpu]++;
	else
		r->events[cpu] += res.records;
}

/* A delimited frame as protobuf-c unpacks it. */
static Ringtap__Frame *unpack_delimited(const struct rt_buf *b)
{
	uint64_t len = 0;
	int used = rt_wire_varint_decode(b->data, b->len, &len);

	return used > 0 ? ringtap__frame__unpack(NULL, len, b->data + used) : NULL;
}

/* The ring of the fixture as a Ring frame says it, every CPU from its start. */
static int attach(struct ring_fx *r, struct rt_ring_reader *reader, uint64_t size,
		  struct rt_why *why)
{
	uint64_t zeros[2] = { 0, 0 };
	Ringtap__Ring ring = RINGTAP__RING__INIT;

	ring.size = size;
	ring.n_start_page = ring.n_events_before = ring.n_kernel_lost = ring.n_kernel_inexact =
		ring.n_malformed = 2;
	ring.start_page = ring.events_before = ring.kernel_lost = ring.kernel_inexact =
		ring.malformed = zeros;
	return rt_ring_reader_attach(reader, &ring, r->area, r->size, why);
}

/*
 * The reader of o, every RAW Schema ringtapd sends given (the DECODED ones
 * it makes kept in schemas, by event id), and the ring attached.
 */
static struct rt_ring_reader *open_reader(struct ring_fx *r, const struct rt_ring_reader_opts *o,
					  Ringtap__Frame **schemas, size_t max)
{
	struct rt_ring_reader *reader = NULL;
	struct rt_why why = { "" };
	int n = tep_get_events_count(r->fx.layout->tep);

	CHECK_EQ(rt_ring_reader_new(&reader, r->welcome, o, &why), 0);
	if (!reader)
		return NULL;
	for (int i = 0; i < n; i++) {
		struct tep_event *ev = tep_get_event(r->fx.layout->tep, i);
		Ringtap__Frame *raw, *decoded = NULL;
		struct rt_buf b = { 0 };

		/* The fixture adds ftrace:print twice; ringtapd sends a Schema once. */
		if (tep_find_event(r->fx.layout->tep, ev->id) != ev)
			continue;

		CHECK_EQ(rt_encode_schema_frame(ev, NULL, rt_layout_format(r->fx.layout, ev->id),
						NULL, &b), 0);
		raw = unpack_delimited(&b);
		CHECK(raw && raw->msg_case == RINGTAP__FRAME__MSG_SCHEMA);
		if (raw && rt_ring_reader_schema(reader, raw->schema, &decoded, &why))
			CHECK_STR(why.text, "");
		/* DECODED: a Schema for the events named, none for the others; RAW: none. */
		CHECK_EQ(decoded != NULL, o->encoding == RINGTAP__ENCODING__DECODED &&
					  rt_glob_match(o->events[0], ev->system, ev->name));
		if (decoded && (size_t)ev->id < max) {
			rt_ring_reader_bind_schema(reader, decoded->schema);
			schemas[ev->id] = decoded;
		} else if (decoded) {
			ringtap__frame__free_unpacked(decoded, NULL);
		}
		if (raw)
			ringtap__frame__free_unpacked(raw, NULL);
		rt_buf_free(&b);
	}
	CHECK_EQ(attach(r, reader, r->size, &why), 0);
	return reader;
}

static void announce(struct rt_ring_reader *reader, struct ring_fx *r)
{
	uint32_t cpus[2] = { 0, 1 };
	uint64_t written[2] = { rt_ring_written(&r->ring, 0), rt_ring_written(&r->ring, 1) };
	Ringtap__RingReady note = RINGTAP__RING_READY__INIT;
	struct rt_why why = { "" };

	note.n_cpus = note.n_written = 2;
	note.cpus = cpus;
	note.written = written;
	CHECK_EQ(rt_ring_reader_ready(reader, &note, &why), 0);
}

/* Lines, one after the other, in one buffer. */
struct lines {
	char *text;
	size_t len, cap;
	unsigned int n;
};

static void add_line(struct lines *l, const char *line)
{
	size_t n = strlen(line);

	if (l->len + n + 2 > l->cap) {
		l->cap = (l->len + n + 2) * 2;
		l->text = realloc(l->text, l->cap);
	}
	memcpy(l->text + l->len, line, n);
	l->len += n;
	l->text[l->len++] = '\n';
	l->text[l->len] = '\0';
	l->n++;
}

/* What a DECODED subscriber of the same selection prints of the page's records. */
struct expect {
	struct ring_fx *r;
	const struct rt_ring_reader_opts *o;
	struct rt_record_encoder *enc;
	struct rt_filter *filter;
	Ringtap__Frame **schemas;
	unsigned int flags;
	struct lines *lines;
};

static int expect_record(const struct rt_record *rec, void *ctx)
{
	struct expect *e = ctx;
	const struct rt_field_desc *f = e->r->fx.layout->common_pid;
	int32_t pid = (int32_t)rt_layout_read_uint(e->r->fx.layout, rec->data + f->offset, f->size);
	bool wanted = !e->o->n_pids;
	struct rt_buf frame = { 0 };
	struct rt_record_view view;
	struct rt_value vals[64];
	char line[2048];

	for (size_t i = 0; i < e->o->n_pids; i++)
		wanted |= e->o->pids[i] == pid;
	if (!rec->event || !rt_glob_match(e->o->events[0], rec->event->system, rec->event->name) ||
	    !wanted ||
	    (e->filter && !rt_filter_match(e->filter, rec->type, rec->data, rec->size, rec->cpu)))
		return 0;
	sent_view(e->enc, rec, &frame, &view, vals, 64);
	rt_format_view(line, sizeof(line), e->r->welcome->layout, rec->cpu, &view,
		       e->schemas[rec->type] ? e->schemas[rec->type]->schema : NULL, e->flags);
	add_line(e->lines, line);
	rt_buf_free(&frame);
	return 0;
}

/* Everything the reader gives until it has nothing more, as lines. */
static void drain(struct rt_ring_reader *reader, struct ring_fx *r, unsigned int flags,
		  struct lines *got)
{
	const struct rt_record_view *view;
	struct ringtap_event ev;
	struct rt_why why = { "" };
	char line[2048];
	int ret;

	while ((ret = rt_ring_reader_next(reader, memset(&ev, 0, sizeof(ev)), &view, &why)) == 1) {
		if (ev.kind == RINGTAP_RECORD) {
			CHECK(view != NULL && ev.schema != NULL);
			if (!view)
				break;
			rt_format_view(line, sizeof(line), r->welcome->layout, ev.cpu, view,
				       ev.schema, flags);
		} else if (ev.kind == RINGTAP_LOST) {
			rt_format_lost(line, sizeof(line), ev.lost, flags);
		} else {
			snprintf(line, sizeof(line), "page cpu %u, %zu bytes, %u events", ev.cpu,
				 ev.page->len, ev.page_records);
		}
		add_line(got, line);
	}
	CHECK_EQ(ret, 0);
}

/* One way of subscribing on one tree: the reader's lines against a DECODED subscriber's. */
static void compare_way(struct ring_fx *r, const struct rt_ring_reader_opts *o, const char *what)
{
	Ringtap__Frame *schemas[2048] = { 0 };
	struct lines want = { 0 }, got = { 0 };
	struct rt_why why = { "" };
	struct rt_ring_reader *reader;
	struct expect e = { .r = r, .o = o, .schemas = schemas, .lines = &want };
	struct tep_event *events[256];
	size_t n_events = 0;

	reader = open_reader(r, o, schemas, ARRAY_SIZE(schemas));
	if (!reader)
		return;
	for (int i = 0; i < tep_get_events_count(r->fx.layout->tep) && n_events < 256; i++) {
		struct tep_event *ev = tep_get_event(r->fx.layout->tep, i);

		if (rt_glob_match(o->events[0], ev->system, ev->name))
			events[n_events++] = ev;
	}
	CHECK_EQ(rt_select_filter(o->filter, events, n_events, &e.filter, &why), 0);
	CHECK_EQ(rt_record_encoder_new(&e.enc, r->fx.layout, o->common, o->fields), 0);
	/* Read as the pages come, a note at a time, in text and in JSON. */
	for (unsigned int round = 0; round < 2; round++) {
		e.flags = round ? RT_FORMAT_JSON : 0;
		for (unsigned int cpu = 0; cpu < 2; cpu++)
			for (size_t off = 0; r->pages[cpu] && off + r->fx.layout->sub_buffer_size <=
								       r->lens[cpu];
			     off += r->fx.layout->sub_buffer_size) {
				struct rt_page_result res;

				put_page(r, cpu, r->pages[cpu] + off, 0, false);
				rt_decode_page(r->fx.decoder, cpu, r->pages[cpu] + off,
					       r->fx.layout->sub_buffer_size, expect_record, &e,
					       &res);
				announce(reader, r);
				drain(reader, r, e.flags, &got);
			}
	}
	CHECK(want.n > 0);
	CHECK_EQ(got.n, want.n);
	CHECK_STR(got.text ? got.text : "", want.text ? want.text : "");
	printf("%s, %s: %u lines as a DECODED subscriber's\n", r->fx.dir, what, got.n);
	rt_ring_reader_free(reader);
	rt_record_encoder_free(e.enc);
	rt_filter_free(e.filter);
	for (size_t i = 0; i < ARRAY_SIZE(schemas); i++)
		if (schemas[i])
			ringtap__frame__free_unpacked(schemas[i], NULL);
	free(want.text);
	free(got.text);
}

/* The pid of the tree's first record with a pid, for a pid selection that keeps some. */
struct pid_pick {
	const struct rt_layout *l;
	int32_t pid;
};

static int pick_pid(const struct rt_record *rec, void *ctx)
{
	struct pid_pick *p = ctx;

	if (rec->event && !p->pid)
		p->pid = (int32_t)rt_layout_read_uint(p->l, rec->data + p->l->common_pid->offset,
						      p->l->common_pid->size);
	return 0;
}

static void test_tree(const char *root, const char *name)
{
	static const char *const every[] = { "*:*", NULL };
	static const char *const tests[] = { "ringtap_test:*", NULL };
	static const char *const only[] = { "seq", "msg", NULL };
	int32_t pids[] = { 1, 2, 0 };
	const struct rt_ring_reader_opts ways[] = {
		{ .encoding = RINGTAP__ENCODING__DECODED, .events = every },
		{ .encoding = RINGTAP__ENCODING__DECODED, .events = every, .common = true },
		{ .encoding = RINGTAP__ENCODING__DECODED, .events = tests, .fields = only,
		  .filter = "seq >= 3" },
		{ .encoding = RINGTAP__ENCODING__DECODED, .events = every, .pids = pids,
		  .n_pids = ARRAY_SIZE(pids) },
	};
	static const char *const what[] = { "every field", "common fields",
					    "projection and filter", "pids" };

	for (size_t i = 0; i < ARRAY_SIZE(ways); i++) {
		struct pid_pick pick = { 0 };
		struct rt_page_result res;
		struct ring_fx r;

		if (!ring_fx_ready(&r, root, name, SLOTS_MAX))
			return;
		pick.l = r.fx.layout;
		if (r.pages[0])
			rt_decode_page(r.fx.decoder, 0, r.pages[0], r.fx.layout->sub_buffer_size,
				       pick_pid, &pick, &res);
		pids[2] = pick.pid;
		compare_way(&r, &ways[i], what[i]);
		ring_fx_close(&r);
	}
}

/*
 * Losses: a reader the writer lapped is told exactly the events of the
 * pages it missed; the kernel's count and a malformed page come before
 * the page that follows them. RAW pages are the bytes written.
 */
static void test_losses(const char *root)
{
	static const char *const every[] = { "*:*", NULL };
	const struct rt_ring_reader_opts raw = { .encoding = RINGTAP__ENCODING__RAW,
						 .events = every };
	Ringtap__Frame *schemas[1] = { 0 };
	struct rt_ring_reader *reader;
	struct lines got = { 0 };
	struct ring_fx r;
	char want[512];
	uint64_t per_page;

	if (!ring_fx_ready(&r, root, "stock", 4))
		return;
	reader = open_reader(&r, &raw, schemas, 0);
	/* Ten pages into four slots before the reader looks: the first seven are gone. */
	for (int i = 0; i < 10; i++)
		put_page(&r, 0, r.pages[0], 0, false);
	per_page = r.events[0] / 10;
	announce(reader, &r);
	drain(reader, &r, 0, &got);
	snprintf(want, sizeof(want),
		 "# cpu 0: lost %" PRIu64 " events (queue)\n"
		 "page cpu 0, 4096 bytes, %" PRIu64 " events\n"
		 "page cpu 0, 4096 bytes, %" PRIu64 " events\n"
		 "page cpu 0, 4096 bytes, %" PRIu64 " events\n",
		 7 * per_page, per_page, per_page, per_page);
	CHECK_STR(got.text ? got.text : "", want);
	got.len = got.n = 0;

	/* The kernel lost 9 before the next page, which the daemon then found malformed. */
	put_page(&r, 0, r.pages[0], 9, true);
	put_page(&r, 0, r.pages[0], 0, false);
	announce(reader, &r);
	drain(reader, &r, RT_FORMAT_JSON, &got);
	snprintf(want, sizeof(want),
		 "{\"lost\":10,\"cpu\":0,\"source\":\"kernel\",\"exact\":false}\n"
		 "page cpu 0, 4096 bytes, %" PRIu64 " events\n", per_page);
	CHECK_STR(got.text ? got.text : "", want);
	free(got.text);
	rt_ring_reader_free(reader);
	ring_fx_close(&r);
}

/*
 * A selected pointer field wants kallsyms (ringtapd names the function it
 * points into; unit-view holds the view's symbol against the Batch's); RAW,
 * or a projection without it, wants none.
 */
static void test_symbols(const char *root)
{
	static const char *const ptr[] = { "ringtap_ptr:*", NULL };
	static const char *const other_field[] = { "common_pid", NULL };
	const struct rt_ring_reader_opts ways[] = {
		{ .encoding = RINGTAP__ENCODING__DECODED, .events = ptr },
		{ .encoding = RINGTAP__ENCODING__RAW, .events = ptr },
		{ .encoding = RINGTAP__ENCODING__DECODED, .events = ptr, .fields = other_field },
	};
	Ringtap__Schema schema = RINGTAP__SCHEMA__INIT;
	static const char kallsyms[] = "ffffffff81234560 T hrtimer_wakeup\n";
	struct rt_why why = { "" };
	struct ring_fx r;

	if (!ring_fx_ready(&r, root, "stock", 4))
		return;
	schema.event_id = 4001;
	schema.system = "ringtap_ptr";
	schema.name = "ptr_test";
	schema.format = (char *)pointer_format;
	for (size_t i = 0; i < ARRAY_SIZE(ways); i++) {
		struct rt_ring_reader *reader = NULL;
		Ringtap__Frame *decoded = NULL;

		CHECK_EQ(rt_ring_reader_new(&reader, r.welcome, &ways[i], &why), 0);
		if (!reader)
			continue;
		CHECK(!rt_ring_reader_wants_symbols(reader));
		CHECK_EQ(rt_ring_reader_schema(reader, &schema, &decoded, &why), 0);
		CHECK_EQ(rt_ring_reader_wants_symbols(reader), i == 0);
		CHECK_EQ(rt_ring_reader_symbols(reader, (const uint8_t *)kallsyms,
						sizeof(kallsyms) - 1), 0);
		if (decoded)
			ringtap__frame__free_unpacked(decoded, NULL);
		rt_ring_reader_free(reader);
	}
	ring_fx_close(&r);
}

/* What the reader refuses: a ring that is not the size it was said to be, notes out of range. */
static void test_refusals(const char *root)
{
	static const char *const every[] = { "*:*", NULL };
	const struct rt_ring_reader_opts raw = { .encoding = RINGTAP__ENCODING__RAW,
						 .events = every };
	uint32_t cpus[1] = { 2 };
	uint64_t written[1] = { 1 };
	Ringtap__RingReady note = RINGTAP__RING_READY__INIT;
	struct rt_ring_reader *reader = NULL;
	struct rt_why why = { "" };
	struct ring_fx r;

	if (!ring_fx_ready(&r, root, "stock", 4))
		return;
	CHECK_EQ(rt_ring_reader_new(&reader, r.welcome, &raw, &why), 0);
	note.n_cpus = note.n_written = 1;
	note.cpus = cpus;
	note.written = written;
	CHECK_EQ(rt_ring_reader_ready(reader, &note, &why), -EBADMSG);	/* before the Ring */
	CHECK_EQ(attach(&r, reader, r.size + 4096, &why), -EBADMSG);
	CHECK_EQ(attach(&r, reader, r.size, &why), 0);
	CHECK_EQ(rt_ring_reader_ready(reader, &note, &why), -EBADMSG);	/* cpu 2 of 2 */
	CHECK_STR(why.text, "a RingReady for cpu 2 of 2");
	rt_ring_reader_free(reader);
	ring_fx_close(&r);
}

/* A new area, as a restarted ringtapd makes it: empty, its page numbers after r's. */
static void *next_area(struct ring_fx *r, struct rt_ring *ring, size_t *size)
{
	struct rt_ring_geometry g = { 2, r->ring.head.slots, r->ring.head.page_size };
	void *base = NULL;

	*size = rt_ring_size(&g);
	if (posix_memalign(&base, 4096, *size))
		return NULL;
	memset(base, 0, *size);
	if (rt_ring_format(ring, base, *size, &g) || rt_ring_continue(ring, &r->ring)) {
		free(base);
		return NULL;
	}
	return base;
}

/* The Ring frame a restarted ringtapd sends: its area, from its first pages. */
static int move(struct ring_fx *r, struct rt_ring_reader *reader, const struct rt_ring *ring,
		struct rt_ring_area *dropped, struct rt_why *why)
{
	uint64_t start[2] = { rt_ring_written(ring, 0), rt_ring_written(ring, 1) };
	uint64_t zeros[2] = { 0, 0 };
	Ringtap__Ring msg = RINGTAP__RING__INIT;

	(void)r;
	msg.size = ring->size;
	msg.n_start_page = msg.n_events_before = msg.n_kernel_lost = msg.n_kernel_inexact =
		msg.n_malformed = 2;
	msg.start_page = start;
	msg.events_before = msg.kernel_lost = msg.kernel_inexact = msg.malformed = zeros;
	return rt_ring_reader_move(reader, &msg, ring->base, ring->size, dropped, why);
}

/*
 * ringtapd restarted: the reader, two pages behind in the old area, reads
 * them there and then the new area's, every page once and no loss; the
 * old area is let go once read to its end on every CPU. Restarted twice
 * before it read the first old area: that one is let go at once and its
 * unread pages counted lost (QUEUE).
 */
static void test_move(const char *root)
{
	static const char *const every[] = { "*:*", NULL };
	const struct rt_ring_reader_opts raw = { .encoding = RINGTAP__ENCODING__RAW,
						 .events = every };
	Ringtap__Frame *schemas[1] = { 0 };
	struct rt_ring_area gone = { 0 };
	struct rt_ring_reader *reader;
	struct rt_ring ring2, ring3;
	struct lines got = { 0 };
	struct rt_why why = { "" };
	void *area1, *area2, *area3 = NULL;
	size_t size2, size3;
	struct ring_fx r;
	char want[512];
	uint64_t per_page;

	if (!ring_fx_ready(&r, root, "stock", 8))
		return;
	reader = open_reader(&r, &raw, schemas, 0);
	put_page(&r, 0, r.pages[0], 0, false);
	announce(reader, &r);
	drain(reader, &r, 0, &got);
	per_page = r.events[0];
	put_page(&r, 0, r.pages[0], 0, false);
	put_page(&r, 0, r.pages[0], 0, false);
	announce(reader, &r);
	got.len = got.n = 0;
	/* The restart: the old area stays the reader's until it is read out. */
	area1 = r.area;
	area2 = next_area(&r, &ring2, &size2);
	CHECK(area2 != NULL);
	if (!area2)
		goto out;
	CHECK_EQ(move(&r, reader, &ring2, &gone, &why), 0);
	CHECK(gone.base == NULL);
	CHECK(!rt_ring_reader_retired(reader, &gone));
	r.ring = ring2;
	r.area = area2;
	put_page(&r, 0, r.pages[0], 0, false);
	announce(reader, &r);
	drain(reader, &r, 0, &got);
	snprintf(want, sizeof(want), "page cpu 0, 4096 bytes, %" PRIu64 " events\n"
		 "page cpu 0, 4096 bytes, %" PRIu64 " events\n"
		 "page cpu 0, 4096 bytes, %" PRIu64 " events\n", per_page, per_page, per_page);
	CHECK_STR(got.text ? got.text : "", want);
	CHECK(rt_ring_reader_retired(reader, &gone));
	CHECK(gone.base == area1);
	CHECK(!rt_ring_reader_retired(reader, &gone));
	free(area1);

	/* Two restarts, the reader two pages behind: the middle area's pages are lost. */
	put_page(&r, 0, r.pages[0], 0, false);
	put_page(&r, 0, r.pages[0], 0, false);
	announce(reader, &r);
	area3 = next_area(&r, &ring3, &size3);
	CHECK(area3 != NULL);
	if (!area3)
		goto out;
	CHECK_EQ(move(&r, reader, &ring3, &gone, &why), 0);
	CHECK(gone.base == NULL);
	r.ring = ring3;
	r.area = area3;
	{
		struct rt_ring ring4;
		size_t size4;
		void *area4 = next_area(&r, &ring4, &size4);

		CHECK(area4 != NULL);
		if (!area4)
			goto out;
		CHECK_EQ(move(&r, reader, &ring4, &gone, &why), 0);
		CHECK(gone.base == area2);
		free(area2);
		area2 = NULL;
		r.ring = ring4;
		r.area = area4;
	}
	put_page(&r, 0, r.pages[0], 0, false);
	announce(reader, &r);
	got.len = got.n = 0;
	drain(reader, &r, 0, &got);
	snprintf(want, sizeof(want), "# cpu 0: lost %" PRIu64 " events (queue)\n"
		 "page cpu 0, 4096 bytes, %" PRIu64 " events\n", 2 * per_page, per_page);
	CHECK_STR(got.text ? got.text : "", want);
	/* The reader read on past area 3 (its only page came before area 4): let go too. */
	CHECK(rt_ring_reader_retired(reader, &gone));
	CHECK(gone.base == area3);
out:
	free(area2);
	free(area3);
	free(got.text);
	rt_ring_reader_free(reader);
	ring_fx_close(&r);
}

int main(int argc, char **argv)
{
	const char *root = argc > 1 ? argv[1] : "tests/fixtures";

	CHECK(tree_each(root, test_tree) >= 6);
	test_losses(root);
	test_symbols(root);
	test_refusals(root);
	test_move(root);
	return check_exit("test-ring-reader");
}
