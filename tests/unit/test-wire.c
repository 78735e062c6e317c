// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * wire: frames survive encode and decode field by field however the stream
 * is split; lengths over the limit are refused before anything is
 * allocated for them; malformed varints, payloads and empty frames are
 * refused, and the refusal sticks.
 */
#include <sys/resource.h>

#include "check.h"
#include "util.h"
#include "wire.h"

/*
 * A reader that allocated for an announced length before refusing it would
 * free the buffer on the way out, leaving nothing to see afterwards. So the
 * tests of lengths over the limit run with allocations over 256 MiB failing:
 * such a reader then says -ENOMEM instead of -EMSGSIZE.
 */
#define ALLOC_GUARD (256u << 20)
#ifdef __SANITIZE_ADDRESS__
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1:max_allocation_size_mb=256";
}

static bool guard_alloc(void)
{
	return true;
}

static void unguard_alloc(void)
{
}
#else
static struct rlimit saved_as;

static bool guard_alloc(void)
{
	struct rlimit rl;
	unsigned long pages;
	FILE *f = fopen("/proc/self/statm", "re");
	void *volatile p;
	volatile size_t big = 1u << 30;

	if (!f)
		return false;
	if (fscanf(f, "%lu", &pages) != 1)
		pages = 0;
	fclose(f);
	if (!pages || getrlimit(RLIMIT_AS, &saved_as))
		return false;
	rl = saved_as;
	rl.rlim_cur = pages * (unsigned long)sysconf(_SC_PAGESIZE) + ALLOC_GUARD;
	if (rl.rlim_cur >= saved_as.rlim_cur || setrlimit(RLIMIT_AS, &rl))
		return false;
	/* The guard is real: 1 GiB cannot be had. */
	p = malloc(big);
	free(p);
	return p == NULL;
}

static void unguard_alloc(void)
{
	setrlimit(RLIMIT_AS, &saved_as);
}
#endif

/* The frames the round trips use, and what the stream tests expect back. */
static char *sub_events[] = { "sched:sched_switch", "ringtap_test:*" };
static uint32_t sub_cpus[] = { 0, 3 };
static int32_t sub_pids[] = { 42, -1 };
static char *sub_fields[] = { "prev_pid" };
static Ringtap__Encoding hello_encodings[] = { RINGTAP__ENCODING__DECODED, RINGTAP__ENCODING__RAW };
static uint8_t raw_bytes[] = { 0x00, 0x01, 0x80, 0xff };

static Ringtap__Subscription sub = RINGTAP__SUBSCRIPTION__INIT;
static Ringtap__Hello hello = RINGTAP__HELLO__INIT;
static Ringtap__Lost lost = RINGTAP__LOST__INIT;
static Ringtap__Value values[6];
static Ringtap__Value *common_values[] = { &values[0], &values[1] };
static Ringtap__Value *field_values[] = { &values[2], &values[3], &values[4], &values[5] };
static Ringtap__Record records[2];
static Ringtap__Record *record_ptrs[] = { &records[0], &records[1] };
static Ringtap__Batch batch = RINGTAP__BATCH__INIT;
static Ringtap__Bye bye = RINGTAP__BYE__INIT;
static Ringtap__Frame frames[4];

