/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * filter: checks a subscription's filter before libtraceevent parses it.
 *
 * libtraceevent 1.7.1's filter parser crashes on some malformed input (a
 * comparison missing its value, found here) and turns an unknown field into
 * a silent FALSE. A filter from a client is untrusted: it must be proven
 * well-formed, with fields the event has, before tep sees it. The accepted
 * language is this subset of the kernel's filter syntax:
 *
 *   expr  := and ("||" and)*
 *   and   := unary ("&&" unary)*
 *   unary := "(" expr ")" | FIELD OP VALUE
 *   OP    := "==" | "!=" | "<" | "<=" | ">" | ">=" | "&"
 *   VALUE := integer (decimal or 0x hex) | "double-quoted string"
 *
 * "!" and negative numbers are left out: tep 1.7.1 leaks memory parsing them;
 * only printable ASCII (no tab) is accepted: its tokenizer crashes on other
 * bytes and leaks on a tab in a string; ',' and ':' are refused, as tep
 * splits its "event,event:filter" argument on them even inside a string,
 * and '\\', on which it crashes. At most 512 characters.
 *
 * FIELD is one of the event's fields or common fields (COMM and CPU, which
 * tep also knows, are not accepted). A string field takes == or != and a
 * quoted string; any other field takes a number. At most 64 comparisons, 16 levels deep.
 * Pure.
 */
#include <stddef.h>

#include "why.h"

struct tep_event;

/* 0, or -EINVAL with the reason. */
int rt_filter_check(const char *expr, const struct tep_event *event, struct rt_why *why);
