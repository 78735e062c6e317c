// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * legacy: a reader that hard-codes the 12-byte header of 2012 (what PowerTOP
 * 1.x did) reads correct values from records rewritten to "padded-2012" on
 * every kernel layout, and wrong values from the stock kernel's raw bytes:
 * the breakage of 2012, shown and absorbed. The rewritten offsets equal what
 * the padded kernel itself publishes.
 */
#include "fixture.h"
#include "legacy.h"
#include "padded-2012.h"

/* The hard-coded reader: offsets as a 2012 tool compiled them in. */
struct old_tool_view {
	int pid;
	uint64_t seq;
	uint32_t cpu;
	char tag[9];
	char msg[64];
};

static void old_tool_read(const uint8_t *rec, unsigned int size, struct old_tool_view *v)
{
	uint32_t loc;
	unsigned int off, len;

	memset(v, 0, sizeof(*v));
	memcpy(&v->pid, rec + PADDED_2012_PID_AT, 4);
	memcpy(&v->seq, rec + PADDED_2012_SEQ_AT, 8);
	memcpy(&v->cpu, rec + PADDED_2012_CPU_AT, 4);
	memcpy(v->tag, rec + PADDED_2012_TAG_AT, PADDED_2012_TAG_SIZE);
	memcpy(&loc, rec + PADDED_2012_MSG_AT, 4);
	off = loc & 0xffff;
	len = loc >> 16;
	if (off + len <= size && len < sizeof(v->msg))
		memcpy(v->msg, rec + off, len);
}

struct check_ctx {
	struct fixture *fx;
	const struct rt_legacy_layout *lg;
	unsigned int matched, raw_wrong, raw_total, prints;
};

/* A trace_marker write (ftrace:print, "char buf[]" runs to the record's end) keeps its text. */
static void check_print(struct check_ctx *c, const struct rt_record *rec)
{
	struct tep_format_field *buf = tep_find_field(rec->event, "buf");
	unsigned int offsets[8], fixed, len;
	uint8_t out[512 + RT_LEGACY_SLACK];
	const uint8_t *text;
	int n = rt_legacy_rewrite(c->lg, rec, c->fx->layout, out, sizeof(out));

	CHECK(buf && n > 0);
	if (!buf || n <= 0 || rt_record_field_bytes(rec, buf, &text, &len) ||
	    rt_legacy_offsets(c->lg, rec->event, offsets, 8, &fixed))
		return;
	/* buf is the second field: after ip, at the padded kernel's offset 24. */
	CHECK_EQ(offsets[1], 24);
	CHECK_EQ(n, offsets[1] + len);
	CHECK(!memcmp(out + offsets[1], text, len));
	c->prints++;
}

static int on_record(const struct rt_record *rec, void *p)
{
	struct check_ctx *c = p;

	if (rec->event && !strcmp(rec->event->name, "print")) {
		check_print(c, rec);
		return 0;
	}
	struct tep_format_field *seqf, *cpuf, *msgf;
	uint8_t out[512 + RT_LEGACY_SLACK];
	struct old_tool_view v;
	const struct rt_field_desc *pidf = rt_layout_common(c->fx->layout, "common_pid");
	uint64_t seq, cpu, pid;
	const uint8_t *msg;
	unsigned int msg_len;
	int n;

	if (!rec->event || strcmp(rec->event->name, "ringtap_test"))
		return 0;
	seqf = tep_find_field(rec->event, "seq");
	cpuf = tep_find_field(rec->event, "cpu");
	msgf = tep_find_field(rec->event, "msg");
	CHECK_EQ(rt_record_read_int(rec, seqf, &seq), 0);
	CHECK_EQ(rt_record_read_int(rec, cpuf, &cpu), 0);
	CHECK_EQ(rt_record_field_bytes(rec, msgf, &msg, &msg_len), 0);
	CHECK_EQ(rt_record_read_common(rec, c->fx->layout, pidf, &pid), 0);

	n = rt_legacy_rewrite(c->lg, rec, c->fx->layout, out, sizeof(out));
	CHECK(n > 0);
	if (n <= 0)
		return 0;
	old_tool_read(out, (unsigned int)n, &v);
	if (v.seq == seq && v.cpu == cpu && v.pid == (int)pid && !strcmp(v.tag, "rtaptest") &&
	    !strncmp(v.msg, (const char *)msg, msg_len))
		c->matched++;
	else
		CHECK(!"the old tool reads the rewritten record right");

	/* The same tool on the kernel's own bytes. */
	old_tool_read(rec->data, rec->size, &v);
	c->raw_total++;
	if (v.seq != seq || v.cpu != cpu || strcmp(v.tag, "rtaptest"))
		c->raw_wrong++;
	return 0;
}

