// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * view: every record of every fixture, encoded as ringtapd sends it (with
 * and without common fields), read in place from its Batch frame must give
 * the values protobuf-c unpacks from the same bytes, and the same text and
 * JSON lines; a Batch whose CPU comes after its records, fields of a later
 * version, and values a third party might write (a multi-byte key, a
 * symbol) read the same; a truncated record is refused, and one with more
 * values than room asks for more without losing its place; numbers of
 * every varint length, texts about the one-byte length's limit and fields
 * after common values read the same as protobuf-c reads them. Pages: the
 * page read in place is the one protobuf-c unpacks, counts packed or not.
 */
#include "encode.h"
#include "fixture.h"
#include "format.h"
#include "pointer-event.h"
#include "sent-view.h"
#include "view.h"
#include "wire.h"

static const char *const events[] = { "ringtap_test:ringtap_test", "sched:sched_switch",
				      "ftrace:print", NULL };

struct run {
	struct fixture *fx;
	struct rt_record_encoder *enc;
	struct rt_buf records;
	unsigned int compared;
};

static int collect(const struct rt_record *rec, void *ctx)
{
	struct run *r = ctx;

	if (rec->event)
		CHECK_EQ(rt_record_encoder_put(r->enc, rec, &r->records), 0);
	return 0;
}

static bool same_value(const struct rt_value *v, const Ringtap__Value *m)
{
	bool sym = m->symbol ? v->symbol && v->symbol_len == strlen(m->symbol) &&
				       !memcmp(v->symbol, m->symbol, v->symbol_len) :
			       !v->symbol;

	switch (m->v_case) {
	case RINGTAP__VALUE__V_S:
		return sym && v->kind == RT_VALUE_SIGNED && v->s == m->s;
	case RINGTAP__VALUE__V_U:
		return sym && v->kind == RT_VALUE_UNSIGNED && v->u == m->u;
	case RINGTAP__VALUE__V_STR:
		return sym && v->kind == RT_VALUE_TEXT && v->len == strlen(m->str) &&
		       !memcmp(v->bytes, m->str, v->len);
	case RINGTAP__VALUE__V_RAW:
		return sym && v->kind == RT_VALUE_BYTES && v->len == m->raw.len &&
		       (!v->len || !memcmp(v->bytes, m->raw.data, v->len));
	default:
		return sym && v->kind == RT_VALUE_NONE;
	}
}

/* One page's Batch: read in place and unpacked, record for record. */
static void compare_batch(struct run *r, unsigned int cpu, const Ringtap__Layout *layout)
{
	struct rt_frame_parts parts;
	struct rt_buf frame = { 0 };
	struct rt_batch_view b;
	struct rt_record_view view;
	struct rt_value vals[64];
	const uint8_t *payload, *batch;
	Ringtap__Frame *f;
	uint64_t len;
	size_t blen, i = 0;
	int used;

	CHECK_EQ(rt_encode_batch_parts(RINGTAP__FRAME__MSG_BATCH, cpu, &r->records, &parts), 0);
	for (unsigned int k = 0; k < parts.n; k++)
		rt_buf_put(&frame, parts.iov[k].iov_base, parts.iov[k].iov_len);
	used = rt_wire_varint_decode(frame.data, frame.len, &len);
	payload = frame.data + used;
	f = ringtap__frame__unpack(NULL, len, payload);
	CHECK(f && f->msg_case == RINGTAP__FRAME__MSG_BATCH);
	CHECK_EQ(rt_view_frame_batch(payload, len, &batch, &blen), 1);
	CHECK_EQ(rt_batch_view_open(&b, batch, blen), 0);
	CHECK_EQ(b.cpu, cpu);
	while (f && rt_batch_view_next(&b, &view, vals, 64) == 1) {
		const Ringtap__Record *m = i < f->batch->n_records ? f->batch->records[i] : NULL;
		char a[1024], c[1024];

		CHECK(m != NULL);
		if (!m)
			break;
		CHECK_EQ(view.timestamp, m->timestamp);
		CHECK_EQ(view.event_id, m->event_id);
		CHECK_EQ(view.pid, m->pid);
		CHECK_EQ(view.n_fields, m->n_fields);
		CHECK_EQ(view.n_common, m->n_common);
		for (size_t k = 0; k < view.n_fields && k < m->n_fields; k++)
			CHECK(same_value(&view.fields[k], m->fields[k]));
		for (size_t k = 0; k < view.n_common && k < m->n_common; k++)
			CHECK(same_value(&view.common[k], m->common[k]));
		for (unsigned int flags = 0; flags < 4; flags++) {
			rt_format_view(a, sizeof(a), layout, cpu, &view, NULL, flags);
			rt_format_record(c, sizeof(c), layout, cpu, m, NULL, flags);
			CHECK_STR(a, c);
		}
		i++;
		r->compared++;
	}
	CHECK_EQ(i, f ? f->batch->n_records : 0);
	if (f)
		ringtap__frame__free_unpacked(f, NULL);
	rt_buf_free(&frame);
}

