// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "host.h"
#include "tracefs.h"

void rt_host_id_read(struct rt_host_id *id, const struct rt_session *session)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	if (gethostname(id->hostname, sizeof(id->hostname)))
		strcpy(id->hostname, "?");
	id->hostname[sizeof(id->hostname) - 1] = '\0';
	if (uname(&id->uts))
		strcpy(id->uts.release, "?");
	if (!f || !fgets(id->boot_id, sizeof(id->boot_id), f))
		strcpy(id->boot_id, "?");
	id->boot_id[strcspn(id->boot_id, "\n")] = '\0';
	if (f)
		fclose(f);
	id->host.hostname = id->hostname;
	id->host.kernel_release = id->uts.release;
	id->host.boot_id = id->boot_id;
	id->host.cpus = (unsigned int)rt_session_ncpus(session);
	id->host.trace_clock = rt_session_clock(session) ?: "?";
}
