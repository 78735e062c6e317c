/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * host: who a stream comes from, as the Welcome and the NATS subjects name
 * it: hostname, kernel release, boot id, CPUs and trace clock, read once;
 * and the texts a trace.dat writer needs from it, read when asked.
 */
#include <sys/utsname.h>

#include "encode.h"

struct rt_session;

struct rt_host_id {
	struct rt_host host;	/* points into the fields below and the session */
	char hostname[256];
	struct utsname uts;
	char boot_id[64];
};

/* What cannot be read is "?". */
void rt_host_id_read(struct rt_host_id *id, const struct rt_session *session);

/*
 * kallsyms, printk formats and saved cmdlines, read now (cmdlines change).
 * A text that cannot be read, or is too big for one frame a client accepts,
 * is left out and said in the log for client: the file then shows addresses
 * or "<...>", as trace-cmd's would.
 */
void rt_host_texts_read(struct rt_host_texts *t, struct rt_session *session, const char *client);
void rt_host_texts_free(struct rt_host_texts *t);
