// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * layout: the header texts and formats captured from each kernel variant
 * give the common fields that variant publishes; malformed or unsupported
 * headers are refused with the right error.
 */
#include <event-parse.h>

#include "check.h"
#include "layout.h"

static char *fixture(const char *dir, const char *variant, const char *file, size_t *len)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s/%s", dir, variant, file);
	return read_whole_file(path, len);
}

static struct rt_layout *load(const char *dir, const char *variant)
{
	size_t hp_len, he_len, fmt_len;
	char *hp = fixture(dir, variant, "events/header_page", &hp_len);
	char *he = fixture(dir, variant, "events/header_event", &he_len);
	char *fmt = fixture(dir, variant, "events/ringtap_test/ringtap_test/format", &fmt_len);
	struct rt_layout *l = NULL;
	struct tep_event *ev = NULL;

	CHECK(hp && he && fmt);
	if (hp && he && fmt) {
		CHECK_EQ(rt_layout_new(&l, hp, hp_len, he, he_len, false), 0);
		if (l) {
			CHECK_EQ(rt_layout_add_event(l, "ringtap_test", fmt, fmt_len, &ev), 0);
			CHECK(ev && !strcmp(ev->name, "ringtap_test"));
		}
	}
	free(hp);
	free(he);
	free(fmt);
	return l;
}

static void check_common(const struct rt_layout *l, const char *names, unsigned int size)
{
	char got[512] = "";

	for (unsigned int i = 0; i < l->n_common; i++) {
		char one[128];

		snprintf(one, sizeof(one), "%s%s@%u/%u", i ? "," : "", l->common[i].name,
			 l->common[i].offset, l->common[i].size);
		strcat(got, one);
	}
	CHECK_STR(got, names);
	CHECK_EQ(l->common_size, size);
}

static void test_variants(const char *dir)
{
	static const struct {
		const char *variant, *common;
		unsigned int size;
	} cases[] = {
#define STOCK "common_type@0/2,common_flags@2/1,common_preempt_count@3/1,common_pid@4/4"
		{ "stock", STOCK, 8 },
		{ "padded", STOCK ",common_padding@8/4", 12 },
		{ "rt", STOCK ",common_migrate_disable@8/1,common_preempt_lazy_count@9/1", 10 },
#undef STOCK
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rt_layout *l = load(dir, cases[i].variant);

		if (!l)
			continue;
		/* The page header is the ring buffer's, on every variant. */
		CHECK_EQ(l->long_size, 8);
		CHECK_EQ(l->page_commit.offset, 8);
		CHECK_EQ(l->page_data.offset, 16);
		CHECK_EQ(l->sub_buffer_size, 4096);
		check_common(l, cases[i].common, cases[i].size);
		CHECK(l->common_type == rt_layout_common(l, "common_type"));
		rt_layout_free(l);
	}
}

static const char good_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";
static const char good_event[] = "# compressed entry header\n"
				 "\ttype_len    :    5 bits\n"
				 "\ttime_delta  :   27 bits\n"
				 "\tarray       :   32 bits\n\n"
				 "\tpadding     : type == 29\n"
				 "\ttime_extend : type == 30\n"
				 "\ttime_stamp : type == 31\n"
				 "\tdata max type_len  == 28\n";

static int try_headers(const char *page, const char *event)
{
	struct rt_layout *l = NULL;
	int ret = rt_layout_new(&l, page, strlen(page), event, strlen(event), false);

	rt_layout_free(l);
	return ret;
}

static void test_bad_headers(void)
{
	char buf[1024];

	CHECK_EQ(try_headers(good_page, good_event), 0);
	/* Missing data field. */
	CHECK_EQ(try_headers("\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n", good_event),
		 -EINVAL);
	/* Truncated line, no size item. */
	CHECK_EQ(try_headers("\tfield: u64 timestamp;\toffset:0;", good_event), -EINVAL);
	/* A page whose data would start where kbuffer does not look. */
	snprintf(buf, sizeof(buf), "%s", good_page);
	*strstr(buf, "offset:16") = '\0';
	strcat(buf, "offset:24;\tsize:4072;\tsigned:1;\n");
	CHECK_EQ(try_headers(buf, good_event), -EPROTONOSUPPORT);
	/* An event header with a wider type_len than kbuffer decodes. */
	snprintf(buf, sizeof(buf), "%s", good_event);
	memcpy(strstr(buf, "5 bits"), "6", 1);
	CHECK_EQ(try_headers(good_page, buf), -EPROTONOSUPPORT);
	CHECK_EQ(try_headers(good_page, ""), -EINVAL);
	/* An absurd data size. */
	CHECK_EQ(try_headers("\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
			     "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
			     "\tfield: char data;\toffset:16;\tsize:99999999999;\tsigned:1;\n",
			     good_event),
		 -EINVAL);
}

static void test_field_line(void)
{
	struct rt_field_desc f;
	char type[64];
	const char *line = "\tfield:__data_loc char[] msg;\toffset:24;\tsize:4;\tsigned:1;";

	CHECK_EQ(rt_parse_field_line(line, line + strlen(line), type, sizeof(type), &f), 0);
	CHECK_STR(f.name, "msg");
	CHECK_STR(type, "__data_loc char[]");
	CHECK_EQ(f.offset, 24);
	CHECK_EQ(f.size, 4);
	CHECK_EQ(f.is_signed, 1);
	line = "\tfield:char tag[8];\toffset:20;\tsize:8;\tsigned:0;";
	CHECK_EQ(rt_parse_field_line(line, line + strlen(line), NULL, 0, &f), 0);
	CHECK_STR(f.name, "tag");
	line = "\tfield:int x;\toffset:;\tsize:4;";
	CHECK_EQ(rt_parse_field_line(line, line + strlen(line), NULL, 0, &f), -EINVAL);
	line = "\tfield:int x;\toffset:4;\tsize:4;\tsigned:7;";
	CHECK_EQ(rt_parse_field_line(line, line + strlen(line), NULL, 0, &f), -EINVAL);
}

/*
 * Words libtraceevent rewrites into strings (and leaks on in a field line)
 * are refused before the print format; inside it they are the kernel's text.
 */
static void test_rewritten_words(const char *dir)
{
#define COMMON "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	static const char *const formats[] = {
		"name: x\nID: 900\nformat:\n"
		COMMON
		"\tfield:unsigned LOCAL_PR_FMT char v;\toffset:8;\tsize:1;\tsigned:0;\n\n"
		"print fmt: \"\"\n",
		"name: x\nID: 901\nformat:\n"
		COMMON
		"\tfield:int STA_PR_FMT;\toffset:8;\tsize:4;\tsigned:1;\n\n"
		"print fmt: \"\"\n",
		"name: x\nID: 902\nformat:\n"
		COMMON
		"\tfield:int v;\toffset:8;\tsize:4;\tsigned:1;\n\n"
		"print fmt: LOCAL_PR_FMT \" v=%d\", REC->v\n",
	};
	struct rt_layout *l = load(dir, "stock");

	if (!l)
		return;
	CHECK_EQ(rt_layout_add_event(l, "x", formats[0], strlen(formats[0]), NULL), -EINVAL);
	CHECK_EQ(rt_layout_add_event(l, "x", formats[1], strlen(formats[1]), NULL), -EINVAL);
	CHECK_EQ(rt_layout_add_event(l, "x", formats[2], strlen(formats[2]), NULL), 0);
	rt_layout_free(l);
#undef COMMON
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]);
		return 2;
	}
	test_variants(argv[1]);
	test_bad_headers();
	test_field_line();
	test_rewritten_words(argv[1]);
	return check_exit("test-layout");
}
