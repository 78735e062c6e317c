// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * acl: the clients file as ringtapd.conf(5) describes it, and the one
 * property that matters: a request is allowed only when everything it can
 * match is covered, whatever wildcards it uses.
 */
#include "acl.h"
#include "check.h"

static struct rt_acl *parse_ok(const char *text)
{
	struct rt_acl *acl = NULL;
	unsigned int line = 0;
	struct rt_why why = { "" };

	CHECK_EQ(rt_acl_parse(&acl, text, strlen(text), &line, &why), 0);
	return acl;
}

static void test_parse(void)
{
	struct rt_acl *acl = parse_ok("# fleet\n"
				      "collector   sched:*, irq:* # comment\n"
				      "\n"
				      "\"on-call laptop\"\tringtap_test:ringtap_test\n"
				      "any *\n");
	const char *const *g;

	g = rt_acl_lookup(acl, "collector");
	CHECK(g != NULL);
	if (g) {
		CHECK_STR(g[0], "sched:*");
		CHECK_STR(g[1], "irq:*");
		CHECK(g[2] == NULL);
	}
	g = rt_acl_lookup(acl, "on-call laptop");
	CHECK(g && !strcmp(g[0], "ringtap_test:ringtap_test") && !g[1]);
	CHECK(rt_acl_lookup(acl, "collecto") == NULL);
	CHECK(rt_acl_lookup(acl, "") == NULL);
	rt_acl_free(acl);
}

static void test_errors(void)
{
	static const struct {
		const char *text;
		unsigned int line;
		const char *why;
	} bad[] = {
		{ "a sched:*\nb\n", 2, "a name without event globs" },
		{ "a sched:sched_?witch\n", 1, "an allowed glob may use '*' only" },
		{ "a sched:[ab]*\n", 1, "an allowed glob may use '*' only" },
		{ "a x:y:z\n", 1, "more than one ':' in a glob" },
		{ "a x:y\n# c\na z:w\n", 3, "a name listed twice" },
		{ "\"a x:y\n", 1, "unterminated quoted name" },
		{ "\"\" x:y\n", 1, "empty name" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rt_acl *acl = (struct rt_acl *)1;
		unsigned int line = 0;
		struct rt_why why = { "" };

		CHECK_EQ(rt_acl_parse(&acl, bad[i].text, strlen(bad[i].text), &line, &why), -EINVAL);
		CHECK(acl == NULL);
		CHECK_EQ(line, bad[i].line);
		CHECK_STR(why.text, bad[i].why);
	}
	{
		struct rt_acl *acl;
		unsigned int line;
		struct rt_why why = { "" };

		CHECK_EQ(rt_acl_parse(&acl, "a x:y\0b z:w\n", 12, &line, &why), -EINVAL);
		CHECK_STR(why.text, "a NUL byte");
	}
}

static void test_allows(void)
{
	const char *const sched[] = { "sched:*", "ringtap_test:ringtap_test", NULL };
	const char *const by_name[] = { "sched_switch", NULL };
	const char *const all[] = { "*", NULL };

	/* Covered. */
	CHECK(rt_acl_allows_glob(sched, "sched:*"));
	CHECK(rt_acl_allows_glob(sched, "sched:sched_switch"));
	CHECK(rt_acl_allows_glob(sched, "sched:sched_s*"));
	CHECK(rt_acl_allows_glob(sched, "sched:sched_?witch"));
	CHECK(rt_acl_allows_glob(sched, "ringtap_test:ringtap_test"));
	CHECK(rt_acl_allows_event(sched, "sched", "sched_wakeup"));
	/* Not covered: another system, a wider glob, a name in any system. */
	CHECK(!rt_acl_allows_glob(sched, "irq:*"));
	CHECK(!rt_acl_allows_glob(sched, "*:*"));
	CHECK(!rt_acl_allows_glob(sched, "s*:*"));
	CHECK(!rt_acl_allows_glob(sched, "sched_switch"));
	CHECK(!rt_acl_allows_glob(sched, "ringtap_test:*"));
	CHECK(!rt_acl_allows_glob(sched, "ringtap_test:ringtap_tes?"));
	CHECK(!rt_acl_allows_event(sched, "irq", "irq_handler_entry"));
	/* A bracket could reach past the allowed literals: only "everything" covers it. */
	CHECK(!rt_acl_allows_glob(sched, "sched:[a-z]*"));
	CHECK(!rt_acl_allows_glob(sched, "sched:\\*"));
	CHECK(rt_acl_allows_glob(all, "sched:[a-z]*"));
	CHECK(rt_acl_allows_glob(all, "*"));
	/* An allowed name without a system: that event in every system, nothing else. */
	CHECK(rt_acl_allows_glob(by_name, "sched:sched_switch"));
	CHECK(rt_acl_allows_glob(by_name, "sched_switch"));
	CHECK(rt_acl_allows_glob(by_name, "*:sched_switch"));
	CHECK(!rt_acl_allows_glob(by_name, "sched:*"));
	/* Nothing allowed: nothing passes. */
	CHECK(!rt_acl_allows_glob(NULL, "sched:sched_switch"));
}

int main(void)
{
	test_parse();
	test_errors();
	test_allows();
	return check_exit("test-acl");
}
