// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The NATS payload both ways: every record of a fixture wrapped as
 * ringtapd's publisher wraps it (encode.c) unpacks with its head intact,
 * and the consumer's side (client/published.c) turns a Welcome, a Schema,
 * the records and a loss back into ringtap stream's lines, counts sequence
 * gaps, and skips what is not ringtapd's.
 */
#include <event-parse.h>
#include <unistd.h>

#include "check.h"
#include "decode.h"
#include "encode.h"
#include "fixture.h"
#include "layout.h"
#include "published.h"
#include "ringtap.h"

static const char *const events[] = { "ringtap_test:ringtap_test", NULL };

struct ctx {
	struct fixture *fx;
	struct rt_collector *col;
	struct rt_host host;
	uint64_t seq[2];
	unsigned int records, schemas_sent;
};

/* Wraps what buf holds as the publisher does and hands it to the collector. */
static int publish(struct ctx *x, const char *subject, unsigned int cpu, uint64_t seq,
		   Ringtap__Published__MsgCase kind, const struct rt_buf *buf, bool delimited)
{
	struct rt_published_head h = { .boot_id = "b00t", .session = 42, .cpu = cpu, .seq = seq };
	struct rt_buf out = { 0 };
	const uint8_t *inner;
	size_t len;
	int ret;

	ret = rt_encode_inner(buf, delimited, &inner, &len);
	CHECK_EQ(ret, 0);
	if (!ret)
		ret = rt_encode_published(&h, kind, inner, len, &out);
	if (!ret) {
		Ringtap__Published *p = ringtap__published__unpack(NULL, out.len, out.data);

		CHECK(p && p->cpu == cpu && p->seq == seq && p->session == 42 &&
		      !strcmp(p->boot_id, "b00t") && p->msg_case == kind);
		if (p)
			ringtap__published__free_unpacked(p, NULL);
		ret = rt_collector_take(x->col, subject, out.data, out.len);
	}
	rt_buf_free(&out);
	return ret;
}

static int on_record(const struct rt_record *rec, void *ctx)
{
	struct ctx *x = ctx;
	struct rt_buf b = { 0 };

	if (!rec->event || strcmp(rec->event->name, "ringtap_test"))
		return 0;
	if (!x->schemas_sent++) {
		CHECK_EQ(rt_encode_schema_frame(rec->event, NULL, NULL, NULL, &b), 0);
		CHECK_EQ(publish(x, "ringtap.h1.ringtap_test.ringtap_test", rec->cpu, 0,
				 RINGTAP__PUBLISHED__MSG_SCHEMA, &b, true), 0);
		b.len = 0;
	}
	CHECK_EQ(rt_encode_record(rec, x->fx->layout, false, NULL, &b), 0);
	/* Every tenth record of CPU 1 is "dropped": its seq is used, the message is not. */
	if (rec->cpu != 1 || x->seq[1] % 10)
		CHECK_EQ(publish(x, "ringtap.h1.ringtap_test.ringtap_test", rec->cpu,
				 x->seq[rec->cpu], RINGTAP__PUBLISHED__MSG_RECORD, &b, false), 0);
	x->seq[rec->cpu]++;
	x->records++;
	rt_buf_free(&b);
	return 0;
}

static void test_round_trip(const char *root, const char *dir)
{
	struct fixture fx;
	struct rt_collector col;
	struct ctx x = { .fx = &fx, .col = &col };
	struct rt_loss loss = { .count = 7, .exact = true };
	struct rt_buf b = { 0 };
	char path[4200], file[4200], *text, *summary = NULL;
	size_t len, slen = 0;
	FILE *mem;

	if (fixture_open(&fx, root, "stock", events)) {
		CHECK(!"fixture opens");
		return;
	}
	CHECK_EQ(rt_collector_init(&col, dir, RINGTAP_FORMAT_NO_TIME), 0);
	x.host = (struct rt_host){ "h1", "6.1", "b00t", 2, "local" };
	CHECK_EQ(rt_encode_welcome_frame(1, RINGTAP__ENCODING__DECODED, &x.host, fx.layout, &b), 0);
	CHECK_EQ(publish(&x, "ringtap.h1._hello", 0, 0, RINGTAP__PUBLISHED__MSG_WELCOME, &b, true), 0);
	b.len = 0;
	for (int cpu = 0; cpu < 2; cpu++) {
		uint8_t *pages = fixture_pages(&fx, cpu, &len);

		for (size_t off = 0; pages && off + fx.layout->sub_buffer_size <= len;
		     off += fx.layout->sub_buffer_size) {
			struct rt_page_result res;

			rt_decode_page(fx.decoder, (unsigned int)cpu, pages + off,
				       fx.layout->sub_buffer_size, on_record, &x, &res);
		}
		free(pages);
	}
	/* The drops of CPU 1 reported, as the publisher reports a full buffer. */
	loss.count = (x.seq[1] + 9) / 10;
	CHECK_EQ(rt_encode_lost_frame(1, RINGTAP__LOSS_SOURCE__QUEUE, &loss, &b), 0);
	CHECK_EQ(publish(&x, "ringtap.h1._lost", 1, x.seq[1], RINGTAP__PUBLISHED__MSG_LOST, &b, true), 0);
	rt_buf_free(&b);

	/* Not ringtapd's: a host token that would leave the directory, bytes that do not parse. */
	CHECK_EQ(rt_collector_take(&col, "ringtap.../x", (const uint8_t *)"", 0), -EBADMSG);
	CHECK_EQ(rt_collector_take(&col, "ringtap.a/b.x.y", (const uint8_t *)"", 0), -EBADMSG);
	CHECK_EQ(rt_collector_take(&col, "ringtap.h1.x.y", (const uint8_t *)"\xff\xff", 2), -EBADMSG);
	CHECK_EQ(col.bad, 3);
	CHECK_EQ(rt_collector_flush(&col), 0);
	mem = open_memstream(&summary, &slen);
	rt_collector_summary(&col, mem);
	fclose(mem);
	printf("%s", summary);
	snprintf(path, sizeof(path), "lost %" PRIu64 " (0 kernel, %" PRIu64 " publish), 0 missing "
		 "unreported", loss.count, loss.count);
	CHECK(strstr(summary, path) != NULL);
	CHECK_EQ(x.records, 100);
	CHECK_EQ(col.records, 100 - loss.count);

	snprintf(file, sizeof(file), "%s/h1.txt", dir);
	text = read_whole_file(file, &len);
	CHECK(text != NULL);
	if (text) {
		CHECK(!strncmp(text, "[000] ringtap_test:ringtap_test pid=", 36));
		CHECK(strstr(text, " seq=0 cpu=0 tag=rtaptest msg=cpu0 seq 0 \n") != NULL);
		snprintf(path, sizeof(path), "# cpu 1: lost %" PRIu64 " events (queue)\n", loss.count);
		CHECK(strstr(text, path) != NULL);
		CHECK(!strstr(text, "unknown event"));
		free(text);
	}
	unlink(file);
	free(summary);
	rt_collector_release(&col);
	fixture_close(&fx);
}

int main(int argc, char **argv)
{
	const char *root = argc > 1 ? argv[1] : "tests/fixtures";
	char dir[] = "/tmp/test-nats.XXXXXX";

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_round_trip(root, dir);
	rmdir(dir);
	return check_exit("test-nats");
}
