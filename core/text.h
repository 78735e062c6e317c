/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * text: a decoded record as one line of text, typed from its format:
 *   TIMESTAMP [CPU] SYSTEM:NAME pid=PID FIELD=VALUE ...
 * The same event gives the same line on every kernel layout, because it is
 * built from field names and values, never from offsets. Pure.
 */
#include "decode.h"

struct trace_seq;

enum rt_text_flags {
	RT_TEXT_COMMON = 1 << 0,	/* append every common field the kernel publishes */
	RT_TEXT_NO_TIME = 1 << 1,	/* leave out the timestamp (golden comparisons) */
};

void rt_record_text(struct trace_seq *s, const struct rt_record *record,
		    const struct rt_layout *layout, unsigned int flags);
