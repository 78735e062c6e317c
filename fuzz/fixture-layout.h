/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/* The stock fixture's layout, loaded once per fuzzer process (RINGTAP_FIXTURE_DIR). */
#include <stdlib.h>

#include "fixture-tree.h"

/* A file of the fixture, NUL-terminated; a fuzzer without it cannot run. */
static inline char *slurp(const char *dir, const char *file, size_t *len)
{
	char *buf = tree_read(dir, file, len);

	if (!buf)
		abort();
	return buf;
}

static inline struct rt_layout *fixture_layout(void)
{
	static struct rt_layout *l;
	static const char *const events[][2] = {
		{ "ringtap_test", "ringtap_test" },
		{ "sched", "sched_switch" },
		{ "ftrace", "print" },
	};
	const char *dir = RINGTAP_FIXTURE_DIR "/stock";

	if (l)
		return l;
	if (tree_layout(dir, &l))
		abort();
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (tree_add_event(l, dir, events[i][0], events[i][1]))
			abort();
	return l;
}
