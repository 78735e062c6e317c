// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * decode: the captured pages of every kernel variant decode to exactly what
 * the kernel itself printed for the same events (its "trace" text, read
 * before the pages were consumed); the test events decode to the same
 * payloads on every variant; the overrun captures account for every event;
 * malformed pages are refused and counted, never crash or hang.
 */
#include <ctype.h>

#include "fixture.h"
#include "rel-loc.h"
#include "text.h"

#define MAX_LINES 4096
#define NORMAL_BURST 50		/* vm-tests/guest/capture.sh */
#define OVERRUN_BURST 1000

struct lines {
	char *v[MAX_LINES];
	unsigned int n;
};

static void lines_add(struct lines *l, const char *s)
{
	if (l->n < MAX_LINES)
		l->v[l->n++] = strdup(s);
}

static void lines_free(struct lines *l)
{
	for (unsigned int i = 0; i < l->n; i++)
		free(l->v[i]);
	l->n = 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "key=value" from a text of space-separated items; value up to the next space. */
static void pick(char *out, size_t size, const char *text, const char *key)
{
	const char *p = strstr(text, key);
	size_t n = 0;

	out[0] = '\0';
	if (!p)
		return;
	p += strlen(key);
	while (p[n] && p[n] != ' ' && n + 1 < size)
		n++;
	memcpy(out, p, n);
	out[n] = '\0';
}

/*
 * One event as "CPU USEC PID NAME PAYLOAD", where PAYLOAD keeps what the
 * kernel's print format and ours both show: the whole payload for the test
 * event, the identities for sched_switch, the text for trace_marker.
 */
static int canonical_kernel_line(const char *line, char *out, size_t size)
{
	const char *br = strstr(line, " ["), *dash, *name, *payload;
	unsigned int cpu;
	unsigned long sec, usec;
	char ev[64], a[64], b[64], c[64], d[64];
	int pid;

	if (line[0] == '#' || !br)
		return -1;
	for (dash = br; dash > line && *dash != '-'; dash--)
		;
	pid = atoi(dash + 1);
	if (sscanf(br, " [%u] %*s %lu.%lu: %63[^:]:", &cpu, &sec, &usec, ev) != 4)
		return -1;
	name = strstr(br, ev);
	payload = name + strlen(ev) + 2;
	if (!strcmp(ev, "ringtap_test")) {
		snprintf(out, size, "%u %lu%06lu %d %s %s", cpu, sec, usec, pid, ev, payload);
	} else if (!strcmp(ev, "sched_switch")) {
		pick(a, sizeof(a), payload, "prev_comm=");
		pick(b, sizeof(b), payload, "prev_pid=");
		pick(c, sizeof(c), payload, "next_comm=");
		pick(d, sizeof(d), payload, "next_pid=");
		snprintf(out, size, "%u %lu%06lu %d %s %s %s %s %s", cpu, sec, usec, pid, ev, a, b,
			 c, d);
	} else if (!strcmp(ev, "tracing_mark_write")) {
		snprintf(out, size, "%u %lu%06lu %d print %s", cpu, sec, usec, pid, payload);
	} else {
		return -1;
	}
	return 0;
}

struct collect {
	struct fixture *fx;
	struct lines canon;		/* canonical lines, decode order */
	struct lines test_payloads;	/* ringtap_test payload text only */
	struct trace_seq seq;
	unsigned long long missed;
	unsigned int pages, malformed;
	long long test_seq_seen[2][1024];
	unsigned int test_records[2];
	uint64_t page_first_ts, page_last_ts;	/* of the page being walked */
};

static const char *field_str(const struct rt_record *rec, const char *name, char *buf,
			     size_t size)
{
	struct tep_format_field *f = tep_find_field(rec->event, name);
	const uint8_t *p;
	unsigned int len, n = 0;

	buf[0] = '\0';
	if (!f || rt_record_field_bytes(rec, f, &p, &len))
		return buf;
	while (n < len && n + 1 < size && p[n] && p[n] != '\n') {
		buf[n] = (char)p[n];
		n++;
	}
	buf[n] = '\0';
	return buf;
}

static long long field_int(const struct rt_record *rec, const char *name)
{
	struct tep_format_field *f = tep_find_field(rec->event, name);
	uint64_t v = 0;

	if (!f || rt_record_read_int(rec, f, &v))
		return -999;
	return (f->flags & TEP_FIELD_IS_SIGNED) && f->size == 4 ? (int32_t)v : (long long)v;
}

static int on_record(const struct rt_record *rec, void *ctx)
{
	struct collect *c = ctx;
	const struct rt_field_desc *pidf = rt_layout_common(c->fx->layout, "common_pid");
	uint64_t pid = 0;
	unsigned long long usec = (rec->timestamp + 500) / 1000;
	char line[512], a[64], b[64];

	if (!c->page_first_ts)
		c->page_first_ts = rec->timestamp;
	c->page_last_ts = rec->timestamp;
	CHECK(rec->event != NULL);
	if (!rec->event)
		return 0;
	CHECK_EQ(rt_record_read_common(rec, c->fx->layout, pidf, &pid), 0);
	if (!strcmp(rec->event->name, "ringtap_test")) {
		const char *text, *payload;
		long long seq = field_int(rec, "seq");

		trace_seq_reset(&c->seq);
		rt_record_text(&c->seq, rec, c->fx->layout, RT_TEXT_NO_TIME);
		trace_seq_terminate(&c->seq);
		text = c->seq.buffer;
		payload = strstr(text, " seq=");
		CHECK(payload != NULL);
		if (!payload)
			return 0;
		snprintf(line, sizeof(line), "%u %llu %d ringtap_test %s", rec->cpu, usec,
			 (int)pid, payload + 1);
		lines_add(&c->test_payloads, payload + 1);
		if (rec->cpu < 2 && c->test_records[rec->cpu] < 1024)
			c->test_seq_seen[rec->cpu][c->test_records[rec->cpu]++] = seq;
		CHECK_EQ(field_int(rec, "cpu"), rec->cpu);
	} else if (!strcmp(rec->event->name, "sched_switch")) {
		field_str(rec, "prev_comm", a, sizeof(a));
		field_str(rec, "next_comm", b, sizeof(b));
		snprintf(line, sizeof(line), "%u %llu %d sched_switch %s %lld %s %lld", rec->cpu,
			 usec, (int)pid, a, field_int(rec, "prev_pid"), b,
			 field_int(rec, "next_pid"));
	} else if (!strcmp(rec->event->name, "print")) {
		snprintf(line, sizeof(line), "%u %llu %d print %s", rec->cpu, usec, (int)pid,
			 field_str(rec, "buf", a, sizeof(a)));
	} else {
		snprintf(line, sizeof(line), "unexpected %s", rec->event->name);
	}
	lines_add(&c->canon, line);
	return 0;
}

static void decode_fixture(struct collect *c, int cpu)
{
	size_t len;
	uint8_t *pages = fixture_pages(c->fx, cpu, &len);
	unsigned int psize = c->fx->layout->sub_buffer_size;

	CHECK(pages != NULL);
	if (!pages)
		return;
	CHECK_EQ(len % psize, 0);
	for (size_t off = 0; off + psize <= len; off += psize) {
		struct rt_page_result r, counted;
		int ret;

		c->page_first_ts = c->page_last_ts = 0;
		ret = rt_decode_page(c->fx->decoder, (unsigned int)cpu, pages + off, psize,
				     on_record, c, &r);
		/* The page's own bounds are its first and last record's, walked or not. */
		if (ret == 0 && r.records) {
			CHECK_EQ(r.first_timestamp, c->page_first_ts);
			CHECK_EQ(r.last_timestamp, c->page_last_ts);
		}

		/* Counted without the walk (pages for raw subscribers): the same verdict and count. */
		CHECK_EQ(rt_decode_page(c->fx->decoder, (unsigned int)cpu, pages + off, psize, NULL,
					NULL, &counted), ret);
		CHECK_EQ(counted.records, r.records);
		CHECK_EQ(counted.missed_count, r.missed_count);
		CHECK_EQ(counted.last_timestamp, r.last_timestamp);
		c->pages++;
		if (ret == -EBADMSG) {
			fprintf(stderr, "page at %zu: %s\n", off, r.error);
			c->malformed++;
		}
		if (r.missed)
			CHECK(r.missed_exact);
		c->missed += r.missed_count;
	}
	free(pages);
}

static const char *const all_events[] = { "ringtap_test:ringtap_test", "sched:sched_switch",
					  "ftrace:print", NULL };
static const char *const overrun_events[] = { "ringtap_test:ringtap_test", "ftrace:print", NULL };

/* Decodes a normal capture and compares it with the kernel's own text. */
static void test_against_kernel_text(const char *root, const char *variant,
				     struct lines *test_payloads)
{
	struct fixture fx;
	struct collect *c = calloc(1, sizeof(*c));
	struct lines kernel = { 0 };
	char path[4200], *text, *save = NULL, canon[512];
	size_t len;

	if (fixture_open(&fx, root, variant, all_events)) {
		CHECK(!"fixture opens");
		free(c);
		return;
	}
	c->fx = &fx;
	trace_seq_init(&c->seq);
	for (int cpu = 0; cpu < fx.ncpus; cpu++)
		decode_fixture(c, cpu);
	CHECK_EQ(c->malformed, 0);
	CHECK_EQ(c->missed, 0);

	snprintf(path, sizeof(path), "%s/trace.txt", fx.dir);
	text = read_whole_file(path, &len);
	CHECK(text != NULL);
	/* The kernel's text is merged by time; ours is per CPU: compare per CPU. */
	for (int cpu = 0; text && cpu < fx.ncpus; cpu++) {
		for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			if (!canonical_kernel_line(line, canon, sizeof(canon)) &&
			    (unsigned int)atoi(canon) == (unsigned int)cpu)
				lines_add(&kernel, canon);
		free(text);
		text = read_whole_file(path, &len);
	}
	free(text);
	{
		/* Ours, per CPU in decode order (CPU 0's pages first). */
		unsigned int matched = 0;

		CHECK_EQ(c->canon.n, kernel.n);
		for (unsigned int i = 0; i < c->canon.n && i < kernel.n; i++) {
			if (!strcmp(c->canon.v[i], kernel.v[i])) {
				matched++;
				continue;
			}
			fprintf(stderr, "%s line %u:\n  ours:   %s\n  kernel: %s\n", variant, i,
				c->canon.v[i], kernel.v[i]);
			CHECK(!"decoded line equals the kernel's");
			break;
		}
		printf("%s: %u records equal the kernel's text\n", variant, matched);
		CHECK(matched > 100);
	}
	/* Every test event of the burst, each sequence number once per CPU. */
	for (int cpu = 0; cpu < 2; cpu++) {
		CHECK_EQ(c->test_records[cpu], NORMAL_BURST);
		for (unsigned int i = 0; i < c->test_records[cpu]; i++)
			CHECK_EQ(c->test_seq_seen[cpu][i], i);
	}
	for (unsigned int i = 0; i < c->test_payloads.n; i++)
		lines_add(test_payloads, c->test_payloads.v[i]);
	lines_free(&kernel);
	lines_free(&c->canon);
	lines_free(&c->test_payloads);
	trace_seq_destroy(&c->seq);
	free(c);
	fixture_close(&fx);
}

/* Kept + lost = emitted, exactly, and the lost ones are the oldest. */
static void test_overrun(const char *root, const char *variant)
{
	struct fixture fx;
	struct collect *c = calloc(1, sizeof(*c));
	char name[64];

	snprintf(name, sizeof(name), "%s-overrun", variant);
	if (fixture_open(&fx, root, name, overrun_events)) {
		CHECK(!"overrun fixture opens");
		free(c);
		return;
	}
	c->fx = &fx;
	trace_seq_init(&c->seq);
	for (int cpu = 0; cpu < fx.ncpus; cpu++) {
		struct rt_cpu_stats st;
		unsigned long long missed_before = c->missed;
		unsigned int records_before = c->canon.n;
		long long lowest = 1 << 30, highest = -1;

		decode_fixture(c, cpu);
		CHECK_EQ(fixture_cpu_stats(&fx, cpu, &st), 0);
		CHECK(st.overrun > 0);
		/* The kernel's counters and the pages' stored counts agree. */
		CHECK_EQ(c->missed - missed_before, st.overrun);
		CHECK_EQ(c->canon.n - records_before, st.entries);
		for (unsigned int i = 0; i < c->test_records[cpu]; i++) {
			long long s = c->test_seq_seen[cpu][i];

			lowest = s < lowest ? s : lowest;
			highest = s > highest ? s : highest;
			if (i)
				CHECK_EQ(s, c->test_seq_seen[cpu][i - 1] + 1);
		}
		/*
		 * capture.sh's burst of OVERRUN_BURST per CPU follows the normal
		 * capture's NORMAL_BURST (sequence numbers never reset): the first
		 * st.overrun of it were overwritten, the rest are all here.
		 */
		CHECK_EQ(highest, NORMAL_BURST + OVERRUN_BURST - 1);
		CHECK_EQ(lowest, NORMAL_BURST + (long long)st.overrun);
		CHECK_EQ(c->test_records[cpu] + st.overrun, OVERRUN_BURST);
	}
	CHECK_EQ(c->malformed, 0);
	printf("%s: %llu lost events counted exactly\n", name, c->missed);
	lines_free(&c->canon);
	lines_free(&c->test_payloads);
	trace_seq_destroy(&c->seq);
	free(c);
	fixture_close(&fx);
}

static int count_record(const struct rt_record *rec, void *ctx)
{
	(*(unsigned int *)ctx)++;
	return 0;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);	/* the fixtures are little-endian x86_64 captures */
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static int decode_copy(struct fixture *fx, const uint8_t *page, size_t len, unsigned int *n,
		       struct rt_page_result *r)
{
	*n = 0;
	return rt_decode_page(fx->decoder, 0, page, len, count_record, n, r);
}

/* Hand-broken copies of a real page. */
static void test_malformed(const char *root)
{
	struct fixture fx;
	struct rt_page_result r;
	unsigned int n, data, commit, psize;
	size_t len;
	uint8_t *pages, *page;

	if (fixture_open(&fx, root, "stock", all_events)) {
		CHECK(!"fixture opens");
		return;
	}
	pages = fixture_pages(&fx, 0, &len);
	psize = fx.layout->sub_buffer_size;
	page = malloc(psize);
	data = fx.layout->page_data.offset;
	commit = fx.layout->page_commit.offset;

	memcpy(page, pages, psize);
	CHECK_EQ(decode_copy(&fx, page, psize, &n, &r), 0);
	CHECK(n > 10);
	unsigned int good = n;

	/* Commit larger than the page. */
	put32(page + commit, psize);
	CHECK_EQ(decode_copy(&fx, page, psize, &n, &r), -EBADMSG);
	CHECK_EQ(n, 0);
	CHECK(r.error && strstr(r.error, "commit size"));

	/* A commit that ends inside a record: truncated record. */
	memcpy(page, pages, psize);
	put32(page + commit, get32(pages + commit) - 2);
	CHECK_EQ(decode_copy(&fx, page, psize, &n, &r), -EBADMSG);
	CHECK_EQ(n, 0);

	/* A buffer shorter than the commit says. */
	memcpy(page, pages, psize);
	CHECK_EQ(decode_copy(&fx, page, data + 8, &n, &r), -EBADMSG);
	CHECK_EQ(decode_copy(&fx, page, data - 1, &n, &r), -EBADMSG);

	/* Long-form record (type_len 0) whose length word is 0: would walk backwards. */
	memcpy(page, pages, psize);
	put32(page + data, get32(page + data) & ~0x1fu);
	put32(page + data + 4, 0);
	CHECK_EQ(decode_copy(&fx, page, psize, &n, &r), -EBADMSG);

	/* Padding (type_len 29) with a length that points backwards. */
	memcpy(page, pages, psize);
	put32(page + data, (get32(page + data) & ~0x1fu) | 29);
	put32(page + data + 4, 0xfffffff0u);
	CHECK_EQ(decode_copy(&fx, page, psize, &n, &r), -EBADMSG);

	/* Count stored but no events missed. */
	memcpy(page, pages, psize);
	put32(page + commit, get32(pages + commit) | (1u << 30));
	CHECK_EQ(decode_copy(&fx, page, psize, &n, &r), -EBADMSG);

	/* An event id the layout does not know: passed on, counted. */
	memcpy(page, pages, psize);
	{
		unsigned int type_len = get32(page + data) & 0x1f;
		unsigned int rec = data + (type_len ? 4 : 8);
		const struct rt_field_desc *t = fx.layout->common_type;

		CHECK(type_len > 0 && type_len < 29);
		memset(page + rec + t->offset, 0xfe, t->size);
		CHECK_EQ(decode_copy(&fx, page, psize, &n, &r), 0);
		CHECK_EQ(r.unknown, 1);
		CHECK_EQ(n, good);
	}
	fixture_close(&fx);
	free(page);
	free(pages);
}

/* A __data_loc pointing outside its record is caught when read. */
static int bad_loc_record(const struct rt_record *rec, void *ctx)
{
	struct tep_format_field *f = rec->event ? tep_find_field(rec->event, "msg") : NULL;
	struct rt_record copy = *rec;
	uint8_t buf[512];
	const uint8_t *p;
	unsigned int len;

	if (!f || rec->size > sizeof(buf))
		return 0;
	memcpy(buf, rec->data, rec->size);
	copy.data = buf;
	CHECK_EQ(rt_record_field_bytes(&copy, f, &p, &len), 0);
	put32(buf + f->offset, (200u << 16) | (rec->size - 4));	/* runs past the end */
	CHECK_EQ(rt_record_field_bytes(&copy, f, &p, &len), -ERANGE);
	put32(buf + f->offset, (4u << 16) | 0xfff0u);
	CHECK_EQ(rt_record_field_bytes(&copy, f, &p, &len), -ERANGE);
	(*(unsigned int *)ctx)++;
	return 1;	/* one record is enough */
}

static void test_bad_data_loc(const char *root)
{
	struct fixture fx;
	struct rt_page_result r;
	unsigned int n = 0;
	size_t len;
	uint8_t *pages;

	if (fixture_open(&fx, root, "stock", all_events)) {
		CHECK(!"fixture opens");
		return;
	}
	pages = fixture_pages(&fx, 0, &len);
	/* Stops at the first test event: the callback returns 1. */
	for (size_t off = 0; pages && off < len && !n; off += fx.layout->sub_buffer_size)
		rt_decode_page(fx.decoder, 0, pages + off, fx.layout->sub_buffer_size,
			       bad_loc_record, &n, &r);
	CHECK_EQ(n, 1);
	free(pages);
	fixture_close(&fx);
}

/*
 * The __data_loc rule itself, and a __rel_loc field (counted from the end of
 * its word) through the decoder's field access: the fixtures have none.
 */
static void test_rel_loc(const char *root)
{
	uint8_t data[32];
	struct rt_record rec = { .data = data };
	struct tep_format_field *f;
	struct fixture fx;
	const uint8_t *p;
	unsigned int len;
	uint32_t start, n, word;

	CHECK(rt_data_loc((6u << 16) | 10, 28, false, 16, &start, &n));
	CHECK_EQ(start, 10);
	CHECK_EQ(n, 6);
	CHECK(!rt_data_loc((7u << 16) | 10, 28, false, 16, &start, &n));
	CHECK(rt_data_loc((3u << 16) | 2, 8, true, 17, &start, &n));
	CHECK_EQ(start, 14);
	CHECK_EQ(n, 3);
	CHECK(!rt_data_loc((3u << 16) | 2, 8, true, 16, &start, &n));
	/* Made words read back the same: what the legacy rewrite writes. */
	CHECK(rt_data_loc_make(10, 28, false, 6, &word));
	CHECK_EQ(word, (6u << 16) | 10);
	CHECK(rt_data_loc_make(14, 8, true, 3, &word));
	CHECK_EQ(word, (3u << 16) | 2);
	CHECK(!rt_data_loc_make(10, 8, true, 3, &word));
	CHECK(!rt_data_loc_make(0x10000, 8, false, 3, &word));
	CHECK(!rt_data_loc_make(10, 8, false, 0x10000, &word));
	if (fixture_open(&fx, root, "stock", all_events)) {
		CHECK(!"fixture opens");
		return;
	}
	CHECK_EQ(rt_layout_add_event(fx.layout, "ringtap_rel", rel_loc_format,
				     sizeof(rel_loc_format) - 1, &rec.event), 0);
	f = rec.event ? tep_find_field(rec.event, "name") : NULL;
	CHECK(f != NULL);
	if (f) {
		CHECK(f->flags & TEP_FIELD_IS_RELATIVE);
		/* Right after its word, then at the record's very end, then one past it. */
		rec.size = rel_loc_record(data, 1, "hello", 0);
		CHECK_EQ(rt_record_field_bytes(&rec, f, &p, &len), 0);
		CHECK(p == data + REL_LOC_WORD + 4);
		CHECK_EQ(len, 6);
		rec.size = rel_loc_record(data, 1, "hello", 2);
		CHECK_EQ(rt_record_field_bytes(&rec, f, &p, &len), 0);
		CHECK(p == data + REL_LOC_WORD + 6);
		CHECK_EQ(len, 6);
		rec.size--;
		CHECK_EQ(rt_record_field_bytes(&rec, f, &p, &len), -ERANGE);
	}
	fixture_close(&fx);
}

struct stamp_ctx {
	unsigned int n;
	uint64_t ts[4];
};

static int stamp_record(const struct rt_record *rec, void *ctx)
{
	struct stamp_ctx *c = ctx;

	if (c->n < 4)
		c->ts[c->n] = rec->timestamp;
	c->n++;
	return 0;
}

/*
 * Time-extend and absolute-timestamp records, built by hand around a real
 * event: a 27-bit delta, an extend that adds high bits, and an absolute
 * stamp that replaces the running time.
 */
static void test_time_records(const char *root)
{
	struct fixture fx;
	struct rt_page_result r;
	struct stamp_ctx c = { 0 };
	uint8_t *pages, *page, *p, event[256];
	unsigned int data, type_len, ev_len;
	uint64_t base = 1000000000ULL, commit;
	size_t len;

	if (fixture_open(&fx, root, "stock", all_events)) {
		CHECK(!"fixture opens");
		return;
	}
	pages = fixture_pages(&fx, 0, &len);
	data = fx.layout->page_data.offset;
	/* The first record of the capture is a short-form data record. */
	type_len = get32(pages + data) & 0x1f;
	CHECK(type_len > 0 && type_len < 29);
	ev_len = 4 * type_len;
	memcpy(event, pages + data + 4, ev_len);

	page = calloc(1, fx.layout->sub_buffer_size);
	memcpy(page + fx.layout->page_timestamp.offset, &base, 8);
	p = page + data;
	/* 1: data, delta 7 */
	put32(p, type_len | (7u << 5));
	memcpy(p + 4, event, ev_len);
	p += 4 + ev_len;
	/* 2: time extend of (3 << 27) + 5, then data with delta 2 */
	put32(p, 30 | (5u << 5));
	put32(p + 4, 3);
	p += 8;
	put32(p, type_len | (2u << 5));
	memcpy(p + 4, event, ev_len);
	p += 4 + ev_len;
	/* 3: absolute stamp 0x1_2345_6789 (low 27 bits in the header), then data delta 0 */
	put32(p, 31 | ((0x123456789u & ((1u << 27) - 1)) << 5));
	put32(p + 4, (uint32_t)(0x123456789ULL >> 27));
	p += 8;
	put32(p, type_len);
	memcpy(p + 4, event, ev_len);
	p += 4 + ev_len;
	commit = (uint64_t)(p - (page + data));
	memcpy(page + fx.layout->page_commit.offset, &commit, 8);

	CHECK_EQ(rt_decode_page(fx.decoder, 0, page, fx.layout->sub_buffer_size, stamp_record, &c,
				&r), 0);
	CHECK_EQ(c.n, 3);
	CHECK_EQ(c.ts[0], base + 7);
	CHECK_EQ(c.ts[1], base + 7 + (3ULL << 27) + 5 + 2);
	CHECK_EQ(c.ts[2], 0x123456789ULL);
	free(page);
	free(pages);
	fixture_close(&fx);
}

int main(int argc, char **argv)
{
	static const char *const variants[] = { "stock", "padded", "rt" };
	struct lines payloads[3] = { 0 };

	if (argc != 2) {
		fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]);
		return 2;
	}
	for (int i = 0; i < 3; i++) {
		test_against_kernel_text(argv[1], variants[i], &payloads[i]);
		test_overrun(argv[1], variants[i]);
	}
	/* The same workload decodes to the same payloads on every layout. */
	for (int i = 0; i < 3; i++)
		qsort(payloads[i].v, payloads[i].n, sizeof(char *), cmp_str);
	CHECK_EQ(payloads[0].n, 2 * NORMAL_BURST);
	for (int i = 1; i < 3; i++) {
		CHECK_EQ(payloads[i].n, payloads[0].n);
		for (unsigned int j = 0; j < payloads[0].n && j < payloads[i].n; j++)
			if (strcmp(payloads[0].v[j], payloads[i].v[j])) {
				fprintf(stderr, "%s differs from stock: %s vs %s\n", variants[i],
					payloads[i].v[j], payloads[0].v[j]);
				CHECK(!"identical payloads across layouts");
				break;
			}
	}
	for (int i = 0; i < 3; i++)
		lines_free(&payloads[i]);
	test_malformed(argv[1]);
	test_bad_data_loc(argv[1]);
	test_rel_loc(argv[1]);
	test_time_records(argv[1]);
	return check_exit("test-decode");
}