static void test_fixture(const char *root, const char *name, bool common)
{
	struct fixture fx;
	struct run r = { .fx = &fx };
	struct rt_host host = { "h", "6.1", "b", 2, "local" };
	struct rt_buf w = { 0 };
	Ringtap__Welcome *welcome = NULL;
	const uint8_t *msg;
	size_t len;

	if (fixture_open(&fx, root, name, events)) {
		CHECK(!"fixture opens");
		return;
	}
	CHECK_EQ(rt_record_encoder_new(&r.enc, fx.layout, common, NULL), 0);
	if (!rt_encode_welcome_frame(1, RINGTAP__ENCODING__DECODED, &host, fx.layout, &w) &&
	    !rt_encode_inner(&w, true, &msg, &len))
		welcome = ringtap__welcome__unpack(NULL, len, msg);
	CHECK(welcome != NULL);
	for (int cpu = 0; cpu < 2 && welcome; cpu++) {
		uint8_t *pages = fixture_pages(&fx, cpu, &len);

		for (size_t off = 0; pages && off + fx.layout->sub_buffer_size <= len;
		     off += fx.layout->sub_buffer_size) {
			struct rt_page_result res;

			r.records.len = 0;
			rt_decode_page(fx.decoder, (unsigned int)cpu, pages + off,
				       fx.layout->sub_buffer_size, collect, &r, &res);
			if (r.records.len)
				compare_batch(&r, (unsigned int)cpu, welcome->layout);
		}
		free(pages);
	}
	CHECK(r.compared >= 100);
	printf("%s%s: %u records read in place as protobuf-c reads them\n", name,
	       common ? " with common fields" : "", r.compared);
	if (welcome)
		ringtap__welcome__free_unpacked(welcome, NULL);
	rt_buf_free(&w);
	rt_buf_free(&r.records);
	rt_record_encoder_free(r.enc);
	fixture_close(&fx);
}

/* Two views of one value: the same kind, number or bytes, and symbol. */
static bool same_view_value(const struct rt_value *a, const struct rt_value *b)
{
	if (a->kind != b->kind || !a->symbol != !b->symbol ||
	    (a->symbol && (a->symbol_len != b->symbol_len ||
			   memcmp(a->symbol, b->symbol, a->symbol_len))))
		return false;
	switch (a->kind) {
	case RT_VALUE_SIGNED:
	case RT_VALUE_UNSIGNED:
		return a->u == b->u;
	case RT_VALUE_TEXT:
	case RT_VALUE_BYTES:
		return a->len == b->len && (!a->len || !memcmp(a->bytes, b->bytes, a->len));
	default:
		return true;
	}
}

struct direct {
	struct rt_record_encoder *enc, *viewer;
	const Ringtap__Layout *layout;
	unsigned int compared, values;
};

/*
 * One record: encoded as ringtapd sends it and read from its Batch, and
 * viewed straight from the record (a ring reader's way); field by field,
 * and as text and JSON lines.
 */
