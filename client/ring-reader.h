/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * ring-reader: the RING transport's client side, without the socket. Owns
 * the reader's place in ringtapd's page ring (core/ring.h), the layout
 * learned from the Welcome and the RAW Schemas' format texts, and what the
 * subscriber asked that ringtapd leaves to a ring reader: the pids, the
 * filter, the projection and the common fields. Pages are copied out of
 * the ring, checked and decoded here with the core's decoder, and handed
 * out as the events a DECODED stream gives (records read where they lie
 * in the copy, with the Schemas ringtapd would have sent), or as RAW pages.
 *
 * Pure: libringtap.c reads the socket, maps the ring and feeds this; the
 * ring and the frames are untrusted. Losses as ringtapd reports them on
 * the socket: the kernel's and malformed pages as KERNEL (exact unless the
 * kernel gave no count or a page was malformed: at least one each), and
 * pages the writer overwrote before this reader took them as QUEUE (the
 * ring is a ring reader's queue), with rt_ring_read()'s exact count of
 * every event on them.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "encode.h"
#include "ringtap.h"
#include "view.h"
#include "why.h"

struct rt_ring_reader;

/* The subscription as the reader applies it; the pointers need not outlive the call. */
struct rt_ring_reader_opts {
	Ringtap__Encoding encoding;	/* DECODED: records; RAW: pages as the ring holds them */
	const char *const *events;	/* globs; the events whose Schemas are taken */
	const uint32_t *cpus;		/* n_cpus 0: every CPU */
	size_t n_cpus;
	const int32_t *pids;		/* n_pids 0: every pid */
	size_t n_pids;
	const char *filter;		/* NULL or "": none */
	const char *const *fields;	/* NULL: every field */
	bool common;
};

/* 0, -EINVAL with why (a Welcome whose layout does not parse), -ENOMEM. */
int rt_ring_reader_new(struct rt_ring_reader **out, const Ringtap__Welcome *welcome,
		       const struct rt_ring_reader_opts *opts, struct rt_why *why);
void rt_ring_reader_free(struct rt_ring_reader *r);

/*
 * A Schema from ringtapd (RAW, with its format text). DECODED: when the
 * subscription names the event, *decoded is the Schema frame a DECODED
 * subscriber would get for it (the caller's to free), else NULL. 0,
 * -EINVAL with why (a format that does not parse, a filter or projection
 * the event set refuses), -ENOMEM.
 */
int rt_ring_reader_schema(struct rt_ring_reader *r, const Ringtap__Schema *schema,
			  Ringtap__Frame **decoded, struct rt_why *why);

/*
 * Whether a selected field points into the kernel: ringtapd names the
 * function with it (Value.symbol) when it reads kallsyms, and so must the
 * reader, from the kallsyms text of a HostTexts (rt_ring_reader_symbols).
 */
bool rt_ring_reader_wants_symbols(const struct rt_ring_reader *r);
/* The kallsyms text (len bytes, not NUL-terminated) for pointer fields' symbols. -ENOMEM. */
int rt_ring_reader_symbols(struct rt_ring_reader *r, const uint8_t *kallsyms, size_t len);

/* The Schema the events of this id are to be given with (the caller keeps it). */
void rt_ring_reader_bind_schema(struct rt_ring_reader *r, const Ringtap__Schema *schema);
/* Every Schema bound let go (their owner goes): records wait for new ones. */
void rt_ring_reader_unbind_schemas(struct rt_ring_reader *r);

/*
 * The Ring frame and the area it came with (mapped read-only, size bytes):
 * the ring checked and a cursor started on each selected CPU. -EBADMSG
 * with why, -EPROTONOSUPPORT, -ENOMEM.
 */
int rt_ring_reader_attach(struct rt_ring_reader *r, const Ringtap__Ring *ring, const void *base,
			  size_t size, struct rt_why *why);

/* A mapped area the reader is done with, for its caller to unmap. */
struct rt_ring_area {
	void *base;
	size_t size;
};

/*
 * A Ring frame after the first: ringtapd restarted and writes on in a new
 * area (base, size bytes, mapped read-only) under the next page numbers.
 * The cursors stay where they were: pages the old area holds are read
 * there first. A restart before the reader finished the area before that
 * one lets that one go (its pages left unread counted lost): *dropped,
 * for the caller to unmap, base NULL when none. -EBADMSG with why for a
 * ring of other CPUs or larger pages.
 */
int rt_ring_reader_move(struct rt_ring_reader *r, const Ringtap__Ring *ring, const void *base,
			size_t size, struct rt_ring_area *dropped, struct rt_why *why);
/* Whether the old area is read to its end on every selected CPU: then *area, to unmap. */
bool rt_ring_reader_retired(struct rt_ring_reader *r, struct rt_ring_area *area);

/* A RingReady note: pages below written[i] are whole on cpus[i]. -EBADMSG with why. */
int rt_ring_reader_ready(struct rt_ring_reader *r, const Ringtap__RingReady *note,
			 struct rt_why *why);

/*
 * The next event from the ring: 1 with ev (RINGTAP_RECORD with *view set,
 * RINGTAP_PAGE, RINGTAP_LOST), pointing into the reader until the next
 * call; ev must come cleared (ringtap_next() clears it once), only the
 * fields of the event's kind are set; 0 when no page the notes announced is left; -EBADMSG with why (a
 * ring whose numbers contradict themselves), -ENOMEM.
 */
int rt_ring_reader_next(struct rt_ring_reader *r, struct ringtap_event *ev,
			const struct rt_record_view **view, struct rt_why *why);

/*
 * The number (Record.seq, as ringtapd numbers the records it read on a CPU)
 * of the last record handed out, or of a RAW page's last record; 0: none.
 * A resumable ring reader's place (libringtap's ringtap_resume_save).
 */
uint64_t rt_ring_reader_seq(const struct rt_ring_reader *r);

/*
 * The last RINGTAP_RECORD as ringtapd would have packed it for a Batch
 * (encode.h), appended to out: for a caller that wants the protobuf-c
 * Record rather than the view. -EINVAL after any other event, -ENOMEM.
 */
int rt_ring_reader_record(struct rt_ring_reader *r, struct rt_buf *out);
