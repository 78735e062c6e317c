/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * filter: the kernel's event filter language, parsed and evaluated here
 * exactly as Debian 6.1's kernel/trace/trace_events_filter.c does.
 *
 * A subscriber's filter may also be written into the kernel's filter files
 * (daemon/selection.c decides, selection-edge.c writes). Both must keep the
 * same records, or a subscriber's records would depend on who else is
 * subscribed; so this module follows the kernel rule for rule, quirks
 * included, rather than libtraceevent's different dialect:
 *
 *   expr  := and ("||" and)*
 *   and   := unary ("&&" unary)*
 *   unary := "!" unary | "(" expr ")" | FIELD OP VALUE
 *   OP    := "~" | "==" | "!=" | "<" | "<=" | ">" | ">=" | "&"
 *   VALUE := number | 'string' | "string"
 *
 * - FIELD is looked up as the kernel does: the event's own fields, then CPU,
 *   cpu and common_cpu (the CPU that wrote the record), then the common
 *   fields. COMM/comm (the running task's name) and char pointers are
 *   refused: a record does not carry them.
 * - A number is read like kstrtoull/kstrtoll with base 0 (0x hex, a leading
 *   0 for octal); "-" only for signed fields. It is cut to the field's size;
 *   == and != compare the bits, the others by the field's signedness, and
 *   "&" holds when any bit is set. A number field must be 1, 2, 4 or 8 bytes.
 * - Strings (char arrays, __data_loc and __rel_loc char[]) take ==, != and
 *   ~. "~" takes a glob (* ? [...] \), "!" at its start inverts it, and the
 *   kernel's shortcuts for a leading and/or trailing "*" are kept, with
 *   their edge cases (a leading "*" compares the end of a char array
 *   without its last byte).
 *
 * ringtapd's own limits: 512 characters, 64 comparisons, 16 levels of
 * nesting. Pure: no I/O, no logging; every read of a record is bounded.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "why.h"

struct tep_event;
struct rt_filter;

/*
 * One filter for several events: each event must have the fields it names.
 * 0 and *out, or -EINVAL with the reason (naming the event), or -ENOMEM.
 */
int rt_filter_compile(const char *expr, struct tep_event *const *events, size_t n_events,
		      struct rt_filter **out, struct rt_why *why);

/*
 * Whether the record (event id @type, its bytes from the common header on,
 * written on @cpu) passes. An event the filter was not compiled for passes:
 * the subscription's event selection is checked elsewhere.
 */
bool rt_filter_match(const struct rt_filter *filter, unsigned int type, const uint8_t *data,
		     size_t len, unsigned int cpu);

void rt_filter_free(struct rt_filter *filter);

/* rt_filter_compile() for one event, for checking a filter's text. */
int rt_filter_check(const char *expr, struct tep_event *event, struct rt_why *why);
