// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * page-build: every record of every fixture tree's pages, rebuilt into pages
 * (packed as the builder packs them, not as the kernel did), decodes back
 * to the same records; time extends, long records and lost events on
 * synthetic ones, in both byte orders.
 */
#include "check.h"
#include "fixture.h"
#include "page-build.h"
#include "util.h"

struct rec {
	uint64_t ts;
	unsigned int type, size;
	uint8_t *data;
};

struct recs {
	struct rec *v;
	size_t n, cap;
};

static int keep(const struct rt_record *r, void *ctx)
{
	struct recs *rs = ctx;

	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? 2 * rs->cap : 256;
		rs->v = realloc(rs->v, rs->cap * sizeof(*rs->v));
		if (!rs->v)
			abort();
	}
	rs->v[rs->n] = (struct rec){ r->timestamp, r->type, r->size, malloc(r->size + 1) };
	memcpy(rs->v[rs->n].data, r->data, r->size);
	rs->n++;
	return 0;
}

static void recs_free(struct recs *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free(rs->v[i].data);
	free(rs->v);
	memset(rs, 0, sizeof(*rs));
}

/* Decodes a page; its records appended. */
static void decode_into(struct rt_decoder *d, const uint8_t *page, size_t len, struct recs *rs)
{
	struct rt_page_result r;

	CHECK_EQ(rt_decode_page(d, 0, page, len, keep, rs, &r), 0);
	if (r.error)
		fprintf(stderr, "rebuilt page rejected: %s\n", r.error);
}

/* Records in, pages out, decoded back: the same records. */
static size_t rebuild(const struct rt_layout *l, struct rt_decoder *d, const struct recs *in,
		      struct recs *out)
{
	struct rt_page_builder *b;
	const uint8_t *page;
	size_t len, pages = 0;

	CHECK_EQ(rt_page_builder_new(&b, l), 0);
	for (size_t i = 0; i < in->n; i++) {
		int ret = rt_page_builder_add(b, in->v[i].ts, in->v[i].data, in->v[i].size);

		if (ret == -ENOSPC) {
			page = rt_page_builder_take(b, &len);
			CHECK(page != NULL);
			CHECK_EQ(len, l->sub_buffer_size);
			decode_into(d, page, len, out);
			pages++;
			ret = rt_page_builder_add(b, in->v[i].ts, in->v[i].data, in->v[i].size);
		}
		CHECK_EQ(ret, 0);
	}
	if ((page = rt_page_builder_take(b, &len))) {
		decode_into(d, page, len, out);
		pages++;
	}
	CHECK(rt_page_builder_take(b, &len) == NULL);
	rt_page_builder_free(b);
	return pages;
}

static void check_same(const struct recs *a, const struct recs *b, const char *what)
{
	CHECK_EQ(b->n, a->n);
	for (size_t i = 0; i < a->n && i < b->n; i++) {
		const struct rec *x = &a->v[i], *y = &b->v[i];

		if (x->ts != y->ts || x->type != y->type || x->size != y->size ||
		    memcmp(x->data, y->data, x->size)) {
			fprintf(stderr, "%s: record %zu differs: ts %" PRIu64 "/%" PRIu64
				" type %u/%u size %u/%u\n", what, i, x->ts, y->ts, x->type,
				y->type, x->size, y->size);
			CHECK(!"the same records");
			return;
		}
	}
}

static void test_tree(const char *root, const char *name)
{
	static const char *const all[] = { "*:*", NULL };
	struct fixture fx;
	size_t total = 0;

	if (fixture_open(&fx, root, name, all)) {
		CHECK(!"fixture opens");
		return;
	}
	for (int cpu = 0; cpu < fx.ncpus; cpu++) {
		struct recs in = { 0 }, out = { 0 };
		size_t len = 0, sub = fx.layout->sub_buffer_size;
		uint8_t *pages = fixture_pages(&fx, cpu, &len);
		char what[128];

		for (size_t off = 0; pages && off + sub <= len; off += sub) {
			struct rt_page_result r;

			/* A page the decoder refuses (an overrun's) has no record to rebuild. */
			rt_decode_page(fx.decoder, (unsigned int)cpu, pages + off, sub, keep, &in,
				       &r);
		}
		rebuild(fx.layout, fx.decoder, &in, &out);
		snprintf(what, sizeof(what), "%s cpu%d", name, cpu);
		check_same(&in, &out, what);
		total += in.n;
		recs_free(&in);
		recs_free(&out);
		free(pages);
	}
	CHECK(total > 0);
	fixture_close(&fx);
}

