// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "consumer.h"
#include "encode.h"
#include "format.h"
#include "ring-reader.h"
#include "ringtap.h"
#include "transport.h"
#include "util.h"
#include "wire.h"

#define DEFAULT_TIMEOUT_MS	5000
/* PROTOCOL.md: the daemon refuses client frames over 64 KiB. */
#define HELLO_MAX		(64u << 10)
#define READ_CHUNK		(64u << 10)
/* The RING transport's protocol version (PROTOCOL.md). */
#define RING_PROTOCOL_VERSION	2

/*
 * One connection: the transport and the bytes read from it, framed by the
 * wire reader and handed to the consumer (consumer.c), which owns the
 * stream's state and its sticky error.
 */
struct ringtap_client {
	struct rt_transport t;
	struct rt_wire_reader reader;
	uint8_t *rbuf;		/* bytes read from the socket, fed from rpos */
	size_t rpos, rlen;
	struct rt_consumer cons;
	Ringtap__Encoding encoding;	/* the one asked for, the only one offered */
	void (*tap)(void *ctx, const uint8_t *frame, size_t len);
	void (*frame_tap)(void *ctx, const Ringtap__Frame *frame);
	void *tap_ctx;
	bool views;		/* Batches and Pages read in place: ringtap_record_view() */
	bool bye_sent;
	struct rt_value *scratch;	/* ringtap_record_view() of an unpacked Record */
	size_t n_scratch;
	struct rt_record_view scratch_view;
	/*
	 * RING: pages from ringtapd's ring (ring-reader.c), the socket
	 * carrying notes and control frames; asked is the encoding the user
	 * wants (the Hello asks RAW).
	 */
	bool ring_mode;
	Ringtap__Encoding asked;
	struct rt_ring_reader *ring;
	void *ring_map;
	size_t ring_size;
	void *old_map;			/* the previous ringtapd's ring, until read to its end */
	size_t old_size;
	struct rt_buf ring_buf;		/* a frame made for the tap, a record packed */
	Ringtap__Record *ring_record;	/* views off: the last record, unpacked */
	/*
	 * Frames the ring's start took in ringtap_connect(), for the tap at
	 * the first ringtap_next(), where a socket stream's tap sees them (a
	 * recorder starts its file between the two).
	 */
	bool starting;
	struct rt_buf tap_later;
	/*
	 * A resumable stream (ringtap_connect_resumable()): the place after
	 * each event handed out, per CPU (the last seq), from the Welcome's
	 * start on; resume_from is what the Hello resumed from, if anything.
	 */
	bool resumable;
	uint64_t *places;
	size_t n_places;
	struct ringtap_resume *resume_from;
	bool ring_borrowed;		/* the reader and areas are resume_from's until connected */
	/* Frames with events that came before the Ring frame: handed out first. */
	Ringtap__Frame **early;
	size_t n_early, early_next;
};

/*
 * Called per frame: the coarse clock is read from memory, where a guest
 * without a stable TSC pays a trip to the HPET (a tenth of a recorder's CPU).
 * Deadlines are whole milliseconds and poll() rounds up: ticks suffice.
 */
static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* -1: no deadline. */
static int64_t deadline_after(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : now_ns() + (int64_t)timeout_ms * 1000000;
}

/* What is left of the deadline as a poll() timeout, rounded up so poll does not spin. */
static int remaining_ms(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - now_ns();
	if (left <= 0)
		return 0;
	left = (left + 999999) / 1000000;
	return left > INT32_MAX ? INT32_MAX : (int)left;
}

static const char *enum_name(const ProtobufCEnumDescriptor *d, int value)
{
	const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(d, value);

	return v ? v->name : "unknown";
}

/*
 * Reads what the socket has into rbuf, once every fed byte is taken.
 * Returns the number of bytes, 0 at end of stream, -EAGAIN, or -errno.
 */
static int read_some(struct ringtap_client *c)
{
	ssize_t n;

	if (c->rpos < c->rlen)
		return (int)(c->rlen - c->rpos);
	c->rpos = c->rlen = 0;
	n = rt_transport_read(&c->t, c->rbuf, READ_CHUNK);
	if (n < 0)
		return (int)n;
	c->rlen = (size_t)n;
	return (int)n;
}

/* The frame as it came, length first: neither packed again nor copied. */
static void tap_frame(struct ringtap_client *c)
{
	size_t len;
	const uint8_t *frame = rt_wire_reader_last(&c->reader, &len);

	if (frame)
		c->tap(c->tap_ctx, frame, len);
}

/* The ring's frame for the tap: now, or at the first ringtap_next() while the ring starts. */
static void ring_tap(struct ringtap_client *c)
{
	size_t len;
	const uint8_t *frame = rt_wire_reader_last(&c->reader, &len);

	if (!frame)
		return;
	if (!c->starting)
		c->tap(c->tap_ctx, frame, len);
	else if (rt_buf_put(&c->tap_later, frame, len))
		c->tap_later.len = 0;	/* out of memory: the tap misses them, as the file will say */
}

/* The frames the ring's start took, one at a time, as they came. */
static void tap_the_start(struct ringtap_client *c)
{
	const uint8_t *p = c->tap_later.data, *end = p + c->tap_later.len;

	while (p < end) {
		uint64_t len;
		int used = rt_wire_varint_decode(p, (size_t)(end - p), &len);

		if (used <= 0 || len > (uint64_t)(end - p - used))
			break;
		c->tap(c->tap_ctx, p, (size_t)used + (size_t)len);
		p += (size_t)used + (size_t)len;
	}
	rt_buf_free(&c->tap_later);
}

/*
 * The next whole frame's payload from the bytes already read: 1 and the
 * payload (valid until the next feed), 0 when more bytes are needed, or
 * -errno with the client's error set. The tap sees it as it came.
 */
static int buffered_payload(struct ringtap_client *c, const uint8_t **payload, size_t *len)
{
	int ret;

	for (;;) {
		size_t used;

		ret = rt_wire_reader_take(&c->reader, payload, len);
		if (ret == 0 && c->rpos < c->rlen) {
			ret = rt_wire_reader_feed(&c->reader, c->rbuf + c->rpos, c->rlen - c->rpos,
						  &used);
			c->rpos += used;
			if (ret >= 0)
				continue;
		}
		/* The ring's frames are tapped as they are taken (ring_frame). */
		if (ret == 1 && c->tap && !c->ring_mode)
			tap_frame(c);
		if (ret >= 0)
			return ret;
		/* Too long is as malformed as unparsable for the caller. */
		return rt_consumer_fail(&c->cons, ret == -ENOMEM ? ret : -EBADMSG, "%s: %s",
					rt_wire_strerror(ret),
					c->reader.why ? c->reader.why : "no details");
	}
}

/*
 * Waits for a whole frame until the deadline. Returns 1 and its payload,
 * or 1 and NULL when the daemon closed the connection between frames, 0 at
 * the deadline, -EINTR, or -errno with the client's error set.
 */
