/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * publish-mark: where ringtapd's NATS publishing stands with JetStream, in
 * a small shared area (a memfd systemd's fd store keeps, FDNAME=nats) that
 * outlives a crash. Per CPU: the ring page from which no message is known
 * stored (every message of the pages before it was acknowledged), the
 * ring's counts before that page, and the publisher's numbers there. The
 * ringtapd that takes over after a crash publishes the ring's pages from
 * there again under the same session and numbers, so each message gets
 * the id it had (msgid.h) and JetStream keeps it once.
 *
 * The writer fills the copy not in use, then makes it current: a crash in
 * the middle of a write leaves the other copy whole. One writer (the
 * daemon's loop); the reader is the next daemon, after the writer died.
 * Pure: works on (base, size). Integers in the host's order: the area
 * never leaves the machine.
 */
#include <stddef.h>
#include <stdint.h>

#define RT_PUB_MARK_MAGIC	0x314b52414d425550ULL	/* "PUBMARK1" in memory, little-endian */
#define RT_PUB_MARK_VERSION	1

/* One CPU's place. */
struct rt_pub_place {
	uint64_t page;			/* the ring page from which nothing is known stored */
	/* The ring's counts before that page (a cursor starts from them: ring.h). */
	uint64_t events_before, kernel_lost, kernel_inexact, malformed;
	uint64_t seq;			/* the publisher's number for the page's first record */
	uint64_t kernel_reports;	/* kernel Lost messages sent on the CPU before it */
};

/* Bytes an area for ncpus takes; 0 for none. */
size_t rt_pub_mark_size(unsigned int ncpus);

/*
 * A new area for a run numbered by session, publishing what key names (the
 * caller's hash of the events and host), both copies at places; 0 or -EINVAL.
 */
int rt_pub_mark_format(void *base, size_t size, unsigned int ncpus, uint64_t session,
		       uint64_t key, const struct rt_pub_place *places);

/* The writer: places (ncpus of them) become the mark. */
void rt_pub_mark_put(void *base, const struct rt_pub_place *places);

/*
 * The reader after a crash: the session, the runs that took it over before
 * (control messages of run r are numbered from r << 40), the key and the
 * current places into places[ncpus]. 0, -EBADMSG (not a mark, numbers that do not
 * fit size), -EPROTONOSUPPORT (another version), -EINVAL (another number of CPUs).
 */
int rt_pub_mark_read(const void *base, size_t size, unsigned int ncpus, uint64_t *session,
		     uint64_t *runs, uint64_t *key, struct rt_pub_place *places);

/* The reader takes the area over: one more run (its own). */
void rt_pub_mark_take_over(void *base, uint64_t runs);
