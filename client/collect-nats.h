/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * collect-nats: ringtap collect --nats, the consumer of what ringtapd
 * publishes to NATS JetStream. An ordered (ephemeral, DeliverAll) consumer
 * reads the stream from its start; published.c writes one text file per
 * host. Any number of collectors may read the same stream.
 */
#include <stdbool.h>
#include <stdint.h>

struct rt_collect_nats_opts {
	uint64_t count;		/* stop after this many records; 0: no limit */
	double seconds;		/* stop after this long; 0: no limit */
	bool drain;		/* stop once every message the stream held was read */
	const char *subject;	/* NULL: "ringtap.>" */
};

/*
 * Reads until a limit, SIGINT or SIGTERM, then prints one status line per
 * host on standard error. 0, or -errno with the reason on standard error.
 */
int rt_collect_nats(const char *url, const char *stream, const char *outdir,
		    const struct rt_collect_nats_opts *o);

/* "ringtap collect --nats URL ...": argv[0] is "collect". */
int rt_collect_nats_main(int argc, char **argv);
