/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * log: one line per event on stderr. Under systemd (JOURNAL_STREAM set) each
 * line carries its syslog priority as "<N>", which journald files as the
 * line's priority. Only the edges (main, server) log.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <syslog.h>

__attribute__((format(printf, 2, 3))) static inline void rt_log(int priority, const char *fmt, ...)
{
	static int journal = -1;
	va_list ap;

	if (journal < 0)
		journal = getenv("JOURNAL_STREAM") != NULL;
	if (journal)
		fprintf(stderr, "<%d>", priority);
	else
		fputs("ringtapd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
