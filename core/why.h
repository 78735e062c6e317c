/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * why: the one way a reason comes back. A function that can fail for a
 * reason a person should read takes a struct rt_why * last, fills it with
 * rt_why_set() and returns -errno; the edge that called it (main, the
 * server, a command) logs it or sends it to the client, once. NULL means
 * the caller does not want the text. Objects with a sticky error (the wire
 * reader, a client, a TLS connection) keep theirs and say it on request.
 */
#include <stddef.h>

struct rt_why {
	char text[256];
};

/* Fills why (when not NULL) and returns err, so that `return rt_why_set(...)` reads. */
int rt_why_set(struct rt_why *why, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