static void build_frames(void)
{
	sub.n_events = ARRAY_SIZE(sub_events);
	sub.events = sub_events;
	sub.n_cpus = ARRAY_SIZE(sub_cpus);
	sub.cpus = sub_cpus;
	sub.n_pids = ARRAY_SIZE(sub_pids);
	sub.pids = sub_pids;
	sub.n_fields = ARRAY_SIZE(sub_fields);
	sub.fields = sub_fields;
	sub.filter = "prev_pid != 0";
	sub.fixed_layout = "padded-2012";

	hello.min_version = 1;
	hello.max_version = 3;
	hello.n_encodings = ARRAY_SIZE(hello_encodings);
	hello.encodings = hello_encodings;
	hello.client_name = "test-wire";
	hello.subscription = &sub;

	lost.cpu = 7;
	lost.count = 12345678901ULL;
	lost.source = RINGTAP__LOSS_SOURCE__QUEUE;
	lost.has_first_ns = 1;
	lost.first_ns = 1;
	lost.has_last_ns = 1;
	lost.last_ns = UINT64_MAX;
	lost.has_count_exact = 1;
	lost.count_exact = 1;

	for (size_t i = 0; i < ARRAY_SIZE(values); i++)
		ringtap__value__init(&values[i]);
	values[0].v_case = RINGTAP__VALUE__V_S;
	values[0].s = INT64_MIN;
	values[1].v_case = RINGTAP__VALUE__V_U;
	values[1].u = UINT64_MAX;
	values[2].v_case = RINGTAP__VALUE__V_STR;
	values[2].str = "swapper/0";
	values[3].v_case = RINGTAP__VALUE__V_RAW;
	values[3].raw.len = sizeof(raw_bytes);
	values[3].raw.data = raw_bytes;
	values[4].v_case = RINGTAP__VALUE__V_S;
	values[4].s = -1;
	values[5].v_case = RINGTAP__VALUE__V_STR;
	values[5].str = "";

	for (size_t i = 0; i < ARRAY_SIZE(records); i++)
		ringtap__record__init(&records[i]);
	records[0].timestamp = 1700000000123456789ULL;
	records[0].event_id = 5;
	records[0].n_common = ARRAY_SIZE(common_values);
	records[0].common = common_values;
	records[0].n_fields = ARRAY_SIZE(field_values);
	records[0].fields = field_values;
	/* A record with no values at all. */
	records[1].timestamp = 0;
	records[1].event_id = 0;

	batch.cpu = 1;
	batch.n_records = ARRAY_SIZE(record_ptrs);
	batch.records = record_ptrs;

	for (size_t i = 0; i < ARRAY_SIZE(frames); i++)
		ringtap__frame__init(&frames[i]);
	frames[0].msg_case = RINGTAP__FRAME__MSG_HELLO;
	frames[0].hello = &hello;
	frames[1].msg_case = RINGTAP__FRAME__MSG_LOST;
	frames[1].lost = &lost;
	frames[2].msg_case = RINGTAP__FRAME__MSG_BATCH;
	frames[2].batch = &batch;
	/* Bye has no fields: the smallest valid frame. */
	frames[3].msg_case = RINGTAP__FRAME__MSG_BYE;
	frames[3].bye = &bye;
}

static void check_strings(size_t n_got, char **got, size_t n_want, char **want)
{
	CHECK_EQ(n_got, n_want);
	for (size_t i = 0; i < n_got && i < n_want; i++)
		CHECK_STR(got[i], want[i]);
}

static void check_hello(const Ringtap__Hello *got, const Ringtap__Hello *want)
{
	const Ringtap__Subscription *gs = got->subscription, *ws = want->subscription;

	CHECK_EQ(got->min_version, want->min_version);
	CHECK_EQ(got->max_version, want->max_version);
	CHECK_EQ(got->n_encodings, want->n_encodings);
	for (size_t i = 0; i < got->n_encodings && i < want->n_encodings; i++)
		CHECK_EQ(got->encodings[i], want->encodings[i]);
	CHECK_STR(got->client_name, want->client_name);
	CHECK(gs != NULL);
	if (!gs)
		return;
	check_strings(gs->n_events, gs->events, ws->n_events, ws->events);
	CHECK_EQ(gs->n_cpus, ws->n_cpus);
	for (size_t i = 0; i < gs->n_cpus && i < ws->n_cpus; i++)
		CHECK_EQ(gs->cpus[i], ws->cpus[i]);
	CHECK_EQ(gs->n_pids, ws->n_pids);
	for (size_t i = 0; i < gs->n_pids && i < ws->n_pids; i++)
		CHECK_EQ(gs->pids[i], ws->pids[i]);
	check_strings(gs->n_fields, gs->fields, ws->n_fields, ws->fields);
	CHECK_STR(gs->filter, ws->filter);
	CHECK_STR(gs->fixed_layout, ws->fixed_layout);
}

