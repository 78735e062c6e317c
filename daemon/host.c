// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host.h"
#include "log.h"
#include "tracefs.h"
#include "wire.h"

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

void rt_host_texts_read(struct rt_host_texts *t, struct rt_session *session, const char *client)
{
	static const char *const names[] = { "kallsyms", "printk_formats", "saved_cmdlines" };
	char *text[3] = { NULL };
	size_t len[3] = { 0 };

	for (int i = 0; i < 3; i++) {
		if (rt_session_read_text(session, names[i], &text[i], &len[i]))
			rt_log(LOG_NOTICE, "client %s: no %s to send", client, names[i]);
		/* Together they must fit in one frame a client accepts. */
		if (text[i] && len[i] > (i == 0 ? RT_WIRE_MAX_FRAME_DEFAULT - (4u << 20) : 1u << 20)) {
			rt_log(LOG_NOTICE, "client %s: %s is %zu bytes, too big to send", client,
			       names[i], len[i]);
			free(text[i]);
			text[i] = NULL;
		}
	}
	*t = (struct rt_host_texts){
		.kallsyms = text[0], .kallsyms_len = len[0],
		.printk_formats = text[1], .printk_formats_len = len[1],
		.saved_cmdlines = text[2], .saved_cmdlines_len = len[2],
	};
}

void rt_host_texts_free(struct rt_host_texts *t)
{
	free((char *)t->kallsyms);
	free((char *)t->printk_formats);
	free((char *)t->saved_cmdlines);
	*t = (struct rt_host_texts){ 0 };
}