static int compare_direct(const struct rt_record *rec, void *ctx)
{
	struct direct *d = ctx;
	struct rt_buf frame = { 0 };
	struct rt_record_view sent, direct;
	struct rt_value sent_vals[64], direct_vals[64];
	char a[2048], c[2048];

	if (!rec->event) {
		CHECK_EQ(rt_record_encoder_view(d->viewer, rec, &direct, direct_vals, 64), -EINVAL);
		return 0;
	}
	sent_view(d->enc, rec, &frame, &sent, sent_vals, 64);
	CHECK_EQ(rt_record_encoder_view(d->viewer, rec, &direct, direct_vals, 64), 0);
	CHECK_EQ(direct.timestamp, sent.timestamp);
	CHECK_EQ(direct.event_id, sent.event_id);
	CHECK_EQ(direct.pid, sent.pid);
	CHECK_EQ(direct.n_fields, sent.n_fields);
	CHECK_EQ(direct.n_common, sent.n_common);
	for (size_t k = 0; k < direct.n_fields && k < sent.n_fields; k++, d->values++)
		CHECK(same_view_value(&direct.fields[k], &sent.fields[k]));
	for (size_t k = 0; k < direct.n_common && k < sent.n_common; k++, d->values++)
		CHECK(same_view_value(&direct.common[k], &sent.common[k]));
	for (unsigned int flags = 0; flags < 4; flags++) {
		rt_format_view(a, sizeof(a), d->layout, rec->cpu, &direct, NULL, flags);
		rt_format_view(c, sizeof(c), d->layout, rec->cpu, &sent, NULL, flags);
		CHECK_STR(a, c);
	}
	/* Too little room: refused, as a Batch view refuses it. */
	if (direct.n_fields + direct.n_common)
		CHECK_EQ(rt_record_encoder_view(d->viewer, rec, &direct, direct_vals,
						direct.n_fields + direct.n_common - 1), -ENOSPC);
	d->compared++;
	rt_buf_free(&frame);
	return 0;
}

static void direct_done(Ringtap__Welcome *welcome, struct rt_buf *w, struct fixture *fx)
{
	if (welcome)
		ringtap__welcome__free_unpacked(welcome, NULL);
	rt_buf_free(w);
	fixture_close(fx);
}

/* Every record of a fixture tree, every event it has, the ways a subscriber may ask. */
static void test_direct(const char *root, const char *name)
{
	static const char *const every[] = { "*:*", NULL };
	static const char *const only[] = { "prev_comm", "next_pid", "msg", "seq", "buf", NULL };
	struct rt_host host = { "h", "6.1", "b", 2, "local" };
	struct fixture fx;
	struct rt_buf w = { 0 };
	Ringtap__Welcome *welcome = NULL;
	const uint8_t *msg;
	size_t len;

	if (fixture_open(&fx, root, name, every)) {
		CHECK(!"fixture opens");
		return;
	}
	if (!rt_encode_welcome_frame(1, RINGTAP__ENCODING__DECODED, &host, fx.layout, &w) &&
	    !rt_encode_inner(&w, true, &msg, &len))
		welcome = ringtap__welcome__unpack(NULL, len, msg);
	CHECK(welcome != NULL);
	for (unsigned int way = 0; way < 3 && welcome; way++) {
		const char *const *fields = way == 2 ? only : NULL;
		struct direct d = { .layout = welcome->layout };

		CHECK_EQ(rt_record_encoder_new(&d.enc, fx.layout, way == 1, fields), 0);
		CHECK_EQ(rt_record_encoder_new(&d.viewer, fx.layout, way == 1, fields), 0);
		for (int cpu = 0; cpu < fx.ncpus; cpu++) {
			uint8_t *pages = fixture_pages(&fx, cpu, &len);

			for (size_t off = 0; pages && off + fx.layout->sub_buffer_size <= len;
			     off += fx.layout->sub_buffer_size) {
				struct rt_page_result res;

				rt_decode_page(fx.decoder, (unsigned int)cpu, pages + off,
					       fx.layout->sub_buffer_size, compare_direct, &d, &res);
			}
			free(pages);
		}
		CHECK(d.compared >= 100);
		printf("%s, %s: %u records (%u values) viewed from the record as from its Batch\n",
		       name, way == 0 ? "every field" : way == 1 ? "common fields" : "projection",
		       d.compared, d.values);
		rt_record_encoder_free(d.enc);
		rt_record_encoder_free(d.viewer);
	}
	direct_done(welcome, &w, &fx);
}

/*
 * A pointer field's value comes with the kernel function it points into
 * when the layout has kallsyms (ringtapd's, or a ring reader's from
 * HostTexts): the view from the record names it as the Batch does.
 */
