// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * selection: what the kernel is asked on behalf of every subscriber at once
 * (daemon/selection.c), decided on the stock tree's layout with no tracefs:
 * which events stay on, each one's filter, the pid list, and what a
 * subscriber leaving switches off.
 */
#include "fixture.h"
#include "selection.h"
#include "subscriber.h"

/* The events the instance has on, in its order; the last is not in the layout. */
static const char *const on[] = {
	"ringtap_test:ringtap_test", "sched:sched_switch", "ftrace:print", "nosuch:event",
};
#define N_ON (sizeof(on) / sizeof(on[0]))
enum { TEST, SWITCH, PRINT, UNKNOWN };

static unsigned int event_id(const struct fixture *fx, const char *system, const char *name)
{
	struct tep_event *ev = tep_find_event_by_name(fx->layout->tep, system, name);

	CHECK(ev != NULL);
	return ev ? (unsigned int)ev->id : 0;
}

struct sub {
	struct rt_subscriber s;
	struct selection_sub in;
};

static void sub_init(struct sub *x, const unsigned int *ids, size_t n_ids, const int32_t *pids,
		     size_t n_pids, const char *filter, bool raw)
{
	CHECK_EQ(rt_subscriber_init(&x->s, 2, 1 << 20), 0);
	for (size_t i = 0; i < n_ids; i++)
		CHECK_EQ(rt_subscriber_select_event(&x->s, ids[i]), 0);
	CHECK_EQ(rt_subscriber_select_pids(&x->s, pids, n_pids), 0);
	x->in = (struct selection_sub){ &x->s, filter, raw, true };
}

/* Plans for subs, checks the verdicts, filters (NULL: none) and pid list (NULL: every pid). */
static void expect(const struct fixture *fx, const bool *pinned, const struct selection_sub *subs,
		   size_t n, bool user_space, const enum selection_verdict *verdict,
		   const char *const *filter, const char *pids)
{
	struct selection_plan plan;

	CHECK_EQ(selection_plan(fx->layout, on, pinned, N_ON, subs, n, user_space, &plan), 0);
	CHECK_EQ(plan.n_events, N_ON);
	for (size_t i = 0; i < N_ON && plan.verdict; i++) {
		CHECK_EQ(plan.verdict[i], verdict[i]);
		if (filter[i] || plan.filter[i])
			CHECK_STR(plan.filter[i], filter[i]);
	}
	if (pids || plan.pids)
		CHECK_STR(plan.pids, pids);
	selection_plan_release(&plan);
}