static void check_lost(const Ringtap__Lost *got, const Ringtap__Lost *want)
{
	CHECK_EQ(got->cpu, want->cpu);
	CHECK(got->count == want->count);
	CHECK_EQ(got->source, want->source);
	CHECK_EQ(got->has_first_ns, want->has_first_ns);
	CHECK(got->first_ns == want->first_ns);
	CHECK_EQ(got->has_last_ns, want->has_last_ns);
	CHECK(got->last_ns == want->last_ns);
	CHECK_EQ(got->has_count_exact, want->has_count_exact);
	CHECK_EQ(got->count_exact, want->count_exact);
}

static void check_values(size_t n_got, Ringtap__Value **got, size_t n_want, Ringtap__Value **want)
{
	CHECK_EQ(n_got, n_want);
	for (size_t i = 0; i < n_got && i < n_want; i++) {
		const Ringtap__Value *g = got[i], *w = want[i];

		CHECK_EQ(g->v_case, w->v_case);
		if (g->v_case != w->v_case)
			continue;
		switch (w->v_case) {
		case RINGTAP__VALUE__V_S:
			CHECK(g->s == w->s);
			break;
		case RINGTAP__VALUE__V_U:
			CHECK(g->u == w->u);
			break;
		case RINGTAP__VALUE__V_STR:
			CHECK_STR(g->str, w->str);
			break;
		case RINGTAP__VALUE__V_RAW:
			CHECK_EQ(g->raw.len, w->raw.len);
			CHECK(g->raw.len == w->raw.len &&
			      !memcmp(g->raw.data, w->raw.data, w->raw.len));
			break;
		default:
			CHECK(!"unexpected value kind");
		}
	}
}

static void check_batch(const Ringtap__Batch *got, const Ringtap__Batch *want)
{
	CHECK_EQ(got->cpu, want->cpu);
	CHECK_EQ(got->n_records, want->n_records);
	for (size_t i = 0; i < got->n_records && i < want->n_records; i++) {
		const Ringtap__Record *g = got->records[i], *w = want->records[i];

		CHECK(g->timestamp == w->timestamp);
		CHECK_EQ(g->event_id, w->event_id);
		check_values(g->n_common, g->common, w->n_common, w->common);
		check_values(g->n_fields, g->fields, w->n_fields, w->fields);
	}
}

static void check_frame(const Ringtap__Frame *got, const Ringtap__Frame *want)
{
	CHECK(got != NULL);
	if (!got)
		return;
	CHECK_EQ(got->msg_case, want->msg_case);
	if (got->msg_case != want->msg_case)
		return;
	switch (want->msg_case) {
	case RINGTAP__FRAME__MSG_HELLO:
		check_hello(got->hello, want->hello);
		break;
	case RINGTAP__FRAME__MSG_LOST:
		check_lost(got->lost, want->lost);
		break;
	case RINGTAP__FRAME__MSG_BATCH:
		check_batch(got->batch, want->batch);
		break;
	case RINGTAP__FRAME__MSG_BYE:
		CHECK(got->bye != NULL);
		break;
	default:
		CHECK(!"unexpected frame kind");
	}
}

/* Every frame of frames[], encoded one after the other. */
static uint8_t *encode_all(size_t *len)
{
	uint8_t *all = NULL;
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(frames); i++) {
		uint8_t *one, *grown;
		size_t one_len;

		CHECK_EQ(rt_wire_encode(&frames[i], &one, &one_len), 0);
		grown = realloc(all, n + one_len);
		if (!grown)
			abort();
		memcpy(grown + n, one, one_len);
		free(one);
		all = grown;
		n += one_len;
	}
	*len = n;
	return all;
}

/* xorshift32: the same split sizes on every libc. */
static uint32_t next_random(uint32_t *state)
{
	uint32_t x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *state = x;
}

enum split { SPLIT_NONE, SPLIT_BYTES, SPLIT_RANDOM };

/*
 * Feeds buf in pieces the way a socket might hand them out, taking every
 * frame as soon as it is whole. Returns the number of frames or the error.
 */
