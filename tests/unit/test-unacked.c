// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ringtap collect's set of written, unconfirmed stream sequences: kept
 * sorted and unique whatever the order they come in, pruned at the ack
 * floor, written and read back as its file, and a file that is not one
 * (a stray byte, a cut last line, a 0, a number past 64 bits) refused.
 */
#include "check.h"
#include "unacked.h"

static void test_set(void)
{
	struct rt_unacked u = { 0 };
	static const uint64_t in[] = { 40, 7, 12, 40, 3, 1000000000000ull, 12 };

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		CHECK_EQ(rt_unacked_add(&u, in[i]), 0);
	CHECK_EQ(u.n, 5);
	CHECK_EQ(u.seqs[0], 3);
	CHECK_EQ(u.seqs[4], 1000000000000ull);
	CHECK(rt_unacked_has(&u, 12));
	CHECK(!rt_unacked_has(&u, 13));
	rt_unacked_remove(&u, 12);
	rt_unacked_remove(&u, 13);
	CHECK(!rt_unacked_has(&u, 12));
	CHECK_EQ(u.n, 4);
	rt_unacked_prune(&u, 7);
	CHECK_EQ(u.n, 2);
	CHECK_EQ(u.seqs[0], 40);
	rt_unacked_prune(&u, 0);
	CHECK_EQ(u.n, 2);
	rt_unacked_prune(&u, UINT64_MAX);
	CHECK_EQ(u.n, 0);
	rt_unacked_release(&u);
}

/* Many more than the first allocation, in descending order: each memmove is exercised. */
static void test_growth(void)
{
	struct rt_unacked u = { 0 };
	bool sorted = true;

	for (uint64_t s = 5000; s >= 1; s--)
		CHECK_EQ(rt_unacked_add(&u, s * 3), 0);
	CHECK_EQ(u.n, 5000);
	for (size_t i = 1; i < u.n; i++)
		sorted &= u.seqs[i - 1] < u.seqs[i];
	CHECK(sorted);
	CHECK(rt_unacked_has(&u, 15000));
	CHECK(!rt_unacked_has(&u, 14999));
	rt_unacked_prune(&u, 7500);
	CHECK_EQ(u.n, 2500);
	CHECK_EQ(u.seqs[0], 7503);
	rt_unacked_release(&u);
}

static void test_file(void)
{
	struct rt_unacked u = { 0 }, back = { 0 };
	char *text = NULL;
	size_t len = 0;

	CHECK_EQ(rt_unacked_format(&u, &text, &len), 0);
	CHECK_EQ(len, 0);
	CHECK_EQ(rt_unacked_parse(&back, text, len), 0);
	CHECK_EQ(back.n, 0);
	free(text);
	rt_unacked_add(&u, 18446744073709551615ull);
	rt_unacked_add(&u, 1);
	rt_unacked_add(&u, 894);
	CHECK_EQ(rt_unacked_format(&u, &text, &len), 0);
	CHECK_STR(text, "1\n894\n18446744073709551615\n");
	CHECK_EQ(len, strlen(text));
	CHECK_EQ(rt_unacked_parse(&back, text, len), 0);
	CHECK_EQ(back.n, 3);
	CHECK_EQ(back.seqs[1], 894);
	CHECK(back.seqs[2] == 18446744073709551615ull);
	free(text);
	rt_unacked_release(&back);
	rt_unacked_release(&u);
}

static void test_refused(void)
{
	static const char *const bad[] = {
		"12\n13", "12\nx\n", "0\n", "\n", "12 \n", "-3\n", "18446744073709551616\n",
		"99999999999999999999\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rt_unacked u = { 0 };

		CHECK_EQ(rt_unacked_parse(&u, bad[i], strlen(bad[i])), -EBADMSG);
		rt_unacked_release(&u);
	}
}

int main(void)
{
	test_set();
	test_growth();
	test_file();
	test_refused();
	return check_exit("test-unacked");
}