static int wait_payload(struct ringtap_client *c, const uint8_t **payload, size_t *len,
			int64_t deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = c->t.fd };
		int ret = buffered_payload(c, payload, len);

		if (ret)
			return ret;
		ret = read_some(c);
		if (ret > 0)
			continue;
		if (ret == 0) {
			if (c->reader.have_len || c->reader.len_bytes)
				return rt_consumer_fail(&c->cons, -EBADMSG, "connection closed inside "
							"a frame");
			*payload = NULL;
			return 1;
		}
		if (ret != -EAGAIN)
			return rt_consumer_fail(&c->cons, ret, "reading from ringtapd: %s", c->t.error);
		pfd.events = rt_transport_poll_events(&c->t);
		ret = poll(&pfd, 1, remaining_ms(deadline));
		if (ret < 0 && errno == EINTR)
			return -EINTR;
		if (ret < 0)
			return rt_consumer_fail(&c->cons, -errno, "poll: %s", strerror(errno));
		if (ret == 0)
			return 0;
	}
}

/* The payload unpacked (and shown to the frame tap); -EBADMSG with the error set. */
static int unpack(struct ringtap_client *c, const uint8_t *payload, size_t len,
		  Ringtap__Frame **f)
{
	int ret = rt_wire_unpack(&c->reader, payload, len, f);

	if (ret < 0)
		return rt_consumer_fail(&c->cons, -EBADMSG, "%s: %s", rt_wire_strerror(ret),
					c->reader.why ? c->reader.why : "no details");
	if (c->frame_tap)
		c->frame_tap(c->tap_ctx, *f);
	return 1;
}

/* As wait_payload, unpacked: 1 and the frame (NULL at the end), 0, -errno. */
static int wait_frame(struct ringtap_client *c, Ringtap__Frame **f, int64_t deadline)
{
	const uint8_t *payload;
	size_t len;
	int ret = wait_payload(c, &payload, &len, deadline);

	*f = NULL;
	if (ret <= 0 || !payload)
		return ret;
	return unpack(c, payload, len, f);
}

static int send_all(struct ringtap_client *c, const uint8_t *p, size_t len, int64_t deadline)
{
	while (len) {
		struct pollfd pfd = { .fd = c->t.fd };
		ssize_t n = rt_transport_write(&c->t, p, len);
		int ret;

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n != -EAGAIN)
			return n ? (int)n : -EPIPE;
		pfd.events = rt_transport_poll_events(&c->t);
		ret = poll(&pfd, 1, remaining_ms(deadline));
		if (ret < 0 && errno != EINTR)
			return -errno;
		if (ret == 0)
			return -ETIMEDOUT;
	}
	return 0;
}

/* A frame made here for the tap: what the socket would have carried. */
static void tap_made(struct ringtap_client *c)
{
	if (c->ring_buf.len)
		c->tap(c->tap_ctx, c->ring_buf.data, c->ring_buf.len);
}

/* A ring event as the tap of a socket stream would have seen it (RAW: Pages, Lost). */
static void tap_ring_event(struct ringtap_client *c, const struct ringtap_event *ev)
{
	struct rt_frame_parts parts;
	struct rt_loss loss = { 0 };

	c->ring_buf.len = 0;
	if (ev->kind == RINGTAP_LOST) {
		loss.count = ev->lost->count;
		loss.exact = ev->lost->count_exact;
		if (!rt_encode_lost_frame(ev->cpu, ev->lost->source, &loss, &c->ring_buf))
			tap_made(c);
	} else if (ev->kind == RINGTAP_PAGE &&
		   !rt_encode_pages_parts(ev->cpu, ev->page->data, ev->page->len,
					  ev->page_records, 0, &parts)) {
		for (unsigned int i = 0; i < parts.n; i++)
			if (rt_buf_put(&c->ring_buf, parts.iov[i].iov_base, parts.iov[i].iov_len))
				return;
		tap_made(c);
	}
}

/* Views off: the record as protobuf-c unpacks it from the bytes ringtapd would have sent. */
static int ring_unpacked_record(struct ringtap_client *c, struct ringtap_event *ev)
{
	const uint8_t *msg;
	size_t len;
	int ret;

	if (c->ring_record)
		ringtap__record__free_unpacked(c->ring_record, NULL);
	c->ring_record = NULL;
	c->ring_buf.len = 0;
	ret = rt_ring_reader_record(c->ring, &c->ring_buf);
	if (!ret && rt_encode_inner(&c->ring_buf, false, &msg, &len))
		ret = -EINVAL;
	if (!ret && !(c->ring_record = ringtap__record__unpack(NULL, len, msg)))
		ret = -ENOMEM;
	if (ret)
		return rt_consumer_fail(&c->cons, ret, "a record from the ring: %s", strerror(-ret));
	ev->record = c->ring_record;
	return 1;
}

/* The previous ringtapd's area, unmapped once the reader read it to its end. */
static void ring_retire(struct ringtap_client *c)
{
	struct rt_ring_area old;

	if (c->old_map && rt_ring_reader_retired(c->ring, &old)) {
		munmap(old.base, old.size);
		c->old_map = NULL;
	}
}

/* The next event the ring holds: 1, 0 when the pages announced are read, -errno. */
static int ring_next(struct ringtap_client *c, struct ringtap_event *ev)
{
	const struct rt_record_view *view;
	struct rt_why why = { "" };
	int ret = rt_ring_reader_next(c->ring, ev, &view, &why);

	if (ret < 0)
		return rt_consumer_fail(&c->cons, ret, "reading the ring: %s", why.text);
	if (ret == 0) {
		/* Read to the end: a previous ringtapd's area is let go, even with no note coming. */
		ring_retire(c);
		return 0;
	}
	if (ev->kind == RINGTAP_RECORD) {
		if (!ev->schema)
			return rt_consumer_fail(&c->cons, -EPROTO, "a record of event id %" PRIu32
						" before its Schema", view->event_id);
		c->cons.view = *view;
		if (!c->views || c->frame_tap)
			return ring_unpacked_record(c, ev);
	} else if (c->tap) {
		tap_ring_event(c, ev);
	}
	return 1;
}

/*
 * A RAW Schema from ringtapd: learned by the ring reader; given to the
 * consumer as it came (RAW) or as the DECODED Schema it stands for.
 */
static int ring_schema(struct ringtap_client *c, Ringtap__Frame *f, struct ringtap_event *ev)
{
	struct rt_why why = { "" };
	Ringtap__Frame *decoded = NULL;
	const Ringtap__Schema *s;
	int ret = rt_ring_reader_schema(c->ring, f->schema, &decoded, &why);

	if (ret) {
		ringtap__frame__free_unpacked(f, NULL);
		return rt_consumer_fail(&c->cons, ret, "%s", why.text);
	}
	if (c->asked == RINGTAP__ENCODING__RAW) {
		if (c->tap)
			ring_tap(c);
	} else {
		ringtap__frame__free_unpacked(f, NULL);
		f = decoded;
		if (!f)
			return 0;	/* an event this subscription did not name */
	}
	s = f->schema;
	ret = rt_consumer_take(&c->cons, f, ev);
	if (ret >= 0)
		rt_ring_reader_bind_schema(c->ring, s);
	return ret;
}

/*
 * A Ring frame mid-stream: ringtapd restarted and writes on in a new area.
 * Mapped and given to the reader, which reads what the old one holds
 * first. 0, or -errno with why.
 */
