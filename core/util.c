// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdlib.h>
#include <time.h>

#include "util.h"

void rt_strv_free(char **strv)
{
	for (char **p = strv; p && *p; p++)
		free(*p);
	free(strv);
}

uint64_t rt_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