/* Deltas past 27 bits (a time extend), records longer than type_len's 28 words, both orders. */
static void test_synthetic(const char *root, bool big_endian)
{
	char dir[4200];
	size_t hl = 0, el = 0;
	char *hp, *he;
	struct rt_layout *l = NULL;
	struct rt_decoder *d = NULL;
	struct recs in = { 0 }, out = { 0 };
	uint8_t big[300];
	struct rt_record r = { 0 };
	size_t pages;

	snprintf(dir, sizeof(dir), "%s/stock", root);
	hp = tree_read(dir, "events/header_page", &hl);
	he = tree_read(dir, "events/header_event", &el);
	CHECK(hp && he);
	if (!hp || !he || rt_layout_new(&l, hp, hl, he, el, big_endian) ||
	    tree_add_event(l, dir, "ftrace", "print") || rt_decoder_new(&d, l)) {
		CHECK(!"layout");
		goto out;
	}
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7 + 1);
	/* 8 bytes, then 5 << 27 + 3 later, then 300 bytes (length word), then 1 << 40 later. */
	r = (struct rt_record){ .timestamp = 1000, .data = big, .size = 8 };
	keep(&r, &in);
	r.timestamp += (5ULL << 27) + 3;
	keep(&r, &in);
	r = (struct rt_record){ .timestamp = r.timestamp + 1, .data = big, .size = sizeof(big) };
	keep(&r, &in);
	r = (struct rt_record){ .timestamp = r.timestamp + (1ULL << 40), .data = big + 4, .size = 12 };
	keep(&r, &in);
	/* Enough 120-byte records for a second page, then one from before the last: a third. */
	for (int i = 0; i < 40; i++) {
		r = (struct rt_record){ .timestamp = r.timestamp + 2, .data = big, .size = 120 };
		keep(&r, &in);
	}
	r.timestamp -= 10;
	keep(&r, &in);
	for (size_t i = 0; i < in.n; i++)
		in.v[i].type = 0;	/* the decoder reads the id from the data: compared below */
	pages = rebuild(l, d, &in, &out);
	CHECK_EQ(pages, 3);
	for (size_t i = 0; i < out.n; i++)
		out.v[i].type = 0;
	check_same(&in, &out, big_endian ? "synthetic big-endian" : "synthetic");
	{
		struct rt_page_builder *b;
		struct rt_page_result res;
		const uint8_t *page;
		size_t len;

		CHECK_EQ(rt_page_builder_new(&b, l), 0);
		/* No page holds it. */
		CHECK_EQ(rt_page_builder_add(b, 1, big, l->sub_buffer_size), -EINVAL);
		/* Losses before a page: its flags, and the count after the data. */
		rt_page_builder_missed(b, 5);
		rt_page_builder_missed(b, 2);
		CHECK_EQ(rt_page_builder_add(b, 1, big, 8), 0);
		page = rt_page_builder_take(b, &len);
		CHECK_EQ(rt_decode_page(d, 0, page, len, NULL, NULL, &res), 0);
		CHECK(res.missed && res.missed_exact);
		CHECK_EQ(res.missed_count, 7);
		CHECK_EQ(res.records, 1);
		/* An unknown count: the flag alone; the next page has none. */
		rt_page_builder_missed(b, 3);
		rt_page_builder_missed(b, 0);
		CHECK_EQ(rt_page_builder_add(b, 2, big, 8), 0);
		page = rt_page_builder_take(b, &len);
		CHECK_EQ(rt_decode_page(d, 0, page, len, NULL, NULL, &res), 0);
		CHECK(res.missed && !res.missed_exact);
		CHECK_EQ(rt_page_builder_add(b, 3, big, 8), 0);
		page = rt_page_builder_take(b, &len);
		CHECK_EQ(rt_decode_page(d, 0, page, len, NULL, NULL, &res), 0);
		CHECK(!res.missed);
		rt_page_builder_free(b);
	}
out:
	recs_free(&in);
	recs_free(&out);
	rt_decoder_free(d);
	rt_layout_free(l);
	free(hp);
	free(he);
}

int main(int argc, char **argv)
{
	static const char *const trees[] = { "stock", "padded", "rt", "stock-overrun",
					     "padded-overrun", "rt-overrun" };

	if (argc != 2) {
		fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]);
		return 2;
	}
	for (size_t i = 0; i < ARRAY_SIZE(trees); i++)
		test_tree(argv[1], trees[i]);
	test_synthetic(argv[1], false);
	test_synthetic(argv[1], true);
	return check_exit("test-page-build");
}
