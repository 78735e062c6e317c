/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/* util: small helpers every module uses. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline void freep(void *p)
{
	free(*(void **)p);
}
#define _cleanup_free_ __attribute__((cleanup(freep)))

static inline void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}
#define _cleanup_close_ __attribute__((cleanup(closep)))

/* CLOCK_MONOTONIC in nanoseconds: how long something took. */
uint64_t rt_monotonic_ns(void);

/* Frees a NULL-terminated array of strings and the strings (NULL: nothing). */
void rt_strv_free(char **strv);

