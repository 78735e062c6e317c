// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * encode: records are written by hand from a plan per event, not through
 * protobuf-c. For every record of every fixture (with and without common
 * fields, with a projection, cut short), the bytes must equal those of the
 * reference (each field read through decode.h into a protobuf-c message,
 * packed), and protobuf-c unpacking and packing them again must give the
 * same bytes: the values are the decoder's and the encoding is the
 * canonical one.
 */
#include "encode.h"
#include "fixture.h"
#include "record-reference.h"
#include "rel-loc.h"
#include "wire.h"

static const char *const events[] = { "ringtap_test:ringtap_test", "sched:sched_switch",
				      "ftrace:print", NULL };

struct run {
	struct fixture *fx;
	unsigned int records, checked;
};

/* TAG_BATCH_RECORDS, the length, then the Record: returns the Record's bytes. */
static const uint8_t *record_bytes(const struct rt_buf *b, size_t *len)
{
	uint64_t tag, n;
	size_t pos = 0;
	int used;

	used = rt_wire_varint_decode(b->data, b->len, &tag);
	if (used <= 0 || tag != ((2 << 3) | 2))
		return NULL;
	pos += (size_t)used;
	used = rt_wire_varint_decode(b->data + pos, b->len - pos, &n);
	if (used <= 0)
		return NULL;
	pos += (size_t)used;
	if (pos + n != b->len)
		return NULL;
	*len = n;
	return b->data + pos;
}

/* protobuf-c packs the unpacked record to the same bytes. */
static void check_repacks(const Ringtap__Record *m, const uint8_t *bytes, size_t len)
{
	uint8_t *again = malloc(len ? len : 1);

	CHECK_EQ(ringtap__record__get_packed_size(m), len);
	if (again && ringtap__record__get_packed_size(m) == len) {
		ringtap__record__pack(m, again);
		CHECK(!memcmp(again, bytes, len));
	}
	free(again);
}

static void check_one(struct run *r, const struct rt_record *rec, bool common,
		      const char *const *only)
{
	struct rt_buf b = { 0 };
	const uint8_t *bytes;
	uint8_t *reference;
	size_t len = 0, expect_fields = 0, ref_len = 0;
	Ringtap__Record *m;

	CHECK_EQ(rt_encode_record(rec, r->fx->layout, common, only, &b), 0);
	reference = reference_record(rec, r->fx->layout, common, only, &ref_len);
	CHECK(reference != NULL);
	CHECK_EQ(b.len, ref_len);
	if (reference && b.len == ref_len)
		CHECK(!memcmp(b.data, reference, ref_len));
	free(reference);
	bytes = record_bytes(&b, &len);
	CHECK(bytes != NULL);
	if (!bytes)
		goto out;
	m = ringtap__record__unpack(NULL, len, bytes);
	CHECK(m != NULL);
	if (!m)
		goto out;
	CHECK_EQ(m->timestamp, rec->timestamp);
	CHECK_EQ(m->event_id, rec->type);
	for (struct tep_format_field *f = rec->event->format.fields; f; f = f->next)
		expect_fields += rt_encode_selected(only, f->name);
	CHECK_EQ(m->n_fields, expect_fields);
	CHECK_EQ(m->n_common, common ? r->fx->layout->n_common : 0);
	check_repacks(m, bytes, len);
	ringtap__record__free_unpacked(m, NULL);
	r->checked++;
out:
	rt_buf_free(&b);
}

/* A resumable stream's record: Record.seq last, as protobuf-c packs it, seqs of 1 to 10 bytes. */
static void check_numbered(struct run *r, const struct rt_record *rec)
{
	struct rt_record numbered = *rec;
	struct rt_record_encoder *e;
	struct rt_buf b = { 0 };
	const uint8_t *bytes;
	size_t len = 0;
	Ringtap__Record *m;

	numbered.seq = r->records % 2 ? (uint64_t)r->records : UINT64_MAX / r->records;
	if (rt_record_encoder_new(&e, r->fx->layout, false, NULL)) {
		CHECK(!"an encoder");
		return;
	}
	rt_record_encoder_set_numbered(e, true);
	CHECK_EQ(rt_record_encoder_put(e, &numbered, &b), 0);
	bytes = record_bytes(&b, &len);
	m = bytes ? ringtap__record__unpack(NULL, len, bytes) : NULL;
	CHECK(m != NULL);
	if (m) {
		CHECK(m->has_seq && m->seq == numbered.seq);
		check_repacks(m, bytes, len);
		ringtap__record__free_unpacked(m, NULL);
	}
	rt_buf_free(&b);
	rt_record_encoder_free(e);
}

