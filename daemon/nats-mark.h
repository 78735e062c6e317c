/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * nats-mark: which of the messages handed to JetStream are answered, and
 * from that the mark (core/publish-mark.h) that a ringtapd taking over
 * after a crash publishes again from. Owns the mark's memfd and mapping.
 *
 * Each message handed over has an order number (nats.c gives them in
 * order); its answer (acknowledged, or failed and counted lost) settles it,
 * from any thread. At a drain's end the loop notes where each CPU stands
 * and the order numbers handed out so far; once every message below them
 * is settled, that note becomes the mark. A note that cannot be kept (too
 * many in flight) only leaves the mark further back: a successor then
 * publishes more again, which JetStream keeps once by id.
 */
#include <stdbool.h>
#include <stdint.h>

#include "publish.h"
#include "ring.h"

struct rt_nats_mark;

/*
 * fd: the previous ringtapd's mark (taken over: ours to close), or -1 for a
 * new memfd. max_pending: messages in flight at most (nats_max_pending).
 * -errno with nothing left open.
 */
int rt_nats_mark_new(struct rt_nats_mark **out, int fd, unsigned int ncpus,
		     unsigned long max_pending);
void rt_nats_mark_free(struct rt_nats_mark *m);
int rt_nats_mark_fd(const struct rt_nats_mark *m);

/*
 * A crash's successor: the dead run's session, the first control number
 * for this run, and the places to publish again from (ncpus of them, in
 * places). 0 and the area is this run's; -errno when it holds no mark this
 * run can go on from.
 */
int rt_nats_mark_resume(struct rt_nats_mark *m, uint64_t key, struct rt_publisher_from *from,
			struct rt_pub_place *places);
/*
 * A new run: the mark is the ring's places given so far, with numbers from
 * 0; key says what is published (the events, the host), so that a run
 * publishing something else does not take it for its own.
 */
int rt_nats_mark_start(struct rt_nats_mark *m, uint64_t session, uint64_t key);

/* The loop: the CPU's next ring page and the ring's counts before it. */
void rt_nats_mark_ring_at(struct rt_nats_mark *m, unsigned int cpu, uint64_t page,
			  const struct rt_ring_page_info *before);
/* Any thread: message `order` is answered. */
void rt_nats_mark_settle(struct rt_nats_mark *m, uint64_t order);
/*
 * Any thread, before that message is settled: its records are lost and
 * their report is still to come. Notes taken so far are dropped: the mark
 * waits for a note taken after the report was handed over.
 */
void rt_nats_mark_failed(struct rt_nats_mark *m);
/* Whether it stopped for good (an order too far ahead to follow): the caller says so once. */
bool rt_nats_mark_stuck(const struct rt_nats_mark *m);
/*
 * The loop, at a drain's end with nothing held or owed: every message
 * numbered below order_end carries the pages before each CPU's place.
 */
void rt_nats_mark_note(struct rt_nats_mark *m, uint64_t order_end, const struct rt_publisher *pub);
/* The loop: the newest note whose messages are all settled becomes the mark. */
void rt_nats_mark_advance(struct rt_nats_mark *m);