static void test_pointer(const char *root)
{
	static const char *const print[] = { "ftrace:print", NULL };
	struct direct d = { 0 };
	struct rt_record rec = { .timestamp = 7, .type = 4001, .cpu = 1 };
	uint8_t data[16] = { 0xa1, 0x0f, 0, 0, 42, 0, 0, 0 };
	uint64_t fn = 0xffffffff81234560ULL + 0x10;
	Ringtap__Welcome *welcome = NULL;
	struct rt_host host = { "h", "6.1", "b", 2, "local" };
	struct rt_buf w = { 0 };
	struct fixture fx;
	const uint8_t *msg;
	size_t len;

	if (fixture_open(&fx, root, "stock", print)) {
		CHECK(!"fixture opens");
		return;
	}
	CHECK_EQ(rt_layout_add_event(fx.layout, "ringtap_ptr", pointer_format,
				     sizeof(pointer_format) - 1, &rec.event), 0);
	CHECK_EQ(tep_parse_kallsyms(fx.layout->tep, "ffffffff81234560 T hrtimer_wakeup\n"
						  "ffffffff81234600 T hrtimer_next\n"), 0);
	if (!rt_encode_welcome_frame(1, RINGTAP__ENCODING__DECODED, &host, fx.layout, &w) &&
	    !rt_encode_inner(&w, true, &msg, &len))
		welcome = ringtap__welcome__unpack(NULL, len, msg);
	memcpy(data + 8, &fn, 8);
	rec.data = data;
	rec.size = sizeof(data);
	d.layout = welcome ? welcome->layout : NULL;
	CHECK_EQ(rt_record_encoder_new(&d.enc, fx.layout, false, NULL), 0);
	CHECK_EQ(rt_record_encoder_new(&d.viewer, fx.layout, false, NULL), 0);
	if (rec.event && welcome) {
		struct rt_record_view view;
		struct rt_value vals[4];

		compare_direct(&rec, &d);
		CHECK_EQ(d.compared, 1);
		CHECK_EQ(rt_record_encoder_view(d.viewer, &rec, &view, vals, 4), 0);
		CHECK(view.n_fields == 1 && vals[0].u == fn && vals[0].symbol &&
		      vals[0].symbol_len == 14 && !memcmp(vals[0].symbol, "hrtimer_wakeup", 14));
	}
	rt_record_encoder_free(d.enc);
	rt_record_encoder_free(d.viewer);
	direct_done(welcome, &w, &fx);
}

/* Bytes a third party might send: the CPU last, an unknown field, a two-byte key, a symbol. */
static void test_foreign(void)
{
	static const uint8_t batch[] = {
		0x12, 0x1a,			/* records: a Record of 26 bytes */
		0x08, 0x05,			/* timestamp 5 */
		0x10, 0x07,			/* event_id 7 */
		0x18, 0x7f,			/* pid 127 */
		0xf8, 0x01, 0x01,		/* field 31, varint 1: a later version's */
		0x22, 0x0a,			/* fields: a Value of 10 bytes */
		0x10, 0x2a,			/* u 42 */
		0x2a, 0x06, 'f', 'o', 'o', '_', 'f', 'n', /* symbol "foo_fn" */
		0xa2, 0x00, 0x02, 0x08, 0x7f,	/* fields, key in two bytes (not minimal): s 127 */
		0x08, 0x03,			/* cpu 3, after the records */
	};
	struct rt_batch_view b;
	struct rt_record_view view;
	struct rt_value vals[4];

	CHECK_EQ(rt_batch_view_open(&b, batch, sizeof(batch)), 0);
	CHECK_EQ(b.cpu, 3);
	CHECK_EQ(rt_batch_view_next(&b, &view, vals, 4), 1);
	CHECK_EQ(view.timestamp, 5);
	CHECK_EQ(view.event_id, 7);
	CHECK_EQ(view.pid, 127);
	CHECK_EQ(view.n_fields, 2);
	CHECK(view.fields[0].kind == RT_VALUE_UNSIGNED && view.fields[0].u == 42);
	CHECK(view.fields[0].symbol && view.fields[0].symbol_len == 6 &&
	      !memcmp(view.fields[0].symbol, "foo_fn", 6));
	CHECK(view.fields[1].kind == RT_VALUE_SIGNED && view.fields[1].s == 127);
	CHECK_EQ(rt_batch_view_next(&b, &view, vals, 4), 0);
	/* Too little room: asked again with more, the record is still there. */
	CHECK_EQ(rt_batch_view_open(&b, batch, sizeof(batch)), 0);
	CHECK_EQ(rt_batch_view_next(&b, &view, vals, 1), -ENOSPC);
	CHECK_EQ(rt_batch_view_next(&b, &view, vals, 4), 1);
	/* Cut short: the Record's length runs past the Batch. */
	CHECK_EQ(rt_batch_view_open(&b, batch, 10), -EBADMSG);
	/* No CPU at all: a required field. */
	CHECK_EQ(rt_batch_view_open(&b, batch, sizeof(batch) - 2), -EBADMSG);
}