static int read_stream(struct rt_wire_reader *r, const uint8_t *buf, size_t len, enum split split,
		       uint32_t seed, Ringtap__Frame **out, int max_out, size_t *peak_alloc)
{
	size_t pos = 0;
	int n = 0, ret;

	while (pos < len) {
		size_t piece = len - pos, off = 0;

		if (split == SPLIT_BYTES)
			piece = 1;
		else if (split == SPLIT_RANDOM)
			piece = 1 + next_random(&seed) % 97;
		if (piece > len - pos)
			piece = len - pos;
		while (off < piece) {
			Ringtap__Frame *f;
			size_t used;

			ret = rt_wire_reader_feed(r, buf + pos + off, piece - off, &used);
			if (ret < 0)
				return ret;
			off += used;
			if (peak_alloc && r->buf_alloc > *peak_alloc)
				*peak_alloc = r->buf_alloc;
			while ((ret = rt_wire_reader_next(r, &f)) == 1) {
				if (n < max_out)
					out[n] = f;
				else
					ringtap__frame__free_unpacked(f, NULL);
				n++;
			}
			if (ret < 0)
				return ret;
		}
		pos += piece;
	}
	return n;
}

static void test_round_trip(void)
{
	static const struct {
		enum split split;
		uint32_t seed;
	} runs[] = {
		{ SPLIT_NONE, 0 }, { SPLIT_BYTES, 0 }, { SPLIT_RANDOM, 1 },
		{ SPLIT_RANDOM, 0x9e3779b9 }, { SPLIT_RANDOM, 2024 },
	};
	size_t len;
	uint8_t *all = encode_all(&len);

	for (size_t run = 0; run < ARRAY_SIZE(runs); run++) {
		struct rt_wire_reader r;
		Ringtap__Frame *got[ARRAY_SIZE(frames)] = { NULL };
		Ringtap__Frame *f;
		int n;

		rt_wire_reader_init(&r, 0);
		CHECK_EQ(r.max_frame, RT_WIRE_MAX_FRAME_DEFAULT);
		n = read_stream(&r, all, len, runs[run].split, runs[run].seed, got,
				ARRAY_SIZE(got), NULL);
		CHECK_EQ(n, ARRAY_SIZE(frames));
		for (int i = 0; i < n && i < (int)ARRAY_SIZE(frames); i++) {
			check_frame(got[i], &frames[i]);
			ringtap__frame__free_unpacked(got[i], NULL);
		}
		/* Ends on a frame boundary with nothing left over. */
		CHECK_EQ(rt_wire_reader_next(&r, &f), 0);
		CHECK(f == NULL);
		CHECK(!r.have_len && r.len_bytes == 0 && r.buf_used == 0);
		rt_wire_reader_release(&r);
	}
	free(all);
}

/* Concatenated frames in one feed: it stops at the end of the first. */
static void test_feed_stops_at_frame(void)
{
	struct rt_wire_reader r;
	Ringtap__Frame *f;
	uint8_t *one, *all;
	size_t one_len, len, used;

	all = encode_all(&len);
	CHECK_EQ(rt_wire_encode(&frames[0], &one, &one_len), 0);
	rt_wire_reader_init(&r, 0);
	CHECK_EQ(rt_wire_reader_feed(&r, all, len, &used), 1);
	CHECK_EQ(used, one_len);
	/* Nothing more is taken until the frame is. */
	CHECK_EQ(rt_wire_reader_feed(&r, all + used, len - used, &used), 1);
	CHECK_EQ(used, 0);
	CHECK_EQ(rt_wire_reader_next(&r, &f), 1);
	check_frame(f, &frames[0]);
	ringtap__frame__free_unpacked(f, NULL);
	CHECK_EQ(rt_wire_reader_next(&r, &f), 0);
	rt_wire_reader_release(&r);
	free(one);
	free(all);
}

static void test_partial(void)
{
	struct rt_wire_reader r;
	Ringtap__Frame *f;
	uint8_t *buf;
	size_t len, used;

	CHECK_EQ(rt_wire_encode(&frames[1], &buf, &len), 0);
	rt_wire_reader_init(&r, 0);
	CHECK_EQ(rt_wire_reader_feed(&r, buf, len - 1, &used), 0);
	CHECK_EQ(used, len - 1);
	CHECK_EQ(rt_wire_reader_next(&r, &f), 0);
	CHECK(f == NULL);
	CHECK_EQ(rt_wire_reader_feed(&r, buf + len - 1, 1, &used), 1);
	CHECK_EQ(used, 1);
	CHECK_EQ(rt_wire_reader_next(&r, &f), 1);
	check_frame(f, &frames[1]);
	ringtap__frame__free_unpacked(f, NULL);
	rt_wire_reader_release(&r);
	free(buf);
}