static int ring_move(struct ringtap_client *c, const Ringtap__Ring *ring, struct rt_why *why)
{
	struct rt_ring_area dropped;
	int fd = rt_transport_take_fd(&c->t);
	void *map;
	int ret;

	if (fd < 0)
		return rt_why_set(why, -EPROTO, "a new Ring frame without its descriptor");
	if (ring->size > SIZE_MAX || !ring->size) {
		close(fd);
		return rt_why_set(why, -EPROTO, "a new ring of %" PRIu64 " bytes", ring->size);
	}
	map = mmap(NULL, (size_t)ring->size, PROT_READ, MAP_SHARED, fd, 0);
	ret = map == MAP_FAILED ? -errno : 0;
	close(fd);
	if (ret)
		return rt_why_set(why, ret, "mapping ringtapd's new ring: %s", strerror(-ret));
	ret = rt_ring_reader_move(c->ring, ring, map, (size_t)ring->size, &dropped, why);
	if (ret) {
		munmap(map, (size_t)ring->size);
		return ret;
	}
	if (dropped.base)
		munmap(dropped.base, dropped.size);
	/* The old area stays mapped until the reader has read it out (ring_retire). */
	c->old_map = c->ring_map;
	c->old_size = c->ring_size;
	c->ring_map = map;
	c->ring_size = (size_t)ring->size;
	return 0;
}

/* A frame on a RING client's socket: 1 with an event, 0 without, -errno. */
static int ring_frame(struct ringtap_client *c, Ringtap__Frame *f, struct ringtap_event *ev)
{
	struct rt_why why = { "" };
	int ret;

	switch (f->msg_case) {
	case RINGTAP__FRAME__MSG_RING_READY:
		ret = rt_ring_reader_ready(c->ring, f->ring_ready, &why);
		ringtap__frame__free_unpacked(f, NULL);
		ring_retire(c);
		return ret ? rt_consumer_fail(&c->cons, ret, "%s", why.text) : 0;
	case RINGTAP__FRAME__MSG_SCHEMA:
		return ring_schema(c, f, ev);
	case RINGTAP__FRAME__MSG_RING:
		ret = ring_move(c, f->ring, &why);
		ringtap__frame__free_unpacked(f, NULL);
		return ret ? rt_consumer_fail(&c->cons, ret, "%s", why.text) : 0;
	case RINGTAP__FRAME__MSG_PAGES:
	case RINGTAP__FRAME__MSG_BATCH:
	case RINGTAP__FRAME__MSG_FIXED:
		ret = rt_consumer_fail(&c->cons, -EPROTO, "a %s frame to a ring reader",
				       rt_wire_frame_name(f));
		ringtap__frame__free_unpacked(f, NULL);
		return ret;
	default:
		if (c->tap)
			tap_frame(c);
		return rt_consumer_take(&c->cons, f, ev);
	}
}

static int next_event(struct ringtap_client *c, struct ringtap_event *ev, int timeout_ms)
{
	int64_t deadline = deadline_after(timeout_ms);
	int ret = rt_consumer_next(&c->cons, ev);

	if (ret)
		return ret;
	if (c->tap_later.len)
		tap_the_start(c);
	if (c->early_next < c->n_early) {
		ret = rt_consumer_take(&c->cons, c->early[c->early_next++], ev);
		if (ret)
			return ret;
	}
	/* The pages announced so far are read before the next note, Bye included. */
	if (c->ring && (ret = ring_next(c, ev)))
		return ret;
	for (;;) {
		const uint8_t *payload;
		Ringtap__Frame *f;
		size_t len;

		ret = wait_payload(c, &payload, &len, deadline);
		if (ret <= 0)
			return ret;
		if (!payload)
			return rt_consumer_end(&c->cons, false, ev);
		if (c->ring) {
			ret = unpack(c, payload, len, &f);
			ret = ret < 0 ? ret : ring_frame(c, f, ev);
			if (!ret)
				ret = ring_next(c, ev);
			if (ret)
				return ret;
			continue;
		}
		/* Batches and Pages read in place when asked (a frame tap wants every frame unpacked). */
		ret = c->views && !c->frame_tap ?
			      rt_consumer_take_in_place(&c->cons, payload, len, ev) : -ENOMSG;
		if (ret == -ENOMSG) {
			ret = unpack(c, payload, len, &f);
			if (ret < 0)
				return ret;
			ret = rt_consumer_take(&c->cons, f, ev);
		}
		if (ret)
			return ret;
		/* A Schema, or an empty Batch: nothing to give yet. */
		ret = rt_consumer_next(&c->cons, ev);
		if (ret)
			return ret;
	}
}

/* The seq of the last record an event hands out (a page's last); 0: none. */
static uint64_t event_seq(const struct ringtap_client *c, const struct ringtap_event *ev)
{
	const Ringtap__Frame *cur = c->cons.cur;
	uint64_t first = 0;

	switch (ev->kind) {
	case RINGTAP_RECORD:
		return ev->record ? (ev->record->has_seq ? ev->record->seq : 0) : c->cons.view.seq;
	case RINGTAP_FIXED:
		return ev->fixed->has_seq ? ev->fixed->seq : 0;
	case RINGTAP_PAGE:
		if (c->cons.in_place == RINGTAP__FRAME__MSG_PAGES)
			first = c->cons.pages.first_seq;
		else if (cur && cur->msg_case == RINGTAP__FRAME__MSG_PAGES &&
			 cur->pages->has_first_seq && cur->pages->n_pages == 1)
			first = cur->pages->first_seq;
		return first && ev->page_records ? first + ev->page_records - 1 : 0;
	default:
		return 0;
	}
}

/* The seq a resumable stream's event moves its CPU's place to; 0: none (not a record or page). */
static uint64_t place_of(const struct ringtap_client *c, const struct ringtap_event *ev)
{
	if (!c->ring_mode)
		return event_seq(c, ev);
	/* The reader's last is this event's: a record or page it just handed out. */
	return ev->kind == RINGTAP_RECORD || ev->kind == RINGTAP_PAGE ?
	       rt_ring_reader_seq(c->ring) : 0;
}

int ringtap_next(struct ringtap_client *c, struct ringtap_event *ev, int timeout_ms)
{
	uint64_t seq;
	int ret;

	/* Its reader went to a saved place (ringtap_resume_save): nothing more to read here. */
	if (c->ring_mode && !c->ring)
		return rt_consumer_fail(&c->cons, -ENOTCONN, "this stream's ring reader was "
					"saved to resume elsewhere");
	ret = next_event(c, ev, timeout_ms);

	/* The place moves as the event is handed out: what was handed out is never sent again. */
	if (ret == 1 && c->resumable && ev->cpu < c->n_places && (seq = place_of(c, ev)) &&
	    seq > c->places[ev->cpu])
		c->places[ev->cpu] = seq;
	return ret;
}

struct ringtap_resume {
	uint8_t *token;
	size_t token_len;
	uint64_t *seqs;			/* per CPU */
	size_t n_seqs;
	/*
	 * A ring reader's place is its reader: the cursors and the areas it
	 * maps, the dead or stopped daemon's among them, go to the client that
	 * resumes (ring_resume), which reads on in them and then in the new one.
	 */
	struct rt_ring_reader *ring;
	void *ring_map, *old_map;
	size_t ring_size, old_size;
};

