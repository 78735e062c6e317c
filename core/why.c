// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdarg.h>
#include <stdio.h>

#include "why.h"

int rt_why_set(struct rt_why *why, int err, const char *fmt, ...)
{
	va_list ap;

	if (!why)
		return err;
	va_start(ap, fmt);
	vsnprintf(why->text, sizeof(why->text), fmt, ap);
	va_end(ap);
	return err;
}