/*
 * A frame bigger than the buffer a reader keeps: it arrives whole through
 * random splits, the buffer never outgrows the frame, and is let go after.
 */
static void test_large_frame(void)
{
	static const size_t page_size = 200000;
	Ringtap__Pages pages = RINGTAP__PAGES__INIT;
	Ringtap__Frame frame = RINGTAP__FRAME__INIT;
	ProtobufCBinaryData page;
	struct rt_wire_reader r;
	Ringtap__Frame *got = NULL;
	size_t len, used, peak = 0, packed;
	uint8_t *buf;
	uint64_t announced;

	page.len = page_size;
	page.data = malloc(page_size);
	if (!page.data)
		abort();
	for (size_t i = 0; i < page_size; i++)
		page.data[i] = (uint8_t)(i * 31 + 7);
	pages.cpu = 2;
	pages.n_pages = 1;
	pages.pages = &page;
	frame.msg_case = RINGTAP__FRAME__MSG_PAGES;
	frame.pages = &pages;
	packed = ringtap__frame__get_packed_size(&frame);
	CHECK_EQ(rt_wire_encode(&frame, &buf, &len), 0);
	CHECK_EQ(rt_wire_varint_decode(buf, len, &announced), 3);
	CHECK_EQ(announced, packed);
	CHECK_EQ(len, 3 + packed);

	/* A frame fed whole is read in place: nothing allocated, the tap sees the bytes fed. */
	rt_wire_reader_init(&r, 1 << 20);
	CHECK_EQ(rt_wire_reader_feed(&r, buf, len, &used), 1);
	CHECK_EQ(used, len);
	CHECK_EQ(rt_wire_reader_next(&r, &got), 1);
	CHECK(r.buf == NULL && r.buf_alloc == 0);
	{
		size_t last_len;

		CHECK(rt_wire_reader_last(&r, &last_len) == buf && last_len == len);
	}
	CHECK(got && got->msg_case == RINGTAP__FRAME__MSG_PAGES &&
	      got->pages->pages[0].len == page_size &&
	      !memcmp(got->pages->pages[0].data, page.data, page_size));
	if (got)
		ringtap__frame__free_unpacked(got, NULL);
	got = NULL;
	rt_wire_reader_release(&r);

	/* Memory follows the bytes that came, not the length announced. */
	rt_wire_reader_init(&r, 1 << 20);
	CHECK_EQ(rt_wire_reader_feed(&r, buf, 100, &used), 0);
	CHECK(r.buf_alloc >= 97 && r.buf_alloc < packed);
	rt_wire_reader_release(&r);

	rt_wire_reader_init(&r, 1 << 20);
	CHECK_EQ(read_stream(&r, buf, len, SPLIT_RANDOM, 77, &got, 1, &peak), 1);
	/* Gathered from pieces: the varint and the payload, nothing more. */
	CHECK(peak > 0 && peak <= len);
	{
		/* The payload stays readable for a recording until the next feed frees it. */
		size_t last_len;
		const uint8_t *last = rt_wire_reader_last(&r, &last_len);

		CHECK(last && last_len == len && !memcmp(last, buf, len));
		CHECK_EQ(rt_wire_reader_feed(&r, buf, 0, &used), 0);
		CHECK(r.buf == NULL && r.buf_alloc == 0);
		CHECK(rt_wire_reader_last(&r, &last_len) == NULL && last_len == 0);
	}
	CHECK(got && got->msg_case == RINGTAP__FRAME__MSG_PAGES);
	if (got && got->msg_case == RINGTAP__FRAME__MSG_PAGES) {
		CHECK_EQ(got->pages->cpu, 2);
		CHECK_EQ(got->pages->n_pages, 1);
		CHECK(got->pages->n_pages == 1 && got->pages->pages[0].len == page_size &&
		      !memcmp(got->pages->pages[0].data, page.data, page_size));
	}
	if (got)
		ringtap__frame__free_unpacked(got, NULL);
	/* Just under the limit is fine, one byte more is not. */
	rt_wire_reader_release(&r);
	rt_wire_reader_init(&r, packed);
	got = NULL;
	CHECK_EQ(read_stream(&r, buf, len, SPLIT_NONE, 0, &got, 1, NULL), 1);
	if (got)
		ringtap__frame__free_unpacked(got, NULL);
	rt_wire_reader_release(&r);
	rt_wire_reader_init(&r, packed - 1);
	CHECK_EQ(read_stream(&r, buf, len, SPLIT_NONE, 0, &got, 1, NULL), -EMSGSIZE);
	rt_wire_reader_release(&r);
	free(buf);
	free(page.data);
}