/* The ring a place holds, let go. */
static void resume_drop_ring(struct ringtap_resume *r)
{
	rt_ring_reader_free(r->ring);
	if (r->ring_map)
		munmap(r->ring_map, r->ring_size);
	if (r->old_map)
		munmap(r->old_map, r->old_size);
	r->ring = NULL;
	r->ring_map = r->old_map = NULL;
}

struct ringtap_resume *ringtap_resume_new(void)
{
	return calloc(1, sizeof(struct ringtap_resume));
}

void ringtap_resume_free(struct ringtap_resume *r)
{
	if (!r)
		return;
	resume_drop_ring(r);
	free(r->token);
	free(r->seqs);
	free(r);
}

/* The reader and its areas go from the client to the place (which holds none). */
static void ring_to_place(struct ringtap_client *c, struct ringtap_resume *r)
{
	r->ring = c->ring;
	r->ring_map = c->ring_map;
	r->ring_size = c->ring_size;
	r->old_map = c->old_map;
	r->old_size = c->old_size;
	c->ring = NULL;
	c->ring_map = c->old_map = NULL;
}

int ringtap_resume_save(struct ringtap_client *c, struct ringtap_resume *r)
{
	const Ringtap__Welcome *w = c ? ringtap_welcome(c) : NULL;
	uint8_t *token;
	uint64_t *seqs;

	if (!c || !r || !c->resumable || !w || !w->has_resume_token)
		return -EINVAL;
	token = malloc(w->resume_token.len ?: 1);
	seqs = malloc((c->n_places ?: 1) * sizeof(*seqs));
	if (!token || !seqs) {
		free(token);
		free(seqs);
		return -ENOMEM;
	}
	memcpy(token, w->resume_token.data, w->resume_token.len);
	memcpy(seqs, c->places, c->n_places * sizeof(*seqs));
	free(r->token);
	free(r->seqs);
	r->token = token;
	r->token_len = w->resume_token.len;
	r->seqs = seqs;
	r->n_seqs = c->n_places;
	/* Saved twice: the reader went with the first save, and stays where it went. */
	if (c->ring_mode && c->ring && c->ring_map) {
		resume_drop_ring(r);
		/* Its Schemas are this client's, gone with it: the next connection's bind anew. */
		rt_ring_reader_unbind_schemas(c->ring);
		ring_to_place(c, r);
	}
	return 0;
}

size_t ringtap_resume_cpus(const struct ringtap_resume *r)
{
	return r ? r->n_seqs : 0;
}

uint64_t ringtap_resume_seq(const struct ringtap_resume *r, unsigned int cpu)
{
	return r && cpu < r->n_seqs ? r->seqs[cpu] : 0;
}

/* The public view types are the core's, field for field: a view is handed out as it is. */
_Static_assert(sizeof(struct ringtap_value) == sizeof(struct rt_value) &&
	       offsetof(struct ringtap_value, u) == offsetof(struct rt_value, u) &&
	       offsetof(struct ringtap_value, bytes) == offsetof(struct rt_value, bytes) &&
	       offsetof(struct ringtap_value, len) == offsetof(struct rt_value, len) &&
	       offsetof(struct ringtap_value, symbol) == offsetof(struct rt_value, symbol) &&
	       offsetof(struct ringtap_value, symbol_len) == offsetof(struct rt_value, symbol_len),
	       "struct ringtap_value is struct rt_value");
_Static_assert((int)RINGTAP_VALUE_NONE == (int)RT_VALUE_NONE &&
	       (int)RINGTAP_VALUE_SIGNED == (int)RT_VALUE_SIGNED &&
	       (int)RINGTAP_VALUE_UNSIGNED == (int)RT_VALUE_UNSIGNED &&
	       (int)RINGTAP_VALUE_TEXT == (int)RT_VALUE_TEXT &&
	       (int)RINGTAP_VALUE_BYTES == (int)RT_VALUE_BYTES, "the value kinds are the core's");
_Static_assert(sizeof(struct ringtap_record_view) == sizeof(struct rt_record_view) &&
	       offsetof(struct ringtap_record_view, timestamp) ==
	       offsetof(struct rt_record_view, timestamp) &&
	       offsetof(struct ringtap_record_view, event_id) ==
	       offsetof(struct rt_record_view, event_id) &&
	       offsetof(struct ringtap_record_view, pid) == offsetof(struct rt_record_view, pid) &&
	       offsetof(struct ringtap_record_view, seq) == offsetof(struct rt_record_view, seq) &&
	       offsetof(struct ringtap_record_view, n_fields) ==
	       offsetof(struct rt_record_view, n_fields) &&
	       offsetof(struct ringtap_record_view, n_common) ==
	       offsetof(struct rt_record_view, n_common) &&
	       offsetof(struct ringtap_record_view, fields) ==
	       offsetof(struct rt_record_view, fields) &&
	       offsetof(struct ringtap_record_view, common) ==
	       offsetof(struct rt_record_view, common), "struct ringtap_record_view is the core's");

void ringtap_set_frame_tap(struct ringtap_client *c,
			   void (*frame_tap)(void *ctx, const Ringtap__Frame *frame))
{
	c->frame_tap = frame_tap;
}

void ringtap_set_record_views(struct ringtap_client *c, bool on)
{
	c->views = on;
}

/* The view of the current record: read in place, or of its unpacked message. */
static const struct rt_record_view *view_of(struct ringtap_client *c,
					    const struct ringtap_event *ev)
{
	size_t n;

	if (ev->kind != RINGTAP_RECORD)
		return NULL;
	if (!ev->record)
		return &c->cons.view;
	n = ev->record->n_fields + ev->record->n_common;
	if (n > c->n_scratch) {
		struct rt_value *grown = realloc(c->scratch, n * sizeof(*grown));

		if (!grown)
			return NULL;
		c->scratch = grown;
		c->n_scratch = n;
	}
	if (rt_record_view_of(ev->record, &c->scratch_view, c->scratch, c->n_scratch))
		return NULL;
	return &c->scratch_view;
}

const struct ringtap_record_view *ringtap_record_view(struct ringtap_client *c,
						      const struct ringtap_event *ev)
{
	return (const struct ringtap_record_view *)view_of(c, ev);
}

const char *ringtap_error_text(const struct ringtap_client *c)
{
	return c->cons.errtext;
}

const Ringtap__Schema *ringtap_find_schema(const struct ringtap_client *c, const char *system,
					   const char *name)
{
	return rt_consumer_find_schema(&c->cons, system, name);
}

bool ringtap_uses_ring(const struct ringtap_client *c)
{
	return c->ring != NULL;
}

int ringtap_fd(const struct ringtap_client *c)
{
	return c->t.fd;
}

const Ringtap__Welcome *ringtap_welcome(const struct ringtap_client *c)
{
	return c->cons.welcome->welcome;
}

