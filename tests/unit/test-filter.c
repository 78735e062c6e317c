// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * filter: the kernel's filter language on two records, with the answer
 * Debian 6.1's trace_events_filter.c gives (worked out from its source,
 * quirks included; vm-filter checks the same forms against a running
 * kernel), on every captured layout; and every malformed or unservable
 * filter refused with a reason.
 */
#include "filter.h"
#include "fixture.h"
#include "rel-loc.h"

static const char *const events[] = { "ringtap_test:ringtap_test", NULL };

struct sample {
	uint64_t seq;
	unsigned int cpu_field;
	int pid;
	const char *msg;
	unsigned int written_on;
};

/* A ringtap_test record placed by the layout's own offsets. */
static size_t build(struct tep_event *ev, const struct sample *s, uint8_t *rec, size_t size)
{
	struct tep_format_field *type = tep_find_common_field(ev, "common_type");
	struct tep_format_field *pid = tep_find_common_field(ev, "common_pid");
	struct tep_format_field *seq = tep_find_field(ev, "seq");
	struct tep_format_field *cpu = tep_find_field(ev, "cpu");
	struct tep_format_field *tag = tep_find_field(ev, "tag");
	struct tep_format_field *msg = tep_find_field(ev, "msg");
	uint16_t id = (uint16_t)ev->id;
	size_t end = (size_t)msg->offset + (size_t)msg->size, len = strlen(s->msg) + 1;
	uint32_t loc = (uint32_t)(len << 16 | end);

	memset(rec, 0, size);
	memcpy(rec + type->offset, &id, sizeof(id));
	memcpy(rec + pid->offset, &s->pid, sizeof(s->pid));
	memcpy(rec + seq->offset, &s->seq, sizeof(s->seq));
	memcpy(rec + cpu->offset, &s->cpu_field, sizeof(s->cpu_field));
	memcpy(rec + tag->offset, "rtaptest", 8);
	memcpy(rec + msg->offset, &loc, sizeof(loc));
	memcpy(rec + end, s->msg, len);
	return end + len;
}

static const struct sample a = { 5, 1, 100, "cpu1 seq 5 xxxxx", 1 };
static const struct sample b = { 256, 0, -3, "", 0 };

static const struct {
	const char *expr;
	bool a, b;
} cases[] = {
	{ "seq == 5", 1, 0 },
	{ "seq != 5", 0, 1 },
	{ "seq < 6", 1, 0 },
	{ "seq <= 5 && cpu == 1", 1, 0 },
	{ "seq >= 0x100", 0, 1 },
	{ "seq == 0400", 0, 1 },			/* octal, as kstrtoull reads it */
	{ "seq & 4", 1, 0 },
	{ "seq & 0x100", 0, 1 },
	{ "!seq == 5", 0, 1 },
	{ "!(seq == 5 || cpu == 0)", 0, 0 },
	{ "!!(seq == 5)", 1, 0 },
	{ "! ( seq == 5 ) && !(cpu == 1)", 0, 1 },
	{ "seq == 1 || seq == 5 && cpu == 1", 1, 0 },	/* && binds tighter */
	{ "(seq == 1 || seq == 256) && cpu == 0", 0, 1 },
	{ "seq==5||cpu==0", 1, 1 },
	{ "\tseq == 5\n", 1, 0 },
	{ "common_pid > -1", 1, 0 },
	{ "common_pid < -2", 0, 1 },
	{ "common_pid == -3", 0, 1 },
	{ "common_pid == 4294967293", 0, 1 },		/* cut to the field's 32 bits */
	{ "common_pid >= -0x3", 1, 1 },
	{ "CPU == 1", 1, 0 },				/* the CPU that wrote the record */
	{ "common_cpu != 1", 0, 1 },
	{ "CPU & 1", 0, 0 },				/* the kernel's CPU test has no "&" */
	{ "cpu == 1", 1, 0 },				/* the event's own field comes first */
	{ "tag == \"rtaptest\"", 1, 1 },
	{ "tag == 'rtaptest'", 1, 1 },
	{ "tag == \"rtap\"", 0, 0 },
	{ "tag != \"rtap\"", 1, 1 },
	{ "tag ~ \"rtap*\"", 1, 1 },
	{ "tag ~ \"*test\"", 0, 0 },	/* a char array's end is compared without its last byte */
	{ "tag ~ \"*tes\"", 1, 1 },
	{ "tag ~ \"*apt*\"", 1, 1 },
	{ "tag ~ \"r?ap[st]est\"", 1, 1 },
	{ "tag ~ \"!rtap*\"", 0, 0 },
	{ "msg == \"cpu1 seq 5 xxxxx\"", 1, 0 },
	{ "msg == \"cpu1 seq 5\"", 0, 0 },
	{ "msg ~ \"cpu1*\"", 1, 0 },
	{ "msg ~ \"*xxxxx\"", 1, 0 },
	{ "msg ~ \"*\"", 1, 1 },
	{ "msg ~ \"\"", 0, 1 },
	{ "msg != \"\"", 1, 0 },
	{ "msg ~ \"cpu[0-1] seq ?*\"", 1, 0 },
	{ "msg ~ \"cpu[!0]*x\"", 1, 0 },
	{ "msg ~ \"cpu1\\ seq*\"", 1, 0 },
	{ "msg ~ \"!*seq*\"", 0, 1 },
	{ "msg ~ \"*seq 5 x*\" && tag ~ \"rt*\"", 1, 0 },
};

