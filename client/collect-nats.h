/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * collect-nats: ringtap collect --nats, the consumer of what ringtapd
 * publishes to NATS JetStream. A durable pull consumer (DeliverAll, each message acknowledged)
 * reads the stream from its start, or where the same consumer's last run
 * acknowledged (each batch is written and flushed first, and kept in
 * unacked.c's set until its acknowledgment is confirmed); published.c writes
 * one text file per host, a trace.dat per host and boot, and keeps the
 * Welcomes and Schemas in a file beside them for the next run. Any number of collectors (consumers) may read the
 * same stream.
 */
#include <stdbool.h>
#include <stdint.h>

struct rt_collect_nats_opts {
	uint64_t count;		/* stop after this many records; 0: no limit */
	double seconds;		/* stop after this long; 0: no limit */
	bool drain;		/* stop once every message the stream held was read */
	const char *subject;	/* NULL: "ringtap.>" */
	const char *durable;	/* NULL: ringtap-collect-<host>-<hash of the directory> */
	bool lag;		/* measure each record's lag (bench/fanin) */
	bool text_only;		/* no trace.dat */
};

/*
 * Reads until a limit, SIGINT or SIGTERM, then prints one status line per
 * host on standard error. 0, or -errno with the reason on standard error.
 */
int rt_collect_nats(const char *url, const char *stream, const char *outdir,
		    const struct rt_collect_nats_opts *o);

/* "ringtap collect --nats URL ...": argv[0] is "collect". */
int rt_collect_nats_main(int argc, char **argv);