static void send_bye(struct ringtap_client *c)
{
	Ringtap__Frame frame = RINGTAP__FRAME__INIT;
	Ringtap__Bye bye = RINGTAP__BYE__INIT;
	uint8_t *bytes;
	size_t len;

	if (c->bye_sent)
		return;
	c->bye_sent = true;
	frame.msg_case = RINGTAP__FRAME__MSG_BYE;
	frame.bye = &bye;
	if (rt_wire_encode(&frame, &bytes, &len))
		return;
	/* Best effort: a daemon that is gone or not reading does not hold up close. */
	(void)rt_transport_write(&c->t, bytes, len);
	free(bytes);
}

int ringtap_bye(struct ringtap_client *c)
{
	if (c->cons.error)
		return c->cons.error;
	if (c->t.fd < 0)
		return -ENOTCONN;
	send_bye(c);
	return 0;
}

void ringtap_close(struct ringtap_client *c)
{
	if (!c)
		return;
	if (c->t.fd >= 0)
		send_bye(c);
	rt_transport_close(&c->t);
	rt_consumer_release(&c->cons);
	rt_ring_reader_free(c->ring);
	if (c->ring_map)
		munmap(c->ring_map, c->ring_size);
	if (c->old_map)
		munmap(c->old_map, c->old_size);
	if (c->ring_record)
		ringtap__record__free_unpacked(c->ring_record, NULL);
	rt_buf_free(&c->ring_buf);
	rt_buf_free(&c->tap_later);
	for (size_t i = c->early_next; i < c->n_early; i++)
		ringtap__frame__free_unpacked(c->early[i], NULL);
	free(c->early);
	free(c->scratch);
	free(c->places);
	rt_wire_reader_release(&c->reader);
	free(c->rbuf);
	free(c);
}

