/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * nats: the decoded stream published to NATS JetStream (docs/PROTOCOL.md,
 * NATS). Owns the connection (libnats, which reconnects forever on its own
 * threads), the stream's creation, one publisher thread, and the bound on
 * messages handed over and not yet acknowledged: past it a record is
 * dropped, counted on its CPU and reported on the stream as soon as there
 * is room. A message not acknowledged (a timeout, a server that died: nats_url
 * lists a cluster's servers) goes again with its id, in its first order.
 * The loop thread only queues bytes under a mutex: it never waits
 * for the network. Logs from the loop thread only (rt_nats_poll).
 */
#include <stdbool.h>
#include <stdint.h>

#include "decode.h"
#include "encode.h"
#include "publish.h"

struct rt_nats_mark;

struct rt_nats;

struct rt_nats_opts {
	const char *url;
	const char *stream;		/* JetStream stream name */
	const char *const *events;	/* NULL-terminated system:event globs */
	unsigned long max_pending;	/* messages queued or unacknowledged */
	unsigned long max_message_kb;	/* 0: a page a message (rt_publisher_set_max_message) */
	/*
	 * Where publishing stands with JetStream, kept for a crash's successor
	 * (nats-mark.h; taken, even on failure); NULL: not kept. With from, this
	 * run goes on with a crashed run's numbers (the caller publishes the
	 * ring's pages from its mark again: rt_pump_republish).
	 */
	struct rt_nats_mark *mark;
	const struct rt_publisher_from *from;
	uint64_t mark_key;		/* what is published, hashed: another's mark is not read */
};

struct rt_nats_stats {
	uint64_t records;	/* handed to NATS */
	uint64_t acked;		/* messages JetStream acknowledged */
	uint64_t dropped;	/* records dropped: the buffer was full */
	uint64_t failed;	/* records handed over whose publish failed */
	uint64_t unreported;	/* records lost whose report is still owed */
	uint64_t pending;	/* messages queued or unacknowledged */
	uint64_t republished;	/* messages sent again (same Nats-Msg-Id): timeouts, failovers */
};

/*
 * Connects in the background: an unreachable server is retried, not an
 * error. -errno after the one log line that says why, with what was built
 * freed and *out untouched; *out is set on success only.
 */
int rt_nats_new(struct rt_nats **out, const struct rt_nats_opts *opts, const struct rt_host *host,
		const struct rt_layout *layout, unsigned int ncpus);
/* Stops the publisher; what is still unacknowledged is logged, not waited for. */
void rt_nats_free(struct rt_nats *n);

/* A page's records are held until rt_nats_end_page, after its loss report. */
void rt_nats_record(struct rt_nats *n, const struct rt_record *rec);
void rt_nats_kernel_loss(struct rt_nats *n, unsigned int cpu, uint64_t count, bool exact,
			 uint64_t after_ts, uint64_t before_ts);
void rt_nats_end_page(struct rt_nats *n);
/* A drain's end: the pages held together (nats_max_message_kb) go. */
void rt_nats_end_drain(struct rt_nats *n);
/* After a page: the CPU's next ring page and the ring's counts before it (for the mark). */
struct rt_ring_page_info;
void rt_nats_ring_at(struct rt_nats *n, unsigned int cpu, uint64_t page,
		     const struct rt_ring_page_info *before);
/*
 * Pages published again after a crash (on): a page a message, so that none
 * has the id of an earlier message that held fewer pages, and none dropped
 * for want of room; off: as configured again.
 */
void rt_nats_republishing(struct rt_nats *n, bool on);
/*
 * A crash's successor that could not publish the dead run's pages again:
 * a new session from here (nothing new takes the dead run's numbers), its
 * mark made anew with key. 0, -ENOMEM (publishing goes on as it was).
 */
int rt_nats_start_over(struct rt_nats *n, uint64_t key);
/* The mark's memfd, for systemd's fd store (FDNAME=nats); -1: none kept. */
int rt_nats_kept_fd(const struct rt_nats *n);

/*
 * From the loop's timer: reports the losses owed where there is room,
 * sends the Welcome and Schemas again after a reconnect, logs changes of
 * the connection's state.
 */
void rt_nats_poll(struct rt_nats *n);
/* Connected, the stream checked: publishing (bench/fanin waits for every host's). */
bool rt_nats_ready(struct rt_nats *n);
/* Nothing queued, unacknowledged or owed. */
bool rt_nats_drained(struct rt_nats *n);
void rt_nats_get_stats(struct rt_nats *n, struct rt_nats_stats *st);
