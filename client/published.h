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
	/*
	 * Set when reading resumes mid-stream (a durable consumer's second run):
	 * a run's numbers count from the first message seen, not from 0.
	 */
	bool resumed;		/* and the host files are appended to */
	bool restoring;		/* rt_collector_restore at work */
	/* Welcomes and Schemas are appended here as they come (rt_collector_restore reads them). */
	FILE *descriptions;
	/* Set: the lag from a record's timestamp (taken as realtime ns) to its line, in ms. */
	uint32_t *lag_ms;
	uint64_t lag_max_ms;
};

int rt_collector_init(struct rt_collector *c, const char *outdir, unsigned int flags);
void rt_collector_release(struct rt_collector *c);

/*
 * One message: 0 when taken, -EBADMSG when skipped (not ringtapd's subject
 * or payload), -errno when its line could not be written.
 */
int rt_collector_take(struct rt_collector *c, const char *subject, const uint8_t *data,
		      size_t len);

/*
 * The Welcomes and Schemas a previous run appended to its descriptions
 * file, taken again (no lines, no counts): records read after a resume
 * find their schemas. -EBADMSG for a file that is not one.
 */
int rt_collector_restore(struct rt_collector *c, FILE *f);

/* Measures each record's lag (bench/fanin's simulated hosts stamp records with realtime). */
int rt_collector_measure_lag(struct rt_collector *c);

/* Writes the page held of every host and flushes every host's file. */
int rt_collector_flush(struct rt_collector *c);

/*
 * One line per host: records, losses the stream reported (kernel, publish
 * buffer) and records the sequence numbers say are missing unreported.
 */
void rt_collector_summary(const struct rt_collector *c, FILE *f);
/* With rt_collector_measure_lag: "lag p50 ... p99 ... max ..." over every record taken. */
void rt_collector_lag_summary(const struct rt_collector *c, FILE *f);
