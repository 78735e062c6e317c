// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * select and glob: what a glob names, as a table, so that a change of
 * meaning shows here before a subscriber, a certificate or the configured
 * events see it. The same function answers for all of them (glob.h).
 */
#include "check.h"
#include "select.h"

static const char *const tree[][2] = {
	{ "timer", "timer_start" },    { "sched", "sched_switch" }, { "timer", "hrtimer_start" },
	{ "sched", "sched_wakeup" },   { "sched", "sched_waking" }, { "timer", "timer_init" },
	{ "syscalls", "sys_enter_read" }, { "sched", "sched_switch" }, /* listed twice */
	{ "ringtap_test", "ringtap_test" }, { "ftrace", "print" },
};

static void make_catalogue(struct rt_catalogue *cat)
{
	*cat = (struct rt_catalogue){ 0 };
	for (size_t i = 0; i < sizeof(tree) / sizeof(tree[0]); i++)
		CHECK_EQ(rt_catalogue_add(cat, tree[i][0], tree[i][1]), 0);
	rt_catalogue_sort(cat);
}

/* The selection as "system:name,system:name", in the catalogue's order. */
static void joined(const struct rt_catalogue *cat, const struct rt_selection *sel, char *out,
		   size_t size)
{
	size_t at = 0;

	out[0] = '\0';
	for (size_t i = 0; i < sel->n && at < size; i++) {
		const struct rt_event_name *e = &cat->events[sel->events[i]];

		at += (size_t)snprintf(out + at, size - at, "%s%s:%s", i ? "," : "", e->system,
				       e->name);
	}
}

static void test_catalogue(void)
{
	struct rt_catalogue cat;

	make_catalogue(&cat);
	/* Sorted by system, then name; the duplicate sched_switch kept once. */
	CHECK_EQ(cat.n, 9);
	CHECK_STR(cat.events[0].system, "ftrace");
	CHECK_STR(cat.events[2].name, "sched_switch");
	CHECK_STR(cat.events[3].name, "sched_wakeup");
	CHECK_STR(cat.events[8].name, "timer_start");
	rt_catalogue_release(&cat);
	CHECK_EQ(cat.n, 0);
	CHECK(cat.events == NULL);
}