static void test_varint(void)
{
	static const struct {
		uint64_t v;
		size_t len;
	} cases[] = {
		{ 0, 1 }, { 1, 1 }, { 127, 1 }, { 128, 2 }, { 16383, 2 }, { 16384, 3 },
		{ (1ULL << 32) - 1, 5 }, { 1ULL << 32, 5 }, { 1ULL << 63, 10 }, { UINT64_MAX, 10 },
	};
	static const uint8_t max[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	static const uint8_t eleven[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					  0xff, 0xff, 0xff, 0x81, 0x00 };
	static const uint8_t overflow[] = { 0xff, 0xff, 0xff, 0xff, 0xff,
					    0xff, 0xff, 0xff, 0xff, 0x02 };
	/* Not minimal, but still 10 bytes and 64 bits: protobuf accepts it. */
	static const uint8_t padded_zero[] = { 0x80, 0x80, 0x80, 0x80, 0x80,
					       0x80, 0x80, 0x80, 0x80, 0x00 };
	uint8_t out[RT_WIRE_VARINT_MAX];
	uint64_t v;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t n = rt_wire_varint_encode(cases[i].v, out);

		CHECK_EQ(n, cases[i].len);
		v = 12345;
		CHECK_EQ(rt_wire_varint_decode(out, n, &v), (int)n);
		CHECK(v == cases[i].v);
		/* One byte short is "need more", not an error. */
		CHECK_EQ(rt_wire_varint_decode(out, n - 1, &v), 0);
	}
	CHECK_EQ(rt_wire_varint_encode(0, out), 1);
	CHECK_EQ(out[0], 0x00);
	CHECK_EQ(rt_wire_varint_encode(128, out), 2);
	CHECK(out[0] == 0x80 && out[1] == 0x01);
	CHECK_EQ(rt_wire_varint_encode(16384, out), 3);
	CHECK(out[0] == 0x80 && out[1] == 0x80 && out[2] == 0x01);
	CHECK_EQ(rt_wire_varint_encode(UINT64_MAX, out), 10);
	CHECK(!memcmp(out, max, sizeof(max)));
	CHECK_EQ(rt_wire_varint_decode(eleven, sizeof(eleven), &v), -EBADMSG);
	CHECK_EQ(rt_wire_varint_decode(overflow, sizeof(overflow), &v), -EBADMSG);
	v = 1;
	CHECK_EQ(rt_wire_varint_decode(padded_zero, sizeof(padded_zero), &v), 10);
	CHECK(v == 0);
}

/* Feeds bytes to a fresh reader; returns what feed, then next, said. */
static int feed_one(struct rt_wire_reader *r, const uint8_t *buf, size_t len, size_t *used)
{
	Ringtap__Frame *f = NULL;
	int ret = rt_wire_reader_feed(r, buf, len, used);

	if (ret < 0)
		return ret;
	ret = rt_wire_reader_next(r, &f);
	if (f)
		ringtap__frame__free_unpacked(f, NULL);
	return ret;
}

static void check_sticky(struct rt_wire_reader *r, int err)
{
	Ringtap__Frame *f = &frames[0];
	uint8_t *good;
	size_t len, used = 99;

	CHECK_EQ(r->error, err);
	CHECK(r->why != NULL);
	CHECK_EQ(rt_wire_reader_next(r, &f), err);
	CHECK(f == NULL);
	if (f)
		ringtap__frame__free_unpacked(f, NULL);
	CHECK_EQ(rt_wire_encode(&frames[3], &good, &len), 0);
	CHECK_EQ(rt_wire_reader_feed(r, good, len, &used), err);
	CHECK_EQ(used, 0);
	CHECK_EQ(rt_wire_reader_next(r, &f), err);
	if (f)
		ringtap__frame__free_unpacked(f, NULL);
	CHECK(r->buf == NULL);
	free(good);
}