/* The same record as ringtapd writes it, and with a later version's field at its end. */
static void test_as_written(void)
{
	static const uint8_t record[] = {
		0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01,	/* timestamp 2^35 */
		0x10, 0x96, 0x01,				/* event_id 150 */
		0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* pid -1 */
		0x22, 0x02, 0x10, 0x05,				/* fields: u 5 */
		0x22, 0x03, 0x10, 0xac, 0x02,			/* u 300 */
		0x22, 0x05, 0x1a, 0x03, 'a', 'b', 'c',		/* str "abc" */
		0x22, 0x07, 0x10, 0x01, 0x2a, 0x03, 'f', 'n', '1', /* u 1, symbol "fn1" */
		0x22, 0x02, 0x08, 0x7f,				/* s 127 */
		0x2a, 0x02, 0x10, 0x02,				/* common: u 2 */
		0x2a, 0x02, 0x08, 0x03,				/* s 3 */
	};
	uint8_t batch[2 + sizeof(record) + 3 + 2];
	struct rt_batch_view b;
	struct rt_record_view view;
	struct rt_value vals[8];

	for (int later = 0; later < 2; later++) {
		size_t len = sizeof(record) + (later ? 3 : 0), n = 0;

		batch[n++] = 0x12;
		batch[n++] = (uint8_t)len;
		memcpy(batch + n, record, sizeof(record));
		n += sizeof(record);
		if (later) {
			/* field 31, varint 1: the general reader's turn */
			batch[n++] = 0xf8;
			batch[n++] = 0x01;
			batch[n++] = 0x01;
		}
		batch[n++] = 0x08;
		batch[n++] = 0x01;	/* cpu 1 */
		CHECK_EQ(rt_batch_view_open(&b, batch, n), 0);
		CHECK_EQ(rt_batch_view_next(&b, &view, vals, 6), -ENOSPC);
		CHECK_EQ(rt_batch_view_next(&b, &view, vals, 7), 1);
		CHECK_EQ(view.timestamp, 1ULL << 35);
		CHECK_EQ(view.event_id, 150);
		CHECK_EQ(view.pid, -1);
		CHECK_EQ(view.n_fields, 5);
		CHECK(view.fields[0].kind == RT_VALUE_UNSIGNED && view.fields[0].u == 5 &&
		      !view.fields[0].symbol);
		CHECK(view.fields[1].kind == RT_VALUE_UNSIGNED && view.fields[1].u == 300);
		CHECK(view.fields[2].kind == RT_VALUE_TEXT && view.fields[2].len == 3 &&
		      !memcmp(view.fields[2].bytes, "abc", 3) && !view.fields[2].symbol);
		CHECK(view.fields[3].kind == RT_VALUE_UNSIGNED && view.fields[3].u == 1 &&
		      view.fields[3].symbol_len == 3 && !memcmp(view.fields[3].symbol, "fn1", 3));
		CHECK(view.fields[4].kind == RT_VALUE_SIGNED && view.fields[4].s == 127);
		CHECK_EQ(view.n_common, 2);
		CHECK(view.common[0].kind == RT_VALUE_UNSIGNED && view.common[0].u == 2);
		CHECK(view.common[1].kind == RT_VALUE_SIGNED && view.common[1].s == 3);
		CHECK_EQ(rt_batch_view_next(&b, &view, vals, 7), 0);
	}
	/* A Value cut short inside a record as written: malformed, whichever reader. */
	memcpy(batch, (const uint8_t[]){ 0x12, 12, 0x08, 0x01, 0x10, 0x01, 0x18, 0x01,
					  0x22, 0x04, 0x10, 0x05, 0x1a, 0x09, 0x08, 0x01 }, 16);
	CHECK_EQ(rt_batch_view_open(&b, batch, 16), 0);
	CHECK_EQ(rt_batch_view_next(&b, &view, vals, 8), -EBADMSG);
	/* A Value whose number runs on past it into the next Value: malformed too. */
	memcpy(batch, (const uint8_t[]){ 0x12, 15, 0x08, 0x01, 0x10, 0x01, 0x18, 0x01,
					  0x22, 0x03, 0x10, 0x80, 0x80, 0x22, 0x02, 0x10, 0x01,
					  0x08, 0x01 }, 19);
	CHECK_EQ(rt_batch_view_open(&b, batch, 19), 0);
	CHECK_EQ(rt_batch_view_next(&b, &view, vals, 8), -EBADMSG);
	/* The same with a Value of two bytes: its number's byte says more follow. */
	memcpy(batch, (const uint8_t[]){ 0x12, 14, 0x08, 0x01, 0x10, 0x01, 0x18, 0x01,
					  0x22, 0x02, 0x10, 0x80, 0x22, 0x02, 0x10, 0x01,
					  0x08, 0x01 }, 18);
	CHECK_EQ(rt_batch_view_open(&b, batch, 18), 0);
	CHECK_EQ(rt_batch_view_next(&b, &view, vals, 8), -EBADMSG);
}