static void test_glob_table(void)
{
	static const struct {
		const char *glob, *system, *name;
		bool match;
	} cases[] = {
		{ "sched:sched_switch", "sched", "sched_switch", true },
		{ "sched:sched_switch", "sched", "sched_switches", false },
		{ "sched:*", "sched", "sched_waking", true },
		{ "sched:*", "schedx", "sched_waking", false },
		{ "*:*", "anything", "at_all", true },
		{ "*", "anything", "at_all", true },
		/* A bare glob is an event name in every system, never a system. */
		{ "sched", "sched", "sched_switch", false },
		{ "timer*", "timer", "timer_start", true },
		{ "timer*", "timer", "hrtimer_start", false },
		{ "*timer*", "timer", "hrtimer_start", true },
		{ "print", "ftrace", "print", true },
		{ "s*:*_switch", "sched", "sched_switch", true },
		{ "sched:sched_?witch", "sched", "sched_switch", true },
		{ "sched:sched_wak[ei]*", "sched", "sched_wakeup", true },
		{ "sched:sched_wak[ei]*", "sched", "sched_waking", true },
		{ "sched:sched_wak[!e]*", "sched", "sched_wakeup", false },
		/* Empty sides match only empty names. */
		{ ":", "sched", "sched_switch", false },
		{ "sched:", "sched", "sched_switch", false },
		{ ":sched_switch", "sched", "sched_switch", false },
		/* Only the first ':' splits; the rest belongs to the name. */
		{ "a:b:c", "a", "b:c", true },
		{ "a:b:c", "a", "b", false },
		/* Case matters, as in tracefs. */
		{ "SCHED:*", "sched", "sched_switch", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool got = rt_glob_match(cases[i].glob, cases[i].system, cases[i].name);

		if (got != cases[i].match)
			fprintf(stderr, "glob '%s' against %s:%s: %d, want %d\n", cases[i].glob,
				cases[i].system, cases[i].name, got, cases[i].match);
		CHECK(got == cases[i].match);
	}
}

static void test_glob_long_system(void)
{
	char glob[600];

	/* A system side longer than any system name matches nothing, even '*'s. */
	memset(glob, '*', 300);
	strcpy(glob + 300, ":*");
	CHECK(!rt_glob_match(glob, "sched", "sched_switch"));
	memset(glob, '*', 255);
	strcpy(glob + 255, ":*");
	CHECK(rt_glob_match(glob, "sched", "sched_switch"));
}

static const char *const only_sched[] = { "sched:*", NULL };
static const char *const everything[] = { "*:*", NULL };

static void test_select_table(void)
{
	static const struct {
		const char *globs[4];
		const char *const *allowed;
		unsigned int max_events;
		int ret;
		const char *want; /* the events, or the reason */
	} cases[] = {
		{ { "sched:sched_switch" }, NULL, 0, 0, "sched:sched_switch" },
		{ { "sched:*" }, NULL, 0, 0, "sched:sched_switch,sched:sched_wakeup,sched:sched_waking" },
		{ { "timer*" }, NULL, 0, 0, "timer:timer_init,timer:timer_start" },
		{ { "*timer*" },
		  NULL,
		  0,
		  0,
		  "timer:hrtimer_start,timer:timer_init,timer:timer_start" },
		/* Overlapping globs: each event once, in the catalogue's order. */
		{ { "timer:timer_start", "sched:sched_switch", "timer*" },
		  NULL,
		  0,
		  0,
		  "sched:sched_switch,timer:timer_init,timer:timer_start" },
		{ { "*:*" },
		  NULL,
		  0,
		  0,
		  "ftrace:print,ringtap_test:ringtap_test,sched:sched_switch,sched:sched_wakeup,"
		  "sched:sched_waking,syscalls:sys_enter_read,timer:hrtimer_start,"
		  "timer:timer_init,timer:timer_start" },
		/* A glob that names nothing is refused and named, even beside good ones. */
		{ { "sched:*", "irq:*" }, NULL, 0, -ENOENT, "irq:*" },
		{ { "sched" }, NULL, 0, -ENOENT, "sched" },
		/* max_events bounds the globs and what they match. */
		{ { "sched:*" }, NULL, 3, 0, "sched:sched_switch,sched:sched_wakeup,sched:sched_waking" },
		{ { "sched:*" }, NULL, 2, -E2BIG, NULL },
		{ { "a", "b", "c" }, NULL, 2, -E2BIG, NULL },
		/* A certificate's globs: the request must stay inside them, wildcards too. */
		{ { "sched:*" }, only_sched, 0, 0,
		  "sched:sched_switch,sched:sched_wakeup,sched:sched_waking" },
		{ { "*:*" }, only_sched, 0, -EACCES, "*:*" },
		{ { "sched_switch" }, only_sched, 0, -EACCES,
		  "sched_switch" },
		{ { "timer:*" }, only_sched, 0, -EACCES, "timer:*" },
		{ { "sched:sched_switch" }, everything, 0, 0,
		  "sched:sched_switch" },
	};
	struct rt_catalogue cat;

	make_catalogue(&cat);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rt_selection sel = { (size_t *)1, 99 };
		struct rt_why why = { "" };
		char got[512];
		size_t n = 0;
		int ret;

		while (n < 4 && cases[i].globs[n])
			n++;
		ret = rt_select_events(&cat, cases[i].globs, n, cases[i].allowed,
				       cases[i].max_events, &sel, &why);
		if (ret != cases[i].ret)
			fprintf(stderr, "case %zu ('%s'): %d (%s), want %d\n", i, cases[i].globs[0],
				ret, why.text, cases[i].ret);
		CHECK_EQ(ret, cases[i].ret);
		if (ret) {
			/* A refusal selects nothing. */
			CHECK(sel.events == NULL && sel.n == 0);
			if (cases[i].want)
				CHECK_STR(why.text, cases[i].want);
			else
				CHECK(strstr(why.text, "max_events") != NULL);
			continue;
		}
		joined(&cat, &sel, got, sizeof(got));
		CHECK_STR(got, cases[i].want);
		rt_selection_release(&sel);
	}
	rt_catalogue_release(&cat);
}

/* A subscriber's latency bound: any the daemon's own setting may take, 0 for "the daemon's". */
static void test_latency_table(void)
{
	static const struct {
		bool has;
		uint32_t asked;
		int ret;
		unsigned int granted;
	} cases[] = {
		{ false, 0, 0, 0 },		/* none asked: the daemon's, whatever a reload makes it */
		{ false, 5, 0, 0 },		/* a value without its presence bit is not asked */
		{ true, 10, 0, 10 },
		{ true, 100, 0, 100 },
		{ true, 1000, 0, 1000 },
		{ true, 60000, 0, 60000 },
		{ true, 0, -EINVAL, 77 },
		{ true, 9, -EINVAL, 77 },
		{ true, 60001, -EINVAL, 77 },
		{ true, UINT32_MAX, -EINVAL, 77 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rt_why why = { "" };
		unsigned int granted = 77;

		CHECK_EQ(rt_select_latency(cases[i].has, cases[i].asked, &granted, &why),
			 cases[i].ret);
		CHECK_EQ(granted, cases[i].granted);
		if (cases[i].ret) {
			char want[64];

			snprintf(want, sizeof(want), "max_latency_ms %u is outside 10..60000",
				 cases[i].asked);
			CHECK_STR(why.text, want);
		}
	}
}

int main(void)
{
	test_catalogue();
	test_glob_table();
	test_glob_long_system();
	test_select_table();
	test_latency_table();
	return check_exit("test-select");
}
