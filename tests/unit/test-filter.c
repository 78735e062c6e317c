// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * filter: well-formed filters on the event's fields pass; every malformed one
 * is refused with a reason, including those that crash libtraceevent 1.7.1's
 * parser ("seq <") or that it would turn into a silent FALSE (unknown field).
 * What passes is then parsed by tep without error.
 */
#include "fixture.h"
#include "filter.h"

static const char *const events[] = { "ringtap_test:ringtap_test", NULL };

int main(int argc, char **argv)
{
	static const char *const good[] = {
		"seq < 10",
		"seq < 10 && cpu == 1",
		"(seq >= 0x10 || cpu != 0) && (seq != 3)",
		"msg == \"cpu0 seq 0 \"",
		"common_pid > 1",
		"seq & 1",
		"  seq<=5||seq>=7  ",
	};
	static const char *const bad[] = {
		"seq <",		/* crashes tep 1.7.1 */
		"nosuch > 1",		/* tep: silently FALSE */
		"seq < 10 &&",
		"(seq < 10",
		"seq < 10)",
		"seq << 10",
		"seq < abc",
		"seq < \"unterminated",
		"&& seq < 1",
		"",
		"seq < 1 seq > 2",
		"COMM == \"sh\"",
		"((((((((((((((((((seq < 1))))))))))))))))))",
		"msg == \"cpu0 \xc2\xc2\"",	/* crashes tep 1.7.1 (found by fuzz-filter) */
		"seq < 1\n",
		"msg == \"a\tb\"",	/* tep leaks on it: found by fuzz-filter */
		"msg == \"a,b\"",	/* tep mis-splits it: found by fuzz-filter */
		"msg == \"a:b\"",
		"msg == \"a\\\\b\"",	/* tep crashes on it: found by fuzz-filter */
		"tag <= \"cp\"",	/* tep refuses: found by fuzz-filter */
		"msg == 3",
		"seq == \"3\"",
		"!(seq == 3)",		/* tep 1.7.1 leaks on these two */
		"common_pid > -1",
	};
	struct fixture fx;
	struct tep_event *ev;
	struct rt_why why = { "" };

	if (argc != 2 || fixture_open(&fx, argv[1], "stock", events))
		return 1;
	ev = tep_find_event_by_name(fx.layout->tep, "ringtap_test", "ringtap_test");
	CHECK(ev != NULL);
	for (size_t i = 0; ev && i < sizeof(good) / sizeof(good[0]); i++) {
		struct tep_event_filter *f = tep_filter_alloc(fx.layout->tep);
		char one[256];

		CHECK_EQ(rt_filter_check(good[i], ev, &why), 0);
		if (why.text[0])
			fprintf(stderr, "%s: %s\n", good[i], why.text);
		snprintf(one, sizeof(one), "ringtap_test/ringtap_test:%s", good[i]);
		CHECK_EQ(tep_filter_add_filter_str(f, one), 0);
		tep_filter_free(f);
	}
	for (size_t i = 0; ev && i < sizeof(bad) / sizeof(bad[0]); i++) {
		why.text[0] = '\0';
		CHECK_EQ(rt_filter_check(bad[i], ev, &why), -EINVAL);
		CHECK(why.text[0] != '\0');
	}
	CHECK_EQ(rt_filter_check("nosuch > 1", ev, &why), -EINVAL);
	CHECK_STR(why.text, "ringtap_test:ringtap_test has no field 'nosuch'");
	fixture_close(&fx);
	return check_exit("test-filter");
}
