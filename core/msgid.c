// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "msgid.h"

int rt_msg_id_format(char *buf, size_t size, const struct rt_msg_id *id)
{
	int n = snprintf(buf, size, "%s.%s.%" PRIu64 ".%u.%c%" PRIu64, id->host, id->boot_id,
			 id->session, id->cpu, (char)id->kind, id->seq);

	if (n < 0 || (size_t)n >= size) {
		if (size)
			buf[0] = '\0';
		return -ENOSPC;
	}
	return n;
}