static void test_too_big(void)
{
	struct rt_wire_reader r;
	uint8_t buf[64];
	size_t n, used;

	/*
	 * 1 GiB announced to a reader that takes 1 MiB, followed by bytes of
	 * the would-be payload: refused on the varint alone, none of the
	 * payload taken, nothing allocated.
	 */
	CHECK(guard_alloc());
	memset(buf, 0xaa, sizeof(buf));
	n = rt_wire_varint_encode(1ULL << 30, buf);
	CHECK_EQ(n, 5);
	rt_wire_reader_init(&r, 1 << 20);
	CHECK_EQ(rt_wire_reader_feed(&r, buf, sizeof(buf), &used), -EMSGSIZE);
	CHECK_EQ(used, n);
	CHECK(r.buf == NULL && r.buf_alloc == 0);
	check_sticky(&r, -EMSGSIZE);
	rt_wire_reader_release(&r);

	/* The same a byte at a time: refused on the varint's last byte. */
	rt_wire_reader_init(&r, 1 << 20);
	for (size_t i = 0; i + 1 < n; i++) {
		CHECK_EQ(rt_wire_reader_feed(&r, buf + i, 1, &used), 0);
		CHECK_EQ(used, 1);
	}
	CHECK_EQ(rt_wire_reader_feed(&r, buf + n - 1, 1, &used), -EMSGSIZE);
	CHECK(r.buf == NULL && r.buf_alloc == 0);
	rt_wire_reader_release(&r);

	/*
	 * A length at the limit is accepted, and nothing is allocated for it
	 * before payload bytes come.
	 */
	n = rt_wire_varint_encode(1 << 20, buf);
	rt_wire_reader_init(&r, 1 << 20);
	CHECK_EQ(rt_wire_reader_feed(&r, buf, n, &used), 0);
	CHECK_EQ(used, n);
	CHECK(r.have_len && r.len == 1 << 20);
	CHECK(r.buf == NULL && r.buf_alloc == 0);
	rt_wire_reader_release(&r);

	/* The largest length there is. */
	n = rt_wire_varint_encode(UINT64_MAX, buf);
	rt_wire_reader_init(&r, 0);
	CHECK_EQ(rt_wire_reader_feed(&r, buf, n, &used), -EMSGSIZE);
	CHECK(r.buf == NULL && r.buf_alloc == 0);
	rt_wire_reader_release(&r);
	unguard_alloc();
}

