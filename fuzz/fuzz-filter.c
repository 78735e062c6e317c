// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Subscription filters from untrusted text: compiled for the test event,
 * then matched against records whose string locations point inside, past
 * and far past their end. Any crash, leak or undefined behaviour is a bug.
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
	struct tep_format_field *msg = tep_find_field(ev, "msg");
	char *expr = malloc(size + 1);
	struct rt_filter *f = NULL;
	struct rt_why why;
	uint8_t rec[64];

	memcpy(expr, data, size);
	expr[size] = '\0';
	if (strlen(expr) == size && !rt_filter_compile(expr, &ev, 1, &f, &why)) {
		static const uint32_t locs[] = { 0, 40u | 8u << 16, 60u | 8u << 16, 0xffffffffu };

		for (size_t i = 0; i < sizeof(locs) / sizeof(locs[0]); i++) {
			memset(rec, 'a' + (int)i, sizeof(rec));
			memcpy(rec, &ev->id, 2);
			memcpy(rec + msg->offset, &locs[i], sizeof(locs[i]));
			rt_filter_match(f, (unsigned int)ev->id, rec, sizeof(rec), (unsigned int)i);
			rt_filter_match(f, (unsigned int)ev->id, rec, (size_t)msg->offset + 2, 0);
		}
		rt_filter_free(f);
	}
	free(expr);
	return 0;
}
