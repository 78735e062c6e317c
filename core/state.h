/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * state: what a ringtapd hands to the next one across a planned restart,
 * as bytes (the state memfd kept in systemd's fd store). Owns the format
 * and its version: the instance the trace fds belong to and the settings
 * it was made with, each CPU's counts, and per subscriber whose connection
 * went into the store: its subscription as last accepted (the Hello's or
 * an Update's Subscription, packed), encoding, which Schemas it was sent,
 * its counts, and the bytes queued for it and not yet written (a frame cut
 * short is finished from them, never begun again). Pure: the reader takes
 * (buf, len), bounds-checks every length against the end, points into buf
 * rather than copying, and refuses what it cannot read with a reason.
 *
 * Layout (little endian): "RTSTATE\0", u32 version, u32 length of the
 * rest, then the body of that version. Every record carries its length:
 * a later release adds fields at the end of a record under the same
 * version, and this reader skips them. The version changes only where an
 * older reader could not read the state; a version it does not know is
 * refused.
 *
 * Added under version 1, each skipped by an older release's reader (it
 * never looks past what it knows of a record, nor past the records it
 * knows): each CPU's page ring counts and its other counts at the end of
 * its record; the transport at the end of a subscriber's, then whether it
 * is resumable (its records numbered); the ring's geometry after the last
 * subscriber; then whether the state was written at the start (for a
 * crash) and the resume tokens' secret; a subscriber's catch-up places
 * at the end of its record. A state without them (the first
 * release's) reads as one without a ring and with socket subscribers only.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "encode.h"
#include "why.h"

#define RT_STATE_VERSION 1u
/*
 * The same body, written only when a subscriber is catching up from the
 * page ring: a release before catch-up places would skip them and serve it
 * live from the writer's place, losing what lies between unreported; it
 * refuses this version instead (a clean start, its clients resume by token).
 */
#define RT_STATE_VERSION_CATCH_UP 2u
#define RT_STATE_MAX_CPUS 8192u
#define RT_STATE_MAX_SUBS 65536u

/* A CPU's place in the page ring: its next page's number and the counts before it. */
struct rt_state_ring_cpu {
	uint64_t written;
	uint64_t events_before, kernel_lost, kernel_inexact, malformed;
};

struct rt_state_cpu {
	uint64_t pages, records, kernel_lost;
	/* Zeros in the first release's state. */
	struct rt_state_ring_cpu ring;
	uint64_t unknown;		/* records of an event without a format */
	uint64_t inexact_pages;		/* pages that said "lost some" only */
};

enum {
	RT_STATE_TRANSPORT_SOCKET = 0,
	RT_STATE_TRANSPORT_RING = 1,	/* it maps the page ring the state describes */
};

struct rt_state_sub {
	uint32_t id;			/* its connection is stored as FDNAME=conn<id> */
	uint32_t encoding;		/* Ringtap__Encoding */
	uint32_t version;		/* the protocol version agreed */
	uint32_t uid;
	int32_t pid;
	uint32_t latency_ms;		/* 0: the daemon's */
	const char *name;		/* as logged; NUL-terminated in the buffer */
	const char *owner;
	const uint8_t *subscription;	/* a packed Ringtap__Subscription; len 0: none */
	size_t subscription_len;
	const uint8_t *schema_sent;	/* bitmap by kernel event id */
	size_t schema_sent_len;
	uint64_t raw_schemas;
	uint64_t delivered, dropped, kernel_lost;
	const uint8_t *unsent;		/* whole frames, the first maybe begun already */
	size_t unsent_len;
	uint32_t transport;		/* RT_STATE_TRANSPORT_* */
	bool numbered;			/* Hello.resumable: its records carry their seq */
	/*
	 * Catching up from the page ring (its queue had filled, or it resumed):
	 * where it is on each CPU, as the daemon packs it (little-endian u64s,
	 * daemon/replay.c); len 0: live.
	 */
	const uint8_t *catch_up;
	size_t catch_up_len;
};

struct rt_state {
	uint32_t version;
	const char *instance;		/* the tracefs instance's name */
	const char *clock;
	uint64_t buffer_kb;		/* per CPU, as the settings asked (0: the kernel's) */
	uint32_t ncpus;
	struct rt_state_cpu *cpus;	/* ncpus of them */
	uint32_t n_subs;
	struct rt_state_sub *subs;
	/* The page ring (its memfd stored as FDNAME=ring); slots 0: none was handed on. */
	uint32_t ring_slots, ring_page_size;
	/*
	 * Written at the start, for a crash (FDNAME=crash): no subscriber, no
	 * counts (the ring's own are the truth then). False: a planned restart's.
	 */
	bool at_start;
	const uint8_t *secret;		/* the resume tokens' (daemon/token.h); len 0: none */
	size_t secret_len;
};

/* Appends st in the current version to out: 0 or -ENOMEM, -EINVAL (too many CPUs or subscribers). */
int rt_state_write(const struct rt_state *st, struct rt_buf *out);
/*
 * Reads a state: 0, or -EINVAL (not a state, or a damaged one),
 * -EPROTONOSUPPORT (a version this reader does not know) with why. Strings
 * and blobs point into buf, which must outlive st; the arrays are
 * allocated (-ENOMEM), freed by rt_state_release().
 */
int rt_state_read(const uint8_t *buf, size_t len, struct rt_state *st, struct rt_why *why);
void rt_state_release(struct rt_state *st);