/*
 * Records protobuf-c packs that the reader of ringtapd's shape must hand
 * on or read alike: texts of 124 to 127 bytes (a Value's length of one
 * byte or two), and a field after the common values.
 */
static void test_shapes(void)
{
	static char text[128];

	memset(text, 'x', sizeof(text) - 1);
	for (unsigned int shape = 0; shape < 5; shape++) {
		Ringtap__Value a = RINGTAP__VALUE__INIT, c = RINGTAP__VALUE__INIT;
		Ringtap__Value z = RINGTAP__VALUE__INIT;
		Ringtap__Value *fields[] = { &a, &z }, *common[] = { &c };
		Ringtap__Record rec = RINGTAP__RECORD__INIT;
		struct rt_batch_view b;
		struct rt_record_view view;
		struct rt_value vals[4];
		uint8_t bytes[512];
		size_t n = 0, len;

		a.v_case = RINGTAP__VALUE__V_STR;
		a.str = text + sizeof(text) - 1 - (124 + shape % 4);
		c.v_case = RINGTAP__VALUE__V_U;
		c.u = 300;
		z.v_case = RINGTAP__VALUE__V_S;
		z.s = 7;
		rec.timestamp = 1;
		rec.event_id = 2;
		rec.pid = 3;
		rec.fields = fields;
		rec.n_fields = 1;
		rec.common = common;
		rec.n_common = 1;
		bytes[n++] = 0x08;	/* cpu 0 */
		bytes[n++] = 0x00;
		bytes[n++] = 0x12;	/* records */
		len = ringtap__record__get_packed_size(&rec);
		if (shape == 4)
			len += 4;	/* and a field after the common value */
		n += rt_wire_varint_encode(len, bytes + n);
		n += ringtap__record__pack(&rec, bytes + n);
		if (shape == 4) {
			memcpy(bytes + n, (const uint8_t[]){ 0x22, 0x02, 0x08, 0x07 }, 4);
			n += 4;
		}
		CHECK_EQ(rt_batch_view_open(&b, bytes, n), 0);
		CHECK_EQ(rt_batch_view_next(&b, &view, vals, 4), 1);
		CHECK_EQ(view.n_fields, shape == 4 ? 2 : 1);
		CHECK(view.n_fields && view.fields[0].kind == RT_VALUE_TEXT &&
		      view.fields[0].len == strlen(a.str) &&
		      !memcmp(view.fields[0].bytes, a.str, view.fields[0].len));
		CHECK(view.n_fields < 2 || (view.fields[1].kind == RT_VALUE_SIGNED &&
					    view.fields[1].s == 7));
		CHECK(view.n_common == 1 && view.common[0].kind == RT_VALUE_UNSIGNED &&
		      view.common[0].u == 300);
		CHECK_EQ(rt_batch_view_next(&b, &view, vals, 4), 0);
	}
}

/*
 * Numbers of every varint length, one to ten bytes, as protobuf-c packs
 * them: read with eight bytes at hand (a text after them) and at the very
 * end of the record (no values, or the number last), the values must be
 * the ones packed.
 */