static void test_variant(const char *root, const char *variant, bool raw_breaks)
{
	static const char *const events[] = { "ringtap_test:ringtap_test", "sched:sched_switch",
					      "ftrace:print", NULL };
	struct fixture fx;
	struct check_ctx c = { .fx = &fx, .lg = rt_legacy_find("padded-2012") };

	CHECK(c.lg != NULL);
	if (!c.lg || fixture_open(&fx, root, variant, events)) {
		CHECK(!"fixture opens");
		return;
	}
	for (int cpu = 0; cpu < fx.ncpus; cpu++) {
		size_t len;
		uint8_t *pages = fixture_pages(&fx, cpu, &len);

		for (size_t off = 0; pages && off < len; off += fx.layout->sub_buffer_size) {
			struct rt_page_result r;

			rt_decode_page(fx.decoder, (unsigned int)cpu, pages + off,
				       fx.layout->sub_buffer_size, on_record, &c, &r);
		}
		free(pages);
	}
	printf("%s: old tool right on %u rewritten records; wrong on %u of %u raw ones; %u "
	       "trace_marker texts kept whole\n", variant, c.matched, c.raw_wrong, c.raw_total,
	       c.prints);
	CHECK_EQ(c.matched, 100);
	CHECK(c.prints > 0);
	if (raw_breaks)
		CHECK_EQ(c.raw_wrong, c.raw_total);
	else
		CHECK_EQ(c.raw_wrong, 0);
	fixture_close(&fx);
}

/* The computed legacy offsets are the padded kernel's own. */
static void test_offsets_match_padded_kernel(const char *root)
{
	static const char *const events[] = { "ringtap_test:ringtap_test", "sched:sched_switch",
					      "ftrace:print", NULL };
	struct fixture stock, padded;
	const struct rt_legacy_layout *lg = rt_legacy_find("padded-2012");

	if (fixture_open(&stock, root, "stock", events)) {
		CHECK(!"fixture opens");
		return;
	}
	if (fixture_open(&padded, root, "padded", events)) {
		CHECK(!"fixture opens");
		fixture_close(&stock);
		return;
	}
	for (int e = 0; events[e]; e++) {
		char sys[32], name[32];
		struct tep_event *s_ev, *p_ev;
		unsigned int offs[64], fixed, i = 0;

		sscanf(events[e], "%31[^:]:%31s", sys, name);
		s_ev = tep_find_event_by_name(stock.layout->tep, sys, name);
		p_ev = tep_find_event_by_name(padded.layout->tep, sys, name);
		CHECK(s_ev && p_ev);
		if (!s_ev || !p_ev)
			continue;
		CHECK_EQ(rt_legacy_offsets(lg, s_ev, offs, 64, &fixed), 0);
		for (struct tep_format_field *f = s_ev->format.fields; f; f = f->next, i++) {
			struct tep_format_field *pf = tep_find_field(p_ev, f->name);

			CHECK(pf != NULL);
			if (pf && (int)offs[i] != pf->offset) {
				fprintf(stderr, "%s.%s: legacy %u, padded kernel %d\n", name, f->name,
					offs[i], pf->offset);
				CHECK(!"legacy offset equals the padded kernel's");
			}
		}
		{
			char *text = NULL;

			char path[4200], *want;
			size_t len;

			CHECK_EQ(rt_legacy_format(lg, s_ev, rt_layout_format(stock.layout, s_ev->id),
						  &text), 0);
			CHECK(text && strstr(text, "field:int common_padding;\toffset:8;\tsize:4;"));
			/* Word for word the padded kernel's own text, but for the event's ID. */
			snprintf(path, sizeof(path), "%s/padded/events/%s/%s/format", root, sys, name);
			want = read_whole_file(path, &len);
			CHECK(want && text);
			if (want && text) {
				const char *a = strstr(text, "format:"), *b = strstr(want, "format:");

				CHECK(a && b && !strcmp(a, b));
				if (a && b && strcmp(a, b))
					fprintf(stderr, "FIXED format of %s:\n%s\npadded kernel's:\n%s\n", name,
						text, want);
			}
			free(want);
			free(text);
		}
	}
	fixture_close(&stock);
	fixture_close(&padded);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	CHECK(rt_legacy_find("no-such-layout") == NULL);
	test_variant(argv[1], "stock", true);
	test_variant(argv[1], "padded", false);
	/*
	 * On rt the test event's u64 first field is aligned to 16 after the
	 * 10-byte header, as after the padded 12: the old tool happens to read
	 * it right (a tool that hard-coded the stock 8 bytes would not).
	 */
	test_variant(argv[1], "rt", false);
	test_offsets_match_padded_kernel(argv[1]);
	return check_exit("test-legacy");
}
