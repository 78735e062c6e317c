/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/* The stock fixture's layout, loaded once per fuzzer process (RINGTAP_FIXTURE_DIR). */
#include <stdio.h>
#include <stdlib.h>

#include "layout.h"

static char *slurp(const char *dir, const char *file, size_t *len)
{
	char path[4096];
	FILE *f;
	char *buf;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "rb");
	if (!f)
		abort();
	buf = malloc(1 << 16);
	*len = fread(buf, 1, (1 << 16) - 1, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

static struct rt_layout *fixture_layout(void)
{
	static struct rt_layout *l;
	const char *dir = RINGTAP_FIXTURE_DIR "/stock";
	static const char *const formats[][2] = {
		{ "ringtap_test", "events/ringtap_test/ringtap_test/format" },
		{ "sched", "events/sched/sched_switch/format" },
		{ "ftrace", "events/ftrace/print/format" },
	};
	size_t hl, el, fl;
	char *hp, *he, *fmt;

	if (l)
		return l;
	hp = slurp(dir, "events/header_page", &hl);
	he = slurp(dir, "events/header_event", &el);
	if (rt_layout_new(&l, hp, hl, he, el, false))
		abort();
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		fmt = slurp(dir, formats[i][1], &fl);
		if (rt_layout_add_event(l, formats[i][0], fmt, fl, NULL))
			abort();
		free(fmt);
	}
	free(hp);
	free(he);
	return l;
}