static void test_malformed(void)
{
	static const uint8_t eleven[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					  0x80, 0x80, 0x80, 0x80, 0x00, 0x02, 0x5a, 0x00 };
	/* Field 1 announces 5 bytes of Hello, the payload ends after 1. */
	static const uint8_t truncated[] = { 0x03, 0x0a, 0x05, 0x08 };
	static const uint8_t garbage[] = { 0x03, 0xff, 0xff, 0xff };
	/* A Hello without its required versions. */
	static const uint8_t no_required[] = { 0x02, 0x0a, 0x00 };
	/* Only field 31, which Frame does not have: nothing in the oneof. */
	static const uint8_t unknown_only[] = { 0x03, 0xf8, 0x01, 0x01 };
	static const uint8_t zero_length[] = { 0x00, 0x02, 0x5a, 0x00 };
	static const uint8_t bye_frame[] = { 0x02, 0x5a, 0x00 };
	struct rt_wire_reader r;
	size_t used;

	rt_wire_reader_init(&r, 0);
	CHECK_EQ(feed_one(&r, eleven, sizeof(eleven), &used), -EBADMSG);
	/* Refused on the tenth byte, which still says more follow. */
	CHECK_EQ(used, 10);
	check_sticky(&r, -EBADMSG);
	rt_wire_reader_release(&r);

	rt_wire_reader_init(&r, 0);
	CHECK_EQ(feed_one(&r, truncated, sizeof(truncated), &used), -EBADMSG);
	CHECK_EQ(used, sizeof(truncated));
	check_sticky(&r, -EBADMSG);
	rt_wire_reader_release(&r);

	rt_wire_reader_init(&r, 0);
	CHECK_EQ(feed_one(&r, garbage, sizeof(garbage), &used), -EBADMSG);
	check_sticky(&r, -EBADMSG);
	rt_wire_reader_release(&r);

	rt_wire_reader_init(&r, 0);
	CHECK_EQ(feed_one(&r, no_required, sizeof(no_required), &used), -EBADMSG);
	check_sticky(&r, -EBADMSG);
	rt_wire_reader_release(&r);

	rt_wire_reader_init(&r, 0);
	CHECK_EQ(feed_one(&r, unknown_only, sizeof(unknown_only), &used), -EBADMSG);
	check_sticky(&r, -EBADMSG);
	rt_wire_reader_release(&r);

	/* Zero length: a Frame with nothing set; the Bye after it is not read. */
	rt_wire_reader_init(&r, 0);
	CHECK_EQ(feed_one(&r, zero_length, sizeof(zero_length), &used), -EBADMSG);
	CHECK_EQ(used, 1);
	check_sticky(&r, -EBADMSG);
	rt_wire_reader_release(&r);

	/* The same reader code takes the smallest valid frame. */
	rt_wire_reader_init(&r, 0);
	CHECK_EQ(feed_one(&r, bye_frame, sizeof(bye_frame), &used), 1);
	CHECK_EQ(used, sizeof(bye_frame));
	CHECK_EQ(r.error, 0);
	rt_wire_reader_release(&r);
}

static void test_encode_refusals(void)
{
	Ringtap__Frame frame = RINGTAP__FRAME__INIT;
	Ringtap__Error error = RINGTAP__ERROR__INIT;
	Ringtap__Pages pages = RINGTAP__PAGES__INIT;
	ProtobufCBinaryData page;
	uint8_t *out = NULL;
	size_t len = 0;

	/* Nothing set, or a case without its message: the peer would refuse it. */
	CHECK_EQ(rt_wire_encode(&frame, &out, &len), -EINVAL);
	frame.msg_case = RINGTAP__FRAME__MSG_LOST;
	CHECK_EQ(rt_wire_encode(&frame, &out, &len), -EINVAL);
	/* A required string missing. */
	frame.msg_case = RINGTAP__FRAME__MSG_ERROR;
	frame.error = &error;
	error.code = EIO;
	CHECK_EQ(rt_wire_encode(&frame, &out, &len), -EINVAL);
	error.text = "ok now";
	CHECK_EQ(rt_wire_encode(&frame, &out, &len), 0);
	CHECK(out && len == 1 + ringtap__frame__get_packed_size(&frame) && out[0] == len - 1);
	free(out);

	/* A frame just over the default limit. */
	page.len = RT_WIRE_MAX_FRAME_DEFAULT;
	page.data = calloc(1, page.len);
	if (!page.data)
		abort();
	pages.n_pages = 1;
	pages.pages = &page;
	frame.msg_case = RINGTAP__FRAME__MSG_PAGES;
	frame.pages = &pages;
	out = NULL;
	CHECK_EQ(rt_wire_encode(&frame, &out, &len), -EMSGSIZE);
	CHECK(out == NULL);
	free(page.data);
}

static void test_strerror(void)
{
	CHECK_STR(rt_wire_strerror(-EMSGSIZE), "frame larger than the limit");
	CHECK_STR(rt_wire_strerror(-EBADMSG), "malformed frame");
	CHECK_STR(rt_wire_strerror(-ENOMEM), strerror(ENOMEM));
}

int main(int argc, char **argv)
{
	/* The fixtures directory in argv[1] is not needed: frames are built here. */
	build_frames();
	test_varint();
	test_round_trip();
	test_feed_stops_at_frame();
	test_partial();
	test_large_frame();
	test_too_big();
	test_malformed();
	test_encode_refusals();
	test_strerror();
	return check_exit("test-wire");
}
