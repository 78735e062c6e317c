/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * format: what a subscriber received (a decoded Record with its Schema, a
 * Lost, a CpuState) as one line of text or JSON, the lines of `ringtap
 * stream` and of ringtapd --stdout:
 *   SEC.NSEC [CPU] SYSTEM:NAME pid=PID FIELD=VALUE ... [| COMMON=VALUE ...]
 *   # cpu N: lost M events (kernel|queue|malformed)
 * Built from the Schema's names and types and the Welcome's layout (long
 * size, byte order, common field names), never from offsets. Each call is
 * like snprintf(): the length of the whole line, of which at most size - 1
 * characters and a NUL went into buf. Pure.
 */
#include <stddef.h>

#include "ringtap.pb-c.h"

struct rt_record_view;

/* The values of ringtap.h's RINGTAP_FORMAT_*. */
enum rt_format_flags {
	RT_FORMAT_NO_TIME = 1 << 0,	/* leave out the timestamp */
	RT_FORMAT_JSON = 1 << 1,	/* one JSON object instead of text */
};

/*
 * A record read in place (view.h). layout NULL: common fields named
 * common0.., arrays in the host's byte order.
 */
int rt_format_view(char *buf, size_t size, const Ringtap__Layout *layout, unsigned int cpu,
		   const struct rt_record_view *record, const Ringtap__Schema *schema,
		   unsigned int flags);
/* The same for an unpacked Record. */
int rt_format_record(char *buf, size_t size, const Ringtap__Layout *layout, unsigned int cpu,
		     const Ringtap__Record *record, const Ringtap__Schema *schema,
		     unsigned int flags);
int rt_format_lost(char *buf, size_t size, const Ringtap__Lost *lost, unsigned int flags);
int rt_format_cpu_state(char *buf, size_t size, const Ringtap__CpuState *state,
			unsigned int flags);
