/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * ring_conn: a connection on the RING transport, from the daemon's side.
 *
 * Decides who may map the page ring (a peer of the Unix socket, which is
 * root or in the socket's group and may select every event; never over
 * TCP), sends such a reader the Schemas of every event the instance
 * records, then the Ring frame with a read-only descriptor of the ring,
 * and after each drain pass a RingReady note of the CPUs whose pages moved.
 * A note waits while anything is unsent, and the next one says all that
 * moved meanwhile: a reader that never reads costs one pending note. A
 * ring reader gets no Pages, Batch or Lost frames: its losses are in the
 * ring's slots.
 */
#include <stdbool.h>
#include <stdint.h>

struct rt_conn;

struct ring_reader {
	uint64_t *told;			/* per CPU: the written count the last note gave */
};

/* Whether c may map the ring; false with the Refusal's text in *why. */
bool ring_conn_allowed(const struct rt_conn *c, const char **why);
/* c takes the RING transport: 0, or -ENOMEM. */
int ring_conn_new(struct rt_conn *c);
void ring_conn_free(struct rt_conn *c);
/*
 * After its Welcome: the Schemas of every event the instance records, then
 * the Ring frame, which carries the descriptor, with where it starts on
 * each CPU (the pages whole now are behind it). 0, or -ENOMEM.
 */
int ring_conn_start(struct rt_conn *c);
/*
 * After a drain pass: a RingReady for the CPUs whose pages moved, unless
 * frames wait unsent (last: queued behind them all the same, before a
 * Bye). false when c was closed (its link failed).
 */
bool ring_conn_notify(struct rt_conn *c, bool last);
