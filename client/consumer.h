/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * consumer: the frames a subscriber receives after the Welcome, turned into
 * ringtap.h's events one at a time. Owns the Welcome, the Schemas (one per
 * event id and connection), the frame the last event points into and the
 * place in it, and the sticky error. Checks what the daemon promises: a
 * Record comes after its Schema and matches it, CPUs are those the Welcome
 * counts, no Schema comes twice. Pure: unpacked frames in, events out;
 * libringtap.c reads the socket and feeds it. The frames are untrusted.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ringtap.h"
#include "view.h"

struct rt_consumer {
	Ringtap__Frame *welcome;	/* set by the handshake before any take */
	struct schema_slot {
		uint32_t event_id;
		Ringtap__Frame *frame;	/* owns the Schema */
	} *schemas;			/* sorted by event_id */
	size_t n_schemas, schemas_alloc;
	Ringtap__Frame *cur;		/* the frame the last event points into */
	size_t batch_next;		/* with a many-item frame in cur: the next item */
	/* A Batch or Pages read in place (views on), or NOT_SET: its items, one at a time. */
	Ringtap__Frame__MsgCase in_place;
	struct rt_batch_view batch;
	struct rt_record_view view;	/* the current record */
	struct rt_value *vals;		/* room for its values */
	size_t n_vals;
	struct rt_pages_view pages;
	ProtobufCBinaryData page;	/* the current page, pointing into the frame */
	bool end;
	bool said_bye;			/* the stream ended with a Bye: nothing unreported */
	int error;			/* once set, every call returns it */
	char errtext[256];
};

/* The most CPUs a Welcome may count: Linux's own bound (NR_CPUS with MAXSMP). */
#define RT_CONSUMER_MAX_CPUS 8192

/*
 * The Welcome, checked: the version and encoding asked for, a CPU count
 * within bounds. 0 and the frame taken; -EPROTO with the error set (the
 * frame stays the caller's).
 */
int rt_consumer_welcome(struct rt_consumer *c, Ringtap__Frame *f, uint32_t version,
			Ringtap__Encoding encoding);

/*
 * Takes one frame (and its ownership). Returns 1 with an event (f is then
 * the current frame, or freed), 0 when the frame gave none (a Schema, kept;
 * a HostTexts, an empty Batch, Pages or Fixed), or -errno with the error set (f freed).
 */
int rt_consumer_take(struct rt_consumer *c, Ringtap__Frame *f, struct ringtap_event *ev);

/*
 * The next item of the current frame: 1 and the event (RINGTAP_END again
 * after the end), 0 when the frame is used up (then released), or the
 * sticky error.
 */
int rt_consumer_next(struct rt_consumer *c, struct ringtap_event *ev);

/*
 * The frame's payload as it came, when it holds a Batch or Pages: its
 * records read in place (RINGTAP_RECORD events with record NULL; the record
 * is c->view), or its pages (RINGTAP_PAGE events whose page points into the
 * payload), returning as rt_consumer_take. -ENOMSG when it holds another
 * message: unpack it and hand it to rt_consumer_take. The payload must stay
 * as it is while the caller uses the frame's last event.
 */
int rt_consumer_take_in_place(struct rt_consumer *c, const uint8_t *payload, size_t len,
			      struct ringtap_event *ev);

/* The stream ended: with a Bye (clean), or the connection was cut. Returns 1. */
int rt_consumer_end(struct rt_consumer *c, bool clean, struct ringtap_event *ev);

/* Makes err the sticky error, with its text; returns err. */
int rt_consumer_fail(struct rt_consumer *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

const Ringtap__Schema *rt_consumer_find_schema(const struct rt_consumer *c, const char *system,
					       const char *name);

void rt_consumer_release(struct rt_consumer *c);