static int on_record(const struct rt_record *rec, void *ctx)
{
	static const char *const projection[] = { "seq", "msg", "prev_comm", "buf", NULL };
	struct run *r = ctx;
	struct rt_record cut = *rec;

	if (!rec->event)
		return 0;
	r->records++;
	check_numbered(r, rec);
	check_one(r, rec, false, NULL);
	check_one(r, rec, true, NULL);
	check_one(r, rec, false, projection);
	/* Cut short (a record that does not hold every field): the encoder's other loop. */
	cut.size = rec->size / 2;
	check_one(r, &cut, true, NULL);
	return 0;
}

static void test_fixture(const char *root, const char *name, const char *const *evs,
			 unsigned int min_records)
{
	struct fixture fx;
	struct run r = { &fx, 0, 0 };

	if (fixture_open(&fx, root, name, evs)) {
		CHECK(!"fixture opens");
		return;
	}
	for (int cpu = 0; cpu < 2; cpu++) {
		size_t len = 0;
		uint8_t *pages = fixture_pages(&fx, cpu, &len);

		for (size_t off = 0; pages && off + fx.layout->sub_buffer_size <= len;
		     off += fx.layout->sub_buffer_size) {
			struct rt_page_result res;

			rt_decode_page(fx.decoder, (unsigned int)cpu, pages + off,
				       fx.layout->sub_buffer_size, on_record, &r, &res);
		}
		free(pages);
	}
	CHECK(r.records >= min_records);
	CHECK_EQ(r.checked, 4 * r.records);
	printf("%s: %u records, each encoded 3 ways and cut short, bytes as protobuf-c packs them\n",
	       name, r.records);
	fixture_close(&fx);
}

/* Negative numbers: a signed value and a pid go out as 10-byte varints, as protobuf-c writes them. */
static void test_negative(const char *root)
{
	struct fixture fx;
	struct run r = { &fx, 0, 0 };
	uint8_t data[64] = { 0 };
	struct rt_record rec = { 0 };
	const struct rt_field_desc *pid;
	struct tep_event *ev;

	if (fixture_open(&fx, root, "stock", events)) {
		CHECK(!"fixture opens");
		return;
	}
	ev = tep_find_event_by_name(fx.layout->tep, "sched", "sched_switch");
	pid = rt_layout_common(fx.layout, "common_pid");
	CHECK(ev && pid);
	if (ev && pid) {
		int32_t minus = -7;

		memset(data, 0xff, sizeof(data));	/* every signed field -1 */
		memcpy(data + pid->offset, &minus, sizeof(minus));
		rec.event = ev;
		rec.type = (unsigned int)ev->id;
		rec.data = data;
		rec.size = sizeof(data);
		rec.timestamp = UINT64_MAX;
		check_one(&r, &rec, true, NULL);
		CHECK_EQ(r.checked, 1);
	}
	fixture_close(&fx);
}

