// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Subscription filters from untrusted text: whatever filter.c accepts must
 * then parse in libtraceevent without error or crash, and match records.
 */
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "filter.h"
#include "fixture-layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rt_layout *l = fixture_layout();
	struct tep_event *ev = tep_find_event_by_name(l->tep, "ringtap_test", "ringtap_test");
	char *expr = malloc(size + 1), *one;
	struct rt_why why;
	uint8_t rec[64] = { 0 };

	memcpy(expr, data, size);
	expr[size] = '\0';
	if (strlen(expr) == size && !rt_filter_check(expr, ev, &why)) {
		struct tep_event_filter *f = tep_filter_alloc(l->tep);
		struct tep_record r = { .data = rec, .size = sizeof(rec) };

		one = malloc(size + 64);
		snprintf(one, size + 64, "ringtap_test/ringtap_test:%s", expr);
		if (tep_filter_add_filter_str(f, one))
			abort();	/* filter.c let through what tep refuses */
		memcpy(rec, &ev->id, 2);
		tep_filter_match(f, &r);
		tep_filter_free(f);
		free(one);
	}
	free(expr);
	return 0;
}