static const char *const refused[] = {
	"seq <",
	"nosuch > 1",
	"seq < 10 &&",
	"seq == 1 ||",
	"(seq < 10",
	"seq < 10)",
	"()",
	"!",
	"seq == 1 !",
	"seq << 10",
	"seq = 5",
	"seq & 1 & 2",
	"seq < abc",
	"seq < \"unterminated",
	"&& seq < 1",
	"",
	"seq < 1 seq > 2",
	"COMM == \"sh\"",
	"comm ~ \"sh*\"",
	"((((((((((((((((((seq < 1))))))))))))))))))",
	"msg == \"cpu0 \xc2\xa0\"",
	"msg == 3",
	"seq == \"3\"",
	"seq > -1",			/* unsigned: kstrtoull refuses "-" */
	"seq == 08",
	"seq == 0x",
	"seq == 18446744073709551616",
	"common_pid < -9223372036854775809",
	"msg < \"a\"",
	"seq ~ 1",
	"tag.ustring == \"x\"",
	"CPU == \"1\"",
};

static void run(const char *root, const char *layout)
{
	struct fixture fx;
	struct tep_event *ev;
	struct rt_why why = { "" };
	uint8_t ra[128], rb[128];
	size_t la, lb;

	if (fixture_open(&fx, root, layout, events)) {
		CHECK(!"fixture");
		return;
	}
	ev = tep_find_event_by_name(fx.layout->tep, "ringtap_test", "ringtap_test");
	CHECK(ev != NULL);
	if (!ev)
		goto out;
	la = build(ev, &a, ra, sizeof(ra));
	lb = build(ev, &b, rb, sizeof(rb));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rt_filter *f = NULL;

		why.text[0] = '\0';
		CHECK_EQ(rt_filter_compile(cases[i].expr, &ev, 1, &f, &why), 0);
		if (!f) {
			fprintf(stderr, "%s: '%s': %s\n", layout, cases[i].expr, why.text);
			continue;
		}
		if (rt_filter_match(f, (unsigned int)ev->id, ra, la, a.written_on) != cases[i].a ||
		    rt_filter_match(f, (unsigned int)ev->id, rb, lb, b.written_on) != cases[i].b) {
			fprintf(stderr, "%s: '%s' wants %d %d\n", layout, cases[i].expr,
				cases[i].a, cases[i].b);
			CHECK(!"match");
		}
		/* Another event passes: the filter is the selected events' only. */
		CHECK(rt_filter_match(f, (unsigned int)ev->id + 1, rb, lb, 0));
		/* A string's location outside the record is no match, not a read past it. */
		if (strstr(cases[i].expr, "msg") && !strchr(cases[i].expr, '!'))
			CHECK(!rt_filter_match(f, (unsigned int)ev->id, ra, la - 10, 1));
		rt_filter_free(f);
	}
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		why.text[0] = '\0';
		CHECK_EQ(rt_filter_check(refused[i], ev, &why), -EINVAL);
		if (!why.text[0])
			fprintf(stderr, "'%s' refused without a reason\n", refused[i]);
		CHECK(why.text[0] != '\0');
	}
	CHECK_EQ(rt_filter_check("nosuch > 1", ev, &why), -EINVAL);
	CHECK_STR(why.text, "ringtap_test:ringtap_test has no field 'nosuch'");
out:
	fixture_close(&fx);
}

/* A __rel_loc string, counted from the end of its word: compared where it is, bounds kept. */
static void run_rel_loc(const char *root)
{
	static const struct {
		const char *expr;
		bool match;
	} rel_cases[] = {
		{ "name == \"hello\"", true }, { "name ~ \"hel*\"", true },
		{ "name == \"hell\"", false }, { "name != \"hello\"", false },
	};
	struct rt_why why = { "" };
	struct tep_event *ev = NULL;
	struct fixture fx;
	uint8_t rec[64];
	unsigned int len;

	if (fixture_open(&fx, root, "stock", events)) {
		CHECK(!"fixture");
		return;
	}
	CHECK_EQ(rt_layout_add_event(fx.layout, "ringtap_rel", rel_loc_format,
				     sizeof(rel_loc_format) - 1, &ev), 0);
	len = rel_loc_record(rec, 7, "hello", 3);
	for (size_t i = 0; ev && i < sizeof(rel_cases) / sizeof(rel_cases[0]); i++) {
		struct rt_filter *f = NULL;

		CHECK_EQ(rt_filter_compile(rel_cases[i].expr, &ev, 1, &f, &why), 0);
		if (!f)
			continue;
		if (rt_filter_match(f, 4000, rec, len, 0) != rel_cases[i].match) {
			fprintf(stderr, "__rel_loc: '%s' wants %d\n", rel_cases[i].expr,
				rel_cases[i].match);
			CHECK(!"match");
		}
		/* The string one byte past the record's end: no match, no read past it. */
		if (rel_cases[i].match)
			CHECK(!rt_filter_match(f, 4000, rec, len - 1, 0));
		rt_filter_free(f);
	}
	fixture_close(&fx);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 1;
	run(argv[1], "stock");
	run(argv[1], "padded");
	run(argv[1], "rt");
	run_rel_loc(argv[1]);
	return check_exit("test-filter");
}