static void test_varint_lengths(void)
{
	for (unsigned int bits = 0; bits <= 64; bits++)
		for (unsigned int shape = 0; shape < 6; shape++) {
			uint64_t x = bits == 64 ? UINT64_MAX : (1ULL << bits) - (shape & 1);
			Ringtap__Value u = RINGTAP__VALUE__INIT, s = RINGTAP__VALUE__INIT;
			Ringtap__Value text = RINGTAP__VALUE__INIT;
			Ringtap__Value *fields[] = { &u, &s, &text }, *common[] = { &u };
			Ringtap__Record rec = RINGTAP__RECORD__INIT, *recs[] = { &rec };
			Ringtap__Batch batch = RINGTAP__BATCH__INIT;
			struct rt_batch_view b;
			struct rt_record_view view;
			struct rt_value vals[4];
			uint8_t bytes[128];
			size_t len;

			u.v_case = RINGTAP__VALUE__V_U;
			u.u = x;
			s.v_case = RINGTAP__VALUE__V_S;
			s.s = (int64_t)x;
			text.v_case = RINGTAP__VALUE__V_STR;
			text.str = "eight bytes or more";
			rec.timestamp = x;
			rec.event_id = (uint32_t)x;
			rec.pid = (int32_t)x;
			/* shape / 2: no values; the text last; the common number last. */
			rec.fields = fields;
			rec.n_fields = shape / 2 ? 3 : 0;
			rec.common = common;
			rec.n_common = shape / 2 == 2;
			batch.cpu = 1;
			batch.records = recs;
			batch.n_records = 1;
			len = ringtap__batch__pack(&batch, bytes);
			CHECK(len <= sizeof(bytes));
			CHECK_EQ(rt_batch_view_open(&b, bytes, len), 0);
			CHECK_EQ(rt_batch_view_next(&b, &view, vals, 4), 1);
			CHECK_EQ(view.timestamp, x);
			CHECK_EQ(view.event_id, (uint32_t)x);
			CHECK_EQ(view.pid, (int32_t)x);
			CHECK_EQ(view.n_fields, rec.n_fields);
			CHECK_EQ(view.n_common, rec.n_common);
			for (size_t k = 0; k < view.n_fields && k < rec.n_fields; k++)
				CHECK(same_value(&view.fields[k], fields[k]));
			if (view.n_common == 1 && rec.n_common == 1)
				CHECK(same_value(&view.common[0], &u));
			CHECK_EQ(rt_batch_view_next(&b, &view, vals, 4), 0);
		}
}

/* Pages as ringtapd writes them: the page in place, the same as protobuf-c unpacks. */
static void test_pages_as_written(void)
{
	static uint8_t page[4096];
	struct rt_frame_parts parts;
	struct rt_buf frame = { 0 };
	struct rt_pages_view v;
	const uint8_t *payload, *msg, *at;
	Ringtap__Frame *f;
	uint32_t number, records;
	uint64_t len;
	size_t msg_len, at_len;
	int used;

	for (size_t i = 0; i < sizeof(page); i++)
		page[i] = (uint8_t)(i * 7);
	CHECK_EQ(rt_encode_pages_parts(3, page, sizeof(page), 57, 0, &parts), 0);
	for (unsigned int k = 0; k < parts.n; k++)
		rt_buf_put(&frame, parts.iov[k].iov_base, parts.iov[k].iov_len);
	used = rt_wire_varint_decode(frame.data, frame.len, &len);
	payload = frame.data + used;
	CHECK_EQ(rt_view_frame_message(payload, len, &number, &msg, &msg_len), 1);
	CHECK_EQ(number, RINGTAP__FRAME__MSG_PAGES);
	CHECK_EQ(rt_view_frame_batch(payload, len, &msg, &msg_len), 0);
	CHECK_EQ(rt_view_frame_message(payload, len, &number, &msg, &msg_len), 1);
	CHECK_EQ(rt_pages_view_open(&v, msg, msg_len), 0);
	CHECK_EQ(v.cpu, 3);
	CHECK_EQ(rt_pages_view_next(&v, &at, &at_len, &records), 1);
	CHECK_EQ(at_len, sizeof(page));
	CHECK(at_len == sizeof(page) && !memcmp(at, page, sizeof(page)));
	CHECK(at > frame.data && at + at_len <= frame.data + frame.len);	/* in the frame */
	CHECK_EQ(records, 57);
	CHECK_EQ(rt_pages_view_next(&v, &at, &at_len, &records), 0);
	f = ringtap__frame__unpack(NULL, len, payload);
	CHECK(f && f->msg_case == RINGTAP__FRAME__MSG_PAGES && f->pages->cpu == 3 &&
	      f->pages->n_pages == 1 && f->pages->n_records == 1 && f->pages->records[0] == 57);
	if (f)
		ringtap__frame__free_unpacked(f, NULL);
	rt_buf_free(&frame);
}