static void test_plans(struct fixture *fx)
{
	const unsigned int test = event_id(fx, "ringtap_test", "ringtap_test");
	const unsigned int sw = event_id(fx, "sched", "sched_switch");
	const unsigned int a_ids[] = { test }, b_ids[] = { test, sw };
	const int32_t a_pids[] = { 42, 7 }, b_pids[] = { 9, 7 };
	const bool none_pinned[N_ON] = { false }, test_pinned[N_ON] = { true };
	struct sub a, b, raw;
	struct selection_sub subs[3];

	sub_init(&a, a_ids, 1, a_pids, 2, "value > 3", false);
	sub_init(&b, b_ids, 2, b_pids, 2, "prev_pid == 1", false);
	sub_init(&raw, a_ids, 1, NULL, 0, NULL, true);

	/* Two decoded subscribers: each event the OR of its subscribers' filters, pids' union. */
	subs[0] = a.in;
	subs[1] = b.in;
	expect(fx, none_pinned, subs, 2, false,
	       (const enum selection_verdict[]){ SELECTION_ON, SELECTION_ON, SELECTION_OFF,
						 SELECTION_KEEP },
	       (const char *const[]){ "(value > 3) || (prev_pid == 1)", "(prev_pid == 1)", NULL,
				      NULL },
	       "7 9 42");

	/* kernel_selection = 0: the same events, nothing filtered in the kernel. */
	expect(fx, none_pinned, subs, 2, true,
	       (const enum selection_verdict[]){ SELECTION_ON, SELECTION_ON, SELECTION_OFF,
						 SELECTION_KEEP },
	       (const char *const[]){ NULL, NULL, NULL, NULL }, NULL);

	/*
	 * A RAW subscriber takes pages whole: its event gets no filter, the
	 * instance no pid list. Still in its handshake, it asks no pids yet.
	 */
	subs[2] = raw.in;
	expect(fx, none_pinned, subs, 3, false,
	       (const enum selection_verdict[]){ SELECTION_ON, SELECTION_ON, SELECTION_OFF,
						 SELECTION_KEEP },
	       (const char *const[]){ NULL, "(prev_pid == 1)", NULL, NULL }, NULL);
	subs[2].streaming = false;
	expect(fx, none_pinned, subs, 3, false,
	       (const enum selection_verdict[]){ SELECTION_ON, SELECTION_ON, SELECTION_OFF,
						 SELECTION_KEEP },
	       (const char *const[]){ NULL, "(prev_pid == 1)", NULL, NULL }, "7 9 42");

	/* b leaves: sched_switch goes off, ringtap_test keeps a's filter and pids only. */
	expect(fx, none_pinned, subs, 1, false,
	       (const enum selection_verdict[]){ SELECTION_ON, SELECTION_OFF, SELECTION_OFF,
						 SELECTION_KEEP },
	       (const char *const[]){ "(value > 3)", NULL, NULL, NULL }, "7 42");

	/* An event the settings enabled (NATS takes every record): no filter, no pid list. */
	expect(fx, test_pinned, subs, 2, false,
	       (const enum selection_verdict[]){ SELECTION_ON, SELECTION_ON, SELECTION_OFF,
						 SELECTION_KEEP },
	       (const char *const[]){ NULL, "(prev_pid == 1)", NULL, NULL }, NULL);

	/* Everyone gone: all off but the settings' own and what the layout does not know. */
	expect(fx, test_pinned, subs, 0, false,
	       (const enum selection_verdict[]){ SELECTION_KEEP, SELECTION_OFF, SELECTION_OFF,
						 SELECTION_KEEP },
	       (const char *const[]){ NULL, NULL, NULL, NULL }, NULL);

	/* One subscriber of the event without a filter: the kernel may drop none of it. */
	subs[1].filter = NULL;
	expect(fx, none_pinned, subs, 2, false,
	       (const enum selection_verdict[]){ SELECTION_ON, SELECTION_ON, SELECTION_OFF,
						 SELECTION_KEEP },
	       (const char *const[]){ NULL, NULL, NULL, NULL }, "7 9 42");

	rt_subscriber_release(&a.s);
	rt_subscriber_release(&b.s);
	rt_subscriber_release(&raw.s);
}

/* A subscriber that selects every pid leaves none for the kernel to restrict to. */
static void test_pids(struct fixture *fx)
{
	const unsigned int ids[] = { event_id(fx, "ringtap_test", "ringtap_test") };
	const int32_t pids[] = { 5 };
	const bool pinned[N_ON] = { false };
	struct sub some, every;
	struct selection_sub subs[2];
	char *text;

	sub_init(&some, ids, 1, pids, 1, NULL, false);
	sub_init(&every, ids, 1, NULL, 0, NULL, false);
	subs[0] = some.in;
	subs[1] = every.in;
	text = selection_kernel_pids(pinned, N_ON, subs, 1);
	CHECK_STR(text, "5");
	free(text);
	CHECK(selection_kernel_pids(pinned, N_ON, subs, 2) == NULL);
	rt_subscriber_release(&some.s);
	rt_subscriber_release(&every.s);
}

int main(int argc, char **argv)
{
	static const char *const all[] = { "*:*", NULL };
	struct fixture fx;

	if (argc < 2 || fixture_open(&fx, argv[1], "stock", all))
		return 1;
	test_plans(&fx);
	test_pids(&fx);
	fixture_close(&fx);
	return check_exit("test-selection");
}