/* v in size bytes, in the byte order the layout says. */
static void put_ordered(uint8_t *p, uint64_t v, unsigned int size, bool big_endian)
{
	for (unsigned int i = 0; i < size; i++)
		p[big_endian ? size - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

/*
 * A trace whose byte order is not the host's (the stock headers and
 * ringtap_test's format, marked with the other order): numbers cannot be
 * loaded as they lie, so every step takes the path through the layout.
 */
static void test_other_byte_order(const char *root)
{
	bool other = __BYTE_ORDER__ != __ORDER_BIG_ENDIAN__;
	char path[4096];
	char *hp = NULL, *he = NULL, *fmt = NULL;
	size_t hp_len = 0, he_len = 0, fmt_len = 0, len = 0;
	struct rt_layout *l = NULL;
	struct rt_record rec = { 0 };
	struct fixture fx = { 0 };
	struct run r = { &fx, 0, 0 };
	struct rt_buf b = { 0 };
	uint8_t data[40] = { 0 };
	const uint8_t *bytes;
	Ringtap__Record *m;

	snprintf(path, sizeof(path), "%s/stock/events/header_page", root);
	hp = read_whole_file(path, &hp_len);
	snprintf(path, sizeof(path), "%s/stock/events/header_event", root);
	he = read_whole_file(path, &he_len);
	snprintf(path, sizeof(path), "%s/stock/events/ringtap_test/ringtap_test/format", root);
	fmt = read_whole_file(path, &fmt_len);
	CHECK(hp && he && fmt);
	if (!hp || !he || !fmt ||
	    rt_layout_new(&l, hp, hp_len, he, he_len, other) ||
	    rt_layout_add_event(l, "ringtap_test", fmt, fmt_len, &rec.event)) {
		CHECK(!"layout of the other byte order");
		goto out;
	}
	CHECK(!rt_layout_host_order(l));
	put_ordered(data, (uint64_t)rec.event->id, 2, other);
	put_ordered(data + 4, 4321, 4, other);			/* common_pid */
	put_ordered(data + 8, 0x0102030405060708ULL, 8, other);	/* seq */
	put_ordered(data + 16, 3, 4, other);			/* cpu */
	memcpy(data + 20, "abc", 3);				/* tag */
	put_ordered(data + 28, (6u << 16) | 32, 4, other);	/* msg: 6 bytes at 32 */
	memcpy(data + 32, "hello", 6);
	rec.type = (unsigned int)rec.event->id;
	rec.data = data;
	rec.size = 38;
	rec.timestamp = 77;
	fx.layout = l;
	check_one(&r, &rec, true, NULL);
	CHECK_EQ(r.checked, 1);
	CHECK_EQ(rt_encode_record(&rec, l, true, NULL, &b), 0);
	bytes = record_bytes(&b, &len);
	m = bytes ? ringtap__record__unpack(NULL, len, bytes) : NULL;
	CHECK(m != NULL);
	if (m && m->n_fields == 4) {
		CHECK_EQ(m->fields[0]->u, 0x0102030405060708ULL);
		CHECK_EQ(m->fields[1]->u, 3);
		CHECK_EQ(m->fields[2]->v_case, RINGTAP__VALUE__V_STR);
		CHECK_STR(m->fields[2]->str, "abc");
		CHECK_EQ(m->fields[3]->v_case, RINGTAP__VALUE__V_STR);
		CHECK_STR(m->fields[3]->str, "hello");
		CHECK_EQ(m->common[0]->u, (uint64_t)rec.event->id);
		CHECK_EQ(m->common[3]->u, 4321);
	} else {
		CHECK(!"four fields");
	}
	if (m)
		ringtap__record__free_unpacked(m, NULL);
out:
	rt_buf_free(&b);
	rt_layout_free(l);
	free(hp);
	free(he);
	free(fmt);
}

/* A __rel_loc string (no fixture has one): where its word says, counted from the word's end. */
static void test_rel_loc(const char *root)
{
	struct fixture fx;
	struct run r = { &fx, 0, 0 };
	struct rt_record rec = { .timestamp = 5, .type = 4000 };
	struct rt_buf b = { 0 };
	uint8_t data[64];
	const uint8_t *bytes;
	Ringtap__Record *m;
	size_t len = 0;

	if (fixture_open(&fx, root, "stock", events)) {
		CHECK(!"fixture opens");
		return;
	}
	CHECK_EQ(rt_layout_add_event(fx.layout, "ringtap_rel", rel_loc_format,
				     sizeof(rel_loc_format) - 1, &rec.event), 0);
	if (!rec.event)
		goto out;
	rec.data = data;
	rec.size = rel_loc_record(data, 9, "hello", 4);
	check_one(&r, &rec, true, NULL);
	CHECK_EQ(r.checked, 1);
	CHECK_EQ(rt_encode_record(&rec, fx.layout, false, NULL, &b), 0);
	bytes = record_bytes(&b, &len);
	m = bytes ? ringtap__record__unpack(NULL, len, bytes) : NULL;
	CHECK(m && m->n_fields == 2);
	if (m && m->n_fields == 2) {
		CHECK_EQ(m->fields[0]->u, 9);
		CHECK_EQ(m->fields[1]->v_case, RINGTAP__VALUE__V_STR);
		CHECK_STR(m->fields[1]->str, "hello");
	}
	if (m)
		ringtap__record__free_unpacked(m, NULL);
	rt_buf_free(&b);
	/* One byte short: the string is outside the record, sent as empty bytes. */
	rec.size--;
	CHECK_EQ(rt_encode_record(&rec, fx.layout, false, NULL, &b), 0);
	bytes = record_bytes(&b, &len);
	m = bytes ? ringtap__record__unpack(NULL, len, bytes) : NULL;
	CHECK(m && m->n_fields == 2);
	if (m && m->n_fields == 2) {
		CHECK_EQ(m->fields[1]->v_case, RINGTAP__VALUE__V_RAW);
		CHECK_EQ(m->fields[1]->raw.len, 0);
	}
	if (m)
		ringtap__record__free_unpacked(m, NULL);
out:
	rt_buf_free(&b);
	fixture_close(&fx);
}

/* The parts, joined: a delimited frame protobuf-c must read and pack to the same bytes. */
static Ringtap__Frame *joined(const struct rt_frame_parts *parts, uint8_t **bytes)
{
	uint8_t *p = malloc(parts->len), *again = NULL;
	size_t off = 0, again_len = 0;
	Ringtap__Frame *f = NULL;
	uint64_t len;
	int used;

	*bytes = p;
	if (!p)
		return NULL;
	for (unsigned int i = 0; i < parts->n; i++) {
		memcpy(p + off, parts->iov[i].iov_base, parts->iov[i].iov_len);
		off += parts->iov[i].iov_len;
	}
	CHECK_EQ(off, parts->len);
	used = rt_wire_varint_decode(p, parts->len, &len);
	CHECK(used > 0 && used + len == parts->len);
	if (used <= 0 || used + len != parts->len)
		return NULL;
	f = ringtap__frame__unpack(NULL, len, p + used);
	CHECK(f != NULL);
	if (f && !rt_wire_encode(f, &again, &again_len)) {
		CHECK_EQ(again_len, parts->len);
		CHECK(again_len == parts->len && !memcmp(again, p, again_len));
	}
	free(again);
	return f;
}

/* Data frames are written by hand around their bulk: the bytes must be protobuf-c's. */
static void test_frame_parts(void)
{
	static const unsigned int cpus[] = { 0, 1, 127, 128, 4095 };
	static const size_t lens[] = { 0, 1, 127, 128, 4096, 65536 };
	static const unsigned int counts[] = { 0, 1, 200, 70000 };
	/* Pages.first_seq: left out at 0, else up to a varint's whole 10 bytes. */
	static const uint64_t seqs[] = { 0, 1, 300, UINT64_MAX };
	uint8_t *page = malloc(65536);

	for (size_t i = 0; page && i < 65536; i++)
		page[i] = (uint8_t)(i * 7);
	for (size_t c = 0; page && c < sizeof(cpus) / sizeof(*cpus); c++) {
		for (size_t l = 0; l < sizeof(lens) / sizeof(*lens); l++) {
			for (size_t k = 0; k < sizeof(counts) / sizeof(*counts); k++) {
				struct rt_frame_parts parts;
				Ringtap__Frame *f;
				uint8_t *bytes;

				uint64_t seq = seqs[(c + l + k) % 4];

				CHECK_EQ(rt_encode_pages_parts(cpus[c], page, lens[l], counts[k],
							       seq, &parts), 0);
				f = joined(&parts, &bytes);
				CHECK(f && f->msg_case == RINGTAP__FRAME__MSG_PAGES);
				if (f && f->msg_case == RINGTAP__FRAME__MSG_PAGES) {
					CHECK_EQ(f->pages->cpu, cpus[c]);
					CHECK_EQ(f->pages->n_pages, 1);
					CHECK_EQ(f->pages->pages[0].len, lens[l]);
					CHECK(!lens[l] || !memcmp(f->pages->pages[0].data, page,
								  lens[l]));
					CHECK(f->pages->n_records == 1 &&
					      f->pages->records[0] == counts[k]);
					CHECK_EQ(f->pages->has_first_seq, seq != 0);
					CHECK_EQ(f->pages->first_seq, seq);
				}
				if (f)
					ringtap__frame__free_unpacked(f, NULL);
				free(bytes);
			}
			for (int kind = 0; kind < 2; kind++) {
				Ringtap__Frame__MsgCase mc = kind ? RINGTAP__FRAME__MSG_FIXED :
								    RINGTAP__FRAME__MSG_BATCH;
				struct rt_buf records = { 0 };
				struct rt_frame_parts parts;
				Ringtap__Frame *f;
				uint8_t *bytes;

				/* Records of 8 bytes: tag 2, length 6, timestamp, event_id, pid. */
				static const uint8_t rec[] = { 0x12, 6, 0x08, 1, 0x10, 2, 0x18, 3 };
				static const uint8_t fixed[] = { 0x12, 6, 0x08, 1, 0x12, 2, 7, 8 };

				for (size_t i = 0; i < lens[l] / 8 && lens[l] < 4096; i++)
					rt_buf_put(&records, kind ? fixed : rec, 8);
				CHECK_EQ(rt_encode_batch_parts(mc, cpus[c], &records, &parts), 0);
				f = joined(&parts, &bytes);
				CHECK(f && f->msg_case == mc);
				if (f && mc == RINGTAP__FRAME__MSG_BATCH)
					CHECK(f->batch->cpu == cpus[c] &&
					      f->batch->n_records == records.len / 8);
				if (f && mc == RINGTAP__FRAME__MSG_FIXED)
					CHECK(f->fixed->cpu == cpus[c] &&
					      f->fixed->n_records == records.len / 8);
				if (f)
					ringtap__frame__free_unpacked(f, NULL);
				free(bytes);
				rt_buf_free(&records);
			}
		}
	}
	free(page);
}

int main(int argc, char **argv)
{
	const char *root = argc > 1 ? argv[1] : "tests/fixtures";

	static const char *const test_only[] = { "ringtap_test:ringtap_test", NULL };

	test_fixture(root, "stock", events, 100);
	test_fixture(root, "padded", events, 100);
	test_fixture(root, "rt", events, 100);
	test_fixture(root, "stock-overrun", test_only, 100);
	test_negative(root);
	test_other_byte_order(root);
	test_rel_loc(root);
	test_frame_parts();
	return check_exit("test-encode");
}
