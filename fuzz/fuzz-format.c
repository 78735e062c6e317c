// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Event format texts as untrusted input (a capture's Schemas, a tree given
 * with -t), through layout.c and libtraceevent's format parser.
 */
#include <stdlib.h>
#include <string.h>

#include "fixture-layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static size_t hl, el;
	static char *hp, *he;
	struct rt_layout *l;

	if (!hp) {
		hp = slurp(RINGTAP_FIXTURE_DIR "/stock", "events/header_page", &hl);
		he = slurp(RINGTAP_FIXTURE_DIR "/stock", "events/header_event", &el);
	}
	if (rt_layout_new(&l, hp, hl, he, el, false))
		abort();
	rt_layout_add_event(l, "fuzz", (const char *)data, size, NULL);
	rt_layout_free(l);
	return 0;
}
