/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * log: one line per event on stderr. When stderr is the journal's stream
 * (JOURNAL_STREAM names its device and inode, systemd's rule: a stderr
 * redirected since is not) each line carries its syslog priority as "<N>",
 * which journald files as the line's priority. Only daemon/ logs (core/ and
 * client/'s library never do), from the loop thread; nats.c's publisher
 * thread leaves its news for the loop to say.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

static inline bool rt_log_to_journal(void)
{
	const char *stream = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	int end = 0;

	if (!stream || sscanf(stream, "%llu:%llu%n", &dev, &ino, &end) != 2 || stream[end] ||
	    fstat(STDERR_FILENO, &st))
		return false;
	return st.st_dev == dev && st.st_ino == ino;
}

__attribute__((format(printf, 2, 3))) static inline void rt_log(int priority, const char *fmt, ...)
{
	static int journal = -1;
	va_list ap;

	if (journal < 0)
		journal = rt_log_to_journal();
	if (journal)
		fprintf(stderr, "<%d>", priority);
	else
		fputs("ringtapd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