static int set_err(struct ringtap_connect_error *err, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int set_err(struct ringtap_connect_error *err, int ret, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return ret;
	va_start(ap, fmt);
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	va_end(ap);
	return ret;
}

static int refusal_errno(Ringtap__RefusalReason reason)
{
	switch (reason) {
	case RINGTAP__REFUSAL_REASON__NO_COMMON_VERSION:
		return -EPROTONOSUPPORT;
	case RINGTAP__REFUSAL_REASON__NO_ACCEPTABLE_ENCODING:
		return -ENOPROTOOPT;
	case RINGTAP__REFUSAL_REASON__UNKNOWN_EVENT:
		return -ENOENT;
	case RINGTAP__REFUSAL_REASON__NOT_AUTHORIZED:
		return -EACCES;
	case RINGTAP__REFUSAL_REASON__BAD_SUBSCRIPTION:
		return -EINVAL;
	case RINGTAP__REFUSAL_REASON__RESUME_REFUSED:
		return -ESTALE;
	default:
		return -ECONNREFUSED;
	}
}

/*
 * The subscription the options describe; false when they name no event.
 * The same for the ring: ringtapd checks it as a DECODED one, the ring
 * reader applies what the kernel does not.
 */
static bool fill_subscription(const struct ringtap_client_opts *o, Ringtap__Subscription *sub)
{
	size_t n_events = 0;

	while (o->events && o->events[n_events])
		n_events++;
	if (!n_events)
		return false;
	sub->n_events = n_events;
	sub->events = (char **)o->events;
	sub->n_cpus = o->n_cpus;
	sub->cpus = (uint32_t *)o->cpus;
	sub->n_pids = o->n_pids;
	sub->pids = (int32_t *)o->pids;
	sub->fixed_layout = (char *)o->fixed_layout;
	sub->filter = (char *)o->filter;
	while (o->fields && o->fields[sub->n_fields])
		sub->n_fields++;
	sub->fields = (char **)o->fields;
	sub->has_common_fields = o->common_fields;
	sub->common_fields = o->common_fields;
	sub->has_host_texts = o->host_texts;
	sub->host_texts = o->host_texts;
	sub->has_max_latency_ms = o->max_latency_ms != 0;
	sub->max_latency_ms = o->max_latency_ms;
	return true;
}

int ringtap_update(struct ringtap_client *c, const struct ringtap_client_opts *o)
{
	Ringtap__Frame frame = RINGTAP__FRAME__INIT;
	Ringtap__Update update = RINGTAP__UPDATE__INIT;
	Ringtap__Subscription sub = RINGTAP__SUBSCRIPTION__INIT;
	_cleanup_free_ uint8_t *bytes = NULL;
	size_t len;
	int ret;

	if (c->cons.error)
		return c->cons.error;
	/* A DECODED ring reader applies its subscription itself, as it was at the Hello. */
	if (c->ring && c->asked != RINGTAP__ENCODING__RAW)
		return -EOPNOTSUPP;
	if (!fill_subscription(o, &sub))
		return -EINVAL;
	update.subscription = &sub;
	frame.msg_case = RINGTAP__FRAME__MSG_UPDATE;
	frame.update = &update;
	ret = rt_wire_encode(&frame, &bytes, &len);
	if (!ret && len > HELLO_MAX)
		ret = -EMSGSIZE;
	return ret ?: send_all(c, bytes, len, deadline_after(DEFAULT_TIMEOUT_MS));
}

static int send_hello(struct ringtap_client *c, const struct ringtap_client_opts *o,
		      int64_t deadline, struct ringtap_connect_error *err)
{
	Ringtap__Encoding encodings[] = { c->asked, RINGTAP__ENCODING__RAW };
	Ringtap__Frame frame = RINGTAP__FRAME__INIT;
	Ringtap__Hello hello = RINGTAP__HELLO__INIT;
	Ringtap__Subscription sub = RINGTAP__SUBSCRIPTION__INIT;
	Ringtap__Resume resume = RINGTAP__RESUME__INIT;
	_cleanup_free_ uint32_t *resume_cpus = NULL;
	_cleanup_free_ uint8_t *bytes = NULL;
	size_t len;
	int ret;

	hello.min_version = RINGTAP_PROTOCOL_VERSION;
	hello.max_version = RINGTAP_PROTOCOL_VERSION;
	hello.n_encodings = 1;
	hello.encodings = encodings;
	hello.client_name = (char *)(o->client_name ? o->client_name : "libringtap");
	/*
	 * The ring: version 2 and RAW, which a ring daemon picks whatever the
	 * order. Ring or socket: one Hello for both, the encoding asked first
	 * and version 1 allowed, which an older daemon answers on the socket.
	 */
	if (c->ring_mode) {
		hello.max_version = RING_PROTOCOL_VERSION;
		if (o->transport == RINGTAP_TRANSPORT_RING)
			hello.min_version = RING_PROTOCOL_VERSION;
		hello.n_encodings = c->asked == RINGTAP__ENCODING__RAW ? 1 : 2;
		hello.has_transport = true;
		hello.transport = RINGTAP__TRANSPORT__RING;
		/* ring_move takes the new area a restarted ringtapd sends. */
		hello.has_ring_moves = hello.ring_moves = true;
	}
	if (fill_subscription(o, &sub))
		hello.subscription = &sub;
	if (c->resumable) {
		const struct ringtap_resume *r = c->resume_from;

		hello.has_resumable = hello.resumable = true;
		if (r && r->token_len) {
			resume.token.data = r->token;
			resume.token.len = r->token_len;
			resume.n_seqs = resume.n_cpus = r->n_seqs;
			resume.seqs = r->seqs;
			resume.cpus = resume_cpus = calloc(r->n_seqs ?: 1, sizeof(*resume_cpus));
			if (!resume_cpus)
				return set_err(err, -ENOMEM, "out of memory");
			for (size_t i = 0; i < r->n_seqs; i++)
				resume_cpus[i] = (uint32_t)i;
			hello.resume = &resume;
		}
	}
	frame.msg_case = RINGTAP__FRAME__MSG_HELLO;
	frame.hello = &hello;
	ret = rt_wire_encode(&frame, &bytes, &len);
	if (ret == 0 && len > HELLO_MAX)
		ret = -EMSGSIZE;
	if (ret == -EMSGSIZE)
		return set_err(err, ret, "the Hello would be over the daemon's 64 KiB limit");
	if (ret)
		return set_err(err, ret, "cannot make the Hello: %s", strerror(-ret));
	ret = send_all(c, bytes, len, deadline);
	if (ret)
		return set_err(err, ret, "sending the Hello: %s", strerror(-ret));
	return 0;
}

/* Waits for Welcome or Refusal; 0 with c->welcome set, or -errno with err. */
static int read_answer(struct ringtap_client *c, const char *path, int timeout_ms, int64_t deadline,
		       struct ringtap_connect_error *err)
{
	Ringtap__Frame *f = NULL;
	int ret;

	do
		ret = wait_frame(c, &f, deadline);
	while (ret == -EINTR);
	if (ret == 0)
		return set_err(err, -ETIMEDOUT, "no answer from %s within %d ms", path, timeout_ms);
	if (ret < 0)
		return set_err(err, ret, "%s: %s", path, c->cons.errtext);
	if (!f)
		return set_err(err, -ECONNRESET, "%s closed the connection without an answer",
			       path);
	switch (f->msg_case) {
	case RINGTAP__FRAME__MSG_WELCOME:
		/* Version 1: a daemon without the ring took the Hello as a socket one. */
		if (c->ring_mode && f->welcome->version < RING_PROTOCOL_VERSION) {
			c->ring_mode = false;
			c->encoding = c->asked;
			if (c->tap)
				tap_frame(c);
		}
		ret = rt_consumer_welcome(&c->cons, f, c->ring_mode ? RING_PROTOCOL_VERSION :
					  RINGTAP_PROTOCOL_VERSION, c->encoding);
		if (!ret)
			return 0;
		set_err(err, ret, "%s", c->cons.errtext);
		break;
	case RINGTAP__FRAME__MSG_REFUSAL:
		ret = refusal_errno(f->refusal->reason);
		if (err)
			err->refusal = f->refusal->reason;
		set_err(err, ret, "ringtapd refused the connection (%s): %s",
			enum_name(&ringtap__refusal_reason__descriptor, f->refusal->reason),
			f->refusal->text ? f->refusal->text : "no reason given");
		break;
	case RINGTAP__FRAME__MSG_ERROR:
		/* The daemon could not make sense of the Hello. */
		ret = f->error->code > 0 && f->error->code < 4096 ? -(int)f->error->code : -EPROTO;
		set_err(err, ret, "ringtapd: %s (%s)", f->error->text, strerror(-ret));
		break;
	default:
		ret = set_err(err, -EPROTO, "ringtapd answered the Hello with a %s frame",
			      rt_wire_frame_name(f));
		break;
	}
	ringtap__frame__free_unpacked(f, NULL);
	return ret;
}

/* The Ring frame's area mapped and attached: 0, or -errno with err. */
static int ring_attach(struct ringtap_client *c, Ringtap__Frame *f,
		       struct ringtap_connect_error *err)
{
	struct rt_why why = { "" };
	int fd = rt_transport_take_fd(&c->t);
	int ret;

	if (fd < 0)
		return set_err(err, -EPROTO, "ringtapd sent the Ring frame without its descriptor");
	if (f->ring->size > SIZE_MAX) {
		close(fd);
		return set_err(err, -EPROTO, "a ring of %" PRIu64 " bytes", f->ring->size);
	}
	c->ring_size = (size_t)f->ring->size;
	c->ring_map = mmap(NULL, c->ring_size, PROT_READ, MAP_SHARED, fd, 0);
	ret = c->ring_map == MAP_FAILED ? -errno : 0;
	close(fd);
	if (ret) {
		c->ring_map = NULL;
		return set_err(err, ret, "mapping ringtapd's ring: %s", strerror(-ret));
	}
	ret = rt_ring_reader_attach(c->ring, f->ring, c->ring_map, c->ring_size, &why);
	return ret ? set_err(err, ret, "ringtapd's ring: %s", why.text) : 0;
}

/*
 * The Welcome as the tap of a socket stream sees it: version 1, the
 * encoding asked. What the ring adds to version 2 never reaches the tap,
 * and a recording made over the ring is then the one the socket gives.
 */
static void tap_welcome(struct ringtap_client *c)
{
	Ringtap__Welcome *w = c->cons.welcome->welcome;
	uint8_t *bytes;
	size_t len;

	w->version = RINGTAP_PROTOCOL_VERSION;
	w->encoding = c->asked;
	if (!rt_wire_encode(c->cons.welcome, &bytes, &len)) {
		c->tap(c->tap_ctx, bytes, len);
		free(bytes);
	}
	w->version = RING_PROTOCOL_VERSION;
	w->encoding = RINGTAP__ENCODING__RAW;
}

static int keep_early(struct ringtap_client *c, Ringtap__Frame *f)
{
	Ringtap__Frame **grown = realloc(c->early, (c->n_early + 1) * sizeof(*grown));

	if (!grown) {
		ringtap__frame__free_unpacked(f, NULL);
		return -ENOMEM;
	}
	c->early = grown;
	c->early[c->n_early++] = f;
	return 0;
}

/*
 * RING connect frames until one of kind want (the caller's): Schemas
 * learned, Heartbeats and CpuStates kept as events, notes taken, a
 * HostTexts (the one asked, or the Hello's) given its kallsyms. 0, or
 * -errno with err.
 */
static int ring_wait_for(struct ringtap_client *c, Ringtap__Frame__MsgCase want,
			 Ringtap__Frame **out, int64_t deadline, struct ringtap_connect_error *err)
{
	struct rt_why why = { "" };
	struct ringtap_event ev;
	int ret;

	for (;;) {
		const Ringtap__HostTexts *h;
		Ringtap__Frame *f;

		do
			ret = wait_frame(c, &f, deadline);
		while (ret == -EINTR);
		if (ret == 0)
			return set_err(err, -ETIMEDOUT, "no %s frame from ringtapd in time",
				       want == RINGTAP__FRAME__MSG_RING ? "Ring" : "HostTexts");
		if (ret < 0)
			return set_err(err, ret, "%s", c->cons.errtext);
		if (!f)
			return set_err(err, -ECONNRESET, "ringtapd closed the connection while it "
				       "started the ring");
		switch (f->msg_case) {
		case RINGTAP__FRAME__MSG_SCHEMA:
			ret = ring_schema(c, f, &ev);
			if (ret < 0)
				return set_err(err, ret, "%s", c->cons.errtext);
			continue;
		case RINGTAP__FRAME__MSG_HEARTBEAT:
		case RINGTAP__FRAME__MSG_CPU_STATE:
			/* Events for ringtap_next(), as on the socket. */
			if (c->tap)
				ring_tap(c);
			ret = keep_early(c, f);
			if (ret)
				return set_err(err, ret, "out of memory");
			continue;
		case RINGTAP__FRAME__MSG_RING_READY:
			if (want == RINGTAP__FRAME__MSG_RING)
				break;
			ret = rt_ring_reader_ready(c->ring, f->ring_ready, &why);
			ringtap__frame__free_unpacked(f, NULL);
			if (ret)
				return set_err(err, ret, "%s", why.text);
			continue;
		case RINGTAP__FRAME__MSG_HOST_TEXTS:
			if (c->tap)
				ring_tap(c);
			h = f->host_texts;
			ret = c->ring && h->has_kallsyms ?
				rt_ring_reader_symbols(c->ring, h->kallsyms.data, h->kallsyms.len) : 0;
			if (!ret && want == RINGTAP__FRAME__MSG_HOST_TEXTS) {
				*out = f;
				return 0;
			}
			ringtap__frame__free_unpacked(f, NULL);
			if (ret)
				return set_err(err, ret, "out of memory");
			continue;
		case RINGTAP__FRAME__MSG_RING:
			if (want != RINGTAP__FRAME__MSG_RING)
				break;
			*out = f;
			return 0;
		default:
			break;
		}
		ret = set_err(err, -EPROTO, "ringtapd sent a %s frame while it started the ring",
			      rt_wire_frame_name(f));
		ringtap__frame__free_unpacked(f, NULL);
		return ret;
	}
}

/*
 * The names of the kernel functions pointer fields hold, which ringtapd
 * adds to DECODED records when it reads kallsyms: asked once the Schemas
 * show a selected field that needs them (kallsyms is megabytes), with an
 * Update that repeats the subscription and asks for the HostTexts.
 */
static int ring_symbols(struct ringtap_client *c, const struct ringtap_client_opts *o,
			int64_t deadline, struct ringtap_connect_error *err)
{
	Ringtap__Frame frame = RINGTAP__FRAME__INIT, *f = NULL;
	Ringtap__Update update = RINGTAP__UPDATE__INIT;
	Ringtap__Subscription sub = RINGTAP__SUBSCRIPTION__INIT;
	_cleanup_free_ uint8_t *bytes = NULL;
	size_t len;
	int ret;

	if (!rt_ring_reader_wants_symbols(c->ring) || !fill_subscription(o, &sub))
		return 0;
	sub.has_host_texts = sub.host_texts = true;
	update.subscription = &sub;
	frame.msg_case = RINGTAP__FRAME__MSG_UPDATE;
	frame.update = &update;
	ret = rt_wire_encode(&frame, &bytes, &len);
	ret = ret ?: send_all(c, bytes, len, deadline);
	if (ret)
		return set_err(err, ret, "asking ringtapd for kallsyms: %s", strerror(-ret));
	ret = ring_wait_for(c, RINGTAP__FRAME__MSG_HOST_TEXTS, &f, deadline, err);
	if (f)
		ringtap__frame__free_unpacked(f, NULL);
	return ret;
}

/*
 * A resumed ring reader whose connection failed: the reader goes back to
 * the place as it is now (a new area it mapped included), for the next try.
 */
static void ring_give_back(struct ringtap_client *c)
{
	struct ringtap_resume *r = c->resume_from;

	if (!c->ring_borrowed)
		return;
	c->ring_borrowed = false;
	ring_to_place(c, r);
}

/*
 * A resumed ring reader: the reader the place holds, with its cursors and
 * areas, reads on; the new daemon's Ring is the area after them, as after
 * a restart (ring_move). The place keeps the reader until the connection
 * is made (connect_with), and has it back if it fails.
 */
static int ring_resume(struct ringtap_client *c, const struct ringtap_client_opts *o,
		       int64_t deadline, struct ringtap_connect_error *err)
{
	struct ringtap_resume *r = c->resume_from;
	struct rt_why why = { "" };
	Ringtap__Frame *f = NULL;
	int ret;

	/* The Schemas before the Ring go to the reader, which learns them again. */
	c->ring = r->ring;
	c->ring_map = r->ring_map;
	c->ring_size = r->ring_size;
	c->old_map = r->old_map;
	c->old_size = r->old_size;
	c->ring_borrowed = true;
	ret = ring_wait_for(c, RINGTAP__FRAME__MSG_RING, &f, deadline, err);
	if (ret)
		return ret;
	ret = ring_move(c, f->ring, &why);
	ringtap__frame__free_unpacked(f, NULL);
	if (ret)
		return set_err(err, ret, "ringtapd's ring: %s", why.text);
	ret = ring_symbols(c, o, deadline, err);
	c->starting = false;
	return ret;
}

/*
 * After a RING Welcome: the Schemas that come first, then the Ring frame
 * and its descriptor, and kallsyms when a pointer field wants it. 0 with
 * the ring attached, or -errno with err.
 */
static int ring_start(struct ringtap_client *c, const struct ringtap_client_opts *o,
		      int64_t deadline, struct ringtap_connect_error *err)
{
	struct rt_ring_reader_opts ro = {
		.encoding = c->asked, .events = o->events, .cpus = o->cpus, .n_cpus = o->n_cpus,
		.pids = o->pids, .n_pids = o->n_pids, .filter = o->filter, .fields = o->fields,
		.common = o->common_fields,
	};
	struct rt_why why = { "" };
	Ringtap__Frame *f = NULL;
	int ret;

	if (c->tap)
		tap_welcome(c);
	c->starting = true;
	if (c->resume_from && c->resume_from->ring)
		return ring_resume(c, o, deadline, err);
	/* A ring reader's place without its reader: resuming would skip what it had not read. */
	if (c->resume_from) {
		if (err)
			err->refusal = RINGTAP__REFUSAL_REASON__RESUME_REFUSED;
		return set_err(err, -ESTALE, "the place to resume from holds no ring reader (it "
			       "was saved from another stream, or its reader was let go)");
	}
	ret = rt_ring_reader_new(&c->ring, ringtap_welcome(c), &ro, &why);
	if (ret)
		return set_err(err, ret, "%s", why.text[0] ? why.text : strerror(-ret));
	ret = ring_wait_for(c, RINGTAP__FRAME__MSG_RING, &f, deadline, err);
	if (ret)
		return ret;
	ret = ring_attach(c, f, err);
	ringtap__frame__free_unpacked(f, NULL);
	ret = ret ?: ring_symbols(c, o, deadline, err);
	c->starting = false;
	return ret;
}

/*
 * Whether a ring Hello failed for the ring's sake, when the socket may
 * still serve: refused for the version, the encoding or authorization
 * (a peer ringtapd does not let map the ring), or a Welcome not followed
 * by a usable ring. Unknown events, a bad subscription, a daemon that is
 * not there fail the same on the socket.
 */
static bool ring_refused(int ret, const struct ringtap_connect_error *err)
{
	switch (ret) {
	case -EPROTONOSUPPORT:
	case -ENOPROTOOPT:
	case -EACCES:
	case -EPROTO:
	case -EBADMSG:
		return true;
	default:
		return err && !err->refusal && ret != -ENOMEM && ret != -ETIMEDOUT &&
		       ret != -ECONNRESET && ret != -ENOENT && ret != -EINVAL &&
		       ret != -ECONNREFUSED;
	}
}

/* The places a resumable stream starts from: the Welcome's (the resume's, when it resumed). */
static int take_places(struct ringtap_client *c, struct ringtap_connect_error *err)
{
	const Ringtap__Welcome *w = ringtap_welcome(c);

	if (!w->has_resume_token || w->n_start_seq != w->cpus)
		return set_err(err, -EPROTONOSUPPORT, "ringtapd does not resume streams (its "
			       "Welcome carries no resume token): an older daemon");
	c->places = calloc(w->cpus ?: 1, sizeof(*c->places));
	if (!c->places)
		return set_err(err, -ENOMEM, "out of memory");
	memcpy(c->places, w->start_seq, w->cpus * sizeof(*c->places));
	/* A ring reader resumed goes on from its own place, not from where the daemon reads. */
	if (c->ring_mode && c->resume_from && c->resume_from->n_seqs == w->cpus)
		memcpy(c->places, c->resume_from->seqs, w->cpus * sizeof(*c->places));
	c->n_places = w->cpus;
	return 0;
}

static int connect_with(struct ringtap_client **out, const struct ringtap_client_opts *opts,
			bool resumable, struct ringtap_resume *from,
			struct ringtap_connect_error *err);

int ringtap_connect(struct ringtap_client **out, const struct ringtap_client_opts *opts,
		    struct ringtap_connect_error *err)
{
	return connect_with(out, opts, false, NULL, err);
}

int ringtap_connect_resumable(struct ringtap_client **out, const struct ringtap_client_opts *opts,
			      struct ringtap_resume *from, struct ringtap_connect_error *err)
{
	return connect_with(out, opts, true, from, err);
}

/* Connects, the Hello, the answer and, on the ring, the Ring frame; 0 or -errno with err. */
static int connect_with(struct ringtap_client **out, const struct ringtap_client_opts *opts,
			bool resumable, struct ringtap_resume *from,
			struct ringtap_connect_error *err)
{
	static const struct ringtap_client_opts defaults;
	const struct ringtap_client_opts *o = opts ? opts : &defaults;
	const char *path = o->socket_path ? o->socket_path : RINGTAP_DEFAULT_SOCKET;
	int timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : DEFAULT_TIMEOUT_MS;
	int64_t deadline = deadline_after(timeout_ms);
	const struct rt_transport_tls tls = { o->tls_ca, o->tls_cert, o->tls_key, o->tls_server_name };
	struct ringtap_client *c;
	int ret;

	*out = NULL;
	if (err) {
		err->refusal = 0;
		err->text[0] = '\0';
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->rbuf = malloc(READ_CHUNK))) {
		free(c);
		return set_err(err, -ENOMEM, "out of memory");
	}
	c->t.fd = -1;
	rt_wire_reader_init(&c->reader, RT_WIRE_MAX_FRAME_DEFAULT);
	c->asked = o->encoding ? o->encoding : RINGTAP__ENCODING__DECODED;
	c->encoding = c->asked;
	c->resumable = resumable;
	c->resume_from = from;
	/*
	 * A resumable stream goes on the socket unless the ring is asked for by
	 * name: a ring reader resumes from its place in the ring (ring_resume).
	 */
	if (o->transport == RINGTAP_TRANSPORT_RING ||
	    (o->transport == RINGTAP_TRANSPORT_RING_OR_SOCKET && !resumable)) {
		/* FIXED records are rewritten by ringtapd: the ring has none. */
		bool local = rt_transport_is_local(path) && c->asked != RINGTAP__ENCODING__FIXED;

		if (o->transport == RINGTAP_TRANSPORT_RING && !local) {
			ringtap_close(c);
			return set_err(err, -EPROTONOSUPPORT, "%s: the ring is for local clients "
				       "(a Unix socket), RAW or DECODED", path);
		}
		/* The ring carries pages: the Hello asks RAW, whatever comes out of here. */
		c->ring_mode = local;
		if (local)
			c->encoding = RINGTAP__ENCODING__RAW;
	}
	c->tap = o->tap;
	c->tap_ctx = o->tap_ctx;
	ret = rt_transport_open(&c->t, path, &tls, timeout_ms);
	if (ret) {
		set_err(err, ret, "%s", c->t.error);
		goto fail;
	}
	ret = send_hello(c, o, deadline, err);
	if (!ret)
		ret = read_answer(c, path, timeout_ms, deadline, err);
	if (!ret && c->ring_mode)
		ret = ring_start(c, o, deadline, err);
	if (!ret && c->resumable)
		ret = take_places(c, err);
	if (ret && c->ring_mode && o->transport == RINGTAP_TRANSPORT_RING_OR_SOCKET &&
	    ring_refused(ret, err)) {
		/* Not served over the ring (an older daemon, a peer it does not trust with it). */
		struct ringtap_client_opts socket = *o;

		rt_transport_close(&c->t);
		ringtap_close(c);
		socket.transport = RINGTAP_TRANSPORT_SOCKET;
		return ringtap_connect(out, &socket, err);
	}
	if (ret)
		goto fail;
	/* Resumed: the reader is this client's now, the place holds none. */
	if (c->ring_borrowed) {
		c->ring_borrowed = false;
		c->resume_from->ring = NULL;
		c->resume_from->ring_map = c->resume_from->old_map = NULL;
	}
	*out = c;
	return 0;
fail:
	ring_give_back(c);
	rt_transport_close(&c->t);
	ringtap_close(c);
	return ret;
}