/* Pages as another writer may send them: counts packed, one by one, split, missing; the CPU last. */
static void test_pages_foreign(void)
{
	static const uint8_t packed_first[] = {
		0x1a, 0x03, 0x05, 0xac, 0x02,	/* records: packed [5, 300] */
		0x12, 0x02, 'a', 'b',		/* pages: "ab" */
		0xf8, 0x01, 0x01,		/* field 31, varint 1: a later version's */
		0x12, 0x01, 'c',		/* pages: "c" */
		0x08, 0x02,			/* cpu 2, last */
	};
	static const uint8_t split[] = {
		0x08, 0x01,			/* cpu 1 */
		0x18, 0x07,			/* records 7, one by one */
		0x12, 0x01, 'x',		/* pages: "x" */
		0x12, 0x00,			/* pages: empty */
		0x12, 0x01, 'z',		/* pages: "z", no count left for it: 0 */
		0x18, 0x08,			/* records 8 */
	};
	static const uint8_t bad_page[] = { 0x08, 0x01, 0x10, 0x05 };	/* pages as a varint */
	static const uint8_t no_cpu[] = { 0x12, 0x01, 'x' };
	static const uint8_t cut[] = { 0x08, 0x01, 0x12, 0x05, 'x' };	/* 5 bytes said, 1 there */
	/* Frame: a Bye, then Pages: of a oneof the last one counts (protobuf-c takes it too). */
	static const uint8_t two_messages[] = { 0x5a, 0x00, 0x32, 0x02, 0x08, 0x00 };
	static const uint8_t cpu_as_bytes[] = { 0x0a, 0x01, 0x01, 0x12, 0x01, 'x' };
	static const uint8_t cut_count[] = { 0x08, 0x01, 0x1a, 0x01, 0x80, 0x12, 0x01, 'x' };
	struct rt_pages_view v;
	const uint8_t *at;
	uint32_t records, number;
	size_t len;

	CHECK_EQ(rt_pages_view_open(&v, packed_first, sizeof(packed_first)), 0);
	CHECK_EQ(v.cpu, 2);
	CHECK_EQ(rt_pages_view_next(&v, &at, &len, &records), 1);
	CHECK(len == 2 && !memcmp(at, "ab", 2) && records == 5);
	CHECK_EQ(rt_pages_view_next(&v, &at, &len, &records), 1);
	CHECK(len == 1 && at[0] == 'c' && records == 300);
	CHECK_EQ(rt_pages_view_next(&v, &at, &len, &records), 0);

	CHECK_EQ(rt_pages_view_open(&v, split, sizeof(split)), 0);
	CHECK_EQ(v.cpu, 1);
	CHECK_EQ(rt_pages_view_next(&v, &at, &len, &records), 1);
	CHECK(len == 1 && at[0] == 'x' && records == 7);
	CHECK_EQ(rt_pages_view_next(&v, &at, &len, &records), 1);
	CHECK(len == 0 && records == 8);
	CHECK_EQ(rt_pages_view_next(&v, &at, &len, &records), 1);
	CHECK(len == 1 && at[0] == 'z' && records == 0);
	CHECK_EQ(rt_pages_view_next(&v, &at, &len, &records), 0);

	CHECK_EQ(rt_pages_view_open(&v, bad_page, sizeof(bad_page)), -EBADMSG);
	CHECK_EQ(rt_pages_view_open(&v, no_cpu, sizeof(no_cpu)), -EBADMSG);
	CHECK_EQ(rt_pages_view_open(&v, cut, sizeof(cut)), -EBADMSG);
	CHECK_EQ(rt_pages_view_open(&v, cpu_as_bytes, sizeof(cpu_as_bytes)), -EBADMSG);
	CHECK_EQ(rt_pages_view_open(&v, cut_count, sizeof(cut_count)), -EBADMSG);
	CHECK_EQ(rt_view_frame_message(two_messages, sizeof(two_messages), &number, &at, &len), 1);
	CHECK(number == RINGTAP__FRAME__MSG_PAGES && len == 2 && at == two_messages + 4);
	{
		Ringtap__Frame *f = ringtap__frame__unpack(NULL, sizeof(two_messages), two_messages);

		CHECK(f && f->msg_case == RINGTAP__FRAME__MSG_PAGES);
		if (f)
			ringtap__frame__free_unpacked(f, NULL);
	}
	CHECK_EQ(rt_view_frame_message(two_messages, 0, &number, &at, &len), 0);
	CHECK_EQ(rt_view_frame_message(cut + 2, sizeof(cut) - 2, &number, &at, &len), -EBADMSG);
}

int main(int argc, char **argv)
{
	const char *root = argc > 1 ? argv[1] : "tests/fixtures";

	test_fixture(root, "stock", false);
	test_fixture(root, "stock", true);
	test_fixture(root, "padded", true);
	test_fixture(root, "rt", true);
	CHECK(tree_each(root, test_direct) >= 6);
	test_pointer(root);
	test_foreign();
	test_as_written();
	test_varint_lengths();
	test_shapes();
	test_pages_as_written();
	test_pages_foreign();
	return check_exit("test-view");
}
