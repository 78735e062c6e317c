/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * fanout: a decoded record, or a raw page, into one subscriber's queue in
 * the form its encoding sends. Each record is encoded once per way of
 * sending it (DECODED with or without common fields or a projection,
 * FIXED) and those bytes copied into each queue that takes it, or packed
 * straight into the queue of a subscriber alone with its way. Whatever
 * cannot be queued is counted lost to that subscriber. The server walks
 * its connections and calls in here; this module knows no connection.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "encode.h"
#include "ringtap.pb-c.h"
#include "subscriber.h"

struct rt_filter;
struct rt_layout;
struct rt_legacy_layout;
struct rt_record;
struct tep_event;

/*
 * One way of sending decoded records (common fields or not, a projection
 * or not), shared by every DECODED subscriber that asked for it.
 */
struct fanout_way {
	struct fanout_way *next;
	struct rt_record_encoder *encoder;
	unsigned int users;
	struct rt_buf packed;		/* the current record, this way */
	uint64_t record;		/* which record packed holds (fanout.records) */
	bool failed;			/* it could not be encoded */
};

/* What every subscriber shares: the ways in use, and the current record in each. */
struct fanout {
	const struct rt_layout *layout;
	struct fanout_way *ways;	/* every way DECODED subscribers asked for */
	uint64_t records;		/* records fanned out: which one is current */
	struct rt_buf packed_fixed;	/* the current record in the legacy layout */
	uint64_t packed_fixed_record;	/* which record packed_fixed holds; 0: none */
	bool packed_fixed_numbered;	/* with its FixedRecord.seq */
	uint8_t *legacy_scratch;	/* a record rewritten, before it is framed */
	size_t legacy_scratch_size;
};

/* One subscriber as the fan-out sees it: its queue and how it takes records. */
struct fanout_sub {
	struct rt_subscriber sub;
	Ringtap__Encoding encoding;
	const struct rt_legacy_layout *legacy;	/* with FIXED */
	struct rt_filter *filter;	/* NULL: every record of the selection */
	char **only;			/* projection, NULL-terminated; NULL: every field */
	bool common;			/* DECODED: the common fields too */
	bool numbered;			/* resumable: each record's seq goes with it */
	bool copy_pages;		/* TLS: a page's frame is copied whole, not shared */
	struct fanout_way *way;		/* DECODED: how its records are encoded */
	size_t raw_schemas;	/* RAW: the layout's events when it was last sent their Schemas */
};

/* A page offered to RAW subscribers, framed once for all of them on first use. */
struct fanout_page {
	unsigned int cpu;
	struct rt_page_buf *page;
	size_t len;
	unsigned int records;
	uint64_t first_ts, last_ts;
	uint64_t first_seq;		/* Pages.first_seq: the page's first record's seq */
	struct rt_frame_parts frame;
	int framed;			/* 0: not yet; 1: done; -errno */
};

void fanout_release(struct fanout *f);

/* The way t's records are encoded, found or made (t->common, t->only). */
int fanout_choose_encoding(struct fanout *f, struct fanout_sub *t);
void fanout_release_encoding(struct fanout *f, struct fanout_sub *t);

/* The Schema t's encoding describes the event with, queued. */
int fanout_push_schema(const struct fanout *f, struct fanout_sub *t, const struct tep_event *ev);

/* A new record comes: every way's bytes are stale. */
static inline void fanout_next_record(struct fanout *f)
{
	f->records++;
}

/*
 * The record into t's pending Batch when t selected it (its event, CPU,
 * pid and filter). 0, or -ENOMEM with *what for the log (the record is
 * counted lost to t already).
 */
int fanout_record(struct fanout *f, struct fanout_sub *t, const struct rt_record *rec,
		  int32_t pid, const char **what);

/*
 * Every format the layout knows that RAW t was not sent yet, queued (pages
 * may hold any event the instance records); false when one could not be
 * queued: no page may go before it.
 */
bool fanout_raw_schemas(const struct fanout *f, struct fanout_sub *t);

/* Whether the page goes to RAW t and its queue cannot take it (fanout_page would drop it). */
bool fanout_page_overflows(const struct fanout_sub *t, struct fanout_page *p);
/* The page into a RAW t's queue when it selected the CPU; 0 or -ENOMEM (counted). */
int fanout_page(const struct fanout *f, struct fanout_sub *t, struct fanout_page *p);