_Static_assert((int)RINGTAP_FORMAT_NO_TIME == (int)RT_FORMAT_NO_TIME &&
	       (int)RINGTAP_FORMAT_JSON == (int)RT_FORMAT_JSON,
	       "the public format flags are the core's");

int ringtap_format_event(const struct ringtap_client *c, const struct ringtap_event *ev,
			 char *buf, size_t size, unsigned int flags)
{
	/* A record read in place is formatted from its view, where it lies. */
	if (c && ev->kind == RINGTAP_RECORD && !ev->record)
		return rt_format_view(buf, size, c->cons.welcome->welcome->layout, ev->cpu,
				      &c->cons.view, ev->schema, flags);
	return ringtap_format_event_layout(c ? c->cons.welcome->welcome->layout : NULL, ev, buf, size,
					   flags);
}

int ringtap_format_event_layout(const Ringtap__Layout *layout, const struct ringtap_event *ev,
				char *buf, size_t size, unsigned int flags)
{
	if (ev->kind == RINGTAP_RECORD && ev->record)
		return rt_format_record(buf, size, layout, ev->cpu, ev->record, ev->schema, flags);
	if (ev->kind == RINGTAP_LOST && ev->lost)
		return rt_format_lost(buf, size, ev->lost, flags);
	if (ev->kind == RINGTAP_CPU_STATE && ev->cpu_state)
		return rt_format_cpu_state(buf, size, ev->cpu_state, flags);
	if (size)
		buf[0] = '\0';
	return -EINVAL;
}
