/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * published: ringtapd's NATS messages (docs/PROTOCOL.md, NATS) turned back
 * into the text lines of ringtap stream, one file per host. Keeps each
 * host's Welcome and Schemas as they come on the stream and counts records,
 * losses and sequence gaps. The bytes are untrusted: a message that is not
 * one of ringtapd's is counted and skipped. Writes files, no network.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct rt_pub_host;

struct rt_collector {
	char *outdir;		/* NULL: lines are counted, not written */
	unsigned int flags;	/* RINGTAP_FORMAT_* */
	struct rt_pub_host **hosts;
	size_t n_hosts;
	char *line;
	size_t line_size;
	uint64_t records;	/* every host's */
	uint64_t bad;		/* messages that were not ringtapd's */
};

int rt_collector_init(struct rt_collector *c, const char *outdir, unsigned int flags);
void rt_collector_release(struct rt_collector *c);

/*
 * One message: 0 when taken, -EBADMSG when skipped (not ringtapd's subject
 * or payload), -errno when its line could not be written.
 */
int rt_collector_take(struct rt_collector *c, const char *subject, const uint8_t *data,
		      size_t len);

/* Flushes every host's file. */
int rt_collector_flush(struct rt_collector *c);

/*
 * One line per host: records, losses the stream reported (kernel, publish
 * buffer) and records the sequence numbers say are missing unreported.
 */
void rt_collector_summary(const struct rt_collector *c, FILE *f);
